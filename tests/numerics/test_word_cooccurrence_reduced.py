"""The group-level reduced model (numerics.models.word_cooccurrence.reduced) against its defining equations."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.models.word_cooccurrence import reduced as Re


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m1=st.integers(1, 16))
def test_reduced_rhs_is_the_group_level_system(seed, m1):
    rng = np.random.default_rng(seed)
    G = rng.normal(0, 2, 3)
    B = rng.normal(0, 1, (3, 3))
    N = B @ B.T
    U = float(rng.uniform(0.1, 100))
    counts = rng.integers(1, 50, 4)
    f = counts / counts.sum()
    margins = Re.LABELS * (Re.FEATURES @ G)
    r = (f * Re.LABELS / (1 + np.exp(margins))) @ Re.FEATURES
    out = np.empty(13)
    Re.reduced_rhs(0.0, np.concatenate([G, N.reshape(-1), [U]]), Re.reduced_params(m1, counts), out)
    np.testing.assert_allclose(out[:3], (U * np.eye(3) + m1 * N) @ r, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[3:12].reshape(3, 3), np.outer(r, G) + np.outer(G, r), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out[12], 2 * m1 * r @ G, rtol=1e-12, atol=1e-14)


def test_observer_loss_and_group_sums():
    y = np.concatenate([[0.3, -0.2, 0.1], np.eye(3).reshape(-1), [2.0]])
    counts = np.array([12, 4, 4, 4])
    out = np.empty(len(Re.OBSERVED))
    Re.observe_reduced(0.0, y, Re.reduced_params(8, counts), out)
    margins = Re.LABELS * (Re.FEATURES @ y[:3])
    f = counts / counts.sum()
    np.testing.assert_allclose(out[0], f @ np.log1p(np.exp(-margins)), rtol=1e-14)
    np.testing.assert_allclose(out[5:9], counts / (1 + np.exp(margins)), rtol=1e-14)
