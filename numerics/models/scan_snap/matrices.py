r"""Random overlap matrices E of spec ``ss.cfg.randE`` (float64; exact binary values are used downstream).

Families (K ∈ {2, …, 7}):

* ``a``: symmetric, zero diagonal, i.i.d. 𝒰(0, 1) off-diagonal entries rescaled so that |λ₁| = u/K, u ~ 𝒰(0, 1);
* ``b``: Gram matrices FᵀF − I of normalised non-negative random vectors with small overlaps (columns
  f_n = LN(e_n + c·g_n), g_n ~ 𝒰(0, 1)^K, c ~ 𝒰(0, 0.5)), kept if |λ₁| < 1/K;
* ``c``: general symmetric E (non-zero diagonal allowed) with |λ₁| < 1: a random orthogonal eigenbasis
  and eigenvalues 𝒰(−0.95, 0.95).

Eigenvalues are ordered by magnitude, |λ₁| >= … >= |λ_K| (L405). Draws come from ``SeedSequence(seed)``
spawned per matrix, so a matrix does not depend on how many others are drawn.
"""

from __future__ import annotations

import numpy as np

from derivations.errors import InvalidArgument

FAMILIES = ("a", "b", "c")


def _family_a(rng: np.random.Generator, K: int) -> np.ndarray:
    upper = np.triu(rng.uniform(0.0, 1.0, (K, K)), 1)
    E = upper + upper.T
    top = np.max(np.abs(np.linalg.eigvalsh(E)))
    return E * (rng.uniform(0.0, 1.0) / K) / top


def _family_b(rng: np.random.Generator, K: int) -> np.ndarray:
    for _ in range(1000):
        c = rng.uniform(0.0, 0.5)
        F = np.eye(K) + c * rng.uniform(0.0, 1.0, (K, K))
        F /= np.linalg.norm(F, axis=0)
        E = F.T @ F - np.eye(K)
        np.fill_diagonal(E, 0.0)
        if np.max(np.abs(np.linalg.eigvalsh(E))) < 1.0 / K:
            return E
    raise InvalidArgument(f"family b: no Gram matrix with |λ₁| < 1/K found for K={K} in 1000 draws")


def _family_c(rng: np.random.Generator, K: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((K, K)))
    Q *= np.sign(np.diag(R))
    lam = rng.uniform(-0.95, 0.95, K)
    E = Q @ np.diag(lam) @ Q.T
    return (E + E.T) / 2


def random_E(family: str, count: int, seed: int, K_values=tuple(range(2, 8))) -> list[np.ndarray]:
    """``count`` matrices of ``family`` ('a', 'b' or 'c'), split evenly over ``K_values``."""
    if family not in FAMILIES:
        raise InvalidArgument(f"family={family!r} is not a family of ss.cfg.randE; choose one of {', '.join(FAMILIES)}")
    if count < 1:
        raise InvalidArgument(f"count={count!r} must be a positive integer (matrices to draw)")
    draw = {"a": _family_a, "b": _family_b, "c": _family_c}[family]
    children = np.random.SeedSequence([seed, FAMILIES.index(family)]).spawn(count)
    return [draw(np.random.default_rng(child), K_values[i % len(K_values)]) for i, child in enumerate(children)]
