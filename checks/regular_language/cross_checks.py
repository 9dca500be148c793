"""The second, numeric method of each ``rl.cf.*`` item, beside its SymPy derivation.

Each entry of :data:`CROSS_CHECKS` maps an item id to ``extra(ctx, item) -> dict`` (the hook of
:class:`checks.kinds.ItemCheck`): it evaluates the same quantities with an independent method —
the numba model and its 60-digit mpmath twin (:mod:`numerics.models.regular_language`), exact
enumeration, GD runs of the actual model through the one training driver, the certified SVM
(:mod:`numerics.svm`), the CoT rollouts — and returns its evidence, a ``summary`` line and the
names of the parts that ``disagrees`` with the derivation (which make the item inconclusive).

The checks live in two modules by theme: :mod:`.cross_checks_model` (the model, loss, gradients,
bounds, early steps, CoT) and :mod:`.cross_checks_dynamics` (reduction, phase-1 limits and
expansions, margins, the max-margin problem, phase-2 constants and bounds).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

CROSS_CHECKS: dict[str, Callable[..., dict[str, Any]]] = {}

for _name in ("cross_checks_model", "cross_checks_dynamics"):
    try:
        _module = importlib.import_module(f"checks.regular_language.{_name}")
    except ModuleNotFoundError as error:  # a theme not written yet
        if error.name != f"checks.regular_language.{_name}":
            raise
        continue
    CROSS_CHECKS.update(_module.CROSS_CHECKS)
