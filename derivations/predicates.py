"""Printed statements about finite enumerated objects, compared exhaustively.

Some printed items of a paper are not closed forms but statements over finite sets (over strings:
"EP is equivalent to first token = last token", "the last state of the automaton is the parity"). A
:class:`Predicate` holds the printed statement as a function of a case (``stated``), the
definition as another (``derived``) and the finite set of cases; :meth:`Predicate.verify`
compares them on every case and returns a :class:`derivations.core.Agreement`: ``exact`` when
they agree on every case (an exhaustive proof over the set), ``differs`` with the first
counterexample (the shortest, since cases are enumerated by size) and the number of cases that differ.

An :class:`derivations.core.Item` carries its predicates in ``Item.predicates``; ``checks.kinds.ItemCheck``
decides them beside the formulas and inequalities.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from derivations.core import Agreement, Formula, Item, RegionInequality


@dataclass
class Predicate:
    """A printed statement over a finite set of cases, compared with its definition case by case.

    Parameters
    ----------
    id, label
        ``rl.cf.ep_label.contiguous``-style id and the paper's label.
    stated
        The printed statement's value on a case.
    derived
        The definition's value on a case.
    cases
        Builds the enumerated cases (smallest first).
    show
        How a case is written in a counterexample (``"aab"``).
    """

    id: str
    label: str
    stated: Callable[[object], object]
    derived: Callable[[object], object]
    cases: Callable[[], Iterable[object]]
    description: str = ""
    latex: str = ""
    reading: Mapping[str, str] = field(default_factory=dict)
    show: Callable[[object], str] = repr

    def verify(self) -> Agreement:
        """Compare on every case; the first mismatch is the counterexample."""
        n = mismatches = 0
        first = None
        for case in self.cases():
            n += 1
            a, b = self.stated(case), self.derived(case)
            if a != b:
                mismatches += 1
                if first is None:
                    first = (case, a, b)
        if first is None:
            return Agreement("exact", n, 0)
        case, a, b = first
        return Agreement("differs", n, 0, point={"case": self.show(case)}, stated_value=str(a),
                         derived_value=str(b), difference=f"{mismatches} of {n} cases differ")


def verify_all(item: Item, **formula_options) -> dict[str, object]:
    """Every comparison of an item: Formula -> Agreement, RegionInequality -> Margin, Predicate -> Agreement."""
    results: dict[str, object] = {}
    for part in item.formulas:
        results[part.id] = part.verify(**formula_options)
    for inequality in item.inequalities:
        results[inequality.id] = inequality.sample_margin(n_points=200)
    for predicate in item.predicates:
        results[predicate.id] = predicate.verify()
    return results


def formula_ids(item: Item) -> list[str]:
    """The ids of every comparison of an item, in order."""
    parts: list[Formula | RegionInequality | Predicate] = [*item.formulas, *item.inequalities,
                                                            *item.predicates]
    return [p.id for p in parts]
