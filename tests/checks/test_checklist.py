"""The ih registry is exactly the specification's checklist (spec §11), no more and no less."""

import re
from pathlib import Path

import pytest

from checks.registry import load_all

HERE = Path(__file__).parent
SPEC = HERE.parents[2] / "shared" / "spec" / "induction-head.md"


def _checklist() -> list[str]:
    lines = (HERE / "ih_checklist.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_registry_equals_the_checklist():
    registered = {cid for cid in load_all() if cid.startswith("ih.")}
    wanted = set(_checklist())
    assert sorted(wanted - registered) == [], "checklist ids not registered"
    assert sorted(registered - wanted) == [], "registered ids not in the checklist"


@pytest.mark.skipif(not SPEC.exists(), reason="the specification is not beside this clone")
def test_checklist_copy_matches_the_specification():
    text = SPEC.read_text()
    section = text[text.index("## 11. Deliverables"):]
    assert re.findall(r"^- \[ \] (ih\.[A-Za-z0-9_.]+)", section, re.M) == _checklist()
