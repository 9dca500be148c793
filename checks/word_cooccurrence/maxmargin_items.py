r"""``co.dv.maxmargin_limit``: the long-time limit of the reduced model (spec §5).

Asymptotically Ġ ≈ U·r, logistic gradient flow on the group features in the time t' = ∫U dt, whose direction tends
to the L2 max-margin separator of the rows y_kz_k: (1,1,1), −(1,0,1), −(0,1,1), −(0,0,1) for I₁..I₄.

Derived exactly (:func:`numerics.svm.exact_hard_margin`, rationals): G* = (2, 2, −3), ‖G*‖² = 17, so the squared
normalized margin is γ² = 1/17; KKT multipliers ν = (7, 5, 5, 0), the limiting shares A : B₂ : B₃ : B₄; margins
under G* (1, 1, 1, 3), so the per-sample loss decays like t'^{−1} on I₁..I₃ and t'^{−3} on I₄. Implied limits:
R → (ν₂ + ν₃ + ν₄ − ν₁)/(ν₁ − ν₂) = 3/2; Ġ₁ : Ġ₂ : −Ġ₃ → 2 : 2 : 3, so −Ġ₃/max(Ġ₁, Ġ₂) → 3/2 and
−Ġ₃/(Ġ₁ + Ġ₂) → 3/4; Σg/(B₂₃₄ − A) → 17/3; Σg/(A − B₂) → 17/2; G₁/(−G₃) → 2/3.

Second method: the certified high-precision solver :func:`numerics.svm.hard_margin_svm` (mpmath, KKT residuals)
on the same rows. Reported: the reduced model from regime-B initial values (m = 256) to t = 10⁶ (10⁷ full), and
the full model's group sums at T_end, against these limits (directional convergence is logarithmically slow).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status
from checks.word_cooccurrence.reduced_items import regime_b_start
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence import reduced as Re
from numerics.models.word_cooccurrence.data import REGIMES
from numerics.ode import Tolerance, VectorField, integrate
from numerics.svm import exact_hard_margin, hard_margin_svm

PAPER = "co"
ROWS = [[int(y * z) for z in row] for y, row in zip(Re.LABELS, Re.FEATURES, strict=True)]
#: the reduced field without its observer: the states are what the limits need (Ġ from the rhs)
STATES = VectorField(Re.reduced_rhs, 13, state_names=Re.STATE)


def limits(nu: list[Fraction], u: list[Fraction]) -> dict[str, Fraction]:
    """The limits (d) implied by the multipliers ν (shares of A, B₂, B₃, B₄) and G* = u."""
    A, B2, B3, B4 = nu
    total = A + B2 + B3 + B4
    return {"R": (B2 + B3 + B4 - A) / (A - B2), "-dG3/max(dG1,dG2)": -u[2] / max(u[0], u[1]),
            "-dG3/(dG1+dG2)": -u[2] / (u[0] + u[1]), "sum_g/(B234-A)": total / (B2 + B3 + B4 - A),
            "sum_g/(A-B2)": total / (A - B2), "G1/(-G3)": u[0] / -u[2]}


def _observed(state: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """The quantities of (d) at a reduced state: group sums from the margins, Ġ from the rhs."""
    G = state[:3]
    margins = Re.LABELS * (Re.FEATURES @ G)
    sums = p[5] * p[1:5] * Mo.g_weight(margins)
    A, B2, B3, B4 = sums
    rate = np.empty(13)
    Re.reduced_rhs(0.0, state, p, rate)
    dG = rate[:3]
    return {"R": (B2 + B3 + B4 - A) / (A - B2), "-dG3/max(dG1,dG2)": -dG[2] / max(dG[0], dG[1]),
            "-dG3/(dG1+dG2)": -dG[2] / (dG[0] + dG[1]), "sum_g/(B234-A)": sums.sum() / (B2 + B3 + B4 - A),
            "sum_g/(A-B2)": sums.sum() / (A - B2), "G1/(-G3)": G[0] / -G[2], "U": state[12],
            "margins": margins.tolist()}


def _reduced_run(t_end: float, seed: int, m: int) -> dict:
    theta, lay, a, _ = regime_b_start(m, seed)
    r = REGIMES["B"]
    p = Re.reduced_params(r.m1, r.counts[0])
    save = np.logspace(0, math.log10(t_end), 13)
    sol = integrate(STATES, Re.reduced_initial_state(theta, lay, a), (0.0, t_end), p, tol=Tolerance(1e-10, 1e-14),
                    save_at=save)
    return {"t": sol.t.tolist(), "observed": [_observed(y, p) for y in sol.y], "steps": sol.n_steps}


def check_maxmargin(ctx) -> Outcome:
    exact = exact_hard_margin(ROWS)
    certified = hard_margin_svm(ROWS, dps=60)
    with mpmath.workdps(60):
        deviation = max(abs(mpmath.mpf(x.numerator) / x.denominator - y) for x, y in zip(exact.u, certified.u,
                                                                                          strict=True))
    agree = bool(certified.status == "certified" and deviation < mpmath.mpf(10) ** -40)
    lim = limits(exact.multipliers, exact.u)
    run = _reduced_run(float(ctx.grid("t_end")[0]), ctx.seed, ctx.value("m"))
    last = run["observed"][-1]
    reported = {k: {"limit": str(v), "value": float(v), "reduced_at_t_end": last[k]} for k, v in lim.items()}
    status = Status.HOLDS if agree else Status.FAILS
    summary = (f"G* = ({', '.join(map(str, exact.u))}), ‖G*‖² = {exact.norm_squared} (γ² = 1/{exact.norm_squared}), "
               f"duals A:B₂:B₃:B₄ = {':'.join(map(str, exact.multipliers))}, margins "
               f"({', '.join(map(str, exact.margins))}); the certified 60-digit solver "
               f"{'agrees' if agree else 'disagrees'} (max |Δu| = {mpmath.nstr(deviation, 3)}); limits "
               + ", ".join(f"{k} → {v}" for k, v in lim.items())
               + f"; the reduced model at t = {run['t'][-1]:.0e}: "
               + ", ".join(f"{k} {last[k]:.4g}" for k in lim))
    return Outcome(status, summary, {"G_star": [str(x) for x in exact.u], "multipliers": [str(x) for x in exact.multipliers],
                                     "norm_squared": str(exact.norm_squared), "margins": [str(x) for x in exact.margins],
                                     "loss_decay_exponents_in_t_prime": [-int(x) for x in exact.margins],
                                     "certified_solver": {"status": certified.status, "max_abs_deviation":
                                                          mpmath.nstr(deviation, 5)},
                                     "limits": reported, "reduced_run": run})


register(Claim("co.dv.maxmargin_limit", PAPER, "derived (long-time limit, §5)", "derive", check_maxmargin,
               params=(Param("t_end", 1e6, quick=(1e6,), full=(1e7,), doc="end of the reduced run"),
                       Param("m", 256, doc="m of the regime-B initial values")),
               statement="The reduced model's direction tends to the L2 max-margin separator G* of the group features; "
                         "its KKT duals are the limiting shares of A, B₂, B₃, B₄, and they fix the limits of R, the "
                         "Ġ ratios, Σg/(B₂₃₄ − A), Σg/(A − B₂), G₁/(−G₃) and the loss-decay exponents."))
