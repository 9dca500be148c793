"""The induction-head paper's models in numbers: token samplers and per-sequence losses.

Positions are 1-based as in the paper: a batch is an array ``X`` of shape (B, L+1) whose
column 0 is unused and columns 1..L hold x_1..x_L. Stage II with the ideal first layer
(y_s = x_{s-1}). Every kernel returns one value per sequence (units: loss per sequence),
so that ``numerics.montecarlo`` attaches a standard error to their mean.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
from numba import prange

from derivations.errors import InvalidArgument
from numerics._jit import jit, parallel_jit

TOKEN_LAWS = ("gaussian", "boolean")


def draw_tokens(rng: np.random.Generator, size: int, length: int, law: str = "gaussian") -> np.ndarray:
    """Draw ``size`` sequences x_1..x_L (iid N(0,1) or Unif{±1}) into an array of shape (size, L+1)."""
    if law not in TOKEN_LAWS:
        raise InvalidArgument(f"tokens={law!r} is not one of {', '.join(TOKEN_LAWS)}")
    X = np.zeros((size, length + 1))
    if law == "gaussian":
        X[:, 1:] = rng.standard_normal((size, length))
    else:
        X[:, 1:] = 2.0 * rng.integers(0, 2, size=(size, length)) - 1.0
    return X


def token_sampler(length: int, law: str = "gaussian"):
    """A ``draw(rng, size)`` for :class:`numerics.montecarlo.MonteCarlo`."""
    return _TokenSampler(length, law)


class _TokenSampler:
    """Picklable token sampler (a closure would not cross process boundaries)."""

    def __init__(self, length: int, law: str):
        if length < 5:
            raise InvalidArgument(f"L={length} must be an integer >= 5 (the IH softmax needs positions 2..L-1)")
        self.length, self.law = length, law

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return draw_tokens(rng, size, self.length, self.law)


@parallel_jit
def g4_loss_samples(X, p, g, alpha, last):
    """½(g* x_{L-2} - g Σ_{s=2}^{last} π_s x_{s-1})² per sequence (Eq. (7)'s integrand).

    π_s ∝ e^{-p(L-1-s)} over s = 2..``last`` (``last`` = L-1 canonical, L-2 literal).
    """
    size, width = X.shape
    L = width - 1
    gstar = alpha / (1.0 + alpha)
    count = last - 1
    weights = np.empty(count)
    top = -p * (L - 1 - last)  # the largest logit (smallest lag)
    total = 0.0
    for j in range(count):
        s = 2 + j
        weights[j] = math.exp(-p * (L - 1 - s) - top)
        total += weights[j]
    weights /= total
    out = np.empty(size)
    for b in prange(size):
        head = 0.0
        for j in range(count):
            head += weights[j] * X[b, 1 + j]  # x_{s-1} with s = 2 + j
        r = gstar * X[b, L - 2] - g * head
        out[b] = 0.5 * r * r
    return out


@parallel_jit
def ih_exp_loss_samples(X, w, h, alpha, wstar, last):
    """½(h*/(L-2) Σ_{s=2}^{L-1} e^{w*² x_L x_{s-1}} x_s - h/(L-2) Σ_{s=2}^{last} e^{w² x_L x_{s-1}} x_s)².

    The exp-simplified IH loss integrand of C.3.2 (Eq. (10)); ``last`` is the model's last index.
    """
    size, width = X.shape
    L = width - 1
    hstar = 1.0 / (1.0 + alpha)
    n = L - 2.0
    v, vstar = w * w, wstar * wstar
    out = np.empty(size)
    for b in prange(size):
        xL = X[b, L]
        target = 0.0
        model = 0.0
        for s in range(2, L):
            target += math.exp(vstar * xL * X[b, s - 1]) * X[b, s]
            if s <= last:
                model += math.exp(v * xL * X[b, s - 1]) * X[b, s]
        r = hstar * target / n - h * model / n
        out[b] = 0.5 * r * r
    return out


@parallel_jit
def ih_softmax_loss_samples(X, w, h, alpha, wstar):
    """½(h* Σ_s x_s sm(w*² x_L x_{s-1})_s - h Σ_s x_s sm(w² x_L x_{s-1})_s)² over s = 2..L-1 (true softmax)."""
    size, width = X.shape
    L = width - 1
    hstar = 1.0 / (1.0 + alpha)
    v, vstar = w * w, wstar * wstar
    out = np.empty(size)
    for b in prange(size):
        xL = X[b, L]
        top_t, top_m = -np.inf, -np.inf
        for s in range(2, L):
            top_t = max(top_t, vstar * xL * X[b, s - 1])
            top_m = max(top_m, v * xL * X[b, s - 1])
        num_t = den_t = num_m = den_m = 0.0
        for s in range(2, L):
            et = math.exp(vstar * xL * X[b, s - 1] - top_t)
            em = math.exp(v * xL * X[b, s - 1] - top_m)
            num_t += et * X[b, s]
            den_t += et
            num_m += em * X[b, s]
            den_m += em
        r = hstar * num_t / den_t - h * num_m / den_m
        out[b] = 0.5 * r * r
    return out


@jit
def lemma7_samples(XYZ, a):
    """exp(aXY)Z² per draw (Lemma 7's integrand); XYZ has shape (B, 3)."""
    out = np.empty(XYZ.shape[0])
    for b in range(XYZ.shape[0]):
        out[b] = math.exp(a * XYZ[b, 0] * XYZ[b, 1]) * XYZ[b, 2] ** 2
    return out


@jit
def coincidence_samples(U, p, first, last, L):
    """1 if two independent draws from head 1's softmax over s = first..last coincide, else 0.

    E of this indicator is ||π||² (Lemma 8); U has shape (B, 2) of uniforms for inverse-CDF draws.
    """
    count = last - first + 1
    cdf = np.empty(count)
    total = 0.0
    for j in range(count):
        total += math.exp(-p * (L - 1 - (first + j)) + p * (L - 1 - last))
        cdf[j] = total
    out = np.empty(U.shape[0])
    for b in range(U.shape[0]):
        i = np.searchsorted(cdf, U[b, 0] * total)
        k = np.searchsorted(cdf, U[b, 1] * total)
        out[b] = 1.0 if i == k else 0.0
    return out



# ----------------------------------------------------------------------------- Stage-II gradient flow

#: hitting times of the Stage-II flow (spec §1 and Thm 4), as events of the integrator
STAGE2_EVENTS = ("T_1g", "T_I", "T_o", "T_2h", "T_w_half", "T_II", "T_III")
STAGE2_STATE = ("p", "g", "h", "log_w")


@functools.cache
def stage2_flow(flow: str = "paper", head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """The reduced Stage-II flow of (p, g, h, w), compiled from the SymPy losses with ``diff``.

    State (p, g, h, ln w): integrating ln w keeps full relative accuracy on the plateau for
    small initialisations (spec §8). Parameters (L, α*, w*, L_G4(θ(0))). The (p, g) block is
    the gradient flow of the derived L_G4 (Eq. (7)'s definition), the (h, w) block that of the
    derived exp-simplified L_IH2 (Eq. (10)'s definition) in the given ``flow`` mode.

    Events (first crossing): T_1g g > g*; T_I L_G4 <= 0.01 L_G4(0); T_o = T_1^h h > h*;
    T_2h dh/dt = 0 from above; T_w_half w > w*/2; T_II L_IH2 <= 0.99 L_IH2(T_o);
    T_III L_IH2 <= 0.01 L_IH2(T_o).
    """
    import sympy as sp

    from derivations.flows import reduced_velocity
    from derivations.induction_head import four_gram, ih_head
    from derivations.induction_head import symbols as S
    from numerics.compile import EventSpec, event_state, vector_field

    lw, loss0 = sp.symbols("log_w loss_G4_0", real=True)
    Lf = sp.Symbol("L", positive=True)  # the float parameter L
    loss_g4 = four_gram.L_G4_derived(head1_range).subs(S.L, Lf)
    loss_ih = ih_head.L_IH2_derived(ih_model_range).subs(S.L, Lf)
    P = sp.Symbol("P", positive=True)
    dp, dg = -sp.diff(loss_g4, S.p), -sp.diff(loss_g4, S.g)
    dh = -sp.diff(loss_ih, S.h)
    dw = reduced_velocity(loss_ih.subs(S.w, sp.sqrt(P)), P, S.w, flow)
    on_log = {S.w: sp.exp(lw)}
    rhs = [dp, dg, dh.subs(on_log), (dw / S.w).subs(on_log)]
    ih_loss = loss_ih.subs(on_log)
    h_o, lw_o = event_state("T_o", S.h), event_state("T_o", lw)
    ih_loss_at_o = loss_ih.subs({S.h: h_o, S.w: sp.exp(lw_o)})
    events = [
        EventSpec("T_1g", S.g - S.gstar, +1),
        EventSpec("T_I", loss_g4 - loss0 / 100, -1),
        EventSpec("T_o", S.h - S.hstar, +1),
        EventSpec("T_2h", rhs[2], -1),
        EventSpec("T_w_half", lw - sp.log(S.wstar / 2), +1),
        EventSpec("T_II", ih_loss - sp.Rational(99, 100) * ih_loss_at_o, -1),
        EventSpec("T_III", ih_loss - ih_loss_at_o / 100, -1, terminal=True),
    ]
    name = f"ih_stage2_{flow}_{head1_range}_{ih_model_range}"
    field = vector_field(rhs, [S.p, S.g, S.h, lw], [Lf, S.alpha, S.wstar, loss0], name=name, events=events)
    return dataclasses.replace(field, state_names=STAGE2_STATE)


@functools.cache
def stage2_losses(head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """Grid kernels (L_G4, L_IH2) of the state (p, g, h, ln w) and parameters (L, α*, w*)."""
    import sympy as sp

    from derivations.induction_head import four_gram, ih_head
    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    lw = sp.Symbol("log_w", real=True)
    Lf = sp.Symbol("L", positive=True)
    g4 = four_gram.L_G4_derived(head1_range).subs(S.L, Lf)
    ih = ih_head.L_IH2_derived(ih_model_range).subs({S.L: Lf, S.w: sp.exp(lw)})
    args = [S.p, S.g, S.h, lw, Lf, S.alpha, S.wstar]
    return (grid_kernel(g4, args, name=f"ih_LG4_{head1_range}"),
            grid_kernel(ih, args, name=f"ih_LIH2_{ih_model_range}"))


def stage2_run(L: int, alpha: float, wstar: float, sigma: float, *, flow: str = "paper", init: str = "eq4",
               horizon: float | None = None, rtol: float = 1e-10, atol: float = 1e-13, n_save: int = 400,
               head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """Integrate the Stage-II flow from θ(0) (``init``: eq4 all at σ; c2 p = w = 0 except... see spec §2.5).

    Returns the :class:`numerics.ode.Solution` (times log-spaced from 1e-3 to the horizon) and
    the losses (L_G4, L_IH2) at the saved times. The default horizon is 60 S with
    S = (1+α*)² L ln(1/σ)/w*² (spec §2.11); integration stops at T_III.
    """
    from numerics.ode import Tolerance, integrate

    if not 0 < sigma < 1:
        raise InvalidArgument(f"sigma={sigma} must lie in (0, 1)")
    if not 0 < wstar < 2**-0.5:
        raise InvalidArgument(f"wstar={wstar} violates 2*wstar**2 < 1 (Eq. (10) diverges); choose wstar < 0.7071")
    if init not in ("eq4", "c2"):
        raise InvalidArgument(f"init={init!r} is not one of eq4, c2")
    if init == "c2":
        raise InvalidArgument("init='c2' sets w(0) = 0, a fixed point of the w-flow; Stage II needs w(0) > 0")
    scale = (1 + alpha) ** 2 * L * math.log(1 / sigma) / wstar**2
    horizon = horizon or 60 * scale
    field = stage2_flow(flow, head1_range, ih_model_range)
    g4_kernel, ih_kernel = stage2_losses(head1_range, ih_model_range)
    y0 = np.array([sigma, sigma, sigma, math.log(sigma)])
    loss0 = float(g4_kernel(*y0, float(L), alpha, wstar))
    params = np.array([float(L), alpha, wstar, loss0])
    save = np.concatenate([[0.0], np.geomspace(1e-3, horizon, n_save)])
    solution = integrate(field, y0, (0.0, horizon), params, tol=Tolerance(rtol, atol), save_at=save)
    y = solution.y
    losses = (g4_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar),
              ih_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar))
    return solution, losses
