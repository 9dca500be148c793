"""The house numba decorators: every kernel of tdcheck is compiled through these.

``jit`` caches compiled code on disk (under ``NUMBA_CACHE_DIR``, which :mod:`numerics`
points at a user cache folder) and uses NumPy's error model, so that a division by zero
gives ``inf``/``nan`` that the caller detects and reports instead of raising inside a kernel.
A damaged entry of that cache is discarded and recompiled (:func:`numerics.cache.heal_numba_cache`).
"""

from numba import njit

from numerics.cache import heal_numba_cache

heal_numba_cache()

jit = njit(cache=True, error_model="numpy")
parallel_jit = njit(cache=True, error_model="numpy", parallel=True)
