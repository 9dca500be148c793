"""Claims and verdicts.

A :class:`Claim` is one executable statement of a paper (a closed form, a lemma, a theorem's
phase, a figure). Running it returns a :class:`Verdict`: a status computed by the check,
a one-line summary, structured evidence and a replay command.

Statuses
--------
holds
    The printed statement agrees with the computation (formula equal to its derivation,
    inequality satisfied at every sampled point, Θ-ratio inside a bounded band).
fails
    A claim is contradicted: a counterexample, or a drifting Θ-ratio.
differs
    A printed formula is not equal to what its definition gives; evidence holds the
    counterexample point, both values and the derived form.
certified
    Proven by interval (ball) arithmetic on the whole region.
outside-regime
    The claim's window or hypotheses are empty at the given parameters.
inconclusive
    Not decidable here (say why): budget, missing data set, statement lost in extraction.
"""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from derivations.domain import Domain
from derivations.errors import InternalError, InvalidArgument, NumericalTrouble

STATUSES = ("holds", "fails", "differs", "certified", "outside-regime", "inconclusive")
BUDGETS = ("quick", "full")


@dataclass
class Outcome:
    """What a check computes: the status, a one-line summary, evidence and figure paths."""

    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise InternalError(f"status {self.status!r} is not one of {STATUSES}; this is a bug")


@dataclass
class Verdict:
    """The record of one claim run: status, summary, evidence, parameters and how to replay it."""

    claim_id: str
    label: str
    status: str
    summary: str
    evidence: dict[str, Any]
    params: dict[str, Any]
    budget: str
    seed: int
    replay: str
    elapsed: float
    figures: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON record (schema in README.md)."""
        return {
            "id": self.claim_id,
            "label": self.label,
            "status": self.status,
            "summary": self.summary,
            "evidence": _jsonable(self.evidence),
            "params": _jsonable(self.params),
            "budget": self.budget,
            "seed": self.seed,
            "replay": self.replay,
            "elapsed_s": round(self.elapsed, 3),
            "figures": self.figures,
        }


@dataclass
class Context:
    """What a check receives: validated parameters (by name), the budget, the seed, where figures go.

    ``artifacts`` is the directory for the claim's figures (``figure_path``); by default
    ``<cache>/figures/<claim id>``, and the report copies what the verdict lists.
    """

    params: dict[str, Any]
    budget: str
    seed: int
    workers: int | None = None
    claim_id: str = "claim"
    artifacts: Path | None = None
    progress: Callable[[float, str], None] | None = None

    @property
    def quick(self) -> bool:
        """True at the quick budget."""
        return self.budget == "quick"

    def figure_path(self, name: str) -> Path:
        """The path to save figure ``name`` (e.g. ``"losses.png"``) of this claim; the directory exists."""
        if "/" in name or not name:
            raise InvalidArgument(f"figure name {name!r} must be a plain file name such as 'losses.png'")
        if self.artifacts is None:
            from numerics import cache_root

            self.artifacts = cache_root() / "figures" / self.claim_id.replace("/", "_")
        self.artifacts.mkdir(parents=True, exist_ok=True)
        return self.artifacts / name

    def report_progress(self, fraction: float, message: str = "") -> None:
        """Tell the CLI how far a long check is (0 ≤ fraction ≤ 1); a no-op when nobody listens."""
        if self.progress is not None:
            self.progress(min(max(fraction, 0.0), 1.0), message)


@dataclass
class Claim:
    """One executable statement of a paper.

    Parameters
    ----------
    id
        ``ih.cf.L_IH2``, ``ih.thm4.phase2`` …
    paper
        The paper's prefix (``ih``).
    label
        The paper's label ("Eq. (10)"); ``label_alt`` the label in the other version.
    kind
        ``formula`` (an ``*.cf.*`` closed form), ``derive`` (derive-and-verify), ``claim``,
        ``figure`` or ``experiment``.
    statement
        The statement as printed (LaTeX or text).
    defaults
        Default parameters, by name; ``domain`` validates overrides.
    check
        ``check(ctx) -> Outcome``.
    """

    id: str
    paper: str
    label: str
    kind: str
    check: Callable[[Context], Outcome]
    statement: str = ""
    label_alt: str = ""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    domain: Domain | None = None
    requires: tuple[str, ...] = ()
    formulas: tuple = ()
    doc: str = ""
    #: rough relative run time at the quick budget, so that parallel runs start the long claims first
    cost: float = 1.0

    def resolve_params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """Merge ``overrides`` into the defaults and validate them against the domain."""
        params = dict(self.defaults)
        unknown = set(overrides) - set(params)
        if unknown:
            from derivations.errors import unknown_name

            raise unknown_name(f"parameter of {self.id}", sorted(unknown)[0], params)
        params.update(overrides)
        if self.domain is not None:
            # None means "not pinned: sampled over the domain"
            known = {n: v for n, v in params.items() if n in self.domain.names() and v is not None}
            self.domain.validate(known, context=self.id)
        return params

    def run(
        self,
        overrides: Mapping[str, Any] | None = None,
        *,
        budget: str = "quick",
        seed: int = 0,
        workers: int | None = None,
        artifacts: Path | None = None,
        progress: Callable[[float, str], None] | None = None,
    ) -> Verdict:
        """Run the check and return its verdict (timing, parameters and replay command included)."""
        if budget not in BUDGETS:
            raise InvalidArgument(f"budget={budget!r} is not one of {', '.join(BUDGETS)}")
        overrides = dict(overrides or {})
        params = self.resolve_params(overrides)
        start = time.perf_counter()
        try:
            outcome = self.check(Context(params, budget, seed, workers, self.id, artifacts, progress))
        except NumericalTrouble as trouble:
            # NaN, overflow, stiffness or an infinite variance: not a bug and not a verdict on the paper
            outcome = Outcome("inconclusive", f"numerical trouble: {trouble}", {"numerical_trouble": str(trouble)})
        if not isinstance(outcome, Outcome):
            raise InternalError(f"{self.id}: check returned {type(outcome).__name__}, not Outcome; this is a bug")
        return Verdict(
            claim_id=self.id,
            label=self.label,
            status=outcome.status,
            summary=outcome.summary,
            evidence=outcome.evidence,
            params=params,
            budget=budget,
            seed=seed,
            replay=replay_command(self.id, overrides, budget, seed),
            elapsed=time.perf_counter() - start,
            figures=outcome.figures,
        )

    def describe(self) -> dict[str, Any]:
        """Return the listing record (``tdcheck list --json``)."""
        return {
            "id": self.id,
            "paper": self.paper,
            "kind": self.kind,
            "label": self.label,
            "label_alt": self.label_alt,
            "params": _jsonable(dict(self.defaults)),
            "requires": list(self.requires),
        }


def replay_command(claim_id: str, overrides: Mapping[str, Any], budget: str, seed: int) -> str:
    """Return the one-line command that reproduces a verdict."""
    parts = ["tdcheck", "run", claim_id]
    for name, value in overrides.items():
        parts += ["--param", f"{name}={value}"]
    if budget != "quick":
        parts += ["--budget", budget]
    parts += ["--seed", str(seed)]
    return " ".join(shlex.quote(p) for p in parts)


def _jsonable(value: Any) -> Any:
    """Convert evidence (NumPy scalars and arrays, SymPy numbers, tuples) into JSON types."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    if isinstance(value, (str, int, float, bool)) or value is None:
        if isinstance(value, float) and value != value:
            return "nan"
        if isinstance(value, float) and value in (float("inf"), float("-inf")):
            return str(value)
        return value
    try:
        json.dumps(value)
        return value
    except TypeError:
        return str(value)
