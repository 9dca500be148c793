"""A memoised grid runner: per-point result rows, remembered per process, computed in groups.

A model's sweep gives :class:`MemoisedGrid` what only it knows:

- ``compute_rows(points, settings) -> rows``, one row per point, for points of one group (e.g. one
  compiled field). It must be a top-level function of an importable module: tasks carry it by
  reference (module and name), so a worker imports that module once and compiles its kernels once.
- ``normalise(point) -> point``: defaults filled, types fixed, validated. The normalised point is
  the point's identity in the memo and what ``compute_rows`` receives.
- ``group_key(point) -> hashable``: which points one ``compute_rows`` call may take together.

and :meth:`MemoisedGrid.run` does the rest: it normalises the points, recalls the rows it holds,
computes each distinct missing point once, group by group, and returns the rows in input order.
Missing rows are computed here (one ``compute_rows`` call per group) or, inside
``numerics.sweep.use_executor(ex)`` (``tdcheck run --dask``), on ``ex`` in tasks of at most
``chunk`` points of one group.

``compute_rows`` must be deterministic and its rows must not depend on which other points share
the call: then a row is the same whether it was recalled, computed alone, in a batch, or on a
cluster, and the memo is invisible except in time. When it raises, :class:`numerics.sweep.PointFailed`
names the point (input index and normalised point) with the traceback; nothing of that run is remembered.

Memo policy
-----------
- One memo per runner *name*, held by this module, so that one model's large sweep evicts only its
  own rows (each name has its own byte budget; the process holds at most their sum). Creating a
  runner again under the same name with the same ``compute_rows`` (a module reload) shares the
  memo; another ``compute_rows`` under a taken name is refused.
- Per process: worker processes do not share it; rows computed on an executor are remembered by the
  caller.
- Key: a digest of the ``settings`` (arrays by dtype, shape and bytes) and one of the normalised
  point. ``settings`` must hold everything besides the point that determines a row (tolerances,
  save grid) and nothing that does not (thread counts), or equal rows are stored twice.
- Least recently used first: a recall or a store makes a row the most recent; beyond
  ``memo_bytes`` (rows measured by ``row_bytes``) the least recent rows are dropped. A row larger
  than the whole budget is not kept; ``memo_bytes=0`` keeps nothing.
- Rows are handed back as the memo holds them (duplicates of a point share one row): read-only.
"""

from __future__ import annotations

import hashlib
import sys
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument, TdcheckError
from numerics.sweep import PointFailed, active_executor, iter_sweep

Point = Mapping[str, Any]
Row = Any


def nbytes(value: Any) -> int:
    """Approximate bytes of a row: arrays by ``nbytes``, containers summed, anything else 8."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, Mapping):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes(v) for v in value)
    return 8


def _feed(digest, value: Any) -> None:
    # repr alone would abbreviate a long array ("...") and let two save grids collide
    if isinstance(value, np.ndarray):
        digest.update(f"ndarray{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, Mapping):
        digest.update(b"{")
        for name in sorted(value, key=repr):
            _feed(digest, name)
            _feed(digest, value[name])
        digest.update(b"}")
    elif isinstance(value, list | tuple):
        digest.update(b"[" if isinstance(value, list) else b"(")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    else:
        digest.update(repr(value).encode())
        digest.update(b";")


def fingerprint(value: Any) -> str:
    """A digest of settings or a point: equal for equal contents, whatever the key order."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


@dataclass(frozen=True)
class MemoStats:
    """What a runner's memo holds and has done since it was created or last cleared."""

    rows: int
    bytes: int
    hits: int
    computed: int
    evicted: int


class _Memo:
    """An LRU map of rows bounded in bytes; its own lock, since checks may sweep from threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._rows: OrderedDict[tuple[str, str], tuple[Row, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.clear()

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()
            self.size = self.hits = self.computed = self.evicted = 0

    def get(self, key: tuple[str, str]) -> tuple[bool, Row]:
        with self._lock:
            known = self._rows.get(key)
            if known is None:
                return False, None
            self._rows.move_to_end(key)
            self.hits += 1
            return True, known[0]

    def put(self, key: tuple[str, str], row: Row, size: int) -> None:
        with self._lock:
            if key in self._rows:
                self.size -= self._rows.pop(key)[1]
            if size > self.max_bytes:
                return
            self._rows[key] = (row, size)
            self.size += size
            while self.size > self.max_bytes:
                self.size -= self._rows.popitem(last=False)[1][1]
                self.evicted += 1

    def count_computed(self, n: int) -> None:
        with self._lock:
            self.computed += n

    def stats(self) -> MemoStats:
        with self._lock:
            return MemoStats(len(self._rows), self.size, self.hits, self.computed, self.evicted)


#: name -> ("module:qualname" of compute_rows, memo): one memo per runner name (module docstring)
_MEMOS: dict[str, tuple[str, _Memo]] = {}
_MEMOS_LOCK = threading.Lock()


def _reference(fn: Callable) -> str:
    """``module:qualname`` of a top-level function of an importable module, else a clear refusal."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    target = sys.modules.get(module) if module else None
    for part in qualname.split("."):
        target = getattr(target, part, None)
    if target is not fn or "<" in qualname:
        msg = (f"compute_rows={fn!r} is not a top-level function of an importable module; tasks carry it "
               "by reference so that each worker imports and compiles it once: define it with def at "
               "module level (not a lambda, closure or bound method) and create the runner after it")
        raise InvalidArgument(msg)
    return f"{module}:{qualname}"


def _one_group(point: Point) -> Hashable:
    return ()


@dataclass(frozen=True)
class GridRows:
    """The rows of one :meth:`MemoisedGrid.run`: ``rows[i]`` belongs to ``points[i]`` (normalised)."""

    points: list[Point]
    rows: list[Row]
    recalled: int
    computed: int


@dataclass(frozen=True)
class _Failed:
    """Where a task's ``compute_rows`` failed; plain strings, so it pickles whatever the exception was."""

    index: int | None  # within the task; None: the group failed although each point succeeds alone
    error: str
    trace: str


def _failed(index: int | None) -> _Failed:
    exc = sys.exc_info()[1]
    return _Failed(index, f"{type(exc).__name__}: {exc}", traceback.format_exc())


def _task_rows(task: dict[str, Any]) -> list[Row] | _Failed:
    """Rows of one task's points (one group), or where it failed (that point alone, when one does).

    Top level, so that executors ship it (and ``task["compute"]``) by reference. When a task of
    several points fails, its points are run again one by one up to the first that fails alone, so
    that the error names a point: at most one more pass of the task, and only on the way to an error.
    """
    compute, points, settings = task["compute"], task["points"], task["settings"]
    try:
        return list(compute(points, settings))
    except Exception:  # noqa: BLE001 -- handed back with its point, see _Failed
        whole = _failed(0 if len(points) == 1 else None)
    if len(points) > 1:  # find the point to name: the first that fails alone
        for j, point in enumerate(points):
            try:
                compute([point], settings)
            except Exception:  # noqa: BLE001
                return _failed(j)
    return whole


class MemoisedGrid:
    """Per-point rows of a model's sweep, remembered per process and computed group by group.

    Parameters
    ----------
    name : str
        Names the memo (one per name) and the runner in messages, e.g. ``"<model>.<runner>"``.
    compute_rows : callable
        ``compute_rows(points, settings) -> sequence of rows``, one per point, all points of one
        group; top-level in an importable module (see the module docstring).
    normalise : callable, optional
        ``normalise(point) -> dict``; validates and fills defaults (default: ``dict``).
    group_key : callable, optional
        ``group_key(normalised point) -> hashable``; default: one group.
    row_bytes : callable, optional
        Bytes of a row for the memo's budget; default :func:`nbytes`.
    memo_bytes : int
        The memo's budget in bytes (least recently used rows are dropped beyond it).
    chunk : int
        Points per task on an executor.
    """

    def __init__(self, name: str, compute_rows: Callable[[list[Point], Mapping[str, Any]], Sequence[Row]],
                 *, normalise: Callable[[Point], Point] = dict,
                 group_key: Callable[[Point], Hashable] = _one_group,
                 row_bytes: Callable[[Row], int] = nbytes, memo_bytes: int = 256 * 2**20,
                 chunk: int = 64) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidArgument(f"name={name!r} must be a non-empty string, e.g. 'mymodel.grid'")
        for arg, fn in (("normalise", normalise), ("group_key", group_key), ("row_bytes", row_bytes)):
            if not callable(fn):
                raise InvalidArgument(f"{arg}={fn!r} is not callable; pass a function of one point (row)")
        if isinstance(memo_bytes, bool) or not isinstance(memo_bytes, int) or memo_bytes < 0:
            raise InvalidArgument(f"memo_bytes={memo_bytes!r} must be an integer >= 0 (0 keeps nothing)")
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise InvalidArgument(f"chunk={chunk!r} must be a positive integer, e.g. chunk=64")
        reference = _reference(compute_rows)
        with _MEMOS_LOCK:
            owner, memo = _MEMOS.get(name, (reference, None))
            if owner != reference:
                msg = (f"name={name!r} is already the memo of {owner}; give the runner of {reference} "
                       "its own name, so that the two do not evict each other's rows")
                raise InvalidArgument(msg)
            if memo is None:
                memo = _Memo(memo_bytes)
                _MEMOS[name] = (reference, memo)
            memo.max_bytes = memo_bytes
        self.name, self.chunk = name, chunk
        self._compute, self._normalise = compute_rows, normalise
        self._group_key, self._row_bytes = group_key, row_bytes
        self._memo = memo

    def __repr__(self) -> str:
        return f"MemoisedGrid({self.name!r}, {self._compute.__module__}.{self._compute.__qualname__})"

    def stats(self) -> MemoStats:
        """Rows and bytes held, hits, rows computed and rows evicted."""
        return self._memo.stats()

    def clear(self) -> None:
        """Forget every remembered row of this name and reset the counts."""
        self._memo.clear()

    def run(self, points: Iterable[Point], settings: Mapping[str, Any] | None = None, *,
            memo: bool = True) -> GridRows:
        """Rows of ``points`` in input order: recalled when remembered, else computed (and remembered).

        Parameters
        ----------
        points : iterable of dict
            Raw points; ``normalise`` raises on an invalid one before anything runs.
        settings : mapping, optional
            Passed to ``compute_rows`` and part of every row's key (module docstring).
        memo : bool
            False: neither recall nor remember (each distinct point is still computed once).

        Raises
        ------
        PointFailed
            ``compute_rows`` raised; the message names the point (the first of its task that
            fails alone) and carries the traceback.
        """
        settings = dict(settings or {})
        if not all(isinstance(k, str) for k in settings):
            raise InvalidArgument(f"settings={settings!r} must have string keys, e.g. {{'rtol': 1e-10}}")
        pts = [self._normalise(p) for p in points]
        settings_key = fingerprint(settings)
        keys = [(settings_key, fingerprint(p)) for p in pts]
        rows: list[Row] = [None] * len(pts)
        missing: dict[tuple[str, str], list[int]] = {}  # key -> every index of that point
        for i, key in enumerate(keys):
            if key in missing:
                missing[key].append(i)
                continue
            found, row = self._memo.get(key) if memo else (False, None)
            if found:
                rows[i] = row
            else:
                missing[key] = [i]
        recalled = len(pts) - sum(len(v) for v in missing.values())
        firsts = [v[0] for v in missing.values()]
        computed = self._compute_missing(pts, firsts, settings)
        for key, indices in missing.items():
            row = computed[indices[0]]
            for i in indices:
                rows[i] = row
            if memo:
                self._memo.put(key, row, self._row_bytes(row))
        return GridRows(pts, rows, recalled, len(firsts))

    def _compute_missing(self, pts: list[Point], missing: list[int],
                         settings: dict[str, Any]) -> dict[int, Row]:
        """Rows of ``pts[i]`` for the missing ``i``, one group per task (chunked on an executor)."""
        groups: dict[Hashable, list[int]] = {}
        for i in missing:
            groups.setdefault(self._group_key(pts[i]), []).append(i)
        remote = active_executor() is not None
        parts = [rows[start:start + self.chunk] for rows in groups.values()
                 for start in range(0, len(rows), self.chunk)] if remote else list(groups.values())
        tasks = [{"compute": self._compute, "points": [pts[i] for i in part], "settings": settings}
                 for part in parts]
        # chunk_size=1: each task (up to `chunk` points) is one submission to the executor
        outputs = (iter_sweep(_task_rows, tasks, chunk_size=1) if remote
                   else ((n, _task_rows(task)) for n, task in enumerate(tasks)))
        done: dict[int, Row] = {}
        for n, out in outputs:
            part = parts[n]
            if isinstance(out, _Failed):
                raise PointFailed(self._failure_message(pts, part, out))
            if len(out) != len(part):
                msg = (f"{self!r}: compute_rows returned {len(out)} rows for {len(part)} points; this is "
                       "a bug in compute_rows, which must return one row per point")
                raise TdcheckError(msg)
            done.update(zip(part, out, strict=True))
        self._memo.count_computed(len(missing))
        return done

    def _failure_message(self, pts: list[Point], part: list[int], failure: _Failed) -> str:
        if failure.index is None:
            where = (f"a group of {len(part)} points (first #{part[0]} {dict(pts[part[0]])!r}), "
                     "though each succeeds alone")
        else:
            i = part[failure.index]
            where = f"point #{i} {dict(pts[i])!r}"
        return f"{self.name}: compute_rows failed at {where}: {failure.error}\ntraceback:\n{failure.trace}"
