"""Statements that hold "with probability at least 1 − δ": decided over independent draws (initialisations, seeds).

Per draw a predicate is evaluated (a bound for every index it quantifies over, a sign, a non-empty window).
With k of N draws satisfying it, p̂ = k/N and p_hi the one-sided 95 % Clopper–Pearson upper bound on the success
probability (the upper end of the two-sided 90 % interval):

* ``fails`` when p_hi < 1 − δ: the success probability is below 1 − δ at 95 % confidence;
* ``holds`` when p̂ >= 1 − δ;
* ``inconclusive`` otherwise (some draws fail, too few to reject), naming the failing draws.

A draw's normalised quantity (observed/bound) is summarised by its quantiles and the worst draw, so a bound
that holds with room, or only just, can be told apart. With one draw the rule can never reject: callers use two
or more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.status import Status
from derivations.errors import InvalidArgument
from numerics.statistics import clopper_pearson


@dataclass
class ProbabilityDecision:
    """The decision on one predicate at one δ (module docstring)."""

    status: Status
    successes: int
    draws: int
    delta: float
    p_hat: float
    p_upper: float
    failing: list = field(default_factory=list)
    quantiles: dict = field(default_factory=dict)
    worst: Any = None

    @property
    def summary(self) -> str:
        text = (f"{self.successes}/{self.draws} draws satisfy it (p̂ = {self.p_hat:.3f}, one-sided 95 % upper bound "
                f"{self.p_upper:.3f}, against 1 − δ = {1 - self.delta:g}): {self.status.value}")
        if self.quantiles:
            text += (f"; observed/bound median {self.quantiles['50%']:.3g}, 90 % {self.quantiles['90%']:.3g}, "
                     f"max {self.quantiles['max']:.3g}")
        if self.failing and self.status is not Status.HOLDS:
            text += f"; failing draws {self.failing[:5]}{' …' if len(self.failing) > 5 else ''}"
        return text

    def to_dict(self) -> dict:
        return {"status": self.status.value, "successes": self.successes, "draws": self.draws, "delta": self.delta,
                "p_hat": self.p_hat, "p_upper_one_sided_95": self.p_upper, "failing": self.failing[:50],
                "quantiles": self.quantiles, "worst": self.worst, "summary": self.summary}


def decide_probability(satisfied: Sequence[bool], delta: float, *, labels: Sequence[Any] | None = None,
                       normalised: Sequence[float] | None = None) -> ProbabilityDecision:
    """Rule 6 (module docstring) on the per-draw outcomes ``satisfied``; ``labels`` name the draws (seeds),
    ``normalised`` are their observed/bound ratios (reported)."""
    ok = np.asarray(satisfied, dtype=bool)
    if ok.ndim != 1 or ok.size == 0:
        raise InvalidArgument(f"satisfied must be a non-empty 1-D sequence of booleans; got shape {ok.shape}")
    if not 0 < delta < 1:
        raise InvalidArgument(f"delta={delta!r} must lie in (0, 1) (the allowed failure probability)")
    labels = list(range(ok.size)) if labels is None else list(labels)
    if len(labels) != ok.size:
        raise InvalidArgument(f"labels has {len(labels)} entries for {ok.size} draws")
    k, n = int(ok.sum()), int(ok.size)
    p_hat = k / n
    p_upper = float(clopper_pearson(k, n, level=0.90).upper)
    status = Status.FAILS if p_upper < 1 - delta else Status.HOLDS if p_hat >= 1 - delta else Status.INCONCLUSIVE
    quantiles, worst = {}, None
    if normalised is not None:
        r = np.asarray(normalised, dtype=float)
        if r.shape != ok.shape:
            raise InvalidArgument(f"normalised has shape {r.shape} for {ok.size} draws")
        quantiles = {"50%": float(np.quantile(r, 0.5)), "90%": float(np.quantile(r, 0.9)), "max": float(r.max())}
        worst = {"draw": labels[int(np.argmax(r))], "normalised": float(r.max())}
    return ProbabilityDecision(status, k, n, float(delta), p_hat, p_upper,
                               [labels[i] for i in np.flatnonzero(~ok)], quantiles, worst)
