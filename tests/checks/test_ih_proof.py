"""The (h, w) runs and the pointwise/decision machinery of the IH-head proof claims (checks.induction_head.ih_proof*)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from checks import along
from checks.induction_head import ih_proof_runs as R
from checks.registry import load_all
from derivations.errors import InvalidArgument


@pytest.fixture(scope="module")
def d0():
    return R.ih_run(40, 1.0, 0.49, 0.01, "paper", "canonical")


def test_paper_velocity_is_the_printed_first_form(d0):
    """Canonical range, paper flow: dw/dt = 2wh H/(L-2) with H of (P1.2), dh/dt = Q/(L-2) (ih.cf.flow_wh)."""
    w, h, ws, hs, n = d0.w, d0.h, 0.49, 0.5, 38.0
    H = hs * (1 - (w**2 + ws**2) ** 2) ** -1.5 * (w**2 + ws**2) - h * (1 - 4 * w**4) ** -1.5 * 2 * w**2
    Q = hs * (1 - (w**2 + ws**2) ** 2) ** -0.5 - h * (1 - 4 * w**4) ** -0.5
    # absolute slack: rounding of the two ~h*/(L-2) terms whose difference vanishes at the fixed point
    np.testing.assert_allclose(d0.dw, 2 * w * h * H / n, rtol=1e-9, atol=1e-14 * ws * hs / n)
    dh_kernel = R.velocity_kernels("paper", "canonical")[0](h, w, 40.0, 1.0, ws)
    np.testing.assert_allclose(dh_kernel, Q / n, rtol=1e-9, atol=1e-14 * hs / n)
    # dh/dt integrated as a state agrees with the field at the saved states to the run's accuracy: the
    # integration error (rtol 1e-10 over the run) relative to the largest |dh/dt|
    np.testing.assert_allclose(d0.dh, dh_kernel, rtol=0, atol=1e-9 * np.abs(dh_kernel).max())


@pytest.mark.slow  # ~12 s cold: out of the default run (under 10 min with the install); `tdcheck run ih` runs it
def test_balanced_w_velocity_is_half_the_paper_one(d0):
    """dw/dt(balanced) = ½ dw/dt(paper) at the same state (−w∂_P L vs −2w∂_P L); compared at t = 0."""
    bal = R.ih_run(40, 1.0, 0.49, 0.01, "balanced", "canonical")
    assert bal.dw[0] == pytest.approx(d0.dw[0] / 2, rel=1e-12)
    assert bal.dh[0] == pytest.approx(d0.dh[0], rel=1e-12)


def test_T1h_against_the_linear_rise_at_small_sigma():
    """While w ≈ σ ≪ w*, (L-2)dh/dt ≈ h*ψ(w*²) - h: T_1^h ≈ (L-2)ln((c - σ)/(c - h*)), c = h*ψ(w*²)."""
    run = R.ih_run(40, 1.0, 0.3, 1e-6, "paper", "canonical", 5.0)
    c = 0.5 / math.sqrt(1 - 0.3**4)
    assert run.event("T_1h") == pytest.approx(38 * math.log((c - 1e-6) / (c - 0.5)), rel=2e-3)


def test_pointwise_finds_the_counterexample_and_empty_windows(d0):
    mask = d0.window(0.0, 100.0)
    bound = np.full(d0.t.shape, 0.3)
    record = along.pointwise(d0, mask, d0.h, bound)
    assert record["status"] == "fails"
    assert record["worst_lhs"] > 0.3 and record["worst_t"] <= 100.0
    assert record["worst_state"] == {"h": pytest.approx(record["worst_lhs"]), "w": pytest.approx(
        float(d0.w[np.flatnonzero(mask)[np.argmax(d0.h[mask])]]))}
    assert along.pointwise(d0, mask, d0.h, 1.0)["status"] == "holds"
    empty = d0.window(math.nan, 1.0)
    assert along.pointwise(d0, empty, d0.h, 1.0)["status"] == "outside-regime"
    resolved = d0.window(0.0, math.inf, resolved=True)
    assert resolved.sum() < d0.window(0.0, math.inf).sum()  # the run reaches the solver's noise floor


def test_pinned_parameters_replace_their_axis():
    from checks.configurations import configurations

    claim = load_all()["ih.p1_1"]
    ctx = claim.context({"wstar": 0.3})
    assert configurations(ctx, R.CONFIG_NAMES) == [{"L": 40, "alpha": 1.0, "wstar": 0.3, "sigma": s}
                                                    for s in (1e-2, 1e-4)]
    assert R.readings(ctx)[0] == R.CANONICAL
    assert R.readings(claim.context({"flow": "balanced"})) == [("balanced", "canonical"), ("balanced", "literal")]
    assert claim.describe()["params"] == {"L": 40, "alpha": 1.0, "wstar": 0.49, "sigma": 0.01, "flow": "paper",
                                          "ih_model_range": "canonical"}


def test_bad_flow_is_refused():
    with pytest.raises(InvalidArgument, match="flow='sideways'"):
        load_all()["ih.p1_1"].context({"flow": "sideways"})
    with pytest.raises(InvalidArgument, match="wstar=0.8"):
        R.ih_run(40, 1.0, 0.8, 0.01)


def test_claims_are_registered():
    from checks.registry import load_all

    ids = {"ih.p1_1", "ih.p1_2", "ih.p1_3", "ih.eq13", "ih.eq14", "ih.eq15", "ih.eq16", "ih.eq17", "ih.step_ii1",
           "ih.eq18", "ih.simplification"}
    assert ids <= set(load_all())


def test_a_failure_stands_only_if_a_hundredfold_tighter_run_repeats_it():
    """run_claim repeats each run whose main part fails at REFINED_TOLERANCE and the tighter record decides; the
    report names the parts whose status changed (ih.eq18 at small w* was a tolerance artefact)."""
    from checks.induction_head import ih_proof_runs as R
    from checks.status import Status

    runs = R.ih_runs([(40, 1.0, 0.49, 0.01, "paper", "canonical"), (40, 1.0, 0.3, 0.01, "paper", "canonical")])
    calls = []

    def evaluate(run):  # fails at the default tolerance for w* = 0.49 only, holds when repeated
        calls.append(run.wstar)
        first = calls.count(run.wstar) == 1
        return {"bound": {"status": Status.FAILS if (first and run.wstar == 0.49) else Status.HOLDS}}

    records = [R.run_record(r, evaluate(r)) for r in runs]
    refined_records, report = R._refine_failures(runs, records, evaluate, ["bound"])
    assert calls == [0.49, 0.3, 0.49]  # only the failing run is repeated
    assert [r["parts"]["bound"]["status"] for r in refined_records] == [Status.HOLDS, Status.HOLDS]
    assert refined_records[0]["refined_from"] == {"bound": Status.FAILS}
    assert report == [{"config": runs[0].config, "reading": runs[0].reading, "changed": {"bound": ["fails", "holds"]},
                       "not_confirmed": True}]


def test_T2h_on_a_long_plateau_is_the_genuine_crossing_and_a_noise_crossing_is_named(d0):
    """Known answer, confirmed by SciPy's Radau and DOP853 at rtol 1e-12 on (h, w, dh/dt): at L = 40, α* = 9,
    w* = 0.05, σ = 1e-4 the true T_2^h is at w = 0.577 w*. Read off f_h(h, w), whose sign is noise on the plateau,
    the event fired at w = 0.01 w*; with dh/dt integrated as a state it fires at the genuine crossing and every
    part that starts there holds. The guard ``t2h_noise`` still names a crossing placed on the plateau, where
    d²h/dt² = ∂_w(dh/dt)·dw/dt > 0 (dh/dt cannot turn negative there). At D0 the crossing is genuine."""
    import dataclasses

    from checks.induction_head import ih_proof as P

    assert R.t2h_noise(d0) == ""
    assert {p["status"] for p in P.eval_eq18(d0).values()} == {"holds"}
    plateau = R.ih_run(40, 9.0, 0.05, 1e-4, "paper", "canonical")
    assert plateau.state_at("T_2h")["w"] / plateau.wstar == pytest.approx(0.5773727, rel=1e-6)
    assert plateau.event("T_2h") == pytest.approx(4.4597e6, rel=1e-4)  # SciPy Radau, rtol 1e-12
    assert R.t2h_noise(plateau) == ""
    assert {p["status"] for p in P.eval_eq18(plateau).values()} == {"holds"}
    assert {p["status"] for p in P.eval_p1_3(plateau).values()} == {"holds"}
    # the crossing as f_h(h, w) placed it: the first saved time on the plateau with w ≥ 0.01 w*
    i = int(np.argmax(plateau.w >= 0.01 * plateau.wstar))
    fake = dataclasses.replace(plateau, events={**plateau.events, "T_2h": float(plateau.t[i])},
                               event_states={**plateau.event_states,
                                             "T_2h": {"h": float(plateau.h[i]), "w": float(plateau.w[i])}})
    assert "noise crossing" in R.t2h_noise(fake)
    assert P.eval_eq18(fake)["G_bound"]["status"] == "inconclusive"

def test_a_sign_of_dh_dt_below_its_resolution_is_counted_not_judged(d0):
    """Saved dh/dt come from the dense output: below RATE_RESOLUTION/S their sign is not resolved. Such times are
    left out of a sign statement and counted; a window they fill alone is inconclusive (not empty, not holds)."""
    import dataclasses

    from checks.induction_head import ih_proof as P

    after = d0.window(d0.event("T_2h"), math.inf, closed=False, resolved=True)
    part = P.sign_of_dhdt(d0, after, "<=", "t > T_2^h")
    assert part["status"] == "holds" and part["n_points"] + part["n_unresolved"] == int(after.sum())
    assert part["n_points"] > 0
    # a floor above every |dh/dt| of the window leaves nothing resolved
    blind = dataclasses.replace(d0, meta={**d0.meta, "rate_floor": 10 * float(np.max(np.abs(d0.dh[after])))})
    part = P.sign_of_dhdt(blind, after, "<=", "t > T_2^h")
    assert part["status"] == "inconclusive" and part["n_unresolved"] == int(after.sum())
    assert part["largest_unresolved_abs_dhdt"] < part["rate_floor"]
    # with dh/dt flipped the resolved times violate the statement
    flipped = dataclasses.replace(d0, observables={**d0.observables, "dh": -d0.dh})
    assert P.sign_of_dhdt(flipped, after, "<=", "t > T_2^h")["status"] == "fails"


@pytest.mark.slow  # ~15 s: the run the full budget's refinement repeats at (4000, 9, 0.7, 1e-8)
def test_the_refined_tolerance_finishes_where_the_explicit_method_is_at_its_stability_limit():
    """With q's absolute tolerance as tight as the refined state's (1e-16), the step control chattered and the run
    stopped at max_steps, crashing ih.p1_3 at the full budget; with RATE_ATOL it finishes, and the sign parts agree
    with the default run's."""
    from checks.induction_head import ih_proof as P

    spec = [(4000, 9.0, 0.7, 1e-8, "paper", "canonical")]
    loose, tight = R.ih_runs(spec)[0], R.ih_runs(spec, tolerance=R.REFINED_TOLERANCE)[0]
    assert tight.t[-1] == pytest.approx(loose.t[-1], rel=1e-12)
    assert tight.event("T_2h") == pytest.approx(loose.event("T_2h"), rel=1e-6)
    assert {k: v["status"] for k, v in P.eval_p1_3(tight).items()} == \
        {k: v["status"] for k, v in P.eval_p1_3(loose).items()}


@pytest.mark.parametrize("wstar", [0.49, 0.55])
def test_eq16_gap_against_scipy_on_the_hand_written_gradient_of_eq10(wstar):
    """T^w_{1/2} − T_1^h of the engine against SciPy's DOP853 on [W] Eq. (10)'s gradient written out by hand
    (L = 40, α* = 0.5, σ = 0.01), and the printed display before (16) against both: it is below the gap at
    w* = 0.49 and above it at w* = 0.55 (the display's lower bound fails for w* beyond about 0.49-0.52)."""
    from scipy.integrate import solve_ivp

    L, alpha, sigma, n = 40, 0.5, 0.01, 38.0
    hstar = 1 / (1 + alpha)

    def field(t, y):
        h, w = y
        u = w * w + wstar * wstar
        dh = h / (math.sqrt(1 - 4 * w**4) * n) - 1 / (math.sqrt(1 - u * u) * n * (1 + alpha))
        dw = 4 * h * h * w**3 * (1 - 4 * w**4) ** -1.5 / n - 2 * h * u * w * (1 - u * u) ** -1.5 / (n * (1 + alpha))
        return [-dh, -dw]

    def reaches_hstar(t, y):
        return y[0] - hstar

    def reaches_half(t, y):
        return y[1] - wstar / 2

    reaches_hstar.direction = reaches_half.direction = 1
    reaches_half.terminal = True
    sol = solve_ivp(field, (0, 1e6), [sigma, sigma], method="DOP853", rtol=1e-11, atol=1e-14,
                    events=[reaches_hstar, reaches_half])
    gap_scipy = sol.t_events[1][0] - sol.t_events[0][0]
    run = R.ih_run(L, alpha, wstar, sigma, "paper", "canonical")
    gap = run.event("T_w_half") - run.event("T_1h")
    assert gap == pytest.approx(gap_scipy, rel=1e-6)
    display = (1 + alpha) ** 2 * n / (4 * wstar**2 * (1 - 4 * wstar**4) ** 1.5) * math.log(wstar / (2 * sigma))
    assert (gap >= display) == (wstar < 0.5)
