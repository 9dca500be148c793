"""The ``tdcheck`` command line: list, run, latex, bench, cache.

Exit status: 0 when every selected claim computed a verdict (whatever the verdict), 1 when a
check crashed (a bug in tdcheck, reported as such), 2 for bad input (unknown selector,
malformed or out-of-domain ``--param``), 130 after Ctrl-C (the completed verdicts printed and
kept in ``--json``). Selecting, ordering and running the claims is
:mod:`checks.runner`'s, shared with the Python API (``tdcheck.run``); this module parses, shows a
progress bar and prints.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from checks.claim import BUDGETS
from checks.registry import select, select_records
from checks.run_file import RunFile, reusable
from checks.runner import (
    Plan,
    RunResult,
    Tick,
    check_workers,
    execute,
    plan,
    plan_claims,
    run_record,
    version,
)
from derivations.errors import InvalidArgument, TdcheckError

#: exit status after Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED = 130
#: exit status after SIGTERM (128 + SIGTERM)
TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a batch system's time limit), taken the way Ctrl-C is: the workers are stopped and
    what completed is kept. A KeyboardInterrupt so that every path that handles Ctrl-C handles it too."""


_terminated = False


def _on_sigterm(signum, frame):
    global _terminated
    _terminated = True
    raise Terminated()

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
        msg = f"malformed --param {text!r}: expected NAME=VALUE, e.g. --param wstar=0.3"
        raise InvalidArgument(msg)
    for convert in (int, float):
        try:
            return name, convert(raw)
        except ValueError:
            continue
    return name, raw


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
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="pin a parameter of the selected claims")
    run.add_argument("--budget", choices=BUDGETS, default="quick")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--workers", type=int, default=None,
                     help="processes running claims in parallel (default: all cores; 1 runs in-process)")
    run.add_argument("--json", metavar="PATH",
                     help="write the verdicts as JSON ('-' for stdout); the file is rewritten as each claim "
                          "completes, so an interrupted run keeps what it computed")
    run.add_argument("--resume", action="store_true",
                     help="with --json PATH: reuse the verdicts in PATH computed with the same parameters, "
                          "budget, seed and tdcheck version; compute only the rest")
    run.add_argument("--report", metavar="DIR",
                     help="write DIR/index.html and DIR/report.md: verdicts, statements, evidence, figures")

    run.add_argument("--dask", metavar="ADDRESS",
                     help="run sweeps on a Dask cluster (scheduler address, e.g. tcp://host:8786); claims "
                          "run one after another here, their sweeps' chunks on the cluster")
    bench = commands.add_parser("bench", help="time tdcheck against its peers (SciPy, NumPy, PyTorch)")
    bench.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    bench.add_argument("--json", metavar="PATH", help="write the results as JSON")
    bench.add_argument("--quick", action="store_true", help="fewer repeats (same work per repeat)")
    bench.add_argument("--benchmarks", metavar="DIR", help="folder holding suite.py (default: ./benchmarks)")
    cache = commands.add_parser("cache", help="where tdcheck's caches are and how big; clear them")
    cache.add_argument("action", choices=("info", "clear"))
    cache.add_argument("kinds", nargs="*", metavar="KIND",
                       help="with clear: the parts to delete (kernels, numba, sympy, figures; default: all)")
    latex = commands.add_parser(
        "latex", help="write a LaTeX document: errata (differs/fails), then printed, derived and difference")
    latex.add_argument("selector", nargs="?", default="*")
    latex.add_argument("-o", "--output", metavar="FILE", help="output file (default: stdout)")
    latex.add_argument("--verdicts", metavar="JSON",
                       help="verdicts from a 'tdcheck run --json' file instead of running the claims")
    latex.add_argument("--errata-only", action="store_true",
                       help="only the errata: per erratum its label, printed and corrected forms, evidence and replay")
    shape = latex.add_mutually_exclusive_group()
    shape.add_argument("--standalone", dest="fragment", action="store_false",
                       help="a complete document that compiles on its own (the default)")
    shape.add_argument("--fragment", dest="fragment", action="store_true",
                       help="no preamble: sections to \\input or paste into a paper's source (needs amsmath, amssymb)")
    latex.set_defaults(fragment=False)
    latex.add_argument("--budget", choices=BUDGETS, default="quick")
    latex.add_argument("--seed", type=int, default=0)
    latex.add_argument("--workers", type=int, default=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``tdcheck`` command."""
    args = build_parser().parse_args(argv)
    console = Console(stderr=True)
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        if args.command == "list":
            return command_list(args)
        if args.command == "run":
            return command_run(args, console)
        if args.command == "latex":
            return command_latex(args, console)
        if args.command == "cache":
            return command_cache(args, console)
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
    except KeyboardInterrupt as stop:  # outside a run's claims (loading, planning, writing): nothing to keep
        console.print("tdcheck: interrupted", highlight=False)
        return TERMINATED if isinstance(stop, Terminated) else INTERRUPTED
    return 0  # pragma: no cover - argparse guarantees a command


def command_list(args: argparse.Namespace) -> int:
    """``tdcheck list``."""
    claims = select([args.selector])
    records = select_records([args.selector])
    if args.json:
        print(json.dumps([c.describe() for c in claims] + [r.describe() for r in records], indent=2))
        return 0
    if claims:
        table = Table(title=f"{len(claims)} claims")
        for column in ("id", "kind", "label", "label (other version)"):
            table.add_column(column)
        for c in claims:
            table.add_row(c.id, c.kind, escape(c.label), escape(c.label_alt))
        Console().print(table)
    if records:
        print_records(records, evaluate=False)
    return 0


def print_records(records, *, evaluate: bool) -> None:
    """Options and parameter sets: what they hold (and, when ``evaluate``, their derived quantities)."""
    table = Table(title=f"{len(records)} options and parameter sets (records: nothing is checked)")
    for column in ("id", "kind", "content", "doc"):
        table.add_column(column, overflow="fold")
    for r in records:
        shown = r.evaluate() if evaluate else r.describe()
        content = escape("; ".join(f"{k}: {v}" for k, v in shown["content"].items()))
        if "derived" in shown:
            content += "\n" + escape("[derived] " + "; ".join(f"{k}: {v}" for k, v in shown["derived"].items()
                                                           if k != "E"))
        table.add_row(r.id, r.kind, content, escape(r.doc))
    Console(width=max(Console().width, 140)).print(table)


def command_cache(args: argparse.Namespace, console: Console) -> int:
    """``tdcheck cache info``: each part's folder, entries and size; ``tdcheck cache clear [KIND...]``."""
    from numerics import cache

    if args.action == "clear":
        removed = cache.clear(args.kinds or None)
        console.print("tdcheck: removed " + (", ".join(removed) if removed else "nothing (the cache is empty)"),
                      highlight=False)
        return 0
    if args.kinds:
        msg = f"tdcheck cache info takes no KIND (got {' '.join(args.kinds)}); it lists every part"
        raise InvalidArgument(msg)
    rows = cache.info()
    table = Table(title=f"tdcheck cache: {cache.cache_root()}")
    for column, justify in (("part", "left"), ("entries", "right"), ("size", "right"), ("folder", "left"),
                            ("holds", "left")):
        table.add_column(column, justify=justify)
    for row in rows:
        table.add_row(row["kind"], str(row["entries"]), f"{row['bytes'] / 2**20:.1f} MiB", row["folder"], row["holds"])
    total = sum(r["bytes"] for r in rows)
    table.caption = f"{sum(r['entries'] for r in rows)} entries, {total / 2**20:.1f} MiB"
    Console().print(table)
    return 0


def command_run(args: argparse.Namespace, console: Console) -> int:
    """``tdcheck run``: exit 0, 1 when a check crashed, 130 when interrupted (what completed is kept)."""
    the_plan = _planned(args)
    records = select_records(args.selectors)
    if records:
        print_records(records, evaluate=True)
        if not the_plan.claims:
            return 0
    if args.report and Path(args.report).exists() and not Path(args.report).is_dir():
        msg = f"--report {args.report!r} is a file; give a directory (created if missing)"
        raise InvalidArgument(msg)
    if args.resume and (not args.json or args.json == "-"):
        msg = "--resume needs --json PATH: the file of the run to resume (and to update)"
        raise InvalidArgument(msg)
    reuse: dict = {}
    if args.resume:
        reuse, found = reusable(args.json, the_plan, budget=args.budget, seed=args.seed)
        console.print(f"tdcheck: {found}", highlight=False)
    run_file = None
    if args.json and args.json != "-":
        run_file = RunFile(args.json, selectors=args.selectors, budget=args.budget, seed=args.seed)
    running = nullcontext()
    if args.dask:
        from numerics.sweep import dask_executor, use_executor

        running = use_executor(dask_executor(args.dask))
        args.workers = 1  # the claims here, one by one; their sweeps on the cluster
    with running:
        result = _execute(the_plan, args, console, forms=bool(args.report), reuse=reuse, run_file=run_file,
                          keep_partial=True)
    print_table(result)
    if result.reused:
        console.print(f"tdcheck: reused {len(result.reused)} verdicts from {args.json}; computed "
                      f"{result.completed - len(result.reused)}", highlight=False)
    if args.json == "-":
        print(json.dumps(run_record(result, selectors=args.selectors, budget=args.budget, seed=args.seed),
                         indent=2))
    elif run_file is not None:
        run_file.write(result)
    if args.report:
        from checks.report import build, write_report

        meta = {"selectors": args.selectors, "budget": args.budget, "seed": args.seed,
                "elapsed_s": round(result.elapsed, 1), "tdcheck": version(),
                "generated": time.strftime("%Y-%m-%d %H:%M")}
        report = build(result.verdicts, {c.id: c for c in result.claims}, errors=result.errors,
                       forms=result.forms, meta=meta)
        page = write_report(args.report, report)
        console.print(f"tdcheck: report written to {page} and {page.with_name('report.md')}", highlight=False)
    if result.interrupted:
        where = f"; completed verdicts are in {args.json}" if run_file is not None else ""
        console.print(f"tdcheck: interrupted: {result.completed} of {result.total} claims{where}", highlight=False)
        return TERMINATED if _terminated else INTERRUPTED
    return 1 if result.errors else 0


def _planned(args: argparse.Namespace) -> Plan:
    """Return the run's plan: claims, prerequisites, validated overrides (bad input refused up front)."""
    check_workers(args.workers)
    params = dict(parse_param(p) for p in getattr(args, "param", []))
    return plan(args.selectors, params)


def _execute(the_plan: Plan, args: argparse.Namespace, console: Console, *, forms: bool = False,
             reuse: dict | None = None, run_file: RunFile | None = None, keep_partial: bool = False) -> RunResult:
    """Run ``the_plan`` behind a progress bar (on a terminal): claims done, the running claim's progress.

    ``run_file`` is rewritten after each completed claim; with ``keep_partial``, Ctrl-C returns what
    completed (``RunResult.interrupted``) instead of raising.
    """
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task("tdcheck run", total=len(the_plan.claims))

        def tick(event: Tick) -> None:
            description = event.claim_id
            if event.fraction is not None:
                description = f"{event.claim_id} {event.fraction:4.0%} {event.message}"
            bar.update(task, description=description, completed=event.done)

        return execute(the_plan, budget=args.budget, seed=args.seed, workers=args.workers, forms=forms,
                       progress=tick, reuse=reuse, on_record=run_file.write if run_file else None,
                       keep_partial=keep_partial)


def print_table(result: RunResult) -> None:
    """Print one line per claim; a prerequisite that was not selected says whose it is."""
    verdicts, errors = result.verdicts, result.errors
    table = Table(title=f"tdcheck: {len(verdicts)} verdicts in {result.elapsed:.1f} s", title_justify="left")
    table.add_column("id", no_wrap=True)
    table.add_column("label")
    table.add_column("verdict", no_wrap=True)
    table.add_column("summary")
    table.add_column("s", justify="right")

    def why(claim_id: str) -> str:
        dependents = result.prerequisite_of.get(claim_id)
        return f"(run as a prerequisite of {', '.join(dependents)}) " if dependents else ""

    for v in verdicts:
        style = STATUS_STYLE.get(v.status, "")
        # labels and summaries are text, not markup: "[code]" in a label must print
        table.add_row(v.claim_id, escape(v.label), f"[{style}]{v.status}[/]", escape(why(v.claim_id) + v.summary),
                      f"{v.elapsed:.1f}")
    for e in errors:
        table.add_row(e["id"], "", f"[{STATUS_STYLE['error']}]error[/]",
                      escape(f"{why(e['id'])}this is a bug in tdcheck: {e['error']}"), "")
    Console(width=max(Console().width, 140)).print(table)


def command_latex(args: argparse.Namespace, console: Console) -> int:
    """``tdcheck latex``: the selected claims are run (or read from ``--verdicts``) to write the errata."""
    from checks.latex_export import document, lint

    check_workers(args.workers)
    claims = select([args.selector])
    records = {}
    if args.verdicts:
        try:
            records = {v["id"]: v for v in json.loads(Path(args.verdicts).read_text())["verdicts"]}
        except (OSError, ValueError, KeyError, TypeError) as error:
            msg = f"--verdicts {args.verdicts!r} is not a 'tdcheck run --json' file: {error}"
            raise InvalidArgument(msg) from None
    missing = [c for c in claims if c.id not in records]
    forms, errors = {}, []
    if missing:
        result = _execute(plan_claims(missing), args, console, forms=True)
        forms, errors = result.forms, result.errors
        records.update({v.claim_id: v.to_dict() for v in result.verdicts})
    for error in errors:
        console.print(f"[bold red]tdcheck: {error['id']} crashed (a bug in tdcheck):[/] {error['error']}",
                      highlight=False)
    text = document(claims, records, forms, errata_only=args.errata_only, fragment=args.fragment)
    for problem in lint(text):
        console.print(f"[bold yellow]tdcheck latex: the export may not compile or shows an internal name:[/] {problem}",
                      highlight=False)
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 1 if errors else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
