"""The 'inequality along a trajectory' kind: pointwise parts, records and the canonical decision."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from checks import along
from numerics.trajectory import Trajectory


def _run(values, t=None):
    values = np.asarray(values, dtype=float)
    t = np.arange(values.size, dtype=float) if t is None else t
    return Trajectory(t, {"x": values})


def test_pointwise_known_answers():
    run = _run([0.0, 1.0, 2.0, 3.0])
    part = along.pointwise(run, run.window(0, 3), run["x"], 2.5, statement="x ≤ 2.5")
    assert part["status"] == "fails" and part["worst_t"] == 3.0 and part["first_violation_t"] == 3.0
    assert part["worst_state"] == {"x": 3.0} and part["fraction_violated"] == 0.25
    assert along.pointwise(run, run.window(0, 2), run["x"], 2.5)["status"] == "holds"
    assert along.pointwise(run, run.window(5, 6), run["x"], 2.5)["status"] == "outside-regime"
    # NaN rule: an undecided point leaves the part inconclusive, a violation anywhere still fails
    bound = np.array([1.0, math.nan, 3.0, 4.0])
    assert along.pointwise(run, run.window(0, 3), run["x"], bound)["status"] == "inconclusive"
    bound[3] = 2.0
    assert along.pointwise(run, run.window(0, 3), run["x"], bound)["status"] == "fails"
    # an overflowing bound is a value, not a violation
    assert along.pointwise(run, run.window(0, 3), run["x"], math.inf)["status"] == "holds"


@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=40), st.floats(-1e3, 1e3))
def test_pointwise_is_the_elementwise_test(values, bound):
    run = _run(values)
    part = along.pointwise(run, np.ones(len(values), bool), run["x"], bound, relation=">=", tol=0.0)
    assert (part["status"] == "holds") == all(v >= bound for v in values)
    if part["status"] == "fails":  # the worst point: the largest violation (as computed, ties at rounding)
        assert bound - part["worst_lhs"] == max(bound - v for v in values)


def _record(label, canonical, statuses):
    return along.record({name: {"status": s} for name, s in statuses.items()}, label=label,
                        reading={"flow": label}, canonical=canonical, config={"L": 40}, events={"T": math.nan})


def test_decision_is_the_canonical_readings():
    records = [_record("paper", True, {"a": "holds", "b": "fails"}),
               _record("paper", True, {"a": "holds", "b": "holds"}),
               _record("balanced", False, {"a": "fails", "b": "holds"})]
    status, table = along.decide(records, ["a"])
    assert status == "holds"
    assert table == {"paper": {"a": "holds", "b": "fails"}, "balanced": {"a": "fails", "b": "holds"}}
    assert along.decide(records, ["a", "b"])[0] == "fails"
    assert records[0]["events"] == {"T": None}
    summary = along.summarise("holds", "head", records, ["a"], table, ["b"])
    assert "chain parts failing: b" in summary and "verdict differs under balanced" in summary
    assert along.count_failing(records) == {"b": 1}


def test_function_part():
    x = np.linspace(0, 2, 201)
    part = along.function_part(x**2, x, {"x": x}, statement="x² ≤ x")
    assert part["status"] == "fails" and part["worst"]["x"] == 2.0
    assert part["x_range_where_holding"] == [0.0, 1.0]


def test_hitting_time_part():
    assert along.hitting_time(9.0, 10.0, relation="<=")["status"] == "holds"
    part = along.hitting_time(11.0, 10.0, relation="<=", event="T_1^h")
    assert part["status"] == "fails" and part["ratio"] == 1.1 and part["event"] == "T_1^h"
    assert along.hitting_time(10.0 * (1 + 1e-12), 10.0, relation="<=")["status"] == "holds"  # integrator slack
    assert along.hitting_time(5.0, 5.0 + 1e-7, relation="=")["status"] == "holds"
    assert along.hitting_time(5.0, 5.1, relation="=")["status"] == "fails"
    # an event that did not fire: fails where the statement asserts it exists, outside where a window needs it
    assert along.hitting_time(math.nan, 10.0)["status"] == "fails"
    missing = along.hitting_time(math.nan, 10.0, missing="outside-regime", event="T_III")
    assert missing["status"] == "outside-regime" and "T_III not reached" in missing["why"]
    assert along.hitting_time(3.0, math.nan, relation=">=")["status"] == "inconclusive"
