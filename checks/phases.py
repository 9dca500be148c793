r"""Phases of a logged loss curve: plateaus by the local log-log slope, hitting times of thresholds with SEs.

Works the same on an ODE solution sampled on a time grid and on an optimiser's log (population
losses on a fixed evaluation set, with standard errors). Time is whatever the caller logs; for
optimisers it is gradient-flow time t = η × iteration, never an iteration count, so that runs and
flows share one axis. A paper's own phase definitions (which losses, which thresholds, which
order of events) are built from these primitives in its checks package.

Definitions ("first" = infimum over the logged times, located by linear interpolation between the
two bracketing samples):

* Hitting time of a threshold: the first t (after an optional start) at which a curve goes above,
  resp. to or below, a level (:func:`first_crossing`, :func:`threshold_hit`).
* Plateau: a maximal interval of at least ``min_decades`` = 0.2 decades in t on which
  |d log y / d log t| < ``max_slope`` = 0.05. The local slope is a least-squares slope of
  log y on log t over a sliding window of ``window`` = 0.1 decade (at least 3 samples): a
  logged curve has no derivative, and the window keeps SGD noise from splitting a plateau.

With standard errors, every loss-threshold time also gets a bracket: the first crossing of
y − 2 SE (earliest the crossing can be) and of y + 2 SE (latest).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from derivations.errors import InvalidArgument

MIN_DECADES = 0.2
MAX_SLOPE = 0.05
WINDOW = 0.1
K_SE = 2.0


@dataclass(frozen=True)
class Curve:
    """One logged run: strictly increasing times, named losses (with optional SEs) and named parameters.

    ``losses`` maps a loss name to its values and, optionally, ``<name>_se`` to their standard
    errors; ``params`` maps a parameter name to its values. Every array has the shape of ``t``.
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

    def total(self, *names: str) -> np.ndarray:
        """The sum of the losses ``names``; without names, of every logged loss (not their SEs)."""
        names = names or tuple(k for k in self.losses if not k.endswith("_se"))
        if not names:
            msg = f"curve {self.label!r} logs no loss to sum"
            raise InvalidArgument(msg)
        unknown = [k for k in names if k not in self.losses]
        if unknown:
            msg = f"curve {self.label!r} has no loss {unknown[0]!r}; it logs {sorted(self.losses)}"
            raise InvalidArgument(msg)
        total = np.asarray(self.losses[names[0]])
        for name in names[1:]:
            total = total + np.asarray(self.losses[name])
        return total


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


def threshold_hit(t: np.ndarray, y: np.ndarray, se: np.ndarray | None, level: float, direction: int,
                  after: float = -math.inf) -> Hit:
    """The first crossing of ``level`` by y (see :func:`first_crossing`) with its bracket from the SEs.

    The bracket is the first crossing of y ± ``K_SE`` SE: the optimistic side of the band crosses
    first, the pessimistic side last. Without SEs the bracket is the crossing itself.
    """
    central = first_crossing(t, y, level, direction, after=after)
    if se is None:
        return Hit(central, central, central)
    # earliest: the optimistic side of the band crosses first; latest: the pessimistic side
    early = first_crossing(t, y + direction * K_SE * se, level, direction, after=after)
    late = first_crossing(t, y - direction * K_SE * se, level, direction, after=after)
    return Hit(central, early, late)


def ratios(numerator: Mapping[str, float], denominator: Mapping[str, float],
           names: Iterable[str] | None = None) -> dict[str, float]:
    """numerator[name]/denominator[name] for each of ``names`` (NaN where either is missing or not finite).

    Without ``names``, the names of ``numerator`` then those only in ``denominator``.
    """
    if names is None:
        names = [*numerator, *(k for k in denominator if k not in numerator)]
    out = {}
    for name in names:
        a, b = numerator.get(name, math.nan), denominator.get(name, math.nan)
        out[name] = a / b if math.isfinite(a) and math.isfinite(b) and b != 0 else math.nan
    return out
