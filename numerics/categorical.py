"""Categorical draws and multinomial counts from the counter-based generator of :mod:`numerics.rng`.

Why. A categorical data model sampled as counts (a vocabulary of K tokens, n tokens per sequence,
many sequences) must give the same counts whatever numba's thread count and however the sequences
are split into calls. Every draw here is therefore a pure function of (key, stream, counter).

Method. Walker's alias method in Vose's stable construction (Walker, ACM TOMS 3(3), 1977; Vose,
IEEE TSE 17(9), 1991), built in exact integer arithmetic: column j holds a threshold T_j and an
alias a_j, and a draw picks a column uniformly, keeps it with probability T_j and otherwise takes
its alias. The weights are p_j / Σp rounded to integers W_j on the grid 1/(K·2⁵³) (largest
remainders, so Σ W = K·2⁵³ exactly), and Vose's pairing is done on those integers, so the table
represents the rounded law *exactly*: P(j) = W_j / (K·2⁵³), within 1/(K·2⁵³) of p_j / Σp. A zero
weight gets T_j = 0 and is never any column's alias (aliases are always columns with W ≥ 2⁵³), so
a zero-probability category is never drawn.

One 64-bit word w per draw (the words of :func:`numerics.rng.word`): the 128-bit product w·K has
the column ⌊w·K / 2⁶⁴⌋ as its high half (Lemire's multiply-shift, bias ≤ K/2⁶⁴) and, given the
column, a uniform fraction as its low half; the top 53 bits of that half are compared with
T_j = prob[j] (a multiple of 2⁻⁵³, so the comparison is exact).

Counters. :func:`multinomial_counts` with ``n`` draws from ``counter0`` uses the words
``counter0 .. counter0 + n - 1`` of one stream, one per draw. :func:`sample_counts` gives global
sample i (``first_sample`` + row) of stream ``stream`` the block ``i·n .. i·n + n - 1``: blocks of
different samples are disjoint, so samples are independent, and any split of the samples into calls
or threads reads the same words. Two experiments that must be independent take different streams
(or seeds); samples at different ``n`` on one stream share words (common random numbers).

Cost. O(K) to build a table (Python), O(n + K) per sample of n draws (the alias loop; one word,
one multiply and one table look-up per draw), so O(n) per sample whatever p is. An exact
conditional-binomial multinomial (K - 1 binomial draws per sample, each O(1) amortised) costs
O(K) per sample instead, and wins once n ≫ K; none is provided, since the sizes served here
(n ≲ 10⁴, K ≲ 10³, 10⁵ samples) take seconds either way.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from derivations.errors import InternalError, InvalidArgument
from numerics._jit import jit, parallel_jit
from numerics.rng import key_from_seed, stream_base, word

#: |Σp - 1| allowed in a probability vector
SUM_TOLERANCE = 1e-12
#: column resolution: a threshold is an integer in [0, 2⁵³], prob = threshold / 2⁵³
_RESOLUTION = 2**53
#: categories allowed: the column of a draw is a 64 x 32-bit product
MAX_CATEGORIES = 2**31
_MAX_COUNTER = 2**63 - 1

_S11, _S32 = np.uint64(11), np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_TO_UNIT = 2.0**-53


def _check_probabilities(p) -> np.ndarray:
    """``p`` as a float64 vector after the checks of :func:`alias_table`."""
    if np.iscomplexobj(p):
        msg = f"p must be real probabilities; got dtype {np.asarray(p).dtype}"
        raise InvalidArgument(msg)
    try:
        q = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError) as err:
        msg = f"p={p!r} must be a 1-D array of probabilities ({err})"
        raise InvalidArgument(msg) from err
    if q.ndim != 1 or q.size == 0:
        msg = f"p must be a non-empty 1-D array of probabilities; got shape {q.shape}"
        raise InvalidArgument(msg)
    if q.size > MAX_CATEGORIES:
        msg = f"p has {q.size} categories; at most {MAX_CATEGORIES} are supported"
        raise InvalidArgument(msg)
    bad = np.flatnonzero(~np.isfinite(q))
    if bad.size:
        msg = f"p[{bad[0]}]={float(q[bad[0]])!r} must be finite"
        raise InvalidArgument(msg)
    bad = np.flatnonzero(q < 0)
    if bad.size:
        msg = f"p[{bad[0]}]={float(q[bad[0]])!r} must be non-negative"
        raise InvalidArgument(msg)
    total = math.fsum(q.tolist())
    if not abs(total - 1.0) <= SUM_TOLERANCE:
        msg = f"sum(p)={total!r} must be within {SUM_TOLERANCE} of 1; normalise p first"
        raise InvalidArgument(msg)
    return q


def _integer_weights(q: np.ndarray) -> list[int]:
    """W_j ≥ 0 with Σ W = K·2⁵³ exactly, W_j = K·2⁵³·q_j/Σq rounded by largest remainders."""
    ratios = [x.as_integer_ratio() for x in q.tolist()]  # denominators are powers of two
    common = max(den for _, den in ratios)
    numerators = [num * (common // den) for num, den in ratios]
    total, scale = sum(numerators), len(numerators) * _RESOLUTION
    weights, remainders = [], []
    for num in numerators:
        whole, rest = divmod(num * scale, total)
        weights.append(whole)
        remainders.append(rest)
    # the deficit is Σ remainder/total < #(remainder > 0), so only positive entries are raised
    deficit = scale - sum(weights)
    for j in sorted(range(len(weights)), key=lambda j: (-remainders[j], j))[:deficit]:
        weights[j] += 1
    return weights


def alias_table(p) -> tuple[np.ndarray, np.ndarray]:
    """Walker/Vose alias table ``(prob, alias)`` of the probability vector ``p``.

    Parameters
    ----------
    p : array_like, shape (K,)
        Non-negative, finite, ``|Σp - 1| ≤ 1e-12`` (it is renormalised exactly before rounding).

    Returns
    -------
    prob : ndarray of float64, shape (K,)
        Keep-probability of each column, a multiple of 2⁻⁵³ in [0, 1].
    alias : ndarray of int64, shape (K,)
        The category drawn when column j is not kept (``j`` itself where ``prob[j] == 1``).

    Notes
    -----
    Column j is drawn with probability (prob[j] + Σ_{i: alias[i]=j} (1 - prob[i])) / K, which equals
    p_j / Σp to within 1/(K·2⁵³); a category with p_j = 0 has prob[j] = 0 and is nobody's alias.
    """
    q = _check_probabilities(p)
    weights = _integer_weights(q)
    k = len(weights)
    threshold = [_RESOLUTION] * k
    alias = list(range(k))
    small = [j for j in range(k) if weights[j] < _RESOLUTION]
    large = [j for j in range(k) if weights[j] >= _RESOLUTION]
    while small and large:
        s, g = small.pop(), large.pop()
        threshold[s], alias[s] = weights[s], g
        weights[g] -= _RESOLUTION - weights[s]
        (small if weights[g] < _RESOLUTION else large).append(g)
    # Σ W = K·2⁵³ exactly, so every leftover column holds exactly 2⁵³ (threshold 1, its own alias)
    if small or any(weights[j] != _RESOLUTION for j in large):
        msg = f"alias table of p={q!r} left unpaired columns {small}; this is a bug"
        raise InternalError(msg)
    prob = np.array(threshold, dtype=np.float64) * _TO_UNIT
    return prob, np.array(alias, dtype=np.int64)


@jit
def mulhi(w, k):
    """⌊w·k / 2⁶⁴⌋ for 64-bit ``w`` and ``k`` < 2³² (the high half of the 128-bit product)."""
    a = w >> _S32
    b = w & _LOW32
    return (a * k + ((b * k) >> _S32)) >> _S32


@jit
def categorical(prob, alias, base, counter):
    """(category, next counter): one draw from the table ``(prob, alias)`` using word ``counter``.

    ``base`` is cast to uint64 here: numba boxes a uint64 as a Python int, which comes back typed as
    int64 when below 2⁶³, and int64 + uint64 arithmetic in :func:`numerics.rng.word` would be float64.
    """
    k = np.uint64(prob.size)
    w = word(np.uint64(base), counter)
    column = np.intp(mulhi(w, k))
    fraction = float((w * k) >> _S11) * _TO_UNIT  # low half of w·k (wraps mod 2⁶⁴): top 53 bits
    if fraction < prob[column]:
        return column, counter + 1
    return np.intp(alias[column]), counter + 1


@jit
def multinomial_counts(prob, alias, n, base, counter0, out):
    """Write into ``out`` (length K) the counts of ``n`` draws using words ``counter0 .. counter0+n-1``.

    Returns ``counter0 + n``, or -1 (``out`` untouched) if ``out.size != prob.size``.
    """
    if out.size != prob.size:
        return -1
    out[:] = 0
    counter = counter0
    for _ in range(n):
        j, counter = categorical(prob, alias, base, counter)
        out[j] += 1
    return counter


@parallel_jit
def _count_rows(prob, alias, n, base, first_sample, size):
    out = np.zeros((size, prob.size), dtype=np.int64)
    for i in prange(size):
        multinomial_counts(prob, alias, n, base, (first_sample + i) * n, out[i])
    return out


def _check_count(name: str, value, low: int) -> int:
    integer = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
    if not integer or not low <= value <= _MAX_COUNTER:
        msg = f"{name}={value!r} must be an integer in [{low}, 2**63 - 1]"
        raise InvalidArgument(msg)
    return int(value)


def sample_counts(
    p, n_trials: int, n_samples: int, seed, stream: int = 0, first_sample: int = 0
) -> np.ndarray:
    """Multinomial(n_trials, p) count vectors of samples ``first_sample .. first_sample+n_samples-1``.

    Parameters
    ----------
    p : array_like, shape (K,)
        Category probabilities, as for :func:`alias_table`.
    n_trials : int
        Draws per sample (≥ 0); each row sums to it exactly.
    n_samples : int
        Rows returned (≥ 0).
    seed : int or numpy.random.SeedSequence
        Turned into a key by :func:`numerics.rng.key_from_seed`.
    stream : int
        Stream of the key (≥ 0); give independent experiments different streams.
    first_sample : int
        Global index of the first row (≥ 0).

    Returns
    -------
    ndarray of int64, shape (n_samples, K)
        Row r is global sample i = first_sample + r, drawn from words i·n_trials .. (i+1)·n_trials - 1
        of stream ``stream``: the same numbers for any thread count and any split into calls.
    """
    n = _check_count("n_trials", n_trials, 0)
    size = _check_count("n_samples", n_samples, 0)
    stream = _check_count("stream", stream, 0)
    first = _check_count("first_sample", first_sample, 0)
    if (first + size) * n > _MAX_COUNTER:
        msg = (
            f"first_sample={first}, n_samples={size}, n_trials={n} need counters up to "
            f"{(first + size) * n}, beyond 2**63 - 1; use another stream for later samples"
        )
        raise InvalidArgument(msg)
    prob, alias = alias_table(p)
    base = np.uint64(stream_base(key_from_seed(seed), stream))
    return _count_rows(prob, alias, n, base, first, size)
