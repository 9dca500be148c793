r"""Vocabulary layouts and class distributions of "Scan and Snap" (spec §2.2, §2.10).

A :class:`Layout` holds, for K classes over a vocabulary of M ids (0-based): the contextual distributions
P[n, l] = ℙ(l | n) (K × M, rows summing to 1), the last token ψ(n) and the next token of each class. The
named configurations of spec §2.10 (``K3_shared``, ``K3_own``, ``K2_own``, ``sym_multi_ct``, ``asym_2ct``,
``thm_hyp`` with variants ``ct1``/``ct2``, Syn-Small ``synsmall``) are built by :func:`layout`;
``random_P`` is the generator of ``ss.cfg.lemma3``.

Derived setting quantities (:func:`setting_quantities`): supports, distinct tokens G_DT(n) (in one support
only) and common tokens G_CT (in more than one), the features f_n = c_n/‖c_n‖ at a given Z (Eqn 5 with
T = ∞: c̃_n = ℙ(·|n) ∘ e^{z_{ψ(n)}}), E = FᵀF − I, its spectrum ordered by magnitude, and the margins of
Assumption 2 (M/K² for M ≫ K², 1/K − |λ₁|, min_i |λ_i| − 6/√M).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from derivations.errors import InvalidArgument, unknown_name


@dataclass(frozen=True)
class Layout:
    """K classes over M ids: contextual distributions ``P`` (K × M), last tokens ``psi`` and next tokens."""

    name: str
    P: np.ndarray
    psi: tuple[int, ...]
    next_token: tuple[int, ...]

    def __post_init__(self):
        P = np.ascontiguousarray(self.P, dtype=np.float64)
        if P.ndim != 2 or P.shape[0] < 1:
            raise InvalidArgument(f"layout {self.name}: P has shape {P.shape}; it must be a K × M matrix with K >= 1")
        K, M = P.shape
        if M < 2:
            raise InvalidArgument(f"M={M} must be >= 2 (layout {self.name}: a softmax over one id is constant)")
        if K > M:
            raise InvalidArgument(f"K={K} must be <= M={M} (layout {self.name}: every class has its own next-token id)")
        if not np.all(np.isfinite(P)) or np.any(P < 0) or not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12):
            raise InvalidArgument(f"layout {self.name}: every row of P must be a distribution (finite, >= 0, sum 1)")
        for label in ("psi", "next_token"):
            ids = np.asarray(getattr(self, label))
            if ids.shape != (K,) or not np.issubdtype(ids.dtype, np.integer) or np.any((ids < 0) | (ids >= M)):
                raise InvalidArgument(f"layout {self.name}: {label}={ids.tolist()!r} must give one id in [0, {M}) "
                                      f"per class")
            object.__setattr__(self, label, tuple(int(i) for i in ids))
        object.__setattr__(self, "P", P)

    @property
    def K(self) -> int:
        return self.P.shape[0]

    @property
    def M(self) -> int:
        return self.P.shape[1]


def _linspace_block(count: int, total: float) -> np.ndarray:
    weights = np.linspace(0.1, 1.0, count)
    return weights / weights.sum() * total


def _common_then_distinct(K: int, common: list[float], n_distinct: int, shared_last: bool, name: str) -> Layout:
    """Common ids first (probabilities ``common`` in every class), then ``n_distinct`` ids per class with
    ℙ ∝ linspace(0.1, 1, n) scaled to the remaining mass, then the last token(s), then the next tokens."""
    n_common = len(common)
    n_last = 1 if shared_last else K
    M = n_common + K * n_distinct + n_last + K
    P = np.zeros((K, M))
    rest = 1.0 - sum(common)
    for n in range(K):
        P[n, :n_common] = common
        start = n_common + n * n_distinct
        P[n, start:start + n_distinct] = _linspace_block(n_distinct, rest)
    last0 = n_common + K * n_distinct
    psi = tuple(last0 if shared_last else last0 + n for n in range(K))
    nxt = tuple(last0 + n_last + n for n in range(K))
    return Layout(name, P, psi, nxt)


def _asym_2ct() -> Layout:
    rows = [(0.0, 0.05, (0.2, 0.3, 0.45)), (0.25, 0.0, (0.2, 0.25, 0.3)), (0.2, 0.15, (0.15, 0.2, 0.3))]
    M = 15
    P = np.zeros((3, M))
    for n, (a, b, distinct) in enumerate(rows):
        row = np.zeros(M)
        row[0], row[1] = a, b
        row[2 + 3 * n:5 + 3 * n] = distinct
        P[n] = row / row.sum()
    return Layout("asym_2ct", P, (11, 11, 11), (12, 13, 14))


def _thm_hyp(variant: str, common: list[float] | None = None) -> Layout:
    common = {"ct1": [0.25], "ct2": [0.1, 0.2]}[variant] if common is None else common
    n_common, K, M = len(common), 2, 10**4
    P = np.zeros((K, M))
    for n in range(K):
        P[n, :n_common] = common
        start = n_common + 6 * n
        P[n, start:start + 6] = _linspace_block(6, 1 - sum(common))
    last = n_common + 12
    name = f"thm_hyp.{variant}" if common is None else f"thm_hyp.ct1(p_c={common[0]:.6g})"
    return Layout(name, P, (last, last), (last + 1, last + 2))


def thm_hyp_ct1(p_common: float) -> Layout:
    """``ss.cfg.thm_hyp`` (``ct1``, M = 10⁴, inside Assumption 2 for overlaps >= 6/√M) with the common token's
    probability set to ``p_common``: the inside-regime overlap scan of ``ss.cfg.thm1``."""
    if not 0 < p_common < 1:
        raise InvalidArgument(f"p_common={p_common!r} must lie in (0, 1)")
    return _thm_hyp("ct1", [p_common])


def _synsmall(variant: str) -> Layout:
    """Syn-Small (spec ss.opt.synsmall): 10 common ids (weight 1), 10 distinct per class (linspace(0.1, 1, 10)),
    rows normalised by 15.5; ``code``: 2 classes with own last tokens (M = 34); ``shared_last``: one last
    token (M = 33); ``paper_literal``: M = 30, the last and next ids inside the contextual range."""
    K = 2
    weights = np.concatenate([np.ones(10), np.linspace(0.1, 1.0, 10)])
    if variant == "paper_literal":
        M = 30
        P = np.zeros((K, M))
        for n in range(K):
            P[n, :10] = 1.0
            P[n, 10 + 10 * n:20 + 10 * n] = np.linspace(0.1, 1.0, 10)
        P /= P.sum(axis=1, keepdims=True)
        # the toolkit's choice (recorded): class n's last token is its largest distinct id, next token the smallest
        return Layout("synsmall.paper_literal", P, (19, 29), (10, 20))
    n_last = 2 if variant == "code" else 1
    M = 10 + 10 * K + n_last + K
    P = np.zeros((K, M))
    for n in range(K):
        P[n, :10] = weights[:10]
        P[n, 10 + 10 * n:20 + 10 * n] = weights[10:]
    P /= P.sum(axis=1, keepdims=True)
    last0 = 10 + 10 * K
    psi = (last0, last0 + 1) if variant == "code" else (last0, last0)
    return Layout(f"synsmall.{variant}", P, psi, (last0 + n_last, last0 + n_last + 1))


def k3_shared(p_common: float) -> Layout:
    """``ss.cfg.K3_shared`` with the common token's probability set to ``p_common`` (distinct probabilities rescaled
    to 1 − p_common): the overlap scan of ``ss.cfg.thm1``."""
    if not 0 < p_common < 1:
        raise InvalidArgument(f"p_common={p_common!r} must lie in (0, 1)")
    return _common_then_distinct(3, [p_common], 6, True, name=f"K3_shared(p_c={p_common:.6g})")


def synmedium(num_last: int, num_next_per_last: int = 2) -> Layout:
    """Syn-Medium (**[code]** ``Dataset2``, spec ``ss.fig6``): 10 common ids, 10 distinct ids per class, ``num_last``
    last tokens each shared by ``num_next_per_last`` consecutive classes (ψ(n) = last0 + n // num_next_per_last),
    then the K next tokens; K = num_last·num_next_per_last, M = 10 + 10K + num_last + K."""
    if num_last < 1 or num_next_per_last < 1:
        raise InvalidArgument(f"num_last={num_last}, num_next_per_last={num_next_per_last} must be >= 1")
    K = num_last * num_next_per_last
    M = 10 + 10 * K + num_last + K
    P = np.zeros((K, M))
    for n in range(K):
        P[n, :10] = 1.0
        P[n, 10 + 10 * n:20 + 10 * n] = np.linspace(0.1, 1.0, 10)
    P /= P.sum(axis=1, keepdims=True)
    last0 = 10 + 10 * K
    psi = tuple(last0 + n // num_next_per_last for n in range(K))
    return Layout(f"synmedium.{num_last}x{num_next_per_last}", P, psi, tuple(last0 + num_last + n for n in range(K)))


def random_P(seed: int, M: int = 200, K: int = 4) -> Layout:
    """``ss.cfg.lemma3``'s generator: contextual ids 0–29, next ids 30–33; ids 0, 1 in every support, 8 more
    per class drawn without replacement from 2–29; weights 𝒰(0.1, 1) normalised per class."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 3]))
    P = np.zeros((K, M))
    for n in range(K):
        ids = np.concatenate([[0, 1], 2 + rng.choice(28, 8, replace=False)])
        P[n, ids] = rng.uniform(0.1, 1.0, ids.size)
        P[n] /= P[n].sum()
    return Layout(f"random_P.{seed}", P, tuple([29] * K), tuple(30 + n for n in range(K)))


LAYOUTS = {
    "K3_shared": lambda: _common_then_distinct(3, [0.12], 6, True, name="K3_shared"),
    "K3_own": lambda: _common_then_distinct(3, [0.12], 6, False, name="K3_own"),
    "K2_own": lambda: _common_then_distinct(2, [0.12], 6, False, name="K2_own"),
    "sym_multi_ct": lambda: _common_then_distinct(3, [0.03, 0.06, 0.1], 6, True, name="sym_multi_ct"),
    "asym_2ct": _asym_2ct,
    "thm_hyp.ct1": lambda: _thm_hyp("ct1"),
    "thm_hyp.ct2": lambda: _thm_hyp("ct2"),
    "synsmall.code": lambda: _synsmall("code"),
    "synsmall.shared_last": lambda: _synsmall("shared_last"),
    "synsmall.paper_literal": lambda: _synsmall("paper_literal"),
    "synmedium.1": lambda: synmedium(1),
    "synmedium.10": lambda: synmedium(10),
}


def layout(name: str) -> Layout:
    """The named layout of spec §2.10 (``K3_shared``, ``thm_hyp.ct1``, ``synsmall.code``, …)."""
    if name not in LAYOUTS:
        raise unknown_name("ss layout", name, LAYOUTS)
    return LAYOUTS[name]()


def features(lay: Layout, Z: np.ndarray | None = None) -> np.ndarray:
    """F = [f₁, …, f_K] (M × K): f_n = c̃_n/‖c̃_n‖, c̃_n = ℙ(·|n) ∘ e^{z_{ψ(n)}} (Z = 0 when omitted)."""
    F = np.empty((lay.M, lay.K))
    for n in range(lay.K):
        row = lay.P[n] if Z is None else lay.P[n] * np.exp(Z[lay.psi[n]] - np.max(Z[lay.psi[n]]))
        F[:, n] = row / np.linalg.norm(row)
    return F


def setting_quantities(lay: Layout, Z: np.ndarray | None = None) -> dict:
    """Supports, G_DT, G_CT, E = FᵀF − I, its spectrum (|λ₁| >= …) and the margins of Assumption 2."""
    support = [set(np.flatnonzero(lay.P[n]).tolist()) for n in range(lay.K)]
    counts = np.sum(lay.P > 0, axis=0)
    common = sorted(np.flatnonzero(counts > 1).tolist())
    distinct = [sorted(l for l in support[n] if counts[l] == 1) for n in range(lay.K)]
    F = features(lay, Z)
    E = F.T @ F - np.eye(lay.K)
    holds, margins, lam = assumption2(E, lay.M)
    return {
        "M": lay.M, "K": lay.K, "psi": list(lay.psi), "next_token": list(lay.next_token),
        "support_sizes": [len(s) for s in support], "G_CT": common, "G_DT_sizes": [len(d) for d in distinct],
        "E": E.tolist(), "spectrum": lam.tolist(), "assumption2_margins": margins, "assumption2_holds": holds,
    }


def assumption2(E: np.ndarray, M: int) -> tuple[bool, dict[str, float], np.ndarray]:
    """Assumption 2 as the toolkit reads it at E = FᵀF − I (K × K) and vocabulary size M: |λ₁(E)| < 1/K and
    min_i |λ_i(E)| >= 6/√M. Returns (whether it holds, the margins with M/K², the spectrum by decreasing |λ|)."""
    K = E.shape[0]
    lam = np.linalg.eigvalsh(E)
    lam = lam[np.argsort(-np.abs(lam))]
    margins = {
        "M_over_K2": M / K**2,
        "one_over_K_minus_abs_lambda1": 1 / K - abs(lam[0]),
        "min_abs_lambda_minus_6_over_sqrtM": float(np.min(np.abs(lam)) - 6 / np.sqrt(M)),
    }
    holds = bool(margins["one_over_K_minus_abs_lambda1"] > 0 and margins["min_abs_lambda_minus_6_over_sqrtM"] >= 0)
    return holds, margins, lam
