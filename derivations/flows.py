"""Gradient flows built from a loss, and flows induced on reduced variables.

For a loss that depends on (w_Q, w_K) only through P = w_Q w_K, the gradient flow gives
dw_Q/dt = -w_K ∂_P L and dw_K/dt = -w_Q ∂_P L, so w_Q² - w_K² is conserved and, from
w_Q(0) = w_K(0) = w, the flow stays on the balanced manifold with dw/dt = -w ∂_P L|_{P=w²}
(spec ih.dv.balanced_flow). Writing the loss as a function of w alone, L(w) := L(P = w²), and
descending it gives dw/dt = -dL(w²)/dw = -2w ∂_P L: twice the balanced velocity.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

FLOW_MODES = ("paper", "balanced")


def gradient_flow(loss: sp.Expr, parameters: Sequence[sp.Symbol]) -> list[sp.Expr]:
    """Return -∂L/∂θ_i for each parameter (the right-hand side of dθ/dt = -∇L)."""
    return [-sp.diff(loss, theta) for theta in parameters]


def reduced_velocity(loss_in_P: sp.Expr, P: sp.Symbol, w: sp.Symbol, mode: str) -> sp.Expr:
    """dw/dt on the balanced manifold P = w²: ``paper`` -dL(w²)/dw, ``balanced`` -w ∂_P L at P = w²."""
    if mode == "paper":
        return -sp.diff(loss_in_P.subs(P, w**2), w)
    if mode == "balanced":
        return (-w * sp.diff(loss_in_P, P)).subs(P, w**2)
    from derivations.errors import InvalidArgument

    raise InvalidArgument(f"flow={mode!r} is not one of {', '.join(FLOW_MODES)}")


def induced_pair_flow(loss_in_P: sp.Expr, P: sp.Symbol, w_Q: sp.Symbol, w_K: sp.Symbol) -> list[sp.Expr]:
    """(dw_Q/dt, dw_K/dt) of the full gradient flow of L(P = w_Q w_K)."""
    return gradient_flow(loss_in_P.subs(P, w_Q * w_K), [w_Q, w_K])
