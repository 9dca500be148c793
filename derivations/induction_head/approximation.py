r"""The explicit error bound of the Thm 4.1 construction (spec ``ih.dv.thm41_bound``), derived.

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), full version [F], Thm 4.1 / A.1 (statement lost in
extraction; proof outline: layer-1 ALiBi head captures the previous token, layer-2 DP compares,
"By Lemma D.1" = [W] Lemma 6). Tokens x_i ∈ ℝ^d with ‖x_i‖_∞ <= B; layer-1 slope p.

Chain (each link is an item below):

1. A_{s,s−1} = 1/Σ_{k=0}^{s−2} e^{−pk}, hence 1 − A_{s,s−1} = (e^{−p} − e^{−p(s−1)})/(1 − e^{−p(s−1)}).
2. y_s − x_{s−1} = Σ_{τ<s−1} A_{sτ}(x_τ − x_{s−1}) ⇒ ‖y_s − x_{s−1}‖_∞ <= 2B(1 − A_{s,s−1}) <= 2Be^{−p}.
3. Score gap |x_L^⊤W*(y_s − x_{s−1})| <= S_W ‖y_s − x_{s−1}‖_∞/B·B with S_W := sup_{‖x‖_∞<=B}‖W*^⊤x‖₁.
4. Lemma 6: ‖sm(z) − sm(z′)‖₁ <= 2‖z − z′‖_∞; the outputs differ by <= B‖sm(z) − sm(z′)‖₁.
5. Product: ‖IH₂ − TF‖_∞ <= 4B²S_W e^{−p} <= 4B³‖W*‖_{1,1}e^{−p}, with no L.
"""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval
from derivations.induction_head.symbols import POSITIVE, s

p = sp.Symbol("p", positive=True)  # layer-1 ALiBi slope p^{(1,1)}; positive, so the geometric sum has one branch

B = sp.Symbol("B", positive=True)  # token box half-width
S_W = sp.Symbol("S_W", positive=True)  # sup_{|x|_inf <= B} |W*^T x|_1
W11 = sp.Symbol("W11", positive=True)  # ||W*||_{1,1}; S_W <= B W11 is checked numerically per W*
tau = sp.Symbol("tau", integer=True, nonnegative=True)

#: s >= 3: at s = 2 the previous-token weight is 1 exactly (y_2 = x_1)
POSITIONS = {s: (2, (2, 3, 4, 5, 9, 40, 200))}


def previous_token_weight(p_: sp.Expr = p, s_: sp.Expr = s) -> sp.Expr:
    """A_{s,s−1}(p) from its definition: the softmax weight of lag 1 among lags 1..s−1 (logits −p(k−1))."""
    return 1 / sp.Sum(sp.exp(-p_ * tau), (tau, 0, s_ - 2))


def _general_branch(expr: sp.Expr) -> sp.Expr:
    """Drop the e^{-p} = 1 branch of a summed geometric series (p > 0 excludes it)."""
    return expr.replace(lambda e: isinstance(e, sp.Piecewise), lambda e: e.args[-1].expr)


def one_minus_A_stated(p_: sp.Expr = p, s_: sp.Expr = s) -> sp.Expr:
    """The spec's closed form (e^{−p} − e^{−p(s−1)})/(1 − e^{−p(s−1)})."""
    return (sp.exp(-p_) - sp.exp(-p_ * (s_ - 1))) / (1 - sp.exp(-p_ * (s_ - 1)))


def bound_chain() -> dict[str, sp.Expr]:
    """The links of the chain as expressions in (B, S_W, p): y-gap, score gap, ℓ₁ softmax gap, output gap."""
    y_gap = 2 * B * sp.exp(-p)
    score_gap = S_W * y_gap  # |x_L^T W*(y - x)| <= ||W*^T x_L||_1 ||y - x||_inf
    softmax_gap = 2 * score_gap  # Lemma 6
    output_gap = B * softmax_gap
    return {"y_gap": y_gap, "score_gap": score_gap, "softmax_l1_gap": softmax_gap, "output_gap": output_gap}


def bound_stated() -> tuple[sp.Expr, sp.Expr]:
    """The spec's two printed right-hand sides: 4B²e^{−p}S_W and 4B³‖W*‖_{1,1}e^{−p}."""
    return 4 * B**2 * sp.exp(-p) * S_W, 4 * B**3 * W11 * sp.exp(-p)


def item_thm41_bound() -> Item:
    """ih.dv.thm41_bound: the identity for 1 − A_{s,s−1}, the inequality <= e^{−p} and the product chain."""
    dom = Domain({p: POSITIVE}, POSITIONS)
    geometric = Formula(
        "ih.dv.thm41_bound.one_minus_A", "spec §4 ih.dv.thm41_bound", one_minus_A_stated(),
        1 - _general_branch(previous_token_weight().doit()), dom,
        description="1 - A_{s,s-1} from the ALiBi softmax of layer 1",
        latex=r"1-A_{s,s-1}=\frac{e^{-p}-e^{-p(s-1)}}{1-e^{-p(s-1)}}")
    chain = Formula(
        "ih.dv.thm41_bound.chain", "spec §4 ih.dv.thm41_bound", bound_stated()[0], bound_chain()["output_gap"],
        Domain({p: POSITIVE, B: Interval(0, 10), S_W: Interval(0, 100)}),
        description="product of the links: B * 2 (Lemma 6) * S_W * 2B e^{-p}",
        latex=r"\|\mathsf{IH}_2-\mathsf{TF}\|_\infty\le4B^2e^{-p}\sup_{\|x\|_\infty\le B}\|W^{\star\top}x\|_1")
    below_exp = RegionInequality(
        "ih.dv.thm41_bound.le_exp", "spec §4 ih.dv.thm41_bound", one_minus_A_stated(), sp.exp(-p), dom,
        description="(e^{-p} - e^{-p(s-1)})/(1 - e^{-p(s-1)}) <= e^{-p}  (equivalent to e^{-ps} <= e^{-p(s-1)})",
        latex=r"\frac{e^{-p}-e^{-p(s-1)}}{1-e^{-p(s-1)}}\le e^{-p}")
    return Item("ih.dv.thm41_bound", "spec §4 (derived)", "[F] Thm A.1 proof", "explicit bound of Thm 4.1",
                formulas=[geometric, chain], inequalities=[below_exp],
                notes=["Lemma 6's constant 2 is used as printed (ih.cf.lemma6 measures the sharp constant 1)."])


def monotone_in_s() -> sp.Expr:
    """d/ds of 1 − A_{s,s−1} (continuous s): positive, so the worst key position is s = L−1 (or L−1 of the range)."""
    return sp.simplify(sp.diff(one_minus_A_stated(), s))
