"""Symbols, parameter domains and the basic functions of the induction-head paper (prefix ``ih``).

Paper: Wang, Yu, E, Wu, "How Transformers Get Rich: Training Dynamics Analysis" [W] /
"How Transformers Implement Induction Heads: Approximation and Optimization Analysis" [F]
(arXiv:2410.11474). Symbol names are the user-facing parameter names of ``--param``.
"""

from __future__ import annotations

import sympy as sp

from derivations.domain import Constraint, Domain, Interval

L = sp.Symbol("L", integer=True, positive=True)
p = sp.Symbol("p", nonnegative=True)  # head-1 ALiBi slope p^{(2,1)}
ptilde = sp.Symbol("ptilde", nonnegative=True)  # layer-1 ALiBi slope p^{(1,1)}
g = sp.Symbol("g", real=True)  # head-1 value w_V^{(2,1)}
h = sp.Symbol("h", real=True)  # head-2 value w_V^{(2,2)}
w = sp.Symbol("w", positive=True)  # w_KQ on the balanced manifold
wstar = sp.Symbol("wstar", positive=True)
alpha = sp.Symbol("alpha", positive=True)  # relative weight alpha*
sigma = sp.Symbol("sigma", positive=True)  # initialisation scale sigma_init
a = sp.Symbol("a", real=True)  # Lemma 7's coefficient
x = sp.Symbol("x", positive=True)  # argument of C, phi, psi
u = sp.Symbol("u", positive=True)  # u = exp(-p)
v = sp.Symbol("v", positive=True)  # v = w**2
vstar = sp.Symbol("vstar", positive=True)  # v* = w*^2
s = sp.Symbol("s", integer=True, nonnegative=True)  # an index (lag, position)
k = sp.Symbol("k", integer=True, nonnegative=True)  # a summation index

gstar = alpha / (1 + alpha)  # g* = alpha*/(1+alpha*)
hstar = 1 / (1 + alpha)  # h* = 1/(1+alpha*)
n = L - 2

#: LaTeX of each symbol as the paper writes it
SYMBOL_NAMES = {
    "L": "L", "p": "p", "ptilde": r"\tilde p", "g": "g", "h": "h", "w": "w",
    "wstar": r"w^{\star}", "alpha": r"\alpha^{\star}", "sigma": r"\sigma_{\mathrm{init}}",
    "a": "a", "x": "x", "u": "u", "v": "v", "vstar": r"v^{\star}", "s": "s", "k": "k",
    "gstar": r"g^{\star}", "hdot": r"\dot h", "wdot": r"\dot w", "lam": r"\lambda", "vG": r"v_{G}",
    "hratio": r"\tfrac{h}{h^{\star}}", "vratio": r"\tfrac{v}{v^{\star}}",
    "elapsed": "(t - t_1)", "elapsedT2h": "(t - T_2^{h})",
}

#: the canonical value of each reading flag (spec §2.10); a verdict is decided on these
DEFAULT_READINGS = {
    "head1_range": "canonical", "ih_model_range": "canonical", "flow": "paper", "ih_loss": "exp_simplified",
    "tokens": "gaussian", "init": "eq4", "value_layout": "separate", "ih_keys": "y", "eq17_gamma": "R",
}
#: the flow-mode shorthands of spec §2.7 (the one definition; every layer derives its views from it):
#: shorthand -> the reading flags it fixes; the first is canonical
FLOW_MODES = {
    "paper": {"flow": "paper", "ih_loss": "exp_simplified"},
    "balanced": {"flow": "balanced", "ih_loss": "exp_simplified"},
    "softmaxLL": {"flow": "balanced", "ih_loss": "softmax_largeL"},
}
#: the flag ``flow`` as a mode of derivations.flows: C.3.2's paper flow descends L(w²) in w
#: (reparameterised), the model's flow of (w_Q, w_K) is the balanced one
REDUCED_MODE = {"paper": "reparameterised", "balanced": "balanced"}


def reduced_mode(flow: str) -> str:
    """The derivations.flows mode of the ``flow`` flag; an unknown value is refused by name."""
    if flow not in REDUCED_MODE:
        from derivations.errors import InvalidArgument

        raise InvalidArgument(f"flow={flow!r} is not one of {', '.join(REDUCED_MODE)}")
    return REDUCED_MODE[flow]

#: the spec's sampled sequence lengths (§0.2 item 1)
SAMPLED_L = (5, 6, 7, 9, 12, 40)
INV_SQRT2 = float(1 / sp.sqrt(2))

SEQUENCE = {L: (5, SAMPLED_L)}
POSITIVE = Interval(0, 30, scale="log")
WEIGHT = Interval(-2, 2)
ALPHA = Interval(0, 20)
#: w, w* inside the natural domain of psi(2 w^2): 2 w^2 < 1 (Eq. (10) and Lemma 7 diverge beyond)
W_RANGE = Interval(0, INV_SQRT2)
EQ10_CONSTRAINTS = (
    Constraint(2 * wstar**2 < 1, "Lemma 7's expectation E exp(2 w*^2 XY) diverges unless 4 w*^4 < 1"),
    Constraint(2 * w**2 < 1, "Lemma 7's expectation E exp(2 w^2 XY) diverges unless 4 w^4 < 1"),
)


def domain(*symbols: sp.Symbol, constraints=(), **ranges: Interval) -> Domain:
    """Build a domain over ``symbols`` with the paper's default ranges (overridable by name)."""
    defaults = {
        p: POSITIVE, ptilde: POSITIVE, g: WEIGHT, h: WEIGHT, w: W_RANGE, wstar: W_RANGE, alpha: ALPHA,
        sigma: Interval(0, 1), a: Interval(-1, 1), x: Interval(0, 1), u: Interval(0, 1),
        v: Interval(0, 0.5), vstar: Interval(0, 0.5),
    }
    intervals = {}
    integers = {}
    for sym in symbols:
        if sym == L:
            integers[L] = SEQUENCE[L]
        elif sym.is_integer:
            integers[sym] = (0, (0, 1, 2, 3, 5, 10, 37))
        else:
            intervals[sym] = ranges.get(sym.name, defaults[sym])
    return Domain(intervals, integers, tuple(constraints))


def M_closed(p_: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    """M(p) as printed in C.2/C.3.1/Lemma 8: (1 - e^{-p(L-2)})/(1 - e^{-p})."""
    return (1 - sp.exp(-p_ * (length - 2))) / (1 - sp.exp(-p_))


def m_closed(p_: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    """m(p) as printed in C.2: (e^{-p} - (L-2)e^{-p(L-2)} + (L-3)e^{-p(L-1)})/(1 - e^{-p})^2."""
    return (sp.exp(-p_) - (length - 2) * sp.exp(-p_ * (length - 2)) + (length - 3) * sp.exp(-p_ * (length - 1))) / (
        1 - sp.exp(-p_)
    ) ** 2


def M_sum(p_: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    """M(p) from its definition: the normaliser of head 1's ALiBi softmax over s = 2..L-1."""
    return sp.Sum(sp.exp(-p_ * (length - 1 - s)), (s, 2, length - 1))


def m_sum(p_: sp.Expr, length: sp.Expr = L) -> sp.Expr:
    """m(p) from its definition: sum_{s=1}^{L-3} s e^{-ps}."""
    return sp.Sum(s * sp.exp(-p_ * s), (s, 1, length - 3))


def psi(x_: sp.Expr) -> sp.Expr:
    """psi(x) = (1 - x^2)^{-1/2} (C.3.2)."""
    return (1 - x_**2) ** sp.Rational(-1, 2)


def phi(x_: sp.Expr) -> sp.Expr:
    """phi(x) = x (1 - x^2)^{-3/2} (C.3.2; the same function as C(x))."""
    return x_ * (1 - x_**2) ** sp.Rational(-3, 2)
