"""The Markdown version of a report (math in ``$…$`` / ``$$…$$``, as GitHub renders it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from checks.report import (
    Entry, Report, agreement_line, correction_rows, correction_text, labels, markdown_anchors, one_line, statement_parts,
)

#: rows of an evidence table before the rest is left to the JSON dump
MAX_ROWS = 30


def render(report: Report) -> str:
    """The whole document."""
    out = ["# tdcheck report", ""]
    out += [report.facts(), "", " · ".join(f"**{s}** {n}" for s, n in sorted(report.counts().items())), ""]
    out += ["| id | label | verdict | summary | s |", "|---|---|---|---|---:|"]
    anchors = markdown_anchors(entry.claim_id for entry in report.entries)
    for entry, anchor in zip(report.entries, anchors, strict=True):
        out.append(
            f"| [{entry.claim_id}](#{anchor}) | {cell(labels(entry.claim, entry.record))} "
            f"| **{entry.status}** | {cell(entry.summary)} | {entry.seconds} |"
        )
    out.append("")
    for entry in report.entries:
        out += section(entry)
    return "\n".join(out) + "\n"


def cell(text: str) -> str:
    """Text safe inside a table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def statement_md(text: str) -> list[str]:
    """A printed statement with its math between dollars."""
    lines, prose = [], ""
    for kind, source in statement_parts(text):
        if kind == "text":
            prose += source
        elif kind == "inline":
            prose += f"${source}$"
        else:
            if prose.strip():
                lines += [prose.strip(), ""]
            prose = ""
            lines += ["$$", source, "$$", ""]
    if prose.strip():
        lines += [prose.strip(), ""]
    return lines


def section(entry: Entry) -> list[str]:
    """The section of one claim."""
    record, claim = entry.record, entry.claim
    out = [
        f"## {entry.claim_id}",
        "",
        f"**{labels(claim, record)}** · verdict **{entry.status}**" + (f" · {claim.kind}" if claim else ""),
        "",
    ]
    if claim is not None and claim.statement:
        out += ["Statement as printed:", ""] + statement_md(claim.statement)
    if entry.status == "error":
        return out + [f"This is a bug in tdcheck: `{record.get('error', '')}`", ""]
    out += [record.get("summary", ""), ""]
    params = record.get("params") or {}
    if params:
        out += [
            "Parameters: "
            + ", ".join(f"`{k}={v}`" if v is not None else f"`{k}` sampled" for k, v in params.items()),
            "",
        ]
    out += [
        f"Replay: `{record.get('replay', '')}` · {record.get('elapsed_s', 0):.1f} s · "
        f"[full record]({entry.evidence_file})",
        "",
    ]
    out += evidence_md(entry)
    out += [f"![{path}]({path})" for path in entry.figures]
    return out + [""]


def evidence_md(entry: Entry) -> list[str]:
    """Closed-form displays with their forms, inequalities, and the remaining evidence in short."""
    evidence = entry.record.get("evidence") or {}
    forms = entry.forms or {}
    out = []
    formulas = evidence.get("formulas")
    if isinstance(formulas, Mapping) and formulas:
        out += ["### Displays", ""]
        for fid, record in formulas.items():
            out += formula_md(fid, record, forms.get("formulas", {}).get(fid, {}))
    inequalities = evidence.get("inequalities")
    if isinstance(inequalities, Mapping) and inequalities:
        certified = {
            str(c.get("inequality")): c for c in evidence.get("certification") or [] if isinstance(c, Mapping)
        }
        out += [
            "### Inequalities",
            "",
            "| inequality | sampling | smallest margin | worst point | certification |",
            "|---|---|---:|---|---|",
        ]
        for iid, record in inequalities.items():
            cert = certified.get(iid) or certified.get(iid.rsplit(".", 1)[-1])
            status = "holds" if record.get("holds") else "fails"
            cert_text = (
                "—"
                if not cert
                else (
                    f"**{cert.get('status')}** ({cert.get('method', '')}, "
                    f"{cert.get('boxes')} boxes, margin {one_line(cert.get('margin'))})"
                )
            )
            out.append(
                f"| `{iid}` {cell(record.get('label', ''))} | **{status}** ({record.get('n_points')} points) "
                f"| {one_line(record.get('min_margin'))} | {cell(one_line(record.get('worst_point'), 120))} "
                f"| {cell(cert_text)} |"
            )
        out.append("")
    handled = {k for k in ("formulas", "inequalities") if isinstance(evidence.get(k), Mapping)}
    handled |= {"certification"} if "inequalities" in handled else set()
    rest = {k: v for k, v in evidence.items() if k not in handled and v not in ({}, [], None)}
    if rest:
        out += ["### Other evidence", ""]
        for key, value in rest.items():
            if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
                out += [f"**{key}**", ""] + records_md(value, entry)
            elif (
                isinstance(value, Mapping)
                and value
                and all(
                    isinstance(v, list) and v and all(isinstance(r, Mapping) for r in v)
                    for v in value.values()
                )
            ):
                for name, records in value.items():
                    out += [f"**{key}: {name}**", ""] + records_md(records, entry)
            else:
                out += [f"- **{key}**: `{one_line(value, 300)}`"]
        out.append("")
    return out


def formula_md(fid: str, record: Mapping[str, Any], forms: Mapping[str, str]) -> list[str]:
    """One display: status line, then printed, derived and difference as display math."""
    out = [
        f"- `{fid}` **{record.get('status')}** · {record.get('label', '')}: {record.get('description', '')}",
        "",
    ]
    if record.get("status") != "differs":
        return out
    for name, key in (
        ("printed (paper)", "printed"),
        ("printed, as encoded", "stated"),
        ("derived", "derived"),
        ("printed − derived", "difference"),
    ):
        if forms.get(key):
            out += [f"  {name}:", "", "  $$", "  " + forms[key], "  $$", ""]
    for name, latex in correction_rows(record):
        out += [f"  {name}:", "", "  $$", "  " + latex, "  $$", ""]
    out += ["  " + agreement_line(record), ""]
    if record.get("correction"):
        out += ["  *Minimal correction:* " + correction_text(record["correction"]), ""]
    return out


def records_md(records: list, entry: Entry) -> list[str]:
    """A list of records as a Markdown table, cut at ``MAX_ROWS`` rows."""
    columns: list[str] = []
    for record in records:
        columns += [str(k) for k in record if str(k) not in columns]
    columns = columns[:10]
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for record in records[:MAX_ROWS]:
        out.append("| " + " | ".join(cell(one_line(record.get(c, ""), 60)) for c in columns) + " |")
    if len(records) > MAX_ROWS:
        out += [
            "",
            f"*{len(records) - MAX_ROWS} more rows in [{entry.evidence_file}]({entry.evidence_file}).*",
        ]
    return out + [""]
