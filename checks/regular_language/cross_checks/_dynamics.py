"""Shared machinery of the dynamics second methods: GD configurations and runs, limits, the max margin.

The dynamics hooks (:mod:`.reduced`, :mod:`.phase1`, :mod:`.w_norm`, :mod:`.phase2_margins`,
:mod:`.phase2_bounds`; spec §3–§4, §8) evaluate what their item's SymPy derivation states with
an independent method — GD runs of the numba model through the one training driver, the numeric
symmetry reduction (:mod:`numerics.models.regular_language.reduced`), the λ → ∞ flow integrated
from the full model's own gradient, 60-digit attention features and the certified SVM — and
return evidence, a ``summary`` line and the parts that ``disagrees`` with the derivation. Every
"→" statement (λ → ∞, τ → 0, t → ∞) is decided by :func:`checks.asymptotics.limit_of_ratio` on a
sweep toward the limit (:func:`_limit`), never at one point; a ratio the sweep cannot decide is
reported as ``undecided`` (the second method then supports nothing there, and the summary says
so), and only a decided contradiction is a disagreement.

Configurations follow the spec's grids (§2.10): G_RED, G_LIM, G_EXPN, G_EP, G_CoT, G_SVM, G_X,
G_FROZEN; the quick budget runs the subset named in each hook, the full budget more. Runs, flows,
SVMs (:func:`_max_margin`) and frozen runs are cached here, per process, so the hooks share them.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from checks.asymptotics import Asymptotic, limit_of_ratio
from checks.claim import Context
from checks.regular_language.cross_checks._common import DPS, _pin_float
from derivations.core import Item
from derivations.errors import NumericalTrouble
from derivations.regular_language import data as D
from derivations.regular_language import model as M
from derivations.regular_language import phase1 as P
from numerics.models.regular_language import RLModel, class_features_mp, cot_data, ep_data, features_mp
from numerics.models.regular_language.gd import gd_groups
from numerics.models.regular_language.reduced import frozen_gd, limit_flow, orbits
from numerics.svm import hard_margin_svm, kkt_residuals
from numerics.train import train

TAU_ZERO = Asymptotic("tau", "0", "algebraic")


# ============================================================================ configurations and runs


@dataclass(frozen=True)
class Run:
    """One GD configuration of the paper's schedule: EP (``n`` = L_max) or CoT (``n`` = L0, ``flag``)."""

    task: str
    n: int
    lam: float
    eta: float
    t0: int
    flag: str = "2L0-1"

    @property
    def data(self):
        """The enumerated data set (numerics)."""
        return _data(self.task, self.n, self.flag)

    @property
    def name(self) -> str:
        """E.g. ``EP L_max=6 λ=36 η=0.01 t0=17``."""
        base = f"EP L_max={self.n}" if self.task == "ep" else f"CoT L0={self.n} {self.flag}"
        return f"{base} λ={self.lam:g} η={self.eta:g} t0={self.t0}"

    def pinned(self, lam: float | None, eta: float | None) -> Run:
        """Return the run at a pinned λ and/or η (a pinned η keeps ηt0, the phase-1 horizon in τ)."""
        out = self if lam is None else replace(self, lam=float(lam))
        if eta is not None:
            out = replace(out, eta=float(eta), t0=max(1, round(self.eta * self.t0 / eta)))
        return out


@functools.cache
def _data(task: str, n: int, flag: str = "2L0-1"):
    return ep_data(n) if task == "ep" else cot_data(n, cot_max_len=flag)


@functools.cache
def _sym_data(task: str, n: int, flag: str = "2L0-1"):
    return D.ep_dataset(n) if task == "ep" else D.cot_dataset(n, flag)


def _g_ep(lams=(36.0, 360.0), etas=(0.01, 0.002)) -> list[Run]:
    return [Run("ep", 6, lam, eta, round(c / (eta * 6))) for lam in lams for eta in etas for c in (1, 3)]


G_SVM_EP = [Run("ep", 6, lam, 0.01, t0) for lam in (36.0, 360.0, 3600.0) for t0 in (17, 50)]
G_X_EP = [Run("ep", 6, lam, 0.1, 100) for lam in (2.0, 10.0, 18.0)]
G_COT = [Run("cot", 4, lam, 0.01, t0, flag) for lam in (49.0, 490.0)
         for flag, t0 in (("2L0-1", 43), ("2L0-2", 50))]
G_X_COT = [Run("cot", 4, 2.0, 0.1, 100, flag) for flag in ("2L0-1", "2L0-2")]


def _runs(ctx: Context, runs: Sequence[Run]) -> list[Run]:
    lam, eta = _pin_float(ctx, "lam"), _pin_float(ctx, "eta")
    return list(dict.fromkeys(r.pinned(lam, eta) for r in runs))


def _flat(symbol: sp.Symbol, d: int) -> int:
    """Return the flat index of θ of a derivation symbol u_ℓc, W_ℓc_Lc' or mu_ℓ (its a-member)."""
    name = symbol.name
    if name.startswith("mu_"):
        return M.idx(int(name[3:]), "a")
    if name.startswith("u_"):
        return M.idx(int(name[2:-1]), name[-1])
    (kp, kc), (qp, qc) = P.key_query(symbol)
    return d + M.idx(kp, kc) * d + M.idx(qp, qc)


def _tag(ds) -> str:
    return ds.name.replace(" ", "")


def _gd(data, lam: float, eta: float, t0: int, steps: int, log=1, observers=None):
    model = RLModel(data, lam)
    return train(model.zeros(), model.gradient, groups=gd_groups(model, eta, t0), optimizer="gd", steps=steps,
                 log=log, states={"theta": (slice(0, model.size), (model.size,))}, observers=observers)


def _gd_every_step(data, lam: float, eta: float, t0: int, steps: int) -> np.ndarray:
    return _gd(data, lam, eta, t0, steps)["theta"]


@functools.lru_cache(maxsize=256)
def _phase1(run: Run) -> np.ndarray:
    """Return θ_0..θ_{t0} of the run (every step), read-only."""
    out = _gd_every_step(run.data, run.lam, run.eta, run.t0, run.t0)
    out.setflags(write=False)
    return out


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def _limit(x, r, variable: Asymptotic, expected: float, rel_err: float, name: str) -> dict[str, Any]:
    """Decide the limit of ``r`` (limit_of_ratio) and whether it is ``expected``: a record with a verdict."""
    x, r = np.asarray(x, dtype=float), np.asarray(r, dtype=float)
    if np.all(r < 0):
        return {"quantity": name, "verdict": "disagrees", "x": x.tolist(), "ratio": r.tolist(),
                "reason": "opposite sign at every point of the sweep"}
    decision = limit_of_ratio(x, r, variable=variable, rel_err=rel_err)
    record = {"quantity": name, "x": x.tolist(), "ratio": r.tolist(), "behaviour": decision.behaviour,
              "reason": decision.reason, "r_inf": decision.r_inf,
              "r_inf_interval": list(decision.r_inf_interval), "correction": decision.correction}
    if decision.behaviour == "limit":
        lo, hi = decision.r_inf_interval
        record["verdict"] = "agrees" if lo <= expected <= hi else "disagrees"
    elif decision.behaviour in ("to_zero", "to_infinity"):
        record["verdict"] = "disagrees"
    else:
        record["verdict"] = "undecided"
    return record


def _tally(records: Sequence[dict]) -> dict[str, int]:
    out = {"agrees": 0, "disagrees": 0, "undecided": 0}
    for r in records:
        out[r["verdict"]] += 1
    return out


def _at(expr: sp.Expr, values: dict[sp.Symbol, Any]) -> float:
    """Evaluate a derivation's expression at concrete numbers (30 digits)."""
    point = {s: (int(v) if s.is_integer else sp.Float(v, 30)) for s, v in values.items()}
    return float(sp.N(expr.xreplace(point), 30))


def _formula(item: Item, suffix: str):
    return next(f for f in item.formulas if f.id.endswith(suffix))


# ============================================================================ the λ → ∞ flow (shared)


def _taus(ctx: Context) -> list[float]:
    tau = _pin_float(ctx, "tau")
    if tau:
        return [tau / 2**k for k in range(5)]
    return [0.1, 0.05, 0.025, 0.0125, 0.00625] + ([] if ctx.quick else [0.2, 0.003125])


@functools.lru_cache(maxsize=16)
def _flow(task: str, n: int, flag: str, taus: tuple[float, ...], substeps: int) -> np.ndarray:
    return limit_flow(_data(task, n, flag), list(taus), substeps)


# ============================================================================ max margin (shared)


@dataclass(frozen=True)
class MaxMargin:
    """The certified max-margin problem at W_{t0} of a run, reduced, with its full-form certificate."""

    run: Run
    norm: mpmath.mpf            # ‖u*‖ = √2‖m*‖
    m: tuple                    # m*
    keys: tuple                 # the classes (term, L, y), one row each
    support: tuple              # classes with a positive multiplier
    result: Any                 # numerics.svm.MaxMarginResult of the reduced problem
    tie_spread: float           # largest spread inside a W orbit at t0 (relative to max |W|)
    full_kkt_log10: dict        # KKT residuals of the embedded u* and spread multipliers on the full rows
    rows_float: np.ndarray      # the reduced rows y_c φ_c, rounded to float64
    weights: np.ndarray         # class weights
    W_sym: np.ndarray           # W_{t0} with every orbit set to its mean (exactly G-fixed)

    @property
    def U(self) -> float:
        """‖u*‖ as a float."""
        return float(self.norm)

    @property
    def u_star(self) -> np.ndarray:
        """u* in R^d (u*(ℓ, a) = u*(ℓ, b) = m_ℓ), float64."""
        return np.repeat(np.array([float(x) for x in self.m]), 2)


@functools.lru_cache(maxsize=64)
def _max_margin(run: Run) -> MaxMargin:
    """Solve the reduced max-margin problem at W_{t0} and certify √2‖m*‖ on the full problem.

    The full problem's KKT conditions hold for u*(ℓ, ·) = m*_ℓ with the class multipliers spread over
    the class members: Σ_{n in class} z_n = 2^{L-2}·(z_c on both characters) for L >= 2, and the two
    length-1 rows are E_1^a and E_1^b.
    """
    data = run.data
    d = data.dim
    theta = _phase1(run)[-1]
    orb = orbits(data)
    means, spread = orb.project(theta)
    W_sym = orb.embed(means)[d:].reshape(d, d)
    tie = float(spread[~orb.is_u].max() / max(np.abs(theta[d:]).max(), 1e-300))
    feats = class_features_mp(data, W_sym, run.lam, dps=DPS)
    keys = tuple(feats)
    with mpmath.workdps(DPS):
        rows = [[int(k[2]) * feats[k].positions[0, j] for j in range(data.L_max)] for k in keys]
    result = hard_margin_svm(rows, dps=DPS)
    if result.status != "certified":
        msg = (f"the class features at W_t0 of {run.name} are not separable ({result.summary()}); the "
               "max-margin quantities do not exist there")
        raise NumericalTrouble(msg)
    weights = np.array([float(sum(data.weight_exact[int(i)] for i in feats[k].members)) for k in keys])
    with mpmath.workdps(DPS + 20):
        norm = mpmath.sqrt(2) * result.norm
        full = features_mp(data, W_sym, run.lam, dps=DPS)
        full_rows = [[int(data.y[i]) * full[i, j] for j in range(d)] for i in range(data.n)]
        u_full = [result.u[j // 2] for j in range(d)]
        nu = [mpmath.mpf(0)] * data.n
        for k, key in enumerate(keys):
            share = result.multipliers[k] / (2 ** (key[1] - 2) if key[1] >= 2 else 1)
            for i in feats[key].members:
                nu[int(i)] = share
    residuals = kkt_residuals(full_rows, u_full, nu, dps=DPS)
    support = tuple(keys[k] for k in result.support)
    rows_float = np.array([[float(x) for x in row] for row in rows])
    return MaxMargin(run, norm, tuple(result.u), keys, support, result, tie, residuals.log10(), rows_float,
                     weights, W_sym)


# ============================================================================ frozen runs (shared)


def _frozen_sources(ctx: Context) -> list[Run]:
    quick = [G_X_EP[0], G_X_COT[0], Run("ep", 6, 36.0, 0.01, 50)]
    return quick if ctx.quick else list(dict.fromkeys(quick + G_X_EP + G_X_COT + _g_ep() + G_COT))


def _frozen_checkpoints(horizon: int) -> np.ndarray:
    k = np.arange(0, int(4 * math.log10(horizon)) + 1)
    return np.unique(np.concatenate([[0], np.rint(10 ** (k / 4)).astype(np.int64), [horizon]]))


@functools.lru_cache(maxsize=32)
def _frozen(run: Run, horizon: int) -> dict[str, Any]:
    mm = _max_margin(run)
    d = run.data.dim
    u0 = _phase1(run)[-1][:d]
    cps = _frozen_checkpoints(horizon)
    start = time.perf_counter()
    ms, losses = frozen_gd(mm.rows_float, mm.weights, u0[0:d:2].copy(), run.eta / 2, cps)
    return {"checkpoints": cps, "m": ms, "loss": losses, "seconds": time.perf_counter() - start,
            "asymmetry_u_t0": float(np.abs(u0[0:d:2] - u0[1:d:2]).max())}
