"""The regular-language loss as an analytic function of complex parameters, for complex-step derivatives.

Same model as :mod:`.model` (token indices ``idx``, query = last token, row of W = key token)::

    s_ℓ = W[i_ℓ, i_L]/λ,   φ = softmax(s),   T = Σ_ℓ φ_ℓ u[i_ℓ],   L = Σ_n weight_n J(y_n T_n),

written in vectorised NumPy with complex dtype, independently of the numba kernels: the softmax
subtracts the largest *real part* of each sample's scores (a constant shift, so the value is
unchanged and the function stays analytic), and J(z) = log(1 + e^{−z}) is taken as log1p(e^{−z})
where Re z >= 0 and −z + log1p(e^{z}) elsewhere (two analytic branches that agree on their
overlap). With :func:`numerics.differences.complex_step_gradient` it gives ∇L to rounding in
every coordinate (the ``gradients against complex-step`` check of the model's analytic kernel).
"""

from __future__ import annotations

import numpy as np

from derivations.errors import InvalidArgument
from numerics.models.regular_language.data import PAD, RLData
from numerics.models.regular_language.model import positive_real


def loss_analytic(data: RLData, theta: np.ndarray, lam: float) -> complex:
    """L(θ) for complex θ in the flat layout θ = [u (d), W row-major (d²)] (:data:`.model.LAYOUT`)."""
    lam = positive_real("lam", lam, "the softmax temperature λ")
    d = data.dim
    theta = np.asarray(theta)
    if theta.shape != (d + d * d,):
        msg = f"theta must have shape ({d + d * d},) = (d + d²,) for d = {d}; got {theta.shape}"
        raise InvalidArgument(msg)
    u, W = theta[:d], theta[d:].reshape(d, d)
    rows = np.arange(data.n)
    present = data.idx != PAD
    keys = np.where(present, data.idx, 0)
    query = data.idx[rows, data.length - 1]
    scores = W[keys, query[:, None]] / lam
    top = np.max(np.where(present, scores.real, -np.inf), axis=1)
    weights = np.where(present, np.exp(scores - top[:, None]), 0)
    T = np.sum(weights * u[keys], axis=1) / np.sum(weights, axis=1)
    z = data.y * T
    right = z.real >= 0
    J = np.where(right, np.log1p(np.exp(np.where(right, -z, 0))), -z + np.log1p(np.exp(np.where(right, 0, z))))
    return complex(np.sum(data.weight * J))
