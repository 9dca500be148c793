r"""Θ / O / Ω statements as scaling experiments (spec §0.2 item 4).

A statement "T = Θ(g)" hides its constants, so it is tested on a sweep: the ratio
:math:`r = T/g` is computed at every grid point and regressed on the logarithms of the swept
quantities (the *regressors*, e.g. ``L``, ``1+alpha``, ``log(1/sigma)``, ``wstar``):

.. math:: \log r = c + \sum_j b_j \log x_j + \varepsilon .

:math:`b_j` is the drift of the ratio along regressor :math:`j` (its exponent left over after
dividing by the printed rate), with a ``level`` confidence interval from the residual variance
(Student t). With a drift tolerance :math:`\tau` (default 0.15, i.e. the printed exponent may be
off by less than 0.15), the sweep

=========  ===========================================  ==================================
form       holds when, for every swept regressor         fails when, for some regressor
=========  ===========================================  ==================================
Θ(g)       the interval of b_j lies inside (−τ, τ)       the interval lies beyond ±τ
O(g)       the upper end of the interval is ≤ τ          the lower end is > τ (r grows)
Ω(g)       the lower end of the interval is ≥ −τ          the upper end is < −τ (r shrinks)
=========  ===========================================  ==================================

and is ``inconclusive`` otherwise (too few points or too much scatter to tell). A drift also has
to matter on the sweep: a regressor fails only when the fitted change of the ratio across its
swept range exceeds ``min_change`` (default a factor 1.5); a slope just beyond τ on a narrow axis
(w* spans less than a decade) is ``inconclusive``, not ``fails``. Θ and Ω also
fail when a ratio is ≤ 0 (wrong sign). Points where the observable was not reached (NaN) are
left out and counted; the caller decides whether an empty window is ``outside-regime``.

The same regression on :math:`\log T` itself (``exponents``) fits the exponents the claim
names (e.g. T_II ∝ L^{b_L} (1+α*)^{b_α} log(1/σ)^{b_σ} w*^{b_w}).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument

FORMS = ("Theta", "O", "Omega")


@dataclass(frozen=True)
class Slope:
    """A fitted log-log slope with its confidence interval (``low``, ``high``)."""

    estimate: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        """JSON form."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def loglog_fit(values: Sequence[float], regressors: Mapping[str, Sequence[float]], *,
               level: float = 0.95) -> tuple[dict[str, Slope], float, int]:
    """Least-squares fit of log ``values`` on the logs of the regressors that vary.

    Returns (slopes by regressor name, the fitted constant e^c, degrees of freedom). Regressors
    with a single distinct value are not fitted (they are absent from the result). With zero
    degrees of freedom the fit is exact and the intervals are infinite.
    """
    y = np.asarray(values, dtype=float)
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise InvalidArgument(f"values must be finite and > 0 for a log-log fit; got {y[~(np.isfinite(y) & (y > 0))][:3]}")
    columns, names = [np.ones_like(y)], []
    for name, xs in regressors.items():
        x = np.asarray(xs, dtype=float)
        if x.shape != y.shape:
            raise InvalidArgument(f"regressor {name!r} has {x.size} values but there are {y.size} observations")
        if np.any(x <= 0) or np.any(~np.isfinite(x)):
            raise InvalidArgument(f"regressor {name!r} must be finite and > 0 (it enters as a logarithm)")
        if np.unique(x).size > 1:
            columns.append(np.log(x))
            names.append(name)
    design = np.column_stack(columns)
    dof = y.size - design.shape[1]
    if dof < 0:
        raise InvalidArgument(f"{y.size} points cannot fit {design.shape[1]} coefficients ({', '.join(names)} and a constant)")
    coef, *_ = np.linalg.lstsq(design, np.log(y), rcond=None)
    if dof == 0:
        half = np.full(coef.size, math.inf)
    else:
        from scipy.stats import t as student

        residual = np.log(y) - design @ coef
        variance = float(residual @ residual) / dof
        cov = variance * np.linalg.pinv(design.T @ design)
        half = student.ppf(0.5 + level / 2, dof) * np.sqrt(np.clip(np.diag(cov), 0.0, None))
    slopes = {name: Slope(float(coef[i + 1]), float(coef[i + 1] - half[i + 1]), float(coef[i + 1] + half[i + 1]))
              for i, name in enumerate(names)}
    return slopes, float(math.exp(coef[0])), dof


@dataclass
class ScalingFit:
    """The outcome of a scaling experiment: ratios, their band, drifts, exponents and the decision."""

    form: str
    rate: str
    ratios: np.ndarray
    slopes: dict[str, Slope]
    exponents: dict[str, Slope]
    trend: dict[str, float]
    tolerance: float
    status: str
    reason: str
    excluded: int
    points: list[dict[str, Any]] = field(default_factory=list)
    min_change: float = 1.5

    @property
    def band(self) -> tuple[float, float]:
        """(min, max) of the ratio over the sweep; NaN when the observable was reached at no point."""
        if self.ratios.size == 0:
            return math.nan, math.nan
        return float(np.min(self.ratios)), float(np.max(self.ratios))

    def summary(self) -> str:
        """One line: the band of the ratio and the largest drift."""
        lo, hi = self.band
        drift = ", ".join(f"{n} slope {s.estimate:+.3f} [{s.low:+.3f}, {s.high:+.3f}]" for n, s in self.slopes.items())
        return f"T/{self.rate} in [{lo:.3g}, {hi:.3g}] over {self.ratios.size} points; {drift or 'nothing swept'}"

    def evidence(self) -> dict[str, Any]:
        """The JSON evidence of the fit."""
        lo, hi = self.band
        return {
            "form": self.form, "rate": self.rate, "ratio_min": lo, "ratio_max": hi,
            "drift_tolerance": self.tolerance, "min_change": self.min_change,
            "drift_slopes": {n: s.to_dict() for n, s in self.slopes.items()},
            "fitted_exponents": {n: s.to_dict() for n, s in self.exponents.items()},
            "trend_ratio_largest_over_smallest": self.trend, "decision": self.status, "reason": self.reason,
            "excluded_points": self.excluded, "points": self.points,
        }


def scaling_fit(observed: Sequence[float], rate: Sequence[float], regressors: Mapping[str, Sequence[float]], *,
                form: str = "Theta", rate_name: str = "g", tolerance: float = 0.15, level: float = 0.95,
                labels: Sequence[Mapping[str, Any]] | None = None, min_change: float = 1.5) -> ScalingFit:
    """Decide "observed = ``form``(rate)" on a sweep (module docstring for the rule).

    ``observed`` and ``rate`` hold one value per grid point; ``regressors`` the swept quantities
    (positive; they enter as logarithms); ``labels`` optional per-point parameters kept in the
    evidence. NaN observations (never reached) are excluded and counted.
    """
    if form not in FORMS:
        raise InvalidArgument(f"form={form!r} is not one of {', '.join(FORMS)}")
    if not 0 < tolerance < 1:
        raise InvalidArgument(f"tolerance={tolerance} must lie in (0, 1) (a drift in log-log slope)")
    obs, den = np.asarray(observed, dtype=float), np.asarray(rate, dtype=float)
    if obs.shape != den.shape:
        raise InvalidArgument(f"observed has {obs.size} values but rate has {den.size}")
    if np.any(~np.isfinite(den)) or np.any(den <= 0):
        raise InvalidArgument("rate must be finite and > 0 at every point (it normalises the observable)")
    keep = np.isfinite(obs)
    excluded = int((~keep).sum())
    ratios = obs[keep] / den[keep]
    kept_regs = {n: np.asarray(x, dtype=float)[keep] for n, x in regressors.items()}
    points = [dict(labels[i]) | {"observed": float(obs[i]), "ratio": float(obs[i] / den[i])}
              for i in range(obs.size)] if labels is not None else []

    def result(status: str, reason: str, slopes=None, exponents=None, trend=None) -> ScalingFit:
        return ScalingFit(form, rate_name, ratios, slopes or {}, exponents or {}, trend or {}, tolerance, status,
                          reason, excluded, points, min_change)

    if ratios.size == 0:
        return result("inconclusive", "the observable was reached at no grid point")
    if form != "O" and np.any(ratios <= 0):
        return result("fails", f"the ratio is ≤ 0 at {int((ratios <= 0).sum())} points (wrong sign for {form})")
    if np.any(ratios <= 0):
        return result("holds" if np.all(ratios <= 0) else "inconclusive", "non-positive observable bounded above")
    slopes, _, dof = loglog_fit(ratios, kept_regs, level=level)
    exponents = loglog_fit(obs[keep], kept_regs, level=level)[0] if np.all(obs[keep] > 0) else {}
    trend = {}
    for name, x in kept_regs.items():
        if np.unique(x).size > 1:
            at_max, at_min = ratios[x == x.max()], ratios[x == x.min()]
            trend[name] = float(np.exp(np.mean(np.log(at_max)) - np.mean(np.log(at_min))))
    if not slopes:
        return result("inconclusive", "no regressor varies: a single configuration cannot test a scaling law",
                      slopes, exponents, trend)
    tau = tolerance
    if min_change < 1:
        raise InvalidArgument(f"min_change={min_change} must be >= 1 (a factor of change of the ratio)")
    span = {n: float(np.log(kept_regs[n].max() / kept_regs[n].min())) for n in slopes}

    def matters(name: str) -> bool:
        return abs(slopes[name].estimate) * span[name] > math.log(min_change)

    if form == "Theta":
        bad = [n for n, s in slopes.items() if (s.low > tau or s.high < -tau) and matters(n)]
        good = all(-tau < s.low and s.high < tau for s in slopes.values())
    elif form == "O":
        bad = [n for n, s in slopes.items() if s.low > tau and matters(n)]
        good = all(s.high <= tau for s in slopes.values())
    else:
        bad = [n for n, s in slopes.items() if s.high < -tau and matters(n)]
        good = all(s.low >= -tau for s in slopes.values())
    if bad:
        return result("fails", f"the ratio drifts along {', '.join(bad)} beyond ±{tau} in log-log slope",
                      slopes, exponents, trend)
    if good:
        return result("holds", f"every drift slope is within ±{tau} at {level:.0%} confidence ({dof} dof)",
                      slopes, exponents, trend)
    return result("inconclusive", f"drift slopes cannot be separated from ±{tau} with {dof} degrees of freedom, "
                  f"or a drift beyond ±{tau} changes the ratio by less than {min_change}× over the sweep",
                  slopes, exponents, trend)
