r"""What the scalar claims share: constants, kernels of h and γ, the shift c(s), Lemma 8's roots, verdicts.

:func:`shift` is c(s) = (Φ(h*(s)) − 1)/(Mη_Y) − s with Φ(h) := e^{Mh} + (M−1)Mh (Eqn 45 inverted at h*); the
compensated kernel :func:`_shift_by_sum` gives the same c as (1/(Mη_Y)) Σ_{j<s} E_j φ(M f_j) (the package's
docstring derives both). Lemma 8's roots, ω₁, the window start t₀ and the array forms of h and γ are those of
:mod:`numerics.models.scan_snap.scalar` (``roots``, ``omega1``, ``t0``, ``_h_many``, ``_gamma_many`` here); :func:`regime` reads "≫" in Lemma 9's hypotheses as a factor :data:`FACTOR`.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from scipy import stats

from checks.status import Status, combine
from derivations.domain import Domain, Interval
from numerics.models.scan_snap import scalar as N
from numerics.models.scan_snap.scalar import gamma_many as _gamma_many
from numerics.models.scan_snap.scalar import h_many as _h_many
from numerics.models.scan_snap.scalar import lemma8_roots as roots
from numerics.models.scan_snap.scalar import omega1, t0

PAPER = "ss"
#: "≫" in a hypothesis read as "at least this factor" (regime checks only)
FACTOR = 10.0
#: relative accuracy of h (Lambert W polished by Newton) and γ in float64, the tolerance of pointwise tests
REL_TOL = 1e-12
#: the stage-2 window [t₀, STAGE2_SPAN·t₀]: the spec's 10⁴t₀ extended so that ln t spans a factor ≥ 4 and a
#: decision along t (corrections in 1/ln t) is possible (spec §8.2: "ln ln t fits need t spanning several
#: decades beyond t₀")
STAGE2_SPAN = 1e12
#: the limit of Lemma 7's c at the end of its window as η_Y → 0: ½ ln(1 + W(1))
C_LIMIT = 0.5 * math.log(1 + float(mpmath.lambertw(1)))
EPS = float(np.finfo(float).eps)


# ---------------------------------------------------------------------------------------------------------
# kernels and first-principles quantities


@N.jit
def _shift_by_sum(hstar, M, etaY):
    # c(s) = (1/(Mη)) Σ_{j<s} E_j φ(M f_j), E_j = e^{Mh*(j)}, φ(x) = e^x − 1 − x; Kahan-compensated
    out = np.empty(hstar.size)
    out[0] = 0.0
    total = 0.0
    carry = 0.0
    for j in range(hstar.size - 1):
        E = math.exp(M * hstar[j])
        x = M * etaY / ((M - 1.0) + E)
        if x < 1e-3:
            phi = x * x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x / 120.0)))
        else:
            phi = math.expm1(x) - x
        y = E * phi / (M * etaY) - carry
        new = total + y
        carry = (new - total) - y
        total = new
        out[j + 1] = total
    return out


def shift(hstar: np.ndarray, s: np.ndarray, M: float, etaY: float) -> np.ndarray:
    """c(s) = (Φ(h*(s)) − 1)/(Mη_Y) − s: the shift with h(s + c(s)) = h*(s) (Eqn 45 inverted at h*)."""
    u = M * np.asarray(hstar, dtype=float)
    return (np.expm1(u) + (M - 1) * u) / (M * etaY) - np.asarray(s, dtype=float)


def t_low(M: float, K: float, etaY: float) -> float:
    """Return the time at which h(t/K) crosses Lemma 8's lower root: K(2(M−1)u₀ − 1)/(Mη_Y)."""
    return K * (2 * (M - 1) * roots(M)[0] - 1) / (M * etaY)


def regime(M: float, etaY: float) -> dict[str, Any]:
    """Check M ≫ 100 and M^{-0.99} ≪ η_Y < 1, with their margins (≫ read as a factor FACTOR)."""
    vocab, rate = M / 100, etaY * M**0.99
    return {"M_over_100": vocab, "etaY_times_M^0.99": rate, "etaY_below_1": etaY < 1,
            "inside": bool(vocab >= FACTOR and rate >= FACTOR and etaY < 1)}


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _part(status, summary: str, **evidence) -> dict[str, Any]:
    return {"status": Status(status).value, "summary": summary, **evidence}


def _overall(parts: dict[str, dict[str, Any]], deciding: list[str]) -> tuple[Status, str]:
    """Combine the deciding parts (a conjunction); the summary lists every part, refuting parts first."""
    status = combine(parts[k]["status"] for k in deciding)
    rank = {"fails": 0, "differs": 0, "inconclusive": 1}
    order = sorted(deciding, key=lambda k: rank.get(parts[k]["status"], 2))
    text = "; ".join(f"[{k}] {parts[k]['status']}: {parts[k]['summary']}" for k in order)
    return status, text


def _domain(**ranges: Interval) -> Domain:
    return Domain({sp.Symbol(name, positive=True): interval for name, interval in ranges.items()})


_M_RANGE = Interval(math.e + 1, 1e64, True, False)  # M − 1 > e: Lemma 8's two roots exist
_ETA_RANGE = Interval(0, math.inf)
_K_RANGE = Interval(1, 1e6, False, False)
_STEPS_RANGE = Interval(10, 1e7, False, False)


def _log_slope(s: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Fit y = a + b ln s, b with its 95 % interval (first principles: b = ½ for s(h* − h)M and for c)."""
    if s.size < 3:
        return {"slope": math.nan, "low": math.nan, "high": math.nan, "intercept": math.nan,
                "points": int(s.size)}
    fit = stats.linregress(np.log(s), y)
    q = stats.t.ppf(0.975, s.size - 2)
    return {"slope": float(fit.slope), "low": float(fit.slope - q * fit.stderr),
            "high": float(fit.slope + q * fit.stderr), "intercept": float(fit.intercept),
            "points": int(s.size)}
