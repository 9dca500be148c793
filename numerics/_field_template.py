"""Template of what every integrator does with a field's ``rhs`` and ``events`` around its own steps.

The set-up of an integration (:func:`start`: outputs cleared, the events and saved states at the
start, the first step) and the events of an accepted step (:func:`fire_events`: crossings located
on the continuous extension). Both integrators (:mod:`numerics._dopri_template`,
:mod:`numerics._rosenbrock_template`) import these from the field's instance of this file, so they
follow one set of rules whatever the method; a method hands over its continuous extension
``(k, p)`` in the form of :func:`numerics._rk_core.dense`.

This file is read as text, never imported for use: :mod:`numerics._kernel_modules` copies it into a
generated module with the placeholder line replaced by imports of the field's njit functions
``rhs``, ``events`` and ``observe`` and the constants ``HAS_EVENTS``, ``HAS_OBSERVER``. Shape contract (``n`` state components,
``m`` save times, ``q`` events): ``rhs(t, y (n,), params, out (n,))`` writes dy/dt; ``events(t,
y (n,), params, event_times (q,), event_states (q, n), out (q,))`` writes the q event values;
``observe(t, y (n,), params, out (k,))`` writes the k values saved at a save time (the state itself
when the field has no observer).
"""

import math

from numerics._jit import jit
from numerics._rk_core import all_finite, copy_into, crosses, dense, fill_nan, inline_jit

rhs = events = observe = HAS_EVENTS = HAS_OBSERVER = None  # set when generated

# Events are located on the dense output to this relative width in t.
_EVENT_RTOL = 1e-13


@inline_jit
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


@inline_jit
def save_state(t, y, params, row):
    """Write what is saved at time ``t`` into ``row``: the field's observables of ``y``, or ``y`` itself."""
    if HAS_OBSERVER:
        observe(t, y, params, row)
    else:
        copy_into(y, row)


@inline_jit
def start(t0, t1, y, f0, params, rtol, atol, first_step, error_order, save_at, save_out, event_times,
          event_states, g0, ybuf, fbuf):
    """Set up an integration from ``(t0, y)``: outputs cleared, ``f0 = rhs(t0, y)``, the first step.

    Marks every output not reached (NaN), writes the event values at ``t0`` into ``g0`` and saves
    the states requested at ``t0``. The first step is ``first_step`` if > 0, else chosen by
    :func:`_initial_step` (with ``ybuf``, ``fbuf`` as scratch), and at most ``t1 - t0``. Inlined
    into each ``solve``, as is :func:`_initial_step`: compiled apart, they would cost every field's
    first compilation more than sharing them saves.

    Returns
    -------
    (status, h, n_rhs, n_saved)
        ``status`` 4 if ``y`` or ``f0`` is not finite (nothing done after evaluating ``f0``), else 0.
    """
    fill_nan(event_times)
    for j in range(event_states.shape[0]):
        fill_nan(event_states[j])
    for j in range(save_out.shape[0]):
        fill_nan(save_out[j])
    rhs(t0, y, params, f0)
    n_rhs = 1
    if not (all_finite(y) and all_finite(f0)):
        return 4, 0.0, n_rhs, 0
    # A global constant: numba prunes the event code (seconds of compilation) from fields without.
    if HAS_EVENTS:
        events(t0, y, params, event_times, event_states, g0)
    n_saved = 0
    while n_saved < save_at.size and save_at[n_saved] <= t0:
        save_state(save_at[n_saved], y, params, save_out[n_saved])
        n_saved += 1
    if first_step > 0.0:
        h = first_step
    else:
        h = _initial_step(t0, y, f0, params, t1, rtol, atol, error_order, ybuf, fbuf)
        n_rhs += 1
    return 0, min(h, t1 - t0), n_rhs, n_saved


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
def fire_events(t, t_new, y, y_new, h, k, p, params, directions, terminal, event_times, event_states,
                g_old, g_new, g_a, g_scr, bcoef, ybuf, ystar):
    """Record every event that first crosses zero on the accepted step ``(t, t_new]``; return the stop time.

    ``g_old`` holds the event values at ``t``; those at ``t_new`` are written into ``g_new``. Times
    are located on the continuous extension ``(k, p)`` (:func:`numerics._rk_core.dense`, ``bcoef``
    its scratch). After an event fires, all values are recomputed with its record, so events
    defined relative to it see its time and state. Returns ``(t_stop, terminated)``:
    ``(t_new, False)``, or the time of a terminal event and ``True`` (its state left in ``ystar``).
    """
    events(t_new, y_new, params, event_times, event_states, g_new)
    copy_into(g_old, g_a)
    n_ev = directions.size
    ta = t
    while True:
        best = -1
        t_best = math.inf
        for j in range(n_ev):
            if event_times[j] == event_times[j]:
                continue
            if crosses(g_a[j], g_new[j], directions[j]):
                tj = _locate(j, ta, g_a[j], t_new, g_new[j], t, y, h, k, p, params, event_times,
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
        events(t_new, y_new, params, event_times, event_states, g_new)
