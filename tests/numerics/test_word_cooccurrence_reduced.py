"""The group-level reduced model (numerics.models.word_cooccurrence.reduced) against its defining equations."""

import numpy as np
import pytest
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


def test_the_clock_event_is_the_smallest_group_margin():
    y = np.concatenate([[0.3, -0.2, -0.4], np.eye(3).reshape(-1), [2.0]])
    out = np.empty(1)
    Re.all_groups_correct(0.0, y, Re.reduced_params(8, (3, 1, 1, 1)), np.empty(1), np.empty((1, 13)), out)
    assert out[0] == pytest.approx(np.min(Re.LABELS * (Re.FEATURES @ y[:3])), abs=1e-15)


def test_the_clock_is_scale_free_when_N_is_zero():
    """With N = 0 and U ≫ the growth of U, τ = U₀t makes the group dynamics universal: T₁U₀ nearly constant."""
    from numerics.ode import Tolerance, integrate

    p = Re.reduced_params(8, (300, 100, 100, 100))
    values = []
    for U0 in (1e4, 1e6):
        sol = integrate(Re.CLOCK, Re.clock_state(0.0, U0), (0.0, 1e3 / U0), p, tol=Tolerance(1e-10, 1e-14))
        values.append(sol.event_times["all_groups_correct"] * U0)
    assert values[0] == pytest.approx(values[1], rel=1e-3)
