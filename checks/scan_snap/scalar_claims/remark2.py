r"""Remark 2 (L561): a shift c = O(ln M) for all s > s₁, h° − h = O(ln M/(Mt)), h = Θ(ln(Mη_Yt)/M).

First principles: in stage 2 (E ≈ Mη_Ys) each term of the sum giving c(s) (:mod:`.lemma7`) tends to 1/(2j):
c(s) = ½ ln s + O(1) diverges, so no constant c (of any size in M) gives h*(s) ≤ h(s + c) for all s > s₁,
and h* − h = h(s + c) − h(s) ≈ (½ ln s + C)/(Ms), which is not O(ln M/(Ms)) along s. The remark's
linearisation δḣ ≍ −δh/t drops the discretisation source: δḣ = −δh/t + 1/(2Mt²), whose solution is
(½ ln t + C)/(Mt). Remark 2 assumes η_Y = O(1) (read η_Y ≤ 1). Registers ``ss.rem2.gap_rate``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from checks.asymptotics import Asymptotic, decide, limit_of_ratio
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.scalar_claims._common import (
    EPS,
    PAPER,
    _log_slope,
    _overall,
    _part,
    omega1,
    t0,
)
from checks.scan_snap.scalar_claims.lemma7 import (
    _LEMMA7_DOMAIN,
    _LEMMA7_PARAMS,
    _STEPS_LONG,
    decoder_series,
)
from checks.status import Status, combine
from numerics.models.scan_snap import scalar as N


def s1_value(M: float, etaY: float, reading: str) -> float:
    """s₁ = 2 ln(1 + ω₁)/η_Y as printed (L561), or 2(1 + ω₁) ln M/η_Y (Lemma 9's t₀ at K = 1)."""
    return 2 * math.log(1 + omega1(M)) / etaY if reading == "printed" else t0(M, 1, etaY, "omega1")


def remark2_slice(M: float, etaY: float, steps: int, n_log: int, reading: str) -> dict[str, Any]:
    """Evaluate Remark 2 at one (M, η_Y): h ≤ h*, c against ln M, h° − h against ln M/(Mt), Mh/ln(Mη_Yt)."""
    s1 = s1_value(M, etaY, reading)
    series = decoder_series(M, etaY, steps, n_log)
    keep = series["s"] > s1
    s = series["s"][keep].astype(float)
    gap, c, h = series["gap"][keep], series["c"][keep], series["h"][keep]
    fixed = {"M": M, "etaY": etaY}
    c_dec = limit_of_ratio(s, c / math.log(M), variable=Asymptotic("s"), rel_err=1e-9, fixed=fixed)
    gap_dec = decide("O", gap, math.log(M) / (M * s), [{"s": v} for v in s], variables=[Asymptotic("s")],
                     se=64 * EPS * series["hstar"][keep], rel_err=1e-12)
    h_dec = decide("Theta", M * h, np.log(M * etaY * s), [{"s": v} for v in s], variables=[Asymptotic("s")],
                   rel_err=1e-12)
    tail = s >= 10 * t0(M, 1, etaY, "omega1")
    c_fit = _log_slope(s[tail], c[tail])
    crossing = (math.exp((math.log(M) - c_fit["intercept"]) / c_fit["slope"])
                if math.isfinite(c_fit["slope"]) and c_fit["slope"] > 0 else math.nan)
    return {"M": M, "etaY": etaY, "s1": s1, "s_range": [float(s[0]), float(s[-1])],
            "h_le_hstar_violations": int(np.sum(gap < -64 * EPS * series["hstar"][keep])),
            "c_over_lnM_at_end": float(c[-1] / math.log(M)), "c_behaviour": c_dec.behaviour,
            "c_reason": c_dec.reason, "c_decision": c_dec.to_dict(), "c_slope_vs_ln_s": c_fit,
            "s_where_c_reaches_lnM": crossing, "gap_decision": gap_dec.to_dict(),
            "gap_status": gap_dec.status.value, "gap_summary": gap_dec.summary,
            "t_gap_M_over_lnM_at_end": float(s[-1] * gap[-1] * M / math.log(M)),
            "h_decision_along_s": h_dec.status.value, "h_summary_along_s": h_dec.summary,
            "Mh_over_ln_at_s1": lower_end_ratio(M, etaY, reading),
            "c_direct_vs_sum": float(np.max(np.abs(c - series["c_sum"][keep])))}


def lower_end_ratio(M: float, etaY: float, reading: str) -> float:
    """Return Mh(s₁)/ln(Mη_Ys₁), the infimum of Mh(t)/ln(Mη_Yt) over t > s₁ (it increases with t)."""
    s1 = s1_value(M, etaY, reading)
    return M * float(N.h_of_tau(etaY * s1, M)) / math.log(M * etaY * s1)


def remark2_parts(slices: list[dict[str, Any]], lower_sweep) -> dict[str, dict[str, Any]]:
    """Decide the four parts of Remark 2 over the slices of one s₁ reading.

    ``lower_sweep`` is (Ms, Mh(s₁)/ln(Mη_Ys₁)) along a sweep of M (None when M is pinned).
    """
    n_viol = sum(r["h_le_hstar_violations"] for r in slices)
    c_bad = [r for r in slices if r["c_behaviour"] == "to_infinity"]
    c_status = (Status.FAILS if c_bad else Status.HOLDS if all(r["c_behaviour"] == "limit" for r in slices)
                else Status.INCONCLUSIVE)
    ex = (c_bad or slices)[0]
    fit = ex["c_slope_vs_ln_s"]
    gap_status = combine(r["gap_status"] for r in slices)
    gex = next((r for r in slices if r["gap_status"] == "fails"), slices[0])
    along_s = combine(r["h_decision_along_s"] for r in slices)
    parts = {
        "h_le_hstar": _part(Status.FAILS if n_viol else Status.HOLDS, f"h(s) ≤ h*(s) for s > s₁ at every "
                            f"point ({n_viol} violations)"),
        "shift_O_lnM": _part(
            c_status, f"the smallest c with h*(s) ≤ h(s + c) on s ≤ S grows without bound: c/ln M "
            f"{ex['c_reason']} (M={ex['M']:g}, η_Y={ex['etaY']:g}); c ≈ b ln s + a with b = "
            f"{fit['slope']:.3f} [{fit['low']:.3f}, {fit['high']:.3f}] (first principles ½), reaching ln M "
            f"near s ≈ {ex['s_where_c_reaches_lnM']:.3g}: no constant c serves all s > s₁"),
        "gap_rate": _part(gap_status, f"h° − h = O(ln M/(Mt)) along t: {gex['gap_summary']} (M={gex['M']:g}, "
                          f"η_Y={gex['etaY']:g}; t(h° − h)M/ln M = {gex['t_gap_M_over_lnM_at_end']:.3f} at "
                          f"t={gex['s_range'][1]:g}; first principles (½ ln t + C)/ln M)"),
    }
    if lower_sweep is not None:
        Ms_sweep, ratios = lower_sweep
        dec = decide("Theta", ratios, np.ones(len(ratios)), [{"M": M} for M in Ms_sweep],
                     variables=[Asymptotic("M", scale="log")], rel_err=1e-12)
        m_status, m_text, m_dec = dec.status, dec.summary, dec.to_dict()
        shown = ", ".join(f"{r:.3g}" for r in ratios[::4])
        m_text = (f"its value at t = s₁⁺ (η_Y-free) along M ∈ [{Ms_sweep[0]:g}, {Ms_sweep[-1]:g}] ({shown}, "
                  f"…): {m_text}")
    else:
        m_status, m_dec = Status.INCONCLUSIVE, {}
        m_text = "M pinned: the lower end of the window is not swept along M"
    parts["h_Theta"] = _part(combine([along_s, m_status]),
                             f"Mh(t)/ln(Mη_Yt) along t > s₁: {along_s.value}; {m_text}", along_M=m_dec)
    return parts


def check_rem2(ctx) -> Outcome:
    """Remark 2 (L561): η_Y = O(1) ⇒ ∃ c = O(ln M): h(s) ≤ h*(s) ≤ h(s + c), s > s₁.

    Also h°(t) − h(t) ≍ 2η_Ys₀/(Mt) = O(ln M/(Mt)) and h(t) = Θ(ln(Mη_Yt)/M) for t > s₁.
    """
    steps, n_log = int(ctx.grid("steps")[0]), 40 if ctx.quick else 80
    Ms, etas = [float(m) for m in ctx.grid("M")], [float(e) for e in ctx.grid("etaY")]
    readings = ctx.grid("s1")
    inside = [e for e in etas if e <= 1]
    outside = [e for e in etas if e > 1]
    by_reading, statuses = {}, {}
    for reading in readings:
        slices = [remark2_slice(M, eta, steps, n_log, reading) for M in Ms for eta in inside]
        if not slices:
            statuses[reading] = (Status.OUTSIDE, "no η_Y ≤ 1 on the grid (Remark 2 assumes η_Y = O(1))")
            by_reading[reading] = {}
            continue
        sweep = None
        if not ctx.is_pinned("M"):
            Ms_sweep = [float(m) for m in np.geomspace(30, 1e64, 15)]
            sweep = (Ms_sweep, [lower_end_ratio(M, inside[0], reading) for M in Ms_sweep])
        parts = remark2_parts(slices, sweep)
        statuses[reading] = _overall(parts, list(parts))
        by_reading[reading] = {"parts": parts, "slices": slices}
    extra = {"outside_regime": [remark2_slice(M, e, steps, n_log, readings[0]) for M in Ms for e in outside]}
    canonical = readings[0]
    status, summary = statuses[canonical]
    others = "; ".join(f"s₁ = {r}: {st.value}" for r, (st, _) in statuses.items() if r != canonical)
    return Outcome(status, f"(s₁ {canonical}) {summary}" + (f" || {others}" if others else ""),
                   {"readings": by_reading, **extra,
                    "regime": "η_Y = O(1), read η_Y ≤ 1", "first_principles": "c(s) = ½ ln s + O(1); "
                    "h* − h = (½ ln s + C)/(Ms)"})


# ---------------------------------------------------------------------------------------------------------
# registration

register(Claim(
    "ss.rem2.gap_rate", PAPER, "Remark 2 (L561)", "claim", check_rem2,
    statement="If η_Y = O(1), there exists some constant c = O(ln M) such that h(s) ≤ h*(s) ≤ h(s + c) for "
              "all s > s₁ := 2 ln(1+ω₁)/η_Y … δḣ(t) ≍ −η_Y M δh(t) exp(−Mh(t)) ≍ −δh(t)/t … h°(t) − h(t) ≍ "
              "2η_Y s₀/(Mt) = O(ln M/(Mt)) … h(t) = Θ(ln(Mη_Y t)/M) when t > s₁.",
    params=(*_LEMMA7_PARAMS, _STEPS_LONG,
            Param("s1", "printed", quick=("printed", "lemma9_t0"), choices=("printed", "lemma9_t0"),
                  doc="s₁ = 2 ln(1+ω₁)/η_Y as printed, or 2(1+ω₁) ln M/η_Y (Lemma 9's t₀)")),
    domain=_LEMMA7_DOMAIN, doc=check_rem2.__doc__, cost=2))
