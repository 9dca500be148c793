"""The Dormand-Prince kernels of one vector field: :mod:`numerics._dopri_template` instantiated for it.

The template binds the field's ``rhs`` and ``events``; it imports the set-up of an integration
and the events of a step from the field's instance of :mod:`numerics._field_template`, which
serves the Rosenbrock kernels too. How, and when the kernels are cached on disk:
:mod:`numerics._kernel_modules`.
"""

from __future__ import annotations

from numba.core.dispatcher import Dispatcher

from numerics._kernel_modules import EVENTS, FIELD, OBSERVE, Slot, Template, generated_source, instantiate, is_cached

__all__ = ["DOPRI", "is_cached", "kernels"]

#: the Dormand-Prince template and what its instances bind
DOPRI = Template(
    "_dopri_template.py", "ode", (Slot("rhs"), EVENTS, OBSERVE), ("_rk_core.py", "_jit.py"), FIELD,
    ("start", "fire_events", "save_state"),
)


def _generated_source(rhs: Dispatcher, events: Dispatcher | None, observe: Dispatcher | None = None) -> str | None:
    """Source of the kernel module for this field, or None if it cannot be cached safely."""
    return generated_source(DOPRI, {"rhs": rhs, "events": events, "observe": observe})


def kernels(rhs: Dispatcher, events: Dispatcher | None, observe: Dispatcher | None = None) -> object:
    """Return an object with the kernels ``solve`` and ``solve_batch`` calling ``rhs``/``events``/``observe``.

    Cached on disk through a generated module when the functions can be imported by name;
    otherwise compiled in memory for this process only.
    """
    return instantiate(DOPRI, {"rhs": rhs, "events": events, "observe": observe})
