r"""``co.dv.loss_rate_band``: explicit constants for Thm F.8 in the reduced model (spec §5).

Exactly −dL̂/dt = rᵀ(UI + m₁N)r (L̂ = Σ_kf_kl(y_kF_k), ∂_tF_k = z_kᵀĠ, Ġ = (UI + m₁N)r). With the max-margin unit
vector ŵ = G*/‖G*‖ (``co.dv.maxmargin_limit``), ŵ·r >= γΣ_kf_kg_k, γ² = 1/17; ‖r‖ <= √3Σ_kf_kg_k; and g <= l <= 2g for
margins >= 0 (``co.dv.loss_bounds``), so after every group is correct

    (γ²/4)·U·L̂² <= −dL̂/dt <= 3(U + m₁λ_max(N))·L̂²,

and (spec §5) −dL̂/dt/(UL̂²) → γ². Of its two parts, ‖r‖²/L̂² → γ² as the shares of Σg approach the duals, but
m₁rᵀNr/(UL̂²) need not vanish: N = W_VᵀW_V grows with G (Ṅ = rGᵀ + Grᵀ) as fast as U does.

Checked along the reduced run from regime-B initial values (m = 256): the identity (the rate of L̂ by one complex
step along the reduced right-hand side against rᵀ(UI + m₁N)r), the band at every saved time after T₁^grp, and the
limit: ‖r‖²/L̂² within 0.1 % of γ² and the m₁N part below 0.1 % of γ² and not growing over the last three decades.
"""

from __future__ import annotations

import math

import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status
from checks.word_cooccurrence.maxmargin_items import ROWS, STATES
from checks.word_cooccurrence.reduced_items import regime_b_start
from numerics.differences import directional_derivative
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence import reduced as Re
from numerics.models.word_cooccurrence.data import REGIMES
from numerics.ode import Tolerance, integrate
from numerics.svm import exact_hard_margin

PAPER = "co"
RTOL = 1e-10


def _loss(state, p):
    margins = Re.LABELS * (Re.FEATURES @ state[:3])
    return np.sum(p[1:5] * Mo.logistic_loss(margins))


def _at(state: np.ndarray, p: np.ndarray, m1: int) -> dict:
    margins = Re.LABELS * (Re.FEATURES @ state[:3])
    g = Mo.g_weight(margins)
    r = (p[1:5] * g * Re.LABELS) @ Re.FEATURES
    N, U = state[3:12].reshape(3, 3), state[12]
    quadratic = float(r @ (U * np.eye(3) + m1 * N) @ r)
    rate = np.empty(13)
    Re.reduced_rhs(0.0, state, p, rate)
    dL = float(directional_derivative(lambda s: np.array([_loss(s, p)]), state, rate)[0])
    L = float(_loss(state, p))
    lam = float(np.linalg.eigvalsh(N).max())
    return {"loss": L, "minus_dL": -dL, "quadratic": quadratic, "U": float(U), "lambda_max_N": lam,
            "all_correct": bool(margins.min() >= 0), "ratio": -dL / (U * L * L),
            "U_part": float(r @ r) / (L * L), "N_part": float(m1 * r @ N @ r) / (U * L * L)}


def check_band(ctx) -> Outcome:
    gamma2 = 1 / float(exact_hard_margin(ROWS).norm_squared)
    r = REGIMES["B"]
    p = Re.reduced_params(r.m1, r.counts[0])
    theta, lay, a, _ = regime_b_start(ctx.value("m"), ctx.seed)
    t_end = float(ctx.grid("t_end")[0])
    save = np.logspace(-2, math.log10(t_end), 100)
    save[-1] = t_end
    sol = integrate(STATES, Re.reduced_initial_state(theta, lay, a), (0.0, t_end), p, tol=Tolerance(1e-10, 1e-14),
                    save_at=save)
    rows = [{"t": float(t), **_at(y, p, r.m1)} for t, y in zip(sol.t, sol.y, strict=True)]
    identity = max(abs(x["minus_dL"] - x["quadratic"]) / abs(x["quadratic"]) for x in rows)
    after = [x for x in rows if x["all_correct"]]
    lower_ok = all(x["minus_dL"] >= gamma2 / 4 * x["U"] * x["loss"] ** 2 for x in after)
    upper_ok = all(x["minus_dL"] <= 3 * (x["U"] + r.m1 * x["lambda_max_N"]) * x["loss"] ** 2 for x in after)
    last = rows[-1]
    tail = [x for x in rows if x["t"] >= t_end / 1e3]
    U_part_limit = abs(last["U_part"] / gamma2 - 1) <= 1e-3
    N_part_grows = all(b["N_part"] > a["N_part"] for a, b in zip(tail, tail[1:]))
    limit = U_part_limit and not N_part_grows and last["N_part"] <= 1e-3 * gamma2
    status = Status.HOLDS if identity <= RTOL and lower_ok and upper_ok and after and limit else Status.FAILS
    summary = (f"−dL̂/dt = rᵀ(UI + m₁N)r to {identity:.1e}; the band (γ²/4)UL̂² <= −dL̂/dt <= 3(U + m₁λ_max)L̂² holds at "
               f"{'every' if lower_ok and upper_ok else 'not every'} one of {len(after)} times after T₁^grp; "
               f"the limit −dL̂/dt/(UL̂²) → γ² = 1/17 = {gamma2:.4f} {'holds' if limit else 'does not hold'}: at t = "
               f"{last['t']:.0e} the ratio is {last['ratio']:.4f} = ‖r‖²/L̂² {last['U_part']:.4f} (→ γ²) + m₁rᵀNr/(UL̂²) "
               f"{last['N_part']:.4f}, the second part {'still growing' if N_part_grows else 'settled'} "
               f"({tail[0]['N_part']:.4f} at t = {tail[0]['t']:.0e}): the m₁N term is not small against U")
    return Outcome(status, summary, {"gamma_squared": gamma2, "identity_relative_error": identity, "rows": rows,
                                     "full_model": "the P2-sweep slope of 1/L̂ (part 2)"})


register(Claim("co.dv.loss_rate_band", PAPER, "derived (Thm F.8's constants, §5)", "derive", check_band,
               params=(Param("t_end", 1e8, quick=(1e8,), full=(1e10,), doc="end of the reduced run"),
                       Param("m", 256, doc="m of the regime-B initial values")),
               statement="−dL̂/dt = rᵀ(UI + m₁N)r exactly; (γ²/4)UL̂² <= −dL̂/dt <= 3(U + m₁λ_max(N))L̂² once every margin is "
                         ">= 0; −dL̂/dt/(UL̂²) → γ²."))
