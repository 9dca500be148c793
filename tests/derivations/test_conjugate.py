"""Tests of ``derivations.conjugate``: the conjugate form equals the sum (50-digit evaluation), cancels what
expansion can cancel, and leaves sums without cancellation alone."""

import mpmath
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.conjugate import rationalise_cancellations

u, x, y = sp.symbols("u x y", positive=True)


def test_w_circ_numerator_cancels_to_16u():
    """3 − 4u − √((4u − 3)² − 16u) = 16u / (3 − 4u + √(…)): the form of [W] Eq. (11)'s w° near w* = 0."""
    expr = 3 - 4 * u - sp.sqrt((4 * u - 3) ** 2 - 16 * u)
    rewritten, count = rationalise_cancellations(expr)
    assert count == 1
    assert sp.simplify(rewritten - 16 * u / (3 - 4 * u + sp.sqrt((4 * u - 3) ** 2 - 16 * u))) == 0
    with mpmath.workdps(60):
        tiny = sp.Rational(1, 10**30)
        exact = sp.N(expr.subs(u, tiny), 60)
        assert abs(sp.N(rewritten.subs(u, tiny), 60) / exact - 1) < 1e-50


def test_sums_without_cancellation_are_left_alone():
    for expr in (x - sp.sqrt(y), 1 + sp.sqrt(x)):
        assert rationalise_cancellations(expr) == (expr, 0)
    # x + √(x² + y) cancels for x < 0 only: at points with x > 0 its conjugate would cancel instead
    z = sp.Symbol("z", real=True)
    expr = z + sp.sqrt(z**2 + y)
    assert rationalise_cancellations(expr, [{z: 2, y: 1}, {z: 5, y: 3}]) == (expr, 0)
    assert rationalise_cancellations(expr, [{z: -2, y: 1}, {z: -5, y: 3}])[1] == 1


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 5), st.fractions(min_value=1, max_value=5))
def test_rewrite_equals_the_sum_at_50_digits(a, b, power, point):
    """P − √(P² − c·x^k) for random P, c, k: the conjugate form has the sum's value (and is used only then)."""
    P = a + b * x**power
    expr = P - sp.sqrt(P**2 - b * x**power)
    rewritten, count = rationalise_cancellations(expr)
    assert count == 1
    at = {x: sp.Rational(point.numerator, point.denominator)}
    assert abs(sp.N(expr.subs(at), 50) - sp.N(rewritten.subs(at), 50)) < sp.Float(10) ** -45
