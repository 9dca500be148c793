"""Derive-and-verify closed forms of the induction-head spec (``ih.dv.*``) that the paper does not print.

* ``ih.dv.balanced_flow`` — the flow induced on the balanced manifold w_Q = w_K and its ratio to
  the paper's flow in w (``derivations.flows``), for each IH loss mode.
* ``ih.dv.softmax_loss`` — the large-L limit of the true-softmax IH loss (Gaussian tokens): the
  normaliser Σ_s e^{a x_L x_{s-1}} is replaced by (L-2) E_y e^{a x_L y}, cross terms vanish, and
  each diagonal term is a Gaussian integral in x_L; with its minimiser h_eq and plateau rate.
* ``ih.dv.boolean`` — the same objects for Rademacher tokens, and the Lemma 7 analogue.

The "stated" side of each Formula is the spec's formula; the "derived" side is built here from
the definition by the expectation engine.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.expectation import gaussian_expectation, rademacher_expectation
from derivations.flows import induced_pair_flow, reduced_velocity
from derivations.induction_head.ih_head import L_IH2_derived, X, Y, Z, lemma7_expectation
from derivations.induction_head.symbols import (
    EQ10_CONSTRAINTS,
    L,
    alpha,
    domain,
    h,
    hstar,
    n,
    reduced_mode,
    w,
    wstar,
)

P = sp.Symbol("P", positive=True)
wQ, wK = sp.symbols("w_Q w_K", real=True)
v, vs = w**2, wstar**2
LAWS = {"gaussian": gaussian_expectation, "boolean": rademacher_expectation}


def large_L_pair(a: sp.Expr, b: sp.Expr, law: str) -> sp.Expr:
    """(L-2)² E[x_s² e^{(a+b) x_L y} / (N_a N_b)] with N_c = (L-2) E_y e^{c x_L y}: the large-L term of two heads.

    Given x_L, the numerator's expectation over (y, x_s) and each normaliser's expectation over y
    are taken by the engine; the ratio is then averaged over x_L.
    """
    expect = LAWS[law]
    numerator = expect(sp.exp((a + b) * X * Y) * Z**2, [Y, Z]).value
    norm_a = expect(sp.exp(a * X * Y), [Y]).value
    norm_b = expect(sp.exp(b * X * Y), [Y]).value
    ratio = sp.simplify(numerator / (norm_a * norm_b))
    if law == "boolean":
        return sp.simplify(sp.Rational(1, 2) * (ratio.subs(X, 1) + ratio.subs(X, -1)))
    return gaussian_expectation(sp.powsimp(ratio), [X]).value


def softmax_largeL_derived(law: str = "gaussian") -> sp.Expr:
    """The large-L true-softmax L_IH2 from its definition (target h* with v*, model h with v)."""
    return (hstar**2 * large_L_pair(vs, vs, law) + h**2 * large_L_pair(v, v, law)
            - 2 * h * hstar * large_L_pair(v, vs, law)) / (2 * n)


def softmax_largeL_stated(law: str = "gaussian") -> sp.Expr:
    """The spec's large-L formulas (ih.dv.softmax_loss; ih.dv.boolean, true softmax)."""
    if law == "gaussian":
        r = lambda x: (1 - 2 * x) ** sp.Rational(-1, 2)  # noqa: E731
        return (hstar**2 * r(vs**2) + h**2 * r(v**2) - 2 * h * hstar * r(v * vs)) / (2 * n)
    c = sp.cosh
    return (hstar**2 * c(2 * vs) / c(vs) ** 2 + h**2 * c(2 * v) / c(v) ** 2
            - 2 * h * hstar * c(v + vs) / (c(v) * c(vs))) / (2 * n)


def h_equilibrium(loss: sp.Expr) -> sp.Expr:
    """The minimiser in h at fixed w: the root of ∂L/∂h (L is quadratic in h)."""
    return sp.solve(sp.diff(loss, h), h)[0]


def plateau_rate(loss: sp.Expr, flow: str = "balanced") -> sp.Expr:
    """d ln w/dt as w -> 0 with h at its w = 0 equilibrium, for the given flow mode."""
    velocity = reduced_velocity(loss.subs(w, sp.sqrt(P)), P, w, reduced_mode(flow))
    h0 = sp.limit(h_equilibrium(loss), w, 0)
    return sp.limit(sp.simplify(velocity / w).subs(h, h0), w, 0)


def _domain(law: str) -> Domain:
    if law == "gaussian":
        # the large-L Gaussian form needs 2v² < 1, 2v*² < 1: w, w* < 2^{-1/4}; Eq. (10)'s domain is inside
        return domain(L, w, wstar, h, alpha, constraints=EQ10_CONSTRAINTS)
    return domain(L, w, wstar, h, alpha, w=Interval(0, 1.5), wstar=Interval(0, 1.5))


def item_softmax_loss() -> Item:
    """ih.dv.softmax_loss: the large-L true-softmax loss, its minimiser in h and the plateau rate."""
    derived = softmax_largeL_derived("gaussian")
    dom = _domain("gaussian")
    h_eq_stated = hstar * (1 - 2 * v**2) ** sp.Rational(1, 2) / (1 - 2 * v * vs) ** sp.Rational(1, 2)
    return Item("ih.dv.softmax_loss", "spec §4 ih.dv.softmax_loss", "—", "true-softmax IH loss, large L", [
        Formula("ih.dv.softmax_loss.formula", "spec formula (L -> ∞)", softmax_largeL_stated("gaussian"), derived,
                dom, "the spec's large-L loss vs the normaliser-replacement derivation",
                reading={"ih_loss": "softmax_largeL"}),
        Formula("ih.dv.softmax_loss.h_eq", "spec: h_eq(w)", h_eq_stated, h_equilibrium(derived), dom,
                "minimiser in h at fixed w"),
        Formula("ih.dv.softmax_loss.plateau_rate", "spec: d ln w/dt = h*² w*²/(L-2)", hstar**2 * vs / n,
                plateau_rate(derived, "balanced"), dom, "balanced flow, w -> 0, h = h_eq(0)",
                reading={"flow": "balanced"}),
    ], notes=["verified against Monte-Carlo of the true softmax at growing L (the limit is approached at O(1/L))"])


def item_boolean() -> Item:
    """ih.dv.boolean: Rademacher tokens — Lemma 7 analogue, exp-simplified and large-L losses, plateau rate."""
    a = sp.Symbol("a", real=True)
    dom = _domain("boolean")
    exp_simplified = L_IH2_derived("canonical", law="rademacher")
    stated_exp = (hstar**2 * sp.cosh(2 * vs) + h**2 * sp.cosh(2 * v) - 2 * h * hstar * sp.cosh(v + vs)) / (2 * n)
    largeL = softmax_largeL_derived("boolean")
    g4_gauss = gaussian_expectation(_g4_quadratic_form(), _tokens(6)).value
    g4_rad = rademacher_expectation(_g4_quadratic_form(), _tokens(6)).value
    return Item("ih.dv.boolean", "spec §4 ih.dv.boolean", "—", "Boolean-token closed forms", [
        Formula("ih.dv.boolean.lemma7", "E e^{aXY}Z² = cosh a", sp.cosh(a), lemma7_expectation("boolean").value,
                Domain({a: Interval(-5, 5)}), "Rademacher analogue of Lemma 7", reading={"tokens": "boolean"}),
        Formula("ih.dv.boolean.L_G4_law_free", "L_G4 depends on second moments only", g4_gauss, g4_rad,
                Domain({sp.Symbol("c1"): Interval(-2, 2), sp.Symbol("c2"): Interval(-2, 2)}),
                "a quadratic form of 6 tokens has the same expectation under both laws",
                reading={"tokens": "boolean"}),
        Formula("ih.dv.boolean.exp_simplified", "spec: exp-simplified, canonical range", stated_exp, exp_simplified,
                dom, "Boolean exp-simplified loss vs the engine's Rademacher expectation",
                reading={"tokens": "boolean", "ih_model_range": "canonical"}),
        Formula("ih.dv.boolean.softmax_largeL", "spec: true softmax, large L", softmax_largeL_stated("boolean"),
                largeL, dom, "Boolean large-L loss vs the normaliser-replacement derivation",
                reading={"tokens": "boolean", "ih_loss": "softmax_largeL"}),
        Formula("ih.dv.boolean.h_eq0", "spec: h_eq(0) = h*", hstar, sp.limit(h_equilibrium(largeL), w, 0), dom,
                "minimiser in h at w = 0 (true softmax, large L)", reading={"tokens": "boolean"}),
        Formula("ih.dv.boolean.plateau_rate", "spec: d ln w/dt = h*² tanh(w*²)/(L-2)",
                hstar**2 * sp.tanh(vs) / n, plateau_rate(largeL, "balanced"), dom,
                "balanced flow, w -> 0, h = h_eq(0)", reading={"tokens": "boolean", "flow": "balanced"}),
    ])


def _tokens(count: int) -> list[sp.Symbol]:
    return list(sp.symbols(f"t1:{count + 1}", real=True))


def _g4_quadratic_form() -> sp.Expr:
    """(c1 t4 - c2 Σ_i t_i/(i+1))²: a 4-gram-type quadratic form in 6 tokens."""
    t = _tokens(6)
    c1, c2 = sp.symbols("c1 c2")
    return (c1 * t[3] - c2 * sum(ti / (i + 1) for i, ti in enumerate(t))) ** 2


def item_balanced_flow() -> Item:
    """ih.dv.balanced_flow: w_Q² - w_K² is conserved; paper and balanced w-velocities differ by a factor 2."""
    F = sp.Function("F")
    pair = induced_pair_flow(F(P), P, wQ, wK)
    conserved = sp.simplify(2 * wQ * pair[0] - 2 * wK * pair[1])
    formulas = [Formula("ih.dv.balanced_flow.conservation_exp_simplified", "Lemma 3 / Lemma 5", sp.Integer(0),
                        _conservation(L_IH2_derived("canonical")), _pair_domain(), "d(w_Q² - w_K²)/dt for the "
                        "exp-simplified loss (a generic loss of P gives " + sp.sstr(conserved) + ")")]
    for mode, loss in (("exp_simplified", L_IH2_derived("canonical")),
                       ("softmax_largeL", softmax_largeL_stated("gaussian"))):
        in_P = loss.subs(w, sp.sqrt(P))
        formulas.append(Formula(
            f"ih.dv.balanced_flow.ratio_{mode}", "flow modes (spec §2.7)", sp.Integer(2),
            reduced_velocity(in_P, P, w, reduced_mode("paper")) / reduced_velocity(in_P, P, w, reduced_mode("balanced")),
            _domain("gaussian"), f"paper/balanced w-velocity at equal states, {mode} loss",
            reading={"ih_loss": mode}))
        balanced = reduced_velocity(in_P, P, w, reduced_mode("balanced"))
        on_manifold = induced_pair_flow(in_P, P, wQ, wK)[0].subs({wQ: w, wK: w})
        formulas.append(Formula(
            f"ih.dv.balanced_flow.induced_{mode}", "six-parameter flow on w_Q = w_K", balanced, on_manifold,
            _domain("gaussian"), "dw_Q/dt of the (w_Q, w_K) gradient flow at w_Q = w_K = w vs the balanced mode",
            reading={"ih_loss": mode}))
    return Item("ih.dv.balanced_flow", "spec §4 ih.dv.balanced_flow", "—", "balanced manifold", formulas,
                notes=[f"for a generic loss F(w_Q w_K): d(w_Q² - w_K²)/dt = {sp.sstr(conserved)}"])


def _conservation(loss: sp.Expr) -> sp.Expr:
    in_P = loss.subs(w, sp.sqrt(P))
    flow = induced_pair_flow(in_P, P, wQ, wK)
    return 2 * wQ * flow[0] - 2 * wK * flow[1]


def _pair_domain() -> Domain:
    base = domain(L, wstar, h, alpha, constraints=EQ10_CONSTRAINTS[:1])
    return Domain({**base.intervals, wQ: Interval(0.01, 0.7), wK: Interval(0.01, 0.7)}, base.integers,
                  base.constraints + (_pair_constraint(),))


def _pair_constraint():
    from derivations.domain import Constraint

    return Constraint(2 * (wQ * wK) ** 2 < 1, "Eq. (10) needs 4P² < 1")
