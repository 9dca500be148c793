"""Truncated power series in one variable, and Picard iteration of an autonomous ODE from 0.

A SymPy expression in state symbols is evaluated on truncated series (coefficient lists of
exact SymPy numbers) by walking its tree: Add, Mul, integer powers, exp, log and numbers. This is
how the λ -> ∞ phase-1 flow dθ/dτ = F(θ), θ(0) = 0 is solved order by order (rl.cf.phase1_expansion):
Picard iteration θ ← ∫_0^τ F(θ(s)) ds gains one exact order per pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp

from derivations.errors import InvalidArgument

Series = list  # coefficients c_0..c_N of Σ c_k τ^k


def _trim(a: Series, order: int) -> Series:
    return (list(a) + [sp.Integer(0)] * (order + 1))[: order + 1]


def add(a: Series, b: Series) -> Series:
    """a + b."""
    return [x + y for x, y in zip(a, b, strict=True)]


def mul(a: Series, b: Series) -> Series:
    """a·b truncated at the common order."""
    n = len(a)
    return [sp.Add(*[a[i] * b[k - i] for i in range(k + 1)]) for k in range(n)]


def inverse(a: Series) -> Series:
    """1/a (the constant term must be nonzero)."""
    if a[0] == 0:
        raise InvalidArgument("the series has no inverse: its constant term is 0")
    out = [1 / a[0]]
    for k in range(1, len(a)):
        out.append(-sp.Add(*[a[i] * out[k - i] for i in range(1, k + 1)]) / a[0])
    return out


def exp(a: Series) -> Series:
    """exp(a) = e^{a_0} Σ_k r^k/k! with r = a - a_0."""
    n = len(a)
    rest = [sp.Integer(0), *a[1:]]
    term = [sp.Integer(1)] + [sp.Integer(0)] * (n - 1)
    total = list(term)
    for j in range(1, n):
        term = [c / j for c in mul(term, rest)]
        total = add(total, term)
    return [sp.exp(a[0]) * c for c in total]


def log(a: Series) -> Series:
    """log(a) = log a_0 + ∫ a'/a."""
    n = len(a)
    derivative = [k * a[k] for k in range(1, n)] + [sp.Integer(0)]
    ratio = mul(derivative, inverse(a))
    return [sp.log(a[0])] + [ratio[k - 1] / k for k in range(1, n)]


def power(a: Series, exponent: int) -> Series:
    """a**exponent for an integer exponent."""
    if exponent < 0:
        return power(inverse(a), -exponent)
    out = [sp.Integer(1)] + [sp.Integer(0)] * (len(a) - 1)
    for _ in range(exponent):
        out = mul(out, a)
    return out


def evaluate(expr: sp.Expr, values: Mapping[sp.Symbol, Series], order: int) -> Series:
    """The truncated series of ``expr`` when each symbol is replaced by its series in ``values``."""
    cache: dict[sp.Basic, Series] = {}

    def walk(e: sp.Basic) -> Series:
        if e in cache:
            return cache[e]
        if e in values:
            out = _trim(values[e], order)
        elif e.is_Number or (e.is_number and not e.free_symbols):
            out = _trim([e], order)
        elif e.is_Add:
            out = walk(e.args[0])
            for arg in e.args[1:]:
                out = add(out, walk(arg))
        elif e.is_Mul:
            out = walk(e.args[0])
            for arg in e.args[1:]:
                out = mul(out, walk(arg))
        elif e.is_Pow and e.exp.is_Integer:
            out = power(walk(e.base), int(e.exp))
        elif isinstance(e, sp.exp):
            out = exp(walk(e.args[0]))
        elif isinstance(e, sp.log):
            out = log(walk(e.args[0]))
        else:
            raise InvalidArgument(f"cannot expand {type(e).__name__} ({sp.sstr(e)[:60]}) as a power series")
        cache[e] = out
        return out

    return walk(expr)


def integrate(a: Series) -> Series:
    """∫_0^τ a(s) ds, keeping the order."""
    return [sp.Integer(0)] + [a[k] / (k + 1) for k in range(len(a) - 1)]


def picard(rhs: Mapping[sp.Symbol, sp.Expr], order: int) -> dict[sp.Symbol, Series]:
    """The Taylor series to ``order`` of the solution of dθ/dτ = rhs(θ), θ(0) = 0 (autonomous)."""
    state = list(rhs)
    current = {s: [sp.Integer(0)] * (order + 1) for s in state}
    for _ in range(order):
        current = {s: integrate(evaluate(rhs[s], current, order)) for s in state}
    return current


def quadrature(rates: Mapping[sp.Symbol, sp.Expr], known: Mapping[sp.Symbol, Series], order: int):
    """∫_0^τ rate(θ(s)) ds for rates that depend only on the already-expanded ``known`` state."""
    return {s: integrate(evaluate(r, known, order)) for s, r in rates.items()}


def to_expr(a: Series, var: sp.Symbol) -> sp.Expr:
    """Σ_k a_k var^k."""
    return sp.Add(*[c * var**k for k, c in enumerate(a)])


def leading(a: Series) -> tuple[int, sp.Expr] | None:
    """(order, coefficient) of the lowest nonzero term; None when every coefficient is 0."""
    for k, c in enumerate(a):
        if sp.simplify(c) != 0:
            return k, sp.simplify(c)
    return None


def combine(terms: Sequence[tuple[sp.Expr, Series]]) -> Series:
    """Σ coefficient·series."""
    out = [sp.Integer(0)] * len(terms[0][1])
    for coefficient, s in terms:
        out = add(out, [coefficient * c for c in s])
    return out
