"""tdcheck from Python: run the papers' claims, test your own derivations, certify inequalities.

>>> import tdcheck
>>> (verdict,) = tdcheck.run("ih.thm4.phase2", wstar=0.3)    # doctest: +SKIP
>>> verdict.status, verdict.summary                           # doctest: +SKIP

:func:`run` and :func:`list` are ``tdcheck run`` and ``tdcheck list --json`` (same selectors, same
parameter checks, same messages); a :class:`Verdict` shows as HTML in Jupyter.
:mod:`tdcheck.testing` (strategies and assertions for pytest/Hypothesis) and
:mod:`tdcheck.certify` (inequalities proven by ball arithmetic) are the user APIs, imported on
first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from checks.claim import Verdict
from derivations.errors import InternalError, InvalidArgument, NumericalTrouble, TdcheckError
from tdcheck._api import CheckCrashed, list_claims, run

#: ``tdcheck.list`` (named so here to keep the builtin ``list`` usable in this module)
list = list_claims

__all__ = [
    "CheckCrashed",
    "InternalError",
    "InvalidArgument",
    "NumericalTrouble",
    "TdcheckError",
    "Verdict",
    "list",
    "run",
]

_SUBMODULES = ("testing", "certify")


def __getattr__(name: str) -> Any:
    """Import :mod:`tdcheck.testing` and :mod:`tdcheck.certify` on first use (Hypothesis, python-flint)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"tdcheck.{name}")
    msg = f"module 'tdcheck' has no attribute {name!r}"
    raise AttributeError(msg)
