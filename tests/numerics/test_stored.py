"""The on-disk store of SymPy results (numerics.stored): recall, keys, bad entries."""

import pytest
import sympy as sp

from numerics import stored as store
from numerics.cache import CacheWarning

CALLS = []


def _series(order):
    CALLS.append(order)
    x = sp.Symbol("x")
    return sp.series(sp.exp(x), x, 0, order).removeO()


def test_a_new_process_recalls_the_result_from_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    CALLS.clear()
    first = store.stored(_series)(4)
    again = store.stored(_series)(4)  # a fresh wrapper has no memory of its own: as in a new process
    assert again == first and CALLS == [4]
    assert store.stored(_series)(5) != first and CALLS == [4, 5]


def test_an_unreadable_entry_is_computed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("TDCHECK_CACHE_DIR", str(tmp_path))
    CALLS.clear()
    store.stored(_series)(3)
    (entry,) = (tmp_path / "sympy").glob("*.pkl")
    entry.write_bytes(b"not a pickle")
    with pytest.warns(CacheWarning, match="UnpicklingError") as caught:
        assert store.stored(_series)(3) == 1 + sp.Symbol("x") + sp.Symbol("x") ** 2 / 2
    assert CALLS == [3, 3]
    assert [w.filename for w in caught] == [str(entry)]  # the warning names the entry
    assert entry.exists() and entry.read_bytes() != b"not a pickle"  # rebuilt
