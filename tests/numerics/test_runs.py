"""numerics.runs.cached_run: stored once, reloaded bit for bit, keyed by its parameters, healed when damaged."""

import numpy as np
import pytest

from derivations.errors import InvalidArgument
from numerics.cache import CacheWarning
from numerics.runs import cached_run


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    return tmp_path


def _counting():
    calls = []

    def compute():
        calls.append(1)
        rng = np.random.default_rng(len(calls))
        return {"y": rng.standard_normal((3, 4)), "steps": 17, "t": np.linspace(0, 1, 5)}
    return compute, calls


def test_a_run_is_computed_once_and_reloaded_bit_for_bit():
    compute, calls = _counting()
    first = cached_run("demo", {"m": 8, "seed": 0}, compute, ["numerics.ode"])
    again = cached_run("demo", {"seed": 0, "m": 8}, compute, ["numerics.ode"])
    assert len(calls) == 1
    np.testing.assert_array_equal(first["y"], again["y"])
    assert again["steps"] == 17 and isinstance(again["steps"], int)


def test_another_key_computes_anew():
    compute, calls = _counting()
    cached_run("demo", {"m": 8}, compute)
    cached_run("demo", {"m": 16}, compute)
    assert len(calls) == 2


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_a_damaged_entry_is_discarded_and_computed_again(private_cache, damage):
    compute, calls = _counting()
    cached_run("demo", {"m": 8}, compute)
    (entry,) = (private_cache / "runs" / "demo").glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:40] if damage is None else damage)
    with pytest.warns(CacheWarning, match="discarded the unreadable cache entry"):
        result = cached_run("demo", {"m": 8}, compute)
    assert len(calls) == 2 and result["y"].shape == (3, 4)
    assert cached_run("demo", {"m": 8}, compute)["steps"] == 17 and len(calls) == 2


def test_objects_and_bad_kinds_are_refused():
    with pytest.raises(InvalidArgument, match="arrays and numbers"):
        cached_run("demo", {"m": 1}, lambda: {"x": np.array([object()])})
    with pytest.raises(InvalidArgument, match="kind="):
        cached_run("../up", {"m": 1}, lambda: {"x": 1})
