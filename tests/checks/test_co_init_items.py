"""co.cf.softmax_perturb and co.cf.init_moments: the Hessian constant, the stable remainder, the initial moments,
pinned parameters and bit-for-bit replay."""

import json
import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.registry import load_all
from checks.word_cooccurrence import init_items as I
from derivations.errors import InvalidArgument
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.data import REGIMES, build_dataset


@pytest.fixture(scope="module")
def registry():
    return load_all()


def _padded(values, L):
    out = np.zeros((1, I.L_MAX))
    out[0, :L] = values
    return out


def _softmax(s):
    e = np.exp(s - np.max(s))
    return e / e.sum()


# ---- co.cf.softmax_perturb ------------------------------------------------------------------------------------
def test_second_order_term_is_half_the_sympy_hessian_form():
    """½uᵀ∇²p_iu = ½p_i[(u_i − ū)² − Var_p(u)] against SymPy's second derivatives of the softmax at L = 3."""
    s = sp.symbols("s1:4", real=True)
    total = sum(sp.exp(v) for v in s)
    point = {s[0]: sp.Rational(3, 10), s[1]: sp.Rational(-7, 5), s[2]: sp.Rational(11, 10)}
    u = np.array([0.6, -0.48, 0.64])
    p = _softmax(np.array([float(point[v]) for v in s]))
    mine = I.second_order(_padded(p, 3), _padded(u, 3))[0, :3]
    for i in range(3):
        H = sp.Matrix(3, 3, lambda j, k: sp.diff(sp.exp(s[i]) / total, s[j], s[k]).subs(point))
        exact = 0.5 * float((sp.Matrix(u).T * H * sp.Matrix(u))[0])
        assert mine[i] == pytest.approx(exact, rel=1e-12, abs=1e-15)


@settings(deadline=None, max_examples=80)
@given(st.integers(I.L_MIN, I.L_MAX).flatmap(lambda L: st.tuples(
    st.lists(st.floats(-25, 25), min_size=L, max_size=L),
    st.lists(st.floats(-1, 1), min_size=L, max_size=L).filter(lambda v: math.hypot(*v) > 1e-3),
    st.floats(1e-4, 3.0))))
def test_the_hessian_constant_bounds_the_exact_remainder(case):
    """Lagrange: ξ_i = ½εᵀ∇²p_i(s + θε)ε, and the docstring's proof gives ‖ξ‖_∞ ≤ (3/16)‖ε‖² for every s, ε, L;
    the second-order term at s obeys the same bound. ξ is taken from the definition at 40 digits."""
    s, u, t = np.array(case[0]), np.array(case[1]), case[2]
    u = u / np.linalg.norm(u)
    L = s.size
    p = _softmax(s)
    assert np.max(np.abs(I.second_order(_padded(p, L), _padded(u, L)))) <= I.HESSIAN_BOUND
    assert I.remainder_mp(p, t * u, L, digits=40) <= I.HESSIAN_BOUND * t**2 * (1 + 1e-12)


@pytest.mark.parametrize("t", [1e-1, 1e-4, 1e-7])
def test_stable_remainder_equals_the_high_precision_definition(t):
    draws = I.perturbation_draws(60, seed=5)
    fast = np.max(np.abs(I.remainder(draws.p, t * draws.u)), axis=1)
    slow = [I.remainder_mp(draws.p[k], t * draws.u[k], int(draws.L[k])) for k in range(60)]
    np.testing.assert_allclose(fast, slow, rtol=1e-10)


def test_phi_is_accurate_on_both_branches():
    for x in (1e-9, -3e-5, 0.0999, 0.1, -0.5, 2.0):
        with mpmath.workdps(40):
            exact = float(mpmath.expm1(x) - x)
        assert I.phi(np.array([x]))[0] == pytest.approx(exact, rel=1e-14, abs=0)


def test_softmax_perturb_is_bounded_below_the_proven_constant(registry):
    """Lemma G.2 is a theorem (Taylor with the constant 3/16 of the module docstring): every draw's ratio is below
    3/16 and the ratio settles as ‖ε‖ → 0, at the exact second-order supremum."""
    verdict = registry["co.cf.softmax_perturb"].run()
    e = verdict.evidence
    sups = [w["sup_ratio"] for w in e["sup_ratio_per_magnitude"]]
    assert max(sups) <= I.HESSIAN_BOUND
    assert e["draws"] == 20000 and e["rounding"]["audit"]["ok"]
    assert sups[-1] == pytest.approx(e["second_order_limit"]["sup_half_uHu"], rel=1e-5)
    assert verdict.status == "holds"


def test_draws_must_split_over_the_magnitudes(registry):
    with pytest.raises(InvalidArgument, match="draws=1001"):
        registry["co.cf.softmax_perturb"].run({"draws": 1001})
    with pytest.raises(InvalidArgument, match="audit"):
        registry["co.cf.softmax_perturb"].run({"draws": 80, "audit": 11})


# ---- co.cf.init_moments ----------------------------------------------------------------------------------------
def test_uniform_attention_moment_matches_sigma0_squared_m_over_L():
    """Independent of the module: W_V ~ 𝒩(0, σ₀²), p = 𝟏/L, distinct tokens ⇒ E‖W_VX𝟏/L‖² = σ₀²m/L exactly;
    the mean over 400 inits of the per-init sample average lies within 3 SE."""
    regime = REGIMES["init"]
    L, m, m1, kappa = regime.L, 128, regime.m1, 0.5
    data = build_dataset(regime.counts[0], L, regime.d[0], seed=0)
    s0 = kappa / math.sqrt(L * m)
    lay = Mo.layout(m, m1, data.d)
    per_init = []
    for k in range(400):
        WV = lay.view(Mo.init_params(m, m1, data.d, s0, 1.0, [11, k]), "WV")
        per_init.append(np.mean(np.sum(WV[:, data.tokens].mean(axis=2) ** 2, axis=0)))
    mean, se = np.mean(per_init), np.std(per_init, ddof=1) / math.sqrt(len(per_init))
    assert abs(mean - s0**2 * m / L) <= 3 * se


def test_uniform_gap_is_accurate_without_cancellation():
    """L‖Xp‖² − 1 = LΣ_h(p_h − 1/L)² from expm1 of the scores, against 40-digit softmax at tiny scores."""
    rng = np.random.default_rng(3)
    m, L = 64, 4
    K, Q = 3e-6 * rng.standard_normal((2, m, L)), 3e-6 * rng.standard_normal((2, m, L))
    gap = I._uniform_gap(K, Q, m)
    with mpmath.workdps(40):
        for n in range(2):
            for l in range(L):
                scores = [mpmath.mpf(float(K[n, :, h] @ Q[n, :, l])) / mpmath.sqrt(m) for h in range(L)]
                w = [mpmath.exp(v) for v in scores]
                exact = L * mpmath.fsum((v / mpmath.fsum(w)) ** 2 for v in w) - 1
                assert gap[n, l] == pytest.approx(float(exact), rel=1e-8, abs=0)


def test_symbolic_moments_are_the_gaussian_ones():
    sym = I.symbolic_moments()
    assert sym["lemD4"]["middle_equal"] and sym["lemD4"]["last_equal_at_uniform"]
    assert sym["lemD7"]["conditional_equals_sigma1^2_m1_|v|^2"] and sym["lemD7"]["unconditional_equals_printed"]
    assert sym["lemD7"]["kurtosis_equals_3(1+2/m)"]


_SMALL = {"m": 128, "inits": 40, "kappa": 0.1}


def test_pinned_parameters_reach_the_check(registry):
    verdict = registry["co.cf.init_moments"].run(_SMALL)
    points = verdict.evidence["points"]
    assert [(p["m"], p["kappa"]) for p in points] == [(128, 0.1)]
    assert points[0]["lemD4"]["uniform"]["inits"] == 40 == verdict.evidence["inits"]
    assert points[0]["sigma0"] == pytest.approx(0.1 / math.sqrt(4 * 128))
    assert verdict.pinned == sorted(_SMALL)


def test_readings_switch_the_verdict_not_the_draws(registry):
    """Σ_h p_h² > 1/L whenever p ≠ 𝟏/L (Cauchy–Schwarz with equality only at uniform p), so at p⁽⁰⁾ the last
    equality of D.4 is not an identity; the readings are evaluated on the same draws (same numbers)."""
    canonical = registry["co.cf.init_moments"].run(_SMALL)
    uniform = registry["co.cf.init_moments"].run({**_SMALL, "attention": "uniform"})
    assert canonical.evidence["points"] == uniform.evidence["points"]
    assert canonical.evidence["points"][0]["lemD4"]["p0"]["last_equality_relative_excess"]["min"] > 0
    assert canonical.evidence["display_status"]["lemD4_chain"] in ("differs", "fails")
    p0_status = canonical.evidence["display_status"]["lemD4_chain"]
    assert uniform.evidence["readings"]["others"]["attention=p0"] == p0_status


def _dump(verdict) -> str:
    return json.dumps(verdict.to_dict()["evidence"], sort_keys=True)


@pytest.mark.parametrize("claim_id,params", [("co.cf.init_moments", _SMALL),
                                             ("co.cf.softmax_perturb", {"draws": 800, "audit": 20})])
def test_replay_is_bit_for_bit(registry, claim_id, params):
    claim = registry[claim_id]
    first, again = claim.run(params, seed=4), claim.run(params, seed=4)
    other = claim.run(params, seed=5)
    assert _dump(first) == _dump(again)
    assert _dump(first) != _dump(other)


@pytest.mark.parametrize("params,name", [({"kappa": 1.5}, "kappa"), ({"kappa": 0}, "kappa"), ({"m": 0}, "m"),
                                         ({"inits": 1}, "inits"), ({"n": 30}, "n"),
                                         ({"attention": "mean"}, "attention")])
def test_bad_values_name_the_parameter(registry, params, name):
    with pytest.raises(InvalidArgument, match=name):
        registry["co.cf.init_moments"].run({**_SMALL, **params})
