r"""Eqn 93 and L801–L803 (Theorem 1(a), spec §6.2): Σ_{n'≠n} β_nn' f_nᵀf_n' > 0 under Assumption 2.

Each line of the printed chain is a link, beside the conclusion, L801's two premises and a derived form of
line 4; (δ₁, δ₃, σ) are drawn admissibly per matrix (:func:`draws`). The matrices are ``ss.cfg.randE`` (a),
(b), zero-diagonal probes and E(0) of ``ss.cfg.thm_hyp``; the engine (:mod:`._engine`) judges the links.
Registers ``ss.thm1a.chain93``.
"""

from __future__ import annotations

import zlib

import mpmath
import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.matrix_claims._engine import (
    COUNT,
    EPRIME,
    M_GRID,
    PAPER,
    U_INDEX,
    Batch,
    Exact,
    Group,
    Item,
    Link,
    Matrix,
    _assumption2,
    _assumption2_exact,
    _count,
    _M_values,
    _run,
    probes,
    randE,
    thm_hyp,
)


# Eqn 93


def draws(m: Matrix, count: int, seed: int) -> np.ndarray:
    """(count, 3) admissible (δ₁, δ₃M/3, σ): δ₁ ∈ [−0.1, 0.1), |δ₃| < 3/M, σ ∈ (−1, 1]."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 93, zlib.crc32(m.family.encode()), m.index]))
    u = rng.uniform(size=(count, 3))
    return np.stack([0.1 * (2 * u[:, 0] - 1), (2 * u[:, 1] - 1) * (1 - 2**-40), 1 - 2 * u[:, 2]], axis=1)


def _chain93(g: Group, reading: dict, settings: dict) -> Batch:
    K, mats = g.K, settings["matrices"]
    Ms = _M_values(g, settings)  # (n, nM)
    D = np.stack([draws(mats[i], settings["draws"], settings["seed"]) for i in g.ids])  # (n, d, 3)
    shape = (g.n, Ms.shape[1], D.shape[1], K)  # (matrix, M, draw, n)
    size = int(np.prod(shape))
    M = Ms[:, :, None, None]
    d1, s = D[:, None, :, 0, None], D[:, None, :, 2, None]
    d3 = D[:, None, :, 1, None] * 3 / M
    lam1, m2 = np.abs(g.lam[:, 0])[:, None, None, None], np.min(g.lam**2, axis=1)[:, None, None, None]
    Ep = g.eprime(reading["eprime"])
    off = 1 - np.eye(K)
    E_off = g.E * off
    bracket = (Ep[:, None, None] * (1 + d1[..., None]) + d3[..., None]) * off  # [E'_nn'(1+δ₁) + δ₃], n' ≠ n
    rowsum = np.sum(E_off, axis=2)[:, None, None, :]
    w = np.einsum("nik,nk->ni", g.u(reading["u_index"]) ** 2, g.lam**2 / (1 + g.lam))[:, None, None, :]
    Epnn = np.diagonal(Ep, axis1=1, axis2=2)[:, None, None, :]
    b = lambda a: np.broadcast_to(a, shape).ravel()  # noqa: E731
    members = {
        "S0": b(np.sum((1 + s[..., None]) * bracket * E_off[:, None, None], axis=4)),
        "S1": b((1 + s) * np.sum(bracket * E_off[:, None, None], axis=4)),
        "S2": b((1 + s) * (-(1 + d1) * Epnn + d3 * rowsum)),
        "S3": b((1 + s) * ((1 + d1) * w + d3 * rowsum)),
        "S4": b((1 + s) * ((1 + d1) / (1 - lam1) * m2 - 3 / M * K * lam1)),
        "S5": b((1 + s) * (m2 / 2 - 3 / M * K * lam1)),
        "S4_derived": b((1 + s) * ((1 + d1) / (1 + lam1) * m2 - 3 / M * (K - 1) * lam1)),
        "P1": b(np.sum(Ep * E_off, axis=2)[:, None, None, :]),
        "maxoff": b(np.max(np.where(off > 0, g.E, -np.inf), axis=1)[:, None, None, :]),
        "zero": np.zeros(size),
    }
    points = {"mat": b(g.ids[:, None, None, None]), "K": np.full(size, K), "M": b(M),
              "n": b(np.arange(K)[None, None, None, :]),
              "draw": b(np.arange(D.shape[1])[None, None, :, None]),
              "delta1": b(d1), "delta3": b(d3), "sigma": b(s)}
    base = b((1 + s) * (lam1 + 3 * K * lam1 / M) * g.kappa[:, None, None, None])
    return Batch(points, members, {"A2": b(_assumption2(g, Ms)[:, :, None, None])}, base)


def _chain93_exact(x: Exact, p: dict, reading: dict) -> dict:
    K, n, r = x.K, p["n"], reading["u_index"]
    d1, d3, s, M = (mpmath.mpf(float(p[k])) for k in ("delta1", "delta3", "sigma", "M"))
    Ep = lambda i, j: x.eprime(i, j, reading["eprime"])  # noqa: E731
    others = [m for m in range(K) if m != n]
    lam1 = abs(x.lam[0])
    m2 = min(v**2 for v in x.lam)
    rowsum = mpmath.fsum(x.E[n][m] for m in others)
    w = mpmath.fsum(x.lam[k] ** 2 / (1 + x.lam[k]) * x.u(n, k, r) ** 2 for k in range(K))
    return {
        "S0": mpmath.fsum((1 + s) * (Ep(n, m) * (1 + d1) + d3) * x.E[n][m] for m in others),
        "S1": (1 + s) * mpmath.fsum((Ep(n, m) * (1 + d1) + d3) * x.E[n][m] for m in others),
        "S2": (1 + s) * (-(1 + d1) * Ep(n, n) + d3 * rowsum),
        "S3": (1 + s) * ((1 + d1) * w + d3 * rowsum),
        "S4": (1 + s) * ((1 + d1) / (1 - lam1) * m2 - 3 / M * K * lam1),
        "S5": (1 + s) * (m2 / 2 - 3 / M * K * lam1),
        "S4_derived": (1 + s) * ((1 + d1) / (1 + lam1) * m2 - 3 / M * (K - 1) * lam1),
        "P1": mpmath.fsum(Ep(n, m) * x.E[n][m] for m in others),
        "maxoff": max(x.E[m][n] for m in others), "zero": mpmath.mpf(0),
        "regime:A2": _assumption2_exact(x, p["M"]),
    }


CHAIN93 = Item(
    links=(Link("line1", "S0", "=", "S1",
                "Eqn 93 line 1: Σβ_nn' f_nᵀf_n' = (1+σ)[Σ[E'_nn'(1+δ₁)+δ₃]E_nn']", "A2"),
           Link("line2", "S1", "=", "S2", "Eqn 93 line 2: … = (1+σ)[−(1+δ₁)E'_nn + δ₃ΣE_nn']", "A2"),
           Link("line3", "S2", "=", "S3",
                "Eqn 93 line 3: … = (1+σ)[(1+δ₁)Σλ_k²/(1+λ_k) u_nk² + δ₃ΣE_nn']", "A2"),
           Link("line4", "S3", ">=", "S4",
                "Eqn 93 line 4: … >= (1+σ)[(1+δ₁)/(1−|λ₁|) min λ_i² − (3/M)K|λ₁|]", "A2"),
           Link("line5", "S4", ">", "S5", "Eqn 93 line 5: … > (1+σ)[½ min λ_i² − (3/M)K|λ₁|]", "A2"),
           Link("line6", "S5", ">", "zero", "Eqn 93 line 6: … > 0", "A2"),
           Link("conclusion", "S0", ">", "zero", "Eqn 93's conclusion: Σ_{n'≠n} β_nn' f_nᵀf_n' > 0", "A2"),
           Link("L801_offdiag", "maxoff", ">", "zero", "L801: E_kn > 0 for some k ≠ n", "A2"),
           Link("L801_sum", "P1", ">", "zero", "L801: Σ_{n'≠n} E'_nn' f_nᵀf_n' > 0 (printed Σ_{k≠n})", "A2"),
           Link("derived_line4", "S3", ">=", "S4_derived",
                "derived: … >= (1+σ)[(1+δ₁)/(1+|λ₁|) min λ_i² − (3/M)(K−1)|λ₁|]", "A2", "derived"),
           Link("derived_positive", "S4_derived", ">", "zero",
                "derived: (1+σ)[(1+δ₁)/(1+|λ₁|) min λ_i² − (3/M)(K−1)|λ₁|] > 0", "A2", "derived")),
    flags=("eprime", "u_index"), members=_chain93, exact=_chain93_exact, headline="conclusion",
    regime_text={"A2": "Assumption 2 at M (|λ₁| < 1/K, min|λ_i| >= 6/√M, M >= 10K²) on App. B.5's E; "
                       "δ₁, δ₃, σ admissible by construction"})


# -- check ------------------------------------------------------------------------------------------------


def check_chain93(ctx) -> Outcome:
    """Eqn 93 and L801–L803 on ``ss.cfg.randE`` (a), (b), zero-diagonal probes and ``ss.cfg.thm_hyp``."""
    mats = randE(("a", "b"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=True) + thm_hyp()
    return _run(CHAIN93, mats, ctx, {"M": ctx.grid("M"), "draws": int(ctx.value("draws"))}, (
        "δ₃ is one number per draw, as printed (Eqn 89 has one δ₃ per pair n, n'); f_nᵀf_n' = E_nn'",
        "line 4 bounds Σλ_k²/(1+λ_k)u_nk² below by min λ_i²/(1−|λ₁|); the derived bound is "
        "min λ_i²/(1+|λ₁|) (1 + λ_k <= 1 + |λ₁|), which still makes the sum positive under Assumption 2",
        "L801 prints Σ_{k≠n} with summand in n'; read as Σ_{n'≠n} (R3)"))


register(Claim(
    "ss.thm1a.chain93", PAPER, "Eqn 93, L801–L803", "claim", check_chain93,
    params=(COUNT, EPRIME, U_INDEX, M_GRID, Param("draws", 5, doc="(δ₁, δ₃, σ) draws per matrix and M")),
    statement="|λ_i(E)| > 0 ∀i in Assumption 2 implies E_ki > 0 for some k ≠ i; from Lemma 16, Σ_{k≠n} "
              "E'_nn' f_nᵀf_n' > 0. Σ_{n'≠n} β_nn' f_nᵀf_n' = (1+σ)[Σ_{n'≠n}[E'_nn'(1+δ₁)+δ₃]E_nn'] = "
              "(1+σ)[−(1+δ₁)E'_nn + δ₃Σ_{n'≠n}E_nn'] = (1+σ)[(1+δ₁)Σ_k λ_k²/(1+λ_k) u_nk² + "
              "δ₃Σ_{n'≠n}E_nn'] >= (1+σ)[(1+δ₁)/(1−|λ₁|) min_i|λ_i(E)|² − (3/M)K|λ₁|] > "
              "(1+σ)[½ min_i|λ_i(E)|² − (3/M)K|λ₁|] > 0 (93)."))
