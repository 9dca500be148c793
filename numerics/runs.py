"""Runs cached on disk: an expensive computation's arrays stored once, read by every claim and worker after.

``cached_run(kind, key, compute, modules)`` returns ``compute()``'s dict of arrays and numbers, stored under
``cache_root()/runs/<kind>/<digest>.npz``. The digest covers ``key`` (every parameter that determines the run: regime,
m, seed, horizon, tolerances, options), the source of ``modules`` (the kernels that compute it) and the Python,
SymPy, NumPy and numba versions (:func:`numerics.stored.source_stamp`), so a changed kernel or library computes
anew. An entry is written to a temporary file and renamed into place (two processes computing the same run leave
one complete entry), read with ``allow_pickle=False`` and checked against its key; an entry that cannot be read
is discarded with a :class:`numerics.cache.CacheWarning` naming it and computed again, never a crash.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument
from numerics import cache_root
from numerics.cache import discard
from numerics.grid_memo import fingerprint
from numerics.stored import source_stamp

_KEY = "__key__"


def _folder(kind: str) -> Path:
    if not kind.replace("_", "").replace("-", "").isalnum():
        raise InvalidArgument(f"kind={kind!r} must be a name of letters, digits, '-' and '_' (a folder of the cache)")
    return cache_root() / "runs" / kind


def _key_text(key: Mapping[str, Any], modules: Sequence[str]) -> str:
    for module in modules:
        importlib.import_module(module)  # source_stamp hashes the file of an imported module
    stamps = {module: source_stamp(module, ()) for module in modules}
    return json.dumps({"key": {k: key[k] for k in sorted(key)}, "sources": stamps}, sort_keys=True, default=repr)


def _read(path: Path, key_text: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as stream, np.load(stream, allow_pickle=False) as stored:  # closed on a bad zip too
            if str(stored[_KEY]) != key_text:
                raise ValueError("the entry was stored for another key")
            return {name: (stored[name].item() if stored[name].ndim == 0 else stored[name])
                    for name in stored.files if name != _KEY}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        discard(path, error)
        return None


def cached_run(kind: str, key: Mapping[str, Any], compute: Callable[[], Mapping[str, Any]],
               modules: Sequence[str] = ()) -> dict[str, Any]:
    """``compute()`` (a mapping of names to arrays or numbers), from the cache when this ``key`` and these
    ``modules``' sources were computed before (module docstring)."""
    key_text = _key_text(key, modules)
    folder = _folder(kind)
    path = folder / f"{fingerprint(key_text)}.npz"
    found = _read(path, key_text)
    if found is not None:
        return found
    result = dict(compute())
    if _KEY in result:
        raise InvalidArgument(f"a run's result may not contain the name {_KEY!r}")
    arrays = {name: np.asarray(value) for name, value in result.items()}
    if any(a.dtype == object for a in arrays.values()):
        raise InvalidArgument("a cached run holds arrays and numbers only (no objects)")
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".npz.tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, **arrays, **{_KEY: np.array(key_text)})
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
    return {name: (a.item() if a.ndim == 0 else a) for name, a in arrays.items()}
