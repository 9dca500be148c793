"""Tests of numerics.sweep (grid order, chunking, serial = process pool, failures, bad arguments) and of
numerics.grid_memo's memoised grid runner on a toy computation."""

import contextlib
import multiprocessing
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from derivations.errors import InvalidArgument
from numerics.grid_memo import MemoisedGrid, fingerprint, nbytes
from numerics.sweep import PointFailed, chunks, grid, iter_sweep, sweep, use_executor

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


# ------------------------------------------------------------------ the memoised grid runner (grid_memo)

#: (group, xs) of every toy_rows call made in this process
TOY_CALLS = []


def toy_rows(points, settings):
    """One row per point: x * scale repeated n times; refuses x = 13, and batches above max_batch."""
    TOY_CALLS.append((points[0]["g"], [p["x"] for p in points]))
    assert all(p["g"] == points[0]["g"] for p in points), "a call mixed groups"
    if len(points) > settings.get("max_batch", len(points)):
        msg = f"{len(points)} points in one batch"
        raise RuntimeError(msg)
    for p in points:
        if p["x"] == 13:
            msg = "x must not be 13"
            raise ValueError(msg)
    return [{"y": np.full(settings["n"], p["x"] * settings["scale"]), "g": p["g"]} for p in points]


def toy_rows_too(points, settings):
    return toy_rows(points, settings)


def toy_normalise(point):
    if point["x"] < 0:
        msg = f"x={point['x']} must be >= 0"
        raise InvalidArgument(msg)
    return {"x": int(point["x"]), "g": point.get("g", "a")}


def toy_group(point):
    return point["g"]


TOY = {"n": 10, "scale": 0.5}  # rows of 80 bytes of y (nbytes also counts "g": 8)


@pytest.fixture
def toy(request):
    """A fresh runner per test (its own memo name), and an empty call log."""
    TOY_CALLS.clear()

    def make(compute=toy_rows, name=request.node.name, **kwargs):
        kwargs = {"normalise": toy_normalise, "group_key": toy_group, **kwargs}
        runner = MemoisedGrid(f"test_sweep.{name}", compute, **kwargs)
        runner.clear()
        return runner

    return make


def ys(run):
    return [float(row["y"][0]) for row in run.rows]


def test_memo_recalls_rows_counts_hits_and_keys_on_settings(toy):
    runner = toy()
    first = runner.run([{"x": x} for x in (1, 2, 3, 4)], TOY)
    assert (first.recalled, first.computed, ys(first)) == (0, 4, [0.5, 1.0, 1.5, 2.0])
    again = runner.run([{"x": 3}, {"x": 1.0}, {"x": 9}, {"x": 9}], TOY)  # 1.0 normalises to 1
    assert (again.recalled, again.computed, ys(again)) == (2, 1, [1.5, 0.5, 4.5, 4.5])
    assert again.rows[0] is first.rows[2] and again.rows[2] is again.rows[3]
    assert TOY_CALLS[-1] == ("a", [9])
    stats = runner.stats()
    assert (stats.rows, stats.hits, stats.computed, stats.bytes) == (5, 2, 5, 5 * 88)
    other = runner.run([{"x": 3}], {**TOY, "scale": 2.0})
    assert (other.recalled, ys(other)) == (0, [6.0])
    unmemoised = runner.run([{"x": 3}, {"x": 77}], TOY, memo=False)
    assert unmemoised.recalled == 0 and runner.stats().rows == 6
    with pytest.raises(InvalidArgument, match="^x=-1"):
        runner.run([{"x": 2}, {"x": -1}], TOY)


def test_rows_come_back_in_input_order_with_each_group_computed_in_one_call(toy):
    points = [{"x": x, "g": g} for x, g in ((5, "b"), (1, "a"), (4, "b"), (2, "a"), (3, "c"), (6, "b"))]
    run = toy().run(points, TOY)
    assert ys(run) == [2.5, 0.5, 2.0, 1.0, 1.5, 3.0]
    assert [row["g"] for row in run.rows] == [p["g"] for p in points]
    assert TOY_CALLS == [("b", [5, 4, 6]), ("a", [1, 2]), ("c", [3])]


def test_memo_evicts_least_recently_used_rows_beyond_its_bytes(toy):
    assert nbytes({"y": np.zeros(10), "g": "a"}) == 88
    runner = toy(memo_bytes=3 * 88 + 40)
    runner.run([{"x": x} for x in range(5)], TOY)
    stats = runner.stats()
    assert (stats.rows, stats.bytes, stats.evicted) == (3, 3 * 88, 2)
    assert runner.run([{"x": 2}], TOY).recalled == 1  # 2 becomes the most recent; 3 is now the oldest
    runner.run([{"x": 7}], TOY)
    assert runner.run([{"x": 2}, {"x": 4}, {"x": 7}], TOY).recalled == 3
    assert runner.run([{"x": 3}], TOY).recalled == 0
    small = toy(name="too-small", memo_bytes=87)  # a row larger than the budget is not kept
    small.run([{"x": 1}], TOY)
    assert small.stats().rows == 0 and small.run([{"x": 1}], TOY).recalled == 0


def test_each_runner_name_has_its_own_memo(toy):
    mine, theirs = toy(name="mine", memo_bytes=10**6), toy(toy_rows_too, name="theirs", memo_bytes=2 * 88)
    mine.run([{"x": 1}, {"x": 2}], TOY)
    theirs.run([{"x": x} for x in range(20, 70)], TOY)
    assert mine.run([{"x": 1}, {"x": 2}], TOY).recalled == 2
    assert theirs.stats().rows == 2
    assert MemoisedGrid("test_sweep.mine", toy_rows).stats().rows == 2  # same name and function: same memo
    with pytest.raises(InvalidArgument, match="^name=.*already the memo of"):
        toy(toy_rows_too, name="mine")


@pytest.mark.parametrize("kind", ["threads", "processes"])
def test_an_active_executor_gives_the_local_rows_in_chunks_of_one_group(toy, kind):
    points = [{"x": x, "g": "ab"[x % 3 == 0]} for x in range(11)]
    local = toy(memo_bytes=0).run(points, TOY)
    TOY_CALLS.clear()
    context = multiprocessing.get_context("forkserver")
    make = (lambda: ThreadPoolExecutor(2)) if kind == "threads" else (lambda: ProcessPoolExecutor(2, context))
    with make() as pool, use_executor(pool):
        remote = toy(name=f"remote-{kind}", chunk=3).run(points, TOY)
    assert [row["g"] for row in remote.rows] == [row["g"] for row in local.rows]
    assert all(np.array_equal(a["y"], b["y"]) for a, b in zip(local.rows, remote.rows, strict=True))
    if kind == "threads":
        assert sorted(TOY_CALLS) == [("a", [1, 2, 4]), ("a", [5, 7, 8]), ("a", [10]),
                                     ("b", [0, 3, 6]), ("b", [9])]
    else:
        assert TOY_CALLS == []  # computed in the worker processes


@pytest.mark.parametrize("where", ["here", "threads"])
def test_a_failing_point_is_named_with_its_point(toy, where):
    runner = toy()
    points = [{"x": 1}, {"x": 2, "g": "b"}, {"x": 13}, {"x": 4}]
    named = r"point #2 \{'x': 13, 'g': 'a'\}: ValueError: x must not be 13"
    with ThreadPoolExecutor(2) as pool:
        active = use_executor(pool) if where == "threads" else contextlib.nullcontext()
        with active, pytest.raises(PointFailed, match=named):
            runner.run(points, TOY)
    with pytest.raises(PointFailed, match=r"a group of 3 points \(first #0 \{'x': 1, 'g': 'a'\}\), though"):
        runner.run([{"x": 1}, {"x": 3}, {"x": 4}], {**TOY, "max_batch": 2})
    assert runner.stats().rows == 0


def test_memoised_grid_refuses_bad_arguments(toy):
    with pytest.raises(InvalidArgument, match="^compute_rows=.*top-level"):
        MemoisedGrid("test_sweep.lambda", lambda points, settings: points)
    for kwargs, name in (({"memo_bytes": -1}, "memo_bytes"), ({"chunk": 0}, "chunk"),
                         ({"group_key": 3}, "group_key")):
        with pytest.raises(InvalidArgument, match=f"^{name}="):
            toy(**kwargs)
    with pytest.raises(InvalidArgument, match="^settings="):
        toy().run([{"x": 1}], {1: 2})


def test_fingerprints_see_whole_arrays_and_ignore_key_order():
    long = np.linspace(0.0, 1.0, 5000)
    nudged = long.copy()
    nudged[2500] = np.nextafter(nudged[2500], 2.0)
    assert fingerprint({"tau": long, "rtol": 1e-10}) == fingerprint({"rtol": 1e-10, "tau": long.copy()})
    assert fingerprint({"tau": long}) != fingerprint({"tau": nudged})
    assert fingerprint({"tau": long}) != fingerprint({"tau": long.astype(np.float32)})
    assert fingerprint({"x": 1}) != fingerprint({"x": 1.0})
