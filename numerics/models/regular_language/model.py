"""The one-layer softmax-attention model of the regular-language paper, its logistic loss and gradient.

Model (Sec. 3, reparameterised; spec §2.4–2.5), for a sample with token indices i_1..i_L
(i_ℓ = idx[n, ℓ−1], :mod:`.data`) and query i_L::

    s_ℓ = W[i_ℓ, i_L],   φ = softmax(s/λ),   T_θ(X) = Σ_ℓ φ_ℓ u[i_ℓ],
    L(u, W) = Σ_n weight_n J(y_n T_n),   J(z) = log(1 + e^{−z}),

so the row of W is the key token and the column the query token. The gradient (rl.cf.gradient,
with ∂T/∂s_ℓ = φ_ℓ(u_ℓ − T)/λ) is::

    g_n = weight_n J'(y_n T_n) y_n,   J'(z) = −1/(1 + e^{z}),
    ∇_u L[i_ℓ] += g_n φ_ℓ,   ∇_W L[i_ℓ, i_L] += g_n φ_ℓ (u[i_ℓ] − T_n)/λ.

Stable primitives (spec §8): the softmax subtracts the largest logit; J(z) = log1p(e^{−z}) for
z >= 0 and −z + log1p(e^{z}) otherwise; −J'(z) = e^{−z}/(1 + e^{−z}) for z >= 0 and 1/(1 + e^{z})
otherwise. The kernels loop in a fixed order (no threads), so a result is bit-identical run to run.

The loss and gradient of :class:`RLModel` (and of :func:`.gd.compiled_gradient`) come from
:func:`tabled_loss_grad`, which takes no exponential per token. A score s = W[i, q]/λ depends
only on the key token i and the query token q. Call a pair (i, q) that occurs in the data (token
i in a sample whose query is q) a *slot*: 2 + Σ_{L=2}^{L_max} 2(2L − 1) = 72 slots for EP at
L_max = 6, against 642 tokens. Per step, with m_q the largest W[i, q] over the slots of column q::

    t_iq = exp((W[i, q] − m_q)/λ) ∈ [0, 1],   Z_n = Σ_ℓ t_{i_ℓ q},   T_n = (Σ_ℓ t_{i_ℓ q} u[i_ℓ]) / Z_n,

i.e. φ_ℓ = t_{i_ℓ q}/Z_n (the factor e^{m_q/λ} cancels). With a_n = g_n/Z_n, the gradient of a
sample, g_n φ_ℓ (u[i] − T_n)/λ = t_iq a_n (u[i] − T_n)/λ, sums per slot::

    ∇_u L[i] = Σ_q t_iq A_iq,   ∇_W L[i, q] = (t_iq/λ)(u[i] A_iq − C_iq),
    A_iq = Σ_{n ∋ (i, q)} a_n,   C_iq = Σ_{n ∋ (i, q)} a_n T_n.

Per step that is one exponential per slot and, per sample, one exponential (the logistic
weight) and one log1p (the loss), by :func:`exp_nonpositive` and :func:`log1p_unit`
(polynomials after an exact range reduction, within 1 and 2 ulp, written without calls or
branches so that the per-sample loop runs in SIMD). The sums Σ_ℓ and Σ_{n ∋ (i, q)} go through
*chunks*, runs of c consecutive positions of a sample (:class:`TablePlan`): a chunk's table entry
is the sum of its slots' entries, a sample is ⌈L/c⌉ chunk look-ups, and A, C are summed per chunk
over the samples holding it, then per slot over its chunks (238 look-ups each way instead of 642
for EP at L_max = 6, c = 3).

Range: every t <= 1 (no overflow). A sample whose own largest score lies far below m_q (which may
come from a token it does not hold) could underflow, so a sample with Z_n < :data:`TABLE_TINY` =
2^−200 takes the direct route instead (:func:`direct_sample`, which subtracts its own largest
logit): no sample loses precision to underflow, at any |W|/λ. On the table route Z_n >= 2^−200,
so the sample's largest t is >= 2^−200/L and the t flushed to 0 (below e^−708) weigh < 2^−800 of
it; |a_n| <= 2^200 weight_n, so A, C and u[i]·A stay finite while max |u| < 2^790 (about 1e237).
∇_W L of a slot that only length-1 samples use (their φ ≡ 1) is exactly 0, as
:func:`live_entries` says.

Rounding: t carries the relative error ε·|W[i, q] − m_q|/λ of its argument, as s − max s does in
the direct softmax; u[i]A − C is Σ a_n (u[i] − T_n) reassociated (absolute error of order
ε Σ |a_n| (|u[i]| + |T_n|)); the sums run in a fixed order, not the direct kernel's.
:func:`loss_grad_kernel` (a softmax per sample, exponentials per token) is kept as the reference;
the two agree to rounding.

Flat layout (:data:`LAYOUT`), used by :meth:`RLModel.gradient` and :func:`numerics.train.train`:
θ = [u (d entries), W row-major (d² entries)], i.e. u[i] = θ[i] and W[i, j] = θ[d + i·d + j].
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics._jit import jit
from numerics.enumeration import StratifiedMonteCarlo
from numerics.models.regular_language.data import PAD, RLData
from numerics.montecarlo import Enumeration
from numerics.stable import logistic_loss, logistic_weight  # noqa: F401  (part of this module's API)

LAYOUT = ("theta = [u (d), W row-major (d*d)]: u[i] = theta[i], W[i, j] = theta[d + i*d + j] "
          "(row = key, column = query)")
SIGN_ZERO = ("+1", "count_as_error")


# ----------------------------------------------------------------------------------------------
# Kernels. Shapes: u (d,), W (d, d), idx (N, L_max) int64 padded beyond length[n], length (N,),
# y and weight (N,), phi (N, L_max). Scratch is allocated per call (the kernels are re-entrant).
# Nothing raises: non-finite parameters give non-finite results that the wrappers detect.


@jit
def logistic_losses(z):
    """J(z_i) for each entry of a 1-D array."""
    out = np.empty(z.shape[0])
    for i in range(z.shape[0]):
        out[i] = logistic_loss(z[i])
    return out


@jit
def softmax_in_place(phi, L, top):
    """Turn the logits ``phi[:L]`` (largest ``top``) into softmax weights: e^{s−top}/Σ e^{s−top}."""
    total = 0.0
    for ell in range(L):
        e = math.exp(phi[ell] - top)
        phi[ell] = e
        total += e
    for ell in range(L):
        phi[ell] /= total


@jit
def attend(u, W, row, L, lam, phi):
    """Write φ_1..φ_L of one sample (token indices ``row[:L]``) into ``phi[:L]``; return Σ φ_ℓ u[row_ℓ]."""
    q = row[L - 1]
    top = -math.inf
    for ell in range(L):
        s = W[row[ell], q] / lam
        phi[ell] = s
        if s > top:
            top = s
    softmax_in_place(phi, L, top)
    T = 0.0
    for ell in range(L):
        T += phi[ell] * u[row[ell]]
    return T


@jit
def forward_kernel(u, W, idx, length, lam, phi, T):
    """Fill phi (N, L_max; zero beyond each length) and T (N,)."""
    for n in range(length.shape[0]):
        L = length[n]
        for ell in range(L, phi.shape[1]):
            phi[n, ell] = 0.0
        T[n] = attend(u, W, idx[n], L, lam, phi[n])


@jit
def loss_kernel(u, W, idx, length, y, weight, lam):
    """Return L = Σ_n weight_n J(y_n T_n) by the direct softmax (a reference: the model's is tabled)."""
    scratch = np.empty(idx.shape[1])
    loss = 0.0
    for n in range(length.shape[0]):
        T = attend(u, W, idx[n], length[n], lam, scratch)
        loss += weight[n] * logistic_loss(y[n] * T)
    return loss


@jit
def direct_sample(u, W, row, L, y, weight, lam, phi, gu, gW):
    """One sample by the direct softmax: add its ∇_u L, ∇_W L into ``gu``, ``gW``; return weight·J(yT)."""
    T = attend(u, W, row, L, lam, phi)
    z = y * T
    g = -weight * logistic_weight(z) * y
    q = row[L - 1]
    for ell in range(L):
        i = row[ell]
        gphi = g * phi[ell]
        gu[i] += gphi
        gW[i, q] += gphi * (u[i] - T) / lam
    return weight * logistic_loss(z)


@jit
def loss_grad_kernel(u, W, idx, length, y, weight, lam, gu, gW):
    """Return L and write ∇_u L into ``gu`` (d,) and ∇_W L into ``gW`` (d, d) (both overwritten).

    The direct kernel: a softmax with exponentials per sample and token (the reference of
    :func:`tabled_loss_grad`, which the model uses).
    """
    scratch = np.empty(idx.shape[1])
    gu[:] = 0.0
    gW[:, :] = 0.0
    loss = 0.0
    for n in range(length.shape[0]):
        loss += direct_sample(u, W, idx[n], length[n], y[n], weight[n], lam, scratch, gu, gW)
    return loss


@jit
def features_kernel(W, idx, length, lam, out):
    """Write the attention outputs v^{(n)} = Σ_ℓ x_ℓ φ_ℓ into ``out`` (N, d) (overwritten)."""
    scratch = np.empty(idx.shape[1])
    out[:, :] = 0.0
    dummy = np.zeros(out.shape[1])
    for n in range(length.shape[0]):
        L = length[n]
        attend(dummy, W, idx[n], L, lam, scratch)
        for ell in range(L):
            out[n, idx[n, ell]] += scratch[ell]


# ----------------------------------------------------------------------------------------------
# The tabled kernel (module docstring): the primitives, the plan of the data, the kernel.

#: a sample whose Z_n (its softmax denominator against the column shift) is below this takes the
#: direct route (module docstring, "Range")
TABLE_TINY = 2.0**-200
#: samples are padded to a multiple of this (slots to one of 8), so that the SIMD loops have no
#: scalar tail
_PAD_TO = 32

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 to 32 bits: k·_LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10  # ln 2 − _LN2_HI
_LN2 = 0.6931471805599453
_SQRT2 = 1.4142135623730951
_ROUND = 6755399441055744.0  # 1.5·2^52: (t + _ROUND) − _ROUND is t rounded to an integer, |t| < 2^51
_EXP_FLUSH = -708.0  # e^x is returned as 0 below this (e^−708 ≈ 3.3e−308, the normal range ends at 2.2e−308)


@intrinsic
def _fma(typingctx, a, b, c):
    """a·b + c with one rounding (LLVM's fma: the FMA instruction, or a correctly rounded call)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@intrinsic
def _float_from_bits(typingctx, bits):
    """Reinterpret the int64 ``bits`` as the IEEE bits of a float64."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@jit
def exp_nonpositive(x):
    """e^x for x <= 0, within 1 ulp; 0 for x < −708 (so never subnormal) and x = −inf; NaN stays NaN.

    x = k ln 2 + r with k = round(x/ln 2) and |r| <= ln2/2 (Cody–Waite: ln 2 in two parts, fused
    multiply-adds), e^r by its Taylor polynomial of degree 13 (relative remainder < 1e−17), times
    2^k built from its bits. No calls and no branches, so loops over it run in SIMD.
    """
    t = x * _LOG2E
    k = (t + _ROUND) - _ROUND
    r = _fma(-k, _LN2_LO, _fma(-k, _LN2_HI, x))
    p = 1.0 / 6227020800.0
    p = _fma(p, r, 1.0 / 479001600.0)
    p = _fma(p, r, 1.0 / 39916800.0)
    p = _fma(p, r, 1.0 / 3628800.0)
    p = _fma(p, r, 1.0 / 362880.0)
    p = _fma(p, r, 1.0 / 40320.0)
    p = _fma(p, r, 1.0 / 5040.0)
    p = _fma(p, r, 1.0 / 720.0)
    p = _fma(p, r, 1.0 / 120.0)
    p = _fma(p, r, 1.0 / 24.0)
    p = _fma(p, r, 1.0 / 6.0)
    p = _fma(p, r, 0.5)
    p = _fma(p, r, 1.0)
    p = _fma(p, r, 1.0)
    k = k if k > -1022.0 else -1022.0  # also for x = NaN or −inf: the bits below stay defined
    out = p * _float_from_bits((np.int64(k) + 1023) << 52)
    return 0.0 if x < _EXP_FLUSH else out


@jit
def log1p_unit(e, s, h):
    """log(1 + e) for 0 <= e <= 1, within 2 ulp, given s = fl(1 + e) and h = 1/s; NaN stays NaN.

    log(1 + e) = log s + log(1 + (1 + e − s)/s), the second term as (e − (s − 1))·h (s − 1 and
    e − (s − 1) are exact). log s = j ln 2 + 2 atanh(f), f = (v − 1)/(v + 1), v = s/2^j ∈ (1/√2, √2]
    (j = 0 or 1), |f| <= 0.172, by the atanh series to f^23 (relative remainder < 1e−19). No calls
    and no branches, for SIMD loops.
    """
    big = s > _SQRT2
    v = s * 0.5 if big else s
    f = (v - 1.0) / (v + 1.0)
    f2 = f * f
    p = 1.0 / 23.0
    p = _fma(p, f2, 1.0 / 21.0)
    p = _fma(p, f2, 1.0 / 19.0)
    p = _fma(p, f2, 1.0 / 17.0)
    p = _fma(p, f2, 1.0 / 15.0)
    p = _fma(p, f2, 1.0 / 13.0)
    p = _fma(p, f2, 1.0 / 11.0)
    p = _fma(p, f2, 1.0 / 9.0)
    p = _fma(p, f2, 1.0 / 7.0)
    p = _fma(p, f2, 1.0 / 5.0)
    p = _fma(p, f2, 1.0 / 3.0)
    two_f = 2.0 * f
    return ((_LN2 if big else 0.0) + _fma(two_f, p * f2, two_f)) + (e - (s - 1.0)) * h


class TablePlan(NamedTuple):
    """The data's slots, chunks and samples, for :func:`tabled_loss_grad` (built by :func:`table_plan`).

    Slots: the K pairs (i, q), sorted by column q then row i, padded to Kp (a multiple of 8) with
    the empty slot K (t = 0) and the unit slot K + 1 (t = 1, u = 0). A sample's positions are cut
    into chunks of c consecutive slots (the last one padded with the empty slot); the P distinct
    chunks of the data are the units of the sums, so a sample of length L is ⌈L/c⌉ chunks.

    ``slot_row`` (Kp,) uint32: i (0 beyond K); ``slot_at`` (Kp,) uint32: the index of W[i, q] in
    the flat θ of :data:`LAYOUT`, d + i·d + q (d beyond K). ``first``, ``last`` (K,) bool:
    the slot opens, closes its column. ``live`` (K,) bool: a sample of length >= 2 uses the slot.
    ``slot_chunks`` (K, M) uint32: the chunks holding each slot (once per holding position), padded
    with the empty chunk P to M, a multiple of 4. ``chunk_slots`` (Pp, c) uint32: the slots of each
    chunk (Pp a multiple of 32; chunk P is all-empty, chunk P + 1 the unit slot, the rest
    all-empty); chunks are numbered by decreasing number of holders. ``chunks`` (Np, ⌈L_max/c⌉)
    uint32: each sample's chunks, the empty chunk beyond its length; the Np − N padding samples
    (Np a multiple of 32) are one unit chunk (Z = 1, T = 0). ``chunk_ptr`` (P + 1,) int64 and
    ``chunk_samples`` uint32: the samples holding chunk p are
    chunk_samples[chunk_ptr[p]:chunk_ptr[p+1]] (CSR, in sample order). ``y``, ``weight`` (Np,)
    float64: the data's, padded with y = 1, weight = 0. ``n``: N; ``d``: the dimension of the
    layout.
    """

    slot_row: np.ndarray
    slot_at: np.ndarray
    first: np.ndarray
    last: np.ndarray
    live: np.ndarray
    slot_chunks: np.ndarray
    chunk_slots: np.ndarray
    chunks: np.ndarray
    chunk_ptr: np.ndarray
    chunk_samples: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    n: int
    d: int


def _padded(count: int) -> int:
    return -(-count // _PAD_TO) * _PAD_TO


def _chunked(slots: np.ndarray, empty: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Cut (N, width) slot rows into chunks of c: (the distinct chunks (P, c), each row's chunk indices).

    The distinct chunks are in lexicographic order (a chunk is keyed by one integer when c slot
    indices fit in 62 bits, which is the fast path of ``np.unique``).
    """
    n, width = slots.shape
    w = -(-width // c)
    padded = np.full((n, w * c), empty, dtype=np.int64)
    padded[:, :width] = slots
    pieces = padded.reshape(n * w, c)
    base = empty + 1
    if c * math.log2(base) < 62:
        key = np.zeros(n * w, dtype=np.int64)
        for j in range(c):
            key = key * base + pieces[:, j]
        keys, index = np.unique(key, return_inverse=True)
        distinct = np.empty((keys.size, c), dtype=np.int64)
        for j in range(c - 1, -1, -1):
            keys, distinct[:, j] = np.divmod(keys, base)
    else:
        distinct, index = np.unique(pieces, axis=0, return_inverse=True)
    return distinct, index.reshape(n, w)


def table_plan(idx, length, y, weight, dim: int, chunk: int | None = None) -> TablePlan:
    """Build the :class:`TablePlan` of samples ``idx`` (N, L_max; padded beyond ``length``), y, weight.

    ``dim``: d of the flat layout (every token index must be below it). ``chunk``: the chunk size
    c; None picks the c in 1..4 with the least work per step (chunk look-ups plus chunk-table
    entries; c = 3 for EP at L_max = 6: 238 look-ups instead of 642).
    """
    idx = np.asarray(idx, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    n, width = idx.shape
    if n == 0 or length.shape != (n,) or length.min() < 1 or length.max() > width:
        msg = f"length must hold N={n} >= 1 lengths in 1..{width} (the width of idx)"
        raise InvalidArgument(msg)
    if np.shape(y) != (n,) or np.shape(weight) != (n,):
        msg = f"y and weight have shapes {np.shape(y)} and {np.shape(weight)}; expected ({n},) each"
        raise InvalidArgument(msg)
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral)
                              or chunk < 1):
        msg = f"chunk={chunk!r} must be an integer >= 1 (slots per chunk) or None"
        raise InvalidArgument(msg)
    inside = np.arange(width)[None, :] < length[:, None]
    if idx[inside].min() < 0:
        msg = "idx holds a negative token index within a sample's length"
        raise InvalidArgument(msg)
    d = int(dim)
    if idx[inside].max() >= d:
        msg = f"idx holds token index {int(idx[inside].max())} >= dim={d}"
        raise InvalidArgument(msg)
    query = idx[np.arange(n), length - 1]
    # slots, by column then row
    slots, slot_of = np.unique((query[:, None] * d + idx)[inside], return_inverse=True)
    k = slots.size
    kp, np_ = -(-(k + 2) // 8) * 8, _padded(n)
    slot_row = np.zeros(kp, dtype=np.uint32)
    slot_at = np.full(kp, d, dtype=np.uint32)
    column = slots // d
    slot_row[:k], slot_at[:k] = slots % d, d + (slots % d) * d + column
    first = np.concatenate([[True], column[1:] != column[:-1]])
    last = np.concatenate([column[1:] != column[:-1], [True]])
    owner = np.repeat(np.arange(n), length)
    live = np.zeros(k, dtype=bool)
    live[slot_of[length[owner] >= 2]] = True
    by_position = np.full((n, width), k, dtype=np.int64)
    by_position[inside] = slot_of
    # chunks, by decreasing number of holders
    if chunk is None:
        work = {}
        for c in (1, 2, 3, 4):
            distinct, index = _chunked(by_position, k, c)
            work[c] = int(np.count_nonzero((distinct != k).any(axis=1)[index])) + distinct.size
        chunk = min(work, key=lambda c: (work[c], c))
    distinct, index = _chunked(by_position, k, int(chunk))
    real = (distinct != k).any(axis=1)
    holders = np.bincount(index.reshape(-1), minlength=len(distinct))
    order = np.flatnonzero(real)[np.argsort(-holders[real], kind="stable")]
    p = order.size
    renumber = np.full(len(distinct), p, dtype=np.int64)
    renumber[order] = np.arange(p)
    index = renumber[index]
    chunk_slots = np.full((_padded(p + 2), int(chunk)), k, dtype=np.uint32)
    chunk_slots[:p] = distinct[order]
    chunk_slots[p + 1, 0] = k + 1
    chunks = np.full((np_, index.shape[1]), p, dtype=np.uint32)
    chunks[:n] = index
    chunks[n:, 0] = p + 1
    used = index != p
    flat = index[used]
    chunk_ptr = np.zeros(p + 1, dtype=np.int64)
    chunk_ptr[1:] = np.cumsum(np.bincount(flat, minlength=p))
    chunk_samples = np.broadcast_to(np.arange(n)[:, None], index.shape)[used]
    chunk_samples = chunk_samples[np.argsort(flat, kind="stable")].astype(np.uint32)
    # each slot's chunks, padded with the empty chunk
    members = chunk_slots[:p].astype(np.int64)
    holding = np.broadcast_to(np.arange(p)[:, None], members.shape)[members < k]
    members = members[members < k]
    counts = np.bincount(members, minlength=k)
    slot_chunks = np.full((k, -(-int(counts.max()) // 4) * 4), p, dtype=np.uint32)
    by_slot = np.argsort(members, kind="stable")
    slot_chunks[members[by_slot], np.arange(members.size) - np.repeat(np.cumsum(counts) - counts, counts)] = \
        holding[by_slot]
    y_pad, weight_pad = np.ones(np_), np.zeros(np_)
    y_pad[:n], weight_pad[:n] = y, weight
    arrays = [slot_row, slot_at, first, last, live, slot_chunks, chunk_slots, chunks, chunk_ptr,
              chunk_samples, y_pad, weight_pad]
    for a in arrays:
        a.flags.writeable = False
    return TablePlan(*arrays, n, d)


@jit
def _sum(x):
    """Σ x in four interleaved partial sums, added pairwise at the end (a fixed order)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    n = x.shape[0]
    j = 0
    while j + 3 < n:
        s0 += x[j]
        s1 += x[j + 1]
        s2 += x[j + 2]
        s3 += x[j + 3]
        j += 4
    while j < n:
        s0 += x[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


@jit
def _direct_route(theta, grad, lam, plan, Z, part, a, aT, phi):
    """Run the samples with Z_n < TABLE_TINY through :func:`direct_sample` (a = aT = 0 for the sums)."""
    d = plan.d
    u = theta[:d]
    W = theta[d:].reshape((d, d))
    gu = grad[:d]
    gW = grad[d:].reshape((d, d))
    slot_row = plan.slot_row
    chunk_slots = plan.chunk_slots
    chunks = plan.chunks
    k_real = plan.live.shape[0]
    row = np.empty(chunks.shape[1] * chunk_slots.shape[1], dtype=np.int64)
    for n in range(plan.n):
        if Z[n] < TABLE_TINY:
            L = 0
            for j in range(chunks.shape[1]):
                for k in chunk_slots[chunks[n, j]]:
                    if k < k_real:
                        row[L] = slot_row[k]
                        L += 1
            part[n] = direct_sample(u, W, row, L, plan.y[n], plan.weight[n], lam, phi, gu, gW)
            a[n] = 0.0
            aT[n] = 0.0


@jit
def tabled_loss_grad(theta, grad, lam, plan):
    """Return L(θ) and write ∇L(θ) into ``grad`` (every entry), both in the flat layout of :data:`LAYOUT`.

    The tabled kernel of the module docstring on a :class:`TablePlan` of the data (``plan.d`` = d).
    """
    slot_row = plan.slot_row
    slot_at = plan.slot_at
    first = plan.first
    last = plan.last
    live = plan.live
    slot_chunks = plan.slot_chunks
    chunk_slots = plan.chunk_slots
    chunks = plan.chunks
    chunk_ptr = plan.chunk_ptr
    chunk_samples = plan.chunk_samples
    y = plan.y
    weight = plan.weight
    k_real = live.shape[0]
    p_real = chunk_ptr.shape[0] - 1
    kp = slot_row.shape[0]
    c = chunk_slots.shape[1]
    np_, w = chunks.shape
    work = np.empty(6 * kp + 2 * (p_real + 2) + 5 * np_ + w * c)
    score = work[:kp]
    shift = work[kp:2 * kp]
    t = work[2 * kp:3 * kp]
    tu = work[3 * kp:4 * kp]
    us = work[4 * kp:5 * kp]
    tl = work[5 * kp:6 * kp]
    o = 6 * kp
    ct = work[o:o + p_real + 2]
    ctu = work[o + p_real + 2:o + 2 * (p_real + 2)]
    o += 2 * (p_real + 2)
    Z = work[o:o + np_]
    num = work[o + np_:o + 2 * np_]
    a = work[o + 2 * np_:o + 3 * np_]
    aT = work[o + 3 * np_:o + 4 * np_]
    part = work[o + 4 * np_:o + 5 * np_]
    phi = work[o + 5 * np_:]

    # the slot tables t = exp((W[i, q] − m_q)/λ) and t·u[i] (the empty slot 0, the unit slot 1);
    # m_q: a running maximum restarted at each column's first slot, then carried back from its last
    m = -math.inf
    for k in range(k_real):
        x = theta[slot_at[k]]
        score[k] = x
        us[k] = theta[slot_row[k]]
        m = x if (first[k] | (x > m)) else m
        shift[k] = m
    m = 0.0
    for j in range(k_real):
        k = k_real - 1 - j
        m = shift[k] if last[k] else m
        shift[k] = m
    for k in range(k_real, kp):
        score[k] = -math.inf
        shift[k] = 0.0
        us[k] = 0.0
    score[k_real + 1] = 0.0
    for k in range(kp):
        e = exp_nonpositive((score[k] - shift[k]) / lam)
        t[k] = e
        tu[k] = e * us[k]
        tl[k] = e / lam
    # the chunk tables: sums over a chunk's slots
    for p in range(p_real + 2):
        z = 0.0
        v = 0.0
        for j in range(c):
            k = chunk_slots[p, j]
            z += t[k]
            v += tu[k]
        ct[p] = z
        ctu[p] = v

    # per sample: Z_n = Σ t, Σ t·u over its chunks (two samples at a time: independent sums)
    for pair in range(np_ // 2):
        n = 2 * pair
        z0 = 0.0
        v0 = 0.0
        z1 = 0.0
        v1 = 0.0
        for j in range(w):
            p0 = chunks[n, j]
            p1 = chunks[n + 1, j]
            z0 += ct[p0]
            v0 += ctu[p0]
            z1 += ct[p1]
            v1 += ctu[p1]
        Z[n] = z0
        num[n] = v0
        Z[n + 1] = z1
        num[n + 1] = v1

    # per sample (SIMD): T, weight·J(yT), a = g/Z and a·T
    for n in range(np_):
        r = 1.0 / Z[n]
        T = num[n] * r
        z = y[n] * T
        e = exp_nonpositive(-abs(z))
        s = 1.0 + e
        h = 1.0 / s
        positive = z >= 0.0
        part[n] = weight[n] * (log1p_unit(e, s, h) + (0.0 if positive else -z))
        an = -(weight[n] * y[n]) * (e * h if positive else h) * r
        a[n] = an
        aT[n] = an * T

    # the loss; samples whose Z underflowed take the direct route (and leave the sums)
    grad[:] = 0.0
    low = 0
    for n in range(plan.n):
        low += Z[n] < TABLE_TINY
    if low:
        _direct_route(theta, grad, lam, plan, Z, part, a, aT, phi)
    loss = _sum(part[:plan.n])

    # chunk sums of a and a·T (into ct, ctu; the empty chunk 0), four partial sums each
    for p in range(p_real):
        A0 = 0.0
        A1 = 0.0
        A2 = 0.0
        A3 = 0.0
        C0 = 0.0
        C1 = 0.0
        C2 = 0.0
        C3 = 0.0
        j = chunk_ptr[p]
        end = chunk_ptr[p + 1]
        while j + 3 < end:
            n0 = chunk_samples[j]
            n1 = chunk_samples[j + 1]
            n2 = chunk_samples[j + 2]
            n3 = chunk_samples[j + 3]
            A0 += a[n0]
            C0 += aT[n0]
            A1 += a[n1]
            C1 += aT[n1]
            A2 += a[n2]
            C2 += aT[n2]
            A3 += a[n3]
            C3 += aT[n3]
            j += 4
        while j < end:
            n0 = chunk_samples[j]
            A0 += a[n0]
            C0 += aT[n0]
            j += 1
        ct[p] = (A0 + A1) + (A2 + A3)
        ctu[p] = (C0 + C1) + (C2 + C3)
    ct[p_real] = 0.0
    ctu[p_real] = 0.0
    # per slot A = Σ a, C = Σ a·T over its chunks (padded to a multiple of 4 with the empty chunk);
    # ∇_u L[i] += t·A, ∇_W L[i, q] += (t/λ)·(u[i]A − C)
    fours = slot_chunks.shape[1] // 4
    for k in range(k_real):
        A = 0.0
        C = 0.0
        for block in range(fours):
            j = 4 * block
            p0 = slot_chunks[k, j]
            p1 = slot_chunks[k, j + 1]
            p2 = slot_chunks[k, j + 2]
            p3 = slot_chunks[k, j + 3]
            A += (ct[p0] + ct[p1]) + (ct[p2] + ct[p3])
            C += (ctu[p0] + ctu[p1]) + (ctu[p2] + ctu[p3])
        grad[slot_row[k]] += t[k] * A
        if live[k]:
            grad[slot_at[k]] += tl[k] * (us[k] * A - C)
    return loss


# ----------------------------------------------------------------------------------------------
# The model


def live_entries(data: RLData) -> np.ndarray:
    """Boolean (d, d): the entries of W that can receive gradient (spec §2.4), computed from the data.

    W[i, j] is live iff some sample of length L >= 2 has query index j and a token (any position
    1..L, the query included) of index i: the outer product x_ℓ x_L^⊤ of rl.cf.gradient. A
    length-1 sample's softmax is constant, so its column gets nothing. For EP with lengths
    1..L_max this gives Σ_{L=2}^{L_max} 2(2L − 1) entries (70 for L_max = 6).
    """
    live = np.zeros((data.dim, data.dim), dtype=bool)
    for n in np.flatnonzero(data.length >= 2):
        live[data.idx[n, : data.length[n]], data.query[n]] = True
    return live


def live_tokens(data: RLData) -> np.ndarray:
    """Boolean (d,): the entries of u that some sample reads (every position-character pair present)."""
    live = np.zeros(data.dim, dtype=bool)
    live[data.idx[data.idx != PAD]] = True
    return live


def positive_real(name: str, value, what: str) -> float:
    """``value`` as a float if it is a finite real number > 0; otherwise refuse it naming ``name`` and ``what``."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not (real and math.isfinite(value) and value > 0):
        msg = f"{name}={value!r} must be a finite real number > 0 ({what})"
        raise InvalidArgument(msg)
    return float(value)


def _positive_lam(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real):
        msg = f"lam={lam!r} must be a real number > 0 (the attention temperature λ)"
        raise InvalidArgument(msg)
    value = float(lam)
    if not (math.isfinite(value) and value > 0):
        msg = f"lam={lam!r} must be finite and > 0 (the attention temperature λ; the softmax is of s/λ)"
        raise InvalidArgument(msg)
    return value


@dataclass(frozen=True)
class Accuracy:
    """Sign accuracy: prediction sign(T) against y, with the ``sign_zero`` reading of sign(0).

    ``fraction``: share of samples classified correctly; ``weighted``: the same with the loss
    weights (a mean over lengths of per-length accuracy, per loss term); ``by_length``: per length
    (strata of equal length merged); ``by_class``: per class (term, L, y); ``n_zero``: samples with
    T = 0 exactly (correct under ``+1`` iff y = +1, wrong under ``count_as_error``).
    """

    fraction: float
    weighted: float
    by_length: dict[int, float]
    by_class: dict[tuple[str, int, int], float]
    sign_zero: str
    n_zero: int


class RLModel:
    """The model T_θ on one enumerated data set at temperature ``lam`` (λ > 0, never trained).

    Parameters
    ----------
    data : RLData
        The data set (:mod:`.data`); fixes d.
    lam : float
        λ > 0.

    ``theta`` everywhere is the flat float64 vector of :data:`LAYOUT` (size d + d²).
    """

    def __init__(self, data: RLData, lam: float) -> None:
        if not isinstance(data, RLData):
            msg = f"data={data!r} must be an RLData (build it with make_data / ep_data / cot_data)"
            raise InvalidArgument(msg)
        self.data = data
        self.lam_value = lam
        self.lam = _positive_lam(lam)
        self.d = data.dim
        self.size = self.d + self.d * self.d

    # -- layout --------------------------------------------------------------------------------

    @property
    def u_slice(self) -> slice:
        """The coordinates of u in θ (for a :class:`numerics.train.ParamGroup`)."""
        return slice(0, self.d)

    @property
    def W_slice(self) -> slice:
        """The coordinates of W in θ."""
        return slice(self.d, self.size)

    def zeros(self) -> np.ndarray:
        """θ_0 = 0."""
        return np.zeros(self.size)

    def split(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """(u, W) as views of θ (W of shape (d, d), row-major)."""
        theta = self._theta(theta)
        return theta[: self.d], theta[self.d:].reshape(self.d, self.d)

    def join(self, u, W) -> np.ndarray:
        """Return the flat θ of (u, W)."""
        u = np.asarray(u, dtype=np.float64).reshape(-1)
        W = np.asarray(W, dtype=np.float64)
        if u.shape != (self.d,) or W.shape != (self.d, self.d):
            msg = f"u has shape {u.shape} and W {W.shape}; expected ({self.d},) and ({self.d}, {self.d})"
            raise InvalidArgument(msg)
        return np.concatenate([u, W.reshape(-1)])

    def _theta(self, theta) -> np.ndarray:
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        if theta.shape != (self.size,):
            msg = (f"theta has shape {theta.shape}; expected ({self.size},) = d + d*d with d={self.d} "
                   f"({LAYOUT})")
            raise InvalidArgument(msg)
        return theta

    @cached_property
    def plan(self) -> TablePlan:
        """The data's :class:`TablePlan` for :func:`tabled_loss_grad` (built once, on first use)."""
        d = self.data
        return table_plan(d.idx, d.length, d.y, d.weight, self.d)

    @property
    def live_W(self) -> np.ndarray:
        """Boolean (d, d) of the live entries of W (:func:`live_entries`)."""
        return live_entries(self.data)

    @property
    def live_mask(self) -> np.ndarray:
        """Boolean (d + d²,): the live coordinates of θ (u read by some sample, W live)."""
        return np.concatenate([live_tokens(self.data), live_entries(self.data).reshape(-1)])

    # -- evaluation ----------------------------------------------------------------------------

    def forward(self, theta) -> tuple[np.ndarray, np.ndarray]:
        """(φ of shape (N, L_max), zero beyond each length; T of shape (N,))."""
        u, W = self.split(theta)
        phi = np.empty((self.data.n, self.data.L_max))
        T = np.empty(self.data.n)
        forward_kernel(u, W, self.data.idx, self.data.length, self.lam, phi, T)
        return phi, T

    def outputs(self, theta) -> np.ndarray:
        """T_θ(X^{(n)}) for every sample."""
        return self.forward(theta)[1]

    def loss(self, theta) -> float:
        """L(u, W) = Σ_n weight_n J(y_n T_n) (the value :meth:`gradient` returns, bit for bit)."""
        loss = tabled_loss_grad(self._theta(theta), np.empty(self.size), self.lam, self.plan)
        self._finite(loss, theta)
        return float(loss)

    def gradient(self, theta, batch=None) -> tuple[float, np.ndarray]:
        """Return (L, ∇L) at θ, ∇L in the flat layout (:data:`LAYOUT`); for :func:`numerics.train.train`.

        ``batch`` exists for the driver's ``gradient(theta, batch)`` call and must be None (the
        loss is the full enumerated sum).
        """
        if batch is not None:
            msg = (f"batch={type(batch).__name__} must be None: the loss is the full enumerated sum; "
                   "call train(..., data=None)")
            raise InvalidArgument(msg)
        grad = np.empty(self.size)
        loss = tabled_loss_grad(self._theta(theta), grad, self.lam, self.plan)
        self._finite(loss, theta)
        return float(loss), grad

    def features(self, theta) -> np.ndarray:
        """Attention outputs v^{(n)} = Σ_ℓ x_ℓ φ_ℓ, shape (N, d) (u is not used)."""
        _, W = self.split(theta)
        out = np.empty((self.data.n, self.d))
        features_kernel(W, self.data.idx, self.data.length, self.lam, out)
        return out

    def accuracy(self, theta, sign_zero: str = "+1") -> Accuracy:
        """Sign accuracy on the training set (overall, weighted, per length, per class)."""
        if sign_zero not in SIGN_ZERO:
            valid = ", ".join(map(repr, SIGN_ZERO))
            msg = f"sign_zero={sign_zero!r} is not a known reading; valid values: {valid}"
            raise InvalidArgument(msg)
        T = self.outputs(theta)
        if not np.all(np.isfinite(T)):
            self._finite(math.nan, theta)
        zero = T == 0.0
        prediction = np.where(T > 0, 1.0, -1.0)
        if sign_zero == "+1":
            prediction[zero] = 1.0
        correct = (prediction == self.data.y) & ~(zero & (sign_zero == "count_as_error"))
        d = self.data
        by_length = {int(L): float(correct[d.length == L].mean()) for L in sorted(set(d.lengths))}
        by_class = {key: float(correct[rows].mean()) for key, rows in d.classes().items()}
        weighted = float(np.sum(d.weight * correct) / np.sum(d.weight))
        return Accuracy(float(correct.mean()), weighted, by_length, by_class, sign_zero, int(zero.sum()))

    def _finite(self, loss: float, theta: np.ndarray) -> None:
        if not math.isfinite(loss):
            bad = np.flatnonzero(~np.isfinite(np.asarray(theta, dtype=np.float64)))
            values = np.asarray(theta)
            where = f"theta[{int(bad[0])}]={float(values[bad[0]])!r}" if bad.size else "a finite theta"
            msg = (f"the loss is non-finite ({loss!r}) at lam={self.lam!r} with {where}; the kernels are "
                   "overflow-safe for finite parameters, so the parameters themselves have diverged")
            raise NumericalTrouble(msg)

    # -- expectations --------------------------------------------------------------------------

    def sample_losses(self, chars, length, stratum, theta) -> np.ndarray:
        """Return J(y T) per string (the integrand of :meth:`enumeration` and :meth:`monte_carlo`).

        ``chars`` (n, L_max) int64 padded with −1, ``length`` and ``stratum`` (n,): the layout of
        :mod:`numerics.enumeration`. Labels come from the data set's rule of each stratum.
        """
        u, W = self.split(theta)
        chars = np.asarray(chars, dtype=np.int64)
        positions = np.arange(chars.shape[1], dtype=np.int64)
        idx = np.ascontiguousarray(np.where(chars >= 0, 2 * positions[None, :] + chars, PAD))
        if idx.max(initial=0) >= self.d:
            msg = f"the strings need embedding index {int(idx.max()) + 1} > d={self.d}"
            raise InvalidArgument(msg)
        stratum = np.asarray(stratum, dtype=np.int64)
        if stratum.size and not 0 <= stratum.min() <= stratum.max() < len(self.data.lengths):
            msg = f"stratum holds indices outside 0..{len(self.data.lengths) - 1} (the data set's strata)"
            raise InvalidArgument(msg)
        y = np.empty(chars.shape[0])
        for h in np.unique(stratum):
            rows = np.flatnonzero(stratum == h)
            L = self.data.lengths[h]
            y[rows] = self.data.rules[h](chars[rows, :L])
        T = np.empty(chars.shape[0])
        phi = np.empty((chars.shape[0], chars.shape[1]))
        forward_kernel(u, W, idx, np.ascontiguousarray(length, dtype=np.int64), self.lam, phi, T)
        return logistic_losses(y * T)

    def enumeration(self) -> Enumeration:
        """Return the loss as an exact :class:`~numerics.montecarlo.Enumeration` (``estimate(theta)``)."""
        return self.data.strings.enumeration(self.sample_losses)

    def monte_carlo(self, *, n: int, seed: int, **kwargs) -> StratifiedMonteCarlo:
        """Return the loss by stratified Monte-Carlo, ``n`` uniform strings per stratum (a cross-check)."""
        return self.data.strings.monte_carlo(self.sample_losses, n=n, seed=seed, **kwargs)

