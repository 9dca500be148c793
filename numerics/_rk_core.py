"""Building blocks of the integrators that do not call the vector field.

They live in a real module of their own, so they are compiled and cached once for all vector
fields (except the :data:`inline_jit` ones, which numba compiles into their callers); the templates
instantiated per field (:mod:`numerics._field_template`, :mod:`numerics._dopri_template`,
:mod:`numerics._rosenbrock_template`) call them. Shapes: ``k`` is (s, n), the stage derivatives of
one step or, with ``p``, the continuous extension of :func:`dense`; ``y``, ``y_new`` are (n,).
"""

import math

from numba import njit

from numerics._jit import jit

EPS = 2.220446049250313e-16
# For small helpers with one caller per kernel: numba inlines them into the caller (in its IR), where
# compiling one apart would add 0.1-0.4 s to every field's first compilation, and a call in a loop
# can cost more than the loop. (Belongs beside the house decorators in numerics/_jit.py.)
inline_jit = njit(error_model="numpy", inline="always")  # cache=False: only ever compiled inside a caller

# Slice assignment and NumPy ufuncs cost seconds of compilation in every kernel that uses them;
# these loops cost little.


@jit
def all_finite(x):
    """Whether every entry of the 1-D array ``x`` is finite."""
    for i in range(x.size):
        if not math.isfinite(x[i]):
            return False
    return True


@jit
def copy_into(src, dst):
    """``dst[i] = src[i]`` for every ``i`` of the 1-D array ``src``."""
    for i in range(src.size):
        dst[i] = src[i]


@jit
def fill_nan(x):
    """Set every entry of the 1-D array ``x`` to NaN (the mark of "not reached")."""
    for i in range(x.size):
        x[i] = math.nan


@inline_jit
def stop_status(t, h, attempts, max_steps, nonfinite):
    """Return the status that ends an integration before a step of size ``h`` from ``t``; 0 to go on.

    2 when ``max_steps`` steps were attempted; step size underflow (``h <= 10 eps |t|``): 4 when
    the step was being shrunk for a non-finite value, else 3.
    """
    if attempts >= max_steps:
        return 2
    if h <= 10.0 * EPS * abs(t):
        return 4 if nonfinite else 3
    return 0


@inline_jit
def step_to(t, t1, h):
    """Return ``(t_new, h)`` of the step of size ``h`` from ``t``, landing on ``t1`` exactly if near.

    Stepping onto ``t1`` rather than leave a remainder too small to take (``<= 10 eps |t|``).
    """
    if t + h >= t1 - 10.0 * EPS * abs(t):
        return t1, t1 - t
    return t + h, h


@jit
def error_norm(y, y_new, k, e, h, rtol, atol):
    """RMS over i of ``h Σ_j e_j k_ji / (atol_i + rtol max(|y_i|, |y_new,i|))``."""
    s, n = k.shape
    acc = 0.0
    for m in range(n):
        em = 0.0
        for j in range(s):
            em += e[j] * k[j, m]
        r = h * em / (atol[m] + rtol * max(abs(y[m]), abs(y_new[m])))
        acc += r * r
    return math.sqrt(acc / n)


@jit
def dense(theta, y, h, k, p, bcoef, out):
    """``out = y + h Σ_j k_j Σ_m p_jm θ^(m+1)``, the continuous extension on the step [t, t + h]."""
    s = k.shape[0]
    for j in range(s):
        acc = 0.0
        power = theta
        for m in range(p.shape[1]):
            acc += p[j, m] * power
            power *= theta
        bcoef[j] = acc
    combine(y, k, bcoef, s, h, out)


@inline_jit
def combine(y, u, weights, count, scale, out):
    """``out = y + scale Σ_{j<count} weights_j u_j`` over the first ``count`` rows of ``u``."""
    n = u.shape[1]
    for m in range(n):
        acc = 0.0
        for j in range(count):
            acc += weights[j] * u[j, m]
        out[m] = y[m] + scale * acc


@jit
def crosses(g_before, g_after, direction):
    """Whether an event value crossed zero in ``direction`` (+1 up, -1 down, 0 either).

    The earlier value must lie strictly on the near side; the later one on zero or beyond.
    A NaN value (an event not yet armed) never crosses.
    """
    if direction >= 0 and g_before < 0.0 and g_after >= 0.0:
        return True
    return direction <= 0 and g_before > 0.0 and g_after <= 0.0
