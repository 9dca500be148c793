r"""The attention dynamics of Sec. 5 at one state: the right-hand side of Eqn 10 and ξ_n (Theorem 1(a)).

With features F = [f₁, …, f_K] (M × K), coefficients β (K × K), the last-token map ψ and γ(t):

    ż_m = η_Z γ Σ_{n∈ψ⁻¹(m)} diag(f_n) Σ_{n'≠n} β_{nn'} (f_nf_nᵀ − I) f_{n'}         (Eqn 10)

so that component l is η_Z γ Σ_{n∈ψ⁻¹(m)} f_{nl} Σ_{n'≠n} β_{nn'} [(f_nᵀf_{n'}) f_{nl} − f_{n'l}] (Eqn 97), and

    ξ_n = γ Σ_{n'≠n} β_{nn'} f_nᵀf_{n'}                                                 (L148)

Units: rates per unit of the flow time t of Eqn 10.
"""

from __future__ import annotations

import numpy as np

from derivations.errors import InvalidArgument


def _check(F: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    F, beta = np.asarray(F, dtype=float), np.asarray(beta, dtype=float)
    if F.ndim != 2 or beta.shape != (F.shape[1], F.shape[1]):
        raise InvalidArgument(f"F must be M × K and beta K × K; got F {F.shape}, beta {beta.shape}")
    return F, beta


def z_rate(F: np.ndarray, beta: np.ndarray, psi, m: int, eta_Z: float = 1.0, gamma: float = 1.0) -> np.ndarray:
    """ż_m of Eqn 10 (an M-vector) for the last token ``m``; zero when no class has last token m."""
    F, beta = _check(F, beta)
    if len(psi) != F.shape[1]:
        raise InvalidArgument(f"psi has {len(psi)} entries; it needs one per class (K = {F.shape[1]})")
    gram = F.T @ F
    out = np.zeros(F.shape[0])
    for n in (k for k in range(F.shape[1]) if psi[k] == m):
        others = [k for k in range(F.shape[1]) if k != n]
        pull = F[:, others] @ beta[n, others]  # Σ_{n'≠n} β_{nn'} f_{n'}
        out += F[:, n] * (F[:, n] * (gram[n, others] @ beta[n, others]) - pull)
    return eta_Z * gamma * out


def xi(F: np.ndarray, beta: np.ndarray, gamma: float = 1.0) -> np.ndarray:
    """ξ_n = γ Σ_{n'≠n} β_{nn'} f_nᵀf_{n'} for every class n (a K-vector)."""
    F, beta = _check(F, beta)
    off = beta * (F.T @ F)
    np.fill_diagonal(off, 0.0)  # dropped, not subtracted: 1 + u⁴ − 1 loses u⁴ below 1e-16
    return gamma * off.sum(axis=1)
