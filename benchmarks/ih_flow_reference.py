r"""Peers for the ``ih-flow`` and ``ih-sweep`` benchmarks: the Stage-II flow written by hand.

State (p, g, h, ln w), parameters (L, α*, w*); canonical ranges, exp-simplified IH loss,
``flow = paper`` (spec §10):

.. math::
   \dot p = g^2\frac{m(2p)}{M^2} - g^2\frac{M(2p)\,m(p)}{M^3} + g^\star g\frac{m(p)}{M^2},\qquad
   \dot g = \frac{g^\star}{M} - g\frac{M(2p)}{M^2},

.. math::
   \dot h = \frac{h^\star\psi(v+v^\star) - h\psi(2v)}{L-2},\qquad
   \frac{d\ln w}{dt} = -\frac{2h\,(h\varphi(2v) - h^\star\varphi(v+v^\star))}{L-2},

with :math:`M(p) = \sum_{k=0}^{L-3} e^{-pk}` (closed form, expm1), :math:`m(p) = \sum_k k e^{-pk}`
(direct sum, as spec §8 advises), :math:`v = w^2`,
:math:`\psi(x) = (1-x^2)^{-1/2}`, :math:`\varphi(x) = x(1-x^2)^{-3/2}`.

``rhs_python`` is what a researcher hands to ``scipy.integrate.solve_ivp``; ``solve_reference``
is a hand-written numba Dormand–Prince 5(4) with the same error norm and PI step control as
tdcheck's integrator, and a hand-coded right-hand side: the speed limit for generated code.
Nothing in the ``tdcheck`` packages imports this file.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


def _sums(p: float, n: int) -> tuple[float, float]:
    """(M(p), m(p)) with n = L - 2 terms, in closed form (expm1, stable for small p)."""
    if p == 0.0:
        return float(n), n * (n - 1) / 2.0
    q = math.exp(-p)
    M = math.expm1(-p * n) / math.expm1(-p)
    m = q * (1 - n * q ** (n - 1) + (n - 1) * q**n) / (1 - q) ** 2
    return M, m


def rhs_python(t: float, y: np.ndarray, L: float, alpha: float, wstar: float) -> np.ndarray:
    """The flow's right-hand side in plain Python (the SciPy peer)."""
    p, g, h, lw = y
    n = int(L) - 2
    gs, hs = alpha / (1 + alpha), 1 / (1 + alpha)
    M, m = _sums(p, n)
    M2, m2 = _sums(2 * p, n)
    v, vs = math.exp(2 * lw), wstar * wstar
    psi = lambda x: (1 - x * x) ** -0.5  # noqa: E731
    phi = lambda x: x * (1 - x * x) ** -1.5  # noqa: E731
    dp = g * g * m2 / M**2 - g * g * M2 * m / M**3 + gs * g * m / M**2
    dg = gs / M - g * M2 / M**2
    dh = (hs * psi(v + vs) - h * psi(2 * v)) / (L - 2)
    dlw = -2 * h * (h * phi(2 * v) - hs * phi(v + vs)) / (L - 2)
    return np.array([dp, dg, dh, dlw])


@njit(cache=True)
def _sums_nb(p, n):
    """(M(p), m(p)): M in closed form with expm1; m as a direct sum (its closed form cancels at small p, spec §8)."""
    M = float(n) if p == 0.0 else math.expm1(-p * n) / math.expm1(-p)
    q = math.exp(-p)
    term, m = q, 0.0
    for k in range(1, n):
        m += k * term
        term *= q
    return M, m


@njit(cache=True)
def rhs_numba(y, L, alpha, wstar, out):
    """The flow's right-hand side, hand-coded for numba."""
    p, g, h, lw = y[0], y[1], y[2], y[3]
    n = int(L) - 2
    gs, hs = alpha / (1 + alpha), 1 / (1 + alpha)
    M, m = _sums_nb(p, n)
    M2, m2 = _sums_nb(2 * p, n)
    v, vs = math.exp(2 * lw), wstar * wstar
    a, b = 2 * v, v + vs
    psi_a, psi_b = (1 - a * a) ** -0.5, (1 - b * b) ** -0.5
    phi_a, phi_b = a * psi_a**3, b * psi_b**3
    out[0] = g * g * m2 / (M * M) - g * g * M2 * m / (M * M * M) + gs * g * m / (M * M)
    out[1] = gs / M - g * M2 / (M * M)
    out[2] = (hs * psi_b - h * psi_a) / (L - 2)
    out[3] = -2 * h * (h * phi_a - hs * phi_b) / (L - 2)


_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_A = np.array([
    [0, 0, 0, 0, 0, 0],
    [1 / 5, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
])
_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_E = np.array([71 / 57600, 0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40])


@njit(cache=True)
def solve_reference(y0, t1, L, alpha, wstar, rtol, atol, h0):
    """Dormand–Prince 5(4) from t = 0 to ``t1``: returns (y(t1), accepted steps, rejected steps)."""
    n = y0.size
    k = np.empty((7, n))
    y = y0.copy()
    ynew = np.empty(n)
    tmp = np.empty(n)
    rhs_numba(y, L, alpha, wstar, k[0])
    t, h = 0.0, h0
    err_prev = 1e-4
    accepted = rejected = 0
    last_rejected = False
    while t < t1:
        if t + h > t1:
            h = t1 - t
        for s in range(1, 7):
            for i in range(n):
                acc = y[i]
                for j in range(s):
                    acc += h * _A[s, j] * k[j, i]
                tmp[i] = acc
            if s == 6:
                for i in range(n):
                    ynew[i] = tmp[i]
            rhs_numba(tmp, L, alpha, wstar, k[s])
        err = 0.0
        for i in range(n):
            e = 0.0
            for j in range(7):
                e += _E[j] * k[j, i]
            sc = atol + rtol * max(abs(y[i]), abs(ynew[i]))
            err += (h * e / sc) ** 2
        err = math.sqrt(err / n)
        if err <= 1.0:
            t += h
            for i in range(n):
                y[i] = ynew[i]
                k[0, i] = k[6, i]
            accepted += 1
            factor = 0.9 * err ** -(0.2 - 0.75 * 0.04) * err_prev**0.04 if err > 0 else 10.0
            factor = min(10.0, max(0.2, factor))
            if last_rejected:
                factor = min(1.0, factor)
            h *= factor
            err_prev = max(err, 1e-4)
            last_rejected = False
        else:
            rejected += 1
            h *= max(0.2, 0.9 * err**-0.2)
            last_rejected = True
    return y, accepted, rejected


@njit(cache=True, parallel=True)
def solve_reference_batch(y0s, params, t1, rtol, atol, h0):
    """``solve_reference`` at many (y0, (L, α*, w*)) points in parallel; returns the final states."""
    out = np.empty_like(y0s)
    for i in prange(y0s.shape[0]):
        y, _, _ = solve_reference(y0s[i], t1, params[i, 0], params[i, 1], params[i, 2], rtol, atol, h0)
        out[i] = y
    return out
