"""Central-difference Jacobians: exact for quadratics up to rounding, O(h²) otherwise."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from numerics.differences import central_jacobian


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
