"""numerics.compile.array_function: the NumPy evaluator for one-off evaluation (nothing compiled).

Values are checked against mpmath at 30 digits and against the numba kernels' stable helpers.
"""

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics import stable
from numerics.compile import array_function, kernel_source, scalar_kernel
from numerics.printer import Expm1Ratio

x, y = sp.symbols("x y", real=True)
n = sp.Symbol("n", integer=True, positive=True)
EXPRS = [
    sp.exp(-x * (n - 2)) * sp.sqrt(1 + y**2) / (1 + x**2),
    sp.log(1 + x**2) + sp.atan(y) * sp.cosh(x / 3),
    sp.Piecewise((x, x < y), (y**3, x < 2 * y + 1), (x * y, True)),
    sp.Max(x, y, sp.Rational(1, 3)) - sp.Min(x, -y),
    sp.erf(x) + sp.Abs(y) * sp.sign(x) + sp.pi,
]


@pytest.fixture(scope="module")
def evaluator():
    return array_function(EXPRS, [x, y, n], name="t_array_mixed")


def _mp(expr, point):
    return float(sp.N(expr.subs(point), 30))


# no subnormals: SymPy's reference is wrong there, not the evaluator — substituting x = -5e-324 into
# the Piecewise condition x < 2y + 1 rewrites it at 30 digits as y > -0.5, which is False at y = -0.5
@given(st.floats(-3, 3, allow_subnormal=False), st.floats(-3, 3, allow_subnormal=False), st.integers(3, 60))
def test_agrees_with_mpmath(evaluator, xv, yv, nv):
    got = evaluator(xv, yv, nv)
    want = [_mp(e, {x: sp.Float(xv, 30), y: sp.Float(yv, 30), n: nv}) for e in EXPRS]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_shapes_broadcast_and_outputs_free_of_an_argument(evaluator):
    xs = np.linspace(-1, 1, 7)
    assert evaluator(xs, 0.5, 40).shape == (5, 7)
    assert evaluator(xs[:, None], xs[None, :], 40).shape == (5, 7, 7)
    one = array_function(x + 1, [x, y], name="t_array_one")
    assert one(2.0, 3.0).shape == () and one(2.0, xs).shape == ()  # y unused: a scalar, as in NumPy
    matrix = array_function(sp.Matrix([[x, y], [x * y, 1]]), [x, y], name="t_array_matrix")
    out = matrix(xs, 2.0)
    assert out.shape == (2, 2, 7)
    np.testing.assert_array_equal(out[1, 1], np.ones(7))
    with pytest.raises(InvalidArgument, match="shapes do not broadcast"):
        evaluator(np.zeros(3), np.zeros(4), 40)
    with pytest.raises(InvalidArgument, match="takes 3 values"):
        evaluator(1.0, 2.0)
    with pytest.raises(InvalidArgument, match="complex"):
        evaluator(1j, 2.0, 40)


def test_stable_rewrites_apply():
    tiny = array_function(sp.exp(x) - 1, [x], name="t_array_expm1")
    assert tiny(1e-12) == pytest.approx(1e-12, rel=1e-15)  # expm1, not exp(x) - 1
    assert "np.expm1" in kernel_source(tiny)


@given(st.floats(-40, 40), st.floats(-5, 5))
def test_expm1_ratio_matches_the_kernel_helper(c, xv):
    f = array_function(Expm1Ratio(x, y), [x, y], name="t_array_expm1_ratio")
    assert float(f(c, xv)) == pytest.approx(stable.expm1_ratio(c, xv), rel=1e-14, abs=1e-300)
    assert float(f(c, 0.0)) == c


def test_same_numbers_as_the_scalar_kernel():
    expr = sp.log(1 + sp.exp(2 * x)) * sp.sqrt(y) / (1 - sp.exp(-x))
    k = scalar_kernel(expr, [x, y], name="t_array_vs_kernel")
    f = array_function(expr, [x, y], name="t_array_vs_kernel_np")
    for xv, yv in ((0.3, 2.0), (5.0, 0.1), (-2.0, 7.0)):
        assert float(f(xv, yv)) == pytest.approx(k(xv, yv), rel=1e-14)


def test_overflow_to_inf_only_when_asked():
    big = sp.exp(x * y)
    quiet = array_function(big, [x, y], name="t_array_overflow", overflow=True)
    assert quiet(1000.0, 1.0) == math.inf
    loud = array_function(big, [x, y], name="t_array_overflow_loud")
    with pytest.warns(RuntimeWarning, match="overflow"):
        assert loud(1000.0, 1.0) == math.inf


def test_refusals():
    k = sp.Symbol("k", integer=True)
    with pytest.raises(InvalidArgument, match="grid_kernel"):
        array_function(sp.Sum(x**k, (k, 0, n)), [x, n], name="t_array_sum")
    with pytest.raises(InvalidArgument, match="not among the arguments"):
        array_function(x + y, [x], name="t_array_missing")
    with pytest.raises(InvalidArgument, match="name="):
        array_function(x, [x], name="_private")
    with pytest.raises(InvalidArgument, match="undefined function"):
        array_function(sp.Function("f")(x), [x], name="t_array_undef")
    with pytest.raises(InvalidArgument, match="default branch"):
        array_function(sp.Piecewise((x, x > 0)), [x], name="t_array_pw")


def test_special_functions_and_gamma():
    f = array_function([sp.gamma(x), sp.loggamma(x), sp.erfc(x)], [x], name="t_array_special")
    got = f(np.array([0.5, 3.0]))
    np.testing.assert_allclose(got[0], [math.gamma(0.5), 2.0], rtol=1e-14)
    np.testing.assert_allclose(got[1], [math.lgamma(0.5), math.log(2.0)], rtol=1e-14)
    np.testing.assert_allclose(got[2], [float(mpmath.erfc(0.5)), float(mpmath.erfc(3.0))], rtol=1e-13)


def test_float_function_agrees_with_mpmath_and_refuses_non_symbols():
    from numerics.compile import float_function

    f = float_function([sp.exp(-x) * (1 + y**2), sp.log(1 + x**2) / (1 + y**2)], [x, y])
    got = f(0.7, -1.3)
    want = [_mp(e, {x: sp.Float(0.7, 30), y: sp.Float(-1.3, 30)}) for e in
            (sp.exp(-x) * (1 + y**2), sp.log(1 + x**2) / (1 + y**2))]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    with pytest.raises(InvalidArgument, match="not a SymPy Symbol"):
        float_function([x], ["x"])
