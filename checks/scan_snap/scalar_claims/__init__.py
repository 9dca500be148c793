r"""Claims of spec §6.2 on h, h*, ω and γ ("Scan and Snap", App. B.3 and Theorem 1).

Lemma 7 (a), (b), Remark 2, Lemma 8 with Remark 3, the two stages of Lemma 9 and Theorem 1(b).

First principles (derived here; every part is compared with them):

* **The shift c(s).** Eqn 45 says that Φ(h) := e^{Mh} + (M−1)Mh grows by exactly Mη_Y per unit of s along
  h.
  Along the recursion of Eqn 33 one step f = η_Y/((M−1) + E), E = e^{Mh*}, raises Φ by Mη_Y + Eφ(Mf),
  φ(x) = e^x − 1 − x > 0. Hence h*(s) = h(s + c(s)) with

      c(s) = (Φ(h*(s)) − 1)/(Mη_Y) − s = (1/(Mη_Y)) Σ_{j<s} E_j φ(M f_j)   (exact),

  so h* ≥ h for every M, η_Y and s (Lemma 7(a), first inequality), c increases with s, and the smallest c
  with h(s + c) ≥ h*(s) on s ≤ S is c(S). Through the transition Σ ≈ ½ ln((M + E_s)/(M + 1)); at the end of
  Lemma 7's window (s = ln M/η_Y) c → ½ ln(1 + W(1)) ≈ 0.2246 as η_Y → 0: c = Θ(1) holds.
* **Remark 2 is wrong.** In stage 2 (E ≈ Mη_Ys) each term of the sum tends to 1/(2j): c(s) = ½ ln s + O(1)
  diverges, so no constant c (of any size in M) gives h*(s) ≤ h(s + c) for all s > s₁, and
  h* − h = h(s + c) − h(s) ≈ (½ ln s + C)/(Ms), which is not O(ln M/(Ms)) along s. The remark's linearisation
  δḣ ≍ −δh/t drops the discretisation source: δḣ = −δh/t + 1/(2Mt²), whose solution is (½ ln t + C)/(Mt).
* **Lemma 9.** With τ := η_Yt/K, h(t/K) = u(τ)/M where e^u + (M−1)u = Mτ + 1; γ depends on (τ, M) only
  (``t_over_K``). Stage 1: (M−1)u ≤ Mτ, so Mh/τ ≤ M/(M−1) and γ/τ ≤ 1 exactly; but e^u ≤ (M−1)u needs u above
  Lemma 8's lower root u₀, i.e. t ≥ t_low = K(2(M−1)u₀ − 1)/(Mη_Y) ≈ K/(Mη_Y), which exceeds 1 when K > Mη_Y
  (Remark 3 places h(1) above the lower root, but γ uses h(t/K)). Stage 2: the window starts at τ₀ = 2u₁,
  above the balance point τ_b = (2(M−1)u₁ − 1)/M, so e^u ≥ max(M−1, (M−1)u) holds; γτ/ln(Mτ) → 1 as t → ∞
  and equals ≈ 2u₁/(u₁ + ln 2u₁) → 2 at the window start: bounded.
* **Theorem 1(b)** prints K ln(η_Yt/K)/(η_Yt) (no M in the logarithm): the ratio γτ/ln τ at the window start
  is ≈ ln(Mτ₀)/ln τ₀ ~ ln M/ln ln M, unbounded in M; for a fixed M it still tends to 1 along t.
* **Lemma 8.** ω₀ ln M = ln(M/(M−1)) + u₀ (Eqn 50 is an identity), ω₀ ≈ 2/(M ln M); ω₁ ln M = ln u₁ +
  ln((M−1)/M), ω₁ ln M/ln ln M = 1 + O(1/ln M). Remark 3's chain "1/M^{1−ω₀} > 1/M^{0.99}" holds only when
  ω₀ > 0.01, which Lemma 8 excludes for M ≫ 100: the printed inequality is reversed.

Regime (R11): "≫" in a hypothesis is read as a factor ≥ 10 (:data:`FACTOR`): M ≫ 100 as M ≥ 1000 and
M^{-0.99} ≪ η_Y < 1 as η_YM^{0.99} ≥ 10, η_Y < 1 (Lemma 9 follows Remark 3's "we just assume" of L577);
Theorem 1 adds t ≫ K² (t ≥ 10K²); Remark 2 assumes η_Y = O(1) (η_Y ≤ 1); Lemma 7 assumes nothing.
"≪"/Θ/O in a *conclusion* are decided in the limit (:mod:`checks.asymptotics`), never by a fixed factor.

The vocabulary sweeps of Lemma 9 and Theorem 1(b) reach M = 10⁶⁴ and Lemma 8's 10¹⁶: their windows start at
~2 ln M and the ratios converge in 1/ln M, so a decision along M needs ln M to span a factor ≥ 4
(``checks.asymptotics.DEPTH_SPAN``); h, γ and the roots stay exact in float64 / 50-digit mpmath there.

Importing this package registers every claim, in this order; one module per theme:

_common
    The constants, the numba kernels of h and γ, the shift c(s), Lemma 8's roots, ω₁, t₀, the regime of
    Lemma 9 and the helpers that build a verdict from its parts.
lemma7
    Lemma 7 (a), (b): ``ss.lemma7.gap_bound``, ``ss.lemma7.gap_vanishes`` (h* against h).
remark2
    Remark 2: ``ss.rem2.gap_rate``.
lemma8
    Lemma 8 with Remark 3: ``ss.lemma8.asymptotics``.
lemma9
    The two stages of Lemma 9 (Eqns 52, 55): ``ss.lemma9.stage1``, ``ss.lemma9.stage2``.
theorem1b
    Theorem 1(b): ``ss.thm1b.gamma_rates``.
"""

# isort: off
# the registering submodules, in the order their claims were always registered (``tdcheck list`` shows it)
from checks.scan_snap.scalar_claims import lemma7
from checks.scan_snap.scalar_claims import remark2
from checks.scan_snap.scalar_claims import lemma8
from checks.scan_snap.scalar_claims import lemma9
from checks.scan_snap.scalar_claims import theorem1b
# isort: on
from checks.scan_snap.scalar_claims._common import (
    _ETA_RANGE,
    _K_RANGE,
    _M_RANGE,
    _STEPS_RANGE,
    C_LIMIT,
    EPS,
    FACTOR,
    PAPER,
    REL_TOL,
    STAGE2_SPAN,
    _domain,
    _gamma_many,
    _h_many,
    omega1,
    regime,
    roots,
    shift,
    t0,
    t_low,
)
from checks.scan_snap.scalar_claims.lemma7 import (
    M_LEMMA7,
    aliasing_free_M,
    check_gap_bound,
    check_gap_vanishes,
    decoder_series,
    gap_inequality,
    vanishing,
    window_shift,
)
from checks.scan_snap.scalar_claims.lemma8 import M_LEMMA8_CFG, check_lemma8, remark3_rows
from checks.scan_snap.scalar_claims.lemma9 import (
    ALONG_T_LEMMA9,
    ALONG_T_PRINTED,
    M_GAMMA,
    along_t,
    check_stage1,
    check_stage2,
    eqn52,
    eqn55,
    stage_table,
    sup_decision,
)
from checks.scan_snap.scalar_claims.remark2 import (
    check_rem2,
    lower_end_ratio,
    remark2_parts,
    remark2_slice,
    s1_value,
)
from checks.scan_snap.scalar_claims.theorem1b import check_gamma_rates

__all__ = [
    "ALONG_T_LEMMA9",
    "ALONG_T_PRINTED",
    "C_LIMIT",
    "EPS",
    "FACTOR",
    "M_GAMMA",
    "M_LEMMA7",
    "M_LEMMA8_CFG",
    "PAPER",
    "REL_TOL",
    "STAGE2_SPAN",
    "_ETA_RANGE",
    "_K_RANGE",
    "_M_RANGE",
    "_STEPS_RANGE",
    "_domain",
    "_gamma_many",
    "_h_many",
    "aliasing_free_M",
    "along_t",
    "check_gamma_rates",
    "check_gap_bound",
    "check_gap_vanishes",
    "check_lemma8",
    "check_rem2",
    "check_stage1",
    "check_stage2",
    "decoder_series",
    "eqn52",
    "eqn55",
    "gap_inequality",
    "lemma7",
    "lemma8",
    "lemma9",
    "lower_end_ratio",
    "omega1",
    "regime",
    "remark2",
    "remark2_parts",
    "remark2_slice",
    "remark3_rows",
    "roots",
    "s1_value",
    "shift",
    "stage_table",
    "sup_decision",
    "t0",
    "t_low",
    "theorem1b",
    "vanishing",
    "window_shift",
]
