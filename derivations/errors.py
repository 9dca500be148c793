"""The one exception tree of tdcheck.

Every error a user can provoke derives from :class:`TdcheckError`. Messages read
``name=value``, why it is wrong, and how to fix it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TdcheckError(Exception):
    """Base class of every error raised by tdcheck on purpose."""


class InvalidArgument(TdcheckError, ValueError):
    """A parameter is outside its domain, malformed or unknown."""


class NumericalTrouble(TdcheckError, ArithmeticError):
    """NaN, overflow, stiffness or an infinite variance met during a computation."""


class InternalError(TdcheckError, RuntimeError):
    """A condition that should be impossible: this is a bug in tdcheck."""


def close_matches(name: str, choices: Iterable[str], n: int = 5) -> list[str]:
    """Return the choices closest to ``name`` (for 'did you mean' messages)."""
    return difflib.get_close_matches(name, list(choices), n=n, cutoff=0.4)


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> InvalidArgument:
    """Build the error for an unknown ``kind`` called ``name``, listing close matches."""
    choices = sorted(choices)
    near = close_matches(name, choices)
    hint = f"did you mean {', '.join(near)}?" if near else f"valid choices: {', '.join(choices[:20])}"
    return InvalidArgument(f"unknown {kind} {name!r}; {hint}")
