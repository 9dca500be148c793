"""NumPy evaluation of SymPy expressions: the printer, the vectorised stable helpers and the wrapper.

:func:`numerics.compile.array_function` prepares an expression as for a kernel (stable forms,
``expm1``/``log1p``/``logaddexp`` rewrites, the whitelist of :func:`numerics.printer.check_supported`,
``cse``) and prints it with :class:`ArrayPrinter` into a plain Python module: NumPy calls on
arrays, no numba, nothing to compile. It is for one-off evaluation (a bound on a trajectory's
samples, a closed form on a grid) where compiling a kernel would cost more than it saves; hot
loops use :func:`numerics.compile.grid_kernel`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import sympy as sp

from derivations.errors import InvalidArgument
from numerics.printer import MATH_FUNCTIONS, NumbaPrinter

#: SymPy function class name → NumPy (or ``scipy.special``) ufunc, for every function of the kernel whitelist.
ARRAY_FUNCTIONS: dict[str, str] = {
    **{name: f"np.{name}" for name in MATH_FUNCTIONS},
    "acos": "np.arccos", "acosh": "np.arccosh", "asin": "np.arcsin", "asinh": "np.arcsinh",
    "atan": "np.arctan", "atan2": "np.arctan2", "atanh": "np.arctanh", "ceiling": "np.ceil",
    "erf": "special.erf", "erfc": "special.erfc", "gamma": "special.gamma", "loggamma": "special.gammaln",
}  # fmt: skip


def expm1_ratio(c, x):
    """Return expm1(c·x)/expm1(x) elementwise, c at x = 0 (the NumPy twin of :func:`numerics.stable.expm1_ratio`)."""
    c, x = np.broadcast_arrays(np.asarray(c, dtype=np.float64), np.asarray(x, dtype=np.float64))
    zero = x == 0.0
    flip = (x > 0.0) & (c > 0.0)
    safe = np.where(zero, 1.0, x)
    with np.errstate(invalid="ignore", divide="ignore"):
        # x > 0, c > 0: expm1(cx)/expm1(x) = e^{(c-1)x}·expm1(-cx)/expm1(-x), finite unless the value overflows
        flipped = np.exp((c - 1.0) * safe) * (np.expm1(-c * safe) / np.expm1(-safe))
        plain = np.expm1(c * safe) / np.expm1(safe)
    return np.where(zero, c, np.where(flip, flipped, plain))


class ArrayPrinter(NumbaPrinter):
    """Print SymPy expressions as NumPy code that evaluates elementwise on broadcast float64 arrays.

    The numbers and the refusals are :class:`~numerics.printer.NumbaPrinter`'s; functions become
    NumPy ufuncs (``scipy.special`` for erf, erfc, gamma, loggamma), Piecewise nested ``np.where``,
    Max/Min ``np.maximum``/``np.minimum`` (NaN propagates), logic ``np.logical_*``.
    """

    printmethod = "_arraycode"
    language = "Python (NumPy)"
    _kf = ARRAY_FUNCTIONS  # noqa: RUF012 (PythonCodePrinter reads its known functions from here)

    def _print_Pow(self, expr, rational=False):
        base, exponent = expr.as_base_exp()
        if exponent.is_Integer and 2 <= abs(int(exponent)) <= 4 and base.is_Symbol:
            product = "*".join([self._print(base)] * abs(int(exponent)))
            return f"({product})" if exponent > 0 else f"(1/({product}))"
        return self._hprint_Pow(expr, rational=rational, sqrt="np.sqrt")

    def _print_Abs(self, expr):
        return f"np.abs({self._print(expr.args[0])})"

    def _print_sign(self, expr):
        return f"np.sign({self._print(expr.args[0])})"

    def _print_Mod(self, expr):
        return f"np.mod({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _print_logaddexp(self, expr):
        return f"np.logaddexp({self._print(expr.args[0])}, {self._print(expr.args[1])})"

    def _reduce(self, ufunc: str, args) -> str:
        text = self._print(args[-1])
        for a in reversed(args[:-1]):
            text = f"{ufunc}({self._print(a)}, {text})"
        return text

    def _print_Max(self, expr):
        return self._reduce("np.maximum", sorted(expr.args, key=sp.default_sort_key))

    def _print_Min(self, expr):
        return self._reduce("np.minimum", sorted(expr.args, key=sp.default_sort_key))

    def _print_And(self, expr):
        return self._reduce("np.logical_and", sorted(expr.args, key=sp.default_sort_key))

    def _print_Or(self, expr):
        return self._reduce("np.logical_or", sorted(expr.args, key=sp.default_sort_key))

    def _print_Not(self, expr):
        return f"np.logical_not({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr):
        super()._print_Piecewise(expr)  # the refusal of a Piecewise without default branch
        *pairs, (default, _) = expr.args
        text = self._print(default)
        for value, cond in reversed(pairs):
            text = f"np.where({self._print(cond)}, {self._print(value)}, {text})"
        return text


@dataclass(frozen=True, eq=False)
class ArrayFunction:
    """A generated NumPy function of named arguments, broadcasting them.

    ``f(*values)`` takes one value per argument (scalars or arrays of broadcastable shapes; all
    converted to float64) and returns a new float64 array of shape ``shape + broadcast shape``,
    where ``shape`` is ``()`` for one expression, ``(n,)`` for a sequence of n, a matrix's shape
    for a matrix, and the broadcast shape is that of the values the outputs depend on (an output
    free of the array arguments stays a scalar, as in NumPy). With ``overflow`` set, overflow gives ±inf silently (a bound whose value is inf);
    otherwise NumPy's floating-point error state of the caller decides (``np.errstate``).
    """

    name: str
    arg_names: tuple[str, ...]
    shape: tuple[int, ...]
    function: Callable
    overflow: bool
    module: ModuleType = field(repr=False)

    def __call__(self, *values):
        """Evaluate at broadcast ``values`` (one per argument, in order)."""
        if len(values) != len(self.arg_names):
            msg = (f"{self.name}() takes {len(self.arg_names)} values ({', '.join(self.arg_names)}), "
                   f"got {len(values)}")
            raise InvalidArgument(msg)
        arrays = [self._convert(n, v) for n, v in zip(self.arg_names, values, strict=True)]
        try:
            np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError as err:
            shapes = ", ".join(f"{n}: {a.shape}" for n, a in zip(self.arg_names, arrays, strict=True))
            msg = f"{self.name}(): shapes do not broadcast ({shapes})"
            raise InvalidArgument(msg) from err
        if self.overflow:
            with np.errstate(over="ignore"):
                outputs = self.function(*arrays)
        else:
            outputs = self.function(*arrays)
        outputs = np.broadcast_arrays(*(np.asarray(o, dtype=np.float64) for o in outputs))
        return np.stack(outputs).reshape(self.shape + outputs[0].shape)

    def _convert(self, name: str, value) -> np.ndarray:
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            hint = " (complex values are not supported)" if array.dtype.kind == "c" else ""
            msg = f"{self.name}(): {name} has dtype {array.dtype}; expected real numbers{hint}"
            raise InvalidArgument(msg)
        return array.astype(np.float64, copy=False)
