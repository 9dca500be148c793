"""Index ranges as objects: every printed summation or softmax range, and every reading of one.

A range ``lo..hi`` is inclusive; its bounds are integers or expressions in the sequence length
(``L - 1``), so that the same object serves symbolic sums, expectations over index coincidences
and the LaTeX of a printed range.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from derivations.errors import InvalidArgument


@dataclass(frozen=True)
class IndexRange:
    """The inclusive index range lo..hi; bounds are integers or affine in L (e.g. ``L - 1``)."""

    lo: sp.Expr
    hi: sp.Expr

    def __post_init__(self):
        for name in ("lo", "hi"):
            try:
                value = sp.sympify(getattr(self, name))
            except (sp.SympifyError, TypeError) as err:
                msg = f"IndexRange {name}={getattr(self, name)!r} is not a SymPy expression"
                raise InvalidArgument(msg) from err
            object.__setattr__(self, name, value)

    def size(self) -> sp.Expr:
        """Number of indices, hi - lo + 1 (meaningful where it is >= 0)."""
        return sp.expand(self.hi - self.lo + 1)

    def contains(self, index) -> sp.Boolean:
        """lo <= index <= hi, as a SymPy Boolean (True/False when decidable)."""
        index = sp.sympify(index)
        return sp.And(sp.Le(self.lo, index), sp.Le(index, self.hi))

    def sum(self, term: Callable[[sp.Symbol], sp.Expr], index: sp.Symbol | None = None) -> sp.Sum:
        """Return the unevaluated ``Sum(term(s), (s, lo, hi))``."""
        s = index or sp.Dummy("s", integer=True)
        return sp.Sum(term(s), (s, self.lo, self.hi))

    def shifted(self, offset: sp.Expr) -> IndexRange:
        """The range ``lo+offset .. hi+offset``."""
        return IndexRange(self.lo + offset, self.hi + offset)

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"
