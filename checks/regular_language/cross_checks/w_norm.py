"""Second method of rl.cf.w_norm_growth: ‖W‖ along the λ → ∞ flow and along actual GD runs.

‖W‖ and λ‖∇_W L‖ along the flow over the derived leading order (ratios decided → 1 as τ → 0);
along the G_EP, G_CoT and G_X runs the printed rates' ratios, and ‖W_2‖ = ηλ‖∇_W L_1‖ (derived)
against the printed ‖W_2‖ <= η‖∇_W L_1‖.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from checks.claim import Context
from checks.regular_language.cross_checks._dynamics import (
    G_COT,
    G_X_COT,
    G_X_EP,
    TAU_ZERO,
    Run,
    _data,
    _flow,
    _g_ep,
    _limit,
    _phase1,
    _runs,
    _sym_data,
    _tag,
    _tally,
    _taus,
)
from derivations.core import Item
from derivations.regular_language import symbols as S
from derivations.regular_language import w_norm as WN
from numerics.models.regular_language import RLModel


# ============================================================================ rl.cf.w_norm_growth


def _w_norm_runs(ctx: Context) -> list[Run]:
    runs = _g_ep() + G_COT + G_X_EP + G_X_COT
    if not ctx.quick:  # G_EP+ and G_CoT+
        runs += _g_ep((36.0, 360.0, 3600.0), (0.01, 0.002, 0.0005))
        runs += [Run("cot", 4, lam, eta, round(3 / (eta * (7 if flag == "2L0-1" else 6))), flag)
                 for lam in (49.0, 490.0, 4900.0) for eta in (0.01, 0.002) for flag in ("2L0-1", "2L0-2")]
    return _runs(ctx, list(dict.fromkeys(runs)))


def _second_step(run: Run, thetas: np.ndarray, gW: np.ndarray) -> dict[str, Any]:
    w2 = float(np.linalg.norm(thetas[2][run.data.dim:]))
    boosted = run.eta * run.lam * gW[1]
    return {"run": run.name, "lam": run.lam, "W_2": w2, "eta_grad_W_1": float(run.eta * gW[1]),
            "eta_lam_grad_W_1": float(boosted), "rel_diff_from_eta_lam": float(abs(w2 - boosted) / boosted),
            "printed_W2_le_eta_grad_holds": bool(w2 <= run.eta * gW[1])}


def w_norm_growth(ctx: Context, item: Item) -> dict[str, Any]:
    """Check ‖W‖ growth along the flow (τ → 0 ratios to the derived leading order) and along GD runs.

    Along the runs: the printed rates' ratios, and ‖W_2‖ = ηλ‖∇_W L_1‖ (derived) against the printed
    ‖W_2‖ <= η‖∇_W L_1‖.
    """
    taus = sorted(_taus(ctx), reverse=True)
    limits, disagrees = [], []
    for task, n, flag in (("ep", 4, "2L0-1"), ("ep", 6, "2L0-1"), ("cot", 4, "2L0-1")):
        ds, data = _sym_data(task, n, flag), _data(task, n, flag)
        tag, d = _tag(ds), data.dim
        flow = _flow(task, n, flag, tuple(taus), 200)
        lead = WN.leading_norm(ds)
        model = RLModel(data, 1.0)
        norms, rates = [], []
        for row in flow:
            point = row.copy()
            point[d:] = 0.0
            norms.append(float(np.linalg.norm(row[d:])))
            rates.append(float(np.linalg.norm(model.gradient(point)[1][d:])))
        predicted = np.array([float(lead.subs(S.tau, tau)) for tau in taus])
        rate = 2 * predicted / np.array(taus)
        for name, values, want in (("W_norm", norms, predicted), ("lam_grad_W", rates, rate)):
            rec = _limit(taus, np.array(values) / want, TAU_ZERO, 1.0, 1e-9, f"{name}.{tag}")
            rec["derived_leading"] = sp.sstr(lead if name == "W_norm" else 2 * lead / S.tau)
            limits.append(rec)
            if rec["verdict"] == "disagrees":
                disagrees.append(f"leading.{name}.{tag}")
    gd, second = [], []
    # the printed second link holds exactly when λ <= 1: a run at λ = 0.5 shows that side
    for run in [*_w_norm_runs(ctx), Run("ep", 6, 0.5, 0.01, 17)]:
        data, thetas = run.data, _phase1(run)
        model = RLModel(data, run.lam)
        d, L = data.dim, data.L_max
        gW = np.array([np.linalg.norm(model.gradient(th)[1][d:]) for th in thetas])
        Wn = np.linalg.norm(thetas[:, d:], axis=1)
        t = np.arange(1, thetas.shape[0], dtype=float)
        lead = float(WN.leading_norm(_sym_data(run.task, run.n, run.flag)).subs(S.tau, 1))
        gd.append({"run": run.name, "sup_grad_W_over_Lmax_eta_t": float(np.max(gW[1:] / (L * run.eta * t))),
                   "sup_lam_grad_W_over_Lmax_eta_t": float(np.max(run.lam * gW[1:] / (L * run.eta * t))),
                   "sup_W_over_Lmax_eta2_t2": float(np.max(Wn[1:] / (L * run.eta**2 * t**2))),
                   "W_t0_over_leading": float(Wn[-1] / (lead * (run.eta * run.t0) ** 2))})
        if run.t0 >= 2:
            second.append(_second_step(run, thetas, gW))
            if second[-1]["rel_diff_from_eta_lam"] > 1e-13:
                disagrees.append(f"boosted_t2.{run.name}")
    fails = [r for r in second if not r["printed_W2_le_eta_grad_holds"]]
    iff = all((r["lam"] > 1) == (not r["printed_W2_le_eta_grad_holds"]) for r in second)
    tally = _tally(limits)
    which = "exactly those with" if iff else "not exactly those with"
    summary = (f"flow: ‖W‖ and λ‖∇_W L‖ over the derived leading order → 1 as τ → 0 for {tally['agrees']}/"
               f"{len(limits)}; GD runs: ‖W_2‖ = ηλ‖∇_W L_1‖ to "
               f"{max(r['rel_diff_from_eta_lam'] for r in second):.1e} rel., so the printed "
               f"‖W_2‖ <= η‖∇_W L_1‖ fails in {len(fails)}/{len(second)} runs ({which} λ > 1); "
               f"sup ‖W_t‖/(L_max η²t²) = {max(r['sup_W_over_Lmax_eta2_t2'] for r in gd):.3g}, "
               f"sup λ‖∇_W L_t‖/(L_max ηt) = {max(r['sup_lam_grad_W_over_Lmax_eta_t'] for r in gd):.3g}")
    return {"limits": limits, "gd_runs": gd, "second_step": second, "summary": summary,
            "disagrees": disagrees}
