"""Outward-rounded interval arithmetic in double precision, on an expression tape, in numba.

An expression (or several sharing sub-expressions) is flattened by :func:`compile_tape` into a
:class:`Tape`: slots ``0 … n_vars−1`` hold the variables, the next ``n_consts`` slots hold
constants (each a rigorous double enclosure ``[c_lo, c_hi]`` of the exact constant), and op
``i`` writes slot ``n_vars + n_consts + i``. :func:`evaluate` runs the tape on a box in one pass,
with forward-mode derivatives on request (each slot then also carries the enclosure of its
gradient over the box, the interval extension of ∂slot/∂x_j). One numba kernel interprets every
tape: nothing is compiled per expression, so a new inequality costs no compilation.

Rounding: IEEE 754 rounds ``+ − × ÷ √`` to nearest, so the exact result lies strictly between the
neighbours of the rounded one; every such endpoint is moved outward by one ulp
(``nextafter``). Library functions (``exp``, ``log``, ``tanh``, ``pow``, …) are moved out by
:data:`LIBM_ULPS` ulps, twice glibc's largest documented error for them. A value that is
undefined on part of the box (``log`` or ``√`` of an interval reaching below its domain, a
division by an interval holding 0) is NaN, and so is everything computed from it: a NaN
interval never proves anything.

:func:`branch_and_bound` is the compiled search of :mod:`checks.certify`'s first stage: it
bisects boxes until the margin's enclosure (natural extension, mean-value form, or a face where
the gradient pins a variable) proves the inequality, and records every closing box with how it
closed, so that each can be re-checked in ball arithmetic afterwards.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sp

from derivations.errors import InvalidArgument, unknown_name
from numerics._jit import jit

#: outward widening, in ulps, of a libm result (glibc documents ≤ 2 ulps for these functions)
LIBM_ULPS = 4

# op codes: result = op(slot a, slot b, integer k)
ADD, MUL, NEG, RECIP, IPOW, SQRT, RPOW, EXP, LOG, EXPM1, LOG1P, TANH, ATAN, SINH, COSH, ERF, ABS, MIN, MAX = range(19)
OP_NAMES = ("add", "mul", "neg", "recip", "ipow", "sqrt", "rpow", "exp", "log", "expm1", "log1p", "tanh", "atan",
            "sinh", "cosh", "erf", "abs", "min", "max")

_UNARY_CODES = {sp.exp: EXP, sp.log: LOG, sp.tanh: TANH, sp.atan: ATAN, sp.sinh: SINH, sp.cosh: COSH,
                sp.erf: ERF, sp.Abs: ABS}
try:
    from sympy.codegen.cfunctions import expm1 as _expm1_cls
    from sympy.codegen.cfunctions import log1p as _log1p_cls

    _UNARY_CODES[_expm1_cls] = EXPM1
    _UNARY_CODES[_log1p_cls] = LOG1P
except ImportError:  # pragma: no cover - SymPy has shipped both since 1.2
    pass

SUPPORTED = sorted([*(f.__name__ for f in _UNARY_CODES), "sqrt", "Pow", "Add", "Mul", "Min", "Max", "pi", "E"])

# leaf kinds recorded by branch_and_bound
INTERVAL, MEAN_VALUE, MONOTONE, EXCLUDED = 1, 2, 3, 4
# reasons a box is handed on unresolved
TOO_SMALL, UNDEFINED, CANDIDATE, UNRESOLVED_CENTRE, PRECISION_LIMIT, FACE = 1, 2, 3, 4, 5, 6
#: a box whose margin misses 0 by less than this many times the width of the centre's enclosure
#: (the rounding error there) is left to arb
PRECISION_FACTOR = 4.0
#: … and so is a box whose margin at the centre is less than this many times that width
CENTRE_FACTOR = 64.0
# why branch_and_bound returned
DONE, BUDGET, FOUND = 0, 1, 2
#: queue entries per variable that branch_and_bound keeps free for its depth-first fallback: more
#: than the splits of one variable along any path of the bisection tree (each split at least halves
#: a double interval, or its ratio hi/lo when geometric: about 2200 splits at most, from 2^1024 wide
#: to 2^-1074)
DEPTH_RESERVE = 4096


def float_enclosure(value: Fraction) -> tuple[float, float]:
    """The tightest double interval ``[lo, hi]`` holding the rational ``value`` (a point when it is a double)."""
    try:
        x = float(value)  # correctly rounded (int / int true division)
    except OverflowError:
        return _beyond_doubles(value > 0)
    if Fraction(x) == value:
        return x, x
    return (math.nextafter(x, -math.inf), x) if Fraction(x) > value else (x, math.nextafter(x, math.inf))


def _beyond_doubles(positive: bool) -> tuple[float, float]:
    """The enclosure of a number beyond the largest double: from it to infinity (or the mirror image)."""
    return (sys.float_info.max, math.inf) if positive else (-math.inf, -sys.float_info.max)


@dataclass(frozen=True)
class Tape:
    """A flattened expression DAG: ``ops[i] = (code, a, b, k)`` writes slot ``n_vars + n_consts + i``.

    ``consts`` are the exact constants (SymPy numbers) and ``const_lo``/``const_hi`` their double
    enclosures; ``outputs`` are the slots of the compiled expressions, in the order given.
    """

    symbols: tuple[sp.Symbol, ...]
    ops: np.ndarray
    consts: tuple[sp.Expr, ...]
    const_lo: np.ndarray
    const_hi: np.ndarray
    outputs: tuple[int, ...]

    @property
    def n_vars(self) -> int:
        return len(self.symbols)

    @property
    def n_slots(self) -> int:
        return self.n_vars + len(self.consts) + len(self.ops)

    def __len__(self) -> int:
        return len(self.ops)


def _constant_enclosure(value: sp.Expr) -> tuple[float, float]:
    if value.is_Rational:
        return float_enclosure(Fraction(int(value.p), int(value.q)))
    if value.is_Float:
        x = float(value)
        if math.isinf(x):
            return _beyond_doubles(x > 0)
        if Fraction(x) != Fraction(sp.Rational(value).p, sp.Rational(value).q):
            return math.nextafter(x, -math.inf), math.nextafter(x, math.inf)
        return x, x
    # pi, E: the double nearest the constant is within half an ulp of it
    x = float(value)
    return math.nextafter(x, -math.inf), math.nextafter(x, math.inf)


class _Builder:
    def __init__(self, symbols):
        self.symbols = tuple(symbols)
        self.slot: dict[sp.Basic, int] = {s: i for i, s in enumerate(self.symbols)}
        self.consts: list[sp.Expr] = []
        self.const_slot: dict[sp.Expr, int] = {}
        self.ops: list[tuple[int, int, int, int]] = []
        self.op_slot: dict[tuple[int, int, int, int], int] = {}

    # constants are numbered first and ops after, so op slots are fixed up at the end
    def const(self, value: sp.Expr) -> int:
        if value not in self.const_slot:
            self.const_slot[value] = -(len(self.consts) + 1)
            self.consts.append(value)
        return self.const_slot[value]

    def op(self, code: int, a: int, b: int = 0, k: int = 0) -> int:
        key = (code, a, b, k)
        if key not in self.op_slot:
            self.ops.append(key)
            self.op_slot[key] = len(self.ops) - 1 + (1 << 40)
        return self.op_slot[key]

    def build(self, node: sp.Basic) -> int:
        if node in self.slot:
            return self.slot[node]
        out = self._build(node)
        self.slot[node] = out
        return out

    def _build(self, node: sp.Basic) -> int:
        if node.is_Symbol:
            raise InvalidArgument(f"symbol {node} has no range; give it one in the box or in integers")
        if node.is_Rational or node.is_Float or node is sp.pi or node is sp.E:
            return self.const(node)
        if node.is_Add:
            parts = [self.build(a) for a in node.args]
            out = parts[0]
            for p in parts[1:]:
                out = self.op(ADD, out, p)
            return out
        if node.is_Mul:
            coeff, rest = node.as_coeff_Mul()
            if coeff == -1:
                return self.op(NEG, self.build(rest))
            parts = [self.build(a) for a in node.args]
            out = parts[0]
            for p in parts[1:]:
                out = self.op(MUL, out, p)
            return out
        if node.is_Pow:
            base, e = node.args
            if e.is_Integer:
                n = int(e)
                b = self.build(base)
                out = b if abs(n) == 1 else self.op(IPOW, b, 0, abs(n))
                return self.op(RECIP, out) if n < 0 else out
            if e.is_Rational:
                p, q = int(e.p), int(e.q)
                b = self.build(base)
                if q == 2:
                    out = self.op(SQRT, b)
                    out = out if abs(p) == 1 else self.op(IPOW, out, 0, abs(p))
                    return self.op(RECIP, out) if p < 0 else out
                # x**r for x >= 0 with the exponent r and r - 1 (for the derivative) as constants
                return self.op(RPOW, b, self.const(e), self.const(e - 1))
            return self.build(sp.exp(e * sp.log(base), evaluate=False))
        if isinstance(node, (sp.Min, sp.Max)):
            code = MIN if isinstance(node, sp.Min) else MAX
            parts = [self.build(a) for a in node.args]
            out = parts[0]
            for p in parts[1:]:
                out = self.op(code, out, p)
            return out
        func = type(node)
        if func in _UNARY_CODES and len(node.args) == 1:
            return self.op(_UNARY_CODES[func], self.build(node.args[0]))
        name = getattr(func, "__name__", str(func))
        raise unknown_name(f"function for compiled interval evaluation (in {sp.sstr(node)[:80]})", name, SUPPORTED)

    def tape(self, outputs: list[int]) -> Tape:
        n_vars, n_consts = len(self.symbols), len(self.consts)

        def fix(s: int) -> int:
            if s < 0:
                return n_vars + (-s - 1)
            if s >= 1 << 40:
                return n_vars + n_consts + (s - (1 << 40))
            return s

        ops = np.array([(c, fix(a), fix(b) if c in (ADD, MUL, MIN, MAX, RPOW) else 0,
                         fix(k) if c == RPOW else k) for c, a, b, k in self.ops], dtype=np.int64).reshape(-1, 4)
        bounds = [_constant_enclosure(c) for c in self.consts]
        lo = np.array([b[0] for b in bounds], dtype=np.float64)
        hi = np.array([b[1] for b in bounds], dtype=np.float64)
        return Tape(self.symbols, ops, tuple(self.consts), lo, hi, tuple(fix(o) for o in outputs))


def compile_tape(exprs, symbols) -> Tape:
    """Flatten ``exprs`` (SymPy, sums already unrolled) into one :class:`Tape` over ``symbols``.

    Identical sub-expressions share a slot. A number standing alone as an output is a constant
    slot. Raises :class:`~derivations.errors.InvalidArgument` for a function the tape does not
    have (the message lists what it supports) or a free symbol missing from ``symbols``.
    """
    builder = _Builder(symbols)
    outputs = [builder.build(sp.sympify(e)) for e in exprs]
    return builder.tape(outputs)


# ---------------------------------------------------------------------------------------------
# rounding and interval primitives


@jit
def _dn(x):
    return np.nextafter(x, -np.inf)


@jit
def _up(x):
    return np.nextafter(x, np.inf)


@jit
def _nudged(x, toward, ulps):
    """``x`` moved ``ulps`` doubles toward ``toward`` (−inf or +inf)."""
    for _ in range(ulps):
        x = np.nextafter(x, toward)
    return x


@jit
def _dn_libm(x):
    return _nudged(x, -np.inf, LIBM_ULPS)


@jit
def _up_libm(x):
    return _nudged(x, np.inf, LIBM_ULPS)


@jit
def _exact_unless_nonzero(a, b, p):
    """False when the product p = a·b is 0 but need not be exact (no factor is 0: it may have underflowed)."""
    return p != 0.0 or a == 0.0 or b == 0.0


@jit
def _mul(alo, ahi, blo, bhi):
    p1, p2, p3, p4 = alo * blo, alo * bhi, ahi * blo, ahi * bhi
    if p1 != p1 or p2 != p2 or p3 != p3 or p4 != p4:  # 0 · inf
        return math.nan, math.nan
    lo = min(min(p1, p2), min(p3, p4))
    hi = max(max(p1, p2), max(p3, p4))
    # an end at 0 is kept when every product that is 0 has a factor 0 (it is exact): a factor whose
    # interval ends at 0 keeps a margin of exactly 0 there
    if lo == 0.0 or hi == 0.0:
        exact = (_exact_unless_nonzero(alo, blo, p1) and _exact_unless_nonzero(alo, bhi, p2)
                 and _exact_unless_nonzero(ahi, blo, p3) and _exact_unless_nonzero(ahi, bhi, p4))
        if exact:
            return (lo if lo == 0.0 else _dn(lo)), (hi if hi == 0.0 else _up(hi))
    return _dn(lo), _up(hi)


@jit
def _sum_bound(a, b, toward):
    """a + b moved one ulp toward ``toward``, unless it is exact: with a 0 term, or when the rounded
    sum is 0 (with gradual underflow a sum of doubles rounds to 0 only when it is exactly 0)."""
    total = a + b
    if a == 0.0 or b == 0.0 or total == 0.0:
        return total
    return np.nextafter(total, toward)


@jit
def _add(alo, ahi, blo, bhi):
    return _sum_bound(alo, blo, -np.inf), _sum_bound(ahi, bhi, np.inf)


@jit
def _recip(alo, ahi):
    if alo > 0.0 or ahi < 0.0:
        return _dn(1.0 / ahi), _up(1.0 / alo)
    return math.nan, math.nan


@jit
def _pow_rounded(x, n, toward):
    """x**n for x >= 0 by repeated squaring, each product moved one ulp toward ``toward`` (−inf: a
    lower bound, +inf: an upper bound; all factors are >= 0, so the bounds compose)."""
    result, base = 1.0, x
    while n:
        if n & 1:
            result = np.nextafter(result * base, toward)
        n >>= 1
        if n:
            base = np.nextafter(base * base, toward)
    return result


@jit
def _pow_dn(x, n):
    """A lower bound of x**n for x >= 0."""
    return max(_pow_rounded(x, n, -np.inf), 0.0)


@jit
def _pow_up(x, n):
    """An upper bound of x**n for x >= 0."""
    return _pow_rounded(x, n, np.inf)


@jit
def _ipow(alo, ahi, n):
    if n == 0:
        return 1.0, 1.0
    if alo >= 0.0:
        return _pow_dn(alo, n), _pow_up(ahi, n)
    if ahi <= 0.0:
        if n % 2 == 0:
            return _pow_dn(-ahi, n), _pow_up(-alo, n)
        return -_pow_up(-alo, n), -_pow_dn(-ahi, n)
    if n % 2 == 0:
        return 0.0, _pow_up(max(-alo, ahi), n)
    return -_pow_up(-alo, n), _pow_up(ahi, n)


@jit
def _sqrt(alo, ahi):
    if not alo >= 0.0:
        return math.nan, math.nan
    return max(_dn(math.sqrt(alo)), 0.0), _up(math.sqrt(ahi))


@jit
def _rpow_point(x, rlo, rhi):
    """An enclosure of x**r for one x >= 0 and every r in [rlo, rhi] (rlo, rhi of one sign)."""
    if x == 0.0:
        if rlo > 0.0:
            return 0.0, 0.0
        return math.nan, math.nan
    a, b = math.pow(x, rlo), math.pow(x, rhi)
    return max(_dn_libm(min(a, b)), 0.0), _up_libm(max(a, b))


@jit
def _rpow(alo, ahi, rlo, rhi):
    """x**r on [alo, ahi] (x >= 0): increasing in x for r > 0, decreasing for r < 0."""
    if not alo >= 0.0:
        return math.nan, math.nan
    llo, lhi = _rpow_point(alo, rlo, rhi)
    hlo, hhi = _rpow_point(ahi, rlo, rhi)
    if rlo > 0.0:
        return llo, hhi
    return hlo, lhi


@jit
def _monotone(code, x):
    if code == EXP:
        return math.exp(x)
    if code == LOG:
        return math.log(x)
    if code == EXPM1:
        return math.expm1(x)
    if code == LOG1P:
        return math.log1p(x)
    if code == TANH:
        return math.tanh(x)
    if code == ATAN:
        return math.atan(x)
    if code == SINH:
        return math.sinh(x)
    return math.erf(x)


@jit
def _increasing(code, alo, ahi):
    if code == LOG and not alo > 0.0:
        return math.nan, math.nan
    if code == LOG1P and not alo > -1.0:
        return math.nan, math.nan
    lo, hi = _dn_libm(_monotone(code, alo)), _up_libm(_monotone(code, ahi))
    # clip to the function's range (the widening must not leave it)
    if code == EXP:
        lo = max(lo, 0.0)
    elif code == EXPM1:
        lo = max(lo, -1.0)
    elif code == TANH or code == ERF:
        lo, hi = max(lo, -1.0), min(hi, 1.0)
    return lo, hi


@jit
def _cosh(alo, ahi):
    if alo >= 0.0:
        return max(_dn_libm(math.cosh(alo)), 1.0), _up_libm(math.cosh(ahi))
    if ahi <= 0.0:
        return max(_dn_libm(math.cosh(ahi)), 1.0), _up_libm(math.cosh(alo))
    return 1.0, _up_libm(math.cosh(max(-alo, ahi)))


@jit
def _abs(alo, ahi):
    if alo >= 0.0:
        return alo, ahi
    if ahi <= 0.0:
        return -ahi, -alo
    return 0.0, max(-alo, ahi)


@jit
def _value(code, alo, ahi, blo, bhi, k):
    """The enclosure of one op's value; ``b`` is the second operand (the exponent r for RPOW)."""
    if code == ADD:
        return _add(alo, ahi, blo, bhi)
    if code == MUL:
        return _mul(alo, ahi, blo, bhi)
    if code == NEG:
        return -ahi, -alo
    if code == RECIP:
        return _recip(alo, ahi)
    if code == IPOW:
        return _ipow(alo, ahi, k)
    if code == SQRT:
        return _sqrt(alo, ahi)
    if code == RPOW:
        return _rpow(alo, ahi, blo, bhi)
    if code == COSH:
        return _cosh(alo, ahi)
    if code == ABS:
        return _abs(alo, ahi)
    if code == MIN:
        return min(alo, blo), min(ahi, bhi)
    if code == MAX:
        return max(alo, blo), max(ahi, bhi)
    return _increasing(code, alo, ahi)


@jit
def _hull(alo, ahi, blo, bhi):
    return min(alo, blo), max(ahi, bhi)


@jit
def _factor(code, alo, ahi, blo, bhi, k, vlo, vhi, rlo, rhi, r1lo, r1hi):
    """The enclosure of f'(a) for a unary op (value [vlo, vhi] already computed)."""
    if code == NEG:
        return -1.0, -1.0
    if code == RECIP:  # -1/a² = -v²
        slo, shi = _ipow(vlo, vhi, 2)
        return -shi, -slo
    if code == IPOW:  # n a^(n-1)
        plo, phi = _ipow(alo, ahi, k - 1)
        return _mul(plo, phi, float(k), float(k))
    if code == SQRT:  # 1 / (2 √a)
        return _recip(_dn(2.0 * vlo), _up(2.0 * vhi))
    if code == RPOW:  # r a^(r-1)
        plo, phi = _rpow(alo, ahi, r1lo, r1hi)
        return _mul(plo, phi, rlo, rhi)
    if code == EXP:
        return vlo, vhi
    if code == LOG:
        return _recip(alo, ahi)
    if code == EXPM1:
        return _add(vlo, vhi, 1.0, 1.0)
    if code == LOG1P:
        slo, shi = _add(alo, ahi, 1.0, 1.0)
        return _recip(slo, shi)
    if code == TANH:  # 1 - tanh²
        slo, shi = _ipow(vlo, vhi, 2)
        return max(_dn(1.0 - shi), 0.0), min(_up(1.0 - slo), 1.0)
    if code == ATAN:  # 1 / (1 + a²)
        slo, shi = _ipow(alo, ahi, 2)
        return _recip(_dn(1.0 + slo), _up(1.0 + shi))
    if code == SINH:
        return _cosh(alo, ahi)
    if code == COSH:  # sinh is increasing
        return _increasing(SINH, alo, ahi)
    if code == ERF:  # 2/√π · e^{-a²}
        slo, shi = _ipow(alo, ahi, 2)
        elo, ehi = _increasing(EXP, -shi, -slo)
        return _mul(elo, ehi, 1.1283791670955125, 1.1283791670955128)
    if code == ABS:  # Clarke: sign(a), [-1, 1] where a holds 0
        if alo > 0.0:
            return 1.0, 1.0
        if ahi < 0.0:
            return -1.0, -1.0
        return -1.0, 1.0
    return math.nan, math.nan


@jit
def evaluate(ops, const_lo, const_hi, xlo, xhi, vlo, vhi, dlo, dhi, with_grad):
    """Run the tape on the box ``[xlo, xhi]``: value enclosures into ``vlo``/``vhi`` (one per slot).

    With ``with_grad``, ``dlo[s, j]``/``dhi[s, j]`` enclose ∂slot_s/∂x_j over the box (forward mode).
    """
    nv = xlo.shape[0]
    nc = const_lo.shape[0]
    for j in range(nv):
        vlo[j], vhi[j] = xlo[j], xhi[j]
    for c in range(nc):
        vlo[nv + c], vhi[nv + c] = const_lo[c], const_hi[c]
    if with_grad:
        for s in range(nv + nc):
            for j in range(nv):
                dlo[s, j] = 0.0
                dhi[s, j] = 0.0
        for j in range(nv):
            dlo[j, j] = 1.0
            dhi[j, j] = 1.0
    base = nv + nc
    for i in range(ops.shape[0]):
        code, a, b, k = ops[i, 0], ops[i, 1], ops[i, 2], ops[i, 3]
        s = base + i
        alo, ahi = vlo[a], vhi[a]
        blo, bhi = vlo[b], vhi[b]
        lo, hi = _value(code, alo, ahi, blo, bhi, k)
        if lo != lo or hi != hi:
            lo, hi = math.nan, math.nan
        vlo[s], vhi[s] = lo, hi
        if not with_grad:
            continue
        if code == ADD:
            for j in range(nv):
                dlo[s, j], dhi[s, j] = _add(dlo[a, j], dhi[a, j], dlo[b, j], dhi[b, j])
        elif code == MUL:
            for j in range(nv):
                x1, y1 = _mul(dlo[a, j], dhi[a, j], blo, bhi)
                x2, y2 = _mul(alo, ahi, dlo[b, j], dhi[b, j])
                dlo[s, j], dhi[s, j] = _add(x1, y1, x2, y2)
        elif code == MIN or code == MAX:
            first = (ahi < blo) if code == MIN else (alo > bhi)
            second = (bhi < alo) if code == MIN else (blo > ahi)
            for j in range(nv):
                if first:
                    dlo[s, j], dhi[s, j] = dlo[a, j], dhi[a, j]
                elif second:
                    dlo[s, j], dhi[s, j] = dlo[b, j], dhi[b, j]
                else:
                    dlo[s, j], dhi[s, j] = _hull(dlo[a, j], dhi[a, j], dlo[b, j], dhi[b, j])
        else:
            rlo, rhi, r1lo, r1hi = 0.0, 0.0, 0.0, 0.0
            if code == RPOW:
                rlo, rhi, r1lo, r1hi = vlo[b], vhi[b], vlo[k], vhi[k]
            flo, fhi = _factor(code, alo, ahi, blo, bhi, k, lo, hi, rlo, rhi, r1lo, r1hi)
            for j in range(nv):
                dlo[s, j], dhi[s, j] = _mul(flo, fhi, dlo[a, j], dhi[a, j])


@jit
def evaluate_at(ops, const_lo, const_hi, xlo, xhi, slot):
    """The value enclosure of one slot on the box ``[xlo, xhi]`` (allocates its own work arrays)."""
    n = xlo.shape[0] + const_lo.shape[0] + ops.shape[0]
    vlo = np.empty(n)
    vhi = np.empty(n)
    d = np.empty((1, 1))
    evaluate(ops, const_lo, const_hi, xlo, xhi, vlo, vhi, d, d, False)
    return vlo[slot], vhi[slot]


# ---------------------------------------------------------------------------------------------
# branch and bound


@jit
def _ok(lo, strict):
    return lo > 0.0 if strict else lo >= 0.0


@jit
def _violated(hi, strict):
    return hi <= 0.0 if strict else hi < 0.0


@jit
def _constraints(vlo, vhi, con_slots, con_strict):
    """0: certainly false, 1: certainly true, 2: unknown (all constraints together)."""
    state = 1
    for c in range(con_slots.shape[0]):
        lo, hi = vlo[con_slots[c]], vhi[con_slots[c]]
        if lo != lo or hi != hi:
            state = 2
            continue
        if _violated(hi, con_strict[c]):
            return 0
        if not _ok(lo, con_strict[c]):
            state = 2
    return state


@jit
def centre_values(ops, const_lo, const_hi, lo, hi, slot, con_slots, con_strict):
    """The value of one slot at the centre of each box (row ``i``: ``[lo[i], hi[i]]``).

    Each value is the midpoint of the slot's enclosure at the centre point, a float estimate (not
    a bound), NaN where the tape is undefined there or where a constraint (the slots
    ``con_slots``, each ``> 0`` where ``con_strict``, else ``>= 0``) certainly fails.
    """
    n_rows, nv = lo.shape
    n = nv + const_lo.shape[0] + ops.shape[0]
    vlo = np.empty(n)
    vhi = np.empty(n)
    d = np.empty((1, 1))
    x = np.empty(nv)
    out = np.empty(n_rows)
    for i in range(n_rows):
        for j in range(nv):
            x[j] = 0.5 * lo[i, j] + 0.5 * hi[i, j]
        evaluate(ops, const_lo, const_hi, x, x, vlo, vhi, d, d, False)
        if _constraints(vlo, vhi, con_slots, con_strict) == 0:
            out[i] = np.nan
        else:
            out[i] = 0.5 * vlo[slot] + 0.5 * vhi[slot]
    return out


@jit
def splittable(lo, hi, width, min_width):
    """Halve while the half is at least ``min_width`` of the range or, away from 0, of the distance to 0."""
    scale = width
    if lo > 0.0:
        scale = min(scale, lo)
    elif hi < 0.0:
        scale = min(scale, -hi)
    return 0.5 * (hi - lo) >= min_width * scale


@jit
def _split_point(lo, hi):
    """The midpoint, or the geometric mean for a box away from 0 spanning more than a factor 4.

    Near a singular end (an open end shrunk to 1e-9 of the range, say) relative widths matter:
    geometric splitting reaches boxes of bounded ratio hi/lo in log(log(hi/lo)) levels.
    """
    if lo > 0.0 and hi > 4.0 * lo:
        return math.sqrt(lo) * math.sqrt(hi)
    if hi < 0.0 and lo < 4.0 * hi:
        return -math.sqrt(-lo) * math.sqrt(-hi)
    return 0.5 * (lo + hi)


@jit
def _record(lo_out, hi_out, codes, n, blo, bhi, code):
    lo_out[n, :] = blo
    hi_out[n, :] = bhi
    codes[n] = code
    return n + 1


@jit
def branch_and_bound(ops, const_lo, const_hi, margin, con_slots, con_strict, strict,
                     queue_lo, queue_hi, region_lo, region_hi, min_width, max_boxes,
                     leaf_lo, leaf_hi, leaf_kind, leaf_aux, open_lo, open_hi, open_why,
                     state, candidate):
    """Bisect the boxes in the queue until each closes, is handed on, or the budget runs out.

    ``state`` = [n_queue, n_leaf, n_open, n_boxes, reason, head] is read and written, so a search
    can be resumed (after a candidate counterexample was checked, say). The queue is a ring buffer
    over the rows of ``queue_lo``/``queue_hi``: ``n_queue`` boxes from row ``head`` on, wrapping
    around. The search is breadth-first (oldest box first; a split box's halves appended lower
    half first), so a budget that runs out leaves a frontier spread over the region, not one
    corner explored to the bottom. When fewer than DEPTH_RESERVE rows per variable are free it
    falls back to depth-first from the newest box (the tail) until the queue is shorter again;
    a depth-first walk adds at most one box per level of the tree, so the queue stays within its
    rows. It needs rows for every box the budget can reach (``n_queue + max_boxes − n_boxes + 1``)
    or DEPTH_RESERVE rows per variable more than the boxes it starts with. The order depends on
    the boxes and the number of rows only (a search resumed in chunks is the same search), and
    a search that runs to the end closes the same boxes in any order: what happens to a box
    depends on the box alone.

    A box closes when the enclosure of the margin (slot ``margin``) has its lower end ``>= 0``
    (``> 0`` if ``strict``): the natural extension (kind INTERVAL), the mean-value form
    ``m(c) + Σ_j ∂_j m(B)(B_j − c_j)`` about the centre c (MEAN_VALUE; ``leaf_aux`` holds c), or
    the natural extension on the face where each variable whose partial derivative has one sign
    is pinned to the end that minimises (MONOTONE; ``leaf_aux`` holds −1 for the lower end, +1
    for the upper, 0 free). A box where the constraints are certainly false is EXCLUDED.

    A box whose centre certainly violates the inequality (with the constraints certainly true
    there) stops the search (reason FOUND, the centre in ``candidate``, the box recorded as open
    with why CANDIDATE). Boxes are handed on (recorded as open) where doubles cannot help:

    * PRECISION_LIMIT: the margin's lower end misses 0 by no more than PRECISION_FACTOR times
      the width of the centre's enclosure (by rounding only), or the margin at the centre is
      below CENTRE_FACTOR times that width (doubles are at the end of their resolution);
    * UNRESOLVED_CENTRE: the centre's enclosure straddles 0, or is undefined where the
      constraints hold (a touching point, or a cancellation doubles cannot resolve);
    * FACE: the monotone test pinned a variable to the region's own boundary and failed there
      (the arb search substitutes that face exactly, which cancels what intervals cannot);
    * TOO_SMALL / UNDEFINED: no variable can be split above ``min_width`` (see
      :func:`splittable`), the margin being defined or not.

    The variable split is the one with the largest ``|∂m/∂x_j| · width_j`` (the "smear") when the
    gradient is known, else the widest relative to the region; a variable the margin does not
    depend on (gradient exactly 0) is never split.
    """
    nv = queue_lo.shape[1]
    capacity = queue_lo.shape[0]
    n = nv + const_lo.shape[0] + ops.shape[0]
    vlo = np.empty(n)
    vhi = np.empty(n)
    dlo = np.empty((n, nv))
    dhi = np.empty((n, nv))
    blo = np.empty(nv)
    bhi = np.empty(nv)
    clo = np.empty(nv)
    flo = np.empty(nv)
    fhi = np.empty(nv)
    pins = np.empty(nv)
    smear = np.empty(nv)
    widths = np.empty(nv)
    for j in range(nv):
        widths[j] = region_hi[j] - region_lo[j] if region_hi[j] > region_lo[j] else 1.0
    n_queue, n_leaf, n_open, n_boxes, head = state[0], state[1], state[2], state[3], state[5]
    state[4] = DONE
    while n_queue > 0:
        if n_boxes >= max_boxes:
            state[4] = BUDGET
            break
        if n_queue + DEPTH_RESERVE * nv < capacity:
            row = head
            head = (head + 1) % capacity
        else:
            row = (head + n_queue - 1) % capacity
        n_queue -= 1
        for j in range(nv):
            blo[j], bhi[j] = queue_lo[row, j], queue_hi[row, j]
        n_boxes += 1
        evaluate(ops, const_lo, const_hi, blo, bhi, vlo, vhi, dlo, dhi, False)
        mlo, mhi = vlo[margin], vhi[margin]
        defined = mlo == mlo and math.isfinite(mlo) and math.isfinite(mhi)
        # a lower end >= 0 proves the box even when the upper end overflowed to +inf
        if mlo == mlo and mhi == mhi and _ok(mlo, strict):
            n_leaf = _record(leaf_lo, leaf_hi, leaf_kind, n_leaf, blo, bhi, INTERVAL)
            continue
        cstate = _constraints(vlo, vhi, con_slots, con_strict)
        if cstate == 0:
            n_leaf = _record(leaf_lo, leaf_hi, leaf_kind, n_leaf, blo, bhi, EXCLUDED)
            continue
        for j in range(nv):
            c = 0.5 * (blo[j] + bhi[j])
            clo[j] = min(max(c, blo[j]), bhi[j])
        evaluate(ops, const_lo, const_hi, clo, clo, vlo, vhi, dlo, dhi, False)
        clow, chigh = vlo[margin], vhi[margin]
        centre_state = _constraints(vlo, vhi, con_slots, con_strict)
        if _violated(chigh, strict) and centre_state == 1:
            candidate[:] = clo
            n_open = _record(open_lo, open_hi, open_why, n_open, blo, bhi, CANDIDATE)
            state[4] = FOUND
            break
        if defined and cstate == 1 and clow == clow and (
                -mlo <= PRECISION_FACTOR * (chigh - clow) or clow <= CENTRE_FACTOR * (chigh - clow)):
            # the box misses by no more than the rounding error at its centre, or the margin at the
            # centre is within a few dozen rounding errors of 0: boxes would have to shrink until
            # the rounding of the enclosure itself is below the margin
            n_open = _record(open_lo, open_hi, open_why, n_open, blo, bhi, PRECISION_LIMIT)
            continue
        if (clow != clow and centre_state == 1) or (
                clow == clow and not _ok(clow, strict) and not _violated(chigh, strict)):
            n_open = _record(open_lo, open_hi, open_why, n_open, blo, bhi, UNRESOLVED_CENTRE)
            continue
        closed = False
        at_face = False
        have_smear = False
        if defined and clow == clow:
            evaluate(ops, const_lo, const_hi, blo, bhi, vlo, vhi, dlo, dhi, True)
            grad_ok = True
            for j in range(nv):
                if not (math.isfinite(dlo[margin, j]) and math.isfinite(dhi[margin, j])):
                    grad_ok = False
            if grad_ok:
                have_smear = True
                for j in range(nv):
                    smear[j] = max(abs(dlo[margin, j]), abs(dhi[margin, j])) * (bhi[j] - blo[j]) / widths[j]
                total = clow
                for j in range(nv):
                    if bhi[j] > blo[j]:
                        lo, _ = _mul(dlo[margin, j], dhi[margin, j], _dn(blo[j] - clo[j]), _up(bhi[j] - clo[j]))
                        total = _dn(total + lo)
                if _ok(total, strict):
                    n_leaf = _record(leaf_lo, leaf_hi, leaf_kind, n_leaf, blo, bhi, MEAN_VALUE)
                    leaf_aux[n_leaf - 1, :] = clo
                    closed = True
                else:
                    any_pin = False
                    for j in range(nv):
                        pins[j] = 0.0
                        flo[j], fhi[j] = blo[j], bhi[j]
                        if bhi[j] > blo[j] and dlo[margin, j] >= 0.0:
                            pins[j], fhi[j], any_pin = -1.0, blo[j], True
                            at_face = at_face or blo[j] <= region_lo[j]
                        elif bhi[j] > blo[j] and dhi[margin, j] <= 0.0:
                            pins[j], flo[j], any_pin = 1.0, bhi[j], True
                            at_face = at_face or bhi[j] >= region_hi[j]
                    if any_pin:
                        evaluate(ops, const_lo, const_hi, flo, fhi, vlo, vhi, dlo, dhi, False)
                        if vlo[margin] == vlo[margin] and _ok(vlo[margin], strict):
                            n_leaf = _record(leaf_lo, leaf_hi, leaf_kind, n_leaf, blo, bhi, MONOTONE)
                            leaf_aux[n_leaf - 1, :] = pins
                            closed = True
        if closed:
            continue
        if at_face:
            n_open = _record(open_lo, open_hi, open_why, n_open, blo, bhi, FACE)
            continue
        best, best_w = -1, -1.0
        for j in range(nv):
            mid = _split_point(blo[j], bhi[j])
            if not (splittable(blo[j], bhi[j], widths[j], min_width) and blo[j] < mid < bhi[j]):
                continue
            score = smear[j] if have_smear else (bhi[j] - blo[j]) / widths[j]
            if have_smear and score == 0.0:
                continue  # the margin does not depend on this variable here
            if score > best_w:
                best, best_w = j, score
        if best < 0:
            n_open = _record(open_lo, open_hi, open_why, n_open, blo, bhi, TOO_SMALL if defined else UNDEFINED)
            continue
        mid = _split_point(blo[best], bhi[best])
        for half in range(2):
            row = (head + n_queue) % capacity
            queue_lo[row, :] = blo
            queue_hi[row, :] = bhi
            if half == 0:
                queue_hi[row, best] = mid
            else:
                queue_lo[row, best] = mid
            n_queue += 1
    state[0], state[1], state[2], state[3], state[5] = n_queue, n_leaf, n_open, n_boxes, head
