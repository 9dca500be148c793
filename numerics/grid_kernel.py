"""The broadcasting Python wrapper of a compiled grid kernel (the top of the kernel ladder, STYLE.md).

:func:`numerics.compile.grid_kernel` builds it; it lives apart from the code generator so that a
kernel recalled from disk (:func:`numerics.stored.stored_build`) needs neither SymPy nor the generator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np

from derivations.errors import InvalidArgument


@dataclass(frozen=True, eq=False)
class GridKernel:
    """A ``prange`` loop kernel behind a Python wrapper that broadcasts and validates its inputs.

    Calling ``g(*values)`` (one value per argument, scalars or arrays of broadcastable shapes)
    returns a float64 array of the broadcast shape. ``kernel(*arrays, out)`` is the loop kernel
    (1-D C-contiguous arrays of equal length: float64, or int64 for integer symbols; ``out``
    float64), ``scalar`` the per-point dispatcher.
    """

    name: str
    arg_names: tuple[str, ...]
    integer: tuple[bool, ...]
    kernel: Callable
    scalar: Callable
    module: ModuleType = field(repr=False)

    def __call__(self, *values):
        """Evaluate at broadcast ``values`` (one per argument, in order); return a float64 array."""
        if len(values) != len(self.arg_names):
            msg = (
                f"{self.name}() takes {len(self.arg_names)} values ({', '.join(self.arg_names)}), "
                f"got {len(values)}"
            )
            raise InvalidArgument(msg)
        arrays = [
            self._convert(n, v, i) for n, v, i in zip(self.arg_names, values, self.integer, strict=True)
        ]
        try:
            shape = np.broadcast_shapes(*(a.shape for a in arrays))
        except ValueError as err:
            shapes = ", ".join(f"{n}: {a.shape}" for n, a in zip(self.arg_names, arrays, strict=True))
            msg = f"{self.name}(): shapes do not broadcast ({shapes})"
            raise InvalidArgument(msg) from err
        flat = [np.ascontiguousarray(np.broadcast_to(a, shape).ravel()) for a in arrays]
        out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=np.float64)
        self.kernel(*flat, out)
        return out.reshape(shape)

    def _convert(self, name: str, value, integer: bool) -> np.ndarray:
        array = np.asarray(value)
        if array.dtype.kind not in "biuf":
            hint = " (complex values are not supported)" if array.dtype.kind == "c" else ""
            msg = f"{self.name}(): {name} has dtype {array.dtype}; expected real numbers{hint}"
            raise InvalidArgument(msg)
        if not integer:
            return array.astype(np.float64, copy=False)
        if array.dtype.kind == "f":
            bad = ~np.isfinite(array) | (array != np.round(array))
            if bad.any():
                msg = (
                    f"{self.name}(): {name}={array[bad].flat[0].item()!r} is not an integer; "
                    f"the symbol {name} is declared integer=True, so pass whole numbers"
                )
                raise InvalidArgument(msg)
        return array.astype(np.int64)
