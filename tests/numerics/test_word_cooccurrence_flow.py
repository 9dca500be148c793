"""The numba flow of Eq. (1) (numerics.models.word_cooccurrence.flow) against the complex-step oracle, the NumPy
flow, thread counts, its observers and its conservation laws along an integrated run."""

import math

import numba
import numpy as np
import pytest

from numerics.differences import complex_step_gradient
from numerics.models.word_cooccurrence import flow as Fl
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.data import REGIMES, build_dataset
from numerics.ode import Tolerance, integrate


def _setting(name, seed=0, m=None):
    r = REGIMES[name]
    (counts,), (d,) = r.counts, r.d
    m = m or r.m[0]
    data = build_dataset(counts, r.L, d, seed)
    lay = Mo.layout(m, r.m1, d)
    if r.sigma:
        sigma0, sigma1 = r.sigma
    else:
        kappa0, kappa1 = r.kappa[0]
        sigma0, sigma1 = kappa0 / math.sqrt(r.L * m), kappa1 / math.sqrt(r.m1)
    theta = Mo.init_params(m, r.m1, d, sigma0, sigma1, seed)
    a = Mo.output_weights(r.m1, seed, fixed=r.output_weights if name == "harness" and seed == 0 else None)
    return lay, theta, data.tokens, data.labels.astype(float), a


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numba_flow_equals_the_complex_step_oracle_on_the_harness(seed):
    lay, theta, tokens, labels, a = _setting("harness", seed)
    out = np.empty(lay.size)
    Fl.co_flow(0.0, theta, Fl.flow_params(lay, tokens, labels, a), out)
    oracle = -complex_step_gradient(lambda t: Mo.loss(t, lay, tokens, labels, a), theta)
    assert np.max(np.abs(out - oracle)) <= 1e-13 * np.max(np.abs(oracle))


def test_numba_flow_equals_the_numpy_flow_on_regime_A_with_frozen_attention():
    lay, theta, tokens, labels, a = _setting("A", m=128)
    out = np.empty(lay.size)
    Fl.co_flow(0.0, theta, Fl.flow_params(lay, tokens, labels, a, train_kq=False), out)
    ref = Mo.flow(theta, lay, tokens, labels, a, trainable=("W", "WV"))
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13 * np.max(np.abs(ref)))


def test_the_flow_does_not_depend_on_the_thread_count():
    lay, theta, tokens, labels, a = _setting("A", m=128)
    p = Fl.flow_params(lay, tokens, labels, a)
    outs = []
    previous = numba.get_num_threads()
    try:
        for threads in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(threads)
            out = np.empty(lay.size)
            Fl.co_flow(0.0, theta, p, out)
            outs.append(out)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_observers_agree_with_the_model():
    lay, theta, tokens, labels, a = _setting("harness", 1)
    values = np.empty(len(Fl.OBSERVED))
    Fl.observe_flow(0.0, theta, Fl.flow_params(lay, tokens, labels, a), values)
    named = dict(zip(Fl.OBSERVED, values, strict=True))
    F = Mo.output(theta, lay, tokens, a)
    assert named["loss"] == pytest.approx(float(Mo.loss(theta, lay, tokens, labels, a)), rel=1e-14)
    assert named["min_margin"] == pytest.approx(float(np.min(labels * F)), rel=1e-14)
    views = lay.views(theta)
    u = views["W"].T @ a
    assert named["U"] == pytest.approx(float(u @ u), rel=1e-14)
    np.testing.assert_allclose([named["G1"], named["G2"], named["G3"]], u @ views["WV"][:, :3], rtol=1e-14)
    g = Mo.g_weight(labels * F)
    group_sums = [g[(tokens == 0).any(1) & (tokens == 1).any(1)].sum(), g[(tokens == 0).any(1) & ~(tokens == 1).any(1)].sum(),
                  g[~(tokens == 0).any(1) & (tokens == 1).any(1)].sum(), g[~(tokens == 0).any(1) & ~(tokens == 1).any(1)].sum()]
    np.testing.assert_allclose([named[k] for k in ("A", "B2", "B3", "B4")], group_sums, rtol=1e-14)


def test_conservation_drift_along_a_run_at_rtol_1e7():
    """‖W‖² − ‖W_V‖² and ‖W_K‖² − ‖W_Q‖² are invariants (co.dv.conservation): their drift is integration error."""
    lay, theta, tokens, labels, a = _setting("A", m=128)
    sol = integrate(Fl.flow_field(lay), theta, (0.0, 200.0), Fl.flow_params(lay, tokens, labels, a),
                    tol=Tolerance(1e-7, 1e-13), save_at=[0.0, 50.0, 200.0])
    named = {k: sol.y[:, i] for i, k in enumerate(Fl.OBSERVED)}
    for key in ("value_balance", "attention_balance"):
        scale = max(abs(named[key][0]), 1.0)
        assert np.max(np.abs(named[key] - named[key][0])) <= 1e-8 * scale
    assert named["loss"][-1] < named["loss"][0]


def test_the_all_correct_event_is_the_smallest_margin():
    lay, theta, tokens, labels, a = _setting("harness", 2)
    out = np.empty(1)
    Fl.all_correct(0.0, theta, Fl.flow_params(lay, tokens, labels, a), np.empty(1), np.empty((1, lay.size)), out)
    assert out[0] == pytest.approx(float(np.min(labels * Mo.output(theta, lay, tokens, a))), rel=1e-14)
