r"""The reduced Stage-II gradient flow of the induction-head paper, compiled, with its hitting times.

Spec §2.7 ([W] C.3.1–C.3.2): with the ideal first layer and separate value heads, Stage II is
two independent blocks, (p, g) driven by L_G4 (Eq. (7)'s definition) and (h, w) driven by
L_IH2. Every right-hand side is ``diff`` of the toolkit's own SymPy losses, in each mode:

* ``flow`` — ``paper`` dw/dt = -dL(w²)/dw, ``balanced`` dw/dt = -w ∂_P L|_{P=w²} (half as fast);
* ``ih_loss`` — ``exp_simplified`` (C.3.2's e^{z_s}/(L-2) softmax, ih.cf.L_IH2) or
  ``softmax_largeL`` (the large-L true-softmax loss of ih.dv.softmax_loss);
* ``ih_model_range`` — ``canonical`` / ``literal`` head-2 range (exp_simplified only: the large-L
  loss has no range at leading order); ``head1_range`` for the (p, g) block;
* ``tokens`` — ``gaussian`` or ``boolean`` (ih.dv.boolean's closed forms).

Entry points
------------
``stage2_velocity(...)(p, g, h, w, L, alpha, wstar) -> (dp/dt, dg/dt, dh/dt, dw/dt)``
    Pointwise velocities at arrays of states (broadcasting; w itself, not ln w), for checks of
    proof-chain inequalities along trajectories.
``stage2_run(L, alpha, wstar, sigma, ...) -> (Solution, (L_G4, L_IH2))``
    One run of the four-variable flow (p, g, h, ln w) from θ(0) = σ; stops at T_III.
``ih_flow(...)`` / ``ih_run(...)``
    The (h, ln w) block alone in scaled time τ = t/S (S = (1+α*)²L ln(1/σ)/w*², spec §2.11), with
    q = dh/dτ integrated beside it (its sign stays resolved where f_h(h, w)'s is noise),
    so that many points share one save grid (``numerics.models.induction_head.sweeps``); it
    runs past T_III into Phase IV and stops at T_tail (unless the tail stop is switched off).
    This is the one (h, w) engine of the toolkit: Thm 4's sweeps and the proof-level runs of
    ``checks.induction_head.ih_proof_runs`` both integrate it.
``ih_velocity(...)(h, w, L, alpha, wstar)``, ``ih_loss_kernel(...)(h, log_w, L, alpha, wstar)``
    dh/dt, dw/dt (in t) and L_IH2 at arrays of (h, w) states.

Events (first crossings; all times in t): T_1g g > g*; T_I L_G4 <= 0.01 L_G4(0); T_o = T_1^h
h > h*; T_2h dh/dt = 0 from above (in ``ih_flow`` the state q = dh/dτ, in ``stage2_flow`` f_h(h, w)); T_w_001 w > 0.01 w*; T_w_half w > w*/2; T_II / T_III
L_IH2 <= 0.99 / 0.01 L_IH2(T_o). ``ih_flow`` only: T_h_half h > h*/2; T_h_below h < h* from
above (the first return below h*, i.e. T^h_{h*} after T_2^h); T_tail L_IH2 - L_min <=
f (L_IH2(T_o) - L_min) with f a parameter (1e-10; f < 0 switches the stop off).
An event whose condition already holds at t = 0 does not fire (``numerics.ode``): w(0) = σ >
0.01w* is reported by the callers as T_w_001 = 0.

The SymPy forms behind every kernel are remembered on disk (``stored``), and so are the compiled
builders themselves (``stored_build``): a warm process recalls a field or a grid kernel from its
generated module and numba's cache without importing SymPy.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from derivations.errors import InvalidArgument
from numerics.stored import stored, stored_build
from numerics.models.induction_head.tokens import TOKEN_LAWS

#: hitting times of the Stage-II flow (spec §1 and Thm 4), as events of the integrator
STAGE2_EVENTS = ("T_1g", "T_I", "T_o", "T_2h", "T_w_001", "T_w_half", "T_II", "T_III")
STAGE2_STATE = ("p", "g", "h", "log_w")
IH_EVENTS = ("T_o", "T_2h", "T_w_001", "T_w_half", "T_II", "T_h_half", "T_h_below", "T_III", "T_tail")
#: the (h, w) engine's state: h, ln w and q = dh/dτ integrated with them (see :func:`ih_flow`)
IH_STATE = ("h", "log_w", "dh_dtau")
IH_LOSS_MODES = ("exp_simplified", "softmax_largeL")
RANGES = ("canonical", "literal")
#: q = dh/dτ's absolute tolerance, whatever the state's (:func:`ih_tolerance`)
RATE_ATOL = 1e-12
#: |dh/dτ| below which the sign of a *saved* q is not resolved: saved values come from the dense output between
#: step ends, which the step control does not bound (against a run at rtol 1e-12, errors up to 2·10⁻⁹ on the
#: plateau of (L, α*, w*, σ) = (400, 4, 0.65, 10⁻⁸), where q sits near its tolerance)
RATE_RESOLUTION = 1e-8
#: T_tail fires when L_IH2 - L_min has fallen to this fraction of L_IH2(T_o) - L_min
TAIL_FRACTION = 1e-10
#: the tail fraction that never fires (L_IH2 - L_min >= 0 > -(L_IH2(T_o) - L_min))
NO_TAIL = -1.0


def check_modes(flow: str, ih_model_range: str, ih_loss: str, tokens: str = "gaussian") -> None:
    """Refuse unknown mode flags (spec §2.10), naming the flag and the valid values."""
    for name, value, valid in (("flow", flow, ("paper", "balanced")), ("ih_model_range", ih_model_range, RANGES),
                               ("ih_loss", ih_loss, IH_LOSS_MODES), ("tokens", tokens, TOKEN_LAWS)):
        if value not in valid:
            raise InvalidArgument(f"{name}={value!r} is not one of {', '.join(valid)}")
    if ih_loss == "softmax_largeL" and ih_model_range != "canonical":
        raise InvalidArgument(f"ih_model_range={ih_model_range!r} with ih_loss='softmax_largeL': the large-L loss "
                              "has no range at leading order (one position in L-2); use ih_model_range='canonical'")


@stored
def ih_loss_expr(ih_model_range: str = "canonical", ih_loss: str = "exp_simplified", tokens: str = "gaussian"):
    """The IH loss L_IH2(h, w; L, α*, w*) of a mode, as a SymPy expression (symbols of ``symbols``)."""
    from derivations.induction_head import derive_verify, ih_head

    check_modes("paper", ih_model_range, ih_loss, tokens)
    if ih_loss == "softmax_largeL":
        return derive_verify.softmax_largeL_derived(tokens)
    return ih_head.L_IH2_derived(ih_model_range, law="rademacher" if tokens == "boolean" else "gaussian")


@stored
def _ih_block(flow: str, ih_model_range: str, ih_loss: str, tokens: str):
    """(loss, dh/dt, d ln w/dt) in the symbols (h, log_w, L float, α*, w*), then (dh/dt, dw/dt) in w, ln w, L."""
    import sympy as sp

    from derivations.flows import balanced_manifold_flow
    from derivations.induction_head import symbols as S

    check_modes(flow, ih_model_range, ih_loss, tokens)
    lw, Lf = sp.Symbol("log_w", real=True), sp.Symbol("L", positive=True)
    loss = ih_loss_expr(ih_model_range, ih_loss, tokens).subs(S.L, Lf)
    dw, dh = balanced_manifold_flow(loss, S.w, [S.h], S.reduced_mode(flow))
    on_log = {S.w: sp.exp(lw)}
    return loss.subs(on_log), dh.subs(on_log), (dw / S.w).subs(on_log), (dh, dw), lw, Lf


def _suffix(ih_loss: str, tokens: str) -> str:
    # the default modes keep the historical kernel names (no recompilation for existing callers)
    return ("" if ih_loss == "exp_simplified" else "_smLL") + ("" if tokens == "gaussian" else "_bool")


def _ih_events(h_sym, lw, loss, dh, extra=()):
    """The IH-head events shared by both fields (relative ones use L_IH2 at T_o)."""
    import sympy as sp

    from derivations.induction_head import symbols as S
    from numerics.compile import EventSpec, event_state

    loss_at_o = loss.subs({h_sym: event_state("T_o", h_sym), lw: event_state("T_o", lw)})
    return [
        EventSpec("T_o", h_sym - S.hstar, +1),
        EventSpec("T_2h", dh, -1),
        EventSpec("T_w_001", lw - sp.log(S.wstar / 100), +1),
        EventSpec("T_w_half", lw - sp.log(S.wstar / 2), +1),
        EventSpec("T_II", loss - sp.Rational(99, 100) * loss_at_o, -1),
        *extra(loss_at_o),
    ]


@stored_build
def stage2_flow(flow: str = "paper", head1_range: str = "canonical", ih_model_range: str = "canonical",
                ih_loss: str = "exp_simplified", tokens: str = "gaussian", closed_sums: bool = True):
    """The reduced Stage-II flow of (p, g, h, ln w), compiled from the SymPy losses with ``diff``.

    State (p, g, h, ln w): integrating ln w keeps full relative accuracy on the plateau for
    small initialisations (spec §8). Parameters (L, α*, w*, L_G4(θ(0))). Events: module
    docstring (T_III is terminal; there is no T_tail). With the exact Jacobian, for
    ``method="rodas4p"``: the (p, g) block is stiff at long times, where a Rosenbrock method
    takes about 500 steps against Dormand–Prince's 6 000 (``tdcheck bench ih-batch``).
    ``closed_sums=False`` keeps M(p), m(p) and their kin as loops (see ``numerics.compile``).
    """
    import sympy as sp

    from derivations.induction_head import symbols as S
    from numerics.compile import EventSpec, vector_field

    loss_ih, dh, dlw, _, lw, Lf = _ih_block(flow, ih_model_range, ih_loss, tokens)
    loss0 = sp.Symbol("loss_G4_0", real=True)
    loss_g4, dp, dg = g4_block(head1_range)
    rhs = [dp, dg, dh, dlw]
    events = [
        EventSpec("T_1g", S.g - S.gstar, +1),
        EventSpec("T_I", loss_g4 - loss0 / 100, -1),
        *_ih_events(S.h, lw, loss_ih, dh, lambda at_o: [EventSpec("T_III", loss_ih - at_o / 100, -1, terminal=True)]),
    ]
    name = f"ih_stage2_{flow}_{head1_range}_{ih_model_range}{_suffix(ih_loss, tokens)}"
    field = vector_field(rhs, [S.p, S.g, S.h, lw], [Lf, S.alpha, S.wstar, loss0], name=name, events=events,
                         jacobian=True, closed_sums=closed_sums)
    return dataclasses.replace(field, state_names=STAGE2_STATE)


@stored_build
def ih_flow(flow: str = "paper", ih_model_range: str = "canonical", ih_loss: str = "exp_simplified",
            tokens: str = "gaussian"):
    """The (h, ln w) block alone, in scaled time τ = t/S: d(h, ln w)/dτ = S·(dh/dt, d ln w/dt), with
    q = dh/dτ as a third state: dq/dτ = S·(∂_h f_h·q + ∂_{ln w} f_h·d ln w/dτ), f_h = dh/dt.

    Why q is integrated rather than read off f_h(h, w): on a long plateau, and again near (h*, w*),
    h tracks its quasi-steady value so closely that dh/dt is 10⁻¹⁷–10⁻¹⁴ of f_h's terms, below the
    state error at any double-precision tolerance, and the computed sign of f_h(h, w) is noise. The
    variational equation for q has coefficients that the state error perturbs only relatively, and
    the step control bounds q's own error at step ends (rtol·|q| + :data:`RATE_ATOL`): T_2h is q's
    downward zero. Saved values of q between step ends come from the dense output, whose error the
    control does not bound; their sign counts only above :data:`RATE_RESOLUTION`. On the plateaus of
    small σ and w* near 1/√2, q itself is below that level, and the sign of dh/dt there is not
    resolved by either route. q(0) = S·f_h(σ, σ) (:func:`ih_initial`).

    Parameters (L, α*, w*, S, L_min, f): L_min the minimum of L_IH2 and f the fraction of the
    terminal T_tail event (:data:`TAIL_FRACTION`; :data:`NO_TAIL` never stops). Event times
    are in τ; multiply by S for t.
    """
    import sympy as sp

    from derivations.flows import induced_flow
    from derivations.induction_head import symbols as S
    from numerics.compile import EventSpec, vector_field

    loss, dh, dlw, _, lw, Lf = _ih_block(flow, ih_model_range, ih_loss, tokens)
    scale, loss_min = sp.Symbol("S", positive=True), sp.Symbol("L_min", real=True)
    tail = sp.Symbol("tail_fraction", real=True)
    rate = sp.Symbol(IH_STATE[2], real=True)
    # d/dτ of q = S·f_h(h, ln w) by the chain rule, with dh/dτ read from q itself: S·(∂_h f_h·q + ∂_{ln w} f_h·d ln w/dτ)
    drate = induced_flow([rate, scale * dlw], [S.h, lw], {rate: scale * dh})[rate]
    events = _ih_events(S.h, lw, loss, rate, lambda at_o: [
        EventSpec("T_h_half", S.h - S.hstar / 2, +1),
        EventSpec("T_h_below", S.h - S.hstar, -1),
        EventSpec("T_III", loss - at_o / 100, -1),
        EventSpec("T_tail", loss - loss_min - tail * (at_o - loss_min), -1, terminal=True)])
    name = f"ih_head2q_{flow}_{ih_model_range}{_suffix(ih_loss, tokens)}"
    field = vector_field([scale * dh, scale * dlw, drate], [S.h, lw, rate],
                         [Lf, S.alpha, S.wstar, scale, loss_min, tail], name=name, events=events)
    return dataclasses.replace(field, state_names=IH_STATE)


def g4_block(head1_range: str = "canonical"):
    """(L_G4, dp/dt, dg/dt) with L a float symbol: the 4-gram block's own forms (``four_gram``), Dummies fixed."""
    from numerics.models.induction_head.four_gram import _losses

    return _losses(head1_range)


@stored_build
def stage2_losses(head1_range: str = "canonical", ih_model_range: str = "canonical",
                  ih_loss: str = "exp_simplified", tokens: str = "gaussian"):
    """Grid kernels (L_G4, L_IH2) of the state (p, g, h, ln w) and parameters (L, α*, w*)."""
    import sympy as sp

    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    lw = sp.Symbol("log_w", real=True)
    Lf = sp.Symbol("L", positive=True)
    g4 = g4_block(head1_range)[0]
    ih = ih_loss_expr(ih_model_range, ih_loss, tokens).subs({S.L: Lf, S.w: sp.exp(lw)})
    args = [S.p, S.g, S.h, lw, Lf, S.alpha, S.wstar]
    return (grid_kernel(g4, args, name=f"ih_LG4_{head1_range}"),
            grid_kernel(ih, args, name=f"ih_LIH2_{ih_model_range}{_suffix(ih_loss, tokens)}"))


@stored_build
def ih_loss_kernel(ih_model_range: str = "canonical", ih_loss: str = "exp_simplified", tokens: str = "gaussian"):
    """Grid kernel L_IH2(h, log_w, L, α*, w*) of a mode (the loss of :func:`ih_flow`'s events)."""
    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    loss, _, _, _, lw, Lf = _ih_block("paper", ih_model_range, ih_loss, tokens)
    return grid_kernel(loss, [S.h, lw, Lf, S.alpha, S.wstar], name=f"ih_loss_{ih_model_range}{_suffix(ih_loss, tokens)}")


@stored_build
def ih_velocity(flow: str = "paper", ih_model_range: str = "canonical", ih_loss: str = "exp_simplified",
                tokens: str = "gaussian"):
    """Grid kernels (dh/dt, dw/dt) of (h, w, L, α*, w*), w > 0 itself: the (h, w) block of the flow, in t."""
    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    _, _, _, (dh, dw), _, Lf = _ih_block(flow, ih_model_range, ih_loss, tokens)
    tag = f"{flow}_{ih_model_range}{_suffix(ih_loss, tokens)}"
    args = [S.h, S.w, Lf, S.alpha, S.wstar]
    return grid_kernel(dh, args, name=f"ih_vel_dh_{tag}"), grid_kernel(dw, args, name=f"ih_vel_dw_{tag}")


@dataclasses.dataclass(frozen=True)
class Velocity:
    """(dp/dt, dg/dt, dh/dt, dw/dt) of the Stage-II flow at broadcast states (p, g, h, w) and (L, α*, w*)."""

    pg: tuple
    hw: tuple
    modes: dict

    def __call__(self, p, g, h, w, L, alpha, wstar) -> tuple[np.ndarray, ...]:
        """Velocities at the given states; w > 0 (not ln w). Returns four float64 arrays of the broadcast shape."""
        w = np.asarray(w, dtype=float)
        if np.any(~(w > 0)):
            raise InvalidArgument(f"w must be > 0 (the flow is written in ln w); got min {np.min(w)}")
        shape = np.broadcast_shapes(*(np.shape(x) for x in (p, g, h, w, L, alpha, wstar)))
        out = [k(p, g, L, alpha) for k in self.pg] + [k(h, w, L, alpha, wstar) for k in self.hw]
        return tuple(np.array(np.broadcast_to(x, shape)) for x in out)


@stored_build
def stage2_velocity(flow: str = "paper", head1_range: str = "canonical", ih_model_range: str = "canonical",
                    ih_loss: str = "exp_simplified", tokens: str = "gaussian") -> Velocity:
    """The pointwise velocity field of :func:`stage2_flow` (same expressions), for checks along trajectories.

    ``stage2_velocity(flow)(p, g, h, w, L, alpha, wstar)`` → (dp/dt, dg/dt, dh/dt, dw/dt), each
    broadcast over its inputs (numba ``prange`` grid kernels, identical for any thread count):
    the 4-gram kernels of ``four_gram`` and :func:`ih_velocity`.
    """
    from numerics.models.induction_head.four_gram import four_gram_kernels

    kernels = four_gram_kernels(head1_range)
    return Velocity((kernels["dp"], kernels["dg"]), ih_velocity(flow, ih_model_range, ih_loss, tokens),
                    {"flow": flow, "head1_range": head1_range, "ih_model_range": ih_model_range,
                     "ih_loss": ih_loss, "tokens": tokens})


def check_point(L, alpha: float, wstar: float, sigma: float, tokens: str = "gaussian") -> None:
    """Refuse parameters outside the flow's domain, naming the constraint."""
    if not (isinstance(L, int | np.integer) and L >= 5):
        raise InvalidArgument(f"L={L!r} must be an integer >= 5 (head 1 needs positions 2..L-1)")
    if not 0 < sigma < 1:
        raise InvalidArgument(f"sigma={sigma} must lie in (0, 1)")
    if not alpha > 0:
        raise InvalidArgument(f"alpha={alpha} must be > 0 (alpha* = Ω(1))")
    if tokens == "gaussian" and not 0 < wstar < 2**-0.5:
        raise InvalidArgument(f"wstar={wstar} violates 2*wstar**2 < 1 (Eq. (10) diverges); choose wstar < 0.7071")
    if not wstar > 0:
        raise InvalidArgument(f"wstar={wstar} must be > 0")


def time_scale(L: float, alpha: float, wstar: float, sigma: float) -> float:
    """S = (1+α*)² L ln(1/σ)/w*², the printed rate of T_II and T_III (spec §2.11)."""
    return (1 + alpha) ** 2 * L * math.log(1 / sigma) / wstar**2


def stage2_run(L: int, alpha: float, wstar: float, sigma: float, *, flow: str = "paper", init: str = "eq4",
               horizon: float | None = None, rtol: float = 1e-10, atol: float = 1e-13, n_save: int = 400,
               head1_range: str = "canonical", ih_model_range: str = "canonical", ih_loss: str = "exp_simplified",
               tokens: str = "gaussian"):
    """Integrate the Stage-II flow from θ(0) (``init``: eq4 all at σ; c2 is refused, see below).

    Returns the :class:`numerics.ode.Solution` (times log-spaced from 1e-3 to the horizon) and
    the losses (L_G4, L_IH2) at the saved times. The default horizon is 60 S
    (:func:`time_scale`); integration stops at T_III.
    """
    from numerics.ode import Tolerance, integrate

    check_point(L, alpha, wstar, sigma, tokens)
    if init not in ("eq4", "c2"):
        raise InvalidArgument(f"init={init!r} is not one of eq4, c2")
    if init == "c2":
        raise InvalidArgument("init='c2' sets w(0) = 0, a fixed point of the w-flow; Stage II needs w(0) > 0")
    horizon = horizon or 60 * time_scale(L, alpha, wstar, sigma)
    field = stage2_flow(flow, head1_range, ih_model_range, ih_loss, tokens)
    g4_kernel, ih_kernel = stage2_losses(head1_range, ih_model_range, ih_loss, tokens)
    y0 = np.array([sigma, sigma, sigma, math.log(sigma)])
    loss0 = float(g4_kernel(*y0, float(L), alpha, wstar))
    params = np.array([float(L), alpha, wstar, loss0])
    save = np.concatenate([[0.0], np.geomspace(1e-3, horizon, n_save)])
    solution = integrate(field, y0, (0.0, horizon), params, tol=Tolerance(rtol, atol), save_at=save)
    y = solution.y
    losses = (g4_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar),
              ih_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar))
    return solution, losses


@stored
def _profile_exprs(ih_model_range: str, ih_loss: str, tokens: str):
    """(h_eq(w), L_IH2(h_eq(w), w)) in (w, L float, α*, w*)."""
    import sympy as sp

    from derivations.induction_head import symbols as S
    from derivations.induction_head.derive_verify import h_equilibrium

    Lf = sp.Symbol("L", positive=True)
    loss = ih_loss_expr(ih_model_range, ih_loss, tokens).subs(S.L, Lf)
    h_eq = h_equilibrium(loss)
    return h_eq, loss.subs(S.h, h_eq), Lf


@stored_build
def ih_profile(ih_model_range: str = "canonical", ih_loss: str = "exp_simplified", tokens: str = "gaussian"):
    """Grid kernels (h_eq(w), L_IH2(h_eq(w), w)): the minimiser in h at fixed w and the profile loss."""
    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    h_eq, profile, Lf = _profile_exprs(ih_model_range, ih_loss, tokens)
    args = [S.w, Lf, S.alpha, S.wstar]
    tag = f"{ih_model_range}{_suffix(ih_loss, tokens)}"
    return grid_kernel(h_eq, args, name=f"ih_heq_{tag}"), grid_kernel(profile, args, name=f"ih_profile_{tag}")


@functools.lru_cache(maxsize=4096)
def ih_minimiser(L: float, alpha: float, wstar: float, *, ih_model_range: str = "canonical",
                 ih_loss: str = "exp_simplified", tokens: str = "gaussian") -> tuple[float, float, float]:
    """(w_min, h_min, L_min): the minimiser of L_IH2 over (h, w > 0) (Brent on the profile in w)."""
    from scipy.optimize import minimize_scalar

    h_eq, profile = ih_profile(ih_model_range, ih_loss, tokens)
    upper = 2**-0.5 * (1 - 1e-9) if tokens == "gaussian" else 3.0
    f = lambda x: float(profile(x, float(L), alpha, wstar))  # noqa: E731
    found = minimize_scalar(f, bounds=(1e-9, upper), method="bounded", options={"xatol": 1e-13})
    return float(found.x), float(h_eq(found.x, float(L), alpha, wstar)), float(found.fun)


def ih_initial(L, alpha, wstar, sigma, *, ih_model_range="canonical", ih_loss="exp_simplified",
               tokens="gaussian", tail: float = TAIL_FRACTION) -> tuple[np.ndarray, np.ndarray, dict]:
    """(y0, params, extras) of :func:`ih_flow` from h(0) = w(0) = σ (Eq. (4)); extras hold S and the minimiser.

    ``tail`` is the T_tail fraction (:data:`NO_TAIL`: run to the horizon).
    """
    check_point(L, alpha, wstar, sigma, tokens)
    scale = time_scale(L, alpha, wstar, sigma)
    w_min, h_min, loss_min = ih_minimiser(L, alpha, wstar, ih_model_range=ih_model_range, ih_loss=ih_loss,
                                          tokens=tokens)
    # dh/dt = -∂_h L_IH2 in every flow mode (the modes differ in dw/dt only)
    rate = scale * float(ih_velocity("paper", ih_model_range, ih_loss, tokens)[0](sigma, sigma, float(L), alpha, wstar))
    y0 = np.array([sigma, math.log(sigma), rate])
    params = np.array([float(L), float(alpha), float(wstar), scale, loss_min, float(tail)])
    return y0, params, {"S": scale, "w_min": w_min, "h_min": h_min, "L_min": loss_min}


def ih_tolerance(rtol: float, atol: float):
    """The tolerance of :func:`ih_flow`'s runs: ``rtol``; ``atol`` on (h, ln w) and :data:`RATE_ATOL` on q.

    Where the explicit method is at its stability limit (the plateaus at w* near 1/√2, L = 4000), an
    absolute tolerance on q as tight as the state's makes the step control chatter: 157·10⁶ steps
    against 3.4·10⁶ at (L, α*, w*, σ) = (4000, 9, 0.7, 10⁻⁸) with atol 10⁻¹³, and at 10⁻¹⁵ the run
    does not finish in 5·10⁷ steps. At 10⁻¹² T_2h stays within 3·10⁻⁷ of a run at rtol 10⁻¹² on the
    configurations measured. Saved values of q are resolved only above :data:`RATE_RESOLUTION`
    (``Run.rate_resolved`` of the proof runs).
    """
    from numerics.ode import Tolerance

    return Tolerance(rtol, np.array([atol, atol, RATE_ATOL]))


def ih_run(L: int, alpha: float, wstar: float, sigma: float, *, flow: str = "paper",
           ih_model_range: str = "canonical", ih_loss: str = "exp_simplified", tokens: str = "gaussian",
           horizon: float = 60.0, rtol: float = 1e-10, atol: float = 1e-13, save_tau=None, max_steps: int = 10**7,
           tail: float = TAIL_FRACTION):
    """One run of :func:`ih_flow` (scaled time τ = t/S, to τ = ``horizon`` or T_tail).

    Returns (Solution in τ, extras with "S", "L_min", "w_min", "h_min"). ``save_tau`` defaults to
    0 and 600 log-spaced τ from 1e-8 to the horizon.
    """
    from numerics.ode import integrate

    y0, params, extras = ih_initial(L, alpha, wstar, sigma, ih_model_range=ih_model_range, ih_loss=ih_loss,
                                    tokens=tokens, tail=tail)
    save = default_save_grid(horizon) if save_tau is None else np.asarray(save_tau, dtype=float)
    solution = integrate(ih_flow(flow, ih_model_range, ih_loss, tokens), y0, (0.0, horizon), params,
                         tol=ih_tolerance(rtol, atol), save_at=save, max_steps=max_steps)
    return solution, extras


def default_save_grid(horizon: float = 60.0, n_log: int = 600, n_linear: int = 0,
                      linear_end: float | None = None) -> np.ndarray:
    """0, ``n_log`` log-spaced τ in [1e-8, horizon] and ``n_linear`` evenly spaced ones on [0, linear_end].

    ``linear_end`` defaults to the horizon (and is capped by it).
    """
    end = horizon if linear_end is None else min(linear_end, horizon)
    parts = [[0.0], np.geomspace(1e-8, horizon, n_log)]
    if n_linear:
        parts.append(np.linspace(0.0, end, n_linear))
    return np.unique(np.concatenate(parts))
