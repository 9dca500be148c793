"""Certify an inequality ``lhs <= rhs`` (or ``<``) on a box by interval branch-and-bound.

Sampling a grid can miss a violation and cannot prove a bound; :func:`certify` decides one.

1. A float pre-filter (numpy, a few thousand random points plus every corner and the centre)
   looks for a counterexample first; a candidate is confirmed with a point evaluation in arb
   whose ball lies entirely on the wrong side, so ``fails`` is never a rounding artefact.
2. Adaptive bisection evaluates the margin ``m = rhs - lhs`` on each box with rigorous interval
   arithmetic (``checks._arb_printer``), taking the better of the natural interval extension and
   the mean-value form ``m(c) + grad m(B) . (B - c)``.
3. Tangency helpers close boxes where ``m`` touches 0, which no amount of bisection can:

   * ``monotonicity``: where ``dm/dx_i`` has one sign on a box, the minimum lies on the face
     ``x_i = lo_i`` (or ``hi_i``), so the variable is pinned there; if every variable is pinned
     the box is decided by one exact corner evaluation (e.g. ``e^x - 1 - x`` on ``[0, w]``).
   * ``taylor2``: at a touching point ``x0`` (found by the pre-filter, refined by a local
     minimiser, snapped to a rational and checked *exactly*: ``m(x0) = 0`` and each ``dm/dx_i(x0)``
     zero by SymPy simplification or of certain sign in arb), Taylor's theorem on a box ``B`` that
     holds ``x0`` gives ``m(x) = m(x0) + g.d + d^T H(xi) d / 2`` with ``d = x - x0``. The box closes
     when every ``g_i d_i >= 0`` on ``B`` and the interval Hessian ``H(B)`` is positive
     semidefinite by diagonal dominance (``H_ii >= sum_j |H_ij|``); this is the statement
     "``m / |x - x0|^2`` is bounded below by 0" made rigorous. The box is first split at ``x0``
     so that ``x0`` is a corner of the pieces.

Volumes and fractions are reported in the box's own coordinates; ``min_width`` is relative to
each variable's range.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp
from flint import arb, ctx, fmpq

from checks._arb_printer import Interval, _hi, _lo, interval_function, unroll_sums
from checks._certify_compiled import UNVISITED, CompiledProblem, OpenRegion, compiled_search
from derivations.conjugate import rationalise_cancellations
from derivations.core import RegionInequality, evaluator, symbolic_zero
from derivations.errors import InvalidArgument
from numerics.intervals import splittable

MAX_VARIABLES = 4
#: uncertified boxes kept in an ``undecided`` certificate
MAX_REPORTED_BOXES = 20
#: why the arb search left a box open: it reached ``min_width`` there
ARB_MIN_WIDTH = "min_width (arb)"


@dataclass
class Certificate:
    """The outcome of :func:`certify`.

    ``status`` is ``certified`` (proven on the whole box), ``fails`` (``point`` violates the
    inequality, confirmed by an arb evaluation whose ball is entirely on the wrong side, or by an
    exact SymPy zero for a strict inequality) or ``undecided`` (``certified_fraction`` of the
    volume proven, ``uncertified`` boxes, ``reason``).

    ``open_region`` (undecided only) says where the boxes left uncertified lie, all of them:
    those the compiled search's budget left in its queue (why ``unvisited``) and those it handed
    on that the arb search did not close (why: the compiled search's reason, e.g. ``precision
    limit``, or ``min_width (arb)`` where the arb search reached ``min_width``). It holds
    ``boxes`` (their number), ``why`` (number by why), ``volume`` (their fraction of the box's
    volume), ``hull`` (per variable, the least lower and greatest upper end, as doubles) and
    ``margin``: the smallest value of the margin found in the open boxes (``smallest``, the
    midpoint of an arb ball of radius ``radius``, at the box centre where its float value is
    smallest or at a local minimiser of that inside their hull, whichever is smaller), that point
    (``at``, and ``at_ends``: the variables whose region end it lies at), the
    margin's typical size on the region (``scale``: the median of |m| at seeded random points,
    None where it is defined at fewer than :data:`MIN_SCALE_POINTS` of them) and how to read it:
    ``touching`` True when the whole ball is within :data:`TOUCHING_RELATIVE` of that size (a
    touching set, where the inequality is tight and bisection alone cannot close the boxes);
    else ``unresolved`` when the ball holds 0 (its sign is not known at the working precision);
    else ``touching`` False (the margin stays away from 0 there: the enclosures are too wide for
    the budget). A ball entirely on the wrong side is a counterexample, and the certificate
    ``fails`` with it.
    Boxes the compiled search closed but did not re-prove in arb (it ran out of boxes) are not
    open: they are neither counted as certified nor listed here.
    """

    status: str
    method: str
    n_boxes: int
    elapsed: float
    strict: bool
    box: dict[str, tuple[str, str]]
    min_margin_lower: float | None = None
    point: dict[str, str] = field(default_factory=dict)
    lhs_value: str = ""
    rhs_value: str = ""
    margin_value: str = ""
    certified_fraction: float = 0.0
    excluded_fraction: float = 0.0
    uncertified: list[dict[str, tuple[str, str]]] = field(default_factory=list)
    reason: str = ""
    touching_points: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: boxes of the compiled search (double intervals, closing boxes re-proven in arb) and of the arb search
    compiled_boxes: int = 0
    arb_boxes: int = 0
    #: the time of the box searches alone (without building the problem and the pre-filter), and
    #: of the compiled search in it (its arb re-check included)
    search_seconds: float = 0.0
    compiled_seconds: float = 0.0
    open_region: dict = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        """True when the inequality is proven on the whole box."""
        return self.status == "certified"

    @property
    def fails(self) -> bool:
        """True when a confirmed counterexample was found."""
        return self.status == "fails"

    def point_fractions(self) -> dict[str, Fraction]:
        """The counterexample as exact rationals."""
        return {k: Fraction(v) for k, v in self.point.items()}

    def to_dict(self) -> dict:
        """Return a JSON-ready record."""
        return {k: v for k, v in self.__dict__.items() if v not in ("", [], {}, None)}


# ---------------------------------------------------------------------------------------------
# input handling


def _validate_box(box: Mapping[sp.Symbol, tuple], free: set[sp.Symbol]) -> list[sp.Symbol]:
    if not box:
        raise InvalidArgument(
            f"box={{}} is empty; give a finite range for each of {sorted(s.name for s in free) or 'the variables'}"
        )
    if len(box) > MAX_VARIABLES:
        raise InvalidArgument(
            f"box has {len(box)} variables ({', '.join(s.name for s in box)}); certify handles at most "
            f"{MAX_VARIABLES}: pin the others with subs() or split the claim"
        )
    for sym, bounds in box.items():
        if not isinstance(sym, sp.Symbol):
            raise InvalidArgument(f"box key {sym!r} is not a SymPy Symbol")
        try:
            lo, hi = bounds
        except (TypeError, ValueError):
            raise InvalidArgument(f"{sym.name}={bounds!r} is not a (lo, hi) pair") from None
        for value in (lo, hi):
            if not math.isfinite(float(value)):
                raise InvalidArgument(
                    f"{sym.name} range ({lo}, {hi}) is not finite; certify needs finite ranges "
                    f"(reparameterise, e.g. x = t/(1-t) with t in [0, 1))"
                )
        if _fraction(lo) > _fraction(hi):
            raise InvalidArgument(f"{sym.name} range has lo={lo} > hi={hi}; give (lo, hi) with lo <= hi")
    missing = free - set(box)
    if missing:
        raise InvalidArgument(
            f"symbols {sorted(s.name for s in missing)} appear in the inequality but have no range; "
            f"add them to the box or to integers"
        )
    return list(box)


def _fraction(value) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, sp.Basic):
        value = sp.nsimplify(value) if not value.is_Rational else value
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q))
        return Fraction(float(value))
    if isinstance(value, int):
        return Fraction(value)
    # a float is taken at its exact binary value
    return Fraction(float(value))


def _fmpq(value: Fraction) -> fmpq:
    return fmpq(value.numerator, value.denominator)


# ---------------------------------------------------------------------------------------------
# the compiled problem


class _Deadline:
    """The wall-clock budget of one :func:`certify` call.

    Every step that can take long (a symbolic derivative, a local search, a symbolic zero test,
    a box) asks first; a derivative is also refused when the previous one of the same chain took
    so long that the next one (about three times larger) would overrun the budget.
    """

    def __init__(self, start: float, limit: float):
        self.end = start + limit

    def left(self) -> float:
        return self.end - time.perf_counter()

    def expired(self) -> bool:
        return self.left() <= 0


#: exact zero tests at candidate touching points: at most this many per call, each this long (s)
MAX_SYMBOLIC_ZERO_CALLS = 4
SYMBOLIC_ZERO_SECONDS = 0.5

#: expressions with more nodes than this are not differentiated further (a k-th derivative of a
#: sum of exponential ratios roughly doubles in size per order, and SymPy's ``diff`` cannot be
#: interrupted: the 8th derivative of q'(p) at L = 5 takes minutes)
MAX_DIFF_NODES = 2500


def _size(expr: sp.Basic, cap: int) -> int:
    """The number of nodes of ``expr``, counted up to ``cap``."""
    n = 0
    for _ in sp.preorder_traversal(expr):
        n += 1
        if n > cap:
            break
    return n


def _without_cancellation(margin: sp.Expr, symbols, box) -> tuple[sp.Expr, int]:
    """The margin with cancelling sums P + Q√B in conjugate form (:mod:`derivations.conjugate`), and their count.

    The rewrite is an identity wherever each conjugate is non-zero; as a guard against a slip
    in it, the two forms are compared at 30 digits at five points of the box, and the margin
    is kept as it is unless they agree there.
    """
    if _size(margin, MAX_DIFF_NODES) > MAX_DIFF_NODES:
        return margin, 0

    def at(fractions) -> dict:
        return {s: lo + (hi - lo) * t for s, (lo, hi), t in zip(symbols, box, fractions, strict=True)}

    rewritten, count = rationalise_cancellations(
        margin, [{s: sp.Rational(v) for s, v in at([Fraction(k, 4)] * len(box)).items()} for k in (1, 2, 3)])
    if not count or not _same_function(margin, rewritten, symbols, box):
        return margin, 0
    return rewritten, count


#: a rational margin is factored only up to this many nodes and this total degree (SymPy's factor
#: cannot be interrupted: a 455-node margin of degree 75 takes five minutes)
MAX_FACTOR_NODES = 300
MAX_FACTOR_DEGREE = 16


def _degree_bound(expr: sp.Expr, symbols: set) -> tuple[int, int]:
    """Bounds on the total degrees of the numerator and the denominator of a rational function, read
    from its tree without expanding anything (``Poly`` of a high power takes seconds, and cannot be
    interrupted)."""
    if expr.is_Symbol:
        return (1, 0) if expr in symbols else (0, 0)
    if not expr.free_symbols & symbols:
        return 0, 0
    if expr.is_Pow and expr.exp.is_Integer:
        num, den = _degree_bound(expr.base, symbols)
        n = int(expr.exp)
        return (n * num, n * den) if n >= 0 else (-n * den, -n * num)
    parts = [_degree_bound(a, symbols) for a in expr.args]
    if expr.is_Mul:
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if expr.is_Add:
        den = sum(p[1] for p in parts)
        return max(p[0] + den - p[1] for p in parts), den
    return MAX_FACTOR_DEGREE + 1, MAX_FACTOR_DEGREE + 1  # anything else: not factored


def _denominators_nonzero(margin: sp.Expr, symbols, box) -> bool:
    """Every base of a negative power in the margin is certainly non-zero on the box (arb), so no
    rewrite can remove a point where the margin is undefined."""
    args = _intervals(box)
    return all(_certainly(kind, part, symbols, args) for kind, part in _domain_conditions(margin, symbols)
               if kind != "nonneg")


def _factored(margin: sp.Expr, symbols, box=None) -> sp.Expr | None:
    """The margin as a product of factors (SymPy's ``factor``), when it is a rational function of
    the box's symbols with exact coefficients that factors into at least two non-constant factors
    without growing, and every denominator in it is certainly non-zero on ``box`` (cancelling a
    factor that vanishes there would define the margin where it is not); else None.

    Interval arithmetic on a product of factors of known sign sees what it cannot in the
    expanded difference: ``ih.cf.lyapunov_vh``'s chain step (2) has a margin of two terms equal
    to 0.07 % that factors as −v*²(h/h* − 1)(v/v* − 1)/(250(1 + α*)²), ≥ 0 on the whole box.
    """
    if (margin.has(sp.Sum) or margin.atoms(sp.Float) or not margin.is_rational_function(*symbols)
            or _size(margin, MAX_FACTOR_NODES) > MAX_FACTOR_NODES
            or max(_degree_bound(margin, set(symbols))) > MAX_FACTOR_DEGREE):
        return None
    if box is not None and not _denominators_nonzero(margin, symbols, box):
        return None  # factoring could cancel a factor that vanishes in the box, defining the margin where it is not
    factored = sp.factor(sp.together(margin))
    _, factors = factored.as_coeff_mul()
    if sum(1 for f in factors if f.free_symbols) < 2 or sp.count_ops(factored) > sp.count_ops(margin):
        return None
    return factored


def _same_function(before: sp.Expr, after: sp.Expr, symbols, box) -> bool:
    """``before`` and ``after`` agree to 10⁻²⁰ (relative) at 30 digits at five points of the box
    (a guard against a slip in a rewrite; points where either is undefined are skipped)."""
    try:
        f, g = evaluator(before, tuple(symbols)), evaluator(after, tuple(symbols))
    except (TypeError, NameError, SyntaxError, KeyError):
        return False
    for i in range(1, 6):
        point = {s: lo + (hi - lo) * Fraction((i * (2 * j + 3)) % 11, 11)
                 for j, (s, (lo, hi)) in enumerate(zip(symbols, box, strict=True))}
        try:
            a, b = f(point), g(point)
        except (ValueError, ZeroDivisionError, TypeError, OverflowError):
            continue
        if not all(isinstance(v, mpmath.mpf) and mpmath.isfinite(v) for v in (a, b)):
            continue
        if abs(a - b) > mpmath.mpf(10) ** -20 * (1 + abs(a)):
            return False
    return True


def _domain_conditions(expr: sp.Expr, symbols) -> set[tuple[str, sp.Expr]]:
    """Where ``expr`` is defined, as conditions on its sub-expressions: ("nonzero", b) for a base of a
    negative power, ("pos", a) for a logarithm's argument or the base of a negative fractional power,
    ("nonneg", r) for the base of a positive fractional power."""
    symbols = set(symbols)
    out = set()
    for node in sp.preorder_traversal(expr):
        if node.is_Pow and node.base.free_symbols & symbols and node.exp.is_number:
            if node.exp.is_Integer:
                if node.exp.is_negative:
                    out.add(("nonzero", node.base))
            else:
                out.add(("pos" if node.exp.is_negative else "nonneg", node.base))
        elif isinstance(node, sp.log) and node.args[0].free_symbols & symbols:
            out.add(("pos", node.args[0]))
    return out


def _cancelled_conditions(lhs, rhs, margin, symbols, box) -> list[sp.core.relational.Relational]:
    """The conditions for lhs and rhs to be defined that ``rhs − lhs`` lost when SymPy simplified it
    (x + 1/(x − 1) ≤ 2x + 1/(x − 1) has the margin x, defined at x = 1 where neither side is), as
    constraints, leaving out those certainly true on the whole box."""
    args = _intervals(box)
    out = []
    for kind, part in sorted(_domain_conditions(lhs, symbols) | _domain_conditions(rhs, symbols)
                             - _domain_conditions(margin, symbols), key=lambda c: sp.default_sort_key(c[1])):
        relation = {"nonzero": part**2 > 0, "pos": part > 0, "nonneg": part >= 0}[kind]
        if relation is sp.true:
            continue
        if relation is sp.false:
            raise InvalidArgument(f"a side of the inequality is undefined everywhere: it needs {kind} {part}")
        if not _certainly(kind, part, symbols, args):
            out.append(relation)
    return out


def _certainly(kind: str, part: sp.Expr, symbols, args) -> bool:
    """A condition of :func:`_domain_conditions` holds on the whole box ``args`` (arb intervals)."""
    value = interval_function(part, symbols)(args)
    if value.is_nan():
        return False
    return bool({"nonzero": value.lo > 0 or value.hi < 0, "pos": value.lo > 0, "nonneg": value.lo >= 0}[kind])


class _Problem:
    """Margin, gradient and Hessian compiled to interval functions, plus the constraints.

    Derivatives are built on first use and only within the deadline (see :meth:`_diff`): they
    help close boxes, so a derivative that is not available just leaves a box to bisection.
    """

    def __init__(self, lhs, rhs, symbols, integers, strict, constraints, deadline: _Deadline, box=None):
        self.symbols = symbols
        self.strict = strict
        self.deadline = deadline
        self.lhs = unroll_sums(lhs, integers)
        self.rhs = unroll_sums(rhs, integers)
        self.margin_expr = sp.sympify(self.rhs - self.lhs)
        #: where the sides are undefined but SymPy's rhs − lhs is not: taken as constraints
        self.implicit = (_cancelled_conditions(self.lhs, self.rhs, self.margin_expr, symbols, box)
                         if box is not None else [])
        constraints = [*constraints, *self.implicit]
        self.rewrites = 0
        self.symbolic_zero_calls = 0
        self.factored = False
        if box is not None:
            self.margin_expr, self.rewrites = _without_cancellation(self.margin_expr, symbols, box)
            factored = _factored(self.margin_expr, symbols, box)
            if factored is not None and _same_function(self.margin_expr, factored, symbols, box):
                self.margin_expr, self.factored = factored, True
        self.f_lhs = interval_function(self.lhs, symbols)
        self.f_rhs = interval_function(self.rhs, symbols)
        self.f_margin = interval_function(self.margin_expr, symbols)
        self._grad: list | None | bool = False  # False: not tried yet
        self._hessian = None
        self._derivative_exprs = [self.margin_expr]
        self._derivatives = [self.f_margin]
        self._derivative_blocked = False
        self._diff_seconds = 0.0
        self._faces: dict = {}
        self.constraints = []
        self._constraint_exprs: list[sp.Expr] = []
        for relation in constraints:
            if not isinstance(relation, sp.core.relational.Relational) or isinstance(
                relation, (sp.Eq, sp.Ne)
            ):
                raise InvalidArgument(f"constraint {relation} is not an inequality (<, <=, >, >=)")
            small, big = (relation.lhs, relation.rhs) if relation.rel_op in ("<", "<=") else (
                relation.rhs, relation.lhs)
            expr = unroll_sums(big - small, integers)
            self.constraints.append((interval_function(expr, symbols), relation.rel_op in ("<", ">"), relation))
            self._constraint_exprs.append(expr)
        self._compiled: CompiledProblem | None | bool = False

    @property
    def compiled(self) -> CompiledProblem | None:
        """The margin and constraints on one compiled tape, or None (a function the tape does not have)."""
        if self._compiled is False:
            try:
                self._compiled = CompiledProblem(
                    self.margin_expr, self._constraint_exprs, [strict for _, strict, _ in self.constraints],
                    self.symbols, self.strict)
            except (InvalidArgument, OverflowError):
                self._compiled = None
        return self._compiled

    def _diff(self, expr: sp.Expr, sym: sp.Symbol, previous_seconds: float = 0.0) -> tuple[sp.Expr, float] | None:
        """``d expr / d sym`` with the time it took, or None when it would not fit the budget."""
        if self.deadline.left() < 3 * previous_seconds or self.deadline.expired():
            return None
        if _size(expr, MAX_DIFF_NODES) > MAX_DIFF_NODES:
            return None
        t0 = time.perf_counter()
        out = sp.diff(expr, sym)
        return out, time.perf_counter() - t0

    @property
    def grad_expr(self) -> list[sp.Expr]:
        return self._grad[0] if self._grad else []

    @property
    def f_grad(self):
        """The compiled gradient of the margin, or None (not available within the budget or not compilable)."""
        if self._grad is False:
            exprs, seconds = [], 0.0
            for s in self.symbols:
                d = self._diff(self.margin_expr, s, seconds)
                if d is None:
                    self._grad = None
                    return None
                exprs.append(d[0])
                seconds = max(seconds, d[1])
            try:
                self._grad = (exprs, [interval_function(g, self.symbols) for g in exprs])
            except InvalidArgument:
                # a derivative the printer cannot evaluate (e.g. of an exotic function): no mean-value form
                self._grad = None
        return self._grad[1] if self._grad else None

    def derivative(self, k: int):
        """The k-th derivative of the margin (one variable only), compiled on first use; None past the budget."""
        while len(self._derivatives) <= k:
            if self._derivative_blocked:
                return None
            d = self._diff(self._derivative_exprs[-1], self.symbols[0], self._diff_seconds)
            if d is None:
                self._derivative_blocked = True
                return None
            expr, self._diff_seconds = d
            self._derivative_exprs.append(expr)
            self._derivatives.append(interval_function(expr, self.symbols))
        return self._derivatives[k]

    def hessian(self):
        if self._hessian is None:
            if self.f_grad is None:
                return []
            n = len(self.symbols)
            exprs = [[None] * n for _ in range(n)]
            seconds = 0.0
            for i in range(n):
                for j in range(i, n):
                    d = self._diff(self.grad_expr[i], self.symbols[j], seconds)
                    if d is None:
                        self._hessian = []
                        return []
                    exprs[i][j] = exprs[j][i] = d[0]
                    seconds = max(seconds, d[1])
            try:
                self._hessian = [[interval_function(exprs[i][j], self.symbols) for j in range(n)] for i in range(n)]
            except InvalidArgument:
                self._hessian = []  # e.g. DiracDelta from Abs: no second-order test
        return self._hessian

    def face(self, pinned, box, box0):
        """The margin with the variables pinned to an end of the *whole* region substituted exactly.

        Interval evaluation cannot see that ``f(a) - f(a + d)`` vanishes at ``d = 0`` when ``a`` is
        an interval; SymPy can. Faces are the region's own (at most ``2 * n``) boundary values, so
        each substitution is compiled once. Returns None when nothing is pinned to the region's
        boundary or the face cannot be compiled within the budget.
        """
        pins = tuple(
            (i, lo) for i, ((lo, hi), (blo, bhi), (elo, ehi)) in enumerate(zip(pinned, box, box0, strict=True))
            if lo == hi and blo != bhi and lo in (elo, ehi)
        )
        if not pins:
            return None
        if pins not in self._faces:
            self._faces[pins] = None
            if not self.deadline.expired() and _size(self.margin_expr, MAX_DIFF_NODES) <= MAX_DIFF_NODES:
                expr = self.margin_expr.subs({self.symbols[i]: sp.Rational(v.numerator, v.denominator) for i, v in pins})
                if expr.is_finite is not False and not expr.has(sp.nan, sp.zoo):
                    try:
                        self._faces[pins] = interval_function(expr, self.symbols)
                    except InvalidArgument:
                        pass
        return self._faces[pins]

    def ok(self, lower: arb) -> bool:
        return bool(lower > 0) if self.strict else bool(lower >= 0)

    def ok_on(self, value: Interval) -> bool:
        """The margin interval proves the inequality (both ends defined, lower end on the right side)."""
        return not value.is_nan() and self.ok(value.lo)

    def violated(self, value: Interval) -> bool:
        """The margin interval proves a violation."""
        return not value.is_nan() and (bool(value.hi <= 0) if self.strict else bool(value.hi < 0))

    def constraint_state(self, args) -> str:
        """``true``, ``false`` or ``unknown`` for all constraints together on these intervals."""
        state = "true"
        for f, strict, _ in self.constraints:
            value = f(args)
            if value.is_nan():
                state = "unknown"
                continue
            if (value.hi <= 0) if strict else (value.hi < 0):
                return "false"
            if not ((value.lo > 0) if strict else (value.lo >= 0)):
                state = "unknown"
        return state


def _intervals(box) -> list[Interval]:
    out = []
    for lo, hi in box:
        a = arb(_fmpq(lo))
        out.append(Interval.point(a) if lo == hi else Interval(a, arb(_fmpq(hi))))
    return out


def _point_args(point) -> list[Interval]:
    return [Interval.point(arb(v)) for v in point]


# ---------------------------------------------------------------------------------------------
# float pre-filter and touching points


def _on_rows(f) -> Callable[[np.ndarray], np.ndarray]:
    """A function of the symbols (NumPy, broadcasting) as a function of an array of points, one per row."""
    return lambda points: np.broadcast_to(np.asarray(f(*points.T), dtype=float), (len(points),))


def _prefilter(problem: _Problem, box, n_random: int, seed: int):
    """Return candidate points (fmpq tuples) sorted by float margin, and the float margin of an array of
    points, one per row (see :func:`_on_rows`)."""
    try:
        f = _on_rows(sp.lambdify(problem.symbols, problem.margin_expr, modules=["numpy"]))
    except (TypeError, NameError, SyntaxError, KeyError):
        return [], None
    rng = np.random.default_rng(seed)
    lo = np.array([float(a) for a, _ in box])
    hi = np.array([float(b) for _, b in box])
    corners = np.array(list(itertools.product(*[(a, b) for a, b in zip(lo, hi, strict=True)])))
    pts = np.vstack([corners, (lo + hi)[None, :] / 2, lo + (hi - lo) * rng.random((n_random, len(lo)))])
    with np.errstate(all="ignore"):
        try:
            values = f(pts)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError):
            return [], None
    values = np.where(np.isfinite(values), values, np.inf)
    order = np.argsort(values)[:16]
    return [(pts[i], float(values[i])) for i in order], f


def _refine(f, x: np.ndarray, box, deadline: _Deadline, rounds: int = 14, n: int = 256) -> np.ndarray:
    """A local minimiser of the float margin ``f`` (a function of an array of points, one per row) near
    ``x`` by zooming random search (vectorised).

    Each round samples ``n`` points in a cube around the best point so far, clipped to the box
    (so minima on faces and corners are hit exactly), and shrinks the cube fourfold: 14 rounds
    locate a minimum to about 1e-9 of the range. It needs no derivatives, copes with kinks, and
    is an order of magnitude cheaper than a quasi-Newton search with numerical gradients.
    """
    rng = np.random.default_rng(0)
    lo = np.array([float(a) for a, _ in box])
    hi = np.array([float(b) for _, b in box])
    best_x = np.asarray(x, dtype=float)
    with np.errstate(all="ignore"):
        best = float(f(best_x[None, :])[0])
    best = best if math.isfinite(best) else math.inf
    radius = (hi - lo) / 10
    for _ in range(rounds):
        if deadline.expired():
            break
        pts = np.clip(best_x + radius * rng.uniform(-1.5, 1.5, (n, len(lo))), lo, hi)
        with np.errstate(all="ignore"):
            try:
                values = f(pts)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError, NameError):
                break
        values = np.where(np.isfinite(values), values, np.inf)
        i = int(np.argmin(values))
        if values[i] < best:
            best, best_x = float(values[i]), pts[i]
        radius = radius / 4
    return best_x


def _snaps(x: np.ndarray, box) -> list[tuple[Fraction, ...]]:
    """Simple rationals near ``x`` (box ends first), from coarse to fine denominators."""
    out = []
    for denominator in (12, 100, 1000, 10_000):
        point = []
        for v, (lo, hi) in zip(x, box, strict=True):
            width = float(hi - lo) or 1.0
            if abs(v - float(lo)) < 1e-6 * width:
                point.append(lo)
            elif abs(v - float(hi)) < 1e-6 * width:
                point.append(hi)
            else:
                point.append(Fraction(float(v)).limit_denominator(denominator))
        point = tuple(point)
        if point not in out and all(lo <= p <= hi for p, (lo, hi) in zip(point, box, strict=True)):
            out.append(point)
    return out


@dataclass
class _Touch:
    point: tuple[Fraction, ...]
    grad_sign: list[int]  # 0 exactly zero, +1 / -1 certain sign


def _exact_zero(expr: sp.Expr, subs: dict, problem: _Problem, f) -> int | None:
    """0 if ``expr`` is exactly 0 at ``subs`` (arb exact or SymPy), +-1 if of certain sign, else None."""
    value = f(_point_args([_fmpq(v) for v in subs.values()]))
    if value.lo.is_exact() and value.hi.is_exact() and value.lo.is_zero() and value.hi.is_zero():
        return 0
    if value.lo > 0:
        return 1
    if value.hi < 0:
        return -1
    # symbolic_zero runs under SIGALRM; a non-positive limit would mean no limit at all
    seconds = min(SYMBOLIC_ZERO_SECONDS, problem.deadline.left())
    if seconds < 0.01 or problem.symbolic_zero_calls >= MAX_SYMBOLIC_ZERO_CALLS:
        return None
    problem.symbolic_zero_calls += 1
    at = sp.sympify(expr).subs({s: sp.Rational(v.numerator, v.denominator) for s, v in subs.items()})
    return 0 if symbolic_zero(at, seconds) else None


def _touching_points(problem, box, refined, notes) -> list[_Touch]:
    """Exact touching points among the locally minimised candidates ``refined`` ((x, float margin) pairs)."""
    found: list[_Touch] = []
    for x, value in refined:
        # a float minimum this close to 0 is either a touching point or a violation missed in double
        if not math.isfinite(value) or abs(value) > 1e-8:
            continue
        for point in _snaps(x, box):
            if any(t.point == point for t in found):
                break
            subs = dict(zip(problem.symbols, point, strict=True))
            if problem.deadline.expired():
                return found
            if _exact_zero(problem.margin_expr, subs, problem, problem.f_margin) != 0 or problem.f_grad is None:
                continue
            signs = [
                _exact_zero(g, subs, problem, fg) for g, fg in zip(problem.grad_expr, problem.f_grad, strict=True)
            ]
            if any(s is None for s in signs):
                notes.append(f"touching point {_fmt_point(problem.symbols, point)}: gradient of unknown sign")
                break
            found.append(_Touch(point, signs))
            break
    return found


def _fmt_point(symbols, point) -> dict[str, str]:
    return {s.name: str(v) for s, v in zip(symbols, point, strict=True)}


# ---------------------------------------------------------------------------------------------
# box tests


def _mean_value_lower(problem, box, args, grads) -> arb:
    c = [(lo + hi) / 2 for lo, hi in box]
    total = problem.f_margin(_point_args([_fmpq(v) for v in c])).lo
    for g, (lo, hi), ci in zip(grads, box, c, strict=True):
        if lo == hi:
            continue
        d = Interval(arb(_fmpq(lo - ci)), arb(_fmpq(hi - ci)))
        p1, p2, p3, p4 = g.lo * d.lo, g.lo * d.hi, g.hi * d.lo, g.hi * d.hi
        total = total + _lo(p1, p2, p3, p4)
    return total


def _derivative_chain(
    problem, box, k: int = 0, sign: int = 1, max_order: int = 8, _memo: dict | None = None,
) -> bool:
    """Prove ``sign * m^(k) >= 0`` (``> 0`` for the strict margin) on a one-variable box.

    Either the interval value proves it, or ``m^(k+1)`` has a provable sign (recursively), so
    ``m^(k)`` is monotone and its minimum sits at one end, where a point evaluation decides.
    This is iterated monotonicity; it closes high-order contacts such as ``e^x - sum_{j<=6} x^j/j!``
    at ``x = 0`` that a second-order test cannot. Each (order, sign) is decided once per box
    (``_memo``): both signs are tried at every order, so without it the search is exponential.
    """
    if _memo is None:
        _memo = {}
    if (k, sign) not in _memo:
        _memo[k, sign] = _derivative_chain_step(problem, box, k, sign, max_order, _memo)
    return _memo[k, sign]


def _derivative_chain_step(problem, box, k: int, sign: int, max_order: int, memo: dict) -> bool:
    (lo, hi), = box
    strict = problem.strict and k == 0
    if problem.deadline.expired():
        return False

    def ok(value: arb) -> bool:
        value = sign * value
        return bool(value > 0) if strict else bool(value >= 0)

    try:
        f = problem.derivative(k)
    except InvalidArgument:
        return False
    if f is None:
        return False
    value = f(_intervals(box))
    if value.is_nan():
        return False
    if ok(value.lo if sign > 0 else value.hi):
        return True
    if k >= max_order or lo == hi:
        return False
    # try the sign the next derivative shows at the midpoint first, then the other
    try:
        next_derivative = problem.derivative(k + 1)
    except InvalidArgument:
        return False
    if next_derivative is None:
        return False
    mid = next_derivative(_point_args([_fmpq((lo + hi) / 2)])).lo
    for s in ((1, -1) if mid >= 0 else (-1, 1)):
        if _derivative_chain(problem, box, k + 1, s, max_order, memo):
            # m^(k) increasing (s=+1): sign*m^(k) is smallest at lo if sign=+1, at hi if sign=-1
            end = lo if s * sign > 0 else hi
            v = f(_point_args([_fmpq(end)]))
            return not v.is_nan() and ok(v.lo if sign > 0 else v.hi)
    return False


def _taylor2(problem, box, touch: _Touch) -> bool:
    for (lo, hi), x0, s in zip(box, touch.point, touch.grad_sign, strict=True):
        if not lo <= x0 <= hi:
            return False
        if s > 0 and lo < x0:  # g_i d_i >= 0 needs d_i >= 0
            return False
        if s < 0 and hi > x0:
            return False
    if not problem.hessian():
        return False
    args = _intervals(box)
    h = [[f(args) for f in row] for row in problem.hessian()]
    n = len(h)
    for i in range(n):
        off = arb(0)
        for j in range(n):
            if j != i:
                off = off + _abs_upper(h[i][j])
        if not (h[i][i].lo - off >= 0):
            return False
    return True


def _abs_upper(x: Interval) -> arb:
    return _hi(-x.lo, x.hi)


# ---------------------------------------------------------------------------------------------
# entry points


def certify(
    lhs: sp.Expr,
    rhs: sp.Expr,
    box: Mapping[sp.Symbol, tuple],
    *,
    strict: bool = False,
    integers: Mapping[sp.Symbol, int] | None = None,
    constraints: Sequence[sp.Basic] = (),
    min_width: float = 1e-9,
    max_boxes: int = 200_000,
    arb_boxes: int = 20_000,
    time_limit: float = 60.0,
    prec: int = 128,
    n_samples: int = 4000,
    seed: int = 0,
    compiled: bool = True,
) -> Certificate:
    """Decide ``lhs <= rhs`` (``lhs < rhs`` if ``strict``) for every point of the closed ``box``.

    Parameters
    ----------
    lhs, rhs
        SymPy expressions; ``Sum`` nodes are unrolled after substituting ``integers``.
    box
        ``{symbol: (lo, hi)}`` with finite ``lo <= hi``, one to four symbols. Floats are taken at
        their exact binary value, SymPy rationals exactly.
    constraints
        Relations (``2*w**2 < 1``) restricting the region: boxes where one is certainly false are
        discarded, boxes where one is uncertain are subdivided unless the inequality is proven on
        the whole box anyway; a counterexample must satisfy them certainly.
    min_width
        Smallest box width relative to each variable's range; a box that cannot be split further
        is left uncertified (reason ``depth limit``).
    max_boxes, arb_boxes
        Budgets in boxes, so that the certificate is the same on a busy or an idle machine:
        ``max_boxes`` for the compiled search (double-precision intervals, every closing box
        re-proven in arb), ``arb_boxes`` for the arb search of the boxes it hands on (too small
        for doubles, or where the tangency tests are needed). When one runs out the result is
        ``undecided``.
    time_limit
        A safety cap in seconds on the whole call (symbolic derivatives included); when it binds,
        the reason says so and the result depends on the machine's speed.
    prec
        arb working precision in bits.
    compiled
        Run the compiled search first (default). Off, or for a function the compiled tape does
        not have, every box goes through arb.

    Raises
    ------
    InvalidArgument
        Empty box, ``lo > hi``, infinite range, more than four variables, a symbol without range,
        an unknown function.
    """
    start = time.perf_counter()
    deadline = _Deadline(start, time_limit)
    integers = dict(integers or {})
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    free = (lhs.free_symbols | rhs.free_symbols | set().union(*[sp.sympify(c).free_symbols for c in constraints]))
    free = {s for s in free if s not in integers}
    symbols = _validate_box(box, free)
    exact_box = tuple((_fraction(box[s][0]), _fraction(box[s][1])) for s in symbols)
    saved = ctx.prec
    ctx.prec = prec
    try:
        problem = _Problem(lhs, rhs, symbols, integers, strict, constraints, deadline, exact_box)
        return _run(problem, exact_box, start, min_width, (max_boxes if compiled else 0, arb_boxes), time_limit,
                    n_samples, seed)
    finally:
        ctx.prec = saved


def _run(problem: _Problem, box0, start, min_width, budgets, time_limit, n_samples, seed) -> Certificate:
    compiled_boxes, max_boxes = budgets
    symbols = problem.symbols
    notes: list[str] = []
    used: set[str] = set()
    base = dict(
        strict=problem.strict, box={s.name: (str(a), str(b)) for s, (a, b) in zip(symbols, box0, strict=True)},
        notes=notes,
    )

    def counterexample(point, how: str) -> Certificate:
        args = _point_args([_fmpq(v) for v in point])
        a, b = problem.f_lhs(args), problem.f_rhs(args)
        m = problem.f_margin(args)
        notes.append(how)
        base["arb_boxes"] = n_arb
        return Certificate(
            "fails", how.split(":")[0], n_boxes, time.perf_counter() - start,
            point=_fmt_point(symbols, point), lhs_value=a.lo.str(20), rhs_value=b.lo.str(20),
            margin_value=m.lo.str(20), **base,
        )

    def sides_defined(args) -> bool:
        # both sides, not only the margin: SymPy may have cancelled a pole out of rhs − lhs
        return not (problem.f_lhs(args).is_nan() or problem.f_rhs(args).is_nan())

    def confirmed(point) -> bool:
        args = _point_args([_fmpq(v) for v in point])
        if problem.constraints and problem.constraint_state(args) != "true":
            return False
        return sides_defined(args) and problem.violated(problem.f_margin(args))

    if problem.rewrites:
        notes.append(f"margin: {problem.rewrites} cancelling sum(s) P + Q√B evaluated as (P² − Q²B)/(P − Q√B)")
    if problem.factored:
        notes.append(f"margin: factored by SymPy as {sp.sstr(problem.margin_expr)}")
    if problem.implicit:
        notes.append("where the sides are defined (SymPy's rhs − lhs is defined beyond them): "
                     + ", ".join(sp.sstr(c) for c in problem.implicit))
    n_boxes = n_arb = 0
    # 1. float pre-filter
    # n_samples <= 0 switches the pre-filter (and with it touching-point detection) off
    candidates, f_float = _prefilter(problem, box0, n_samples, seed) if n_samples > 0 else ([], None)
    for x, value in candidates:
        if value < 0 or (problem.strict and value <= 0):
            point = tuple(Fraction(float(v)) for v in x)
            if confirmed(point):
                return counterexample(point, "prefilter: float sample, confirmed in arb")
    refined = []
    for x, _ in candidates[:4] if f_float else []:
        if problem.deadline.expired():
            break
        x = _refine(f_float, x, box0, problem.deadline)
        with np.errstate(all="ignore"):
            value = float(f_float(x[None, :])[0])
        refined.append((x, value))
        if value < 0 or (problem.strict and value <= 0):
            point = tuple(Fraction(float(v)) for v in x)
            if confirmed(point):
                return counterexample(point, "prefilter: local minimiser, confirmed in arb")
    touches = _touching_points(problem, box0, refined, notes)
    for t in touches:
        if problem.strict:
            args = _point_args([_fmpq(v) for v in t.point])
            if (not problem.constraints or problem.constraint_state(args) == "true") and sides_defined(args):
                return counterexample(t.point, "touching point: margin is exactly 0 (strict inequality fails)")
    # 2. split the box at touching points so that each is a corner of the pieces
    boxes = [box0]
    for t in touches:
        boxes = [piece for b in boxes for piece in _split_at(b, t.point)]
    widths = [(hi - lo) or Fraction(1) for lo, hi in box0]
    total_volume = _volume(box0, widths)
    certified_volume = Fraction(0)
    excluded_volume = Fraction(0)
    min_lower = None
    uncertified: list = []
    margin_at = _margin_at(problem, f_float, use_compiled=compiled_boxes > 0)
    open_region = OpenRegion(box0, margin_at)
    queue = [(b, UNVISITED) for b in boxes]
    reason = ""
    # 3. the compiled search; what it cannot close (or re-prove in arb) goes on to the arb search
    search_start = time.perf_counter()
    stage = None
    if compiled_boxes > 0 and problem.compiled is not None:
        stage = compiled_search(problem.compiled, boxes, box0, min_width=min_width, max_boxes=compiled_boxes,
                                confirm=confirmed, keep_handed_on=max_boxes + MAX_REPORTED_BOXES,
                                keep_unvisited=MAX_REPORTED_BOXES,
                                expired=lambda: time.perf_counter() - start > time_limit,
                                interval_margin=lambda lo, hi: _interval_lower(problem, lo, hi))
        n_boxes += stage.n_boxes
        base["compiled_boxes"] = stage.n_boxes
        base["compiled_seconds"] = time.perf_counter() - search_start
        if stage.counterexample is not None:
            return counterexample(stage.counterexample, "compiled search: box centre, confirmed in arb")
        certified_volume += Fraction(stage.certified_volume) * total_volume
        excluded_volume += Fraction(stage.excluded_volume) * total_volume
        min_lower = stage.min_lower
        used |= stage.kinds
        queue = stage.handed_on
        open_region = stage.open_region
        uncertified += stage.unvisited
        if stage.n_handed_on > len(stage.handed_on):
            reason = reason or "box limit (arb search, arb_boxes)"
            notes.append(f"the compiled search handed on {stage.n_handed_on} boxes, more than the arb search's "
                         f"budget; only the first {len(stage.handed_on)} were searched")
        if stage.timed_out:
            reason = "time limit (a safety cap: the result may depend on the machine)"
        elif stage.unvisited:
            reason = "box limit (compiled search, max_boxes)"
            notes.append(f"the compiled search ran out of boxes: the boxes it closed ({stage.unconfirmed_volume:.3g} "
                         f"of the volume) were not re-proven in arb and are not counted")
        if stage.recheck_failed:
            notes.append(f"{stage.recheck_failed} of {stage.leaves} boxes closed by the compiled search were not "
                         f"confirmed by the arb re-check and went to the arb search")
    counter = itertools.count()
    # each box with why it is open (inherited by its halves)
    heap = [(0, next(counter), b, why_open) for b, why_open in queue]
    while heap:
        if time.perf_counter() - start > time_limit:
            reason = reason or "time limit (a safety cap: the result may depend on the machine)"
            break
        if n_arb >= max_boxes:
            reason = reason or "box limit (arb search, arb_boxes)"
            break
        _, _, b, why_open = heapq.heappop(heap)
        n_boxes += 1
        n_arb += 1
        args = _intervals(b)
        m = problem.f_margin(args)
        lower = m.lo if not m.is_nan() else arb.nan()
        closed = problem.ok_on(m) and "bisection"
        if not closed and problem.constraints:
            state = problem.constraint_state(args)
            if state == "false":
                excluded_volume += _volume(b, widths)
                continue
        else:
            state = "true"
        if not closed:
            c = tuple((lo + hi) / 2 for lo, hi in b)
            if confirmed(c):
                return counterexample(c, "bisection: box centre, confirmed in arb")
        # the derivative-based tests need m defined (hence differentiable) on the whole box
        defined = not m.is_nan()
        if not closed and defined and problem.f_grad is not None:
            grads = [g(args) for g in problem.f_grad]
            if not any(g.is_nan() for g in grads):
                mv = _mean_value_lower(problem, b, args, grads)
                if problem.ok(mv):
                    closed, lower = "bisection", mv
                else:
                    pinned = []
                    for (lo, hi), g in zip(b, grads, strict=True):
                        if lo != hi and g.lo >= 0:
                            pinned.append((lo, lo))
                        elif lo != hi and g.hi <= 0:
                            pinned.append((hi, hi))
                        else:
                            pinned.append((lo, hi))
                    if tuple(pinned) != b:
                        face = problem.f_margin(_intervals(pinned))
                        if problem.ok_on(face):
                            closed, lower = "monotonicity", face.lo
                        elif (exact_face := problem.face(pinned, b, box0)) is not None:
                            # the margin restricted to the region's own boundary, simplified by
                            # SymPy first: sm(a) - sm(a + 0*e) is 0 there, not an interval about 0
                            face = exact_face(_intervals(pinned))
                            if problem.ok_on(face):
                                closed, lower = "monotonicity+face", face.lo
                        elif all(lo == hi for lo, hi in pinned):
                            point = tuple(lo for lo, _ in pinned)
                            if confirmed(point):
                                return counterexample(point, "monotonicity: minimising corner, confirmed in arb")
        if not closed and defined and len(b) == 1 and _derivative_chain(problem, b):
            closed, lower = "monotonicity", arb(0)
        if not closed and defined:
            for t in touches:
                if _taylor2(problem, b, t):
                    closed, lower = "taylor2", arb(0)
                    break
        if closed:
            used.add(closed)
            certified_volume += _volume(b, widths)
            low = float(lower.lower()) if lower.is_finite() else None
            if low is not None and (min_lower is None or low < min_lower):
                min_lower = low
            continue
        split = _split_index(b, widths, min_width)
        if split is None:
            if len(uncertified) < MAX_REPORTED_BOXES:
                uncertified.append(b)
            open_region.add_box(b, ARB_MIN_WIDTH)
            why = "depth limit (min_width)"
            c = tuple((lo + hi) / 2 for lo, hi in b)
            mc = problem.f_margin(_point_args([_fmpq(v) for v in c]))
            if mc.lo.is_finite() and abs(float(mc.lo.mid())) < 1e-12:
                why = f"touching point near {_fmt_float(symbols, c)} where lhs = rhs"
            if state == "unknown":
                why = "constraint boundary not resolved at min_width"
            reason = reason or why
            continue
        i = split
        lo, hi = b[i]
        mid = (lo + hi) / 2
        for part in ((lo, mid), (mid, hi)):
            child = b[:i] + (part,) + b[i + 1:]
            # smallest margin lower bound first: counterexamples and hard boxes surface early
            key = float(lower.lower()) if lower.is_finite() else -math.inf
            heapq.heappush(heap, (key, next(counter), child, why_open))
    elapsed = time.perf_counter() - start
    base["arb_boxes"] = n_arb
    base["search_seconds"] = time.perf_counter() - search_start
    method = "+".join(["bisection", *sorted(used - {"bisection"})])
    if touches:
        notes.append("touching points (exact): " + "; ".join(str(_fmt_point(symbols, t.point)) for t in touches))
    if not heap and not reason:
        return Certificate(
            "certified", method, n_boxes, elapsed, min_margin_lower=min_lower,
            certified_fraction=1.0 - float(excluded_volume / total_volume) if total_volume else 1.0,
            excluded_fraction=float(excluded_volume / total_volume) if total_volume else 0.0,
            touching_points=[_fmt_point(symbols, t.point) for t in touches], **base,
        )
    for _, _, b, _ in heap[: max(0, MAX_REPORTED_BOXES - len(uncertified))]:
        uncertified.append(b)
    for _, _, b, why_open in heap:
        open_region.add_box(b, why_open)
    where = _open_region(open_region, symbols, box0, margin_at, seed, lambda point: _margin_in_region(problem, point))
    smallest = where.get("margin", {})
    if smallest.get("smallest") is not None and smallest["smallest"] - smallest["radius"] <= 0:
        point = tuple(Fraction(x) for x in smallest["at"].values())
        if confirmed(point):
            return counterexample(point, "open region: where the margin is smallest, confirmed in arb")
    if where:
        reason = "; ".join(filter(None, [reason, _open_sentence(where)]))
    return Certificate(
        "undecided", method, n_boxes, elapsed, min_margin_lower=min_lower,
        certified_fraction=float(certified_volume / total_volume) if total_volume else 0.0,
        excluded_fraction=float(excluded_volume / total_volume) if total_volume else 0.0,
        uncertified=[{s.name: (str(lo), str(hi)) for s, (lo, hi) in zip(symbols, b, strict=True)} for b in uncertified],
        reason=reason, touching_points=[_fmt_point(symbols, t.point) for t in touches], open_region=where,
        **base,
    )


#: an open region's smallest centre margin at most this fraction of the margin's typical size is
#: read as a touching set (the inequality is tight there), not as enclosures too wide for the budget
TOUCHING_RELATIVE = 1e-6
#: a point within this fraction of a variable's range from the region's end is "at" that end
AT_END_RELATIVE = 1e-6
#: the margin's typical size needs it defined at this many of the sample points
MIN_SCALE_POINTS = 16


def _margin_at(problem: _Problem, f_float, use_compiled: bool) -> Callable[[np.ndarray], np.ndarray] | None:
    """The margin's float value at each row of an array of points: compiled where the search is and
    the problem compiles, else the pre-filter's NumPy function; None when neither exists."""
    if use_compiled and problem.compiled is not None:
        return problem.compiled.centre_margins
    return f_float


def _margin_scale(margin_at, box0, seed: int, n: int = 257) -> float | None:
    """The margin's typical size on the region: the median of |m| at the centre and ``n − 1``
    seeded random points (None when it is defined at fewer than MIN_SCALE_POINTS of them)."""
    if margin_at is None:
        return None
    lo = np.array([float(a) for a, _ in box0])
    hi = np.array([float(b) for _, b in box0])
    points = np.vstack([(lo + hi)[None, :] / 2, lo + (hi - lo) * np.random.default_rng(seed).random((n - 1, len(lo)))])
    with np.errstate(all="ignore"):
        values = np.abs(np.asarray(margin_at(points), dtype=float))
    values = values[np.isfinite(values)]
    # a size read off a handful of points (the rest undefined) would make any value look small or large
    return float(np.median(values)) if len(values) >= MIN_SCALE_POINTS else None


def _interval_lower(problem: _Problem, lo, hi) -> arb | None:
    """The margin's lower end in arb on the box [lo, hi] of doubles, with its ends exact (None where
    it may be undefined)."""
    args = _intervals(tuple((Fraction(float(a)), Fraction(float(b))) for a, b in zip(lo, hi, strict=True)))
    m = problem.f_margin(args)
    return None if m.is_nan() else m.lo


def _margin_in_region(problem: _Problem, point) -> Interval | None:
    """The margin in arb at a point of doubles; None where the constraints do not certainly hold."""
    args = _point_args([_fmpq(Fraction(float(v))) for v in point])
    if problem.constraints and problem.constraint_state(args) != "true":
        return None
    return problem.f_margin(args)


def _open_region(region: OpenRegion, symbols, box0, margin_at, seed: int,
                 margin_arb: Callable[[np.ndarray], Interval | None]) -> dict:
    """The certificate's ``open_region`` (see :class:`Certificate`); empty when no box is open.

    The margin's smallest value there is looked for by a local minimisation of its float value
    (:func:`_refine`, inside the open boxes' hull) from the open box centre where it is smallest;
    at that centre and at the minimiser the margin is then evaluated in arb (doubles can be
    wrong by any amount where the margin cancels), and the smaller arb value is reported.
    """
    if not region.why:
        return {}
    hull = {s.name: (float(lo), float(hi)) for s, lo, hi in zip(symbols, region.lo, region.hi, strict=True)}
    where = {"boxes": sum(region.why.values()), "why": dict(region.why.most_common()), "volume": region.volume,
             "hull": hull}
    if region.smallest is None:
        return where

    hull_box = [(max(float(a), lo), min(float(b), hi)) for (a, b), lo, hi in zip(box0, region.lo, region.hi,
                                                                                 strict=True)]
    # a safety cap only: 14 rounds of 256 points take milliseconds
    refined = _refine(margin_at, region.smallest_at, hull_box, _Deadline(time.perf_counter(), 30.0))
    best = None
    for point in (region.smallest_at, refined):
        value = margin_arb(point)
        if value is None or value.is_nan():
            continue
        ball = value.lo.union(value.hi)
        if best is None or float(ball.mid()) < best[1]:
            best = (point, float(ball.mid()), float(ball.rad()))
    if best is None:
        # undefined in arb (a 0/0 on a touching set, say) or outside the constraints: the doubles'
        # value is given, but nothing is concluded from it
        where["margin"] = {"smallest": None, "float_value": region.smallest,
                           "at": _fmt_float(symbols, region.smallest_at), "at_ends": [], "undefined": True}
        return where
    at, smallest, radius = best
    scale = _margin_scale(margin_at, box0, seed)
    ends = [s.name for s, x, (lo, hi) in zip(symbols, at, box0, strict=True)
            if hi > lo and min(x - float(lo), float(hi) - x) <= AT_END_RELATIVE * float(hi - lo)]
    where["margin"] = {"smallest": smallest, "radius": radius, "at": _fmt_float(symbols, at), "scale": scale,
                       "at_ends": ends}
    if scale and abs(smallest) + radius <= TOUCHING_RELATIVE * scale:
        where["margin"]["touching"] = True
    elif radius >= abs(smallest) and radius > 0:
        where["margin"]["unresolved"] = True  # arb at the working precision cannot tell its sign
    elif scale:
        where["margin"]["touching"] = False
    return where


def _open_sentence(where: dict) -> str:
    """One sentence for an undecided certificate's reason: how many boxes are open, why, where, and
    how small the margin gets there."""
    def count(n: int) -> str:
        return f"{n:,}".replace(",", " ")

    def ends(lo: float, hi: float) -> str:
        # three significant digits, more where they would print a thin hull as a point
        digits = next((d for d in range(3, 18) if f"{lo:.{d}g}" != f"{hi:.{d}g}"), 3)
        return f"[{lo:.{digits}g}, {hi:.{digits}g}]"

    why = ", ".join(f"{count(n)} {name}" for name, n in where["why"].items())
    hull = ", ".join(f"{name} ∈ {ends(lo, hi)}" for name, (lo, hi) in where["hull"].items())
    sentence = f"open boxes ({count(where['boxes'])}: {why}; {where['volume']:.2g} of the volume) lie in {hull}"
    margin = where.get("margin")
    if margin and margin.get("undefined"):
        point = ", ".join(f"{name} = {x:.6g}" for name, x in margin["at"].items())
        sentence += (f"; where the margin looked smallest (at {point}, {margin['float_value']:.3g} in doubles) it is "
                     f"undefined in arb or a constraint fails there")
    elif margin:
        point = ", ".join(f"{name} = {x:.6g}" for name, x in margin["at"].items())
        sentence += f"; the margin there is as small as {margin['smallest']:.3g} (at {point}"
        if margin["at_ends"]:
            sentence += f", at the region's end in {', '.join(margin['at_ends'])}"
        sentence += ")"
        if margin.get("unresolved"):
            sentence += f", ±{margin['radius']:.2g} in arb: its sign is not resolved at the working precision"
        elif margin.get("touching") is not None:
            sentence += (f", {abs(margin['smallest']) / margin['scale']:.2g} of its typical size {margin['scale']:.3g}: "
                         + ("a touching set, where the inequality is tight" if margin["touching"] else
                            "it stays away from 0, so the enclosures are too wide for the budget"))
    return sentence


def _fmt_float(symbols, point) -> dict[str, float]:
    return {s.name: float(v) for s, v in zip(symbols, point, strict=True)}


def _volume(box, widths) -> Fraction:
    v = Fraction(1)
    for (lo, hi), w in zip(box, widths, strict=True):
        v *= (hi - lo) / w if hi > lo else 1
    return v


def _split_index(box, widths, min_width) -> int | None:
    """The widest variable (relative to its range) that may still be halved, or None.

    Whether a variable may be halved is the compiled search's rule,
    :func:`numerics.intervals.splittable` (the half at least ``min_width`` of the range or, on a
    box away from 0, of the distance to 0), decided on the box's ends as doubles.
    """
    best, best_w = None, 0.0
    for i, ((lo, hi), w) in enumerate(zip(box, widths, strict=True)):
        rel = float((hi - lo) / w)
        if rel > best_w and splittable(float(lo), float(hi), float(w), min_width):
            best, best_w = i, rel
    return best


def _split_at(box, point) -> list:
    pieces = [()]
    for (lo, hi), x in zip(box, point, strict=True):
        parts = [(lo, x), (x, hi)] if lo < x < hi else [(lo, hi)]
        pieces = [p + (q,) for p in pieces for q in parts]
    return pieces


def certify_inequality(
    ineq: RegionInequality,
    *,
    integers: Mapping[sp.Symbol, int] | None = None,
    box: Mapping[sp.Symbol, tuple] | None = None,
    open_shrink: float = 1e-9,
    **options,
) -> Certificate:
    """Certify a :class:`~derivations.core.RegionInequality` on its domain.

    The domain's intervals give the box (``box`` overrides single symbols). An *open* finite end
    is treated by shrinking: ``(lo, hi]`` becomes ``[lo + open_shrink*(hi - lo), hi]``, so the
    certificate covers the region minus a sliver of relative width ``open_shrink`` (recorded in
    ``notes``); an infinite end must be overridden through ``box`` (or the inequality
    reparameterised). The domain's constraints are passed on as ``constraints``. Integer symbols
    of the domain need a value in ``integers``.
    """
    integers = dict(integers or {})
    missing = [s.name for s in ineq.domain.integers if s not in integers]
    if missing:
        raise InvalidArgument(f"{ineq.id}: integer symbols {missing} need values; pass integers={{...}}")
    free = sp.sympify(ineq.lhs).free_symbols | sp.sympify(ineq.rhs).free_symbols
    for c in ineq.domain.constraints:
        free |= c.relation.free_symbols
    region: dict[sp.Symbol, tuple] = {}
    notes = []
    for sym in sorted(free - set(integers), key=lambda s: s.name):
        if box and sym in box:
            region[sym] = box[sym]
            continue
        if sym not in ineq.domain.intervals:
            raise InvalidArgument(f"{ineq.id}: symbol {sym.name} has no interval in the domain; pass box={{...}}")
        iv = ineq.domain.intervals[sym]
        if not (math.isfinite(iv.lo) and math.isfinite(iv.hi)):
            raise InvalidArgument(
                f"{ineq.id}: {sym.name} in {iv} is unbounded; pass a finite box={{{sym.name}: (lo, hi)}} "
                f"or reparameterise"
            )
        lo, hi = _fraction(iv.lo), _fraction(iv.hi)
        eps = _fraction(open_shrink) * (hi - lo)
        if iv.lo_open:
            lo += eps
        if iv.hi_open:
            hi -= eps
        if iv.lo_open or iv.hi_open:
            notes.append(f"{sym.name}: open end(s) of {iv} shrunk by {open_shrink:g} of the range")
        region[sym] = (lo, hi)
    cert = certify(
        ineq.lhs, ineq.rhs, region, strict=ineq.strict, integers=integers,
        constraints=[c.relation for c in ineq.domain.constraints], **options,
    )
    cert.notes[:0] = notes
    return cert


__all__ = ["Certificate", "certify", "certify_inequality"]
