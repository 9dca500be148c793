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
the result independent of the thread count): phase 1, in parallel over samples, computes each
sample's f, d and ∂J₁/∂z_m (every sum sequential: over the support in increasing id order, over k in
increasing order; the softmax as e_k = exp(o_k − max o), α = e/Σe, with :func:`exp_nonpositive`);
phase 2, in parallel over live rows, adds the samples' terms (w f_l) d and w·∂J₁/∂z_m, w = 1/batch, to
each row in sample order. Loops are blocked over rows or samples only where that keeps every sum's
order (independent accumulators, fewer passes), never by re-associating a sum.

Cost at Fig. 6's largest cell (K = 20, M = 240, batch 128, T = 128; 2 cores): ≈ 3 µs per sample
(0.45 µs of it the 127 categorical draws), ≈ 0.3 ms per step for the kernel on 2 threads, and the
driver's momentum update of the 52 800 live coordinates after it (``tdcheck bench ss-sgd``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from dataclasses import dataclass
from typing import Any

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
        """Full (Y, Z): the live entries from θ, every other entry from (Y0, Z0)."""
        Y, Z = np.array(Y0, dtype=np.float64), np.array(Z0, dtype=np.float64)
        Y[self.rows] = theta[:self.split].reshape(self.rows.size, self.M)
        Q = theta[self.split:].reshape(self.queries.size, self.M)
        if self.key_query:
            Z[:, self.queries] = Q.T
        else:
            Z[self.queries] = Q
        return Y, Z


# ----------------------------------------------------------------------------------------------
# The batch gradient kernel


#: constants of fdlibm's e_exp.c (Sun Microsystems, 1993): ln 2 split in two, 1/ln 2, its Remez polynomial
LN2_HI, LN2_LO, INV_LN2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10, 1.44269504088896338700e+00
EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
         -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_P1, _P2, _P3, _P4, _P5 = EXP_P


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
        xj = max(x[j] - shift, -746.0)
        k = np.int64(xj * INV_LN2 - 0.5)
        fk = float(k)
        hi = xj - fk * LN2_HI
        lo = fk * LN2_LO
        r = hi - lo
        t = r * r
        c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
        out[j] = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
        bits[j] = (k + 2023) << 52
    for j in range(n):
        out[j] = out[j] * scale[j] * 2.0**-1000


@jit
def _attention(q, N, row_of, ids, rws, vs, scratch, bits):
    """v on the support of N: writes ids (increasing), their rows in the live Y, v (``vs``); returns (nnz, ‖v‖).

    v_l = N_l e^{z_l − top} / Σ, top the largest z on the support (spec §3.1).
    """
    nnz = 0
    top = -math.inf
    for l in range(q.shape[0]):
        if N[l] > 0:
            ids[nnz] = l
            rws[nnz] = row_of[l]
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
def _logits(Yl, rws, vs, norm, nnz, o):
    """o = Yᵀf, f = v/‖v‖: o_k = ((0 + Y_{l₁k} f_{l₁}) + Y_{l₂k} f_{l₂}) + … over the support in id order."""
    for k in range(o.shape[0]):
        o[k] = 0.0
    i = 0
    while i < nnz:  # four rows per pass over o (the same sums, fewer loads and stores of o)
        if i + 4 <= nnz:
            y0, y1, y2, y3 = Yl[rws[i]], Yl[rws[i + 1]], Yl[rws[i + 2]], Yl[rws[i + 3]]
            f0, f1, f2, f3 = vs[i] / norm, vs[i + 1] / norm, vs[i + 2] / norm, vs[i + 3] / norm
            for k in range(o.shape[0]):
                o[k] = (((o[k] + y0[k] * f0) + y1[k] * f1) + y2[k] * f2) + y3[k] * f3
            i += 4
        else:
            y0, f0 = Yl[rws[i]], vs[i] / norm
            for k in range(o.shape[0]):
                o[k] += y0[k] * f0
            i += 1


@jit
def _residual(d, n, scratch, bits):
    """d ← e_n − softmax(d) in place (e_k = e^{o_k − max o}, α = e/Σe, k increasing); return J₁ = log α_n."""
    M = d.shape[0]
    top = -math.inf
    for k in range(M):
        if d[k] > top:
            top = d[k]
    o_n = d[n]
    exp_nonpositive(d, top, scratch, bits, M)
    total = 0.0
    for k in range(M):
        total += scratch[k]
    for k in range(M):
        d[k] = (1.0 if k == n else 0.0) - scratch[k] / total
    return (o_n - top) - math.log(total)


@jit
def _backprop(Yl, rws, d, nnz, gs):
    """gs[i] = (Y d)_{l_i} on the support, each a sum over k in increasing order.

    Eight rows per pass over d: eight independent accumulators instead of one long chain of adds. The last
    pass repeats its last row to fill the eight (a repeated row gives the same sum, stored twice).
    """
    last = nnz - 1
    for i in range(0, nnz, 8):
        j1, j2, j3 = min(i + 1, last), min(i + 2, last), min(i + 3, last)
        j4, j5, j6, j7 = min(i + 4, last), min(i + 5, last), min(i + 6, last), min(i + 7, last)
        y0, y1, y2, y3 = Yl[rws[i]], Yl[rws[j1]], Yl[rws[j2]], Yl[rws[j3]]
        y4, y5, y6, y7 = Yl[rws[j4]], Yl[rws[j5]], Yl[rws[j6]], Yl[rws[j7]]
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for k in range(d.shape[0]):
            dk = d[k]
            a0 += y0[k] * dk
            a1 += y1[k] * dk
            a2 += y2[k] * dk
            a3 += y3[k] * dk
            a4 += y4[k] * dk
            a5 += y5[k] * dk
            a6 += y6[k] * dk
            a7 += y7[k] * dk
        gs[i], gs[j1], gs[j2], gs[j3], gs[j4], gs[j5], gs[j6], gs[j7] = a0, a1, a2, a3, a4, a5, a6, a7


@jit
def _sample(Yl, row_of, q, N, n, weight, ids, rws, vs, gs, d, wf, zt, bits):
    """Phase 1 for one sample; return (J₁, nnz). Writes the support's ids (``ids[:nnz]``, increasing), d (M),
    w·f_l (``wf[:nnz]``) and w·∂J₁/∂z_{m,l} = w‖v‖⁻¹v_l(g_l − f_l fᵀg) (``zt[:nnz]``) on the support.

    ``Yl`` live rows of Y, ``q`` the query vector z_m, ``N`` counts (int) or ℙ(·|n) (float); ``rws``,
    ``vs``, ``gs``, ``bits`` scratch (rows in ``Yl``, v, g, exponent bits); every array has length M.
    """
    nnz, norm = _attention(q, N, row_of, ids, rws, vs, gs, bits)
    _logits(Yl, rws, vs, norm, nnz, d)
    J = _residual(d, n, gs, bits)
    _backprop(Yl, rws, d, nnz, gs)
    fg = 0.0
    for i in range(nnz):
        fg += vs[i] / norm * gs[i]
    for i in range(nnz):
        wf[i] = weight * (vs[i] / norm)
        zt[i] = weight * vs[i] / norm * (gs[i] - vs[i] / norm * fg)
    return J, nnz


@jit
def _draw_and_sample(i, b, Yl, Q, row_of, class_query, next_token, P, schedule, class_prob, class_alias,
                     class_base, T1, count_prob, count_alias, count_base, weight, classes, counts, ids, rws, vs, gs,
                     D, WF, ZT, bits, nnz, J):
    """Phase 1 for global sample i in slot b: draw its class (and counts), then :func:`_sample`."""
    n = sample_class(i, schedule, next_token.shape[0], class_prob, class_alias, class_base)
    classes[b] = n
    q = Q[class_query[n]]
    if T1 >= 0:
        multinomial_counts(count_prob[n], count_alias[n], T1, count_base, i * T1, counts[b])
        J[b], nnz[b] = _sample(Yl, row_of, q, counts[b], next_token[n], weight, ids[b], rws[b], vs[b], gs[b], D[b],
                               WF[b], ZT[b], bits[b])
    else:
        J[b], nnz[b] = _sample(Yl, row_of, q, P[n], next_token[n], weight, ids[b], rws[b], vs[b], gs[b], D[b],
                               WF[b], ZT[b], bits[b])


@jit
def _row(r, R, M, grad, start, entry, WF, D, ZT, classes, class_query, nnz, ids):
    """Phase 2 for live row r: Y row r (r < R) or query vector r − R, its samples' terms added in sample order."""
    g = grad[r * M:(r + 1) * M]
    for k in range(M):
        g[k] = 0.0
    if r < R:
        e, stop = start[r], start[r + 1]
        while e < stop:  # g_k = ((0 + c_1 d_{1k}) + c_2 d_{2k}) + …, samples in order; four per pass
            if e + 4 <= stop:
                b0, b1, b2, b3 = entry[e] // M, entry[e + 1] // M, entry[e + 2] // M, entry[e + 3] // M
                c0, c1 = WF[b0, entry[e] - b0 * M], WF[b1, entry[e + 1] - b1 * M]
                c2, c3 = WF[b2, entry[e + 2] - b2 * M], WF[b3, entry[e + 3] - b3 * M]
                d0, d1, d2, d3 = D[b0], D[b1], D[b2], D[b3]
                for k in range(M):
                    g[k] = (((g[k] + c0 * d0[k]) + c1 * d1[k]) + c2 * d2[k]) + c3 * d3[k]
                e += 4
            else:
                b0 = entry[e] // M
                c0, d0 = WF[b0, entry[e] - b0 * M], D[b0]
                for k in range(M):
                    g[k] += c0 * d0[k]
                e += 1
    else:
        j = r - R
        for b in range(classes.shape[0]):
            if class_query[classes[b]] == j:
                for i in range(nnz[b]):
                    g[ids[b, i]] += ZT[b, i]


@parallel_jit
def batch_gradient_kernel(theta, grad, M, row_of, rows, class_query, next_token, P, schedule, class_prob,
                          class_alias, class_base, T1, count_prob, count_alias, count_base, batch, step, objective,
                          classes, counts, ids, rws, vs, gs, D, WF, ZT, bits, nnz, J, start, entry):
    """Write the batch-mean ∇J(θ) into ``grad`` for the batch of step ``step[0]``, advance ``step``, return mean J.

    θ = (vec Y[rows], vec Q) (:class:`LiveRows`). The kernel of a :class:`numerics.train.CompiledGradient`;
    besides ``grad`` it writes the step counter ``step`` (1,), the record ``objective`` (entry ``step``
    gets the mean J when in range) and its scratch (``classes`` … ``entry``).
    """
    R = rows.shape[0]
    nq = (theta.shape[0] - R * M) // M
    Yl = theta[:R * M].reshape((R, M))
    Q = theta[R * M:].reshape((nq, M))
    s = step[0]
    weight = 1.0 / batch
    for b in prange(batch):  # phase 1: per sample
        _draw_and_sample(s * batch + b, b, Yl, Q, row_of, class_query, next_token, P, schedule, class_prob,
                         class_alias, class_base, T1, count_prob, count_alias, count_base, weight, classes, counts,
                         ids, rws, vs, gs, D, WF, ZT, bits, nnz, J)
    # the samples of every live Y row, in sample order (start: R + 1 offsets; entry: (b, i) packed as b·M + i)
    for r in range(R + 1):
        start[r] = 0
    for b in range(batch):
        for i in range(nnz[b]):
            start[row_of[ids[b, i]] + 1] += 1
    for r in range(R):
        start[r + 1] += start[r]
    for b in range(batch):
        for i in range(nnz[b]):
            r = row_of[ids[b, i]]
            entry[start[r]] = b * M + i
            start[r] += 1
    for r in range(R, 0, -1):
        start[r] = start[r - 1]
    start[0] = 0
    for r in prange(R + nq):  # phase 2: each live row gets its samples' terms in sample order
        _row(r, R, M, grad, start, entry, WF, D, ZT, classes, class_query, nnz, ids)
    total = 0.0
    for b in range(batch):
        total += J[b]
    mean = total / batch
    if s < objective.shape[0]:
        objective[s] = mean
    step[0] = s + 1
    return mean


def kernel_args(sampler: BatchSampler, live: LiveRows, *, first_step: int = 0, record: int = 0) -> tuple:
    """The extra arguments of :func:`batch_gradient_kernel`: a fresh counter (at ``first_step``), record, scratch."""
    M, B = sampler.M, sampler.batch
    class_base, count_base = sampler.bases()
    step = np.array([_integer("first_step", first_step, 0)], dtype=np.int64)
    ints = [np.zeros((B, M), dtype=np.int64) for _ in range(3)]  # counts, ids, rws
    floats = [np.zeros((B, M)) for _ in range(5)]  # vs, gs, D, WF, ZT
    bits = np.zeros((B, M), dtype=np.int64)
    return (M, live.row_of, live.rows, live.class_query, sampler.next_token, sampler.P,
            SCHEDULES.index(sampler.schedule), sampler.class_prob, sampler.class_alias, class_base, sampler.T1,
            sampler.count_prob, sampler.count_alias, count_base, B, step, np.zeros(_integer("record", record, 0)),
            np.zeros(B, dtype=np.int64), *ints, *floats, bits, np.zeros(B, dtype=np.int64), np.zeros(B),
            np.zeros(live.rows.size + 1, dtype=np.int64), np.zeros(B * M, dtype=np.int64))


#: position of the per-step record in :func:`kernel_args`
_RECORD = 16


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
    n_log = len(run.t)  # the driver's default states (one per group, flat) avoid re-validating the blocks
    run = dataclasses.replace(run, states={"Y_live": run["Y"].reshape(n_log, R, M),
                                           "Z_live": run["Z"].reshape(n_log, nq, M)})
    run = run.with_meta(batch_objective=gradient.args[_RECORD].copy())
    if states == "live":
        return run
    full0 = initial_values(M, init, seed)
    Y0, Z0 = full0[:M * M].reshape(M, M), full0[M * M:].reshape(M, M)
    Ys, Zs = [], []
    for Yrows, Q in zip(run["Y_live"], run["Z_live"], strict=True):
        Y, Z = live.expand(np.concatenate([Yrows.ravel(), Q.ravel()]), Y0, Z0)
        Ys.append(Y)
        Zs.append(Z)
    Yf, Zf = live.expand(run.meta["theta"], Y0, Z0)
    return dataclasses.replace(run, states={"Y": np.array(Ys), "Z": np.array(Zs)}).with_meta(Y=Yf, Z=Zf)
