"""Files: atomic writes (a crash or Ctrl-C never leaves a half-written file behind), YAML
mappings read with errors that name the fix, content keys, run-directory locks, and the
data installed with the package (the zoo, the shipped configs)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any

#: the name tenk is installed under (`pip install tenk-env`); the import package is tenk_env.
#: ("tenk" on PyPI is another project's.)
DISTRIBUTION = "tenk-env"


def project_version() -> str:
    """The installed version of tenk, or "not installed" (run from a bare checkout)."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


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
    if path.is_dir():
        raise error(f"{what} file {str(path)!r} is a directory, not a file; {missing_hint}")
    if not path.is_file():
        raise error(f"{what} file {str(path)!r} does not exist; {missing_hint}")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise error(f"{what} file {str(path)!r} is not valid YAML: {e}") from None
    except UnicodeDecodeError:
        raise error(f"{what} file {str(path)!r} is not a text file (YAML); {missing_hint}") from None
    except OSError as e:
        raise error(f"{what} file {str(path)!r} cannot be read: {e.strerror}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{what} file {str(path)!r}: expected a mapping of {what} fields, got {type(data).__name__}")
    return dict(data)


# --------------------------------------------------------------------------- package data
def data_dir(name: str) -> Path:
    """The folder of one of the data packages installed with tenk: ``"zoo"`` (the
    repository's ``agents/``) or ``"configs"`` (``configs/``). ``pyproject.toml`` maps them
    into the package, so a wheel and a checkout find them the same way."""
    spec = importlib.util.find_spec(f"tenk_env.{name}")
    if spec is None or spec.origin is None:
        raise FileNotFoundError(f"tenk_env.{name} is not installed: reinstall tenk (pip install -e .)")
    return Path(spec.origin).parent


def shipped_configs() -> list[str]:
    """The names of the configs shipped with tenk (``ppo_demo``, ``tournament``, ...)."""
    return sorted(p.stem for p in data_dir("configs").glob("*.yaml"))


def find_config(path: str | Path) -> Path:
    """``path`` if it names a file, else the shipped config of that name (``ppo_demo`` or
    ``ppo_demo.yaml`` or ``configs/ppo_demo.yaml`` read from any directory), else ``path``
    unchanged, for the reader to report as missing."""
    p = Path(path)
    if p.exists():
        return p
    if p.parent in (Path("."), Path("configs")):
        shipped = data_dir("configs") / (p.name if p.suffix in (".yaml", ".yml") else f"{p.name}.yaml")
        if shipped.is_file():
            return shipped
    return p


# --------------------------------------------------------------------------- content keys
def file_sha256(path: Path, length: int = 16) -> str:
    """The first ``length`` hex digits of the SHA-256 of a file's bytes: the key under which
    results that depend on the file (a checkpoint's games) are cached and recorded."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:length]


class StateFileError(ValueError):
    """A saved state file (JSON) that is damaged or holds the wrong kind of data."""


def read_json(path: Path, what: str, expect: type = dict, fix: str = "") -> Any:
    """A JSON file that must hold an ``expect`` (dict or list). A damaged or wrong-typed file
    raises :class:`StateFileError` naming the file, what it should hold and ``fix``."""
    import json

    path = Path(path)
    tail = f"; {fix}" if fix else ""
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise StateFileError(f"{what} {str(path)!r} is damaged (not valid JSON: {e}){tail}") from None
    if not isinstance(data, expect):
        raise StateFileError(
            f"{what} {str(path)!r} is damaged: expected a JSON {expect.__name__}, found {type(data).__name__}{tail}"
        )
    return data


# --------------------------------------------------------------------------- one writer
class LockedError(ValueError):
    """Another live process holds the lock of a directory."""


class DirLock:
    """One writer per directory: an exclusive ``flock`` on ``DIR/.lock``, which holds the
    holder's pid, host and command for the message the second writer gets.

    The kernel drops the lock when its holder dies, however it dies (``kill -9`` included),
    so a lock file left behind by a dead process is stale by construction and is simply
    taken over; there is no pid guessing. ``what`` names the directory in messages."""

    def __init__(self, directory: Path, what: str = "directory"):
        self.dir = Path(directory)
        self.what = what
        self.path = self.dir / ".lock"
        self._fd: int | None = None

    def acquire(self) -> DirLock:
        import fcntl
        import json
        import socket
        import sys
        import time

        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = json.loads(os.read(fd, 4096) or b"{}")
            except ValueError:
                holder = {}
            os.close(fd)
            who = f"process {holder.get('pid', '?')}"
            if holder.get("host"):
                who += f" on {holder['host']}"
            if holder.get("command"):
                who += f" ({holder['command']})"
            raise LockedError(
                f"{self.what} {str(self.dir)!r} is in use by {who} since {holder.get('since', '?')}; "
                "wait for it to finish or stop it, then run again (one writer per directory)"
            ) from None
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])[:200],
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            # The file stays: unlinking it would race a process that opened it and waits to lock it.
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DirLock:
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()
