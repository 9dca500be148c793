"""The 4-gram head's (p, g) gradient flow to long horizons, and the Stage-I flow of p̃, compiled from SymPy.

(p, g) block (spec ih.cf.flow_pg; [W] C.3.1). dp/dt = -∂L_G4/∂p, dg/dt = -∂L_G4/∂g with the
toolkit's own L_G4 (``derivations.induction_head.four_gram.L_G4_derived``) in either
``head1_range``. Late in the run u = e^{-p} → 0 and the block is stiff: g relaxes at rate
‖π‖² ≈ 1 while u decays like t^{-1/2} (ih.dv.G4_tail), so an explicit method needs ~t/3 steps
to reach t. The run therefore integrates the early window, where every hitting time lies, with
:func:`numerics.ode.integrate`'s Dormand–Prince and continues the tail with its stiff method
(``method="rodas4p"``, the L-stable Rosenbrock method RODAS4P) and the compiled Jacobian
(:func:`four_gram_jacobian`), as the spec (§0.2 item 8, "LSODA or Radau") asks for a stiff method;
both locate the hitting times on their dense output by the same rules, so an event still pending at
the switch is found on the tail like any other. The state is (p, g) with p = -ln u: integrating
ln u instead of u keeps full relative accuracy of u ~ 1e-4 at t = 1e8.

Events (first crossing): ``T_g_half`` g > g*/2; ``T_1g`` g > g*; ``T_I`` L_G4 ≤ 0.01 L_G4(0);
``T_2gstar`` g ≥ 2g*; ``T_dp_zero`` dp/dt falls to 0.

Stage I (spec ih.cf.stage1, ih.lemma2). Only p̃ moves; the loss is head 1's
½E(g(0) Σ_s π_s y_s - g* x_{L-2})² with y_s = Σ_{τ<s} A_{sτ}(p̃) x_τ, π_s head 1's ALiBi weights at
p(0) (``init``: c2 p(0) = 0, eq4 p(0) = σ), built with symbolic L as nested sums (O(L²) per
evaluation) and the layer-1 normaliser summed in closed form (expm1 after the compiler's rewrite).
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics.stored import stored_build
from numerics.trajectory import Trajectory

FOUR_GRAM_EVENTS = ("T_g_half", "T_1g", "T_I", "T_2gstar", "T_dp_zero")
FOUR_GRAM_STATE = ("p", "g")
#: (kernel of four_gram_kernels, row, column) of the Jacobian ∂(dp/dt, dg/dt)/∂(p, g)
JACOBIAN_ENTRIES = (("jac_pp", 0, 0), ("jac_pg", 0, 1), ("jac_gp", 1, 0), ("jac_gg", 1, 1))
HEAD1_READINGS = ("canonical", "literal")
INITS = ("eq4", "c2")
#: Dormand–Prince is used up to this time (all hitting times of G_G4 lie before it); Rodas4P after
EARLY_WINDOW = 2.0e3


def _symbols():
    import sympy as sp

    from derivations.induction_head import symbols as S

    return sp, S, sp.Symbol("L", positive=True)


@functools.cache
def _losses(head1_range: str):
    """L_G4 and its flow with L a float parameter: (loss, dp/dt, dg/dt)."""
    from derivations.flows import gradient_flow
    from derivations.induction_head import four_gram

    _, S, Lf = _symbols()
    if head1_range not in HEAD1_READINGS:
        raise InvalidArgument(f"head1_range={head1_range!r} is not one of {', '.join(HEAD1_READINGS)}")
    loss = _fixed_dummies(four_gram.L_G4_derived(head1_range).subs(S.L, Lf))
    return (loss, *gradient_flow(loss, [S.p, S.g]))


def _fixed_dummies(expr):
    """Replace the summation Dummies by plain Symbols of the same name.

    A Dummy's srepr carries a per-process counter, so kernels built from it would miss
    numerics.compile's build memo in every new process (seconds of SymPy rewriting each time).
    The sums of L_G4 are not nested, so one Symbol per name is safe.
    """
    import sympy as sp

    return expr.xreplace({d: sp.Symbol(f"{d.name}_idx", **d.assumptions0) for d in expr.atoms(sp.Dummy)})


@stored_build
def four_gram_flow(head1_range: str = "canonical"):
    """The compiled (p, g) vector field with its events; parameters (L, α*, L_G4(θ(0)))."""
    from numerics.compile import EventSpec, vector_field

    sp, S, Lf = _symbols()
    loss, dp, dg = _losses(head1_range)
    loss0 = sp.Symbol("loss_G4_0", real=True)
    events = [
        EventSpec("T_g_half", S.g - S.gstar / 2, +1),
        EventSpec("T_1g", S.g - S.gstar, +1),
        EventSpec("T_I", loss - loss0 / 100, -1),
        EventSpec("T_2gstar", S.g - 2 * S.gstar, +1),
        EventSpec("T_dp_zero", dp, -1),
    ]
    field = vector_field([dp, dg], [S.p, S.g], [Lf, S.alpha, loss0], name=f"ih_four_gram_{head1_range}",
                         events=events)
    return dataclasses.replace(field, state_names=FOUR_GRAM_STATE)


@stored_build
def four_gram_kernels(head1_range: str = "canonical") -> dict:
    """Grid kernels of (p, g, L, α*): ``loss``, ``dp``, ``dg`` and the Jacobian ``jac_pp``, ``jac_pg``, ``jac_gp``, ``jac_gg``."""
    from derivations.flows import jacobian
    from numerics.compile import grid_kernel

    _, S, Lf = _symbols()
    loss, dp, dg = _losses(head1_range)
    args = [S.p, S.g, Lf, S.alpha]
    (jac_pp, jac_pg), (jac_gp, jac_gg) = jacobian([dp, dg], [S.p, S.g]).tolist()
    exprs = {"loss": loss, "dp": dp, "dg": dg,
             "jac_pp": jac_pp, "jac_pg": jac_pg, "jac_gp": jac_gp, "jac_gg": jac_gg}
    return {key: grid_kernel(expr, args, name=f"ih_four_gram_{key}_{head1_range}") for key, expr in exprs.items()}


@stored_build
def four_gram_jacobian(head1_range: str = "canonical"):
    """Return the (p, g) flow's Jacobian ``jac(t, y, params, out)``, for :class:`numerics.ode.VectorField`.

    A generated module calls the scalar kernels ``jac_pp``, ``jac_pg``, ``jac_gp``, ``jac_gg`` of
    :func:`four_gram_kernels` (SymPy's derivatives of the flow) at y = (p, g) with the field's
    parameters (L, α*, L_G4(0)); being a real module, its kernel is cached like theirs.
    """
    from numerics._modules import load_module

    kern = four_gram_kernels(head1_range)
    imports = [f"from {kern[k].module.__name__} import {kern[k].name} as {k}" for k, _, _ in JACOBIAN_ENTRIES]
    writes = [f"    out[{i}, {j}] = {k}(y[0], y[1], params[0], params[1])" for k, i, j in JACOBIAN_ENTRIES]
    source = "\n".join([
        f"# Generated by numerics.models.induction_head.four_gram.four_gram_jacobian({head1_range!r}).",
        "from numerics._jit import jit", *imports, "", "", "@jit", "def jac(t, y, params, out):",
        '    """d(dp/dt, dg/dt)/d(p, g) at y = (p, g); params = (L, alpha*, L_G4(0))."""', *writes, ""])
    jac = load_module(f"ih_four_gram_jacobian_{head1_range}", source).jac
    jac.compile("void(float64, float64[::1], float64[::1], float64[:, ::1])")
    return jac


class FourGramRun(Trajectory):
    """A (p, g) run as the trajectory type: states p, g; observables loss (L_G4), dp, dg; the hitting
    times with the state there; ``meta`` holds L, alpha, sigma, head1_range, init, loss0, horizon."""

    p = property(lambda self: self.states["p"], doc="p at the saved times")
    g = property(lambda self: self.states["g"], doc="g at the saved times")
    loss = property(lambda self: self.observables["loss"], doc="L_G4 at the saved times")
    dp = property(lambda self: self.observables["dp"], doc="dp/dt at the saved times")
    dg = property(lambda self: self.observables["dg"], doc="dg/dt at the saved times")
    L = property(lambda self: self.meta["L"])
    alpha = property(lambda self: self.meta["alpha"])
    sigma = property(lambda self: self.meta["sigma"])
    head1_range = property(lambda self: self.meta["head1_range"])
    init = property(lambda self: self.meta["init"])
    loss0 = property(lambda self: self.meta["loss0"])
    horizon = property(lambda self: self.meta["horizon"])

    @property
    def gstar(self) -> float:
        """g* = α*/(1+α*)."""
        return self.alpha / (1 + self.alpha)


def initial_state(sigma: float, init: str) -> tuple[float, float]:
    """(p(0), g(0)): ``eq4`` (σ, σ) as in Eq. (4); ``c2`` (0, σ) as at the start of App. C.2."""
    if init not in INITS:
        raise InvalidArgument(f"init={init!r} is not one of {', '.join(INITS)}")
    return (sigma if init == "eq4" else 0.0), sigma


def _check(L: int, alpha: float, sigma: float) -> None:
    if not (isinstance(L, int | np.integer) and L >= 5):
        raise InvalidArgument(f"L={L!r} must be an integer >= 5 (head 1 needs at least three positions)")
    if not alpha > 0:
        raise InvalidArgument(f"alpha={alpha} must be > 0 (alpha* is a relative weight)")
    if not 0 < sigma < 1:
        raise InvalidArgument(f"sigma={sigma} must lie in (0, 1)")


def _save_grid(horizon: float, n_save: int, extra=()) -> np.ndarray:
    grid = np.concatenate([[0.0], np.geomspace(1e-3, horizon, n_save), np.asarray(extra, dtype=float)])
    grid = np.unique(grid[(grid >= 0) & (grid <= horizon)])
    return grid


def four_gram_run(L: int, alpha: float, sigma: float, *, head1_range: str = "canonical", init: str = "eq4",
                  horizon: float = 1e8, n_save: int = 600, rtol: float = 1e-10, extra_times=()) -> FourGramRun:
    """Integrate the (p, g) flow from θ(0) to ``horizon`` (module docstring for the method).

    ``extra_times`` are added to the log-spaced save grid (e.g. a dense linear grid of the
    early window for pointwise chain checks).
    """
    from numerics.ode import Tolerance, integrate

    _check(L, alpha, sigma)
    field = four_gram_flow(head1_range)
    kern = four_gram_kernels(head1_range)
    p0, g0 = initial_state(sigma, init)
    Lf = float(L)
    loss0 = float(kern["loss"].scalar(p0, g0, Lf, float(alpha)))
    params = np.array([Lf, alpha, loss0])
    save = _save_grid(horizon, n_save, extra_times)
    t_early = min(horizon, EARLY_WINDOW)
    early = save[save <= t_early]
    if early[-1] < t_early:
        early = np.append(early, t_early)
    tol = Tolerance(rtol, np.array([1e-13, 1e-13]))
    sol = integrate(field, np.array([p0, g0]), (0.0, t_early), params, tol=tol, save_at=early)
    events = dict(sol.event_times)
    states = {k: {"p": float(v[0]), "g": float(v[1])} for k, v in sol.event_states.items()}
    t_out, y_out = [sol.t], [sol.y]
    if horizon > t_early:
        late = save[save > t_early]
        stiff = dataclasses.replace(field, jac=four_gram_jacobian(head1_range))
        # Saved states and hitting times come from Rodas4P's continuous extension, of order 3, one
        # below its steps: at rtol it is up to ~50x less accurate than the step points (g at t = 1e4,
        # L = 40: 5e-9 against 5e-11). A tenth of rtol brings it to 2e-11 for twice the steps.
        tail_tol = Tolerance(max(rtol / 10, 1e-13), tol.atol)
        t_late, y_late, ev_late = _stiff_tail(stiff, sol.y_final, t_early, horizon, late, params, tail_tol,
                                              [k for k, v in events.items() if not math.isfinite(v)])
        t_out.append(t_late)
        y_out.append(y_late)
        for name, (te, ye) in ev_late.items():
            events[name], states[name] = te, {"p": ye[0], "g": ye[1]}
    t = np.concatenate(t_out)
    y = np.concatenate(y_out)
    keep = np.concatenate([[True], np.diff(t) > 0])
    t, y = t[keep], y[keep]
    p, g = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1])
    observables = {"loss": kern["loss"](p, g, Lf, alpha), "dp": kern["dp"](p, g, Lf, alpha),
                   "dg": kern["dg"](p, g, Lf, alpha)}
    meta = {"L": L, "alpha": alpha, "sigma": sigma, "head1_range": head1_range, "init": init, "loss0": loss0,
            "horizon": horizon, "method": "Dormand-Prince to t=2e3, Rodas4P after", "rtol": rtol}
    return FourGramRun(t, {"p": p, "g": g}, observables, events, states, meta)


def _stiff_tail(field, y0, t0, t1, t_eval, params, tol, pending):
    """Integrate from (t0, y0) to t1 with Rodas4P (``method="rodas4p"``); return the ``pending`` events found.

    The integrator starts every event unfired at ``t0``; only those in ``pending`` (not fired before
    ``t0``) are reported, so an event crossing again on the tail does not overwrite its first time.
    """
    from numerics.ode import integrate

    try:
        sol = integrate(field, y0, (t0, t1), params, tol=tol, save_at=t_eval, method="rodas4p")
    except NumericalTrouble as exc:
        msg = f"the stiff tail of the (p, g) flow at L={params[0]:g}, alpha={params[1]} failed: {exc}"
        raise NumericalTrouble(msg) from exc
    found = {name: (sol.event_times[name], tuple(float(v) for v in sol.event_states[name]))
             for name in pending if math.isfinite(sol.event_times[name])}
    return sol.t, sol.y, found


# ----------------------------------------------------------------------------------------------- Stage I


@functools.cache
def stage1_loss_expr(head1_range: str = "canonical"):
    """Stage-I loss L^I(p̃; L, α*, σ, p(0)) minus head 2's p̃-independent term, with symbolic L.

    L^I = ½ Σ_τ (σ c_τ - g* [τ = L-2])² with c_τ = Σ_{s=τ+1}^{S₁} π_s A_{sτ}(p̃), π_s head 1's
    ALiBi weights at slope p(0) over its range (S₁ = L-1 canonical, L-2 literal) and
    A_{sτ} = e^{-p̃(s-1-τ)}/Σ_{k=0}^{s-2} e^{-p̃k} (Eq. (5)). The τ = L-2 residual is written out
    so that the symbolic-L sums carry no Kronecker delta. Returns (loss, args).
    """
    from numerics.printer import Expm1Ratio

    sp, S, Lf = _symbols()
    if head1_range not in HEAD1_READINGS:
        raise InvalidArgument(f"head1_range={head1_range!r} is not one of {', '.join(HEAD1_READINGS)}")
    p0 = sp.Symbol("p0", nonnegative=True)
    tau, s_ = sp.symbols("tau s_", integer=True, positive=True)
    last = Lf - 1 if head1_range == "canonical" else Lf - 2
    # head 1's normaliser Σ_{s=2}^{S₁} e^{-p(0)(L-1-s)} over lags (0 | 1)..L-3, in closed (expm1) form: a
    # sum here would be re-evaluated inside the double loop (O(L³)); Expm1Ratio is L-2 at p(0) = 0
    normaliser_pi = (Expm1Ratio(Lf - 2, -p0) if head1_range == "canonical"
                     else sp.exp(-p0) * Expm1Ratio(Lf - 3, -p0))
    # Σ_{k=0}^{s-2} e^{-p̃k} summed; the compiler rewrites 1 - e^{-x} as -expm1(-x), exact to rounding
    # for p̃ > 0 (p̃(0) = σ > 0 and p̃ increases)
    A = sp.exp(-S.ptilde * (s_ - 1 - tau)) * (1 - sp.exp(-S.ptilde)) / (1 - sp.exp(-S.ptilde * (s_ - 1)))
    pi = sp.exp(-p0 * (Lf - 1 - s_)) / normaliser_pi
    c = sp.Sum(pi * A, (s_, tau + 1, last))
    squares = sp.Sum(c**2, (tau, 1, Lf - 2))
    c_last = c.subs(tau, Lf - 2)
    loss = S.sigma**2 * squares / 2 - S.sigma * S.gstar * c_last + S.gstar**2 / 2
    return loss, [S.ptilde, Lf, S.alpha, S.sigma, p0]


@stored_build
def stage1_flow(head1_range: str = "canonical"):
    """The compiled Stage-I field dp̃/dt = -dL^I/dp̃; parameters (L, α*, σ, p(0))."""
    from derivations.flows import gradient_flow
    from numerics.compile import vector_field

    loss, args = stage1_loss_expr(head1_range)
    return vector_field(gradient_flow(loss, [args[0]]), [args[0]], args[1:], name=f"ih_stage1_{head1_range}")


@stored_build
def stage1_kernels(head1_range: str = "canonical") -> dict:
    """Grid kernels of (p̃, L, α*, σ, p(0)): ``loss`` L^I and ``velocity`` -dL^I/dp̃."""
    from derivations.flows import gradient_flow
    from numerics.compile import grid_kernel

    loss, args = stage1_loss_expr(head1_range)
    (velocity,) = gradient_flow(loss, [args[0]])
    return {"loss": grid_kernel(loss, args, name=f"ih_stage1_loss_{head1_range}"),
            "velocity": grid_kernel(velocity, args, name=f"ih_stage1_velocity_{head1_range}")}


class Stage1Run(Trajectory):
    """A Stage-I run p̃(t) as the trajectory type: state ptilde, observable velocity dp̃/dt; ``meta``
    holds L, alpha, sigma, init, p0."""

    ptilde = property(lambda self: self.states["ptilde"], doc="p̃ at the saved times")
    velocity = property(lambda self: self.observables["velocity"], doc="dp̃/dt at the saved times")
    L = property(lambda self: self.meta["L"])
    alpha = property(lambda self: self.meta["alpha"])
    sigma = property(lambda self: self.meta["sigma"])
    init = property(lambda self: self.meta["init"])
    p0 = property(lambda self: self.meta["p0"])


def stage1_run(L: int, alpha: float, sigma: float, *, init: str = "c2", horizon: float = 1e7, n_save: int = 300,
               head1_range: str = "canonical", rtol: float = 1e-10, extra_times=()) -> Stage1Run:
    """Integrate dp̃/dt = -dL^I/dp̃ from p̃(0) = σ (both ``init`` modes), output log-spaced to ``horizon``."""
    from numerics.ode import Tolerance, integrate

    _check(L, alpha, sigma)
    p0 = initial_state(sigma, init)[0]
    field = stage1_flow(head1_range)
    params = np.array([float(L), alpha, sigma, p0])
    save = _save_grid(horizon, n_save, extra_times)
    sol = integrate(field, np.array([sigma]), (0.0, horizon), params, tol=Tolerance(rtol, 1e-13), save_at=save)
    pt = np.ascontiguousarray(sol.y[:, 0])
    vel = stage1_kernels(head1_range)["velocity"](pt, float(L), alpha, sigma, p0)
    return Stage1Run(sol.t, {"ptilde": pt}, {"velocity": vel},
                     meta={"L": L, "alpha": alpha, "sigma": sigma, "init": init, "p0": p0, "rtol": rtol})
