"""Online SGD / Adam of the actual reparameterised two-layer transformer of the induction-head paper.

API (other modules call exactly this)::

    from numerics.models.induction_head.sgd import Stage2Config, train_stage2, train_stage1, batch_gradient

    config = Stage2Config(L=40, alpha=1.0, wstar=0.49, sigma=0.01, tokens="gaussian",
                          head1_range="canonical", ih_model_range="canonical", ih_keys="y",
                          init="eq4", first_layer=None)      # None: ideal y_s = x_{s-1}; float: frozen p̃
    run = train_stage2(config, optimizer="sgd", lr=0.1, batch=1000, iterations=100_000, seed=0,
                       log_every=100, eval_size=None, adam=(0.9, 0.999, 1e-8), progress=None)
    run.t                      # a numerics.trajectory.Trajectory: times η × iteration, shape (n_log,)
    run["w"]                   # states "p", "g", "h", "wq", "wk" (Stage I: "p_tilde"); observable "w"
    run["L_IH2"], run["L_IH2_se"]   # observables; also "L_G4" (exact, se 0) and "total"
    run.steps, run.meta["eval_size"], run.meta["seed"]
    run1 = train_stage1(L=40, sigma=0.01, init="c2", lr=0.1, batch=1000, iterations=100_000, seed=0)
    loss, grad = batch_gradient(theta, X, config)   # θ = (p̃, p, g, h, w_Q, w_K), X of shape (B, L+1)

Model ([W] §3.1.2, App. C.1; spec §2.3–2.6), positions 1-based (``X[:, 0]`` unused):

* layer 1: y_s = Σ_{τ<s} A_{sτ}(p̃) x_τ with A_{sτ} = e^{-p̃(s-1-τ)}/Σ_{k=0}^{s-2} e^{-p̃k} (Eq. (5));
  the ideal first layer (Stage II of the analysis, p̃ = +∞) is y_s = x_{s-1};
* head 1 (4-gram): g Σ_{s=2}^{S₁} π_s y_s, π = sm((−p(L−1−s))_s), S₁ = L−1 (``head1_range``
  canonical) or L−2 (literal, Eq. (6)); target g* x_{L−2};
* head 2 (IH): h Σ_{s=2}^{V₂} ρ_s x_s, ρ = sm((x_L w_Q w_K k_s)_{s=2}^{N₂}), keys k_s = y_s
  (``ih_keys`` y) or x_{s−1} (x_prev); (V₂, N₂) = (L−1, L−1) canonical, (L−2, L−2) literal,
  (L−2, L−1) mixed; target h* Σ_{s=2}^{L−1} x_s sm((w*² x_L x_{ν−1})_ν)_s;
* loss ½(head1 − target1)² + ½(head2 − target2)² (Eq. (3), ``value_layout`` separate).

Every softmax is evaluated with its maximum logit subtracted (log-sum-exp). The per-batch
gradient is analytic (spec §10) and fused into one ``prange`` kernel; sequences are cut into
fixed chunks of ``CHUNK`` whose partial sums are added in chunk order, so a gradient is
bit-identical whatever the number of numba threads. Tokens are drawn by one NumPy generator
per run, seeded from ``SeedSequence(seed)``; the fixed evaluation set from a spawned child.
The loop itself is :func:`numerics.train.train` (one group per trained parameter, all at ``lr``).

Logged losses are population estimates (spec §8), never minibatch losses: L_G4 is exact (the
derived Eq. (7), compiled from ``derivations.induction_head.four_gram.L_G4_derived``, for the
ideal first layer; ½‖coefficient vector‖² of the linear residual for a finite p̃, which only
needs E x_i x_j = δ_ij and so holds for both token laws); L_IH2 (true softmax, no closed form)
is the mean of ½r² over a FIXED evaluation set drawn once per seed, with its standard error.
Default evaluation size: 10⁴ sequences when ``iterations·batch`` ≤ 10⁷ (quick runs), 3×10⁴
otherwise; at L = 40, B = 1000 and a log every 100 iterations the evaluation costs ≈ 5–15 % of
the training time (measured; see the module tests). Times are t = η × iteration (spec §8).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
from numba import prange

from derivations.errors import InvalidArgument
from numerics._jit import jit, parallel_jit
from numerics.models.induction_head.integrands import attend_previous
from numerics.models.induction_head.tokens import TOKEN_LAWS, draw_tokens
from numerics.optim import ADAM_DEFAULTS, optimizer_named
from numerics.stable import softmax_weights
from numerics.train import LogSchedule, ParamGroup, train
from numerics.trajectory import Trajectory

#: order of the six parameters in θ
PARAMS = ("p_tilde", "p", "g", "h", "wq", "wk")
HEAD1_RANGES = ("canonical", "literal")
IH_MODEL_RANGES = ("canonical", "literal", "mixed")
IH_KEYS = ("y", "x_prev")
INITS = ("eq4", "c2")
#: sequences per chunk of the gradient kernel (fixed, so sums do not depend on the thread count)
CHUNK = 32
# partial-sum slots of the kernel: losses of the two heads, then d/d(p̃, p, g, h, P)
_N_SLOTS = 7


@dataclass(frozen=True)
class Stage2Config:
    """The model and target of one run (spec §2.3–2.6, flags of §2.10).

    ``first_layer``: None for the ideal first layer y_s = x_{s−1} (``stage2_first_layer`` ideal),
    or the frozen layer-1 slope p̃ (``pipeline``).
    """

    L: int = 40
    alpha: float = 1.0
    wstar: float = 0.49
    sigma: float = 0.01
    tokens: str = "gaussian"
    head1_range: str = "canonical"
    ih_model_range: str = "canonical"
    ih_keys: str = "y"
    init: str = "eq4"
    first_layer: float | None = None

    def __post_init__(self):
        if int(self.L) != self.L or self.L < 6:
            raise InvalidArgument(
                f"L={self.L} must be an integer >= 6 (head 1's literal range 2..L-2 needs L >= 5, "
                "and the IH softmax needs positions 2..L-1)"
            )
        for name, value in (("alpha", self.alpha), ("sigma", self.sigma)):
            if not (math.isfinite(value) and value > 0):
                raise InvalidArgument(f"{name}={value} must be a finite positive number")
        if not (math.isfinite(self.wstar) and self.wstar > 0):
            raise InvalidArgument(f"wstar={self.wstar} must be a finite positive number")
        for name, value, choices in (
            ("tokens", self.tokens, TOKEN_LAWS),
            ("head1_range", self.head1_range, HEAD1_RANGES),
            ("ih_model_range", self.ih_model_range, IH_MODEL_RANGES),
            ("ih_keys", self.ih_keys, IH_KEYS),
            ("init", self.init, INITS),
        ):
            if value not in choices:
                raise InvalidArgument(f"{name}={value!r} is not one of {', '.join(choices)}")
        if self.first_layer is not None and not math.isfinite(self.first_layer):
            raise InvalidArgument(
                f"first_layer={self.first_layer} must be a finite p̃ (or None for the ideal layer)"
            )

    def flags(self) -> dict:
        """The reading flags of this configuration, as recorded in evidence."""
        return {
            "tokens": self.tokens,
            "head1_range": self.head1_range,
            "ih_model_range": self.ih_model_range,
            "ih_keys": self.ih_keys,
            "init": self.init,
            "stage2_first_layer": "ideal" if self.first_layer is None else "pipeline",
        }

    def ranges(self) -> tuple[int, int, int]:
        """(S₁, V₂, N₂): head 1's last index, head 2's last value index and last normaliser index."""
        L = int(self.L)
        s1 = L - 1 if self.head1_range == "canonical" else L - 2
        v2, n2 = {"canonical": (L - 1, L - 1), "literal": (L - 2, L - 2), "mixed": (L - 2, L - 1)}[
            self.ih_model_range
        ]
        return s1, v2, n2


# ----------------------------------------------------------------------------------------------
# Kernels


@jit
def _layer1(x, L, ptilde, ideal, want_dy, y, dy):
    """Fill y[1..L] (and dy = ∂y/∂p̃ if ``want_dy``) for one sequence x[0..L] (x[0] unused).

    Finite p̃: y_s = c_s y_{s−1} + (1−c_s) x_{s−1} with c_s = rZ_{s−1}/Z_s, Z_s = rZ_{s−1} + 1,
    r = e^{−p̃}; ∂y_s/∂p̃ = −(a_s − j̄_s y_s) with a_s = Σ_τ A_{sτ}(s−1−τ)x_τ and j̄_s its mean lag,
    both by the same O(L) recursion (a_{s} = c_s(a_{s−1} + y_{s−1}), j̄_s = c_s(j̄_{s−1} + 1)).
    """
    y[1] = 0.0
    dy[1] = 0.0
    if ideal:
        for s in range(2, L + 1):
            y[s] = x[s - 1]
            dy[s] = 0.0
        return
    r = math.exp(-ptilde)
    z = 0.0
    a = 0.0
    jbar = 0.0
    for s in range(2, L + 1):
        znew = r * z + 1.0
        c = r * z / znew
        a = c * (a + y[s - 1])
        jbar = c * (jbar + 1.0)
        y[s] = c * y[s - 1] + (1.0 - c) * x[s - 1]
        z = znew
        if want_dy:
            dy[s] = -(a - jbar * y[s])


@jit
def _ih_target(x, L, vstar, hstar, weights):
    """h* Σ_{s=2}^{L−1} x_s sm((w*² x_L x_{ν−1})_{ν=2}^{L−1})_s (Eq. (2), second output); ``weights`` scratch."""
    num, total, _ = attend_previous(x, L, vstar * x[L], weights)
    return hstar * num / total


@jit
def _sequence(x, L, theta, gstar, hstar, vstar, target2, pi, piw, s1, v2, n2, keys_y, ideal, want_pt, y, dy, kp,
              e_t, e_m, acc):
    """Add one sequence's losses and gradient terms to ``acc`` (slots: ℓ₁, ℓ₂, ∂p̃, ∂p, ∂g, ∂h, ∂P).

    Head 2's keys are k_s = y_s (``keys_y``) or x_{s−1}; the target's keys are x_{s−1}. A NaN
    ``target2`` means: compute the target here (:func:`_ih_target`). ``piw[s] = π_s(p̄ − lag_s)`` is
    ∂π_s/∂p. ``kp``, ``e_t``, ``e_m`` are scratch of length ≥ L+1.
    """
    g, h = theta[2], theta[3]
    P = theta[4] * theta[5]
    _layer1(x, L, theta[0], ideal, want_pt, y, dy)
    if math.isnan(target2):
        target2 = _ih_target(x, L, vstar, hstar, e_t)
    xL = x[L]
    if keys_y:
        keys = y
    else:
        for s in range(2, L):  # kp[s] = x_{s−1}
            kp[s] = x[s - 1]
        keys = kp
    zsum, _ = softmax_weights(P * xL, keys, 2, n2, e_m)
    o1 = do1_dp = do1_dpt = 0.0
    num = knum = kxnum = 0.0
    # positions 2..L−2 are inside every range (S₁, V₂, N₂ ≥ L−2): no per-position tests there
    for s in range(2, L - 1):
        v, ys, em = x[s], y[s], e_m[s - 2]
        ek = em * keys[s]
        knum += ek
        num += em * v
        kxnum += ek * v
        o1 += pi[s] * ys
        do1_dp += piw[s] * ys
        do1_dpt += pi[s] * dy[s]
    last = L - 1
    if last <= n2:
        ek = e_m[last - 2] * keys[last]
        knum += ek
        if last <= v2:
            num += e_m[last - 2] * x[last]
            kxnum += ek * x[last]
    if last <= s1:
        o1 += pi[last] * y[last]
        do1_dp += piw[last] * y[last]
        do1_dpt += pi[last] * dy[last]
    r1 = g * o1 - gstar * x[L - 2]
    o2 = num / zsum
    do2_dP = xL * (kxnum / zsum - o2 * knum / zsum)  # Cov_ρ(x_L k_s, x_s [s ≤ V₂])
    r2 = h * o2 - target2
    acc[0] += 0.5 * r1 * r1
    acc[1] += 0.5 * r2 * r2
    acc[3] += r1 * g * do1_dp
    acc[4] += r1 * o1
    acc[5] += r2 * o2
    acc[6] += r2 * h * do2_dP
    if want_pt:
        dpt = r1 * g * do1_dpt
        if keys_y:
            # ∂o₂/∂k_s = P ρ_s (x_s[s ≤ V₂] − o₂), k_s = x_L y_s
            inner = 0.0
            for s in range(2, n2 + 1):
                xs = x[s] if s <= v2 else 0.0
                inner += e_m[s - 2] * (xs - o2) * xL * dy[s]
            dpt += r2 * h * P * inner / zsum
        acc[2] += dpt


@jit
def _head1_weights(p, L, s1):
    """π_s = sm((−p(L−1−s))_{s=2}^{S₁}) and ∂π_s/∂p = π_s(p̄ − lag_s), lag_s = L−1−s, p̄ = Σ π_s lag_s (index s)."""
    pi = np.zeros(L + 1)
    lags = np.zeros(L + 1)
    top = -p * (L - 1 - s1) if p >= 0 else -p * (L - 3)
    total = 0.0
    for s in range(2, s1 + 1):
        lags[s] = L - 1 - s
        pi[s] = math.exp(-p * lags[s] - top)
        total += pi[s]
    lagbar = 0.0
    for s in range(2, s1 + 1):
        pi[s] /= total
        lagbar += pi[s] * lags[s]
    piw = pi * (lagbar - lags)
    return pi, piw


@parallel_jit
def _batch_kernel(X, targets, theta, gstar, vstar, hstar, s1, v2, n2, keys_y, ideal, want_pt, have_targets):
    """Sum over the batch of (ℓ₁, ℓ₂, ∂p̃, ∂p, ∂g, ∂h, ∂P), chunk partials added in chunk order."""
    B = X.shape[0]
    L = X.shape[1] - 1
    pi, piw = _head1_weights(theta[1], L, s1)
    n_chunks = (B + CHUNK - 1) // CHUNK
    partial = np.zeros((n_chunks, _N_SLOTS))
    for c in prange(n_chunks):
        y, dy, kp, e_t, e_m = np.empty(L + 1), np.zeros(L + 1), np.empty(L + 1), np.empty(L + 1), np.empty(L + 1)
        acc = np.zeros(_N_SLOTS)
        for b in range(c * CHUNK, min(B, (c + 1) * CHUNK)):
            t2 = targets[b] if have_targets else math.nan
            _sequence(X[b], L, theta, gstar, hstar, vstar, t2, pi, piw, s1, v2, n2, keys_y, ideal, want_pt, y, dy, kp,
                      e_t, e_m, acc)
        for j in range(_N_SLOTS):
            partial[c, j] = acc[j]
    total = np.zeros(_N_SLOTS)
    for c in range(n_chunks):
        for j in range(_N_SLOTS):
            total[j] += partial[c, j]
    return total


@parallel_jit
def _ih_loss_samples(X, targets, theta, s1, v2, n2, keys_y, ideal):
    """½(h·o₂ − target)² per sequence (true softmax), for the fixed evaluation set."""
    B = X.shape[0]
    L = X.shape[1] - 1
    pi, piw = _head1_weights(theta[1], L, s1)
    out = np.empty(B)
    for b in prange(B):
        y, dy, kp, e_t, e_m = np.empty(L + 1), np.zeros(L + 1), np.empty(L + 1), np.empty(L + 1), np.empty(L + 1)
        acc = np.zeros(_N_SLOTS)
        _sequence(X[b], L, theta, 0.0, 0.0, 0.0, targets[b], pi, piw, s1, v2, n2, keys_y, ideal, False, y, dy, kp, e_t,
                  e_m, acc)
        out[b] = acc[1]
    return out


@parallel_jit
def _ih_targets(X, vstar, hstar):
    out = np.empty(X.shape[0])
    L = X.shape[1] - 1
    for c in prange((X.shape[0] + CHUNK - 1) // CHUNK):
        weights = np.empty(L)
        for b in range(c * CHUNK, min(X.shape[0], (c + 1) * CHUNK)):
            out[b] = _ih_target(X[b], L, vstar, hstar, weights)
    return out


# ----------------------------------------------------------------------------------------------
# Python layer


def _constants(config: Stage2Config):
    gstar = config.alpha / (1 + config.alpha)
    hstar = 1 / (1 + config.alpha)
    return gstar, config.wstar**2, hstar


def _check_X(X, L: int) -> np.ndarray:
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != L + 1:
        raise InvalidArgument(f"X has shape {X.shape}; expected (B, L+1) = (B, {L + 1}) (column 0 unused)")
    return X


def _gradient(theta, X, config, want_pt, targets=None):
    gstar, vstar, hstar = _constants(config)
    s1, v2, n2 = config.ranges()
    ideal = config.first_layer is None
    have = targets is not None
    tgt = targets if have else np.empty(0)
    sums = _batch_kernel(
        X,
        tgt,
        theta,
        gstar,
        vstar,
        hstar,
        s1,
        v2,
        n2,
        config.ih_keys == "y",
        ideal,
        want_pt and not ideal,
        have,
    )
    sums /= X.shape[0]
    grad = np.array([sums[2], sums[3], sums[4], sums[5], theta[5] * sums[6], theta[4] * sums[6]])
    return sums[0] + sums[1], grad, sums[0], sums[1]


def batch_gradient(theta, X, config: Stage2Config):
    """Minibatch loss ½ mean(r₁² + r₂²) and its gradient in θ = (p̃, p, g, h, w_Q, w_K).

    ``X`` has shape (B, L+1) (column 0 unused). With the ideal first layer (``config.first_layer``
    None) θ[0] is ignored and its gradient is 0; otherwise θ[0] is the p̃ used by layer 1.
    """
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    if theta.shape != (6,):
        raise InvalidArgument(f"theta has shape {theta.shape}; expected (6,) = {PARAMS}")
    X = _check_X(X, int(config.L))
    loss, grad, _, _ = _gradient(theta, X, config, want_pt=True)
    return loss, grad


def layer1_matrix(p_tilde: float, L: int) -> np.ndarray:
    """A_{sτ}(p̃) of Eq. (5) as an (L+1, L+1) array indexed [s, τ] (row 1 and column 0 zero)."""
    A = np.zeros((L + 1, L + 1))
    for s in range(2, L + 1):
        lag = np.arange(s - 2, -1, -1, dtype=float)  # s-1-τ for τ = 1..s-1
        logits = -p_tilde * lag
        weights = np.exp(logits - logits.max())
        A[s, 1:s] = weights / weights.sum()
    return A


def previous_token_weight(p_tilde: float, L: int) -> float:
    """A_{L−1,L−2}(p̃): layer 1's weight on the previous token at the last position head 1 reads."""
    return float(layer1_matrix(p_tilde, L)[L - 1, L - 2])


def g4_loss_exact(theta, config: Stage2Config) -> float:
    """L_G4 = ½E(g Σ_s π_s y_s − g* x_{L−2})² in closed form (population value, both token laws).

    Ideal first layer: the derived Eq. (7) compiled from ``four_gram.L_G4_derived`` (per
    ``head1_range``). Finite p̃: the residual is Σ_τ c_τ x_τ with c_τ = g Σ_s π_s A_{sτ} −
    g*[τ = L−2], so L_G4 = ½ Σ_τ c_τ² (E x_i x_j = δ_ij).
    """
    L = int(config.L)
    if config.first_layer is None:
        return float(
            _g4_kernel(config.head1_range)(theta[1], theta[2], 0.0, 0.0, float(L), config.alpha, config.wstar)
        )
    s1 = config.ranges()[0]
    pi, _ = _head1_weights(float(theta[1]), L, s1)
    coef = theta[2] * (pi[:, None] * layer1_matrix(float(theta[0]), L)).sum(axis=0)
    coef[L - 2] -= config.alpha / (1 + config.alpha)
    return 0.5 * float(coef @ coef)


_G4_KERNELS: dict = {}


def _g4_kernel(head1_range: str):
    if head1_range not in _G4_KERNELS:
        from numerics.models.induction_head.stage2 import stage2_losses

        _G4_KERNELS[head1_range] = stage2_losses(head1_range, "canonical")[0]
    return _G4_KERNELS[head1_range]


class _Evaluator:
    """Population losses at θ: exact L_G4, Monte-Carlo L_IH2 on a fixed evaluation set."""

    def __init__(self, config: Stage2Config, rng: np.random.Generator, size: int):
        _, vstar, hstar = _constants(config)
        self.config, self.size = config, size
        self.X = draw_tokens(rng, size, int(config.L), config.tokens)
        self.targets = _ih_targets(self.X, vstar, hstar)

    def __call__(self, theta) -> tuple[float, float, float]:
        c = self.config
        s1, v2, n2 = c.ranges()
        values = _ih_loss_samples(
            self.X, self.targets, theta, s1, v2, n2, c.ih_keys == "y", c.first_layer is None
        )
        ih = float(values.mean())
        se = float(values.std(ddof=1) / math.sqrt(values.size))
        return g4_loss_exact(theta, c), ih, se

    def observables(self, theta) -> dict[str, float]:
        """The logged columns: L_G4 (exact, SE 0), L_IH2 with its SE, and their sum."""
        g4, ih, se = self(theta)
        return {"L_G4": g4, "L_G4_se": 0.0, "L_IH2": ih, "L_IH2_se": se, "total": g4 + ih, "total_se": se}


def _default_eval_size(iterations: int, batch: int) -> int:
    return 10_000 if iterations * batch <= 10**7 else 30_000


def _check_run(lr, batch, iterations, log_every, eval_size):
    if batch < 2 or int(batch) != batch:
        raise InvalidArgument(f"batch={batch} must be an integer >= 2")
    if iterations < 1 or int(iterations) != iterations:
        raise InvalidArgument(f"iterations={iterations} must be an integer >= 1")
    if log_every < 1 or int(log_every) != log_every:
        raise InvalidArgument(f"log_every={log_every} must be an integer >= 1")
    if eval_size is not None and eval_size < 2:
        raise InvalidArgument(f"eval_size={eval_size} must be >= 2 (a standard error needs two samples)")
    if not (math.isfinite(lr) and lr > 0):
        raise InvalidArgument(f"lr={lr} must be a finite positive number")


def _train(config, theta, trained, *, optimizer, lr, batch, iterations, seed, log_every, eval_size, adam, progress,
           want_pt) -> Trajectory:
    """Online training of the coordinates ``trained`` of θ through :func:`numerics.train.train`.

    Training batches come from ``SeedSequence(seed)``'s first child, the fixed evaluation set from
    its second; every parameter is one group of rate ``lr`` (so t = lr × iteration).
    """
    _check_run(lr, batch, iterations, log_every, eval_size)
    eval_size = eval_size or _default_eval_size(iterations, batch)
    train_seq, eval_seq = np.random.SeedSequence(seed).spawn(2)
    evaluate = _Evaluator(config, np.random.default_rng(eval_seq), int(eval_size))
    L = int(config.L)

    def draw(rng, step):
        return draw_tokens(rng, batch, L, config.tokens)

    def gradient(theta, X):
        loss, grad, _, _ = _gradient(theta, X, config, want_pt)
        return loss, grad

    observers = {"losses": evaluate.observables}
    if "wq" in trained:
        observers["w"] = lambda theta: math.sqrt(abs(theta[4] * theta[5]))
    opt = optimizer_named(optimizer, adam)
    return train(
        theta, gradient, groups=[ParamGroup(name, PARAMS.index(name), lr) for name in trained],
        optimizer=opt, steps=iterations, data=draw, log=LogSchedule(every=log_every), observers=observers,
        progress=progress, seed=train_seq,
        meta={"config": asdict(config), "flags": config.flags(), "optimizer": {**opt.info(), "lr": lr},
              "lr": lr, "batch": batch, "seed": seed, "eval_size": int(eval_size)},
    )


def initial_theta(config: Stage2Config) -> np.ndarray:
    """θ(0) = (p̃, p, g, h, w_Q, w_K) per ``init`` (spec §2.5); p̃ = first_layer (0 placeholder if ideal)."""
    s = config.sigma
    ptilde = 0.0 if config.first_layer is None else float(config.first_layer)
    if config.init == "eq4":
        return np.array([ptilde, s, s, s, s, s])
    return np.array([ptilde, 0.0, s, s, 0.0, 0.0])


def train_stage2(
    config: Stage2Config,
    *,
    optimizer: str = "sgd",
    lr: float = 0.1,
    batch: int = 1000,
    iterations: int = 100_000,
    seed: int = 0,
    log_every: int = 100,
    eval_size: int | None = None,
    adam: tuple[float, float, float] = ADAM_DEFAULTS,
    progress: Callable[[float, str], None] | None = None,
) -> Trajectory:
    """Stage II ([W] App. B.1): train (p, g, h, w_Q, w_K) with p̃ frozen, online batches of size ``batch``.

    States p, g, h, wq, wk; observables w = √|w_Q w_K|, the population L_G4 (exact, with
    "L_G4_se" = 0), L_IH2 (fixed evaluation set, with "L_IH2_se") and their sum "total" (with
    "total_se"), at t = lr × iteration (``steps``: the iterations).
    """
    if config.init == "c2":
        raise InvalidArgument(
            "init='c2' sets w_Q(0) = w_K(0) = 0, a fixed point of Stage II (∂L/∂w_Q = w_K ∂L/∂P "
            "= 0 and ∂L/∂w_K = w_Q ∂L/∂P = 0), so w would never move; use init='eq4'"
        )
    return _train(config, initial_theta(config), ("p", "g", "h", "wq", "wk"), optimizer=optimizer, lr=lr,
                  batch=batch, iterations=iterations, seed=seed, log_every=log_every, eval_size=eval_size,
                  adam=adam, progress=progress, want_pt=False)


def train_stage1(
    L: int,
    sigma: float,
    *,
    init: str = "c2",
    lr: float = 0.1,
    batch: int = 1000,
    iterations: int = 100_000,
    seed: int = 0,
    log_every: int = 100,
    progress=None,
    alpha: float = 1.0,
    wstar: float = 0.49,
    tokens: str = "gaussian",
    head1_range: str = "canonical",
    ih_model_range: str = "canonical",
    ih_keys: str = "y",
    eval_size: int | None = None,
    optimizer: str = "sgd",
    adam: tuple[float, float, float] = ADAM_DEFAULTS,
) -> Trajectory:
    """Stage I ([W] App. C.2, B.1): train only p̃ from p̃(0) = σ; the other five stay at θ(0) (``init``).

    With ``init = c2`` (p = w_Q = w_K = 0) head 2 does not depend on p̃ and the flow is that of
    the C.2 analysis; with ``eq4`` head 2's keys y_s (``ih_keys`` y) depend on p̃ as well.
    State "p_tilde", observables as in :func:`train_stage2`;
    ``meta["previous_token_weight"]`` = A_{L−1,L−2}(p̃) at the end.
    """
    config = Stage2Config(
        L=L,
        alpha=alpha,
        wstar=wstar,
        sigma=sigma,
        tokens=tokens,
        head1_range=head1_range,
        ih_model_range=ih_model_range,
        ih_keys=ih_keys,
        init=init,
        first_layer=sigma,
    )
    run = _train(config, initial_theta(config), ("p_tilde",), optimizer=optimizer, lr=lr, batch=batch,
                 iterations=iterations, seed=seed, log_every=log_every, eval_size=eval_size, adam=adam,
                 progress=progress, want_pt=True)
    return run.with_meta(previous_token_weight=previous_token_weight(float(run["p_tilde"][-1]), int(L)))
