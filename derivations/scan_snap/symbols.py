"""Symbols, LaTeX names and setting options of "Scan and Snap" (prefix ``ss``; spec scan-and-snap.md).

Paper: Tian, Wang, Chen, Du, "Scan and Snap: Understanding Training Dynamics and Token Composition in
1-layer Transformer" (NeurIPS 2023, arXiv:2305.16380). Symbol names are the user-facing parameter names
(``--param etaY=0.5``). Time ``t`` counts batch-1 SGD steps over all classes (spec §2.6); ``s`` counts the
visits of one class.
"""

from __future__ import annotations

import sympy as sp

M = sp.Symbol("M", positive=True)  # vocabulary size (real-valued inside the scalar formulas)
K = sp.Symbol("K", positive=True)  # number of classes (next tokens)
etaY = sp.Symbol("etaY", positive=True)  # learning rate of the decoder Y
etaZ = sp.Symbol("etaZ", positive=True)  # learning rate of the attention Z
t = sp.Symbol("t", nonnegative=True)  # SGD steps over all classes
s = sp.Symbol("s", nonnegative=True)  # visits of one class
h = sp.Symbol("h", nonnegative=True)  # the value of h (Lemma 6) or h* (Eqn 33)
u = sp.Symbol("u", nonnegative=True)  # u = M h
rho0 = sp.Symbol("rho0", positive=True)  # the normaliser ρ₀ of Sec. 6 (L192)
nu = sp.Symbol("nu", positive=True)  # the learning-rate ratio ν
omega1 = sp.Symbol("omega1", positive=True)  # the upper root's ω₁ (Lemma 8)
omega0 = sp.Symbol("omega0", positive=True)  # the lower root's ω₀ (Lemma 8)
Gamma = sp.Symbol("Gamma", nonnegative=True)  # Γ(t) = η_Z ∫₀ᵗ γ
z = sp.Symbol("z", real=True)  # the scalar attention logit z_l of Theorem 4
epsilon = sp.Symbol("epsilon", positive=True)  # the target ‖e_n − α_n‖ of Corollary 1
x = sp.Symbol("x", positive=True)  # the variable of Lemma 11's factor
N = sp.Symbol("N", positive=True)  # steps over all classes (App. B)
delta = sp.Symbol("delta", positive=True)  # failure probability δ

#: LaTeX of each symbol as the paper writes it
SYMBOL_NAMES = {
    "M": "M", "K": "K", "etaY": r"\eta_Y", "etaZ": r"\eta_Z", "t": "t", "s": "s", "h": "h", "u": "u",
    "rho0": r"\rho_0", "nu": r"\nu", "omega1": r"\omega_1", "omega0": r"\omega_0", "Gamma": r"\Gamma",
    "z": "z_l", "epsilon": r"\epsilon", "x": "x", "N": "N", "delta": r"\delta",
    "hp": "h'", "lg_t": r"\log_{10} t", "gamma": r"\gamma",
    # the entries of E' in Theorem 1's coefficients (derivations.scan_snap.theorem1)
    **{f"Ep{i}{j}": f"E'_{{{i}{j}}}" for i in range(1, 10) for j in range(1, 10)},
}

#: the setting options of spec §2.9 (``ss.opt.<flag>``): values, the canonical (default) one first
READINGS: dict[str, tuple[str, ...]] = {
    "z_index": ("query_key", "key_query"),
    "eprime": ("lemma14", "appB1"),
    "ode_class_weight": ("none", "prior"),
    "class_schedule": ("iid_uniform", "round_robin", "single_class"),
    "gamma_arg": ("t_over_K", "ceil"),
    "h_variant": ("discrete", "continuous"),
    "t0": ("omega1", "asymptotic"),
    "nu": ("Y_over_Z", "Z_over_Y"),
    "rho0": ("from_E0", "from_norms", "free"),
    "init": ("zero", "torch_uniform", "random_embedding"),
    "residual": ("none", "paper", "code"),
    "vocab_layout": ("code_disjoint", "theory_shared"),
    "synsmall": ("code", "shared_last", "paper_literal"),
    "time_map": ("steps", "momentum_scaled"),
    "v_symbol": ("f", "c"),
    "gct_star": ("global", "pairwise"),
    "fig6_metric": ("distinct_renormalised", "distinct_raw"),
    "error_bar": ("sem", "std"),
    "fig3_source": ("scalar_ode", "eqn127", "eqn14", "reduced_ode"),
    "kernel": ("counts", "sequence", "T_inf"),
    "decoder_update": ("gradient", "modified"),
    "alpha_index": ("pre_step", "post_step"),
    "wdot": ("increment", "gradient"),
    "rem1_reading": ("eqn43", "effective_rate"),
    "u_index": ("column", "row"),
    "beta": ("leading", "eq88", "derived"),
    "fig10_lr_groups": ("unified", "two_groups"),
}
#: the canonical value of every option (an item whose canonical value differs, e.g. ``h_variant``, says so)
DEFAULT_READINGS = {flag: values[0] for flag, values in READINGS.items()}
