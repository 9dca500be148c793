"""Head 2 (the induction head): Lemma 7, Eq. (10), the (w, h) flow, w° (Eq. (11)) and R(w*).

Stage II with the ideal first layer. The exp-simplified loss of C.3.2 replaces every IH
softmax sm(z)_s by e^{z_s}/(L-2), in the target and in the model; its normaliser stays
1/(L-2) in every range reading, only the number of model terms changes (spec §2.3).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.expectation import gaussian_expectation, rademacher_expectation
from derivations.flows import reduced_velocity
from derivations.induction_head.symbols import (
    EQ10_CONSTRAINTS,
    INV_SQRT2,
    L,
    W_RANGE,
    a,
    alpha,
    domain,
    h,
    hstar,
    n,
    phi,
    psi,
    reduced_mode,
    s,
    v,
    vstar,
    w,
    wstar,
)

X, Y, Z = sp.symbols("X Y Z", real=True)
P = sp.Symbol("P", positive=True)  # P = w_Q w_K
wdot = sp.Symbol("wdot", real=True)  # w'(T_2^h) in the (P1.3) display

#: model ranges of head 2 (flag ih_model_range) as the number of model terms; the target has L-2
IH_MODEL_TERMS = {"canonical": L - 2, "literal": L - 3, "mixed": L - 3}


def lemma7_expectation(law: str = "gaussian"):
    """E_{X,Y,Z} exp(aXY) Z² from the expectation engine, with its existence conditions."""
    expect = gaussian_expectation if law == "gaussian" else rademacher_expectation
    return expect(sp.exp(a * X * Y) * Z**2, [X, Y, Z])


def with_existence(result) -> sp.Expr:
    """The expectation where its conditions hold and +∞ elsewhere (it diverges there)."""
    if not result.conditions:
        return result.value
    return sp.Piecewise((result.value, sp.And(*result.conditions)), (sp.oo, True))


def item_lemma7() -> Item:
    """ih.cf.lemma7: E exp(aXY)Z² = (1-a²)^{-1/2}, 'a < 1', and the three members of its proof chain."""
    result = lemma7_expectation()
    printed = (1 - a**2) ** sp.Rational(-1, 2)
    printed_domain = Domain({a: Interval(-3, 1)})  # the printed "a < 1", sampled on (-3, 1)
    valid = Domain({a: Interval(-1, 1)})
    # ∫ f(x) e^{-|x|²/2} dx = (2π)^{3/2} E f: the first member's prefactor (1/2π)^{-3/2} = (2π)^{3/2}
    # therefore gives (2π)^3 E f, not E f.
    first_member = (1 / (2 * sp.pi)) ** sp.Rational(-3, 2) * (2 * sp.pi) ** sp.Rational(3, 2) * result.value
    T = sp.Symbol("T", real=True)
    c = sp.Symbol("c", positive=True)  # c = 1 - a² > 0 on the valid domain
    second_member = sp.integrate(
        sp.exp(-T**2 / 2) * sp.exp(-c * Y**2 / 2) / (2 * sp.pi), (T, -sp.oo, sp.oo), (Y, -sp.oo, sp.oo)
    ).subs(c, 1 - a**2)
    W = sp.Symbol("W", real=True)
    third_member = sp.integrate(sp.exp(-W**2 / 2) / sp.sqrt(2 * sp.pi), (W, -sp.oo, sp.oo))
    return Item("ih.cf.lemma7", "[W] Lemma 7 (App. D)", "[F] Lemma D.3", "Lemma 7", [
        Formula("ih.cf.lemma7.statement", "Lemma 7 (printed domain a < 1)", printed, with_existence(result),
                printed_domain, "E exp(aXY)Z² exists only for " + " and ".join(map(str, result.conditions)),
                latex=r"\mathbb E_{X,Y,Z}\exp(aXY)Z^2=(1-a^2)^{-1/2},\ a<1"),
        Formula("ih.cf.lemma7.statement_valid", "Lemma 7 on |a| < 1", printed, result.value, valid,
                "the statement where the expectation exists"),
        Formula("ih.cf.lemma7.proof_member1", "Lemma 7 proof, first member", printed, first_member, valid,
                "∫exp(aXY)Z²(1/2π)^{-3/2}exp(-½(X²+Y²+Z²)): the prefactor should be (2π)^{-3/2}"),
        Formula("ih.cf.lemma7.proof_member2", "Lemma 7 proof, second member", printed, second_member, valid,
                "∫(1/2π)exp(-½(X-aY)² - ½Y² + ½a²Y²) d(X-aY)dY"),
        Formula("ih.cf.lemma7.proof_member3", "Lemma 7 proof, third member", printed, third_member, valid,
                "∫(1/√2π)exp(-½W²)dW with W = (1-a²)^{1/2}Y: the Jacobian of the substitution is missing"),
    ])


def eq10_printed() -> sp.Expr:
    """Eq. (10) as printed."""
    return (
        (1 - 4 * wstar**4) ** sp.Rational(-1, 2) / (2 * (1 + alpha) ** 2 * (L - 2))
        + h**2 / (2 * (L - 2)) * (1 - 4 * w**4) ** sp.Rational(-1, 2)
        - h * (1 - (w**2 + wstar**2) ** 2) ** sp.Rational(-1, 2) / ((1 + alpha) * (L - 2))
    )


def L_IH2_derived(reading: str = "canonical", law: str = "gaussian") -> sp.Expr:
    """The exp-simplified L_IH2 from its definition, for a head-2 range reading and a token law.

    ½E[(h*/(L-2) Σ_{s=2}^{L-1} e^{w*² x_L x_{s-1}} x_s - h/(L-2) Σ_{s∈R} e^{w² x_L x_{s-1}} x_s)²],
    expanded by the expectation engine with the symbolic sequence length L.
    """
    from derivations.expectation import IndexRange, Pattern, expect_square, x

    target_range = IndexRange(2, L - 1)
    model_range = IndexRange(2, L - 1) if reading == "canonical" else IndexRange(2, L - 2)
    target = Pattern(sp.exp(wstar**2 * x(L) * x(s - 1)) * x(s), s)
    model = Pattern(sp.exp(w**2 * x(L) * x(s - 1)) * x(s), s)
    result = expect_square([(hstar / n, target, target_range), (-h / n, model, model_range)], law=law, L=L)
    return sp.Rational(1, 2) * result.value


def flow_wh_derived(flow: str = "paper", reading: str = "canonical") -> tuple[sp.Expr, sp.Expr]:
    """(dw/dt, dh/dt) of the toolkit's loss: ``paper`` dw/dt = -dL(w²)/dw, ``balanced`` -w ∂_P L|_{P=w²}."""
    loss = L_IH2_derived(reading)
    return reduced_velocity(loss.subs(w, sp.sqrt(P)), P, w, reduced_mode(flow)), -sp.diff(loss, h)


def item_L_IH2() -> Item:
    """ih.cf.L_IH2: Eq. (10) against the exp-simplified expectation, per head-2 range reading."""
    dom = domain(L, w, wstar, h, alpha, constraints=EQ10_CONSTRAINTS)
    formulas = [
        Formula(f"ih.cf.L_IH2.eq10_{reading}", "Eq. (10)", eq10_printed(), L_IH2_derived(reading), dom,
                f"Eq. (10) vs ½E[(target - model)²] with the model over the {reading} range",
                label_alt="[F] Eq. (22)", reading={"ih_model_range": reading, "ih_loss": "exp_simplified"},
                latex=r"\mathcal L_{IH_2}=\frac{(1-4w^{\star4})^{-\frac12}}{2(1+\alpha^\star)^2(L-2)}+\frac12"
                      r"\frac{h^2}{L-2}(1-4w^4)^{-\frac12}-\frac{h(1-(w^2+w^{\star2})^2)^{-\frac12}}"
                      r"{(1+\alpha^\star)(L-2)}")
        for reading in ("canonical", "literal")
    ]
    return Item("ih.cf.L_IH2", "[W] C.3.2, Eq. (10)", "[F] C.2, Eq. (22)", "exp-simplified IH loss", formulas,
                notes=["ih_model_range=mixed equals literal for the exp-simplified loss: its normaliser is "
                       "1/(L-2) in every reading, only the number of model terms (L-3) changes."])


def item_flow_wh() -> Item:
    """ih.cf.flow_wh: the printed (w, h) flows (first form, (P1.1) ψ/φ form, Part II in v) and the ratio statement."""
    dom = domain(L, w, wstar, h, alpha, constraints=EQ10_CONSTRAINTS)
    vv, vs = w**2, wstar**2
    dw_first = (h / ((1 + alpha) * (L - 2)) * (1 - (vv + vs) ** 2) ** sp.Rational(-3, 2) * (vv + vs) * 2 * w
                - h**2 / (L - 2) * (1 - 4 * w**4) ** sp.Rational(-3, 2) * 4 * w**3)
    dh_first = (1 / ((1 + alpha) * (L - 2)) * (1 - (vv + vs) ** 2) ** sp.Rational(-1, 2)
                - h / (L - 2) * (1 - 4 * w**4) ** sp.Rational(-1, 2))
    dh_p11 = h / (L - 2) * psi(vv + vs) * (hstar / h - psi(2 * vv) / psi(vv + vs))
    dw_p11 = 2 * h**2 * w / (L - 2) * phi(vv + vs) * (hstar / h - phi(2 * vv) / phi(vv + vs))
    dv_part2 = 4 * vv * h / (L - 2) * (hstar * phi(vv + vs) - h * phi(2 * vv))
    dh_part2 = (hstar * psi(vv + vs) - h * psi(2 * vv)) / (L - 2)
    formulas = []
    for flow in ("paper", "balanced"):
        dw_der, dh_der = flow_wh_derived(flow)
        rd = {"flow": flow, "ih_model_range": "canonical"}
        formulas += [
            Formula(f"ih.cf.flow_wh.dw_first_{flow}", "C.3.2 GF display", dw_first, dw_der, dom,
                    f"dw/dt first form vs the {flow} flow of the derived loss", reading=rd),
            Formula(f"ih.cf.flow_wh.dw_P1_1_{flow}", "C.3.2 (P1.1)", dw_p11, dw_der, dom,
                    f"dw/dt (P1.1) form vs the {flow} flow", reading=rd),
            Formula(f"ih.cf.flow_wh.dv_part2_{flow}", "C.3.2 Part II", dv_part2, 2 * w * dw_der, dom,
                    f"dv/dt (v = w²) vs 2w dw/dt of the {flow} flow", reading=rd),
        ]
    dw_der, dh_der = flow_wh_derived("paper", "literal")
    formulas.append(Formula("ih.cf.flow_wh.dw_first_paper_literal", "C.3.2 GF display", dw_first, dw_der, dom,
                            "dw/dt first form vs the paper flow with the literal model range",
                            reading={"flow": "paper", "ih_model_range": "literal"}))
    _, dh_der = flow_wh_derived("paper")
    formulas += [
        Formula("ih.cf.flow_wh.dh_first", "C.3.2 GF display", dh_first, dh_der, dom, "dh/dt first form"),
        Formula("ih.cf.flow_wh.dh_P1_1", "C.3.2 (P1.1)", dh_p11, dh_der, dom, "dh/dt (P1.1) form"),
        Formula("ih.cf.flow_wh.dh_part2", "C.3.2 Part II", dh_part2, dh_der, dom, "dh/dt Part II form"),
    ]
    pair = Domain({w: W_RANGE, wstar: W_RANGE})
    lhs = phi(2 * w**2) / phi(w**2 + wstar**2)
    rhs = psi(2 * w**2) / psi(w**2 + wstar**2)
    inequalities = [
        RegionInequality("ih.cf.flow_wh.ratio_below", "C.3.2 (P1.1)", lhs, rhs,
                         Domain(pair.intervals, {}, (Constraint(w < wstar, "w < w*"),)), strict=True,
                         description="φ(2w²)/φ(w²+w*²) < ψ(2w²)/ψ(w²+w*²) for w < w*"),
        RegionInequality("ih.cf.flow_wh.ratio_above", "C.3.2 (P1.1)", rhs, lhs,
                         Domain(pair.intervals, {}, (Constraint(w > wstar, "w > w*"),)), strict=True,
                         description="φ(2w²)/φ(w²+w*²) > ψ(2w²)/ψ(w²+w*²) for w > w*"),
    ]
    return Item("ih.cf.flow_wh", "[W] C.3.2", "[F] C.2", "(w, h) gradient flow", formulas, inequalities)


def w_circ_printed(wstar_: sp.Expr = wstar) -> sp.Expr:
    """Eq. (11) as printed: w° = sqrt((3 - 4w*⁴ - sqrt((4w*⁴-3)² - 16w*⁴))/(8w*²))."""
    return sp.sqrt((3 - 4 * wstar_**4 - sp.sqrt((4 * wstar_**4 - 3) ** 2 - 16 * wstar_**4)) / (8 * wstar_**2))


def w_circ_derived() -> sp.Expr:
    """w° from the sign-change condition: the smaller root in v = w² of the condition's polynomial.

    (1-4v²)(v+v*) < 4v(1-(v+v*)²) is, after expansion, 4v* v² - (3 - 4v*²) v + v* < 0 (derived
    here by SymPy, not typed in); it holds between the two roots, so w > sqrt(smaller root).
    """
    condition = sp.expand(4 * v * (1 - (v + vstar) ** 2) - (1 - 4 * v**2) * (v + vstar))
    roots = sp.solve(sp.Eq(condition, 0), v)
    smaller = [r for r in roots if r.subs(vstar, sp.Rational(1, 10)).is_real]
    smaller = min(smaller, key=lambda r: r.subs(vstar, sp.Rational(1, 10)))
    return sp.sqrt(smaller.subs(vstar, wstar**2))


def r_of_w(w_: sp.Expr, wstar_: sp.Expr = wstar) -> sp.Expr:
    """r(w) as printed: (1-4w⁴)^{1/2}/(1-(w²+w*²)²)^{1/2}."""
    return sp.sqrt(1 - 4 * w_**4) / sp.sqrt(1 - (w_**2 + wstar_**2) ** 2)


def R_of_wstar(wstar_: sp.Expr = wstar) -> sp.Expr:
    """R(w*) := r(w°(w*)) with w° of Eq. (11)."""
    return r_of_w(w_circ_printed(wstar_), wstar_)


def item_w_circ() -> Item:
    """ih.cf.w_circ: dQ/dt on {Q = 0}, Eq. (11), 'w° ≥ w*/2' and the monotonicity of w°."""
    vv, vs = w**2, wstar**2
    Q = hstar * psi(vv + vs) - h * psi(2 * vv)
    h_on_Q0 = sp.solve(sp.Eq(Q, 0), h)[0]
    dh_dt = Q / (L - 2)  # the paper-mode dh/dt is Q/(L-2)
    dQ_dt = (sp.diff(Q, w) * wdot + sp.diff(Q, h) * dh_dt).subs(h, h_on_Q0)
    wt = w
    printed_dQ = (1 / (1 + alpha) * (1 - (wt**2 + vs) ** 2) ** sp.Rational(-1, 2) * 2 * wt * wdot
                  * ((1 - (wt**2 + vs) ** 2) ** -1 * (wt**2 + vs) - (1 - 4 * wt**4) ** -1 * 4 * wt**2))
    dom = domain(L, w, wstar, alpha, constraints=EQ10_CONSTRAINTS)
    dom = Domain({**dom.intervals, wdot: Interval(-1, 1)}, dom.integers, dom.constraints)
    star = Domain({wstar: W_RANGE})
    return Item("ih.cf.w_circ", "[W] C.3.2 (P1.3), Eq. (11)", "[F] C.2, Eq. (23)", "w°", [
        Formula("ih.cf.w_circ.dQdt", "C.3.2 (P1.3) dQ/dt display", printed_dQ, dQ_dt, dom,
                "dQ/dt at a zero of Q (dh/dt = Q/(L-2) = 0 there), h eliminated with Q = 0"),
        Formula("ih.cf.w_circ.eq11", "Eq. (11)", w_circ_printed(), w_circ_derived(), star,
                "w° as printed vs the smaller root of the sign-change condition", label_alt="[F] Eq. (23)",
                latex=r"w^\circ:=\sqrt{\frac{3-4w^{\star4}-\sqrt{(4w^{\star4}-3)^2-16w^{\star4}}}{8w^{\star2}}}"),
    ], [
        RegionInequality("ih.cf.w_circ.above_half", "Eq. (11) '≥ w*/2'", wstar / 2, w_circ_printed(), star,
                         description="w° ≥ w*/2 on 0 < w* < 1/√2"),
        RegionInequality("ih.cf.w_circ.increasing", "C.3.2 'w° is an increasing function of w*'",
                         sp.Integer(0), sp.diff(w_circ_printed(), wstar), star, strict=True,
                         description="dw°/dw* > 0 on 0 < w* < 1/√2"),
    ])


def item_R() -> Item:
    """ih.cf.R: r(w) at dh/dt = 0, R(0) = 1, R'(0) = 0, and 'R(w*) < 1 + 0.04w*' on (0, c)."""
    dom = domain(w, wstar, constraints=EQ10_CONSTRAINTS[1:] + EQ10_CONSTRAINTS[:1])
    h_at_stationary = sp.solve(sp.Eq(hstar * psi(w**2 + wstar**2) - h * psi(2 * w**2), 0), h)[0]
    R = R_of_wstar()
    series = sp.series(R, wstar, 0, 9).removeO()
    star = Domain({wstar: W_RANGE})
    return Item("ih.cf.R", "[W] C.3.2 Part II", "[F] C.2", "r(w) and R(w*)", [
        Formula("ih.cf.R.r_at_stationary_h", "C.3.2 'h(T_2^h)/h* ≤ r(w)'", r_of_w(w), h_at_stationary / hstar,
                dom, "h/h* where dh/dt = 0, vs the printed bound r(w): equality, not only ≤"),
        Formula("ih.cf.R.R0", "C.3.2 'R(w* = 0) = 1'", sp.Integer(1), series.subs(wstar, 0), Domain({}),
                "the constant term of the Taylor series of R at w* = 0"),
        Formula("ih.cf.R.R_prime0", "C.3.2 'R'(w* = 0) = 0'", sp.Integer(0),
                sp.diff(series, wstar).subs(wstar, 0), Domain({}), "the linear term of the series"),
    ], [
        RegionInequality("ih.cf.R.linear_bound", "C.3.2 'R(w*) < 1 + 0.04w*'", R, 1 + sp.Rational(4, 100) * wstar,
                         star, strict=True, description="R(w*) < 1 + 0.04w* on the whole natural range "
                         "0 < w* < 1/√2 (the paper claims it on some (0, c))"),
        RegionInequality("ih.cf.R.r_decreasing", "C.3.2 'r(w) is decreasing for w > w°'",
                         sp.diff(r_of_w(w), w), sp.Integer(0),
                         Domain({w: W_RANGE, wstar: W_RANGE}, {},
                                (Constraint(w > w_circ_printed(), "w > w°"),) + EQ10_CONSTRAINTS),
                         strict=True, description="dr/dw < 0 for w° < w < 1/√2"),
    ], notes=[f"Taylor series of R at w* = 0: {sp.sstr(series)}",
              f"natural range of w*: (0, {INV_SQRT2:.6f})"])
