"""Tests of ih.cf.C_properties, ih.cf.lyapunov_uv and ih.cf.lyapunov_vh ([W] App. C.3).

Expected verdicts are the hand derivations recorded in the comments; counterexamples are
re-evaluated with independent plain-mpmath code (the functions below), not with the tool.
"""

import mpmath
import pytest
import sympy as sp

from derivations.induction_head import lyapunov as ly
from derivations.induction_head.symbols import L, alpha, g, h, u, v, vstar, wstar

mpmath.mp.dps = 30


def _C(z):
    return z * (1 - z**2) ** mpmath.mpf(-1.5)


def _psi(z):
    return (1 - z**2) ** mpmath.mpf(-0.5)


def _verify_all(item, seconds=0.05):
    prefix = item.id + "."
    return {f.id.removeprefix(prefix): f.verify(n_points=4, symbolic_seconds=seconds) for f in item.formulas}


def _margins(item):
    prefix = item.id + "."
    return {q.id.removeprefix(prefix): q.sample_margin(n_points=200) for q in item.inequalities}


def _ineq(item, name):
    return next(q for q in item.inequalities if q.id == f"{item.id}.{name}")


def _margin_at(item, name, **point):
    names = {
        "u": u,
        "vG": ly.vG,
        "g": g,
        "alpha": alpha,
        "G1": ly.G1,
        "elapsed": ly.elapsed,
        "wstar": wstar,
        "beta": ly.beta,
        "theta": ly.theta,
        "vstar": vstar,
        "vratio": ly.vratio,
        "hratio": ly.hratio,
    }
    at = {names[k]: sp.Rational(str(val)) for k, val in point.items()}
    return _ineq(item, name).sample_margin(n_points=0, extra_points=[at])


# ---------------------------------------------------------------------------------------------
# ih.cf.C_properties
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def c_item():
    return ly.item_C_properties()


def test_printed_derivatives_are_exactly_the_derivatives(c_item):
    # C' = (1-x²)^{-5/2}(1+2x²), C'' = 3x(3+2x²)(1-x²)^{-7/2} by hand; ψ' = x(1-x²)^{-3/2}
    verdicts = _verify_all(c_item, seconds=4.0)
    assert {name: a.status for name, a in verdicts.items()} == dict.fromkeys(
        ("C_prime", "C_second", "phi_prime", "psi_prime"), "exact"
    )


def test_properties_of_C_hold(c_item):
    margins = _margins(c_item)
    # C' = (1+2x²)/(1-x²)^{5/2} > 1, C'' > 0 term by term, C(x)/x = (1-x²)^{-3/2} ≥ 1 and increasing
    # (so C(ax) ≥ aC(x) for a > 1), and C convex with C(0) = 0 is superadditive.
    for name in ("C_prime_gt_1", "C_second_pos", "C_ge_x", "C_scaling", "C_superadditive"):
        assert margins[name].holds, name
    grid = [mpmath.mpf(i) / 40 for i in range(40)]
    assert all(_C(a + b) >= _C(a) + _C(b) for a in grid for b in grid if a + b < 1)
    # steps 1-3 of the Eq. (17) chain: C increasing with w²+w*² ≥ (2γ+β)w² in the window,
    # superadditivity, and γ > 1 with C(y) ≥ y (R(w*) > 1 since w° < w*)
    for reading in ly.GAMMA_READINGS:
        for step in ("step1", "step2", "step3"):
            assert margins[f"eq17_{step}.gamma_{reading}"].holds, (step, reading)


def test_eq17_dw_bound_fails_at_the_window_end_for_the_linear_gamma(c_item):
    # at w² = w*²/(2γ+β-1), C(w²+w*²) - γC(2w²) = βw*²/(2γ+β-1) + O(w*⁶) < βw*²/(γ+β) when γ > 1
    ws, b = mpmath.mpf("0.1"), mpmath.mpf(1)
    gamma = 1 + mpmath.mpf("0.04375") * ws
    w2 = ws**2 / (2 * gamma + b - 1)
    gap = _C(w2 + ws**2) - gamma * _C(2 * w2) - b * ws**2 / (gamma + b)
    assert gap < -7e-6
    margin = _margin_at(c_item, "eq17_dw_bound.gamma_linear", wstar="0.1", beta=1, theta=1)
    assert margin.min_margin == pytest.approx(float(gap), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# ih.cf.lyapunov_uv
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def uv_item():
    return ly.item_lyapunov_uv()


@pytest.fixture(scope="module")
def uv_margins(uv_item):
    return _margins(uv_item)


def _flow_pg(length, pp, gg, alp):
    """(dp/dt, dg/dt) = -∇L_G4 with M(p) = Σ_{k=0}^{L-3} e^{-pk}, by numerical differentiation."""
    gs = alp / (1 + alp)
    M = lambda q: mpmath.fsum(mpmath.exp(-q * k) for k in range(length - 2))  # noqa: E731
    loss = lambda q, r: gs**2 / 2 + r**2 * M(2 * q) / M(q) ** 2 / 2 - gs * r / M(q)  # noqa: E731
    return -mpmath.diff(lambda q: loss(q, gg), pp), -mpmath.diff(lambda r: loss(pp, r), gg)


def _dG_exact(length, uu, gg, alp):
    gs = alp / (1 + alp)
    dp, dg = _flow_pg(length, -mpmath.log(uu), gg, alp)
    du = -uu * dp
    vv = uu * gs + gs - gg
    return uu * du + vv * (gs * du - dg), du, gs * du - dg


def test_uv_dynamics_derived_matches_numerical_gradient():
    du, dv = ly.uv_flow_derived()
    point = {L: 6, u: sp.Rational(2, 5), g: sp.Rational(7, 10), alpha: sp.Rational(3, 2)}
    _, du_ref, dv_ref = _dG_exact(6, mpmath.mpf("0.4"), mpmath.mpf("0.7"), mpmath.mpf("1.5"))
    assert float(sp.N(du.subs(point), 30)) == pytest.approx(float(du_ref), rel=1e-12)
    assert float(sp.N(dv.subs(point), 30)) == pytest.approx(float(dv_ref), rel=1e-12)


def test_uv_formula_verdicts(uv_item):
    verdicts = _verify_all(uv_item)
    # ξ as read off carries the printed 1/M display, which is M (and m/M² with (1-u^{L-2}) unsquared);
    # ξ as implied makes every printed form exact by construction of the structure; 'dG/(2dt) = u u' + v v''
    # is off by 2; step 8 has G(t_1) for 1/G(t_1) and 64 for 65.
    equal = {f"{name}.xi_implied" for name in ("du", "dv", "step1_expanded")}
    assert {name for name, a in verdicts.items() if a.equal} == equal
    half = next(f for f in uv_item.formulas if f.id.endswith("step1_half"))
    point = {L: 9, u: sp.Rational(1, 3), g: sp.Rational(3, 5), alpha: 1}
    assert sp.N((half.stated / half.derived).subs(point), 20) == pytest.approx(2)
    step8 = next(f for f in uv_item.formulas if f.id.endswith("step8"))
    at = {ly.G1: sp.Rational(1, 2), ly.elapsed: 130, alpha: 1}  # g*² = 1/4
    assert sp.simplify(step8.stated.subs(at)) == sp.Rational(128, 129)
    assert sp.simplify(step8.derived.subs(at)) == sp.Rational(2, 5)


def test_uv_chain_hand_facts(uv_item, uv_margins):
    for tag in ("alpha1", "alpha4"):
        # AM-GM (steps 4), term-wise comparisons (3b, 6a with g < 2g*, 6b with g* < 1, u ≤ 1), and
        # 7b (needs g²/(1+u)² ≥ 0.28125g*², true for u < 0.8856) and 7c ((u²+v²)²/4 ≤ (u⁴+v⁴)/2, v² ≤ 1)
        for name in ("step3b", "step4_aux1", "step4_aux2", "step6a", "step6b", "step7b", "step7c"):
            assert uv_margins[f"{name}.{tag}"].holds, (name, tag)
        # 7a: as u -> 0 the v² coefficient goes from -1.98/5 to -2/5
        assert not uv_margins[f"step7a.{tag}"].holds
        assert not uv_margins[f"step3a.{tag}"].holds
        assert not uv_margins[f"step2.xi_implied.{tag}"].holds
    assert uv_margins["step4_aux3"].holds and uv_margins["step6_premise"].holds
    assert not uv_margins["step7_implies_step8"].holds
    small_u = _margin_at(uv_item, "step7a.alpha1", u="0.001", vG=1, g="0.6")
    assert small_u.min_margin == pytest.approx(-0.004, rel=1e-3)
    # 7b fails beyond u_max: u = 0.94, g -> g*, v = 0: -0.22/1.94² > -0.99/16 (in units of g*²u⁴)
    assert _margin_at(uv_item, "step7b.alpha1", u="0.94", vG=0, g="0.5001").min_margin < 0


def test_uv_step3a_counterexample_by_hand(uv_item):
    # α* = 4 (g* = 4/5), u = 1/2, v = 1, g = 6/5: step 2's right-hand side exceeds step 3's
    uu, vv, gg, gs, n = mpmath.mpf("0.5"), mpmath.mpf(1), mpmath.mpf("1.2"), mpmath.mpf("0.8"), 40
    b2 = (
        1.001 * gg / (1 + uu) * abs(uu**3 * vv)
        + 1.0001 * gg**2 / (1 + uu) * uu ** (n + 1)
        - 0.999 * gg**2 / (1 + uu**2) * uu**4
        - 0.999 * gg * gs / (1 + uu) * uu**2 * vv**2
        + 1.001 * gg**2 * gs / (1 + uu) * abs(uu**n * vv)
        + 1.001 * gg**2 * gs / (1 + uu**2) * abs(uu**3 * vv)
        - 0.999 / (1 - uu**2) * vv**2
        + 1.001 * gg / (1 - uu**2) * abs(uu ** (n - 2) * vv)
    )
    b3 = (
        1.002 * gg / (1 + uu) * abs(uu**3 * vv)
        - 0.99 * gg**2 / (1 + uu) ** 2 * uu**4
        - 0.999 * gg * gs / (1 + uu) * uu**2 * vv**2
        + 1.005 * gg**2 * gs / (1 + uu) ** 2 * abs(uu**3 * vv)
        - 0.999 / (1 - uu**2) * vv**2
    )
    assert b2 - b3 == pytest.approx(0.0186, abs=5e-4)
    margin = _margin_at(uv_item, "step3a.alpha4", u="0.5", vG=1, g="1.2")
    assert margin.min_margin == pytest.approx(float(b3 - b2), rel=1e-6)


def test_uv_step2_fails_for_the_exact_dynamics(uv_item):
    # on the trajectory manifold v = ug* + g* - g (u = 1/10, g = 3/4, α* = 1, v = -1/5) the exact dG/dt
    # is about -0.0327, while step 2's bound is about -0.999v²/(1-u²) = -0.0404
    exact, _, _ = _dG_exact(40, mpmath.mpf("0.1"), mpmath.mpf("0.75"), mpmath.mpf(1))
    assert float(exact) == pytest.approx(-0.0327, abs=2e-4)
    margin = _margin_at(uv_item, "step2.xi_implied.alpha1", u="0.1", vG="-0.2", g="0.75")
    assert float(margin.lhs_value) == pytest.approx(float(exact), rel=1e-9)
    assert float(margin.rhs_value) < -0.04 and margin.min_margin < 0


def test_step8_is_not_implied_for_long_times(uv_item):
    # comparison bound 1/(1/G1 + g*²τ/65) exceeds the printed 1/(G1 + g*²τ/64) once τ is large
    g1, tau, gs2 = mpmath.mpf("0.5"), mpmath.mpf(10) ** 5, mpmath.mpf("0.25")
    assert 1 / (1 / g1 + gs2 * tau / 65) > 1 / (g1 + gs2 * tau / 64)
    assert _margin_at(uv_item, "step7_implies_step8", G1="0.5", elapsed=100000, alpha=1).min_margin < 0


# ---------------------------------------------------------------------------------------------
# ih.cf.lyapunov_vh
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vh_item():
    return ly.item_lyapunov_vh()


def _dG_vh(vv, hh, vs, alp, length=40):
    """(L-2)dG/dt along the printed (v, h) flow, with independent φ, ψ."""
    hs = 1 / (1 + alp)
    dv = 4 * vv * hh / (length - 2) * (hs * _C(vv + vs) - hh * _C(2 * vv))
    dh = (hs * _psi(vv + vs) - hh * _psi(2 * vv)) / (length - 2)
    return (length - 2) * ((vv - vs) * dv + (hh - hs) * dh)


def test_vh_identity_chain(vh_item):
    verdicts = _verify_all(vh_item)
    # line 1 and line 3 expand to (L-2)dG/dt; line 0 lacks the factor L-2; line 2 has
    # '- h(φ(v+v*) - φ(2v))' where h*φ₊ - hφ₂ = (h*-h)φ₊ + h(φ₊ - φ₂); 4.08 + 1.3·1.02 = 5.406 ≠ 5.41
    assert {name for name, a in verdicts.items() if a.equal} == {"identity_line1", "identity_line3"}
    line0 = next(f for f in vh_item.formulas if f.id.endswith("identity_line0"))
    point = {L: 12, v: sp.Rational(1, 5), h: sp.Rational(3, 10), vstar: sp.Rational(1, 4), alpha: 2}
    assert sp.N((line0.derived / line0.stated).subs(point), 20) == pytest.approx(10)
    ref = _dG_vh(mpmath.mpf("0.2"), mpmath.mpf("0.3"), mpmath.mpf("0.25"), mpmath.mpf(2), length=12)
    assert float(sp.N(line0.derived.subs(point), 30)) == pytest.approx(float(ref), rel=1e-12)


def test_vh_estimates(vh_item):
    margins = _margins(vh_item)
    # φ' ≥ 1, φ increasing, ψ ≥ 1; 5.41 ≥ 5.406 with (v*-v)(h-h*) > 0; 9.6v*² ≤ 2.88v*; 1.04 ≥ 1/8 and
    # 0.25 ≥ v*h*²/8
    for name in (
        "est_phi_diff",
        "est_phi_diff_xi",
        "est_phi_upper1",
        "est_psi_lower",
        "chain2",
        "chain4",
        "chain5",
    ):
        assert margins[name].holds, name
    for name in ("est_phi_upper2", "est_psi_diff", "est_psi_diff_xi", "chain1", "chain3"):
        assert not margins[name].holds, name
    # φ(2v*) at v* = 0.3 is 0.6/0.64^{3/2} = 75/64 > 1
    assert sp.nsimplify(ly.phi(sp.Rational(6, 10))) == sp.Rational(75, 64)
    # ψ(v+v*) - ψ(2v) ≈ ψ'(2v*)(v*-v) with ψ'(0.6) = 75/64 > 1.3·0.3 as v -> v*
    vs, vv = mpmath.mpf("0.3"), mpmath.mpf("0.29")
    assert (_psi(vv + vs) - _psi(2 * vv)) / (vs - vv) > 1 > 1.3 * vs


def test_vh_chain_counterexamples_by_hand(vh_item):
    # chain 1: at v ≈ v*/4, h ≈ h*, (L-2)dG/dt ≈ -(9/16)v*³h*²φ'(ξ) while the bound is -3.92·(9/16)v*³h*²
    vs, alp = mpmath.mpf("0.1"), mpmath.mpf(1)
    hs = 1 / (1 + alp)
    vv, hh = mpmath.mpf("0.26") * vs, mpmath.mpf("1.000001") * hs
    s1 = (
        -4 / 1.02 * vs * hs**2 * (vv - vs) ** 2
        - (hh - hs) ** 2
        + 4.08 * vs * hs * (vv - vs) * (hs - hh)
        + 1.3 * 1.02 * vs * hs * (vs - vv) * (hh - hs)
    )
    assert _dG_vh(vv, hh, vs, alp) > s1
    margin = _margin_at(vh_item, "chain1", vstar="0.1", alpha=1, vratio="0.26", hratio="1.000001")
    assert margin.min_margin == pytest.approx(float(s1 - _dG_vh(vv, hh, vs, alp)), rel=1e-6)
    # chain 3: 5.41² > 4·9.6·(3/4), so the AM-GM step fails where (h-h*) ≈ 3.6v*h*(v*-v)
    vs, vv, hh = mpmath.mpf("0.3"), mpmath.mpf("0.291"), mpmath.mpf("0.50486")
    x2, y_ = (vv - vs) ** 2, hh - hs
    s2 = -4 / 1.02 * vs * hs**2 * x2 - y_**2 + 5.41 * vs * hs * (vs - vv) * y_
    s3 = -3.92 * vs * hs**2 * x2 - y_**2 + 9.6 * vs**2 * hs**2 * x2 + 0.75 * y_**2
    assert s3 < s2
    margin = _margin_at(vh_item, "chain3", vstar="0.3", alpha=1, vratio="0.97", hratio="1.00972")
    assert margin.min_margin == pytest.approx(float(s3 - s2), rel=1e-6)
