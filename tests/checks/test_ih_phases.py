"""The induction-head phases (checks.induction_head.phases, spec §6): hitting times and the four phases."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from checks.induction_head.phases import HITTING_TIMES, detect_phases, hitting_times, ratios
from checks.phases import Curve


def _h(t):
    """Rises to ~0.6 by t ~ 100, keeps creeping up until t = 1800, then falls."""
    rise = 0.6 * (1 - np.exp(-t / 30.0)) * (1 + np.minimum(t, 1800.0) / 1e4)
    return rise * np.exp(-np.maximum(t - 1800.0, 0.0) / 1e3)


def _four_phase_curve(end: float = 1e4, noise: float = 0.0):
    """A synthetic Stage-II run: L_G4 decays by t ~ 10, L_IH2 plateaus, emerges near t = 2000, then decays."""
    t = np.concatenate([[0.0], np.geomspace(1.0, end, 1500)])
    g4 = 0.25 * np.exp(-t / 2.0) + 1e-6
    ih = 0.003 * (1 - 0.9 * (1 - np.exp(-t / 30.0))) * np.exp(-np.maximum(t - 1500.0, 0.0) / 100.0) + 1e-9
    rng = np.random.default_rng(0)
    ih = ih * (1 + noise * rng.standard_normal(t.size))
    g = 0.5 * (1 - np.exp(-t / 3.0))
    h = _h(t)
    w = np.minimum(0.01 * np.exp(t / 400.0), 0.49)
    losses = {"L_G4": g4, "L_IH2": ih, "L_IH2_se": noise * ih}
    return Curve("synthetic", t, losses, {"p": np.log1p(t), "g": g, "h": h, "w": w})


def test_hitting_times_of_a_synthetic_run_match_their_definitions():
    curve = _four_phase_curve()
    hits = hitting_times(curve, gstar=0.25, hstar=0.5, wstar=0.49)
    assert hits["T_1g"].t == pytest.approx(3.0 * math.log(2.0), rel=1e-3)  # 0.5(1 - e^{-t/3}) = 0.25
    assert hits["T_I"].t == pytest.approx(2.0 * math.log(100.0), rel=1e-2)
    assert hits["T_o"].t == pytest.approx(brentq(lambda x: _h(x) - 0.5, 1.0, 1000.0), rel=1e-3)
    assert hits["T_w_half"].t == pytest.approx(400.0 * math.log(24.5), rel=1e-3)
    assert hits["T_2h"].t == pytest.approx(1800.0, rel=0.01)
    level_o = 0.003 * (1 - 0.9 * (1 - 1 / 6.0))
    t3 = 1500.0 + 100.0 * math.log(0.003 * 0.1 / (0.01 * level_o))  # e^{-t/30} ~ 0 there
    assert hits["T_III"].t == pytest.approx(t3, rel=1e-3)


def test_four_phases_are_detected_in_order():
    phases = detect_phases(_four_phase_curve(), gstar=0.25, hstar=0.5, wstar=0.49)
    assert phases.present == {"I": True, "II": True, "III": True, "IV": True}
    assert phases.ordered and phases.count == 4
    assert 1500 <= phases.steepest <= phases.hits["T_III"].t


def test_noisy_losses_give_brackets_around_the_crossing():
    phases = detect_phases(_four_phase_curve(noise=0.01), gstar=0.25, hstar=0.5, wstar=0.49)
    hit = phases.hits["T_III"]
    assert hit.lo <= hit.t <= hit.hi
    assert phases.present["II"]


def test_a_run_stopped_on_the_plateau_has_no_emergence():
    phases = detect_phases(_four_phase_curve(end=1200.0), gstar=0.25, hstar=0.5, wstar=0.49)
    assert phases.present["I"] and phases.present["II"]
    assert not phases.present["III"] and not phases.present["IV"] and not phases.ordered
    assert any("never fell to 1%" in r for r in phases.reasons)


def test_ratios_skip_missing_times():
    r = ratios({"T_o": 2.0, "T_III": math.nan}, {"T_o": 4.0, "T_III": 3.0})
    assert r["T_o"] == 0.5 and math.isnan(r["T_III"]) and math.isnan(r["T_1g"])
    assert tuple(r) == HITTING_TIMES


def test_known_event_times_replace_logged_crossings():
    """An ODE's exact event times (root-found on the dense output) override the interpolated ones."""
    curve = _four_phase_curve()
    exact = detect_phases(curve, gstar=0.25, hstar=0.5, wstar=0.49, known={"T_III": 1870.0, "T_o": math.nan})
    logged = detect_phases(curve, gstar=0.25, hstar=0.5, wstar=0.49)
    assert exact.hits["T_III"].t == 1870.0
    assert exact.hits["T_o"].t == logged.hits["T_o"].t  # NaN entries are ignored
