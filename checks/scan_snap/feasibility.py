r"""``ss.dv.asm2_feasibility``: for which (K, M) can any admissible E satisfy Assumption 2 (L130)?

Assumption 2 asks FᵀF = I + E with |λ₁(E)| < 1/K and |λ_i(E)| >= 6/√M for all i. Admissible E (spec §2.7):
symmetric, zero diagonal, non-negative off-diagonal entries, E = FᵀF − I with unit non-negative f_n ∈ ℝ^M.

Derivation (μ := 6/√M, ρ := ρ(E), m := min_i |λ_i(E)|):

* Necessary, every K: E is non-negative, so ρ = λ₁ >= |λ_i| (Perron–Frobenius) and m <= ρ < 1/K; hence
  μ < 1/K, i.e. **M > 36K²** (so "M ≫ K²" is implied with a factor 36).
* Even K: a perfect matching with weights a has spectrum ±a, so m = ρ = a; any a ∈ [μ, 1/K) works:
  **feasible ⇔ M > 36K²**.
* Odd K: E has an odd number of non-zero eigenvalues summing to 0 (tr E = 0). With p positive and q
  negative ones (p + q = K when m > 0): if q > p, then qm <= Σ|negative| = Σ positive <= pρ; if p > q,
  ρ + (p − 1)m <= Σ positive = Σ|negative| <= qρ. Either way m/ρ <= (K − 1)/(K + 1) =: r̄_K, so no E for
  **M <= 36K²/r̄_K²** (K = 3: r̄₃ = ½, so M <= 1296). The matching on K − 3 indices with weight 2a plus a
  triangle with weight a has spectrum ±2a, 2a, −a, −a: m/ρ = ½, so **feasible for M > 144K²**. For K = 3 the
  two bounds meet (feasible ⇔ M > 1296); for odd K >= 5 the band 36K²·((K+1)/(K−1))² < M <= 144K² is not
  settled by these arguments, and the certified search below probes it.
* Realisability: with m <= ρ < 1/K every row sum of E is at most √K ρ < 1, so I + E is diagonally dominant
  and non-negative, hence completely positive (Kaykobad): non-negative unit f_n exist in ℝ^{K + #pairs}
  (:func:`numerics.models.scan_snap.matrices.gram_features`), and M > 36K² exceeds K + K(K−1)/2.
* Equal overlap E = ρ₀(𝟏𝟏ᵀ − I) (``ss.dv.equal_overlap_spectrum``): spectrum ρ₀(K−1), −ρ₀ (K−1 times), so
  m = ρ₀ and |λ₁| = ρ₀(K−1): **feasible ⇔ M > 36K²(K−1)²**.

Verification, each boundary from both sides: above it, an explicit admissible F (non-negative unit
columns, FᵀF − I = E, the spectrum of FᵀF − I recomputed from F) at the smallest integer M it allows;
below it, :func:`checks.spectral_search.certify_no_spectrum_in_band` (exact rational branch and bound) at
M = ⌊f·boundary⌋ (f = ``below_fraction``; at the boundary itself the supremum is approached but not
attained, so no finite search can close it). Part (b), E(0) and the margins at every configuration, is the
table of ``ss.asm2.regime_check``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from checks.claim import Claim, Outcome, Param
from checks.registry import register
from checks.scan_snap.sequence_items import assumption2_rows
from checks.spectral_search import certify_no_spectrum_in_band
from checks.status import Status, combine
from derivations.errors import InvalidArgument
from numerics.models.scan_snap.matrices import gram_features, matching_triangle_E

PAPER = "ss"
#: |FᵀF − I − E| and the unit norms, in float64 from an explicit F
GRAM_TOL = 1e-14


def boundaries(K: int) -> dict:
    """The derived thresholds on M for K classes (module docstring): Assumption 2 is infeasible for
    M <= ``infeasible_up_to`` and feasible for M > ``feasible_above``; the same for the equal-overlap family."""
    if K % 2 == 0:
        infeasible, feasible = Fraction(36 * K * K), Fraction(36 * K * K)
    else:
        infeasible, feasible = Fraction(36 * K * K) * Fraction(K + 1, K - 1) ** 2, Fraction(144 * K * K)
    family = Fraction(36 * K * K * (K - 1) ** 2)
    return {"K": K, "infeasible_up_to": infeasible, "feasible_above": feasible, "settled": infeasible == feasible,
            "equal_overlap": family}


def _construct(K: int, M: int, E: np.ndarray) -> dict:
    """An explicit F for E at M, and Assumption 2's margins recomputed from FᵀF − I."""
    F = gram_features(E, M)
    G = F.T @ F
    lam = np.linalg.eigvalsh(G - np.eye(K))
    radius, smallest = float(np.max(np.abs(lam))), float(np.min(np.abs(lam)))
    gram_error = float(np.max(np.abs(G - np.eye(K) - E)))
    ok = bool(np.all(F >= 0) and gram_error <= GRAM_TOL and radius < 1 / K and smallest >= 6 / math.sqrt(M))
    return {"M": M, "admissible_and_inside": ok, "abs_lambda1": radius, "min_abs_lambda": smallest,
            "margin_1_over_K": 1 / K - radius, "margin_6_over_sqrtM": smallest - 6 / math.sqrt(M),
            "gram_error": gram_error, "coordinates_used": int(np.count_nonzero(F.any(axis=1)))}


def _middle(lower: float, upper: float) -> float:
    return math.sqrt(lower * upper)


def _general_construction(K: int, M: int) -> dict:
    mu, scale = 6 / math.sqrt(M), 1 if K % 2 == 0 else 2  # |λ₁| = scale·a, min|λ_i| = a
    return _construct(K, M, matching_triangle_E(K, _middle(mu, 1 / (scale * K))))


def _family_construction(K: int, M: int) -> dict:
    mu = 6 / math.sqrt(M)
    rho0 = _middle(mu, 1 / (K * (K - 1)))
    return _construct(K, M, rho0 * (np.ones((K, K)) - np.eye(K)))


def _first_integer_above(x: Fraction) -> int:
    return math.floor(x) + 1


def _search(K: int, M: int, boxes: int) -> dict:
    certificate = certify_no_spectrum_in_band(K, Fraction(1, K), Fraction(36, M), max_boxes=boxes)
    return {"M": M, **certificate.to_dict()}


def _part_status(construction: dict, search: dict | None) -> Status:
    if not construction["admissible_and_inside"] or (search and search["status"] == "counterexample"):
        return Status.FAILS
    if search and search["status"] == "undecided":
        return Status.INCONCLUSIVE
    return Status.HOLDS


def check_feasibility(ctx) -> Outcome:
    """Both sides of every derived boundary for each K (module docstring); part (b) from the configurations."""
    fraction = ctx.value("below_fraction")
    if not 0 < fraction < 1:
        raise InvalidArgument(f"below_fraction must lie in (0, 1) (the search runs at M = ⌊fraction·boundary⌋); "
                              f"got {fraction!r}")
    rows, parts, open_bands = [], [], []
    for K in ctx.grid("K"):
        if not isinstance(K, int) or K < 2:
            raise InvalidArgument(f"K must be an integer >= 2 (classes); got {K!r}")
        b = boundaries(K)
        above = _general_construction(K, _first_integer_above(b["feasible_above"]))
        below_M = math.floor(fraction * b["feasible_above"])
        search = _search(K, below_M, ctx.grid("boxes")[0]) if K in ctx.grid("search_K") else None
        family_above = _family_construction(K, _first_integer_above(b["equal_overlap"]))
        family_M = int(b["equal_overlap"])  # the family's boundary itself is infeasible, exactly:
        family_empty = Fraction(36, family_M) >= Fraction(1, (K * (K - 1)) ** 2)
        status = combine([_part_status(above, search), _part_status(family_above, None),
                          Status.HOLDS if family_empty else Status.FAILS])
        if not b["settled"]:
            certified_up_to = below_M if search and search["status"] == "certified" else 0
            lowest = max(math.floor(b["infeasible_up_to"]), certified_up_to)
            open_bands.append(f"K={K}: {lowest} < M <= {int(b['feasible_above'])}")
        parts.append(status)
        rows.append({"K": K, "infeasible_for_M_up_to": float(b["infeasible_up_to"]),
                     "feasible_for_M_above": float(b["feasible_above"]), "boundary_exact": b["settled"],
                     "construction_above": above, "search_below": search,
                     "equal_overlap_boundary": float(b["equal_overlap"]),
                     "equal_overlap_construction_above": family_above,
                     "equal_overlap_infeasible_at_boundary": family_empty, "status": status.value})
    status = combine(parts)
    searched = [r for r in rows if r["search_below"]]
    summary = ("Assumption 2 is satisfiable iff M > 36K² for even K and (K = 3) M > 1296; for odd K, "
               "feasible for M > 144K² and infeasible for M <= 36K²((K+1)/(K−1))²; equal overlaps need M > "
               "36K²(K−1)². Constructions above every boundary: "
               f"{sum(r['construction_above']['admissible_and_inside'] for r in rows)}/{len(rows)} (general), "
               f"{sum(r['equal_overlap_construction_above']['admissible_and_inside'] for r in rows)}/{len(rows)} "
               "(equal overlap); certified searches below: "
               + ", ".join(f"K={r['K']} at M={r['search_below']['M']}: {r['search_below']['status']} "
                           f"({r['search_below']['boxes']} boxes)" for r in searched))
    if open_bands:
        summary += "; not settled: " + "; ".join(open_bands)
    return Outcome(status, summary, {"per_K": rows, "configurations": assumption2_rows(),
                                     "below_fraction": fraction})


register(Claim(
    "ss.dv.asm2_feasibility", PAPER, "derived (Assumption 2, L130)", "derive", check_feasibility,
    params=(Param("K", 2, quick=(2, 3, 4, 5, 6, 7), doc="numbers of classes"),
            Param("search_K", 2, quick=(2, 3, 4), full=(2, 3, 4, 5), doc="K at which the certified search runs"),
            Param("boxes", 20_000, quick=(20_000,), full=(2_000_000,),
                  doc="box budget of each certified search (work, not seconds)"),
            Param("below_fraction", 0.9, doc="the search runs at M = ⌊below_fraction·boundary⌋")),
    statement="Derived: an admissible E with |λ₁| < 1/K and min|λ_i| >= 6/√M exists iff M > 36K² (even K), "
              "M > 1296 (K = 3); for odd K >= 5, for M > 144K² and not for M <= 36K²((K+1)/(K−1))²; "
              "in the equal-overlap family iff M > 36K²(K−1)²."))
