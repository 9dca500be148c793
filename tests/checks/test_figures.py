"""The figure checks' machinery (checks.induction_head.figures, checks.plots): gradients, flows, plumbing."""

import math

import numpy as np
import pytest

from checks.induction_head import experiments as E
from checks.induction_head import figures as F
from checks.induction_head import stage2_runs as R
from checks.plots import Panel, Series, save_panels
from checks.registry import load_all


@pytest.mark.parametrize("init", ["c2", "eq4"])
@pytest.mark.parametrize("ptilde", [0.05, 0.7, 3.0])
def test_stage1_force_is_minus_the_derivative_of_the_stage1_loss(init, ptilde):
    from numerics.models.induction_head.sgd import Stage2Config, g4_loss_exact, initial_theta

    L, sigma = 12, 0.3
    config = Stage2Config(L=L, sigma=sigma, init=init, first_layer=ptilde)
    theta = initial_theta(config)

    def loss(pt):
        th = theta.copy()
        th[0] = pt
        return g4_loss_exact(th, config)

    step = 1e-5
    numeric = -(loss(ptilde + step) - loss(ptilde - step)) / (2 * step)
    assert E.stage1_force(np.array([ptilde]), L, sigma, 1.0, init)[0] == pytest.approx(numeric, rel=1e-6, abs=1e-12)


def test_stage1_trajectory_solves_the_flow():
    from scipy.integrate import solve_ivp

    L, sigma = 10, 0.1
    t, p = E.stage1_trajectory(L, sigma, 1.0, "c2", 5e3, n=8001)
    ref = solve_ivp(lambda _, y: E.stage1_force(y, L, sigma, 1.0, "c2"), (0, t[-1]), [sigma], rtol=1e-10,
                    atol=1e-12, dense_output=True)
    probe = np.linspace(0, t[-1], 7)
    np.testing.assert_allclose(np.interp(probe, t, p), ref.sol(probe)[0], rtol=1e-4)


@pytest.mark.slow  # 18 s cold: out of the default run, to keep it under 10 min
def test_ode_curve_carries_the_integrator_events():
    params = {p.name: p.default for p in R.MODEL_PARAMS}
    curve, events = R.ode_curve(params, "balanced", 5e3)
    assert curve.t[0] == 0.0 and np.all(np.diff(curve.t) > 0)
    assert set(events) >= {"T_I", "T_o", "T_III"}
    assert curve.params["w"][0] == pytest.approx(params["sigma"])


def test_ratio_bands_and_tolerance_decisions():
    from checks.phases import Hit

    r, lo, hi = R.ratio_band(Hit(2.0, 1.8, 2.2), Hit(1.0, 0.9, 1.1))
    assert (r, lo, hi) == pytest.approx((2.0, 1.8 / 1.1, 2.2 / 0.9))
    assert R.within(0.9, 1.1, 1.25) == "holds"
    assert R.within(1.3, 1.5, 1.25) == "fails"
    assert R.within(1.1, 1.4, 1.25) == "inconclusive"
    assert R.within(math.nan, 1.0, 1.25) == "inconclusive"
    assert R.combine(["holds", "inconclusive"]) == "inconclusive"
    assert R.combine(["holds", "fails"]) == "fails"


def test_save_panels_writes_a_png(tmp_path):
    t = np.geomspace(1, 100, 20)
    panel = Panel("demo", "y", [Series("a", t, 1 / t, 0.01 / t, {}), Series("b", t, 2 / t, None, {"ls": "--"})],
                  markers={"T": 10.0})
    path = save_panels([panel, panel], tmp_path / "demo.png", log_t=True)
    assert (tmp_path / "demo.png").stat().st_size > 1000 and path.endswith("demo.png")


@pytest.mark.slow
def test_a_run_too_short_to_leave_the_plateau_is_never_decided(tmp_path):
    ctx = load_all()["ih.fig1"].context({"iterations": 300, "batch": 20}, budget="quick", artifacts=tmp_path)
    outcome = F.check_fig1(ctx)
    assert outcome.status == "inconclusive"
    assert outcome.evidence["setup"]["iterations"] == 300
    assert all(p.endswith(".png") for p in outcome.figures)


@pytest.mark.parametrize("ptilde", [0.5, 2.0])
def test_g4_floor_is_the_minimum_over_p_and_g_of_the_exact_loss(ptilde):
    from scipy.optimize import minimize

    from numerics.models.induction_head.sgd import Stage2Config, g4_loss_exact, initial_theta

    L = 10
    config = Stage2Config(L=L, first_layer=ptilde)
    theta = initial_theta(config)

    def loss(x):
        th = theta.copy()
        th[1], th[2] = x
        return g4_loss_exact(th, config)

    floor, p_best = E.g4_floor(ptilde, L, 1.0)
    brute = min(minimize(loss, [p0, 0.5], method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-14}).fun
                for p0 in (0.0, 3.0, 10.0))
    assert floor == pytest.approx(brute, rel=1e-6, abs=1e-12)
    assert loss([p_best, 0.5]) >= floor
