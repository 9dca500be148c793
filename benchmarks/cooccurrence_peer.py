"""The SciPy peer of ``co-flow``: ``solve_ivp`` (RK45) on the exact flow of Eq. (1) with a vectorised NumPy
right-hand side (``numerics.models.word_cooccurrence.model.flow``, the NumPy form of ``co.dv.flow_vectorised``:
``einsum`` over the samples and ``np.add.at`` scatters), the code a researcher would write with SciPy."""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from numerics.models.word_cooccurrence import model as Mo


def solve_reference(lay, theta0, tokens, labels, a, t1: float, rtol: float, atol: float, save_at) -> dict:
    """Integrate θ' = −∇L̂ from θ0 to t1; the loss and U at ``save_at`` and the final state."""
    def rhs(t, theta):
        return Mo.flow(theta, lay, tokens, labels, a)

    sol = solve_ivp(rhs, (0.0, t1), theta0, method="RK45", rtol=rtol, atol=atol, t_eval=save_at)
    losses = np.array([float(Mo.loss(y, lay, tokens, labels, a)) for y in sol.y.T])
    return {"y_final": sol.y[:, -1], "loss": losses, "nfev": sol.nfev, "steps": sol.t.size, "status": sol.status}
