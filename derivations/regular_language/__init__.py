"""Derivations of "How Transformers Learn Regular Language Recognition" (prefix ``rl``; spec regular-language.md).

Every closed-form and derive-and-verify item of spec §3 (``rl.cf.*``) has a builder returning a
:class:`derivations.core.Item` (whose ``predicates`` are exhaustive comparisons over finite sets,
:mod:`derivations.predicates`): the printed forms as SymPy (``stated``, with their
LaTeX), the same quantities derived from the definitions (``derived``: enumerated data, ``diff``
of the loss, exact GD steps, series), and inequalities on their natural regions.

Modules: ``symbols`` (symbols, LaTeX names, reading flags), ``data`` (strings, labels, weights),
``model`` (the transformer, loss, gradients), ``loss_gradient``, ``projections``, ``bounds``,
``early_steps``, ``phase1``, ``w_norm``, ``reduced``, ``phase2``, ``cot``, ``series``.
"""

from __future__ import annotations

from derivations.core import item_builder

#: spec id -> "module:builder" (built lazily: some builders enumerate hundreds of samples)
ITEMS = {
    "rl.cf.model_loss": "loss_gradient:item_model_loss",
    "rl.cf.ep_label": "loss_gradient:item_ep_label",
    "rl.cf.gradient": "loss_gradient:item_gradient",
    "rl.cf.gradient_projections": "projections:item_gradient_projections",
    "rl.cf.gradient_projections_b1": "projections:item_gradient_projections_b1",
    "rl.cf.gradient_norm_bounds": "bounds:item_gradient_norm_bounds",
    "rl.cf.softmax_lipschitz": "bounds:item_softmax_lipschitz",
    "rl.cf.logistic_taylor": "bounds:item_logistic_taylor",
    "rl.cf.effective_rate": "loss_gradient:item_effective_rate",
    "rl.cf.reduced_model": "reduced:item_reduced_model",
    "rl.cf.first_step": "early_steps:item_first_step",
    "rl.cf.second_step": "early_steps:item_second_step",
    "rl.cf.lambda_inf_recursion": "phase1:item_lambda_inf_recursion",
    "rl.cf.phase1_expansion": "phase1:item_phase1_expansion",
    "rl.cf.w_norm_growth": "w_norm:item_w_norm_growth",
    "rl.cf.separator_margins": "phase2:item_separator_margins",
    "rl.cf.max_margin": "phase2:item_max_margin",
    "rl.cf.phase2_constants": "phase2:item_phase2_constants",
    "rl.cf.lemma_b5": "phase2:item_lemma_b5",
    "rl.cf.direction_bound": "phase2:item_direction_bound",
    "rl.cf.loss_bound": "phase2:item_loss_bound",
    "rl.cf.frozen_attention_limit": "phase2:item_frozen_attention_limit",
    "rl.cf.cot_recurrences": "cot:item_cot_recurrences",
    "rl.cf.cot_stationarity": "cot:item_cot_stationarity",
}


def builder(item_id: str):
    """The function that builds item ``item_id`` (keyword arguments choose its sizes)."""
    return item_builder(ITEMS, __name__, item_id, "rl closed-form item")


def item(item_id: str, **options):
    """Build item ``item_id`` with its default (spec quick-budget) sizes, or ``options``."""
    return builder(item_id)(**options)
