"""Shared helpers of the second methods: seeds, random points, comparisons, the model at one point.

Regular-language paper (Huang, Liang, Yang; spec ``shared/spec/regular-language.md`` §3, §2.11,
§8). A model-side hook (:mod:`.loss_gradient`, :mod:`.projections`, :mod:`.bounds`,
:mod:`.early_steps`, :mod:`.cot`) recomputes its item's quantities with
:mod:`numerics.models.regular_language` — the float64 numba model (``RLModel``, its tabled
kernel, ``run_gd`` through the one training driver), the mpmath twin at 60 digits
(``loss_mp``, ``gradient_mp``, ``forward_mp``), exact enumeration and stratified Monte-Carlo,
the CoT rollouts and oracles — and returns (:func:`_result`)

* ``second_method``: the evidence (numbers with their tolerances, seeds, worst points);
* ``summary``: one line for the verdict;
* ``disagrees``: the parts where the numbers contradict the *derivation* (its ``derived``
  expressions or derived constants evaluated at the same points). Such a part makes the item
  inconclusive: it means a bug in the derivation or in the numerics, never a verdict on the paper.

The printed forms are transcribed in the hooks a second time, directly from the spec, as mpmath
callables, and compared with the model's own quantities by the numeric-identity kind
(:func:`checks.numeric_identity.compare`): a printed line that differs from the model is
reported (with the factor that separates them), and is a disagreement only where the derivation
concluded otherwise.

Random points follow spec §2.11: u and W with i.i.d. N(0, 1) entries times scales log-uniform on
[1e-2, 10], λ log-uniform on [0.1, 1e4] (a pinned ``lam`` replaces it, a pinned ``eta`` replaces
the η grid); the generator of point k is ``SeedSequence(run seed, spawn_key=(crc32(item id), k))``,
so the quick budget's points are a prefix of the full budget's. The dynamics hooks share the
pins and the constants here; their own machinery is in :mod:`._dynamics`.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from mpmath import mp

from checks.claim import Context
from checks.numeric_identity import IdentityRecord
from derivations.core import Item, evaluator
from numerics.enumeration import all_strings
from numerics.models.regular_language.data import RLData, cot_data, cot_rule
from numerics.models.regular_language.precise import forward_mp, gradient_mp


KEY = "second_method"
DPS = 60
EPS = float(np.finfo(float).eps)
#: float64 against 60 digits: relative to the largest entry of the compared block (the tabled
#: kernel's rounding grows like ε·|W|/λ, spec §8; 1e-9 leaves six decades of it)
FLOAT_RTOL = 1e-9
#: 60-digit numbers against the derivation's expressions evaluated at 60 digits
MP_RTOL = 1e-40


# ----------------------------------------------------------------------------------------------
# Shared machinery


def _sequence(ctx: Context, item_id: str, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(ctx.seed, spawn_key=(zlib.crc32(item_id.encode()), *key))


def _rng(ctx: Context, item_id: str, k: int) -> np.random.Generator:
    """The generator of point k of an item (module docstring)."""
    return np.random.default_rng(_sequence(ctx, item_id, k))


def _seed(ctx: Context, item_id: str, k: int) -> int:
    """An integer seed for a numerics routine that takes one (Monte-Carlo), from (run seed, item id, k)."""
    return int(_sequence(ctx, item_id, k, 1).generate_state(1)[0])


def _pin(ctx: Context, name: str):
    """The pinned value of ``name`` (a declared parameter), else None."""
    return ctx.value(name) if name in ctx.declared and ctx.is_pinned(name) else None


def _pin_float(ctx: Context, name: str) -> float | None:
    """Return the pinned value of ``name`` as a float, or None (not pinned, or not a parameter here)."""
    value = _pin(ctx, name)
    return None if value is None else float(value)


def _random_point(rng: np.random.Generator, d: int, lam=None, scales=(-2.0, 1.0)) -> tuple:
    """(u, W, λ) of spec §2.11 (scales log-uniform on 10^scales; λ log-uniform on [0.1, 1e4] unless given)."""
    s_u, s_W = 10.0 ** rng.uniform(*scales, size=2)
    u = rng.standard_normal(d) * s_u
    W = rng.standard_normal((d, d)) * s_W
    lam = float(10.0 ** rng.uniform(-1.0, 4.0)) if lam is None else float(lam)
    return u, W, lam


def _rel(a, b) -> float:
    """|a − b| / max(|a|, |b|) (0 when equal), as a float; the difference is taken at 2·DPS digits."""
    with mp.workdps(2 * DPS):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        scale = max(abs(a), abs(b))
        return 0.0 if a == b else float(abs(a - b) / scale)


def _gap(a, b) -> float:
    """|a − b| as a float, the difference taken at 2·DPS digits."""
    with mp.workdps(2 * DPS):
        return float(abs(mpmath.mpf(a) - mpmath.mpf(b)))


def _block_error(x, ref) -> float:
    """Return max |x − ref| / max |ref| over a block (0 when both vanish)."""
    x, ref = np.asarray(x, dtype=float), np.asarray(ref, dtype=float)
    scale = float(np.max(np.abs(ref), initial=0.0))
    gap = float(np.max(np.abs(x - ref), initial=0.0))
    return gap / scale if scale else gap


def _mp_array(m) -> np.ndarray:
    """An mpmath matrix as a float64 array (for float comparisons and reports)."""
    return np.array(m.tolist(), dtype=float).reshape(m.rows, m.cols) if m.cols > 1 else \
        np.array([float(m[i]) for i in range(m.rows)])


def _idx(pos: int, c: int) -> int:
    """0-based embedding index of E_pos^c (c = 0 for a, 1 for b)."""
    return 2 * (pos - 1) + c


_PARAMETER = re.compile(r"^(u)_(\d+)([ab])$|^(W)_(\d+)([ab])_(\d+)([ab])$")


def _coordinate(name: str) -> tuple | None:
    """('u', i) or ('W', i, j) of a derivation symbol ``u_1a`` / ``W_1a_3b``, else None."""
    m = _PARAMETER.match(name)
    if not m:
        return None
    if m.group(1):
        return ("u", _idx(int(m.group(2)), "ab".index(m.group(3))))
    return ("W", _idx(int(m.group(5)), "ab".index(m.group(6))), _idx(int(m.group(7)), "ab".index(m.group(8))))


def _point_values(u, W, lam) -> Callable[[str], Any]:
    """Name → value of a derivation symbol at the numeric point (u, W, λ) (floats are exact)."""
    def value(name: str):
        if name == "lam":
            return lam
        where = _coordinate(name)
        if where is None:
            raise KeyError(name)
        return float(u[where[1]]) if where[0] == "u" else float(W[where[1], where[2]])
    return value


def _free(*exprs) -> tuple:
    """The symbols ``Formula.verify`` evaluates with: free symbols minus those bound by a Sum anywhere."""
    bound = set()
    for expr in exprs:
        if not expr.has(sp.Sum, sp.Product, sp.Integral):
            continue
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.Sum | sp.Product | sp.Integral):
                bound |= {limit[0] for limit in node.limits}
    return tuple(sorted(set().union(*(e.free_symbols for e in exprs)) - bound, key=lambda s: s.name))


def _symbolic(exprs: Sequence[sp.Expr], value: Callable[[str], Any], dps: int = DPS) -> list:
    """Evaluate the derivation's expressions at a point as ``Formula.verify`` does.

    The same cached evaluators: the symbols of all ``exprs`` together, in name order.
    """
    symbols = _free(*exprs)
    point = {s: value(s.name) for s in symbols}
    return [evaluator(e, symbols)(point, dps) for e in exprs]


def _formulas(item: Item, pattern: str) -> dict[str, Any]:
    """The item's formulas whose id (after the item id) matches ``pattern``, by that short id."""
    rx = re.compile(pattern)
    out = {}
    for f in item.formulas:
        short = f.id.removeprefix(item.id + ".")
        if rx.fullmatch(short):
            out[short] = f
    return out


@dataclass
class _Tally:
    """Value-level comparisons of numbers with the derivation's expressions at the same points."""

    compared: int = 0
    worst: float = 0.0
    worst_at: str = ""
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def add(self, name: str, numeric, symbolic, rtol: float = MP_RTOL, atol: float = 0.0) -> None:
        """Compare one number with the derivation's value; a gap beyond the tolerance names ``name``."""
        self.compared += 1
        gap, absolute = _rel(numeric, symbolic), _gap(numeric, symbolic)
        if gap > self.worst:
            self.worst, self.worst_at = gap, name
        if gap > rtol and absolute > atol and name not in self.failed:
            self.failed.append(name)

    def record(self) -> dict[str, Any]:
        """The JSON record."""
        out = {"compared": self.compared, "max_relative_gap": self.worst, "worst": self.worst_at,
               "disagreeing": self.failed[:20]}
        if self.missing:
            out["not_in_the_item"] = self.missing[:20]
        return out


def _family(name: str) -> str:
    """A disagreement's name without its instance (``u2_later.l3.EP(…)`` → ``u2_later``)."""
    return name.split(".")[0]


def _result(evidence: dict[str, Any], summary: str, disagrees: Sequence[str]) -> dict[str, Any]:
    disagrees = sorted(dict.fromkeys(disagrees))
    if disagrees:
        evidence["disagrees_with_derivation"] = disagrees
    return {KEY: evidence, "summary": summary, "disagrees": disagrees}


def _identity(record: IdentityRecord, keep_points: bool = False) -> dict[str, Any]:
    """A compact record of the numeric-identity kind."""
    out = {"status": record.status, "points": record.n_points,
           "max_relative_difference": record.max_relative_difference}
    if record.constant_ratio is not None:
        out["printed_over_model"] = record.constant_ratio
    elif record.ratio_range is not None:
        out["printed_over_model_range"] = list(record.ratio_range)
    if record.counterexample:
        out["counterexample"] = record.counterexample
    if record.non_finite:
        out["non_finite"] = record.non_finite[:3]
    if keep_points and record.worst:
        out["worst"] = record.worst
    return out


_TAG = re.compile(r"EP\(L_max=(\d+),(\w+)\)|CoT\(L0=(\d+),(2L0-[12]),(L0-1|L0)(,noregulariser)?\)")


def cot_alone(L0: int, cot_max_len: str = "2L0-1") -> RLData:
    """L_CoT of Sec. 5.2 alone (lengths L0..L_max, CoT labels, no regulariser), as an enumerated data set.

    The numerics builds the regulariser into ``cot_data``; this is the same data set restricted to
    the CoT strata, built from the same public pieces (``all_strings``, ``cot_rule``).
    """
    full = cot_data(L0, cot_max_len=cot_max_len)
    lengths = tuple(range(L0, full.L_max + 1))
    strings = all_strings(2, lengths)
    rule = lambda chars: cot_rule(chars, L0)  # noqa: E731
    y = strings.labels([rule] * len(lengths)).astype(np.float64)
    positions = np.arange(strings.width, dtype=np.int64)
    idx = np.where(strings.chars >= 0, 2 * positions[None, :] + strings.chars, -1)
    query = idx[np.arange(strings.n), strings.length - 1]
    return RLData("cot", {**full.flags, "regulariser": False}, strings, ("cot",) * len(lengths), idx,
                  strings.length.copy(), query, y, strings.weights.copy(), strings.weights_exact, full.dim,
                  (rule,) * len(lengths), L0)


def exact_gradient_at_zero(data: RLData) -> list[Fraction]:
    """∇_u L(0, 0) in rationals: Σ_n 2^{−L_n}·J'(0)·y_n·φ_ℓ with J'(0) = −1/2 and φ_ℓ = 1/L_n exactly.

    (∇_W L(0, 0) = 0 exactly: every term carries u^⊤x_ℓ − T = 0.)
    """
    g = [Fraction(0)] * data.dim
    for n in range(data.n):
        L = int(data.length[n])
        term = -data.weight_exact[n] * int(data.y[n]) / (2 * L)
        for i in data.idx[n, :L]:
            g[int(i)] += term
    return g


# ----------------------------------------------------------------------------------------------
# The model's quantities at one point, at any precision


class ModelPoint:
    """A point (u, W, λ) on one data set: attention, outputs, J', gradient at any ``dps`` (cached).

    ``label`` names it in the records of the numeric-identity kind.
    """

    def __init__(self, data: RLData, u, W, lam, label: str = "") -> None:
        self.data, self.u, self.W, self.lam, self.label = data, u, W, lam, label
        self._cache: dict[int, Any] = {}

    def at(self, dps: int | None = None):
        """(φ per sample, T per sample, J'_n per sample, ∇_u L, ∇_W L, λ) at ``dps`` (default: mp.dps)."""
        dps = int(dps or mp.dps)
        if dps not in self._cache:
            phis, Ts = forward_mp(self.data, self.u, self.W, self.lam, dps=dps)
            _, gu, gW = gradient_mp(self.data, self.u, self.W, self.lam, dps=dps)
            with mp.workdps(dps):
                jp = [-1 / (1 + mp.exp(int(y) * T)) for y, T in zip(self.data.y, Ts, strict=True)]
                self._cache[dps] = (phis, Ts, jp, gu, gW, mpmath.mpmathify(self.lam))
        return self._cache[dps]

    def __repr__(self) -> str:
        return self.label or "ModelPoint"


def _rows(data: RLData, L: int) -> np.ndarray:
    return np.flatnonzero(data.length == L)
