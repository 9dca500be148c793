"""The Rosenbrock kernels of one vector field: :mod:`numerics._rosenbrock_template` instantiated for it.

The template binds the field's ``rhs``, ``events`` and ``jac``; it imports the set-up of an
integration and the events of a step from the field's instance of :mod:`numerics._field_template`,
the very module the Dormand-Prince kernels of the field use. How, and when the kernels are cached
on disk: :mod:`numerics._kernel_modules`.
"""

from __future__ import annotations

from numba.core.dispatcher import Dispatcher

from numerics._jit import jit
from numerics._kernel_modules import EVENTS, FIELD, OBSERVE, Slot, Template, instantiate


@jit
def no_jac(t, y, params, out):
    """Write nothing: the ``jac`` of a field without one (the kernel then uses finite differences)."""


#: the Rosenbrock template (one for every tableau: coefficients are arguments) and what it binds
RODAS = Template(
    "_rosenbrock_template.py", "rodas", (Slot("rhs"), EVENTS, Slot("jac", no_jac, "HAS_JAC"), OBSERVE),
    ("_rk_core.py", "_rosenbrock_core.py", "_jit.py"), FIELD, ("start", "fire_events", "save_state"),
)


def kernels(rhs: Dispatcher, events: Dispatcher | None, jac: Dispatcher | None,
            observe: Dispatcher | None = None) -> object:
    """Return an object with the Rosenbrock kernels ``solve`` and ``solve_batch`` for this field.

    Cached on disk through a generated module when ``rhs``, ``events`` and ``jac`` can be imported
    by name; otherwise compiled in memory for this process only.
    """
    return instantiate(RODAS, {"rhs": rhs, "events": events, "jac": jac, "observe": observe})
