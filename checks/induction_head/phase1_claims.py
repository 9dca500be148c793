"""Thm 4 Phase I ([W] Thm 4, App. C.4; [F] Thm 5.5, C.3) and its supplementary ratio experiment.

ih.thm4.phase1: "let T_I = O(1), then L_G4(θ(T_I)) ≤ 0.01 L_G4(θ(0)) and L_IH2(θ(T_I)) ≥ 0.99 L_IH2(θ(0))".
Under the ideal first layer and separate value layout the (p, g) and (h, w) blocks are independent
(spec §2.7): T_I^min (first t with L_G4 ≤ 0.01 L_G4(0)) comes from the (p, g) flow
(:mod:`numerics.models.induction_head.four_gram`), L_IH2 along t from the (h, w) flow of each IH
mode (:func:`checks.induction_head.ih_proof_runs.ih_run`). The existential statement is tested by
its window (spec §0.2 item 5): the set of t ≥ T_I^min on which L_IH2(t) ≥ 0.99 L_IH2(0); it is
[T_I^min, T^IH_{0.99}] when T_I^min ≤ T^IH_{0.99} and empty otherwise. The verdict is decided on the
grid points that meet the printed hypotheses (hidden constants read as 1, §2.11).

ih.exp.phase1_ratio: L_IH2(T_I^min)/L_IH2(0) against L per mode, with the SGD value at L = 40.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from checks.claim import Claim, Context, Outcome, Param
from checks.induction_head.ih_proof_runs import MODES, combine, ih_run
from checks.registry import register
from derivations.induction_head import symbols as S

PAPER = "ih"
IH_MODES = ("paper", "balanced", "softmaxLL")
RANGES = ("canonical", "literal")
#: G_I (spec) swept over L × α* × σ, the IH modes and head-1 ranges; the defaults are D0, where the SGD
#: comparison runs
PARAMS = (
    Param("L", 40, quick=(40, 400, 4000), full=(40, 400, 4000, 40000), doc="G_I lengths; the SGD run's L"),
    Param("alpha", 1.0, full=(0.5, 1.0, 2.0, 4.0, 8.0), doc="G_I values of α*; the SGD run's α*"),
    Param("sigma", 0.01, full=(1e-2, 1e-4, 1e-6), doc="G_I values of σ_init; the SGD run's σ"),
    Param("wstar", 0.49, doc="w*"),
    Param("flow", "paper", quick=IH_MODES, choices=IH_MODES,
          doc="IH mode of the (h, w) flow; unpinned: every mode, paper decides"),
    Param("head1_range", "canonical", quick=RANGES, choices=RANGES,
          doc="flag head1_range of the (p, g) flow; unpinned: both, canonical decides"),
    Param("ih_model_range", "canonical", choices=RANGES, doc="flag ih_model_range of the (h, w) flow"),
    Param("sgd", 0, full=(1,), choices=(0, 1),
          doc="1: run SGD of the actual model at (L, α*, σ, w*); unpinned: quick 0, full 1"),
)


#: the grid of the T_I = O(1) decision: σ → 0 over 1.5 decades at L = 1e4, 3e4 and L → ∞ over 1.5 decades at
#: σ ≥ 1e-3, every point of those slices inside Lσ ≥ 1
T_I_LIMIT = {"L": (100, 1000, 3000, 10000, 30000), "alpha": (1.0, 4.0), "sigma": (1e-2, 3e-3, 1e-3, 3e-4)}
#: relative accuracy of T_I^min (event located on the dense output at rtol 1e-10)
T_I_REL_ERR = 1e-6


def hypotheses(L: int, alpha: float, sigma: float) -> dict[str, bool]:
    """Printed hypotheses of Thm 4 and App. C.3 at hidden constants 1 (spec §2.11)."""
    return {"alpha_Omega_1": alpha >= 1, "sigma_small": sigma <= 1e-2, "L_large": L >= 40,
            "L_Omega_1_over_sigma": L * sigma >= 1, "alpha_gt_1_C31": alpha > 1}


def in_regime(hyp: dict[str, bool]) -> bool:
    """Thm 4's preamble plus L = Ω(1/σ) (the C.3.1 requirement α* > 1 is recorded, not required)."""
    return all(v for k, v in hyp.items() if k != "alpha_gt_1_C31")


@functools.lru_cache(maxsize=512)
def t_I(L: int, alpha: float, sigma: float, head1_range: str = "canonical") -> tuple[float, float]:
    """(T_I^min, L_G4(0)) of the (p, g) flow from p = g = σ (NaN when L_G4 never reaches 1 % of its start)."""
    from numerics.models.induction_head.four_gram import four_gram_run

    run = four_gram_run(L, alpha, sigma, head1_range=head1_range, horizon=2e3, n_save=60)
    if not math.isfinite(run.events["T_I"]):  # α* small: look further (the Rodas4P tail is cheap)
        run = four_gram_run(L, alpha, sigma, head1_range=head1_range, horizon=1e6, n_save=60)
    return run.events["T_I"], run.loss0


def point(L: int, alpha: float, sigma: float, wstar: float, mode: str, ih_model_range: str,
          head1_range: str = "canonical") -> dict[str, Any]:
    """Every Phase-I quantity at one configuration and reading."""
    tI, g4_0 = t_I(L, alpha, sigma, head1_range)
    hyp = hypotheses(L, alpha, sigma)
    rec: dict[str, Any] = {"config": {"L": L, "alpha": alpha, "sigma": sigma, "wstar": wstar},
                           "reading": f"{mode}/{ih_model_range}/{head1_range}",
                           "hypotheses": hyp, "in_regime": in_regime(hyp), "T_I_min": tI if math.isfinite(tI) else None,
                           "L_G4_0": g4_0}
    if not math.isfinite(tI):
        rec["parts"] = {"window": {"status": "outside-regime", "reason": "L_G4 never falls to 1 % of L_G4(0)"}}
        return rec
    scale = (1 + alpha) ** 2 * L * math.log(1 / sigma) / wstar**2
    run = ih_run(L, alpha, wstar, sigma, mode, ih_model_range, max(1.5 * tI, 10.0) / scale)
    loss0 = float(run.loss[0])
    ratio_tI = float(np.interp(tI, run.t, run.loss)) / loss0
    below = np.flatnonzero(run.loss < 0.99 * loss0)
    t99 = float(run.t[below[0]]) if below.size else math.inf
    h_tI, w_tI = float(np.interp(tI, run.t, run.h)), float(np.interp(tI, run.t, run.w))
    grad_h = -float(run.dh[0])
    grad_w = -float(run.dw[0]) * (1.0 if MODES[mode][1] == "paper" else 2.0)  # ∂_w L(w²) = 2w ∂_P L
    lipschitz = 2 * sigma * (abs(grad_w) + abs(grad_h))
    delta = abs(ratio_tI - 1) * loss0
    slope = 1 / ((1 + alpha) * L)
    parts = {
        "window": {"status": "holds" if tI <= t99 else "fails",
                   "statement": "{t : L_G4(t) ≤ 0.01 L_G4(0) and L_IH2(t) ≥ 0.99 L_IH2(0)} non-empty",
                   "window": [tI, t99] if tI <= t99 else None, "T_I_min": tI, "T_IH_0.99": t99,
                   "L_IH2_ratio_at_T_I": ratio_tI},
        "w_below_2sigma": {"status": "holds" if w_tI < 2 * sigma else "fails", "statement": "w(T_I) < 2σ",
                           "w_over_sigma": w_tI / sigma},
        "h_below_2sigma": {"status": "holds" if h_tI < 2 * sigma else "fails", "statement": "h(T_I) < 2σ",
                           "h_over_sigma": h_tI / sigma},
        "lipschitz_step": {"status": "holds" if delta <= lipschitz else "fails",
                           "statement": "|L_IH2(T_I) - L_IH2(0)| ≤ 2σ(|∂_w L| + |∂_h L|) (gradients at θ(0))",
                           "lhs": delta, "rhs": lipschitz},
        "lipschitz_final": {"status": "holds" if lipschitz <= 0.01 * loss0 else "fails",
                            "statement": "2σ(|∂_w L| + |∂_h L|) ≤ 0.01 L_IH2(θ(0))", "lhs": lipschitz,
                            "rhs": 0.01 * loss0},
    }
    for reading, event in (("T_1h", "T_1h"), ("h_ge_hstar_half", "T_h_half")):
        end = run.events[event]
        mask = (run.t > 0) & (run.t < (end if math.isfinite(end) else run.t[-1]))
        if mask.any():
            parts[f"h_bound_{reading}"] = {
                "status": "holds", "statement": "h(t) < σ + O(t/((1+α*)L)) for t < T^h_{1/2}: the hidden constant",
                "max_constant": float(np.max((run.h[mask] - sigma) / (run.t[mask] * slope))),
                "window_end": end if math.isfinite(end) else None}
            parts[f"w_bound_{reading}"] = {
                "status": "holds", "statement": "w(t) < σ + o(t/((1+α*)L)): max of (w - σ)/(t/((1+α*)L))",
                "max_ratio": float(np.max((run.w[mask] - sigma) / (run.t[mask] * slope)))}
    rec["parts"] = parts
    rec["L_IH2_ratio"] = ratio_tI
    return rec


def _grid(ctx: Context) -> list[dict[str, Any]]:
    axes = {k: ctx.grid(k) for k in ("L", "alpha", "sigma")}
    return [dict(zip(axes, c, strict=True)) for c in itertools.product(*axes.values())]


def _readings(ctx: Context) -> list[tuple[str, str, str]]:
    modes, ranges, ih_range = ctx.grid("flow"), ctx.grid("head1_range"), ctx.value("ih_model_range")
    pairs = [(m, ih_range, h) for h in ranges for m in modes]
    if ctx.quick:
        pairs = [p for p in pairs if p[2] == ranges[0] or p[0] == modes[0]]
    return pairs


def _records(ctx: Context) -> list[dict[str, Any]]:
    out = []
    wstar = float(ctx.value("wstar"))
    readings = _readings(ctx)
    grid = _grid(ctx)
    for i, (cfg, (mode, rng, h1)) in enumerate(itertools.product(grid, readings)):
        ctx.report_progress(i / (len(grid) * len(readings)), f"{mode} L={cfg['L']}")
        rec = point(int(cfg["L"]), float(cfg["alpha"]), float(cfg["sigma"]), wstar, mode, rng, h1)
        rec["canonical"] = (mode, h1) == (readings[0][0], readings[0][2])
        out.append(rec)
    return out


def _sgd_d0(ctx: Context, tokens: str = "gaussian") -> dict[str, Any]:
    """SGD of the actual model (η = 0.1, B = 1000): T_I^min of the run and L_IH2(T_I)/L_IH2(0).

    At D0 (L = 40, α* = 1, σ = 0.01, w* = 0.49) unless the user pinned one of them.
    """
    from numerics.models.induction_head.sgd import Stage2Config, train_stage2

    L, alpha, sigma = int(ctx.value("L")), float(ctx.value("alpha")), float(ctx.value("sigma"))
    tI, _ = t_I(L, alpha, sigma)
    iterations = int(math.ceil(1.3 * tI / 0.1))
    config = Stage2Config(L=L, alpha=alpha, wstar=float(ctx.value("wstar")), sigma=sigma, tokens=tokens)
    run = train_stage2(config, lr=0.1, batch=1000, iterations=iterations, seed=ctx.seed, log_every=20)
    g4, ih, se = run["L_G4"], run["L_IH2"], run["L_IH2_se"]
    hit = np.flatnonzero(g4 <= 0.01 * g4[0])
    if not hit.size:
        return {"tokens": tokens, "T_I_min": None, "iterations": iterations}
    k = int(hit[0])
    ratio = ih[k] / ih[0]
    ratio_se = ratio * math.hypot(se[k] / ih[k], se[0] / ih[0])
    return {"tokens": tokens, "T_I_min": float(run.t[k]), "T_I_min_ode": tI, "L_IH2_ratio": float(ratio),
            "L_IH2_ratio_se": float(ratio_se), "iterations": iterations, "eval_size": run.meta["eval_size"],
            "note": "evaluation set is fixed, so the two L_IH2 values are correlated: the SE is conservative"}


def _want_sgd(ctx: Context) -> bool:
    return bool(ctx.grid("sgd")[0])


def check_phase1(ctx: Context) -> Outcome:
    """ih.thm4.phase1: the window where L_G4 ≤ 0.01 L_G4(0) and L_IH2 ≥ 0.99 L_IH2(0) hold together, over G_I."""
    records = _records(ctx)
    canon = [r for r in records if r["canonical"]]
    regime = [r for r in canon if r["in_regime"]]
    by_reading: dict[str, dict[str, str]] = {}
    for r in records:
        for name, part in r["parts"].items():
            by_reading.setdefault(r["reading"], {}).setdefault(name, [])
            by_reading[r["reading"]][name].append(part["status"])
    by_reading = {k: {n: combine(v) for n, v in d.items()} for k, d in by_reading.items()}
    status = combine(r["parts"]["window"]["status"] for r in regime) if regime else "outside-regime"
    extra: dict[str, Any] = {"T_I_O1": _t_I_limit(ctx)}
    figures = [extra["T_I_O1"].pop("figure")] if extra["T_I_O1"].get("figure") else []
    if regime:
        status = combine([status, extra["T_I_O1"]["status"]])
    if _want_sgd(ctx):
        extra["sgd_D0"] = [_sgd_d0(ctx, "gaussian")] + ([] if ctx.quick else [_sgd_d0(ctx, "boolean")])
    else:
        extra["sgd_D0"] = "not run (quick budget; --param sgd=1 to run)"
    empty = [r["config"] for r in regime if r["parts"]["window"]["status"] == "fails"]
    d0 = next((r for r in canon if r["config"]["L"] == 40 and r["config"]["alpha"] == 1.0), canon[0])
    summary = (f"{len(regime)} of {len(canon)} canonical points meet the hypotheses (Lσ ≥ 1, α* ≥ 1); window empty at "
               f"{len(empty)} of them"
               + (f" (e.g. L={empty[0]['L']}, α*={empty[0]['alpha']}, σ={empty[0]['sigma']})" if empty else "")
               + f"; at L={d0['config']['L']}, α*={d0['config']['alpha']}: T_I^min={d0['T_I_min']:.4g}, "
               f"L_IH2(T_I)/L_IH2(0)={d0.get('L_IH2_ratio', float('nan')):.4g}"
               f"; T_I^min = O(1) in the limit σ → 0, L → ∞: {extra['T_I_O1']['summary']}")
    evidence = {"grid": {k: sorted({r["config"][k] for r in records}) for k in ("L", "alpha", "sigma", "wstar")},
                "canonical_reading": {"flow": "paper", "ih_loss": "exp_simplified", "head1_range": "canonical",
                                      "ih_model_range": "canonical", "init": "eq4", "Th_half_reading": "T_1h"},
                "decision": "window non-empty at every canonical grid point meeting the hypotheses, at a time "
                            "T_I^min that is O(1) in the limit σ → 0, L → ∞ (checks.asymptotics)",
                "readings": by_reading, "claim_parts": extra, "records": records}
    return Outcome(status, summary, evidence, figures)


def _t_I_limit(ctx: Context) -> dict[str, Any]:
    """"Let T_I = O(1)": T_I^min (the first t with L_G4 ≤ 0.01·L_G4(0), the earliest admissible T_I) decided
    in the limit σ → 0, L → ∞ on its own grid (T_I_LIMIT), on the points meeting L = Ω(1/σ) and α* ≥ 1.
    A pinned L, α* or σ replaces that axis of the grid."""
    from checks.asymptotics import Asymptotic, decide as decide_limit, figure as limit_figure

    head1 = ctx.grid("head1_range")[0]
    axes = {k: ([ctx.value(k)] if ctx.is_pinned(k) else T_I_LIMIT[k]) for k in ("L", "alpha", "sigma")}
    points = [dict(zip(axes, c, strict=True)) for c in itertools.product(*axes.values())]
    times = np.array([t_I(int(p["L"]), float(p["alpha"]), float(p["sigma"]), head1)[0] for p in points])
    regime = [in_regime(hypotheses(int(p["L"]), float(p["alpha"]), float(p["sigma"]))) for p in points]
    decision = decide_limit("O", times, np.ones_like(times), points,
                            variables=(Asymptotic("sigma", "0", "algebraic"), Asymptotic("L", "inf", "algebraic")),
                            rel_err=T_I_REL_ERR, regime=regime, regime_name="Thm 4's hypotheses (Lσ ≥ 1, α* ≥ 1, σ ≤ 0.01)")
    fig = limit_figure(decision, ctx.figure_path("T_I_limit.png"), title="T_I^min (rate 1)")
    # a second reading of the σ-dependence: T_I^min = a + b·ln(1/σ) at the largest L, per α*
    log_slopes = {}
    for alpha in axes["alpha"]:
        sel = [i for i, p in enumerate(points) if p["alpha"] == alpha and p["L"] == max(axes["L"]) and regime[i]]
        if len(sel) >= 3:
            x = np.log(1 / np.array([points[i]["sigma"] for i in sel]))
            (b, a), cov = np.polyfit(x, times[sel], 1, cov=True) if len(sel) > 3 else (np.polyfit(x, times[sel], 1), None)
            log_slopes[str(alpha)] = {"L": max(axes["L"]), "a": float(a), "b_per_ln_1_over_sigma": float(b),
                                      "b_se": float(np.sqrt(cov[0, 0])) if cov is not None else None}
    return {"status": decision.status.value, "summary": decision.summary, "limit": decision.to_dict(),
            "T_I_vs_ln_1_over_sigma": log_slopes,
            "constant_band": list(decision.constant_band()), "head1_range": head1,
            "T_I_min": [{**p, "T_I_min": float(t), "T_I_gstar2": float(t * (p["alpha"] / (1 + p["alpha"])) ** 2),
                         "in_regime": bool(g)} for p, t, g in zip(points, times, regime, strict=True)],
            "figure": str(fig) if fig else None}


def check_phase1_ratio(ctx: Context) -> Outcome:
    """ih.exp.phase1_ratio: L_IH2(T_I^min)/L_IH2(0) against L (G_I) per IH mode, and the SGD value at D0."""
    records = _records(ctx)
    table: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if "L_IH2_ratio" in r:
            table.setdefault(r["reading"], []).append({**r["config"], "T_I_min": r["T_I_min"],
                                                       "ratio": r["L_IH2_ratio"]})
    sgd = [_sgd_d0(ctx, "gaussian")] if _want_sgd(ctx) else "not run (quick budget; --param sgd=1 to run)"
    figures = [_figure(ctx, table)]
    canon_key = next(iter(table)) if table else None
    rows = table.get(canon_key, [])
    regime = [x for x in rows if in_regime(hypotheses(x["L"], x["alpha"], x["sigma"]))]
    status = ("outside-regime" if not regime else
              "holds" if all(x["ratio"] >= 0.99 for x in regime) else "fails")
    by_L = {}
    for x in rows:
        by_L.setdefault(x["L"], []).append(x["ratio"])
    summary = (f"{canon_key}: ratio L_IH2(T_I)/L_IH2(0) by L: "
               + ", ".join(f"L={L}: [{min(v):.3g}, {max(v):.3g}]" for L, v in sorted(by_L.items()))
               + ("" if isinstance(sgd, str) else f"; SGD at L={int(ctx.value('L'))}: {sgd[0].get('L_IH2_ratio')}"))
    return Outcome(status, summary, {"ratios": table, "sgd_D0": sgd,
                                     "decision": "ratio ≥ 0.99 at every canonical point meeting the hypotheses"},
                   figures)


def _figure(ctx: Context, table: dict[str, list[dict[str, Any]]]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for reading, rows in table.items():
        pts = sorted((x["L"], x["ratio"]) for x in rows if x["alpha"] == rows[0]["alpha"] and x["sigma"] == rows[0]["sigma"])
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", label=reading)
    ax.axhline(0.99, color="k", lw=0.8, ls="--", label="0.99 (Thm 4)")
    ax.set_xscale("log")
    ax.set_xlabel("L")
    ax.set_ylabel(r"$L_{IH_2}(T_I^{min})/L_{IH_2}(0)$")
    ax.legend(fontsize=7)
    path = ctx.figure_path("phase1_ratio.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return str(path)


def _domain():
    return S.domain(S.L, S.alpha, S.sigma, S.wstar, constraints=S.EQ10_CONSTRAINTS[:1])


register(Claim("ih.thm4.phase1", PAPER, "[W] Thm 4 Phase I; C.4", "claim", check_phase1,
               statement=r"T_{\rm I}=\mathcal O(1):\ \mathcal L_{G_4}(\theta(T_{\rm I}))\le0.01\,\mathcal L_{G_4}"
                         r"(\theta(0)),\ \mathcal L_{IH_2}(\theta(T_{\rm I}))\ge0.99\,\mathcal L_{IH_2}(\theta(0))",
               label_alt="[F] Thm 5.5; C.3", params=PARAMS, domain=_domain(),
               doc=check_phase1.__doc__ or "", cost=4))
register(Claim("ih.exp.phase1_ratio", PAPER, "spec §6.5 (supplementary)", "experiment", check_phase1_ratio,
               statement=r"\mathcal L_{IH_2}(T_{\rm I}^{\min})/\mathcal L_{IH_2}(0)\ \text{against}\ L",
               label_alt="—", params=PARAMS, domain=_domain(), doc=check_phase1_ratio.__doc__ or "",
               cost=3))
