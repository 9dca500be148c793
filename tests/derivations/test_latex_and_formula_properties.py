"""The paper LaTeX printer (golden strings) and Formula.verify as a property: equal forms never differ,
perturbed forms always do."""

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.core import Formula
from derivations.domain import Domain, Interval
from derivations.induction_head.ih_head import eq10_printed
from derivations.induction_head.symbols import SYMBOL_NAMES, M_closed, alpha, p, wstar
from derivations.latex import to_latex


def test_golden_latex_of_paper_symbols():
    assert to_latex(wstar**2, SYMBOL_NAMES) == r"\left(w^{\star}\right)^{2}"
    assert to_latex(alpha / (1 + alpha), SYMBOL_NAMES) == r"\frac{\alpha^{\star}}{\alpha^{\star} + 1}"
    assert to_latex(M_closed(p), SYMBOL_NAMES) == r"\frac{1 - e^{- p \left(L - 2\right)}}{1 - e^{- p}}"
    assert r"\sqrt{1 - 4 \left(w^{\star}\right)^{4}}" in to_latex(eq10_printed(), SYMBOL_NAMES)


x, y = sp.symbols("x y", positive=True)
BOX = Domain({x: Interval(0, 3), y: Interval(0, 3)})
atoms = st.sampled_from([x, y, sp.exp(-x), sp.log(1 + y), sp.sqrt(x + y), x * y, sp.Integer(2)])


@st.composite
def expressions(draw):
    terms = draw(st.lists(st.tuples(atoms, atoms, st.integers(-3, 3)), min_size=1, max_size=4))
    return sp.Add(*[c * a * b for a, b, c in terms])


@settings(max_examples=25)
@given(expressions(), st.integers(0, 1000))
def test_an_expression_equals_its_expansion(expr, seed):
    assert Formula("t.p", "t", expr, sp.expand(expr), BOX).verify(seed=seed, symbolic_seconds=0.05).equal


@settings(max_examples=25)
@given(expressions(), st.sampled_from([sp.Rational(1, 10**12), x * 1e-9, sp.exp(-3 * x) / 1000]))
def test_a_small_perturbation_is_always_caught(expr, perturbation):
    agreement = Formula("t.p", "t", expr, expr + perturbation, BOX).verify(symbolic_seconds=0.05)
    assert agreement.status == "differs"
