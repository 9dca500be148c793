"""Growth of ‖W_t‖ in phase 1 (rl.cf.w_norm_growth; proof of Thm B.3).

Printed: ‖∇_W L_t‖ <= 2 Σ_{L=2}^{L_max} 2^{-L} Σ_{n∈I_L} |Σ_ℓ ⟨u_t, E_ℓ^w⟩ φ_ℓ^{(n,t)}| <= O(L_max ηt) and
‖W_t‖ <= Σ_{s<t} η‖∇_W L_s‖ <= O(L_max η²t²). The first link is compared with ``diff`` of the
enumerated loss on random (u, W, λ), as printed and with λ∇_W L (= ∇_K L, the gradient the
phase-1 step ηλ∇_W uses); the second is evaluated at t = 2, where W_2 is exact; the leading order
of ‖W_t‖ and of λ‖∇_W L_t‖ along the λ -> ∞ flow is derived from rl.cf.phase1_expansion.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.regular_language import data as D
from derivations.regular_language import early_steps as E
from derivations.regular_language import model as M
from derivations.regular_language import phase1 as P
from derivations.regular_language import series as S
from derivations.regular_language.symbols import eta, lam, parameter_domain, tau

LATEX = (r"\|\nabla_W\mathcal L_t\|\le2\sum_{L=2}^{L_{\max}}\frac1{2^L}\sum_{n\in I_L}\Big|\sum_{\ell=1}^L\langle "
         r"u_t,E_\ell^w\rangle\varphi_\ell^{(n,t)}\Big|\le O(L_{\max}\eta t),\qquad\|W_t\|\le\sum_{s=0}^{t-1}\eta\|"
         r"\nabla_W\mathcal L_s\|\le O(L_{\max}\eta^2t^2)")


def _norm(values) -> sp.Expr:
    return sp.sqrt(sp.Add(*[v**2 for v in values]))


def printed_first_link(dataset: D.Dataset) -> sp.Expr:
    """2 Σ_{L>=2} 2^{-L} Σ_n |T(X^{(n)})| (⟨u_t, E_ℓ^w⟩ read as u^⊤x_ℓ, the token score of the sample)."""
    return 2 * sp.Add(*[s.weight * sp.Abs(M.output(s)) for s in dataset.samples if s.length >= 2])


def leading_norm(dataset: D.Dataset) -> sp.Expr:
    """(τ²/32)(Σ_L m_L² (L[k_L = 1] - 1)²/L⁴)^{1/2}: the closed form of ‖W‖ at leading order in τ."""
    total = sum(sp.Rational(dataset.multiplicity(L) ** 2 * (L * (P._key(dataset, L) == 1) - 1) ** 2, L**4)
                for L in dataset.lengths() if L >= 2)
    return tau**2 / 32 * sp.sqrt(total)


def item_w_norm_growth(max_len: int = 3, ep_lengths=(4, 6), cot=((4, "2L0-1"),), order: int = 6) -> Item:
    """rl.cf.w_norm_growth — proof of Thm B.3.

    Definitions used: ∇_W L by ``diff`` of the enumerated EP loss (L_max = ``max_len``); the phase-1
    step W_{t+1} = W_t - ηλ∇_W L_t; the expansion of rl.cf.phase1_expansion. Derived: ‖W_t‖ =
    (τ²/32)(Σ_L (L[k_L=1] - 1)²/L⁴)^{1/2} + O(τ³) and λ‖∇_W L_t‖ = (τ/16)(same)^{1/2} + O(τ²) along the
    λ -> ∞ flow (τ = ηt), to compare with the printed O(L_max η²t²) and O(L_max ηt); at t = 2,
    ‖W_2‖ = ηλ‖∇_W L_1‖, so the printed ‖W_2‖ <= η‖∇_W L_1‖ needs λ <= 1.
    """
    ds = D.ep_dataset(max_len)
    grads = M.gradient(ds)
    gW = _norm([g for s, g in grads.items() if s.name.startswith("W_")])
    rhs = printed_first_link(ds)
    dom = parameter_domain(gW.free_symbols | rhs.free_symbols)
    sym_point = P.symmetric_point(ds)
    gW_sym, rhs_sym = gW.xreplace(sym_point), rhs.xreplace(sym_point)
    inequalities = [
        RegionInequality(f"rl.cf.w_norm_growth.first_link.Lmax{max_len}", "proof of Thm B.3", gW, rhs, dom,
                         latex=LATEX, description="‖∇_W L‖ <= 2Σ 2^{-L} Σ_n |T_n|, random (u, W, λ)"),
        RegionInequality(f"rl.cf.w_norm_growth.first_link_K.Lmax{max_len}", "proof of Thm B.3 (λ∇_W reading)",
                         lam * gW, rhs, dom, latex=LATEX, description="λ‖∇_W L‖ <= 2Σ 2^{-L} Σ_n |T_n|"),
        RegionInequality(f"rl.cf.w_norm_growth.first_link_K_symmetric.Lmax{max_len}",
                         "proof of Thm B.3 (λ∇_W reading, u(ℓ,a) = u(ℓ,b))", lam * gW_sym, rhs_sym,
                         parameter_domain(gW_sym.free_symbols | rhs_sym.free_symbols), latex=LATEX,
                         description="the same on the character-symmetric subspace of Lemma B.1"),
    ]
    # the slice W = 0, μ = (m, -m, 0, …): every T_n (L >= 2) vanishes, the W-gradient does not
    m = sp.Symbol("m", real=True)
    zero_T = {**{u: 0 for u in sym_point}, M.u_symbol(1, "a"): m, M.u_symbol(1, "b"): m,
              M.u_symbol(2, "a"): -m, M.u_symbol(2, "b"): -m}
    zero_T |= {s: 0 for s in gW.free_symbols if s.name.startswith("W_")}
    for name, lhs in (("first_link", gW), ("first_link_K", lam * gW)):
        sliced, rhs_sliced = lhs.xreplace(zero_T), rhs.xreplace(zero_T)
        inequalities.append(RegionInequality(
            f"rl.cf.w_norm_growth.{name}.zero_output_slice.Lmax{max_len}", "proof of Thm B.3", sliced, rhs_sliced,
            parameter_domain(sliced.free_symbols | rhs_sliced.free_symbols | {m}), latex=LATEX,
            description="the same on W = 0, u(1,·) = m, u(2,·) = -m, other u = 0, where T_n = 0 for every L >= 2 "
                        "(needs L_max <= 3)"))
    formulas = []
    for n in ep_lengths:
        ep = D.ep_dataset(n)
        theta = E.gd_steps(ep, 2)
        W2 = _norm([v for s, v in theta[2].items() if s.name.startswith("W_")])
        g1 = _norm([v for s, v in M.gradient_at(ep, theta[1]).items() if s.name.startswith("W_")])
        tag = ep.name.replace(" ", "")
        inequalities.append(RegionInequality(f"rl.cf.w_norm_growth.second_link_t2.{tag}", "proof of Thm B.3",
                                             W2, eta * g1, E.ETA_LAM_DOMAIN, latex=LATEX,
                                             description="‖W_2‖ <= Σ_{s<2} η‖∇_W L_s‖ (‖∇_W L_0‖ = 0), exact W_2"))
        formulas.append(Formula(f"rl.cf.w_norm_growth.boosted_t2.{tag}", "derived (phase-1 step ηλ)", eta * lam * g1,
                                W2, E.ETA_LAM_DOMAIN, "‖W_2‖ = ηλ‖∇_W L_1‖ (W_1 = 0, boosted update at t = 1)"))
    datasets = [D.ep_dataset(n) for n in ep_lengths] + [D.cot_dataset(L0, c) for L0, c in cot]
    for dsx in datasets:
        series = P.expansion(dsx, order)
        entries = M.live_W_entries(dsx)
        squared = S.combine([(1, S.mul(series[e], series[e])) for e in entries])
        lead = S.leading(squared)
        derived = sp.sqrt(lead[1]) * tau ** sp.Rational(lead[0], 2) if lead else sp.Integer(0)
        rates = [[(j + 1) * c for j, c in enumerate(series[e][1:])] + [sp.Integer(0)] for e in entries]
        rate_sq = S.combine([(1, S.mul(r, r)) for r in rates])
        lead_rate = S.leading(rate_sq)
        derived_rate = sp.sqrt(lead_rate[1]) * tau ** sp.Rational(lead_rate[0], 2) if lead_rate else sp.Integer(0)
        tag = dsx.name.replace(" ", "")
        formulas += [
            Formula(f"rl.cf.w_norm_growth.leading.{tag}", "derived leading order of ‖W_t‖", leading_norm(dsx), derived,
                    P.TAU, f"‖W(τ)‖ at leading order, {dsx.name}", reading=dsx.reading),
            Formula(f"rl.cf.w_norm_growth.leading_rate.{tag}", "derived leading order of λ‖∇_W L_t‖",
                    2 * leading_norm(dsx) / tau, derived_rate, P.TAU, f"‖dW/dτ‖ at leading order, {dsx.name}",
                    reading=dsx.reading),
        ]
    return Item("rl.cf.w_norm_growth", "proof of Thm B.3", "", "growth of ‖W_t‖", formulas, inequalities,
                         notes=["sup over phase 1 of ‖∇_W L_t‖/(L_max ηt), λ‖∇_W L_t‖/(L_max ηt), ‖W_t‖/(L_max η²t²) "
                                "on G_EP, G_CoT, G_X: numerics"])
