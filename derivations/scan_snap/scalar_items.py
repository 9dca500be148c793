r"""Items of App. B.3 (Lemmas 6–9, 11), Corollary 1's step count and the derive-and-verify items on h and γ.

Each builder returns a :class:`derivations.core.Item`: the paper's display (or the specification's
derive-and-verify formula) as ``stated``, and the same quantity built from the definitions of
:mod:`derivations.scan_snap.scalar` as ``derived`` (Eqn 44 separated and integrated, Lambert W,
``diff``). Time is sampled by its decimal logarithm (``lg_t`` ∈ (−2, 8)) so that every stage of h is
probed, and u = Mh by its value (u ∈ (0, 60)).
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.scan_snap import scalar as S
from derivations.scan_snap.symbols import K, M, epsilon, etaY, u, x

#: vocabulary sizes of ss.cfg.lemma8 and the sweeps (M to 1e8 where the closed forms allow)
M_VALUES = (30, 33, 34, 100, 125, 240, 1000, 10**4, 50272, 10**6, 10**8)
#: K of ss.cfg.gamma
K_VALUES = (1, 10)
lg_t = sp.Symbol("lg_t", real=True)  # log10 of t (steps)
theta = sp.Symbol("theta", positive=True)  # a position inside an interval
Mi = sp.Symbol("M", integer=True, positive=True)  # M where it is a vocabulary size sampled on a list
Ki = sp.Symbol("K", integer=True, positive=True)


def _domain(*, m=True, k=False, eta=False, lgt=False, uu=False, extra=None) -> Domain:
    intervals, integers = {}, {}
    if m:
        integers[Mi] = (3, M_VALUES)
    if k:
        integers[Ki] = (1, K_VALUES)
    if eta:
        intervals[etaY] = Interval(0.01, 1.0, scale="log")
    if lgt:
        intervals[lg_t] = Interval(-2, 8)
    if uu:
        intervals[u] = Interval(0, 60)
    intervals.update(extra or {})
    return Domain(intervals, integers)


def _ints(expr: sp.Expr) -> sp.Expr:
    """The expression with M, K as the integer symbols sampled on the vocabulary lists."""
    return expr.xreplace({M: Mi, K: Ki})


def _t() -> sp.Expr:
    return sp.Integer(10) ** lg_t


def item_lemma6_implicit() -> Item:
    """ss.lemma6.implicit — Lemma 6, Eqns 44–45.

    Definition: Eqn 44 separated, s(h) = η_Y^{-1}∫₀^h((M−1) + e^{Mh'})dh' (h increases, so s(h) is its
    inverse), evaluated at h = u/M. Printed Eqn 45: e^{Mh} + (M−1)Mh = Mη_Y s + 1. R7: at s = 0 both
    sides are 1 (h(0) = 0).
    """
    hu = u / Mi
    stated = sp.exp(Mi * hu) + (Mi - 1) * Mi * hu
    derived = Mi * etaY * _ints(S.visits_to_reach(u / M)).xreplace({M: Mi}) + 1
    return Item("ss.lemma6.implicit", "Lemma 6, Eqns 44–45", "", "the implicit solution of dh/dt", formulas=[
        Formula("ss.lemma6.implicit.eq45", "Eqn 45", stated, derived, _domain(eta=True, uu=True),
                description="e^{Mh} + (M−1)Mh against Mη_Y s(h) + 1, s(h) from Eqn 44 separated",
                latex=r"\exp(Mh(t)) + (M-1)Mh(t) = M\eta_Y t + 1"),
    ])


def item_lambertw() -> Item:
    """ss.dv.lambertw — Mh = C − W₀(e^C/(M−1)), C = (Mη_Y t + 1)/(M−1).

    Derived: the explicit form solves Eqn 44 (its ``diff`` equals η_Y/((M−1) + e^{Mh})) with h(0) = 0, and it
    satisfies Eqn 45; as a function of τ = η_Y t it depends on (η_Y, t) only through η_Y t by construction.
    """
    s_ = sp.Symbol("s", positive=True)
    H = _ints(S.h_of(etaY * s_))
    ode = sp.diff(H, s_)
    rhs = _ints(S.h_derivative(H))
    Ht = H.xreplace({s_: _t()})
    formulas = [
        Formula("ss.dv.lambertw.solves_eq44", "Eqn 44", ode.xreplace({s_: _t()}), rhs.xreplace({s_: _t()}),
                _domain(eta=True, lgt=True), description="d/ds of the explicit h against η_Y/((M−1)+e^{Mh})"),
        Formula("ss.dv.lambertw.initial", "Lemma 6 (h(0) = 0)", H.xreplace({s_: 0}), sp.Integer(0), _domain(),
                description="the explicit h at s = 0"),
        Formula("ss.dv.lambertw.eq45", "Eqn 45", sp.exp(Mi * Ht) + (Mi - 1) * Mi * Ht, Mi * etaY * _t() + 1,
                _domain(eta=True, lgt=True), description="Eqn 45 at the explicit h"),
    ]
    return Item("ss.dv.lambertw", "derived (Lemma 6)", "", "h through Lambert W", formulas=formulas)


def item_gamma_stable() -> Item:
    """ss.dv.gamma_stable — γ = (M−1)²h e^{−Mh}/((M−1)e^{−Mh} + 1), no e^{Mh} for Mh > 709."""
    hu = u / Mi
    dom = _domain(extra={u: Interval(0, 2000)})
    return Item("ss.dv.gamma_stable", "derived (L579)", "", "γ without overflow", formulas=[
        Formula("ss.dv.gamma_stable.form", "L579", _ints(S.gamma_stable_of_h(hu)), _ints(S.gamma_of_h(hu)), dom,
                description="overflow-safe γ against the definition, u = Mh up to 2000"),
    ])


def item_gamma_peak() -> Item:
    """ss.dv.gamma_peak — γ is maximal at u* with e^{u*}(u*−1) = M−1, γ_max = (M−1)(u*−1)/M, at
    t_pk = K(e^{u*} + (M−1)u* − 1)/(Mη_Y).

    Derived: u* = 1 + W₀((M−1)/e) is a zero of dγ/du (checked), γ at u*, and the time at which h(t/K) = u*/M
    from Eqn 44 separated (t = K s(u*/M)).
    """
    ustar = _ints(S.peak_u())
    gamma_u = _ints(S.gamma_of_h(u / M))
    slope = sp.diff(gamma_u, u).xreplace({u: ustar})
    spec_tpk = Ki * (sp.exp(ustar) + (Mi - 1) * ustar - 1) / (Mi * etaY)
    derived_tpk = Ki * _ints(S.visits_to_reach(u / M)).xreplace({u: ustar})
    return Item("ss.dv.gamma_peak", "derived (L579)", "", "the peak of γ", formulas=[
        Formula("ss.dv.gamma_peak.stationary", "derived", slope, sp.Integer(0), _domain(),
                description="dγ/du at u* = 1 + W₀((M−1)/e)"),
        Formula("ss.dv.gamma_peak.gamma_max", "derived", (Mi - 1) * (ustar - 1) / Mi, gamma_u.xreplace({u: ustar}),
                _domain(), description="γ_max = (M−1)(u*−1)/M against γ(u*)"),
        Formula("ss.dv.gamma_peak.t_peak", "derived", spec_tpk, derived_tpk, _domain(k=True, eta=True),
                description="t_pk against K s(u*/M) from Eqn 44"),
    ])


def item_balance_time() -> Item:
    """ss.dv.balance_time — h(t/K) reaches the upper root of Lemma 8 at t_bal = K(2(M−1)(1+ω₁)ln M − 1)/(Mη_Y)."""
    u1 = _ints(S.upper_root())
    w1 = _ints(S.omega1())
    stated = Ki * (2 * (Mi - 1) * (1 + w1) * sp.log(Mi) - 1) / (Mi * etaY)
    derived = Ki * _ints(S.visits_to_reach(u / M)).xreplace({u: u1})
    return Item("ss.dv.balance_time", "derived (Lemma 8, Eqn 45)", "", "when h(t/K) reaches the upper root",
                formulas=[Formula("ss.dv.balance_time.t_bal", "derived", stated, derived, _domain(k=True, eta=True),
                                  description="t_bal against K s(u₁/M), u₁ = −W₋₁(−1/(M−1))")])


def item_lemma8_roots() -> Item:
    """ss.lemma8.roots — Lemma 8, Eqns 50–51: the roots of e^{Mh} = (M−1)Mh, h = M^{−(2−ω₀)}, h = (1+ω₁)ln M/M.

    Derived: u = Mh, e^u = (M−1)u has the roots u₀ = −W₀(−1/(M−1)) and u₁ = −W₋₁(−1/(M−1)); ω₀, ω₁ follow
    from the printed parameterisations. Eqns 50 and 51 are fixed-point equations: evaluated at the true ω₀,
    ω₁ they must hold. The sign pattern of φ(u) = e^u − (M−1)u (≤ 0 on 𝕁₁, > 0 outside) is sampled on
    [0, u₀), [u₀, u₁] and (u₁, u₁ + 50).
    """
    u0, u1 = _ints(S.lower_root()), _ints(S.upper_root())
    w0, w1 = _ints(S.omega0()), _ints(S.omega1())
    ln = sp.log(Mi)
    dom = _domain()
    dom_theta = _domain(extra={theta: Interval(0, 1)})
    below, inside, above = theta * u0, u0 + theta * (u1 - u0), u1 + 50 * theta
    phi_lhs = lambda v: sp.exp(v)  # noqa: E731
    phi_rhs = lambda v: (Mi - 1) * v  # noqa: E731
    return Item(
        "ss.lemma8.roots", "Lemma 8, Eqns 50–51", "", "the roots ω₀, ω₁",
        formulas=[
            Formula("ss.lemma8.roots.lower_is_root", "Lemma 8", sp.exp(u0), (Mi - 1) * u0, dom,
                    description="u₀ = −W₀(−1/(M−1)) solves e^u = (M−1)u"),
            Formula("ss.lemma8.roots.upper_is_root", "Lemma 8", sp.exp(u1), (Mi - 1) * u1, dom,
                    description="u₁ = −W₋₁(−1/(M−1)) solves e^u = (M−1)u"),
            Formula("ss.lemma8.roots.eq50", "Eqn 50", (sp.log(Mi / (Mi - 1)) + Mi ** (w0 - 1)) / ln, w0, dom,
                    description="the fixed point of Eqn 50 at the true ω₀", latex=r"\omega_0 = \frac{1}{\ln M}"
                    r"\left(\ln\left(\frac{M}{M-1}\right) + \frac{1}{M^{1-\omega_0}} \right)"),
            Formula("ss.lemma8.roots.eq51", "Eqn 51", Mi**w1, (1 + w1) * ln * (Mi - 1) / Mi, dom,
                    description="Eqn 51 at the true ω₁", latex=r"M^{\omega_1} = (1+\omega_1)\ln(M)\frac{(M-1)}{M}"),
        ],
        inequalities=[
            RegionInequality("ss.lemma8.roots.inside_J1", "Lemma 8", phi_lhs(inside), phi_rhs(inside), dom_theta,
                             description="e^{Mh} <= (M−1)Mh on 𝕁₁"),
            RegionInequality("ss.lemma8.roots.below_J1", "Lemma 8", phi_rhs(below), phi_lhs(below), dom_theta,
                             strict=True, description="e^{Mh} > (M−1)Mh below 𝕁₁"),
            RegionInequality("ss.lemma8.roots.above_J1", "Lemma 8", phi_rhs(above), phi_lhs(above), dom_theta,
                             strict=True, description="e^{Mh} > (M−1)Mh above 𝕁₁ (to u₁ + 50)"),
        ],
        notes=["Lemma 8 says 'there exists ω_i, 0 < ω_i ≪ 1, i = 2, 3' and then uses ω₀, ω₁: the indices 2, 3 "
               "are not defined (R4); read as ω₀, ω₁."],
    )


def item_gamma_def() -> Item:
    """ss.lemma9.gamma_def — L579 / L979 γ(t) with h(t/K); Eqn 85 with h(⌈t/K⌉) and "> 0".

    Derived (spec): the scalar of Eqn 83, (M−1)h̄ · (M−1)/((M−1) + e^{Mh̄}), the product of the size of
    w̄_n = (M−1)h̄ ζ_n and the factor of Lemma 5, with h̄ = h(t/K) (reading ``gamma_arg=t_over_K``) or
    h(⌈t/K⌉) (``ceil``, the canonical reading for the lines of Theorem 1's proof). R7: γ(0) = 0, so the
    printed "> 0" needs t > 0; the inequality is sampled for t >= 10^{-2}.
    """
    def product(hbar):
        return (Mi - 1) * hbar * (Mi - 1) / ((Mi - 1) + sp.exp(Mi * hbar))

    h_frac = _ints(S.h_of(etaY * _t() / Ki))
    h_ceil = _ints(S.h_of(etaY * sp.ceiling(_t() / Ki)))
    printed = lambda hbar: (Mi - 1) ** 2 * hbar / ((Mi - 1) + sp.exp(Mi * hbar))  # noqa: E731
    dom = _domain(k=True, eta=True, lgt=True)
    return Item("ss.lemma9.gamma_def", "L579; Eqn 85; L979", "", "the speed control coefficient γ", formulas=[
        Formula("ss.lemma9.gamma_def.L579", "L579, L979", printed(h_frac), product(h_frac), dom,
                description="γ(t) with h(t/K) against the Eqn 83 product",
                latex=r"\gamma(t) := \frac{(M-1)^2 h(t/K)}{(M-1) + \exp(Mh(t/K))}"),
        Formula("ss.lemma9.gamma_def.eq85", "Eqn 85", printed(h_ceil), product(h_ceil), dom,
                description="γ(t) with h(⌈t/K⌉) against the Eqn 83 product",
                latex=r"\gamma(t) := \frac{(M-1)^2 h(\lceil t/K \rceil)}{(M-1) + \exp(Mh(\lceil t/K \rceil))}"),
    ], inequalities=[
        RegionInequality("ss.lemma9.gamma_def.eq85_positive", "Eqn 85", sp.Integer(0), printed(h_ceil), dom,
                         strict=True, description="γ(t) > 0 for t >= 10^{-2}"),
    ], notes=["R7: γ(0) = 0 under both printings (h(0) = 0), so Eqn 85's '> 0' holds for t > 0 only."])


def item_stage_identities() -> Item:
    """ss.lemma9.stage_identities — proof of Lemma 9, Eqns 53, 54, 56, 57 (K = 1 as printed; t → t/K for K = 10).

    With Δ₁ = e^{Mh}/(M−1), Δ₂ = e^{Mh}/((M−1)Mh) at h = h(t/K) (Lambert-W form) and γ from its definition.
    """
    tt = _t() / Ki
    H = _ints(S.h_of(etaY * tt))
    g = _ints(S.gamma_of_h(H))
    d1 = sp.exp(Mi * H) / (Mi - 1)
    d2 = sp.exp(Mi * H) / ((Mi - 1) * Mi * H)
    A = (Mi * etaY * tt + 1) / (1 + 1 / d2)
    dom = _domain(k=True, eta=True, lgt=True)
    lines = [
        ("eq53", "Eqn 53", (Mi * etaY * tt + 1) / ((1 + d2) * Mi * (Mi - 1)), H, "h"),
        ("eq54_first", "Eqn 54", (Mi - 1) * H / (1 + d1), g, "γ"),
        ("eq54_second", "Eqn 54", (Mi * etaY * tt + 1) / ((1 + d1) * (1 + d2) * Mi), g, "γ"),
        ("eq56", "Eqn 56", sp.log(A) / Mi, H, "h"),
        ("eq57", "Eqn 57", (Mi - 1) / Mi * (Mi - 1) * sp.log(A) / ((1 + 1 / d1) * A), g, "γ"),
    ]
    return Item("ss.lemma9.stage_identities", "proof of Lemma 9, Eqns 53–57", "", "the stage identities",
                formulas=[Formula(f"ss.lemma9.stage_identities.{name}", label, stated, derived, dom,
                                  description=f"{label} against {what} (t -> t/K)")
                          for name, label, stated, derived, what in lines])


def item_g_derivative() -> Item:
    """ss.lemma11.g_derivative — Eqn 64, first two lines: dg/ds for g(s) = (M−1+e^{Mh(s)})^{-1}.

    Derived: ``diff`` of g along the Lambert-W solution of Eqn 44.
    """
    s_ = sp.Symbol("s", positive=True)
    H = _ints(S.h_of(etaY * s_))
    g = 1 / (Mi - 1 + sp.exp(Mi * H))
    derived = sp.diff(g, s_)
    e = sp.exp(Mi * H)
    line1 = Mi * e / (Mi - 1 + e) ** 2 * sp.diff(H, s_)
    line2 = 1 / (Mi - 1 + e) * etaY * Mi * e / (Mi - 1 + e) ** 2
    at = {s_: _t()}
    dom = _domain(eta=True, lgt=True)
    return Item("ss.lemma11.g_derivative", "Eqn 64 (lines 1–2)", "", "the derivative of g", formulas=[
        Formula("ss.lemma11.g_derivative.line1", "Eqn 64, line 1", line1.xreplace(at), derived.xreplace(at), dom,
                description="M e^{Mh}/(M−1+e^{Mh})² · dh/ds against d/ds of g",
                latex=r"\frac{dg}{ds} = \frac{M \exp(Mh(s))}{(M-1+\exp(Mh(s)))^2} \cdot \frac{dh}{ds}"),
        Formula("ss.lemma11.g_derivative.line2", "Eqn 64, line 2", line2.xreplace(at), derived.xreplace(at), dom,
                description="the second line against d/ds of g"),
    ])


def item_lemma11_factor() -> Item:
    """ss.dv.lemma11_factor — max_{x>0} Mx/(M−1+x)² = M/(4(M−1)) at x = M−1, and where the printed constants
    bound it: Eqn 64's (M/(M−1))·(1/4) for every M, Eqn 65's 1/3 for M >= 4 (the derived boundary)."""
    Mr = sp.Symbol("M", positive=True)
    f = Mr * x / (Mr - 1 + x) ** 2
    critical = sp.solve(sp.diff(f, x), x)
    xstar = [c for c in critical if c.is_positive is not False][0]
    derived_max = sp.simplify(f.xreplace({x: xstar}))
    boundary = sp.solve(sp.Eq(derived_max, sp.Rational(1, 3)), Mr)
    dom = Domain({Mr: Interval(1, 1e8, scale="log")})
    dom4 = Domain({Mr: Interval(4, 1e8, lo_open=False)})
    dom_x = Domain({Mr: Interval(1, 1e4), x: Interval(0, 1e5)})
    return Item("ss.dv.lemma11_factor", "derived (Eqns 64–65)", "", "the factor of Lemma 11", formulas=[
        Formula("ss.dv.lemma11_factor.max", "derived", Mr / (4 * (Mr - 1)), derived_max, dom,
                description="the maximum over x > 0, from the zero of the derivative"),
        Formula("ss.dv.lemma11_factor.argmax", "Eqn 64 (h = ln(M−1)/M)", Mr - 1, xstar, dom,
                description="the maximiser x = e^{Mh} = M − 1"),
        Formula("ss.dv.lemma11_factor.eq65_boundary", "derived", sp.Integer(4), boundary[0] if boundary else sp.nan,
                dom, description="the M at which M/(4(M−1)) = 1/3"),
    ], inequalities=[
        RegionInequality("ss.dv.lemma11_factor.bounded", "Eqn 64", f, Mr / (Mr - 1) / 4, dom_x,
                         description="Mx/(M−1+x)² <= M/(4(M−1)) for every x > 0"),
        RegionInequality("ss.dv.lemma11_factor.eq65_constant", "Eqn 65", Mr / (4 * (Mr - 1)), sp.Rational(1, 3),
                         dom4, description="M/(4(M−1)) <= 1/3 on M >= 4"),
    ])


def item_cor1_exact_steps() -> Item:
    """ss.dv.cor1_exact_steps — visits to reach ‖e_n − α_n‖ = ε under the continuous h:
    S(ε) = (E_ε + (M−1)ln E_ε − 1)/(Mη_Y), E_ε = (M−1)(√(M/(M−1))/ε − 1), for ε < √((M−1)/M).

    Derived: ‖e_n − α_n‖ = (M−1)‖ζ_n‖/((M−1) + e^{Mh}) (Lemma 5) with ‖ζ_n‖² = q₁ = M/(M−1); solved for
    e^{Mh} and mapped to visits by Eqn 44 separated.
    """
    X = sp.Symbol("X", positive=True)  # e^{Mh}
    norm_zeta = sp.sqrt(Mi / (Mi - 1))
    solved = sp.solve(sp.Eq((Mi - 1) * norm_zeta / ((Mi - 1) + X), epsilon), X)[0]
    derived = _ints(S.visits_to_reach(u / M)).xreplace({u: sp.log(solved)})
    E = (Mi - 1) * (norm_zeta / epsilon - 1)
    stated = (E + (Mi - 1) * sp.log(E) - 1) / (Mi * etaY)
    q = sp.Symbol("q", positive=True)  # ε as a fraction of its largest value √((M−1)/M)
    at = {epsilon: q * sp.sqrt((Mi - 1) / Mi)}
    dom = _domain(eta=True, extra={q: Interval(1e-6, 1, scale="log")})
    return Item("ss.dv.cor1_exact_steps", "derived (Corollary 1)", "", "exact visits to reach ε", formulas=[
        Formula("ss.dv.cor1_exact_steps.S", "derived", stated.xreplace(at), derived.xreplace(at), dom,
                description="S(ε) against s(h_ε), ε = q√((M−1)/M)"),
    ], notes=["the approximation S ≈ (1/η_Y)(1/ε + ln(M/ε)) for small ε is reported by the numeric method"])


def item_dv_lemma10_region() -> Item:
    """ss.dv.lemma10_region — where √((N/2)ln(2/δ)) + 1 < √(N ln(2/δ)) (Eqn 58, second inequality).

    Derived: with a = √(N ln(2/δ)), the inequality is a(1 − 1/√2) > 1, i.e. N ln(2/δ) > (2 + √2)²/... —
    exactly N ln(2/δ) > 1/(1 − 1/√2)² = 2/(√2 − 1)² = 2(3 + 2√2) ≈ 11.657.
    """
    Nn = sp.Symbol("N", positive=True)
    dl = sp.Symbol("delta", positive=True)
    lhs = sp.sqrt(Nn / 2 * sp.log(2 / dl)) + 1
    rhs = sp.sqrt(Nn * sp.log(2 / dl))
    threshold = 1 / (1 - 1 / sp.sqrt(2)) ** 2
    a = sp.Symbol("a", positive=True)
    root = sp.solve(sp.Eq(a / sp.sqrt(2) + 1, a), a)[0]
    inside = Domain({Nn: Interval(1, 1e6, scale="log"), dl: Interval(0, 1)},
                    constraints=(Constraint(Nn * sp.log(2 / dl) > threshold, "the derived region"),))
    outside = Domain({Nn: Interval(0, 12), dl: Interval(0, 1)},
                     constraints=(Constraint(Nn * sp.log(2 / dl) < threshold, "outside the derived region"),))
    return Item("ss.dv.lemma10_region", "derived (Eqn 58)", "", "where Eqn 58's second inequality holds",
                formulas=[Formula("ss.dv.lemma10_region.threshold", "derived", threshold, root**2,
                                  Domain({}), description="N ln(2/δ) at the boundary, 2(3 + 2√2)")],
                inequalities=[
                    RegionInequality("ss.dv.lemma10_region.inside", "Eqn 58", lhs, rhs, inside, strict=True,
                                     description="holds for N ln(2/δ) > 2(3 + 2√2)"),
                    RegionInequality("ss.dv.lemma10_region.outside", "Eqn 58", rhs, lhs, outside,
                                     description="fails (reversed) for N ln(2/δ) < 2(3 + 2√2)"),
                ])
