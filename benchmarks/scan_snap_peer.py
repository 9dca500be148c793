"""NumPy peers of the "Scan and Snap" SGD (spec §10 ``batch_grads`` and its momentum update), over the batch.

Both draw the batches of :class:`numerics.models.scan_snap.sgd.BatchSampler` (the classes and counts
the kernel draws, from the same counter-based streams) and start from the same θ(0), so they do the
same work as ``train_ss``; only the arithmetic differs.

* ``exact=False`` — what a researcher would write: ``np.exp``, matrix products (BLAS) and ``np.sum``.
  Agrees with the kernel to rounding.
* ``exact=True`` — the same algorithm with every floating-point operation in the kernel's order, so a
  run equals ``train_ss`` bit for bit (SGD and momentum). What that takes: (1) sums in the kernel's
  order — ``np.add.accumulate`` (sequential by definition) for sums within a sample, loops over the
  summed index for Yᵀf and Yd, a loop over the samples for the batch sums; (2) the kernel's exp
  (:func:`exp_nonpositive`, the same formula in NumPy) and the C library's ``log`` (NumPy's SIMD
  ``np.log`` / ``np.exp`` differ from the C library's in the last bit for ≈0.03 % / 5 % of arguments
  on AVX-512 machines, measured on 10⁶ arguments; numba calls the C library). Its Python loops over
  the vocabulary make it slow; it is a peer to show what bit-identity costs in NumPy.

The ascent updates are §10's: buf ← μ·buf + ∇J (buf ← ∇J at the first step), θ ← θ + η·buf; SGD
θ ← θ + η∇J; Adam with PyTorch's defaults. They equal the driver's PyTorch ``maximize`` updates exactly
(negation commutes with rounding).
"""

from __future__ import annotations

import math

import numpy as np

from numerics.models.scan_snap.data import Layout, synmedium
from numerics.models.scan_snap.sgd import EXP_P, INV_LN2, LN2_HI, LN2_LO, BatchSampler, initial_values
from numerics.optim import ADAM_DEFAULTS

_libm_log = np.frompyfunc(math.log, 1, 1)


def exp_nonpositive(x: np.ndarray, shift) -> np.ndarray:
    """The kernel's e^{x − shift} for x <= shift (``numerics.models.scan_snap.sgd.exp_nonpositive``), the same
    operations."""
    x = np.maximum(x - shift, -746.0)
    k = (x * INV_LN2 - 0.5).astype(np.int64)  # truncation toward zero, as the kernel's int conversion
    fk = k.astype(np.float64)
    hi = x - fk * LN2_HI
    lo = fk * LN2_LO
    r = hi - lo
    t = r * r
    p1, p2, p3, p4, p5 = EXP_P
    c = r - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))))
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
    return y * ((k + 2023) << 52).view(np.float64) * 2.0**-1000


def libm_log(x: np.ndarray) -> np.ndarray:
    """log of the C library (as numba's ``math.log``), elementwise."""
    return _libm_log(x).astype(np.float64)


def synmedium_layout(num_last: int, num_next_per_last: int = 2) -> Layout:
    """Syn-Medium's layout: :func:`numerics.models.scan_snap.data.synmedium`."""
    return synmedium(num_last, num_next_per_last)


def _seqsum(a: np.ndarray) -> np.ndarray:
    """Σ along the last axis, left to right (``add.accumulate`` is sequential by definition)."""
    return np.add.accumulate(a, axis=-1)[..., -1]


def _attention(Z, sampler, classes, counts, key_query, exp):
    """(W, support, m, n): W = N∘e^{z_m − top} (top over the support), rows of (B, M); v = W/ΣW."""
    m = sampler.psi[classes]
    N = sampler.P[classes] if counts is None else counts
    z = Z[:, m].T if key_query else Z[m]
    support = N > 0
    top = np.where(support, z, -np.inf).max(axis=1)
    W = np.zeros(z.shape)
    W[support] = N[support] * exp(z[support], np.broadcast_to(top[:, None], z.shape)[support])
    return W, support, m, sampler.next_token[classes]


def batch_gradient_exact(Y, Z, sampler: BatchSampler, classes, counts, key_query=False):
    """(mean J, ∂J/∂Y, ∂J/∂Z) of the batch in the kernel's order of operations (module docstring)."""
    B, M = classes.size, Y.shape[0]
    W, support, m, n = _attention(Z, sampler, classes, counts, key_query, exp_nonpositive)
    V = W / _seqsum(W)[:, None]
    norm = np.sqrt(_seqsum(V * V))
    F = V / norm[:, None]
    O = np.zeros((B, M))
    for l in np.flatnonzero(support.any(axis=0)):  # o_k = Σ_l Y_lk f_l, l increasing (zero f_l add ±0)
        O += Y[l][None, :] * F[:, l, None]
    top = O.max(axis=1)
    E = exp_nonpositive(O, top[:, None])
    total = _seqsum(E)
    rows = np.arange(B)
    onehot = np.zeros((B, M))
    onehot[rows, n] = 1.0
    D = onehot - E / total[:, None]
    G = np.zeros((B, M))
    for k in range(M):  # g_l = Σ_k Y_lk d_k, k increasing
        G += Y[:, k][None, :] * D[:, k, None]
    fg = _seqsum(F * G)
    w = 1.0 / B
    WF = w * F
    ZT = np.where(support, w * V / norm[:, None] * (G - V / norm[:, None] * fg[:, None]), 0.0)
    gY, gZrows = np.zeros((M, M)), np.zeros((M, M))
    for b in range(B):  # every row gets its samples' terms in sample order
        live = np.flatnonzero(WF[b] != 0.0)
        gY[live] += WF[b, live][:, None] * D[b][None, :]
        gZrows[m[b]] += ZT[b]
    J = (O[rows, n] - top) - libm_log(total)
    return float(J.mean()), gY, (gZrows.T if key_query else gZrows)


def batch_gradient_numpy(Y, Z, sampler: BatchSampler, classes, counts, key_query=False):
    """(mean J, ∂J/∂Y, ∂J/∂Z) of the batch, plain vectorised NumPy (§10 ``batch_grads`` over the batch)."""
    B, M = classes.size, Y.shape[0]
    W, _, m, n = _attention(Z, sampler, classes, counts, key_query, lambda x, shift: np.exp(x - shift))
    V = W / W.sum(axis=1, keepdims=True)
    norm = np.linalg.norm(V, axis=1, keepdims=True)
    F = V / norm
    O = F @ Y
    O -= O.max(axis=1, keepdims=True)
    log_total = np.log(np.exp(O).sum(axis=1, keepdims=True))
    D = -np.exp(O - log_total)
    rows = np.arange(B)
    D[rows, n] += 1.0
    G = D @ Y.T
    gzrows = V * (G - F * np.sum(F * G, axis=1, keepdims=True)) / norm
    gZrows = np.zeros((M, M))
    for query in np.unique(m):  # a few last tokens: one masked sum each (3× faster than np.add.at here)
        gZrows[query] = gzrows[m == query].sum(axis=0)
    J = O[rows, n] - log_total[:, 0]
    return float(J.mean()), (F.T @ D) / B, (gZrows.T if key_query else gZrows) / B


def train_reference(layout, *, T, batch: int, steps: int, etaY: float, etaZ: float, optimizer: str = "momentum",
                    momentum: float = 0.9, init: str = "zero", seed=0, class_schedule: str = "iid_uniform",
                    key_query: bool = False, exact: bool = True) -> dict:
    """The run of ``train_ss`` with the same arguments, in NumPy: final ``Y``, ``Z``, per-step ``objective``."""
    sampler = BatchSampler.build(layout, T=T, batch=batch, seed=seed, class_schedule=class_schedule)
    M = sampler.M
    theta = initial_values(M, init, seed)
    Y, Z = theta[:M * M].reshape(M, M).copy(), theta[M * M:].reshape(M, M).copy()
    gradient = batch_gradient_exact if exact else batch_gradient_numpy
    bufY, bufZ = np.zeros((M, M)), np.zeros((M, M))
    vY, vZ = np.zeros((M, M)), np.zeros((M, M))
    beta1, beta2, eps = ADAM_DEFAULTS
    objective = np.empty(steps)
    for step in range(steps):
        classes, counts = sampler.draw(step)
        objective[step], gY, gZ = gradient(Y, Z, sampler, classes, counts, key_query)
        if optimizer == "sgd":
            Y, Z = Y + etaY * gY, Z + etaZ * gZ
        elif optimizer == "momentum":
            bufY, bufZ = (gY, gZ) if step == 0 else (momentum * bufY + gY, momentum * bufZ + gZ)
            Y, Z = Y + etaY * bufY, Z + etaZ * bufZ
        else:  # Adam (PyTorch's formulas, bias-corrected)
            t = float(step + 1)
            c1, c2 = 1.0 - beta1**t, 1.0 - beta2**t
            bufY = beta1 * bufY + (1.0 - beta1) * gY
            bufZ = beta1 * bufZ + (1.0 - beta1) * gZ
            vY = beta2 * vY + (1.0 - beta2) * gY * gY
            vZ = beta2 * vZ + (1.0 - beta2) * gZ * gZ
            Y = Y + etaY * (bufY / c1) / (np.sqrt(vY / c2) + eps)
            Z = Z + etaZ * (bufZ / c1) / (np.sqrt(vZ / c2) + eps)
    return {"Y": Y, "Z": Z, "objective": objective}
