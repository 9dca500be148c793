"""Building blocks of the embedded Runge-Kutta kernels that do not call the vector field.

They live in a real module of their own, so they are compiled and cached once for all vector
fields; :mod:`numerics._dopri_template` (instantiated per field) calls them. Shapes: ``k`` is
(s, n), the stage derivatives of one step; ``y``, ``y_new`` are (n,).
"""

import math

from numerics._jit import jit

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
    s, n = k.shape
    for j in range(s):
        acc = 0.0
        power = theta
        for m in range(p.shape[1]):
            acc += p[j, m] * power
            power *= theta
        bcoef[j] = acc
    for i in range(n):
        acc = 0.0
        for j in range(s):
            acc += bcoef[j] * k[j, i]
        out[i] = y[i] + h * acc


@jit
def crosses(g_before, g_after, direction):
    """Whether an event value crossed zero in ``direction`` (+1 up, -1 down, 0 either).

    The earlier value must lie strictly on the near side; the later one on zero or beyond.
    A NaN value (an event not yet armed) never crosses.
    """
    if direction >= 0 and g_before < 0.0 and g_after >= 0.0:
        return True
    return direction <= 0 and g_before > 0.0 and g_after <= 0.0
