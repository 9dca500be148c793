"""Parameter domains: symbol ranges, integer choices and constraints such as ``2*w**2 < 1``.

A :class:`Domain` validates user input (with a message that names the parameter, the
violated constraint and the valid range) and samples random points for numeric checks.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import sympy as sp

from derivations.errors import InvalidArgument, unknown_name


@dataclass(frozen=True)
class Interval:
    """A real range ``lo < x < hi`` (closed ends where ``lo_open``/``hi_open`` are False)."""

    lo: float
    hi: float
    lo_open: bool = True
    hi_open: bool = True
    #: "log" samples log-uniformly over (max(lo, 1e-3 * hi), hi): errors that vanish like
    #: e^{-pL} at large p are then probed where they are visible.
    scale: str = "linear"

    def contains(self, value: float) -> bool:
        """Return whether ``value`` lies in the interval."""
        above = value > self.lo if self.lo_open else value >= self.lo
        below = value < self.hi if self.hi_open else value <= self.hi
        return above and below

    def as_sympy(self) -> sp.Interval:
        """Return the SymPy interval."""
        return sp.Interval(self.lo, self.hi, self.lo_open, self.hi_open)

    def __str__(self) -> str:
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open else "]"
        return f"{left}{float(self.lo):g}, {float(self.hi):g}{right}"  # SymPy numbers do not format with :g


@dataclass(frozen=True)
class Constraint:
    """A relation between symbols that a point must satisfy, with the reason it is needed."""

    relation: sp.Basic
    reason: str = ""

    def holds(self, point: Mapping[sp.Symbol, object]) -> bool:
        """Evaluate the relation at ``point`` in double precision (a domain test, not a decision)."""
        symbols, function = _compiled(self.relation)
        try:
            return bool(function(*[float(point[s]) for s in symbols]))
        except (ValueError, ZeroDivisionError, OverflowError):
            return False

    def __str__(self) -> str:
        return sp.sstr(self.relation)


@dataclass(frozen=True)
class Domain:
    """Where a formula or claim is stated: ranges, integer choices and constraints.

    Parameters
    ----------
    intervals
        Real range of each continuous symbol.
    integers
        For each integer symbol, the values it is sampled from (the spec's sampled L) and
        its smallest allowed value.
    constraints
        Further relations (``2*wstar**2 < 1``) with the reason each is needed.
    """

    intervals: Mapping[sp.Symbol, Interval] = field(default_factory=dict)
    integers: Mapping[sp.Symbol, tuple[int, Sequence[int]]] = field(default_factory=dict)
    constraints: Sequence[Constraint] = ()

    @classmethod
    def from_mapping(
        cls, ranges: Mapping[sp.Symbol, object], constraints: Iterable[Constraint | sp.Basic] = ()
    ) -> Domain:
        """Build a domain from ``{symbol: range}``, the short form users write in tests.

        Parameters
        ----------
        ranges
            Keyed by the SymPy symbols of the expressions. A value is ``(lo, hi)``: the open interval
            lo < x < hi (ends may be ``±math.inf``), an :class:`Interval` (closed or log-scaled ends),
            or, for an integer, ``range(lo, stop)``: lo <= L < stop (step 1).
        constraints
            Further relations (``2*w**2 < 1``) or :class:`Constraint` objects.

        Raises
        ------
        InvalidArgument
            For a key that is not a Symbol, or a range that is empty or not of these forms.
        """
        if isinstance(ranges, Domain):
            return ranges
        intervals: dict[sp.Symbol, Interval] = {}
        integers: dict[sp.Symbol, tuple[int, tuple[int, ...]]] = {}
        extra: list[Constraint] = []
        for sym, value in dict(ranges).items():
            if not isinstance(sym, sp.Symbol):
                msg = (f"domain key {sym!r} must be a SymPy Symbol, the one in your expressions (a name "
                       "would lose its assumptions), e.g. "
                       f"{{sympy.Symbol({str(sym)!r}, positive=True): (0, 1)}}")
                raise InvalidArgument(msg)
            if isinstance(value, range):
                integers[sym], upper = _integer_range(sym, value)
                extra.append(Constraint(sym <= upper, f"{sym.name} in {value}"))
            elif isinstance(value, Interval):
                intervals[sym] = value
            elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
                intervals[sym] = _pair_interval(sym, value)
            else:
                msg = (f"domain of {sym.name}={value!r} is not a range: give (lo, hi) for lo < {sym.name} < "
                       "hi, an Interval, or range(lo, stop) for an integer")
                raise InvalidArgument(msg)
        extra += [c if isinstance(c, Constraint) else Constraint(sp.sympify(c)) for c in constraints]
        return cls(intervals, integers, tuple(extra))

    @property
    def symbols(self) -> list[sp.Symbol]:
        """All symbols of the domain, integers first, in a stable order."""
        return [*self.integers, *self.intervals]

    def names(self) -> dict[str, sp.Symbol]:
        """Map each symbol's name (the user-facing parameter name) to the symbol."""
        return {s.name: s for s in self.symbols}

    def violations(self, point: Mapping[sp.Symbol, object]) -> list[str]:
        """Return the constraints that ``point`` violates, as readable sentences."""
        problems = []
        for sym, (minimum, _) in self.integers.items():
            if sym in point and (int(point[sym]) != point[sym] or point[sym] < minimum):
                problems.append(f"{sym.name}={point[sym]} must be an integer >= {minimum}")
        for sym, interval in self.intervals.items():
            if sym in point and not interval.contains(float(point[sym])):
                problems.append(f"{sym.name}={point[sym]} must lie in {interval}")
        for constraint in self.constraints:
            if constraint.relation.free_symbols <= set(point) and not constraint.holds(point):
                problems.append(_reason(constraint))
        return problems

    def contains(self, point: Mapping[sp.Symbol, object]) -> bool:
        """True when ``point`` satisfies every range and constraint (fast: no messages are built)."""
        for sym, (minimum, _) in self.integers.items():
            if sym in point and (int(point[sym]) != point[sym] or point[sym] < minimum):
                return False
        for sym, interval in self.intervals.items():
            if sym in point and not interval.contains(float(point[sym])):
                return False
        return all(
            c.holds(point) for c in self.constraints if c.relation.free_symbols <= set(point)
        )

    def valid_range(self, sym: sp.Symbol, point: Mapping[sp.Symbol, object]) -> sp.Set:
        """Return the set of values of ``sym`` allowed when the other symbols are at ``point``."""
        if sym in self.integers:
            return sp.Range(self.integers[sym][0], sp.oo)
        allowed = self.intervals[sym].as_sympy() if sym in self.intervals else sp.S.Reals
        others = {s: sp.nsimplify(v) for s, v in point.items() if s != sym}
        for constraint in self.constraints:
            relation = constraint.relation.subs(others)
            if relation.free_symbols == {sym}:
                allowed = allowed.intersect(sp.solveset(relation, sym, sp.S.Reals))
        return allowed

    def validate(self, params: Mapping[str, float], *, context: str = "") -> dict[sp.Symbol, object]:
        """Check user parameters by name; return them keyed by symbol.

        Raises
        ------
        InvalidArgument
            For an unknown name, or a value outside the domain; the message names the
            parameter, the constraint it violates and the valid range.
        """
        names = self.names()
        point: dict[sp.Symbol, object] = {}
        for name, value in params.items():
            if name not in names:
                raise unknown_name(f"parameter{' of ' + context if context else ''}", name, names)
            sym = names[name]
            point[sym] = int(value) if sym in self.integers and float(value).is_integer() else value
        for sym in point:
            # a constraint of this symbol alone says why (Lemma 7 diverges…) better than its bare interval
            own = [c for c in self.constraints if c.relation.free_symbols == {sym} and not c.holds(point)]
            problems = [_reason(c) for c in own] or self.violations({sym: point[sym]})
            if problems:
                raise _invalid(sym, point[sym], problems[0], self.valid_range(sym, {}), context)
        for constraint in self.constraints:
            if constraint.relation.free_symbols <= set(point) and not constraint.holds(point):
                culprit = max(constraint.relation.free_symbols & set(point), key=lambda s: s.name)
                reason = _reason(constraint)
                raise _invalid(culprit, point[culprit], reason, self.valid_range(culprit, point), context)
        return point

    def sample(
        self, rng: random.Random, n: int, fixed: Mapping[sp.Symbol, object] | None = None
    ) -> list[dict[sp.Symbol, object]]:
        """Draw ``n`` points of the domain (rejection sampling), with ``fixed`` symbols pinned.

        Integers cycle through their sampled values; reals are drawn as short decimals (6 or 9
        digits; evaluated exactly at their binary value) from the interval shrunk by 1 % at open ends.
        """
        fixed = dict(fixed or {})
        points: list[dict[sp.Symbol, object]] = []
        attempts = 0
        while len(points) < n:
            attempts += 1
            if attempts > 200 * n:
                raise InvalidArgument(
                    f"could not sample the domain {self} with {fixed}: the constraints leave no room"
                )
            point = dict(fixed)
            for sym, (_, choices) in self.integers.items():
                point.setdefault(sym, choices[(len(points) + attempts) % len(choices)])
            for sym, interval in self.intervals.items():
                if sym not in point:
                    point[sym] = _random_rational(rng, interval)
            if self.contains(point):
                points.append(point)
        return points

    def __str__(self) -> str:
        parts = [f"{s.name} in {iv}" for s, iv in self.intervals.items()]
        parts += [f"{s.name} integer >= {m}" for s, (m, _) in self.integers.items()]
        parts += [str(c) for c in self.constraints]
        return ", ".join(parts) or "unrestricted"


@functools.cache
def _compiled(relation: sp.Basic):
    symbols = sorted(relation.free_symbols, key=lambda s: s.name)
    return symbols, sp.lambdify(symbols, relation, modules=["math"])


def _random_rational(rng: random.Random, interval: Interval) -> float:
    lo, hi = interval.lo, interval.hi
    if interval.scale == "log" and hi > 0:
        low = max(lo, 1e-3 * hi)
        value = low * (hi / low) ** rng.uniform(0.0, 1.0)
        value = min(max(value, lo + 1e-9 * (hi - lo)), hi - 1e-9 * (hi - lo))
        return round(value, 9)
    if lo == -float("inf"):
        lo = min(-10.0, hi - 10.0)
    if hi == float("inf"):
        hi = max(10.0, lo + 10.0)
    margin = 0.01 * (hi - lo)
    value = rng.uniform(lo + margin, hi - margin)
    return round(value, 6)


#: sampled values of an integer range: its ends and evenly spread values between (sums unroll L terms)
_INTEGER_SAMPLES = 6


def _integer_range(sym: sp.Symbol, values: range) -> tuple[tuple[int, tuple[int, ...]], int]:
    """Return ``(minimum, sampled values)`` of ``range(lo, stop)``, and its largest value."""
    if values.step != 1 or len(values) == 0:
        msg = (f"domain of {sym.name}={values!r} must be a non-empty range with step 1, e.g. range(5, 50) "
               f"for 5 <= {sym.name} <= 49")
        raise InvalidArgument(msg)
    lo, hi = values[0], values[-1]
    count = min(_INTEGER_SAMPLES, len(values))
    spread = sorted({lo + round(k * (hi - lo) / max(count - 1, 1)) for k in range(count)})
    return (lo, tuple(spread)), hi


def _pair_interval(sym: sp.Symbol, pair: Sequence) -> Interval:
    """Return the open interval ``lo < sym < hi`` of a pair ``(lo, hi)``."""
    if sym.is_integer:
        msg = (f"domain of {sym.name}={tuple(pair)!r}: {sym.name} is an integer symbol; give "
               f"range(lo, stop), e.g. range(5, 50) for 5 <= {sym.name} <= 49")
        raise InvalidArgument(msg)
    try:
        lo, hi = (float(end) for end in pair)
    except (TypeError, ValueError):
        msg = f"domain of {sym.name}={tuple(pair)!r} must be two numbers (lo, hi), e.g. (0.01, 5)"
        raise InvalidArgument(msg) from None
    if not lo < hi:
        msg = f"domain of {sym.name}=({lo:g}, {hi:g}) is empty; give lo < hi"
        raise InvalidArgument(msg)
    return Interval(lo, hi)


def _reason(constraint: Constraint) -> str:
    return f"violates {constraint}" + (f" ({constraint.reason})" if constraint.reason else "")


def _invalid(sym: sp.Symbol, value: object, reason: str, allowed: sp.Set, context: str) -> InvalidArgument:
    where = f" in {context}" if context else ""
    return InvalidArgument(f"{sym.name}={value}{where} {reason.removeprefix(sym.name + '=' + str(value) + ' ')}; "
                           f"choose {sym.name} in {_describe(allowed)}")


def _describe(allowed: sp.Set) -> str:
    if isinstance(allowed, sp.Interval):
        lo = "-inf" if allowed.start == -sp.oo else f"{float(allowed.start):.6g}"
        hi = "inf" if allowed.end == sp.oo else f"{float(allowed.end):.6g}"
        return f"{'(' if allowed.left_open else '['}{lo}, {hi}{')' if allowed.right_open else ']'}"
    return sp.sstr(allowed)


def symbols_by_name(symbols: Iterable[sp.Symbol]) -> dict[str, sp.Symbol]:
    """Map names to symbols."""
    return {s.name: s for s in symbols}
