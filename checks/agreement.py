"""The check kind "agreement with Monte-Carlo": a closed form against an estimate, in standard errors.

A value agrees with an estimate (mean, standard error from ``numerics.montecarlo``) when it lies
within ``k_se`` standard errors; 4 by default (a false alarm about once in 16 000 comparisons of a
correct formula). An exact enumeration has standard error 0 and agrees only with its own value.
The claims' Monte-Carlo cross-checks and the user's ``assert_agrees_with_montecarlo`` decide alike.
"""

from __future__ import annotations

import math
from typing import Any

K_SE = 4.0


def z_score(estimate, value: float) -> float:
    """(value − mean)/se; 0 or ±inf when the standard error is 0 (exact enumeration)."""
    if estimate.se > 0:
        return float((value - estimate.mean) / estimate.se)
    return 0.0 if value == estimate.mean else math.copysign(math.inf, value - estimate.mean)


def agrees(estimate, value: float, k_se: float = K_SE) -> bool:
    """True when ``value`` is within ``k_se`` standard errors of the estimate."""
    return bool(estimate.agrees_with(value, k_se))


def record(point: dict[str, Any], estimate, *, derived: float, printed: float | None = None,
           k_se: float = K_SE) -> dict[str, Any]:
    """One Monte-Carlo point of a claim: the estimate, both closed forms and whether each agrees."""
    out = {**point, "mc_mean": estimate.mean, "mc_se": estimate.se, "n": estimate.n}
    if printed is not None:
        out.update(printed=printed, z_printed=-z_score(estimate, printed),
                   agrees_with_printed=agrees(estimate, printed, k_se))
    out.update(derived=derived, z_derived=-z_score(estimate, derived), agrees_with_derived=agrees(estimate, derived, k_se))
    return out
