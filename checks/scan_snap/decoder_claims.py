"""Claims of spec §6.2 on Theorem 1's coefficients along modified-dynamics runs (``ss.thm1.delta_bounds``).

δ₁, δ₂, δ₃ are read off Eqns 86–89 as printed (R1): (1 + δ₁) = q₁(1 + θ_n) multiplies both 1 − E'_nn and
E'_nn', δ₂ = −q₀Σ_{k≠n}(1 + θ_k)E'_kn and δ₃ = q₀((1 + θ_n') + Σ_{k≠n}(1 + θ_k)E'_kn') (Eqn 88's sign); the
derived δ₃ (the expansion of Eqn 83, ``ss.dv.thm1_coefficients``) has −q₀(1 + θ_n') and is reported. They need
only θ_n = h(N_n)/h(N̄) − 1, σ (Eqn 71) and E' = I − (I + E)^{-1} of the features (the decoder itself is not
simulated): class counts of N = 300K steps (``round_robin`` and 200 ``iid_uniform`` draws), E at Z = 0 of
``ss.cfg.thm_hyp`` (both variants), ``ss.cfg.K3_shared`` and ``ss.cfg.lemma3``'s random ℙ. Theorem 1 assumes
Assumption 2 (R11): only configurations that satisfy it decide; the others are reported.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.decoder_items import _h
from checks.status import Status
from numerics.models.scan_snap.decoder import eprime


def _deltas(M: int, K: int, eta: float, E: np.ndarray, visits: np.ndarray, variant: str) -> dict[str, Any]:
    N_ = int(visits.sum())
    Nbar = math.ceil(N_ / K)
    h_n = _h(variant, visits, M, eta)
    h_bar = float(_h(variant, [Nbar], M, eta)[0])
    theta = h_n / h_bar - 1
    sigma = ((M - 1) + math.exp(M * h_bar)) / ((M - 1) + np.exp(M * h_n)) - 1
    Ep = eprime(E, "lemma14")
    q1, q0 = 1 + 1 / (M - 1), -M / (M - 1) ** 2
    d1 = q1 * (1 + theta) - 1
    d2 = np.array([-q0 * sum((1 + theta[k]) * Ep[k, n] for k in range(K) if k != n) for n in range(K)])
    d3 = np.array([[q0 * ((1 + theta[m]) + sum((1 + theta[k]) * Ep[k, m] for k in range(K) if k != n))
                    for m in range(K) if m != n] for n in range(K)])
    d3_derived = np.array([[q0 * (-(1 + theta[m]) + sum((1 + theta[k]) * Ep[k, m] for k in range(K) if k != n))
                            for m in range(K) if m != n] for n in range(K)])
    return {"N": N_, "theta": theta, "sigma": sigma, "d1": d1, "d2": d2, "d3": d3, "d3_derived": d3_derived,
            "bound": M / (M - 1) ** 2 * 2 * (1 + 3 * np.abs(d1))}


def _configurations(seed: int):
    from numerics.models.scan_snap.data import layout, random_P, setting_quantities

    for name, lay in (("thm_hyp.ct1", layout("thm_hyp.ct1")), ("thm_hyp.ct2", layout("thm_hyp.ct2")),
                      ("K3_shared", layout("K3_shared")), ("lemma3", random_P(seed))):
        q = setting_quantities(lay)
        yield name, lay.M, lay.K, np.array(q["E"]), q["assumption2_holds"]


def check_delta_bounds(ctx) -> Outcome:
    """L789: −1 < σ ≪ ln M; |δ₁| ≲ (K/√N)√ln(1/δ) + 1/M ≪ 1; |δ₂|, |δ₃| <= (M/(M−1)²)·2(1 + 3|δ₁|) < 3/M."""
    delta, eta, variant = float(ctx.value("delta")), float(ctx.value("etaY")), ctx.value("h_variant")
    visits_per_class = 300 if ctx.quick else 1000
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 89]))
    rows, decided = [], {"inside": [], "outside": []}
    for name, M, K, E, inside in _configurations(ctx.seed):
        N_ = visits_per_class * K
        samples = [np.full(K, visits_per_class)] + [np.bincount(rng.integers(0, K, N_), minlength=K)
                                                     for _ in range(200)]
        counts = {"sigma_gt_-1": [0, 0], "d2_bound": [0, 0], "d3_bound": [0, 0], "bound_lt_3/M": [0, 0]}
        d1_max, d2_max, d3_max, d3d_max, sig_max = 0.0, 0.0, 0.0, 0.0, 0.0
        for visits in samples:
            x = _deltas(M, K, eta, E, visits, variant)
            for key, ok in (("sigma_gt_-1", x["sigma"] > -1), ("d2_bound", np.abs(x["d2"]) <= x["bound"] + 1e-15),
                            ("d3_bound", np.abs(x["d3"]) <= x["bound"][:, None] + 1e-15),
                            ("bound_lt_3/M", x["bound"] < 3 / M)):
                ok = np.atleast_1d(ok)
                counts[key][0] += int(ok.sum())
                counts[key][1] += ok.size
            d1_max = max(d1_max, float(np.max(np.abs(x["d1"]))))
            d2_max = max(d2_max, float(np.max(np.abs(x["d2"]))))
            d3_max = max(d3_max, float(np.max(np.abs(x["d3"]))))
            d3d_max = max(d3d_max, float(np.max(np.abs(x["d3_derived"]))))
            sig_max = max(sig_max, float(np.max(np.abs(x["sigma"]))))
        rate = K / math.sqrt(N_) * math.sqrt(math.log(1 / delta)) + 1 / M
        row = {"configuration": name, "M": M, "K": K, "N": N_, "assumption2": inside, "counts": counts,
               "max_abs_d1": d1_max, "d1_over_rate": d1_max / rate, "max_abs_d2": d2_max, "max_abs_d3": d3_max,
               "max_abs_d3_derived": d3d_max, "three_over_M": 3 / M, "max_abs_sigma_over_lnM": sig_max / math.log(M)}
        rows.append(row)
        decided["inside" if inside else "outside"].append(row)
    if not decided["inside"]:
        return Outcome(Status.OUTSIDE, "no configuration satisfies Assumption 2", {"configurations": rows})
    failing = [(r["configuration"], k) for r in decided["inside"] for k, (ok, n) in r["counts"].items() if ok < n]
    status = Status.FAILS if failing else Status.HOLDS
    describe = lambda r: (f"{r['configuration']}: " + ", ".join(f"{k} {ok}/{n}" for k, (ok, n) in r["counts"].items())
                          + f", |δ₁| <= {r['max_abs_d1']:.3g} ({r['d1_over_rate']:.3f} × rate)")  # noqa: E731
    summary = ("inside Assumption 2: " + "; ".join(describe(r) for r in decided["inside"])
               + ("; outside (reported): " + "; ".join(describe(r) for r in decided["outside"])
                  if decided["outside"] else ""))
    return Outcome(status, summary, {"configurations": rows, "failing": failing})


register(Claim("ss.thm1.delta_bounds", "ss", "L789", "claim", check_delta_bounds,
               params=(Param("delta", 0.05), Param("etaY", 0.5),
                       Param("h_variant", "discrete", choices=("discrete", "continuous"))),
               statement="σ is defined in Cor. 1 and satisfies −1 < σ ≪ ln M; |δ₁| ≲ (K/√N)√ln(1/δ) + 1/M ≪ 1 and "
                         "|δ₂|, |δ₃| <= (M/(M−1)²)·2(1 + 3|δ₁|) < 3/M."))
