"""Phase 2's group rates and the quadratic of Lemma F.6 (``co.cf.group_rates``, ``co.cf.eq16_quadratic``,
``co.dv.quadratic_exact``; spec §4, §5).

Derived on the uniform-attention manifold of ``co.dv.reduced_ode`` with its m₁N term dropped (Ġ = U·r): with the
group sums A = Σ_{I₁}g, B_k = Σ_{I_k}g and the features z = (1,1,1), (1,0,1), (0,1,1), (0,0,1) of I₁..I₄,
r = (1/n)(A − B₂, A − B₃, A − B₂₃₄), so Ġ_a = (U/n)r_a·n and ∂_t(y_iF_i) = y_kz_k·Ġ for i ∈ I_k. Substituting
ġ_i = g'(y_iF_i)∂_t(y_iF_i) into (15) (in units of (U/n)(A − B₂) > 0), with P_k = Σ_{I_k}g'(y_iF_i):
(P₁ + P₂)R² + (P₃ + P₄ − ρP₁)R − P₂ − ρP₃ − (1 + ρ)P₁ >= 0, ρ = (A − B₃)/(A − B₂).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval

A, B2, B3, B4, U, n = sp.symbols("A B2 B3 B4 U n", positive=True)
P1, P2, P3, P4 = sp.symbols("P1 P2 P3 P4", negative=True)
R, rho, eps = sp.symbols("R rho epsilon", real=True)
FEATURES = ((1, 1, 1), (1, 0, 1), (0, 1, 1), (0, 0, 1))
SIGNS = (1, -1, -1, -1)


def _group_rates() -> tuple[list[sp.Expr], list[sp.Expr]]:
    """(Ġ₁..₃, ∂_t(y_iF_i) for I₁..I₄) with Ġ = U·r and r = (1/n)Σ_k y_kB_kz_k (B₁ := A)."""
    sums = (A, B2, B3, B4)
    r = [sum(s * g * z[a] for s, g, z in zip(SIGNS, sums, FEATURES, strict=True)) / n for a in range(3)]
    G_dot = [U * x for x in r]
    margins = [s * sum(z[a] * G_dot[a] for a in range(3)) for s, z in zip(SIGNS, FEATURES, strict=True)]
    return G_dot, margins


def _dom() -> Domain:
    return Domain({A: Interval(1, 3), B2: Interval(0.1, 0.9), B3: Interval(0.1, 0.9), B4: Interval(0.1, 0.9),
                   U: Interval(0.1, 10), n: Interval(6, 600)})


def item_group_rates() -> Item:
    """co.cf.group_rates — the leading-order group rates of the proofs of Lemmas F.5, F.6 and Thm F.8 (o(1) terms
    set to 0), and the same divided by (U/n)(A − B₂) in terms of R and ρ. Derived: Ġ = U·r on the manifold with
    m₁N dropped (module docstring)."""
    G_dot, margins = _group_rates()
    B234, B23 = B2 + B3 + B4, B2 + B3
    printed_G = [U / n * (A - B2), U / n * (A - B3), U / n * (A - B234)]
    printed_margin = [U / n * (3 * A - B234 - B23), -U / n * (A - B234 + A - B2), -U / n * (A - B234 + A - B3),
                      -U / n * (A - B234)]
    Rv, rhov = (B234 - A) / (A - B2), (A - B3) / (A - B2)
    printed_unit = [1 + rhov - Rv, -(1 - Rv), -(rhov - Rv), -(-Rv)]
    dom = _dom()
    formulas = [Formula(f"co.cf.group_rates.G{a + 1}", "L5680–L5730", printed_G[a], G_dot[a], dom,
                        description=f"∂_tG(μ_{a + 1})") for a in range(3)]
    formulas += [Formula(f"co.cf.group_rates.margin_I{k + 1}", "L6010–L6260", printed_margin[k], margins[k], dom,
                         description=f"∂_t(y_iF_i), i ∈ I_{k + 1}") for k in range(4)]
    formulas += [Formula(f"co.cf.group_rates.unit_I{k + 1}", "L6262–L6330", printed_unit[k],
                         margins[k] / (U / n * (A - B2)), dom,
                         description=f"∂_t(y_iF_i)/((U/n)(A − B₂)), i ∈ I_{k + 1}") for k in range(4)]
    return Item("co.cf.group_rates", "Lemmas F.5, F.6, Thm F.8 (proofs)", "", "the leading group rates",
                formulas=formulas,
                notes=["exact on the uniform-attention manifold once the m₁N term of Ġ = (UI + m₁N)r is dropped; the "
                       "printed o(1)·Σg slack is measured along trajectories (part 2)"])


def quadratic_coefficients() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(a, b, c) of (15) after substituting the exact unit rates: collected in R."""
    unit = [1 + rho - R, -(1 - R), -(rho - R), R]  # ∂_t(y_iF_i) in units of (U/n)(A − B₂)
    dot = [P * u for P, u in zip((P1, P2, P3, P4), unit, strict=True)]  # Σ_{I_k} ġ_i in those units
    inequality = sp.expand(dot[1] + dot[2] + dot[3] + R * dot[1] - (1 + R) * dot[0])
    poly = sp.Poly(inequality, R)
    return tuple(poly.coeff_monomial(R**k) for k in (2, 1, 0))


def item_eq16_quadratic() -> Item:
    """co.cf.eq16_quadratic — Lemma F.6 proof (L6262–L6491): (16) and aR² + bR + c >= 0 with the printed a, b, c
    (ρ = 1 ± ε read as ρ = 1 + ε, o(1) = 0). Derived: (15) with the exact unit rates collected in R
    (``co.dv.quadratic_exact``): a = P₁ + P₂, b = P₃ + P₄ − ρP₁, c = −P₂ − ρP₃ − (1 + ρ)P₁. The printed b = P₃ + P₄ − P₁
    drops the ∓εP₁ that c carries."""
    a, b, c = quadratic_coefficients()
    at = {rho: 1 + eps}
    dom = Domain({P1: Interval(-2, -0.01), P2: Interval(-2, -0.01), P3: Interval(-2, -0.01),
                  P4: Interval(-2, -0.01), eps: Interval(-0.2, 0.2), R: Interval(1, 3)})
    lhs16 = (1 + R) * P2 * (R - 1) + P3 * (R - rho) + P4 * R
    rhs16 = (1 + R) * P1 * (1 + rho - R)
    return Item("co.cf.eq16_quadratic", "Lemma F.6 proof (L6262–L6491)", "", "the quadratic in R", formulas=[
        Formula("co.cf.eq16_quadratic.eq16", "(16)", (lhs16 - rhs16).subs(at), (a * R**2 + b * R + c).subs(at), dom,
                description="(16)'s left − right (o(1) = 0) against aR² + bR + c"),
        Formula("co.cf.eq16_quadratic.a", "L6388–L6410", P1 + P2, a.subs(at), dom, description="a"),
        Formula("co.cf.eq16_quadratic.b", "L6388–L6410", P3 + P4 - P1, b.subs(at), dom, description="b"),
        Formula("co.cf.eq16_quadratic.c", "L6388–L6410", -P2 - (1 + eps) * P3 - (2 + eps) * P1, c.subs(at), dom,
                description="c (the printed 1 ± ε, 2 ± ε read with ρ = 1 + ε)"),
    ], notes=["b = P₃ + P₄ − ρP₁ exactly; the printed b is its value at ρ = 1, while c keeps ρ = 1 ± ε"])


def item_quadratic_exact() -> Item:
    """co.dv.quadratic_exact — the exact Lemma F.6 quadratic (spec §5): a = P₁ + P₂, b = P₃ + P₄ − ρP₁,
    c = −P₂ − ρP₃ − (1 + ρ)P₁ (module docstring). With g' < 0 every P_k < 0, so a < 0: (15) holds between the roots,
    Ṙ >= 0 below the larger root R* and <= 0 above it (contractive), and R* = (−b − √(b² − 4ac))/(2a), which is the
    printed −b/(2a) + √(b²/(4a²) − c/a) (L6478–L6490). At the long-time limit (P_k ∝ −ν_k with the max-margin duals
    ν = (7, 5, 5, 0) of ``co.dv.maxmargin_limit``, ρ = 1): 6R² − R − 12 = 0, R* = 3/2 — the limit of R that the
    max-margin separator gives independently."""
    a, b, c = quadratic_coefficients()
    larger = (-b - sp.sqrt(b**2 - 4 * a * c)) / (2 * a)
    printed = -b / (2 * a) + sp.sqrt(b**2 / (4 * a**2) - c / a)
    dom = Domain({P1: Interval(-2, -0.01), P2: Interval(-2, -0.01), P3: Interval(-2, -0.01),
                  P4: Interval(-2, -0.01), rho: Interval(0.8, 1.2)})
    s = sp.Symbol("s", positive=True)
    duals = {P1: -7 * s, P2: -5 * s, P3: -5 * s, P4: sp.S.Zero, rho: sp.S.One}
    return Item("co.dv.quadratic_exact", "derived (Lemma F.6)", "", "the exact quadratic and its root", formulas=[
        Formula("co.dv.quadratic_exact.root", "L6478–L6490", printed, larger, dom,
                description="R* as printed against the larger root of aR² + bR + c (a < 0)"),
        Formula("co.dv.quadratic_exact.at_duals", "derived", sp.Rational(3, 2), sp.simplify(larger.subs(duals)),
                Domain({s: Interval(0.01, 10)}),
                description="R* at P_k ∝ −ν_k (max-margin duals 7:5:5:0), ρ = 1, against R → 3/2 of "
                            "co.dv.maxmargin_limit"),
    ])
