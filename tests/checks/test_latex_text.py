"""Plain text in LaTeX exports: every non-ASCII character of every registered statement and label is mapped."""

import re

import pytest

from checks.latex_export import _unicode_to_latex
from checks.registry import load_all


def test_every_character_of_every_statement_is_mapped():
    unmapped = {}
    for claim in load_all().values():
        for text in (claim.statement or "", claim.label or ""):
            latex = _unicode_to_latex(text)
            for code in re.findall(r"U\+([0-9A-F]{4,5})", latex):
                unmapped[chr(int(code, 16))] = claim.id
    assert not unmapped, f"characters without a LaTeX form: {unmapped}"


@pytest.mark.parametrize("text, latex", [
    ("ρ₀⁴", r"$\rho$$_{0}$$^{4}$"),
    ("fₙᵀ", r"f$_{n}$$^{T}$"),
    ("x̃", r"$\tilde{x}$"),
    ("ż", r"$\dot{z}$"),
    ("Γ ≈ ¼", r"$\Gamma$ $\approx$ $\frac14$"),
    ("a−b", "a-b"),
])
def test_known_characters(text, latex):
    assert _unicode_to_latex(text) == latex


def test_an_unknown_character_is_shown_by_its_code_point():
    assert _unicode_to_latex("☃") == r"\texttt{U+2603}"
