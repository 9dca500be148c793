"""The function C and the two Lyapunov arguments of the induction-head paper ([W] App. C.3; [F] App. C).

* ``ih.cf.C_properties`` — C(x) = x(1-x²)^{-3/2} (= φ), its derivatives, the properties used in the
  derivation of Eq. (17) and the steps of that chain, under both readings of the undefined γ(w*).
* ``ih.cf.lyapunov_uv`` — C.3.1 Part II: u = e^{-p}, v_G = ug* + (g* - g), G = ½(u² + v_G²); the
  (u, v_G) dynamics derived from the (p, g) gradient flow of L_G4, and the printed estimate chain.
* ``ih.cf.lyapunov_vh`` — C.3.2 Step II.2: G = ½((v - v*)² + (h - h*)²) along the Part II (v, h)
  flow, its identity chain, the estimates and the estimate chain.

Printed inequalities are registered on the region the paper states for them; regions are
parametrised as boxes (e.g. v = ϑ v*, ϑ ∈ (1/4, 1)) so that sampling needs no rejection.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.induction_head.four_gram import xi_definitions
from derivations.induction_head.ih_head import R_of_wstar as R_of
from derivations.induction_head.ih_head import r_of_w as r_of
from derivations.induction_head.ih_head import w_circ_printed as w_circ
from derivations.induction_head.symbols import (
    ALPHA,
    INV_SQRT2,
    W_RANGE,
    L,
    M_closed,
    alpha,
    domain,
    g,
    gstar,
    h,
    hstar,
    p,
    phi,
    psi,
    u,
    v,
    vstar,
    wstar,
    x,
)

R_ = sp.Rational
y = sp.Symbol("y", positive=True)  # second argument of C (a·x, or b in C(a+b))
beta = sp.Symbol("beta", positive=True)  # the β of the Eq. (17) derivation
theta = sp.Symbol("theta", positive=True)  # w² as a fraction of the end of Eq. (17)'s window
vG = sp.Symbol("vG", real=True)  # C.3.1's v := ug* + (g* - g)
G1 = sp.Symbol("G1", positive=True)  # G(u(t_1), v(t_1))
elapsed = sp.Symbol("elapsed", positive=True)  # t - t_1
lam = sp.Symbol("lam", positive=True)  # position of a mean-value point ξ inside its interval
vratio = sp.Symbol("vratio", positive=True)  # v / v*
hratio = sp.Symbol("hratio", positive=True)  # h / h*
t = sp.Symbol("t", real=True)

UNIT = Interval(0, 1)


def C(arg: sp.Expr) -> sp.Expr:
    """C(x) = (1 - x²)^{-3/2}·x (C.3.2 Part II; the same function as φ)."""
    return phi(arg)


# ---------------------------------------------------------------------------------------------
# ih.cf.C_properties
# ---------------------------------------------------------------------------------------------


#: the two readings of the undefined γ(w*) in the derivation of Eq. (17) (flag eq17_gamma)
GAMMA_READINGS = {"R": R_of(wstar), "linear": 1 + R_(4375, 100000) * wstar}


def item_C_properties() -> Item:
    """Build ih.cf.C_properties ([W] C.3.2 Part II; [F] C.2, Lemma D.6): C′, C″, φ′, ψ′, Eq. (17) chain."""
    dx = domain(x)
    c_prime = 3 * (1 - x**2) ** R_(-5, 2) * x**2 + (1 - x**2) ** R_(-3, 2)
    c_second = (
        15 * x**3 * (1 - x**2) ** R_(-7, 2)
        + 6 * x * (1 - x**2) ** R_(-5, 2)
        + 3 * x * (1 - x**2) ** R_(-5, 2)
    )
    formulas = [
        Formula(
            "ih.cf.C_properties.C_prime",
            "C.3.2 Part II",
            c_prime,
            sp.diff(C(x), x),
            dx,
            "C'(x) as printed vs d/dx of x(1-x²)^{-3/2}",
            label_alt="[F] C.2",
            latex=r"C'(x)=3(1-x^2)^{-\frac52}x^2+(1-x^2)^{-\frac32}",
        ),
        Formula(
            "ih.cf.C_properties.C_second",
            "C.3.2 Part II",
            c_second,
            sp.diff(C(x), x, 2),
            dx,
            "C''(x) as printed vs the second derivative",
            label_alt="[F] C.2",
            latex=r"C''(x)=15x^3(1-x^2)^{-\frac72}+6x(1-x^2)^{-\frac52}+3x(1-x^2)^{-\frac52}",
        ),
        Formula(
            "ih.cf.C_properties.phi_prime",
            "C.3.2 Step II.2",
            (1 + 2 * x**2) / (1 - x**2) ** R_(5, 2),
            sp.diff(phi(x), x),
            dx,
            "φ'(ξ) = (1+2ξ²)/(1-ξ²)^{5/2} vs d/dξ of ξ(1-ξ²)^{-3/2}",
            label_alt="[F] C.2 Step II.2",
        ),
        Formula(
            "ih.cf.C_properties.psi_prime",
            "C.3.2 Step II.2",
            x / (1 - x**2) ** R_(3, 2),
            sp.diff(psi(x), x),
            dx,
            "ψ'(ξ) = ξ/(1-ξ²)^{3/2} vs d/dξ of (1-ξ²)^{-1/2}",
            label_alt="[F] C.2 Step II.2",
        ),
    ]
    pair = Domain({x: UNIT, y: UNIT}, {}, (Constraint(x < y, "y = a·x with a > 1"),))
    sub_unit = Domain(
        {x: Interval(0, 1, lo_open=False), y: Interval(0, 1, lo_open=False)},
        {},
        (Constraint(x + y < 1, "a + b < 1 keeps C(a + b) finite"),),
    )
    inequalities = [
        RegionInequality(
            "ih.cf.C_properties.C_prime_gt_1",
            "C.3.2 Part II",
            sp.Integer(1),
            c_prime,
            dx,
            strict=True,
            description="C'(x) > 1 for 0 < x < 1 (printed form of C')",
        ),
        RegionInequality(
            "ih.cf.C_properties.C_second_pos",
            "C.3.2 Part II",
            sp.Integer(0),
            c_second,
            dx,
            strict=True,
            description="C''(x) > 0 for 0 < x < 1 (printed form of C'')",
        ),
        RegionInequality(
            "ih.cf.C_properties.C_ge_x", "C.3.2 Part II", x, C(x), dx, description="C(x) ≥ x on (0, 1)"
        ),
        RegionInequality(
            "ih.cf.C_properties.C_scaling",
            "C.3.2 Part II '(C(ax) ≥ aC(x), for a > 1)'",
            y / x * C(x),
            C(y),
            pair,
            description="C(ax) ≥ aC(x) for a > 1, 0 < ax < 1, written with y = ax: 0 < x < y < 1",
        ),
        RegionInequality(
            "ih.cf.C_properties.C_superadditive",
            "C.3.2 Part II '(Lemma 10)' step",
            C(x) + C(y),
            C(x + y),
            sub_unit,
            description="stand-in for the cut-off Lemma 10: C(a+b) ≥ C(a) + C(b) for a, b ≥ 0, "
            "a + b < 1 (here a = x, b = y)",
        ),
    ]
    for reading, gamma in GAMMA_READINGS.items():
        inequalities += _eq17_chain(reading, gamma)
    notes = [
        "Lemma 10 (weighted Karamata) is cut off in [W] before its inequality and lost in [F]; the step it "
        "justifies is tested as superadditivity of C (C convex with C(0) = 0).",
        "The Eq. (17) chain is sampled over w* ∈ (0, 1/√2), β ∈ (0, 20) (the printed 'some β > 0', truncated "
        "for sampling) and w² = ϑ·w*²/(2γ+β-1), ϑ ∈ (0, 1], the printed window 'before w² increases to "
        "w*²/(2γ(w*)+β-1)'.",
    ]
    return Item(
        "ih.cf.C_properties",
        "[W] C.3.2 Part II",
        "[F] C.2; Lemma D.6",
        "the function C, φ′, ψ′",
        formulas,
        inequalities,
        notes,
    )


def _eq17_chain(reading: str, gamma: sp.Expr) -> list[RegionInequality]:
    """Register the three steps of the C-chain before Eq. (17), and the dw/dt bound it feeds, for one γ."""
    w2 = theta * wstar**2 / (2 * gamma + beta - 1)
    dom = Domain({wstar: W_RANGE, beta: Interval(0, 20), theta: Interval(0, 1, hi_open=False)})
    region = (
        f"γ(w*) = {'R(w*)' if reading == 'R' else '1 + 0.04375w*'}; w* ∈ (0, 1/√2), β ∈ (0, 20), "
        "w² = ϑw*²/(2γ+β-1) with ϑ ∈ (0, 1] (the printed window)"
    )
    steps = {
        "step1": (C((2 * gamma + beta) * w2), C(w2 + wstar**2), "C(w²+w*²) ≥ C((2γ+β)w²)"),
        "step2": (
            C(2 * gamma * w2) + C(beta * w2),
            C((2 * gamma + beta) * w2),
            "C((2γ+β)w²) ≥ C(2γw²) + C(βw²) ('Lemma 10')",
        ),
        "step3": (
            gamma * C(2 * w2) + beta * w2,
            C(2 * gamma * w2) + C(beta * w2),
            "C(2γw²) + C(βw²) ≥ γC(2w²) + βw² ('C(ax) ≥ aC(x), a > 1')",
        ),
        "dw_bound": (
            beta / (gamma + beta) * wstar**2,
            C(w2 + wstar**2) - gamma * C(2 * w2),
            "C(w²+w*²) - γC(2w²) ≥ βw*²/(γ+β) (the second dw/dt line before Eq. (17))",
        ),
    }
    return [
        RegionInequality(
            f"ih.cf.C_properties.eq17_{name}.gamma_{reading}",
            "C.3.2 derivation of Eq. (17)",
            lhs,
            rhs,
            dom,
            description=f"{words}; {region}",
            reading={"eq17_gamma": reading},
        )
        for name, (lhs, rhs, words) in steps.items()
    ]


# ---------------------------------------------------------------------------------------------
# ih.cf.lyapunov_uv
# ---------------------------------------------------------------------------------------------


def uv_flow_derived(length: sp.Expr = L, alpha_: sp.Expr = alpha) -> tuple[sp.Expr, sp.Expr]:
    """(du/dt, dv_G/dt) as functions of (u, g) from dp/dt = -∂L_G4/∂p, dg/dt = -∂L_G4/∂g.

    L_G4 = ½g*² + ½g²M(2p)/M(p)² - g*g/M(p) (Eq. (7), canonical range; its derivatives carry
    m = -dM/dp). Then du/dt = -u dp/dt and dv_G/dt = g* du/dt - dg/dt.
    """
    gs = alpha_ / (1 + alpha_)
    loss = (
        gs**2 / 2
        + g**2 * M_closed(2 * p, length) / M_closed(p, length) ** 2 / 2
        - gs * g / M_closed(p, length)
    )
    dp = -sp.diff(loss, p)
    dg = -sp.diff(loss, g)
    du = (-sp.exp(-p) * dp).subs(p, -sp.log(u))
    dv = gs * du - dg.subs(p, -sp.log(u))
    return du, dv


def uv_flow_printed(
    xi: dict[str, sp.Expr], vv: sp.Expr, length: sp.Expr = L, alpha_: sp.Expr = alpha
) -> tuple[sp.Expr, sp.Expr]:
    """Return the printed (du/dt, dv/dt) of C.3.1 Part II with the given ξ_i and v."""
    gs = alpha_ / (1 + alpha_)
    bracket = (vv - u ** (length - 2) * g) / (1 + u) + g * u * (1 + xi["xi4"]) / (
        (1 + u) ** 2 * (1 + xi["xi5"])
    )
    du = -(1 + xi["xi1"]) * u**2 * g / (1 + xi["xi2"]) * bracket
    dv = -(1 + xi["xi1"]) * u**2 * g * gs / (1 + xi["xi2"]) * bracket - (1 + xi["xi3"]) / (1 - u**2) * (
        vv - u ** (length - 2) * g
    )
    return du, dv


def uv_step1_printed(
    xi: dict[str, sp.Expr], vv: sp.Expr, length: sp.Expr = L, alpha_: sp.Expr = alpha
) -> sp.Expr:
    """Return the expanded right-hand side of 'dG/(2dt) = u du/dt + v dv/dt = …' as printed."""
    gs = alpha_ / (1 + alpha_)
    bracket = (vv - u ** (length - 2) * g) / (1 + u) + g * u * (1 + xi["xi4"]) / (
        (1 + u) ** 2 * (1 + xi["xi5"])
    )
    return (
        -(u**3) * g * (1 + xi["xi1"]) / (1 + xi["xi2"]) * bracket
        - (1 + xi["xi1"]) * u**2 * vv * g * gs / (1 + xi["xi2"]) * bracket
        - (1 + xi["xi3"]) / (1 - u**2) * (vv - u ** (length - 2) * g) * vv
    )


def uv_chain(length: int, alpha_value: sp.Expr) -> dict[str, sp.Expr]:
    """Right-hand sides of the printed estimate chain (steps 2-7) at concrete L and α*, in (u, v_G, g)."""
    gs = alpha_value / (1 + alpha_value)
    a = sp.Abs
    d = lambda s: R_(s)  # noqa: E731  (decimal constants exactly as printed)
    return {
        "B2": (
            d("1.001") * g / (1 + u) * a(u**3 * vG)
            + d("1.0001") * g**2 / (1 + u) * u ** (length + 1)
            - d("0.999") * g**2 / (1 + u**2) * u**4
            - d("0.999") * g * gs / (1 + u) * u**2 * vG**2
            + d("1.001") * g**2 * gs / (1 + u) * a(u**length * vG)
            + d("1.001") * g**2 * gs / (1 + u**2) * a(u**3 * vG)
            - d("0.999") / (1 - u**2) * vG**2
            + d("1.001") * g / (1 - u**2) * a(u ** (length - 2) * vG)
        ),
        "B3a": (
            d("1.002") * g / (1 + u) * a(u**3 * vG)
            - d("0.99") * g**2 / (1 + u) ** 2 * u**4
            - d("0.999") * g * gs / (1 + u) * u**2 * vG**2
            + d("1.005") * g**2 * gs / (1 + u) ** 2 * a(u**3 * vG)
            - d("0.999") / (1 - u**2) * vG**2
        ),
        "B3b": (
            -d("0.99") * g**2 / (1 + u) ** 2 * u**4
            - d("0.99") * g * gs / (1 + u) * u**2 * vG**2
            - d("0.99") / (1 - u**2) * vG**2
            + d("1.01") * (g / (1 + u) + g**2 * gs / (1 + u) ** 2) * a(u**3 * vG)
        ),
        "aux1_lhs": g**2 * gs / (1 + u) ** 2 * a(u**3 * vG),
        "aux1_rhs": (
            d("1.98") / d("1.01") * g * gs / (1 + u) * u**2 * vG**2
            + d("1.01") / d("1.98") * g**3 * gs / (1 + u) ** 3 * u**4
        )
        / 2,
        "aux2_lhs": g / (1 + u) * a(u**3 * vG),
        "aux2_rhs": (
            d("0.99") / d("1.01") * (1 + u) * vG**2 + d("1.01") / d("0.99") * g**2 / (1 + u) ** 3 * u**6
        )
        / 2,
        "B5": (
            -d("0.99") * g**2 / (1 + u) ** 2 * u**4
            + d("1.01") / d("3.96") * g**3 * gs / (1 + u) ** 3 * u**4
            + d("1.01") / d("1.98") * g**2 / (1 + u) ** 3 * u**6
            - d("1.98") / 5 * vG**2
        ),
        "step6_lhs": g**3 * gs / (4 * (1 + u) ** 3) + g**2 * u**2 / (2 * (1 + u) ** 3),
        "step6_mid": g**2 / (1 + u) ** 2 * (gs**2 / (2 * (1 + u)) + u**2 / (2 * (1 + u))),
        "step6_rhs": g**2 / (1 + u) ** 2 * (R_(1, 2) + R_(1, 4)),
        "B7a": -d("0.22") * g**2 / (1 + u) ** 2 * u**4 - R_(2, 5) * vG**2,
        "B7b": -d("0.99") / 16 * gs**2 * u**4 - d("1.98") / 5 * vG**2,
        "B7c": -(gs**2) / 65 * ((u**2 + vG**2) / 2) ** 2,
    }


def item_lyapunov_uv(length: int = 40, alphas: tuple = (1, 4), u_max: float | None = None) -> Item:
    """ih.cf.lyapunov_uv ([W] C.3.1 Part II; [F] C.1 Part II): the (u, v_G) dynamics and the G(u, v) chain.

    Parameters
    ----------
    length, alphas
        The fixed L and α* values at which the printed chain is sampled.
    u_max
        Upper end of u on the chain's region. Default 10^{-4/(L-5)}: the printed premise of step 3,
        u^{L-5} = e^{-p(L-5)} < 0.0001 (the paper's other bound, u < e^{-p(T_1^g)}, has no value).
    """
    u_max = float(10 ** (-4 / (length - 5))) if u_max is None else float(u_max)
    vG_of = u * gstar + gstar - g
    du_der, dv_der = uv_flow_derived()
    phase = (Constraint(g > gstar, "t > T_1^g: g* < g"), Constraint(g < 2 * gstar, "t > T_1^g: g < 2g*"))
    dom = domain(L, u, g, alpha, constraints=phase, g=Interval(0, 2))
    formulas = []
    for name, xi in xi_definitions().items():
        du_pr, dv_pr = uv_flow_printed(xi, vG_of)
        rd = {"head1_range": "canonical", "xi_definition": name}
        formulas += [
            Formula(
                f"ih.cf.lyapunov_uv.du.xi_{name}",
                "C.3.1 Part II (u, v) dynamics",
                du_pr,
                du_der,
                dom,
                f"printed du/dt (ξ {name.replace('_', ' ')}, v = ug* + g* - g) vs -u·dp/dt from L_G4",
                label_alt="[F] C.1 Part II",
                reading=rd,
            ),
            Formula(
                f"ih.cf.lyapunov_uv.dv.xi_{name}",
                "C.3.1 Part II (u, v) dynamics",
                dv_pr,
                dv_der,
                dom,
                f"printed dv/dt (ξ {name.replace('_', ' ')}) vs g*·du/dt - dg/dt from L_G4",
                label_alt="[F] C.1 Part II",
                reading=rd,
            ),
            Formula(
                f"ih.cf.lyapunov_uv.step1_expanded.xi_{name}",
                "C.3.1 Part II 'dG/(2dt) = u du/dt + v dv/dt = …'",
                uv_step1_printed(xi, vG_of),
                u * du_der + vG_of * dv_der,
                dom,
                f"printed expansion (ξ {name.replace('_', ' ')}) vs u·du/dt + v·dv/dt (exact)",
                label_alt="[F] C.1 Part II",
                reading=rd,
            ),
        ]
    U, V = sp.Function("u")(t), sp.Function("v")(t)
    dG_dt = sp.diff((U**2 + V**2) / 2, t).subs({sp.Derivative(U, t): du_der, sp.Derivative(V, t): dv_der})
    dG_dt = dG_dt.subs({U: u, V: vG_of})
    formulas.append(
        Formula(
            "ih.cf.lyapunov_uv.step1_half",
            "C.3.1 Part II 'dG/(2dt) = u du/dt + v dv/dt'",
            2 * (u * du_der + vG_of * dv_der),
            dG_dt,
            dom,
            "dG/dt implied by the printed 'dG/(2dt) = u du/dt + v dv/dt' (twice the right-hand side) "
            "vs dG/dt "
            "of G = ½(u² + v²) by the chain rule",
            label_alt="[F] C.1 Part II",
        )
    )
    formulas.append(_uv_step8_formula())
    inequalities = []
    for alpha_value in alphas:
        inequalities += _uv_chain_inequalities(length, sp.Integer(alpha_value), u_max)
    inequalities += [
        RegionInequality(
            "ih.cf.lyapunov_uv.step4_aux3",
            "C.3.1 Part II step 4",
            -1 / (1 - u**2) + (1 + u) / 2,
            -R_(2, 5),
            domain(u),
            strict=True,
            description="-1/(1-u²) + ½(1+u) < -2/5 over u ∈ (0, 1)",
        ),
        RegionInequality(
            "ih.cf.lyapunov_uv.step6_premise",
            "C.3.1 Part II step 6",
            u**2 / (1 + u),
            R_(1, 2),
            Domain({u: Interval(0, 1, lo_open=False, hi_open=False)}),
            description="u²/(1+u) ≤ ½ for 0 ≤ u ≤ 1",
        ),
        _uv_step8_inequality(),
    ]
    notes = [
        f"The chain (steps 2-7) is sampled at L = {length}, α* ∈ {tuple(alphas)}, over g* < g < 2g*, "
        f"0 < u < u_max = {u_max:.6g} (u^(L-5) < 0.0001, the premise of step 3), v_G ∈ [-1, 1] with v_G "
        "independent of (u, g) as in the printed region (on trajectories v_G = ug* + g* - g).",
        "Step 2's left-hand side is the printed step-1 expansion with ξ under each definition; under "
        "'implied' it equals the exact u du/dt + v dv/dt (= dG/dt, not dG/(2dt)).",
        "Step 5 is registered as the chain link 'step 3's right-hand side ≤ step 5's right-hand side'; the "
        "paper bounds dG/(2dt) through step 3 and writes dG/dt from step 5 on (see step1_half).",
        "The ξ bound |ξ_i| ≤ 0.0001 used by step 2 belongs to ih.cf.xi and is not re-checked here.",
    ]
    return Item(
        "ih.cf.lyapunov_uv",
        "[W] C.3.1 Part II",
        "[F] C.1 Part II",
        "Lyapunov function G(u, v) of the 4-gram head",
        formulas,
        inequalities,
        notes,
    )


def _uv_chain_inequalities(length: int, alpha_value: sp.Integer, u_max: float) -> list[RegionInequality]:
    gs = alpha_value / (1 + alpha_value)
    chain = uv_chain(length, alpha_value)
    dom = Domain(
        {
            u: Interval(0, u_max),
            vG: Interval(-1, 1, lo_open=False, hi_open=False),
            g: Interval(float(gs), float(2 * gs)),
        }
    )
    region = f"L = {length}, α* = {alpha_value}: g* < g < 2g*, 0 < u < {u_max:.6g}, v_G ∈ [-1, 1]"
    tag = f"alpha{alpha_value}"
    sub = {
        L: length,
        alpha: alpha_value,
    }
    steps = []
    for name, xi in xi_definitions(sp.Integer(length)).items():
        lhs = uv_step1_printed(
            {key: val.subs(sub) for key, val in xi.items()}, vG, sp.Integer(length), alpha_value
        )
        steps.append(
            (f"step2.xi_{name}", lhs, chain["B2"], f"step-1 expansion (ξ {name.replace('_', ' ')}) ≤ step 2")
        )
    steps += [
        ("step3a", chain["B2"], chain["B3a"], "step 2 ≤ step 3 (first line)"),
        ("step3b", chain["B3a"], chain["B3b"], "step 3 first line ≤ second line"),
        ("step4_aux1", chain["aux1_lhs"], chain["aux1_rhs"], "first auxiliary inequality of step 4"),
        ("step4_aux2", chain["aux2_lhs"], chain["aux2_rhs"], "second auxiliary inequality of step 4"),
        ("step5", chain["B3b"], chain["B5"], "step 3 second line ≤ step 5"),
        ("step6a", chain["step6_lhs"], chain["step6_mid"], "step 6 first ≤"),
        ("step6b", chain["step6_mid"], chain["step6_rhs"], "step 6 second ≤"),
        ("step7a", chain["B5"], chain["B7a"], "step 5 ≤ -0.22g²u⁴/(1+u)² - (2/5)v²"),
        ("step7b", chain["B7a"], chain["B7b"], "-0.22g²u⁴/(1+u)² - (2/5)v² ≤ -(0.99/16)g*²u⁴ - (1.98/5)v²"),
        ("step7c", chain["B7b"], chain["B7c"], "-(0.99/16)g*²u⁴ - (1.98/5)v² ≤ -g*²G(u,v)²/65"),
    ]
    out = [
        RegionInequality(
            f"ih.cf.lyapunov_uv.{name}.{tag}",
            "C.3.1 Part II estimate chain",
            lhs,
            rhs,
            dom,
            description=f"{words}; region {region}",
        )
        for name, lhs, rhs, words in steps
    ]
    # the conclusion on the trajectory manifold v_G = ug* + g* - g, with the exact dG/dt
    du_der, dv_der = uv_flow_derived(sp.Integer(length), alpha_value)
    vv = u * gs + gs - g
    dG = u * du_der + vv * dv_der
    dom2 = Domain({u: Interval(0, u_max), g: Interval(float(gs), float(2 * gs))})
    out.append(
        RegionInequality(
            f"ih.cf.lyapunov_uv.conclusion.{tag}",
            "C.3.1 Part II step 7 (end to end)",
            dG,
            -(gs**2) / 65 * ((u**2 + vv**2) / 2) ** 2,
            dom2,
            description=f"exact dG/dt (from the (p, g) flow, v_G = ug* + g* - g) ≤ -g*²G²/65; L = {length}, "
            f"α* = {alpha_value}, g* < g < 2g*, 0 < u < {u_max:.6g}",
        )
    )
    return out


def _uv_step8_solution() -> sp.Expr:
    """Solve dG/dt = -(g*²/65)G² with G(t_1) = G1 (SymPy dsolve), as a function of t - t_1."""
    Gf = sp.Function("G")
    rate = gstar**2 / 65
    solution = sp.dsolve(
        sp.Eq(Gf(elapsed).diff(elapsed), -rate * Gf(elapsed) ** 2), Gf(elapsed), ics={Gf(0): G1}
    )
    return sp.simplify(solution.rhs)


def _uv_step8_printed() -> sp.Expr:
    return 1 / (G1 + gstar**2 / 64 * elapsed)


def _uv_step8_domain() -> Domain:
    return Domain({G1: Interval(0, 1), elapsed: Interval(0, 1e6), alpha: ALPHA})


def _uv_step8_formula() -> Formula:
    return Formula(
        "ih.cf.lyapunov_uv.step8",
        "C.3.1 Part II step 8",
        _uv_step8_printed(),
        _uv_step8_solution(),
        _uv_step8_domain(),
        "printed G(t) ≤ 1/(G(t_1) + g*²(t-t_1)/64) vs the solution 1/(1/G(t_1) + g*²(t-t_1)/65) of "
        "dG/dt = -g*²G²/65 (the comparison bound step 7 yields); G(t_1) ∈ (0, 1), t - t_1 ∈ (0, 10⁶)",
        label_alt="[F] C.1 Part II",
        latex=r"G(u(t),v(t))\leqslant\frac{1}{G(u(t_1),v(t_1))+\frac{g^{\star2}}{64}(t-t_1)}",
    )


def _uv_step8_inequality() -> RegionInequality:
    return RegionInequality(
        "ih.cf.lyapunov_uv.step7_implies_step8",
        "C.3.1 Part II step 8",
        _uv_step8_solution(),
        _uv_step8_printed(),
        _uv_step8_domain(),
        description="step 7 implies step 8 only if the comparison solution 1/(1/G(t_1) + g*²(t-t_1)/65) is ≤ "
        "the printed bound for all G(t_1) ∈ (0, 1) (G = ½(u²+v²) < 1 on the region), "
        "t - t_1 ∈ (0, 10⁶), α* ∈ (0, 20)",
    )


# ---------------------------------------------------------------------------------------------
# ih.cf.lyapunov_vh
# ---------------------------------------------------------------------------------------------


def vh_flow(vv: sp.Expr = v, hh: sp.Expr = h, length: sp.Expr = L) -> tuple[sp.Expr, sp.Expr]:
    """Return the Part II (v, h) flow of C.3.2, as printed (paper mode)."""
    dv = 4 * vv * hh / (length - 2) * (hstar * phi(vv + vstar) - hh * phi(2 * vv))
    dh = (hstar * psi(vv + vstar) - hh * psi(2 * vv)) / (length - 2)
    return dv, dh


def vh_identity_lines(vv: sp.Expr = v, hh: sp.Expr = h, length: sp.Expr = L) -> dict[str, sp.Expr]:
    """Return the members of the printed identity chain for (L-2)dG/dt."""
    dv, dh = vh_flow(vv, hh, length)
    pp, p2, sp_, s2 = phi(vv + vstar), phi(2 * vv), psi(vv + vstar), psi(2 * vv)
    return {
        "line0": (vv - vstar) * dv + (hh - hstar) * dh,
        "line1": 4 * vv * hh * (vv - vstar) * (hstar * pp - hh * p2) + (hh - hstar) * (hstar * sp_ - hh * s2),
        "line2": (
            4 * vv * hh * (vv - vstar) * (pp * (hstar - hh) - hh * (pp - p2))
            + (hh - hstar) * ((hstar - hh) * sp_ + hh * (sp_ - s2))
        ),
        "line3": (
            -4 * vv * hh**2 * (vstar - vv) * (pp - p2)
            - sp_ * (hh - hstar) ** 2
            + 4 * vv * hh * pp * (vv - vstar) * (hstar - hh)
            + hh * (hh - hstar) * (sp_ - s2)
        ),
    }


def vh_dG_derived(vv: sp.Expr = v, hh: sp.Expr = h, length: sp.Expr = L) -> sp.Expr:
    """(L-2)·dG/dt for G = ½((v-v*)² + (h-h*)²) along the Part II flow, by the chain rule."""
    V, H = sp.Function("v")(t), sp.Function("h")(t)
    dv, dh = vh_flow(vv, hh, length)
    dG = sp.diff(((V - vstar) ** 2 + (H - hstar) ** 2) / 2, t)
    dG = dG.subs({sp.Derivative(V, t): dv, sp.Derivative(H, t): dh}).subs({V: vv, H: hh})
    return (length - 2) * dG


def vh_estimate_chain(vv: sp.Expr = v, hh: sp.Expr = h) -> dict[str, sp.Expr]:
    """Return the right-hand sides of the printed estimate chain for (L-2)dG/dt."""
    d = R_
    X2, Y = (vv - vstar) ** 2, hh - hstar
    return {
        "S1": (
            -4 / d("1.02") * vstar * hstar**2 * X2
            - Y**2
            + d("4.08") * vstar * hstar * (vv - vstar) * (hstar - hh)
            + d("1.3") * d("1.02") * vstar * hstar * (vstar - vv) * Y
        ),
        "S2": -4 / d("1.02") * vstar * hstar**2 * X2 - Y**2 + d("5.41") * vstar * hstar * (vstar - vv) * Y,
        "S3": (
            -d("3.92") * vstar * hstar**2 * X2
            - Y**2
            + (d("9.6") * vstar**2 * hstar**2 * X2 + R_(3, 4) * Y**2)
        ),
        "S4": -(d("3.92") - d("9.6") * d("0.3")) * vstar * hstar**2 * X2 - d("0.25") * Y**2,
        "S5": -R_(1, 4) * vstar * hstar**2 * (X2 + Y**2) / 2,
    }


VH_REGION = (
    "v*/4 < v < v*, h* < h < 1.02h*, 0 < v* ≤ 0.3, α* ∈ (0, 20) "
    "(sampled as v = ϑ_v v*, ϑ_v ∈ (1/4, 1), h = ϑ_h h*, ϑ_h ∈ (1, 1.02))"
)


def _vh_region() -> Domain:
    return Domain(
        {
            vstar: Interval(0, 0.3, hi_open=False),
            alpha: ALPHA,
            vratio: Interval(0.25, 1),
            hratio: Interval(1, 1.02),
        }
    )


def item_lyapunov_vh() -> Item:
    """Build ih.cf.lyapunov_vh ([W] C.3.2 Step II.2; [F] C.2 Step II.2): identities, estimates, chain."""
    dom = domain(L, v, h, vstar, alpha)
    derived = vh_dG_derived()
    words = {
        "line0": "(v-v*)dv/dt + (h-h*)dh/dt (flow with its 1/(L-2))",
        "line1": "4vh(v-v*)(h*φ(v+v*) - hφ(2v)) + (h-h*)(h*ψ(v+v*) - hψ(2v))",
        "line2": "4vh(v-v*)(φ(v+v*)(h*-h) - h(φ(v+v*)-φ(2v))) + (h-h*)((h*-h)ψ(v+v*) + h(ψ(v+v*)-ψ(2v)))",
        "line3": "-4vh²(v*-v)(φ(v+v*)-φ(2v)) - ψ(v+v*)(h-h*)² + 4vhφ(v+v*)(v-v*)(h*-h) "
        "+ h(h-h*)(ψ(v+v*)-ψ(2v))",
    }
    formulas = [
        Formula(
            f"ih.cf.lyapunov_vh.identity_{name}",
            "C.3.2 Step II.2 'It is easy to verify that'",
            expr,
            derived,
            dom,
            f"{words[name]} vs (L-2)dG/dt along the Part II (v, h) flow",
            label_alt="[F] C.2 Step II.2",
            reading={"flow": "paper"},
        )
        for name, expr in vh_identity_lines().items()
    ]
    vv, hh = vratio * vstar, hratio * hstar
    region = _vh_region()
    chain = vh_estimate_chain(vv, hh)
    formulas.append(
        Formula(
            "ih.cf.lyapunov_vh.estimate_eq",
            "C.3.2 Step II.2 estimate chain ('=')",
            chain["S2"],
            chain["S1"],
            region,
            "second line (coefficient 5.41) vs the first line it is printed equal to "
            "(4.08 + 1.3·1.02 = 5.406); "
            "derived side is the printed first line",
            label_alt="[F] C.2 Step II.2",
        )
    )
    exact = vh_identity_lines(vv, hh)["line3"]
    xi_range = 2 * vv + lam * (vstar - vv)
    xi_dom = Domain({**region.intervals, lam: UNIT})
    est = [
        ("est_phi_diff", vstar - vv, phi(vv + vstar) - phi(2 * vv), region, "φ(v+v*) - φ(2v) ≥ v* - v"),
        (
            "est_phi_diff_xi",
            sp.Integer(1),
            (1 + 2 * xi_range**2) / (1 - xi_range**2) ** R_(5, 2),
            xi_dom,
            "φ'(ξ) = (1+2ξ²)/(1-ξ²)^{5/2} ≥ 1 at every ξ ∈ (2v, v+v*)",
        ),
        ("est_phi_upper1", phi(vv + vstar), phi(2 * vstar), region, "φ(v+v*) ≤ φ(2v*)"),
        ("est_phi_upper2", phi(2 * vstar), sp.Integer(1), region, "φ(2v*) ≤ 1"),
        ("est_psi_lower", sp.Integer(1), psi(vv + vstar), region, "ψ(v+v*) ≥ 1"),
        (
            "est_psi_diff",
            psi(vv + vstar) - psi(2 * vv),
            R_("1.3") * vstar * (vstar - vv),
            region,
            "ψ(v+v*) - ψ(2v) ≤ 1.3v*(v*-v)",
        ),
        (
            "est_psi_diff_xi",
            xi_range / (1 - xi_range**2) ** R_(3, 2),
            R_("1.3") * vstar,
            xi_dom,
            "ψ'(ξ) = ξ/(1-ξ²)^{3/2} ≤ 1.3v* at every ξ ∈ (2v, v+v*)",
        ),
        ("chain1", exact, chain["S1"], region, "(L-2)dG/dt ≤ first line of the estimate chain"),
        ("chain2", chain["S1"], chain["S2"], region, "first line ≤ second line (printed '=')"),
        ("chain3", chain["S2"], chain["S3"], region, "second line ≤ third line"),
        (
            "chain4",
            chain["S3"],
            chain["S4"],
            region,
            "third line ≤ -(3.92-9.6·0.3)v*h*²(v-v*)² - 0.25(h-h*)²",
        ),
        ("chain5", chain["S4"], chain["S5"], region, "fourth line ≤ -¼v*h*²G(v,h)"),
        ("final", exact, chain["S5"], region, "(L-2)dG/dt ≤ -¼v*h*²G(v,h)"),
    ]
    inequalities = [
        RegionInequality(
            f"ih.cf.lyapunov_vh.{name}",
            "C.3.2 Step II.2",
            lhs,
            rhs,
            d_,
            description=f"{words_}; region {VH_REGION}"
            + (", ξ = 2v + λ(v*-v), λ ∈ (0, 1)" if d_ is xi_dom else ""),
        )
        for name, lhs, rhs, d_, words_ in est
    ]
    h_R = hstar * (1 + lam * (R_of(sp.sqrt(vstar)) - 1))
    exact_R = vh_identity_lines(vv, h_R)["line3"]
    inequalities.append(
        RegionInequality(
            "ih.cf.lyapunov_vh.final_R_region",
            "C.3.2 Step II.2",
            exact_R,
            vh_estimate_chain(vv, h_R)["S5"],
            Domain(
                {vstar: Interval(0, 0.3, hi_open=False), alpha: ALPHA, vratio: Interval(0.25, 1), lam: UNIT}
            ),
            description="(L-2)dG/dt ≤ -¼v*h*²G with the upper bound 1.02h* replaced by R(w*)h* (ih.cf.R): "
            "v*/4 < v < v*, h* < h < R(√v*)h*, 0 < v* ≤ 0.3, α* ∈ (0, 20)",
        )
    )
    notes = [
        "The identity chain uses the printed Part II (v, h) flow (flow = paper); its agreement with the loss "
        "Eq. (10) belongs to ih.cf.flow_wh.",
        "The balanced and softmax_largeL flow modes are not encoded here.",
        f"Square-root bound 1/√2 = {INV_SQRT2:.6f} never binds: v + v* < 0.6 on the region.",
    ]
    return Item(
        "ih.cf.lyapunov_vh",
        "[W] C.3.2 Step II.2",
        "[F] C.2 Step II.2",
        "Lyapunov function G(v, h) of the IH head",
        formulas,
        inequalities,
        notes,
    )
