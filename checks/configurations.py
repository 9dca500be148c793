"""A claim's configurations and readings: the grid a check sweeps, from its declared parameters.

Both honour pins: a pinned parameter or flag replaces its axis by its one value.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from checks.claim import Context


def configurations(ctx: Context, names: Iterable[str]) -> list[dict[str, Any]]:
    """Every combination of ``ctx.grid(name)`` over ``names`` (the budget's grids, pins replacing axes)."""
    names = list(names)
    axes = [ctx.grid(name) for name in names]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes)]


def readings(ctx: Context, flags: Iterable[str], *,
             allowed: Callable[[tuple], bool] | None = None) -> list[tuple]:
    """Combinations of the reading ``flags``' values, the canonical one (each flag's first value) first.

    Each flag's values are ``ctx.grid(flag)``: the pinned value, else the budget's list of readings.
    At the quick budget only the combinations that differ from the canonical one in at most one
    flag are kept (spec: the canonical reading plus every alternative of each flag); ``allowed``
    drops combinations that do not exist (e.g. a loss defined for one range only).
    """
    flags = list(flags)
    values = [ctx.grid(flag) for flag in flags]
    canonical = tuple(v[0] for v in values)
    combos = [c for c in itertools.product(*values) if allowed is None or allowed(c)]
    if ctx.quick:
        combos = [c for c in combos if sum(a != b for a, b in zip(c, canonical, strict=True)) <= 1]
    combos.sort(key=lambda c: c != canonical)
    return combos


def deciding_readings(defaults: Mapping[str, str], ctx: Context) -> dict[str, str]:
    """The reading that decides a check: each flag's canonical value, or the value pinned with ``--param``."""
    return {**defaults, **{flag: ctx.pinned[flag] for flag in defaults if flag in ctx.pinned}}


def in_reading(reading: Mapping[str, str], deciding: Mapping[str, str]) -> bool:
    """True when every flag of ``reading`` takes its deciding value (flags the decision does not name always do)."""
    return all(deciding.get(flag, value) == value for flag, value in reading.items())


def reading_params(readings: Iterable[Mapping[str, str]], defaults: Mapping[str, str]):
    """Declared parameters for the reading flags that ``readings`` use: each flag's deciding default (from
    ``defaults``, else its first value) and every value seen as a choice, so that ``--param flag=value``
    makes that reading decide and every verdict records the readings it was decided on."""
    from checks.claim import Param

    values: dict[str, list[str]] = {}
    for reading in readings:
        for flag, value in reading.items():
            values.setdefault(flag, [])
            if value not in values[flag]:
                values[flag].append(value)
    out = []
    for flag, seen in values.items():
        default = defaults.get(flag, seen[0])
        choices = (default, *[v for v in seen if v != default])
        out.append(Param(flag, default, choices=choices, doc="a reading flag: the value that decides"))
    return tuple(out)
