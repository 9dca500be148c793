r"""The decoder level of App. B.1–B.2: ζ algebra, Lemma 5's recursion, the modified update (Eqns 26–30).

Definitions (spec §2.8, §3.5): ζ_n = M/(M−1)(e_n − 𝟏/M), whose entries are 1 (at n) and −1/(M−1); the
row recursion w ← w + η_Y(e_n − softmax(w)) from w = 0 (Lemma 5); the modified update
Ẏ = η_Y(f_n − FE'e_n)(e_n − α_n)ᵀ with F ᵀF = I + E, so F ᵀf_n = (I + E)e_n and
Ẇ = F ᵀẎ = η_Y((I + E)e_n − (I + E)E'e_n)(e_n − α_n)ᵀ, E' per ``ss.opt.eprime``.

Lemma 5 is checked by its induction step at concrete M (the softmax is written out over all M entries,
no symmetry used), with h = h*(s−1) and η_Y symbolic; the base case w(0) = 0 = (M−1)h*(0)ζ_n is exact.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item
from derivations.domain import Domain, Interval
from derivations.scan_snap.symbols import M, etaY, h

#: concrete vocabulary sizes of the induction step (M = 2 is the smallest softmax with two entry kinds)
LEMMA5_M = (3, 5)


def zeta_entry(same: bool, m: sp.Expr = M) -> sp.Expr:
    """ζ_n's entry at n (``same``) or elsewhere, from the definition M/(M−1)(δ − 1/M)."""
    return m / (m - 1) * ((1 if same else 0) - 1 / m)


def item_zeta() -> Item:
    """ss.appB1.zeta — App. B.1: q₁ = ζ_iᵀζ_i = 1 + 1/(M−1), q₀ = ζ_jᵀζ_i = −M/(M−1)², i ≠ j.

    Derived: the inner products summed entry by entry, the sum over k ∈ [M] split into k = i, k = j and the
    M − 2 other entries (symbolic M)."""
    same, other = zeta_entry(True), zeta_entry(False)
    q1 = same * same + (M - 1) * other * other
    q0 = same * other + other * same + (M - 2) * other * other
    dom = Domain({M: Interval(2, 1e8, scale="log")})
    return Item("ss.appB1.zeta", "App. B.1 (L408–L409)", "", "the ζ algebra", formulas=[
        Formula("ss.appB1.zeta.q1", "L409", 1 + 1 / (M - 1), q1, dom, description="ζ_iᵀζ_i",
                latex=r"q_1 := \zeta_i^\top \zeta_i = 1 + \frac{1}{M-1}"),
        Formula("ss.appB1.zeta.q0", "L409", -M / (M - 1) ** 2, q0, dom, description="ζ_jᵀζ_i, i ≠ j",
                latex=r"q_0 := \zeta_j^\top \zeta_i = -\frac{M}{(M-1)^2}"),
    ])


def _softmax(w: list[sp.Expr]) -> list[sp.Expr]:
    total = sp.Add(*[sp.exp(v) for v in w])
    return [sp.exp(v) / total for v in w]


def _step(w: list[sp.Expr], n: int = 0) -> list[sp.Expr]:
    alpha = _softmax(w)
    return [w[j] + etaY * ((1 if j == n else 0) - alpha[j]) for j in range(len(w))]


def h_star_next(value: sp.Expr, m: sp.Expr = M) -> sp.Expr:
    """Eqn 33: h*(s) = h*(s−1) + η_Y/((M−1) + e^{M h*(s−1)})."""
    return value + etaY / ((m - 1) + sp.exp(m * value))


def _dom() -> Domain:
    return Domain({h: Interval(0, 3), etaY: Interval(0, 2)})


def item_w_solution() -> Item:
    """ss.lemma5.w_solution — Lemma 5, Eqns 31–33: w_n(s) = (M−1)h*(s)ζ_n, α_n(s) of Eqn 32, e_n − α_n(s).

    Derived: one step of w ← w + η_Y(e_n − softmax(w)) from w(s−1) = (M−1)h ζ_n, h = h*(s−1), at M = 3, 5
    (entry n = 1 and an entry j ≠ n); α_n(s) is softmax(w(s−1)) (``alpha_index=pre_step``, canonical) or
    softmax(w(s)) (``post_step``).
    """
    formulas = []
    for m in LEMMA5_M:
        w_prev = [(m - 1) * h * zeta_entry(j == 0, m) for j in range(m)]
        w_next = _step(w_prev)
        hs = h_star_next(h, m)
        e = sp.exp(m * h)
        alpha_pre, alpha_post = _softmax(w_prev), _softmax(w_next)
        for j, where in ((0, "n"), (1, "j≠n")):
            same = j == 0
            formulas.append(Formula(f"ss.lemma5.w_solution.eq31_33.M{m}.{where}", "Eqns 31, 33",
                                    (m - 1) * hs * zeta_entry(same, m), w_next[j], _dom(),
                                    description=f"w_n(s) entry {where} after one step, M = {m}"))
            printed_alpha = (e if same else 1) / ((m - 1) + e)
            for reading, alpha in (("pre_step", alpha_pre), ("post_step", alpha_post)):
                formulas.append(Formula(f"ss.lemma5.w_solution.eq32.{reading}.M{m}.{where}", "Eqn 32",
                                        printed_alpha, alpha[j], _dom(), reading={"alpha_index": reading},
                                        description=f"α_n(s) entry {where}, M = {m}"))
            formulas.append(Formula(f"ss.lemma5.w_solution.residual.M{m}.{where}", "L458",
                                    (m - 1) / (m - 1 + e) * zeta_entry(same, m),
                                    (1 if same else 0) - alpha_pre[j], _dom(), reading={"alpha_index": "pre_step"},
                                    description=f"e_n − α_n(s) entry {where}, M = {m}"))
    return Item("ss.lemma5.w_solution", "Lemma 5, Eqns 31–33", "", "the one-class decoder solution",
                formulas=formulas)


def item_proof_steps() -> Item:
    """ss.lemma5.proof_steps — Eqns 34–39, each line against the recursion (s = 1 from w(0) = 0; general s by
    the induction step at M = 3, 5). ``ẇ`` is read as w(s) − w(s−1) (``wdot=increment``, canonical) or that
    divided by η_Y (``gradient``); α per ``alpha_index``."""
    formulas = []
    for m in LEMMA5_M:
        zero = [sp.Integer(0)] * m
        w1 = _step(zero)
        a0, a1 = _softmax(zero), _softmax(w1)
        w_prev = [(m - 1) * h * zeta_entry(j == 0, m) for j in range(m)]
        w_next = _step(w_prev)
        alpha_prev = _softmax(w_prev)
        e = sp.exp(m * h)
        for j, where in ((0, "n"), (1, "j≠n")):
            same = j == 0
            for reading, alpha in (("pre_step", a0), ("post_step", a1)):
                formulas.append(Formula(f"ss.lemma5.proof_steps.eq34.{reading}.M{m}.{where}", "Eqn 34",
                                        sp.Rational(1, m), alpha[j], _dom(), reading={"alpha_index": reading},
                                        description=f"α_n(1) entry {where}, M = {m}"))
            formulas.append(Formula(f"ss.lemma5.proof_steps.eq35.M{m}.{where}", "Eqn 35",
                                    (1 - sp.Rational(1, m)) if same else -sp.Rational(1, m), w1[j], _dom(),
                                    description=f"w_n(1) entry {where} (printed without η_Y), M = {m}"))
            formulas.append(Formula(f"ss.lemma5.proof_steps.eq36.M{m}.{where}", "Eqn 36",
                                    etaY * (1 - sp.Rational(1, m)) if same else -etaY / m, w1[j], _dom(),
                                    description=f"w_n(1) entry {where}, M = {m}"))
            first = sp.exp((m - 1) * h) if same else sp.exp(-h)
            formulas.append(Formula(f"ss.lemma5.proof_steps.eq37_first.M{m}.{where}", "Eqn 37",
                                    first / (sp.exp((m - 1) * h) + (m - 1) * sp.exp(-h)), alpha_prev[j], _dom(),
                                    reading={"alpha_index": "pre_step"},
                                    description=f"α_n(s) entry {where}, first form, M = {m}"))
            formulas.append(Formula(f"ss.lemma5.proof_steps.eq37_second.M{m}.{where}", "Eqn 37",
                                    (e if same else 1) / (e + (m - 1)), alpha_prev[j], _dom(),
                                    reading={"alpha_index": "pre_step"},
                                    description=f"α_n(s) entry {where}, second form, M = {m}"))
            printed38 = ((m - 1) if same else -1) / (e + (m - 1))
            increment = w_next[j] - w_prev[j]
            for reading, value in (("increment", increment), ("gradient", increment / etaY)):
                formulas.append(Formula(f"ss.lemma5.proof_steps.eq38.{reading}.M{m}.{where}", "Eqn 38", printed38,
                                        value, _dom(), reading={"wdot": reading},
                                        description=f"ẇ_n(s) entry {where}, M = {m}"))
            inner = etaY / (e + (m - 1)) + h
            formulas.append(Formula(f"ss.lemma5.proof_steps.eq39.M{m}.{where}", "Eqn 39",
                                    (m - 1) * inner if same else -inner, w_next[j], _dom(),
                                    description=f"w_n(s) entry {where}, M = {m}"))
    return Item("ss.lemma5.proof_steps", "Eqns 34–39", "", "the proof of Lemma 5", formulas=formulas)


def item_modified_update(K: int = 3) -> Item:
    """ss.lemma3.modified_update — Eqns 26–30 at K = 3 with a symbolic symmetric zero-diagonal E.

    Each printed line is written as the K-vector that multiplies η_Y(e_n − α_n)ᵀ, n = 1, and compared with
    Eqn 27 evaluated from the definitions (F ᵀf_n = (I + E)e_n, F ᵀF = I + E) under each ``eprime`` reading.
    """
    names = {}
    E = sp.zeros(K, K)
    for i in range(K):
        for j in range(i + 1, K):
            names[(i, j)] = sp.Symbol(f"E{i + 1}{j + 1}", positive=True)
            E[i, j] = E[j, i] = names[(i, j)]
    identity = sp.eye(K)
    e_n = sp.zeros(K, 1)
    e_n[0] = 1
    inverse = (identity + E).inv()
    eprime = {"lemma14": identity - inverse, "appB1": inverse - identity}
    lines = {
        "eq28": (identity + E) * e_n - (identity + E) * (identity - inverse) * e_n,
        "eq29": (identity + E) * e_n - (identity + E) * e_n + e_n,
        "eq30": e_n,
    }
    dom = Domain({s: Interval(0, 0.3) for s in names.values()})
    formulas = []
    for reading, Ep in eprime.items():
        eq27 = ((identity + E) * e_n - (identity + E) * Ep * e_n).applyfunc(sp.simplify)
        for name, line in lines.items():
            for k in range(K):
                formulas.append(Formula(f"ss.lemma3.modified_update.{name}.{reading}.entry{k + 1}",
                                        f"Eqn {name[2:]}", line[k], eq27[k], dom, reading={"eprime": reading},
                                        description=f"entry {k + 1} of Eqn {name[2:]} against Eqn 27 "
                                                    f"(E' per {reading})"))
    return Item("ss.lemma3.modified_update", "Eqns 26–30", "", "the modified decoder update", formulas=formulas)


def item_equal_overlap_spectrum(K_values=(3, 4, 5)) -> Item:
    """ss.dv.equal_overlap_spectrum — E = ρ(𝟏𝟏ᵀ − I): eigenvalues ρ(K−1) (once) and −ρ (K−1 times);
    (I + E)^{-1} = (I − ρ𝟏𝟏ᵀ/(1 − ρ + Kρ))/(1 − ρ); E' has equal diagonal and equal off-diagonal entries.

    Derived: SymPy's eigenvalues and inverse of the concrete K × K matrix with symbolic ρ."""
    rho = sp.Symbol("rho", positive=True)
    formulas = []
    dom = Domain({rho: Interval(0, 1)})
    for k in K_values:
        ones = sp.ones(k, k)
        E = rho * (ones - sp.eye(k))
        eig = E.eigenvals()
        formulas.append(Formula(f"ss.dv.equal_overlap_spectrum.top.K{k}", "derived", sp.Integer(1),
                                sp.Integer(eig.get(rho * (k - 1), 0)), dom,
                                description=f"multiplicity of the eigenvalue ρ(K−1), K = {k}"))
        formulas.append(Formula(f"ss.dv.equal_overlap_spectrum.multiplicity.K{k}", "derived", sp.Integer(k - 1),
                                sp.Integer(eig.get(-rho, 0)), dom, description=f"multiplicity of −ρ, K = {k}"))
        inverse = (sp.eye(k) + E).inv()
        stated = (sp.eye(k) - rho / (1 - rho + k * rho) * ones) / (1 - rho)
        for (i, j), where in (((0, 0), "diagonal"), ((0, 1), "off_diagonal")):
            formulas.append(Formula(f"ss.dv.equal_overlap_spectrum.inverse.{where}.K{k}", "derived", stated[i, j],
                                    sp.simplify(inverse[i, j]), dom, description=f"(I+E)^{{-1}} {where}, K = {k}"))
        Ep = sp.eye(k) - inverse
        formulas.append(Formula(f"ss.dv.equal_overlap_spectrum.equal_diagonal.K{k}", "derived", Ep[0, 0],
                                sp.simplify(Ep[k - 1, k - 1]), dom, description=f"E'_11 = E'_KK, K = {k}"))
        formulas.append(Formula(f"ss.dv.equal_overlap_spectrum.equal_off_diagonal.K{k}", "derived", Ep[0, 1],
                                sp.simplify(Ep[k - 2, k - 1]), dom, description=f"E'_12 = E'_(K−1)K, K = {k}"))
    return Item("ss.dv.equal_overlap_spectrum", "derived (Remark 1, Corollary 2)", "",
                "the equal-overlap spectrum", formulas=formulas)
