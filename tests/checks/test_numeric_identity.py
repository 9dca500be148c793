"""The numeric-identity kind: known identities hold, known factors are found, NaN/inf are reported."""

import json

import mpmath
import pytest
import sympy as sp
from mpmath import mp

from checks.numeric_identity import DIFFERS, EXACT, NON_FINITE, compare, sample_points
from derivations.domain import Domain, Interval
from derivations.errors import InvalidArgument


def f(x):
    return 1 / (1 + mp.exp(x))


def test_an_identity_that_holds_is_exact_within_precision():
    record = compare(lambda x: f(x) - f(-x), lambda x: -mp.tanh(x / 2), domain={"x": (-20, 20)}, n_points=16)
    assert record.status == EXACT and record.holds
    assert record.counterexample is None and record.n_points == 16
    assert record.max_relative_difference <= record.rtol == pytest.approx(1e-50)
    assert record.constant_ratio == pytest.approx(1.0)
    json.dumps(record.to_dict())


def test_a_factor_at_some_points_is_a_counterexample_with_both_values():
    def printed(x):
        return 2 * x**2 if x > 1 else x**2

    record = compare(printed, lambda x: x**2, points=[{"x": 0.5}, {"x": 1.5}, {"x": 0.25}])
    assert record.status == DIFFERS and not record.holds
    assert record.counterexample["point"] == {"x": 1.5}
    assert mpmath.mpf(record.counterexample["printed"]) == 2 * mpmath.mpf(record.counterexample["derived"])
    assert record.max_relative_difference == pytest.approx(0.5)
    assert record.ratio_range == (1.0, 2.0) and record.constant_ratio is None


def test_a_constant_factor_is_named():
    record = compare(lambda a, b: 2 * a * b, lambda a, b: a * b, domain={"a": (0.1, 3), "b": [1, 2, 3]},
                     n_points=9)
    assert record.status == DIFFERS and record.constant_ratio == pytest.approx(2.0)


def test_nan_and_inf_are_reported_not_hidden():
    record = compare(lambda x: 1 / x, lambda x: 1 / x, points=[{"x": 0}, {"x": 2}])
    assert record.status == NON_FINITE and not record.holds
    assert record.non_finite[0]["point"] == {"x": 0}
    assert "ZeroDivisionError" in record.non_finite[0]["printed"]
    inf = compare(lambda x: mp.inf, lambda x: x, points=[{"x": 1}])
    assert inf.status == NON_FINITE and inf.non_finite[0]["printed"] == "+inf"
    complex_value = compare(lambda x: mp.log(x), lambda x: x, points=[{"x": -1}])
    assert complex_value.status == NON_FINITE and "complex" in complex_value.non_finite[0]["printed"]
    # a finite counterexample still decides, and the undefined point stays in the record
    both = compare(lambda x: 1 / x, lambda x: 2 / x, points=[{"x": 0}, {"x": 1}])
    assert both.status == DIFFERS and len(both.non_finite) == 1


def test_rounding_around_zero_is_told_apart_from_a_difference():
    # √x² − x is 0, but at 60 digits only up to rounding (x = 1.1: 1.6e-61): the 120-digit
    # re-evaluation settles it
    points = [{"x": x} for x in (0.3, 0.7, 1.1, 2.9, 5.5)]
    exact = compare(lambda x: mp.sqrt(x) ** 2 - x, lambda x: 0, points=points)
    assert exact.status == EXACT and exact.rounding_points >= 1
    # a callable that rounds to float64 inside is never rescued
    float_inside = compare(lambda x: mp.mpf(float(mp.sqrt(x))) ** 2, lambda x: x, points=[{"x": 0.3}])
    assert float_inside.status == DIFFERS and 1e-18 < float_inside.max_relative_difference < 1e-15


def test_inputs_reach_the_callables_exactly():
    seen = []
    compare(lambda x: seen.append(x) or x, lambda x: x, points=[{"x": 0.1}], dps=80)
    with mp.workdps(80):
        assert seen[0] == mpmath.mpf(0.1) and seen[0] != mpmath.mpf("0.1")  # the float's binary value
        third = []
        compare(lambda x: third.append(+x) or x, lambda x: x, points=[{"x": sp.Rational(1, 3)}], dps=80)
        assert abs(third[0] - mpmath.mpf(1) / 3) < mpmath.mpf(10) ** -75


def test_domains_of_every_form_and_reproducible_draws():
    domain = {"lam": Interval(0.1, 1e4, scale="log"), "L": range(2, 5), "c": 3.0, "x": (-1, 1)}
    points = sample_points(domain, 6, seed=4)
    assert points == sample_points(domain, 6, seed=4) and points != sample_points(domain, 6, seed=5)
    assert [p["L"] for p in points] == [2, 3, 4, 2, 3, 4] and all(p["c"] == 3.0 for p in points)
    assert all(0.1 <= p["lam"] <= 1e4 and -1 < p["x"] < 1 for p in points)
    y = sp.Symbol("y", positive=True)
    named = sample_points(Domain({y: Interval(0, 2)}), 3)
    assert all(set(p) == {"y"} and 0 < p["y"] < 2 for p in named)


def test_bad_settings_are_refused_by_name():
    with pytest.raises(InvalidArgument, match="dps=10"):
        compare(lambda x: x, lambda x: x, points=[{"x": 1}], dps=10)
    with pytest.raises(InvalidArgument, match="no points"):
        compare(lambda x: x, lambda x: x)
    with pytest.raises(InvalidArgument, match="lo < hi"):
        compare(lambda x: x, lambda x: x, domain={"x": (1, 1)})
