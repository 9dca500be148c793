"""The ``tdcheck`` command line: list, run, latex.

Exit status: 0 when every selected claim computed a verdict (whatever the verdict), 1 when a
check crashed (a bug in tdcheck, reported as such), 2 for bad input (unknown selector,
malformed or out-of-domain ``--param``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from checks.claim import BUDGETS, Claim, Verdict
from checks.registry import load_all, select
from derivations.errors import InvalidArgument, TdcheckError

STATUS_STYLE = {
    "holds": "green",
    "certified": "bold green",
    "fails": "bold red",
    "differs": "bold yellow",
    "outside-regime": "cyan",
    "inconclusive": "magenta",
    "error": "bold white on red",
}


def parse_param(text: str) -> tuple[str, Any]:
    """Parse ``NAME=VALUE`` (VALUE an int, a float or a word)."""
    name, sep, raw = text.partition("=")
    name, raw = name.strip(), raw.strip()
    if not sep or not name.isidentifier() or not raw:
        raise InvalidArgument(f"malformed --param {text!r}: expected NAME=VALUE, e.g. --param wstar=0.3")
    for convert in (int, float):
        try:
            return name, convert(raw)
        except ValueError:
            continue
    return name, raw


def split_overrides(claims: list[Claim], params: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Give each claim the overrides it knows; a name no selected claim knows is an error."""
    known = {name for c in claims for name in c.defaults}
    for name in params:
        if name not in known:
            from derivations.errors import unknown_name

            raise unknown_name("--param name for the selected claims", name, known)
    return {c.id: {k: v for k, v in params.items() if k in c.defaults} for c in claims}


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of ``tdcheck``."""
    parser = argparse.ArgumentParser(
        prog="tdcheck",
        description="Rebuild and check the mathematics of papers on transformer training dynamics.",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    listing = commands.add_parser("list", help="list claims and formulas with their paper labels")
    listing.add_argument("selector", nargs="?", default="*", help="paper prefix, id or glob (default: all)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")

    run = commands.add_parser("run", help="run claims and print one verdict per claim")
    run.add_argument("selectors", nargs="*", help="paper prefixes, ids or globs (default: every claim)")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="override a parameter")
    run.add_argument("--budget", choices=BUDGETS, default="quick")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--workers", type=int, default=None,
                     help="processes running claims in parallel (default: all cores; 1 runs in-process)")
    run.add_argument("--json", metavar="PATH", help="write the verdicts as JSON ('-' for stdout)")
    run.add_argument("--report", metavar="DIR",
                     help="write DIR/index.html and DIR/report.md: verdicts, statements, evidence, figures")

    run.add_argument("--dask", metavar="ADDRESS",
                     help="run sweeps on a Dask cluster (scheduler address, e.g. tcp://host:8786); claims run "
                          "one after another here, their sweeps' chunks on the cluster")
    bench = commands.add_parser("bench", help="time tdcheck against its peers (SciPy, NumPy, PyTorch)")
    bench.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    bench.add_argument("--json", metavar="PATH", help="write the results as JSON")
    bench.add_argument("--quick", action="store_true", help="fewer repeats (same work per repeat)")
    bench.add_argument("--benchmarks", metavar="DIR", help="folder holding suite.py (default: ./benchmarks)")
    latex = commands.add_parser(
        "latex", help="write a LaTeX document: errata (differs/fails), then printed, derived and difference")
    latex.add_argument("selector", nargs="?", default="*")
    latex.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    latex.add_argument("--verdicts", metavar="JSON",
                       help="verdicts from a 'tdcheck run --json' file instead of running the claims")
    latex.add_argument("--budget", choices=BUDGETS, default="quick")
    latex.add_argument("--seed", type=int, default=0)
    latex.add_argument("--workers", type=int, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tdcheck`` command."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    try:
        if args.command == "list":
            return command_list(args)
        if args.command == "run":
            return command_run(args, console)
        if args.command == "latex":
            return command_latex(args, console)
        if args.command == "bench":
            from checks import bench

            bench.run(args.names, directory=Path(args.benchmarks) if args.benchmarks else None,
                      json_path=Path(args.json) if args.json else None, quick=args.quick, console=Console())
            return 0
    except TdcheckError as error:
        if not isinstance(error, InvalidArgument):
            raise
        console.print(f"[bold red]tdcheck: error:[/] {error}", highlight=False)
        return 2
    return 0  # pragma: no cover - argparse guarantees a command


def command_list(args: argparse.Namespace) -> int:
    """``tdcheck list``."""
    claims = select([args.selector])
    if args.json:
        print(json.dumps([c.describe() for c in claims], indent=2))
        return 0
    table = Table(title=f"{len(claims)} claims")
    for column in ("id", "kind", "label", "label (other version)"):
        table.add_column(column)
    for c in claims:
        table.add_row(c.id, c.kind, c.label, c.label_alt)
    Console().print(table)
    return 0


def command_run(args: argparse.Namespace, console: Console) -> int:
    """``tdcheck run``."""
    claims, overrides = _selected(args)
    if args.report and Path(args.report).exists() and not Path(args.report).is_dir():
        raise InvalidArgument(f"--report {args.report!r} is a file; give a directory (created if missing)")
    if args.dask:
        from numerics.sweep import dask_executor, use_executor

        executor = dask_executor(args.dask)
        args.workers = 1  # the claims here, one by one; their sweeps on the cluster
        with use_executor(executor):
            verdicts, errors, forms, elapsed = execute(claims, overrides, args, console, forms=bool(args.report))
    else:
        verdicts, errors, forms, elapsed = execute(claims, overrides, args, console, forms=bool(args.report))
    print_table(verdicts, errors, elapsed)
    if args.json:
        record = run_record(verdicts, errors, args, elapsed)
        text = json.dumps(record, indent=2)
        if args.json == "-":
            print(text)
        else:
            Path(args.json).write_text(text + "\n")
    if args.report:
        from checks.report import build, write_report

        meta = {"selectors": args.selectors, "budget": args.budget, "seed": args.seed,
                "elapsed_s": round(elapsed, 1), "tdcheck": _version(),
                "generated": time.strftime("%Y-%m-%d %H:%M")}
        report = build(verdicts, {c.id: c for c in claims}, errors=errors, forms=forms, meta=meta)
        page = write_report(args.report, report)
        console.print(f"tdcheck: report written to {page} and {page.with_name('report.md')}", highlight=False)
    return 1 if errors else 0


def _selected(args: argparse.Namespace) -> tuple[list[Claim], dict[str, dict[str, Any]]]:
    """The selected claims and each one's validated overrides (bad input is refused before any work)."""
    if args.workers is not None and args.workers < 1:
        raise InvalidArgument(
            f"--workers={args.workers} must be a positive number of processes, e.g. --workers 2")
    selectors = getattr(args, "selectors", None)
    if selectors is None:
        selectors = [args.selector]
    claims = select(selectors)
    params = dict(parse_param(p) for p in getattr(args, "param", []))
    overrides = split_overrides(claims, params)
    for c in claims:
        c.resolve_params(overrides[c.id])
    return claims, overrides


def execute(
    claims: list[Claim], overrides: dict[str, dict[str, Any]], args: argparse.Namespace, console: Console,
    *, forms: bool = False,
) -> tuple[list[Verdict], list[dict], dict[str, dict], float]:
    """Run ``claims`` (in worker processes unless one): verdicts, crash records, report forms, seconds."""
    start = time.perf_counter()
    workers = min(args.workers or os.cpu_count() or 1, len(claims))
    results: dict[str, tuple] = {}
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("tdcheck run", total=len(claims))
        jobs = [(c.id, overrides[c.id], args.budget, args.seed, args.workers, forms) for c in claims]
        if workers <= 1:
            for job in jobs:
                progress.update(task, description=job[0])

                def report(fraction: float, message: str, claim_id: str = job[0]) -> None:
                    progress.update(task, description=f"{claim_id} {fraction:4.0%} {message}")

                results[job[0]] = run_claim(*job, progress=report)
                progress.advance(task)
        else:
            # forkserver, measured faster than fork here: a forked child inherits (and copies on write) the
            # parent's whole SymPy heap; available on POSIX
            # the workers share the cores: multi-threaded BLAS inside each one only contends (the fork
            # server, started on first use, passes this environment to every worker)
            for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                os.environ.setdefault(name, "1")
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_one_thread) as pool:
                costs = {c.id: c.cost for c in claims}
                ordered = sorted(jobs, key=lambda job: -costs[job[0]])  # longest first balances the workers
                futures = {pool.submit(run_claim, *job): job[0] for job in ordered}
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    progress.update(task, description=futures[future])
                    progress.advance(task)
    verdicts = [results[c.id][1] for c in claims if results[c.id][0] == "ok"]
    errors = [results[c.id][1] for c in claims if results[c.id][0] == "error"]
    report_forms = {c.id: results[c.id][2] for c in claims if len(results[c.id]) > 2 and results[c.id][2]}
    return verdicts, errors, report_forms, time.perf_counter() - start


def _one_thread() -> None:
    """Worker processes already share the cores: numba kernels inside them run on one thread each.

    Results do not depend on the thread count (Monte-Carlo chunks are seeded independently of it)."""
    import numba

    numba.set_num_threads(1)


def run_claim(
    claim_id: str, overrides: dict[str, Any], budget: str, seed: int, workers: int | None,
    forms: bool = False, progress=None,
):
    """Run one claim (in this or a worker process): ("ok", Verdict) or ("error", record of the crash).

    ``progress(fraction, message)`` receives the claim's own progress (``ctx.report_progress``); the
    CLI shows it in its bar when claims run in this process (``--workers 1``).

    With ``forms``, ("ok", Verdict, forms): the LaTeX of the printed and derived displays of a
    closed-form item (``checks.report.formula_forms``), computed here where the item is built.
    """
    claim = load_all()[claim_id]
    try:
        verdict = claim.run(overrides, budget=budget, seed=seed, workers=workers, progress=progress)
        if not forms:
            return "ok", verdict
        from checks.report import formula_forms

        return "ok", verdict, formula_forms(claim, verdict.to_dict()["evidence"])
    except InvalidArgument:
        raise
    except Exception as error:  # a crash inside a check is a bug; keep going, report it
        return "error", {"id": claim_id, "error": f"{type(error).__name__}: {error}",
                         "traceback": traceback.format_exc()}


def run_record(verdicts: list[Verdict], errors: list[dict], args: argparse.Namespace, elapsed: float) -> dict:
    """Return the ``--json`` document (schema in README.md)."""
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    return {
        "tdcheck": _version(),
        "selectors": args.selectors,
        "budget": args.budget,
        "seed": args.seed,
        "elapsed_s": round(elapsed, 3),
        "counts": counts,
        "verdicts": [v.to_dict() for v in verdicts],
        "errors": errors,
    }


def print_table(verdicts: list[Verdict], errors: list[dict], elapsed: float) -> None:
    """Print one line per claim."""
    table = Table(title=f"tdcheck: {len(verdicts)} verdicts in {elapsed:.1f} s", title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("label")
    table.add_column("verdict", no_wrap=True)
    table.add_column("summary")
    table.add_column("s", justify="right")
    for v in verdicts:
        style = STATUS_STYLE.get(v.status, "")
        table.add_row(v.claim_id, v.label, f"[{style}]{v.status}[/]", v.summary, f"{v.elapsed:.1f}")
    for e in errors:
        table.add_row(e["id"], "", f"[{STATUS_STYLE['error']}]error[/]", f"this is a bug in tdcheck: {e['error']}", "")
    Console(width=max(Console().width, 140)).print(table)


def command_latex(args: argparse.Namespace, console: Console) -> int:
    """``tdcheck latex``: the selected claims are run (or read from ``--verdicts``) to write the errata."""
    from checks.latex_export import document

    claims, _ = _selected(args)
    records = {}
    if args.verdicts:
        try:
            records = {v["id"]: v for v in json.loads(Path(args.verdicts).read_text())["verdicts"]}
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise InvalidArgument(
                f"--verdicts {args.verdicts!r} is not a 'tdcheck run --json' file: {error}") from None
    missing = [c for c in claims if c.id not in records]
    forms, errors = {}, []
    if missing:
        verdicts, errors, forms, _ = execute(missing, {c.id: {} for c in missing}, args, console, forms=True)
        records.update({v.claim_id: v.to_dict() for v in verdicts})
    for error in errors:
        console.print(f"[bold red]tdcheck: {error['id']} crashed (a bug in tdcheck):[/] {error['error']}",
                      highlight=False)
    text = document(claims, records, forms)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if errors else 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tdcheck")
    except PackageNotFoundError:
        return "unknown"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
