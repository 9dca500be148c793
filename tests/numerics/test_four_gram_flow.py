"""The (p, g) flow to long horizons and the Stage-I flow of p̃ (numerics.models.induction_head.four_gram).

Known answers from first principles, independent of the derivations package: the head-1 loss as
½‖coefficient vector‖² with plain NumPy softmax weights (E x_i x_j = δ_ij), its gradient by central
differences, and the 1-D Stage-I flow by quadrature t(p̃) = ∫ dp̃/F(p̃).
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.models.induction_head.four_gram import (
    four_gram_kernels, four_gram_run, initial_state, stage1_kernels, stage1_run,
)


def g4_loss(p, g, L, alpha, head1_range="canonical"):
    """½E(g* x_{L-2} - g Σ_s π_s x_{s-1})² by E x_i x_j = δ_ij (canonical s = 2..L-1, literal 2..L-2)."""
    last = L - 1 if head1_range == "canonical" else L - 2
    lags = (L - 1) - np.arange(2, last + 1)
    w = np.exp(-p * lags)
    pi = w / w.sum()
    coef = -g * pi  # coefficients of x_{s-1}, s = 2..last
    gstar = alpha / (1 + alpha)
    cross = pi[-1] if head1_range == "canonical" else 0.0
    return 0.5 * (gstar**2 - 2 * gstar * g * cross + (coef**2).sum())


@given(p=st.floats(0.0, 8.0), g=st.floats(-1.0, 1.5), L=st.sampled_from([5, 9, 40, 300]),
       alpha=st.floats(0.2, 10.0), reading=st.sampled_from(["canonical", "literal"]))
def test_compiled_loss_and_flow_match_first_principles(p, g, L, alpha, reading):
    kern = four_gram_kernels(reading)
    assert kern["loss"].scalar(p, g, float(L), alpha) == pytest.approx(g4_loss(p, g, L, alpha, reading), abs=1e-13)
    h = 1e-6
    p = max(p, 2 * h)  # central differences need p - h ≥ 0 (the logits are defined for p ≥ 0 only)
    dp = -(g4_loss(p + h, g, L, alpha, reading) - g4_loss(p - h, g, L, alpha, reading)) / (2 * h)
    dg = -(g4_loss(p, g + h, L, alpha, reading) - g4_loss(p, g - h, L, alpha, reading)) / (2 * h)
    assert kern["dp"].scalar(p, g, float(L), alpha) == pytest.approx(dp, abs=1e-7)
    assert kern["dg"].scalar(p, g, float(L), alpha) == pytest.approx(dg, abs=1e-7)


def test_loss_decreases_along_the_run_and_events_sit_on_their_levels():
    run = four_gram_run(40, 1.0, 0.01, horizon=1e6, n_save=200)
    assert np.all(np.diff(run.loss) <= 1e-15)  # gradient flow: dL/dt = -|∇L|² ≤ 0
    gs = run.gstar
    assert run.event_states["T_1g"]["g"] == pytest.approx(gs, rel=1e-9)
    assert run.event_states["T_g_half"]["g"] == pytest.approx(gs / 2, rel=1e-9)
    p_i, g_i = run.event_states["T_I"]["p"], run.event_states["T_I"]["g"]
    assert four_gram_kernels()["loss"].scalar(p_i, g_i, 40.0, 1.0) == pytest.approx(run.loss0 / 100, rel=1e-8)
    assert run.events["T_g_half"] < run.events["T_1g"] < run.events["T_I"]


def test_stiff_tail_agrees_with_dormand_prince():
    """Rodas4P beyond t = 2e3 against the explicit Dormand–Prince integrator run through (cheap to t = 2e4)."""
    from numerics.models.induction_head.four_gram import four_gram_flow
    from numerics.ode import Tolerance, integrate

    run = four_gram_run(40, 2.0, 0.01, horizon=2e4, n_save=50)
    field = four_gram_flow("canonical")
    p0, g0 = initial_state(0.01, "eq4")
    sol = integrate(field, np.array([p0, g0]), (0.0, 2e4), np.array([40.0, 2.0, run.loss0]),
                    tol=Tolerance(1e-11, 1e-14), save_at=run.t, max_steps=10**7)
    assert np.allclose(sol.y[:, 0], run.p, rtol=1e-7, atol=0)
    assert np.allclose(sol.y[:, 1], run.g, rtol=1e-8, atol=0)


def test_bad_input_names_the_parameter():
    with pytest.raises(InvalidArgument, match="init="):
        four_gram_run(40, 1.0, 0.01, init="nope")
    with pytest.raises(InvalidArgument, match="sigma="):
        four_gram_run(40, 1.0, 1.5)
    with pytest.raises(InvalidArgument, match="L="):
        stage1_run(3, 1.0, 0.01)


def stage1_loss(pt, L, alpha, sigma, p0):
    """½Σ_τ(σc_τ - g*[τ = L-2])², c_τ = Σ_{s>τ} π_s A_{sτ}, by explicit loops (Eq. (5) and head 1 at p(0))."""
    lags = (L - 1) - np.arange(2, L)
    pi = np.exp(-p0 * lags)
    pi /= pi.sum()
    c = np.zeros(L + 1)
    for s in range(2, L):
        A = np.exp(-pt * (s - 1 - np.arange(1, s)))
        A /= A.sum()
        c[1:s] += pi[s - 2] * A
    r = sigma * c
    r[L - 2] -= alpha / (1 + alpha)
    return 0.5 * (r**2).sum()


@pytest.mark.parametrize(("L", "p0"), [(5, 0.0), (12, 0.0), (12, 0.05), (40, 0.01)])
def test_stage1_kernels_match_explicit_loops(L, p0):
    kern = stage1_kernels()
    for pt in (0.01, 0.3, 2.0, 9.0):
        exact = stage1_loss(pt, L, 1.0, 0.05, p0)
        assert kern["loss"].scalar(pt, float(L), 1.0, 0.05, p0) == pytest.approx(exact, rel=1e-12)
        h = 1e-6 * max(1.0, pt)
        fd = -(stage1_loss(pt + h, L, 1.0, 0.05, p0) - stage1_loss(pt - h, L, 1.0, 0.05, p0)) / (2 * h)
        assert kern["velocity"].scalar(pt, float(L), 1.0, 0.05, p0) == pytest.approx(fd, rel=1e-5, abs=1e-14)


def test_stage1_run_matches_quadrature_of_the_one_dimensional_flow():
    from scipy.integrate import quad

    run = stage1_run(10, 1.0, 0.01, init="c2", horizon=1e6, n_save=40)
    vel = stage1_kernels()["velocity"].scalar
    assert np.all(np.diff(run.ptilde) > 0)
    for k in (10, 25, 39):
        t, _ = quad(lambda x: 1.0 / vel(x, 10.0, 1.0, 0.01, 0.0), 0.01, run.ptilde[k], epsabs=0, epsrel=1e-11,
                    limit=200)
        assert t == pytest.approx(run.t[k], rel=1e-7)
    assert math.isfinite(run.velocity[-1])
