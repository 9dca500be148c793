"""The second, numeric method of each ``rl.cf.*`` item, beside its SymPy derivation.

Each entry of :data:`CROSS_CHECKS` maps an item id to ``extra(ctx, item) -> dict`` (the hook of
:class:`checks.kinds.ItemCheck`): it evaluates the same quantities with an independent method —
the numba model and its 60-digit mpmath twin (:mod:`numerics.models.regular_language`), exact
enumeration, GD runs of the actual model through the one training driver, the certified SVM
(:mod:`numerics.svm`), the CoT rollouts — and returns its evidence, a ``summary`` line and the
names of the parts that ``disagrees`` with the derivation (which make the item inconclusive).

One module per theme, named after the derivation module that builds its items
(``derivations.regular_language``): :mod:`.loss_gradient`, :mod:`.projections`, :mod:`.bounds`,
:mod:`.early_steps` and :mod:`.cot` (the model, loss, gradients, bounds, early steps, CoT; their
evidence under ``second_method``), :mod:`.reduced`, :mod:`.phase1`, :mod:`.w_norm`,
:mod:`.phase2_margins` and :mod:`.phase2_bounds` (reduction, phase-1 limits and expansions,
margins, the max-margin problem, phase-2 constants and bounds). Shared helpers: :mod:`._common`
(seeds, random points, comparisons with the derivation, the model at one point) and
:mod:`._dynamics` (GD configurations and their cached runs, limits, the certified max margin).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checks.regular_language.cross_checks.bounds import (
    gradient_norm_bounds,
    logistic_taylor,
    softmax_lipschitz,
)
from checks.regular_language.cross_checks.cot import cot_recurrences, cot_stationarity
from checks.regular_language.cross_checks.early_steps import first_step, second_step
from checks.regular_language.cross_checks.loss_gradient import effective_rate, ep_label, gradient, model_loss
from checks.regular_language.cross_checks.phase1 import lambda_inf_recursion, phase1_expansion
from checks.regular_language.cross_checks.phase2_bounds import (
    direction_bound,
    lemma_b5,
    loss_bound,
    phase2_constants,
)
from checks.regular_language.cross_checks.phase2_margins import (
    frozen_attention_limit,
    max_margin,
    separator_margins,
)
from checks.regular_language.cross_checks.projections import projections
from checks.regular_language.cross_checks.reduced import reduced_model
from checks.regular_language.cross_checks.w_norm import w_norm_growth

CROSS_CHECKS: dict[str, Callable[..., dict[str, Any]]] = {
    "rl.cf.model_loss": model_loss,
    "rl.cf.ep_label": ep_label,
    "rl.cf.gradient": gradient,
    "rl.cf.gradient_projections": projections,
    "rl.cf.gradient_projections_b1": projections,
    "rl.cf.gradient_norm_bounds": gradient_norm_bounds,
    "rl.cf.softmax_lipschitz": softmax_lipschitz,
    "rl.cf.logistic_taylor": logistic_taylor,
    "rl.cf.effective_rate": effective_rate,
    "rl.cf.reduced_model": reduced_model,
    "rl.cf.first_step": first_step,
    "rl.cf.second_step": second_step,
    "rl.cf.lambda_inf_recursion": lambda_inf_recursion,
    "rl.cf.phase1_expansion": phase1_expansion,
    "rl.cf.w_norm_growth": w_norm_growth,
    "rl.cf.separator_margins": separator_margins,
    "rl.cf.max_margin": max_margin,
    "rl.cf.phase2_constants": phase2_constants,
    "rl.cf.lemma_b5": lemma_b5,
    "rl.cf.direction_bound": direction_bound,
    "rl.cf.loss_bound": loss_bound,
    "rl.cf.frozen_attention_limit": frozen_attention_limit,
    "rl.cf.cot_recurrences": cot_recurrences,
    "rl.cf.cot_stationarity": cot_stationarity,
}
