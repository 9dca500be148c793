"""The SymPy printer behind :mod:`numerics.compile`: SymPy expressions → numba-compilable Python.

:class:`NumbaPrinter` is a strict :class:`~sympy.printing.pycode.PythonCodePrinter`: it prints
``math.*`` calls, the helpers of :mod:`numerics.stable` and :mod:`numerics.special` (listed with
their modules in :data:`HELPER_MODULES`, imported by the generated modules), and refuses (with
:class:`~derivations.errors.InvalidArgument`) whatever numba could not compile or would type
badly, instead of printing something that fails later inside numba. :func:`check_supported`
runs the same whitelist over a whole expression tree before any code is generated, so that the
error names the offending sub-expression.

This module also defines the SymPy objects that only make sense for generated code:
:class:`Expm1Ratio` (a stable primitive) and the event placeholders :class:`EventTime` and
:class:`EventState`.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.printing.pycode import PythonCodePrinter

from derivations.errors import InternalError, InvalidArgument

#: SymPy function class name → numba-supported ``math`` function.
MATH_FUNCTIONS: dict[str, str] = {
    "acos": "acos", "acosh": "acosh", "asin": "asin", "asinh": "asinh", "atan": "atan",
    "atan2": "atan2", "atanh": "atanh", "ceiling": "ceil", "cos": "cos", "cosh": "cosh",
    "erf": "erf", "erfc": "erfc", "exp": "exp", "expm1": "expm1", "floor": "floor",
    "gamma": "gamma", "hypot": "hypot", "log": "log", "log10": "log10", "log1p": "log1p",
    "log2": "log2", "loggamma": "lgamma", "sin": "sin", "sinh": "sinh", "tan": "tan", "tanh": "tanh",
}  # fmt: skip

#: Helper functions that generated modules import → the module defining them. The printer prints
#: calls of these names; :func:`helper_imports` gives the import lines for the generated modules.
HELPER_MODULES: dict[str, str] = {
    "expm1_ratio": "numerics.stable",
    "logaddexp": "numerics.stable",
    "sign": "numerics.stable",
    "lambertw0": "numerics.special",
    "geometric_moment0": "numerics.geometric_sums",
    "geometric_moment1": "numerics.geometric_sums",
    "geometric_moment2": "numerics.geometric_sums",
}



def helper_imports() -> list[str]:
    """Return the import lines of all :data:`HELPER_MODULES`: one per module, sorted (deterministic)."""
    names: dict[str, list[str]] = {}
    for name, module in HELPER_MODULES.items():
        names.setdefault(module, []).append(name)
    return [f"from {module} import {', '.join(sorted(names[module]))}" for module in sorted(names)]


_ALLOWED_FUNCTIONS = frozenset(MATH_FUNCTIONS) | {
    "Max",
    "Min",
    "Abs",
    "sign",
    "Expm1Ratio",
    "logaddexp",
    "Mod",
    "LambertW",
}
_ALLOWED_NODES = (
    sp.Symbol, sp.Integer, sp.Rational, sp.Float, sp.Add, sp.Mul, sp.Pow, sp.Max, sp.Min,
    sp.Piecewise, sp.functions.elementary.piecewise.ExprCondPair, sp.Tuple,
    sp.core.relational.Relational, sp.And, sp.Or, sp.Not,
    sp.logic.boolalg.BooleanTrue, sp.logic.boolalg.BooleanFalse,
    sp.core.numbers.Infinity, sp.core.numbers.NegativeInfinity, sp.core.numbers.NaN,
    sp.core.numbers.Pi, sp.core.numbers.Exp1, sp.core.numbers.EulerGamma,
    sp.core.numbers.GoldenRatio, sp.core.numbers.Catalan,
)  # fmt: skip


class Expm1Ratio(sp.Function):
    """expm1(c·x) / expm1(x), equal to c at x = 0; printed as ``numerics.stable.expm1_ratio``.

    M(p) = (1 - e^{-p(L-2)})/(1 - e^{-p}) of the induction-head paper (C.2, "Function II") is
    ``Expm1Ratio(L - 2, -p)``: no cancellation at small p and the right value M(0) = L - 2.
    """

    nargs = 2

    @classmethod
    def eval(cls, c, x):
        """Return c at x = 0; stay unevaluated otherwise."""
        if x.is_zero:
            return c
        return None

    def _eval_rewrite_as_exp(self, c, x, **kwargs):
        return sp.Piecewise((c, sp.Eq(x, 0)), ((sp.exp(c * x) - 1) / (sp.exp(x) - 1), True))

    def _eval_evalf(self, prec):
        return self.rewrite(sp.exp)._eval_evalf(prec)


class EventTime(sp.Symbol):
    """The time at which event ``event`` fired: ``event_times[k]`` in generated event code (NaN before)."""

    def __new__(cls, event: str):
        """Create the placeholder of event ``event``'s firing time."""
        return super().__new__(cls, f"t@{event}", real=True)

    def __getnewargs_ex__(self):
        return ((self.event,), {})

    @property
    def event(self) -> str:
        """Name of the event."""
        return self.name[2:]


class EventState(sp.Symbol):
    """State variable ``state`` at the time event ``event`` fired: ``event_states[k, j]`` in event code."""

    def __new__(cls, event: str, state: str):
        """Create the placeholder of state ``state`` when event ``event`` fired."""
        return super().__new__(cls, f"{state}@{event}", real=True)

    def __getnewargs_ex__(self):
        return ((self.event, self.state), {})

    @property
    def event(self) -> str:
        """Name of the event."""
        return self.name.rsplit("@", 1)[1]

    @property
    def state(self) -> str:
        """Name of the state symbol."""
        return self.name.rsplit("@", 1)[0]


def _has_default(piecewise: sp.Piecewise) -> bool:
    return piecewise.args[-1].cond == sp.true


def _lambertw_branch_message(node: sp.Basic, where: str) -> str:
    return (
        f"LambertW with branch k = {node.args[1]} (in {node}) in {where}: only the principal branch "
        "LambertW(x) (k = 0, numerics.special.lambertw0) has a numba translation"
    )


def check_supported(expr: sp.Basic, where: str) -> None:
    """Raise :class:`InvalidArgument` naming the first sub-expression numba code cannot express.

    ``where`` names the kernel and output (e.g. ``"kernel 'M', output 0"``) for the message.
    """
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Piecewise) and not _has_default(node):
            msg = (
                f"Piecewise without a default branch in {where}: {node}; numba would type the missing "
                "branch as None (an Optional). Add a final (value, True) pair."
            )
            raise InvalidArgument(msg)
        if isinstance(node, AppliedUndef):
            msg = (
                f"undefined function {type(node).__name__} (in {node}) in {where} has no numba "
                "translation; substitute its definition before compiling."
            )
            raise InvalidArgument(msg)
        if isinstance(node, sp.Sum | sp.Product):
            if any(len(limit) != 3 for limit in node.limits):
                msg = f"{type(node).__name__} {node} in {where} needs (variable, lo, hi) limits"
                raise InvalidArgument(msg)
        elif isinstance(node, _ALLOWED_NODES):
            continue
        elif isinstance(node, sp.Function):
            if isinstance(node, sp.LambertW) and len(node.args) != 1:
                raise InvalidArgument(_lambertw_branch_message(node, where))
            if type(node).__name__ not in _ALLOWED_FUNCTIONS:
                msg = (
                    f"function {type(node).__name__} (in {node}) in {where} has no numba translation; "
                    f"supported: {', '.join(sorted(_ALLOWED_FUNCTIONS))}. Rewrite it "
                    "(expr.rewrite(...)) or pass a stable= form built from supported functions."
                )
                raise InvalidArgument(msg)
        else:
            hint = "; complex numbers are not supported" if node.has(sp.I) else ""
            msg = f"{type(node).__name__} (in {node}) in {where} cannot be compiled to numba code{hint}"
            raise InvalidArgument(msg)


class NumbaPrinter(PythonCodePrinter):
    """Print SymPy expressions as Python that numba compiles in nopython mode.

    Settings beyond :class:`PythonCodePrinter`'s:

    ``event_index``
        event name → row k, so that ``EventTime(e)`` prints ``event_times[k]``;
    ``state_index``
        state name → column j, so that ``EventState(e, y)`` prints ``event_states[k, j]``;
    ``helpers``
        names of generated loop helpers (``_sum0`` …), printed as plain calls.

    Symbols print as their names, which :mod:`numerics.compile` has made valid identifiers.
    """

    printmethod = "_numbacode"
    language = "Python (numba)"
    _default_settings = dict(  # noqa: RUF012 (sympy's printers declare their settings this way)
        PythonCodePrinter._default_settings,
        strict=True,
        event_index={},
        state_index={},
        helpers=frozenset(),
    )

    def _print_not_supported(self, expr):
        msg = f"{type(expr).__name__} (in {expr}) cannot be printed as numba code"
        raise InvalidArgument(msg)

    # Numbers: exact where float64 is exact, otherwise the correctly rounded double.
    def _print_Float(self, expr):
        return repr(float(expr))

    def _print_Integer(self, expr):
        if abs(int(expr)) >= 2**63:
            return repr(float(expr))
        return str(int(expr))

    def _print_Rational(self, expr):
        if abs(expr.p) <= 2**53 and expr.q <= 2**53:
            # IEEE division of two exact doubles is correctly rounded: same value as the literal.
            return f"{expr.p}/{expr.q}"
        return repr(float(expr))

    _print_Half = _print_Rational

    def _print_NumberSymbol(self, expr):
        if expr == sp.pi:
            return "math.pi"
        if expr == sp.E:
            return "math.e"
        return repr(float(expr))

    _print_EulerGamma = _print_Catalan = _print_GoldenRatio = _print_NumberSymbol
    _print_Exp1 = _print_Pi = _print_NumberSymbol

    def _print_ImaginaryUnit(self, expr):
        return self._print_not_supported(expr)

    def _print_factorial(self, expr):
        return self._print_not_supported(expr)

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.as_base_exp()
        if exponent.is_Integer and 2 <= abs(int(exponent)) <= 4 and base.is_Symbol:
            product = "*".join([self._print(base)] * abs(int(exponent)))
            return f"({product})" if exponent > 0 else f"(1/({product}))"
        if exponent.is_Rational and exponent.q == 2 and 3 <= abs(exponent.p) <= 7 and base.is_Symbol:
            # x**(n/2) as x**((n-1)/2)*sqrt(x): a sqrt and products instead of pow (NaN for x < 0 either way)
            name = self._print(base)
            product = "*".join([name] * ((abs(exponent.p) - 1) // 2) + [f"math.sqrt({name})"])
            return f"({product})" if exponent > 0 else f"(1/({product}))"
        return super()._print_Pow(expr, rational=rational)

    def _print_sign(self, expr):
        return f"sign({self._print(expr.args[0])})"

    def _print_Expm1Ratio(self, expr):
        return f"expm1_ratio({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_logaddexp(self, expr):
        return f"logaddexp({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_LambertW(self, expr):
        if len(expr.args) != 1:
            raise InvalidArgument(_lambertw_branch_message(expr, "the expression"))
        if self.printmethod != NumbaPrinter.printmethod:
            # a printer for another target (NumPy: ArrayPrinter) that has no twin of the helper
            msg = (
                f"LambertW (in {expr}) has no {self.language} translation; compile it into a kernel "
                "(scalar_kernel, grid_kernel), which calls numerics.special.lambertw0"
            )
            raise InvalidArgument(msg)
        return f"lambertw0({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        if not _has_default(expr):
            msg = (
                f"Piecewise without a default branch: {expr}; numba would type the missing branch as "
                "None (an Optional). Add a final (value, True) pair."
            )
            raise InvalidArgument(msg)
        return super()._print_Piecewise(expr)

    def _print_Function(self, expr):
        name = type(expr).__name__
        if name in self._settings["helpers"]:
            return f"{name}({', '.join(self._print(a) for a in expr.args)})"
        return super()._print_Function(expr)

    def _print_Sum(self, expr):
        msg = f"Sum {expr} reached the printer; numerics.compile should have made it a loop helper"
        raise InternalError(msg)

    _print_Product = _print_Sum

    def _print_EventTime(self, expr):
        index = self._settings["event_index"]
        if expr.event not in index:
            msg = f"event_time({expr.event!r}) used outside the events of a vector field"
            raise InvalidArgument(msg)
        return f"event_times[{index[expr.event]}]"

    def _print_EventState(self, expr):
        events, states = self._settings["event_index"], self._settings["state_index"]
        if expr.event not in events or expr.state not in states:
            msg = f"event_state({expr.event!r}, {expr.state!r}) used outside the events of a vector field"
            raise InvalidArgument(msg)
        return f"event_states[{events[expr.event]}, {states[expr.state]}]"
