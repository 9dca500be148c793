"""``tdcheck run --report DIR``: the verdicts of a run as a browsable report.

Writes ``DIR/index.html`` (one self-contained page, math as MathML, no network), ``DIR/report.md``
(math as ``$…$`` for GitHub), ``DIR/figures/<claim id>/`` (copies of each verdict's figures, linked
relatively) and ``DIR/evidence/<claim id>.json`` (each verdict's full record; the pages truncate
large evidence and link there).

Per claim the report shows the statement as printed, the labels in both versions of the paper,
the verdict, its evidence and figures; for a closed-form item it also shows, per display, the
printed form, the derived form and their difference (``forms``, computed by
:func:`formula_forms` in the process that ran the claim, where the item is already built).
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sp

from checks.claim import Claim, Verdict
from checks.papers import paper
from numerics.stored import stored

#: LaTeX longer than this is not rendered (a page of MathML per display helps nobody); expressions with
#: more nodes than MAX_NODES (about MAX_LATEX characters) are not even printed, which takes seconds
MAX_LATEX = 4000
MAX_NODES = 900


@dataclass
class Entry:
    """One row of the report: a verdict record (``Verdict.to_dict()``) or a crash record, and its extras."""

    claim_id: str
    record: dict[str, Any]
    claim: Claim | None = None
    forms: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    evidence_file: str = ""

    @property
    def status(self) -> str:
        """The verdict's status, or ``error`` for a check that crashed."""
        return self.record.get("status", "error")

    @property
    def summary(self) -> str:
        """The verdict's one-line summary; for a crash, what crashed."""
        return self.record.get("summary") or f"this is a bug in tdcheck: {self.record.get('error', '')}"

    @property
    def seconds(self) -> str:
        """The run time, as shown in the tables ("" for a crash)."""
        elapsed = self.record.get("elapsed_s")
        return "" if elapsed is None else f"{elapsed:.1f}"

    @property
    def anchor(self) -> str:
        """The HTML anchor of this entry's section (case kept: ``ih.cf.M`` and ``ih.cf.m`` both exist)."""
        return re.sub(r"[^A-Za-z0-9_.-]", "-", self.claim_id)


@dataclass
class Report:
    """Everything the HTML and Markdown renderers need."""

    entries: list[Entry]
    meta: dict[str, Any]

    def facts(self) -> str:
        """One line: number of claims, budget, seed, time, version, date."""
        parts = [f"{len(self.entries)} claims"]
        for key, text in (
            ("budget", "budget {}"),
            ("seed", "seed {}"),
            ("elapsed_s", "{} s"),
            ("tdcheck", "tdcheck {}"),
            ("generated", "generated {}"),
        ):
            if self.meta.get(key) is not None:
                parts.append(text.format(self.meta[key]))
        return " · ".join(parts)

    def counts(self) -> dict[str, int]:
        """Number of entries per status."""
        counts: dict[str, int] = {}
        for entry in self.entries:
            counts[entry.status] = counts.get(entry.status, 0) + 1
        return counts


def markdown_anchors(headings: Iterable[str]) -> list[str]:
    """The anchors GitHub gives to these headings, in order: lower case, punctuation other than ``-`` and
    ``_`` dropped, spaces as ``-``, and ``-1``, ``-2`` … appended to repeats (``ih.cf.M``, ``ih.cf.m`` ->
    ``ihcfm``, ``ihcfm-1``)."""
    seen: dict[str, int] = {}
    anchors = []
    for heading in headings:
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.append(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def labels(claim: Claim | None, record: Mapping[str, Any]) -> str:
    """The paper labels in both versions (``[W] Eq. (10); [F] Eq. (22)``)."""
    if claim is None:
        return str(record.get("label", ""))
    return "; ".join(part for part in (claim.label, claim.label_alt) if part)


def formula_forms(claim: Claim, evidence: Mapping[str, Any]) -> dict[str, dict[str, dict[str, str]]]:
    """Printed, derived and difference of every display of a closed-form item, as LaTeX.

    Returns ``{"formulas": {id: {"printed", "stated", "derived", "difference"}}, "inequalities":
    {id: {"printed", "relation"}}}``; empty for a claim that is not a closed-form item. The
    difference of a display that agrees is 0; of one that differs, the simplified difference
    the check recorded (``evidence["formulas"][id]["difference"]``), parsed back.
    """
    from checks.kinds import ItemCheck

    if not isinstance(claim.check, ItemCheck):
        return {}
    names = paper(claim.paper).symbol_names()
    item = claim.check.item
    latex = functools.lru_cache(maxsize=None)(lambda expr: bounded_latex(expr, names))  # displays share forms
    records = evidence.get("formulas", {}) if isinstance(evidence, Mapping) else {}
    formulas = {}
    for formula in item.formulas:
        record = records.get(formula.id, {})
        formulas[formula.id] = {
            "printed": formula.latex,
            "stated": _readable(latex(formula.stated), claim.id, formula.id, "stated"),
            "derived": presented_latex(claim.id, formula.id, "derived"),
            "difference": _difference_latex(formula, record, names),
        }
    inequalities = {}
    for inequality in item.inequalities:
        relation = "<" if inequality.strict else r"\le"
        lhs = _readable(latex(inequality.lhs), claim.id, inequality.id, "lhs")
        encoded = f"{lhs} {relation} {_readable(latex(inequality.rhs), claim.id, inequality.id, 'rhs')}"
        inequalities[inequality.id] = {"printed": inequality.latex, "stated": encoded}
    return {"formulas": formulas, "inequalities": inequalities}


#: a display whose LaTeX is longer than this is too long for one line: it is presented (see presented_latex)
READABLE_LATEX = 1500


def _readable(text: str, claim_id: str, display_id: str, side: str) -> str:
    """``text`` (the plain LaTeX of a printed side, which keeps the print's shape) when it fits a line, else the
    side in the presentation of :func:`presented_latex`."""
    if len(text) <= READABLE_LATEX and not text.startswith(r"\text{(too long"):
        return text
    return presented_latex(claim_id, display_id, side)


@stored
def presented_latex(claim_id: str, display_id: str, side: str) -> str:
    """LaTeX of one side of a display (``derived`` or ``stated`` of a formula, ``lhs`` or ``rhs`` of an
    inequality) as a person would print it (``derivations.presentation.present``: summation index as printed,
    powers instead of exp∘log, factored, a rational function of e^{−p}, …; each rewrite checked equal to
    that side by the identity check), in the paper's notation, or a note when it is still too long to read.
    Stored on disk: the presentation pass factorises, which takes seconds per display."""
    from dataclasses import replace

    from checks import registry
    from derivations.core import Formula
    from derivations.presentation import MAX_NODES as MAX_PRESENTED_NODES, present

    claim = registry.load_all()[claim_id]
    item = claim.check.item
    display = next(d for d in [*item.formulas, *item.inequalities] if d.id == display_id)
    expr = getattr(display, side)
    names = paper(claim.paper).symbol_names()
    if _more_nodes_than(expr, MAX_PRESENTED_NODES):
        return bounded_latex(expr, names)
    if isinstance(display, Formula):
        formula = replace(display, derived=expr)
    else:
        formula = Formula(display.id, display.label, expr, expr, display.domain)
    return _fitting(present(formula).latex(names))


def bounded_latex(expr: sp.Expr, names: Mapping[str, str]) -> str:
    """LaTeX of ``expr`` with the paper's names, or a note when it is too long to read."""
    from derivations.latex import to_latex

    if _more_nodes_than(expr, MAX_NODES):
        return r"\text{(too long to print: more than %d nodes)}" % MAX_NODES
    return _fitting(to_latex(expr, names))


def _more_nodes_than(expr: sp.Expr, limit: int) -> bool:
    return any(nodes > limit for nodes, _ in enumerate(sp.preorder_traversal(expr)))


def _fitting(latex: str) -> str:
    """``latex``, or a note when it is longer than MAX_LATEX."""
    return latex if len(latex) <= MAX_LATEX else r"\text{(too long to print: %d characters of LaTeX)}" % len(latex)


def correction_rows(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, LaTeX) rows of a display's minimal correction (``record["correction"]``, from
    ``derivations.corrections``): the printed form with the edit marked, and the corrected form."""
    correction = record.get("correction") or {}
    if correction.get("kind", "none") == "none":
        return []
    return [("edit (boxed)", correction.get("latex_marked", "")), ("corrected", correction.get("latex_corrected", ""))]


def correction_text(correction: Mapping[str, Any]) -> str:
    """The minimal correction in one line of text: the edit and how it was confirmed, or why there is none."""
    if correction.get("kind") == "none":
        return correction.get("edit", "") + "; the derived form is shown instead."
    return f"{correction.get('edit', '')} ({correction.get('kind', '')}; {CONFIRMED_BY.get(correction.get('identity'), '')})"


#: how the identity check confirmed an equality, in words
CONFIRMED_BY = {"exact": "the difference simplifies to 0", "numeric": "equal to 30 digits at every sampled point"}


def _difference_latex(formula, record: Mapping[str, Any], names: Mapping[str, str]) -> str:
    status = record.get("status")
    if status in ("exact", "numeric"):
        return "0"
    text = record.get("difference", "")
    if status != "differs" or not text or text.startswith("("):
        return ""
    symbols = {}
    for expr in (formula.stated, formula.derived):
        for atom in expr.atoms(sp.Symbol):
            symbols[("_" if isinstance(atom, sp.Dummy) else "") + atom.name] = atom
    try:
        return bounded_latex(sp.parse_expr(text, local_dict=symbols), names)
    except Exception:  # noqa: BLE001 - a display aid: SymPy's parser raises many types; show the text instead
        return r"\text{%s}" % text.replace("\\", "").replace("{", "(").replace("}", ")")[:MAX_LATEX]


def build(
    verdicts: Iterable[Verdict | Mapping[str, Any]],
    claims: Mapping[str, Claim],
    *,
    errors: Iterable[Mapping[str, Any]] = (),
    forms: Mapping[str, Mapping] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Report:
    """Assemble the report of ``verdicts`` (``Verdict`` objects or their JSON records) and crashes."""
    forms = forms or {}
    entries = []
    for verdict in verdicts:
        record = verdict.to_dict() if isinstance(verdict, Verdict) else dict(verdict)
        claim = claims.get(record["id"])
        entries.append(Entry(record["id"], record, claim, dict(forms.get(record["id"], {}))))
    for error in errors:
        entries.append(Entry(error["id"], dict(error), claims.get(error["id"])))
    order = {cid: i for i, cid in enumerate(claims)}
    entries.sort(key=lambda e: order.get(e.claim_id, len(order)))
    return Report(entries, dict(meta or {}))


def write_report(directory: str | Path, report: Report) -> Path:
    """Write index.html, report.md, figures/ and evidence/ into ``directory``; return the HTML path."""
    from checks import report_html, report_md

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for entry in report.entries:
        safe = entry.claim_id.replace("/", "_")
        evidence = directory / "evidence" / f"{safe}.json"
        evidence.parent.mkdir(exist_ok=True)
        evidence.write_text(json.dumps(entry.record, indent=2) + "\n")
        entry.evidence_file = f"evidence/{safe}.json"
        entry.figures = []
        for source in entry.record.get("figures", []):
            source = Path(source)
            if not source.is_file():
                continue
            target = directory / "figures" / safe / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            entry.figures.append(f"figures/{safe}/{source.name}")
    (directory / "report.md").write_text(report_md.render(report))
    html = directory / "index.html"
    html.write_text(report_html.render(report))
    return html


# --- statements: prose, inline math and display math -------------------------------------------------

_COMMAND = re.compile(r"\\[A-Za-z]+")
_TEXT_ARGUMENT = re.compile(r"\\(?:text|mathrm|operatorname|mbox)\{[^{}]*\}")
_PROSE = re.compile(r"[A-Za-z]{2,}[,;]? [A-Za-z]{2,}[,;]? [A-Za-z]{2,}")


def statement_parts(text: str) -> list[tuple[str, str]]:
    """Split a printed statement into ``("text" | "inline" | "display", source)`` parts.

    ``$…$`` and ``$$…$$`` delimit math; a statement without dollars is one display of math when
    it uses LaTeX commands and reads as no prose (three words in a row outside ``\\text{}``),
    and prose otherwise.
    """
    text = text.strip()
    if not text:
        return []
    if "$" not in text:
        bare = _COMMAND.sub(" ", _TEXT_ARGUMENT.sub(" ", text))
        is_math = bool(_COMMAND.search(text)) and not _PROSE.search(bare)
        return [("display" if is_math else "text", text)]
    parts: list[tuple[str, str]] = []
    for i, chunk in enumerate(re.split(r"(\$\$.+?\$\$|\$[^$]+?\$)", text, flags=re.S)):
        if not chunk:
            continue
        if i % 2 == 0:
            parts.append(("text", chunk))
        elif chunk.startswith("$$"):
            parts.append(("display", chunk[2:-2].strip()))
        else:
            parts.append(("inline", chunk[1:-1].strip()))
    return parts


def agreement_line(record: Mapping[str, Any]) -> str:
    """Where and how a display was compared with its derivation, in one sentence."""
    n, dps = record.get("n_points"), record.get("dps")
    if record.get("status") == "exact":
        return f"The difference simplifies to 0 (and agrees at {n} points at {dps} digits)."
    if record.get("status") == "numeric":
        return (
            f"Equal at {n} sampled points at {dps} digits (largest relative gap "
            f"{record.get('max_relative_gap', 0):.2g}); no symbolic proof within the budget."
        )
    point = ", ".join(f"{k} = {v}" for k, v in (record.get("point") or {}).items())
    line = f"At {point}: printed {record.get('stated_value')}, derived {record.get('derived_value')}"
    if record.get("ratio"):
        line += f"; printed/derived = {record['ratio']} at every sampled point"
    return line + "."


def one_line(value: Any, limit: int = 160) -> str:
    """A compact one-line rendering of an evidence value (JSON, cut at ``limit`` characters)."""
    if isinstance(value, float):
        text = f"{value:.6g}"
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, separators=(", ", ": "), default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
