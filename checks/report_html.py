"""The HTML page of a report: one self-contained file, inline CSS, math as MathML (no network).

LaTeX becomes presentation MathML through ``latex2mathml`` (browsers render MathML natively);
without it, or where it cannot parse a formula, the LaTeX source is shown in ``<code>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from html import escape
from typing import Any

from checks.claim import Verdict
from checks.report import (
    Entry, Report, agreement_line, correction_rows, correction_text, labels, one_line, statement_parts,
)

#: evidence whose JSON is longer than this is cut, with a link to the full dump
MAX_EVIDENCE_CHARS = 60_000
#: rows of a table of records before the rest is left to the dump
MAX_ROWS = 40
MAX_COLUMNS = 14

STATUS_COLOURS = {
    "holds": ("#1a7f37", "#fff"),
    "certified": ("#0b5d1e", "#fff"),
    "fails": ("#cf222e", "#fff"),
    "differs": ("#d97706", "#fff"),
    "outside-regime": ("#0969da", "#fff"),
    "inconclusive": ("#8250df", "#fff"),
    "error": ("#000", "#ff6b6b"),
    # per-display agreements and certification results
    "exact": ("#1a7f37", "#fff"),
    "numeric": ("#2da44e", "#fff"),
    "undecided": ("#6e7781", "#fff"),
}

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1300px; padding: 1em 2em;
       color: #1f2328; }
h1 { margin-bottom: .2em; } h2 { border-top: 2px solid #d0d7de; padding-top: .8em; margin-top: 2em; }
h4 { margin: .8em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 3px 7px; vertical-align: top; text-align: left; }
th { background: #f6f8fa; }
table.verdicts td:nth-child(5) { text-align: right; white-space: nowrap; }
table.verdicts td:first-child { white-space: nowrap; }
.badge { display: inline-block; padding: 0 .5em; border-radius: .6em; font-weight: 600; font-size: 13px;
         white-space: nowrap; }
.meta { color: #57606a; }
code, pre { font: 13px ui-monospace, monospace; background: #f6f8fa; }
code.latex { color: #6e7781; }
pre { padding: .5em; overflow-x: auto; max-height: 30em; }
.statement { background: #fbfbfd; border-left: 4px solid #8c959f; padding: .3em 1em; margin: .5em 0;
             overflow-x: auto; }
table.forms, table.inequalities { width: 100%; table-layout: fixed; }
.forms td:first-child { width: 10em; color: #57606a; }
.inequalities th:first-child { width: 40%; }
.inequalities tbody { border-top: 3px solid #8c959f; } .inequalities tr.printed td { background: #fbfbfd; }
div.scroll { overflow-x: auto; max-width: 100%; }
details { margin: .3em 0; } summary { cursor: pointer; }
.formula { border: 1px solid #d0d7de; border-radius: 6px; padding: .2em .8em; margin: .5em 0; }
.formula.differs { border-color: #d97706; background: #fffaf0; }
.note { color: #57606a; font-style: italic; }
img.figure { max-width: 100%; border: 1px solid #d0d7de; margin: .3em 0; }
math { font-size: 1.12em; } math[display=block] { margin: .3em 0; }
"""


def render(report: Report) -> str:
    """The whole page."""
    meta = report.meta
    counts = report.counts()
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>tdcheck report ({escape(', '.join(meta.get('selectors') or ['all']))})</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>tdcheck report</h1>",
        '<p class="meta">' + escape(report.facts()) + "</p>",
        "<p>" + " ".join(f"{badge(s)} {n}" for s, n in sorted(counts.items())) + "</p>",
    ]
    return "\n".join(
        head + [verdict_table(report)] + [section(e) for e in report.entries] + ["</body></html>\n"]
    )


def badge(status: str) -> str:
    """A coloured status label."""
    background, colour = STATUS_COLOURS.get(status, ("#eaeef2", "#1f2328"))
    return f'<span class="badge" style="background:{background};color:{colour}">{escape(status)}</span>'


def verdict_table(report: Report) -> str:
    """The table at the top: one row per claim, linking to its section."""
    rows = [
        '<table class="verdicts"><tr><th>id</th><th>label</th><th>verdict</th><th>summary</th><th>s</th></tr>'
    ]
    for entry in report.entries:
        rows.append(
            f'<tr><td><a href="#{entry.anchor}">{escape(entry.claim_id)}</a></td>'
            f"<td>{escape(labels(entry.claim, entry.record))}</td><td>{badge(entry.status)}</td>"
            f"<td>{escape(entry.summary)}</td><td>{entry.seconds}</td></tr>"
        )
    rows.append("</table>")
    return "\n".join(rows)


def section(entry: Entry) -> str:
    """The section of one claim: statement, verdict, parameters, replay, evidence, figures."""
    record, claim = entry.record, entry.claim
    out = [f'<h2 id="{entry.anchor}">{escape(entry.claim_id)} {badge(entry.status)}</h2>']
    out.append(
        f"<p><b>{escape(labels(claim, record))}</b>" + (f" · {escape(claim.kind)}" if claim else "") + "</p>"
    )
    if claim is not None and claim.statement:
        out.append('<div class="statement">' + statement_html(claim.statement) + "</div>")
    if entry.status == "error":
        out.append(f"<p><b>This is a bug in tdcheck:</b> {escape(record.get('error', ''))}</p>")
        out.append(
            f"<details><summary>traceback</summary><pre>{escape(record.get('traceback', ''))}</pre></details>"
        )
        return "\n".join(out)
    out.append(f"<p>{escape(record.get('summary', ''))}</p>")
    if claim is not None and claim.doc:
        out.append(f"<details><summary>about this check</summary><pre>{escape(claim.doc)}</pre></details>")
    params = record.get("params") or {}
    if params:
        shown = {k: "sampled over its domain" if v is None else v for k, v in params.items()}
        out.append("<h4>Parameters</h4>" + key_value_table(shown))
    out.append(
        f"<p>Replay: <code>{escape(record.get('replay', ''))}</code>"
        f" · budget {escape(str(record.get('budget')))} · {record.get('elapsed_s', 0):.1f} s"
        f' · <a href="{escape(entry.evidence_file)}">full record (JSON)</a></p>'
    )
    out.append(evidence_html(entry))
    for path in entry.figures:
        out.append(
            f'<p><a href="{escape(path)}"><img class="figure" src="{escape(path)}" alt="{escape(path)}"></a>'
            "</p>"
        )
    return "\n".join(out)


# --- math --------------------------------------------------------------------------------------------


def math(latex: str, display: bool = False) -> str:
    """MathML for ``latex``; the LaTeX source in ``<code>`` when it cannot be converted."""
    latex = latex.strip()
    if not latex:
        return ""
    try:
        from latex2mathml.converter import convert
    except ImportError:
        return _source(latex)
    try:
        mathml = _fix_delimiters(convert(latex, display="block" if display else "inline"))
    except Exception:  # noqa: BLE001 - any parse failure of the converter falls back to the source
        return _source(latex)
    if _RAW_COMMAND.search(mathml):
        return _source(latex)  # an unknown command would be shown as its name
    return mathml


def display_math(latex: str) -> str:
    """Display math in a box that scrolls sideways when the formula is wider than the page."""
    return f'<div class="scroll">{math(latex, display=True)}</div>'


def _source(latex: str) -> str:
    return f'<code class="latex">{escape(latex)}</code>'


#: delimiters the converter leaves as their command after \big, \Big, \bigg, \Bigg
_DELIMITERS = {
    r"\|": "&#x2016;",
    r"\Vert": "&#x2016;",
    r"\vert": "|",
    r"\lvert": "|",
    r"\rvert": "|",
    r"\lVert": "&#x2016;",
    r"\rVert": "&#x2016;",
    r"\langle": "&#x27E8;",
    r"\rangle": "&#x27E9;",
    r"\{": "{",
    r"\}": "}",
    r"\lbrace": "{",
    r"\rbrace": "}",
    r"\lfloor": "&#x230A;",
    r"\rfloor": "&#x230B;",
    r"\lceil": "&#x2308;",
    r"\rceil": "&#x2309;",
}
_RAW_COMMAND = re.compile(r">(\\(?:[A-Za-z]+|[|{}]))<")


def _fix_delimiters(mathml: str) -> str:
    return _RAW_COMMAND.sub(lambda m: ">" + _DELIMITERS.get(m.group(1), m.group(1)) + "<", mathml)


def statement_html(text: str) -> str:
    """A printed statement: prose escaped, math as MathML."""
    out = []
    for kind, source in statement_parts(text):
        if kind == "text":
            out.append(escape(source).replace("\n\n", "<br><br>"))
        else:
            out.append(math(source, display=kind == "display"))
    return "".join(out)


# --- evidence ----------------------------------------------------------------------------------------


def evidence_html(entry: Entry) -> str:
    """The evidence: closed-form displays with their forms, inequalities, Monte-Carlo, then the rest."""
    evidence = entry.record.get("evidence") or {}
    out = ["<h3>Evidence</h3>"]
    rest = dict(evidence)
    forms = entry.forms or {}
    formulas, inequalities = rest.pop("formulas", None), rest.pop("inequalities", None)
    certification = rest.pop("certification", None)
    if isinstance(formulas, Mapping) and formulas:
        out.append("<h4>Displays: printed and derived</h4>")
        other = set(evidence.get("differs_under_other_readings") or [])
        out += [
            formula_html(fid, rec, forms.get("formulas", {}).get(fid, {}), other_reading=_short(fid, other))
            for fid, rec in formulas.items()
        ]
    elif formulas:
        rest["formulas"] = formulas
    if isinstance(inequalities, Mapping) and inequalities:
        out.append("<h4>Inequalities</h4>")
        out.append(inequalities_html(inequalities, certification, forms.get("inequalities", {})))
    else:
        if inequalities:
            rest["inequalities"] = inequalities
        if certification:
            out.append("<h4>Certification</h4>" + value_html(certification, entry, depth=1))
    if isinstance(rest.get("monte_carlo"), Mapping):
        out.append("<h4>Monte-Carlo</h4>")
        for name, records in rest.pop("monte_carlo").items():
            out.append(f"<p><b>{escape(name)}</b></p>" + value_html(records, entry, depth=1))
    if rest:
        out.append("<h4>Other evidence</h4>" + value_html(rest, entry, depth=0))
    return "\n".join(out)


def _short(fid: str, names: set[str]) -> bool:
    """True when ``fid`` is one of ``names``, which are given without the item's prefix."""
    return any(fid == name or fid.endswith("." + name) for name in names)


def formula_html(
    fid: str, record: Mapping[str, Any], forms: Mapping[str, str], other_reading: bool = False
) -> str:
    """One display: printed, as encoded, derived, difference, and where they were compared.

    A display that differs only under a non-canonical reading (``other_reading``) does not decide
    the verdict: it is marked so and folded like the displays that agree.
    """
    status = str(record.get("status", ""))
    head = (
        f"<b>{escape(fid)}</b> {badge(status)}"
        + (" (other reading; does not decide the verdict)" if other_reading else "")
        + f" · {escape(str(record.get('label', '')))}"
    )
    body = [f"<p>{escape(str(record.get('description', '')))}"]
    if record.get("reading"):
        body.append(
            " <i>Reading: " + escape(", ".join(f"{k}={v}" for k, v in record["reading"].items())) + ".</i>"
        )
    body.append("</p>")
    rows = [
        ("printed (paper)", forms.get("printed", "")),
        ("printed, as encoded", forms.get("stated", "")),
        ("derived", forms.get("derived", "")),
        ("printed − derived", forms.get("difference", "")),
        *correction_rows(record),
    ]
    rows = [(name, latex) for name, latex in rows if latex]
    if rows:
        body.append(
            '<table class="forms">'
            + "".join(
                f"<tr><td>{escape(name)}</td><td>{display_math(latex)}</td></tr>" for name, latex in rows
            )
            + "</table>"
        )
    body.append(f"<p>{escape(agreement_line(record))}</p>")
    if record.get("correction"):
        body.append(f"<p><i>Minimal correction:</i> {escape(correction_text(record['correction']))}</p>")
    if status == "differs" and not other_reading:
        return f'<div class="formula differs"><h4>{head}</h4>{"".join(body)}</div>'
    return f'<details class="formula"><summary>{head}</summary>{"".join(body)}</details>'


def inequalities_html(
    records: Mapping[str, Any], certification: Any, forms: Mapping[str, Mapping[str, str]]
) -> str:
    """A table: each printed inequality, its sampling result and, when present, its certification."""
    certified = {}
    for result in certification or []:
        if isinstance(result, Mapping) and "inequality" in result:
            certified[str(result["inequality"])] = result
    rows = ['<table class="inequalities"><tr><th>inequality</th><th>sampling</th><th>certification</th></tr>']
    for iid, record in records.items():
        form = forms.get(iid, {})
        short = iid.rsplit(".", 1)[-1]
        cert = (
            certified.get(iid)
            or certified.get(short)
            or next((c for name, c in certified.items() if iid.endswith("." + name)), None)
        )
        rows.append(
            f"<tbody><tr><td><b>{escape(iid)}</b><br>{escape(str(record.get('label', '')))}<br>"
            f'<span class="note">{escape(str(record.get("description", "")))}</span></td>'
            f"<td>{sampling_cell(record)}</td><td>{certification_cell(cert)}</td></tr>"
        )
        printed = form.get("printed") or form.get("stated", "")
        if printed:
            rows.append(f'<tr class="printed"><td colspan="3">{display_math(printed)}</td></tr>')
        rows.append("</tbody>")
    rows.append("</table>")
    return "\n".join(rows)


def sampling_cell(record: Mapping[str, Any]) -> str:
    """The sampling verdict of an inequality: holds/fails, points, worst margin and where."""
    holds = record.get("holds")
    status = "holds" if holds else "fails" if holds is not None else "inconclusive"
    point = ", ".join(f"{k} = {v}" for k, v in (record.get("worst_point") or {}).items())
    return (
        f"{badge(status)} at {record.get('n_points')} points"
        f"<br>smallest margin {_num(record.get('min_margin'))}<br>at {escape(point)}"
        f"<br>lhs {escape(str(record.get('lhs_value')))}, rhs {escape(str(record.get('rhs_value')))}"
    )


def certification_cell(result: Mapping[str, Any] | None) -> str:
    """The certification verdict of an inequality (``evidence["certification"]``), or a dash."""
    if not result:
        return '<span class="note">—</span>'
    lines = [f"{badge(str(result.get('status')))} {escape(str(result.get('method', '')))}"]
    for key in ("boxes", "margin", "coverage", "seconds"):
        if result.get(key) is not None:
            lines.append(f"{key} {_num(result[key])}")
    if result.get("counterexample"):
        lines.append("counterexample " + escape(one_line(result["counterexample"], 200)))
    return "<br>".join(lines)


def _num(value: Any) -> str:
    return escape(f"{value:.6g}" if isinstance(value, float) else str(value))


def value_html(value: Any, entry: Entry, depth: int) -> str:
    """Generic evidence: key/value tables, tables of records, nested values in ``<details>``."""
    size = len(json.dumps(value, default=str))
    if size > MAX_EVIDENCE_CHARS:
        text = json.dumps(value, indent=1, default=str, ensure_ascii=False)[: MAX_EVIDENCE_CHARS // 4]
        return (
            f'<p class="note">{size:,} characters of evidence: shown cut; the whole record is in '
            f'<a href="{escape(entry.evidence_file)}">{escape(entry.evidence_file)}</a>.</p>'
            f"<pre>{escape(text)}\n…</pre>"
        )
    if isinstance(value, Mapping):
        if all(_scalar(v) for v in value.values()):
            return key_value_table(value)
        out, scalars = [], {k: v for k, v in value.items() if _scalar(v)}
        if scalars:
            out.append(key_value_table(scalars))
        for key, item in value.items():
            if key in scalars:
                continue
            open_ = " open" if depth == 0 and len(json.dumps(item, default=str)) < 3000 else ""
            out.append(
                f"<details{open_}><summary><b>{escape(str(key))}</b> {escape(_shape(item))}</summary>"
                f"{value_html(item, entry, depth + 1)}</details>"
            )
        return "\n".join(out)
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        return records_table(value, entry)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "<ul>" + "".join(f"<li>{escape(v)}</li>" for v in value[:MAX_ROWS]) + "</ul>"
    return f"<code>{escape(one_line(value, 2000))}</code>"


def _scalar(value: Any) -> bool:
    return not isinstance(value, (Mapping, list)) or (
        isinstance(value, list)
        and len(one_line(value, 10_000)) <= 120
        and not any(isinstance(v, (Mapping, list)) for v in value)
    )


def _shape(value: Any) -> str:
    if isinstance(value, Mapping):
        return f"({len(value)} entries)"
    if isinstance(value, list):
        return f"({len(value)} items)"
    return ""


def key_value_table(values: Mapping[str, Any]) -> str:
    """Two columns: name and value."""
    return (
        "<table>"
        + "".join(
            f"<tr><th>{escape(str(k))}</th><td>{escape(one_line(v, 300))}</td></tr>"
            for k, v in values.items()
        )
        + "</table>"
    )


def records_table(records: list, entry: Entry) -> str:
    """A list of records as a table (columns: the union of their keys), cut at ``MAX_ROWS`` rows."""
    columns: list[str] = []
    for record in records:
        columns += [str(k) for k in record if str(k) not in columns]
    shown = columns[:MAX_COLUMNS]
    out = ["<table><tr>" + "".join(f"<th>{escape(c)}</th>" for c in shown) + "</tr>"]
    for record in records[:MAX_ROWS]:
        out.append(
            "<tr>" + "".join(f"<td>{escape(one_line(record.get(c, ''), 100))}</td>" for c in shown) + "</tr>"
        )
    out.append("</table>")
    cut = []
    if len(records) > MAX_ROWS:
        cut.append(f"{len(records) - MAX_ROWS} more rows")
    if len(columns) > MAX_COLUMNS:
        cut.append("columns " + ", ".join(columns[MAX_COLUMNS:]))
    if cut:
        out.append(
            f'<p class="note">Not shown: {escape("; ".join(cut))} (see '
            f'<a href="{escape(entry.evidence_file)}">{escape(entry.evidence_file)}</a>).</p>'
        )
    return "\n".join(out)


# --- one verdict in a notebook -----------------------------------------------------------------------


def verdict_html(verdict: Verdict) -> str:
    """Render one verdict as HTML for Jupyter (``Verdict._repr_html_``).

    The status in its colour, the label and summary, the parameters (pinned ones marked), the
    replay command, the evidence folded (as in the report; long evidence cut, the whole record
    being ``verdict.evidence``) and the figures from their files.
    """
    record = verdict.to_dict()
    entry = Entry(verdict.claim_id, record, figures=list(verdict.figures))
    border = STATUS_COLOURS.get(verdict.status, ("#8c959f", ""))[0]
    out = [
        f'<div class="tdcheck-verdict" style="border-left:4px solid {border};padding:.2em .8em">',
        f"<p><b>{escape(verdict.claim_id)}</b> {badge(verdict.status)} · {escape(verdict.label)}"
        f" · {verdict.elapsed:.1f} s</p>",
        f"<p>{escape(verdict.summary)}</p>",
    ]
    if verdict.params:
        pinned = set(verdict.pinned)
        shown = {
            (f"{name} (pinned)" if name in pinned else name): (
                "sampled over its domain" if value is None else value
            )
            for name, value in verdict.params.items()
        }
        out.append(key_value_table(shown))
    out.append(
        f"<p>Replay: <code>{escape(verdict.replay)}</code> · budget {escape(verdict.budget)}"
        f" · seed {verdict.seed}</p>"
    )
    evidence = record["evidence"]
    if evidence:
        size = len(json.dumps(evidence, default=str))
        if size > MAX_EVIDENCE_CHARS:
            text = json.dumps(evidence, indent=1, default=str, ensure_ascii=False)[: MAX_EVIDENCE_CHARS // 4]
            body = (f'<p class="note">{size:,} characters of evidence, shown cut; the whole record is '
                    f"<code>verdict.evidence</code>.</p><pre>{escape(text)}\n…</pre>")
        else:
            # the report's notes link to the evidence file; here the whole record is the attribute
            body = evidence_html(entry).replace('<a href=""></a>', "<code>verdict.evidence</code>")
        out.append(f"<details><summary>evidence ({len(evidence)} entries)</summary>{body}</details>")
    for path in entry.figures:
        out.append(f'<p><img src="{escape(path)}" alt="{escape(path)}" style="max-width:100%"><br>'
                   f"<code>{escape(path)}</code></p>")
    out.append("</div>")
    return "\n".join(out)
