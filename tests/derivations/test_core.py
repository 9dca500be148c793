"""Formula.verify, RegionInequality and Domain: known answers and invariants."""

import random

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from derivations.core import Formula, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.errors import InvalidArgument

x = sp.Symbol("x", positive=True)
y = sp.Symbol("y", real=True)
L = sp.Symbol("L", integer=True, positive=True)
k = sp.Symbol("k", integer=True)
BOX = Domain({x: Interval(0, 2), y: Interval(-1, 1)})


def test_equal_forms_are_exact():
    formula = Formula("t.sq", "test", (x + y) ** 2, x**2 + 2 * x * y + y**2, BOX)
    assert formula.verify().status == "exact"


def test_a_factor_error_differs_with_counterexample_and_ratio():
    formula = Formula("t.half", "test", x * y, 2 * x * y, BOX)
    agreement = formula.verify(n_points=5)
    assert agreement.status == "differs"
    point = {sp.Symbol(n): sp.Rational(v) for n, v in agreement.point.items()}
    assert float(agreement.stated_value) == pytest.approx(float(point[sp.Symbol("x")] * point[sp.Symbol("y")]))
    assert agreement.ratio == "1/2"


def test_an_error_invisible_at_large_arguments_is_found_by_log_sampling():
    # (1 - e^{-pL})/(1 - e^{-p}) vs the same with L+1 terms: the gap is ~e^{-pL}, tiny unless p*L is small
    p = sp.Symbol("p", positive=True)
    dom = Domain({p: Interval(0, 30, scale="log")}, {L: (5, (5, 40))})
    wrong = Formula("t.geo", "test", (1 - sp.exp(-p * L)) / (1 - sp.exp(-p)), sp.Sum(sp.exp(-p * k), (k, 0, L)), dom)
    right = Formula("t.geo2", "test", (1 - sp.exp(-p * L)) / (1 - sp.exp(-p)), sp.Sum(sp.exp(-p * k), (k, 0, L - 1)), dom)
    assert wrong.verify().status == "differs"
    assert right.verify().equal


def test_summation_dummies_are_bound_not_free():
    # k is the dummy of the sum and of the integral; L and p are what the formula depends on
    p = sp.Symbol("p", positive=True)
    dom = Domain({p: Interval(0, 30, scale="log")}, {L: (5, (5, 40))})
    formula = Formula("t.dummy", "test", sp.Sum(sp.exp(-p * k), (k, 0, L - 1)),
                      sp.Integral(sp.exp(-p * k), (k, 0, L)), dom)
    assert formula.bound_symbols == {k}
    assert formula.free_symbols == (L, p)


def test_region_inequality_reports_the_worst_point():
    holds = RegionInequality("t.le", "test", sp.sin(x), x, Domain({x: Interval(0, 10)}))
    fails = RegionInequality("t.ge", "test", x, sp.sin(x), Domain({x: Interval(0, 10)}))
    assert holds.sample_margin(n_points=100).holds
    margin = fails.sample_margin(n_points=100)
    assert not margin.holds and margin.min_margin < 0
    assert float(sp.Rational(margin.worst_point["x"])) > 1


def test_validate_names_parameter_constraint_and_range():
    w = sp.Symbol("wstar", positive=True)
    dom = Domain({w: Interval(0, 0.7071)}, {}, (Constraint(2 * w**2 < 1, "Lemma 7 diverges"),))
    with pytest.raises(InvalidArgument, match=r"wstar=0\.8 .*2\*wstar\*\*2 < 1.*Lemma 7 diverges.*0\.707"):
        dom.validate({"wstar": 0.8})
    with pytest.raises(InvalidArgument, match="unknown parameter 'wstr'.*wstar"):
        dom.validate({"wstr": 0.3})
    assert dom.validate({"wstar": 0.3}) == {w: 0.3}


@given(st.integers(0, 10**6))
def test_samples_stay_inside_the_domain(seed):
    dom = Domain({x: Interval(0, 1), y: Interval(-1, 1, scale="linear")}, {L: (5, (5, 9))},
                 (Constraint(x + y < 1, "test"), Constraint(x > y, "test")))
    for point in dom.sample(random.Random(seed), 5):
        assert dom.violations(point) == []
        assert 0 < point[x] < 1 and point[x] + point[y] < 1 and point[x] > point[y]


def _spin(seconds: float) -> None:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_nested_time_limit_keeps_the_outer_deadline():
    # regression: the inner block's exit used to disarm the timer, cancelling the outer limit
    import signal
    import time

    from derivations.core import time_limit

    start = time.monotonic()
    with pytest.raises(TimeoutError):
        with time_limit(0.3):
            with time_limit(5.0):
                pass
            _spin(2.0)
    assert time.monotonic() - start < 1.0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_an_outer_deadline_inside_a_longer_inner_limit_still_fires():
    # the inner limit is longer than what is left of the outer one: the outer deadline wins,
    # even when the inner block swallows its TimeoutError
    import time

    from derivations.core import time_limit

    start = time.monotonic()
    with pytest.raises(TimeoutError):
        with time_limit(0.2):
            try:
                with time_limit(5.0):
                    _spin(2.0)
            except TimeoutError:
                pass
            _spin(2.0)
    assert time.monotonic() - start < 1.0


def test_an_inner_expiry_leaves_the_outer_limit_running():
    import time

    from derivations.core import time_limit

    with time_limit(3.0):
        with pytest.raises(TimeoutError):
            with time_limit(0.1):
                _spin(2.0)
        start = time.monotonic()
        _spin(0.2)  # the outer limit has ~2.9 s left and must not fire here
    assert time.monotonic() - start < 1.0


def test_a_sampled_violation_must_survive_more_digits():
    """log(1 + e^{−x}) − 1/(1 + eˣ) = e^{−2x}/2 + … > 0, but at 30 digits and x ≈ 37 the log loses 16 digits to
    1 + e^{−x}: the apparent violation (≈ −1e−31) must not be reported."""
    x = sp.Symbol("x", real=True)
    inequality = RegionInequality("t.loss", "L", 1 / (1 + sp.exp(x)), sp.log(1 + sp.exp(-x)),
                                  Domain({x: Interval(30, 40)}))
    margin = inequality.sample_margin(n_points=300, dps=30)
    assert margin.holds and margin.min_margin > 0


def test_a_true_violation_is_still_reported():
    x = sp.Symbol("x", real=True)
    inequality = RegionInequality("t.bad", "L", sp.log(1 + sp.exp(-x)), 1 / (1 + sp.exp(x)),
                                  Domain({x: Interval(30, 40)}))
    assert not inequality.sample_margin(n_points=50, dps=30).holds
