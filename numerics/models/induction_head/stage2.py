"""The reduced Stage-II gradient flow of the induction-head paper, compiled, with its hitting times."""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from derivations.errors import InvalidArgument

#: hitting times of the Stage-II flow (spec §1 and Thm 4), as events of the integrator
STAGE2_EVENTS = ("T_1g", "T_I", "T_o", "T_2h", "T_w_half", "T_II", "T_III")
STAGE2_STATE = ("p", "g", "h", "log_w")


@functools.cache
def stage2_flow(flow: str = "paper", head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """The reduced Stage-II flow of (p, g, h, w), compiled from the SymPy losses with ``diff``.

    State (p, g, h, ln w): integrating ln w keeps full relative accuracy on the plateau for
    small initialisations (spec §8). Parameters (L, α*, w*, L_G4(θ(0))). The (p, g) block is
    the gradient flow of the derived L_G4 (Eq. (7)'s definition), the (h, w) block that of the
    derived exp-simplified L_IH2 (Eq. (10)'s definition) in the given ``flow`` mode.

    Events (first crossing): T_1g g > g*; T_I L_G4 <= 0.01 L_G4(0); T_o = T_1^h h > h*;
    T_2h dh/dt = 0 from above; T_w_half w > w*/2; T_II L_IH2 <= 0.99 L_IH2(T_o);
    T_III L_IH2 <= 0.01 L_IH2(T_o).
    """
    import sympy as sp

    from derivations.flows import reduced_velocity
    from derivations.induction_head import four_gram, ih_head
    from derivations.induction_head import symbols as S
    from numerics.compile import EventSpec, event_state, vector_field

    lw, loss0 = sp.symbols("log_w loss_G4_0", real=True)
    Lf = sp.Symbol("L", positive=True)  # the float parameter L
    loss_g4 = four_gram.L_G4_derived(head1_range).subs(S.L, Lf)
    loss_ih = ih_head.L_IH2_derived(ih_model_range).subs(S.L, Lf)
    P = sp.Symbol("P", positive=True)
    dp, dg = -sp.diff(loss_g4, S.p), -sp.diff(loss_g4, S.g)
    dh = -sp.diff(loss_ih, S.h)
    dw = reduced_velocity(loss_ih.subs(S.w, sp.sqrt(P)), P, S.w, flow)
    on_log = {S.w: sp.exp(lw)}
    rhs = [dp, dg, dh.subs(on_log), (dw / S.w).subs(on_log)]
    ih_loss = loss_ih.subs(on_log)
    h_o, lw_o = event_state("T_o", S.h), event_state("T_o", lw)
    ih_loss_at_o = loss_ih.subs({S.h: h_o, S.w: sp.exp(lw_o)})
    events = [
        EventSpec("T_1g", S.g - S.gstar, +1),
        EventSpec("T_I", loss_g4 - loss0 / 100, -1),
        EventSpec("T_o", S.h - S.hstar, +1),
        EventSpec("T_2h", rhs[2], -1),
        EventSpec("T_w_half", lw - sp.log(S.wstar / 2), +1),
        EventSpec("T_II", ih_loss - sp.Rational(99, 100) * ih_loss_at_o, -1),
        EventSpec("T_III", ih_loss - ih_loss_at_o / 100, -1, terminal=True),
    ]
    name = f"ih_stage2_{flow}_{head1_range}_{ih_model_range}"
    field = vector_field(rhs, [S.p, S.g, S.h, lw], [Lf, S.alpha, S.wstar, loss0], name=name, events=events)
    return dataclasses.replace(field, state_names=STAGE2_STATE)


@functools.cache
def stage2_losses(head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """Grid kernels (L_G4, L_IH2) of the state (p, g, h, ln w) and parameters (L, α*, w*)."""
    import sympy as sp

    from derivations.induction_head import four_gram, ih_head
    from derivations.induction_head import symbols as S
    from numerics.compile import grid_kernel

    lw = sp.Symbol("log_w", real=True)
    Lf = sp.Symbol("L", positive=True)
    g4 = four_gram.L_G4_derived(head1_range).subs(S.L, Lf)
    ih = ih_head.L_IH2_derived(ih_model_range).subs({S.L: Lf, S.w: sp.exp(lw)})
    args = [S.p, S.g, S.h, lw, Lf, S.alpha, S.wstar]
    return (grid_kernel(g4, args, name=f"ih_LG4_{head1_range}"),
            grid_kernel(ih, args, name=f"ih_LIH2_{ih_model_range}"))


def stage2_run(L: int, alpha: float, wstar: float, sigma: float, *, flow: str = "paper", init: str = "eq4",
               horizon: float | None = None, rtol: float = 1e-10, atol: float = 1e-13, n_save: int = 400,
               head1_range: str = "canonical", ih_model_range: str = "canonical"):
    """Integrate the Stage-II flow from θ(0) (``init``: eq4 all at σ; c2 p = w = 0 except... see spec §2.5).

    Returns the :class:`numerics.ode.Solution` (times log-spaced from 1e-3 to the horizon) and
    the losses (L_G4, L_IH2) at the saved times. The default horizon is 60 S with
    S = (1+α*)² L ln(1/σ)/w*² (spec §2.11); integration stops at T_III.
    """
    from numerics.ode import Tolerance, integrate

    if not 0 < sigma < 1:
        raise InvalidArgument(f"sigma={sigma} must lie in (0, 1)")
    if not 0 < wstar < 2**-0.5:
        raise InvalidArgument(f"wstar={wstar} violates 2*wstar**2 < 1 (Eq. (10) diverges); choose wstar < 0.7071")
    if init not in ("eq4", "c2"):
        raise InvalidArgument(f"init={init!r} is not one of eq4, c2")
    if init == "c2":
        raise InvalidArgument("init='c2' sets w(0) = 0, a fixed point of the w-flow; Stage II needs w(0) > 0")
    scale = (1 + alpha) ** 2 * L * math.log(1 / sigma) / wstar**2
    horizon = horizon or 60 * scale
    field = stage2_flow(flow, head1_range, ih_model_range)
    g4_kernel, ih_kernel = stage2_losses(head1_range, ih_model_range)
    y0 = np.array([sigma, sigma, sigma, math.log(sigma)])
    loss0 = float(g4_kernel(*y0, float(L), alpha, wstar))
    params = np.array([float(L), alpha, wstar, loss0])
    save = np.concatenate([[0.0], np.geomspace(1e-3, horizon, n_save)])
    solution = integrate(field, y0, (0.0, horizon), params, tol=Tolerance(rtol, atol), save_at=save)
    y = solution.y
    losses = (g4_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar),
              ih_kernel(y[:, 0], y[:, 1], y[:, 2], y[:, 3], float(L), alpha, wstar))
    return solution, losses
