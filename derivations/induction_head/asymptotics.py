r"""Asymptotics of the IH-head (h, w) flow: hitting times, plateau level, Phase-IV rates (spec §4).

Derived here from the toolkit's own losses and flows (no formula is copied from the paper):

* ``ih.dv.hitting_times`` — T_1^h from the linear h-equation at w = w(0) ≈ 0,
  (L-2) dh/dt = a - b h (a, b read off the flow at w → 0): T_1^h = ln((a/b - σ)/(a/b - h*))/b;
  for the spec's form set σ → 0. The plateau growth rate λ = lim_{w→0} d ln w/dt at h = h_eq(0)
  (``derive_verify.plateau_rate``), T^w_{1/2} ≈ T_1^h + ln(w*/(2 w(T_1^h)))/λ and the leading
  T_III ≈ ln(1/σ)/λ. Where a/b = h* (softmaxLL: h_eq(0) = h*), h reaches h* only through the growth
  of w: with h_eq(w) ≈ h* + c w², h - h* ≈ -(h* - σ)e^{-t/n} + c w²/(1 + 2λn), w² ≈ σ² e^{2λt}, so
  T_1^h ≈ n ln((h* - σ)(1 + 2λn)/(c σ²))/(1 + 2λn).
* ``ih.dv.plateau_level`` — L_IH2 at w → 0, h = h_eq(0), against L_IH2 at initialisation
  (h = w = 0 in the limit σ → 0) and at T_o (h = h*, w → 0); series in w*.
* ``ih.dv.phase4_rates`` — the Jacobian of (dw/dt, dh/dt) in (w, h) at the minimiser (w*, h*) of
  each mode, its slowest decay rate λ_slow and the leading order in w*; the loss decays as
  e^{-2 λ_slow t} (a quadratic form in the deviation).

Modes: ``flow`` ∈ {paper, balanced}, ``ih_loss`` ∈ {exp_simplified, softmax_largeL}; canonical
head-2 range (where (w*, h*) is the minimiser: the model can represent the target exactly).
"""

from __future__ import annotations

import functools

import sympy as sp

from derivations.core import Formula, Item
from derivations.flows import reduced_velocity
from derivations.induction_head import derive_verify, ih_head
from derivations.induction_head.symbols import (
    FLOW_MODES,
    L,
    alpha,
    domain,
    h,
    hstar,
    n,
    phi,
    psi,
    reduced_mode,
    sigma,
    w,
    wstar,
)

P = sp.Symbol("P", positive=True)
vs = wstar**2
#: the (flow, ih_loss) pairs of the reduced ODE: the shorthands of spec §2.7 (``FLOW_MODES``) and softmaxLL's
#: paper-flow twin, which only the asymptotics compare
MODES = {name: (mode["flow"], mode["ih_loss"]) for name, mode in FLOW_MODES.items()} | {
    "softmaxLL_paper": ("paper", "softmax_largeL")}


@functools.cache
def loss(ih_loss: str = "exp_simplified", law: str = "gaussian") -> sp.Expr:
    """L_IH2(h, w) of a loss mode (canonical range). Boolean forms are those ih.dv.boolean verifies."""
    if law == "boolean":
        if ih_loss == "softmax_largeL":
            return derive_verify.softmax_largeL_stated("boolean")
        return (hstar**2 * sp.cosh(2 * vs) + h**2 * sp.cosh(2 * w**2) - 2 * h * hstar * sp.cosh(w**2 + vs)) / (2 * n)
    if ih_loss == "softmax_largeL":
        return derive_verify.softmax_largeL_derived("gaussian")
    return ih_head.L_IH2_derived("canonical")


@functools.cache
def scaled_loss(ih_loss: str = "exp_simplified", law: str = "gaussian") -> sp.Expr:
    """(L-2)·L_IH2: independent of L in the canonical range, so every rate below is (1/(L-2)) × an L-free form.

    Working with it keeps SymPy away from |L-2| and from simplifying rational functions of L.
    """
    nn = sp.Symbol("n_L", positive=True)
    scaled = sp.Add(*(nn * term for term in sp.Add.make_args(loss(ih_loss, law).subs(L, nn + 2))))
    if nn in scaled.free_symbols:
        raise AssertionError(f"(L-2)·L_IH2 still depends on L: {scaled}; this is a bug")
    return scaled


@functools.cache
def scaled_velocity(flow: str, ih_loss: str, law: str = "gaussian") -> tuple[sp.Expr, sp.Expr]:
    """(L-2)·(dw/dt, dh/dt) of a mode, from ``diff`` of its loss (``flow`` as in derivations.flows)."""
    f = scaled_loss(ih_loss, law)
    return reduced_velocity(f.subs(w, sp.sqrt(P)), P, w, reduced_mode(flow)), -sp.diff(f, h)


def velocity(flow: str, ih_loss: str, law: str = "gaussian") -> tuple[sp.Expr, sp.Expr]:
    """(dw/dt, dh/dt) of a mode."""
    return tuple(e / n for e in scaled_velocity(flow, ih_loss, law))


# ------------------------------------------------------------------------------- Phase IV: Jacobian


@functools.cache
def scaled_jacobian(flow: str, ih_loss: str) -> sp.Matrix:
    """(L-2)·∂(dw/dt, dh/dt)/∂(w, h) at (w*, h*) (L-free)."""
    dw, dh = scaled_velocity(flow, ih_loss)
    J = sp.Matrix([[sp.diff(dw, w), sp.diff(dw, h)], [sp.diff(dh, w), sp.diff(dh, h)]])
    return J.subs({w: wstar, h: hstar})


def jacobian(flow: str, ih_loss: str) -> sp.Matrix:
    """∂(dw/dt, dh/dt)/∂(w, h) at (w*, h*)."""
    return scaled_jacobian(flow, ih_loss) / n


def fixed_point_residual(flow: str, ih_loss: str) -> tuple[sp.Expr, sp.Expr]:
    """(L-2)·velocities at (w*, h*) (zero when (w*, h*) is the fixed point)."""
    return tuple(e.subs({w: wstar, h: hstar}) for e in scaled_velocity(flow, ih_loss))


def jacobian_printed() -> sp.Matrix:
    """The spec's J (paper ODE, (w, h) coordinates, at (w*, h*))."""
    d_phi = sp.diff(phi(sp.Symbol("x")), sp.Symbol("x")).subs(sp.Symbol("x"), 2 * vs)
    return sp.Matrix([[-4 * hstar**2 * vs * d_phi, -2 * hstar * wstar * phi(2 * vs)],
                      [-2 * hstar * wstar * phi(2 * vs), -psi(2 * vs)]]) / n


def slow_rate_scaled(flow: str, ih_loss: str) -> sp.Expr:
    """(L-2)·λ_slow: independent of L (every entry of J carries 1/(L-2))."""
    return slow_rate(scaled_jacobian(flow, ih_loss))


def slow_rate(J: sp.Matrix) -> sp.Expr:
    """λ_slow: the smaller decay rate -Re(eigenvalue) of a 2×2 Jacobian with real negative eigenvalues."""
    tr, det = J.trace(), J.det()
    return (-tr - sp.sqrt(tr**2 - 4 * det)) / 2


def leading_in_wstar(expr: sp.Expr, order: int = 4) -> sp.Expr:
    """The leading term of ``expr`` as w* → 0 (series in w*; write rates as n·λ so that no |L-2| appears)."""
    eps = sp.Symbol("epsilon", positive=True)
    series = sp.series(expr.subs(wstar, eps), eps, 0, order).removeO()
    return sp.simplify(sp.Add.make_args(sp.expand(series))[0].subs(eps, wstar)) if series != 0 else sp.Integer(0)


# ------------------------------------------------------------------------------- hitting times


def h_rise_coefficients(flow: str, ih_loss: str) -> tuple[sp.Expr, sp.Expr]:
    """(a, b) of (L-2) dh/dt = a - b h at w → 0."""
    _, dh = scaled_velocity(flow, ih_loss)
    at0 = sp.limit(dh, w, 0)
    b = sp.simplify(-sp.diff(at0, h))
    return sp.simplify(at0 + b * h), b


def t1h_derived(flow: str = "paper", ih_loss: str = "exp_simplified", small_sigma: bool = True) -> sp.Expr:
    """T_1^h from the linear rise of h at w ≈ 0 (module docstring); σ → 0 when ``small_sigma``."""
    a, b = h_rise_coefficients(flow, ih_loss)
    level = sp.simplify(a / b)
    if sp.simplify(level - hstar) == 0:
        lam, c = plateau_rate(flow, ih_loss), h_eq_slope(ih_loss)
        k = 1 + 2 * lam * n
        start = hstar if small_sigma else hstar - sigma
        return n * sp.log(start * k / (c * sigma**2)) / k
    start = 0 if small_sigma else sigma
    return n * sp.log((level - start) / (level - hstar)) / b


def t1h_stated() -> sp.Expr:
    """The spec's T_1^h ≈ (L-2) ln(1/(1 - √(1 - w*⁴)))."""
    return n * sp.log(1 / (1 - sp.sqrt(1 - wstar**4)))


def h_eq_slope(ih_loss: str) -> sp.Expr:
    """c in h_eq(w) = h_eq(0) + c w² + O(w⁴)."""
    v = sp.Symbol("v", positive=True)
    h_eq = derive_verify.h_equilibrium(scaled_loss(ih_loss)).subs(w, sp.sqrt(v))
    return sp.simplify(sp.limit(sp.diff(h_eq, v), v, 0))


@functools.cache
def plateau_rate(flow: str, ih_loss: str, law: str = "gaussian") -> sp.Expr:
    """λ = d ln w/dt as w → 0 with h = h_eq(0), from the mode's flow."""
    return derive_verify.plateau_rate(scaled_loss(ih_loss, law), flow) / n


def plateau_rate_stated_paper() -> sp.Expr:
    """The spec's λ_paper = 2h*² w*² (1 - w*⁴)^{-2}/(L-2)."""
    return 2 * hstar**2 * vs * (1 - wstar**4) ** -2 / n


def t3_leading(flow: str, ih_loss: str) -> sp.Expr:
    """Leading T_III as σ → 0: ln(1/σ)/λ (the escape from w = σ dominates)."""
    return sp.log(1 / sigma) / plateau_rate(flow, ih_loss)


# ------------------------------------------------------------------------------- plateau level


@functools.cache
def plateau_level(ih_loss: str = "exp_simplified", law: str = "gaussian") -> dict[str, sp.Expr]:
    """L_IH2 on the plateau (w → 0, h = h_eq(0)) and its fractions of L_IH2(0) and of L_IH2(T_o).

    L_IH2(0) is taken at h = w = 0 (σ → 0); L_IH2(T_o) at h = h*, w → 0 (w(T_o) ≈ σ).
    """
    f = scaled_loss(ih_loss, law)
    h0 = sp.limit(derive_verify.h_equilibrium(f), w, 0)
    level, at_init, at_o = (sp.limit(f.subs(h, x), w, 0) for x in (h0, 0, hstar))
    return {"h_eq0": h0, "level": level / n, "initial": at_init / n, "at_T_o": at_o / n,
            "fraction_of_initial": sp.cancel(level / at_init), "fraction_of_T_o": sp.cancel(level / at_o)}


def wstar_where_fraction_crosses(fraction: sp.Expr, threshold: float = 0.99) -> float | None:
    """Smallest w* in (0, 1/√2) where the plateau/L(T_o) fraction drops to ``threshold`` (None if never)."""
    import mpmath

    f = sp.lambdify(wstar, fraction - threshold, modules="mpmath")
    grid = [0.005 * k for k in range(1, 141)]
    for lo, hi in zip(grid, grid[1:], strict=False):
        if f(lo) > 0 >= f(hi):
            return float(mpmath.findroot(f, (lo, hi), solver="bisect"))
    return None


# ------------------------------------------------------------------------------- items


def _dom():
    return domain(L, wstar, alpha, sigma, wstar=ih_head.W_RANGE)


def item_phase4_rates() -> Item:
    """ih.dv.phase4_rates: the printed J against the Jacobian derived in each mode; fixed point check."""
    dom = _dom()
    formulas = [Formula(f"ih.dv.phase4_rates.J{i}{j}", f"spec J[{i},{j}] (paper ODE)", jacobian_printed()[i, j],
                        jacobian("paper", "exp_simplified")[i, j], dom, "∂(dw/dt, dh/dt)/∂(w, h) at (w*, h*)",
                        reading={"flow": "paper", "ih_loss": "exp_simplified", "ih_model_range": "canonical"})
                for i in range(2) for j in range(2)]
    for name, (flow, mode) in MODES.items():
        for k, r in enumerate(fixed_point_residual(flow, mode)):
            formulas.append(Formula(f"ih.dv.phase4_rates.fixed_point_{name}_{'wh'[k]}", "(w*, h*) is a fixed point",
                                    sp.Integer(0), r, dom, f"velocity at (w*, h*), {name}",
                                    reading={"flow": flow, "ih_loss": mode}))
    return Item("ih.dv.phase4_rates", "spec §4 ih.dv.phase4_rates", "—", "linearisation at the minimiser", formulas)


def item_hitting_times() -> Item:
    """ih.dv.hitting_times: the spec's T_1^h and λ_paper against the toolkit's derivation."""
    dom = _dom()
    return Item("ih.dv.hitting_times", "spec §4 ih.dv.hitting_times", "—", "hitting times of the IH head", [
        Formula("ih.dv.hitting_times.T1h_paper", "spec T_1^h", t1h_stated(), t1h_derived("paper"), dom,
                "linear rise of h at w = 0, h(0) = 0", reading={"flow": "paper"}),
        Formula("ih.dv.hitting_times.T1h_balanced", "spec T_1^h", t1h_stated(), t1h_derived("balanced"), dom,
                "the h-equation does not depend on the flow mode", reading={"flow": "balanced"}),
        Formula("ih.dv.hitting_times.lambda_paper", "spec λ_paper", plateau_rate_stated_paper(),
                plateau_rate("paper", "exp_simplified"), dom, "d ln w/dt, w → 0, h = h*ψ(w*²)",
                reading={"flow": "paper"}),
    ])
