"""Tests of the stiff methods of numerics.ode: Rosenbrock RODAS4P and RODAS4 with dense output and events.

References do not share code with what they test:

* Robertson's problem and the (p, g) tail are checked against solutions of the ODE computed once with
  an s = 7 Radau IIA collocation method (order 13, L-stable, stage order 7) in mpmath at 50 digits,
  Newton-solved to 1e-34 with the exact Jacobian, on a geometric grid h = r t with r = 0.1. The grid
  twice as coarse (r = 0.2) agrees with the stored values to 1.5e-15 relative at worst (g at t = 1e4
  and y2 at t = 400, after stiff transients) and to 1e-18 elsewhere, so the stored values are far
  more accurate than the 1e-8 asked of the integrators. :func:`test_references_are_reproduced`
  (slow, about 40 s) repeats that comparison.
* The (p, g) right-hand side of the reference is written here from first principles: head 1's weights
  π_k ∝ u^k (u = e^{-p}) over M lags give L_G4 = ½(g*² - 2g* g [canonical]/Z + g² S/Z²) with the
  geometric sums Z = Σ u^k, S = Σ u^{2k} in closed form (the toolkit sums the derived L_G4 term by
  term), differentiated by SymPy; the start state at t = 2e3 is the run's own (Dormand-Prince).
* Linear systems against ``scipy.linalg.expm``; a stiff forced system against its closed form.
"""

import dataclasses
import math
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given, note
from hypothesis import strategies as st

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics.ode import METHODS, Tolerance, VectorField, integrate, integrate_batch
from numerics.rosenbrock import RODAS4, RODAS4P, RosenbrockTableau

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _stiff_fields  # noqa: E402

ROBERTSON = VectorField(_stiff_fields.robertson, 3, jac=_stiff_fields.robertson_jac,
                        state_names=("y1", "y2", "y3"))
ROBERTSON_FD = VectorField(_stiff_fields.robertson, 3)  # no jac: finite differences
RATES = np.array([0.04, 3e7, 1e4])
# One kernel for every linear test: y' = A y + b cos(ωt), events on y[0] = level and y[1] = 1/2.
FORCED = VectorField(_stiff_fields.forced_linear, 2, _stiff_fields.levels, ("level", "half"), (-1, -1),
                     jac=_stiff_fields.forced_linear_jac)
FORCED_STOP = VectorField(_stiff_fields.forced_linear, 2, _stiff_fields.levels, ("level", "half"), (-1, -1),
                          (True, False), jac=_stiff_fields.forced_linear_jac)
NEVER = 1e300  # a level y[0] never reaches from below
STIFF = ("rodas4p", "rodas4")  # one kernel serves both: they differ only in coefficients


def forced_params(A, b=None, omega=0.0, level=NEVER):
    """Return the parameters of :data:`FORCED` for ``y' = A y + b cos(ωt)`` and ``level``."""
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    return np.concatenate([A.ravel(), np.zeros(n) if b is None else b, [omega, level]])


# ---- the references (values; the code that made them is at the end of the file) ---------------

#: Robertson (k1, k2, k3) = (0.04, 3e7, 1e4) from y = (1, 0, 0) at t = 0
ROBERTSON_REFERENCE = {
    0.4: ("0.9851721138609898624150529", "3.386395378974904136449884e-5", "0.01479402218522038854358257"),
    4e2: ("0.4505186684711024244776358", "3.222901441674611303557203e-6", "0.5494781086274559009110606"),
    4e10: ("5.20834517679923919877138e-8", "2.083338177925489034960963e-13", "0.9999999479163398981898155"),
    1e11: ("2.083340149701294230572549e-8", "8.333360770334783400647659e-14", "0.9999999791665151693793543"),
}
#: the (p, g) flow at alpha* = 1, sigma = 0.01 (canonical reading, eq4 start): {L: {t: (p, g)}} from
#: the run's Dormand-Prince state at t = 2e3 ("start")
PG_REFERENCE = {
    40: {"start": (3.452284832491391, 0.5158408268911536),
         1e4: ("4.258238098834826663814146", "0.5070739673524443619422166"),
         1e6: ("6.561176953488243664341861", "0.5007071104840565535646553"),
         1e8: ("8.863766722831339060896078", "0.5000707106826346832929084")},
    1000: {"start": (3.452193418154026, 0.5158422758248685),
           1e4: ("4.25821985871459762201244", "0.5070740963971096062053447"),
           1e6: ("6.561176771210309800694085", "0.500707110612947332798747"),
           1e8: ("8.863766721008576196734241", "0.5000707106827635721007214")},
}


# ---- the method's data -------------------------------------------------------------------------


def test_tableau_is_checked_against_the_order_conditions():
    for tableau in (RODAS4, RODAS4P):
        assert tableau.stages == 6 and tableau.order == 4 and tableau.error_order == 3
    fields = ("name", "gamma", "a", "C", "c", "d", "m", "m_hat", "dense", "order", "error_order")
    args = {f: getattr(RODAS4, f) for f in fields}
    a = RODAS4.a.copy()
    a[3, 1] += 1e-9
    with pytest.raises(InvalidArgument, match="row sums of alpha = c fails"):
        RosenbrockTableau(**{**args, "a": a})
    m = RODAS4.m.copy()
    m[2] += 1e-7
    with pytest.raises(InvalidArgument, match="condition sum b"):
        RosenbrockTableau(**{**args, "m": m})
    with pytest.raises(InvalidArgument, match="strictly lower triangular"):
        RosenbrockTableau(**{**args, "C": RODAS4.C + np.eye(6)})


def test_bad_method_is_refused_with_the_choices():
    choices = r"is not one of 'dopri5', 'rodas4p', 'rodas4'; use 'dopri5'"
    with pytest.raises(InvalidArgument, match=r"method='radau5' " + choices):
        integrate(ROBERTSON, [1.0, 0, 0], (0, 1), RATES, tol=Tolerance(1e-6, 1e-9), method="radau5")
    with pytest.raises(InvalidArgument, match=r"method='RODAS4' is not one of"):
        integrate(ROBERTSON, [1.0, 0, 0], (0, 1), RATES, tol=Tolerance(1e-6, 1e-9), method="RODAS4")
    with pytest.raises(InvalidArgument, match=r"method=None is not one of"):
        integrate_batch(ROBERTSON, [[1.0, 0, 0]], [RATES], (0, 1), tol=Tolerance(1e-6, 1e-9), method=None)
    assert METHODS == ("dopri5", "rodas4p", "rodas4")


def test_jac_must_write_the_whole_matrix():
    broken = VectorField(_stiff_fields.robertson, 3, jac=_stiff_fields.partial_jac)
    with pytest.raises(InvalidArgument, match=r"field\.jac does not write exactly the n_state x n_state"):
        integrate(broken, [1.0, 0, 0], (0, 1), RATES, tol=Tolerance(1e-6, 1e-9), method="rodas4p")
    with pytest.raises(InvalidArgument, match=r"field\.jac=.* is not a numba njit function"):
        VectorField(_stiff_fields.robertson, 3, jac=lambda t, y, p, out: None)


# ---- Robertson ---------------------------------------------------------------------------------


def robertson(field, t_end, rtol=1e-10, method="rodas4p", **kw):
    """Integrate Robertson's problem to ``t_end``, saving at the reference times before it."""
    times = [t for t in ROBERTSON_REFERENCE if t <= t_end]
    # relative control of every component: y2 ~ 1e-13 at the end
    tol = Tolerance(rtol, np.array([1e-20, 1e-24, 1e-20]))
    return integrate(field, [1.0, 0.0, 0.0], (0.0, t_end), RATES, tol=tol, save_at=times, method=method, **kw)


@pytest.mark.parametrize("method", STIFF)
def test_robertson_to_1e11_matches_the_reference_and_conserves_mass(method):
    sol = robertson(ROBERTSON, 1e11, method=method)
    ref = np.array([[float(v) for v in ROBERTSON_REFERENCE[t]] for t in sol.t])
    rel = np.abs(sol.y / ref - 1)
    # Local tolerance 1e-10 (relative); 1e4-2e4 steps over 17 decades of t, mostly on the slow
    # manifold where errors are damped: the global error stays below 100 rtol (measured 4e-9).
    assert rel.max() < 1e-8, f"{method}: relative errors {rel}, {sol.n_steps} steps"
    # Rosenbrock stages conserve linear invariants (w'f = 0 and w'J = 0 give w'u_i = 0) to rounding.
    assert np.abs(sol.y.sum(axis=1) - 1).max() < 1e-13
    assert sol.status == "success" and sol.t_final == 1e11
    # one Jacobian per accepted step, one LU per attempt; f_t and f(t_new) on top of 5 stage values
    assert sol.n_jac == sol.n_steps and sol.n_lu == sol.n_steps + sol.n_rejected
    assert sol.n_rhs >= 7 * sol.n_steps


def test_robertson_with_a_finite_difference_jacobian():
    sol = robertson(ROBERTSON_FD, 4e2, rtol=1e-8)
    ref = np.array([[float(v) for v in ROBERTSON_REFERENCE[t]] for t in sol.t])
    assert np.abs(sol.y / ref - 1).max() < 1e-6
    # three extra rhs evaluations per Jacobian (one column each)
    assert sol.n_rhs >= 10 * sol.n_jac


def test_failures_raise_numerical_trouble_with_the_time_and_state():
    with pytest.raises(NumericalTrouble, match=r"max_steps=5 steps attempted by t=.*\(state y1="):
        robertson(ROBERTSON, 1e11, max_steps=5)
    # k2 < 0 turns y2' = ... + 3e7 y2² into a blow-up at t = 0.00143
    with pytest.raises(NumericalTrouble, match=r"step size underflow at t=0\.001433.*blows up near"):
        integrate(ROBERTSON, [1.0, 0.0, 0.0], (0.0, 10.0), [0.04, -3e7, 1e4], tol=Tolerance(1e-8, 1e-12),
                  method="rodas4p")


# ---- events on the dense output ----------------------------------------------------------------

STIFF_FORCING = forced_params([[-1e4, 0.0], [0.0, -1.0]], b=[1e4, 0.0], omega=1.0, level=0.0)
#: y0 = (1e8 cos t + 1e4 sin t + e^{-1e4 t})/(1e8 + 1) falls through 0 here; y1 = e^{-t} falls
#: through 1/2 at ln 2
LEVEL_TIME = math.pi / 2 + math.atan(1e-4)


def test_events_are_located_on_the_dense_output_of_a_stiff_system():
    tol = Tolerance(1e-10, 1e-12)
    sol = integrate(FORCED, [1.0, 1.0], (0.0, 3.0), STIFF_FORCING, tol=tol, method="rodas4p")
    assert sol.event_times["level"] == pytest.approx(LEVEL_TIME, abs=1e-9)
    assert sol.event_times["half"] == pytest.approx(math.log(2), abs=1e-9)
    assert sol.event_states["level"][0] == pytest.approx(0.0, abs=1e-9)
    assert sol.event_states["half"][1] == pytest.approx(0.5, abs=1e-9)
    # steps are many times larger than the stiff time scale 1e-4
    assert sol.n_steps < 300, sol.n_steps
    stop = integrate(FORCED_STOP, [1.0, 1.0], (0.0, 3.0), STIFF_FORCING, tol=tol, method="rodas4p")
    assert stop.status == "terminated by event level"
    assert stop.t_final == stop.event_times["level"] == sol.event_times["level"]
    np.testing.assert_array_equal(stop.y_final, sol.event_states["level"])


def test_rodas4p_keeps_its_order_on_a_stiff_forced_component_where_rodas4_does_not():
    """Compare the methods where y0 is slaved to cos t at rate 1e4 (Prothero-Robinson).

    RODAS4's local error there falls only like h/1e4, so tight tolerances cost it tens of times the
    steps of RODAS4P, which keeps order 4 (15450 against 242 steps at rtol = 1e-10).
    """
    tol = Tolerance(1e-10, 1e-12)
    steps = {m: integrate(FORCED, [1.0, 1.0], (0.0, 3.0), STIFF_FORCING, tol=tol, method=m).n_steps
             for m in STIFF}
    assert steps["rodas4p"] * 20 < steps["rodas4"], steps


# ---- linear systems ----------------------------------------------------------------------------


@st.composite
def stable_systems(draw):
    """Draw A = -Q diag(λ) Q' + K - K' (A + A' < 0: contractive, λ over up to five decades), y0 and T."""
    n = draw(st.integers(2, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    lam = 10.0 ** rng.uniform(-1, draw(st.floats(0.0, 4.0)), n)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    k = draw(st.floats(0.0, 2.0)) * rng.standard_normal((n, n))
    A = -q @ np.diag(lam) @ q.T + (k - k.T)
    y0 = rng.uniform(-1, 1, n)
    return A, y0, draw(st.floats(0.1, 10.0))


@given(stable_systems(), st.sampled_from(STIFF))
@example((np.array([[-1e4, 1.0], [0.0, -0.1]]), np.array([1.0, -1.0]), 5.0), "rodas4p")
def test_linear_systems_match_expm_at_saved_times(system, method):
    A, y0, T = system
    times = np.linspace(0.0, T, 7)
    # same functions as FORCED, so the same kernels, whatever n
    field = VectorField(_stiff_fields.forced_linear, A.shape[0], _stiff_fields.levels, ("level", "half"),
                        (-1, -1), jac=_stiff_fields.forced_linear_jac)
    sol = integrate(field, y0, (0.0, T), forced_params(A), tol=Tolerance(1e-9, 1e-12), save_at=times,
                    method=method)
    exact = np.array([scipy.linalg.expm(A * t) @ y0 for t in times])
    note(f"steps {sol.n_steps}, rejected {sol.n_rejected}, error {np.abs(sol.y - exact).max():.3g}")
    # saved times lie inside steps: this checks the order-3 continuous extension as much as the steps
    assert np.abs(sol.y - exact).max() <= 1e-7


def test_batch_is_bit_identical_to_serial_runs():
    rng = np.random.default_rng(3)
    params = np.array([forced_params([[-10.0**e, 1.0], [0.0, -1.0]], b=[1.0, 0.0], omega=2.0, level=0.3)
                       for e in (1, 3, 5)])
    y0s = rng.uniform(0.5, 1.0, (3, 2))
    tol = Tolerance(1e-9, 1e-12)
    batch = integrate_batch(FORCED, y0s, params, (0.0, 4.0), tol=tol, save_at=[1.0, 2.0], method="rodas4p")
    for i in range(3):
        one = integrate(FORCED, y0s[i], (0.0, 4.0), params[i], tol=tol, save_at=[1.0, 2.0], method="rodas4p")
        np.testing.assert_array_equal(batch.y_final[i], one.y_final)
        np.testing.assert_array_equal(batch.y[i], one.y)
        np.testing.assert_array_equal(batch.event_times[i], list(one.event_times.values()))
        assert (batch.n_steps[i], batch.n_rhs[i], batch.n_jac[i], batch.n_lu[i]) == (
            one.n_steps, one.n_rhs, one.n_jac, one.n_lu)


# ---- compilation -------------------------------------------------------------------------------


def test_kernels_of_importable_fields_are_cached_across_processes():
    from numerics._ode_kernels import is_cached
    from numerics._ode_kernels import kernels as dopri_kernels
    from numerics._stiff_kernels import kernels

    built = kernels(FORCED.rhs, FORCED.events, FORCED.jac)
    assert is_cached(built)
    source = Path(built.__file__).read_text()
    assert "HAS_JAC = True" in source
    # the set-up and the events come from the field's shared module, the one Dormand-Prince imports
    shared = re.search(r"^from (field_forced_linear_\w+) import start, fire_events, save_state$", source, re.MULTILINE)
    assert shared is not None
    dopri_source = Path(dopri_kernels(FORCED.rhs, FORCED.events).__file__).read_text()
    assert f"from {shared[1]} import start, fire_events, save_state" in dopri_source
    integrate(FORCED, [1.0, 1.0], (0.0, 1.0), STIFF_FORCING, tol=Tolerance(1e-8, 1e-10), method="rodas4p")
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import _stiff_fields as F
        from numerics._stiff_kernels import kernels
        from numerics.ode import Tolerance, VectorField, integrate
        field = VectorField(F.forced_linear, 2, F.levels, ("a", "b"), jac=F.forced_linear_jac)
        sol = integrate(field, [1.0, 1.0], (0, 1), {STIFF_FORCING.tolist()!r}, tol=Tolerance(1e-8, 1e-10),
                        method="rodas4p")
        stats = kernels(F.forced_linear, F.levels, F.forced_linear_jac).solve.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), sol.y_final[1])
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=str(Path(__file__).parents[2]))
    hits, misses, y1 = run.stdout.split()
    assert (int(hits), int(misses)) == (1, 0), run.stderr
    assert abs(float(y1) - math.exp(-1)) < 1e-7


def test_field_with_a_jac_defined_in_a_function_falls_back_to_uncached_kernels():
    """The Rosenbrock kernel is compiled in memory, around the field's shared module from the disk cache.

    Its results are those of the cached kernel bit for bit. (A field whose rhs is a closure has all
    its modules in memory: test_ode covers that path of the same loader.)
    """
    from numerics._kernel_modules import FIELD, instantiate
    from numerics._ode_kernels import is_cached
    from numerics._stiff_kernels import kernels

    @numba.njit(error_model="numpy")  # no cache=True: a closure is what this test is about
    def local_jac(t, y, p, out):
        _stiff_fields.forced_linear_jac(t, y, p, out)

    built = kernels(FORCED.rhs, FORCED.events, local_jac)
    assert not is_cached(built)
    shared = instantiate(FIELD, {"rhs": FORCED.rhs, "events": FORCED.events, "observe": None})
    assert is_cached(shared)
    assert built.start is shared.start and built.fire_events is shared.fire_events
    local = dataclasses.replace(FORCED, jac=local_jac)
    params = forced_params([[-100.0, 1.0], [0.0, -1.0]], b=[1.0, 0.0], omega=2.0, level=0.3)
    tol = Tolerance(1e-9, 1e-12)
    one, other = (integrate(f, [1.0, 1.0], (0.0, 3.0), params, tol=tol, save_at=[0.5, 2.0], method="rodas4p")
                  for f in (FORCED, local))
    np.testing.assert_array_equal(one.y, other.y)
    assert one.event_times == other.event_times and (one.n_steps, one.n_rhs) == (other.n_steps, other.n_rhs)


# ---- the (p, g) tail of the 4-gram flow --------------------------------------------------------


@pytest.mark.parametrize("L", sorted(PG_REFERENCE))
def test_four_gram_tail_matches_the_reference(L):
    from numerics.models.induction_head.four_gram import EARLY_WINDOW, four_gram_run

    ref = PG_REFERENCE[L]
    times = sorted(t for t in ref if t != "start")
    run = four_gram_run(L, 1.0, 0.01, horizon=1e8, n_save=50, extra_times=times)
    start = int(np.flatnonzero(run.t == EARLY_WINDOW)[0])
    # the reference starts from this Dormand-Prince state: it must still be the run's
    np.testing.assert_allclose([run.p[start], run.g[start]], ref["start"], rtol=1e-12, atol=0)
    for t in times:
        k = int(np.flatnonzero(run.t == t)[0])
        p_ref, g_ref = (float(v) for v in ref[t])
        errors = (abs(run.p[k] / p_ref - 1), abs(run.g[k] / g_ref - 1))
        # The tail runs at rtol/10 = 1e-11 on a dissipative flow (g relaxes at rate ~1, p creeps like
        # ln t / 2), so its steps stay near 1e-11 after ~900 steps; 1e4 and 1e6 come from the order-3
        # continuous extension, a few times less accurate (measured 1.2e-10 at worst). The run's
        # rtol = 1e-10 is the accuracy promised: 1e-9 leaves a margin of 8.
        assert max(errors) < 1e-9, f"t={t:g}: relative errors of (p, g) {errors}"


def test_four_gram_hitting_time_pending_at_the_switch_is_found_on_the_tail():
    """T_I at alpha* = 0.1 lies near t = 6050, after the Dormand-Prince window: Rodas4P finds it."""
    from numerics.models.induction_head.four_gram import EARLY_WINDOW, four_gram_flow, four_gram_run

    run = four_gram_run(40, 0.1, 0.01, horizon=1e4, n_save=20)
    assert run.events["T_I"] > EARLY_WINDOW
    # the explicit method run through at a tolerance 100 times tighter, as the reference (~3e4 steps)
    sol = integrate(four_gram_flow(), [0.01, 0.01], (0.0, 7e3), [40.0, 0.1, run.loss0],
                    tol=Tolerance(1e-12, 1e-15), max_steps=10**6)
    assert run.events["T_I"] == pytest.approx(sol.event_times["T_I"], rel=1e-9)
    state = run.event_states["T_I"]
    np.testing.assert_allclose([state["p"], state["g"]], sol.event_states["T_I"], rtol=1e-9)


# ---- how the references were computed ----------------------------------------------------------


def radau_iia(s):
    """Return the nodes c and the matrix A of the s-stage Radau IIA method, in mpmath's precision.

    Collocation at the zeros of d^{s-1}/dx^{s-1} x^{s-1}(x-1)^s; A from Σ_j a_ij c_j^(k-1) = c_i^k / k.
    """
    import mpmath as mp
    import sympy as sp

    x = sp.Symbol("x")
    coeffs = [mp.mpf(int(v)) for v in sp.Poly(sp.diff(x ** (s - 1) * (x - 1) ** s, x, s - 1), x).all_coeffs()]
    c = sorted(mp.re(r) for r in mp.polyroots(coeffs, maxsteps=200, extraprec=200))
    vander = mp.matrix([[cj**k for cj in c] for k in range(s)])
    rows = [mp.lu_solve(vander, mp.matrix([ci ** (k + 1) / (k + 1) for k in range(s)])) for ci in c]
    return c, [[rows[i][j] for j in range(s)] for i in range(s)]


def radau_solve(f, jac, y0, grid, s=7):
    """Return y at the points of ``grid`` (``y0`` at grid[0]): one collocation step per interval."""
    import itertools

    import mpmath as mp

    _, A = radau_iia(s)
    n = len(y0)
    y = list(y0)
    out = [list(y)]
    for t_a, t_b in itertools.pairwise(grid):
        h = t_b - t_a
        z = [[mp.mpf(0)] * n for _ in range(s)]
        for _ in range(60):  # Newton with the exact Jacobian on Z_i = h Σ_j a_ij f(y + Z_j)
            points = [[y[m] + z[i][m] for m in range(n)] for i in range(s)]
            fs, js = [f(v) for v in points], [jac(v) for v in points]
            residual = mp.matrix([z[i][m] - h * sum(A[i][j] * fs[j][m] for j in range(s))
                                  for i in range(s) for m in range(n)])
            newton = mp.matrix(s * n, s * n)
            for i in range(s):
                for m in range(n):
                    newton[i * n + m, i * n + m] = 1
                    for j in range(s):
                        for k in range(n):
                            newton[i * n + m, j * n + k] -= h * A[i][j] * js[j][m][k]
            dz = mp.lu_solve(newton, residual)
            size = max(abs(dz[i * n + m]) / (abs(y[m]) + abs(z[i][m]) + mp.mpf(10) ** -45)
                       for i in range(s) for m in range(n))
            z = [[z[i][m] - dz[i * n + m] for m in range(n)] for i in range(s)]
            if size < mp.mpf(10) ** -34:
                break
        else:
            msg = f"Newton did not converge on [{t_a}, {t_b}]"
            raise RuntimeError(msg)
        y = [y[m] + z[s - 1][m] for m in range(n)]
        out.append(list(y))
    return out


def geometric_grid(t0, first, stops, ratio):
    """Return t0, t0 + first (if given), then steps h = ratio t up to and through each of ``stops``."""
    import mpmath as mp

    grid = [mp.mpf(t0), mp.mpf(t0) + mp.mpf(first)] if first else [mp.mpf(t0)]
    for stop in stops:
        while grid[-1] < stop:
            grid.append(min(grid[-1] * (1 + mp.mpf(ratio)), mp.mpf(stop)))
    return grid


def robertson_reference(ratio):
    """Return Robertson's solution at the times of :data:`ROBERTSON_REFERENCE` on the grid ``ratio``."""
    import mpmath as mp

    with mp.workdps(50):
        k1, k2, k3 = mp.mpf("0.04"), mp.mpf("3e7"), mp.mpf("1e4")

        def f(y):
            r1, r2, r3 = k1 * y[0], k2 * y[1] ** 2, k3 * y[1] * y[2]
            return [-r1 + r3, r1 - r2 - r3, r2]

        def jac(y):
            return [[-k1, k3 * y[2], k3 * y[1]],
                    [k1, -2 * k2 * y[1] - k3 * y[2], -k3 * y[1]],
                    [0, 2 * k2 * y[1], 0]]

        times = sorted(ROBERTSON_REFERENCE)
        stops = [mp.mpf(repr(t)) for t in times]
        grid = geometric_grid(0, "1e-6", stops, ratio)
        ys = radau_solve(f, jac, [mp.mpf(1), mp.mpf(0), mp.mpf(0)], grid)
        return {t: tuple(mp.nstr(v, 25) for v in ys[grid.index(stop)])
                for t, stop in zip(times, stops, strict=True)}


def four_gram_reference(L, start, times, ratio, alpha=1.0, canonical=True):
    """Return (p, g) at ``times`` from ``start`` = (p, g) at t = 2e3 (closed form of the module docstring)."""
    import mpmath as mp
    import sympy as sp

    p, g = sp.symbols("p g")
    u = sp.exp(-p)
    M = L - 2 if canonical else L - 3  # lags 0..L-3 (canonical) or 1..L-3 (literal, no cross term)
    Z, S = (1 - u**M) / (1 - u), (1 - u ** (2 * M)) / (1 - u**2)
    gstar = sp.nsimplify(alpha) / (1 + sp.nsimplify(alpha))
    loss = (gstar**2 - (2 * gstar * g / Z if canonical else 0) + g**2 * S / Z**2) / 2
    flow = [-sp.diff(loss, p), -sp.diff(loss, g)]
    f = sp.lambdify((p, g), flow, "mpmath")
    J = sp.lambdify((p, g), [[sp.diff(e, v) for v in (p, g)] for e in flow], "mpmath")
    with mp.workdps(50):
        stops = [mp.mpf(repr(t)) for t in times]
        grid = geometric_grid(2000, None, stops, ratio)
        ys = radau_solve(lambda y: f(*y), lambda y: J(*y), [mp.mpf(repr(v)) for v in start], grid)
        return {t: tuple(mp.nstr(v, 25) for v in ys[grid.index(stop)])
                for t, stop in zip(times, stops, strict=True)}


@pytest.mark.slow
def test_references_are_reproduced():
    """Recompute the references on the grid twice as coarse (r = 0.2): agreement to 1e-14 (about 40 s)."""
    import mpmath as mp

    def agree(values, stored):
        return all(abs(mp.mpf(a) / mp.mpf(b) - 1) < 1e-14 for a, b in zip(values, stored, strict=True))

    for t, values in robertson_reference(0.2).items():
        assert agree(values, ROBERTSON_REFERENCE[t]), (t, values)
    for L, ref in PG_REFERENCE.items():
        times = sorted(t for t in ref if t != "start")
        for t, values in four_gram_reference(L, ref["start"], times, 0.2).items():
            assert agree(values, ref[t]), (L, t, values)
