"""Asymptotics the induction-head checks rely on: the 4-gram tail (ih.dv.G4_tail) and the Stage-I rate (ih.dv.stage1_rate).

ih.dv.G4_tail. As p → ∞ at fixed L the head-1 sums are geometric series in u = e^{-p} whose
remainders are O(L u^{L-3}) (the ξ_i of C.3.1); dropping them gives the tail loss in (u, g)
(:func:`g4_tail_loss`). In the canonical reading g relaxes fast to the slow manifold
∂L/∂g = 0, i.e. g = g*(1+u), on which L = ½g*²u², and the slow flow is
du/dt = -u dp/dt = -u² ∂_u L = -g*²u³, hence u ~ 1/(g*√(2t)), L ~ 1/(4t),
g - g* ~ g*u (spec §4). In the literal reading (s = 2..L-2) head 1 cannot see x_{L-2}: the tail
loss has no cross term, the fast variable g decays to 0 and L_G4 → ½g*².

ih.dv.stage1_rate. In Stage I (p̃ trained alone), x := e^{-p̃} → 0 and, with head 1's weights π_s
frozen at p(0), the layer-1 weights are A_{s,s-1} = 1 - x + O(x²) (s ≥ 3), A_{s,s-2} = x + O(x²),
A_{21} = 1. To first order in x,

    -dL^I/dp̃ = K x + O(x²),  K = g*σπ_{S₁}[canonical] - σ²(Σ_{s=3}^{S₁} π_s² - Σ_{s=2}^{S₁-1} π_s π_{s+1}),

with S₁ the last head-1 position (L-1 canonical, L-2 literal); so p̃(t) = ln(e^{p̃(0)} + K t) + o(1)
→ ln(Kt) when K > 0. Under init = c2 (π uniform, 1/(L-2)) the σ² bracket cancels and
K = g*σ/(L-2): half the constant 2α*g(0)/((1+α*)(L-2)) of the printed lower bound (C.2).
"""

from __future__ import annotations

import functools

import sympy as sp

from derivations.induction_head.symbols import g, gstar, u

t = sp.Symbol("t", positive=True)
x = sp.Symbol("x", positive=True)  # x = e^{-p̃} in Stage I
k = sp.Symbol("k", integer=True, nonnegative=True)

#: first lag of head 1 in each reading: canonical s = 2..L-1 has lags 0..L-3, literal s = 2..L-2 lags 1..L-3
FIRST_LAG = {"canonical": 0, "literal": 1}


@functools.cache
def g4_tail_loss(reading: str = "canonical") -> sp.Expr:
    """L_G4 as L → ∞ at fixed u = e^{-p} ∈ (0, 1): the head-1 sums over lags k ≥ first lag, summed as series."""
    lag0 = FIRST_LAG[reading]
    norm = sp.Sum(u ** (2 * k), (k, lag0, sp.oo)).doit() / sp.Sum(u**k, (k, lag0, sp.oo)).doit() ** 2
    norm = sp.piecewise_fold(norm).args[0][0] if isinstance(norm, sp.Piecewise) else norm
    # the cross term E[x_{L-2}·Σ π_s x_{s-1}] picks the weight at lag 0 (s = L-1), present in the canonical range only
    cross = 1 / sp.Sum(u**k, (k, 0, sp.oo)).doit() if reading == "canonical" else sp.Integer(0)
    cross = cross.args[0][0] if isinstance(cross, sp.Piecewise) else cross
    return sp.simplify(gstar**2 / 2 + g**2 * _branch(norm) / 2 - gstar * g * cross)


def _branch(expr: sp.Expr) -> sp.Expr:
    """The |u| < 1 branch of a Piecewise produced by summing a geometric series."""
    if isinstance(expr, sp.Piecewise):
        return expr.args[0][0]
    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: e.args[0][0])


def g4_slow_manifold(reading: str = "canonical") -> sp.Expr:
    """g on the slow manifold ∂L/∂g = 0 of the tail loss (canonical: g*(1+u); literal: 0)."""
    return sp.simplify(sp.solve(sp.diff(g4_tail_loss(reading), g), g)[0])


def g4_reduced_loss(reading: str = "canonical") -> sp.Expr:
    """The tail loss on the slow manifold (canonical: ½g*²u²)."""
    return sp.factor(sp.simplify(g4_tail_loss(reading).subs(g, g4_slow_manifold(reading))))


def g4_slow_velocity(reading: str = "canonical") -> sp.Expr:
    """du/dt on the slow manifold: -u² dL_red/du (dp/dt = -∂_p L and ∂_p = -u ∂_u; envelope theorem in g)."""
    return sp.factor(-(u**2) * sp.diff(g4_reduced_loss(reading), u))


def g4_tail_asymptotics() -> dict[str, sp.Expr]:
    """Leading large-t forms of the canonical slow flow: u(t), L_G4(t), g(t) - g*.

    du/dt = -g*²u³ separates: u^{-2} = u₀^{-2} + 2g*²t. The solution is checked by substitution
    (``residual`` must be 0) and its leading terms are taken as t → ∞.
    """
    u0 = sp.Symbol("u0", positive=True)
    u_t = u0 / sp.sqrt(1 + 2 * gstar**2 * u0**2 * t)
    velocity = g4_slow_velocity("canonical")
    residual = sp.simplify(sp.diff(u_t, t) - velocity.subs(u, u_t))
    lead_u = 1 / (gstar * sp.sqrt(2 * t))
    loss_t = g4_reduced_loss("canonical").subs(u, u_t)
    return {
        "u_exact": u_t,
        "residual": residual,
        "u": lead_u,
        "u_ratio_limit": sp.limit(sp.simplify(u_t / lead_u), t, sp.oo),
        "loss": sp.limit(sp.simplify(loss_t * t), t, sp.oo) / t,
        "g_minus_gstar": sp.simplify(gstar * lead_u),
    }


def stage1_rate_constant(pi: list[sp.Expr], sigma_: sp.Expr, gstar_: sp.Expr, reading: str = "canonical") -> sp.Expr:
    """K of the module docstring for head-1 weights ``pi`` = [π_2, …, π_{S₁}] (a Python list)."""
    cross = gstar_ * sigma_ * pi[-1] if reading == "canonical" else 0
    squares = sum(pp**2 for pp in pi[1:])
    neighbours = sum(a * b for a, b in zip(pi[:-1], pi[1:], strict=False))
    return cross - sigma_**2 * (squares - neighbours)


def stage1_loss_in_x(length: int, pi: list[sp.Expr], sigma_: sp.Expr, gstar_: sp.Expr,
                     reading: str = "canonical") -> sp.Expr:
    """Exact L^I at concrete L as a rational function of x = e^{-p̃}, head-1 weights ``pi`` on s = 2..S₁."""
    last = length - 1 if reading == "canonical" else length - 2
    weight = dict(zip(range(2, last + 1), pi, strict=True))
    coefficient = {tau_: sp.Integer(0) for tau_ in range(1, length + 1)}
    for s_ in range(2, last + 1):
        normaliser = sum(x**kk for kk in range(s_ - 1))
        for tau_ in range(1, s_):
            coefficient[tau_] += sigma_ * weight[s_] * x ** (s_ - 1 - tau_) / normaliser
    coefficient[length - 2] -= gstar_
    return sum(c**2 for c in coefficient.values()) / 2


def stage1_rate_from_series(length: int, reading: str = "canonical") -> tuple[sp.Expr, sp.Expr, list[sp.Symbol]]:
    """(K from the series of -dL^I/dp̃ = x dL^I/dx at x = 0, K from the general formula, the π symbols)."""
    last = length - 1 if reading == "canonical" else length - 2
    pis = list(sp.symbols(f"pi2:{last + 1}", positive=True))
    sig, gs = sp.symbols("sigma gstar", positive=True)
    loss = stage1_loss_in_x(length, pis, sig, gs, reading)
    velocity = x * sp.diff(loss, x)  # -dL/dp̃ with dx/dp̃ = -x
    series = sp.series(velocity, x, 0, 2).removeO()
    return sp.expand(series.coeff(x, 1)), sp.expand(stage1_rate_constant(pis, sig, gs, reading)), pis
