"""ih.dv.G4_tail and ih.dv.stage1_rate (derivations.induction_head.tails) against independent computations."""

import math

import numpy as np
import pytest
import sympy as sp

from derivations.induction_head import symbols as S
from derivations.induction_head import tails


@pytest.mark.parametrize("reading", ["canonical", "literal"])
def test_tail_loss_is_the_large_L_limit_of_the_head1_loss(reading):
    """Direct float sums of the head-1 quadratic form at L = 400 (remainder ~ L u^{L-3}, negligible)."""
    L, alpha = 400, 2.0
    gs = alpha / (1 + alpha)
    f = sp.lambdify((S.u, S.g, S.alpha), tails.g4_tail_loss(reading))
    last = L - 1 if reading == "canonical" else L - 2
    for u_, g_ in ((0.2, 0.3), (0.6, 0.9), (0.9, -0.2)):
        lags = (L - 1) - np.arange(2, last + 1)
        pi = u_**lags / (u_**lags).sum()
        cross = pi[-1] if reading == "canonical" else 0.0
        exact = 0.5 * (gs**2 - 2 * gs * g_ * cross + g_**2 * (pi**2).sum())
        assert float(f(u_, g_, alpha)) == pytest.approx(exact, rel=1e-12)


def test_slow_manifold_reduced_loss_and_velocity():
    u, gs = S.u, S.gstar
    assert sp.simplify(tails.g4_slow_manifold() - gs * (1 + u)) == 0
    assert sp.simplify(tails.g4_reduced_loss() - gs**2 * u**2 / 2) == 0
    assert sp.simplify(tails.g4_slow_velocity() + gs**2 * u**3) == 0
    assert tails.g4_slow_manifold("literal") == 0


def test_asymptotics_solve_the_slow_flow():
    asym = tails.g4_tail_asymptotics()
    assert asym["residual"] == 0
    assert asym["u_ratio_limit"] == 1
    assert sp.simplify(asym["loss"] - 1 / (4 * tails.t)) == 0


@pytest.mark.parametrize(("L", "reading"), [(5, "canonical"), (5, "literal"), (6, "canonical"), (6, "literal")])
def test_stage1_rate_constant_is_the_first_series_coefficient(L, reading):
    series, formula, _ = tails.stage1_rate_from_series(L, reading)
    assert sp.expand(series - formula) == 0


def test_stage1_rate_constant_numerically_from_finite_differences():
    """-dL^I/dp̃·e^{p̃} → K: explicit float loss at L = 9, p̃ = 14, with non-uniform π."""
    L, sigma, gs = 9, 0.3, 0.6
    pi = np.linspace(1.0, 2.0, L - 2)
    pi /= pi.sum()

    def loss(pt):
        c = np.zeros(L + 1)
        for s in range(2, L):
            A = np.exp(-pt * (s - 1 - np.arange(1, s)))
            c[1:s] += pi[s - 2] * A / A.sum()
        r = sigma * c
        r[L - 2] -= gs
        return 0.5 * (r**2).sum()

    pt, h = 14.0, 1e-3
    velocity = -(loss(pt + h) - loss(pt - h)) / (2 * h)
    K = tails.stage1_rate_constant(list(pi), sigma, gs)
    assert velocity * math.exp(pt) == pytest.approx(K, rel=1e-4)


def test_uniform_weights_give_the_c2_constant():
    n = 7
    pi = [sp.Rational(1, n)] * n
    sig, gs = sp.symbols("sigma gstar", positive=True)
    assert sp.simplify(tails.stage1_rate_constant(pi, sig, gs) - gs * sig / n) == 0
