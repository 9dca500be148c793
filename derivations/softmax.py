"""Softmax algebra over symbolic index ranges: weights, Jacobians, squared norms, ALiBi sums.

Index ranges are :class:`derivations.indices.IndexRange` objects, so that every printed range of
a paper, and every reading of an ambiguous range, can be written down and evaluated as such.
"""

from __future__ import annotations

from collections.abc import Callable
import sympy as sp

from derivations.indices import IndexRange


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
