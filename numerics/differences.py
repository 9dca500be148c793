"""Finite differences of vector functions, for checks that need a derivative the code does not provide."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central_jacobian(f: Callable[[np.ndarray], np.ndarray], y: np.ndarray, rel_step: float = 1e-6) -> np.ndarray:
    """J[i, j] = (f_i(y + h_j e_j) − f_i(y − h_j e_j)) / (2h_j), h_j = ``rel_step``·max(1, |y_j|).

    Truncation error O(h²) per entry; ``f`` maps a 1-D array to a 1-D array.
    """
    y = np.asarray(y, dtype=float)
    columns = []
    for j in range(y.size):
        step = rel_step * max(1.0, abs(y[j]))
        up, down = y.copy(), y.copy()
        up[j] += step
        down[j] -= step
        columns.append((np.asarray(f(up), dtype=float) - np.asarray(f(down), dtype=float)) / (2 * step))
    return np.column_stack(columns)
