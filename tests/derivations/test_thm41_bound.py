"""Tests of the Thm 4.1 bound chain (ih.dv.thm41_bound) against direct mpmath sums."""

import mpmath
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.induction_head import approximation as A


def _one_minus_A_direct(p: float, s: int) -> mpmath.mpf:
    """1 - A_{s,s-1}: the softmax mass of lags 2..s-1 among logits -p(k-1), k = 1..s-1 (no cancellation)."""
    with mpmath.workdps(50):
        terms = [mpmath.exp(-p * k) for k in range(s - 1)]
        return mpmath.fsum(terms[1:]) / mpmath.fsum(terms)


@pytest.fixture(scope="module")
def item():
    return A.item_thm41_bound()


def test_identity_and_chain_are_exact(item):
    for formula in item.formulas:
        assert formula.verify(n_points=8, symbolic_seconds=5.0).status == "exact", formula.id


def test_inequality_below_exp_holds_on_samples(item):
    (below,) = item.inequalities
    assert below.sample_margin(n_points=300).holds


@given(st.floats(0.05, 20.0), st.integers(2, 300))
def test_closed_form_matches_direct_sum(p, s):
    with mpmath.workdps(50):
        direct = _one_minus_A_direct(mpmath.mpf(p), s)
        if s == 2:
            assert abs(direct) < mpmath.mpf(10) ** -40
            return
        value = mpmath.mpf(str(sp.N(A.one_minus_A_stated(sp.Float(p, 50), s), 45)))
        assert abs(value - direct) <= mpmath.mpf(10) ** -30 * abs(direct)
        # the margin e^{-p(s-1)}(1-e^{-p})/(1-e^{-p(s-1)}) falls below 50 digits for large ps
        assert direct <= mpmath.exp(-mpmath.mpf(p)) * (1 + mpmath.mpf(10) ** -45)


def test_worst_key_position_is_the_last():
    derivative = A.monotone_in_s()
    for p, s in [(0.3, 3), (1.0, 5), (4.0, 10), (10.0, 3)]:
        assert derivative.subs({A.p: p, sp.Symbol("s", integer=True, nonnegative=True): s}).evalf() > 0


def test_chain_links_multiply_to_the_stated_bound():
    links = A.bound_chain()
    assert sp.simplify(links["output_gap"] - A.bound_stated()[0]) == 0
    assert sp.simplify(A.bound_stated()[0].subs(A.S_W, A.B * A.W11) - A.bound_stated()[1]) == 0
