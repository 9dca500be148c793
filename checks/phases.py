r"""Phase detection and hitting times on logged Stage-II curves (spec §6, "Phase detection used by every figure").

Works the same on an ODE solution sampled on a time grid and on an SGD / Adam log (population
losses on a fixed evaluation set, with standard errors). Time is gradient-flow time
t = η × iteration for the optimisers (spec §8: never mix iteration counts and ODE time).

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
* Plateau: a maximal interval of at least ``min_decades`` = 0.2 decades in t on which
  |d log L_IH2 / d log t| < ``max_slope`` = 0.05. The local slope is a least-squares slope of
  log L on log t over a sliding window of ``window`` = 0.1 decade (at least 3 samples): a
  logged curve has no derivative, and the window keeps SGD noise from splitting a plateau.
* IH plateaus: the plateaus that end after T_I (the 4-gram has been learned) and start before
  T_III (or before the end of the run); plateaus at or below 1% of L_IH2(T_o) are the
  convergence floor (e.g. SGD noise), not a learning plateau.
* Emergence: from the end of the last IH plateau to T_III; its steepest point is where the
  local slope of log L_IH2 is most negative. Convergence: the tail [T_III, end of run].

With standard errors, every loss-threshold time also gets a bracket: the first crossing of
y − 2 SE (earliest the crossing can be) and of y + 2 SE (latest).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument

HITTING_TIMES = ("T_1g", "T_I", "T_o", "T_w_half", "T_2h", "T_II", "T_III")
MIN_DECADES = 0.2
MAX_SLOPE = 0.05
WINDOW = 0.1
K_SE = 2.0


@dataclass(frozen=True)
class Curve:
    """One logged run of the Stage-II model: time, partial losses (with optional SEs) and parameters.

    ``losses`` holds ``L_G4`` and ``L_IH2`` (and optionally ``L_G4_se``, ``L_IH2_se``);
    ``params`` holds ``p``, ``g``, ``h``, ``w`` (w = w_KQ; for the actual model √(w_Q w_K)).
    """

    label: str
    t: np.ndarray
    losses: Mapping[str, np.ndarray]
    params: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self):
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            msg = f"curve {self.label!r}: t must be a strictly increasing 1-D array of >= 2 times"
            raise InvalidArgument(msg)
        for name, values in {**self.losses, **self.params}.items():
            if np.shape(values) != t.shape:
                msg = f"curve {self.label!r}: {name} has shape {np.shape(values)}, t has {t.shape}"
                raise InvalidArgument(msg)
        object.__setattr__(self, "t", t)

    def se(self, name: str) -> np.ndarray | None:
        """The standard errors of loss ``name``, if logged."""
        return self.losses.get(f"{name}_se")

    def total(self) -> np.ndarray:
        """L = L_G4 + L_IH2."""
        return np.asarray(self.losses["L_G4"]) + np.asarray(self.losses["L_IH2"])


@dataclass(frozen=True)
class Hit:
    """A hitting time with its bracket from the standard errors (lo = hi = t without SEs); NaN if not reached."""

    t: float
    lo: float = math.nan
    hi: float = math.nan

    def to_dict(self) -> dict[str, float]:
        """Plain-data record for evidence."""
        return {"t": self.t, "lo": self.lo, "hi": self.hi}


@dataclass(frozen=True)
class Interval:
    """A time interval [start, end] of a curve with its geometric-mean loss level."""

    start: float
    end: float
    level: float

    @property
    def decades(self) -> float:
        """Length in decades of t."""
        return math.log10(self.end / self.start)

    def to_dict(self) -> dict[str, float]:
        """Plain-data record for evidence."""
        return {"start": self.start, "end": self.end, "decades": self.decades, "level": self.level}


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


# ----------------------------------------------------------------------------- primitives


def log_slope(t: np.ndarray, y: np.ndarray, window: float = WINDOW) -> np.ndarray:
    """d log y / d log t at each sample, least squares over ``window`` decades (>= 3 samples) around it.

    Needs t > 0 and y > 0 (a loss); the slope is base-independent.
    """
    t, y = np.asarray(t, float), np.asarray(y, float)
    if np.any(t <= 0) or np.any(y <= 0):
        msg = "log_slope needs t > 0 and y > 0 (drop t = 0 before calling)"
        raise InvalidArgument(msg)
    x, z = np.log10(t), np.log10(y)
    n = x.size
    lo = np.searchsorted(x, x - window / 2, side="left")
    hi = np.searchsorted(x, x + window / 2, side="right")
    lo = np.minimum(lo, np.maximum(np.arange(n) - 1, 0))
    hi = np.maximum(hi, np.minimum(np.arange(n) + 2, n))
    cx, cz = np.concatenate([[0], np.cumsum(x)]), np.concatenate([[0], np.cumsum(z)])
    cxx, cxz = np.concatenate([[0], np.cumsum(x * x)]), np.concatenate([[0], np.cumsum(x * z)])
    m = hi - lo
    sx, sz, sxx, sxz = cx[hi] - cx[lo], cz[hi] - cz[lo], cxx[hi] - cxx[lo], cxz[hi] - cxz[lo]
    var = sxx - sx * sx / m
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (sxz - sx * sz / m) / var
    return np.where(var > 0, slope, 0.0)


def plateaus(t: np.ndarray, y: np.ndarray, *, min_decades: float = MIN_DECADES, max_slope: float = MAX_SLOPE,
             window: float = WINDOW) -> list[Interval]:
    """Maximal intervals of >= ``min_decades`` decades with |d log y/d log t| < ``max_slope`` (t > 0 only)."""
    t, y = np.asarray(t, float), np.asarray(y, float)
    keep = t > 0
    t, y = t[keep], y[keep]
    if t.size < 3:
        return []
    flat = np.abs(log_slope(t, y, window)) < max_slope
    found = []
    edges = np.flatnonzero(np.diff(np.concatenate([[0], flat.astype(int), [0]])))
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        a, b = t[start], t[stop - 1]
        if b > a and math.log10(b / a) >= min_decades:
            found.append(Interval(float(a), float(b), float(np.exp(np.mean(np.log(y[start:stop]))))))
    return found


def first_crossing(t: np.ndarray, y: np.ndarray, level: float, direction: int, *, after: float = -math.inf) -> float:
    """First t > ``after`` where y goes above (direction +1) or to or below (-1) ``level``; NaN if never.

    The crossing is interpolated linearly between the bracketing samples; if the first sample
    after ``after`` is already past the level, that sample's time is returned.
    """
    t, y = np.asarray(t, float), np.asarray(y, float)
    idx = np.flatnonzero(t > after)
    if idx.size == 0 or not math.isfinite(level):
        return math.nan
    tt, yy = t[idx], y[idx]
    past = yy > level if direction > 0 else yy <= level
    hits = np.flatnonzero(past)
    if hits.size == 0:
        return math.nan
    k = hits[0]
    if k == 0:
        return float(tt[0])
    t0, t1, y0, y1 = tt[k - 1], tt[k], yy[k - 1], yy[k]
    return float(t0 + (level - y0) / (y1 - y0) * (t1 - t0)) if y1 != y0 else float(t1)


def value_at(t: np.ndarray, y: np.ndarray, when: float) -> float:
    """y interpolated linearly at time ``when`` (NaN outside the logged range or for NaN times)."""
    if not math.isfinite(when) or when < t[0] or when > t[-1]:
        return math.nan
    return float(np.interp(when, t, y))


def _hit(t, y, se, level, direction, after=-math.inf) -> Hit:
    central = first_crossing(t, y, level, direction, after=after)
    if se is None:
        return Hit(central, central, central)
    # earliest: the optimistic side of the band crosses first; latest: the pessimistic side
    early = first_crossing(t, y + direction * K_SE * se, level, direction, after=after)
    late = first_crossing(t, y - direction * K_SE * se, level, direction, after=after)
    return Hit(central, early, late)


# ----------------------------------------------------------------------------- hitting times and phases


def hitting_times(curve: Curve, gstar: float, hstar: float, wstar: float) -> dict[str, Hit]:
    """T_1g, T_I, T_o, T_w_half, T_2h, T_II, T_III of ``curve`` (definitions in the module docstring)."""
    t = curve.t
    g4, ih = np.asarray(curve.losses["L_G4"], float), np.asarray(curve.losses["L_IH2"], float)
    se_g4, se_ih = curve.se("L_G4"), curve.se("L_IH2")
    par = curve.params
    hits: dict[str, Hit] = {}
    nan = Hit(math.nan, math.nan, math.nan)
    hits["T_1g"] = _hit(t, par["g"], None, gstar, +1) if "g" in par else nan
    hits["T_I"] = _hit(t, g4, se_g4, 0.01 * g4[0], -1)
    hits["T_o"] = _hit(t, par["h"], None, hstar, +1) if "h" in par else nan
    hits["T_w_half"] = _hit(t, par["w"], None, wstar / 2, +1) if "w" in par else nan
    t_o = hits["T_o"].t
    ih_o = value_at(t, ih, t_o)
    hits["T_II"] = _hit(t, ih, se_ih, 0.99 * ih_o, -1, after=t_o)
    hits["T_III"] = _hit(t, ih, se_ih, 0.01 * ih_o, -1, after=t_o)
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
    """numerator[name]/denominator[name] for every hitting time both have (NaN where either is missing)."""
    out = {}
    for name in HITTING_TIMES:
        a, b = numerator.get(name, math.nan), denominator.get(name, math.nan)
        out[name] = a / b if math.isfinite(a) and math.isfinite(b) and b != 0 else math.nan
    return out
