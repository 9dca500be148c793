"""Generated Python modules on disk, so that ``njit(cache=True)`` can cache what they define.

numba caches a function by the path and time stamp of its source file, and cannot cache a
closure or a function built by ``exec`` (sympy#18432). Generated kernels are therefore written
as real modules into :func:`kernel_dir`, which is put on ``sys.path``; a module is named after
the hash of its source, so a file is never rewritten with different content under the same
name and numba's stamp check stays valid.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from numerics import cache_root
from numerics.cache import discard


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
    path = kernel_dir() / f"{name}.py"
    data = source.encode()
    if not path.exists() or path.read_bytes() != data:
        if path.exists():
            discard(path, "its content is not the source its name was hashed from")
        write_atomic(path, data)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Concurrent processes of a sweep thus never read a half-written file.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def import_generated(name: str) -> ModuleType | None:
    """The generated module ``name`` from :func:`kernel_dir`, or None if its file is gone or damaged.

    A module's name ends with the hash of its source (:func:`module_name`), so a file whose
    content does not hash to its name (truncated, overwritten) is discarded.
    """
    path = kernel_dir() / f"{name}.py"
    if not path.exists():
        return None
    if name in sys.modules:
        return sys.modules[name]
    data = path.read_bytes()
    if not name.endswith("_" + hashlib.sha256(data).hexdigest()[:16]):
        discard(path, "its content does not hash to its name")
        return None
    importlib.invalidate_caches()
    return importlib.import_module(name)


@functools.cache
def dependency_digest() -> str:
    """Hash of the sources the generated code imports (the helper modules and ``numerics._jit``).

    Their code is compiled into the generated kernels' numba cache: a change there must produce
    a new module (the digest is in every generated header) and a new memo key (:func:`_stamp`),
    not the old module whose cache holds the old helpers.
    """
    from numerics.printer import HELPER_MODULES

    here = Path(__file__).parent
    digest = hashlib.sha256()
    helpers = {module.removeprefix("numerics.") + ".py" for module in HELPER_MODULES.values()}
    for name in (*sorted(helpers), "_jit.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def _stamp() -> str:
    """Hash of the code generator's own files, of what generated code imports and of the library versions:
    a memo entry is valid only for the code that wrote it."""
    from importlib.metadata import version

    here = Path(__file__).parent
    digest = hashlib.sha256("|".join([sys.version, *(version(n) for n in ("sympy", "numpy", "numba"))]).encode())
    for name in ("compile.py", "printer.py", "_modules.py"):
        path = here / name
        if path.exists():
            digest.update(path.read_bytes())
    digest.update(dependency_digest().encode())
    return digest.hexdigest()[:16]


def memo_key(*parts: object) -> str:
    """A key for a build from SymPy inputs: the hash of their ``srepr`` and of the generator's code."""
    import sympy as sp

    text = "|".join(sp.srepr(_stable_dummies(p)) if isinstance(p, sp.Basic) else repr(p) for p in parts)
    return hashlib.sha256((_stamp() + text).encode()).hexdigest()[:32]


def _stable_dummies(expr):
    """``expr`` with each Dummy renamed to a plain symbol when its name is unique in ``expr``.

    A Dummy's ``srepr`` carries a per-process counter, so summation variables (``derivations``
    builds sums with Dummies) would make every process miss the memo and redo seconds of SymPy.
    Renaming is a bijection when the names are unique; otherwise the expression is kept as is.
    """
    import sympy as sp

    dummies = expr.atoms(sp.Dummy)
    if not dummies:
        return expr
    names = [d.name for d in dummies]
    if len(set(names)) != len(names):
        return expr
    return expr.xreplace({d: sp.Symbol(f"{d.name}__dummy", **d.assumptions0) for d in dummies})


def recall(key: str) -> ModuleType | None:
    """The generated module built before from the inputs behind ``key``, if its file is still there.

    Building a kernel (rewriting, ``cse``, printing) costs seconds of SymPy; its result is a
    function of the inputs and of the generator's code only, so the module name is remembered.
    """
    entry = kernel_dir() / "memo" / key
    if not entry.exists():
        return None
    try:
        name = entry.read_bytes().decode("ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        discard(entry, error)
        return None
    if not name.isidentifier():
        discard(entry, f"it names no module ({name[:40]!r})")
        return None
    return import_generated(name)


def remember(key: str, module: ModuleType) -> None:
    """Record that ``key`` builds ``module``."""
    folder = kernel_dir() / "memo"
    folder.mkdir(exist_ok=True)
    write_atomic(folder / key, module.__name__.encode())
