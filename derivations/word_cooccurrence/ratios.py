"""Group-sum ratios and the logistic-loss ODE of Phase 2 (``co.cf.ratio_R``, ``co.cf.eq12_balance``,
``co.cf.lossode_F8``, ``co.cf.corF_2_ratio``; spec §4)."""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval
from derivations.word_cooccurrence.loss import g
from derivations.word_cooccurrence.symbols import t

#: the group sums A = Σ_{I₁} g and B_k = Σ_{I_k} g as functions of time
A, B2, B3, B4 = (sp.Function(name, positive=True)(t) for name in ("A", "B2", "B3", "B4"))
a0, a1, b20, b21, b30, b31, b40, b41 = sp.symbols("a0 a1 b20 b21 b30 b31 b40 b41", positive=True)
#: a concrete path for the group sums (each linear in t, positive on the domain)
PATH = {A: a0 + a1 * t, B2: b20 + b21 * t, B3: b30 + b31 * t, B4: b40 + b41 * t}


def _path(expr: sp.Expr) -> sp.Expr:
    return expr.subs({sp.Derivative(f, t): sp.diff(v, t) for f, v in PATH.items()}).subs(PATH).doit()


def _path_domain() -> Domain:
    return Domain({**{s: Interval(0.1, 2) for s in (a0, b20, b30, b40)},
                   **{s: Interval(-0.5, 0.5) for s in (a1, b21, b31, b41)}, t: Interval(0, 0.1)})


def item_ratio_R() -> Item:
    """co.cf.ratio_R — R (L745–L752; L6083–L6088), Eq. (13), Eq. (15).

    Derived: (1 + R)(A − B₂) from R's definition; Ṙ by the quotient rule, Ṙ = [Ḃ₂₃₄ + RḂ₂ − (1 + R)Ȧ]/(A − B₂). So
    (15)'s equivalence "Ṙ >= 0 ⟺ Ḃ₂₃₄ + RḂ₂ >= (1 + R)Ȧ" holds exactly when A − B₂ > 0; for A < B₂ it reverses."""
    B234 = B2 + B3 + B4
    R = (B234 - A) / (A - B2)
    dR = sp.diff(R, t)
    eq15_sides = sp.diff(B234, t) + R * sp.diff(B2, t) - (1 + R) * sp.diff(A, t)
    dom = _path_domain()
    return Item("co.cf.ratio_R", "L745–L752; Eqs. (13), (15)", "", "the ratio R of group sums", formulas=[
        Formula("co.cf.ratio_R.eq13", "Eq. (13)", _path((1 + R) * (A - B2)), _path(B3 + B4), dom,
                description="(1 + R)(Σ_{I₁}g − Σ_{I₂}g) = Σ_{I₃∪I₄}g",
                latex=r"(1+R)\Big(\sum_{I_1}g-\sum_{I_2}g\Big)=\sum_{I_3\cup I_4}g"),
        Formula("co.cf.ratio_R.eq15", "Eq. (15)", _path(eq15_sides / (A - B2)), _path(dR), dom,
                description="(15)'s two sides, their difference over A − B₂, against Ṙ (the equivalence needs "
                            "A − B₂ > 0)",
                latex=r"\partial_tR\ge0\iff\sum_{I_2\cup I_3\cup I_4}\dot g_i+R\sum_{I_2}\dot g_i\ge(1+R)\sum_{I_1}\dot g_i"),
    ], notes=["Eq. (15) is an equivalence only where A − B₂ = Σ_{I₁}g − Σ_{I₂}g > 0: Ṙ = [(15)'s left − right]/(A − B₂)"])


#: two samples per group: margins z = y_iF_i as functions of time
z2 = [sp.Function(f"z2{k}", real=True)(t) for k in (1, 2)]
z3 = [sp.Function(f"z3{k}", real=True)(t) for k in (1, 2)]
c = sp.symbols("c0:8", real=True)
MARGINS = {z2[0]: c[0] + c[1] * t, z2[1]: c[2] + c[3] * t, z3[0]: c[4] + c[5] * t, z3[1]: c[6] + c[7] * t}


def _s(z: sp.Expr) -> sp.Expr:
    """The printed 1/((1 + e^z)(1 + e^{−z})) = −g'(z)."""
    return 1 / ((1 + sp.exp(z)) * (1 + sp.exp(-z)))


def item_eq12_balance() -> Item:
    """co.cf.eq12_balance — Lemma F.5 proof (L5500–L5647), Eq. (12) and the sandwich after it (L5648–L5655).

    Derived: (B₃/B₂)∂_t(B₂/B₃) = Ḃ₂/B₂ − Ḃ₃/B₃ with Ḃ_k = Σ_{I_k} g'(z_i)ż_i (two samples per group, margins
    z_i = c + c't); the printed (12) is (its left side − its right side) <= 0. The sandwich: Σ_I s_i = Σ_I g_i/(1 + e^{−z_i})
    with s_i := 1/((1 + e^{z_i})(1 + e^{−z_i})), so it lies between Σ g/(1 + max e^{−z}) and Σ g/(1 + min e^{−z})."""
    B2s, B3s = sum(g(z) for z in z2), sum(g(z) for z in z3)
    lhs = sum(_s(z) * sp.diff(z, t) for z in z3) / B3s
    rhs = sum(_s(z) * sp.diff(z, t) for z in z2) / B2s
    derived = (B3s / B2s) * sp.diff(B2s / B3s, t)

    def along(expr):
        return expr.subs({sp.Derivative(f, t): sp.diff(v, t) for f, v in MARGINS.items()}).subs(MARGINS).doit()

    dom = Domain({**{v: Interval(-3, 3) for v in c}, t: Interval(0, 1)})
    zs = sp.symbols("w1:4", real=True)
    gs = [g(z) for z in zs]
    ss = [_s(z) for z in zs]
    exps = [sp.exp(-z) for z in zs]
    box = Domain({z: Interval(-6, 6) for z in zs})
    return Item("co.cf.eq12_balance", "Lemma F.5 proof; Eq. (12); L5648–L5655", "", "the balance of B₂ and B₃",
                formulas=[Formula("co.cf.eq12_balance.eq12", "Eq. (12)", along(lhs - rhs), along(derived), dom,
                                  description="(12)'s left − right against (B₃/B₂)∂_t(B₂/B₃) (B₃/B₂ > 0)")],
                inequalities=[
                    RegionInequality("co.cf.eq12_balance.sandwich_upper", "L5648–L5655", sum(ss),
                                     sum(gs) / (1 + sp.Min(*exps)), box,
                                     description="Σ s_i <= Σ g_i/(1 + min e^{−y_iF_i}), three samples, margins of "
                                                 "both signs"),
                    RegionInequality("co.cf.eq12_balance.sandwich_lower", "L5648–L5655",
                                     sum(gs) / (1 + sp.Max(*exps)), sum(ss), box,
                                     description="Σ g_i/(1 + max e^{−y_iF_i}) <= Σ s_i"),
                ])


def item_lossode_F8() -> Item:
    """co.cf.lossode_F8 — Thm F.8 (L6523–L6526), proof (L6527–L6703): dL/dt = −C₁L² ⇒ L = 1/(C₁t + C₂), and
    L̂(t) = 1/(C(t − T₁) + 1/L̂(T₁)). Derived: SymPy's ``dsolve`` with L(0) = L₀, and with L(T₁) = L₁."""
    C1, L0, L1, T1 = sp.symbols("C1 L0 L1 T1", positive=True)
    Lf = sp.Function("L")
    general = sp.dsolve(sp.Eq(Lf(t).diff(t), -C1 * Lf(t) ** 2), Lf(t), ics={Lf(0): L0}).rhs
    from_T1 = sp.dsolve(sp.Eq(Lf(t).diff(t), -C1 * Lf(t) ** 2), Lf(t), ics={Lf(T1): L1}).rhs
    dom = Domain({C1: Interval(0.1, 3), L0: Interval(0.1, 3), L1: Interval(0.1, 3), T1: Interval(0, 2),
                  t: Interval(0, 5)})
    return Item("co.cf.lossode_F8", "Thm F.8 (L6523–L6526)", "", "the loss ODE of Phase 2", formulas=[
        Formula("co.cf.lossode_F8.solution", "L6676", 1 / (C1 * t + 1 / L0), general, dom,
                description="L(t) = 1/(C₁t + C₂) with C₂ = 1/L(0)", latex=r"L(t)=\frac{1}{C_1t+C_2}"),
        Formula("co.cf.lossode_F8.from_T1", "Thm F.8", 1 / (C1 * (t - T1) + 1 / L1), from_T1, dom,
                description="L̂(t) = 1/(C(t − T₁) + 1/L̂(T₁))",
                latex=r"\hat L(t)=\frac{1}{\Theta(\sigma_1^2mm_1)(t-T_1)+(1/\hat L(T_1))}"),
    ])


def item_corF_2_ratio() -> Item:
    """co.cf.corF_2_ratio — Cor. F.2 proof (L5172–L5185): g_i/g_j = (1 + e^{y_jF_j})/(1 + e^{y_iF_i}) <= 2e^{y_jF_j}/e^{y_iF_i}
    "due to y_iF_i >= C".

    Derived: the inequality is 1 <= 2e^{z_j − z_i} + e^{z_j} (z = yF), so it needs z_j bounded below (e^{z_j} >= 1 at
    C >= 0) and fails for z_j ≪ 0 whatever z_i: the reading ``corF2_region`` decides on which margins it is tested."""
    zi, zj = sp.symbols("z_i z_j", real=True)
    lhs, rhs = (1 + sp.exp(zj)) / (1 + sp.exp(zi)), 2 * sp.exp(zj) / sp.exp(zi)
    wide, inequalities = Interval(-20, 20), []
    for C in (0, sp.Rational(1, 10), 1):
        label = str(C)
        for reading, (ri, rj) in {"printed": (Interval(C, 20), wide), "both": (Interval(C, 20), Interval(C, 20)),
                                  "j": (wide, Interval(C, 20))}.items():
            inequalities.append(RegionInequality(
                f"co.cf.corF_2_ratio.{reading}_C{label}", "L5172–L5185", lhs, rhs, Domain({zi: ri, zj: rj}),
                description=f"g_i/g_j <= 2e^{{y_jF_j}}/e^{{y_iF_i}} on corF2_region={reading}, C = {label}",
                reading={"corF2_region": reading, "corF2_C": label}))
    return Item("co.cf.corF_2_ratio", "Cor. F.2 proof (L5172–L5185)", "", "the ratio of two g's",
                formulas=[Formula("co.cf.corF_2_ratio.identity", "L5172", g(zi) / g(zj), lhs,
                                  Domain({zi: wide, zj: wide}), description="g_i/g_j")],
                inequalities=inequalities)
