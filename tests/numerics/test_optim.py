"""The update rules of numerics.optim, one step at a time, against their closed forms.

The driver's view (groups, schedules, PyTorch references, bit for bit) is in test_train.py.
"""

import numpy as np
import pytest

from derivations.errors import InvalidArgument
from numerics.optim import GD, SGD, Adam, Momentum, optimizer_named

ONES = np.ones(3)


def _run(opt, theta, grad_of, steps, lr, sign=None):
    theta = np.array(theta, dtype=float)
    lr = np.broadcast_to(np.asarray(lr, dtype=float), theta.shape).copy()
    sign = np.ones(theta.size) if sign is None else np.asarray(sign, dtype=float)
    state = opt.init(theta.size)
    for _ in range(steps):
        assert opt.update(theta, grad_of(theta), lr, sign, state) == -1
    return theta, state


def test_gd_on_a_quadratic_follows_the_geometric_iterates():
    # f(θ) = ½ Σ a_i θ_i²: θ_k = (1 − η a)^k θ_0
    a = np.array([0.5, 2.0, 3.0])
    theta0 = np.array([1.0, -2.0, 0.3])
    theta, state = _run(SGD(), theta0, lambda th: a * th, 25, 0.1)
    np.testing.assert_allclose(theta, (1 - 0.1 * a) ** 25 * theta0, rtol=1e-13)
    assert state["t"] == 25


def test_a_zero_rate_freezes_and_a_negative_sign_ascends():
    theta = np.array([1.0, 1.0, 1.0])
    GD().update(
        theta, np.array([3.0, 2.0, 2.0]), np.array([0.0, 0.5, 0.5]), np.array([1.0, 1.0, -1.0]), GD().init(3)
    )
    assert theta.tolist() == [1.0, 0.0, 2.0]


def test_a_frozen_coordinate_is_not_written_even_by_a_nan_gradient():
    theta = np.array([-0.0, 1.0])
    bad = GD().update(theta, np.array([np.nan, 1.0]), np.array([0.0, 0.5]), np.ones(2), {"t": 0})
    assert bad == -1 and np.signbit(theta[0]) and theta[1] == 0.5


def test_the_first_non_finite_coordinate_is_reported():
    theta = np.array([1.0, 1.0, 1.0])
    assert GD().update(theta, np.array([1.0, np.inf, np.nan]), ONES, ONES, {"t": 0}) == 1


def test_adam_on_a_linear_loss_moves_by_lr_per_step():
    # constant gradient c: m̂_t = c and v̂_t = c² exactly, so each step moves lr·c/(|c|+ε)
    c = np.array([2.0, -0.5])
    theta, _ = _run(Adam(), np.zeros(2), lambda th: c, 40, 0.01)
    np.testing.assert_allclose(theta, -40 * 0.01 * c / (np.abs(c) + 1e-8), rtol=1e-12)


def test_adam_on_a_quadratic_matches_the_textbook_recursion():
    a, theta0, lr, (b1, b2, eps) = 1.7, 0.8, 0.05, (0.9, 0.999, 1e-8)
    theta = np.array([theta0])
    opt, state = Adam(), Adam().init(1)
    ref, m, v = theta0, 0.0, 0.0
    for t in range(1, 60):
        grad = a * ref
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        ref -= lr * (m / (1 - b1**t)) / ((v / (1 - b2**t)) ** 0.5 + eps)
        opt.update(theta, a * theta, np.array([lr]), np.ones(1), state)
        assert theta[0] == ref  # the same operations in the same order


def test_heavy_ball_momentum_on_a_quadratic_matches_its_two_term_recursion():
    # b_k = μ b_{k−1} + g_k, θ_{k+1} = θ_k − η b_k  ⇔  θ_{k+1} = θ_k − η g_k + μ(θ_k − θ_{k−1})
    a, lr, mu = 2.0, 0.1, 0.7
    theta, _ = _run(Momentum(mu), [1.0], lambda th: a * th, 30, lr)
    prev, cur = 1.0, 1.0 - lr * a
    for _ in range(29):
        prev, cur = cur, cur - lr * a * cur + mu * (cur - prev)
    assert theta[0] == pytest.approx(cur, rel=1e-12)


def test_optimizers_by_name_and_bad_settings_are_refused():
    assert optimizer_named("sgd") == SGD() and optimizer_named("adam", (0.8, 0.9, 1e-6)) == Adam(
        (0.8, 0.9), 1e-6
    )
    with pytest.raises(InvalidArgument, match="optimizer='rmsprop' is not one of gd, sgd, adam"):
        optimizer_named("rmsprop")
    with pytest.raises(InvalidArgument, match="Momentum"):
        optimizer_named("momentum")
    with pytest.raises(InvalidArgument, match=r"beta1=1\.0"):
        Adam((1.0, 0.999))
    with pytest.raises(InvalidArgument, match=r"eps=0"):
        Adam(eps=0)
    with pytest.raises(InvalidArgument, match=r"mu=-0\.1"):
        Momentum(-0.1)
    with pytest.raises(InvalidArgument, match="nesterov=True needs mu > 0 and dampening = 0"):
        Momentum(0.9, dampening=0.1, nesterov=True)
    with pytest.raises(InvalidArgument, match=r"weight_decay=-1\.0"):
        Momentum(0.9, weight_decay=-1)
