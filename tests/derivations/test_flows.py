"""Tests of derivations.flows: gradient flows, induced and reduced flows, Jacobians, fixed points, series.

Expected values are derived by hand next to each test (the chain rule for P = w_Q w_K, the
conserved w_Q² - w_K², the linear flow's exponential), or checked numerically against an
independent finite difference evaluated through numerics.compile.array_function.
"""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import example, given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from derivations.flows import (
    FixedPoints,
    balanced_manifold_flow,
    fixed_points,
    gradient,
    gradient_flow,
    induced_flow,
    induced_pair_flow,
    jacobian,
    lie_series,
    linearisation,
    reduced_flow,
    reduced_velocity,
)
from numerics.compile import array_function

wQ, wK, h, P, w = sp.symbols("w_Q w_K h P w", real=True)
wp = sp.Symbol("w", positive=True)
a, b = sp.symbols("a b", positive=True)
#: a loss of (h, P) of the shape of the IH-head loss: quadratic in h, non-linear in P
LOSS_P = h**2 / (2 * sp.sqrt(1 - P**2 / 4)) - h / sp.sqrt(1 - (P + sp.Rational(1, 4)) ** 2 / 4) + sp.exp(P) / 7
finite = st.floats(-0.9, 0.9, allow_nan=False)


def _pair_flow():
    return gradient_flow(LOSS_P.subs(P, wQ * wK), [wQ, wK, h])


@pytest.fixture(scope="module")
def pair_numbers():
    """The pair flow, its induced dP/dt and d(w_Q w_K)/dt along it, as NumPy functions of (w_Q, w_K, h)."""
    flow = _pair_flow()
    induced = induced_flow(flow, [wQ, wK, h], {P: wQ * wK})[P]
    by_hand = wK * flow[0] + wQ * flow[1]  # d(w_Q w_K)/dt = w_K ẇ_Q + w_Q ẇ_K
    conserved = induced_flow(flow, [wQ, wK, h], {sp.Symbol("C"): wQ**2 - wK**2})[sp.Symbol("C")]
    args = (wQ, wK, h)
    return {"induced": array_function(induced, args, name="t_flows_induced"),
            "by_hand": array_function(by_hand, args, name="t_flows_by_hand"),
            "conserved": array_function(conserved, args, name="t_flows_conserved"),
            "flow": array_function(flow, args, name="t_flows_pair"),
            "jacobian": array_function(jacobian(flow, args), args, name="t_flows_pair_jac")}


@given(finite, finite, finite)
@example(0.5, 0.5, 0.3)
def test_induced_flow_of_P_equals_d_wQwK_dt(pair_numbers, q, k, hh):
    got, want = pair_numbers["induced"](q, k, hh), pair_numbers["by_hand"](q, k, hh)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_induced_flow_of_P_symbolically():
    # dP/dt = w_K·(-w_K ∂_P L) + w_Q·(-w_Q ∂_P L) = -(w_Q² + w_K²) ∂_P L
    F = sp.Function("F")
    flow = gradient_flow(F(wQ * wK), [wQ, wK])
    dP = induced_flow(flow, [wQ, wK], {P: wQ * wK})[P]
    dF = sp.Subs(sp.Derivative(F(P), P), P, wQ * wK).doit()
    assert sp.simplify(dP + (wQ**2 + wK**2) * dF) == 0


@given(finite, finite, finite)
def test_pair_flow_conserves_wQ2_minus_wK2(pair_numbers, q, k, hh):
    assert abs(float(pair_numbers["conserved"](q, k, hh))) <= 1e-13


def test_conservation_is_exact_for_a_generic_loss():
    dwq, dwk = induced_pair_flow(sp.Function("ell")(P), P, wQ, wK)
    C = sp.Symbol("C")
    assert sp.simplify(induced_flow([dwq, dwk], [wQ, wK], {C: wQ**2 - wK**2})[C]) == 0


@given(st.floats(-0.8, 0.8), st.floats(-0.8, 0.8), st.floats(-1, 1))
def test_jacobian_against_central_differences(pair_numbers, q, k, hh):
    y = np.array([q, k, hh])
    step = 1e-6
    numeric = np.empty((3, 3))
    for j in range(3):
        e = np.zeros(3)
        e[j] = step
        numeric[:, j] = (pair_numbers["flow"](*(y + e)) - pair_numbers["flow"](*(y - e))) / (2 * step)
    exact = pair_numbers["jacobian"](*y)
    assert exact.shape == (3, 3)
    np.testing.assert_allclose(exact, numeric, rtol=1e-6, atol=1e-7)


def test_gradient_flow_signs_and_rates():
    loss = a * wQ**2 + wQ * h
    assert gradient(loss, [wQ, h]) == [2 * a * wQ + h, wQ]
    assert gradient_flow(loss, [wQ, h]) == [-(2 * a * wQ + h), -wQ]
    assert gradient_flow(loss, [wQ, h], sign=-1) == [2 * a * wQ + h, wQ]
    assert gradient_flow(loss, [wQ, h], rates={h: b}) == [-(2 * a * wQ + h), -b * wQ]
    assert gradient_flow(loss, [wQ, h], rates=[2, 1]) == [-2 * (2 * a * wQ + h), -wQ]


def test_gradient_flow_refuses_bad_input():
    with pytest.raises(InvalidArgument, match="sign=0"):
        gradient_flow(wQ**2, [wQ], sign=0)
    with pytest.raises(InvalidArgument, match="not among the parameters"):
        gradient_flow(wQ**2, [wQ], rates={h: 2})
    with pytest.raises(InvalidArgument, match="one per parameter"):
        gradient_flow(wQ**2, [wQ], rates=[1, 2])
    with pytest.raises(InvalidArgument, match="more than once"):
        gradient_flow(wQ**2, [wQ, wQ])
    with pytest.raises(InvalidArgument, match="not a SymPy Symbol"):
        gradient_flow(wQ**2, [wQ**2])


def test_reduced_flow_on_the_balanced_manifold_is_the_balanced_velocity():
    # restricted to w_Q = w_K = w, dw/dt = -w ∂_P L at P = w²; h keeps -∂_h L
    Pp = sp.Symbol("P", positive=True)
    loss_P = LOSS_P.subs(P, Pp)
    flow = gradient_flow(loss_P.subs(Pp, wQ * wK), [wQ, wK, h])
    dw, dh = reduced_flow(flow, [wQ, wK, h], {wQ: wp, wK: wp}, [wp, h])
    assert sp.simplify(dw - reduced_velocity(loss_P, Pp, wp, "balanced")) == 0
    assert sp.simplify(dh + sp.diff(loss_P, h).subs(Pp, wp**2)) == 0
    # the same as balanced_manifold_flow of the loss written in w
    dw2, dh2 = balanced_manifold_flow(loss_P.subs(Pp, wp**2), wp, [h], "balanced")
    assert sp.simplify(dw - dw2) == 0 and sp.simplify(dh - dh2) == 0


def test_paper_mode_is_twice_the_balanced_velocity():
    loss_w = LOSS_P.subs(P, wp**2)
    paper, _ = balanced_manifold_flow(loss_w, wp, [h], "reparameterised")
    balanced, _ = balanced_manifold_flow(loss_w, wp, [h], "balanced")
    assert sp.simplify(paper - 2 * balanced) == 0
    assert sp.simplify(paper + sp.diff(loss_w, wp)) == 0


def test_reduced_flow_on_a_curved_manifold():
    # the rotation dx/dt = -y, dy/dt = x on the circle (r cos φ, r sin φ): dφ/dt = 1
    x, y, phi = sp.symbols("x y phi", real=True)
    r = sp.Symbol("r", positive=True)
    (dphi,) = reduced_flow([-y, x], [x, y], {x: r * sp.cos(phi), y: r * sp.sin(phi)}, [phi])
    assert sp.simplify(dphi - 1) == 0


def test_reduced_flow_refuses_a_manifold_that_is_not_invariant():
    # dx/dt = 1, dy/dt = 0 leaves the diagonal x = y
    x, y, s = sp.symbols("x y s", real=True)
    with pytest.raises(InvalidArgument, match="not tangent"):
        reduced_flow([sp.Integer(1), sp.Integer(0)], [x, y], {x: s, y: s}, [s])
    with pytest.raises(InvalidArgument, match="neither given by the manifold"):
        reduced_flow([x, y], [x, y], {x: s}, [s])


def test_fixed_points_and_linearisation_of_a_logistic_pair():
    # dx/dt = x(1 - x), dy/dt = -y: zeros (0, 0) (saddle) and (1, 0) (stable, eigenvalues -1, -1)
    x, y = sp.symbols("x y", real=True)
    flow = [x * (1 - x), -y]
    found = fixed_points(flow, [x, y])
    assert found.closed_form
    assert sorted((p[x], p[y]) for p in found.points) == [(0, 0), (1, 0)]
    assert sorted(linearisation(flow, [x, y], {x: 1, y: 0}).eigenvalues) == [-1, -1]
    assert sorted(linearisation(flow, [x, y], {x: 0, y: 0}).eigenvalues) == [-1, 1]
    positive = fixed_points(flow, [x, y], assumptions={x: {"positive": True}})
    assert [(p[x], p[y]) for p in positive.points] == [(1, 0)]
    assert all(s in (x, y) for p in positive.points for s in p)  # the caller's symbols, not the Dummies


def test_fixed_points_not_in_closed_form():
    x = sp.Symbol("x", real=True)
    found = fixed_points([sp.cos(x) - x * sp.exp(sp.sin(x)) + x**7 / 9], [x], seconds=5)
    assert isinstance(found, FixedPoints)
    assert not found.closed_form and found.points == () and "not found in closed form" in found.reason


def test_fixed_points_of_a_family_are_not_a_closed_form_list():
    # dx/dt = dy/dt = x - y: the whole diagonal is fixed
    x, y = sp.symbols("x y", real=True)
    found = fixed_points([x - y, x - y], [x, y])
    assert not found.closed_form and "family" in found.reason


def test_lie_series_of_a_linear_flow_is_the_exponential():
    x, t = sp.symbols("x t", real=True)
    series = lie_series([-a * x], [x], x, t, 5)
    assert sp.expand(series - sp.series(x * sp.exp(-a * t), t, 0, 5).removeO()) == 0
    with pytest.raises(InvalidArgument, match="order=0"):
        lie_series([-a * x], [x], x, t, 0)


def test_linearisation_needs_the_whole_point():
    x, y = sp.symbols("x y", real=True)
    with pytest.raises(InvalidArgument, match="no value for y"):
        linearisation([x, y], [x, y], {x: 0})


def test_flow_length_must_match_the_state():
    with pytest.raises(InvalidArgument, match="2 right-hand sides for 1 state"):
        induced_flow([wQ, wK], [wQ], {P: wQ})


def test_jacobian_entries_are_the_partial_derivatives():
    flow = [wQ * wK, sp.exp(wQ) + h]
    J = jacobian(flow, [wQ, wK, h])
    assert J.shape == (2, 3)
    assert J.tolist() == [[wK, wQ, 0], [sp.exp(wQ), 0, 1]]
    assert math.isclose(float(J[1, 0].subs(wQ, 0)), 1.0)
