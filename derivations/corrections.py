"""The smallest edit of a printed closed form that makes it equal to its derivation.

For a display that differs, :func:`minimal_correction` enumerates single edits of the printed form:
a sign, a constant or symbolic factor, a numeric constant (c → −c, 2c, c/2, c ± 1, 1/c), an exponent
(e → e ± 1, −e, 2e, e/2), an index range (a sum's bound ± 1, its summand shifted), a dropped or an extra
term, a dropped factor, a symbol swapped for another (one occurrence, or two symbols throughout). Each
edit is screened at a few points of the domain (20 digits); those that pass go, smallest first, to the
identity check every display gets (:meth:`derivations.core.Formula.verify`). The first confirmed edit
is the correction; when none is confirmed the result says which kinds were searched.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import mpmath
import sympy as sp

from derivations.core import Evaluator, Formula, evaluator, time_limit
from derivations.latex import PaperLatexPrinter, to_latex

#: edit kinds in the order of their size: a sign is a smaller edit than a new term
KINDS = ("sign", "constant factor", "constant", "exponent", "index range", "symbol", "term", "factor",
         "symbolic factor")
SCREEN_POINTS = 3
SCREEN_DPS = 20
MAX_NODES = 400  # in printed forms larger than this only the whole form is edited (sign, factor, term, swap)
MAX_CANDIDATES = 2000
LONG_LATEX = 1500  # characters: longer than one line of a page
MAX_SWAP_SYMBOLS = 10  # two symbols swapped throughout: searched in forms of at most this many symbols
SYMBOLIC_NODES = 150  # the symbolic ratio and difference are tried only on forms this small (they finish quickly)


class Edited(sp.Function):
    """A marker around the edited part of a corrected display; LaTeX draws a box around it."""

    nargs = 1

    def _latex(self, printer, exp=None):
        boxed = r"\boxed{%s}" % printer._print(self.args[0])
        return boxed if exp is None else r"%s^{%s}" % (boxed, exp)


class Deleted(sp.Function):
    """A marker around a printed term or factor that the correction deletes."""

    nargs = 1

    def _latex(self, printer, exp=None):
        marked = r"\underbrace{%s}_{\text{delete}}" % printer._print(self.args[0])
        return marked if exp is None else r"\left(%s\right)^{%s}" % (marked, exp)


@dataclass(frozen=True)
class Said:
    """An edit in words, its expressions kept apart so that they can be printed as text or as LaTeX."""

    template: str
    exprs: tuple = ()

    def __init__(self, template: str, *exprs: sp.Expr):
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "exprs", exprs)

    def text(self) -> str:
        """The edit with its expressions as SymPy text."""
        return self.template.format(*(sp.sstr(e) for e in self.exprs))

    def latex(self, symbol_names: Mapping[str, str] | None = None) -> str:
        """The edit as LaTeX text with its expressions as inline math in the paper's notation."""
        return self.template.format(*("$%s$" % to_latex(e, symbol_names) for e in self.exprs))


@dataclass(frozen=True)
class Correction:
    """A verified edit: ``corrected`` equals the derivation (identity check ``status``: exact or numeric);
    ``marked`` is the printed form with the edit marked (:class:`Edited`, :class:`Deleted`)."""

    kind: str
    description: Said
    corrected: sp.Expr
    marked: sp.Expr
    status: str

    def latex(self, symbol_names: Mapping[str, str] | None = None) -> tuple[str, str]:
        """(the printed form with the edit marked, the corrected form) as LaTeX in the paper's notation; for a
        factor of a form too long for one line, both read "factor · (printed)"."""
        printer = PaperLatexPrinter(symbol_names)
        marked, corrected = printer.doprint(self.marked), printer.doprint(self.corrected)
        edited = [a for a in sp.Mul.make_args(self.marked) if a.func is Edited]
        if len(marked) > LONG_LATEX and self.kind in ("sign", "constant factor", "symbolic factor") and edited:
            factor = printer.doprint(edited[0].args[0])
            marked = r"\boxed{%s}\cdot\Bigl(\text{printed}\Bigr)" % factor
            corrected = r"%s\cdot\Bigl(\text{printed}\Bigr)" % factor
        return marked, corrected

    def to_dict(self, symbol_names: Mapping[str, str] | None = None) -> dict[str, str]:
        """A JSON-ready record (the expressions as SymPy text and LaTeX)."""
        marked, corrected = self.latex(symbol_names)
        return {"kind": self.kind, "edit": self.description.text(), "edit_latex": self.description.latex(symbol_names),
                "corrected": sp.sstr(self.corrected),
                "latex_marked": marked, "latex_corrected": corrected, "identity": self.status}


@dataclass(frozen=True)
class Search:
    """The outcome of :func:`minimal_correction`: the correction, or None with what was searched."""

    correction: Correction | None
    candidates: int
    screened_equal: int
    note: str = ""
    scope: str = ""  # what was left out of the search, e.g. "; whole-form edits only: 576 nodes"

    def to_dict(self, symbol_names: Mapping[str, str] | None = None) -> dict:
        """A JSON-ready record."""
        if self.correction is not None:
            return {**self.correction.to_dict(symbol_names), "candidates": self.candidates}
        return {"kind": "none", "edit": self.note or (
            f"no single edit of the kinds searched ({', '.join(KINDS)}) makes the printed form equal to the "
            f"derivation ({self.candidates} edits tried{self.scope})"), "candidates": self.candidates}


def minimal_correction(formula: Formula, *, seed: int = 0, fixed: Mapping[sp.Symbol, object] | None = None,
                       seconds: float = 20.0, max_candidates: int = MAX_CANDIDATES) -> Search:
    """The smallest edit of ``formula.stated`` that the identity check finds equal to ``formula.derived``.

    ``fixed`` pins symbols (a user's ``--param``): the screening points and the identity check use them, as
    the check of the display itself does.

    ``seconds`` bounds the symbolic part (ratio and difference simplification); the enumeration itself
    is bounded by ``max_candidates`` edits, so the result does not depend on the machine's speed.
    """
    nodes = sum(1 for _ in sp.preorder_traversal(formula.stated))
    symbols = formula.free_symbols
    points = formula.domain.sample(random.Random(seed + 7), SCREEN_POINTS, fixed)
    target = []
    for point in points:
        try:
            target.append(evaluator(formula.derived, symbols)(point, SCREEN_DPS + 10))
        except (ZeroDivisionError, ValueError, TypeError, OverflowError):
            return Search(None, 0, 0, "the derivation cannot be evaluated at the screening points")
    screen = _Screen(formula.stated, symbols, points)
    local = nodes <= MAX_NODES and screen.tabulated
    seen: set = set()
    passed: list[tuple[int, int, _Edit]] = []
    count = 0
    for order, edit in enumerate(_edits(formula, seconds, _constant_ratio(screen, target), local=local)):
        if count >= max_candidates:
            break
        if edit.key in seen or any(e is not None and e.has(sp.zoo, sp.nan, sp.oo, -sp.oo)
                                   for e in (edit.new, edit.factor, edit.term)):
            continue
        seen.add(edit.key)
        count += 1
        values = screen.values_of(edit)
        if _close(values, target) if values is not None else _agrees(edit.build()[0], symbols, points, target):
            passed.append((KINDS.index(edit.kind), order, edit))
    # the same corrected form reached by two edits (exponent L − 1 → L − 2, or its constant −1 → −2): the
    # edit of the larger node, first in preorder, says it better
    first: dict[sp.Expr, tuple[int, int, _Edit, sp.Expr, sp.Expr]] = {}
    for _, order, edit in sorted(passed, key=lambda p: p[1]):
        corrected, marked = edit.build()
        first.setdefault(corrected, (KINDS.index(edit.kind), order, edit, corrected, marked))
    for _, _, edit, corrected, marked in sorted(first.values(), key=lambda p: p[:2]):
        agreement = dataclasses.replace(formula, stated=corrected).verify(n_points=8, seed=seed, fixed=fixed,
                                                                         symbolic_seconds=1.0)
        if agreement.equal:
            return Search(Correction(edit.kind, edit.said, corrected, marked, agreement.status), count, len(passed))
    scope = ("" if local else f"; whole-form edits only: the printed form has {nodes} nodes" if nodes > MAX_NODES
             else "; whole-form edits only: the printed form has nodes the screening cannot evaluate")
    return Search(None, count, len(passed), scope=scope)


class _Unsupported(Exception):
    """A node the tree evaluator does not know (the candidate is then evaluated by lambdify)."""


def _value(node: sp.Expr, env: Mapping[sp.Symbol, mpmath.mpf]):
    """The value of ``node`` at ``env`` (mpmath, current precision); sums are unrolled."""
    if node.is_Symbol:
        return env[node]
    if node.is_Rational:
        return mpmath.mpf(node.p) / node.q
    if node.is_Float:
        return mpmath.mpf(node)
    if node is sp.pi:
        return +mpmath.pi
    if node is sp.E:
        return +mpmath.e
    if isinstance(node, sp.Sum) and len(node.limits) == 1:
        index, lower, upper = node.limits[0]
        first, last = _value(lower, env), _value(upper, env)
        if first != int(first) or last != int(last) or last - first > 10_000:
            raise _Unsupported
        inner = dict(env)
        total = mpmath.mpf(0)
        for k in range(int(first), int(last) + 1):
            inner[index] = mpmath.mpf(k)
            total += _value(node.function, inner)
        return total
    return _combine(node, [_value(arg, env) for arg in node.args])


def _combine(node: sp.Expr, values: list):
    """The value of ``node`` from the values of its arguments."""
    if isinstance(node, sp.Add):
        return mpmath.fsum(values)
    if isinstance(node, sp.Mul):
        return mpmath.fprod(values)
    if isinstance(node, sp.Pow):
        base, exponent = values
        if base < 0 and exponent != int(exponent):
            raise ValueError("negative base, fractional exponent")
        return base ** exponent
    if isinstance(node, sp.exp):
        return mpmath.exp(values[0])
    if isinstance(node, sp.log):
        if values[0] <= 0:
            raise ValueError("log of a non-positive number")
        return mpmath.log(values[0])
    if isinstance(node, sp.Abs):
        return abs(values[0])
    raise _Unsupported


class _Screen:
    """Values of the printed form's nodes at the screening points, so that an edit of one node is evaluated
    by recombining the path above it (no lambdify per candidate)."""

    def __init__(self, stated: sp.Expr, symbols, points):
        self.stated = stated
        self.envs = [{s: _to_mpf(point[s]) for s in symbols} for point in points]
        self.values: list[dict[tuple[int, ...], object]] = []
        with mpmath.workdps(SCREEN_DPS):
            for env in self.envs:
                table: dict[tuple[int, ...], object] = {}
                try:
                    self._fill(stated, (), env, table)
                except (_Unsupported, ValueError, ZeroDivisionError, KeyError):
                    table = {}
                self.values.append(table)

    def _fill(self, node, path, env, table):
        if isinstance(node, sp.Sum):
            table[path] = _value(node, env)  # nodes inside a sum depend on its index: not tabulated
            return table[path]
        if not node.args or node.is_Number:
            table[path] = _value(node, env)
            return table[path]
        table[path] = _combine(node, [self._fill(arg, path + (i,), env, table) for i, arg in enumerate(node.args)])
        return table[path]

    @property
    def tabulated(self) -> bool:
        """True when every node of the printed form has its value at every point (else only whole-form edits
        are screened, each by lambdify)."""
        return all(self.values)

    def values_of(self, edit: _Edit) -> list | None:
        """The edited form's values at the points ([] where it is undefined), or None when the tree evaluator
        cannot tell (the caller then evaluates the built form)."""
        if not self.tabulated:
            return None
        out = []
        with mpmath.workdps(SCREEN_DPS):
            for env, table in zip(self.envs, self.values):
                try:
                    if edit.path is not None:
                        out.append(self._recombine(edit.path, edit.new, env, table))
                    elif edit.substitution is not None:
                        moved = {**env, **{s: _value(e, env) for s, e in edit.substitution.items()}}
                        out.append(_value(self.stated, moved))
                    else:
                        value = table[()] * (_value(edit.factor, env) if edit.factor is not None else 1)
                        out.append(value + (_value(edit.term, env) if edit.term is not None else 0))
                except (_Unsupported, KeyError):
                    return None
                except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                    return []
        return out

    def _recombine(self, path: tuple[int, ...], new: sp.Expr, env, table):
        """The printed form's value with the node at ``path`` replaced by ``new``: the new node is evaluated,
        then each node above it from its arguments' tabulated values (from the outermost sum on the path
        down, a sum's inside is evaluated afresh: it depends on the sum's index)."""
        cut = next((k for k in range(len(path)) if isinstance(_node_at(self.stated, path[:k]), sp.Sum)), len(path))
        value = _value(_replace(_node_at(self.stated, path[:cut]), path[cut:], new), env)
        for k in range(cut - 1, -1, -1):
            parent = _node_at(self.stated, path[:k])
            args = [table[path[:k] + (i,)] for i in range(len(parent.args))]
            args[path[k]] = value
            value = _combine(parent, args)
        return value


def _to_mpf(value):
    rational = sp.Rational(value)  # a float's exact binary value, a pinned 3/10 exactly
    return mpmath.mpf(rational.p) / rational.q


def _node_at(expr: sp.Expr, path: tuple[int, ...]) -> sp.Expr:
    for index in path:
        expr = expr.args[index]
    return expr


def _close(values: list | None, target: list) -> bool:
    if not values or len(values) != len(target):
        return False
    for got, value in zip(values, target):
        if isinstance(got, mpmath.mpc) or not mpmath.isfinite(got):
            return False
        scale = max(abs(got), abs(value))
        if scale and abs(got - value) > mpmath.mpf(10) ** (5 - SCREEN_DPS) * scale:
            return False
    return True


def _agrees(candidate: sp.Expr, symbols, points, target) -> bool:
    """:func:`_close` for a candidate the tree evaluator cannot screen: evaluated by lambdify."""
    try:
        function = Evaluator(candidate, list(symbols))  # not the shared cache: candidates are used once
        return _close([function(point, SCREEN_DPS) for point in points], target)
    except (ZeroDivisionError, ValueError, TypeError, OverflowError, NameError, AttributeError, RecursionError,
            KeyError):
        return False


@dataclass(frozen=True)
class _Edit:
    """One candidate edit. ``build()`` makes (corrected, marked) and is called only for edits that pass the
    screening. A node edit has ``path`` and ``new``; a whole-form edit is ``factor`` · printed + ``term``, or
    the printed form with ``substitution`` (symbols swapped or shifted throughout)."""

    kind: str
    said: Said
    build: Callable[[], tuple[sp.Expr, sp.Expr]]
    key: object
    path: tuple[int, ...] | None = None
    new: sp.Expr | None = None
    factor: sp.Expr | None = None
    term: sp.Expr | None = None
    substitution: Mapping[sp.Symbol, sp.Expr] | None = None


def _edits(formula: Formula, seconds: float, ratio: sp.Expr | None, local: bool = True) -> Iterator[_Edit]:
    """Every single edit, whole-form ones first; the edits of single nodes only when ``local``."""
    stated = formula.stated
    yield from _global_edits(formula, seconds, ratio)
    free = sorted(stated.free_symbols - formula.bound_symbols, key=lambda s: s.name)
    for path, node in _nodes(stated) if local else ():
        for kind, said, new, marked in _node_edits(node, free):
            yield _Edit(kind, said, lambda path=path, new=new, marked=marked: (
                _replace(stated, path, new), _replace(stated, path, marked)), ("node", path, new), path=path, new=new)


def _scaled(kind: str, said: Said, stated: sp.Expr, factor: sp.Expr) -> _Edit:
    return _Edit(kind, said, lambda: (factor * stated, Edited(factor) * stated), ("factor", factor), factor=factor)


def _global_edits(formula: Formula, seconds: float, ratio: sp.Expr | None) -> Iterator[_Edit]:
    """The edits of the whole form: a sign, a factor (``ratio``: derived/printed when it is the same number at
    every screening point; else, for small forms, derived/printed cancelled symbolically), a term (the
    difference, for small forms), two symbols swapped throughout, an integer symbol shifted by one throughout
    (L − 2 printed where L − 1 is meant, everywhere in the display), a simple symbolic factor."""
    stated = formula.stated
    yield _scaled("sign", Said("change the sign"), stated, sp.Integer(-1))
    small = sum(1 for _ in sp.preorder_traversal(formula.stated - formula.derived)) <= SYMBOLIC_NODES
    if ratio is None and small:
        ratio = _ratio(formula, seconds)
    if ratio is not None and ratio.is_number:
        yield _scaled("constant factor", Said("multiply by {}", ratio), stated, ratio)
    elif ratio is not None and sum(1 for _ in sp.preorder_traversal(ratio)) <= 9:
        yield _scaled("symbolic factor", Said("multiply by {}", ratio), stated, ratio)
    difference = _small_difference(formula, seconds) if small else None
    if difference is not None:
        terms = sp.Add.make_args(stated)
        extra = [t for t in terms if sp.expand(t + difference) == 0]
        if extra:
            rest = [t for t in terms if t is not extra[0]]
            yield _Edit("term", Said("delete the term {}", extra[0]), lambda: (
                sp.Add(*rest), sp.Add(*rest, Deleted(extra[0]), evaluate=False)), ("term", -extra[0]), term=-extra[0])
        else:
            yield _Edit("term", Said("add the term {}", difference), lambda: (
                stated + difference, sp.Add(stated, Edited(difference), evaluate=False)), ("term", difference),
                term=difference)
    free = sorted(stated.free_symbols - formula.bound_symbols, key=lambda s: s.name)
    swappable = free if len(free) <= MAX_SWAP_SYMBOLS else []
    for a, b in ((a, b) for i, a in enumerate(swappable) for b in swappable[i + 1:]):
        if a.is_integer == b.is_integer:
            swap = {a: b, b: a}
            yield _Edit("symbol", Said("swap {} and {}", a, b), lambda swap=swap: (
                stated.xreplace(swap), stated.xreplace({s: Edited(t) for s, t in swap.items()})),
                ("swap", a, b), substitution=swap)
    for x in (x for x in free if x.is_integer):
        for shift in (1, -1):
            moved = {x: x + shift}
            yield _Edit("index range", Said("{} → {} throughout", x, x + shift), lambda moved=moved: (
                stated.xreplace(moved), stated.xreplace({s: Edited(t) for s, t in moved.items()})),
                ("shift", x, shift), substitution=moved)
    for factor in _simple_factors(free):
        yield _scaled("symbolic factor", Said("multiply by {}", factor), stated, factor)


def _simple_factors(symbols: list[sp.Symbol]) -> Iterator[sp.Expr]:
    """x, 1/x, x ± k, 1/(x ± k) and (x − a)/(x − b) for small integers: the symbolic factors a print drops
    most often (a (L − 2), a 1/(1 + α*))."""
    for x in symbols:
        shifted = [x + k for k in (0, 1, -1, 2, -2, 3, -3)]
        for f in shifted:
            yield f
            yield 1 / f
        if x.is_integer:
            for a in shifted[1:]:
                for b in shifted[1:]:
                    if a != b:
                        yield a / b


def _constant_ratio(screen: _Screen, target: list) -> sp.Expr | None:
    """derived/printed when it is the same number at every screening point, as a simple closed number."""
    values = [table[()] for table in screen.values] if all(screen.values) else None
    if not values or any(v == 0 for v in values) or len(values) != len(target):
        return None
    ratios = [t / v for t, v in zip(target, values)]
    if any(isinstance(r, mpmath.mpc) for r in ratios) or any(
            abs(r - ratios[0]) > mpmath.mpf(10) ** (5 - SCREEN_DPS) * abs(ratios[0]) for r in ratios):
        return None
    guess = sp.nsimplify(sp.Float(ratios[0], SCREEN_DPS), [sp.pi], tolerance=10.0 ** (8 - SCREEN_DPS), rational=False)
    return guess if sum(1 for _ in sp.preorder_traversal(guess)) <= 9 else None


def _ratio(formula: Formula, seconds: float) -> sp.Expr | None:
    try:
        with time_limit(seconds / 2):
            ratio = sp.factor(sp.cancel(sp.together((formula.derived / formula.stated).doit())))
    except (TimeoutError, RecursionError, NotImplementedError, TypeError, ValueError, sp.PolynomialError):
        return None
    return None if ratio == 1 or ratio.has(sp.Sum) else ratio


def _small_difference(formula: Formula, seconds: float) -> sp.Expr | None:
    try:
        with time_limit(seconds / 2):
            difference = sp.factor_terms(sp.cancel(sp.together((formula.derived - formula.stated).doit())))
    except (TimeoutError, RecursionError, NotImplementedError, TypeError, ValueError, sp.PolynomialError):
        return None
    size = sum(1 for _ in sp.preorder_traversal(difference))
    return difference if difference != 0 and size <= 12 else None


def _nodes(expr: sp.Expr, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], sp.Expr]]:
    """Every node below the root with its path of argument indices, in preorder."""
    for index, arg in enumerate(expr.args):
        if isinstance(arg, sp.Tuple):  # a Sum's limits: edited as a whole by the Sum's own edits
            continue
        yield path + (index,), arg
        yield from _nodes(arg, path + (index,))


def _replace(expr: sp.Expr, path: tuple[int, ...], new: sp.Expr) -> sp.Expr:
    if not path:
        return new
    args = list(expr.args)
    args[path[0]] = _replace(args[path[0]], path[1:], new)
    return expr.func(*args)


def _node_edits(node: sp.Expr, free: list[sp.Symbol]) -> Iterator[tuple[str, str, sp.Expr, sp.Expr]]:
    """(kind, description, replacement, marked replacement) for the single edits of one node."""
    if node.is_Number and node != 0:
        for new in (-node, 2 * node, node / 2, node + 1, node - 1, 1 / node):
            if new != node:
                yield "constant", Said("{} → {}", node, new), new, Edited(new)
    elif isinstance(node, sp.Pow) and not node.exp.is_Number:
        base, exponent = node.args
        for new in (exponent + 1, exponent - 1, -exponent, 2 * exponent, exponent / 2):
            yield ("exponent", Said("exponent {} → {}", exponent, new), sp.Pow(base, new),
                   sp.Pow(base, Edited(new), evaluate=False))
    elif isinstance(node, sp.exp):
        argument = node.args[0]
        for new in (-argument, 2 * argument, argument / 2):
            yield ("exponent", Said("exponent {} → {}", argument, new), sp.exp(new),
                   sp.exp(Edited(new), evaluate=False))
    elif isinstance(node, sp.Symbol) and node in free:
        for other in free:
            if other != node and other.is_integer == node.is_integer:
                yield "symbol", Said("{} → {} (one occurrence)", node, other), other, Edited(other)
    elif isinstance(node, sp.Sum) and len(node.limits) == 1:
        (index, lower, upper), summand = node.limits[0], node.function
        for new_lower, new_upper, what in ((lower + 1, upper, "lower bound + 1"), (lower - 1, upper, "lower bound − 1"),
                                           (lower, upper + 1, "upper bound + 1"), (lower, upper - 1, "upper bound − 1"),
                                           (lower + 1, upper + 1, "range shifted by + 1"),
                                           (lower - 1, upper - 1, "range shifted by − 1")):
            new = sp.Sum(summand, (index, new_lower, new_upper))
            yield ("index range", Said("sum over {} = {} … {} (" + what + ")", index, new_lower, new_upper), new,
                   Edited(new))
        for shift in (1, -1):
            new = sp.Sum(summand.subs(index, index + shift), (index, lower, upper))
            yield "index range", Said("summand at {} " + ("+ 1" if shift > 0 else "− 1"), index), new, Edited(new)
    if isinstance(node, sp.Add) and len(node.args) >= 2:
        for term in node.args:
            rest = [t for t in node.args if t is not term]
            yield "term", Said("delete the term {}", term), sp.Add(*rest), sp.Add(*rest, Deleted(term), evaluate=False)
            yield ("sign", Said("change the sign of the term {}", term), sp.Add(*rest, -term),
                   sp.Add(*rest, Edited(-term), evaluate=False))
    if isinstance(node, sp.Mul) and len(node.args) >= 2:
        for factor in node.args:
            rest = [f for f in node.args if f is not factor]
            yield ("factor", Said("delete the factor {}", factor), sp.Mul(*rest),
                   sp.Mul(*rest, Deleted(factor), evaluate=False))
