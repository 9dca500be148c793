"""Plain NumPy peers: what a researcher would write without tdcheck (never imported by the packages)."""

from __future__ import annotations

import numpy as np


def softmax_loss_numpy(rng: np.random.Generator, n: int, L: int, w: float, h: float, alpha: float, wstar: float,
                       chunk: int = 50_000) -> tuple[float, float]:
    """Mean and standard error of ½(h* Σ x_s sm(w*² x_L x_{s-1}) - h Σ x_s sm(w² x_L x_{s-1}))², s = 2..L-1."""
    hstar = 1 / (1 + alpha)
    total = total_sq = 0.0
    done = 0
    while done < n:
        size = min(chunk, n - done)
        X = rng.standard_normal((size, L + 1))
        X[:, 0] = 0.0
        keys, values, query = X[:, 1:L - 1], X[:, 2:L], X[:, L:L + 1]

        def attend(weight):
            logits = weight * query * keys
            logits -= logits.max(axis=1, keepdims=True)
            e = np.exp(logits)
            return (e * values).sum(axis=1) / e.sum(axis=1)

        r = hstar * attend(wstar**2) - h * attend(w**2)
        loss = 0.5 * r * r
        total += loss.sum()
        total_sq += (loss * loss).sum()
        done += size
    mean = total / n
    var = (total_sq / n - mean * mean) * n / (n - 1)
    return float(mean), float(np.sqrt(var / n))


def rl_gd_numpy(idx: np.ndarray, length: np.ndarray, y: np.ndarray, weight: np.ndarray, d: int, lam: float,
                eta: float, t0: int, steps: int, *, boost_steps: str = "t_lt_t0",
                scatter: str = "add.at") -> tuple[np.ndarray, np.ndarray]:
    """Two-phase full-batch GD of the one-layer attention model, vectorised over the samples (spec §10).

    ``idx`` (N, L_max) token indices padded beyond ``length``, labels ``y``, weights ``weight``;
    u and W start at 0; the W step is ηλ for t < t0 (``t_lt_t0``) or t <= t0 (``t_le_t0``), then η.
    ``scatter``: ``add.at`` (§10's scatter_add as ``np.add.at``) or ``bincount``. Returns (u, W).
    """
    n, width = idx.shape
    mask = np.arange(width)[None, :] < length[:, None]
    tokens = np.where(mask, idx, 0)
    q = tokens[np.arange(n), length - 1]
    rows = tokens[mask]
    cols = np.broadcast_to(q[:, None], tokens.shape)[mask]
    u, W = np.zeros(d), np.zeros((d, d))
    for t in range(steps):
        s = np.where(mask, W[tokens, q[:, None]] / lam, -np.inf)  # forward
        s -= s.max(axis=1, keepdims=True)
        e = np.exp(s)
        phi = e / e.sum(axis=1, keepdims=True)
        us = np.where(mask, u[tokens], 0.0)
        T = (phi * us).sum(axis=1)
        g = weight * (-1.0 / (1.0 + np.exp(y * T))) * y  # grads
        into_u = (g[:, None] * phi)[mask]
        into_W = (g[:, None] * phi * (us - T[:, None]) / lam)[mask]
        if scatter == "add.at":
            gu = np.zeros(d)
            np.add.at(gu, rows, into_u)
            gW = np.zeros((d, d))
            np.add.at(gW, (rows, cols), into_W)
        else:
            gu = np.bincount(rows, into_u, minlength=d)
            gW = np.bincount(rows * d + cols, into_W, minlength=d * d).reshape(d, d)
        boosted = t < t0 if boost_steps == "t_lt_t0" else t <= t0
        fW = lam if boosted else 1.0
        u = u - eta * gu
        W = W - eta * fW * gW
    return u, W
