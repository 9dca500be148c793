"""The numeric second methods of the rl dynamics items: properties computed here, no verdict written down."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import derivations.regular_language as R
from checks.registry import load_all
from checks.regular_language.cross_checks._dynamics import Run, _flat, _max_margin
from checks.regular_language.cross_checks.phase1 import _iterate_map
from checks.regular_language.cross_checks.reduced import reduced_model
from derivations.regular_language import data as D
from derivations.regular_language import reduced as RD
from numerics.models.regular_language import RLModel, class_features_mp, cot_data, ep_data, features_mp
from numerics.models.regular_language.gd import gd_groups
from numerics.models.regular_language.reduced import (
    ReducedModel,
    frozen_flow_log_time,
    frozen_gd,
    limit_flow,
    orbits,
    run_reduced_gd,
)
from numerics.svm import hard_margin_svm
from numerics.train import train

EPS = np.finfo(float).eps


def _full_gd(data, lam, eta, t0, steps):
    model = RLModel(data, lam)
    return train(model.zeros(), model.gradient, groups=gd_groups(model, eta, t0), optimizer="gd", steps=steps,
                 log=1, states={"theta": (slice(0, model.size), (model.size,))})["theta"]


@pytest.mark.parametrize("data", [ep_data(3), ep_data(4), cot_data(3), cot_data(3, cot_max_len="2L0-2")],
                         ids=["ep3", "ep4", "cot3", "cot3-2L0-2"])
def test_numeric_orbits_are_the_derivations_and_have_the_spec_size(data):
    ds = D.ep_dataset(data.L_max) if data.task == "ep" else D.cot_dataset(data.L0, data.flags["cot_max_len"])
    numeric = {frozenset(int(i) for i in m) for m in orbits(data).members}
    derived = {frozenset(_flat(s, data.dim) for s in o) for o in RD.orbits(ds)}
    assert numeric == derived
    assert len(numeric) == data.L_max + sum(L + 1 for L in range(2, data.L_max + 1))


@settings(max_examples=6)
@given(lam=st.floats(0.5, 50.0), eta=st.sampled_from([0.05, 0.1, 0.2]), t0=st.integers(1, 40))
def test_reduced_gd_equals_full_gd_to_rounding(lam, eta, t0):
    data = ep_data(4)
    model = ReducedModel(data, lam)
    steps = 300
    _, red = run_reduced_gd(model, eta, (eta * lam, eta), t0, steps)
    full = _full_gd(data, lam, eta, t0, steps)
    orb = model.orbits
    embedded = red[:, orb.of.clip(0)] * (orb.of >= 0)
    scale = np.maximum(np.abs(full).max(axis=1), 1e-300)
    assert np.all(np.abs(full - embedded).max(axis=1) <= 64 * EPS * scale)
    assert np.all(full[:, orb.of < 0] == 0.0)  # never-live coordinates stay exactly 0


def test_a_wrong_step_is_seen_by_the_comparison():
    # the comparison is not vacuous: W steps four times too large break the agreement at once
    data = ep_data(4)
    model = ReducedModel(data, 2.0)
    _, red = run_reduced_gd(model, 0.1, (0.2, 0.1), 10, 20)
    _, bad = run_reduced_gd(model, 0.1, (0.2 * 4, 0.1 * 4), 10, 20)
    full = _full_gd(data, 2.0, 0.1, 10, 20)
    orb = model.orbits
    for theta, ok in ((red, True), (bad, False)):
        embedded = theta[:, orb.of.clip(0)] * (orb.of >= 0)
        assert bool(np.abs(full - embedded).max() <= 1e-12) is ok


def _brute_force_reduced_svm(rows):
    """Min ‖m‖ s.t. z_k·m >= 1 by trying every active set (Gram system, ν >= 0, feasible), in mpmath."""
    K, n = len(rows), len(rows[0])
    best = None
    with mpmath.workdps(80):
        for size in range(1, min(K, n) + 1):
            for subset in itertools.combinations(range(K), size):
                G = mpmath.matrix([[mpmath.fdot(rows[i], rows[j]) for j in subset] for i in subset])
                try:
                    nu = mpmath.lu_solve(G, mpmath.matrix([1] * size))
                except ZeroDivisionError:
                    continue
                if any(x < 0 for x in nu):
                    continue
                m = [mpmath.fsum(nu[a] * rows[i][j] for a, i in enumerate(subset)) for j in range(n)]
                if min(mpmath.fdot(r, m) for r in rows) < 1 - mpmath.mpf(10) ** -50:
                    continue
                norm = mpmath.sqrt(mpmath.fdot(m, m))
                if best is None or norm < best:
                    best = norm
    return best


def test_svm_norm_is_sqrt2_times_a_brute_force_reduced_solve():
    run = Run("ep", 4, 10.0, 0.1, 20)
    mm = _max_margin(run)
    feats = class_features_mp(run.data, mm.W_sym, run.lam)
    with mpmath.workdps(60):
        rows = [[int(k[2]) * f.positions[0, j] for j in range(run.data.L_max)] for k, f in feats.items()]
    brute = _brute_force_reduced_svm(rows)
    with mpmath.workdps(60):
        assert abs(mm.norm - mpmath.sqrt(2) * brute) <= mpmath.mpf(10) ** -45 * mm.norm
    # and the full problem (every sample, all d coordinates) solved on its own has the same norm
    data = run.data
    with mpmath.workdps(60):
        full = features_mp(data, mm.W_sym, run.lam)
        full_rows = [[int(data.y[i]) * full[i, j] for j in range(data.dim)] for i in range(data.n)]
    big = hard_margin_svm(full_rows)
    with mpmath.workdps(60):
        assert abs(big.norm - mm.norm) <= mpmath.mpf(10) ** -45 * mm.norm
    assert max(mm.full_kkt_log10.values()) <= -50


def test_gd_deviation_from_the_lambda_infinity_map_falls_like_one_over_lambda():
    eta, t0 = 0.01, 20
    mapped = _iterate_map("ep", 4, "2L0-1", eta, t0)
    devs = [np.abs(_full_gd(ep_data(4), lam, eta, t0, t0) - mapped).max() for lam in (1e3, 1e4)]
    assert 9.0 < devs[0] / devs[1] < 11.0


def test_the_limit_flow_is_fourth_order_in_its_step():
    data = ep_data(4)
    exact = limit_flow(data, [0.3], substeps=400)[0]
    errors = [np.abs(limit_flow(data, [0.3], substeps=n)[0] - exact).max() for n in (10, 20)]
    assert 12.0 < errors[0] / errors[1] < 20.0


def test_frozen_gd_and_its_log_time_flow_reach_the_single_support_vector_asymptote():
    # one row z = (2, 0) with weight 1/2: m* = (1/2, 0), ‖u*‖² = 2‖m*‖² = 1/2
    Z, w = np.array([[2.0, 0.0]]), np.array([0.5])
    ms, losses = frozen_gd(Z, w, np.zeros(2), 0.05, [0, 10, 100])
    assert losses[0] == pytest.approx(0.5 * math.log(2))
    assert np.all(np.diff(losses) < 0)
    tau, m, loss, _ = frozen_flow_log_time(Z, w, ms[-1], 0.1 * 100, math.exp(120.0), h=0.02)
    assert tau[-1] * loss[-1] / 0.5 == pytest.approx(1.0, abs=1e-6)
    assert math.sqrt(2) * np.linalg.norm(m[-1]) / math.log(tau[-1]) == pytest.approx(math.sqrt(0.5), rel=0.05)


def test_a_pinned_temperature_reaches_the_reduced_model_check():
    claim = load_all()["rl.cf.reduced_model"]
    ctx = claim.context({"lam": 3.0})
    out = reduced_model(ctx, R.item("rl.cf.reduced_model"))
    assert {r["lam"] for r in out["reduced_vs_full"]} == {3.0}
    assert out["disagrees"] == [], out["disagrees"]
