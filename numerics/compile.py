"""SymPy → generated ``.py`` module → cached numba kernels.

The kernel ladder (STYLE.md): :func:`scalar_kernel` (one point) → :func:`grid_kernel` (a ``prange``
loop writing into ``out``, behind a Python wrapper that validates and broadcasts) → the caller.
:func:`vector_field` generates ``rhs(t, y, params, out)`` and ``events(...)`` for
:mod:`numerics.ode`.

Pipeline, for all outputs of one kernel together:

1. ``stable``: the caller's stable forms replace sub-expressions (``xreplace``, else ``subs``);
   a key that matches nothing is an error, not a silent no-op;
2. rewrites from :mod:`sympy.codegen.rewriting`: ``exp(x) - 1 → expm1(x)``,
   ``log(1 + x) → log1p(x)``, ``log(e^a + e^b) → logaddexp(a, b)``;
3. a whitelist check (:func:`numerics.printer.check_supported`): unknown functions and Piecewise
   without a default branch are refused, naming the sub-expression;
4. symbols renamed to valid, deterministic identifiers; ``Sum``/``Product`` become generated
   helper functions with an explicit loop (bounds cast to int, SymPy's Karr convention for
   reversed bounds, NaN for bounds that are NaN, infinite or beyond int64);
5. ``sympy.cse`` over all outputs; :class:`~numerics.printer.NumbaPrinter` prints them.

The module source is a pure function of the inputs (and of the sources of :mod:`numerics._jit`
and of the helper modules of :data:`numerics.printer.HELPER_MODULES`, whose hashes it records), so
its file name, its time stamp and numba's on-disk cache are reused across processes. Kernels use
NumPy's error model and never raise: a division by zero gives inf/NaN; the Python wrappers
validate inputs instead.

Arithmetic inside kernels is float64: integer arguments (symbols with ``integer=True``) are typed
int64 at the boundary and converted once, so that polynomials in L cannot overflow int64 silently.

Stable forms (``stable=``)
--------------------------
A dict ``{sub-expression: replacement}`` applied before anything else. For the induction-head
paper (spec §8)::

    M = (1 - exp(-p*(L - 2))) / (1 - exp(-p))
    stable = {M: Expm1Ratio(L - 2, -p)}          # expm1(-p(L-2))/expm1(-p), = L-2 at p = 0
    m = (exp(-p) - (L-2)*exp(-p*(L-2)) + (L-3)*exp(-p*(L-1))) / (1 - exp(-p))**2
    stable = {m: Sum(s*exp(-p*s), (s, 1, L - 3))}  # the closed form cancels at small p

The replacement must equal the key on the domain; tests should check it (mpmath) where it matters.

One-off evaluation
------------------
:func:`array_function` runs the same preparation (stable forms, rewrites, whitelist, ``cse``) but
prints NumPy code (:mod:`numerics.array_eval`): nothing is compiled, so it costs milliseconds where
a cold numba kernel costs seconds. Use it for expressions evaluated once per run (a printed bound
on a trajectory's samples, a closed form on a grid); use :func:`grid_kernel` where the evaluation
is hot. Sums and products need loops and are refused there.
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import sys
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import sympy as sp
from sympy.codegen.rewriting import expm1_opt, log1p_opt, logaddexp_opt, optimize

from derivations.errors import InvalidArgument, close_matches
from numerics._modules import dependency_digest, load_module, memo_key, recall, remember
from numerics.array_eval import ArrayFunction, ArrayPrinter
from numerics.grid_kernel import GridKernel
from numerics.printer import (
    HELPER_MODULES,
    EventState,
    EventTime,
    Expm1Ratio,
    NumbaPrinter,
    check_supported,
    helper_imports,
)

__all__ = [
    "ArrayFunction",
    "EventSpec",
    "Expm1Ratio",
    "GridKernel",
    "array_function",
    "event_state",
    "event_time",
    "grid_kernel",
    "kernel_source",
    "scalar_kernel",
    "scalar_source",
    "vector_field",
]

#: Rewrites applied to every expression, in this order. Not ``logsumexp_2terms_opt``: in sympy 1.14
#: it rewrites log(e^a + e^b) to max + log1p(exp(min)), dropping the shift by max (wrong unless
#: min = 0); ``logaddexp_opt`` gives the ``logaddexp`` node, printed as ``numerics.stable.logaddexp``.
REWRITES = (expm1_opt, log1p_opt, logaddexp_opt)

_HEADER_LIMIT = 400  # characters of each SymPy expression kept in the header comment

_RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | {
    "math", "np", "prange", "jit", "parallel_jit", "range", "int", "float", "abs", "max", "min",
    "out", "y", "t", "params", "event_times", "event_states", "rhs", "events", "True", "False", "None",
    *HELPER_MODULES,
}  # fmt: skip




# ----------------------------------------------------------------------------------------------
# Public SymPy-side objects


@dataclass(frozen=True)
class EventSpec:
    """A signed event function whose zero the integrator locates.

    Parameters
    ----------
    name
        Identifier of the event (``"T_II"``); other events refer to it by this name.
    expr
        SymPy expression in the state, the parameters, the time and the placeholders
        :func:`event_time` / :func:`event_state` of *other* events.
    direction
        ``+1`` (upward crossings only), ``-1`` (downward only) or ``0`` (both).
    terminal
        Whether the integration stops at this event.
    """

    name: str
    expr: sp.Expr
    direction: int = 0
    terminal: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.isidentifier():
            msg = f"EventSpec name={self.name!r} must be an identifier such as 'T_II'"
            raise InvalidArgument(msg)
        if self.direction not in (-1, 0, 1):
            msg = f"EventSpec {self.name!r}: direction={self.direction!r} must be -1, 0 or +1"
            raise InvalidArgument(msg)


def event_time(event: str) -> EventTime:
    """Return the placeholder for the time at which ``event`` fired; prints as ``event_times[k]``."""
    return EventTime(event)


def event_state(event: str, state: sp.Symbol | str) -> EventState:
    """Return the placeholder for ``state`` when ``event`` fired; prints as ``event_states[k, j]``."""
    return EventState(event, state.name if isinstance(state, sp.Symbol) else str(state))


# ----------------------------------------------------------------------------------------------
# Expression preparation


def _sympify_all(exprs: Iterable[Any], kernel: str) -> list[sp.Expr]:
    out = []
    for i, e in enumerate(exprs):
        try:
            e = sp.sympify(e)
        except (sp.SympifyError, TypeError) as err:
            msg = f"kernel {kernel!r}: output {i}={e!r} is not a SymPy expression"
            raise InvalidArgument(msg) from err
        if not isinstance(e, sp.Expr):
            msg = (
                f"kernel {kernel!r}: output {i}={e} is a {type(e).__name__}, not a number-valued "
                "expression; wrap conditions in Piecewise"
            )
            raise InvalidArgument(msg)
        out.append(e)
    return out


def _apply_stable(exprs: list[sp.Expr], stable: Mapping | None) -> tuple[list[sp.Expr], set]:
    """Apply the stable forms; return the new expressions and the keys that matched something."""
    matched = set()
    for key, value in (stable or {}).items():
        key, value = sp.sympify(key), sp.sympify(value)
        replaced = [e.xreplace({key: value}) for e in exprs]
        if replaced == exprs:
            # A product or sum embedded in a larger Mul/Add is not one subtree; subs finds it.
            replaced = [e.subs(key, value) for e in exprs]
        if replaced != exprs:
            matched.add(key)
        exprs = replaced
    return exprs, matched


def _check_stable_matched(stable: Mapping | None, matched: set, kernel: str) -> None:
    for key in stable or {}:
        if sp.sympify(key) not in matched:
            msg = (
                f"kernel {kernel!r}: stable form for {key} matches no sub-expression of the outputs; "
                "keys are matched structurally (xreplace, then subs): pass the expression exactly "
                "as it occurs"
            )
            raise InvalidArgument(msg)


def _rewrite(exprs: list[sp.Expr]) -> list[sp.Expr]:
    return [optimize(e, REWRITES) for e in exprs]


def _identifier(name: str) -> str:
    chars = []
    for c in name:
        if c.isascii() and (c.isalnum() or c == "_"):
            chars.append(c)
            continue
        uname = unicodedata.name(c, "")
        if "LETTER" in uname:
            word = uname.split()[-1].lower()
            chars.append(("_" if chars else "") + (word.capitalize() if "CAPITAL" in uname else word))
        else:
            chars.append("_")
    ident = "".join(chars) or "v"
    if ident[0].isdigit() or ident[0] == "_":
        ident = "v" + ident
    return ident


def _assign_names(symbols: Sequence[sp.Symbol], reserved: Iterable[str]) -> dict[sp.Symbol, sp.Symbol]:
    """Map each symbol to a plain Symbol whose name is a valid, unique, non-reserved identifier."""
    taken = set(_RESERVED) | set(reserved)
    mapping = {}
    for s in symbols:
        base = _identifier(s.name)
        if base in taken:
            base += "_"
        ident, n = base, 2
        while ident in taken:
            ident, n = f"{base}{n}", n + 1
        taken.add(ident)
        mapping[s] = sp.Symbol(ident)
    return mapping


def _check_args(args: Sequence[sp.Symbol], what: str, kernel: str) -> list[sp.Symbol]:
    args = list(args)
    for a in args:
        if not isinstance(a, sp.Symbol) or isinstance(a, EventTime | EventState):
            msg = f"kernel {kernel!r}: {what} entry {a!r} is not a SymPy Symbol"
            raise InvalidArgument(msg)
    if len(set(args)) != len(args):
        dup = sorted({str(a) for a in args if args.count(a) > 1})
        msg = f"kernel {kernel!r}: {what} lists {', '.join(dup)} more than once"
        raise InvalidArgument(msg)
    return args


def _check_name(name: str) -> str:
    if (
        not isinstance(name, str)
        or not name.isidentifier()
        or keyword.iskeyword(name)
        or name.startswith("_")
    ):
        msg = (
            f"name={name!r} must be a Python identifier not starting with '_' (it names the generated "
            "function and module), e.g. 'M_of_p'"
        )
        raise InvalidArgument(msg)
    if name in _RESERVED:
        msg = f"name={name!r} is reserved in generated code; choose another, e.g. {name}_k"
        raise InvalidArgument(msg)
    return name


def _check_free_symbols(exprs: list[sp.Expr], allowed: set[sp.Symbol], kernel: str, hint: str) -> None:
    for i, e in enumerate(exprs):
        unknown = {
            s for s in e.free_symbols if s not in allowed and not isinstance(s, EventTime | EventState)
        }
        if unknown:
            names = ", ".join(sorted(map(str, unknown)))
            msg = f"kernel {kernel!r}: output {i} uses symbols not among the arguments: {names}; {hint}"
            raise InvalidArgument(msg)


def _prepare(exprs, stable, kernel: str, allowed: set[sp.Symbol], hint: str) -> tuple[list[sp.Expr], set]:
    """Sympify, apply stable forms and rewrites, check; return the expressions and the matched keys."""
    exprs, matched = _apply_stable(_sympify_all(exprs, kernel), stable)
    exprs = _rewrite(exprs)
    for i, e in enumerate(exprs):
        check_supported(e, f"kernel {kernel!r}, output {i}")
    _check_free_symbols(exprs, allowed, kernel, hint)
    return exprs, matched


def _shared_exponentials(exprs: list[sp.Expr]) -> tuple[list[sp.Expr], list[tuple[sp.Symbol, sp.Expr]]]:
    """Replace exp(n·x) (n a non-zero integer) by E**n with E = exp(x), when x appears with two or more n.

    Returns the new expressions and the (E, x) definitions. Products of E are cheaper than exps
    and keep every power of exp(x) consistent.
    """
    by_arg: dict[sp.Expr, set[int]] = {}
    for e in exprs:
        for node in e.atoms(sp.exp):
            coeff, rest = node.args[0].as_coeff_Mul()
            if coeff.is_Integer and rest != 1 and not rest.has(sp.Sum):
                by_arg.setdefault(rest, set()).add(int(coeff))
    shared = [arg for arg, ns in sorted(by_arg.items(), key=lambda kv: sp.default_sort_key(kv[0])) if len(ns) > 1]
    if not shared:
        return exprs, []
    definitions, replace = [], {}
    for i, arg in enumerate(shared):
        sym = sp.Symbol(f"_ex{i}", positive=True)
        definitions.append((sym, arg))
        for n in by_arg[arg]:
            replace[sp.exp(n * arg)] = sym**n
    return [e.xreplace(replace) for e in exprs], definitions


def _canonical_loop(node: sp.Sum | sp.Product) -> sp.Basic:
    """``node`` with its bound variables renamed to fixed symbols (a key for equal loops)."""
    names = {var: sp.Symbol(f"_bound{i}", **var.assumptions0) for i, (var, *_) in enumerate(node.limits)}
    return node.xreplace(names)


def _geometric_split(term: sp.Expr, k: sp.Symbol) -> tuple[sp.Expr, sp.Expr, sp.Expr] | None:
    """Write ``term`` as rest(k)·exp(slope·k + offset) when its exponentials are affine in ``k``.

    Returns (rest, slope, offset), or None when ``term`` has no such factor or ``rest`` still
    holds an exponential of ``k``. Geometric sums (M(p), m(p), softmax normalisers) then cost one
    ``exp`` per sum instead of one per term.
    """
    factors = sp.Mul.make_args(term)
    exponent, rest = sp.Integer(0), []
    for factor in factors:
        if isinstance(factor, sp.exp) and factor.has(k):
            exponent += factor.args[0]
        elif (factor.is_Pow and isinstance(factor.base, sp.exp) and factor.base.has(k)
              and not factor.exp.has(k)):
            exponent += factor.base.args[0] * factor.exp
        else:
            rest.append(factor)
    if exponent == 0:
        return None
    rest_expr = sp.Mul(*rest)
    if rest_expr.has(sp.exp) and any(isinstance(a, sp.exp) and a.has(k) for a in sp.preorder_traversal(rest_expr)):
        return None
    exponent = sp.expand(exponent)
    slope = sp.diff(exponent, k)
    if slope.has(k) or slope == 0:
        return None
    return rest_expr, slope, sp.expand(exponent - slope * k)


#: geometric sums of more terms than this are evaluated in closed form (when their weights allow)
LOOP_TERMS = 128


def _polynomial_weights(rests: list[sp.Expr], k: sp.Symbol) -> list[list[sp.Expr]] | None:
    """The coefficients [r₀, r₁, (r₂)] in k of each weight, or None unless every one is a polynomial of degree ≤ 2."""
    out = []
    for rest in rests:
        expanded = sp.expand(rest)
        if not expanded.is_polynomial(k):
            return None
        poly = sp.Poly(expanded, k)
        if poly.degree() > 2 or any(c.has(k) for c in poly.all_coeffs()):
            return None
        out.append(list(reversed(poly.all_coeffs())))
    return out


def _header_expr(expr: sp.Basic) -> str:
    text = sp.sstr(expr)
    if len(text) > _HEADER_LIMIT:
        text = text[:_HEADER_LIMIT] + " ..."
    return text.encode("ascii", "backslashreplace").decode()


# ----------------------------------------------------------------------------------------------
# Module writer


class _ModuleWriter:
    """Collects the functions of one generated module; turns sums into loop helpers."""

    def __init__(self, header: list[str], closed_sums: bool = True):
        self.header = header
        self.closed_sums = closed_sums
        self.chunks: list[str] = []
        self.helpers: list[str] = []
        self._loops: dict[sp.Basic, sp.Expr] = {}

    def printer(self, **settings) -> NumbaPrinter:
        return NumbaPrinter({**settings, "helpers": frozenset(self.helpers)})

    def extract_loops(self, expr: sp.Basic) -> sp.Basic:
        if isinstance(expr, sp.Sum | sp.Product):
            # One helper per distinct sum, so that cse sees repeated sums as one call; the key
            # renames the bound variables, so sums that differ only in their dummies share it.
            key = _canonical_loop(expr)
            if key not in self._loops:
                self._loops[key] = self._loop_helper(expr)
            return self._loops[key]
        if expr.is_Atom or not expr.args:
            return expr
        args = [self.extract_loops(a) for a in expr.args]
        if all(a is b for a, b in zip(args, expr.args, strict=True)):
            return expr
        return expr.func(*args)

    def _loop_helper(self, node: sp.Sum | sp.Product) -> sp.Expr:
        is_sum = isinstance(node, sp.Sum)
        term, limits = node.function, node.limits
        var, lo, hi = limits[-1]
        if len(limits) > 1:
            term = type(node)(term, *limits[:-1])
        index = len(self.helpers)
        name = f"_{'sum' if is_sum else 'prod'}{index}"
        self.helpers.append(name)  # reserve the number before nested helpers take theirs
        free = sorted(node.free_symbols, key=str)
        params = {s: s if type(s) is sp.Symbol else sp.Symbol(f"_p{i}") for i, s in enumerate(free)}
        k = sp.Symbol(f"_k{index}")
        term = self.extract_loops(term.xreplace({**params, var: k}))
        lo = self.extract_loops(sp.sympify(lo).xreplace(params))
        hi = self.extract_loops(sp.sympify(hi).xreplace(params))
        plist = [params[s] for s in free]
        comment = (f"    # {'Sum' if is_sum else 'Product'} over {var} from {_header_expr(limits[-1][1])} "
                   f"to {_header_expr(limits[-1][2])} of {_header_expr(node.function)}")
        geometric = _geometric_split(term, k) if is_sum else None
        if geometric is not None:
            rest, slope, offset = geometric
            coeff, base = slope.as_coeff_Mul()
            self.chunks.append(self._geometric_helper(name, plist, lo, hi, base, [(rest, coeff, offset)], k,
                                                      comment, scalar=True))
            return sp.Function(name)(*free)
        lines, (lo_s, hi_s, *_) = self._print_block([lo, hi], cse=False)
        body, (term_s,) = self._print_block([term])
        code = [
            "@jit",
            f"def {name}({', '.join(map(str, plist))}):",
            comment,
            *(f"    {line}" for line in lines),
            f"    _lo = {lo_s}",
            f"    _hi = {hi_s}",
            "    if not (abs(_lo) < 9.0e18 and abs(_hi) < 9.0e18):",
            "        return math.nan  # NaN, inf or beyond int64: no loop to run",
            "    _start = int(_lo)",
            "    _stop = int(_hi) + 1",
            "    _forward = True",
            "    if _stop < _start:",
            "        # Karr's convention, as SymPy: a reversed range gives the inverse over the gap.",
            "        _start, _stop = _stop, _start",
            "        _forward = False",
            f"    _acc = {'0.0' if is_sum else '1.0'}",
            "    for _i in range(_start, _stop):",
            f"        {k} = float(_i)",
            *(f"        {line}" for line in body),
            f"        _acc {'+' if is_sum else '*'}= {term_s}",
        ]
        if is_sum:
            code.append("    return _acc if _forward else -_acc")
        else:
            code.append("    return _acc if _forward else 1.0 / _acc")
        self.chunks.append("\n".join(code))
        return sp.Function(name)(*free)

    def _print_block(
        self, exprs: list[sp.Basic], cse: bool = True, **settings
    ) -> tuple[list[str], list[str]]:
        if cse:
            replacements, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("_x"), order="canonical")
        else:
            replacements, reduced = [], exprs
        printer = self.printer(**settings)
        lines = [f"{printer.doprint(sym)} = {printer.doprint(value)}" for sym, value in replacements]
        return lines, [printer.doprint(e) for e in reduced]

    def body(self, exprs: list[sp.Expr], **settings) -> tuple[list[str], list[str]]:
        """Return (statements, output expressions) for the outputs, after loop extraction and cse.

        Geometric sums over one range whose slopes are positive multiples of one another are
        computed in one fused loop; exponentials exp(n·x) with integer n share one exp(x).
        """
        exprs, fused = self._fuse_geometric_sums(exprs)
        exprs = [self.extract_loops(e) for e in exprs]
        exprs, powers = _shared_exponentials(exprs)
        printer = self.printer(**settings)
        pre = fused + [f"{sym} = math.exp({printer.doprint(arg)})" for sym, arg in powers]
        lines, outs = self._print_block(exprs, **settings)
        return pre + lines, outs

    def _fuse_geometric_sums(self, exprs: list[sp.Expr]) -> tuple[list[sp.Expr], list[str]]:
        sums = set().union(*(e.atoms(sp.Sum) for e in exprs)) if exprs else set()
        nested = set().union(*(s.function.atoms(sp.Sum) for s in sums)) if sums else set()
        groups: dict[tuple, list[tuple[sp.Sum, tuple]]] = {}
        for node in sorted(sums - nested, key=sp.default_sort_key):
            if len(node.limits) != 1:
                continue
            var, lo, hi = node.limits[0]
            k = sp.Symbol("_kf")
            split = _geometric_split(node.function.xreplace({var: k}), k)
            if split is None:
                continue
            rest, slope, offset = split
            coeff, base = slope.as_coeff_Mul()
            if rest.has(sp.Sum):
                continue
            # slopes c·base with c of one sign fall in one group: their terms shrink the same way
            groups.setdefault((lo, hi, base, coeff > 0), []).append((node, (rest, coeff, offset)))
        replace, statements = {}, []
        for (lo, hi, base, _), members in groups.items():
            if len(members) < 2:
                continue
            unique = {_canonical_loop(n): (n, parts) for n, parts in members}
            if len(unique) < 2:
                continue
            name = f"_fsum{len(self.helpers)}"
            self.helpers.append(name)
            nodes = list(unique.values())
            symbols = [sp.Symbol(f"{name[1:]}_{i}") for i in range(len(nodes))]
            free = sorted(set().union(*(n.free_symbols for n, _ in nodes)), key=str)
            comment = f"    # {len(nodes)} geometric sums over {_header_expr(lo)}..{_header_expr(hi)} in one loop"
            self.chunks.append(self._geometric_helper(name, free, lo, hi, base, [parts for _, parts in nodes],
                                                      sp.Symbol("_kf"), comment))
            statements.append(f"{', '.join(map(str, symbols))} = {name}({', '.join(map(str, free))})")
            for (node, _), sym in zip(nodes, symbols, strict=True):
                replace[node] = sym
            for node, _ in members:
                replace.setdefault(node, replace[unique[_canonical_loop(node)][0]])
        if not replace:
            return exprs, []
        return [e.xreplace(replace) for e in exprs], statements

    def _geometric_helper(self, name, free, lo, hi, base, parts, k, comment, scalar=False) -> str:
        """One loop over k = lo..hi for the sums Σ rest_j(k)·exp(c_j·base·k + offset_j), c_j of one sign.

        Each term is a product of a factor that starts at the end with the largest exponent and
        shrinks by exp(-|c_j·base|) per step (one exp per sum, and an underflow only drops terms
        that are negligible anyway). Returns the tuple of sums, or the one sum when ``scalar``.
        """
        # offset = c·base·shift with shift free of the base's symbols (e.g. −2p(L−1) = 2p·(1−L)): the
        # exponent at the first index is then c·base·(first + shift), with no cancellation between
        # large terms (c·base·first and the offset can each be thousands while their sum is small)
        shifts = [sp.cancel(offset / (coeff * base)) for _, coeff, offset in parts]
        shifted = [not (shift.free_symbols & base.free_symbols) and not shift.has(sp.exp) for shift in shifts]
        lines, (lo_s, hi_s, base_s, *offsets) = self._print_block(
            [lo, hi, base, *(shift if use else offset for (_, _, offset), shift, use in zip(parts, shifts, shifted,
                                                                                       strict=True))], cse=False)
        body, terms = self._print_block([rest for rest, _, _ in parts])
        polys = _polynomial_weights([rest for rest, _, _ in parts], k) if self.closed_sums else None
        nan = "math.nan" if scalar else f"({', '.join(['math.nan'] * len(parts))},)"
        code = [
            "@jit",
            f"def {name}({', '.join(map(str, free))}):",
            comment,
            *(f"    {line}" for line in lines),
            f"    _lo = {lo_s}",
            f"    _hi = {hi_s}",
            "    if not (abs(_lo) < 9.0e18 and abs(_hi) < 9.0e18):",
            f"        return {nan}  # NaN, inf or beyond int64: no loop to run",
            "    _start = int(_lo)",
            "    _stop = int(_hi) + 1",
            "    _sign = 1.0",
            "    if _stop < _start:",
            "        # Karr's convention, as SymPy: a reversed range gives the inverse over the gap.",
            "        _start, _stop = _stop, _start",
            "        _sign = -1.0",
            f"    _base = {base_s}",
            f"    if {float(parts[0][1])!r} * _base > 0.0:",
            "        _first, _last, _step = _stop - 1, _start - 1, -1",
            "    else:",
            "        _first, _last, _step = _start, _stop, 1",
        ]
        for j, ((_, coeff, _), offset_s, use) in enumerate(zip(parts, offsets, shifted, strict=True)):
            start = (f"{float(coeff)!r} * _base * (float(_first) + {offset_s})" if use
                     else f"{float(coeff)!r} * _base * float(_first) + {offset_s}")
            code += [f"    _acc{j} = 0.0", f"    _factor{j} = math.exp({start})"]
        sums = ", ".join(f"_sign * _acc{j}" for j in range(len(parts)))
        if polys is not None:
            # short ranges stay loops: LLVM vectorises them to about a nanosecond per term, less
            # than the closed forms' exponentials and series below LOOP_TERMS terms
            code += [f"    if _stop - _start > {LOOP_TERMS}:",
                     *(f"    {line}" for line in self._closed_sums(parts, polys)),
                     f"        return {sums}" if scalar else f"        return ({sums},)"]
        code += [f"    _ratio{j} = math.exp(-abs({float(coeff)!r} * _base))" for j, (_, coeff, _) in enumerate(parts)]
        code += ["    for _i in range(_first, _last, _step):", f"        {k} = float(_i)",
                 *(f"        {line}" for line in body)]
        for j, term in enumerate(terms):
            code += [f"        _acc{j} += ({term}) * _factor{j}", f"        _factor{j} *= _ratio{j}"]
        code.append(f"    return {sums}" if scalar else f"    return ({sums},)")
        return "\n".join(code)

    def _closed_sums(self, parts, polys) -> list[str]:
        """The sums of :meth:`_geometric_helper` in closed form, for weights that are polynomials of degree ≤ 2.

        With k = first + step·i (i = 0 … n−1, the factor largest at i = 0 and shrinking by
        e^{−γ} per step, γ = |c·base|), a weight r₀ + r₁k + r₂k² is a₀ + a₁i + a₂i² with
        a₀ = r₀ + F(r₁ + r₂F), a₁ = step·(r₁ + 2r₂F), a₂ = r₂ (F = first, step = ±1), so the sum is
        factor·(a₀S₀ + a₁S₁ + a₂S₂) with S_j = Σ_{i<n} i^j e^{−γi} from
        :func:`numerics.geometric_sums.geometric_moment`: O(1) instead of O(n), within a few ulp of
        each S_j (guarded regimes; see that module).
        """
        body, terms = self._print_block([c for poly in polys for c in poly])
        code = [*(f"    {line}" for line in body), "    _n = float(_stop - _start)", "    _F = float(_first)",
                "    _s = float(_step)"]
        position = 0
        for j, ((_, coeff, _), poly) in enumerate(zip(parts, polys, strict=True)):
            r = terms[position:position + len(poly)] + ["0.0"] * (3 - len(poly))
            position += len(poly)
            code += [f"    _gamma{j} = abs({float(coeff)!r} * _base)",
                     f"    _r0, _r1, _r2 = {r[0]}, {r[1]}, {r[2]}",
                     "    _a0 = _r0 + _F * (_r1 + _r2 * _F)"]
            total = f"_a0 * geometric_moment0(_gamma{j}, _n)"
            if len(poly) > 1:
                code.append("    _a1 = _s * (_r1 + 2.0 * _r2 * _F)")
                total += f" + _a1 * geometric_moment1(_gamma{j}, _n)"
            if len(poly) > 2:
                total += f" + _r2 * geometric_moment2(_gamma{j}, _n)"
            code.append(f"    _acc{j} = _factor{j} * ({total})")
        return code

    def add(self, code: str) -> None:
        self.chunks.append(code)

    def source(self) -> str:
        lines = [
            "# Generated by numerics.compile from SymPy expressions; do not edit.",
            "# The file is named after the hash of this text; numba caches what it defines.",
            f"# helper modules + numerics._jit sha256: {dependency_digest()}",
            *self.header,
            "import math",
            "",
            "from numba import prange",
            "",
            "from numerics._jit import jit, parallel_jit",
            *helper_imports(),
        ]
        return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(self.chunks) + "\n"


def _dtype_name(sym: sp.Symbol) -> str:
    return "int64" if sym.is_integer else "float64"


def _load(name: str, writer: _ModuleWriter) -> ModuleType:
    return load_module(name, writer.source())


def kernel_source(kernel: Any) -> str:
    """Return the generated source of a kernel (a dispatcher, :class:`GridKernel` or vector field)."""
    module = getattr(kernel, "module", None)
    if module is None:
        dispatcher = getattr(kernel, "rhs", kernel)  # a VectorField: rhs and events share a module
        module = sys.modules[dispatcher.py_func.__module__]
    return Path(module.__file__).read_text()


# ----------------------------------------------------------------------------------------------
# Scalar kernels


def _scalar_function(
    writer: _ModuleWriter, exprs: list[sp.Expr], args: list[sp.Symbol], names: dict, fname: str
) -> str:
    exprs = [e.xreplace(names) for e in exprs]
    lines, outs = writer.body(exprs)
    params = [str(names[a]) for a in args]
    converts = [f"    {names[a]} = float({names[a]})" for a in args if a.is_integer]
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return "\n".join(
        [
            "@jit",
            f"def {fname}({', '.join(params)}):",
            *converts,
            *(f"    {ln}" for ln in lines),
            f"    return {ret}",
        ]
    )


def _scalar_header(kind: str, name: str, exprs, args, stable) -> list[str]:
    sig = ", ".join(f"{a}: {_dtype_name(a)}" for a in args)
    header = [f"# {kind} {name}({sig})"]
    header += [f"#   [{i}] {_header_expr(e)}" for i, e in enumerate(exprs)]
    if stable:
        header.append("# stable forms:")
        header += [
            f"#   {_header_expr(sp.sympify(k))}  ->  {_header_expr(sp.sympify(v))}" for k, v in stable.items()
        ]
    return header


def _scalar_signature(args: list[sp.Symbol], n_out: int) -> str:
    ret = "float64" if n_out == 1 else f"UniTuple(float64, {n_out})"
    return f"{ret}({', '.join(_dtype_name(a) for a in args)})"


def _build_scalar(expr_or_exprs, args, name, stable, kind):
    name = _check_name(name)
    single = isinstance(expr_or_exprs, sp.Basic | int | float | str)
    raw = [expr_or_exprs] if single else list(expr_or_exprs)
    if not raw:
        msg = f"kernel {name!r}: no expressions to compile"
        raise InvalidArgument(msg)
    args = _check_args(args, "args", name)
    exprs, matched = _prepare(raw, stable, name, set(args), "add them to args=")
    _check_stable_matched(stable, matched, name)
    names = _assign_names(args, reserved={name, f"{name}_grid"})
    writer = _ModuleWriter(_scalar_header(kind, name, raw, args, stable))
    writer.add(_scalar_function(writer, exprs, args, names, name))
    return writer, args, names, len(exprs)


def scalar_source(expr_or_exprs, args: Sequence[sp.Symbol], *, name: str, stable: dict | None = None) -> str:
    """Return the module source that :func:`scalar_kernel` writes, without loading it."""
    return _build_scalar(expr_or_exprs, args, name, stable, "scalar kernel")[0].source()


def scalar_kernel(expr_or_exprs, args: Sequence[sp.Symbol], *, name: str, stable: dict | None = None):
    """Compile one expression (or several) of ``args`` into a cached numba dispatcher.

    Parameters
    ----------
    expr_or_exprs
        A SymPy expression, or a sequence of them (the kernel then returns a tuple).
    args
        The arguments, in call order. Symbols with ``integer=True`` are typed int64, all others
        float64; the dispatcher is compiled (or loaded from numba's cache) for that signature.
    name
        Name of the generated function and prefix of its module.
    stable
        Stable forms ``{sub-expression: replacement}`` (see the module docstring).

    Returns
    -------
    numba.core.registry.CPUDispatcher
        ``f(*args) -> float`` (or tuple of floats). Never raises on numeric trouble: a division
        by zero gives inf/NaN.
    """
    writer, args, _, n_out = _build_scalar(expr_or_exprs, args, name, stable, "scalar kernel")
    module = _load(name, writer)
    dispatcher = getattr(module, name)
    # Compiled (or loaded from the cache) now for the declared types; other argument types get
    # their own specialisation on first call, as with any numba function (no silent truncation).
    dispatcher.compile(_scalar_signature(args, n_out))
    return dispatcher


# ----------------------------------------------------------------------------------------------
# Grid kernels


def grid_kernel(expr, args: Sequence[sp.Symbol], *, name: str, stable: dict | None = None) -> GridKernel:
    """Compile ``expr`` into a parallel loop over 1-D arrays, wrapped by a broadcasting :class:`GridKernel`.

    The module holds the scalar kernel ``name`` and the loop ``name_grid(*arrays, out)``; the
    loop gives identical results for any number of numba threads (each point is independent).
    """
    key = memo_key("grid_kernel", name, expr, list(args), stable)
    module = recall(key)
    if module is None:
        writer, args, names, n_out = _build_scalar(expr, args, name, stable, "grid kernel")
        if n_out != 1:
            msg = f"grid kernel {name!r} takes one expression, got {n_out}; build one per output"
            raise InvalidArgument(msg)
        params = [str(names[a]) for a in args]
        writer.add(
            "\n".join(
                [
                    "@parallel_jit",
                    f"def {name}_grid({', '.join(params)}, out):",
                    "    for _i in prange(out.shape[0]):",
                    f"        out[_i] = {name}({', '.join(f'{p}[_i]' for p in params)})",
                ]
            )
        )
        module = _load(name, writer)
        remember(key, module)
    args = [sp.sympify(a) for a in args]
    scalar, loop = getattr(module, name), getattr(module, f"{name}_grid")
    scalar.compile(_scalar_signature(args, 1))
    loop.compile(f"void({', '.join(f'{_dtype_name(a)}[::1]' for a in args)}, float64[::1])")
    return GridKernel(
        name=name,
        arg_names=tuple(str(a) for a in args),
        integer=tuple(bool(a.is_integer) for a in args),
        kernel=loop,
        scalar=scalar,
        module=module,
    )


# ----------------------------------------------------------------------------------------------
# NumPy evaluators (one-off evaluation, nothing compiled)


@functools.cache
def _array_eval_digest() -> str:
    return hashlib.sha256(Path(__file__).with_name("array_eval.py").read_bytes()).hexdigest()[:16]


def _array_source(exprs: list[sp.Expr], args: list[sp.Symbol], name: str, header: list[str]) -> str:
    names = _assign_names(args, reserved={name, "special", "expm1_ratio"})
    replacements, reduced = sp.cse([e.xreplace(names) for e in exprs], symbols=sp.numbered_symbols("_x"),
                                   order="canonical")
    printer = ArrayPrinter()
    body = [f"    {printer.doprint(sym)} = {printer.doprint(value)}" for sym, value in replacements]
    outs = [printer.doprint(e) for e in reduced]
    special = any(text.count("special.") for text in [*body, *outs])
    lines = [
        "# Generated by numerics.compile.array_function from SymPy expressions; do not edit.",
        *header,
        "import math",
        "",
        "import numpy as np",
        *(["from scipy import special"] if special else []),
        "",
        "from numerics.array_eval import expm1_ratio",
        "",
        "",
        f"def {name}({', '.join(str(names[a]) for a in args)}):",
        *body,
        f"    return ({''.join(f'{o}, ' for o in outs)})",
    ]
    return "\n".join(lines) + "\n"


def array_function(
    expr_or_exprs, args: Sequence[sp.Symbol], *, name: str, stable: dict | None = None, overflow: bool = False
) -> ArrayFunction:
    """A NumPy evaluator of one expression, a sequence of them or a matrix: nothing compiled.

    Parameters
    ----------
    expr_or_exprs
        A SymPy expression, a sequence of them, or a SymPy matrix.
    args
        The arguments, in call order; every value is converted to float64 (integer symbols too).
    name
        Name of the generated function and prefix of its module.
    stable
        Stable forms ``{sub-expression: replacement}`` (see the module docstring).
    overflow
        ``True``: overflow gives ±inf silently, for a bound whose value may be inf (exp of a large
        rate·t). ``False``: the caller's ``np.errstate`` decides (NaN and inf are still values).

    Returns
    -------
    numerics.array_eval.ArrayFunction
        ``f(*values)`` → float64 array of shape (output shape) + (broadcast shape of the values
        the outputs depend on).

    Raises
    ------
    InvalidArgument
        For what the kernels refuse too (unknown functions, Piecewise without default, symbols
        not among ``args``) and for Sum/Product, which need a loop: compile those with
        :func:`grid_kernel`.
    """
    name = _check_name(name)
    if isinstance(expr_or_exprs, sp.MatrixBase):
        shape, raw = tuple(expr_or_exprs.shape), list(expr_or_exprs)
    elif isinstance(expr_or_exprs, sp.Basic | int | float | str):
        shape, raw = (), [expr_or_exprs]
    else:
        raw = list(expr_or_exprs)
        shape = (len(raw),)
    if not raw:
        msg = f"array function {name!r}: no expressions to evaluate"
        raise InvalidArgument(msg)
    args = _check_args(args, "args", name)
    # the printer lives in array_eval.py, which the generator's stamp does not cover: its hash enters the key
    key = memo_key("array_function", _array_eval_digest(), name, raw, args, stable)
    module = recall(key)
    if module is None:
        exprs, matched = _prepare(raw, stable, name, set(args), "add them to args=")
        _check_stable_matched(stable, matched, name)
        for i, e in enumerate(exprs):
            if e.has(sp.Sum, sp.Product):
                msg = (f"array function {name!r}: output {i} holds a Sum or Product, which NumPy code cannot "
                       "loop over; compile it with grid_kernel (or evaluate the sum with doit() first)")
                raise InvalidArgument(msg)
            if e.atoms(EventTime, EventState):
                msg = f"array function {name!r}: output {i} uses event placeholders; only vector-field events may"
                raise InvalidArgument(msg)
        header = [f"# array function {name}({', '.join(map(str, args))})"]
        header += [f"#   [{i}] {_header_expr(sp.sympify(e))}" for i, e in enumerate(raw)]
        module = load_module(name, _array_source(exprs, args, name, header))
        remember(key, module)
    return ArrayFunction(name=name, arg_names=tuple(str(a) for a in args), shape=shape,
                         function=getattr(module, name), overflow=bool(overflow), module=module)


# ----------------------------------------------------------------------------------------------
# Vector fields


def _check_field(name, rhs, state, params, events, time):
    state = _check_args(state, "state", name)
    params = _check_args(params, "params", name)
    rhs, events = list(rhs), list(events)
    if len(rhs) != len(state):
        msg = (
            f"vector field {name!r}: {len(rhs)} right-hand sides for {len(state)} state variables "
            f"({', '.join(map(str, state))}); give one per state variable"
        )
        raise InvalidArgument(msg)
    if time is not None and not isinstance(time, sp.Symbol):
        msg = f"vector field {name!r}: time={time!r} must be a SymPy Symbol"
        raise InvalidArgument(msg)
    roles = [*state, *params, *([time] if time is not None else [])]
    if len(set(roles)) != len(roles):
        dup = sorted({str(r) for r in roles if roles.count(r) > 1})
        msg = f"vector field {name!r}: {', '.join(dup)} appear in more than one of state, params, time"
        raise InvalidArgument(msg)
    state_names = [s.name for s in state]
    if len(set(state_names)) != len(state_names):
        msg = f"vector field {name!r}: state symbols need distinct names, got {state_names}"
        raise InvalidArgument(msg)
    for e in events:
        if not isinstance(e, EventSpec):
            msg = f"vector field {name!r}: events entries must be EventSpec, got {e!r}"
            raise InvalidArgument(msg)
    event_names = [e.name for e in events]
    if len(set(event_names)) != len(event_names):
        msg = f"vector field {name!r}: event names must be distinct, got {event_names}"
        raise InvalidArgument(msg)
    return state, params, rhs, events


def _field_header(name, rhs, state, params, events, stable) -> list[str]:
    header = [
        f"# vector field {name}: state ({', '.join(map(str, state))}), params ({', '.join(map(str, params))})"
    ]
    header += [f"#   d{s}/dt = {_header_expr(sp.sympify(r))}" for s, r in zip(state, rhs, strict=True)]
    header += [
        f"#   event {e.name} (direction {e.direction}, terminal {e.terminal}): "
        f"{_header_expr(sp.sympify(e.expr))}"
        for e in events
    ]
    if stable:
        header.append("# stable forms:")
        header += [
            f"#   {_header_expr(sp.sympify(k))}  ->  {_header_expr(sp.sympify(v))}" for k, v in stable.items()
        ]
    return header


def _field_function(writer, fname, signature, exprs, names, unpack, guards, settings, targets=None) -> str:
    """Return one ``@jit`` function writing ``out[j]``, NaN while an event in ``guards[j]`` is unfired.

    ``targets[j]`` replaces the index ``j`` (e.g. ``"1, 0"`` for a matrix entry).
    """
    exprs = [e.xreplace(names) for e in exprs]
    lines, outs = writer.body(exprs, **settings)
    used = set().union(*(e.free_symbols for e in exprs)) if exprs else set()
    code = ["@jit", f"def {fname}({signature}):"]
    code += [f"    {sym} = {source}" for sym, source in unpack if sym in used]
    code += [f"    {line}" for line in lines]
    for j, (out, guard) in enumerate(zip(outs, guards, strict=True)):
        j = targets[j] if targets is not None else j
        if guard:
            cond = " or ".join(f"math.isnan(event_times[{k}])" for k in guard)
            code += [
                f"    if {cond}:",
                f"        out[{j}] = math.nan",
                "    else:",
                f"        out[{j}] = {out}",
            ]
        else:
            code.append(f"    out[{j}] = {out}")
    if not outs:
        code.append("    return")
    return "\n".join(code)


def _event_dependencies(expr: sp.Expr, spec: EventSpec, names: list[str], states: list[str]) -> list[str]:
    deps = set()
    for ph in sorted(expr.atoms(EventTime, EventState), key=str):
        if ph.event not in names:
            near = close_matches(ph.event, names)
            hint = f"did you mean {', '.join(near)}?" if near else f"events: {', '.join(names)}"
            msg = f"event {spec.name!r} refers to unknown event {ph.event!r}; {hint}"
            raise InvalidArgument(msg)
        if ph.event == spec.name:
            msg = f"event {spec.name!r} refers to its own firing ({ph}); it could never be armed"
            raise InvalidArgument(msg)
        if isinstance(ph, EventState) and ph.state not in states:
            msg = (
                f"event {spec.name!r}: event_state({ph.event!r}, {ph.state!r}) names no state variable; "
                f"states: {', '.join(states)}"
            )
            raise InvalidArgument(msg)
        deps.add(ph.event)
    return sorted(deps, key=names.index)


def _write_field(name, rhs, state, params, events, stable, time, event_names, state_names,
                 jacobian: bool = False, closed_sums: bool = True) -> ModuleType:
    """Rewrite, check and print a vector field, its events and (if asked) its Jacobian into a generated module."""
    allowed = set(state) | set(params) | ({time} if time is not None else set())
    hint = "add them to state, params" + (
        ", time" if time is not None else "; pass time= if it is the time variable"
    )
    rhs_exprs, matched = _prepare(rhs, stable, name, allowed, hint)
    for i, e in enumerate(rhs_exprs):
        if e.atoms(EventTime, EventState):
            msg = f"vector field {name!r}: right-hand side {i} uses event placeholders; only events may"
            raise InvalidArgument(msg)
    ev_exprs, ev_matched = _prepare([e.expr for e in events], stable, f"{name}.events", allowed, hint)
    _check_stable_matched(stable, matched | ev_matched, name)
    deps = [
        _event_dependencies(x, e, event_names, state_names) for x, e in zip(ev_exprs, events, strict=True)
    ]

    names = _assign_names([*state, *params], reserved={name})
    if time is not None:
        names[time] = sp.Symbol("t")
    writer = _ModuleWriter(_field_header(name, rhs, state, params, events, stable), closed_sums)
    unpack = [(names[s], f"y[{j}]") for j, s in enumerate(state)] + [
        (names[q], f"params[{k}]") for k, q in enumerate(params)
    ]
    no_guards = [[] for _ in rhs_exprs]
    writer.add(_field_function(writer, "rhs", "t, y, params, out", rhs_exprs, names, unpack, no_guards, {}))
    if jacobian:
        # differentiated before the stable rewrites (SymPy knows the derivatives of its own functions;
        # d/dy of a Sum is the Sum of the derivatives, which the loop writer fuses like any other)
        entries = [sp.diff(sp.sympify(r), y) for r in rhs for y in state]
        jac_exprs, _ = _prepare(entries, stable, f"{name}.jac", allowed, hint)
        n = len(state)
        targets = [f"{i}, {j}" for i in range(n) for j in range(n)]
        writer.add(_field_function(writer, "jac", "t, y, params, out", jac_exprs, names, unpack,
                                   [[] for _ in jac_exprs], {}, targets))
    if events:
        guards = [[event_names.index(d) for d in dep] for dep in deps]
        settings = {
            "event_index": {n: k for k, n in enumerate(event_names)},
            "state_index": {n: j for j, n in enumerate(state_names)},
        }
        signature = "t, y, params, event_times, event_states, out"
        writer.add(_field_function(writer, "events", signature, ev_exprs, names, unpack, guards, settings))
    return _load(name, writer)


def vector_field(
    rhs: Sequence[sp.Expr],
    state: Sequence[sp.Symbol],
    params: Sequence[sp.Symbol],
    *,
    name: str,
    events: Sequence[EventSpec] = (),
    stable: dict | None = None,
    time: sp.Symbol | None = None,
    jacobian: bool = False,
    closed_sums: bool = True,
):
    """Generate ``rhs(t, y, params, out)`` and, with events, ``events(t, y, params, times, states, out)``.

    Parameters
    ----------
    rhs
        dy_j/dt for each state symbol, in the order of ``state``.
    state, params
        Symbols read from ``y[j]`` and ``params[k]`` (all float64 in the kernels).
    name
        Prefix of the generated module.
    events
        :class:`EventSpec` items; their expressions may use :func:`event_time` and
        :func:`event_state` of other events.
    stable
        Stable forms, applied to the right-hand sides and the event expressions.
    time
        The time symbol, if the field or an event depends on time (read from ``t``).
    jacobian
        Also generate ``jac(t, y, params, out)``, the exact Jacobian ``out[i, j] = ∂f_i/∂y_j``
        differentiated by SymPy, for the stiff methods (which otherwise difference ``rhs``).
    closed_sums
        Evaluate geometric sums whose weights are polynomials of degree ≤ 2 in the index in closed
        form (:mod:`numerics.geometric_sums`, O(1), within a few ulp of each moment); False keeps
        the O(n) loops (for comparisons).

    Returns
    -------
    numerics.ode.VectorField
        ``rhs(t, y, params, out)`` writes dy/dt (float64, length ``n_state``);
        ``events(t, y, params, event_times, event_states, out)`` writes one value per event, where
        ``event_times`` (n_events,) and ``event_states`` (n_events, n_state) hold when and where each
        event fired (NaN before). An event whose expression uses an event that has not fired is
        NaN ("not armed"). Both are compiled for C-contiguous float64 arrays.
    """
    name = _check_name(name)
    state, params, rhs, events = _check_field(name, rhs, state, params, events, time)
    event_names = [e.name for e in events]
    state_names = [s.name for s in state]
    key = memo_key("vector_field", name, rhs, state, params,
                   [(e.name, e.expr, e.direction, e.terminal) for e in events], stable, time,
                   *(["jacobian"] if jacobian else []), *([] if closed_sums else ["loops"]))
    module = recall(key)
    if module is None:
        module = _write_field(name, rhs, state, params, events, stable, time, event_names, state_names, jacobian,
                              closed_sums)
        remember(key, module)
    # the Jacobian is compiled on its first call: only the stiff methods call it, and compiling
    # it (closed-form sums inlined) costs seconds that an explicit integration need not pay
    jac_disp = module.jac if jacobian else None

    rhs_disp = module.rhs
    rhs_disp.compile("void(float64, float64[::1], float64[::1], float64[::1])")
    events_disp = None
    if events:
        events_disp = module.events
        events_disp.compile(
            "void(float64, float64[::1], float64[::1], float64[::1], float64[:, ::1], float64[::1])"
        )
    from numerics.ode import VectorField  # imported here: the ODE layer is not needed for kernels

    return VectorField(
        rhs=rhs_disp,
        n_state=len(state),
        events=events_disp,
        event_names=tuple(event_names),
        event_directions=tuple(e.direction for e in events),
        terminal=tuple(bool(e.terminal) for e in events),
        state_names=tuple(state_names),
        jac=jac_disp,
    )


def float_function(exprs: Sequence[sp.Expr], args: Sequence[sp.Symbol]):
    """A plain-float evaluator of a list of large closed forms at a few points: SymPy's ``lambdify``
    with the ``math`` module and common-subexpression elimination, nothing generated or compiled.

    For expressions evaluated a handful of times (a derived gradient checked at ten points), where
    writing and importing an :func:`array_function` module costs minutes for their size. Returns
    ``f(*values) -> list[float]``; no stable forms are applied, so use it only where the arguments
    keep the expressions well conditioned (the caller compares against an independent value).
    """
    exprs = _sympify_all(exprs, "float_function")
    args = _check_args(args, "args", "float_function")
    return sp.lambdify(list(args), list(exprs), modules="math", cse=True)
