"""Printed inequalities of App. A: Lemma A.1 (softmax Lipschitz), Eq. (2) (logistic Taylor), gradient norms.

rl.cf.softmax_lipschitz, rl.cf.logistic_taylor and rl.cf.gradient_norm_bounds. Each printed
inequality is a :class:`RegionInequality` on the natural domain of its variables (spec §0.2
item 3: the whole real line where no domain is printed; sampled boxes stand for it, and the
failure set of Eq. (2) is derived in closed form). Next to each, the sharp constant derived from
the definition (softmax Jacobian, f', Popoviciu's variance bound) is registered as an
inequality too, and the extremal configuration that attains it as a Formula.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language.symbols import LAMBDA, J_prime, f, lam, parameter_domain, x, xp


def _norm(values) -> sp.Expr:
    return sp.sqrt(sp.Add(*[v**2 for v in values]))


def item_softmax_lipschitz(lengths=(2, 3)) -> Item:
    """rl.cf.softmax_lipschitz — Lemma A.1 and the inequality after it.

    Definition used: φ(v)_i = exp(v_i)/Σ_j exp(v_j) (Sec. 3), at temperature λ. The printed
    constant 1/λ is compared on random (x, y, λ); the sharp constant 1/(2λ) is derived from the
    Jacobian diag(φ) - φφ^⊤, whose quadratic form is Var_φ(v) <= (max v - min v)²/4 <= ‖v‖²/2
    (Popoviciu), and attained at φ = (1/2, 1/2), v ∝ (1, -1). The chain after the lemma is
    encoded for a length-3 sample with W - W' supported on the sample's column (the case in
    which ‖W_t - W_t'‖ is smallest for given scores).
    """
    inequalities, formulas = [], []
    for n in lengths:
        xs = sp.symbols(f"x1:{n + 1}", real=True)
        ys = sp.symbols(f"y1:{n + 1}", real=True)
        gap = _norm([a - b for a, b in zip(M.softmax(xs), M.softmax(ys), strict=True)])
        dist = _norm([a - b for a, b in zip(xs, ys, strict=True)])
        dom = parameter_domain([*xs, *ys, lam])
        inequalities.append(RegionInequality(f"rl.cf.softmax_lipschitz.lemma_A1.L{n}", "Lemma A.1", gap, dist / lam,
                                             dom, description=f"‖φ(x/λ) - φ(y/λ)‖ <= ‖x - y‖/λ, x, y in R^{n}",
                                             latex=r"\|\phi(x/\lambda)-\phi(y/\lambda)\|\le\frac1\lambda\|x-y\|"))
        inequalities.append(RegionInequality(f"rl.cf.softmax_lipschitz.sharp.L{n}", "derived sharp constant",
                                             gap, dist / (2 * lam), dom,
                                             description="derived (not printed): Lipschitz constant 1/(2λ)"))
        v = sp.symbols(f"v1:{n + 1}", real=True)
        phi = M.softmax(xs, 1)
        mean = sp.Add(*[p * vi for p, vi in zip(phi, v, strict=True)])
        quad = sp.Add(*[p * vi**2 for p, vi in zip(phi, v, strict=True)]) - mean**2
        inequalities.append(RegionInequality(
            f"rl.cf.softmax_lipschitz.jacobian_quadratic_form.L{n}", "derived: v^⊤(diag φ - φφ^⊤)v <= ‖v‖²/2",
            quad, _norm(v) ** 2 / 2, parameter_domain([*xs, *v]),
            description="the Jacobian's quadratic form is Var_φ(v); Popoviciu gives <= ‖v‖²/2"))
    h = sp.Symbol("h", positive=True)
    two = M.softmax((h / lam, -h / lam), 1)
    ratio = _norm([two[0] - sp.Rational(1, 2), two[1] - sp.Rational(1, 2)]) / _norm((h, -h))
    formulas.append(Formula("rl.cf.softmax_lipschitz.sharp_constant_attained", "derived sharp constant",
                            1 / (2 * lam), sp.limit(ratio, h, 0), Domain({lam: LAMBDA}),
                            "lim_{h->0} ‖φ((h, -h)/λ) - φ(0)‖/‖(h, -h)‖ = 1/(2λ): the bound 1/(2λ) is attained"))
    chain = _sample_chain()
    inequalities += chain
    return Item("rl.cf.softmax_lipschitz", "Lemma A.1", "", "softmax Lipschitz constant", formulas,
                         inequalities, notes=["sharp Lipschitz constant of v -> φ(v/λ) in the 2-norm: 1/(2λ)"])


def _sample_chain() -> list[RegionInequality]:
    """|φ_ℓ(W) - φ_ℓ(W')| <= (Σ_ℓ |φ_ℓ(W) - φ_ℓ(W')|²)^{1/2} <= ‖W - W'‖/λ for the sample aba."""
    sample = D.Sample(tuple("aba"), 1, sp.Rational(1, 8))
    scores = M.sample_scores(sample)
    primed = [sp.Symbol("Wp" + s.name[1:], real=True) for s in scores]
    phi, phi_p = M.softmax(scores), M.softmax(primed)
    total = _norm([a - b for a, b in zip(phi, phi_p, strict=True)])
    dom = parameter_domain([*scores, *primed, lam])
    latex = (r"|\varphi_\ell^{(n,t)}-\varphi_\ell^{(n,t')}|\le\sqrt{\sum_{\ell=1}^{L}|\varphi_\ell^{(n,t)}-"
             r"\varphi_\ell^{(n,t')}|^2}\le\frac{\|W_t-W_{t'}\|}{\lambda}")
    out = [RegionInequality(f"rl.cf.softmax_lipschitz.after_A1.first.l{i + 1}", "App. A, after Lemma A.1",
                            sp.Abs(phi[i] - phi_p[i]), total, dom, latex=latex,
                            description=f"|φ_{i + 1}(W) - φ_{i + 1}(W')| <= ‖φ(W) - φ(W')‖ (sample aba)")
           for i in range(3)]
    out.append(RegionInequality("rl.cf.softmax_lipschitz.after_A1.second", "App. A, after Lemma A.1", total,
                                _norm([a - b for a, b in zip(scores, primed, strict=True)]) / lam, dom, latex=latex,
                                description="‖φ(W) - φ(W')‖ <= ‖W - W'‖/λ with W - W' on the column of aba"))
    return out


#: Eq. (2), the Taylor remainder of -J' = f about 0, and its right-hand side in each reading of ``logistic_rhs``
TAYLOR_ERROR = sp.Abs(f(x) - (sp.Rational(1, 2) - x / 4))
TAYLOR_RHS = {"as_printed": x**3, "abs": sp.Abs(x) ** 3}
EQ2_LATEX = (r"|J(x)'-J(x')'|\le|x-x'|,\qquad\left|\frac1{1+\exp(x)}-\Big(\frac12-\frac14x\Big)\right|\le x^3."
             r"\qquad(2)")


def taylor_error_slope() -> sp.Expr:
    """d/dx [f(x) - (1/2 - x/4)], by diff."""
    return sp.diff(f(x) - (sp.Rational(1, 2) - x / 4), x)


def failure_set(reading: str = "as_printed") -> sp.Set:
    """Where the second inequality of Eq. (2) fails on the real line, in a ``logistic_rhs`` reading.

    Derivation: e(x) = f(x) - (1/2 - x/4) has e(0) = 0 and e'(x) = tanh²(x/2)/4 >= 0, vanishing
    only at 0 (Formula ``slope``), so e is strictly increasing and sign e(x) = sign x. Hence
    |e(x)| > 0 > x³ for every x < 0. For x >= 0, h = x³ - e has h(0) = 0 and
    h' = 3x² - tanh²(x/2)/4 >= 3x² - x²/16 >= 0 (|tanh y| <= |y|), so h >= 0; |x|³ - |e| is even,
    so the ``abs`` reading holds everywhere.
    """
    if reading == "as_printed":
        return sp.Interval.open(-sp.oo, 0)
    if reading == "abs":
        return sp.S.EmptySet
    from derivations.regular_language.symbols import check_reading

    check_reading("logistic_rhs", reading)
    raise AssertionError("unreachable")


def item_logistic_taylor() -> Item:
    """rl.cf.logistic_taylor — App. A, Eq. (2); the Lipschitz remark in the proof of Lemma B.2.

    Definitions used: J(x) = log(1 + e^{-x}), J' = -1/(1 + e^x) = -f(x). Printed: |J'(x) - J'(x')|
    <= |x - x'| and |f(x) - (1/2 - x/4)| <= x³ (flag ``logistic_rhs``: ``as_printed`` x³ on the
    whole line, ``abs`` |x|³); the proof of Lemma B.2 uses "f Lipschitz with constant 1". Derived:
    the series f(x) = 1/2 - x/4 + x³/48 - x⁵/480 + O(x⁷), the sharp Lipschitz constant 1/4 of J'
    and f (max |f'| = f'(0)), the failure set of Eq. (2) (:func:`failure_set`: all x < 0 as
    printed, empty with |x|³) and sup |e(x)|/|x|³ = 1/48 (the limit at 0).
    """
    series = sp.series(f(x), x, 0, 7).removeO()
    formulas = [
        Formula("rl.cf.logistic_taylor.series", "spec: series of 1/(1+e^x) to O(x^7)",
                sp.Rational(1, 2) - x / 4 + x**3 / 48 - x**5 / 480, series, Domain({x: Interval(-1, 1)}),
                "SymPy series of f about 0 (the x^6 coefficient is 0)"),
        Formula("rl.cf.logistic_taylor.slope", "derived: e'(x)", sp.tanh(x / 2) ** 2 / 4, taylor_error_slope(),
                Domain({x: Interval(-20, 20)}), "e(x) = f(x) - (1/2 - x/4) has e' = tanh²(x/2)/4 >= 0"),
        Formula("rl.cf.logistic_taylor.sup_ratio", "derived: lim_{x->0} e(x)/x³", sp.Rational(1, 48),
                sp.limit((f(x) - (sp.Rational(1, 2) - x / 4)) / x**3, x, 0), Domain({}),
                "the cubic coefficient of e; the best constant c in |e(x)| <= c|x|³ near 0"),
        Formula("rl.cf.logistic_taylor.max_slope_f", "derived: sharp Lipschitz constant of f and J'",
                sp.Rational(1, 4), -sp.diff(f(x), x).subs(x, 0), Domain({}),
                "|f'(x)| = e^x/(1+e^x)² is maximal at x = 0 (f'' = 0 there), where it equals 1/4"),
        Formula("rl.cf.logistic_taylor.f_odd_part", "spec §1: f(x) - f(-x) = -tanh(x/2)", -sp.tanh(x / 2),
                f(x) - f(-x), Domain({x: Interval(-20, 20)}), "the identity used throughout the early steps"),
    ]
    wide = {"core": Interval(-50, 50), "right_tail": Interval(50, 1000, scale="log"),
            "left_tail": Interval(-1000, -50)}
    inequalities = []
    for reading, rhs in TAYLOR_RHS.items():
        for name, interval in wide.items():
            inequalities.append(RegionInequality(
                f"rl.cf.logistic_taylor.eq2_taylor.{reading}.{name}", "App. A, Eq. (2), second inequality",
                TAYLOR_ERROR, rhs, Domain({x: interval}), latex=EQ2_LATEX, reading={"logistic_rhs": reading},
                description=f"|1/(1+e^x) - (1/2 - x/4)| <= {sp.sstr(rhs)} on x in {interval}"))
    pair = Domain({x: Interval(-50, 50), xp: Interval(-50, 50)})
    inequalities += [
        RegionInequality("rl.cf.logistic_taylor.eq2_lipschitz", "App. A, Eq. (2), first inequality",
                         sp.Abs(J_prime(x) - J_prime(xp)), sp.Abs(x - xp), pair, latex=EQ2_LATEX,
                         description="|J'(x) - J'(x')| <= |x - x'|"),
        RegionInequality("rl.cf.logistic_taylor.f_lipschitz_B2", "proof of Lemma B.2 (f Lipschitz, constant 1)",
                         sp.Abs(f(x) - f(xp)), sp.Abs(x - xp), pair, description="|f(x) - f(x')| <= |x - x'|"),
        RegionInequality("rl.cf.logistic_taylor.sharp_lipschitz", "derived sharp constant",
                         sp.Abs(J_prime(x) - J_prime(xp)), sp.Abs(x - xp) / 4, pair,
                         description="derived (not printed): |J'(x) - J'(x')| <= |x - x'|/4"),
        RegionInequality("rl.cf.logistic_taylor.sharp_cubic", "derived sharp constant",
                         TAYLOR_ERROR, sp.Abs(x) ** 3 / 48, Domain({x: Interval(-50, 50)}),
                         description="derived (not printed): |e(x)| <= |x|³/48"),
    ]
    notes = [f"failure set of Eq. (2), logistic_rhs={r}: {sp.sstr(failure_set(r))}" for r in TAYLOR_RHS]
    return Item("rl.cf.logistic_taylor", "App. A, Eq. (2)", "", "logistic Taylor bound", formulas,
                         inequalities, notes=notes)


def item_gradient_norm_bounds(max_len: int = 3) -> Item:
    """rl.cf.gradient_norm_bounds — App. A.1: "‖∇_u L_t‖ <= L_max and ‖∇_W L_t‖ <= ‖u_t‖L_max/λ".

    Definition used: Frobenius norms of ``diff`` of the enumerated EP loss at L_max = ``max_len``.
    Derived constants: |J'| < 1 and ‖Σ_ℓ φ_ℓ x_ℓ‖ <= 1 give ‖∇_u L‖ <= L_max; the per-sample W
    gradient is (diag φ - φφ^⊤)u_s x_L^⊤/λ with operator norm <= 1/2 (rl.cf.softmax_lipschitz) and
    length-1 samples give none, so ‖∇_W L‖ <= (L_max - 1)‖u‖/(2λ).
    """
    ds = D.ep_dataset(max_len)
    grads = M.gradient(ds)
    us = [M.u_symbol(p, c) for p in range(1, max_len + 1) for c in D.CHARS]
    g_u = _norm([grads.get(s, 0) for s in us])
    g_W = _norm([g for s, g in grads.items() if s.name.startswith("W_")])
    u_norm = _norm(us)
    dom = parameter_domain(g_u.free_symbols | g_W.free_symbols | set(us))
    latex = r"\|\nabla_u\mathcal L_t\|\le L_{\max},\quad\|\nabla_W\mathcal L_t\|\le\|u_t\|L_{\max}/\lambda"
    inequalities = [
        RegionInequality(f"rl.cf.gradient_norm_bounds.u.Lmax{max_len}", "App. A.1", g_u, sp.Integer(max_len), dom,
                         latex=latex, description="‖∇_u L‖ <= L_max"),
        RegionInequality(f"rl.cf.gradient_norm_bounds.W.Lmax{max_len}", "App. A.1", g_W, u_norm * max_len / lam, dom,
                         latex=latex, description="‖∇_W L‖ <= ‖u‖ L_max/λ"),
        RegionInequality(f"rl.cf.gradient_norm_bounds.W_sharp.Lmax{max_len}", "derived constant", g_W,
                         u_norm * (max_len - 1) / (2 * lam), dom,
                         description="derived (not printed): ‖∇_W L‖ <= (L_max - 1)‖u‖/(2λ)"),
    ]
    return Item("rl.cf.gradient_norm_bounds", "App. A.1", "", "gradient norm bounds", [], inequalities,
                         notes=["derived constants: ‖∇_u L‖ <= L_max (as printed); ‖∇_W L‖ <= (L_max-1)‖u‖/(2λ)",
                                "300-draw property test with scales over 10^±2 and the largest ratios: numerics"])
