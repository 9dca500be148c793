"""``co.dv.reduced_ode``: the reduced model with frozen, uniform attention (spec §5), checked two ways.

1. Exactness: on the harness with W_K = W_Q = 0, the flow leaves {W_K = W_Q = 0} (its W_K, W_Q blocks are 0)
   and the rates of G = W_Vᵀu, N = W_VᵀW_V and U along the exact flow (complex step, Oracle 1) are
   (UI + m₁N)r, rGᵀ + Grᵀ and 2m₁rᵀG over the whole vocabulary (array identities; these decide).
2. Overlay (reported): the 13-ODE group-level model (random tokens dropped) against the full model with W_K,
   W_Q trained and random tokens present, regime B at m = 256 to T_end = 4m: the largest relative deviation of
   L̂, G₁..₃, U and R = (B₂₃₄ − A)/(A − B₂) over the save times.
"""

from __future__ import annotations

import math

import numpy as np

from checks.array_identity import ArrayDisplay, ArrayIdentityCheck
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.word_cooccurrence.model_items import HarnessCase, _oracle, _SEEDS, harness_case
from derivations.word_cooccurrence.symbols import DEFAULT_READINGS
from numerics.differences import directional_derivative
from numerics.models.word_cooccurrence import flow as Fl
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence import reduced as Re
from numerics.models.word_cooccurrence.data import REGIMES, build_dataset
from numerics.ode import Tolerance, integrate
from numerics.runs import cached_run

PAPER = "co"
RTOL = 1e-12


def _manifold(seed: int) -> HarnessCase:
    c = harness_case(seed)
    theta = c.theta.copy()
    c.lay.view(theta, "WK")[:] = 0.0
    c.lay.view(theta, "WQ")[:] = 0.0
    return HarnessCase(c.label + ", W_K = W_Q = 0", c.lay, theta, c.tokens, c.labels, c.a)


def _families(ctx) -> dict[str, list[HarnessCase]]:
    return {"manifold": [_manifold(seed) for seed in ctx.grid("harness_seed")]}


def _rate(c: HarnessCase, observable) -> np.ndarray:
    return directional_derivative(lambda t: np.asarray(observable(c.lay.views(t))).reshape(-1), c.theta, _oracle(c))


def _exact(c: HarnessCase, k: int) -> np.ndarray:
    return np.asarray(Re.exact_rates(c.theta, c.lay, c.tokens, c.labels, c.a)[k]).reshape(-1)


def _displays() -> list[ArrayDisplay]:
    def u(v, c):
        return v["W"].T @ c.a

    return [
        ArrayDisplay("invariance", "§5", lambda c: np.zeros(2 * c.lay.shapes["WK"][0] * c.lay.shapes["WK"][1]),
                     lambda c: np.concatenate([c.lay.view(_oracle(c), "WK").reshape(-1),
                                               c.lay.view(_oracle(c), "WQ").reshape(-1)])
                     / np.max(np.abs(_oracle(c))), "manifold",
                     description="Ẇ_K = Ẇ_Q = 0 at W_K = W_Q = 0 (relative to the largest rate)", rtol=RTOL,
                     floor=1.0),
        ArrayDisplay("G", "§5", lambda c: _exact(c, 0), lambda c: _rate(c, lambda v: v["WV"].T @ u(v, c)),
                     "manifold", description="Ġ = (UI + m₁N)r, every token of the vocabulary", rtol=RTOL),
        ArrayDisplay("N", "§5", lambda c: _exact(c, 1), lambda c: _rate(c, lambda v: v["WV"].T @ v["WV"]),
                     "manifold", description="Ṅ = rGᵀ + Grᵀ (d×d)", rtol=RTOL),
        ArrayDisplay("U", "§5", lambda c: _exact(c, 2), lambda c: _rate(c, lambda v: u(v, c) @ u(v, c)),
                     "manifold", description="U̇ = 2m₁rᵀG", rtol=RTOL),
    ]


def _R(values: dict[str, np.ndarray]) -> np.ndarray:
    A, B2 = values["A"], values["B2"]
    return (values["B2"] + values["B3"] + values["B4"] - A) / (A - B2)


def regime_b_start(m: int, seed: int):
    """(θ(0), layout, a, data set) of regime B at m and seed (σ₀ = κ₀/√(Lm), σ₁ = κ₁/√m₁)."""
    r = REGIMES["B"]
    (counts,), (d,), (kappa0, kappa1) = r.counts, r.d, r.kappa[0]
    data = build_dataset(counts, r.L, d, seed)
    lay = Mo.layout(m, r.m1, d)
    theta = Mo.init_params(m, r.m1, d, kappa0 / math.sqrt(r.L * m), kappa1 / math.sqrt(r.m1), seed)
    return theta, lay, Mo.output_weights(r.m1, seed), data


def overlay(m: int, seed: int, saves: int = 40) -> dict:
    """Full model (regime B at m, W_K and W_Q trained) and the 13-ODE group model from the same θ(0), to 4m."""
    r = REGIMES["B"]
    (counts,) = r.counts
    theta, lay, a, data = regime_b_start(m, seed)
    t_end = float(r.t_end(m))
    save = np.minimum(np.concatenate([[0.0], np.logspace(-2, math.log10(t_end), saves - 1)]), t_end)
    def run() -> dict:
        sol = integrate(Fl.flow_field(lay), theta, (0.0, t_end), Fl.flow_params(lay, data.tokens, data.labels, a),
                        tol=Tolerance(1e-6, 1e-12), save_at=save)
        return {"observed": sol.y, "steps": sol.n_steps}

    full = cached_run("co_full", {"regime": "B", "m": m, "seed": seed, "t_end": t_end, "rtol": 1e-6, "atol": 1e-12,
                                  "saves": saves, "trainable": "all"}, run,
                      ["numerics.models.word_cooccurrence.flow", "numerics.models.word_cooccurrence.model",
                       "numerics.models.word_cooccurrence.data"])
    reduced = integrate(Re.REDUCED, Re.reduced_initial_state(theta, lay, a), (0.0, t_end),
                        Re.reduced_params(r.m1, counts), tol=Tolerance(1e-10, 1e-14), save_at=save)
    F = {k: full["observed"][:, Fl.OBSERVED.index(k)] for k in Re.OBSERVED}
    G = {k: reduced.y[:, Re.OBSERVED.index(k)] for k in Re.OBSERVED}
    rows = {}
    for key in ("loss", "G1", "G2", "G3", "U"):
        rows[key] = float(np.max(np.abs(G[key] - F[key]) / np.maximum(np.abs(F[key]), 1e-300)))
    late = save >= 1.0  # R is 0/0-like at t = 0, where A ≈ B₂
    rows["R (t >= 1)"] = float(np.max(np.abs(_R(G)[late] - _R(F)[late]) / np.abs(_R(F)[late])))
    return {"m": m, "seed": seed, "t_end": t_end, "max_relative_deviation": rows,
            "full_steps": full["steps"], "reduced_steps": reduced.n_steps,
            "loss_at_t_end": {"full": float(F["loss"][-1]), "reduced": float(G["loss"][-1])}}


def check_reduced(ctx) -> Outcome:
    """Exactness decides; the overlay is reported (module docstring)."""
    outcome = ArrayIdentityCheck(_displays, _families, dict(DEFAULT_READINGS))(ctx)
    runs = [overlay(ctx.value("overlay_m"), seed) for seed in ctx.grid("overlay_seed")]
    worst = {k: max(r["max_relative_deviation"][k] for r in runs) for k in runs[0]["max_relative_deviation"]}
    outcome.evidence["overlay"] = runs
    outcome.summary += ("; group-level 13-ODE against the full model (regime B, m = "
                        f"{runs[0]['m']}, t <= {runs[0]['t_end']:g}, {len(runs)} seed(s)), largest relative deviation: "
                        + ", ".join(f"{k} {v:.2g}" for k, v in worst.items()))
    return outcome


register(Claim("co.dv.reduced_ode", PAPER, "derived (frozen attention, §5)", "derive", check_reduced,
               params=(_SEEDS, Param("overlay_m", 256, doc="m of the overlay run (regime B)"),
                       Param("overlay_seed", 0, quick=(0,), full=(0, 1), doc="seeds of the overlay runs")),
               statement="{W_K = W_Q = 0} is invariant; on it Ġ = (UI + m₁N)r, Ṅ = rGᵀ + Grᵀ, U̇ = 2m₁rᵀG with "
                         "r = (1/n)Σ_i g_iy_iz_i; the group level keeps G₁..₃, N's 3×3 block and U (13 ODEs)."))
