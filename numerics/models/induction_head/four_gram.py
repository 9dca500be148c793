"""The 4-gram head's (p, g) gradient flow to long horizons, and the Stage-I flow of p̃, compiled from SymPy.

(p, g) block (spec ih.cf.flow_pg; [W] C.3.1). dp/dt = -∂L_G4/∂p, dg/dt = -∂L_G4/∂g with the
toolkit's own L_G4 (``derivations.induction_head.four_gram.L_G4_derived``) in either
``head1_range``. Late in the run u = e^{-p} → 0 and the block is stiff: g relaxes at rate
‖π‖² ≈ 1 while u decays like t^{-1/2} (ih.dv.G4_tail), so an explicit method needs ~t/3 steps
to reach t. The run therefore integrates the early window, where every hitting time lies, with
:func:`numerics.ode.integrate` (Dormand–Prince, events on the dense output) and continues the
tail with SciPy's LSODA (switching to BDF when stiff) and the compiled Jacobian, as the spec (§0.2
item 8, "LSODA or Radau") asks; :mod:`numerics.ode` has no stiff method. (Radau agrees to 1e-9 but
needs 4–40× more evaluations here: 0.1 s against 1.5–10 s per run to t = 1e8.) The state is (p, g) with
p = -ln u: integrating ln u instead of u keeps full relative accuracy of u ~ 1e-4 at t = 1e8.

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

FOUR_GRAM_EVENTS = ("T_g_half", "T_1g", "T_I", "T_2gstar", "T_dp_zero")
FOUR_GRAM_STATE = ("p", "g")
HEAD1_READINGS = ("canonical", "literal")
INITS = ("eq4", "c2")
#: Dormand–Prince is used up to this time (all hitting times of G_G4 lie before it); LSODA after
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


@dataclasses.dataclass
class FourGramRun:
    """A (p, g) trajectory: saved times, states, loss and velocities there, and the hitting times."""

    L: int
    alpha: float
    sigma: float
    head1_range: str
    init: str
    t: np.ndarray
    p: np.ndarray
    g: np.ndarray
    loss: np.ndarray
    dp: np.ndarray
    dg: np.ndarray
    events: dict[str, float]
    event_states: dict[str, tuple[float, float]]
    loss0: float
    horizon: float

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
    states = {k: (float(v[0]), float(v[1])) for k, v in sol.event_states.items()}
    t_out, y_out = [sol.t], [sol.y]
    if horizon > t_early:
        late = save[save > t_early]
        t_late, y_late, ev_late = _stiff_tail(field, kern, sol.y_final, t_early, horizon, late, Lf, alpha, loss0,
                                              rtol, [k for k, v in events.items() if not math.isfinite(v)])
        t_out.append(t_late)
        y_out.append(y_late)
        for name, (te, ye) in ev_late.items():
            events[name], states[name] = te, ye
    t = np.concatenate(t_out)
    y = np.concatenate(y_out)
    keep = np.concatenate([[True], np.diff(t) > 0])
    t, y = t[keep], y[keep]
    p, g = np.ascontiguousarray(y[:, 0]), np.ascontiguousarray(y[:, 1])
    return FourGramRun(L, alpha, sigma, head1_range, init, t, p, g, kern["loss"](p, g, Lf, alpha),
                       kern["dp"](p, g, Lf, alpha), kern["dg"](p, g, Lf, alpha), events, states, loss0, horizon)


def _stiff_tail(field, kern, y0, t0, t1, t_eval, Lf, alpha, loss0, rtol, pending):
    """LSODA with the compiled Jacobian from (t0, y0) to t1; locate the still-pending events."""
    from scipy.integrate import solve_ivp

    rhs_out = np.empty(2)
    params = np.array([Lf, alpha, loss0])
    jac_pp, jac_pg, jac_gp, jac_gg = (kern[k].scalar for k in ("jac_pp", "jac_pg", "jac_gp", "jac_gg"))

    def fun(_t, y):
        field.rhs(0.0, np.ascontiguousarray(y, dtype=np.float64), params, rhs_out)
        return rhs_out.copy()

    def jac(_t, y):
        p, g = float(y[0]), float(y[1])
        return np.array([[jac_pp(p, g, Lf, alpha), jac_pg(p, g, Lf, alpha)],
                         [jac_gp(p, g, Lf, alpha), jac_gg(p, g, Lf, alpha)]], dtype=float)

    n_ev = len(field.event_names)
    ev_buf = np.empty(n_ev)
    nan_t, nan_s = np.full(n_ev, np.nan), np.full((n_ev, 2), np.nan)

    def event_values(y) -> np.ndarray:
        field.events(0.0, np.ascontiguousarray(y, dtype=np.float64), params, nan_t, nan_s, ev_buf)
        return ev_buf.copy()

    result = solve_ivp(fun, (t0, t1), np.asarray(y0, dtype=float), method="LSODA", jac=jac, rtol=rtol,
                       atol=np.array([1e-13, 1e-13]), t_eval=t_eval, dense_output=True)
    if result.status < 0 or not np.all(np.isfinite(result.y)):
        raise NumericalTrouble(f"LSODA tail of the (p, g) flow failed at L={Lf:g}, alpha={alpha}: {result.message}")
    found = {}
    # Pending events are located after the run (SciPy's in-run location raises when rounding flips an
    # event value that is ~1e-300, e.g. dp/dt once g has decayed to 0 in the literal reading).
    values = np.array([event_values(y) for y in result.y.T]) if result.t.size else np.empty((0, n_ev))
    for j, name in enumerate(field.event_names):
        if name not in pending or values.shape[0] < 2:
            continue
        before = np.concatenate([[event_values(y0)[j]], values[:-1, j]])
        times = np.concatenate([[t0], result.t[:-1]])
        direction = field.event_directions[j]
        crossed = ((before < 0) & (values[:, j] >= 0)) if direction > 0 else ((before > 0) & (values[:, j] <= 0))
        if direction == 0:
            crossed = np.sign(before) != np.sign(values[:, j])
        hits = np.flatnonzero(crossed & np.isfinite(before) & np.isfinite(values[:, j]))
        if not hits.size:
            continue
        k = int(hits[0])
        lo, hi = times[k], result.t[k]
        g_lo = event_values(result.sol(lo))[j]
        for _ in range(200):  # bisection on the dense output (robust to a rounding-level event value)
            mid = 0.5 * (lo + hi)
            g_mid = event_values(result.sol(mid))[j]
            if (g_mid < 0) == (g_lo < 0) and g_mid != 0:
                lo, g_lo = mid, g_mid
            else:
                hi = mid
            if hi - lo <= 1e-13 * hi:
                break
        y_hit = result.sol(hi)
        found[name] = (float(hi), (float(y_hit[0]), float(y_hit[1])))
    return result.t, result.y.T, found


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


@dataclasses.dataclass
class Stage1Run:
    """A Stage-I trajectory p̃(t) on a log grid, with the velocity there."""

    L: int
    alpha: float
    sigma: float
    init: str
    p0: float
    t: np.ndarray
    ptilde: np.ndarray
    velocity: np.ndarray


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
    return Stage1Run(L, alpha, sigma, init, p0, sol.t, pt, vel)
