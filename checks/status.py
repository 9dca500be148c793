"""The status algebra: one set of verdict statuses, one rule to combine them, one rule for NaN.

Statuses (``Status``, a ``str`` enum, so ``Status.HOLDS == "holds"`` and JSON stays plain text):

holds
    The statement agrees with the computation.
fails
    A claim or inequality is contradicted (a counterexample, a drifting Θ-ratio).
differs
    A printed formula is not what its definition gives.
certified
    Proven on the whole region by interval arithmetic.
outside-regime
    The window or the hypotheses are empty: nothing to test.
inconclusive
    Not decidable here (the reason travels with the verdict).

Combination (:func:`combine`): a claim made of parts holds only when every part does, so the parts
combine as a conjunction with the precedence

    differs > fails > inconclusive > holds > certified > outside-regime,

read as: a printed display that is not its definition is the most specific finding, then a
contradicted part; one undecided part leaves the whole undecided; the conjunction of holds and
certified parts is ``holds``, of certified parts only ``certified``; parts outside their regime
tested nothing and do not weaken the others, and a claim all of whose parts are outside its regime
is ``outside-regime``. No parts at all is ``inconclusive`` (nothing was decided).

NaN (:func:`compare`): ±inf are values and are compared as such (a bound that overflows to +inf
is satisfied by every finite left side); NaN on either side leaves that point undecided. A
pointwise test fails when some decided point violates it, is ``inconclusive`` when no point
violates it but some could not be decided, and holds only when every point was decided and holds.

Readings: a part carries the reading (flag values) it was computed under; only parts of the
canonical reading decide (:func:`canonical_parts`), the others are reported beside the verdict.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping

import numpy as np


class Status(enum.StrEnum):
    """A verdict status (see the module docstring)."""

    HOLDS = "holds"
    FAILS = "fails"
    DIFFERS = "differs"
    CERTIFIED = "certified"
    OUTSIDE = "outside-regime"
    INCONCLUSIVE = "inconclusive"

    @property
    def refutes(self) -> bool:
        """True for ``fails`` and ``differs``: the paper is contradicted."""
        return self in (Status.FAILS, Status.DIFFERS)


STATUSES = tuple(s.value for s in Status)

#: conjunction precedence, strongest first (module docstring)
PRECEDENCE = (Status.DIFFERS, Status.FAILS, Status.INCONCLUSIVE, Status.HOLDS, Status.CERTIFIED, Status.OUTSIDE)


def status(value: str | Status) -> Status:
    """``value`` as a :class:`Status`; an unknown word is a bug in the caller."""
    from derivations.errors import InternalError

    try:
        return Status(value)
    except ValueError:
        raise InternalError(f"status {value!r} is not one of {STATUSES}; this is a bug") from None


def combine(statuses: Iterable[str | Status]) -> Status:
    """The status of a conjunction of parts (rule in the module docstring)."""
    present = {status(s) for s in statuses}
    if not present:
        return Status.INCONCLUSIVE
    return next(s for s in PRECEDENCE if s in present)


def from_bool(holds: bool | None) -> Status:
    """``holds``/``fails`` from one decided comparison; None (undecided, e.g. NaN) is ``inconclusive``."""
    if holds is None:
        return Status.INCONCLUSIVE
    return Status.HOLDS if holds else Status.FAILS


def compare(lhs, rhs, relation: str = "<=", *, rel_tol: float = 0.0,
            strict: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Pointwise ``lhs relation rhs`` with slack ``rel_tol·max(|lhs|, |rhs|)``, by the NaN rule.

    Returns (violated, undecided) boolean arrays: ``violated`` where both sides are numbers (±inf
    included) and the relation fails beyond the slack, ``undecided`` where either side is NaN.
    ``relation`` is ``<=``, ``<``, ``>=`` or ``>``; the strict forms are tested as their weak forms
    at the same slack (a computed value cannot resolve equality) unless ``strict`` asks that
    equality (within the slack) count as a violation.
    """
    from derivations.errors import InvalidArgument

    if relation not in ("<=", "<", ">=", ">"):
        raise InvalidArgument(f"relation={relation!r} is not one of <=, <, >=, >")
    a, b = np.broadcast_arrays(np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float))
    undecided = np.isnan(a) | np.isnan(b)
    with np.errstate(invalid="ignore", over="ignore"):
        sign = 1.0 if relation in ("<=", "<") else -1.0
        same_inf = np.isinf(a) & (a == b)
        excess = np.where(same_inf, 0.0, sign * (a - b))
        scale = np.where(np.isfinite(a) & np.isfinite(b), np.maximum(np.abs(a), np.abs(b)), 0.0)
        violated = ~undecided & ((excess >= -rel_tol * scale) if strict else (excess > rel_tol * scale))
    return violated, undecided


def pointwise_status(violated: np.ndarray, undecided: np.ndarray) -> Status:
    """The status of a pointwise test from :func:`compare` (NaN rule; empty → ``outside-regime``)."""
    if violated.size == 0:
        return Status.OUTSIDE
    if violated.any():
        return Status.FAILS
    return Status.INCONCLUSIVE if undecided.any() else Status.HOLDS


def canonical_parts(parts: Iterable[Mapping], canonical: Mapping[str, str]) -> list[Mapping]:
    """The parts whose ``reading`` (a mapping of flag → value, may be absent) is the canonical one."""
    return [p for p in parts if all(canonical.get(k, v) == v for k, v in (p.get("reading") or {}).items())]
