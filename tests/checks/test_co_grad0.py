"""The t = 0 gradient claims of co (checks.word_cooccurrence.grad0_items): the derived constant from first
principles, the cached records and their two methods, the term-by-term rule for sums, and small runs."""

import math

import numpy as np
import pytest
import sympy as sp

from checks.registry import load_all
from checks.status import Status
from checks.word_cooccurrence import grad0_items as G


@pytest.fixture(scope="module")
def registry():
    return load_all()


def test_the_leading_constant_is_g0_times_the_group_difference():
    # g = −ℓ' with ℓ(x) = log(1 + e^{−x}): g(0) = ½; |I₁|/n − |I₂|/n = ½ − ⅙ = ⅓; Σ_l 1/L = 1
    assert G.derived_leading_constant() == sp.Rational(1, 2) * sp.Rational(1, 3)


def test_records_are_cached_bit_for_bit_and_both_methods_agree():
    first = G.grad0_record(0, 64, 0.3, 0, 5)
    again = G.grad0_record(0, 64, 0.3, 0, 5)
    for name in ("D", "main", "eps1", "eps2", "s", "F"):
        assert np.array_equal(first[name], again[name])
    assert first["chain_rule_relative"] <= G.CHAIN_RTOL and first["split_relative"] <= G.CHAIN_RTOL
    assert math.isnan(G.grad0_record(0, 64, 0.3, 1, 5)["chain_rule_relative"])  # second method at index 0 only


def _synthetic(observed, terms):
    rng = np.random.default_rng(3)
    out = []
    for m in (128, 256, 512, 1024, 2048, 4096, 8192):
        for index in range(6):
            out.append({"n": 24, "kappa": 0.5, "m": m, "x": observed(m) * (1 + 1e-4 * rng.standard_normal()),
                        "terms": terms(m)})
    return out


def test_a_sum_is_bounded_when_one_term_bounds_it_and_fails_only_when_none_does():
    # X = m: bounded by the term m, not by √m — a sum containing the term m holds, {√m, 1} fails
    records = _synthetic(lambda m: float(m), lambda m: {"m": float(m), "sqrt m": math.sqrt(m)})
    decided = G._sum_of_terms(records, lambda r: r["x"], lambda r: r["terms"], "X")
    assert decided["status"] is Status.HOLDS and decided["bounded_terms"] == ["m"]
    records = _synthetic(lambda m: float(m), lambda m: {"sqrt m": math.sqrt(m), "1": 1.0})
    assert G._sum_of_terms(records, lambda r: r["x"], lambda r: r["terms"], "X")["status"] is Status.FAILS


def test_inits_grow_where_they_are_cheap():
    assert [G.inits_at(6, m, 8192) for m in (128, 1024, 4096, 8192)] == [48, 48, 12, 6]


def test_the_leading_constant_claim_sees_one_sixth_at_small_scale(registry):
    verdict = registry["co.cf.lemE_4_leading"].run({"m": 128, "seeds": 2, "kappa": 0.02})
    rows = verdict.evidence["per_init"]
    assert rows and all(abs(r["s_mu1"] - 1 / 6) <= r["distance_bound"] + 1e-15 for r in rows)
    assert all(r["distance_bound"] < 0.01 for r in rows)  # F⁽⁰⁾ ∝ κ², π − 1 ∝ κ²/m: close to the F = 0 value


def test_the_random_token_rate_matches_its_leading_order(registry):
    verdict = registry["co.lemE_6.random_grad"].run({"m": 2048, "seeds": 3, "kappa": 0.05, "data_set": 0})
    deepest = [x for x in verdict.evidence["leading_order"]["observed"] if x["m"] == 2048]
    assert all(abs(x["mean_n_D_over_unit_times_label"] - 0.5) < 0.05 for x in deepest)
    assert all(x["sign_agreement"] == 1.0 for x in deepest)
