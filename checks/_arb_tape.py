"""A :class:`numerics.intervals.Tape` evaluated in arb ball arithmetic: the re-check of compiled proofs.

The compiled search of :mod:`checks.certify` proves boxes in double-precision interval
arithmetic whose library functions are trusted to :data:`numerics.intervals.LIBM_ULPS` ulps.
Every box it closes is proven again here, with the same test (natural extension, mean-value
form or monotone face), in arb: a ball holding the box goes through the same tape, and arb's
rigorous rounding decides. A box the balls cannot confirm (a ball is wider than an interval on a
wide box) is handed to the arb search of :mod:`checks.certify`, never counted as proven.

The tape is turned into straight-line Python (one line per op, plus one per partial derivative
in forward mode), so a re-check costs a few arb operations per op and no interpretation.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import arb

from checks._arb_printer import _pown, exact_arb
from numerics import intervals as I

_NAN = arb.nan()


def _rpow(a: arb, r: arb) -> arb:
    """a**r for a >= 0 (SymPy's principal root: undefined below 0); 0**r = 0 for r > 0."""
    if a.is_exact() and a.is_zero():
        return a if r > 0 else _NAN
    if not a > 0:
        return _NAN
    return a ** r


def _min(a: arb, b: arb) -> arb:
    if not (a.is_finite() and b.is_finite()):
        return _NAN
    return a.lower().min(b.lower()).union(a.upper().min(b.upper()))


def _max(a: arb, b: arb) -> arb:
    if not (a.is_finite() and b.is_finite()):
        return _NAN
    return a.lower().max(b.lower()).union(a.upper().max(b.upper()))


def _sign(a: arb) -> arb:
    if a > 0:
        return arb(1)
    if a < 0:
        return arb(-1)
    return arb(0, 1)


def _pick(first: bool, second: bool, da: arb, db: arb) -> arb:
    if first:
        return da
    if second:
        return db
    return da.union(db)


def _erf_factor(a: arb) -> arb:
    return 2 / arb.pi().sqrt() * (-(a * a)).exp()


_VALUE = {
    I.ADD: "{a} + {b}", I.MUL: "{a} * {b}", I.NEG: "-{a}", I.RECIP: "1 / {a}", I.IPOW: "_pown({a}, {k})",
    I.SQRT: "{a}.sqrt()", I.RPOW: "_rpow({a}, {b})", I.EXP: "{a}.exp()", I.LOG: "{a}.log()",
    I.EXPM1: "{a}.expm1()", I.LOG1P: "{a}.log1p()", I.TANH: "{a}.tanh()", I.ATAN: "{a}.atan()",
    I.SINH: "{a}.sinh()", I.COSH: "{a}.cosh()", I.ERF: "{a}.erf()", I.ABS: "abs({a})",
    I.MIN: "_min({a}, {b})", I.MAX: "_max({a}, {b})",
}
#: f'(a) for the unary ops, in terms of the operand {a}, the value {v} and the constants {b} (r) and {k} (r − 1)
_FACTOR = {
    I.NEG: "-1", I.RECIP: "-({v} * {v})", I.IPOW: "{n} * _pown({a}, {nm1})", I.SQRT: "1 / (2 * {v})",
    I.RPOW: "{b} * _rpow({a}, {k})", I.EXP: "{v}", I.LOG: "1 / {a}", I.EXPM1: "{v} + 1",
    I.LOG1P: "1 / (1 + {a})", I.TANH: "1 - {v} * {v}", I.ATAN: "1 / (1 + {a} * {a})", I.SINH: "{a}.cosh()",
    I.COSH: "{a}.sinh()", I.ERF: "_erf_factor({a})", I.ABS: "_sign({a})",
}


def ball_function(tape: I.Tape, with_grad: bool) -> Callable:
    """``f(X) -> (values, grads)``: the outputs of ``tape`` on the arb balls ``X`` (one per variable).

    ``values[i]`` encloses output ``i`` over the balls; with ``with_grad``, ``grads[i][j]``
    encloses its partial derivative in variable ``j`` (else ``grads`` is None). Compile under the
    working precision (constants are built then).
    """
    nv, nc = tape.n_vars, len(tape.consts)
    lines = ["def f(X):"]
    for j in range(nv):
        lines.append(f"    v{j} = X[{j}]")
    for c in range(nc):
        lines.append(f"    v{nv + c} = C[{c}]")
    # d[s] = list of derivative names per variable ("0" for an exact zero)
    d: dict[int, list[str]] = {}
    if with_grad:
        for j in range(nv):
            d[j] = ["ONE" if i == j else "0" for i in range(nv)]
        for c in range(nc):
            d[nv + c] = ["0"] * nv
    base = nv + nc
    for i, (code, a, b, k) in enumerate(tape.ops.tolist()):
        s = base + i
        lines.append(f"    v{s} = " + _VALUE[code].format(a=f"v{a}", b=f"v{b}", k=k))
        if not with_grad:
            continue
        out = []
        for j in range(nv):
            da, db = d[a][j], d[b][j] if code in (I.ADD, I.MUL, I.MIN, I.MAX) else "0"
            if code == I.ADD:
                expr = "0" if da == db == "0" else da if db == "0" else db if da == "0" else f"{da} + {db}"
            elif code == I.MUL:
                terms = ([] if da == "0" else [f"{da} * v{b}"]) + ([] if db == "0" else [f"v{a} * {db}"])
                expr = " + ".join(terms) or "0"
            elif code in (I.MIN, I.MAX):
                if da == db == "0":
                    expr = "0"
                else:
                    first = f"v{a} < v{b}" if code == I.MIN else f"v{a} > v{b}"
                    second = f"v{b} < v{a}" if code == I.MIN else f"v{b} > v{a}"
                    expr = f"_pick({first}, {second}, {da if da != '0' else 'ZERO'}, {db if db != '0' else 'ZERO'})"
            else:
                if da == "0":
                    expr = "0"
                else:
                    if f"f{s}" not in out:
                        factor = _FACTOR[code].format(a=f"v{a}", v=f"v{s}", b=f"v{b}", k=f"v{k}", n=k, nm1=k - 1)
                        lines.append(f"    f{s} = {factor}")
                        out.append(f"f{s}")
                    expr = f"f{s} * {da}"
            if expr == "0":
                d.setdefault(s, []).append("0")
            else:
                lines.append(f"    d{s}_{j} = {expr}")
                d.setdefault(s, []).append(f"d{s}_{j}")
    values = ", ".join(f"v{o}" for o in tape.outputs)
    if with_grad:
        grads = ", ".join("[" + ", ".join(x if x != "0" else "ZERO" for x in d[o]) + "]" for o in tape.outputs)
        lines.append(f"    return [{values}], [{grads}]")
    else:
        lines.append(f"    return [{values}], None")
    namespace = {
        "C": [_constant(c) for c in tape.consts],
        "ONE": arb(1), "ZERO": arb(0), "_pown": _pown, "_rpow": _rpow, "_min": _min, "_max": _max,
        "_sign": _sign, "_pick": _pick, "_erf_factor": _erf_factor,
    }
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from a tape built here
    return namespace["f"]


def _constant(value) -> arb:
    """The ball of one of the tape's constants: a rational or a float exactly, π and e to the precision."""
    import sympy as sp

    if value is sp.pi:
        return arb.pi()
    if value is sp.E:
        return arb(1).exp()
    return exact_arb(value if value.is_Rational else sp.Rational(value))


def box_balls(lo, hi) -> list[arb]:
    """One ball per variable holding ``[lo_j, hi_j]`` (exact points when ``lo_j == hi_j``)."""
    out = []
    for a, b in zip(lo, hi, strict=True):
        a, b = float(a), float(b)
        out.append(arb(a) if a == b else arb(a).union(arb(b)))
    return out
