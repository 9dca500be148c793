r"""Adaptive Dormand-Prince 5(4) integration of :math:`y' = f(t, y; p)` in numba, with hitting times.

The method is :data:`numerics.tableau.DOPRI5` (FSAL, local extrapolation, 4th-order dense
output). A step is accepted when

.. math:: \lVert e \rVert = \Bigl(\tfrac1n \sum_i
          \bigl(\tfrac{e_i}{\mathrm{atol}_i + \mathrm{rtol}\,\max(|y_i|, |y_{\mathrm{new},i}|)}\bigr)^2
          \Bigr)^{1/2} \le 1,

with :math:`e = h \sum_j (b_j - \hat b_j) k_j`; the next step is
:math:`h \cdot \min(10, \max(0.2,\, 0.9\, \lVert e\rVert^{-(1/5 - 0.75\beta)}
\lVert e_{\mathrm{prev}}\rVert^{\beta}))`, :math:`\beta = 0.04` (Hairer's PI controller), never
growing right after a rejection. The first step follows Hairer, Nørsett & Wanner, *Solving ODEs I*, II.4.

Events (hitting times). Event :math:`k` fires at the first time its value :math:`g_k(t, y)` crosses
zero in its direction: at an accepted point its value is strictly on the near side (:math:`g<0`
for direction +1, :math:`g>0` for -1, either for 0) and at the next accepted point on zero or
beyond. The time is then located on the dense output by the Illinois method to a relative width of
1e-13 in :math:`t`. Consequently a value already on the fired side at ``t0`` does not fire at
``t0``: it fires only after returning to the near side and crossing again. A NaN value means "not
armed" and never crosses, which is what an event defined relative to an unfired event sees (its
``event_times``/``event_states`` entries are NaN). Only the first crossing is recorded, and a
double crossing inside one step (a touch) goes unseen, as in every step-wise event detection.

Stiff methods. ``method="rodas4p"`` (Steinebach's RODAS4P, :data:`numerics.rosenbrock.RODAS4P`)
and ``method="rodas4"`` (Hairer & Wanner's RODAS, *Solving ODEs II*, IV.7) are Rosenbrock
methods: six linearly implicit stages
:math:`(I/(h\gamma) - J)\,u_i = f(t + c_i h, y + \sum_{j<i} a_{ij} u_j) + \sum_{j<i} C_{ij} u_j/h
+ h d_i \partial_t f`, :math:`\gamma = 1/4`, one LU decomposition per step, :math:`y_1 = y +
\sum_i m_i u_i`; order 4, L-stable and stiffly accurate. RODAS4P also keeps its order on stiff
forced components (Prothero-Robinson), where RODAS4's local error falls only like :math:`h/\lambda`
and tight tolerances cost it tens of times more steps. :math:`J = \partial f/\partial y` is the
field's ``jac`` when it has one, else forward differences (``n`` extra evaluations, about half the
digits of :math:`J`: the step stays stable but is of order 4 in the stiff limit only with an exact
:math:`J`); :math:`\partial_t f` is exactly 0 when :math:`f(t+\tau, y) = f(t, y)` bit for bit (every
autonomous field), else a second-order one-sided difference in :math:`t` (two evaluations). The
local error estimate is the last stage :math:`u_6`, the difference from the embedded order-3
solution, in the norm above; the next step is :math:`h \cdot \min(6, \max(0.2,\,
0.9\,\lVert e\rVert^{-1/4}))`, lowered to Gustafsson's predictive value
:math:`0.9\,(h/h_{\mathrm{prev}})(\lVert e_{\mathrm{prev}}\rVert/\lVert e\rVert^2)^{1/4}` when that is
smaller (as ``rodas.f``). The dense output is the methods' continuous extension of order 3,
:math:`y(t+\theta h) = (1-\theta) y + \theta\,(y_1 + (1-\theta)(\sum_i D_{1i} u_i + \theta
\sum_i D_{2i} u_i))`; events and saved states are evaluated on it by the same code and rules as
for Dormand-Prince. Being one order below the steps, it can be tens of times less accurate between
step points than at them at tight tolerances: tighten ``rtol`` when interpolated values matter.
``Solution.n_jac``/``n_lu`` count Jacobian evaluations and LU decompositions.

Compilation. The kernels call the field's ``rhs``/``events`` (and ``jac``) as module globals, so each
field gets its own generated modules, instantiated from templates by one loader
(:mod:`numerics._kernel_modules`): the set-up and event handling shared by both integrators
(:mod:`numerics._field_template`), the Dormand–Prince solve (:mod:`numerics._ode_kernels`) and the
Rosenbrock solve shared by RODAS4/RODAS4P (:mod:`numerics._stiff_kernels`). They are compiled once and
then cached on disk when the field's functions can be imported by name; a field defined in
``__main__`` or inside a function is compiled anew in each process.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numba
import numpy as np
from numba.core.dispatcher import Dispatcher

from derivations.errors import InvalidArgument, NumericalTrouble
from numerics import _stiff_kernels
from numerics._ode_kernels import kernels
from numerics.rosenbrock import RODAS4, RODAS4P
from numerics.tableau import DOPRI5

#: Status codes returned by the kernels (``BatchSolution.status``).
STATUS = {
    0: "success",
    1: "terminated by event",
    2: "max_steps reached",
    3: "step size underflow",
    4: "non-finite rhs or state",
}

_A, _, _E, _C, _P = DOPRI5.arrays()
#: the integration methods of :func:`integrate` (module docstring)
METHODS = ("dopri5", "rodas4p", "rodas4")
_ROSENBROCK = {"rodas4p": RODAS4P, "rodas4": RODAS4}
#: points per scheduling unit of :func:`integrate_batch`'s parallel loop (dynamic, for load balance)
BATCH_CHUNK = 1
_SENTINEL = -7.377e301  # a value no sane right-hand side writes: detects unwritten outputs


def _show(value: object) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, threshold=8, precision=6)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass(frozen=True)
class VectorField:
    """An autonomous or time-dependent vector field with optional event functions.

    Parameters
    ----------
    rhs : numba Dispatcher
        ``rhs(t, y, params, out) -> None`` writes :math:`dy/dt` into ``out`` (1-D float64).
    n_state : int
        Dimension of ``y``.
    events : numba Dispatcher or None
        ``events(t, y, params, event_times, event_states, out) -> None`` writes one value per event.
        ``event_times`` (q,) and ``event_states`` (q, n_state) hold when and where each event fired
        (NaN until it does), so an event may be relative to an earlier one.
    event_names : tuple of str
        One unique name per event value.
    event_directions : tuple of int
        +1 fires on an upward crossing of zero, -1 downward, 0 either; empty means all 0.
    terminal : tuple of bool
        Stop integrating when this event fires; empty means all False.
    state_names : tuple of str
        Names of the state components, used in error messages; empty for ``y[i]``.
    jac : numba Dispatcher or None
        ``jac(t, y, params, out) -> None`` writes the Jacobian ``out[i, j] = ∂f_i/∂y_j`` into ``out``
        (2-D float64, C-contiguous, (n_state, n_state)); used by the stiff methods
        (``method="rodas4p"``, ``"rodas4"``), which otherwise differentiate ``rhs`` numerically.
    observe : numba Dispatcher or None
        ``observe(t, y, params, out) -> None`` writes ``n_observed`` observables of the state; when
        given, the integrators save these at the save times instead of the whole state (a state of
        10⁶ components need not be stored to follow a few hundred observables along it).
    n_observed : int
        The number of values ``observe`` writes (0 without an observer).
    observed_names : tuple of str
        Names of the observables; empty for ``obs[i]``.
    """

    rhs: Dispatcher
    n_state: int
    events: Dispatcher | None = None
    event_names: tuple[str, ...] = ()
    event_directions: tuple[int, ...] = ()
    terminal: tuple[bool, ...] = ()
    state_names: tuple[str, ...] = ()
    jac: Dispatcher | None = None
    observe: Dispatcher | None = None
    n_observed: int = 0
    observed_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("rhs", "events", "jac", "observe"):
            value = getattr(self, name)
            if not (isinstance(value, Dispatcher) or (name != "rhs" and value is None)):
                msg = f"field.{name}={_show(value)} is not a numba njit function; decorate it with _jit.jit"
                raise InvalidArgument(msg)
        if not _is_int(self.n_state) or self.n_state < 1:
            msg = f"field.n_state={self.n_state!r} must be a positive integer (the dimension of y)"
            raise InvalidArgument(msg)
        if (self.observe is None) != (self.n_observed == 0) or not _is_int(self.n_observed) or self.n_observed < 0:
            msg = (
                f"field.observe={self.observe!r} with field.n_observed={self.n_observed!r}: give both an observer "
                "and the positive number of values it writes, or neither"
            )
            raise InvalidArgument(msg)
        set_ = object.__setattr__
        set_(self, "observed_names", tuple(self.observed_names))
        if self.observed_names and len(self.observed_names) != self.n_observed:
            msg = (
                f"field.observed_names has {len(self.observed_names)} names for n_observed={self.n_observed}; "
                "give one per observable or none"
            )
            raise InvalidArgument(msg)
        for name in ("event_names", "event_directions", "terminal", "state_names"):
            set_(self, name, tuple(getattr(self, name)))
        q = len(self.event_names)
        if (self.events is None) != (q == 0):
            msg = (
                f"field.event_names={self.event_names!r} with field.events={self.events!r}: "
                "give both an events function and one name per event value, or neither"
            )
            raise InvalidArgument(msg)
        if not all(isinstance(n, str) for n in self.event_names) or len(set(self.event_names)) < q:
            msg = f"field.event_names={self.event_names!r} must be distinct strings; rename the duplicates"
            raise InvalidArgument(msg)
        set_(self, "event_directions", self.event_directions or (0,) * q)
        set_(self, "terminal", self.terminal or (False,) * q)
        if len(self.event_directions) != q or any(d not in (-1, 0, 1) for d in self.event_directions):
            msg = (
                f"field.event_directions={self.event_directions!r} must hold one of -1, 0, +1 "
                f"for each of the {q} events"
            )
            raise InvalidArgument(msg)
        if len(self.terminal) != q or not all(isinstance(x, bool | np.bool_) for x in self.terminal):
            msg = f"field.terminal={self.terminal!r} must hold one bool for each of the {q} events"
            raise InvalidArgument(msg)
        if self.state_names and len(self.state_names) != self.n_state:
            msg = (
                f"field.state_names={self.state_names!r} has {len(self.state_names)} names for "
                f"n_state={self.n_state}; give one per component or none"
            )
            raise InvalidArgument(msg)


@dataclass(frozen=True, eq=False)
class Tolerance:
    """Local error tolerances: a step is accepted when the RMS of ``err / (atol + rtol*|y|)`` is ≤ 1.

    Parameters
    ----------
    rtol : float
        Relative tolerance, ``100*eps <= rtol < 1``.
    atol : float or 1-D array
        Absolute tolerance (> 0), scalar or one per state component.
    """

    rtol: float
    atol: float | np.ndarray

    def __post_init__(self) -> None:
        r = self.rtol
        if not isinstance(r, numbers.Real) or isinstance(r, bool) or not (100 * np.finfo(float).eps <= r < 1):
            msg = (
                f"tol.rtol={_show(r)} must be a real number with 2.3e-14 <= rtol < 1 (below 100*eps "
                "float64 steps cannot meet it); choose e.g. rtol=1e-8"
            )
            raise InvalidArgument(msg)
        atol = np.asarray(self.atol)
        if (
            atol.ndim > 1
            or atol.size == 0
            or not np.issubdtype(atol.dtype, np.number)
            or np.iscomplexobj(atol)
        ):
            msg = f"tol.atol={_show(self.atol)} must be a positive number or a 1-D array of them"
            raise InvalidArgument(msg)
        if not np.all(np.isfinite(atol)) or not np.all(atol > 0):
            msg = f"tol.atol={_show(self.atol)} must be finite and > 0; choose e.g. atol=1e-11"
            raise InvalidArgument(msg)
        if atol.ndim == 1:
            frozen = atol.astype(np.float64)
            frozen.flags.writeable = False
            object.__setattr__(self, "atol", frozen)

    def atol_array(self, n: int) -> np.ndarray:
        """Return ``atol`` as a float64 array of length ``n``."""
        atol = np.asarray(self.atol, dtype=np.float64)
        if atol.ndim == 0:
            return np.full(n, float(atol))
        if atol.size != n:
            msg = f"tol.atol has {atol.size} entries but the state has n_state={n}; give one per component"
            raise InvalidArgument(msg)
        return atol.copy()


@dataclass
class Solution:
    """Result of :func:`integrate`.

    ``t``/``y`` hold the requested save times that were reached and the states there (dense
    output) — the field's observables instead when it has an observer; without ``save_at`` they
    hold the start and the end, ``[t0, t_final]``.
    ``status`` is ``"success"`` or ``"terminated by event <name>"``. The work done: ``n_steps``
    accepted and ``n_rejected`` rejected steps, ``n_rhs`` evaluations of ``rhs``, and for the
    stiff methods ``n_jac`` Jacobians and ``n_lu`` LU decompositions (0 for Dormand-Prince).
    """

    t: np.ndarray
    y: np.ndarray
    event_times: dict[str, float]
    event_states: dict[str, np.ndarray]
    t_final: float
    y_final: np.ndarray
    n_steps: int
    n_rejected: int
    n_rhs: int
    status: str
    n_jac: int = 0
    n_lu: int = 0


@dataclass
class BatchSolution:
    """Result of :func:`integrate_batch` for ``n`` points; row ``i`` is point ``i``.

    ``status[i]`` is a key of :data:`STATUS`. A failed point (status >= 2, kept only with
    ``on_error="record"``) has NaN ``y_final``; ``t_final`` is where it failed, and hitting times and
    saved states reached before the failure are kept. Unreached save times and unfired events are NaN.
    """

    event_names: tuple[str, ...]
    event_times: np.ndarray  # (n, q)
    event_states: np.ndarray  # (n, q, n_state)
    t_final: np.ndarray  # (n,)
    y_final: np.ndarray  # (n, n_state)
    status: np.ndarray  # (n,) int8
    n_steps: np.ndarray
    n_rejected: np.ndarray
    n_rhs: np.ndarray
    t: np.ndarray | None = None  # save_at
    y: np.ndarray | None = None  # (n, len(save_at), n_state)
    n_jac: np.ndarray | None = None  # Jacobians (stiff methods; zeros for dopri5)
    n_lu: np.ndarray | None = None  # LU decompositions (idem)

    @property
    def ok(self) -> np.ndarray:
        """Mask of points that reached ``t1`` or stopped at a terminal event."""
        return self.status <= 1

    def status_text(self, i: int) -> str:
        """Human-readable status of point ``i``."""
        return STATUS[int(self.status[i])]


# ---- validation -------------------------------------------------------------------------------


def _real_array(name: str, value: object, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as exc:
        msg = f"{name}={_show(value)} is not an array of real numbers"
        raise InvalidArgument(msg) from exc
    if arr.ndim != ndim or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        got = f"shape {arr.shape}, dtype {arr.dtype}"
        msg = f"{name}={_show(value)} must be a {ndim}-D array of real numbers (got {got})"
        raise InvalidArgument(msg)
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        msg = f"{name}={_show(arr)} contains NaN or inf; give finite values"
        raise InvalidArgument(msg)
    return arr


def _check_common(field, t_span, tol, save_at, first_step, max_steps):
    if not isinstance(field, VectorField):
        msg = f"field={_show(field)} must be a numerics.ode.VectorField"
        raise InvalidArgument(msg)
    span = _real_array("t_span", t_span, 1)
    if span.size != 2 or not span[0] < span[1]:
        msg = f"t_span={_show(t_span)} must be (t0, t1) with t0 < t1; integrate forward in time"
        raise InvalidArgument(msg)
    t0, t1 = float(span[0]), float(span[1])
    if not isinstance(tol, Tolerance):
        msg = f"tol={_show(tol)} must be a Tolerance(rtol=..., atol=...); there is no default on purpose"
        raise InvalidArgument(msg)
    atol = tol.atol_array(field.n_state)
    if save_at is None:
        save = np.empty(0)
    else:
        save = _real_array("save_at", np.atleast_1d(save_at), 1)
        if np.any(np.diff(save) < 0) or (save.size and (save[0] < t0 or save[-1] > t1)):
            msg = f"save_at={_show(save)} must be sorted and lie within t_span=({t0}, {t1})"
            raise InvalidArgument(msg)
    if first_step is None:
        h0 = 0.0
    elif (
        isinstance(first_step, numbers.Real) and not isinstance(first_step, bool) and 0 < first_step < np.inf
    ):
        h0 = float(first_step)
    else:
        msg = f"first_step={_show(first_step)} must be None (automatic) or a finite number > 0"
        raise InvalidArgument(msg)
    if not _is_int(max_steps) or max_steps < 1:
        msg = f"max_steps={_show(max_steps)} must be a positive integer"
        raise InvalidArgument(msg)
    return t0, t1, float(tol.rtol), atol, save, h0, int(max_steps)


def _check_method(method: object) -> str:
    if not (isinstance(method, str) and method in METHODS):
        msg = (
            f"method={_show(method)} is not one of {', '.join(map(repr, METHODS))}; use 'dopri5' "
            "(explicit, the default) or 'rodas4p' (Rosenbrock, for stiff problems)"
        )
        raise InvalidArgument(msg)
    return method


def _check_contract(
    field: VectorField, t0: float, y0: np.ndarray, params: np.ndarray, method: str = "dopri5"
) -> None:
    """Call ``rhs``, ``events`` (and a stiff method's ``jac``) once to check they write exactly their outputs.

    numba compiles without bounds checks, so a field whose ``n_state`` or ``event_names`` disagree
    with its functions would otherwise read or write past an array silently.
    """
    n, q = field.n_state, len(field.event_names)
    # Outputs are views of one-longer buffers, so a write past their end lands where we can see it.
    buffer = np.full(n + 1, _SENTINEL)
    field.rhs(t0, y0, params, buffer[:n])
    if np.any(buffer[:n] == _SENTINEL) or buffer[n] != _SENTINEL:
        msg = (
            f"field.rhs does not write exactly n_state={n} derivatives (wrote "
            f"{np.flatnonzero(buffer != _SENTINEL).tolist()}); make n_state match the field"
        )
        raise InvalidArgument(msg)
    if q:
        g = np.full(q + 1, _SENTINEL)
        field.events(t0, y0, params, np.full(q, np.nan), np.full((q, n), np.nan), g[:q])
        if g[q] != _SENTINEL or np.any(g[:q] == _SENTINEL):
            msg = (
                f"field.events does not write exactly len(event_names)={q} values; "
                "make event_names match the values it writes"
            )
            raise InvalidArgument(msg)
    if field.observe is not None:
        k = field.n_observed
        obs = np.full(k + 1, _SENTINEL)
        field.observe(t0, y0, params, obs[:k])
        if obs[k] != _SENTINEL or np.any(obs[:k] == _SENTINEL):
            msg = f"field.observe does not write exactly n_observed={k} values; make n_observed match it"
            raise InvalidArgument(msg)
    if method in _ROSENBROCK and field.jac is not None:
        jac = np.full((n + 1, n), _SENTINEL)
        field.jac(t0, y0, params, jac[:n])
        if np.any(jac[:n] == _SENTINEL) or np.any(jac[n] != _SENTINEL):
            msg = (
                f"field.jac does not write exactly the n_state x n_state = {n}x{n} Jacobian "
                f"(unwritten or out-of-range entries); make it write out[i, j] = d f_i / d y_j"
            )
            raise InvalidArgument(msg)


def _saved_width(field: VectorField) -> int:
    """The number of values saved per save time: the observables, or the whole state."""
    return field.n_observed if field.observe is not None else field.n_state


def _params(params: object, what: str = "params") -> np.ndarray | tuple:
    """``params`` as the kernels take it: a finite float64 1-D array, or a tuple whose first entry is that
    array and whose other entries are C-contiguous integer or float arrays (data such as token indices
    passed to ``rhs`` unchanged)."""
    if not isinstance(params, tuple):
        return _real_array(what, params, 1)
    if not params:
        raise InvalidArgument(f"{what}=() is empty; give the float parameters first, then any data arrays")
    data = []
    for k, value in enumerate(params[1:], start=1):
        arr = np.asarray(value)
        if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)) or arr.ndim < 1:
            msg = f"{what}[{k}] must be an integer or float array (data for rhs); got {_show(value)}"
            raise InvalidArgument(msg)
        data.append(np.ascontiguousarray(arr))
    return (_real_array(f"{what}[0]", params[0], 1), *data)


def _describe_state(field: VectorField, y: np.ndarray) -> str:
    names = field.state_names or tuple(f"y[{i}]" for i in range(field.n_state))
    return ", ".join(f"{name}={v:.6g}" for name, v in zip(names, y, strict=True))


def _trouble_message(field, status, t, h, y, max_steps, method="dopri5") -> str:
    state = _describe_state(field, y)
    if status == 2:
        return (
            f"max_steps={max_steps} steps attempted by t={t:.12g} (state {state}); "
            "raise max_steps, loosen tol, or shorten t_span"
        )
    if status == 3:
        why = (
            "the problem is too stiff for an explicit method (try method='rodas4p')" if method == "dopri5"
            else "the field's jac is not its Jacobian"
        )
        return (
            f"step size underflow at t={t:.12g} (h={h:.3g} < 10*eps*|t|; last accepted state {state}): "
            f"the solution blows up near this time or {why}"
        )
    what = "rhs or state" if method == "dopri5" else "rhs, Jacobian or state"
    return (
        f"non-finite {what} near t={t:.12g} (last finite state {state}): dy/dt is NaN or "
        "overflows there even for tiny steps; check the vector field's domain"
    )


def _method_args(method: str = "dopri5"):
    if method in _ROSENBROCK:
        tableau = _ROSENBROCK[method]
        return (*tableau.arrays(), tableau.error_order)
    return _A, _E, _C, _P, DOPRI5.error_order


def _solver(field: VectorField, method: str):
    """Return the kernels of ``method`` for ``field`` (one Rosenbrock kernel serves every tableau)."""
    if method in _ROSENBROCK:
        return _stiff_kernels.kernels(field.rhs, field.events, field.jac, field.observe)
    return kernels(field.rhs, field.events, field.observe)


def _event_args(field: VectorField) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(field.event_directions, dtype=np.int64), np.asarray(field.terminal, dtype=np.bool_)


# ---- entry points -----------------------------------------------------------------------------


def integrate(
    field, y0, t_span, params, *, tol, save_at=None, first_step=None, max_steps=10**6, method="dopri5"
) -> Solution:
    """Integrate ``y' = field.rhs(t, y, params)`` from ``y(t_span[0]) = y0`` to ``t_span[1]``.

    Parameters
    ----------
    field : VectorField
    y0 : (n_state,) array_like
    t_span : (t0, t1) with t0 < t1
    params : 1-D array_like of float, or a tuple (float array, data arrays...)
        Passed unchanged to ``rhs``, ``events`` and ``observe``; a tuple carries integer or float data
        (token indices, labels) beside the parameters.
    tol : Tolerance
        Required: the local error tolerance.
    save_at : 1-D array_like, optional
        Sorted times in ``[t0, t1]`` at which to report the state (dense output, not step points).
    first_step : float, optional
        Initial step; by default chosen by the Hairer-Nørsett-Wanner heuristic.
    max_steps : int
        Limit on attempted (accepted + rejected) steps.
    method : {"dopri5", "rodas4p", "rodas4"}
        ``"dopri5"``: explicit Dormand-Prince 5(4). ``"rodas4p"``, ``"rodas4"``: L-stable
        Rosenbrock methods of order 4 for stiff problems, with ``field.jac`` if given (module
        docstring; prefer rodas4p).

    Returns
    -------
    Solution

    Raises
    ------
    InvalidArgument
        For malformed input, naming the parameter.
    NumericalTrouble
        When ``max_steps`` is exhausted, the step size underflows (blow-up, stiffness) or the
        right-hand side turns non-finite; the message names the time and the state.
    """
    t0, t1, rtol, atol, save, h0, max_steps = _check_common(
        field, t_span, tol, save_at, first_step, max_steps
    )
    method = _check_method(method)
    n = field.n_state
    y0 = _real_array("y0", y0, 1)
    if y0.size != n:
        msg = f"y0={_show(y0)} has {y0.size} components but field.n_state={n}; give one value per component"
        raise InvalidArgument(msg)
    params = _params(params)
    _check_contract(field, t0, y0, params, method)
    directions, terminal = _event_args(field)
    q = directions.size
    save_out = np.empty((save.size, _saved_width(field)))
    ev_t, ev_s, y_out = np.empty(q), np.empty((q, n)), np.empty(n)
    solve = _solver(field, method).solve
    status, t_last, h_last, n_steps, n_rej, n_rhs, n_saved, *linear = solve(
        t0, t1, y0, params, rtol, atol, h0, max_steps, save, *_method_args(method),
        directions, terminal, save_out, ev_t, ev_s, y_out,
    )  # fmt: skip
    n_jac, n_lu = linear or (0, 0)
    if status >= 2:
        raise NumericalTrouble(_trouble_message(field, status, t_last, h_last, y_out, max_steps, method))
    text = STATUS[0]
    if status == 1:
        fired = [j for j in range(q) if terminal[j] and ev_t[j] == t_last]
        text = f"terminated by event {field.event_names[fired[0]]}"
    if save_at is None and field.observe is not None:
        t_saved, y_saved = np.array([t0, t_last]), np.empty((2, field.n_observed))
        field.observe(t0, y0, params, y_saved[0])
        field.observe(t_last, y_out, params, y_saved[1])
    elif save_at is None:
        t_saved, y_saved = np.array([t0, t_last]), np.stack([y0, y_out])
    else:
        t_saved, y_saved = save[:n_saved].copy(), save_out[:n_saved]
    return Solution(
        t=t_saved,
        y=y_saved,
        event_times={name: float(ev_t[j]) for j, name in enumerate(field.event_names)},
        event_states={name: ev_s[j].copy() for j, name in enumerate(field.event_names)},
        t_final=float(t_last),
        y_final=y_out,
        n_steps=int(n_steps),
        n_rejected=int(n_rej),
        n_rhs=int(n_rhs),
        status=text,
        n_jac=int(n_jac),
        n_lu=int(n_lu),
    )


def integrate_batch(
    field, y0s, params, t_span, *, tol, save_at=None, first_step=None, max_steps=10**6, on_error="raise",
    method="dopri5",
) -> BatchSolution:
    """Integrate one vector field from many ``(y0, params)`` points in one parallel call.

    Point ``i`` starts at ``y0s[i]`` with ``params[i]``; each runs the same serial kernel as
    :func:`integrate`, so its results are bit-identical to ``integrate(field, y0s[i], t_span,
    params[i], ...)`` whatever the number of numba threads.

    Parameters
    ----------
    field, t_span, tol, save_at, first_step, max_steps, method
        As in :func:`integrate`, shared by all points.
    y0s : (n, n_state) array_like
    params : (n, k) array_like
    on_error : {"raise", "record"}
        ``"raise"``: a failed point raises :class:`NumericalTrouble` naming its index and params.
        ``"record"``: failed points are kept with NaN ``y_final`` and their status code, for sweeps.

    Returns
    -------
    BatchSolution
    """
    t0, t1, rtol, atol, save, h0, max_steps = _check_common(
        field, t_span, tol, save_at, first_step, max_steps
    )
    if on_error not in ("raise", "record"):
        msg = f"on_error={on_error!r} must be 'raise' or 'record'"
        raise InvalidArgument(msg)
    method = _check_method(method)
    n = field.n_state
    y0s = _real_array("y0s", y0s, 2)
    if y0s.shape[1] != n or y0s.shape[0] == 0:
        msg = f"y0s has shape {y0s.shape}; give (n_points >= 1, n_state={n}), one initial state per row"
        raise InvalidArgument(msg)
    params = _real_array("params", params, 2)
    if params.shape[0] != y0s.shape[0]:
        msg = (
            f"params has shape {params.shape} but y0s has {y0s.shape[0]} rows; give one row per point "
            "(np.tile(p, (n, 1)) to share)"
        )
        raise InvalidArgument(msg)
    _check_contract(field, t0, y0s[0], params[0], method)
    directions, terminal = _event_args(field)
    m, q = y0s.shape[0], directions.size
    save_out = np.empty((m, save.size, _saved_width(field)))
    ev_t, ev_s, y_out = np.empty((m, q)), np.empty((m, q, n)), np.empty((m, n))
    status, t_last, h_last = np.empty(m, np.int8), np.empty(m), np.empty(m)
    # (n_steps, n_rejected, n_rhs, n_saved) and, for a stiff method, (n_jac, n_lu)
    stiff = method in _ROSENBROCK
    counts = np.zeros((m, 6 if stiff else 4), np.int64)
    # Points differ in cost by orders of magnitude (small σ, large L): hand them out a few at a time
    # instead of in one static block per thread. Each point is still solved alone: same numbers.
    previous = numba.set_parallel_chunksize(BATCH_CHUNK)
    try:
        _solver(field, method).solve_batch(
            t0, t1, y0s, params, rtol, atol, h0, max_steps, save, *_method_args(method),
            directions, terminal, save_out, ev_t, ev_s, y_out, status, t_last, h_last, counts,
        )  # fmt: skip
    finally:
        numba.set_parallel_chunksize(previous)
    failed = np.flatnonzero(status >= 2)
    if failed.size and on_error == "raise":
        i = int(failed[0])
        why = _trouble_message(field, int(status[i]), t_last[i], h_last[i], y_out[i], max_steps, method)
        msg = f"point {i} of {m} (params={_show(params[i])}, y0={_show(y0s[i])}) failed: {why}"
        raise NumericalTrouble(msg)
    y_out[failed] = np.nan
    return BatchSolution(
        event_names=field.event_names,
        event_times=ev_t,
        event_states=ev_s,
        t_final=t_last,
        y_final=y_out,
        status=status,
        n_steps=counts[:, 0].copy(),
        n_rejected=counts[:, 1].copy(),
        n_rhs=counts[:, 2].copy(),
        t=None if save_at is None else save,
        y=None if save_at is None else save_out,
        n_jac=counts[:, 4].copy() if stiff else np.zeros(m, np.int64),
        n_lu=counts[:, 5].copy() if stiff else np.zeros(m, np.int64),
    )
