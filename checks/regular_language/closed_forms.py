"""The closed forms and derive-and-verify items of the regular-language paper (spec §3–§4, ``rl.cf.*``).

Each item is built by ``derivations.regular_language`` (the printed displays as SymPy beside the same
quantities derived from the definitions: enumerated data, ``diff`` of the loss, exact GD steps,
series, orbits) and decided by the shared kind :class:`checks.kinds.ItemCheck`: displays compared
symbolically or at 30-digit random points, inequalities sampled (and certified on finite boxes),
statements over strings compared on every string. The canonical value of every reading flag decides
(spec §2.9); the other readings are reported beside the verdict.

The second, independent method of each item is in the package :mod:`checks.regular_language.cross_checks`
(one module per theme) when it exists there (the float64/numba model and its 60-digit twin, exact
enumeration, GD runs, the certified SVM, the CoT rollouts); its verdict joins the item's through
the item's ``extra`` parts.
"""

from __future__ import annotations

import math

import derivations.regular_language as R
from checks.claim import Claim
from checks.kinds import ItemCheck, deferred_build
from checks.registry import register
from derivations.domain import Domain, Interval
from derivations.regular_language import symbols as S

PAPER = "rl"

#: paper label of each item (spec §0.4)
LABELS = {
    "rl.cf.model_loss": "Sec. 3 (model, learning objective); App. A.1",
    "rl.cf.ep_label": "Sec. 3 (even pairs ⇔ first = last)",
    "rl.cf.gradient": "App. A.1, gradient display",
    "rl.cf.gradient_projections": "App. A.1, four-line projection display",
    "rl.cf.gradient_projections_b1": "proof of Lemma B.1 (and of Lemma C.1)",
    "rl.cf.gradient_norm_bounds": "App. A.1, ‖∇_u L_t‖ and ‖∇_W L_t‖ bounds",
    "rl.cf.softmax_lipschitz": "Lemma A.1 and the inequality after it",
    "rl.cf.logistic_taylor": "App. A, Eq. (2); proof of Lemma B.2",
    "rl.cf.effective_rate": "Sec. 3 schedule (derived)",
    "rl.cf.reduced_model": "derived (Lemmas B.1, C.1)",
    "rl.cf.first_step": "proofs of Lemmas B.2 and C.2, t = 1",
    "rl.cf.second_step": "proofs of Lemmas B.2 and C.2, t = 2",
    "rl.cf.lambda_inf_recursion": "derived λ → ∞ phase-1 map",
    "rl.cf.phase1_expansion": "derived (constants behind Thms 4.1, 5.1)",
    "rl.cf.w_norm_growth": "proof of Thm B.3",
    "rl.cf.separator_margins": "Prop. 4.3; proof of Prop. B.4",
    "rl.cf.max_margin": "Sec. 4.2 (u*_EP); Sec. 5.3 (u*_CoT); Lemma B.5",
    "rl.cf.phase2_constants": "App. B.2 'Parameter setup'; proof of Lemma B.5",
    "rl.cf.lemma_b5": "Lemma B.5 (statement and proof chain)",
    "rl.cf.direction_bound": "Lemma B.6; Thm 4.4",
    "rl.cf.loss_bound": "proof of Thm B.7; remark after Thm 4.5",
    "rl.cf.frozen_attention_limit": "derived (Thms 4.4, 4.5, 5.2, 5.3)",
    "rl.cf.cot_recurrences": "Sec. 5.1 (automaton, Alg. 1); Sec. 5.2 (CoT, Fig. 1)",
    "rl.cf.cot_stationarity": "derived (Sec. 5.2 observation)",
}

#: the parameters a user may pin, per item: the scalar symbols of its displays (a pin fixes the symbol
#: in every display and inequality of the item that has it; the model parameters u, W are sampled)
PINNABLE = {
    "rl.cf.model_loss": ("lam",),
    "rl.cf.gradient": ("lam",),
    "rl.cf.gradient_projections": ("lam",),
    "rl.cf.gradient_projections_b1": ("lam",),
    "rl.cf.gradient_norm_bounds": ("lam",),
    "rl.cf.softmax_lipschitz": ("lam",),
    "rl.cf.logistic_taylor": ("x", "xprime"),
    "rl.cf.effective_rate": ("eta", "lam"),
    "rl.cf.reduced_model": ("lam",),
    "rl.cf.first_step": ("eta", "lam"),
    "rl.cf.second_step": ("eta", "lam"),
    "rl.cf.lambda_inf_recursion": ("eta", "lam"),
    "rl.cf.phase1_expansion": ("tau",),
    "rl.cf.w_norm_growth": ("eta", "lam", "tau"),
    "rl.cf.separator_margins": ("lam",),
    "rl.cf.phase2_constants": ("eta", "lam", "U"),
    "rl.cf.lemma_b5": ("eta", "U"),
    "rl.cf.direction_bound": ("U",),
    "rl.cf.loss_bound": ("eta", "lam", "U"),
    "rl.cf.frozen_attention_limit": ("U",),
}

#: natural ranges of the pinnable parameters (a pinned value outside is refused by name)
RANGES = {
    "lam": Interval(0, math.inf),                      # λ > 0 (the softmax is of s/λ)
    "eta": Interval(0, math.inf),                      # η > 0
    "tau": Interval(0, math.inf, lo_open=False),       # τ = ηt >= 0
    "x": Interval(-math.inf, math.inf),
    "xprime": Interval(-math.inf, math.inf),
    "U": Interval(0, math.inf),                        # ‖u*‖ > 0
}
SYMBOLS = {"lam": S.lam, "eta": S.eta, "tau": S.tau, "x": S.x, "xprime": S.xp, "U": S.U}


def _domain(names: tuple[str, ...]) -> Domain:
    return Domain({SYMBOLS[n]: RANGES[n] for n in names})


def _extra(item_id: str):
    """The second method of an item (``cross_checks``), if it has one."""
    from checks.regular_language import cross_checks

    return cross_checks.CROSS_CHECKS.get(item_id)


def register_item(item_id: str, cost: float = 1.0) -> None:
    """Register one ``rl.cf.*`` item (kind ``formula``; statement: its builder's docstring)."""
    names = PINNABLE.get(item_id, ())
    check = ItemCheck(build=deferred_build(R, item_id), default_readings=dict(S.DEFAULT_READINGS), extra=_extra(item_id))
    doc = R.builder(item_id).__doc__ or ""
    register(Claim(item_id, PAPER, LABELS[item_id], "formula", check, statement=doc, label_alt="",
                   params=names, domain=_domain(names), doc=doc, cost=cost))


for _id in R.ITEMS:
    register_item(_id)

