"""The co items as checks: the flow equals the complex-step oracle on the harness, pins reach the cases."""

import numpy as np
import pytest

from checks.registry import load_all


@pytest.fixture(scope="module")
def registry():
    return load_all()


@pytest.mark.parametrize("seed", [0, 3])
def test_flow_equals_the_complex_step_oracle_on_the_harness(registry, seed):
    verdict = registry["co.dv.flow_vectorised"].run({"harness_seed": seed})
    records = verdict.evidence["displays"] if "displays" in verdict.evidence else verdict.evidence
    worst = [r["worst"]["relative"] for r in _records(records)]
    assert worst and max(worst) <= 1e-13
    assert all(f"harness seed {seed}" in r["worst"]["case"] for r in _records(records))


def _records(evidence):
    """The per-display records of an array-identity verdict, wherever the evidence nests them."""
    if isinstance(evidence, dict):
        if "worst" in evidence and isinstance(evidence["worst"], dict) and "relative" in evidence["worst"]:
            yield evidence
        else:
            for value in evidence.values():
                yield from _records(value)
    elif isinstance(evidence, list):
        for value in evidence:
            yield from _records(value)


def test_literal_eq1_and_compact_form_agree_at_every_harness_seed(registry):
    verdict = registry["co.dv.compact_model"].run({"harness_seed": 4})
    assert [r["status"] for r in _records(verdict.evidence)] == ["equal"] * 4


def test_eq4_differs_exactly_by_its_free_output_weight():
    """Eq. (4)'s second term carries a stray a_{j₁}: with a_{j₁} = +1 the display is ∂G(μ)/∂t, with a_{j₁} = −1 it
    is off by twice that term (a_j² = 1 gives the m₁ of Def. E.18, which prints no a_{j₁})."""
    from checks.word_cooccurrence.rate_items import _G_rate, _value_term, eq4_printed, rate_case

    r = rate_case(0)
    printed, rate = eq4_printed(r), _G_rate(r)
    m1 = r.case.a.size
    for j1, a in enumerate(r.case.a):
        expected = rate if a > 0 else rate - 2 * m1 * np.array([_value_term(r, mu) for mu in r.tokens])
        np.testing.assert_allclose(printed[j1], expected, rtol=1e-12, atol=1e-15)


def test_the_U_part_of_the_loss_rate_tends_to_the_squared_margin():
    """At the max-margin limit r/L̂ → G*/17 (duals 7:5:5:0 sum to 17, G* = Σν_ky_kz_k, ‖G*‖² = 17), so
    ‖r‖²/L̂² → 17/17² = 1/17; the m₁N part is what keeps the total above it."""
    from checks.word_cooccurrence.band_items import _at
    from checks.word_cooccurrence.maxmargin_items import STATES
    from checks.word_cooccurrence.reduced_items import regime_b_start
    from numerics.models.word_cooccurrence import reduced as Re
    from numerics.models.word_cooccurrence.data import REGIMES
    from numerics.ode import Tolerance, integrate

    r = REGIMES["B"]
    p = Re.reduced_params(r.m1, r.counts[0])
    theta, lay, a, _ = regime_b_start(256, 0)
    sol = integrate(STATES, Re.reduced_initial_state(theta, lay, a), (0.0, 1e8), p, tol=Tolerance(1e-10, 1e-14))
    state = _at(sol.y_final, p, r.m1)
    assert state["U_part"] == pytest.approx(1 / 17, rel=1e-3)
    assert state["N_part"] > 0 and state["ratio"] == pytest.approx(state["U_part"] + state["N_part"], rel=1e-9)


def test_cor_D5_conditional_tail_matches_sampling_w_alone():
    """Given W_V (hence V and P), w_j ~ 𝒩(0, σ₁²I) makes w_jᵀVp_l Gaussian: the expected count of (j, i, l) above the
    bound from erfc equals the count averaged over fresh draws of W alone (within 4 standard errors)."""
    import math

    from checks.word_cooccurrence.init_claims import Init, expected_violations_corD5

    x = Init(512, (0.5, 0.5), 0, 0, 0)
    expected = expected_violations_corD5(x, 0.1)
    f = x.forward()
    Vp = np.einsum("nmh,nhl->nml", f["V"], f["P"])
    bound = x.sigma1 * x.sigma0 * math.sqrt(x.m / x.L * math.log(x.m1 * x.n * x.L / 0.1))
    rng = np.random.default_rng(5)
    counts = [np.sum(np.abs(np.einsum("jm,nml->jnl", rng.normal(0, x.sigma1, (x.m1, x.m)), Vp)) > bound)
              for _ in range(2000)]
    assert abs(np.mean(counts) - expected) <= 4 * np.std(counts) / math.sqrt(len(counts))
