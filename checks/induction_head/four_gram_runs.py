"""(p, g) trajectories for the 4-gram claims of [W] App. C.3.1 / Thm 4 Phase I, and their bookkeeping.

Runs come from :func:`numerics.models.induction_head.four_gram.four_gram_run` (the derived
(p, g) gradient flow; Dormand–Prince over the early window with hitting-time events, LSODA on the
stiff tail to t = 1e8). A *part* is one printed display tested on one run, with its own status;
the claim is decided on the canonical reading (``head1_range`` canonical, ``init`` eq4).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from checks.claim import Context
from checks.induction_head.ih_proof_runs import POINT_TOL, choice, combine
from numerics.models.induction_head.four_gram import HEAD1_READINGS, INITS, FourGramRun, four_gram_run

#: G_G4 (spec §2.11); quick: a corner of it
G4_FULL = {"L": [40, 1000, 10000], "alpha": [0.5, 1.0, 2.0, 3.0, 4.0, 10.0], "sigma": [1e-2, 1e-4, 1e-6]}
G4_QUICK = {"L": [40, 1000], "alpha": [1.0, 4.0], "sigma": [1e-2, 1e-4]}
#: quick grid of the claims that integrate to t = 1e8
G4_QUICK_LONG = {"L": [40, 1000], "alpha": [1.0, 4.0], "sigma": [1e-2]}
CANONICAL = ("canonical", "eq4")
#: points of the dense linear grid over the early window (pointwise chain checks)
N_DENSE = 1500
#: end of the dense grid: every T_1^g of G_G4 lies before it (measured: 6.8 to 31.5)
DENSE_END = 50.0


@functools.lru_cache(maxsize=512)
def run(L: int, alpha: float, sigma: float, head1_range: str = "canonical", init: str = "eq4",
        horizon: float = 1e8) -> FourGramRun:
    """One (p, g) run with a dense linear grid on [0, DENSE_END] (rerun on [0, 1.5 T_1^g] if T_1^g is later)."""
    dense = np.linspace(0.0, min(DENSE_END, horizon), N_DENSE)
    first = four_gram_run(L, alpha, sigma, head1_range=head1_range, init=init, horizon=horizon, extra_times=dense)
    ends = [first.events[k] for k in ("T_g_half", "T_1g") if math.isfinite(first.events[k])]
    if not ends or max(ends) <= DENSE_END:
        return first
    dense = np.linspace(0.0, min(1.5 * max(ends), horizon), N_DENSE)
    return four_gram_run(L, alpha, sigma, head1_range=head1_range, init=init, horizon=horizon, extra_times=dense)


def configs(ctx: Context, quick: Mapping[str, list] = G4_QUICK, full: Mapping[str, list] = G4_FULL) -> list[dict]:
    """Grid points (L, alpha, sigma) of the budget; a pinned parameter replaces its axis."""
    axes = quick if ctx.quick else full
    axes = {name: choice(ctx, name, axes[name]) for name in ("L", "alpha", "sigma")}
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*axes.values())]


def readings(ctx: Context) -> list[tuple[str, str]]:
    """(head1_range, init) pairs, canonical first; at the quick budget one alternative per flag."""
    ranges = choice(ctx, "head1_range", list(HEAD1_READINGS))
    inits = choice(ctx, "init", list(INITS))
    pairs = [(r, i) for r in ranges for i in inits]
    if ctx.quick:
        pairs = [p for p in pairs if p[0] == ranges[0] or p[1] == inits[0]]
    pairs.sort(key=lambda p: p != (ranges[0], inits[0]))
    return pairs


def all_runs(ctx: Context, horizon: float = 1e8, *, alternatives_at: str = "first",
             quick: Mapping[str, list] = G4_QUICK) -> list[FourGramRun]:
    """Canonical runs over the whole grid; alternative readings on the first grid point (quick) or everywhere (full)."""
    cfgs = configs(ctx, quick=quick)
    pairs = readings(ctx)
    out = []
    for k, cfg in enumerate(cfgs):
        for pair in pairs:
            if pair != pairs[0] and ctx.quick and alternatives_at == "first" and k > 0:
                continue
            ctx.report_progress(len(out) / (len(cfgs) * len(pairs)), f"L={cfg['L']} α*={cfg['alpha']} {pair}")
            out.append(run(int(cfg["L"]), float(cfg["alpha"]), float(cfg["sigma"]), pair[0], pair[1], horizon))
    return out


def is_canonical(r: FourGramRun, ctx: Context) -> bool:
    """Whether a run has the reading the verdict is decided on (the pinned flags, else the defaults)."""
    return (r.head1_range, r.init) == readings(ctx)[0]


def label(r: FourGramRun) -> str:
    """The reading of a run, e.g. ``canonical/eq4``."""
    return f"{r.head1_range}/{r.init}"


def config(r: FourGramRun) -> dict[str, Any]:
    """Parameters of a run."""
    return {"L": r.L, "alpha": r.alpha, "sigma": r.sigma, "head1_range": r.head1_range, "init": r.init}


def event(r: FourGramRun, name: str) -> float | None:
    """A hitting time, None when it did not fire by the horizon."""
    value = r.events[name]
    return value if math.isfinite(value) else None


def window(r: FourGramRun, start: float, end: float, *, closed: bool = True) -> np.ndarray:
    """Mask of saved times in [start, end] (an infinite end: open to the horizon; NaN start: empty)."""
    if not math.isfinite(start):
        return np.zeros(r.t.size, dtype=bool)
    end = end if math.isfinite(end) else math.inf
    return (r.t >= start) & (r.t <= end) if closed else (r.t > start) & (r.t < end)


def pointwise(r: FourGramRun, mask: np.ndarray, lhs, rhs, *, relation: str = "<=", text: str = "",
              tol: float = POINT_TOL) -> dict[str, Any]:
    """``lhs relation rhs`` at the saved times of ``mask``, slack tol·max(|lhs|, |rhs|); worst point recorded.

    Non-finite right-hand sides are reported (a bound that is not a number is not satisfied).
    """
    lhs = np.broadcast_to(np.asarray(lhs, dtype=float), r.t.shape)
    rhs = np.broadcast_to(np.asarray(rhs, dtype=float), r.t.shape)
    if not mask.any():
        return {"status": "outside-regime", "statement": text, "n_points": 0, "reason": "window empty"}
    a, b, times = lhs[mask], rhs[mask], r.t[mask]
    sign = 1.0 if relation in ("<=", "<") else -1.0
    with np.errstate(invalid="ignore", over="ignore"):
        excess = sign * (a - b)
        bad = ~np.isfinite(b) | (excess > tol * np.maximum(np.abs(a), np.abs(b)))
        rel = np.where(np.isfinite(b), excess / np.maximum(np.abs(b), 1e-300), np.inf)
    k = int(np.argmax(np.where(np.isnan(rel), -np.inf, rel)))
    rec = {"status": "fails" if bad.any() else "holds", "statement": text, "relation": relation,
           "n_points": int(mask.sum()), "window_span": [float(times[0]), float(times[-1])],
           "worst_t": float(times[k]), "worst_lhs": float(a[k]), "worst_rhs": float(b[k]),
           "worst_relative_excess": float(rel[k]),
           "worst_state": {"p": float(r.p[mask][k]), "g": float(r.g[mask][k])},
           "fraction_violated": float(bad.mean())}
    if bad.any():
        rec["first_violation_t"] = float(times[int(np.argmax(bad))])
    return rec


def value_part(holds: bool | None, text: str, **numbers) -> dict[str, Any]:
    """A part decided by one comparison of numbers (None: the window or quantity does not exist)."""
    status = "outside-regime" if holds is None else ("holds" if holds else "fails")
    return {"status": status, "statement": text, **numbers}


def decide(records: list[dict[str, Any]], main: list[str]) -> tuple[str, dict[str, dict[str, str]]]:
    """Status from the canonical records' main parts; per-reading status of every part."""
    table: dict[str, dict[str, list[str]]] = {}
    for rec in records:
        for name, part in rec["parts"].items():
            table.setdefault(rec["reading"], {}).setdefault(name, []).append(part["status"])
    by_reading = {lab: {n: combine(s) for n, s in parts.items()} for lab, parts in table.items()}
    status = combine(rec["parts"][m]["status"] for rec in records if rec["canonical"] for m in main
                     if m in rec["parts"])
    return status, by_reading


def records_for(ctx: Context, runs: list[FourGramRun], evaluate: Callable[[FourGramRun], dict]) -> list[dict]:
    """One record per run: configuration, reading, hitting times and the evaluated parts."""
    return [{"config": config(r), "reading": label(r), "canonical": is_canonical(r, ctx),
             "events": {k: event(r, k) for k in r.events}, "parts": evaluate(r)} for r in runs]


def failing(records: list[dict[str, Any]], canonical_only: bool = True) -> dict[str, int]:
    """How many records fail each part (canonical records by default)."""
    out: dict[str, int] = {}
    for rec in records:
        if canonical_only and not rec["canonical"]:
            continue
        for name, part in rec["parts"].items():
            if part["status"] == "fails":
                out[name] = out.get(name, 0) + 1
    return out
