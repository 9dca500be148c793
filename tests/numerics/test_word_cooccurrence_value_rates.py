"""The rates ∂(a_jw_jᵀW_Vμ)/∂t and Lemma C.1's split (numerics.models.word_cooccurrence.value_rates): against the
complex-step oracle of the loss (a route that shares no code with the closed forms), the split's identity, and
the proven bound on s_μ's distance from its value at F = 0."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from numerics.differences import complex_step_gradient, directional_derivative
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.data import MU1, MU2, MU3, REGIMES, build_dataset
from numerics.models.word_cooccurrence.value_rates import rates_by_chain_rule, value_rates


def _setting(m, kappa, seed, counts=(12, 4, 4, 4), d=43):
    r = REGIMES["init"]
    data = build_dataset(counts, r.L, d, seed)
    lay = Mo.layout(m, r.m1, d)
    theta = Mo.init_params(m, r.m1, d, kappa / math.sqrt(r.L * m), kappa / math.sqrt(r.m1), [seed, m])
    a = Mo.output_weights(r.m1, [seed, m])
    return lay, theta, data.tokens, data.labels.astype(float), a


def _oracle_rates(lay, theta, tokens, labels, a):
    """θ̇ = −∇L̂ by complex steps of the loss, then Q̇ = ∇Q·θ̇ for Q = diag(a)·W·W_V by one more."""
    theta_dot = -complex_step_gradient(lambda t: Mo.loss(t, lay, tokens, labels, a), theta)
    return directional_derivative(lambda t: (a[:, None] * (lay.views(t)["W"] @ lay.views(t)["WV"])).reshape(-1),
                                  theta, theta_dot).reshape(a.size, -1)


@pytest.mark.parametrize("seed", [0, 1])
def test_rates_equal_the_complex_step_oracle_and_the_split_adds_up(seed):
    lay, theta, tokens, labels, a = _setting(16, 0.8, seed)
    r = value_rates(theta, lay, tokens, labels, a)
    oracle = _oracle_rates(lay, theta, tokens, labels, a)
    scale = np.abs(oracle).max()
    assert np.abs(r["D"] - oracle).max() <= 1e-13 * scale
    assert np.abs(r["main"] + r["eps1"] + r["eps2"] - oracle).max() <= 1e-13 * scale
    assert np.abs(rates_by_chain_rule(theta, lay, tokens, labels, a) - oracle).max() <= 1e-13 * scale


def test_unused_tokens_have_no_main_or_eps1_term_and_s_counts_attention_mass():
    lay, theta, tokens, labels, a = _setting(32, 0.5, 3, d=60)
    r = value_rates(theta, lay, tokens, labels, a)
    unused = np.setdiff1d(np.arange(60), tokens.reshape(-1))
    assert unused.size > 0
    assert np.all(r["main"][:, unused] == 0) and np.all(r["eps1"][:, unused] == 0) and np.all(r["s"][unused] == 0)
    # Σ_μ s_μ = Σ_i c_i Σ_h π_ih = Σ_i c_i·L (each query's attention sums to 1)
    f = Mo.forward(theta, lay, tokens, a)
    c = Mo.g_weight(labels * f["F"]) * labels / tokens.shape[0]
    assert math.isclose(r["s"].sum(), c.sum() * tokens.shape[1], rel_tol=1e-12, abs_tol=1e-15)


@settings(max_examples=25, deadline=None)
@given(kappa=st.floats(0.01, 3.0), seed=st.integers(0, 10_000))
def test_s_stays_within_the_proven_distance_of_its_value_at_F_zero(kappa, seed):
    lay, theta, tokens, labels, a = _setting(24, kappa, seed)
    r = value_rates(theta, lay, tokens, labels, a)
    rounding = 1e-15 * (np.abs(r["s_zero"]) + r["s_bound"])  # s and s⁰ are sums of n terms of size <= 1/n
    assert np.all(np.abs(r["s"] - r["s_zero"]) <= r["s_bound"] + rounding)
    # exact group fractions ½, ⅙, ⅙, ⅙: s⁰(μ₁) = s⁰(μ₂) = ½(½ − ⅙) = ⅙, s⁰(μ₃) = ½(½ − ½) = 0
    assert math.isclose(r["s_zero"][MU1], 1 / 6, rel_tol=1e-14) and math.isclose(r["s_zero"][MU2], 1 / 6, rel_tol=1e-14)
    assert abs(r["s_zero"][MU3]) <= 1e-16


def test_the_output_term_is_the_first_order_part_of_s():
    """s − s⁰ − o = O(F² + |π − 1|) with o linear in F: shrinking κ by 2 shrinks it ≈ 16× (F ∝ κ², π − 1 ∝ κ²),
    while s − s⁰ itself shrinks only ≈ 4×."""
    first, rest = [], []
    for kappa in (0.4, 0.2):
        lay, theta, tokens, labels, a = _setting(64, kappa, 5)
        r = value_rates(theta, lay, tokens, labels, a)
        held = r["s_zero"] != 0
        first.append(np.abs(r["s"] - r["s_zero"])[held].max())
        rest.append(np.abs(r["s"] - r["s_zero"] - r["s_output_term"])[held].max())
    assert 3 < first[0] / first[1] < 5
    assert rest[1] < rest[0] / 8
