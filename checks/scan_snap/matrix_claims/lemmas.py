r"""Lemmas 13, 15, 16, 17 and Eqn 90 (spec §6.2, App. B.5): their links, members and checks.

Each item lists the printed links of a lemma (the statement and every step of its proof's chain), its members
in float64 (batched per group of matrices) and at 50 digits (one point), and its regimes; the engine
(:mod:`._engine`) judges them. Registers ``ss.lemma13.entry_bound``, ``ss.lemma15.eig_bound``,
``ss.lemma16.sign``, ``ss.lemma17.eprime_close`` and ``ss.thm1.eprime_entry_bound``, in that order.
"""

from __future__ import annotations

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
    _assumption2,
    _assumption2_exact,
    _b5,
    _b5_exact,
    _count,
    _M_values,
    _pairs,
    _run,
    _spectral,
    probes,
    randE,
)


# Lemma 13 / Eqn 74


def _lemma13(g: Group, reading: dict, settings: dict) -> Batch:
    lam1 = np.abs(g.lam[:, 0])
    uDu = _spectral(g.Q, g.lam)
    norms = np.sqrt(np.sum(g.Q**2, axis=2))
    v = _pairs(g, {"absE": np.abs(g.E), "uDu": uDu, "abs_uDu": np.abs(uDu),
                   "bound74": lam1[:, None, None] * norms[:, :, None] * norms[:, None, :], "lam1": lam1,
                   "base": np.maximum(lam1, np.abs(g.E).max(axis=(1, 2))), "b5": _b5(g).astype(float)})
    members = {k: v[k] for k in ("absE", "uDu", "abs_uDu", "bound74", "lam1")}
    regimes = {"symmetric": np.ones(len(v["mat"]), bool), "B5": v["b5"] > 0}
    return Batch({k: v[k] for k in ("mat", "i", "j", "K")}, members, regimes, v["base"])


def _lemma13_exact(x: Exact, p: dict, reading: dict) -> dict:
    i, j, K = p["i"], p["j"], x.K
    uDu = mpmath.fsum(x.Q[i][k] * x.lam[k] * x.Q[j][k] for k in range(K))
    norm = lambda a: mpmath.sqrt(mpmath.fsum(x.Q[a][k] ** 2 for k in range(K)))  # noqa: E731
    lam1 = abs(x.lam[0])
    return {"absE": abs(x.E[i][j]), "uDu": uDu, "abs_uDu": abs(uDu), "bound74": lam1 * norm(i) * norm(j),
            "lam1": lam1, "regime:symmetric": True, "regime:B5": _b5_exact(x)}


LEMMA13 = Item(
    links=(Link("statement", "absE", "<=", "lam1", "Lemma 13: |E_ij| <= |λ₁|", "symmetric"),
           Link("eq74_equality", "absE", "=", "uDu", "Eqn 74: |E_ij| = u_iᵀDu_j", "B5"),
           Link("eq74_bound", "uDu", "<=", "bound74", "Eqn 74: u_iᵀDu_j <= |λ₁|‖u_i‖‖u_j‖", "symmetric"),
           Link("eq74_ends", "absE", "<=", "bound74", "Eqn 74: |E_ij| <= |λ₁|‖u_i‖‖u_j‖", "symmetric"),
           Link("eq74_equality_all", "absE", "=", "uDu", "Eqn 74's equality on every symmetric E",
                "symmetric", "reported"),
           Link("derived_abs", "absE", "=", "abs_uDu", "derived: |E_ij| = |u_iᵀDu_j|", "symmetric",
                "derived")),
    flags=(), members=_lemma13, exact=_lemma13_exact,
    regime_text={"symmetric": "any symmetric E (Lemma 13 states no hypothesis)",
                 "B5": "App. B.5's E (L710): zero diagonal, non-negative entries"})


# Lemma 15 / Eqn 78


def _max_abs_eig(Ep: np.ndarray) -> np.ndarray:
    return np.max(np.abs(np.linalg.eigvalsh((Ep + np.swapaxes(Ep, 1, 2)) / 2)), axis=1)


def _lemma15(g: Group, reading: dict, settings: dict) -> Batch:
    lam1 = np.abs(g.lam[:, 0])
    eig = _max_abs_eig(g.eprime(reading["eprime"]))
    top = np.max(np.abs(g.lam), axis=1)
    # λ: the tightest admissible value |λ₁| and one uniform draw in [|λ₁|, 1)
    draw = np.array([np.random.default_rng(np.random.SeedSequence([settings["seed"], 15, int(i)])).uniform()
                     for i in g.ids])
    lams = np.stack([lam1, np.where(lam1 < 1, lam1 + (1 - lam1) * draw, lam1)], axis=1)  # (n, 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        printed = np.max(np.abs(-g.lam / (1 + g.lam)), axis=1)
        C = top / (1 - top)
        D = lam1[:, None] / (1 - lams)
        F = lams / (1 - lams)
    rep = lambda a: np.repeat(a[:, None], 2, axis=1).ravel()  # noqa: E731
    points = {"mat": rep(g.ids), "K": np.full(2 * g.n, g.K), "lam": lams.ravel(),
              "lam_choice": np.tile([0, 1], g.n)}
    members = {"eig_Ep": rep(eig), "printed": rep(printed), "C": rep(C), "D": D.ravel(), "F": F.ravel()}
    base = np.nan_to_num(np.maximum(rep(C), members["eig_Ep"]) * rep(g.kappa), nan=1.0, posinf=1.0)
    return Batch(points, members, {"hypothesis": rep(lam1) < 1}, base)


def _lemma15_exact(x: Exact, p: dict, reading: dict) -> dict:
    K = x.K
    Ep = mpmath.matrix([[x.eprime(i, j, reading["eprime"]) for j in range(K)] for i in range(K)])
    top = max(abs(v) for v in x.lam)
    lam1 = abs(x.lam[0])
    lam = lam1 if p["lam_choice"] == 0 else mpmath.mpf(p["lam"])  # the tight draw is λ = |λ₁| exactly
    return {"eig_Ep": max(abs(v) for v in mpmath.eigsy(Ep)[0]),
            "printed": max(abs(-v / (1 + v)) for v in x.lam), "C": top / (1 - top), "D": lam1 / (1 - lam),
            "F": lam / (1 - lam), "regime:hypothesis": lam1 < 1 and lam1 <= lam < 1}


LEMMA15 = Item(
    links=(Link("statement_first", "eig_Ep", "<=", "D", "Lemma 15: max|λ_i(E')| <= |λ₁|/(1−λ)", "hypothesis"),
           Link("statement_second", "D", "<=", "F", "Lemma 15: |λ₁|/(1−λ) <= λ/(1−λ)", "hypothesis"),
           Link("eq78_equality", "eig_Ep", "=", "printed", "Eqn 78: max|λ_i(E')| = max|−λ_i/(1+λ_i)|",
                "hypothesis"),
           Link("eq78_first", "printed", "<=", "C", "Eqn 78: max|−λ_i/(1+λ_i)| <= max|λ_i|/(1 − max|λ_i|)",
                "hypothesis"),
           Link("eq78_second", "C", "<=", "D", "Eqn 78: max|λ_i|/(1 − max|λ_i|) <= |λ₁|/(1−λ)",
                "hypothesis")),
    flags=("eprime",), members=_lemma15, exact=_lemma15_exact, headline="statement_first",
    regime_text={"hypothesis": "|λ₁| <= λ < 1 (λ = |λ₁| and λ ~ 𝒰[|λ₁|, 1))"})


# Lemma 17 / Eqn 80


def _lemma17(g: Group, reading: dict, settings: dict) -> Batch:
    lam1s = g.lam[:, 0]
    lam1 = np.abs(lam1s)
    u = g.u(reading["u_index"])
    Ep = g.eprime(reading["eprime"])
    with np.errstate(divide="ignore", invalid="ignore"):
        c = lam1**2 / (1 - lam1)
        first = _spectral(u, g.lam) - _spectral(u, g.lam / (1 + g.lam))
        second = _spectral(u, g.lam**2 / (1 + g.lam))
    sq = np.sum(u**2, axis=2)
    inside = (lam1 < 1) if reading["hypothesis"] == "absolute" else (lam1s < 1)
    v = _pairs(g, {
        "L0": np.abs(Ep - g.E), "L1": np.abs(first), "L2": np.abs(second),
        "L3": c[:, None, None] * np.einsum("nik,njk->nij", np.abs(u), np.abs(u)),
        "L4": c[:, None, None] * np.sqrt(sq[:, :, None] * sq[:, None, :]), "L5": c,
        "base": (np.abs(g.E).max(axis=(1, 2)) + np.abs(Ep).max(axis=(1, 2))) * g.kappa,
        "inside": inside.astype(float)})
    members = {k: v[k] for k in ("L0", "L1", "L2", "L3", "L4", "L5")}
    return Batch({k: v[k] for k in ("mat", "i", "j", "K")}, members, {"hypothesis": v["inside"] > 0},
                 np.nan_to_num(v["base"], nan=1.0, posinf=1.0))


def _lemma17_exact(x: Exact, p: dict, reading: dict) -> dict:
    n, m, K, r = p["i"], p["j"], x.K, reading["u_index"]
    lam1 = abs(x.lam[0])
    c = lam1**2 / (1 - lam1)
    u = lambda i, k: x.u(i, k, r)  # noqa: E731
    spectral = lambda w: mpmath.fsum(w(x.lam[k]) * u(n, k) * u(m, k) for k in range(K))  # noqa: E731
    norms = mpmath.fsum(u(n, k) ** 2 for k in range(K)) * mpmath.fsum(u(m, k) ** 2 for k in range(K))
    inside = lam1 < 1 if reading["hypothesis"] == "absolute" else x.lam[0] < 1
    return {"L0": abs(x.eprime(n, m, reading["eprime"]) - x.E[n][m]),
            "L1": abs(spectral(lambda v: v) - spectral(lambda v: v / (1 + v))),
            "L2": abs(spectral(lambda v: v**2 / (1 + v))),
            "L3": c * mpmath.fsum(abs(u(n, k)) * abs(u(m, k)) for k in range(K)),
            "L4": c * mpmath.sqrt(norms), "L5": c, "regime:hypothesis": bool(inside)}


LEMMA17 = Item(
    links=(Link("statement", "L0", "<=", "L5", "Lemma 17: |E'_nn' − E_nn'| <= |λ₁|²/(1−|λ₁|)", "hypothesis"),
           Link("eq80_line1", "L0", "=", "L1",
                "Eqn 80: |E'_nn' − E_nn'| = |Σλ_k u_nk u_n'k − Σλ_k/(1+λ_k) u_nk u_n'k|", "hypothesis"),
           Link("eq80_line2", "L1", "=", "L2", "Eqn 80: … = |Σλ_k²/(1+λ_k) u_nk u_n'k|", "hypothesis"),
           Link("eq80_line3", "L2", "<=", "L3", "Eqn 80: … <= |λ₁|²/(1−|λ₁|)Σ|u_nk||u_n'k|", "hypothesis"),
           Link("eq80_line4", "L3", "<=", "L4", "Eqn 80: … <= |λ₁|²/(1−|λ₁|)√(Σu_nk² Σu_n'k²)", "hypothesis"),
           Link("eq80_line5", "L4", "=", "L5", "Eqn 80: … = |λ₁|²/(1−|λ₁|)", "hypothesis")),
    flags=("eprime", "u_index", "hypothesis"), members=_lemma17, exact=_lemma17_exact,
    regime_text={"hypothesis": "\"λ₁ < 1\": |λ₁| < 1 (absolute) or λ₁ < 1 (signed; λ₁ the eigenvalue of "
                               "largest magnitude)"})


# Eqn 90


def _eqn90(g: Group, reading: dict, settings: dict) -> Batch:
    lam1 = np.abs(g.lam[:, 0])
    Ep = g.eprime(reading["eprime"])
    eig = _max_abs_eig(Ep)
    K = g.K
    v = _pairs(g, {"A": np.abs(Ep), "B": eig, "C": lam1 / (1 - 1 / K), "D": np.full(g.n, 1 / (K - 1)),
                   "base": np.maximum(eig, lam1) * g.kappa, "inside": (lam1 < 1 / K).astype(float)})
    return Batch({k: v[k] for k in ("mat", "i", "j", "K")}, {k: v[k] for k in "ABCD"},
                 {"hypothesis": v["inside"] > 0}, v["base"])


def _eqn90_exact(x: Exact, p: dict, reading: dict) -> dict:
    K = x.K
    Ep = mpmath.matrix([[x.eprime(i, j, reading["eprime"]) for j in range(K)] for i in range(K)])
    lam1, one = abs(x.lam[0]), mpmath.mpf(1)
    return {"A": abs(Ep[p["i"], p["j"]]), "B": max(abs(v) for v in mpmath.eigsy(Ep)[0]),
            "C": lam1 / (1 - one / K), "D": one / (K - 1), "regime:hypothesis": lam1 < one / K}


EQN90 = Item(
    links=(Link("statement", "A", "<=", "D", "Eqn 90: |E'_kn| <= 1/(K−1)", "hypothesis"),
           Link("first", "A", "<=", "B", "Eqn 90: |E'_kn| <= max|λ_i(E')|", "hypothesis"),
           Link("second", "B", "<=", "C", "Eqn 90: max|λ_i(E')| <= |λ₁|/(1 − 1/K)", "hypothesis"),
           Link("third", "C", "<=", "D", "Eqn 90: |λ₁|/(1 − 1/K) <= 1/(K−1)", "hypothesis")),
    flags=("eprime",), members=_eqn90, exact=_eqn90_exact,
    regime_text={"hypothesis": "|λ₁| < 1/K (Assumption 2, used through Lemma 15 with λ = 1/K)"})


# Lemma 16 (Assumption 2's regime: _engine)


def _lemma16(g: Group, reading: dict, settings: dict) -> Batch:
    K = g.K
    Ms = _M_values(g, settings)
    inside = _assumption2(g, Ms)  # (n, nM)
    diag = np.diagonal(g.eprime(reading["eprime"]), axis1=1, axis2=2)  # (n, K)
    premise = np.any(g.E * (1 - np.eye(K)) > 0, axis=1)  # column i: some k ≠ i with E_ki > 0
    shape = (g.n, Ms.shape[1], K)
    size = int(np.prod(shape))
    b = lambda a: np.broadcast_to(a, shape).ravel()  # noqa: E731
    points = {"mat": b(g.ids[:, None, None]), "K": np.full(size, K), "i": b(np.arange(K)[None, None, :]),
              "M": b(Ms[:, :, None])}
    members = {"Ep_ii": b(diag[:, None, :]), "zero": np.zeros(size)}
    regimes = {"A2": b(inside[:, :, None]), "A2_premise": b(inside[:, :, None] & premise[:, None, :])}
    return Batch(points, members, regimes, b((np.abs(g.lam[:, 0]) * g.kappa)[:, None, None]))


def _lemma16_exact(x: Exact, p: dict, reading: dict) -> dict:
    i = p["i"]
    inside = _assumption2_exact(x, p["M"])
    premise = any(x.E[k][i] > 0 for k in range(x.K) if k != i)
    return {"Ep_ii": x.eprime(i, i, reading["eprime"]), "zero": mpmath.mpf(0), "regime:A2": inside,
            "regime:A2_premise": inside and premise}


LEMMA16 = Item(
    links=(Link("nonpositive", "Ep_ii", "<=", "zero", "Lemma 16: E'_ii <= 0", "A2"),
           Link("negative", "Ep_ii", "<", "zero", "Lemma 16: E'_ii < 0 if E_ki > 0 for some k ≠ i",
                "A2_premise")),
    flags=("eprime",), members=_lemma16, exact=_lemma16_exact, headline="nonpositive",
    regime_text={"A2": "Assumption 2 at M (|λ₁| < 1/K, min|λ_i| >= 6/√M, M >= 10K²) on App. B.5's E",
                 "A2_premise": "Assumption 2 and some k ≠ i with E_ki > 0"})


# -- checks -----------------------------------------------------------------------------------------------


def check_lemma13(ctx) -> Outcome:
    """Lemma 13 and Eqn 74 on ``ss.cfg.randE`` (a)–(c) and the probes (Lemma 13 has no hypothesis)."""
    mats = randE(("a", "b", "c"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=False)
    return _run(LEMMA13, mats, ctx, {}, (
        "Eqn 74's first member |E_ij| = u_iᵀDu_j holds as printed only when E_ij >= 0 (App. B.5's E, L710); "
        "on a general symmetric E the equality needs |u_iᵀDu_j| (derived link)",))


def check_lemma15(ctx) -> Outcome:
    """Lemma 15 and Eqn 78 at λ = |λ₁| and λ ~ 𝒰[|λ₁|, 1), both E' readings."""
    mats = randE(("a", "b", "c"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=False)
    return _run(LEMMA15, mats, ctx, {})


def check_lemma17(ctx) -> Outcome:
    """Lemma 17 and Eqn 80; the hypothesis "λ₁ < 1" read as |λ₁| < 1 (canonical) and signed."""
    mats = randE(("a", "b", "c"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=False)
    return _run(LEMMA17, mats, ctx, {}, (
        "canonical reading of the hypothesis: |λ₁| < 1, on which the proof's Lemma 14 (|λ₁| <= λ < 1) and "
        "the bound's 1 − |λ₁| rest; the signed reading admits λ₁ <= −1 (I + E singular at λ₁ = −1, a "
        "negative bound below), exercised by the probes",))


def check_eqn90(ctx) -> Outcome:
    """Eqn 90 under |λ₁| < 1/K."""
    mats = randE(("a", "b", "c"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=False)
    return _run(EQN90, mats, ctx, {})


def check_lemma16(ctx) -> Outcome:
    """Lemma 16 on ``ss.cfg.randE`` (a), (b) and zero-diagonal probes outside Assumption 2."""
    mats = randE(("a", "b"), _count(ctx), ctx.seed) + probes(ctx.seed, zero_diagonal=True)
    return _run(LEMMA16, mats, ctx, {"M": ctx.grid("M")})


register(Claim(
    "ss.lemma13.entry_bound", PAPER, "Lemma 13, Eqn 74 (L712–L718)", "claim", check_lemma13, params=(COUNT,),
    statement="Lemma 13: max_{i,j∈[K]}(|E_ij|) <= |λ₁|. Proof: |E_ij| = u_iᵀDu_j <= |λ₁|·‖u_i‖₂‖u_j‖₂, "
              "∀i, j ∈ [K] (74)."))
register(Claim(
    "ss.lemma15.eig_bound", PAPER, "Lemma 15, Eqn 78 (L732–L738)", "claim", check_lemma15,
    params=(COUNT, EPRIME),
    statement="Lemma 15: If |λ₁| <= λ < 1, then max_{i∈[K]}|λ_i(E')| <= |λ₁|/(1−λ) <= λ/(1−λ). "
              "Eqn 78: max|λ_i(E')| = max|−λ_i/(1+λ_i)| <= max|λ_i|/(1 − max|λ_i|) <= |λ₁|/(1−λ)."))
register(Claim(
    "ss.lemma16.sign", PAPER, "Lemma 16 (L740–L746)", "claim", check_lemma16, params=(COUNT, EPRIME, M_GRID),
    statement="Assume that Assumption 2 holds, then all the diagonal elements of E' are non-positive, i.e., "
              "E'_ii <= 0, ∀i ∈ [K]. Further, if there exist any k ≠ i ∈ [K] such that E_ki > 0, then "
              "E'_ii < 0."))
register(Claim(
    "ss.lemma17.eprime_close", PAPER, "Lemma 17, Eqn 80 (L748–L756)", "claim", check_lemma17,
    params=(COUNT, EPRIME, U_INDEX,
            Param("hypothesis", "absolute", quick=("absolute", "signed"), choices=("absolute", "signed"),
                  doc="reading of the printed hypothesis \"λ₁ < 1\"")),
    statement="Lemma 17: If λ₁ < 1, then |E'_nn' − E_nn'| <= |λ₁|²(1 − |λ₁|)^{-1}. (80): |E'_nn' − E_nn'| "
              "= |Σλ_k u_nk u_n'k − Σλ_k/(1+λ_k) u_nk u_n'k| = |Σλ_k²/(1+λ_k) u_nk u_n'k| <= "
              "|λ₁|²/(1−|λ₁|) Σ|u_nk||u_n'k| <= |λ₁|²/(1−|λ₁|) √(Σ|u_nk|² Σ|u_n'k|²) = |λ₁|²/(1−|λ₁|)."))
register(Claim(
    "ss.thm1.eprime_entry_bound", PAPER, "Eqn 90 (L789–L791)", "claim", check_eqn90, params=(COUNT, EPRIME),
    statement="|E'_kn| <= max_{i∈[K]}|λ_i(E')| <= |λ₁|/(1 − 1/K) <= 1/(K−1) (90)."))
