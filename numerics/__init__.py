"""Fast numbers: kernels compiled from SymPy, integrators, Monte-Carlo, sweeps, the actual models.

Importing this package points numba's on-disk cache at a user cache folder (never the
installed package) unless ``NUMBA_CACHE_DIR`` is already set.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """Return tdcheck's user cache folder (``$TDCHECK_CACHE_DIR`` or ``$XDG_CACHE_HOME/tdcheck``)."""
    explicit = os.environ.get("TDCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tdcheck"


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = str(cache_root() / "numba")
    import numba.core.config as _numba_config

    _numba_config.reload_config()
