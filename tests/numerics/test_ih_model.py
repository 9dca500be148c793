"""The induction-head model in numbers: Monte-Carlo integrands and the Stage-II flow.

Known answers come from first principles, independently of the derivations package: E x_i x_j = δ_ij
for Eq. (7)'s quadratic form, and direct float sums for the ALiBi weights.
"""

import math

import numpy as np
import pytest

from numerics.models.induction_head import (
    coincidence_samples, draw_tokens, g4_loss_samples, ih_exp_loss_samples, stage2_flow, stage2_run,
)


def alibi_weights(p, L, first, last):
    lags = L - 1 - np.arange(first, last + 1)
    weights = np.exp(-p * lags)
    return weights / weights.sum()


@pytest.mark.parametrize(("p", "g", "L"), [(0.01, 0.3, 5), (0.5, 0.6, 12), (6.0, 0.01, 40)])
def test_g4_loss_integrand_mean_is_the_quadratic_form(p, g, L):
    alpha = 1.0
    gstar = alpha / (1 + alpha)
    pi = alibi_weights(p, L, 2, L - 1)  # π_s for s = 2..L-1 acts on x_{s-1} = x_1..x_{L-2}
    exact = 0.5 * (gstar**2 - 2 * gstar * g * pi[-1] + g**2 * (pi**2).sum())
    X = draw_tokens(np.random.default_rng(1), 200_000, L)
    values = g4_loss_samples(X, p, g, alpha, L - 1)
    assert abs(values.mean() - exact) <= 4 * values.std() / math.sqrt(values.size)


def test_exp_loss_integrand_at_w_zero_has_a_closed_mean():
    # at w = w* = 0 every exponential is 1: target and model are plain averages of x_2..x_{L-1}
    L, h, alpha = 10, 0.3, 1.0
    hstar = 1 / (1 + alpha)
    exact = 0.5 * (hstar - h) ** 2 / (L - 2)
    X = draw_tokens(np.random.default_rng(2), 100_000, L)
    values = ih_exp_loss_samples(X, 0.0, h, alpha, 0.0, L - 1)
    assert abs(values.mean() - exact) <= 4 * values.std() / math.sqrt(values.size)


def test_coincidence_probability_is_the_squared_norm():
    p, L = 0.3, 8
    exact = (alibi_weights(p, L, 2, L - 1) ** 2).sum()
    U = np.random.default_rng(3).random((200_000, 2))
    values = coincidence_samples(U, p, 2, L - 1, L)
    assert abs(values.mean() - exact) <= 4 * values.std() / math.sqrt(values.size)


def test_boolean_tokens_are_signs():
    X = draw_tokens(np.random.default_rng(4), 1000, 7, "boolean")
    assert set(np.unique(X[:, 1:])) == {-1.0, 1.0} and np.all(X[:, 0] == 0)


def test_paper_flow_moves_w_twice_as_fast_as_the_balanced_flow_at_equal_states():
    y = np.array([0.3, 0.2, 0.4, math.log(0.2)])
    params = np.array([40.0, 1.0, 0.49, 0.1])
    out = {}
    for mode in ("paper", "balanced"):
        field = stage2_flow(mode)
        dy = np.empty(4)
        field.rhs(0.0, y, params, dy)
        out[mode] = dy
    assert out["paper"][3] == pytest.approx(2 * out["balanced"][3], rel=1e-12)
    assert np.allclose(out["paper"][:3], out["balanced"][:3], rtol=1e-14)


def test_stage2_hitting_times_are_where_the_state_crosses_its_thresholds():
    L, alpha, wstar, sigma = 40, 1.0, 0.49, 0.01
    solution, (g4, ih) = stage2_run(L, alpha, wstar, sigma, flow="paper")
    times, states = solution.event_times, solution.event_states
    hstar, gstar = 1 / (1 + alpha), alpha / (1 + alpha)
    assert states["T_o"][2] == pytest.approx(hstar, rel=1e-9)
    assert states["T_1g"][1] == pytest.approx(gstar, rel=1e-9)
    assert math.exp(states["T_w_half"][3]) == pytest.approx(wstar / 2, rel=1e-9)
    assert times["T_1g"] < times["T_o"] < times["T_w_half"] < times["T_III"]
    assert solution.status == "terminated by event T_III"
    # the losses decrease overall and L_G4 falls by 100x by T_I
    assert g4[-1] < 0.01 * g4[0] and ih[-1] < 0.01 * ih[0]
