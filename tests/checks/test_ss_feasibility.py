"""ss.dv.asm2_feasibility: the derived boundaries (known answers) and the check's two sides at each K."""

from fractions import Fraction

import pytest

from checks.registry import load_all
from checks.scan_snap.feasibility import boundaries
from derivations.errors import InvalidArgument


@pytest.mark.parametrize("K, infeasible, feasible, family", [
    (2, 144, 144, 144),            # E = [[0, a], [a, 0]]: a ∈ [6/√M, 1/2)
    (3, 1296, 1296, 1296),         # min|λ| <= ρ/2 (trace 0, Perron), the triangle attains it
    (4, 576, 576, 576 * 9),
    (5, 2025, 3600, 900 * 16),     # 36·25·(6/4)²; 144·25
])
def test_boundaries(K, infeasible, feasible, family):
    b = boundaries(K)
    assert (b["infeasible_up_to"], b["feasible_above"], b["equal_overlap"]) == (infeasible, feasible, family)
    assert b["settled"] == (infeasible == feasible)
    assert isinstance(b["infeasible_up_to"], Fraction)


@pytest.fixture(scope="module")
def claim():
    return load_all()["ss.dv.asm2_feasibility"]


def test_both_sides_of_each_boundary(claim):
    verdict = claim.run({"K": 3, "search_K": 3})
    (row,) = verdict.evidence["per_K"]
    above = row["construction_above"]
    assert above["M"] == 1297 and above["admissible_and_inside"]
    assert above["margin_1_over_K"] > 0 and above["margin_6_over_sqrtM"] >= 0
    assert row["search_below"]["status"] == "certified" and row["search_below"]["M"] == 1166
    assert verdict.status == "holds"
    assert "thm_hyp.ct1" in verdict.evidence["configurations"]


def test_a_bad_fraction_is_refused(claim):
    with pytest.raises(InvalidArgument, match="below_fraction"):
        claim.run({"below_fraction": 1.5})
