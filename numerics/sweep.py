"""Parameter grids run through any :class:`concurrent.futures.Executor`.

A sweep evaluates ``fn(point)`` at every point of a list of dicts. Points are cut into chunks
(one task carries many points, so that cheap points do not drown in scheduling overhead) and
the chunks are submitted to an executor:

- ``executor=None``: a local :class:`~concurrent.futures.ProcessPoolExecutor`, created and shut
  down by the sweep, with ``workers`` processes (all CPUs by default). It starts workers with
  "forkserver" (or "spawn" where that is missing): forking a process whose numba threads are
  running is unsafe, and Python deprecates it.
- ``executor="serial"`` (or ``workers=1``): in this process, in input order; for tests and pdb.
- any ``Executor``, e.g. ``distributed.Client(address).get_executor()``; the caller owns it.
- ``executor=None`` inside ``with use_executor(ex):`` (what ``tdcheck run --dask ADDRESS`` does): ``ex``.

Reproducibility. A point's result must not depend on which worker ran it, or when: ``fn`` must
be a deterministic, picklable top-level function that derives any randomness from the point
itself (a ``seed`` entry, fed to :class:`numpy.random.SeedSequence`). Then a sweep gives the same
results serially, on a process pool or on a cluster.

A model whose points share compiled work (one batch per mode) and recur across claims runs its
grids through :class:`numerics.grid_memo.MemoisedGrid` instead: rows remembered per process,
computed group by group, sent to the active executor in chunks.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import multiprocessing
import os
import pickle
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from derivations.errors import InvalidArgument, TdcheckError

Point = Mapping[str, Any]
Chunk = list[tuple[int, Point]]


class PointFailed(TdcheckError, RuntimeError):
    """``fn`` raised at a point of a sweep; the message names the point and holds the traceback."""


_default_executor: list[Executor] = []


@contextlib.contextmanager
def use_executor(executor: Executor) -> Iterator[Executor]:
    """Within the block, sweeps given no executor run on ``executor`` (e.g. a Dask cluster's)."""
    if not isinstance(executor, Executor):
        raise InvalidArgument(f"executor={executor!r} is not a concurrent.futures.Executor")
    _default_executor.append(executor)
    try:
        yield executor
    finally:
        _default_executor.pop()


def active_executor() -> Executor | None:
    """The executor set by the innermost ``use_executor`` block, or None."""
    return _default_executor[-1] if _default_executor else None


def dask_executor(address: str) -> Executor:
    """``distributed.Client(address).get_executor()``, with a clear error when Dask is missing or unreachable."""
    try:
        from distributed import Client
    except ImportError as exc:
        raise InvalidArgument("--dask needs dask.distributed: pip install 'tdcheck[distributed]'") from exc
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise InvalidArgument(f"--dask {address!r}: cannot reach a Dask scheduler there ({exc})") from exc
    return client.get_executor()


def grid(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Return the cartesian product of the axes as a list of dicts.

    The order is that of :func:`itertools.product` over the axes in keyword order: the first
    axis varies slowest, the last fastest. ``grid(a=[1, 2], b=[0, 5])`` gives
    ``[{'a': 1, 'b': 0}, {'a': 1, 'b': 5}, {'a': 2, 'b': 0}, {'a': 2, 'b': 5}]``.
    """
    values = []
    for name, axis in axes.items():
        if isinstance(axis, str | bytes | Mapping) or not isinstance(axis, Iterable):
            msg = f"{name}={axis!r} is not a sequence of values; pass a list, e.g. {name}=[{axis!r}]"
            raise InvalidArgument(msg)
        axis = list(axis)
        if not axis:
            msg = f"{name}=[] is empty, so the grid would be empty; give the axis at least one value"
            raise InvalidArgument(msg)
        values.append(axis)
    return [dict(zip(axes, combo, strict=True)) for combo in itertools.product(*values)]


def chunks(points: list[Point], chunk_size: int) -> list[Chunk]:
    """Cut ``points`` into consecutive chunks of ``(index, point)`` pairs, ``chunk_size`` per chunk."""
    indexed = list(enumerate(points))
    return [indexed[start : start + chunk_size] for start in range(0, len(indexed), chunk_size)]


@dataclass(frozen=True)
class _Failure:
    """Why ``fn`` failed at one point; plain strings, so it pickles whatever the exception was."""

    index: int
    point: Point
    error: str
    trace: str


def _run_chunk(fn: Callable[[Point], Any], chunk: Chunk) -> tuple[list[tuple[int, Any]], _Failure | None]:
    """Evaluate ``fn`` on each point of a chunk; stop at the first failure and report it.

    The failure is returned rather than raised, so that it crosses process boundaries intact
    even when the exception itself cannot be pickled.
    """
    done = []
    for index, point in chunk:
        try:
            done.append((index, fn(point)))
        except Exception as exc:  # noqa: BLE001 -- any error of fn is the user's to see, with its point
            return done, _Failure(index, point, f"{type(exc).__name__}: {exc}", traceback.format_exc())
    return done, None


def _start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        msg = f"{name}={value!r} must be a positive integer; pass e.g. {name}=8 or leave it out"
        raise InvalidArgument(msg)
    return value


def iter_sweep(
    fn: Callable[[Point], Any],
    points: Iterable[Point],
    *,
    executor: Executor | str | None = None,
    workers: int | None = None,
    chunk_size: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(index, fn(points[index]))`` as chunks complete (not in input order).

    Parameters
    ----------
    fn : callable
        ``fn(point) -> result``; picklable and top-level for a process pool (see module docstring).
    points : iterable of dict
        The parameter points, e.g. from :func:`grid`.
    executor : Executor, "serial" or None
        Where to run; None creates a local process pool owned by the sweep.
    workers : int, optional
        Processes of the local pool (default: all CPUs); ``workers=1`` runs serially.
    chunk_size : int, optional
        Points per task; by default about four tasks per worker.
    progress : callable, optional
        ``progress(done, total)`` after each completed chunk.

    Raises
    ------
    PointFailed
        When ``fn`` raises; the message names the point and carries the worker's traceback.
        Unstarted chunks are cancelled.
    """
    if not callable(fn):
        msg = f"fn={fn!r} is not callable; pass a top-level function of one point (a dict)"
        raise InvalidArgument(msg)
    if progress is not None and not callable(progress):
        msg = f"progress={progress!r} is not callable; pass a function (done, total) or None"
        raise InvalidArgument(msg)
    if workers is not None:
        _positive("workers", workers)
    if chunk_size is not None:
        _positive("chunk_size", chunk_size)
    if isinstance(executor, str) and executor != "serial":
        msg = f"executor={executor!r} is not known; pass 'serial', None or a concurrent.futures.Executor"
        raise InvalidArgument(msg)
    if executor is not None and not isinstance(executor, str | Executor):
        msg = f"executor={executor!r} is not a concurrent.futures.Executor; pass one, 'serial' or None"
        raise InvalidArgument(msg)
    points = list(points)
    if executor is None and _default_executor:
        executor = _default_executor[-1]
    serial = executor == "serial" or (executor is None and workers == 1)
    n_workers = workers or os.cpu_count() or 1
    if chunk_size is None:
        chunk_size = max(1, math.ceil(len(points) / (4 * n_workers)))
    parts = chunks(points, chunk_size)
    if serial:
        return _stream((_run_chunk(fn, part) for part in parts), len(points), progress)
    if executor is None or isinstance(executor, ProcessPoolExecutor):
        try:
            pickle.dumps(fn)
        except Exception as exc:
            msg = (f"fn={fn!r} cannot be pickled ({exc}), so it cannot be sent to worker processes; "
                   "define it at the top level of a module (not a lambda or a closure)")
            raise InvalidArgument(msg) from exc
    owned = None
    if executor is None:
        context = multiprocessing.get_context(_start_method())
        owned = executor = ProcessPoolExecutor(max_workers=n_workers, mp_context=context)
    return _stream_futures(fn, parts, len(points), progress, executor, owned)


def _stream(
    outputs: Iterable[tuple[list[tuple[int, Any]], _Failure | None]],
    total: int,
    progress: Callable[[int, int], Any] | None,
) -> Iterator[tuple[int, Any]]:
    done = 0
    for results, failure in outputs:
        done += len(results)
        if progress is not None and failure is None:
            progress(done, total)
        yield from results
        if failure is not None:
            msg = (f"fn failed at point #{failure.index} {dict(failure.point)!r}: {failure.error}\n"
                   f"traceback in the worker:\n{failure.trace}")
            raise PointFailed(msg)


def _stream_futures(
    fn: Callable[[Point], Any],
    parts: list[Chunk],
    total: int,
    progress: Callable[[int, int], Any] | None,
    executor: Executor,
    owned: Executor | None,
) -> Iterator[tuple[int, Any]]:
    futures: list[Future] = []
    try:
        futures = [executor.submit(_run_chunk, fn, part) for part in parts]
        yield from _stream((future.result() for future in as_completed(futures)), total, progress)
    finally:
        for future in futures:
            future.cancel()
        if owned is not None:
            owned.shutdown(wait=True, cancel_futures=True)


def sweep(
    fn: Callable[[Point], Any],
    points: Iterable[Point],
    *,
    executor: Executor | str | None = None,
    workers: int | None = None,
    chunk_size: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
) -> list[Any]:
    """Return ``[fn(p) for p in points]``, computed through :func:`iter_sweep` (same arguments)."""
    points = list(points)
    results: list[Any] = [None] * len(points)
    for index, result in iter_sweep(
        fn, points, executor=executor, workers=workers, chunk_size=chunk_size, progress=progress
    ):
        results[index] = result
    return results
