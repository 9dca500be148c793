"""The vectorisable exponential: accuracy in ulp against libm, and its documented edges."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from numerics._jit import jit
from numerics.vector_exp import FLUSH_BELOW, OVERFLOW_ABOVE, vexp


@jit
def _vexp_array(a):
    out = np.empty_like(a)
    for i in range(a.size):
        out[i] = vexp(a[i])
    return out


def _ulps(got, exact):
    return np.abs(got - exact) / np.spacing(np.abs(exact))


def test_within_three_ulp_over_the_whole_normal_range():
    x = np.random.default_rng(0).uniform(FLUSH_BELOW, OVERFLOW_ABOVE, 2_000_000)
    x = np.concatenate([x, np.random.default_rng(1).uniform(-1.0, 1.0, 1_000_000)])
    assert np.max(_ulps(_vexp_array(x), np.exp(x))) <= 3.0


@given(st.floats(FLUSH_BELOW, OVERFLOW_ABOVE, exclude_min=True, exclude_max=True))
def test_within_three_ulp_of_libm(x):
    assert _ulps(_vexp_array(np.array([x]))[0], math.exp(x)) <= 3.0


def test_exact_at_zero_and_powers_of_e():
    assert _vexp_array(np.array([0.0, -0.0]))[0] == 1.0
    assert _vexp_array(np.array([1.0]))[0] == math.e or _ulps(_vexp_array(np.array([1.0])), math.e)[0] <= 1


def test_edges_overflow_flush_and_nan():
    x = np.array([math.inf, 710.0, OVERFLOW_ABOVE + 1e-9, -math.inf, -745.0, FLUSH_BELOW - 1e-9, math.nan])
    out = _vexp_array(x)
    assert np.all(np.isposinf(out[:3]))
    assert np.all(out[3:6] == 0.0)
    assert math.isnan(out[6])
    assert _vexp_array(np.array([FLUSH_BELOW + 1e-9]))[0] > 0
