r"""The reduced model with frozen, uniform attention (``co.dv.reduced_ode``; spec §5).

On {W_K = W_Q = 0} (invariant: Ẇ_K ∝ q = 0, Ẇ_Q ∝ k = 0) attention is uniform, π ≡ 𝟏 and F_i = Gᵀz_i with
z_i = Σ_h x_h the token counts. With u = Wᵀa, G = W_Vᵀu ∈ ℝ^d, N = W_VᵀW_V, U = ‖u‖², r = (1/n)Σ_i g_iy_iz_i,
the flow closes exactly (Ẇ_V = urᵀ, u̇ = m₁W_Vr):

    Ġ = (U·I + m₁N) r,    Ṅ = rGᵀ + Grᵀ,    U̇ = 2m₁ rᵀG.

Group level (random tokens dropped): G₁..₃, the 3×3 block of N and U — 13 ODEs — with group features
z = (1,1,1), (1,0,1), (0,1,1), (0,0,1) for I₁..I₄, labels (+, −, −, −) and weights f_k = |I_k|/n:
r_a = Σ_k f_kg(y_kF_k)y_k[z_k]_a, F_k = Gᵀz_k.
"""

from __future__ import annotations

import numpy as np

from numerics._jit import jit
from numerics.blocks import BlockLayout
from numerics.models.word_cooccurrence.model import g_weight
from numerics.ode import VectorField
from numerics.stable import logistic_loss, logistic_weight

#: group features z_k (rows: I₁..I₄; columns: μ₁, μ₂, μ₃) and labels
FEATURES = np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]])
LABELS = np.array([1.0, -1.0, -1.0, -1.0])
#: the state: G₁..₃, N (row-major 3×3), U
STATE = ("G1", "G2", "G3", *(f"N{a}{b}" for a in range(1, 4) for b in range(1, 4)), "U")
#: observables of the reduced run, named as those of the full model's observer where they mean the same
OBSERVED = ("loss", "U", "G1", "G2", "G3", "A", "B2", "B3", "B4", "min_margin")


@jit
def _group_terms(y, fractions):
    """Margins y_kF_k and r (3,) of the four groups at state y."""
    margins = np.empty(4)
    r = np.zeros(3)
    for k in range(4):
        F = 0.0
        for a in range(3):
            F += y[a] * FEATURES[k, a]
        margins[k] = LABELS[k] * F
        c = fractions[k] * logistic_weight(margins[k]) * LABELS[k]
        for a in range(3):
            r[a] += c * FEATURES[k, a]
    return margins, r


@jit
def reduced_rhs(t, y, p, out):
    """Ġ = (UI + m₁N)r, Ṅ = rGᵀ + Grᵀ, U̇ = 2m₁rᵀG at group level; ``p = [m₁, f₁, f₂, f₃, f₄]``."""
    m1 = p[0]
    margins, r = _group_terms(y, p[1:5])
    U = y[12]
    for a in range(3):
        acc = U * r[a]
        for b in range(3):
            acc += m1 * y[3 + 3 * a + b] * r[b]
        out[a] = acc
    for a in range(3):
        for b in range(3):
            out[3 + 3 * a + b] = r[a] * y[b] + y[a] * r[b]
    rG = 0.0
    for a in range(3):
        rG += r[a] * y[a]
    out[12] = 2.0 * m1 * rG


@jit
def observe_reduced(t, y, p, out):
    """:data:`OBSERVED`: the loss Σ_k f_k l(y_kF_k), U, G₁..₃, the group sums n·f_k·g_k (with ``p[5] = n``) and the
    smallest group margin."""
    margins, r = _group_terms(y, p[1:5])
    loss = 0.0
    smallest = margins[0]
    for k in range(4):
        x = margins[k]
        loss += p[1 + k] * logistic_loss(x)
        out[5 + k] = p[5] * p[1 + k] * logistic_weight(x)
        smallest = min(smallest, x)
    out[0] = loss
    out[1] = y[12]
    out[2] = y[0]
    out[3] = y[1]
    out[4] = y[2]
    out[9] = smallest


@jit
def all_groups_correct(t, y, p, event_times, event_states, out):
    """Event: the smallest group margin min_k y_kF_k, crossing 0 upward at T₁^grp."""
    margins, r = _group_terms(y, p[1:5])
    out[0] = margins.min()


REDUCED = VectorField(reduced_rhs, 13, state_names=STATE, observe=observe_reduced, n_observed=len(OBSERVED),
                      observed_names=OBSERVED)
#: the reduced field stopped when every group is classified correctly (``co.dv.phase1_clock``)
CLOCK = VectorField(reduced_rhs, 13, all_groups_correct, ("all_groups_correct",), (1,), (True,), state_names=STATE)


def clock_state(N0: float, U0: float) -> np.ndarray:
    """G = 0, N = N₀I, U = U₀: the start of ``co.dv.phase1_clock``."""
    return np.concatenate([np.zeros(3), (N0 * np.eye(3)).reshape(-1), [U0]])


def reduced_params(m1: int, counts) -> np.ndarray:
    """``p`` of :func:`reduced_rhs`: m₁, the group fractions f_k = |I_k|/n, and n."""
    counts = np.asarray(counts, dtype=float)
    return np.array([float(m1), *(counts / counts.sum()), counts.sum()])


def reduced_initial_state(theta: np.ndarray, lay: BlockLayout, a: np.ndarray) -> np.ndarray:
    """G_a = uᵀW_Vμ_a, N_ab = v(μ_a)ᵀv(μ_b), U = ‖Wᵀa‖² from a full-model θ (tokens μ₁..₃ = 0, 1, 2)."""
    views = lay.views(theta)
    u = views["W"].T @ a
    V = views["WV"][:, :3]
    return np.concatenate([u @ V, (V.T @ V).reshape(-1), [u @ u]])


def exact_rates(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, labels: np.ndarray, a: np.ndarray):
    """(Ġ, Ṅ, U̇) of the closed system over the whole vocabulary at a state with W_K = W_Q = 0: r from the
    token counts z_i of every sample (random tokens included)."""
    views = lay.views(theta)
    d = views["WV"].shape[1]
    u = views["W"].T @ a
    G, N, U = views["WV"].T @ u, views["WV"].T @ views["WV"], u @ u
    counts = np.zeros((tokens.shape[0], d))
    np.add.at(counts, (np.repeat(np.arange(tokens.shape[0]), tokens.shape[1]), tokens.reshape(-1)), 1.0)
    F = counts @ G
    r = (g_weight(labels * F) * labels) @ counts / tokens.shape[0]
    m1 = a.size
    return (U * np.eye(d) + m1 * N) @ r, np.outer(r, G) + np.outer(G, r), np.array([2 * m1 * r @ G])
