"""PyTorch peer of the ``ih-sgd`` benchmark: Fig. 1 Stage-II online SGD of the same model (CPU, float64).

Ideal first layer (y_s = x_{s-1}), canonical ranges, Gaussian tokens drawn by torch, gradients
by autograd, plain SGD. Never imported by the tdcheck packages.
"""

from __future__ import annotations

import math


def train_stage2_torch(L: int = 40, alpha: float = 1.0, wstar: float = 0.49, sigma: float = 0.01, lr: float = 0.1,
                       batch: int = 1000, iterations: int = 200, seed: int = 0):
    """Run ``iterations`` SGD steps; return the final parameters (p, g, h, w_Q, w_K)."""
    import torch

    torch.manual_seed(seed)
    dtype = torch.float64
    gs, hs = alpha / (1 + alpha), 1 / (1 + alpha)
    theta = torch.full((5,), sigma, dtype=dtype, requires_grad=True)  # p, g, h, wq, wk
    s = torch.arange(2, L, dtype=dtype)  # positions 2..L-1
    lag = (L - 1) - s
    for _ in range(iterations):
        X = torch.randn(batch, L + 1, dtype=dtype)
        p, g, h, wq, wk = theta
        prev, vals, query = X[:, 1:L - 1], X[:, 2:L], X[:, L:L + 1]
        pi = torch.softmax(-p * lag, dim=0)
        r1 = g * (prev @ pi) - gs * X[:, L - 2]
        rho = torch.softmax(wq * wk * query * prev, dim=1)
        target = hs * (torch.softmax(wstar**2 * query * prev, dim=1) * vals).sum(1)
        r2 = h * (rho * vals).sum(1) - target
        loss = 0.5 * (r1 * r1).mean() + 0.5 * (r2 * r2).mean()
        loss.backward()
        with torch.no_grad():
            theta -= lr * theta.grad
            theta.grad.zero_()
    return [float(v) for v in theta.detach()], math.nan
