"""Reusable check kinds: closed-form items (identities and region inequalities) and Monte-Carlo agreement.

A closed-form item's verdict is ``differs`` when a printed equality is not what its
definition gives, ``fails`` when a printed inequality is violated at a sampled point, and
``holds`` otherwise. Sampling cannot prove an inequality; ``checks.certify`` can.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from checks.claim import Context, Outcome
from derivations.core import Item
from derivations.domain import Constraint, Domain

#: effort per budget: points per formula, symbolic-proof time limit (s), points per inequality.
#: The quick budget relies on the 30-digit comparison at sampled points and gives SymPy only a
#: moment to prove the identity (agreement "numeric" instead of "exact" when it cannot).
EFFORT = {
    "quick": {"points": 8, "symbolic_seconds": 0.05, "inequality_points": 1000},
    "full": {"points": 24, "symbolic_seconds": 8.0, "inequality_points": 20000},
}


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
    """The parameters the user pinned (non-None), keyed by symbol, as exact rationals."""
    names = domain.names()
    return {
        names[k]: (int(v) if names[k].is_integer else sp.Rational(v))
        for k, v in ctx.params.items() if k in names and v is not None
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
    _item: Item | None = field(default=None, repr=False)

    @property
    def item(self) -> Item:
        """The item, built once (derivations can take seconds)."""
        if self._item is None:
            self._item = self.build()
        return self._item

    def canonical(self, reading: Mapping[str, str]) -> bool:
        """True when every flag of ``reading`` takes its canonical value (flags without one always do)."""
        return all(self.default_readings.get(flag, value) == value for flag, value in reading.items())

    def __call__(self, ctx: Context) -> Outcome:
        """Verify every display of the item, run the Monte-Carlo cross-checks, and decide."""
        item = self.item
        effort = EFFORT[ctx.budget]
        fixed = pinned(ctx, item_domain(item))
        evidence: dict[str, Any] = {"formulas": {}, "inequalities": {}}
        differing, failing, alternative = [], [], []
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
        for inequality in item.inequalities:
            local = {s: v for s, v in fixed.items() if s in inequality.domain.symbols}
            margin = inequality.sample_margin(n_points=effort["inequality_points"], seed=ctx.seed, fixed=local)
            evidence["inequalities"][inequality.id] = {
                "label": inequality.label, "description": inequality.description, "method": "sampling",
                **margin.to_dict(),
            }
            if not margin.holds:
                failing.append(inequality.id.removeprefix(item.id + "."))
        mc_disagree, mc_records = [], []
        for check in self.monte_carlo:
            records = check.run(ctx)
            evidence.setdefault("monte_carlo", {})[check.name] = records
            mc_records += records
            mc_disagree += [check.name for r in records if not r["agrees_with_derived"]]
        extra_summary = ""
        if self.extra is not None:
            extra = self.extra(ctx, item)
            extra_summary = extra.pop("summary", "")
            evidence.update(extra)
        if item.notes:
            evidence["notes"] = item.notes
        n_canonical = sum(self.canonical(f.reading) for f in item.formulas)
        status, summary = decide(item, n_canonical, differing, failing, mc_disagree)
        if alternative:
            summary += "; under other readings also differ: " + ", ".join(alternative[:4]) + (
                " …" if len(alternative) > 4 else "")
            evidence["differs_under_other_readings"] = alternative
        if mc_records:
            canonical = [r for r in mc_records if self.canonical(r.get("reading", {}))]
            summary += "; " + monte_carlo_summary(mc_records, canonical)
        if extra_summary:
            summary += "; " + extra_summary
        return Outcome(status, summary, evidence=evidence)


def decide(
    item: Item, n_f: int, differing: list[str], failing: list[str], mc_disagree: list[str]
) -> tuple[str, str]:
    """Status and one-line summary of a closed-form item with ``n_f`` displays in the canonical reading."""
    n_i = len(item.inequalities)
    parts = []
    if n_f:
        parts.append(f"{n_f - len(differing)}/{n_f} displays equal their derivation (canonical reading)")
    if n_i:
        parts.append(f"{n_i - len(failing)}/{n_i} inequalities hold (sampled)")
    if differing:
        parts.append("differs: " + ", ".join(differing[:4]) + (" …" if len(differing) > 4 else ""))
    if failing:
        parts.append("fails: " + ", ".join(failing[:3]) + (" …" if len(failing) > 3 else ""))
    if mc_disagree:
        # Monte-Carlo disagreeing with the derivation means the derivation (or the sampler) is wrong.
        parts.append("Monte-Carlo disagrees with the derivation: " + ", ".join(sorted(set(mc_disagree))))
        return "inconclusive", "; ".join(parts)
    status = "differs" if differing else "fails" if failing else "holds"
    return status, "; ".join(parts)


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
