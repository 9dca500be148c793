r"""The initialization claims of Appendices D and H (spec §6.1), decided over random initializations (rule 6).

Protocol P-init: the data set of ``co.regime.init`` is fixed (seed ``ctx.seed``); each initialization draws θ(0) and
a from its own ``SeedSequence`` (the run's seed, m, the init's index), σ₀ = κ₀/√(Lm), σ₁ = κ₁/√m₁. Per init the
predicate is "the printed bound holds for every index it quantifies over"; over the inits,
:func:`checks.high_probability.decide_probability` at each δ, every (m, δ) deciding (a conjunction). The evidence
keeps, per (m, δ), the count, p̂, the one-sided upper bound, and the quantiles of max(observed/bound).

Every bound below is the paper's, with its explicit constants; e(x) := √((4/m)log x) + (4/m)log x.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy.special import erfc

from checks.claim import Claim, Outcome, Param
from checks.high_probability import decide_probability
from checks.registry import register
from checks.status import combine
from derivations.errors import InvalidArgument
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.data import REGIMES, build_dataset
from numerics.models.word_cooccurrence.value_rates import value_rates

PAPER = "co"


def e(m: int, x: float) -> float:
    """√((4/m)log x) + (4/m)log x, the deviation term of Lemma H.2."""
    return math.sqrt(4 / m * math.log(x)) + 4 / m * math.log(x)


class Init:
    """One initialization: θ(0)'s blocks, a, σ₀, σ₁ and the forward quantities on the fixed data set."""

    def __init__(self, m: int, kappa: tuple[float, float], index: int, seed: int, n_index: int):
        r = REGIMES["init"]
        counts, d = r.counts[n_index], r.d[n_index]
        self.m, self.m1, self.L, self.d = m, r.m1, r.L, d
        self.sigma0, self.sigma1 = kappa[0] / math.sqrt(r.L * m), kappa[1] / math.sqrt(r.m1)
        self.data = build_dataset(counts, r.L, d, seed)
        self.n = self.data.n
        key = [seed, m, n_index, index]
        self.lay = Mo.layout(m, r.m1, d)
        self.theta = Mo.init_params(m, r.m1, d, self.sigma0, self.sigma1, key)
        self.a = Mo.output_weights(r.m1, key)
        self.v = self.lay.views(self.theta)

    def forward(self) -> dict:
        return Mo.forward(self.theta, self.lay, self.data.tokens, self.a)

    @functools.cached_property
    def rates(self) -> dict:
        """:func:`numerics.models.word_cooccurrence.value_rates.value_rates` at θ(0), computed once (m₁ × d
        arrays: small beside the forward quantities, which are not kept)."""
        return value_rates(self.theta, self.lay, self.data.tokens, self.data.labels, self.a)


def _offdiag(M: np.ndarray) -> np.ndarray:
    return M[~np.eye(M.shape[0], dtype=bool)]


# ---- per-init predicates: (max observed/bound over the indices) -------------------------------------------------
def lemD1(x: Init, delta: float) -> float:
    """Lemma D.1: |⟨W_Kμ_{l₁}, W_Qμ_{l₂}⟩| <= σ₀²m e(2d/δ) for all l₁, l₂; the same for W_K, W_K and W_Q, W_Q with
    l₁ ≠ l₂; |‖W_Kμ_l‖² − σ₀²m|, |‖W_Qμ_l‖² − σ₀²m| <= σ₀²m e(2d/δ)."""
    bound = x.sigma0**2 * x.m * e(x.m, 2 * x.d / delta)
    K, Q = x.v["WK"], x.v["WQ"]
    cross = np.abs(K.T @ Q).max()
    same = max(np.abs(_offdiag(K.T @ K)).max(), np.abs(_offdiag(Q.T @ Q)).max())
    norms = max(np.abs(np.sum(K * K, 0) - x.sigma0**2 * x.m).max(), np.abs(np.sum(Q * Q, 0) - x.sigma0**2 * x.m).max())
    return max(cross, same, norms) / bound


def lemD3(x: Init, delta: float) -> float:
    """Lemma D.3's five bounds (W_V pairs, neuron pairs, neuron–value products, the two norms)."""
    V, W, m, m1 = x.v["WV"], x.v["W"], x.m, x.m1
    s0, s1 = x.sigma0, x.sigma1
    ratios = [np.abs(_offdiag(V.T @ V)).max() / (s0**2 * m * e(m, 2 * x.d / delta)),
              np.abs(_offdiag(W @ W.T)).max() / (s1**2 * m * e(m, 2 * m1**2 / delta)),
              np.abs(W @ V).max() / (s0 * s1 * m * e(m, 2 * m1 * x.d / delta)),
              np.abs(np.sum(W * W, 1) - s1**2 * m).max() / (s1**2 * m * e(m, 2 * m1 / delta)),
              np.abs(np.sum(V * V, 0) - s0**2 * m).max() / (s0**2 * m * e(m, 2 * x.d / delta))]
    return max(ratios)


def lemD4(x: Init, delta: float) -> float:
    """Lemma D.4: |‖W_VX⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖² − σ₀²m/L| <= (σ₀²m/L)e(2nL/δ) for every i, l (the attention p⁽⁰⁾ as it is)."""
    f = x.forward()
    Vp = np.einsum("nmh,nhl->nml", f["V"], f["P"])
    target = x.sigma0**2 * x.m / x.L
    return np.abs(np.sum(Vp * Vp, axis=1) - target).max() / (target * e(x.m, 2 * x.n * x.L / delta))


def corD5(x: Init, delta: float) -> float:
    """Cor. D.5: |w_jᵀV⁽⁰,ⁱ⁾p_l⁽⁰,ⁱ⁾| <= σ₁σ₀√((m/L)log(m₁nL/δ)) for every j, i, l."""
    f = x.forward()
    values = np.einsum("jm,nmh,nhl->jnl", x.v["W"], f["V"], f["P"])
    return np.abs(values).max() / (x.sigma1 * x.sigma0 * math.sqrt(x.m / x.L * math.log(x.m1 * x.n * x.L / delta)))


def lemD6(x: Init, delta: float) -> float:
    """Lemma D.6: ||S₊₁| − m₁/2| <= m₁√(2log(4/δ)/m₁)."""
    return abs(np.sum(x.a > 0) - x.m1 / 2) / (x.m1 * math.sqrt(2 * math.log(4 / delta) / x.m1))


def lemD8(x: Init, delta: float) -> float:
    """Lemma D.8 (statement): |F⁽⁰⁾(X⁽ⁱ⁾)| <= 2σ₀σ₁√(2Lm₁m log(2Ln/δ)) for every i."""
    bound = 2 * x.sigma0 * x.sigma1 * math.sqrt(2 * x.L * x.m1 * x.m * math.log(2 * x.L * x.n / delta))
    return np.abs(x.forward()["F"]).max() / bound


def _decide(ctx, predicate: Callable[[Init, float], float], kappas,
            alternatives: dict[str, Callable[[Init, float], float]] | None = None) -> Outcome:
    """Rule 6 of ``predicate`` over the inits of every (data set, m, κ, δ) (module docstring). ``alternatives``
    (other readings of the bound) are decided on the same inits and reported in ``evidence["alternatives"]``."""
    draws = ctx.grid("inits")[0]
    if not isinstance(draws, int) or draws < 2:
        raise InvalidArgument(f"inits={draws!r} must be an integer >= 2 (rule 6 cannot reject with one draw)")
    predicates = {"": predicate, **(alternatives or {})}
    records: dict[str, list[dict]] = {name: [] for name in predicates}
    for n_index in ctx.grid("data_set"):
        for m in ctx.grid("m"):
            for kappa in kappas:
                inits = [Init(int(m), kappa, k, ctx.seed, n_index) for k in range(draws)]
                for delta in ctx.grid("delta"):
                    for name, rule in predicates.items():
                        ratios = np.array([rule(x, delta) for x in inits])
                        decision = decide_probability(ratios <= 1.0, delta, normalised=ratios)
                        records[name].append({"n": inits[0].n, "m": int(m), "kappa": list(kappa),
                                              **decision.to_dict()})
    status, summary = _over_records(records[""])
    evidence = {"records": records[""]}
    if alternatives:
        evidence["alternatives"] = {name: dict(zip(("status", "summary"), _over_records(records[name])))
                                    for name in alternatives}
    return Outcome(status, summary, evidence)


def _over_records(records: list[dict]):
    """The combined status of rule-6 records and a one-line summary (the worst observed/bound first)."""
    status = combine(r["status"] for r in records)
    worst = max(records, key=lambda r: r["quantiles"]["max"])
    summary = (f"{sum(r['status'] == 'holds' for r in records)}/{len(records)} (n, m, κ, δ) hold; largest "
               f"observed/bound {worst['quantiles']['max']:.3g} (n = {worst['n']}, m = {worst['m']}, κ = "
               f"{worst['kappa']}, δ = {worst['delta']}); e.g. {records[0]['summary']}")
    return status, summary


def _kappa_pairs(ctx) -> list[tuple[float, float]]:
    return [(float(k), float(k)) for k in ctx.grid("kappa")]


_COMMON = (Param("m", 512, quick=(512, 2048), full=(128, 512, 2048, 8192), doc="rows of W_K, W_Q, W_V"),
           Param("delta", 0.1, quick=(0.1, 0.01), doc="failure probability of the statement"),
           Param("inits", 300, quick=(300,), full=(1000,), doc="random initializations per (m, κ)"),
           Param("data_set", 0, quick=(0,), full=(0, 1), doc="co.regime.init's data set: 0 (n = 24), 1 (n = 600)"))
_KAPPA = Param("kappa", 0.5, quick=(0.5,), full=(0.5, 0.25, 0.1), doc="κ₀ = κ₁ = κ")
_ITEMS = (
    ("co.lemD_1.kq_init", "Lemma D.1 (L1983–L2044)", lemD1,
     "For any l₁, l₂ ∈ [d]: |⟨W_Kμ_{l₁}, W_Qμ_{l₂}⟩| <= σ₀²m(√((4/m)log(2d/δ)) + (4/m)log(2d/δ)); the same for W_K, W_K "
     "and W_Q, W_Q (l₁ ≠ l₂); ‖W_Kμ_l‖², ‖W_Qμ_l‖² = σ₀²m(1 ± (…)), with probability at least 1 − δ."),
    ("co.lemD_3.vw_init", "Lemma D.3 (L2066–L2123)", lemD3,
     "|⟨W_Vμ_{l₁}, W_Vμ_{l₂}⟩|, |⟨w_{j₁}, w_{j₂}⟩|, |⟨w_j, W_Vμ_l⟩| and the norms ‖w_j‖², ‖W_Vμ_l‖² within their printed "
     "deviations, with probability at least 1 − δ."),
    ("co.lemD_4.vxp_norm", "Lemma D.4 (L2124–L2158)", lemD4,
     "‖W_V⁽⁰⁾X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖² = (σ₀²m/L)(1 ± √((4/m)log(2nL/δ)) ± (4/m)log(2nL/δ))."),
    ("co.corD_5.wvp", "Cor. D.5 (L2159–L2184)", corD5,
     "|w_j⁽⁰⁾ᵀV⁽⁰,ⁱ⁾p_l⁽⁰,ⁱ⁾| <= σ₁σ₀√((m/L)log(m₁nL/δ))."),
    ("co.lemD_6.sign_balance", "Lemma D.6 (L2185–L2195)", lemD6,
     "|S_{±1}| = m₁(½ ± √(2log(4/δ)/m₁)), S_{±1} = {j : a_j = ±1}."),
)
def expected_violations_corD5(x: Init, delta: float) -> float:
    """Second method for Cor. D.5: given V and P, w_jᵀV⁽ⁱ⁾p_l ~ 𝒩(0, σ₁²‖V⁽ⁱ⁾p_l‖²) exactly (w_j independent of W_V),
    so the expected number of (j, i, l) above the bound is Σ 2Φ̄(bound/(σ₁‖V⁽ⁱ⁾p_l‖)) — the quantity a union bound
    must keep below δ."""
    f = x.forward()
    norms = np.sqrt(np.sum(np.einsum("nmh,nhl->nml", f["V"], f["P"]) ** 2, axis=1))  # (n, L)
    bound = x.sigma1 * x.sigma0 * math.sqrt(x.m / x.L * math.log(x.m1 * x.n * x.L / delta))
    return float(x.m1 * np.sum(erfc(bound / (x.sigma1 * norms) / math.sqrt(2))))


def check_corD5(ctx) -> Outcome:
    """Cor. D.5 over the inits, with the exact conditional tail as a second method (expected violations vs δ)."""
    outcome = _decide(ctx, corD5, _kappa_pairs(ctx))
    m, kappa = int(ctx.grid("m")[0]), _kappa_pairs(ctx)[0]
    rows = []
    for delta in ctx.grid("delta"):
        counts = [expected_violations_corD5(Init(m, kappa, k, ctx.seed, 0), delta) for k in range(20)]
        rows.append({"m": m, "delta": delta, "expected_violating_entries": float(np.mean(counts))})
    outcome.evidence["conditional_gaussian_tail"] = rows
    outcome.summary += ("; exact conditional tail (w_jᵀVp_l ~ 𝒩(0, σ₁²‖Vp_l‖²)): expected violating (j, i, l) per init "
                        + ", ".join(f"{r['expected_violating_entries']:.2f} at δ = {r['delta']}" for r in rows)
                        + " — a union bound needs it below δ; √log(m₁nL/δ) lacks the √2 of a Gaussian tail")
    return outcome


for _id, _label, _predicate, _statement in _ITEMS:
    check = check_corD5 if _predicate is corD5 else (lambda ctx, p=_predicate: _decide(ctx, p, _kappa_pairs(ctx)))
    register(Claim(_id, PAPER, _label, "claim", check, params=(*_COMMON, _KAPPA), statement=_statement))


def check_F_init(ctx) -> Outcome:
    """Lemma D.8 under ``lemD8_001``: ``hypothesis`` (canonical) decides the first inequality at every κ and reports
    whether the printed bound and the observed max|F⁽⁰⁾| are <= 0.01; ``claim`` also asks max|F⁽⁰⁾| <= 0.01."""
    reading = ctx.value("lemD8_001")
    if reading == "claim":
        def predicate(x, delta):
            return max(lemD8(x, delta), np.abs(x.forward()["F"]).max() / 0.01)
    else:
        predicate = lemD8
    outcome = _decide(ctx, predicate, _kappa_pairs(ctx))
    r, m = REGIMES["init"], int(ctx.grid("m")[0])
    rows = []
    for kappa in ctx.grid("kappa"):
        for delta in ctx.grid("delta"):
            for n in REGIMES["init"].n:
                printed = 2 * kappa * kappa * math.sqrt(2 * math.log(2 * r.L * n / delta))
                rows.append({"kappa": kappa, "delta": delta, "n": n, "printed_right_side": printed,
                             "printed_right_side_below_0.01": printed <= 0.01})
    outcome.evidence["right_side_against_0.01"] = rows
    small = sorted({row["kappa"] for row in rows if row["printed_right_side_below_0.01"]})
    outcome.summary += (f"; the printed right side 2κ₀κ₁√(2log(2Ln/δ)) is <= 0.01 only for κ in {small or 'none'} "
                        f"of the grid (reading lemD8_001={reading})")
    return outcome


register(Claim("co.lemD_8.F_init", PAPER, "Lemma D.8 (L2212–L2245)", "claim", check_F_init,
               params=(*_COMMON, Param("kappa", 0.5, quick=(0.5, 0.1, 0.05, 0.02), full=(0.5, 0.25, 0.1, 0.05, 0.02),
                                       doc="κ₀ = κ₁ = κ"),
                       Param("lemD8_001", "hypothesis", choices=("hypothesis", "claim"),
                             doc="whether '<= 0.01' is a condition on Condition 1 (hypothesis) or part of the claim")),
               statement="|F⁽⁰⁾(X⁽ⁱ⁾)| <= 2σ₀σ₁√(2Lm₁m log(2Ln/δ)) <= 0.01 for every i, with probability at least 1 − δ."))


def check_gauss_conc(ctx) -> Outcome:
    """Lemma H.2 (L7770–L7800): for w₁, w₂ iid 𝒩(0, I_m/m), P[|‖w₁‖² − 1| >= e(2/δ)] <= δ and the same for |⟨w₁, w₂⟩|;
    rule 6 over independent draws (a draw succeeds when it does not exceed)."""
    draws = ctx.grid("draws")[0]
    if not isinstance(draws, int) or draws < 2:
        raise InvalidArgument(f"draws={draws!r} must be an integer >= 2")
    records, statuses = [], []
    for m in ctx.grid("m"):
        rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, int(m), 72]))
        norms, inner = np.empty(draws), np.empty(draws)
        for start in range(0, draws, 5000):  # blocks keep memory at 5000·m floats
            w1 = rng.standard_normal((min(5000, draws - start), int(m))) / math.sqrt(m)
            w2 = rng.standard_normal(w1.shape) / math.sqrt(m)
            norms[start:start + w1.shape[0]] = np.abs(np.sum(w1 * w1, 1) - 1)
            inner[start:start + w1.shape[0]] = np.abs(np.sum(w1 * w2, 1))
        for delta in ctx.grid("delta"):
            bound = e(int(m), 2 / delta)
            for what, values in (("norm", norms), ("inner product", inner)):
                decision = decide_probability(values < bound, delta, normalised=values / bound)
                statuses.append(decision.status)
                records.append({"m": int(m), "delta": delta, "statement": what,
                                "exceedance": 1 - decision.p_hat, **decision.to_dict()})
    status = combine(statuses)
    largest = max(records, key=lambda r: r["exceedance"] / r["delta"])
    summary = (f"{sum(r['status'] == 'holds' for r in records)}/{len(records)} (m, δ, statement) hold; largest "
               f"exceedance/δ {largest['exceedance'] / largest['delta']:.3f} ({largest['statement']}, m = {largest['m']}, "
               f"δ = {largest['delta']})")
    return Outcome(status, summary, {"records": records})


register(Claim("co.lemH_2.gauss_conc", PAPER, "Lemma H.2 (L7770–L7800)", "claim", check_gauss_conc,
               params=(Param("m", 256, quick=(64, 256, 1024), doc="dimension"),
                       Param("delta", 0.1, quick=(0.1, 0.01), doc="failure probability"),
                       Param("draws", 50_000, quick=(50_000,), full=(200_000,), doc="independent (w₁, w₂) pairs")),
               statement="For w₁, w₂ iid 𝒩(0, I_m/m): P[|‖w₁‖² − 1| >= √((4/m)log(2/δ)) + (4/m)log(2/δ)] <= δ, and the same "
                         "for |⟨w₁, w₂⟩|."))
