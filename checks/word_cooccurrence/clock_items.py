r"""``co.dv.phase1_clock``: the end of Phase 1 in the reduced model (spec §5).

From G = 0 (every g = ½), N = N₀I, U = U₀: r(0) = ½(f₁z₁ − f₂z₂ − f₃z₃ − f₄z₄) = (1/6, 1/6, 0) at the proportions
(½, ⅙, ⅙, ⅙), so Ġ(0) = (U₀ + m₁N₀)(1/6, 1/6, 0). While U and N stay near their initial values, Ġ ≈ (U₀ + m₁N₀)r(G):
in τ = (U₀ + m₁N₀)t the group dynamics dG/dτ = r(G) do not depend on (U₀, N₀), so the first time every group
margin is positive is T₁^grp ≈ c_{T₁}/(U₀ + m₁N₀) with c_{T₁} a pure number fixed by the proportions.

Decided: r(0) exactly (rationals, from the reduced right-hand side), and c_{T₁} = T₁^grp(U₀ + m₁N₀) from event
detection in the 13-ODE over the clock grid (a pure number: spread below 1 %). Reported: G, L̂ at T₁^grp, the
peak of the type-2 loss, and the full model's T₁^emp (every sample correct) on regime B, as T₁^emp(U₀ + m₁N₀) and
T₁^emp·m, with U₀ and N₀ = mean ‖v(μ_a)‖² measured at t = 0.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status
from checks.word_cooccurrence.reduced_items import regime_b_start
from numerics.models.word_cooccurrence import flow as Fl
from numerics.models.word_cooccurrence import reduced as Re
from numerics.models.word_cooccurrence.data import REGIMES
from numerics.ode import Tolerance, integrate
from numerics.runs import cached_run

PAPER = "co"
SPREAD = 0.01


def initial_rate_exact() -> list[Fraction]:
    """r(0) at g ≡ ½ with the proportions (½, ⅙, ⅙, ⅙), in rationals."""
    f = (Fraction(1, 2), Fraction(1, 6), Fraction(1, 6), Fraction(1, 6))
    return [sum(fk * Fraction(1, 2) * int(y) * int(z[a]) for fk, y, z in zip(f, Re.LABELS, Re.FEATURES, strict=True))
            for a in range(3)]


def clock(U0: float, N0: float, m1: int, counts) -> dict:
    """T₁^grp from G = 0, N = N₀I, U = U₀ and what the run shows on [0, T₁^grp]."""
    p = Re.reduced_params(m1, counts)
    sol = integrate(Re.CLOCK, Re.clock_state(N0, U0), (0.0, 1e3 / (U0 + m1 * N0)), p, tol=Tolerance(1e-10, 1e-14))
    T1 = sol.event_times["all_groups_correct"]
    dense = integrate(Re.REDUCED, Re.clock_state(N0, U0), (0.0, T1), p, tol=Tolerance(1e-10, 1e-14),
                      save_at=np.linspace(0.0, T1, 201))
    type2 = [float(np.log1p(np.exp(-m))) for m in -(Re.FEATURES[1] @ dense.y[:, 2:5].T)]  # observer G₁..₃ columns
    peak = int(np.argmax(type2))
    return {"U0": U0, "N0": N0, "T1_grp": T1, "c_T1": T1 * (U0 + m1 * N0), "G_at_T1": dense.y[-1, 2:5].tolist(),
            "loss_at_T1": float(dense.y[-1, 0]), "type2_loss_peak": type2[peak], "type2_peak_time": float(dense.t[peak])}


def full_model_T1(m: int, seed: int) -> dict:
    """T₁^emp of the full model (regime B, W_K and W_Q trained): the first time min_i y_iF_i > 0."""
    theta, lay, a, data = regime_b_start(m, seed)
    values = np.empty(len(Fl.OBSERVED))
    params = Fl.flow_params(lay, data.tokens, data.labels, a)
    Fl.observe_flow(0.0, theta, params, values)
    U0 = float(values[Fl.OBSERVED.index("U")])
    V = lay.view(theta, "WV")[:, :3]
    N0 = float(np.mean(np.sum(V * V, axis=0)))
    m1 = REGIMES["B"].m1
    def run() -> dict:
        sol = integrate(Fl.flow_field(lay, stop_when_all_correct=True), theta, (0.0, 1e3 / U0), params,
                        tol=Tolerance(1e-7, 1e-13))
        return {"T1": sol.event_times["all_correct"]}

    T1 = float(cached_run("co_T1", {"regime": "B", "m": m, "seed": seed, "rtol": 1e-7, "atol": 1e-13}, run,
                          ["numerics.models.word_cooccurrence.flow", "numerics.models.word_cooccurrence.model",
                           "numerics.models.word_cooccurrence.data"])["T1"])
    return {"m": m, "seed": seed, "U0": U0, "N0": N0, "T1_emp": T1, "T1_emp_times_U0_m1N0": T1 * (U0 + m1 * N0),
            "T1_emp_times_m": T1 * m}


def check_clock(ctx) -> Outcome:
    r0 = initial_rate_exact()
    rate = np.empty(13)
    r = REGIMES["B"]
    Re.reduced_rhs(0.0, Re.clock_state(0.0, 1.0), Re.reduced_params(r.m1, r.counts[0]), rate)
    exact_start = bool(r0 == [Fraction(1, 6), Fraction(1, 6), 0] and np.allclose(rate[:3], [float(x) for x in r0],
                                                                                  rtol=1e-15, atol=1e-15))
    grid = [clock(U0, N0, r.m1, r.counts[0]) for U0 in ctx.grid("U0") for N0 in ctx.grid("N0")]
    universal = clock(1e6, 0.0, r.m1, r.counts[0])
    cs = np.array([g["c_T1"] for g in grid])
    spread = float((cs.max() - cs.min()) / universal["c_T1"])
    full = [full_model_T1(m, seed) for m in ctx.grid("m") for seed in ctx.grid("full_seed")]
    status = Status.HOLDS if exact_start and spread <= SPREAD else Status.FAILS
    summary = (f"r(0) = ({', '.join(map(str, r0))}) exactly; c_T₁ = T₁^grp(U₀ + m₁N₀) ∈ [{cs.min():.4f}, {cs.max():.4f}] "
               f"over U₀ × N₀ (spread {spread:.2%}, limit U₀ → ∞: {universal['c_T1']:.4f}); the full model's "
               "T₁^emp(U₀ + m₁N₀) is " + ", ".join(f"{f['T1_emp_times_U0_m1N0']:.1f} (m = {f['m']})" for f in full)
               + " and T₁^emp·m " + ", ".join(f"{f['T1_emp_times_m']:.0f}" for f in full)
               + ": sample-level noise (initial G of order κ₀κ₁/√L, private random tokens) delays it beyond the "
                 "group clock")
    return Outcome(status, summary, {"r0": [str(x) for x in r0], "grid": grid, "universal": universal,
                                     "spread": spread, "full_model": full})


register(Claim("co.dv.phase1_clock", PAPER, "derived (Def. E.2's T₁, §5)", "derive", check_clock,
               params=(Param("U0", 256.0, quick=(64.0, 256.0, 1024.0), full=(64.0, 128.0, 256.0, 512.0, 1024.0)),
                       Param("N0", 0.0, quick=(0.0, 0.0156, 0.5), full=(0.0, 0.0156, 0.0625, 0.25, 0.5)),
                       Param("m", 256, quick=(128, 256), full=(128, 256, 512, 1024), doc="m of the full-model runs"),
                       Param("full_seed", 0, quick=(0,), full=(0, 1, 2), doc="seeds of the full-model runs")),
               statement="From G = 0, N = N₀I, U = U₀: r(0) in closed form, Ġ(0) = (U₀ + m₁N₀)r(0), and "
                         "T₁^grp ≈ c_{T₁}/(U₀ + m₁N₀) with c_{T₁} a pure number fixed by the group proportions."))
