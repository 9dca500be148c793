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
