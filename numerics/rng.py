"""Counter-based random numbers for kernels: every draw is a pure function of (key, stream, counter).

Why. A parallel kernel that draws its own inputs (tokens of an SGD batch, Monte-Carlo samples)
must give the same numbers whatever numba's thread count and whatever order the threads run
in. A sequential generator cannot promise that; a counter-based one can: the ``j``-th 64-bit word
of stream ``s`` under key ``k`` is

    word(k, s, j) = mix64(base(k, s) + (j + 1)·γ),   base(k, s) = mix64(mix64(k) + (s + 1)·γ),

where γ = 0x9E3779B97F4A7C15 (the golden-ratio increment) and mix64 is Stafford's "Mix13"
finaliser (both as in SplitMix64, Steele, Lea & Flood, OOPSLA 2014, the generator behind Java's
``SplittableRandom``; it passes BigCrush). Within a stream the words are exactly the SplitMix64
sequence started at ``base``; different streams start at pseudo-random points of the 2⁶⁴-cycle,
so streams of the lengths used here (tens to thousands of words) overlap with probability
≈ (streams × words)² / 2⁶⁴, negligible.

Gaussians come from the 256-layer ziggurat of Marsaglia & Tsang (J. Stat. Softw. 5(8), 2000), in
the 52-bit variant NumPy's ``Generator.standard_normal`` uses: one word per draw 99.3 % of the
time (8 bits pick the layer, one the sign, 52 the abscissa); wedges and the tail (|x| > r =
3.6541528853610088) take extra words from the same stream. Uniforms are the top 53 bits of a
word, in [0, 1). Keys come from a ``SeedSequence`` (:func:`key_from_seed`) or from the caller's
NumPy generator (:func:`key_from_generator`, as ``draw_tokens`` does), so a key inherits NumPy's
seeding guarantees, and spawned children give independent keys.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from derivations.errors import InvalidArgument
from numerics._jit import jit, parallel_jit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_ONE = np.uint64(1)
_LOW8 = np.uint64(0xFF)
_LOW52 = np.uint64(0x000FFFFFFFFFFFFF)
_SHIFT8, _SHIFT9, _SHIFT11 = np.uint64(8), np.uint64(9), np.uint64(11)
_TO_UNIT = 2.0**-53

#: the ziggurat's base abscissa r and the area v of each of its 256 layers (Marsaglia & Tsang 2000)
ZIGGURAT_R = 3.6541528853610088
ZIGGURAT_V = 0.00492867323399


def _ziggurat_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, w, f) of the 256-layer normal ziggurat for 52-bit abscissae.

    Layer i ≥ 1 spans [0, x_i] × [f(x_i), f(x_{i−1})] with f(x) = e^{−x²/2}, x_255 = r and
    x_{i−1} = f⁻¹(v/x_i + f(x_i)); layer 0 is the base strip of width q = v/f(r) (it holds the tail).
    A 52-bit integer u gives the abscissa u·w_i; u < k_i means the point lies under the curve
    (k_i = 2⁵² x_{i−1}/x_i; k_0 = 2⁵² r/q, k_1 = 0); f_i = f(x_i) bounds the wedge test.
    """
    m1 = 2.0**52
    k = np.zeros(256, dtype=np.uint64)
    w = np.zeros(256)
    f = np.zeros(256)
    dn = tn = ZIGGURAT_R
    q = ZIGGURAT_V / math.exp(-0.5 * dn * dn)
    k[0] = np.uint64(int((dn / q) * m1))
    k[1] = np.uint64(0)
    w[0], w[255] = q / m1, dn / m1
    f[0], f[255] = 1.0, math.exp(-0.5 * dn * dn)
    for i in range(254, 0, -1):
        dn = math.sqrt(-2.0 * math.log(ZIGGURAT_V / dn + math.exp(-0.5 * dn * dn)))
        k[i + 1] = np.uint64(int((dn / tn) * m1))
        tn = dn
        f[i] = math.exp(-0.5 * dn * dn)
        w[i] = dn / m1
    return k, w, f


_ZIG_K, _ZIG_W, _ZIG_F = _ziggurat_tables()


@jit
def mix64(z):
    """Stafford's Mix13 finaliser of SplitMix64: a bijection of 64-bit words with full avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit
def stream_base(key, stream):
    """The starting point of stream ``stream`` (≥ 0) under ``key``.

    ``key`` is cast to uint64: a Python int below 2⁶³ would otherwise be typed int64, and int64 + uint64
    is float64 in numba (silently wrong words). Python callers pass keys ≥ 2⁶³ as ``np.uint64``.
    """
    return mix64(mix64(np.uint64(key)) + (np.uint64(stream) + _ONE) * GAMMA)


@jit
def word(base, counter):
    """The ``counter``-th (≥ 0) 64-bit word of the stream starting at ``base`` (cast to uint64, as in
    :func:`stream_base`)."""
    return mix64(np.uint64(base) + (np.uint64(counter) + _ONE) * GAMMA)


@jit
def uniform(base, counter):
    """(u, next counter): u ∈ [0, 1) with 53 random bits."""
    return float(word(base, counter) >> _SHIFT11) * _TO_UNIT, counter + 1


@jit
def normal(base, counter):
    """(x, next counter): x ~ N(0, 1) by the ziggurat, drawing words from ``counter`` on."""
    r = word(base, counter)
    idx = np.intp(r & _LOW8)
    rabs = (r >> _SHIFT9) & _LOW52
    if rabs < _ZIG_K[idx]:  # under the curve: 98.5 % of draws end here
        negative = float(np.int64((r >> _SHIFT8) & _ONE))
        return float(np.int64(rabs)) * _ZIG_W[idx] * (1.0 - 2.0 * negative), counter + 1  # branch-free sign
    return _normal_rejected(base, counter)


@jit
def _normal_rejected(base, counter):
    """The ziggurat from word ``counter`` on, when its first word fell outside the rectangles."""
    while True:
        r = word(base, counter)
        counter += 1
        idx = np.intp(r & _LOW8)
        negative = float(np.int64((r >> _SHIFT8) & _ONE))
        rabs = (r >> _SHIFT9) & _LOW52
        x = float(np.int64(rabs)) * _ZIG_W[idx] * (1.0 - 2.0 * negative)
        if rabs < _ZIG_K[idx]:
            return x, counter
        if idx == 0:
            while True:  # the tail beyond r (Marsaglia 1964): x = r + ξ with ξ ~ Exp(r) thinned
                u1, counter = uniform(base, counter)
                u2, counter = uniform(base, counter)
                xx = -math.log1p(-u1) / ZIGGURAT_R
                yy = -math.log1p(-u2)
                if yy + yy > xx * xx:
                    return (ZIGGURAT_R + xx) * (1.0 - 2.0 * negative), counter
        u, counter = uniform(base, counter)
        if _ZIG_F[idx] + u * (_ZIG_F[idx - 1] - _ZIG_F[idx]) < math.exp(-0.5 * x * x):
            return x, counter


@jit
def sign(base, counter):
    """(±1.0 with probability ½ each, next counter): the top bit of one word."""
    return (1.0 if word(base, counter) >> np.uint64(63) else -1.0), counter + 1


@jit
def fill_tokens(out, base, boolean):
    """Fill ``out[1:]`` with iid N(0, 1) (or Unif{±1} if ``boolean``) from one stream; ``out[0] = 0``."""
    out[0] = 0.0
    counter = 0
    for j in range(1, out.size):
        if boolean:
            out[j], counter = sign(base, counter)
        else:
            out[j], counter = normal(base, counter)


@parallel_jit
def _token_rows(key, first_stream, size, width, boolean):
    out = np.empty((size, width))
    for b in prange(size):
        fill_tokens(out[b], stream_base(key, first_stream + b), boolean)
    return out


def key_from_seed(seed) -> np.uint64:
    """A 64-bit key from an int seed or a ``np.random.SeedSequence`` (its first generated word)."""
    if isinstance(seed, np.random.SeedSequence):
        sequence = seed
    elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        sequence = np.random.SeedSequence(int(seed))
    else:
        raise InvalidArgument(f"seed={seed!r} must be a non-negative integer or a numpy SeedSequence")
    return sequence.generate_state(1, np.uint64)[0]


def key_from_generator(rng: np.random.Generator) -> np.uint64:
    """A 64-bit key drawn from a NumPy generator (one word), for callers that hold a ``Generator``."""
    return rng.integers(0, 2**64, dtype=np.uint64, endpoint=False)


def token_rows(key, size: int, width: int, boolean: bool = False, first_stream: int = 0) -> np.ndarray:
    """Rows ``first_stream .. first_stream+size−1`` of the token array under ``key``, shape (size, width).

    Row b is stream ``first_stream + b``: column 0 is 0, columns 1.. are iid N(0, 1) (Unif{±1} if
    ``boolean``). Any slice of rows is therefore the same numbers however the rows are batched.
    """
    for name, value, low in (("size", size, 0), ("width", width, 1), ("first_stream", first_stream, 0)):
        if int(value) != value or value < low:
            raise InvalidArgument(f"{name}={value!r} must be an integer >= {low}")
    return _token_rows(np.uint64(key), int(first_stream), int(size), int(width), bool(boolean))
