"""On-disk cache of solutions, and the keys they are cached under.

The directory is ``$TENK_CACHE`` if set, else ``~/.cache/tenk``. Files are ``.npz``
written atomically (:func:`tenk_env.io.atomic_write_bytes`), so an interrupted solve never
leaves a half-written solution that a later run would trust.

A key (:func:`result_key`) is the result's kind and version, the ruleset hash, its settings and
the content keys of the policies it follows, then a code part: :func:`tenk_env.closure.closure_hash` of the module
that computes it, the module and every project module it imports, directly or not. So an edit to
any module a result runs re-computes it, and an edit elsewhere keeps it. A policy's content key
carries the code part of what decides its moves the same way (:func:`closure_hash` of those
modules, or of one definition and what it refers to, ``"module:name"``).
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from tenk_env.closure import closure_hash
from tenk_env.io import atomic_write_bytes

__all__ = ["cache_dir", "cache_path", "load_arrays", "save_arrays", "result_key"]


def cache_dir() -> Path:
    env = os.environ.get("TENK_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tenk"


def cache_path(key: str) -> Path:
    """The file a solution of this key is cached in."""
    return cache_dir() / f"{key}.npz"


def load_arrays(key: str) -> dict | None:
    p = cache_path(key)
    if not p.is_file():
        return None
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        # A corrupt or foreign file is ignored and recomputed, never trusted.
        return None


def save_arrays(key: str, arrays: dict) -> Path:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    p = cache_path(key)
    atomic_write_bytes(p, buf.getvalue())
    return p


# ---------------------------------------------------------------------- keys
def result_key(module: str, *parts) -> str:
    """The cache key of a result that ``module`` computes: ``parts`` (its kind and version, the
    ruleset hash, its settings, the content keys of the policies it follows) joined by ``-``,
    then :func:`closure_hash` of ``module``. The versions stay for a change of results that
    changes no code (a fixed library bug, a new meaning of a setting)."""
    return "-".join([*(str(p) for p in parts), closure_hash(module)])
