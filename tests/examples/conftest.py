"""Fixtures for running user-style test files with pytester, with tdcheck's plugin loaded once."""

import importlib.metadata
import os
from pathlib import Path

import pytest

import checks
import checks.testing
import numerics.compile
import numerics.ode  # noqa: F401
from checks.registry import load_all

# pytester forgets the modules an in-process inner run imports, and numpy (an extension module)
# cannot be imported twice; the papers' claims would register twice. So both are imported here,
# before any pytester snapshot is taken.
load_all()


def _autoloaded() -> bool:
    """Whether an inner pytest run loads tdcheck's plugin by itself (installed entry point)."""
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    return any(ep.value == "checks.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11"))


@pytest.fixture
def plugin_args() -> list[str]:
    """``-p checks.pytest_plugin`` unless the installed entry point loads it (twice is an error)."""
    return [] if _autoloaded() else ["-p", "checks.pytest_plugin"]


@pytest.fixture
def inner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a subprocess run find tdcheck through PYTHONPATH when it is not installed."""
    root = str(Path(checks.__file__).resolve().parents[1])
    # a user's own terminal: under CI=true Hypothesis picks its "ci" profile by itself
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
