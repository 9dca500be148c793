"""The printed-bound expressions of the IH-head proof (derivations.induction_head.ih_proof) from first principles."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from derivations.induction_head import ih_proof as P
from derivations.induction_head import symbols as S


def test_eq12_derived_lower_bound_solves_its_ode():
    """h(t) of eq12_h_lower_derived satisfies dh/dt = eq12_dh_lower_derived with h(0) = h0."""
    h_t = P.eq12_h_lower_derived()
    residual = sp.diff(h_t, P.t) - P.eq12_dh_lower_derived().subs(S.h, h_t)
    point = {S.wstar: sp.Rational(49, 100), S.alpha: 1, S.L: 40, P.t: sp.Rational(7, 3), P.h0: sp.Rational(1, 100)}
    assert abs(float(residual.subs(point))) < 1e-14
    assert h_t.subs(P.t, 0).subs(point) == sp.Rational(1, 100)


def test_eq13_derived_is_the_hitting_time_of_the_comparison_ode():
    """Integrating dh/dt = (h*ψ(w*²) - hψ(2·10⁻⁴w*²))/(L-2) from h0 reaches h* at eq13_derived."""
    L, alpha, wstar, h0 = 40, 1.0, 0.49, 1e-3
    rhs = sp.lambdify((S.h,), P.eq12_dh_lower_derived().subs({S.L: L, S.alpha: alpha, S.wstar: wstar}))
    hstar = 1 / (1 + alpha)
    event = lambda t, y: y[0] - hstar  # noqa: E731
    event.terminal = True
    sol = solve_ivp(lambda t, y: [rhs(y[0])], (0, 1e4), [h0], events=event, rtol=1e-12, atol=1e-14)
    expected = float(P.eq13_derived().subs({S.L: L, S.alpha: alpha, S.wstar: wstar, P.h0: h0}))
    assert sol.t_events[0][0] == pytest.approx(expected, rel=1e-8)


def test_eq16_line1_is_display_plus_the_rise_time():
    """(16) line 1 = display + (L-2)ln(1/(1-(1-w*⁴)^{1/2})) (as printed, an identity of the two prints)."""
    diff = P.eq16_line1() - P.eq16_display() - S.n * sp.log(1 / (1 - sp.sqrt(1 - S.wstar**4)))
    point = {S.L: 40, S.alpha: 1, S.wstar: sp.Rational(49, 100), P.w0: sp.Rational(1, 100)}
    assert abs(float(diff.subs(point))) < 1e-12


def test_eq17_general_reduces_to_eq17_when_the_exponent_factor_is_one():
    """2β/(γ+β) = 1 at γ = β: the integrated bound becomes (17)."""
    general = P.eq17_general().subs({P.gamma: P.beta})
    assert sp.simplify(general - P.eq17_lower()) == 0


def test_p1_2_chain_rule_by_hand():
    """∂H/∂h = -(1-4w⁴)^{-3/2}·2w², so dH/dt on {w' = 0} is -h'(1-4w⁴)^{-3/2}·2w²."""
    expected = -P.hdot * (1 - 4 * S.w**4) ** sp.Rational(-3, 2) * 2 * S.w**2
    assert sp.simplify(P.p1_2_dHdt_derived() - expected) == 0


def test_step_ii1_ratios_are_one_at_the_target():
    """At v = v* both ratio bounds of Step II.1 equal 1 (h = h* is the fixed point)."""
    lo, hi = P.step_ii1_bounds()
    at = {S.v: sp.Rational(1, 5), S.vstar: sp.Rational(1, 5)}
    assert sp.nsimplify(lo.subs(at)) == 1 and sp.nsimplify(hi.subs(at)) == 1
    assert math.isclose(float(P.eq18_rate().subs({S.vstar: 0.24, S.alpha: 1, S.L: 40})), 0.24 * 0.25 / 152)
