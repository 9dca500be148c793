r"""Lemma 9 (L583–L584), Eqns 52 and 55: the two stages of h(t/K) and γ, and their windows' tables.

First principles: with τ := η_Yt/K, h(t/K) = u(τ)/M where e^u + (M−1)u = Mτ + 1; γ depends on (τ, M) only
(``t_over_K``). Stage 1: (M−1)u ≤ Mτ, so Mh/τ ≤ M/(M−1) and γ/τ ≤ 1 exactly; but e^u ≤ (M−1)u needs u above
Lemma 8's lower root u₀, i.e. t ≥ t_low = K(2(M−1)u₀ − 1)/(Mη_Y) ≈ K/(Mη_Y), which exceeds 1 when K > Mη_Y.
Stage 2: the window starts at τ₀ = 2u₁, above the balance point τ_b = (2(M−1)u₁ − 1)/M, so
e^u ≥ max(M−1, (M−1)u) holds; γτ/ln(Mτ) → 1 as t → ∞ and equals ≈ 2u₁/(u₁ + ln 2u₁) → 2 at the window
start: bounded. The window tables and decisions here serve Theorem 1(b) (:mod:`.theorem1b`) too.
Registers ``ss.lemma9.stage1`` and ``ss.lemma9.stage2``.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from checks.asymptotics import Asymptotic, decide
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.scalar_claims._common import (
    _ETA_RANGE,
    _K_RANGE,
    _M_RANGE,
    FACTOR,
    PAPER,
    REL_TOL,
    STAGE2_SPAN,
    _domain,
    _gamma_many,
    _h_many,
    _overall,
    _part,
    regime,
    t0,
    t_low,
)
from checks.status import Status

M_GAMMA = (1e2, 1e3, 1e4, 1e6, 1e8, 1e12, 1e16, 1e24, 1e32, 1e48, 1e64)


def _grid_values(ctx, name: str) -> list[float]:
    return [float(v) for v in ctx.grid(name)]


def stage_table(Ms, Ks, etas, n_t: int, *, stage: int, t0_reading: str = "omega1", ceil: bool = False,
                theorem: bool = False) -> list[dict[str, Any]]:
    """Per (M, K, η_Y): the window's t grid and the ratios of Lemma 9 (and Theorem 1(b) with ``theorem``).

    Stage 1: t ∈ [1, K ln M/η_Y]; stage 2: t ∈ [t₀, 10¹²t₀]. With ``theorem`` the window is cut to t ≥ 10K²
    (Theorem 1's t ≫ K²); an empty cut leaves the point outside the regime.
    """
    rows = []
    for M in Ms:
        for K in Ks:
            for eta in etas:
                reg = regime(M, eta)
                start = t0(M, K, eta, t0_reading)
                lo, hi = (1.0, K * math.log(M) / eta) if stage == 1 else (start, STAGE2_SPAN * start)
                if theorem:
                    lo = max(lo, FACTOR * K * K)
                row = {"M": M, "K": K, "etaY": eta, "inside": reg["inside"], "regime": reg,
                       "window": [lo, hi]}
                if lo > hi:
                    row.update(inside=False, empty=True)
                    rows.append(row)
                    continue
                t = np.geomspace(lo, hi, n_t)
                tau = eta * t / K
                u = M * _h_many(tau, M)
                g = _gamma_many(t, M, K, eta, ceil)
                if stage == 1:
                    rhs = np.minimum(M - 1, (M - 1) * u)
                    slack = (rhs - np.exp(u)) / np.exp(u)
                    row.update(ratio_h=u / tau, ratio_gamma=g / tau)
                else:
                    lhs = np.exp(np.minimum(u, 700.0))
                    slack = (lhs - np.maximum(M - 1, (M - 1) * u)) / lhs
                    row.update(ratio_h=u / np.log(M * tau), ratio_gamma=g * tau / np.log(M * tau))
                    if theorem:
                        row["ratio_printed"] = g * tau / np.log(tau)
                i = int(np.argmin(slack))
                row.update(t=t, gamma_min=float(g.min()), min_slack=float(slack[i]), at_t=float(t[i]),
                           violations=int(np.sum(slack < -REL_TOL)), empty=False, t_low=t_low(M, K, eta))
                rows.append(row)
    return rows


def _sup(rows, key) -> list[float]:
    return [float(np.max(r[key])) if not r.get("empty") else math.nan for r in rows]


def sup_decision(rows, key: str, form: str = "O", along_K: bool = True, scale: str = "log"):
    """Decide form(1) of the window's sup of ``key`` along M and K, inside the regime only.

    ``scale`` is that of M: ``algebraic`` in stage 1 (the ratios approach their limit like e^u/M), ``log`` in
    stage 2 (windows start at ~2 ln M, corrections in 1/ln M).
    """
    values = _sup(rows, key)
    points = [{"M": r["M"], "K": r["K"], "etaY": r["etaY"]} for r in rows]
    inside = [r["inside"] and not r.get("empty") for r in rows]
    variables = [Asymptotic("M", scale=scale)]
    if along_K and len({r["K"] for r in rows}) >= 4:
        variables.append(Asymptotic("K"))
    safe = [v if math.isfinite(v) else 1.0 for v in values]  # outside points never enter a slice
    return decide(form, safe, np.ones(len(values)), points, variables=variables, rel_err=1e-9, regime=inside,
                  regime_name="M ≫ 100, M^-0.99 ≪ η_Y < 1"), values


def _inequality_part(rows, text: str) -> dict[str, Any]:
    inside = [r for r in rows if r["inside"] and not r.get("empty")]
    if not inside:
        return _part(Status.OUTSIDE, "no grid point inside the regime")
    bad = [r for r in inside if r["violations"]]
    worst = min(inside, key=lambda r: r["min_slack"])
    n_pts = sum(len(r["t"]) for r in inside)
    n_bad = sum(r["violations"] for r in bad)
    where = worst if not bad else min(bad, key=lambda r: r["min_slack"])
    extra = (f"; violated for t < t_low = K(2(M−1)u₀ − 1)/(Mη_Y) where h(t/K) is below Lemma 8's lower root "
             f"(t_low = {where['t_low']:.3g} here)" if bad and where["at_t"] < where["t_low"] else "")
    summary = (f"{text} at {n_pts - n_bad}/{n_pts} inside points; worst relative slack "
               f"{where['min_slack']:.3g} "
               f"(tolerance {REL_TOL:g}) at M={where['M']:g}, K={where['K']:g}, η_Y={where['etaY']:g}, "
               f"t={where['at_t']:.4g}{extra}")
    return _part(Status.FAILS if bad else Status.HOLDS, summary, fraction=(n_pts - n_bad) / n_pts,
                 worst={k: where[k] for k in ("M", "K", "etaY", "at_t", "min_slack", "t_low")},
                 failing_points=[{k: r[k] for k in ("M", "K", "etaY", "at_t", "min_slack", "t_low",
                                                    "violations")} for r in bad])


def _o_part(rows, key: str, text: str, along_K: bool = True, scale: str = "log") -> dict[str, Any]:
    decision, values = sup_decision(rows, key, along_K=along_K, scale=scale)
    inside = [v for v, r in zip(values, rows, strict=True) if r["inside"] and math.isfinite(v)]
    outside = [{"M": r["M"], "K": r["K"], "etaY": r["etaY"], "sup": v}
               for v, r in zip(values, rows, strict=True) if not r["inside"] and math.isfinite(v)]
    band = (f"window sup ∈ [{min(inside):.4g}, {max(inside):.4g}] inside the regime" if inside
            else "nothing inside")
    return _part(decision.status, f"{text}: {band}; {decision.summary}", decision=decision.to_dict(),
                 sups=[{"M": r["M"], "K": r["K"], "etaY": r["etaY"], "sup": v, "inside": r["inside"]}
                       for v, r in zip(values, rows, strict=True)], outside_regime=outside)


def _stage_params(extra=()):
    return (Param("M", 1e4, quick=M_GAMMA, full=M_GAMMA, doc="vocabulary size (swept to 1e64, module doc)"),
            Param("K", 10, quick=(1, 10, 100, 1000, 10**4), full=(1, 10, 100, 1000, 10**4),
                  doc="classes; K ≥ 4 values so that a dependence on K is decided (R10)"),
            Param("etaY", 0.5, quick=(0.1, 0.5), full=(0.01, 0.1, 0.5, 1.0)),
            Param("gamma_arg", "t_over_K", quick=("t_over_K", "ceil"), choices=("t_over_K", "ceil"),
                  doc="γ with h(t/K) (L579, canonical) or h(⌈t/K⌉) (Eqn 85)"), *extra)


def eqn52(Ms) -> dict[str, Any]:
    """Eqn 52: (M − 2 + (M−1) ln(M−1))/M > ln M (η_Y cancels), at every M, and where it starts to hold."""
    vals = [((M - 2 + (M - 1) * math.log(M - 1)) / M - math.log(M), M) for M in Ms]
    dense = np.arange(4, 200)
    ok = [(M - 2 + (M - 1) * math.log(M - 1)) / M > math.log(M) for M in dense]
    first = int(dense[int(np.argmax(ok))]) if any(ok) else None
    return {"slack": [{"M": M, "lhs_minus_lnM": v} for v, M in vals],
            "holds_all": all(v > 0 for v, _ in vals),
            "smallest_integer_M_from_which_it_holds": first, "min_slack": min(v for v, _ in vals)}


def check_stage1(ctx) -> Outcome:
    """Lemma 9, first bullet (L583), Eqn 52.

    t ≤ K ln M/η_Y ⇒ e^{Mh(t/K)} ≤ min(M−1, (M−1)Mh(t/K)), h = O(η_Yt/(MK)), γ(t) = O(η_Yt/K).
    """
    Ms, Ks, etas = _grid_values(ctx, "M"), _grid_values(ctx, "K"), _grid_values(ctx, "etaY")
    n_t = 50 if ctx.quick else 200
    by_reading = {}
    for reading in ctx.grid("gamma_arg"):
        rows = stage_table(Ms, Ks, etas, n_t, stage=1, ceil=reading == "ceil")
        parts = {"inequality": _inequality_part(rows, "e^(Mh(t/K)) ≤ min(M−1, (M−1)Mh(t/K)) on "
                                                      "t ∈ [1, K ln M/η_Y]"),
                 "h_O": _o_part(rows, "ratio_h", "Mh(t/K)/(η_Yt/K)", scale="algebraic"),
                 "gamma_O": _o_part(rows, "ratio_gamma", f"γ/(η_Yt/K) [{reading}]", scale="algebraic")}
        e52 = eqn52([M for M in Ms if M >= FACTOR * 100] or Ms)
        parts["eqn52"] = _part(Status.HOLDS if e52["holds_all"] else Status.FAILS,
                               f"Eqn 52 at every M ≥ 1000 (min slack {e52['min_slack']:.4g}); it holds for "
                               f"integer M ≥ {e52['smallest_integer_M_from_which_it_holds']}", **e52)
        by_reading[reading] = {"parts": parts, "rows": _strip(rows)}
    canonical = ctx.grid("gamma_arg")[0]
    status, summary = _overall(by_reading[canonical]["parts"], ["inequality", "eqn52", "h_O", "gamma_O"])
    others = "; ".join(f"gamma_arg={r}: γ part {v['parts']['gamma_O']['status']} "
                       f"({v['parts']['gamma_O']['summary']})"
                       for r, v in by_reading.items() if r != canonical)
    return Outcome(status, f"(gamma_arg {canonical}) {summary}" + (f" || {others}" if others else ""),
                   {"readings": by_reading, "regime": "M ≥ 1000, η_Y M^0.99 ≥ 10, η_Y < 1"})

def _strip(rows):
    """Drop the t grids and ratio arrays of ``rows`` (their extremes are kept)."""
    keep = []
    for r in rows:
        out = {k: v for k, v in r.items() if not isinstance(v, np.ndarray)}
        for key in ("ratio_h", "ratio_gamma", "ratio_printed"):
            if key in r:
                out[f"{key}_max"], out[f"{key}_min"] = float(np.max(r[key])), float(np.min(r[key]))
        keep.append(out)
    return keep


#: along t, Lemma 9's ratios approach 1 like ln(Mτ)/τ (algebraic t); Theorem 1(b)'s printed one like
#: ln M/ln τ (logarithmic t, with a 1/t term from the Lemma-9 factor)
ALONG_T_LEMMA9 = Asymptotic("t")
ALONG_T_PRINTED = Asymptotic("t", scale="log", extra=("x",))


def along_t(rows, key: str, rate_text: str, variable: Asymptotic = ALONG_T_LEMMA9) -> dict[str, Any]:
    """Decide O(1) of ``key`` along t (t → ∞) on each inside slice with the first (K, η_Y).

    The ratios depend on τ = η_Yt/K and M only under ``t_over_K`` (measured: ``_scaling_spread``).
    """
    ref_K, ref_eta = rows[0]["K"], rows[0]["etaY"]
    slices = [r for r in rows
              if r["K"] == ref_K and r["etaY"] == ref_eta and r["inside"] and not r.get("empty")]
    obs, pts = [], []
    for r in slices:
        obs += list(r[key])
        pts += [{"t": float(t), "M": r["M"]} for t in r["t"]]
    if not slices:
        return _part(Status.OUTSIDE, "no inside slice")
    dec = decide("O", obs, np.ones(len(obs)), pts, variables=[variable], rel_err=1e-9)
    ends = [float(r[key][-1]) for r in slices]
    return _part(dec.status, f"{rate_text} along t at K={ref_K:g}, η_Y={ref_eta:g}: {dec.summary}; value at "
                 f"10¹²t₀ ∈ [{min(ends):.4f}, {max(ends):.4f}]", decision=dec.to_dict())


def _scaling_spread(rows, key: str) -> float:
    """Return the largest relative spread over (K, η_Y) of the window's sup at one M (0: γ = γ(τ, M))."""
    spread = 0.0
    for M in {r["M"] for r in rows}:
        sups = [float(np.max(r[key])) for r in rows if r["M"] == M and not r.get("empty")]
        if sups:
            spread = max(spread, max(sups) / min(sups) - 1)
    return spread


def eqn55(Ms, n: int) -> dict[str, Any]:
    """Eqn 55 (K = 1, times η_Y) in mpmath, where Δ₂ ≤ 1 (u between the roots).

    η_Yt = ((M−1)u(1+Δ₂) − 1)/M ≤ (1+ω₁)(1+Δ₂)(M−1)/M ln M − 1/M < 2(1+ω₁) ln M; the strict step's
    margin, (2u₁ + 1)/M relatively, is below float64 at M ≥ 1e16, hence the digits.
    """
    worst1, worst2, n_bad = mpmath.inf, mpmath.inf, 0
    for M in Ms:
        with mpmath.workdps(40 + int(math.log10(M))):
            Mp = mpmath.mpf(M)
            u0, u1 = -mpmath.lambertw(-1 / (Mp - 1)), -mpmath.lambertw(-1 / (Mp - 1), -1)
            for k in range(n):
                u = u0 * (u1 / u0) ** (mpmath.mpf(k) / (n - 1))
                d2 = mpmath.exp(u) / ((Mp - 1) * u)
                eta_t = ((Mp - 1) * u * (1 + d2) - 1) / Mp
                rhs1 = (u1 / mpmath.log(Mp)) * (1 + d2) * (Mp - 1) / Mp * mpmath.log(Mp) - 1 / Mp
                rhs2 = 2 * u1
                s1, s2 = (rhs1 - eta_t) / rhs1, (rhs2 - rhs1) / rhs2
                n_bad += int(s1 < -mpmath.mpf(10) ** -40) + int(s2 <= 0)
                worst1, worst2 = min(worst1, s1), min(worst2, s2)
    return {"min_relative_slack_first": float(worst1), "min_relative_slack_second": float(worst2),
            "violations": n_bad, "points": n * len(Ms), "digits": "40 + log10 M"}


def check_stage2(ctx) -> Outcome:
    """Lemma 9, second bullet (L584), Eqn 55.

    t ≥ 2(1+ω₁)K ln M/η_Y ⇒ e^{Mh(t/K)} ≥ max(M−1, (M−1)Mh(t/K)), h = O(ln(Mη_Yt/K)/M),
    γ(t) = O(K ln(Mη_Yt/K)/(η_Yt)).
    """
    Ms, Ks, etas = _grid_values(ctx, "M"), _grid_values(ctx, "K"), _grid_values(ctx, "etaY")
    n_t = 50 if ctx.quick else 200
    canonical = (ctx.grid("t0")[0], ctx.grid("gamma_arg")[0])
    e55 = eqn55([M for M in Ms if M >= FACTOR * 100] or Ms, 50 if ctx.quick else 200)
    by_reading = {}
    for t0r in ctx.grid("t0"):
        for garg in ctx.grid("gamma_arg"):
            rows = stage_table(Ms, Ks, etas, n_t, stage=2, t0_reading=t0r, ceil=garg == "ceil")
            parts = {"inequality": _inequality_part(rows, "e^(Mh(t/K)) ≥ max(M−1, (M−1)Mh(t/K)) on "
                                                          "[t₀, 10¹²t₀]"),
                     "h_O": _o_part(rows, "ratio_h", "Mh(t/K)/ln(Mη_Yt/K)", along_K=False),
                     "gamma_O": _o_part(rows, "ratio_gamma", f"γη_Yt/(K ln(Mη_Yt/K)) [{garg}]",
                                        along_K=False)}
            if (t0r, garg) == canonical or not ctx.quick:
                parts["h_O_along_t"] = along_t(rows, "ratio_h", "Mh/ln(Mη_Yt/K)")
                parts["gamma_O_along_t"] = along_t(rows, "ratio_gamma", "γη_Yt/(K ln(Mη_Yt/K))")
                parts["gamma_O"]["scaling_spread_over_K_etaY"] = _scaling_spread(rows, "ratio_gamma")
            ok55 = e55["points"] - e55["violations"]
            parts["eqn55"] = _part(Status.FAILS if e55["violations"] else Status.HOLDS,
                                   f"Eqn 55 on Δ₂ ≤ 1: both inequalities at {ok55}/{e55['points']} points "
                                   f"(min relative slacks {e55['min_relative_slack_first']:.3g}, "
                                   f"{e55['min_relative_slack_second']:.3g})", **e55)

            by_reading[f"t0={t0r},gamma_arg={garg}"] = {"parts": parts, "rows": _strip(rows)}
    key = f"t0={canonical[0]},gamma_arg={canonical[1]}"
    status, summary = _overall(by_reading[key]["parts"], list(by_reading[key]["parts"]))
    others = "; ".join(f"{k}: " + ", ".join(f"{p} {v['status']}" for p, v in r["parts"].items())
                       for k, r in by_reading.items() if k != key)
    worst = by_reading.get("t0=asymptotic,gamma_arg=t_over_K", {}).get("parts", {}).get("inequality")
    if worst and worst["status"] == "fails":
        others += f" (t0=asymptotic inequality: {worst['summary']})"
    return Outcome(status, f"({key}) {summary}" + (f" || {others}" if others else ""),
                   {"readings": by_reading, "regime": "M ≥ 1000, η_Y M^0.99 ≥ 10, η_Y < 1"})

# ---------------------------------------------------------------------------------------------------------
# registration

_GAMMA_DOMAIN = _domain(M=_M_RANGE, etaY=_ETA_RANGE, K=_K_RANGE)
_T0 = Param("t0", "omega1", quick=("omega1", "asymptotic"), choices=("omega1", "asymptotic"),
            doc="t₀ = 2(1+ω₁)K ln M/η_Y (Lemma 9, δ' = ω₁) or 2K ln M/η_Y (δ' = 0)")
register(Claim(
    "ss.lemma9.stage1", PAPER, "Lemma 9, first bullet (L583), Eqn 52", "claim", check_stage1,
    statement="When t ≤ K ln(M)/η_Y, exp(Mh(t/K)) ≤ min(M−1, (M−1)Mh(t/K)), h = O(η_Y t/(MK)) and "
              "γ(t) = O(η_Y t/K). Eqn 52: if h ≥ ln(M−1)/M, t ≥ (M−2 + (M−1) ln(M−1))/(Mη_Y) > ln(M)/η_Y.",
    params=_stage_params(), domain=_GAMMA_DOMAIN, doc=check_stage1.__doc__, cost=2))
register(Claim(
    "ss.lemma9.stage2", PAPER, "Lemma 9, second bullet (L584), Eqn 55", "claim", check_stage2,
    statement="When t ≥ 2(1+ω₁)K ln(M)/η_Y, exp(Mh(t/K)) ≥ max(M−1, (M−1)Mh(t/K)), h = O(ln(Mη_Y t/K)/M) and "
              "γ(t) = O(K ln(Mη_Y t/K)/(η_Y t)). Eqn 55: t ≤ ((1+ω₁)(1+Δ₂)(M−1)/M ln M − 1/M)/η_Y < "
              "2(1+ω₁) ln(M)/η_Y.",
    params=_stage_params((_T0,)), domain=_GAMMA_DOMAIN, doc=check_stage2.__doc__, cost=3))
