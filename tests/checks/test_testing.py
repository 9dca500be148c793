"""checks.testing: strategies stay in their domain; assertions pass on truth and name a counterexample."""

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
import sympy as sp
from hypothesis import find, given, settings
from hypothesis import strategies as st

from checks.testing import (
    assert_agrees_with_montecarlo,
    assert_bound_along,
    assert_gradient,
    assert_identity,
    points,
    sympy_integrand,
)
from derivations.core import Formula
from derivations.domain import Constraint, Domain, Interval
from derivations.errors import InvalidArgument, NumericalTrouble

w = sp.Symbol("w", positive=True)
x, a, b = sp.symbols("x a b", real=True)
X, Y = sp.symbols("X Y", real=True)
L = sp.Symbol("L", integer=True, positive=True)

# open and closed ends, an unbounded side, an integer >= 5, a one-symbol and a coupling constraint
DOMAIN = Domain(
    {w: Interval(0, 30), x: Interval(-1, 2, False, True), a: Interval(-math.inf, 0, True, False)},
    {L: (5, (5, 9))},
    (Constraint(2 * w**2 < 1, "Lemma-7-style divergence"), Constraint(x + w < 1, "coupling")),
)


# ---- strategies -------------------------------------------------------------------------------


@given(point=points(DOMAIN))
def test_points_stay_in_the_domain(point):
    assert set(point) == set(DOMAIN.symbols)
    assert DOMAIN.contains(point), DOMAIN.violations(point)
    assert not DOMAIN.violations(point)
    assert isinstance(point[L], int) and 5 <= point[L] <= 9
    assert 0 < point[w] and 2 * Fraction(point[w]) ** 2 < 1  # exactly, not only in double precision
    assert -1 <= point[x] < 2 and point[a] <= 0


@given(data=st.data())
def test_fixed_values_are_kept(data):
    point = data.draw(points(DOMAIN, fixed={"L": 7, w: 0.25}))
    assert point[L] == 7 and point[w] == 0.25
    assert DOMAIN.contains(point)


def test_points_shrink_to_simple_values_and_accept_formulas():
    formula = Formula("t.f", "", w, w, DOMAIN)
    assert find(points(formula), lambda p: True) == {L: 5, w: 0.5, x: 0.0, a: 0.0}
    assert find(points(DOMAIN), lambda p: p[L] > 6)[L] == 7


def test_points_refuse_fixed_values_outside_the_domain():
    with pytest.raises(InvalidArgument, match=r"2\*w\*\*2 < 1"):
        points(DOMAIN, fixed={"w": 0.8})
    with pytest.raises(InvalidArgument, match="unknown fixed parameter 'ww'; did you mean w"):
        points(DOMAIN, fixed={"ww": 0.1})


# ---- assert_identity --------------------------------------------------------------------------


def test_assert_identity_passes_on_a_true_identity():
    agreement = assert_identity(sp.sinh(2 * w), 2 * sp.sinh(w) * sp.cosh(w), DOMAIN)
    assert agreement.status == "exact"


@given(point=points(DOMAIN))
@settings(max_examples=20)
def test_assert_identity_at_drawn_points(point):
    assert assert_identity((x + w) ** 2, x**2 + 2 * x * w + w**2, DOMAIN, at=point).equal


def test_assert_identity_names_the_counterexample():
    with pytest.raises(AssertionError) as info:
        assert_identity(2 * w * x + L, w * x + L, DOMAIN, name="eq. (3)")
    message = str(info.value)
    assert "eq. (3): stated != derived at " in message
    assert all(f"{name}=" in message for name in ("L", "w", "x"))
    assert "stated  = " in message and "derived = " in message
    assert "stated - derived = w*x" in message
    expected = r"at L=5, w=0.25, x=0.5, a=0\n.*\n.*\n  stated - derived = w\*x\n  stated / derived = 2\n"
    with pytest.raises(AssertionError, match=expected):
        assert_identity(2 * w * x, w * x, DOMAIN, at={"L": 5, "w": 0.25, "x": 0.5, "a": 0})


def test_assert_identity_reports_a_constant_ratio_and_refuses_undeclared_symbols():
    with pytest.raises(AssertionError, match=r"stated / derived = -1 at every sampled point"):
        assert_identity(-sp.exp(w), sp.exp(w), DOMAIN)
    with pytest.raises(InvalidArgument, match=r"does not declare \['y'\]"):
        assert_identity(sp.Symbol("y"), w, DOMAIN)
    with pytest.raises(InvalidArgument, match="outside the domain"):
        assert_identity(w, w, DOMAIN, at={"w": 0.9})


# ---- a plain mapping as the domain ------------------------------------------------------------

MAPPED = {w: (0, 0.5), x: Interval(-1, 2, False, True), L: range(5, 10)}


@given(point=points(MAPPED))
def test_points_of_a_mapping_stay_in_its_ranges(point):
    assert set(point) == {w, x, L}
    assert 0 < point[w] < 0.5 and -1 <= point[x] < 2
    assert isinstance(point[L], int) and 5 <= point[L] <= 9


def test_a_mapping_domain_is_converted_once_with_the_ranges_as_written():
    domain = Domain.from_mapping(MAPPED, constraints=[x + w < 1])
    assert domain.intervals[w] == Interval(0, 0.5) and domain.intervals[x] == MAPPED[x]
    assert domain.integers[L] == (5, (5, 6, 7, 8, 9))
    assert domain.violations({L: 10}) and not domain.violations({L: 9})
    assert not domain.contains({w: 0.4, x: 0.7})
    assert Domain.from_mapping(domain) is domain
    assert assert_identity(sp.sinh(2 * w), 2 * sp.sinh(w) * sp.cosh(w), {w: (0.01, 5)}).equal


@pytest.mark.parametrize(("mapping", "message"), [
    ({"w": (0, 1)}, "domain key 'w' must be a SymPy Symbol"),
    ({w: (1, 0)}, r"domain of w=\(1, 0\) is empty"),
    ({L: (5, 9)}, "L is an integer symbol; give range"),
    ({L: range(5, 9, 2)}, "step 1"),
    ({w: "small"}, r"give \(lo, hi\) for lo < w < hi"),
])
def test_a_mapping_domain_refuses_what_it_cannot_read(mapping, message):
    with pytest.raises(InvalidArgument, match=message):
        assert_identity(w, w, mapping)


# ---- assert_agrees_with_montecarlo -------------------------------------------------------------

GATE = sympy_integrand(X**2 * sp.exp(b * X * Y), [X, Y])  # E = (1 - b**2)**(-3/2)
GATE_MEAN = (1 - b**2) ** sp.Rational(-3, 2)


def test_montecarlo_agrees_with_a_true_closed_form():
    evidence = assert_agrees_with_montecarlo(GATE_MEAN, GATE, n=50_000, seed=1, params={"b": 0.1})
    assert abs(evidence.z) <= 4 and evidence.estimate.n == 50_000
    assert evidence.to_dict()["estimate"]["seed"] == 1


def test_montecarlo_names_a_wrong_closed_form():
    with pytest.raises(AssertionError) as info:
        assert_agrees_with_montecarlo(1 / sp.sqrt(1 - b**2), GATE, n=50_000, seed=1, params={b: 0.2})
    message = str(info.value)
    assert "params={b: 0.2}" in message
    assert "closed form = 1.0206207" in message and "Monte-Carlo = " in message
    assert "n=50000, seed=1" in message


def test_montecarlo_refuses_an_infinite_second_moment():
    # E[X^4 exp(2bXY)] < oo needs 1 - 4b^2 > 0: at b = 0.6 the mean exists (b^2 < 1) but the SE does not
    refused = r"second moment is infinite \(1 - 4\*b\*\*2 > 0 violated at b=0.6\)"
    with pytest.raises(NumericalTrouble, match=refused):
        assert_agrees_with_montecarlo(GATE_MEAN, GATE, n=1000, seed=0, params={"b": 0.6})
    with pytest.raises(InvalidArgument, match=r"gives no value for \['b'\]"):
        assert_agrees_with_montecarlo(GATE_MEAN, GATE, n=1000, seed=0, params={})


def test_montecarlo_with_a_callable_integrand_and_a_rademacher_integrand():
    def draw(rng, size):
        return rng.standard_normal(size)

    def square(z, params):
        return params[0] * z**2

    assert_agrees_with_montecarlo(lambda p: p[0], square, draw, n=20_000, seed=3, params=(2.0,))
    with pytest.raises(NumericalTrouble, match="scale too large"):
        assert_agrees_with_montecarlo(2.0, square, draw, n=100, seed=3, params=(2.0,),
                                      second_moment_finite=lambda p: (False, "scale too large"))
    with pytest.raises(AssertionError, match=r"\|z\| = "):
        assert_agrees_with_montecarlo(2.1, square, draw, n=20_000, seed=3, params=(2.0,))
    coin = sympy_integrand(sp.exp(b * X * Y), [X, Y], law="rademacher")  # E = cosh(b)
    assert_agrees_with_montecarlo(sp.cosh(b), coin, n=20_000, seed=0, params={"b": 0.7})


# ---- assert_gradient --------------------------------------------------------------------------

LOSS = a**2 / (2 * (1 - 4 * b**2) ** sp.Rational(3, 2)) - a / (1 - b**2) ** sp.Rational(3, 2)


@pytest.mark.parametrize("method", ["complex-step", "finite-difference"])
def test_assert_gradient_passes_on_the_true_gradient(method):
    evidence = assert_gradient(LOSS, [a, b], {"a": 0.7, "b": 0.2}, method=method)
    assert evidence.max_relative_gap < (1e-12 if method == "complex-step" else 1e-6)
    assert set(evidence.numeric) == {"a", "b"}


def test_assert_gradient_names_the_wrong_component():
    printed = [sp.diff(LOSS, a), sp.diff(LOSS, b) / 2]
    with pytest.raises(AssertionError) as info:
        assert_gradient(LOSS, ["a", "b"], {a: 0.7, b: 0.2}, gradient=printed)
    message = str(info.value)
    assert "at a=0.7, b=0.2" in message and "d/db: gradient = " in message and "d/da" not in message
    with pytest.raises(InvalidArgument, match="unknown method"):
        assert_gradient(LOSS, [a], {a: 0.7, b: 0.2}, method="autodiff")


# ---- assert_bound_along -----------------------------------------------------------------------

T = np.linspace(0.0, 2.0, 101)
CIRCLE = (T, np.column_stack([np.cos(T), np.sin(T)]))


def test_assert_bound_along_passes_and_reports_the_worst_time():
    u, v, r = sp.symbols("u v r")
    evidence = assert_bound_along(CIRCLE, u**2 + v**2 <= r, names=("u", "v"), params={"r": 1 + 1e-12})
    assert evidence.n_times == 101 and evidence.worst_margin >= 0
    solution = SimpleNamespace(t=T, y=CIRCLE[1])  # what numerics.ode.Solution offers
    assert assert_bound_along(solution, lambda t, y: 3.0 - t - y[0] ** 2).worst_time == 2.0


def test_assert_bound_along_names_the_violation():
    u, t = sp.symbols("u t")
    with pytest.raises(AssertionError) as info:
        assert_bound_along(CIRCLE, u >= 1 - t / 4, names=("u", "v"))
    message = str(info.value)
    assert "bound u >= 1 - t/4 violated at" in message and "worst at t=2 (u=-0.4161468365" in message
    with pytest.raises(AssertionError, match="margin nan"):
        assert_bound_along(CIRCLE, lambda t, y: float("nan"))
    with pytest.raises(InvalidArgument, match="neither a state name"):
        assert_bound_along(CIRCLE, u <= sp.Symbol("c"), names=("u", "v"))


def test_assert_bound_along_takes_the_trajectory_type():
    """A numerics.trajectory.Trajectory (a claim's run) is checked by name, by the claims' own kind."""
    from numerics.trajectory import Trajectory

    u, v = sp.symbols("u v")
    run = Trajectory(T, {"u": np.cos(T), "v": np.sin(T)}, {"loss": T})
    assert assert_bound_along(run, u**2 + v**2 <= 1 + 1e-12).n_times == T.size
    with pytest.raises(AssertionError, match="worst at t=2"):
        assert_bound_along(run, u > 0)
    with pytest.raises(InvalidArgument, match="not states"):
        assert_bound_along(run, u > 0, names=("u", "w"))
