"""The softmax Jacobian of Eq. (17) and Lemma G.1 (``co.cf.softmax_jacobian``; spec §4), at n = 4."""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.word_cooccurrence.symbols import t

N = 4
xs = sp.symbols("x1:5", real=True)
#: s(t) = c + e·t + f·t² (a generic smooth path: its derivative has free coefficients)
cs, es, fs = sp.symbols("c1:5", real=True), sp.symbols("e1:5", real=True), sp.symbols("f1:5", real=True)


def _softmax(v) -> list[sp.Expr]:
    total = sp.Add(*[sp.exp(u) for u in v])
    return [sp.exp(u) / total for u in v]


def item_softmax_jacobian() -> Item:
    """co.cf.softmax_jacobian — Eq. (17) (L7707–L7722), Lemma G.1 (L7723–L7736): ∂p_i/∂x_j = p_i(𝕀(i=j) − p_j),
    J = diag(p) − ppᵀ, and ∂p(s(t))/∂t = J(p(s))∂s/∂t.

    Derived: SymPy's derivatives of the softmax at n = 4, every (i, j); the chain rule along s(t) = c + et + ft²."""
    p = _softmax(xs)
    box = Domain({v: Interval(-3, 3) for v in xs})
    formulas = []
    for i in range(N):
        for j in range(N):
            formulas.append(Formula(
                f"co.cf.softmax_jacobian.d{i + 1}{j + 1}", "Eq. (17)", p[i] * ((1 if i == j else 0) - p[j]),
                sp.diff(p[i], xs[j]), box, description=f"∂p_{i + 1}/∂x_{j + 1}",
                latex=r"\frac{\partial p(x)_i}{\partial x_j} = p(x)_i(\mathbb{I}(i=j) - p(x)_j)"))
    path = [c + e * t + f * t**2 for c, e, f in zip(cs, es, fs, strict=True)]
    q = _softmax(path)
    along = Domain({**{v: Interval(-2, 2) for v in (*cs, *es, *fs)}, t: Interval(0, 2)})
    for i in range(N):
        printed = sum((q[i] * ((1 if i == j else 0) - q[j])) * sp.diff(path[j], t) for j in range(N))
        formulas.append(Formula(
            f"co.cf.softmax_jacobian.chain{i + 1}", "Lemma G.1", printed, sp.diff(q[i], t), along,
            description=f"component {i + 1} of ∂p(s(t))/∂t",
            latex=r"\frac{\partial p(s(t))}{\partial t} = (\mathrm{diag}(p(s)) - p(s)p(s)^\top)\frac{\partial s(t)}{\partial t}"))
    return Item("co.cf.softmax_jacobian", "Eq. (17), Lemma G.1 (L7707–L7736)", "", "the softmax Jacobian",
                formulas=formulas)
