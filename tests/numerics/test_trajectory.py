"""The one trajectory type: construction checks, windows, events, views."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.trajectory import Trajectory


def _run(n=5):
    t = np.linspace(0.0, 4.0, n)
    return Trajectory(t, {"h": t**2, "W": np.zeros((n, 2, 2))}, {"loss": np.exp(-t)},
                      events={"T_a": 1.5, "T_b": math.nan}, event_states={"T_a": {"h": 2.25}},
                      meta={"L": 40}, steps=np.arange(n))


def test_columns_and_events():
    run = _run()
    assert run["h"][2] == 4.0 and run["loss"][0] == 1.0 and "W" in run and "x" not in run
    assert run.fired("T_a") and not run.fired("T_b")
    assert run.event_state("T_a") == {"t": 1.5, "h": 2.25} and run.event_state("T_b") == {}
    assert run.scalar_row(1) == {"h": 1.0}
    with pytest.raises(InvalidArgument, match="T_c"):
        run.event("T_c")
    with pytest.raises(InvalidArgument, match="loss"):
        run["los"]


def test_windows():
    run = _run()
    assert run.window(1.0, 3.0).tolist() == [False, True, True, True, False]
    assert run.window(1.0, 3.0, closed=False).tolist() == [False, False, True, False, False]
    assert not run.window(math.nan, 3.0).any()  # an event that did not fire opens no window
    assert run.window(2.0, math.nan).tolist() == [False, False, True, True, True]


def test_restrict_and_views():
    run = _run().with_observables(bound=np.ones(5)).with_meta(seed=3)
    sub = run.restrict(run.window(2.0))
    assert sub.t.tolist() == [2.0, 3.0, 4.0] and sub["bound"].shape == (3,) and sub.steps.tolist() == [2, 3, 4]
    assert sub.meta == {"L": 40, "seed": 3} and sub.events["T_a"] == 1.5
    assert sub.summary()["events"] == {"T_a": 1.5, "T_b": None}


def test_bad_input():
    t = np.arange(3.0)
    with pytest.raises(InvalidArgument, match="one row per saved time"):
        Trajectory(t, {"h": np.zeros(4)})
    with pytest.raises(InvalidArgument, match="non-decreasing"):
        Trajectory(np.array([0.0, 2.0, 1.0]))
    with pytest.raises(InvalidArgument, match="both a state and an observable"):
        Trajectory(t, {"h": t}, {"h": t})


@given(st.lists(st.floats(0, 100), min_size=1, max_size=30), st.floats(0, 100), st.floats(0, 100))
def test_window_is_the_interval(times, a, b):
    run = Trajectory(np.sort(np.array(times)))
    mask = run.window(a, b)
    assert mask.tolist() == [(a <= t <= b) for t in run.t]


def test_from_solution():
    """An ODE solution becomes a trajectory with named states and its events (decay y' = -y to 1/2)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import _fields

    from numerics.ode import Tolerance, VectorField, integrate

    field = VectorField(_fields.riccati, 1, _fields.level_events, ("level", "relative"), (-1, -1))
    sol = integrate(field, [1.0], (0.0, 2.0), [-1.0, 0.0, 0.5, 0.5], tol=Tolerance(1e-10, 1e-12),
                    save_at=np.linspace(0, 2, 5))
    run = Trajectory.from_solution(sol, ["y"])
    assert np.allclose(run["y"], np.exp(-run.t), rtol=1e-8)
    assert run.event("level") == pytest.approx(math.log(2), rel=1e-10)
    assert run.event_state("level")["y"] == pytest.approx(0.5, rel=1e-10)
    assert run.meta["n_steps"] == sol.n_steps
