"""Reusable check kinds: closed-form items (identities and region inequalities) and Monte-Carlo agreement.

Each printed inequality of a closed-form item is decided twice: by sampling (the margin at
random points, decided in 30-digit mpmath) and by certification (``checks.certify``: interval
branch-and-bound in arb on the inequality's whole region, within a budget-dependent time
limit; symbolic integers such as L are certified at each of the domain's sampled values, sums
unrolled). ``evidence["certification"]`` holds one record per inequality (status certified |
fails | undecided, boxes, smallest certified margin, coverage, counterexample, method, seconds,
reason).

The item's verdict combines them:

* ``differs`` when a printed equality (canonical reading) is not what its definition gives;
* ``fails`` when an inequality is violated at a sampled point *or* certification found a
  counterexample (confirmed in arb) — a certified counterexample decides even when sampling
  missed it;
* ``inconclusive`` when the two methods contradict each other (a sampled violation on a region
  certification proved) or Monte-Carlo disagrees with the derivation: a tdcheck bug, not a verdict;
* ``certified`` when every inequality is certified on its whole region and every canonical
  display is equal to its derivation *exactly* (a symbolic proof, not 30 digits at sampled
  points) — so an item of inequalities only is certified when they all are;
* ``holds`` otherwise: an ``undecided`` certification (time limit, touching set) leaves the
  sampling verdict standing.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from checks.claim import Context, Outcome
from checks.numeric_identity import pinned_head
from checks.status import Status, combine
from checks.papers import PAPERS
from derivations.core import Item, RegionInequality
from derivations.corrections import minimal_correction
from derivations.domain import Constraint, Domain
from derivations.errors import InvalidArgument

#: effort per budget: points per formula, symbolic-proof time limit (s), points per inequality,
#: and the certifier's budgets. The quick budget relies on the 30-digit comparison at sampled
#: points and gives SymPy only a moment to prove the identity (agreement "numeric" instead of
#: "exact" when it cannot). Certification is budgeted in boxes, so that a verdict is the same on
#: a busy or an idle machine: ``certify_boxes`` for the compiled interval search of one
#: inequality, ``certify_arb_boxes`` for its arb search (per inequality, and in all per item);
#: the ``*_seconds`` entries are safety caps only (a cap that binds is reported as such).
EFFORT = {
    "quick": {"points": 8, "symbolic_seconds": 0.05, "inequality_points": 1000, "correction_edits": 600,
              "certify_boxes": 20_000, "certify_arb_boxes": 100, "certify_item_arb_boxes": 1_000,
              "certify_seconds": 30.0, "certify_item_seconds": 300.0},
    "full": {"points": 24, "symbolic_seconds": 8.0, "inequality_points": 20000, "correction_edits": 5000,
             "certify_boxes": 5_000_000, "certify_arb_boxes": 20_000, "certify_item_arb_boxes": 200_000,
             "certify_seconds": 1800.0, "certify_item_seconds": 7200.0},
}


@dataclass(frozen=True)
class CertifyBudget:
    """What one certification may spend: boxes of the compiled search, boxes of the arb search, a time cap (s)."""

    boxes: int
    arb_boxes: int
    seconds: float

    @classmethod
    def of(cls, budget: str, factor: float = 1.0) -> CertifyBudget:
        """The per-inequality budget of ``--budget`` (``quick``/``full``), scaled by ``factor``."""
        effort = EFFORT[budget]
        return cls(int(effort["certify_boxes"] * factor), int(effort["certify_arb_boxes"] * factor),
                   effort["certify_seconds"] * factor)


def deferred_build(derivations, item_id: str) -> Callable[[], Item]:
    """``ItemCheck.build`` for a paper's item: ``derivations.item(item_id)`` built on first use (derivations can take
    seconds), carrying its builder's docstring (``derivations`` is the paper's derivations package)."""
    def build():
        return derivations.item(item_id)

    build.__doc__ = derivations.builder(item_id).__doc__
    return build


def item_domain(item: Item) -> Domain:
    """The union of an item's domains: every symbol a user may pin with ``--param``."""
    intervals: dict[sp.Symbol, Any] = {}
    integers: dict[sp.Symbol, Any] = {}
    constraints: list[Constraint] = []
    for part in [*item.formulas, *item.inequalities]:
        intervals.update({s: iv for s, iv in part.domain.intervals.items() if s not in intervals})
        integers.update({s: ch for s, ch in part.domain.integers.items() if s not in integers})
        constraints += [c for c in part.domain.constraints if c not in constraints]
    return Domain(intervals, integers, tuple(constraints))


def pinned(ctx: Context, domain: Domain) -> dict[sp.Symbol, object]:
    """The parameters the user pinned, keyed by symbol, as exact rationals (declared defaults are not pins:
    the identities and inequalities are sampled over the domain unless a value is pinned)."""
    names = domain.names()
    return {
        names[k]: (int(v) if names[k].is_integer else sp.Rational(v))
        for k, v in ctx.pinned.items() if k in names
    }


@dataclass
class MonteCarloCheck:
    """A Monte-Carlo cross-check: ``run(ctx) -> list of records`` with keys mean, se, closed forms, agree."""

    name: str
    run: Callable[[Context], list[dict[str, Any]]]


@dataclass
class ItemCheck:
    """The check of one closed-form item, with optional Monte-Carlo cross-checks and extra evidence."""

    build: Callable[[], Item]
    monte_carlo: Sequence[MonteCarloCheck] = ()
    #: the spec's canonical reading of each ambiguous flag; formulas under other readings are
    #: reported beside the verdict but do not decide it
    default_readings: Mapping[str, str] = field(default_factory=dict)
    extra: Callable[[Context, Item], dict[str, Any]] | None = None
    #: run ``checks.certify`` on every region inequality (see the module docstring)
    certify: bool = True
    #: per inequality (full id or the part after the item id): options for
    #: ``certify_inequality`` (``box``, ``open_shrink``, ``min_width``, …) and ``time_factor``
    #: (a multiple of the budget's time limit for an inequality that needs longer)
    certify_options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    _item: Item | None = field(default=None, repr=False)

    @property
    def item(self) -> Item:
        """The item, built once (derivations can take seconds)."""
        if self._item is None:
            self._item = self.build()
        return self._item

    def canonical(self, reading: Mapping[str, str]) -> bool:
        """True when every flag of ``reading`` takes its deciding value: canonical, or pinned with ``--param``."""
        from checks.configurations import in_reading

        return in_reading(reading, getattr(self, "_deciding", None) or self.default_readings)

    def certification(self, ctx: Context, item: Item, fixed: Mapping[sp.Symbol, object]) -> list[dict[str, Any]]:
        """Certify every region inequality of ``item`` within the budget (records in inequality order).

        Each inequality gets the budget's boxes (times its ``budget_factor`` option); the arb
        boxes of the item are shared out evenly among the inequalities not yet certified, so
        the last ones are not starved by the first.
        """
        effort = EFFORT[ctx.budget]
        end = time.perf_counter() + effort["certify_item_seconds"]
        arb_left = effort["certify_item_arb_boxes"]
        out = []
        for i, inequality in enumerate(item.inequalities):
            options = self.certify_options.get(inequality.id) or self.certify_options.get(
                inequality.id.removeprefix(item.id + "."), {})
            local = {s: v for s, v in fixed.items() if s in inequality.domain.symbols}
            passed = {k: v for k, v in options.items() if k != "budget_factor"}
            budget = CertifyBudget.of(ctx.budget, float(options.get("budget_factor", 1.0)))
            share = arb_left // (len(item.inequalities) - i)
            seconds = min(budget.seconds, end - time.perf_counter())
            if seconds <= 0:
                # the compiled search and the counterexample search still run: a failure must not
                # depend on how long the inequalities before this one took
                record = certify_region_inequality(inequality, local, CertifyBudget(budget.boxes, 0, 5.0), passed)
                if record["status"] != "fails":
                    record["reason"] = (f"compiled search only: the item's safety cap on time "
                                        f"({effort['certify_item_seconds']:g} s at --budget {ctx.budget}) was "
                                        f"reached by earlier inequalities")
                out.append(record)
                continue
            record = certify_region_inequality(
                inequality, local, CertifyBudget(budget.boxes, min(budget.arb_boxes, share), seconds), passed)
            arb_left -= record["arb_boxes"]
            out.append(record)
        return out

    def __call__(self, ctx: Context) -> Outcome:
        """Verify every display of the item, run the Monte-Carlo cross-checks, and decide."""
        from checks.configurations import deciding_readings

        item = self.item
        effort = EFFORT[ctx.budget]
        fixed = pinned(ctx, item_domain(item))
        self._deciding = deciding_readings(self.default_readings, ctx)
        evidence: dict[str, Any] = {"formulas": {}, "inequalities": {}}
        if self._deciding != dict(self.default_readings):
            evidence["deciding_reading"] = {k: v for k, v in self._deciding.items() if k in ctx.pinned}
        outside = {i.id: reason for i in item.inequalities if (reason := region_missed(i, fixed))}
        if outside:
            # the pinned parameters leave no point of these inequalities' regions: nothing to decide
            evidence["inequalities_not_applicable"] = outside
            item = replace(item, inequalities=[i for i in item.inequalities if i.id not in outside])
        differing, failing, alternative, exact = [], [], [], True
        owner = PAPERS.get(ctx.claim_id.split(".")[0])
        names = owner.symbol_names() if owner else {}
        for formula in item.formulas:
            local = {s: v for s, v in fixed.items() if s in formula.domain.symbols}
            agreement = formula.verify(
                n_points=effort["points"], seed=ctx.seed, fixed=local, symbolic_seconds=effort["symbolic_seconds"]
            )
            record = {"label": formula.label, "description": formula.description, **agreement.to_dict()}
            if formula.reading:
                record["reading"] = dict(formula.reading)
            evidence["formulas"][formula.id] = record
            if not agreement.equal:
                name = formula.id.removeprefix(item.id + ".")
                (differing if self.canonical(formula.reading) else alternative).append(name)
                search = minimal_correction(formula, seed=ctx.seed, fixed=local,
                                            max_candidates=effort["correction_edits"])
                record["correction"] = search.to_dict(names)
            elif agreement.status != "exact" and self.canonical(formula.reading):
                exact = False
        for predicate in item.predicates:
            # a printed statement over a finite set: compared on every case (exact, or the first counterexample)
            agreement = predicate.verify()
            record = {"label": predicate.label, "description": predicate.description, "kind": "predicate",
                      **agreement.to_dict()}
            if predicate.reading:
                record["reading"] = dict(predicate.reading)
            evidence["formulas"][predicate.id] = record
            if not agreement.equal:
                name = predicate.id.removeprefix(item.id + ".")
                (differing if self.canonical(predicate.reading) else alternative).append(name)
        canonical_ids = {i.id for i in item.inequalities if self.canonical(i.reading)}
        for inequality in item.inequalities:
            local = {s: v for s, v in fixed.items() if s in inequality.domain.symbols}
            margin = inequality.sample_margin(n_points=effort["inequality_points"], seed=ctx.seed, fixed=local)
            evidence["inequalities"][inequality.id] = {
                "label": inequality.label, "description": inequality.description, "method": "sampling",
                **({"reading": dict(inequality.reading)} if inequality.reading else {}), **margin.to_dict(),
            }
            if not margin.holds:
                name = inequality.id.removeprefix(item.id + ".")
                (failing if inequality.id in canonical_ids else alternative).append(name)
        certification = self.certification(ctx, item, fixed) if self.certify else []
        if certification:
            evidence["certification"] = certification
            for record in certification:
                evidence["inequalities"][record["inequality"]]["certification"] = record["status"]
                name = record["inequality"].removeprefix(item.id + ".")
                if record["inequality"] not in canonical_ids and record["status"] == "fails" and name not in alternative:
                    alternative.append(name)
        # the canonical reading decides, for sampling and certification alike (checks.status)
        deciding_certification = [r for r in certification if r["inequality"] in canonical_ids]
        mc_disagree, mc_records = [], []
        for check in self.monte_carlo:
            records = check.run(ctx)
            evidence.setdefault("monte_carlo", {})[check.name] = records
            mc_records += records
            mc_disagree += [check.name for r in records if not r["agrees_with_derived"]]
        extra_summary = ""
        if self.extra is not None:
            # a second, numeric method: its parts that disagree with the derivation ("disagrees") make
            # the item inconclusive, like a Monte-Carlo estimate that does
            extra = self.extra(ctx, item)
            extra_summary = extra.pop("summary", "")
            mc_disagree += list(extra.pop("disagrees", []))
            evidence.update(extra)
        if item.notes:
            evidence["notes"] = item.notes
        n_canonical = sum(self.canonical(f.reading) for f in [*item.formulas, *item.predicates])
        status, summary = decide(item, n_canonical, differing, failing, mc_disagree, deciding_certification, exact,
                                 n_inequalities=len(canonical_ids))
        summary = pinned_head(summary, evidence)
        if outside:
            summary += f"; {len(outside)} inequalities have no point at the pinned parameters"
        if alternative:
            summary += "; under other readings also differ or fail: " + ", ".join(alternative[:4]) + (
                " …" if len(alternative) > 4 else "")
            evidence["differs_under_other_readings"] = alternative
        if mc_records:
            canonical = [r for r in mc_records if self.canonical(r.get("reading", {}))]
            summary += "; " + monte_carlo_summary(mc_records, canonical)
        if extra_summary:
            summary += "; " + extra_summary
        return Outcome(status, summary, evidence=evidence)


def decide(
    item: Item, n_f: int, differing: list[str], failing: list[str], mc_disagree: list[str],
    certification: Sequence[Mapping[str, Any]] = (), exact: bool = False, n_inequalities: int | None = None,
) -> tuple[str, str]:
    """Status and one-line summary of a closed-form item with ``n_f`` displays in the canonical reading.

    ``failing`` are the canonical inequalities violated at a sampled point, ``certification`` the
    records of :func:`certify_region_inequality` of the canonical inequalities (``n_inequalities`` of
    them; all of the item's by default) and ``exact`` whether every canonical display agreeing with
    its derivation was proven symbolically (the rules are in the module docstring).
    """
    n_i = len(item.inequalities) if n_inequalities is None else n_inequalities
    short = lambda name: name.removeprefix(item.id + ".")  # noqa: E731
    by_status = {k: [short(r["inequality"]) for r in certification if r["status"] == k]
                 for k in ("certified", "fails", "undecided")}
    contradictions = [name for name in by_status["certified"] if name in failing]
    sampled_failures = len(failing)
    failing = failing + [name for name in by_status["fails"] if name not in failing]
    parts = []
    if n_f:
        parts.append(f"{n_f - len(differing)}/{n_f} displays equal their derivation (canonical reading)")
    if n_i:
        parts.append(f"{n_i - sampled_failures}/{n_i} inequalities hold (sampled)")
    if certification:
        text = f"{len(by_status['certified'])}/{len(certification)} certified"
        if by_status["fails"]:
            text += f", {len(by_status['fails'])} with a certified counterexample"
        if by_status["undecided"]:
            text += f", {len(by_status['undecided'])} undecided"
        parts.append(text)
    if differing:
        parts.append("differs: " + ", ".join(differing[:4]) + (" …" if len(differing) > 4 else ""))
    if failing:
        parts.append("fails: " + ", ".join(failing[:3]) + (" …" if len(failing) > 3 else ""))
    if mc_disagree:
        # a second method (Monte-Carlo, the numeric model) disagreeing with the derivation means the
        # derivation (or the second method) is wrong: nothing is decided
        parts.append("a second method disagrees with the derivation: " + ", ".join(sorted(set(mc_disagree))))
        return Status.INCONCLUSIVE.value, "; ".join(parts)
    if contradictions:
        parts.append("sampling and certification contradict each other on: " + ", ".join(contradictions))
        return Status.INCONCLUSIVE.value, "; ".join(parts)
    all_certified = n_i > 0 and len(by_status["certified"]) == n_i and len(certification) == n_i
    # `certified` is a claim of interval arithmetic: an item needs certified inequalities for it, and
    # its displays must then be proven exactly (symbolic zero), not at sampled points
    proven = exact and n_i > 0
    displays = [Status.DIFFERS if differing else (Status.CERTIFIED if proven else Status.HOLDS)] if n_f else []
    inequalities = [Status.FAILS if failing else (Status.CERTIFIED if all_certified else Status.HOLDS)] if n_i else []
    return combine([*displays, *inequalities]).value, "; ".join(parts)


def region_missed(inequality: RegionInequality, fixed: Mapping[sp.Symbol, object]) -> str:
    """Why the pinned parameters leave no point of ``inequality``'s region ("" when they leave some).

    Decided by rejection sampling (200 draws), so a region thinner than that is taken as missed.
    """
    local = {s: v for s, v in fixed.items() if s in inequality.domain.symbols}
    if not local:
        return ""
    try:
        inequality.domain.sample(random.Random(0), 1, local)
    except InvalidArgument:
        names = ", ".join(f"{s.name}={v}" for s, v in local.items())
        return f"no point of {inequality.domain} has {names}"
    return ""


# ----------------------------------------------------------------------------- certification


def integer_cases(inequality: RegionInequality, fixed: Mapping[sp.Symbol, object]) -> list[dict[sp.Symbol, int]]:
    """The integer values an inequality is certified at: the pinned ones, else the domain's sampled
    values (taken together by position, as ``Domain.sample`` cycles through them), deduplicated and
    filtered by the constraints that involve integers only."""
    domain = inequality.domain
    if not domain.integers:
        return [{}]
    longest = max(len(choices) for _, choices in domain.integers.values())
    cases: list[dict[sp.Symbol, int]] = []
    for i in range(longest):
        case = {s: int(fixed[s]) if s in fixed else int(choices[i % len(choices)])
                for s, (_, choices) in domain.integers.items()}
        if case in cases:
            continue
        ok = True
        for constraint in domain.constraints:
            if constraint.relation.free_symbols <= set(case):
                ok = ok and bool(constraint.relation.subs(case))
        if ok:
            cases.append(case)
    return cases


def certify_region_inequality(
    inequality: RegionInequality, fixed: Mapping[sp.Symbol, object], budget: CertifyBudget,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Certify ``inequality`` on its region (pinned parameters fixed) within ``budget``.

    Integer cases share the budget evenly. Returns the record of ``evidence["certification"]``:
    ``inequality`` (id), ``status`` (certified | fails | undecided; over several integer cases
    the worst), ``boxes`` (``compiled_boxes`` + ``arb_boxes``), ``margin`` (smallest certified
    lower bound of rhs - lhs), ``coverage`` (certified fraction of the region, the mean over
    integer cases), ``counterexample`` (point, both sides, margin; or None), ``method``,
    ``seconds``, ``reason``, and ``cases`` (one entry per integer case) when there are integer
    symbols.
    """
    from checks.certify import certify_inequality  # python-flint is imported only when certifying

    options = dict(options or {})
    box = dict(options.pop("box", {}))
    for sym, value in fixed.items():
        if sym in inequality.domain.intervals:
            box[sym] = (value, value)
    cases = integer_cases(inequality, fixed)
    end = time.perf_counter() + budget.seconds
    arb_left = budget.arb_boxes
    records = []
    for i, case in enumerate(cases):
        if records and records[-1]["status"] == "fails":
            break  # the inequality fails: the remaining cases cannot change that
        left = end - time.perf_counter()
        if left <= 0:
            records.append(_not_certified(case, "safety cap on time reached (not started)"))
            continue
        try:
            cert = certify_inequality(inequality, integers=case, box=box, time_limit=left / (len(cases) - i),
                                      max_boxes=budget.boxes // len(cases),
                                      arb_boxes=arb_left // (len(cases) - i), **options)
        except InvalidArgument as error:  # e.g. an unbounded range or a function arb cannot evaluate
            records.append(_not_certified(case, f"not certifiable as encoded: {error}"))
            continue
        arb_left -= cert.arb_boxes
        records.append(_case_record(case, cert))
    return _combine(inequality.id, records)


def _not_certified(case: Mapping[sp.Symbol, int], reason: str) -> dict[str, Any]:
    """The record of an integer case the certifier did not search (``undecided``, no boxes)."""
    return {"integers": case, "status": "undecided", "boxes": 0, "compiled_boxes": 0, "arb_boxes": 0,
            "margin": None, "coverage": 0.0, "counterexample": None, "method": "none", "seconds": 0.0,
            "reason": reason, "uncertified_boxes": []}


def _case_record(case: Mapping[sp.Symbol, int], cert) -> dict[str, Any]:
    remaining = 1.0 - cert.excluded_fraction
    coverage = 1.0 if cert.certified else (cert.certified_fraction / remaining if remaining > 0 else 0.0)
    method = cert.method
    if cert.touching_points:
        method += " (touching at " + "; ".join(", ".join(f"{k}={v}" for k, v in t.items())
                                               for t in cert.touching_points) + ")"
    counterexample = None
    if cert.fails:
        counterexample = {"point": dict(cert.point), "lhs": cert.lhs_value, "rhs": cert.rhs_value,
                          "margin": cert.margin_value}
        if case:
            counterexample["integers"] = {s.name: v for s, v in case.items()}
    reason = cert.reason or ("; ".join(cert.notes) if cert.fails else "")
    shrunk = [n for n in cert.notes if "shrunk" in n]
    if shrunk and not cert.fails:
        reason = "; ".join(filter(None, [reason, *shrunk]))
    return {"integers": case, "status": cert.status, "boxes": cert.n_boxes, "compiled_boxes": cert.compiled_boxes,
            "arb_boxes": cert.arb_boxes, "margin": cert.min_margin_lower,
            "coverage": coverage, "counterexample": counterexample, "method": method,
            "seconds": cert.elapsed, "reason": reason,
            "uncertified_boxes": cert.uncertified[:5] if cert.status == "undecided" else [],
            **({"open_region": cert.open_region} if cert.open_region else {})}


def _combine(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    statuses = [r["status"] for r in records]
    status = "fails" if "fails" in statuses else "undecided" if "undecided" in statuses else "certified"
    margins = [r["margin"] for r in records if r["margin"] is not None]
    decisive = next((r for r in records if r["status"] == status), records[0])
    out = {
        "inequality": name,
        "status": status,
        "boxes": sum(r["boxes"] for r in records),
        "compiled_boxes": sum(r["compiled_boxes"] for r in records),
        "arb_boxes": sum(r["arb_boxes"] for r in records),
        "margin": min(margins) if margins else None,
        "coverage": sum(r["coverage"] for r in records) / len(records),
        "counterexample": decisive["counterexample"],
        "method": " | ".join(dict.fromkeys(r["method"] for r in records)),
        "seconds": sum(r["seconds"] for r in records),
        "reason": decisive["reason"],
    }
    if decisive["uncertified_boxes"]:
        out["uncertified_boxes"] = decisive["uncertified_boxes"]
    if decisive.get("open_region"):
        out["open_region"] = decisive["open_region"]
    if any(r["integers"] for r in records):
        out["cases"] = [{**{k: v for k, v in r.items() if k not in ("integers", "uncertified_boxes")},
                         "integers": {s.name: v for s, v in r["integers"].items()}} for r in records]
    return out


def monte_carlo_summary(records: list[dict[str, Any]], canonical: list[dict[str, Any]]) -> str:
    """One clause: how many Monte-Carlo points agree (within 4 SE) with the derivation, and with the print
    where the Monte-Carlo estimate is of the canonical reading (``canonical``)."""
    derived = sum(bool(r["agrees_with_derived"]) for r in records)
    with_printed = [r for r in canonical if "agrees_with_printed" in r and "z_printed" in r]
    printed = sum(bool(r["agrees_with_printed"]) for r in with_printed)
    text = f"Monte-Carlo agrees with the derivation at {derived}/{len(records)} points"
    if with_printed and printed < len(with_printed):
        worst = max(abs(r["z_printed"]) for r in with_printed if not r["agrees_with_printed"])
        text += f", rejects the print at {len(with_printed) - printed}/{len(with_printed)} (max |z| = {worst:.0f})"
    return text
