"""Checks and paper models never differentiate or lambdify by hand.

Flows, gradients, Jacobians and induced flows come from ``derivations.flows``; numbers from
``numerics.compile`` (``scalar_kernel``, ``grid_kernel``, ``vector_field``, ``array_function``).
This test parses every module of ``checks/`` and ``numerics/models/`` and fails on a call of
``lambdify`` (``sp.lambdify``, ``sympy.lambdify`` or a bare ``lambdify``) or of ``diff`` on a SymPy
object (``sp.diff(...)``, ``diff(...)``, ``expr.diff(...)``), naming the file and the line.
``np.diff`` / ``numpy.diff`` (differences of samples) are not calculus and pass.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("checks", "numerics/models")
#: core tools that may differentiate or lambdify, with the reason
ALLOWED = {
    "checks/certify.py": "the certifier differentiates margins for its interval bounds and pre-filters boxes "
                         "with a NumPy lambdify of the margin",
    "checks/testing.py": "the user API compiles the user's own SymPy integrands and losses (and their "
                         "gradients) for assert_* helpers",
}
NUMPY_NAMES = {"np", "numpy"}


def _offences(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("lambdify", "diff"):
            found.append(f"{func.id}(")
        elif isinstance(func, ast.Attribute) and func.attr == "lambdify":
            found.append(f"{ast.unparse(func)}(")
        elif isinstance(func, ast.Attribute) and func.attr == "diff":
            receiver = func.value
            if isinstance(receiver, ast.Name) and receiver.id in NUMPY_NAMES:
                continue
            found.append(f"{ast.unparse(func)}(")
        else:
            continue
        found[-1] = f"{path.relative_to(root).as_posix()}:{node.lineno}: {found[-1]}"
    return found


def _modules() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


def test_checks_and_models_do_no_calculus_by_hand():
    offences = [o for p in _modules() if p.relative_to(ROOT).as_posix() not in ALLOWED for o in _offences(p)]
    assert not offences, (
        "hand calculus outside derivations.flows / numerics.compile (use derivations.flows.gradient_flow, "
        "gradient, jacobian, induced_flow, reduced_flow, and numerics.compile.array_function or grid_kernel):\n"
        + "\n".join(offences))


def test_the_allow_list_is_current():
    # an entry whose file no longer differentiates or lambdifies must go
    for relative in ALLOWED:
        path = ROOT / relative
        assert path.exists(), f"{relative} is allow-listed but does not exist"
        assert _offences(path), f"{relative} no longer differentiates or lambdifies: remove it from ALLOWED"


def test_the_scanner_catches_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import numpy as np\nimport sympy as sp\nfrom sympy import lambdify, diff\n"
                      "a = sp.lambdify(x, e)\nb = lambdify(x, e)\nc = sp.diff(e, x)\nd = e.diff(x)\n"
                      "f = diff(e, x)\ng = np.diff(t)\nh = numpy.diff(t)\ni = sympy.lambdify(x, e)\n")
    offences = _offences(sample, root=tmp_path)
    assert sorted(int(o.split(":")[1]) for o in offences) == [4, 5, 6, 7, 8, 11]
    assert all(o.startswith("sample.py:") for o in offences)
