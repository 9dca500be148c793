r"""``ss.dv.asm2_feasibility``: for which (K, M) can any admissible E satisfy Assumption 2 (L130)?

Assumption 2 asks FᵀF = I + E with |λ₁(E)| < 1/K and |λ_i(E)| >= 6/√M for all i. Admissible E (spec §2.7):
symmetric, zero diagonal, non-negative off-diagonal entries, E = FᵀF − I with unit non-negative f_n ∈ ℝ^M.

Derivation (μ := 6/√M, ρ := ρ(E), m := min_i |λ_i(E)|):

* Necessary, every K: E is non-negative, so ρ = λ₁ >= |λ_i| (Perron–Frobenius) and m <= ρ < 1/K; hence
  μ < 1/K, i.e. **M > 36K²** (so "M ≫ K²" is implied with a factor 36).
* Even K: a perfect matching with weights a has spectrum ±a, so m = ρ = a; any a ∈ [μ, 1/K) works:
  **feasible ⇔ M > 36K²**.
* Odd K = 2k + 1: |λ_{k+1}(E)| <= ρ/2 (proof below), so m <= ρ/2 < 1/(2K) and no E exists for M <= 144K²; the
  matching on K − 3 indices with weight 2a plus a triangle with weight a has spectrum ±2a, 2a, −a, −a (m/ρ = ½):
  **feasible ⇔ M > 144K²** (K = 3: M > 1296).
  Proof of |λ_{k+1}| <= ρ/2. If E is reducible, one of its irreducible blocks has odd order: a 1×1 block gives
  the eigenvalue 0, a larger one the claim for the block (ρ_block <= ρ). If E is irreducible, let x > 0 be its
  Perron vector and w_ij = E_ij x_i x_j (Σ_j w_ij = ρx_i²). Take a partition S ∪ T maximising the cut
  Σ_{i∈S, j∈T} w_ij; moving one vertex across cannot increase it, so Σ_{j on i's side} E_ij x_j <= ρx_i/2 for
  every i. Let S be the side with s >= k + 1 vertices. For y = x∘z on S, |yᵀE_S y| <= Σ_{i,j∈S} E_ij x_i x_j |z_i z_j|
  <= Σ_{i∈S} z_i² x_i Σ_{j∈S} E_ij x_j <= (ρ/2)‖y‖², so the spectrum of E_S lies in [−ρ/2, ρ/2]. Cauchy interlacing
  (λ_i(E) >= λ_i(E_S) >= λ_{i+K−s}(E)) gives λ_{K−s+1}(E) <= ρ/2 and λ_s(E) >= −ρ/2, and K − s + 1 <= k + 1 <= s.
  (Even K has no such bound: the matching has m = ρ.)
* Realisability: with m <= ρ < 1/K every row sum of E is at most √K ρ < 1, so I + E is diagonally dominant
  and non-negative, hence completely positive (Kaykobad): non-negative unit f_n exist in ℝ^{K + #pairs}
  (:func:`numerics.models.scan_snap.matrices.gram_features`), and M > 36K² exceeds K + K(K−1)/2.
* Equal overlap E = ρ₀(𝟏𝟏ᵀ − I) (``ss.dv.equal_overlap_spectrum``): spectrum ρ₀(K−1), −ρ₀ (K−1 times), so
  m = ρ₀ and |λ₁| = ρ₀(K−1): **feasible ⇔ M > 36K²(K−1)²**.

Verification, each boundary from both sides: above it, an explicit admissible F (non-negative unit
columns, FᵀF − I = E, the spectrum of FᵀF − I recomputed from F) at the smallest integer M it allows;
below it, :func:`checks.spectral_search.certify_no_spectrum_in_band` (exact rational branch and bound) at
M = ⌊f·boundary⌋ (f = ``below_fraction``; at the boundary itself the supremum is approached but not
attained, so no finite search can close it) where the search is affordable (K <= 4: the box count grows like
a power of the K(K−1)/2 entries), and for odd K >= 5 a falsification attempt on the middle-eigenvalue bound
(random non-negative E of several structures, and perturbations of the extremal matrix). Part (b), E(0) and
the margins at every configuration, is the table of ``ss.asm2.regime_check``.
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
    """The derived thresholds on M for K classes (module docstring): Assumption 2 is feasible iff M > ``general``;
    in the equal-overlap family iff M > ``equal_overlap``."""
    return {"K": K, "general": Fraction(36 * K * K if K % 2 == 0 else 144 * K * K),
            "equal_overlap": Fraction(36 * K * K * (K - 1) ** 2)}


def middle_eigenvalue_ratios(K: int, count: int, seed: int) -> np.ndarray:
    """|λ_{k+1}(E)|/ρ(E) (K = 2k + 1) over ``count`` random non-negative zero-diagonal E: dense uniform, sparse,
    heavy-tailed entries, and perturbations of :func:`matching_triangle_E` (where the bound ½ is attained)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, K, 130]))
    out = np.empty(count)
    base = matching_triangle_E(K, 1.0)
    for i in range(count):
        kind = i % 4
        if kind == 3:
            E = base + rng.uniform(0, 10.0 ** rng.uniform(-4, -1), (K, K))
        else:
            E = rng.uniform(0, 1, (K, K)) ** (1 if kind == 0 else 4)
            if kind == 1:
                E *= rng.uniform(0, 1, (K, K)) < rng.uniform(0.2, 0.8)
        E = np.triu(E, 1)
        E = E + E.T
        lam = np.sort(np.linalg.eigvalsh(E))
        out[i] = abs(lam[K // 2]) / np.max(np.abs(lam)) if np.any(lam) else 0.0
    return out


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
    rows, parts = [], []
    for K in ctx.grid("K"):
        if not isinstance(K, int) or K < 2:
            raise InvalidArgument(f"K must be an integer >= 2 (classes); got {K!r}")
        b = boundaries(K)
        above = _general_construction(K, _first_integer_above(b["general"]))
        below_M = math.floor(fraction * b["general"])
        search = _search(K, below_M, ctx.grid("boxes")[0]) if K in ctx.grid("search_K") else None
        falsification = None
        if K % 2 and K >= 5:
            ratios = middle_eigenvalue_ratios(K, ctx.grid("random_E")[0], ctx.seed)
            falsification = {"matrices": int(ratios.size), "max_middle_ratio": float(ratios.max()),
                             "holds": bool(ratios.max() <= 0.5 + 1e-12)}
        family_above = _family_construction(K, _first_integer_above(b["equal_overlap"]))
        family_M = int(b["equal_overlap"])  # the family's boundary itself is infeasible, exactly:
        family_empty = Fraction(36, family_M) >= Fraction(1, (K * (K - 1)) ** 2)
        status = combine([_part_status(above, search), _part_status(family_above, None),
                          Status.HOLDS if family_empty else Status.FAILS,
                          Status.HOLDS if falsification is None or falsification["holds"] else Status.FAILS])
        parts.append(status)
        rows.append({"K": K, "feasible_iff_M_above": float(b["general"]), "construction_above": above,
                     "search_below": search, "middle_eigenvalue_falsification": falsification,
                     "equal_overlap_boundary": float(b["equal_overlap"]),
                     "equal_overlap_construction_above": family_above,
                     "equal_overlap_infeasible_at_boundary": family_empty, "status": status.value})
    status = combine(parts)
    searched = [r for r in rows if r["search_below"]]
    probed = [r for r in rows if r["middle_eigenvalue_falsification"]]
    summary = ("Assumption 2 is satisfiable iff M > 36K² (even K) or M > 144K² (odd K: the middle eigenvalue "
               "has |λ_{k+1}| <= ρ/2), and within equal overlaps iff M > 36K²(K−1)²; so M > 36K² is implied. "
               "Explicit F above every boundary: "
               f"{sum(r['construction_above']['admissible_and_inside'] for r in rows)}/{len(rows)} (general), "
               f"{sum(r['equal_overlap_construction_above']['admissible_and_inside'] for r in rows)}/{len(rows)} "
               "(equal overlap); certified searches below: "
               + ", ".join(f"K={r['K']} at M={r['search_below']['M']}: {r['search_below']['status']} "
                           f"({r['search_below']['boxes']} boxes)" for r in searched))
    if probed:
        summary += "; |λ_{k+1}|/ρ over random E: " + ", ".join(
            f"K={r['K']}: max {r['middle_eigenvalue_falsification']['max_middle_ratio']:.4f} of "
            f"{r['middle_eigenvalue_falsification']['matrices']}" for r in probed)
    return Outcome(status, summary, {"per_K": rows, "configurations": assumption2_rows(),
                                     "below_fraction": fraction})


register(Claim(
    "ss.dv.asm2_feasibility", PAPER, "derived (Assumption 2, L130)", "derive", check_feasibility,
    params=(Param("K", 2, quick=(2, 3, 4, 5, 6, 7), doc="numbers of classes"),
            Param("search_K", 2, quick=(2, 3, 4), doc="K at which the certified search runs"),
            Param("boxes", 20_000, quick=(20_000,), full=(200_000,),
                  doc="box budget of each certified search (work, not seconds)"),
            Param("random_E", 2000, quick=(2000,), full=(50_000,),
                  doc="random E per odd K >= 5 in the falsification attempt of |λ_{k+1}| <= ρ/2"),
            Param("below_fraction", 0.9, doc="the search runs at M = ⌊below_fraction·boundary⌋")),
    statement="Derived: an admissible E with |λ₁| < 1/K and min|λ_i| >= 6/√M exists iff M > 36K² (even K) or "
              "M > 144K² (odd K); in the equal-overlap family iff M > 36K²(K−1)²."))
