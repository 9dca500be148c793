"""The check kind "inequality along a trajectory", for ODE solutions and optimiser runs alike.

A printed statement about a run (a bound that holds on a time window, a hitting time below a
bound, a quantity that is monotone after an event) is tested as one *part* per run: a record with
its own status (``checks.status``), the statement, the window and the worst point. A claim's
parts over a grid of configurations and readings are kept as *records* (one per run: its
configuration, reading, whether the reading is canonical, its hitting times and its parts), and
the claim is decided on the canonical records' main parts (:func:`decide`); the other readings are
reported beside the verdict (``by_reading``).

Tolerance: a pointwise inequality is tested with the slack ``tol·max(|lhs|, |rhs|)``, the relative
accuracy of the integrator (``POINT_TOL`` for rtol 1e-10). NaN follows the status algebra's rule
(a NaN side leaves that point undecided; ±inf are values).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from checks.status import Status, combine, compare, pointwise_status
from numerics.trajectory import Trajectory

#: relative slack of a pointwise inequality along a run (integrators run at rtol 1e-10)
POINT_TOL = 1e-9


def pointwise(run: Trajectory, mask: np.ndarray, lhs, rhs, *, relation: str = "<=", statement: str = "",
              window: str = "", tol: float = POINT_TOL, strict: bool = False) -> dict[str, Any]:
    """Test ``lhs relation rhs`` at the saved times of ``mask``; the worst point is the counterexample.

    ``lhs``/``rhs`` are arrays along ``run.t`` (or scalars). Returns the part record: ``status``,
    ``n_points``, the worst point (``worst_t``, ``worst_lhs``, ``worst_rhs``,
    ``worst_relative_excess``, ``worst_state``), the window's span, and where the test fails the
    first violating time and the fraction violated; ``n_undecided`` counts NaN points.
    """
    lhs = np.broadcast_to(np.asarray(lhs, dtype=float), run.t.shape)
    rhs = np.broadcast_to(np.asarray(rhs, dtype=float), run.t.shape)
    head = {k: v for k, v in (("statement", statement), ("window", window)) if v}
    if not mask.any():
        return {"status": Status.OUTSIDE.value, **head, "n_points": 0, "reason": "window empty"}
    a, b, times = lhs[mask], rhs[mask], run.t[mask]
    violated, undecided = compare(a, b, relation, rel_tol=tol, strict=strict)
    sign = 1.0 if relation in ("<=", "<") else -1.0
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.where(np.isinf(a) & (a == b), 0.0, sign * (a - b))
        rel = excess / np.maximum(np.abs(np.where(np.isfinite(b), b, 1.0)), 1e-300)
    rel = np.where(undecided, -np.inf, np.where(np.isnan(rel), np.inf, rel))
    k = int(np.argmax(rel))
    index = np.flatnonzero(mask)[k]
    record = {"status": pointwise_status(violated, undecided).value, **head, "relation": relation,
              "n_points": int(mask.sum()), "window_span": [float(times[0]), float(times[-1])],
              "worst_t": float(times[k]), "worst_lhs": float(a[k]), "worst_rhs": float(b[k]),
              "worst_relative_excess": float(rel[k]), "worst_state": run.scalar_row(int(index))}
    if violated.any():
        record["first_violation_t"] = float(times[int(np.argmax(violated))])
        record["fraction_violated"] = float(violated.mean())
    if undecided.any():
        record["n_undecided"] = int(undecided.sum())
    return record


def hitting_time(measured: float, bound: float, *, relation: str = "<=", statement: str = "",
                 tol: float = POINT_TOL, missing: Status = Status.FAILS, event: str = "") -> dict[str, Any]:
    """A hitting time (or a difference of two) against a printed bound: ``measured relation bound``.

    ``relation`` is ``<=``, ``>=`` (slack ``tol·|bound|``, the integrator's accuracy) or ``=`` (to a
    relative 1e-6: the display claims equality). A time that is not a number (the event did not fire
    within the run) gives ``missing``: ``fails`` where the statement asserts the time exists,
    ``outside-regime`` where a window that needs it is empty.
    """
    head = {k: v for k, v in (("statement", statement), ("event", event)) if v}
    if not math.isfinite(measured):
        return {"status": Status(missing).value, **head, "measured": None, "bound": finite(bound),
                "relation": relation, "why": f"{event or 'the event'} not reached within the run"}
    if relation == "=":
        ok = abs(measured - bound) <= 1e-6 * abs(bound)
    else:
        violated, undecided = compare(measured, bound, relation, rel_tol=tol)
        ok = None if bool(undecided) else not bool(violated)
    status = Status.INCONCLUSIVE if ok is None else (Status.HOLDS if ok else Status.FAILS)
    return {"status": status.value, **head, "measured": float(measured), "bound": float(bound),
            "ratio": float(measured / bound) if bound else None, "relation": relation}


def extreme(run: Trajectory, mask: np.ndarray, values: np.ndarray, how: str = "max") -> dict[str, Any]:
    """max or min of ``values`` on ``mask`` with the time where it is attained (None on an empty window)."""
    if not mask.any():
        return {"value": None, "t": None}
    vals = np.asarray(values)[mask]
    k = int(np.nanargmax(vals) if how == "max" else np.nanargmin(vals))
    return {"value": float(vals[k]), "t": float(run.t[mask][k])}


def value_part(holds: bool | None, statement: str, **numbers) -> dict[str, Any]:
    """A part decided by one comparison of numbers; None: the window or quantity does not exist."""
    status = Status.OUTSIDE if holds is None else (Status.HOLDS if holds else Status.FAILS)
    return {"status": status.value, "statement": statement, **numbers}


def function_part(lhs: np.ndarray, rhs: np.ndarray, points: Mapping[str, np.ndarray], *, relation: str = "<=",
                  role: str = "main", statement: str = "", tol: float = POINT_TOL) -> dict[str, Any]:
    """An inequality between explicit functions at sampled points of a region: where it holds, the worst point."""
    lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
    violated, undecided = compare(lhs, rhs, relation, rel_tol=tol)
    sign = 1.0 if relation in ("<=", "<") else -1.0
    with np.errstate(invalid="ignore"):
        excess = np.where(undecided, -np.inf, sign * (lhs - rhs))
    k = int(np.argmax(excess))
    ok = ~violated & ~undecided
    record = {"status": pointwise_status(violated.ravel(), undecided.ravel()).value, "role": role,
              "statement": statement, "relation": relation, "n_points": int(ok.size),
              "fraction_holding": float(ok.mean()),
              "worst": {**{n: float(np.asarray(v).flat[k]) for n, v in points.items()},
                        "lhs": float(lhs.flat[k]), "rhs": float(rhs.flat[k])}}
    for name, v in points.items():
        if ok.any():
            v = np.asarray(v)
            record[f"{name}_range_where_holding"] = [float(v[ok].min()), float(v[ok].max())]
    return record


# ----------------------------------------------------------------------------- records and decisions


def record(parts: Mapping[str, Mapping[str, Any]], *, label: str, reading: Mapping[str, str], canonical: bool,
           config: Mapping[str, Any], events: Mapping[str, float] | None = None, **extra) -> dict[str, Any]:
    """One outcome record per run: its reading, configuration, hitting times (None: not reached) and parts."""
    out = {"label": label, "reading": dict(reading), "canonical": bool(canonical), "config": dict(config)}
    if events is not None:
        out["events"] = {k: (v if math.isfinite(v) else None) for k, v in events.items()}
    return {**out, "parts": dict(parts), **extra}


def deciding(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that decide: the canonical reading's, or the first reading's when a pinned flag excludes it."""
    canonical = [r for r in records if r["canonical"]]
    return canonical or [r for r in records if r["label"] == records[0]["label"]]


def by_reading(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """The status of every part under every reading (label → part → combined status over the grid)."""
    table: dict[str, dict[str, list[str]]] = {}
    for rec in records:
        for name, part in rec["parts"].items():
            table.setdefault(rec["label"], {}).setdefault(name, []).append(part["status"])
    return {label: {name: combine(sts).value for name, sts in parts.items()} for label, parts in table.items()}


def decide(records: list[dict[str, Any]], main: Iterable[str]) -> tuple[str, dict[str, dict[str, str]]]:
    """The claim's status from the deciding records' ``main`` parts, and the per-reading table."""
    main = list(main)
    if not records:
        return Status.INCONCLUSIVE.value, {}
    status = combine(r["parts"][m]["status"] for r in deciding(records) for m in main if m in r["parts"])
    return status.value, by_reading(records)


def counterexample(records: list[dict[str, Any]], parts: Iterable[str]) -> str:
    """A one-line counterexample from the first deciding record whose part fails ('' when none)."""
    parts = list(parts)
    for rec in deciding(records):
        for name in parts:
            part = rec["parts"].get(name, {})
            if part.get("status") != Status.FAILS:
                continue
            cfg = ", ".join(f"{k}={v:g}" if isinstance(v, (int, float)) else f"{k}={v}"
                            for k, v in rec["config"].items())
            if "worst_t" in part:
                return (f"{name} at {cfg}, t={part['worst_t']:.4g}: lhs {part['worst_lhs']:.6g} vs rhs "
                        f"{part['worst_rhs']:.6g} ({part['relation']})")
            if "bound" in part:
                return f"{name} at {cfg}: measured {part.get('measured', part.get('T_1h'))} vs bound {part['bound']:.6g}"
            return f"{name} at {cfg}: {part.get('why', '')}"
    return ""


def failing_parts(table: Mapping[str, Mapping[str, str]], names: Iterable[str], label: str) -> list[str]:
    """The parts among ``names`` that fail or differ under reading ``label``."""
    statuses = table.get(label, {})
    return [n for n in names if statuses.get(n) in (Status.FAILS, Status.DIFFERS)]


def summarise(status: str, head: str, records: list[dict[str, Any]], main: list[str],
              table: Mapping[str, Mapping[str, str]], chain: list[str], run_status: str | None = None) -> str:
    """The one-line summary: the decision, its counterexample, failing chain parts, readings that disagree."""
    parts = [head]
    if status == Status.FAILS:
        parts.append(counterexample(records, main))
    if not records:
        return "; ".join(p for p in parts if p)
    label = deciding(records)[0]["label"]
    bad = failing_parts(table, chain, label)
    if bad:
        parts.append("chain parts failing: " + ", ".join(bad))
    reference = run_status or status
    others = sorted({lab for lab, ps in table.items() if lab != label
                     and combine(ps[m] for m in main if m in ps) != reference})
    if others:
        parts.append("verdict differs under " + ", ".join(others))
    return "; ".join(p for p in parts if p)


def count_failing(records: list[dict[str, Any]], canonical_only: bool = True) -> dict[str, int]:
    """How many records fail each part (the canonical records by default)."""
    out: dict[str, int] = {}
    for rec in records:
        if canonical_only and not rec["canonical"]:
            continue
        for name, part in rec["parts"].items():
            if part["status"] == Status.FAILS:
                out[name] = out.get(name, 0) + 1
    return out


def finite(value: float | None) -> float | None:
    """JSON-friendly: None for NaN/inf."""
    return float(value) if value is not None and math.isfinite(value) else None


def evaluate_runs(runs: Iterable[Trajectory], evaluate: Callable[[Trajectory], dict[str, dict[str, Any]]],
                  describe: Callable[[Trajectory], dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per run: ``describe(run)`` gives label, reading, canonical, config, events."""
    return [record(evaluate(r), **describe(r)) for r in runs]
