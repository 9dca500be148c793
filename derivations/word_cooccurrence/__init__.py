"""Derivations of "word co-occurrence" (prefix ``co``; spec word-cooccurrence.md).

Every closed-form and derive-and-verify item built so far has a builder returning a
:class:`derivations.core.Item`: the printed displays as SymPy beside the quantities derived from the
definitions. Modules: ``symbols`` (symbols, LaTeX names, reading flags), ``loss`` (the logistic loss),
``softmax`` (the softmax Jacobian), ``ratios`` (group-sum ratios, the loss ODE, Cor. F.2's ratio), ``quadratic`` (Phase 2's
group rates and Lemma F.6's quadratic).
"""

from __future__ import annotations

from derivations.core import item_builder

#: spec id -> "module:builder"
ITEMS = {
    "co.cf.loss_derivs": "loss:item_loss_derivs",
    "co.dv.loss_bounds": "loss:item_loss_bounds",
    "co.cf.softmax_jacobian": "softmax:item_softmax_jacobian",
    "co.cf.ratio_R": "ratios:item_ratio_R",
    "co.cf.eq12_balance": "ratios:item_eq12_balance",
    "co.cf.lossode_F8": "ratios:item_lossode_F8",
    "co.cf.corF_2_ratio": "ratios:item_corF_2_ratio",
    "co.cf.group_rates": "quadratic:item_group_rates",
    "co.cf.eq16_quadratic": "quadratic:item_eq16_quadratic",
    "co.dv.quadratic_exact": "quadratic:item_quadratic_exact",
}


def builder(item_id: str):
    """The function that builds item ``item_id``."""
    return item_builder(ITEMS, __name__, item_id, "co closed-form item")


def item(item_id: str, **options):
    """Build item ``item_id`` with its default sizes, or ``options``."""
    return builder(item_id)(**options)
