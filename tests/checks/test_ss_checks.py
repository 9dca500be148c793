"""The ss items as checks: pins reach the second methods, bad pins are refused, replay is bit for bit."""

import json

import pytest

from checks.registry import load_all
from derivations.errors import InvalidArgument


@pytest.fixture(scope="module")
def registry():
    return load_all()


def test_a_pinned_M_reaches_the_numeric_second_method(registry):
    verdict = registry["ss.lemma8.roots"].run({"M": 100})
    records = verdict.evidence["numeric"]["records"]
    assert [r["M"] for r in records] == [100]
    points = [f for f in verdict.evidence["formulas"].values()]
    assert points and all(f["status"] in ("exact", "numeric", "differs") for f in points)


def test_a_pin_outside_the_domain_names_the_parameter(registry):
    with pytest.raises(InvalidArgument, match="M"):
        registry["ss.lemma8.roots"].run({"M": 2})
    with pytest.raises(InvalidArgument, match="etaY"):
        registry["ss.dv.lambertw"].run({"etaY": -1})


def test_replay_reproduces_the_verdict_bit_for_bit(registry):
    first = registry["ss.thm4.B_closed"].run({"rho0": 2}, seed=3)
    again = registry["ss.thm4.B_closed"].run({"rho0": 2}, seed=3)
    assert json.dumps(first.evidence, sort_keys=True, default=str) == json.dumps(again.evidence, sort_keys=True,
                                                                                 default=str)
    assert "--param rho0=2" in first.replay and "--seed 3" in first.replay


def test_matrix_items_report_every_reading(registry):
    verdict = registry["ss.lemma16.diag_identity"].run()
    readings = {tuple(sorted(f.get("reading", {}).items())) for f in verdict.evidence["formulas"].values()}
    assert (("eprime", "appB1"), ("u_index", "row")) in readings
    assert verdict.evidence["families"]["zero_diagonal"] > 100
