"""numba for tenk's kernels, with an on-disk cache that follows the code a kernel runs.

Every kernel module of the package imports ``njit`` and ``prange`` from here (numba's own), so
that this module has placed its cache locators before any kernel is decorated with
``cache=True``. numba keys a cached kernel by its own source file only, but a kernel compiles in
the helpers it calls and the constants it reads from other modules (the bank rule and the tie-break of
:mod:`tenk_env.solve.kernels.rules`, the indexes of :mod:`tenk_env.solve.spec`): after an edit
there, or an upgrade that changes only those files, numba would go on loading the kernels
compiled from the old code. Here a kernel's cache entry is also stamped with
:func:`tenk_env.closure.closure_hash` of its module, so an edit to any project module it imports,
directly or not, recompiles it, as the same edit re-computes the results it serves.

A kernel that compiled but could not be written to the cache (a read-only install, a full
disk, or numba's own failure when several processes compile the same kernels into an empty
cache at once: ``no compiled object yet``) runs all the same, with a warning; the next process
compiles it again. Functions outside the package keep numba's own cache rules.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from numba import njit, prange
from numba.core import caching

from tenk_env.closure import PACKAGE_DIR, closure_hash

__all__ = ["njit", "prange", "kernel_stamp"]


def _module_of(py_file: str) -> str | None:
    """The project module whose source is ``py_file`` (None: not a file of the package)."""
    try:
        rel = Path(py_file).resolve().relative_to(PACKAGE_DIR)
    except ValueError:
        return None
    parts = [PACKAGE_DIR.name, *rel.with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def kernel_stamp(py_file: str) -> str | None:
    """The code part of the cache stamp of the kernels in ``py_file``: :func:`closure_hash` of its
    module (None outside the package)."""
    module = _module_of(py_file)
    return None if module is None else closure_hash(module)


class _Stamp:
    """numba's stamp of a kernel's own file and the code closure of its module, worked out when
    numba first compares it with a cache index (a kernel's first call), not when the kernel is
    decorated: importing a kernel module stays as fast as numba's own stamp, and a command that
    runs no kernel reads no closure. It pickles into the index as the plain pair."""

    def __init__(self, file_stamp, py_file: str):
        self._file_stamp = file_stamp
        self._py_file = py_file

    def value(self) -> tuple:
        return (self._file_stamp, kernel_stamp(self._py_file))

    def __eq__(self, other) -> bool:
        return self.value() == (other.value() if isinstance(other, _Stamp) else other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self):
        return (tuple, (self.value(),))


class _ClosureStamp:
    """A numba cache locator mixin: the stamp is :class:`_Stamp`. Applies to the package's files
    only (``from_function`` gives None elsewhere, and numba tries its next locator)."""

    _py_file: str

    def get_source_stamp(self):
        return _Stamp(super().get_source_stamp(), self._py_file)  # type: ignore[misc]

    @classmethod
    def from_function(cls, py_func, py_file):
        if _module_of(py_file) is None:
            return None
        return super().from_function(py_func, py_file)  # type: ignore[misc]


def _stamped(base: type) -> type:
    return type(f"Closure{base.__name__}", (_ClosureStamp, base), {})


# The file-backed locators, in numba's order (a user-given NUMBA_CACHE_DIR, the package's
# __pycache__, the user-wide cache), each with the closure in its stamp; placed first, so that
# they take the package's files and numba's own ones the rest.
_LOCATORS: list = [
    _stamped(base)
    for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
]
caching.CacheImpl._locator_classes[:0] = _LOCATORS


_numba_save_overload = caching.Cache.save_overload


def _save_overload(self, sig, data):
    """numba's save, for the package's kernels not fatal: the kernel is compiled and already
    registered with its dispatcher when numba saves it, so a failed save costs only a compile
    in the next process, where a raised error would end the solve that asked for the kernel."""
    if not isinstance(self._impl.locator, _ClosureStamp):
        return _numba_save_overload(self, sig, data)
    try:
        _numba_save_overload(self, sig, data)
    except (OSError, RuntimeError) as e:
        warnings.warn(
            f"numba could not cache the kernel {self._name} ({e}); it runs, and compiles again in the next process",
            RuntimeWarning,
            stacklevel=2,
        )


caching.Cache.save_overload = _save_overload  # type: ignore[method-assign]
