"""Registered records: a paper's setting options and named parameter sets (spec R17 (g) of the ss paper).

A :class:`Record` is listed beside the claims and selected by id like one, but it is not a check: a run
that selects it evaluates nothing and returns the record itself, with no outcome. A configuration may
carry ``derive`` — the setting quantities computed from its content (sizes, supports, a spectrum and the
margins of the hypotheses) — which a run computes and shows.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

KINDS = ("option", "configuration")


@dataclass(frozen=True)
class Record:
    """An option (its values, the canonical one first, and the reason it exists) or a parameter set."""

    id: str
    paper: str
    kind: str
    label: str
    content: Mapping[str, Any] = field(default_factory=dict)
    doc: str = ""
    derive: Callable[[], Mapping[str, Any]] | None = None

    def __post_init__(self):
        from derivations.errors import InternalError

        if self.kind not in KINDS:
            raise InternalError(f"record {self.id}: kind {self.kind!r} is not one of {KINDS}; this is a bug")

    def describe(self) -> dict[str, Any]:
        """The listing record (``tdcheck list --json``)."""
        from checks.claim import _jsonable

        return {"id": self.id, "paper": self.paper, "kind": self.kind, "label": self.label,
                "content": _jsonable(dict(self.content)), "doc": self.doc}

    def evaluate(self) -> dict[str, Any]:
        """The record as a run returns it: its description and, for a configuration, the derived quantities."""
        from checks.claim import _jsonable

        out = self.describe()
        if self.derive is not None:
            out["derived"] = _jsonable(dict(self.derive()))
        return out
