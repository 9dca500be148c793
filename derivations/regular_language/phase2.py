"""Symbolic parts of the phase-2 analysis (App. B.2): separator margins, T and C0, Lemma B.5, Lemma B.6,
Thm B.7, the frozen-attention limit and the max-margin problem.

rl.cf.separator_margins, rl.cf.phase2_constants, rl.cf.lemma_b5, rl.cf.direction_bound,
rl.cf.loss_bound, rl.cf.frozen_attention_limit, rl.cf.max_margin. The quantities that need a
trajectory or an SVM (‖u*‖, ‖u_t‖, ‖W_t - W_{t0}‖) are symbols here (``U``, ``unorm``, ``dW``); the
printed formulas are registered as SymPy with their LaTeX so that the numerics and checks layers
evaluate them, and each algebraic step of the printed chains is encoded as a Formula or a
RegionInequality on the region its premises allow.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Constraint, Domain, Interval
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language.symbols import (
    C0,
    LAMBDA,
    Delta,
    Lmax,
    U,
    c_delta,
    dW,
    epsilon,
    eta,
    k,
    lam,
    parameter_domain,
    t,
    t0,
    unorm,
)

NORM = Interval(0.01, 100, scale="log")
LMAX = (2, (2, 3, 4, 6, 8, 12))


def _domain(*symbols, constraints=(), **ranges) -> Domain:
    defaults = {"U": NORM, "unorm": NORM, "unorm0": NORM, "lam": LAMBDA, "eta": Interval(0, 1),
                "t": Interval(1, 1e6, scale="log"), "t0": Interval(0, 1000), "k": Interval(0, 100),
                "epsilon": Interval(0, 1), "C0": Interval(0, 50), "Delta": Interval(0, 1), "dW": Interval(0, 100)}
    intervals, integers = {}, {}
    for s in symbols:
        if s == Lmax:
            integers[s] = LMAX
        else:
            intervals[s] = ranges.get(s.name, defaults.get(s.name, Interval(0, 10)))
    return Domain(intervals, integers, tuple(Constraint(c) if not isinstance(c, Constraint) else c
                                             for c in constraints))


# ---------------------------------------------------------------------------------------------- separator

def _u_sep(max_len: int) -> sp.Matrix:
    """u = Σ_w (E_1^w - E_2^w) (Prop. 4.3)."""
    return sum((M.embedding(1, c, max_len) - M.embedding(2, c, max_len) for c in D.CHARS), sp.zeros(2 * max_len, 1))


def _feature(sample: D.Sample, max_len: int) -> sp.Matrix:
    v = sp.zeros(2 * max_len, 1)
    for (pos, c), p in zip(enumerate(sample.chars, 1), M.attention(sample), strict=True):
        v += M.embedding(pos, c, max_len) * p
    return v


def item_separator_margins(max_len: int = 6) -> Item:
    """rl.cf.separator_margins — Prop. 4.3 and the proof of Prop. B.4.

    Definition used: v^{(n)} = Σ_ℓ x_ℓ φ_ℓ^{(n,t0)} with φ from W by §2.4 (scores divided by λ);
    the direct margin y_n⟨u_sep, v^{(n)}⟩ for the class representatives X_L^{(+)} = [E_1^w, …, E_L^w]
    and X_L^{(-)} = [E_1^{-w}, E_2^w, …, E_L^w], every L <= ``max_len``. The printed middle members
    (φ_1 - φ_2, -φ_1 + φ_2) and right members (φ_2(exp(⟨E_1^w - E_2^w, W E_L^w⟩) - 1), φ_1(exp(⟨E_2^w -
    E_1^{-w}, W E_L^w⟩) - 1)) are compared as printed; the right members with the scores divided
    by λ are registered as a diagnostic. Length 1: margin 1.
    """
    formulas = []
    for w in D.CHARS:
        v = D.FLIP[w]
        one = D.Sample((w,), 1, sp.Rational(1, 2))
        formulas.append(Formula(f"rl.cf.separator_margins.length1.{w}", "spec: length-1 margin", sp.Integer(1),
                                (_u_sep(max_len).T * _feature(one, max_len))[0], parameter_domain([]),
                                "⟨u_sep, E_1^w⟩ = 1"))
        for L in range(2, max_len + 1):
            pos = D.Sample(tuple(w * L), 1, sp.Rational(1, 2**L))
            neg = D.Sample((v,) + tuple(w * (L - 1)), -1, sp.Rational(1, 2**L))
            for sample, sign, name in ((pos, 1, "positive"), (neg, -1, "negative")):
                margin = sign * (_u_sep(max_len).T * _feature(sample, max_len))[0]
                phi = M.attention(sample)
                s = M.sample_scores(sample)
                if sign == 1:
                    middle, right = phi[0] - phi[1], phi[1] * (sp.exp(s[0] - s[1]) - 1)
                    scaled = phi[1] * (sp.exp((s[0] - s[1]) / lam) - 1)
                    latex = (r"\langle u,y_n\sum_{\ell=1}^{L}x_\ell^{(n)}\varphi_\ell^{(n,t_0)}\rangle=\varphi_1^{(n,t_0)}-"
                             r"\varphi_2^{(n,t_0)}=\varphi_2^{(n,t_0)}\left(\exp\left(\langle E_1^w-E_2^w,W_tE_L^w\rangle"
                             r"\right)-1\right)>0")
                else:
                    middle, right = -phi[0] + phi[1], phi[0] * (sp.exp(s[1] - s[0]) - 1)
                    scaled = phi[0] * (sp.exp((s[1] - s[0]) / lam) - 1)
                    latex = (r"\langle u,y_n\sum_{\ell=1}^{L}x_\ell^{(n)}\varphi_\ell^{(n,t_0)}\rangle=-\varphi_1^{(n,t_0)}"
                             r"+\varphi_2^{(n,t_0)}=\varphi_1^{(n,t_0)}\left(\exp\left(\langle E_2^w-E_1^{-w},W_tE_L^w"
                             r"\rangle\right)-1\right)>0")
                tag = f"{name}.L{L}{w}"
                dom = parameter_domain(margin.free_symbols | right.free_symbols)
                formulas += [
                    Formula(f"rl.cf.separator_margins.middle.{tag}", "Prop. B.4 proof (middle member)", middle, margin,
                            dom, f"printed middle vs y⟨u_sep, v⟩ for the {name} representative", latex=latex),
                    Formula(f"rl.cf.separator_margins.right.{tag}", "Prop. B.4 proof (right member)", right, margin,
                            dom, "printed right member (raw score difference, no 1/λ) vs y⟨u_sep, v⟩", latex=latex),
                    Formula(f"rl.cf.separator_margins.right_over_lambda.{tag}", "diagnostic", scaled, margin, dom,
                            "diagnostic: the right member with the score difference divided by λ"),
                ]
    return Item("rl.cf.separator_margins", "Prop. 4.3; proof of Prop. B.4", "", "separator margins",
                         formulas, notes=["min_n margin at t0 in 60 digits on G_EP, G_SVM, G_X: numerics"])


# ---------------------------------------------------------------------------------------------- T and C0

T_FIRST = lam / (sp.sqrt(3 * U) * eta * Lmax)
T_SECOND = lam ** sp.Rational(2, 3) / (2 ** sp.Rational(2, 3) * eta * Lmax)
#: the printed forms of T (flag phase2_T): the min of App. B.2, its printed right-hand side, Lemma B.6's
T_FORMS = {"min": sp.Min(T_FIRST, T_SECOND), "b2_rhs": T_SECOND, "b6": lam ** sp.Rational(2, 3) / (eta * Lmax)}
C0_PRINTED = 2 * sp.log(4 * Lmax) + 2
T_LATEX = (r"T=\min\Big\{\frac{\lambda}{\sqrt{3\|u_{EP}^*\|}\,\eta L_{\max}},\ \frac{\lambda^{2/3}}{2^{2/3}\eta "
           r"L_{\max}}\Big\}=\frac{\lambda^{2/3}}{2^{2/3}\eta L_{\max}},\qquad C_0=2\log4L_{\max}+2")


def c0_condition(u_norm=unorm, w_gap=dW) -> sp.Expr:
    """The right-hand side of the C0 condition in the proof of Lemma B.5."""
    return (lam * sp.log(4 * Lmax) + 2 * u_norm * w_gap) / (lam - U * w_gap)


def item_phase2_constants() -> Item:
    """rl.cf.phase2_constants — App. B.2 "Parameter setup"; proof of Lemma B.5 (C0 condition).

    Definitions used: the phase-2 update W_{t+1} = W_t - η∇_W L (Sec. 3), ‖∇_u L‖ <= L_max,
    ‖∇_W L‖ <= ‖u‖L_max/λ (rl.cf.gradient_norm_bounds). Derived: the printed equality T = min{…} =
    λ^{2/3}/(2^{2/3}ηL_max) holds iff λ >= (3‖u*‖)^{3/2}/4; the u chain's sum over s = 0..t has t+1
    terms (its bound is ηL_max(t+1)); the per-step factor of ‖∇_W L‖ in phase 2 is η, not η/λ
    (the chain's end point η²L_max²t²/λ is still right); the worst case of the C0 condition under
    ‖u_t‖‖ΔW‖ <= λ/2 and ‖u*‖‖ΔW‖ <= λ/3 is (3/2)(log 4L_max + 1) <= C0; the two product bounds at
    t = T for each printed form of T. ``log 4L_max`` is read as log(4L_max).
    """
    dom = _domain(U, lam, eta, Lmax)
    threshold = sp.solve(sp.Eq(T_FIRST, T_SECOND), lam)
    formulas = [
        Formula("rl.cf.phase2_constants.T_equality", "App. B.2 (T = min{…} = second term)", T_SECOND, T_FORMS["min"],
                dom, "the printed equality vs the min it claims to equal", latex=T_LATEX,
                reading={"phase2_T": "min"}),
        Formula("rl.cf.phase2_constants.T_equality_threshold", "derived", (3 * U) ** sp.Rational(3, 2) / 4,
                threshold[0] if threshold else sp.nan, _domain(U), "the λ above which the second term is the min"),
        Formula("rl.cf.phase2_constants.u_chain_terms", "App. B.2 (‖u_t‖ <= ηΣ_{s=0}^{t}‖∇_u L‖ <= ηL_max t)",
                eta * Lmax * t, eta * Lmax * sp.summation(1, (sp.Symbol("s", integer=True), 0, t)),
                _domain(eta, Lmax, t), "the printed bound vs L_max times the number of terms of the printed sum"),
        Formula("rl.cf.phase2_constants.W_chain_step", "App. B.2 (‖W_t - W_t0‖ <= Σ (η/λ)‖∇_W L‖)", eta / lam, eta,
                _domain(eta, lam), "printed per-step factor of ‖∇_W L_s‖ vs the phase-2 W step η (Sec. 3)"),
    ]
    alpha, beta = sp.symbols("alpha beta", positive=True)
    A, B = sp.symbols("A B", nonnegative=True)  # A = ‖u_t‖‖ΔW‖, B = ‖u*‖‖ΔW‖
    rhs_AB = (lam * sp.log(4 * Lmax) + 2 * A) / (lam - B)
    grad_A, grad_B = sp.diff(rhs_AB, A), sp.diff(rhs_AB, B)
    worst_case = sp.simplify(rhs_AB.subs({A: lam / 2, B: lam / 3}))
    formulas.append(Formula("rl.cf.phase2_constants.C0_worst_case", "derived (proof of Lemma B.5)",
                            sp.Rational(3, 2) * (sp.log(4 * Lmax) + 1), worst_case, _domain(Lmax, lam),
                            f"sup of the C0 condition over A <= λ/2, B <= λ/3 (increasing: ∂_A = {sp.sstr(grad_A)}, "
                            f"∂_B = {sp.sstr(sp.simplify(grad_B))})"))
    box = _domain(Lmax, lam, alpha, beta, alpha=Interval(0, 1, False, False), beta=Interval(0, 1, False, False))
    inequalities = [
        RegionInequality("rl.cf.phase2_constants.C0_condition", "proof of Lemma B.5 (C0 lower bound)",
                         rhs_AB.subs({A: alpha * lam / 2, B: beta * lam / 3}), C0_PRINTED, box,
                         latex=r"C_0\ge\frac{\lambda\log4L_{\max}+2\|u_t\|\|W_t-W_{t_0}\|}{\lambda-\|u_{EP}^*\|"
                               r"\|W_t-W_{t_0}\|}",
                         description="the C0 condition under ‖u_t‖‖ΔW‖ = αλ/2, ‖u*‖‖ΔW‖ = βλ/3, α, β in [0, 1]"),
        RegionInequality("rl.cf.phase2_constants.W_chain_end", "App. B.2 (Σ_{s=t0}^{t} ηL_max s <= ηL_max t²)",
                         eta**2 * Lmax**2 * (t * (t + 1) - t0 * (t0 - 1)) / (2 * lam), eta**2 * Lmax**2 * t**2 / lam,
                         _domain(eta, Lmax, lam, t, t0, constraints=[t0 <= t]),
                         description="(η/λ)L_max Σ_{s=t0}^{t} ηL_max s <= η²L_max²t²/λ"),
    ]
    products_at = {"u_star": lambda T: U * eta**2 * Lmax**2 * T**2 / lam,
                   "u_t": lambda T: eta**3 * Lmax**3 * T**3 / lam}
    bounds = {"u_star": lam / 3, "u_t": lam / 2}
    for form, T in T_FORMS.items():
        for which, product in products_at.items():
            # both products increase with T, so at T = min{T1, T2} the product is the min of the two
            # simplified products: the equality case λ/3 is then exact, not a rounding of 30 digits
            lhs = (sp.Min(*[sp.simplify(product(T_i)) for T_i in (T_FIRST, T_SECOND)]) if form == "min"
                   else sp.simplify(product(T)))
            rhs = bounds[which]
            inequalities.append(RegionInequality(
                f"rl.cf.phase2_constants.product_{which}.{form}", "App. B.2 (for any t <= T)", lhs, rhs, dom,
                reading={"phase2_T": form},
                latex=r"\|u_{EP}^*\|\|W_t-W_{t_0}\|\le\frac\lambda3,\quad\|u_t\|\|W_t-W_{t_0}\|\le\frac\lambda2",
                description=f"{'‖u*‖' if which == 'u_star' else '‖u_t‖'}‖W_T - W_t0‖ from the printed norm bounds "
                            f"at t = T ({form})"))
    return Item("rl.cf.phase2_constants", "App. B.2; proof of Lemma B.5", "", "T and C0", formulas,
                         inequalities, notes=["T, C0 with the toolkit's ‖u*‖ at each configuration: numerics/checks",
                                              "'2 log 4L_max' read as 2 log(4 L_max)"])


# ---------------------------------------------------------------------------------------------- Lemma B.5

def b5_growth_rhs(constant: int) -> sp.Expr:
    """(3‖u*‖/5) log(t - t0 - 1) - (3‖u*‖/5) log(c‖u*‖²/η): c = 9 (statement) or 14 (last line of the proof)."""
    return 3 * U / 5 * sp.log(t - t0 - 1) - 3 * U / 5 * sp.log(constant * U**2 / eta)


def b5_tk_bound() -> sp.Expr:
    """t_k - t0 <= (14‖u*‖²/η) exp(5k/(3‖u*‖)) (proof of Lemma B.5)."""
    return 14 * U**2 / eta * sp.exp(5 * k / (3 * U))


def b5_alignment_factor() -> sp.Expr:
    """1 + C0‖u*‖/‖u_t‖, the factor of the first inequality of Lemma B.5."""
    return 1 + C0 * U / unorm


B5_LATEX = {
    "growth": (r"\|u_t\|\ge\frac{3\|u_{EP}^*\|}5\log(t-t_0-1)-\frac{3\|u_{EP}^*\|}5\log\frac{9\|u_{EP}^*\|^2}{\eta}"),
    "growth_proof": (r"\|u_t\|\ge\frac{3\|u_{EP}^*\|}5\log(t-t_0-1)-\frac{3\|u_{EP}^*\|}5\log\frac{14\|u_{EP}^*\|^2}"
                     r"{\eta}"),
    "alignment": (r"\Big\langle-\nabla_u\mathcal L_t,\frac{u_t}{\|u_t\|}\Big\rangle\le\Big(1+\frac{C_0\|u_{EP}^*\|}"
                  r"{\|u_t\|}\Big)\Big\langle-\nabla_u\mathcal L_t,\frac{u_{EP}^*}{\|u_{EP}^*\|}\Big\rangle"),
    "chain": (r"t-t_0\le\frac{3\|u_{EP}^*\|}{\eta}\left(k+\|u_{t_0}\|\right)\left(1+2\exp\Big(\frac{k}{\|u_{EP}^*\|}"
              r"\Big)\right)\le\frac{9\|u_{EP}^*\|^2}{\eta}\Big(\frac{k}{\|u_{EP}^*\|}+1\Big)\exp\Big(\frac{k}"
              r"{\|u_{EP}^*\|}\Big)\le\frac{14\|u_{EP}^*\|^2}{\eta}\Big(\frac{2k}{3\|u_{EP}^*\|}+1\Big)\exp\Big("
              r"\frac{k}{\|u_{EP}^*\|}\Big)\le\frac{14\|u_{EP}^*\|^2}{\eta}\exp\Big(\frac{5k}{3\|u_{EP}^*\|}\Big)"),
}


def item_lemma_b5() -> Item:
    """rl.cf.lemma_b5 — Lemma B.5 (statement and proof chain), symbolic parts.

    Definitions used: convexity of L(·, W), the class-weight fact (§2.8), the definition of u*.
    Derived: inverting the proof's t_k bound gives ‖u_t‖ >= (3U/5) log(η(t - t0 - 1)/(14U²)) (the
    proof's last line); the statement prints 9 in place of 14, which the proof does not give
    (Formula ``statement_vs_proof``). Chain steps: the first needs ‖u_{t0}‖ <= ‖u*‖, which is not
    stated (``chain_step1.any_u0`` vs ``chain_step1.u0_le_ustar``); the others hold for k >= 0;
    the gradient-alignment lower bound, log(1+x) >= x/2 on (0, 1) and the loss comparison under
    the C0 condition hold on their premises. The inequalities along trajectories: numerics.
    """
    x, r = sp.symbols("x r", nonnegative=True)  # x = k/‖u*‖, r = ‖u_{t0}‖/‖u*‖
    derived_growth = 3 * U / 5 * sp.log(eta * (t - t0 - 1) / (14 * U**2))
    growth_dom = _domain(U, eta, t, t0, constraints=[t0 + 2 <= t])
    formulas = [
        Formula("rl.cf.lemma_b5.statement_vs_proof", "Lemma B.5 statement", b5_growth_rhs(9),
                sp.expand_log(derived_growth, force=True), growth_dom,
                "statement's right-hand side vs the bound the proof's t_k estimate gives", latex=B5_LATEX["growth"]),
        Formula("rl.cf.lemma_b5.proof_last_line", "Lemma B.5 proof, last line", b5_growth_rhs(14),
                sp.expand_log(derived_growth, force=True), growth_dom,
                "printed last line vs k >= (3U/5) log(η(t_k - t0)/(14U²)) at t = t_k + 1",
                latex=B5_LATEX["growth_proof"]),
    ]
    step1_lhs = 3 * U**2 / eta * (x + r) * (1 + 2 * sp.exp(x))
    step1_rhs = 9 * U**2 / eta * (x + 1) * sp.exp(x)
    xr = {"x": Interval(0, 20, False), "r": Interval(0, 3, False)}
    a, b, gam, nn, eps_w = sp.symbols("a b gamma n_u epsilon_W", positive=True)
    inequalities = [
        RegionInequality("rl.cf.lemma_b5.chain_step1.any_u0", "proof of Lemma B.5 (first step of the t_k chain)",
                         step1_lhs, step1_rhs, _domain(x, r, U, eta, **xr), latex=B5_LATEX["chain"],
                         description="(3U/η)(k + ‖u_t0‖)(1 + 2e^{k/U}) <= (9U²/η)(k/U + 1)e^{k/U}, "
                                     "x = k/U, r = ‖u_t0‖/U"),
        RegionInequality("rl.cf.lemma_b5.chain_step1.u0_le_ustar", "proof of Lemma B.5 (with ‖u_t0‖ <= ‖u*‖)",
                         step1_lhs, step1_rhs, _domain(x, r, U, eta, x=xr["x"], r=Interval(0, 1, False, False)),
                         description="the same step on r <= 1"),
        RegionInequality("rl.cf.lemma_b5.chain_step2", "proof of Lemma B.5", 9 * (x + 1), 14 * (2 * x / 3 + 1),
                         _domain(x, x=xr["x"]), description="9(x + 1) <= 14(2x/3 + 1), x >= 0"),
        RegionInequality("rl.cf.lemma_b5.chain_step3", "proof of Lemma B.5 (x + 1 <= e^x)",
                         (2 * x / 3 + 1) * sp.exp(x), sp.exp(5 * x / 3), _domain(x, x=xr["x"]),
                         description="(2x/3 + 1)e^x <= e^{5x/3}"),
        RegionInequality("rl.cf.lemma_b5.alignment_lower_bound", "proof of Lemma B.5, (a)-(b)",
                         1 / (3 * U) / (1 + 2 * sp.exp(a)),
                         sp.Rational(1, 2) / (1 + sp.exp(a + b)) * (1 - gam / 3) / U,
                         _domain(a, b, gam, U, a=Interval(0, 30), b=Interval(0, 0.5, True, False),
                                 gamma=Interval(0, 1, True, False)),
                         description="(1/2)(1/(1 + e^{a+b}))(1/U - γ/(3U)) >= (1/(3U))/(1 + 2e^a) for b = "
                                     "‖u‖‖ΔW‖/λ <= 1/2, ‖ΔW‖/λ = γ/(3U) <= 1/(3U)"),
        RegionInequality("rl.cf.lemma_b5.log_bound", "proof of Lemma B.5 (log(1+x) > x/2 on (0,1))", x / 2,
                         sp.log(1 + x), _domain(x, x=Interval(0, 1, True, False)), description="log(1+x) >= x/2"),
        RegionInequality("rl.cf.lemma_b5.loss_comparison", "proof of Lemma B.5 (C0 step)",
                         Lmax * sp.log(1 + sp.exp(-(1 - U * eps_w) * (nn / U + C0_PRINTED))),
                         sp.exp(-nn / U - nn * eps_w) / 4,
                         _domain(Lmax, U, nn, eps_w, n_u=NORM, epsilon_W=Interval(0, 10, scale="log"),
                                 constraints=[Constraint(3 * U * eps_w <= 1, "‖u*‖‖ΔW‖ <= λ/3"),
                                              Constraint(2 * nn * eps_w <= 1, "‖u_t‖‖ΔW‖ <= λ/2")]),
                         description="L(u*(‖u_t‖/U + C0), W_t) bound <= (1/4)exp(-‖u_t‖/U - ‖u_t‖‖ΔW‖/λ), ε_W = "
                                     "‖ΔW‖/λ, C0 = 2 log(4L_max) + 2"),
    ]
    return Item("rl.cf.lemma_b5", "Lemma B.5", "", "Lemma B.5 (alignment and log growth)", formulas,
                         inequalities, notes=["the proof's inversion bounds max_{s<=t}‖u_s‖, which is ‖u_t‖ only if "
                                              "‖u_s‖ is nondecreasing", "along frozen and full trajectories: numerics"])


# ---------------------------------------------------------------------------------------------- Lemma B.6

def t1_printed() -> sp.Expr:
    """t1 = t0 + 1 + (14‖u*‖²/η) exp(5/(3Δ‖u*‖))."""
    return t0 + 1 + 14 * U**2 / eta * sp.exp(5 / (3 * Delta * U))


def t2_printed(u_t1=unorm) -> sp.Expr:
    """t2 = t0 + 1 + (9‖u*‖/η) exp(5‖u_{t1}‖/(3Δ‖u*‖))."""
    return t0 + 1 + 9 * U / eta * sp.exp(5 * u_t1 / (3 * Delta * U))


def log10_excess(expr_minus_t0_minus_1: sp.Expr) -> sp.Expr:
    """log10 of a product c·exp(z) written without forming exp(z) (t1, t2 are huge)."""
    return sp.expand_log(sp.log(expr_minus_t0_minus_1), force=True) / sp.log(10)


def delta_choice() -> sp.Expr:
    """Δ = c/(C0‖u*‖³), the Θ of Lemma B.6 with its constant c (spec: c in {1e-2, 1, 1e2})."""
    return c_delta / (C0 * U**3)


def cosine_target() -> sp.Expr:
    """1 - ½(1/(6‖u*‖) - 1/‖u_t‖)²."""
    return 1 - sp.Rational(1, 2) * (1 / (6 * U) - 1 / unorm) ** 2


def eq6_rhs() -> sp.Expr:
    """5‖u_t‖/(6‖u*‖), Eq. (6)."""
    return 5 * unorm / (6 * U)


def item_direction_bound() -> Item:
    """rl.cf.direction_bound — Lemma B.6 and Thm 4.4, symbolic parts.

    Definitions used: unit vectors, Cauchy–Schwarz, the premises of the proof. Registered: t1,
    t2 (and their log10 excess over t0 + 1), Δ = c/(C0‖u*‖³), the cosine target and Eq. (6).
    Derived: the identity ‖a - b‖ = (2 - 2⟨a, b⟩)^{1/2} for unit vectors; Eq. (6)'s last algebra;
    step (a) of the proof; the printed square-root bound, which has η²L_max²Δ²(t - t1)/2 where
    the premise gives η²L_max²Δ³(t - t1) (valid only while Δ <= 1/2).
    """
    theta = sp.Symbol("theta", real=True)
    x, r, q, E = sp.symbols("x r q E", nonnegative=True)
    formulas = [
        Formula("rl.cf.direction_bound.unit_distance", "proof of Lemma B.6", sp.sqrt(2 - 2 * sp.cos(theta)),
                sp.sqrt((sp.cos(theta) - 1) ** 2 + sp.sin(theta) ** 2), Domain({theta: Interval(-3, 3)}),
                "‖a - b‖ = √(2 - 2⟨a,b⟩) for unit a, b at angle θ"),
        Formula("rl.cf.direction_bound.eq6_algebra", "proof of Lemma B.6, last line", eq6_rhs(),
                unorm / U - unorm * (1 / (6 * U) - 1 / unorm) - 1, _domain(U, unorm),
                "‖u‖/U - ‖u‖(1/(6U) - 1/‖u‖) - 1 = 5‖u‖/(6U)",
                latex=r"y_n\mathsf T_t(X^{(n)})\ge\frac{5\|u_t\|}{6\|u_{EP}^*\|}"),
    ]
    inequalities = [
        RegionInequality("rl.cf.direction_bound.step_a", "proof of Lemma B.6, (a)",
                         1 - x / (1 + x) - 2 * r - q, (1 - r - q) / (1 + x) - r,
                         _domain(x, r, q, x=Interval(0, 10), r=Interval(0, 1), q=Interval(0, 10)),
                         description="(1/(1+x))(1 - r - q) - r >= 1 - x/(1+x) - 2r - q (x = ΔC0‖u*‖)"),
        RegionInequality("rl.cf.direction_bound.sqrt_step", "proof of Lemma B.6 (the square-root bound)",
                         2 * x / (1 + x) + 4 * Delta + E * Delta**3, 2 * x / (1 + x) + 4 * Delta + E * Delta**2 / 2,
                         _domain(x, Delta, E, x=Interval(0, 10), Delta=Interval(0, 2), E=Interval(0, 100)),
                         description="2 - 2cos from the premise (E = η²L_max²(t - t1)) vs the printed radicand"),
    ]
    return Item("rl.cf.direction_bound", "Lemma B.6; Thm 4.4", "", "direction bound (t1, t2, Δ, T)",
                         formulas, inequalities,
                         notes=["log10 t1, log10 t2 with the toolkit's ‖u*‖ and C0, and the targets along "
                                "trajectories: numerics"])


# ---------------------------------------------------------------------------------------------- Thm B.7

def loss_bound_printed() -> sp.Expr:
    """L_max log(1 + (14‖u*‖²/η)/√(t - t0 - 1)) (proof of Thm B.7)."""
    return Lmax * sp.log(1 + 14 * U**2 / eta / sp.sqrt(t - t0 - 1))


def loss_bound_derived() -> sp.Expr:
    """The sharpest bound the two premises give: y T >= (5/(6U))‖u_t‖ >= ½ log(η(t - t0 - 1)/(14U²))."""
    margin = 5 / (6 * U) * (3 * U / 5 * sp.log(eta * (t - t0 - 1) / (14 * U**2)))
    return Lmax * sp.log(1 + sp.exp(-sp.expand_log(margin, force=True)))


def _exponent(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """d log(expr)/d log(var) (the power of ``var`` in a monomial)."""
    return sp.simplify(sp.diff(sp.log(expr), var) * var)


def item_loss_bound() -> Item:
    """rl.cf.loss_bound — proof of Thm B.7; remark after Thm 4.5.

    Definitions used: the premises "for any T >= t >= t2": y_nT_t >= 5‖u_t‖/(6‖u*‖) and ‖u_t‖ >=
    (3‖u*‖/5) log(η(t - t0 - 1)/(14‖u*‖²)); J(z) <= e^{-z}; Σ_L 2^{-L}|I_L| = L_max. Derived: (a) the
    sharpest bound L_max log(1 + √(14/η)‖u*‖/√(t - t0 - 1)), which the printed L_max log(1 +
    14‖u*‖²/(η√(t - t0 - 1))) dominates iff ‖u*‖² >= η/14; (b) at t = T = λ^{2/3}/(ηL_max) the O-form
    L_max‖u*‖²/(η√T) scales as η^{-1/2}L_max^{3/2}λ^{-1/3}, against the printed η^{1/2}L_max^{2.5}λ^{-1/3};
    (c) "loss ≤ ε" needs λ of order η^{3/2}/ε³ by the printed O(η^{1/2}/λ^{1/3}), against the remark's
    η^{2/3}/ε³; (d) the printed explicit bound falls below L_max log 2 after t = t0 + 1 + 196‖u*‖⁴/η².
    """
    s = sp.Symbol("s", positive=True)
    dom = _domain(Lmax, U, eta, t, t0, constraints=[t0 + 2 <= t])
    threshold = [v for v in sp.solve(sp.Eq(sp.sqrt(14 * U**2 / eta), 14 * U**2 / eta), U) if v.is_positive]
    o_form = Lmax * U**2 / (eta * sp.sqrt(t))
    at_T = o_form.subs(t, T_FORMS["b6"])
    printed_T = eta ** sp.Rational(1, 2) * Lmax ** sp.Rational(5, 2) * U**2 / lam ** sp.Rational(1, 3)
    printed_remark = eta ** sp.Rational(1, 2) / lam ** sp.Rational(1, 3)
    lam_from_printed = sp.solve(sp.Eq(printed_remark, epsilon), lam)[0]
    lam_from_derived = sp.solve(sp.Eq(at_T, epsilon), lam)[0]
    crossing = sp.solve(sp.Eq(14 * U**2 / (eta * sp.sqrt(s)), 1), s)[0]
    formulas = [
        Formula("rl.cf.loss_bound.explicit_step", "proof of Thm B.7 (second member)", loss_bound_printed(),
                loss_bound_derived(), dom, "printed explicit bound vs the sharpest bound of the premises",
                latex=r"\mathcal L_t\le L_{\max}\log\Big(1+\frac{14\|u_{EP}^*\|^2}{\eta}\frac1{\sqrt{t-t_0-1}}\Big)"),
        Formula("rl.cf.loss_bound.explicit_step_threshold", "derived", sp.sqrt(eta / 14),
                threshold[0] if threshold else sp.nan, _domain(eta),
                "the ‖u*‖ above which the printed step follows from the premises"),
        Formula("rl.cf.loss_bound.L_T", "end of the proof of Thm B.7", printed_T, at_T, _domain(eta, Lmax, U, lam),
                "printed L_T scaling vs L_max‖u*‖²/(η√t) at t = λ^{2/3}/(ηL_max)",
                latex=r"\mathcal L_T\le O\Big(\frac{\eta^{1/2}L_{\max}^{2.5}\|u_{EP}^*\|^2}{\lambda^{1/3}}\Big)"),
    ]
    for var in (eta, Lmax, lam, U):
        formulas.append(Formula(f"rl.cf.loss_bound.L_T_exponent.{var.name}", "end of the proof of Thm B.7",
                                _exponent(printed_T, var), _exponent(at_T, var), Domain({}),
                                f"exponent of {var.name} in L_T: printed vs derived"))
    formulas += [
        Formula("rl.cf.loss_bound.remark_lambda", "remark after Thm 4.5", eta ** sp.Rational(2, 3) / epsilon**3,
                lam_from_printed, _domain(eta, epsilon), "the remark's λ vs solving η^{1/2}/λ^{1/3} = ε for λ",
                latex=r"\lambda=\Omega\Big(\frac{\eta^{2/3}}{\epsilon^3}\Big)"),
        Formula("rl.cf.loss_bound.remark_lambda_derived", "remark after Thm 4.5",
                eta ** sp.Rational(2, 3) / epsilon**3,
                lam_from_derived, _domain(eta, epsilon, Lmax, U), "the remark's λ vs solving the derived L_T = ε"),
        Formula("rl.cf.loss_bound.informative_time", "derived (spec (d))", t0 + 1 + 196 * U**4 / eta**2,
                t0 + 1 + crossing, _domain(t0, U, eta),
                "first t at which the printed explicit bound drops below L_max log 2"),
    ]
    inequalities = [
        RegionInequality("rl.cf.loss_bound.explicit_step_holds", "proof of Thm B.7", loss_bound_derived(),
                         loss_bound_printed(), dom, description="the sharpest bound <= the printed explicit bound"),
        RegionInequality("rl.cf.loss_bound.O_step", "proof of Thm B.7 (log(1+x) <= x)", loss_bound_printed(),
                         14 * Lmax * U**2 / (eta * sp.sqrt(t - t0 - 1)), dom,
                         description="printed explicit bound <= 14L_max‖u*‖²/(η√(t - t0 - 1))"),
    ]
    return Item("rl.cf.loss_bound", "proof of Thm B.7; remark after Thm 4.5", "", "loss bound", formulas,
                         inequalities, notes=["the printed sum Σ_L 2^{-L} log(1 + exp(-y_nT)) omits Σ_{n∈I_L}",
                                              "evaluation with the toolkit's ‖u*‖ at every SVM point: numerics"])


# ---------------------------------------------------------------------------------------------- frozen attention

def item_frozen_attention_limit() -> Item:
    """rl.cf.frozen_attention_limit — derived (Soudry et al. 2018) mechanism behind Thms 4.4, 4.5, 5.2, 5.3.

    Definition used: W ≡ W_{t0}, gradient flow in τ = ηt on the logistic loss w·J(⟨u, z⟩) of one
    support vector z with ‖u*‖ = 1/‖z‖ (u* = z/‖z‖²), from u = 0. Along u = a u*/‖u*‖·…, the margin
    a = ⟨u, z⟩ obeys da/dτ = (w/‖u*‖²) f(a), solved by separation: τ(a) = ‖u*‖²(a + e^a - 1)/w.
    Derived limits (in a -> ∞): τ·L/‖u*‖² -> 1 (c = 1 for a single support vector, independent of w)
    and ‖u‖/log τ -> ‖u*‖. Multi-vector constants and 1 - cos = O(1/log²t): numerics (G_FROZEN).
    """
    a, w = sp.symbols("a w", positive=True)
    x = sp.Symbol("x", real=True)
    rate = w / U**2 / (1 + sp.exp(x))
    tau_of_a = sp.integrate(1 / rate, (x, 0, a))
    loss = w * sp.log(1 + sp.exp(-a))
    formulas = [
        Formula("rl.cf.frozen_attention_limit.time_of_margin", "derived (separation of variables)",
                U**2 * (a + sp.exp(a) - 1) / w, tau_of_a, _domain(U, a, w, a=Interval(0, 20), w=Interval(0, 1)),
                "τ(a) = ∫_0^a dx / rate(x)"),
        Formula("rl.cf.frozen_attention_limit.loss_rate", "spec: L_t ≈ c‖u*‖²/(ηt), c = 1 (one support vector)",
                sp.Integer(1), sp.limit(tau_of_a * loss / U**2, a, sp.oo), Domain({}), "lim τ·L/‖u*‖²"),
        Formula("rl.cf.frozen_attention_limit.norm_growth", "spec: ‖u_t‖ = ‖u*‖ log t + O(1)", U,
                sp.limit(a * U / sp.log(tau_of_a), a, sp.oo), _domain(U), "lim ‖u‖/log τ (‖u‖ = a‖u*‖)"),
    ]
    return Item("rl.cf.frozen_attention_limit", "derived (Thms 4.4, 4.5, 5.2, 5.3)", "",
                         "frozen-attention limit", formulas, notes=["G_FROZEN runs and checkpoints: numerics"])


# ---------------------------------------------------------------------------------------------- max margin

MAX_MARGIN_LATEX = {
    "EP": (r"u_{EP}^*=\arg\min\|u\|\quad\text{s.t. }\Big\langle u,y_n\sum_{\ell=1}^{L}x_\ell^{(n)}"
           r"\varphi_\ell^{(n,t_0)}\Big\rangle\ge1,\ \forall n\in I"),
    "CoT": (r"u_{CoT}^*=\arg\min\|u\|,\quad\text{s.t. }\Big\langle u,y_n\sum_{\ell=1}^{L(X^{(n)})}x_\ell^{(n)}"
            r"\varphi_\ell^{(n,t_0)}\Big\rangle\ge1,\ \forall n\in I"),
    "separable": r"\exists u\in\mathbb R^d:\ \langle u,y_nv^{(n)}\rangle>0\ \forall n",
}


def class_attention_symbols(max_len: int) -> dict[tuple[int, int], list[sp.Symbol]]:
    """φ^{y,L}_ℓ as symbols, one list per class (L, y) (the reduced features of §4)."""
    out = {(1, 1): [sp.Integer(1)]}
    for L in range(2, max_len + 1):
        for y in (1, -1):
            out[(L, y)] = [sp.Symbol(f"phi_{'p' if y == 1 else 'm'}{L}_{p}", positive=True) for p in range(1, L + 1)]
    return out


def reduced_constraints(max_len: int) -> list[tuple[tuple[int, int], sp.Expr]]:
    """The 2L_max - 1 reduced constraints (class, y Σ_ℓ φ^{y,L}_ℓ m_ℓ) >= 1 of the max-margin problem."""
    m = sp.symbols(f"m1:{max_len + 1}", real=True)
    return [((L, y), y * sp.Add(*[p * m[i] for i, p in enumerate(phis)]))
            for (L, y), phis in class_attention_symbols(max_len).items()]


def item_max_margin(max_len: int = 3) -> Item:
    """rl.cf.max_margin — Sec. 4.2 (u*_EP), Sec. 5.3 (u*_CoT), Lemma B.5; symbolic parts.

    Definitions used: the printed problems; the reduced form of §4 (u*(ℓ, a) = u*(ℓ, b) = m_ℓ).
    Derived: ‖u*‖ = √2‖m‖; a class (L, y) has one reduced feature, so the constraints are the
    2L_max - 1 rows of ``reduced_constraints`` (checked by counting); for one active constraint z,
    u* = z/‖z‖² and the dual p* = z give ‖u*‖‖p*‖ = 1. The 60-digit active-set solver and KKT
    certification: numerics.
    """
    m = sp.symbols(f"m1:{max_len + 1}", real=True)
    u = sp.zeros(2 * max_len, 1)
    for i, mi in enumerate(m):
        u += mi * (M.embedding(i + 1, "a", max_len) + M.embedding(i + 1, "b", max_len))
    z = sp.symbols(f"z1:{max_len + 1}", real=True)
    zz = sp.Matrix(z)
    u_star = zz / (zz.T * zz)[0]
    formulas = [
        Formula("rl.cf.max_margin.reduced_norm", "spec §4: ‖u*‖ = √2‖m‖", sp.sqrt(2) * sp.sqrt(sum(mi**2 for mi in m)),
                sp.sqrt((u.T * u)[0]), parameter_domain(m), "norm of Σ_ℓ m_ℓ(E_ℓ^a + E_ℓ^b)"),
        Formula("rl.cf.max_margin.constraint_count", "spec §4: 2L_max - 1 constraints", sp.Integer(2 * max_len - 1),
                sp.Integer(len(reduced_constraints(max_len))), Domain({}), "one reduced row per class (L, y)"),
        Formula("rl.cf.max_margin.duality_one_active", "spec §4: ‖u*‖·‖p*‖ = 1", sp.Integer(1),
                sp.sqrt((u_star.T * u_star)[0]) * sp.sqrt((zz.T * zz)[0]), parameter_domain(z),
                "one active constraint: u* = z/‖z‖², p* = z"),
    ]
    return Item("rl.cf.max_margin", "Sec. 4.2; Sec. 5.3; Lemma B.5", "", "max-margin problems", formulas,
                         notes=[f"printed ({k}): {v}" for k, v in MAX_MARGIN_LATEX.items()] +
                               ["solver, KKT residuals and ‖u*‖ at t0: numerics"])
