"""Supplementary experiments of the induction-head spec (§6.5): simplification gap, ODE vs SGD, Stage-I protocol.

Runs of the actual model against the reduced ODEs (``checks.induction_head.stage2_runs`` for the
runs, budgets and overlays) and the Stage-I protocol of [W] App. B.1.
"""

from __future__ import annotations

import math

import numpy as np

from checks.claim import Context, Outcome, Param
from checks.induction_head.phases import detect_phases
from checks.induction_head.stage2_runs import (
    MODEL_PARAMS,
    at_values,
    combine,
    curve_evidence,
    model_values,
    optimizer_runs,
    register_claim,
    run_curve,
    setup_evidence,
    stage2_config,
    stage2_experiment,
    stage2_panels,
    target_constants,
)
from checks.phases import Curve
from checks.plots import Panel, Series, save_both_axes

#: ih.exp.simplification_gap: the C.3.2 simplification counts as "nearly tight" on a window when
#: |L_exp/L_softmax - 1| <= 10% there (a 10% error moves a log-scale loss curve visibly but keeps
#: every phase time within the ODE/SGD scatter of ih.exp.ode_vs_sgd)
GAP_TOLERANCE = 0.10
#: ih.exp.ode_vs_sgd: an ODE "follows" SGD when T^w_{1/2}(ODE)/T^w_{1/2}(SGD) lies in [1/1.15, 1.15]
FOLLOW_TOLERANCE = 1.15
ODE_VS_SGD_CONFIGS = ((0.49, 1.0), (0.3, 1.0), (0.49, 4.0))


def _exp_simplified_along(curve: Curve, params) -> np.ndarray:
    """The exp-simplified L_IH2 (derived Eq. (10), canonical or literal range) at the curve's (h, w)."""
    from numerics.models.induction_head.stage2 import stage2_losses

    _, kernel = stage2_losses(params["head1_range"], params["ih_model_range"])
    par = curve.params
    with np.errstate(divide="ignore"):
        log_w = np.log(np.abs(par["w"]))
    return np.asarray(kernel(par["p"], par["g"], par["h"], log_w, float(params["L"]), params["alpha"],
                             params["wstar"]))


def _softmax_loss_mc(params, w: float, h: float, n: int, seed: int):
    """The true-softmax L_IH2 at (w, h) by Monte-Carlo (canonical range, Gaussian tokens), with its SE."""
    from numerics.models.induction_head.controls import softmax_loss_estimate

    return softmax_loss_estimate(int(params["L"]), w, h, params["alpha"], params["wstar"], n=n, seed=seed)


def _gap_points(curve: Curve, params, times, n: int, seed: int) -> list[dict[str, float]]:
    """exp-simplified (closed form) / true softmax (Monte-Carlo) at the curve's (h, w) at ``times``."""
    simplified = _exp_simplified_along(curve, params)
    points = []
    for when in times:
        i = int(np.argmin(np.abs(curve.t - when)))
        w, h = float(curve.params["w"][i]), float(curve.params["h"][i])
        est = _softmax_loss_mc(params, w, h, n, seed)
        r = float(simplified[i]) / est.mean
        points.append({"t": float(curve.t[i]), "w": w, "h": h, "exp_simplified": float(simplified[i]),
                       "softmax_mc": est.mean, "softmax_se": est.se, "ratio": r, "ratio_se": r * est.se / est.mean})
    return points


def check_simplification_gap(ctx: Context) -> Outcome:
    """ih.exp.simplification_gap: exp-simplified vs true-softmax L_IH2 along the SGD trajectory at D0 and the ODE.

    At selected times of the SGD run (and of the balanced ODE, up to its T_III) the exp-simplified
    loss (C.3.2, derived Eq. (10)) is evaluated in closed form at the trajectory's (h, w) and the
    true-softmax loss by Monte-Carlo at the same (h, w) (SE reported). The paper uses the
    simplification because "w ≈ σ_init is maintained over a long period": the verdict is decided
    on the SGD points in [0, T^w_{1/2}], with tolerance GAP_TOLERANCE = 10% on |ratio − 1|.
    """
    exp = stage2_experiment(ctx, "gaussian", seeds_full=1, until="T_w_half")
    curve, phases = exp["sgd"][0], exp["sgd_phases"][0]
    n = 50_000 if ctx.quick else 400_000
    hits = {k: phases.hits[k].t for k in ("T_I", "T_o", "T_w_half", "T_III")}
    grid = np.geomspace(max(curve.t[1], 1.0), curve.t[-1], 8 if ctx.quick else 16)
    times = sorted({0.0, *grid, *(v for v in hits.values() if math.isfinite(v))})
    sgd_points = _gap_points(curve, exp["params"], times, n, ctx.seed)
    t_half = hits["T_w_half"]
    window = [p for p in sgd_points if p["t"] <= (t_half if math.isfinite(t_half) else curve.t[-1])]
    worst = max(window, key=lambda p: abs(p["ratio"] - 1))
    gap, gap_se = abs(worst["ratio"] - 1), worst["ratio_se"]
    if gap - 4 * gap_se > GAP_TOLERANCE:
        status = "fails"
    elif gap + 4 * gap_se <= GAP_TOLERANCE and math.isfinite(t_half):
        status = "holds"
    else:
        status = "inconclusive"
    plateau = phases.ih_plateaus[-1] if phases.ih_plateaus else None
    on_plateau = [p for p in sgd_points if plateau and plateau.start <= p["t"] <= plateau.end]
    plateau_gap = max((abs(p["ratio"] - 1) for p in on_plateau), default=math.nan)
    ode_points = {}
    if "balanced" in exp["odes"]:
        ode = exp["odes"]["balanced"]
        ode_times = np.geomspace(1.0, ode.t[-1], 6 if ctx.quick else 12)
        ode_points = _gap_points(ode, exp["params"], ode_times, n, ctx.seed)
    simplified = _exp_simplified_along(curve, exp["params"])
    softmax, se = np.asarray(curve.losses["L_IH2"]), np.asarray(curve.losses["L_IH2_se"])
    panels = [Panel("L_IH2 along the SGD trajectory", "L_IH2",
                    [Series("true softmax (SGD evaluation set)", curve.t, softmax, se, {"color": "C1"}),
                     Series("exp-simplified at SGD's (h, w)", curve.t, simplified, None,
                            {"color": "C3", "ls": "--"})],
                    markers={"T_w_half": t_half, "T_III": hits["T_III"]}),
              Panel("ratio exp-simplified / true softmax", "ratio",
                    [Series("SGD (MC points)", np.array([p["t"] for p in sgd_points]),
                            np.array([p["ratio"] for p in sgd_points]),
                            np.array([p["ratio_se"] for p in sgd_points]),
                            {"marker": "o", "color": "C0"})]
                    + ([Series("balanced ODE (MC points)", np.array([p["t"] for p in ode_points]),
                               np.array([p["ratio"] for p in ode_points]), None,
                               {"marker": "s", "color": "k", "ls": "--"})] if ode_points else []),
                    log_y=False, markers={"T_w_half": t_half})]
    figures = save_both_axes(ctx, "simplification_gap", panels, "ih.exp.simplification_gap at D0")
    summary = (f"{status}: max |L_exp/L_softmax - 1| on [0, T^w_1/2={t_half:.4g}] = {gap:.3g} ± {gap_se:.2g} "
               f"at t={worst['t']:.4g} (tolerance {GAP_TOLERANCE}); on the Phase-II plateau {plateau_gap:.3g}; "
               f"ratio at t=0 {sgd_points[0]['ratio']:.3g}, at the end {sgd_points[-1]['ratio']:.3g}")
    evidence = {"setup": setup_evidence(exp["params"], exp["plan"], "gaussian"), "tolerance": GAP_TOLERANCE,
                "mc_samples_per_point": n, "window": [0.0, t_half], "hitting_times": hits,
                "worst": {"gap": gap, "se": gap_se, "t": worst["t"]}, "sgd_points": sgd_points,
                "phase_II_plateau": plateau.to_dict() if plateau else None, "max_gap_on_plateau": plateau_gap,
                "balanced_ode_points": ode_points, "ode_unavailable": exp["ode_missing"],
                "decision": "fails if the worst gap on [0, T^w_1/2] exceeds 10% by > 4 SE; holds if it is below "
                            "10% by > 4 SE; inconclusive otherwise or if T^w_1/2 is not reached"}
    return Outcome(status, summary, evidence, figures)


def check_ode_vs_sgd(ctx: Context) -> Outcome:
    """ih.exp.ode_vs_sgd: SGD against the paper ODE, balanced ODE and softmaxLL; T^w_{1/2} per curve.

    Configurations D0 and (w*, α*) ∈ {(0.3, 1), (0.49, 4)} (a pinned wstar or alpha replaces the
    list by the one pair, the other at its default). The hypothesis of spec §2.7 under test: online
    SGD follows the balanced flow. Decided on softmaxLL (the balanced flow of the large-L
    true-softmax loss that SGD descends): T^w_{1/2}(ODE)/T^w_{1/2}(SGD) within a factor
    FOLLOW_TOLERANCE = 1.15; inconclusive while the softmaxLL ODE is unavailable. The paper and
    balanced (exp-simplified) ratios are reported. At the quick budget only D0 runs (the others
    need 10⁵+ iterations to reach T^w_{1/2}).
    """
    configs = list(ODE_VS_SGD_CONFIGS)
    if ctx.is_pinned("wstar") or ctx.is_pinned("alpha"):
        configs = [(ctx.value("wstar"), ctx.value("alpha"))]
    results, statuses, figures = {}, [], []
    chosen = configs[:1] if ctx.quick else configs
    for j, (wstar, alpha) in enumerate(chosen):
        sub = at_values(ctx, lambda f, m, j=j: ctx.report_progress((j + f) / len(chosen), m), wstar=wstar,
                        alpha=alpha)
        params = model_values(sub)
        exp = stage2_experiment(sub, "gaussian", seeds_full=1, extend_full=True, until="T_w_half")
        sgd_half = exp["sgd_phases"][0].hits["T_w_half"].t
        times = {"SGD": sgd_half, **{m: p.hits["T_w_half"].t for m, p in exp["ode_phases"].items()}}
        ratio = {m: times[m] / sgd_half for m in exp["ode_phases"]}
        # SGD descends the true-softmax loss: only the balanced flow of that loss (softmaxLL) can decide;
        # the exp-simplified modes mix the flow question with the simplification (ih.exp.simplification_gap)
        judge = "softmaxLL"
        r = ratio.get(judge, math.nan)
        status = ("inconclusive" if not math.isfinite(r) else
                  "holds" if 1 / FOLLOW_TOLERANCE <= r <= FOLLOW_TOLERANCE else "fails")
        statuses.append(status)
        name = f"wstar={wstar},alpha={alpha}"
        results[name] = {"status": status, "judged_on": judge, "T_w_half": times, "ratio_ode_over_sgd": ratio,
                         "all_ratios": exp["ratios"], "setup": setup_evidence(params, exp["plan"], "gaussian"),
                         "curves": curve_evidence(exp), "ode_unavailable": exp["ode_missing"]}
        panels = stage2_panels(exp["sgd"], exp["odes"], {"T_w_half": sgd_half})[1:]
        figures += save_both_axes(ctx, f"ode_vs_sgd_w{wstar}_a{alpha}", panels, f"ih.exp.ode_vs_sgd {name}")
    if ctx.quick and len(configs) > 1:
        results["not_run_at_quick_budget"] = [f"wstar={w},alpha={a}" for w, a in configs[1:]]
    status = combine(statuses)
    summary = f"{status}: " + "; ".join(
        f"{k}: T^w_1/2 ODE/SGD " + ", ".join(f"{m}={v:.3g}" for m, v in r["ratio_ode_over_sgd"].items())
        for k, r in results.items() if isinstance(r, dict))
    evidence = {"configs": results, "tolerance_factor": FOLLOW_TOLERANCE,
                "decision": "per configuration: holds iff T^w_1/2(softmaxLL ODE)/T^w_1/2(SGD) is in "
                            "[1/1.15, 1.15]; the paper ODE's ratio is reported (ih.dv.balanced_flow predicts ~1/2)"}
    return Outcome(status, summary, evidence, figures)


register_claim("ih.exp.simplification_gap", "spec §6.5 (supplementary; [W] C.3.2 simplification)", "experiment",
               check_simplification_gap, "This approximation is nearly tight when z_1, ⋯, z_L ≈ 0. … our analysis "
               "shows that w ≈ σ_init is maintained over a long period.", label_alt="[F] C.2", cost=8)
register_claim("ih.exp.ode_vs_sgd", "spec §6.5 (supplementary; §2.7 flow modes)", "experiment", check_ode_vs_sgd,
               "Online SGD of the actual model (which trains w_Q and w_K separately) follows this [balanced] flow "
               "(spec §2.7).", cost=8)


# ----------------------------------------------------------------------------- Stage I protocol

STAGE1_LENGTHS = (40, 200)
STAGE1_INITS = ("c2", "eq4")
#: Stage I of [W] App. B.1: 100,000 iterations at η = 0.1, i.e. t = 10⁴
STAGE1_T = 1e4
STAGE1_QUICK = {"iterations": 1500, "batch": 100, "log_every": 100, "eval_size": 500}
STAGE1_FULL = {"iterations": 100_000, "batch": 1000, "log_every": 1000, "eval_size": 2000}


def _head1_weights(L: int, p0: float, head1_range: str) -> np.ndarray:
    """π_s = sm((−p(0)(L−1−s))_{s=2}^{S₁}) as a length-(L+1) vector (index s)."""
    last = L - 1 if head1_range == "canonical" else L - 2
    s = np.arange(2, last + 1)
    logits = -p0 * (L - 1 - s)
    pi = np.zeros(L + 1)
    pi[s] = np.exp(logits - logits.max())
    return pi / pi.sum()


def stage1_force(ptilde: np.ndarray, L: int, sigma: float, alpha: float, init: str,
                 head1_range: str = "canonical") -> np.ndarray:
    """−dL^I/dp̃ of head 1's Stage-I loss, at each p̃ (the other parameters frozen at θ(0)).

    L^I = ½ Σ_τ c_τ², c_τ = g(0) Σ_s π_s A_{sτ}(p̃) − g*[τ = L−2] (E x_i x_j = δ_ij), with
    dA_{sτ}/dp̃ = A_{sτ}(j̄_s − (s−1−τ)), j̄_s the A-weighted mean lag of row s. Head 2's
    p̃-dependence (``init`` eq4: keys y_s scaled by w_Q(0)w_K(0) = σ²) is left out; under c2 it is 0.
    """
    pi = _head1_weights(L, 0.0 if init == "c2" else sigma, head1_range)
    gstar = alpha / (1 + alpha)
    s_idx, t_idx = np.arange(L + 1)[:, None], np.arange(L + 1)[None, :]
    mask = (t_idx >= 1) & (t_idx <= s_idx - 1) & (s_idx >= 2)
    lag = np.where(mask, s_idx - 1 - t_idx, 0.0)
    out = np.empty(np.size(ptilde))
    flat = np.ravel(np.asarray(ptilde, float))
    for i0 in range(0, flat.size, 64):
        p = flat[i0:i0 + 64, None, None]
        A = np.where(mask, np.exp(-p * lag), 0.0)
        A /= np.maximum(A.sum(axis=2, keepdims=True), 1e-300)
        jbar = (A * lag).sum(axis=2, keepdims=True)
        dA = A * (jbar - lag)
        c = sigma * np.einsum("s,ksl->kl", pi, A)
        c[:, L - 2] -= gstar
        dc = sigma * np.einsum("s,ksl->kl", pi, dA)
        out[i0:i0 + 64] = -(c * dc).sum(axis=1)
    return out.reshape(np.shape(ptilde))


def stage1_trajectory(L: int, sigma: float, alpha: float, init: str, t_max: float, head1_range: str = "canonical",
                      p_max: float = 40.0, n: int = 4001) -> tuple[np.ndarray, np.ndarray]:
    """(t, p̃) of the Stage-I gradient flow from p̃(0) = σ, by quadrature t(p̃) = ∫_σ^p̃ dq / F(q).

    The flow is one-dimensional and autonomous, so its time is the integral of 1/F along p̃
    (trapezoid rule on ``n`` points; 1/F grows like e^{p̃}, so the relative error is ~h²/12).
    Stops where F ≤ 0 (a fixed point: p̃ does not tend to +∞) or at ``t_max``.
    """
    q = np.linspace(sigma, p_max, n)
    force = stage1_force(q, L, sigma, alpha, init, head1_range)
    bad = np.flatnonzero(force <= 0)
    stop = bad[0] if bad.size else n
    q, force = q[:stop], force[:stop]
    t = np.concatenate([[0.0], np.cumsum(0.5 * (1 / force[1:] + 1 / force[:-1]) * np.diff(q))])
    keep = np.searchsorted(t, t_max, side="right") + 1
    return t[:keep], q[:keep]


def g4_floor(ptilde: float, L: int, alpha: float, head1_range: str = "canonical") -> tuple[float, float]:
    """min over (p, g) of L_G4 with layer 1 frozen at ``ptilde``, and the minimising p.

    The head-1 residual is Σ_τ c_τ x_τ with c = g a(p) − g* e_{L−2}, a_τ(p) = Σ_s π_s(p) A_{sτ}(p̃);
    minimising ½‖c‖² over g gives ½ g*² (1 − a_{L−2}² / ‖a‖²), then a grid over p ∈ [−5, 60] with a
    bounded Brent refinement (a(p) is smooth in p; at p = 60 head 1 already reads only s = L−1).
    """
    from scipy.optimize import minimize_scalar

    from numerics.models.induction_head.sgd import layer1_matrix

    A = layer1_matrix(ptilde, L)
    gstar = alpha / (1 + alpha)

    def floor(p: float) -> float:
        a = _head1_weights(L, p, head1_range) @ A
        return 0.5 * gstar**2 * (1 - a[L - 2] ** 2 / (a @ a))

    grid = np.linspace(-5, 60, 651)
    k = int(np.argmin([floor(p) for p in grid]))
    best = minimize_scalar(floor, bounds=(grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]), method="bounded",
                           options={"xatol": 1e-10})
    return (float(best.fun), float(best.x)) if best.fun < floor(grid[k]) else (floor(grid[k]), float(grid[k]))


def check_stage1_protocol(ctx: Context) -> Outcome:
    """ih.exp.stage1_protocol: App. B.1's Stage I (flow and SGD), then Stage II with that layer vs the ideal one.

    Stage-I p̃(t) from the flow (quadrature) for L ∈ {40, 200} × init ∈ {c2, eq4}, t up to 10⁶, and
    SGD of the Stage-I model (L = 40 at the quick budget). p̃ at t = 10⁴ (the protocol's 100,000
    iterations at η = 0.1) gives the previous-token weight A_{L−1,L−2}(p̃). Stage II is then run
    with p̃ frozen there (``stage2_first_layer`` pipeline) and with the ideal layer; the analysis'
    assumption p̃ = +∞ describes the protocol if the pipeline/ideal hitting times T_I, T^w_{1/2},
    T_III agree within FOLLOW_TOLERANCE and the pipeline reaches each of them. If the smallest
    L_G4 reachable with the frozen first layer (``g4_floor``, exact) exceeds 1% of L_G4(0), Phase I
    can never end and the verdict fails at any budget.
    """
    from numerics.models.induction_head.sgd import previous_token_weight, train_stage1

    params = model_values(ctx)
    L0, sigma, alpha = int(params["L"]), params["sigma"], params["alpha"]
    lengths = sorted({L0, *(int(L) for L in ctx.grid("L"))})
    flows, sgd_runs = {}, {}
    for L in lengths:
        for init in STAGE1_INITS:
            t, p = stage1_trajectory(L, sigma, alpha, init, 1e6, params["head1_range"])
            at = {f"t={T:g}": float(np.interp(T, t, p)) if T <= t[-1] else math.nan
                  for T in (1e2, 1e3, 1e4, 1e5, 1e6)}
            p_end = at[f"t={STAGE1_T:g}"]
            flows[f"L={L},init={init}"] = {"ptilde_at": at, "previous_token_weight_at_t=1e4":
                                           previous_token_weight(p_end, L) if math.isfinite(p_end) else math.nan,
                                           "t_reached": float(t[-1]), "curve": (t, p)}
    s1 = dict(STAGE1_QUICK if ctx.quick else STAGE1_FULL)
    for k, init in enumerate(STAGE1_INITS):
        run = train_stage1(L0, sigma, init=init, lr=params["lr"], batch=s1["batch"], iterations=s1["iterations"],
                           seed=ctx.seed, log_every=s1["log_every"], eval_size=s1["eval_size"], alpha=alpha,
                           wstar=params["wstar"], head1_range=params["head1_range"],
                           ih_model_range=params["ih_model_range"], ih_keys=params["ih_keys"],
                           progress=lambda f, m, k=k, i=init: ctx.report_progress(0.1 * (k + f),
                                                                                  f"Stage I {i}: {m}"))
        t_ode, p_ode = flows[f"L={L0},init={init}"]["curve"]
        predicted = np.interp(run.t, t_ode, p_ode)
        sgd_p = run["p_tilde"]
        sgd_runs[init] = {"t_end": float(run.t[-1]), "ptilde_end": float(sgd_p[-1]),
                          "ode_ptilde_end": float(predicted[-1]),
                          "rel_dev_of_increment_at_end":
                              float((sgd_p[-1] - predicted[-1]) / (predicted[-1] - sigma)),
                          "summary": run.summary()}
    # Stage II: the protocol's first layer (flow value at t = 10⁴, canonical init eq4 of Eq. (4)) vs ideal
    p_pipe = flows[f"L={L0},init=eq4"]["ptilde_at"][f"t={STAGE1_T:g}"]
    from numerics.models.induction_head.sgd import g4_loss_exact, initial_theta

    pipe_config = stage2_config(params, "gaussian", first_layer=p_pipe)
    g4_start = g4_loss_exact(initial_theta(pipe_config), pipe_config)
    floor, floor_p = g4_floor(p_pipe, L0, alpha, params["head1_range"])
    never = floor > 0.01 * g4_start
    statuses = ["fails"] if never else []
    compared, end, phases_ev = {}, {}, {}
    panels = [Panel("Stage I: p̃(t) (flow)", "p̃", [Series(k, *v["curve"], None, {}) for k, v in flows.items()],
                    log_y=False)]
    # the exact floor already decides; at the quick budget the two Stage-II runs are then skipped
    if not (never and ctx.quick):
        exp_ideal = stage2_experiment(ctx, "gaussian", seeds_full=1, share=(0.2, 0.6))
        plan = exp_ideal["plan"]
        gstar, hstar, wstar = target_constants(params)
        pipe = run_curve("SGD pipeline", optimizer_runs(ctx, plan, pipe_config, share=(0.6, 1.0))[0])
        pipe_phases = detect_phases(pipe, gstar, hstar, wstar)
        ideal_phases, ideal = exp_ideal["sgd_phases"][0], exp_ideal["sgd"][0]
        for name in ("T_I", "T_w_half", "T_III"):
            x, y = pipe_phases.hits[name].t, ideal_phases.hits[name].t
            compared[name] = {"pipeline": x, "ideal": y,
                              "ratio": x / y if math.isfinite(x) and math.isfinite(y) else math.nan}
        for c in compared.values():
            if not math.isfinite(c["ideal"]):
                statuses.append("inconclusive")
            elif not math.isfinite(c["pipeline"]):
                statuses.append("inconclusive" if ctx.quick else "fails")
            else:
                statuses.append("holds" if 1 / FOLLOW_TOLERANCE <= c["ratio"] <= FOLLOW_TOLERANCE else "fails")
        end = {"pipeline": {k: float(pipe.losses[k][-1]) for k in ("L_G4", "L_IH2")},
               "ideal": {k: float(ideal.losses[k][-1]) for k in ("L_G4", "L_IH2")}}
        phases_ev = {"pipeline": pipe_phases.to_dict(), "ideal": ideal_phases.to_dict(),
                     "setup": setup_evidence(params, plan, "gaussian")}
        panels.append(Panel("Stage II partial losses: pipeline vs ideal", "L_G4, L_IH2",
                            [Series("L_G4 pipeline", pipe.t, pipe.losses["L_G4"], None, {"color": "C0"}),
                             Series("L_IH2 pipeline", pipe.t, pipe.losses["L_IH2"], pipe.se("L_IH2"),
                                    {"color": "C1"}),
                             Series("L_G4 ideal", ideal.t, ideal.losses["L_G4"], None, {"color": "C0", "ls": "--"}),
                             Series("L_IH2 ideal", ideal.t, ideal.losses["L_IH2"], None,
                                    {"color": "C1", "ls": "--"})]))
    status = combine(statuses)
    figures = save_both_axes(ctx, "stage1_protocol", panels, f"ih.exp.stage1_protocol (p̃ frozen at {p_pipe:.4g})")
    for v in flows.values():
        v.pop("curve")
    summary = (f"{status}: Stage I to t=1e4 gives p̃={p_pipe:.4g} (A_(L-1,L-2)="
               f"{flows[f'L={L0},init=eq4']['previous_token_weight_at_t=1e4']:.3g}); pipeline/ideal "
               + (", ".join(f"{k}={c['ratio']:.3g}" for k, c in compared.items())
                  or "not run (decided by the floor)")
               + f"; min reachable L_G4 with that layer = {floor / g4_start:.3g} × L_G4(0) "
               f"({'Phase I can never end' if never else 'Phase I can end'})")
    evidence = {"stage1_flow": flows, "stage1_sgd": sgd_runs, "stage1_sgd_plan": s1,
                "pipeline_ptilde": p_pipe,
                "pipeline_vs_ideal": compared, "end_losses": end,
                "g4_floor": {"min_L_G4_with_frozen_layer1": floor, "at_p": floor_p, "L_G4_0": g4_start,
                             "floor_over_L_G4_0": floor / g4_start, "phase_I_can_end": not never},
                "tolerance_factor": FOLLOW_TOLERANCE,
                "stage2_runs": phases_ev,
                "notes": ["Stage-I flow: head 1's loss only; under init=eq4 head 2's keys also depend on p̃, with "
                          "weight w_Q(0)w_K(0) = σ² (left out of the flow, present in the SGD)"],
                "decision": "fails if the exact L_G4 floor with the frozen layer exceeds 1% of L_G4(0) (T_I^min "
                            "unreachable); else holds iff T_I, T^w_1/2, T_III of the pipeline run are within a "
                            "factor 1.15 of the ideal run's; a time the ideal run reaches and the pipeline does not "
                            "fails at the full budget"}
    return Outcome(status, summary, evidence, figures)


register_claim("ih.exp.stage1_protocol", "spec §6.5 (supplementary; [W] App. B.1 protocol, C.2)", "experiment",
               check_stage1_protocol, "p^{(1,1)} = +\\infty holds during Stage II (the analysis) vs Stage I trained "
               "for 100,000 iterations (App. B.1)", label_alt="[F] App. B",
               params=(Param("L", 40, full=STAGE1_LENGTHS, doc="D0; the full budget also runs the Stage-I flow at "
                             "L = 40 and 200"), *(p for p in MODEL_PARAMS if p.name != "L")), cost=5)
