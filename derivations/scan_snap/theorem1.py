r"""Theorem 1's coefficients (Eqns 83, 86–89): ι_n and β_nn' read off the expansion of Eqn 83.

Definition (spec ``ss.dv.thm1_coefficients``): g = (1+σ)γ F(I − E')(I + Θ)q^{(n)},
q^{(n)} = q₀𝟏 + (q₁ − q₀)e_n ∈ ℝ^K, Θ = diag(θ_k). In the basis f₁, …, f_K the coefficient of f_k is the
k-th entry of c = (1+σ)(I − E')(I + Θ)q^{(n)}; Eqn 9 writes g = γ(ι_n f_n − Σ_{n'≠n} β_nn' f_n'), so
ι_n = c_n and β_nn' = −c_n'. Also with (I + E') in place of (I − E') (``eprime=appB1``: the same g written
with E'_{B1} = (I + E)^{-1} − I = −E'). E' is a symbolic symmetric K × K matrix (K = 4), n = 1.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval

K_SYMBOLIC = 4


def _objects(K: int = K_SYMBOLIC):
    Ep = sp.zeros(K, K)
    symbols = []
    for i in range(K):
        for j in range(i, K):
            sym = sp.Symbol(f"Ep{i + 1}{j + 1}", real=True)
            symbols.append(sym)
            Ep[i, j] = Ep[j, i] = sym
    theta = [sp.Symbol(f"theta{k + 1}", real=True) for k in range(K)]
    q0, q1, sigma = sp.Symbol("q0", real=True), sp.Symbol("q1", real=True), sp.Symbol("sigma", real=True)
    return Ep, symbols, theta, q0, q1, sigma


def coefficients(reading: str = "lemma14", K: int = K_SYMBOLIC, n: int = 0):
    """The vector c of the module docstring (SymPy, expanded) and its symbols."""
    Ep, symbols, theta, q0, q1, sigma = _objects(K)
    q = sp.Matrix([q1 if k == n else q0 for k in range(K)])
    middle = sp.eye(K) - Ep if reading == "lemma14" else sp.eye(K) + Ep
    c = ((1 + sigma) * middle * sp.diag(*[1 + t for t in theta]) * q).applyfunc(sp.expand)
    return c, (Ep, symbols, theta, q0, q1, sigma)


def printed_iota(Ep, theta, q0, q1, sigma, n: int = 0, K: int = K_SYMBOLIC) -> sp.Expr:
    """Eqn 86: (1+σ)[q₁(1+θ_n)(1 − E'_nn) − q₀ Σ_{k≠n}(1+θ_k)E'_kn]."""
    return (1 + sigma) * (q1 * (1 + theta[n]) * (1 - Ep[n, n])
                          - q0 * sp.Add(*[(1 + theta[k]) * Ep[k, n] for k in range(K) if k != n]))


def printed_beta(Ep, theta, q0, q1, sigma, m: int, n: int = 0, K: int = K_SYMBOLIC) -> sp.Expr:
    """Eqn 88: (1+σ)[q₁(1+θ_n)E'_nn' + q₀((1+θ_n') + Σ_{k≠n}(1+θ_k)E'_kn')], n' = m."""
    return (1 + sigma) * (q1 * (1 + theta[n]) * Ep[n, m]
                          + q0 * ((1 + theta[m]) + sp.Add(*[(1 + theta[k]) * Ep[k, m] for k in range(K) if k != n])))


def _domain(symbols, theta, q0, q1, sigma) -> Domain:
    ranges = {s: Interval(-0.3, 0.3) for s in symbols}
    ranges.update({t: Interval(-0.2, 0.2) for t in theta})
    ranges.update({q0: Interval(-0.1, 0), q1: Interval(1, 1.1), sigma: Interval(-0.2, 0.2)})
    return Domain(ranges)


def _item(item_id: str, label: str, which: str) -> Item:
    formulas = []
    for reading in ("lemma14", "appB1"):
        c, (Ep, symbols, theta, q0, q1, sigma) = coefficients(reading)
        dom = _domain(symbols, theta, q0, q1, sigma)
        tag = {"eprime": reading}
        if which in ("iota", "both"):
            formulas.append(Formula(f"{item_id}.eq86.{reading}", "Eqn 86", printed_iota(Ep, theta, q0, q1, sigma),
                                    c[0], dom, reading=tag, description="ι_n against the coefficient of f_n"))
        if which in ("beta", "both"):
            for m in range(1, K_SYMBOLIC):
                formulas.append(Formula(f"{item_id}.eq88.n{m + 1}.{reading}", "Eqn 88",
                                        printed_beta(Ep, theta, q0, q1, sigma, m), -c[m], dom, reading=tag,
                                        description=f"β_1{m + 1} against minus the coefficient of f_{m + 1}"))
    return Item(item_id, label, "", "Theorem 1's coefficients", formulas=formulas,
                notes=[f"K = {K_SYMBOLIC}, n = 1, E' a symbolic symmetric matrix; q₀, q₁, σ, θ_k symbolic"])


def item_iota() -> Item:
    """ss.thm1.iota — Eqn 86 against the coefficient of f_n in (1+σ)F(I − E')(I + Θ)q^{(n)}."""
    return _item("ss.thm1.iota", "Eqns 86–87", "iota")


def item_beta() -> Item:
    """ss.thm1.beta — Eqn 88 against minus the coefficient of f_n' in (1+σ)F(I − E')(I + Θ)q^{(n)}."""
    return _item("ss.thm1.beta", "Eqns 88–89", "beta")


def item_coefficients() -> Item:
    """ss.dv.thm1_coefficients — the expansion of Eqn 83 (K = 4, symbolic E', θ, q₀, q₁, σ) against Eqns 86, 88."""
    return _item("ss.dv.thm1_coefficients", "derived (Eqn 83)", "both")
