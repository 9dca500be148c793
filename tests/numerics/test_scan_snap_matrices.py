"""The explicit admissible E and F of ``ss.dv.asm2_feasibility`` (numerics.models.scan_snap.matrices)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.models.scan_snap.matrices import gram_features, matching_triangle_E


@pytest.mark.parametrize("K", range(2, 10))
def test_matching_triangle_spectrum(K):
    a = 0.01
    lam = np.sort(np.linalg.eigvalsh(matching_triangle_E(K, a)))
    if K % 2 == 0:
        expected = [-a] * (K // 2) + [a] * (K // 2)
    else:
        expected = [-2 * a] * ((K - 3) // 2) + [-a, -a] + [2 * a] * ((K - 3) // 2 + 1)
    np.testing.assert_allclose(lam, np.sort(expected), rtol=0, atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(K=st.integers(2, 7), seed=st.integers(0, 2**31 - 1), density=st.floats(0.1, 1.0))
def test_gram_features_reproduce_E(K, seed, density):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.uniform(0, 1, (K, K)) * (rng.uniform(0, 1, (K, K)) < density), 1)
    E = upper + upper.T
    if E.sum(axis=1).max() > 0:
        E *= rng.uniform(0.01, 1.0) / E.sum(axis=1).max()
    F = gram_features(E, K * K + 3)
    assert np.all(F >= 0)
    np.testing.assert_allclose(np.linalg.norm(F, axis=0), 1.0, rtol=0, atol=1e-15)
    # each entry sums at most K products of correctly rounded square roots: K ulps of 1
    np.testing.assert_allclose(F.T @ F - np.eye(K), E, rtol=0, atol=K * np.finfo(float).eps)


@pytest.mark.parametrize("E, M, words", [
    (np.array([[0, 0.6, 0.6], [0.6, 0, 0], [0.6, 0, 0]]), 10, "row sum of E must be <= 1"),
    (np.array([[0, -0.1], [-0.1, 0]]), 10, "non-negative"),
    (np.array([[0, 0.1], [0.1, 0]]), 2, "M must be >= K"),
])
def test_gram_features_refuse_bad_input(E, M, words):
    with pytest.raises(InvalidArgument, match=words):
        gram_features(E, M)
