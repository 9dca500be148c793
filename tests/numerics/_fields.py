"""Vector fields for the tests of :mod:`numerics.ode`.

They sit in an importable module so that their integrator kernels are cached on disk like those
of real models.
Few fields with parameters, rather than one per test, because each field costs a compilation.
"""

import math

from numerics._jit import jit


@jit
def riccati(t, y, p, out):
    """Scalar ``y' = y (p0 + p1 y)``: decay (p1 = 0), logistic (p0 = r, p1 = -r/K), blow-up (p0 = 0)."""
    out[0] = y[0] * (p[0] + p[1] * y[0])


@jit
def level_events(t, y, p, event_times, event_states, out):
    """``level``: y - p2; ``relative``: y - p3 * (y when ``level`` fired), NaN until then."""
    out[0] = y[0] - p[2]
    out[1] = y[0] - p[3] * event_states[0, 0]


@jit
def linear(t, y, p, out):
    """``y' = A y`` with ``A = p.reshape(n, n)`` (row-major)."""
    n = y.size
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += p[i * n + j] * y[j]
        out[i] = acc


@jit
def first_component(t, y, p, event_times, event_states, out):
    """One event value: ``y[0]``."""
    out[0] = y[0]


@jit
def pulled_oscillator(t, y, p, out):
    """Five-dimensional smooth nonlinear field, used for timing long integrations.

    A van der Pol limit cycle (mu = p0) drives three relaxing components.
    """
    out[0] = y[1]
    out[1] = p[0] * (1.0 - y[0] * y[0]) * y[1] - y[0]
    out[2] = y[0] - y[2]
    out[3] = y[1] * y[2] - y[3]
    out[4] = math.sin(y[3]) - 0.5 * y[4]


@jit
def indexed_decay(t, y, p, out):
    """``y_i' = −p[0][idx[i]] y_i`` with ``p = (rates, idx)``: integer data passed beside the parameters."""
    rates, idx = p[0], p[1]
    for i in range(y.size):
        out[i] = -rates[idx[i]] * y[i]


@jit
def total_and_square(t, y, p, out):
    """Observables Σ_i y_i and y_0² (an observer of any field)."""
    acc = 0.0
    for i in range(y.size):
        acc += y[i]
    out[0] = acc
    out[1] = y[0] * y[0]
