"""The one training driver: every optimiser run of tdcheck goes through :func:`train`.

::

    from numerics.train import LogSchedule, ParamGroup, Schedule, train
    from numerics.optim import Adam, GD, Momentum, SGD

    traj = train(theta0, gradient, steps=20_000, optimizer=GD(),
                 groups=[ParamGroup("W", slice(0, 9), Schedule.phases([(k, eta * lam), (None, eta)])),
                         ParamGroup("v", slice(9, 12), Schedule.phases([(k, 0.0), (None, eta)])),
                         ParamGroup("u", 12, eta, sign=-1)],            # ascent on u
                 log=LogSchedule(geometric=200, at=[k]),
                 observers={"loss": full_loss, "margin": margin})

* ``gradient(theta, batch)`` returns ∇L(θ) or ``(loss, ∇L(θ))`` (the loss is only checked for
  finiteness; what is logged comes from the observers). All groups are updated simultaneously from
  the same θ: one gradient of the whole vector, then one update.
* ``data``: None — full batch, ``batch`` is None and the run is the deterministic map
  θ ↦ θ − η∇L(θ); a callable ``draw(rng, step) -> batch`` — online SGD on fresh batches, with
  ``rng = np.random.default_rng(SeedSequence(seed))`` (pass a ``SeedSequence`` to use a spawned
  child), so one seed gives the same numbers bit for bit; any other object — the same batch at
  every step (full-batch GD on a fixed data set).
* A :class:`ParamGroup` names a block of the flat vector (an index, a slice, an index array or a
  boolean mask), its :class:`Schedule` of step sizes (piecewise constant per phase; rate 0
  freezes) and its direction (``sign`` +1 descent, −1 ascent with PyTorch's ``maximize``
  semantics). Coordinates outside every group are frozen. Groups may not overlap.
* The update rules (:mod:`numerics.optim`: ``GD``/``SGD``, ``Momentum``, ``Adam``) read one rate
  per coordinate, rebuilt only at phase switches.
* Time: t_k = Σ_{j<k} η_clock(j), the cumulative step size of the ``clock`` group (default: the
  first group); within a phase of rate r started at step s with time T, t_k = T + r·(k − s), so a
  single constant rate η gives t = η·k exactly. ``clock="steps"`` gives t = k.
* Logging (:class:`LogSchedule`: every k steps, n log-spaced steps, explicit steps; step 0 and the
  last step always): the named parameter blocks ``states`` (default: one per group; an integer
  index is a scalar state of shape (n,)) and the observers' values. An observer maps θ to a number
  (column ``name``), a pair (value, standard error) (columns ``name`` and ``name_se``) or a mapping
  of columns (the observer's name is then only a label).
* Compiled runs: when ``gradient`` is a :class:`CompiledGradient` (a numba kernel
  ``kernel(theta, grad, *args) -> loss`` and its extra arguments), ``data`` is None and the
  optimiser is ``GD``, ``SGD``, ``Momentum`` or ``Adam``, the steps between two events (a logged
  step, a phase switch) run inside one numba loop that calls the same kernels in the same order:
  the iterates, the trajectory, the record and the errors are those of the Python loop, bit for
  bit, and only ``meta["loop"]`` ("compiled" / "python") tells them apart. From
  :data:`PARALLEL_SIZE` coordinates the loop applies the update rule in parts, one per numba
  thread (the rules act coordinate by coordinate: the same bits). Any other optimiser runs the
  Python loop, which calls the kernel once per step.
* Failure: a non-finite parameter (checked after every update by the kernels), a non-finite loss
  returned by ``gradient`` or a non-finite observable raises
  :class:`~derivations.errors.NumericalTrouble` naming the step, the parameter block and the rate.
  Bad settings raise :class:`~derivations.errors.InvalidArgument` before any step is taken.

The result is a :class:`numerics.trajectory.Trajectory`: ``t``, ``steps``, ``states``,
``observables``; ``meta`` holds the optimiser, the groups and their schedules, the clock, the
logging schedule, the data source, the seed, the loop that ran, the wall time and the final
parameter vector (``meta["theta"]``), plus the caller's own ``meta`` entries.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import get_num_threads, njit, prange
from numba.core.dispatcher import Dispatcher
from numba.core.errors import TypingError

from derivations.errors import InvalidArgument, NumericalTrouble, unknown_name
from numerics._jit import parallel_jit
from numerics.optim import (
    GD,
    SGD,
    AbstractOptimizer,
    Adam,
    Momentum,
    adam_update,
    gd_update,
    momentum_update,
    optimizer_named,
)
from numerics.trajectory import Trajectory


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {minimum}")
    return int(value)


# ----------------------------------------------------------------------------------------------
# Step-size schedules and parameter groups


@dataclass(frozen=True)
class Schedule:
    """Piecewise-constant step sizes: phases ``(n_steps, rate)``, the last may be open (``None``).

    ``Schedule.phases([(k, eta * lam), (None, eta)])``: ηλ for steps 0..k−1, then η;
    ``Schedule.constant(eta)``: η throughout. A rate is finite and >= 0; 0 freezes.
    """

    segments: tuple[tuple[int | None, float], ...]

    def __post_init__(self):
        segments = tuple(tuple(s) for s in self.segments)
        if not segments:
            raise InvalidArgument("schedule=() has no phase; give at least one (n_steps, rate)")
        clean = []
        for j, segment in enumerate(segments):
            if len(segment) != 2:
                raise InvalidArgument(f"phase {j}={segment!r} must be a pair (n_steps, rate)")
            n, rate = segment
            if n is None:
                if j != len(segments) - 1:
                    raise InvalidArgument(
                        f"phase {j} has n_steps=None but is not the last; only the last "
                        "phase may be open-ended"
                    )
            else:
                n = _count(f"n_steps of phase {j}", n, 1)
            if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
                raise InvalidArgument(f"rate={rate!r} of phase {j} must be a real number")
            rate = float(rate)
            if not (math.isfinite(rate) and rate >= 0):
                raise InvalidArgument(
                    f"rate={rate!r} of phase {j} must be finite and >= 0 (0 freezes); "
                    "for gradient ascent give the group sign=-1"
                )
            clean.append((n, rate))
        object.__setattr__(self, "segments", tuple(clean))

    @classmethod
    def constant(cls, rate: float) -> Schedule:
        """One rate for every step."""
        return cls(((None, rate),))

    @classmethod
    def phases(cls, phases: Sequence[tuple[int | None, float]]) -> Schedule:
        """Phases ``[(n_steps, rate), ..., (None, rate)]`` in order."""
        return cls(tuple(phases))

    @property
    def starts(self) -> tuple[int, ...]:
        """The first step of each phase."""
        out, k = [], 0
        for n, _ in self.segments:
            out.append(k)
            k += n or 0
        return tuple(out)

    @property
    def length(self) -> int | None:
        """Steps covered (None: open-ended)."""
        if self.segments[-1][0] is None:
            return None
        return sum(n for n, _ in self.segments)

    def rate(self, step: int) -> float:
        """The rate of step ``step`` (0-based: the update from θ_step to θ_{step+1})."""
        j = int(np.searchsorted(self.starts, step, side="right")) - 1
        return self.segments[j][1]

    def times(self, steps) -> np.ndarray:
        """t_k = Σ_{j<k} rate(j) at the steps ``steps``, phase by phase as T + r·(k − s)."""
        steps = np.asarray(steps)
        starts = np.asarray(self.starts)
        rates = np.array([r for _, r in self.segments])
        begin = np.zeros(len(starts))  # time at the start of each phase
        for j in range(1, len(starts)):
            begin[j] = begin[j - 1] + rates[j - 1] * (starts[j] - starts[j - 1])
        j = np.searchsorted(starts, steps, side="right") - 1
        return begin[j] + rates[j] * (steps - starts[j])

    def info(self) -> list:
        """Plain-data form: [[n_steps or None, rate], ...]."""
        return [[n, r] for n, r in self.segments]


def _as_schedule(value) -> Schedule:
    if isinstance(value, Schedule):
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return Schedule.constant(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return Schedule.phases(value)
    raise InvalidArgument(f"schedule={value!r} must be a Schedule, a rate, or phases [(n_steps, rate), ...]")


@dataclass(frozen=True, eq=False)
class ParamGroup:
    """A named block of the flat parameter vector with its own step sizes and direction.

    ``index``: an int (a scalar parameter), a slice, an array of indices or a boolean mask;
    ``schedule``: a :class:`Schedule`, a constant rate, or a list of phases; ``sign``: +1 for
    descent, −1 for ascent (PyTorch's ``maximize``: the gradient is negated before weight decay).
    """

    name: str
    index: Any
    schedule: Schedule | float | Sequence
    sign: int = 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise InvalidArgument(f"name={self.name!r} of a parameter group must be a non-empty string")
        try:
            object.__setattr__(self, "schedule", _as_schedule(self.schedule))
        except InvalidArgument as error:
            raise InvalidArgument(f"group {self.name!r}: {error}") from None
        if self.sign not in (1, -1):
            raise InvalidArgument(
                f"sign={self.sign!r} of group {self.name!r} must be +1 (descent) or -1 (ascent)"
            )

    def indices(self, size: int) -> np.ndarray:
        """The coordinates of this group in a vector of length ``size`` (validated).

        A non-empty slice needs no check (its coordinates are distinct and inside the vector), and
        only an index array can repeat a coordinate: θ of 10⁵ coordinates costs no full pass here.
        """
        index = self.index
        listed = False  # an index array
        if isinstance(index, slice):
            out = np.arange(*index.indices(size))
            if out.size:
                return out
        else:
            arr = np.asarray(index)
            if arr.dtype == bool:
                if arr.shape != (size,):
                    raise InvalidArgument(
                        f"group {self.name!r}: a boolean mask has shape {arr.shape}, "
                        f"the parameter vector ({size},)"
                    )
                out = np.flatnonzero(arr)
            elif arr.ndim <= 1 and np.issubdtype(arr.dtype, np.integer):
                out = arr.reshape(-1).astype(np.int64)
                listed = True
            else:
                raise InvalidArgument(
                    f"index={index!r} of group {self.name!r} must be an int, a slice, "
                    "an index array or a boolean mask"
                )
        if out.size == 0:
            raise InvalidArgument(
                f"group {self.name!r} is empty (index={index!r} selects no coordinate of "
                f"a vector of length {size})"
            )
        if out.min() < -size or out.max() >= size:
            raise InvalidArgument(f"group {self.name!r}: index={index!r} is outside 0..{size - 1}")
        out = np.where(out < 0, out + size, out)
        if listed and np.bincount(out, minlength=size).max() > 1:
            raise InvalidArgument(f"group {self.name!r}: index={index!r} repeats a coordinate")
        return out

    @property
    def scalar(self) -> bool:
        """True when the group is one scalar parameter (an int index)."""
        return isinstance(self.index, numbers.Integral) and not isinstance(self.index, bool)


# ----------------------------------------------------------------------------------------------
# Logging


@dataclass(frozen=True)
class LogSchedule:
    """The steps at which θ and the observables are recorded; step 0 and the last always are.

    ``every=k``: multiples of k; ``geometric=n``: n steps log-spaced over 1..steps (rounded,
    duplicates merged); ``at``: explicit steps. Any combination: the union.
    """

    every: int | None = None
    geometric: int | None = None
    at: tuple[int, ...] = field(default=())

    def __post_init__(self):
        if self.every is not None:
            _count("every", self.every, 1)
        if self.geometric is not None:
            _count("geometric", self.geometric, 1)
        at = tuple(
            _count(f"at[{j}]", k, 0) for j, k in enumerate(np.atleast_1d(np.asarray(self.at, dtype=object)))
        )
        object.__setattr__(self, "at", at)

    def steps(self, total: int) -> np.ndarray:
        """The logged steps of a run of ``total`` steps, sorted and unique."""
        chosen = {0, total}
        if self.every is not None:
            chosen.update(range(0, total + 1, self.every))
        if self.geometric is not None and total >= 1:
            chosen.update(int(k) for k in np.rint(np.geomspace(1, total, self.geometric)))
        late = [k for k in self.at if k > total]
        if late:
            raise InvalidArgument(f"at={list(self.at)} asks for steps {late} beyond steps={total}")
        chosen.update(self.at)
        return np.array(sorted(chosen), dtype=np.int64)

    def info(self) -> dict:
        """Plain-data form."""
        return {"every": self.every, "geometric": self.geometric, "at": list(self.at)}


def _log_schedule(log) -> LogSchedule:
    if log is None:
        return LogSchedule(every=1)
    if isinstance(log, LogSchedule):
        return log
    if isinstance(log, numbers.Integral) and not isinstance(log, bool):
        return LogSchedule(every=log)
    if isinstance(log, Sequence | np.ndarray) and not isinstance(log, str):
        return LogSchedule(at=tuple(log))
    raise InvalidArgument(f"log={log!r} must be a LogSchedule, an int (every k steps) or a list of steps")


# ----------------------------------------------------------------------------------------------
# Compiled gradients and the compiled loop


@dataclass(frozen=True, eq=False)
class CompiledGradient:
    """A full-batch gradient that the driver can call from inside its own compiled loop.

    ``kernel``: a numba-compiled function (``numerics._jit.jit``) ``kernel(theta, grad, *args) ->
    loss`` that writes ∇L(θ) into every entry of ``grad`` (shape of θ; the buffer is reused from
    step to step, so the kernel overwrites, never accumulates), returns L(θ) as a float, and
    modifies nothing else; a non-finite result is its way to report trouble (kernels do not
    raise). ``args``: the extra arguments (arrays, numbers), passed unchanged at every step.

    Called as ``gradient(theta, batch=None) -> (loss, grad)`` it is also an ordinary gradient of
    the Python loop (a fresh zeroed ``grad`` per call).
    """

    kernel: Any
    args: tuple = ()

    def __post_init__(self):
        if not isinstance(self.kernel, Dispatcher):
            raise InvalidArgument(
                f"kernel={self.kernel!r} must be a numba-compiled function kernel(theta, grad, *args) "
                "-> loss (decorate it with numerics._jit.jit)"
            )
        if not isinstance(self.args, tuple):
            raise InvalidArgument(
                f"args={type(self.args).__name__} must be a tuple of the kernel's extra arguments"
            )

    @property
    def name(self) -> str:
        """The kernel's qualified name, for messages and records."""
        fn = self.kernel.py_func
        return f"{fn.__module__}.{fn.__qualname__}"

    def __call__(self, theta, batch=None) -> tuple[float, np.ndarray]:
        """(L(θ), ∇L(θ)) from one kernel call; ``batch`` must be None (the gradient is full-batch)."""
        if batch is not None:
            raise InvalidArgument(
                f"batch={type(batch).__name__} must be None: {self.name} is a full-batch gradient"
            )
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        grad = np.zeros(theta.shape)
        return float(self.kernel(theta, grad, *self.args)), grad


# The gradient kernel reaches the loop as an argument, so that one loop serves every kernel. numba
# keys a cached function on its argument types, and the type of a dispatcher argument is the
# dispatcher object of this process: an on-disk cache would gain an entry per process and never be
# hit. The loops are therefore compiled once per process and kernel (about half a second).
_loop_jit = njit(cache=False, error_model="numpy")  # a kernel argument defeats the disk cache (above)

#: θ sizes from which the compiled loop applies the update rule in parts, one per numba thread (below,
#: starting the threads costs more than the update); the rules act coordinate by coordinate, so the
#: parts change no bit, and the first non-finite index is the first over the parts. The part functions
#: take no kernel, so they stay in the disk cache; the loops pass them numba's current thread count.
PARALLEL_SIZE = 1 << 15


@parallel_jit
def _gd_parts(theta, grad, lr, sign, parts):
    """:func:`~numerics.optim.gd_update` (in ``parts`` parts when θ is large)."""
    n = theta.shape[0]
    if n < PARALLEL_SIZE:
        return gd_update(theta, grad, lr, sign)
    bad = np.full(parts, n)
    for p in prange(parts):
        lo, hi = p * n // parts, (p + 1) * n // parts
        b = gd_update(theta[lo:hi], grad[lo:hi], lr[lo:hi], sign[lo:hi])
        if b >= 0:
            bad[p] = lo + b
    first = bad.min()
    return first if first < n else -1


@parallel_jit
def _momentum_parts(theta, grad, lr, sign, buf, first, mu, dampening, nesterov, weight_decay, parts):
    """:func:`~numerics.optim.momentum_update` (in ``parts`` parts when θ is large)."""
    n = theta.shape[0]
    if n < PARALLEL_SIZE:
        return momentum_update(theta, grad, lr, sign, buf, first, mu, dampening, nesterov, weight_decay)
    bad = np.full(parts, n)
    for p in prange(parts):
        lo, hi = p * n // parts, (p + 1) * n // parts
        b = momentum_update(theta[lo:hi], grad[lo:hi], lr[lo:hi], sign[lo:hi], buf[lo:hi], first, mu,
                            dampening, nesterov, weight_decay)
        if b >= 0:
            bad[p] = lo + b
    first_bad = bad.min()
    return first_bad if first_bad < n else -1


@parallel_jit
def _adam_parts(theta, grad, lr, sign, m, v, step, beta1, beta2, eps, weight_decay, parts):
    """:func:`~numerics.optim.adam_update` (in ``parts`` parts when θ is large)."""
    n = theta.shape[0]
    if n < PARALLEL_SIZE:
        return adam_update(theta, grad, lr, sign, m, v, step, beta1, beta2, eps, weight_decay)
    bad = np.full(parts, n)
    for p in prange(parts):
        lo, hi = p * n // parts, (p + 1) * n // parts
        b = adam_update(theta[lo:hi], grad[lo:hi], lr[lo:hi], sign[lo:hi], m[lo:hi], v[lo:hi], step, beta1,
                        beta2, eps, weight_decay)
        if b >= 0:
            bad[p] = lo + b
    first = bad.min()
    return first if first < n else -1


# Each loop runs ``n`` steps and returns (j, code, index, loss): code 0 — all n steps done;
# 1 — the loss of step j is non-finite (θ is θ_j, not updated); 2 — update j made θ[index]
# non-finite (θ is θ_{j+1}). The update kernels are those of numerics.optim, called with the
# arguments the Python loop gives them (in parts when θ is large).


@_loop_jit
def _gd_steps(theta, grad, lr, sign, kernel, args, n):
    for j in range(n):
        loss = kernel(theta, grad, *args)
        if not math.isfinite(loss):
            return j, 1, -1, loss
        bad = _gd_parts(theta, grad, lr, sign, get_num_threads())
        if bad >= 0:
            return j, 2, bad, loss
    return n, 0, -1, 0.0


@_loop_jit
def _momentum_steps(theta, grad, lr, sign, kernel, args, n, done, buf, mu, dampening, nesterov, weight_decay):
    for j in range(n):
        loss = kernel(theta, grad, *args)
        if not math.isfinite(loss):
            return j, 1, -1, loss
        first = done + j == 0
        bad = _momentum_parts(theta, grad, lr, sign, buf, first, mu, dampening, nesterov, weight_decay,
                              get_num_threads())
        if bad >= 0:
            return j, 2, bad, loss
    return n, 0, -1, 0.0


@_loop_jit
def _adam_steps(theta, grad, lr, sign, kernel, args, n, done, m, v, beta1, beta2, eps, weight_decay):
    for j in range(n):
        loss = kernel(theta, grad, *args)
        if not math.isfinite(loss):
            return j, 1, -1, loss
        bad = _adam_parts(theta, grad, lr, sign, m, v, float(done + j + 1), beta1, beta2, eps, weight_decay,
                          get_num_threads())
        if bad >= 0:
            return j, 2, bad, loss
    return n, 0, -1, 0.0


class _CompiledLoop:
    """Runs the steps between two events of :func:`train` in one call of a compiled loop."""

    def __init__(self, gradient: CompiledGradient, opt: AbstractOptimizer, size: int):
        self.gradient, self.opt = gradient, opt
        self.grad = np.zeros(size)

    def run(self, n: int, theta, lr, sign, state) -> tuple[int, int, int, float]:
        """``n`` steps from the optimiser state ``state`` (advanced in place); see the loops' codes."""
        opt, kernel, args = self.opt, self.gradient.kernel, self.gradient.args
        common = (theta, self.grad, lr, sign, kernel, args, n)
        try:
            if isinstance(opt, Momentum):
                out = _momentum_steps(*common, state["t"], state["buf"], opt.mu, opt.dampening,
                                      bool(opt.nesterov), opt.weight_decay)
            elif isinstance(opt, Adam):
                beta1, beta2 = opt.betas
                out = _adam_steps(*common, state["t"], state["m"], state["v"], beta1, beta2, opt.eps,
                                  opt.weight_decay)
            else:
                out = _gd_steps(*common)
        except TypingError as error:
            types = ", ".join(type(a).__name__ for a in args)
            first = str(error).strip().splitlines()[0]
            raise InvalidArgument(
                f"kernel {self.gradient.name} cannot be called as kernel(theta, grad, *args) with "
                f"args of types ({types}) and return a float loss: {first}"
            ) from None
        j, code, bad, loss = (int(out[0]), int(out[1]), int(out[2]), float(out[3]))
        state["t"] += j + (code == 2)  # updates applied, as the Python loop counts them
        return j, code, bad, loss


def _compiled_loop(gradient, opt: AbstractOptimizer, data, size: int) -> _CompiledLoop | None:
    """Return the compiled loop for a :class:`CompiledGradient` and a known rule (None: the Python loop)."""
    if not isinstance(gradient, CompiledGradient):
        return None
    if data is not None:
        raise InvalidArgument(
            f"data={type(data).__name__} must be None with a CompiledGradient ({gradient.name} "
            "computes the full-batch gradient and takes no batch)"
        )
    if type(opt) not in (GD, SGD, Momentum, Adam):
        return None  # a rule the compiled loop does not know: the Python loop calls the kernel
    return _CompiledLoop(gradient, opt, size)


# ----------------------------------------------------------------------------------------------
# Validation helpers of the driver


def _theta(theta0) -> np.ndarray:
    theta = np.array(theta0, dtype=np.float64)  # a copy: the driver owns its θ
    if theta.ndim != 1 or theta.size == 0:
        raise InvalidArgument(f"theta0 has shape {theta.shape}; the driver trains one flat, non-empty vector")
    bad = np.flatnonzero(~np.isfinite(theta))
    if bad.size:
        raise InvalidArgument(
            f"theta0 is non-finite at indices {bad[:10].tolist()}; start from finite values"
        )
    return theta


def _optimizer(optimizer) -> AbstractOptimizer:
    if isinstance(optimizer, str):
        return optimizer_named(optimizer)
    if not isinstance(optimizer, AbstractOptimizer):
        raise InvalidArgument(
            f"optimizer={optimizer!r} is not an optimiser; give GD(), SGD(), Momentum(mu), "
            "Adam(...) from numerics.optim, or one of the names gd, sgd, adam"
        )
    return optimizer


def _selector(group: ParamGroup, idx: np.ndarray):
    """The group's coordinates for bulk reads and writes: its slice when it was given one (basic indexing,
    no pass over an index array: ≈ 0.1 ms saved per use at 50 000 coordinates), else ``idx``."""
    return group.index if isinstance(group.index, slice) else idx


def _owner(pairs, i: int) -> ParamGroup:
    """The group of coordinate i (which some group of ``pairs`` holds)."""
    return next(group for group, idx in pairs if i in idx)


def _groups(groups, size: int, steps: int) -> list[tuple[ParamGroup, np.ndarray]]:
    if isinstance(groups, ParamGroup):
        groups = [groups]
    groups = list(groups)
    if not groups:
        raise InvalidArgument("groups=[] trains nothing; give at least one ParamGroup")
    out, taken = [], np.zeros(size, dtype=bool)
    for j, group in enumerate(groups):
        if not isinstance(group, ParamGroup):
            raise InvalidArgument(f"groups[{j}]={group!r} is not a ParamGroup")
        if any(group.name == g.name for g, _ in out):
            raise InvalidArgument(f"group name {group.name!r} is used twice; names identify groups")
        idx = group.indices(size)
        clash = taken[_selector(group, idx)]
        if clash.any():
            first = int(idx[np.argmax(clash)])
            raise InvalidArgument(
                f"groups {_owner(out, first).name!r} and {group.name!r} overlap at "
                f"theta[{first}]; a coordinate belongs to at most one group"
            )
        taken[_selector(group, idx)] = True
        length = group.schedule.length
        if length is not None and length < steps:
            raise InvalidArgument(
                f"the schedule of group {group.name!r} covers {length} steps but steps={steps}; "
                "end it with an open phase (None, rate)"
            )
        out.append((group, idx))
    return out


def _blocks(states, groups, size: int) -> dict[str, tuple[Any, tuple[int, ...]]]:
    """name → (index into θ, shape of one row) for every recorded state."""
    if states is None:
        return {
            g.name: ((int(idx[0]), ()) if g.scalar else (_selector(g, idx), (idx.size,))) for g, idx in groups
        }
    out = {}
    for name, spec in states.items():
        pair = isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], tuple)
        index, shape = spec if pair else (spec, None)
        if isinstance(index, numbers.Integral) and not isinstance(index, bool):
            if not -size <= index < size:
                raise InvalidArgument(f"state {name!r}: index={index} is outside 0..{size - 1}")
            out[name] = (int(index) % size, ())
            continue
        idx = ParamGroup(name, index, 0.0).indices(size)
        shape = (idx.size,) if shape is None else tuple(shape)
        if math.prod(shape) != idx.size:
            raise InvalidArgument(f"state {name!r}: shape={shape} does not hold its {idx.size} coordinates")
        out[name] = (idx, shape)
    return out


def _data(data, seed):
    if isinstance(seed, np.random.SeedSequence):
        sequence = seed
    elif seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0):
        sequence = np.random.SeedSequence(seed)
    else:
        raise InvalidArgument(f"seed={seed!r} must be a non-negative integer, a SeedSequence or None")
    seed_info = (
        int(seed)
        if isinstance(seed, numbers.Integral)
        else {"entropy": sequence.entropy, "spawn_key": list(sequence.spawn_key)}
    )
    if data is None:
        return (lambda rng, step: None), None, seed_info, "full-batch"
    if callable(data):
        return data, np.random.default_rng(sequence), seed_info, "online"
    return (lambda rng, step: data), None, seed_info, "fixed"


def _split(out):
    if isinstance(out, tuple):
        if len(out) != 2:
            raise InvalidArgument(
                f"gradient returned a tuple of {len(out)} items; return grad or (loss, grad)"
            )
        return out
    return None, out


def _columns(name: str, value) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        if len(value) != 2:
            raise InvalidArgument(
                f"observer {name!r} returned a tuple of {len(value)} items; return a value, "
                "(value, standard error) or a mapping of columns"
            )
        return {name: value[0], f"{name}_se": value[1]}
    return {name: value}


class _Recorder:
    """The logged rows: parameter blocks and observer columns, checked as they come."""

    def __init__(self, blocks, observers):
        self.blocks, self.observers = blocks, observers
        self.rows: dict[str, list] = {name: [] for name in blocks}
        self.columns: dict[str, list] | None = None

    def __call__(self, k: int, theta: np.ndarray, context: Callable[[int], str]) -> None:
        for name, (index, _) in self.blocks.items():
            self.rows[name].append(theta[index] if isinstance(index, int) else theta[index].copy())
        values: dict[str, Any] = {}
        for name, fn in self.observers.items():
            values.update(_columns(name, fn(theta)))
        if self.columns is None:
            clash = sorted(set(values) & set(self.blocks))
            if clash:
                raise InvalidArgument(f"observables {clash} have the names of states; rename the observers")
            self.columns = {name: [] for name in values}
        if set(values) != set(self.columns):
            raise InvalidArgument(
                f"the observers returned columns {sorted(values)} at step {k} but "
                f"{sorted(self.columns)} at step 0; return the same columns every time"
            )
        for name, value in values.items():
            if not np.all(np.isfinite(value)):
                shown = float(value) if np.ndim(value) == 0 else value
                raise NumericalTrouble(
                    f"observable {name}={shown!r} became non-finite at step {k} "
                    f"({context(k)}); lower the rate"
                )
            self.columns[name].append(value)

    def states(self, n: int) -> dict[str, np.ndarray]:
        """name → array with one row per logged step."""
        return {
            name: np.array(self.rows[name]).reshape(n, *shape) for name, (_, shape) in self.blocks.items()
        }

    def observables(self) -> dict[str, np.ndarray]:
        """name → (n,) column (or (n, ...) for array-valued observers)."""
        return {name: np.array(col) for name, col in (self.columns or {}).items()}


# ----------------------------------------------------------------------------------------------
# The driver


def train(
    theta0,
    gradient: Callable,
    *,
    groups: Sequence[ParamGroup] | ParamGroup,
    optimizer: AbstractOptimizer | str,
    steps: int,
    data=None,
    log: LogSchedule | int | Sequence[int] | None = None,
    observers: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
    states: Mapping[str, Any] | None = None,
    clock: str | None = None,
    progress: Callable[[float, str], None] | None = None,
    seed: int | np.random.SeedSequence | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Trajectory:
    """Run ``steps`` updates of ``optimizer`` from ``theta0`` and return the logged :class:`Trajectory`.

    Parameters
    ----------
    theta0
        Initial flat parameter vector (copied).
    gradient
        ``gradient(theta, batch) -> grad`` or ``(loss, grad)``, grad of the shape of θ; or a
        :class:`CompiledGradient`, run in the compiled loop (module docstring).
    groups
        :class:`ParamGroup` s (disjoint); coordinates outside every group are frozen.
    optimizer
        An optimiser of :mod:`numerics.optim` or one of the names "gd", "sgd", "adam".
    steps
        Number of updates (>= 0).
    data
        None (full batch), ``draw(rng, step) -> batch`` (online) or a fixed batch.
    log
        :class:`LogSchedule`, an int k (every k steps) or a list of steps; default every step.
    observers
        name → callable of θ giving a value, (value, SE) or a mapping of columns, at logged steps.
        An observer must not modify θ.
    states
        name → index (int: scalar state), or (index, row shape); default one state per group.
    clock
        The group whose cumulative rate is the time t, or "steps"; default the first group.
    progress
        ``progress(fraction, message)``, called at logged steps.
    seed
        Seed (or ``SeedSequence``) of the data RNG.
    meta
        Extra entries for the trajectory's ``meta`` (they override the driver's).
    """
    theta = _theta(theta0)
    size = theta.size
    steps = _count("steps", steps, 0)
    opt = _optimizer(optimizer)
    pairs = _groups(groups, size, steps)
    schedule = _log_schedule(log)
    log_steps = schedule.steps(steps)
    blocks = _blocks(states, pairs, size)
    observers = dict(observers or {})
    for name, fn in observers.items():
        if not callable(fn):
            raise InvalidArgument(f"observer {name!r}={fn!r} is not callable")
    if gradient is None or not callable(gradient):
        raise InvalidArgument(f"gradient={gradient!r} must be a callable gradient(theta, batch)")
    draw, rng, seed_info, data_kind = _data(data, seed)
    loop = _compiled_loop(gradient, opt, data, size)
    names = [g.name for g, _ in pairs]
    if clock is None:
        clock = names[0]
    if clock == "steps" and clock not in names:
        t_log = log_steps.astype(float)
    elif clock in names:
        t_log = pairs[names.index(clock)][0].schedule.times(log_steps)
    else:
        raise unknown_name("clock group", clock, [*names, "steps"])

    sign = np.ones(size)
    for group, idx in pairs:
        sign[_selector(group, idx)] = float(group.sign)
    lr = np.zeros(size)
    switches = sorted({s for g, _ in pairs for s in g.schedule.starts if s < steps} | {0})
    switches.append(steps + 1)
    logs = [*log_steps.tolist(), steps + 1]
    state = opt.init(size)
    recorder = _Recorder(blocks, observers)

    def where(i: int) -> str:
        for name, (index, _) in blocks.items():
            if isinstance(index, int):
                holds = index == i
            else:
                holds = i in (range(*index.indices(size)) if isinstance(index, slice) else index)
            if holds:
                return f"state {name!r}"
        return f"theta[{i}]"

    def context(k: int) -> str:
        rates = {g.name: g.sign * g.schedule.rate(min(k, max(steps - 1, 0))) for g, _ in pairs}
        small = (
            "; θ = " + repr({name: theta[i].tolist() for name, (i, _) in blocks.items()})
            if size <= 16
            else ""
        )
        return f"rates {rates}, optimizer {opt.info()}{small}"

    def bad_loss(k: int, loss) -> NumericalTrouble:
        return NumericalTrouble(
            f"the loss became non-finite at step {k} (loss={float(loss)!r}; {context(k)}); lower the rate"
        )

    def bad_parameter(k: int, bad: int) -> NumericalTrouble:
        return NumericalTrouble(
            f"parameters became non-finite at step {k + 1}: {where(bad)} "
            f"(theta[{bad}]={float(theta[bad])!r}) "
            f"in group {_owner(pairs, bad).name!r}, rate {float(sign[bad] * lr[bad])!r} at step {k} "
            f"({context(k)}); lower the rate"
        )

    start = time.perf_counter()
    k = next_switch = next_log = 0
    while True:
        if k == switches[next_switch]:
            for group, idx in pairs:
                lr[_selector(group, idx)] = group.schedule.rate(k)
            next_switch += 1
        if k == logs[next_log]:
            recorder(k, theta, context)
            next_log += 1
            if progress is not None:
                progress(k / steps if steps else 1.0, f"step {k}/{steps}")
        if k == steps:
            break
        if loop is not None:  # every step up to the next switch or logged step in one compiled call
            block = min(switches[next_switch], logs[next_log]) - k
            j, code, bad, loss = loop.run(block, theta, lr, sign, state)
            if code == 1:
                raise bad_loss(k + j, loss)
            if code == 2:
                raise bad_parameter(k + j, bad)
            k += j
            continue
        loss, grad = _split(gradient(theta, draw(rng, k)))
        grad = np.ascontiguousarray(grad, dtype=np.float64)
        if grad.shape != theta.shape:
            raise InvalidArgument(f"gradient returned shape {grad.shape} for theta of shape {theta.shape}")
        if loss is not None and not math.isfinite(loss):
            raise bad_loss(k, loss)
        bad = opt.update(theta, grad, lr, sign, state)
        if bad >= 0:
            raise bad_parameter(k, bad)
        k += 1
    wall = time.perf_counter() - start

    record = {
        "optimizer": opt.info(),
        "groups": [
            {"name": g.name, "size": int(idx.size), "schedule": g.schedule.info(), "sign": g.sign}
            for g, idx in pairs
        ],
        "clock": clock,
        "n_steps": steps,
        "log": schedule.info(),
        "data": data_kind,
        "seed": seed_info,
        "loop": "python" if loop is None else "compiled",
        "wall_time_s": wall,
        "theta": theta,
        **(meta or {}),
    }
    return Trajectory(
        t_log, recorder.states(len(log_steps)), recorder.observables(), meta=record, steps=log_steps
    )
