"""Tests of the Gaussian/Rademacher expectation engine (§9 item 3 of the induction-head spec).

Covers ih.cf.lemma7 (Lemma 7, App. D), ih.cf.L_IH2 (C.3.2, Eq. (10)) and the Boolean closed forms
of ih.dv.boolean. Every closed form is checked against a route that does not share the engine's
method: SymPy integration against the Gaussian density, power series in the coupling, explicit
expansion at concrete L, or Monte-Carlo.
"""

from __future__ import annotations

import math
import re

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, note, settings
from hypothesis import strategies as st
from sympy.core.function import AppliedUndef

from derivations.errors import InvalidArgument
from derivations.expectation import (
    L_SYMBOL,
    LAWS,
    IndexRange,
    Pattern,
    expect_square,
    expect_sum_product,
    gaussian_expectation,
    rademacher_expectation,
    second_moment_conditions,
    x,
)

X, Y, Z = sp.symbols("X Y Z")
a, b = sp.symbols("a b", real=True)
L = L_SYMBOL
s = sp.Symbol("s", integer=True)
hs, h, vs, v = sp.symbols("h_star h v_star v", real=True)
n = L - 2


def numerically_equal(lhs, rhs, points, digits=50, tol=1e-40):
    """lhs == rhs at every substitution in ``points`` (mpmath at ``digits`` digits)."""
    for point in points:
        diff = sp.N((lhs - rhs).subs(point), digits)
        assert abs(diff) < tol, (point, diff)


def gaussian_density_expectation(f, variables):
    """E[f] by iterated SymPy integration against the N(0, 1) density (independent route)."""
    out = f
    for var in variables:
        density = sp.exp(-(var**2) / 2) / sp.sqrt(2 * sp.pi)
        out = sp.integrate(out * density, (var, -sp.oo, sp.oo))
    return sp.simplify(out)


# --------------------------------------------------------------------------------------------
# Level 1: Lemma 7 and its Boolean analogue
# --------------------------------------------------------------------------------------------


def test_lemma7_value_and_domain():
    res = gaussian_expectation(sp.exp(a * X * Y) * Z**2, [X, Y, Z])
    assert sp.simplify(res.value - (1 - a**2) ** sp.Rational(-1, 2)) == 0
    assert res.certificate == ""
    domain = sp.And(*res.conditions)
    for val in [-3, -2, -1, sp.Rational(-1, 2), 0, sp.Rational(99, 100), 1, 2]:
        assert bool(domain.subs(a, val)) == (val**2 < 1), val
    # The printed domain "a < 1" admits a = -2, where the expectation diverges.
    assert (sp.Integer(-2) < 1) and domain.subs(a, -2) is sp.false


def test_lemma7_against_direct_integration_and_quadrature():
    half = sp.Rational(1, 2)
    res = gaussian_expectation(sp.exp(half * X * Y) * Z**2, [X, Y, Z])
    direct = gaussian_density_expectation(sp.exp(half * X * Y), [X, Y])  # E Z^2 = 1 separately
    assert sp.simplify(res.value - direct) == 0
    # 1-D quadrature in Y of E_X e^{aXY} = e^{a^2 Y^2/2}, at a negative a (inside |a| < 1).
    mpmath.mp.dps = 30
    aval = mpmath.mpf("-0.6")
    quad = mpmath.quad(lambda y: mpmath.exp((aval**2 - 1) * y**2 / 2) / mpmath.sqrt(2 * mpmath.pi),
                       [-mpmath.inf, mpmath.inf])
    symbolic = gaussian_expectation(sp.exp(a * X * Y) * Z**2, [X, Y, Z]).value.subs(a, sp.Rational(-3, 5))
    assert abs(quad - mpmath.mpf(sp.N(symbolic, 30))) < mpmath.mpf("1e-25")


def test_lemma7_diverges_for_numeric_parameter_outside_domain():
    with pytest.raises(InvalidArgument, match="not positive definite"):
        gaussian_expectation(sp.exp(-2 * X * Y) * Z**2, [X, Y, Z])


def test_rademacher_lemma7_analogue():
    res = rademacher_expectation(sp.exp(a * X * Y) * Z**2, [X, Y, Z])
    assert sp.simplify(res.value - sp.cosh(a)) == 0
    assert res.conditions == ()
    assert sp.simplify(rademacher_expectation(sp.exp(2 * a * X * Y) * Z**2, [X, Y, Z]).value
                       - sp.cosh(2 * a)) == 0


# --------------------------------------------------------------------------------------------
# Level 1: moments
# --------------------------------------------------------------------------------------------


def test_isserlis_moments():
    from sympy.stats import E, Normal

    N = Normal("N", 0, 1)
    assert gaussian_expectation(X**4, [X]).value == 3 == E(N**4)
    assert gaussian_expectation(X**6, [X]).value == 15 == E(N**6)
    assert gaussian_expectation(X**2 * Y**2, [X, Y]).value == 1
    assert gaussian_expectation(X**3 * Y, [X, Y]).value == 0
    assert gaussian_expectation((X + Y) ** 4, [X, Y]).value == 12  # X + Y ~ N(0, 2): 3 * 2**2
    assert rademacher_expectation((X + Y) ** 4, [X, Y]).value == 8  # 2 + 6 E X^2 Y^2
    assert gaussian_expectation(sp.Integer(7), []).value == 7


def test_bilinear_moment_symbolic_and_direct():
    res = gaussian_expectation(X * Y * sp.exp(b * X * Y), [X, Y])
    assert sp.simplify(res.value - b * (1 - b**2) ** sp.Rational(-3, 2)) == 0
    third = sp.Rational(1, 3)
    direct = gaussian_density_expectation(X * Y * sp.exp(third * X * Y), [X, Y])
    assert sp.simplify(res.value.subs(b, third) - direct) == 0


def test_quadratic_with_diagonal_against_direct_integration():
    f = X**2 * Y**2 * sp.exp(X * Y / 3 + X**2 / 5)
    res = gaussian_expectation(f, [X, Y])
    assert sp.simplify(res.value - gaussian_density_expectation(f, [X, Y])) == 0
    assert all(c is sp.true or bool(c) for c in res.conditions)


def test_linear_exponent_against_quadrature():
    t = sp.Symbol("t", real=True)
    res = gaussian_expectation(X**3 * sp.exp(t * X), [X])
    assert sp.simplify(res.value - (t**3 + 3 * t) * sp.exp(t**2 / 2)) == 0
    assert sp.simplify(rademacher_expectation(X * sp.exp(t * X), [X]).value - sp.sinh(t)) == 0
    assert sp.simplify(gaussian_expectation(sp.cosh(t * X), [X]).value - sp.exp(t**2 / 2)) == 0
    mpmath.mp.dps = 30
    quad = mpmath.quad(lambda u: u**3 * mpmath.exp(u / 2 - u**2 / 2) / mpmath.sqrt(2 * mpmath.pi),
                       [-mpmath.inf, 0, mpmath.inf])
    assert abs(quad - mpmath.mpf(sp.N(res.value.subs(t, sp.Rational(1, 2)), 30))) < mpmath.mpf("1e-25")


def _series(i, j, coupling, law, terms=160):
    """E[X^i Y^j e^{cXY}] = sum_k c^k/k! E[X^{i+k}] E[Y^{j+k}] (independent route)."""

    def moment(k):
        if k % 2:
            return 0
        return math.prod(range(k - 1, 0, -2)) if law == "gaussian" else 1

    c = mpmath.mpf(coupling.p) / coupling.q
    return mpmath.fsum(c**k / mpmath.factorial(k) * moment(i + k) * moment(j + k) for k in range(terms))


@settings(max_examples=25)
@given(
    i=st.integers(0, 3),
    j=st.integers(0, 3),
    k=st.integers(-40, 40),
    law=st.sampled_from(LAWS),
)
@example(i=1, j=1, k=30, law="gaussian")
@example(i=0, j=0, k=-40, law="rademacher")
def test_bilinear_moments_against_power_series(i, j, k, law):
    coupling = sp.Rational(k, 100)
    expect = gaussian_expectation if law == "gaussian" else rademacher_expectation
    res = expect(X**i * Y**j * sp.exp(coupling * X * Y), [X, Y])
    mpmath.mp.dps = 40
    assert abs(mpmath.mpf(sp.N(res.value, 40)) - _series(i, j, coupling, law)) < mpmath.mpf("1e-30")


# --------------------------------------------------------------------------------------------
# Level 1: certificates and second moments
# --------------------------------------------------------------------------------------------


def test_vanishing_term_certificate_names_the_linear_variable():
    res = gaussian_expectation(X * Z * sp.exp(a * X * Y), [X, Y, Z])
    assert res.value == 0
    assert "Z appears to the odd power 1" in res.certificate
    assert res.conditions  # the symmetry argument still needs E|term| < oo
    block = gaussian_expectation(X * sp.exp(a * X * Y), [X, Y])
    assert block.value == 0 and "odd powers: X" in block.certificate
    assert gaussian_expectation(Z**2 * sp.exp(a * X * Y), [X, Y, Z]).certificate == ""


def test_second_moment_conditions_heavy_tail_guard():
    conds = second_moment_conditions(sp.exp(a * X * Y) * Z**2, [X, Y, Z])
    guard = sp.And(*conds)
    for val, finite in [(sp.Rational(45, 100), True), (sp.Rational(55, 100), False),
                        (sp.Rational(-55, 100), False), (0, True)]:
        assert bool(guard.subs(a, val)) is finite
    assert second_moment_conditions(sp.exp(a * X * Y) * Z**2, [X, Y, Z], law="rademacher") == ()


# --------------------------------------------------------------------------------------------
# Level 1: invalid input
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "variables", "match"),
    [
        (sp.sin(X) * Y, [X, Y], r"sin\(X\)"),
        (sp.sqrt(X), [X], "non-negative integer power"),
        (sp.exp(X**3), [X], "degree 3"),
        (sp.exp(sp.sin(X)), [X], "not a polynomial"),
        (X * Y, [X, X], "lists X twice"),
        (X, ["X"], "not a sympy Symbol"),
        (X, "X", "list of sympy Symbols"),
        (X, [X + 1], "not a sympy Symbol"),
    ],
)
def test_invalid_level1_input(expr, variables, match):
    with pytest.raises(InvalidArgument, match=match):
        gaussian_expectation(expr, variables)


def test_unknown_law_lists_choices():
    pat = Pattern(x(s), s)
    with pytest.raises(InvalidArgument, match="gaussian"):
        expect_sum_product(pat, IndexRange(1, L), pat, IndexRange(1, L), law="gausian")


# --------------------------------------------------------------------------------------------
# Level 2: the exp-simplified induction-head loss (ih.cf.L_IH2, Eq. (10)) and ih.dv.boolean
# --------------------------------------------------------------------------------------------

TARGET = Pattern(sp.exp(vs * x(L) * x(s - 1)) * x(s), s)
MODEL = Pattern(sp.exp(v * x(L) * x(s - 1)) * x(s), s)
CANONICAL, LITERAL = IndexRange(2, L - 1), IndexRange(2, L - 2)


def ih_loss(model_range, law):
    res = expect_square([(hs / n, TARGET, CANONICAL), (-h / n, MODEL, model_range)], law=law)
    return sp.Rational(1, 2) * res.value, res


def psi(u):
    return (1 - u**2) ** sp.Rational(-1, 2)


EQ10_CANONICAL = hs**2 / (2 * n) * psi(2 * vs) + h**2 / (2 * n) * psi(2 * v) - h * hs / n * psi(v + vs)
EQ10_LITERAL = (hs**2 / (2 * n) * psi(2 * vs)
                + (L - 3) / (L - 2) * (h**2 / (2 * n) * psi(2 * v) - h * hs / n * psi(v + vs)))
BOOLEAN_CANONICAL = (hs**2 * sp.cosh(2 * vs) + h**2 * sp.cosh(2 * v) - 2 * h * hs * sp.cosh(v + vs)) / (2 * n)


POINTS = [
    {hs: sp.Rational(1, 2), h: sp.Rational(7, 10), vs: sp.Rational(1, 5), v: sp.Rational(1, 10)},
    {hs: sp.Rational(2, 3), h: sp.Rational(-1, 4), vs: sp.Rational(24, 100), v: sp.Rational(-2, 7)},
]


@pytest.mark.parametrize(("model_range", "expected"), [(CANONICAL, EQ10_CANONICAL), (LITERAL, EQ10_LITERAL)])
def test_ih_loss_gaussian_closed_form(model_range, expected):
    value, res = ih_loss(model_range, "gaussian")
    assert sp.simplify(value - expected) == 0
    # Existence: finite at (w, w*) = (0.6, 0.6) (v = 0.36), infinite once 4 v*^2 >= 1 (w* >= 1/sqrt 2).
    domain = sp.And(*res.conditions)
    assert domain.subs({v: sp.Rational(36, 100), vs: sp.Rational(36, 100)}) is sp.true
    assert domain.subs({v: sp.Rational(1, 10), vs: sp.Rational(9, 16)}) is sp.false
    assert domain.subs({v: sp.Rational(-6, 10), vs: sp.Rational(1, 10)}) is sp.false


def test_ih_loss_canonical_vs_literal_differ():
    canonical, _ = ih_loss(CANONICAL, "gaussian")
    literal, _ = ih_loss(LITERAL, "gaussian")
    point = {**POINTS[0], L: 10}
    assert abs(sp.N((canonical - literal).subs(point))) > 1e-3


def explicit_ih_loss(Lv, model_hi, law, target_hi=None):
    """½E[(...)²] by writing the two sums out at concrete L and using Level 1 (independent route)."""
    xs = sp.symbols(f"X1:{Lv + 1}")
    target_hi = Lv - 1 if target_hi is None else target_hi
    target = sum(sp.exp(vs * xs[Lv - 1] * xs[t - 2]) * xs[t - 1] for t in range(2, target_hi + 1))
    model = sum(sp.exp(v * xs[Lv - 1] * xs[t - 2]) * xs[t - 1] for t in range(2, model_hi + 1))
    expr = (hs * target - h * model) ** 2 / (2 * (Lv - 2) ** 2)
    expect = gaussian_expectation if law == "gaussian" else rademacher_expectation
    return expect(expr, list(xs)).value


@pytest.mark.parametrize("Lv", [5, 6, 7])
@pytest.mark.parametrize("mode", ["canonical", "literal"])
def test_ih_loss_gaussian_symbolic_L_matches_explicit_expansion(Lv, mode):
    model_range, model_hi = (CANONICAL, Lv - 1) if mode == "canonical" else (LITERAL, Lv - 2)
    value, _ = ih_loss(model_range, "gaussian")
    numerically_equal(value.subs(L, Lv), explicit_ih_loss(Lv, model_hi, "gaussian"), POINTS)


@pytest.mark.parametrize("Lv", [5, 6])
@pytest.mark.parametrize("mode", ["canonical", "literal"])
def test_ih_loss_boolean_symbolic_L_matches_explicit_expansion(Lv, mode):
    model_range, model_hi = (CANONICAL, Lv - 1) if mode == "canonical" else (LITERAL, Lv - 2)
    value, _ = ih_loss(model_range, "rademacher")
    numerically_equal(value.subs(L, Lv), explicit_ih_loss(Lv, model_hi, "rademacher"), POINTS)


def test_ih_loss_boolean_closed_form():
    value, res = ih_loss(CANONICAL, "rademacher")
    assert sp.simplify(value - BOOLEAN_CANONICAL) == 0
    assert res.conditions == ()


@pytest.mark.parametrize("mode", ["canonical", "literal"])
def test_ih_loss_gaussian_against_monte_carlo(mode):
    Lv, n_samples = 10, 400_000
    point = {hs: 0.5, h: 0.8, vs: 0.45**2, v: 0.3**2}  # w, w* < 0.5: finite variance
    _, res = ih_loss(CANONICAL if mode == "canonical" else LITERAL, "gaussian")
    assert sp.And(*second_moment_conditions(
        sp.exp(vs * X * Y) * Z + sp.exp(v * X * Y) * Z, [X, Y, Z])).subs(point) is sp.true
    rng = np.random.default_rng(20240611)
    tokens = rng.standard_normal((n_samples, Lv))
    last, keys, values = tokens[:, -1:], tokens[:, : Lv - 2], tokens[:, 1 : Lv - 1]  # s = 2..L-1
    target = point[hs] / (Lv - 2) * (np.exp(point[vs] * last * keys) * values).sum(axis=1)
    stop = Lv - 2 if mode == "canonical" else Lv - 3
    model = point[h] / (Lv - 2) * (np.exp(point[v] * last * keys[:, :stop]) * values[:, :stop]).sum(axis=1)
    samples = 0.5 * (target - model) ** 2
    mean, se = samples.mean(), samples.std(ddof=1) / math.sqrt(n_samples)
    value, _ = ih_loss(CANONICAL if mode == "canonical" else LITERAL, "gaussian")
    predicted = float(value.subs(point).subs(L, Lv))
    assert abs(mean - predicted) <= 5 * se, (mean, predicted, se)


def test_ih_vanishing_cases_carry_certificates():
    _, res = ih_loss(CANONICAL, "gaussian")
    by_description = {c.description: c for c in res.cases}
    adjacent = by_description["(0, 1) s' = s + 1 (s, s' generic)"]
    assert adjacent.value == 0 and "x_{s+1} appears to the odd power 1" in adjacent.certificate
    far = by_description["(0, 0) s' - s not in [-1, 0, 1] (s, s' generic)"]
    assert far.value == 0 and "x_s appears to the odd power 1" in far.certificate
    assert far.count == sp.expand((L - 2) ** 2 - (L - 2) - 2 * (L - 3))
    assert by_description["(0, 0) s' = s (s, s' generic)"].certificate == ""
    assert "x_{s+1}" in res.certificate


def test_case_counts_partition_the_double_sum():
    res = expect_sum_product(TARGET, CANONICAL, MODEL, LITERAL)
    assert sp.expand(sum(c.count for c in res.cases) - (L - 2) * (L - 3)) == 0


# --------------------------------------------------------------------------------------------
# Level 2: coincidences with fixed positions, against explicit expansion
# --------------------------------------------------------------------------------------------


def explicit_sum_product(pattern_a, range_a, pattern_b, range_b, Lv, law):
    xs = sp.symbols(f"X1:{Lv + 1}")

    def total(pattern, rng):
        lo, hi = int(rng.lo.subs(L, Lv)), int(rng.hi.subs(L, Lv))
        out = sp.Integer(0)
        for t in range(lo, hi + 1):
            term = pattern.expr.subs(L, Lv).subs(pattern.index, t)
            out += term.replace(lambda e: isinstance(e, AppliedUndef), lambda e: xs[int(e.args[0]) - 1])
        return out

    expect = gaussian_expectation if law == "gaussian" else rademacher_expectation
    return expect(total(pattern_a, range_a) * total(pattern_b, range_b), list(xs)).value


COUPLINGS = [{a: sp.Rational(1, 5), b: sp.Rational(-1, 7)}, {a: sp.Rational(-2, 9), b: sp.Rational(3, 10)}]


@pytest.mark.parametrize("law", LAWS)
def test_fixed_position_coincidences_match_explicit_expansion(law):
    # x_{s+1} reaches x_L at s = L-1; x_s, x_{s-1} reach the fixed x_1, x_2 near s = 2, 3.
    pat_a = Pattern(sp.exp(a * x(L) * x(s)) * x(s + 1) * x(1) + x(s) ** 2, s)
    pat_b = Pattern(x(s) * x(L) * sp.exp(b * x(s - 1) * x(2)) + x(s - 1) * x(s) ** 2 * x(1), s)
    range_a, range_b = IndexRange(1, L - 1), IndexRange(2, L)
    res = expect_sum_product(pat_a, range_a, pat_b, range_b, law, L_min=5)
    assert sp.expand(sum(c.count for c in res.cases) - (L - 1) ** 2) == 0
    assert any(c.value != 0 and "s = " in c.description for c in res.cases)  # special cells matter
    for Lv in (5, 6, 7, 8):
        numerically_equal(res.value.subs(L, Lv),
                          explicit_sum_product(pat_a, range_a, pat_b, range_b, Lv, law), COUPLINGS)


@st.composite
def random_patterns(draw):
    """Summands built from x_{s+k} (k in -1..1), fixed x_1, x_2, x_L, x_{L-1} and one coupling."""
    fixed = [sp.Integer(1), sp.Integer(2), L, L - 1]
    positions = [s - 1, s, s + 1, *fixed]
    coef = draw(st.sampled_from([a, b]))
    p, q = draw(st.sampled_from(positions)), draw(st.sampled_from(positions))
    factor = sp.Integer(1)
    for pos in draw(st.lists(st.sampled_from(positions), min_size=1, max_size=3)):
        factor *= x(pos)
    if not factor.has(s) and not (p.has(s) or q.has(s)):
        factor *= x(s)
    expr = factor * sp.exp(coef * x(p) * x(q))
    lo = draw(st.integers(2, 3))
    hi = L - draw(st.integers(1, 2))
    return Pattern(expr, s), IndexRange(lo, hi)


@settings(max_examples=6)
@given(first=random_patterns(), second=random_patterns(), law=st.sampled_from(LAWS))
def test_random_patterns_match_explicit_expansion(first, second, law):
    (pat_a, range_a), (pat_b, range_b) = first, second
    L_min = 5
    for _ in range(6):  # follow the engine's advice until the case split is uniform
        try:
            res = expect_sum_product(pat_a, range_a, pat_b, range_b, law, L_min=L_min)
            break
        except InvalidArgument as err:
            advice = re.search(r"pass L_min >= (\d+)", str(err))
            assert advice is not None and int(advice.group(1)) > L_min, str(err)
            L_min = int(advice.group(1))
    note(f"L_min={L_min}")
    for Lv in (L_min, L_min + 2):
        numerically_equal(res.value.subs(L, Lv),
                          explicit_sum_product(pat_a, range_a, pat_b, range_b, Lv, law), COUPLINGS[:1])


# --------------------------------------------------------------------------------------------
# Level 2: invalid input
# --------------------------------------------------------------------------------------------


def test_range_empty_for_small_L_is_refused():
    with pytest.raises(InvalidArgument, match="L range too small"):
        expect_sum_product(TARGET, CANONICAL, MODEL, IndexRange(2, L - 4), L_min=5)


def test_non_uniform_case_split_asks_for_larger_L_min():
    fourth = Pattern(x(s) * x(4), s)  # x_4 must exist (L >= 4); s - 1 = 4 must lie in 2..L-1 (L >= 6)
    with pytest.raises(InvalidArgument, match="L_min >= 4"):
        expect_sum_product(fourth, IndexRange(2, L - 1), TARGET, CANONICAL, L_min=3)
    with pytest.raises(InvalidArgument, match="L_min >= 6"):
        expect_sum_product(fourth, IndexRange(2, L - 1), TARGET, CANONICAL, L_min=5)
    res = expect_sum_product(fourth, IndexRange(2, L - 1), TARGET, CANONICAL, L_min=6)
    for Lv in (6, 7):
        numerically_equal(res.value.subs(L, Lv), explicit_sum_product(
            fourth, IndexRange(2, L - 1), TARGET, CANONICAL, Lv, "gaussian"), [{vs: sp.Rational(1, 3)}])


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: expect_sum_product(Pattern(x(s - 2), s), IndexRange(2, L), TARGET, CANONICAL), "x_0"),
        (lambda: expect_sum_product(Pattern(x(s + 1), s), IndexRange(2, L), TARGET, CANONICAL), "outside"),
        (lambda: Pattern(s * x(s), s), "outside token positions"),
        (lambda: Pattern(x(2 * s), s), "must be s \\+ integer"),
        (lambda: Pattern(sp.exp(a), s), "no token"),
        (lambda: expect_sum_product(TARGET, IndexRange(2, sp.Symbol("M")), TARGET, CANONICAL), "affine in L"),
        (lambda: expect_sum_product(Pattern(sp.sin(x(s)), s), CANONICAL, TARGET, CANONICAL), r"sin\(x_s\)"),
        (lambda: expect_square([]), "terms is empty"),
        (lambda: expect_square([(1, TARGET)]), "triple"),
        (lambda: expect_sum_product(TARGET, CANONICAL, TARGET, CANONICAL, L_min=0), "L_min=0"),
    ],
)
def test_invalid_level2_input(build, match):
    with pytest.raises(InvalidArgument, match=match):
        build()


def test_index_range_helpers():
    rng = IndexRange(2, L - 2)
    assert rng.size() == L - 3
    assert rng.contains(2).subs(L, 4) is sp.true and rng.contains(2).subs(L, 3) is sp.false
    assert rng.contains(1) is sp.false
    assert IndexRange(2, 5).contains(6) is sp.false
    assert str(rng) == "[2, L - 2]"
