"""Stiff vector fields with analytic Jacobians, for the tests of the stiff methods of :mod:`numerics.ode`.

They sit in an importable module so that their kernels are cached on disk like those of real models.
"""

import math

from numerics._jit import jit


@jit
def robertson(t, y, p, out):
    """Robertson's chemical kinetics (HW II, IV.1): rates k1, k2, k3 = p0, p1, p2."""
    r1 = p[0] * y[0]
    r2 = p[1] * y[1] * y[1]
    r3 = p[2] * y[1] * y[2]
    out[0] = -r1 + r3
    out[1] = r1 - r2 - r3
    out[2] = r2


@jit
def robertson_jac(t, y, p, out):
    """∂(robertson)/∂y."""
    out[0, 0] = -p[0]
    out[0, 1] = p[2] * y[2]
    out[0, 2] = p[2] * y[1]
    out[1, 0] = p[0]
    out[1, 1] = -2.0 * p[1] * y[1] - p[2] * y[2]
    out[1, 2] = -p[2] * y[1]
    out[2, 0] = 0.0
    out[2, 1] = 2.0 * p[1] * y[1]
    out[2, 2] = 0.0


@jit
def forced_linear(t, y, p, out):
    """``y' = A y + b cos(omega t)``: ``A = p[:n*n]`` row-major, ``b = p[n*n:n*n+n]``, ``omega = p[n*n+n]``.

    ``p`` has one more entry, the level of :func:`levels`.
    """
    n = y.size
    w = p[n * n + n]
    for i in range(n):
        acc = p[n * n + i] * math.cos(w * t)
        for j in range(n):
            acc += p[i * n + j] * y[j]
        out[i] = acc


@jit
def forced_linear_jac(t, y, p, out):
    """Write ``A``, the Jacobian of :func:`forced_linear`."""
    n = y.size
    for i in range(n):
        for j in range(n):
            out[i, j] = p[i * n + j]


@jit
def levels(t, y, p, event_times, event_states, out):
    """``level``: y[0] - p[-1]; ``half``: y[1] - 1/2."""
    out[0] = y[0] - p[p.size - 1]
    out[1] = y[1] - 0.5


@jit
def partial_jac(t, y, p, out):
    """Write only the first row: a broken ``jac`` for the contract check."""
    for j in range(y.size):
        out[0, j] = 0.0
