"""Tests of numerics.geometric_sums: S_j(c, n) = Σ_{k<n} k^j e^{-ck} against mpmath, in ulps.

The reference is the textbook closed form (the r-form in r = e^{-c}) evaluated by mpmath with
30 digits to spare beyond its cancellation, which is about (j+1)·log10(1/|c|) digits when |c| is
small (its terms are O(|c|^{-(j+1)}) times the sum) and a few digits otherwise; it is itself
checked against a direct mpmath sum of the terms. Errors are |got - exact| / ulp(exact) with
the ulp of the double nearest the exact value; where the exact value exceeds the largest
double the answer must be ``inf``.

The errors stated in the module's docstrings (at most 3.0, 3.4 and 3.6 ulp for j = 0, 1, 2)
are the largest seen over two dense samples, each point checked for j = 0, 1, 2:

* :func:`test_dense_grid` (marked slow, ~40 s): 2 values of |c| per decade over [10⁻³⁰⁰, 700]
  (c < 0 down to -50) and c = 0, times n at 60 log-spaced values of [1, 10⁶]; every regime
  boundary of :func:`_boundary_points`; and 1500 random points in each regime of each sign.
  It saw at most 2.6, 2.9 and 3.3 ulp, and asserts 4.
* the same kind of sample, larger (made while writing the module): 3 values of |c| per decade
  times 100 values of n, and 6000 random points per regime and sign, 1.2·10⁶ points in all.

The property tests below assert ULP_BOUND = 8 ulp.
"""

import math
import sys

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numerics._jit import jit
from numerics.geometric_sums import (
    _B,
    _FIRST_LIMIT,
    _SECOND_LIMIT,
    DIRECT_TERMS,
    GENTLE,
    GROWTH_LIMIT,
    SERIES_SPAN,
    STEEP,
    geometric_moment,
    geometric_moment0,
    geometric_moment1,
    geometric_moment2,
)

ULP_BOUND = 8.0
LARGEST = sys.float_info.max
MOMENTS = (geometric_moment0, geometric_moment1, geometric_moment2)


def power_sum(j, n):
    """Σ_{k<n} k^j exactly, as an integer."""
    return (n, n * (n - 1) // 2, (n - 1) * n * (2 * n - 1) // 6)[j]


def reference(j, c, n):
    """S_j(c, n) to 30 digits by the r-form in r = e^{-c}, at enough digits to absorb its cancellation."""
    n = int(n)
    if c == 0.0 or n == 1:
        return mpmath.mpf(power_sum(j, n))
    lost = (j + 1) * max(0, math.ceil(-math.log10(abs(c))))
    with mpmath.workdps(30 + 30 + lost):
        r = mpmath.exp(-mpmath.mpf(c))
        if j == 0:
            value = (1 - r**n) / (1 - r)
        elif j == 1:
            value = r * (1 - n * r ** (n - 1) + (n - 1) * r**n) / (1 - r) ** 2
        else:
            value = (
                r
                * (1 + r - n**2 * r ** (n - 1) + (2 * n**2 - 2 * n - 1) * r**n - (n - 1) ** 2 * r ** (n + 1))
                / (1 - r) ** 3
            )
    with mpmath.workdps(30):
        return +value


def direct_reference(j, c, n):
    """S_j(c, n) to 40 digits as the plain sum of its n positive terms (for small n)."""
    with mpmath.workdps(40):
        rate = mpmath.mpf(c)
        return mpmath.fsum(mpmath.mpf(k) ** j * mpmath.exp(-rate * k) for k in range(int(n)))


def ulp_error(got, exact):
    """|got - exact| in units of the last place of the double nearest ``exact`` (0 when both are 0)."""
    nearest = float(exact)
    if nearest == 0.0:
        return 0.0 if got == 0.0 else math.inf
    with mpmath.workdps(40):
        return float(abs(mpmath.mpf(got) - exact) / math.ulp(nearest))


def assert_accurate(j, c, n, got=None, bound=ULP_BOUND):
    """Assert S_j(c, n) within ``bound`` ulps of the reference, or inf where the exact sum overflows."""
    if got is None:
        got = MOMENTS[j](c, n)
    exact = reference(j, c, n)
    assert not math.isnan(got), f"S_{j}({c!r}, {n!r}) is NaN"
    if exact > LARGEST:
        assert got == math.inf, f"S_{j}({c!r}, {n!r}) = {got!r}, exact {mpmath.nstr(exact, 20)} overflows"
        return
    if got == math.inf and exact > LARGEST * (1 - 1e-14):
        return  # within rounding of the overflow threshold: either answer is right
    error = ulp_error(got, exact)
    assert error <= bound, f"S_{j}({c!r}, {n!r}) = {got!r}, exact {mpmath.nstr(exact, 20)}: {error:.2f} ulp"


@st.composite
def rates(draw, zero_share=0.05):
    """Draw c: 0 sometimes, else ±10^x, x uniform, |c| in [1e-300, 700] (c > 0) or [1e-300, 50] (c < 0)."""
    if draw(st.floats(0.0, 1.0)) < zero_share:
        return 0.0
    negative = draw(st.booleans())
    largest = 50.0 if negative else 700.0
    magnitude = min(10.0 ** draw(st.floats(-300.0, math.log10(largest))), largest)
    return -magnitude if negative else magnitude


@st.composite
def counts(draw):
    """Draw n log-uniform in [1, 10⁶] (or small), as an int or as a float."""
    n = draw(st.one_of(st.integers(1, 40), st.floats(0.0, 6.0).map(lambda x: round(10.0**x))))
    return float(n) if draw(st.booleans()) else int(n)


# ---- the reference ----


@settings(deadline=None, max_examples=150)
@given(j=st.integers(0, 2), c=rates(), n=st.integers(1, 60))
def test_reference_is_the_direct_sum(j, c, n):
    """The closed-form reference agrees with the plain sum to 28 digits (n ≤ 60)."""
    with mpmath.workdps(40):
        want = direct_reference(j, c, n)
        got = reference(j, c, n)
        assert abs(got - want) <= mpmath.mpf(10) ** -28 * abs(want)


@pytest.mark.parametrize("c", [1e-5, -1e-3, 0.3, -0.02, 2.0])
def test_reference_is_the_direct_sum_for_a_thousand_terms(c):
    """The same for n = 1000, where the closed form's powers r^n are large or small."""
    for j in range(3):
        with mpmath.workdps(40):
            want = direct_reference(j, c, 1000)
            assert abs(reference(j, c, 1000) - want) <= mpmath.mpf(10) ** -28 * want


# ---- accuracy over the whole domain ----


@settings(deadline=None, max_examples=400)
@given(j=st.integers(0, 2), c=rates(), n=counts())
@example(j=2, c=1e-300, n=10**6)
@example(j=1, c=-1e-300, n=10**6)
@example(j=2, c=700.0, n=10**6)
@example(j=2, c=-50.0, n=15)
@example(j=1, c=-50.0, n=10**6)
@example(j=0, c=-0.7, n=1000)
def test_accurate_to_a_few_ulp(j, c, n):
    """S_j within ULP_BOUND ulps over the whole domain (or inf where the sum overflows)."""
    assert_accurate(j, c, n)


@settings(deadline=None, max_examples=200)
@given(j=st.integers(1, 2), c=st.floats(-1.0, 1.0).filter(lambda x: x != 0.0), n=counts())
def test_accurate_where_c_is_moderate(j, c, n):
    """The middle of the domain, where every non-direct regime meets (uniform c, not log-uniform)."""
    assert_accurate(j, c, n)


@settings(deadline=None, max_examples=60)
@given(j=st.integers(0, 2), c=rates(zero_share=0.0), n=counts())
def test_dispatcher_is_the_three_functions(j, c, n):
    """geometric_moment(j, ...) returns exactly what the j-th function returns."""
    assert geometric_moment(j, c, n) == MOMENTS[j](c, n)


def test_dispatcher_rejects_other_powers():
    """A power j outside {0, 1, 2} gives NaN."""
    assert math.isnan(geometric_moment(3, 0.5, 10.0))


# ---- known answers ----


@pytest.mark.parametrize("n", [1, 2, 3, 16, 17, 1000, 123457, 10**6])
def test_zero_rate_gives_the_power_sums(n):
    """S_j(0, n) = n, n(n-1)/2, (n-1)n(2n-1)/6, correctly rounded, for c = 0 and -0."""
    for j in range(3):
        want = float(power_sum(j, n))  # the exact integer, rounded once
        assert MOMENTS[j](0.0, n) == want
        assert MOMENTS[j](-0.0, float(n)) == want


@pytest.mark.parametrize("c", [0.0, 1e-300, -1e-300, 1e-8, -1e-8, 0.5, -0.5, 3.0, -3.0, 700.0, -50.0])
def test_one_term_is_zero_to_the_power_j(c):
    """S_j(c, 1) = 0^j: exactly 1, 0, 0."""
    assert geometric_moment0(c, 1) == 1.0
    assert geometric_moment1(c, 1) == 0.0
    assert geometric_moment2(c, 1.0) == 0.0


@pytest.mark.parametrize("c", [1e-300, -1e-12, 0.5, -0.5, 2.0, -7.0, 40.0, 700.0])
def test_two_terms(c):
    """S_0(c, 2) = 1 + e^{-c}, S_1(c, 2) = S_2(c, 2) = e^{-c}."""
    with mpmath.workdps(40):
        r = mpmath.exp(-mpmath.mpf(c))
        assert ulp_error(geometric_moment0(c, 2), 1 + r) <= 1
        assert ulp_error(geometric_moment1(c, 2), r) <= 1
        assert ulp_error(geometric_moment2(c, 2), r) <= 1


@pytest.mark.parametrize("j", [0, 1, 2])
def test_overflow_is_inf_never_nan(j):
    """Sums beyond the largest double give inf, and just below it a finite, accurate value."""
    for c, n in [(-50.0, 10**6), (-50.0, 16), (-3.0, 10**6), (-1.0, 800), (-1e-3, 10**6)]:
        assert MOMENTS[j](c, n) == math.inf
    assert_accurate(j, -1.0, 700)  # just below: e^{699}·(finite factor)


# ---- the regime boundaries ----


def _around(x):
    """Return x and its two neighbouring doubles."""
    return [math.nextafter(x, -math.inf), x, math.nextafter(x, math.inf)]


def _boundary_points():
    points = []
    for c in (1e-9, 0.3, -0.3, 2.5, -2.5, 20.0, -20.0):
        points += [(c, DIRECT_TERMS), (c, DIRECT_TERMS + 1)]
    for n in (DIRECT_TERMS + 1, 100, 10**6):
        points += [(c, n) for c in _around(STEEP) + _around(-STEEP)]
    for n in (DIRECT_TERMS + 1, 18, 1000, 10**6):
        points += [(c, n) for c in _around(SERIES_SPAN / n) + _around(-SERIES_SPAN / n)]
    for n in (DIRECT_TERMS + 1, 1000, 10**6):
        points += [(c, n) for c in _around(GENTLE)]
    for n in (1000, 10**6):
        points += [(c, n) for c in _around(-GROWTH_LIMIT / n) + _around(-GROWTH_LIMIT / (n - 1))]
    for n in (1000, 100000):  # where e^{-c(n-1)} (j = 0) and the sums themselves overflow
        points += [(c, n) for c in _around(-math.log(LARGEST) / (n - 1)) + _around(-math.log(LARGEST) / n)]
    return points


@pytest.mark.parametrize("j", [0, 1, 2])
def test_regime_boundaries(j):
    """Accurate on both sides of every threshold of the module (and at it)."""
    for c, n in _boundary_points():
        assert_accurate(j, c, n)


# ---- formulas and tables ----


def test_closed_forms_are_the_sums():
    """The r-forms in t = expm1(|c|) used for n > 16, as identities in t for small n (SymPy)."""
    t = sp.Symbol("t", positive=True)
    for n in range(2, 7):
        m = n - 1
        up = 1 + t  # e^{|c|}
        decaying = [sum(k**j * up**-k for k in range(n)) for j in (1, 2)]
        head, tail = 1 - up**-n, up**-n  # G and E
        assert sp.cancel(decaying[0] - up * (head - n * t * tail) / t**2) == 0
        assert sp.cancel(decaying[0] - (up - tail * up * (1 + n * t)) / t**2) == 0
        assert sp.cancel(decaying[1] - up * ((2 + t) * head - tail * n * t * (n * t + 2)) / t**3) == 0
        assert sp.cancel(decaying[1] - (up * (2 + t) - tail * up * (2 + t + n * t * (n * t + 2))) / t**3) == 0
        growing = [sum(k**j * up**k for k in range(n)) for j in (1, 2)]
        remainder = up**-m
        assert sp.cancel(growing[0] - up**n * (m * t - 1 + remainder) / t**2) == 0
        assert sp.cancel(growing[1] - up**n * ((m * t - 1) ** 2 + up - (1 + up) * remainder) / t**3) == 0


def test_bernoulli_tables_are_the_limits():
    """β(c) = c/(1 - e^{-c}), L_1(c) = c²Σ k e^{-ck} and L_2(c) = c³Σ k² e^{-ck} as power series (SymPy)."""
    c = sp.Symbol("c")
    q = sp.exp(-c)
    for function, table in [
        (c / (1 - q), [float(b) for b in _B]),
        (c**2 * q / (1 - q) ** 2, _FIRST_LIMIT),
        (c**3 * q * (1 + q) / (1 - q) ** 3, _SECOND_LIMIT),
    ]:
        series = sp.series(function, c, 0, 11).removeO()
        want = [float(series.coeff(c, k)) for k in range(11)]
        np.testing.assert_array_equal(np.asarray(table[:11]), want)


# ---- use from compiled code ----


@jit
def _moment_table(rates_, count):
    out = np.empty((3, rates_.shape[0]))
    for i in range(rates_.shape[0]):
        out[0, i] = geometric_moment0(rates_[i], count)
        out[1, i] = geometric_moment1(rates_[i], count)
        out[2, i] = geometric_moment(2, rates_[i], count)
    return out


def test_callable_from_jit_code():
    """The functions compile into another @jit function and give the same values there."""
    rates_ = np.array([0.0, 1e-200, -1e-6, 0.01, -0.2, 0.7, 1.5, -2.0, 5.0, -60.0])
    for count in (1, 17, 5000):
        table = _moment_table(rates_, count)
        for j in range(3):
            for i, c in enumerate(rates_):
                assert table[j, i] == MOMENTS[j](c, count)


# ---- the measurement behind the docstrings ----


def _dense_grid():
    magnitudes = [*np.logspace(-300, math.log10(700), 606), 1e-6, 0.25, 1.0, 3.0, 50.0, 700.0]
    rates_ = [0.0, *magnitudes, *(-x for x in magnitudes if x <= 50.0)]
    sizes = sorted({round(x) for x in np.logspace(0, 6, 60)} | {1, 2, 16, 17, 18, 10**6})
    return [(c, n) for c in rates_ for n in sizes] + _boundary_points()


def _regime_samples(rng, count):
    """``count`` random points of each regime of S_1 and S_2 (n > 16 unless direct)."""

    def log_uniform(low, high):
        return 10.0 ** rng.uniform(math.log10(low), math.log10(high))

    points = []
    for sign in (1.0, -1.0):
        top = 700.0 if sign > 0 else 50.0
        points += [(sign * log_uniform(1e-300, top), int(rng.integers(1, 17))) for _ in range(count)]
        points += [(sign * rng.uniform(STEEP, top), round(log_uniform(1, 1e6))) for _ in range(count)]
        for _ in range(count):  # series: |c|·n < 4
            n = round(log_uniform(17, 1e6))
            points.append((sign * log_uniform(1e-300, SERIES_SPAN / n), n))
        for low, high in [(SERIES_SPAN / 1e6, GENTLE), (GENTLE, STEEP)]:  # |c|·n ≥ 4
            for _ in range(count):
                a = log_uniform(low, high)
                points.append((sign * a, round(log_uniform(max(17, SERIES_SPAN / a), 1e6))))
    return points


@pytest.mark.slow  # ~40 s: the measurement behind the docstrings' error statements
def test_dense_grid():
    """The largest error over a dense grid and random points of every regime is below 4 ulp."""
    points = _dense_grid() + _regime_samples(np.random.default_rng(0), 1500)
    for j in range(3):
        worst = (0.0, None, None)
        for c, n in points:
            exact = reference(j, c, n)
            got = MOMENTS[j](c, float(n))
            error = (0.0 if got == math.inf else math.inf) if exact > LARGEST else ulp_error(got, exact)
            worst = max(worst, (error, c, n), key=lambda entry: entry[0])
        print(f"S_{j}: at most {worst[0]:.2f} ulp, at c = {worst[1]!r}, n = {worst[2]}")
        assert worst[0] <= 4.0
