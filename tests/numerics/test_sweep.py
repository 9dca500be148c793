"""Tests of numerics.sweep: grid order, chunking, serial = process pool, failures, bad arguments."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.sweep import PointFailed, chunks, grid, iter_sweep, sweep

# Top-level functions, so that worker processes can unpickle them.


def seeded_norm(point):
    rng = np.random.default_rng(np.random.SeedSequence(point["seed"]))
    return float(point["scale"] * np.linalg.norm(rng.standard_normal(point["dim"])))


def fails_at_three(point):
    if point["x"] == 3:
        msg = "x must not be 3"
        raise ValueError(msg)
    return point["x"] ** 2


def test_grid_order_is_documented_product():
    expected = [{"a": 1, "b": 0}, {"a": 1, "b": 5}, {"a": 2, "b": 0}, {"a": 2, "b": 5}]
    assert grid(a=[1, 2], b=(0, 5)) == expected
    assert len(grid(a=range(3), b=[0], c=np.linspace(0, 1, 4))) == 12


@pytest.mark.parametrize(
    ("axes", "name"), [({"a": []}, "a"), ({"a": [1], "b": 0.5}, "b"), ({"c": "xy"}, "c")]
)
def test_grid_refuses_bad_axes(axes, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        grid(**axes)


@settings(deadline=None)
@given(n=st.integers(0, 60), chunk_size=st.integers(1, 70))
def test_chunks_cover_every_point_once_in_order(n, chunk_size):
    points = [{"i": i} for i in range(n)]
    parts = chunks(points, chunk_size)
    flat = [pair for part in parts for pair in part]
    assert flat == list(enumerate(points))
    assert all(0 < len(part) <= chunk_size for part in parts)
    assert all(len(part) == chunk_size for part in parts[:-1])


def test_serial_equals_process_pool():
    points = grid(seed=range(6), dim=[3, 50], scale=[1.0, -2.5])
    serial = sweep(seeded_norm, points, executor="serial")
    assert serial == [seeded_norm(p) for p in points]
    calls = []
    pooled = sweep(seeded_norm, points, workers=2, chunk_size=5, progress=lambda d, t: calls.append((d, t)))
    assert pooled == serial
    assert calls[-1] == (24, 24) and len(calls) == 5
    assert sorted(i for i, _ in iter_sweep(seeded_norm, points, workers=1, chunk_size=7)) == list(range(24))


def test_any_executor_works():
    points = grid(seed=[1, 2, 3], dim=[4], scale=[1.0])
    with ThreadPoolExecutor(2) as pool:
        threaded = sweep(seeded_norm, points, executor=pool, chunk_size=1)
    assert threaded == sweep(seeded_norm, points, workers=1)


@pytest.mark.parametrize("where", ["serial", "pool"])
def test_failure_names_the_point(where):
    points = grid(x=range(6))
    kwargs = {"executor": "serial"} if where == "serial" else {"workers": 2}
    with pytest.raises(PointFailed, match=r"point #3 \{'x': 3\}: ValueError: x must not be 3"):
        sweep(fails_at_three, points, chunk_size=2, **kwargs)


def test_serial_stream_yields_results_before_the_failure():
    seen = []
    with pytest.raises(PointFailed):
        stream = iter_sweep(fails_at_three, grid(x=range(6)), executor="serial", chunk_size=4)
        for index, result in stream:
            seen.append((index, result))
    assert seen == [(0, 0), (1, 1), (2, 4)]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": -3}, "chunk_size"),
        ({"chunk_size": 2.5}, "chunk_size"),
        ({"chunk_size": True}, "chunk_size"),
        ({"workers": 0}, "workers"),
        ({"executor": "threads"}, "executor"),
        ({"executor": 4}, "executor"),
        ({"progress": 3}, "progress"),
    ],
)
def test_invalid_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(InvalidArgument, match=rf"^{name}="):
        sweep(seeded_norm, grid(seed=[0], dim=[2], scale=[1.0]), **kwargs)


def test_unpicklable_fn_is_refused_before_starting_a_pool():
    with pytest.raises(InvalidArgument, match="^fn=.*top level"):
        sweep(lambda p: p, [{"a": 1}], workers=2)
