"""Central-difference Jacobians (exact for quadratics up to rounding, O(h²) otherwise); complex-step gradients."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics.differences import central_jacobian, complex_step_gradient, directional_derivative


@given(st.lists(st.floats(-3, 3), min_size=3, max_size=3))
def test_quadratic_map_is_differentiated_exactly(values):
    # central differences have no truncation error on quadratics
    y = np.array(values)
    A = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])

    def f(z):
        return A @ z + np.array([z[0] * z[1], z[2] ** 2])

    exact = A + np.array([[y[1], y[0], 0.0], [0.0, 0.0, 2 * y[2]]])
    np.testing.assert_allclose(central_jacobian(f, y), exact, atol=1e-8)


def test_smooth_map_to_second_order():
    y = np.array([0.3, -1.2])
    J = central_jacobian(lambda z: np.array([np.sin(z[0]) * np.exp(z[1])]), y)
    exact = np.array([[np.cos(0.3) * np.exp(-1.2), np.sin(0.3) * np.exp(-1.2)]])
    np.testing.assert_allclose(J, exact, rtol=1e-9)


# --- complex-step gradients ---------------------------------------------------------------------


@given(st.lists(st.floats(-5, 5), min_size=1, max_size=6))
def test_complex_step_is_exact_to_rounding_on_a_smooth_function(values):
    x = np.array(values)

    def f(z):  # analytic, real on reals: Σ sin(z_j) e^{z_j / 3} + (Σ z_j)²
        return np.sum(np.sin(z) * np.exp(z / 3)) + np.sum(z) ** 2

    exact = (np.cos(x) + np.sin(x) / 3) * np.exp(x / 3) + 2 * np.sum(x)
    got = complex_step_gradient(f, x)
    scale = np.abs(np.sin(x) * np.exp(x / 3)).sum() + abs(np.sum(x)) ** 2 + 1
    assert np.all(np.abs(got - exact) <= 8 * np.finfo(float).eps * scale)


def test_complex_step_chooses_components_and_beats_central_differences():
    x = np.array([1e-3, 2.0, -0.7])

    def f(z):
        return np.exp(z[0] * 1e4) + z[1] ** 3 * z[2]

    got = complex_step_gradient(f, x, components=[0, 2])
    exact = np.array([1e4 * np.exp(10.0), x[1] ** 3])
    assert np.max(np.abs(got - exact) / np.abs(exact)) <= 4 * np.finfo(float).eps
    central = central_jacobian(lambda z: np.array([f(z).real]), x)[0, [0, 2]]
    assert np.max(np.abs(central - exact) / np.abs(exact)) > 1e3 * np.finfo(float).eps


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"x": np.array([[1.0]])}, "1-D"),
    ({"x": np.array([np.nan])}, "finite"),
    ({"x": np.array([1.0]), "step": 1e-3}, "step=0.001"),
    ({"x": np.array([1.0]), "components": [3]}, r"components must lie in \[0, 1\)"),
])
def test_complex_step_refuses_bad_input(kwargs, pattern):
    with pytest.raises(InvalidArgument, match=pattern):
        complex_step_gradient(lambda z: np.sum(z), **kwargs)


def test_complex_step_reports_a_non_finite_derivative():
    with pytest.raises(NumericalTrouble, match=r"component\(s\) \[0\]"):
        complex_step_gradient(lambda z: np.exp(z[0] * 1e3), np.array([1.0]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8))
def test_directional_derivative_is_the_gradient_along_v(seed, n):
    """For a bilinear Q(x) = xᵀAx the rate along v is xᵀ(A + Aᵀ)v exactly; for exp it is the gradient·v."""
    rng = np.random.default_rng(seed)
    A, x, v = rng.standard_normal((n, n)), rng.standard_normal(n), rng.standard_normal(n)
    rate = directional_derivative(lambda z: np.array([z @ A @ z, np.sum(np.exp(z))]), x, v)
    np.testing.assert_allclose(rate, [x @ (A + A.T) @ v, np.exp(x) @ v], rtol=1e-13, atol=1e-14)


def test_directional_derivative_refuses_mismatched_shapes():
    with pytest.raises(InvalidArgument, match="one shape"):
        directional_derivative(np.sum, np.zeros(3), np.zeros(2))
