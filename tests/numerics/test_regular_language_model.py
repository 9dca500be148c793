"""Tests of numerics.models.regular_language: data sets and labels, the model's loss and gradient, the mpmath twin."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from derivations.errors import InvalidArgument
from numerics.models.regular_language import (
    RLModel,
    attention_mp,
    class_features_mp,
    cot_data,
    ep_count,
    ep_data,
    ep_label_literal,
    features_mp,
    flat_mp,
    forward_mp,
    gradient_mp,
    live_entries,
    loss_mp,
    make_data,
    parity_data,
    split_flat,
)
from numerics.differences import complex_step_gradient
from numerics.models.regular_language.analytic import loss_analytic
from numerics.models.regular_language.data import ep_rule
from numerics.models.regular_language.model import (
    TABLE_TINY,
    exp_nonpositive,
    log1p_unit,
    loss_grad_kernel,
    table_plan,
    tabled_loss_grad,
)
from numerics.train import ParamGroup, Schedule, train

# --- the data sets ------------------------------------------------------------------------------


@pytest.mark.parametrize("L_max", [2, 3, 6, 7, 9])
def test_sample_count_layout_and_weights(L_max):
    data = ep_data(L_max)
    assert data.n == 2 ** (L_max + 1) - 2 and data.dim == 2 * L_max and data.L_max == L_max
    for n in range(data.n):
        s, L = data.string(n), int(data.length[n])
        assert len(s) == L
        assert data.idx[n, :L].tolist() == [2 * ell + (c == "b") for ell, c in enumerate(s)]
        assert np.all(data.idx[n, L:] == -1)
        assert data.query[n] == data.idx[n, L - 1]
        assert data.weight_exact[n] == Fraction(1, 2**L) and data.weight[n] == 2.0**-L
    assert sum(data.weight_exact) == L_max


@pytest.mark.parametrize(
    "data",
    [ep_data(6), ep_data(3), parity_data(5), cot_data(3), cot_data(4, cot_max_len="2L0-2", reg_max_len="L0")],
    ids=["ep6", "ep3", "parity5", "cot3", "cot4-alt"],
)
def test_classes_have_half_the_strings_and_weight_one_half(data):
    """Spec §2.8: for L >= 2 each class (L, y) has 2^{L-1} samples and total weight 1/2 (per loss term)."""
    classes = data.classes()
    for (term, L, y), members in classes.items():
        weight = sum(data.weight_exact[int(n)] for n in members)
        if L == 1 and data.task != "parity":
            assert y == 1 and members.size == 2 and weight == 1  # length-1 strings are positive
        else:
            assert members.size == 2 ** (L - 1) and weight == Fraction(1, 2), (term, L, y)
            assert (term, L, -y) in classes


def test_cot_strata_and_labels():
    data = cot_data(3)  # L_max = 5: regulariser lengths 1, 2 (y^e), CoT lengths 3, 4, 5 (y^p)
    assert data.lengths == (1, 2, 3, 4, 5) and data.terms == ("reg", "reg", "cot", "cot", "cot")
    assert data.dim == 10 and data.n == 62
    for n in range(data.n):
        s, L = data.string(n), int(data.length[n])
        key = 1 if L < 3 else L - 3 + 1  # ℓ0 = L - L0 + 1 (1-based)
        assert data.y[n] == (1 if s[key - 1] == s[-1] else -1)
    alt = cot_data(3, cot_max_len="2L0-2", reg_max_len="L0")
    assert alt.lengths == (1, 2, 3, 3, 4) and alt.terms == ("reg", "reg", "reg", "cot", "cot")
    twice = np.flatnonzero(alt.length == 3)
    assert twice.size == 16 and np.array_equal(alt.y[twice[:8]], alt.y[twice[8:]])  # the rules agree at L0


def test_parity_labels():
    data = parity_data(6)
    for n in range(data.n):
        assert data.y[n] == (1 if data.string(n).count("b") % 2 == 0 else -1)


def test_ep_contiguous_is_first_equals_last_up_to_length_10():
    """rl.cf.ep_label, by enumeration: N_P (adjacent changes) is even iff c_1 = c_L."""
    for L in range(1, 11):
        strings = np.array(list(itertools.product((0, 1), repeat=L)), dtype=np.int64)
        literal = np.array([ep_label_literal(tuple(s)) for s in strings])
        assert np.array_equal(literal, np.where(strings[:, 0] == strings[:, -1], 1, -1))
        assert np.array_equal(ep_rule(strings), literal)
        sub = np.array([ep_label_literal(tuple(s), "subsequence") for s in strings])
        assert np.array_equal(ep_rule(strings, "subsequence"), sub)
        if L % 2:
            assert np.all(sub == 1)  # n_a·n_b is even when n_a + n_b is odd


def test_ep_counts_on_the_papers_example():
    aabba = (0, 0, 1, 1, 0)
    assert ep_count(aabba, "contiguous") == 2  # "one ab and one ba, resulting in a total of two"
    assert ep_count(aabba, "subsequence") == 6  # 3 a's × 2 b's
    assert ep_label_literal(aabba) == ep_label_literal(aabba, "subsequence") == 1


def test_ep_subsequence_data_set():
    data = ep_data(5, ep_count="subsequence")
    assert np.all(data.y[(data.length % 2) == 1] == 1)
    assert data.flags["ep_count"] == "subsequence"


def test_dim_reading():
    assert ep_data(4, dim=20).dim == 20
    with pytest.raises(InvalidArgument, match=r"dim=7 .*E_4\^b = e_8 needs index 8"):
        ep_data(4, dim=7)
    with pytest.raises(InvalidArgument, match=r"dim=6 .*index 7"):
        cot_data(4, dim=6)  # Sec. 5.2's d >= 2L0 - 2 cannot hold the CoT lengths up to 2L0 - 1
    data = cot_data(4, cot_max_len="2L0-2")
    assert data.dim == 12 and data.L_max == 6


# --- the loss at zero and the live entries ------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "terms"),
    [(ep_data(6), 6), (ep_data(2), 2), (parity_data(4), 4), (cot_data(4), 7),
     (cot_data(4, cot_max_len="2L0-2"), 6), (cot_data(3, reg_max_len="L0"), 6)],
)
def test_loss_at_zero_is_log2_per_length(data, terms):
    """rl.cf.model_loss: L(0, 0) = (number of length terms)·log 2; exact in mpmath, to rounding in float."""
    zero_u, zero_W = np.zeros(data.dim), np.zeros((data.dim, data.dim))
    with mp.workdps(60):
        exact = loss_mp(data, zero_u, zero_W, Fraction(7, 2)) - terms * mp.log(2)
        assert abs(exact) < mp.mpf(10) ** -58
    model = RLModel(data, 3.5)
    assert model.loss(model.zeros()) == pytest.approx(terms * math.log(2), rel=4e-16)
    assert model.enumeration().estimate(model.zeros()).mean == pytest.approx(terms * math.log(2), rel=4e-16)


@pytest.mark.parametrize("L_max", [2, 3, 4, 5, 6, 7])
def test_live_entries(L_max):
    data = ep_data(L_max)
    live = live_entries(data)
    assert live.sum() == sum(2 * (2 * L - 1) for L in range(2, L_max + 1))
    if L_max == 6:
        assert live.sum() == 70
    # length-1 query columns and the entries no sample touches get exactly zero gradient
    model = RLModel(data, 2.0)
    theta = np.random.default_rng(L_max).normal(size=model.size)
    _, grad = model.gradient(theta)
    assert np.all(grad[model.d:][~live.reshape(-1)] == 0.0)
    assert not np.any(live[:, 0:2])


# --- gradient: mpmath central differences, the numba kernel against the twin -------------------


@st.composite
def points(draw):
    """(data, λ, θ) with λ over four decades and W/λ, u over three."""
    kind = draw(st.sampled_from(["ep2", "ep3", "ep4", "parity3", "cot2", "cot3"]))
    data = {"ep2": ep_data(2), "ep3": ep_data(3), "ep4": ep_data(4), "parity3": parity_data(3),
            "cot2": cot_data(2), "cot3": cot_data(3, cot_max_len="2L0-2")}[kind]
    lam = 10.0 ** draw(st.floats(-1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    u = rng.normal(size=data.dim) * 10.0 ** draw(st.floats(-2, 1))
    W = rng.normal(size=(data.dim, data.dim)) * lam * 10.0 ** draw(st.floats(-2, 1))
    return data, lam, np.concatenate([u, W.reshape(-1)])


@settings(max_examples=25)
@given(point=points(), seed=st.integers(0, 2**32 - 1))
def test_gradient_against_mpmath_central_differences(point, seed):
    data, lam, theta = point
    d = data.dim
    dps = 50
    with mp.workdps(dps):
        u, W = split_flat(theta, d)
        loss, gu, gW = gradient_mp(data, u, W, lam, dps=dps)
        grad = flat_mp(gu, gW)
        rng = np.random.default_rng(seed)
        h = mp.mpf(10) ** -15
        exact_theta = [mp.mpf(float(x)) for x in theta]
        assert abs(loss - loss_mp(data, u, W, lam, dps=dps)) <= mp.mpf(10) ** -45 * (1 + abs(loss))
        for _ in range(3):
            v = rng.normal(size=theta.size)
            plus = np.array([x + h * float(c) for x, c in zip(exact_theta, v, strict=True)], dtype=object)
            minus = np.array([x - h * float(c) for x, c in zip(exact_theta, v, strict=True)], dtype=object)
            difference = (loss_mp(data, *split_flat(plus, d), lam, dps=dps)
                          - loss_mp(data, *split_flat(minus, d), lam, dps=dps)) / (2 * h)
            analytic = mp.fsum(g * float(c) for g, c in zip(grad, v, strict=True))
            scale = mp.fsum(abs(g * float(c)) for g, c in zip(grad, v, strict=True)) + mp.mpf(10) ** -30
            assert abs(difference - analytic) <= mp.mpf(10) ** -20 * scale


@settings(max_examples=40)
@given(point=points())
def test_kernel_against_the_mpmath_twin(point):
    data, lam, theta = point
    model = RLModel(data, lam)
    loss, grad = model.gradient(theta)
    u, W = model.split(theta)
    with mp.workdps(40):
        loss_hi, gu, gW = gradient_mp(data, u, W, lam, dps=40)
        grad_hi = np.array([float(g) for g in flat_mp(gu, gW)])
        _, T_hi = forward_mp(data, u, W, lam, dps=40)
    assert loss == pytest.approx(float(loss_hi), rel=1e-13, abs=1e-300)
    assert model.loss(theta) == loss
    scale = np.abs(grad_hi).max()
    assert np.abs(grad - grad_hi).max() <= 1e-12 * scale + 1e-300
    T = model.outputs(theta)
    assert np.allclose(T, [float(t) for t in T_hi], rtol=1e-12, atol=1e-13 * (1 + np.abs(u).max()))
    v = model.features(theta)
    assert np.allclose(v.sum(axis=1), 1.0, rtol=1e-14)
    v_hi = features_mp(data, W, lam, dps=30)
    assert np.allclose(v, np.array(v_hi.tolist(), dtype=float), rtol=1e-12, atol=1e-15)


# --- the tabled kernel: its primitives, large |W|/λ, the direct route, chunk sizes ------------


def _ulps(got, want):
    return abs(got - want) / math.ulp(want)


def test_exp_nonpositive_is_within_one_ulp():
    rng = np.random.default_rng(11)
    xs = np.concatenate([-rng.uniform(0, 708, 3000), -rng.uniform(0, 1e-3, 300),
                         -(10.0 ** -rng.uniform(0, 300, 300)), -np.arange(0, 708) * math.log(2),
                         [-707.9999, -708.0]])
    with mp.workdps(40):
        for x in xs:
            assert _ulps(exp_nonpositive(x), float(mp.exp(mp.mpf(float(x))))) <= 1.0, x
    assert exp_nonpositive(0.0) == 1.0 and exp_nonpositive(-0.0) == 1.0 and exp_nonpositive(-5e-324) == 1.0
    assert exp_nonpositive(-708.01) == 0.0 and exp_nonpositive(-1e300) == 0.0
    assert exp_nonpositive(-math.inf) == 0.0
    assert math.isnan(exp_nonpositive(math.nan))
    assert exp_nonpositive(-708.0) >= 2.2250738585072014e-308  # the last value returned is normal


def test_log1p_unit_is_within_two_ulp():
    rng = np.random.default_rng(12)
    es = np.concatenate([rng.uniform(0, 1, 3000), 10.0 ** -rng.uniform(0, 300, 500),
                         [math.sqrt(2) - 1, np.nextafter(math.sqrt(2) - 1, 0),
                          np.nextafter(math.sqrt(2) - 1, 1), 1.0, 0.5, 1e-308, 5e-324]])
    with mp.workdps(40):
        for e in es:
            s = 1.0 + e
            got = log1p_unit(e, s, 1.0 / s)
            assert _ulps(got, float(mp.log1p(mp.mpf(float(e))))) <= 2.0, e
    assert log1p_unit(0.0, 1.0, 1.0) == 0.0 and log1p_unit(1.0, 2.0, 0.5) == math.log(2)
    assert math.isnan(log1p_unit(math.nan, math.nan, math.nan))


@st.composite
def large_points(draw):
    """Draw (data, λ, θ, chunk): |W|/λ up to 500, at times a score far above its column (the direct route)."""
    kind = draw(st.sampled_from(["ep3", "ep4", "parity3", "cot2", "cot3"]))
    data = {"ep3": ep_data(3), "ep4": ep_data(4), "parity3": parity_data(3), "cot2": cot_data(2),
            "cot3": cot_data(3, cot_max_len="2L0-2")}[kind]
    lam = 10.0 ** draw(st.floats(-1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    u = rng.normal(size=data.dim) * 10.0 ** draw(st.floats(-2, 1))
    ratio = 10.0 ** draw(st.floats(-2, math.log10(500)))
    W = np.clip(rng.normal(size=(data.dim, data.dim)), -3, 3) * (lam * ratio / 3)
    if draw(st.booleans()):
        q = data.query[rng.integers(data.n)]
        i = rng.integers(data.dim)
        W[i, q] = lam * draw(st.floats(0, 500))
    chunk = draw(st.sampled_from([None, 1, 2, 3, 4]))
    return data, lam, np.concatenate([u, W.reshape(-1)]), chunk


@settings(deadline=None, max_examples=40)
@given(point=large_points())
def test_tabled_kernel_against_the_twin_at_large_scores(point):
    """The tabled kernel = the 40-digit mpmath twin to 1e-12 at |W|/λ up to 500, finite, on either route."""
    data, lam, theta, chunk = point
    d = data.dim
    plan = table_plan(data.idx, data.length, data.y, data.weight, d, chunk=chunk)
    grad = np.full(theta.size, np.nan)
    loss = tabled_loss_grad(theta, grad, lam, plan)
    assert math.isfinite(loss) and np.all(np.isfinite(grad))
    u, W = theta[:d], theta[d:].reshape(d, d)
    with mp.workdps(40):
        loss_hi, gu, gW = gradient_mp(data, u, W, lam, dps=40)
        grad_hi = np.array([float(g) for g in flat_mp(gu, gW)])
    assert loss == pytest.approx(float(loss_hi), rel=1e-12, abs=1e-300)
    assert np.abs(grad - grad_hi).max() <= 1e-12 * np.abs(grad_hi).max() + 1e-300
    # and the direct kernel (the reference) to rounding
    gu0, gW0 = np.zeros(d), np.zeros((d, d))
    loss0 = loss_grad_kernel(u, W, data.idx, data.length, data.y, data.weight, lam, gu0, gW0)
    assert loss == pytest.approx(loss0, rel=1e-13, abs=1e-300)
    grad0 = np.concatenate([gu0, gW0.reshape(-1)])
    assert np.abs(grad - grad0).max() <= 1e-13 * np.abs(grad0).max() + 1e-300


def _routes(data, theta, lam):
    """Return per sample whether Z_n (against the column maxima over the slots) is below TABLE_TINY."""
    d = data.dim
    W = theta[d:].reshape(d, d)
    column_max = {}
    for n in range(data.n):
        row = data.idx[n, : data.length[n]]
        q = row[-1]
        column_max[q] = max(column_max.get(q, -math.inf), W[row, q].max())
    low = []
    for n in range(data.n):
        row = data.idx[n, : data.length[n]]
        q = row[-1]
        low.append(np.sum(np.exp((W[row, q] - column_max[q]) / lam)) < TABLE_TINY)
    return np.array(low)


def test_direct_route_when_the_column_maximum_underflows_a_sample():
    """A score 600λ at (x_1 = a, query) puts the samples with x_1 = b of that column on the direct route."""
    data, lam = ep_data(4), 0.5
    model = RLModel(data, lam)
    rng = np.random.default_rng(5)
    u = rng.normal(size=data.dim)
    W = rng.normal(size=(data.dim, data.dim))
    W[0, 6] = W[0, 7] = 600 * lam  # key "a at position 1", queries at position 4
    theta = model.join(u, W)
    low = _routes(data, theta, lam)
    assert 0 < low.sum() < data.n  # both routes are taken
    loss, grad = model.gradient(theta)
    assert math.isfinite(loss) and np.all(np.isfinite(grad))
    with mp.workdps(40):
        loss_hi, gu, gW = gradient_mp(data, u, W, lam, dps=40)
        grad_hi = np.array([float(g) for g in flat_mp(gu, gW)])
    assert loss == pytest.approx(float(loss_hi), rel=1e-13)
    assert np.abs(grad - grad_hi).max() <= 1e-13 * np.abs(grad_hi).max()
    assert model.loss(theta) == loss


@pytest.mark.parametrize("data", [ep_data(6), cot_data(4, reg_max_len="L0"), parity_data(5)],
                         ids=["ep6", "cot4-L0", "parity5"])
def test_chunk_sizes_agree_with_the_direct_kernel(data):
    d, lam = data.dim, 1.5
    rng = np.random.default_rng(9)
    theta = np.concatenate([rng.normal(size=d), 4 * rng.normal(size=d * d)])
    u, W = theta[:d], theta[d:].reshape(d, d)
    gu0, gW0 = np.zeros(d), np.zeros((d, d))
    loss0 = loss_grad_kernel(u, W, data.idx, data.length, data.y, data.weight, lam, gu0, gW0)
    grad0 = np.concatenate([gu0, gW0.reshape(-1)])
    for chunk in (None, 1, 2, 3, 4, 5, data.L_max):
        plan = table_plan(data.idx, data.length, data.y, data.weight, d, chunk=chunk)
        grad = np.full(theta.size, np.nan)
        loss = tabled_loss_grad(theta, grad, lam, plan)
        assert loss == pytest.approx(loss0, rel=1e-14), chunk
        assert np.abs(grad - grad0).max() <= 1e-14 * np.abs(grad0).max(), chunk


def test_non_finite_parameters_give_a_non_finite_loss():
    model = RLModel(ep_data(3), 2.0)
    for index, value in ((0, math.nan), (model.d + 7, math.nan), (model.d + 7, math.inf), (1, math.inf)):
        theta = model.zeros()
        theta[index] = value
        grad = np.zeros(model.size)
        assert not math.isfinite(tabled_loss_grad(theta, grad, model.lam, model.plan))


# --- the first GD step in exact rationals ------------------------------------------------------


def exact_gradient_at_zero(strata, L0=None):
    """∇_u L and ∇_W L at θ = 0 in Fractions, from the definition (independent of the package).

    At θ = 0 every softmax is uniform (φ_ℓ = 1/L), T = 0 and J'(0) = −1/2, so
    ∇_u L = Σ_n 2^{−L} (−1/2) y_n Σ_ℓ x_ℓ / L, and ∇_W L = 0 since u_ℓ − T = 0.
    ``strata``: (length, rule) pairs with rule ∈ {"first_last", "cot"}.
    """
    d = 2 * max(L for L, _ in strata)
    gu = [Fraction(0)] * d
    for L, rule in strata:
        for s in itertools.product("ab", repeat=L):
            key = 0 if rule == "first_last" else L - L0
            y = 1 if s[key] == s[-1] else -1
            for ell, c in enumerate(s):
                gu[2 * ell + (c == "b")] += Fraction(1, 2**L) * Fraction(-1, 2) * y * Fraction(1, L)
    return gu, [[Fraction(0)] * d for _ in range(d)]


@pytest.mark.parametrize(
    ("data", "strata", "L0"),
    [
        (ep_data(2), [(L, "first_last") for L in (1, 2)], None),
        (ep_data(6), [(L, "first_last") for L in range(1, 7)], None),
        (cot_data(3), [(1, "first_last"), (2, "first_last"), (3, "cot"), (4, "cot"), (5, "cot")], 3),
        (cot_data(3, reg_max_len="L0"), [(1, "first_last"), (2, "first_last"), (3, "first_last"), (3, "cot"),
                                         (4, "cot"), (5, "cot")], 3),
    ],
)
def test_first_gd_step_in_exact_rationals(data, strata, L0):
    gu_exact, gW_exact = exact_gradient_at_zero(strata, L0)
    eta, lam = Fraction(1, 10), Fraction(50)
    model = RLModel(data, float(lam))
    _, grad = model.gradient(model.zeros())
    exact = gu_exact + [x for row in gW_exact for x in row]
    # float64 sums of exactly cancelling terms leave roundoff of order eps·|∇L| (spec §8, stationary points)
    tolerance = 2 * np.finfo(float).eps * float(max(abs(x) for x in exact))
    assert np.allclose(grad, [float(x) for x in exact], rtol=0, atol=tolerance)
    # the same step through the training driver: u at η, W at ηλ (phase 1)
    traj = train(model.zeros(), model.gradient, steps=1, optimizer="gd", log=[1],
                 groups=[ParamGroup("u", model.u_slice, float(eta)), ParamGroup("W", model.W_slice,
                                                                                 float(eta * lam))])
    theta1 = traj.meta["theta"]
    step = [-eta * g for g in exact]
    rates = np.where(np.arange(model.size) < model.d, float(eta), float(eta * lam))
    assert np.array_equal(theta1, -rates * grad)
    assert np.allclose(theta1[: model.d], [float(x) for x in step[: model.d]], rtol=0, atol=float(eta) * tolerance)
    assert np.all(theta1[model.d:] == 0.0)  # ∇_W L = 0 exactly at u = 0
    if data.task == "ep":
        # proof of Lemma B.2: ⟨u_1, E_1^w⟩ = η/4, ⟨u_1, E_ℓ^w⟩ = 0 for ℓ >= 2, W_1 = 0
        assert step[0] == step[1] == eta / 4
        assert all(x == 0 for x in step[2:])
    # the mpmath twin at θ = 0 gives the same rationals to its working precision
    with mp.workdps(60):
        _, gu, gW = gradient_mp(data, np.zeros(data.dim), np.zeros((data.dim, data.dim)), lam)
        for got, want in zip(flat_mp(gu, gW), exact, strict=True):
            assert abs(got - mp.mpf(want.numerator) / want.denominator) < mp.mpf(10) ** -58


def test_gradient_plugs_into_the_training_driver():
    model = RLModel(ep_data(4), 2.0)
    eta, lam, t0 = 0.1, 2.0, 3
    traj = train(model.zeros(), model.gradient, steps=6, optimizer="gd", log=1,
                 groups=[ParamGroup("u", model.u_slice, eta),
                         ParamGroup("W", model.W_slice, Schedule.phases([(t0, eta * lam), (None, eta)]))])
    theta = model.zeros()
    for t in range(6):
        _, grad = model.gradient(theta)
        rate = np.full(model.size, eta)
        rate[model.W_slice] = eta * lam if t < t0 else eta
        theta = theta - rate * grad
    assert np.array_equal(traj.meta["theta"], theta)
    assert model.loss(theta) < 4 * math.log(2)


# --- expectations, accuracy, features ------------------------------------------------------------


@pytest.mark.parametrize("data", [ep_data(6), cot_data(3, reg_max_len="L0")], ids=["ep6", "cot3-L0"])
def test_stratified_monte_carlo_agrees_with_enumeration(data):
    model = RLModel(data, 2.0)
    theta = np.random.default_rng(5).normal(size=model.size)
    exact = model.enumeration().estimate(theta)
    assert exact.se == 0.0 and exact.mean == pytest.approx(model.loss(theta), rel=1e-14)
    est = model.monte_carlo(n=20_000, seed=2025).estimate(theta)
    assert est.n == 20_000 * len(data.lengths) and est.se > 0
    assert est.agrees_with(exact.mean, k_se=4.0), (est, exact)


def test_accuracy_and_the_sign_zero_reading():
    data = ep_data(4)
    model = RLModel(data, 2.0)
    zero = model.zeros()  # T = 0 on every sample
    plus = model.accuracy(zero, "+1")
    assert plus.n_zero == data.n
    assert plus.fraction == pytest.approx(float(np.mean(data.y == 1)))
    assert plus.weighted == pytest.approx((1 + 0.5 * 3) / 4)  # length 1 all right, half of every other length
    assert plus.by_class[("ep", 2, 1)] == 1.0 and plus.by_class[("ep", 2, -1)] == 0.0
    error = model.accuracy(zero, "count_as_error")
    assert error.fraction == 0.0 and error.weighted == 0.0
    # a separating point: u reads "first = last" through attention that copies the first/last tokens
    u = np.zeros(model.d)
    u[0], u[1] = 1.0, 1.0
    assert model.accuracy(model.join(u, np.zeros((model.d, model.d)))).by_length[1] == 1.0


def test_class_features_at_invariant_and_generic_W():
    data = ep_data(4)
    with mp.workdps(60):
        feats = class_features_mp(data, np.zeros((data.dim, data.dim)), 2)
        for (_, L, _), feature in feats.items():
            assert feature.spread == 0
            assert all(abs(feature.positions[0, ell] - mp.mpf(1) / L) < mp.mpf(10) ** -58 for ell in range(L))
            assert all(feature.positions[0, ell] == 0 for ell in range(L, data.L_max))
        W = np.random.default_rng(1).normal(size=(data.dim, data.dim))
        feats = class_features_mp(data, W, 2)
        assert max(f.spread for f in feats.values()) > 0.01
        phis = attention_mp(data, W, 2)
        assert all(abs(mp.fsum(phi) - 1) < mp.mpf(10) ** -58 for phi in phis)


# --- bad input ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: ep_data(1), r"L_max=1 must be an integer >= 2"),
        (lambda: parity_data(0), r"L_max=0"),
        (lambda: ep_data(30), r"L_max=30"),
        (lambda: ep_data(4, ep_count="pairs"), r"ep_count='pairs' .*'contiguous', 'subsequence'"),
        (lambda: cot_data(1), r"L0=1 must be an integer >= 2"),
        (lambda: cot_data(3, cot_max_len="2L0"), r"cot_max_len='2L0'"),
        (lambda: cot_data(3, reg_max_len="L0+1"), r"reg_max_len='L0\+1'"),
        (lambda: ep_data(3, dim="auto"), r"dim='auto'"),
        (lambda: ep_data(3, dim=0), r"dim=0"),
        (lambda: make_data("dyck", L_max=3), r"task='dyck'"),
        (lambda: make_data("ep", L0=3), r"task='ep' does not take"),
        (lambda: RLModel(ep_data(3), 0.0), r"lam=0.0 must be finite and > 0"),
        (lambda: RLModel(ep_data(3), -2), r"lam=-2"),
        (lambda: RLModel(ep_data(3), math.inf), r"lam=inf"),
        (lambda: RLModel(ep_data(3), 1.0).gradient(np.zeros(5)), r"theta has shape \(5,\)"),
        (lambda: RLModel(ep_data(3), 1.0).gradient(np.zeros(42), batch=np.zeros(3)), r"batch=ndarray"),
        (lambda: RLModel(ep_data(3), 1.0).accuracy(np.zeros(42), "zero"), r"sign_zero='zero'"),
        (lambda: loss_mp(ep_data(2), np.zeros(4), np.zeros((4, 4)), 0), r"lam=0"),
        (lambda: loss_mp(ep_data(2), np.zeros(4), np.zeros((4, 4)), 1, dps=5), r"dps=5"),
        (lambda: loss_mp(ep_data(2), np.zeros(3), np.zeros((4, 4)), 1), r"u has 3 entries"),
        (lambda: table_plan(ep_data(2).idx, ep_data(2).length, ep_data(2).y, ep_data(2).weight, 4, chunk=0),
         r"chunk=0 must be an integer >= 1"),
        (lambda: table_plan(ep_data(2).idx, ep_data(2).length, ep_data(2).y, ep_data(2).weight, 3),
         r"token index 3 >= dim=3"),
    ],
)
def test_bad_input_is_refused_with_the_parameter_named(call, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        call()


def test_the_twin_accepts_mpmath_matrices_fractions_and_flat_theta():
    data = cot_data(2)
    d = data.dim
    rng = np.random.default_rng(3)
    u = [Fraction(int(k), 8) for k in rng.integers(-9, 9, size=d)]
    W = [[Fraction(int(k), 4) for k in row] for row in rng.integers(-9, 9, size=(d, d))]
    as_float = (np.array([float(x) for x in u]), np.array([[float(x) for x in row] for row in W]))
    with mp.workdps(60):
        as_mp = (mp.matrix([mp.mpf(x.numerator) / x.denominator for x in u]),
                 mp.matrix([[mp.mpf(x.numerator) / x.denominator for x in row] for row in W]))
        lam = Fraction(3, 2)
        reference = gradient_mp(data, u, W, lam)
        flat = np.array(u + [x for row in W for x in row], dtype=object)
        for args in (as_float, as_mp, split_flat(flat, d)):
            got = gradient_mp(data, *args, lam)
            assert got[0] == reference[0] and got[1] == reference[1] and got[2] == reference[2]
        assert loss_mp(data, u, W, "1.5") == reference[0]
    model = RLModel(data, 1.5)
    assert model.loss(model.join(*as_float)) == pytest.approx(float(reference[0]), rel=1e-14)


def test_features_at_huge_norms_stay_finite():
    """At ‖W‖/λ ~ 1e15 the attention is one-hot (float64 kernel and 60-digit twin agree)."""
    data = ep_data(3)
    model = RLModel(data, 2.0)
    W = np.random.default_rng(0).normal(size=(data.dim, data.dim)) * 1e15
    theta = model.join(np.ones(data.dim) * 1e15, W)
    v = model.features(theta)
    assert np.all(np.isfinite(v)) and np.allclose(v.sum(axis=1), 1.0)
    v_hi = np.array(features_mp(data, W, 2.0).tolist(), dtype=float)
    assert np.array_equal(v, v_hi)
    loss, grad = model.gradient(theta)
    assert math.isfinite(loss) and np.all(np.isfinite(grad))


# --- gradients against complex-step -----------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(point=points())
def test_gradient_against_complex_step_in_every_coordinate(point):
    # the analytic NumPy loss (complex dtype) is a separate implementation from the numba kernels
    data, lam, theta = point
    model = RLModel(data, lam)
    loss, grad = model.gradient(theta)
    value = loss_analytic(data, theta, lam)
    assert value.imag == 0 and value.real == pytest.approx(loss, rel=1e-13)
    step = complex_step_gradient(lambda z: loss_analytic(data, z, lam), theta)
    scale = np.abs(step).max() + 1e-300
    assert np.abs(grad - step).max() <= 1e-12 * scale
    assert np.all(step[~model.live_mask] == 0)  # dead entries: no sample's score depends on them


def test_analytic_loss_refuses_a_wrong_shape_and_temperature():
    data = ep_data(3)
    with pytest.raises(InvalidArgument, match=r"theta must have shape \(42,\)"):
        loss_analytic(data, np.zeros(5), 1.0)
    with pytest.raises(InvalidArgument, match="lam"):
        loss_analytic(data, np.zeros(42), -1.0)
