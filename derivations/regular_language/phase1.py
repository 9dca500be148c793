"""The λ -> ∞ phase-1 map and its small-τ expansion (rl.cf.lambda_inf_recursion, rl.cf.phase1_expansion).

One phase-1 step moves W by -ηλ∇_W L. Because L depends on W only through K = W/λ,
λ ∂L/∂W(u, W; λ) = ∂L/∂W(u, W/λ; 1) (the temperature-1 gradient at K = W/λ; registered as the
``homogeneity`` Formulas), and at fixed W the limit λ -> ∞ is that gradient at K = 0: uniform
attention. So Φ_∞ is: u ← u - η ∇_u L(u, 0; 1), W ← W - η ∇_W L(u, 0; 1), a map in u alone.

On the character-symmetric subspace u(ℓ, a) = u(ℓ, b) = μ_ℓ (Lemma B.1, rl.cf.reduced_model) with
T_L = L^{-1} Σ_{j<=L} μ_j and key position k = k_L, the map is, in closed form (the ``stated`` side),

    Δμ_ℓ = η [ [ℓ=1] m_1 f(μ_1)/2 + Σ_{L>=max(ℓ,2)} m_L (f(T_L) - f(-T_L))/(4L) ],
    ΔS_L^w(ℓ, c) = η m_L (μ_ℓ - T_L) ρ_L(ℓ, c) / L,

with ρ = f(T)/4 at (k, w), -f(-T)/4 at (k, -w), (f(T) - f(-T))/4 at (L, w), 0 at (L, -w) (never
live) and (f(T) - f(-T))/8 elsewhere; f(x) = 1/(1+e^x), f(x) - f(-x) = -tanh(x/2), m_L the number
of loss terms holding length L. The ``derived`` side is the enumerated gradient (``diff``) at K = 0.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language import series as S
from derivations.predicates import Predicate
from derivations.regular_language.symbols import H, eta, f, lam, parameter_domain, tau


@functools.cache
def mu(position: int) -> sp.Symbol:
    """μ_ℓ, the common token score ⟨u, E_ℓ^a⟩ = ⟨u, E_ℓ^b⟩."""
    return sp.Symbol(f"mu_{position}", real=True)


def T_mean(length: int) -> sp.Expr:
    """T_L = L^{-1} Σ_{j<=L} μ_j, the output of a length-L sample under uniform attention."""
    return sp.Add(*[mu(j) for j in range(1, length + 1)]) / length


def symmetric_point(dataset: D.Dataset) -> dict:
    """u(ℓ, c) -> μ_ℓ."""
    return {M.u_symbol(p, c): mu(p) for p in range(1, dataset.max_len + 1) for c in D.CHARS}


def _key(dataset: D.Dataset, length: int) -> int:
    return D.key_position(length, dataset.L0) if dataset.L0 is not None else 1


def rho(dataset: D.Dataset, length: int, position: int, same_char: bool) -> sp.Expr:
    """ρ_L(ℓ, c) of the closed form (same_char: c = w, the query's character)."""
    T = T_mean(length)
    k = _key(dataset, length)
    if position == k:
        return f(T) / 4 if same_char else -f(-T) / 4
    if position == length:
        return (f(T) - f(-T)) / 4 if same_char else sp.Integer(0)
    return (f(T) - f(-T)) / 8


def closed_form_u(dataset: D.Dataset, position: int) -> sp.Expr:
    """Δμ_ℓ of Φ_∞ in closed form."""
    total = sp.Integer(0)
    for L in dataset.lengths():
        m = dataset.multiplicity(L)
        if L == 1 and position == 1:
            total += m * f(mu(1)) / 2
        elif L >= 2 and L >= position:
            total += m * (f(T_mean(L)) - f(-T_mean(L))) / (4 * L)
    return eta * total


def closed_form_W(dataset: D.Dataset, entry: sp.Symbol) -> sp.Expr:
    """ΔS_L^w(ℓ, c) of Φ_∞ in closed form."""
    (pos, c), (L, w) = key_query(entry)
    m = dataset.multiplicity(L)
    return eta * m * (mu(pos) - T_mean(L)) * rho(dataset, L, pos, c == w) / L


def key_query(entry: sp.Symbol):
    """((key position, key char), (query position, query char)) of a W symbol."""
    _, key, query = entry.name.split("_")
    return (int(key[:-1]), key[-1]), (int(query[:-1]), query[-1])


_MAPS: dict[str, tuple[dict, dict]] = {}


def derived_map(dataset: D.Dataset) -> tuple[dict[sp.Symbol, sp.Expr], dict[sp.Symbol, sp.Expr]]:
    """(Δu, ΔW) of Φ_∞ from the enumerated gradient at K = 0 (temperature 1, W = 0), on u(ℓ, c) = μ_ℓ.

    Δu is keyed by u symbols (both characters), ΔW by live W entries.
    """
    if dataset.name not in _MAPS:
        grads = M.gradient_at(dataset, symmetric_point(dataset) | {lam: sp.Integer(1)})  # K = W/λ = 0
        du = {s: -eta * g for s, g in grads.items() if s.name.startswith("u_")}
        dW = {s: -eta * grads[s] for s in M.live_W_entries(dataset)}
        _MAPS[dataset.name] = (du, dW)
    return _MAPS[dataset.name]


def _map_domain(*exprs) -> Domain:
    return parameter_domain(set().union(*(e.free_symbols for e in exprs)))


def item_lambda_inf_recursion(ep_lengths=(6,), cot=((4, "2L0-1"), (4, "2L0-2")), small: int = 2) -> Item:
    """rl.cf.lambda_inf_recursion — derived λ -> ∞ phase-1 map Φ_∞ (spec; relates to Thm 4.1, 5.1).

    Definition used: the limit λ -> ∞ at fixed (μ, W) of one phase-1 step of GD (W step ηλ),
    derived from the enumerated loss by ``diff`` (module docstring), compared with the closed form
    for every μ_ℓ and every live W entry, for EP and CoT (both ``cot_max_len``). Also: the μ part
    of the CoT map equals the EP closed form with the same longest length; the homogeneity
    identity behind the limit at L_max = 3; ``sp.limit`` of λ∂L/∂W at L_max = ``small``.
    """
    datasets = [D.ep_dataset(n) for n in ep_lengths] + [D.cot_dataset(L0, c) for L0, c in cot]
    formulas = []
    for ds in datasets:
        du, dW = derived_map(ds)
        tag = ds.name.replace(" ", "")
        for pos in range(1, ds.max_len + 1):
            for c in D.CHARS:
                stated, derived = closed_form_u(ds, pos), du[M.u_symbol(pos, c)]
                formulas.append(Formula(f"rl.cf.lambda_inf_recursion.u.l{pos}{c}.{tag}", "derived Φ_∞ (u part)",
                                        stated, derived, _map_domain(stated, derived),
                                        f"Δ⟨u, E_{pos}^{c}⟩ closed form vs the enumerated step at K = 0, {ds.name}",
                                        reading=ds.reading))
        for entry in dW:
            stated = closed_form_W(ds, entry)
            formulas.append(Formula(f"rl.cf.lambda_inf_recursion.W.{entry.name}.{tag}", "derived Φ_∞ (W part)",
                                    stated, dW[entry], _map_domain(stated, dW[entry]),
                                    f"ΔS closed form vs the enumerated step at K = 0, {ds.name}", reading=ds.reading))
        if ds.L0 is not None:
            ep = D.ep_dataset(ds.max_len)
            for pos in range(1, ds.max_len + 1):
                stated, derived = closed_form_u(ep, pos), du[M.u_symbol(pos, "a")]
                formulas.append(Formula(f"rl.cf.lambda_inf_recursion.cot_u_equals_ep.l{pos}.{tag}",
                                        "spec: the μ part is the same for CoT data", stated, derived,
                                        _map_domain(stated, derived),
                                        f"EP closed form (L_max = {ds.max_len}) vs the CoT step, {ds.name}",
                                        reading=ds.reading))
    formulas += homogeneity_formulas(3) + limit_formulas(small)
    return Item("rl.cf.lambda_inf_recursion", "derived (λ -> ∞ phase-1 map)", "", "λ -> ∞ map", formulas,
                         notes=["comparison of the iterated map with full GD on G_LIM and at λ = 1e8: numerics",
                                "phase 2 / vanilla_eta W increments carry an extra factor 1/λ"])


def homogeneity_formulas(max_len: int = 3) -> list[Formula]:
    """λ ∂L/∂W(u, W; λ) = ∂L/∂W(u, W/λ; 1) for every live entry (the identity behind the limit)."""
    ds = D.ep_dataset(max_len)
    grads = M.gradient(ds)
    out = []
    for entry in M.live_W_entries(ds):
        stated = lam * grads[entry]
        ws = [s for s in grads[entry].free_symbols if s.name.startswith("W_")]
        derived = grads[entry].xreplace({lam: sp.Integer(1)}).xreplace({s: s / lam for s in ws})
        out.append(Formula(f"rl.cf.lambda_inf_recursion.homogeneity.{entry.name}", "derived (chain rule)", stated,
                           derived, parameter_domain(stated.free_symbols | derived.free_symbols),
                           "λ ∂L/∂W at (u, W; λ) vs the temperature-1 gradient at K = W/λ"))
    return out


def limit_formulas(max_len: int = 2) -> list[Formula]:
    """lim_{λ->∞} -ηλ ∂L/∂W (by ``sp.limit``, at fixed μ and W) vs the closed form, L_max = ``max_len``."""
    ds = D.ep_dataset(max_len)
    grads = M.gradient(ds)
    eps = sp.Dummy("epsilon", positive=True)
    out = []
    for entry in M.live_W_entries(ds):
        expr = (lam * grads[entry]).xreplace(symmetric_point(ds)).xreplace({lam: 1 / eps})
        derived = -eta * sp.Add(*[sp.limit(term, eps, 0) for term in sp.Add.make_args(sp.expand_mul(expr))])
        stated = closed_form_W(ds, entry)
        out.append(Formula(f"rl.cf.lambda_inf_recursion.limit.{entry.name}", "derived Φ_∞ (sp.limit)", stated,
                           derived, _map_domain(stated, derived),
                           "closed form vs lim_{λ->∞} of the W increment at fixed W (SymPy limit)"))
    return out


# ---------------------------------------------------------------------------------------------------------
# phase-1 expansion: dθ/dτ = F_∞(θ), θ(0) = 0, with F_∞ = Φ_∞ increments / η

_SERIES: dict[tuple[str, int], dict[sp.Symbol, list]] = {}


def expansion(dataset: D.Dataset, order: int = 6) -> dict[sp.Symbol, list]:
    """Taylor coefficients in τ (to ``order``) of every μ_ℓ and every live S entry along F_∞ from 0.

    F_∞ is the *derived* map (``derived_map``) divided by η, restricted to μ: the μ flow is
    autonomous (Picard iteration); the S entries are quadratures along it.
    """
    key = (dataset.name, order)
    if key not in _SERIES:
        du, dW = derived_map(dataset)
        rhs = {mu(p): (du[M.u_symbol(p, "a")] / eta) for p in range(1, dataset.max_len + 1)}
        mus = S.picard(rhs, order)
        ws = S.quadrature({e: g / eta for e, g in dW.items()}, mus, order)
        _SERIES[key] = {**mus, **ws}
    return _SERIES[key]


def entry_series(dataset: D.Dataset, entry: sp.Symbol, order: int = 6) -> list:
    """The τ-series of an entry (zero for a never-live entry)."""
    return expansion(dataset, order).get(entry, [sp.Integer(0)] * (order + 1))


def candidate_u(dataset: D.Dataset, position: int) -> sp.Expr:
    """The closed-form leading term of μ_ℓ: τ/4 (ℓ = 1), -τ² Σ_{L>=ℓ} m_L/L² / 64 (ℓ >= 2; H(ℓ, L_max) for m = 1)."""
    if position == 1:
        return tau / 4
    if all(dataset.multiplicity(L) == 1 for L in dataset.lengths()):
        return -H(position, dataset.max_len) * tau**2 / 64
    return -sp.Add(*[sp.Rational(dataset.multiplicity(L), L**2) for L in dataset.lengths() if L >= position]) \
        * tau**2 / 64


def candidate_W(dataset: D.Dataset, entry: sp.Symbol) -> sp.Expr:
    """The closed-form leading term of S_L^w(ℓ, c) (k = k_L; [·] an indicator; m = m_L):

    m τ²(L[k=1] - 1)/(64L²) at (k, w) and its negative at (k, -w); m τ³/(384L³) at (L, w);
    -m τ³(L[ℓ=1] - 1)/(768L³) elsewhere.
    """
    (pos, c), (L, w) = key_query(entry)
    k, m = _key(dataset, L), dataset.multiplicity(L)
    first = 1 if k == 1 else 0
    if pos == k:
        sign = 1 if c == w else -1
        return sign * m * tau**2 * (L * first - 1) / (64 * L**2)
    if pos == L:
        return m * tau**3 / (384 * L**3) if c == w else sp.Integer(0)
    return -m * tau**3 * (L * (1 if pos == 1 else 0) - 1) / (768 * L**3)


def leading_expr(series: list) -> sp.Expr:
    """c τ^k of the lowest nonzero order, or 0 when every coefficient to the order vanishes."""
    lead = S.leading(series)
    return sp.Integer(0) if lead is None else lead[1] * tau**lead[0]


TAU = Domain({tau: Interval(0, 1)})


@dataclass(frozen=True)
class RateClaim:
    """One index combination of a printed phase-1 rate: Θ(η^a t^b) with a sign, or >= Ω / <= -Ω."""

    label: str
    case: str
    relation: str  # "theta", "geq" (>= Ω), "leq" (<= -Ω)
    sign: int
    eta_power: int
    t_power: int
    terms: tuple  # ((coefficient, symbol), ...): the quantity as a combination of reduced parameters


def claim_series(dataset: D.Dataset, claim: RateClaim, order: int = 6) -> list:
    """The τ-series of a claim's quantity."""
    return S.combine([(c, entry_series(dataset, s, order)) for c, s in claim.terms])


def consistent(claim: RateClaim, lead) -> tuple[int, bool]:
    """(sign of the leading term, whether its order is compatible with the printed rate).

    A derived leading term c τ^k = c η^k t^k is compatible with Θ(η^a t^b) iff k = a = b; with a
    one-sided Ω(η^a t^b) over 1 <= t <= O(1/η), η -> 0, iff k <= a and b <= a (the ratio
    η^{k-a} t^{k-b} stays bounded below). An identically vanishing series (to τ^6) has sign 0.
    """
    if lead is None:
        return 0, claim.relation != "theta"
    k, c = lead
    sign = 1 if c > 0 else -1
    if claim.relation == "theta":
        return sign, k == claim.eta_power == claim.t_power
    return sign, k <= claim.eta_power and claim.t_power <= claim.eta_power


def _S(L: int, pos: int, c: str, w: str) -> sp.Symbol:
    return M.W_symbol(pos, c, L, w)


def rate_claims(dataset: D.Dataset) -> list[RateClaim]:
    """Every index combination of the printed phase-1 rates (position_range = le_L).

    EP: Thm 4.1 (1), (2). CoT: Thm 5.1 (1) and (2) for L < L0 and L >= L0 (ℓ0 = L - L0 + 1).
    """
    thm = "Thm 4.1" if dataset.L0 is None else "Thm 5.1"
    n = dataset.max_len
    out = [RateClaim(f"{thm} (1)", "<u,E_1^w>", "theta", 1, 1, 1, ((1, mu(1)),))]
    out += [RateClaim(f"{thm} (1)", f"<u,E_{p}^w>", "theta", -1, 2, 2, ((1, mu(p)),)) for p in range(2, n + 1)]
    out += [RateClaim(f"{thm} (1)", f"<u,E_2^w-E_{p}^w>", "leq", -1, 2, 2, ((1, mu(2)), (-1, mu(p))))
            for p in range(3, n + 1)]
    chars = D.CHARS
    for L in range(2, n + 1):
        for w in chars:
            v = D.FLIP[w]
            if dataset.L0 is None or L < dataset.L0:
                for p in range(2, L + 1):
                    for w1 in chars:
                        out.append(RateClaim(f"{thm} (2)", f"L={L} <E_1^{w}-E_{p}^{w1},WE_L^{w}>", "geq", 1, 2, 2,
                                             ((1, _S(L, 1, w, w)), (-1, _S(L, p, w1, w)))))
                        out.append(RateClaim(f"{thm} (2)", f"L={L} <E_{p}^{w1}-E_1^{v},WE_L^{w}>", "geq", 1, 2, 2,
                                             ((1, _S(L, p, w1, w)), (-1, _S(L, 1, v, w)))))
                for p in range(3, L + 1):
                    for w1 in chars:
                        for w2 in chars:
                            out.append(RateClaim(f"{thm} (2)", f"L={L} <E_2^{w1}-E_{p}^{w2},WE_L^{w}>", "geq", 1, 4,
                                                 1, ((1, _S(L, 2, w1, w)), (-1, _S(L, p, w2, w)))))
                continue
            l0 = L - dataset.L0 + 1
            for p in [q for q in range(1, L + 1) if q != l0]:
                for w1 in chars:
                    out.append(RateClaim(f"{thm} (2), L >= L0", f"L={L} <E_{l0}^{v}-E_{p}^{w1},WE_L^{w}>", "geq", 1,
                                         2, 2, ((1, _S(L, l0, v, w)), (-1, _S(L, p, w1, w)))))
                    out.append(RateClaim(f"{thm} (2), L >= L0", f"L={L} <E_{p}^{w1}-E_{l0}^{v},WE_L^{w}>", "geq", 1,
                                         2, 2, ((1, _S(L, p, w1, w)), (-1, _S(L, l0, v, w)))))
            for p in [q for q in range(2, L + 1) if q != l0]:
                for w1 in chars:
                    for w2 in chars:
                        out.append(RateClaim(f"{thm} (2), L >= L0", f"L={L} <E_1^{w1}-E_{p}^{w2},WE_L^{w}>", "geq", 1,
                                             4, 1, ((1, _S(L, 1, w1, w)), (-1, _S(L, p, w2, w)))))
    return out


def item_phase1_expansion(ep_lengths=(6,), cot=((4, "2L0-1"), (4, "2L0-2")), order: int = 6) -> Item:
    """rl.cf.phase1_expansion — derived leading-order expansions behind Thm 4.1 and Thm 5.1.

    Definition used: dθ/dτ = F_∞(θ), θ(0) = 0, F_∞ the λ -> ∞ flow of rl.cf.lambda_inf_recursion
    (derived side), solved to τ^``order`` by Picard iteration (``series``). Formulas: the leading
    term of every μ_ℓ and every live S entry against its closed form (``candidate_u``,
    ``candidate_W``), and of μ_2 - μ_ℓ (-H(2, ℓ-1)τ²/64) and the EP differences S(2,·) - S(ℓ,·)
    (τ⁴H(2, ℓ-1)/(16384L²) for 3 <= ℓ < L; -τ³/(768L³) at ℓ = L, c = w). Predicates: for every
    index combination of the printed rates (``rate_claims``), the printed sign against the
    derived leading sign, and whether the derived order is compatible with the printed rate.
    """
    datasets = [D.ep_dataset(n) for n in ep_lengths] + [D.cot_dataset(L0, c) for L0, c in cot]
    formulas, predicates = [], []
    for ds in datasets:
        tag = ds.name.replace(" ", "")
        series = expansion(ds, order)
        for pos in range(1, ds.max_len + 1):
            formulas.append(Formula(f"rl.cf.phase1_expansion.u.l{pos}.{tag}", "derived expansion (Thm 4.1/5.1 (1))",
                                    candidate_u(ds, pos), leading_expr(series[mu(pos)]), TAU,
                                    f"leading term of μ_{pos}(τ), {ds.name}", reading=ds.reading))
        for pos in range(3, ds.max_len + 1):
            diff = S.combine([(1, series[mu(2)]), (-1, series[mu(pos)])])
            formulas.append(Formula(f"rl.cf.phase1_expansion.u_diff.l{pos}.{tag}", "derived expansion",
                                    -H(2, pos - 1) * tau**2 / 64, leading_expr(diff), TAU,
                                    f"leading term of μ_2 - μ_{pos}, {ds.name}", reading=ds.reading))
        for entry in M.live_W_entries(ds):
            formulas.append(Formula(f"rl.cf.phase1_expansion.W.{entry.name}.{tag}", "derived expansion",
                                    candidate_W(ds, entry), leading_expr(series[entry]), TAU,
                                    f"leading term of S = {entry.name}(τ), {ds.name}", reading=ds.reading))
        if ds.L0 is None:
            formulas += _ep_second_position_formulas(ds, series, tag)
        claims = rate_claims(ds)
        predicates.append(_rate_predicate(ds, claims, order, "sign", tag))
        predicates.append(_rate_predicate(ds, claims, order, "order", tag))
    return Item("rl.cf.phase1_expansion", "derived (explicit constants behind Thm 4.1 / 5.1)", "",
                         "phase-1 expansions", formulas, predicates=predicates,
                         notes=["checks against the iterated map (G_EXPN), an ODE integration and full GD: numerics",
                                "quadratic-order quantities are sums over s < t: compare with η²t(t-1) as well"])


def _ep_second_position_formulas(ds: D.Dataset, series, tag: str) -> list[Formula]:
    out = []
    for L in range(3, ds.max_len + 1):
        for p in range(3, L):
            diff = S.combine([(1, series[_S(L, 2, "a", "a")]), (-1, series[_S(L, p, "a", "a")])])
            out.append(Formula(f"rl.cf.phase1_expansion.W_diff2.L{L}.l{p}.{tag}", "derived expansion (Thm 4.1 (2))",
                               H(2, p - 1) * tau**4 / (16384 * L**2), leading_expr(diff), TAU,
                               f"leading term of S_L^a(2, a) - S_L^a({p}, a), L = {L}"))
        diff = S.combine([(1, series[_S(L, 2, "a", "a")]), (-1, series[_S(L, L, "a", "a")])])
        out.append(Formula(f"rl.cf.phase1_expansion.W_diff2.L{L}.lL.{tag}", "derived expansion (Thm 4.1 (2))",
                           -tau**3 / (768 * L**3), leading_expr(diff), TAU,
                           f"leading term of S_L^a(2, a) - S_L^a(L, a) (the query position), L = {L}"))
    return out


def _rate_predicate(ds: D.Dataset, claims: list[RateClaim], order: int, what: str, tag: str) -> Predicate:
    def derived(claim):
        sign, ok = consistent(claim, S.leading(claim_series(ds, claim, order)))
        return sign if what == "sign" else ok

    def stated(claim):
        return claim.sign if what == "sign" else True

    text = ("printed sign vs sign of the derived leading term" if what == "sign" else
            "derived leading order compatible with the printed rate (Θ: equal; Ω: dominates on 1 <= t <= O(1/η))")
    return Predicate(f"rl.cf.phase1_expansion.rates_{what}.{tag}", "Thm 4.1 / Thm 5.1 (phase 1)", stated, derived,
                     lambda: claims, f"{text}, every index combination, {ds.name}", reading=ds.reading,
                     show=lambda c: f"{c.label}: {c.case}")


def leading_table(dataset: D.Dataset, order: int = 6) -> list[dict]:
    """Every printed rate claim with its derived leading term (order, coefficient) and the printed rate."""
    rows = []
    for claim in rate_claims(dataset):
        lead = S.leading(claim_series(dataset, claim, order))
        sign, ok = consistent(claim, lead)
        rows.append({"label": claim.label, "case": claim.case, "printed": (claim.relation, claim.sign,
                     f"eta^{claim.eta_power} t^{claim.t_power}"), "derived_order": None if lead is None else lead[0],
                     "derived_coefficient": None if lead is None else sp.sstr(lead[1]), "sign": sign,
                     "compatible": ok})
    return rows
