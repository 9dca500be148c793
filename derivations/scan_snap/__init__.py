"""Derivations of "Scan and Snap" (prefix ``ss``; spec scan-and-snap.md).

Every closed-form and derive-and-verify item of this part has a builder returning a
:class:`derivations.core.Item`: the printed displays as SymPy (``stated``) beside the same quantities
derived from the definitions (``derived``: Eqn 44 separated and integrated, Lambert W, ``dsolve`` of the
scalar surrogate, the softmax recursion written out, matrix algebra at concrete K).

Modules: ``symbols`` (symbols, LaTeX names, the setting options of spec §2.9), ``scalar`` (h, h*, γ, the
roots of Lemma 8), ``scalar_items`` (App. B.3 items), ``decoder`` (ζ, Lemma 5, Eqns 26–30, the
equal-overlap spectrum), ``theorem1`` (Eqns 86–89), ``matrices`` (E, E' of App. B.5
in mpmath, for the numeric-identity items), ``snap`` (Theorem 4's scalar surrogate), ``eq13`` (Eqn 13's
constants from Eqn 97).
"""

from __future__ import annotations

from derivations.core import item_builder

#: spec id -> "module:builder"
ITEMS = {
    "ss.appB1.zeta": "decoder:item_zeta",
    "ss.lemma5.w_solution": "decoder:item_w_solution",
    "ss.lemma5.proof_steps": "decoder:item_proof_steps",
    "ss.lemma3.modified_update": "decoder:item_modified_update",
    "ss.lemma6.implicit": "scalar_items:item_lemma6_implicit",
    "ss.lemma8.roots": "scalar_items:item_lemma8_roots",
    "ss.thm1.iota": "theorem1:item_iota",
    "ss.thm1.beta": "theorem1:item_beta",
    "ss.dv.thm1_coefficients": "theorem1:item_coefficients",
    "ss.lemma9.gamma_def": "scalar_items:item_gamma_def",
    "ss.lemma9.stage_identities": "scalar_items:item_stage_identities",
    "ss.lemma11.g_derivative": "scalar_items:item_g_derivative",
    "ss.thm4.z_solution": "snap:item_z_solution",
    "ss.thm4.xi_solution": "snap:item_xi_solution",
    "ss.thm4.B_integral": "snap:item_B_integral",
    "ss.thm4.gamma_integral": "snap:item_gamma_integral",
    "ss.thm4.B_closed": "snap:item_B_closed",
    "ss.dv.eq130_validity": "snap:item_eq130_validity",
    "ss.dv.eq13_constants": "eq13:item_eq13_constants",
    "ss.dv.lambertw": "scalar_items:item_lambertw",
    "ss.dv.gamma_stable": "scalar_items:item_gamma_stable",
    "ss.dv.gamma_peak": "scalar_items:item_gamma_peak",
    "ss.dv.balance_time": "scalar_items:item_balance_time",
    "ss.dv.cor1_exact_steps": "scalar_items:item_cor1_exact_steps",
    "ss.dv.equal_overlap_spectrum": "decoder:item_equal_overlap_spectrum",
    "ss.dv.lemma10_region": "scalar_items:item_dv_lemma10_region",
    "ss.dv.lemma11_factor": "scalar_items:item_lemma11_factor",
}


def builder(item_id: str):
    """The function that builds item ``item_id``."""
    return item_builder(ITEMS, __name__, item_id, "ss closed-form item")


def item(item_id: str, **options):
    """Build item ``item_id`` with its default sizes, or ``options``."""
    return builder(item_id)(**options)
