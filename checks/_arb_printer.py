"""Rigorous interval evaluation of SymPy expressions with python-flint's ``arb``.

:func:`interval_function` turns an expression tree into a Python callable on
:class:`Interval` arguments. An :class:`Interval` keeps its two endpoints as separate ``arb``
balls (usually exact or of tiny radius) rather than one wide ball: a mid-radius ball rounds its
radius up, so ``[0, w]`` would leak below 0, and ball multiplication and ``exp`` of a wide ball
overestimate badly (``exp([0, 2])`` as a ball reaches below 0). Every operation here is the
interval extension of the real function on the closed interval, computed on endpoints where the
function is monotone, and arb's own rounding makes each endpoint rigorous.

Undefined values (log of an interval reaching 0 or below, a division by an interval holding 0,
a negative base to a fractional power) give a NaN interval, on which every comparison is False:
such a box is never certified and never a counterexample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import sympy as sp
from flint import arb, fmpq

from derivations.errors import InvalidArgument, unknown_name

_NAN = arb.nan()


class Interval:
    """A real interval ``[lo, hi]`` whose endpoints are enclosed by the ``arb`` balls ``lo``, ``hi``."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: arb, hi: arb):
        self.lo = lo
        self.hi = hi

    @classmethod
    def point(cls, value: arb) -> Interval:
        """The degenerate interval at ``value``."""
        return cls(value, value)

    def lower(self) -> arb:
        """A ball whose value is a rigorous lower bound (its own lower end is the bound)."""
        return self.lo

    def is_nan(self) -> bool:
        """True when the interval is undefined or unbounded."""
        return not (self.lo.is_finite() and self.hi.is_finite())

    def __repr__(self) -> str:
        return f"Interval({self.lo.str(5)}, {self.hi.str(5)})"


def _nan() -> Interval:
    return Interval(_NAN, _NAN)


def _lo(*balls: arb) -> arb:
    """The least lower end of ``balls``, as an exact arb (arb's own ``min`` of overlapping balls is NaN)."""
    out = balls[0].lower()
    for b in balls[1:]:
        out = out.min(b.lower())
    return out


def _hi(*balls: arb) -> arb:
    """The greatest upper end of ``balls``, as an exact arb."""
    out = balls[0].upper()
    for b in balls[1:]:
        out = out.max(b.upper())
    return out


def _add(a: Interval, b: Interval) -> Interval:
    return Interval(a.lo + b.lo, a.hi + b.hi)


def _neg(a: Interval) -> Interval:
    return Interval(-a.hi, -a.lo)


def _mul(a: Interval, b: Interval) -> Interval:
    if a.lo is a.hi and b.lo is b.hi:
        p = a.lo * b.lo
        return Interval(p, p)
    p1, p2, p3, p4 = a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi
    return _checked(_lo(p1, p2, p3, p4), _hi(p1, p2, p3, p4))


def _scale(c: arb, a: Interval) -> Interval:
    x, y = c * a.lo, c * a.hi
    return Interval(x, y) if c >= 0 else Interval(y, x) if c <= 0 else _checked(_lo(x, y), _hi(x, y))


def _recip(a: Interval) -> Interval:
    if a.lo > 0 or a.hi < 0:
        return Interval(1 / a.hi, 1 / a.lo)
    return _nan()


def _pown(b: arb, n: int) -> arb:
    """``b**n`` for an integer ``n >= 0`` by repeated squaring (arb's ``**`` gives NaN for a ball holding 0)."""
    result, base = arb(1), b
    while n:
        if n & 1:
            result = result * base
        n >>= 1
        if n:
            base = base * base
    return result


def _ipow(a: Interval, n: int) -> Interval:
    if n < 0:
        return _recip(_ipow(a, -n))
    if n == 0:
        return Interval.point(arb(1))
    lo, hi = _pown(a.lo, n), _pown(a.hi, n)
    if n % 2 or a.lo >= 0:
        return Interval(lo, hi)
    if a.hi <= 0:
        return Interval(hi, lo)
    # the interval holds 0 (or an endpoint ball does): the even power lies in [0, max]
    return _checked(arb(0), _hi(lo, hi))


def _checked(lo: arb, hi: arb) -> Interval:
    # one undefined end makes the whole interval undefined: a half-NaN interval would let the
    # other end pass for a bound
    return Interval(lo, hi) if lo.is_finite() and hi.is_finite() else _nan()


def _increasing(f: Callable[[arb], arb]) -> Callable[[Interval], Interval]:
    def apply(a: Interval) -> Interval:
        return _checked(f(a.lo), f(a.hi))

    return apply


def _abs(a: Interval) -> Interval:
    if a.lo >= 0:
        return a
    if a.hi <= 0:
        return _neg(a)
    return _checked(arb(0), _hi(-a.lo, a.hi))


def _sign(a: Interval) -> Interval:
    if a.lo > 0:
        return Interval.point(arb(1))
    if a.hi < 0:
        return Interval.point(arb(-1))
    if a.lo is a.hi and a.lo.is_zero():
        return Interval.point(arb(0))
    return Interval(arb(-1), arb(1))


def _heaviside(a: Interval) -> Interval:
    if a.lo > 0:
        return Interval.point(arb(1))
    if a.hi < 0:
        return Interval.point(arb(0))
    return Interval(arb(0), arb(1))


def _periodic(f: Callable[[arb], arb]) -> Callable[[Interval], Interval]:
    # arb evaluates sin/cos on the hull ball rigorously; clipping to [-1, 1] removes its slack
    def apply(a: Interval) -> Interval:
        value = f(a.lo) if a.lo is a.hi else f(a.lo.union(a.hi))
        if not value.is_finite():
            return _nan()
        return Interval(value.lower().max(arb(-1)), value.upper().min(arb(1)))

    return apply


def _even_increasing(f: Callable[[arb], arb]) -> Callable[[Interval], Interval]:
    def apply(a: Interval) -> Interval:
        b = _abs(a)
        return _checked(f(b.lo), f(b.hi))

    return apply


def _rpow(a: Interval, p: int, q: int) -> Interval:
    """``a**(p/q)`` for ``q > 1``: SymPy's principal root, real only for ``a >= 0``."""
    if not a.lo >= 0:
        return _nan()

    def root(x: arb) -> arb:
        if x.is_zero():
            return x
        r = x.sqrt() if q == 2 else x.root(q)
        return _pown(r, abs(p))

    result = _checked(root(a.lo), root(a.hi))
    return _recip(result) if p < 0 else result


def _min(*items: Interval) -> Interval:
    lo, hi = items[0].lo.lower(), items[0].hi.upper()
    for item in items[1:]:
        lo, hi = lo.min(item.lo.lower()), hi.min(item.hi.upper())
    return _checked(lo, hi)


def _max(*items: Interval) -> Interval:
    lo, hi = items[0].lo.lower(), items[0].hi.upper()
    for item in items[1:]:
        lo, hi = lo.max(item.lo.lower()), hi.max(item.hi.upper())
    return _checked(lo, hi)


_UNARY: dict[type, Callable[[Interval], Interval]] = {
    sp.exp: _increasing(lambda x: x.exp()),
    sp.log: _increasing(lambda x: x.log() if x > 0 else _NAN),
    sp.sinh: _increasing(lambda x: x.sinh()),
    sp.tanh: _increasing(lambda x: x.tanh()),
    sp.atan: _increasing(lambda x: x.atan()),
    sp.erf: _increasing(lambda x: x.erf()),
    sp.cosh: _even_increasing(lambda x: x.cosh()),
    sp.sin: _periodic(lambda x: x.sin()),
    sp.cos: _periodic(lambda x: x.cos()),
    sp.Abs: _abs,
    sp.sign: _sign,
    sp.Heaviside: _heaviside,
}
# expm1 and log1p are SymPy codegen functions; import lazily-named classes when present
try:
    from sympy.codegen.cfunctions import expm1 as _expm1_cls
    from sympy.codegen.cfunctions import log1p as _log1p_cls

    _UNARY[_expm1_cls] = _increasing(lambda x: x.expm1())
    _UNARY[_log1p_cls] = _increasing(lambda x: x.log1p() if x > -1 else _NAN)
except ImportError:  # pragma: no cover - SymPy has shipped both since 1.2
    pass

SUPPORTED = sorted(
    [*(f.__name__ for f in _UNARY), "sqrt", "Pow", "Add", "Mul", "Min", "Max", "Sum", "pi", "E"]
)


def exact_arb(value: sp.Rational | Fraction | int) -> arb:
    """The ball of a rational (exact when the rational is dyadic, else of radius one ulp)."""
    value = Fraction(int(value.p), int(value.q)) if isinstance(value, sp.Rational) else Fraction(value)
    return arb(fmpq(value.numerator, value.denominator))


def unroll_sums(expr: sp.Expr, integers: Mapping[sp.Symbol, int], max_terms: int = 100_000) -> sp.Expr:
    """Substitute the integer values and expand every ``Sum`` with integer bounds into an ``Add``."""
    expr = sp.sympify(expr).subs({s: sp.Integer(v) for s, v in integers.items()})

    def expand(node: sp.Sum) -> sp.Expr:
        term = node.function
        for var, lo, hi in reversed(node.limits):
            if not (lo.is_Integer and hi.is_Integer):
                free = sorted(s.name for s in (lo.free_symbols | hi.free_symbols))
                raise InvalidArgument(
                    f"Sum over {var} has bounds ({lo}, {hi}) that are not integers; "
                    f"pass integers={{{', '.join(f'{n}: ...' for n in free)}}}"
                )
            count = int(hi) - int(lo) + 1
            if count > max_terms:
                raise InvalidArgument(f"Sum over {var} from {lo} to {hi} has {count} terms > {max_terms}")
            term = sp.Add(*[term.subs(var, k) for k in range(int(lo), int(hi) + 1)])
        return term

    while expr.has(sp.Sum):
        expr = expr.replace(lambda e: isinstance(e, sp.Sum) and not e.function.has(sp.Sum), expand)
    return expr


def interval_function(expr: sp.Expr, symbols: Sequence[sp.Symbol]) -> Callable[[Sequence[Interval]], Interval]:
    """Compile ``expr`` (Sums already unrolled) into ``f(args) -> Interval`` with ``args`` ordered as ``symbols``.

    Constants are built as arb balls when compiled, so compile under the working precision.

    Raises
    ------
    InvalidArgument
        For a function or node the printer does not know (the message lists what it supports),
        or a free symbol missing from ``symbols``.
    """
    index = {s: i for i, s in enumerate(symbols)}

    def build(node: sp.Basic) -> Callable[[Sequence[Interval]], Interval]:
        if node.is_Symbol:
            if node not in index:
                raise InvalidArgument(f"symbol {node} has no range; give it one in the box or in integers")
            i = index[node]
            return lambda args: args[i]
        if node.is_Rational:
            c = Interval.point(exact_arb(node))
            return lambda args: c
        if node.is_Float:
            c = Interval.point(exact_arb(sp.Rational(node)))
            return lambda args: c
        if node is sp.pi:
            c = Interval.point(arb.pi())
            return lambda args: c
        if node is sp.E:
            c = Interval.point(arb(1).exp())
            return lambda args: c
        if node.is_Add:
            return _fold([build(a) for a in node.args], _add)
        if node.is_Mul:
            coeff, rest = node.as_coeff_Mul()
            if coeff.is_Rational and coeff != 1:
                c, inner = exact_arb(coeff), build(rest)
                return lambda args: _scale(c, inner(args))
            return _fold([build(a) for a in node.args], _mul)
        if node.is_Pow:
            base, e = node.args
            b = build(base)
            if e.is_Integer:
                n = int(e)
                return lambda args: _ipow(b(args), n)
            if e.is_Rational:
                p, q = int(e.p), int(e.q)
                return lambda args: _rpow(b(args), p, q)
            # a symbolic or irrational exponent: base**e = exp(e*log(base))
            return build(sp.exp(e * sp.log(base), evaluate=False))
        if isinstance(node, (sp.Min, sp.Max)):
            parts = [build(a) for a in node.args]
            combine = _min if isinstance(node, sp.Min) else _max
            return lambda args: combine(*[p(args) for p in parts])
        if isinstance(node, sp.Sum):
            raise InvalidArgument(f"Sum {node} is not unrolled; pass its integer bounds in integers")
        func = type(node)
        if func in _UNARY and len(node.args) == 1:
            f, inner = _UNARY[func], build(node.args[0])
            return lambda args: f(inner(args))
        name = getattr(func, "__name__", str(func))
        raise unknown_name(f"function for interval evaluation (in {sp.sstr(node)})", name, SUPPORTED)

    return build(sp.sympify(expr))


def _fold(parts: list, combine):
    """An evaluator of ``parts[0] ∘ parts[1] ∘ …`` under the binary interval operation ``combine``."""

    def run(args):
        total = parts[0](args)
        for part in parts[1:]:
            total = combine(total, part(args))
        return total

    return run
