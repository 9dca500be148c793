"""Symbols, LaTeX names and reading flags of "word co-occurrence" (prefix ``co``; spec word-cooccurrence.md).

Paper: Yang, Kailkhura, Wang, Liang, "Training Dynamics of Transformers to Recognize Word Co-occurrence via
Gradient Flow Analysis" (NeurIPS 2024). Symbol names are the user-facing parameter names (``--param m=256``).
"""

from __future__ import annotations

import sympy as sp

x = sp.Symbol("x", real=True)  # the argument of the logistic loss l(x) = log(1 + e^{−x})
F = sp.Symbol("F", real=True)  # a model output F_i
y = sp.Symbol("y", real=True)  # a label y_i ∈ {±1}
m = sp.Symbol("m", positive=True, integer=True)  # rows of W_K, W_Q, W_V ("embedding dimension")
m1 = sp.Symbol("m1", positive=True, integer=True)  # neurons of the linear MLP
L = sp.Symbol("L", positive=True, integer=True)  # tokens per sequence
n = sp.Symbol("n", positive=True, integer=True)  # training samples
d = sp.Symbol("d", positive=True, integer=True)  # vocabulary size
kappa0 = sp.Symbol("kappa0", positive=True)  # σ₀ = κ₀/√(Lm)
kappa1 = sp.Symbol("kappa1", positive=True)  # σ₁ = κ₁/√m₁
t = sp.Symbol("t", nonnegative=True)  # gradient-flow time

#: LaTeX of each symbol as the paper writes it
SYMBOL_NAMES = {"x": "x", "F": "F", "y": "y", "m": "m", "m1": "m_1", "L": "L", "n": "n", "d": "d",
                "kappa0": r"\kappa_0", "kappa1": r"\kappa_1", "t": "t"}

#: reading flags and setting modes of the spec (§1 rules 3, 7; §2.2, §2.4, §2.7, §6.3, §7.1), canonical value first
READINGS: dict[str, tuple[str, ...]] = {
    "index_range": ("existing", "strict"),
    "asym_ineq": ("constant", "literal"),
    "random_tokens": ("unique", "iid", "iid_distinct_within_sample"),
    "test_tokens": ("unseen", "uniform_all"),
    "theory_init": ("gaussian_kappa",),
    "phase1_end": ("empirical", "definitional"),
    "at_T1": ("plus", "empirical", "grid"),
    "phase2_end": ("horizon", "defF1"),
    "p2_horizon": ("scaled", "fixed"),
    "theta_tilde": ("printed", "tilde"),
    "rate": ("loss_decay", "margin_growth"),
    "corF2_region": ("printed", "both", "j"),
    "corF2_C": ("0", "1/10", "1"),
    "lemD8_001": ("hypothesis", "claim"),
    "fig1_matrix_init": ("kaiming_normal", "torch_default", "theory"),
    "fig1_a_init": ("pm1", "uniform_scaled", "kaiming_normal"),
    "fig1_a_mode": ("fixed", "trained"),
}
DEFAULT_READINGS = {flag: values[0] for flag, values in READINGS.items()}
