"""The one trajectory type: an ODE solution or an optimiser run, as times, named states, observables, events.

A :class:`Trajectory` holds

``t``
    the saved times, increasing (ODE time; for an optimiser, the time η·k of step k, with the
    step numbers in ``steps``);
``states``
    name → array whose first axis runs along ``t`` (a scalar parameter is shape (n,), a matrix
    block (n, a, b));
``observables``
    name → (n,) array of quantities computed along the run (losses, norms, margins); a standard
    error, when the observable is an estimate, is stored under ``"<name>_se"``;
``events``
    name → hitting time (NaN: not reached within the run), with the state there in
    ``event_states`` (name → {state name: value});
``meta``
    the configuration, the reading (flag values), the solver or optimiser and its tolerances,
    the seed, work counters: everything that determines the run, for the evidence.

The check kinds of ``checks`` (inequalities along a run, hitting times, scaling) are written once
against this type, for flows and maps alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument


@dataclass(frozen=True, eq=False)
class Trajectory:
    """Times, named states, named observables and events of one run (module docstring)."""

    t: np.ndarray
    states: Mapping[str, np.ndarray] = field(default_factory=dict)
    observables: Mapping[str, np.ndarray] = field(default_factory=dict)
    events: Mapping[str, float] = field(default_factory=dict)
    event_states: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)
    steps: np.ndarray | None = None

    def __post_init__(self):
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1:
            raise InvalidArgument(f"t has shape {t.shape}; a trajectory's times are one-dimensional")
        if t.size > 1 and not np.all(np.diff(t) >= 0):
            k = int(np.argmin(np.diff(t)))
            raise InvalidArgument(f"t must be non-decreasing; t[{k}]={t[k]!r} > t[{k + 1}]={t[k + 1]!r}")
        object.__setattr__(self, "t", t)
        for kind in ("states", "observables"):
            columns = {name: np.asarray(v) for name, v in getattr(self, kind).items()}
            for name, v in columns.items():
                if v.shape[:1] != t.shape:
                    raise InvalidArgument(f"{kind[:-1]} {name!r} has {v.shape[:1] or 'no'} rows but the "
                                          f"trajectory has {t.size} times; give one row per saved time")
            clash = set(columns) & set(self.states if kind == "observables" else ())
            if clash:
                raise InvalidArgument(f"{sorted(clash)} named both a state and an observable; rename one")
            object.__setattr__(self, kind, columns)
        if self.steps is not None:
            steps = np.asarray(self.steps)
            if steps.shape != t.shape:
                raise InvalidArgument(f"steps has shape {steps.shape} but t has {t.shape}")
            object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "events", {k: float(v) for k, v in self.events.items()})

    def __len__(self) -> int:
        return int(self.t.size)

    def __getitem__(self, name: str) -> np.ndarray:
        """A state or an observable by name."""
        if name in self.states:
            return self.states[name]
        if name in self.observables:
            return self.observables[name]
        from derivations.errors import unknown_name

        raise unknown_name("state or observable", name, [*self.states, *self.observables])

    def __contains__(self, name: str) -> bool:
        return name in self.states or name in self.observables

    def event(self, name: str) -> float:
        """A hitting time (NaN when it did not fire)."""
        if name not in self.events:
            from derivations.errors import unknown_name

            raise unknown_name("event", name, self.events)
        return self.events[name]

    def fired(self, name: str) -> bool:
        """True when event ``name`` fired within the run."""
        return math.isfinite(self.event(name))

    def window(self, start: float = -math.inf, end: float = math.inf, *, closed: bool = True) -> np.ndarray:
        """Mask of saved times in [start, end] (open interval with ``closed=False``).

        A NaN start (an event that did not fire) gives an empty window; a NaN end leaves the window
        open to the end of the run.
        """
        if math.isnan(start):
            return np.zeros(self.t.size, dtype=bool)
        end = math.inf if math.isnan(end) else end
        if closed:
            return (self.t >= start) & (self.t <= end)
        return (self.t > start) & (self.t < end)

    def row(self, index: int) -> dict[str, Any]:
        """Every state at saved index ``index`` (scalars as floats)."""
        return {name: (float(v[index]) if v.ndim == 1 else v[index]) for name, v in self.states.items()}

    def scalar_row(self, index: int) -> dict[str, float]:
        """The scalar states at saved index ``index`` (matrix blocks left out)."""
        return {name: float(v[index]) for name, v in self.states.items() if v.ndim == 1}

    def event_state(self, name: str) -> dict[str, float]:
        """``{"t": hitting time, **state there}`` for a fired event; empty when it did not fire."""
        time = self.event(name)
        if not math.isfinite(time):
            return {}
        return {"t": time, **self.event_states.get(name, {})}

    def with_observables(self, **columns: np.ndarray) -> Trajectory:
        """A copy with more observables (e.g. a bound evaluated along the run)."""
        return replace(self, observables={**self.observables, **columns})

    def with_meta(self, **entries: Any) -> Trajectory:
        """A copy with more metadata."""
        return replace(self, meta={**self.meta, **entries})

    def restrict(self, mask: np.ndarray) -> Trajectory:
        """The saved rows selected by ``mask`` (events and metadata kept)."""
        mask = np.asarray(mask, dtype=bool)
        return replace(
            self, t=self.t[mask], states={k: v[mask] for k, v in self.states.items()},
            observables={k: v[mask] for k, v in self.observables.items()},
            steps=None if self.steps is None else self.steps[mask],
        )

    @classmethod
    def from_solution(cls, solution, names: tuple[str, ...] | list[str], **kwargs) -> Trajectory:
        """A trajectory from a :class:`numerics.ode.Solution`, naming the state components ``names``."""
        y = np.asarray(solution.y)
        if y.shape[1] != len(names):
            raise InvalidArgument(f"names={list(names)} has {len(names)} entries for {y.shape[1]} state components")
        states = {name: np.ascontiguousarray(y[:, k]) for k, name in enumerate(names)}
        event_states = {
            name: ({n: float(v) for n, v in zip(names, solution.event_states[name], strict=True)}
                   if math.isfinite(time) else {})
            for name, time in solution.event_times.items()
        }
        meta = {"n_steps": solution.n_steps, "n_rejected": solution.n_rejected, "n_rhs": solution.n_rhs,
                "status": solution.status, **kwargs.pop("meta", {})}
        return cls(solution.t, states, events=solution.event_times, event_states=event_states, meta=meta, **kwargs)

    def summary(self) -> dict[str, Any]:
        """A plain-data record for evidence: size, span, events, metadata (no arrays)."""
        return {
            "n_saved": len(self),
            "t_span": [float(self.t[0]), float(self.t[-1])] if len(self) else [],
            "events": {k: (v if math.isfinite(v) else None) for k, v in self.events.items()},
            "states": list(self.states), "observables": list(self.observables),
            **{k: v for k, v in self.meta.items() if not isinstance(v, np.ndarray)},
        }
