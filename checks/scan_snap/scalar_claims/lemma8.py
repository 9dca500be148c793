r"""Lemma 8 (L565–L575) and Remark 3 (L577): the roots u₀, u₁ of e^u = (M−1)u and ω₀, ω₁ along M.

First principles: ω₀ ln M = ln(M/(M−1)) + u₀ (Eqn 50 is an identity), ω₀ ≈ 2/(M ln M); ω₁ ln M = ln u₁ +
ln((M−1)/M), ω₁ ln M/ln ln M = 1 + O(1/ln M). Remark 3's chain "1/M^{1−ω₀} > 1/M^{0.99}" holds only when
ω₀ > 0.01, which Lemma 8 excludes for M ≫ 100: the printed inequality is reversed. The sweep along M reaches
10¹⁶ (full budget 10⁴⁰) at 50 digits. Registers ``ss.lemma8.asymptotics``.
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np

from checks.asymptotics import Asymptotic, decide, limit_of_ratio
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.scalar_claims._common import (
    _ETA_RANGE,
    _M_RANGE,
    FACTOR,
    PAPER,
    _domain,
    _overall,
    _part,
    roots,
)
from checks.status import Status, combine
from numerics.models.scan_snap import scalar as N

M_LEMMA8_CFG = (30.0, 33.0, 34.0, 100.0, 125.0, 240.0, 1000.0, 1e4, 50272.0)


def _M_lemma8(budget: str) -> tuple[float, ...]:
    top, count = (1e16, 15) if budget == "quick" else (1e40, 60)
    return tuple(sorted(set(M_LEMMA8_CFG) | {float(f"{m:.6g}") for m in np.geomspace(30, top, count)}))


def _lemma8_values(Ms: tuple[float, ...]) -> list[dict[str, float]]:
    out = []
    with mpmath.workdps(50):
        for M in Ms:
            Mp = mpmath.mpf(M)
            u0 = -mpmath.lambertw(-1 / (Mp - 1))
            u1 = -mpmath.lambertw(-1 / (Mp - 1), -1)
            lnM = mpmath.log(Mp)
            w0, w1 = 1 + mpmath.log(u0) / lnM, u1 / lnM - 1
            eq50 = w0 - (mpmath.log(Mp / (Mp - 1)) + Mp ** (w0 - 1)) / lnM
            eq51 = Mp**w1 - (1 + w1) * lnM * (Mp - 1) / Mp
            out.append({"M": M, "u0": float(u0), "u1": float(u1), "omega0": float(w0), "omega1": float(w1),
                        "c_prime": float(1 + w1), "eq50_residual": float(abs(eq50)),
                        "eq51_residual_rel": float(abs(eq51) / Mp**w1),
                        "omega0_M^0.99_lnM": float(w0 * Mp ** mpmath.mpf("0.99") * lnM),
                        "omega0_M_lnM": float(w0 * Mp * lnM),
                        "omega1_lnM_over_lnlnM": float(w1 * lnM / mpmath.log(lnM)),
                        "M^-(1-omega0)_minus_M^-0.99": float(Mp ** (w0 - 1) - Mp ** mpmath.mpf("-0.99"))})
    return out


@N.jit
def _zero_crossings(taus, M):
    # sign changes of φ = e^u − (M − 1)u along u = Mh(τ)
    count = 0
    prev = 0.0
    for i in range(taus.size):
        u = M * N.h_of_tau(taus[i], M)
        phi = math.exp(u) - (M - 1.0) * u if u < 700.0 else math.inf
        if i > 0 and (phi > 0.0) != (prev > 0.0):
            count += 1
        prev = phi
    return count


def remark3_rows(Ms, etas, n_grid: int) -> list[dict[str, Any]]:
    """Compare h(1) with η_Y/M and the lower root; count the zeros of e^{Mh(t)} − (M−1)Mh(t) on t ≥ 1."""
    rows = []
    for M in Ms:
        u0, u1 = roots(M)
        w0 = 1 + math.log(u0) / math.log(M)
        for eta in etas:
            u_1 = M * N.h_of_tau(eta, M)
            t_bal = (2 * (M - 1) * u1 - 1) / (M * eta)
            taus = eta * np.geomspace(1, 1e4 * max(t_bal, 1.0), n_grid)
            rows.append({"M": M, "etaY": eta, "Mh(1)_over_etaY": u_1 / eta, "h(1)_over_lower_root": u_1 / u0,
                         "zeros_on_grid": int(_zero_crossings(taus, M)),
                         "zeros_exact": int(u_1 < u0) + int(u_1 < u1),

                         "inside": bool(M >= FACTOR * 100 and eta * M ** (1 - w0) >= FACTOR)})
    return rows


def _first_below(Ms, values, level: float) -> str:
    hits = [M for M, v in zip(Ms, values, strict=True) if v <= level]
    return f"{hits[0]:g}" if hits else "none on the grid"


def check_lemma8(ctx) -> Outcome:
    """Lemma 8 (L565–L575) and Remark 3 (L577).

    ω₁ = Θ(ln ln M/ln M); ω₀ ≲ 1/(M^{0.99} ln M) ≪ 0.01 (M ≫ 100); c' ∈ (0.5, 2); 0 < ω_i ≪ 1;
    η_Y ≫ 1/M^{1−ω₀} > 1/M^{0.99} ⇒ h(1) ≳ η_Y/M ≫ 1/M^{2−ω₀} and one zero on [1, ∞).
    """
    Ms = tuple(sorted(float(m) for m in ctx.grid("M", _M_lemma8(ctx.budget))))
    rows = _lemma8_values(Ms)
    col = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    parts: dict[str, dict[str, Any]] = {}
    big = np.array(Ms) >= FACTOR * 100
    if len(Ms) >= 4:
        parts.update(_lemma8_asymptotics(Ms, col, big))
    else:
        parts["asymptotics"] = _part(Status.INCONCLUSIVE, f"{len(Ms)} value(s) of M: Θ/O/≪ need a sweep "
                                     f"along M")
    pos = bool(np.all(col["omega0"] > 0) and np.all(col["omega1"] > 0))
    cp_ok = bool(np.all((col["c_prime"] > 0.5) & (col["c_prime"] < 2)))
    parts["positive_and_c_prime"] = _part(
        Status.HOLDS if pos and cp_ok else Status.FAILS,
        f"0 < ω₀, ω₁ at every M ({pos}); c' = 1 + ω₁ ∈ [{col['c_prime'].min():.4f}, "
        f"{col['c_prime'].max():.4f}] ⊂ (0.5, 2) ({cp_ok}) — c' is not a constant but 1 + ω₁ → 1; Eqn 50 "
        f"residual ≤ {col['eq50_residual'].max():.1e}, Eqn 51 ≤ {col['eq51_residual_rel'].max():.1e} "
        f"(identities); 'ω_i, i = 2, 3' reads i = 0, 1 (R4)")
    chain = col["M^-(1-omega0)_minus_M^-0.99"]
    viol = [(M, v) for M, v, b in zip(Ms, chain, big, strict=True) if b and not v > 0]
    if viol:
        text = (f"'1/M^(1−ω₀) > 1/M^0.99' holds iff ω₀ > 0.01; false at {len(viol)}/{int(big.sum())} "
                f"M ≥ 1000 (e.g. M={viol[0][0]:g}: M^-(1−ω₀) − M^-0.99 = {viol[0][1]:.3g}): the printed "
                f"inequality is reversed, so η_Y ≫ M^-0.99 is the stronger hypothesis (the remark's "
                f"conclusion survives)")
    else:
        text = "holds at every M ≥ 1000" if big.any() else "no M ≥ 1000 on the grid"
    parts["remark3_chain"] = _part(Status.FAILS if viol else (Status.HOLDS if big.any() else Status.OUTSIDE),
                                   text, violations=[{"M": M, "difference": v} for M, v in viol])
    r3 = remark3_rows([M for M in Ms if M <= 1e16], [float(e) for e in ctx.grid("etaY")],
                      400 if ctx.quick else 2000)
    parts.update(_remark3_parts(r3))
    status, summary = _overall(parts, list(parts))
    return Outcome(status, summary, {"parts": parts, "rows": rows, "remark3": r3,
                                     "regime": "M ≫ 100: M ≥ 1000; Remark 3: η_Y M^(1−ω₀) ≥ 10"})


def _lemma8_asymptotics(Ms, col, big) -> dict[str, dict[str, Any]]:
    """ω₁ = Θ(ln ln M/ln M), ω₀ = O(1/(M^0.99 ln M)) and the "≪" of Lemma 8, decided along M."""
    points = [{"M": M} for M in Ms]
    lnM = np.log(col["M"])
    d1 = decide("Theta", col["omega1"], np.log(lnM) / lnM, points, variables=[Asymptotic("M", scale="log")],
                rel_err=1e-12)
    d0 = decide("O", col["omega0"], 1 / (col["M"] ** 0.99 * lnM), points, variables=[Asymptotic("M")],
                rel_err=1e-12)
    d0s = decide("Theta", col["omega0"], 1 / (col["M"] * lnM), points, variables=[Asymptotic("M")],
                 rel_err=1e-12)
    z1 = limit_of_ratio(col["M"], col["omega1"], variable=Asymptotic("M"), rel_err=1e-12)
    z0 = (limit_of_ratio(col["M"][big], col["omega0"][big] / 0.01, variable=Asymptotic("M"), rel_err=1e-12)
          if big.sum() >= 4 else None)
    small = combine([Status.HOLDS if z1.behaviour == "to_zero" else Status.INCONCLUSIVE,
                     Status.HOLDS if z0 is not None and z0.behaviour == "to_zero" else Status.INCONCLUSIVE])
    w1 = col["omega1"]
    max_w0 = col["omega0"][big].max() if big.any() else math.nan
    return {
        "omega1_Theta": _part(d1.status, f"ω₁ ln M/ln ln M: {d1.summary} (first principles 1 + O(1/ln M))",
                              decision=d1.to_dict()),
        "omega0_O": _part(d0.status, f"Eqn 50 / 'ω₀ ≲ 1/(M^0.99 ln M)': {d0.summary}; the sharp rate is "
                          f"Θ(1/(M ln M)): {d0s.summary} (first principles 2)", decision=d0.to_dict(),
                          sharp=d0s.to_dict()),
        "omega_small": _part(small, f"ω₁ → 0 along M: {z1.behaviour} (ω₁ = {w1[0]:.3f} at M={Ms[0]:g}, "
                             f"{w1[-1]:.3f} at M={Ms[-1]:g}; the first M with ω₁ ≤ 0.1: "
                             f"{_first_below(Ms, w1, 0.1)}); ω₀/0.01 → 0 for M ≫ 100: "
                             f"{z0.behaviour if z0 else 'too few M ≥ 1000'} (max ω₀ = {max_w0:.3g} at "
                             f"M ≥ 1000)",
                             omega1_to_zero=z1.to_dict(), omega0_over_001=z0.to_dict() if z0 else None),
    }


def _remark3_parts(r3) -> dict[str, dict[str, Any]]:
    """Remark 3 inside its regime: h(1) ≳ η_Y/M (Ω along M) and one zero of φ(h(t)) on t ≥ 1."""
    ins = [r for r in r3 if r["inside"]]
    if not ins:
        return {"remark3": _part(Status.OUTSIDE, "no (M, η_Y) inside Remark 3's regime")}
    zeros_bad = [r for r in ins if r["zeros_exact"] != 1 or r["zeros_on_grid"] != 1]
    disagree = [r for r in r3 if r["zeros_on_grid"] != r["zeros_exact"]]
    dh = decide("Omega", [r["Mh(1)_over_etaY"] for r in ins], np.ones(len(ins)),
                [{"M": r["M"], "etaY": r["etaY"]} for r in ins], variables=[Asymptotic("M")], rel_err=1e-12)
    two = sum(r["zeros_exact"] == 2 for r in r3 if not r["inside"])
    return {
        "remark3_h1": _part(dh.status, f"Mh(1)/η_Y (h(1) ≳ η_Y/M): {dh.summary}; min "
                            f"{min(r['Mh(1)_over_etaY'] for r in ins):.3f}; h(1)/M^-(2−ω₀) ≥ "
                            f"{min(r['h(1)_over_lower_root'] for r in ins):.3g} inside the remark's regime",
                            decision=dh.to_dict()),
        "remark3_one_zero": _part(
            Status.FAILS if zeros_bad else (Status.INCONCLUSIVE if disagree else Status.HOLDS),
            f"one zero of e^(Mh(t)) − (M−1)Mh(t) on [1, ∞) at {len(ins) - len(zeros_bad)}/{len(ins)} inside "
            f"points (grid count = root count at {len(r3) - len(disagree)}/{len(r3)}); outside the regime: "
            f"{two} points with two zeros"),
    }

# ---------------------------------------------------------------------------------------------------------
# registration

register(Claim(
    "ss.lemma8.asymptotics", PAPER, "Lemma 8 (L565–L575), Remark 3 (L577)", "claim", check_lemma8,
    statement="ω₁ = Θ(ln ln M/ln M), and if M ≫ 100, ω₀ ≲ 1/(M^0.99 ln M) ≪ 0.01 (Eqn 50: "
              "= O(1/(M^0.99 ln M))); c' ∈ (0.5, 2) is some universal constant; 0 < ω_i ≪ 1. Remark 3: if "
              "η_Y ≫ 1/M^(1−ω₀) > 1/M^0.99, then h(1) ≳ η_Y/M ≫ 1/M^(2−ω₀) and exp(Mh(t)) − (M−1)Mh(t) has "
              "only one zero point "

              "(1+ω₁) ln M/M in [1, ∞).",
    params=(Param("M", 1000.0, doc="swept: ss.cfg.lemma8 and a log grid to 1e16 (full 1e40)"),
            Param("etaY", 0.5, quick=(0.01, 0.1, 0.5, 1.0))),
    domain=_domain(M=_M_RANGE, etaY=_ETA_RANGE), doc=check_lemma8.__doc__))
