"""The Stage-II (h, w) flow in every mode and the G_IH grid runner.

Known answers: the runner equals single ``integrate`` calls bit for bit; the softmaxLL flow equals
-∂ of the spec's large-L formula (an independent printed route); the velocity kernel is -∂L by
central differences; T_1^h of the ODE agrees with (L-2) ln(1/(1-√(1-w*⁴))) within the spec's band.
"""

import math

import numpy as np
import pytest

from numerics.models.induction_head import stage2 as st
from numerics.models.induction_head.sweeps import run_grid
from numerics.ode import integrate

POINTS = [{"L": 40, "alpha": 1.0, "wstar": 0.49, "sigma": 0.01, "mode": "paper"},
          {"L": 40, "alpha": 4.0, "wstar": 0.3, "sigma": 1e-4, "mode": "softmaxLL"}]


def test_grid_runner_equals_single_integrate_calls():
    res = run_grid(POINTS, n_log=50, memo=False)
    for i, point in enumerate(res.points):
        y0, params, extra = st.ih_initial(point["L"], point["alpha"], point["wstar"], point["sigma"],
                                          ih_loss=point["ih_loss"])
        field = st.ih_flow(point["flow"], "canonical", point["ih_loss"])
        sol = integrate(field, y0, (0.0, 60.0), params, tol=st.ih_tolerance(1e-10, 1e-13), save_at=res.tau,
                        max_steps=5 * 10**7)
        assert res.events["T_III"][i] == sol.event_times["T_III"] * extra["S"]
        n = sol.t.size
        assert np.array_equal(res.h[i, :n], sol.y[:, 0])
        assert np.all(np.isnan(res.h[i, n:]))
        run = res.trajectory(i)  # the same run as the toolkit's trajectory type
        assert np.array_equal(run["h"], sol.y[:, 0]) and np.array_equal(run.t, res.tau[:n] * extra["S"])
        assert run.event("T_III") == res.events["T_III"][i] and run.meta["L"] == point["L"]


def test_loss_at_an_event_is_the_loss_kernel_at_the_event_state_of_each_reading():
    # two loss readings in one sweep (one kernel call each) against the kernel at one point at a time;
    # an event that never fires (a horizon before T_III) is NaN, not a loss
    res = run_grid(POINTS, n_log=50, memo=False)
    for event in ("T_o", "T_III"):
        got = res.loss_at(event)
        for i, point in enumerate(res.points):
            kernel = st.ih_loss_kernel(point["ih_model_range"], point["ih_loss"], point["tokens"])
            h, w = res.event_h[event][i], res.event_w[event][i]
            assert got[i] == float(kernel(h, math.log(w), float(point["L"]), point["alpha"], point["wstar"]))
    short = run_grid(POINTS, n_log=50, horizon=1e-3, memo=False)
    assert np.all(np.isnan(short.events["T_III"])) and np.all(np.isnan(short.loss_at("T_III")))


def test_scaled_head_block_reproduces_the_four_variable_flow():
    res = run_grid(POINTS[:1], n_log=50, memo=False)
    sol, _ = st.stage2_run(40, 1.0, 0.49, 0.01)
    for event in ("T_o", "T_2h", "T_w_half", "T_II", "T_III"):
        assert res.events[event][0] == pytest.approx(sol.event_times[event], rel=1e-7)


def test_softmaxLL_velocity_is_minus_the_gradient_of_the_spec_formula():
    L, alpha, wstar, h, w = 40.0, 1.0, 0.45, 0.3, 0.2
    hs, v, vs = 1 / (1 + alpha), w**2, wstar**2

    def loss(h_, w_):  # spec ih.dv.softmax_loss, written out independently
        v_ = w_**2
        return (hs**2 / math.sqrt(1 - 2 * vs**2) + h_**2 / math.sqrt(1 - 2 * v_**2)
                - 2 * h_ * hs / math.sqrt(1 - 2 * v_ * vs)) / (2 * (L - 2))

    eps = 1e-6
    dh_fd = -(loss(h + eps, w) - loss(h - eps, w)) / (2 * eps)
    dw_paper_fd = -(loss(h, w + eps) - loss(h, w - eps)) / (2 * eps)
    for flow, factor in (("paper", 1.0), ("balanced", 0.5)):
        _, _, dh, dw = st.stage2_velocity(flow, ih_loss="softmax_largeL")(0.1, 0.1, h, w, L, alpha, wstar)
        assert float(dh) == pytest.approx(dh_fd, rel=1e-7)
        assert float(dw) == pytest.approx(factor * dw_paper_fd, rel=1e-7)
    assert v > 0


def test_velocity_kernel_is_minus_the_gradient_of_eq10():
    L, alpha, wstar, h, w = 12.0, 1.0, 0.49, 0.4, 0.3
    hs = 1 / (1 + alpha)

    def eq10(h_, w_):
        return ((1 - 4 * wstar**4) ** -0.5 * hs**2 + h_**2 * (1 - 4 * w_**4) ** -0.5
                - 2 * h_ * hs * (1 - (w_**2 + wstar**2) ** 2) ** -0.5) / (2 * (L - 2))

    eps = 1e-6
    _, _, dh, dw = st.stage2_velocity("paper")(0.2, 0.3, h, w, L, alpha, wstar)
    assert float(dh) == pytest.approx(-(eq10(h + eps, w) - eq10(h - eps, w)) / (2 * eps), rel=1e-7)
    assert float(dw) == pytest.approx(-(eq10(h, w + eps) - eq10(h, w - eps)) / (2 * eps), rel=1e-7)


@pytest.mark.parametrize("wstar", [0.3, 0.49])
def test_first_rise_of_h_matches_the_linear_formula_at_small_sigma(wstar):
    res = run_grid([{"L": 400, "alpha": 1.0, "wstar": wstar, "sigma": 1e-4}], n_log=50, memo=False)
    formula = (400 - 2) * math.log(1 / (1 - math.sqrt(1 - wstar**4)))
    assert 0.95 <= res.events["T_o"][0] / formula <= 1.05


def test_bad_modes_are_refused_by_name():
    from derivations.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="ih_loss"):
        st.check_modes("paper", "canonical", "softmax_exact")
    with pytest.raises(InvalidArgument, match="ih_model_range"):
        run_grid([{"L": 40, "alpha": 1.0, "wstar": 0.3, "sigma": 0.01, "mode": "softmaxLL",
                   "ih_model_range": "literal"}])


def test_remembered_rows_equal_fresh_runs_whatever_the_batch():
    from numerics.models.induction_head import sweeps

    sweeps.clear_memo()
    pair = [POINTS[1], {**POINTS[1], "L": 80}]  # one mode: one batch
    both = run_grid(pair, n_log=50)
    alone = run_grid(pair[1:], n_log=50, memo=False)
    recalled = run_grid(pair[1:], n_log=50)
    stats = sweeps.GRID.stats()
    assert (stats.rows, stats.hits, stats.computed) == (2, 1, 3)
    for res in (alone, recalled):
        assert np.array_equal(res.h[0], both.h[1], equal_nan=True)
        assert res.events["T_III"][0] == both.events["T_III"][1]


def test_without_the_tail_stop_runs_reach_the_horizon_and_h_events_sit_on_their_levels():
    res = run_grid(POINTS[:1], n_log=50, tail=False, memo=False)
    hstar = 1 / (1 + POINTS[0]["alpha"])
    assert res.end_t[0] == pytest.approx(60 * res.S[0], rel=1e-12)
    assert math.isnan(res.events["T_tail"][0])
    assert res.event_h["T_h_half"][0] == pytest.approx(hstar / 2, rel=1e-9)
    assert res.events["T_h_half"][0] < res.events["T_o"][0] < res.events["T_2h"][0]
    below = res.events["T_h_below"][0]
    assert math.isnan(below) or (below > res.events["T_2h"][0]
                                 and res.event_h["T_h_below"][0] == pytest.approx(hstar, rel=1e-9))


@pytest.mark.parametrize("mode", ["paper", "softmaxLL"])
def test_velocity_kernels_are_the_scaled_field_over_S(mode):
    point = {"paper": ("paper", "exp_simplified"), "softmaxLL": ("balanced", "softmax_largeL")}[mode]
    y0, params, extra = st.ih_initial(40, 1.0, 0.45, 0.01, ih_loss=point[1])
    field = st.ih_flow(point[0], "canonical", point[1])
    h, w = 0.3, 0.2
    out = np.empty(3)
    field.rhs(0.0, np.array([h, math.log(w), 0.7]), params, out)
    dh, dw = (float(k(h, w, 40.0, 1.0, 0.45)) for k in st.ih_velocity(point[0], "canonical", point[1]))
    assert dh == pytest.approx(out[0] / extra["S"], rel=1e-12)
    assert dw == pytest.approx(out[1] * w / extra["S"], rel=1e-12)


@pytest.mark.parametrize("mode", ["paper", "softmaxLL"])
def test_the_rate_state_moves_as_dh_dt_along_the_flow(mode):
    """q = dh/dτ is integrated with the state: dq/dτ = S·(∂_h f_h·q + ∂_w f_h·dw/dt·S), f_h = dh/dt, checked
    against central differences of the velocity kernel at an arbitrary (h, w, q); q(0) = S·f_h(σ, σ)."""
    flow, loss = {"paper": ("paper", "exp_simplified"), "softmaxLL": ("balanced", "softmax_largeL")}[mode]
    y0, params, extra = st.ih_initial(40, 1.0, 0.45, 0.01, ih_loss=loss)
    field = st.ih_flow(flow, "canonical", loss)
    dh_k, dw_k = st.ih_velocity(flow, "canonical", loss)
    f_h = lambda h_, w_: float(dh_k(h_, w_, 40.0, 1.0, 0.45))  # noqa: E731
    scale = extra["S"]
    assert y0[2] == pytest.approx(scale * f_h(0.01, 0.01), rel=1e-14)
    h, w, q, eps = 0.3, 0.2, -0.37, 1e-5
    out = np.empty(3)
    field.rhs(0.0, np.array([h, math.log(w), q]), params, out)
    d_h = (f_h(h + eps, w) - f_h(h - eps, w)) / (2 * eps)
    d_w = (f_h(h, w + eps) - f_h(h, w - eps)) / (2 * eps)
    dw_dt = float(dw_k(h, w, 40.0, 1.0, 0.45))
    assert out[2] == pytest.approx(scale * (d_h * q + d_w * dw_dt * scale), rel=1e-7)


def test_T2h_from_the_rate_state_agrees_with_scipy_on_a_long_plateau():
    """Known answer by a second integrator: at (L, α*, w*, σ) = (40, 9, 0.05, 0.01) the plateau is long and
    dh/dt = f_h(h, w) there is below the state error, so its computed sign was noise (the event fired at
    w = 0.8 w*, 25 % late). With q = dh/dt integrated, T_2h is q's downward zero; SciPy's Radau on the
    system (h, w, q) in t, from lambdified SymPy forms of the toolkit's loss, puts it at the same time."""
    import sympy as sp
    from scipy.integrate import solve_ivp

    from derivations.induction_head import symbols as S

    L, alpha, wstar, sigma = 40.0, 9.0, 0.05, 0.01
    res = run_grid([{"L": 40, "alpha": alpha, "wstar": wstar, "sigma": sigma}], n_log=50, tail=False, memo=False)
    _, _, _, (dh, dw), _, Lf = st._ih_block("paper", "canonical", "exp_simplified", "gaussian")
    values = {Lf: L, S.alpha: alpha, S.wstar: wstar}
    f_h, f_w, q = dh.subs(values), dw.subs(values), sp.Symbol("q")
    rhs = sp.lambdify([S.h, S.w, q], [f_h, f_w, sp.diff(f_h, S.h) * q + sp.diff(f_h, S.w) * f_w])
    crossing = lambda t, y: y[2]  # noqa: E731
    crossing.direction = -1
    y0 = [sigma, sigma, float(f_h.subs({S.h: sigma, S.w: sigma}))]
    ref = solve_ivp(lambda t, y: rhs(*y), (0.0, 1.2e6), y0, method="Radau", rtol=1e-12, atol=1e-22,
                    events=[crossing])
    assert ref.t_events[0].size == 1
    assert res.events["T_2h"][0] == pytest.approx(ref.t_events[0][0], rel=1e-6)
    assert res.event_w["T_2h"][0] == pytest.approx(ref.y_events[0][0][1], rel=1e-6)
