"""Second method of rl.cf.gradient_projections and rl.cf.gradient_projections_b1: the printed lines.

Every printed projection line is transcribed from the spec as a function of the model's own φ,
T, J', y and 2^{−L} (:class:`Line`) and compared at 60 digits, by the numeric-identity kind, with
the coordinate of the 60-digit gradient it names, as printed and under each correction in turn
(1/λ, the weight 2^{−L}, the index set of line 4); the derivation's values are compared value by
value with the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import mpmath
from mpmath import mp

from checks.claim import Context
from checks.numeric_identity import compare
from checks.regular_language.cross_checks._common import (
    DPS,
    ModelPoint,
    _family,
    _gap,
    _identity,
    _idx,
    _pin,
    _point_values,
    _random_point,
    _rel,
    _result,
    _rng,
    _symbolic,
    _Tally,
)
from derivations.core import Item
from numerics.models.regular_language.data import ep_data


# ----------------------------------------------------------------------------------------------
# rl.cf.gradient_projections and rl.cf.gradient_projections_b1: the printed lines, transcribed


@dataclass(frozen=True)
class Line:
    """One printed projection line at one index combination, and the gradient coordinate it names.

    ``kind``: ``u`` (⟨∇_u L, E_ℓ^w⟩), ``line2`` (⟨E_1^w, ∇_W L E_L^w⟩, C(x_1) = C(x_L) = w, no y_n),
    ``line3`` (⟨E_1^{−w}, ∇_W L E_L^w⟩, C(x_1) ≠ C(x_L) = w, a leading minus, no y_n) or ``line4``
    (⟨E_ℓ^w, ∇_W L E_L^w⟩ with y_n, index set C(x_``index``) = C(x_L) = w: 1 in App. A.1, ℓ in the
    proof of Lemma B.1). ``weighted``: the factor 2^{−L} of each term (the u-lines of B.1 print none).
    ``over_lambda``: the factor 1/λ of ∇_W L (no printed W-line has it). w is 0 (a) or 1 (b).
    """

    kind: str
    ell: int
    L: int | None
    w: int
    index: int = 1
    weighted: bool = True
    over_lambda: bool = False

    def target(self, gu, gW):
        """The gradient coordinate the line's left side names."""
        if self.kind == "u":
            return gu[_idx(self.ell, self.w)]
        key = _idx(1, 1 - self.w) if self.kind == "line3" else _idx(self.ell, self.w)
        return gW[key, _idx(self.L, self.w)]

    def value(self, point: ModelPoint, dps: int | None = None) -> mpmath.mpf:
        """Return the printed right side from the model's φ, T, J' at ``point`` (``dps`` digits or mp.dps)."""
        dps = int(dps or mp.dps)
        with mp.workdps(dps):
            return self._value(point, point.at(dps))

    def _value(self, point: ModelPoint, q) -> mpmath.mpf:
        phis, Ts, jp, _, _, lam = q
        data = point.data
        chars, length, y = data.chars, data.length, data.y
        terms = []
        for n in range(data.n):
            L = int(length[n])
            if self.kind == "u":
                if L < self.ell or chars[n, self.ell - 1] != self.w:
                    continue
                term = jp[n] * int(y[n]) * phis[n][self.ell - 1]
            else:
                if L != self.L or chars[n, L - 1] != self.w:
                    continue
                first = chars[n, 0]
                if (self.kind == "line2" and first != self.w) or (self.kind == "line3" and first == self.w):
                    continue
                if self.kind == "line4" and chars[n, self.index - 1] != self.w:
                    continue
                pos = 1 if self.kind in ("line2", "line3") else self.ell
                u_pos = mpmath.mpf(float(point.u[_idx(pos, int(chars[n, pos - 1]))]))
                term = jp[n] * phis[n][pos - 1] * (u_pos - Ts[n])
                term = -term if self.kind == "line3" else term * int(y[n]) if self.kind == "line4" else term
            terms.append(term / 2**L if self.weighted else term)
        total = mp.fsum(terms)
        return total / lam if self.over_lambda else total


def _line_callables(line: Line):
    def printed(point):
        return line.value(point)

    def derived(point):
        _, _, _, gu, gW, _ = point.at()
        return line.target(gu, gW)

    return printed, derived


#: per item: family → (printed line of an index combination, the corrections tried in order)
def _families(item_id: str, L_max: int) -> dict[str, tuple[list[Line], dict[str, dict]]]:
    chars = (0, 1)
    pairs = [(L, w) for L in range(2, L_max + 1) for w in chars]
    over = {"as printed": {}, "with 1/λ": {"over_lambda": True}}
    if item_id.endswith("_b1"):
        return {
            "u": ([Line("u", ell, None, w, weighted=False) for ell in range(1, L_max + 1) for w in chars],
                  {"as printed": {}, "with 2^-L per term": {"weighted": True}}),
            "W_pos1": ([Line("line2", 1, L, w) for L, w in pairs], over),
            "W": ([Line("line4", ell, L, w, index=ell) for L, w in pairs for ell in range(2, L + 1)], over),
        }
    return {
        "u": ([Line("u", ell, None, w) for ell in range(1, L_max + 1) for w in chars], {"as printed": {}}),
        "W_line2": ([Line("line2", 1, L, w) for L, w in pairs], over),
        "W_line3": ([Line("line3", 1, L, w) for L, w in pairs], over),
        "W_line4": ([Line("line4", ell, L, w) for L, w in pairs for ell in range(1, L + 1)],
                    {**over, "index set C(x_ℓ) = C(x_L) = w": {"index": None},
                     "index set C(x_ℓ) and 1/λ": {"index": None, "over_lambda": True}}),
    }


def _corrected(line: Line, change: Mapping[str, Any]) -> Line:
    fields = {"kind": line.kind, "ell": line.ell, "L": line.L, "w": line.w, "index": line.index,
              "weighted": line.weighted, "over_lambda": line.over_lambda, **change}
    if fields["index"] is None:
        fields["index"] = line.ell
    return Line(**fields)


def _name(line: Line) -> str:
    w = "ab"[line.w]
    return f"l{line.ell}{w}" if line.kind == "u" else f"l{line.ell}.L{line.L}{w}"


_SHORT = re.compile(r"^(u|W_line2|W_line3|W_line4|W_pos1|W)\.(?:l(\d+)([ab])?\.)?(?:L(\d+)([ab])\.)?Lmax(\d+)"
                    r"(\.times_lambda)?$")


def _line_of_formula(item_id: str, short: str) -> tuple[Line, bool] | None:
    """The printed line (as printed) of a derivation formula id, and whether it is a ``times_lambda`` one."""
    m = _SHORT.match(short)
    if not m:
        return None
    family, ell, w_u, L, w_W, _, times = m.groups()
    b1 = item_id.endswith("_b1")
    if family == "u":
        return Line("u", int(ell), None, "ab".index(w_u), weighted=not b1), False
    w = "ab".index(w_W)
    if family in ("W_line2", "W_pos1"):
        return Line("line2", 1, int(L), w), bool(times)
    if family == "W_line3":
        return Line("line3", 1, int(L), w), bool(times)
    return Line("line4", int(ell), int(L), w, index=int(ell) if family == "W" else 1), bool(times)


def projections(ctx: Context, item: Item) -> dict[str, Any]:
    """The printed projection lines vs the model gradient's coordinates, at 60 digits (both projection items).

    Every printed line is transcribed here from the spec as a function of the model's own φ, T,
    J', y and 2^{−L} (:class:`Line`), evaluated at EP L_max = 6 (full: 4, 6, 8) at 5 (full 50)
    random points (u, W, λ) with the numeric-identity kind, against the coordinate of the 60-digit
    gradient it names; as printed, then with each correction in turn (the factor 1/λ, the weight
    2^{−L}, the index set of line 4). The first correction under which every index combination
    matches is the factor that separates print and model. The derivation's printed and derived
    expressions are evaluated at one point of its own size and compared value by value with the
    same numbers here.
    """
    lam = _pin(ctx, "lam")
    quick = ctx.quick
    sizes, n_points = ((6,), 5) if quick else ((4, 6, 8), 50)
    points: dict[int, list[ModelPoint]] = {n: [] for n in sizes}
    datasets = {n: ep_data(n) for n in sizes}
    for k in range(n_points):
        n = sizes[k % len(sizes)]
        u, W, lam_k = _random_point(_rng(ctx, item.id, k), datasets[n].dim, lam)
        points[n].append(ModelPoint(datasets[n], u, W, lam_k, f"point {k} (L_max={n}, lam={lam_k:.6g})"))
    families_out: dict[str, Any] = {}
    for n in sizes:
        for family, (lines, corrections) in _families(item.id, n).items():
            out = families_out.setdefault(family, {"combinations": 0, "readings": {}})
            out["combinations"] += len(lines)
            for reading, change in corrections.items():
                entry = out["readings"].setdefault(reading, {"match": 0, "first_mismatch": None})
                for line in lines:
                    printed, derived = _line_callables(_corrected(line, change))
                    record = compare(printed, derived, points=[{"point": p} for p in points[n]], dps=DPS)
                    if record.holds:
                        entry["match"] += 1
                    elif entry["first_mismatch"] is None:
                        entry["first_mismatch"] = {"line": _name(line), "L_max": n, **_identity(record)}
    for out in families_out.values():
        full = [r for r, e in out["readings"].items() if e["match"] == out["combinations"]]
        out["matches_as_printed"] = out["readings"]["as printed"]["match"] == out["combinations"]
        if not out["matches_as_printed"]:
            out["separating_correction"] = full[0] if full else "none found"
    # the derivation's values at a point of its own size
    tally, derivation = _Tally(), {}
    by_size: dict[int, list] = {}
    for f in item.formulas:
        short = f.id.removeprefix(item.id + ".")
        parsed = _line_of_formula(item.id, short)
        if parsed is None:
            tally.missing.append(short)
            continue
        by_size.setdefault(int(re.search(r"Lmax(\d+)", short).group(1)), []).append((short, f, *parsed))
    for n, entries in by_size.items():
        data = ep_data(n)
        u, W, lam_k = _random_point(_rng(ctx, item.id, 1000), data.dim, lam)
        point = ModelPoint(data, u, W, lam_k)
        value = _point_values(u, W, lam_k)
        q = point.at(DPS)
        for short, formula, line, times in entries:
            stated, derived = _symbolic([formula.stated, formula.derived], value)
            with mp.workdps(DPS):
                target = line.target(q[3], q[4]) * (q[5] if times else 1)
            tally.add(short + ".printed", line.value(point, DPS), stated, atol=1e-50)
            tally.add(short + ".derived", target, derived, atol=1e-50)
            family = short.split(".")[0] + (" ×λ" if times else "")
            row = derivation.setdefault(family, {"formulas": 0, "equal": 0})
            row["formulas"] += 1
            row["equal"] += _rel(stated, derived) <= 1e-20 or _gap(stated, derived) <= 1e-40
    disagrees = [_family(name) for name in tally.failed]
    # the derivation's conclusion per family must be the numbers' conclusion (same lines, same sizes)
    for family, out in families_out.items():
        row, row_l = derivation.get(family), derivation.get(family + " ×λ")
        if row and (row["equal"] == row["formulas"]) != out["matches_as_printed"]:
            disagrees.append(family)
        if row_l and out["readings"].get("with 1/λ") and (row_l["equal"] == row_l["formulas"]) != (
                out["readings"]["with 1/λ"]["match"] == out["combinations"]):
            disagrees.append(family)
    evidence = {
        "method": "printed lines transcribed from the spec, evaluated from the model's own φ, T, J' at 60 "
                  "digits (numeric-identity kind) against the 60-digit gradient",
        "L_max": list(sizes), "points": [p.label for n in sizes for p in points[n]],
        "families": families_out, "derivation_conclusions": derivation, "derivation_values": tally.record(),
    }
    parts = []
    for family, out in families_out.items():
        if out["matches_as_printed"]:
            parts.append(f"{family} matches")
        else:
            as_printed = out["readings"]["as printed"]["match"]
            parts.append(f"{family}: {as_printed}/{out['combinations']} as printed, "
                         f"all match {out['separating_correction']}")
    summary = "second method (60 digits, L_max " + "/".join(map(str, sizes)) + "): " + "; ".join(parts)
    return _result(evidence, summary, disagrees)
