"""The setting options (``ss.opt.*``, spec §2.9) and named parameter sets (``ss.cfg.*``, §2.10) as records.

Selecting one in a run evaluates nothing (spec R17 (g)): an option shows its values (the canonical one
first) and why it exists; a parameter set shows its content and, where it names a vocabulary layout, the
setting quantities computed from it (M, supports, G_DT, G_CT, E(0) and its spectrum, Assumption 2's margins).
"""

from __future__ import annotations

from checks.records import Record
from checks.registry import register_record
from derivations.scan_snap.symbols import READINGS
from numerics.models.scan_snap.data import layout, setting_quantities

PAPER = "ss"

#: why each option exists (spec §2.9, shortened)
REASONS = {
    "z_index": "Eqn 1 with Z := UW_QW_KᵀUᵀ/√d gives b ∝ exp(Z_{x_t x_T}); App. A, Eqn 4, Eqn 5 and the code use "
               "row = query",
    "eprime": "App. B.1 (L404) prints E' := (I+E)^{-1} − I; Lemma 14 (Eqn 77), Eqn 28, Eqn 70 use I − (I+E)^{-1}",
    "ode_class_weight": "Eqn 10 sums over next tokens without a weight; App. B samples classes with ℙ(n) = 1/K",
    "class_schedule": "'each sequence class appears uniformly' (L142) is random or deterministic; Lemma 5 has one "
                      "class",
    "gamma_arg": "L579 prints h(t/K), Eqn 85 prints h(⌈t/K⌉)",
    "h_variant": "the paper replaces h* by h 'for convenience' (L563) after deriving with h*",
    "t0": "Eqn 14 writes 2(1 + o(1)), L207 2(1 + δ'), L999 2(1 + ω₁)",
    "nu": "L993 defines ν = η_Y/η_Z, the Fig. 9 caption ν = η_Z/η_Y",
    "rho0": "L192 defines ρ₀ only as an approximately constant normalisation",
    "init": "the experiments use zero (Fig. 4) and PyTorch default (Fig. 6) initialisations",
    "residual": "the paper's (L220) and the code's residual forms differ",
    "vocab_layout": "Sec. 3 and the released code lay out the vocabulary differently",
    "synsmall": "Sec. 8 states M = 30, the Fig. 4 caption one last token, the released run M = 34",
    "time_map": "the paper does not relate optimiser iterations to theory time",
    "v_symbol": "v_n, v_nl (L188, L220) are not defined",
    "gct_star": "G*_CT (Corollary 2) is not defined",
    "fig6_metric": "the analysis script of Fig. 6 is not released",
    "error_bar": "Fig. 6 says 'standard derivation of the mean'",
    "fig3_source": "L214 does not state the model behind Fig. 3",
    "kernel": "finite T by counts (exact), explicit sequences (validation), or T = ∞",
    "decoder_update": "the model trains with the gradient; Lemma 3, Theorem 5 and Theorem 1 use the modified update",
    "alpha_index": "Lemma 5 does not say whether α_n(s) is taken before or after the s-th update",
    "wdot": "the proof of Lemma 5 writes ẇ for a discrete recursion",
    "rem1_reading": "Remark 1 states a display and a sentence drawn from it",
    "u_index": "U = [u₁, …, u_K] has columns u_i, yet u_i is called an eigenvector of E = UᵀDU",
    "beta": "Eqns 86, 88 are exact, Eqns 87, 89 their leading order; the toolkit derives its own",
    "fig10_lr_groups": "App. E says 'a unified learning rate', the released script uses two groups",
}

#: the parameter sets of spec §2.10: content, and the layout whose setting quantities a run computes
CONFIGURATIONS = {
    "fd": ({"M": 7, "T": 12, "K": 3, "Y, Z": "i.i.d. N(0, 1)", "P": "random, full support"}, None),
    "mc_lemma2": ({"M": 30, "P": "Syn-Small class 1 on its 20 contextual ids", "z": "N(0, 1)",
                   "T": "16, 32, …, 16384", "repetitions": 2000, "delta": [0.05, 0.1]}, None),
    "lemma3": ({"M": 200, "K": 4, "P": "random_P (ids 0, 1 common; 8 more per class from 2–29)",
                "Z": "rows in use i.i.d. N(0, 0.5²)", "steps": 300, "etaY": [0.1, 1]}, "random_P"),
    "lemma5": ({"(M, etaY)": [(30, 1), (100, 0.5), (1000, 0.1), (1000, 0.9), (5000, 0.01)], "steps": 4000}, None),
    "lemma7": ({"M": [30, 100, 1000, 5000], "etaY": [0.01, 0.1, 0.5, 0.9, 1], "steps": 10**4}, None),
    "lemma8": ({"M": [30, 33, 34, 100, 125, 240, 1000, 10**4, 50272]}, None),
    "gamma": ({"M": [100, 1000, 10**4], "K": [1, 10], "etaY": [0.01, 0.1, 0.5, 1], "t": "log grid 1 … 1e4·t0"},
              None),
    "cor1": ({"(M, etaY)": [(100, 0.5), (1000, 0.1)], "epsilon": [1e-1, 1e-2, 1e-3]}, None),
    "randE": ({"count": "20 000 (2 000 quick)", "K": "2–7", "families": "a: zero-diagonal, |λ₁| = u/K; b: Gram "
               "FᵀF − I, |λ₁| < 1/K; c: general symmetric, |λ₁| < 1"}, None),
    "rem1": ({"overlap": "f_nᵀf_n' = ρ", "(K, M)": [(3, 3), (4, 4), (4, 10), (4, 40), (10, 100)],
              "rho": [0.1, 0.2, 0.5], "etaY": [0.1, 1], "visits per class": 100}, None),
    "thm1": ({"F": "features of K3_shared at Z = 0 (and an overlap scan E_nn' ∈ {0.01, …, 0.3})",
              "visits per class": 1000, "etaY": [0.1, 0.5]}, "K3_shared"),
    "K3_shared": ({"K": 3, "M": 23, "common": "id 0, ℙ = 0.12", "distinct": "6 per class, ∝ linspace(0.1, 1, 6)",
                   "last token": "id 19 (shared)", "next tokens": "ids 20–22", "etaY": 1, "etaZ": 0.1}, "K3_shared"),
    "K3_own": ({"K": 3, "M": 25, "last tokens": "ids 19–21", "next tokens": "ids 22–24"}, "K3_own"),
    "K2_own": ({"K": 2, "M": 17, "common": "id 0, ℙ = 0.12", "last tokens": "ids 13–14", "next tokens": "ids 15–16",
                "etaY": 1, "etaZ": 0.1}, "K2_own"),
    "sym_multi_ct": ({"K": 3, "M": 25, "common": "ids 0–2, ℙ = (0.03, 0.06, 0.1)"}, "sym_multi_ct"),
    "asym_2ct": ({"K": 3, "M": 15, "common": "ids 0, 1 in strict subsets, class-dependent"}, "asym_2ct"),
    "thm_hyp": ({"K": 2, "M": 10**4, "variants": "ct1: id 0 ℙ = 0.25; ct2: ids 0–1 ℙ = (0.1, 0.2)",
                 "etaY": 0.5, "etaZ": 0.05}, "thm_hyp.ct1"),
    "finiteT": ({"base": "K3_shared", "batch": 8, "steps": 1000, "T": [32, 128, 512, 2048, "inf"], "seeds": ">= 10"},
                "K3_shared"),
    "thm3_sgd": ({"configurations": "K3_shared, K2_own, thm_hyp.ct1", "etaZ/etaY": [0.3, 0.1, 0.03],
                  "steps": 3000}, None),
    "thm4": ({"K": 10, "M": 1000, "etaZ": 0.5, "etaY": [0.5, 1, 2, 5, 10], "rho0": [0.5, 1, 2, 3], "t": "[1, 1e5]",
              "M sweep": [100, 1000, 10**4, 10**6]}, None),
    "fig9": ({"K": 10, "M": 1000, "nu": 2, "etaZ": [0.1, 0.5, 2], "rho0": 1}, None),
    "synsmall": ({"variants": "code (M = 34), shared_last (M = 33), paper_literal (M = 30)"}, "synsmall.code"),
    "synmedium": ({"K": "2·num_last, num_last ∈ {1, 5, 10}", "lr_z": [0.5, 1, 2, 3], "ratio": [1, 2, 5, 10]}, None),
}


def _derive(name: str):
    if name is None:
        return None
    if name == "random_P":
        from numerics.models.scan_snap.data import random_P

        return lambda: setting_quantities(random_P(0))
    return lambda: setting_quantities(layout(name))


for _flag, _values in READINGS.items():
    register_record(Record(f"ss.opt.{_flag}", PAPER, "option", "spec §2.9",
                           {"values": list(_values), "canonical": _values[0]}, REASONS.get(_flag, "")))

for _name, (_content, _layout) in CONFIGURATIONS.items():
    register_record(Record(f"ss.cfg.{_name}", PAPER, "configuration", "spec §2.10", _content,
                           f"layout {_layout} (its setting quantities are computed when selected)" if _layout else "",
                           derive=_derive(_layout)))
