"""Symbols, reading flags and basic functions of the regular-language paper (prefix ``rl``).

Paper: Huang, Liang, Yang, "How Transformers Learn Regular Language Recognition: A Theoretical
Study on Training Dynamics and Implicit Bias" (ICML 2025, arXiv:2505.00926); spec
``shared/spec/regular-language.md``. Symbol names are the user-facing parameter names.

Parameters of the model are named after the embeddings they pair with: ``u_1a`` is the token
score ⟨u, E_1^a⟩, ``W_1a_3b`` the raw attention score ⟨E_1^a, W E_3^b⟩ (key (1, a), query (3, b)).
"""

from __future__ import annotations

import sympy as sp

from derivations.domain import Domain, Interval

eta = sp.Symbol("eta", positive=True)  # learning rate η
lam = sp.Symbol("lam", positive=True)  # scaling parameter λ (softmax temperature)
tau = sp.Symbol("tau", nonnegative=True)  # gradient-flow time τ = ηt
x = sp.Symbol("x", real=True)  # argument of J, f (Eq. (2))
xp = sp.Symbol("xprime", real=True)  # the second argument x' of Eq. (2)
t = sp.Symbol("t", positive=True)  # a step (real-valued inside printed formulas)
t0 = sp.Symbol("t0", nonnegative=True)  # end of phase 1
Lmax = sp.Symbol("L_max", integer=True, positive=True)
U = sp.Symbol("U", positive=True)  # ‖u*_EP‖ (or ‖u*_CoT‖)
unorm = sp.Symbol("unorm", positive=True)  # ‖u_t‖
unorm0 = sp.Symbol("unorm0", nonnegative=True)  # ‖u_{t0}‖
dW = sp.Symbol("dW", nonnegative=True)  # ‖W_t − W_{t0}‖
C0 = sp.Symbol("C0", positive=True)
Delta = sp.Symbol("Delta", positive=True)
k = sp.Symbol("k", nonnegative=True)  # the level of t_k (proof of Lemma B.5)
epsilon = sp.Symbol("epsilon", positive=True)  # target loss of the remark after Thm 4.5
c_delta = sp.Symbol("c_Delta", positive=True)  # the hidden constant of Δ = Θ(1/(C0‖u*‖³))

#: LaTeX of each symbol as the paper writes it (model parameters are added by name pattern, see latex_name)
SYMBOL_NAMES = {
    "eta": r"\eta", "lam": r"\lambda", "tau": r"\tau", "x": "x", "xprime": "x'", "t": "t", "t0": "t_0",
    "L_max": r"L_{\max}", "U": r"\|u_{EP}^*\|", "unorm": r"\|u_t\|", "unorm0": r"\|u_{t_0}\|",
    "dW": r"\|W_t-W_{t_0}\|", "C0": "C_0", "Delta": r"\Delta", "k": "k", "epsilon": r"\epsilon",
    "c_Delta": r"c_{\Delta}",
}


def latex_name(name: str) -> str:
    """The LaTeX of a symbol name, including the model parameters ``u_1a``, ``W_1a_3b``, ``mu_2``, ``S_...``."""
    if dict.__contains__(SYMBOL_NAMES, name):
        return dict.__getitem__(SYMBOL_NAMES, name)
    parts = name.split("_")
    if parts[0] == "u" and len(parts) == 2:
        return rf"\langle u,E_{{{parts[1][:-1]}}}^{{{parts[1][-1]}}}\rangle"
    if parts[0] in ("W", "Wp") and len(parts) == 3:
        (kl, kc), (ql, qc) = (parts[1][:-1], parts[1][-1]), (parts[2][:-1], parts[2][-1])
        weight = "W" if parts[0] == "W" else "W'"
        return rf"\langle E_{{{kl}}}^{{{kc}}},{weight}E_{{{ql}}}^{{{qc}}}\rangle"
    if parts[0] == "mu" and len(parts) == 2:
        return rf"\mu_{{{parts[1]}}}"
    return name


class _Names(dict):
    """SYMBOL_NAMES that also knows the model parameters' names by pattern (:func:`latex_name`)."""

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or (isinstance(name, str) and latex_name(name) != name)

    def __missing__(self, name: str) -> str:
        if isinstance(name, str) and latex_name(name) != name:
            return latex_name(name)
        raise KeyError(name)


SYMBOL_NAMES = _Names(SYMBOL_NAMES)


#: reading flags of spec §2.9, each with its values, the canonical (default) value first
READINGS: dict[str, tuple[str, ...]] = {
    "ep_count": ("contiguous", "subsequence"),
    "boost_steps": ("t_lt_t0", "t_le_t0"),
    "schedule": ("two_phase", "vanilla_eta", "vanilla_etalambda"),
    "cot_max_len": ("2L0-1", "2L0-2"),
    "reg_max_len": ("L0-1", "L0"),
    "dim": ("2*maxlen", "<int>"),
    "sign_zero": ("+1", "count_as_error"),
    "fig_attention_panel": ("weights", "raw_scores"),
    "cot_after_ep_schedule": ("phase2", "two_phase_restart"),
    "precision": ("float64", "mp:<digits>"),
    "position_range": ("le_L", "le_Lmax"),
    "phase1_t_range": ("all", "from1", "from3"),
    "logistic_rhs": ("as_printed", "abs"),
    "phase2_T": ("min", "b2_rhs", "b6"),
    "phase2_window": ("own", "zero_to_T", "t2_to_T"),
    "focus_reading": ("inequalities", "argmax"),
    "automaton_start": ("t1", "t2"),
    "sec6_reading": ("descriptive", "slope_profile"),
}
#: the canonical value of every reading flag; a verdict is decided on these
DEFAULT_READINGS = {flag: values[0] for flag, values in READINGS.items()}


def check_reading(flag: str, value: str) -> str:
    """Return ``value`` if it is a value of ``flag``; otherwise raise naming the valid values."""
    from derivations.errors import InvalidArgument, unknown_name

    if flag not in READINGS:
        raise unknown_name("reading flag", flag, READINGS)
    if value not in READINGS[flag]:
        msg = f"{flag}={value!r} is not a reading of {flag}; choose one of {', '.join(READINGS[flag])}"
        raise InvalidArgument(msg)
    return value


def f(z: sp.Expr) -> sp.Expr:
    """f(x) = 1/(1 + e^x), the paper's f in the proof of Lemma B.2 (f(x) = -J'(x))."""
    return 1 / (1 + sp.exp(z))


def J(z: sp.Expr) -> sp.Expr:
    """The logistic loss J(z) = log(1 + e^{-z}).

    Built unevaluated: evaluating exp/log of a large symbolic sum asks SymPy's assumption system
    about its sign, which dominates the cost of an enumerated loss; substitution re-evaluates.
    """
    return sp.log(1 + sp.exp(-z, evaluate=False), evaluate=False)


def J_prime(z: sp.Expr) -> sp.Expr:
    """J'(z) = -1/(1 + e^z) (App. A.1), built unevaluated like :func:`J`."""
    return -1 / (1 + sp.exp(z, evaluate=False))


def H(a, b) -> sp.Expr:
    """H(a, b) = Σ_{L=a}^{b} L^{-2} (spec §1; 0 when b < a): a rational for integer ends.

    Integer ends are summed exactly: an unevaluated Sum with an integer summation index is
    evaluated by the mpmath lambdify in Python floats (1/L**2 of ints), 16 digits only.
    """
    n = sp.Dummy("L", integer=True, positive=True)
    total = sp.Sum(1 / n**2, (n, a, b))
    if sp.sympify(a).is_Integer and sp.sympify(b).is_Integer:
        return sp.Add(*[sp.Rational(1, m**2) for m in range(int(a), int(b) + 1)])
    return total


#: real ranges of the random test points (spec §2.11: scales 1e-2..10 for u, W; λ over decades)
PARAMETER = Interval(-6, 6)
LAMBDA = Interval(0.1, 1e4, scale="log")
ETA = Interval(0, 1)
MU = Interval(-2, 2)


def parameter_domain(symbols, **ranges: Interval) -> Domain:
    """A domain over model parameters (u, W, μ, S), λ and η with the spec's test ranges."""
    intervals = {}
    for sym in sorted(symbols, key=lambda s: s.name):
        if sym.name in ranges:
            intervals[sym] = ranges[sym.name]
        elif sym == lam:
            intervals[sym] = LAMBDA
        elif sym == eta:
            intervals[sym] = ETA
        elif sym.name.startswith(("mu_", "S_")):
            intervals[sym] = MU
        else:
            intervals[sym] = PARAMETER
    return Domain(intervals)
