"""Stage I of the induction-head paper ([W] App. C.2, [F] App. B): Function I, dq/dp̃, the loss and flow of p̃.

In Stage I only the layer-1 slope p̃ is trained. Layer 1 writes y_s = Σ_{τ<s} A_{sτ}(p̃) x_τ with
A_{sτ}(p̃) = e^{-p̃(s-1-τ)} / Σ_{k=0}^{s-2} e^{-p̃k} (Eq. (5)); head 1 reads y_s with the ALiBi
weights π_s at p(0), head 2 reads x_s with the weights at w_K(0)w_Q(0). With ``init = c2``
(p(0) = w_Q(0) = w_K(0) = 0, the setting of App. C.2) both are uniform: π_s = 1/(L-2) over the
canonical range s = 2..L-1, so the coefficient of x_τ in head 1's output is σ c_τ with
c_τ = Σ_{s=τ+1}^{L-1} A_{sτ}/(L-2), and head 2's output does not depend on p̃.

Sums whose inner range depends on the outer index are built for concrete L (the spec's
L ∈ {5, 7}); those formulas carry a domain without L.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.induction_head.symbols import ALPHA, M_closed, alpha, gstar, k, m_closed, ptilde, s, sigma

#: sequence lengths at which the nested-sum displays are compared symbolically (spec: L ∈ {5, 7})
FORMULA_LENGTHS = (5, 7)
#: sequence lengths at which the printed inequalities are sampled over p̃ ∈ (0, 30]
INEQUALITY_LENGTHS = (5, 7)

tau = sp.Symbol("tau", integer=True, positive=True)  # the token index τ of Function I

#: p̃ ∈ (0, 30] as in the spec's Stage-I grid; σ = g(0) = h(0) ∈ (0, 1); tokens in (-3, 3)
PTILDE_RANGE = Interval(0, 30, hi_open=False)
#: where printed *equalities* are sampled. Both sides are analytic in p̃ > 0, so agreement on
#: (0, 10] is agreement on (0, ∞); beyond it the printed forms cancel O(1) terms down to O(e^{-2p̃})
#: (q' ~ e^{-2p̃}) and 30-digit evaluation would report rounding as a discrepancy.
IDENTITY_PTILDE_RANGE = Interval(0, 10, hi_open=False)
SIGMA_RANGE = Interval(0, 1)
TOKEN_RANGE = Interval(-3, 3)

#: (τ, s) pairs with 1 <= τ < s <= 39 (L up to 40), aligned index by index (Domain cycles them together)
TAU_CHOICES = (1, 1, 2, 2, 3, 5, 10, 1, 38)
S_CHOICES = (2, 3, 3, 5, 4, 9, 11, 39, 39)

e = sp.exp


def layer1_weight(s_: int | sp.Expr, tau_: int | sp.Expr, pt: sp.Expr = ptilde) -> sp.Expr:
    """A_{sτ}(p̃) of Eq. (5): softmax((-p̃(s-1-ν))_{ν=1}^{s-1})_{ν=τ}, with the normaliser as a sum over k."""
    if isinstance(s_, int):
        normaliser = sp.Add(*[e(-pt * kk) for kk in range(s_ - 1)])
    else:
        normaliser = sp.Sum(e(-pt * k), (k, 0, s_ - 2))
    return e(-pt * (s_ - 1 - tau_)) / normaliser


def _sq(expr: sp.Expr) -> sp.Expr:
    """expr² left unexpanded (SymPy's automatic Pow of a sum spends seconds on sign queries)."""
    return sp.Pow(expr, 2, evaluate=False)


def _nested(
    length: int, outer: Callable[[int, sp.Expr], sp.Expr], summand: Callable[[int, int], sp.Expr]
) -> sp.Expr:
    """Σ_{τ=1}^{L-2} outer(τ, Σ_{s=τ+1}^{L-1} summand(τ, s)) for a concrete L."""
    return sp.Add(
        *[outer(t, sp.Add(*[summand(t, ss) for ss in range(t + 1, length)])) for t in range(1, length - 1)]
    )


def q_derived(length: int) -> sp.Expr:
    """Build q(p̃) from its definition, Σ_{τ=1}^{L-2} (Σ_{s=τ+1}^{L-1} A_{sτ}(p̃))² (as in the loss display)."""
    return _nested(length, lambda t, inner: _sq(inner), lambda t, ss: layer1_weight(ss, t))


def stage1_loss_derived(length: int) -> sp.Expr:
    """L^I(p̃) minus head 2's constant: ½E(σ Σ_τ c_τ x_τ - g* x_{L-2})² with E x_i x_j = δ_ij.

    Under ``init = c2`` head 1's weights at p(0) = 0 are π_s = 1/(L-2) on s = 2..L-1 and its
    value is g(0) = σ; head 1 outputs σ Σ_s π_s y_s. The residual is linear in the tokens, so
    the expectation is half the squared norm of its coefficient vector. Head 2's term is the
    same for every p̃ (its keys are multiplied by w_K(0)w_Q(0) = 0) and is left out.
    """
    pi = sp.Rational(1, length - 2)
    coefficient = {t: sp.Integer(0) for t in range(1, length + 1)}
    for ss in range(2, length):
        for t in range(1, ss):
            coefficient[t] += sigma * pi * layer1_weight(ss, t)
    coefficient[length - 2] -= gstar
    return sp.Add(*[c**2 for c in coefficient.values()]) / 2


def _domain(*extra: tuple[sp.Symbol, Interval], identity: bool = False) -> Domain:
    intervals = {ptilde: IDENTITY_PTILDE_RANGE if identity else PTILDE_RANGE}
    intervals.update(dict(extra))
    return Domain(intervals)


def _function_I_displays(length: int) -> dict[str, tuple[sp.Expr, str, str]]:
    """Return the five members of the printed Function I chain at a concrete L: name -> (expr, text, tex)."""
    one_minus = 1 - e(-ptilde)
    tail = lambda t, ss: e(-ptilde * (ss - 1 - t)) / (1 - e(-ptilde * (ss - 1)))  # noqa: E731

    def printed_first(t: int, ss: int) -> sp.Expr:
        return e(ptilde * (ss - 1 - t)) / sp.Add(*[e(-ptilde * kk) for kk in range(ss - 1)])

    return {
        "q_chain0": (
            _nested(length, lambda t, inner: _sq(inner), printed_first),
            "first display (the definition of q): numerator e^{+p̃(s-1-τ)} as printed; the inner "
            "sum 'Σ_{s=0}^{s-2} e^{-p̃k}' re-uses s and leaves k free, read as Σ_{k=0}^{s-2} e^{-p̃k}",
            r"q(\tilde p):=\sum_{\tau=1}^{L-2}\Big(\sum_{s=\tau+1}^{L-1}\frac{e^{\tilde p(s-1-\tau)}}"
            r"{\sum_{s=0}^{s-2}e^{-\tilde pk}}\Big)^2",
        ),
        "q_chain1": (
            _nested(length, lambda t, inner: _sq(inner), lambda t, ss: tail(t, ss) * one_minus),
            "second display: the normaliser summed as a geometric series",
            r"\sum_{\tau=1}^{L-2}\Big(\sum_{s=\tau+1}^{L-1}\frac{e^{-\tilde p(s-1-\tau)}}"
            r"{1-e^{-\tilde p(s-1)}}(1-e^{-\tilde p})\Big)^2",
        ),
        "q_chain2": (
            one_minus**2 * _nested(length, lambda t, inner: _sq(inner), tail),
            "third display: (1-e^{-p̃})² taken out of the sum",
            r"(1-e^{-\tilde p})^2\sum_{\tau=1}^{L-2}\Big(\sum_{s=\tau+1}^{L-1}\frac{e^{-\tilde p(s-1-\tau)}}"
            r"{1-e^{-\tilde p(s-1)}}\Big)^2",
        ),
        "q_chain3": (
            one_minus**2 * _nested(length, lambda t, inner: e(2 * ptilde * t) * _sq(inner), tail),
            "fourth display: e^{2p̃τ} put in front while e^{-p̃(s-1-τ)} keeps its τ (τ counted twice)",
            r"(1-e^{-\tilde p})^2\sum_{\tau=1}^{L-2}e^{2\tilde p\tau}\Big(\sum_{s=\tau+1}^{L-1}"
            r"\frac{e^{-\tilde p(s-1-\tau)}}{1-e^{-\tilde p(s-1)}}\Big)^2",
        ),
        "q_chain4": (
            one_minus**2
            * _nested(
                length,
                lambda t, inner: e(2 * ptilde * t) * _sq(inner),
                lambda t, ss: 1 / e(ptilde * (ss - 1)),
            ),
            "fifth display: inner summand 1/e^{p̃(s-1)} (the denominator 1 - e^{-p̃(s-1)} is gone; "
            "the next display, dq/dp̃, differentiates 1/(e^{p̃(s-1)} - 1) instead)",
            r"(1-e^{-\tilde p})^2\sum_{\tau=1}^{L-2}e^{2\tilde p\tau}\Big(\sum_{s=\tau+1}^{L-1}"
            r"\frac{1}{e^{\tilde p(s-1)}}\Big)^2",
        ),
    }


def _dq_displays(length: int) -> dict[str, tuple[sp.Expr, str]]:
    """Return the two printed lines of dq/dp̃ at a concrete L."""
    one_minus = 1 - e(-ptilde)
    big = lambda ss: e(ptilde * (ss - 1))  # noqa: E731
    inner = lambda t: sp.Add(*[1 / (big(ss) - 1) for ss in range(t + 1, length)])  # noqa: E731

    def inner_prime(t: int) -> sp.Expr:
        return sp.Add(*[-(ss - 1) * big(ss) / (big(ss) - 1) ** 2 for ss in range(t + 1, length)])

    def last(t: int) -> sp.Expr:
        return sp.Add(
            *[
                (e(-ptilde) + t * one_minus) / (big(ss) - 1) - (ss - 1) * big(ss) / (big(ss) - 1) ** 2
                for ss in range(t + 1, length)
            ]
        )

    taus = range(1, length - 1)
    line1 = (
        2 * one_minus * e(-ptilde) * sp.Add(*[e(2 * ptilde * t) * inner(t) ** 2 for t in taus])
        + one_minus**2 * sp.Add(*[2 * t * e(2 * ptilde * t) * inner(t) ** 2 for t in taus])
        + one_minus**2 * sp.Add(*[2 * e(2 * ptilde * t) * inner(t) * inner_prime(t) for t in taus])
    )
    line2 = 2 * one_minus * sp.Add(*[e(2 * ptilde * t) * inner(t) * last(t) for t in taus])
    return {
        "dq_line1": (
            line1,
            "first line (three terms: product rule on (1-e^{-p̃})² e^{2p̃τ} S_τ², "
            "S_τ = Σ_s 1/(e^{p̃(s-1)} - 1))",
        ),
        "dq_line2": (
            line2,
            "second line (common factor 2(1-e^{-p̃})e^{2p̃τ}S_τ taken out); "
            "the (s-1)e^{p̃(s-1)} term lost its factor (1-e^{-p̃})",
        ),
    }


def last_factor_forms() -> dict[str, sp.Expr]:
    """Return the s-th summand of dq/dp̃'s last factor: printed forms and the first-principles summand.

    ``derived`` is e^{-p̃τ} · dA_{sτ}/dp̃: with c_τ := Σ_s A_{sτ} = (1-e^{-p̃})e^{p̃τ} S_τ and
    c_τ' = Σ_s dA_{sτ}/dp̃, q' = Σ_τ 2c_τ c_τ' = 2(1-e^{-p̃}) Σ_τ e^{2p̃τ} S_τ Σ_s [this summand].
    """
    big = e(ptilde * (s - 1))
    t_printed = e(-ptilde)  # "where t = e^{-p̃}" as printed
    t_plus = e(ptilde)
    numerator2 = lambda t: (tau + 1 - s) * t ** (s - 1) - (tau - 1) * t ** (s - 2) - tau + (tau - 1) / t  # noqa: E731
    return {
        "derived": e(-ptilde * tau) * sp.diff(layer1_weight(s, tau), ptilde),
        "line2": (e(-ptilde) + tau * (1 - e(-ptilde))) / (big - 1) - (s - 1) * big / (big - 1) ** 2,
        "form1": ((tau - (tau - 1) * e(-ptilde)) * (big - 1) - (s - 1) * big) / (big - 1) ** 2,
        "form2": numerator2(t_printed) / (big - 1) ** 2,
        "form2_t_plus": numerator2(t_plus) / (big - 1) ** 2,
    }


def _index_domain(identity: bool = False) -> Domain:
    return Domain(
        {ptilde: IDENTITY_PTILDE_RANGE if identity else PTILDE_RANGE},
        {tau: (1, TAU_CHOICES), s: (2, S_CHOICES)},
        (Constraint(s >= tau + 1, "the inner sum runs over s = τ+1..L-1"),),
    )


def _head_output_formulas(length: int) -> list[Formula]:
    """Compare the Stage-I output display (both rows) with the model of §2.3 under init = c2."""
    xs = sp.symbols(f"x1:{length + 1}", real=True)
    x_of = lambda i: xs[i - 1]  # noqa: E731
    intervals = {ptilde: IDENTITY_PTILDE_RANGE, sigma: SIGMA_RANGE}
    intervals.update({xi: TOKEN_RANGE for xi in xs})
    dom = Domain(intervals)
    n_ = length - 2
    head1_printed = (
        sigma
        * sp.Rational(1, n_)
        * sp.Add(
            *[
                sp.Add(*[layer1_weight(ss, t) for ss in range(t + 1, length)]) * x_of(t)
                for t in range(1, length - 1)
            ]
        )
    )
    head1_model = sigma * sp.Add(
        *[
            sp.Rational(1, n_) * sp.Add(*[layer1_weight(ss, t) * x_of(t) for t in range(1, ss)])
            for ss in range(2, length)
        ]
    )
    head2_printed = sigma * sp.Rational(1, n_) * sp.Add(*[x_of(ss) for ss in range(2, length - 1)])
    head2 = {
        "literal": sigma * sp.Add(*[x_of(ss) for ss in range(2, length - 1)]) / (length - 3),
        "canonical": sigma * sp.Add(*[x_of(ss) for ss in range(2, length)]) / (length - 2),
    }
    out = [
        Formula(
            f"ih.cf.stage1.output_head1.L{length}",
            "C.2 Stage-I output (first row)",
            head1_printed,
            head1_model,
            dom,
            f"L = {length}: g(0)(1/(L-2))Σ_τ(Σ_s A_sτ)x_τ vs g(0)Σ_s π_s y_s, π_s = 1/(L-2) (p(0) = 0)",
            label_alt="[F] App. B",
            reading={"init": "c2", "head1_range": "canonical"},
        )
    ]
    for reading, model in head2.items():
        out.append(
            Formula(
                f"ih.cf.stage1.output_head2_{reading}.L{length}",
                "C.2 Stage-I output (second row)",
                head2_printed,
                model,
                dom,
                f"L = {length}: h(0)(1/(L-2))Σ_{{s=2}}^{{L-2}} x_s vs head 2 with w_K(0)w_Q(0) = 0 "
                f"(uniform softmax) over the {reading} range; the printed row is the 'mixed' reading "
                "(values to L-2, normaliser L-2)",
                label_alt="[F] App. B",
                reading={"init": "c2", "ih_model_range": reading},
            )
        )
    return out


def _loss_and_flow(length: int) -> tuple[list[Formula], list[RegionInequality]]:
    """Register the loss display, the flow of p̃ and its lower bound at a concrete L."""
    n_ = length - 2
    q = q_derived(length)
    loss = stage1_loss_derived(length)
    flow_derived = -sp.diff(loss, ptilde)
    pi_last_p0 = sp.Integer(1) / n_  # softmax((-p(0)(L-1-s))_{s=2}^{L-1})_{s=L-1} at p(0) = 0
    pi_last_ptilde = 1 / sp.Add(*[e(-ptilde * (length - 1 - ss)) for ss in range(2, length)])
    printed_loss = lambda last: gstar**2 + sigma**2 / n_**2 * q + 2 * sigma / n_ * gstar * last  # noqa: E731
    m_over_M2_p0 = sp.Rational(n_ * (n_ - 1), 2) / n_**2  # m(0)/M(0)² from the defining sums
    m_over_M2_pt = m_closed(ptilde, length) / M_closed(ptilde, length) ** 2
    q_prime = sp.diff(q, ptilde)

    def printed_flow(ratio: sp.Expr) -> sp.Expr:
        return -(sigma**2) / n_**2 * q_prime + 2 * alpha * sigma / ((1 + alpha) * n_) * ratio

    bound = 2 * alpha * sigma / ((1 + alpha) * n_) * e(-ptilde)
    dom = _domain((alpha, ALPHA), (sigma, SIGMA_RANGE))
    identity_dom = _domain((alpha, ALPHA), (sigma, SIGMA_RANGE), identity=True)
    tag = f"L{length}"
    readings = {
        "p0": ("p = p(0) = 0 as printed", pi_last_p0, m_over_M2_p0),
        "ptilde": ("p(0), p read as p̃", pi_last_ptilde, m_over_M2_pt),
    }
    formulas, inequalities = [], []
    for key, (words, last, ratio) in readings.items():
        formulas.append(
            Formula(
                f"ih.cf.stage1.loss_{key}.{tag}",
                "C.2 Stage-I loss",
                printed_loss(last),
                loss,
                identity_dom,
                f"L = {length}, {words}: printed E[...] with E x_τ² = 1 "
                "(no ½, cross term +2g(0)g*π_{L-1}/(L-2)) "
                "vs ½E(σΣc_τx_τ - g*x_{L-2})² (cross term -σg*A_{L-1,L-2}(p̃)/(L-2)); head 2's constant C "
                "dropped from both sides (independent of p̃ under init = c2)",
                label_alt="[F] App. B",
                reading={"init": "c2", "p_in_display": key},
            )
        )
        formulas.append(
            Formula(
                f"ih.cf.stage1.flow_{key}.{tag}",
                "C.2 dp̃/dt",
                printed_flow(ratio),
                flow_derived,
                identity_dom,
                f"L = {length}, {words}: -g(0)²q'/(L-2)² + 2α*g(0)m/((1+α*)(L-2)M²) vs -dL^I/dp̃ "
                "(q from first principles)",
                label_alt="[F] App. B",
                reading={"init": "c2", "p_in_display": key},
                latex=r"\frac{\mathrm d\tilde p}{\mathrm dt}=-\frac{g(0)^2}{(L-2)^2}q'(\tilde p)+"
                r"\frac{2\alpha^\star g(0)}{(1+\alpha^\star)(L-2)}\frac{m(p)}{M(p)^2}",
            )
        )
        inequalities.append(
            RegionInequality(
                f"ih.cf.stage1.bound_printed_flow_{key}.{tag}",
                "C.2 dp̃/dt ≥ …",
                bound,
                printed_flow(ratio),
                dom,
                description=f"L = {length}, {words}: printed flow ≥ e^{{-p̃}}2α*g(0)/((1+α*)(L-2)) over "
                "p̃ ∈ (0, 30], α* ∈ (0, 20), g(0) = σ ∈ (0, 1)",
            )
        )
    inequalities.append(
        RegionInequality(
            f"ih.cf.stage1.bound.{tag}",
            "C.2 dp̃/dt ≥ …",
            bound,
            flow_derived,
            dom,
            description=f"L = {length}: -dL^I/dp̃ (exact, init = c2) ≥ e^{{-p̃}}2α*g(0)/((1+α*)(L-2)) over "
            "p̃ ∈ (0, 30], α* ∈ (0, 20), g(0) = σ ∈ (0, 1)",
            latex=r"\geqslant\frac{2\alpha^\star g(0)}{(1+\alpha^\star)(L-2)}e^{-\tilde p}",
        )
    )
    inequalities.append(
        RegionInequality(
            f"ih.cf.stage1.dq_nonpositive.{tag}",
            "C.2 'we first prove dq/dp̃ ≤ 0'",
            sp.diff(q, ptilde),
            sp.Integer(0),
            _domain(),
            description=f"L = {length}: q'(p̃) from first principles ≤ 0 on p̃ ∈ (0, 30]",
        )
    )
    return formulas, inequalities


def item_stage1() -> Item:
    """ih.cf.stage1 ([W] App. C.2 Stage I; [F] App. B): Function I, dq/dp̃, loss, flow and bound of p̃."""
    formulas: list[Formula] = []
    inequalities: list[RegionInequality] = []
    for length in FORMULA_LENGTHS:
        q = q_derived(length)
        dom = _domain(identity=True)
        for name, (expr, words, latex) in _function_I_displays(length).items():
            formulas.append(
                Formula(
                    f"ih.cf.stage1.{name}.L{length}",
                    "C.2 Function I",
                    expr,
                    q,
                    dom,
                    f"L = {length}, {words}, vs q = Σ_τ(Σ_s A_sτ)²",
                    label_alt="[F] App. B",
                    reading={"inner_sum_index": "k"} if name == "q_chain0" else {},
                    latex=latex,
                )
            )
        dq = sp.diff(q, ptilde)
        for name, (expr, words) in _dq_displays(length).items():
            formulas.append(
                Formula(
                    f"ih.cf.stage1.{name}.L{length}",
                    "C.2 dq/dp̃",
                    expr,
                    dq,
                    dom,
                    f"L = {length}, {words}, vs d/dp̃ of q = Σ_τ(Σ_s A_sτ)²",
                    label_alt="[F] App. B",
                )
            )
        formulas += _head_output_formulas(length)
    for length in INEQUALITY_LENGTHS:
        more_formulas, more_inequalities = _loss_and_flow(length)
        if length in FORMULA_LENGTHS:
            formulas += more_formulas
        inequalities += more_inequalities

    forms = last_factor_forms()
    idx, idx_identity = _index_domain(), _index_domain(identity=True)
    formulas += [
        Formula(
            "ih.cf.stage1.last_factor1",
            "C.2 'last factor' (first form)",
            forms["form1"],
            forms["derived"],
            idx_identity,
            "[(τ-(τ-1)e^{-p̃})(e^{p̃(s-1)}-1) - (s-1)e^{p̃(s-1)}]/(e^{p̃(s-1)}-1)² vs the s-th summand "
            "of the last factor of q' from first principles",
            label_alt="[F] App. B",
            latex=r"\frac{(\tau-(\tau-1)e^{-\tilde p})(e^{\tilde p(s-1)}-1)-(s-1)e^{\tilde p(s-1)}}"
            r"{(e^{\tilde p(s-1)}-1)^2}",
        ),
        Formula(
            "ih.cf.stage1.last_factor1_vs_line2",
            "C.2 'last factor' (first form)",
            forms["form1"],
            forms["line2"],
            idx_identity,
            "consistency: first form vs the summand of the printed second dq/dp̃ line "
            "(derived side is the printed line, not a derivation)",
            label_alt="[F] App. B",
        ),
        Formula(
            "ih.cf.stage1.last_factor2",
            "C.2 'last factor' (second form)",
            forms["form2"],
            forms["derived"],
            idx_identity,
            "[(τ+1-s)t^{s-1} - (τ-1)t^{s-2} - τ + (τ-1)/t]/(e^{p̃(s-1)}-1)² with t = e^{-p̃} as printed, "
            "vs the first-principles summand",
            label_alt="[F] App. B",
            reading={"t": "exp(-ptilde)"},
            latex=r"\frac{(\tau+1-s)t^{s-1}-(\tau-1)t^{s-2}-\tau+\frac{\tau-1}{t}}{(e^{\tilde p(s-1)}-1)^2}",
        ),
        Formula(
            "ih.cf.stage1.last_factor2_t_plus_vs_form1",
            "C.2 'last factor' (second form)",
            forms["form2_t_plus"],
            forms["form1"],
            idx_identity,
            "consistency: second form with t = e^{+p̃} (the only reading under which t ≥ 1) vs the first "
            "printed form (derived side is the printed form)",
            label_alt="[F] App. B",
            reading={"t": "exp(+ptilde)"},
        ),
    ]
    inequalities += [
        RegionInequality(
            "ih.cf.stage1.t_ge_1",
            "C.2 'where t = e^{-p̃} ≥ 1'",
            sp.Integer(1),
            e(-ptilde),
            _domain(),
            description="printed claim t = e^{-p̃} ≥ 1 over p̃ ∈ (0, 30]",
        ),
        RegionInequality(
            "ih.cf.stage1.last_factor_sign_printed",
            "C.2 'Since s ≥ τ+1, dq/dp̃ ≤ 0'",
            forms["form2"],
            sp.Integer(0),
            idx,
            description="the sign argument read summand-wise: printed second form (t = e^{-p̃}) ≤ 0 "
            "for p̃ ∈ (0, 30], 1 ≤ τ < s ≤ 39",
        ),
        RegionInequality(
            "ih.cf.stage1.last_factor_sign_derived",
            "C.2 'Since s ≥ τ+1, dq/dp̃ ≤ 0'",
            forms["derived"],
            sp.Integer(0),
            idx,
            description="the sign argument read summand-wise on the first-principles summand ≤ 0 "
            "for p̃ ∈ (0, 30], 1 ≤ τ < s ≤ 39",
        ),
    ]
    notes = [
        "The first Function I display writes the normaliser as 'Σ_{s=0}^{s-2} e^{-p̃k}' (index s re-used, k "
        "free); it is encoded as Σ_{k=0}^{s-2} e^{-p̃k}, the only defined reading.",
        "q'(p̃) in the printed flow is taken as the derivative of q from first principles (the printed first "
        "display of q has e^{+p̃(s-1-τ)} and is a different function).",
        "Only init = c2 (the setting C.2 states) is encoded; under init = eq4 head 1's weights at p(0) = σ "
        "are not uniform and head 2's term depends on p̃ through its keys y_s (Monte-Carlo, not here).",
        "The printed loss and flow name m(p), M(p) and softmax(-p(0)(…)) of the head-1 slope, frozen at "
        "p(0) = 0 in Stage I; both the literal reading and the reading p -> p̃ are registered.",
        f"Nested-sum displays are compared at L ∈ {FORMULA_LENGTHS}; inequalities in p̃ at L ∈ "
        f"{INEQUALITY_LENGTHS}; the last factor's summands for (τ, s) pairs up to (38, 39).",
    ]
    return Item(
        "ih.cf.stage1",
        "[W] App. C.2 (Stage I)",
        "[F] App. B",
        "Stage I: Function I, dq/dp̃, loss and flow",
        formulas,
        inequalities,
        notes,
    )
