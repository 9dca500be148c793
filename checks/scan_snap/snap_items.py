"""Theorem 4's transition times and B_n at them (spec ss.thm4.snap_time, ss.thm4.B_at_transitions) and the
scaling of the surrogate (ss.dv.B_scaling), decided in the limit of the vocabulary size (spec R16).

* ``ss.thm4.snap_time``: the printings of t₀ (Eqn 14 with ω₁, L999; 2K ln M/η_Y, L214) against the time at
  which h(t/K) reaches the upper root of Lemma 8, found by root finding on the Lambert-W h; R16 along M.
* ``ss.thm4.B_at_transitions``: the values printed at L997 (t'₀) and L1003 (t₀) against B_n integrated
  along the scalar surrogate (Eqns 116–117, printed constants, z(0) = 0; Dormand–Prince, rtol 1e-11) at the
  same times; R16 along M with r = exp(P − Q) (P, Q printed as logarithms). The derivation step — the
  printed values against Eqn 127 at the same times — is reported.
* ``ss.dv.B_scaling``: B at (aη_Y, aη_Z, t/a) against B at (η_Y, η_Z, t).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from checks.asymptotics import approximation
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status, combine
from numerics.models.scan_snap import scalar as N
from numerics.ode import Tolerance, integrate
from numerics.special import brent_root_args

PAPER = "ss"
M_SWEEP = {"quick": (30.0, 1e2, 1e3, 1e4, 1e6, 1e8), "full": (30.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12)}


@N.jit
def _h_gap(t, p):
    # h(η_Y t/K) − target; p = (M, K, η_Y, target)
    return N.h_of_tau(p[2] * t / p[1], p[0]) - p[3]


def balance_time(M: float, K: float, etaY: float) -> float:
    """The time at which h(t/K) = u₁/M, by Brent on the Lambert-W h (bracket up to 4× the printed t₀)."""
    u1 = N.lemma8_roots(M)[1]
    top = 8.0 * K * math.log(M) / etaY + 10.0 * K / etaY
    return brent_root_args(_h_gap, 0.0, top, np.array([M, K, etaY, u1 / M]), 1e-300, 4e-16, 400)


def check_snap_time(ctx) -> Outcome:
    """Eqn 14 / L207 / L999 / L214: the printings of t₀ against the balance time, along M (R16)."""
    K, etaY = float(ctx.value("K")), float(ctx.value("etaY"))
    Ms = np.array(M_SWEEP[ctx.budget])
    t_bal = np.array([balance_time(M, K, etaY) for M in Ms])
    evidence: dict[str, Any] = {"M": Ms.tolist(), "t_balance": t_bal.tolist(),
                                "t0_prime": (K * np.log(Ms) / etaY).tolist(), "readings": {}}
    statuses = {}
    for reading in ctx.grid("t0"):
        printed = np.array([N.t0(M, K, etaY, reading) for M in Ms])
        decision = approximation(Ms, printed, t_bal, name="M", rel_err=1e-12)
        evidence["readings"][reading] = {"t0": printed.tolist(), **decision.to_dict()}
        statuses[reading] = decision
    canonical = statuses[ctx.grid("t0")[0]]
    others = "; ".join(f"{r}: {d.status.value} ({d.summary})" for r, d in statuses.items()
                       if r != ctx.grid("t0")[0])
    summary = f"t₀ ({ctx.grid('t0')[0]}) against the balance time: {canonical.summary}"
    return Outcome(canonical.status, summary + (f"; {others}" if others else ""), evidence)


def integrated_B(M: float, K: float, etaY: float, etaZ: float, rho0: float, times: np.ndarray) -> np.ndarray:
    """B_n(t) of the surrogate (printed constants c = Kρ₀^{−4}), integrated at rtol 1e-11."""
    sol = integrate(N.SURROGATE, [0.0, 0.0, 0.0], (0.0, float(times[-1])),
                    N.surrogate_params(M, K, etaY, etaZ, K * rho0**-4), tol=Tolerance(1e-11, 1e-15),
                    save_at=np.asarray(times, dtype=float), max_steps=10**7)
    return sol.y[:, 1]


def printed_B(M: float, K: float, rho0: float, nu: float, at: str, omega1: float) -> float:
    """L997 (t'₀) and L1003 (t₀) as printed."""
    if at == "t0_prime":
        inner = 2 * K * (M - 1) ** 2 * M**-2 / nu * math.log(M) ** 2
    else:
        inner = 2 * K * (M - 1) ** 2 * M**-2 / nu * math.log(2 * (1 + omega1) * M * math.log(M)) ** 2
    return math.log(rho0**4 / K + inner) / 4


def eq127(M: float, K: float, etaY: float, etaZ: float, rho0: float, t: float) -> float:
    """Eqn 127 as printed at t."""
    h = N.h_of_tau(etaY * t / K, M)
    return math.log(rho0**4 / K + 2 * etaZ / etaY * K * (M - 1) ** 2 * h**2) / 4


def check_B_at_transitions(ctx) -> Outcome:
    """L997, L1003 against the integrated B_n at t'₀, t₀ (R16 along M), every ρ₀, η_Y and ν reading."""
    K, etaZ = float(ctx.value("K")), float(ctx.value("etaZ"))
    Ms = np.array(M_SWEEP[ctx.budget])
    records, deciding = [], []
    for rho0 in ctx.grid("rho0"):
        for etaY in ctx.grid("etaY"):
            for nu_reading in ctx.grid("nu"):
                nu = etaY / etaZ if nu_reading == "Y_over_Z" else etaZ / etaY
                for at in ("t0_prime", "t0"):
                    P, Q, step = [], [], []
                    for M in Ms:
                        omega1 = N.omega1(M)
                        t = K * math.log(M) / etaY if at == "t0_prime" else 2 * (1 + omega1) * K * math.log(M) / etaY
                        Q.append(float(integrated_B(M, K, etaY, etaZ, rho0, np.array([t]))[-1]))
                        P.append(printed_B(M, K, rho0, nu, at, omega1))
                        step.append(eq127(M, K, etaY, etaZ, rho0, t))
                    decision = approximation(Ms, P, Q, name="M", quantity="log", rel_err=1e-9)
                    rec = {"rho0": rho0, "etaY": etaY, "nu": nu_reading, "at": at, "M": Ms.tolist(), "printed": P,
                           "integrated": Q, "eq127_at_same_time": step,
                           "quarter_log_rho4_over_K": math.log(rho0**4 / K) / 4, **decision.to_dict()}
                    records.append(rec)
                    if nu_reading == ctx.grid("nu")[0]:
                        deciding.append(decision.status)
    status = combine(deciding)
    failing = [r for r in records if r["status"] == "fails" and r["nu"] == ctx.grid("nu")[0]]
    example = failing[0] if failing else records[0]
    summary = (f"{sum(s == Status.HOLDS for s in deciding)}/{len(deciding)} (ρ₀, η_Y, time) exact in the limit "
               f"M → ∞ (ν = {ctx.grid('nu')[0]}); e.g. ρ₀ = {example['rho0']}, η_Y = {example['etaY']} at "
               f"{example['at']}: {example['summary']}; printed − integrated at M = {Ms[-1]:g}: "
               f"{example['printed'][-1] - example['integrated'][-1]:+.4f} (¼ln(ρ₀⁴/K) = "
               f"{example['quarter_log_rho4_over_K']:+.4f})")
    return Outcome(status, summary, {"records": records})


def check_B_scaling(ctx) -> Outcome:
    """B and Γ at (aη_Y, aη_Z, t/a) against (η_Y, η_Z, t): they depend on η_Yt and ν only (spec ss.dv.B_scaling)."""
    K, M, rho0 = 10.0, 1000.0, 1.0
    times = np.logspace(0, 5, 60)
    worst, records = 0.0, []
    for etaY, etaZ in ((0.5, 0.5), (2.0, 0.5), (10.0, 0.5)):
        base = integrated_B(M, K, etaY, etaZ, rho0, times)
        for a in (0.5, 2.0, 4.0):
            scaled = integrated_B(M, K, a * etaY, a * etaZ, rho0, times / a)
            gap = float(np.max(np.abs(scaled - base) / np.maximum(np.abs(base), 1e-12)))
            worst = max(worst, gap)
            records.append({"etaY": etaY, "etaZ": etaZ, "a": a, "max_relative": gap})
    status = Status.HOLDS if worst <= 1e-8 else Status.DIFFERS
    return Outcome(status, f"B at (aη_Y, aη_Z, t/a) within {worst:.1e} of B at (η_Y, η_Z, t) for a ∈ {{0.5, 2, 4}} "
                           f"(integrator rtol 1e-11)", {"records": records})


register(Claim("ss.thm4.snap_time", PAPER, "Eqn 14 (L202; L945), L207, L950, L993, L999, L214", "formula",
               check_snap_time, params=(Param("K", 10), Param("etaY", 1.0), Param("t0", "omega1",
                                        quick=("omega1", "asymptotic"), choices=("omega1", "asymptotic"))),
               statement="t'₀ := K ln M/η_Y; t₀ := 2(1 + o(1))K ln M/η_Y (Eqn 14) = 2(1 + δ')K ln M/η_Y (L207) = "
                         "2(1 + ω₁)K ln M/η_Y (L999); t₀ ≈ 2K ln M/η_Y (L214)."))
register(Claim("ss.thm4.B_at_transitions", PAPER, "L997, L1003", "formula", check_B_at_transitions,
               params=(Param("K", 10), Param("etaZ", 0.5), Param("rho0", 1.0, quick=(1.0, 3.0), full=(0.5, 1, 2, 3)),
                       Param("etaY", 1.0, quick=(0.5, 2.0, 10.0), full=(0.5, 1, 2, 5, 10)),
                       Param("nu", "Y_over_Z", quick=("Y_over_Z", "Z_over_Y"), choices=("Y_over_Z", "Z_over_Y"))),
               statement="B_n(t'₀) = ¼ln(ρ₀⁴/K + 2K(M−1)²M^{-2}ν^{-1}ln²M); B_n(t₀) = ¼ln(ρ₀⁴/K + "
                         "2K(M−1)²M^{-2}ν^{-1}ln²(2(1 + ω₁)M ln M))."))
register(Claim("ss.dv.B_scaling", PAPER, "derived (Lemma 6, Eqns 116–127)", "derive", check_B_scaling,
               statement="Γ, the integrated B_n and Eqns 127–129 depend on (η_Y, η_Z, t) only through (η_Yt, ν)."))


def check_omega_asymptotics(ctx) -> Outcome:
    """ss.dv.omega_asymptotics: ω₁ from the fixed point ω₁ = (ln ln M + ln(1 + ω₁) + ln((M−1)/M))/ln M (Eqn 51
    rewritten, iterated from 0) against the root u₁ = −W₋₁(−1/(M−1)) (50 digits); ω₀'s leading order from Eqn 50,
    ln(M/(M−1)) = 1/M + O(M⁻²) and M^{−(1−ω₀)} = M⁻¹(1 + O(ω₀ ln M)): ω₀ ≈ 2/(M ln M), decided along M (R16)."""
    Ms = [30.0, 1e2, 1e3, 1e4, 1e6, 1e8, 1e12] if ctx.quick else [30.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e8, 1e12, 1e16]
    rows, worst_fixed = [], 0.0
    omega0, leading = [], []
    with mpmath.workdps(50):
        for M in Ms:
            Mm = mpmath.mpf(M)
            w1_root = -mpmath.lambertw(-1 / (Mm - 1), -1) / mpmath.log(Mm) - 1
            w = mpmath.mpf(0)
            for _ in range(200):
                w = (mpmath.log(mpmath.log(Mm)) + mpmath.log(1 + w) + mpmath.log((Mm - 1) / Mm)) / mpmath.log(Mm)
            gap = float(abs(w - w1_root) / w1_root)
            worst_fixed = max(worst_fixed, gap)
            w0 = 1 + mpmath.log(-mpmath.lambertw(-1 / (Mm - 1))) / mpmath.log(Mm)
            omega0.append(float(w0))
            leading.append(float(2 / (Mm * mpmath.log(Mm))))
            rows.append({"M": M, "omega1_root": float(w1_root), "omega1_fixed_point": float(w), "relative_gap": gap,
                         "omega1_lnM_over_lnlnM": float(w1_root * mpmath.log(Mm) / mpmath.log(mpmath.log(Mm))),
                         "c_prime": float(1 + w1_root), "omega0": float(w0), "omega0_leading": leading[-1]})
    decision = approximation(Ms, omega0, leading, name="M", rel_err=1e-12)
    status = combine([decision.status, Status.HOLDS if worst_fixed <= 1e-40 else Status.DIFFERS])
    return Outcome(status, f"ω₁'s fixed point equals the root to {worst_fixed:.1e} (50 digits); ω₀ against 2/(M ln M): "
                           f"{decision.summary}; ω₁ ln M/ln ln M from {rows[0]['omega1_lnM_over_lnlnM']:.3f} (M = 30) to "
                           f"{rows[-1]['omega1_lnM_over_lnlnM']:.3f} (M = {Ms[-1]:g})",
                   {"rows": rows, "omega0_decision": decision.to_dict()})


register(Claim("ss.dv.omega_asymptotics", PAPER, "derived (Lemma 8, Eqns 50–51)", "derive", check_omega_asymptotics,
               statement="ω₁ = (ln ln M + ln(1 + ω₁) + ln((M−1)/M))/ln M solved by iteration; ω₀'s leading order from "
                         "Eqn 50 for large M; both against root finding."))
