"""The logistic loss and its derivatives (``co.cf.loss_derivs``, ``co.dv.loss_bounds``; spec §2.5, §4, §5)."""

from __future__ import annotations

import sympy as sp

from derivations.core import Formula, Item, RegionInequality
from derivations.domain import Domain, Interval
from derivations.word_cooccurrence.symbols import F, x

#: the printed definitions (L227–L233)
ell = sp.log(1 + sp.exp(-x))


def g(arg: sp.Expr) -> sp.Expr:
    """g(x) = 1/(1 + eˣ) as printed (L230)."""
    return 1 / (1 + sp.exp(arg))


def _line() -> Domain:
    return Domain({x: Interval(-30, 30)})


def item_loss_derivs() -> Item:
    """co.cf.loss_derivs — L227–L233; F.5 proof (L5590–L5647); F.6 proof (L6377–L6491).

    Derived: l' = d/dx log(1 + e^{−x}); g = −l'; g' = d/dx g(x). The F.5 proof's replacement of g'(y_iF_i) and the
    F.6 proof's argument g'(F_i) (where the derivation has g'(y_iF_i)) are compared as functions of F at y = ±1."""
    dl = sp.diff(ell, x)
    dg = sp.diff(g(x), x)
    formulas = [
        Formula("co.cf.loss_derivs.l_prime", "L229", -1 / (1 + sp.exp(x)), dl, _line(), description="l'(x)",
                latex=r"l'(x) = -\frac{1}{1+\exp(x)}"),
        Formula("co.cf.loss_derivs.g", "L230", g(x), -dl, _line(), description="g(x) = −l'(x)",
                latex=r"g(x) = \frac{1}{1+\exp(x)}"),
        Formula("co.cf.loss_derivs.g_prime_F5", "L5590–L5647",
                -1 / ((1 + sp.exp(x)) * (1 + sp.exp(-x))), dg, _line(), description="g'(y_iF_i) in the F.5 proof",
                latex=r"g'(y_iF_i) = \frac{-1}{(1+\exp(y_iF_i))(1+\exp(-y_iF_i))}"),
    ]
    for label, y_value in (("plus", 1), ("minus", -1)):
        formulas.append(Formula(
            f"co.cf.loss_derivs.g_prime_argument_{label}", "L6377–L6491", dg.subs(x, F), dg.subs(x, y_value * F),
            Domain({F: Interval(-30, 30)}), description=f"g'(F_i) (printed) against g'(y_iF_i) at y_i = {y_value:+d}",
            latex=r"g'(F^{(t)}_i)"))
    return Item("co.cf.loss_derivs", "L227–L233; F.5, F.6 proofs", "", "the logistic loss and its derivatives",
                formulas=formulas,
                notes=["g'(x) = −eˣ/(1 + eˣ)² is even, so g'(F_i) = g'(y_iF_i) for y_i ∈ {±1}: the F.6 argument is "
                       "harmless when the formulas are read as functions of F_i"])


def item_loss_bounds() -> Item:
    """co.dv.loss_bounds — g(x) <= l(x) <= 2g(x) for x >= 0, which makes "l(x) = Θ(−l'(x)) for x > 0" (L6676)
    explicit with constants 1 and 2. Derived by hand (spec §5): at x = 0 both sides are log 2 ∈ [½, 1]; the
    inequalities are certified on [0, 40] and hold beyond it since l(x)eˣ → 1 and g(x)eˣ → 1 as x → ∞."""
    dom = Domain({x: Interval(0, 40)})
    return Item("co.dv.loss_bounds", "derived (L6676)", "", "l = Θ(−l') for x >= 0 with explicit constants",
                inequalities=[
                    RegionInequality("co.dv.loss_bounds.lower", "L6676", g(x), ell, dom, description="g(x) <= l(x)"),
                    RegionInequality("co.dv.loss_bounds.upper", "L6676", ell, 2 * g(x), dom,
                                     description="l(x) <= 2g(x)"),
                ])


def leading_constant_lemE4() -> sp.Rational:
    """Lemma E.4's leading term over (‖w_j‖² + ‖v(μ₁)‖²) at F⁽⁰⁾ = 0 and uniform attention (L2448–L2476):
    g(0)(|I₁| − |I₂|)/n · Σ_{l=1}^L 1/L, with g = −ℓ' derived from ℓ (not the printed g) and the group fractions
    ½, ⅙ of Def. 2.1."""
    g0 = -sp.diff(ell, x).subs(x, 0)
    L, l = sp.Symbol("L", positive=True, integer=True), sp.Symbol("l", integer=True)
    return sp.nsimplify(sp.simplify(g0 * (sp.Rational(1, 2) - sp.Rational(1, 6)) * sp.summation(1 / L, (l, 1, L))))
