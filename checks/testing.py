"""Property testing for your own derivations: strategies and assertions that return their evidence.

tdcheck checks papers with four kinds of evidence; this module hands the same tools to users
writing pytest/Hypothesis tests about a model of their own:

:func:`points`
    A Hypothesis strategy for points of a :class:`~derivations.domain.Domain` (or of a
    ``{symbol: (lo, hi)}`` mapping, or of a ``Formula``/claim that declares one): never outside
    the domain, shrinking toward simple values.
:func:`assert_identity`
    A printed closed form against its derivation, through
    :meth:`derivations.core.Formula.verify` (30-digit mpmath at sampled points, plus a symbolic
    zero when every point agrees).
:func:`assert_agrees_with_montecarlo`
    A closed form against a plain Monte-Carlo estimate, refusing integrands whose second moment
    is infinite; :func:`sympy_integrand` builds the integrand from a SymPy expression of iid
    Gaussian or Rademacher variables.
:func:`assert_gradient`
    A gradient (SymPy's, or a printed one) against complex-step or central differences of the loss.
:func:`assert_bound_along`
    An inequality at every saved time of an integrated trajectory.

Every assertion raises :class:`AssertionError` whose message names the counterexample, and
otherwise returns a small record of what it computed (``to_dict()`` gives a JSON-ready form) so a
test may put it in a report. Bad input (an unknown name, a missing parameter) raises
:class:`~derivations.errors.InvalidArgument`; a refused Monte-Carlo estimate raises
:class:`~derivations.errors.NumericalTrouble`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks import agreement, along
from checks.status import Status
from derivations.core import Agreement, Formula
from derivations.domain import Domain, Interval
from derivations.errors import InvalidArgument, NumericalTrouble, unknown_name
from numerics.differences import complex_step_gradient
from numerics.montecarlo import Estimate, MonteCarlo
from numerics.trajectory import Trajectory

__all__ = [
    "BoundAlong",
    "GradientAgreement",
    "MonteCarloAgreement",
    "SympyIntegrand",
    "assert_agrees_with_montecarlo",
    "assert_bound_along",
    "assert_gradient",
    "assert_identity",
    "points",
    "sympy_integrand",
]

Point = dict[sp.Symbol, Any]


# ---- strategies -----------------------------------------------------------------------------


def _domain_of(owner: Any) -> Domain:
    """Return the :class:`Domain` of a Domain, a ``{symbol: range}`` mapping, or what has a ``.domain``."""
    if isinstance(owner, Domain):
        return owner
    if isinstance(owner, Mapping):
        return Domain.from_mapping(owner)
    domain = getattr(owner, "domain", None)
    if isinstance(domain, Domain):
        return domain
    msg = (f"{owner!r} declares no Domain; pass a derivations.domain.Domain, a mapping such as "
           "{a: (0.01, 5), L: range(5, 50)}, or a Formula or claim whose .domain is set")
    raise InvalidArgument(msg)


def _keyed(domain_symbols: Sequence[sp.Symbol], values: Mapping | None, what: str) -> Point:
    """Key ``values`` (by Symbol or by name) by the domain's symbols."""
    names = {s.name: s for s in domain_symbols}
    out: Point = {}
    for key, value in dict(values or {}).items():
        name = key.name if isinstance(key, sp.Symbol) else str(key)
        if name not in names:
            raise unknown_name(what, name, names)
        out[names[name]] = value
    return out


def _narrowed(domain: Domain, sym: sp.Symbol, interval: Interval) -> tuple[float, float, bool, bool]:
    """Return the interval cut down by the constraints on ``sym`` alone (so that few draws are rejected)."""
    lo, hi, lo_open, hi_open = interval.lo, interval.hi, interval.lo_open, interval.hi_open
    if not any(c.relation.free_symbols == {sym} for c in domain.constraints):
        return lo, hi, lo_open, hi_open
    try:
        allowed = domain.valid_range(sym, {})
    except (NotImplementedError, TypeError, ValueError):
        return lo, hi, lo_open, hi_open
    if isinstance(allowed, sp.Interval) and allowed.start.is_real and allowed.end.is_real:
        lo, lo_open = _inward(allowed.start, +1), bool(allowed.left_open)
        hi, hi_open = _inward(allowed.end, -1), bool(allowed.right_open)
    return lo, hi, lo_open, hi_open


def _inward(end: sp.Expr, direction: int) -> float:
    """Return the float nearest an interval end on the inner side (1/sqrt(2) may round outward)."""
    value = float(end)
    if math.isfinite(value) and (sp.Rational(value) - end) * direction < 0:
        value = float(np.nextafter(value, direction * math.inf))
    return value


def _real_strategy(lo: float, hi: float, lo_open: bool, hi_open: bool) -> st.SearchStrategy:
    return st.floats(
        min_value=None if lo == -math.inf else lo,
        max_value=None if hi == math.inf else hi,
        exclude_min=lo_open and lo != -math.inf,
        exclude_max=hi_open and hi != math.inf,
        allow_nan=False,
        allow_infinity=False,
        allow_subnormal=False,
    )


def points(
    domain: Any, fixed: Mapping | None = None, *, integer_max: int | None = None
) -> st.SearchStrategy[Point]:
    """Hypothesis strategy for points of ``domain``: ``{Symbol: value}`` dicts.

    Parameters
    ----------
    domain
        A :class:`~derivations.domain.Domain`; a mapping ``{symbol: range}`` (``(lo, hi)`` for the
        open interval, an :class:`~derivations.domain.Interval`, ``range(5, 50)`` for an integer:
        see :meth:`Domain.from_mapping <derivations.domain.Domain.from_mapping>`); or anything with
        a ``.domain`` (a ``Formula``, a registered claim).
    fixed
        Values to pin, keyed by Symbol or by name; they must lie in the domain.
    integer_max
        Largest value drawn for integer symbols (``L``); by default the largest of the domain's
        sampled values (the closed forms unroll sums of length ``L``, so ``L`` is kept moderate).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Reals are floats (exact binary rationals, so 30-digit evaluation sees exactly the drawn
        value) from the symbol's interval, first narrowed by the constraints on that symbol alone
        (``2*w**2 < 1`` gives ``w < 0.7071``), so that open ends and one-symbol constraints cost
        no rejection; integers are drawn from ``[minimum, integer_max]`` and shrink to the minimum.
        Constraints coupling several symbols are enforced by filtering, and every point is
        checked with :meth:`Domain.contains` before it is returned.
    """
    domain = _domain_of(domain)
    pinned = _keyed(domain.symbols, fixed, "fixed parameter")
    if pinned and not domain.contains(pinned):
        problems = "; ".join(domain.violations(pinned))
        msg = f"fixed={ {s.name: v for s, v in pinned.items()} } lies outside the domain: {problems}"
        raise InvalidArgument(msg)
    parts: dict[str, st.SearchStrategy] = {}
    for sym, (minimum, choices) in domain.integers.items():
        if sym in pinned:
            continue
        top = integer_max if integer_max is not None else max([minimum, *choices])
        if top < minimum:
            msg = (f"integer_max={top} is below {sym.name}'s minimum {minimum}; "
                   f"choose integer_max >= {minimum}")
            raise InvalidArgument(msg)
        parts[sym.name] = st.integers(min_value=minimum, max_value=top)
    for sym, interval in domain.intervals.items():
        if sym in pinned:
            continue
        parts[sym.name] = _real_strategy(*_narrowed(domain, sym, interval))
    by_name = {s.name: s for s in domain.symbols}

    def build(drawn: dict[str, Any]) -> Point:
        point = dict(pinned)
        point.update({by_name[name]: value for name, value in drawn.items()})
        return {s: point[s] for s in domain.symbols if s in point}

    return st.fixed_dictionaries(parts).map(build).filter(domain.contains)


# ---- identities -----------------------------------------------------------------------------


def _names(point: Mapping[sp.Symbol, Any]) -> str:
    return ", ".join(f"{s.name}={v}" for s, v in point.items())


def assert_identity(
    stated: sp.Expr,
    derived: sp.Expr,
    domain: Any,
    *,
    at: Mapping | None = None,
    n_points: int = 8,
    dps: int = 30,
    seed: int = 0,
    symbolic_seconds: float = 2.0,
    name: str = "identity",
) -> Agreement:
    """Assert that the printed ``stated`` equals ``derived`` on ``domain``.

    ``domain`` is a :class:`~derivations.domain.Domain`, a mapping such as ``{a: (0.01, 5),
    L: range(5, 50)}`` (see :func:`points`), or a ``Formula``/claim that declares one.
    The comparison is :meth:`derivations.core.Formula.verify`: both sides at ``n_points`` random
    points of the domain (``seed``), or at the one point ``at`` (e.g. drawn by :func:`points`),
    in mpmath at ``dps`` digits; a relative gap above ``10**(10 - dps)`` is a counterexample.
    When every point agrees, a symbolic zero of the difference (searched for at most
    ``symbolic_seconds``) makes the agreement ``exact``, else it is ``numeric``.

    Returns
    -------
    derivations.core.Agreement
        ``status`` ``exact`` or ``numeric``, and the largest relative gap seen.

    Raises
    ------
    AssertionError
        With the counterexample point, both values, ``stated - derived`` simplified and, when it
        is constant, the ratio stated/derived.
    InvalidArgument
        When a free symbol of either side is not declared by the domain, or ``at`` is outside it.
    """
    domain = _domain_of(domain)
    stated, derived = sp.sympify(stated), sp.sympify(derived)
    formula = Formula(name, "", stated, derived, domain)
    free = set(formula.free_symbols)
    missing = sorted(s.name for s in free - set(domain.symbols))
    if missing:
        msg = (f"{name}: the domain does not declare {missing} (it declares "
               f"{[s.name for s in domain.symbols]}); add an Interval or integer range for each")
        raise InvalidArgument(msg)
    fixed = _keyed(domain.symbols, at, "point coordinate") if at is not None else None
    if fixed is not None:
        bad = domain.violations(fixed)
        if bad:
            msg = f"at={_names(fixed)} is outside the domain: {'; '.join(bad)}"
            raise InvalidArgument(msg)
        n_points = 1
    agreement = formula.verify(
        n_points=n_points, dps=dps, seed=seed, fixed=fixed, symbolic_seconds=symbolic_seconds
    )
    if not agreement.equal:
        point = ", ".join(f"{k}={v}" for k, v in agreement.point.items())
        lines = [
            f"{name}: stated != derived at {point}",
            f"  stated  = {agreement.stated_value}    ({sp.sstr(stated)})",
            f"  derived = {agreement.derived_value}    ({sp.sstr(derived)})",
            f"  stated - derived = {agreement.difference}",
        ]
        if agreement.ratio:
            every = " at every sampled point" if agreement.n_points > 1 else ""
            lines.append(f"  stated / derived = {agreement.ratio}{every}")
        lines.append(f"  (relative gap {agreement.max_relative_gap:.3g} at {dps} digits; seed={seed})")
        raise AssertionError("\n".join(lines))
    return agreement


# ---- Monte-Carlo ----------------------------------------------------------------------------

LAWS = ("gaussian", "rademacher")


@dataclass(frozen=True)
class SympyIntegrand:
    """A SymPy integrand of iid random variables, compiled for :func:`assert_agrees_with_montecarlo`.

    Build it with :func:`sympy_integrand`. ``params`` of the assertion must then be a mapping
    (by Symbol or name) holding a value for each of ``parameters``.
    """

    expr: sp.Expr
    variables: tuple[sp.Symbol, ...]
    parameters: tuple[sp.Symbol, ...]
    law: str
    function: Callable[..., Any]
    #: Conditions for E[expr**2] < oo (``second_moment_conditions``); None when the integrand is
    #: not of the polynomial x exp(quadratic) form the engine decides, with the reason in ``undecided``.
    conditions: tuple[sp.Boolean, ...] | None
    undecided: str = ""

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """Return ``(size, k)`` iid draws of the variables."""
        shape = (size, len(self.variables))
        if self.law == "gaussian":
            return rng.standard_normal(shape)
        return rng.integers(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0

    def values(self, params: Mapping) -> tuple[float, ...]:
        """Return the parameter values in the order of ``parameters``."""
        point = _keyed(self.parameters, params, "parameter of the integrand")
        missing = [s.name for s in self.parameters if s not in point]
        if missing:
            msg = f"params={params!r} gives no value for {missing}; the integrand {self.expr} needs them"
            raise InvalidArgument(msg)
        return tuple(float(point[s]) for s in self.parameters)

    def integrand(self, samples: np.ndarray, params: Mapping) -> np.ndarray:
        """Return the integrand at each row of ``samples``."""
        columns = [samples[:, k] for k in range(samples.shape[1])]
        out = self.function(*columns, *self.values(params))
        return np.ascontiguousarray(np.broadcast_to(np.asarray(out, dtype=np.float64), (samples.shape[0],)))

    def second_moment_finite(self, params: Mapping) -> tuple[bool, str]:
        """Decide ``E[expr**2] < oo`` at ``params`` from the engine's conditions."""
        if self.conditions is None:
            return True, ""
        subs = dict(zip(self.parameters, self.values(params), strict=True))
        for condition in self.conditions:
            value = sp.sympify(condition).subs(subs)
            if value is not sp.true:
                where = ", ".join(f"{s.name}={v:g}" for s, v in subs.items())
                return False, f"{sp.sstr(condition)} violated at {where}"
        return True, ""


def sympy_integrand(
    expr: sp.Expr, variables: Sequence[sp.Symbol], *, law: str = "gaussian"
) -> SympyIntegrand:
    """Compile ``expr``, a function of iid ``variables`` and of parameters, for Monte-Carlo.

    Parameters
    ----------
    expr
        SymPy expression; its free symbols other than ``variables`` are parameters.
    variables
        The random variables, iid N(0, 1) (``law="gaussian"``) or uniform on {-1, +1}
        (``law="rademacher"``).

    Notes
    -----
    The integrand is compiled with ``sympy.lambdify(..., "numpy")`` (fine for tests; tdcheck's
    own kernels are generated by :mod:`numerics.compile`). When ``expr`` is a sum of
    polynomial x exp(quadratic) terms, :func:`derivations.expectation.second_moment_conditions`
    gives the conditions under which its second moment is finite, and the assertion refuses
    parameters that violate them; otherwise only the empirical heavy-tail guard applies.
    """
    from derivations.expectation import second_moment_conditions

    if law not in LAWS:
        error = unknown_name("law", law, LAWS)
        raise error
    expr = sp.sympify(expr)
    variables = tuple(variables)
    if not variables or not all(isinstance(v, sp.Symbol) for v in variables):
        msg = f"variables={variables!r} must be a non-empty sequence of SymPy symbols (the random variables)"
        raise InvalidArgument(msg)
    parameters = tuple(sorted(expr.free_symbols - set(variables), key=lambda s: s.name))
    function = sp.lambdify([*variables, *parameters], expr, modules="numpy")
    try:
        conditions: tuple | None = second_moment_conditions(expr, variables, law=law)
        undecided = ""
    except InvalidArgument as exc:
        conditions, undecided = None, str(exc)
    return SympyIntegrand(expr, variables, parameters, law, function, conditions, undecided)


@dataclass(frozen=True)
class MonteCarloAgreement:
    """A closed form compared with a Monte-Carlo estimate: value, estimate and their z-score."""

    closed_form: float
    estimate: Estimate
    z: float
    k_se: float
    params: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready record."""
        record = asdict(self)
        record["params"] = repr(self.params)
        return record


def _closed_form_value(closed_form: Any, params: Any) -> float:
    if callable(closed_form) and not isinstance(closed_form, sp.Basic):
        return float(closed_form(params))
    expr = sp.sympify(closed_form)
    if expr.free_symbols:
        if not isinstance(params, Mapping):
            msg = (f"closed_form {expr} has free symbols {sorted(s.name for s in expr.free_symbols)}; pass "
                   "params as a mapping {symbol or name: value} so that it can be evaluated")
            raise InvalidArgument(msg)
        given = {(k.name if isinstance(k, sp.Symbol) else str(k)): v for k, v in params.items()}
        missing = sorted(s.name for s in expr.free_symbols if s.name not in given)
        if missing:
            msg = f"params={params!r} gives no value for {missing} of the closed form {expr}"
            raise InvalidArgument(msg)
        # exact rationals (a float is a binary rational): the closed form is then evaluated at 30 digits
        expr = expr.xreplace({s: sp.Rational(given[s.name]) for s in expr.free_symbols})
    value = complex(sp.N(expr, 30))
    if value.imag != 0 or not math.isfinite(value.real):
        msg = f"closed_form evaluates to {value} at params={params!r}: not a finite real number"
        raise InvalidArgument(msg)
    return value.real


def assert_agrees_with_montecarlo(
    closed_form: Any,
    integrand: Callable[..., np.ndarray] | SympyIntegrand,
    draw: Callable[[np.random.Generator, int], Any] | None = None,
    *,
    n: int,
    seed: int = 0,
    params: Any = (),
    k_se: float = agreement.K_SE,
    second_moment_finite: Callable[[Any], tuple[bool, str]] | None = None,
    allow_heavy_tail: bool | None = None,
) -> MonteCarloAgreement:
    """Assert that ``closed_form`` equals ``E[integrand(X, params)]``, ``X ~ draw``, within ``k_se`` SE.

    Parameters
    ----------
    closed_form
        A number, a SymPy expression (evaluated at ``params``, a mapping by Symbol or name) or a
        callable ``closed_form(params) -> float``.
    integrand, draw
        As for :class:`numerics.montecarlo.MonteCarlo`: ``draw(rng, size)`` returns the samples
        (array or tuple of arrays, first axis the sample axis) and ``integrand(*samples, params)``
        a float64 array with one value per sample. Or ``integrand`` is a :class:`SympyIntegrand`
        (see :func:`sympy_integrand`) and ``draw`` is omitted.
    n, seed
        Samples and root seed of the estimate (reproducible: see :mod:`numerics.montecarlo`).
    params
        Passed unchanged to the integrand (and used to evaluate ``closed_form``).
    k_se
        Allowed ``|closed_form - mean| / se``. 4 standard errors: a false alarm about once in
        16 000 runs of a correct formula.
    second_moment_finite
        ``params -> (bool, reason)``: the estimate is refused where the integrand's second moment
        is infinite (the standard error would be meaningless). A :class:`SympyIntegrand` supplies
        it from :func:`derivations.expectation.second_moment_conditions` when not given.
    allow_heavy_tail
        Whether to compare an estimate in which one sample owns more than a tenth of the sum of
        squares (``Estimate.heavy_tail_suspect``, an empirical backstop). By default (None) it is
        refused unless the second moment is known to be finite (``second_moment_finite`` given, or
        decided for a :class:`SympyIntegrand`): a finite but large fourth moment also trips it.

    Returns
    -------
    MonteCarloAgreement

    Raises
    ------
    AssertionError
        When the closed form lies more than ``k_se`` standard errors from the estimate; the message
        gives both values, the standard error, ``n``, the seed and the params.
    NumericalTrouble
        When the estimate is refused (infinite second moment, heavy-tail suspect, non-finite values).
    """
    if isinstance(integrand, SympyIntegrand):
        if draw is not None:
            msg = "draw must be omitted with a SympyIntegrand (it draws its own variables)"
            raise InvalidArgument(msg)
        compiled = integrand
        draw, integrand = compiled.draw, compiled.integrand
        if second_moment_finite is None and compiled.conditions is not None:
            second_moment_finite = compiled.second_moment_finite
        compiled.values(params)  # a missing parameter is bad input, reported before anything is drawn
    elif draw is None:
        msg = "draw is required with a callable integrand: draw(rng, size) -> samples"
        raise InvalidArgument(msg)
    value = _closed_form_value(closed_form, params)
    estimator = MonteCarlo(draw, integrand, n=n, seed=seed, second_moment_finite=second_moment_finite)
    estimate = estimator.estimate(params)
    if allow_heavy_tail is None:
        allow_heavy_tail = second_moment_finite is not None
    if estimate.heavy_tail_suspect and not allow_heavy_tail:
        msg = (f"Monte-Carlo estimate at params={params!r} refused: one sample owns "
               f"{estimate.max_share:.0%} of the sum of squares (n={n}, seed={seed}), so the standard "
               "error is not trustworthy; the second moment may be infinite. Check it, increase n, or "
               "pass allow_heavy_tail=True")
        raise NumericalTrouble(msg)
    z = agreement.z_score(estimate, value)
    evidence = MonteCarloAgreement(value, estimate, z, float(k_se), params)
    if not agreement.agrees(estimate, value, k_se):
        msg = (f"closed form disagrees with Monte-Carlo at params={params!r}:\n"
               f"  closed form = {value:.10g}\n"
               f"  Monte-Carlo = {estimate.mean:.10g} ± {estimate.se:.3g} (n={n}, seed={seed})\n"
               f"  |z| = {abs(z):.3g} > k_se = {k_se:g}")
        raise AssertionError(msg)
    return evidence


# ---- gradients ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GradientAgreement:
    """A gradient compared with numerical differentiation of the loss, component by component."""

    method: str
    point: dict[str, float]
    symbolic: dict[str, float]
    numeric: dict[str, float]
    max_relative_gap: float

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready record."""
        return asdict(self)


_GRADIENT_METHODS = ("complex-step", "finite-difference")


def assert_gradient(
    loss: sp.Expr,
    params: Sequence[sp.Symbol | str],
    point: Mapping,
    *,
    gradient: Sequence[sp.Expr] | None = None,
    method: str = "complex-step",
    rtol: float | None = None,
    atol: float = 1e-12,
) -> GradientAgreement:
    """Assert that the gradient of ``loss`` in ``params`` matches numerical differentiation at ``point``.

    Parameters
    ----------
    loss
        SymPy expression of real symbols.
    params
        The symbols (or names) to differentiate with respect to.
    point
        A value for every free symbol of ``loss`` (by Symbol or name).
    gradient
        A printed gradient to check, one expression per parameter; by default SymPy's ``diff``.
    method
        ``"complex-step"``: ``Im f(x + i h e_k) / h`` with ``h = 1e-30``, exact to rounding but
        requiring a loss analytic in each parameter (no ``Abs``, ``Max``, ``sign``);
        ``"finite-difference"``: central differences with ``h = eps**(1/3) * max(1, |x_k|)``.
    rtol, atol
        A component passes when ``|g - g_num| <= atol + rtol * max(|g|, |g_num|)``; ``rtol``
        defaults to 1e-9 (complex-step) or 1e-6 (finite differences).

    Returns
    -------
    GradientAgreement

    Raises
    ------
    AssertionError
        Naming each disagreeing component with both values, at the point.
    """
    if method not in _GRADIENT_METHODS:
        error = unknown_name("method", method, _GRADIENT_METHODS)
        raise error
    loss = sp.sympify(loss)
    symbols = sorted(loss.free_symbols, key=lambda s: s.name)
    by_name = {s.name: s for s in symbols}
    wrt = []
    for p in params:
        name = p.name if isinstance(p, sp.Symbol) else str(p)
        if name not in by_name:
            error = unknown_name("parameter of the loss", name, by_name)
            raise error
        wrt.append(by_name[name])
    values = _keyed(symbols, point, "coordinate of the point")
    missing = [s.name for s in symbols if s not in values]
    if missing:
        msg = f"point={point!r} gives no value for {missing}; give every free symbol of the loss"
        raise InvalidArgument(msg)
    if gradient is None:
        gradient = [sp.diff(loss, p) for p in wrt]
    elif len(gradient) != len(wrt):
        msg = f"gradient has {len(gradient)} components for {len(wrt)} params; give one per parameter"
        raise InvalidArgument(msg)
    x = np.array([float(values[s]) for s in symbols])
    f = sp.lambdify(symbols, loss, modules="numpy")
    g = sp.lambdify(symbols, list(map(sp.sympify, gradient)), modules="numpy")
    symbolic = [float(v) for v in g(*x)]
    columns = [symbols.index(p) for p in wrt]
    if method == "complex-step":
        numeric = [float(v) for v in complex_step_gradient(lambda z: f(*z), x, components=columns)]
    else:
        numeric = []
        for k in columns:
            h = np.finfo(float).eps ** (1 / 3) * max(1.0, abs(x[k]))
            up, down = x.copy(), x.copy()
            up[k] += h
            down[k] -= h
            numeric.append(float((f(*up) - f(*down)) / (2 * h)))
    rtol = rtol if rtol is not None else (1e-9 if method == "complex-step" else 1e-6)
    gaps, wrong = [], []
    for p, a, b in zip(wrt, symbolic, numeric, strict=True):
        scale = max(abs(a), abs(b))
        gap = abs(a - b) / scale if scale else 0.0
        gaps.append(gap if math.isfinite(gap) else math.inf)
        if not abs(a - b) <= atol + rtol * scale:
            wrong.append(f"  d/d{p.name}: gradient = {a:.15g}, {method} = {b:.15g} (relative gap {gap:.3g})")
    at = {s.name: float(values[s]) for s in symbols}
    evidence = GradientAgreement(
        method, at, {p.name: a for p, a in zip(wrt, symbolic, strict=True)},
        {p.name: b for p, b in zip(wrt, numeric, strict=True)}, max(gaps, default=0.0),
    )
    if wrong:
        where = ", ".join(f"{k}={v:.15g}" for k, v in at.items())
        raise AssertionError("\n".join([f"gradient disagrees with {method} at {where}:", *wrong]))
    return evidence


# ---- bounds along trajectories --------------------------------------------------------------


@dataclass(frozen=True)
class BoundAlong:
    """An inequality evaluated at every saved time of a trajectory: the worst time and margin."""

    n_times: int
    worst_time: float
    worst_margin: float
    worst_state: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready record."""
        return asdict(self)


def _trajectory(trajectory: Any, names: Sequence[str]) -> tuple[Trajectory, np.ndarray, list[str]]:
    """The trajectory, its states as an (m, n_state) matrix in ``names`` order, and the state labels."""
    if isinstance(trajectory, Trajectory):
        labels = list(names) or [k for k, v in trajectory.states.items() if v.ndim == 1]
        missing = [n for n in labels if n not in trajectory.states]
        if missing:
            msg = f"names={tuple(names)!r}: {missing} are not states of the trajectory ({list(trajectory.states)})"
            raise InvalidArgument(msg)
        y = np.column_stack([trajectory.states[n] for n in labels]) if labels else np.empty((len(trajectory), 0))
        return trajectory, y, labels
    if hasattr(trajectory, "t") and hasattr(trajectory, "y"):
        t, y = trajectory.t, trajectory.y
    elif isinstance(trajectory, tuple | list) and len(trajectory) == 2:
        t, y = trajectory
    else:
        msg = (f"trajectory={type(trajectory).__name__} must be a numerics.trajectory.Trajectory, a "
               "numerics.ode.Solution (with save_at) or a pair (times, states)")
        raise InvalidArgument(msg)
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 1:
        y = y[:, None]
    if t.ndim != 1 or y.ndim != 2 or y.shape[0] != t.size or t.size == 0:
        msg = (f"trajectory has times of shape {t.shape} and states of shape {y.shape}; expected (m,) "
               "and (m, n_state) with m >= 1 (integrate with save_at=... to keep the states)")
        raise InvalidArgument(msg)
    labels = list(names) if len(names) == y.shape[1] else [f"y[{k}]" for k in range(y.shape[1])]
    return Trajectory(t, {label: y[:, k] for k, label in enumerate(labels)}), y, labels


def _margin_function(bound: Any, names: Sequence[str], time: str, params: Mapping, n_state: int):
    if callable(bound) and not isinstance(bound, sp.Basic):
        def pointwise(t: np.ndarray, y: np.ndarray) -> np.ndarray:
            return np.array([float(bound(ti, yi)) for ti, yi in zip(t, y, strict=True)])

        return pointwise, getattr(bound, "__name__", str(bound))
    if not isinstance(bound, sp.core.relational.Relational) or isinstance(bound, sp.Eq | sp.Ne):
        msg = (f"bound={bound!r} must be a SymPy inequality (<, <=, >, >=) in the state names, or a "
               "callable bound(t, y) -> margin (>= 0 where the bound holds)")
        raise InvalidArgument(msg)
    if len(names) != n_state:
        msg = f"names={tuple(names)!r} gives {len(names)} names for {n_state} state components; give one each"
        raise InvalidArgument(msg)
    upper = isinstance(bound, sp.LessThan | sp.StrictLessThan)
    margin = bound.rhs - bound.lhs if upper else bound.lhs - bound.rhs
    state = [sp.Symbol(n) for n in names]
    t_sym = sp.Symbol(time)
    allowed = {s.name for s in state} | {time}
    fixed = {}
    for s in margin.free_symbols:
        if s.name in allowed:
            continue
        if s.name not in {(k.name if isinstance(k, sp.Symbol) else k) for k in params}:
            msg = f"bound {bound} uses {s.name}, which is neither a state name {tuple(names)} nor in params"
            raise InvalidArgument(msg)
        fixed[s] = next(v for k, v in params.items() if (k.name if isinstance(k, sp.Symbol) else k) == s.name)
    by_name = {s.name: s for s in margin.free_symbols}
    margin = margin.subs(fixed).subs({by_name[n]: sp.Symbol(n) for n in allowed if n in by_name})
    function = sp.lambdify([t_sym, *state], margin, modules="numpy")

    def evaluate(t: np.ndarray, y: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            out = function(t, *[y[:, k] for k in range(y.shape[1])])
        return np.broadcast_to(np.asarray(out, dtype=np.float64), t.shape)

    return evaluate, sp.sstr(bound)


def assert_bound_along(
    trajectory: Any,
    bound: Any,
    *,
    names: Sequence[str] = (),
    time: str = "t",
    params: Mapping | None = None,
    strict: bool | None = None,
) -> BoundAlong:
    """Assert that an inequality holds at every saved time of a trajectory.

    Parameters
    ----------
    trajectory
        A :class:`numerics.trajectory.Trajectory` (its scalar states, or those in ``names``), a
        :class:`numerics.ode.Solution` integrated with ``save_at`` (its ``t`` and ``y``), or a pair
        ``(times (m,), states (m, n_state))``.
    bound
        A SymPy inequality in the state ``names``, the time symbol ``time`` and symbols given in
        ``params`` (e.g. ``u**2 + v**2 <= 1``), or a callable ``bound(t, y) -> margin`` that is
        ``>= 0`` where the bound holds (called once per saved time).
    strict
        Require ``margin > 0``; by default strict for ``<``/``>`` and non-strict otherwise.

    Returns
    -------
    BoundAlong
        The number of times checked, the time of the smallest margin, that margin and the state.

    Raises
    ------
    AssertionError
        At the worst point: time, state and margin. The test is the claims' own
        (:func:`checks.along.pointwise`); a NaN margin decides nothing, so it is not a pass.

    Notes
    -----
    Only the saved times are checked: save densely enough for the question being asked.
    """
    run, y, labels = _trajectory(trajectory, names)
    evaluate, shown = _margin_function(bound, labels if names or isinstance(trajectory, Trajectory) else names, time, dict(params or {}), y.shape[1])
    margins = np.asarray(evaluate(run.t, y), dtype=np.float64)
    if strict is None:
        strict = isinstance(bound, sp.StrictLessThan | sp.StrictGreaterThan)
    # the claims' kind (checks.along): -margin <= 0 at every saved time, with the status algebra's NaN rule
    part = along.pointwise(run, np.ones(run.t.size, dtype=bool), -margins, 0.0, tol=0.0, strict=strict,
                           statement=shown)
    bad = np.isnan(margins)
    worst = int(np.flatnonzero(bad)[0]) if bad.any() else int(np.argmin(margins))
    state = run.scalar_row(worst)
    evidence = BoundAlong(int(run.t.size), float(run.t[worst]), float(margins[worst]), state)
    if part["status"] != Status.HOLDS:
        n_bad = int(np.sum(~(margins > 0) if strict else ~(margins >= 0)))
        where = ", ".join(f"{k}={v:.10g}" for k, v in state.items())
        undecided = "" if part["status"] == Status.FAILS else " (a NaN margin decides nothing: not a pass)"
        msg = (f"bound {shown} violated at {n_bad}/{run.t.size} saved times{undecided}; worst at "
               f"t={run.t[worst]:.10g} ({where}): margin {margins[worst]:.6g}")
        raise AssertionError(msg)
    return evidence
