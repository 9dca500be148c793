r"""App. B's gradient forms (``co.cf.grad_w``, ``grad_WV``, ``grad_WK`` (5 forms), ``grad_WQ`` (4 forms); spec §4)
as array identities on ``co.regime.harness``: each printed form, summed as printed over i, l, j (and h, h'),
against the same block of −∇L̂ by complex step (Oracle 1).

Notation (spec §2.3): for sample i, V, K, Q ∈ ℝ^{m×L} (columns v_h, k_h, q_h), p_l ∈ ℝ^L the attention of query
l over keys h (p_{l,h}), X ∈ ℝ^{d×L} one-hot, so a row vector r ∈ ℝ^{1×L} times Xᵀ puts r_h in column tok_ih.
The prefactor of every form is (1/n)Σ_i g_iy_i (and 1/√m for W_K, W_Q), g_i = g(y_iF_i).
"""

from __future__ import annotations

import numpy as np

from checks.array_identity import ArrayDisplay, ArrayIdentityCheck
from checks.claim import Claim
from checks.registry import register
from checks.word_cooccurrence.model_items import HarnessCase, _families, _oracle, _SEEDS
from derivations.word_cooccurrence.symbols import DEFAULT_READINGS
from numerics.models.word_cooccurrence import model as Mo

PAPER = "co"
RTOL = 1e-13


def _state(c: HarnessCase) -> dict:
    f = Mo.forward(c.theta, c.lay, c.tokens, c.a)
    views = c.lay.views(c.theta)
    n = c.tokens.shape[0]
    f["weight"] = Mo.g_weight(c.labels * f["F"]) * c.labels / n  # g_iy_i/n
    f["W"], f["m"], f["d"] = views["W"], views["WV"].shape[0], views["WV"].shape[1]
    return f


def _onto_vocabulary(c: HarnessCase, rows: np.ndarray, d: int) -> np.ndarray:
    """Σ_i R_i X_iᵀ for R_i ∈ ℝ^{m×L} (rows of shape (n, m, L)): column h of R_i added to column tok_ih."""
    out = np.zeros((rows.shape[1], d))
    np.add.at(out.T, c.tokens.reshape(-1), rows.transpose(0, 2, 1).reshape(-1, rows.shape[1]))
    return out


def _jacobian(p: np.ndarray) -> np.ndarray:
    """∂p_h/∂s_h' = p_h(𝕀(h = h') − p_h') (Eq. (17)) for a vector p."""
    return np.diag(p) - np.outer(p, p)


# ---- W and W_V ----------------------------------------------------------------------------------------------
def grad_w(form: int):
    def value(c: HarnessCase) -> np.ndarray:
        s = _state(c)
        out = np.zeros_like(s["W"])
        for i in range(c.tokens.shape[0]):
            V, P = s["V"][i], s["P"][i]
            for l in range(P.shape[1]):
                p = P[:, l]
                for j in range(out.shape[0]):
                    term = V @ p if form == 1 else sum(V[:, h] * p[h] for h in range(p.size))
                    out[j] += s["weight"][i] * c.a[j] * term
        return out
    return value


def grad_WV(c: HarnessCase) -> np.ndarray:
    """(1/n)Σ_i g_iy_i Σ_l Σ_j a_j w_j (X p_l)ᵀ."""
    s = _state(c)
    out = np.zeros((s["m"], s["d"]))
    for i in range(c.tokens.shape[0]):
        for l in range(s["P"].shape[2]):
            Xp = np.zeros(s["d"])
            np.add.at(Xp, c.tokens[i], s["P"][i][:, l])
            for j in range(s["W"].shape[0]):
                out += s["weight"][i] * c.a[j] * np.outer(s["W"][j], Xp)
    return out


# ---- W_K: five forms, each an m×L matrix per (i, l, j) before Xᵀ ---------------------------------------------------
def _wk_rows(form: int, w: np.ndarray, V: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    wV = w @ V  # w_jᵀV, (L,)
    if form in (1, 2):
        J = _jacobian(p)  # form 1: ∂p_{l,h}/∂s_{l,h'}; form 2: written out, the same entries
        row = sum(wV[h] * J[h] for h in range(p.size)) if form == 1 else \
            np.array([sum(wV[h] * p[h] * ((h == k) - p[k]) for h in range(p.size)) for k in range(p.size)])
        return np.outer(q, row)
    if form == 3:
        return -(wV @ p) * np.outer(q, p) + np.outer(q, wV @ np.diag(p))
    if form == 4:
        return np.outer(q, -(wV @ p) * p + wV @ np.diag(p))
    return np.outer(q, p @ np.diag(wV - wV @ p))  # form 5: q_l p_lᵀ diag(w_jᵀV − w_jᵀVp_l)


def grad_WK(form: int):
    def value(c: HarnessCase) -> np.ndarray:
        s = _state(c)
        rows = np.zeros((c.tokens.shape[0], s["m"], c.tokens.shape[1]))
        for i in range(c.tokens.shape[0]):
            for l in range(c.tokens.shape[1]):
                for j in range(s["W"].shape[0]):
                    rows[i] += s["weight"][i] * c.a[j] * _wk_rows(form, s["W"][j], s["V"][i], s["Q"][i][:, l],
                                                                   s["P"][i][:, l]) / np.sqrt(s["m"])
        return _onto_vocabulary(c, rows, s["d"])
    return value


# ---- W_Q: four forms, each an m-vector per (i, l, j) before x_lᵀ ---------------------------------------------------
def _wq_column(form: int, w: np.ndarray, V: np.ndarray, K: np.ndarray, p: np.ndarray) -> np.ndarray:
    wV = w @ V
    if form == 1:
        return sum(wV[h] * sum(p[h] * ((h == k) - p[k]) * K[:, k] for k in range(p.size)) for h in range(p.size))
    if form == 2:
        return -(wV @ p) * (K @ p) + K @ np.diag(p) @ V.T @ w
    if form == 3:
        return K @ (-(wV @ p) * p + np.diag(p) @ V.T @ w)
    return K @ np.diag(V.T @ w - wV @ p) @ p  # form 4


def grad_WQ(form: int):
    def value(c: HarnessCase) -> np.ndarray:
        s = _state(c)
        rows = np.zeros((c.tokens.shape[0], s["m"], c.tokens.shape[1]))
        for i in range(c.tokens.shape[0]):
            for l in range(c.tokens.shape[1]):
                for j in range(s["W"].shape[0]):
                    rows[i][:, l] += s["weight"][i] * c.a[j] * _wq_column(form, s["W"][j], s["V"][i], s["K"][i],
                                                                          s["P"][i][:, l]) / np.sqrt(s["m"])
        return _onto_vocabulary(c, rows, s["d"])
    return value


def _oracle_block(name: str):
    return lambda c: c.lay.view(_oracle(c), name)


def _displays(block: str, forms: dict[str, object], label: str) -> list[ArrayDisplay]:
    return [ArrayDisplay(name, label, printed, _oracle_block(block), "harness",
                         description=f"{name}: ∂{block}/∂t as printed against −∇_{block}L̂ by complex step", rtol=RTOL)
            for name, printed in forms.items()]


_ITEMS = (
    ("co.cf.grad_w", "App. B (L1003–L1017)", "W", {"form1": grad_w(1), "form2": grad_w(2)},
     "∂w_j/∂t = (1/n)Σ_i g_iy_i Σ_l a_jVp_l = (1/n)Σ_i g_iy_i Σ_l a_j Σ_h v_hp_{l,h}."),
    ("co.cf.grad_WV", "App. B (L1018–L1028)", "WV", {"form1": grad_WV},
     "∂W_V/∂t = (1/n)Σ_i g_iy_i Σ_l Σ_j a_jw_j(X⁽ⁱ⁾p_l)ᵀ."),
    ("co.cf.grad_WK", "App. B (L1029–L1099)", "WK", {f"form{k}": grad_WK(k) for k in range(1, 6)},
     "∂W_K/∂t = (1/(n√m))Σ_i g_iy_i Σ_l Σ_j a_j[…] in five successive forms, the last q_lp_lᵀdiag(w_jᵀV − w_jᵀVp_l)Xᵀ."),
    ("co.cf.grad_WQ", "App. B (L1100–L1156)", "WQ", {f"form{k}": grad_WQ(k) for k in range(1, 5)},
     "∂W_Q/∂t = (1/(n√m))Σ_i g_iy_i Σ_l Σ_j a_j[…] in four successive forms, the last "
     "K diag(Vᵀw_j − w_jᵀVp_l)p_lx_lᵀ."),
)
for _id, _label, _block, _forms, _statement in _ITEMS:
    register(Claim(_id, PAPER, _label, "formula",
                   ArrayIdentityCheck(lambda b=_block, f=_forms, lab=_label: _displays(b, f, lab), _families,
                                      dict(DEFAULT_READINGS)),
                   params=(_SEEDS,), statement=_statement))
