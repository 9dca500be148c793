"""Softmax algebra over symbolic index ranges: weights, Jacobians, squared norms, ALiBi sums.

Index ranges are objects (:class:`IndexRange`), so that every printed range of a paper, and
every reading of an ambiguous range, can be written down and evaluated as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class IndexRange:
    """The integers ``lo, lo+1, ..., hi`` (inclusive; bounds may contain symbols such as L)."""

    lo: sp.Expr
    hi: sp.Expr

    def size(self) -> sp.Expr:
        """Number of indices, ``hi - lo + 1``."""
        return sp.simplify(self.hi - self.lo + 1)

    def sum(self, term: Callable[[sp.Symbol], sp.Expr], index: sp.Symbol | None = None) -> sp.Sum:
        """Return the unevaluated ``Sum(term(s), (s, lo, hi))``."""
        s = index or sp.Dummy("s", integer=True)
        return sp.Sum(term(s), (s, self.lo, self.hi))

    def shifted(self, offset: sp.Expr) -> IndexRange:
        """The range ``lo+offset .. hi+offset``."""
        return IndexRange(self.lo + offset, self.hi + offset)

    def latex(self, index: str = "s") -> str:
        """Return the printed form ``index=lo}^{hi``, for sums and softmax subscripts."""
        return f"{index}={sp.latex(self.lo)}}}^{{{sp.latex(self.hi)}"


def softmax_weight(logit: Callable[[sp.Expr], sp.Expr], index_range: IndexRange, at: sp.Expr) -> sp.Expr:
    """Return ``sm((logit(nu))_{nu in range})_{nu = at}`` = exp(logit(at)) / Σ_nu exp(logit(nu))."""
    return sp.exp(logit(at)) / index_range.sum(lambda nu: sp.exp(logit(nu)))


def softmax_squared_norm(logit: Callable[[sp.Expr], sp.Expr], index_range: IndexRange) -> sp.Expr:
    """Return ``||sm((logit(nu))_{nu in range})||_2^2`` as a ratio of two sums."""
    numerator = index_range.sum(lambda nu: sp.exp(2 * logit(nu)))
    return numerator / index_range.sum(lambda nu: sp.exp(logit(nu))) ** 2


def softmax_jacobian(logits: list[sp.Expr], variable: sp.Symbol) -> list[sp.Expr]:
    """Return d sm(z(variable))_i / d variable for explicit logits: sm_i (z_i' - Σ_j sm_j z_j')."""
    weights = [sp.exp(z) / sp.Add(*[sp.exp(y) for y in logits]) for z in logits]
    slopes = [sp.diff(z, variable) for z in logits]
    mean_slope = sp.Add(*[w * d for w, d in zip(weights, slopes, strict=True)])
    return [w * (d - mean_slope) for w, d in zip(weights, slopes, strict=True)]


def alibi_logit(slope: sp.Expr, query: sp.Expr) -> Callable[[sp.Expr], sp.Expr]:
    """ALiBi logit of key position nu seen from ``query``: -slope * (query - nu)."""
    return lambda nu: -slope * (query - nu)
