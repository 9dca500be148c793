"""Compiled builders remembered on disk (numerics.stored.stored_build): warm calls, invalidation."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from numerics import stored as store
from numerics.compile import vector_field
from numerics.ode import Tolerance, integrate

REPO = Path(__file__).resolve().parents[2]

WARM_SCRIPT = """
import json, sys, time
import numpy as np
import numerics.models.induction_head as m
from numerics.ode import Tolerance, integrate
from numerics.stored import BUILT, source_stamp
start = time.perf_counter()
field = m.stage2_flow("paper")
sol = integrate(field, np.array([.01, .01, .01, np.log(.01)]), (0., 1.), np.array([40., 1., .49, .1]),
                tol=Tolerance(1e-8, 1e-11))
print(json.dumps({"seconds": time.perf_counter() - start, "sympy": "sympy" in sys.modules,
                  "compile": "numerics.compile" in sys.modules, "module": field.rhs.py_func.__module__,
                  "events": field.event_names, "y": sol.y_final.tolist(), "n_steps": sol.n_steps,
                  "stamp": source_stamp(m.stage2.__name__, BUILT)}))
"""


def _run(script: str, cache: Path) -> dict:
    env = {
        **os.environ,
        "TDCHECK_CACHE_DIR": str(cache / "tdcheck"),
        "NUMBA_CACHE_DIR": str(cache / "numba"),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_warm_stage2_flow_imports_no_sympy_and_integrates_the_same(tmp_path):
    cold = _run(WARM_SCRIPT, tmp_path)
    warm = _run(WARM_SCRIPT, tmp_path)
    for _ in range(2):  # a source edited between the runs (a concurrent editor) rightly means a rebuild
        if warm["stamp"] == cold["stamp"]:
            break
        cold, warm = warm, _run(WARM_SCRIPT, tmp_path)
    print(f"cold {cold['seconds']:.2f} s, warm {warm['seconds']:.2f} s")
    assert cold["sympy"] and not warm["sympy"] and not warm["compile"]
    assert warm["module"] == cold["module"] and warm["events"] == cold["events"]
    assert warm["y"] == cold["y"] and warm["n_steps"] == cold["n_steps"]


# --- in one process: a fresh wrapper stands for a new process ------------------------------------------

CALLS = []


def decay_field(rate: float):
    """dy/dt = -rate y, compiled: the smallest builder of a vector field."""
    CALLS.append(rate)
    y = sp.Symbol("y", real=True)
    return vector_field([-sp.Float(rate) * y], [y], [], name="stored_build_decay")


def _end_state(field) -> float:
    sol = integrate(field, np.array([1.0]), (0.0, 1.0), np.zeros(0), tol=Tolerance(1e-10, 1e-12))
    return float(sol.y_final[0])


def test_a_recalled_field_is_rebuilt_from_its_module_without_the_builder(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    CALLS.clear()
    built = store.stored_build(decay_field)(0.5)
    recalled = store.stored_build(decay_field)(rate=0.5)  # keyword or positional: one entry
    assert CALLS == [0.5]
    assert recalled.rhs is built.rhs and recalled.n_state == built.n_state
    assert _end_state(recalled) == _end_state(built) == _approx_exp(-0.5)


def _approx_exp(x: float):
    """``exp(x)`` to the integrator's tolerance."""
    return pytest.approx(np.exp(x), rel=1e-8)


def test_a_missing_generated_module_means_a_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    CALLS.clear()
    field = store.stored_build(decay_field)(0.25)
    Path(sys.modules[field.rhs.py_func.__module__].__file__).unlink()
    again = store.stored_build(decay_field)(0.25)
    assert CALLS == [0.25, 0.25]
    assert _end_state(again) == _approx_exp(-0.25)


BUILDER_V1 = '''
from numerics.stored import stored_build

CALLS = []


@stored_build
def scaled(x):
    CALLS.append(x)
    return {SCALE} * x
'''


def test_an_edited_builder_module_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # edits within one second: no stale .pyc
    source = tmp_path / "stamped_builder.py"
    values = []
    for scale in (2, 2, 3):  # the second import is a new process reading the entry; the third an edit
        source.write_text(BUILDER_V1.replace("{SCALE}", str(scale)))
        sys.modules.pop("stamped_builder", None)
        importlib.invalidate_caches()
        store.source_stamp.cache_clear()
        module = importlib.import_module("stamped_builder")
        values.append((module.scaled(5), list(module.CALLS)))
    sys.modules.pop("stamped_builder", None)
    assert values == [(10, [5]), (10, []), (15, [5])]


def test_an_edited_dependency_package_invalidates_its_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "stamped_pkg").mkdir()
    helper = tmp_path / "stamped_pkg" / "__init__.py"
    importlib.invalidate_caches()
    seen = []

    def square(x):
        seen.append(x)
        return x * x

    for text in ("A = 1\n", "A = 1\n", "A = 2\n"):
        helper.write_text(text)
        store.source_stamp.cache_clear()
        assert store.stored(square, depends=("stamped_pkg",))(4) == 16
    assert seen == [4, 4]
    store.source_stamp.cache_clear()


def test_a_result_of_an_unimportable_function_is_kept_in_memory_only(tmp_path, monkeypatch):
    from numba import njit

    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))

    def make():
        return njit(cache=False)(lambda x: 2.0 * x)  # cache=False: a function of no importable module

    first = store.stored_build(make)()
    assert first(1.5) == 3.0
    assert store.stored_build(make)() is not first  # nothing on disk to recall
    assert not list((tmp_path / "sympy").glob("*.pkl"))
