"""Trajectories of the IH head (h, w) for the proof-level claims of [W] App. C.3.2, and their bookkeeping.

The (h, w) block of Stage II is independent of the 4-gram block (p, g) under the ideal first
layer and separate value layout (spec §2.7). The runs come from the toolkit's one (h, w) engine,
``numerics.models.induction_head.stage2.ih_flow`` integrated by ``sweeps.run_grid`` (one batch per
mode, in scaled time τ = t/S, events T_o = T_1^h, T_2h, T_w_half, T_w_001, T_h_half, T_h_below,
T_II, T_III), run to 60·S without the tail stop. The losses are the toolkit's own: the
exp-simplified L_IH2 (ih.cf.L_IH2's derivation, per head-2 range) or the large-L true-softmax loss
derived from its definition (``derive_verify.softmax_largeL_derived``; ih.dv.softmax_loss verifies it
equals the spec's stated form), under the ``paper`` or ``balanced`` flow (``derivations.flows``).
This module keeps only the claims' bookkeeping: windows, pointwise tests, verdicts.

Modes (spec §2.7): ``paper`` = (exp_simplified, paper), ``balanced`` = (exp_simplified,
balanced), ``softmaxLL`` = (softmax_largeL, balanced).

Verdict bookkeeping: a *part* is one printed display or statement tested on one run, with its
own status (holds / fails / outside-regime when its window is empty); a claim's status is
decided on the canonical reading (paper ODE, canonical range) over its grid of configurations.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import sympy as sp

from checks.claim import Context
from derivations.errors import InvalidArgument, NumericalTrouble

#: flow mode -> (ih_loss, flow) of spec §2.7
MODES = {"paper": ("exp_simplified", "paper"), "balanced": ("exp_simplified", "balanced"),
         "softmaxLL": ("softmax_largeL", "balanced")}
RANGES = ("canonical", "literal")
CANONICAL = ("paper", "canonical")
#: relative slack of a pointwise inequality along a run (the integrator's rtol is 1e-10)
POINT_TOL = 1e-9
#: states within this relative distance of (h*, w*) are at the solver's noise floor: signs of
#: velocities there are not resolved (spec ih.p1_1: "with the solver noise floor recorded")
EQUILIBRIUM_FLOOR = 1e-7
#: the proof's name T_1^h for the engine's T_o (Thm 4's T_o := T_1^h)
ALIASES = {"T_1h": "T_o"}
#: save grid in τ = t/S: evenly spaced on [0, 4] (the windows up to T_III) and log-spaced to the horizon
N_LINEAR, LINEAR_END, N_LOG = 3000, 4.0, 1000
#: runs integrated per batch
CHUNK = 256


def loss_kernel(mode: str, ih_model_range: str) -> Callable:
    """L_IH2(h, log_w, L, α*, w*) of a flow mode and head-2 range (compiled, broadcasting)."""
    from numerics.models.induction_head.stage2 import ih_loss_kernel

    return ih_loss_kernel(ih_model_range, MODES[mode][0])


def velocity_kernels(mode: str, ih_model_range: str) -> tuple[Callable, Callable]:
    """(dh/dt, dw/dt)(h, w, L, α*, w*) of a flow mode and head-2 range."""
    from numerics.models.induction_head.stage2 import ih_velocity

    loss, flow = MODES[mode]
    return ih_velocity(flow, ih_model_range, loss)


@dataclasses.dataclass(frozen=True)
class Run:
    """One (h, w) trajectory with velocities at the saved times and its hitting times (NaN: not reached)."""

    L: int
    alpha: float
    wstar: float
    sigma: float
    mode: str
    ih_model_range: str
    t: np.ndarray
    h: np.ndarray
    w: np.ndarray
    dh: np.ndarray
    dw: np.ndarray
    loss: np.ndarray
    events: dict[str, float]
    event_states: dict[str, tuple[float, float]]
    horizon: float

    @property
    def hstar(self) -> float:
        """h* = 1/(1+α*)."""
        return 1.0 / (1.0 + self.alpha)

    @property
    def scale(self) -> float:
        """S = (1+α*)² L ln(1/σ)/w*² (spec §2.11)."""
        from numerics.models.induction_head.stage2 import time_scale

        return time_scale(self.L, self.alpha, self.wstar, self.sigma)

    @property
    def reading(self) -> dict[str, str]:
        """The mode flags of this run."""
        loss, flow = MODES[self.mode]
        return {"flow": flow, "ih_loss": loss, "ih_model_range": self.ih_model_range}

    @property
    def label(self) -> str:
        """Short name of the reading."""
        return f"{self.mode}/{self.ih_model_range}"

    @property
    def config(self) -> dict[str, Any]:
        """The parameters of this run."""
        return {"L": self.L, "alpha": self.alpha, "wstar": self.wstar, "sigma": self.sigma}

    @property
    def resolved(self) -> np.ndarray:
        """Mask of the saved times whose state is farther than EQUILIBRIUM_FLOOR from (h*, w*)."""
        dist = np.maximum(np.abs(self.h / self.hstar - 1), np.abs(self.w / self.wstar - 1))
        return dist > EQUILIBRIUM_FLOOR

    def event(self, name: str) -> float:
        """A hitting time, NaN when not reached within the horizon."""
        return self.events[name]

    def state_at(self, name: str) -> dict[str, float]:
        """(t, h, w) where a hitting time fired (empty when it did not)."""
        time = self.events[name]
        if not math.isfinite(time):
            return {}
        h, w = self.event_states[name]
        return {"t": time, "h": h, "w": w}


def _check(mode: str, ih_model_range: str) -> None:
    if mode not in MODES:
        raise InvalidArgument(f"flow={mode!r} is not one of {', '.join(MODES)}")
    if ih_model_range not in RANGES:
        raise InvalidArgument(f"ih_model_range={ih_model_range!r} is not one of {', '.join(RANGES)}")


def ih_runs(specs: Iterable[tuple], horizon_factor: float = 60.0) -> list[Run]:
    """Runs of (L, α*, w*, σ, mode, range) from h(0) = w(0) = σ (init eq4) to horizon_factor·S; rtol 1e-10.

    One ``run_grid`` call (a batch per mode; runs already made in this process are recalled).
    Saved times: 3000 evenly spaced on [0, 4S] and 1000 log-spaced on [1e-8 S, horizon].
    Velocities are the flow's (dh/dt, dw/dt) at the saved states.
    """
    from numerics.models.induction_head.sweeps import run_grid

    specs = [(int(L), float(a), float(ws), float(sg), mode, rng) for L, a, ws, sg, mode, rng in specs]
    for spec in specs:
        _check(*spec[4:])
    points = [{"L": L, "alpha": a, "wstar": ws, "sigma": sg, "mode": mode, "ih_model_range": rng}
              for L, a, ws, sg, mode, rng in specs]
    out = []
    for start in range(0, len(specs), CHUNK):  # bounded memory at the full budget (thousands of runs)
        res = run_grid(points[start:start + CHUNK], horizon=horizon_factor, n_log=N_LOG, n_linear=N_LINEAR,
                       linear_end=LINEAR_END, tail=False)
        out += [_run_from(res, i, spec, horizon_factor) for i, spec in enumerate(specs[start:start + CHUNK])]
    return out


def _run_from(res, i: int, spec: tuple, horizon_factor: float) -> Run:
    from numerics.ode import STATUS

    L, alpha, wstar, sigma, mode, rng = spec
    if res.status[i] >= 2:
        raise NumericalTrouble(f"(h, w) run at L={L}, alpha={alpha}, wstar={wstar}, sigma={sigma}, {mode}/{rng} "
                               f"stopped at t={res.end_t[i]:.6g}: {STATUS[int(res.status[i])]}")
    alive = np.isfinite(res.h[i])
    t, h, w = res.tau[alive] * res.S[i], res.h[i, alive], res.w[i, alive]
    dh_k, dw_k = velocity_kernels(mode, rng)
    events = {name: float(v[i]) for name, v in res.events.items()}
    states = {name: (float(res.event_h[name][i]), float(res.event_w[name][i])) for name in events}
    for alias, name in ALIASES.items():
        events[alias], states[alias] = events[name], states[name]
    return Run(L, alpha, wstar, sigma, mode, rng, t, h, w, dh_k(h, w, float(L), alpha, wstar),
               dw_k(h, w, float(L), alpha, wstar), res.loss[i, alive], events, states, horizon_factor * res.S[i])


def ih_run(L: int, alpha: float, wstar: float, sigma: float, mode: str = "paper",
           ih_model_range: str = "canonical", horizon_factor: float = 60.0) -> Run:
    """One run of :func:`ih_runs`."""
    return ih_runs([(L, alpha, wstar, sigma, mode, ih_model_range)], horizon_factor)[0]


# ----------------------------------------------------------------------------- grids and readings


def choice(ctx: Context, name: str, default: list) -> list:
    """A grid axis: the pinned value when the user gave one, else ``default``."""
    value = ctx.params.get(name)
    return [value] if value is not None else list(default)


def readings(ctx: Context, *, softmax: bool = True) -> list[tuple[str, str]]:
    """(mode, range) pairs: canonical first; the quick budget runs one alternative per flag."""
    modes = choice(ctx, "flow", list(MODES) if softmax else ["paper", "balanced"])
    ranges = choice(ctx, "ih_model_range", RANGES)
    for m in modes:
        if m not in MODES:
            raise InvalidArgument(f"flow={m!r} is not one of {', '.join(MODES)}")
    for r in ranges:
        if r not in RANGES:
            raise InvalidArgument(f"ih_model_range={r!r} is not one of {', '.join(RANGES)}")
    pairs = [(m, r) for m in modes for r in ranges if not (m == "softmaxLL" and r == "literal")]
    if ctx.quick:
        pairs = [p for p in pairs if p[0] == modes[0] or p[1] == ranges[0]]
    pairs.sort(key=lambda p: p != CANONICAL)
    return pairs


def grid(ctx: Context, quick: Mapping[str, list], full: Mapping[str, list]) -> list[dict[str, Any]]:
    """Configurations (L, alpha, wstar, sigma) of the budget, pinned parameters replacing their axes."""
    axes = quick if ctx.quick else full
    axes = {name: choice(ctx, name, axes[name]) for name in ("L", "alpha", "wstar", "sigma")}
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]


def runs_for(ctx: Context, configs: Iterable[Mapping[str, Any]], pairs: list[tuple[str, str]],
             horizon_factor: float = 60.0) -> list[Run]:
    """Every (configuration, reading) run, canonical reading first within each configuration."""
    specs = [(cfg["L"], cfg["alpha"], cfg["wstar"], cfg["sigma"], mode, rng)
             for cfg, (mode, rng) in itertools.product(configs, pairs)]
    ctx.report_progress(0.1, f"integrating {len(specs)} (h, w) runs")
    return ih_runs(specs, horizon_factor)


# ----------------------------------------------------------------------------- parts and verdicts


def window(run: Run, start: float, end: float, *, closed: bool = True, resolved: bool = False) -> np.ndarray:
    """Mask of saved times in [start, end] (NaN end: the window is open to the horizon)."""
    if not math.isfinite(start):
        return np.zeros(run.t.size, dtype=bool)
    end = end if math.isfinite(end) else math.inf
    mask = (run.t >= start) & (run.t <= end) if closed else (run.t > start) & (run.t < end)
    return mask & run.resolved if resolved else mask


def pointwise(run: Run, mask: np.ndarray, lhs: np.ndarray, rhs: np.ndarray, *, relation: str = "<=",
              window_text: str = "", tol: float = POINT_TOL) -> dict[str, Any]:
    """Test ``lhs relation rhs`` at the saved times of ``mask``; the worst point is the counterexample.

    ``relation`` is ``<=`` or ``>=`` (``<``/``>`` are tested as their weak forms at the same slack).
    The slack is tol·max(|lhs|, |rhs|): the integrator's relative accuracy.
    """
    lhs, rhs = np.broadcast_to(lhs, run.t.shape), np.broadcast_to(rhs, run.t.shape)
    if not mask.any():
        return {"status": "outside-regime", "window": window_text, "n_points": 0}
    sign = 1.0 if relation in ("<=", "<") else -1.0
    excess = sign * (lhs[mask] - rhs[mask])
    slack = tol * np.maximum(np.abs(lhs[mask]), np.abs(rhs[mask]))
    bad = excess > slack
    scale = np.maximum(np.abs(rhs[mask]), 1e-300)
    rel = excess / scale
    k = int(np.argmax(rel))
    times = run.t[mask]
    record = {"status": "fails" if bad.any() else "holds", "window": window_text, "n_points": int(mask.sum()),
              "relation": relation, "worst_relative_excess": float(rel[k]), "worst_t": float(times[k]),
              "worst_lhs": float(lhs[mask][k]), "worst_rhs": float(rhs[mask][k]),
              "worst_state": {"h": float(run.h[mask][k]), "w": float(run.w[mask][k])},
              "window_span": [float(times[0]), float(times[-1])]}
    if bad.any():
        first = int(np.argmax(bad))
        record["first_violation_t"] = float(times[first])
        record["fraction_violated"] = float(bad.mean())
    return record


def extreme(run: Run, mask: np.ndarray, values: np.ndarray, how: str = "max") -> dict[str, Any]:
    """max or min of ``values`` on ``mask`` with the time where it is attained (None on an empty window)."""
    if not mask.any():
        return {"value": None, "t": None}
    vals = values[mask]
    k = int(np.argmax(vals) if how == "max" else np.argmin(vals))
    return {"value": float(vals[k]), "t": float(run.t[mask][k])}


def combine(statuses: Iterable[str]) -> str:
    """One status from parts: fails (differs) if any does; holds if any holds and none fails; else the empty window."""
    statuses = list(statuses)
    if "fails" in statuses:
        return "fails"
    if "differs" in statuses:
        return "differs"
    if "inconclusive" in statuses:
        return "inconclusive"
    if "holds" in statuses:
        return "holds"
    return "outside-regime" if statuses else "inconclusive"


def deciding(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that decide: the canonical reading's, or the first reading's when a pinned flag excludes it."""
    canonical = [r for r in records if r["canonical"]]
    return canonical or [r for r in records if r["label"] == records[0]["label"]]


def decide(records: list[dict[str, Any]], main: list[str]) -> tuple[str, dict[str, Any]]:
    """Claim status from per-run records (each with ``reading``, ``canonical`` and ``parts``).

    The canonical-reading records decide (the ``main`` parts only; chain parts keep their own
    status). Returns (status, per-part status under each reading).
    """
    table: dict[str, dict[str, list[str]]] = {}
    for rec in records:
        for name, part in rec["parts"].items():
            table.setdefault(rec["label"], {}).setdefault(name, []).append(part["status"])
    by_reading = {label: {name: combine(sts) for name, sts in parts.items()} for label, parts in table.items()}
    status = combine(r["parts"][m]["status"] for r in deciding(records) for m in main if m in r["parts"])
    return status, by_reading


def run_record(run: Run, parts: dict[str, dict[str, Any]], **extra) -> dict[str, Any]:
    """One outcome record per configuration and reading (spec §0.1 item 5)."""
    return {"label": run.label, "reading": run.reading, "canonical": (run.mode, run.ih_model_range) == CANONICAL,
            "config": run.config, "events": {k: (v if math.isfinite(v) else None) for k, v in run.events.items()},
            "parts": parts, **extra}


def counterexample(records: list[dict[str, Any]], parts: list[str]) -> str:
    """A one-line counterexample from the first canonical record whose part fails ('' when none)."""
    for rec in deciding(records):
        for name in parts:
            part = rec["parts"].get(name, {})
            if part.get("status") == "fails":
                cfg = ", ".join(f"{k}={v:g}" for k, v in rec["config"].items())
                if "worst_t" in part:
                    return (f"{name} at {cfg}, t={part['worst_t']:.4g}: lhs {part['worst_lhs']:.6g} vs rhs "
                            f"{part['worst_rhs']:.6g} ({part['relation']})")
                if "bound" in part:
                    return f"{name} at {cfg}: measured {part.get('measured', part.get('T_1h'))} vs bound {part['bound']:.6g}"
                return f"{name} at {cfg}: {part.get('why', '')}"
    return ""


def failing_chain(by_reading: Mapping[str, Mapping[str, str]], chain: list[str],
                  label: str = "/".join(CANONICAL)) -> list[str]:
    """Chain parts that fail under the deciding reading (``label``; the canonical one by default)."""
    canon = by_reading.get(label, {})
    return [c for c in chain if canon.get(c) in ("fails", "differs")]


def summarise(status: str, head: str, records: list[dict[str, Any]], main: list[str],
              by_reading: Mapping[str, Mapping[str, str]], chain: list[str], run_status: str | None = None) -> str:
    """The one-line summary: the decision, its counterexample and the failing chain parts."""
    parts = [head]
    if status == "fails":
        parts.append(counterexample(records, main))
    label = deciding(records)[0]["label"]
    bad = failing_chain(by_reading, chain, label)
    if bad:
        parts.append("chain parts failing: " + ", ".join(bad))
    reference = run_status or status
    others = sorted({lab for lab, ps in by_reading.items() if lab != label
                     and combine(ps[m] for m in main if m in ps) != reference})
    if others:
        parts.append("verdict differs under " + ", ".join(others))
    return "; ".join(p for p in parts if p)


def lambdified(expr: sp.Expr, *names: str) -> Callable:
    """A NumPy evaluator of ``expr`` with arguments given by symbol name (any symbols of the ih package)."""
    symbols = {s.name: s for s in expr.free_symbols}
    args = [symbols.get(n, sp.Symbol(n)) for n in names]
    raw = sp.lambdify(args, expr, modules="numpy")

    def evaluate(*values):
        # a printed bound may overflow to +inf (exp of a large rate·t); inf is its value, not an error
        with np.errstate(over="ignore"):
            return raw(*values)

    return evaluate


def finite(value: float) -> float | None:
    """JSON-friendly: None for NaN/inf."""
    return float(value) if value is not None and math.isfinite(value) else None


# ----------------------------------------------------------------------------- the driver


#: parameters every proof-level claim takes (None: the budget's grid axis)
DEFAULTS = {"L": None, "alpha": None, "wstar": None, "sigma": None, "flow": None, "ih_model_range": None}
#: quick grid: D0 and a smaller w*, σ (four configurations); full: the spec's G_IH axes
QUICK = {"L": [40], "alpha": [1.0], "wstar": [0.49, 0.3], "sigma": [1e-2, 1e-4]}
FULL = {"L": [40, 400, 4000], "alpha": [0.5, 1.0, 4.0, 9.0],
        "wstar": [0.05, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.47, 0.49, 0.55, 0.6, 0.65, 0.7],
        "sigma": [1e-2, 1e-4, 1e-6, 1e-8]}


def domain():
    """Validated numeric parameters of the proof-level claims."""
    from derivations.induction_head import symbols as S

    return S.domain(S.L, S.alpha, S.wstar, S.sigma, constraints=S.EQ10_CONSTRAINTS[:1])


def run_claim(ctx: Context, evaluate: Callable[[Run], dict[str, dict[str, Any]]], *, main: list[str],
              chain: list[str], head: Callable[[str, list[dict[str, Any]]], str],
              claim_parts: Callable[[Context, list[Run]], dict[str, dict[str, Any]]] | None = None,
              quick: Mapping[str, list] = QUICK, full: Mapping[str, list] = FULL, softmax: bool = True,
              flags: Mapping[str, str] | None = None):
    """Evaluate ``evaluate`` on every run of the grid and decide on the canonical reading.

    ``claim_parts`` adds parts that are not per run (inequalities between explicit functions,
    scaling fits); each carries ``role`` ``main`` or ``chain``. The claim's status combines the
    canonical per-run main parts with the main claim parts.
    """
    from checks.claim import Outcome

    configs = grid(ctx, quick, full)
    runs = runs_for(ctx, configs, readings(ctx, softmax=softmax))
    records = [run_record(r, evaluate(r)) for r in runs]
    status, by_reading = decide(records, main)
    run_status = status
    extra = claim_parts(ctx, runs) if claim_parts else {}
    main_extra = [p["status"] for p in extra.values() if p.get("role") == "main"]
    if main_extra:
        status = combine([status, *main_extra]) if status != "outside-regime" else combine(main_extra)
    text = summarise(status, head(status, records), records, main, by_reading, chain, run_status)
    bad_extra = [n for n, p in extra.items() if p["status"] in ("fails", "differs")]
    if bad_extra:
        text += "; claim-level parts failing: " + ", ".join(bad_extra)
    keep = records if ctx.quick else [r for r in records if r["canonical"] or any(
        p["status"] in ("fails", "differs") for p in r["parts"].values())][:200]
    evidence = {
        "grid": {name: sorted({c[name] for c in configs}) for name in ("L", "alpha", "wstar", "sigma")},
        "n_configurations": len(configs), "n_runs": len(runs),
        "canonical_reading": {"flow": "paper", "ih_loss": "exp_simplified", "ih_model_range": "canonical",
                              **(flags or {})},
        "main_parts": main, "chain_parts": chain,
        "readings": by_reading, "claim_parts": extra, "records": keep,
        "integrator": {"rtol": 1e-10, "atol": 1e-13, "point_tolerance": POINT_TOL,
                       "equilibrium_floor": EQUILIBRIUM_FLOOR},
    }
    return Outcome(status, text, evidence)


def canonical_runs(runs: list[Run]) -> list[Run]:
    """The runs of the canonical reading."""
    return [r for r in runs if (r.mode, r.ih_model_range) == CANONICAL]


def function_part(values_lhs: np.ndarray, values_rhs: np.ndarray, points: Mapping[str, np.ndarray], *,
                  relation: str = "<=", role: str = "main", text: str = "") -> dict[str, Any]:
    """An inequality between explicit functions on a sampled region: where it holds, and the worst point."""
    sign = 1.0 if relation == "<=" else -1.0
    excess = sign * (values_lhs - values_rhs)
    ok = excess <= POINT_TOL * np.maximum(np.abs(values_lhs), np.abs(values_rhs))
    k = int(np.argmax(excess))
    record = {"status": "holds" if ok.all() else "fails", "role": role, "statement": text,
              "relation": relation, "n_points": int(ok.size), "fraction_holding": float(ok.mean()),
              "worst": {**{n: float(v.flat[k]) for n, v in points.items()},
                        "lhs": float(values_lhs.flat[k]), "rhs": float(values_rhs.flat[k])}}
    for name, v in points.items():
        if ok.any():
            record[f"{name}_range_where_holding"] = [float(v[ok].min()), float(v[ok].max())]
    return record


def scaling_part(runs: list[Run], observe: Callable[[Run], float], rate: Callable[[Run], float], *,
                 form: str, rate_name: str, role: str = "main") -> dict[str, Any]:
    """A Θ/O/Ω statement over the canonical runs of a sweep (checks.scaling.scaling_fit)."""
    from checks.scaling import scaling_fit

    runs = canonical_runs(runs)
    obs = np.array([observe(r) for r in runs], dtype=float)
    den = np.array([rate(r) for r in runs], dtype=float)
    regs = {"L": [r.L for r in runs], "1+alpha": [1 + r.alpha for r in runs],
            "log(1/sigma)": [math.log(1 / r.sigma) for r in runs], "wstar": [r.wstar for r in runs]}
    fit = scaling_fit(obs, den, regs, form=form, rate_name=rate_name, labels=[r.config for r in runs])
    return {"status": fit.status, "role": role, "statement": f"{form}({rate_name})", "summary": fit.summary()
            if fit.ratios.size else fit.reason, **fit.evidence()}
