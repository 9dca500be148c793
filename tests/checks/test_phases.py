"""The generic phase primitives (checks.phases): known answers on synthetic curves and invariances."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks.phases import Curve, first_crossing, log_slope, plateaus, ratios, threshold_hit
from derivations.errors import InvalidArgument


def test_log_slope_of_a_power_law_is_its_exponent():
    t = np.geomspace(1e-2, 1e3, 300)
    for k in (-2.0, -0.5, 0.0, 1.3):
        np.testing.assert_allclose(log_slope(t, 3.0 * t**k), k, atol=1e-10)


def test_first_crossing_interpolates_linearly():
    t = np.arange(0.0, 11.0)
    y = 10.0 - t
    assert first_crossing(t, y, 2.5, -1) == pytest.approx(7.5)
    assert first_crossing(t, -y, -2.5, +1) == pytest.approx(7.5)
    assert first_crossing(t, y, 2.5, -1, after=8.0) == pytest.approx(9.0)  # already below: first sample after
    assert math.isnan(first_crossing(t, y, -1.0, -1))


def _staircase(t):
    """log10 y = 0 up to t = 10, slope -2 on [10, 100], flat at 1e-2 on [100, 1e4], slope -3 after."""
    x = np.log10(t)
    z = np.where(x < 1, 0.0, np.where(x < 2, -2 * (x - 1), np.where(x < 4, -2.0, -2.0 - 3 * (x - 4))))
    return 10.0**z


def test_plateaus_of_a_staircase():
    t = np.geomspace(1e-1, 1e5, 2000)
    found = plateaus(t, _staircase(t))
    assert len(found) == 2
    # the 0.1-decade slope window blurs each corner by at most half a window (0.05 decade)
    assert found[0].start == pytest.approx(0.1) and abs(math.log10(found[0].end) - 1) <= 0.05
    assert abs(math.log10(found[1].start) - 2) <= 0.05 and abs(math.log10(found[1].end) - 4) <= 0.05
    assert found[1].level == pytest.approx(1e-2, rel=0.02)


def test_a_short_flat_stretch_is_no_plateau():
    t = np.geomspace(1.0, 1e3, 1000)
    x = np.log10(t)
    y = 10.0 ** np.where(np.abs(x - 1.5) < 0.075, -1.5, -x)  # 0.15 decade flat: too short
    assert plateaus(t, y) == [] or all(p.decades < 0.2 for p in plateaus(t, y, min_decades=0.0))


@given(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_plateaus_are_equivariant_under_rescaling(time_scale, loss_scale):
    t = np.geomspace(1e-1, 1e5, 800)
    base = plateaus(t, _staircase(t))
    scaled = plateaus(time_scale * t, loss_scale * _staircase(t))
    assert len(scaled) == len(base)
    for a, b in zip(base, scaled, strict=True):
        assert b.start == pytest.approx(time_scale * a.start, rel=1e-9)
        assert b.end == pytest.approx(time_scale * a.end, rel=1e-9)
        assert b.level == pytest.approx(loss_scale * a.level, rel=1e-9)


def test_threshold_hit_brackets_the_crossing_by_the_standard_errors():
    t = np.arange(0.0, 11.0)
    y = 10.0 - t
    assert threshold_hit(t, y, None, 2.5, -1).to_dict() == {"t": 7.5, "lo": 7.5, "hi": 7.5}
    hit = threshold_hit(t, y, np.full(t.size, 0.5), 2.5, -1)
    # y - 2 SE reaches 2.5 one unit earlier, y + 2 SE one unit later
    assert (hit.lo, hit.t, hit.hi) == pytest.approx((6.5, 7.5, 8.5))
    assert math.isnan(threshold_hit(t, y, None, -1.0, -1).t)


def test_curve_total_sums_the_named_losses_and_skips_standard_errors():
    t = np.array([0.0, 1.0, 2.0])
    a, b = np.array([3.0, 2.0, 1.0]), np.array([0.5, 0.25, 0.125])
    curve = Curve("c", t, {"a": a, "b": b, "a_se": 0.1 * a})
    np.testing.assert_array_equal(curve.total(), a + b)
    np.testing.assert_array_equal(curve.total("a"), a)
    np.testing.assert_array_equal(curve.se("a"), 0.1 * a)
    with pytest.raises(InvalidArgument, match="no loss 'c'"):
        curve.total("c")
    with pytest.raises(InvalidArgument, match="strictly increasing"):
        Curve("bad", t[::-1], {"a": a})


def test_generic_ratios_follow_the_names_given_or_both_mappings():
    assert ratios({"x": 2.0, "y": 1.0}, {"x": 4.0, "z": 1.0}).keys() == {"x", "y", "z"}
    r = ratios({"x": 2.0, "y": 1.0}, {"x": 4.0, "y": 0.0}, names=("y", "x", "w"))
    assert list(r) == ["y", "x", "w"]
    assert r["x"] == 0.5 and math.isnan(r["y"]) and math.isnan(r["w"])
