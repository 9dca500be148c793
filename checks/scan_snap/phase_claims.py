r"""Theorem 4's two phases (L206–L207; L949–L950) decided at level (iv), the scalar surrogate (Eqns 116–117).

``ss.thm4.scan_phase`` (t < t'₀ = K ln M/η_Y): "γ(t) = O(η_Yt/K) and B_n(t) ≈ ¼ln K^{−1}(ρ₀⁴ + 2η_Yη_Zt²) =
O(ln t); χ_{l₀}(t) >= e^{2f²_{nl₀}(0)B_n(t)} ≈ [K^{−1}(ρ₀⁴ + 2η_Yη_Zt²)]^{0.5f²_{nl₀}(0)}, (sub-)linear."

* [B_printed] the printed approximation against the integrated B_n by R16 along M (as ``ss.thm4.B_stage1``):
  the integrated B_n starts at 0, the printed form at ¼ln(ρ₀⁴/K), so a gap of ¼|ln(K/ρ₀⁴)| cannot vanish;
* [gamma_O] γ(t)/(η_Yt/K), its window sup bounded along M (R10);
* [B_O_ln_t] B_n/ln t along t ∈ [e, t'₀] at each M whose window spans a decade (R10, O);
* [sublinear] the log–log slope of the printed lower bound in t, at most 1 on the window for every
  f²_{nl₀}(0) <= 1 (f_n is a unit vector; d ln/d ln t = f²·2η_Yη_Zt²/(ρ₀⁴ + 2η_Yη_Zt²) < f²);
* reported: the printed lower bound over e^{2f²B_n} (the bound the surrogate gives) with f² = 1 — above 1
  wherever ρ₀⁴ > K, so there the printed form is not implied by χ >= e^{2f²B_n}.

``ss.thm4.snap_phase`` (t >= t₀): "B_n(t) = O(ln ln t); while B_n(t) still grows to infinite, χ_{l₀}(t) =
O(ln t)". B_n from its closed form in ln t (``surrogate_claims.B_of_h`` of ``h_of_log_tau``, checked against the
integration to 10⁶/η_Y) from t₀ to t = e^{10⁴}, where ln ln t is five times its value at t₀:

* [B_O_lnln] B_n/ln ln t along t (R10, O); [chi_O_ln] e^{2B_n}/ln t along t (R10, O): at level (iv)
  e^{2B_n} >= e^{2f²B_n} is the surrogate's largest growth factor (f² <= 1);
* [grows] the slope of B_n against ln ln t on [10t₀, 10⁴t₀] (95 % interval) is positive; compared with the ½
  of Eqn 130.

The γ part of L207 is Theorem 1(b)'s second rate, decided by ``ss.thm1b.gamma_rates``. Level (iii) (χ_{l₀}
along reduced-ODE trajectories) needs the reduced attention ODE of part 2 and is not run here.
"""

from __future__ import annotations

import math

import numpy as np

from checks.asymptotics import Asymptotic, decide
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.scalar_claims._common import _log_slope, _overall, _part
from checks.scan_snap.scalar_claims.lemma9 import _o_part, stage_table
from checks.scan_snap.snap_items import M_SWEEP, integrated_B
from checks.scan_snap.surrogate_claims import B_of_h, check_stage
from checks.status import Status
from numerics.models.scan_snap.scalar import h_of_log_tau
from numerics.models.scan_snap.scalar import t0 as t0_printed

PAPER = "ss"
#: ratios whose corrections are powers of 1/ln ln t (B_n = ½ln ln t + c): the variable ln t, logarithmic scale
ALONG_LN_T_LOG = Asymptotic("ln_t", scale="log")
#: ratios with corrections in 1/ln t (e^{2B_n} = C ln t + c)
ALONG_LN_T = Asymptotic("ln_t")


def scan_printed(t, M, K, etaY, etaZ, rho0, nu):
    """L206: ¼ln(K^{−1}(ρ₀⁴ + 2η_Yη_Zt²)) (M and ν do not enter)."""
    return np.log((rho0**4 + 2 * etaY * etaZ * np.asarray(t) ** 2) / K) / 4


#: M beyond ``M_SWEEP`` for the sup of B_n/ln t, whose corrections are powers of 1/ln ln M
M_DEEP = (1e16, 1e32, 1e64)


def _scan_windows(ctx, extra_M=()):
    """(M, η_Y, ρ₀, t, B_n) on [1, t'₀) for every grid point."""
    K, etaZ = float(ctx.value("K")), float(ctx.value("etaZ"))
    n = 100 if ctx.quick else 400
    for M in (*M_SWEEP[ctx.budget], *extra_M):
        for etaY in ctx.grid("etaY"):
            for rho0 in ctx.grid("rho0"):
                t = np.logspace(0, math.log10(K * math.log(M) / etaY), n)[:-1]
                yield M, etaY, rho0, t, integrated_B(M, K, etaY, etaZ, rho0, t)


def _B_over_ln_t(ctx) -> dict:
    """R10 (O) along M of the window sup of B_n/ln t on [e, t'₀) (the window grows with M)."""
    sups, points = [], []
    for M, etaY, rho0, t, B in _scan_windows(ctx, M_DEEP):
        keep = t >= math.e
        if keep.any():
            sups.append(float(np.max(B[keep] / np.log(t[keep]))))
            points.append({"ln_M": math.log(M), "etaY": etaY, "rho0": rho0})
    # the sup sits at t'₀ = K ln M/η_Y, so its corrections are powers of 1/ln ln M
    decision = decide("O", sups, np.ones(len(sups)), points, variables=[Asymptotic("ln_M", scale="log")],
                      rel_err=1e-9)
    return _part(decision.status, f"sup of B_n/ln t on [e, t'₀) along ln M: in [{min(sups):.4f}, {max(sups):.4f}]; "
                                  f"{decision.summary}", decision=decision.to_dict(), sups=sups)


def _sublinear(ctx) -> dict:
    """The log–log slope of [K^{−1}(ρ₀⁴ + 2η_Yη_Zt²)]^{0.5f²} (f² = 1, its largest value) and the printed
    bound over e^{2f²B_n} (reported)."""
    K = float(ctx.value("K"))
    etaZ = float(ctx.value("etaZ"))
    slopes, ratios = [], []
    for M, etaY, rho0, t, B in _scan_windows(ctx):
        log_bound = 0.5 * np.log((rho0**4 + 2 * etaY * etaZ * t**2) / K)
        local = np.diff(log_bound) / np.diff(np.log(t))
        slopes.append({"M": M, "etaY": etaY, "rho0": rho0, "max_local_slope": float(local.max()),
                       "fit": _log_slope(t, log_bound)})
        ratio = np.exp(log_bound - 2 * B)
        ratios.append({"M": M, "etaY": etaY, "rho0": rho0, "min": float(ratio.min()), "max": float(ratio.max())})
    worst = max(slopes, key=lambda r: r["max_local_slope"])
    status = Status.HOLDS if worst["max_local_slope"] <= 1 + 1e-12 else Status.FAILS
    above = sorted({r["rho0"] for r in ratios if r["max"] > 1})
    part = _part(status, f"largest local log–log slope of the printed lower bound (f² = 1) on [1, t'₀): "
                         f"{worst['max_local_slope']:.4f} at M={worst['M']:g}, η_Y={worst['etaY']:g}, "
                         f"ρ₀={worst['rho0']:g}", slopes=slopes)
    reported = _part(Status.HOLDS if not above else Status.FAILS,
                     "printed bound / e^{2B_n} (f² = 1): "
                     + (f"exceeds 1 for ρ₀ ∈ {above} (ρ₀⁴ > K = {K:g}): the printed form is then larger than the "
                        "bound e^{2f²B_n} it approximates" if above else "at most 1 everywhere"),
                     ratios=ratios, reported_only=True)
    return part, reported


def check_scan_phase(ctx) -> Outcome:
    """Theorem 4, attention scanning (module docstring)."""
    K = float(ctx.value("K"))
    B_part = check_stage(ctx, "stage1", printed=scan_printed, name="L206")
    stage1 = stage_table(M_SWEEP[ctx.budget], (K,), [float(e) for e in ctx.grid("etaY")],
                         50 if ctx.quick else 200, stage=1)
    sublinear, bound_ratio = _sublinear(ctx)
    parts = {"B_printed": _part(B_part.status, B_part.summary, records=B_part.evidence["records"]),
             "gamma_O": _o_part(stage1, "ratio_gamma", "γ/(η_Yt/K) on [1, K ln M/η_Y]", along_K=False,
                                scale="algebraic"),
             "B_O_ln_t": _B_over_ln_t(ctx), "sublinear": sublinear, "printed_bound_over_surrogate": bound_ratio}
    status, summary = _overall(parts, ["B_printed", "gamma_O", "B_O_ln_t", "sublinear"])
    return Outcome(status, summary + f" || reported: {bound_ratio['summary']}",
                   {"parts": parts, "level_iii": "not run: the reduced attention ODE (Lemma 4) is part 2"})


#: ln t reached by ``ss.thm4.snap_phase`` (t = e^{10⁴}: ln ln t = 9.2, five times ln ln t₀ at M = 30)
LN_T_MAX = 1e4


def _snap_rows(ctx):
    """B_n(t) on t₀ <= t <= e^{LN_T_MAX} from its closed form in ln t (``B_of_h`` of ``h_of_log_tau``), with its
    agreement with the integration up to t = 10⁶/η_Y."""
    K, etaZ = float(ctx.value("K")), float(ctx.value("etaZ"))
    n = 60 if ctx.quick else 200
    for M in M_SWEEP[ctx.budget]:
        for etaY in ctx.grid("etaY"):
            for rho0 in ctx.grid("rho0"):
                start = t0_printed(M, K, etaY, "omega1")
                near = np.linspace(math.log(start), math.log(start) + 4 * math.log(10), n)  # [t₀, 10⁴t₀]
                ln_t = np.concatenate([near, np.geomspace(near[-1], LN_T_MAX, n)[1:]])
                h = np.array([h_of_log_tau(math.log(etaY / K) + v, M) for v in ln_t])
                B = B_of_h(h, M, K, etaY, etaZ, rho0)
                check = ln_t <= math.log(1e6 / etaY)
                agreement = (float(np.max(np.abs(integrated_B(M, K, etaY, etaZ, rho0, np.exp(ln_t[check]))
                                                 - B[check]))) if check.sum() else math.nan)
                yield {"M": M, "etaY": etaY, "rho0": rho0, "t0": start, "ln_t": ln_t, "B": B,
                       "closed_vs_integrated": agreement}


def check_snap_phase(ctx) -> Outcome:
    """Theorem 4, attention snapping (module docstring)."""
    rows = list(_snap_rows(ctx))
    # the O decisions start at 10t₀: nearer t₀, B_n still carries its 1/ln t transient beside the 1/ln ln t correction
    late = [r["ln_t"] >= math.log(10 * r["t0"]) for r in rows]
    points = [{"ln_t": float(v), "M": r["M"], "etaY": r["etaY"], "rho0": r["rho0"]}
              for r, keep in zip(rows, late, strict=True) for v in r["ln_t"][keep]]
    B = np.concatenate([r["B"][keep] for r, keep in zip(rows, late, strict=True)])
    ln_t = np.concatenate([r["ln_t"][keep] for r, keep in zip(rows, late, strict=True)])
    o_lnln = decide("O", B, np.log(ln_t), points, variables=[ALONG_LN_T_LOG], rel_err=1e-9)
    # e^{2B_n} is formed as e^{2B_n − ln ln t} so that it stays finite at t = e^{10⁴}
    o_chi = decide("O", np.exp(2 * B - np.log(ln_t)), np.ones(B.size), points, variables=[ALONG_LN_T],
                   rel_err=1e-9)
    fits = []
    for r in rows:
        ln_t0 = math.log(r["t0"])
        window = (r["ln_t"] >= ln_t0 + math.log(10)) & (r["ln_t"] <= ln_t0 + 4 * math.log(10) + 1e-9)
        fit = _log_slope(r["ln_t"][window], r["B"][window])
        fits.append({"M": r["M"], "etaY": r["etaY"], "rho0": r["rho0"], **fit,
                     "B_at_t0": float(r["B"][0]), "B_at_1e4_t0": float(r["B"][window][-1]),
                     "B_at_largest_t": float(r["B"][-1]), "closed_vs_integrated": r["closed_vs_integrated"]})
    growing = all(f["low"] > 0 for f in fits)
    low, high = min(f["slope"] for f in fits), max(f["slope"] for f in fits)
    worst_agreement = max(f["closed_vs_integrated"] for f in fits)
    parts = {"B_O_lnln": _part(o_lnln.status, f"B_n/ln ln t along t on [10t₀, e^{{10⁴}}]: {o_lnln.summary}",
                               decision=o_lnln.to_dict()),
             "chi_O_ln": _part(o_chi.status, f"e^{{2B_n}}/ln t along t on [10t₀, e^{{10⁴}}]: {o_chi.summary}", decision=o_chi.to_dict()),
             "grows": _part(Status.HOLDS if growing else Status.FAILS,
                            f"slope of B_n against ln ln t on [10t₀, 10⁴t₀] in [{low:.3f}, {high:.3f}] "
                            f"({'every' if growing else 'not every'} 95 % interval above 0; Eqn 130: ½)",
                            fits=fits)}
    status, summary = _overall(parts, ["B_O_lnln", "chi_O_ln", "grows"])
    return Outcome(status, summary + f"; closed form within {worst_agreement:.1e} of the integration",
                   {"parts": parts, "level_iii": "not run: the reduced attention ODE (Lemma 4) is part 2"})


_params = (Param("K", 10), Param("etaZ", 0.5), Param("rho0", 1.0, quick=(1.0, 3.0), full=(0.5, 1, 2, 3)),
           Param("etaY", 0.5, quick=(0.5, 2.0), full=(0.5, 1, 2, 5, 10)),
           Param("nu", "Y_over_Z", quick=("Y_over_Z",), choices=("Y_over_Z", "Z_over_Y")))
register(Claim(
    "ss.thm4.scan_phase", PAPER, "Theorem 4, attention scanning (L206; L949)", "claim", check_scan_phase,
    params=_params,
    statement="At the beginning of the training, γ(t) = O(η_Yt/K) and B_n(t) ≈ ¼ln K^{−1}(ρ₀⁴ + 2η_Yη_Zt²) = O(ln t); "
              "the growth factor of the dominant token l₀ is (sub-)linear: χ_{l₀}(t) >= e^{2f²_{nl₀}(0)B_n(t)} ≈ "
              "[K^{−1}(ρ₀⁴ + 2η_Yη_Zt²)]^{0.5f²_{nl₀}(0)}."))
register(Claim(
    "ss.thm4.snap_phase", PAPER, "Theorem 4, attention snapping (L207; L950); abstract (L12)", "claim",
    check_snap_phase, params=_params[:4],
    statement="When t >= t₀ := 2(1 + δ')K ln M/η_Y, B_n(t) = O(ln ln t): while B_n(t) still grows to infinite, the "
              "growth factor χ_{l₀}(t) = O(ln t) grows at a much slower logarithmic rate."))
