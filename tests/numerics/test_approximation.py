"""Tests of the [F] §4 constructions (numerics.models.induction_head.approximation) against first principles.

Known answers: the ALiBi softmax written out term by term, the transformer outputs by explicit
Python loops (math.exp), gradients by central finite differences, the Thm 4.1 bound derived in
derivations.induction_head.approximation, POD of an explicitly orthogonal cosine series.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.models.induction_head import approximation as ap


def _loop_ih(X, W, first_model, p):
    """IH₂ and the Thm 4.1 construction at the last position by explicit loops (1-based positions)."""
    L, d = X.shape
    x = {i + 1: X[i] for i in range(L)}
    y = {1: np.zeros(d)}
    for s in range(2, L + 1):
        weights = [math.exp(-p * (s - 1 - tau)) for tau in range(1, s)]
        y[s] = sum(w * x[tau] for w, tau in zip(weights, range(1, s))) / sum(weights)

    def head(keys, positions):
        scores = [float(x[L] @ W @ keys[s]) for s in positions]
        top = max(scores)
        e = [math.exp(z - top) for z in scores]
        return sum(ei * x[s] for ei, s in zip(e, positions)) / sum(e)

    target = head({s: x[s - 1] for s in range(2, L)}, range(2, L))
    model = head(y, range(first_model, L))
    return target, model


def test_alibi_weights_are_the_causal_softmax():
    A = ap.alibi_weights(7, 0.7)
    assert np.all(A[0] == 0)
    for s in range(1, 7):
        z = sum(math.exp(-0.7 * k) for k in range(s))
        for tau in range(7):
            expected = math.exp(-0.7 * (s - 1 - tau)) / z if tau < s else 0.0
            assert A[s, tau] == pytest.approx(expected, rel=1e-14, abs=1e-300)
    # previous-token weight A_{s,s-1} = (1-e^{-p})/(1-e^{-p(s-1)}) (1-based s)
    for s1 in range(2, 8):
        assert A[s1 - 1, s1 - 2] == pytest.approx(-math.expm1(-0.7) / -math.expm1(-0.7 * (s1 - 1)), rel=1e-14)
    with pytest.raises(InvalidArgument, match="slope"):
        ap.alibi_weights(5, -1.0)


@pytest.mark.parametrize("first", [2, 1])
def test_thm41_construction_matches_loops(first):
    rng = np.random.default_rng(1)
    W = ap.spectral_matrix(3, 2.0, rng)
    X = rng.uniform(-1, 1, size=(4, 9, 3))
    model = ap.thm41_construction(9, 1.3, W, first)
    for b in range(4):
        target, out = _loop_ih(X[b], W, first, 1.3)
        np.testing.assert_allclose(model.target(X[b:b + 1], 9)[0], target, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(model.model(X[b:b + 1], 9)[0], out, rtol=1e-12, atol=1e-14)


def _finite_difference_check(model, X, t, cot, rng, n_checks=12):
    _, grad = model.signed_error_and_grad(X, t, cot)
    for _ in range(n_checks):
        idx = tuple(int(rng.integers(0, k)) for k in X.shape)
        h = 1e-6
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        fd = (model.signed_error_and_grad(Xp, t, cot)[0] - model.signed_error_and_grad(Xm, t, cot)[0])[idx[0]] / (2 * h)
        assert grad[idx] == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("first", [2, 1])
def test_thm41_gradient_against_finite_differences(first):
    rng = np.random.default_rng(2)
    model = ap.thm41_construction(11, 0.9, ap.spectral_matrix(2, 2.0, rng), first)
    _finite_difference_check(model, rng.uniform(-1, 1, (3, 11, 2)), 11, rng.standard_normal((3, 2)), rng)


@pytest.mark.parametrize("first", [3, 1])
def test_thm43_gradient_against_finite_differences(first):
    rng = np.random.default_rng(3)
    fits = {lag: ap.ExpSumFit(lag, 2, 50, np.array([0.7, -0.2]), np.array([0.4, 1.5]), 0, 0, 0.9, False, 60, None)
            for lag in (1, 2)}
    model = ap.thm43_construction(10, fits, ap.spectral_matrix(4, 2.0, rng), 3, first)
    X = rng.uniform(-1, 1, (2, 10, 2))
    for t in (5, 10):
        _finite_difference_check(model, X, t, rng.standard_normal((2, 2)), rng)


def test_thm43_with_one_normalised_head_is_thm41():
    rng = np.random.default_rng(4)
    W = ap.spectral_matrix(2, 2.0, rng)
    beta = 2.5
    fit = ap.ExpSumFit(1, 1, 50, np.array([-math.expm1(-beta)]), np.array([beta]), 0, 0, 1.0, False, 60, None)
    X = rng.uniform(-1, 1, (5, 12, 2))
    a, b = ap.thm43_construction(12, {1: fit}, W, 2), ap.thm41_construction(12, beta, W)
    np.testing.assert_allclose(a.errors(X, range(3, 13)), b.errors(X, range(3, 13)), rtol=1e-12, atol=1e-15)


@settings(max_examples=25)
@given(st.floats(0.5, 10.0), st.integers(3, 30), st.integers(0, 2**31))
def test_thm41_error_below_the_derived_bound(p, L, seed):
    rng = np.random.default_rng(seed)
    W = ap.spectral_matrix(3, 2.0, rng)
    X = np.concatenate([rng.uniform(-1, 1, (20, L, 3)), rng.choice([-1.0, 1.0], (20, L, 3))])
    err = ap.thm41_construction(L, p, W).errors(X, [L])
    assert err.max() <= 4 * ap.box_l1_sup(W) * math.exp(-p) * (1 + 1e-12)


def test_box_l1_sup():
    rng = np.random.default_rng(5)
    W = rng.standard_normal((5, 5))
    sup = ap.box_l1_sup(W, 2.0)
    samples = np.abs(rng.uniform(-2, 2, (20000, 5)) @ W).sum(axis=1)
    assert samples.max() <= sup <= 2.0 * np.abs(W).sum() + 1e-12
    assert ap.box_l1_sup(np.diag([1.0, -3.0]), 1.0) == pytest.approx(4.0)


def test_sup_search_beats_random_and_stays_in_the_box():
    rng = np.random.default_rng(6)
    model = ap.thm41_construction(20, 3.0, ap.spectral_matrix(2, 2.0, rng))
    found = ap.sup_error(model, rng, 2, n_random=50, restarts=4, steps=20)
    assert np.all(np.abs(found.argmax) <= 1.0)
    assert found.sup >= found.random_max
    assert model.errors(found.argmax[None], [found.position])[0, 0] == pytest.approx(found.sup, rel=1e-12)


def test_delta_kernel_fits():
    fits = ap.fit_delta_kernels(2, 4, K=100, beta_max=30.0, max_nfev=100)
    l2 = []
    for H, fit in fits.items():
        phi = ap.exp_kernel(fit.alpha, fit.beta, 100)
        phi[1] -= 1.0
        l2.append(float(phi @ phi))
        assert np.all(fit.beta > 0) and np.all(fit.beta <= 30.0)
    assert all(b <= a * (1 + 1e-9) + 1e-28 for a, b in zip(l2, l2[1:]))
    assert fits[1].l1 > 1.0 > fits[4].l1
    bounded = ap.fit_delta_kernels(3, 3, K=100, beta_max=5.0, alpha_max=10.0, max_nfev=100)
    assert all(np.all(np.abs(f.alpha) <= 10.0 + 1e-9) for f in bounded.values())


def test_kernel_l1_error_in_extended_precision():
    alpha, beta = np.array([1e12, -1e12, 1.0]), np.array([0.5, 0.5 + 1e-13, 3.0])
    value, extended = ap.kernel_l1_error(alpha, beta, 1, 30)
    assert extended
    with mpmath.workdps(60):
        direct = mpmath.fsum(abs(mpmath.fsum(mpmath.mpf(float(a)) * mpmath.exp(-mpmath.mpf(float(b)) * (k - 1))
                                             for a, b in zip(alpha, beta)) - (1 if k == 1 else 0)) for k in range(1, 31))
    assert value == pytest.approx(float(direct), rel=1e-12)


def test_cosine_pod_singular_values():
    _, _, sig, bases = ap.cosine_kernel_pod(1.0, n_grid=240, n_terms=40)
    np.testing.assert_allclose(sig[:40], np.arange(1, 41) ** -2.0, rtol=1e-10)
    assert sig[40] < 1e-12
    x = np.linspace(-1, 1, 201)
    fitted = ap.random_relu_fit(x, np.cos(np.pi * x)[:, None], 200, np.random.default_rng(0))(x)
    assert np.max(np.abs(fitted[:, 0] - np.cos(np.pi * x))) < 1e-2
