"""A high-precision hard-margin homogeneous SVM with a KKT certificate.

Problem: given rows z_k ∈ R^d (k = 0..K-1), find u* = argmin ‖u‖ subject to z_k·u ≥ 1 for all k.
Its dual is the min-norm point of the hull, p* = argmin_{p ∈ conv{z_k}} ‖p‖, and u* = p*/‖p*‖².
By Gordan's alternative the problem is infeasible exactly when 0 ∈ conv{z_k} (no u has z_k·u > 0
for all k).

KKT conditions for an active set S (multipliers ν_k = 0 off S): u = Σ_{k∈S} ν_k z_k and z_k·u = 1
on S, i.e. the Gram system G_S ν_S = 1 with G_S = Z_S Z_Sᵀ; the point is optimal when ν ≥ 0 and
z_k·u ≥ 1 for every k. Some optimal multiplier vector has linearly independent support
(Carathéodory for cones), so the active sets searched are independent subsets of size ≤ min(d, K).

Path (reported as :class:`PathStep` records):

1. float64 guess: Lawson–Hanson least-distance programming, min ‖Ew - f‖ over w ≥ 0 with
   E = [Zᵀ; 1ᵀ], f = e_{d+1}, by SciPy's NNLS; u = Zᵀw/(1 - Σw), ν = w/(1 - Σw), and the NNLS
   passive set is the support guess. Its residual is ‖p*‖/√(1 + ‖p*‖²) ≈ 1/‖u*‖, so beyond
   ‖u*‖ ≈ 10^13 float64 cannot tell a tiny margin from an infeasible problem: that is reported.
2. Newton polish in mpmath on the KKT system of the warm-start set (if given) and of the float64
   set. The system is linear in (u, ν_S), so a Newton step is a Gram solve; three steps from the
   float64 multipliers, the last step's size estimating the remaining error of ν.
3. brute force over active sets, nearest first (by symmetric difference from the warm-start set,
   else the float64 set), at most ``budget`` subsets.
4. evidence of infeasibility (when float64 finds 0 in the hull, or when no active set is
   certified): a convex combination λ with ‖Σλ_k z_k‖ ≤ tol·max‖z_k‖, from the bordered system
   [[G_S, 1], [1ᵀ, 0]] [λ; μ] = [0; 1] (the affine min-norm point of S).

Certificate: a candidate is accepted only when every KKT residual is ≤ tol = 10^-(dps-10):
primal max(0, -min_k(z_k·u - 1)), dual max(0, -min_k ν_k), complementary slackness
max_k |ν_k (z_k·u - 1)|, stationarity ‖u - Σ ν_k z_k‖/‖u‖ and duality |‖u‖·‖p‖ - 1| with
p = Σ ν_k z_k / Σ ν_k.

Units: the dual and complementarity residuals are absolute, and ν scales as 1/s² when the rows
scale by s, so for rows far from unit size they would be trivially met (large rows: a wrong
support with a negative multiplier of 10^-370 passes) or out of reach (small rows). All
computation and all residuals therefore use the rows scaled by 2^-e, e = round(log2 max‖z_k‖),
an exact scaling that puts max‖z_k‖ in [1/√2, √2); for such rows (e = 0) these are exactly the
residuals above. u, ν, p and the margin are reported in the rows' own units.

Precision: ``dps`` fixes the target, not the arithmetic. At ‖u*‖ = 10^15 the multipliers are
~‖u*‖² = 10^30 while z_k·u cancels 15 digits, so 60 working digits leave complementary slackness
near 1. The working precision starts at dps + 20 + 3·log10(‖u‖·max‖z‖) (from the float64 guess)
and is raised while a candidate misses the target by roundoff only (its signs are right to within
the roundoff its own numbers show); ``working_dps`` is the precision of the accepted certificate.
Float and mpmath rows are used exactly; rational rows are rounded to the working precision.

Cost: a subset costs one s×s Gram factorisation and K dot products at the working precision,
about 1–2 ms at ~120 digits for s ≤ 7; all subsets of size ≤ 7 of 13 rows are 5812 of them. A
warm start from the previous checkpoint's active set usually certifies in one solve.
mpmath's precision is process-global (``mpmath.workdps``): run solves in parallel in processes.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations
from typing import Any, Literal

import mpmath
import numpy as np

from derivations.errors import InvalidArgument, NumericalTrouble

MIN_DPS = 50
#: a float64 norm within this relative error of the certified one counts as a correct objective
FLOAT_OBJECTIVE_RTOL = 1e-8
#: precision raises per candidate before a roundoff-limited candidate is given up
MAX_ESCALATIONS = 4
_NEWTON_STEPS = 3

Status = Literal["certified", "infeasible", "uncertified"]


@dataclass(frozen=True)
class KKTResiduals:
    """The five KKT residuals of a candidate (mpmath values; 0 is exact, ``inf`` means undefined)."""

    primal: mpmath.mpf
    dual: mpmath.mpf
    complementarity: mpmath.mpf
    stationarity: mpmath.mpf
    duality: mpmath.mpf

    def as_dict(self) -> dict[str, mpmath.mpf]:
        """The residuals by name."""
        return {"primal": self.primal, "dual": self.dual, "complementarity": self.complementarity,
                "stationarity": self.stationarity, "duality": self.duality}

    def worst(self) -> mpmath.mpf:
        """The largest residual."""
        return max(self.as_dict().values())

    def log10(self) -> dict[str, float]:
        """log10 of each residual (``-inf`` for an exact zero)."""
        return {k: _log10(v) for k, v in self.as_dict().items()}

    def within(self, tol: mpmath.mpf) -> bool:
        """Whether every residual is ≤ ``tol``."""
        return all(v <= tol for v in self.as_dict().values())


@dataclass(frozen=True)
class Float64Guess:
    """The float64 NNLS guess and everything that went wrong in it (``notes``).

    NNLS runs on the rows scaled by 2^-e (see the module docstring). ``u``, ``multipliers`` and
    ``norm`` are in the rows' own units (``notes`` says if they over- or underflow);
    ``unit_multipliers`` and ``scaled_norm`` (= ‖u‖·2^e ≈ ‖u‖·max‖z_k‖) belong to the scaled rows.
    ``u`` and the multipliers are ``None`` when NNLS failed or found 0 in the hull
    (``suggests_infeasible``; ``support`` is then NNLS's passive set). ``residual_norm`` is the
    NNLS residual ≈ 1/(‖u*‖·max‖z_k‖).
    """

    u: tuple[float, ...] | None
    multipliers: tuple[float, ...] | None
    unit_multipliers: tuple[float, ...] | None
    support: tuple[int, ...] | None
    norm: float
    scaled_norm: float
    residual_norm: float
    suggests_infeasible: bool
    notes: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class PathStep:
    """One stage of the solution path: what was tried, at which precision, and what came of it."""

    stage: str
    active_set: tuple[int, ...] | None
    outcome: str
    working_dps: int | None = None
    note: str = ""

    def line(self) -> str:
        """A short ``stage: outcome`` text."""
        return f"{self.stage}: {self.outcome}"


@dataclass(frozen=True)
class Infeasibility:
    """Evidence that 0 ∈ conv{z_k}: weights λ ≥ -tol, Σλ = 1, ‖Σ λ_k z_k‖ ≤ tol·max‖z_k‖ (``point_norm``)."""

    weights: tuple[mpmath.mpf, ...]
    subset: tuple[int, ...]
    point_norm: mpmath.mpf
    min_weight: mpmath.mpf


@dataclass(frozen=True, eq=False)
class MaxMarginResult:
    """The certified max-margin vector, or the evidence that there is none.

    ``status`` is ``certified`` (every KKT residual ≤ ``tol``), ``infeasible`` (``infeasibility``
    holds the convex combination near 0; the primal fields are ``None``) or ``uncertified``
    (only with ``on_uncertified="return"``: the best candidate found, which missed ``tol``).
    ``support``: the indices with ν_k > tol·Σν (Σν = ‖u*‖²); ``active_set``: the basis solved;
    ``tight``: the indices with |z_k·u - 1| ≤ tol. ``margin`` = min_k z_k·u/‖u‖ (= 1/‖u*‖ at the
    optimum). ``residuals`` are those of the rows scaled by 2^-``row_scale_exponent``.
    ``float_*`` compare the float64 guess with the certified answer: ``float_guess_correct`` needs
    the same support and ‖u‖ within ``FLOAT_OBJECTIVE_RTOL`` (``None`` if there is nothing to compare).
    """

    status: Status
    dps: int
    working_dps: int | None
    tol: mpmath.mpf
    u: tuple[mpmath.mpf, ...] | None
    norm: mpmath.mpf | None
    margin: mpmath.mpf | None
    multipliers: tuple[mpmath.mpf, ...] | None
    dual_point: tuple[mpmath.mpf, ...] | None
    support: tuple[int, ...] | None
    active_set: tuple[int, ...] | None
    tight: tuple[int, ...] | None
    residuals: KKTResiduals | None
    row_scale_exponent: int
    infeasibility: Infeasibility | None
    float_guess: Float64Guess
    float_support_correct: bool | None
    float_norm_rel_error: float | None
    float_guess_correct: bool | None
    path: tuple[PathStep, ...]
    subsets_tried: int
    seconds: float

    @property
    def u_float64(self) -> np.ndarray | None:
        """u* rounded to float64."""
        return None if self.u is None else np.array([float(x) for x in self.u])

    def summary(self) -> str:
        """One line: status, ‖u*‖, margin, support, worst residual vs the target, path, float64's verdict."""
        path = " → ".join(step.line() for step in self.path)
        if self.status == "infeasible":
            ev = self.infeasibility
            found = "also found" if self.float_guess.suggests_infeasible else "did not find"
            near = "" if ev.point_norm == 0 else f" (≤ 10^{_log10(self.tol):.0f}·max‖z‖, or a smaller margin)"
            return (f"infeasible: 0 ∈ conv{{z_k}}, ‖Σλ_k z_k‖ = 10^{_log10(ev.point_norm):.1f}{near} with "
                    f"λ ≥ {mpmath.nstr(ev.min_weight, 3)} on {list(ev.subset)}; path {path}; "
                    f"float64 {found} 0 in the hull")
        if self.residuals is None:
            return f"{self.status}: no candidate; path {path}"
        worst = self.residuals.worst()
        if self.float_guess.suggests_infeasible:
            flt = "float64 guess: WRONG, it finds 0 in the hull"
        elif self.float_norm_rel_error is None:
            flt = "float64 guess: none (failed)"
        else:
            right = "right" if self.float_support_correct else "WRONG"
            flt = f"float64 guess: support {right}, ‖u‖ rel. error {self.float_norm_rel_error:.2g}"
        return (f"{self.status}: ‖u*‖ = {mpmath.nstr(self.norm, 12)}, margin {mpmath.nstr(self.margin, 6)}, "
                f"support {list(self.support)} of {len(self.multipliers)}, worst KKT residual "
                f"10^{_log10(worst):.1f} {'≤' if worst <= self.tol else '>'} 10^{_log10(self.tol):.0f} at "
                f"{self.working_dps} digits; path {path}; {flt}")


# --------------------------------------------------------------------------- input


class _Rows:
    """Validated rows held exactly (int, float, Fraction or mpf), served as mpf scaled by 2^-e."""

    def __init__(self, entries: list[list[Any]]):
        self.entries = entries
        self.K, self.d = len(entries), len(entries[0])
        self._cache: dict[int, list[list[mpmath.mpf]]] = {}
        with mpmath.workdps(30):  # rows may lie outside float64's range
            zmax = max(_norm([_to_mpf(x) for x in row]) for row in entries)
            self.e = 0 if zmax == 0 else int(mpmath.nint(mpmath.log(zmax, 2)))
            self.zmax = mpmath.ldexp(zmax, -self.e)  # of the scaled rows: in [1/√2, √2), or 0

    def at(self, w: int) -> list[list[mpmath.mpf]]:
        """The scaled rows as mpf at ``w`` digits (exact for int, float and mpf entries)."""
        if w not in self._cache:
            with mpmath.workdps(w):
                self._cache[w] = [[mpmath.ldexp(_to_mpf(x), -self.e) for x in row] for row in self.entries]
        return self._cache[w]

    def float64(self) -> np.ndarray:
        """The scaled rows rounded to float64."""
        return np.array([[float(x) for x in row] for row in self.at(30)], dtype=np.float64)

    def to_units(self, values: Iterable[mpmath.mpf], power: int) -> tuple[mpmath.mpf, ...]:
        """Scaled-problem values times 2^(power·e), in the rows' own units (exact)."""
        return tuple(mpmath.ldexp(x, power * self.e) for x in values)


def _to_mpf(x: Any) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    if isinstance(x, mpmath.mpf):
        return mpmath.mp.make_mpf(x._mpf_)  # mpf(x) would round to the current precision
    return mpmath.mpf(x)


def _entry(x: Any, where: str) -> Any:
    if isinstance(x, bool | np.bool_):
        msg = f"{where}={x!r} is a bool; constraint entries must be real numbers"
        raise InvalidArgument(msg)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        if not math.isfinite(x):
            msg = f"{where}={x!r} is not finite; every entry must be a finite real number"
            raise InvalidArgument(msg)
        return float(x)
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            msg = f"{where}={x} is not finite; every entry must be a finite real number"
            raise InvalidArgument(msg)
        return x
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator))
    msg = (f"{where}={x!r} of type {type(x).__name__} is not a real number; pass float64, int, "
           "fractions.Fraction or mpmath.mpf entries")
    raise InvalidArgument(msg)


def _parse_rows(rows: Any) -> _Rows:
    if isinstance(rows, mpmath.matrix):
        table = [[rows[i, j] for j in range(rows.cols)] for i in range(rows.rows)]
    elif isinstance(rows, np.ndarray):
        if rows.ndim != 2:
            msg = f"rows has shape {rows.shape}; it must be a K×d array (one constraint row z_k per line)"
            raise InvalidArgument(msg)
        if rows.dtype.kind == "c":
            msg = f"rows has complex dtype {rows.dtype}; constraint rows must be real"
            raise InvalidArgument(msg)
        table = rows.tolist()
    elif isinstance(rows, Iterable) and not isinstance(rows, str | bytes):
        table = []
        for k, row in enumerate(rows):
            if not isinstance(row, Iterable) or isinstance(row, str | bytes):
                msg = f"rows[{k}]={row!r} is not a sequence; rows must be a K×d table of numbers"
                raise InvalidArgument(msg)
            table.append(list(row))
    else:
        msg = f"rows={rows!r} is not a K×d table; pass a 2-D array, an mpmath matrix or a list of rows"
        raise InvalidArgument(msg)
    if not table:
        msg = "rows is empty (K=0); pass at least one constraint row z_k"
        raise InvalidArgument(msg)
    d = len(table[0])
    if d == 0:
        msg = "rows[0] is empty (d=0); each constraint row z_k needs at least one entry"
        raise InvalidArgument(msg)
    for k, row in enumerate(table):
        if len(row) != d:
            msg = (f"rows[{k}] has length {len(row)} but rows[0] has length {d}; rows must be a K×d table, "
                   "not ragged")
            raise InvalidArgument(msg)
    return _Rows([[_entry(x, f"rows[{k}][{j}]") for j, x in enumerate(row)] for k, row in enumerate(table)])


def _check_int(name: str, value: Any, minimum: int, why: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        msg = f"{name}={value!r} must be an integer ≥ {minimum} ({why})"
        raise InvalidArgument(msg)
    return int(value)


def _check_warm(warm_start: Iterable[int] | None, K: int) -> tuple[int, ...] | None:
    if warm_start is None:
        return None
    try:
        indices = list(warm_start)
    except TypeError:
        msg = f"warm_start={warm_start!r} is not a collection of row indices; pass e.g. previous.active_set"
        raise InvalidArgument(msg) from None
    for k in indices:
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 0 <= k < K:
            msg = f"warm_start contains {k!r}; active-set indices must be integers in [0, {K}) (K={K} rows)"
            raise InvalidArgument(msg)
    return tuple(sorted({int(k) for k in indices}))


# --------------------------------------------------------------------------- float64 guess


def _float_guess(rows: _Rows) -> Float64Guess:
    """Lawson–Hanson LDP by SciPy's NNLS on the scaled rows."""
    from scipy.optimize import nnls

    start = time.perf_counter()
    Z = rows.float64()
    K, d = Z.shape
    notes: list[str] = []

    def failed(note: str) -> Float64Guess:
        return Float64Guess(None, None, None, None, math.nan, math.nan, math.nan, False, (*notes, note),
                            time.perf_counter() - start)

    zeros = sum(x == 0 for row in rows.entries for x in row)
    lost = int(np.sum(np.abs(Z) < np.finfo(float).tiny)) - zeros
    if lost:
        notes.append(f"{lost} scaled row entries underflow float64 (zero or subnormal)")
    E = np.vstack([Z.T, np.ones((1, K))])
    f = np.zeros(d + 1)
    f[-1] = 1.0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            w, _ = nnls(E, f)
        except (RuntimeError, ValueError, np.linalg.LinAlgError) as exc:
            return failed(f"scipy NNLS failed: {exc}")
    notes.extend(f"scipy NNLS warned: {c.message}" for c in caught)
    if not np.all(np.isfinite(w)):
        return failed("scipy NNLS returned non-finite weights")
    r = E @ w - f
    rnorm = float(np.linalg.norm(r))
    support = tuple(int(k) for k in np.flatnonzero(w > 0))
    # exact LDP: ‖r‖ = ‖p‖/√(1 + ‖p‖²) and Σw - 1 = -1/(1 + ‖p‖²), p the min-norm point of the hull
    if rnorm <= 64 * np.finfo(float).eps or r[-1] >= 0:
        notes.append(f"NNLS residual {rnorm:.3g} is at float64 roundoff: float64 finds 0 in conv{{z_k}} "
                     "(infeasible, or a margin below float64 resolution)")
        return Float64Guess(None, None, None, support, math.inf, math.inf, rnorm, True, tuple(notes),
                            time.perf_counter() - start)
    u_unit, nu_unit = (Z.T @ w) / -r[-1], w / -r[-1]
    slack = Z @ u_unit - 1.0
    worst = int(np.argmin(slack))
    if slack[worst] < -1e-8:
        notes.append(f"float64 u violates constraint {worst}: z·u - 1 = {slack[worst]:.3g}")
    if support:
        cond = float(np.linalg.cond(Z[list(support)] @ Z[list(support)].T))
        if not math.isfinite(cond) or cond > 1e12:
            notes.append(f"Gram matrix of the float64 support has condition {cond:.3g}: unreliable support")
    scaled = float(np.linalg.norm(u_unit))
    if scaled > 1e12:
        notes.append(f"‖u‖·max‖z‖ ≈ {scaled:.3g}: float64 margins cancel ≳ 12 digits")
    with mpmath.workdps(30):
        u = tuple(float(x) for x in rows.to_units(map(mpmath.mpf, u_unit), -1))
        nu = tuple(float(x) for x in rows.to_units(map(mpmath.mpf, nu_unit), -2))
        norm = float(rows.to_units([mpmath.mpf(scaled)], -1)[0])
    if not all(math.isfinite(x) for x in (*u, *nu, norm)) or not 1e-300 < norm < 1e300:
        notes.append("u or ν over- or underflows float64 in the rows' units (the scaled guess is used)")
    return Float64Guess(u, nu, tuple(float(x) for x in nu_unit), support, norm, scaled, rnorm, False,
                        tuple(notes), time.perf_counter() - start)


# --------------------------------------------------------------------------- mpmath linear algebra


def _lu(A: list[list[mpmath.mpf]]) -> tuple[list[list[mpmath.mpf]], list[int], mpmath.mpf] | None:
    """LU with partial pivoting: (LU, permutation, min |pivot| / max |A_ij|), or None if singular."""
    n = len(A)
    a = [row[:] for row in A]
    perm = list(range(n))
    scale = max(abs(x) for row in a for x in row)
    if scale == 0:
        return None
    smallest = mpmath.inf
    for j in range(n):
        p = max(range(j, n), key=lambda i: abs(a[i][j]))
        if a[p][j] == 0:
            return None
        a[j], a[p], perm[j], perm[p] = a[p], a[j], perm[p], perm[j]
        smallest = min(smallest, abs(a[j][j]))
        for i in range(j + 1, n):
            m = a[i][j] / a[j][j]
            a[i][j] = m
            for c in range(j + 1, n):
                a[i][c] -= m * a[j][c]
    return a, perm, smallest / scale


def _lu_solve(lu: list[list[mpmath.mpf]], perm: list[int], b: Sequence[mpmath.mpf]) -> list[mpmath.mpf]:
    n = len(lu)
    y = [b[perm[i]] for i in range(n)]
    for i in range(1, n):
        y[i] -= mpmath.fdot(lu[i][:i], y[:i])
    for i in reversed(range(n)):
        y[i] = (y[i] - mpmath.fdot(lu[i][i + 1:], y[i + 1:])) / lu[i][i]
    return y


def _combine(Z: list[list[mpmath.mpf]], subset: Sequence[int], coef: Sequence[mpmath.mpf]) -> list:
    """Σ_i coef_i z_{subset_i}."""
    return [mpmath.fdot([Z[k][c] for k in subset], coef) for c in range(len(Z[0]))]


def _norm(v: Sequence[mpmath.mpf]) -> mpmath.mpf:
    return mpmath.sqrt(mpmath.fdot(v, v))


def _log10(x: mpmath.mpf) -> float:
    return -math.inf if x == 0 else float(mpmath.log10(abs(x)))


def _digits(x: Any) -> int:
    """ceil(log10 x) for x > 1, else 0 (also for inf and NaN: no scale is known)."""
    with mpmath.workdps(15):
        x = mpmath.mpf(x)
        return 0 if not mpmath.isfinite(x) or x <= 1 else int(mpmath.ceil(mpmath.log10(x)))


def _residuals(Z, u, nu, slack) -> KKTResiduals:
    norm_u = _norm(u)
    combo = _combine(Z, range(len(Z)), nu)
    total = mpmath.fsum(nu)
    stationarity = _norm([a - b for a, b in zip(u, combo, strict=True)]) / norm_u if norm_u else mpmath.inf
    duality = abs(norm_u * _norm(combo) / abs(total) - 1) if total != 0 else mpmath.inf
    return KKTResiduals(primal=max(mpmath.mpf(0), -min(slack)), dual=max(mpmath.mpf(0), -min(nu)),
                        complementarity=max(abs(n * s) for n, s in zip(nu, slack, strict=True)),
                        stationarity=stationarity, duality=duality)


@dataclass
class _Candidate:
    subset: tuple[int, ...]
    w: int
    state: str  # certified | wrong | precision | ill-conditioned | singular
    u: list | None = None
    nu: list | None = None
    slack: list | None = None
    residuals: KKTResiduals | None = None
    history: tuple[int, ...] = ()
    pivot_ratio: mpmath.mpf | None = None


# --------------------------------------------------------------------------- the search


class _Search:
    """Candidates on the scaled rows, the working precision they needed, and what was tried."""

    def __init__(self, rows: _Rows, tol: mpmath.mpf, max_w: int, w0: int):
        self.rows, self.tol, self.max_w, self.w = rows, tol, max_w, w0
        self.smax = min(rows.d, rows.K)
        self.tried: set[tuple] = set()
        self.best: _Candidate | None = None

    def evaluate(self, subset: tuple[int, ...], w: int, nu0: Sequence[float] | None = None) -> _Candidate:
        rows = self.rows
        with mpmath.workdps(w):
            Z = rows.at(w)
            factor = _lu([[mpmath.fdot(Z[i], Z[j]) for j in subset] for i in subset])
            if factor is None:
                return _Candidate(subset, w, "singular")
            lu, perm, ratio = factor
            if ratio < mpmath.mpf(10) ** (20 - w):  # fewer than 20 digits would survive the solve
                return _Candidate(subset, w, "ill-conditioned", pivot_ratio=ratio)
            nu_s = [mpmath.mpf(x) for x in nu0] if nu0 is not None else [mpmath.mpf(0)] * len(subset)
            for _ in range(_NEWTON_STEPS):  # Newton on (u - Z_Sᵀν, Z_S u - 1) = 0 with u eliminated
                u = _combine(Z, subset, nu_s)
                delta = _lu_solve(lu, perm, [1 - mpmath.fdot(Z[k], u) for k in subset])
                nu_s = [a + b for a, b in zip(nu_s, delta, strict=True)]
            u = _combine(Z, subset, nu_s)
            nu = [mpmath.mpf(0)] * rows.K
            for k, v in zip(subset, nu_s, strict=True):
                nu[k] = v
            slack = [mpmath.fdot(Z[k], u) - 1 for k in range(rows.K)]
            res = _residuals(Z, u, nu, slack)
            cand = _Candidate(subset, w, "certified", u, nu, slack, res)
            if not res.within(self.tol):
                cand.state = "wrong" if self._wrong(cand, max(abs(x) for x in delta)) else "precision"
        if self.best is None or res.worst() < self.best.residuals.worst():
            self.best = cand
        return cand

    def _wrong(self, cand: _Candidate, step: mpmath.mpf) -> bool:
        """Whether the candidate's signs are wrong beyond the roundoff its own numbers show."""
        roundoff = mpmath.mpf(10) ** (3 - cand.w)
        error_nu = step + roundoff * max(abs(x) for x in cand.nu)
        on = set(cand.subset)
        # an error δν moves an inactive slack by z_k·Z_Sᵀδν, which the active slacks (G_S δν) can hide
        # when G_S is ill-conditioned: bound it by max‖z‖²·|S|·|δν|
        noise_nu = 100 * error_nu
        noise_slack = 100 * (max(abs(cand.slack[k]) for k in on) + roundoff * self.rows.zmax * _norm(cand.u)
                             + self.rows.zmax**2 * len(on) * error_nu)
        off = (k for k in range(self.rows.K) if k not in on)
        return (any(cand.nu[k] < -max(self.tol, noise_nu) for k in on)
                or any(cand.slack[k] < -max(self.tol, noise_slack) for k in off))

    def certify(self, subset: tuple[int, ...], nu0: Sequence[float] | None = None) -> _Candidate:
        """Evaluate ``subset``, raising the working precision while it misses the target by roundoff only.

        A Gram matrix whose smallest pivot is at roundoff level may be singular (dependent rows) or
        conditioned beyond the working precision: the precision is doubled once to tell them apart.
        """
        self.tried.add(subset)
        w, history, at_roundoff = self.w, [], False
        for _ in range(MAX_ESCALATIONS + 1):
            cand = self.evaluate(subset, w, nu0)
            history.append(w)
            if cand.state == "precision":
                worst = cand.residuals.worst()
                gap = 40 if not mpmath.isfinite(worst) else max(20, math.ceil(_log10(worst / self.tol)) + 10)
            elif cand.state == "ill-conditioned":
                lost = math.ceil(-_log10(cand.pivot_ratio))
                if lost >= w - 10:  # the pivot is roundoff: singular, unless more digits reveal it
                    if at_roundoff:
                        cand.state = "singular"
                        break
                    at_roundoff, gap = True, max(40, w)
                else:
                    gap = max(20, lost + 30 - w)
            else:
                break
            if w >= self.max_w:
                break
            w = min(self.max_w, w + gap)
        if cand.state == "ill-conditioned":
            cand.state = "singular"
        cand.history = tuple(history)
        if cand.state == "certified":
            self.w = max(self.w, cand.w)
        return cand

    def hull_point(self, subset: tuple[int, ...]) -> tuple[Infeasibility | None, mpmath.mpf | None]:
        """The affine min-norm point p of ``subset``: (evidence if it certifies 0 ∈ conv{z_k}, ‖p‖).

        ‖p‖ (scaled rows; ``None`` if the bordered system is singular) gauges ‖u*‖ ≈ 1/‖p‖ when
        float64 saw 0 in the hull. A roundoff-level pivot gets one try at twice the digits.
        """
        self.tried.add(("hull", *subset))
        K, n = self.rows.K, len(subset)
        for w in dict.fromkeys((self.w, min(self.max_w, 2 * self.w))):
            with mpmath.workdps(w):
                Z = self.rows.at(w)
                A = [[mpmath.fdot(Z[i], Z[j]) for j in subset] + [mpmath.mpf(1)] for i in subset]
                A.append([mpmath.mpf(1)] * n + [mpmath.mpf(0)])
                factor = _lu(A)
                if factor is None:
                    return None, None
                if factor[2] < mpmath.mpf(10) ** (20 - w):
                    continue
                lam = _lu_solve(factor[0], factor[1], [mpmath.mpf(0)] * n + [mpmath.mpf(1)])[:n]
                point = _norm(_combine(Z, subset, lam))
                if min(lam) < -self.tol or point > self.tol * self.rows.zmax:
                    return None, point
                weights = [mpmath.mpf(0)] * K
                for k, v in zip(subset, lam, strict=True):
                    weights[k] = v
                evidence = Infeasibility(tuple(weights), subset, self.rows.to_units([point], 1)[0], min(lam))
                return evidence, point
        return None, None


def _neighbours(center: Sequence[int], K: int, smax: int) -> Iterator[tuple[int, ...]]:
    """Every subset of range(K) of size 1..smax, by increasing symmetric difference from ``center``."""
    inside = sorted(set(center))
    outside = [k for k in range(K) if k not in set(inside)]
    for r in range(K + 1):
        for a in range(min(r, len(inside)) + 1):
            b = r - a
            if b > len(outside) or not 1 <= len(inside) - a + b <= smax:
                continue
            for removed in combinations(inside, a):
                keep = [k for k in inside if k not in removed]
                for added in combinations(outside, b):
                    yield tuple(sorted(keep + list(added)))


# --------------------------------------------------------------------------- entry points


def hard_margin_svm(rows: Any, *, dps: int = 60, warm_start: Iterable[int] | None = None,
                    budget: int = 10_000, max_working_dps: int | None = None,
                    on_uncertified: Literal["raise", "return"] = "raise") -> MaxMarginResult:
    """Solve u* = argmin ‖u‖ s.t. z_k·u ≥ 1 and certify it by its KKT residuals (see the module docstring).

    Parameters
    ----------
    rows
        The K×d constraint rows z_k: a float64 (or integer) array, an ``mpmath.matrix``, or a list
        of rows of int, float, ``fractions.Fraction`` or ``mpmath.mpf``.
    dps
        Target digits (≥ 50): every KKT residual must be ≤ 10^-(dps-10).
    warm_start
        A previous active set (e.g. the last checkpoint's ``result.active_set``): polished first,
        and the centre of the brute-force order.
    budget
        Most subsets the brute force (and the search for infeasibility evidence) may solve.
    max_working_dps
        Ceiling of the working precision (default 8·dps).
    on_uncertified
        ``"raise"`` (default) raises :class:`NumericalTrouble` when nothing is certified;
        ``"return"`` returns the best candidate with status ``uncertified``.

    Returns
    -------
    MaxMarginResult
        ``certified`` with u*, multipliers, residuals and path; or ``infeasible`` with the convex
        combination near 0 (an infeasible problem is an answer, not an error). Infeasibility is
        decided at the certificate's precision: a problem with ‖u*‖·max‖z_k‖ > 10^(dps-10) looks so.
    """
    start = time.perf_counter()
    dps = _check_int("dps", dps, MIN_DPS, "the certificate needs ≥ 50 digits, tolerance 10^-(dps-10); "
                                          "use the default dps=60")
    budget = _check_int("budget", budget, 0, "the number of subsets brute force may solve")
    max_w = 8 * dps if max_working_dps is None else _check_int(
        "max_working_dps", max_working_dps, dps + 20, "the working precision needs ≥ 20 guard digits")
    if on_uncertified not in ("raise", "return"):
        msg = f"on_uncertified={on_uncertified!r} is not one of 'raise', 'return'"
        raise InvalidArgument(msg)
    problem = _parse_rows(rows)
    warm = _check_warm(warm_start, problem.K)
    with mpmath.workdps(dps):
        tol = mpmath.mpf(10) ** (10 - dps)
    guess = _float_guess(problem)
    search = _Search(problem, tol, max_w, min(max_w, dps + 20 + 3 * _digits(guess.scaled_norm)))
    outcome = ("0 in hull" if guess.suggests_infeasible else "failed" if guess.u is None
               else f"support {list(guess.support)}, ‖u‖ ≈ {guess.norm:.6g}")
    path = [PathStep("float64", guess.support, outcome, None, "; ".join(guess.notes))]

    def finish(status, cand=None, evidence=None, subsets=0) -> MaxMarginResult:
        seconds = time.perf_counter() - start
        return _result(problem, status, dps, tol, guess, path, cand, evidence, subsets, seconds)

    starts = [("warm polish", warm, None)] if warm else []
    if guess.suggests_infeasible and guess.support and len(guess.support) <= problem.d + 1:
        starts.append(("hull point", guess.support, None))
    if guess.support:
        nu0 = None if guess.unit_multipliers is None else [guess.unit_multipliers[k] for k in guess.support]
        starts.append(("polish", guess.support, nu0))
    for stage, subset, nu0 in starts:
        if stage == "hull point":
            evidence, point = search.hull_point(subset)
            if evidence:
                path.append(PathStep(stage, subset, "0 in hull", search.w))
                return finish("infeasible", evidence=evidence)
            if point:  # float64 saw no margin; the affine min-norm point gauges ‖u*‖·max‖z‖ ≈ 1/‖p‖
                search.w = min(max_w, max(search.w, dps + 20 + 3 * _digits(1 / point)))
            path.append(PathStep(stage, subset, "singular" if point is None else
                                 f"not 0: ‖p‖·2^-e = 10^{_log10(point):.1f}", search.w))
            continue
        if subset in search.tried or len(subset) > search.smax:
            path.append(PathStep(stage, subset, "skipped (tried already, or more rows than d)"))
            continue
        cand = search.certify(subset, nu0)
        path.append(PathStep(stage, subset, cand.state, cand.w, _escalation_note(cand)))
        if cand.state == "certified":
            return finish("certified", cand)
    count, exhausted = 0, True
    for subset in _neighbours(warm or guess.support or (), problem.K, search.smax):
        if subset in search.tried:
            continue
        if count >= budget:
            exhausted = False
            break
        count += 1
        cand = search.certify(subset)
        if cand.state == "certified":
            path.append(PathStep("brute force", subset, f"certified after {count} subsets", cand.w,
                                 _escalation_note(cand)))
            return finish("certified", cand, subsets=count)
    path.append(PathStep("brute force", None, f"{'exhausted' if exhausted else 'budget reached'} after "
                                              f"{count} subsets", search.w))
    evidence = None
    for subset in _neighbours(guess.support or (), problem.K, min(problem.d + 1, problem.K)):
        if ("hull", *subset) in search.tried:
            continue
        if count >= budget:
            break
        count += 1
        evidence, _ = search.hull_point(subset)
        if evidence:
            break
    path.append(PathStep("hull points", evidence.subset if evidence else None,
                         "0 in hull" if evidence else "no evidence", search.w))
    if evidence:
        return finish("infeasible", evidence=evidence, subsets=count)
    best = search.best
    if on_uncertified == "return":
        return finish("uncertified", best, subsets=count)
    where = "no candidate" if best is None else (
        f"best candidate {list(best.subset)} has worst residual 10^{_log10(best.residuals.worst()):.1f} at "
        f"{best.w} digits")
    msg = (f"no active set certified to 10^-{dps - 10} and no evidence of infeasibility after {count} "
           f"subsets (budget={budget}, max_working_dps={max_w}); {where}. Raise budget or max_working_dps, "
           f"or pass on_uncertified='return'. Path: {' → '.join(s.line() for s in path)}")
    raise NumericalTrouble(msg)


def _escalation_note(cand: _Candidate) -> str:
    return f"working digits {' → '.join(map(str, cand.history))}" if len(cand.history) > 1 else ""


def _result(rows: _Rows, status, dps, tol, guess, path, cand, evidence, subsets, seconds) -> MaxMarginResult:
    common = {"status": status, "dps": dps, "tol": tol, "row_scale_exponent": rows.e, "float_guess": guess,
              "path": tuple(path), "subsets_tried": subsets, "seconds": seconds}
    if cand is None:
        nones = dict.fromkeys(("u", "norm", "margin", "multipliers", "dual_point", "support", "active_set",
                               "tight", "residuals", "working_dps", "float_support_correct",
                               "float_norm_rel_error"))
        right = guess.suggests_infeasible if status == "infeasible" else None
        return MaxMarginResult(infeasibility=evidence, float_guess_correct=right, **common, **nones)
    with mpmath.workdps(cand.w):
        norm = _norm(cand.u)
        total = mpmath.fsum(cand.nu)
        point = [x / total for x in _combine(rows.at(cand.w), range(rows.K), cand.nu)] if total else None
        margin = (1 + min(cand.slack)) / norm
        support = tuple(k for k in cand.subset if cand.nu[k] > tol * total)
        tight = tuple(k for k, s in enumerate(cand.slack) if abs(s) <= tol)
        support_ok = rel = right = None
        if status == "certified":
            if guess.u is None:
                support_ok, right = False, False
            else:
                support_ok = set(guess.support) == set(support)
                rel = float(abs(mpmath.mpf(guess.scaled_norm) - norm) / norm)
                right = bool(support_ok and rel <= FLOAT_OBJECTIVE_RTOL)
        return MaxMarginResult(
            working_dps=cand.w, u=rows.to_units(cand.u, -1), norm=rows.to_units([norm], -1)[0],
            margin=rows.to_units([margin], 1)[0], multipliers=rows.to_units(cand.nu, -2),
            dual_point=None if point is None else rows.to_units(point, 1), support=support,
            active_set=cand.subset, tight=tight, residuals=cand.residuals, infeasibility=None,
            float_support_correct=support_ok, float_norm_rel_error=rel, float_guess_correct=right, **common)


def kkt_residuals(rows: Any, u: Sequence[Any], multipliers: Sequence[Any], *, dps: int = 60) -> KKTResiduals:
    """The KKT residuals of any candidate (u, ν), e.g. a float64 solver's answer, evaluated in mpmath.

    As in :func:`hard_margin_svm` they are those of the rows scaled by 2^-e (u·2^e, ν·2^2e), and the
    arithmetic runs at dps + 20 + 3·log10(‖u‖·max‖z‖) digits, so that they are the residuals of the
    given numbers, not roundoff in evaluating them.
    """
    dps = _check_int("dps", dps, MIN_DPS, "residuals are compared with 10^-(dps-10)")
    problem = _parse_rows(rows)
    u = [_entry(x, f"u[{j}]") for j, x in enumerate(u)]
    nu = [_entry(x, f"multipliers[{k}]") for k, x in enumerate(multipliers)]
    if len(u) != problem.d:
        msg = f"u has length {len(u)}; it must have one entry per column of rows (d={problem.d})"
        raise InvalidArgument(msg)
    if len(nu) != problem.K:
        msg = f"multipliers has length {len(nu)}; it must have one entry per row (K={problem.K})"
        raise InvalidArgument(msg)
    with mpmath.workdps(30):
        w = dps + 20 + 3 * _digits(_norm(problem.to_units([_to_mpf(x) for x in u], 1)) * problem.zmax)
    with mpmath.workdps(w):
        Z = problem.at(w)
        u_mp = problem.to_units([_to_mpf(x) for x in u], 1)
        nu_mp = problem.to_units([_to_mpf(x) for x in nu], 2)
        slack = [mpmath.fdot(Z[k], u_mp) - 1 for k in range(problem.K)]
        return _residuals(Z, u_mp, nu_mp, slack)


# --------------------------------------------------------------------------- a family with a known answer


@dataclass(frozen=True, eq=False)
class KnownAnswer:
    """A problem whose solution is known exactly: float64 rows (exact dyadic numbers) and the exact answer."""

    rows: np.ndarray
    u: tuple[Fraction, ...]
    multipliers: tuple[Fraction, ...]
    support: tuple[int, ...]


def nearly_collinear_problem(d: int = 3, support_size: int | None = None, *, delta_exp: int = 40,
                             eps_exp: int = 50, distractors: int = 2, tie_exp: int = 20,
                             seed: int = 0) -> KnownAnswer:
    """An ill-conditioned problem with a closed-form answer: nearly collinear rows, ‖u*‖ = 2^eps_exp.

    Construction (exact in float64): with ε = 2^-eps_exp and δ = 2^-delta_exp, the support rows
    are z_k = (w_k, ε) with w_k = (±1, δ·m_k) ∈ R^{d-1} (m_k small integers) chosen so that
    Σ λ_k w_k = 0 for weights λ_k > 0, Σλ_k = 1. Then p* = (0, …, 0, ε) is the min-norm point of
    their hull (the hull lies in the plane x_d = ε and contains p*), so u* = p*/ε² = 2^eps_exp·e_d
    and ν_k = λ_k/ε². Distractor rows (w, c·ε) with c = 1 + j·2^-tie_exp > 1 have z·u* = c: inactive,
    by a relative gap 2^-tie_exp. All rows are within ~δ of ±e_1. Coordinates get a random
    signed permutation and rows a random order (``seed``).
    """
    s = d if support_size is None else support_size
    d = _check_int("d", d, 2, "the family needs one coordinate for ε and one for the line")
    s = _check_int("support_size", s, 2, "0 must be a convex combination of the support's w_k")
    if s > d:
        msg = f"support_size={s} exceeds d={d}; an independent support has at most d rows"
        raise InvalidArgument(msg)
    for name, value in (("delta_exp", delta_exp), ("eps_exp", eps_exp), ("tie_exp", tie_exp)):
        _check_int(name, value, 1, "exponents of 2 that keep the rows exact in float64")
    if eps_exp > 1000 or delta_exp > 1000 or tie_exp > 50:
        msg = (f"delta_exp={delta_exp}, eps_exp={eps_exp}, tie_exp={tie_exp}: need eps_exp, delta_exp ≤ 1000 "
               "(float64 range) and tie_exp ≤ 50 (so c·ε stays exact)")
        raise InvalidArgument(msg)
    distractors = _check_int("distractors", distractors, 0, "number of inactive rows")
    rng = np.random.default_rng(seed)
    delta, eps = Fraction(1, 2**delta_exp), Fraction(1, 2**eps_exp)
    for _ in range(1000):
        # weights c_k / 2^t of the first s-1 rows, summing to 1; the last row closes the combination
        t = max(1, math.ceil(math.log2(s)) + 1)
        c = [int(x) for x in rng.integers(1, 3, size=s - 2)] if s > 2 else []
        c.append(2**t - sum(c))
        lam = [Fraction(ci, 2**t) for ci in c]
        m = [[int(x) for x in rng.integers(-3, 4, size=d - 2)] for _ in range(s - 1)]
        ws = [[Fraction(1)] + [delta * x for x in mk] for mk in m]
        last = [-sum((lam[k] * ws[k][j] for k in range(s - 1)), Fraction(0)) for j in range(d - 1)]
        if _affinely_independent(ws + [last]):
            break
    else:  # pragma: no cover - a 1000-fold rank deficiency of random integers
        msg = f"could not draw an affinely independent support for d={d}, support_size={s}, seed={seed}"
        raise NumericalTrouble(msg)
    weights = [x / 2 for x in lam] + [Fraction(1, 2)]  # λ of the last row is 1/2 of the unnormalised 1 + 1
    support_rows = [w + [eps] for w in ws + [last]]
    extra = []
    for j in range(distractors):
        sign = 1 if rng.integers(2) else -1
        w = [Fraction(sign)] + [delta * int(x) for x in rng.integers(-3, 4, size=d - 2)]
        extra.append(w + [eps * (1 + Fraction(j + 1, 2**tie_exp))])
    table = support_rows + extra
    nu = [x / eps**2 for x in weights] + [Fraction(0)] * distractors
    u = [Fraction(0)] * (d - 1) + [1 / eps]
    cols = rng.permutation(d)
    signs = [1 if x else -1 for x in rng.integers(0, 2, size=d)]
    order = rng.permutation(len(table))
    table = [[signs[j] * table[i][cols[j]] for j in range(d)] for i in order]
    u = tuple(signs[j] * u[cols[j]] for j in range(d))
    nu = tuple(nu[i] for i in order)
    array = np.array([[float(x) for x in row] for row in table])
    if any(Fraction(float(x)) != x for row in table for x in row):  # pragma: no cover - guarded by the limits
        msg = "a row entry is not exact in float64; lower delta_exp, eps_exp or tie_exp"
        raise NumericalTrouble(msg)
    support = tuple(sorted(int(np.flatnonzero(order == i)[0]) for i in range(s)))
    return KnownAnswer(array, u, nu, support)


def _affinely_independent(points: list[list[Fraction]]) -> bool:
    rows = [[a - b for a, b in zip(p, points[-1], strict=True)] for p in points[:-1]]
    rank, cols = 0, len(rows[0]) if rows else 0
    for c in range(cols):
        pivot = next((i for i in range(rank, len(rows)) if rows[i][c] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for i in range(len(rows)):
            if i != rank and rows[i][c] != 0:
                f = rows[i][c] / rows[rank][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[rank], strict=True)]
        rank += 1
    return rank == len(rows)


@dataclass
class ExactMaxMargin:
    """The exact hard-margin solution of :func:`exact_hard_margin`: u* (its entries Fractions), the multipliers ν
    (one per row, 0 off the support), ‖u*‖², the margins z_k·u* and the support (rows with ν_k > 0)."""

    u: list[Fraction]
    multipliers: list[Fraction]
    norm_squared: Fraction
    margins: list[Fraction]
    support: tuple[int, ...]
    subsets_tried: int


def _solve_exact(A: list[list[Fraction]], b: list[Fraction]) -> list[Fraction] | None:
    """x with Ax = b by Gauss–Jordan in Fractions; None when A is singular."""
    n = len(A)
    M = [row[:] + [rhs] for row, rhs in zip(A, b, strict=True)]
    for c in range(n):
        pivot = next((i for i in range(c, n) if M[i][c] != 0), None)
        if pivot is None:
            return None
        M[c], M[pivot] = M[pivot], M[c]
        for i in range(n):
            if i != c and M[i][c] != 0:
                f = M[i][c] / M[c][c]
                M[i] = [a - f * p for a, p in zip(M[i], M[c], strict=True)]
    return [M[i][n] / M[i][i] for i in range(n)]


def exact_hard_margin(rows: Sequence[Sequence[Any]], max_rows: int = 16) -> ExactMaxMargin:
    """u* = argmin ‖u‖ subject to z_k·u >= 1 for every row z_k, in exact rational arithmetic (small problems).

    Every active set S (a subset of the rows, |S| <= min(d, K)) with a non-singular Gram matrix G_S is solved
    exactly: ν_S = G_S⁻¹𝟏, u = Σ_{k∈S} ν_k z_k; the first (in order of size, then lexicographic) with ν >= 0 and
    z_k·u >= 1 for every k satisfies the KKT conditions exactly, and u* is unique (a strictly convex objective on
    a convex set). Entries: ints, Fractions or floats (taken exactly). Refuses more than ``max_rows`` rows (the
    enumeration is exponential) and an infeasible problem (no active set qualifies: 0 is in the rows' hull)."""
    Z = [[_exact_fraction(x, f"rows[{k}][{j}]") for j, x in enumerate(row)] for k, row in enumerate(rows)]
    if not Z or not Z[0] or any(len(r) != len(Z[0]) for r in Z):
        raise InvalidArgument("rows must be a non-empty list of equally long, non-empty rows")
    K, d = len(Z), len(Z[0])
    if K > max_rows:
        raise InvalidArgument(f"exact_hard_margin enumerates active sets: at most max_rows={max_rows} rows; got {K}")
    tried = 0
    for size in range(1, min(d, K) + 1):
        for S in combinations(range(K), size):
            tried += 1
            gram = [[sum(a * b for a, b in zip(Z[i], Z[j], strict=True)) for j in S] for i in S]
            nu_S = _solve_exact(gram, [Fraction(1)] * size)
            if nu_S is None or min(nu_S) < 0:
                continue
            u = [sum(n * Z[k][j] for n, k in zip(nu_S, S, strict=True)) for j in range(d)]
            margins = [sum(a * b for a, b in zip(z, u, strict=True)) for z in Z]
            if min(margins) >= 1:
                nu = [Fraction(0)] * K
                for n, k in zip(nu_S, S, strict=True):
                    nu[k] = n
                return ExactMaxMargin(u, nu, sum(x * x for x in u), margins,
                                      tuple(k for k in range(K) if nu[k] > 0), tried)
    raise InvalidArgument("no active set satisfies the KKT conditions: the problem is infeasible (0 is in the "
                          "convex hull of the rows, so no u has z_k·u > 0 for every k)")


def _exact_fraction(x: Any, where: str) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, (int, np.integer)):
        return Fraction(int(x))
    if isinstance(x, (float, np.floating)) and math.isfinite(x):
        return Fraction(float(x))
    raise InvalidArgument(f"{where}={x!r} must be an int, a Fraction or a finite float")
