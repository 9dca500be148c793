r"""The model of Eq. (1) and its exact gradient flow (spec §2.3, §2.5, §3), on token indices.

Parameters θ = [W, W_V, W_K, W_Q] in one flat vector (:func:`layout`): W ∈ ℝ^{m₁×m} (rows w_jᵀ),
W_V, W_K, W_Q ∈ ℝ^{m×d}; a ∈ {±1}^{m₁} is fixed. A sample is ``tokens[i]`` (L indices into the one-hot
vocabulary), so W_V X is the column gather ``W_V[:, tokens[i]]``.

Compact form (``co.dv.compact_model``): u = Wᵀa, V = W_V X, K = W_K X, Q = W_Q X,
S = KᵀQ/√m (S_{hl} = k_hᵀq_l/√m, key h, query l), P = softmax over h (P_{hl} = p_{l,h}),
b = Vᵀu (= G(X)), π = P𝟏 (attention received by each key), F = bᵀπ.

Flow (``co.dv.flow_vectorised``), c_i = g(y_iF_i)y_i/n with g(x) = 1/(1 + eˣ), s̄_l = bᵀP_{:,l},
Γ_{hl} = P_{hl}(b_h − s̄_l):
Ẇ = a ⊗ Σ_i c_i V_iπ_i; Ẇ_V[:, tok_ih] += c_iπ_{ih}u; Ẇ_K[:, tok_ih] += (c_i/√m)Σ_l Γ_{i,hl}q_{il};
Ẇ_Q[:, tok_il] += (c_i/√m)Σ_h Γ_{i,hl}k_{ih} (scatter-adds: a token repeated within or across samples
accumulates).

Every function here is written for complex θ as well, so that the complex-step oracle
(:func:`numerics.differences.complex_step_gradient`) differentiates the same code; the softmax subtracts
the maximum of the real part.
"""

from __future__ import annotations

import numpy as np

from derivations.errors import InvalidArgument
from numerics.blocks import BlockLayout

BLOCKS = ("W", "WV", "WK", "WQ")


def layout(m: int, m1: int, d: int) -> BlockLayout:
    """θ = [W (m₁×m), W_V, W_K, W_Q (m×d each)]."""
    for name, value in (("m", m), ("m1", m1), ("d", d)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise InvalidArgument(f"{name} must be a positive integer; got {value!r}")
    return BlockLayout({"W": (m1, m), "WV": (m, d), "WK": (m, d), "WQ": (m, d)})


def init_params(m: int, m1: int, d: int, sigma0: float, sigma1: float, seed) -> np.ndarray:
    """θ(0) (spec §2.4): W_ij ~ 𝒩(0, σ₁²), (W_V, W_K, W_Q)_ij ~ 𝒩(0, σ₀²), all independent; blocks drawn in
    the order W, W_V, W_K, W_Q from one ``SeedSequence(seed)`` stream."""
    if not (sigma0 > 0 and sigma1 > 0):
        raise InvalidArgument(f"sigma0 and sigma1 must be > 0; got sigma0={sigma0!r}, sigma1={sigma1!r}")
    lay = layout(m, m1, d)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    blocks = {"W": rng.normal(0.0, sigma1, (m1, m))}
    for name in ("WV", "WK", "WQ"):
        blocks[name] = rng.normal(0.0, sigma0, (m, d))
    return lay.pack(blocks)


def output_weights(m1: int, seed, fixed=None) -> np.ndarray:
    """a ∈ {±1}^{m₁}: ``fixed`` when given (the harness's (+1, −1, +1, −1)), else Uniform(±1) redrawn until
    both signs occur (spec §2.8, harness seeds other than 0)."""
    if fixed is not None:
        a = np.asarray(fixed, dtype=float)
        if a.shape != (m1,) or not np.all(np.abs(a) == 1):
            raise InvalidArgument(f"fixed output weights must be m1={m1} values in {{+1, −1}}; got {fixed!r}")
        return a
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    while True:
        a = rng.choice([-1.0, 1.0], size=m1)
        if m1 == 1 or (np.any(a > 0) and np.any(a < 0)):
            return a


def _gather(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray):
    """(W, V, K, Q) with V, K, Q of shape (n, m, L): the columns of the samples' tokens."""
    views = lay.views(theta)
    return views["W"], views["WV"][:, tokens].transpose(1, 0, 2), views["WK"][:, tokens].transpose(1, 0, 2), \
        views["WQ"][:, tokens].transpose(1, 0, 2)


def _softmax_keys(S: np.ndarray) -> np.ndarray:
    """Softmax over the key axis (axis −2) of S (n, L, L), the maximum of the real part subtracted."""
    shifted = S - np.max(S.real, axis=-2, keepdims=True)
    E = np.exp(shifted)
    return E / np.sum(E, axis=-2, keepdims=True)


def forward(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, a: np.ndarray) -> dict[str, np.ndarray]:
    """Compact form of Eq. (1) for every sample: u, V, K, Q, P, b = G(X), π and F (module docstring)."""
    tokens = np.asarray(tokens)
    m = lay.shapes["WV"][0]
    W, V, K, Q = _gather(theta, lay, tokens)
    u = W.T @ a
    S = np.einsum("nmh,nml->nhl", K, Q) / np.sqrt(m)
    P = _softmax_keys(S)
    b = np.einsum("nmh,m->nh", V, u)
    pi = P.sum(axis=2)
    return {"u": u, "V": V, "K": K, "Q": Q, "P": P, "b": b, "pi": pi, "F": np.einsum("nh,nh->n", b, pi)}


def output(theta, lay, tokens, a) -> np.ndarray:
    """F(X⁽ⁱ⁾) for every sample (compact form)."""
    return forward(theta, lay, tokens, a)["F"]


def output_literal(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Eq. (1) literally, with dense one-hot X ∈ ℝ^{d×L}: Σ_l Σ_j a_j w_jᵀW_VX·Softmax(XᵀW_KᵀW_Qx_l/√m)."""
    views = lay.views(theta)
    W, WV, WK, WQ = views["W"], views["WV"], views["WK"], views["WQ"]
    m, d = WV.shape
    out = []
    for sample in np.asarray(tokens):
        X = np.zeros((d, sample.size))
        X[sample, np.arange(sample.size)] = 1.0
        total = 0
        for l in range(sample.size):
            scores = X.T @ WK.T @ WQ @ X[:, l] / np.sqrt(m)
            weights = np.exp(scores - np.max(scores.real))
            p = weights / weights.sum()
            total = total + sum(a[j] * (W[j] @ WV @ X @ p) for j in range(W.shape[0]))
        out.append(total)
    return np.array(out)


def logistic_loss(margin: np.ndarray) -> np.ndarray:
    """l(x) = log(1 + e^{−x}) without overflow, for real or complex x (branch on the real part)."""
    margin = np.asarray(margin)
    positive = margin.real >= 0
    out = np.empty_like(margin, dtype=np.result_type(margin, float))
    out[positive] = np.log1p(np.exp(-margin[positive]))
    out[~positive] = -margin[~positive] + np.log1p(np.exp(margin[~positive]))
    return out


def g_weight(margin: np.ndarray) -> np.ndarray:
    """g(x) = 1/(1 + eˣ) = −l'(x), without overflow."""
    margin = np.asarray(margin, dtype=float)
    out = np.empty_like(margin)
    positive = margin >= 0
    e = np.exp(-margin[positive])
    out[positive] = e / (1.0 + e)
    out[~positive] = 1.0 / (1.0 + np.exp(margin[~positive]))
    return out


def loss(theta, lay, tokens, labels, a) -> complex | float:
    """L̂ = (1/n)Σ_i l(y_iF_i) (Eq. (2))."""
    return np.mean(logistic_loss(np.asarray(labels) * output(theta, lay, tokens, a)))


def flow(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, labels: np.ndarray, a: np.ndarray,
         trainable=BLOCKS) -> np.ndarray:
    """θ̇ = −∇L̂ by the vectorised formulas of ``co.dv.flow_vectorised`` (module docstring); blocks not in
    ``trainable`` get 0."""
    tokens, labels = np.asarray(tokens), np.asarray(labels, dtype=float)
    f = forward(theta, lay, tokens, a)
    m = lay.shapes["WV"][0]
    n = tokens.shape[0]
    c = g_weight(labels * f["F"]) * labels / n
    out = np.zeros(lay.size)
    views = lay.views(out)
    P, b, pi, K, Q, V = f["P"], f["b"], f["pi"], f["K"], f["Q"], f["V"]
    if "W" in trainable:
        views["W"][:] = np.outer(a, np.einsum("n,nmh,nh->m", c, V, pi))
    if "WV" in trainable:
        np.add.at(views["WV"].T, tokens.reshape(-1), (c[:, None] * pi).reshape(-1)[:, None] * f["u"][None, :])
    if {"WK", "WQ"} & set(trainable):
        s_bar = np.einsum("nh,nhl->nl", b, P)
        Gamma = P * (b[:, :, None] - s_bar[:, None, :]) * (c / np.sqrt(m))[:, None, None]
        if "WK" in trainable:
            np.add.at(views["WK"].T, tokens.reshape(-1), np.einsum("nhl,nml->nhm", Gamma, Q).reshape(-1, m))
        if "WQ" in trainable:
            np.add.at(views["WQ"].T, tokens.reshape(-1), np.einsum("nhl,nmh->nlm", Gamma, K).reshape(-1, m))
    return out
