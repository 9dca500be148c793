"""SGD and Adam update rules against their closed-form iterates."""

import numpy as np
import pytest

from derivations.errors import InvalidArgument
from numerics.optim import SGD, Adam, make_optimizer


def test_sgd_on_a_quadratic_follows_the_geometric_iterates():
    # f(θ) = ½ Σ a_i θ_i²: θ_k = (1 − η a)^k θ_0
    a = np.array([0.5, 2.0, 3.0])
    theta0 = np.array([1.0, -2.0, 0.3])
    theta = theta0.copy()
    opt = SGD(0.1, 3)
    for _ in range(25):
        opt.step(theta, a * theta)
    np.testing.assert_allclose(theta, (1 - 0.1 * a) ** 25 * theta0, rtol=1e-13)


def test_sgd_per_coordinate_rates_freeze_a_zero_rate():
    theta = np.array([1.0, 1.0])
    SGD(np.array([0.0, 0.5]), 2).step(theta, np.array([3.0, 2.0]))
    assert theta.tolist() == [1.0, 0.0]


def test_adam_on_a_linear_loss_moves_by_lr_per_step():
    # constant gradient c: m̂_t = c and v̂_t = c² exactly, so each step moves lr·c/(|c|+ε)
    c = np.array([2.0, -0.5])
    theta = np.zeros(2)
    opt = Adam(0.01, 2)
    for _ in range(40):
        opt.step(theta, c)
    np.testing.assert_allclose(theta, -40 * 0.01 * c / (np.abs(c) + 1e-8), rtol=1e-12)


def test_adam_on_a_quadratic_matches_the_textbook_recursion():
    a, theta0, lr, (b1, b2, eps) = 1.7, 0.8, 0.05, (0.9, 0.999, 1e-8)
    theta = np.array([theta0])
    opt = Adam(lr, 1)
    ref, m, v = theta0, 0.0, 0.0
    for t in range(1, 60):
        grad = a * ref
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        ref -= lr * (m / (1 - b1**t)) / ((v / (1 - b2**t)) ** 0.5 + eps)
        opt.step(theta, a * theta)
        assert theta[0] == pytest.approx(ref, rel=1e-13, abs=1e-15)


def test_bad_optimizer_settings_are_refused():
    with pytest.raises(InvalidArgument, match="optimizer='rmsprop'"):
        make_optimizer("rmsprop", 0.1, 2)
    with pytest.raises(InvalidArgument, match="lr="):
        SGD(-0.1, 2)
    with pytest.raises(InvalidArgument, match="beta1"):
        Adam(0.1, 2, (1.0, 0.999, 1e-8))
