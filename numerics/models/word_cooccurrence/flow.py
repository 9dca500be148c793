r"""The exact gradient flow of Eq. (1) as a numba vector field for the core integrator (spec §3, §9).

State y = θ in the layout of :func:`numerics.models.word_cooccurrence.model.layout` (W, W_V, W_K, W_Q,
row-major). Parameters ``p = (scalars, tokens, labels, a, dims)``: ``scalars`` = [1/√m]; ``tokens`` (n, L)
int64; ``labels`` (n,) ±1.0; ``a`` (m₁,); ``dims`` = [m, m₁, d, trainable K/Q (0 or 1)].

The right-hand side is :func:`numerics.models.word_cooccurrence.model.flow` (``co.dv.flow_vectorised``) in two
parallel passes, so that no two threads write one entry and the result does not depend on the thread count:

1. over samples i: scores s_{hl} = k_hᵀq_l/√m, attention P, b = Vᵀu, π, F_i, c_i = g(y_iF_i)y_i/n and
   Γ_{hl} = c_iP_{hl}(b_h − s̄_l)/√m;
2. over the m rows r of the matrices: Ẇ_V[r, tok_ih] += c_iπ_ih u_r, Ẇ_K[r, tok_ih] += Σ_l Γ_{hl} W_Q[r, tok_il],
   Ẇ_Q[r, tok_il] += Σ_h Γ_{hl} W_K[r, tok_ih], Ẇ[j, r] = a_j Σ_i c_i Σ_h W_V[r, tok_ih]π_ih (samples in order).

:func:`observe_flow` records the observables of a run (loss, U, G(μ₁..₃), the group sums A, B₂, B₃, B₄, the
smallest margin and the two conserved differences of ``co.dv.conservation``) instead of the 10⁵–10⁶ states.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from numerics._jit import jit, parallel_jit
from numerics.blocks import BlockLayout
from numerics.ode import VectorField
from numerics.stable import logistic_loss, logistic_weight

#: names of :func:`observe_flow`'s values
OBSERVED = ("loss", "U", "G1", "G2", "G3", "A", "B2", "B3", "B4", "min_margin", "value_balance",
            "attention_balance", "F_abs_max")


@jit
def _u(y, a, m, m1):
    u = np.zeros(m)
    for j in range(m1):
        for r in range(m):
            u[r] += a[j] * y[j * m + r]
    return u


#: samples are handed to threads in this many blocks; each block allocates its scratch once
CHUNKS = 64


@parallel_jit
def _samples(y, tokens, labels, u, m, m1, d, inv_sqrt_m, F, pi, gamma):
    """Pass 1 (over samples, in blocks): F_i, c_iπ_i (n, L) and Γ_i (n, L, L) scaled by c_i/√m.

    A sample's token columns of W_V, W_K, W_Q are gathered once into contiguous rows (they are strided by d
    in the row-major m×d matrices), then its L² scores are contiguous dot products."""
    n, L = tokens.shape
    oV, oK = m1 * m, m1 * m + m * d
    oQ = oK + m * d
    blocks = min(CHUNKS, n)
    for block in prange(blocks):
        S = np.empty((L, L))
        b = np.empty(L)
        Kc = np.empty((L, m))
        Qc = np.empty((L, m))
        for i in range(block * n // blocks, (block + 1) * n // blocks):
            for h in range(L):
                th = tokens[i, h]
                acc = 0.0
                for r in range(m):
                    acc += u[r] * y[oV + r * d + th]
                    Kc[h, r] = y[oK + r * d + th]
                    Qc[h, r] = y[oQ + r * d + th]
                b[h] = acc
            for h in range(L):
                for l in range(L):
                    acc = 0.0
                    for r in range(m):
                        acc += Kc[h, r] * Qc[l, r]
                    S[h, l] = acc * inv_sqrt_m
            for h in range(L):
                pi[i, h] = 0.0
            for l in range(L):
                top = S[0, l]
                for h in range(1, L):
                    top = max(top, S[h, l])
                total = 0.0
                for h in range(L):
                    S[h, l] = math.exp(S[h, l] - top)
                    total += S[h, l]
                for h in range(L):
                    S[h, l] /= total
                    pi[i, h] += S[h, l]
            value = 0.0
            for h in range(L):
                value += b[h] * pi[i, h]
            F[i] = value
            c = logistic_weight(labels[i] * value) * labels[i] / n
            for l in range(L):
                s_bar = 0.0
                for h in range(L):
                    s_bar += b[h] * S[h, l]
                for h in range(L):
                    gamma[i, h, l] = c * S[h, l] * (b[h] - s_bar) * inv_sqrt_m
            for h in range(L):  # c_iπ_i for the value pass
                pi[i, h] *= c


@parallel_jit
def _rows(y, tokens, a, u, m, m1, d, train_kq, pi_c, gamma, out):
    """Pass 2 (over rows r of the m×d matrices and of Wᵀ): scatter-adds in sample order."""
    n, L = tokens.shape
    oV, oK = m1 * m, m1 * m + m * d
    oQ = oK + m * d
    for r in prange(m):
        for col in range(d):
            out[oV + r * d + col] = 0.0
            out[oK + r * d + col] = 0.0
            out[oQ + r * d + col] = 0.0
        acc_w = 0.0
        for i in range(n):
            for h in range(L):
                th = tokens[i, h]
                out[oV + r * d + th] += pi_c[i, h] * u[r]
                acc_w += pi_c[i, h] * y[oV + r * d + th]
                if train_kq:
                    k_acc = 0.0
                    q_acc = 0.0
                    for l in range(L):
                        tl = tokens[i, l]
                        k_acc += gamma[i, h, l] * y[oQ + r * d + tl]
                        q_acc += gamma[i, l, h] * y[oK + r * d + tl]
                    out[oK + r * d + th] += k_acc
                    out[oQ + r * d + th] += q_acc
        for j in range(m1):
            out[j * m + r] = a[j] * acc_w


@jit
def _pass1(y, p):
    """(u = Wᵀa, F, c_iπ_i, Γ) at state y: the first pass, shared by the field, its observer and its event."""
    tokens, labels, a, dims = p[1], p[2], p[3], p[4]
    m, m1, d = dims[0], dims[1], dims[2]
    n, L = tokens.shape
    u = _u(y, a, m, m1)
    F = np.empty(n)
    pi_c = np.empty((n, L))
    gamma = np.empty((n, L, L))
    _samples(y, tokens, labels, u, m, m1, d, p[0][0], F, pi_c, gamma)
    return u, F, pi_c, gamma


@jit
def co_flow(t, y, p, out):
    """θ̇ = −∇L̂ (module docstring); ``p = (scalars, tokens, labels, a, dims)``."""
    u, F, pi_c, gamma = _pass1(y, p)
    dims = p[4]
    _rows(y, p[1], p[3], u, dims[0], dims[1], dims[2], dims[3] == 1, pi_c, gamma, out)


@jit
def observe_flow(t, y, p, out):
    """The observables of :data:`OBSERVED` at state y."""
    tokens, labels, dims = p[1], p[2], p[4]
    m, m1, d = dims[0], dims[1], dims[2]
    n, L = tokens.shape
    u, F, pi_c, gamma = _pass1(y, p)
    oV, oK = m1 * m, m1 * m + m * d
    oQ = oK + m * d
    loss = 0.0
    sums = np.zeros(4)
    smallest = math.inf
    largest = 0.0
    for i in range(n):
        margin = labels[i] * F[i]
        loss += logistic_loss(margin)
        smallest = min(smallest, margin)
        largest = max(largest, abs(F[i]))
        # groups by labels and the targets present (tokens 0, 1 are μ₁, μ₂)
        has1 = False
        has2 = False
        for h in range(L):
            has1 = has1 or tokens[i, h] == 0
            has2 = has2 or tokens[i, h] == 1
        group = 0 if (has1 and has2) else (1 if has1 else (2 if has2 else 3))
        sums[group] += logistic_weight(margin)
    U = 0.0
    for r in range(m):
        U += u[r] * u[r]
    out[0] = loss / n
    out[1] = U
    for k in range(3):
        acc = 0.0
        for r in range(m):
            acc += u[r] * y[oV + r * d + k]
        out[2 + k] = acc
    for k in range(4):
        out[5 + k] = sums[k]
    out[9] = smallest
    w2 = 0.0
    for k in range(m1 * m):
        w2 += y[k] * y[k]
    v2 = 0.0
    k2 = 0.0
    q2 = 0.0
    for k in range(m * d):
        v2 += y[oV + k] * y[oV + k]
        k2 += y[oK + k] * y[oK + k]
        q2 += y[oQ + k] * y[oQ + k]
    out[10] = w2 - v2
    out[11] = k2 - q2
    out[12] = largest


@jit
def all_correct(t, y, p, event_times, event_states, out):
    """Event ``all_correct``: min_i y_iF_i, which crosses 0 upward at T₁^emp (spec §2.7)."""
    labels = p[2]
    F = _pass1(y, p)[1]
    smallest = math.inf
    for i in range(labels.shape[0]):
        smallest = min(smallest, labels[i] * F[i])
    out[0] = smallest


def flow_field(lay: BlockLayout, stop_when_all_correct: bool = False) -> VectorField:
    """The vector field of θ for layout ``lay`` (W, W_V, W_K, W_Q), with :func:`observe_flow` as its observer and
    the event ``all_correct`` (T₁^emp; terminal when ``stop_when_all_correct``)."""
    return VectorField(co_flow, lay.size, all_correct, ("all_correct",), (1,), (stop_when_all_correct,),
                       observe=observe_flow, n_observed=len(OBSERVED), observed_names=OBSERVED)


def flow_params(lay: BlockLayout, tokens, labels, a, train_kq: bool = True) -> tuple:
    """``p`` of :func:`co_flow` for a data set (tokens (n, L), labels ±1) and output weights a."""
    m, d = lay.shapes["WV"]
    m1 = lay.shapes["W"][0]
    return (np.array([1.0 / math.sqrt(m)]), np.ascontiguousarray(tokens, dtype=np.int64),
            np.ascontiguousarray(labels, dtype=np.float64), np.ascontiguousarray(a, dtype=np.float64),
            np.array([m, m1, d, int(train_kq)], dtype=np.int64))
