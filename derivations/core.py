"""Closed forms as printed and as derived, and their comparison.

A :class:`Formula` holds one closed form of a paper twice: ``stated`` exactly as printed,
``derived`` rebuilt by SymPy from the definition (sums, expectations, ``diff``). Its
:meth:`Formula.verify` decides whether the two agree, exactly (symbolic zero) or numerically
(mpmath at 30 digits on random points of the domain), or differ, in which case it returns a
counterexample point with both values.

A :class:`RegionInequality` holds a printed inequality between explicit functions on a
region and evaluates its margin on sampled points (certification is ``checks.certify``).
"""

from __future__ import annotations

import functools
import gc
import random
import signal
import time
from fractions import Fraction
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import mpmath
import sympy as sp

from derivations.domain import Domain
from derivations.errors import InternalError


_LATE_OUTER_DEADLINE = 0.01  # seconds


@contextmanager
def time_limit(seconds: float):
    """Raise ``TimeoutError`` inside the block after ``seconds`` (main thread only; else no limit).

    Nests: an enclosing timer (an outer ``time_limit`` or any other ``ITIMER_REAL`` user) is
    saved, the inner block never runs past the outer deadline, and on exit the outer timer is
    re-armed with what is left of it (to fire 10 ms after the exit when it passed meanwhile).
    """
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def _expire(signum, frame):
        raise TimeoutError

    # The alarm raises wherever Python code runs; a garbage-collection callback (Hypothesis
    # installs one) must not be that place, so collection waits until the block ends.
    collecting = gc.isenabled()
    gc.disable()
    previous = signal.signal(signal.SIGALRM, _expire)
    outer_left, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer_left) if outer_left > 0 else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if collecting:
            gc.enable()
        if outer_left > 0:
            # An outer deadline that passed inside this block fires 10 ms late, so that it lands
            # in the outer block and not in the handler of a caller that catches this block's
            # TimeoutError (symbolic_zero does).
            left = outer_left - (time.monotonic() - start)
            signal.setitimer(signal.ITIMER_REAL, max(left, _LATE_OUTER_DEADLINE), outer_interval)


def symbolic_zero(expr: sp.Expr, seconds: float = 5.0) -> bool | None:
    """Return True if ``expr`` simplifies to 0, False if it simplifies to a nonzero constant, None if unknown."""
    try:
        with time_limit(seconds):
            expr = sp.sympify(expr).doit()
            for attempt in (sp.expand, sp.cancel, lambda e: sp.simplify(e.rewrite(sp.exp)), sp.simplify):
                reduced = attempt(expr)
                if reduced == 0:
                    return True
                if reduced.is_number and reduced.is_nonzero:
                    return False
    except (TimeoutError, RecursionError, NotImplementedError, TypeError):
        return None
    return None


def simplified(expr: sp.Expr, seconds: float = 5.0) -> sp.Expr:
    """Simplify ``expr`` within a time limit; return it unchanged when simplification takes too long."""
    try:
        with time_limit(seconds):
            return sp.simplify(sp.sympify(expr).doit())
    except (TimeoutError, RecursionError, NotImplementedError, TypeError):
        return expr


class Evaluator:
    """Evaluate a SymPy expression with mpmath at a chosen precision (sums unrolled for integer bounds)."""

    def __init__(self, expr: sp.Expr, symbols: list[sp.Symbol]):
        # Sums stay unevaluated (lambdify unrolls them for integer bounds); summing them in
        # closed form here would be slow and would test SymPy's summation instead.
        self.expr = sp.sympify(expr).replace(lambda e: isinstance(e, sp.Derivative), lambda e: e.doit())
        self.symbols = symbols
        self._function = sp.lambdify(symbols, self.expr, modules=["mpmath"])
        # an integer symbol is passed as a Python int only where Python needs one (the bounds of a Sum
        # that lambdify unrolls into a range); elsewhere as an mpf, so that 1/(M - 1) is not a
        # 16-digit float division of ints
        self._as_int = {s for limited in self.expr.atoms(sp.Sum, sp.Product) for _, lo, hi in limited.limits
                        for s in (sp.sympify(lo).free_symbols | sp.sympify(hi).free_symbols)}

    def __call__(self, point: Mapping[sp.Symbol, object], dps: int = 30):
        """Return the value at ``point`` (mpmath number) or raise ``ZeroDivisionError``/``ValueError``."""
        with mpmath.workdps(dps):
            # the conversion inside the working precision: a Rational (a pinned 3/10) is 0.3 to dps
            # digits, not its 53-bit rounding
            args = []
            for sym in self.symbols:
                value = point[sym]
                if sym.is_integer:
                    args.append(int(value) if sym in self._as_int else mpmath.mpf(int(value)))
                    continue
                if isinstance(value, mpmath.mpf):
                    args.append(value)  # already a binary number of its own precision
                    continue
                if isinstance(value, float | int | Fraction):
                    exact = Fraction(value)  # a float's exact binary value
                else:
                    exact = Fraction(sp.Rational(value).p, sp.Rational(value).q)
                args.append(mpmath.mpf(exact.numerator) / exact.denominator)
            result = self._function(*args)
            return mpmath.mpmathify(result)


@functools.lru_cache(maxsize=512)
def evaluator(expr: sp.Expr, symbols: tuple[sp.Symbol, ...]) -> Evaluator:
    """A shared :class:`Evaluator`: displays of one item often compare with the same derived form,
    and lambdifying a large expression costs more than evaluating it at a few points."""
    return Evaluator(expr, list(symbols))


@dataclass(frozen=True)
class Agreement:
    """How a printed formula compares with its derivation.

    ``status`` is ``exact`` (the difference simplifies to 0), ``numeric`` (equal to
    ``2 - dps/2`` relative digits at every sampled point, symbolic proof not found) or
    ``differs`` (a counterexample ``point`` with ``stated_value`` and ``derived_value``).
    """

    status: str
    n_points: int
    dps: int
    point: dict[str, str] = field(default_factory=dict)
    stated_value: str = ""
    derived_value: str = ""
    difference: str = ""
    ratio: str = ""
    max_relative_gap: float = 0.0

    @property
    def equal(self) -> bool:
        """True when the printed form agrees with the derivation."""
        return self.status in ("exact", "numeric")

    def to_dict(self) -> dict:
        """Return a JSON-ready record."""
        return {k: v for k, v in self.__dict__.items() if v not in ("", {}, None)}


@dataclass
class Formula:
    """One closed form of a paper, as printed and as derived.

    Parameters
    ----------
    id
        ``ih.cf.L_IH2.eq10``-style identifier (the item's id, a dot, the display's name).
    label
        The paper's label ("Eq. (10)"); ``label_alt`` the other version's label.
    stated
        SymPy expression exactly as printed.
    derived
        SymPy expression built from the definition.
    domain
        Where the printed formula is claimed to hold.
    reading
        The mode flags this comparison uses (e.g. ``{"ih_model_range": "canonical"}``).
    latex
        The printed LaTeX, verbatim from the paper (for the LaTeX export).
    """

    id: str
    label: str
    stated: sp.Expr
    derived: sp.Expr
    domain: Domain
    description: str = ""
    label_alt: str = ""
    reading: Mapping[str, str] = field(default_factory=dict)
    latex: str = ""

    @property
    def bound_symbols(self) -> set[sp.Symbol]:
        """The dummy variables of the sums, products and integrals in either side."""
        bound: set[sp.Symbol] = set()
        for expr in (self.stated, self.derived):
            for node in sp.preorder_traversal(expr):
                if isinstance(node, (sp.Sum, sp.Product, sp.Integral)):
                    bound |= {limit[0] for limit in node.limits}
        return bound

    @property
    def free_symbols(self) -> tuple[sp.Symbol, ...]:
        """The symbols either side depends on (bound dummies excluded), sorted by name."""
        free = (self.stated.free_symbols | self.derived.free_symbols) - self.bound_symbols
        return tuple(sorted(free, key=lambda s: s.name))

    def verify(
        self,
        *,
        n_points: int = 8,
        dps: int = 30,
        seed: int = 0,
        fixed: Mapping[sp.Symbol, object] | None = None,
        symbolic_seconds: float = 2.0,
    ) -> Agreement:
        """Compare ``stated`` with ``derived``: numerically first, then symbolically.

        The numeric pass evaluates both at ``n_points`` random points of the domain at
        ``dps`` digits (integers cycle through the domain's sampled values); a relative gap
        above ``10**(2 - dps/2)`` is a counterexample. When every point agrees, a symbolic
        zero of the difference upgrades the result to ``exact``.
        """
        symbols = self.free_symbols
        missing = set(symbols) - set(self.domain.symbols)
        if missing:
            raise InternalError(f"{self.id}: domain does not declare {sorted(s.name for s in missing)}; this is a bug")
        stated, derived = evaluator(self.stated, tuple(symbols)), evaluator(self.derived, tuple(symbols))
        points = self.domain.sample(random.Random(seed), n_points, fixed)
        # 30-digit evaluation of exact rational inputs; 10 digits of slack absorb the
        # cancellation of closed forms such as m(p) at small p.
        tolerance = mpmath.mpf(10) ** (10 - dps)
        worst = (mpmath.mpf(0), None, None, None)
        ratios = []
        for point in points:
            a, b = stated(point, dps), derived(point, dps)
            scale = max(abs(a), abs(b))
            gap = mpmath.mpf(0) if a == b else abs(a - b) / scale if scale else mpmath.inf
            if not mpmath.isfinite(gap) or gap > worst[0] or worst[1] is None:
                worst = (gap if mpmath.isfinite(gap) else mpmath.inf, point, a, b)
            ratios.append(a / b if b != 0 else mpmath.nan)
        gap, point, a, b = worst
        if gap > tolerance and abs(a - b) < mpmath.mpf(10) ** (10 - dps):
            # both sides tiny (e.g. an identity whose printed side is 0): rounding or a real gap?
            # Rounding shrinks with the working precision; a real difference does not.
            a2, b2 = stated(point, 2 * dps), derived(point, 2 * dps)
            if abs(a2 - b2) < mpmath.mpf(10) ** (10 - 2 * dps):
                gap = mpmath.mpf(0)
        if gap > tolerance:
            return Agreement(
                "differs",
                n_points,
                dps,
                point={s.name: str(v) for s, v in point.items()},
                stated_value=mpmath.nstr(a, 15),
                derived_value=mpmath.nstr(b, 15),
                difference=_difference_text(self.stated - self.derived),
                ratio=_constant_ratio(ratios, tolerance),
                max_relative_gap=float(gap),
            )
        zero = symbolic_zero(self.stated - self.derived, symbolic_seconds)
        return Agreement("exact" if zero else "numeric", n_points, dps, max_relative_gap=float(gap))


def _difference_text(difference: sp.Expr, max_nodes: int = 600) -> str:
    """The difference as text, canonicalised by a fixed sequence of cheap rewrites (logs expanded, common factors
    pulled out) rather than ``simplify`` under a time limit: a time limit near the simplification's own time made
    the text, and so the verdict's evidence, vary from run to run and machine to machine. A difference too large
    to read is summarised by its size."""
    nodes = 0
    for _ in sp.preorder_traversal(difference):
        nodes += 1
        if nodes > max_nodes:
            return f"(not printed: more than {max_nodes} nodes; see the LaTeX export)"
    try:
        tidy = sp.factor_terms(sp.expand_log(sp.sympify(difference).doit(), force=True))
    except (RecursionError, NotImplementedError, TypeError, ValueError):
        tidy = difference
    return sp.sstr(tidy)


def _constant_ratio(ratios: list, tolerance) -> str:
    """Return printed/derived when it is the same real number at every sampled point (a sign or factor error)."""
    first = ratios[0]
    if not all(mpmath.isfinite(abs(r)) and abs(r - first) <= tolerance * max(1, abs(first)) for r in ratios):
        return ""
    if isinstance(first, mpmath.mpc):
        return ""
    return sp.sstr(sp.nsimplify(float(first), [sp.pi], tolerance=1e-12, rational=False))


@dataclass(frozen=True)
class Margin:
    """The outcome of evaluating an inequality ``lhs <= rhs`` on sampled points."""

    holds: bool
    n_points: int
    min_margin: float
    worst_point: dict[str, str]
    lhs_value: str
    rhs_value: str

    def to_dict(self) -> dict:
        """Return a JSON-ready record."""
        return dict(self.__dict__)


@dataclass
class RegionInequality:
    """A printed inequality ``lhs (<|<=) rhs`` between explicit functions on a region.

    ``strict`` distinguishes ``<`` from ``<=``. The margin is ``rhs - lhs``. ``reading`` names the
    values of the reading flags the inequality is encoded under (empty: it holds under every reading);
    only inequalities of the canonical reading decide a verdict.
    """

    id: str
    label: str
    lhs: sp.Expr
    rhs: sp.Expr
    domain: Domain
    strict: bool = False
    description: str = ""
    latex: str = ""
    reading: Mapping[str, str] = field(default_factory=dict)

    def sample_margin(
        self,
        *,
        n_points: int = 400,
        dps: int = 30,
        seed: int = 0,
        extra_points: list[Mapping[sp.Symbol, object]] = (),
        fixed: Mapping[sp.Symbol, object] | None = None,
    ) -> Margin:
        """Evaluate the margin at random points (plus ``extra_points``) and return the worst.

        The margin is first evaluated at every point in double precision (vectorised); the
        points whose margin is smallest, or within rounding of zero, or not finite, are then
        re-evaluated with mpmath at ``dps`` digits, and the decision uses those values; a violation there is
        re-evaluated at 4·``dps`` digits, so that digits lost to cancellation cannot fake one.
        """
        symbols = sorted((self.lhs.free_symbols | self.rhs.free_symbols), key=lambda s: s.name)
        points = [*extra_points, *self.domain.sample(random.Random(seed), n_points, fixed)]
        rough = _double_margins(self.rhs - self.lhs, symbols, points)
        order = sorted(range(len(points)), key=lambda i: (rough[i] == rough[i], rough[i]))  # NaN first
        suspicious = [i for i in order if not (abs(rough[i]) > 1e-6) or not rough[i] == rough[i]]
        recheck = list(dict.fromkeys(order[:8] + suspicious[:40]))
        lhs, rhs = evaluator(self.lhs, tuple(symbols)), evaluator(self.rhs, tuple(symbols))

        def worst_at(digits: int):
            worst = None
            for i in recheck:
                a, b = lhs(points[i], digits), rhs(points[i], digits)
                if worst is None or b - a < worst[0]:
                    worst = (b - a, points[i], a, b)
            return worst

        margin, point, a, b = worst_at(dps)
        ok = margin > 0 if self.strict else margin >= 0
        if not ok:  # a violation must survive 4× the digits (log(1 + tiny) loses digits to cancellation)
            margin, point, a, b = worst_at(4 * dps)
            ok = margin > 0 if self.strict else margin >= 0
        return Margin(
            bool(ok), len(points), float(margin), {s.name: str(v) for s, v in point.items()},
            mpmath.nstr(a, 15), mpmath.nstr(b, 15),
        )


def _double_margins(margin: sp.Expr, symbols: list[sp.Symbol], points: list) -> list[float]:
    """The margin at every point in double precision (NaN where double precision cannot evaluate it)."""
    import numpy as np  # the double-precision pre-filter only; decisions are taken in mpmath

    try:
        function = sp.lambdify(symbols, margin.doit(), modules=["numpy"])
        columns = [np.array([float(point[s]) for point in points]) for s in symbols]
        with np.errstate(all="ignore"):
            values = np.broadcast_to(np.asarray(function(*columns), dtype=float), (len(points),))
        return [float(v) for v in values]
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError):
        return [float("nan")] * len(points)


@dataclass
class Item:
    """One registered closed-form item of a paper (e.g. ``ih.cf.ratios``): its printed displays.

    ``formulas`` are the printed equalities (each compared with its derivation),
    ``inequalities`` the printed inequalities between explicit functions on a region,
    ``notes`` what the item could not encode and why, and ``predicates`` the printed statements
    over a finite set of cases (:class:`derivations.predicates.Predicate`), compared on every case.
    """

    id: str
    label: str
    label_alt: str
    title: str
    formulas: list[Formula] = field(default_factory=list)
    inequalities: list[RegionInequality] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    predicates: list = field(default_factory=list)


def item_builder(items: Mapping[str, str], package: str, item_id: str, what: str = "closed-form item"):
    """The function that builds ``item_id`` from a paper's table ``items`` (id → ``"module:function"`` inside
    ``package``), imported on first use (some builders enumerate hundreds of samples); an unknown id is
    refused with the close matches."""
    import importlib

    from derivations.errors import unknown_name

    if item_id not in items:
        raise unknown_name(what, item_id, items)
    module, _, name = items[item_id].partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)
