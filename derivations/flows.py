"""Flows built from a loss and a parameterisation, flows induced on reduced variables, their fixed points.

A *flow* here is any vector field dθ/dt = f(θ), given as one SymPy expression per state symbol (in
the order of ``state``); :func:`gradient_flow` builds the gradient ones (dθ_i/dt = ∓ r_i ∂L/∂θ_i),
but :func:`induced_flow`, :func:`reduced_flow`, :func:`jacobian`, :func:`fixed_points`,
:func:`linearisation` and :func:`lie_series` take any field. Checks and models take their flows,
derivatives and Jacobians from here (never ``diff`` by hand) and their numbers from
:mod:`numerics.compile`.

For a loss that depends on (w_Q, w_K) only through P = w_Q w_K, the gradient flow gives
dw_Q/dt = -w_K ∂_P L and dw_K/dt = -w_Q ∂_P L, so w_Q² - w_K² is conserved and, from
w_Q(0) = w_K(0) = w, the flow stays on the balanced manifold with dw/dt = -w ∂_P L|_{P=w²}
(spec ih.dv.balanced_flow). Writing the loss as a function of w alone, L(w) := L(P = w²), and
descending it gives dw/dt = -dL(w²)/dw = -2w ∂_P L: twice the balanced velocity.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import sympy as sp

from derivations.errors import InvalidArgument

#: the two flows of a loss that depends on w_Q, w_K only through P = w_Q w_K, restricted to w_Q = w_K = w:
#: ``reparameterised`` descends L(w²) in w; ``balanced`` is the induced flow of the pair on that manifold
REDUCED_MODES = ("reparameterised", "balanced")


def gradient(expr: sp.Expr, parameters: Sequence[sp.Symbol]) -> list[sp.Expr]:
    """Return ∂f/∂θ_i for each parameter θ_i, in order (the gradient ∇f as a list)."""
    return [sp.diff(expr, theta) for theta in _symbols(parameters, "parameters")]


def gradient_flow(
    loss: sp.Expr,
    parameters: Sequence[sp.Symbol],
    *,
    sign: int = +1,
    rates: Mapping[sp.Symbol, sp.Expr] | Sequence[sp.Expr] | None = None,
) -> list[sp.Expr]:
    """Return the right-hand side of dθ_i/dt = -sign · r_i · ∂L/∂θ_i, one entry per parameter.

    Parameters
    ----------
    loss
        L(θ); any expression (further symbols are parameters of the flow).
    parameters
        The state θ, in order.
    sign
        ``+1`` for descent (dθ/dt = -∇L), ``-1`` for ascent (dθ/dt = +∇L).
    rates
        Per-parameter rates r_i (learning-rate ratios, time scales): a mapping ``{θ_i: r_i}``
        (missing parameters get 1) or a sequence aligned with ``parameters``. ``None``: all 1.
    """
    parameters = _symbols(parameters, "parameters")
    if sign not in (1, -1):
        msg = f"sign={sign!r} must be +1 (descent, dθ/dt = -∇L) or -1 (ascent, dθ/dt = +∇L)"
        raise InvalidArgument(msg)
    r = _rates(rates, parameters)
    flow = []
    for theta, rate in zip(parameters, r, strict=True):
        # descent at unit rate is written -∂L/∂θ exactly: compiled kernels are keyed on this tree
        term = -sp.diff(loss, theta) if sign == 1 else sp.diff(loss, theta)
        flow.append(term if rate == 1 else rate * term)
    return flow


def _symbols(symbols: Sequence[sp.Symbol], what: str) -> list[sp.Symbol]:
    symbols = list(symbols)
    for s in symbols:
        if not isinstance(s, sp.Symbol):
            msg = f"{what} entry {s!r} is not a SymPy Symbol; pass the state as symbols, e.g. sp.symbols('w h')"
            raise InvalidArgument(msg)
    if len(set(symbols)) != len(symbols):
        dup = sorted({str(s) for s in symbols if symbols.count(s) > 1})
        msg = f"{what} lists {', '.join(dup)} more than once"
        raise InvalidArgument(msg)
    return symbols


def _rates(rates, parameters: list[sp.Symbol]) -> list[sp.Expr]:
    if rates is None:
        return [sp.Integer(1)] * len(parameters)
    if isinstance(rates, Mapping):
        unknown = [str(k) for k in rates if k not in parameters]
        if unknown:
            msg = f"rates names {', '.join(unknown)}, not among the parameters {', '.join(map(str, parameters))}"
            raise InvalidArgument(msg)
        return [sp.sympify(rates.get(theta, 1)) for theta in parameters]
    rates = [sp.sympify(r) for r in rates]
    if len(rates) != len(parameters):
        msg = f"rates has {len(rates)} entries for {len(parameters)} parameters; give one per parameter"
        raise InvalidArgument(msg)
    return rates


def _field(flow: Sequence[sp.Expr], state: Sequence[sp.Symbol]) -> tuple[list[sp.Expr], list[sp.Symbol]]:
    state = _symbols(state, "state")
    flow = [sp.sympify(f) for f in flow]
    if len(flow) != len(state):
        msg = (f"flow has {len(flow)} right-hand sides for {len(state)} state variables "
               f"({', '.join(map(str, state))}); give one per state variable")
        raise InvalidArgument(msg)
    return flow, state


def induced_flow(
    flow: Sequence[sp.Expr], parameters: Sequence[sp.Symbol], reduced: Mapping[sp.Symbol, sp.Expr]
) -> dict[sp.Symbol, sp.Expr]:
    """Return the flow induced on reduced variables by the chain rule: dq/dt = Σ_i ∂q/∂θ_i · dθ_i/dt.

    Parameters
    ----------
    flow
        dθ_i/dt, aligned with ``parameters`` (any vector field).
    parameters
        The state θ.
    reduced
        ``{q: q(θ)}``, e.g. ``{P: w_Q*w_K}``.

    Returns
    -------
    dict
        ``{q: dq/dt}`` as expressions in θ (for P = w_Q w_K under the gradient flow of L(P):
        dP/dt = -(w_Q² + w_K²) ∂_P L). The induced flow closes on the q only where these
        expressions do; :func:`reduced_flow` restricts a flow to a manifold.
    """
    flow, parameters = _field(flow, parameters)
    out = {}
    for q, expr in reduced.items():
        expr = sp.sympify(expr)
        out[q] = sp.Add(*(d * v for d, v in zip(gradient(expr, parameters), flow, strict=True) if d != 0))
    return out


def reduced_flow(
    flow: Sequence[sp.Expr],
    parameters: Sequence[sp.Symbol],
    manifold: Mapping[sp.Symbol, sp.Expr],
    coordinates: Sequence[sp.Symbol],
    *,
    seconds: float = 10.0,
) -> list[sp.Expr]:
    """Return dq/dt of the flow restricted to a manifold θ = Φ(q), in the manifold's coordinates q.

    ``manifold`` gives θ_j = Φ_j(q) for the parameters it names; every other parameter must be one
    of the ``coordinates`` (θ_j = q_j). On the manifold the flow must be tangent to it,
    f(Φ(q)) = DΦ(q) q̇; q̇ is the solution (DΦᵀDΦ)q̇ = DΦᵀ f(Φ(q)), and the residual
    DΦ q̇ - f(Φ(q)) must simplify to zero. For the balanced manifold w_Q = w_K = w of a loss of
    P = w_Q w_K, dw/dt = -w ∂_P L at P = w² (spec ih.dv.balanced_flow).

    Raises
    ------
    InvalidArgument
        When the manifold is not invariant (a residual that is not zero, or that SymPy could not
        show to be zero within ``seconds``), naming the parameter.
    """
    from derivations.core import time_limit

    flow, parameters = _field(flow, parameters)
    coordinates = _symbols(coordinates, "coordinates")
    unknown = [str(k) for k in manifold if k not in parameters]
    if unknown:
        msg = f"manifold names {', '.join(unknown)}, not among the parameters {', '.join(map(str, parameters))}"
        raise InvalidArgument(msg)
    phi = []
    for theta in parameters:
        if theta in manifold:
            phi.append(sp.sympify(manifold[theta]))
        elif theta in coordinates:
            phi.append(theta)
        else:
            msg = (f"parameter {theta} is neither given by the manifold nor one of the coordinates "
                   f"({', '.join(map(str, coordinates))}); add it to one of them")
            raise InvalidArgument(msg)
    on = dict(zip(parameters, phi, strict=True))
    v = sp.Matrix([f.xreplace(on) for f in flow])
    D = sp.Matrix(phi).jacobian(coordinates)
    gram = D.T * D
    if gram.det() == 0:
        msg = f"the manifold's parameterisation {on} is degenerate in {coordinates} (DΦ has not full rank)"
        raise InvalidArgument(msg)
    qdot = gram.LUsolve(D.T * v)
    if D.free_symbols:  # a curved manifold: (DΦᵀDΦ)⁻¹ holds q in its denominators
        qdot = qdot.applyfunc(sp.cancel)
    residual = D * qdot - v
    for theta, r in zip(parameters, residual, strict=True):
        if r == 0:
            continue
        try:
            with time_limit(seconds):
                zero = sp.simplify(r) == 0
        except TimeoutError:
            zero = False
        if not zero:
            msg = (f"the flow is not tangent to the manifold at d{theta}/dt: residual {sp.sstr(r)[:200]} "
                   "(or SymPy could not simplify it to 0); the manifold is not invariant")
            raise InvalidArgument(msg)
    return list(qdot)


def jacobian(flow: Sequence[sp.Expr], state: Sequence[sp.Symbol]) -> sp.Matrix:
    """Return the Jacobian J_ij = ∂f_i/∂x_j of a flow dx/dt = f(x) (rows: outputs, columns: state)."""
    flow = [sp.sympify(f) for f in flow]
    state = _symbols(state, "state")
    return sp.Matrix([[sp.diff(f, x) for x in state] for f in flow])


@dataclass(frozen=True)
class FixedPoints:
    """The zeros of a flow found by SymPy.

    ``points`` holds each zero as ``{state symbol: value}``; ``closed_form`` is False when SymPy
    found no closed form (``reason`` says why: unsolved, timed out, solved only implicitly), and
    then ``points`` is empty and says nothing about whether zeros exist: locate them numerically.
    """

    points: tuple[dict[sp.Symbol, sp.Expr], ...]
    closed_form: bool
    reason: str = ""


def fixed_points(
    flow: Sequence[sp.Expr],
    state: Sequence[sp.Symbol],
    *,
    assumptions: Mapping[sp.Symbol, Mapping[str, bool]] | None = None,
    seconds: float = 20.0,
) -> FixedPoints:
    """Return the zeros f(x*) = 0 of a flow dx/dt = f(x), by ``sympy.solve``.

    ``assumptions`` restricts state symbols, e.g. ``{w: {"positive": True}}`` (solutions outside are
    dropped by SymPy). A system SymPy cannot solve, cannot solve within ``seconds``, or solves only
    as an implicit relation gives ``FixedPoints((), closed_form=False, reason=...)``, never an error.
    """
    from derivations.core import time_limit

    flow, state = _field(flow, state)
    assumptions = dict(assumptions or {})
    unknown = [str(k) for k in assumptions if k not in state]
    if unknown:
        msg = f"assumptions name {', '.join(unknown)}, not among the state {', '.join(map(str, state))}"
        raise InvalidArgument(msg)
    restricted = {x: sp.Dummy(x.name, **{**x.assumptions0, **assumptions[x]}) for x in assumptions}
    back = {d: x for x, d in restricted.items()}
    unknowns = [restricted.get(x, x) for x in state]
    equations = [f.xreplace(restricted) for f in flow]
    try:
        with time_limit(seconds):
            solutions = sp.solve(equations, unknowns, dict=True)
    except TimeoutError:
        return FixedPoints((), False, f"not found in closed form: sympy.solve took more than {seconds:g} s")
    except NotImplementedError as err:
        return FixedPoints((), False, f"not found in closed form: sympy.solve cannot solve this system ({err})")
    points = []
    for sol in solutions:
        if set(sol) != set(unknowns):
            missing = ", ".join(str(back.get(u, u)) for u in unknowns if u not in sol)
            return FixedPoints((), False, f"not found in closed form: a family of zeros, free in {missing}")
        points.append({back.get(u, u): sol[u].xreplace(back) for u in unknowns})
    return FixedPoints(tuple(points), True, "" if points else "sympy.solve finds no zero")


@dataclass(frozen=True)
class Linearisation:
    """A flow linearised at a point: d(δx)/dt = J δx, with J's eigenvalues (with multiplicity)."""

    point: dict[sp.Symbol, sp.Expr]
    matrix: sp.Matrix
    eigenvalues: tuple[sp.Expr, ...]


def linearisation(
    flow: Sequence[sp.Expr], state: Sequence[sp.Symbol], point: Mapping[sp.Symbol, sp.Expr]
) -> Linearisation:
    """Return J = ∂f/∂x at ``point`` (a mapping of every state symbol) and its eigenvalues.

    At a fixed point, eigenvalues with negative real parts everywhere mean a stable node/focus,
    of both signs a saddle; a zero eigenvalue leaves the linearisation undecided.
    """
    flow, state = _field(flow, state)
    missing = [str(x) for x in state if x not in point]
    if missing:
        msg = f"point gives no value for {', '.join(missing)}; give every state variable"
        raise InvalidArgument(msg)
    at = {x: sp.sympify(point[x]) for x in state}
    J = jacobian(flow, state).subs(at)
    return Linearisation(at, J, tuple(J.eigenvals(multiple=True)))


def lie_series(
    flow: Sequence[sp.Expr], state: Sequence[sp.Symbol], observable: sp.Expr, t: sp.Symbol, order: int
) -> sp.Expr:
    """Return the Taylor series in t of an observable along the flow, to O(t^order) (exclusive).

    g(x(t)) = Σ_{k<order} t^k/k! (𝓛^k g)(x(0)) with the Lie derivative 𝓛g = Σ_j f_j ∂g/∂x_j;
    the state symbols stand for x(0). With ``observable = x_j`` this is the series of x_j(t).
    """
    flow, state = _field(flow, state)
    if not isinstance(order, int) or order < 1:
        msg = f"order={order!r} must be a positive integer (number of terms)"
        raise InvalidArgument(msg)
    term, total = sp.sympify(observable), sp.Integer(0)
    for k in range(order):
        total += term * t**k / sp.factorial(k)
        term = sp.Add(*(f * d for f, d in zip(flow, gradient(term, state), strict=True)))
    return total


def reduced_velocity(loss_in_P: sp.Expr, P: sp.Symbol, w: sp.Symbol, mode: str) -> sp.Expr:
    """dw/dt on the balanced manifold P = w²: ``reparameterised`` -dL(w²)/dw, ``balanced`` -w ∂_P L at P = w²."""
    if mode == "reparameterised":
        return -sp.diff(loss_in_P.subs(P, w**2), w)
    if mode == "balanced":
        return (-w * sp.diff(loss_in_P, P)).subs(P, w**2)
    raise InvalidArgument(f"mode={mode!r} is not one of {', '.join(REDUCED_MODES)}")


def induced_pair_flow(loss_in_P: sp.Expr, P: sp.Symbol, w_Q: sp.Symbol, w_K: sp.Symbol) -> list[sp.Expr]:
    """(dw_Q/dt, dw_K/dt) of the full gradient flow of L(P = w_Q w_K)."""
    return gradient_flow(loss_in_P.subs(P, w_Q * w_K), [w_Q, w_K])


def balanced_manifold_flow(
    loss: sp.Expr, w: sp.Symbol, others: Sequence[sp.Symbol], mode: str
) -> list[sp.Expr]:
    """(dw/dt, d(others)/dt) of a loss L(w, others) that depends on w only through P = w², w > 0.

    w is the coordinate of the balanced manifold w_Q = w_K = w of a product P = w_Q w_K; dw/dt is
    :func:`reduced_velocity` of L(P = w²) in ``mode`` (``reparameterised``: -∂L/∂w; ``balanced``: the
    restricted pair flow -w ∂_P L, half of it), and every other parameter follows its gradient
    flow d(θ)/dt = -∂L/∂θ.
    """
    P = sp.Dummy("P", positive=True)
    return [reduced_velocity(loss.subs(w, sp.sqrt(P)), P, w, mode), *gradient_flow(loss, others)]
