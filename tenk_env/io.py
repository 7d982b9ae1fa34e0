"""Atomic file writes: a crash or Ctrl-C never leaves a half-written file behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates the file 0600; give it the permissions a plain open() would.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def read_yaml_mapping(path: Path, what: str, error: type[Exception], missing_hint: str) -> dict[str, Any]:
    """A YAML file holding a mapping (an empty file is an empty one). Every failure raises
    ``error`` with a message that names the file, ``what`` it should hold, and the fix."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise error(f"{what} file {str(path)!r} does not exist; {missing_hint}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise error(f"{what} file {str(path)!r} is not valid YAML: {e}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{what} file {str(path)!r}: expected a mapping of {what} fields, got {type(data).__name__}")
    return dict(data)
