"""Instantiate the integrator template (:mod:`numerics._dopri_template`) for one vector field.

numba cannot cache a kernel that receives a jitted function as an argument or closure
("dynamic globals"), but it can cache one that calls a module global. So for each
``(rhs, events)`` pair the template's text, with ``from <module> import <rhs> as rhs`` in place
of its placeholder, becomes a real generated module (:func:`numerics._modules.load_module`),
whose kernels are then cached on disk across processes.

The generated source carries a hash of the source files of ``rhs``, ``events`` and every
jitted function they call by name (transitively): numba's cache keys on the generated file's
stamp only, and folds globals of those files (constants, helpers) into the compiled code,
so any edit to them must produce a different generated file.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

from numba import njit
from numba.core.dispatcher import Dispatcher

from derivations.errors import InternalError
from numerics._jit import jit
from numerics._modules import load_module

_TEMPLATE = Path(__file__).with_name("_dopri_template.py")
_PLACEHOLDER = "rhs = events = HAS_EVENTS = None  # replaced by the generated module's imports and constant\n"
_JIT_IMPORT = "from numerics._jit import jit, parallel_jit\n"
_SUPPORT = ("_rk_core.py", "_jit.py")
_KERNELS: dict[tuple[object, object], object] = {}


@jit
def no_events(t, y, params, event_times, event_states, out):
    """Write no event values: the ``events`` of a field without events (``out`` has length 0)."""


def template_source() -> str:
    """Return the text of :mod:`numerics._dopri_template`, checking it has the expected anchors."""
    text = _TEMPLATE.read_text()
    if text.count(_PLACEHOLDER) != 1 or text.count(_JIT_IMPORT) != 1:
        msg = "numerics/_dopri_template.py lost its placeholder or jit import line; this is a bug"
        raise InternalError(msg)
    return text


def _dependencies(fn: Dispatcher) -> list[Dispatcher]:
    """``fn`` and the jitted functions it calls by global name or ``module.name``, transitively."""
    seen: dict[int, Dispatcher] = {}
    stack = [fn]
    while stack:
        d = stack.pop()
        if id(d) in seen:
            continue
        seen[id(d)] = d
        code, glob = d.py_func.__code__, d.py_func.__globals__
        for name in code.co_names:
            value = glob.get(name)
            if isinstance(value, Dispatcher):
                stack.append(value)
            elif isinstance(value, ModuleType):
                stack.extend(
                    attr for n in code.co_names if isinstance(attr := getattr(value, n, None), Dispatcher)
                )
    return list(seen.values())


def _source_digest(fn: Dispatcher) -> str | None:
    """Hash of the source files of ``fn`` and its jitted dependencies; None if any has no source."""
    digest = hashlib.sha256()
    try:
        for d in _dependencies(fn):
            digest.update(inspect.getsource(d.py_func).encode())
            module = sys.modules.get(d.py_func.__module__)
            digest.update(inspect.getsource(module).encode() if module is not None else b"")
    except (OSError, TypeError):
        return None
    return digest.hexdigest()[:16]


def _import_line(fn: Dispatcher, alias: str) -> str | None:
    """``from <module> import <name> as <alias>`` if that names ``fn`` itself, else None."""
    py = fn.py_func
    module_name, name = py.__module__, py.__qualname__
    # __main__ is a different file in each process (and `__mp_main__` in spawned workers),
    # and a nested function cannot be imported at all.
    if module_name in ("__main__", "__mp_main__") or name != py.__name__:
        return None
    module = sys.modules.get(module_name)
    if module is None or getattr(module, name, None) is not fn or not getattr(module, "__file__", None):
        return None
    # Search sys.path (not sys.modules, where e.g. pytest's importlib mode registers test files that
    # no path leads to): only a module found again from its name is importable by a new process.
    parent = module_name.rpartition(".")[0]
    search = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if parent and search is None:
        return None
    spec = importlib.machinery.PathFinder.find_spec(module_name, search)
    if spec is None or not spec.origin or not os.path.exists(spec.origin):
        return None
    if not os.path.samefile(spec.origin, module.__file__):
        return None
    return f"from {module_name} import {name} as {alias}"


def _generated_source(rhs: Dispatcher, events: Dispatcher | None) -> str | None:
    """Source of the kernel module for this field, or None if it cannot be cached safely."""
    # The template's helpers and decorator options are compiled into the cached kernels too.
    support = hashlib.sha256(b"".join(_TEMPLATE.with_name(f).read_bytes() for f in _SUPPORT)).hexdigest()[:16]
    lines = [
        "# Generated by numerics._ode_kernels from numerics/_dopri_template.py; do not edit.",
        f"# {', '.join(_SUPPORT)}: sha256 {support}",
    ]
    imports = []
    for fn, alias in ((rhs, "rhs"), (events, "events")):
        if fn is None:
            imports.append("from numerics._ode_kernels import no_events as events")
            continue
        line, digest = _import_line(fn, alias), _source_digest(fn)
        if line is None or digest is None:
            return None
        imports.append(line)
        lines.append(f"# {alias}: {fn.py_func.__module__}.{fn.py_func.__qualname__}, sources sha256 {digest}")
    imports.append(f"HAS_EVENTS = {events is not None}")
    body = template_source().replace(_PLACEHOLDER, "\n".join(imports) + "\n")
    return "\n".join(lines) + "\n" + body


def kernels(rhs: Dispatcher, events: Dispatcher | None) -> object:
    """Return an object with the kernels ``solve`` and ``solve_batch`` calling ``rhs``/``events``.

    Cached on disk through a generated module when both functions can be imported by name;
    otherwise compiled in memory for this process only.
    """
    key = (rhs, events)
    if key in _KERNELS:
        return _KERNELS[key]
    source = _generated_source(rhs, events)
    if source is not None:
        built = load_module(f"ode_{rhs.py_func.__name__}", source)
    else:
        namespace = {
            "rhs": rhs,
            "events": no_events if events is None else events,
            "HAS_EVENTS": events is not None,
            "jit": njit(cache=False, error_model="numpy"),  # cache=False: exec'd code has no file to key on
            "parallel_jit": njit(cache=False, error_model="numpy", parallel=True),  # same reason
        }
        body = template_source().replace(_PLACEHOLDER, "").replace(_JIT_IMPORT, "")
        exec(compile(body, f"<tdcheck ode kernels for {rhs.py_func.__qualname__}>", "exec"), namespace)
        built = SimpleNamespace(solve=namespace["solve"], solve_batch=namespace["solve_batch"])
    _KERNELS[key] = built
    return built


def is_cached(built: object) -> bool:
    """Whether ``built`` (from :func:`kernels`) lives in a generated file numba can cache."""
    return isinstance(built, ModuleType)
