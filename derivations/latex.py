"""A LaTeX printer that writes each paper's symbols the way the paper does (w^⋆, α^⋆, σ_init …)."""

from __future__ import annotations

from collections.abc import Mapping

import re

import sympy as sp
from sympy.printing.latex import LatexPrinter, greek_letters_set


class PaperLatexPrinter(LatexPrinter):
    """SymPy's LaTeX printer with a paper's ``symbol_names`` (symbol name -> LaTeX)."""

    def __init__(self, symbol_names: Mapping[str, str] | None = None, **settings):
        super().__init__(settings)
        self.paper_symbols = symbol_names if symbol_names is not None else {}  # a mapping may know names by pattern

    def _print_Symbol(self, expr, style="plain"):
        if expr.name in self.paper_symbols:
            return self.paper_symbols[expr.name]
        return super()._print_Symbol(expr, style=style)

    _print_Dummy = _print_Symbol


def to_latex(expr: sp.Expr, symbol_names: Mapping[str, str] | None = None) -> str:
    """Return the LaTeX of ``expr`` with the paper's symbol names."""
    return PaperLatexPrinter(symbol_names).doprint(expr)


def standard_name(name: str) -> bool:
    """Whether SymPy's printer writes the symbol ``name`` as mathematics without help: a base of one letter or a
    Greek letter's name (``x``, ``sigma``, ``alpha2``), then subscripts (``w_1``, ``sigma_init``). Any other name
    (``hratio``, ``elapsed``) is an internal name: a paper's ``SYMBOL_NAMES`` must map it, or it would reach the
    LaTeX as a word."""
    match = re.fullmatch(r"([A-Za-z]+)(\d*)", name.split("_")[0])
    return bool(match) and (len(match.group(1)) == 1 or match.group(1).lower() in greek_letters_set)
