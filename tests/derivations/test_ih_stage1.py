"""Tests of ih.cf.stage1 ([W] App. C.2): every printed display against facts derived by hand.

The expected verdicts come from hand derivations (stated next to each set) and are cross-checked
with an independent plain-mpmath implementation of the Stage-I model (``_q``, ``_loss`` below),
never with the tool's own output.
"""

from fractions import Fraction

import mpmath
import pytest
import sympy as sp

from derivations.induction_head import stage1
from derivations.induction_head.symbols import alpha, ptilde, sigma

mp = mpmath.mp

# Hand derivations (C.2):
# * displays 2 and 3 of Function I are q with the normaliser summed as a geometric series;
#   display 1 has e^{+p̃(s-1-τ)}; display 4 multiplies by e^{2p̃τ} without removing τ from the
#   exponent; display 5 drops the denominator 1 - e^{-p̃(s-1)}.
# * the first dq/dp̃ line is the product rule applied to (1-e^{-p̃})²e^{2p̃τ}S_τ² with the correct
#   S_τ = Σ_s 1/(e^{p̃(s-1)} - 1); the second line drops the factor (1-e^{-p̃}) in front of
#   (s-1)e^{p̃(s-1)}/(e^{p̃(s-1)}-1)².
# * the head-1 output row is exact under init = c2; the head-2 row normalises L-3 uniform weights
#   by L-2 (the 'mixed' reading), so it differs from both the literal and canonical models.
# * the last factor's first form is the printed dq line 2 summand; its second form equals the
#   first only with t = e^{+p̃}.
EQUAL = {f"{name}.L{n}" for name in ("q_chain1", "q_chain2", "dq_line1", "output_head1") for n in (5, 7)}
EQUAL |= {"last_factor1_vs_line2", "last_factor2_t_plus_vs_form1"}


@pytest.fixture(scope="module")
def item():
    return stage1.item_stage1()


@pytest.fixture(scope="module")
def verdicts(item):
    return {
        f.id.removeprefix("ih.cf.stage1."): f.verify(n_points=4, symbolic_seconds=0.05) for f in item.formulas
    }


@pytest.fixture(scope="module")
def margins(item):
    return {q.id.removeprefix("ih.cf.stage1."): q.sample_margin(n_points=200) for q in item.inequalities}


def _A(s, tau, pt):
    return mpmath.exp(-pt * (s - 1 - tau)) / mpmath.fsum(mpmath.exp(-pt * k) for k in range(s - 1))


def _q(length, pt):
    return mpmath.fsum(
        mpmath.fsum(_A(s, t, pt) for s in range(t + 1, length)) ** 2 for t in range(1, length - 1)
    )


def _loss(length, pt, sig, alp):
    """½E(σΣ_s π_s y_s - g* x_{L-2})² through covariances of the y_s (π_s = 1/(L-2), init = c2)."""
    gs, pi, positions = alp / (1 + alp), mpmath.mpf(1) / (length - 2), range(2, length)
    cov = lambda s1, s2: mpmath.fsum(_A(s1, t, pt) * _A(s2, t, pt) for t in range(1, min(s1, s2)))  # noqa: E731
    head = sig**2 * pi**2 * mpmath.fsum(cov(s1, s2) for s1 in positions for s2 in positions)
    cross = sig * gs * pi * mpmath.fsum(_A(s, length - 2, pt) for s in positions if s > length - 2)
    return (head - 2 * cross + gs**2) / 2


def _at(expr, **values):
    symbols = {"ptilde": ptilde, "alpha": alpha, "sigma": sigma}
    return sp.N(expr.subs({symbols[k]: sp.nsimplify(v) for k, v in values.items()}), 30)


def test_every_formula_has_the_hand_derived_verdict(item, verdicts):
    assert len(verdicts) == len(item.formulas)
    for name, agreement in verdicts.items():
        assert agreement.equal == (name in EQUAL), (name, agreement)


def test_first_display_of_q_differs_by_a_hand_computed_value(item):
    # L = 5, p̃ = ln 2 (e^{p̃} = 2), exact fractions: the printed e^{+p̃(s-1-τ)} gives 10997/441,
    # q itself 1505/441 = 215/63.
    def nested(sign):
        total = Fraction(0)
        for t in range(1, 4):
            inner = sum(
                Fraction(2) ** (sign * (s - 1 - t)) / sum(Fraction(1, 2**k) for k in range(s - 1))
                for s in range(t + 1, 5)
            )
            total += inner**2
        return total

    assert nested(+1) == Fraction(10997, 441)
    assert nested(-1) == Fraction(215, 63)
    formula = next(f for f in item.formulas if f.id == "ih.cf.stage1.q_chain0.L5")
    at_ln2 = {ptilde: sp.log(2)}
    assert sp.nsimplify(sp.simplify(formula.stated.subs(at_ln2))) == sp.Rational(10997, 441)
    assert sp.nsimplify(sp.simplify(formula.derived.subs(at_ln2))) == sp.Rational(215, 63)


def test_derived_q_and_loss_match_an_independent_implementation():
    with mpmath.workdps(30):
        for length in (5, 7):
            for pt in ("0.3", "2.5", "9"):
                assert _at(stage1.q_derived(length), ptilde=pt) == pytest.approx(
                    float(_q(length, mpmath.mpf(pt))), rel=1e-12
                )
                value = _loss(length, mpmath.mpf(pt), mpmath.mpf("0.3"), mpmath.mpf(2))
                assert float(_at(stage1.stage1_loss_derived(length), ptilde=pt, sigma="0.3", alpha=2)) == (
                    pytest.approx(float(value), rel=1e-12)
                )


def test_loss_display_misses_one_half_and_has_the_wrong_cross_term(item):
    # printed - exact = ½g*² + ½σ²q/n² + 2σg*/n² + σg*A_{L-1,L-2}(p̃)/n (p = p(0) = 0 reading)
    formula = next(f for f in item.formulas if f.id == "ih.cf.stage1.loss_p0.L5")
    pt, sig, alp = mpmath.mpf("1.5"), mpmath.mpf("0.2"), mpmath.mpf(3)
    gs, n = alp / (1 + alp), 3
    expected = gs**2 / 2 + sig**2 * _q(5, pt) / (2 * n**2) + 2 * sig * gs / n**2 + sig * gs * _A(4, 3, pt) / n
    gap = _at(formula.stated - formula.derived, ptilde="1.5", sigma="0.2", alpha=3)
    assert float(gap) == pytest.approx(float(expected), rel=1e-12)


def test_printed_flow_is_twice_the_gradient_when_p_is_read_as_ptilde(item):
    flow = next(f for f in item.formulas if f.id == "ih.cf.stage1.flow_ptilde.L7")
    with mpmath.workdps(40):
        for pt in ("0.7", "4"):
            gradient = -mpmath.diff(lambda z: _loss(7, z, mpmath.mpf("0.1"), mpmath.mpf(1)), mpmath.mpf(pt))
            assert float(_at(flow.derived, ptilde=pt, sigma="0.1", alpha=1)) == pytest.approx(
                float(gradient), rel=1e-10
            )
            assert float(_at(flow.stated, ptilde=pt, sigma="0.1", alpha=1)) == pytest.approx(
                2 * float(gradient), rel=1e-10
            )


def test_lower_bound_fails_where_the_exact_flow_is_half_of_it(item, margins):
    # for large p̃, -dL^I/dp̃ ≈ σg* e^{-p̃}/(L-2) (the q' term is O(σ² e^{-2p̃})): half the printed bound
    with mpmath.workdps(40):
        gradient = -mpmath.diff(lambda z: _loss(5, z, mpmath.mpf("0.01"), mpmath.mpf(1)), mpmath.mpf(12))
    bound = 2 * mpmath.mpf("0.5") * mpmath.mpf("0.01") * mpmath.exp(-12) / 3
    assert float(gradient / bound) == pytest.approx(0.5, rel=1e-3)
    inequality = next(q for q in item.inequalities if q.id == "ih.cf.stage1.bound.L5")
    point = {ptilde: sp.Integer(12), alpha: sp.Integer(1), sigma: sp.Rational(1, 100)}
    assert inequality.sample_margin(n_points=0, extra_points=[point]).min_margin < 0
    for length in stage1.INEQUALITY_LENGTHS:
        assert not margins[f"bound.L{length}"].holds
        # the printed flow also falls below the bound as p̃ -> 0 (m/M² -> (L-3)/(2(L-2)) < 1)
        assert not margins[f"bound_printed_flow_p0.L{length}"].holds


def test_dq_is_nonpositive_by_finite_differences_and_by_sampling(margins):
    with mpmath.workdps(40):
        for length in (5, 7):
            for pt in (0.2, 1, 3, 8, 15):
                assert mpmath.diff(lambda z, n=length: _q(n, z), mpmath.mpf(pt)) < 0
    for length in stage1.INEQUALITY_LENGTHS:
        assert margins[f"dq_nonpositive.L{length}"].holds


def test_sign_argument_of_the_last_factor_fails(item, margins):
    forms = stage1.last_factor_forms()
    tau, s = stage1.tau, stage1.s
    # printed second form at τ = 2, s = 3, t = e^{-p̃} = 2/5: numerator -t - 2 + 1/t = 1/10 > 0
    value = forms["form2"].subs({tau: 2, s: 3, ptilde: sp.log(sp.Rational(5, 2))})
    assert sp.nsimplify(sp.simplify(value * (sp.Rational(5, 2) ** 2 - 1) ** 2)) == sp.Rational(1, 10)
    # first principles at τ = 2, s = 3: the summand is e^{-p̃τ} dA/dp̃ with A = 1/(1+e^{-p̃}) increasing
    expected = lambda pt: mpmath.exp(-2 * pt) * mpmath.exp(-pt) / (1 + mpmath.exp(-pt)) ** 2  # noqa: E731
    assert float(_at(forms["derived"].subs({tau: 2, s: 3}), ptilde=2)) == pytest.approx(
        float(expected(2)), rel=1e-12
    )
    # first form = first principles - e^{-p̃}(s-1)e^{p̃(s-1)}/(e^{p̃(s-1)}-1)² (the lost factor 1-e^{-p̃})
    for t_, s_, pt in ((1, 3, "0.5"), (4, 9, "2")):
        big = sp.exp(sp.nsimplify(pt) * (s_ - 1))
        missing = sp.exp(-sp.nsimplify(pt)) * (s_ - 1) * big / (big - 1) ** 2
        gap = (forms["derived"] - forms["form1"]).subs({tau: t_, s: s_, ptilde: sp.nsimplify(pt)})
        assert float(sp.N(gap - missing, 30)) == pytest.approx(0, abs=1e-25)
    assert not margins["t_ge_1"].holds and margins["t_ge_1"].min_margin < 0
    assert not margins["last_factor_sign_printed"].holds
    assert not margins["last_factor_sign_derived"].holds
