"""The status algebra: one combination rule (a conjunction with a fixed precedence) and one NaN rule."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks.status import PRECEDENCE, STATUSES, Status, combine, compare, from_bool, pointwise_status

statuses = st.sampled_from(list(Status))


@given(st.lists(statuses, max_size=6), st.lists(statuses, max_size=6))
def test_combine_is_a_conjunction(left, right):
    """Order and grouping do not matter, repeating a part changes nothing, and the empty conjunction
    decides nothing."""
    assert combine(left + right) == combine(right + left)
    if left and right:
        assert combine([combine(left), combine(right)]) == combine(left + right)
    assert combine(left + left) == combine(left)
    if not left:
        assert combine(left) is Status.INCONCLUSIVE


@given(st.lists(statuses, min_size=1, max_size=6))
def test_combine_picks_the_strongest_part(parts):
    result = combine(parts)
    assert result in parts
    assert all(PRECEDENCE.index(result) <= PRECEDENCE.index(p) for p in parts)


def test_known_answers():
    assert combine(["holds", "outside-regime"]) is Status.HOLDS  # an empty window tests nothing
    assert combine(["outside-regime", "outside-regime"]) is Status.OUTSIDE
    assert combine(["certified", "certified"]) is Status.CERTIFIED
    assert combine(["certified", "holds"]) is Status.HOLDS
    assert combine(["holds", "inconclusive"]) is Status.INCONCLUSIVE
    assert combine(["fails", "inconclusive"]) is Status.FAILS
    assert combine(["fails", "differs"]) is Status.DIFFERS
    assert set(STATUSES) == {"holds", "fails", "differs", "certified", "outside-regime", "inconclusive"}


def test_unknown_status_is_a_bug():
    from derivations.errors import InternalError

    with pytest.raises(InternalError, match="not one of"):
        combine(["holds", "passes"])


def test_nan_rule():
    lhs = np.array([1.0, 2.0, math.nan, 1.0, math.inf, -math.inf])
    rhs = np.array([2.0, 1.0, 1.0, math.nan, math.inf, 0.0])
    violated, undecided = compare(lhs, rhs, "<=")
    assert violated.tolist() == [False, True, False, False, False, False]
    assert undecided.tolist() == [False, False, True, True, False, False]
    # +inf is a value: every finite number is below it; NaN decides nothing
    assert pointwise_status(*compare([1.0, 5.0], [math.inf, math.inf])) is Status.HOLDS
    assert pointwise_status(*compare([1.0, math.nan], [2.0, 2.0])) is Status.INCONCLUSIVE
    assert pointwise_status(*compare([3.0, math.nan], [2.0, 2.0])) is Status.FAILS
    assert pointwise_status(*compare(np.array([]), np.array([]))) is Status.OUTSIDE
    assert pointwise_status(*compare([-math.inf], [-math.inf], ">=")) is Status.HOLDS
    assert pointwise_status(*compare([1.0], [-math.inf], "<=")) is Status.FAILS


@given(st.floats(-1e6, 1e6), st.floats(-1e6, 1e6), st.sampled_from(["<=", "<", ">=", ">"]))
def test_compare_agrees_with_the_relation(a, b, relation):
    violated, undecided = compare(a, b, relation)
    assert not undecided
    holds = a <= b if relation in ("<=", "<") else a >= b
    assert bool(violated) == (not holds)


def test_slack_is_relative():
    violated, _ = compare(1.0 + 1e-10, 1.0, "<=", rel_tol=1e-9)
    assert not violated
    violated, _ = compare(1.0 + 1e-8, 1.0, "<=", rel_tol=1e-9)
    assert violated


def test_from_bool():
    assert from_bool(True) is Status.HOLDS and from_bool(False) is Status.FAILS
    assert from_bool(None) is Status.INCONCLUSIVE
