"""The E, E' items of App. B.5 (Lemma 14, Lemma 16's identity, Eqns 91–92) on the random matrices of
``ss.cfg.randE``, entry by entry at 60 digits (:class:`checks.numeric_identity.IdentityItemCheck`).

Families: Lemma 14 on general symmetric E with |λ₁| < 1 (family c); Lemma 16 and Eqns 91–92 on
zero-diagonal E (families a and b, the E = FᵀF − I of Assumption 2). The quick budget compares 60-digit
values on 40 matrices per family and float64 NumPy values on 2 000 (the second method: an independent
implementation with ``numpy.linalg``); the full budget on 400 and 20 000.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from checks.claim import Claim
from checks.numeric_identity import Display, IdentityItemCheck
from checks.configurations import reading_params
from checks.registry import register
from derivations.scan_snap import matrices as X
from derivations.scan_snap.symbols import DEFAULT_READINGS
from numerics.models.scan_snap.matrices import random_E

PAPER = "ss"
EXACT_COUNT = {"quick": 40, "full": 400}
FLOAT_COUNT = {"quick": 2000, "full": 20000}


def _cases(seed: int, families: tuple[str, ...], count: int) -> list[X.Case]:
    out = []
    for family in families:
        for index, E in enumerate(random_E(family, count, seed)):
            out.append(X.Case(E.tolist(), label=f"randE {family} #{index} (K={len(E)})"))
    return out


def _entries(cases: list[X.Case], diagonal_only: bool) -> list[dict[str, Any]]:
    points = []
    for case in cases:
        for i in range(case.K):
            for j in ((i,) if diagonal_only else range(i, case.K)):
                points.append({"E": case, "i": i, "j": j})
    return points


def _families(ctx) -> dict[str, list[dict[str, Any]]]:
    return _families_at(ctx.seed, ctx.budget)


@cache
def _families_at(seed: int, budget: str) -> dict[str, list[dict[str, Any]]]:
    """The structured points of the three items, drawn once per process: the cases keep their eigen-decompositions
    and inverses, which the items would otherwise each recompute at 60 digits."""
    count = EXACT_COUNT[budget]
    general = _cases(seed, ("c",), count)
    zero_diagonal = _cases(seed, ("a", "b"), count // 2)
    return {"general": _entries(general, False), "zero_diagonal": _entries(zero_diagonal, True),
            "zero_diagonal_all": _entries(zero_diagonal, False),
            "eigen": [{"E": c, "i": i, "j": 0} for c in general[:10] for i in range(c.K)]}


def _lemma14_displays() -> list[Display]:
    out = [
        Display("eq76_neumann", "Eqn 76 (Neumann series)", X.neumann, X.inverse, "general",
                description="I + Σ(−1)ⁿEⁿ against (I + E)^{-1}"),
        Display("eq76_as_printed", "Eqn 76 (Σ(−Dⁿ) as printed)", X.eq76_as_printed, X.inverse, "general",
                description="I + Uᵀ(Σ_{n>=1}(−Dⁿ))U against (I + E)^{-1}"),
        Display("eq77", "Eqn 77", X.eq77, X.inverse, "general", description="I − UᵀD'U against (I + E)^{-1}"),
        Display("geometric_fact", "L730", X.geometric_fact, X.geometric_closed, "eigen",
                description="Σ(−λ)ⁿ = −λ/(1 + λ)"),
    ]
    for reading in X.EPRIME:
        out.append(Display(f"statement_inverse.{reading}", "Lemma 14", X.statement_inverse(reading), X.inverse,
                           "general", reading={"eprime": reading}, description="(I + E)^{-1} = I − E'"))
        out.append(Display(f"statement_spectral.{reading}", "Lemma 14", X.statement_spectral,
                           X.eprime_of(reading), "general", reading={"eprime": reading},
                           description="E' = UᵀD'U"))
    return out


def _lemma16_displays() -> list[Display]:
    out = [Display("E_ii_zero", "Eqn 79 (E_ii = 0)", X.diagonal, X.zero, "zero_diagonal", atol=1e-45,
                   description="the diagonal of E (zero for E = FᵀF − I)")]
    for u_reading in X.U_INDEX:
        out.append(Display(f"E_ii.{u_reading}", "Eqn 79", X.eq79_E_ii(u_reading), X.diagonal, "zero_diagonal",
                           reading={"u_index": u_reading}, atol=1e-45, description="Σ_k λ_k u_ik² against E_ii"))
        for reading in X.EPRIME:
            tag = {"u_index": u_reading, "eprime": reading}
            for name, printed in (("first", X.eq79_Ep_first), ("second", X.eq79_Ep_second),
                                  ("third", X.eq79_Ep_third)):
                out.append(Display(f"Ep_ii_{name}.{u_reading}.{reading}", "Eqn 79", printed(u_reading),
                                   X.eprime_diagonal(reading), "zero_diagonal", reading=tag, atol=1e-45,
                                   description=f"member {name} of the E'_ii chain against E'_ii"))
    return out


def _identity92_displays() -> list[Display]:
    out = []
    for reading in X.EPRIME:
        tag = {"eprime": reading}
        out += [
            Display(f"premise.{reading}", "L793", X.premise(reading), X.zero, "zero_diagonal_all", reading=tag,
                    atol=1e-45, description="(E − E' − EE')_ij = 0, every entry"),
            Display(f"eq91.{reading}", "Eqn 91", X.eq91_rhs(reading), X.eq91_lhs(reading), "zero_diagonal",
                    reading=tag, atol=1e-45, description="(EE')_nn = Σ_{k≠n}E_nkE'_nk + E_nnE'_nn"),
            Display(f"eq92.{reading}", "Eqn 92", X.eq92_lhs(reading), X.eq92_rhs(reading), "zero_diagonal",
                    reading=tag, atol=1e-45, description="Σ_{k≠n}E_nkE'_nk = −E'_nn"),
        ]
    return out


def _float64(keys: tuple[str, ...]):
    """Second method for the displays ``keys``: NumPy float64 (eigh, inv) on the float budget's matrices."""
    def run(ctx, displays) -> dict[str, Any]:
        return _float64_all(ctx, keys)
    return run


def _float64_all(ctx, keys: tuple[str, ...]) -> dict[str, Any]:
    """Max errors in float64 of the canonical displays (``eq77``, ``E_ii.column``, ``Ep_ii_third``, ``eq92``)
    and of the printed alternatives (``eq76_as_printed``, ``E_ii.row``, ``premise.appB1``) over the matrices."""
    count = FLOAT_COUNT[ctx.budget]
    worst: dict[str, float] = {}
    checks = 0
    for family in ("a", "b", "c"):
        for E in random_E(family, count // 3, ctx.seed + 1):
            K = len(E)
            lam, vec = np.linalg.eigh(E)
            order = np.argsort(-np.abs(lam))
            lam, Q = lam[order], vec[:, order]
            inv = np.linalg.inv(np.eye(K) + E)
            Ep = np.eye(K) - inv
            spectral = Q @ np.diag(lam / (1 + lam)) @ Q.T
            scale = max(1.0, np.max(np.abs(inv)))
            worst["eq77"] = max(worst.get("eq77", 0), np.max(np.abs(np.eye(K) - spectral - inv)) / scale)
            worst["eq76_as_printed"] = max(worst.get("eq76_as_printed", 0), np.max(np.abs(
                np.eye(K) + Q @ np.diag(-lam / (1 - lam)) @ Q.T - inv)) / scale)
            if family != "c":
                col = np.einsum("k,ik->i", lam, Q**2)
                row = np.einsum("k,ki->i", lam, Q**2)
                worst["E_ii.column"] = max(worst.get("E_ii.column", 0), np.max(np.abs(col)))
                worst["E_ii.row"] = max(worst.get("E_ii.row", 0), np.max(np.abs(row)))
                third = -np.einsum("k,ik->i", lam**2 / (1 + lam), Q**2)
                worst["Ep_ii_third"] = max(worst.get("Ep_ii_third", 0), np.max(np.abs(third - np.diag(Ep))))
                lhs = np.array([sum(E[n, k] * Ep[n, k] for k in range(K) if k != n) for n in range(K)])
                worst["eq92"] = max(worst.get("eq92", 0), np.max(np.abs(lhs + np.diag(Ep))))
                Ep_b1 = inv - np.eye(K)
                worst["premise.appB1"] = max(worst.get("premise.appB1", 0), np.max(np.abs(E - Ep_b1 - E @ Ep_b1)))
                worst["premise.lemma14"] = max(worst.get("premise.lemma14", 0), np.max(np.abs(E - Ep - E @ Ep)))
            checks += 1
    canonical = ("eq77", "E_ii.column", "Ep_ii_third", "eq92", "premise.lemma14")
    shown = {k: float(v) for k, v in worst.items() if k in keys}
    disagrees = [k for k, v in shown.items() if k in canonical and v > 1e-12]
    summary = f"float64 (NumPy) on {checks} matrices: " + ", ".join(
        f"{k} {'within' if k in canonical else 'off by up to'} {v:.1e}" for k, v in shown.items())
    return {"float64": shown, "summary": summary, "disagrees": disagrees}


def _register(item_id: str, label: str, displays, doc: str, keys: tuple[str, ...]) -> None:
    check = IdentityItemCheck(displays=displays, families=_families, default_readings=dict(DEFAULT_READINGS),
                              extra=_float64(keys))
    params = reading_params((d.reading for d in displays()), DEFAULT_READINGS)
    register(Claim(item_id, PAPER, label, "formula", check, statement=doc, doc=doc, params=params))


_register("ss.lemma14.inverse", "Lemma 14, Eqns 75–77", _lemma14_displays,
          "Lemma 14: (I + E)^{-1} = I − E', E' = UᵀD'U, λ'_i = λ_i/(1 + λ_i); (I + E)^{-1} = I + Σ(−1)ⁿEⁿ = "
          "I + Uᵀ(Σ(−Dⁿ))U = I − UᵀD'U (Eqns 75–77). E' per ss.opt.eprime.", ("eq77", "eq76_as_printed"))
_register("ss.lemma16.diag_identity", "Eqn 79 (equality part)", _lemma16_displays,
          "Eqn 79: E_ii = Σ_k λ_k u_ik² = 0 and E'_ii = Σ λ_k/(1+λ_k) u_ik² = Σ λ_k u_ik² − Σ λ_k²/(1+λ_k) u_ik² = "
          "−Σ λ_k²/(1+λ_k) u_ik², u_ik per ss.opt.u_index, E' per ss.opt.eprime.",
          ("E_ii.column", "Ep_ii_third", "E_ii.row"))
_register("ss.thm1.identity92", "Eqns 91–92", _identity92_displays,
          "From (I + E)(I − E') = I: E − E' − EE' = O; (EE')_nn = Σ_{k≠n} E_nk E'_nk + E_nn E'_nn (91); "
          "Σ_{k≠n} E_nk E'_nk = −E'_nn (92). E' per ss.opt.eprime.",
          ("premise.lemma14", "eq92", "premise.appB1"))
