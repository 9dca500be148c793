"""The model of Eq. (1) in SymPy on ``co.regime.symbolic`` (Oracle 2, spec §3): L = d = 3, m = m₁ = 2, a = (+1, −1),
X the one-hot sequence of three distinct tokens (X = I), one sample with label y = +1 — 22 scalar parameters.

The symbolic route of ``co.dv.flow_vectorised``: :func:`vectorised_flow` against −∂l(F)/∂θ by ``sp.diff`` of
:func:`output`, both evaluated at 50 digits (simplifying the 22 differences symbolically takes minutes)."""

from __future__ import annotations

import sympy as sp


M, M1, D = 2, 2, 3
A = (1, -1)
W = sp.Matrix(M1, M, lambda i, j: sp.Symbol(f"W_{i}{j}", real=True))
WV, WK, WQ = (sp.Matrix(M, D, lambda i, j, n=name: sp.Symbol(f"{n}_{i}{j}", real=True)) for name in ("V", "K", "Q"))
PARAMETERS = [*W, *WV, *WK, *WQ]


def _softmax(v: list[sp.Expr]) -> list[sp.Expr]:
    e = [sp.exp(x) for x in v]
    total = sp.Add(*e)
    return [x / total for x in e]


def attention() -> list[list[sp.Expr]]:
    """P[h][l] = softmax over keys h of k_hᵀq_l/√m, X = I (token h at position h)."""
    columns = [_softmax([(WK[:, h].T * WQ[:, l])[0] / sp.sqrt(M) for h in range(D)]) for l in range(D)]
    return [[columns[l][h] for l in range(D)] for h in range(D)]


def output() -> sp.Expr:
    """Eq. (1) literally: Σ_l Σ_j a_j w_jᵀW_VX·softmax(XᵀW_KᵀW_Qx_l/√m)."""
    P = attention()
    return sp.Add(*[A[j] * (W[j, :] * WV * sp.Matrix([P[h][l] for h in range(D)]))[0]
                    for l in range(D) for j in range(M1)])


def vectorised_flow(F: sp.Expr) -> list[sp.Expr]:
    """θ̇ of ``co.dv.flow_vectorised`` at y = +1, n = 1: c = g(F), u = Wᵀa, b = W_Vᵀu, π = P𝟏, Γ_hl = P_hl(b_h − s̄_l)."""
    P = attention()
    c = 1 / (1 + sp.exp(F))
    u = W.T * sp.Matrix(A)
    b = [(WV[:, h].T * u)[0] for h in range(D)]
    pi = [sp.Add(*P[h]) for h in range(D)]
    s_bar = [sp.Add(*[b[h] * P[h][l] for h in range(D)]) for l in range(D)]
    gamma = [[P[h][l] * (b[h] - s_bar[l]) for l in range(D)] for h in range(D)]
    dW = sp.Matrix(M1, M, lambda j, r: A[j] * c * sp.Add(*[WV[r, h] * pi[h] for h in range(D)]))
    dWV = sp.Matrix(M, D, lambda r, h: c * pi[h] * u[r])
    dWK = sp.Matrix(M, D, lambda r, h: c / sp.sqrt(M) * sp.Add(*[gamma[h][l] * WQ[r, l] for l in range(D)]))
    dWQ = sp.Matrix(M, D, lambda r, l: c / sp.sqrt(M) * sp.Add(*[gamma[h][l] * WK[r, h] for h in range(D)]))
    return [*dW, *dWV, *dWK, *dWQ]
