"""On-disk cache of solutions, keyed by the ruleset hash (and a solver version).

The directory is ``$TENK_CACHE`` if set, else ``~/.cache/tenk``. Files are ``.npz``
written atomically (:func:`tenk_env.io.atomic_write_bytes`), so an interrupted solve never
leaves a half-written solution that a later run would trust.
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from tenk_env.io import atomic_write_bytes

__all__ = ["cache_dir", "cache_path", "load_arrays", "save_arrays"]


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
