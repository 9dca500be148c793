"""Head 1 (the 4-gram head) of the induction-head paper: M, m, softmax derivative, Lemma 8, Eq. (7), its flow.

Stage II with the ideal first layer (y_s = x_{s-1}); head 1 attends with ALiBi slope p over
its range (``head1_range``: canonical s = 2..L-1, literal s = 2..L-2 as in Eq. (6)).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.induction_head.symbols import (
    L, M_closed, M_sum, POSITIVE, SAMPLED_L, alpha, domain, g, gstar, k, m_closed, m_sum, p, s, u,
)
from derivations.softmax import IndexRange, alibi_logit, softmax_squared_norm, softmax_weight

#: head-1 index ranges of the two readings (spec §2.3, flag head1_range)
HEAD1_RANGES = {"canonical": IndexRange(2, L - 1), "literal": IndexRange(2, L - 2)}


def head1_weights(index_range: IndexRange) -> tuple:
    """Head 1's ALiBi softmax weight pi_s (query at position L-1) and the range it runs over."""
    logit = alibi_logit(p, L - 1)
    return (lambda at: softmax_weight(logit, index_range, at)), index_range


def L_G4_derived(reading: str = "canonical") -> sp.Expr:
    """L_G4(p, g) from its definition, ½E(g* x_{L-2} - g Σ_{s∈R} π_s x_{s-1})², with E x_i x_j = δ_ij.

    Expanding the square leaves ½g*² + ½g² Σ_s π_s² - g* g Σ_s π_s [s - 1 = L - 2]: the cross
    term survives only for the position s = L-1, which the canonical range contains and the
    literal one does not. Only second moments of the tokens enter, so the same form holds
    for Gaussian and Rademacher tokens (ih.dv.boolean).
    """
    index_range = HEAD1_RANGES[reading]
    weight, _ = head1_weights(index_range)
    squared_norm = softmax_squared_norm(alibi_logit(p, L - 1), index_range)
    cross = weight(L - 1) if reading == "canonical" else sp.Integer(0)
    return gstar**2 / 2 + g**2 * squared_norm / 2 - gstar * g * cross


def L_G4_printed() -> sp.Expr:
    """Eq. (7) as printed: ½(α*/(1+α*))² + ½g²M(2p)/M(p)² - α*g/((1+α*)M(p))."""
    return (alpha / (1 + alpha)) ** 2 / 2 + g**2 * M_closed(2 * p) / M_closed(p) ** 2 / 2 - alpha * g / (
        (1 + alpha) * M_closed(p)
    )


def flow_pg_derived(reading: str = "canonical") -> tuple[sp.Expr, sp.Expr]:
    """(dp/dt, dg/dt) = -∇_{(p,g)} L_G4 of the toolkit's own L_G4."""
    loss = L_G4_derived(reading)
    return -sp.diff(loss, p), -sp.diff(loss, g)


def item_M() -> Item:
    """ih.cf.M: M(p) = Σ_{s=2}^{L-1} e^{-p(L-1-s)} = Σ_{s=0}^{L-3} e^{-ps} = (1-e^{-p(L-2)})/(1-e^{-p})."""
    dom = domain(L, p)
    return Item("ih.cf.M", "[W] C.2 Function II; C.3.1; Lemma 8", "[F] App. B; C.1; Lemma D.4", "M(p)", [
        Formula("ih.cf.M.shifted_sum", "C.2", sp.Sum(sp.exp(-p * s), (s, 0, L - 3)), M_sum(p), dom,
                "second member of the C.2 display vs the normaliser of head 1's softmax"),
        Formula("ih.cf.M.closed_form", "C.2; C.3.1; Lemma 8", M_closed(p), M_sum(p), dom,
                "closed form as printed vs the defining geometric sum",
                latex=r"M(p)=\frac{1-e^{-p(L-2)}}{1-e^{-p}}"),
        Formula("ih.cf.M.at_zero", "C.2 (p -> 0)", sp.limit(M_closed(p), p, 0), L - 2, domain(L),
                "the p -> 0 limit of the closed form vs the number of terms"),
    ])


def item_m() -> Item:
    """ih.cf.m: m(p) = Σ_{s=1}^{L-3} s e^{-ps} (closed form), introduced as 'the derivative' of M."""
    dom = domain(L, p)
    return Item("ih.cf.m", "[W] C.2 Function II; C.3.1", "[F] App. B; C.1", "m(p)", [
        Formula("ih.cf.m.closed_form", "C.2", m_closed(p), m_sum(p), dom,
                "closed form as printed vs the arithmetico-geometric sum",
                latex=r"m(p)=\frac{e^{-p}-(L-2)e^{-p(L-2)}+(L-3)e^{-p(L-1)}}{(1-e^{-p})^2}"),
        Formula("ih.cf.m.is_derivative_of_M", "C.2 ('M(p) and its derivative m(p)')", m_sum(p),
                sp.diff(M_sum(p), p), dom, "the text calls m the derivative of M; the derivative is -m"),
        Formula("ih.cf.m.at_zero", "spec: m(0) = (L-2)(L-3)/2", (L - 2) * (L - 3) / 2,
                sp.Sum(s, (s, 1, L - 3)), domain(L), "value at p = 0"),
    ])


def item_softmax_derivative() -> Item:
    """ih.cf.softmax_derivative (C.2 Function III): d/dp of head 1's weight at lag s."""
    dom = domain(L, p, s)
    dom = type(dom)(dom.intervals, {L: dom.integers[L], s: (0, (0, 1, 2, 3, 10, 37))},
                    (sp_constraint_lag(),))
    normaliser = sp.Sum(sp.exp(-p * k), (k, 0, L - 3))
    weight_def = softmax_weight(alibi_logit(p, L - 1), IndexRange(2, L - 1), L - 1 - s)
    printed_weight = sp.exp(-p * s) / normaliser
    printed_derivative = (-s * sp.exp(-p * s) * M_closed(p) + sp.exp(-p * s) * m_closed(p)) / M_closed(p) ** 2
    return Item("ih.cf.softmax_derivative", "[W] C.2 Function III", "[F] App. B", "softmax derivative", [
        Formula("ih.cf.softmax_derivative.weight", "C.2 Function III (first =)", printed_weight, weight_def, dom,
                "softmax((-p(L-1-t))_{t=2}^{L-1})_{t=L-1-s} written as e^{-ps}/Σ_τ e^{-pτ}"),
        Formula("ih.cf.softmax_derivative.derivative", "C.2 Function III (second =)", printed_derivative,
                sp.diff(weight_def, p), dom, "derivative as printed vs d/dp of the softmax weight",
                latex=r"\frac{-s e^{-ps}M(p)+e^{-ps}m(p)}{M(p)^2}"),
    ])


def sp_constraint_lag():
    """The lag s of head 1 runs over 0..L-3."""
    from derivations.domain import Constraint

    return Constraint(s <= L - 3, "head 1 has lags 0..L-3")


def item_lemma8() -> Item:
    """ih.cf.lemma8: ||softmax((-p(L-1-s))_{s=1}^{L-1})||² = M(2p)/M(p)², as printed and per head-1 range,
    and the range of ||π||² that C.3.1 Part I prints for it (:func:`squared_norm_bounds`)."""
    dom = domain(L, p)
    printed = M_closed(2 * p) / M_closed(p) ** 2
    formulas = [
        Formula("ih.cf.lemma8.as_printed", "Lemma 8 (s = 1..L-1)", printed,
                softmax_squared_norm(alibi_logit(p, L - 1), IndexRange(1, L - 1)), dom,
                "the printed range s = 1..L-1 has L-1 terms; M has L-2",
                latex=r"\Big\|\mathrm{softmax}\big((-p(L-1-s))_{s=1}^{L-1}\big)\Big\|_2^2=\frac{M(2p)}{M(p)^2}"),
    ]
    for reading, index_range in HEAD1_RANGES.items():
        formulas.append(Formula(
            f"ih.cf.lemma8.head1_{reading}", f"Lemma 8 applied to head 1 ({reading} range)", printed,
            softmax_squared_norm(alibi_logit(p, L - 1), index_range), dom,
            f"squared norm of head 1's weights over s = {index_range.lo}..{index_range.hi}",
            reading={"head1_range": reading}))
    return Item("ih.cf.lemma8", "[W] Lemma 8 (App. D)", "[F] Lemma D.4", "Lemma 8", formulas,
                squared_norm_bounds())


def ratio_displays() -> dict[str, tuple[sp.Expr, sp.Expr, sp.Expr]]:
    """The four printed ratio displays of C.3.1 Part I: name -> (quantity, printed middle, derived)."""
    e = sp.exp
    bracket = lambda q: _bracket(e(-q))  # noqa: E731  (the printed bracket, same expression tree)
    return {
        "M2p_over_Mp": (
            (1 + e(-p * (L - 2))) / (1 + e(-p)), M_sum(2 * p) / M_sum(p)),
        "m_over_M2": (
            e(-p) * bracket(p) / (1 - e(-p * (L - 2))), m_sum(p) / M_sum(p) ** 2),
        "one_over_M": (
            (1 - e(-p * (L - 2))) / (1 - e(-p)), 1 / M_sum(p)),
        "m2p_over_mp": (
            e(-p) * bracket(2 * p) / ((1 + e(-p)) ** 2 * bracket(p)),
            m_sum(2 * p) / m_sum(p)),
    }


def item_ratios() -> Item:
    """ih.cf.ratios: the C.3.1 Part I displays of M(2p)/M(p), m/M², 1/M and m(2p)/m(p), and the bounds
    their right-most ξ-forms print once |ξ_i| <= 0.0001 (:func:`ratio_bounds`)."""
    dom = domain(L, p)
    formulas = [
        Formula(f"ih.cf.ratios.{name}", "C.3.1 Part I", printed, derived, dom, f"{name} as printed vs definition")
        for name, (printed, derived) in ratio_displays().items()
    ]
    return Item("ih.cf.ratios", "[W] C.3.1 Part I", "[F] C.1 Part I", "ratios of M and m", formulas,
                ratio_bounds())


#: the printed bound on the error functions, "|ξ_1(p)|, …, |ξ_5(p)| <= 0.0001" (C.3.1 Part I)
XI_BOUND = sp.Rational(1, 10000)
#: the sampled L at which the printed choice of L leaves some p > 0 (none at L = 5: e^{-(L-5)p} = 1)
CHOICE_L = tuple(value for value in SAMPLED_L if value > 5)


def L_choice_constraints(length: sp.Expr = L) -> tuple[Constraint, Constraint]:
    """The printed choice of L, "(L-3)e^{-(L-3)p}, e^{-(L-5)p} < 0.0001 for all p > σ_init", at one p.

    Both left sides decrease in p, so "L meets the choice at σ and p > σ" is the same region of
    (L, p) as "the two conditions hold at p": a printed bound "for p > σ" is checked on it.
    """
    reason = "the printed choice of L (C.3.1 Part I): {} < 0.0001"
    first = (length - 3) * sp.exp(-(length - 3) * p)
    return (Constraint(first < XI_BOUND, reason.format("(L-3)e^{-(L-3)p}")),
            Constraint(sp.exp(-(length - 5) * p) < XI_BOUND, reason.format("e^{-(L-5)p}")))


def L_choice_domain() -> Domain:
    """(L, p) with p in the toolkit's range (0, 30] and the printed choice of L holding at p."""
    return Domain({p: POSITIVE}, {L: (6, CHOICE_L)}, L_choice_constraints())


def _bounds(name: str, label: str, numerator: sp.Expr, denominator: sp.Expr, lo: sp.Expr, hi: sp.Expr,
            description: str, latex: str = "") -> list[RegionInequality]:
    """``lo <= N/D <= hi`` (``D > 0``) as ``lo·D <= N`` and ``N <= hi·D`` on the printed choice of L.

    Both sides are expanded into sums of exponentials in p: their intervals are tight and their
    derivatives stay short, which is what lets ``checks.certify`` close them within the budget.
    """
    dom = L_choice_domain()
    return [
        RegionInequality(f"{name}.lower", label, _exp_sum(lo * denominator), _exp_sum(numerator), dom,
                         description=description + " (lower bound)", latex=latex),
        RegionInequality(f"{name}.upper", label, _exp_sum(numerator), _exp_sum(hi * denominator), dom,
                         description=description + " (upper bound)", latex=latex),
    ]


def _exp_sum(expr: sp.Expr) -> sp.Expr:
    """``expr`` as a sum of terms c·e^{-kp}, one exponential per term."""
    return sp.powsimp(sp.expand(expr))


def _bracket(uu: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    """1 - (L-2)u^{L-3} + (L-3)u^{L-2}, the bracket of the printed m/M² and m(2p)/m(p) displays (1 + ξ₁)."""
    return 1 - (length - 2) * uu ** (length - 3) + (length - 3) * uu ** (length - 2)


def normalised_ratios() -> dict[str, tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]]:
    """name -> (quantity Q, centre C, N, D) with Q/C = N/D exactly and D > 0 for p > 0 (u = e^{-p}).

    Q is built from the printed closed forms of M and m (C.3.1); C is what the printed right-most
    form multiplies by (1+ξ)/(1+ξ'); N/D is Q/C with the common factors cancelled (the identities
    are checked in tests/derivations/test_four_gram.py). The bracket 1 - (L-2)u^{L-3} + (L-3)u^{L-2}
    decreases from 1 to 0 on (0, 1), so it is positive for p > 0.
    """
    e_p, tail = sp.exp(-p), sp.exp(-p * (L - 2))
    Mp, mp = M_closed(p), m_closed(p)
    squared_norm = M_closed(2 * p) / Mp**2
    return {
        "m_over_M2": (mp / Mp**2, e_p, _bracket(e_p), (1 - tail) ** 2),
        "one_over_M": (1 / Mp, 1 / (1 - e_p), (1 - e_p) ** 2, 1 - tail),
        "one_over_M_corrected": (1 / Mp, 1 - e_p, sp.Integer(1), 1 - tail),
        "m2p_over_mp": (m_closed(2 * p) / mp, e_p / (1 + e_p) ** 2, _bracket(e_p**2), _bracket(e_p)),
        "squared_norm_partI": (squared_norm, (1 + tail) / (1 - e_p**2), (1 - e_p) ** 2, 1 - tail),
        "squared_norm_corrected": (squared_norm, (1 - e_p) * (1 + tail) / (1 + e_p), sp.Integer(1), 1 - tail),
    }


def ratio_bounds() -> list[RegionInequality]:
    """The C.3.1 Part I ratio displays with |ξ_i| <= ε = 0.0001 (printed) as bounds, and a corrected one.

    On the printed choice of L the right-most forms and |ξ_i| <= ε print (u = e^{-p}):

    * m(p)/M(p)² = e^{-p}(1+ξ₁)/(1+ξ₂), so m/M² / e^{-p} in [(1-ε)/(1+ε), (1+ε)/(1-ε)];
    * 1/M(p) = (1+ξ₃)/(1-e^{-p}), so (1-e^{-p})/M in [1-ε, 1+ε];
    * m(2p)/m(p) = e^{-p}(1+ξ₄)/((1+e^{-p})²(1+ξ₅)), so the ratio to e^{-p}/(1+e^{-p})² in
      [(1-ε)/(1+ε), (1+ε)/(1-ε)].

    M(2p)/M(p) = (1+e^{-p(L-2)})/(1+e^{-p}) is exact (a display of ``ratio_displays``), not a bound.
    1/M <= 1 - e^{-p} contradicts the 1/M bound; the toolkit's corrected form is 1/M =
    (1-e^{-p})/(1+ξ₂) with ξ₂ = -e^{-p(L-2)}: 1/M / (1-e^{-p}) in [1/(1+ε), 1/(1-ε)]. Each bound on Q/C
    is encoded through N/D of :func:`normalised_ratios`.
    """
    eps = XI_BOUND
    ratio = ((1 - eps) / (1 + eps), (1 + eps) / (1 - eps))
    forms = normalised_ratios()
    specs = [  # (name in normalised_ratios, id, label, (lo, hi), description, printed LaTeX)
        ("m_over_M2", "m_over_M2_xi", "C.3.1 Part I", ratio,
         "m(p)/M(p)² = e^{-p}(1+ξ₁)/(1+ξ₂), |ξ₁|, |ξ₂| <= 0.0001",
         r"\frac{m(p)}{M^2(p)}=\frac{e^{-p}(1+\xi_1(p))}{1+\xi_2(p)},\ |\xi_i(p)|\leq0.0001"),
        ("one_over_M", "one_over_M_xi", "C.3.1 Part I", (1 - eps, 1 + eps),
         "1/M(p) = (1+ξ₃)/(1-e^{-p}), |ξ₃| <= 0.0001",
         r"\frac{1}{M(p)}=\frac{1+\xi_3(p)}{1-e^{-p}},\ |\xi_3(p)|\leq0.0001"),
        ("one_over_M_corrected", "one_over_M_corrected", "C.3.1 Part I (corrected by the toolkit)",
         (1 / (1 + eps), 1 / (1 - eps)),
         "corrected: 1/M(p) = (1-e^{-p})/(1+ξ₂), ξ₂ = -e^{-p(L-2)}, |ξ₂| <= 0.0001", ""),
        ("m2p_over_mp", "m2p_over_mp_xi", "C.3.1 Part I", ratio,
         "m(2p)/m(p) = e^{-p}(1+ξ₄)/((1+e^{-p})²(1+ξ₅)), |ξ₄|, |ξ₅| <= 0.0001",
         r"\frac{m(2p)}{m(p)}=\frac{e^{-p}(1+\xi_4(p))}{(1+e^{-p})^2(1+\xi_5(p))},\ |\xi_i(p)|\leq0.0001"),
    ]
    out = []
    for name, key, label, (lo, hi), text, latex in specs:
        _, _, numerator, denominator = forms[name]
        out += _bounds(f"ih.cf.ratios.{key}", label, numerator, denominator, lo, hi,
                       text + " on the printed choice of L", latex)
    return out


def squared_norm_bounds() -> list[RegionInequality]:
    """The range of ||π||² = M(2p)/M(p)² (Lemma 8) that C.3.1 Part I prints, and the corrected range.

    The Part I dg/dt display writes the coefficient of -g, which is M(2p)/M(p)² (Eq. (7) with
    Lemma 8), as (1+ξ₃)/(1-e^{-p})·(1+e^{-p(L-2)})/(1+e^{-p}) with |ξ₃| <= ε = 0.0001: a range
    above 1 once e^{-2p} > ε, where no squared norm of probabilities lies. From the closed form,
    M(2p)/M(p)² = (1-e^{-p})(1+e^{-p(L-2)})/((1+e^{-p})(1+ξ₂)) with ξ₂ = -e^{-p(L-2)}. Since
    M(2p)/M(p) is exact, both reduce to the 1/M bounds of :func:`ratio_bounds` (same N/D).
    """
    eps = XI_BOUND
    forms = normalised_ratios()
    _, _, n_printed, d_printed = forms["squared_norm_partI"]
    _, _, n_corrected, d_corrected = forms["squared_norm_corrected"]
    return [
        *_bounds("ih.cf.lemma8.partI_range", "C.3.1 Part I (dg/dt display) with Lemma 8",
                 n_printed, d_printed, 1 - eps, 1 + eps,
                 "||π||² = M(2p)/M(p)² = (1+ξ₃)(1+e^{-p(L-2)})/((1-e^{-p})(1+e^{-p})), |ξ₃| <= 0.0001 "
                 "on the printed choice of L",
                 r"\frac{M(2p)}{M(p)^2}=\frac{1+\xi_3(p)}{1-e^{-p}}\cdot\frac{1+e^{-p(L-2)}}{1+e^{-p}},"
                 r"\ |\xi_3(p)|\leq0.0001"),
        *_bounds("ih.cf.lemma8.corrected_range", "C.3.1 Part I with Lemma 8 (corrected by the toolkit)",
                 n_corrected, d_corrected, 1 / (1 + eps), 1 / (1 - eps),
                 "corrected: ||π||² = (1-e^{-p})(1+e^{-p(L-2)})/((1+e^{-p})(1+ξ₂)), ξ₂ = -e^{-p(L-2)}, "
                 "|ξ₂| <= 0.0001 on the printed choice of L"),
    ]


def _M_u(uu: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    return (1 - uu ** (length - 2)) / (1 - uu)


def _m_u(uu: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    return (uu - (length - 2) * uu ** (length - 2) + (length - 3) * uu ** (length - 1)) / (1 - uu) ** 2


def xi_definitions(length: sp.Expr = L) -> dict[str, dict[str, sp.Expr]]:
    """ξ₁…ξ₅ in u = e^{-p} under both definitions of ih.cf.xi.

    ``read_off`` (a): the printed middle form of each ih.cf.ratios display rewritten as the
    right-most form. ``implied`` (b): the ξ_i that make the right-most forms exact, with ξ₂ and
    ξ₅ kept as read off (each display fixes only the ratio (1+ξ₁)/(1+ξ₂), resp. (1+ξ₄)/(1+ξ₅)).
    """
    n_ = length - 2
    read = {
        "xi1": -n_ * u ** (length - 3) + (length - 3) * u ** (length - 2),
        "xi2": -(u ** (length - 2)),
        "xi3": -(u ** (length - 2)),
        "xi4": -n_ * u ** (2 * (length - 3)) + (length - 3) * u ** (2 * (length - 2)),
        "xi5": -n_ * u ** (length - 3) + (length - 3) * u ** (length - 2),
    }
    M1, m1, m2 = _M_u(u, length), _m_u(u, length), _m_u(u**2, length)
    implied = {
        "xi1": m1 / M1**2 * (1 + read["xi2"]) / u - 1,
        "xi2": read["xi2"],
        "xi3": (1 - u) / M1 - 1,
        "xi4": m2 / m1 * (1 + u) ** 2 * (1 + read["xi5"]) / u - 1,
        "xi5": read["xi5"],
    }
    return {"read_off": read, "implied": implied}


def xi_fractions(length: sp.Expr = L) -> dict[str, dict[str, tuple[sp.Expr, sp.Expr]]]:
    """1 + ξ_i = N/D in u = e^{-p}, D > 0 on (0, 1), for both definitions of :func:`xi_definitions`.

    With B(u) = 1 - (L-2)u^{L-3} + (L-3)u^{L-2} (positive on (0, 1)): as read off, 1+ξ₁ = 1+ξ₅ = B(u),
    1+ξ₂ = 1+ξ₃ = 1 - u^{L-2}, 1+ξ₄ = B(u²); as implied, 1+ξ₁ = B(u)/(1 - u^{L-2}),
    1+ξ₃ = (1-u)²/(1 - u^{L-2}) and 1+ξ₄ = B(u²) (the m(2p)/m(p) middle form is exact). So
    |ξ| <= ε is (1-ε)D <= N <= (1+ε)D, free of the cancellations of M and m near u = 1.
    """
    one = sp.Integer(1)
    tail = 1 - u ** (length - 2)
    read = {"xi1": (_bracket(u, length), one), "xi2": (tail, one), "xi3": (tail, one),
            "xi4": (_bracket(u**2, length), one), "xi5": (_bracket(u, length), one)}
    implied = {**read, "xi1": (_bracket(u, length), tail), "xi3": ((1 - u) ** 2, tail)}
    return {"read_off": read, "implied": implied}


def xi_bound_inequalities(
    length: int, p_range: tuple, eps: sp.Expr = XI_BOUND,
) -> list[tuple[RegionInequality, list[str]]]:
    """|ξ_i(p)| <= ε on ``p_range`` at this L as RegionInequality pairs ``(1-ε)D <= N``, ``N <= (1+ε)D``.

    One pair per distinct N/D of :func:`xi_fractions`, with the ``definition.xi`` names it stands for.
    """
    by_fraction: dict[tuple[sp.Expr, sp.Expr], list[str]] = {}
    for definition, fractions in xi_fractions(sp.Integer(length)).items():
        for name, fraction in fractions.items():
            by_fraction.setdefault(fraction, []).append(f"{definition}.{name}")
    lo, hi = (float(v) for v in p_range)
    dom = Domain({p: Interval(lo, hi, lo_open=False, hi_open=False)})
    out = []
    for (numerator, denominator), names in by_fraction.items():
        N, D = (_exp_sum(e.subs(u, sp.exp(-p))) for e in (numerator, denominator))
        text = f"|ξ| <= {eps} for {', '.join(names)} at L = {length}"
        stem, label = f"ih.cf.xi.{names[0]}", "[W] C.3.1 Part I"
        out += [
            (RegionInequality(f"{stem}.lower", label, _exp_sum((1 - eps) * D), N, dom,
                              description=text + ": (1-ε)D <= N with 1+ξ = N/D"), names),
            (RegionInequality(f"{stem}.upper", label, N, _exp_sum((1 + eps) * D), dom,
                              description=text + ": N <= (1+ε)D with 1+ξ = N/D"), names),
        ]
    return out


def item_L_G4() -> Item:
    """ih.cf.L_G4: Eq. (7) against ½E(g* x_{L-2} - g Σ π_s x_{s-1})² in both head-1 readings."""
    dom = domain(L, p, g, alpha)
    formulas = [
        Formula(f"ih.cf.L_G4.eq7_{reading}", "Eq. (7)", L_G4_printed(), L_G4_derived(reading), dom,
                f"Eq. (7) vs the loss of head 1 over its {reading} range", label_alt="[F] Eq. (19)",
                reading={"head1_range": reading},
                latex=r"\mathcal L_{G_4}=\frac12\Big(\frac{\alpha^\star}{1+\alpha^\star}\Big)^2+\frac12g^2"
                      r"\frac{M(2p)}{M(p)^2}-\frac{\alpha^\star g}{1+\alpha^\star}\frac{1}{M(p)}")
        for reading in HEAD1_RANGES
    ]
    return Item("ih.cf.L_G4", "[W] Eq. (7)", "[F] Eq. (19)", "4-gram loss", formulas)


def item_flow_pg() -> Item:
    """ih.cf.flow_pg: the printed (p, g) gradient flows (first form, 'Equivalently', Part I ξ-form, u-form)."""
    dom = domain(L, p, g, alpha)
    Mp, M2p, mp, m2p = M_closed(p), M_closed(2 * p), m_closed(p), m_closed(2 * p)
    dp_first = mp / Mp**2 * (g**2 * m2p / mp - g**2 * M2p / Mp + alpha * g / (1 + alpha))
    dg_first = alpha / (1 + alpha) / Mp - g * M2p / Mp**2
    dp_equiv = mp * g / Mp**2 * (gstar - g * M2p / Mp + g * m2p / mp)
    dg_equiv = (gstar - g * M2p / Mp) / Mp
    formulas = []
    for reading in HEAD1_RANGES:
        dp_der, dg_der = flow_pg_derived(reading)
        rd = {"head1_range": reading}
        formulas += [
            Formula(f"ih.cf.flow_pg.dp_first_{reading}", "C.3.1 GF display", dp_first, dp_der, dom,
                    "dp/dt first form vs -∂L_G4/∂p", reading=rd),
            Formula(f"ih.cf.flow_pg.dg_first_{reading}", "C.3.1 GF display", dg_first, dg_der, dom,
                    "dg/dt first form vs -∂L_G4/∂g", reading=rd),
        ]
    dp_der, dg_der = flow_pg_derived("canonical")
    formulas += [
        Formula("ih.cf.flow_pg.dp_equivalently", "C.3.1 'Equivalently'", dp_equiv, dp_der, dom,
                "dp/dt second form vs -∂L_G4/∂p", reading={"head1_range": "canonical"}),
        Formula("ih.cf.flow_pg.dg_equivalently", "C.3.1 'Equivalently'", dg_equiv, dg_der, dom,
                "dg/dt second form vs -∂L_G4/∂g", reading={"head1_range": "canonical"}),
    ]
    formulas += _xi_flow_forms(dom, dp_der, dg_der)
    return Item("ih.cf.flow_pg", "[W] C.3.1", "[F] C.1", "(p, g) gradient flow", formulas)


def _xi_flow_forms(dom, dp_der, dg_der) -> list[Formula]:
    """The Part I and Part II flow displays with ξ_i substituted, under both ξ definitions."""
    e_p = sp.exp(-p)
    out = []
    for name, xi in xi_definitions().items():
        x = {key: val.subs(u, e_p) for key, val in xi.items()}
        ratio_M = (1 + sp.exp(-p * (L - 2))) / (1 + e_p)
        # Part I dp/dt as printed uses ξ3 inside the m(2p)/m(p) term, where the ratio display has ξ4
        dp_part1 = e_p * g * (1 + x["xi1"]) / (1 + x["xi2"]) * (
            gstar - g * ratio_M + g * e_p * (1 + x["xi3"]) / ((1 + e_p) ** 2 * (1 + x["xi5"])))
        dg_part1 = (1 + x["xi3"]) / (1 - e_p) * (gstar - g * ratio_M)
        du_part2 = -(1 + x["xi1"]) * e_p**2 * g / (1 + x["xi2"]) * (
            gstar - g * ratio_M + g * e_p * (1 + x["xi4"]) / ((1 + e_p) ** 2 * (1 + x["xi5"])))
        rd = {"head1_range": "canonical", "xi_definition": name}
        out += [
            Formula(f"ih.cf.flow_pg.dp_part1_xi_{name}", "C.3.1 Part I", dp_part1, dp_der, dom,
                    f"Part I dp/dt with ξ {name.replace('_', ' ')}", reading=rd),
            Formula(f"ih.cf.flow_pg.dg_part1_xi_{name}", "C.3.1 Part I", dg_part1, dg_der, dom,
                    f"Part I dg/dt with ξ {name.replace('_', ' ')}", reading=rd),
            Formula(f"ih.cf.flow_pg.du_part2_xi_{name}", "C.3.1 Part II (u = e^{-p})", du_part2, -e_p * dp_der, dom,
                    f"Part II du/dt with ξ {name.replace('_', ' ')} vs -u dp/dt", reading=rd),
        ]
    return out
