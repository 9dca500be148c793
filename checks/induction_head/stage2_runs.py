"""Shared machinery of the induction-head figure and experiment checks (spec §6): runs, ODE overlays, budgets.

Each check trains the actual model (``numerics.models.induction_head.sgd``; Fig. 4 the D-dimensional
model of ``highdim``), overlays the reduced ODEs from the same initial state (spec §2.7: paper ODE,
balanced ODE, softmaxLL; every SGD comparison is read against the balanced flows), detects the
phases and hitting times of every curve (``checks.phases``) and decides the paper's statement about
the figure on the run. Time is t = η × iteration throughout (spec §8).

Budgets. ``full`` runs the paper's protocol (App. B.1: η = 0.1, B = 1000, 100,000 iterations;
3 seeds for Fig. 1; a fixed evaluation set of 10⁵ sequences logged every 100 iterations).
``quick`` keeps η = 0.1 (so the time axis and the noise-free dynamics are the paper's) but shrinks
the batch to B = 32 and runs only until 1.2 × T_III of the balanced flows (the later of the balanced
ODE and softmaxLL; 1.2 × T^w_{1/2} for checks decided before the emergence ends; one seed, evaluation
set 2000, a log every 250 iterations): a smaller batch raises the SGD noise temperature η/B about
thirty-fold, which the evidence records (at D0 the phase times T_I, T^w_{1/2}, T_III of B = 32 and
B = 50 runs agree to 1%; T_o does not, see ``figures.FIG3_DECIDING``).
A run that ends before a phase can be seen makes the check ``inconclusive``, never ``holds``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Any

import numpy as np

from checks.claim import Claim, Context, Param
from checks.induction_head.phases import HITTING_TIMES, Phases, detect_phases, ratios
from checks.papers import paper
from checks.phases import Curve
from checks.plots import Panel, Series
from checks.registry import register
from derivations.errors import InvalidArgument
from derivations.induction_head import symbols as S

PAPER = "ih"
#: the protocol of [W] App. B.1 (full budget) and the quick proxy (module docstring)
FULL = {"batch": 1000, "iterations": 100_000, "log_every": 100, "eval_size": 100_000}
QUICK = {"batch": 32, "log_every": 250, "eval_size": 2000, "max_iterations": 45_000, "past_T_III": 1.2}
#: the model at D0 with the canonical readings, and the optimiser; the flags' choices are the model's
MODEL_PARAMS = (
    Param("L", 40, doc="D0"), Param("alpha", 1.0, doc="D0"), Param("wstar", 0.49, doc="D0"),
    Param("sigma", 0.01, doc="D0: the initialisation scale of θ(0)"),
    Param("lr", 0.1, doc="learning rate η ([W] App. B.1); time t = η × iteration"),
    Param("batch", QUICK["batch"], full=(FULL["batch"],),
          doc="minibatch size: the budget's (quick proxy 32, full the paper's 1000)"),
    Param("iterations", FULL["iterations"],
          doc="planned unless pinned: quick 1.2 × the needed event time of the balanced flows / η (at most "
              "45,000), full the paper's 100,000 (extended for configurations that need longer)"),
    Param("head1_range", "canonical", choices=("canonical", "literal"), doc="flag head1_range"),
    Param("ih_model_range", "canonical", choices=("canonical", "literal", "mixed"), doc="flag ih_model_range"),
    Param("ih_keys", "y", choices=("y", "x_prev"), doc="flag ih_keys: head 2's keys y_s or x_{s-1}"),
)
DOMAIN = S.domain(S.L, S.alpha, S.wstar, S.sigma)


def register_claim(claim_id: str, label: str, kind: str, check, statement: str, *, label_alt: str = "",
                   params: tuple = MODEL_PARAMS, cost: float) -> None:
    """Register a figure or experiment claim of this paper (the model's domain; doc: the check's docstring)."""
    register(Claim(claim_id, PAPER, label, kind, check, statement=statement, label_alt=label_alt,
                   params=params, domain=DOMAIN, doc=check.__doc__ or "", cost=cost))


def model_values(ctx: Context) -> dict[str, Any]:
    """The model's parameters and readings (``MODEL_PARAMS``) as ``ctx`` has them: pinned, else the defaults."""
    return {p.name: ctx.value(p.name) for p in MODEL_PARAMS}


def at_values(ctx: Context, progress=None, **values) -> Context:
    """``ctx`` at one configuration of a check's own sweep: ``values`` read as pinned by ``ctx.value``."""
    pinned = {**ctx.pinned, **values}
    return dataclasses.replace(ctx, params={n: pinned.get(n, p.default) for n, p in ctx.declared.items()},
                               pinned=pinned, progress=ctx.progress if progress is None else progress)


# ----------------------------------------------------------------------------- runs and curves


_RUNS: dict[tuple, Any] = {}


def train_cached(config, *, optimizer: str, lr: float, batch: int, iterations: int, seed: int, log_every: int,
                 eval_size: int, progress=None):
    """train_stage2, remembered within the process (claims sharing a worker reuse identical runs)."""
    from numerics.models.induction_head.sgd import train_stage2

    key = (config, optimizer, lr, batch, iterations, seed, log_every, eval_size)
    if key not in _RUNS:
        _RUNS[key] = train_stage2(config, optimizer=optimizer, lr=lr, batch=batch, iterations=iterations,
                                  seed=seed, log_every=log_every, eval_size=eval_size, progress=progress)
    return _RUNS[key]


def run_curve(label: str, run) -> Curve:
    """A :class:`Curve` from a training trajectory (population losses with SEs; w = √|w_Q w_K|)."""
    losses = {k: run[k] for k in ("L_G4", "L_IH2", "L_G4_se", "L_IH2_se") if k in run}
    return Curve(label, run.t, losses, {k: run[k] for k in ("p", "g", "h", "w") if k in run})


def target_constants(params) -> tuple[float, float, float]:
    alpha = params["alpha"]
    return alpha / (1 + alpha), 1 / (1 + alpha), params["wstar"]


def stage2_config(params, tokens: str = "gaussian", **changes):
    from numerics.models.induction_head.sgd import Stage2Config

    fields = {k: params[k] for k in ("L", "alpha", "wstar", "sigma", "head1_range", "ih_model_range", "ih_keys")}
    fields.update(changes)
    return Stage2Config(tokens=tokens, **fields)


def ode_curve(params, mode: str, horizon: float, tokens: str = "gaussian"):
    """The reduced Stage-II ODE of ``mode`` from θ(0) as a Curve, with its exact event times.

    Returns (curve, events), or (None, reason) when ``stage2_run`` lacks the option the mode
    needs or refuses the flag combination. The integration stops at T_III (``stage2_run``'s
    terminal event), so an ODE curve shows no Phase IV.
    """
    from numerics.models.induction_head.stage2 import stage2_run

    flow, loss = S.FLOW_MODES[mode]["flow"], S.FLOW_MODES[mode]["ih_loss"]
    options = inspect.signature(stage2_run).parameters
    kwargs: dict[str, Any] = {"flow": flow, "horizon": horizon, "n_save": 800,
                              "head1_range": params["head1_range"], "ih_model_range": params["ih_model_range"]}
    if loss != "exp_simplified":
        if "ih_loss" not in options:
            return None, f"stage2_run has no ih_loss option (needed for {mode})"
        kwargs["ih_loss"] = loss
    if tokens != "gaussian":
        if "tokens" not in options:
            return None, f"stage2_run has no tokens option (needed for the {tokens} ODE)"
        kwargs["tokens"] = tokens
    try:
        solution, (g4, ih) = stage2_run(int(params["L"]), params["alpha"], params["wstar"], params["sigma"],
                                        **kwargs)
    except InvalidArgument as refused:  # e.g. softmax_largeL has no literal ih_model_range
        return None, f"{mode} refused for these flags: {refused}"
    y = solution.y
    curve = Curve(f"ODE {mode}", solution.t, {"L_G4": np.asarray(g4), "L_IH2": np.asarray(ih)},
                  {"p": y[:, 0], "g": y[:, 1], "h": y[:, 2], "w": np.exp(y[:, 3])})
    return curve, {k: float(v) for k, v in solution.event_times.items()}


def ode_set(params, horizon: float, tokens: str = "gaussian") -> tuple[dict, dict, dict]:
    """(curves, events, unavailable) for the three ODE modes (the shorthands of spec §2.7)."""
    curves, events, missing = {}, {}, {}
    for mode in S.FLOW_MODES:
        curve, extra = ode_curve(params, mode, horizon, tokens)
        if curve is None:
            missing[mode] = extra
        else:
            curves[mode], events[mode] = curve, extra
    return curves, events, missing


def plan_budget(ctx: Context, t_needed: float, seeds_full: int, extend_full: bool = False) -> dict[str, Any]:
    """Optimiser budget: the paper's protocol (full) or the quick proxy long enough to pass ``t_needed``.

    ``extend_full``: at the full budget, run past 1.2 × ``t_needed`` even beyond the paper's
    100,000 iterations (for experiments whose configurations are slower than Fig. 1's).
    ``t_needed`` is the later time of the needed event in the balanced and softmaxLL ODEs.
    """
    lr = float(ctx.value("lr"))
    if not (math.isfinite(lr) and lr > 0):
        msg = f"lr={lr} must be a finite positive number"
        raise InvalidArgument(msg)
    if ctx.quick:
        plan = {"batch": QUICK["batch"], "log_every": QUICK["log_every"], "eval_size": QUICK["eval_size"],
                "seeds": [ctx.seed]}
        wanted = QUICK["past_T_III"] * t_needed / lr if math.isfinite(t_needed) else math.inf
        iterations = min(QUICK["max_iterations"], wanted)
        plan["iterations"] = int(math.ceil(iterations / plan["log_every"]) * plan["log_every"])
        plan["note"] = (f"quick proxy: B={plan['batch']} (paper 1000), {plan['iterations']} iterations "
                        f"(= {QUICK['past_T_III']} x the needed event time of the balanced flows, capped at "
                        f"{QUICK['max_iterations']}), 1 seed, evaluation set {plan['eval_size']}; "
                        f"noise temperature η/B = {lr / plan['batch']:.2g}"
                        f" (paper {lr / 1000:.2g})")
    else:
        plan = {**FULL, "seeds": [ctx.seed + k for k in range(seeds_full)]}
        plan["note"] = "paper protocol ([W] App. B.1): B=1000, 100,000 iterations, evaluation set 10^5"
        if extend_full and math.isfinite(t_needed) and QUICK["past_T_III"] * t_needed / lr > plan["iterations"]:
            plan["iterations"] = int(math.ceil(QUICK["past_T_III"] * t_needed / lr / 1000) * 1000)
            plan["note"] += f"; extended to {plan['iterations']} iterations (1.2 x the needed event time)"
    for name in ("batch", "iterations"):
        if ctx.is_pinned(name):
            value = ctx.value(name)
            if int(value) != value or value < 1:
                msg = f"{name}={value} must be a positive integer"
                raise InvalidArgument(msg)
            plan[name] = int(value)
            plan["note"] += f"; overridden by --param: {name}={int(value)}"
    plan["iterations"] = max(plan["iterations"], plan["log_every"])
    plan["lr"] = lr
    return plan


def optimizer_runs(ctx: Context, plan, config, optimizer: str = "sgd", share: tuple[float, float] = (0.0, 1.0),
                   lr: float | None = None) -> list:
    lr = plan["lr"] if lr is None else lr
    runs = []
    n = len(plan["seeds"])
    for k, seed in enumerate(plan["seeds"]):
        lo = share[0] + (share[1] - share[0]) * k / n
        span = (share[1] - share[0]) / n

        def progress(f, message, lo=lo, span=span, seed=seed):
            ctx.report_progress(lo + span * f, f"{optimizer} seed {seed}: {message}")

        runs.append(train_cached(config, optimizer=optimizer, lr=lr, batch=plan["batch"],
                                 iterations=plan["iterations"], seed=seed, log_every=plan["log_every"],
                                 eval_size=plan["eval_size"], progress=progress))
    return runs


def mean_times(phases: list[Phases]) -> dict[str, float]:
    out = {}
    for name in HITTING_TIMES:
        values = [p.hits[name].t for p in phases]
        out[name] = float(np.mean(values)) if all(math.isfinite(v) for v in values) else math.nan
    return out


def setup_evidence(params, plan, tokens: str, optimizer: str = "sgd") -> dict[str, Any]:
    return {"L": params["L"], "alpha": params["alpha"], "wstar": params["wstar"], "sigma": params["sigma"],
            "tokens": tokens, "optimizer": optimizer, "lr": plan["lr"], "batch": plan["batch"],
            "iterations": plan["iterations"], "t_end": plan["lr"] * plan["iterations"], "seeds": plan["seeds"],
            "log_every": plan["log_every"], "eval_size": plan["eval_size"], "budget_note": plan["note"],
            "time_resolution": plan.get("time_resolution"), "unresolved_hitting_times": plan.get("unresolved", []),
            "readings": {"head1_range": params["head1_range"], "ih_model_range": params["ih_model_range"],
                         "ih_keys": params["ih_keys"], "init": "eq4", "stage2_first_layer": "ideal",
                         "value_layout": "separate"}}


def clip(curve: Curve, t_end: float) -> Curve:
    """The part of ``curve`` with t <= t_end (ODE overlays are integrated further than the runs)."""
    keep = curve.t <= t_end
    return Curve(curve.label, curve.t[keep], {k: np.asarray(v)[keep] for k, v in curve.losses.items()},
                 {k: np.asarray(v)[keep] for k, v in curve.params.items()})


def stage2_panels(sgd: list[Curve], odes: dict[str, Curve], markers: dict[str, float]) -> list[Panel]:
    """Fig. 1's three panels: total loss; partial losses; parameters p, g, h, w (SGD solid, ODEs styled)."""
    t_end = max(c.t[-1] for c in sgd)
    odes = {m: clip(c, t_end) for m, c in odes.items()}
    styles = paper(PAPER).styles
    total = [Series(c.label, c.t, c.total("L_G4", "L_IH2"), c.se("L_IH2"), {"color": f"C{k}"})
             for k, c in enumerate(sgd)]
    total += [Series(c.label, c.t, c.total("L_G4", "L_IH2"), None, {"color": "k", "ls": styles[m]})
              for m, c in odes.items()]
    first = sgd[0]
    partial = [Series(f"L_G4 {first.label}", first.t, first.losses["L_G4"], None, {"color": "C0"}),
               Series(f"L_IH2 {first.label}", first.t, first.losses["L_IH2"], first.se("L_IH2"), {"color": "C1"})]
    params = [Series(f"{name} {first.label}", first.t, first.params[name], None, {"color": f"C{k + 2}"})
              for k, name in enumerate(("p", "g", "h", "w"))]
    for mode, c in odes.items():
        style = styles[mode]
        partial += [Series(f"L_G4 ODE {mode}", c.t, c.losses["L_G4"], None, {"color": "C0", "ls": style}),
                    Series(f"L_IH2 ODE {mode}", c.t, c.losses["L_IH2"], None, {"color": "C1", "ls": style})]
        params += [Series(f"{name} ODE {mode}" if name == "w" else "_", c.t, c.params[name], None,
                          {"color": f"C{k + 2}", "ls": style}) for k, name in enumerate(("p", "g", "h", "w"))]
    return [Panel("total loss", "L", total, markers=markers),
            Panel("partial losses", "L_G4, L_IH2", partial, markers=markers),
            Panel("parameters (w = w_KQ)", "p, g = w_V1, h = w_V2, w", params, markers=markers,
                  legend="lower right")]


def stage2_experiment(ctx: Context, tokens: str, seeds_full: int, share=(0.0, 1.0),
                      extend_full: bool = False, until: str = "T_III") -> dict[str, Any]:
    """SGD runs of one token law with the ODE overlays, phases, hitting times and ODE/SGD ratios.

    ``until``: the ODE event the run must pass (1.2 × its later time in the balanced flows);
    checks decided before the emergence ends use ``T_w_half`` and stop earlier.
    """
    from numerics.models.induction_head.stage2 import time_scale

    params = model_values(ctx)
    gstar, hstar, wstar = target_constants(params)
    scale = time_scale(params["L"], params["alpha"], params["wstar"], params["sigma"])
    odes, events, missing = ode_set(params, 60 * scale, tokens)
    # the run must pass ``until`` in the balanced flows (softmaxLL is the one closest to SGD)
    t_needed = max((events[m].get(until, math.nan) for m in ("balanced", "softmaxLL") if m in events),
                   key=lambda v: v if math.isfinite(v) else -math.inf, default=math.nan)
    plan = plan_budget(ctx, t_needed, seeds_full, extend_full)
    runs = optimizer_runs(ctx, plan, stage2_config(params, tokens), share=share)
    sgd = [run_curve(f"SGD seed {run.meta['seed']}", run) for run in runs]
    sgd_phases = [detect_phases(c, gstar, hstar, wstar) for c in sgd]
    ode_phases = {m: detect_phases(c, gstar, hstar, wstar, known=events[m]) for m, c in odes.items()}
    sgd_mean = mean_times(sgd_phases)
    # a crossing inside the first two logging intervals is located only to within the logging step
    resolution = plan["lr"] * plan["log_every"]
    plan["time_resolution"] = resolution
    plan["unresolved"] = [k for k, v in sgd_mean.items() if math.isfinite(v) and v < 2 * resolution]
    return {"params": params, "plan": plan, "tokens": tokens, "runs": runs, "sgd": sgd, "sgd_phases": sgd_phases,
            "odes": odes, "ode_events": events, "ode_missing": missing, "ode_phases": ode_phases,
            "sgd_mean_times": sgd_mean, "ratios": {m: ratios(p.times(), sgd_mean) for m, p in ode_phases.items()},
            "constants": (gstar, hstar, wstar)}


def curve_evidence(exp: dict[str, Any]) -> dict[str, Any]:
    ev = {c.label: p.to_dict() for c, p in zip(exp["sgd"], exp["sgd_phases"], strict=True)}
    ev.update({f"ODE {m}": p.to_dict() for m, p in exp["ode_phases"].items()})
    return ev


def combine(statuses: list[str]) -> str:
    if "fails" in statuses:
        return "fails"
    return "holds" if statuses and all(s == "holds" for s in statuses) else "inconclusive"


def ratio_band(num, den) -> tuple[float, float, float]:
    """num/den with the extreme ratios of their SE brackets."""
    r = num.t / den.t if den.t else math.nan
    lo = num.lo / den.hi if den.hi else math.nan
    hi = num.hi / den.lo if den.lo else math.nan
    return r, min(lo, hi), max(lo, hi)


def within(lo: float, hi: float, tol: float) -> str:
    """holds if [lo, hi] ⊂ [1/tol, tol], fails if it misses that band, inconclusive otherwise (or NaN)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "inconclusive"
    if 1 / tol <= lo and hi <= tol:
        return "holds"
    if hi < 1 / tol or lo > tol:
        return "fails"
    return "inconclusive"
