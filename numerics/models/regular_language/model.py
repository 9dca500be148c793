"""The one-layer softmax-attention model of the regular-language paper, its logistic loss and gradient.

Model (Sec. 3, reparameterised; spec §2.4–2.5), for a sample with token indices i_1..i_L
(i_ℓ = idx[n, ℓ−1], :mod:`.data`) and query i_L::

    s_ℓ = W[i_ℓ, i_L],   φ = softmax(s/λ),   T_θ(X) = Σ_ℓ φ_ℓ u[i_ℓ],
    L(u, W) = Σ_n weight_n J(y_n T_n),   J(z) = log(1 + e^{−z}),

so the row of W is the key token and the column the query token. The gradient (rl.cf.gradient,
with ∂T/∂s_ℓ = φ_ℓ(u_ℓ − T)/λ) is::

    g_n = weight_n J'(y_n T_n) y_n,   J'(z) = −1/(1 + e^{z}),
    ∇_u L[i_ℓ] += g_n φ_ℓ,   ∇_W L[i_ℓ, i_L] += g_n φ_ℓ (u[i_ℓ] − T_n)/λ.

Stable primitives (spec §8): the softmax subtracts the largest logit; J(z) = log1p(e^{−z}) for
z >= 0 and −z + log1p(e^{z}) otherwise; −J'(z) = e^{−z}/(1 + e^{−z}) for z >= 0 and 1/(1 + e^{z})
otherwise. The kernels loop over samples in row order (serial), so a result is bit-identical run
to run.

Flat layout (:data:`LAYOUT`), used by :meth:`RLModel.gradient` and :func:`numerics.train.train`:
θ = [u (d entries), W row-major (d² entries)], i.e. u[i] = θ[i] and W[i, j] = θ[d + i·d + j].
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit
from numerics.enumeration import StratifiedMonteCarlo
from numerics.models.regular_language.data import PAD, RLData
from numerics.montecarlo import Enumeration

LAYOUT = ("theta = [u (d), W row-major (d*d)]: u[i] = theta[i], W[i, j] = theta[d + i*d + j] "
          "(row = key, column = query)")
SIGN_ZERO = ("+1", "count_as_error")


# ----------------------------------------------------------------------------------------------
# Kernels. Shapes: u (d,), W (d, d), idx (N, L_max) int64 padded beyond length[n], length (N,),
# y and weight (N,), phi (N, L_max). Scratch is allocated per call (the kernels are re-entrant).
# Nothing raises: non-finite parameters give non-finite results that the wrappers detect.


@jit
def logistic_loss(z):
    """J(z) = log(1 + e^{−z}) without overflow or cancellation."""
    if z >= 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@jit
def logistic_weight(z):
    """−J'(z) = 1/(1 + e^{z}) without overflow."""
    if z >= 0.0:
        e = math.exp(-z)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(z))


@jit
def logistic_losses(z):
    """J(z_i) for each entry of a 1-D array."""
    out = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        out[i] = logistic_loss(z[i])
    return out


@jit
def attend(u, W, row, L, lam, phi):
    """Write φ_1..φ_L of one sample (token indices ``row[:L]``) into ``phi[:L]``; return Σ φ_ℓ u[row_ℓ]."""
    q = row[L - 1]
    top = -math.inf
    for ell in range(L):
        s = W[row[ell], q] / lam
        phi[ell] = s
        if s > top:
            top = s
    total = 0.0
    for ell in range(L):
        e = math.exp(phi[ell] - top)
        phi[ell] = e
        total += e
    T = 0.0
    for ell in range(L):
        phi[ell] /= total
        T += phi[ell] * u[row[ell]]
    return T


@jit
def forward_kernel(u, W, idx, length, lam, phi, T):
    """Fill phi (N, L_max; zero beyond each length) and T (N,)."""
    for n in range(length.shape[0]):
        L = length[n]
        for ell in range(L, phi.shape[1]):
            phi[n, ell] = 0.0
        T[n] = attend(u, W, idx[n], L, lam, phi[n])


@jit
def loss_kernel(u, W, idx, length, y, weight, lam):
    """Return L = Σ_n weight_n J(y_n T_n)."""
    scratch = np.empty(idx.shape[1])
    loss = 0.0
    for n in range(length.shape[0]):
        T = attend(u, W, idx[n], length[n], lam, scratch)
        loss += weight[n] * logistic_loss(y[n] * T)
    return loss


@jit
def loss_grad_kernel(u, W, idx, length, y, weight, lam, gu, gW):
    """Return L and write ∇_u L into ``gu`` (d,) and ∇_W L into ``gW`` (d, d) (both overwritten)."""
    scratch = np.empty(idx.shape[1])
    gu[:] = 0.0
    gW[:, :] = 0.0
    loss = 0.0
    for n in range(length.shape[0]):
        L = length[n]
        row = idx[n]
        T = attend(u, W, row, L, lam, scratch)
        z = y[n] * T
        loss += weight[n] * logistic_loss(z)
        g = -weight[n] * logistic_weight(z) * y[n]
        q = row[L - 1]
        for ell in range(L):
            i = row[ell]
            gphi = g * scratch[ell]
            gu[i] += gphi
            gW[i, q] += gphi * (u[i] - T) / lam
    return loss


@jit
def features_kernel(W, idx, length, lam, out):
    """Write the attention outputs v^{(n)} = Σ_ℓ x_ℓ φ_ℓ into ``out`` (N, d) (overwritten)."""
    scratch = np.empty(idx.shape[1])
    out[:, :] = 0.0
    dummy = np.zeros(out.shape[1])
    for n in range(length.shape[0]):
        L = length[n]
        attend(dummy, W, idx[n], L, lam, scratch)
        for ell in range(L):
            out[n, idx[n, ell]] += scratch[ell]


# ----------------------------------------------------------------------------------------------
# The model


def live_entries(data: RLData) -> np.ndarray:
    """Boolean (d, d): the entries of W that can receive gradient (spec §2.4), computed from the data.

    W[i, j] is live iff some sample of length L >= 2 has query index j and a token (any position
    1..L, the query included) of index i: the outer product x_ℓ x_L^⊤ of rl.cf.gradient. A
    length-1 sample's softmax is constant, so its column gets nothing. For EP with lengths
    1..L_max this gives Σ_{L=2}^{L_max} 2(2L − 1) entries (70 for L_max = 6).
    """
    live = np.zeros((data.dim, data.dim), dtype=bool)
    for n in np.flatnonzero(data.length >= 2):
        live[data.idx[n, : data.length[n]], data.query[n]] = True
    return live


def live_tokens(data: RLData) -> np.ndarray:
    """Boolean (d,): the entries of u that some sample reads (every position-character pair present)."""
    live = np.zeros(data.dim, dtype=bool)
    live[data.idx[data.idx != PAD]] = True
    return live


def _positive_lam(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        msg = f"lam={lam!r} must be a real number > 0 (the attention temperature λ)"
        raise InvalidArgument(msg)
    value = float(lam)
    if not (math.isfinite(value) and value > 0):
        msg = f"lam={lam!r} must be finite and > 0 (the attention temperature λ; the softmax is of s/λ)"
        raise InvalidArgument(msg)
    return value


@dataclass(frozen=True)
class Accuracy:
    """Sign accuracy: prediction sign(T) against y, with the ``sign_zero`` reading of sign(0).

    ``fraction``: share of samples classified correctly; ``weighted``: the same with the loss
    weights (a mean over lengths of per-length accuracy, per loss term); ``by_length``: per length
    (strata of equal length merged); ``by_class``: per class (term, L, y); ``n_zero``: samples with
    T = 0 exactly (correct under ``+1`` iff y = +1, wrong under ``count_as_error``).
    """

    fraction: float
    weighted: float
    by_length: dict[int, float]
    by_class: dict[tuple[str, int, int], float]
    sign_zero: str
    n_zero: int


class RLModel:
    """The model T_θ on one enumerated data set at temperature ``lam`` (λ > 0, never trained).

    Parameters
    ----------
    data : RLData
        The data set (:mod:`.data`); fixes d.
    lam : float
        λ > 0.

    ``theta`` everywhere is the flat float64 vector of :data:`LAYOUT` (size d + d²).
    """

    def __init__(self, data: RLData, lam: float) -> None:
        if not isinstance(data, RLData):
            msg = f"data={data!r} must be an RLData (build it with make_data / ep_data / cot_data)"
            raise InvalidArgument(msg)
        self.data = data
        self.lam_value = lam
        self.lam = _positive_lam(lam)
        self.d = data.dim
        self.size = self.d + self.d * self.d

    # -- layout --------------------------------------------------------------------------------

    @property
    def u_slice(self) -> slice:
        """The coordinates of u in θ (for a :class:`numerics.train.ParamGroup`)."""
        return slice(0, self.d)

    @property
    def W_slice(self) -> slice:
        """The coordinates of W in θ."""
        return slice(self.d, self.size)

    def zeros(self) -> np.ndarray:
        """θ_0 = 0."""
        return np.zeros(self.size)

    def split(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """(u, W) as views of θ (W of shape (d, d), row-major)."""
        theta = self._theta(theta)
        return theta[: self.d], theta[self.d:].reshape(self.d, self.d)

    def join(self, u, W) -> np.ndarray:
        """Return the flat θ of (u, W)."""
        u = np.asarray(u, dtype=np.float64).reshape(-1)
        W = np.asarray(W, dtype=np.float64)
        if u.shape != (self.d,) or W.shape != (self.d, self.d):
            msg = f"u has shape {u.shape} and W {W.shape}; expected ({self.d},) and ({self.d}, {self.d})"
            raise InvalidArgument(msg)
        return np.concatenate([u, W.reshape(-1)])

    def _theta(self, theta) -> np.ndarray:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.shape != (self.size,):
            msg = (f"theta has shape {theta.shape}; expected ({self.size},) = d + d*d with d={self.d} "
                   f"({LAYOUT})")
            raise InvalidArgument(msg)
        return theta

    @property
    def live_W(self) -> np.ndarray:
        """Boolean (d, d) of the live entries of W (:func:`live_entries`)."""
        return live_entries(self.data)

    @property
    def live_mask(self) -> np.ndarray:
        """Boolean (d + d²,): the live coordinates of θ (u read by some sample, W live)."""
        return np.concatenate([live_tokens(self.data), live_entries(self.data).reshape(-1)])

    # -- evaluation ----------------------------------------------------------------------------

    def forward(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """(φ of shape (N, L_max), zero beyond each length; T of shape (N,))."""
        u, W = self.split(theta)
        phi = np.empty((self.data.n, self.data.L_max))
        T = np.empty(self.data.n)
        forward_kernel(u, W, self.data.idx, self.data.length, self.lam, phi, T)
        return phi, T

    def outputs(self, theta) -> np.ndarray:
        """T_θ(X^{(n)}) for every sample."""
        return self.forward(theta)[1]

    def loss(self, theta) -> float:
        """L(u, W) = Σ_n weight_n J(y_n T_n)."""
        u, W = self.split(theta)
        d = self.data
        loss = loss_kernel(u, W, d.idx, d.length, d.y, d.weight, self.lam)
        self._finite(loss, theta)
        return float(loss)

    def gradient(self, theta, batch=None) -> tuple[float, np.ndarray]:
        """Return (L, ∇L) at θ, ∇L in the flat layout (:data:`LAYOUT`); for :func:`numerics.train.train`.

        ``batch`` exists for the driver's ``gradient(theta, batch)`` call and must be None (the
        loss is the full enumerated sum).
        """
        if batch is not None:
            msg = (f"batch={type(batch).__name__} must be None: the loss is the full enumerated sum; "
                   "call train(..., data=None)")
            raise InvalidArgument(msg)
        u, W = self.split(theta)
        grad = np.empty(self.size)
        gu, gW = grad[: self.d], grad[self.d:].reshape(self.d, self.d)
        d = self.data
        loss = loss_grad_kernel(u, W, d.idx, d.length, d.y, d.weight, self.lam, gu, gW)
        self._finite(loss, theta)
        return float(loss), grad

    def features(self, theta) -> np.ndarray:
        """Attention outputs v^{(n)} = Σ_ℓ x_ℓ φ_ℓ, shape (N, d) (u is not used)."""
        _, W = self.split(theta)
        out = np.empty((self.data.n, self.d))
        features_kernel(W, self.data.idx, self.data.length, self.lam, out)
        return out

    def accuracy(self, theta, sign_zero: str = "+1") -> Accuracy:
        """Sign accuracy on the training set (overall, weighted, per length, per class)."""
        if sign_zero not in SIGN_ZERO:
            valid = ", ".join(map(repr, SIGN_ZERO))
            msg = f"sign_zero={sign_zero!r} is not a known reading; valid values: {valid}"
            raise InvalidArgument(msg)
        T = self.outputs(theta)
        if not np.all(np.isfinite(T)):
            self._finite(math.nan, theta)
        zero = T == 0.0
        prediction = np.where(T > 0, 1.0, -1.0)
        if sign_zero == "+1":
            prediction[zero] = 1.0
        correct = (prediction == self.data.y) & ~(zero & (sign_zero == "count_as_error"))
        d = self.data
        by_length = {int(L): float(correct[d.length == L].mean()) for L in sorted(set(d.lengths))}
        by_class = {key: float(correct[rows].mean()) for key, rows in d.classes().items()}
        weighted = float(np.sum(d.weight * correct) / np.sum(d.weight))
        return Accuracy(float(correct.mean()), weighted, by_length, by_class, sign_zero, int(zero.sum()))

    def _finite(self, loss: float, theta: np.ndarray) -> None:
        if not math.isfinite(loss):
            bad = np.flatnonzero(~np.isfinite(np.asarray(theta, dtype=np.float64)))
            values = np.asarray(theta)
            where = f"theta[{int(bad[0])}]={float(values[bad[0]])!r}" if bad.size else "a finite theta"
            msg = (f"the loss is non-finite ({loss!r}) at lam={self.lam!r} with {where}; the kernels are "
                   "overflow-safe for finite parameters, so the parameters themselves have diverged")
            raise NumericalTrouble(msg)

    # -- expectations --------------------------------------------------------------------------

    def sample_losses(self, chars, length, stratum, theta) -> np.ndarray:
        """Return J(y T) per string (the integrand of :meth:`enumeration` and :meth:`monte_carlo`).

        ``chars`` (n, L_max) int64 padded with −1, ``length`` and ``stratum`` (n,): the layout of
        :mod:`numerics.enumeration`. Labels come from the data set's rule of each stratum.
        """
        u, W = self.split(theta)
        chars = np.asarray(chars, dtype=np.int64)
        positions = np.arange(chars.shape[1], dtype=np.int64)
        idx = np.ascontiguousarray(np.where(chars >= 0, 2 * positions[None, :] + chars, PAD))
        if idx.max(initial=0) >= self.d:
            msg = f"the strings need embedding index {int(idx.max()) + 1} > d={self.d}"
            raise InvalidArgument(msg)
        stratum = np.asarray(stratum, dtype=np.int64)
        if stratum.size and not 0 <= stratum.min() <= stratum.max() < len(self.data.lengths):
            msg = f"stratum holds indices outside 0..{len(self.data.lengths) - 1} (the data set's strata)"
            raise InvalidArgument(msg)
        y = np.empty(chars.shape[0])
        for h in np.unique(stratum):
            rows = np.flatnonzero(stratum == h)
            L = self.data.lengths[h]
            y[rows] = self.data.rules[h](chars[rows, :L])
        T = np.empty(chars.shape[0])
        phi = np.empty((chars.shape[0], chars.shape[1]))
        forward_kernel(u, W, idx, np.ascontiguousarray(length, dtype=np.int64), self.lam, phi, T)
        return logistic_losses(y * T)

    def enumeration(self) -> Enumeration:
        """Return the loss as an exact :class:`~numerics.montecarlo.Enumeration` (``estimate(theta)``)."""
        return self.data.strings.enumeration(self.sample_losses)

    def monte_carlo(self, *, n: int, seed: int, **kwargs) -> StratifiedMonteCarlo:
        """Return the loss by stratified Monte-Carlo, ``n`` uniform strings per stratum (a cross-check)."""
        return self.data.strings.monte_carlo(self.sample_losses, n=n, seed=seed, **kwargs)

