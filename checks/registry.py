"""The registry of claims, and selectors (paper prefix, id or glob) over it."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable

from checks.claim import Claim, Context, Outcome
from checks.papers import PAPERS
from checks.records import Record
from derivations.errors import InvalidArgument, close_matches

_REGISTRY: dict[str, Claim] = {}
_RECORDS: dict[str, Record] = {}


def _check_new(kind: str, item_id: str, paper: str) -> None:
    """Refuse an id already taken (by a claim or a record) or not prefixed by its known paper."""
    if item_id in _REGISTRY or item_id in _RECORDS:
        raise InvalidArgument(f"{kind} id {item_id!r} is registered twice")
    if paper not in PAPERS or not item_id.startswith(paper + "."):
        raise InvalidArgument(f"{kind} id {item_id!r} of paper {paper!r}: the paper must be one of "
                              f"{', '.join(PAPERS)} (checks.papers) and the id must start with its prefix")


def register(claim: Claim) -> Claim:
    """Add ``claim`` to the registry: the one way a claim enters it (ids unique, prefixed by a known paper)."""
    _check_new("claim", claim.id, claim.paper)
    _REGISTRY[claim.id] = claim
    return claim


def register_record(record: Record) -> Record:
    """Add an option or parameter-set record (ids unique across claims and records, prefixed by a paper)."""
    _check_new("record", record.id, record.paper)
    _RECORDS[record.id] = record
    return record


def _matches(cid: str, selector: str) -> bool:
    return fnmatch.fnmatchcase(cid, selector) or cid.startswith(selector + ".") or cid == selector


def select_records(selectors: Iterable[str]) -> list[Record]:
    """The records matching any selector (no error when none does), in registration order."""
    load_all()
    selectors = list(selectors) or ["*"]
    return [r for rid, r in _RECORDS.items() if any(_matches(rid, s) for s in selectors)]


def claim(claim_id: str, *, paper: str, label: str, kind: str, **fields) -> Callable:
    """Register the decorated ``check(ctx) -> Outcome`` as a claim; its docstring states the claim."""

    def decorate(check: Callable[[Context], Outcome]) -> Callable[[Context], Outcome]:
        register(Claim(claim_id, paper, label, kind, check, doc=(check.__doc__ or "").strip(), **fields))
        return check

    return decorate


def load_all() -> dict[str, Claim]:
    """Import every paper's checks module and return the registry."""
    for paper in PAPERS.values():
        paper.load()
    return _REGISTRY


def select(selectors: Iterable[str]) -> list[Claim]:
    """Return the claims matching any selector, in registration order.

    A selector is a paper prefix (``ih``), an exact id (``ih.cf.M``), a glob (``ih.cf.*``)
    or an id prefix ending in a dot-free stem (``ih.cf`` selects ``ih.cf.*``).
    """
    registry = load_all()
    selectors = list(selectors) or ["*"]
    chosen: dict[str, Claim] = {}
    for selector in selectors:
        matches = [c for cid, c in registry.items() if _matches(cid, selector)]
        if not matches and any(_matches(rid, selector) for rid in _RECORDS):
            continue  # a record (an option, a parameter set): selected by select_records, not run
        if not matches:
            near = close_matches(selector, registry, n=6)
            hint = f"; close matches: {', '.join(near)}" if near else f"; papers: {', '.join(PAPERS)}"
            raise InvalidArgument(f"selector {selector!r} matches no claim{hint}")
        for c in matches:
            chosen.setdefault(c.id, c)
    return [c for cid, c in registry.items() if cid in chosen]
