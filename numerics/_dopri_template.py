"""Template of the embedded Runge-Kutta integrator; :mod:`numerics.ode` instantiates it per vector field.

This file is read as text, never imported for use: :mod:`numerics._ode_kernels` has
:mod:`numerics._kernel_modules` copy it into a generated module with the placeholder line replaced
by imports of the field's njit ``rhs`` and ``events``, the constant ``HAS_EVENTS``, and
:func:`~numerics._field_template.start` and :func:`~numerics._field_template.fire_events` from the
field's instance of :mod:`numerics._field_template` (the set-up and the events, shared with the
Rosenbrock kernels). numba cannot cache a kernel that receives a jitted function as an argument or
closure, but it can cache one that calls a module global. Only what calls the field is here; the
rest is compiled once in :mod:`numerics._rk_core`.

Shape contract (``s`` stages, ``n`` state components, ``m`` save times, ``q`` events): as in
:mod:`numerics._field_template`. Kernels never raise; they return a status: 0 reached ``t1``,
1 a terminal event fired, 2 ``max_steps`` attempts made, 3 step size underflow (blow-up or
stiffness), 4 non-finite rhs or state that shrinking the step did not cure.
"""

import math

import numpy as np
from numba import prange

from numerics._jit import jit, parallel_jit
from numerics._rk_core import all_finite, copy_into, dense, error_norm, step_to, stop_status

rhs = events = observe = start = fire_events = save_state = HAS_EVENTS = HAS_OBSERVER = None  # set when generated

_SAFETY = 0.9
_MIN_FACTOR = 0.2
_MAX_FACTOR = 10.0
# Hairer's PI controller for DOPRI5: factor = safety * err^-(1/(q+1) - 0.75 beta) * err_prev^beta.
_BETA = 0.04


@jit
def _stages(t, t_new, y, h, params, a, c, k, ytmp):
    """Fill ``k[1:]`` given ``k[0] = f(t, y)``; leave the FSAL point ``y + h Σ_j a_sj k_j`` in ``ytmp``."""
    s, n = k.shape
    for i in range(1, s):
        for m in range(n):
            acc = 0.0
            for j in range(i):
                acc += a[i, j] * k[j, m]
            ytmp[m] = y[m] + h * acc
        # c_i = 1 is evaluated at t_new itself, which the last step sets to t1 exactly.
        ti = t_new if c[i] == 1.0 else t + c[i] * h
        rhs(ti, ytmp, params, k[i])


@jit
def solve(t0, t1, y0, params, rtol, atol, first_step, max_steps, save_at, a, e, c, p, error_order,
          directions, terminal, save_out, event_times, event_states, y_out):
    """Integrate ``y' = rhs(t, y, params)`` from ``(t0, y0)`` towards ``t1`` with an FSAL pair.

    Writes the states at ``save_at`` (sorted, within ``[t0, t1]``) into ``save_out`` (NaN where not
    reached), the hitting times and states of events into ``event_times``/``event_states`` (NaN
    if not fired) and the last state into ``y_out``. ``first_step <= 0`` chooses it automatically.

    Returns
    -------
    (status, t_last, h_last, n_steps, n_rejected, n_rhs, n_saved)
    """
    n = y0.size
    s = c.size
    n_ev = directions.size
    k = np.empty((s, n))
    y = np.empty(n)
    copy_into(y0, y)
    y_new = np.empty(n)
    ystar = np.empty(n)
    ybuf = np.empty(n)
    bcoef = np.empty(s)
    g_old = np.empty(n_ev)
    g_new = np.empty(n_ev)
    g_a = np.empty(n_ev)
    g_scr = np.empty(n_ev)
    status, h, n_rhs, n_saved = start(t0, t1, y, k[0], params, rtol, atol, first_step, error_order, save_at,
                                      save_out, event_times, event_states, g_old, y_new, k[1])
    n_steps = 0
    n_rejected = 0
    t = t0
    if status != 0:
        copy_into(y, y_out)
        return status, t, 0.0, n_steps, n_rejected, n_rhs, n_saved
    alpha = 1.0 / (error_order + 1) - 0.75 * _BETA
    err_old = 1e-4
    rejected = False
    nonfinite = False
    while t < t1:
        status = stop_status(t, h, n_steps + n_rejected, max_steps, nonfinite)
        if status != 0:
            break
        t_new, h = step_to(t, t1, h)
        _stages(t, t_new, y, h, params, a, c, k, y_new)
        n_rhs += s - 1
        finite = all_finite(y_new) and all_finite(k[s - 1])
        err = error_norm(y, y_new, k, e, h, rtol, atol) if finite else math.inf
        if not (finite and math.isfinite(err)):
            # Overflow is cured, if at all, by shorter steps; the controller formula would be NaN.
            n_rejected += 1
            rejected = True
            nonfinite = True
            h *= _MIN_FACTOR
            continue
        nonfinite = False
        if err > 1.0:
            n_rejected += 1
            rejected = True
            h *= max(_MIN_FACTOR, _SAFETY * err ** (-alpha))
            continue
        n_steps += 1
        if err == 0.0:
            factor = _MAX_FACTOR
        else:
            factor = min(_MAX_FACTOR, max(_MIN_FACTOR, _SAFETY * err ** (-alpha) * err_old**_BETA))
        if rejected:
            factor = min(factor, 1.0)
        err_old = max(err, 1e-4)
        rejected = False
        # The bookkeeping of an accepted step, the same in _rosenbrock_template.solve. It stays written out
        # in both: as a function, even one numba inlines, the reference counts of its array arguments
        # cost this loop 3-6 % on the ih-flow benchmark (up to 27 % when saving densely).
        t_stop = t_new
        terminated = False
        if HAS_EVENTS:
            t_stop, terminated = fire_events(t, t_new, y, y_new, h, k, p, params, directions, terminal,
                                             event_times, event_states, g_old, g_new, g_a, g_scr, bcoef, ybuf,
                                             ystar)
        while n_saved < save_at.size and save_at[n_saved] <= t_stop:
            ts = save_at[n_saved]
            if ts == t_new:
                save_state(ts, y_new, params, save_out[n_saved])
            elif HAS_OBSERVER:
                dense((ts - t) / h, y, h, k, p, bcoef, ybuf)
                observe(ts, ybuf, params, save_out[n_saved])
            else:
                dense((ts - t) / h, y, h, k, p, bcoef, save_out[n_saved])
            n_saved += 1
        if terminated:
            t = t_stop
            copy_into(ystar, y)
            status = 1
            break
        t = t_new
        copy_into(y_new, y)
        copy_into(k[s - 1], k[0])
        copy_into(g_new, g_old)
        h *= factor
    copy_into(y, y_out)
    return status, t, h, n_steps, n_rejected, n_rhs, n_saved


@parallel_jit
def solve_batch(t0, t1, y0s, params, rtol, atol, first_step, max_steps, save_at, a, e, c, p,
                error_order, directions, terminal, save_out, event_times, event_states, y_out,
                status, t_last, h_last, counts):
    """Run :func:`solve` on each row of ``y0s``/``params`` in parallel; one output row per point.

    Each point runs the serial kernel unchanged, so results do not depend on the thread count.
    ``counts[i]`` holds ``(n_steps, n_rejected, n_rhs, n_saved)``.
    """
    for i in prange(y0s.shape[0]):
        st, tl, hl, ns, nr, nf, nv = solve(t0, t1, y0s[i], params[i], rtol, atol, first_step, max_steps,
                                           save_at, a, e, c, p, error_order, directions, terminal,
                                           save_out[i], event_times[i], event_states[i], y_out[i])
        status[i] = st
        t_last[i] = tl
        h_last[i] = hl
        counts[i, 0] = ns
        counts[i, 1] = nr
        counts[i, 2] = nf
        counts[i, 3] = nv
