"""Results of pure functions remembered on disk across processes: SymPy derivations and compiled builders.

Deriving an IH-head form (expectations, ``diff``, ``solve``, limits, series) costs from a tenth of
a second to several seconds of SymPy, in every worker process of ``tdcheck run``. The result is a
function of the arguments and of source code only, so :func:`stored` keeps it: in memory for the
process and as a pickle under ``cache_root()/sympy``, keyed by the SHA-256 of the function's
qualified name, its arguments (bound to its signature, defaults filled in), the source of every
module of the packages it depends on (``derivations``) and of the module defining the function,
and the Python, SymPy, NumPy and numba versions. Editing any of that source invalidates the
entries; nothing is ever served for source it was not computed from.

:func:`stored_build` does the same for builders of compiled kernels (``stage2_flow``,
``four_gram_kernels``, ...), whose results hold numba dispatchers and generated modules. These
are pickled by reference: a module by name, a dispatcher by its module, name and the signatures
it was compiled for. Recalling the result imports the generated module and loads those
signatures from numba's cache, so a warm call imports neither SymPy nor the code generator. A
kernel depends on the generator, the printer and the models as much as on the derivations, so
the stamp of a builder covers the ``derivations`` and ``numerics`` packages whole.

Pickling keeps a SymPy ``Dummy``'s index, so expressions recalled from disk print the same
``srepr`` in every process and hit ``numerics.compile``'s build memo.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import io
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from numerics.cache import discard

#: packages whose source a SymPy result depends on (besides the defining module)
DERIVED = ("derivations",)
#: packages whose source a compiled builder's result depends on
BUILT = ("derivations", "numerics")
#: distributions whose versions enter every stamp
VERSIONED = ("sympy", "numpy", "numba")


def _package_files(package: str) -> list[tuple[str, Path]]:
    """(path relative to the package's parent, path) of every ``.py`` file of ``package``, sorted."""
    root = Path(importlib.util.find_spec(package).submodule_search_locations[0])
    return [(path.relative_to(root.parent).as_posix(), path) for path in sorted(root.rglob("*.py"))]


@functools.cache
def source_stamp(module: str, packages: tuple[str, ...] = DERIVED) -> str:
    """Hash of the source of ``packages`` and of ``module``, and of the Python and :data:`VERSIONED` versions.

    Versions are read from the installed distributions, so that stamping imports none of them.
    """
    versions = [f"{name}={importlib.metadata.version(name)}" for name in VERSIONED]
    digest = hashlib.sha256("|".join([*versions, str(sys.version_info[:2])]).encode())
    files = [item for package in packages for item in _package_files(package)]
    origin = getattr(sys.modules.get(module), "__file__", None)
    if origin:
        files.append((module, Path(origin)))
    for label, path in files:
        digest.update(label.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _folder() -> Path:
    from numerics import cache_root

    folder = cache_root() / "sympy"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# ---- pickling compiled objects by reference ---------------------------------------------------


def _dispatcher_type() -> type | tuple:
    """The Dispatcher class of numba, or ``()`` if numba's dispatcher is not loaded (nothing can be one)."""
    module = sys.modules.get("numba.core.dispatcher")
    return module.Dispatcher if module is not None else ()


def _compiled_signatures(dispatcher) -> list:
    """The signatures ``dispatcher`` was compiled for, exactly as given to ``compile``.

    numba's cache index keys on the signature as given (``"void(float64, ...)"`` and a tuple of
    types are different entries), so replaying them hits the same cache entries.
    """
    from numba.core import sigutils

    stats = dispatcher.stats
    given = dict.fromkeys([*stats.cache_hits, *stats.cache_misses])
    return [sig for sig in given if tuple(sigutils.normalize_signature(sig)[0]) in dispatcher.overloads]


def _module_reference(module: ModuleType) -> tuple[str, bool]:
    """(name, whether it is a generated module of the kernel folder) of a module."""
    from numerics._modules import kernel_dir

    origin = getattr(module, "__file__", None)
    return module.__name__, bool(origin) and Path(origin).resolve().parent == kernel_dir().resolve()


def _dispatcher_reference(dispatcher) -> tuple[str, bool, str, list]:
    """(module, generated, name, signatures) of a dispatcher that a new process can import by name."""
    py = dispatcher.py_func
    module = sys.modules.get(py.__module__)
    if module is None or getattr(module, py.__name__, None) is not dispatcher or py.__module__ == "__main__":
        msg = f"{py.__module__}.{py.__qualname__} cannot be imported by name in another process"
        raise pickle.PicklingError(msg)
    return *_module_reference(module), py.__name__, _compiled_signatures(dispatcher)


def _import(name: str, generated: bool) -> ModuleType:
    """Import ``name``; a generated module must still have its file in the kernel folder."""
    from numerics._modules import import_generated

    if not generated:
        return importlib.import_module(name)
    module = import_generated(name)
    if module is None:
        raise ModuleNotFoundError(name=name)
    return module


class _Pickler(pickle.Pickler):
    """Pickles modules and numba dispatchers by reference (module docstring)."""

    def __init__(self, file: io.BytesIO):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._dispatcher = _dispatcher_type()

    def persistent_id(self, obj):
        if isinstance(obj, ModuleType):
            return ("module", *_module_reference(obj))
        if isinstance(obj, self._dispatcher):
            return ("jit", *_dispatcher_reference(obj))
        return None


class _Unpickler(pickle.Unpickler):
    """Rebuilds what :class:`_Pickler` referenced: imports the module, loads the compiled signatures."""

    def persistent_load(self, pid):
        kind, name, generated, *rest = pid
        module = _import(name, generated)
        if kind == "module":
            return module
        function, signatures = rest
        dispatcher = getattr(module, function)
        for sig in signatures:
            dispatcher.compile(sig)
        return dispatcher


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer).dump(value)
    return buffer.getvalue()


def _loads(data: bytes) -> Any:
    return _Unpickler(io.BytesIO(data)).load()


# ---- the decorators -----------------------------------------------------------------------------


def _entry(fn: Callable, call: tuple, depends: tuple[str, ...]) -> Path:
    """The file of one call of ``fn``."""
    text = f"{source_stamp(fn.__module__, depends)}|{fn.__module__}.{fn.__qualname__}|{call!r}"
    return _folder() / f"{fn.__qualname__}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.pkl"


def _recall_or_compute(fn: Callable, call: tuple, depends: tuple[str, ...], args: tuple, kwargs: dict) -> Any:
    """The stored value of ``fn(*args, **kwargs)``, computed and stored first if it is not on disk."""
    from numerics._modules import write_atomic

    path = _entry(fn, call, depends)
    try:
        return _loads(path.read_bytes())
    except (FileNotFoundError, ModuleNotFoundError):  # absent, or a generated module it refers to is gone
        pass
    except Exception as error:  # noqa: BLE001 - truncated, emptied or overwritten: discard, compute again
        discard(path, error)
    value = fn(*args, **kwargs)
    try:
        data = _dumps(value)
    except (pickle.PicklingError, TypeError, AttributeError):
        return value  # holds what no other process can rebuild (a function of __main__): memory only
    write_atomic(path, data)
    return value


def stored(fn: Callable | None = None, *, depends: tuple[str, ...] = DERIVED) -> Callable:
    """Wrap a pure function of hashable, ``repr``-stable arguments (module docstring).

    ``depends`` names the packages whose source the result is a function of, besides the
    module defining ``fn``.
    """
    if fn is None:
        return functools.partial(stored, depends=depends)
    signature = inspect.signature(fn)
    memo: dict[tuple, Any] = {}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        call = tuple(bound.arguments.items())
        if call not in memo:
            memo[call] = _recall_or_compute(fn, call, depends, args, kwargs)
        return memo[call]

    wrapper.uncached = fn
    return wrapper


def stored_build(fn: Callable) -> Callable:
    """Wrap a builder of compiled kernels: :func:`stored`, stamped with ``derivations`` and ``numerics``."""
    return stored(fn, depends=BUILT)
