r"""Two closed forms checked by Monte Carlo (spec §4): the softmax perturbation of Lemma G.2 and the initial
moments of the proofs of Lemmas D.4 and D.7.

``co.cf.softmax_perturb`` — Lemma G.2 (L7737–L7747)
    Printed: p(s+ε) − p(s) = (diag(p(s)) − p(s)p(s)ᵀ)ε + ξ with ‖ξ‖_∞ = O(‖ε‖₂²).

    Hessian. With p = Softmax(s), ∂p_i/∂s_j = p_i(δ_ij − p_j) (Eq. (17)) and

        ∂²p_i/∂s_j∂s_k = p_i[(δ_ij − p_j)(δ_ik − p_k) − p_j(δ_jk − p_k)],
        εᵀ∇²p_i ε = p_i[(ε_i − ε̄)² − Var_p(ε)],   ε̄ = Σ_k p_kε_k,  Var_p(ε) = Σ_k p_k(ε_k − ε̄)².

    Proven constant. Taylor's theorem with the Lagrange remainder, applied to each component along the
    segment, gives ξ_i = ½ εᵀ∇²p_i(s + θ_iε)ε for some θ_i ∈ (0, 1); the softmax of any point is some q in
    the open simplex. Both terms of the bracket are ≥ 0, so |εᵀ∇²p_iε| ≤ q_i·max((ε_i − ε̄)², Var_q(ε)), and

    * ε_i − ε̄ = Σ_{k≠i} q_k(ε_i − ε_k) with |ε_i − ε_k| ≤ √2‖ε‖₂: q_i(ε_i − ε̄)² ≤ 2q_i(1 − q_i)²‖ε‖² ≤ (8/27)‖ε‖²;
    * Var_q(ε) ≤ Σ_{k≠i} q_k(ε_k − ε_i)² ≤ 2(1 − q_i)‖ε‖², and Var_q(ε) ≤ (max ε − min ε)²/4 ≤ ‖ε‖²/2
      (Popoviciu): q_i Var_q(ε) ≤ min(2q_i(1 − q_i), q_i/2)‖ε‖² ≤ (3/8)‖ε‖² (at q_i = 3/4).

    Hence ‖ξ‖_∞ ≤ C‖ε‖₂² with C = 3/16 for every s, ε and L (:data:`HESSIAN_BOUND`). The constant cannot be
    below 1/(6√3) ≈ 0.0962 (:data:`SHARP_FLOOR`): at L = 2, ½εᵀ∇²p₁ε = ½σ''(s₁ − s₂)(ε₁ − ε₂)², with
    max|σ''| = max q(1 − q)(1 − 2q) = 1/(6√3) and (ε₁ − ε₂)² = 2‖ε‖² at ε ∝ (1, −1); every L > 2 approaches
    it with the other scores → −∞.

    Monte Carlo. ``draws`` instances = draws/8 pairs (s, u) × the 8 magnitudes ‖ε‖₂ = t ∈ {1, 10⁻¹, …, 10⁻⁷}
    with ε = t·u (common random numbers: every magnitude sees the same pairs, so the per-magnitude sup is a
    smooth function of t and its limit is decided without sampling noise). L is uniform on {2, …, 9},
    s = λ·z with z ~ 𝒩(0, I_L) and λ log-uniform on [0.1, 10] (attention near uniform to near one-hot),
    u uniform on the unit sphere of ℝ^L.

    Rounding. ξ is not computed as p(s+ε) − p(s) − Jε (a difference of O(t) numbers that cancel to O(t²)).
    With φ(x) := eˣ − 1 − x (a Taylor series for |x| < 0.1, expm1(x) − x otherwise), A := Σ_k p_k(e^{ε_k} − 1)
    = ε̄ + Φ with Φ = Σ_k p_kφ(ε_k), and p_i(s+ε) = p_ie^{ε_i}/(1 + A), exact algebra gives

        ξ_i = p_i[(φ(ε_i) − Φ) − A(ε_i − ε̄)] / (1 + A),

    whose terms are all O(t²): no first-order cancellation. φ(ε_i) − Φ and ε_i − ε̄ are summed as
    Σ_k p_k(x_i − x_k), which stays accurate where the attention saturates (p_i ≈ 1); p is renormalised first,
    so the rounding of Σ_k p_k = 1 leaves no O(t) error (:func:`remainder`). ``audit`` pairs are recomputed at
    the smallest t from the definition p(s+ε) − p(s) − Jε at 50 digits (mpmath, s = log p), and the largest
    relative difference of ‖ξ‖_∞ is reported; above 1e−10 the verdict is ``inconclusive``.

    Decision: the ratio r(t) = sup ‖ξ‖_∞/t² over the draws of each magnitude is decided by the core rule
    ``checks.asymptotics.decide("O", …)`` along t → 0 (algebraic); the verdict holds when that decision
    holds and every draw's ratio is below the proven constant C; it fails when the decision fails (r grows
    without bound); otherwise (undecided, or a draw above C, which would contradict the proof above and so
    signal a numerical fault) it is inconclusive. The limit r(0) = sup ½|uᵀ∇²p_i u| is computed exactly from
    the Hessian formula and reported beside the fitted r∞, and so is sup|ξ − ½εᵀ∇²p ε|/‖ε‖³ per magnitude,
    whose boundedness confirms the Hessian formula itself (the remainder after the second-order term is
    O(‖ε‖³)).

``co.cf.init_moments`` — Lemma D.4 proof (L2138–L2145), Lemma D.7 proof (L2203–L2210)
    Printed (D.4): E‖W_VX⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖² = E Σ_{j=1}^m ⟨(W_V)_j, X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾⟩² = σ₀²m‖X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖² = σ₀²m/L.
    Printed (D.7): conditioned on W_Vμ_i, Σ_{j=1}^{m₁} w_jᵀW_Vμ_i ~ 𝒩(0, σ₁²σ₀²mm₁).

    Derivation (Gaussian moments; :func:`symbolic_moments` checks each with
    :func:`derivations.expectation.gaussian_expectation` at explicit small sizes, and every size follows by
    linearity, the terms of the sums over j being identically distributed):

    * (W_V)_j, the rows of W_V, are iid 𝒩(0, σ₀²I_d) and independent of W_K, W_Q, hence of p⁽⁰⁾. For x = Xp
      fixed, ⟨(W_V)_j, x⟩ ~ 𝒩(0, σ₀²‖x‖²), so E[‖W_Vx‖² | W_K, W_Q] = σ₀²m‖x‖². The first equality is the
      definition of the norm (checked pointwise with dense one-hot X on the first init of every point, rule 5;
      a dense product per init would cost n·m·d·L each); the second is exact, the expectation being over W_V
      given the attention (the chain's third member still contains p⁽⁰⁾).
    * With distinct tokens (dataset ``unique``, Assumption 2.3) ‖Xp‖² = Σ_h p_h² = 1/L + Σ_h(p_h − 1/L)² ≥ 1/L,
      with equality iff p = 𝟏/L.
    * Given v = W_Vμ_i, S := Σ_j w_jᵀv = (Σ_j w_j)ᵀv with Σ_j w_j ~ 𝒩(0, m₁σ₁²I_m): S | v ~ 𝒩(0, σ₁²m₁‖v‖²).
      Unconditionally E S² = σ₁²m₁E‖v‖² = σ₁²σ₀²mm₁ (the printed variance), but S is a Gaussian scale
      mixture (‖v‖² ~ σ₀²χ²_m), with E S⁴/(E S²)² = 3(1 + 2/m): not exactly normal. With the output weights,
      a_jw_j has the law of w_j given a, so G⁽⁰⁾(μ_i) = Σ_j a_jw_jᵀv has the same law as the printed sum.

    Readings (spec rule 12: evaluated on the same draws; the verdict is the canonical reading's, the
    evidence lists the others):

    * ``attention`` — where the D.4 chain is evaluated. ``p0`` (canonical): at the lemma's own attention
      p_l⁽⁰,ⁱ⁾ (rule 1: the display carries the superscript (0, i)); there the last equality is not an
      identity: σ₀²m‖Xp⁽⁰⁾‖² = (σ₀²m/L)(1 + LΣ_h(p_h − 1/L)²), the approximation the proof cites from
      Cor. D.2, and the display ``differs`` (the relative excess is measured exactly, per sample and query).
      ``uniform``: at p = 𝟏/L (W_K = 0), where every equality of the chain is exact.
    * ``conditioning`` — how D.7's "conditioned on W_Vμ_i … ~ 𝒩(0, σ₁²σ₀²mm₁)" is read. ``conditional``
      (canonical, as printed): the conditional law is 𝒩(0, σ₁²m₁‖W_Vμ_i‖²), which is the printed one only
      when ‖W_Vμ_i‖² = σ₀²m exactly (Lemma D.3 gives Θ(σ₀²m)): the display ``differs``, and the evidence
      reports the factor ‖W_Vμ_i‖²/(σ₀²m) by which the variances differ. ``unconditional``: the printed
      variance is the unconditional one, exactly (``holds`` for the variance; the law's excess kurtosis
      6/m is reported).

    Monte Carlo (protocol P-init, spec §2.9): on ``co.regime.init`` (L = 4, m₁ = 8, n = 24, data set
    ``unique`` from seed ``ctx.seed``), init k draws θ(0) from SeedSequence([seed, k]) through
    :func:`numerics.models.word_cooccurrence.model.init_params` with σ₀ = σ₁ = 1 and scales the blocks by
    σ₀ = κ/√(Lm), σ₁ = κ/√m₁ — bit for bit the draw ``init_params`` makes at those σ's (NumPy's normal is
    scale·z), so every κ sees the same standard normals. Each init contributes the average over samples i
    and queries l (over tokens μ_i ∈ [d] for D.7) of a normalised quantity; the inits are independent, so
    the mean over inits has the standard error sd/√inits. A derived moment agrees when its Monte-Carlo
    mean is within 3 standard errors; outside, the display ``fails`` (the derivation, and the printed form
    that equals it, are contradicted).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np
import sympy as sp

from checks.asymptotics import Asymptotic, decide
from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.status import Status, combine
from derivations.domain import Domain, Interval
from derivations.errors import InternalError, InvalidArgument
from derivations.expectation import gaussian_expectation
from numerics.models.word_cooccurrence import model as Mo
from numerics.models.word_cooccurrence.data import REGIMES, assumption_2_3, build_dataset
from numerics.statistics import summary

PAPER = "co"

# ---- co.cf.softmax_perturb ------------------------------------------------------------------------------------
#: ‖ε‖₂ of the eight magnitudes, one per decade
MAGNITUDES = 1.0 / 10.0 ** np.arange(8)
L_MIN, L_MAX = 2, 9
#: log₁₀ range of the score scale λ (s = λz)
SCORE_DECADES = (-1.0, 1.0)
#: the proven constant: ‖ξ‖_∞ ≤ (3/16)‖ε‖₂² (module docstring)
HESSIAN_BOUND = 3 / 16
#: no constant below 1/(6√3) bounds ‖ξ‖_∞/‖ε‖₂² for every s (module docstring)
SHARP_FLOOR = 1 / (6 * math.sqrt(3))
#: |x| below which φ(x) = eˣ − 1 − x is summed as its Taylor series (degree 11: truncation < 1e−16 relative)
PHI_SERIES = 0.1
AUDIT_DIGITS = 50
AUDIT_RTOL = 1e-10
#: relative accuracy of the stable ξ, for the asymptotic fit's error model
XI_REL_ERR = 1e-12


@dataclass(frozen=True)
class PerturbDraws:
    """Pairs (s, u): attention p = Softmax(s) and unit directions u, zero-padded to L_MAX columns."""

    p: np.ndarray
    u: np.ndarray
    L: np.ndarray


def perturbation_draws(pairs: int, seed: int) -> PerturbDraws:
    """``pairs`` draws of (L, s, u) as in the module docstring, from SeedSequence([seed, 0])."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    L = rng.integers(L_MIN, L_MAX + 1, size=pairs)
    live = np.arange(L_MAX)[None, :] < L[:, None]
    scale = 10.0 ** rng.uniform(*SCORE_DECADES, size=pairs)
    s = np.where(live, rng.standard_normal((pairs, L_MAX)) * scale[:, None], 0.0)
    g = np.where(live, rng.standard_normal((pairs, L_MAX)), 0.0)
    e = np.where(live, np.exp(s - np.max(np.where(live, s, -np.inf), axis=1, keepdims=True)), 0.0)
    return PerturbDraws(e / e.sum(axis=1, keepdims=True), g / np.linalg.norm(g, axis=1, keepdims=True), L)


def phi(x: np.ndarray) -> np.ndarray:
    """φ(x) = eˣ − 1 − x without cancellation: x²Σ_{k=2}^{11}x^{k−2}/k! for |x| < PHI_SERIES."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < PHI_SERIES
    xs = np.where(small, x, 0.0)
    poly = np.zeros_like(x)
    for k in range(11, 1, -1):
        poly = poly * xs + 1.0 / math.factorial(k)
    xl = np.where(small, 0.0, x)
    return np.where(small, xs * xs * poly, np.expm1(xl) - xl)


def remainder(p: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """ξ = p(s+ε) − p(s) − (diag p − ppᵀ)ε, row by row, for s = log p (module docstring), as

        ξ_i = q_i[Σ_k q_k(φ(ε_i) − φ(ε_k)) − A·Σ_k q_k(ε_i − ε_k)]/(1 + A),

    q = p/Σ_k p_k, A = Σ_k q_k(ε_k + φ(ε_k)): exact for any rounded p (q is normalised here); the sums of
    differences stay accurate where the attention is saturated (q_i ≈ 1, ε_i − ε̄ ≪ ε_i)."""
    q = p / np.sum(p, axis=1, keepdims=True)
    ph = phi(eps)
    A = np.sum(q * (eps + ph), axis=1, keepdims=True)

    def centred(x):  # Σ_k q_k(x_i − x_k) for every i
        return np.einsum("dk,dik->di", q, x[:, :, None] - x[:, None, :])

    return q * (centred(ph) - A * centred(eps)) / (1.0 + A)


def second_order(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """½uᵀ∇²p_i u = ½p_i[(u_i − ū)² − Var_p(u)] for every component i (module docstring)."""
    u_bar = np.sum(p * u, axis=1, keepdims=True)
    var = np.sum(p * (u - u_bar) ** 2, axis=1, keepdims=True)
    return 0.5 * p * ((u - u_bar) ** 2 - var)


def remainder_mp(p: np.ndarray, eps: np.ndarray, L: int, digits: int = AUDIT_DIGITS) -> float:
    """‖ξ‖_∞ from the definition p(s+ε) − p(s) − Jε at ``digits`` digits, with s = log p (first L entries)."""
    with mpmath.workdps(digits):
        s = [mpmath.log(mpmath.mpf(float(v))) for v in p[:L]]
        e = [mpmath.mpf(float(v)) for v in eps[:L]]

        def softmax(z):
            w = [mpmath.exp(v) for v in z]
            total = mpmath.fsum(w)
            return [v / total for v in w]

        base, moved = softmax(s), softmax([a + b for a, b in zip(s, e, strict=True)])
        e_bar = mpmath.fsum(q * v for q, v in zip(base, e, strict=True))
        return float(max(abs(moved[i] - base[i] - base[i] * (e[i] - e_bar)) for i in range(L)))


def _audit(draws: PerturbDraws, t: float, count: int) -> dict:
    """The stable ξ against the 50-digit definition on the first ``count`` pairs at magnitude t."""
    fast = np.max(np.abs(remainder(draws.p[:count], t * draws.u[:count])), axis=1)
    slow = np.array([remainder_mp(draws.p[k], t * draws.u[k], int(draws.L[k])) for k in range(count)])
    rel = np.abs(fast - slow) / slow
    return {"magnitude": t, "pairs": count, "digits": AUDIT_DIGITS, "max_relative_difference": float(rel.max()),
            "tolerance": AUDIT_RTOL, "ok": bool(rel.max() <= AUDIT_RTOL)}


def _pairs(ctx) -> int:
    draws = ctx.value("draws")
    if draws % MAGNITUDES.size:
        raise InvalidArgument(f"draws={draws} must be a multiple of {MAGNITUDES.size}, the number of magnitudes "
                              f"‖ε‖₂ = 1 … 1e−7 that every pair (s, ε/‖ε‖) is evaluated at")
    audit = ctx.value("audit")
    if audit > draws // MAGNITUDES.size:
        raise InvalidArgument(f"audit={audit} exceeds the {draws // MAGNITUDES.size} pairs (s, ε/‖ε‖) of "
                              f"draws={draws}; choose audit <= draws/{MAGNITUDES.size}")
    return draws // MAGNITUDES.size


def _ratios(draws: PerturbDraws) -> tuple[list[float], list[dict], list[float]]:
    """Per magnitude t: sup over the pairs of ‖ξ‖_∞/t², where it is attained, and sup|ξ − t²·½uᵀ∇²p u|/t³."""
    sups, worst, third = [], [], []
    second = second_order(draws.p, draws.u)
    for t in MAGNITUDES:
        xi = remainder(draws.p, t * draws.u)
        ratio = np.max(np.abs(xi), axis=1) / t**2
        k = int(np.argmax(ratio))
        sups.append(float(ratio[k]))
        worst.append({"magnitude": float(t), "sup_ratio": float(ratio[k]), "pair": k, "L": int(draws.L[k])})
        third.append(float(np.max(np.abs(xi - t**2 * second)) / t**3))
    return sups, worst, third


def _perturb_status(audit: dict, decision, sup: float) -> tuple[Status, str]:
    """The decision rule of the module docstring, with its reason."""
    if not audit["ok"]:
        return Status.INCONCLUSIVE, (f"the stable ξ differs from the 50-digit definition by "
                                     f"{audit['max_relative_difference']:.2g} (relative) at ‖ε‖ = 1e−7")
    if decision.status is Status.FAILS:
        return Status.FAILS, "sup ‖ξ‖_∞/‖ε‖² grows as ‖ε‖ → 0"
    if sup > HESSIAN_BOUND:
        return Status.INCONCLUSIVE, (f"a draw has ‖ξ‖_∞/‖ε‖² = {sup:.4g} > 3/16, which the proof excludes: "
                                     f"a numerical fault")
    if decision.status is Status.HOLDS:
        return Status.HOLDS, "sup ‖ξ‖_∞/‖ε‖² settles as ‖ε‖ → 0, below the proven 3/16"
    return Status.INCONCLUSIVE, f"the O rule is undecided: {decision.summary}"


def check_softmax_perturb(ctx) -> Outcome:
    """co.cf.softmax_perturb — Lemma G.2 (L7737–L7747): p(s+ε) − p(s) = (diag(p(s)) − p(s)p(s)ᵀ)ε + ξ with
    ‖ξ‖_∞ = O(‖ε‖₂²). Monte Carlo over s, ε (L ∈ [2, 9], ‖ε‖₂ = 1 … 1e−7), decided along ‖ε‖ → 0 by the core
    O rule, with the proven constant ‖ξ‖_∞ ≤ (3/16)‖ε‖₂² from the softmax Hessian (module docstring)."""
    pairs = _pairs(ctx)
    draws = perturbation_draws(pairs, ctx.seed)
    sups, worst, third = _ratios(draws)
    limit = np.max(np.abs(second_order(draws.p, draws.u)), axis=1)
    audit = _audit(draws, float(MAGNITUDES[-1]), ctx.value("audit"))
    decision = decide("O", np.array(sups) * MAGNITUDES**2, MAGNITUDES**2,
                      [{"eps_norm": float(t)} for t in MAGNITUDES],
                      variables=[Asymptotic("eps_norm", toward="0")], rel_err=XI_REL_ERR)
    below = max(sups) <= HESSIAN_BOUND
    status, why = _perturb_status(audit, decision, max(sups))
    summary_text = (f"{status.value}: {why}; sup ratio {max(sups):.4g} (‖ε‖ = 1: {sups[0]:.4g}, ‖ε‖ = 1e−7: "
                    f"{sups[-1]:.4g}) vs exact second-order sup {float(limit.max()):.4g}, proven C = 3/16, "
                    f"sharp C >= 1/(6√3) = {SHARP_FLOOR:.4g}; {pairs * MAGNITUDES.size} draws")
    evidence = {
        "draws": pairs * MAGNITUDES.size, "pairs": pairs, "magnitudes": MAGNITUDES,
        "L_range": [L_MIN, L_MAX], "score_scale_log10": list(SCORE_DECADES),
        "sup_ratio_per_magnitude": worst,
        "third_order_ratio_per_magnitude": dict(zip(map(float, MAGNITUDES), third, strict=True)),
        "second_order_limit": {"sup_half_uHu": float(limit.max()),
                               "formula": "½εᵀ∇²p_iε = ½p_i[(ε_i − ε̄)² − Var_p(ε)]"},
        "hessian_bound": {"constant": HESSIAN_BOUND, "holds_on_every_draw": below, "sharp_floor": SHARP_FLOOR,
                          "proof": "checks.word_cooccurrence.init_items (module docstring)"},
        "asymptotic": decision.to_dict(),
        "rounding": {"method": "ξ_i = p_i[Σ_k p_k(φ(ε_i) − φ(ε_k)) − A·Σ_k p_k(ε_i − ε_k)]/(1 + A), "
                               "φ(x) = eˣ − 1 − x: no first-order cancellation", "audit": audit},
    }
    return Outcome(status, summary_text, evidence)


# ---- co.cf.init_moments -----------------------------------------------------------------------------------------
#: 3-standard-error agreement of a Monte-Carlo mean with its derived value (spec §4)
K_SE = 3.0
#: pointwise float64 identities (spec rule 5)
IDENTITY_RTOL = 1e-10
READINGS = {"attention": ("p0", "uniform"), "conditioning": ("conditional", "unconditional")}


@lru_cache(maxsize=1)
def symbolic_moments() -> dict:
    """The Gaussian moments of the derivation at explicit sizes (m = 3 rows, L = 3 distinct tokens; m = 3,
    m₁ = 2 for D.7), by :func:`derivations.expectation.gaussian_expectation` on standard normals z."""
    s0, s1 = sp.symbols("sigma0 sigma1", positive=True)
    m, L, m1 = 3, 3, 2
    p = sp.symbols(f"p1:{L + 1}", positive=True)
    z = sp.symbols(f"z1:{m * L + 1}", real=True)
    norm2 = sp.expand(sum((s0 * sum(z[j * L + h] * p[h] for h in range(L))) ** 2 for j in range(m)))
    d4 = gaussian_expectation(norm2, z).value
    sum_p2 = sum(q**2 for q in p)
    w = sp.symbols(f"w1:{m * m1 + 1}", real=True)
    v = sp.symbols(f"v1:{m + 1}", real=True)
    eta = sp.symbols(f"eta1:{m + 1}", real=True)
    S = sum(s1 * w[j * m + k] * v[k] for j in range(m1) for k in range(m))
    conditional = gaussian_expectation(sp.expand(S**2), w).value
    S_unc = S.subs({v[k]: s0 * eta[k] for k in range(m)})
    second = gaussian_expectation(sp.expand(S_unc**2), [*w, *eta]).value
    fourth = gaussian_expectation(sp.expand(S_unc**4), [*w, *eta]).value
    uniform = {q: sp.Rational(1, L) for q in p}
    return {
        "sizes": {"m": m, "L": L, "m1": m1},
        "lemD4": {"derived": str(d4), "printed_middle": str(s0**2 * m * sum_p2),
                  "middle_equal": sp.simplify(d4 - s0**2 * m * sum_p2) == 0,
                  "printed_last_minus_derived": str(sp.factor(s0**2 * m / L - d4)),
                  "last_equal_at_uniform": sp.simplify((s0**2 * m / L - d4).subs(uniform)) == 0},
        "lemD7": {"conditional_variance": str(conditional),
                  "conditional_equals_sigma1^2_m1_|v|^2":
                      sp.simplify(conditional - s1**2 * m1 * sum(x**2 for x in v)) == 0,
                  "unconditional_variance": str(second),
                  "unconditional_equals_printed": sp.simplify(second - s1**2 * s0**2 * m * m1) == 0,
                  "kurtosis": str(sp.simplify(fourth / second**2)),
                  "kurtosis_equals_3(1+2/m)":
                      sp.simplify(fourth / second**2 - 3 * (1 + sp.Rational(2, m))) == 0},
    }


@dataclass(frozen=True)
class InitSetting:
    """The data set and sizes of one (n, m) point of ``co.regime.init``."""

    tokens: np.ndarray
    d: int
    L: int
    m: int
    m1: int
    #: one-hot X⁽ⁱ⁾ ∈ ℝ^{d×L} for every sample: (n, d, L)
    dense_X: np.ndarray


def _setting(n: int, m: int, seed: int) -> InitSetting:
    regime = REGIMES["init"]
    if n not in regime.n:
        raise InvalidArgument(f"n={n} is not a data set of co.regime.init; valid values: "
                              f"{', '.join(map(str, regime.n))}")
    index = regime.n.index(n)
    data = build_dataset(regime.counts[index], regime.L, regime.d[index], seed)
    if not assumption_2_3(data)["position_map_single_valued"]:
        raise InvalidArgument(f"the n={n} data set repeats a token inside a sample; ‖Xp‖² = Σ_h p_h² needs "
                              f"distinct tokens (dataset 'unique')")
    X = np.zeros((n, data.d, regime.L))
    X[np.arange(n)[:, None], data.tokens, np.arange(regime.L)[None, :]] = 1.0
    return InitSetting(data.tokens, data.d, regime.L, m, regime.m1, X)


def _uniform_gap(K: np.ndarray, Q: np.ndarray, m: int) -> np.ndarray:
    """LΣ_h(p_{l,h} − 1/L)² = L‖Xp_l‖² − 1 for every sample and query, from the scores without cancellation:
    p_h − 1/L = (L·expm1(s_h) − Σ_k expm1(s_k))/(L(L + Σ_k expm1(s_k)))."""
    S = np.matmul(K.transpose(0, 2, 1), Q) / np.sqrt(m)
    E = np.expm1(S)
    L = S.shape[1]
    total = E.sum(axis=1, keepdims=True)
    dev = (L * E - total) / (L * (L + total))
    return L * np.sum(dev**2, axis=1)


def _one_init(setting: InitSetting, blocks: dict, kappa: float, literal: bool) -> dict:
    """Per-init averages of the normalised quantities at one κ (module docstring); ``literal`` also evaluates
    D.4's first equality with dense one-hot X (its largest relative gap; NaN when not evaluated)."""
    L, m, m1 = setting.L, setting.m, setting.m1
    s0, s1 = kappa / math.sqrt(L * m), kappa / math.sqrt(m1)
    lay = Mo.layout(m, m1, setting.d)
    theta = lay.pack({"W": s1 * blocks["W"], "WV": s0 * blocks["WV"], "WK": s0 * blocks["WK"],
                      "WQ": s0 * blocks["WQ"]})
    f0 = Mo.forward(theta, lay, setting.tokens, np.ones(m1))  # a does not enter V, K, Q, P
    uniform = np.full_like(f0["P"], 1.0 / L)  # W_K = 0: every score 0, p_l = 𝟏/L exactly
    unit = s0**2 * m / L
    out = {}
    for name, P in (("p0", f0["P"]), ("uniform", uniform)):
        Y = np.sum(np.matmul(f0["V"], P) ** 2, axis=1)  # ‖W_VX p_l‖², (n, L)
        derived = s0**2 * m * np.sum(P**2, axis=1)  # σ₀²m‖Xp_l‖² = σ₀²mΣ_h p_{l,h}²
        out[name] = {"Y": float(np.mean(Y / unit)), "centred": float(np.mean((Y - derived) / unit)),
                     "derived": float(np.mean(derived / unit)),
                     "identity": (_norm_identity(lay.view(theta, "WV"), setting.dense_X, P, Y) if literal
                                  else math.nan)}
    out["gap"] = _uniform_gap(f0["K"], f0["Q"], m)
    views = lay.views(theta)
    v2 = np.sum(views["WV"] ** 2, axis=0)  # ‖W_Vμ‖² for every token μ ∈ [d]
    S = views["W"].sum(axis=0) @ views["WV"]  # Σ_j w_jᵀW_Vμ
    out["Z2"] = float(np.mean(S**2 / (s1**2 * m1 * v2)))
    out["S2"] = float(np.mean(S**2 / (s1**2 * s0**2 * m * m1)))
    out["v_ratio"] = v2 / (s0**2 * m)
    return out


def _norm_identity(WV: np.ndarray, X: np.ndarray, P: np.ndarray, Y: np.ndarray) -> float:
    """max over (i, l) of |‖W_VXp_l‖² − Σ_j⟨(W_V)_j, Xp_l⟩²|/‖W_VXp_l‖², the rows (W_V)_j against dense Xp_l."""
    literal = np.sum(np.matmul(WV, np.matmul(X, P)) ** 2, axis=1)
    return float(np.max(np.abs(Y - literal) / Y))


def _standard_blocks(setting: InitSetting, seed: int, k: int) -> dict:
    """Init k's standard normals (σ₀ = σ₁ = 1) from SeedSequence([seed, k]) via ``init_params``."""
    lay = Mo.layout(setting.m, setting.m1, setting.d)
    return {name: view.copy() for name, view in
            lay.views(Mo.init_params(setting.m, setting.m1, setting.d, 1.0, 1.0, [seed, k])).items()}


def _moment(values, derived: float, printed: float | None = None) -> dict:
    """Monte-Carlo mean over inits with its SE, against the derived value (and the printed one)."""
    s = summary(np.asarray(values))
    z = (s.mean - derived) / s.se if s.se > 0 else (0.0 if s.mean == derived else math.inf)
    out = {"mc_mean": s.mean, "se": s.se, "inits": s.n, "derived": derived, "z": z, "within_3se": abs(z) <= K_SE}
    if printed is not None:
        zp = (s.mean - printed) / s.se if s.se > 0 else math.inf
        out.update({"printed": printed, "z_printed": zp, "printed_within_3se": abs(zp) <= K_SE})
    return out


_CENTRED = "E[|W_VXp|^2 - sigma0^2 m |Xp|^2]"
_QUANTILES = ("min", "q05", "median", "q95", "max")


def _lemD4(per_init: list[dict], kappa: float, L: int) -> dict:
    """D.4's chain at one point, in units of the printed σ₀²m/L: both readings' statuses and numbers."""
    identity = max(per_init[0]["p0"]["identity"], per_init[0]["uniform"]["identity"])
    gap = np.concatenate([r["gap"].reshape(-1) for r in per_init])
    uniform = _moment([r["uniform"]["Y"] for r in per_init], 1.0, 1.0)
    derived = float(np.mean([r["p0"]["derived"] for r in per_init]))
    p0 = {"E|W_VXp|^2": _moment([r["p0"]["Y"] for r in per_init], derived, 1.0),
          _CENTRED: _moment([r["p0"]["centred"] for r in per_init], 0.0),
          "last_equality_relative_excess": {"formula": "L‖Xp⁽⁰⁾‖² − 1 = LΣ_h(p_h − 1/L)²", "min": float(gap.min()),
                                            "mean": float(gap.mean()), "max": float(gap.max())}}
    norm_ok = identity <= IDENTITY_RTOL
    status = {
        "uniform": Status.HOLDS if norm_ok and uniform["within_3se"] else Status.FAILS,
        "p0": (Status.FAILS if not (norm_ok and p0[_CENTRED]["within_3se"]) else
               Status.DIFFERS if gap.max() > 0 else Status.HOLDS),
    }
    return {"printed_value": "σ₀²m/L", "unit": kappa**2 / L**2, "norm_identity_max_relative": identity,
            "uniform": uniform, "p0": p0, "status": {k: v.value for k, v in status.items()}}


def _lemD7(per_init: list[dict], kappa: float, L: int, m: int) -> dict:
    """D.7's law at one point: E[S²/(σ₁²m₁‖W_Vμ‖²)] = 1 (conditional), E[S²]/(σ₁²σ₀²mm₁) = 1 (unconditional), and
    the factor ‖W_Vμ‖²/(σ₀²m) between the conditional and the printed variance."""
    v_ratio = np.concatenate([r["v_ratio"] for r in per_init])
    conditional = _moment([r["Z2"] for r in per_init], 1.0)
    unconditional = _moment([r["S2"] for r in per_init], 1.0)
    status = {
        "conditional": (Status.FAILS if not conditional["within_3se"] else
                        Status.DIFFERS if np.any(v_ratio != 1.0) else Status.HOLDS),
        "unconditional": Status.HOLDS if unconditional["within_3se"] else Status.FAILS,
    }
    factor = dict(zip(_QUANTILES, map(float, np.quantile(v_ratio, [0.0, 0.05, 0.5, 0.95, 1.0])), strict=True))
    return {"printed_variance": "σ₁²σ₀²mm₁", "unit": kappa**4 / L,
            "conditional": {"E[S^2 / (sigma1^2 m1 |W_V mu|^2)]": conditional,
                            "variance_factor_|W_V mu|^2/(sigma0^2 m)": factor},
            "unconditional": {"E[S^2] / (sigma1^2 sigma0^2 m m1)": unconditional,
                              "kurtosis_3(1+2/m)": 3 * (1 + 2 / m)},
            "status": {k: v.value for k, v in status.items()}}


def _point(setting: InitSetting, per_init: list[dict], kappa: float) -> dict:
    """Both displays at one (n, m, κ), under every reading."""
    m, L = setting.m, setting.L
    return {"n": int(setting.tokens.shape[0]), "m": m, "kappa": kappa, "sigma0": kappa / math.sqrt(L * m),
            "sigma1": kappa / math.sqrt(setting.m1), "lemD4": _lemD4(per_init, kappa, L),
            "lemD7": _lemD7(per_init, kappa, L, m)}


def _symbolic_route() -> dict:
    """:func:`symbolic_moments`, whose every comparison must come out true (they are Gaussian facts)."""
    symbolic = symbolic_moments()
    flags = {k: v for part in ("lemD4", "lemD7") for k, v in symbolic[part].items() if isinstance(v, bool)}
    if not all(flags.values()):
        raise InternalError(f"the symbolic Gaussian moments contradict the derivation: {flags}; this is a bug")
    return symbolic


def _sweep(ctx, inits: int) -> list[dict]:
    """Every (n, m, κ) point: each init's standard normals drawn once and scaled to every κ."""
    points = []
    kappas = ctx.grid("kappa")
    for n in ctx.grid("n"):
        for m in ctx.grid("m"):
            setting = _setting(n, m, ctx.seed)
            per_init = {kappa: [] for kappa in kappas}
            for k in range(inits):
                blocks = _standard_blocks(setting, ctx.seed, k)
                for kappa in kappas:
                    per_init[kappa].append(_one_init(setting, blocks, kappa, literal=k == 0))
            points += [_point(setting, per_init[kappa], kappa) for kappa in kappas]
    return points


def check_init_moments(ctx) -> Outcome:
    """co.cf.init_moments — Lemma D.4 proof (L2138–L2145), Lemma D.7 proof (L2203–L2210):
    E‖W_VXp_l⁽⁰⁾‖² = E Σ_j⟨(W_V)_j, Xp_l⁽⁰⁾⟩² = σ₀²m‖Xp_l⁽⁰⁾‖² = σ₀²m/L, and, conditioned on W_Vμ_i,
    Σ_{j=1}^{m₁} w_jᵀW_Vμ_i ~ 𝒩(0, σ₁²σ₀²mm₁). Derived: Gaussian moments (symbolic), then Monte Carlo over
    inits within 3 SE at uniform attention and at p⁽⁰⁾; readings ``attention`` and ``conditioning`` (module
    docstring)."""
    inits = ctx.grid("inits")[0]
    reading = {name: ctx.value(name) for name in READINGS}
    symbolic = _symbolic_route()
    points = _sweep(ctx, inits)
    d4 = combine(p["lemD4"]["status"][reading["attention"]] for p in points)
    d7 = combine(p["lemD7"]["status"][reading["conditioning"]] for p in points)
    status = combine([d4, d7])
    others = {f"{flag}={value}": combine(p[key]["status"][value] for p in points).value
              for flag, key in (("attention", "lemD4"), ("conditioning", "lemD7"))
              for value in READINGS[flag] if value != reading[flag]}
    return Outcome(status, _init_summary(status, d4, d7, reading, points, inits), {
        "readings": {"used": reading, "canonical": {k: v[0] for k, v in READINGS.items()}, "others": others},
        "display_status": {"lemD4_chain": d4.value, "lemD7_law": d7.value},
        "symbolic": symbolic, "points": points, "inits": inits, "seed": ctx.seed,
        "k_se": K_SE, "regime": "co.regime.init", "dataset": "unique",
    })


def _init_summary(status: Status, d4: Status, d7: Status, reading: dict, points: list[dict], inits: int) -> str:
    """One line: both displays' statuses, the size of each difference, the worst z of the derived moments."""
    gap = max(p["lemD4"]["p0"]["last_equality_relative_excess"]["max"] for p in points)
    z = max(abs(x) for p in points for x in (p["lemD4"]["uniform"]["z"], p["lemD4"]["p0"][_CENTRED]["z"],
                                             p["lemD7"]["conditional"]["E[S^2 / (sigma1^2 m1 |W_V mu|^2)]"]["z"],
                                             p["lemD7"]["unconditional"]["E[S^2] / (sigma1^2 sigma0^2 m m1)"]["z"]))
    factors = [p["lemD7"]["conditional"]["variance_factor_|W_V mu|^2/(sigma0^2 m)"] for p in points]
    lo, hi = min(f["min"] for f in factors), max(f["max"] for f in factors)
    return (f"{status.value}: D.4 chain {d4.value} at attention={reading['attention']} ('= σ₀²m/L' is exact only "
            f"at uniform attention; at p⁽⁰⁾ σ₀²m‖Xp‖² exceeds it by ≤ {gap:.2g} relative); D.7 {d7.value} under "
            f"conditioning={reading['conditioning']} (conditional variance σ₁²m₁‖W_Vμ‖² = printed × factor in "
            f"[{lo:.3g}, {hi:.3g}]; the printed value is the unconditional variance); derived moments: max |z| = "
            f"{z:.2f} ({'within' if z <= K_SE else 'outside'} {K_SE:g} SE) over {inits} inits × {len(points)} "
            f"(n, m, κ)")


# ---- registration ------------------------------------------------------------------------------------------------
register(Claim(
    "co.cf.softmax_perturb", PAPER, "Lemma G.2 (L7737–L7747)", "formula", check_softmax_perturb,
    statement="p(s+ε) − p(s) = (diag(p(s)) − p(s)p(s)ᵀ)ε + ξ, where ‖ξ‖_∞ = O(‖ε‖₂²).",
    params=(Param("draws", 20000,
                  doc="instances (s, ε): draws/8 pairs (s, ε/‖ε‖), each at ‖ε‖₂ = 1, 1e−1, …, 1e−7"),
            Param("audit", 200, doc="pairs recomputed from the definition at 50 digits at ‖ε‖₂ = 1e−7")),
    domain=Domain(integers={sp.Symbol("draws", integer=True): (8 * 4, (20000,)),
                            sp.Symbol("audit", integer=True): (1, (200,))}),
    doc=check_softmax_perturb.__doc__ or "", cost=1.0))

register(Claim(
    "co.cf.init_moments", PAPER, "Lemma D.4 proof (L2138–L2145); Lemma D.7 proof (L2203–L2210)", "formula",
    check_init_moments,
    statement="E[‖W_V⁽⁰⁾X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖₂²] = E[Σ_{j=1}^m ⟨(W_V⁽⁰⁾)_j, X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾⟩²] = σ₀²m‖X⁽ⁱ⁾p_l⁽⁰,ⁱ⁾‖₂² = σ₀²m/L; "
              "conditioned on W_V⁽⁰⁾μ_i, Σ_{j=1}^{m₁} w_j⁽⁰⁾W_V⁽⁰⁾μ_i ~ 𝒩(0, σ₁²σ₀²mm₁).",
    params=(Param("kappa", 0.5, quick=(0.5, 0.1), full=(0.5, 0.25, 0.1, 0.05, 0.02),
                  doc="κ₀ = κ₁ = κ: σ₀ = κ/√(Lm), σ₁ = κ/√m₁"),
            Param("m", 512, quick=(512,), full=(512, 2048), doc="embedding dimension"),
            Param("n", 24, doc="training-set size: a data set of co.regime.init (24 or 600)"),
            Param("inits", 300, quick=(300,), full=(1000,), doc="initialisations (protocol P-init)"),
            Param("attention", "p0", choices=READINGS["attention"],
                  doc="reading: the D.4 chain at the initial attention p⁽⁰⁾ (canonical) or at p = 𝟏/L"),
            Param("conditioning", "conditional", choices=READINGS["conditioning"],
                  doc="reading: D.7's law given W_Vμ_i as printed (canonical) or its unconditional variance")),
    domain=Domain(intervals={sp.Symbol("kappa", positive=True): Interval(0, 1, hi_open=False)},
                  integers={sp.Symbol("m", integer=True): (1, (512,)), sp.Symbol("n", integer=True): (6, (24,)),
                            sp.Symbol("inits", integer=True): (2, (300,))}),
    doc=check_init_moments.__doc__ or "", cost=2.0))
