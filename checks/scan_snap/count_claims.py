"""Coverage claims of spec §6.1–§6.2 on multinomial counts: Lemma 18 (token counts), Lemma 10, Remark 4 and
Lemma 11 (class counts under ``iid_uniform``).

Each "with probability at least 1 − δ" statement is decided twice (spec R13):

* exactly: the count of one token (class) is Binomial(n, p), so the probability of the printed event is a
  finite sum of binomial probabilities (SciPy), compared with 1 − δ;
* by Monte Carlo: counts drawn by the counter-based multinomial sampler (:mod:`numerics.categorical`,
  independent of the thread count), the event's frequency with its Clopper–Pearson 95 % interval.

The exact probability decides; the Monte-Carlo interval must contain it (otherwise the item is
``inconclusive``: one of the two methods is wrong). Simultaneous coverage over all tokens (classes), which
the statements do not claim, is reported from the Monte Carlo.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status, combine
from numerics.categorical import sample_counts
from numerics.models.scan_snap import scalar as N
from numerics.models.scan_snap.data import layout
from numerics.statistics import clopper_pearson

PAPER = "ss"


def binomial_event_probability(n: int, p: float, inside) -> float:
    """P(inside(k)) for k ~ Binomial(n, p), summed over the support (``inside`` takes an array of k)."""
    k = np.arange(n + 1)
    total = float(np.sum(stats.binom.pmf(k, n, p)[inside(k)]))
    return min(total, 1.0)  # the pmf summed over the whole support rounds to 1 + 2e-16


def coverage(exact: float, hits: int, trials: int, target: float) -> dict[str, Any]:
    """One coverage record: the exact probability against ``target`` and the Monte-Carlo 95 % interval."""
    ci = clopper_pearson(int(hits), int(trials))
    return {"exact": exact, "target": target, "holds": exact >= target - 1e-12, "mc_fraction": ci.fraction,
            "mc_interval": [ci.lower, ci.upper], "mc_below_target": ci.compare(target) == "below",
            "hits": int(hits), "trials": int(trials)}


def decide_coverage(records: list[dict[str, Any]], head: str) -> Outcome:
    """Fails when an exact probability is below its target; inconclusive when Monte Carlo disagrees with it.

    Agreement is tested with Clopper–Pearson intervals at level 1 − 0.01/n (Bonferroni over the n records), so
    that an honest run is called a disagreement with probability below 1 % whatever the number of cases.
    """
    level = 1 - 0.01 / len(records)
    for r in records:
        wide = clopper_pearson(r["hits"], r["trials"], level=level)
        r["agreement_interval"] = [wide.lower, wide.upper]
        r["mc_contains_exact"] = bool(wide.lower <= r["exact"] <= wide.upper)
    disagree = [r for r in records if not r["mc_contains_exact"]]
    failing = [r for r in records if not r["holds"]]
    worst = min(records, key=lambda r: r["exact"] - r["target"])
    status = Status.FAILS if failing else Status.HOLDS
    text = (f"{head}: exact coverage ≥ 1 − δ in {len(records) - len(failing)}/{len(records)} cases; smallest margin "
            f"{worst['exact'] - worst['target']:+.4f} at {', '.join(f'{k}={v}' for k, v in worst['case'].items())}")
    if disagree:
        status = Status.INCONCLUSIVE
        text += f"; Monte Carlo disagrees with the exact probability in {len(disagree)} cases (a bug)"
    return Outcome(status, text, {"records": records})


def _h_at(M: float, eta: float):
    """s ↦ h(η_Y s) on any array of visit counts (Lemma 6; :func:`numerics.models.scan_snap.scalar.h_many`)."""
    def h(visits):
        visits = np.asarray(visits, dtype=float)
        return N.h_many(eta * visits.ravel(), float(M)).reshape(visits.shape)
    return h


def check_hoeffding(ctx) -> Outcome:
    """Lemma 18, Eqn 134: max(0, ℙ − ε) <= q_l <= ℙ + ε with probability >= 1 − δ, ε = √(ln(2/δ)/(2(T−1)))."""
    P = layout("synsmall.code").P[0]
    P = P[P > 0]  # ss.cfg.mc_lemma2: class 1's 20 contextual tokens
    reps = 1000 if ctx.quick else 2000
    records, simultaneous = [], []
    for T in ctx.grid("T"):
        for delta in ctx.grid("delta"):
            eps = math.sqrt(math.log(2 / delta) / (2 * (T - 1)))
            counts = sample_counts(P, T - 1, reps, seed=ctx.seed, stream=int(T))
            q = counts / (T - 1)
            inside = (q >= np.maximum(0.0, P - eps)) & (q <= P + eps)
            for l, p in enumerate(P):
                exact = binomial_event_probability(T - 1, p, lambda k, p=p: np.abs(k / (T - 1) - p) <= eps + 1e-15)
                rec = coverage(exact, int(inside[:, l].sum()), reps, 1 - delta)
                rec["case"] = {"T": T, "delta": delta, "token": l}
                records.append(rec)
            simultaneous.append({"T": T, "delta": delta, "all_tokens": clopper_pearson(
                int(np.all(inside, axis=1).sum()), reps).to_dict()})
    outcome = decide_coverage(records, "per-token band of Eqn 134")
    outcome.evidence["simultaneous_coverage"] = simultaneous
    return outcome


def _class_counts(ctx, K: int, N_: int, reps: int) -> np.ndarray:
    return sample_counts(np.full(K, 1.0 / K), N_, reps, seed=ctx.seed, stream=1000 * K + int(math.log10(N_)))


def check_class_counts(ctx) -> Outcome:
    """Lemma 10, Eqn 58: |N_n − ⌈N/K⌉| <= √((N/2)ln(2/δ)) + 1 < √(N ln(2/δ)) with probability >= 1 − δ."""
    reps = 2000 if ctx.quick else 10_000
    records, second, simultaneous = [], [], []
    for K in ctx.grid("K"):
        for N_ in ctx.grid("N"):
            counts = _class_counts(ctx, K, N_, reps)
            for delta in ctx.grid("delta"):
                bound = math.sqrt(N_ / 2 * math.log(2 / delta)) + 1
                second.append({"K": K, "N": N_, "delta": delta, "holds": bound < math.sqrt(N_ * math.log(2 / delta)),
                               "lhs": bound, "rhs": math.sqrt(N_ * math.log(2 / delta))})
                target = math.ceil(N_ / K)
                inside = np.abs(counts - target) <= bound
                exact = binomial_event_probability(N_, 1 / K, lambda k: np.abs(k - target) <= bound)
                rec = coverage(exact, int(inside[:, 0].sum()), reps, 1 - delta)
                rec["case"] = {"K": K, "N": N_, "delta": delta}
                records.append(rec)
                simultaneous.append({"K": K, "N": N_, "delta": delta,
                                     "all_classes": clopper_pearson(int(np.all(inside, axis=1).sum()), reps).to_dict()})
    outcome = decide_coverage(records, "per-class bound of Eqn 58")
    bad = [s for s in second if not s["holds"]]
    if bad:
        outcome.status = combine([Status(outcome.status), Status.FAILS]).value
        outcome.summary += f"; the second inequality of Eqn 58 fails at {len(bad)} (N, δ) (ss.dv.lemma10_region)"
    outcome.evidence.update(second_inequality=second, simultaneous_coverage=simultaneous)
    return outcome


def check_remark4(ctx) -> Outcome:
    """Remark 4, Eqn 60: |N_n − N̄| <= Δ = ⌈√(N ln(1/δ))⌉ with probability >= 1 − δ (constant 1 in "≲"), and
    Δ/N̄ against (K/√N)√(ln(1/δ))."""
    reps = 2000 if ctx.quick else 10_000
    records, ratios = [], []
    for K in ctx.grid("K"):
        for N_ in ctx.grid("N"):
            counts = _class_counts(ctx, K, N_, reps)
            for delta in ctx.grid("delta"):
                Delta = math.ceil(math.sqrt(N_ * math.log(1 / delta)))
                Nbar = math.ceil(N_ / K)
                exact = binomial_event_probability(N_, 1 / K, lambda k: np.abs(k - Nbar) <= Delta)
                rec = coverage(exact, int((np.abs(counts[:, 0] - Nbar) <= Delta).sum()), reps, 1 - delta)
                rec["case"] = {"K": K, "N": N_, "delta": delta}
                records.append(rec)
                ratios.append({"K": K, "N": N_, "delta": delta, "Delta_over_Nbar": Delta / Nbar,
                               "rate": K / math.sqrt(N_) * math.sqrt(math.log(1 / delta)),
                               "ratio": Delta / Nbar / (K / math.sqrt(N_) * math.sqrt(math.log(1 / delta)))})
    outcome = decide_coverage(records, "|N_n − N̄| <= Δ (Eqn 60 with constant 1)")
    r = [x["ratio"] for x in ratios]
    outcome.summary += f"; Δ/N̄ over (K/√N)√ln(1/δ) in [{min(r):.3f}, {max(r):.3f}]"
    outcome.evidence["rate_ratios"] = ratios
    return outcome


def check_h_concentration(ctx) -> Outcome:
    """Lemma 11, Eqns 61, 63: every link of |h(N_n) − h(N̄)| <= h(N̄) − h(N̄−Δ) <= ḣ(N̄−Δ)Δ <= h(N̄)Δ/(N̄−Δ), at
    every N_n of the support, and the probability (exact) that the chain's premise |N_n − N̄| <= Δ holds."""
    M, eta = float(ctx.value("M")), float(ctx.value("etaY"))
    records, links = [], []
    for K in ctx.grid("K"):
        for N_ in ctx.grid("N"):
            for delta in ctx.grid("delta"):
                Delta = math.ceil(math.sqrt(N_ * math.log(1 / delta)))
                Nbar = math.ceil(N_ / K)
                if Nbar - Delta <= 0:
                    links.append({"K": K, "N": N_, "delta": delta, "outside": "N̄ − Δ <= 0 (N not ≫ K²)"})
                    continue
                h = lambda s: N.h_of_tau(eta * s, M)  # noqa: E731
                hdot = eta / ((M - 1) + math.exp(M * h(Nbar - Delta)))
                chain = [h(Nbar) - h(Nbar - Delta), hdot * Delta, h(Nbar) * Delta / (Nbar - Delta)]
                ks = np.arange(max(0, Nbar - Delta), Nbar + Delta + 1)
                lhs = np.array([abs(h(k) - h(Nbar)) for k in ks])
                tol = 1e-12 * h(Nbar)
                ok = bool(np.all(lhs <= chain[0] + tol) and chain[0] <= chain[1] + tol and chain[1] <= chain[2] + tol)
                links.append({"K": K, "N": N_, "delta": delta, "Delta": Delta, "Nbar": Nbar,
                              "max_lhs": float(lhs.max()), "chain": chain, "holds": ok})
                exact = binomial_event_probability(N_, 1 / K, lambda k: np.abs(k - Nbar) <= Delta)
                counts = _class_counts(ctx, K, N_, 2000)
                rec = coverage(exact, int((np.abs(counts[:, 0] - Nbar) <= Delta).sum()), 2000, 1 - delta)
                rec["case"] = {"K": K, "N": N_, "delta": delta}
                records.append(rec)
    inside = [link for link in links if "outside" not in link]
    if not inside:
        return Outcome(Status.OUTSIDE, "N̄ − Δ <= 0 at every grid point: the chain of Eqn 63 is not defined",
                       {"links": links})
    outcome = decide_coverage(records, "premise |N_n − N̄| <= Δ")
    bad = [link for link in inside if not link["holds"]]
    if bad:
        outcome.status = Status.FAILS.value
    outcome.summary += (f"; chain of Eqn 63 holds at every N_n within Δ of N̄ in {len(inside) - len(bad)}/"
                        f"{len(inside)} (K, N, δ) (M = {M:g}, η_Y = {eta})")
    outcome.evidence["chain"] = links
    return outcome


register(Claim("ss.lemma18.hoeffding", PAPER, "Lemma 18, Eqns 134, 136 (L1037–L1049)", "claim", check_hoeffding,
               params=(Param("T", 128, quick=(16, 128, 1024), full=tuple(16 * 2**k for k in range(11))),
                       Param("delta", 0.05, quick=(0.05,), full=(0.05, 0.1))),
               statement="With probability at least 1 − δ, max(0, ℙ(l|m,n) − √(ln(2/δ)/(2(T−1)))) <= q_{l|m,n} <= "
                         "ℙ(l|m,n) + √(ln(2/δ)/(2(T−1))) (Eqn 134); ℙ(|q − ℙ| >= t) <= 2exp(−2(T−1)t²) (Eqn 136)."))
register(Claim("ss.lemma10.class_counts", PAPER, "Lemma 10, Eqns 58–59 (L614–L622)", "claim", check_class_counts,
               params=(Param("K", 2, quick=(2, 10)), Param("N", 100, quick=(10, 100, 1000, 10_000)),
                       Param("delta", 0.05, quick=(0.01, 0.05, 0.2))),
               statement="For δ ∈ (0, 1), with probability at least 1 − δ, |N_n − ⌈Nℙ(n)⌉| <= √((N/2)ln(2/δ)) + 1 < "
                         "√(N ln(2/δ)) (58); ℙ(|N_n/N − ℙ(n)| > t) <= 2exp(−2Nt²) (59)."))
register(Claim("ss.rem4.concentration", PAPER, "Remark 4, Eqn 60 (L624–L626); L413", "claim", check_remark4,
               params=(Param("K", 2, quick=(2, 10)), Param("N", 1000, quick=(100, 10_000), full=(100, 1000, 10_000,
                                                                                                   100_000)),
                       Param("delta", 0.05, quick=(0.05,), full=(0.01, 0.05, 0.2))),
               statement="Δ = ⌈√(N ln(1/δ))⌉; with probability at least 1 − δ, |N_n − N̄| ≲ Δ ≪ N̄; "
                         "Δ/N̄ ≍ (K/√N)√ln(1/δ) ≪ 1 since N ≫ K²."))
register(Claim("ss.lemma11.h_concentration", PAPER, "Lemma 11, Eqns 61, 63 (L630–L640)", "claim",
               check_h_concentration,
               params=(Param("K", 2, quick=(2, 10)), Param("N", 1000, quick=(1000, 10_000), full=(100, 1000, 10_000,
                                                                                                    100_000)),
                       Param("delta", 0.05, quick=(0.05,)), Param("M", 1000), Param("etaY", 0.5)),
               statement="|h(N_n) − h(N̄)| ≲ h(N̄)Δ/N̄ (61); |h(N_n) − h(N̄)| <= h(N̄) − h(N̄ − Δ) <= ḣ(N̄ − Δ)Δ <= "
                         "h(N̄)Δ/(N̄ − Δ) ≍ h(N̄)Δ/N̄ (63), with probability at least 1 − δ."))


def check_theta_bound(ctx) -> Outcome:
    """Lemma 12 / Theorem 5: with probability >= 1 − δ, max_i |θ_i| ≲ (K/√N)√ln(K/δ), θ_i = h(N_i)/h(N̄) − 1.

    The (1 − δ)-quantile of max_i |θ_i| over Monte-Carlo class counts (``iid_uniform``), divided by the printed
    rate, is decided as O(1) along N (spec R10, :func:`checks.asymptotics.decide`, a relative accuracy of 5 %
    for the sampled quantile), for every K, M, η_Y of the grid; N ≫ K² is required of the points that decide.
    """
    from checks.asymptotics import Asymptotic, decide

    reps = 2000 if ctx.quick else 10_000
    delta = float(ctx.value("delta"))
    observed, rate, points, regime = [], [], [], []
    for K in ctx.grid("K"):
        for M in ctx.grid("M"):
            for eta in ctx.grid("etaY"):
                for N_ in ctx.grid("N"):
                    counts = _class_counts(ctx, K, N_, reps)
                    Nbar = math.ceil(N_ / K)
                    h = _h_at(M, eta)
                    hbar = float(h(Nbar))
                    theta = np.abs(h(counts) / hbar - 1)
                    q = float(np.quantile(theta.max(axis=1), 1 - delta))
                    observed.append(q)
                    rate.append(K / math.sqrt(N_) * math.sqrt(math.log(K / delta)))
                    points.append({"N": N_, "K": K, "M": M, "etaY": eta})
                    regime.append(N_ >= 10 * K**2)
    decision = decide("O", observed, rate, points, variables=[Asymptotic("N", "inf", "algebraic")], rel_err=0.05,
                      regime=regime, regime_name="N ≫ K² (N >= 10K²)")
    ratios = np.array(observed) / np.array(rate)
    return Outcome(decision.status.value if hasattr(decision.status, "value") else decision.status,
                   f"(1 − δ)-quantile of max|θ_i| over (K/√N)√ln(K/δ): {decision.summary}; ratio in "
                   f"[{ratios.min():.3f}, {ratios.max():.3f}]",
                   {"decision": decision.to_dict() if hasattr(decision, "to_dict") else str(decision),
                    "points": points, "quantile": observed, "rate": rate})


register(Claim("ss.lemma12.theta_bound", PAPER, "Lemma 12 (L664), Theorem 5 (L684)", "claim", check_theta_bound,
               params=(Param("K", 2, quick=(2, 10)), Param("N", 10_000, quick=(1000, 3000, 10_000, 30_000, 100_000),
                                                           full=(1000, 3000, 10_000, 30_000, 100_000, 300_000)),
                       Param("M", 1000), Param("etaY", 0.5, quick=(0.5,), full=(0.1, 0.5)),
                       Param("delta", 0.05)),
               statement="If N ≫ K², with probability at least 1 − δ, |θ_i| ≲ (K/√N)√ln(K/δ) for all i ∈ [K]."))


def check_cor1_convergence(ctx) -> Outcome:
    """Corollary 1 (L690–L706): σ > −1; w.p. >= 1 − δ, |σ| ≲ η_Y√(N ln(1/δ)) and, late, |σ| ≲ (K/√N)√ln(1/δ);
    ‖e_n − α_n‖ <= ε needs at most O(K/(εη_Y)·log(M/ε)) steps; the residual decays like O(1/N).

    σ from Eqn 71: 1 + σ = ((M−1) + e^{Mh(N̄)})/((M−1) + e^{Mh(N_n)}) under ``iid_uniform`` classes (the exact
    binomial law of N₁ for K = 2, Monte-Carlo class counts otherwise); the (1 − δ)-quantiles of |σ| over the printed rates are decided O(1) along N (R10); the
    exact step count S(ε)·K (ss.dv.cor1_exact_steps) over the printed rate O(1) along 1/ε; the residual
    ‖e_n − α_n‖ at the state after N steps (round-robin) against 1/N along N (O).
    """
    from checks.asymptotics import Asymptotic, decide

    K, delta = int(ctx.value("K")), float(ctx.value("delta"))
    reps = 1000 if ctx.quick else 10_000
    parts, records = {}, {}
    for M, eta in ((100, 0.5), (1000, 0.1)):
        h = _h_at(M, eta)
        q, late, rate_early, rate_late, points, above_minus_one = [], [], [], [], [], True
        for N_ in ctx.grid("N"):
            Nbar = math.ceil(N_ / K)
            if K == 2:
                # exact: N₁ ~ Binomial(N, 1/2), N₂ = N − N₁; the (1 − δ)-quantile of max|σ| from the pmf
                sd = math.sqrt(N_) / 2
                n1 = np.arange(max(0, int(N_ / 2 - 12 * sd)), min(N_, int(N_ / 2 + 12 * sd)) + 1)
                both = np.stack([n1, N_ - n1], axis=1)
                sigma = ((M - 1) + np.exp(M * h(Nbar))) / ((M - 1) + np.exp(M * h(both))) - 1
                worst = np.abs(sigma).max(axis=1)
                order = np.argsort(worst)
                cdf = np.cumsum(stats.binom.pmf(n1[order], N_, 0.5))
                value = float(worst[order][np.searchsorted(cdf, 1 - delta)])
            else:
                counts = _class_counts(ctx, K, N_, reps)
                sigma = ((M - 1) + np.exp(M * h(Nbar))) / ((M - 1) + np.exp(M * h(counts))) - 1
                value = float(np.quantile(np.abs(sigma).max(axis=1), 1 - delta))
            above_minus_one &= bool(np.all(sigma > -1))
            q.append(value)
            rate_early.append(eta * math.sqrt(N_ * math.log(1 / delta)))
            rate_late.append(K / math.sqrt(N_) * math.sqrt(math.log(1 / delta)))
            points.append({"N": N_, "M": M, "etaY": eta})
        regime_late = [p["N"] >= 10 * K * (math.sqrt(p["N"] * math.log(1 / delta)) + 2 * 1.5 * math.log(M) / eta)
                       for p in points]
        var = [Asymptotic("N", "inf", "algebraic")]
        # the quantile's accuracy: the lattice of N₁ (exact law, K = 2), else the Monte Carlo's
        accuracy = 0.01 if K == 2 else 0.05
        parts[f"sigma_early M={M}"] = decide("O", q, rate_early, points, variables=var, rel_err=accuracy)
        parts[f"sigma_late M={M}"] = decide("O", q, rate_late, points, variables=var, rel_err=accuracy,
                                            regime=regime_late,
                                            regime_name="N ≫ K(√(N ln(1/δ)) + 2(1+ω₁)ln M/η_Y)")
        records[f"M={M}, etaY={eta}"] = {"N": [p["N"] for p in points], "sigma_quantile": q,
                                         "sigma_above_minus_one": above_minus_one}
        eps = np.array([1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4])
        E = (M - 1) * (np.sqrt(M / (M - 1)) / eps - 1)
        steps = K * (E + (M - 1) * np.log(E) - 1) / (M * eta)
        printed = K / (eps * eta) * np.log(M / eps)
        parts[f"steps M={M}"] = decide("O", steps, printed, [{"inv_eps": 1 / e} for e in eps],
                                       variables=[Asymptotic("inv_eps", "inf", "algebraic")], rel_err=1e-9)
        Ns = np.array([10, 30, 100, 300, 1000, 3000]) * K
        hs = N.h_star(int(Ns[-1] // K) + 1, float(M), eta)
        residual = (M - 1) * math.sqrt(M / (M - 1)) / ((M - 1) + np.exp(M * hs[Ns // K]))
        parts[f"rate M={M}"] = decide("O", residual, 1.0 / Ns, [{"N": float(n)} for n in Ns],
                                      variables=[Asymptotic("N", "inf", "algebraic")], rel_err=1e-9)
        records[f"M={M}, etaY={eta}"].update(step_ratio=(steps / printed).tolist(), residual=residual.tolist())
    statuses = [p.status for p in parts.values()]
    all_above = all(r["sigma_above_minus_one"] for r in records.values())
    status = combine([*statuses, Status.HOLDS if all_above else Status.FAILS])
    summary = (f"σ > −1 at every sample: {all_above}; " + "; ".join(f"{k}: {v.status.value}" for k, v in parts.items())
               + f"; S/(K/(εη_Y)·ln(M/ε)) from {min(min(r['step_ratio']) for r in records.values()):.3f} to "
                 f"{max(max(r['step_ratio']) for r in records.values()):.3f}")
    return Outcome(status, summary, {"parts": {k: v.to_dict() for k, v in parts.items()}, "records": records})


register(Claim("ss.cor1.convergence", PAPER, "Corollary 1 (L690–L706), Eqns 72–73", "claim", check_cor1_convergence,
               params=(Param("K", 2), Param("delta", 0.05),
                       Param("N", 10_000, quick=(1000, 3000, 10_000, 30_000, 100_000, 300_000, 10**6, 3 * 10**6),
                             full=(1000, 3000, 10_000, 30_000, 100_000, 300_000, 10**6, 3 * 10**6, 10**7))),
               statement="σ > −1 and with probability at least 1 − δ, |σ| ≲ η_Y√(N ln(1/δ)); when N ≫ K(√(N ln(1/δ)) + "
                         "2(1+ω₁)ln M/η_Y), |σ| ≲ (K/√N)√ln(1/δ); ‖x_{T+1} − α_n‖ <= ε for every n needs at most "
                         "O(K/(εη_Y)·log(M/ε)) epochs; the rate is O(1/N)."))


def check_g_concentration(ctx) -> Outcome:
    """Lemma 11, Eqns 62, 64 (line 3), 65, L650–L660: with g(s) = 1/(M−1 + e^{Mh(s)}) and exact h (Lemma 6),
    every printed inequality on a grid of (M, η_Y, N̄, Δ), Δ < N̄:

    * Eqn 64, third line: the printed second line <= g·(M/(M−1))·η_Y/4 (and the true |dg/ds| below it);
    * Eqn 65: |g(N̄ + Δ) − g(N̄)| <= g(N̄)·η_YΔ/3;
    * L652–L657 where N̄ >= 2(1+ω₁)ln M/η_Y + Δ: the equality, the Eqn 45 step |e^{Mh(N̄+Δ)} − e^{Mh(N̄)}| <=
      Mη_YΔ, the Lemma 9 step M − 1 + e^{Mh(N̄+Δ)} >= M + ½Mη_Y(N̄ + Δ), and L660's σ' <= Δ/N̄ (σ' :=
      |g(N̄+Δ) − g(N̄)|/g(N̄)).
    Each is decided at every grid point (float64, tolerance 1e-12 relative); the worst point is reported.
    """
    rows: dict[str, dict[str, Any]] = {}

    def note(name, lhs, rhs, point):
        slack = rhs - lhs
        rec = rows.setdefault(name, {"points": 0, "violations": 0, "worst_slack": math.inf, "worst": None})
        rec["points"] += 1
        if slack < -1e-12 * max(abs(lhs), abs(rhs), 1e-300):
            rec["violations"] += 1
        if slack < rec["worst_slack"]:
            rec["worst_slack"], rec["worst"] = float(slack), {**point, "lhs": float(lhs), "rhs": float(rhs)}

    for M in ctx.grid("M"):
        omega1 = N.omega1(M)
        for eta in ctx.grid("etaY"):
            e = lambda s, M=M, eta=eta: math.exp(M * N.h_of_tau(eta * s, float(M)))  # noqa: E731
            for Nbar in np.unique(np.logspace(1, 5, 17).astype(int)):
                for Delta in (1, 3, 10, 30, 100, 300, 1000):
                    if Delta >= Nbar:
                        continue
                    point = {"M": M, "etaY": eta, "Nbar": int(Nbar), "Delta": Delta}
                    g0, g1 = 1 / (M - 1 + e(Nbar)), 1 / (M - 1 + e(Nbar + Delta))
                    printed_line2 = g0 * eta * M * e(Nbar) / (M - 1 + e(Nbar)) ** 2
                    note("eq64_line3", printed_line2, g0 * M / (M - 1) * eta / 4, point)
                    note("eq65", abs(g1 - g0), g0 * eta * Delta / 3, point)
                    if Nbar >= 2 * (1 + omega1) * math.log(M) / eta + Delta:
                        note("L653_eq45", abs(e(Nbar + Delta) - e(Nbar)), M * eta * Delta, point)
                        note("L654_lemma9", M + 0.5 * M * eta * (Nbar + Delta), M - 1 + e(Nbar + Delta), point)
                        note("L660", abs(g1 - g0) / g0, Delta / Nbar, point)
    failing = {k: v for k, v in rows.items() if v["violations"]}
    status = Status.FAILS if failing else Status.HOLDS
    text = "; ".join(f"{k}: {v['violations']}/{v['points']} violated" + (
        f" (worst: {v['worst']})" if v["violations"] else f", min slack {v['worst_slack']:.3g}")
        for k, v in rows.items())
    return Outcome(status, text, {"inequalities": rows})


register(Claim("ss.lemma11.g_concentration", PAPER, "Lemma 11, Eqns 62, 64 (line 3), 65; L636–L660", "claim",
               check_g_concentration,
               params=(Param("M", 1000, quick=(100, 1000, 10_000)), Param("etaY", 0.5, quick=(0.1, 0.5, 1.0))),
               statement="|g(N_n) − g(N̄)| ≲ g(N̄)σ' with σ' <= η_YΔ/3 ≪ ln M (62); dg/ds <= g·(M/(M−1))·η_Y/4 (64); "
                         "|g(N̄+Δ) − g(N̄)| <= g(N̄)η_YΔ/3 (65); for N̄ >= 2(1+ω₁)ln M/η_Y + Δ, σ' <= Δ/N̄ (L660)."))
