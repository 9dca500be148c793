r"""Theorem 4's scalar surrogate (App. D, Eqns 116–127): z_l, ξ_n, B_n and Γ in closed form.

Definitions (spec §3.4, §4.8): ż = −c η_Z γ(t) e^{4z}, z(0) = 0, with c = Kρ₀^{−4} as printed (Eqn 116);
ξ_n = c γ(t) e^{4z} (Eqn 117); B_n(t) = η_Z ∫₀ᵗ ξ_n; Γ(t) = η_Z ∫₀ᵗ γ. γ is left an arbitrary positive
function where the paper says "regardless of the specific form of γ(t)": it enters through its primitive
P(t) = ∫₀ᵗ γ (P(0) = 0, P' = γ), so Γ = η_Z P. The ODE is solved by ``dsolve``; B and Γ by ``integrate``
after the change of variables the definitions allow (dΓ = η_Z γ dt; dt = K((M−1)+e^{Mh})dh/η_Y along
Eqn 44 with h = h(t/K)).
"""

from __future__ import annotations

import functools

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.scan_snap import scalar as S
from derivations.scan_snap.symbols import Gamma, K, M, etaY, etaZ, h, rho0, t

_P = sp.Function("P")  # the primitive of γ, P(0) = 0
gamma_value = sp.Symbol("gamma", positive=True)  # γ(t) at the time considered


@functools.cache
def z_solution() -> sp.Expr:
    """z(t) from ``dsolve`` of Eqn 116 with z(0) = 0, written with Γ = η_Z P(t)."""
    zf = sp.Function("z")
    c = K * rho0**-4
    solution = sp.dsolve(sp.Eq(zf(t).diff(t), -c * etaZ * _P(t).diff(t) * sp.exp(4 * zf(t))), zf(t),
                         ics={zf(0): 0}).rhs
    solution = solution.doit().xreplace({_P(0): 0})
    return sp.simplify(solution.xreplace({_P(t): Gamma / etaZ}))


def B_from_definition() -> sp.Expr:
    """B_n = η_Z ∫₀ᵗ ξ_n dt' = ∫₀^Γ dΓ'/… with ξ_n = Kρ₀^{−4} γ e^{4z} along the dsolve solution."""
    G = sp.Symbol("G", nonnegative=True)
    xi_over_gamma = (K * rho0**-4 * sp.exp(4 * z_solution())).xreplace({Gamma: G})
    return sp.simplify(sp.integrate(xi_over_gamma, (G, 0, Gamma)))


def Gamma_from_definition(H: sp.Expr = h) -> sp.Expr:
    """Γ at h(t/K) = H: η_Z K/η_Y ∫₀^H γ(h')((M−1)+e^{Mh'}) dh' (Eqn 44 as the change of variables)."""
    hp = sp.Symbol("hp", nonnegative=True)
    integrand = sp.simplify(S.gamma_of_h(hp) * ((M - 1) + sp.exp(M * hp)))
    return etaZ * K / etaY * sp.integrate(integrand, (hp, 0, H))


def _dom(*symbols) -> Domain:
    ranges = {K: Interval(1, 100), rho0: Interval(0.1, 10, scale="log"), etaZ: Interval(0.01, 10, scale="log"),
              etaY: Interval(0.01, 10, scale="log"), Gamma: Interval(0, 1e6, scale="log"),
              gamma_value: Interval(0, 100), M: Interval(3, 1e8, scale="log"), h: Interval(0, 0.05)}
    return Domain({s: ranges[s] for s in symbols})


def item_z_solution() -> Item:
    """ss.thm4.z_solution — Eqns 116, 118–120: e^{−4z_l} = 4Kρ₀^{−4}η_Z∫₀ᵗγ + 1 (z_l(0) = 0)."""
    zt = z_solution()
    c = K * rho0**-4
    dz = -c * etaZ * gamma_value * sp.exp(4 * zt)  # Eqn 116 along the solution
    d_exp = -4 * sp.exp(-4 * zt) * dz  # d/dt e^{−4z} = −4 e^{−4z} ż
    dom = _dom(K, rho0, etaZ, Gamma, gamma_value)
    return Item("ss.thm4.z_solution", "Eqns 116, 118–120", "", "the scalar attention logit", formulas=[
        Formula("ss.thm4.z_solution.eq118", "Eqn 118", sp.exp(-4 * zt) * dz, -c * etaZ * gamma_value, dom,
                description="e^{−4z}ż along the solution"),
        Formula("ss.thm4.z_solution.eq119", "Eqn 119", d_exp, 4 * c * etaZ * gamma_value, dom,
                description="d e^{−4z}/dt"),
        Formula("ss.thm4.z_solution.eq120", "Eqn 120", 4 * c * Gamma + 1, sp.exp(-4 * zt), _dom(K, rho0, Gamma),
                description="e^{−4z} from dsolve against the printed 4Kρ₀^{−4}η_Z∫γ + 1",
                latex=r"\exp(-4z_l) = 4K\rho_0^{-4}\eta_Z \int_0^t \gamma(t')dt' + 1"),
    ])


def item_xi_solution() -> Item:
    """ss.thm4.xi_solution — Eqns 117, 121: ξ_n = Kρ₀^{−4}γ e^{4z_l} = γ/(ρ₀⁴/K + 4Γ)."""
    derived = K * rho0**-4 * gamma_value * sp.exp(4 * z_solution())
    return Item("ss.thm4.xi_solution", "Eqns 117, 121", "", "ξ_n along the scalar surrogate", formulas=[
        Formula("ss.thm4.xi_solution.eq121", "Eqn 121", gamma_value / (rho0**4 / K + 4 * Gamma), derived,
                _dom(K, rho0, Gamma, gamma_value), description="ξ_n against Kρ₀^{−4}γe^{4z} at the solution",
                latex=r"\xi_n(t) = \frac{\gamma(t)}{\rho_0^4/K + 4\Gamma(t)}"),
    ])


def item_B_integral() -> Item:
    """ss.thm4.B_integral — Eqn 122: B_n = ∫₀^Γ dΓ/(ρ₀⁴/K + 4Γ) = ¼ ln(ρ₀⁴/K + 4Γ(t)).

    Derived: B_n = η_Z∫₀ᵗξ_n = ∫₀^Γ Kρ₀^{−4}e^{4z}dΓ' = ¼ ln(1 + 4KΓ/ρ₀⁴) (so B_n(0) = 0, R7)."""
    derived = B_from_definition()
    G = sp.Symbol("G", nonnegative=True)
    middle = sp.integrate(1 / (rho0**4 / K + 4 * G), (G, 0, Gamma))
    dom = _dom(K, rho0, Gamma)
    return Item("ss.thm4.B_integral", "Eqn 122", "", "B_n integrated", formulas=[
        Formula("ss.thm4.B_integral.middle", "Eqn 122 (the integral)", middle, derived, dom,
                description="∫₀^Γ dΓ'/(ρ₀⁴/K + 4Γ') against the definition"),
        Formula("ss.thm4.B_integral.closed", "Eqn 122 (the closed form)", sp.log(rho0**4 / K + 4 * Gamma) / 4,
                derived, dom, description="¼ ln(ρ₀⁴/K + 4Γ) against the definition",
                latex=r"B_n(t) = \frac{1}{4} \ln(\rho_0^4/K + 4\Gamma(t))"),
        Formula("ss.thm4.B_integral.at_zero", "Eqn 122 at t = 0 (R7)", sp.log(rho0**4 / K) / 4,
                sp.simplify(sp.expand_log(derived.xreplace({Gamma: 0}), force=True)), _dom(K, rho0),
                description="the printed B_n(0) against B_n(0) = 0"),
    ])


def item_gamma_integral() -> Item:
    """ss.thm4.gamma_integral — Eqns 123–126: Γ(t) = (η_Z/η_Y)·K(M−1)²h²(t/K)/2."""
    derived = Gamma_from_definition()
    stated = etaZ / etaY * K * (M - 1) ** 2 / 2 * h**2
    return Item("ss.thm4.gamma_integral", "Eqns 123–126", "", "Γ in closed form", formulas=[
        Formula("ss.thm4.gamma_integral.eq126", "Eqn 126", stated, derived, _dom(K, etaZ, etaY, M, h),
                description="the printed Γ against η_Z K/η_Y ∫γ((M−1)+e^{Mh})dh at h = h(t/K)",
                latex=r"\Gamma(t) = \frac{\eta_Z}{\eta_Y} \cdot \frac{K(M-1)^2}{2} h^2(t/K)"),
    ])


def item_B_closed() -> Item:
    """ss.thm4.B_closed — Eqn 127: B_n = ¼ ln(ρ₀⁴/K + 2(η_Z/η_Y)K(M−1)²h²(t/K)); derived from the definitions of
    B_n and Γ (so B_n(0) = 0)."""
    derived = B_from_definition().xreplace({Gamma: Gamma_from_definition()})
    stated = sp.log(rho0**4 / K + 2 * etaZ / etaY * K * (M - 1) ** 2 * h**2) / 4
    dom = _dom(K, rho0, etaZ, etaY, M, h)
    return Item("ss.thm4.B_closed", "Eqn 127", "", "B_n in closed form", formulas=[
        Formula("ss.thm4.B_closed.eq127", "Eqn 127", stated, derived, dom,
                description="the printed B_n against the definition at h = h(t/K)",
                latex=r"B_n(t) = \frac{1}{4} \ln \left(\rho_0^4/K + 2 \frac{\eta_Z}{\eta_Y} K(M-1)^2 h^2(t/K) \right)"),
        Formula("ss.thm4.B_closed.at_zero", "Eqn 127 at t = 0 (R7)", stated.xreplace({h: 0}),
                sp.simplify(sp.expand_log(derived.xreplace({h: 0}), force=True)), _dom(K, rho0),
                description="the printed B_n(0) against 0"),
    ])


def item_eq130_validity() -> Item:
    """ss.dv.eq130_validity — the condition on t under which Eqn 130 follows from B_n = ¼ln(1 + 4KΓ/ρ₀⁴).

    Derived: Eqn 130's bracket is the large-t form of ¼ln(4KΓ/ρ₀⁴) with h(t/K) = ln(Mη_Yt/K)/M (stage 2 of
    Lemma 9); dropping the 1 needs 4KΓ/ρ₀⁴ ≫ 1, i.e. t ≫ t_c, the root of 4KΓ(t_c)/ρ₀⁴ = 1:
    t_c = (K/(Mη_Y))·exp(ρ₀²M√(ν/2)/(K(M−1))) with ν = η_Y/η_Z. Printed (L1005): t ≫ (Mη_Y)^{−1}exp(1/√(2ν)),
    compared under both conventions of ν (``nu``).
    """
    t_ = sp.Symbol("t", positive=True)
    nu_ = sp.Symbol("nu", positive=True)
    H = sp.log(M * etaY * t_ / K) / M
    Gamma_t = (Gamma_from_definition(H)).xreplace({etaZ: etaY / nu_})
    solutions = sp.solve(sp.Eq(4 * K * Gamma_t / rho0**4, 1), t_)
    t_c = [s for s in solutions if s.is_positive is not False and sp.im(s) == 0]
    t_c = max(t_c, key=lambda s: float(s.subs({M: 1000, K: 10, etaY: 1, nu_: 2, rho0: 1}))) if t_c else sp.nan
    dom = Domain({M: Interval(100, 1e6, scale="log"), K: Interval(1, 20), etaY: Interval(0.1, 10, scale="log"),
                  nu_: Interval(0.1, 10, scale="log"), rho0: Interval(0.5, 3)})
    printed = {"Y_over_Z": sp.exp(1 / sp.sqrt(2 * nu_)) / (M * etaY),
               "Z_over_Y": sp.exp(1 / sp.sqrt(2 / nu_)) / (M * etaY)}  # ν_printed = 1/ν under Z_over_Y
    formulas = [Formula(f"ss.dv.eq130_validity.threshold.{reading}", "L1005", value, t_c, dom, reading={"nu": reading},
                        description="the printed threshold of t against the derived t_c (ν = η_Y/η_Z in t_c)",
                        latex=r"t \gg (M\eta_Y)^{-1} \exp(1/\sqrt{2\nu})")
                for reading, value in printed.items()]
    return Item("ss.dv.eq130_validity", "derived (Eqn 130, L1005)", "", "when Eqn 130 follows", formulas=formulas,
                notes=[f"derived threshold t_c = {sp.sstr(sp.simplify(t_c))} (ν = η_Y/η_Z)"])
