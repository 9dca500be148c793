"""Theorem 4's phases at the scalar level: the quantities behind ss.thm4.scan_phase / snap_phase against first
principles (B_n(0) = 0 while L206 starts at ¼ln(ρ₀⁴/K); B_n = ½ln ln t + O(1), so B_n/ln ln t → ½)."""

import math

import numpy as np
import pytest

from checks.registry import load_all
from checks.scan_snap.phase_claims import scan_printed
from checks.scan_snap.snap_items import integrated_B
from checks.scan_snap.surrogate_claims import B_closed, B_of_h
from numerics.models.scan_snap.scalar import h_of_log_tau


@pytest.fixture(scope="module")
def registry():
    return load_all()


@pytest.mark.parametrize("rho0", [1.0, 3.0])
def test_printed_scan_form_misses_B_by_its_value_at_zero(rho0):
    K, M, etaY, etaZ = 10.0, 1e8, 0.5, 0.5
    t = np.array([1e-8, 1e-6])  # B_n = O(t²)
    B = integrated_B(M, K, etaY, etaZ, rho0, t)
    np.testing.assert_allclose(B, 0.0, atol=1e-9)
    np.testing.assert_allclose(scan_printed(t, M, K, etaY, etaZ, rho0, None) - B, math.log(rho0**4 / K) / 4,
                               atol=1e-9)


def test_B_from_log_tau_equals_the_closed_form_in_t():
    K, M, etaY, etaZ, rho0 = 10.0, 1e3, 2.0, 0.5, 1.0
    t = np.logspace(1, 250, 30)
    from_log = B_of_h(np.array([h_of_log_tau(math.log(etaY * v / K), M) for v in t]), M, K, etaY, etaZ, rho0)
    np.testing.assert_allclose(from_log, B_closed(t, M, K, etaY, etaZ, rho0), rtol=1e-13)


def test_snap_phase_limit_is_one_half(registry):
    verdict = registry["ss.thm4.snap_phase"].run({"rho0": 1.0, "etaY": 0.5})
    decision = verdict.evidence["parts"]["B_O_lnln"]["decision"]
    limits = [s["r_inf"] for s in decision["slices"] if s["behaviour"] == "limit"]
    assert limits and all(abs(r - 0.5) < 0.05 for r in limits)
    fits = verdict.evidence["parts"]["grows"]["fits"]
    assert all(0 < f["low"] and f["high"] < 0.6 for f in fits)


def test_scan_phase_reports_the_gap_of_the_dropped_lower_limit(registry):
    verdict = registry["ss.thm4.scan_phase"].run({"rho0": 3.0, "etaY": 0.5})
    record = verdict.evidence["parts"]["B_printed"]["records"][0]
    # at the window start t = 1, B_n is still ≈ ¼ln(1 + 2η_Yη_Z/ρ₀⁴) and L206 ≈ ¼ln((ρ₀⁴ + 2η_Yη_Z)/K)
    assert record["gap_at_window_start"][-1] == pytest.approx(abs(math.log(81 / 10)) / 4, rel=1e-3)
    assert record["max_gap"][-1] >= record["gap_at_window_start"][-1]
