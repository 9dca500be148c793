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
from numerics.stable import softmax_weights

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


#: sequences per task of the chunked kernels below (scratch buffers are allocated once per chunk)
_CHUNK = 64
#: the controls of ``controls`` vanish for |x_L| above this (keeps all their moments finite)
CONTROL_CUT = 5.0


@jit
def attend_previous(x, L, scale, weights):
    """The IH read-out Σ_{s=2}^{L−1} x_s e_s with e_s = e^{scale·x_{s−1} − top}; returns (Σ x_s e_s, Σ e_s, top).

    ``scale`` is the logit factor w²·x_L (so the softmax of Eq. (2) is e_s/Σe), ``top`` the largest
    logit, ``weights`` scratch of length ≥ L−2 that receives the e_s (index s−2).
    """
    total, top = softmax_weights(scale, x, 1, L - 2, weights)  # keys x_{s−1}, s = 2..L−1
    num = 0.0
    for j in range(L - 2):
        num += weights[j] * x[j + 2]
    return num, total, top


@parallel_jit
def _ih_softmax_kernel(X, w, h, alpha, wstar, with_controls, boolean):
    """Per sequence: the true-softmax IH loss and (if ``with_controls``) the two controls of
    :mod:`numerics.models.induction_head.controls`, as columns of an (n, 3) array (else (n, 1)).
    ``boolean``: tokens are ±1, so the controls' weights are normalised by cosh, not e^{c²/2}."""
    size, width = X.shape
    L = width - 1
    hstar = 1.0 / (1.0 + alpha)
    a, a_star = w * w, wstar * wstar
    n = L - 2.0
    out = np.empty((size, 3 if with_controls else 1))
    for c in prange((size + _CHUNK - 1) // _CHUNK):
        e_t = np.empty(L)
        e_m = np.empty(L)
        for b in range(c * _CHUNK, min(size, (c + 1) * _CHUNK)):
            x = X[b]
            xL = x[L]
            num_t, z_t, top_t = attend_previous(x, L, a_star * xL, e_t)
            num_m, z_m, top_m = attend_previous(x, L, a * xL, e_m)
            r = hstar * num_t / z_t - h * num_m / z_m
            out[b, 0] = 0.5 * r * r
            if with_controls and abs(xL) > CONTROL_CUT:
                out[b, 1] = out[b, 2] = 0.0
            elif with_controls:
                # N, D of the controls: the weights rescaled so that E[e_s | x_L] = 1
                log_mean_t = math.log(math.cosh(a_star * xL)) if boolean else 0.5 * (a_star * xL) ** 2
                log_mean_m = math.log(math.cosh(a * xL)) if boolean else 0.5 * (a * xL) ** 2
                scale_t = math.exp(top_t - log_mean_t) / n
                scale_m = math.exp(top_m - log_mean_m) / n
                n_t, d_t, n_m, d_m = num_t * scale_t, z_t * scale_t, num_m * scale_m, z_m * scale_m
                u = hstar * n_t - h * n_m
                v = hstar * n_t * (2.0 - d_t) - h * n_m * (2.0 - d_m)
                out[b, 1] = 0.5 * u * u
                out[b, 2] = 0.5 * v * v
    return out


def ih_softmax_loss_samples(X, w, h, alpha, wstar):
    """½(h* Σ_s x_s sm(w*² x_L x_{s-1})_s - h Σ_s x_s sm(w² x_L x_{s-1})_s)² over s = 2..L-1 (true softmax)."""
    return _ih_softmax_kernel(X, float(w), float(h), float(alpha), float(wstar), False, False)[:, 0]


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
