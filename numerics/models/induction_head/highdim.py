"""The D-dimensional variant of the induction-head model behind Fig. 4 ([W] App. B.3; spec §2.8).

Tokens x_i ∈ ℝ^D iid N(0, I_D); scalar p, g, h; ideal first layer y_s = x_{s−1}; canonical
ranges s = 2..L−1 for both heads. Outputs and targets are D-vectors:

* head 1: g Σ_s π_s x_{s−1},  π = sm((−p(L−1−s))_s);  target g* x_{L−2};
* head 2: h Σ_s ρ_s x_s,  ρ = sm((score_s)_s);  target h* Σ_s x_s sm((x_L^⊤W* x_{s−1})_s)_s, with
  W* = 0.49·I_D/D (``target`` linear, the printed matrix) or 0.49²·I_D/D (squared, flag fig4_target);
* score_s = x_L^⊤ W_Q^⊤ W_K x_{s−1} with W_Q, W_K ∈ ℝ^{D×D} (``dp_shape`` matrix, flag fig4_dp_shape)
  or (W_Q·x_L)(W_K·x_{s−1}) with W_Q, W_K ∈ ℝ^D (vector);
* loss ½‖head1 − target1‖² + ½‖head2 − target2‖² (squared Euclidean errors, halved; spec §2.8).
  ``loss_reduction = "mean"`` divides it by D (a per-coordinate mean squared error). Reason for
  this extra reading: with the sum, the curvature of L_G4 in g is D‖π‖² (→ D as p grows), so SGD
  at the printed learning rate 0.1 is unstable once 0.1·D‖π‖² > 2 — at D = 100 it diverges within
  a few dozen iterations — while with the mean every coordinate follows the scalar Fig. 1 model.

W_Q, W_K start as iid Gaussian entries rescaled to Frobenius norm σ; p, g, h start at σ. The
per-batch forward and backward passes are batched NumPy (BLAS): at D = 100 the work is
O(B·L·D + B·D²) per step and dominated by drawing the B·L·D Gaussian tokens. The forward pass
accepts complex parameters (softmax shifted by the real part of the maximum), so the analytic
gradient can be checked by complex step.

Logged losses are population estimates: L_G4 exactly (the coordinates are independent, so it is
D times the scalar derived Eq. (7)), L_IH2 by Monte-Carlo on a fixed evaluation set with its
standard error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from derivations.errors import InvalidArgument
from numerics.optim import ADAM_DEFAULTS, optimizer_named
from numerics.train import LogSchedule, ParamGroup, train
from numerics.trajectory import Trajectory

TARGETS = ("linear", "squared")
DP_SHAPES = ("matrix", "vector")
#: "sum": ½‖·‖² over the D coordinates (spec §2.8); "mean": divided by D, as a per-element MSE
#: (e.g. PyTorch's default reduction) would be. Not a flag of the spec: see the module docstring.
LOSS_REDUCTIONS = ("sum", "mean")
#: learning rates of App. B.1 / B.3 when none is given
DEFAULT_LR = {"sgd": 0.1, "adam": 5e-4}


@dataclass(frozen=True)
class HighDimConfig:
    """Model and target of the Fig. 4 variant (flags fig4_target, fig4_dp_shape)."""

    D: int = 100
    L: int = 40
    alpha: float = 1.0
    wstar: float = 0.49
    sigma: float = 0.01
    target: str = "linear"
    dp_shape: str = "matrix"
    loss_reduction: str = "sum"

    def __post_init__(self):
        if int(self.D) != self.D or self.D < 1:
            raise InvalidArgument(f"D={self.D} must be a positive integer")
        if int(self.L) != self.L or self.L < 5:
            raise InvalidArgument(f"L={self.L} must be an integer >= 5")
        for name, value in (("alpha", self.alpha), ("wstar", self.wstar), ("sigma", self.sigma)):
            if not (math.isfinite(value) and value > 0):
                raise InvalidArgument(f"{name}={value} must be a finite positive number")
        if self.target not in TARGETS:
            raise InvalidArgument(f"target={self.target!r} is not one of {', '.join(TARGETS)}")
        if self.loss_reduction not in LOSS_REDUCTIONS:
            raise InvalidArgument(
                f"loss_reduction={self.loss_reduction!r} is not one of {', '.join(LOSS_REDUCTIONS)}"
            )
        if self.dp_shape not in DP_SHAPES:
            raise InvalidArgument(f"dp_shape={self.dp_shape!r} is not one of {', '.join(DP_SHAPES)}")

    @property
    def target_scale(self) -> float:
        """C in W* = c·I_D/D: w* (linear) or w*² (squared)."""
        return self.wstar if self.target == "linear" else self.wstar**2

    def block(self) -> int:
        """Entries of W_Q (and of W_K)."""
        return self.D * self.D if self.dp_shape == "matrix" else self.D

    def unpack(self, theta):
        """(p, g, h, W_Q, W_K) views of the flat parameter vector."""
        n = self.block()
        shape = (self.D, self.D) if self.dp_shape == "matrix" else (self.D,)
        return (
            theta[0],
            theta[1],
            theta[2],
            theta[3 : 3 + n].reshape(shape),
            theta[3 + n : 3 + 2 * n].reshape(shape),
        )


def _softmax(logits):
    e = np.exp(logits - logits.real.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _rowdot(A, v):
    """(A_b v_b)_s for A of shape (B, S, D) and v of shape (B, D): batched matrix-vector products."""
    return (A @ v[:, :, None])[:, :, 0]


def _mix(weights, A):
    """Σ_s weights_bs A_bs for weights (B, S) and A (B, S, D)."""
    return (weights[:, None, :] @ A)[:, 0]


def _head1(p, L):
    lags = L - 1 - np.arange(2, L)
    pi = _softmax(-p * lags)
    return pi, lags


def ih_targets(X, config: HighDimConfig) -> np.ndarray:
    """h* Σ_s x_s sm((x_L^⊤W* x_{s−1})_s)_s for a batch X of shape (B, L, D) (x_i = X[:, i−1])."""
    L, D = config.L, config.D
    scores = (config.target_scale / D) * _rowdot(X[:, : L - 2], X[:, L - 1])
    return _mix(_softmax(scores), X[:, 1 : L - 1]) / (1 + config.alpha)


def _scores(X, WQ, WK, config):
    xL, prev = X[:, -1], X[:, : config.L - 2]
    if config.dp_shape == "matrix":
        u = (xL @ WQ.T) @ WK  # u = W_K^⊤ W_Q x_L, so score_s = u·x_{s−1}
        return _rowdot(prev, u)
    return (xL @ WQ)[:, None] * (prev @ WK)


def losses(theta, X, config: HighDimConfig, targets=None):
    """Per-sequence (ℓ₁, ℓ₂) for a batch X of shape (B, L, D); complex θ allowed (complex step)."""
    p, g, h, WQ, WK = config.unpack(theta)
    L = config.L
    gstar = config.alpha / (1 + config.alpha)
    pi, _ = _head1(p, L)
    r1 = g * (pi @ X[:, : L - 2]) - gstar * X[:, L - 3]
    rho = _softmax(_scores(X, WQ, WK, config))
    target = ih_targets(X, config) if targets is None else targets
    r2 = h * _mix(rho, X[:, 1 : L - 1]) - target
    scale = 0.5 if config.loss_reduction == "sum" else 0.5 / config.D
    return scale * (r1 * r1).sum(axis=1), scale * (r2 * r2).sum(axis=1)


def batch_gradient(theta, X, config: HighDimConfig, targets=None):
    """Minibatch loss mean(ℓ₁ + ℓ₂) and its analytic gradient in the flat θ = (p, g, h, W_Q, W_K)."""
    p, g, h, WQ, WK = config.unpack(theta)
    L, B = config.L, X.shape[0]
    gstar = config.alpha / (1 + config.alpha)
    prev, vals, xL = X[:, : L - 2], X[:, 1 : L - 1], X[:, L - 1]
    pi, lags = _head1(p, L)
    o1 = pi @ prev
    r1 = g * o1 - gstar * X[:, L - 3]
    do1_dp = (pi * (pi @ lags - lags)) @ prev
    rho = _softmax(_scores(X, WQ, WK, config))
    o2 = _mix(rho, vals)
    target = ih_targets(X, config) if targets is None else targets
    r2 = h * o2 - target
    # ∂ℓ₂/∂score_s = h ρ_s (r₂·x_s − r₂·o₂)
    r2_vals = _rowdot(vals, r2)
    delta = h * rho * (r2_vals - (r2 * o2).sum(axis=1)[:, None])
    dM = xL.T @ _mix(delta, prev)  # Σ_b Σ_s δ x_L x_{s−1}^⊤
    if config.dp_shape == "matrix":
        dWQ, dWK = WK @ dM.T, WQ @ dM
    else:
        dWQ, dWK = dM @ WK, dM.T @ WQ
    grad = np.concatenate(
        [[g * (r1 * do1_dp).sum(), (r1 * o1).sum(), (r2 * o2).sum()], dWQ.ravel(), dWK.ravel()]
    )
    loss = 0.5 * ((r1 * r1).sum() + (r2 * r2).sum())
    scale = B if config.loss_reduction == "sum" else B * config.D
    return loss / scale, grad / scale


def draw(rng: np.random.Generator, size: int, config: HighDimConfig) -> np.ndarray:
    """Tokens x_1..x_L ∈ ℝ^D iid N(0, I_D), shape (size, L, D) with x_i at index i−1."""
    return rng.standard_normal((size, config.L, config.D))


def initial_theta(config: HighDimConfig, rng: np.random.Generator) -> np.ndarray:
    """P = g = h = σ; W_Q, W_K iid Gaussian rescaled to Frobenius norm σ exactly."""
    blocks = []
    for _ in range(2):
        W = rng.standard_normal(config.block())
        blocks.append(W * (config.sigma / np.linalg.norm(W)))
    return np.concatenate([[config.sigma] * 3, *blocks])


def g4_loss_exact(theta, config: HighDimConfig) -> float:
    """L_G4 = D × the scalar derived Eq. (7) (canonical range, independent coordinates); ÷ D for "mean"."""
    from numerics.models.induction_head.sgd import Stage2Config
    from numerics.models.induction_head.sgd import g4_loss_exact as scalar

    scalar_config = Stage2Config(L=config.L, alpha=config.alpha, wstar=config.wstar, sigma=config.sigma)
    per_coordinate = scalar(np.array([0.0, theta[0], theta[1], 0.0, 0.0, 0.0]), scalar_config)
    return per_coordinate * (config.D if config.loss_reduction == "sum" else 1)


def train_highdim(
    D: int = 100,
    *,
    L: int = 40,
    alpha: float = 1.0,
    wstar: float = 0.49,
    sigma: float = 0.01,
    target: str = "linear",
    dp_shape: str = "matrix",
    loss_reduction: str = "sum",
    optimizer: str = "sgd",
    lr: float | None = None,
    batch: int = 1000,
    iterations: int = 100_000,
    seed: int = 0,
    log_every: int = 100,
    eval_size: int | None = None,
    adam: tuple[float, float, float] = ADAM_DEFAULTS,
    progress: Callable[[float, str], None] | None = None,
) -> Trajectory:
    """Online SGD (default lr 0.1) or Adam (default lr 5×10⁻⁴) of the Fig. 4 model, logged every k steps.

    Runs through :func:`numerics.train.train` (groups p, g, h, wq, wk, all at ``lr``; t = lr ×
    iteration). States: p, g, h. Observables: wq_norm, wk_norm (Frobenius), qk_norm =
    ‖W_Q^⊤W_K‖_F (matrix) or |W_Q·W_K| (vector), qk_trace = tr(W_Q^⊤W_K) (equals c of
    W* = c·I_D/D at the target); L_G4 (exact, SE 0), L_IH2 with L_IH2_se, total with total_se.
    The final W_Q, W_K are in ``meta["theta"]`` (:meth:`HighDimConfig.unpack`).
    Evaluation set: ``eval_size`` sequences (default 2000), drawn once from the seed.
    """
    config = HighDimConfig(
        D=D,
        L=L,
        alpha=alpha,
        wstar=wstar,
        sigma=sigma,
        target=target,
        dp_shape=dp_shape,
        loss_reduction=loss_reduction,
    )
    lr = DEFAULT_LR.get(optimizer, 0.1) if lr is None else lr
    if not (math.isfinite(lr) and lr > 0):
        raise InvalidArgument(f"lr={lr} must be a finite positive number")
    for name, value in (("batch", batch), ("iterations", iterations), ("log_every", log_every)):
        if int(value) != value or value < 1:
            raise InvalidArgument(f"{name}={value} must be a positive integer")
    eval_size = eval_size or 2000
    init_seq, train_seq, eval_seq = np.random.SeedSequence(seed).spawn(3)
    theta = initial_theta(config, np.random.default_rng(init_seq))
    X_eval = draw(np.random.default_rng(eval_seq), eval_size, config)
    targets_eval = ih_targets(X_eval, config)

    def population_losses(theta):
        _, ih = losses(theta, X_eval, config, targets_eval)
        g4, ih_mean, ih_se = g4_loss_exact(theta, config), ih.mean(), ih.std(ddof=1) / math.sqrt(ih.size)
        return {"L_G4": g4, "L_G4_se": 0.0, "L_IH2": ih_mean, "L_IH2_se": ih_se, "total": g4 + ih_mean,
                "total_se": ih_se}

    n = config.block()
    blocks = {"p": 0, "g": 1, "h": 2, "wq": slice(3, 3 + n), "wk": slice(3 + n, 3 + 2 * n)}
    opt = optimizer_named(optimizer, adam)
    return train(
        theta,
        lambda theta, X: batch_gradient(theta, X, config),
        groups=[ParamGroup(name, index, lr) for name, index in blocks.items()],
        optimizer=opt,
        steps=iterations,
        data=lambda rng, step: draw(rng, batch, config),
        log=LogSchedule(every=log_every),
        observers={"norms": lambda theta: _observables(theta, config), "losses": population_losses},
        states={"p": 0, "g": 1, "h": 2},
        progress=progress,
        seed=train_seq,
        meta={"config": asdict(config), "optimizer": {**opt.info(), "lr": lr}, "lr": lr, "batch": batch,
              "seed": seed, "eval_size": int(eval_size)},
    )


def _observables(theta, config: HighDimConfig) -> dict:
    _, _, _, WQ, WK = config.unpack(theta)
    if config.dp_shape == "matrix":
        M = WQ.T @ WK
        qk, trace = np.linalg.norm(M), np.trace(M)
    else:
        qk, trace = abs(WQ @ WK), WQ @ WK
    return {
        "wq_norm": np.linalg.norm(WQ),
        "wk_norm": np.linalg.norm(WK),
        "qk_norm": qk,
        "qk_trace": trace,
    }
