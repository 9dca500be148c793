r"""The product-rule identities of App. C, §4 and App. E–F (spec §4): printed rates of bilinear observables.

Each display is an array over its free indices (every neuron j, every test token μ, ν, every sample i, spec rule
3), compared with the true rate Q̇ = ∇Q·θ̇ of the observable along the exact flow θ̇ = −∇L̂ (Oracle 1), taken by
one complex step along θ̇ (:func:`numerics.differences.directional_derivative`). Test tokens (spec §4): μ₁, μ₂, μ₃,
the first random token of the training set and an unused token.

Notation of a sample i (spec §2.3): P_{hl} = p_{l,h} (query l on key h), V, K, Q ∈ ℝ^{m×L}, b = Vᵀu = G(X),
s̄_l = bᵀp_l, and p_{q←l,k←μ} = p_{l,l(i,μ)} (μ occurs at most once: dataset ``unique``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from checks.array_identity import ArrayDisplay, ArrayIdentityCheck
from checks.claim import Claim
from checks.registry import register
from checks.word_cooccurrence.model_items import HarnessCase, _oracle, _SEEDS, harness_case
from derivations.word_cooccurrence.symbols import DEFAULT_READINGS
from numerics.differences import directional_derivative
from numerics.models.word_cooccurrence import model as Mo

PAPER = "co"
RTOL = 1e-12


@dataclass(frozen=True)
class RateCase:
    """A harness case with its flow, its forward quantities and its test tokens."""

    label: str
    case: HarnessCase
    theta_dot: np.ndarray
    f: dict
    gy: np.ndarray  # g_iy_i
    tokens: tuple[int, ...]  # μ₁, μ₂, μ₃, a present random token, an unused token

    @property
    def n(self) -> int:
        return self.case.tokens.shape[0]

    @property
    def m(self) -> int:
        return self.case.lay.shapes["WV"][0]

    def views(self, theta=None) -> dict:
        return self.case.lay.views(self.case.theta if theta is None else theta)

    def position(self, i: int, token: int) -> int | None:
        hits = np.flatnonzero(self.case.tokens[i] == token)
        return int(hits[0]) if hits.size else None

    def rate(self, observable) -> np.ndarray:
        """Q̇ along the flow for Q = ``observable(views)``."""
        return directional_derivative(lambda t: np.asarray(observable(self.case.lay.views(t))).reshape(-1),
                                      self.case.theta, self.theta_dot)


@lru_cache(maxsize=8)
def rate_case(seed: int) -> RateCase:
    c = harness_case(seed)
    f = Mo.forward(c.theta, c.lay, c.tokens, c.a)
    gy = Mo.g_weight(c.labels * f["F"]) * c.labels
    d = c.lay.shapes["WV"][1]
    present = sorted(set(c.tokens.reshape(-1).tolist()))
    random_present = next(t for t in present if t >= 3)
    unused = max(t for t in range(d) if t not in present)
    return RateCase(c.label, c, _oracle(c), f, gy, (0, 1, 2, random_present, unused))


def _families(ctx) -> dict[str, list[RateCase]]:
    return {"harness": [rate_case(seed) for seed in ctx.grid("harness_seed")]}


def _p_at(r: RateCase, i: int, l: int, token: int) -> float:
    """p_{q←l,k←token} of sample i (0 when the token is absent)."""
    h = r.position(i, token)
    return 0.0 if h is None else float(r.f["P"][i][h, l])


def _Xp_dot(r: RateCase, i: int, l: int, token: int) -> float:
    """(X p_l)ᵀμ = Σ_h p_{l,h}𝕀(x_h = μ)."""
    return float(np.sum(r.f["P"][i][r.case.tokens[i] == token, l]))


# ---- Eq. (6) / Lemma C.1 ----------------------------------------------------------------------------------------
def eq6_printed(r: RateCase) -> np.ndarray:
    W, WV, a = r.views()["W"], r.views()["WV"], r.case.a
    out = np.zeros((W.shape[0], len(r.tokens)))
    for j1 in range(W.shape[0]):
        for k, mu in enumerate(r.tokens):
            first = sum(r.gy[i] * sum(a[j2] * (W[j1] @ W[j2]) * _Xp_dot(r, i, l, mu)
                                      for l in range(r.f["P"].shape[2]) for j2 in range(W.shape[0]))
                        for i in range(r.n))
            second = sum(r.gy[i] * a[j1] * sum(r.f["P"][i][:, l] @ r.f["V"][i].T @ WV[:, mu]
                                               for l in range(r.f["P"].shape[2])) for i in range(r.n))
            out[j1, k] = (first + second) / r.n
    return out


def _wv_rate(r: RateCase) -> np.ndarray:
    return r.rate(lambda v: v["W"] @ v["WV"][:, list(r.tokens)]).reshape(r.views()["W"].shape[0], -1)


def lemC1_split(r: RateCase) -> np.ndarray:
    """Lemma C.1's second equality: main term + ε₁ + ε₂ (module docstring of the spec item)."""
    W, WV, a = r.views()["W"], r.views()["WV"], r.case.a
    L = r.f["P"].shape[2]
    out = np.zeros((W.shape[0], len(r.tokens)))
    for j in range(W.shape[0]):
        for k, mu in enumerate(r.tokens):
            out[j, k] = sum(_c1_pieces(r, W, WV, a, j, mu, L))
    return out


def _c1_pieces(r, W, WV, a, j, mu, L):
    v_mu = WV[:, mu]
    main = eps1 = eps2 = 0.0
    for i in range(r.n):
        if r.position(i, mu) is not None:
            p_sum = sum(_p_at(r, i, l, mu) for l in range(L))
            main += r.gy[i] * a[j] * (W[j] @ W[j] + v_mu @ v_mu) * p_sum
            eps1 += r.gy[i] * sum(a[j2] * (W[j] @ W[j2]) for j2 in range(W.shape[0]) if j2 != j) * p_sum
        V, P = r.f["V"][i], r.f["P"][i]
        eps2 += r.gy[i] * a[j] * sum(P[h, l1] * (V[:, h] @ v_mu) for l1 in range(L) for h in range(L)
                                     if r.case.tokens[i][h] != mu)
    return main / r.n, eps1 / r.n, eps2 / r.n


# ---- Eq. (7), its §4.2 form and Lemma C.4's split ------------------------------------------------------------------
def _b_minus(r: RateCase, i: int, l: int) -> np.ndarray:
    """G(X) − G(X)ᵀp_l = Σ_j a_j(Vᵀw_j − w_jᵀVp_l): b − s̄_l."""
    b, p = r.f["b"][i], r.f["P"][i][:, l]
    return b - b @ p


def eq7_printed(r: RateCase, folded: bool = False) -> np.ndarray:
    """Eq. (7) (``folded``: the §4.2 form with Σ_j a_j folded into G(X)) for all ordered pairs (ν, μ)."""
    v = r.views()
    WK, WQ, W, a = v["WK"], v["WQ"], v["W"], r.case.a
    T, L = r.tokens, r.f["P"].shape[2]
    out = np.zeros((len(T), len(T)))
    for x, nu in enumerate(T):
        for y, mu in enumerate(T):
            total = 0.0
            for i in range(r.n):
                K, Q, V, P = r.f["K"][i], r.f["Q"][i], r.f["V"][i], r.f["P"][i]
                for l in range(L):
                    p = P[:, l]
                    if folded:
                        weights = [_b_minus(r, i, l)]
                    else:
                        weights = [a[j] * (V.T @ W[j] - W[j] @ V @ p) for j in range(W.shape[0])]
                    for wgt in weights:
                        total += r.gy[i] * (WK[:, nu] @ K @ np.diag(wgt) @ p) * float(r.case.tokens[i][l] == mu)
                        total += r.gy[i] * (WQ[:, mu] @ Q[:, l]) * (p @ np.diag(wgt) @ (r.case.tokens[i] == nu))
            out[x, y] = total / (r.n * np.sqrt(r.m))
    return out


def _kq_rate(r: RateCase) -> np.ndarray:
    T = list(r.tokens)
    return r.rate(lambda v: v["WK"][:, T].T @ v["WQ"][:, T]).reshape(len(T), len(T))


def lemC4_split(r: RateCase) -> np.ndarray:
    """(1) + (2) + (3) + (4) of Lemma C.4's third result, for all ordered pairs (ν, μ)."""
    v = r.views()
    WK, WQ, W, WV, a = v["WK"], v["WQ"], v["W"], v["WV"], r.case.a
    T, L = r.tokens, r.f["P"].shape[2]
    out = np.zeros((len(T), len(T)))
    for x, nu in enumerate(T):
        for y, mu in enumerate(T):
            total = 0.0
            for i in range(r.n):
                K, Q, V, P = r.f["K"][i], r.f["Q"][i], r.f["V"][i], r.f["P"][i]
                lm, ln = r.position(i, mu), r.position(i, nu)
                for j in range(W.shape[0]):
                    if lm is not None and ln is not None:  # (1) and (3)
                        s_mu = W[j] @ V @ P[:, lm]
                        total += r.gy[i] * a[j] * (WK[:, nu] @ WK[:, nu]) * (WV[:, nu] @ W[j] - s_mu) * P[ln, lm]
                        total += r.gy[i] * a[j] * (WQ[:, mu] @ WQ[:, mu]) * P[ln, lm] * (W[j] @ WV[:, nu] - s_mu)
                    if lm is not None:  # (2)
                        s_mu = W[j] @ V @ P[:, lm]
                        total += r.gy[i] * a[j] * sum((WK[:, nu] @ K[:, l]) * (V[:, l] @ W[j] - s_mu) * P[l, lm]
                                                      for l in range(L) if r.case.tokens[i][l] != nu)
                    if ln is not None:  # (4)
                        total += r.gy[i] * a[j] * sum((WQ[:, mu] @ Q[:, l]) * P[ln, l]
                                                      * (W[j] @ WV[:, nu] - W[j] @ V @ P[:, l])
                                                      for l in range(L) if r.case.tokens[i][l] != mu)
            out[x, y] = total / (r.n * np.sqrt(r.m))
    return out


# ---- Gram rates of the system (L1216–L1311) ------------------------------------------------------------------------
def neuron_corr(r: RateCase, subset: frozenset | None = None) -> np.ndarray:
    """The system's third line; with ``subset`` U, Lemma C.2's split into keys in U and keys not in U."""
    W, a, L = r.views()["W"], r.case.a, r.f["P"].shape[2]
    out = np.zeros((W.shape[0], W.shape[0]))
    for j1 in range(W.shape[0]):
        for j2 in range(W.shape[0]):
            total = 0.0
            for i in range(r.n):
                V, P, tok = r.f["V"][i], r.f["P"][i], r.case.tokens[i]
                for l in range(L):
                    if subset is None:
                        total += r.gy[i] * (a[j2] * W[j1] @ V @ P[:, l] + a[j1] * W[j2] @ V @ P[:, l])
                    else:
                        for side in (True, False):
                            keys = [h for h in range(L) if (int(tok[h]) in subset) == side]
                            total += r.gy[i] * sum(a[j2] * (W[j1] @ V[:, h]) * P[h, l]
                                                   + a[j1] * (W[j2] @ V[:, h]) * P[h, l] for h in keys)
            out[j1, j2] = total / r.n
    return out


def value_corr(r: RateCase, form: str) -> np.ndarray:
    """L1233–L1253 (``system``) and Lemma F.11's first display (``G``), all pairs (ν, μ)."""
    v = r.views()
    W, WV, a, L, T = v["W"], v["WV"], r.case.a, r.f["P"].shape[2], r.tokens
    G = (W.T @ a) @ WV

    def mass(token):  # (1/n)Σ_{i: token ∈ X} g y Σ_l p_{q←l,k←token}
        return sum(r.gy[i] * sum(_p_at(r, i, l, token) for l in range(L)) for i in range(r.n)) / r.n

    out = np.zeros((len(T), len(T)))
    for x, nu in enumerate(T):
        for y, mu in enumerate(T):
            if form == "system":
                out[x, y] = (sum(a[j] * (WV[:, nu] @ W[j]) for j in range(W.shape[0])) * mass(mu)
                             + sum(a[j] * (WV[:, mu] @ W[j]) for j in range(W.shape[0])) * mass(nu))
            else:
                out[x, y] = G[nu] * mass(mu) + G[mu] * mass(nu)
    return out


def _gram_rate(block: str):
    def rate(r: RateCase) -> np.ndarray:
        T = list(r.tokens)
        return r.rate(lambda v: v[block][:, T].T @ v[block][:, T]).reshape(len(T), len(T))
    return rate


def query_self(r: RateCase) -> np.ndarray:
    v = r.views()
    WQ, W, a, T = v["WQ"], v["W"], r.case.a, r.tokens
    out = np.zeros((len(T), len(T)))

    def half(x_tok, y_tok):  # (1/(n√m))Σ_{i: y ∈ X} g y Σ_j a_j xᵀW_QᵀK diag(Vᵀw_j − w_jᵀVp_{l(i,y)})p_{l(i,y)}
        total = 0.0
        for i in range(r.n):
            l = r.position(i, y_tok)
            if l is None:
                continue
            K, V, p = r.f["K"][i], r.f["V"][i], r.f["P"][i][:, l]
            total += r.gy[i] * sum(a[j] * (WQ[:, x_tok] @ K @ np.diag(V.T @ W[j] - W[j] @ V @ p) @ p)
                                   for j in range(W.shape[0]))
        return total / (r.n * np.sqrt(r.m))

    for x, nu in enumerate(T):
        for y, mu in enumerate(T):
            out[x, y] = half(nu, mu) + half(mu, nu)
    return out


def key_self(r: RateCase) -> np.ndarray:
    v = r.views()
    WK, WV, W, a, T, L = v["WK"], v["WV"], v["W"], r.case.a, r.tokens, r.f["P"].shape[2]
    out = np.zeros((len(T), len(T)))

    def half(x_tok, y_tok):
        total = 0.0
        for i in range(r.n):
            if r.position(i, y_tok) is None:
                continue
            Q, V, P = r.f["Q"][i], r.f["V"][i], r.f["P"][i]
            total += r.gy[i] * sum(a[j] * (WK[:, x_tok] @ Q[:, l]) * _p_at(r, i, l, y_tok)
                                   * (W[j] @ WV[:, y_tok] - W[j] @ V @ P[:, l])
                                   for l in range(L) for j in range(W.shape[0]))
        return total / (r.n * np.sqrt(r.m))

    for x, nu in enumerate(T):
        for y, mu in enumerate(T):
            out[x, y] = half(nu, mu) + half(mu, nu)
    return out


# ---- G, U and F ---------------------------------------------------------------------------------------------------
def _G_rate(r: RateCase) -> np.ndarray:
    return r.rate(lambda v: (v["W"].T @ r.case.a) @ v["WV"][:, list(r.tokens)])


def _value_term(r: RateCase, mu: int) -> float:
    """(1/n)Σ_i g y Σ_l p_lᵀVᵀW_Vμ."""
    WV, L = r.views()["WV"], r.f["P"].shape[2]
    return sum(r.gy[i] * sum(r.f["P"][i][:, l] @ r.f["V"][i].T @ WV[:, mu] for l in range(L))
               for i in range(r.n)) / r.n


def _mlp_term(r: RateCase, mu: int) -> float:
    """(1/n)Σ_{i: μ∈X} g y Σ_l p_{q←l,k←μ} · Σ_{j₁,j₂} a_{j₁}a_{j₂}⟨w_{j₁}, w_{j₂}⟩."""
    W, a, L = r.views()["W"], r.case.a, r.f["P"].shape[2]
    U = float((W.T @ a) @ (W.T @ a))
    return U * sum(r.gy[i] * sum(_p_at(r, i, l, mu) for l in range(L)) for i in range(r.n)) / r.n


def eq4_printed(r: RateCase) -> np.ndarray:
    """Eq. (4) with its free index j₁ (in a_{j₁} of the second term) enumerated over [m₁]: (m₁, test tokens)."""
    m1 = r.views()["W"].shape[0]
    return np.array([[_mlp_term(r, mu) + m1 * r.case.a[j1] * _value_term(r, mu) for mu in r.tokens]
                     for j1 in range(m1)])


def defE18_printed(r: RateCase) -> np.ndarray:
    m1 = r.views()["W"].shape[0]
    return np.array([_mlp_term(r, mu) + m1 * _value_term(r, mu) for mu in r.tokens])


def corF12_printed(r: RateCase) -> np.ndarray:
    return np.array([r.views()["W"].shape[0] * _value_term(r, mu) for mu in r.tokens])


def corF12_derived(r: RateCase) -> np.ndarray:
    """Σ_j a_jẇ_jᵀW_Vμ: the W part of the flow only."""
    lay, W_dot = r.case.lay, r.case.lay.view(r.theta_dot, "W")
    return (W_dot.T @ r.case.a) @ lay.view(r.case.theta, "WV")[:, list(r.tokens)]


def eq5_printed(r: RateCase) -> np.ndarray:
    m1 = r.views()["W"].shape[0]
    return np.array([2 * m1 / r.n * np.sum(r.gy * r.f["F"])])


def _chain_F_printed(r: RateCase) -> np.ndarray:
    """Σ_{l₁,l₂}(ḃ_{l₂}p_{l₁,l₂} + b_{l₂}ṗ_{l₁,l₂}) with ḃ, ṗ the rates of G(x_{l₂}) and of the attention."""
    c = r.case

    def attention(v):
        theta = np.concatenate([v[name].reshape(-1) for name in Mo.BLOCKS])
        return Mo.forward(theta, c.lay, c.tokens, c.a)["P"]

    def values(v):
        return (v["W"].T @ c.a) @ v["WV"][:, c.tokens].transpose(1, 0, 2)

    n, L = c.tokens.shape
    P_dot = r.rate(attention).reshape(n, L, L)
    b_dot = r.rate(values).reshape(n, L)
    return np.einsum("nh,nhl->n", b_dot, r.f["P"]) + np.einsum("nh,nhl->n", r.f["b"], P_dot)


def _g_chain_printed(r: RateCase) -> np.ndarray:
    """g'(y_iF_i)y_iḞ_i with g'(x) = −eˣ/(1 + eˣ)²."""
    y, F = r.case.labels, r.f["F"]
    g_prime = -np.exp(y * F) / (1 + np.exp(y * F)) ** 2
    return g_prime * y * r.rate(lambda v: _F_of(r, v))


def _F_of(r: RateCase, v) -> np.ndarray:
    theta = np.concatenate([v[name].reshape(-1) for name in Mo.BLOCKS])
    return Mo.output(theta, r.case.lay, r.case.tokens, r.case.a)


def _g_rate(r: RateCase) -> np.ndarray:
    y = r.case.labels
    return r.rate(lambda v: 1 / (1 + np.exp(y * _F_of(r, v))))


def _subsets(r: RateCase) -> list[frozenset]:
    rng = np.random.default_rng(7)
    d = r.case.lay.shapes["WV"][1]
    return [frozenset(), frozenset({0, 1, 2}), *(frozenset(rng.choice(d, size=k, replace=False).tolist())
                                                  for k in (3, 8))]


def _display(name, label, printed, derived, description):
    return ArrayDisplay(name, label, printed, derived, "harness", description=description, rtol=RTOL)


def _neuron_rate(r: RateCase) -> np.ndarray:
    return r.rate(lambda v: v["W"] @ v["W"].T).reshape(r.views()["W"].shape[0], -1)


_ITEMS = {
    "co.cf.eq6_wv": ("Eq. (6) (L1160–L1182); Lemma C.1 (L1313–L1330)", lambda: [
        _display("eq6", "Eq. (6)", eq6_printed, _wv_rate, "∂(w_{j₁}ᵀW_Vμ)/∂t, every j₁ ∈ [m₁] (the printed quantifier "
                 "of Lemma C.1 is j ∈ [m]: index_range=existing), μ over the test tokens")],
     "∂(w_{j₁}ᵀW_Vμ)/∂t = (1/n)Σ g y Σ_l Σ_{j₂} a_{j₂}⟨w_{j₁}, w_{j₂}⟩(Xp_l)ᵀμ + (1/n)Σ g y Σ_l a_{j₁}p_lᵀVᵀW_Vμ."),
    "co.cf.lemC_1_split": ("Lemma C.1, second equality (L1331–L1345)", lambda: [
        _display("split", "Lemma C.1", lemC1_split, _wv_rate,
                 "main term + ε₁ + ε₂ against ∂(w_jᵀW_Vμ)/∂t (μ at most once per sample)")],
     "∂(w_jᵀW_Vμ)/∂t = (1/n)Σ_{i:μ∈X} g y Σ_l a_j(‖w_j‖² + ‖v(μ)‖²)p_{q←l,k←μ} + ε₁ + ε₂."),
    "co.cf.eq7_kq": ("Eq. (7) (L1183–L1215)", lambda: [
        _display("eq7", "Eq. (7)", eq7_printed, _kq_rate, "∂(νᵀW_KᵀW_Qμ)/∂t on all 25 ordered test-token pairs")],
     "∂(νᵀW_KᵀW_Qμ)/∂t = (1/(n√m))Σ g y Σ_l Σ_j a_j[νᵀW_KᵀK diag(Vᵀw_j − w_jᵀVp_l)p_lx_lᵀμ + "
     "μᵀW_Qᵀq_lp_lᵀdiag(w_jᵀV − w_jᵀVp_l)Xᵀν]."),
    "co.cf.sec4_2_kq": ("§4.2 (L772–L800)", lambda: [
        _display("sec4_2", "§4.2", lambda r: eq7_printed(r, folded=True), _kq_rate,
                 "Eq. (7) with G(X): all ordered pairs, (μ₁, μ₂) among them")],
     "∂(μ₁ᵀW_KᵀW_Qμ₂)/∂t = (1/(n√m))Σ g y Σ_l[μ₁ᵀW_KᵀK diag(G(X) − G(X)ᵀp_l)p_lx_lᵀμ₂ + "
     "μ₂ᵀW_Qᵀq_lp_lᵀdiag(G(X) − G(X)ᵀp_l)Xᵀμ₁]."),
    "co.cf.lemC_4_kq_split": ("Lemma C.4, third result (L1695–L1752)", lambda: [
        _display("split", "Lemma C.4", lemC4_split, _kq_rate, "(1) + (2) + (3) + (4) on all ordered pairs")],
     "The right side of (7) equals (1) + (2) + (3) + (4) (terms with ‖k(ν)‖², K_l ≠ k(ν), ‖q(μ)‖², q_l ≠ q(μ))."),
    "co.cf.neuron_corr": ("system, third line (L1216–L1232); Lemma C.2 (L1484–L1566)", lambda: [
        _display("system", "L1216–L1232", neuron_corr, _neuron_rate, "∂⟨w_{j₁}, w_{j₂}⟩/∂t, all (j₁, j₂)"),
        *(_display(f"split_{k}", "Lemma C.2", lambda r, k=k: neuron_corr(r, _subsets(r)[k]), _neuron_rate,
                   f"Lemma C.2's split over keys in U and not in U, U = subset {k}") for k in range(4))],
     "∂⟨w_{j₁}, w_{j₂}⟩/∂t = (1/n)Σ g y Σ_l(a_{j₂}w_{j₁}ᵀVp_l + a_{j₁}w_{j₂}ᵀVp_l), split over keys in U and not."),
    "co.cf.value_corr": ("system, fourth line (L1233–L1253); Lemma C.3; Lemma F.11 (L6814–L6822)", lambda: [
        _display("system", "L1233–L1253", lambda r: value_corr(r, "system"), _gram_rate("WV"), "all pairs (ν, μ)"),
        _display("lemF11", "Lemma F.11", lambda r: value_corr(r, "G"), _gram_rate("WV"), "with G(ν), G(μ)")],
     "∂(νᵀW_VᵀW_Vμ)/∂t = G(ν)(1/n)Σ_{i:μ∈X} g y Σ_l p_{q←l,k←μ} + G(μ)(1/n)Σ_{i:ν∈X} g y Σ_l p_{q←l,k←ν}."),
    "co.cf.query_self": ("system, fifth line (L1254–L1281); Lemma C.4 (L1634–L1645)", lambda: [
        _display("system", "L1254–L1281", query_self, _gram_rate("WQ"), "all pairs (ν, μ)")],
     "∂(νᵀW_QᵀW_Qμ)/∂t = (1/(n√m))Σ_{i:μ∈X} g y Σ_j a_jνᵀW_QᵀK diag(Vᵀw_j − w_jᵀVp_{l(i,μ)})p_{l(i,μ)} + (μ ↔ ν)."),
    "co.cf.key_self": ("system, sixth line (L1282–L1311); Lemma C.4 (L1646–L1694)", lambda: [
        _display("system", "L1282–L1311", key_self, _gram_rate("WK"), "all pairs (ν, μ)")],
     "∂(νᵀW_KᵀW_Kμ)/∂t = (1/(n√m))Σ_{i:μ∈X} g y Σ_l Σ_j a_jνᵀW_Kᵀq_lp_{q←l,k←μ}(w_jᵀv(μ) − w_jᵀVp_l) + (μ ↔ ν)."),
    "co.cf.eq4_subnet": ("Eq. (4) (L524–L543)", lambda: [
        _display("eq4", "Eq. (4)", eq4_printed, lambda r: np.tile(_G_rate(r), (r.views()["W"].shape[0], 1)),
                 "∂G(μ)/∂t for every μ, the second term's free index j₁ (a_{j₁}) enumerated over [m₁]")],
     "∂G(μ)/∂t = (1/n)Σ_{i:μ∈X} g y Σ_l p_{q←l,k←μ}·Σ_{j₁,j₂}a_{j₁}a_{j₂}⟨w_{j₁}, w_{j₂}⟩ + "
     "(m₁/n)Σ g y Σ_l a_{j₁}p_lᵀVᵀW_Vμ."),
    "co.cf.defE_18_subnet": ("Def. E.18 (L3619–L3657)", lambda: [
        _display("defE18", "Def. E.18", defE18_printed, _G_rate, "∂G(μ)/∂t, μ over the test tokens")],
     "∂G(μ)/∂t = (1/n)Σ_{i:μ∈X} g y Σ_l Σ_{j₁,j₂} a_{j₁}a_{j₂}⟨w_{j₁}, w_{j₂}⟩p_{q←l,k←μ} + "
     "(1/n)Σ g y m₁Σ_{l₁,l₂}⟨p_{l₁,l₂}v_{l₂}, v(μ)⟩."),
    "co.cf.corF_12_identity": ("proof of Cor. F.12 (L6959–L6966)", lambda: [
        _display("corF12", "Cor. F.12", corF12_printed, corF12_derived, "Σ_j a_jẇ_jᵀW_Vμ, μ over the test tokens")],
     "Σ_j a_j(∂w_j/∂t)W_Vμ = (m₁/n)Σ g y Σ_l p_lᵀVᵀW_Vμ."),
    "co.cf.eq5_U": ("Eq. (5) (L562–L574); Lemma F.4 (L5429–L5490)", lambda: [
        _display("eq5", "Eq. (5)", eq5_printed,
                 lambda r: r.rate(lambda v: np.array([(v["W"].T @ r.case.a) @ (v["W"].T @ r.case.a)])),
                 "∂U/∂t with U = Σ_{j₁,j₂}⟨a_{j₁}w_{j₁}, a_{j₂}w_{j₂}⟩")],
     "∂/∂t Σ_{j₁,j₂}⟨a_{j₁}w_{j₁}, a_{j₂}w_{j₂}⟩ = (2m₁/n)Σ_i g_iy_iF_i."),
    "co.cf.chain_F": ("proof of Thm E.19 (L3675–L3680); Lemma F.5 (L5662–L5672); L666–L672", lambda: [
        _display("F", "Thm E.19", _chain_F_printed, lambda r: r.rate(lambda v: _F_of(r, v)),
                 "∂F_i/∂t as Σ(ḃp + bṗ), every sample"),
        _display("g", "Lemma F.5", _g_chain_printed, _g_rate, "∂g_i/∂t = g'(y_iF_i)y_i∂F_i/∂t, every sample")],
     "∂F_i/∂t = Σ_{l₁}Σ_jΣ_{l₂}(∂(a_jw_jW_VX_{l₂})/∂t·p_{l₁,l₂} + a_jw_jW_VX_{l₂}·∂p_{l₁,l₂}/∂t); "
     "∂g_i/∂t = g'(y_iF_i)y_i∂F_i/∂t."),
}

for _id, (_label, _displays, _statement) in _ITEMS.items():
    register(Claim(_id, PAPER, _label, "formula", ArrayIdentityCheck(_displays, _families, dict(DEFAULT_READINGS)),
                   params=(_SEEDS,), statement=_statement))
