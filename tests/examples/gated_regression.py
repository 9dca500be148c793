"""Worked example: property tests for a derivation of your own, written with ``checks.testing``.

This file is what a user would write as ``test_gated_regression.py``. It is *not* collected by
tdcheck's own suite (its name does not start with ``test_``), because one of its four tests is
meant to fail: ``test_worked_example.py`` runs it with ``pytester`` and asserts exactly that.

The model. A scalar regression on Gaussian inputs with a multiplicative gate: X, Z iid N(0, 1),
target X, prediction ``a * X * exp(b * X * Z)``. The population loss

    L(a, b) = 1/2 E[(a X e^{bXZ} - X)^2]
            = a^2 / (2 (1 - 4 b^2)^{3/2}) - a / (1 - b^2)^{3/2} + 1/2        (4 b^2 < 1)

is "printed" below together with its gradient, as in a draft of a paper; the gradient's b-component
contains a deliberate slip (the chain-rule factor of the first term, 6 printed as 3).
"""

import sympy as sp
from hypothesis import given, settings

from checks.testing import (
    assert_agrees_with_montecarlo,
    assert_bound_along,
    assert_gradient,
    assert_identity,
    points,
    sympy_integrand,
)
from derivations.domain import Constraint, Domain, Interval
from derivations.expectation import gaussian_expectation
from numerics.compile import vector_field
from numerics.ode import Tolerance, integrate

a, b = sp.symbols("a b", real=True)
X, Z = sp.symbols("X Z", real=True)

SQUARED_ERROR = sp.expand((a * X * sp.exp(b * X * Z) - X) ** 2 / 2)
DERIVED = gaussian_expectation(SQUARED_ERROR, [X, Z]).value  # exact, with 4b^2 < 1 as its condition

THREE_HALVES, FIVE_HALVES = sp.Rational(3, 2), sp.Rational(5, 2)
PRINTED_LOSS = a**2 / (2 * (1 - 4 * b**2) ** THREE_HALVES) - a / (1 - b**2) ** THREE_HALVES + sp.S.Half
PRINTED_GRADIENT = [
    a / (1 - 4 * b**2) ** THREE_HALVES - 1 / (1 - b**2) ** THREE_HALVES,
    3 * a**2 * b / (1 - 4 * b**2) ** FIVE_HALVES - 3 * a * b / (1 - b**2) ** FIVE_HALVES,  # slip: 6, not 3
]

DOMAIN = Domain(
    {a: Interval(-2, 2, False, False), b: Interval(-1, 1)},
    constraints=(Constraint(4 * b**2 < 1, "E[X^2 exp(2bXZ)] diverges unless 4b^2 < 1"),),
)
# Plain Monte-Carlo needs a finite second moment (16 b^2 < 1); 64 b^2 < 1 also keeps the fourth
# moment finite, so that the standard error is itself estimated reliably.
MC_DOMAIN = Domain(
    {a: Interval(-2, 2, False, False), b: Interval(-1, 1)},
    constraints=(Constraint(64 * b**2 < 1, "finite fourth moment of the integrand"),),
)


@given(point=points(DOMAIN))
def test_printed_loss_equals_its_derivation(point):
    assert_identity(PRINTED_LOSS, DERIVED, DOMAIN, at=point, name="L(a, b)")


@settings(max_examples=5)
@given(point=points(MC_DOMAIN))
def test_printed_loss_agrees_with_montecarlo(point, tdcheck_seed):
    assert_agrees_with_montecarlo(
        PRINTED_LOSS, sympy_integrand(SQUARED_ERROR, [X, Z]), n=40_000, seed=tdcheck_seed, params=point
    )


@given(point=points(DOMAIN))
def test_printed_gradient(point):
    assert_gradient(PRINTED_LOSS, [a, b], point, gradient=PRINTED_GRADIENT)


def test_gradient_flow_never_increases_the_loss():
    flow = vector_field([-sp.diff(DERIVED, a), -sp.diff(DERIVED, b)], [a, b], [], name="example_gated_flow")
    start = {a: 1.5, b: 0.3}
    solution = integrate(flow, list(start.values()), (0.0, 20.0), [], tol=Tolerance(rtol=1e-10, atol=1e-12),
                         save_at=[0.05 * k for k in range(401)])
    loss_at_start = float(PRINTED_LOSS.subs(start))
    evidence = assert_bound_along(solution, PRINTED_LOSS <= loss_at_start + 1e-12, names=("a", "b"))
    assert evidence.worst_margin >= -1e-12
    assert_bound_along(solution, 4 * b**2 < 1, names=("a", "b"))
