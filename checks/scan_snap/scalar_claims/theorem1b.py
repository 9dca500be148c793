r"""Theorem 1(b) (L149; L765), L207, L950: γ(t) > 0 and its two rates, with the printed ln(η_Yt/K).

First principles: Theorem 1(b) prints K ln(η_Yt/K)/(η_Yt) (no M in the logarithm): the ratio γτ/ln τ at the
window start is ≈ ln(Mτ₀)/ln τ₀ ~ ln M/ln ln M, unbounded in M; for a fixed M it still tends to 1 along t.
Theorem 1 adds t ≫ K² (read t ≥ 10K²) to Lemma 9's regime; the window tables are :mod:`.lemma9`'s.
Registers ``ss.thm1b.gamma_rates``.
"""

from __future__ import annotations

from checks.claim import Claim, Outcome
from checks.registry import register
from checks.scan_snap.scalar_claims._common import PAPER, _overall, _part, omega1, regime
from checks.scan_snap.scalar_claims.lemma9 import (
    _GAMMA_DOMAIN,
    _T0,
    ALONG_T_PRINTED,
    _grid_values,
    _o_part,
    _stage_params,
    _strip,
    along_t,
    stage_table,
)
from checks.status import Status


def check_gamma_rates(ctx) -> Outcome:
    """Theorem 1(b) (L149; L765; L207, L950).

    γ(t) > 0, γ(t) = O(η_Yt/K) for t ≤ K ln M/η_Y and γ(t) = O(K ln(η_Yt/K)/(η_Yt)) for
    t ≥ 2(1+δ')K ln M/η_Y, δ' = Θ(ln ln M/ln M); hypotheses M ≫ 100, M^{-0.99} ≪ η_Y < 1, t ≫ K².
    """
    Ms, Ks, etas = _grid_values(ctx, "M"), _grid_values(ctx, "K"), _grid_values(ctx, "etaY")
    n_t = 50 if ctx.quick else 200
    canonical = (ctx.grid("t0")[0], ctx.grid("gamma_arg")[0])
    by_reading = {}
    for t0r in ctx.grid("t0"):
        for garg in ctx.grid("gamma_arg"):
            ceil = garg == "ceil"
            s1 = stage_table(Ms, Ks, etas, n_t, stage=1, ceil=ceil, theorem=True)
            s2 = stage_table(Ms, Ks, etas, n_t, stage=2, t0_reading=t0r, ceil=ceil, theorem=True)
            gmin = min(r["gamma_min"] for r in s1 + s2 if not r.get("empty"))
            parts = {
                "positive": _part(Status.HOLDS if gmin > 0 else Status.FAILS,
                                  f"min γ = {gmin:.3g} on every window"),
                "stage1": _o_part(s1, "ratio_gamma", f"γ/(η_Yt/K) on [max(1, 10K²), K ln M/η_Y] [{garg}]",
                                  scale="algebraic"),
                "stage2_printed": _o_part(s2, "ratio_printed", "γη_Yt/(K ln(η_Yt/K)) (printed, no M) on "
                                          f"[max(t₀, 10K²), 10¹²t₀] [{garg}]", along_K=False),
                "stage2_lemma9_form": _o_part(s2, "ratio_gamma", "γη_Yt/(K ln(Mη_Yt/K)) (Lemma 9's form)",
                                              along_K=False)}
            if (t0r, garg) == canonical or not ctx.quick:
                parts["stage2_printed_along_t"] = along_t(
                    s2, "ratio_printed", "per fixed M (a constant allowed to depend on M, reported only): "
                    "γη_Yt/(K ln(η_Yt/K))", ALONG_T_PRINTED)
            parts["stage1"]["empty_windows_K_etaY"] = sorted(
                {(r["K"], r["etaY"]) for r in s1 if r.get("empty") and regime(r["M"], r["etaY"])["inside"]})
            by_reading[f"t0={t0r},gamma_arg={garg}"] = {"parts": parts, "stage1_rows": _strip(s1),
                                                        "stage2_rows": _strip(s2)}
    key = f"t0={canonical[0]},gamma_arg={canonical[1]}"
    status, summary = _overall(by_reading[key]["parts"], ["positive", "stage1", "stage2_printed"])
    lemma9 = by_reading[key]["parts"]["stage2_lemma9_form"]
    others = "; ".join(f"{k}: " + ", ".join(f"{p} {v['status']}" for p, v in r["parts"].items())
                       for k, r in by_reading.items() if k != key)
    return Outcome(status, f"({key}) {summary} || reported, not deciding: Lemma 9's form ln(Mη_Yt/K) "
                   f"{lemma9['status']} ({lemma9['summary'][:160]}…)" + (f" || {others}" if others else ""),
                   {"readings": by_reading, "delta_prime": {"omega1": [omega1(M) for M in Ms]},
                    "regime": "M ≥ 1000, η_Y M^0.99 ≥ 10, η_Y < 1, t ≥ 10K²"})


# ---------------------------------------------------------------------------------------------------------
# registration

register(Claim(
    "ss.thm1b.gamma_rates", PAPER, "Theorem 1(b) (L149; L765), L207, L950", "claim", check_gamma_rates,
    statement="The speed control coefficient γ(t) > 0 satisfies γ(t) = O(η_Y t/K) when t ≤ ln(M)·K/η_Y and "
              "γ(t) = O(K ln(η_Y t/K)/(η_Y t)) when t ≥ 2(1+δ') ln(M)·K/η_Y with δ' = Θ(ln ln M/ln M).",
    params=_stage_params((_T0,)), domain=_GAMMA_DOMAIN, doc=check_gamma_rates.__doc__, cost=3))
