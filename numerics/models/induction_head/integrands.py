"""Per-sequence integrands of the induction-head paper's expectations, for Monte-Carlo.

Positions are 1-based as in the paper: a batch ``X`` has shape (B, L+1), column 0 unused.
Stage II with the ideal first layer (y_s = x_{s-1}). Every kernel returns one value per
sequence (units: loss per sequence), so that ``numerics.montecarlo`` attaches a standard error.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from numerics._jit import jit, parallel_jit

@parallel_jit
def g4_loss_samples(X, p, g, alpha, last):
    """½(g* x_{L-2} - g Σ_{s=2}^{last} π_s x_{s-1})² per sequence (Eq. (7)'s integrand).

    π_s ∝ e^{-p(L-1-s)} over s = 2..``last`` (``last`` = L-1 canonical, L-2 literal).
    """
    size, width = X.shape
    L = width - 1
    gstar = alpha / (1.0 + alpha)
    count = last - 1
    weights = np.empty(count)
    top = -p * (L - 1 - last)  # the largest logit (smallest lag)
    total = 0.0
    for j in range(count):
        s = 2 + j
        weights[j] = math.exp(-p * (L - 1 - s) - top)
        total += weights[j]
    weights /= total
    out = np.empty(size)
    for b in prange(size):
        head = 0.0
        for j in range(count):
            head += weights[j] * X[b, 1 + j]  # x_{s-1} with s = 2 + j
        r = gstar * X[b, L - 2] - g * head
        out[b] = 0.5 * r * r
    return out


@parallel_jit
def ih_exp_loss_samples(X, w, h, alpha, wstar, last):
    """½(h*/(L-2) Σ_{s=2}^{L-1} e^{w*² x_L x_{s-1}} x_s - h/(L-2) Σ_{s=2}^{last} e^{w² x_L x_{s-1}} x_s)².

    The exp-simplified IH loss integrand of C.3.2 (Eq. (10)); ``last`` is the model's last index.
    """
    size, width = X.shape
    L = width - 1
    hstar = 1.0 / (1.0 + alpha)
    n = L - 2.0
    v, vstar = w * w, wstar * wstar
    out = np.empty(size)
    for b in prange(size):
        xL = X[b, L]
        target = 0.0
        model = 0.0
        for s in range(2, L):
            target += math.exp(vstar * xL * X[b, s - 1]) * X[b, s]
            if s <= last:
                model += math.exp(v * xL * X[b, s - 1]) * X[b, s]
        r = hstar * target / n - h * model / n
        out[b] = 0.5 * r * r
    return out


@parallel_jit
def ih_softmax_loss_samples(X, w, h, alpha, wstar):
    """½(h* Σ_s x_s sm(w*² x_L x_{s-1})_s - h Σ_s x_s sm(w² x_L x_{s-1})_s)² over s = 2..L-1 (true softmax)."""
    size, width = X.shape
    L = width - 1
    hstar = 1.0 / (1.0 + alpha)
    v, vstar = w * w, wstar * wstar
    out = np.empty(size)
    for b in prange(size):
        xL = X[b, L]
        top_t, top_m = -np.inf, -np.inf
        for s in range(2, L):
            top_t = max(top_t, vstar * xL * X[b, s - 1])
            top_m = max(top_m, v * xL * X[b, s - 1])
        num_t = den_t = num_m = den_m = 0.0
        for s in range(2, L):
            et = math.exp(vstar * xL * X[b, s - 1] - top_t)
            em = math.exp(v * xL * X[b, s - 1] - top_m)
            num_t += et * X[b, s]
            den_t += et
            num_m += em * X[b, s]
            den_m += em
        r = hstar * num_t / den_t - h * num_m / den_m
        out[b] = 0.5 * r * r
    return out


@jit
def lemma7_samples(XYZ, a):
    """exp(aXY)Z² per draw (Lemma 7's integrand); XYZ has shape (B, 3)."""
    out = np.empty(XYZ.shape[0])
    for b in range(XYZ.shape[0]):
        out[b] = math.exp(a * XYZ[b, 0] * XYZ[b, 1]) * XYZ[b, 2] ** 2
    return out


@jit
def coincidence_samples(U, p, first, last, L):
    """1 if two independent draws from head 1's softmax over s = first..last coincide, else 0.

    E of this indicator is ||π||² (Lemma 8); U has shape (B, 2) of uniforms for inverse-CDF draws.
    """
    count = last - first + 1
    cdf = np.empty(count)
    total = 0.0
    for j in range(count):
        total += math.exp(-p * (L - 1 - (first + j)) + p * (L - 1 - last))
        cdf[j] = total
    out = np.empty(U.shape[0])
    for b in range(U.shape[0]):
        i = np.searchsorted(cdf, U[b, 0] * total)
        k = np.searchsorted(cdf, U[b, 1] * total)
        out[b] = 1.0 if i == k else 0.0
    return out
