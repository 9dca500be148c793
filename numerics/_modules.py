"""Generated Python modules on disk, so that ``njit(cache=True)`` can cache what they define.

numba caches a function by the path and time stamp of its source file, and cannot cache a
closure or a function built by ``exec`` (sympy#18432). Generated kernels are therefore written
as real modules into :func:`kernel_dir`, which is put on ``sys.path``; a module is named after
the hash of its source, so a file is never rewritten with different content under the same
name and numba's stamp check stays valid.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from numerics import cache_root


def kernel_dir() -> Path:
    """Return the folder of generated modules, creating it and putting it on ``sys.path``."""
    folder = cache_root() / "kernels"
    folder.mkdir(parents=True, exist_ok=True)
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    return folder


def module_name(prefix: str, source: str) -> str:
    """Return ``prefix_<hash of source>``, a valid module name unique to this source."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    safe = "".join(c if c.isalnum() else "_" for c in prefix)
    return f"{safe}_{digest}"


def load_module(prefix: str, source: str) -> ModuleType:
    """Write ``source`` as a module named after its hash (if not yet on disk) and import it.

    The file is written atomically (temporary file, then rename), so that concurrent
    processes of a sweep never import a half-written module.
    """
    name = module_name(prefix, source)
    if name in sys.modules:
        return sys.modules[name]
    folder = kernel_dir()
    path = folder / f"{name}.py"
    if not path.exists() or path.read_text() != source:
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(source)
        os.replace(tmp, path)
    importlib.invalidate_caches()
    return importlib.import_module(name)
