"""The printed bounds of the IH-head proof ([W] App. C.3.2; [F] App. C.2) as SymPy expressions.

Each function returns a right-hand side exactly as printed (Eq. (12), (13), the dw/dt display
before (15), (15), (16), the chain before (17), (17), the C.4 display, the G bound before (18)),
and, where the proof derives a bound from the flow, the toolkit's own derivation next to it
(suffix ``_derived``). Symbols: ``t`` time, ``w0``/``h0`` the initial values w(0), h(0),
``beta`` the β of the Eq. (17) derivation, ``gamma`` the undefined γ(w*) (flag ``eq17_gamma``,
readings in :data:`derivations.induction_head.lyapunov.GAMMA_READINGS`).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula
from derivations.induction_head.lyapunov import C
from derivations.induction_head.symbols import L, alpha, domain, h, hstar, phi, psi, v, vstar, w, wstar

R_ = sp.Rational
t = sp.Symbol("t", nonnegative=True)
w0 = sp.Symbol("w0", positive=True)
h0 = sp.Symbol("h0", nonnegative=True)
beta = sp.Symbol("beta", positive=True)
gamma = sp.Symbol("gamma", positive=True)
hdot = sp.Symbol("hdot", real=True)  # h'(t̄) in the (P1.2) display
G2 = sp.Symbol("G2", positive=True)  # G(v(T_2^h), h(T_2^h))
elapsed = sp.Symbol("elapsedT2h", nonnegative=True)  # t - T_2^h
n = L - 2
c01 = R_(1, 100)  # the printed 0.01


# ----------------------------------------------------------------------------- Eq. (12)-(13)


def eq12_h_cap() -> sp.Expr:
    """The printed condition on h of Eq. (12): h ≤ (1/(1+α*))(1-w*⁴)^{-1/2}/(1-0.01⁴w*⁴)^{-1/2}."""
    return hstar * (1 - wstar**4) ** R_(-1, 2) / (1 - c01**4 * wstar**4) ** R_(-1, 2)


def eq12_dh_lower() -> sp.Expr:
    """Eq. (12), first line, as printed: dh/dt ≥ -(1/(L-2))[h(1-0.01⁴w*⁴)^{-1/2} - h*(1-w*⁴)^{-1/2}]."""
    return -(h * (1 - c01**4 * wstar**4) ** R_(-1, 2) - hstar * (1 - wstar**4) ** R_(-1, 2)) / n


def eq12_dh_lower_derived() -> sp.Expr:
    """The bound the flow gives on {w ≤ 0.01w*}: (h*ψ(w*²) - hψ(2(0.01w*)²))/(L-2) (ψ increasing)."""
    return (hstar * psi(wstar**2) - h * psi(2 * (c01 * wstar) ** 2)) / n


def eq12_h_lower() -> sp.Expr:
    """Eq. (12), second line, as printed (note the exponent's 0.01w*⁴ against the cap's 0.01⁴w*⁴)."""
    cap = eq12_h_cap()
    return cap - (cap - h0) * sp.exp(-t / (n * (1 - c01 * wstar**4) ** R_(1, 2)))


def eq12_h_lower_derived() -> sp.Expr:
    """The solution of dh/dt = eq12_dh_lower_derived from h(0) = h0 (a lower bound on h by comparison)."""
    rate = psi(2 * (c01 * wstar) ** 2) / n
    cap = hstar * psi(wstar**2) / psi(2 * (c01 * wstar) ** 2)
    return cap - (cap - h0) * sp.exp(-rate * t)


def eq13_first() -> sp.Expr:
    """Eq. (13), first expression: (1-0.01w*⁴)^{1/2}(L-2) ln(1/(1 - (1-w*⁴)^{1/2}/(1-0.01⁴w*⁴)^{1/2}))."""
    ratio = (1 - wstar**4) ** R_(1, 2) / (1 - c01**4 * wstar**4) ** R_(1, 2)
    return (1 - c01 * wstar**4) ** R_(1, 2) * n * sp.log(1 / (1 - ratio))


def eq13_second() -> sp.Expr:
    """Eq. (13), second expression: 2(L-2)(1 - w*⁴/2)."""
    return 2 * n * (1 - wstar**4 / 2)


def eq13_derived() -> sp.Expr:
    """Time for eq12_h_lower_derived to rise from h0 to h* (an upper bound on T_1^h while w ≤ 0.01w*)."""
    rate = psi(2 * (c01 * wstar) ** 2) / n
    cap = hstar * psi(wstar**2) / psi(2 * (c01 * wstar) ** 2)
    return sp.log((cap - h0) / (cap - hstar)) / rate


def eq13_dw_upper() -> sp.Expr:
    """The bound after (13) for 0 ≤ t ≤ T_1^h: dw/dt ≤ (1/(L-2))(1-4w*⁴)^{-3/2}·w*²·4w."""
    return (1 - 4 * wstar**4) ** R_(-3, 2) * wstar**2 * 4 * w / n


# ----------------------------------------------------------------------------- Eq. (15)-(16)


def eq15_dw_line1() -> sp.Expr:
    """First right-hand side of the dw/dt display before (15), as printed (exponent +3/2 on 1-4w⁴)."""
    return 2 * w / ((1 + alpha) ** 2 * n) * (
        (1 - (w**2 + wstar**2) ** 2) ** R_(-3, 2) * (w**2 + wstar**2) - (1 - 4 * w**4) ** R_(3, 2)
    )


def eq15_dw_line2() -> sp.Expr:
    """Second right-hand side of the display before (15): 2w/((1+α*)²(L-2))·(1-4w*⁴)^{3/2}·2w*²."""
    return 2 * w / ((1 + alpha) ** 2 * n) * (1 - 4 * wstar**4) ** R_(3, 2) * 2 * wstar**2


def eq15_upper() -> sp.Expr:
    """Eq. (15): w ≤ w(0) exp(4w*²(1-4w*⁴)^{3/2} t/((1+α*)(L-2))) (C.4 prints it with w(0) = σ)."""
    return w0 * sp.exp(4 * wstar**2 * (1 - 4 * wstar**4) ** R_(3, 2) / ((1 + alpha) * n) * t)


def eq16_display() -> sp.Expr:
    """The display before (16): T^w_{1/2} - T^h_1 = (1+α*)²(L-2) ln(w*/(2w(0)))/(4w*²(1-4w*⁴)^{3/2})."""
    return (1 + alpha) ** 2 * n / (4 * wstar**2 * (1 - 4 * wstar**4) ** R_(3, 2)) * sp.log(wstar / (2 * w0))


def eq16_line1() -> sp.Expr:
    """Eq. (16), first lower bound of T^w_{1/2}."""
    return n * ((1 + alpha) ** 2 * sp.log(wstar / (2 * w0)) / (4 * wstar**2 * (1 - 4 * wstar**4) ** R_(3, 2))
                - sp.log(1 - (1 - wstar**4) ** R_(1, 2)))


def eq16_line2() -> sp.Expr:
    """Eq. (16), second lower bound: (L-2)(1+α*)² ln(1/w(0))/(16w*²)."""
    return n * (1 + alpha) ** 2 / (16 * wstar**2) * sp.log(1 / w0)


def theta_scale() -> sp.Expr:
    """The printed rate of T^w_{1/2}, T_II, T_III: S = (1+α*)² L ln(1/σ)/w*² (σ = w(0))."""
    return (1 + alpha) ** 2 * L * sp.log(1 / w0) / wstar**2


# ----------------------------------------------------------------------------- Eq. (17)


def eq17_line1() -> sp.Expr:
    """First lower bound on dw/dt before (17): 2w/((1+α*)²(L-2))·(C(w²+w*²) - γC(2w²))."""
    return 2 * w / ((1 + alpha) ** 2 * n) * (C(w**2 + wstar**2) - gamma * C(2 * w**2))


def eq17_line2() -> sp.Expr:
    """Second lower bound on dw/dt before (17): 2w/((1+α*)²(L-2))·β w*²/(γ+β)."""
    return 2 * w / ((1 + alpha) ** 2 * n) * beta / (gamma + beta) * wstar**2


def eq17_general() -> sp.Expr:
    """The integrated bound before 'Take β = 2': w ≥ w(0) exp(2β/(γ+β)·w*² t/((1+α*)²(L-2)))."""
    return w0 * sp.exp(2 * beta / (gamma + beta) / ((1 + alpha) ** 2 * n) * wstar**2 * t)


def eq17_lower() -> sp.Expr:
    """Eq. (17): w ≥ w(0) exp(w*² t/((1+α*)²(L-2))) on [0, T^w_{1/2}] (C.4 prints it with w(0) = σ)."""
    return w0 * sp.exp(wstar**2 * t / ((1 + alpha) ** 2 * n))


def eq17_window_w2() -> sp.Expr:
    """End of the chain's window, 'before w² increases to w*²/(2γ(w*)+β-1)'."""
    return wstar**2 / (2 * gamma + beta - 1)


# ----------------------------------------------------------------------------- Step II, Eq. (18)


def step_ii1_bounds() -> tuple[sp.Expr, sp.Expr]:
    """Step II.1: ψ(v+v*)/ψ(2v) < h/h* < φ(v+v*)/φ(2v) (lower, upper)."""
    return psi(v + vstar) / psi(2 * v), phi(v + vstar) / phi(2 * v)


def eq18_G_bound() -> sp.Expr:
    """The bound before (18): G(T_2^h) exp(-v*h*²(t - T_2^h)/(4(L-2)))."""
    return G2 * sp.exp(-vstar * hstar**2 * elapsed / (4 * n))


def eq18_rate() -> sp.Expr:
    """The decay rate printed in the G bound: v*h*²/(4(L-2))."""
    return vstar * hstar**2 / (4 * n)


def omega_rate() -> sp.Expr:
    """The rate inside (18)'s exp(-Ω(·)): w*²/(L(1+α*)²)."""
    return wstar**2 / (L * (1 + alpha) ** 2)


# ----------------------------------------------------------------------------- (P1.2)


def p1_2_H() -> sp.Expr:
    """H of (P1.2): (1/(1+α*))(1-(w²+w*²)²)^{-3/2}(w²+w*²) - h(1-4w⁴)^{-3/2}·2w² (dw/dt = 2wh H/(L-2))."""
    return hstar * (1 - (w**2 + wstar**2) ** 2) ** R_(-3, 2) * (w**2 + wstar**2) - h * (1 - 4 * w**4) ** R_(-3, 2) * 2 * w**2


def p1_2_dHdt_printed() -> sp.Expr:
    """(P1.2) as printed: dH/dt|_{t̄} = -h'(t̄)(1-4w*⁴)^{-3/2}·2w(t̄) where dw/dt = 0."""
    return -hdot * (1 - 4 * wstar**4) ** R_(-3, 2) * 2 * w


def p1_2_dHdt_derived() -> sp.Expr:
    """dH/dt = ∂_w H·w' + ∂_h H·h' on the set w' = 0 (chain rule; derived by SymPy)."""
    wdot = sp.Symbol("wdot", real=True)
    H = p1_2_H()
    return (sp.diff(H, w) * wdot + sp.diff(H, h) * hdot).subs(wdot, 0)


def p1_2_formula() -> Formula:
    """The (P1.2) dH/dt display against the chain rule, on the natural domain."""
    dom = domain(w, wstar, alpha, constraints=())
    from derivations.domain import Domain, Interval

    dom = Domain({**dom.intervals, hdot: Interval(-1, 1)}, dom.integers, dom.constraints)
    return Formula("ih.p1_2.dHdt", "C.3.2 (P1.2)", p1_2_dHdt_printed(), p1_2_dHdt_derived(), dom,
                   "dH/dt at a zero of dw/dt, as printed vs ∂_h H·h' (w' = 0)", label_alt="[F] C.2",
                   latex=r"\frac{\mathrm dH}{\mathrm dt}\Big|_{\bar t}=-h'(\bar t)(1-4w^{\star4})^{-\frac32}"
                         r"\cdot2w(\bar t)")
