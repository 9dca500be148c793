"""IH-head asymptotics: Jacobians against finite differences and the printed J; series; T_1^h."""

import math

import numpy as np
import pytest
import sympy as sp

from derivations.induction_head import asymptotics as A
from derivations.induction_head.symbols import L, alpha, h, sigma, w, wstar

POINT = {L: 40, alpha: 1.5, wstar: 0.45}


@pytest.mark.parametrize("mode", ["paper", "balanced", "softmaxLL"])
def test_jacobian_matches_central_differences_of_the_velocity(mode):
    flow, loss = A.MODES[mode]
    dw, dh = (sp.lambdify((w, h), e.subs(POINT), "mpmath") for e in A.velocity(flow, loss))
    ws, hs, eps = 0.45, 1 / 2.5, 1e-7
    fd = np.array([[float((f(ws + eps, hs) - f(ws - eps, hs)) / (2 * eps)),
                    float((f(ws, hs + eps) - f(ws, hs - eps)) / (2 * eps))] for f in (dw, dh)])
    J = np.array(A.jacobian(flow, loss).subs(POINT).evalf(), dtype=float)
    assert np.allclose(J, fd, rtol=1e-6, atol=1e-12)


def test_printed_jacobian_equals_the_paper_mode_jacobian():
    diff = (A.jacobian_printed() - A.jacobian("paper", "exp_simplified")).subs(POINT).evalf(30)
    assert all(abs(x) < 1e-25 for x in diff)


def test_slow_rate_is_the_smaller_eigenvalue():
    J = np.array(A.jacobian("balanced", "exp_simplified").subs(POINT).evalf(), dtype=float)
    slowest = min(-np.linalg.eigvals(J).real)
    assert float(A.slow_rate_scaled("balanced", "exp_simplified").subs(POINT)) / 38 == pytest.approx(slowest, rel=1e-10)


def test_plateau_fraction_of_T_o_loss_is_one_minus_wstar4_over_4_at_small_wstar():
    frac = sp.lambdify(wstar, A.plateau_level()["fraction_of_T_o"], "mpmath")
    ws = 0.05
    assert float(1 - frac(ws)) == pytest.approx(ws**4 / 4, rel=1e-2)


def test_t1h_derivation_reduces_to_the_linear_solution():
    # (L-2) dh/dt = h*ψ(w*²) - h from h(0) = 0 hits h* at (L-2) ln(1/(1 - 1/ψ))
    value = float(A.t1h_derived("paper").subs(POINT))
    psi = (1 - 0.45**4) ** -0.5
    assert value == pytest.approx(38 * math.log(1 / (1 - 1 / psi)), rel=1e-12)
    assert sigma not in A.t1h_derived("paper").free_symbols
