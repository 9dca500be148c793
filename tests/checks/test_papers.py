"""Per paper: the registry holds exactly the ids of its checklist copy, and the copy is the specification's."""

from pathlib import Path

import pytest

from checks.papers import PAPERS, paper, paper_of
from checks.registry import load_all

HERE = Path(__file__).parent
SHARED = HERE.parents[2] / "shared"


def _checklist(prefix: str) -> list[str]:
    lines = (HERE / "checklists" / f"{prefix}.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("prefix", sorted(PAPERS))
def test_registry_equals_the_checklist(prefix):
    registered = {cid for cid in load_all() if cid.startswith(prefix + ".")}
    wanted = set(_checklist(prefix))
    assert sorted(wanted - registered) == [], "checklist ids not registered"
    assert sorted(registered - wanted) == [], "registered ids not in the checklist"


def _partial(prefix: str) -> bool:
    """A copy marked '# partial' lists the ids of the parts landed so far."""
    return "# partial" in (HERE / "checklists" / f"{prefix}.txt").read_text()


@pytest.mark.parametrize("prefix", sorted(PAPERS))
def test_checklist_copy_is_the_specification(prefix):
    """The copy is the spec's deliverables list, in order (a partial copy: a sub-list of it)."""
    spec = paper(prefix).spec_path(SHARED)
    if not spec.exists():
        pytest.skip(f"the specification {spec} is not beside this clone")
    deliverables = paper(prefix).deliverables(spec.read_text())
    copy = _checklist(prefix)
    if _partial(prefix):
        assert [d for d in deliverables if d in copy] == copy, "copy not a sub-list of the specification's"
    else:
        assert copy == deliverables


def test_every_claim_belongs_to_a_registered_paper():
    for cid, claim in load_all().items():
        assert paper_of(cid).prefix == claim.paper


def test_descriptors_are_complete():
    for descriptor in PAPERS.values():
        assert descriptor.spec.endswith(".md") and descriptor.title and descriptor.reference
        names = descriptor.symbol_names()
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in names.items())
        assert all(values for values in descriptor.readings.values())


def test_unknown_prefix_lists_the_papers():
    from derivations.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="ih"):
        paper("zz")
