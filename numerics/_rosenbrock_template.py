"""Template of the Rosenbrock integrator; :mod:`numerics._stiff_kernels` instantiates it per vector field.

This file is read as text, never imported for use: :mod:`numerics._stiff_kernels` has
:mod:`numerics._kernel_modules` copy it into a generated module with the placeholder line below
replaced by imports of the field's njit functions ``rhs``, ``events`` and ``jac``, the constants
``HAS_EVENTS`` and ``HAS_JAC``, and :func:`~numerics._field_template.start` and
:func:`~numerics._field_template.fire_events` from the field's instance of
:mod:`numerics._field_template`: the set-up and the first step, and the events, are the very same
code as for Dormand-Prince. The method's coefficients are arguments
(:meth:`numerics.rosenbrock.RosenbrockTableau.arrays`); the linear algebra is compiled once in
:mod:`numerics._rosenbrock_core`.

Shape contract as in :mod:`numerics._field_template`, plus ``jac(t, y (n,), params, out (n, n))``
writing ``out[i, j] = ∂f_i/∂y_j``. Kernels never raise; they return the status codes of
:data:`numerics.ode.STATUS`: 0 reached ``t1``, 1 a terminal event fired, 2 ``max_steps`` attempts
made, 3 step size underflow, 4 non-finite rhs or state that shrinking the step did not cure, or a
non-finite Jacobian (or ∂f/∂t) at an accepted point, where no shorter step can help.
"""

import math

import numpy as np
from numba import prange

from numerics._jit import jit, parallel_jit
from numerics._rk_core import EPS, all_finite, combine, copy_into, dense, error_norm, step_to, stop_status
from numerics._rosenbrock_core import factor_iteration_matrix, lu_solve, matrix_finite

rhs = events = jac = observe = start = fire_events = save_state = HAS_EVENTS = HAS_JAC = HAS_OBSERVER = None  # set when generated

# Hairer's RODAS controller (rodas.f): h_new = h clip(0.9 err^(-1/(q+1)), 1/5, 6), lowered to
# Gustafsson's predictive value 0.9 (h/h_acc) (err_acc/err^2)^(1/(q+1)) when that is smaller.
_SAFETY = 0.9
_MIN_FACTOR = 0.2
_MAX_FACTOR = 6.0
# I/(h gamma) - J is singular only when 1/(h gamma) is an eigenvalue of J: another step size avoids it.
_SINGULAR_FACTOR = 0.5


@jit
def _derivatives(t, y, f0, params, jmat, fdt, ytmp, ftmp):
    """Write ``J = ∂f/∂y`` and ``f_t = ∂f/∂t`` at ``(t, y)``, ``f0 = f(t, y)``; return rhs evaluations used.

    ``J`` comes from the field's ``jac`` or, without one, from forward differences with Hairer's
    increments ``sqrt(eps max(1e-5, |y_i|))`` (``n`` evaluations, about half the digits of ``J``:
    enough for the step, which stays of order 4 in the stiff limit only with an exact ``J``).
    ``f_t`` is exactly 0 when ``f(t + τ, y) = f(t, y)`` bit for bit, as for every autonomous field
    (one evaluation); otherwise it comes from the second-order one-sided difference through
    ``t + τ`` and ``t + 2τ``, ``τ = (eps max(1e-5, |t|))^(1/3)`` (error ~ eps^(2/3)): a first-order
    difference leaves an error ~ sqrt(eps) |f|/|f_t| in ``f_t``, which a stiff forced component
    amplifies until the error estimate forces steps 50 times shorter at rtol = 1e-10. Only times
    after ``t`` are used, where the field is defined whenever it is on the step.
    """
    n = y.size
    used = 1
    if HAS_JAC:
        jac(t, y, params, jmat)
    else:
        copy_into(y, ytmp)
        for i in range(n):
            ytmp[i] = y[i] + math.sqrt(EPS * max(1e-5, abs(y[i])))
            delta = ytmp[i] - y[i]  # the increment actually represented
            rhs(t, ytmp, params, ftmp)
            for m in range(n):
                jmat[m, i] = (ftmp[m] - f0[m]) / delta
            ytmp[i] = y[i]
        used += n
    tau = (EPS * max(1e-5, abs(t))) ** (1.0 / 3.0)
    rhs(t + tau, y, params, ftmp)
    flat = True
    for m in range(n):
        if ftmp[m] != f0[m]:
            flat = False
    if flat:
        for m in range(n):
            fdt[m] = 0.0
        return used
    # Lagrange derivative at t through (t, f0), (t + d1, ftmp), (t + d2, fdt), with the increments
    # as represented in floating point.
    d1 = (t + tau) - t
    d2 = (t + 2.0 * tau) - t
    rhs(t + 2.0 * tau, y, params, fdt)
    w0 = -(d1 + d2) / (d1 * d2)
    w1 = d2 / (d1 * (d2 - d1))
    w2 = -d1 / (d2 * (d2 - d1))
    for m in range(n):
        fdt[m] = w0 * f0[m] + w1 * ftmp[m] + w2 * fdt[m]
    return used + 1


@jit
def _stages(t, t_new, y, h, params, f0, fdt, w, piv, a, cc, c, d, u, ytmp, ftmp):
    """Fill the stages ``u`` (s, n) of one step, ``w``/``piv`` the LU factors of ``I/(h gamma) - J``.

    Stage ``i`` solves ``(I/(h gamma) - J) u_i = f(t + c_i h, y + Σ_j a_ij u_j) + Σ_j C_ij u_j / h
    + h d_i f_t``; stage 0 is at ``(t, y)`` itself (``c_0 = 0``), where ``f0`` is known.
    Returns the rhs evaluations spent (``s - 1``).
    """
    s, n = u.shape
    for i in range(s):
        if i == 0:
            copy_into(f0, ftmp)
        else:
            combine(y, u, a[i], i, 1.0, ytmp)
            # c_i = 1 is evaluated at t_new itself, which the last step sets to t1 exactly.
            ti = t_new if c[i] == 1.0 else t + c[i] * h
            rhs(ti, ytmp, params, ftmp)
        for m in range(n):
            acc = 0.0
            for j in range(i):
                acc += cc[i, j] * u[j, m]
            u[i, m] = ftmp[m] + acc / h + h * d[i] * fdt[m]
        lu_solve(w, piv, u[i])
    return s - 1


@jit
def _dense_coefficients(y, y_new, h, u, dd, kd):
    """Write ``kd = ((y_new - y)/h, Σ_j dd_0j u_j / h, Σ_j dd_1j u_j / h)``, the continuous extension.

    In the form of :func:`numerics._rk_core.dense` with :data:`numerics.rosenbrock.DENSE_P`.
    """
    s, n = u.shape
    for m in range(n):
        kd[0, m] = (y_new[m] - y[m]) / h
        acc1 = 0.0
        acc2 = 0.0
        for j in range(s):
            acc1 += dd[0, j] * u[j, m]
            acc2 += dd[1, j] * u[j, m]
        kd[1, m] = acc1 / h
        kd[2, m] = acc2 / h


@jit
def solve(t0, t1, y0, params, rtol, atol, first_step, max_steps, save_at, gamma, a, cc, c, d, mw, e, dd, pd,
          error_order, directions, terminal, save_out, event_times, event_states, y_out):
    """Integrate ``y' = rhs(t, y, params)`` from ``(t0, y0)`` towards ``t1`` with a Rosenbrock method.

    Outputs as :func:`numerics._dopri_template.solve`. The Jacobian is evaluated once per accepted
    point and kept through rejected attempts; each attempt costs one LU decomposition.

    Returns
    -------
    (status, t_last, h_last, n_steps, n_rejected, n_rhs, n_saved, n_jac, n_lu)
    """
    n = y0.size
    s = c.size
    n_ev = directions.size
    u = np.empty((s, n))
    kd = np.empty((3, n))
    jmat = np.empty((n, n))
    w = np.empty((n, n))
    piv = np.empty(n, np.int64)
    y = np.empty(n)
    copy_into(y0, y)
    y_new = np.empty(n)
    f0 = np.empty(n)
    f_new = np.empty(n)
    fdt = np.empty(n)
    ytmp = np.empty(n)
    ftmp = np.empty(n)
    ystar = np.empty(n)
    ybuf = np.empty(n)
    bcoef = np.empty(3)
    g_old = np.empty(n_ev)
    g_new = np.empty(n_ev)
    g_a = np.empty(n_ev)
    g_scr = np.empty(n_ev)
    status, h, n_rhs, n_saved = start(t0, t1, y, f0, params, rtol, atol, first_step, error_order, save_at,
                                      save_out, event_times, event_states, g_old, y_new, ftmp)
    n_steps = 0
    n_rejected = 0
    n_jac = 0
    n_lu = 0
    t = t0
    if status != 0:
        copy_into(y, y_out)
        return status, t, 0.0, n_steps, n_rejected, n_rhs, n_saved, n_jac, n_lu
    alpha = 1.0 / (error_order + 1)
    h_acc = 0.0
    err_acc = 1.0
    have_jac = False
    rejected = False
    nonfinite = False
    while t < t1:
        status = stop_status(t, h, n_steps + n_rejected, max_steps, nonfinite)
        if status != 0:
            break
        if not have_jac:
            n_rhs += _derivatives(t, y, f0, params, jmat, fdt, ytmp, ftmp)
            n_jac += 1
            have_jac = True
            if not (matrix_finite(jmat) and all_finite(fdt)):
                status = 4
                break
        t_new, h = step_to(t, t1, h)
        n_lu += 1
        if not factor_iteration_matrix(jmat, 1.0 / (h * gamma), w, piv):
            n_rejected += 1
            rejected = True
            h *= _SINGULAR_FACTOR
            continue
        n_rhs += _stages(t, t_new, y, h, params, f0, fdt, w, piv, a, cc, c, d, u, ytmp, ftmp)
        combine(y, u, mw, s, 1.0, y_new)
        err = error_norm(y, y_new, u, e, 1.0, rtol, atol) if all_finite(y_new) else math.inf
        if err <= 1.0:
            # f at the new point starts the next step; a non-finite value there rejects this one.
            rhs(t_new, y_new, params, f_new)
            n_rhs += 1
            if not all_finite(f_new):
                err = math.inf
        if not math.isfinite(err):
            n_rejected += 1
            rejected = True
            nonfinite = True
            h *= _MIN_FACTOR
            continue
        nonfinite = False
        if err > 1.0:
            n_rejected += 1
            rejected = True
            h *= min(_MAX_FACTOR, max(_MIN_FACTOR, _SAFETY * err ** (-alpha)))
            continue
        n_steps += 1
        if err == 0.0:
            factor = _MAX_FACTOR
        else:
            factor = min(_MAX_FACTOR, max(_MIN_FACTOR, _SAFETY * err ** (-alpha)))
            if h_acc > 0.0:
                predicted = _SAFETY * (h / h_acc) * (err_acc / (err * err)) ** alpha
                factor = min(factor, min(_MAX_FACTOR, max(_MIN_FACTOR, predicted)))
        h_acc = h
        err_acc = max(1e-2, err)
        if rejected:
            factor = min(factor, 1.0)
        rejected = False
        _dense_coefficients(y, y_new, h, u, dd, kd)
        # The bookkeeping of an accepted step, as in _dopri_template.solve (why it is not shared: there).
        t_stop = t_new
        terminated = False
        if HAS_EVENTS:
            t_stop, terminated = fire_events(t, t_new, y, y_new, h, kd, pd, params, directions, terminal,
                                             event_times, event_states, g_old, g_new, g_a, g_scr, bcoef, ybuf,
                                             ystar)
        while n_saved < save_at.size and save_at[n_saved] <= t_stop:
            ts = save_at[n_saved]
            if ts == t_new:
                save_state(ts, y_new, params, save_out[n_saved])
            elif HAS_OBSERVER:
                dense((ts - t) / h, y, h, kd, pd, bcoef, ybuf)
                observe(ts, ybuf, params, save_out[n_saved])
            else:
                dense((ts - t) / h, y, h, kd, pd, bcoef, save_out[n_saved])
            n_saved += 1
        if terminated:
            t = t_stop
            copy_into(ystar, y)
            status = 1
            break
        t = t_new
        copy_into(y_new, y)
        copy_into(f_new, f0)
        copy_into(g_new, g_old)
        have_jac = False
        h *= factor
    copy_into(y, y_out)
    return status, t, h, n_steps, n_rejected, n_rhs, n_saved, n_jac, n_lu


@parallel_jit
def solve_batch(t0, t1, y0s, params, rtol, atol, first_step, max_steps, save_at, gamma, a, cc, c, d, mw, e,
                dd, pd, error_order, directions, terminal, save_out, event_times, event_states, y_out, status,
                t_last, h_last, counts):
    """Run :func:`solve` on each row of ``y0s``/``params`` in parallel; one output row per point.

    ``counts[i]`` holds ``(n_steps, n_rejected, n_rhs, n_saved, n_jac, n_lu)``.
    """
    for i in prange(y0s.shape[0]):
        st, tl, hl, ns, nr, nf, nv, nj, nl = solve(t0, t1, y0s[i], params[i], rtol, atol, first_step,
                                                   max_steps, save_at, gamma, a, cc, c, d, mw, e, dd, pd,
                                                   error_order, directions, terminal, save_out[i],
                                                   event_times[i], event_states[i], y_out[i])
        status[i] = st
        t_last[i] = tl
        h_last[i] = hl
        counts[i, 0] = ns
        counts[i, 1] = nr
        counts[i, 2] = nf
        counts[i, 3] = nv
        counts[i, 4] = nj
        counts[i, 5] = nl
