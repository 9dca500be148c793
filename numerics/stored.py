"""SymPy results of derivations, remembered on disk across processes (used by the induction-head models and checks).

Deriving an IH-head form (expectations, ``diff``, ``solve``, limits, series) costs from a tenth of
a second to several seconds of SymPy, in every worker process of ``tdcheck run``. The result is a
function of the arguments and of source code only, so :func:`stored` keeps it: in memory for the
process and as a pickle under ``cache_root()/sympy``, keyed by the SHA-256 of the function's
qualified name, its arguments, the source of every module of the ``derivations`` package and of
the module defining the function, and the SymPy and Python versions. Editing any derivation
invalidates every entry; nothing is ever served for source it was not computed from.

Pickling keeps a SymPy ``Dummy``'s index, so expressions recalled from disk print the same
``srepr`` in every process and hit ``numerics.compile``'s build memo.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


@functools.cache
def source_stamp(module: str) -> str:
    """Hash of the source of ``derivations`` and of ``module``, and of the SymPy and Python versions."""
    import sympy

    import derivations

    digest = hashlib.sha256(f"{sympy.__version__}|{sys.version_info[:2]}".encode())
    files = sorted(Path(derivations.__file__).parent.rglob("*.py"))
    origin = getattr(sys.modules.get(module), "__file__", None)
    for path in [*files, *([Path(origin)] if origin else [])]:
        digest.update(str(path.name).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _folder() -> Path:
    from numerics import cache_root

    folder = cache_root() / "sympy"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def stored(fn: Callable) -> Callable:
    """Wrap a pure SymPy-building function of hashable, ``repr``-stable arguments (module docstring)."""
    memo: dict[tuple, Any] = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        call = (args, tuple(sorted(kwargs.items())))
        if call in memo:
            return memo[call]
        text = f"{source_stamp(fn.__module__)}|{fn.__module__}.{fn.__qualname__}|{call!r}"
        path = _folder() / f"{fn.__qualname__}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.pkl"
        try:
            value = pickle.loads(path.read_bytes())
        except Exception:  # absent, partial or unreadable entry: compute it again
            value = fn(*args, **kwargs)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # atomic: concurrent workers never read half a file
        memo[call] = value
        return value

    wrapper.uncached = fn
    return wrapper
