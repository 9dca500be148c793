"""The model of Eq. (1) and its vectorised flow against first principles: the literal Eq. (1), complex step."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.differences import central_jacobian, complex_step_gradient
from numerics.models.word_cooccurrence import model as Mo


def _instance(seed, m, m1, d, L, n, repeat):
    rng = np.random.default_rng(seed)
    lay = Mo.layout(m, m1, d)
    theta = Mo.init_params(m, m1, d, 0.8, 0.7, seed)
    tokens = rng.integers(0, d, (n, L)) if repeat else np.array([rng.permutation(d)[:L] for _ in range(n)])
    labels = rng.choice([-1.0, 1.0], n)
    return lay, theta, tokens, labels, Mo.output_weights(m1, seed)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 6), m1=st.integers(1, 4), L=st.integers(2, 5),
       n=st.integers(1, 5), repeat=st.booleans())
def test_flow_is_minus_the_complex_step_gradient(seed, m, m1, L, n, repeat):
    lay, theta, tokens, labels, a = _instance(seed, m, m1, L + 3, L, n, repeat)
    oracle = -complex_step_gradient(lambda t: Mo.loss(t, lay, tokens, labels, a), theta)
    flow = Mo.flow(theta, lay, tokens, labels, a)
    np.testing.assert_allclose(flow, oracle, rtol=0, atol=1e-13 * max(np.max(np.abs(oracle)), 1e-300))


def test_flow_agrees_with_central_differences():
    lay, theta, tokens, labels, a = _instance(3, 4, 3, 9, 4, 5, True)
    numeric = central_jacobian(lambda t: np.array([Mo.loss(t, lay, tokens, labels, a)]), theta)[0]
    np.testing.assert_allclose(Mo.flow(theta, lay, tokens, labels, a), -numeric, rtol=0, atol=1e-7)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 5), m1=st.integers(1, 4), L=st.integers(2, 5))
def test_literal_eq1_equals_the_compact_form(seed, m, m1, L):
    lay, theta, tokens, labels, a = _instance(seed, m, m1, L + 2, L, 3, True)
    F = Mo.output(theta, lay, tokens, a)
    np.testing.assert_allclose(Mo.output_literal(theta, lay, tokens, a), F, rtol=0,
                               atol=1e-13 * max(np.max(np.abs(F)), 1.0))


def test_frozen_blocks_get_zero_and_the_others_are_unchanged():
    lay, theta, tokens, labels, a = _instance(1, 4, 3, 8, 4, 4, False)
    full = Mo.flow(theta, lay, tokens, labels, a)
    part = Mo.flow(theta, lay, tokens, labels, a, trainable=("W", "WV"))
    mask = lay.mask(("W", "WV"))
    np.testing.assert_array_equal(part[mask], full[mask])
    assert not np.any(part[~mask])


def test_loss_is_finite_at_large_margins():
    margins = np.array([-800.0, -30.0, 0.0, 30.0, 800.0])
    losses = Mo.logistic_loss(margins)
    np.testing.assert_allclose(losses, [800.0, 30.0 + np.log1p(np.exp(-30.0)), np.log(2), np.log1p(np.exp(-30.0)),
                                        0.0], rtol=1e-15, atol=1e-300)
    e30 = np.exp(-30.0)
    np.testing.assert_allclose(Mo.g_weight(margins), [1.0, 1 / (1 + e30), 0.5, e30 / (1 + e30), 0.0], rtol=1e-15,
                               atol=0)  # e^{−800} is below the smallest subnormal


def test_output_weights_have_both_signs_and_fixed_values_are_checked():
    for seed in range(20):
        a = Mo.output_weights(4, seed)
        assert set(a) == {-1.0, 1.0}
    with pytest.raises(InvalidArgument, match="fixed output weights"):
        Mo.output_weights(3, 0, fixed=(1, 2, 1))
