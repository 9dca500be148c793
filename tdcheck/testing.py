"""Property testing for your own derivations (the implementation is :mod:`checks.testing`).

Strategies over a parameter domain (a ``Domain``, or a mapping such as ``{a: (0.01, 5), L: range(5, 50)}``)
and assertions that raise ``AssertionError`` naming a counterexample, or return their evidence.
"""

from checks.testing import (
    BoundAlong,
    GradientAgreement,
    MonteCarloAgreement,
    SympyIntegrand,
    assert_agrees_with_montecarlo,
    assert_bound_along,
    assert_gradient,
    assert_identity,
    points,
    sympy_integrand,
)
from derivations.domain import Constraint, Domain, Interval

__all__ = [
    "BoundAlong",
    "Constraint",
    "Domain",
    "GradientAgreement",
    "Interval",
    "MonteCarloAgreement",
    "SympyIntegrand",
    "assert_agrees_with_montecarlo",
    "assert_bound_along",
    "assert_gradient",
    "assert_identity",
    "points",
    "sympy_integrand",
]
