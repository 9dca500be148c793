"""Minimal corrections (issue #17, item 2): the smallest edit of a printed form that equals the derivation."""

import random

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from derivations.core import Formula
from derivations.corrections import minimal_correction
from derivations.domain import Domain

p = sp.Symbol("p", positive=True)
a = sp.Symbol("a", positive=True)
u = sp.Symbol("u", positive=True)
L = sp.Symbol("L", integer=True, positive=True)
s = sp.Symbol("s", integer=True)
DOMAIN = Domain.from_mapping({p: (0.1, 4), a: (0.2, 3), u: (0.1, 0.9), L: range(4, 12)})
M = sp.Sum(sp.exp(-p * s), (s, 0, L - 2))
DERIVED = a * M / (1 + a) + u ** (L - 2) * sp.exp(-2 * p)


def _formula(stated, derived=DERIVED):
    return Formula("test.correction", "test", stated, derived, DOMAIN)


def _independently_equal(expr, derived, seed=11):
    """50-digit comparison at points the search never saw, by SymPy's own evaluation."""
    rng = random.Random(seed)
    for _ in range(3):
        point = {p: sp.Rational(rng.randint(2, 39), 10), a: sp.Rational(rng.randint(3, 29), 10),
                 u: sp.Rational(rng.randint(1, 9), 10), L: rng.randint(4, 11)}
        with mpmath.workdps(50):
            x, y = sp.N(expr.subs(point).doit(), 50), sp.N(derived.subs(point).doit(), 50)
        if abs(x - y) > sp.Float(1e-40) * (1 + abs(y)):
            return False
    return True


@pytest.mark.parametrize("stated, kind", [
    (-DERIVED, "sign"),
    (2 * DERIVED, "constant factor"),
    (a * M / (1 + a) + u ** (L - 1) * sp.exp(-2 * p), "exponent"),
    (a * M / (1 + a) + u ** (L - 2) * sp.exp(-3 * p), "constant"),
    (a * sp.Sum(sp.exp(-p * s), (s, 0, L - 1)) / (1 + a) + u ** (L - 2) * sp.exp(-2 * p), "index range"),
    (a * M / (1 + a), "term"),
    (u * M / (1 + u) + a ** (L - 2) * sp.exp(-2 * p), "symbol"),
    (a * M / (2 + a) + u ** (L - 2) * sp.exp(-2 * p), "constant"),
])
def test_a_single_edit_is_found_and_verified(stated, kind):
    """Known answers: the derivation with one edit of each kind comes back with an edit of that kind, and the
    corrected form equals the derivation at points the search never saw."""
    search = minimal_correction(_formula(stated))
    assert search.correction is not None, search.to_dict()
    assert search.correction.kind == kind, search.to_dict()
    assert _independently_equal(search.correction.corrected, DERIVED)
    record = search.to_dict()
    assert record["identity"] in ("exact", "numeric") and record["latex_marked"].count(r"\boxed") + \
        record["latex_marked"].count(r"\underbrace") >= 1


def test_a_shift_throughout_is_one_edit():
    """L − 1 printed where L − 2 is meant, in every place: one edit, L → L − 1 throughout."""
    stated = DERIVED.xreplace({L: L + 1})
    search = minimal_correction(_formula(stated))
    assert search.correction is not None and search.correction.kind == "index range"
    assert "throughout" in search.correction.description.text()


def test_no_small_edit_says_so():
    search = minimal_correction(_formula(sp.sin(a) + sp.cos(u) * L))
    assert search.correction is None
    record = search.to_dict()
    assert record["kind"] == "none" and "edits tried" in record["edit"] and search.candidates > 10


@settings(max_examples=15, deadline=None)
@given(c=st.integers(-5, 5).filter(lambda c: c not in (0, 1)), which=st.integers(0, 2), seed=st.integers(0, 3))
def test_never_claims_an_unequal_correction(c, which, seed):
    """Property: for a printed form with a random constant wrong, a correction is found, and whatever it is,
    it equals the derivation at fresh points; the edit count is the same on every run."""
    parts = [a * M / (1 + a), u ** (L - 2) * sp.exp(-2 * p), sp.Rational(1, 3) * a * u]
    derived = sp.Add(*parts)
    stated = sp.Add(*[c * t if i == which else t for i, t in enumerate(parts)])
    first = minimal_correction(_formula(stated, derived), seed=seed)
    assert first.correction is not None, first.to_dict()
    assert _independently_equal(first.correction.corrected, derived, seed=seed)
    again = minimal_correction(_formula(stated, derived), seed=seed)
    assert (again.candidates, again.correction.corrected) == (first.candidates, first.correction.corrected)


def test_the_budget_counts_edits():
    stated = a * M / (1 + a) + u ** (L - 2) * sp.exp(-3 * p)
    assert minimal_correction(_formula(stated), max_candidates=5).candidates == 5


def test_pinned_values_reach_the_search():
    """A pinned symbol (``--param``) reaches the screening and the identity check, as it reaches the check of the
    display: printed = (L − 2)·derived is corrected by 1/(L − 2) over the domain, by the number 1/5 at L = 7."""
    stated = (L - 2) * DERIVED
    free = minimal_correction(_formula(stated)).correction
    assert free.kind == "symbolic factor" and sp.simplify(free.corrected - DERIVED) == 0
    pinned = minimal_correction(_formula(stated), fixed={L: 7}).correction
    assert pinned.kind == "constant factor" and pinned.description.exprs == (sp.Rational(1, 5),)
