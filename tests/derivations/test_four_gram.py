"""The ξ-bounds of C.3.1 Part I (derivations.induction_head.four_gram): the encodings N/D are the
printed ratios, the region is the printed choice of L, and the encoded inequalities say what the
printed bounds say at every sampled point."""

import math
import random

import mpmath
import pytest
import sympy as sp

from derivations.induction_head import four_gram
from derivations.induction_head.symbols import L, p, u

LENGTHS = (6, 7, 9, 12, 40)


def _in_u(expr: sp.Expr, length: int) -> sp.Expr:
    """``expr`` at this L as a rational function of u = e^{-p} (exp(k log u) = u^k for integer k)."""
    return sp.powsimp(sp.expand_power_exp(expr.subs(L, length).subs(p, -sp.log(u))))


@pytest.mark.parametrize("length", LENGTHS)
def test_normalised_ratios_are_the_printed_quantities_over_their_centres(length):
    for name, (quantity, centre, numerator, denominator) in four_gram.normalised_ratios().items():
        gap = _in_u(quantity / centre - numerator / denominator, length)
        assert sp.cancel(sp.together(gap)) == 0, name
        assert all(_in_u(denominator, length).subs(u, sp.Rational(k, 10)) > 0 for k in range(1, 10)), name


@pytest.mark.parametrize("length", (5, *LENGTHS))
def test_xi_fractions_are_one_plus_xi_under_both_definitions(length):
    definitions = four_gram.xi_definitions(sp.Integer(length))
    for definition, fractions in four_gram.xi_fractions(sp.Integer(length)).items():
        for name, (numerator, denominator) in fractions.items():
            gap = numerator / denominator - 1 - definitions[definition][name]
            assert sp.cancel(sp.together(gap)) == 0, (definition, name)


@pytest.mark.parametrize("length", LENGTHS)
def test_the_region_is_the_printed_choice_of_L(length):
    # (L-3)e^{-(L-3)p} and e^{-(L-5)p} decrease in p: the region is p > p_L, solved by hand
    edge = max(math.log(1e4 * (length - 3)) / (length - 3), math.log(1e4) / (length - 5))
    domain = four_gram.L_choice_domain()
    assert domain.contains({L: length, p: edge * (1 + 1e-9)})
    assert not domain.contains({L: length, p: edge * (1 - 1e-9)})


FORMS = four_gram.normalised_ratios()


def _printed_margin(name: str, side: str, point: dict) -> mpmath.mpf:
    """The printed bound's margin from the closed forms: Q - lo·C (lower) or hi·C - Q (upper)."""
    eps = four_gram.XI_BOUND
    ratio = ((1 - eps) / (1 + eps), (1 + eps) / (1 - eps))
    factors = {"m_over_M2": ratio, "m2p_over_mp": ratio, "one_over_M": (1 - eps, 1 + eps),
               "one_over_M_corrected": (1 / (1 + eps), 1 / (1 - eps)),
               "squared_norm_partI": (1 - eps, 1 + eps),
               "squared_norm_corrected": (1 / (1 + eps), 1 / (1 - eps))}
    quantity, centre, _, _ = FORMS[name]
    lo, hi = factors[name]
    margin = quantity - lo * centre if side == "lower" else hi * centre - quantity
    with mpmath.workdps(60):
        return mpmath.mpf(sp.N(margin.subs(point), 60))


NAMES = {"ih.cf.ratios.m_over_M2_xi": "m_over_M2", "ih.cf.ratios.one_over_M_xi": "one_over_M",
         "ih.cf.ratios.one_over_M_corrected": "one_over_M_corrected",
         "ih.cf.ratios.m2p_over_mp_xi": "m2p_over_mp", "ih.cf.lemma8.partI_range": "squared_norm_partI",
         "ih.cf.lemma8.corrected_range": "squared_norm_corrected"}


def test_encoded_inequalities_have_the_sign_of_the_printed_bounds():
    inequalities = four_gram.ratio_bounds() + four_gram.squared_norm_bounds()
    assert {i.id.rsplit(".", 1)[0] for i in inequalities} == set(NAMES)
    points = four_gram.L_choice_domain().sample(random.Random(1), 12)
    for inequality in inequalities:
        stem, side = inequality.id.rsplit(".", 1)
        for point in points:
            exact = {s: sp.Rational(v) for s, v in point.items()}
            encoded = sp.N((inequality.rhs - inequality.lhs).subs(exact), 60)
            printed = _printed_margin(NAMES[stem], side, exact)
            assert (encoded >= 0) == (printed >= 0), (inequality.id, point, encoded, printed)


def test_printed_one_over_M_bound_fails_and_the_corrected_one_holds_at_a_known_point():
    # L = 40, p = 1: 1/M = (1-e^{-1})/(1-e^{-38}) ≈ 0.632, while (1-ε)/(1-e^{-1}) ≈ 1.582
    point = {L: 40, p: 1}
    by_id = {i.id: i for i in four_gram.ratio_bounds()}
    for name, holds in (("one_over_M_xi.lower", False), ("one_over_M_corrected.lower", True),
                        ("one_over_M_corrected.upper", True)):
        inequality = by_id[f"ih.cf.ratios.{name}"]
        assert bool(sp.N((inequality.rhs - inequality.lhs).subs(point), 30) >= 0) is holds, name
    one_over_M = 1 / sp.N(sp.Sum(sp.exp(-sp.Symbol("k")), (sp.Symbol("k"), 0, 37)).doit(), 30)
    assert one_over_M == pytest.approx(1 - math.exp(-1), rel=1e-12)


def test_xi_bound_inequalities_cover_every_xi_of_both_definitions():
    pairs = four_gram.xi_bound_inequalities(40, (sp.Rational(1, 2), sp.Rational(121, 2)))
    names = [n for _, stands_for in pairs for n in stands_for]
    assert sorted(set(names)) == sorted(f"{d}.xi{i}" for d in ("read_off", "implied") for i in range(1, 6))
    assert len(pairs) == 2 * len({tuple(s) for _, s in pairs})
