"""One runner for ``tdcheck run`` and for Python: select claims, order them by ``requires``, run, collect.

:func:`run` is the whole path: :func:`plan` selects the claims, validates every pinned parameter
and adds the prerequisites (``Claim.requires``) that were not selected, refusing an unknown id or a
cycle, all before any work; :func:`execute` runs the plan in this process (``workers=1``) or in
worker processes, in waves: a claim runs once every claim it requires has a verdict or has crashed,
and receives those statuses (``Claim.run(..., prerequisites=...)``), so a broken prerequisite makes
it ``inconclusive`` without running its check.

A crash inside a check is a bug in tdcheck: it becomes a crash record (id, error, traceback) and the
run goes on; bad input raises :class:`~derivations.errors.InvalidArgument` before anything runs.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from checks.claim import BUDGETS, CRASHED, NOT_RUN, Claim, Verdict
from checks.registry import load_all, select
from derivations.errors import InternalError, InvalidArgument, close_matches, unknown_name



@dataclass(frozen=True)
class Tick:
    """What a progress hook receives: which claim, how many claims are done, and its own progress.

    Sent when a claim starts (``fraction`` None), when it reports progress (in-process runs only:
    ``Context.report_progress``) and when it ends (``done`` counts it).
    """

    claim_id: str
    done: int
    total: int
    fraction: float | None = None
    message: str = ""


@dataclass
class Plan:
    """The claims of a run, in output order, with each one's pinned parameters and how they are ordered.

    ``claims`` is the selection order, with a prerequisite that was not selected placed just before
    its first dependent; ``prerequisite_of`` maps such an added prerequisite to the ids that require
    it; ``waves`` lists ids such that every claim comes after all claims it requires.
    """

    claims: list[Claim]
    overrides: dict[str, dict[str, Any]]
    prerequisite_of: dict[str, list[str]] = field(default_factory=dict)
    waves: list[list[str]] = field(default_factory=list)


@dataclass
class RunResult:
    """What a run computed: verdicts and crash records in the plan's order, report forms, seconds."""

    verdicts: list[Verdict]
    errors: list[dict[str, Any]]
    forms: dict[str, dict]
    elapsed: float
    claims: list[Claim] = field(default_factory=list)
    #: prerequisites run because a selected claim requires them: id -> the ids that require it
    prerequisite_of: dict[str, list[str]] = field(default_factory=dict)
    #: ids whose verdict was taken from an earlier run (``reuse``) instead of computed
    reused: list[str] = field(default_factory=list)
    #: the run stopped early (Ctrl-C): ``verdicts`` and ``errors`` hold what had completed
    interrupted: bool = False

    @property
    def total(self) -> int:
        """How many claims the run was to decide."""
        return len(self.claims)

    @property
    def completed(self) -> int:
        """How many claims have a verdict or a crash record."""
        return len(self.verdicts) + len(self.errors)

    def statuses(self) -> dict[str, str]:
        """Each claim's status, or ``"crashed"``."""
        out = {v.claim_id: v.status for v in self.verdicts}
        out.update({e["id"]: CRASHED for e in self.errors})
        return out


def split_overrides(claims: list[Claim], params: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Give each claim the overrides it knows; a name no claim of the run knows is an error."""
    known = {name for c in claims for name in c.defaults}
    for name in params:
        if name not in known:
            error = unknown_name("--param name for the selected claims", name, known)
            raise error
    return {c.id: {k: v for k, v in params.items() if k in c.defaults} for c in claims}


def plan(selectors: str | Iterable[str] = (), params: Mapping[str, Any] | None = None) -> Plan:
    """Select the claims of ``selectors``, add their prerequisites and validate ``params`` against each."""
    if isinstance(selectors, str):
        selectors = [selectors]
    return plan_claims(select(selectors), params)


def plan_claims(selected: list[Claim], params: Mapping[str, Any] | None = None) -> Plan:
    """:func:`plan` for claims already selected."""
    registry = load_all()
    claims, prerequisite_of = _with_prerequisites(selected, registry)
    overrides = split_overrides(claims, dict(params or {}))
    for c in claims:
        c.resolve_params(overrides[c.id])
    return Plan(claims, overrides, prerequisite_of, _waves(claims))


def _with_prerequisites(selected: list[Claim], registry: Mapping[str, Claim]) -> tuple[list[Claim], dict]:
    """Return the selection with each missing prerequisite before its first dependent.

    Refuses a required id that is not registered, and a cycle.
    """
    chosen = {c.id: c for c in selected}
    ordered: dict[str, Claim] = {}
    prerequisite_of: dict[str, list[str]] = {}
    done: set[str] = set()

    def visit(c: Claim, path: list[str]) -> None:
        if c.id in done:
            return
        chain = [*path, c.id]
        for rid in c.requires:
            if rid in chain:
                cycle = " -> ".join([*chain[chain.index(rid):], rid])
                msg = (f"claims require each other in a cycle ({cycle}); no order runs them: remove one of "
                       "these requires")
                raise InvalidArgument(msg)
            if rid not in registry:
                near = close_matches(rid, registry, n=3)
                hint = f" (close matches: {', '.join(near)})" if near else ""
                msg = f"{c.id} requires {rid!r}, which is no registered claim{hint}; fix {c.id}'s requires"
                raise InvalidArgument(msg)
            prerequisite = registry[rid]
            if rid not in chosen:
                dependents = prerequisite_of.setdefault(rid, [])
                if c.id not in dependents:
                    dependents.append(c.id)
            visit(prerequisite, chain)
        done.add(c.id)

    for c in selected:
        visit(c, [])
    # output order: the selection's, an added prerequisite (and its own) just before its first dependent
    placed: set[str] = set()

    def place(c: Claim) -> None:
        for rid in c.requires:
            if rid not in chosen and rid not in placed:
                place(registry[rid])
        if c.id not in placed:
            placed.add(c.id)
            ordered[c.id] = c

    for c in selected:
        place(c)
    return list(ordered.values()), prerequisite_of


def _waves(claims: list[Claim]) -> list[list[str]]:
    """Ids by depth: a claim's wave comes after the waves of every claim it requires (acyclic input)."""
    depth: dict[str, int] = {}
    by_id = {c.id: c for c in claims}

    def level(cid: str) -> int:
        if cid not in depth:
            depth[cid] = 1 + max((level(r) for r in by_id[cid].requires), default=-1)
        return depth[cid]

    waves: list[list[str]] = []
    for c in claims:
        k = level(c.id)
        waves.extend([] for _ in range(k + 1 - len(waves)))
        waves[k].append(c.id)
    return waves


def check_workers(workers: int | None) -> None:
    """Refuse a non-positive process count."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        msg = (f"workers={workers!r} must be a positive number of processes, e.g. --workers 2 "
               "(workers=2 from Python)")
        raise InvalidArgument(msg)


def run(
    selectors: str | Iterable[str] = (),
    params: Mapping[str, Any] | None = None,
    *,
    budget: str = "quick",
    seed: int = 0,
    workers: int | None = None,
    forms: bool = False,
    progress: Callable[[Tick], None] | None = None,
) -> RunResult:
    """Run the claims of ``selectors`` with ``params`` pinned (each claim gets the names it declares).

    Parameters
    ----------
    selectors
        Paper prefixes, ids or globs (none: every claim).
    params
        Values to pin, by parameter name; a name no selected claim declares, or a value outside a
        claim's domain, raises :class:`~derivations.errors.InvalidArgument` before anything runs.
    budget, seed
        As ``tdcheck run --budget/--seed``.
    workers
        Processes running claims in parallel (default: every core; 1 runs in this process).
    forms
        Also compute the printed/derived LaTeX of closed-form items (for ``--report``).
    progress
        Called with a :class:`Tick` as claims start, report progress and end.

    Returns
    -------
    RunResult
        Verdicts (the selection's order; an added prerequisite just before its first dependent) and
        crash records.
    """
    if budget not in BUDGETS:
        msg = f"budget={budget!r} is not one of {', '.join(BUDGETS)}"
        raise InvalidArgument(msg)
    check_workers(workers)
    return execute(plan(selectors, params), budget=budget, seed=seed, workers=workers, forms=forms,
                   progress=progress)


def execute(
    the_plan: Plan,
    *,
    budget: str = "quick",
    seed: int = 0,
    workers: int | None = None,
    forms: bool = False,
    progress: Callable[[Tick], None] | None = None,
    executor: Executor | None = None,
    reuse: Mapping[str, Verdict] | None = None,
    on_record: Callable[[RunResult], None] | None = None,
    keep_partial: bool = False,
) -> RunResult:
    """Run a :class:`Plan` wave by wave: in this process when one worker, else in worker processes.

    ``executor`` replaces the process pool (anything with ``submit``; claims are then looked up by
    id in the registry of wherever the job runs). ``reuse`` maps ids to verdicts of an earlier run
    that the caller has matched to this plan (same parameters, budget, seed, version); such a
    verdict is taken as it is when every claim it requires is reused too, else recomputed.
    ``on_record`` receives the run so far (plan order) after each claim completes, e.g. to write
    it to disk.

    Ctrl-C (``KeyboardInterrupt``) stops the worker processes at once; with ``keep_partial`` the
    run so far is returned with ``interrupted`` set, else the interrupt is raised again once the
    workers are down.
    """
    start = time.perf_counter()
    claims = the_plan.claims
    total = len(claims)
    results: dict[str, tuple] = {}
    statuses: dict[str, str] = {}
    reused: list[str] = []
    tick = progress or (lambda _tick: None)

    def so_far(interrupted: bool = False) -> RunResult:
        done = [c for c in claims if c.id in results]
        return RunResult([results[c.id][1] for c in done if results[c.id][0] == "ok"],
                         [results[c.id][1] for c in done if results[c.id][0] == "error"],
                         {c.id: results[c.id][2] for c in done if len(results[c.id]) > 2 and results[c.id][2]},
                         time.perf_counter() - start, list(claims), dict(the_plan.prerequisite_of),
                         list(reused), interrupted)

    def record(cid: str, result: tuple) -> None:
        results[cid] = result
        if result[0] != "ok":
            statuses[cid] = CRASHED
        elif "broken_prerequisites" in result[1].evidence:
            statuses[cid] = NOT_RUN  # skipped on a broken base: broken for its own dependents too
        else:
            statuses[cid] = result[1].status
        tick(Tick(cid, len(results), total))
        if on_record is not None:
            on_record(so_far())

    def job(cid: str) -> tuple:
        c = by_id[cid]
        prerequisites = {r: statuses[r] for r in c.requires if r in statuses}
        return cid, the_plan.overrides[cid], budget, seed, workers, forms, prerequisites

    by_id = {c.id: c for c in claims}
    for wave in the_plan.waves:
        for cid in wave:
            if cid in (reuse or {}) and all(r in reused for r in by_id[cid].requires):
                reused.append(cid)
                record(cid, ("ok", reuse[cid]))
    waves = [[cid for cid in wave if cid not in results] for wave in the_plan.waves]
    left = sum(map(len, waves))
    n_workers = min(workers or os.cpu_count() or 1, max(left, 1))
    try:
        if executor is None and n_workers <= 1:
            for wave in waves:
                for cid in wave:
                    tick(Tick(cid, len(results), total))

                    def report(fraction: float, message: str, claim_id: str = cid) -> None:
                        tick(Tick(claim_id, len(results), total, fraction, message))

                    record(cid, run_claim(*job(cid), progress=report, claim=by_id[cid]))
        else:
            _in_pool(executor, n_workers, waves, by_id, job, record)
    except KeyboardInterrupt:
        if not keep_partial:
            raise
        return so_far(interrupted=True)
    return so_far()


def _in_pool(executor: Executor | None, n_workers: int, waves: list[list[str]], by_id: Mapping[str, Claim],
             job: Callable[[str], tuple], record: Callable[[str, tuple], None]) -> None:
    """Run the waves on ``executor`` (left open for its owner) or on a new pool of ``n_workers`` processes.

    On an interrupt the pending jobs are cancelled and the pool's workers terminated before the
    interrupt goes on (a worker must not outlive the run, still computing a claim nobody awaits).
    """
    pool = executor if executor is not None else worker_pool(n_workers)
    futures: dict = {}
    try:
        for wave in waves:
            # longest first balances the workers
            ordered = sorted(wave, key=lambda cid: -by_id[cid].cost)
            futures = {pool.submit(run_claim, *job(cid)): cid for cid in ordered}
            for future in as_completed(futures):
                record(futures[future], future.result())
    except BaseException:
        if executor is not None:
            for future in futures:
                future.cancel()
        else:
            # no cancel() here: the pool's own thread fails every pending job once its workers are
            # gone, and a future cancelled meanwhile makes it raise (CPython 3.11)
            stop_workers(pool)
            pool.shutdown(wait=True)
        raise
    if executor is None:
        pool.shutdown(wait=True)


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate a pool's worker processes now (they ignore SIGINT: the parent decides when they stop)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.terminate()
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.join(timeout=5)


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """Return a pool of ``workers`` processes set up to run claims (one thread each)."""
    # forkserver, measured faster than fork here: a forked child inherits (and copies on write) the
    # parent's whole SymPy heap; available on POSIX
    # the workers share the cores: multi-threaded BLAS inside each one only contends (the fork
    # server, started on first use, passes this environment to every worker)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    _quiet_resource_tracker()
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_setup)


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker without its warning about semaphores left by stopped workers.

    Workers terminated on Ctrl-C (:func:`stop_workers`) cannot release the named semaphores they
    hold; the tracker releases them at exit, as it is there to do, but warns of "leaked semaphore
    objects". The tracker takes its warning filters from ``sys.warnoptions`` when it starts.
    """
    import sys
    from multiprocessing import resource_tracker

    option = "ignore:resource_tracker:UserWarning"
    added = option not in sys.warnoptions
    if added:
        sys.warnoptions.append(option)
    try:
        resource_tracker.ensure_running()
    finally:
        if added:
            sys.warnoptions.remove(option)


def _worker_setup() -> None:
    """Set up a worker process: one numba thread, and Ctrl-C left to the parent.

    Worker processes already share the cores, so numba kernels inside them run on one thread each
    (results do not depend on the thread count: Monte-Carlo chunks are seeded independently of it).
    A terminal's Ctrl-C reaches the whole process group; the workers ignore it, and the parent,
    which knows what completed, stops them (:func:`stop_workers`).
    """
    import signal

    import numba

    numba.set_num_threads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run_claim(
    claim_id: str, overrides: dict[str, Any], budget: str, seed: int, workers: int | None,
    forms: bool = False, prerequisites: Mapping[str, str] | None = None, progress=None,
    claim: Claim | None = None,
):
    """Run one claim (in this or a worker process): ("ok", Verdict) or ("error", record of the crash).

    ``prerequisites`` maps each required claim's id to its status or ``"crashed"``. ``progress(fraction,
    message)`` receives the claim's own progress (``ctx.report_progress``). ``claim`` is the claim
    itself when the caller has it (in-process runs), else it is looked up by id in the registry.

    With ``forms``, ("ok", Verdict, forms): the LaTeX of the printed and derived displays of a
    closed-form item (``checks.report.formula_forms``), computed here where the item is built.
    """
    try:
        if claim is None:
            registry = load_all()
            if claim_id not in registry:
                msg = (f"claim {claim_id!r} is not registered in this process (registered at run time "
                       "elsewhere? run it with workers=1); this is a bug")
                raise InternalError(msg)
            claim = registry[claim_id]
        verdict = claim.run(overrides, budget=budget, seed=seed, workers=workers, progress=progress,
                            prerequisites=prerequisites)
        if not forms:
            return "ok", verdict
        from checks.report import formula_forms

        return "ok", verdict, formula_forms(claim, verdict.to_dict()["evidence"])
    except InvalidArgument:
        raise
    except Exception as error:  # a crash inside a check is a bug; keep going, report it
        return "error", {"id": claim_id, "error": f"{type(error).__name__}: {error}",
                         "traceback": traceback.format_exc()}


def run_header(result: RunResult, *, selectors: list[str], budget: str, seed: int) -> dict:
    """The ``--json`` document's fields before the verdicts: version, selection, budget, seed, time, counts.

    ``interrupted`` ("interrupted: N of M claims") appears when the run stopped early, ``reused``
    (how many verdicts came from the file resumed) when any did.
    """
    counts: dict[str, int] = {}
    for v in result.verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    header = {
        "tdcheck": version(),
        "selectors": selectors,
        "budget": budget,
        "seed": seed,
        "elapsed_s": round(result.elapsed, 3),
        "counts": counts,
    }
    if result.interrupted:
        header["interrupted"] = f"interrupted: {result.completed} of {result.total} claims"
    if result.reused:
        header["reused"] = len(result.reused)
    return header


def marked(result: RunResult, entry: dict) -> dict:
    """A verdict's or crash's record, with ``prerequisite_of`` when it ran only because others require it."""
    dependents = result.prerequisite_of.get(entry["id"])
    return {**entry, "prerequisite_of": dependents} if dependents else entry


def run_record(result: RunResult, *, selectors: list[str], budget: str, seed: int) -> dict:
    """Return the ``--json`` document (schema in README.md); an added prerequisite says whose it is."""
    return {
        **run_header(result, selectors=selectors, budget=budget, seed=seed),
        "verdicts": [marked(result, v.to_dict()) for v in result.verdicts],
        "errors": [marked(result, e) for e in result.errors],
    }


def version() -> str:
    """Return the installed tdcheck's version ("unknown" when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("tdcheck")
    except PackageNotFoundError:
        return "unknown"
