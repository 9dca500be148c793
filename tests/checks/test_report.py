"""The report (``tdcheck run --report DIR``) and the errata of ``tdcheck latex``."""

import json
import re
import shutil
import subprocess
import sys

import pytest

from checks.claim import Claim, Outcome, Verdict
from checks.cli import main
from checks.latex_export import document, errata_section
from checks.registry import load_all
from checks.report import build, formula_forms, statement_parts, write_report
from checks.report_html import math

HAS_MATHML = True
try:
    import latex2mathml.converter  # noqa: F401
except ImportError:
    HAS_MATHML = False

needs_mathml = pytest.mark.skipif(not HAS_MATHML, reason="latex2mathml is not installed")


def _claim(claim_id, statement="", kind="claim"):
    return Claim(
        claim_id,
        "ih",
        "[W] Lemma 0",
        kind,
        lambda ctx: Outcome("holds", ""),
        statement=statement,
        label_alt="[F] Lemma 0.1",
    )


def _verdict(claim_id, status, summary="", evidence=None, figures=()):
    return Verdict(
        claim_id,
        "[W] Lemma 0",
        status,
        summary or f"{status} because of numbers",
        evidence or {},
        {"L": 40, "wstar": None},
        "quick",
        0,
        f"tdcheck run {claim_id} --seed 0",
        0.25,
        list(figures),
    )


@pytest.fixture(scope="module")
def real():
    """Verdicts of two cheap closed forms (one holds, one differs at the time of writing) and their forms."""
    registry = load_all()
    verdicts = [registry[cid].run({}, budget="quick", seed=0) for cid in ("ih.cf.M", "ih.cf.m")]
    forms = {v.claim_id: formula_forms(registry[v.claim_id], v.to_dict()["evidence"]) for v in verdicts}
    return registry, verdicts, forms


def test_statement_parts_split_prose_inline_and_display_math():
    assert statement_parts(r"for all $t>0$: $$\mathcal L\le1$$ holds") == [
        ("text", "for all "),
        ("inline", "t>0"),
        ("text", ": "),
        ("display", r"\mathcal L\le1"),
        ("text", " holds"),
    ]
    assert statement_parts(r"|\xi_1(p)|,\dots,|\xi_5(p)|\le0.0001,\ \forall t>T_1^g") == [
        ("display", r"|\xi_1(p)|,\dots,|\xi_5(p)|\le0.0001,\ \forall t>T_1^g")
    ]
    assert statement_parts(r"the flow of \(p\) is monotone in time here")[0][0] == "text"
    assert statement_parts("") == []


@needs_mathml
def test_math_is_mathml_and_unknown_commands_fall_back_to_the_source():
    assert math(r"\Big\|\mathrm{softmax}(\theta)\Big\|_1\le\tfrac12").startswith("<math")
    assert "\\" not in math(r"\Big\|x\Big\|")  # sized delimiters become characters, not command names
    assert math(r"\notacommand{x}") == r'<code class="latex">\notacommand{x}</code>'


def test_without_latex2mathml_math_is_shown_as_latex_source(monkeypatch):
    monkeypatch.setitem(sys.modules, "latex2mathml.converter", None)
    assert math(r"\frac{a}{b}") == r'<code class="latex">\frac{a}{b}</code>'


def test_report_of_real_verdicts_lists_every_claim_with_math_forms(real, tmp_path):
    registry, verdicts, forms = real
    page = write_report(tmp_path, build(verdicts, registry, forms=forms, meta={"budget": "quick"}))
    html = page.read_text()
    markdown = (tmp_path / "report.md").read_text()
    table = html.split('<table class="verdicts">')[1].split("</table>")[0]
    for verdict in verdicts:
        row = re.search(rf'<tr><td><a href="#[^"]+">{re.escape(verdict.claim_id)}</a>.*?</tr>', table)
        assert row and f">{verdict.status}</span>" in row.group(0)
        assert f"## {verdict.claim_id}" in markdown
        assert (
            json.loads((tmp_path / "evidence" / f"{verdict.claim_id}.json").read_text())["status"]
            == verdict.status
        )
    if HAS_MATHML:
        assert "<math" in html and "$" not in html
    for verdict in verdicts:
        for fid, record in verdict.evidence["formulas"].items():
            assert fid in html
            if (
                record["status"] == "differs"
            ):  # printed and derived forms shown as display math in the Markdown
                assert f"$$\n  {forms[verdict.claim_id]['formulas'][fid]['derived']}\n  $$" in markdown


def test_report_copies_figures_and_cuts_large_evidence(tmp_path):
    figure = tmp_path / "source" / "losses.png"
    figure.parent.mkdir()
    figure.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    many = [{"t": i, "loss": 1.0 / (i + 1)} for i in range(500)]
    claims = {
        "ih.a": _claim("ih.a", r"$$T_{\rm II}=\Theta\big((\alpha^\star+1)^2L\big)$$"),
        "ih.b": _claim("ih.b", "prose statement with no math in it"),
        "ih.c": _claim("ih.c"),
    }
    verdicts = [
        _verdict("ih.a", "fails", evidence={"trajectory": many}, figures=[str(figure)]),
        _verdict("ih.b", "differs", evidence={"huge": "x" * 200_000}),
    ]
    errors = [{"id": "ih.c", "error": "ZeroDivisionError: boom", "traceback": "Traceback ..."}]
    out = tmp_path / "out"
    html = write_report(out, build(verdicts, claims, errors=errors)).read_text()
    markdown = (out / "report.md").read_text()
    assert (out / "figures" / "ih.a" / "losses.png").read_bytes() == figure.read_bytes()
    assert '<img class="figure" src="figures/ih.a/losses.png"' in html
    assert "![figures/ih.a/losses.png](figures/ih.a/losses.png)" in markdown
    assert "460 more rows" in html and "evidence/ih.a.json" in html
    assert len(json.loads((out / "evidence" / "ih.a.json").read_text())["evidence"]["trajectory"]) == 500
    assert "shown cut" in html and len(html) < 150_000
    for cid, status in (("ih.a", "fails"), ("ih.b", "differs"), ("ih.c", "error")):
        assert re.search(rf">{re.escape(cid)}</a></td><td>[^<]*</td><td><span[^>]*>{status}</span>", html)
        assert f"[{cid}](#" in markdown and f"**{status}**" in markdown
    assert "ZeroDivisionError: boom" in html
    assert "$$\nT_{\\rm II}" in markdown
    if HAS_MATHML:
        assert "$" not in html


def test_certification_is_shown_beside_the_sampling_verdict(tmp_path):
    evidence = {
        "formulas": {},
        "inequalities": {
            "ih.x.bound": {
                "label": "C.3",
                "description": "a bound",
                "method": "sampling",
                "holds": True,
                "n_points": 1000,
                "min_margin": 0.01,
                "worst_point": {"w": "0.1"},
                "lhs_value": "1",
                "rhs_value": "1.01",
            }
        },
        "certification": [
            {
                "inequality": "bound",
                "status": "certified",
                "boxes": 37,
                "margin": 0.004,
                "coverage": 1.0,
                "counterexample": None,
                "method": "ball arithmetic",
                "seconds": 0.8,
            }
        ],
    }
    html = write_report(tmp_path, build([_verdict("ih.x", "holds", evidence=evidence)], {})).read_text()
    row = html.split('<table class="inequalities">')[1].split("</tr>")[1]
    assert (
        ">holds</span> at 1000 points" in row
        and ">certified</span> ball arithmetic" in row
        and "boxes 37" in row
    )
    assert "**certified** (ball arithmetic, 37 boxes" in (tmp_path / "report.md").read_text()


def test_errata_list_each_differs_and_fails_verdict_with_printed_and_derived(real):
    registry, verdicts, forms = real
    claims = [
        registry["ih.cf.M"],
        registry["ih.cf.m"],
        _claim("ih.z", r"$$\mathcal L(T)\le0.01$$"),
        _claim("ih.y", "prose"),
    ]
    records = {v.claim_id: v.to_dict() for v in verdicts}
    records["ih.z"] = _verdict(
        "ih.z", "fails", "the ratio drifts", evidence={"corrected": r"\mathcal L(T)\le0.02"}
    ).to_dict()
    records["ih.y"] = _verdict("ih.y", "holds").to_dict()
    text = errata_section(claims, records, forms)
    expected = {cid for cid, r in records.items() if r["status"] in ("differs", "fails")}
    for cid in records:
        assert (rf"\item \texttt{{{cid.replace('_', chr(92) + '_')}}}" in text) == (cid in expected)
    assert r"\text{corrected:}\quad & \mathcal L(T)\le0.02" in text and "the ratio drifts" in text
    for fid, record in records["ih.cf.m"]["evidence"]["formulas"].items():
        if record["status"] == "differs":
            assert forms["ih.cf.m"]["formulas"][fid]["derived"] in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_document_with_errata_compiles(real, tmp_path):
    registry, verdicts, forms = real
    claims = [
        registry["ih.cf.m"],
        _claim("ih.z", r"$$\mathcal L_{G_4}(\theta(T_{\rm I}))\le0.01\cdot x$$ for all 5% of L_1"),
    ]
    records = {verdicts[1].claim_id: verdicts[1].to_dict(), "ih.z": _verdict("ih.z", "fails").to_dict()}
    (tmp_path / "e.tex").write_text(document(claims, records, forms))
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "e.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-2000:]


def test_run_report_option_writes_the_pages(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["run", "ih.cf.M", "--workers", "1", "--report", str(out)]) == 0
    assert (out / "index.html").is_file() and "ih.cf.M" in (out / "report.md").read_text()
    assert main(["run", "ih.cf.M", "--report", str(out / "index.html")]) == 2


def test_markdown_anchors_follow_github_and_number_repeats():
    from checks.report import markdown_anchors

    assert markdown_anchors(["ih.cf.M", "ih.cf.m", "ih.cf.L_IH2"]) == ["ihcfm", "ihcfm-1", "ihcfl_ih2"]


def test_the_latex_lists_each_fitted_constant_beside_its_statement():
    """A limit decision anywhere in a verdict's evidence appears with its form, decision and r∞ band
    (T = 2.5·L + 7 is Θ(L) with r∞ = 2.5); a verdict without one is not listed."""
    import numpy as np

    from checks.asymptotics import Asymptotic, decide
    from checks.latex_export import constants_section, document

    L = np.geomspace(40, 4e4, 6)
    decision = decide("Theta", 2.5 * L + 7, L, [{"L": float(x)} for x in L], variables=[Asymptotic("L")])
    lo, hi = decision.constant_band()
    assert lo <= 2.5 <= hi
    claims = [_claim("ih.t", r"$$T_o=\Theta(L)$$"), _claim("ih.u", "no rate")]
    records = {"ih.t": _verdict("ih.t", decision.status.value, evidence={"parts": {"T_o": {"limit": decision.to_dict()}}}).to_dict(),
               "ih.u": _verdict("ih.u", "holds").to_dict()}
    text = constants_section(claims, records)
    assert r"\texttt{ih.t}" in text and r"\texttt{ih.u}" not in text
    assert r"\Theta" in text and f"{lo:.4g}" in text and f"{hi:.4g}" in text and "parts.T\\_o.limit" in text
    assert text in document(claims, records)
    assert constants_section([claims[1]], records) == ""
