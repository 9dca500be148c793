"""The paper's gradient descent (Sec. 3; spec §2.6, §2.9) as inputs of :func:`numerics.train.train`.

Full-batch GD from θ_0 = 0 (spec §2.6, §10 ``gd``): u_{t+1} = u_t − η∇_u L_t at every step, and
W_{t+1} = W_t − η_W(t)∇_W L_t with the W step of the reading

* ``schedule = two_phase`` (canonical): η_W = ηλ for the boosted updates, η after. Which updates
  are boosted is ``boost_steps``: ``t_lt_t0`` (canonical) the updates t = 0..t0−1, i.e. W_1..W_{t0}
  are made with ηλ; ``t_le_t0`` the updates t = 0..t0, one more.
* ``schedule = vanilla_eta``: η_W = η at every step; ``vanilla_etalambda``: η_W = ηλ at every step
  (App. D, Fig. 6). ``t0`` does not enter the run (it may still mark W_{t0} for the claims).

The rates are ``eta`` and the float product ``eta * lam``, as ``eta * fW * gW`` of §10 forms them,
so a run equals §10's ``gd`` bit for bit. The time of the trajectory is τ = ηt (the u group is the
driver's clock), the gradient-flow time of §2.6.

:func:`run_gd` runs it in the driver's compiled loop on :func:`compiled_gradient`, whose kernel
is the model's own ``tabled_loss_grad`` on the flat layout: the iterates are bit-identical to
``train(model.zeros(), model.gradient, ...)`` with the groups of :func:`gd_groups`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from derivations.errors import InvalidArgument
from numerics._jit import jit
from numerics.models.regular_language.data import RLData
from numerics.models.regular_language.model import SIGN_ZERO, RLModel, positive_real, tabled_loss_grad
from numerics.train import CompiledGradient, LogSchedule, ParamGroup, Schedule, train
from numerics.trajectory import Trajectory

#: readings of the W step (spec §2.9 ``schedule``), canonical first
SCHEDULES = ("two_phase", "vanilla_eta", "vanilla_etalambda")
#: readings of the phase boundary (spec §2.9 ``boost_steps``), canonical first
BOOST_STEPS = ("t_lt_t0", "t_le_t0")
#: logged steps of :func:`run_gd` by default: this many log-spaced steps, plus t0 and t0 + 1
DEFAULT_GEOMETRIC_LOG = 64


@jit
def flat_loss_grad(theta, grad, lam, plan):
    """Return L(θ) and write ∇L(θ) into ``grad``, both in the flat layout θ = [u (d), W row-major (d²)].

    The kernel of a :class:`numerics.train.CompiledGradient`: the model's ``tabled_loss_grad``
    (every entry of ``grad`` is overwritten) on the data's
    :class:`~numerics.models.regular_language.model.TablePlan` ``plan``.
    """
    return tabled_loss_grad(theta, grad, lam, plan)


def compiled_gradient(model: RLModel) -> CompiledGradient:
    """Return the model's (L, ∇L) as a :class:`numerics.train.CompiledGradient` (its gradient's kernel)."""
    if not isinstance(model, RLModel):
        msg = f"model={model!r} must be an RLModel"
        raise InvalidArgument(msg)
    return CompiledGradient(flat_loss_grad, (model.lam, model.plan))


# ----------------------------------------------------------------------------------------------
# Readings and schedules


def _choice(name: str, value, choices: tuple[str, ...]) -> str:
    if value not in choices:
        msg = f"{name}={value!r} is not a known reading; valid values: {', '.join(choices)}"
        raise InvalidArgument(msg)
    return value


def _t0(t0, schedule: str) -> int | None:
    if t0 is None and schedule != "two_phase":
        return None
    if isinstance(t0, bool) or not isinstance(t0, numbers.Integral) or t0 < 0:
        need = "" if schedule != "two_phase" else " (schedule='two_phase' needs the phase boundary)"
        msg = f"t0={t0!r} must be an integer >= 0{need}"
        raise InvalidArgument(msg)
    return int(t0)


def boosted_updates(t0: int | None, schedule: str = "two_phase", boost_steps: str = "t_lt_t0") -> int | None:
    """Return how many leading W updates use ηλ: t0 or t0 + 1 (two_phase), 0 or None (all; vanilla)."""
    _choice("schedule", schedule, SCHEDULES)
    _choice("boost_steps", boost_steps, BOOST_STEPS)
    t0 = _t0(t0, schedule)
    if schedule == "vanilla_eta":
        return 0
    if schedule == "vanilla_etalambda":
        return None
    return t0 if boost_steps == "t_lt_t0" else t0 + 1


def w_schedule(eta: float, lam: float, t0: int | None, schedule: str = "two_phase",
               boost_steps: str = "t_lt_t0") -> Schedule:
    """Return the W step sizes: ηλ for the boosted updates (:func:`boosted_updates`), then η."""
    eta = positive_real("eta", eta, "the step size η")
    lam = positive_real("lam", lam, "the attention temperature λ")
    boosted = boosted_updates(t0, schedule, boost_steps)
    if boosted is None:
        return Schedule.constant(eta * lam)
    if boosted == 0:
        return Schedule.constant(eta)
    return Schedule.phases([(boosted, eta * lam), (None, eta)])


def gd_groups(model: RLModel, eta: float, t0: int | None, schedule: str = "two_phase",
              boost_steps: str = "t_lt_t0") -> list[ParamGroup]:
    """Return the driver's groups: ``u`` (step η, first: the clock, τ = ηt) and ``W`` (:func:`w_schedule`)."""
    if not isinstance(model, RLModel):
        msg = f"model={model!r} must be an RLModel"
        raise InvalidArgument(msg)
    W = w_schedule(eta, model.lam, t0, schedule, boost_steps)
    return [ParamGroup("u", model.u_slice, Schedule.constant(float(eta))), ParamGroup("W", model.W_slice, W)]


# ----------------------------------------------------------------------------------------------
# The run


def observers(model: RLModel, sign_zero: str = "+1") -> dict[str, Callable[[np.ndarray], Any]]:
    """Return observers of L_t, ‖u_t‖, ‖W_t‖_F and the training-set sign accuracy (``sign_zero``)."""
    _choice("sign_zero", sign_zero, SIGN_ZERO)
    d = model.d
    return {
        "loss": model.loss,
        "u_norm": lambda theta: float(np.linalg.norm(theta[:d])),
        "W_norm": lambda theta: float(np.linalg.norm(theta[d:])),
        "accuracy": lambda theta: model.accuracy(theta, sign_zero).fraction,
    }


def default_log(steps: int, t0: int | None) -> LogSchedule:
    """Return log-spaced steps over 1..steps, with t0 and t0 + 1 (the phase boundary) within the run."""
    at = tuple(k for k in ((t0, t0 + 1) if t0 is not None else ()) if k <= steps)
    return LogSchedule(geometric=DEFAULT_GEOMETRIC_LOG, at=at)


def run_gd(data: RLData, lam: float, eta: float, t0: int | None, steps: int, *,
           schedule: str = "two_phase", boost_steps: str = "t_lt_t0",
           log: LogSchedule | int | list[int] | None = None, sign_zero: str = "+1",
           extra_observers: Mapping[str, Callable[[np.ndarray], Any]] | None = None,
           theta0=None, compiled: bool = True, progress=None) -> Trajectory:
    """Run ``steps`` GD updates of the paper's schedule on ``data`` and return the :class:`Trajectory`.

    Parameters
    ----------
    data
        The enumerated data set (``ep_data``, ``cot_data``, ...).
    lam, eta
        λ > 0 and η > 0.
    t0
        The phase boundary (integer >= 0; may be None for the vanilla schedules).
    steps
        Number of updates.
    schedule, boost_steps
        Readings of spec §2.9 (module docstring).
    log
        Logged steps (a :class:`numerics.train.LogSchedule`, every k, or a list); default
        :func:`default_log`.
    sign_zero
        Reading of sign(0) for the accuracy observable.
    extra_observers
        More observers (name → function of θ) beside :func:`observers`.
    theta0
        Start (default θ_0 = 0, the paper's zero initialisation).
    compiled
        True: the driver's compiled loop on :func:`compiled_gradient`; False: its Python loop on
        ``model.gradient`` (same iterates, bit for bit).
    progress
        Passed to the driver.

    The trajectory has states ``u`` (n, d) and ``W`` (n, d, d), observables ``loss``, ``u_norm``,
    ``W_norm``, ``accuracy`` (and the extra ones), times τ = ηt, and in ``meta`` the readings,
    η, λ, t0, the number of boosted W updates and the data set's task and flags.
    """
    model = RLModel(data, lam)
    groups = gd_groups(model, eta, t0, schedule, boost_steps)
    boosted = boosted_updates(t0, schedule, boost_steps)
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 0:
        msg = f"steps={steps!r} must be an integer >= 0"
        raise InvalidArgument(msg)
    if theta0 is None:
        theta0 = model.zeros()
    elif np.shape(theta0) != (model.size,):
        msg = (f"theta0 has shape {np.shape(theta0)}; expected ({model.size},) "
                              f"= d + d*d with d={model.d}")
        raise InvalidArgument(msg)
    watch = observers(model, sign_zero)
    clash = sorted(set(watch) & set(extra_observers or {}))
    if clash:
        msg = f"extra_observers {clash} have the names of run_gd's own observables; rename them"
        raise InvalidArgument(msg)
    watch.update(extra_observers or {})
    d = model.d
    return train(
        theta0,
        compiled_gradient(model) if compiled else model.gradient,
        groups=groups,
        optimizer="gd",
        steps=steps,
        log=default_log(int(steps), None if t0 is None else int(t0)) if log is None else log,
        observers=watch,
        states={"u": (model.u_slice, (d,)), "W": (model.W_slice, (d, d))},
        progress=progress,
        meta={
            "reading": {"schedule": schedule, "boost_steps": boost_steps},
            "eta": float(eta),
            "lam": model.lam,
            "t0": t0,
            "boosted_W_updates": boosted,
            "task": data.task,
            "data_flags": dict(data.flags),
            "L_max": data.L_max,
            "dim": d,
            "n_samples": data.n,
        },
    )
