"""The certified spectral-band search (checks.spectral_search) against answers known in closed form.

K = 2: E = [[0, a], [a, 0]] has spectrum ±a, so a matrix with ρ < ρ̄ and min|λ| >= μ exists iff μ < ρ̄.
K = 3: one positive eigenvalue ρ and two negative ones summing to −ρ (trace 0, Perron), so min|λ| <= ρ/2,
attained by the equal-weight triangle: a matrix exists iff μ < ρ̄/2. K = 4: a perfect matching has
spectrum ±a, so one exists iff μ < ρ̄.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.spectral_search import certify_no_spectrum_in_band
from derivations.errors import InvalidArgument

fractions = st.fractions(min_value=Fraction(1, 50), max_value=Fraction(1, 2), max_denominator=1000)


@settings(max_examples=30, deadline=None)
@given(rho_bar=fractions, ratio=st.fractions(min_value=Fraction(21, 20), max_value=Fraction(3), max_denominator=100))
def test_two_classes_certified_exactly_when_floor_exceeds_radius(rho_bar, ratio):
    floor = rho_bar * ratio
    certificate = certify_no_spectrum_in_band(2, rho_bar, floor * floor, max_boxes=5000)
    assert certificate.status == "certified"
    assert certificate.closed_by_radius + certificate.closed_by_modulus >= 1


@settings(max_examples=30, deadline=None)
@given(rho_bar=fractions, ratio=st.fractions(min_value=Fraction(1, 10), max_value=Fraction(19, 20), max_denominator=100))
def test_two_classes_counterexample_when_floor_is_below_radius(rho_bar, ratio):
    floor = rho_bar * ratio
    certificate = certify_no_spectrum_in_band(2, rho_bar, floor * floor, max_boxes=5000)
    assert certificate.status == "counterexample"
    spectrum = np.abs(certificate.example_spectrum)
    assert spectrum.max() < float(rho_bar) and spectrum.min() >= float(floor)


@pytest.mark.parametrize("K, sup_ratio", [(3, Fraction(1, 2)), (4, Fraction(1))])
def test_certified_just_above_the_supremum(K, sup_ratio):
    rho_bar = Fraction(1, K)
    floor = rho_bar * sup_ratio * Fraction(21, 20)
    assert certify_no_spectrum_in_band(K, rho_bar, floor * floor, max_boxes=50_000).status == "certified"


@pytest.mark.parametrize("K, sup_ratio", [(3, Fraction(1, 2)), (4, Fraction(1))])
def test_never_certified_below_the_supremum(K, sup_ratio):
    """Below the supremum a qualifying matrix exists, so a certificate would be false."""
    rho_bar = Fraction(1, K)
    floor = rho_bar * sup_ratio * Fraction(4, 5)
    assert certify_no_spectrum_in_band(K, rho_bar, floor * floor, max_boxes=3000).status != "certified"


def test_budget_is_counted_in_boxes_and_reproducible():
    args = (5, Fraction(1, 5), Fraction(36, 3000))
    first = certify_no_spectrum_in_band(*args, max_boxes=400)
    second = certify_no_spectrum_in_band(*args, max_boxes=400)
    assert first.status == "undecided" and first.boxes == 400
    assert first.to_dict() == second.to_dict()


@pytest.mark.parametrize("kwargs, words", [
    ({"K": 1}, "K must be an integer >= 2"),
    ({"radius_bound": Fraction(0)}, "radius_bound and modulus_floor_squared must be > 0"),
    ({"max_boxes": 0}, "max_boxes must be >= 1"),
])
def test_bad_input_is_refused_by_name(kwargs, words):
    call = {"K": 3, "radius_bound": Fraction(1, 3), "modulus_floor_squared": Fraction(1, 100), "max_boxes": 10}
    call.update(kwargs)
    with pytest.raises(InvalidArgument, match=words):
        certify_no_spectrum_in_band(call.pop("K"), call.pop("radius_bound"), call.pop("modulus_floor_squared"),
                                    **call)
