"""The ss derivations against independent numbers: quadrature, least squares, the recursion, SciPy roots."""

import math

import mpmath
import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import brentq

from derivations.scan_snap import decoder, scalar, snap, theorem1
from derivations.scan_snap.symbols import Gamma, K, M, etaY, etaZ, h, rho0


def test_visits_to_reach_inverts_eq44_by_quadrature():
    expr = sp.lambdify((h, M, etaY), scalar.visits_to_reach(h), "mpmath")
    for m, eta, value in ((30, 0.5, 0.01), (1000, 0.1, 0.02), (10**4, 1.0, 1e-3)):
        direct, _ = quad(lambda v: ((m - 1) + math.exp(m * v)) / eta, 0, value, epsabs=0, epsrel=1e-13)
        assert abs(float(expr(value, m, eta)) - direct) <= 1e-11 * direct


def test_lambert_w_form_solves_eq44():
    tau = sp.Symbol("tau", positive=True)
    H = scalar.h_of(tau)
    residual = sp.diff(H, tau) - 1 / ((M - 1) + sp.exp(M * H))
    f = sp.lambdify((tau, M), residual, "mpmath")
    with mpmath.workdps(40):
        for m in (5, 1000):
            for t in (mpmath.mpf("1e-3"), mpmath.mpf(1), mpmath.mpf(1e5)):
                assert abs(f(t, mpmath.mpf(m))) < mpmath.mpf(10) ** -30


def test_lemma8_roots_match_scipy_brentq():
    lower = sp.lambdify(M, scalar.lower_root(), "mpmath")
    upper = sp.lambdify(M, scalar.upper_root(), "mpmath")
    for m in (30, 100, 1000, 50272):
        phi = lambda u, m=m: math.exp(u) - (m - 1) * u  # noqa: E731
        assert abs(float(lower(m)) - brentq(phi, 0, 1, xtol=1e-16)) < 1e-14
        top = 2 * math.log(m) + 5
        assert abs(float(upper(m)) - brentq(phi, 1, top, xtol=1e-14, rtol=1e-15)) < 1e-12 * top


@settings(deadline=None, max_examples=25)
@given(st.floats(1, 50), st.floats(0.2, 5), st.floats(0.01, 3))
def test_B_from_definition_equals_quadrature_of_xi(Kv, rho, c_gamma):
    # γ constant c: Γ = η_Z c t, ξ = Kρ^{-4}γe^{4z}, z from Eqn 120; B = η_Z ∫ ξ dt by quadrature
    etaz, t_end = 0.5, 7.0
    c = Kv * rho**-4
    xi = lambda t: c * c_gamma / (1 + 4 * c * etaz * c_gamma * t)  # noqa: E731
    numeric, _ = quad(lambda t: etaz * xi(t), 0, t_end, epsrel=1e-13)
    G = etaz * c_gamma * t_end
    derived = float(snap.B_from_definition().subs({K: Kv, rho0: rho, Gamma: G}))
    assert abs(derived - numeric) <= 1e-10 * max(1.0, abs(numeric))


def test_gamma_integral_by_quadrature_in_h():
    expr = sp.lambdify((h, M, K, etaY, etaZ), snap.Gamma_from_definition(), "mpmath")
    m, k, ey, ez, H = 1000, 10, 0.5, 0.2, 0.004
    integrand = lambda v: (m - 1) ** 2 * v  # γ(h)·((M−1)+e^{Mh})  # noqa: E731
    numeric = ez * k / ey * quad(integrand, 0, H, epsrel=1e-14)[0]
    assert abs(float(expr(H, m, k, ey, ez)) - numeric) <= 1e-12 * numeric


@settings(deadline=None, max_examples=30)
@given(st.integers(0, 2**31 - 1))
def test_thm1_coefficients_equal_least_squares_on_random_features(seed):
    rng = np.random.default_rng(seed)
    Kv, Mv = theorem1.K_SYMBOLIC, 12
    F = np.abs(rng.standard_normal((Mv, Kv)))
    F /= np.linalg.norm(F, axis=0)
    A = rng.uniform(-0.3, 0.3, (Kv, Kv))
    Ep = (A + A.T) / 2
    theta = rng.uniform(-0.2, 0.2, Kv)
    q0, q1, sigma = -0.05, 1.05, 0.1
    q = np.full(Kv, q0)
    q[0] = q1
    g = (1 + sigma) * F @ (np.eye(Kv) - Ep) @ np.diag(1 + theta) @ q
    coeffs = np.linalg.lstsq(F, g, rcond=None)[0]
    c, (Eps, symbols, th, sq0, sq1, ssig) = theorem1.coefficients("lemma14")
    values = {sq0: q0, sq1: q1, ssig: sigma, **{t: v for t, v in zip(th, theta, strict=True)}}
    for i in range(Kv):
        for j in range(i, Kv):
            values[Eps[i, j]] = Ep[i, j]
    derived = np.array([float(ci.subs(values)) for ci in c])
    assert np.allclose(derived, coeffs, rtol=1e-10, atol=1e-12)


def test_zeta_products_equal_numpy_inner_products():
    for m in (2, 5, 40):
        Z = m / (m - 1) * (np.eye(m) - 1 / m)
        q1 = float((1 + 1 / (M - 1)).subs(M, m))
        q0 = float((-M / (M - 1) ** 2).subs(M, m))
        same, other = decoder.zeta_entry(True, m), decoder.zeta_entry(False, m)
        assert math.isclose(float(same), Z[0, 0]) and math.isclose(float(other), Z[0, 1])
        assert np.allclose(np.diag(Z @ Z.T), q1) and math.isclose((Z @ Z.T)[0, 1], q0)
