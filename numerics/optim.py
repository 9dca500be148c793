"""Online optimisers on a flat float64 parameter vector: SGD and Adam (Kingma & Ba 2015).

The update rules are numba kernels that modify ``theta`` in place, so trainers can call them
from inside their own compiled loops; :class:`SGD` and :class:`Adam` are the Python-side
descriptions (hyperparameters + state) that trainers build once and step.

* SGD:  θ ← θ − η ∘ g.
* Adam: m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  m̂ = m/(1−β₁ᵗ),  v̂ = v/(1−β₂ᵗ),
  θ ← θ − η ∘ m̂/(√v̂ + ε), with t = 1, 2, … the number of updates so far (bias correction).

``lr`` may be a scalar or one rate per coordinate (parameter groups with their own step sizes);
a coordinate with rate 0 is frozen. Both rules are symmetric under permutations of coordinates
with equal rates, so equal coordinates fed equal gradients stay bit-identical (ih.lemma3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit

#: Adam's (β₁, β₂, ε) when a paper does not state them (spec flag adam_hparams)
ADAM_DEFAULTS = (0.9, 0.999, 1e-8)
OPTIMIZERS = ("sgd", "adam")


@jit
def sgd_update(theta, grad, lr):
    """θ ← θ − lr ∘ grad in place (``lr`` has the length of θ)."""
    for i in range(theta.shape[0]):
        theta[i] -= lr[i] * grad[i]


@jit
def adam_update(theta, grad, m, v, step, lr, beta1, beta2, eps):
    """One bias-corrected Adam update in place; ``step`` is this update's number t >= 1."""
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    for i in range(theta.shape[0]):
        m[i] = beta1 * m[i] + (1.0 - beta1) * grad[i]
        v[i] = beta2 * v[i] + (1.0 - beta2) * grad[i] * grad[i]
        theta[i] -= lr[i] * (m[i] / c1) / (np.sqrt(v[i] / c2) + eps)


def _rates(lr, size: int) -> np.ndarray:
    rates = np.broadcast_to(np.asarray(lr, dtype=np.float64), (size,)).copy()
    if not np.all(np.isfinite(rates)) or np.any(rates < 0):
        raise InvalidArgument(f"lr={lr!r} must be finite and >= 0 (one rate, or one per parameter)")
    return rates


@dataclass
class SGD:
    """Plain (online) SGD with rate(s) ``lr``."""

    lr: float | np.ndarray
    size: int
    rates: np.ndarray = field(init=False, repr=False)
    steps: int = field(default=0, init=False)

    def __post_init__(self):
        self.rates = _rates(self.lr, self.size)

    def step(self, theta: np.ndarray, grad: np.ndarray) -> None:
        """Update ``theta`` in place."""
        sgd_update(theta, grad, self.rates)
        self.steps += 1

    def info(self) -> dict:
        """Hyperparameters, for a run's record."""
        return {"optimizer": "sgd", "lr": np.asarray(self.lr).tolist()}


@dataclass
class Adam:
    """Adam with bias correction; ``betas_eps`` = (β₁, β₂, ε) (spec flag adam_hparams)."""

    lr: float | np.ndarray
    size: int
    betas_eps: tuple[float, float, float] = ADAM_DEFAULTS
    rates: np.ndarray = field(init=False, repr=False)
    m: np.ndarray = field(init=False, repr=False)
    v: np.ndarray = field(init=False, repr=False)
    steps: int = field(default=0, init=False)

    def __post_init__(self):
        beta1, beta2, eps = (float(x) for x in self.betas_eps)
        if not (0 <= beta1 < 1 and 0 <= beta2 < 1 and eps > 0):
            raise InvalidArgument(f"adam={self.betas_eps!r} needs 0 <= beta1, beta2 < 1 and eps > 0")
        self.betas_eps = (beta1, beta2, eps)
        self.rates = _rates(self.lr, self.size)
        self.m = np.zeros(self.size)
        self.v = np.zeros(self.size)

    def step(self, theta: np.ndarray, grad: np.ndarray) -> None:
        """Update ``theta`` in place."""
        self.steps += 1
        adam_update(theta, grad, self.m, self.v, float(self.steps), self.rates, *self.betas_eps)

    def info(self) -> dict:
        """Hyperparameters, for a run's record."""
        beta1, beta2, eps = self.betas_eps
        return {
            "optimizer": "adam",
            "lr": np.asarray(self.lr).tolist(),
            "beta1": beta1,
            "beta2": beta2,
            "eps": eps,
        }


def make_optimizer(name: str, lr, size: int, adam: tuple[float, float, float] = ADAM_DEFAULTS):
    """Build :class:`SGD` or :class:`Adam` by name for a parameter vector of length ``size``."""
    if name == "sgd":
        return SGD(lr, size)
    if name == "adam":
        return Adam(lr, size, tuple(adam))
    raise InvalidArgument(f"optimizer={name!r} is not one of {', '.join(OPTIMIZERS)}")
