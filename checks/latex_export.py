"""``tdcheck latex``: a LaTeX document with the errata (every printed form whose verdict is ``differs`` or
``fails``, beside the derived one, with its evidence), the hidden constants of the Θ/O/Ω statements as
fitted in the limit, then, per formula, the label, the printed and derived forms and their difference."""

from __future__ import annotations

import re
import unicodedata

import math
from collections.abc import Mapping
from typing import Any

import sympy as sp

from checks.claim import Claim
from checks.kinds import ItemCheck
from checks.papers import paper
from checks.report import (
    CONFIRMED_BY, MAX_LATEX, agreement_line, correction_rows, correction_text, formula_forms, statement_parts,
)
from derivations.core import Formula, simplified
from derivations.latex import standard_name, to_latex

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


ERRATA_PREAMBLE = PREAMBLE.split(r"\maketitle")[0] + r"""\maketitle
One entry per erratum: the paper's label, the form as printed, the smallest edit of it that makes it equal to
the form tdcheck derives from the definitions (boxed; verified by the identity check), or the derived form
when no small edit exists, one line of evidence, and the command that replays the verdict.
"""


def _math(expr: sp.Expr, names: dict[str, str]) -> str:
    text = to_latex(expr, names)
    return text if len(text) < 4000 else r"\text{(expression too long to print: %d characters)}" % len(text)


def _evidence(text: str, names: Mapping[str, str]) -> str:
    """A line of evidence as LaTeX text, each ``name = value`` of a symbol in the paper's notation (the name
    mapped by the paper, or printed by SymPy when it is a standard name); other text escaped."""
    pieces = re.split(r"\b([A-Za-z][A-Za-z0-9_]*)(?= = )", text)
    out = []
    for index, piece in enumerate(pieces):
        if index % 2 and (piece in names or standard_name(piece)):
            out.append("$%s$" % to_latex(sp.Symbol(piece), names))
        else:
            out.append(_escape(piece))
    return "".join(out)


def _escape(text: str) -> str:
    for char, replacement in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("&", r"\&"), ("%", r"\%"),
                              ("#", r"\#"), ("{", r"\{"), ("}", r"\}"), ("^", r"\^{}"), ("$", r"\$"),
                              ("--", "-{}-")):  # a command line's -- is not an en dash
        text = text.replace(char, replacement)
    return _unicode_to_latex(text)


_SYMBOLS = {"∂": r"\partial", "∇": r"\nabla", "≤": r"\le", "≥": r"\ge", "√": r"\surd", "°": r"^\circ",
            "∞": r"\infty", "→": r"\to", "½": r"\frac12", "¼": r"\frac14", "¾": r"\frac34",
            "⅓": r"\frac13", "⅔": r"\frac23", "⅙": r"\frac16", "⅛": r"\frac18", "⋆": r"\star",
            "*": r"^*", "∈": r"\in", "·": r"\cdot", "≠": r"\ne", "≈": r"\approx", "≪": r"\ll", "≫": r"\gg",
            "∘": r"\circ", "×": r"\times", "±": r"\pm", "∓": r"\mp", "‖": r"\|", "⌊": r"\lfloor",
            "⌋": r"\rfloor", "⌈": r"\lceil", "⌉": r"\rceil", "∑": r"\sum", "∏": r"\prod", "∫": r"\int",
            "ℓ": r"\ell", "ℝ": r"\mathbb{R}", "ℙ": r"\mathbb{P}", "𝔼": r"\mathbb{E}", "𝟏": r"\mathbf{1}",
            "⊤": r"\top", "∼": r"\sim", "∝": r"\propto", "∀": r"\forall", "∃": r"\exists", "∩": r"\cap",
            "∪": r"\cup", "⊂": r"\subset", "⊆": r"\subseteq", "⇔": r"\Leftrightarrow", "⇒": r"\Rightarrow",
            "∅": r"\emptyset", "′": r"'", "″": r"''", "ᵀ": r"^{T}", "𝒰": r"\mathcal{U}", "𝒩": r"\mathcal{N}",
            "ε": r"\varepsilon", "⟨": r"\langle", "⟩": r"\rangle",
            "⋯": r"\cdots", "≡": r"\equiv", "←": r"\leftarrow", "𝕁": r"\mathbb{J}", "𝕀": r"\mathbb{I}",
            "ℕ": r"\mathbb{N}", "≲": r"\lesssim", "≳": r"\gtrsim", "≍": r"\asymp", "†": r"^\dagger",
            "⊥": r"\perp", "↦": r"\mapsto", "⟺": r"\iff", "⊗": r"\otimes", "↔": r"\leftrightarrow"}
_TEXT = {"§": r"\S{}", "–": "--", "—": "---", "…": r"\dots{}", "−": "-", "'": "'", "“": "``", "”": "''", "’": "'"}
_COMBINING = {"\u0307": r"\dot", "\u0308": r"\ddot", "\u0302": r"\hat", "\u0303": r"\tilde", "\u0304": r"\bar"}
_GREEK_CAPITALS = {"Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega"}


def _unicode_math(c: str) -> str | None:
    """The LaTeX math of one non-ASCII character: a symbol, a Greek letter, a sub- or superscript; None if unknown."""
    if c in _SYMBOLS:
        return _SYMBOLS[c]
    parts = unicodedata.normalize("NFD", c)
    if len(parts) == 2 and parts[0].isascii() and parts[1] in _COMBINING:
        return f"{_COMBINING[parts[1]]}{{{parts[0]}}}"
    name = unicodedata.name(c, "")
    for prefix, wrap in (("SUBSCRIPT ", "_{%s}"), ("SUPERSCRIPT ", "^{%s}"), ("MODIFIER LETTER SMALL ", "^{%s}"),
                         ("LATIN SUBSCRIPT SMALL LETTER ", "_{%s}")):
        if name.startswith(prefix):
            rest = name[len(prefix):]
            digits = {"ZERO": "0", "ONE": "1", "TWO": "2", "THREE": "3", "FOUR": "4", "FIVE": "5", "SIX": "6",
                      "SEVEN": "7", "EIGHT": "8", "NINE": "9", "MINUS": "-", "PLUS SIGN": "+", "EQUALS SIGN": "=",
                      "LEFT PARENTHESIS": "(", "RIGHT PARENTHESIS": ")"}
            if rest in digits:
                return wrap % digits[rest]
            if rest.startswith("LATIN SMALL LETTER ") and len(rest) == 20:
                return wrap % rest[-1].lower()
            if len(rest) == 1:
                return wrap % rest.lower()
    for case in ("SMALL", "CAPITAL"):
        prefix = f"GREEK {case} LETTER "
        if name.startswith(prefix):
            letter = name[len(prefix):].replace("LAMDA", "LAMBDA").replace("FINAL ", "").lower()
            if case == "CAPITAL":
                letter = letter.capitalize()
                if letter not in _GREEK_CAPITALS:
                    return unicodedata.lookup(f"LATIN CAPITAL LETTER {letter[0].upper()}") if letter else None
            return "o" if letter == "omicron" else "\\" + letter
    return None


def _unicode_to_latex(text: str) -> str:
    """Plain text with its non-ASCII characters in LaTeX (math mode for symbols); an unknown one as its code point."""
    out = []
    for c in text:
        if c in _COMBINING and out and len(out[-1]) == 1 and out[-1].isalpha():
            out[-1] = f"${_COMBINING[c]}{{{out[-1]}}}$"  # x̃: x then a combining tilde
        elif ord(c) < 128 and c != "*":
            out.append(c)
        elif c in _TEXT:
            out.append(_TEXT[c])
        else:
            math_text = _unicode_math(c)
            out.append(f"${math_text}$" if math_text is not None else r"\texttt{U+%04X}" % ord(c))
    return "".join(out)


def formula_section(
    formula: Formula, names: dict[str, str], seconds: float = 0.5,
    record: Mapping[str, Any] | None = None, forms: Mapping[str, str] | None = None,
) -> str:
    """LaTeX of one formula: label, printed, derived, difference and status.

    ``record`` is the display's entry in its verdict's evidence (``evidence["formulas"][id]``) and
    ``forms`` its LaTeX forms (``checks.report.formula_forms``); without them the formula is
    verified here and its difference simplified within ``seconds``.
    """
    if record is None:
        record = formula.verify(n_points=6, symbolic_seconds=0.05).to_dict()
    if not forms:
        forms = {"printed": formula.latex, "stated": _math(formula.stated, names),
                 "derived": _math(formula.derived, names),
                 "difference": _math(simplified(formula.stated - formula.derived, seconds), names)}
    equal = record.get("status") in ("exact", "numeric")
    difference = forms.get("difference") or r"\text{(not printed; see the JSON record)}"
    if record.get("status") == "numeric":
        difference += r"\quad\text{(numerically: to 30 digits at every sampled point)}"
    lines = [
        r"\subsection*{\texttt{%s} --- %s}" % (_escape(formula.id), _escape(formula.label)),
        _escape(formula.description) + (r" \emph{Reading: %s.}" % _escape(
            ", ".join(f"{k}={v}" for k, v in formula.reading.items())) if formula.reading else ""),
        r"\begin{align*}",
        r"\text{printed:}\quad & %s \\" % (paper_math(forms.get("printed", "")) or forms["stated"]),
        r"\text{as printed, in SymPy:}\quad & %s \\" % forms["stated"],
        r"\text{derived:}\quad & %s \\" % forms["derived"],
        r"\text{printed} - \text{derived}:\quad & %s" % difference,
        r"\end{align*}",
        r"\textbf{%s}" % ("equal" if equal else "differs"),
    ]
    if not equal:
        lines.append(_evidence(" " + agreement_line(record), names))
    if record.get("correction"):
        lines.append(r"\\ \emph{Minimal correction:} " + _correction_line(record["correction"]))
        rows = _correction_rows(record)
        if rows:
            lines += [r"\begin{align*}", " \\\\\n".join(rows), r"\end{align*}"]
    return "\n".join(lines) + "\n"


def document(
    claims: list[Claim], verdicts: Mapping[str, Mapping[str, Any]] | None = None,
    forms: Mapping[str, Mapping] | None = None, *, errata_only: bool = False, fragment: bool = False,
) -> str:
    """The whole LaTeX document for ``claims``: the errata, then every closed-form display.

    ``verdicts`` (claim id -> ``Verdict.to_dict()`` record) decide the errata and give each
    display's comparison; ``forms`` (claim id -> ``checks.report.formula_forms``) its LaTeX,
    computed here from the item when absent. Without a verdict a closed form is verified here.
    ``errata_only`` keeps only the errata (a short sheet); ``fragment`` leaves out the preamble and
    ``\\end{document}``, for pasting into a paper's source (which needs amsmath and amssymb).
    """
    verdicts, forms = verdicts or {}, dict(forms or {})
    papers = ", ".join(sorted({c.paper for c in claims}))
    if fragment:
        parts = ["%% tdcheck LaTeX fragment (%s); needs \\usepackage{amsmath,amssymb}\n" % papers]
    elif errata_only:
        parts = [ERRATA_PREAMBLE % _escape(f"tdcheck: errata ({papers})")]
    else:
        parts = [PREAMBLE % _escape(f"tdcheck: printed versus derived closed forms ({papers})")]
    for claim in claims:
        if isinstance(claim.check, ItemCheck) and claim.id in verdicts and claim.id not in forms:
            forms[claim.id] = formula_forms(claim, verdicts[claim.id].get("evidence", {}))
    if verdicts:
        parts.append(errata_section(claims, verdicts, forms))
        constants = constants_section(claims, verdicts)
        if constants and not errata_only:
            parts.append(constants)
    for claim in [] if errata_only else claims:
        if not isinstance(claim.check, ItemCheck):
            continue
        item = claim.check.item
        names = paper(claim.paper).symbol_names()
        records = verdicts.get(claim.id, {}).get("evidence", {}).get("formulas", {})
        claim_forms = forms.get(claim.id, {}).get("formulas", {})
        parts.append(r"\section*{\texttt{%s}: %s}" % (_escape(claim.id), _escape(f"{item.title} ({claim.label};"
                                                                                     f" {claim.label_alt})")))
        for formula in item.formulas:
            parts.append(formula_section(formula, names, record=records.get(formula.id),
                                         forms=claim_forms.get(formula.id)))
        for note in item.notes:
            parts.append(r"\emph{Note:} %s" % _escape(note) + "\n")
    if not fragment:
        parts.append(r"\end{document}" + "\n")
    return "\n".join(parts)


def errata_section(
    claims: list[Claim], verdicts: Mapping[str, Mapping[str, Any]], forms: Mapping[str, Mapping]
) -> str:
    """The errata: per claim whose verdict is ``differs`` or ``fails``, each printed form that is wrong beside
    the derived (or corrected) one, and the evidence in one line.

    For a closed-form item these are its displays that differ in the canonical reading and its
    inequalities that fail; for another claim, its statement beside ``evidence["corrected"]``
    (LaTeX, when the check gives one) and the verdict's summary.
    """
    lines = [r"\section*{Errata}",
             "Each entry: the form as printed, the form derived by tdcheck from the definitions (or the "
             "corrected statement), and the evidence that decided the verdict.", r"\begin{itemize}"]
    count = 0
    for claim in claims:
        record = verdicts.get(claim.id)
        if not record or record.get("status") not in ("differs", "fails"):
            continue
        evidence = record.get("evidence", {})
        replay = record.get("replay", "")
        labels = "; ".join(p for p in (claim.label, claim.label_alt) if p)
        head = r"\item \texttt{%s} (%s), \textbf{%s}" % (_escape(claim.id), _escape(labels), record["status"])
        entries = []
        if isinstance(claim.check, ItemCheck):
            entries = _item_errata(claim, evidence, forms.get(claim.id, {}))
        if not entries:
            corrected = evidence.get("corrected") if isinstance(evidence.get("corrected"), str) else ""
            entries = [("text", _statement_latex(claim.statement), corrected, record.get("summary", ""), None)]
        for kind, printed, derived, line, correction in entries:
            lines.append(head)
            rows = []
            if kind == "math":
                rows.append(r"\text{printed:}\quad & %s" % _bounded(printed))
            else:
                lines.append(r"\\ printed: " + (printed or r"\emph{(no statement recorded)}"))
            corrected = _correction_rows({"correction": correction})
            if corrected:
                rows += corrected
            elif derived:
                name = "derived" if kind == "math" else "corrected"
                rows.append(r"\text{%s:}\quad & %s" % (name, _bounded(derived)))
            if rows:
                lines += [r"\begin{align*}", " \\\\\n".join(rows), r"\end{align*}"]
            if correction:
                lines.append(r"\emph{Minimal correction:} " + _correction_line(correction) + r"\\")
            lines.append((r"\\ " if not rows else "") + r"\emph{Evidence:} "
                         + _evidence(_short_line(line), paper(claim.paper).symbol_names()))
            if replay:
                lines.append(r"\\ \emph{Replay:} \texttt{%s}" % _escape(replay))
            count += 1
    if not count:
        lines.append(r"\item None: no selected verdict is \emph{differs} or \emph{fails}.")
    lines.append(r"\end{itemize}")
    return "\n".join(lines) + "\n"


FORM_LATEX = {"Theta": r"\Theta", "O": r"\mathcal O", "Omega": r"\Omega", "Theta~": r"\tilde\Theta",
              "O~": r"\tilde{\mathcal O}", "Omega~": r"\tilde\Omega"}


def limit_decisions(evidence: Any, path: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """Every limit decision (``checks.asymptotics.AsymptoticDecision.to_dict``) inside a verdict's evidence,
    with the path of keys that leads to it (which part of the claim it decides)."""
    found: list[tuple[str, Mapping[str, Any]]] = []
    if isinstance(evidence, Mapping):
        if {"form", "decision", "constant_band", "slices"} <= set(evidence):
            return [(path, evidence)]
        for key, value in evidence.items():
            found += limit_decisions(value, f"{path}.{key}" if path else str(key))
    elif isinstance(evidence, list):
        for k, value in enumerate(evidence[:200]):
            found += limit_decisions(value, f"{path}[{k}]")
    return found


def constants_section(claims: list[Claim], verdicts: Mapping[str, Mapping[str, Any]]) -> str:
    """The hidden constants of the Θ/O/Ω statements, fitted in the limit: per claim, its statement as
    printed and, per limit decision, the form, the decision and the band of the fitted limits r∞ of the
    ratio observed/rate over the slices where it settles (with their intervals)."""
    lines = [r"\section*{Hidden constants, fitted in the limit}",
             "Each entry: the statement as printed; for each of its asymptotic statements the decision and the "
             r"fitted constant: the limit $r_\infty$ of observed/rate along every asymptotic variable, as the "
             "smallest lower and the largest upper end of its intervals over the slices where it settles.",
             r"\begin{itemize}"]
    count = 0
    for claim in claims:
        record = verdicts.get(claim.id)
        if not record:
            continue
        decisions = limit_decisions(record.get("evidence", {}))
        if not decisions:
            continue
        lines.append(r"\item \texttt{%s} (%s), \textbf{%s}: %s" % (
            _escape(claim.id), _escape("; ".join(p for p in (claim.label, claim.label_alt) if p)),
            record.get("status", ""), _statement_latex(claim.statement) if claim.statement else ""))
        lines.append(r"\begin{itemize}")
        for path, d in decisions[:12]:
            lo, hi = d.get("constant_band", [None, None])
            settled = sum(1 for sl in d.get("slices", []) if sl.get("behaviour") == "limit")
            band = (r"$r_\infty\in[%.4g,\ %.4g]$ over %d slices" % (lo, hi, settled)
                    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and math.isfinite(lo)
                    and math.isfinite(hi) else "no slice settles")
            lines.append(r"\item %s: $%s$ \textbf{%s}; %s. %s" % (
                _escape(path or "statement"), FORM_LATEX.get(d["form"], _escape(d["form"])), d["decision"], band,
                r"\emph{Evidence:} " + _evidence(_short_line(d.get("summary", ""), 300),
                                                   paper(claim.paper).symbol_names())))
        lines.append(r"\end{itemize}")
        count += 1
    if not count:
        return ""
    lines.append(r"\end{itemize}")
    return "\n".join(lines) + "\n"


def _item_errata(claim: Claim, evidence: Mapping[str, Any], forms: Mapping) -> list[tuple[str, ...]]:
    """(``"math"``, printed, derived, evidence line, minimal correction or None) per canonical display that
    differs, inequality that fails."""
    other = set(evidence.get("differs_under_other_readings") or [])
    out = []
    for fid, record in (evidence.get("formulas") or {}).items():
        if record.get("status") != "differs" or fid.removeprefix(claim.id + ".") in other:
            continue
        form = forms.get("formulas", {}).get(fid, {})
        printed = paper_math(form.get("printed", "")) or form.get("stated", "")
        line = f"{fid} ({record.get('label', '')}): {agreement_line(record)}"
        out.append(("math", printed, form.get("derived", ""), line, record.get("correction")))
    certification = {str(c.get("inequality")): c for c in evidence.get("certification") or []
                     if isinstance(c, Mapping)}
    for iid, record in (evidence.get("inequalities") or {}).items():
        if record.get("holds", True):
            continue
        form = forms.get("inequalities", {}).get(iid, {})
        point = ", ".join(f"{k} = {v}" for k, v in (record.get("worst_point") or {}).items())
        line = (f"{iid} ({record.get('label', '')}): fails at {point}: lhs {record.get('lhs_value')}, "
                f"rhs {record.get('rhs_value')} (margin {record.get('min_margin'):.3g}; "
                f"{record.get('n_points')} sampled points)")
        cert = certification.get(iid) or certification.get(iid.rsplit(".", 1)[-1])
        if cert:
            line += f"; certification: {cert.get('status')}"
        out.append(("math", paper_math(form.get("printed", "")) or form.get("stated", ""), "", line, None))
    return out


def _correction_rows(record: Mapping[str, Any]) -> list[str]:
    """The align* rows of a display's minimal correction (``checks.report.correction_rows``)."""
    return [r"\text{%s:}\quad & %s" % (name, _bounded(latex)) for name, latex in correction_rows(record)]


def _correction_line(correction: Mapping[str, Any]) -> str:
    """The minimal correction in words: the edit (its expressions as math) and how its equality was confirmed,
    or why there is none."""
    if correction.get("kind") == "none":
        return _escape(_short_line(correction_text(correction), 300))
    edit = correction.get("edit_latex") or _escape(correction.get("edit", ""))
    return "%s (%s; %s)" % (_text_with_math(edit), _escape(correction.get("kind", "")),
                           CONFIRMED_BY.get(correction.get("identity", ""), ""))


def _bounded(latex: str) -> str:
    if len(latex) > MAX_LATEX:
        return r"\text{(%d characters of LaTeX: see the section below)}" % len(latex)
    return latex or r"\text{(not recorded)}"


def _statement_latex(statement: str) -> str:
    out = []
    for kind, source in statement_parts(statement):
        out.append(_escape(source) if kind == "text" else r"$\displaystyle %s$" % paper_math(source))
    return " ".join(out)


def paper_math(latex: str) -> str:
    """A paper's own LaTeX made fit for a row or an inline formula: equation numbers and labels (``\\tag``,
    ``\\label``, ``\\nonumber``) are not mathematics and are not allowed there."""
    latex = re.sub(r"\\(?:tag\*?|label)\{[^{}]*\}", "", latex)
    return re.sub(r"\\(?:nonumber|notag)(?![A-Za-z])", "", latex)


def _text_with_math(text: str) -> str:
    """Text whose ``$…$`` parts are LaTeX already: only the text between them is converted."""
    parts = re.split(r"(\$[^$]*\$)", text)
    return "".join(part if part.startswith("$") else _unicode_to_latex(part) for part in parts)


def _short_line(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: commands of LaTeX, amsmath and amssymb that exports may use; any other command would be undefined
KNOWN_COMMANDS = frozenset("""
documentclass usepackage title author date begin end maketitle section subsection setlength parindent
allowdisplaybreaks item emph textbf texttt text textit textrm mathrm mathbf mathit mathcal mathbb mathsf
boldsymbol operatorname frac tfrac dfrac sqrt sum prod int oint lim sup inf max min log ln exp sin cos tan sinh
cosh tanh arcsin arccos arctan det left right big Big bigg Bigg bigl bigr Bigl Bigr middle quad qquad cdot cdots
ldots dots vdots ddots times div pm mp le ge leq geq leqslant geqslant neq ne approx sim simeq equiv propto ll gg
lesssim gtrsim asymp to rightarrow leftarrow Rightarrow Leftarrow leftrightarrow Leftrightarrow iff implies mapsto
infty partial nabla forall exists in notin subset subseteq supset supseteq cup cap setminus emptyset varnothing ell
hbar circ star ast bullet prime tilde hat bar vec dot ddot check breve overline underline widetilde widehat underbrace
overbrace boxed mid parallel perp langle rangle lfloor rfloor lceil rceil lvert rvert lVert rVert vert Vert
textbackslash S P dagger ddagger displaystyle textstyle scriptstyle limits nolimits binom tbinom dbinom not colon
otimes oplus odot wedge vee neg land lor top bot overset underset stackrel smallint
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi varpi rho varrho
sigma varsigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
surd aleph Re Im wp angle triangle square blacksquare checkmark dag ddag rm bf it sf tt sl sc
""".split())

_DISPLAYS = re.compile(r"\\begin\{align\*\}(.*?)\\end\{align\*\}", re.S)
_WORDS_ALLOWED_IN = re.compile(r"\\(?:text|mathrm|texttt|operatorname|textbf|emph|mathbb|mathcal)\{[^{}]*\}")


def lint(text: str) -> list[str]:
    """Problems that would stop ``text`` (an export) from compiling or would put an internal name on the page:
    unbalanced braces, ``$``, ``\\\\left``/``\\\\right`` or environments; commands that LaTeX, amsmath and amssymb
    do not define; in the displays tdcheck prints (every row but the paper's own ``printed:`` LaTeX), words of
    three or more letters outside ``\\\\text``-like groups (a symbol name that no paper maps, e.g. ``hratio``).
    Empty when the export is clean."""
    problems = []
    depth, line = 0, 1
    body = re.sub(r"\\[{}$%&#_\\]", "", text)  # escaped characters and line breaks
    for char in body:
        line += char == "\n"
        depth += (char == "{") - (char == "}")
        if depth < 0:
            problems.append(f"line {line}: '}}' closes a group that was never opened")
            depth = 0
    if depth:
        problems.append(f"{depth} group(s) left open at the end")
    if body.count("$") % 2:
        problems.append("an odd number of '$'")
    lefts, rights = len(re.findall(r"\\left(?![a-zA-Z])", text)), len(re.findall(r"\\right(?![a-zA-Z])", text))
    if lefts != rights:
        problems.append(f"{lefts} \\left against {rights} \\right")
    stack = []
    for kind, name in re.findall(r"\\(begin|end)\{([^}]*)\}", text):
        if kind == "begin":
            stack.append(name)
        elif not stack or stack.pop() != name:
            problems.append(f"\\end{{{name}}} does not close the innermost open environment")
    if stack:
        problems.append(f"environments left open: {stack}")
    unknown = sorted({c for c in re.findall(r"\\([A-Za-z]+)", text)} - KNOWN_COMMANDS)
    if unknown:
        problems.append(f"commands LaTeX/amsmath/amssymb do not define: {unknown}")
    for display in _DISPLAYS.findall(text):
        for row in display.split("\\\\"):
            if row.strip().startswith(r"\text{printed:}"):
                continue  # the paper's own LaTeX, verbatim
            bare = re.sub(r"\\(begin|end)\{[^}]*\}", " ", row)
            bare = re.sub(r"\\[A-Za-z]+", " ", _WORDS_ALLOWED_IN.sub(" ", bare))
            words = sorted(set(re.findall(r"(?<![A-Za-z])[A-Za-z]{3,}(?![A-Za-z])", bare)))
            if words:
                problems.append(f"names in mathematics that no paper maps: {words} in {row.strip()[:80]!r}")
    return problems
