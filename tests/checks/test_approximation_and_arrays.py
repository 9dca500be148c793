"""Core pieces added for ss: R16 approximation decisions, the array-identity kind, pinned readings deciding."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.array_identity import ArrayDisplay, ArrayIdentityCheck, compare_arrays
from checks.asymptotics import approximation, deviation_limit
from checks.claim import Claim, Param
from checks.configurations import deciding_readings, in_reading, reading_params
from checks.status import Status
from derivations.errors import InvalidArgument

S = np.array([30.0, 1e2, 1e3, 1e4, 1e6, 1e8])


@settings(deadline=None, max_examples=40)
@given(st.floats(0.1, 10), st.sampled_from(["1/s", "1/sqrt", "1/ln"]))
def test_a_vanishing_correction_is_exact_in_the_limit(a, shape):
    g = {"1/s": 1 / S, "1/sqrt": 1 / np.sqrt(S), "1/ln": 1 / np.log(S)}[shape]
    exact = np.full(S.size, 2.0)
    decision = approximation(S, exact * (1 + a * g), exact, name="M")
    assert decision.status == Status.HOLDS


@settings(deadline=None, max_examples=40)
@given(st.floats(0.05, 2), st.floats(0.0, 3))
def test_a_constant_offset_is_not_exact_in_the_limit(offset, a):
    exact = np.log(S)
    decision = approximation(S, exact + offset + a / S, exact, name="M", quantity="log")
    assert decision.status == Status.FAILS


def test_a_growing_deviation_fails_and_an_unfittable_one_stays_open():
    assert deviation_limit(S, 0.5 - 1 / np.log(S), np.full(S.size, 1e-9)).status == Status.FAILS
    slow = np.log(np.log(S)) / np.log(S)  # ln ln s/ln s: decreasing, no g of R16 describes it
    assert deviation_limit(S, slow, np.full(S.size, 1e-9)).status == Status.INCONCLUSIVE


def test_noise_within_its_errors_is_within_zero():
    rng = np.random.default_rng(4)
    err = np.full(S.size, 1e-3)
    noisy = np.abs(rng.normal(0, 3e-4, S.size))
    assert deviation_limit(S, noisy, err).status == Status.HOLDS


def test_too_few_values_are_refused_by_name():
    with pytest.raises(InvalidArgument, match="at least 3"):
        approximation([1, 2], [1, 1], [1, 1], name="T")


class _Case:
    def __init__(self, a, label="c"):
        self.a, self.label = np.asarray(a, dtype=float), label


def test_array_identity_reports_the_worst_entry_and_refuses_shape_mismatches():
    disp = ArrayDisplay("d", "Eqn", lambda c: c.a * (1 + 1e-6 * (c.a > 2)), lambda c: c.a, "f")
    record = compare_arrays(disp, [_Case([1.0, 2.0, 3.0])])
    assert record["status"] == "differs" and record["worst"]["index"] == [2]
    bad = ArrayDisplay("d", "Eqn", lambda c: c.a[:2], lambda c: c.a, "f")
    assert "shapes differ" in compare_arrays(bad, [_Case([1.0, 2.0, 3.0])])["reason"]
    nan = ArrayDisplay("d", "Eqn", lambda c: c.a * math.nan, lambda c: c.a, "f")
    assert compare_arrays(nan, [_Case([1.0])])["status"] == "non-finite"


def test_a_pinned_reading_decides():
    displays = lambda: [  # noqa: E731
        ArrayDisplay("good", "E", lambda c: c.a, lambda c: c.a, "f", {"flag": "a"}),
        ArrayDisplay("bad", "E", lambda c: c.a + 1, lambda c: c.a, "f", {"flag": "b"}),
    ]
    check = ArrayIdentityCheck(displays, lambda ctx: {"f": [_Case([1.0, 2.0])]}, {"flag": "a"})
    params = reading_params((d.reading for d in displays()), {"flag": "a"})
    assert params[0].choices == ("a", "b")
    claim = Claim("ih.test_pinned_reading", "ih", "test", "formula", check, params=params)
    assert claim.run().status == "holds"
    pinned = claim.run({"flag": "b"})
    assert pinned.status == "differs" and pinned.evidence["deciding_reading"] == {"flag": "b"}
    with pytest.raises(InvalidArgument, match="flag"):
        claim.run({"flag": "c"})


def test_deciding_readings_and_membership():
    class Ctx:
        pinned = {"eprime": "appB1", "other": 1}

    deciding = deciding_readings({"eprime": "lemma14", "u_index": "column"}, Ctx())
    assert deciding == {"eprime": "appB1", "u_index": "column"}
    assert in_reading({"eprime": "appB1"}, deciding) and not in_reading({"u_index": "row"}, deciding)
    assert isinstance(Param("x", 1), Param)
