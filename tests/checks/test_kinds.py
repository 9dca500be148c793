"""ItemCheck: how displays, readings, inequalities and Monte-Carlo records decide a verdict."""

import sympy as sp

from checks.claim import Context
from checks.kinds import ItemCheck, MonteCarloCheck
from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval

x = sp.Symbol("x", positive=True)
BOX = Domain({x: Interval(0, 1)})
EQUAL = Formula("t.item.equal", "Eq. (1)", x**2 + x, x * (x + 1), BOX)
WRONG = Formula("t.item.wrong", "Eq. (2)", 2 * x, x, BOX)
WRONG_OTHER_READING = Formula("t.item.other", "Eq. (2)", 2 * x, x, BOX, reading={"range": "literal"})
TRUE = RegionInequality("t.item.true", "Eq. (3)", x**2, x, BOX)
FALSE = RegionInequality("t.item.false", "Eq. (4)", x, x**2, BOX)
CTX = Context({}, "quick", 0)


def verdict(formulas=(), inequalities=(), monte_carlo=()):
    item = Item("t.item", "label", "", "toy", list(formulas), list(inequalities))
    return ItemCheck(lambda: item, list(monte_carlo), default_readings={"range": "canonical"})(CTX)


def test_a_differing_display_makes_the_item_differ():
    outcome = verdict([EQUAL, WRONG])
    assert outcome.status == "differs"
    assert outcome.evidence["formulas"]["t.item.wrong"]["ratio"] == "2"


def test_a_display_differing_only_under_another_reading_is_reported_not_decisive():
    outcome = verdict([EQUAL, WRONG_OTHER_READING])
    assert outcome.status == "holds"
    assert outcome.evidence["differs_under_other_readings"] == ["other"]
    assert "1/1 displays" in outcome.summary


def test_a_violated_inequality_fails_with_its_worst_point():
    outcome = verdict([EQUAL], [TRUE, FALSE])
    assert outcome.status == "fails"
    assert outcome.evidence["inequalities"]["t.item.false"]["min_margin"] < 0


def test_monte_carlo_disagreeing_with_the_derivation_is_inconclusive_not_a_verdict():
    records = [{"agrees_with_derived": False, "agrees_with_printed": False, "z_printed": 9.0}]
    outcome = verdict([EQUAL], [], [MonteCarloCheck("mc", lambda ctx: records)])
    assert outcome.status == "inconclusive"
