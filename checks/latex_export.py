"""``tdcheck latex``: a LaTeX document with, per formula, the label, the printed and derived forms and their difference."""

from __future__ import annotations

import sympy as sp

from checks.claim import Claim
from checks.kinds import ItemCheck
from derivations.core import Formula, simplified
from derivations.latex import to_latex

PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage[a4paper,margin=2cm]{geometry}
\usepackage{amsmath,amssymb}
\usepackage[T1]{fontenc}
\allowdisplaybreaks
\setlength{\parindent}{0pt}
\title{%s}
\author{tdcheck}
\date{}
\begin{document}
\maketitle
Each entry gives the paper's label, the formula as printed, the formula derived by tdcheck from its
definition, and the difference (printed $-$ derived), simplified where SymPy manages within a time limit.
Status: \textbf{equal} (exact or to 30 digits at sampled points) or \textbf{differs} (with a counterexample).
"""


def _symbol_names(claim: Claim) -> dict[str, str]:
    if claim.paper == "ih":
        from derivations.induction_head.symbols import SYMBOL_NAMES

        return SYMBOL_NAMES
    return {}


def _math(expr: sp.Expr, names: dict[str, str]) -> str:
    text = to_latex(expr, names)
    return text if len(text) < 4000 else r"\text{(expression too long to print: %d characters)}" % len(text)


def _escape(text: str) -> str:
    for char, replacement in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("&", r"\&"), ("%", r"\%"),
                              ("#", r"\#"), ("{", r"\{"), ("}", r"\}"), ("^", r"\^{}"), ("$", r"\$")):
        text = text.replace(char, replacement)
    return _unicode_to_latex(text)


def _unicode_to_latex(text: str) -> str:
    table = {"α": r"$\alpha$", "β": r"$\beta$", "γ": r"$\gamma$", "ξ": r"$\xi$", "φ": r"$\phi$", "ψ": r"$\psi$",
             "π": r"$\pi$", "Σ": r"$\Sigma$", "σ": r"$\sigma$", "∂": r"$\partial$", "∇": r"$\nabla$",
             "≤": r"$\le$", "≥": r"$\ge$", "²": r"$^2$", "³": r"$^3$", "⁴": r"$^4$", "√": r"$\surd$",
             "°": r"$^\circ$", "∞": r"$\infty$", "–": "--", "—": "---", "→": r"$\to$", "…": r"\dots{}",
             "'": "'", "½": r"$\frac12$", "⋆": r"$\star$", "*": r"$^*$", "θ": r"$\theta$", "∈": r"$\in$",
             "·": r"$\cdot$", "−": "-", "≠": r"$\ne$", "τ": r"$\tau$", "ν": r"$\nu$", "Θ": r"$\Theta$"}
    return "".join(table.get(c, c if ord(c) < 128 else "?") for c in text)


def formula_section(formula: Formula, names: dict[str, str], seconds: float = 0.5) -> str:
    """LaTeX of one formula: label, printed, derived, difference and status."""
    agreement = formula.verify(n_points=6, symbolic_seconds=0.05)
    printed = formula.latex or _math(formula.stated, names)
    difference = simplified(formula.stated - formula.derived, seconds)
    status = "equal" if agreement.equal else "differs"
    lines = [
        r"\subsection*{\texttt{%s} --- %s}" % (_escape(formula.id), _escape(formula.label)),
        _escape(formula.description) + (r" \emph{Reading: %s.}" % _escape(
            ", ".join(f"{k}={v}" for k, v in formula.reading.items())) if formula.reading else ""),
        r"\begin{align*}",
        r"\text{printed:}\quad & %s \\" % printed,
        r"\text{as printed, in SymPy:}\quad & %s \\" % _math(formula.stated, names),
        r"\text{derived:}\quad & %s \\" % _math(formula.derived, names),
        r"\text{printed} - \text{derived}:\quad & %s" % _math(difference, names),
        r"\end{align*}",
        r"\textbf{%s}" % status,
    ]
    if not agreement.equal:
        point = ", ".join(f"{k}={v}" for k, v in agreement.point.items())
        lines.append(_escape(f" at {point}: printed {agreement.stated_value}, derived {agreement.derived_value}"
                             + (f", ratio printed/derived = {agreement.ratio}" if agreement.ratio else "")))
    return "\n".join(lines) + "\n"


def document(claims: list[Claim]) -> str:
    """The whole LaTeX document for the formula items among ``claims``."""
    papers = sorted({c.paper for c in claims})
    parts = [PREAMBLE % _escape("tdcheck: printed versus derived closed forms (" + ", ".join(papers) + ")")]
    for claim in claims:
        if not isinstance(claim.check, ItemCheck):
            continue
        item = claim.check.item
        names = _symbol_names(claim)
        parts.append(r"\section*{\texttt{%s}: %s}" % (_escape(claim.id), _escape(f"{item.title} ({claim.label};"
                                                                                     f" {claim.label_alt})")))
        for formula in item.formulas:
            parts.append(formula_section(formula, names))
        for note in item.notes:
            parts.append(r"\emph{Note:} %s" % _escape(note) + "\n")
    parts.append(r"\end{document}" + "\n")
    return "\n".join(parts)
