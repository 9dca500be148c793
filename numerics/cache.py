"""tdcheck's on-disk caches: what they hold, how a damaged entry heals, ``tdcheck cache info/clear``.

Under :func:`numerics.cache_root` (``$TDCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/tdcheck``):

* ``kernels/``: generated kernel modules, named after the hash of their source, and ``kernels/memo/``
  (which SymPy inputs build which module; :mod:`numerics._modules`);
* ``numba/``: numba's compiled-code cache of those modules and of tdcheck's own kernels
  (``NUMBA_CACHE_DIR`` unless the user set it);
* ``sympy/``: remembered SymPy derivations and kernel builders (:mod:`numerics.stored`);
* ``figures/``: the figures of the last runs (written, never read back);
* ``runs/``: expensive model runs shared by the claims and workers (:mod:`numerics.runs`).

Every entry is keyed by what can change it (source hashes, the generator's code, the Python,
SymPy, NumPy and numba versions) and validated when read. An entry that cannot be read (truncated,
emptied, overwritten, or written by other versions of the libraries) is deleted and rebuilt with a
:class:`CacheWarning` naming it (:func:`discard`), never a crash. numba reads its own cache: its
index and data loaders are wrapped (:func:`heal_numba_cache`) to do the same.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

from numerics import cache_root

#: the cache's parts: folder name -> what it holds
KINDS = {
    "kernels": "generated kernel modules and the memo of their builds",
    "numba": "numba's compiled code",
    "sympy": "remembered SymPy derivations and kernel builders",
    "figures": "figures of the last runs",
    "runs": "trajectories and sweeps of the models, shared by the claims (numerics.runs)",
}


class CacheWarning(UserWarning):
    """A cache entry could not be read; it was discarded and is being rebuilt."""


def discard(path: Path | str, error: BaseException | str) -> None:
    """Delete the unreadable entry ``path`` and warn once, naming it and why it could not be read."""
    path = Path(path)
    try:
        path.unlink(missing_ok=True)
    except OSError as failure:  # read-only cache: the entry stays, the work is done anyway
        error = f"{error}; could not delete it: {failure}"
    reason = f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else error
    # reported at the entry itself (no source line of tdcheck under it)
    warnings.warn_explicit(f"discarded the unreadable cache entry ({reason}); rebuilding it", CacheWarning,
                           str(path), 0)


def numba_dir() -> Path:
    """Where numba caches compiled code (``NUMBA_CACHE_DIR``, which :mod:`numerics` sets by default)."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or cache_root() / "numba")


def folders() -> dict[str, Path]:
    """Each kind of the cache and its folder."""
    out = {kind: cache_root() / kind for kind in KINDS}
    out["numba"] = numba_dir()
    return out


def info() -> list[dict]:
    """Per kind: folder, number of files, bytes (a missing folder counts as empty)."""
    rows = []
    for kind, folder in folders().items():
        files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
        rows.append({"kind": kind, "folder": str(folder), "entries": len(files),
                     "bytes": sum(p.stat().st_size for p in files), "holds": KINDS[kind]})
    return rows


def clear(kinds: list[str] | None = None) -> list[str]:
    """Delete the folders of ``kinds`` (default: all); returns what was removed.

    A numba folder the user chose (``NUMBA_CACHE_DIR`` outside tdcheck's cache) is left alone
    unless named explicitly.
    """
    from derivations.errors import unknown_name

    chosen = list(kinds) if kinds else list(KINDS)
    for kind in chosen:
        if kind not in KINDS:
            raise unknown_name("cache kind", kind, KINDS)
    removed = []
    for kind in chosen:
        folder = folders()[kind]
        foreign = kind == "numba" and cache_root() not in folder.parents and not kinds
        if folder.is_dir() and not foreign:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(str(folder))
    return removed


def heal_numba_cache() -> None:
    """Make numba treat an unreadable index or data file of its cache as a miss: discard it, recompile.

    numba (0.5x–0.6x) lets ``EOFError``/``UnpicklingError`` from a truncated or overwritten
    ``.nbi``/``.nbc`` file escape from the first call of a cached function. Idempotent.
    """
    from numba.core import caching

    cache_file = caching.IndexDataCacheFile
    if getattr(cache_file, "_tdcheck_healing", False):
        return
    load_index, load_data = cache_file._load_index, cache_file._load_data

    def _load_index(self):
        try:
            return load_index(self)
        except Exception as error:  # noqa: BLE001 - any unreadable index is a miss
            discard(self._index_path, error)
            return {}

    def _load_data(self, name):
        try:
            return load_data(self, name)
        except FileNotFoundError:
            raise
        except Exception as error:  # noqa: BLE001 - an unreadable data file is a miss (load() expects OSError)
            discard(self._data_path(name), error)
            raise OSError(f"unreadable numba cache entry {name}") from error

    cache_file._load_index, cache_file._load_data = _load_index, _load_data
    cache_file._tdcheck_healing = True
