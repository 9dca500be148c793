"""The check kind "array identity": printed and derived displays as float64 arrays, every entry compared.

A display maps a *case* (a random instance, a trajectory, a run) to an array as printed, ``printed(case)``,
and to the same quantity from the definitions, ``derived(case)``. The two arrays must have the same shape
(R2: a shape mismatch is reported with both shapes and counts as a difference); then every entry — every
value of every free index — is compared:

    r = max over entries |p − d| / s,   s = max(max |d|, ``floor``)   (the array's scale, per case),

and the display agrees on the case when r <= ``rtol`` (R8's 1e-12 for float64 identities; a recursion's
accumulated rounding may need more, stated by the item). The worst entry (case label, index, both values)
is the evidence. An item ``differs`` when a display of the canonical reading differs on some case, is
``inconclusive`` when a canonical array holds NaN or ±inf (reported, never agreement) or ``extra`` (a second
method) disagrees, and ``holds`` otherwise; the other readings are reported beside the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.numeric_identity import DisplayItems


@dataclass(frozen=True)
class ArrayDisplay:
    """One display: ``printed(case)`` against ``derived(case)``, over the cases of ``family``."""

    name: str
    label: str
    printed: Callable[[Any], Any]
    derived: Callable[[Any], Any]
    family: str
    reading: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    rtol: float = 1e-12
    floor: float = 1e-300


def compare_arrays(display: ArrayDisplay, cases: list[Any]) -> dict[str, Any]:
    """The record of one display over ``cases``: status (equal | differs | non-finite), worst entry, ratio."""
    worst: dict[str, Any] | None = None
    status = "equal"
    entries = 0
    for case in cases:
        p = np.asarray(display.printed(case), dtype=float)
        d = np.asarray(display.derived(case), dtype=float)
        label = getattr(case, "label", repr(case)[:60])
        if p.shape != d.shape:
            return {"status": "differs", "reason": f"shapes differ: printed {p.shape}, derived {d.shape}",
                    "case": label, "entries": entries}
        entries += p.size
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(d))):
            status = "non-finite"
            worst = {"case": label, "printed_finite": bool(np.all(np.isfinite(p))),
                     "derived_finite": bool(np.all(np.isfinite(d)))}
            continue
        scale = max(float(np.max(np.abs(d))) if d.size else 0.0, display.floor)
        gap = np.abs(p - d) / scale
        index = np.unravel_index(int(np.argmax(gap)), gap.shape) if gap.size else ()
        r = float(gap[index]) if gap.size else 0.0
        if worst is None or ("relative" in worst and r > worst["relative"]):
            worst = {"case": label, "index": [int(i) for i in index], "relative": r,
                     "printed": float(p[index]) if p.size else None, "derived": float(d[index]) if d.size else None,
                     "scale": scale}
        if r > display.rtol and status != "non-finite":
            status = "differs"
    return {"status": status, "entries": entries, "cases": len(cases), "rtol": display.rtol, "worst": worst}


@dataclass
class ArrayIdentityCheck(DisplayItems):
    """Check of an item whose displays are array identities (module docstring)."""

    displays: Callable[[], list[ArrayDisplay]]
    families: Callable[[Any], Mapping[str, list[Any]]]
    default_readings: Mapping[str, str] = field(default_factory=dict)
    extra: Callable[[Any, Any], dict[str, Any]] | None = None
    notes: tuple[str, ...] = ()

    def _compare(self, display: ArrayDisplay, cases: list) -> dict[str, Any]:
        return compare_arrays(display, cases)

    def _head(self, evidence, n_canonical: int, differing: list[str], cases) -> str:
        n_entries = sum(r.get("entries", 0) for r in evidence["formulas"].values())
        return (f"{n_canonical - len(differing)}/{n_canonical} displays equal their derivation (canonical reading); "
                f"{n_entries} entries compared")
