"""checks.scaling: known power laws are recognised; drifts are caught; noise widens the intervals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.scaling import loglog_fit, scaling_fit
from derivations.errors import InvalidArgument


def _grid():
    L, s = np.meshgrid([40.0, 400.0, 4000.0], [2.0, 4.0, 8.0, 16.0], indexing="ij")
    return L.ravel(), s.ravel()


@given(c=st.floats(0.01, 100), a=st.floats(-3, 3), b=st.floats(-3, 3))
@settings(max_examples=30)
def test_exact_power_law_recovers_exponents(c, a, b):
    L, s = _grid()
    slopes, const, dof = loglog_fit(c * L**a * s**b, {"L": L, "s": s})
    assert dof == L.size - 3
    assert slopes["L"].estimate == pytest.approx(a, abs=1e-9)
    assert slopes["s"].estimate == pytest.approx(b, abs=1e-9)
    assert const == pytest.approx(c, rel=1e-9)


def test_theta_holds_for_a_constant_times_the_rate_with_noise():
    L, s = _grid()
    rng = np.random.default_rng(1)
    observed = 3.0 * L * s * np.exp(0.02 * rng.standard_normal(L.size))
    fit = scaling_fit(observed, L * s, {"L": L, "s": s}, form="Theta")
    assert fit.status == "holds", fit.reason
    assert 2.8 < fit.band[0] <= fit.band[1] < 3.2
    assert fit.exponents["L"].low < 1 < fit.exponents["L"].high


def test_theta_fails_when_the_ratio_drifts():
    L, s = _grid()
    fit = scaling_fit(L**1.5 * s, L * s, {"L": L, "s": s}, form="Theta")
    assert fit.status == "fails"
    assert "L" in fit.reason
    assert fit.trend["L"] == pytest.approx(100**0.5)


def test_O_holds_for_a_shrinking_ratio_and_Omega_fails_for_it():
    L, s = _grid()
    assert scaling_fit(L**0.5, L, {"L": L, "s": s}, form="O").status == "holds"
    assert scaling_fit(L**0.5, L, {"L": L, "s": s}, form="Omega").status == "fails"


def test_wrong_sign_fails_theta_and_unreached_points_are_excluded():
    L, s = _grid()
    obs = L.copy()
    obs[0] = -1.0
    assert scaling_fit(obs, L, {"L": L}, form="Theta").status == "fails"
    obs[0] = np.nan
    fit = scaling_fit(obs, L, {"L": L, "s": s})
    assert fit.excluded == 1 and fit.status == "holds"


def test_an_observable_reached_nowhere_is_inconclusive_with_an_empty_band():
    # e.g. a rate defined for one reading only: every point NaN; the evidence must still be writable
    L, s = _grid()
    fit = scaling_fit(np.full(L.size, np.nan), L, {"L": L, "s": s})
    assert fit.status == "inconclusive" and fit.excluded == L.size
    assert all(np.isnan(fit.band))
    assert fit.evidence()["excluded_points"] == L.size and "over 0 points" in fit.summary()


def test_scatter_too_large_is_inconclusive():
    L = np.array([40.0, 400.0, 40.0, 400.0])
    fit = scaling_fit(np.array([1.0, 3.0, 3.0, 1.0]) * L, L, {"L": L})
    assert fit.status == "inconclusive"


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidArgument, match="form"):
        scaling_fit([1.0], [1.0], {}, form="theta")
    with pytest.raises(InvalidArgument, match="rate"):
        scaling_fit([1.0, 2.0], [1.0, 0.0], {"L": [1.0, 2.0]})
    with pytest.raises(InvalidArgument, match="regressor 'L'"):
        loglog_fit([1.0, 2.0], {"L": [1.0, -2.0]})


def test_a_small_drift_on_a_narrow_axis_is_inconclusive_not_fails():
    """Ratio ∝ w*^0.3 over w* ∈ [0.3, 0.49] changes by only 1.16×: too little to call a drift."""
    w = np.array([0.3, 0.35, 0.4, 0.45, 0.49] * 3)
    L = np.repeat([40.0, 400.0, 4000.0], 5)
    fit = scaling_fit(L * w**0.3, L, {"L": L, "wstar": w})
    assert fit.slopes["wstar"].low > 0.15
    assert fit.status == "inconclusive"
    assert scaling_fit(L * w**0.3, L, {"L": L, "wstar": w}, min_change=1.1).status == "fails"
