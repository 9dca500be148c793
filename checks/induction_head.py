"""The induction-head paper (prefix ``ih``) as checks: every ``ih.cf.*`` closed form.

Paper: Wang, Yu, E, Wu (arXiv:2410.11474), workshop version [W] and full version [F];
specification ``shared/spec/induction-head.md``. Each closed-form item compares every printed
display with the toolkit's own derivation (``derivations.induction_head``) and, for the
losses, with a Monte-Carlo estimate of the defining expectation (the second, independent
method: |MC - closed form| <= 4 SE at fixed seeds).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from checks.claim import Claim, Context
from checks.kinds import ItemCheck, MonteCarloCheck
from checks.registry import register
from derivations.induction_head import four_gram, ih_head
from derivations.induction_head import symbols as S
from derivations.domain import Domain

PAPER = "ih"
K_SE = 4.0


def _mc_size(ctx: Context, quick: int, full: int) -> int:
    return quick if ctx.quick else full


def _estimate(draw, integrand, n: int, seed: int, params: tuple, guard=None):
    from numerics.montecarlo import MonteCarlo

    def unpacked(inputs, prm):
        return integrand(inputs, *prm)

    return MonteCarlo(draw, unpacked, n=n, seed=seed, second_moment_finite=guard).estimate(params)


def _record(point: dict[str, Any], estimate, printed: float, derived: float) -> dict[str, Any]:
    return {
        **point,
        "mc_mean": estimate.mean,
        "mc_se": estimate.se,
        "n": estimate.n,
        "printed": printed,
        "derived": derived,
        "z_printed": (estimate.mean - printed) / estimate.se if estimate.se else float("inf"),
        "z_derived": (estimate.mean - derived) / estimate.se if estimate.se else float("inf"),
        "agrees_with_printed": estimate.agrees_with(printed, K_SE),
        "agrees_with_derived": estimate.agrees_with(derived, K_SE),
    }


def _evaluate(expr: sp.Expr, point: dict[sp.Symbol, float]) -> float:
    with mpmath.workdps(30):
        return float(sp.lambdify(list(point), expr, modules=["mpmath"])(*[mpmath.mpf(v) for v in point.values()]))


def _points(ctx: Context, grid: dict[str, list], quick_take: int) -> list[dict[str, Any]]:
    """The Monte-Carlo grid, with user-pinned parameters replacing their axis; quick runs take a subset."""
    axes = {name: ([ctx.params[name]] if ctx.params.get(name) is not None else values) for name, values in grid.items()}
    from itertools import product

    points = [dict(zip(axes, combo, strict=True)) for combo in product(*axes.values())]
    if ctx.quick and len(points) > quick_take:
        step = len(points) / quick_take
        points = [points[int(i * step)] for i in range(quick_take)]
    return points


# ----------------------------------------------------------------------------- Monte-Carlo cross-checks


def mc_L_G4(law: str) -> Callable[[Context], list[dict[str, Any]]]:
    """Eq. (7) against ½E(g* x_{L-2} - g Σ π_s x_{s-1})² by Monte-Carlo, per head-1 reading."""

    def run(ctx: Context) -> list[dict[str, Any]]:
        from numerics.models.induction_head import g4_loss_samples, token_sampler

        grid = {"p": [0.01, 0.5, 2.0, 6.0], "g": [0.01, 0.3, 0.6], "L": [5, 40, 400], "alpha": [1.0]}
        out = []
        for point in _points(ctx, grid, 4):
            L = int(point["L"])
            n = _mc_size(ctx, 100_000 if L < 100 else 20_000, 2_000_000 if L < 100 else 200_000)
            for reading, last in (("canonical", L - 1), ("literal", L - 2)):
                est = _estimate(token_sampler(L, law), g4_loss_samples, n, ctx.seed,
                                (point["p"], point["g"], point["alpha"], last))
                subs = {S.p: point["p"], S.g: point["g"], S.alpha: point["alpha"], S.L: L}
                printed = _evaluate(four_gram.L_G4_printed(), subs)
                derived = _evaluate(four_gram.L_G4_derived(reading), subs)
                out.append({"reading": reading, "tokens": law, **_record(point, est, printed, derived)})
        return out

    return run


def mc_L_IH2(law: str) -> Callable[[Context], list[dict[str, Any]]]:
    """Eq. (10) against the exp-simplified expectation by Monte-Carlo (guarded: 16w⁴, 16w*⁴ < 1)."""

    def run(ctx: Context) -> list[dict[str, Any]]:
        from numerics.models.induction_head import ih_exp_loss_samples, token_sampler

        grid = {"L": [10, 40], "alpha": [1.0], "wstar": [0.3, 0.49],
                "wh": [(0.01, 0.01), (0.2, 0.5), (0.3, 0.6), (0.49, 0.5)]}
        if ctx.params.get("w") is not None or ctx.params.get("h") is not None:
            grid["wh"] = [(ctx.params.get("w") or 0.3, ctx.params.get("h") or 0.5)]
        out = []
        for point in _points(ctx, grid, 4):
            L = int(point["L"])
            w, h = point.pop("wh")
            point.update(w=w, h=h)
            n = _mc_size(ctx, 200_000, 2_000_000)
            derived_forms = {
                "canonical": ih_head.L_IH2_derived("canonical", law),
                "literal": ih_head.L_IH2_derived("literal", law),
            }
            for reading, last in (("canonical", L - 1), ("literal", L - 2)):
                guard = _ih_guard if law == "gaussian" else None
                est = _estimate(token_sampler(L, law), ih_exp_loss_samples, n, ctx.seed,
                                (w, h, point["alpha"], point["wstar"], last), guard)
                subs = {S.w: w, S.h: h, S.alpha: point["alpha"], S.wstar: point["wstar"], S.L: L}
                printed = _evaluate(ih_head.eq10_printed(), subs)
                derived = _evaluate(derived_forms[reading], subs)
                out.append({"reading": reading, "tokens": law, **_record(point, est, printed, derived)})
        return out

    return run


def _ih_guard(params: tuple) -> tuple[bool, str]:
    """Plain Monte-Carlo of the exp-simplified IH loss has finite variance only for 16w⁴, 16w*⁴ < 1."""
    w, _, _, wstar, _ = params
    if 16 * w**4 >= 1 or 16 * wstar**4 >= 1:
        return False, f"16*w**4 < 1 and 16*wstar**4 < 1 needed (w={w}, wstar={wstar})"
    return True, ""


def mc_lemma7(ctx: Context) -> list[dict[str, Any]]:
    """Lemma 7 by 1-D quadrature in Y (every a in (-1, 1)) and guarded plain Monte-Carlo (|a| < 1/2)."""
    from numerics.models.induction_head import lemma7_samples

    values = [ctx.params["a"]] if ctx.params.get("a") is not None else [-0.9, -0.45, 0.0, 0.3, 0.45, 0.9]
    out = []
    for a in values:
        derived = float((1 - a * a) ** -0.5)
        quad = float(mpmath.quad(lambda y: mpmath.npdf(y) * mpmath.exp(a * a * y * y / 2), [-mpmath.inf, mpmath.inf]))
        record: dict[str, Any] = {"a": a, "quadrature": quad, "derived": derived,
                                  "quadrature_rel_gap": abs(quad - derived) / derived}
        if abs(a) < 0.5:
            est = _estimate(lambda rng, size: rng.standard_normal((size, 3)), lemma7_samples,
                            _mc_size(ctx, 200_000, 2_000_000), ctx.seed, (a,),
                            lambda prm: (abs(prm[0]) < 0.5, f"|a| < 1/2 needed for a finite variance (a={prm[0]})"))
            record.update(_record({}, est, derived, derived))
        else:
            record.update(agrees_with_derived=record["quadrature_rel_gap"] < 1e-10,
                          monte_carlo="refused: E[(exp(aXY)Z²)²] is infinite for |a| >= 1/2")
        record.setdefault("agrees_with_derived", record["quadrature_rel_gap"] < 1e-10)
        record["agrees_with_derived"] = bool(record["agrees_with_derived"] and record["quadrature_rel_gap"] < 1e-10)
        out.append(record)
    return out


def mc_lemma8(ctx: Context) -> list[dict[str, Any]]:
    """||π||² as the probability that two independent draws from the softmax coincide."""
    from numerics.models.induction_head import coincidence_samples

    grid = {"p": [0.05, 0.5, 2.0], "L": [6, 40]}
    out = []
    for point in _points(ctx, grid, 3):
        L = int(point["L"])
        for reading, first, last in (("as_printed", 1, L - 1), ("canonical", 2, L - 1)):
            est = _estimate(lambda rng, size: rng.random((size, 2)), coincidence_samples,
                            _mc_size(ctx, 200_000, 2_000_000), ctx.seed, (point["p"], first, last, L))
            derived = sum(np.exp(-2 * point["p"] * (L - 1 - np.arange(first, last + 1)))) / sum(
                np.exp(-point["p"] * (L - 1 - np.arange(first, last + 1)))) ** 2
            printed = _evaluate(S.M_closed(2 * S.p) / S.M_closed(S.p) ** 2, {S.p: point["p"], S.L: L})
            out.append({"range": reading, **_record(point, est, printed, float(derived))})
    return out


# ----------------------------------------------------------------------------- registration


def _register(claim_id: str, label: str, label_alt: str, check: ItemCheck, symbols: tuple, domain: Domain,
              statement: str = "") -> None:
    check.default_readings = S.DEFAULT_READINGS
    defaults = {sym.name: None for sym in symbols}
    register(Claim(claim_id, PAPER, label, "formula", check, statement=statement or check.build.__doc__ or "",
                   label_alt=label_alt, defaults=defaults, domain=domain, doc=check.build.__doc__ or ""))


EQ10_DOMAIN = S.domain(S.L, S.w, S.wstar, S.h, S.alpha, constraints=S.EQ10_CONSTRAINTS)

_register("ih.cf.M", "[W] C.2 Function II; C.3.1", "[F] App. B; C.1; Lemma D.4",
          ItemCheck(four_gram.item_M), (S.L, S.p), S.domain(S.L, S.p))
_register("ih.cf.m", "[W] C.2 Function II; C.3.1", "[F] App. B; C.1",
          ItemCheck(four_gram.item_m), (S.L, S.p), S.domain(S.L, S.p))
_register("ih.cf.softmax_derivative", "[W] C.2 Function III", "[F] App. B",
          ItemCheck(four_gram.item_softmax_derivative), (S.L, S.p), S.domain(S.L, S.p))
_register("ih.cf.lemma8", "[W] Lemma 8", "[F] Lemma D.4",
          ItemCheck(four_gram.item_lemma8, [MonteCarloCheck("coincidence", mc_lemma8)]), (S.L, S.p),
          S.domain(S.L, S.p))
_register("ih.cf.ratios", "[W] C.3.1 Part I", "[F] C.1 Part I",
          ItemCheck(four_gram.item_ratios), (S.L, S.p), S.domain(S.L, S.p))
_register("ih.cf.L_G4", "[W] Eq. (7)", "[F] Eq. (19)",
          ItemCheck(four_gram.item_L_G4, [MonteCarloCheck("gaussian", mc_L_G4("gaussian")),
                                          MonteCarloCheck("boolean", mc_L_G4("boolean"))]),
          (S.L, S.p, S.g, S.alpha), S.domain(S.L, S.p, S.g, S.alpha))
_register("ih.cf.flow_pg", "[W] C.3.1", "[F] C.1",
          ItemCheck(four_gram.item_flow_pg), (S.L, S.p, S.g, S.alpha), S.domain(S.L, S.p, S.g, S.alpha))
_register("ih.cf.lemma7", "[W] Lemma 7", "[F] Lemma D.3",
          ItemCheck(ih_head.item_lemma7, [MonteCarloCheck("quadrature_and_mc", mc_lemma7)]), (S.a,),
          S.domain(S.a))
_register("ih.cf.L_IH2", "[W] C.3.2, Eq. (10)", "[F] C.2, Eq. (22)",
          ItemCheck(ih_head.item_L_IH2, [MonteCarloCheck("gaussian", mc_L_IH2("gaussian"))]),
          (S.L, S.w, S.wstar, S.h, S.alpha), EQ10_DOMAIN)
_register("ih.cf.flow_wh", "[W] C.3.2", "[F] C.2",
          ItemCheck(ih_head.item_flow_wh), (S.L, S.w, S.wstar, S.h, S.alpha), EQ10_DOMAIN)
_register("ih.cf.w_circ", "[W] C.3.2 (P1.3), Eq. (11)", "[F] C.2, Eq. (23)",
          ItemCheck(ih_head.item_w_circ), (S.wstar,), S.domain(S.wstar))
_register("ih.cf.R", "[W] C.3.2 Part II", "[F] C.2",
          ItemCheck(ih_head.item_R), (S.wstar,), S.domain(S.wstar))
