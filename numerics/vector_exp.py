"""An exponential that LLVM vectorises: the hot loops of softmax kernels run four exps per instruction.

``math.exp`` in a numba loop is a call into libm (≈ 7–8 ns per value on the CI machine) that LLVM
cannot vectorise without Intel's SVML. :func:`vexp` is branch-free straight-line code, so a loop
``out[i] = vexp(a[i])`` compiles to AVX2 instructions (≈ 2.5 ns per value, measured by
``tdcheck bench ih-sgd``'s kernel and in ``tests/numerics/test_vector_exp.py``).

Method (Cody & Waite 1980; Tang, ACM TOMS 15, 1989): x = n ln 2 + r with n = round(x / ln 2),
|r| ≤ ln 2 / 2, ln 2 split into a 32-bit head and a tail so that r is exact; e^r by its Taylor
polynomial of degree 13 (truncation ≤ r¹⁴/14! < 5·10⁻¹⁸), evaluated in Estrin's scheme;
2^n assembled in the exponent bits. n is rounded with the 1.5·2⁵² trick, whose bit pattern
carries n in its low bits, so no float→int conversion (absent from AVX2) is needed.

Accuracy: within 3 ulp (relative error < 5·10⁻¹⁶) for −708 < x < 709.78 (tested). Outside:
e^x = +inf above log(DBL_MAX) ≈ 709.78 as in libm, NaN stays NaN, and results below e^{−708}
≈ 3.3·10⁻³⁰⁸ are flushed to 0 (libm would return a subnormal): callers use it for softmax
weights e^{logit − max logit} ∈ (0, 1], where a term below 10⁻³⁰⁷ cannot change a sum that holds 1.
"""

from __future__ import annotations

import math

from llvmlite import ir
from numba import types
from numba.extending import intrinsic, register_jitable

_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: n·_LN2_HI is exact for |n| < 2²⁰
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_ROUND = 6755399441055744.0  # 1.5·2⁵²: x + _ROUND rounds x to an integer held in the low mantissa bits
#: below this argument the result is flushed to zero (e^{-708} ≈ 3.3e-308 is the smallest kept)
FLUSH_BELOW = -708.0
#: log(DBL_MAX): above it e^x overflows to +inf
OVERFLOW_ABOVE = 709.782712893384


@intrinsic
def _int_bits_as_float(typingctx, bits):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _float_bits_as_int(typingctx, value):
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@register_jitable(inline="always")
def vexp(x):
    """e^x, branch-free (see the module docstring for range, accuracy and the flush below e^{−708})."""
    xc = x if x > FLUSH_BELOW else FLUSH_BELOW
    xc = xc if xc < OVERFLOW_ABOVE else OVERFLOW_ABOVE
    shifted = xc * _INV_LN2 + _ROUND
    n = shifted - _ROUND
    r = (xc - n * _LN2_HI) - n * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    low = ((1.0 + r) + r2 * (1 / 2 + r * (1 / 6))) + r4 * ((1 / 24 + r * (1 / 120)) + r2 * (1 / 720 + r * (1 / 5040)))
    high = ((1 / 40320 + r * (1 / 362880)) + r2 * (1 / 3628800 + r * (1 / 39916800))) + r4 * (
        1 / 479001600 + r * (1 / 6227020800)
    )
    # 2^(n−1) from the exponent bits (n − 1 + 1023 ∈ [1, 2046] on the clamped range), then ×2
    y = (low + r8 * high) * _int_bits_as_float((_float_bits_as_int(shifted) + 1022) << 52) * 2.0
    y = y if x > FLUSH_BELOW else 0.0
    y = y if x < OVERFLOW_ABOVE else math.inf
    return y if x == x else x
