r"""The rates ∂(a_jw_jᵀW_Vμ)/∂t of every neuron j and token μ, split as in Lemma C.1 (spec §4, §6.2).

With c_i = g(y_iF_i)y_i/n, π_ih = Σ_l p_{l,h} and s_μ = Σ_i c_i Σ_{h: x_ih = μ} π_ih (the attention mass on μ,
zero for a token no sample holds), the flow gives ẇ_j = a_j z with z = Σ_i c_i Σ_h π_ih W_V[:, x_ih] = W_V s, and
Ẇ_Vμ = s_μ u with u = Wᵀa. Hence, with v_μ = W_Vμ,

    D_jμ := ∂(a_jw_jᵀv_μ)/∂t = a_j(ẇ_jᵀv_μ + w_jᵀẆ_Vμ) = zᵀv_μ + a_js_μ w_jᵀu,

and Lemma C.1's split (L1331–L1345, multiplied by a_j, a_j² = 1) is D = main + ε₁ + ε₂ with

    main_jμ = (‖w_j‖² + ‖v_μ‖²) s_μ,
    ε₁_jμ  = a_j s_μ Σ_{j₂≠j} a_{j₂}⟨w_j, w_{j₂}⟩,
    ε₂_jμ  = zᵀv_μ − s_μ‖v_μ‖² = Σ_i c_i Σ_{h: x_ih ≠ μ} π_ih⟨v_{x_ih}, v_μ⟩.

At F = 0 and uniform attention (π_ih = 1), s_μ is s⁰_μ = Σ_{i∋μ} y_i/(2n) (g(0) = ½), and since
|g(x) − ½| = |tanh(x/2)|/2 <= |x|/4, |s_μ − s⁰_μ| <= (1/n)Σ_{i, h: x_ih = μ}(|F_i|π_ih/4 + |π_ih − 1|/2) =: b_μ.
To first order in F, s_μ ≈ (1/n)Σ_{i, h: x_ih = μ}(y_i/2 − F_i/4)π_ih; its output term o_μ = −(1/(4n))Σ_{i, h: x_ih = μ}F_iπ_ih has mean 0
over the initialization exactly (W → −W leaves the law, π and y unchanged and flips F), a control variate.

Every quantity is O(md): the m × d matrices are touched once. :func:`rates_by_chain_rule` is the second method:
the numba flow's θ̇ pushed through the observable by one complex step (Oracle 1's chain rule).
"""

from __future__ import annotations

import numpy as np

from numerics.blocks import BlockLayout
from numerics.differences import directional_derivative
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.flow import co_flow, flow_params


def value_rates(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, labels: np.ndarray,
                a: np.ndarray) -> dict[str, np.ndarray]:
    """D, main, ε₁, ε₂ (each m₁ × d), s, s⁰, b, the output term o (d), ‖w_j‖² (m₁), ‖v_μ‖² (d), the cross sums
    Σ_{j₂≠j}a_{j₂}⟨w_j, w_{j₂}⟩ (m₁) and the outputs F (n) at θ (module docstring)."""
    tokens, labels = np.asarray(tokens), np.asarray(labels, dtype=float)
    views = lay.views(theta)
    W, WV = views["W"], views["WV"]
    f = Mo.forward(theta, lay, tokens, a)
    c = Mo.g_weight(labels * f["F"]) * labels / tokens.shape[0]
    n, d = tokens.shape[0], WV.shape[1]
    s, s_zero, s_bound, s_output = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
    np.add.at(s, tokens.reshape(-1), (c[:, None] * f["pi"]).reshape(-1))
    np.add.at(s_zero, tokens.reshape(-1), np.repeat(labels / (2 * n), tokens.shape[1]))
    np.add.at(s_output, tokens.reshape(-1), (-f["F"][:, None] * f["pi"] / (4 * n)).reshape(-1))
    np.add.at(s_bound, tokens.reshape(-1),
              ((np.abs(f["F"])[:, None] * f["pi"] / 4 + np.abs(f["pi"] - 1) / 2) / n).reshape(-1))
    z = WV @ s
    u = f["u"]
    w_norm2 = np.einsum("jr,jr->j", W, W)
    v_norm2 = np.einsum("rk,rk->k", WV, WV)
    Wu = W @ u
    cross = Wu - a * w_norm2
    zv = WV.T @ z
    main = (w_norm2[:, None] + v_norm2[None, :]) * s[None, :]
    eps1 = (a * cross)[:, None] * s[None, :]
    eps2 = np.broadcast_to(zv - s * v_norm2, main.shape).copy()
    D = zv[None, :] + (a * Wu)[:, None] * s[None, :]
    return {"D": D, "main": main, "eps1": eps1, "eps2": eps2, "s": s, "s_zero": s_zero, "s_bound": s_bound,
            "s_output_term": s_output, "w_norm2": w_norm2, "v_norm2": v_norm2, "cross": cross, "F": f["F"]}


def rates_by_chain_rule(theta: np.ndarray, lay: BlockLayout, tokens: np.ndarray, labels: np.ndarray,
                        a: np.ndarray) -> np.ndarray:
    """D (m₁ × d) from the numba flow's θ̇ = −∇L̂ and one complex step of Q(θ) = diag(a)·W·W_V along it."""
    theta_dot = np.zeros(lay.size)
    co_flow(0.0, theta, flow_params(lay, tokens, labels, a), theta_dot)
    a = np.asarray(a, dtype=float)

    def observable(t: np.ndarray) -> np.ndarray:
        v = lay.views(t)
        return (a[:, None] * (v["W"] @ v["WV"])).reshape(-1)

    return directional_derivative(observable, theta, theta_dot).reshape(a.size, -1)
