"""The LaTeX export (issue #17): clean LaTeX for every paper, corrections in the errata, an errata-only sheet and
fragments, and, where pdflatex is installed, documents that compile."""

import shutil
import subprocess

import pytest

from checks.cli import main
from checks.latex_export import lint

#: two small closed-form claims per paper (ss.dv.thm1_coefficients and rl.cf.softmax_lipschitz carry generated
#: symbol names, E'_{ij} and ⟨E, W'E⟩, that once reached the LaTeX as words)
SMALL = {"ih": "ih.cf.m", "rl": "rl.cf.softmax_lipschitz", "ss": "ss.dv.thm1_coefficients", "co": "co.cf.loss_derivs"}
PDFLATEX = shutil.which("pdflatex")


def _export(tmp_path, selector, *options):
    out = tmp_path / (selector.replace("*", "all") + "".join(options) + ".tex")
    assert main(["latex", selector, "-o", str(out), *options]) == 0
    return out


def test_lint_finds_what_breaks_a_document():
    assert lint(r"\begin{align*} x^{2} \end{align*}") == []
    assert any("never opened" in p for p in lint(r"$x}$"))
    assert any("left open" in p for p in lint(r"\begin{align*}\frac{1}{2\end{align*}"))
    assert any("\\unknowncommand" in p or "unknowncommand" in p for p in lint(r"$\unknowncommand x$"))
    assert any("hratio" in p for p in lint("\\begin{align*}\n\\text{derived:}\\quad & hratio^{2}\n\\end{align*}"))
    # the paper's own LaTeX (a printed: row) may juxtapose letters (aXY): not a name
    assert lint("\\begin{align*}\n\\text{printed:}\\quad & \\exp(aXY) \\\\\n\\text{derived:}\\quad & x\n\\end{align*}") == []


def test_the_papers_own_latex_loses_its_equation_numbers_and_edits_keep_their_math():
    from checks.latex_export import _correction_line, paper_math

    assert paper_math(r"h^\star\le h(t),\quad\forall t\ge T_1^h.\tag{14}") == r"h^\star\le h(t),\quad\forall t\ge T_1^h."
    assert paper_math(r"x = 1 \label{eq:x}\nonumber") == "x = 1 "
    line = _correction_line({"kind": "term", "edit": "add the term U", "identity": "exact",
                             "edit_latex": r"add the term $\|u_{EP}^*\|$ → x"})
    assert r"$\|u_{EP}^*\|$" in line and r"$\to$" in line and lint(line) == []


@pytest.mark.parametrize("prefix", sorted(SMALL))
def test_every_papers_export_is_clean(tmp_path, prefix):
    text = _export(tmp_path, SMALL[prefix]).read_text()
    assert lint(text) == [], lint(text)


def test_a_differing_display_carries_its_minimal_correction(tmp_path):
    """m = dM/dp as printed has the wrong sign: the errata show the sign boxed and the corrected form; the
    erratum sheet has its replay command and nothing else."""
    text = _export(tmp_path, "ih.cf.m").read_text()
    assert r"\emph{Minimal correction:} change the sign" in text and r"\boxed{-1}" in text
    sheet = _export(tmp_path, "ih.cf.m", "--errata-only").read_text()
    assert sheet.startswith(r"\documentclass") and sheet.rstrip().endswith(r"\end{document}")
    assert r"\emph{Replay:} \texttt{tdcheck run ih.cf.m" in sheet and r"\section*{Errata}" in sheet
    assert r"\subsection*" not in sheet and lint(sheet) == []
    fragment = _export(tmp_path, "ih.cf.m", "--errata-only", "--fragment").read_text()
    assert r"\documentclass" not in fragment and r"\end{document}" not in fragment and lint(fragment) == []


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed: the exports are only linted")
@pytest.mark.parametrize("options", [(), ("--errata-only",)])
def test_the_exports_compile(tmp_path, options):
    for selector in SMALL.values():
        tex = _export(tmp_path, selector, *options)
        run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-3000:]
        assert tex.with_suffix(".pdf").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("prefix", sorted(SMALL))
def test_a_whole_papers_export_compiles(tmp_path, prefix):
    """Every closed-form display of a paper, as ``tdcheck latex 'P.*'`` writes them (minutes per paper)."""
    tex = _export(tmp_path, f"{prefix}.*")
    text = tex.read_text()
    assert lint(text) == [], lint(text)
    run = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
