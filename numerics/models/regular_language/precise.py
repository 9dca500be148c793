"""The mpmath twin of :mod:`.model`: forward, loss, gradient and attention features at ``dps`` digits.

For the early GD steps, the features at t0, margins and the SVM (spec §0.2 item 6, §8): the
same formulas as the numba kernels, evaluated with mpmath at ``dps`` significant digits
(default :data:`DPS` = 60). Inputs are converted **exactly** (a float64 is an exact binary
rational; a :class:`fractions.Fraction` is divided at the working precision, and is exact when
its denominator is a power of two), so the only error is the working precision's.

Parameters: ``u`` of length d and ``W`` of shape (d, d), each given as an mpmath matrix, a NumPy
array (float or object of Fractions/ints/mpf), or nested lists; or a flat θ in the layout of
:data:`.model.LAYOUT` through :func:`split_flat`. ``lam`` may be an int, float, Fraction, str
or mpf.

The results are mpf numbers or mpmath matrices computed under ``mp.workdps(dps)``; they keep
their precision, but further arithmetic on them should also run under ``mp.workdps(dps)``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
from mpmath import mp

from derivations.errors import InvalidArgument
from numerics.models.regular_language.data import RLData

#: default working precision (spec §0.2 item 6: at least 50 digits, default 60)
DPS = 60


def mp_value(x) -> mpmath.mpf:
    """Convert a number exactly (float, int, Fraction, str, mpf) at the current working precision."""
    if isinstance(x, mpmath.mpf):
        return +x
    if isinstance(x, bool):
        return mp.mpf(int(x))
    if isinstance(x, numbers.Integral):
        return mp.mpf(int(x))
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    if isinstance(x, numbers.Rational):
        return mp.mpf(int(x.numerator)) / int(x.denominator)
    if isinstance(x, float | np.floating):
        return mp.mpf(float(x))
    if isinstance(x, str):
        return mp.mpf(x)
    msg = f"value {x!r} of type {type(x).__name__} cannot be converted to an mpmath number"
    raise InvalidArgument(msg)


def _dps(dps) -> int:
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or dps < 15:
        msg = f"dps={dps!r} must be an integer >= 15 (decimal digits; spec §0.2 asks >= 50, default {DPS})"
        raise InvalidArgument(msg)
    return int(dps)


def _vector(u, d: int) -> list:
    if isinstance(u, mpmath.matrix):
        if u.rows * u.cols != d:
            msg = f"u is a {u.rows}x{u.cols} mpmath matrix; expected {d} entries"
            raise InvalidArgument(msg)
        return [mp_value(u[i]) for i in range(d)]
    arr = np.asarray(u, dtype=object).reshape(-1)
    if arr.shape != (d,):
        msg = f"u has {arr.size} entries; expected d={d}"
        raise InvalidArgument(msg)
    return [mp_value(x) for x in arr]


def _matrix(W, d: int) -> list[list]:
    if isinstance(W, mpmath.matrix):
        if (W.rows, W.cols) != (d, d):
            msg = f"W is a {W.rows}x{W.cols} mpmath matrix; expected {d}x{d}"
            raise InvalidArgument(msg)
        return [[mp_value(W[i, j]) for j in range(d)] for i in range(d)]
    arr = np.asarray(W, dtype=object)
    if arr.shape != (d, d):
        msg = f"W has shape {arr.shape}; expected ({d}, {d})"
        raise InvalidArgument(msg)
    return [[mp_value(x) for x in row] for row in arr]


def split_flat(theta, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(u, W) of a flat θ in the layout of :data:`.model.LAYOUT` (object arrays keep Fractions exact)."""
    arr = np.asarray(theta, dtype=object).reshape(-1)
    if arr.shape != (d + d * d,):
        msg = f"theta has {arr.size} entries; expected d + d*d = {d + d * d} with d={d}"
        raise InvalidArgument(msg)
    return arr[:d], arr[d:].reshape(d, d)


def _softmax_row(Wm: list[list], row, L: int, lam) -> list:
    q = row[L - 1]
    s = [Wm[row[ell]][q] / lam for ell in range(L)]
    top = max(s)
    e = [mp.exp(x - top) for x in s]
    total = mp.fsum(e)
    return [x / total for x in e]


def _J(z):
    return mp.log1p(mp.exp(-z)) if z >= 0 else -z + mp.log1p(mp.exp(z))


def _minus_dJ(z):
    return 1 / (1 + mp.exp(z))


def _lam(lam):
    value = mp_value(lam)
    if not (mp.isfinite(value) and value > 0):
        msg = f"lam={lam!r} must be finite and > 0 (the attention temperature λ)"
        raise InvalidArgument(msg)
    return value


def _rows(data: RLData):
    for n in range(data.n):
        L = int(data.length[n])
        yield n, L, [int(i) for i in data.idx[n, :L]]


def attention_mp(data: RLData, W, lam, *, dps: int = DPS) -> list[list]:
    """φ^{(n)}_1..φ^{(n)}_{L_n} of every sample (list of lists of mpf)."""
    with mp.workdps(_dps(dps)):
        Wm, lam_mp = _matrix(W, data.dim), _lam(lam)
        return [_softmax_row(Wm, row, L, lam_mp) for _, L, row in _rows(data)]


def forward_mp(data: RLData, u, W, lam, *, dps: int = DPS) -> tuple[list[list], list]:
    """(φ per sample, T per sample) at ``dps`` digits."""
    with mp.workdps(_dps(dps)):
        um, Wm, lam_mp = _vector(u, data.dim), _matrix(W, data.dim), _lam(lam)
        phis, Ts = [], []
        for _, L, row in _rows(data):
            phi = _softmax_row(Wm, row, L, lam_mp)
            phis.append(phi)
            Ts.append(mp.fsum(phi[ell] * um[row[ell]] for ell in range(L)))
        return phis, Ts


def loss_mp(data: RLData, u, W, lam, *, dps: int = DPS) -> mpmath.mpf:
    """L(u, W) = Σ_n 2^{−L_n} J(y_n T_n) at ``dps`` digits (exact weights)."""
    with mp.workdps(_dps(dps)):
        _, Ts = forward_mp(data, u, W, lam, dps=dps)
        terms = zip(data.weight_exact, data.y, Ts, strict=True)
        return mp.fsum(mp_value(w) * _J(int(y) * T) for w, y, T in terms)


def gradient_mp(data: RLData, u, W, lam, *, dps: int = DPS
                ) -> tuple[mpmath.mpf, mpmath.matrix, mpmath.matrix]:
    """(L, ∇_u L as a d×1 matrix, ∇_W L as a d×d matrix) at ``dps`` digits (rl.cf.gradient)."""
    d = data.dim
    with mp.workdps(_dps(dps)):
        um, Wm, lam_mp = _vector(u, d), _matrix(W, d), _lam(lam)
        gu = mp.matrix(d, 1)
        gW = mp.matrix(d, d)
        terms = []
        for n, L, row in _rows(data):
            phi = _softmax_row(Wm, row, L, lam_mp)
            T = mp.fsum(phi[ell] * um[row[ell]] for ell in range(L))
            y = int(data.y[n])
            w = mp_value(data.weight_exact[n])
            terms.append(w * _J(y * T))
            g = -w * _minus_dJ(y * T) * y
            q = row[L - 1]
            for ell in range(L):
                i = row[ell]
                gu[i] += g * phi[ell]
                gW[i, q] += g * phi[ell] * (um[i] - T) / lam_mp
        return mp.fsum(terms), gu, gW


def flat_mp(gu: mpmath.matrix, gW: mpmath.matrix) -> list:
    """Return the flat list [u, W row-major] (:data:`.model.LAYOUT`) of a (d×1, d×d) pair."""
    d = gW.rows
    return [gu[i] for i in range(d)] + [gW[i, j] for i in range(d) for j in range(d)]


def features_mp(data: RLData, W, lam, *, dps: int = DPS) -> mpmath.matrix:
    """Return the attention outputs v^{(n)} = Σ_ℓ x_ℓ φ_ℓ^{(n)} as an N×d mpmath matrix."""
    d = data.dim
    with mp.workdps(_dps(dps)):
        out = mp.matrix(data.n, d)
        for (n, _, row), phi in zip(_rows(data), attention_mp(data, W, lam, dps=dps), strict=True):
            for ell, i in enumerate(row):
                out[n, i] += phi[ell]
        return out


@dataclass(frozen=True)
class ClassFeature:
    """The attention of one class (term, L, y), by position.

    ``positions``: φ_1..φ_L of the class's first sample, padded with zeros to L_max (a 1×L_max
    mpmath matrix): the reduced feature, ⟨u, v^{(n)}⟩ = Σ_ℓ m_ℓ φ_ℓ when u[idx(ℓ, a)] =
    u[idx(ℓ, b)] = m_ℓ. ``spread``: the largest |φ_ℓ^{(n)} − φ_ℓ^{(first)}| over the class's
    samples (0 when W is invariant under the label-preserving flips of spec §2.8).
    ``members``: the sample indices.
    """

    positions: mpmath.matrix
    spread: mpmath.mpf
    members: np.ndarray


def class_features_mp(data: RLData, W, lam, *, dps: int = DPS) -> dict[tuple[str, int, int], ClassFeature]:
    """Return the per-position attention of each class (term, L, y), with the spread inside the class."""
    with mp.workdps(_dps(dps)):
        phis = attention_mp(data, W, lam, dps=dps)
        out = {}
        for key, members in data.classes().items():
            first = phis[int(members[0])]
            positions = mp.matrix(1, data.L_max)
            for ell, value in enumerate(first):
                positions[0, ell] = value
            spread = max((abs(phis[int(n)][ell] - first[ell]) for n in members for ell in range(len(first))),
                         default=mp.zero)
            out[key] = ClassFeature(positions, +spread, members)
        return out
