"""The presentation pass (issue #17, item 1): derived forms in the shape a person prints, never a different value."""

import random

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from derivations.core import Formula
from derivations.domain import Domain
from derivations.presentation import (
    closed_geometric_sums, collected, powers_from_exp_log, present, rational_in_exponentials, sums_like, tidy_exponentials,
)

p = sp.Symbol("p", positive=True)
u = sp.Symbol("u", positive=True)
L = sp.Symbol("L", integer=True, positive=True)
s, k = sp.Symbol("s", integer=True), sp.Symbol("k", integer=True)


def _value(expr, point, dps=40):
    with mpmath.workdps(dps):
        return sp.N(expr.subs(point).doit(), dps)


def test_m_is_presented_with_the_printed_summation_index():
    """m(p) is derived as Σ_{s=2}^{L−1} (−L+s+1) e^{−p(L−s−1)}; the print sums s e^{−ps} over s = 1 … L−3."""
    derived = sp.Sum((-L + s + 1) * sp.exp(-p * (L - s - 1)), (s, 2, L - 1))
    printed = sp.Sum(s * sp.exp(-p * s), (s, 1, L - 3))
    assert sums_like(derived, printed) == -printed


def test_a_power_is_printed_as_a_power():
    assert powers_from_exp_log(sp.exp((L - 2) * sp.log(u))) == u ** (L - 2)
    assert powers_from_exp_log(sp.exp(2 * (L - 2) * sp.log(u) - p)) == u ** (2 * (L - 2)) * sp.exp(-p)
    assert tidy_exponentials(u ** L / u ** 2) == u ** (L - 2)


def test_a_geometric_sum_is_closed_where_the_print_is_closed():
    printed = (1 - sp.exp(-p * (L - 2))) / (1 - sp.exp(-p))
    closed = closed_geometric_sums(sp.Sum(sp.exp(-p * s), (s, 0, L - 3)), printed)
    assert sp.simplify(closed - printed) == 0 and not closed.has(sp.Sum)
    kept = sp.Sum(s * sp.exp(-p * s), (s, 1, L - 3))  # not geometric: s e^{-ps}
    assert closed_geometric_sums(kept, printed) == kept
    assert closed_geometric_sums(sp.Sum(sp.exp(-p * s), (s, 0, L)), kept).has(sp.Sum)  # the print sums too


def test_a_sum_of_exponentials_becomes_one_rational_function():
    expr = sp.exp(-p) / (1 + sp.exp(-p) + sp.exp(-2 * p)) + 1 / (1 + sp.exp(-p))
    shaped, where = rational_in_exponentials(expr)
    (z, definition), = where
    assert definition == sp.exp(-p) and shaped.free_symbols == {z}
    assert sp.simplify(shaped.subs(z, sp.exp(-p)) - expr) == 0


def _formula(derived, stated, domain):
    return Formula("test.presentation", "test", stated, derived, domain)


@settings(max_examples=25, deadline=None)
@given(coefficients=st.lists(st.integers(-3, 3), min_size=1, max_size=3), lower=st.integers(0, 3),
       length=st.integers(1, 4), shift=st.integers(-2, 2), reverse=st.booleans())
def test_a_reindexed_sum_keeps_its_value(coefficients, lower, length, shift, reverse):
    """Property: whatever index a random sum is written with, re-indexing it like a printed sum keeps the value."""
    summand = sum(c * s ** j for j, c in enumerate(coefficients)) * sp.exp(-p * s)
    upper = lower + length + L
    original = sp.Sum(summand, (s, lower, upper))
    if reverse:
        written = sp.Sum(summand.subs(s, lower + upper - k), (k, lower, upper))
    else:
        written = sp.Sum(summand.subs(s, k + shift), (k, lower - shift, upper - shift))
    rewritten = sums_like(written, original)
    for point in ({p: sp.Rational(3, 7), L: 2}, {p: sp.Rational(11, 5), L: 5}):
        assert abs(_value(rewritten, point) - _value(original, point)) <= 1e-30 * (1 + abs(_value(original, point)))


@settings(max_examples=20, deadline=None)
@given(numerator=st.lists(st.integers(-4, 4), min_size=1, max_size=4),
       denominator=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_collected_keeps_the_value(numerator, denominator):
    a = sp.Symbol("a", positive=True)
    expr = sum(c * (a + j) * u ** j for j, c in enumerate(numerator)) / (1 + sum(d * u ** (j + 1) for j, d in
                                                                                 enumerate(denominator)))
    shaped = collected(expr)
    for point in ({u: sp.Rational(1, 3), a: 2}, {u: sp.Rational(5, 2), a: sp.Rational(1, 7)}):
        assert abs(_value(shaped, point) - _value(expr, point)) <= 1e-30 * (1 + abs(_value(expr, point)))


def test_present_returns_the_derived_value_and_says_how():
    derived = sp.Sum((-L + s + 1) * sp.exp(-p * (L - s - 1)), (s, 2, L - 1))
    printed = sp.Sum(s * sp.exp(-p * s), (s, 1, L - 3))
    domain = Domain.from_mapping({p: (0.1, 5), L: range(4, 12)})
    shown = present(_formula(derived, printed, domain))
    assert "summation index as printed" in shown.rewrites
    assert shown.value == -printed
    point = {p: sp.Rational(2, 3), L: 7}
    assert abs(_value(shown.value, point) - _value(derived, point)) < 1e-35


def test_a_rewrite_that_is_wrong_is_not_kept(monkeypatch):
    """present keeps a rewrite only when the identity check confirms it: a sabotaged rewrite is dropped."""
    import derivations.presentation as presentation

    broken = (("sabotage", lambda e, t: 2 * e),) + presentation.REWRITES
    monkeypatch.setattr(presentation, "REWRITES", broken)
    domain = Domain.from_mapping({u: (0.1, 0.9), L: range(3, 9)})
    derived = sp.exp((L - 2) * sp.log(u))
    shown = present(_formula(derived, u ** (L - 2), domain))
    assert "sabotage" not in shown.rewrites and shown.value == u ** (L - 2)


@pytest.mark.parametrize("seed", range(3))
def test_present_on_the_papers_displays_keeps_values(seed):
    """Every presented display of an ih item equals its derivation at fresh random points (an independent check
    of the one present() already makes: other points, 50 digits, SymPy's own evaluation)."""
    from checks import registry

    claims = {c.id: c for c in registry.select(["ih.cf.m", "ih.cf.lemma8", "ih.cf.flow_wh"])}
    formulas = [f for c in claims.values() for f in c.check.item.formulas]
    rng = random.Random(seed)
    for formula in rng.sample(formulas, 3):
        shown = present(formula)
        for point in formula.domain.sample(rng, 2):
            exact = {sym: sp.Rational(str(value)) if not isinstance(value, int) else value
                     for sym, value in point.items()}
            a, b = _value(shown.value, exact, 50), _value(formula.derived, exact, 50)
            assert abs(a - b) <= sp.Float(1e-40) * (1 + abs(b)), (formula.id, shown.rewrites)
