"""``tdcheck.run`` and ``tdcheck.list``: the command line's run and listing, as functions."""

from __future__ import annotations

from typing import Any

from checks.claim import Verdict
from checks.registry import select
from checks.runner import check_workers, execute, plan
from derivations.errors import InternalError


class CheckCrashed(InternalError):
    """A check crashed while running: a bug in tdcheck (not a verdict on the paper).

    ``claim_id``, ``error`` and ``traceback`` describe the first crash; ``errors`` holds every crash
    record of the run and ``verdicts`` the verdicts computed before or beside it.
    """

    def __init__(self, errors: list[dict[str, Any]], verdicts: list[Verdict]):
        first = errors[0]
        self.errors = errors
        self.verdicts = verdicts
        self.claim_id: str = first["id"]
        self.error: str = first["error"]
        self.traceback: str = first["traceback"]
        others = f" (and {', '.join(e['id'] for e in errors[1:])})" if errors[1:] else ""
        super().__init__(
            f"{self.claim_id} crashed{others}: {self.error}\n"
            "This is a bug in tdcheck, not a verdict on the paper; please report it with this traceback:\n\n"
            f"{self.traceback}"
        )


def run(*selectors: str, budget: str = "quick", seed: int = 0, workers: int | None = 1,
        **params: Any) -> list[Verdict]:
    """Run the claims of ``selectors`` and return their verdicts, as ``tdcheck run`` does.

    Parameters
    ----------
    *selectors
        Paper prefixes (``"ih"``), ids (``"ih.thm4.phase2"``) or globs (``"ih.cf.*"``); none selects
        every claim.
    budget
        ``"quick"`` or ``"full"``.
    seed
        Root seed of every random draw (the replay command repeats it).
    workers
        Processes running claims in parallel; 1 (the default) runs them in this process, None uses
        every core.
    **params
        Values to pin, by parameter name (``wstar=0.3``); each selected claim receives the names it
        declares.

    Returns
    -------
    list of Verdict
        One per selected claim, in the order of ``tdcheck list``. A claim that ``requires`` another
        runs after it (a prerequisite that was not selected is run too, but not returned): a broken
        prerequisite makes it ``inconclusive``, saying which.

    Raises
    ------
    InvalidArgument
        For an unknown selector or parameter, or a value outside a claim's domain, before anything
        runs; the message is the command line's.
    CheckCrashed
        When a check crashed (a bug in tdcheck); it carries the traceback.
    """
    check_workers(workers)
    the_plan = plan(list(selectors), params)
    result = execute(the_plan, budget=budget, seed=seed, workers=workers)
    if result.errors:
        raise CheckCrashed(result.errors, result.verdicts)
    return [v for v in result.verdicts if v.claim_id not in result.prerequisite_of]


def list_claims(selector: str | None = None) -> list[dict[str, Any]]:
    """Return the records of ``tdcheck list --json`` for the claims matching ``selector`` (default: all).

    Each record holds ``id``, ``paper``, ``kind``, ``label``, ``label_alt``, ``params`` and ``requires``.
    """
    return [c.describe() for c in select([selector or "*"])]
