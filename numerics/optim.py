"""Update rules on a flat float64 parameter vector: GD/SGD, momentum and Adam, with PyTorch's semantics.

This module is the one home of the update rules; :func:`numerics.train.train` is the one loop
that applies them. An optimiser object holds only hyperparameters; its state (momentum buffer,
Adam moments, step count) lives in a dict made by :meth:`init` and advanced by :meth:`update`.

Every rule reads the rate of each coordinate from ``lr`` (one entry per coordinate, built by the
driver from the parameter groups' schedules) and the direction from ``sign`` (+1 descent, −1
ascent). Ascent follows PyTorch's ``maximize=True``: the gradient is negated first, then weight
decay is added, so weight decay still pulls towards 0. With g = sign·∇ (+ λθ when λ ≠ 0):

* GD / SGD (``torch.optim.SGD`` without momentum): θ ← θ − η g.
* Momentum (``torch.optim.SGD(momentum=μ, dampening=τ, nesterov=..., weight_decay=λ)``):
  b ← g on the first step, b ← μb + (1−τ)g after; θ ← θ − η(g + μb) (Nesterov) or θ ← θ − ηb.
* Adam (``torch.optim.Adam``, Kingma & Ba 2015, bias-corrected, L2 weight decay λ):
  m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  θ ← θ − η (m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε),
  t = 1, 2, … the number of updates so far.

These are the formulas of PyTorch's documentation, evaluated in that order. PyTorch's own
kernels re-associate Adam's last line (θ − (η/(1−β₁ᵗ))·m/(√v/√(1−β₂ᵗ) + ε)), so against torch
itself Adam agrees to rounding, not bit for bit.

A coordinate whose rate is 0 is frozen: θ keeps its value bit for bit whatever the gradient,
while the optimiser state still advances, as in PyTorch with ``lr=0``. Every kernel returns the
index of the first coordinate it made non-finite, or −1 (status codes, not exceptions, inside
``njit``). The rules act coordinate by coordinate, so coordinates with equal rates fed equal
gradients stay bit-identical (ih.lemma3).

The kernels' loops are branch-free so that they vectorise (3–4× faster on large θ, where the
update is a fixed share of every step): a frozen coordinate is written back with its own value,
and the loop only notes whether some update was non-finite; :func:`_first_nonfinite` then finds
the first one again, off the normal path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit

#: Adam's (β₁, β₂, ε) when a paper does not state them (spec flag adam_hparams); PyTorch's defaults
ADAM_DEFAULTS = (0.9, 0.999, 1e-8)


@jit
def _first_nonfinite(theta, lr):
    """The first coordinate that the rates move (lr_i ≠ 0) and that is non-finite, or −1."""
    for i in range(theta.shape[0]):
        if lr[i] != 0.0 and not math.isfinite(theta[i]):
            return i
    return -1


@jit
def gd_update(theta, grad, lr, sign):
    """θ_i ← θ_i − lr_i·(sign_i·g_i) in place where lr_i ≠ 0; first non-finite index or −1."""
    nonfinite = False
    for i in range(theta.shape[0]):
        live = lr[i] != 0.0
        x = theta[i] - lr[i] * (sign[i] * grad[i])
        theta[i] = x if live else theta[i]
        nonfinite |= live and not math.isfinite(x)
    return _first_nonfinite(theta, lr) if nonfinite else -1


@jit
def momentum_update(theta, grad, lr, sign, buf, first, mu, dampening, nesterov, weight_decay):
    """One step of ``torch.optim.SGD`` with momentum in place (``first``: this is the first step)."""
    nonfinite = False
    for i in range(theta.shape[0]):
        g = sign[i] * grad[i]
        if weight_decay != 0.0:
            g = g + weight_decay * theta[i]
        if mu != 0.0:
            if first:
                buf[i] = g
            else:
                buf[i] = mu * buf[i] + (1.0 - dampening) * g
            if nesterov:
                g = g + mu * buf[i]
            else:
                g = buf[i]
        live = lr[i] != 0.0
        x = theta[i] - lr[i] * g
        theta[i] = x if live else theta[i]
        nonfinite |= live and not math.isfinite(x)
    return _first_nonfinite(theta, lr) if nonfinite else -1


@jit
def adam_update(theta, grad, lr, sign, m, v, step, beta1, beta2, eps, weight_decay):
    """One bias-corrected Adam update in place; ``step`` is this update's number t >= 1 (a float)."""
    c1 = 1.0 - beta1**step
    c2 = 1.0 - beta2**step
    nonfinite = False
    for i in range(theta.shape[0]):
        g = sign[i] * grad[i]
        if weight_decay != 0.0:
            g = g + weight_decay * theta[i]
        m[i] = beta1 * m[i] + (1.0 - beta1) * g
        v[i] = beta2 * v[i] + (1.0 - beta2) * g * g
        live = lr[i] != 0.0
        x = theta[i] - lr[i] * (m[i] / c1) / (np.sqrt(v[i] / c2) + eps)
        theta[i] = x if live else theta[i]
        nonfinite |= live and not math.isfinite(x)
    return _first_nonfinite(theta, lr) if nonfinite else -1


def _real(
    name: str, value, low: float, high: float = math.inf, *, closed_high: bool = False, why: str = ""
) -> float:
    value = float(value)
    above = value <= high if closed_high else value < high
    if not (math.isfinite(value) and low <= value and above):
        bracket = "]" if closed_high else ")"
        raise InvalidArgument(f"{name}={value!r} must lie in [{low:g}, {high:g}{bracket}{why}")
    return value


class AbstractOptimizer:
    """An update rule: hyperparameters here, state in the dict of :meth:`init` (module docstring)."""

    name: ClassVar[str]

    def init(self, size: int) -> dict:
        """Fresh optimiser state for a parameter vector of length ``size``."""
        return {"t": 0}

    def update(
        self, theta: np.ndarray, grad: np.ndarray, lr: np.ndarray, sign: np.ndarray, state: dict
    ) -> int:
        """Apply one update to ``theta`` in place; the first coordinate made non-finite, or −1."""
        raise NotImplementedError

    def info(self) -> dict:
        """Hyperparameters, for a run's record."""
        return {"optimizer": self.name}


@dataclass(frozen=True)
class GD(AbstractOptimizer):
    """Plain gradient descent θ ← θ − η·g; full-batch or online is the data source's business."""

    name: ClassVar[str] = "gd"

    def update(self, theta, grad, lr, sign, state):
        """θ ← θ − lr∘(sign∘grad)."""
        state["t"] += 1
        return int(gd_update(theta, grad, lr, sign))


@dataclass(frozen=True)
class SGD(GD):
    """The same update as :class:`GD`, recorded as "sgd" (online batches)."""

    name: ClassVar[str] = "sgd"


@dataclass(frozen=True)
class Momentum(AbstractOptimizer):
    """``torch.optim.SGD(lr, momentum=mu, dampening, nesterov, weight_decay)`` (module docstring)."""

    mu: float
    dampening: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    name: ClassVar[str] = "momentum"

    def __post_init__(self):
        object.__setattr__(self, "mu", _real("mu", self.mu, 0.0))
        object.__setattr__(self, "dampening", _real("dampening", self.dampening, 0.0, 1.0, closed_high=True))
        object.__setattr__(self, "weight_decay", _real("weight_decay", self.weight_decay, 0.0))
        if self.nesterov and (self.mu == 0 or self.dampening != 0):
            raise InvalidArgument(
                f"nesterov=True needs mu > 0 and dampening = 0 (got mu={self.mu}, "
                f"dampening={self.dampening}),"
                " as in torch.optim.SGD; drop nesterov or set them"
            )

    def init(self, size):
        """Momentum buffer (allocated; its first value is the first gradient) and step count."""
        return {"t": 0, "buf": np.zeros(size)}

    def update(self, theta, grad, lr, sign, state):
        """One momentum step (the buffer is set to g on the first step, as in PyTorch)."""
        first = state["t"] == 0
        state["t"] += 1
        return int(
            momentum_update(
                theta,
                grad,
                lr,
                sign,
                state["buf"],
                first,
                self.mu,
                self.dampening,
                bool(self.nesterov),
                self.weight_decay,
            )
        )

    def info(self):
        """Hyperparameters."""
        return {
            "optimizer": self.name,
            "mu": self.mu,
            "dampening": self.dampening,
            "nesterov": bool(self.nesterov),
            "weight_decay": self.weight_decay,
        }


@dataclass(frozen=True)
class Adam(AbstractOptimizer):
    """``torch.optim.Adam(lr, betas, eps, weight_decay)`` with bias correction (spec flag adam_hparams)."""

    betas: tuple[float, float] = ADAM_DEFAULTS[:2]
    eps: float = ADAM_DEFAULTS[2]
    weight_decay: float = 0.0
    name: ClassVar[str] = "adam"

    def __post_init__(self):
        if len(self.betas) != 2:
            raise InvalidArgument(f"betas={self.betas!r} must be a pair (beta1, beta2)")
        beta1 = _real("beta1", self.betas[0], 0.0, 1.0, why=" (Adam's moment decay)")
        beta2 = _real("beta2", self.betas[1], 0.0, 1.0, why=" (Adam's moment decay)")
        object.__setattr__(self, "betas", (beta1, beta2))
        eps = float(self.eps)
        if not (math.isfinite(eps) and eps > 0):
            raise InvalidArgument(f"eps={self.eps!r} must be a finite number > 0 (Adam's denominator guard)")
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "weight_decay", _real("weight_decay", self.weight_decay, 0.0))

    def init(self, size):
        """First and second moments (zero) and step count."""
        return {"t": 0, "m": np.zeros(size), "v": np.zeros(size)}

    def update(self, theta, grad, lr, sign, state):
        """One bias-corrected Adam step."""
        state["t"] += 1
        beta1, beta2 = self.betas
        return int(
            adam_update(
                theta,
                grad,
                lr,
                sign,
                state["m"],
                state["v"],
                float(state["t"]),
                beta1,
                beta2,
                self.eps,
                self.weight_decay,
            )
        )

    def info(self):
        """Hyperparameters."""
        beta1, beta2 = self.betas
        return {
            "optimizer": self.name,
            "beta1": beta1,
            "beta2": beta2,
            "eps": self.eps,
            "weight_decay": self.weight_decay,
        }


#: optimisers that can be named by a string (momentum needs its μ, so it is built as ``Momentum(mu)``)
OPTIMIZERS = ("gd", "sgd", "adam")


def optimizer_named(name: str, adam: tuple[float, float, float] = ADAM_DEFAULTS) -> AbstractOptimizer:
    """:class:`GD`, :class:`SGD` or :class:`Adam` (with ``adam`` = (β₁, β₂, ε)) by name."""
    if name in ("gd", "sgd"):
        return GD() if name == "gd" else SGD()
    if name == "adam":
        beta1, beta2, eps = adam
        return Adam((beta1, beta2), eps)
    hint = "; momentum is Momentum(mu, ...)" if name == "momentum" else ""
    raise InvalidArgument(f"optimizer={name!r} is not one of {', '.join(OPTIMIZERS)}{hint}")
