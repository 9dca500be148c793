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


def matching_triangle_E(K: int, weight: float) -> np.ndarray:
    r"""The zero-diagonal non-negative E with the flattest spectrum found for Assumption 2 (``ss.dv.asm2_feasibility``).

    Even K: a perfect matching {(0,1), (2,3), …} with every weight a = ``weight``; spectrum ±a (each K/2 times),
    so min|λ_i| = |λ₁| = a. Odd K: the matching on the first K − 3 indices with weight 2a and a triangle on the
    last three with weight a; spectrum ±2a ((K−3)/2 times each), 2a, −a, −a, so |λ₁| = 2a and min|λ_i| = a."""
    if not isinstance(K, int) or K < 2:
        raise InvalidArgument(f"K must be an integer >= 2 (classes); got {K!r}")
    if not weight > 0:
        raise InvalidArgument(f"weight must be > 0 (an overlap); got {weight!r}")
    E = np.zeros((K, K))
    paired = K if K % 2 == 0 else K - 3
    pair_weight = weight if K % 2 == 0 else 2 * weight
    for i in range(0, paired, 2):
        E[i, i + 1] = E[i + 1, i] = pair_weight
    if K % 2:
        for i, j in ((K - 3, K - 2), (K - 3, K - 1), (K - 2, K - 1)):
            E[i, j] = E[j, i] = weight
    return E


def gram_features(E: np.ndarray, M: int) -> np.ndarray:
    r"""Non-negative unit columns f_1, …, f_K ∈ ℝ^M with FᵀF = I + E, for E symmetric, zero-diagonal,
    non-negative with every row sum <= 1 (Kaykobad's construction: such I + E is completely positive).

    One coordinate per pair n < n' with E_nn' > 0 holds √E_nn' in both f_n and f_n'; one private coordinate
    per n holds √(1 − Σ_n' E_nn'). Needs M >= K + (number of positive pairs)."""
    E = np.asarray(E, dtype=float)
    K = E.shape[0]
    if E.shape != (K, K) or not np.allclose(E, E.T, rtol=0, atol=0) or np.any(np.diag(E) != 0) or np.any(E < 0):
        raise InvalidArgument("E must be a symmetric matrix with zero diagonal and non-negative entries")
    rows = E.sum(axis=1)
    if np.any(rows > 1):
        raise InvalidArgument(f"every row sum of E must be <= 1 (diagonal dominance of I + E); got max {rows.max()!r}")
    pairs = [(i, j) for i in range(K) for j in range(i + 1, K) if E[i, j] > 0]
    if M < K + len(pairs):
        raise InvalidArgument(f"M must be >= K + (positive pairs of E) = {K + len(pairs)} for this construction; "
                              f"got M={M!r}")
    F = np.zeros((M, K))
    for coordinate, (i, j) in enumerate(pairs):
        F[coordinate, i] = F[coordinate, j] = np.sqrt(E[i, j])
    for n in range(K):
        F[len(pairs) + n, n] = np.sqrt(1.0 - rows[n])
    return F
