r"""Grids of the induction-head Stage-II (h, w) flow: the G_IH runner (spec §2.11).

``run_grid(points)`` integrates the (h, ln w) block with dh/dτ beside it (:func:`~numerics.models.induction_head.stage2.ih_flow`)
at many points (L, α*, w*, σ, flow, ih_model_range, ih_loss, tokens) with
:func:`numerics.ode.integrate_batch`, one batch per mode combination (each mode is one compiled
field), in scaled time τ = t/S, S = (1+α*)²L ln(1/σ)/w*², so that every point shares one save grid
(log-spaced, optionally with an evenly spaced part). Each point runs to τ = 60 (the spec's horizon
60·S) or until T_tail (L_IH2 within 1e-10 of its minimum, relative to L_IH2(T_o)), so runs reach
Phase IV; ``tail=False`` runs every point to the horizon. The per-point result is bit-identical to
:func:`numerics.ode.integrate` of the same field.

The (p, g) block is not integrated here: with separate value heads it does not interact with
(h, w) (spec §2.7), and at large L it is stiff over the IH time scales.

Rows are remembered per process and per point (:data:`GRID`, a :class:`numerics.grid_memo.MemoisedGrid`
keyed by the point, the save grid and the settings), so claims in one worker share every run they have in
common, whatever else their grids hold; under ``tdcheck run --dask`` the missing rows are integrated on
the cluster, 64 points of one mode combination per task. This module holds only what is particular to
the (h, w) flow: the points, the field of a mode combination, the scaled save grid, the events, the rows.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument
from derivations.induction_head.symbols import FLOW_MODES
from numerics.grid_memo import MemoisedGrid
from numerics.models.induction_head import stage2 as st
from numerics.trajectory import Trajectory

MODE_KEYS = ("flow", "ih_model_range", "ih_loss", "tokens")
DEFAULT_MODES = {"flow": "paper", "ih_model_range": "canonical", "ih_loss": "exp_simplified", "tokens": "gaussian"}
#: the shorthands of spec §2.7 (a ``mode`` entry of a point expands to the flags it fixes)
NAMED_MODES = FLOW_MODES
#: bytes of rows the memo keeps (least recently used rows are dropped beyond it): the full grid of the proof
#: claims (624 configurations × 5 readings, 4 000 saved times of h, w, dh/dt and the loss) is 0.4 GB, and its
#: eleven claims share it in one worker only if it fits (at 256 MB each re-integrated it, 20–70 min apiece)
MEMO_BYTES = 2**30
#: per-point fields of a GridResult (arrays indexed by the point) and the per-event ones
_ROW_FIELDS = ("S", "h", "w", "dh", "loss", "loss0", "loss_min", "w_min", "h_min", "end_t", "status", "n_steps")
_EVENT_FIELDS = ("events", "event_h", "event_w")
#: the point entries that choose the loss kernel (``stage2.ih_loss_kernel``'s arguments)
_LOSS_KEYS = ("ih_model_range", "ih_loss", "tokens")


@dataclass
class GridResult:
    """One sweep: row i of every array is ``points[i]``; times are in t (not τ).

    ``events[name]`` (n,) first hitting times (NaN: not reached before the run ended);
    ``event_h``/``event_w`` the state there. ``tau`` the shared save grid; the saved trajectory of
    point i is ``t = tau * S[i]`` with ``h``, ``w``, ``dh`` (= dh/dt, integrated as a state: see
    ``stage2.ih_flow``) and ``loss`` (= L_IH2); entries after the end
    of a run (T_tail) are NaN. ``end_t`` where each run stopped, ``status`` its integrator status.
    """

    points: list[dict[str, Any]]
    tau: np.ndarray
    S: np.ndarray
    h: np.ndarray
    w: np.ndarray
    dh: np.ndarray
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
        """L_IH2 at an event, per point (NaN where it did not fire): one kernel call per loss reading."""
        h, w = self.event_h[event], self.event_w[event]
        out = np.full(len(self.points), math.nan)
        fired = np.isfinite(h)
        groups: dict[tuple, list[int]] = {}
        for i in np.flatnonzero(fired):
            groups.setdefault(tuple(self.points[i][k] for k in _LOSS_KEYS), []).append(int(i))
        for reading, rows in groups.items():
            kernel = st.ih_loss_kernel(*reading)
            out[rows] = kernel(h[rows], np.log(w[rows]), self.column("L", rows).astype(float),
                               self.column("alpha", rows), self.column("wstar", rows))
        return out

    def select(self, **criteria) -> np.ndarray:
        """Indices of the points whose entries equal ``criteria`` (e.g. ``flow="paper"``)."""
        return np.array([i for i, p in enumerate(self.points) if all(p[k] == v for k, v in criteria.items())],
                        dtype=int)

    def column(self, name: str, rows=None) -> np.ndarray:
        """One point entry (``L``, ``alpha``, ...) as an array."""
        rows = range(len(self.points)) if rows is None else rows
        return np.array([self.points[i][name] for i in rows])

    def trajectory(self, i: int) -> Trajectory:
        """Point ``i``'s run as the toolkit's trajectory type: states h, w, observables dh (dh/dt) and loss (L_IH2), the
        hitting times with the states there, and the point, S, status and end time as metadata
        (saved times after the end of the run are left out)."""
        alive = np.isfinite(self.h[i])
        events = {name: float(v[i]) for name, v in self.events.items()}
        states = {name: {"h": float(self.event_h[name][i]), "w": float(self.event_w[name][i])} for name in events}
        meta = {**self.points[i], "S": float(self.S[i]), "status": int(self.status[i]),
                "end_t": float(self.end_t[i]), "n_steps": int(self.n_steps[i])}
        return Trajectory(self.t(i)[alive], {"h": self.h[i, alive], "w": self.w[i, alive]},
                          {"dh": self.dh[i, alive], "loss": self.loss[i, alive]}, events, states, meta)


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


def _put_row(res: GridResult, i: int, row: dict[str, Any]) -> None:
    for name in _ROW_FIELDS:
        getattr(res, name)[i] = row[name]
    for group in _EVENT_FIELDS:
        for e, v in row[group].items():
            getattr(res, group)[e][i] = v


def run_grid(points, *, save=None, horizon: float = 60.0, n_log: int = 600, n_linear: int = 0,
             linear_end: float | None = None, rtol: float = 1e-10, atol: float = 1e-13, max_steps: int = 5 * 10**7,
             tail: bool = True, workers: int | None = None, memo: bool = True) -> GridResult:
    """Integrate the (h, ln w, dh/dτ) flow at every point; return a :class:`GridResult` in input order.

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
    if not points:
        raise InvalidArgument("points=[] is empty; give at least one grid point")
    tau = (st.default_save_grid(horizon, n_log, n_linear, linear_end) if save is None
           else np.asarray(save, dtype=float))
    settings = {"horizon": horizon, "rtol": rtol, "atol": atol, "max_steps": max_steps, "tail": bool(tail)}
    with _numba_threads(workers):
        run = GRID.run(points, settings | {"tau": tau}, memo=memo)
    pts, n, m = run.points, len(run.points), tau.size
    nan = lambda *shape: np.full(shape, math.nan)  # noqa: E731
    res = GridResult(pts, tau, nan(n), nan(n, m), nan(n, m), nan(n, m), nan(n, m), {e: nan(n) for e in st.IH_EVENTS},
                     {e: nan(n) for e in st.IH_EVENTS}, {e: nan(n) for e in st.IH_EVENTS}, nan(n), nan(n), nan(n),
                     nan(n), nan(n), np.zeros(n, np.int8), np.zeros(n, np.int64), settings | {"save_tau_size": m})
    for i, row in enumerate(run.rows):
        _put_row(res, i, row)
    return res


@contextlib.contextmanager
def _numba_threads(workers: int | None) -> Iterator[None]:
    import numba

    threads = numba.get_num_threads()
    try:
        if workers:
            numba.set_num_threads(max(1, min(int(workers), numba.config.NUMBA_NUM_THREADS)))
        yield
    finally:
        numba.set_num_threads(threads)


def _modes(point: dict[str, Any]) -> tuple[str, ...]:
    """The group of a point: its mode combination (one compiled field, one batch)."""
    return tuple(point[k] for k in MODE_KEYS)


def _rows(points: list[dict[str, Any]], settings: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of one mode combination's (normalised) points: one ``integrate_batch`` call.

    The ``compute_rows`` of :data:`GRID`; ``settings`` hold the save grid ``tau``, ``horizon``,
    ``rtol``, ``atol``, ``max_steps`` and ``tail``.
    """
    from numerics.ode import integrate_batch

    modes = dict(zip(MODE_KEYS, _modes(points[0]), strict=True))
    tau, tail = settings["tau"], st.TAIL_FRACTION if settings["tail"] else st.NO_TAIL
    field_ = st.ih_flow(modes["flow"], modes["ih_model_range"], modes["ih_loss"], modes["tokens"])
    starts = [_initial(p, tail) for p in points]
    y0s, params = np.array([y0 for y0, _, _ in starts]), np.array([prm for _, prm, _ in starts])
    batch = integrate_batch(field_, y0s, params, (0.0, settings["horizon"]),
                            tol=st.ih_tolerance(settings["rtol"], settings["atol"]), save_at=tau,
                            max_steps=settings["max_steps"], on_error="record")
    loss_kernel = st.ih_loss_kernel(*(modes[k] for k in _LOSS_KEYS))
    return [_row(p, start[2], batch, j, tau, loss_kernel)
            for j, (p, start) in enumerate(zip(points, starts, strict=True))]


def _row(p, extra, batch, j: int, tau: np.ndarray, loss_kernel) -> dict[str, Any]:
    """Point ``p``'s row (:data:`_ROW_FIELDS`, :data:`_EVENT_FIELDS`) from run ``j`` of ``batch``.

    Saved values after the end of the run are NaN; the arrays are fresh, not views of ``batch``.
    """
    scale = np.float64(extra["S"])
    row: dict[str, Any] = {"S": scale, "loss_min": extra["L_min"], "w_min": extra["w_min"],
                           "h_min": extra["h_min"]}
    alive = tau <= batch.t_final[j] * (1 + 1e-15)
    h, lw, rate = batch.y[j, :, 0], batch.y[j, :, 1], batch.y[j, :, 2]
    for name in ("h", "w", "dh", "loss"):
        row[name] = np.full(tau.size, math.nan)
    row["h"][alive], row["w"][alive], row["dh"][alive] = h[alive], np.exp(lw[alive]), rate[alive] / scale
    row["loss"][alive] = loss_kernel(h[alive], lw[alive], float(p["L"]), p["alpha"], p["wstar"])
    row["loss0"] = float(loss_kernel(p["sigma"], math.log(p["sigma"]), float(p["L"]), p["alpha"],
                                     p["wstar"]))
    for group in _EVENT_FIELDS:
        row[group] = dict.fromkeys(st.IH_EVENTS, math.nan)
    for q, name in enumerate(batch.event_names):
        row["events"][name] = batch.event_times[j, q] * scale
        row["event_h"][name] = batch.event_states[j, q, 0]
        row["event_w"][name] = math.exp(batch.event_states[j, q, 1])
    if p["sigma"] > 0.01 * p["wstar"]:  # w(0) = σ already exceeds 0.01 w*: the infimum is t = 0
        row["events"]["T_w_001"], row["event_h"]["T_w_001"], row["event_w"]["T_w_001"] = 0.0, p["sigma"], \
            p["sigma"]
    row["end_t"] = batch.t_final[j] * scale
    row["status"], row["n_steps"] = batch.status[j], batch.n_steps[j]
    return row


def _initial(p, tail):
    return st.ih_initial(p["L"], p["alpha"], p["wstar"], p["sigma"], ih_model_range=p["ih_model_range"],
                         ih_loss=p["ih_loss"], tokens=p["tokens"], tail=tail)


#: the G_IH rows, remembered per process (after _rows: the runner takes it by reference)
GRID = MemoisedGrid("induction_head.stage2", _rows, normalise=normalise_point, group_key=_modes,
                    memo_bytes=MEMO_BYTES)


def clear_memo() -> None:
    """Forget remembered sweeps (tests)."""
    GRID.clear()
