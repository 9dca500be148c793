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


def test_an_inequality_failing_only_under_another_reading_is_reported_not_decisive():
    """Sampling and certification alike: the canonical reading decides (regression: ih.cf.C_properties
    was `fails` only because a step under the alternative γ reading had a certified counterexample)."""
    from dataclasses import replace

    other = replace(FALSE, id="t.item.false_other", reading={"range": "literal"})
    outcome = verdict([EQUAL], [TRUE, other])
    assert outcome.status in ("holds", "certified")
    assert outcome.evidence["differs_under_other_readings"] == ["false_other"]
    assert outcome.evidence["inequalities"]["t.item.false_other"]["reading"] == {"range": "literal"}
    assert "1/1 inequalities hold" in outcome.summary
    canonical = replace(FALSE, reading={"range": "canonical"})
    assert verdict([EQUAL], [TRUE, canonical]).status == "fails"


def test_monte_carlo_disagreeing_with_the_derivation_is_inconclusive_not_a_verdict():
    records = [{"agrees_with_derived": False, "agrees_with_printed": False, "z_printed": 9.0}]
    outcome = verdict([EQUAL], [], [MonteCarloCheck("mc", lambda ctx: records)])
    assert outcome.status == "inconclusive"


# ----------------------------------------------------------------------------- certification

from checks.kinds import decide  # noqa: E402

k = sp.Symbol("k", integer=True, positive=True)
L = sp.Symbol("L", integer=True, positive=True)
#: false only for x < 1e-7: sampling (1 % away from the open end) cannot see it, the certifier can
HIDDEN = RegionInequality("t.item.hidden", "Eq. (5)", sp.Rational(1, 10**7), x, BOX)
SUM = RegionInequality("t.item.sum", "Eq. (6)", sp.Sum(x**k, (k, 1, L)) / L, sp.Integer(1),
                       Domain({x: Interval(0, 1)}, {L: (2, (2, 5))}))
KEYS = {"inequality", "status", "boxes", "margin", "coverage", "counterexample", "method", "seconds", "reason"}


def test_inequalities_that_all_certify_make_the_item_certified():
    outcome = verdict([], [TRUE])
    assert outcome.status == "certified", outcome.summary
    (record,) = outcome.evidence["certification"]
    assert KEYS <= set(record) and record["status"] == "certified" and record["coverage"] == 1.0
    assert outcome.evidence["inequalities"]["t.item.true"]["certification"] == "certified"


def test_a_numeric_only_display_keeps_a_certified_item_at_holds():
    # 8 points at 30 digits are not a proof of the identity: the item is not "certified"
    numeric = Formula("t.item.numeric", "Eq. (7)", sp.exp(sp.log(x + 1)), x + 1, BOX)
    outcome = verdict([numeric], [TRUE])
    assert outcome.evidence["formulas"]["t.item.numeric"]["status"] in ("exact", "numeric")
    expected = "certified" if outcome.evidence["formulas"]["t.item.numeric"]["status"] == "exact" else "holds"
    assert outcome.status == expected


def test_a_certified_counterexample_fails_the_item_where_sampling_saw_none():
    outcome = verdict([], [HIDDEN])
    assert outcome.evidence["inequalities"]["t.item.hidden"]["holds"]  # sampling missed it
    (record,) = outcome.evidence["certification"]
    assert record["status"] == "fails"
    assert float(sp.Rational(record["counterexample"]["point"]["x"])) < 1e-7
    assert outcome.status == "fails"


def test_integer_symbols_are_certified_at_each_sampled_value():
    outcome = verdict([], [SUM])
    (record,) = outcome.evidence["certification"]
    assert [c["integers"] for c in record["cases"]] == [{"L": 2}, {"L": 5}]
    assert record["status"] == "certified"


def test_a_pinned_parameter_is_a_point_of_the_box():
    item = Item("t.item", "label", "", "toy", [], [TRUE])
    outcome = ItemCheck(lambda: item)(Context({"x": 0.5}, "quick", 0, pinned={"x": 0.5}))
    (record,) = outcome.evidence["certification"]
    assert record["status"] == "certified" and record["boxes"] == 1


def test_contradicting_methods_are_inconclusive_and_undecided_leaves_sampling():
    item = Item("t.item", "label", "", "toy", [], [TRUE])
    certified = [{"inequality": "t.item.true", "status": "certified"}]
    undecided = [{"inequality": "t.item.true", "status": "undecided"}]
    assert decide(item, 0, [], ["true"], [], certified)[0] == "inconclusive"
    assert decide(item, 0, [], [], [], undecided)[0] == "holds"
    assert decide(item, 0, [], ["true"], [], undecided)[0] == "fails"


def test_an_inequality_whose_region_the_pinned_parameters_miss_is_not_applicable():
    """Regression: a pin outside an inequality's region (w > w* for a 'w < w*' bound) made sampling raise."""
    from derivations.domain import Constraint

    y = sp.Symbol("y", positive=True)
    below = RegionInequality("t.item.below", "Eq. (7)", x * y, y, Domain({x: Interval(0, 1), y: Interval(0, 2)},
                                                                     {}, (Constraint(x < y, "x < y"),)))
    item = Item("t.item", "label", "", "toy", [EQUAL], [TRUE, below])
    outcome = ItemCheck(lambda: item)(Context({"x": 0.5, "y": 0.25}, "quick", 0,
                                                 pinned={"x": 0.5, "y": 0.25}))
    assert outcome.status in ("holds", "certified")
    assert set(outcome.evidence["inequalities_not_applicable"]) == {"t.item.below"}
    assert "t.item.below" not in outcome.evidence["inequalities"]
    assert "1 inequalities have no point" in outcome.summary


def test_a_predicate_over_a_finite_set_decides_like_a_display_with_its_first_counterexample():
    """"n² + n is even" holds on 0..99 (proved on every case); "n² is even" differs first at n = 1; a
    predicate differing only under another reading is reported, not decisive."""
    from derivations.predicates import Predicate

    cases = lambda: range(100)  # noqa: E731
    even = Predicate("t.item.even", "Eq. (5)", lambda n: (n * n + n) % 2 == 0, lambda n: True, cases)
    odd = Predicate("t.item.square", "Eq. (6)", lambda n: (n * n) % 2 == 0, lambda n: True, cases)
    other = Predicate("t.item.sq_other", "Eq. (6)", lambda n: (n * n) % 2 == 0, lambda n: True, cases,
                      reading={"range": "literal"})

    def run(*predicates):
        item = Item("t.item", "label", "", "toy", [EQUAL], [], predicates=list(predicates))
        return ItemCheck(lambda: item, default_readings={"range": "canonical"})(CTX)

    holds = run(even, other)
    assert holds.status == "holds" and holds.evidence["formulas"]["t.item.even"]["status"] == "exact"
    assert holds.evidence["differs_under_other_readings"] == ["sq_other"] and "2/2 displays" in holds.summary
    differs = run(even, odd)
    record = differs.evidence["formulas"]["t.item.square"]
    assert differs.status == "differs" and record["point"] == {"case": "1"}
    assert record["difference"] == f"{sum(n * n % 2 for n in range(100))} of 100 cases differ"


def test_a_second_method_disagreeing_with_the_derivation_makes_the_item_inconclusive():
    item = Item("t.item", "label", "", "toy", [EQUAL])

    def second(ctx, it):
        return {"summary": "model vs derivation: 1 part off", "disagrees": ["model_value"], "model": {"x": 1}}

    outcome = ItemCheck(lambda: item, extra=second)(CTX)
    assert outcome.status == "inconclusive" and "second method disagrees" in outcome.summary
    assert outcome.evidence["model"] == {"x": 1}
