"""Control variates: the regression estimator on a toy known answer, and the IH controls' exact means."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from derivations.errors import InvalidArgument
from numerics.models.induction_head import ih_softmax_loss_samples, token_sampler
from numerics.models.induction_head import controls
from numerics.models.induction_head.controls import (
    CUT,
    _moment,
    _truncated_gaussian_moments,
    _tuple_mean,
    _tuple_mean_bruteforce,
    control_means,
    ih_softmax_loss_with_controls,
    softmax_loss_estimate,
)
from numerics.montecarlo import ControlVariateMonteCarlo, MonteCarlo


def _gaussian(rng, size):
    return rng.standard_normal(size)


def _square_plus_x_with_x(x, params):
    return np.column_stack((x * x + x, x))


def _toy(n=200_000, seed=0, workers=1):
    return ControlVariateMonteCarlo(_gaussian, _square_plus_x_with_x, lambda p: [0.0], n=n, seed=seed,
                                    chunk_size=30_000, workers=workers)


def test_toy_known_answer_and_variance_reduction():
    # f = x² + x, g = x (E g = 0): E f = 1; Var f = 3, Var(f − g) = 2, so the reduction is 3/2
    est = _toy().estimate(())
    assert est.agrees_with(1.0, 4.0)
    assert est.variance_reduction == pytest.approx(1.5, rel=0.03)
    plain = MonteCarlo(_gaussian, lambda x, p: x * x + x, n=200_000, seed=0, chunk_size=30_000).estimate(())
    assert est.se < plain.se


def test_same_estimate_whatever_the_workers():
    assert _toy(workers=1).estimate(()) == _toy(workers=3).estimate(())


def test_bad_integrand_and_control_means_are_named():
    bad = ControlVariateMonteCarlo(_gaussian, lambda x, p: x, lambda p: [0.0], n=100, seed=0)
    with pytest.raises(InvalidArgument, match=r"shape \(100, 1 \+ k\)"):
        bad.estimate(())
    wrong = ControlVariateMonteCarlo(_gaussian, _square_plus_x_with_x, lambda p: [0.0, 1.0], n=100, seed=0)
    with pytest.raises(InvalidArgument, match="expected 1 means"):
        wrong.estimate(())


def _closed_g1(L, w, h, alpha, wstar):
    a, a_star, hstar = w * w, wstar * wstar, 1 / (1 + alpha)
    return (hstar**2 / math.sqrt(1 - 2 * a_star**2) - 2 * h * hstar / math.sqrt(1 - 2 * a * a_star)
            + h**2 / math.sqrt(1 - 2 * a**2)) / (2 * (L - 2))


@settings(max_examples=25)
@given(st.integers(6, 11), st.floats(0.05, 0.5), st.floats(-2, 2), st.floats(0.2, 4), st.floats(0.05, 0.5))
def test_enumerated_first_control_equals_its_closed_form_without_cut(L, w, h, alpha, wstar):
    # only diagonal terms s = s′ survive: E[N_a N_b] = E e^{ab x_L²}/n (derived by hand in the docstring)
    hstar = 1 / (1 + alpha)
    heads = [(wstar**2, hstar), (w * w, -h)]
    enumerated = 0.5 * sum(ci * cj * _moment(L, ai, aj, (), math.inf) for ai, ci in heads for aj, cj in heads)
    assert enumerated == pytest.approx(_closed_g1(L, w, h, alpha, wstar), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("beta", [0.05, 0.5, 1.7])
@pytest.mark.parametrize("cut", [1.0, 3.0, 5.0, math.inf])
def test_truncated_gaussian_moments_by_quadrature(beta, cut):
    density = lambda xi, k: xi**k * math.exp(-beta * xi * xi) / math.sqrt(2 * math.pi)  # noqa: E731
    i0, i2 = _truncated_gaussian_moments(beta, cut)
    assert i0 == pytest.approx(integrate.quad(density, -cut, cut, args=(0,))[0], rel=1e-10)
    assert i2 == pytest.approx(integrate.quad(density, -cut, cut, args=(2,))[0], rel=1e-10)


_A, _A_STAR = 0.25**2, 0.49**2  # the benchmark's model and target scales
_SCALES = [  # (N scales, D scales): equal, the target/model pairs control_means uses, zeros
    ((0.2, 0.2), (0.2, 0.2)),
    ((_A_STAR, _A), (_A, _A_STAR)),
    ((_A_STAR, _A), (_A_STAR, _A)),
    ((_A, _A_STAR), (_A_STAR, _A_STAR)),
    ((_A, _A), (_A, _A)),
    ((0.0, 0.28), (0.28, 0.0)),
    ((0.28, 0.0), (0.0, 0.28)),
    ((0.0, 0.0), (0.0, 0.0)),
]


@pytest.mark.parametrize("cut", [3.0, 5.0, math.inf])
@pytest.mark.parametrize("L", range(3, 14))
def test_pattern_sum_equals_brute_force(L, cut):
    # L ≥ 6 is what control_means accepts; 3..5 check the boundary counts where classes are empty
    for n_d in (0, 1, 2):
        for scales_n, scales_d in _SCALES:
            args = (L, np.array(scales_n), np.array(scales_d), n_d, cut)
            expected = _tuple_mean_bruteforce(*args)
            assert _tuple_mean(*args) == pytest.approx(expected, rel=1e-12), (n_d, scales_n, scales_d)


@settings(max_examples=40)
@given(st.integers(6, 13), st.integers(0, 2), st.lists(st.floats(0.0, 0.28), min_size=4, max_size=4),
       st.sampled_from([3.0, 5.0, math.inf]))
def test_pattern_sum_equals_brute_force_at_random_scales(L, n_d, scales, cut):
    args = (L, np.array(scales[:2]), np.array(scales[2:]), n_d, cut)
    assert _tuple_mean(*args) == pytest.approx(_tuple_mean_bruteforce(*args), rel=1e-12)


def test_control_means_at_benchmark_point_equal_the_brute_force(monkeypatch):
    # the brute force's running sum over 2·10⁶ terms is itself good to ~1e-12 here (1.5e-13 measured in g₂)
    fast = control_means(40, 0.25, 0.5, 1.0, 0.49)
    monkeypatch.setattr(controls, "_tuple_mean",
                        lambda L, sn, sd, nd, cut, boolean=False: _tuple_mean_bruteforce(L, sn, sd, nd, cut))
    assert fast == pytest.approx(control_means(40, 0.25, 0.5, 1.0, 0.49), rel=1e-12)


@pytest.mark.parametrize("L, params", [(6, (0.3, 0.3, 1.0, 0.3)), (7, (0.2, 1.0, 2.0, 0.35)),
                                       (12, (0.1, 0.7, 0.5, 0.4))])
def test_control_means_agree_with_monte_carlo(L, params):
    # independent method: plain MC of each control column (light-tailed points, fixed seed)
    means = control_means(L, *params)
    for column, mean in ((1, means[0]), (2, means[1])):
        def integrand(X, p, column=column):
            return np.ascontiguousarray(ih_softmax_loss_with_controls(X, *p)[:, column])
        est = MonteCarlo(token_sampler(L), integrand, n=400_000, seed=5).estimate(params)
        assert est.agrees_with(mean, 4.0), (column, est, mean)


def test_loss_column_is_the_plain_integrand():
    X = token_sampler(40)(np.random.default_rng(0), 1000)
    both = ih_softmax_loss_with_controls(X, 0.25, 0.5, 1.0, 0.49)
    np.testing.assert_array_equal(both[:, 0], ih_softmax_loss_samples(X, 0.25, 0.5, 1.0, 0.49))
    cut = np.abs(X[:, 40]) > CUT
    assert np.all(both[cut, 1:] == 0.0)


def test_standard_errors_are_honest_across_replicates():
    # 30 independent runs: the spread of the estimates matches the reported SE, and they agree with plain MC
    L, params = 40, (0.25, 0.5, 1.0, 0.49)
    runs = [ControlVariateMonteCarlo(token_sampler(L), lambda X, p: ih_softmax_loss_with_controls(X, *p),
                                     lambda p: control_means(L, *p), n=30_000, seed=seed).estimate(params)
            for seed in range(30)]
    means = np.array([r.mean for r in runs])
    ratio = means.std(ddof=1) / np.mean([r.se for r in runs])
    assert 0.7 < ratio < 1.4  # the SD of 30 draws is known to ±13 % (1 SE)
    plain = MonteCarlo(token_sampler(L), lambda X, p: ih_softmax_loss_samples(X, *p), n=400_000,
                       seed=100).estimate(params)
    pooled_se = means.std(ddof=1) / math.sqrt(means.size)
    assert abs(means.mean() - plain.mean) < 4 * math.hypot(pooled_se, plain.se)


def test_means_refused_where_they_do_not_exist():
    with pytest.raises(InvalidArgument, match="12·max"):
        control_means(40, 0.25, 0.5, 1.0, 0.55)
    with pytest.raises(InvalidArgument, match="L=5"):
        control_means(5, 0.25, 0.5, 1.0, 0.3)


@pytest.mark.parametrize("L, params", [(6, (0.3, 0.7, 1.0, 0.49)), (7, (0.8, -0.4, 0.5, 1.1)), (8, (0.05, 1.0, 2.0, 0.6))])
def test_boolean_control_means_equal_exact_enumeration(L, params):
    # every ±1 sequence x_1..x_L once: the exact expectation of the kernel's control columns
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=L)))
    X = np.column_stack((np.zeros(len(signs)), signs))
    columns = ih_softmax_loss_with_controls(X, *params, tokens="boolean").mean(axis=0)
    np.testing.assert_allclose(columns[1:], control_means(L, *params, tokens="boolean"), rtol=1e-12)


def test_boolean_estimate_uses_the_controls_and_agrees_with_plain_monte_carlo():
    L, params = 40, (0.25, 0.5, 1.0, 0.49)
    controlled = softmax_loss_estimate(L, *params, n=100_000, seed=1, tokens="boolean")
    plain = MonteCarlo(token_sampler(L, "boolean"), lambda X, p: ih_softmax_loss_samples(X, *p), n=400_000,
                       seed=2).estimate(params)
    assert controlled.method == "monte-carlo + control variates" and controlled.variance_reduction > 10
    assert abs(controlled.mean - plain.mean) < 4 * math.hypot(controlled.se, plain.se)


def test_unknown_token_law_is_named():
    with pytest.raises(InvalidArgument, match="tokens='uniform'"):
        control_means(40, 0.25, 0.5, 1.0, 0.49, tokens="uniform")
