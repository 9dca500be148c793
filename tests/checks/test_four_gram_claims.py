"""Registration and behaviour of the Stage-I, balance, fixed-point, Phase-I and 4-gram claims.

No verdict is asserted: the tests check that each check runs, records its readings and grid,
honours pinned parameters, and that its deciding numbers are consistent with independent facts.
"""

import math

import pytest

import checks.induction_head  # noqa: F401  (registers every claim)
from checks.claim import STATUSES
from checks.registry import load_all

IDS = ("ih.lemma2", "ih.lemma3", "ih.fixed_point", "ih.thm4.phase1", "ih.c3_1.part1", "ih.eq8",
       "ih.c3_1.stable_region", "ih.eq9", "ih.dv.G4_tail", "ih.dv.stage1_rate", "ih.exp.phase1_ratio")
D0 = {"L": 40, "alpha": 1.0, "sigma": 0.01}


def test_every_id_is_registered_with_its_labels():
    claims = load_all()
    for cid in IDS:
        claim = claims[cid]
        assert claim.paper == "ih" and claim.label and claim.statement and claim.doc


@pytest.mark.parametrize("cid", [pytest.param("ih.c3_1.part1", marks=pytest.mark.slow),
                                 pytest.param("ih.c3_1.stable_region", marks=pytest.mark.slow),
                                 pytest.param("ih.eq9", marks=pytest.mark.slow)])  # 30-50 s each cold: slow, to keep the default run under 10 min
def test_chain_claims_run_at_a_pinned_point_and_report_every_reading(cid):
    verdict = load_all()[cid].run(D0)
    assert verdict.status in STATUSES
    ev = verdict.evidence
    assert ev["grid"] == {"L": [40], "alpha": [1.0], "sigma": [0.01]}
    assert "canonical/eq4" in ev["readings"] and len(ev["readings"]) >= 2
    assert all(rec["config"]["L"] == 40 for rec in ev["records"])


def test_part1_records_the_hitting_times_in_order_and_the_bound_signs():
    verdict = load_all()["ih.c3_1.part1"].run(D0)
    rec = next(r for r in verdict.evidence["records"] if r["canonical"])
    assert rec["events"]["T_g_half"] < rec["events"]["T_1g"]
    bound = rec["parts"]["step4_p1_bound"]
    gs = 0.5
    assert bound["printed_bound"] == pytest.approx(1 / (2 * gs**2 - 1))
    assert bound["bound_positive"] is (bound["printed_bound"] > 0)


@pytest.mark.slow  # ~15 s cold: out of the default run (under 10 min); `tdcheck run ih` decides the claim
def test_phase1_window_is_consistent_with_the_ratio():
    verdict = load_all()["ih.thm4.phase1"].run({**D0, "flow": "paper", "head1_range": "canonical"})
    rec = verdict.evidence["records"][0]
    window = rec["parts"]["window"]
    assert (window["status"] == "holds") == (rec["L_IH2_ratio"] >= 0.99 or window["T_I_min"] <= window["T_IH_0.99"])
    assert rec["T_I_min"] > 0 and rec["hypotheses"]["L_Omega_1_over_sigma"] is False  # Lσ = 0.4


@pytest.mark.slow  # ~17 s cold: out of the default run (under 10 min); `tdcheck run ih` decides the claim
def test_fixed_point_finds_the_printed_point_among_the_stationary_points():
    verdict = load_all()["ih.fixed_point"].run({})
    pts = verdict.evidence["wh_block"]["exp_simplified/canonical/paper"]["stationary_points"]
    assert any(abs(p["w"] - 0.49) < 1e-8 and abs(p["h"] - 0.5) < 1e-8 for p in pts)
    layout = verdict.evidence["value_layout_printed_matrices"]
    assert layout["loss_at_printed_point"] == pytest.approx(2 * layout["loss_at_h0"])


@pytest.mark.slow  # ~25 s cold; the quick `tdcheck run ih` runs both claims as well
def test_lemma3_and_stage1_rate_run():
    for cid in ("ih.lemma3", "ih.dv.stage1_rate"):
        verdict = load_all()[cid].run({})
        assert verdict.status in STATUSES
    rate = load_all()["ih.dv.stage1_rate"].run({"L": 10, "init": "c2"})
    run = rate.evidence["runs"][0]
    assert run["K"] == pytest.approx(0.5 * 0.01 / 8)  # g*σ/(L-2) under init c2
    assert math.isfinite(run["ptilde_end"])


def test_a_pinned_parameter_outside_the_domain_is_refused():
    from derivations.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        load_all()["ih.eq8"].run({"sigma": 2.0})


@pytest.mark.slow  # three loop kernels, ~10 s cold
@pytest.mark.parametrize("L", [4, 40, 10_000])
def test_the_bracket_kernels_match_the_printed_closed_form_at_80_digits(L):
    # the kernels sum m(p) = Σ s e^{-ps}; the printed closed form, evaluated at 80 digits, is the reference
    # (in double precision it cancels at small p), so this checks both the sum and the chain rule
    import mpmath
    import numpy as np
    import sympy as sp

    from checks.induction_head.four_gram_claims import _bracket_functions
    from derivations.flows import gradient
    from derivations.induction_head import symbols as S

    p, g, alpha, length = S.p, S.g, S.alpha, S.L
    ratio_m = S.m_closed(2 * p, length) / S.m_closed(p, length)
    ratio_M = (1 + sp.exp(-p * (length - 2))) / (1 + sp.exp(-p))
    bracket = S.gstar - g * ratio_M + g * ratio_m
    exprs = [*gradient(bracket, [p, g]), ratio_m - ratio_M]
    reference = sp.lambdify((p, g, alpha, length), exprs, "mpmath")
    d_p, d_g, factor = _bracket_functions()
    ps, gs = np.geomspace(1e-7, 30, 25), np.linspace(0.1, 1.0, 25)
    values = [d_p(ps, gs, 2.0, L), d_g(ps, gs, 2.0, L), factor(ps, L)]
    with mpmath.workdps(80):
        for j, (pv, gv) in enumerate(zip(ps, gs)):
            ref = reference(mpmath.mpf(pv), mpmath.mpf(gv), mpmath.mpf(2), mpmath.mpf(L))
            for i, name in enumerate(("d/dp", "d/dg", "factor")):
                # d/dg and the factor are m(2p)/m(p) - (1+e^{-p(L-2)})/(1+e^{-p}), two ratios near 1 whose
                # difference → 0 like p: their rounding (a few ulps of 1) is an absolute floor
                assert abs(values[i][j] - float(ref[i])) <= 1e-12 * abs(float(ref[i])) + 1e-14, (name, pv)
