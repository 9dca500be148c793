"""Projections of the gradient on token embeddings (rl.cf.gradient_projections, rl.cf.gradient_projections_b1).

Each printed line is built literally as the sum over the samples its index set names, with the
printed factors (2^{-L} or none, y_n or none, 1/λ or none); the derived side is the matching
coordinate of ``diff`` of the enumerated loss: entry idx(ℓ, w) of ∇_u L and entry
(idx(ℓ, ·), idx(L, w)) of ∇_W L. Every (ℓ, L, w) with 1 <= ℓ <= L <= L_max is registered.

The W-lines are also compared with λ ∂L/∂W (= ∂L̃/∂K, K = W/λ) as a diagnostic: it says
whether a line is right up to the factor 1/λ of ∇_W L (which the printed W-lines omit).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from derivations.core import Formula, Item
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language.symbols import J_prime, lam, parameter_domain

Sample = D.Sample


def _sum(dataset: D.Dataset, length: int | None, keep: Callable[[Sample], bool],
         term: Callable[[Sample], sp.Expr]) -> sp.Expr:
    """Σ over the samples of ``length`` (all lengths if None) that satisfy ``keep``."""
    return sp.Add(*[term(s) for s in dataset.samples if (length is None or s.length == length) and keep(s)])


def _jp(s: Sample) -> sp.Expr:
    """J'_{(n,t)} = -1/(1 + exp(y_n T_t(X^{(n)})))."""
    return J_prime(s.label * M.output(s))


def _phi(s: Sample, pos: int) -> sp.Expr:
    return M.attention(s)[pos - 1]


def _u(s: Sample, pos: int) -> sp.Symbol:
    return M.u_symbol(pos, s.chars[pos - 1])


def printed_u_line(ds: D.Dataset, pos: int, w: str, weighted: bool = True) -> sp.Expr:
    """⟨∇_u L, E_ℓ^w⟩ = Σ_{L≥ℓ} [2^{-L}] Σ_{n∈I_L, C(x_ℓ)=w} J' y_n φ_ℓ (App. A.1 with 2^{-L}; B.1 without)."""
    def term(s):
        return (s.weight if weighted else 1) * _jp(s) * s.label * _phi(s, pos)
    return _sum(ds, None, lambda s: s.length >= pos and s.chars[pos - 1] == w, term)


def printed_W_line2(ds: D.Dataset, L: int, w: str) -> sp.Expr:
    """⟨E_1^w, (∇_W L)E_L^w⟩ = 2^{-L} Σ_{C(x_1)=C(x_L)=w} J' φ_1 (u^⊤x_1 - T) (App. A.1 line 2; B.1 before Eq. (5))."""
    return _sum(ds, L, lambda s: s.chars[0] == w and s.chars[-1] == w,
                lambda s: s.weight * _jp(s) * _phi(s, 1) * (_u(s, 1) - M.output(s)))


def printed_W_line3(ds: D.Dataset, L: int, w: str) -> sp.Expr:
    """⟨E_1^{-w}, (∇_W L)E_L^w⟩ = -2^{-L} Σ_{C(x_1)≠C(x_L)=w} J' φ_1 (u^⊤x_1 - T) (App. A.1 line 3)."""
    return _sum(ds, L, lambda s: s.chars[0] != w and s.chars[-1] == w,
                lambda s: -s.weight * _jp(s) * _phi(s, 1) * (_u(s, 1) - M.output(s)))


def printed_W_line4(ds: D.Dataset, L: int, pos: int, w: str) -> sp.Expr:
    """⟨E_ℓ^w, (∇_W L)E_L^w⟩ = 2^{-L} Σ_{C(x_1)=C(x_L)=w} J' y φ_ℓ (u^⊤x_ℓ - T) (App. A.1 line 4, as printed)."""
    return _sum(ds, L, lambda s: s.chars[0] == w and s.chars[-1] == w,
                lambda s: s.weight * _jp(s) * s.label * _phi(s, pos) * (_u(s, pos) - M.output(s)))


def printed_W_b1(ds: D.Dataset, L: int, pos: int, w: str) -> sp.Expr:
    """⟨E_ℓ^w, (∇_W L)E_L^w⟩ = 2^{-L} Σ_{C(x_ℓ)=C(x_L)=w} J' y φ_ℓ (u^⊤x_ℓ - T) (proof of Lemma B.1, ℓ >= 2)."""
    return _sum(ds, L, lambda s: s.chars[pos - 1] == w and s.chars[-1] == w,
                lambda s: s.weight * _jp(s) * s.label * _phi(s, pos) * (_u(s, pos) - M.output(s)))


U_LATEX = (r"\langle\nabla_{u}\mathcal L_t,E_\ell^w\rangle=\sum_{L\ge\ell}\frac1{2^L}\sum_{n\in I_L,"
           r"\mathsf C(x_\ell^{(n)})=w}J'_{(n,t)}y_n\varphi_\ell^{(n,t)}")
U_B1_LATEX = (r"\langle\nabla_u\mathcal L_t,E_\ell^w\rangle=\sum_{L\ge\ell}\sum_{n\in I_L,\mathsf C(x_\ell^{(n)})=w}"
              r"J'_{(n,t)}y_n\varphi_\ell^{(n,t)}")
LINE2_LATEX = (r"\langle E_1^w,(\nabla_W\mathcal L_t)E_L^w\rangle=\frac1{2^L}\sum_{n\in I_L,\mathsf C(x_1^{(n)})="
               r"\mathsf C(x_L^{(n)})=w}J'_{(n,t)}\varphi_1^{(n,t)}\big(u_t^\top x_1^{(n)}-\mathsf T(X^{(n)})\big)")
LINE3_LATEX = (r"\langle E_1^{-w},(\nabla_W\mathcal L_t)E_L^w\rangle=-\frac1{2^L}\sum_{n\in I_L,\mathsf C(x_1^{(n)})"
               r"\ne\mathsf C(x_L^{(n)})=w}J'_{(n,t)}\varphi_1^{(n,t)}\big(u_t^\top x_1^{(n)}-\mathsf T(X^{(n)})\big)")
LINE4_LATEX = (r"\langle E_\ell^w,(\nabla_W\mathcal L_t)E_L^w\rangle=\frac1{2^L}\sum_{n\in I_L,\mathsf C(x_1^{(n)})="
               r"\mathsf C(x_L^{(n)})=w}J'_{(n,t)}y_n\varphi_\ell^{(n,t)}\big(u_t^\top x_\ell^{(n)}-\mathsf T(X^{(n)})"
               r"\big)")
B1_W_LATEX = (r"\langle E_\ell^w,(\nabla_W\mathcal L_t)E_L^w\rangle=\frac1{2^L}\sum_{n\in I_L,\mathsf C(x_\ell^{(n)})="
              r"\mathsf C(x_L^{(n)})=w}J'_{(n,t)}y_n\varphi_\ell^{(n,t)}\big(u_t^\top x_\ell^{(n)}-\mathsf T_t(X_L^{(n)})"
              r"\big),\quad\forall\ell\ge2")


def _formula(fid: str, label: str, stated: sp.Expr, derived: sp.Expr, description: str, latex: str) -> Formula:
    return Formula(fid, label, stated, derived, parameter_domain(stated.free_symbols | derived.free_symbols),
                   description, latex=latex)


def _W_pair(fid: str, label: str, stated: sp.Expr, ds: D.Dataset, entry: sp.Symbol, what: str,
            latex: str) -> list[Formula]:
    """The printed W-line vs ∂L/∂W, and (diagnostic) vs λ ∂L/∂W."""
    derived = M.grad(ds, entry)
    return [_formula(fid, label, stated, derived, f"{what} vs ∂L/∂{entry.name}", latex),
            _formula(fid + ".times_lambda", label, stated, lam * derived,
                     f"diagnostic: {what} vs λ ∂L/∂{entry.name} (the line without ∇_W L's factor 1/λ)", latex)]


def item_gradient_projections(max_len: int = 4) -> Item:
    """rl.cf.gradient_projections — App. A.1, four-line projection display.

    Definition used (spec): entry idx(ℓ, w) of ∇_u L and entry (idx(ℓ, ·), idx(L, w)) of ∇_W L,
    by ``diff`` of the enumerated EP loss at L_max = ``max_len``. The fourth line prints no range
    for ℓ; every 1 <= ℓ <= L is registered (the proofs use ℓ >= 2).
    """
    ds = D.ep_dataset(max_len)
    formulas = []
    for w in D.CHARS:
        for pos in range(1, max_len + 1):
            formulas.append(_formula(f"rl.cf.gradient_projections.u.l{pos}{w}.Lmax{max_len}", "App. A.1, line 1",
                                     printed_u_line(ds, pos, w), M.grad(ds, M.u_symbol(pos, w)),
                                     f"⟨∇_u L, E_{pos}^{w}⟩ as printed vs ∂L/∂u_{pos}{w}", U_LATEX))
        for L in range(2, max_len + 1):
            tag = f"L{L}{w}.Lmax{max_len}"
            formulas += _W_pair(f"rl.cf.gradient_projections.W_line2.{tag}", "App. A.1, line 2",
                                printed_W_line2(ds, L, w), ds, M.W_symbol(1, w, L, w),
                                f"⟨E_1^{w}, ∇_W L E_{L}^{w}⟩ as printed", LINE2_LATEX)
            other = D.FLIP[w]
            formulas += _W_pair(f"rl.cf.gradient_projections.W_line3.{tag}", "App. A.1, line 3",
                                printed_W_line3(ds, L, w), ds, M.W_symbol(1, other, L, w),
                                f"⟨E_1^{other}, ∇_W L E_{L}^{w}⟩ as printed", LINE3_LATEX)
            for pos in range(1, L + 1):
                formulas += _W_pair(f"rl.cf.gradient_projections.W_line4.l{pos}.{tag}", "App. A.1, line 4",
                                    printed_W_line4(ds, L, pos, w), ds, M.W_symbol(pos, w, L, w),
                                    f"⟨E_{pos}^{w}, ∇_W L E_{L}^{w}⟩ as printed (index set C(x_1) = C(x_L) = w)",
                                    LINE4_LATEX)
    return Item("rl.cf.gradient_projections", "App. A.1", "", "gradient projections", formulas,
                         notes=["60-digit evaluation at L_max = 6 over random (u, W, λ): numerics layer "
                                "(the builders take max_len)"])


def item_gradient_projections_b1(max_len: int = 4) -> Item:
    """rl.cf.gradient_projections_b1 — proof of Lemma B.1 (and, by reference, of Lemma C.1).

    Definition used: as rl.cf.gradient_projections. The u-projections of the proof carry no
    weight 2^{-L}; its W-projection for ℓ >= 2 sums over C(x_ℓ) = C(x_L) = w; the W-projection
    for position 1 is the App. A.1 line 2 again (both versions are registered, spec §0.2 item 2).
    """
    ds = D.ep_dataset(max_len)
    formulas = []
    for w in D.CHARS:
        for pos in range(1, max_len + 1):
            which = "ℓ = 1" if pos == 1 else "ℓ >= 2"
            formulas.append(_formula(f"rl.cf.gradient_projections_b1.u.l{pos}{w}.Lmax{max_len}",
                                     f"proof of Lemma B.1, u-projection ({which})",
                                     printed_u_line(ds, pos, w, weighted=False), M.grad(ds, M.u_symbol(pos, w)),
                                     f"⟨∇_u L, E_{pos}^{w}⟩ as printed in B.1 (no 2^-L) vs ∂L/∂u_{pos}{w}",
                                     U_B1_LATEX))
        for L in range(2, max_len + 1):
            tag = f"L{L}{w}.Lmax{max_len}"
            formulas += _W_pair(f"rl.cf.gradient_projections_b1.W_pos1.{tag}",
                                "proof of Lemma B.1, display before Eq. (5)", printed_W_line2(ds, L, w), ds,
                                M.W_symbol(1, w, L, w), f"⟨E_1^{w}, ∇_W L E_{L}^{w}⟩ as printed in B.1",
                                LINE2_LATEX)
            for pos in range(2, L + 1):
                formulas += _W_pair(f"rl.cf.gradient_projections_b1.W.l{pos}.{tag}",
                                    "proof of Lemma B.1, W-projection (ℓ >= 2)", printed_W_b1(ds, L, pos, w), ds,
                                    M.W_symbol(pos, w, L, w), f"⟨E_{pos}^{w}, ∇_W L E_{L}^{w}⟩ as printed in B.1",
                                    B1_W_LATEX)
    return Item("rl.cf.gradient_projections_b1", "proof of Lemma B.1", "", "gradient projections (B.1)",
                         formulas,
                         notes=["Lemma C.1 refers back to these forms; the CoT data add no new printed line"])
