"""The ss model kernels: counts form = sequence form, gradients against complex step and central differences."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.differences import complex_step_gradient
from numerics.models.scan_snap.model import Instance, gradient_counts, gradient_T_inf, loss_analytic

cases = st.tuples(st.integers(0, 10**6), st.sampled_from([(3, 2), (7, 12), (12, 40)]), st.booleans())


@settings(deadline=None, max_examples=60)
@given(cases)
def test_counts_kernel_equals_the_sequence_form(case):
    seed, (M, T), key_query = case
    x = Instance(seed, M, T, key_query)
    J, gY, gZ = x.kernel_gradient()
    Js, gYs, gZs = x.sequence_gradient()
    assert abs(J - Js) <= 1e-12 * max(1, abs(J))
    assert np.max(np.abs(gY - gYs)) <= 1e-12 and np.max(np.abs(gZ - gZs)) <= 1e-12


@settings(deadline=None, max_examples=40)
@given(cases)
def test_kernel_gradient_equals_complex_step(case):
    seed, (M, T), key_query = case
    x = Instance(seed, M, T, key_query)
    _, gY, gZ = x.kernel_gradient()
    cs = complex_step_gradient(lambda th: loss_analytic(th, M, x.counts, x.m, x.n, key_query), x.theta)
    kernel = np.concatenate([gY.ravel(), gZ.ravel()])
    assert np.max(np.abs(kernel - cs)) <= 1e-12 * max(1.0, np.max(np.abs(cs)))


def test_complex_step_equals_central_differences():
    x = Instance(3, 7, 12)
    theta = x.theta
    cs = complex_step_gradient(lambda th: loss_analytic(th, 7, x.counts, x.m, x.n), theta)
    fd = np.empty_like(theta)
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = 1e-6
        fd[k] = (loss_analytic(theta + e, 7, x.counts, x.m, x.n) - loss_analytic(theta - e, 7, x.counts, x.m, x.n)) / 2e-6
    assert np.max(np.abs(fd - cs)) <= 1e-7 * max(1.0, np.max(np.abs(cs)))


def test_untouched_rows_get_no_gradient_and_the_gauge_directions_none():
    x = Instance(11, 12, 5)
    _, gY, gZ = x.kernel_gradient()
    absent = x.counts == 0
    assert np.all(gY[absent] == 0)  # ∂J/∂Y = f dᵀ: rows of ids absent from the context are exactly 0
    assert np.all(np.delete(gZ, x.m, axis=0) == 0)  # only the row of the last token
    assert abs(gZ[x.m].sum()) <= 1e-14 and np.max(np.abs(gY.sum(axis=1))) <= 1e-14


def test_T_infinity_is_the_counts_form_with_probabilities():
    x = Instance(5, 7, 12)
    gY, gZ = np.zeros((7, 7)), np.zeros((7, 7))
    J = gradient_T_inf(x.Y, x.Z, x.P, x.m, x.n, False, gY, gZ)
    scaled = x.P * 1000.0  # v depends on N only through N/ΣN
    gY2, gZ2 = np.zeros((7, 7)), np.zeros((7, 7))
    J2 = gradient_counts(x.Y, x.Z, scaled, x.m, x.n, False, gY2, gZ2)
    assert abs(J - J2) < 1e-14 and np.allclose(gY, gY2, atol=1e-15) and np.allclose(gZ, gZ2, atol=1e-15)
