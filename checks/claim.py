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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.status import STATUSES, Status
from derivations.domain import Domain
from derivations.errors import InternalError, InvalidArgument, NumericalTrouble

BUDGETS = ("quick", "full")
#: prerequisite states that are always broken: its check crashed, or it did not run on a broken base
CRASHED, NOT_RUN = "crashed", "not-run"


@dataclass(frozen=True)
class Param:
    """A declared parameter of a claim: its default, its grids per budget and, for a flag, its choices.

    ``default`` is the value used wherever the check needs one value (a Monte-Carlo point, a
    trajectory's configuration); ``None`` only for a symbol that the check samples over its domain
    and never uses as one value. ``quick``/``full`` are the values the check sweeps at each budget
    when it sweeps this parameter (empty: the default alone; ``full`` empty: the quick grid). A
    pinned value (``--param name=value``, 0 included) replaces the default and both grids.
    ``choices`` are the valid values of a reading flag (the first is the canonical one).
    """

    name: str
    default: Any = None
    quick: tuple = ()
    full: tuple = ()
    choices: tuple = ()
    doc: str = ""

    def __post_init__(self):
        object.__setattr__(self, "quick", tuple(self.quick))
        object.__setattr__(self, "full", tuple(self.full))
        object.__setattr__(self, "choices", tuple(self.choices))
        if self.choices:
            bad = [v for v in (self.default, *self.quick, *self.full) if v is not None and v not in self.choices]
            if bad:
                raise InternalError(f"parameter {self.name}: {bad[0]!r} is not one of its choices "
                                    f"{self.choices}; this is a bug")

    def grid(self, budget: str) -> list:
        """The values swept at ``budget`` (unpinned)."""
        values = self.full if budget == "full" and self.full else self.quick
        return list(values) if values else [self.default]

    def describe(self) -> dict[str, Any]:
        """The listing record of ``tdcheck list --json``."""
        out: dict[str, Any] = {"default": self.default}
        if self.quick:
            out["quick"] = list(self.quick)
        if self.full:
            out["full"] = list(self.full)
        if self.choices:
            out["choices"] = list(self.choices)
        if self.doc:
            out["doc"] = self.doc
        if self.default is None:
            out["sampled"] = True
        return out


def params_from(*specs: Param | str) -> tuple[Param, ...]:
    """Parameters from :class:`Param` objects or bare names (a bare name: sampled over the domain)."""
    return tuple(s if isinstance(s, Param) else Param(s) for s in specs)


@dataclass
class Outcome:
    """What a check computes: the status, a one-line summary, evidence and figure paths."""

    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)

    def __post_init__(self):
        from checks.status import status

        self.status = status(self.status).value


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
    #: names of the parameters the user pinned (the others are the declared defaults)
    pinned: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        """The claim's id."""
        return self.claim_id

    def _repr_html_(self) -> str:
        """The verdict as HTML (Jupyter)."""
        from checks.report_html import verdict_html

        return verdict_html(self)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Verdict:
        """The verdict of a JSON record written by :meth:`to_dict` (evidence as JSON types)."""
        return cls(record["id"], record["label"], record["status"], record["summary"], dict(record["evidence"]),
                   dict(record["params"]), record["budget"], record["seed"], record["replay"],
                   float(record["elapsed_s"]), list(record.get("figures", [])), list(record.get("pinned", [])))

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON record (schema in README.md)."""
        return {
            "id": self.claim_id,
            "label": self.label,
            "status": self.status,
            "summary": self.summary,
            "evidence": _jsonable(self.evidence),
            "params": _jsonable(self.params),
            "pinned": list(self.pinned),
            "budget": self.budget,
            "seed": self.seed,
            "replay": self.replay,
            "elapsed_s": round(self.elapsed, 3),
            "figures": self.figures,
        }


@dataclass
class Context:
    """What a check receives: its declared parameters, the pinned values, the budget, the seed, where figures go.

    A check reads a parameter with :meth:`value` (the pinned value, else the declared default) and a
    swept axis with :meth:`grid` (the pinned value alone, else the budget's grid); :meth:`is_pinned`
    tells whether the user fixed it. ``params`` is the resolved mapping (every declared name).
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
    #: the values the user pinned (a subset of ``params``)
    pinned: dict[str, Any] = field(default_factory=dict)
    #: the declared parameters, by name
    declared: Mapping[str, Param] = field(default_factory=dict)

    @property
    def quick(self) -> bool:
        """True at the quick budget."""
        return self.budget == "quick"

    def _param(self, name: str) -> Param:
        try:
            return self.declared[name]
        except KeyError:
            raise InternalError(f"{self.claim_id} reads parameter {name!r}, which it does not declare "
                                f"(declared: {', '.join(self.declared) or 'none'}); this is a bug") from None

    def is_pinned(self, name: str) -> bool:
        """True when the user pinned ``name``."""
        self._param(name)
        return name in self.pinned

    def value(self, name: str) -> Any:
        """The pinned value of ``name``, else its declared default."""
        param = self._param(name)
        return self.pinned[name] if name in self.pinned else param.default

    def grid(self, name: str, values: Iterable | None = None) -> list:
        """The values of ``name`` to sweep: the pinned value alone, else the budget's declared grid.

        ``values`` replaces the declared grid for a second sweep inside a check (its own axis); a
        pin still replaces it.
        """
        param = self._param(name)
        if name in self.pinned:
            return [self.pinned[name]]
        return list(values) if values is not None else param.grid(self.budget)

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
    check
        ``check(ctx) -> Outcome``.
    statement
        The statement as printed (LaTeX or text).
    params
        The declared parameters (:class:`Param`); ``domain`` validates pinned numeric values and
        each flag's ``choices`` its pinned word.
    requires
        Ids of the claims this one builds on. A prerequisite that crashes, or whose status is in
        ``broken_by``, makes this claim ``inconclusive`` without running (the runner orders them).
    """

    id: str
    paper: str
    label: str
    kind: str
    check: Callable[[Context], Outcome]
    statement: str = ""
    label_alt: str = ""
    params: tuple[Param, ...] = ()
    domain: Domain | None = None
    requires: tuple[str, ...] = ()
    #: prerequisite statuses that leave this claim without a base (``fails``: a contradicted derivation
    #: or claim; ``differs`` is a printed form, which checks replace by the derivation)
    broken_by: tuple[str, ...] = (Status.FAILS.value,)
    formulas: tuple = ()
    doc: str = ""
    #: rough relative run time at the quick budget, so that parallel runs start the long claims first
    cost: float = 1.0
    def __post_init__(self):
        self.params = params_from(*self.params)
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise InternalError(f"{self.id} declares a parameter twice: {names}; this is a bug")
        self.requires = tuple(self.requires)
        self.broken_by = tuple(Status(s).value for s in self.broken_by)

    @property
    def declared(self) -> dict[str, Param]:
        """The declared parameters by name."""
        return {p.name: p for p in self.params}

    @property
    def defaults(self) -> dict[str, Any]:
        """Default value of every declared parameter (None: sampled over the domain)."""
        return {p.name: p.default for p in self.params}

    def resolve_params(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``overrides`` and return every declared parameter's value (pinned, else default)."""
        declared = self.declared
        unknown = set(overrides) - set(declared)
        if unknown:
            from derivations.errors import unknown_name

            raise unknown_name(f"parameter of {self.id}", sorted(unknown)[0], declared)
        for name, value in overrides.items():
            choices = declared[name].choices
            if choices and value not in choices:
                raise InvalidArgument(f"{name}={value!r} in {self.id} is not one of its readings: "
                                      f"{', '.join(map(str, choices))} (canonical: {choices[0]})")
        if self.domain is not None:
            known = {n: v for n, v in overrides.items() if n in self.domain.names()}
            self.domain.validate(known, context=self.id)
        return {**self.defaults, **overrides}

    def context(self, overrides: Mapping[str, Any] | None = None, *, budget: str = "quick", seed: int = 0,
                workers: int | None = None, artifacts: Path | None = None,
                progress: Callable[[float, str], None] | None = None) -> Context:
        """The :class:`Context` a check of this claim receives for ``overrides`` (validated)."""
        if budget not in BUDGETS:
            raise InvalidArgument(f"budget={budget!r} is not one of {', '.join(BUDGETS)}")
        overrides = dict(overrides or {})
        params = self.resolve_params(overrides)
        return Context(params, budget, seed, workers, self.id, artifacts, progress, pinned=overrides,
                       declared=self.declared)

    def run(
        self,
        overrides: Mapping[str, Any] | None = None,
        *,
        budget: str = "quick",
        seed: int = 0,
        workers: int | None = None,
        artifacts: Path | None = None,
        progress: Callable[[float, str], None] | None = None,
        prerequisites: Mapping[str, str] | None = None,
    ) -> Verdict:
        """Run the check and return its verdict (timing, parameters and replay command included).

        ``prerequisites`` maps the id of each claim in ``requires`` that has run to its status, or to
        ``"crashed"``/``"not-run"``; a broken one (those two, or a status in ``broken_by``) gives an
        ``inconclusive`` verdict saying so, and the runner passes ``"not-run"`` on to its dependents.
        """
        overrides = dict(overrides or {})
        ctx = self.context(overrides, budget=budget, seed=seed, workers=workers, artifacts=artifacts,
                           progress=progress)
        start = time.perf_counter()
        broken = {cid: st for cid, st in (prerequisites or {}).items()
                  if cid in self.requires and (st in (CRASHED, NOT_RUN) or st in self.broken_by)}
        if broken:
            text = "; ".join(f"{cid} {st}" for cid, st in broken.items())
            outcome = Outcome(Status.INCONCLUSIVE, f"not run: a prerequisite is broken ({text})",
                              {"broken_prerequisites": broken, "requires": list(self.requires)})
        else:
            try:
                outcome = self.check(ctx)
            except NumericalTrouble as trouble:
                # NaN, overflow, stiffness or an infinite variance: not a bug and not a verdict on the paper
                outcome = Outcome(Status.INCONCLUSIVE, f"numerical trouble: {trouble}",
                                  {"numerical_trouble": str(trouble)})
        if not isinstance(outcome, Outcome):
            raise InternalError(f"{self.id}: check returned {type(outcome).__name__}, not Outcome; this is a bug")
        return Verdict(
            claim_id=self.id,
            label=self.label,
            status=outcome.status,
            summary=outcome.summary,
            evidence=outcome.evidence,
            params=ctx.params,
            budget=budget,
            seed=seed,
            replay=replay_command(self.id, overrides, budget, seed),
            elapsed=time.perf_counter() - start,
            figures=outcome.figures,
            pinned=sorted(overrides),
        )

    def describe(self) -> dict[str, Any]:
        """Return the listing record (``tdcheck list --json``)."""
        return {
            "id": self.id,
            "paper": self.paper,
            "kind": self.kind,
            "label": self.label,
            "label_alt": self.label_alt,
            "params": _jsonable(self.defaults),
            "declared": _jsonable({p.name: p.describe() for p in self.params}),
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
