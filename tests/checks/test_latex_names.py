"""No internal name reaches a LaTeX export (issue #17): every SymPy symbol a paper's derivations create with a
literal name is either written correctly by SymPy's printer (one letter or a Greek name, then subscripts) or
mapped by the paper's ``SYMBOL_NAMES``. The scan reads the derivation modules' source, so it is fast and sees
symbols of items that a given run would not build."""

import ast
import importlib
import re
from pathlib import Path

import pytest

from checks.papers import PAPERS, paper
from derivations.latex import PaperLatexPrinter, standard_name


def _names(value: str) -> list[str]:
    """The names of ``sp.symbols``' argument: "a b", "a, b", ranges "c0:8" -> c0..c7."""
    out = []
    for part in (p for p in re.split(r"[\s,]+", value.strip()) if p):
        ranged = re.fullmatch(r"([A-Za-z_]+)(\d+):(\d+)", part)
        out += [f"{ranged.group(1)}{i}" for i in range(int(ranged.group(2)), int(ranged.group(3)))] if ranged else [part]
    return out


def _literal_symbols(package: str) -> dict[str, str]:
    """Symbol name -> where it is created, for every Symbol/symbols/Function call with a literal name."""
    root = Path(importlib.import_module(package).__file__).parent
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            if name in ("Symbol", "symbols", "Dummy") and isinstance(node.args[0].value, str):
                for symbol in _names(node.args[0].value):
                    found.setdefault(symbol, f"{path.name}:{node.lineno}")
    return found


@pytest.mark.parametrize("prefix", sorted(PAPERS))
def test_every_internal_symbol_name_is_mapped(prefix):
    descriptor = paper(prefix)
    if not descriptor.symbols:
        pytest.skip(f"{prefix} declares no symbols")
    package = descriptor.symbols.partition(":")[0].rpartition(".")[0]
    mapped = descriptor.symbol_names()
    unmapped = {name: where for name, where in _literal_symbols(package).items()
                if not standard_name(name) and name not in mapped}
    assert not unmapped, f"{prefix}: symbols that would print as words (map them in SYMBOL_NAMES): {unmapped}"


def test_the_rule_and_the_printer():
    assert standard_name("x") and standard_name("sigma_init") and standard_name("alpha2") and standard_name("w_1")
    assert not standard_name("hratio") and not standard_name("elapsed") and not standard_name("etaY")
    import sympy as sp
    printed = PaperLatexPrinter(paper("ih").symbol_names()).doprint(sp.Symbol("hratio") ** 2)
    assert "hratio" not in printed and printed == r"\left(\tfrac{h}{h^{\star}}\right)^{2}"


def test_an_export_writes_symbols_and_evidence_in_the_papers_notation(tmp_path):
    """ih.cf.lyapunov_vh uses v/v*, h/h* (internal names vratio, hratio): neither the displays nor the evidence
    lines (counterexample points) may carry the internal names."""
    from checks.cli import main

    tex = tmp_path / "lyapunov.tex"
    assert main(["latex", "ih.cf.lyapunov_vh", "-o", str(tex)]) == 0
    text = tex.read_text()
    assert r"\tfrac{v}{v^{\star}}" in text
    for internal in ("vratio", "hratio", "vstar ="):
        assert internal not in text, internal
