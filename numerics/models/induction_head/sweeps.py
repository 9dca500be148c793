r"""Grids of the induction-head Stage-II (h, w) flow: the G_IH runner (spec §2.11).

``run_grid(points)`` integrates the (h, ln w) block (:func:`~numerics.models.induction_head.stage2.ih_flow`)
at many points (L, α*, w*, σ, flow, ih_model_range, ih_loss, tokens) with
:func:`numerics.ode.integrate_batch`, one batch per mode combination (each mode is one compiled
field), in scaled time τ = t/S, S = (1+α*)²L ln(1/σ)/w*², so that every point shares one save grid
(log-spaced, optionally with an evenly spaced part). Each point runs to τ = 60 (the spec's horizon
60·S) or until T_tail (L_IH2 within 1e-10 of its minimum, relative to L_IH2(T_o)), so runs reach
Phase IV; ``tail=False`` runs every point to the horizon. The per-point result is bit-identical to
:func:`numerics.ode.integrate` of the same field.

The (p, g) block is not integrated here: with separate value heads it does not interact with
(h, w) (spec §2.7), and at large L it is stiff over the IH time scales.

Results are remembered per process and per point (``_MEMO``: one row per point, save grid and
settings), so claims in one worker share every run they have in common, whatever else their grids hold.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument
from numerics.models.induction_head import stage2 as st

MODE_KEYS = ("flow", "ih_model_range", "ih_loss", "tokens")
DEFAULT_MODES = {"flow": "paper", "ih_model_range": "canonical", "ih_loss": "exp_simplified", "tokens": "gaussian"}
#: the shorthands of spec §2.7
NAMED_MODES = {
    "paper": {"flow": "paper", "ih_loss": "exp_simplified"},
    "balanced": {"flow": "balanced", "ih_loss": "exp_simplified"},
    "softmaxLL": {"flow": "balanced", "ih_loss": "softmax_largeL"},
}
_MEMO: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()
#: bytes of saved trajectories the memo keeps (least recently used rows are dropped beyond it)
MEMO_BYTES = 256 * 2**20
_MEMO_SIZE = 0
#: per-point fields of a GridResult (arrays indexed by the point) and the per-event ones
_ROW_FIELDS = ("S", "h", "w", "loss", "loss0", "loss_min", "w_min", "h_min", "end_t", "status", "n_steps")
_EVENT_FIELDS = ("events", "event_h", "event_w")


@dataclass
class GridResult:
    """One sweep: row i of every array is ``points[i]``; times are in t (not τ).

    ``events[name]`` (n,) first hitting times (NaN: not reached before the run ended);
    ``event_h``/``event_w`` the state there. ``tau`` the shared save grid; the saved trajectory of
    point i is ``t = tau * S[i]`` with ``h``, ``w`` and ``loss`` (= L_IH2); entries after the end
    of a run (T_tail) are NaN. ``end_t`` where each run stopped, ``status`` its integrator status.
    """

    points: list[dict[str, Any]]
    tau: np.ndarray
    S: np.ndarray
    h: np.ndarray
    w: np.ndarray
    loss: np.ndarray
    events: dict[str, np.ndarray]
    event_h: dict[str, np.ndarray]
    event_w: dict[str, np.ndarray]
    loss0: np.ndarray
    loss_min: np.ndarray
    w_min: np.ndarray
    h_min: np.ndarray
    end_t: np.ndarray
    status: np.ndarray
    n_steps: np.ndarray
    settings: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.points)

    def t(self, i: int) -> np.ndarray:
        """Saved times of point ``i``."""
        return self.tau * self.S[i]

    def loss_at(self, event: str) -> np.ndarray:
        """L_IH2 at an event, per point (NaN where it did not fire)."""
        return np.array([_loss_value(p, h, w) if np.isfinite(h) else math.nan
                         for p, h, w in zip(self.points, self.event_h[event], self.event_w[event], strict=True)])

    def select(self, **criteria) -> np.ndarray:
        """Indices of the points whose entries equal ``criteria`` (e.g. ``flow="paper"``)."""
        return np.array([i for i, p in enumerate(self.points) if all(p[k] == v for k, v in criteria.items())],
                        dtype=int)

    def column(self, name: str, rows=None) -> np.ndarray:
        """One point entry (``L``, ``alpha``, ...) as an array."""
        rows = range(len(self.points)) if rows is None else rows
        return np.array([self.points[i][name] for i in rows])


def normalise_point(point: dict[str, Any]) -> dict[str, Any]:
    """Fill the default modes (a ``mode`` shorthand of spec §2.7 expands) and validate the point."""
    point = dict(point)
    named = point.pop("mode", None)
    if named is not None:
        if named not in NAMED_MODES:
            raise InvalidArgument(f"mode={named!r} is not one of {', '.join(NAMED_MODES)}")
        point = {**NAMED_MODES[named], **point}
    out = {**DEFAULT_MODES, **point}
    missing = [k for k in ("L", "alpha", "wstar", "sigma") if k not in out]
    if missing:
        raise InvalidArgument(f"grid point {point} lacks {', '.join(missing)}")
    out["L"], out["alpha"], out["wstar"], out["sigma"] = int(out["L"]), float(out["alpha"]), float(out["wstar"]), \
        float(out["sigma"])
    st.check_modes(*(out[k] for k in MODE_KEYS))
    st.check_point(out["L"], out["alpha"], out["wstar"], out["sigma"], out["tokens"])
    return out


def _loss_value(point, h, w):
    kernel = st.ih_loss_kernel(point["ih_model_range"], point["ih_loss"], point["tokens"])
    return float(kernel(h, math.log(w), float(point["L"]), point["alpha"], point["wstar"]))


def _memo_key(tau, settings) -> str:
    digest = hashlib.sha256(repr(sorted(settings.items())).encode())
    digest.update(np.ascontiguousarray(tau).tobytes())
    return digest.hexdigest()


def _get_row(res: GridResult, i: int) -> dict[str, Any]:
    row = {name: np.copy(getattr(res, name)[i]) for name in _ROW_FIELDS}
    for group in _EVENT_FIELDS:
        row[group] = {e: float(v[i]) for e, v in getattr(res, group).items()}
    return row


def _put_row(res: GridResult, i: int, row: dict[str, Any]) -> None:
    for name in _ROW_FIELDS:
        getattr(res, name)[i] = row[name]
    for group in _EVENT_FIELDS:
        for e, v in row[group].items():
            getattr(res, group)[e][i] = v


def run_grid(points, *, save=None, horizon: float = 60.0, n_log: int = 600, n_linear: int = 0,
             linear_end: float | None = None, rtol: float = 1e-10, atol: float = 1e-13, max_steps: int = 5 * 10**7,
             tail: bool = True, workers: int | None = None, memo: bool = True) -> GridResult:
    """Integrate the (h, ln w) flow at every point; return a :class:`GridResult` in input order.

    Parameters
    ----------
    points : list of dict
        Each with L, alpha, wstar, sigma and optionally flow, ih_model_range, ih_loss, tokens (or a
        ``mode`` shorthand: paper, balanced, softmaxLL); defaults are the canonical readings.
    save : 1-D array, optional
        Save grid in τ = t/S; default :func:`~numerics.models.induction_head.stage2.default_save_grid`
        (``n_log`` log-spaced points from 1e-8 to ``horizon``, plus ``n_linear`` evenly spaced on
        [0, ``linear_end``]).
    horizon : float
        End of each run in units of S (spec: 60).
    tail : bool
        Stop each run at T_tail (default) or run it to the horizon.
    workers : int, optional
        numba threads for the batches (default: numba's setting); results do not depend on it.
    """
    import numba

    from numerics.ode import Tolerance, integrate_batch

    if not points:
        raise InvalidArgument("points=[] is empty; give at least one grid point")
    pts = [normalise_point(p) for p in points]
    tau = (st.default_save_grid(horizon, n_log, n_linear, linear_end) if save is None
           else np.asarray(save, dtype=float))
    settings = {"horizon": horizon, "rtol": rtol, "atol": atol, "max_steps": max_steps, "tail": bool(tail)}
    key = _memo_key(tau, settings)
    n, m = len(pts), tau.size
    nan = lambda *shape: np.full(shape, math.nan)  # noqa: E731
    res = GridResult(pts, tau, nan(n), nan(n, m), nan(n, m), nan(n, m), {e: nan(n) for e in st.IH_EVENTS},
                     {e: nan(n) for e in st.IH_EVENTS}, {e: nan(n) for e in st.IH_EVENTS}, nan(n), nan(n), nan(n),
                     nan(n), nan(n), np.zeros(n, np.int8), np.zeros(n, np.int64), settings | {"save_tau_size": m})
    groups: dict[tuple, list[int]] = {}
    row_keys = [(key, repr(sorted(p.items()))) for p in pts]
    for i, p in enumerate(pts):
        known = _MEMO.get(row_keys[i]) if memo else None
        if known is not None:
            _MEMO.move_to_end(row_keys[i])
            _put_row(res, i, known)
        else:
            groups.setdefault(tuple(p[k] for k in MODE_KEYS), []).append(i)
    from numerics.sweep import active_executor

    computed = [i for rows in groups.values() for i in rows]
    if groups and active_executor() is not None:
        _run_remote(res, pts, computed, tau, settings)
        groups = {}
    threads = numba.get_num_threads()
    try:
        if workers:
            numba.set_num_threads(max(1, min(int(workers), numba.config.NUMBA_NUM_THREADS)))
        for modes, rows in groups.items():
            _run_group(res, dict(zip(MODE_KEYS, modes, strict=True)), rows, tau, horizon,
                       Tolerance(rtol, atol), max_steps, integrate_batch, st.TAIL_FRACTION if tail else st.NO_TAIL)
    finally:
        numba.set_num_threads(threads)
    if memo:
        for i in computed:
            _remember(row_keys[i], _get_row(res, i))
    return res


def _run_remote(res: GridResult, pts, missing: list[int], tau, settings) -> None:
    """Fill the ``missing`` rows on the active executor (``tdcheck run --dask``), 64 points per task."""
    from numerics.sweep import iter_sweep

    per_task = 64
    starts = list(range(0, len(missing), per_task))
    tasks = [{"points": [pts[i] for i in missing[j:j + per_task]], "tau": tau, "settings": settings} for j in starts]
    for index, rows in iter_sweep(_remote_rows, tasks):
        for i, row in zip(missing[starts[index]:starts[index] + per_task], rows, strict=True):
            _put_row(res, i, row)


def _remote_rows(task: dict[str, Any]) -> list[dict[str, Any]]:
    """Worker side of a distributed sweep: the rows of one task's points, integrated locally."""
    res = run_grid(task["points"], save=task["tau"], memo=False, **task["settings"])
    return [_get_row(res, i) for i in range(len(res))]


def _row_bytes(row: dict[str, Any]) -> int:
    return row["h"].nbytes + row["w"].nbytes + row["loss"].nbytes


def _remember(key: tuple[str, str], row: dict[str, Any]) -> None:
    global _MEMO_SIZE
    if key in _MEMO:
        _MEMO_SIZE -= _row_bytes(_MEMO.pop(key))
    _MEMO[key] = row
    _MEMO_SIZE += _row_bytes(row)
    while len(_MEMO) > 1 and _MEMO_SIZE > MEMO_BYTES:
        _MEMO_SIZE -= _row_bytes(_MEMO.popitem(last=False)[1])


def _run_group(res: GridResult, modes, rows, tau, horizon, tol, max_steps, integrate_batch, tail) -> None:
    """Integrate one mode combination's points and write their rows of ``res``."""
    field_ = st.ih_flow(modes["flow"], modes["ih_model_range"], modes["ih_loss"], modes["tokens"])
    y0s, params = [], []
    for i in rows:
        p = res.points[i]
        y0, prm, extra = _initial(p, tail)
        y0s.append(y0)
        params.append(prm)
        res.S[i], res.loss_min[i], res.w_min[i], res.h_min[i] = extra["S"], extra["L_min"], extra["w_min"], \
            extra["h_min"]
    batch = integrate_batch(field_, np.array(y0s), np.array(params), (0.0, horizon), tol=tol, save_at=tau,
                            max_steps=max_steps, on_error="record")
    loss_kernel = st.ih_loss_kernel(modes["ih_model_range"], modes["ih_loss"], modes["tokens"])
    for j, i in enumerate(rows):
        p, scale = res.points[i], res.S[i]
        alive = tau <= batch.t_final[j] * (1 + 1e-15)
        h, lw = batch.y[j, :, 0], batch.y[j, :, 1]
        res.h[i, alive], res.w[i, alive] = h[alive], np.exp(lw[alive])
        res.loss[i, alive] = loss_kernel(h[alive], lw[alive], float(p["L"]), p["alpha"], p["wstar"])
        res.loss0[i] = float(loss_kernel(p["sigma"], math.log(p["sigma"]), float(p["L"]), p["alpha"], p["wstar"]))
        for q, name in enumerate(batch.event_names):
            res.events[name][i] = batch.event_times[j, q] * scale
            res.event_h[name][i] = batch.event_states[j, q, 0]
            res.event_w[name][i] = math.exp(batch.event_states[j, q, 1])
        if p["sigma"] > 0.01 * p["wstar"]:  # w(0) = σ already exceeds 0.01 w*: the infimum is t = 0
            res.events["T_w_001"][i], res.event_h["T_w_001"][i], res.event_w["T_w_001"][i] = 0.0, p["sigma"], \
                p["sigma"]
        res.end_t[i], res.status[i], res.n_steps[i] = batch.t_final[j] * scale, batch.status[j], batch.n_steps[j]


def _initial(p, tail):
    return st.ih_initial(p["L"], p["alpha"], p["wstar"], p["sigma"], ih_model_range=p["ih_model_range"],
                         ih_loss=p["ih_loss"], tokens=p["tokens"], tail=tail)


def clear_memo() -> None:
    """Forget remembered sweeps (tests)."""
    global _MEMO_SIZE
    _MEMO.clear()
    _MEMO_SIZE = 0
