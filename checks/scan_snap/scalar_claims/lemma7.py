r"""Lemma 7 (a), (b) (L520–L521): h* against h, the gap bound, the shift c = Θ(1) and h* − h → 0.

First principles: Eqn 45 says that Φ(h) := e^{Mh} + (M−1)Mh grows by exactly Mη_Y per unit of s along h.
Along the recursion of Eqn 33 one step f = η_Y/((M−1) + E), E = e^{Mh*}, raises Φ by Mη_Y + Eφ(Mf),
φ(x) = e^x − 1 − x > 0. Hence h*(s) = h(s + c(s)) with c(s) = (1/(Mη_Y)) Σ_{j<s} E_j φ(M f_j) (exact), so
h* ≥ h for every M, η_Y and s, c increases with s, and the smallest c with h(s + c) ≥ h*(s) on s ≤ S is
c(S); at the end of the window (s = ln M/η_Y) c → ½ ln(1 + W(1)) ≈ 0.2246 as η_Y → 0: c = Θ(1) holds.
Lemma 7 assumes nothing (no regime). Registers ``ss.lemma7.gap_bound`` and ``ss.lemma7.gap_vanishes``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from checks.asymptotics import Asymptotic, decide, limit_of_ratio
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.scalar_claims._common import (
    _ETA_RANGE,
    _M_RANGE,
    _STEPS_RANGE,
    C_LIMIT,
    EPS,
    PAPER,
    _domain,
    _h_many,
    _log_slope,
    _overall,
    _part,
    _shift_by_sum,
    shift,
    t0,
)
from checks.status import Status, combine
from numerics.models.scan_snap import scalar as N

M_LEMMA7 = {"quick": (30.0, 100.0, 1000.0, 5000.0), "full": (30.0, 100.0, 1000.0, 5000.0)}


def decoder_series(M: float, etaY: float, steps: int, n_log: int) -> dict[str, np.ndarray]:
    """h*, h, the gap and the shift c on a log grid of visits s ∈ [1, steps] (c also by the exact sum)."""
    hstar = N.h_star(int(steps), M, etaY)
    s = np.unique(np.round(np.geomspace(1, steps, n_log)).astype(int))
    h = _h_many(etaY * s.astype(float), M)
    by_sum = _shift_by_sum(hstar, M, etaY)
    return {"s": s, "hstar": hstar[s], "h": h, "gap": hstar[s] - h, "c": shift(hstar[s], s, M, etaY),
            "c_sum": by_sum[s], "hstar_all": hstar}


def gap_inequality(M: float, etaY: float, steps: int) -> dict[str, Any]:
    """0 ≤ h*(s) − h(s) ≤ 2η_Y/M at every s = 0..steps (R9): worst points and slacks."""
    hstar = N.h_star(int(steps), M, etaY)
    s = np.arange(steps + 1, dtype=float)
    gap = hstar - _h_many(etaY * s, M)
    tol = 64 * EPS * np.maximum(hstar, 1e-300)  # h and h* are each accurate to a few ulps
    bound = 2 * etaY / M
    i_lo, i_hi = int(np.argmin(gap[1:])) + 1, int(np.argmax(gap))
    return {"M": M, "etaY": etaY, "steps": int(steps), "min_gap_s>=1": float(gap[i_lo]), "at_s_min": i_lo,
            "max_gap_over_bound": float(gap[i_hi] / bound), "at_s_max": i_hi,
            "lower_violations": int(np.sum(gap < -tol)), "upper_violations": int(np.sum(gap > bound + tol)),
            "points": int(steps + 1)}


def window_shift(M: float, etaY: float) -> tuple[int, float]:
    """(S, c(S)), S = ⌊ln M/η_Y⌋: the smallest c with h(s + c) ≥ h*(s) for all s ≤ ln M/η_Y (c increases)."""
    S = math.floor(math.log(M) / etaY * (1 + 1e-12))
    hstar = N.h_star(max(S, 1), M, etaY)
    return S, float(shift(hstar[S:S + 1], np.array([S]), M, etaY)[0])


def aliasing_free_M(target: float, etaY: float) -> float:
    """Return the integer M ≥ target at which ln M/η_Y has just passed an integer.

    There the window s ≤ ln M/η_Y ends at its largest c for nearby M (the envelope of the floor's sawtooth),
    so the sweep along M is smooth.
    """
    n = math.ceil(math.log(target) / etaY)
    M = float(math.ceil(math.exp(etaY * n)))
    while math.floor(math.log(M) / etaY * (1 + 1e-12)) < n:
        M += 1
    return M


def check_gap_bound(ctx) -> Outcome:
    """Lemma 7(a) (L520): 0 ≤ h*(s) − h(s) ≤ 2η_Y/M; ∃ c = Θ(1): h(s + c) ≥ h*(s) ≥ h(s), s ≤ ln M/η_Y."""
    steps = int(ctx.grid("steps")[0])
    Ms, etas = [float(m) for m in ctx.grid("M")], [float(e) for e in ctx.grid("etaY")]
    rows = [gap_inequality(M, eta, steps) for M in Ms for eta in etas]
    worst_lo = min(rows, key=lambda r: r["min_gap_s>=1"])
    worst_hi = max(rows, key=lambda r: r["max_gap_over_bound"])
    n_lo = sum(r["lower_violations"] for r in rows)
    n_hi = sum(r["upper_violations"] for r in rows)
    total = sum(r["points"] for r in rows)
    parts = {
        "lower": _part(Status.FAILS if n_lo else Status.HOLDS,
                       f"h* − h ≥ 0 at {total - n_lo}/{total} points; smallest gap at s ≥ 1: "
                       f"{worst_lo['min_gap_s>=1']:.3g} (M={worst_lo['M']:g}, η_Y={worst_lo['etaY']:g}, "
                       f"s={worst_lo['at_s_min']}); exact: h*(s) = h(s + c(s)) with c(s) ≥ 0",
                       fraction=(total - n_lo) / total, worst=worst_lo),
        "upper": _part(Status.FAILS if n_hi else Status.HOLDS,
                       f"max (h* − h)/(2η_Y/M) = {worst_hi['max_gap_over_bound']:.4f} (M={worst_hi['M']:g}, "
                       f"η_Y={worst_hi['etaY']:g}, s={worst_hi['at_s_max']}): slack factor "
                       f"{1 / worst_hi['max_gap_over_bound']:.1f}", fraction=(total - n_hi) / total,
                       worst=worst_hi),
    }
    grid_c = [{"M": M, "etaY": eta, "S": w[0], "c_min": w[1]}
              for M in Ms for eta in etas for w in [window_shift(M, eta)]]
    if ctx.is_pinned("M"):
        parts["c_Theta1"] = _part(Status.INCONCLUSIVE, f"M pinned to {Ms[0]:g}: c = Θ(1) needs a sweep along "
                                  f"M; c_min = {grid_c[0]['c_min']:.4f}", grid=grid_c)
    else:
        points, values = [], []
        for eta in etas:
            for target in np.geomspace(30, 1e7, 10):
                M = aliasing_free_M(float(target), eta)
                points.append({"M": M, "etaY": eta})
                values.append(window_shift(M, eta)[1])
        decision = decide("Theta", values, np.ones(len(values)), points, variables=[Asymptotic("M")],
                          rel_err=1e-9)
        lo, hi = decision.constant_band()
        c_grid = [g["c_min"] for g in grid_c]
        parts["c_Theta1"] = _part(decision.status, f"smallest c on s ≤ ln M/η_Y: {decision.summary} (first "
                                  f"principles: ½ ln(1 + W(1)) = {C_LIMIT:.4f} as η_Y → 0); on the cfg grid "
                                  f"c_min ∈ [{min(c_grid):.3f}, {max(c_grid):.3f}]",
                                  decision=decision.to_dict(), sweep=points, values=values, grid=grid_c,
                                  constant_band=[lo, hi])
    status, summary = _overall(parts, ["lower", "upper", "c_Theta1"])
    return Outcome(status, summary, {"parts": parts, "rows": rows, "regime": "none stated (Lemma 7)"})


def vanishing(series: dict[str, np.ndarray], M: float, etaY: float) -> dict[str, Any]:
    """Decide h*(s) − h(s) → 0 along s (the scaled gap); fit s·(h* − h)·M against ln s."""
    s, gap = series["s"].astype(float), series["gap"]
    keep = s >= 10
    se = 64 * EPS * series["hstar"][keep] * M / etaY
    d = limit_of_ratio(s[keep], gap[keep] * M / etaY, se, variable=Asymptotic("s"), rel_err=1e-12,
                       fixed={"M": M, "etaY": etaY})
    tail = s >= max(10 * t0(M, 1, etaY, "omega1"), 10)
    slope = _log_slope(s[tail], s[tail] * gap[tail] * M)
    return {"M": M, "etaY": etaY, "behaviour": d.behaviour, "reason": d.reason, "decision": d.to_dict(),
            "gap_at_end": float(gap[-1]), "s_end": float(s[-1]), "s_gap_M_slope_vs_ln_s": slope}

def check_gap_vanishes(ctx) -> Outcome:
    """Lemma 7(b) (L521): h*(s) − h(s) → 0 when s → +∞."""
    steps, n_log = int(ctx.grid("steps")[0]), 40 if ctx.quick else 80
    rows = []
    for M in ctx.grid("M"):
        for eta in ctx.grid("etaY"):
            series = decoder_series(float(M), float(eta), steps, n_log)
            row = vanishing(series, float(M), float(eta))
            row["c_direct_vs_sum"] = float(np.max(np.abs(series["c"] - series["c_sum"])))
            rows.append(row)
    statuses = [Status.HOLDS if r["behaviour"] == "to_zero" else
                Status.FAILS if r["behaviour"] in ("limit", "to_infinity") else Status.INCONCLUSIVE
                for r in rows]
    status = combine(statuses)
    bad = next((r for r, st in zip(rows, statuses, strict=True) if st is not Status.HOLDS), rows[0])
    slopes = [r["s_gap_M_slope_vs_ln_s"]["slope"] for r in rows]
    slopes = [b for b in slopes if math.isfinite(b)]
    n_ok = sum(st is Status.HOLDS for st in statuses)
    summary = (f"(h* − h)·M/η_Y tends to 0 along s on {n_ok}/{len(rows)} (M, η_Y) to s = {steps:g}; e.g. "
               f"M={bad['M']:g}, η_Y={bad['etaY']:g}: {bad['reason']}; gap at the end "
               f"{bad['gap_at_end']:.3g}; "
               f"s·(h* − h)·M grows like b·ln s with b ∈ [{min(slopes):.3f}, {max(slopes):.3f}] (first "
               f"principles ½): h* − h ≈ (½ ln s + C)/(Ms)")
    return Outcome(status, summary, {"rows": rows, "regime": "none stated (Lemma 7)"})


# ---------------------------------------------------------------------------------------------------------
# registration

_LEMMA7_PARAMS = (Param("M", 1000.0, quick=M_LEMMA7["quick"], full=M_LEMMA7["full"]),
                  Param("etaY", 0.1, quick=(0.1, 1.0), full=(0.01, 0.1, 0.5, 0.9, 1.0)))
_LEMMA7_DOMAIN = _domain(M=_M_RANGE, etaY=_ETA_RANGE, steps=_STEPS_RANGE)
_STEPS_LONG = Param("steps", 10**5, full=(10**6,), doc="visits s (compensated sums)")

register(Claim(
    "ss.lemma7.gap_bound", PAPER, "Lemma 7(a) (L520)", "claim", check_gap_bound,
    statement="For any s ∈ ℕ, 0 ≤ h*(s) − h(s) ≤ 2η_Y/M. Then there exists some constant c = Θ(1) such that "
              "for any s ≤ ln(M)/η_Y, h(s+c) ≥ h*(s) ≥ h(s).",
    params=(*_LEMMA7_PARAMS, Param("steps", 10**4)), domain=_LEMMA7_DOMAIN, doc=check_gap_bound.__doc__))
register(Claim(
    "ss.lemma7.gap_vanishes", PAPER, "Lemma 7(b) (L521)", "claim", check_gap_vanishes,
    statement="h*(s) − h(s) → 0 when s → +∞.",
    params=(*_LEMMA7_PARAMS, _STEPS_LONG), domain=_LEMMA7_DOMAIN, doc=check_gap_vanishes.__doc__))
