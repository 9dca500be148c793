"""``tdcheck bench``: tdcheck against the tools a researcher would otherwise use, in one run.

The benchmarks and their peers live in the repository's ``benchmarks/`` folder (``suite.py``
lists them); nothing in the packages imports it, so the peers (SciPy's ``solve_ivp``, plain
NumPy, PyTorch) never become dependencies. Each benchmark returns a :class:`Result`: tdcheck's
time, every peer's time on the same work, the ratios (peer time / tdcheck time, so > 1 means
tdcheck is faster) and the issue's target for them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from derivations.errors import InvalidArgument, close_matches


@dataclass
class Peer:
    """One peer's measurement on the same work; ``ratio`` = peer seconds / tdcheck seconds."""

    name: str
    seconds: float | None
    ratio: float | None = None
    note: str = ""


@dataclass
class Result:
    """A benchmark's numbers: tdcheck's time, the peers, the target and whether it was met."""

    name: str
    what: str
    tdcheck_seconds: float | None
    peers: list[Peer] = field(default_factory=list)
    target: str = ""
    met: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    skipped: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON record."""
        return asdict(self)


def machine() -> dict[str, Any]:
    """Core count and versions, printed with every run (ratios mean little without them)."""
    import numba
    import numpy
    import scipy
    import sympy

    info = {"cpu_count": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "numpy": numpy.__version__, "numba": numba.__version__, "scipy": scipy.__version__,
            "sympy": sympy.__version__}
    try:
        import torch

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = None
    return info


def find_suite(directory: Path | None = None):
    """Import ``benchmarks/suite.py`` from ``directory``, the current folder or the source tree."""
    candidates = [directory] if directory else [Path.cwd() / "benchmarks", Path(__file__).parents[1] / "benchmarks"]
    for folder in candidates:
        path = folder / "suite.py"
        if path.is_file():
            sys.path.insert(0, str(folder))
            spec = importlib.util.spec_from_file_location("tdcheck_benchmark_suite", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    tried = ", ".join(str(c) for c in candidates)
    raise InvalidArgument(f"benchmarks folder not found (tried {tried}); run from a clone of tdcheck or pass "
                          "--benchmarks DIR")


def select(suite, names: list[str]) -> list[str]:
    """The benchmark names to run, validated against ``suite.BENCHMARKS``."""
    known = list(suite.BENCHMARKS)
    for name in names:
        if name not in known:
            near = close_matches(name, known)
            raise InvalidArgument(f"benchmark {name!r} is not known; choose from {', '.join(known)}"
                                  + (f" (close: {', '.join(near)})" if near else ""))
    return names or known


def run(names: list[str], *, directory: Path | None = None, json_path: Path | None = None, quick: bool = False,
        console=None) -> list[Result]:
    """Run the chosen benchmarks, print a table as each finishes, and write the JSON if asked."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    suite = find_suite(directory)
    info = machine()
    console.print(f"machine: {info['cpu_count']} cores, Python {info['python']}, numpy {info['numpy']}, "
                  f"numba {info['numba']}, scipy {info['scipy']}, torch {info['torch'] or 'absent'}")
    results = []
    for name in select(suite, names):
        console.print(f"[bold]{name}[/bold] …")
        result = suite.BENCHMARKS[name](quick=quick)
        results.append(result)
        table = Table(show_header=True)
        for column in ("benchmark", "tdcheck (s)", "peer", "peer (s)", "ratio", "target", "met"):
            table.add_column(column)
        if result.skipped:
            table.add_row(name, "—", "—", "—", "—", result.target, f"skipped: {result.skipped}")
        for i, peer in enumerate(result.peers or [Peer("—", None)]):
            table.add_row(name if i == 0 else "", _fmt(result.tdcheck_seconds) if i == 0 else "", peer.name,
                          _fmt(peer.seconds), f"{peer.ratio:.3g}×" if peer.ratio else (peer.note or "—"),
                          result.target if i == 0 else "", _met(result.met) if i == 0 else "")
        console.print(table)
        for key, value in result.extra.items():
            console.print(f"  {key}: {value}")
    if json_path is not None:
        json_path.write_text(json.dumps({"machine": info, "benchmarks": [r.to_dict() for r in results]}, indent=2,
                                        default=str))
        console.print(f"wrote {json_path}")
    return results


def _fmt(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.4g}"


def _met(met: bool | None) -> str:
    return {True: "[green]yes[/green]", False: "[red]no[/red]", None: "—"}[met]
