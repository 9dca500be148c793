"""(p, g) trajectories for the 4-gram claims of [W] App. C.3.1 / Thm 4 Phase I, and their parameters.

Runs come from :func:`numerics.models.induction_head.four_gram.four_gram_run` (the derived
(p, g) gradient flow with hitting-time events, integrated to t = 1e8), wrapped as the toolkit's
trajectory type (:class:`FourGramRun`). A *part* is one printed display tested on one run
(``checks.along``); the claim is decided on the canonical reading (``head1_range`` canonical,
``init`` eq4).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from checks import along, configurations
from checks.claim import Context, Param
from numerics.models.induction_head.four_gram import HEAD1_READINGS, INITS, FourGramRun, four_gram_run

#: G_G4 (spec §2.11); quick: a corner of it
G4_FULL = {"L": (40, 1000, 10000), "alpha": (0.5, 1.0, 2.0, 3.0, 4.0, 10.0), "sigma": (1e-2, 1e-4, 1e-6)}
G4_QUICK = {"L": (40, 1000), "alpha": (1.0, 4.0), "sigma": (1e-2, 1e-4)}
#: quick grid of the claims that integrate to t = 1e8
G4_QUICK_LONG = {**G4_QUICK, "sigma": (1e-2,)}
CANONICAL = ("canonical", "eq4")
CONFIG_NAMES = ("L", "alpha", "sigma")
#: points of the dense linear grid over the early window (pointwise chain checks)
N_DENSE = 1500
#: end of the dense grid: every T_1^g of G_G4 lies before it (measured: 6.8 to 31.5)
DENSE_END = 50.0


def g4_params(quick: Mapping[str, tuple] = G4_QUICK, full: Mapping[str, tuple] = G4_FULL) -> tuple[Param, ...]:
    """The declared parameters of a 4-gram claim: the (L, α*, σ) grid and the reading flags.

    Defaults: L 40, α* 1, σ 0.01 and the canonical reading (head1_range canonical, init eq4).
    """
    defaults = {"L": 40, "alpha": 1.0, "sigma": 0.01}
    numeric = tuple(Param(name, defaults[name], quick=quick[name], full=full[name]) for name in CONFIG_NAMES)
    return (*numeric,
            Param("head1_range", CANONICAL[0], quick=tuple(HEAD1_READINGS), full=tuple(HEAD1_READINGS),
                  choices=tuple(HEAD1_READINGS), doc="head 1's summation range"),
            Param("init", CANONICAL[1], quick=tuple(INITS), full=tuple(INITS), choices=tuple(INITS),
                  doc="θ(0): eq4 (σ, σ) or c2 (0, σ)"))


@functools.lru_cache(maxsize=512)
def run(L: int, alpha: float, sigma: float, head1_range: str = "canonical", init: str = "eq4",
        horizon: float = 1e8) -> FourGramRun:
    """One (p, g) run with a dense linear grid on [0, DENSE_END] (rerun on [0, 1.5 T_1^g] if T_1^g is later)."""
    dense = np.linspace(0.0, min(DENSE_END, horizon), N_DENSE)
    first = four_gram_run(L, alpha, sigma, head1_range=head1_range, init=init, horizon=horizon, extra_times=dense)
    ends = [first.events[k] for k in ("T_g_half", "T_1g") if math.isfinite(first.events[k])]
    if not ends or max(ends) <= DENSE_END:
        return first
    dense = np.linspace(0.0, min(1.5 * max(ends), horizon), N_DENSE)
    return four_gram_run(L, alpha, sigma, head1_range=head1_range, init=init, horizon=horizon, extra_times=dense)


def readings(ctx: Context) -> list[tuple[str, str]]:
    """(head1_range, init) pairs, canonical first; at the quick budget one alternative per flag."""
    return configurations.readings(ctx, ["head1_range", "init"])


def all_runs(ctx: Context, horizon: float = 1e8, *, alternatives_at: str = "first") -> list[FourGramRun]:
    """Canonical runs over the whole grid; alternative readings on the first grid point (quick) or everywhere (full)."""
    cfgs = configurations.configurations(ctx, CONFIG_NAMES)
    pairs = readings(ctx)
    out = []
    for k, cfg in enumerate(cfgs):
        for pair in pairs:
            if pair != pairs[0] and ctx.quick and alternatives_at == "first" and k > 0:
                continue
            ctx.report_progress(len(out) / (len(cfgs) * len(pairs)), f"L={cfg['L']} α*={cfg['alpha']} {pair}")
            out.append(run(int(cfg["L"]), float(cfg["alpha"]), float(cfg["sigma"]), pair[0], pair[1], horizon))
    return out


def is_canonical(r: FourGramRun, ctx: Context) -> bool:
    """Whether a run has the reading the verdict is decided on (the pinned flags, else the defaults)."""
    return (r.head1_range, r.init) == readings(ctx)[0]


def label(r: FourGramRun) -> str:
    """The reading of a run, e.g. ``canonical/eq4``."""
    return f"{r.head1_range}/{r.init}"


def config(r: FourGramRun) -> dict[str, Any]:
    """Parameters of a run."""
    return {"L": r.L, "alpha": r.alpha, "sigma": r.sigma, "head1_range": r.head1_range, "init": r.init}


def event(r: FourGramRun, name: str) -> float | None:
    """A hitting time, None when it did not fire by the horizon."""
    return along.finite(r.event(name))


def records_for(ctx: Context, runs: list[FourGramRun], evaluate: Callable[[FourGramRun], dict]) -> list[dict]:
    """One record per run: configuration, reading, hitting times and the evaluated parts."""
    return [along.record(evaluate(r), label=label(r), reading={"head1_range": r.head1_range, "init": r.init},
                         canonical=is_canonical(r, ctx), config=config(r), events=r.events) for r in runs]
