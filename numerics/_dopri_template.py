"""Template of the embedded Runge-Kutta integrator; :mod:`numerics.ode` instantiates it per vector field.

This file is read as text, never imported for use: :mod:`numerics._ode_kernels` copies it into a
generated module with the placeholder line ``rhs = events = HAS_EVENTS = None`` replaced by
imports of the field's njit functions under those names and the constant ``HAS_EVENTS``. numba
cannot cache a kernel that receives a jitted function as an argument or closure, but it can cache
one that calls a module global. Only what calls ``rhs``/``events`` is here; the rest is compiled
once in :mod:`numerics._rk_core`.

Shape contract (``s`` stages, ``n`` state components, ``m`` save times, ``q`` events):
``rhs(t, y (n,), params, out (n,))`` writes dy/dt; ``events(t, y (n,), params, event_times (q,),
event_states (q, n), out (q,))`` writes the q event values. Kernels never raise; they return a
status: 0 reached ``t1``, 1 a terminal event fired, 2 ``max_steps`` attempts made, 3 step size
underflow (blow-up or stiffness), 4 non-finite rhs or state that shrinking the step did not cure.
"""

import math

import numpy as np
from numba import prange

from numerics._jit import jit, parallel_jit
from numerics._rk_core import all_finite, copy_into, crosses, dense, error_norm, fill_nan

rhs = events = HAS_EVENTS = None  # replaced by the generated module's imports and constant

_EPS = 2.220446049250313e-16
_SAFETY = 0.9
_MIN_FACTOR = 0.2
_MAX_FACTOR = 10.0
# Hairer's PI controller for DOPRI5: factor = safety * err^-(1/(q+1) - 0.75 beta) * err_prev^beta.
_BETA = 0.04
# Events are located on the dense output to this relative width in t.
_EVENT_RTOL = 1e-13


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
def _initial_step(t0, y0, f0, params, t1, rtol, atol, error_order, y1, f1):
    """Hairer-Nørsett-Wanner starting step (Solving ODEs I, II.4); evaluates ``rhs`` once."""
    n = y0.size
    d0 = 0.0
    d1 = 0.0
    for i in range(n):
        sc = atol[i] + rtol * abs(y0[i])
        d0 += (y0[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = math.sqrt(d0 / n)
    d1 = math.sqrt(d1 / n)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, t1 - t0)
    for i in range(n):
        y1[i] = y0[i] + h0 * f0[i]
    rhs(t0 + h0, y1, params, f1)
    d2 = 0.0
    for i in range(n):
        sc = atol[i] + rtol * abs(y0[i])
        d2 += ((f1[i] - f0[i]) / sc) ** 2
    d2 = math.sqrt(d2 / n) / h0
    if not math.isfinite(d2):
        return h0
    dmax = max(d1, d2)
    h1 = max(1e-6, h0 * 1e-3) if dmax <= 1e-15 else (0.01 / dmax) ** (1.0 / (error_order + 1))
    return min(100.0 * h0, h1, t1 - t0)


@jit
def _locate(idx, ta, ga, tb, gb, t, y, h, k, p, params, event_times, event_states, bcoef, ybuf, gbuf):
    """First time in ``(ta, tb]`` on the fired side of event ``idx``, by Illinois on the dense output.

    Requires ``crosses(ga, gb, ·)``. Returns the right end of a bracket of width at most
    ``_EVENT_RTOL * max(|ta|, |tb|, h)`` (or one ulp).
    """
    sign = 1.0 if ga < 0.0 else -1.0
    fa = sign * ga
    fb = sign * gb
    kept = 0
    for _ in range(400):
        if tb - ta <= _EVENT_RTOL * max(abs(ta), abs(tb), h):
            break
        tm = tb - fb * (tb - ta) / (fb - fa)
        if not (ta < tm < tb):
            tm = 0.5 * (ta + tb)
            if not (ta < tm < tb):
                break
        dense((tm - t) / h, y, h, k, p, bcoef, ybuf)
        events(tm, ybuf, params, event_times, event_states, gbuf)
        fm = sign * gbuf[idx]
        if fm >= 0.0:
            tb = tm
            fb = fm
            if kept == 1:
                fa *= 0.5
            kept = 1
        elif fm < 0.0:
            ta = tm
            fa = fm
            if kept == -1:
                fb *= 0.5
            kept = -1
        else:
            # NaN inside the bracket: fall back to bisection towards the left end.
            tb = tm
            fb = 0.0
            kept = 0
    return tb


@jit
def _fire_events(t, t_new, y, y_new, h, k, p, params, directions, terminal, event_times, event_states,
                 g_a, g_b, g_scr, bcoef, ybuf, ystar):
    """Record every event that first crosses zero on the step ``(t, t_new]``; return the stop time.

    ``g_a`` holds the values at ``t``, ``g_b`` those at ``t_new``. After an event fires, all values
    are recomputed with its record, so events defined relative to it see its time and state.
    Returns ``(t_stop, terminated)``: ``(t_new, False)``, or the time of a terminal event and
    ``True`` (its state left in ``ystar``).
    """
    n_ev = directions.size
    ta = t
    while True:
        best = -1
        t_best = math.inf
        for j in range(n_ev):
            if event_times[j] == event_times[j]:
                continue
            if crosses(g_a[j], g_b[j], directions[j]):
                tj = _locate(j, ta, g_a[j], t_new, g_b[j], t, y, h, k, p, params, event_times,
                             event_states, bcoef, ybuf, g_scr)
                if tj < t_best:
                    t_best = tj
                    best = j
        if best < 0:
            return t_new, False
        if t_best == t_new:
            copy_into(y_new, ystar)
        else:
            dense((t_best - t) / h, y, h, k, p, bcoef, ystar)
        event_times[best] = t_best
        copy_into(ystar, event_states[best])
        stop = terminal[best]
        # Events crossing within the root tolerance of t_best fire with it, at the same time.
        while True:
            events(t_best, ystar, params, event_times, event_states, g_scr)
            more = False
            for j in range(n_ev):
                if event_times[j] != event_times[j] and crosses(g_a[j], g_scr[j], directions[j]):
                    event_times[j] = t_best
                    copy_into(ystar, event_states[j])
                    stop = stop or terminal[j]
                    more = True
            if not more:
                break
        if stop:
            return t_best, True
        copy_into(g_scr, g_a)
        ta = t_best
        events(t_new, y_new, params, event_times, event_states, g_b)


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
    fill_nan(event_times)
    for j in range(n_ev):
        fill_nan(event_states[j])
    for j in range(save_at.size):
        fill_nan(save_out[j])
    n_steps = 0
    n_rejected = 0
    n_saved = 0
    t = t0
    rhs(t, y, params, k[0])
    n_rhs = 1
    if not (all_finite(y) and all_finite(k[0])):
        copy_into(y, y_out)
        return 4, t, 0.0, n_steps, n_rejected, n_rhs, n_saved
    # A global constant: numba prunes the event code (seconds of compilation) from fields without.
    if HAS_EVENTS:
        events(t, y, params, event_times, event_states, g_old)
    while n_saved < save_at.size and save_at[n_saved] <= t:
        copy_into(y, save_out[n_saved])
        n_saved += 1
    if first_step > 0.0:
        h = first_step
    else:
        h = _initial_step(t0, y, k[0], params, t1, rtol, atol, error_order, y_new, k[1])
        n_rhs += 1
    h = min(h, t1 - t0)
    alpha = 1.0 / (error_order + 1) - 0.75 * _BETA
    err_old = 1e-4
    rejected = False
    nonfinite = False
    status = 0
    while t < t1:
        if n_steps + n_rejected >= max_steps:
            status = 2
            break
        h_min = 10.0 * _EPS * abs(t)
        if h <= h_min:
            status = 4 if nonfinite else 3
            break
        # Step onto t1 exactly rather than leave a remainder too small to take.
        if t + h >= t1 - h_min:
            h = t1 - t
            t_new = t1
        else:
            t_new = t + h
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
        t_stop = t_new
        terminated = False
        if HAS_EVENTS:
            events(t_new, y_new, params, event_times, event_states, g_new)
            copy_into(g_old, g_a)
            t_stop, terminated = _fire_events(t, t_new, y, y_new, h, k, p, params, directions, terminal,
                                  event_times, event_states, g_a, g_new, g_scr, bcoef, ybuf, ystar)
        while n_saved < save_at.size and save_at[n_saved] <= t_stop:
            ts = save_at[n_saved]
            if ts == t_new:
                copy_into(y_new, save_out[n_saved])
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
