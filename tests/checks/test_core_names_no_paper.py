"""The layer packages' own modules never name a paper (DESIGN.md: the paper hangs off its descriptor).

The repository hook's test: ``grep -lE "<pattern>" derivations/*.py numerics/*.py checks/*.py``
without ``registry.py``, ``papers.py`` and the ``__init__.py`` files. The paper subpackages
(``checks/induction_head/`` …) and ``checks/papers.py``, the one list of papers, may name them.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: a paper's prefix as a string literal, or a paper module's name
PAPER_NAME = re.compile(
    r"""['"](ih|rl|ss|co)['"]|induction_head|regular_language|scan_snap|scan_and_snap|word_cooccurrence""")
EXEMPT = re.compile(r"registry\.py|papers\.py|/__init__\.py")


def core_modules() -> list[Path]:
    """The top-level modules of the three layer packages, as the hook's shell glob lists them."""
    packages = ("derivations", "numerics", "checks")
    return sorted(path for package in packages for path in (ROOT / package).glob("*.py"))


def test_the_hook_sees_the_layer_modules():
    names = {p.relative_to(ROOT).as_posix() for p in core_modules()}
    assert {"derivations/core.py", "numerics/ode.py", "checks/claim.py", "checks/papers.py"} <= names


def test_no_core_module_names_a_paper():
    offending = {}
    for path in core_modules():
        relative = path.relative_to(ROOT).as_posix()
        if EXEMPT.search(relative):
            continue
        text = path.read_text(encoding="utf-8").splitlines()
        lines = [f"{n}: {line.strip()}" for n, line in enumerate(text, 1) if PAPER_NAME.search(line)]
        if lines:
            offending[relative] = lines
    assert not offending, f"core modules name a paper (move it behind checks.papers or into its package): " \
                          f"{offending}"


def test_the_pattern_catches_what_the_hook_catches():
    for text in ('PAPER = "ih"', "from numerics.models.induction_head import sgd", "prefix='rl'",
                 "scan_and_snap", "word_cooccurrence"):
        assert PAPER_NAME.search(text), text
    for text in ('"ihx"', "ih.cf.M", "the induction-head paper", "icon"):
        assert not PAPER_NAME.search(text), text
