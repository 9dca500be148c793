r"""Explicit transformer constructions of [F] §4 (Thm 4.1, 4.3, 4.4) and their sup-errors.

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), full version [F], Thm 4.1 / A.1 (IH₂ by a two-layer
single-head transformer), Thm 4.3 / A.2 (IH_n by a two-layer H-head transformer), Thm 4.4 / A.8
(GIH_n with FFNs); spec ``induction-head.md`` §4 ``ih.dv.thm41_bound``, §5.4, §8, §9 item 14.

Positions are 0-based in arrays and 1-based in docstrings (array index = position − 1). A batch
of sequences is ``X`` of shape (b, L, d), tokens in the box [−B, B]^{d×L}.

Layer 1 (residual, no DP). A head with ALiBi slope β attends from position s to τ ≤ s−1 with
logit −β(s−1−τ); its weights are the true causal softmax (row 1 is empty and gives 0):
:func:`alibi_weights`. Heads write c_h·(softmax-weighted tokens) into block i of the embedding,
so block i of the layer-1 output is M_i X with M_i = Σ_{h ∈ lag i} c_h A(β_h) (exact, since the
heads are linear in X when W_Q = W_K = 0).

Layer 2 (no residual, one head, no RPE). At the last position t the query is the current patch
(blocks 0..n−2 at t), the key at s is blocks 1..n−1 at s, the value is x_s, and the score is
q^⊤W*k_s; the softmax runs over s ∈ [first, t−1] (``first`` = n canonically, 1 for the
unmasked causal reading of the flag ``thm41_layer2_range``).

Targets. IH_n(X_{1:t}) = Σ_{s=n}^{t−1} x_s sm((x̄_t^⊤W*x̄_{s−1})_s)_s with patches of n−1 tokens
x̄_s = (x_s, x_{s−1}, …, x_{s−n+2}) ∈ ℝ^{(n−1)d}; IH₂ is n = 2.

Exponential sums (Lemma D.2). The lag-i delta kernel 1{k = i}, k ≥ 1, is fitted by
φ(k) = Σ_h α_h e^{−β_h(k−1)} with variable projection (α by linear least squares given β, β by
``scipy.optimize.least_squares``); the fitted ℓ₁ error is re-evaluated in mpmath when the
coefficients cancel heavily (spec §8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath
import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble


# ----------------------------------------------------------------------------- inputs and weights


def spectral_matrix(dim: int, norm: float, rng: np.random.Generator) -> np.ndarray:
    """A Gaussian ``dim × dim`` matrix rescaled so that its spectral norm ‖W‖₂ equals ``norm``."""
    if dim < 1:
        raise InvalidArgument(f"d={dim} must be an integer >= 1")
    W = rng.standard_normal((dim, dim))
    return W * (norm / np.linalg.norm(W, 2))


def box_l1_sup(W: np.ndarray, B: float = 1.0) -> float:
    """sup_{‖x‖_∞ ≤ B} ‖W^⊤x‖₁, attained at a vertex of the box (a convex function); exact for d ≤ 20."""
    d = W.shape[0]
    if d > 20:
        raise InvalidArgument(f"d={d}: vertex enumeration of the box needs d <= 20")
    signs = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1) * 2.0 - 1.0
    return float(B * np.abs(signs @ W).sum(axis=1).max())


def alibi_weights(length: int, slope: float) -> np.ndarray:
    """The causal ALiBi attention matrix A[s, τ] = sm((−β(s−1−ν))_{ν<s})_τ of one head (true softmax).

    Row s (0-based) attends to τ < s; row 0 has no key and is zero (y_1 = 0).
    """
    if slope < 0 or not math.isfinite(slope):
        raise InvalidArgument(f"slope={slope} must be a finite number >= 0 (an ALiBi slope)")
    s = np.arange(length)[:, None]
    tau = np.arange(length)[None, :]
    lag = s - 1 - tau
    mask = lag >= 0
    # the largest logit of every non-empty row is 0 (tau = s-1), so exp never overflows
    e = np.where(mask, np.exp(-slope * np.where(mask, lag, 0)), 0.0)
    norm = e.sum(axis=1, keepdims=True)
    return np.divide(e, norm, out=np.zeros_like(e), where=norm > 0)


def uniform_box(rng: np.random.Generator, size: int, length: int, dim: int, B: float = 1.0) -> np.ndarray:
    """``size`` sequences with iid Unif[−B, B] entries, shape (size, L, d)."""
    return rng.uniform(-B, B, size=(size, length, dim))


def apply_positions(M: np.ndarray, X: np.ndarray) -> np.ndarray:
    """(M X)[b, s] = Σ_τ M[s, τ] X[b, τ] for a batch X of shape (b, L, d), as one matrix product."""
    b, L, d = X.shape
    return (M @ X.transpose(1, 0, 2).reshape(L, b * d)).reshape(M.shape[0], b, d).transpose(1, 0, 2)


# ----------------------------------------------------------------------------- layer 2: one retrieval head


def _retrieve(Q: np.ndarray, K: np.ndarray, V: np.ndarray, W: np.ndarray):
    """out = Σ_s V_s sm(Q^⊤W K_s)_s per sequence; Q (b, D), K (b, S, D), V (b, S, d). Returns (out, π)."""
    z = np.einsum("bj,bsj->bs", Q @ W, K)
    z -= z.max(axis=1, keepdims=True)
    pi = np.exp(z)
    pi /= pi.sum(axis=1, keepdims=True)
    return np.einsum("bs,bsd->bd", pi, V), pi


def _retrieve_vjp(Q, K, V, W, pi, out, cot):
    """Gradients of Σ cot·out with respect to Q, K and V (vector-Jacobian product of :func:`_retrieve`)."""
    g = pi * (np.einsum("bsd,bd->bs", V, cot) - np.einsum("bd,bd->b", out, cot)[:, None])
    dQ = np.einsum("bs,bsj->bj", g, K) @ W.T
    dK = g[:, :, None] * (Q @ W)[:, None, :]
    dV = pi[:, :, None] * cot[:, None, :]
    return dQ, dK, dV


# ----------------------------------------------------------------------------- the two-layer construction


@dataclass
class TwoLayerIH:
    """The two-layer construction of Thm 4.1 (n = 2, one head) and Thm 4.3 (n >= 2, H heads).

    ``M`` has shape (n−1, L, L): M[i−1] is the layer-1 map writing the lag-i copy (block i).
    ``W`` is W* of shape ((n−1)d, (n−1)d). ``first`` is the first key position of layer 2.
    """

    M: np.ndarray
    W: np.ndarray
    n: int
    first: int
    heads: list[tuple[int, float, float]] = field(default_factory=list)

    def __post_init__(self):
        if self.n < 2:
            raise InvalidArgument(f"n={self.n} must be an integer >= 2 (IH_n compares (n-1)-token patches)")
        if self.first not in (1, self.n):
            raise InvalidArgument(f"first={self.first} must be 1 (unmasked) or n={self.n} (the target's range)")

    @property
    def length(self) -> int:
        return self.M.shape[1]

    def layer1(self, X: np.ndarray) -> list[np.ndarray]:
        """Blocks of the layer-1 output: [X, M_1 X, …, M_{n−1} X], each (b, L, d)."""
        return [X] + [apply_positions(M, X) for M in self.M]

    def target(self, X: np.ndarray, t: int) -> np.ndarray:
        """IH_n of the prefix X_{1:t} (t 1-based, t >= n+1), shape (b, d)."""
        Q, K, V = _target_qkv(X, self.n, t)
        return _retrieve(Q, K, V, self.W)[0]

    def model(self, X: np.ndarray, t: int, blocks: list[np.ndarray] | None = None) -> np.ndarray:
        """The construction's output at position t, shape (b, d)."""
        Q, K, V = _model_qkv(blocks or self.layer1(X), self.n, t, self.first)
        return _retrieve(Q, K, V, self.W)[0]

    def errors(self, X: np.ndarray, positions) -> np.ndarray:
        """‖IH_n − TF‖_∞ at each position in ``positions`` (1-based), shape (b, len(positions))."""
        blocks = self.layer1(X)
        return np.stack([np.abs(self.target(X, t) - self.model(X, t, blocks)).max(axis=1) for t in positions], axis=1)

    def signed_error_and_grad(self, X: np.ndarray, t: int, cot: np.ndarray):
        """cot·(IH_n − TF) at position t and its gradient in X (shape of X)."""
        n, d = self.n, X.shape[2]
        Qt, Kt, Vt = _target_qkv(X, n, t)
        target, pit = _retrieve(Qt, Kt, Vt, self.W)
        blocks = self.layer1(X)
        Qm, Km, Vm = _model_qkv(blocks, n, t, self.first)
        model, pim = _retrieve(Qm, Km, Vm, self.W)
        value = np.einsum("bd,bd->b", target - model, cot)
        dQt, dKt, dVt = _retrieve_vjp(Qt, Kt, Vt, self.W, pit, target, cot)
        dQm, dKm, dVm = _retrieve_vjp(Qm, Km, Vm, self.W, pim, model, cot)
        dX = np.zeros_like(X)
        s = np.arange(n, t)  # 1-based key positions of the target
        for j in range(n - 1):  # query block j = x_{t-j}; key block j = x_{s-1-j}
            dX[:, t - 1 - j] += dQt[:, j * d:(j + 1) * d]
            np.add.at(dX, (slice(None), s - 2 - j), dKt[:, :, j * d:(j + 1) * d])
        dX[:, s - 1] += dVt
        dZ = [np.zeros_like(X) for _ in range(n)]
        sm = np.arange(self.first, t)
        for j in range(n - 1):
            dZ[j][:, t - 1] -= dQm[:, j * d:(j + 1) * d]
            dZ[j + 1][:, sm - 1] -= dKm[:, :, j * d:(j + 1) * d]
        dZ[0][:, sm - 1] -= dVm
        dX += dZ[0]
        for i, M in enumerate(self.M):
            dX += apply_positions(M.T, dZ[i + 1])
        return value, dX


def _target_qkv(X: np.ndarray, n: int, t: int):
    if t < n + 1 or t > X.shape[1]:
        raise InvalidArgument(f"position t={t} must lie in [n+1, L] = [{n + 1}, {X.shape[1]}]")
    s = np.arange(n, t)
    Q = np.concatenate([X[:, t - 1 - j] for j in range(n - 1)], axis=1)
    K = np.concatenate([X[:, s - 2 - j] for j in range(n - 1)], axis=2)
    return Q, K, X[:, s - 1]


def _model_qkv(blocks: list[np.ndarray], n: int, t: int, first: int):
    s = np.arange(first, t)
    Q = np.concatenate([blocks[j][:, t - 1] for j in range(n - 1)], axis=1)
    K = np.concatenate([blocks[j + 1][:, s - 1] for j in range(n - 1)], axis=2)
    return Q, K, blocks[0][:, s - 1]


def thm41_construction(length: int, p: float, W: np.ndarray, first: int = 2) -> TwoLayerIH:
    """Thm 4.1 / spec ih.dv.thm41_bound: layer-1 ALiBi slope p with value = identity into the y block."""
    return TwoLayerIH(alibi_weights(length, p)[None], W, 2, first, [(1, p, 1.0)])


def thm43_construction(length: int, fits: dict[int, "ExpSumFit"], W: np.ndarray, n: int, first: int | None = None,
                       ) -> TwoLayerIH:
    """Thm 4.3 / A.2: per lag i = 1..n−1, one head per exponential term (slope β_h, value c_h S_i).

    c_h = α_h/(1 − e^{−β_h}) undoes the softmax normaliser Σ_{k≥1} e^{−β_h(k−1)} of an infinitely
    long context, so that block i equals Σ_k φ_i(k) x_{s−k} up to the finite-s normaliser
    (1 − e^{−β_h(s−1)}): the early positions keep that error.
    """
    M = np.zeros((n - 1, length, length))
    heads = []
    for lag in range(1, n):
        fit = fits[lag]
        for a, b in zip(fit.alpha, fit.beta, strict=True):
            c = a / -math.expm1(-b)
            M[lag - 1] += c * alibi_weights(length, b)
            heads.append((lag, float(b), float(c)))
    return TwoLayerIH(M, W, n, n if first is None else first, heads)


# ----------------------------------------------------------------------------- adversarial search


@dataclass
class SupSearch:
    """Largest error found: random draws, then projected sign-gradient ascent from the best and from fresh starts."""

    random_max: float
    adversarial_max: float
    argmax: np.ndarray
    position: int
    n_random: int
    restarts: int
    steps: int

    @property
    def sup(self) -> float:
        return max(self.random_max, self.adversarial_max)


def sup_error(model: TwoLayerIH, rng: np.random.Generator, dim: int, *, n_random: int, restarts: int, steps: int,
              B: float = 1.0, positions=None) -> SupSearch:
    """Sup of ‖IH_n − TF‖_∞ over the token box: random draws plus projected gradient ascent.

    The ascent maximises cot·(IH_n − TF) at one position, with cot = ±e_j chosen at the start of
    each restart (the worst coordinate and sign), by X ← clip(X + η sign ∇, −B, B) with η decaying
    geometrically from B/2 to B/200; half of the restarts start from the worst random draws, the
    other half from random vertices of the box.
    """
    L = model.length
    positions = list(positions or [L])
    X = uniform_box(rng, n_random, L, dim, B)
    err = model.errors(X, positions)
    flat = int(np.argmax(err))
    best_i, best_t = divmod(flat, len(positions))
    random_max, argmax, position = float(err[best_i, best_t]), X[best_i].copy(), positions[best_t]
    if restarts == 0 or steps == 0:
        return SupSearch(random_max, 0.0, argmax, position, n_random, restarts, steps)
    worst = np.argsort(err.max(axis=1))[::-1][: (restarts + 1) // 2]
    starts = np.concatenate([X[worst], B * rng.choice([-1.0, 1.0], size=(restarts - worst.size, L, dim))])
    t_of = positions[int(np.argmax(err[worst[0]]))]
    diff = model.target(starts, t_of) - model.model(starts, t_of)
    j = np.abs(diff).argmax(axis=1)
    cot = np.zeros((restarts, dim))
    cot[np.arange(restarts), j] = np.sign(diff[np.arange(restarts), j]) + (diff[np.arange(restarts), j] == 0)
    Xa, adv_best, adv_arg = starts.copy(), -np.inf, None
    for eta in B * np.geomspace(0.5, 0.005, steps):
        value, grad = model.signed_error_and_grad(Xa, t_of, cot)
        if not np.all(np.isfinite(value)):
            raise NumericalTrouble("non-finite error during the adversarial ascent")
        k = int(np.argmax(value))
        if value[k] > adv_best:
            adv_best, adv_arg = float(value[k]), Xa[k].copy()
        Xa = np.clip(Xa + eta * np.sign(grad), -B, B)
    value, _ = model.signed_error_and_grad(Xa, t_of, cot)
    if value.max() > adv_best:
        adv_best, adv_arg = float(value.max()), Xa[int(np.argmax(value))].copy()
    # the signed objective is one coordinate of the error; report the full sup-norm at the argmax
    adv_full = float(model.errors(adv_arg[None], [t_of])[0, 0])
    if adv_full > random_max:
        argmax, position = adv_arg, t_of
    return SupSearch(random_max, max(adv_full, adv_best), argmax, position, n_random, restarts, steps)


# ----------------------------------------------------------------------------- exponential sums (Lemma D.2)


@dataclass
class ExpSumFit:
    """φ(k) = Σ_h α_h e^{−β_h(k−1)} fitted to 1{k = lag} on k = 1..K."""

    lag: int
    terms: int
    K: int
    alpha: np.ndarray
    beta: np.ndarray
    l1: float
    l1_tail: float
    alpha_l1: float
    extended_precision: bool
    beta_max: float
    alpha_max: float | None

    def to_dict(self) -> dict:
        return {"lag": self.lag, "H": self.terms, "K": self.K, "l1_error": self.l1,
                "l1_tail_bound_k_gt_K": self.l1_tail, "alpha_l1_norm": self.alpha_l1,
                "beta_min": float(self.beta.min()), "beta_max_fitted": float(self.beta.max()),
                "evaluated_in_mpmath": self.extended_precision, "constraint_beta_max": self.beta_max,
                "constraint_alpha_max": self.alpha_max}


def exp_kernel(alpha: np.ndarray, beta: np.ndarray, K: int) -> np.ndarray:
    """φ(k) for k = 1..K in double precision."""
    k = np.arange(K)[:, None]
    return np.exp(-k * beta[None, :]) @ alpha


def fit_delta_kernels(lag: int, max_terms: int, K: int = 400, *, beta_max: float = 60.0,
                      alpha_max: float | None = None, beta_min: float = 1e-3,
                      max_nfev: int = 300) -> dict[int, ExpSumFit]:
    """Fits of the lag-``lag`` delta kernel by H = 1..``max_terms`` ALiBi exponentials (continuation in H).

    β_h ∈ [beta_min, beta_max] (log coordinates, so β > 0 as Lemma D.2 requires) and, when given,
    |α_h| <= alpha_max. The objective is the ℓ₂ residual on k = 1..K. Each H starts from (a) the
    best H−1 nodes plus one new node (the best of a few placements, α by linear least squares:
    variable projection) and (b) the equispaced family β_h = c h of Lemma D.2's proof with c
    scanned; the better start is refined jointly in (log β, α) by ``least_squares`` with the
    analytic Jacobian. The reported error is the ℓ₁ norm, recomputed in mpmath (50 digits) when
    ‖α‖₁ ε_mach is not negligible against it.
    """
    from scipy.optimize import least_squares

    if not 1 <= lag < K or max_terms < 1:
        raise InvalidArgument(f"lag={lag} must lie in [1, K) and H={max_terms} must be >= 1")
    target = np.zeros(K)
    target[lag - 1] = 1.0
    k = np.arange(K, dtype=float)[:, None]
    lo, hi = math.log(beta_min), math.log(beta_max)
    bound = math.inf if alpha_max is None else alpha_max

    def projected(beta):
        alpha = np.clip(np.linalg.lstsq(np.exp(-k * beta[None, :]), target, rcond=None)[0], -bound, bound)
        return alpha, float(np.sum((np.exp(-k * beta[None, :]) @ alpha - target) ** 2))

    def residual(z):
        H = z.size // 2
        return np.exp(-k * np.exp(z[:H])[None, :]) @ z[H:] - target

    def jacobian(z):
        H = z.size // 2
        beta = np.exp(z[:H])
        Phi = np.exp(-k * beta[None, :])
        return np.hstack([-(k * Phi) * (z[H:] * beta)[None, :], Phi])

    fits, previous = {}, (np.array([]), np.array([]))
    for H in range(1, max_terms + 1):
        lower = np.concatenate([np.full(H, lo), np.full(H, -bound)])
        upper = np.concatenate([np.full(H, hi), np.full(H, bound)])
        margin = np.where(np.isfinite(upper - lower), 1e-9 * (upper - lower), 0.0)
        starts = []
        for new in np.exp(np.linspace(lo, hi, 9)):
            beta = np.sort(np.append(previous[0], new)) if H > 1 else np.array([new])
            starts.append((projected(beta)[1], np.concatenate([np.log(beta), projected(beta)[0]])))
        for c in np.geomspace(0.02, 10.0, 16):
            beta = np.clip(c * np.arange(1, H + 1), beta_min, beta_max)
            starts.append((projected(beta)[1], np.concatenate([np.log(beta), projected(beta)[0]])))
        starts = [min(starts, key=lambda item: item[0])[1]]
        if H > 1:  # the H-1 optimum plus an idle node: refinement can only lower its cost (monotone in H)
            beta_prev, alpha_prev = previous
            idle = np.exp(0.5 * (lo + hi)) if beta_prev.max() < np.exp(hi) * 0.99 else np.exp(lo)
            starts.append(np.concatenate([np.log(beta_prev), [math.log(idle)], alpha_prev, [0.0]]))
        best = None
        for z0 in starts:
            z0 = np.clip(z0, lower + margin, upper - margin)
            sol = least_squares(residual, z0, jac=jacobian, bounds=(lower, upper), method="trf",
                                x_scale="jac", max_nfev=max_nfev)
            if best is None or sol.cost < best.cost:
                best = sol
        beta, alpha = np.exp(best.x[:H]), best.x[H:]
        order = np.argsort(beta)
        alpha, beta = alpha[order], beta[order]
        previous = (beta, alpha)
        l1, extended = kernel_l1_error(alpha, beta, lag, K)
        with np.errstate(over="ignore", under="ignore"):
            tail = float(np.sum(np.abs(alpha) * np.exp(-beta * K) / -np.expm1(-beta)))
        fits[H] = ExpSumFit(lag, H, K, alpha, beta, l1, tail, float(np.abs(alpha).sum()), extended, beta_max,
                            alpha_max)
    return fits


def kernel_l1_error(alpha: np.ndarray, beta: np.ndarray, lag: int, K: int, dps: int = 50) -> tuple[float, bool]:
    """Σ_{k=1}^K |1{k=lag} − φ(k)|; in mpmath when cancellation (‖α‖₁ ε_mach K) could spoil double precision."""
    phi = exp_kernel(alpha, beta, K)
    phi[lag - 1] -= 1.0
    l1 = float(np.abs(phi).sum())
    # below 1e-14 an error is rounding for a transformer evaluated in double precision anyway
    if float(np.abs(alpha).sum()) * 1e-16 * K < 1e-3 * max(l1, 1e-14):
        return l1, False
    with mpmath.workdps(dps):
        a = [mpmath.mpf(float(x)) for x in alpha]
        u = [mpmath.exp(-mpmath.mpf(float(b))) for b in beta]
        total, powers = mpmath.mpf(0), [mpmath.mpf(1)] * len(u)
        negligible = mpmath.mpf(10) ** (-dps)
        for kk in range(1, K + 1):
            value = mpmath.fsum(ai * pi for ai, pi in zip(a, powers, strict=True)) - (1 if kk == lag else 0)
            total += abs(value)
            powers = [pi * ui for pi, ui in zip(powers, u, strict=True)]
            if kk >= lag and mpmath.fsum(abs(ai) * pi for ai, pi in zip(a, powers, strict=True)) < negligible:
                break  # every later term is below the working precision
        return float(total), True


# ----------------------------------------------------------------------------- Thm 4.4: POD and random features


def cosine_kernel_pod(kappa: float, n_grid: int = 400, n_terms: int = 400):
    """POD of g(a, b) = Σ_{k≥1} k^{−(1+κ)} cos(kπa) cos(kπb) on [−1, 1]² (series cut at ``n_terms``).

    Gauss–Legendre nodes a_i with weights w_i; the SVD of diag(√w) G diag(√w) gives the singular
    values of the integral operator on L²([−1, 1]) (orthonormal cos(kπ·) ⇒ σ_k = k^{−(1+κ)}).
    Returns (nodes, weights, singular values, left bases sampled at the nodes).
    """
    if not kappa > 0:
        raise InvalidArgument(f"kappa={kappa} must be > 0 (singular values k^-(1+kappa) must be summable)")
    a, w = np.polynomial.legendre.leggauss(n_grid)
    G = cosine_kernel(a, a, kappa, n_terms)
    sw = np.sqrt(w)
    U, sig, _ = np.linalg.svd(sw[:, None] * G * sw[None, :])
    bases = U / sw[:, None]
    return a, w, sig, bases


def cosine_kernel(a: np.ndarray, b: np.ndarray, kappa: float, n_terms: int = 400) -> np.ndarray:
    """g(a_i, b_j) = Σ_{k=1}^{n_terms} k^{−(1+κ)} cos(kπa_i) cos(kπb_j)."""
    k = np.arange(1, n_terms + 1)
    return (np.cos(np.pi * np.outer(a, k)) * k ** -(1.0 + kappa)) @ np.cos(np.pi * np.outer(k, b))


def random_relu_fit(x: np.ndarray, Y: np.ndarray, width: int, rng: np.random.Generator, ridge: float = 1e-10):
    """Least squares of the columns of Y on ``width`` random ReLU features relu(w x + b) (plus a constant).

    w ~ Unif{±1}, b ~ Unif[−1, 1] (kinks spread over [−1, 1]); returns a function x -> fitted values.
    """
    w = rng.choice([-1.0, 1.0], size=width)
    b = rng.uniform(-1.0, 1.0, size=width)

    def features(z):
        return np.column_stack([np.maximum(np.outer(z, w) + b, 0.0), np.ones_like(z)])

    F = features(x)
    coef = np.linalg.solve(F.T @ F + ridge * np.eye(F.shape[1]), F.T @ Y)
    return lambda z: features(z) @ coef
