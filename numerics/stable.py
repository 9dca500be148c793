"""Numerically stable primitives that generated kernels (and model code) call from ``njit`` code.

Shape contracts: ``logsumexp(a)`` and ``softmax(a, out)`` take 1-D float64 arrays (``out`` of the
same length as ``a``); the scalar helpers take and return float64. None of them raises: an empty
or all ``-inf`` input gives ``-inf`` (logsumexp) or NaN weights (softmax), as the math says.
"""

from __future__ import annotations

import math

from numerics._jit import jit
from numerics.vector_exp import vexp


@jit
def logsumexp(a):
    """Return log(Σ exp(a_i)) for a 1-D array, shifted by max(a) so that nothing overflows."""
    n = a.shape[0]
    if n == 0:
        return -math.inf
    top = -math.inf
    for i in range(n):
        if a[i] != a[i]:
            return math.nan
        if a[i] > top:
            top = a[i]
    if math.isinf(top):
        # All -inf (empty support) or some +inf: the shift would produce inf - inf.
        return top
    acc = 0.0
    for i in range(n):
        acc += math.exp(a[i] - top)
    return top + math.log(acc)


@jit
def softmax(a, out):
    """Write softmax(a) into ``out`` (same length as ``a``) through log-sum-exp; return ``out``."""
    shift = logsumexp(a)
    for i in range(a.shape[0]):
        out[i] = math.exp(a[i] - shift)
    return out


@jit
def softmax_weights(scale, keys, first, last, out):
    """Unnormalised weights of sm(scale·keys[first..last]): out[j] = e^{scale·keys[first+j] − top}.

    ``top`` is the largest logit (from the extreme keys: scale·k is monotone in k), so every
    weight is in (0, 1] and the largest is 1. Returns (Σ_j out[j], top). The exponentials go
    through :func:`numerics.vector_exp.vexp` in a loop LLVM vectorises; weights below 10⁻³⁰⁷ are
    flushed to 0 (they cannot change a sum that holds 1).
    """
    count = last - first + 1
    kmin = kmax = keys[first]
    for j in range(1, count):
        k = keys[first + j]
        kmin = k if k < kmin else kmin
        kmax = k if k > kmax else kmax
    top = scale * kmax if scale >= 0 else scale * kmin
    for j in range(count):
        out[j] = vexp(scale * keys[first + j] - top)
    total = 0.0
    for j in range(count):  # a separate loop: an ordered sum would stop the one above from vectorising
        total += out[j]
    return total, top


@jit
def expm1_ratio(c, x):
    """Return expm1(c·x) / expm1(x), with its limit c at x = 0.

    This is the stable form of geometric sums such as M(p) = (1 - e^{-p(L-2)})/(1 - e^{-p})
    = expm1_ratio(L - 2, -p). For x > 0 and c > 0 the identity
    expm1(cx)/expm1(x) = e^{(c-1)x} · expm1(-cx)/expm1(-x) keeps both expm1 finite, so the
    result overflows only when the true value does.
    """
    if x == 0.0:
        return c * 1.0
    if x > 0.0 and c > 0.0:
        return math.exp((c - 1.0) * x) * (math.expm1(-c * x) / math.expm1(-x))
    return math.expm1(c * x) / math.expm1(x)


@jit
def logaddexp(a, b):
    """Return log(e^a + e^b) without overflow (NaN in, NaN out)."""
    if a != a or b != b:
        return math.nan
    if a == b:
        # Also covers a = b = ±inf, where a - b would be NaN.
        return a + math.log(2.0)
    top = max(a, b)
    return top + math.log1p(math.exp(-abs(a - b)))


@jit
def sign(x):
    """Return -1, 0 or 1 as SymPy's ``sign`` does for real x, and NaN for NaN."""
    if x != x:
        return math.nan
    if x == 0:
        return 0.0
    return math.copysign(1.0, x)


@jit
def logistic_loss(z):
    """l(z) = log(1 + e^{−z}) without overflow or cancellation (scalar)."""
    if z >= 0.0:
        return math.log1p(math.exp(-z))
    return -z + math.log1p(math.exp(z))


@jit
def logistic_weight(z):
    """g(z) = −l'(z) = 1/(1 + e^{z}) without overflow (scalar)."""
    if z >= 0.0:
        e = math.exp(-z)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(z))
