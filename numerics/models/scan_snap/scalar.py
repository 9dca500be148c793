r"""The scalar functions of App. B.3 and Theorem 4 in float64 (numba).

* ``h_of_tau(tau, M)``: h with τ = η_Y s, the solution of dh/ds = η_Y/((M−1) + e^{Mh}), h(0) = 0, i.e. the
  root u = Mh of e^u + (M−1)u = Mτ + 1 (Eqn 45). Started from the Lambert-W form
  u = ln(M−1) + ln W₀(e^{C−ln(M−1)}), C = (Mτ+1)/(M−1) (no cancellation of C − W at large C), then
  polished by Newton steps on expm1(u) + (M−1)u − Mτ (no cancellation at small τ), or on
  u − ln(Mτ + 1 − (M−1)u) when e^u would overflow. Units: τ in (learning rate × visits), h dimensionless.
* ``gamma_of_t``: γ(t) = (M−1)²h̄/((M−1) + e^{Mh̄}), h̄ = h(η_Y t/K) or h(η_Y⌈t/K⌉), in the overflow-safe form
  (M−1)²h̄e^{−Mh̄}/((M−1)e^{−Mh̄} + 1).
* ``h_star``: the recursion of Eqn 33 with Kahan-compensated accumulation.
* ``row_recursion``: w ← w + η_Y(e_n − softmax(w)) from w = 0 (Lemma 5), entries n and j ≠ n.
* ``surrogate_field``: Theorem 4's state (z, B, Γ) with ż = −cη_Zγe^{4z}, Ḃ = η_Zcγe^{4z}, Γ̇ = η_Zγ.
* ``lemma8_roots``, ``omega1``, ``t0``: the roots u₀ < u₁ of e^u = (M−1)u (Lemma 8, 50-digit Lambert W), ω₁ and the
  transition time t₀ under either reading; ``h_many``, ``gamma_many``: h and γ over arrays.
"""

from __future__ import annotations

import math
from functools import cache

import mpmath

import numpy as np

from numerics._jit import jit
from numerics.ode import VectorField
from numerics.special import lambertw0_exp


@jit
def h_of_tau(tau, M):
    """h(τ) of Lemma 6 (τ = η_Y s >= 0, M > 1); NaN for τ < 0 or M <= 1."""
    if not (tau >= 0.0) or not (M > 1.0):
        return math.nan
    target = M * tau
    C = (target + 1.0) / (M - 1.0)
    w = lambertw0_exp(C - math.log(M - 1.0))
    u = math.log(M - 1.0) + math.log(w) if C > 1.0 else C - w
    if u < 0.0:
        u = 0.0
    for _ in range(6):
        if u < 700.0:
            f = math.expm1(u) + (M - 1.0) * u - target
            d = math.exp(u) + (M - 1.0)
        else:
            rest = target + 1.0 - (M - 1.0) * u
            if rest <= 0.0:
                break
            f = u - math.log(rest)
            d = 1.0 + (M - 1.0) / rest
        step = f / d
        u -= step
        if abs(step) <= 1e-17 * abs(u):
            break
    return u / M


def h_of_log_tau(log_tau, M):
    """h(τ) of Lemma 6 from ln τ, for τ beyond the float range: for ln τ <= 50, :func:`h_of_tau`; above, the
    root u = Mh of e^u − 1 + (M−1)u = Mτ is u = ln(Mτ + 1 − (M−1)u) = ln M + ln τ up to a relative
    (M−1)/(Mτ) < e^{−50} ≈ 2e−22, below rounding."""
    if log_tau <= 50.0:
        return h_of_tau(math.exp(log_tau), M)
    return (math.log(M) + log_tau) / M


@jit
def gamma_of_h(h, M):
    """γ at h, overflow-safe: (M−1)²h e^{−Mh}/((M−1)e^{−Mh} + 1)."""
    decay = math.exp(-M * h)
    return (M - 1.0) ** 2 * h * decay / ((M - 1.0) * decay + 1.0)


@jit
def gamma_of_t(t, M, K, etaY, ceil_argument):
    """γ(t) with h(t/K) (``ceil_argument`` False, L579) or h(⌈t/K⌉) (True, Eqn 85); t in SGD steps."""
    visits = math.ceil(t / K) if ceil_argument else t / K
    return gamma_of_h(h_of_tau(etaY * visits, M), M)


@jit
def h_star(steps, M, etaY):
    """h*(0..steps) of Eqn 33, h*(s) = h*(s−1) + η_Y/((M−1) + e^{Mh*(s−1)}), summed with Kahan compensation."""
    out = np.empty(steps + 1)
    total = 0.0
    carry = 0.0
    out[0] = 0.0
    for s in range(1, steps + 1):
        increment = etaY / ((M - 1.0) + math.exp(M * total))
        y = increment - carry
        new = total + y
        carry = (new - total) - y
        total = new
        out[s] = total
    return out


@jit
def row_recursion(steps, M, etaY):
    """Entries (n, j ≠ n) of w(0..steps) under w ← w + η_Y(e_n − softmax(w)) from w = 0, M entries.

    By the symmetry of the recursion the M − 1 entries j ≠ n stay equal, so two numbers carry the state;
    the softmax is evaluated with that multiplicity and shifted by the largest entry.
    """
    out = np.empty((steps + 1, 2))
    wn = 0.0
    wj = 0.0
    out[0, 0] = 0.0
    out[0, 1] = 0.0
    for s in range(1, steps + 1):
        top = max(wn, wj)
        en = math.exp(wn - top)
        ej = math.exp(wj - top)
        total = en + (M - 1.0) * ej
        an = en / total
        aj = ej / total
        wn = wn + etaY * (1.0 - an)
        wj = wj + etaY * (0.0 - aj)
        out[s, 0] = wn
        out[s, 1] = wj
    return out


@jit
def _surrogate_rhs(t, y, p, out):
    # p = (M, K, etaY, etaZ, c, gamma_form, ceil_argument); gamma_form 0: Lemma 6, 1: constant p[7], 2: 1/(1+t)
    M, K, etaY, etaZ, c = p[0], p[1], p[2], p[3], p[4]
    form = p[5]
    if form == 0.0:
        g = gamma_of_t(t, M, K, etaY, p[6] != 0.0)
    elif form == 1.0:
        g = p[7]
    else:
        g = 1.0 / (1.0 + t)
    grow = math.exp(4.0 * y[0])
    out[0] = -c * etaZ * g * grow
    out[1] = etaZ * c * g * grow
    out[2] = etaZ * g


SURROGATE = VectorField(_surrogate_rhs, 3, state_names=("z", "B", "Gamma"))
#: the forms of γ the surrogate integrates with: Lemma 6, a constant, 1/(1 + t)
GAMMA_FORMS = {"lemma6": 0.0, "constant": 1.0, "inverse": 2.0}


def surrogate_params(M, K, etaY, etaZ, c, gamma_form="lemma6", ceil_argument=False, constant=1.0) -> np.ndarray:
    """The parameter vector of :data:`SURROGATE` (``c`` = Kρ₀^{−4} as printed)."""
    return np.array([M, K, etaY, etaZ, c, GAMMA_FORMS[gamma_form], float(ceil_argument), constant])


@jit
def _eq44_rhs(s, y, p, out):
    out[0] = p[1] / ((p[0] - 1.0) + math.exp(p[0] * y[0]))


#: Eqn 44, dh/ds = η_Y/((M−1) + e^{Mh}); params (M, η_Y)
EQ44 = VectorField(_eq44_rhs, 1, state_names=("h",))


@jit
def h_many(taus, M):
    """h(τ) at every τ of a 1-D float64 array (:func:`h_of_tau`)."""
    out = np.empty(taus.size)
    for i in range(taus.size):
        out[i] = h_of_tau(taus[i], M)
    return out


@jit
def gamma_many(ts, M, K, etaY, ceil_argument):
    """γ(t) at every t of a 1-D float64 array (:func:`gamma_of_t`)."""
    out = np.empty(ts.size)
    for i in range(ts.size):
        out[i] = gamma_of_t(ts[i], M, K, etaY, ceil_argument)
    return out


@cache
def lemma8_roots(M: float) -> tuple[float, float]:
    """(u₀, u₁): the roots of e^u = (M−1)u, −W₀(−1/(M−1)) and −W₋₁(−1/(M−1)), computed at 50 digits, then rounded."""
    with mpmath.workdps(50):
        x = -1 / (mpmath.mpf(M) - 1)
        return float(-mpmath.lambertw(x)), float(-mpmath.lambertw(x, -1))


def omega1(M: float) -> float:
    """ω₁ = u₁/ln M − 1 (Lemma 8: the upper root is h = (1 + ω₁)ln M/M)."""
    return lemma8_roots(M)[1] / math.log(M) - 1


def t0(M: float, K: float, etaY: float, reading: str) -> float:
    """t₀ = 2(1 + ω₁)K ln M/η_Y (``omega1``, L999) or 2K ln M/η_Y (``asymptotic``, L214), in SGD steps."""
    return 2 * (1 + (omega1(M) if reading == "omega1" else 0.0)) * K * math.log(M) / etaY
