"""Tests of numerics.special: W₀ and W₀(e^x) against scipy and mpmath, Brent's method against scipy.

References: ``scipy.special.lambertw`` where it is accurate, mpmath at 50 digits everywhere
(next to the branch point -1/e scipy loses up to half the digits: it forms e·y + 1 in double,
so it is compared there with mpmath only), ``scipy.optimize.brentq`` for the root finders. The
LambertW mapping of the printer is checked through :mod:`numerics.compile`.
"""

import math

import mpmath
import numpy as np
import pytest
import scipy.optimize
import scipy.special
import sympy as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics._jit import jit
from numerics.compile import array_function, scalar_kernel, scalar_source
from numerics.printer import NumbaPrinter, helper_imports
from numerics.special import brent_root, brent_root_args, lambertw0, lambertw0_exp

RTOL = 1e-14
EPS = np.finfo(np.float64).eps
BRANCH = -1 / math.e  # the double nearest -1/e, 1.2e-17 below it: W₀ = -1 there by convention
OMEGA = 0.5671432904097838  # W₀(1)
XTOL, BRENT_RTOL = 2e-12, 4 * EPS  # scipy.optimize.brentq's defaults

x = sp.Symbol("x", real=True)


def w_mp(y):
    """W₀(y) at 50 digits (y a double, exactly)."""
    with mpmath.workdps(50):
        w = mpmath.lambertw(mpmath.mpf(y))
        assert mpmath.im(w) == 0
        return mpmath.re(w)


def w_exp_mp(x_):
    """W₀(e^x) at 50 digits."""
    with mpmath.workdps(50):
        return mpmath.re(mpmath.lambertw(mpmath.exp(mpmath.mpf(x_))))


def relative(got, want):
    """Return |got - want| / |want| (|got| for want = 0), computed at 50 digits."""
    with mpmath.workdps(50):
        return float(abs(mpmath.mpf(got) - want) / abs(want)) if want != 0 else abs(got)


def assert_rel(got, want, rtol=RTOL):
    """Assert a relative error of at most ``rtol``, naming both values otherwise."""
    error = relative(got, want)
    assert error <= rtol, f"got={got!r} want={float(want)!r} relative error={error:.3e}"


def up(v, n=1):
    """Return the n-th double above v."""
    for _ in range(n):
        v = np.nextafter(v, math.inf)
    return float(v)


def down(v, n=1):
    """Return the n-th double below v."""
    for _ in range(n):
        v = np.nextafter(v, -math.inf)
    return float(v)


# y over the whole domain: next to the branch point (offsets 1e-16 .. 0.1), negative, tiny of both
# signs, and positive up to 1e300 (log-uniform magnitudes)
near_branch = st.floats(-16.0, -1.0).map(lambda e: BRANCH + 10.0**e).filter(lambda y: y > BRANCH)
negative = st.floats(BRANCH, 0.0, exclude_min=True)
tiny = st.floats(-300.0, -1.0).map(lambda e: 10.0**e) | st.floats(-300.0, -1.0).map(lambda e: -(10.0**e))
positive = st.floats(-300.0, 300.0).map(lambda e: 10.0**e)
domain = near_branch | negative | tiny | positive


# --- W₀ ------------------------------------------------------------------------------------------


def test_known_values():
    assert lambertw0(0.0) == 0.0
    assert lambertw0(math.e) == 1.0
    assert lambertw0(BRANCH) == -1.0
    assert lambertw0(1.0) == OMEGA
    assert lambertw0(math.inf) == math.inf
    assert lambertw0_exp(1.0) == 1.0
    assert lambertw0_exp(0.0) == OMEGA
    assert lambertw0_exp(math.inf) == math.inf
    assert lambertw0_exp(-math.inf) == 0.0
    assert lambertw0_exp(-800.0) == 0.0  # e^x underflows, and so does W₀(e^x) ≈ e^x


def test_nan_outside_the_domain():
    for y in (down(BRANCH), -0.5, -1.0, -1e300, -math.inf, math.nan):
        assert math.isnan(lambertw0(y)), y
    assert math.isnan(lambertw0_exp(math.nan))
    # the first double above the branch point is inside: W₀ = -1 + √(2(e·y + 1)) + ...
    assert_rel(lambertw0(up(BRANCH)), w_mp(up(BRANCH)))


@settings(deadline=None)
@given(y=(negative | tiny | positive).filter(lambda y: y >= BRANCH + 1e-3))
@example(y=-0.25)
@example(y=math.e)
@example(y=1e-4)
@example(y=-1e-4)
@example(y=1e300)
def test_lambertw0_matches_scipy(y):
    assert_rel(lambertw0(y), scipy.special.lambertw(y).real)


@settings(deadline=None)
@given(y=domain)
@example(y=up(BRANCH))
@example(y=up(BRANCH, 7))
@example(y=down(-0.25))
@example(y=up(-0.25))
@example(y=1.7976931348623157e308)
def test_lambertw0_matches_mpmath(y):
    assert_rel(lambertw0(y), w_mp(y))


@settings(deadline=None)
@given(y=domain.filter(lambda y: y <= math.e))
def test_lambertw0_solves_w_exp_w(y):
    w = lambertw0(y)
    # w·e^w is evaluated with a few roundings; relative to y, or to ulp(1/e) next to the branch point
    assert abs(w * math.exp(w) - y) <= 4 * EPS * max(abs(y), abs(w) * math.exp(w))


@pytest.mark.parametrize("y0", [-0.25, 1e-4, -1e-4, math.e])
def test_lambertw0_is_smooth_across_its_internal_switches(y0):
    # the switch between two methods must not show: W₀(y0 ± h) differ by 2h·W₀'(y0), W₀' = W/(y(1+W))
    w0 = lambertw0(y0)
    slope = w0 / (y0 * (1 + w0))
    for h in (abs(y0) * EPS, abs(y0) * 1e-12, abs(y0) * 1e-8):
        jump = lambertw0(y0 + h) - lambertw0(y0 - h)
        assert abs(jump - 2 * h * slope) <= 4 * EPS * abs(w0) + 10 * h * h * abs(slope / y0), (h, jump)


# --- W₀(e^x) -------------------------------------------------------------------------------------


@settings(deadline=None)
@given(x_=st.floats(-745.0, 709.78))
@example(x_=1.0)
@example(x_=down(1.0))
@example(x_=up(1.0))
@example(x_=700.0)
@example(x_=-708.0)
def test_lambertw0_exp_matches_scipy_where_exp_is_finite(x_):
    y = math.exp(x_)
    assert_rel(lambertw0_exp(x_), scipy.special.lambertw(y).real)


@settings(deadline=None)
@given(x_=st.floats(math.log10(700.0), 8.0).map(lambda e: 10.0**e) | st.floats(-700.0, 700.0))
@example(x_=700.0)
@example(x_=up(700.0))
@example(x_=down(700.0))
@example(x_=1e8)
def test_lambertw0_exp_matches_mpmath(x_):
    assert_rel(lambertw0_exp(x_), w_exp_mp(x_))


@settings(deadline=None)
@given(x_=st.floats(1.0, 1e300))
@example(x_=1.7976931348623157e308)
def test_lambertw0_exp_solves_w_plus_log_w(x_):
    w = lambertw0_exp(x_)
    # w·e^w = e^x in log form: w + log(w) = x, up to the rounding of the sum
    assert abs(w + math.log(w) - x_) <= 4 * EPS * x_


@pytest.mark.parametrize("x0", [700.0, 1.0])
def test_lambertw0_exp_is_continuous_at_700_and_at_its_switch(x0):
    # 700: where e^x is about to overflow (one formula on both sides); 1: the switch from
    # W₀(exp(x)) to w + log(w) = x. The jump over [x0 - h, x0 + h] is 2h·W'(x0), W' = W/(1 + W).
    w0 = lambertw0_exp(x0)
    slope = w0 / (1 + w0)
    for h in (float(np.spacing(x0)), x0 * 1e-12, x0 * 1e-8):
        jump = lambertw0_exp(x0 + h) - lambertw0_exp(x0 - h)
        assert abs(jump - 2 * h * slope) <= 4 * EPS * w0 + h * h, (h, jump)
    below, above = lambertw0_exp(down(x0)), lambertw0_exp(up(x0))
    assert below <= w0 <= above
    assert abs(above - below) / w0 <= 2 * np.spacing(x0) * slope / w0 + 4 * EPS


def test_lambertw0_exp_agrees_with_lambertw0_where_both_apply():
    for x_ in (-700.0, -30.0, -1.0, 0.5, 1.0, 2.0, 50.0, 690.0):
        assert_rel(lambertw0_exp(x_), lambertw0(math.exp(x_)), 4 * EPS)


# --- Brent's method ------------------------------------------------------------------------------


@jit
def _cubic(x_):
    return (x_ * x_ - 2.0) * x_ - 5.0


@jit
def _poly(x_, c):
    """(x - c0)·(x² + c1²) + c2·(x - c0)³: one real root, c0, in any bracket around it."""
    d = x_ - c[0]
    return d * (x_ * x_ + c[1] * c[1]) + c[2] * d * d * d


@jit
def _exp_minus(x_, c):
    return math.exp(x_) - c[0]


@jit
def _steep(x_, c):
    return math.tanh(c[1] * (x_ - c[0]))


@jit
def _root(kind, a, b, c, xtol, rtol, maxiter):
    """Call a root finder from cached jitted code (the use they are made for); ``kind`` picks f."""
    if kind == 0:
        return brent_root(_cubic, a, b, xtol, rtol, maxiter)
    if kind == 1:
        return brent_root_args(_poly, a, b, c, xtol, rtol, maxiter)
    if kind == 2:
        return brent_root_args(_exp_minus, a, b, c, xtol, rtol, maxiter)
    return brent_root_args(_steep, a, b, c, xtol, rtol, maxiter)


FUNCTIONS = {0: _cubic, 1: _poly, 2: _exp_minus, 3: _steep}


def scipy_root(kind, a, b, c, xtol=XTOL, rtol=BRENT_RTOL, maxiter=100):
    """Return ``scipy.optimize.brentq``'s root of the same function (raises as brentq does)."""
    f = FUNCTIONS[kind]  # the same compiled function, called from Python: the same values of f
    args = () if kind == 0 else (c,)
    return scipy.optimize.brentq(f, a, b, args=args, xtol=xtol, rtol=rtol, maxiter=maxiter)


def assert_same_root(kind, a, b, c, xtol=XTOL, rtol=BRENT_RTOL):
    """Assert the root of brentq within the tolerance, or NaN where brentq does not converge."""
    got = _root(kind, a, b, c, xtol, rtol, 100)
    try:
        want = scipy_root(kind, a, b, c, xtol, rtol)
    except RuntimeError:  # brentq: "Failed to converge after 100 iterations"
        assert math.isnan(got), got
        return
    assert abs(got - want) <= xtol + rtol * abs(want), f"brent_root={got!r} brentq={want!r}"


def test_brent_root_cubic_from_python_and_from_jitted_code():
    want = scipy.optimize.brentq(_cubic, 2.0, 3.0)
    assert brent_root(_cubic, 2.0, 3.0, XTOL, BRENT_RTOL, 100) == want
    assert _root(0, 2.0, 3.0, np.zeros(1), XTOL, BRENT_RTOL, 100) == want
    assert brent_root_args(_exp_minus, -10.0, 10.0, np.array([3.0]), XTOL, BRENT_RTOL, 100) == pytest.approx(
        math.log(3.0), abs=XTOL
    )


@settings(deadline=None)
@example(root=0.0, left=1.0, right=2.0, curve=0.0, cube=0.0)  # x³: neither converges in 100 iterations
@given(
    root=st.floats(-50.0, 50.0),
    left=st.floats(1e-12, 100.0),
    right=st.floats(1e-12, 100.0),
    curve=st.floats(0.0, 10.0),
    cube=st.floats(0.0, 5.0),
)
def test_brent_root_matches_brentq_on_cubics(root, left, right, curve, cube):
    assert_same_root(1, root - left, root + right, np.array([root, curve, cube]))


@settings(deadline=None)
@given(c=st.floats(-30.0, 30.0).map(math.exp), width=st.floats(0.0, 20.0))
def test_brent_root_matches_brentq_on_exp_minus_c(c, width):
    assert_same_root(2, math.log(c) - width - 1e-3, math.log(c) + 2 * width + 1e-3, np.array([c]))


@settings(deadline=None)
@given(
    frac=st.sampled_from([0.0, 1e-15, 1e-12, 1e-9, 1e-6, 1 - 1e-9, 1 - 1e-12, 1.0]),
    steep=st.sampled_from([1.0, 1e3, 1e8]),
    xtol=st.sampled_from([XTOL, 1e-6, 1e-15]),
)
def test_brent_root_matches_brentq_with_roots_near_the_bracket_ends(frac, steep, xtol):
    a, b = -1.0, 2.0
    root = a + frac * (b - a)
    c = np.array([root, steep])
    assert_same_root(3, a, b, c, xtol=xtol)
    assert_same_root(1, a, b, np.array([root, 0.5, 1.0]), xtol=xtol)


def test_brent_root_nan_on_a_bad_bracket_or_no_convergence():
    c = np.array([3.0])
    assert math.isnan(_root(2, 2.0, 5.0, c, XTOL, BRENT_RTOL, 100))  # e^x - 3 > 0 on [2, 5]
    assert math.isnan(_root(0, -1.0, 1.0, c, XTOL, BRENT_RTOL, 100))  # the cubic < 0 on [-1, 1]
    assert math.isnan(_root(2, math.nan, 5.0, c, XTOL, BRENT_RTOL, 100))
    assert math.isnan(_root(2, -10.0, 10.0, c, -1.0, BRENT_RTOL, 100))  # xtol < 0
    assert math.isnan(_root(2, -10.0, 10.0, np.array([math.nan]), XTOL, BRENT_RTOL, 100))  # f is NaN
    with pytest.raises(ValueError, match="different signs"):
        scipy_root(2, 2.0, 5.0, c)
    # too few iterations: scipy raises, brent_root returns NaN
    assert math.isnan(_root(2, -10.0, 10.0, c, XTOL, BRENT_RTOL, 3))
    with pytest.raises(RuntimeError, match="converge"):
        scipy_root(2, -10.0, 10.0, c, maxiter=3)
    # a root at an end of the bracket is returned without iterating
    assert _root(1, 0.5, 2.0, np.array([0.5, 1.0, 0.0]), XTOL, BRENT_RTOL, 0) == 0.5
    assert _root(1, -2.0, 0.5, np.array([0.5, 1.0, 0.0]), XTOL, BRENT_RTOL, 0) == 0.5


# --- LambertW in generated kernels ---------------------------------------------------------------


def test_printer_maps_lambertw_to_the_helper():
    assert NumbaPrinter().doprint(sp.LambertW(x)) == "lambertw0(x)"
    assert NumbaPrinter().doprint(sp.LambertW(x, 0)) == "lambertw0(x)"  # SymPy drops k = 0
    assert "from numerics.special import lambertw0" in helper_imports()
    assert "from numerics.stable import expm1_ratio, logaddexp, sign" in helper_imports()
    source = scalar_source(sp.LambertW(x), [x], name="lw")
    assert "from numerics.special import lambertw0" in source
    assert "return lambertw0(x)" in source


def test_lambertw_branches_are_refused():
    with pytest.raises(InvalidArgument, match=r"LambertW with branch k = -1 \(in LambertW\(x, -1\)\)"):
        scalar_source(sp.LambertW(x, -1) + 1, [x], name="lw")
    with pytest.raises(InvalidArgument, match="no Python \\(NumPy\\) translation"):
        array_function(sp.LambertW(x), [x], name="lw")


def test_compiled_lambertw_matches_scipy():
    kernel = scalar_kernel([sp.LambertW(x), 2 * sp.LambertW(sp.exp(x) / 2)], [x], name="t_lambertw")
    for y in (BRANCH + 1e-3, -0.2, -1e-9, 0.0, 1e-9, 0.5, 1.0, math.e, 10.0, 700.0, 1e6, 1e300):
        w, w_half = kernel(y)
        assert w == pytest.approx(scipy.special.lambertw(y).real, rel=RTOL, abs=1e-300), y
        if y <= 700.0:  # e^y finite
            want = 2 * scipy.special.lambertw(math.exp(y) / 2).real
            assert w_half == pytest.approx(want, rel=RTOL, abs=1e-300), y
    assert kernel(BRANCH)[0] == -1.0
    assert math.isnan(kernel(-1.0)[0])  # below -1/e
