"""Instantiate a kernel template for one vector field: the one generator behind both integrators.

numba cannot cache a kernel that receives a jitted function as an argument or closure
("dynamic globals"), but it can cache one that calls a module global. So for each field a
template's text (:class:`Template`), with imports of the field's functions in place of its
placeholder line, becomes a real generated module (:func:`numerics._modules.load_module`) whose
kernels are then cached on disk across processes. A template may import helpers from the instance
of a base template for the same field (:data:`FIELD`, what every integrator does with ``rhs`` and
``events`` around its steps); the base module's name is the hash of its source, so a change there
gives the importing module a different source too.

The generated source carries a hash of the source files of the field's functions and every
jitted function they call by name (transitively), and of the template's support modules: numba's
cache keys on the generated file's stamp only, and folds globals of those files (constants,
helpers) into the compiled code, so any edit to them must produce a different generated file.
A field whose functions cannot be imported by name gets its kernels compiled in memory instead,
for this process only.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import inspect
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace

from numba import njit
from numba.core.dispatcher import Dispatcher

from derivations.errors import InternalError
from numerics._jit import jit
from numerics._modules import load_module, module_name

_HERE = Path(__file__).parent
_JIT_IMPORT = "from numerics._jit import "
# What the templates' decorators become when a field's kernels are exec'd instead of imported.
_UNCACHED = {
    "jit": njit(cache=False, error_model="numpy"),  # cache=False: exec'd code has no file to key on
    "parallel_jit": njit(cache=False, error_model="numpy", parallel=True),  # same reason
}
_INSTANCES: dict[tuple, object] = {}


@jit
def no_events(t, y, params, event_times, event_states, out):
    """Write no event values: the ``events`` of a field without events (``out`` has length 0)."""


@jit
def no_observe(t, y, params, out):
    """Write nothing: the ``observe`` of a field without one (the saved values are then the states)."""


@dataclass(frozen=True)
class Slot:
    """A function of the field that a template calls as the global ``name``.

    ``default`` stands in when the field has none (None: the field must have one); the constant
    ``flag`` tells the kernels whether it has one, so that numba prunes the code behind it.
    """

    name: str
    default: Dispatcher | None = None
    flag: str | None = None


@dataclass(frozen=True)
class Template:
    """A template file in ``numerics/`` and what its per-field instances bind.

    Parameters
    ----------
    file : str
        The template, e.g. ``"_dopri_template.py"``; read as text, never imported for use.
    prefix : str
        Generated modules are named ``<prefix>_<rhs name>_<hash of source>``.
    slots : tuple of Slot
        The field's functions the template calls.
    support : tuple of str
        Real modules of ``numerics/`` whose code is compiled into the template's kernels.
    base : Template or None
        The template whose instance for the same field provides ``imports``.
    imports : tuple of str
        Names the template takes from the instance of ``base``.
    """

    file: str
    prefix: str
    slots: tuple[Slot, ...]
    support: tuple[str, ...]
    base: Template | None = None
    imports: tuple[str, ...] = ()

    @property
    def placeholder(self) -> str:
        """The template's line that the generated module's imports and constants replace."""
        names = [s.name for s in self.slots] + list(self.imports) + [s.flag for s in self.slots if s.flag]
        return " = ".join(names) + " = None  # set when generated\n"

    def names(self) -> tuple[str, ...]:
        """Return the field functions an instance needs: this template's slots and its bases'."""
        own = tuple(s.name for s in self.slots)
        inherited = self.base.names() if self.base is not None else ()
        return own + tuple(n for n in inherited if n not in own)

    def text(self) -> str:
        """Return the template's text, checking it has its placeholder and one jit import line."""
        text = (_HERE / self.file).read_text()
        jit_lines = [line for line in text.splitlines() if line.startswith(_JIT_IMPORT)]
        if text.count(self.placeholder) != 1 or len(jit_lines) != 1:
            msg = (
                f"numerics/{self.file} lost its placeholder line {self.placeholder.strip()!r} or its "
                f"jit import line; this is a bug"
            )
            raise InternalError(msg)
        return text


#: the field's events, and whether it has any
EVENTS = Slot("events", no_events, "HAS_EVENTS")
#: the field's observer (the values saved instead of the state), and whether it has one
OBSERVE = Slot("observe", no_observe, "HAS_OBSERVER")
#: What every integrator does with the field's ``rhs``, ``events`` and ``observe`` around its own steps.
FIELD = Template("_field_template.py", "field", (Slot("rhs"), EVENTS, OBSERVE), ("_rk_core.py", "_jit.py"))


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


@functools.cache
def _source_digest(fn: Dispatcher) -> str | None:
    """Hash of the source files of ``fn`` and its jitted dependencies; None if any has no source.

    Once per process: a template and its base both hash the field's functions, and a field's
    generated module can be long.
    """
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
    module, name = py.__module__, py.__qualname__
    # __main__ is a different file in each process (and `__mp_main__` in spawned workers),
    # and a nested function cannot be imported at all.
    if module in ("__main__", "__mp_main__") or name != py.__name__:
        return None
    loaded = sys.modules.get(module)
    if loaded is None or getattr(loaded, name, None) is not fn or not getattr(loaded, "__file__", None):
        return None
    # Search sys.path (not sys.modules, where e.g. pytest's importlib mode registers test files that
    # no path leads to): only a module found again from its name is importable by a new process.
    parent = module.rpartition(".")[0]
    search = getattr(sys.modules.get(parent), "__path__", None) if parent else None
    if parent and search is None:
        return None
    spec = importlib.machinery.PathFinder.find_spec(module, search)
    if spec is None or not spec.origin or not os.path.exists(spec.origin):
        return None
    if not os.path.samefile(spec.origin, loaded.__file__):
        return None
    return f"from {module} import {name} as {alias}"


def _prefix(template: Template, functions: dict[str, Dispatcher | None]) -> str:
    """Return the name of the field's module of ``template`` up to the hash of its source."""
    return f"{template.prefix}_{functions['rhs'].py_func.__name__}"


def generated_source(
    template: Template, functions: dict[str, Dispatcher | None], base_module: str | None = None
) -> str | None:
    """Source of the module instantiating ``template`` for ``functions`` (slot name to function or None).

    None if it cannot be cached safely: some function (of this template or of its base) cannot be
    imported by name from a new process, or has no source to hash. ``base_module`` names the
    generated module of the base template, if known; otherwise its name follows from its source.
    """
    support = hashlib.sha256(b"".join((_HERE / f).read_bytes() for f in template.support)).hexdigest()[:16]
    lines = [
        f"# Generated by numerics._kernel_modules from numerics/{template.file}; do not edit.",
        f"# {', '.join(template.support)}: sha256 {support}",
    ]
    imports = []
    for slot in template.slots:
        fn = functions[slot.name]
        if fn is None:
            imports.append(_import_line(slot.default, slot.name))
            continue
        line, digest = _import_line(fn, slot.name), _source_digest(fn)
        if line is None or digest is None:
            return None
        imports.append(line)
        where = f"{fn.py_func.__module__}.{fn.py_func.__qualname__}"
        lines.append(f"# {slot.name}: {where}, sources sha256 {digest}")
    if template.base is not None:
        if base_module is None:
            base_source = generated_source(template.base, functions)
            if base_source is None:
                return None
            base_module = module_name(_prefix(template.base, functions), base_source)
        imports.append(f"from {base_module} import {', '.join(template.imports)}")
    imports += [f"{s.flag} = {functions[s.name] is not None}" for s in template.slots if s.flag]
    body = template.text().replace(template.placeholder, "\n".join(imports) + "\n")
    return "\n".join(lines) + "\n" + body


def instantiate(template: Template, functions: dict[str, Dispatcher | None]) -> object:
    """Return the instance of ``template`` for a field's ``functions``: its kernels as attributes.

    A generated module, cached on disk, when every function can be imported by name
    (:func:`generated_source`); otherwise the template's code exec'd in memory for this process only.
    ``functions`` maps each of ``template.names()`` to the field's function (None where it has none).
    """
    if set(functions) != set(template.names()):
        msg = (
            f"instantiate({template.file}) needs functions {template.names()}, got {tuple(functions)}; "
            "this is a bug"
        )
        raise InternalError(msg)
    key = (template.file, *(functions[n] for n in template.names()))
    if key in _INSTANCES:
        return _INSTANCES[key]
    base = None
    if template.base is not None:
        base = instantiate(template.base, {n: functions[n] for n in template.base.names()})
    # A module in memory only cannot be imported by a generated one.
    source = None
    if base is None or is_cached(base):
        source = generated_source(template, functions, base.__name__ if base is not None else None)
    if source is not None:
        built = load_module(_prefix(template, functions), source)
    else:
        built = _exec_instance(template, functions, base)
    _INSTANCES[key] = built
    return built


def _exec_instance(
    template: Template, functions: dict[str, Dispatcher | None], base: object | None
) -> SimpleNamespace:
    """Exec the template's code with the field's functions (or their defaults) as globals."""
    namespace: dict[str, object] = {}
    for slot in template.slots:
        fn = functions[slot.name]
        namespace[slot.name] = slot.default if fn is None else fn
        if slot.flag:
            namespace[slot.flag] = fn is not None
    namespace.update({name: getattr(base, name) for name in template.imports})
    lines = template.text().replace(template.placeholder, "").splitlines(keepends=True)
    jit_line = lines.pop(next(i for i, line in enumerate(lines) if line.startswith(_JIT_IMPORT)))
    names = [name.strip() for name in jit_line[len(_JIT_IMPORT):].split(",")]
    namespace.update({name: _UNCACHED[name] for name in names})
    body = "".join(lines)
    rhs = functions["rhs"].py_func.__qualname__
    exec(compile(body, f"<tdcheck {template.prefix} kernels for {rhs}>", "exec"), namespace)
    return SimpleNamespace(**{k: v for k, v in namespace.items() if not k.startswith("__")})


def is_cached(built: object) -> bool:
    """Whether ``built`` (from :func:`instantiate`) lives in a generated file numba can cache."""
    return isinstance(built, ModuleType)
