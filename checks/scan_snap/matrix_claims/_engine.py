r"""The engine of the E, E' claims: matrices, spectra, links and items, and the judge of a link.

Method (R9)
    Members are computed in float64 for every point (NumPy, batched by K): E = QΛQᵀ by ``eigh``, ordered
    |λ₁| >= … >= |λ_K| (L405). The paper's U is Qᵀ, so u_ik = U_ki = Q_ik under ``u_index=column`` and Q_ki
    under ``row``. E' = I − (I + E)^{-1} is computed as (I + E)^{-1}E: the same matrix, with an error of a
    few ulps of κ(I + E)|λ₁| instead of a few ulps of 1, which matters for E'_ii ~ λ_K². A point violates a
    link when its slack is below −4K ulps of its scale (for a strict relation: not above +4K ulps). The
    most violating inside points (up to :data:`RECHECKS`) are then recomputed at 50 digits (``mpmath.eigsy``,
    ``mpmath.inverse``, eigenpairs matched to the float64 order), the regime re-evaluated there; a link
    fails only on a violation confirmed at 50 digits. Reported per link: the points inside and outside, the
    fraction satisfied, the minimum slack (absolute and relative) with the worst point, the fractions per
    family and per K, and the confirmed counterexample (matrix entries, K, the point, the slack).

Samples
    ``ss.cfg.randE`` (:func:`numerics.models.scan_snap.matrices.random_E`), ``count`` matrices split over the
    families the item names; outside-regime probes (symmetric E with 1 < |λ₁| < 2.5 of either sign;
    zero-diagonal non-negative E with 1/K < |λ₁| < 3; an isolated class), so that every hypothesis is
    exercised on both sides; for Eqn 93 also E(0) of ``ss.cfg.thm_hyp`` (both variants, M = 10⁴).
    Assumption 2 is evaluated at M = M_A2(E) = ⌈36/min λ_i²⌉ and at M = 10⁴ (spec ``ss.cfg.randE``);
    "M ≫ K²" is read as M >= 10K² (chosen; M_A2 > 36K² whenever |λ₁| < 1/K).

The claims themselves live in :mod:`.lemmas` (Lemmas 13, 15, 16, 17, Eqn 90) and :mod:`.chain93` (Eqn 93).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from checks.claim import Outcome, Param
from checks.status import Status, combine
from derivations.errors import InvalidArgument
from numerics.models.scan_snap.data import layout, setting_quantities
from numerics.models.scan_snap.matrices import random_E

PAPER = "ss"
DPS = 50
#: float64 tolerance of a link in ulps of its scale, times K (eigh and solve have O(K eps) backward error)
ULPS = 4
#: inside points recomputed at 50 digits per link, most violating first
RECHECKS = 6
#: the chosen numeric reading of "M ≫ K²" (Assumption 2)
MUCH = 10
PROBES_PER_K = 10
EPS = float(np.finfo(float).eps)


# -- matrices ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Matrix:
    """One symmetric E with where it comes from; ``M`` fixes the vocabulary size (``ss.cfg.thm_hyp``)."""

    family: str
    index: int
    E: np.ndarray
    M: float | None = None

    @property
    def K(self) -> int:
        """The size of E."""
        return self.E.shape[0]

    def record(self) -> dict[str, Any]:
        """The JSON record of the matrix (its entries as exact float64 values)."""
        out = {"family": self.family, "index": self.index, "K": self.K, "E": self.E.tolist()}
        if self.M is not None:
            out["M"] = self.M
        return out


def randE(families: tuple[str, ...], count: int, seed: int) -> list[Matrix]:
    """``count`` matrices of ``ss.cfg.randE`` split evenly over ``families``."""
    per = max(1, count // len(families))
    return [Matrix(f, i, E) for f in families for i, E in enumerate(random_E(f, per, seed))]


def probes(seed: int, zero_diagonal: bool) -> list[Matrix]:
    """Outside-regime probes, :data:`PROBES_PER_K` per K ∈ 2..7, with |1 + λ_i| >= 0.05.

    ``zero_diagonal=False``: symmetric E with 1.05 < |λ₁| < 2.5 and a random sign of λ₁ (λ₁ < −1 lies inside
    the signed reading of Lemma 17's "λ₁ < 1"). ``True``: zero-diagonal non-negative E (family a's shape)
    rescaled to 1/K < |λ₁| < 3, and an isolated class E = 0.2(e₁e₂ᵀ + e₂e₁ᵀ) (K = 3, so λ = 0 once).
    """
    out = []
    for K in range(2, 8):
        for r in range(PROBES_PER_K):
            rng = np.random.default_rng(np.random.SeedSequence([seed, 17, K, r, int(zero_diagonal)]))
            while True:
                if zero_diagonal:
                    upper = np.triu(rng.uniform(0.0, 1.0, (K, K)), 1)
                    E = upper + upper.T
                    E *= rng.uniform(1.01 / K, 3.0) / np.max(np.abs(np.linalg.eigvalsh(E)))
                else:
                    top = rng.uniform(1.05, 2.5)
                    lam = np.concatenate([[top * rng.choice((-1.0, 1.0))], rng.uniform(-top, top, K - 1)])
                    Q, R = np.linalg.qr(rng.standard_normal((K, K)))
                    Q *= np.sign(np.diag(R))
                    E = Q @ np.diag(lam) @ Q.T
                    E = (E + E.T) / 2
                if np.min(np.abs(1 + np.linalg.eigvalsh(E))) >= 0.05:
                    break
            out.append(Matrix("probe0" if zero_diagonal else "probe", len(out), E))
    if zero_diagonal:
        iso = np.zeros((3, 3))
        iso[0, 1] = iso[1, 0] = 0.2
        out.append(Matrix("isolated", 0, iso))
    return out


def thm_hyp() -> list[Matrix]:
    """E(0) of ``ss.cfg.thm_hyp`` (both variants) at its own M = 10⁴."""
    out = []
    for variant in ("ct1", "ct2"):
        q = setting_quantities(layout(f"thm_hyp.{variant}"))
        E = np.array(q["E"])
        np.fill_diagonal(E, 0.0)  # E_nn = ‖f_n‖² − 1 = 0 by definition; FᵀF − I leaves ~1e-16 there
        out.append(Matrix(f"thm_hyp.{variant}", 0, E, M=float(q["M"])))
    return out


def M_A2(min_lam2):
    """⌈36/min λ_i²⌉, the smallest M with |λ_i| >= 6/√M for all i (inf when some λ_i = 0)."""
    with np.errstate(divide="ignore"):
        return np.ceil(36.0 / np.asarray(min_lam2, dtype=float))


# -- spectra: float64 (batched) and 50 digits (one matrix) --------------------------------------------------


@dataclass
class Group:
    """The matrices of one K (and one fixed M, if any), stacked, with their float64 spectra."""

    ids: np.ndarray
    E: np.ndarray
    M: float | None = None
    lam: np.ndarray = field(init=False)
    Q: np.ndarray = field(init=False)
    Ep: np.ndarray = field(init=False)
    kappa: np.ndarray = field(init=False)

    def __post_init__(self):
        lam, Q = np.linalg.eigh(self.E)
        order = np.argsort(-np.abs(lam), axis=1, kind="stable")
        self.lam = np.take_along_axis(lam, order, 1)
        self.Q = np.take_along_axis(Q, order[:, None, :], 2)
        self.Ep = np.linalg.solve(np.eye(self.K) + self.E, self.E)  # (I + E)^{-1}E = I − (I + E)^{-1}
        shifted = np.abs(1 + self.lam)
        # E' comes from a solve with I + E: its error is κ(I + E) times that of E
        self.kappa = shifted.max(axis=1) / shifted.min(axis=1)

    @property
    def K(self) -> int:
        """The size of every E of the group."""
        return self.E.shape[1]

    @property
    def n(self) -> int:
        """The number of matrices."""
        return self.E.shape[0]

    def u(self, reading: str) -> np.ndarray:
        """u[m, i, k] = u_ik: Q_ik (``column``: U = Qᵀ, u_ik = U_ki) or Q_ki (``row``)."""
        return self.Q if reading == "column" else np.swapaxes(self.Q, 1, 2)

    def eprime(self, reading: str) -> np.ndarray:
        """E' = I − (I + E)^{-1} (``lemma14``) or (I + E)^{-1} − I (``appB1``)."""
        return self.Ep if reading == "lemma14" else -self.Ep


def groups(mats: list[Matrix]) -> list[Group]:
    """``mats`` grouped by (K, fixed M), each group with its float64 spectra."""
    keys: dict[tuple, list[int]] = {}
    for k, m in enumerate(mats):
        keys.setdefault((m.K, m.M), []).append(k)
    ordered = sorted(keys.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0))
    return [Group(np.array(ids), np.stack([mats[i].E for i in ids]), M=M) for (_, M), ids in ordered]


@dataclass
class Exact:
    """One matrix at 50 digits: E, λ (in the float64 order), Q (columns: eigenvectors), E' (lemma14)."""

    K: int
    E: list
    lam: list
    Q: list
    Ep: list

    def u(self, i: int, k: int, reading: str):
        """u_ik per ``u_index``."""
        return self.Q[i][k] if reading == "column" else self.Q[k][i]

    def eprime(self, i: int, j: int, reading: str):
        """E'_ij per ``eprime``."""
        return self.Ep[i][j] if reading == "lemma14" else -self.Ep[i][j]


def exact(m: Matrix, lam_float: np.ndarray) -> Exact:
    """The 50-digit spectrum of ``m`` (call inside ``mpmath.workdps(DPS)``)."""
    K = m.K
    A = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in m.E])
    vals, vecs = mpmath.eigsy(A)
    free, order = list(range(K)), []
    for target in lam_float:  # the float64 eigenpair order, so that ties in |λ| are read alike
        k = min(free, key=lambda r: abs(vals[r] - mpmath.mpf(float(target))))
        order.append(k)
        free.remove(k)
    inv = mpmath.inverse(mpmath.eye(K) + A)
    return Exact(K, [[A[i, j] for j in range(K)] for i in range(K)], [vals[k] for k in order],
                 [[vecs[i, k] for k in order] for i in range(K)],
                 [[(1 if i == j else 0) - inv[i, j] for j in range(K)] for i in range(K)])


# -- items: members in float64 (batched) and at 50 digits (one point) ---------------------------------------


@dataclass(frozen=True)
class Link:
    """``lhs rel rhs`` between two members.

    ``role``: ``printed`` decides; ``derived`` (a first-principles form) and ``reported`` (a printed form
    beyond its premise) are reported only.
    """

    key: str
    lhs: str
    rel: str
    rhs: str
    label: str
    regime: str
    role: str = "printed"


@dataclass
class Batch:
    """Members of one group at one reading: ``points`` (mat id, K, indices, …), ``members``, ``regimes``."""

    points: dict[str, np.ndarray]
    members: dict[str, np.ndarray]
    regimes: dict[str, np.ndarray]
    base: np.ndarray


@dataclass(frozen=True)
class Item:
    """One claim: its links, the flags it reads, its members in float64 and at 50 digits, its regimes."""

    links: tuple[Link, ...]
    flags: tuple[str, ...]
    members: Callable[[Group, dict, dict], Batch]
    exact: Callable[[Exact, dict, dict], dict]
    regime_text: dict[str, str]
    #: the link whose minimum slack the summary quotes
    headline: str = "statement"


def _pairs(g: Group, values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Points (matrix, i, j) over all K² entries; ``values`` of shape (n, K, K) or (n,), flattened alike."""
    n, K = g.n, g.K
    shape = (n, K, K)
    out = {"mat": np.broadcast_to(g.ids[:, None, None], shape).ravel(),
           "i": np.broadcast_to(np.arange(K)[None, :, None], shape).ravel(),
           "j": np.broadcast_to(np.arange(K)[None, None, :], shape).ravel(),
           "K": np.full(n * K * K, K)}
    for name, v in values.items():
        out[name] = np.broadcast_to(v.reshape(v.shape + (1,) * (3 - v.ndim)), shape).ravel()
    return out


def _b5(g: Group) -> np.ndarray:
    """App. B.5's premise (L710): zero diagonal and non-negative off-diagonal entries."""
    diag = np.abs(np.diagonal(g.E, axis1=1, axis2=2)).max(axis=1) == 0
    return diag & (g.E.min(axis=(1, 2)) >= 0)


def _b5_exact(x: Exact) -> bool:
    K = x.K
    return all(x.E[a][a] == 0 for a in range(K)) and all(x.E[a][b] >= 0 for a in range(K) for b in range(K))


def _spectral(u: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_k w_k u_ik u_jk for every (i, j)."""
    return np.einsum("nik,nk,njk->nij", u, weights, u)

# Assumption 2 (Lemma 16, Eqn 93)


def _M_values(g: Group, settings: dict) -> np.ndarray:
    """(n, nM) vocabulary sizes: the group's fixed M, else every value of the ``M`` grid."""
    if g.M is not None:
        return np.full((g.n, 1), g.M)
    m2 = np.min(g.lam**2, axis=1)
    return np.stack([M_A2(m2) if M == "M_A2" else np.full(g.n, float(M)) for M in settings["M"]], axis=1)


def _assumption2(g: Group, M: np.ndarray) -> np.ndarray:
    """|λ₁| < 1/K, min|λ_i| >= 6/√M, M >= MUCH·K², on B.5's E; ``M`` (n, nM) → (n, nM)."""
    K = g.K
    with np.errstate(divide="ignore", invalid="ignore"):
        eig = (np.abs(g.lam[:, :1]) < 1 / K) & (np.min(np.abs(g.lam), axis=1)[:, None] >= 6 / np.sqrt(M))
    return eig & (M >= MUCH * K**2) & np.isfinite(M) & _b5(g)[:, None]


def _assumption2_exact(x: Exact, M) -> bool:
    if not math.isfinite(float(M)):
        return False
    M = mpmath.mpf(float(M))
    return bool(abs(x.lam[0]) < mpmath.mpf(1) / x.K and min(abs(v) for v in x.lam) >= 6 / mpmath.sqrt(M)
                and M >= MUCH * x.K**2 and _b5_exact(x))

# -- judging ----------------------------------------------------------------------------------------------


def _slack(rel: str, lhs, rhs):
    if rel in ("<=", "<"):
        return rhs - lhs
    if rel in (">=", ">"):
        return lhs - rhs
    return -abs(lhs - rhs)


def _fmt(v) -> str:
    return mpmath.nstr(v, 20) if isinstance(v, mpmath.mpf) else repr(v)


class _Judge:
    """Judges the links of one item on a list of matrices at one reading."""

    def __init__(self, item: Item, mats: list[Matrix], batches: list[Batch], reading: dict,
                 cache: dict[int, Exact]):
        self.item, self.mats, self.reading, self._exact = item, mats, reading, cache
        cat = lambda get: np.concatenate([get(b) for b in batches])  # noqa: E731
        self.points = {k: cat(lambda b, k=k: b.points[k]) for k in batches[0].points}
        self.members = {k: cat(lambda b, k=k: b.members[k]) for k in batches[0].members}
        self.regimes = {k: cat(lambda b, k=k: b.regimes[k]) for k in batches[0].regimes}
        self.base = cat(lambda b: b.base)
        self.family = np.array([mats[i].family for i in self.points["mat"]])

    def point(self, k: int) -> dict[str, Any]:
        """Point ``k`` as plain numbers."""
        return {name: arr[k].item() for name, arr in self.points.items()}

    def exact_members(self, k: int) -> dict:
        """The members of point ``k`` at 50 digits (call inside ``mpmath.workdps(DPS)``)."""
        point = self.point(k)
        mid = point["mat"]
        if mid not in self._exact:
            lam = np.linalg.eigvalsh(self.mats[mid].E)
            self._exact[mid] = exact(self.mats[mid], lam[np.argsort(-np.abs(lam), kind="stable")])
        return self.item.exact(self._exact[mid], point, self.reading)

    def link(self, link: Link) -> dict[str, Any]:
        """The record of one link: statistics inside and outside the regime, status, counterexample."""
        lhs, rhs = self.members[link.lhs], self.members[link.rhs]
        strict = link.rel in ("<", ">")
        with np.errstate(invalid="ignore", over="ignore"):
            slack = _slack(link.rel, lhs, rhs)
            scale = np.fmax(np.fmax(np.abs(lhs), np.abs(rhs)), self.base)
            scale = np.where(np.isfinite(scale), scale, 1.0)
            tol = ULPS * self.points["K"] * EPS * scale
            ok = slack > tol if strict else slack >= -tol
            rel_slack = slack / np.where(scale > 0, scale, 1.0)
        undecided = np.isnan(slack)
        inside = self.regimes[link.regime]
        record: dict[str, Any] = {"link": link.key, "label": link.label, "relation": link.rel,
                                  "role": link.role, "regime": link.regime, "reading": dict(self.reading)}
        for name, mask in (("inside", inside), ("outside", ~inside)):
            record[name] = self._stats(mask, ok, undecided, slack, rel_slack, lhs, rhs)
        record["inside"]["by_family"] = self._by(inside, ok, self.family)
        record["inside"]["by_K"] = self._by(inside, ok, self.points["K"])
        if not inside.any():
            record["status"] = Status.OUTSIDE.value
            return record
        flagged = np.flatnonzero(inside & ~ok & ~undecided)
        record["flagged_float64"] = int(flagged.size)
        status = Status.INCONCLUSIVE if (inside & undecided).any() else Status.HOLDS
        if flagged.size:
            status = self._confirm(link, flagged, rel_slack, record)
        record["status"] = status.value
        return record

    def _confirm(self, link: Link, flagged: np.ndarray, rel_slack: np.ndarray, record: dict) -> Status:
        """Recompute the most violating flagged points at 50 digits; the first confirmed one decides."""
        checked = []
        for k in flagged[np.argsort(rel_slack[flagged], kind="stable")][:RECHECKS]:
            k = int(k)
            with mpmath.workdps(DPS):
                x = self.exact_members(k)
                lhs, rhs = x[link.lhs], x[link.rhs]
                slack = _slack(link.rel, lhs, rhs)
                tol = mpmath.mpf(10) ** (10 - DPS) * max(abs(lhs), abs(rhs), mpmath.mpf(float(self.base[k])))
                violated = slack <= tol if link.rel in ("<", ">") else slack < -tol
                inside = bool(x[f"regime:{link.regime}"])
                entry = {"point": self.point(k), "lhs_50": _fmt(lhs), "rhs_50": _fmt(rhs),
                         "slack_50": _fmt(slack), "inside_at_50_digits": inside,
                         "confirmed": bool(violated and inside)}
            checked.append(entry)
            if entry["confirmed"]:
                record["counterexample"] = {
                    **entry, "matrix": self.mats[entry["point"]["mat"]].record(),
                    "lhs_float64": float(self.members[link.lhs][k]),
                    "rhs_float64": float(self.members[link.rhs][k]),
                    "relative_slack_float64": float(rel_slack[k])}
                break
        record["rechecked_50_digits"] = checked
        if "counterexample" in record:
            return Status.DIFFERS if link.rel == "=" else Status.FAILS
        return Status.INCONCLUSIVE if flagged.size > len(checked) else Status.HOLDS

    def _stats(self, mask, ok, undecided, slack, rel_slack, lhs, rhs) -> dict[str, Any]:
        n = int(mask.sum())
        out: dict[str, Any] = {"n": n}
        if not n:
            return out
        decided = mask & ~undecided
        out["satisfied_fraction"] = float(np.sum(ok & decided) / n)
        out["undecided"] = int(np.sum(mask & undecided))
        if decided.any():
            idx = np.flatnonzero(decided)
            k = int(idx[np.argmin(rel_slack[idx])])
            out.update(min_slack=float(np.min(slack[idx])), min_relative_slack=float(rel_slack[k]),
                       worst={"point": self.point(k), "family": str(self.family[k]), "lhs": float(lhs[k]),
                              "rhs": float(rhs[k])})
        return out

    @staticmethod
    def _by(mask, ok, key) -> dict[str, dict[str, float]]:
        out = {}
        for v in np.unique(key[mask]):
            sel = mask & (key == v)
            out[str(v)] = {"n": int(sel.sum()), "satisfied_fraction": float(np.mean(ok[sel]))}
        return out


def evaluate(item: Item, mats: list[Matrix], readings: dict[str, list[str]],
             settings: dict) -> dict[str, Any]:
    """Every link at every reading (the product of ``readings``, first values canonical), and the status.

    ``settings``: ``seed``, and for the items that read them ``M`` (a list of ``"M_A2"`` or numbers) and
    ``draws``. The status combines the printed links of the canonical reading (inside-regime points only).
    """
    gs = groups(mats)
    settings = {**settings, "matrices": mats}
    flags = list(item.flags)
    canonical = {f: readings[f][0] for f in flags}
    records, deciding, cache = [], [], {}
    for values in itertools.product(*(readings[f] for f in flags)):
        reading = dict(zip(flags, values, strict=True))
        judge = _Judge(item, mats, [item.members(g, reading, settings) for g in gs], reading, cache)
        for link in item.links:
            rec = judge.link(link)
            rec["canonical"] = reading == canonical
            records.append(rec)
            if rec["canonical"] and link.role == "printed":
                deciding.append(rec["status"])
    return {"status": combine(deciding), "records": records, "canonical": canonical}


def _summary(result: dict, mats: list[Matrix], headline: str) -> str:
    records = result["records"]
    canon = [r for r in records if r["canonical"] and r["role"] == "printed"]
    reading = ", ".join(f"{k}={v}" for k, v in result["canonical"].items())
    n_in = max((r["inside"]["n"] for r in canon), default=0)
    n_out = max((r["outside"]["n"] for r in canon), default=0)
    parts = [f"{Status(result['status']).value}{f' ({reading})' if reading else ''}: {len(canon)} printed "
             f"links on {len(mats)} matrices, up to {n_in} inside-regime points per link ({n_out} outside, "
             f"reported only)"]
    for r in canon:
        if r["status"] not in ("fails", "differs", "inconclusive"):
            continue
        cx = r.get("counterexample")
        where = ""
        if cx:
            m = cx["matrix"]
            where = (f"; worst {m['family']} #{m['index']} (K={m['K']}): slack {float(cx['slack_50']):.3g}, "
                     f"confirmed at 50 digits")
        by_k = ", ".join(f"K={k}: {1 - v['satisfied_fraction']:.0%}" for k, v in r["inside"]["by_K"].items()
                         if v["satisfied_fraction"] < 1)
        parts.append(f"'{r['label']}' {r['status']} at {1 - r['inside']['satisfied_fraction']:.1%} of "
                     f"{r['inside']['n']} inside points ({by_k}){where}")
    head = next((r for r in canon if r["link"] == headline), None)
    if head is not None and "min_relative_slack" in head["inside"]:
        stats = head["inside"]
        within = " (within the float64 tolerance)" if stats["min_relative_slack"] < 0 else ""
        parts.append(f"'{head['label']}': min relative slack {stats['min_relative_slack']:.3g}{within} "
                     f"({stats['worst']['family']}, K={stats['worst']['point']['K']})")
    extra = [r for r in records if r["canonical"] and r["role"] != "printed"]
    if extra:
        parts.append("not deciding: " + ", ".join(f"'{r['label']}' ({r['role']}) {r['status']}"
                                                  for r in extra))
    others: dict[str, list[str]] = {}
    for r in records:
        if not r["canonical"] and r["role"] == "printed" and r["status"] not in ("holds", "outside-regime"):
            key = ", ".join(f"{k}={v}" for k, v in r["reading"].items() if result["canonical"].get(k) != v)
            others.setdefault(key, []).append(f"{r['link']} {r['status']}")
    if others:
        parts.append("other readings: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in others.items()))
    return "; ".join(parts)


def _run(item: Item, mats: list[Matrix], ctx, settings: dict, notes: tuple[str, ...] = ()) -> Outcome:
    readings = {f: ctx.grid(f) for f in item.flags}
    result = evaluate(item, mats, readings, {**settings, "seed": ctx.seed})
    families: dict[str, int] = {}
    for m in mats:
        families[m.family] = families.get(m.family, 0) + 1
    evidence = {"matrices": families, "regimes": item.regime_text,
                "tolerance": f"{ULPS}·K ulps of the scale (float64); violations confirmed at {DPS} digits",
                "readings": readings, "canonical": result["canonical"], "links": result["records"],
                "notes": list(notes), **settings}
    return Outcome(result["status"], _summary(result, mats, item.headline), evidence)


def _count(ctx) -> int:
    count = ctx.grid("count")[0]
    if not isinstance(count, int) or count < 1:
        msg = f"count={count!r} must be a positive number of random E (ss.cfg.randE); choose e.g. count=2000"
        raise InvalidArgument(msg)
    return count


# -- parameters shared by the claims -----------------------------------------------------------------


COUNT = Param("count", 2000, quick=(2000,), full=(20_000,),
              doc="random E of ss.cfg.randE, split over the families")
EPRIME = Param("eprime", "lemma14", quick=("lemma14", "appB1"), choices=("lemma14", "appB1"))
U_INDEX = Param("u_index", "column", quick=("column", "row"), choices=("column", "row"))
M_GRID = Param("M", "M_A2", quick=("M_A2", 10_000),
               doc="vocabulary size of Assumption 2: M_A2(E) = ⌈36/min λ_i²⌉, or a number")
