r"""Phases of an induction-head Stage-II run (spec §6, "Phase detection used by every figure").

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), [W] Thm 4 and Fig. 1, 3, 4; specification
``induction-head.md`` §1, §6, §8. Built on the generic primitives of :mod:`checks.phases`
(plateaus by the local log-log slope, threshold hitting times with SE brackets), on a
:class:`~checks.phases.Curve` whose ``losses`` hold ``L_G4`` and ``L_IH2`` (optionally
``L_G4_se``, ``L_IH2_se``) and whose ``params`` hold ``p``, ``g``, ``h``, ``w`` (w = w_KQ; for the
actual model √(w_Q w_K)). Time is gradient-flow time t = η × iteration for the optimisers (spec §8).

Definitions (spec §1, Thm 4 and §6; "first" = infimum over the logged times, located by linear
interpolation between the two bracketing samples):

* T_1g := first t with g > g*; T_I := T_I^min := first t with L_G4 ≤ 0.01 L_G4(0) (ih.thm4.phase1);
  T_o := T_1^h := first t with h > h*; T_w_half := T^w_{1/2} := first t with w > w*/2.
* T_2h := "inf{t : dh/dt = 0}" (the tuning time of h). A logged curve is noisy, so its first
  zero of dh/dt is a noise event; here it is the time of the maximum of h on [T_o, T_III] (the
  point where h turns from rising to falling, which is the first zero of dh/dt on a noiseless
  curve that rises and then falls, as the ODE's h does).
* T_II, T_III := first t > T_o with L_IH2 ≤ 0.99, resp. 0.01, × L_IH2(T_o) (spec §8: relative
  thresholds; L_IH2(T_o) interpolated).
* Plateau: a plateau of log L_IH2 in the sense of :func:`checks.phases.plateaus` (>= 0.2 decades
  of t with |d log L_IH2 / d log t| < 0.05, the slope fitted over a sliding 0.1-decade window).
* IH plateaus: the plateaus that end after T_I (the 4-gram has been learned) and start before
  T_III (or before the end of the run); plateaus at or below 1% of L_IH2(T_o) are the
  convergence floor (e.g. SGD noise), not a learning plateau.
* Emergence: from the end of the last IH plateau to T_III; its steepest point is where the
  local slope of log L_IH2 is most negative. Convergence: the tail [T_III, end of run].

With the standard errors of an optimiser's log, T_I, T_II and T_III get the SE bracket of
:func:`checks.phases.threshold_hit`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from checks import phases as core
from checks.phases import Curve, Hit, Interval, log_slope, plateaus, threshold_hit, value_at

HITTING_TIMES = ("T_1g", "T_I", "T_o", "T_w_half", "T_2h", "T_II", "T_III")


@dataclass
class Phases:
    """The phases detected on one curve (spec §6) and the checks of their order."""

    hits: dict[str, Hit]
    plateaus: list[Interval]
    ih_plateaus: list[Interval]
    emergence: Interval | None
    steepest: float
    convergence: Interval | None
    present: dict[str, bool]
    ordered: bool
    reasons: list[str]

    @property
    def count(self) -> int:
        """The number of the four phases (I partial learning, II plateau, III emergence, IV convergence) seen."""
        return sum(self.present.values())

    def times(self) -> dict[str, float]:
        """The hitting times by name (central values)."""
        return {name: hit.t for name, hit in self.hits.items()}

    def to_dict(self) -> dict[str, Any]:
        """Plain-data record for evidence."""
        return {
            "hitting_times": {name: hit.to_dict() for name, hit in self.hits.items()},
            "plateaus": [p.to_dict() for p in self.plateaus],
            "ih_plateaus": [p.to_dict() for p in self.ih_plateaus],
            "emergence": self.emergence.to_dict() if self.emergence else None,
            "steepest_decline_t": self.steepest,
            "convergence": self.convergence.to_dict() if self.convergence else None,
            "phases_present": self.present,
            "n_phases": self.count,
            "phases_in_order": self.ordered,
            "notes": self.reasons,
        }


def hitting_times(curve: Curve, gstar: float, hstar: float, wstar: float) -> dict[str, Hit]:
    """T_1g, T_I, T_o, T_w_half, T_2h, T_II, T_III of ``curve`` (definitions in the module docstring)."""
    t = curve.t
    g4, ih = np.asarray(curve.losses["L_G4"], float), np.asarray(curve.losses["L_IH2"], float)
    se_g4, se_ih = curve.se("L_G4"), curve.se("L_IH2")
    par = curve.params
    hits: dict[str, Hit] = {}
    nan = Hit(math.nan, math.nan, math.nan)
    hits["T_1g"] = threshold_hit(t, par["g"], None, gstar, +1) if "g" in par else nan
    hits["T_I"] = threshold_hit(t, g4, se_g4, 0.01 * g4[0], -1)
    hits["T_o"] = threshold_hit(t, par["h"], None, hstar, +1) if "h" in par else nan
    hits["T_w_half"] = threshold_hit(t, par["w"], None, wstar / 2, +1) if "w" in par else nan
    t_o = hits["T_o"].t
    ih_o = value_at(t, ih, t_o)
    hits["T_II"] = threshold_hit(t, ih, se_ih, 0.99 * ih_o, -1, after=t_o)
    hits["T_III"] = threshold_hit(t, ih, se_ih, 0.01 * ih_o, -1, after=t_o)
    if "h" in par and math.isfinite(t_o):
        end = hits["T_III"].t if math.isfinite(hits["T_III"].t) else t[-1]
        window = (t >= t_o) & (t <= end)
        k = int(np.argmax(np.where(window, par["h"], -np.inf)))
        # a maximum at the last sample is no turning point: h may still be rising
        t2 = float(t[k]) if window.any() and k < np.flatnonzero(window)[-1] else math.nan
        hits["T_2h"] = Hit(t2, t2, t2)
    else:
        hits["T_2h"] = nan
    return {name: hits[name] for name in HITTING_TIMES}


def detect_phases(curve: Curve, gstar: float, hstar: float, wstar: float, *,
                  known: Mapping[str, float] | None = None, **plateau_options) -> Phases:
    """The four phases of spec §6 on ``curve``, its plateaus of L_IH2 and its hitting times.

    ``known`` replaces logged-curve hitting times by exact ones where the caller has them (an
    ODE's event times, located by root-finding on the dense output); NaN entries are ignored.
    """
    hits = hitting_times(curve, gstar, hstar, wstar)
    for name, value in (known or {}).items():
        if name in hits and value is not None and math.isfinite(value):
            hits[name] = Hit(float(value), float(value), float(value))
    t, ih = curve.t, np.asarray(curve.losses["L_IH2"], float)
    pos = (t > 0) & (ih > 0)
    tp, ihp = t[pos], ih[pos]
    found = plateaus(tp, ihp, **plateau_options)
    t_i, t_o, t_iii = hits["T_I"].t, hits["T_o"].t, hits["T_III"].t
    reasons = []
    ih_o = value_at(t, ih, t_o)
    floor = 0.01 * ih_o if math.isfinite(ih_o) else 0.01 * max((p.level for p in found), default=math.inf)
    last = t_iii if math.isfinite(t_iii) else t[-1]
    after_phase1 = [p for p in found if not math.isfinite(t_i) or p.end > t_i]
    ih_plateaus = [p for p in after_phase1 if p.start < last and p.level > floor]
    emergence, steepest = None, math.nan
    if ih_plateaus and math.isfinite(t_iii):
        start = ih_plateaus[-1].end
        inside = (tp >= start) & (tp <= t_iii)
        if inside.sum() >= 2:
            slope = log_slope(tp, ihp)
            k = np.flatnonzero(inside)[np.argmin(slope[inside])]
            steepest = float(tp[k])
            emergence = Interval(start, t_iii, float(np.exp(np.mean(np.log(ihp[inside])))))
    convergence = None
    if math.isfinite(t_iii) and (t > t_iii).sum() >= 2:
        tail = t > t_iii
        convergence = Interval(t_iii, float(t[-1]), float(np.exp(np.mean(np.log(np.maximum(ih[tail], 1e-300))))))
    present = {"I": math.isfinite(t_i), "II": bool(ih_plateaus), "III": emergence is not None,
               "IV": convergence is not None}
    if not present["I"]:
        reasons.append("L_G4 never fell to 1% of L_G4(0): no end of Phase I (T_I^min) within the run")
    if not present["II"]:
        reasons.append("no plateau of L_IH2 (>= 0.2 decades, |slope| < 0.05) after T_I^min")
    if not math.isfinite(t_iii):
        reasons.append("L_IH2 never fell to 1% of L_IH2(T_o) within the run: no emergence or convergence seen")
    elif not present["III"]:
        reasons.append("no plateau precedes T_III: the decline of L_IH2 is not an emergence after a plateau")
    if present["IV"] is False and math.isfinite(t_iii):
        reasons.append("the run ends at T_III: no convergence tail")
    ordered = all(present.values()) and (t_i <= ih_plateaus[-1].end <= steepest <= t_iii < t[-1])
    return Phases(hits, found, ih_plateaus, emergence, steepest, convergence, present, bool(ordered), reasons)


def ratios(numerator: Mapping[str, float], denominator: Mapping[str, float]) -> dict[str, float]:
    """numerator[name]/denominator[name] for every hitting time (NaN where either is missing)."""
    return core.ratios(numerator, denominator, HITTING_TIMES)
