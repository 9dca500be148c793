"""The scalar kernels of the ss paper: h (Lemma 6), γ, h* (Eqn 33), the row recursion, the random E families."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import solve_ivp
from scipy.special import lambertw

from numerics.models.scan_snap import scalar as N
from numerics.models.scan_snap.matrices import random_E

vocab = st.sampled_from([3, 5, 30, 100, 1000, 10**4, 10**6, 10**8])
log_tau = st.floats(-8, 9)


def _h_mpmath(tau, M, dps=40):
    """h from the Lambert-W form at 40 digits (the reference)."""
    with mpmath.workdps(dps):
        C = (M * mpmath.mpf(tau) + 1) / (M - 1)
        u = C - mpmath.lambertw(mpmath.exp(C) / (M - 1))
        return u / M


@settings(deadline=None, max_examples=200)
@given(vocab, log_tau)
def test_h_matches_the_lambert_w_form_at_40_digits(M, lg):
    tau = 10.0**lg
    value = N.h_of_tau(tau, float(M))
    reference = _h_mpmath(tau, M)
    assert abs(value - float(reference)) <= 4e-15 * float(reference)


@settings(deadline=None, max_examples=200)
@given(vocab, log_tau)
def test_eq45_residual_in_float64(M, lg):
    tau = 10.0**lg
    u = M * N.h_of_tau(tau, float(M))
    residual = math.expm1(u) + (M - 1) * u - M * tau if u < 700 else None
    if residual is not None:
        assert abs(residual) <= 1e-12 * (M * tau + 1)
    else:  # e^u beyond float64: the log form
        assert abs(u - math.log(M * tau + 1 - (M - 1) * u)) <= 1e-12 * u


def test_h_agrees_with_scipy_integration_and_scipy_lambertw():
    M, eta = 1000.0, 0.1
    s = np.logspace(-2, 6, 40)
    ode = solve_ivp(lambda _, y: [eta / ((M - 1) + math.exp(M * y[0]))], (0, s[-1]), [0.0], method="Radau",
                    rtol=1e-12, atol=1e-25, t_eval=s)
    ours = np.array([N.h_of_tau(eta * v, M) for v in s])
    assert np.max(np.abs(ours - ode.y[0]) / ours) < 1e-8
    C = (M * eta * s + 1) / (M - 1)
    small = C < 600  # where e^C is finite for SciPy
    scipy_form = (C[small] - lambertw(np.exp(C[small]) / (M - 1)).real) / M
    assert np.max(np.abs(ours[small] - scipy_form) / ours[small]) < 1e-12


def test_h_depends_on_eta_and_t_only_through_their_product():
    for M in (30.0, 1000.0):
        for tau in (1e-3, 1.0, 1e4):
            assert N.h_of_tau(tau, M) == N.h_of_tau(0.5 * (2 * tau), M)


def test_h_is_continuous_across_the_overflow_switch():
    M = 1000.0
    # u = Mh crosses 700 near e^u = Mτ: the two Newton forms meet there
    taus = np.exp(np.linspace(699.0, 701.0, 41)) / M
    u = np.array([M * N.h_of_tau(t, M) for t in taus])
    assert np.all(np.diff(u) > 0)
    assert np.max(np.abs(np.diff(u))) < 0.06


def test_bad_input_gives_nan():
    assert math.isnan(N.h_of_tau(-1.0, 10.0)) and math.isnan(N.h_of_tau(1.0, 1.0))


@settings(deadline=None, max_examples=100)
@given(vocab, st.floats(0, 5000))
def test_stable_gamma_equals_the_direct_form_where_finite(M, u):
    h = u / M
    stable = N.gamma_of_h(h, float(M))
    if M * h < 700:
        direct = (M - 1) ** 2 * h / ((M - 1) + math.exp(M * h))
        assert abs(stable - direct) <= 1e-14 * max(abs(direct), 1e-300)
    assert math.isfinite(stable) and stable >= 0


def test_h_star_matches_a_50_digit_recursion():
    M, eta, steps = 100, 0.5, 2000
    ours = N.h_star(steps, float(M), eta)
    with mpmath.workdps(50):
        h = mpmath.mpf(0)
        for _ in range(steps):
            h += mpmath.mpf(eta) / ((M - 1) + mpmath.exp(M * h))
    assert abs(ours[-1] - float(h)) <= 1e-15 * float(h)


@pytest.mark.parametrize("M,eta", [(3, 1.0), (7, 0.3)])
def test_row_recursion_equals_the_full_softmax_recursion(M, eta):
    w = np.zeros(M)
    reduced = N.row_recursion(50, float(M), eta)
    for s in range(1, 51):
        a = np.exp(w - w.max())
        a /= a.sum()
        w = w + eta * (np.eye(M)[0] - a)
        assert abs(w[0] - reduced[s, 0]) <= 1e-13 * max(1, abs(w[0]))
        assert np.allclose(w[1:], reduced[s, 1], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("family", ["a", "b", "c"])
def test_random_E_families_have_their_structure(family):
    mats = random_E(family, 60, seed=3)
    assert {len(E) for E in mats} == set(range(2, 8))
    for E in mats:
        K = len(E)
        lam = np.linalg.eigvalsh(E)
        assert np.allclose(E, E.T)
        if family in ("a", "b"):
            assert np.all(np.diag(E) == 0) and np.all(E >= 0) and np.max(np.abs(lam)) < 1 / K
        else:
            assert np.max(np.abs(lam)) < 1
    again = random_E(family, 60, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(mats, again, strict=True))
    assert all(np.array_equal(x, y) for x, y in zip(mats[:10], random_E(family, 10, seed=3), strict=True))


@settings(max_examples=40, deadline=None)
@given(M=st.floats(3.0, 1e12), log_tau=st.floats(-5.0, 5000.0))
def test_h_from_log_tau_matches_a_50_digit_root(M, log_tau):
    """h from ln τ (beyond the float range of τ) against the root of e^u − 1 + (M−1)u = Mτ at 50 digits."""
    with mpmath.workdps(50):
        log_target = mpmath.log(M) + log_tau
        u = mpmath.findroot(lambda v: mpmath.log(mpmath.expm1(v) + (M - 1) * v) - log_target,
                            (mpmath.mpf("1e-60"), mpmath.log1p(mpmath.exp(log_target)) + 1), solver="illinois",
                            tol=mpmath.mpf("1e-45"))
    assert N.h_of_log_tau(log_tau, M) == pytest.approx(float(u / M), rel=4e-15)


def test_h_from_log_tau_is_continuous_at_its_switch():
    for M in (30.0, 1e4, 1e8):
        below, above = N.h_of_log_tau(50.0, M), N.h_of_log_tau(np.nextafter(50.0, 60.0), M)
        assert above == pytest.approx(below, rel=1e-15)
