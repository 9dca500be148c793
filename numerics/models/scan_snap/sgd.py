r"""Levels (i) and (ii) of "Scan and Snap" (spec §3.1, §3.2): SGD on (Y, Z) with counts sampling or T = ∞.

API::

    from numerics.models.scan_snap.data import layout
    from numerics.models.scan_snap.sgd import BatchSampler, LiveRows, batch_gradient, train_ss

    run = train_ss(layout("synsmall.code"), T=128, batch=128, steps=100, etaY=10.0, etaZ=1.0,
                   optimizer="momentum", momentum=0.9, init="zero", seed=0,
                   class_schedule="iid_uniform", key_query=False, log=LogSchedule(every=2))
    run["Y"], run["Z"]                  # (n_log, M, M) at the logged steps (default: first and last)
    run.meta["Y"], run.meta["Z"]        # the final matrices; run.meta["theta"]: the driver's (live) θ
    run.meta["batch_objective"]         # (steps,) batch-mean J of every step (before its update)
    sampler = BatchSampler.build(lay, T=128, batch=128, seed=0, class_schedule="iid_uniform")
    classes, counts = sampler.draw(step)   # the batch of ``step`` (counts None at T = ∞)
    J, gY, gZ = batch_gradient(sampler, Y, Z, step=step, key_query=False)   # one call of the kernel

Algorithm (spec §2.6, §3.1, §10). Per sample: a class n (``class_schedule``), m = ψ(n), counts
N ~ Multinomial(T − 1, ℙ(·|n)) (level (i)) or N = ℙ(·|n), i.e. v = c_n (level (ii), ``T=math.inf``);
v = N∘e^{z_m}/Σ, f = v/‖v‖, o = Yᵀf, α = softmax(o), d = e_n − α, g = Yd, J₁ = log α_n,
∂J₁/∂Y = f dᵀ, ∂J₁/∂z_m = ‖v‖⁻¹ v∘(g − f fᵀg); the gradient is the batch mean (the released code's
mean cross-entropy). The loop is the one driver :func:`numerics.train.train` (compiled) with two
groups, ``Z`` at η_Z and ``Y`` at η_Y, both ascent (``sign=-1``: PyTorch's ``maximize``); one
gradient of θ per step, so the Z step uses the pre-step Y. Time is the step count (``time_map`` steps).

Live rows (spec §3.2). ∂J₁/∂Y is supported on the rows of the ids in some class's support and
∂J₁/∂Z on the query vectors z_m of the last tokens m ∈ ψ([K]) (row m of Z, or column m under
``key_query``). Every other entry keeps its initial value under SGD, momentum and Adam alike (a zero
gradient leaves all three unchanged) and never enters J, so the driver's θ holds the live entries
only: θ = (vec Y[rows], vec Q) with Q[j] = z_{queries[j]} (:class:`LiveRows`). This is exact, halves
the optimiser's work at Syn-Medium and is what makes M = 10⁴ (``ss.cfg.thm_hyp``) fit in memory.

Random numbers (:mod:`numerics.rng`, :mod:`numerics.categorical`): key = ``key_from_seed(seed)``;
global sample i = step·batch + b. Its class is word i of stream 0 through an alias table of the uniform
law (``iid_uniform``), i mod K (``round_robin``) or 0 (``single_class``, as the decoder level); its
counts use words i(T−1) … (i+1)(T−1)−1 of stream 1 through the alias table of ℙ(·|n); the
``torch_uniform`` initialisation U(−1/√M, 1/√M) of entry j of (vec Y, vec Z) is word j of stream 2.
Every draw is a pure function of (seed, step, b): the kernel draws its own batch (its ``step``
argument is a counter advanced by every call) and :meth:`BatchSampler.draw` gives the same batch to
other code (the NumPy peer of ``benchmarks/scan_snap_peer.py``).

Order of operations (stated, because the NumPy peer reproduces it bit for bit and because it makes
the result independent of the thread count): phase 1 computes each sample's f, d and ∂J₁/∂z_m (every
sum sequential: over the support in increasing id order, over k in increasing order; the softmax as
e_k = exp(o_k − max o), α = e/Σe, with :func:`exp_nonpositive`); phase 2 adds the samples' terms
(w f_l) d and w·∂J₁/∂z_m, w = 1/batch, to each live row in sample order. Loops are blocked over rows
or samples only where that keeps every sum's order (independent accumulators, fewer passes), never
by re-associating a sum. A sum may run over a superset of its terms (o over the class support, a row
of ∂J/∂Y over the samples of every class holding it) with zero weights: a zero term adds ±0, which
changes no partial sum from +0 (such a sum is never −0), so the bits are those of the sparse sum.

Parallel work (:func:`batch_gradient_kernel`): phase 1 by chunks of one class's samples, which share
the class's rows of Y (two samples per pass over a row, all the chunk's g = Yd interleaved), phase 2
by pairs of live rows with the same samples (two rows per pass over a sample's d); each loop is cut
into one range per thread of equal estimated work (:func:`_split`).

Cost at Fig. 6's largest cell (K = 20, M = 240, batch 128, T = 128): ≈ 3 µs per sample on one thread
(0.4 µs of it the 127 categorical draws, 0.3 µs the softmax's 240 exponentials), ≈ 0.23 ms per step
for the kernel on 2 threads, then the driver's momentum update of the 52 800 live coordinates
(≈ 20 µs; ``tdcheck bench ss-sgd``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import prange

from derivations.errors import InvalidArgument
from numerics._jit import jit, parallel_jit
from numerics.categorical import alias_table, categorical, multinomial_counts
from numerics.models.scan_snap import data as _data
from numerics.optim import SGD, Adam, Momentum
from numerics.rng import key_from_seed, stream_base, uniform
from numerics.train import CompiledGradient, LogSchedule, ParamGroup, train
from numerics.trajectory import Trajectory

#: options (spec §2.9), canonical first
SCHEDULES = ("iid_uniform", "round_robin", "single_class")
OPTIMIZERS = ("sgd", "momentum", "adam")
INITS = ("zero", "torch_uniform")
STATES = ("full", "live")
#: streams of the run's key
STREAM_CLASSES, STREAM_COUNTS, STREAM_INIT = 0, 1, 2
_MAX_COUNTER = 2**63 - 1


def _integer(name: str, value, low: int, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {low}{why}")
    return int(value)


def _choice(name: str, value, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InvalidArgument(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def _rate(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (math.isfinite(value) and value >= 0):
        raise InvalidArgument(
            f"{name}={value!r} must be a finite rate >= 0 (0 freezes; the ascent direction is built in)"
        )
    return float(value)


def _T_minus_1(T) -> int:
    """T − 1 contextual tokens, or −1 for T = ∞ (level (ii))."""
    if isinstance(T, numbers.Real) and not isinstance(T, bool | numbers.Integral) and T == math.inf:
        return -1
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 2:
        raise InvalidArgument(
            f"T={T!r} must be an integer >= 2 (T - 1 >= 1 contextual tokens) or math.inf (level (ii), v = c_n)"
        )
    return int(T) - 1


def check_layout(lay) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """(name, P, ψ, next tokens) of a :class:`~numerics.models.scan_snap.data.Layout`, a layout name, or any
    object with ``P`` (K × M), ``psi`` and ``next_token``, validated."""
    if isinstance(lay, str):
        lay = _data.layout(lay)
    try:
        P, psi, nxt = lay.P, lay.psi, lay.next_token
    except AttributeError:
        raise InvalidArgument(
            f"layout={lay!r} must be a Layout (numerics.models.scan_snap.data.layout(name)) or a layout name"
        ) from None
    if not isinstance(lay, _data.Layout):
        lay = _data.Layout(getattr(lay, "name", "layout"), P, tuple(np.asarray(psi).tolist()),
                           tuple(np.asarray(nxt).tolist()))  # validated there
    return lay.name, lay.P, np.asarray(lay.psi, dtype=np.int64), np.asarray(lay.next_token, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# Draws


@jit
def sample_class(i, schedule, K, class_prob, class_alias, class_base):
    """The class of global sample ``i``: 0 iid_uniform (word i of the class stream), 1 round_robin, 2 single."""
    if schedule == 0:
        n, _ = categorical(class_prob, class_alias, class_base, i)
        return n
    if schedule == 1:
        return i % K
    return 0


@jit
def draw_batch(step, batch, schedule, class_prob, class_alias, class_base, T1, count_prob, count_alias,
               count_base, classes, counts):
    """Fill ``classes`` (batch) and, if T1 >= 0, ``counts`` (batch × M) with the batch of ``step``."""
    K = count_prob.shape[0]
    for b in range(batch):
        i = step * batch + b
        n = sample_class(i, schedule, K, class_prob, class_alias, class_base)
        classes[b] = n
        if T1 >= 0:
            multinomial_counts(count_prob[n], count_alias[n], T1, count_base, i * T1, counts[b])


@functools.lru_cache(maxsize=64)
def _alias_tables(rows: bytes, K: int, M: int) -> tuple[np.ndarray, np.ndarray]:
    """Alias tables of the K rows of a K × M float64 matrix (given as bytes), cached: exact integer arithmetic
    in Python takes ≈ 0.5 ms per row, and a sweep (``ss.fig6``: 640 runs) builds the same tables every run."""
    tables = [alias_table(row) for row in np.frombuffer(rows, dtype=np.float64).reshape(K, M)]
    prob, alias = np.array([t[0] for t in tables]), np.array([t[1] for t in tables])
    prob.flags.writeable = alias.flags.writeable = False
    return prob, alias


@dataclass(frozen=True, eq=False)
class BatchSampler:
    """What determines the batches of a run: the layout's arrays, T, the batch size, the schedule and the key."""

    name: str
    P: np.ndarray  # K × M
    psi: np.ndarray  # int64 (K,)
    next_token: np.ndarray  # int64 (K,)
    T1: int  # T − 1, or −1 for T = ∞
    batch: int
    schedule: str
    key: np.uint64
    class_prob: np.ndarray
    class_alias: np.ndarray
    count_prob: np.ndarray  # K × M alias tables of the rows of P
    count_alias: np.ndarray

    @classmethod
    def build(cls, layout, *, T, batch: int, seed, class_schedule: str = "iid_uniform") -> BatchSampler:
        """Validate and build (alias tables of the uniform class law and of every row of P)."""
        name, P, psi, nxt = check_layout(layout)
        T1 = _T_minus_1(T)
        batch = _integer("batch", batch, 1, " (samples per step)")
        _choice("class_schedule", class_schedule, SCHEDULES)
        key = key_from_seed(seed)
        K = P.shape[0]
        class_prob, class_alias = _alias_tables(np.full((1, K), 1.0 / K).tobytes(), 1, K)
        count_prob, count_alias = _alias_tables(P.tobytes(), K, P.shape[1])
        return cls(name, P, psi, nxt, T1, batch, class_schedule, key, class_prob[0], class_alias[0], count_prob,
                   count_alias)

    @property
    def K(self) -> int:
        """Number of classes."""
        return self.P.shape[0]

    @property
    def M(self) -> int:
        """Vocabulary size."""
        return self.P.shape[1]

    @property
    def T(self) -> float:
        """Sequence length (``math.inf`` at level (ii))."""
        return math.inf if self.T1 < 0 else self.T1 + 1

    def bases(self) -> tuple[np.uint64, np.uint64]:
        """Starts of the class and counts streams."""
        return (np.uint64(stream_base(self.key, STREAM_CLASSES)), np.uint64(stream_base(self.key, STREAM_COUNTS)))

    def check_steps(self, steps: int) -> None:
        """Refuse a run whose counters would pass 2⁶³ − 1."""
        if steps * self.batch * max(self.T1, 1) > _MAX_COUNTER:
            raise InvalidArgument(
                f"steps={steps} with batch={self.batch}, T={self.T} needs counters beyond 2**63 - 1; split the run"
            )

    def draw(self, step: int) -> tuple[np.ndarray, np.ndarray | None]:
        """(classes (batch,), counts (batch, M) int64 — None at T = ∞) of step ``step``: the kernel's batch."""
        step = _integer("step", step, 0)
        self.check_steps(step + 1)
        classes = np.empty(self.batch, dtype=np.int64)
        counts = np.zeros((self.batch if self.T1 >= 0 else 0, self.M), dtype=np.int64)
        class_base, count_base = self.bases()
        draw_batch(step, self.batch, SCHEDULES.index(self.schedule), self.class_prob, self.class_alias, class_base,
                   self.T1, self.count_prob, self.count_alias, count_base, classes, counts)
        return classes, (counts if self.T1 >= 0 else None)

    def info(self) -> dict:
        """Plain-data record of the draws."""
        return {"layout": self.name, "K": self.K, "M": self.M, "T": self.T, "batch": self.batch,
                "class_schedule": self.schedule, "key": int(self.key),
                "streams": {"classes": STREAM_CLASSES, "counts": STREAM_COUNTS, "init": STREAM_INIT},
                "counters": "sample i = step*batch + b: class word i; counts words i*(T-1) .. (i+1)*(T-1)-1"}


# ----------------------------------------------------------------------------------------------
# Live entries of θ


@dataclass(frozen=True, eq=False)
class LiveRows:
    """The entries of (Y, Z) that SGD can move: Y rows ``rows`` (ids in some support), query vectors of ``queries``.

    θ = (vec Y[rows], vec Q), Q[j] = Z[queries[j], :] (``query_key``) or Z[:, queries[j]] (``key_query``).
    ``row_of[l]``: position of id l in ``rows`` (−1: dead); ``class_query[n]``: position of ψ(n) in ``queries``.
    """

    M: int
    rows: np.ndarray
    row_of: np.ndarray
    queries: np.ndarray
    class_query: np.ndarray
    key_query: bool

    @classmethod
    def of(cls, sampler: BatchSampler, key_query: bool = False) -> LiveRows:
        """The live entries of the sampler's layout under the ``z_index`` reading ``key_query``."""
        if not isinstance(key_query, bool | np.bool_):
            raise InvalidArgument(f"key_query={key_query!r} must be a bool (False: z_index=query_key, canonical)")
        M = sampler.M
        rows = np.flatnonzero(np.any(sampler.P > 0, axis=0)).astype(np.int64)
        row_of = np.full(M, -1, dtype=np.int64)
        row_of[rows] = np.arange(rows.size)
        queries = np.unique(sampler.psi).astype(np.int64)
        return cls(M, rows, row_of, queries, np.searchsorted(queries, sampler.psi).astype(np.int64), bool(key_query))

    @property
    def size(self) -> int:
        """Length of θ."""
        return (self.rows.size + self.queries.size) * self.M

    @property
    def split(self) -> int:
        """θ[:split] is vec Y[rows]."""
        return self.rows.size * self.M

    def counters(self) -> np.ndarray:
        """Index in (vec Y, vec Z) of every entry of θ (the init stream's counters)."""
        M = self.M
        k = np.arange(M)
        y = (self.rows[:, None] * M + k).ravel()
        if self.key_query:
            z = (k[None, :] * M + self.queries[:, None]).ravel()
        else:
            z = (self.queries[:, None] * M + k).ravel()
        return np.concatenate([y, M * M + z])

    def compact(self, Y, Z) -> np.ndarray:
        """θ from full (Y, Z)."""
        Q = np.asarray(Z)[:, self.queries].T if self.key_query else np.asarray(Z)[self.queries]
        return np.concatenate([np.asarray(Y, dtype=np.float64)[self.rows].ravel(), np.ravel(Q)]).astype(np.float64)

    def expand(self, theta, Y0, Z0) -> tuple[np.ndarray, np.ndarray]:
        """Full (Y, Z): the live entries from θ, every other entry from (Y0, Z0); θ may be a stack of θs (…, size),
        the result then (…, M, M) each."""
        theta = np.asarray(theta)
        lead, M = theta.shape[:-1], self.M
        Y, Z = np.empty((*lead, M, M)), np.empty((*lead, M, M))
        Y[...], Z[...] = Y0, Z0
        Y[..., self.rows, :] = theta[..., :self.split].reshape(*lead, self.rows.size, M)
        Q = theta[..., self.split:].reshape(*lead, self.queries.size, M)
        if self.key_query:
            Z[..., self.queries] = np.swapaxes(Q, -1, -2)
        else:
            Z[..., self.queries, :] = Q
        return Y, Z


# ----------------------------------------------------------------------------------------------
# The batch gradient kernel


#: constants of fdlibm's e_exp.c (Sun Microsystems, 1993): ln 2 split in two, 1/ln 2, its Remez polynomial
LN2_HI, LN2_LO, INV_LN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.44269504088896338700e+00
EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
         -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_P1, _P2, _P3, _P4, _P5 = EXP_P


#: samples of one class per task of phase 1: they share the class's rows of Y, which the task lays out as
#: columns once for all their g = Yd (whose sums over k then interleave)
CHUNK = 16


@jit
def _exp_reduced(x):
    """(y, bits) for x <= 0 with e^x = (y·2^{k+1000})·2^{-1000}: fdlibm's reduction x = k ln2 + r, |r| <= ln2/2,
    its rational form y ≈ e^r, and ``bits`` those of the float 2^{k+1000} (:func:`exp_nonpositive`)."""
    x = max(x, -746.0)
    k = np.int64(x * INV_LN2 - 0.5)
    fk = float(k)
    hi = x - fk * LN2_HI
    lo = fk * LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
    return 1.0 - ((lo - (r * c) / (2.0 - c)) - hi), (k + 2023) << 52


@jit
def exp_nonpositive(x, shift, out, bits, n):
    """out[:n] = e^{x[:n] − shift} for x <= shift, within 1 ulp (``bits``: int64 scratch; ``out`` must not be ``x``,
    or the loop does not vectorise).

    fdlibm's reduction x = k ln2 + r, |r| <= ln2/2, and its rational form of e^r, then the exact
    scaling (y·2^{k+1000})·2^{-1000} (one rounding, only for subnormal results); x < −746 gives 0.
    Written with +, −, ×, ÷ and integer ops only, so that the loop vectorises (the C library's exp
    is a call per element, ≈ 4× slower here) and NumPy evaluates the same formula bit for bit
    (``benchmarks/scan_snap_peer.py``).
    """
    scale = bits.view(np.float64)
    for j in range(n):
        out[j], bits[j] = _exp_reduced(x[j] - shift)
    for j in range(n):
        out[j] = out[j] * scale[j] * 2.0**-1000


@jit
def _attention(q, N, support, support_rows, ids, rws, pos, vs, scratch, bits):
    """v on the support of N: writes its ids (increasing), their rows in the live Y (``rws``), their positions in the
    class support (``pos``) and v (``vs``); returns (nnz, ‖v‖).

    ``support``: the ids l of the class with ℙ(l|n) > 0, increasing (N vanishes elsewhere), ``support_rows`` their
    rows in the live Y. v_l = N_l e^{z_l − top} / Σ, top the largest z on the support of N (spec §3.1).
    """
    nnz = 0
    top = -math.inf
    for j in range(support.shape[0]):
        l = support[j]
        if N[l] > 0:
            ids[nnz] = l
            rws[nnz] = support_rows[j]
            pos[nnz] = j
            nnz += 1
            if q[l] > top:
                top = q[l]
    for i in range(nnz):
        vs[i] = q[ids[i]]
    exp_nonpositive(vs, top, scratch, bits, nnz)
    total = 0.0
    for i in range(nnz):
        vs[i] = N[ids[i]] * scratch[i]
        total += vs[i]
    sq = 0.0
    for i in range(nnz):
        vs[i] /= total
        sq += vs[i] * vs[i]
    return nnz, math.sqrt(sq)


@jit
def _logits(Yl, rows, F, members, D):
    """o_b = Yᵀf_b into D[b] for the samples ``members`` of one class: o_k = ((0 + Y_{l₁k} f_{l₁}) + Y_{l₂k} f_{l₂})
    + … over the class support l₁ < l₂ < … (``rows``: their rows in the live Y; F[b, i] = f_{l_i}, 0 off the
    sample's support: a zero term adds ±0, which leaves every partial sum unchanged, as no sum from +0 is ever −0).

    Two samples and four rows per pass over o (the same sums; each loaded row of Y serves both samples).
    """
    s = rows.shape[0]
    m = members.shape[0]
    for a in range(0, m, 2):
        oa, fa = D[members[a]], F[members[a]]
        if a + 1 < m:
            _logits_two(Yl, rows, s, fa, F[members[a + 1]], oa, D[members[a + 1]])
        else:
            _logits_one(Yl, rows, s, fa, oa)


@jit
def _logits_two(Yl, rows, s, fa, fb, oa, ob):
    """o_a = Yᵀf_a and o_b = Yᵀf_b over the rows ``rows`` in order, four rows per pass."""
    for k in range(oa.shape[0]):
        oa[k] = 0.0
        ob[k] = 0.0
    i = 0
    while i < s:
        if i + 4 <= s:
            y0, y1, y2, y3 = Yl[rows[i]], Yl[rows[i + 1]], Yl[rows[i + 2]], Yl[rows[i + 3]]
            a0, a1, a2, a3 = fa[i], fa[i + 1], fa[i + 2], fa[i + 3]
            b0, b1, b2, b3 = fb[i], fb[i + 1], fb[i + 2], fb[i + 3]
            for k in range(oa.shape[0]):
                u0, u1, u2, u3 = y0[k], y1[k], y2[k], y3[k]
                oa[k] = (((oa[k] + u0 * a0) + u1 * a1) + u2 * a2) + u3 * a3
                ob[k] = (((ob[k] + u0 * b0) + u1 * b1) + u2 * b2) + u3 * b3
            i += 4
        else:
            y0, a0, b0 = Yl[rows[i]], fa[i], fb[i]
            for k in range(oa.shape[0]):
                oa[k] += y0[k] * a0
                ob[k] += y0[k] * b0
            i += 1


@jit
def _logits_one(Yl, rows, s, f, o):
    """o = Yᵀf over the rows ``rows`` in order, four rows per pass."""
    for k in range(o.shape[0]):
        o[k] = 0.0
    i = 0
    while i < s:
        if i + 4 <= s:
            y0, y1, y2, y3 = Yl[rows[i]], Yl[rows[i + 1]], Yl[rows[i + 2]], Yl[rows[i + 3]]
            f0, f1, f2, f3 = f[i], f[i + 1], f[i + 2], f[i + 3]
            for k in range(o.shape[0]):
                o[k] = (((o[k] + y0[k] * f0) + y1[k] * f1) + y2[k] * f2) + y3[k] * f3
            i += 4
        else:
            y0, f0 = Yl[rows[i]], f[i]
            for k in range(o.shape[0]):
                o[k] += y0[k] * f0
            i += 1


@jit
def _draw_and_attend(i, b, q, p, support, support_rows, T1, count_prob, count_alias, count_base, counts, ids, rws,
                     pos, vs, norm, nnz, F, scratch, bits):
    """Global sample i in slot b, of a class with query vector ``q``, ℙ(·|n) = ``p`` and alias tables
    ``count_prob``, ``count_alias``: draw its counts into ``counts`` (T finite), then v (:func:`_attention`) and
    f = v/‖v‖ on the class support (``F[b]``, 0 off the sample's support); ``counts``, ``scratch``, ``bits``:
    length M, reused sample after sample."""
    if T1 >= 0:
        multinomial_counts(count_prob, count_alias, T1, count_base, i * T1, counts)
        nnz[b], norm[b] = _attention(q, counts, support, support_rows, ids[b], rws[b], pos[b], vs[b], scratch, bits)
    else:
        nnz[b], norm[b] = _attention(q, p, support, support_rows, ids[b], rws[b], pos[b], vs[b], scratch, bits)
    f = F[b]
    for j in range(support.shape[0]):
        f[j] = 0.0
    for e in range(nnz[b]):
        f[pos[b, e]] = vs[b, e] / norm[b]


@jit
def _tops(d0, d1, d2, d3):
    """max_k of four vectors, each a running max over k increasing (as ``if d_k > top: top = d_k``), interleaved."""
    t0 = t1 = t2 = t3 = -math.inf
    for k in range(d0.shape[0]):
        t0, t1, t2, t3 = max(t0, d0[k]), max(t1, d1[k]), max(t2, d2[k]), max(t3, d3[k])
    return t0, t1, t2, t3


@jit
def _sums(e0, e1, e2, e3):
    """Σ_k of four vectors, each over k increasing, interleaved."""
    s0 = s1 = s2 = s3 = 0.0
    for k in range(e0.shape[0]):
        s0 += e0[k]
        s1 += e1[k]
        s2 += e2[k]
        s3 += e3[k]
    return s0, s1, s2, s3


@jit
def _residuals(D, E, bits, members, next_token, classes, J):
    """d ← e_n − softmax(d) in place for the rows ``members`` of ``D`` (logits in), J₁ = log α_n into ``J``.

    Per row the operations of one sample (e_k = e^{o_k − max o}, α = e/Σe, k increasing); four rows at a time,
    so that their running maxima and sums, chains of dependent operations, interleave (``E``, ``bits``: 4 × M
    scratch for their e). The last group repeats its last row to fill the four (a repeated row gives the same
    max and sum, used once).
    """
    M = D.shape[1]
    last = members.shape[0] - 1
    for a in range(0, last + 1, 4):
        b0, b1, b2, b3 = members[a], members[min(a + 1, last)], members[min(a + 2, last)], members[min(a + 3, last)]
        tops = _tops(D[b0], D[b1], D[b2], D[b3])
        h = min(4, last + 1 - a) - 1  # the group's last row
        for j in range(h + 1):
            exp_nonpositive(D[members[a + j]], tops[j], E[j], bits[j], M)
        sums = _sums(E[0], E[min(1, h)], E[min(2, h)], E[min(3, h)])
        for j in range(h + 1):
            b = members[a + j]
            n = next_token[classes[b]]
            d, e = D[b], E[j]
            J[b] = (d[n] - tops[j]) - math.log(sums[j])
            for k in range(M):
                d[k] = (1.0 if k == n else 0.0) - e[k] / sums[j]


@jit
def _columns(Yl, rows, YT):
    """YT[k, i] = Yl[rows[i], k]: the class's rows of the live Y as the first columns of ``YT`` (M × ·)."""
    for i in range(rows.shape[0]):
        y = Yl[rows[i]]
        for k in range(y.shape[0]):
            YT[k, i] = y[k]


@jit
def _backprop(YT, s, D, members, G):
    """G[b, i] = (Y d_b)_{l_i} on the class support l_1 < … < l_s for every sample b in ``members``.

    Each a sum over k in increasing order, four k per pass over G (the same sums, fewer loads and stores of G);
    the loop over the support vectorises (``YT``: the support's rows of Y as columns) and the samples' sums
    interleave. Ids off a sample's support get a sum too, never read.
    """
    M = YT.shape[0]
    for b in members:
        g = G[b]
        for i in range(s):
            g[i] = 0.0
    k = 0
    while k + 4 <= M:
        c0, c1, c2, c3 = YT[k], YT[k + 1], YT[k + 2], YT[k + 3]
        for b in members:
            d, g = D[b], G[b]
            d0, d1, d2, d3 = d[k], d[k + 1], d[k + 2], d[k + 3]
            for i in range(s):
                g[i] = (((g[i] + c0[i] * d0) + c1[i] * d1) + c2[i] * d2) + c3[i] * d3
        k += 4
    while k < M:
        c0 = YT[k]
        for b in members:
            d0, g = D[b, k], G[b]
            for i in range(s):
                g[i] += c0[i] * d0
        k += 1


@jit
def _query_terms(vs, norm, pos, nnz, f, g, weight, zt):
    """w·∂J₁/∂z_{m,l} = w‖v‖⁻¹v_l(g_l − f_l fᵀg) (``zt[:nnz]``) on the sample's support; f_l, g_l = f[pos],
    g[pos] (the support's positions in the class support)."""
    fg = 0.0
    for i in range(nnz):
        fg += f[pos[i]] * g[pos[i]]
    for i in range(nnz):
        zt[i] = weight * vs[i] / norm * (g[pos[i]] - f[pos[i]] * fg)


@jit
def _chunk(first_sample, members, Yl, q, p, support, rows, T1, count_prob, count_alias, count_base, next_token,
           classes, weight, counts, ids, rws, pos, vs, norm, nnz, F, D, E, bits, J, YT, G, ZT):
    """Phase 1 for samples ``members`` (slots) of one class (``support``: its ids, ``rows``: their rows in the
    live Y; global sample i = first_sample + slot): v and o per sample, then d and J₁, g = Yd on the support and
    the terms of phase 2 (:func:`_query_terms`). ``counts`` (M), ``E``, ``bits`` (4 × M) and ``YT`` (M × support)
    are the scratch of the thread."""
    for b in members:
        _draw_and_attend(first_sample + b, b, q, p, support, rows, T1, count_prob, count_alias, count_base, counts,
                         ids, rws, pos, vs, norm, nnz, F, E[0], bits[0])
    _logits(Yl, rows, F, members, D)
    _residuals(D, E, bits, members, next_token, classes, J)
    _columns(Yl, rows, YT)
    _backprop(YT, rows.shape[0], D, members, G)
    for b in members:
        _query_terms(vs[b], norm[b], pos[b], nnz[b], F[b], G[b], weight, ZT[b])


@jit
def _chunks(classes, K, support_start, first, members, chunks, cost):
    """Order the samples by class, in sample order within a class (``members``; ``first``: scratch), and
    cut each class into chunks of at most :data:`CHUNK` samples: ``chunks[c]`` = (class, first member, count),
    ``cost[c]`` its work. Returns the number of chunks."""
    for n in range(K + 1):
        first[n] = 0
    for b in range(classes.shape[0]):
        first[classes[b] + 1] += 1
    c = 0
    for n in range(K):
        s = support_start[n + 1] - support_start[n]
        for a in range(0, first[n + 1], CHUNK):
            count = min(CHUNK, first[n + 1] - a)
            chunks[c, 0], chunks[c, 1], chunks[c, 2] = n, first[n] + a, count
            # per sample o, g and d (≈ 2s + 8 passes of M multiply-adds), and the chunk's own work (Y's columns,
            # cold caches) of ≈ 1.5 samples (measured at Syn-Medium)
            cost[c] = (count + 1.5) * (2 * s + 8)
            c += 1
        first[n + 1] += first[n]
    for b in range(classes.shape[0]):
        n = classes[b]
        members[first[n]] = b
        first[n] += 1
    return c


@jit
def _split(cost, n, parts):
    """Cut 0 … n−1 into len(parts) − 1 consecutive ranges of about equal total ``cost`` (range p: parts[p] …
    parts[p + 1] − 1), so that the threads of a prange over the ranges get equal work."""
    P = parts.shape[0] - 1
    total = 0.0
    for r in range(n):
        total += cost[r]
    parts[0] = 0
    p, acc = 1, 0.0
    for r in range(n):
        acc += cost[r]
        while p < P and acc >= total * p / P:
            parts[p] = r + 1
            p += 1
    for q in range(p, P + 1):
        parts[q] = n


@jit
def _group_samples(classes, group_start, groups, samples, sizes):
    """The samples of every group of rows, in sample order: those whose class support holds the group's rows (the
    groups of class n: groups[group_start[n]:group_start[n + 1]]); group h's are samples[h, :sizes[h]], followed
    by copies of the first up to a multiple of four (a padding that phase 2 weighs by 0)."""
    for h in range(sizes.shape[0]):
        sizes[h] = 0
    for b in range(classes.shape[0]):
        n = classes[b]
        for h in groups[group_start[n]:group_start[n + 1]]:
            samples[h, sizes[h]] = b
            sizes[h] += 1
    for h in range(sizes.shape[0]):
        for e in range(sizes[h], -(-sizes[h] // 4) * 4):
            samples[h, e] = samples[h, 0]


@jit
def _weights(r, samples, size, classes, position, F, weight, c):
    """c[e] = w·f_{b,r} = weight·F[b, position[n_b, r]] for the e-th sample b of a group of rows; 0 for the
    padding (:func:`_group_samples`)."""
    for e in range(size):
        b = samples[e]
        c[e] = weight * F[b, position[classes[b], r]]
    for e in range(size, samples.shape[0]):
        c[e] = 0.0


@jit
def _y_rows(g1, g2, c1, c2, samples, D):
    """Phase 2 for two live Y rows of one group: g = ((0 + c_1 d_1) + c_2 d_2) + … over the group's ``samples`` in
    sample order (``c1``, ``c2``: the rows' weights, :func:`_weights`), four samples per pass.

    Both rows in one pass over the samples' d (each loaded d serves two rows). A zero weight (a sample whose
    counts miss the row, or the padding) adds ±0, which changes no sum from +0 (such sums are never −0).
    """
    M = D.shape[1]
    for k in range(M):
        g1[k] = 0.0
        g2[k] = 0.0
    for e in range(0, samples.shape[0], 4):
        d0, d1, d2, d3 = D[samples[e]], D[samples[e + 1]], D[samples[e + 2]], D[samples[e + 3]]
        a0, a1, a2, a3 = c1[e], c1[e + 1], c1[e + 2], c1[e + 3]
        b0, b1, b2, b3 = c2[e], c2[e + 1], c2[e + 2], c2[e + 3]
        for k in range(M):
            u0, u1, u2, u3 = d0[k], d1[k], d2[k], d3[k]
            g1[k] = (((g1[k] + a0 * u0) + a1 * u1) + a2 * u2) + a3 * u3
            g2[k] = (((g2[k] + b0 * u0) + b1 * u1) + b2 * u2) + b3 * u3


@jit
def _y_row(g, c, samples, D):
    """Phase 2 for one live Y row alone (:func:`_y_rows`)."""
    M = D.shape[1]
    for k in range(M):
        g[k] = 0.0
    for e in range(0, samples.shape[0], 4):
        d0, d1, d2, d3 = D[samples[e]], D[samples[e + 1]], D[samples[e + 2]], D[samples[e + 3]]
        a0, a1, a2, a3 = c[e], c[e + 1], c[e + 2], c[e + 3]
        for k in range(M):
            g[k] = (((g[k] + a0 * d0[k]) + a1 * d1[k]) + a2 * d2[k]) + a3 * d3[k]


@jit
def _query_row(g, j, classes, class_query, nnz, ids, ZT):
    """Phase 2 for query vector j: its samples' w·∂J₁/∂z_m added in sample order."""
    for k in range(g.shape[0]):
        g[k] = 0.0
    for b in range(classes.shape[0]):
        if class_query[classes[b]] == j:
            for i in range(nnz[b]):
                g[ids[b, i]] += ZT[b, i]


@jit
def _phase2(task, tasks, group_rows, samples, sizes, classes, position, F, D, weight, class_query, nnz, ids, ZT, grad,
            R, M, c1, c2):
    """One task of phase 2: tasks[task] = (group h, first row, 1 or 2 rows) of Y, or (−1, j, 1) for query j
    (``c1``, ``c2``: scratch for the rows' weights)."""
    h, first, count = tasks[task, 0], tasks[task, 1], tasks[task, 2]
    if h < 0:
        _query_row(grad[(R + first) * M:(R + first + 1) * M], first, classes, class_query, nnz, ids, ZT)
        return
    size = sizes[h]
    mine = samples[h, :-(-size // 4) * 4]
    r1 = group_rows[first]
    _weights(r1, mine, size, classes, position, F, weight, c1)
    if count == 2:
        r2 = group_rows[first + 1]
        _weights(r2, mine, size, classes, position, F, weight, c2)
        _y_rows(grad[r1 * M:(r1 + 1) * M], grad[r2 * M:(r2 + 1) * M], c1, c2, mine, D)
    else:
        _y_row(grad[r1 * M:(r1 + 1) * M], c1, mine, D)


@parallel_jit
def batch_gradient_kernel(theta, grad, layout, draws, step, objective, scratch):
    """Write the batch-mean ∇J(θ) into ``grad`` for the batch of step ``step[0]``, advance ``step``, return mean J.

    θ = (vec Y[rows], vec Q) (:class:`LiveRows`). The kernel of a :class:`numerics.train.CompiledGradient`
    (arguments from :func:`kernel_args`); besides ``grad`` it writes the step counter ``step`` (1,), the record
    ``objective`` (entry ``step`` gets the mean J when in range) and its ``scratch``. The classes are drawn first
    (cheap), then two parallel loops: phase 1 per chunk of one class's samples (:func:`_chunk`), phase 2 per pair
    of live rows of Y (:func:`_phase2`), each split by its work (:func:`_split`).
    """
    M, R, class_query, next_token, P, support_start, support, support_rows, position, group_rows, group_start, groups, \
        tasks = layout
    batch, schedule, class_prob, class_alias, class_base, T1, count_prob, count_alias, count_base = draws
    classes, counts, ids, rws, pos, vs, norm, nnz, J, F, D, E, bits, G, ZT, first, members, chunks, YT, samples, \
        sizes, C, cost, parts = scratch
    nq = (theta.shape[0] - R * M) // M
    K = class_query.shape[0]
    Yl = theta[:R * M].reshape((R, M))
    Q = theta[R * M:].reshape((nq, M))
    s = step[0]
    weight = 1.0 / batch
    threads = parts.shape[0] - 1  # numba's largest thread count, fixed by kernel_args (a call of
    # numba.get_num_threads() here would keep the kernel out of the disk cache)
    for b in range(batch):
        classes[b] = sample_class(s * batch + b, schedule, K, class_prob, class_alias, class_base)
    n_chunks = _chunks(classes, K, support_start, first, members, chunks, cost)
    _split(cost, n_chunks, parts)
    for t in prange(threads):  # phase 1, per chunk of samples of one class
        for c in range(parts[t], parts[t + 1]):
            n, a, count = chunks[c, 0], chunks[c, 1], chunks[c, 2]
            lo, hi = support_start[n], support_start[n + 1]
            _chunk(s * batch, members[a:a + count], Yl, Q[class_query[n]], P[n], support[lo:hi], support_rows[lo:hi],
                   T1, count_prob[n], count_alias[n], count_base, next_token, classes, weight, counts[t], ids, rws,
                   pos, vs, norm, nnz, F, D, E[t], bits[t], J, YT[t], G, ZT)
    _group_samples(classes, group_start, groups, samples, sizes)
    # the tasks' work in multiply-adds: a row's pass over its group's samples costs ≈ 5 samples more (zeroing,
    # weights), a query row ≈ batch/4 samples (measured at Syn-Medium)
    for task in range(tasks.shape[0]):
        h = tasks[task, 0]
        cost[task] = batch / 4 * M if h < 0 else (-(-sizes[h] // 4) * 4 + 5) * tasks[task, 2] * M
    _split(cost, tasks.shape[0], parts)
    for t in prange(threads):  # phase 2: each live row gets its samples' terms in sample order
        for task in range(parts[t], parts[t + 1]):
            _phase2(task, tasks, group_rows, samples, sizes, classes, position, F, D, weight, class_query, nnz, ids, ZT,
                    grad, R, M, C[t, 0], C[t, 1])
    total = 0.0
    for b in range(batch):
        total += J[b]
    mean = total / batch
    if s < objective.shape[0]:
        objective[s] = mean
    step[0] = s + 1
    return mean


def _supports(sampler: BatchSampler, live: LiveRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The class supports {l : ℙ(l|n) > 0} (increasing) back to back: (start (K + 1), ids, their live rows)."""
    ids = [np.flatnonzero(row > 0) for row in sampler.P]
    start = np.concatenate([[0], np.cumsum([i.size for i in ids])]).astype(np.int64)
    flat = np.concatenate(ids).astype(np.int64)
    return start, flat, live.row_of[flat]


def _row_groups(K: int, R: int, nq: int, support_start, support_rows) -> tuple:
    """Phase 2's plan: (position, group_rows, group_start, groups, tasks).

    position[n, r]: the place of live row r in class n's support (−1: not in it). The live rows of Y are grouped by
    the set of classes whose support holds them, so that the rows of a group take their terms from the same
    samples (``group_rows``: the groups' rows back to back; class n is in the groups
    groups[group_start[n]:group_start[n + 1]]). A task is (group, first row in ``group_rows``, 1 or 2 rows), then
    (−1, j, 1) for query vector j.
    """
    position = np.full((K, R), -1, dtype=np.int64)
    for n in range(K):
        rows = support_rows[support_start[n]:support_start[n + 1]]
        position[n, rows] = np.arange(rows.size)
    by_classes: dict[bytes, list[int]] = {}  # the rows of each set of classes, in order of their first row
    for r, classes in enumerate(np.ascontiguousarray(position.T >= 0)):
        by_classes.setdefault(classes.tobytes(), []).append(r)
    held = np.array([np.frombuffer(key, dtype=bool) for key in by_classes])  # H × K: class n holds group h's rows
    tasks, first = [], 0
    for h, rows in enumerate(by_classes.values()):
        tasks += [(h, first + a, min(2, len(rows) - a)) for a in range(0, len(rows), 2)]
        first += len(rows)
    tasks += [(-1, j, 1) for j in range(nq)]
    group_rows = np.array([r for rows in by_classes.values() for r in rows], dtype=np.int64)
    group_start = np.concatenate([[0], np.cumsum(held.sum(axis=0))]).astype(np.int64)
    groups = np.concatenate([np.flatnonzero(held[:, n]) for n in range(K)]).astype(np.int64)
    return position, group_rows, group_start, groups, np.array(tasks, dtype=np.int64)


def _scratch(M: int, B: int, K: int, S: int, H: int, n_tasks: int) -> tuple:
    """The kernel's scratch (names as in :func:`batch_gradient_kernel`): ``counts``, ``E``, ``bits``, ``YT`` and
    ``C`` have one slice per thread, every other array one row per sample, chunk, group or task."""
    threads = numba.config.NUMBA_NUM_THREADS
    n_chunks = B // CHUNK + min(K, B)  # at most
    ints = functools.partial(np.zeros, dtype=np.int64)
    return (ints(B), ints((threads, M)), ints((B, S)), ints((B, S)), ints((B, S)),  # classes counts ids rws pos
            np.zeros((B, S)), np.zeros(B), ints(B), np.zeros(B), np.zeros((B, S)), np.zeros((B, M)),  # vs … F D
            np.zeros((threads, 4, M)), ints((threads, 4, M)), np.zeros((B, S)), np.zeros((B, S)),  # E bits G ZT
            ints(K + 1), ints(B), ints((n_chunks, 3)), np.zeros((threads, M, S)),  # first members chunks YT
            ints((H, B + 3)), ints(H), np.zeros((threads, 2, B + 3)), np.zeros(max(n_chunks, n_tasks)),  # … C cost
            ints(threads + 1))  # parts


def kernel_args(sampler: BatchSampler, live: LiveRows, *, first_step: int = 0, record: int = 0) -> tuple:
    """The extra arguments of :func:`batch_gradient_kernel`: (layout, draws, step counter at ``first_step``,
    record of ``record`` steps, scratch)."""
    M, B, K = sampler.M, sampler.batch, sampler.K
    class_base, count_base = sampler.bases()
    step = np.array([_integer("first_step", first_step, 0)], dtype=np.int64)
    objective = np.zeros(_integer("record", record, 0))
    support_start, support, support_rows = _supports(sampler, live)
    R, nq = live.rows.size, live.queries.size
    plan = _row_groups(K, R, nq, support_start, support_rows)
    layout = (M, R, live.class_query, sampler.next_token, sampler.P, support_start, support, support_rows, *plan)
    draws = (B, SCHEDULES.index(sampler.schedule), sampler.class_prob, sampler.class_alias, class_base, sampler.T1,
             sampler.count_prob, sampler.count_alias, count_base)
    H = int(plan[3].max()) + 1  # groups of rows
    scratch = _scratch(M, B, K, int(np.diff(support_start).max()), H, plan[4].shape[0])
    return layout, draws, step, objective, scratch


#: position of the per-step record in :func:`kernel_args`
_RECORD = 3


def compiled_gradient(sampler: BatchSampler, live: LiveRows, *, first_step: int = 0,
                      record: int = 0) -> CompiledGradient:
    """The batch gradient on the live θ as a :class:`numerics.train.CompiledGradient`; each call draws the next batch.

    ``gradient(theta)`` returns (mean J, ∇J) for the batch of the current step and advances the step;
    ``record``: length of the per-step record of the mean J.
    """
    if not isinstance(sampler, BatchSampler) or not isinstance(live, LiveRows):
        raise InvalidArgument(f"sampler={sampler!r}, live={live!r} must be a BatchSampler and its LiveRows")
    return CompiledGradient(batch_gradient_kernel, kernel_args(sampler, live, first_step=first_step, record=record))


def batch_gradient(sampler: BatchSampler, Y, Z, *, step: int = 0, key_query: bool = False):
    """(mean J, ∂J/∂Y, ∂J/∂Z) of the batch of step ``step`` at full (Y, Z), from one call of the kernel."""
    live = LiveRows.of(sampler, key_query)
    M = sampler.M
    Y, Z = np.asarray(Y, dtype=np.float64), np.asarray(Z, dtype=np.float64)
    if Y.shape != (M, M) or Z.shape != (M, M):
        raise InvalidArgument(f"Y, Z have shapes {Y.shape}, {Z.shape}; both must be (M, M) = ({M}, {M})")
    J, grad = compiled_gradient(sampler, live, first_step=step)(live.compact(Y, Z))
    gY, gZ = live.expand(grad, np.zeros((M, M)), np.zeros((M, M)))
    return J, gY, gZ


# ----------------------------------------------------------------------------------------------
# Initialisation and the run


@jit
def _uniform_at(base, bound, counters, out):
    for j in range(counters.size):
        u, _ = uniform(base, counters[j])
        out[j] = bound * (2.0 * u - 1.0)


def initial_values(M: int, init: str, seed, counters=None) -> np.ndarray:
    """Entries ``counters`` of θ(0) = (vec Y, vec Z) (all 2M² when None): 0 (``zero``) or U(−1/√M, 1/√M)
    from word j of stream 2 for entry j (``torch_uniform``)."""
    M = _integer("M", M, 2)
    _choice("init", init, INITS)
    counters = np.arange(2 * M * M, dtype=np.int64) if counters is None else np.asarray(counters, dtype=np.int64)
    out = np.zeros(counters.size)
    if init == "torch_uniform":
        _uniform_at(np.uint64(stream_base(key_from_seed(seed), STREAM_INIT)), 1.0 / math.sqrt(M), counters, out)
    return out


def _optimizer(optimizer: str, momentum):
    _choice("optimizer", optimizer, OPTIMIZERS)
    if optimizer == "momentum":
        if isinstance(momentum, bool) or not isinstance(momentum, numbers.Real) or not (
                math.isfinite(momentum) and momentum >= 0):
            raise InvalidArgument(f"momentum={momentum!r} must be a finite number >= 0 (PyTorch's SGD momentum)")
        return Momentum(float(momentum))
    return SGD() if optimizer == "sgd" else Adam()


def train_ss(layout, *, T, batch: int, steps: int, etaY: float, etaZ: float, optimizer: str = "momentum",
             momentum: float = 0.9, init: str = "zero", seed=0, class_schedule: str = "iid_uniform",
             key_query: bool = False, log: LogSchedule | int | list[int] | None = None,
             observers: dict[str, Any] | None = None, states: str = "full", progress=None) -> Trajectory:
    """Run ``steps`` updates of SGD / momentum / Adam ascent on J at level (i) (integer T) or (ii) (T = math.inf).

    Parameters
    ----------
    layout
        A :class:`~numerics.models.scan_snap.data.Layout` or its name (``"synsmall.code"``, ...).
    T
        Sequence length including the last token (T − 1 contextual tokens), >= 2; ``math.inf`` for v = c_n.
    batch, steps
        Samples per step (>= 1) and updates (>= 0).
    etaY, etaZ
        Rates of the decoder Y and the attention Z (>= 0; [code]: η_Z = lr_z, η_Y = lr_z·ratio).
    optimizer, momentum
        ``"sgd"``, ``"momentum"`` (``torch.optim.SGD(momentum=momentum)``) or ``"adam"`` (PyTorch defaults).
    init
        ``"zero"`` or ``"torch_uniform"`` (spec §2.5).
    seed
        Integer >= 0 or a ``SeedSequence``: the key of every draw (module docstring).
    class_schedule, key_query
        Options ``ss.opt.class_schedule`` and ``ss.opt.z_index`` (False: ``query_key``).
    log, observers, progress
        Passed to :func:`numerics.train.train` (observers see the live θ); default log: first and last step.
    states
        ``"full"``: states ``Y``, ``Z`` (M × M); ``"live"``: the driver's blocks ``Y_live`` (rows × M) and
        ``Z_live`` (queries × M) only (what M = 10⁴ needs).

    Returns
    -------
    Trajectory
        The states at the logged steps, t = step; ``meta``: the driver's record (``theta`` is the live θ),
        ``Y``/``Z`` final (``states="full"``), ``live`` (rows and queries), ``batch_objective`` (mean J of
        each step's batch), the sampler's record, the options and rates.
    """
    sampler = BatchSampler.build(layout, T=T, batch=batch, seed=seed, class_schedule=class_schedule)
    steps = _integer("steps", steps, 0)
    sampler.check_steps(steps)
    etaY, etaZ = _rate("etaY", etaY), _rate("etaZ", etaZ)
    opt = _optimizer(optimizer, momentum)
    _choice("states", states, STATES)
    live = LiveRows.of(sampler, key_query)
    M, R, nq = sampler.M, live.rows.size, live.queries.size
    theta0 = initial_values(M, init, seed, live.counters())
    gradient = compiled_gradient(sampler, live, record=steps)
    split = live.split
    run = train(
        theta0, gradient,
        groups=[ParamGroup("Z", slice(split, live.size), etaZ, sign=-1), ParamGroup("Y", slice(0, split), etaY,
                                                                                     sign=-1)],
        optimizer=opt, steps=steps, log=LogSchedule() if log is None else log, observers=observers,
        clock="steps",
        progress=progress, seed=seed,
        meta={"level": "T_inf" if sampler.T1 < 0 else "counts", "sampler": sampler.info(), "etaY": etaY,
              "etaZ": etaZ, "init": init, "key_query": bool(key_query),
              "z_index": "key_query" if key_query else "query_key",
              "live": {"Y_rows": live.rows.tolist(), "Z_queries": live.queries.tolist()}},
    )
    n_log, flat = len(run.t), run.states  # the driver's default states (one per group, flat) avoid re-validating
    run = dataclasses.replace(run, states={"Y_live": flat["Y"].reshape(n_log, R, M),
                                           "Z_live": flat["Z"].reshape(n_log, nq, M)})
    run = run.with_meta(batch_objective=gradient.args[_RECORD].copy())
    if states == "live":
        return run
    full0 = initial_values(M, init, seed)
    Ys, Zs = live.expand(np.concatenate([flat["Y"], flat["Z"]], axis=1), full0[:M * M].reshape(M, M),
                         full0[M * M:].reshape(M, M))
    # the last logged step is the last step: its (Y, Z) are the final ones
    return dataclasses.replace(run, states={"Y": Ys, "Z": Zs}).with_meta(Y=Ys[-1].copy(), Z=Zs[-1].copy())
