"""Every printed bound of ``rl.cf.*`` on its domain, by Hypothesis, against the verdict tdcheck prints.

The check decides each region inequality by seeded sampling (30 digits) and by certification. Here
Hypothesis searches each inequality's domain on its own (edges, shrinking) and evaluates both sides
with a separate route (``lambdify`` to mpmath at 50 digits, not the check's evaluator):

* an inequality the check reports as holding (sampled or certified) must hold at every point found;
* an inequality the check reports violated must be violated at its recorded worst point.

A failure means a verdict rests on a sample too shallow to see a violation, or on a counterexample
that is not one.
"""

from __future__ import annotations

import functools

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.registry import load_all
from checks.testing import points
from derivations.regular_language import ITEMS, item

#: the rl.cf items that carry region inequalities (test_no_other_item_has_inequalities keeps it complete)
WITH_INEQUALITIES = (
    "rl.cf.gradient_norm_bounds", "rl.cf.softmax_lipschitz", "rl.cf.logistic_taylor", "rl.cf.second_step",
    "rl.cf.w_norm_growth", "rl.cf.phase2_constants", "rl.cf.lemma_b5", "rl.cf.direction_bound",
    "rl.cf.loss_bound",
)
DPS = 50
#: a non-strict bound may be tight (equality on a slice); 50-digit rounding of the two sides is far below this
SLACK = mpmath.mpf(10) ** -35


@functools.cache
def _verdict(item_id: str):
    return load_all()[item_id].run({})


_SIDES: dict[str, tuple] = {}


def _sides(inequality):
    if inequality.id in _SIDES:
        return _SIDES[inequality.id]
    symbols = sorted(inequality.lhs.free_symbols | inequality.rhs.free_symbols, key=lambda s: s.name)
    lhs = sp.lambdify(symbols, inequality.lhs, modules="mpmath")
    rhs = sp.lambdify(symbols, inequality.rhs, modules="mpmath")
    _SIDES[inequality.id] = (symbols, lhs, rhs)
    return _SIDES[inequality.id]


def _margin(inequality, point) -> tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]:
    """(rhs - lhs, lhs, rhs) at ``point`` ({Symbol or name: value}) in 50-digit mpmath."""
    symbols, lhs, rhs = _sides(inequality)
    by_name = {(k.name if isinstance(k, sp.Symbol) else str(k)): v for k, v in point.items()}
    with mpmath.workdps(DPS):
        args = [mpmath.mpf(by_name[s.name]) for s in symbols]  # floats exactly, decimal strings to 50 digits
        a, b = lhs(*args), rhs(*args)
        return b - a, a, b


def _violated(inequality, margin, lhs, rhs) -> bool:
    scale = max(abs(lhs), abs(rhs), mpmath.mpf(1))
    return margin <= 0 if inequality.strict else margin < -SLACK * scale


def test_no_other_item_has_inequalities():
    others = {i: len(item(i).inequalities) for i in ITEMS if i not in WITH_INEQUALITIES}
    assert not any(others.values()), {i: n for i, n in others.items() if n}


@pytest.mark.parametrize("item_id", WITH_INEQUALITIES)
def test_reported_counterexamples_are_counterexamples(item_id):
    records = _verdict(item_id).evidence["inequalities"]
    built = {q.id: q for q in item(item_id).inequalities}
    violated = [(i, r) for i, r in records.items() if r.get("holds") is False]
    for inequality_id, record in violated:
        margin, lhs, rhs = _margin(built[inequality_id], record["worst_point"])
        assert _violated(built[inequality_id], margin, lhs, rhs), (
            f"{inequality_id}: reported violated at {record['worst_point']}, but at {DPS} digits "
            f"lhs = {mpmath.nstr(lhs, 20)}, rhs = {mpmath.nstr(rhs, 20)}")


@pytest.mark.parametrize("item_id", WITH_INEQUALITIES)
def test_bounds_reported_to_hold_hold_wherever_hypothesis_looks(item_id):
    records = _verdict(item_id).evidence["inequalities"]
    held = [q for q in item(item_id).inequalities
            if records[q.id].get("holds") or records[q.id].get("certification") == "certified"]
    assert len(records) == len(item(item_id).inequalities), sorted(records)
    if not held:
        pytest.skip(f"every inequality of {item_id} is reported violated (checked by the test above)")

    @settings(max_examples=min(12 * len(held), 240), deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(st.data())
    def search(data):
        inequality = data.draw(st.sampled_from(held), label="inequality")
        point = data.draw(points(inequality.domain), label="point")
        margin, lhs, rhs = _margin(inequality, point)
        assert not _violated(inequality, margin, lhs, rhs), (
            f"{inequality.id} is reported to hold ({records[inequality.id].get('certification')}), "
            f"but at {point} lhs = {mpmath.nstr(lhs, 20)} > rhs = {mpmath.nstr(rhs, 20)}")

    search()
