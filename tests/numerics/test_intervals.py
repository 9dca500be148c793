"""Tests of ``numerics.intervals``: every enclosure holds the exact value (arb at 128 bits, Fractions),
every box the compiled search closes holds the inequality at every point arb checks, and the search
is the same on every run."""

import math
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from flint import arb, ctx
from hypothesis import given, settings
from hypothesis import strategies as st

from checks._arb_printer import Interval, interval_function
from checks._arb_tape import ball_function, box_balls
from derivations.errors import InvalidArgument
from numerics import intervals as I

x, y = sp.symbols("x y", real=True)

_LEAVES = st.sampled_from([x, y, sp.Integer(2), sp.Rational(1, 3), sp.Rational(-5, 7), sp.pi, sp.Float(0.1)])


def _unary(e):
    return st.sampled_from([
        sp.exp(e / 4), sp.log(1 + e**2), sp.sqrt(e**2 + sp.Rational(1, 10)), e**3, e**-2 if e != 0 else e,
        (e**2 + 1) ** sp.Rational(1, 3), (e**2 + 2) ** sp.Rational(-3, 2), sp.tanh(e), sp.atan(e), sp.Abs(e),
        sp.sinh(e / 3), sp.cosh(e / 3), sp.erf(e), -e,
    ])


def _binary(children):
    return st.tuples(children, children, st.sampled_from(["add", "mul", "div", "min", "max", "sub"])).map(
        lambda t: {"add": t[0] + t[1], "mul": t[0] * t[1], "div": t[0] / (t[1] ** 2 + 1), "min": sp.Min(t[0], t[1]),
                   "max": sp.Max(t[0], t[1]), "sub": t[0] - t[1]}[t[2]])


EXPRESSIONS = st.recursive(_LEAVES, lambda children: st.one_of(children.flatmap(_unary), _binary(children)),
                           max_leaves=8)
BOXES = st.tuples(st.floats(-3, 3), st.floats(0, 2), st.floats(-3, 3), st.floats(0, 2)).map(
    lambda t: ((t[0], t[0] + t[1]), (t[2], t[2] + t[3])))


def _enclosure(tape, lo, hi, with_grad=False):
    n = tape.n_slots
    vlo, vhi = np.empty(n), np.empty(n)
    dlo, dhi = np.empty((n, 2)), np.empty((n, 2))
    I.evaluate(tape.ops, tape.const_lo, tape.const_hi, np.array(lo, float), np.array(hi, float), vlo, vhi, dlo, dhi,
               with_grad)
    s = tape.outputs[0]
    return (vlo[s], vhi[s]), (dlo[s], dhi[s])


def _points(box, n=5, seed=0):
    rng = np.random.default_rng(seed)
    (a, b), (c, d) = box
    out = [(a, c), (b, d), (a, d), (b, c), ((a + b) / 2, (c + d) / 2)]
    out += [(a + (b - a) * u, c + (d - c) * v) for u, v in rng.random((n, 2))]
    return out


def _contains(lo, hi, ball: arb) -> bool:
    """[lo, hi] holds some value of the ball: no exact value can be proven outside."""
    return not (ball < arb(lo)) and not (ball > arb(hi))


@settings(max_examples=150, deadline=None)
@given(EXPRESSIONS, BOXES)
def test_enclosure_holds_arb_values_at_points(expr, box):
    """The compiled enclosure of the box holds arb's 128-bit value at corners, centre and random points."""
    ctx.prec = 128
    tape = I.compile_tape([expr], [x, y])
    (lo, hi), _ = _enclosure(tape, [box[0][0], box[1][0]], [box[0][1], box[1][1]])
    if math.isnan(lo):
        return  # undefined somewhere on the box: nothing claimed
    f = interval_function(expr, [x, y])
    for p in _points(box):
        value = f([Interval.point(arb(p[0])), Interval.point(arb(p[1]))])
        if value.is_nan():
            continue
        assert _contains(lo, hi, value.lo.union(value.hi)), (expr, box, p, lo, hi, value)


@settings(max_examples=100, deadline=None)
@given(EXPRESSIONS, st.lists(BOXES, min_size=1, max_size=4))
def test_centre_values_are_the_value_at_each_box_centre(expr, boxes):
    """``centre_values`` gives, per row, a float within the point enclosure at the box's centre, which holds
    arb's 128-bit value there: NaN exactly where that enclosure is undefined or the constraint y ≥ x fails."""
    ctx.prec = 128
    tape = I.compile_tape([expr, y - x], [x, y])
    lo = np.array([[b[0][0], b[1][0]] for b in boxes])
    hi = np.array([[b[0][1], b[1][1]] for b in boxes])
    values = I.centre_values(tape.ops, tape.const_lo, tape.const_hi, lo, hi, tape.outputs[0],
                             np.array([tape.outputs[1]]), np.array([False]))
    f = interval_function(expr, [x, y])
    for value, a, b in zip(values, lo, hi, strict=True):
        centre = 0.5 * a + 0.5 * b
        if Fraction(centre[1]) < Fraction(centre[0]):
            assert math.isnan(value)
            continue
        (elo, ehi), _ = _enclosure(tape, centre, centre)
        if math.isnan(elo) or math.isnan(ehi):
            assert math.isnan(value)
            continue
        assert elo <= value <= ehi or (math.isinf(elo) and math.isinf(ehi) and math.isnan(value))
        exact = f([Interval.point(arb(centre[0])), Interval.point(arb(centre[1]))])
        if not exact.is_nan():
            assert _contains(elo, ehi, exact.lo.union(exact.hi)), (expr, centre, elo, ehi, exact)


@settings(max_examples=100, deadline=None)
@given(EXPRESSIONS, BOXES)
def test_gradient_enclosure_holds_arb_derivatives(expr, box):
    """Forward-mode enclosures of ∂f/∂x and ∂f/∂y hold arb's value of SymPy's derivatives at points."""
    ctx.prec = 128
    tape = I.compile_tape([expr], [x, y])
    (lo, _), (dlo, dhi) = _enclosure(tape, [box[0][0], box[1][0]], [box[0][1], box[1][1]], with_grad=True)
    if math.isnan(lo):
        return
    for j, s in enumerate((x, y)):
        if not (math.isfinite(dlo[j]) and math.isfinite(dhi[j])):
            continue
        derivative = sp.diff(expr, s)
        if derivative.has(sp.Subs, sp.Derivative, sp.sign, sp.Heaviside, sp.DiracDelta):
            continue  # Abs, Min, Max: the Clarke enclosure is not SymPy's piecewise derivative
        try:
            f = interval_function(derivative, [x, y])
        except InvalidArgument:
            continue
        for p in _points(box, n=3):
            value = f([Interval.point(arb(p[0])), Interval.point(arb(p[1]))])
            if not value.is_nan():
                assert _contains(dlo[j], dhi[j], value.lo.union(value.hi)), (expr, s, box, p)


@settings(max_examples=200, deadline=None)
@given(st.fractions(min_value=-1000, max_value=1000, max_denominator=10**6), st.integers(0, 9))
def test_integer_powers_and_constants_are_rigorous(q, n):
    """x**n on the double enclosure of a rational holds the exact rational power (Fractions, no rounding)."""
    lo, hi = I.float_enclosure(q)
    assert Fraction(lo) <= q <= Fraction(hi)
    plo, phi = I._ipow(lo, hi, n)
    assert Fraction(plo) <= q**n <= Fraction(phi)
    rlo, rhi = I._recip(lo, hi)
    if q != 0 and not (lo <= 0 <= hi):
        assert Fraction(rlo) <= 1 / q <= Fraction(rhi)


@settings(max_examples=60, deadline=None)
@given(EXPRESSIONS, BOXES)
def test_compiled_search_never_closes_a_box_arb_refutes(expr, box):
    """Every leaf the search closes for expr >= 0 holds expr >= 0 at arb-evaluated points, and its arb
    re-check (the certificate's second method) never proves the opposite."""
    ctx.prec = 128
    tape = I.compile_tape([expr], [x, y])
    cap = 2000
    stack_lo, stack_hi = np.empty((cap + 2, 2)), np.empty((cap + 2, 2))
    stack_lo[0], stack_hi[0] = (box[0][0], box[1][0]), (box[0][1], box[1][1])
    leaf_lo, leaf_hi = np.empty((cap + 2, 2)), np.empty((cap + 2, 2))
    kind, aux = np.zeros(cap + 2, np.int64), np.zeros((cap + 2, 2))
    open_lo, open_hi, why = np.empty((cap + 2, 2)), np.empty((cap + 2, 2)), np.zeros(cap + 2, np.int64)
    state, candidate = np.array([1, 0, 0, 0, 0, 0]), np.empty(2)
    I.branch_and_bound(tape.ops, tape.const_lo, tape.const_hi, tape.outputs[0], np.zeros(0, np.int64),
                       np.zeros(0, np.bool_), False, stack_lo, stack_hi, stack_lo[0].copy(), stack_hi[0].copy(),
                       1e-6, cap, leaf_lo, leaf_hi, kind, aux, open_lo, open_hi, why, state, candidate)
    f = interval_function(expr, [x, y])
    for i in range(state[1]):
        leaf = ((leaf_lo[i, 0], leaf_hi[i, 0]), (leaf_lo[i, 1], leaf_hi[i, 1]))
        for p in _points(leaf, n=2, seed=i):
            value = f([Interval.point(arb(p[0])), Interval.point(arb(p[1]))])
            assert not (value.hi < 0), (expr, leaf, p)
    ball = ball_function(tape, with_grad=False)
    for i in range(min(state[1], 50)):
        m = ball(box_balls(leaf_lo[i], leaf_hi[i]))[0][0]
        assert not (m < 0), (expr, i)


def test_the_search_is_the_same_on_every_run():
    """Budgets in boxes: two searches of the same problem end in the same state, leaf for leaf."""
    expr = sp.exp(x) - 1 - x - x**2 / 2 + sp.Rational(1, 1000) * y
    tape = I.compile_tape([expr], [x, y])
    runs = []
    for _ in range(2):
        cap = 3000
        stack_lo, stack_hi = np.zeros((cap + 2, 2)), np.zeros((cap + 2, 2))
        stack_lo[0], stack_hi[0] = (-1, 0), (1, 1)
        leaf_lo, leaf_hi = np.zeros((cap + 2, 2)), np.zeros((cap + 2, 2))
        kind, aux = np.zeros(cap + 2, np.int64), np.zeros((cap + 2, 2))
        open_lo, open_hi, why = np.zeros((cap + 2, 2)), np.zeros((cap + 2, 2)), np.zeros(cap + 2, np.int64)
        state, candidate = np.array([1, 0, 0, 0, 0, 0]), np.zeros(2)
        I.branch_and_bound(tape.ops, tape.const_lo, tape.const_hi, tape.outputs[0], np.zeros(0, np.int64),
                           np.zeros(0, np.bool_), False, stack_lo, stack_hi, np.array([-1.0, 0.0]),
                           np.array([1.0, 1.0]), 1e-9, cap, leaf_lo, leaf_hi, kind, aux, open_lo, open_hi, why,
                           state, candidate)
        runs.append((state.copy(), leaf_lo.copy(), leaf_hi.copy(), kind.copy(), open_lo.copy()))
    for a, b in zip(*runs, strict=True):
        assert np.array_equal(a, b)


def _search(tape, boxes, region, min_width, max_boxes, rows, chunk, head):
    """branch_and_bound from ``boxes`` ((lo, hi) rows) queued from row ``head`` of a queue of ``rows`` rows,
    resumed every ``chunk`` boxes: the final state, and the closed leaves (ends, kind) and open boxes (ends,
    why) in the order recorded."""
    nv = len(region[0])
    queue_lo, queue_hi = np.zeros((rows, nv)), np.zeros((rows, nv))
    for k, (lo, hi) in enumerate(boxes):
        queue_lo[(head + k) % rows], queue_hi[(head + k) % rows] = lo, hi
    n = max_boxes + 2
    leaf_lo, leaf_hi, aux = np.zeros((n, nv)), np.zeros((n, nv)), np.zeros((n, nv))
    kind = np.zeros(n, np.int64)
    open_lo, open_hi, why = np.zeros((n, nv)), np.zeros((n, nv)), np.zeros(n, np.int64)
    state, candidate = np.array([len(boxes), 0, 0, 0, 0, head]), np.zeros(nv)
    while True:
        limit = min(max_boxes, state[3] + chunk)
        I.branch_and_bound(tape.ops, tape.const_lo, tape.const_hi, tape.outputs[0], np.zeros(0, np.int64),
                           np.zeros(0, np.bool_), False, queue_lo, queue_hi, np.array(region[0], float),
                           np.array(region[1], float), min_width, limit, leaf_lo, leaf_hi, kind, aux, open_lo,
                           open_hi, why, state, candidate)
        if state[4] != I.BUDGET or limit == max_boxes:
            break
    leaves = [(*leaf_lo[i], *leaf_hi[i], kind[i]) for i in range(state[1])]
    opened = [(*open_lo[i], *open_hi[i], why[i]) for i in range(state[2])]
    return state, leaves, opened


def test_a_search_that_ends_closes_the_same_boxes_in_any_order():
    """What happens to a box depends on the box alone, so a search that runs to the end closes and hands on
    the same boxes breadth-first (in one call, or resumed every 7 boxes), depth-first from the tail while 40
    or more boxes are queued, and depth-first throughout; only the order differs. The 64 starting boxes are
    queued across the end of the ring buffer, so that both ends wrap around. (x − 0.7y)² ≥ 0, expanded, is
    tight along a line: ~9000 boxes, leaves and open boxes."""
    tape = I.compile_tape([x**2 - sp.Rational(7, 5) * x * y + sp.Rational(49, 100) * y**2], [x, y])
    grid = [((i / 8, j / 8), ((i + 1) / 8, (j + 1) / 8)) for i in range(8) for j in range(8)]
    reserve, budget = I.DEPTH_RESERVE * 2, 100_000
    big, small = budget + reserve + 100, reserve + 40
    runs = [_search(tape, grid, ((0, 0), (1, 1)), 1e-3, budget, rows, chunk, head)
            for rows, chunk, head in [(big, budget, 0), (big, 7, big - 30), (small, 1000, small - 30),
                                      (reserve + 1, budget, reserve - 30)]]
    first, leaves, opened = runs[0]
    assert first[0] == 0 and first[4] == I.DONE and first[3] > small
    assert len(leaves) > 1000 and len(opened) > 1000
    for state, other_leaves, other_opened in runs[1:]:
        assert np.array_equal(state[:5], first[:5])
        assert sorted(other_leaves) == sorted(leaves) and sorted(other_opened) == sorted(opened)
    assert runs[1][1] == leaves  # resumed in chunks, from another row: the same search
    assert runs[2][1] != leaves and runs[3][1] != runs[2][1] != leaves  # other orders


def test_exact_zeros_stay_exact_and_underflow_does_not():
    """An end at 0 that is exact (a factor 0, or a sum that rounds to 0, which with gradual underflow is
    exact) is kept; a product that underflows to 0 is not exact and is moved outward."""
    assert I._mul(-1.0, 0.0, -1.0, 0.0) == (0.0, np.nextafter(1.0, 2.0))
    assert I._add(1.0, 1.0, -1.0, -1.0) == (0.0, 0.0)
    assert I._add(0.0, 0.5, 0.25, 0.25) == (0.25, np.nextafter(0.75, 1.0))
    lo, hi = I._mul(-1e-200, -1e-200, 1e-200, 1e-200)  # −10⁻⁴⁰⁰ rounds to −0.0
    assert lo < 0.0 <= hi
    lo, hi = I._mul(1e-200, 1e-200, 1e-200, 1e-200)  # +10⁻⁴⁰⁰ rounds to 0.0
    assert lo <= 0.0 < hi
    lo, hi = I._add(0.1, 0.1, 0.2, 0.2)
    assert lo < 0.1 + 0.2 < hi


def test_an_unknown_function_is_refused_by_name():
    with pytest.raises(InvalidArgument, match="besselj"):
        I.compile_tape([sp.besselj(0, x)], [x])


def test_a_symbol_without_range_is_refused():
    with pytest.raises(InvalidArgument, match="y has no range"):
        I.compile_tape([x + y], [x])


def test_undefined_values_give_nan():
    """log and √ of an interval reaching below their domain, and 1/[−1, 1], claim nothing."""
    for expr in (sp.log(x), sp.sqrt(x), 1 / x, x ** sp.Rational(1, 3)):
        tape = I.compile_tape([expr], [x])
        lo, hi = I.evaluate_at(tape.ops, tape.const_lo, tape.const_hi, np.array([-1.0]), np.array([1.0]),
                               tape.outputs[0])
        assert math.isnan(lo) and math.isnan(hi), expr


@pytest.mark.parametrize("func", [sp.exp, sp.log, sp.sqrt, sp.tanh, sp.atan, sp.sinh, sp.cosh, sp.erf, sp.Abs,
                                  lambda e: e**5, lambda e: e**-3, lambda e: e ** sp.Rational(2, 3),
                                  lambda e: e ** sp.Rational(-5, 2), lambda e: 1 / e])
@pytest.mark.parametrize("box", [(0.25, 0.5), (1.5, 3.0), (0.9, 0.91), (2.0, 2.0)])
def test_each_function_value_and_derivative_hold_arb(func, box):
    """Every op of the tape, alone, on boxes away from its singular points: value and derivative enclosures
    hold arb's values at 9 points (a deterministic complement of the random-expression properties)."""
    ctx.prec = 128
    expr = func(x)
    tape = I.compile_tape([expr], [x])
    n = tape.n_slots
    vlo, vhi, dlo, dhi = np.empty(n), np.empty(n), np.empty((n, 1)), np.empty((n, 1))
    I.evaluate(tape.ops, tape.const_lo, tape.const_hi, np.array([box[0]]), np.array([box[1]]), vlo, vhi, dlo, dhi,
               True)
    s = tape.outputs[0]
    f, g = interval_function(expr, [x]), interval_function(sp.diff(expr, x), [x])
    for t in np.linspace(0, 1, 9):
        p = [Interval.point(arb(box[0] + (box[1] - box[0]) * t))]
        value, slope = f(p), g(p)
        assert _contains(vlo[s], vhi[s], value.lo.union(value.hi)), (expr, box, t)
        assert _contains(dlo[s, 0], dhi[s, 0], slope.lo.union(slope.hi)), (expr, box, t)
