"""Numerical derivatives for checks: central differences of vector functions, complex-step gradients."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble


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


def complex_step_gradient(
    f: Callable[[np.ndarray], complex],
    x: np.ndarray,
    *,
    step: float = 1e-30,
    components: np.ndarray | None = None,
) -> np.ndarray:
    """g_j = Im f(x + i·h·e_j) / h (complex-step derivative), for each j of ``components`` (default: all).

    For f analytic near the real point x and real on reals, f(x + ih e_j) = f(x) + ih ∂_j f
    − (h²/2)∂_j² f − i(h³/6)∂_j³ f + …, so the imaginary part gives ∂_j f with relative error
    O(h²) and no subtraction: at h = 1e-30 the result is exact to rounding, unlike central
    differences. ``f`` maps a complex 1-D array to a complex scalar and must be written with
    analytic operations only (no abs, max, comparisons on the argument's imaginary part).

    Raises
    ------
    InvalidArgument
        ``x`` not a finite real 1-D array, ``step`` not in (0, 1e-8], a component out of range.
    NumericalTrouble
        A derivative came out NaN or infinite (f overflowed or is not analytic there).
    """
    x = np.asarray(x)
    if x.ndim != 1 or not np.isrealobj(x) or not np.all(np.isfinite(x)):
        msg = f"x must be a finite real 1-D array; got shape {x.shape}, dtype {x.dtype}"
        raise InvalidArgument(msg)
    if not 0 < step <= 1e-8:
        msg = f"step={step!r} must lie in (0, 1e-8]: the O(h²) error must stay below rounding"
        raise InvalidArgument(msg)
    chosen = np.arange(x.size) if components is None else np.asarray(components, dtype=np.int64)
    if chosen.size and (chosen.min() < 0 or chosen.max() >= x.size):
        msg = f"components must lie in [0, {x.size}); got {chosen.min()}..{chosen.max()}"
        raise InvalidArgument(msg)
    shifted = x.astype(complex)
    out = np.empty(chosen.size)
    with np.errstate(over="ignore", invalid="ignore"):  # non-finite results are reported below
        for k, j in enumerate(chosen):
            shifted[j] = complex(x[j], step)
            out[k] = np.imag(f(shifted)) / step
            shifted[j] = x[j]
    bad = np.flatnonzero(~np.isfinite(out))
    if bad.size:
        msg = (f"complex-step derivative not finite in component(s) {chosen[bad][:10].tolist()}: "
               "f overflowed or is not analytic there")
        raise NumericalTrouble(msg)
    return out


def directional_derivative(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, v: np.ndarray, *,
                           step: float = 1e-30) -> np.ndarray:
    """d/dε f(x + εv) at ε = 0 by one complex step: Im f(x + ihv)/h (exact to rounding for analytic f).

    This is the chain rule Q̇ = ∇Q·θ̇ for an observable Q of the parameters along a flow θ̇ = v, for any
    analytic Q (bilinear Gram entries, network outputs) and any number of outputs of ``f`` at once.

    Raises
    ------
    InvalidArgument
        ``x`` or ``v`` not finite real 1-D arrays of one shape, ``step`` not in (0, 1e-8].
    NumericalTrouble
        A derivative came out NaN or infinite.
    """
    x, v = np.asarray(x), np.asarray(v)
    for name, value in (("x", x), ("v", v)):
        if value.ndim != 1 or not np.isrealobj(value) or not np.all(np.isfinite(value)):
            raise InvalidArgument(f"{name} must be a finite real 1-D array; got shape {value.shape}, "
                                  f"dtype {value.dtype}")
    if x.shape != v.shape:
        raise InvalidArgument(f"x and v must have one shape; got {x.shape} and {v.shape}")
    if not 0 < step <= 1e-8:
        raise InvalidArgument(f"step={step!r} must lie in (0, 1e-8]: the O(h²) error must stay below rounding")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.imag(np.asarray(f(x + 1j * step * v))) / step
    if not np.all(np.isfinite(out)):
        raise NumericalTrouble("directional derivative not finite: f overflowed or is not analytic there")
    return out
