"""Second method of rl.cf.reduced_model: the numeric symmetry reduction against the full model.

The orbits of the label-preserving flips found from the numeric data against the derivation's;
reduced GD (numba, multiplicity-weighted steps, :mod:`numerics.models.regular_language.reduced`)
against full GD through the training driver at every step of G_RED-like runs, ties and
never-live coordinates tracked; the derivation's (1/|o|)∂L_red/∂θ_o against the numeric reduced
gradient.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from checks.claim import Context
from checks.regular_language.cross_checks._common import EPS, _pin_float
from checks.regular_language.cross_checks._dynamics import _data, _flat, _gd_every_step, _sym_data, _tag
from derivations.core import Item
from derivations.regular_language import reduced as RD
from derivations.regular_language import symbols as S
from numerics.models.regular_language import RLModel
from numerics.models.regular_language.reduced import ReducedModel, run_reduced_gd

#: a reduced and a full float64 run "agree to rounding" when their largest difference, relative to
#: the largest parameter at that step, stays below this (≈ 4500 ulp; a wrong reduction is off by O(1))
ROUNDING = 1e-12


# ============================================================================ rl.cf.reduced_model


def _reduced_gradients(item: Item) -> dict[str, dict[str, sp.Expr]]:
    """Map tag -> {orbit parameter: (1/|o|)∂L_red/∂θ_o as the derivation states it} (one member per orbit)."""
    out: dict[str, dict[str, sp.Expr]] = {}
    for f in item.formulas:
        if ".gradient." not in f.id:
            continue
        tag = f.id.rsplit(".", 1)[1]
        key = f.description.split("/∂")[1].split(" ")[0]  # "(1/|o|)∂L_red/∂<parameter> (|o| = …) vs …"
        out.setdefault(tag, {}).setdefault(key, f.stated)
    return out


@functools.lru_cache(maxsize=8)
def _lambdified_reduced(names: tuple[str, ...], exprs: tuple) -> Callable:
    from numerics.compile import float_function

    symbols = [S.lam, *[sp.Symbol(n, real=True) for n in names]]
    return float_function(list(exprs), symbols)


def _reduced_vs_full(model: ReducedModel, lam: float, eta: float, t0: int, steps: int) -> dict[str, Any]:
    """Reduced GD against full GD at every step: the deviation, the ties and the never-live coordinates."""
    orb = model.orbits
    start = time.perf_counter()
    _, red = run_reduced_gd(model, eta, (eta * lam, eta), t0, steps)
    red_s = time.perf_counter() - start
    start = time.perf_counter()
    full = _gd_every_step(model.data, lam, eta, t0, steps)
    full_s = time.perf_counter() - start
    embedded = red[:, orb.of.clip(0)] * (orb.of >= 0)
    scale = np.maximum(np.abs(full).max(axis=1), np.finfo(float).tiny)
    rel = np.abs(full - embedded).max(axis=1) / scale
    dead = float(np.abs(full[:, orb.of < 0]).max()) if np.any(orb.of < 0) else 0.0
    spread = np.array([[np.ptp(row[m]) for m in orb.members] for row in full[:: max(1, steps // 400)]])
    tie = spread.max(axis=0) / scale.max()
    return {"red": red, "max_rel_deviation": float(rel.max()),
            "max_rel_deviation_ulp": float(rel.max() / EPS),
            "at_step": int(np.argmax(rel)), "never_live_max_abs": dead,
            "tie_max_rel_ulp": float(tie.max() / EPS), "tie_worst_orbit": orb.names[int(np.argmax(tie))],
            "seconds": {"reduced": red_s, "full": full_s}}


def reduced_model(ctx: Context, item: Item) -> dict[str, Any]:
    """Check orbits, reduced GD and L_red of rl.cf.reduced_model against the numeric model.

    Orbits of the label-preserving flips from the numeric data against the derivation's; reduced GD
    (numba, multiplicity-weighted steps) against full GD at every step of G_RED-like runs (ties
    tracked); the derivation's (1/|o|)∂L_red/∂θ_o against the numeric reduced gradient.
    """
    lam = _pin_float(ctx, "lam") or 2.0
    eta, t0 = 0.1, 30
    steps = 2000 if ctx.quick else 20000
    cases = [("ep", 4, "2L0-1"), ("cot", 3, "2L0-1")]
    if not ctx.quick:
        cases += [("ep", 6, "2L0-1"), ("cot", 4, "2L0-1")]
    stated = _reduced_gradients(item)
    rng = np.random.default_rng([ctx.seed, 1])
    records, disagrees = [], []
    for task, n, flag in cases:
        data, ds = _data(task, n, flag), _sym_data(task, n, flag)
        tag = _tag(ds)
        model = ReducedModel(data, lam)
        orb = model.orbits
        derivation = {frozenset(_flat(s, data.dim) for s in o) for o in RD.orbits(ds)}
        numeric = {frozenset(int(i) for i in m) for m in orb.members}
        expected = data.L_max + sum(L + 1 for L in range(2, data.L_max + 1))
        rec: dict[str, Any] = {"data": tag, "lam": lam, "eta": eta, "t0": t0, "steps": steps, "orbits": orb.n,
                               "spec_count": expected, "orbits_equal_derivation": numeric == derivation,
                               "flips": [list(f) for f in orb.flips],
                               "classes_consistent": model.table.consistent}
        if numeric != derivation:
            disagrees.append(f"orbits.{tag}")
        if orb.n != expected:
            disagrees.append(f"size.{tag}")
        comparison = _reduced_vs_full(model, lam, eta, t0, steps)
        red = comparison.pop("red")
        rec.update(comparison)
        if comparison["max_rel_deviation"] > ROUNDING:
            disagrees.append(f"gd_equivalence.{tag}")
        if comparison["never_live_max_abs"] != 0.0:
            disagrees.append(f"never_live.{tag}")
        if tag in stated:
            names = tuple(orb.names)
            fn = _lambdified_reduced(names, tuple(stated[tag].get(nm, sp.nan) for nm in names))
            points = [red[k] for k in sorted({1, 10, t0, t0 + 1, min(1000, steps), steps})]
            points += [rng.normal(0.0, 1.0, orb.n) for _ in range(3)]
            worst = 0.0
            for theta in points:
                want = model.loss_grad(theta)[1] / orb.sizes
                got = np.array(fn(lam, *theta), dtype=float)
                worst = max(worst, float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-300)))
            rec["derivation_gradient_max_rel_diff"] = worst
            if not worst <= 1e-11:
                disagrees.append(f"reduced_gradient.{tag}")
        records.append(rec)
    speed = None
    if not ctx.quick:
        model = ReducedModel(_data("ep", 6), lam)
        start = time.perf_counter()
        run_reduced_gd(model, eta, (eta * lam, eta), 100, 10**7, every=10**7)
        seconds = time.perf_counter() - start
        full_model = RLModel(_data("ep", 6), lam)
        theta = full_model.zeros()
        start = time.perf_counter()
        for _ in range(2000):
            full_model.gradient(theta)
        per_full = (time.perf_counter() - start) / 2000
        speed = {"reduced_1e7_steps_s": seconds, "reduced_ns_per_step": seconds / 1e7 * 1e9,
                 "full_gradient_us_per_call": per_full * 1e6,
                 "ratio_full_over_reduced": per_full / (seconds / 1e7)}
    same = sum(r["orbits_equal_derivation"] for r in records)
    sizes = ", ".join(str(r["orbits"]) for r in records)
    summary = (f"numeric orbits = derivation's in {same}/{len(records)} data sets ({sizes} parameters); "
               f"reduced vs full GD over {steps} steps: max |Δ| = "
               f"{max(r['max_rel_deviation_ulp'] for r in records):.1f} ulp of the largest "
               f"parameter; ties within {max(r['tie_max_rel_ulp'] for r in records):.1f} ulp")
    if speed:
        summary += f"; 10⁷ reduced steps in {speed['reduced_1e7_steps_s']:.1f} s"
    return {"reduced_vs_full": records, "speed": speed, "summary": summary, "disagrees": disagrees}
