"""Tests of numerics.ode: Dormand-Prince 5(4) with dense output, events and batch integration."""

import importlib
import importlib.util
import math
import re
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.linalg
from hypothesis import example, given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit
from numerics._ode_kernels import _generated_source, is_cached, kernels
from numerics.ode import Tolerance, VectorField, integrate, integrate_batch
from numerics.tableau import DOPRI5, ButcherTableau

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import _fields  # noqa: E402

# One field per compiled kernel: `terminal` and the directions are data, not code, so the
# variants below share kernels.
LEVEL = VectorField(_fields.riccati, 1, _fields.level_events, ("level", "relative"), (-1, -1))
LOGISTIC = VectorField(_fields.riccati, 1, _fields.level_events, ("half", "relative"), (1, -1))
LOGISTIC_STOP = VectorField(
    _fields.riccati, 1, _fields.level_events, ("half", "relative"), (1, -1), (True, False)
)
PLANE = VectorField(_fields.linear, 2, _fields.first_component, ("x_up",), (1,), state_names=("x", "v"))
SCALAR = VectorField(_fields.riccati, 1)  # only for invalid arguments: never reaches a kernel
NEVER = [-1.0, 0.5]  # parameters of level_events that never fire for y > 0
OSCILLATOR = [0.0, 1.0, -1.0, 0.0]  # x' = v, v' = -x


def logistic(t, r, K, y0):
    return K / (1.0 + (K / y0 - 1.0) * np.exp(-r * t))


# ---- the tableau --------------------------------------------------------------------------------


def test_tableau_rejects_inconsistent_rows():
    rows = [list(r) for r in DOPRI5.a]
    rows[3][0] += Fraction(1, 10**6)
    with pytest.raises(InvalidArgument, match=r"sum\(a\[3\]\)"):
        ButcherTableau(DOPRI5.name, DOPRI5.c, rows, DOPRI5.b, DOPRI5.b_hat, DOPRI5.dense, 5, 4)
    with pytest.raises(InvalidArgument, match="sum\\(b_hat\\)"):
        ButcherTableau(DOPRI5.name, DOPRI5.c, DOPRI5.a, DOPRI5.b, (*DOPRI5.b_hat[:-1], 0), DOPRI5.dense, 5, 4)


def _one_step(h, weights):
    """``1 + h * weights @ k`` for the stages ``k`` of one step of y' = -y from y = 1."""
    a, _, _, c, _ = DOPRI5.arrays()
    k = np.zeros(len(c))
    for i in range(len(c)):
        k[i] = -(1.0 + h * a[i, :i] @ k[:i])
    return 1.0 + h * weights @ k


@pytest.mark.parametrize(("which", "order"), [("b", 5), ("b_hat", 4), ("dense", 4)])
def test_tableau_local_error_orders(which, order):
    """A step of order p has local error O(h^(p+1)) on y' = -y; the dense output is tried at theta = 0.3."""
    _, b, e, _, p = DOPRI5.arrays()
    theta = {"b": 1.0, "b_hat": 1.0, "dense": 0.3}[which]
    weights = {"b": b, "b_hat": b - e, "dense": p @ theta ** np.arange(1, p.shape[1] + 1)}[which]
    hs = np.array([0.4, 0.2, 0.1, 0.05])
    errors = [abs(_one_step(h, weights) - math.exp(-theta * h)) for h in hs]
    slope = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert order + 0.7 < slope < order + 1.5


# ---- accuracy -----------------------------------------------------------------------------------


def test_exponential_decay_converges_at_fifth_order():
    rtols = np.logspace(-4, -11, 8)
    n_rhs, errors = [], []
    for rtol in rtols:
        sol = integrate(LEVEL, [1.0], (0.0, 10.0), [-1.0, 0.0, *NEVER], tol=Tolerance(rtol, rtol * 1e-6))
        n_rhs.append(sol.n_rhs)
        errors.append(abs(sol.y_final[0] / math.exp(-10.0) - 1.0))
        assert sol.status == "success" and sol.t_final == 10.0
    assert max(errors[i] / rtols[i] for i in range(len(rtols))) < 10
    slope = np.polyfit(np.log(n_rhs), np.log(errors), 1)[0]
    assert 4.0 < -slope < 6.5


def test_logistic_solution_and_half_time():
    r, K, y0 = 1.5, 2.0, 0.1
    ts = np.linspace(0.0, 8.0, 33)
    sol = integrate(
        LOGISTIC, [y0], (0.0, 8.0), [r, -r / K, K / 2, 0.5], tol=Tolerance(1e-10, 1e-12), save_at=ts
    )
    np.testing.assert_allclose(sol.y[:, 0], logistic(ts, r, K, y0), rtol=2e-9)
    t_half = math.log((K - y0) / y0) / r
    assert abs(sol.event_times["half"] / t_half - 1.0) < 1e-9
    assert abs(sol.event_states["half"][0] - K / 2) < 1e-9
    assert math.isnan(sol.event_times["relative"])


@pytest.mark.parametrize("rtol", [1e-6, 1e-9, 1e-12])
def test_oscillator_energy_and_dense_output_over_ten_periods(rtol):
    ts = np.linspace(0.0, 20 * np.pi, 1001)
    sol = integrate(PLANE, [1.0, 0.0], (0.0, 20 * np.pi), OSCILLATOR, tol=Tolerance(rtol, rtol), save_at=ts)
    # The global error of a non-symplectic method grows about linearly: ~ rtol per period here.
    # Save times other than t1 fall strictly inside steps, so the states come from the dense output.
    assert np.abs(0.5 * (sol.y**2).sum(axis=1) - 0.5).max() < 10 * 10 * rtol
    assert np.abs(sol.y - np.c_[np.cos(ts), -np.sin(ts)]).max() < 10 * 10 * rtol


@pytest.mark.parametrize("phase", [0.0, 1.0, 2.5, 4.0, 6.0])
def test_upward_zero_crossing_of_x(phase):
    """X = cos(t + phase) first crosses 0 upwards at t = 3 pi/2 - phase (mod 2 pi)."""
    y0 = [math.cos(phase), -math.sin(phase)]
    sol = integrate(PLANE, y0, (0.0, 10.0), OSCILLATOR, tol=Tolerance(1e-11, 1e-13))
    expected = (1.5 * math.pi - phase) % (2 * math.pi)
    assert abs(sol.event_times["x_up"] - expected) < 1e-9
    assert abs(sol.event_states["x_up"][0]) < 1e-9 and sol.event_states["x_up"][1] > 0


# ---- events -------------------------------------------------------------------------------------


def test_event_relative_to_an_earlier_event():
    """Y' = -y: 'level' at y = 0.8, then 'relative' when y <= 0.5 * y(T_level), i.e. ln 2 later."""
    sol = integrate(LEVEL, [1.0], (0.0, 5.0), [-1.0, 0.0, 0.8, 0.5], tol=Tolerance(1e-11, 1e-14))
    t_level = math.log(1 / 0.8)
    assert abs(sol.event_times["level"] - t_level) < 1e-9
    assert abs(sol.event_times["relative"] - (t_level + math.log(2))) < 1e-9
    np.testing.assert_allclose(sol.event_states["relative"], [0.4], rtol=1e-9)


def test_event_armed_on_its_fired_side_does_not_fire():
    """Y <= 1.1 * y(T_level) holds already when 'level' fires: no crossing, so no hitting time."""
    sol = integrate(LEVEL, [1.0], (0.0, 5.0), [-1.0, 0.0, 0.8, 1.1], tol=Tolerance(1e-10, 1e-13))
    assert not math.isnan(sol.event_times["level"])
    assert math.isnan(sol.event_times["relative"])


def test_terminal_event_stops_integration():
    r, K, y0 = 1.5, 2.0, 0.1
    t_half = math.log((K - y0) / y0) / r
    ts = np.linspace(0.0, 8.0, 17)
    sol = integrate(
        LOGISTIC_STOP, [y0], (0.0, 8.0), [r, -r / K, K / 2, 0.5], tol=Tolerance(1e-10, 1e-12), save_at=ts
    )
    assert sol.status == "terminated by event half"
    assert abs(sol.t_final / t_half - 1.0) < 1e-9
    assert abs(sol.y_final[0] - K / 2) < 1e-9
    np.testing.assert_array_equal(sol.t, ts[ts <= sol.t_final])


# ---- batch --------------------------------------------------------------------------------------


def _batch_inputs():
    r = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 0.7, 1.2])
    K = np.array([2.0, 1.0, 3.0, 2.5, 1.5, 4.0, 2.0])
    y0s = np.array([[0.1], [0.2], [0.05], [0.3], [0.1], [0.5], [0.01]])
    params = np.c_[r, -r / K, K / 2, np.full(r.size, 0.5)]
    return y0s, params


def test_batch_is_bit_identical_to_single_runs_at_any_thread_count():
    y0s, params = _batch_inputs()
    ts = np.linspace(0.0, 6.0, 13)
    tol = Tolerance(1e-9, 1e-12)
    singles = [
        integrate(LOGISTIC_STOP, y0, (0.0, 6.0), p, tol=tol, save_at=ts)
        for y0, p in zip(y0s, params, strict=True)
    ]
    before = numba.get_num_threads()
    try:
        # NUMBA_NUM_THREADS caps set_num_threads; it is the CPU count unless set.
        for threads in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(threads)
            batch = integrate_batch(LOGISTIC_STOP, y0s, params, (0.0, 6.0), tol=tol, save_at=ts)
            for i, one in enumerate(singles):
                assert batch.y_final[i].tobytes() == one.y_final.tobytes()
                assert batch.t_final[i] == one.t_final
                assert batch.event_times[i].tobytes() == np.array(list(one.event_times.values())).tobytes()
                assert batch.event_states[i, 0].tobytes() == one.event_states["half"].tobytes()
                assert batch.y[i, : len(one.t)].tobytes() == one.y.tobytes()
                assert np.isnan(batch.y[i, len(one.t) :]).all()
                assert (batch.n_steps[i], batch.n_rejected[i], batch.n_rhs[i]) == (
                    one.n_steps,
                    one.n_rejected,
                    one.n_rhs,
                )
                assert batch.status[i] == (1 if one.status.startswith("terminated") else 0)
    finally:
        numba.set_num_threads(before)


def test_batch_failure_raises_with_point_or_is_recorded():
    y0s, params = _batch_inputs()
    params[3] = [0.0, 1.0, 10.0, 0.5]  # y' = y^2 from y0 = 0.3 blows up at t = 1/0.3
    y0s[3] = 0.3
    tol = Tolerance(1e-8, 1e-10)
    with pytest.raises(NumericalTrouble, match=r"point 3 of 7 \(params="):
        integrate_batch(LOGISTIC, y0s, params, (0.0, 6.0), tol=tol)
    batch = integrate_batch(LOGISTIC, y0s, params, (0.0, 6.0), tol=tol, on_error="record")
    assert batch.status.tolist() == [0, 0, 0, 3, 0, 0, 0]
    assert batch.status_text(3) == "step size underflow"
    assert np.isnan(batch.y_final[3]).all() and np.isfinite(np.delete(batch.y_final, 3, axis=0)).all()
    assert abs(batch.t_final[3] - 1 / 0.3) < 1e-3
    assert batch.ok.tolist() == [True, True, True, False, True, True, True]


# ---- errors -------------------------------------------------------------------------------------

TOL = Tolerance(1e-8, 1e-10)
GOOD = {"field": SCALAR, "y0": [1.0], "t_span": (0.0, 1.0), "params": [-1.0, 0.0], "tol": TOL}


def _call(**changes):
    kwargs = {**GOOD, **changes}
    return integrate(
        kwargs.pop("field"), kwargs.pop("y0"), kwargs.pop("t_span"), kwargs.pop("params"), **kwargs
    )


def _batch(**changes):
    kwargs = {
        "field": SCALAR,
        "y0s": [[1.0]],
        "params": [[-1.0, 0.0]],
        "t_span": (0.0, 1.0),
        "tol": TOL,
        **changes,
    }
    return integrate_batch(
        kwargs.pop("field"), kwargs.pop("y0s"), kwargs.pop("params"), kwargs.pop("t_span"), **kwargs
    )


@jit
def _writes_nothing(t, y, p, out):
    pass


@jit
def _writes_two(t, y, p, out):
    out[0] = 0.0
    out[1] = 0.0


INVALID = {
    "field": lambda: _call(field="not a field"),
    "y0": lambda: _call(y0=[1.0, 2.0]),
    "y0 ": lambda: _call(y0=[math.nan]),
    "t_span": lambda: _call(t_span=(1.0, 0.0)),
    "t_span ": lambda: _call(t_span=(0.0, math.inf)),
    "t_span  ": lambda: _call(t_span=(0.0, 1.0, 2.0)),
    "params": lambda: _call(params=[[1.0]]),
    "params ": lambda: _call(params=["a"]),
    "tol": lambda: _call(tol=1e-8),
    "tol.rtol": lambda: Tolerance(0.0, 1e-10),
    "tol.rtol ": lambda: Tolerance(math.nan, 1e-10),
    "tol.rtol  ": lambda: Tolerance(1e-17, 1e-10),
    "tol.atol": lambda: Tolerance(1e-8, -1.0),
    "tol.atol ": lambda: Tolerance(1e-8, math.inf),
    "tol.atol  ": lambda: _call(tol=Tolerance(1e-8, np.array([1e-10, 1e-10]))),
    "save_at": lambda: _call(save_at=[0.5, 0.2]),
    "save_at ": lambda: _call(save_at=[2.0]),
    "first_step": lambda: _call(first_step=-0.1),
    "max_steps": lambda: _call(max_steps=0),
    "max_steps ": lambda: _call(max_steps=1.5),
    "on_error": lambda: _batch(on_error="ignore"),
    "y0s": lambda: _batch(y0s=[1.0]),
    "params  ": lambda: _batch(params=[[1.0], [2.0]]),
    "field.n_state": lambda: VectorField(_fields.riccati, 0),
    "field.rhs": lambda: VectorField(lambda t, y, p, out: None, 1),
    "field.rhs ": lambda: integrate(VectorField(_writes_nothing, 1), [1.0], (0, 1), [], tol=TOL),
    "field.rhs  ": lambda: integrate(VectorField(_writes_two, 1), [1.0], (0, 1), [], tol=TOL),
    "field.event_names": lambda: VectorField(_fields.riccati, 1, _fields.level_events),
    "field.event_names ": lambda: VectorField(_fields.riccati, 1, _fields.level_events, ("a", "a")),
    "field.event_directions": lambda: VectorField(
        _fields.riccati, 1, _fields.level_events, ("a", "b"), (2, 0)
    ),
    "field.terminal": lambda: VectorField(_fields.riccati, 1, _fields.level_events, ("a", "b"), (), (True,)),
    "field.state_names": lambda: VectorField(_fields.riccati, 1, state_names=("x", "v")),
    "field.events": lambda: integrate(
        VectorField(_fields.riccati, 1, _fields.level_events, ("a",)),
        [1.0],
        (0, 1),
        [-1.0, 0.0, 0.5, 0.5],
        tol=TOL,
    ),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_invalid_arguments_name_the_parameter(name):
    with pytest.raises(InvalidArgument) as info:
        INVALID[name]()
    assert str(info.value).startswith(name.strip())


def test_blow_up_raises_numerical_trouble_naming_the_time():
    """Y' = y^2, y(0) = 1 has y = 1/(1 - t): no solution beyond t = 1."""
    with pytest.raises(NumericalTrouble, match="step size underflow at t=") as info:
        integrate(LEVEL, [1.0], (0.0, 2.0), [0.0, 1.0, *NEVER], tol=Tolerance(1e-8, 1e-10))
    # The numerical solution reaches its singularity within the tolerance of t = 1, on either side.
    t = float(re.search(r"at t=([0-9.e+-]+)", str(info.value)).group(1))
    assert abs(t - 1.0) < 1e-6
    assert "y[0]=" in str(info.value)


def test_overflowing_rhs_raises_numerical_trouble():
    with pytest.raises(NumericalTrouble, match=r"non-finite rhs or state near t=0 "):
        integrate(LEVEL, [1e200], (0.0, 1.0), [0.0, 1.0, *NEVER], tol=TOL)


def test_max_steps_raises_naming_the_state():
    with pytest.raises(NumericalTrouble, match=r"max_steps=5 .* \(state x=.*, v=.*\)"):
        integrate(PLANE, [1.0, 0.0], (0.0, 100.0), OSCILLATOR, tol=Tolerance(1e-10, 1e-12), max_steps=5)


# ---- a property ---------------------------------------------------------------------------------


@st.composite
def stable_matrices(draw):
    """2x2 matrices with eigenvalues of negative real part (trace < 0 < determinant)."""
    entries = st.floats(-2.0, 2.0, allow_nan=False, allow_subnormal=False)
    A = np.array([[draw(entries), draw(entries)], [draw(entries), draw(entries)]])
    if not (np.trace(A) < -0.05 and np.linalg.det(A) > 0.05):
        A = A - (abs(np.trace(A)) + 2 * np.abs(A).max() + 0.1) * np.eye(2)
    return A


@settings(deadline=None, max_examples=40)
@given(A=stable_matrices(), y0=st.tuples(*[st.floats(-3.0, 3.0, allow_subnormal=False)] * 2))
@example(A=np.array([[-0.1, 1.0], [-1.0, -0.1]]), y0=(1.0, 0.0))
def test_linear_systems_match_the_matrix_exponential(A, y0):
    rtol, atol = 1e-9, 1e-12
    ts = np.linspace(0.0, 5.0, 11)
    sol = integrate(PLANE, list(y0), (0.0, 5.0), A.ravel(), tol=Tolerance(rtol, atol), save_at=ts)
    exact = np.array([scipy.linalg.expm(A * t) @ np.array(y0) for t in ts])
    scale = max(1.0, np.abs(exact).max()) * np.linalg.norm(scipy.linalg.expm(A * 5.0), 2) + 1
    assert np.abs(sol.y - exact).max() <= 1e3 * rtol * scale


# ---- kernel generation and caching --------------------------------------------------------------


def test_kernels_of_importable_fields_are_cached_across_processes():
    assert is_cached(kernels(_fields.riccati, _fields.level_events))
    integrate(LEVEL, [1.0], (0.0, 1.0), [-1.0, 0.0, *NEVER], tol=TOL)  # compiled and saved by now
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        import _fields
        from numerics._ode_kernels import kernels
        from numerics.ode import Tolerance, VectorField, integrate
        field = VectorField(_fields.riccati, 1, _fields.level_events, ("a", "b"))
        sol = integrate(field, [1.0], (0, 1), [-1.0, 0.0, -1.0, 0.5], tol=Tolerance(1e-8, 1e-10))
        stats = kernels(_fields.riccati, _fields.level_events).solve.stats
        print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), sol.y_final[0])
    """)
    root = str(Path(__file__).parents[2])
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, check=True)
    hits, misses, y = run.stdout.split()
    assert (int(hits), int(misses)) == (1, 0), run.stderr
    assert abs(float(y) - math.exp(-1)) < 1e-7


def test_changed_rhs_source_changes_the_generated_module(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "ode_field_under_edit.py"
    text = (
        "from numerics._jit import jit\nRATE = {}\n\n@jit\ndef f(t, y, p, out):\n    out[0] = -RATE * y[0]\n"
    )
    module.write_text(text.format(1.0))
    importlib.invalidate_caches()
    first = _generated_source(importlib.import_module("ode_field_under_edit").f, None)
    module.write_text(text.format(2.0))
    second = _generated_source(importlib.reload(sys.modules["ode_field_under_edit"]).f, None)
    assert first is not None and second is not None and first != second
    assert "from ode_field_under_edit import f as rhs" in second


def test_module_that_no_path_leads_to_is_not_cached(tmp_path, monkeypatch):
    """A module loaded from outside sys.path (as by pytest's importlib mode) gets no cached kernels.

    A new process could not import it by name, so the generated module could not either.
    """
    path = tmp_path / "stray_field.py"
    path.write_text("from numerics._jit import jit\n\n@jit\ndef f(t, y, p, out):\n    out[0] = -y[0]\n")
    spec = importlib.util.spec_from_file_location("stray_field", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "stray_field", module)
    spec.loader.exec_module(module)
    assert _generated_source(module.f, None) is None
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _generated_source(module.f, None) is not None


def test_field_defined_in_a_function_falls_back_to_uncached_kernels():
    rate = 0.5

    @numba.njit(error_model="numpy")  # no cache=True: a closure is what this test is about
    def local_decay(t, y, p, out):
        out[0] = -rate * y[0]

    assert _generated_source(local_decay, None) is None
    assert not is_cached(kernels(local_decay, None))
    sol = integrate(VectorField(local_decay, 1), [2.0], (0.0, 3.0), [], tol=Tolerance(1e-10, 1e-13))
    assert abs(sol.y_final[0] - 2.0 * math.exp(-1.5)) < 1e-9


# ---- observers and data -------------------------------------------------------------------------


_LINEAR3 = np.array([[-1.0, 0.5, 0.0], [0.0, -2.0, 0.3], [0.2, 0.0, -0.5]]).reshape(-1)


@pytest.mark.parametrize("method", ["dopri5", "rodas4p"])
def test_an_observer_saves_exactly_its_values_of_the_saved_states(method):
    plain = VectorField(_fields.linear, 3)
    observed = VectorField(_fields.linear, 3, observe=_fields.total_and_square, n_observed=2,
                           observed_names=("total", "first_squared"))
    save = np.linspace(0.0, 2.0, 9)
    tol = Tolerance(1e-9, 1e-12)
    states = integrate(plain, [1.0, -0.5, 2.0], (0.0, 2.0), _LINEAR3, tol=tol, save_at=save, method=method)
    values = integrate(observed, [1.0, -0.5, 2.0], (0.0, 2.0), _LINEAR3, tol=tol, save_at=save, method=method)
    assert values.y.shape == (9, 2)
    expected = np.empty((9, 2))
    for row, y in zip(expected, states.y, strict=True):
        _fields.total_and_square(0.0, y, _LINEAR3, row)
    np.testing.assert_array_equal(values.y, expected)
    np.testing.assert_array_equal(values.y_final, states.y_final)


def test_an_observer_without_save_times_reports_the_ends():
    observed = VectorField(_fields.linear, 3, observe=_fields.total_and_square, n_observed=2)
    sol = integrate(observed, [1.0, 0.0, 0.0], (0.0, 1.0), _LINEAR3, tol=Tolerance(1e-9, 1e-12))
    assert sol.y.shape == (2, 2) and sol.y[0, 0] == 1.0 and sol.y[1, 0] == pytest.approx(sol.y_final.sum())


def test_a_batch_saves_observables_per_point():
    observed = VectorField(_fields.linear, 3, observe=_fields.total_and_square, n_observed=2)
    batch = integrate_batch(observed, np.ones((4, 3)) * np.arange(1, 5)[:, None], np.tile(_LINEAR3, (4, 1)),
                            (0.0, 1.0), tol=Tolerance(1e-9, 1e-12), save_at=[0.0, 0.5, 1.0])
    assert batch.y.shape == (4, 3, 2)
    np.testing.assert_allclose(batch.y[:, 0, 0], 3 * np.arange(1, 5), rtol=0, atol=0)


def test_integer_data_reach_the_field():
    field = VectorField(_fields.indexed_decay, 4)
    rates, idx = np.array([0.5, 1.0, 2.0]), np.array([2, 0, 1, 0], dtype=np.int64)
    sol = integrate(field, np.ones(4), (0.0, 1.0), (rates, idx), tol=Tolerance(1e-11, 1e-14))
    np.testing.assert_allclose(sol.y_final, np.exp(-rates[idx]), rtol=1e-9)


@pytest.mark.parametrize("kwargs, words", [
    ({"observe": _fields.total_and_square}, "give both an observer"),
    ({"n_observed": 2}, "give both an observer"),
    ({"observe": _fields.total_and_square, "n_observed": 2, "observed_names": ("a",)}, "one per observable"),
])
def test_an_observer_is_declared_with_its_size(kwargs, words):
    with pytest.raises(InvalidArgument, match=words):
        VectorField(_fields.linear, 3, **kwargs)


def test_a_wrongly_sized_observer_is_refused():
    field = VectorField(_fields.linear, 3, observe=_fields.total_and_square, n_observed=3)
    with pytest.raises(InvalidArgument, match="n_observed=3"):
        integrate(field, np.ones(3), (0.0, 1.0), _LINEAR3, tol=Tolerance(1e-9, 1e-12))


def test_data_must_be_numeric_arrays():
    field = VectorField(_fields.indexed_decay, 4)
    with pytest.raises(InvalidArgument, match=r"params\[1\]"):
        integrate(field, np.ones(4), (0.0, 1.0), (np.ones(3), "abc"), tol=Tolerance(1e-9, 1e-12))
