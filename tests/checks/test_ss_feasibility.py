"""ss.dv.asm2_feasibility: the derived boundaries (known answers) and the check's two sides at each K."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.registry import load_all
from checks.scan_snap.feasibility import boundaries, middle_eigenvalue_ratios
from derivations.errors import InvalidArgument
from numerics.models.scan_snap.matrices import matching_triangle_E


@pytest.mark.parametrize("K, general, family", [
    (2, 144, 144),            # E = [[0, a], [a, 0]]: a ∈ [6/√M, 1/2)
    (3, 1296, 1296),          # min|λ| <= ρ/2 (trace 0, Perron), the triangle attains it
    (4, 576, 576 * 9),
    (5, 3600, 900 * 16),      # 144·25; 36·25·16
])
def test_boundaries(K, general, family):
    b = boundaries(K)
    assert (b["general"], b["equal_overlap"]) == (general, family)
    assert isinstance(b["general"], Fraction)


@settings(max_examples=200, deadline=None)
@given(k=st.integers(1, 4), seed=st.integers(0, 2**32 - 1), density=st.floats(0.1, 1.0), power=st.floats(0.2, 6.0))
def test_middle_eigenvalue_of_odd_order_is_at_most_half_the_radius(k, seed, density, power):
    """The lemma behind the odd-K boundary: |λ_{k+1}(E)| <= ρ(E)/2 for non-negative zero-diagonal E of order 2k+1."""
    K = 2 * k + 1
    rng = np.random.default_rng(seed)
    E = np.triu(rng.uniform(0, 1, (K, K)) ** power * (rng.uniform(0, 1, (K, K)) < density), 1)
    lam = np.sort(np.linalg.eigvalsh(E + E.T))
    assert abs(lam[k]) <= np.max(np.abs(lam)) / 2 * (1 + 1e-12) + 1e-15


@pytest.mark.parametrize("K", [5, 7])
def test_the_extremal_matrix_attains_one_half(K):
    ratios = middle_eigenvalue_ratios(K, 40, seed=0)
    assert ratios.max() <= 0.5 + 1e-12
    lam = np.sort(np.linalg.eigvalsh(matching_triangle_E(K, 0.1)))
    assert abs(lam[K // 2]) == pytest.approx(np.max(np.abs(lam)) / 2, rel=1e-14)


@pytest.fixture(scope="module")
def claim():
    return load_all()["ss.dv.asm2_feasibility"]


def test_both_sides_of_each_boundary(claim):
    verdict = claim.run({"K": 5, "search_K": 5, "boxes": 50})
    (row,) = verdict.evidence["per_K"]
    above = row["construction_above"]
    assert above["M"] == 3601 and above["admissible_and_inside"]
    assert above["margin_1_over_K"] > 0 and above["margin_6_over_sqrtM"] >= 0
    # a 50-box budget cannot close K = 5 (10 entries): the search says so instead of certifying
    assert row["search_below"]["status"] == "undecided" and row["search_below"]["M"] == 3240
    assert row["middle_eigenvalue_falsification"]["holds"]
    assert verdict.status == "inconclusive"
    assert "thm_hyp.ct1" in verdict.evidence["configurations"]


def test_a_bad_fraction_is_refused(claim):
    with pytest.raises(InvalidArgument, match="below_fraction"):
        claim.run({"below_fraction": 1.5})
