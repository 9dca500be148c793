"""The ``--json`` file of a run: rewritten atomically as verdicts complete, read back by ``--resume``.

:class:`RunFile` writes the document of :func:`checks.runner.run_record` after every completed
claim, to a temporary file in the same folder that then replaces the target (``os.replace``), so
the file on disk is always a whole document: an interrupted or killed run leaves every verdict
that had completed. Each verdict is serialised once, when it arrives, so that a run of many
claims with large evidence does not re-encode the earlier ones at every write.

:func:`reusable` reads such a file back for ``--resume``: a verdict is reused when its claim id,
parameters (every resolved value and which were pinned), budget and seed equal this run's and
the file was written by the same tdcheck version; everything else is computed again.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks.claim import Verdict, _jsonable
from checks.runner import Plan, RunResult, marked, run_header, version
from derivations.errors import InvalidArgument


def _nested(text: str, indent: str = "    ") -> str:
    """Indent a JSON block by one list level of ``json.dumps(indent=2)`` inside the document."""
    return "\n".join(indent + line for line in text.splitlines())


class RunFile:
    """The ``--json PATH`` of one run; :meth:`write` makes PATH the document of the run so far."""

    def __init__(self, path: Path | str, *, selectors: list[str], budget: str, seed: int) -> None:
        self.path = Path(path)
        self.selectors, self.budget, self.seed = list(selectors), budget, seed
        self._texts: dict[tuple[str, int], str] = {}

    def _entry(self, result: RunResult, record: Verdict | dict) -> str:
        key = (type(record).__name__, id(record))  # the run keeps every record alive: ids stay unique
        if key not in self._texts:
            data = record.to_dict() if isinstance(record, Verdict) else record
            self._texts[key] = _nested(json.dumps(marked(result, data), indent=2))
        return self._texts[key]

    def text(self, result: RunResult) -> str:
        """The document, character for character ``json.dumps(run_record(result, ...), indent=2)``."""
        header = run_header(result, selectors=self.selectors, budget=self.budget, seed=self.seed)
        head = json.dumps(header, indent=2)[:-2]  # without the closing "\n}"
        parts = [head + ","]
        for name, entries in (("verdicts", [self._entry(result, v) for v in result.verdicts]),
                              ("errors", [self._entry(result, e) for e in result.errors])):
            body = f'  "{name}": [\n' + ",\n".join(entries) + "\n  ]" if entries else f'  "{name}": []'
            parts.append(body + ("," if name == "verdicts" else ""))
        return "\n".join(parts) + "\n}\n"

    def write(self, result: RunResult) -> None:
        """Replace PATH by the document of ``result`` in one step (a reader never sees half a file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w") as out:
                out.write(self.text(result))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def reusable(path: Path | str, the_plan: Plan, *, budget: str, seed: int) -> tuple[dict[str, Verdict], str]:
    """The verdicts of ``path`` that ``--resume`` may reuse for ``the_plan``, and a line saying what it found.

    Raises
    ------
    InvalidArgument
        ``path`` exists but is not the ``--json`` file of a ``tdcheck run`` (it would be replaced).
    """
    path = Path(path)
    if not path.exists():
        return {}, f"--resume: {path} does not exist yet; running every claim"
    try:
        document = json.loads(path.read_text())
        records = document["verdicts"]
        written_by = document["tdcheck"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        msg = (f"--resume {str(path)!r} is not the --json file of a 'tdcheck run' ({type(error).__name__}: "
               f"{error}); give that file, or drop --resume to replace it")
        raise InvalidArgument(msg) from error
    if written_by != version():
        return {}, f"--resume: {path} was written by tdcheck {written_by}, this is {version()}; running every claim"
    planned = {c.id: c for c in the_plan.claims}
    out: dict[str, Verdict] = {}
    for record in records:
        claim = planned.get(record.get("id"))
        if claim is None or not _same_run(record, claim, the_plan.overrides[claim.id], budget, seed):
            continue
        out[claim.id] = Verdict.from_dict(record)
    return out, f"--resume: {len(out)} of {len(the_plan.claims)} verdicts in {path} match this run"


def _same_run(record: Mapping[str, Any], claim, overrides: Mapping[str, Any], budget: str, seed: int) -> bool:
    """Whether ``record`` is the verdict this run would compute for ``claim`` (parameters, budget, seed)."""
    params = _jsonable(claim.resolve_params(dict(overrides)))
    return (record.get("budget") == budget and record.get("seed") == seed
            and record.get("params") == params and sorted(record.get("pinned", [])) == sorted(overrides))
