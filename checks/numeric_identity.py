"""The check kind "numeric identity": a printed and a derived form, as callables, compared at points.

Two forms of one quantity, p (as printed) and d (as derived), are Python callables of named
parameters, ``p(**x)`` and ``d(**x)``. They are evaluated with mpmath at ``dps`` significant digits
(default 60) at each point x_k, given or drawn from a domain, and compared by the relative difference

    r_k = |p(x_k) − d(x_k)| / max(|p(x_k)|, |d(x_k)|)        (r_k = 0 when p(x_k) = d(x_k)).

Tolerance from the precision: a point agrees when r_k <= rtol = 10^(slack − dps) (``slack`` digits,
default 10, may be lost to cancellation inside the callables) or |p − d| <= ``atol`` (default 0).
A point that fails that test is evaluated again at 2·dps: if |p − d| shrank by at least
10^(−dps/2) it was rounding (an identity whose two sides are both ~0 at the working precision)
and the point agrees; a real difference does not shrink with the precision. So a callable must
compute at the current ``mpmath.mp.dps`` for the re-evaluation to mean anything; one that rounds
to float64 inside is reported as it is, never rescued.

The record (:class:`IdentityRecord`) holds the status — ``exact-within-precision`` (every point
agrees), ``differs`` (some finite point does not: the worst is the counterexample, with both values),
or ``non-finite`` (no finite point differs, but at some point a side is NaN or ±inf or raised
ZeroDivisionError, ValueError or OverflowError: reported with the point, never taken as agreement)
— the worst point with both values, the largest r_k, and the range of the ratio p/d over the
points (a constant ratio names a missing factor, e.g. 2).

Points: ``points`` (mappings name → value) and/or ``n_points`` drawn from ``domain`` with
``random.Random(seed)``. A domain is a mapping name → ``(lo, hi)`` (open interval, uniform), an
:class:`derivations.domain.Interval` (closed ends, ``scale="log"``: log-uniform), a list or
``range`` (values cycled in order) or a number (fixed); or a :class:`derivations.domain.Domain`,
whose symbols' names are the parameter names. Real, integer, Fraction, string and SymPy-rational
values reach the callables as exact mpmath numbers at the working precision (a float is its exact
binary value); any other value (an array, a model state) is passed unchanged.
"""

from __future__ import annotations

import math
import numbers
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
from mpmath import mp

from derivations.domain import Domain, Interval
from derivations.errors import InvalidArgument

EXACT, DIFFERS, NON_FINITE = "exact-within-precision", "differs", "non-finite"
#: errors that mean "a side is not defined here" (reported), not "the callable is broken" (raised)
UNDEFINED = (ZeroDivisionError, ValueError, OverflowError)


@dataclass(frozen=True)
class IdentityRecord:
    """The outcome of :func:`compare` (module docstring); ``to_dict`` gives the JSON record."""

    status: str
    n_points: int
    dps: int
    rtol: float
    atol: float
    max_relative_difference: float
    worst: dict[str, Any] | None
    counterexample: dict[str, Any] | None
    non_finite: list[dict[str, Any]] = field(default_factory=list)
    ratio_range: tuple[float, float] | None = None
    #: points that agreed only after the re-evaluation at 2·dps (both sides rounding around 0)
    rounding_points: int = 0

    @property
    def holds(self) -> bool:
        """True when every point agrees within the precision."""
        return self.status == EXACT

    @property
    def constant_ratio(self) -> float | None:
        """p/d when it is one number at every point (within ``rtol``), else None."""
        if self.ratio_range is None:
            return None
        lo, hi = self.ratio_range
        return (lo + hi) / 2 if abs(hi - lo) <= max(self.rtol, 1e-12) * max(1.0, abs(hi)) else None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready record."""
        out = {k: v for k, v in self.__dict__.items() if v not in (None, [], ())}
        if self.constant_ratio is not None:
            out["constant_ratio"] = self.constant_ratio
        return out


def _exact(value: Any) -> Any:
    """An exact mpmath number for a real scalar at the working precision; anything else unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, mpmath.mpf):
        return +value
    if isinstance(value, numbers.Integral):
        return mp.mpf(int(value))
    if isinstance(value, Fraction):
        return mp.mpf(value.numerator) / value.denominator
    if isinstance(value, numbers.Rational):
        return mp.mpf(int(value.numerator)) / int(value.denominator)
    if isinstance(value, numbers.Real):
        return mp.mpf(float(value))
    if isinstance(value, str):
        return mp.mpf(value)
    if hasattr(value, "is_Rational") and value.is_Rational:  # a SymPy rational
        return mp.mpf(int(value.p)) / int(value.q)
    return value


def _draw(spec: Any, rng: random.Random, k: int, name: str) -> Any:
    if isinstance(spec, Interval):
        lo, hi = spec.lo, spec.hi
        if not (math.isfinite(lo) and math.isfinite(hi)):
            msg = f"domain {name}={spec} must be bounded to draw from it; give finite ends"
            raise InvalidArgument(msg)
        if spec.scale == "log":
            if lo <= 0:
                msg = f"domain {name}={spec} is log-scaled, so its lower end must be > 0"
                raise InvalidArgument(msg)
            return lo * (hi / lo) ** rng.random()
        return lo + (hi - lo) * rng.random()
    if isinstance(spec, tuple) and len(spec) == 2:
        lo, hi = float(spec[0]), float(spec[1])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            msg = f"domain {name}={spec!r} must be a finite interval (lo, hi) with lo < hi"
            raise InvalidArgument(msg)
        value = rng.uniform(lo, hi)
        return value if lo < value < hi else (lo + hi) / 2  # the open interval's ends are excluded
    if isinstance(spec, list | range):
        if len(spec) == 0:
            msg = f"domain {name}={spec!r} has no values"
            raise InvalidArgument(msg)
        return spec[k % len(spec)]
    if isinstance(spec, numbers.Real | str | Fraction):
        return spec
    msg = (f"domain {name}={spec!r} is not a range: give (lo, hi), an Interval, a list or range of "
           "values, or a number")
    raise InvalidArgument(msg)


def sample_points(domain: Mapping[str, Any] | Domain, n: int, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` points of ``domain`` (module docstring), reproducible from ``seed``."""
    rng = random.Random(seed)
    if isinstance(domain, Domain):
        return [{s.name: v for s, v in p.items()} for p in domain.sample(rng, n)]
    return [{name: _draw(spec, rng, k, name) for name, spec in domain.items()} for k in range(n)]


def _evaluate(fn: Callable[..., Any], point: Mapping[str, Any], dps: int):
    """``fn`` at ``point`` under ``dps`` digits: (mpmath number, None) or (None, why it is undefined)."""
    with mp.workdps(dps):
        try:
            value = mpmath.mpmathify(fn(**{k: _exact(v) for k, v in point.items()}))
        except UNDEFINED as error:
            return None, f"{type(error).__name__}: {error}"
        if isinstance(value, mpmath.mpc):
            if value.imag != 0:
                return None, f"complex value {mpmath.nstr(value, 8)}"
            value = value.real
        if not mpmath.isfinite(value):
            return None, str(value)
        return +value, None


def _shown(point: Mapping[str, Any]) -> dict[str, Any]:
    """A point as JSON: numbers as they were given (floats keep all digits), other objects by repr."""
    out = {}
    for name, value in point.items():
        if isinstance(value, bool | int | float | str):
            out[name] = value
        elif isinstance(value, numbers.Real):
            out[name] = str(value)
        else:
            out[name] = getattr(value, "label", None) or repr(value)[:80]
    return out


def compare(
    printed: Callable[..., Any],
    derived: Callable[..., Any],
    *,
    domain: Mapping[str, Any] | Domain | None = None,
    points: Iterable[Mapping[str, Any]] = (),
    n_points: int = 8,
    seed: int = 0,
    dps: int = 60,
    slack: int = 10,
    atol: float = 0.0,
) -> IdentityRecord:
    """Compare ``printed`` with ``derived`` at ``points`` and at ``n_points`` points of ``domain``.

    Parameters
    ----------
    printed, derived
        Callables of the same named parameters, returning real numbers (mpmath, float, int).
    domain, points, n_points, seed
        Where to compare (module docstring). ``n_points`` is ignored without a ``domain``.
    dps
        Working precision (decimal digits); ``slack`` digits of it may be lost to cancellation, so
        ``rtol = 10^(slack − dps)``.
    atol
        Absolute differences up to this count as agreement (default 0: relative only).

    Returns
    -------
    IdentityRecord
    """
    if isinstance(dps, bool) or not isinstance(dps, numbers.Integral) or dps < 15:
        msg = f"dps={dps!r} must be an integer >= 15 (decimal digits of the mpmath evaluation)"
        raise InvalidArgument(msg)
    if isinstance(slack, bool) or not isinstance(slack, numbers.Integral) or not 0 <= slack < dps:
        msg = f"slack={slack!r} must be an integer in [0, dps={dps}) (digits allowed to cancellation)"
        raise InvalidArgument(msg)
    if not (isinstance(atol, numbers.Real) and atol >= 0):
        msg = f"atol={atol!r} must be a real number >= 0"
        raise InvalidArgument(msg)
    chosen = [dict(p) for p in points]
    if domain is not None:
        chosen += sample_points(domain, n_points, seed)
    if not chosen:
        msg = "no points to compare at: give points=[...] or a domain with n_points >= 1"
        raise InvalidArgument(msg)
    rtol = mp.mpf(10) ** (slack - dps)
    worst: tuple | None = None
    counterexample = None
    non_finite, ratios = [], []
    rounding = 0
    for point in chosen:
        (a, why_a), (b, why_b) = _evaluate(printed, point, dps), _evaluate(derived, point, dps)
        if a is None or b is None:
            non_finite.append({"point": _shown(point), "printed": why_a or mpmath.nstr(a, 20),
                               "derived": why_b or mpmath.nstr(b, 20)})
            continue
        with mp.workdps(dps):
            gap = abs(a - b)
            scale = max(abs(a), abs(b))
            relative = gap / scale if gap else mp.zero
            if b != 0:
                ratios.append(float(a / b))
        agrees = gap <= atol or relative <= rtol
        if not agrees:
            (a2, _), (b2, _) = _evaluate(printed, point, 2 * dps), _evaluate(derived, point, 2 * dps)
            if a2 is not None and b2 is not None:
                with mp.workdps(2 * dps):
                    shrank = abs(a2 - b2) <= gap * mp.mpf(10) ** (-(dps // 2))
                if shrank:
                    agrees, rounding, relative = True, rounding + 1, mp.zero
        record = {"point": _shown(point), "printed": mpmath.nstr(a, 20), "derived": mpmath.nstr(b, 20),
                  "relative_difference": float(relative)}
        if b != 0:
            record["ratio"] = mpmath.nstr(a / b, 15)
        if worst is None or relative > worst[0]:
            worst = (relative, record)
        if not agrees and (counterexample is None or relative > counterexample["relative_difference"]):
            counterexample = record
    status = DIFFERS if counterexample else (NON_FINITE if non_finite else EXACT)
    return IdentityRecord(
        status=status, n_points=len(chosen), dps=int(dps), rtol=float(rtol), atol=float(atol),
        max_relative_difference=float(worst[0]) if worst else math.nan,
        worst=worst[1] if worst else None, counterexample=counterexample, non_finite=non_finite,
        ratio_range=(min(ratios), max(ratios)) if ratios else None, rounding_points=rounding,
    )


@dataclass(frozen=True)
class Display:
    """One printed display of a numeric-identity item: ``printed(**point)`` against ``derived(**point)``.

    ``family`` names the family of structured points it is compared at (an item draws each family once);
    ``reading`` the option values it is encoded under (empty: every reading); only displays of the canonical
    reading decide.
    """

    name: str
    label: str
    printed: Callable[..., Any]
    derived: Callable[..., Any]
    family: str
    reading: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    atol: float = 0.0


class DisplayItems:
    """What the display kinds share (:class:`IdentityItemCheck` here, ``checks.array_identity.ArrayIdentityCheck``):
    the deciding reading (canonical, or pinned with ``--param``), the loop over the displays and the outcome.
    A subclass provides ``displays``, ``families``, ``default_readings``, ``extra``, ``notes`` and the two
    methods ``_compare(display, cases) -> record`` (a dict whose ``status`` is ``differs``, ``non-finite`` or
    an agreement) and ``_head(evidence, n_canonical, differing, cases) -> str``.
    """

    def canonical(self, reading: Mapping[str, str]) -> bool:
        """True when every flag of ``reading`` takes its deciding value: canonical, or pinned with ``--param``."""
        from checks.configurations import in_reading

        return in_reading(reading, getattr(self, "_deciding", None) or self.default_readings)

    def __call__(self, ctx):
        from checks.configurations import deciding_readings

        self._deciding = deciding_readings(self.default_readings, ctx)
        displays = self.displays()
        cases = self.families(ctx)
        evidence: dict[str, Any] = {"formulas": {}, "families": {k: len(v) for k, v in cases.items()}}
        if self._deciding != dict(self.default_readings):
            evidence["deciding_reading"] = {k: v for k, v in self._deciding.items() if k in ctx.pinned}
        differing, alternative, undefined, n_canonical = [], [], [], 0
        for display in displays:
            record = {"label": display.label, "description": display.description, "family": display.family,
                      **self._compare(display, cases[display.family])}
            if display.reading:
                record["reading"] = dict(display.reading)
            evidence["formulas"][display.name] = record
            canonical = self.canonical(display.reading)
            n_canonical += canonical
            if record["status"] == DIFFERS:
                (differing if canonical else alternative).append(display.name)
            elif record["status"] == NON_FINITE and canonical:
                undefined.append(display.name)
        head = pinned_head(self._head(evidence, n_canonical, differing, cases), evidence)
        extra = self.extra(ctx, displays) if self.extra is not None else {}
        largest = max(((evidence["formulas"][n].get("worst") or {}).get("relative", 0.0) for n in differing),
                      default=0.0)
        worst = f" (relative up to {largest:.2g})" if differing and largest else ""
        return display_outcome(head, evidence, differing, alternative, undefined, extra, self.notes, worst=worst)


@dataclass
class IdentityItemCheck(DisplayItems):
    """The check kind of an item whose displays are identities between array formulas at structured points.

    ``displays()`` builds the displays; ``families(ctx)`` returns, per family name, the points (mappings
    name → value: matrices, indices, scalars) drawn for the context's budget and seed, pins honoured by the
    caller. Each display is compared by :func:`compare` at every point of its family at ``dps`` digits.
    The item ``differs`` when a canonical display differs, is ``inconclusive`` when a canonical display is
    non-finite somewhere (reported, never agreement) or ``extra`` (a second method) disagrees, and
    ``holds`` otherwise; displays under other readings are reported beside the verdict.
    """

    displays: Callable[[], list[Display]]
    families: Callable[[Any], Mapping[str, list[Mapping[str, Any]]]]
    default_readings: Mapping[str, str] = field(default_factory=dict)
    extra: Callable[[Any, Any], dict[str, Any]] | None = None
    #: digits of the comparison and those that may be lost (rtol = 10^(slack − dps)); float64 callables
    #: compared at R8's 1e-12 use dps=15, slack=3
    dps: int = 60
    slack: int = 10
    #: what the item could not encode as printed (a shape-inconsistent print, an undefined symbol), reported
    notes: tuple[str, ...] = ()

    def _compare(self, display: Display, points: list) -> dict[str, Any]:
        return compare(display.printed, display.derived, points=points, dps=self.dps, slack=self.slack,
                       atol=display.atol).to_dict()

    def _head(self, evidence, n_canonical: int, differing: list[str], points) -> str:
        n_points = sum(len(v) for v in points.values())
        precision = f"{self.dps} digits" if self.dps > 15 else f"float64, relative 1e-{self.dps - self.slack}"
        return (f"{n_canonical - len(differing)}/{n_canonical} displays equal their derivation (canonical "
                f"reading) at {n_points} structured points, {precision}")


def display_outcome(head: str, evidence: dict[str, Any], differing: list[str], alternative: list[str],
                    undefined: list[str], extra: dict[str, Any], notes: tuple[str, ...] = (), worst: str = ""):
    """The verdict of an item of displays (shared by the numeric- and array-identity kinds).

    ``differs`` when a canonical display differs; ``inconclusive`` when one is not finite somewhere or the
    second method (``extra``: evidence, a ``summary`` and the parts that ``disagrees``) disagrees with the
    derivation; ``holds`` otherwise. The other readings' differences are listed beside the verdict.
    """
    from checks.claim import Outcome
    from checks.status import Status

    extra = dict(extra)
    extra_summary = extra.pop("summary", "")
    disagrees = list(extra.pop("disagrees", []))
    evidence.update(extra)
    parts = [head]
    if differing:
        parts.append("differs: " + ", ".join(differing[:4]) + (" …" if len(differing) > 4 else "") + worst)
    if alternative:
        parts.append("under other readings also differ: " + ", ".join(alternative[:4])
                     + (" …" if len(alternative) > 4 else ""))
        evidence["differs_under_other_readings"] = alternative
    if undefined:
        parts.append("not finite at some point: " + ", ".join(undefined))
    if disagrees:
        parts.append("a second method disagrees with the derivation: " + ", ".join(disagrees))
    if extra_summary:
        parts.append(extra_summary)
    if notes:
        evidence["notes"] = list(notes)
        parts.append("notes: " + "; ".join(notes))
    if undefined or disagrees:
        status = Status.INCONCLUSIVE
    else:
        status = Status.DIFFERS if differing else Status.HOLDS
    return Outcome(status, "; ".join(parts), evidence=evidence)


def pinned_head(text: str, evidence: Mapping[str, Any]) -> str:
    """``text`` with "(canonical reading)" naming the pinned reading instead, when one was pinned."""
    pinned = evidence.get("deciding_reading")
    if not pinned:
        return text
    return text.replace("(canonical reading)", "(pinned reading " + ", ".join(f"{k}={v}" for k, v in pinned.items())
                        + ")")
