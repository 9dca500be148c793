"""A derived form in the shape a person would print it, without changing its value.

SymPy derives closed forms in shapes nobody writes: e^{(L−2) log u} for u^{L−2}, sums with a reversed
summation variable (m(p) comes out as Σ_{s=2}^{L−1} (−L+s+1) e^{−p(L−s−1)} beside the printed
Σ_{s=1}^{L−3} s e^{−ps}), long sums of exponentials that are one rational function of e^{−p}. The
presentation pass tries a fixed list of rewrites, keeps each only when the identity check
(:meth:`derivations.core.Formula.verify`, the check every display gets) finds it equal to the derived
form, and returns the shortest result in LaTeX together with the names of the rewrites it rests on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sympy as sp

from derivations.core import Formula, time_limit
from derivations.latex import to_latex

SECONDS_PER_REWRITE = 20.0  # a safety cap only: each rewrite takes well under a second on the papers
MAX_NODES = 4000  # larger derived forms are shown as they are (each rewrite costs a factorisation)


@dataclass(frozen=True)
class Presentation:
    """``expr`` with each auxiliary symbol of ``where`` replaced by its definition equals the formula's derived
    form (checked); ``rewrites`` names the steps that led to it."""

    expr: sp.Expr
    rewrites: tuple[str, ...] = ()
    where: tuple[tuple[sp.Symbol, sp.Expr], ...] = ()

    @property
    def value(self) -> sp.Expr:
        """The presented form with the auxiliary symbols substituted: the derived value."""
        return self.expr.subs(dict(self.where)) if self.where else self.expr

    def latex(self, symbol_names: Mapping[str, str] | None = None) -> str:
        """LaTeX of the presented form in the paper's notation, followed by the auxiliary symbols' definitions
        (``…,\\quad z = e^{-\\tilde p}``)."""
        text = to_latex(self.expr, symbol_names)
        for symbol, definition in self.where:
            text += r",\quad %s = %s" % (to_latex(symbol, symbol_names), to_latex(definition, symbol_names))
        return text


def powers_from_exp_log(expr: sp.Expr) -> sp.Expr:
    """e^{a log b + c} → b^a e^c, the way a power is printed (SymPy derives u^{L−2} as e^{(L−2) log u})."""

    def rewrite(node: sp.exp) -> sp.Expr:
        factor, rest = sp.Integer(1), []
        for term in sp.Add.make_args(node.args[0]):
            logs = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.log)]
            if len(logs) == 1:
                factor *= sp.Pow(logs[0].args[0], sp.Mul(*[f for f in sp.Mul.make_args(term) if f is not logs[0]]))
            else:
                rest.append(term)
        return factor * sp.exp(sp.Add(*rest))

    return expr.replace(lambda e: isinstance(e, sp.exp) and e.args[0].has(sp.log), rewrite)


def sums_like(expr: sp.Expr, target: sp.Expr) -> sp.Expr:
    """Every one-index sum of ``expr`` re-indexed (shifted or reversed) so that its summation variable and, where
    possible, its range are those of a sum of ``target`` (the printed form); a sum with no printed counterpart
    takes the shorter of its own reversal and itself. Vanishing end terms are dropped and constant factors
    taken out of the sum."""
    printed = [s for s in target.atoms(sp.Sum) if len(s.limits) == 1]

    def rewrite(node: sp.Sum) -> sp.Expr:
        if len(node.limits) != 1:
            return node
        (index, lower, upper), summand = node.limits[0], node.function
        options = [node]
        targets = [(s.limits[0][0], s.limits[0][1], s.limits[0][2]) for s in printed] or [(index, lower, upper)]
        for variable, first, last in targets:
            if variable != index and variable in node.free_symbols:
                continue
            for new_index, new_lower, new_upper in (
                (variable + lower - first, first, upper - lower + first),  # shift to the printed start
                (variable + upper - last, lower - upper + last, last),  # shift to the printed end
                (upper + first - variable, first, upper + first - lower),  # reverse onto the printed start
                (lower + last - variable, lower + last - upper, last),  # reverse onto the printed end
            ):
                options.append(_tidy_sum(summand.subs(index, new_index), variable, new_lower, new_upper))
        return min(options, key=lambda s: (not _same_range(s, targets), len(sp.srepr(s))))

    return expr.replace(lambda e: isinstance(e, sp.Sum), rewrite)


def closed_geometric_sums(expr: sp.Expr, target: sp.Expr) -> sp.Expr:
    """Each geometric sum Σ_{k=a}^{b} c r^k of ``expr`` in closed form c r^a (1 − r^{b−a+1})/(1 − r), when the
    printed form ``target`` has no sum (the print writes M(p) closed, the derivation sums it)."""
    if target.has(sp.Sum):
        return expr

    def rewrite(node: sp.Sum) -> sp.Expr:
        if len(node.limits) != 1:
            return node
        (index, lower, upper), summand = node.limits[0], node.function
        ratio = sp.powsimp(sp.cancel(summand.subs(index, index + 1) / summand), combine="exp")
        ratio = ratio.replace(lambda e: isinstance(e, sp.exp), lambda e: sp.exp(sp.expand(e.args[0])))
        if ratio.has(index) or ratio == 1:
            return node
        return summand.subs(index, lower) * (1 - ratio ** (upper - lower + 1)) / (1 - ratio)

    return expr.replace(lambda e: isinstance(e, sp.Sum), rewrite)


def _tidy_sum(summand: sp.Expr, index: sp.Symbol, lower: sp.Expr, upper: sp.Expr) -> sp.Expr:
    summand = sp.factor_terms(summand.replace(lambda e: isinstance(e, sp.exp),
                                              lambda e: sp.exp(sp.factor_terms(sp.expand(e.args[0])))))
    lower, upper = sp.expand(lower), sp.expand(upper)
    for _ in range(2):  # drop end terms that vanish identically (the s = 0 term of Σ s e^{−ps})
        if sp.expand(summand.subs(index, lower)) == 0:
            lower += 1
        if sp.expand(summand.subs(index, upper)) == 0:
            upper -= 1
    constant, rest = summand.as_independent(index, as_Add=False)
    return constant * sp.Sum(rest, (index, lower, upper))


def _same_range(node: sp.Expr, targets) -> bool:
    sums = [s for s in sp.preorder_traversal(node) if isinstance(s, sp.Sum)]
    if not sums:
        return False
    index, lower, upper = sums[0].limits[0]
    return any(index == v and sp.expand(lower - a) == 0 and sp.expand(upper - b) == 0 for v, a, b in targets)


def rational_in_exponentials(expr: sp.Expr) -> tuple[sp.Expr, tuple[tuple[sp.Symbol, sp.Expr], ...]]:
    """A sum of exponentials e^{kx} (k rational, x one symbol) written as one factored rational function of
    an auxiliary symbol z = e^{−x/d}: 5 000 characters of q′(p̃) at L = 7 become one fraction of polynomials
    in z = e^{−p̃}. Returns the new expression and the definition of its auxiliary symbol."""
    exps = list(expr.atoms(sp.exp))
    bases = {s for e in exps for s in e.args[0].free_symbols}
    if len(bases) != 1 or expr.has(sp.Sum, sp.log):
        return expr, ()
    (x,) = bases
    if not all((e.args[0] / x).is_Rational for e in exps):
        return expr, ()
    denominator = sp.ilcm(*[sp.Rational(e.args[0] / x).q for e in exps])
    taken = {s.name for s in expr.free_symbols}
    z = sp.Symbol(next(n for n in ("z", "x", "y", "zeta") if n not in taken), positive=True)
    polynomial = expr.replace(lambda e: isinstance(e, sp.exp),
                              lambda e: z ** int(-sp.Rational(e.args[0] / x) * denominator))
    factored = sp.factor(sp.cancel(sp.together(polynomial)))
    return min(factored, collected(factored, z), key=lambda e: len(sp.srepr(e))), ((z, sp.exp(-x / denominator)),)


def collected(expr: sp.Expr, main: sp.Symbol | None = None) -> sp.Expr:
    """One fraction whose numerator is collected in the symbols other than ``main`` (by default the one of
    highest degree), each coefficient a factored polynomial in ``main``; the denominator factored."""
    numerator, denominator = sp.fraction(sp.together(expr))
    symbols = sorted(numerator.free_symbols, key=lambda s: s.name)
    if main is None:
        if not symbols:
            return expr
        main = max(symbols, key=lambda s: (sp.degree(numerator, s) if numerator.is_polynomial(s) else -1, s.name))
    others = [s for s in symbols if s != main]
    return sp.collect(sp.expand(numerator), others, func=sp.factor) / sp.factor(denominator)


def tidy_exponentials(expr: sp.Expr) -> sp.Expr:
    """Products of powers of one base and of exponentials combined (u³u^L → u^{L+3}, e^p e^{−sp} → e^{−p(s−1)}),
    each exponent with its common factors taken out."""
    combined = sp.powsimp(expr, combine="exp")
    return combined.replace(lambda e: isinstance(e, sp.exp) and e.args[0].is_Add,
                            lambda e: sp.exp(sp.factor_terms(e.args[0])))


REWRITES: tuple[tuple[str, Callable[[sp.Expr, sp.Expr], sp.Expr]], ...] = (
    ("powers instead of exp∘log", lambda e, t: powers_from_exp_log(e)),
    ("summation index as printed", sums_like),
    ("geometric sums closed as printed", closed_geometric_sums),
)
"""Rewrites applied in turn, each kept when the identity check confirms it."""

SHAPES: tuple[tuple[str, Callable[[sp.Expr], tuple[sp.Expr, tuple]]], ...] = (
    ("common factors taken out", lambda e: (sp.factor_terms(e), ())),
    ("one fraction", lambda e: (e if e.has(sp.exp) else sp.factor_terms(sp.together(e)), ())),
    ("factored", lambda e: (e if e.has(sp.Sum, sp.exp) else sp.factor(e), ())),
    ("collected", lambda e: (e if e.has(sp.Sum, sp.exp) else collected(e), ())),
    ("a rational function of the exponential", rational_in_exponentials),
)
"""Alternative shapes of the result (with the auxiliary symbols they define); the shortest confirmed one in
LaTeX, after :func:`tidy_exponentials`, is kept. Factoring and bringing to one fraction leave sums and
exponentials alone: they would turn a printed (1 − e^{−p}) into (e^{p} − 1)e^{−p}."""


def present(formula: Formula, expr: sp.Expr | None = None, *, seconds: float = SECONDS_PER_REWRITE) -> Presentation:
    """The derived form of ``formula`` (or ``expr``, equal to it) in the presentation a person would print.

    Each rewrite runs within ``seconds`` and is kept only when ``formula.verify`` (30 digits at random points
    of the domain, then a symbolic zero) finds it equal to ``formula.derived``; the result is therefore the
    derived value, whatever the rewrites did.
    """
    current = formula.derived if expr is None else expr
    if sum(1 for _ in sp.preorder_traversal(current)) > MAX_NODES:
        return Presentation(current)
    applied: list[str] = []

    def confirmed(candidate: sp.Expr) -> bool:
        check = dataclasses.replace(formula, stated=candidate)
        return check.verify(n_points=4, symbolic_seconds=0.2).equal

    for name, rewrite in REWRITES:
        candidate = _bounded(rewrite, current, formula.stated, seconds=seconds)
        if candidate is not None and candidate != current and confirmed(candidate):
            current, applied = candidate, applied + [name]
    best = Presentation(current, tuple(applied))
    best_length = len(to_latex(current))
    for name, shape in SHAPES:
        shaped = _bounded(shape, current, seconds=seconds)
        if shaped is None:
            continue
        candidate = Presentation(_bounded(tidy_exponentials, shaped[0], seconds=seconds) or shaped[0],
                                 tuple(applied) + (name,), shaped[1])
        length = len(to_latex(candidate.expr)) + sum(len(to_latex(d)) + 8 for _, d in candidate.where)
        if candidate.expr != current and length < best_length and confirmed(candidate.value):
            best, best_length = candidate, length
    return best


def _bounded(function: Callable, *args, seconds: float) -> sp.Expr | None:
    try:
        with time_limit(seconds):
            return function(*args)
    except (TimeoutError, RecursionError, NotImplementedError, TypeError, ValueError, ZeroDivisionError,
            sp.PolynomialError):
        return None
