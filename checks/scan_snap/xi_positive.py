r"""Theorem 1(a) (L148; L764), ``ss.thm1a.xi_positive``: ξ_n(t) = γ(t) Σ_{n'≠n} β_nn'(t) f_nᵀ(t)f_n'(t) > 0 for
every n and t.

γ > 0 (Lemma 6), so the sign of ξ_n is that of S_n = Σ_{n'≠n} β_nn' E_nn' (E = FᵀF − I). Decided on

(a) matrices: ``ss.cfg.randE`` families (a), (b) (S_n needs E only), Assumption 2 read at M = 10⁴, every
    ``ss.opt.beta`` reading (:func:`numerics.models.scan_snap.decoder.theorem1_coefficients`);
(b) T = ∞ SGD trajectories (level (ii), batch 1, ``iid_uniform``) of ``ss.cfg.K3_shared``, ``K3_own``,
    ``sym_multi_ct``, ``asym_2ct`` and ``thm_hyp`` (``ct1``, ``ct2``), every logged step, E and E' from the features
    f_n(Z(t)), reported apart for t < K² and t >= cK², c ∈ {1, 10, 100}; the reduced ODE (level (iii)) is part 2's;
(c) an isolated class (support disjoint from the others, outside Assumption 2): its row of E vanishes, so
    ξ_n = 0 exactly — the boundary where "> 0" needs the hypothesis.

Only points inside Assumption 2 decide (the theorem's hypothesis; at each logged Z for trajectories): the claim
holds when S_n > 0 at every one of them, for the canonical reading, and fails with the first counterexample.
"""

from __future__ import annotations

import math

import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status
from derivations.scan_snap.symbols import READINGS
from numerics.models.scan_snap import data
from numerics.models.scan_snap.decoder import eprime, theorem1_coefficients
from numerics.models.scan_snap.matrices import random_E
from numerics.models.scan_snap.sgd import train_ss
from numerics.train import LogSchedule

PAPER = "ss"
BETAS = READINGS["beta"]
#: configurations of (b) with their rates (spec §2.10)
TRAJECTORIES = {"K3_shared": (1.0, 0.1), "K3_own": (1.0, 0.1), "sym_multi_ct": (1.0, 0.1), "asym_2ct": (1.0, 0.1),
                "thm_hyp.ct1": (0.5, 0.05), "thm_hyp.ct2": (0.5, 0.05)}


def assumption2(E: np.ndarray, M: int) -> bool:
    """Whether Assumption 2 holds at E (:func:`numerics.models.scan_snap.data.assumption2`)."""
    return data.assumption2(E, M)[0]


def signs(E: np.ndarray, M: int, eprime_reading: str) -> dict[str, np.ndarray]:
    """S_n = Σ_{n'≠n} β_nn' E_nn' for every ``ss.opt.beta`` reading."""
    Ep = eprime(E, eprime_reading)
    off = E - np.diag(np.diag(E))
    return {reading: np.sum(theorem1_coefficients(Ep, reading, M)[1] * off, axis=1) for reading in BETAS}


def _matrices(ctx, eprime_reading: str) -> list[dict]:
    M, rows = 10**4, []
    for family in ("a", "b"):
        for index, E in enumerate(random_E(family, int(ctx.value("matrices")), ctx.seed)):
            S = signs(E, M, eprime_reading)
            rows.append({"family": family, "index": index, "K": len(E), "inside": assumption2(E, M),
                         **{f"min_S_{r}": float(S[r].min()) for r in BETAS}})
    return rows


def _trajectory(name: str, etas: tuple[float, float], steps: int, seed: int, eprime_reading: str) -> list[dict]:
    lay = data.layout(name)
    run = train_ss(lay, T=math.inf, batch=1, steps=steps, etaY=etas[0], etaZ=etas[1], optimizer="sgd",
                   seed=seed, log=LogSchedule(geometric=40), states="full" if lay.M <= 100 else "live")
    rows = []
    for k, step in enumerate(run.t):
        if "Z" in run.states:
            Z = run.states["Z"][k]
        else:  # live rows: the last tokens' rows of Z are the queries
            Z = np.zeros((lay.M, lay.M))
            for q, query in enumerate(run.meta["live"]["Z_queries"]):
                Z[query] = run.states["Z_live"][k][q]
        F = data.features(lay, Z)
        E = F.T @ F - np.eye(lay.K)
        S = signs(E, lay.M, eprime_reading)
        rows.append({"config": name, "t": int(step), "K": lay.K, "inside": assumption2(E, lay.M),
                     **{f"min_S_{r}": float(S[r].min()) for r in BETAS}})
    return rows


def _isolated(eprime_reading: str) -> dict:
    P = np.zeros((3, 12))
    P[0, [0, 1, 2]] = (0.2, 0.4, 0.4)
    P[1, [0, 3, 4]] = (0.2, 0.4, 0.4)
    P[2, [5, 6, 7]] = (0.3, 0.3, 0.4)  # disjoint from classes 0 and 1
    lay = data.Layout("isolated", P, (8, 8, 8), (9, 10, 11))
    F = data.features(lay)
    E = F.T @ F - np.eye(3)
    S = signs(E, lay.M, eprime_reading)
    return {"E_row_of_isolated_class": E[2].tolist(), "S_isolated": {r: float(S[r][2]) for r in BETAS},
            "inside": assumption2(E, lay.M)}


def check_xi_positive(ctx) -> Outcome:
    """Theorem 1(a): ξ_n > 0 for every n and t, decided inside Assumption 2 (module docstring)."""
    beta, eprime_reading = ctx.value("beta"), ctx.value("eprime")
    key = f"min_S_{beta}"
    matrices = _matrices(ctx, eprime_reading)
    steps = int(ctx.value("steps"))
    runs = [row for name, etas in TRAJECTORIES.items()
            for row in _trajectory(name, etas, steps, ctx.seed, eprime_reading)]
    isolated = _isolated(eprime_reading)
    inside = [r for r in matrices + runs if r["inside"]]
    outside = [r for r in matrices + runs if not r["inside"]]
    bad = [r for r in inside if r[key] <= 0]
    status = (Status.OUTSIDE if not inside else Status.FAILS if bad else Status.HOLDS)
    windows = {}
    for label, keep in (("t < K^2", lambda r: r["t"] < r["K"] ** 2),
                        *((f"t >= {c}K^2", lambda r, c=c: r["t"] >= c * r["K"] ** 2) for c in (1, 10, 100))):
        chosen = [r for r in runs if keep(r)]
        windows[label] = {reading: {"points": len(chosen), "positive": sum(r[f"min_S_{reading}"] > 0 for r in chosen),
                                    "inside_A2": sum(r["inside"] for r in chosen)} for reading in BETAS}
    others = {reading: sum(r[f"min_S_{reading}"] > 0 for r in inside) for reading in BETAS}
    summary = (f"S_n = Σ β_nn'E_nn' > 0 (β = {beta}) at {len(inside) - len(bad)}/{len(inside)} points inside "
               f"Assumption 2 ({sum(r['inside'] for r in matrices)} matrices of randE (a), (b), "
               f"{sum(r['inside'] for r in runs)} logged SGD states of {len(TRAJECTORIES)} configurations)"
               + (f"; first counterexample {bad[0]}" if bad else "")
               + f"; other readings: " + ", ".join(f"{k} {v}/{len(inside)}" for k, v in others.items() if k != beta)
               + "; outside Assumption 2, S_n > 0 at " + ", ".join(
                   f"{sum(r[f'min_S_{k}'] > 0 for r in outside)}/{len(outside)} ({k})" for k in BETAS)
               + f"; isolated class: ξ = "
               f"{isolated['S_isolated'][beta]:.3g} exactly (its row of E vanishes); reduced-ODE trajectories "
               f"(level (iii)) are part 2's")
    return Outcome(status, summary, {"matrices": matrices, "trajectories": runs, "windows": windows,
                                     "isolated_class": isolated, "beta": beta, "eprime": eprime_reading,
                                     "levels": {"ii": "T = ∞ SGD, batch 1, iid_uniform", "iii": "part 2"}})


register(Claim(
    "ss.thm1a.xi_positive", PAPER, "Theorem 1(a) (L148; L764)", "claim", check_xi_positive,
    params=(Param("beta", "leading", choices=BETAS, doc="ss.opt.beta: the coefficients β_nn' that decide"),
            Param("eprime", READINGS["eprime"][0], choices=READINGS["eprime"], doc="ss.opt.eprime"),
            Param("matrices", 200, doc="random E per family of ss.cfg.randE"),
            Param("steps", 3000, doc="T = ∞ SGD steps per configuration (batch 1)")),
    statement="(a) ξ_n(t) := γ(t) Σ_{n'≠n} β_nn'(t) f_nᵀ(t) f_n'(t) > 0 for any n ∈ [K] and any t.",
    doc=check_xi_positive.__doc__ or ""))
