"""The run directory, one module for both trainers (PPO's :mod:`.trainer` and
:mod:`.afterstate`): starting a run (the directory's lock, ``--force``, removing what a
failed start wrote), the run record (``run.yaml``'s command and package versions),
evaluation tables (CSV rows written whole and atomically with LF line ends, read back with
the damaged line named), the resume check, and Ctrl-C / SIGTERM during training."""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Collection
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tenk_env.io import DirLock, atomic_write_text, project_version

__all__ = [
    "RunError",
    "StopRequest",
    "package_versions",
    "run_record",
    "check_run_dir",
    "start_run",
    "read_rows",
    "write_rows",
    "append_rows",
    "say",
    "tb_writer",
]


class RunError(ValueError):
    """A run directory that cannot be started or resumed as asked."""


def say(log: Callable[[str], None] | None) -> Callable[[str], None]:
    return log if log is not None else (lambda m: print(m, flush=True))


def package_versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "tenk": project_version()}
    for p in ("numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "tensorboard", "numba"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def run_record(argv: list[str] | None) -> dict[str, Any]:
    """What every run.yaml records of how the run was started: the command, when, on how many
    CPUs, and the versions of the packages it ran on."""
    return {
        "created": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": "tenk " + " ".join(argv) if argv else "",
        "cpus": os.cpu_count(),
        "versions": package_versions(),
    }


def check_run_dir(run_dir: str | Path) -> Path:
    """``run_dir`` as a Path, if it holds a run (its config.yaml), else RunError."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        raise RunError(
            f"{str(run_dir)!r} is not a run directory (no config.yaml); runs are under runs/, "
            "made by `tenk train --config FILE`"
        )
    return run_dir


# --------------------------------------------------------------------------- evaluation tables
def _csv_text(fields: list[str], rows: list[dict[str, Any]], header: bool, digits: int | None) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    if header:
        w.writeheader()
    for r in rows:
        w.writerow(
            r if digits is None else {k: (f"{v:.{digits}g}" if isinstance(v, float) else v) for k, v in r.items()}
        )
    return buf.getvalue()


def write_rows(path: Path, fields: list[str], rows: list[dict[str, Any]], *, digits: int | None = None) -> None:
    """The whole table, header first (``digits``: floats to that many significant digits)."""
    atomic_write_text(path, _csv_text(fields, rows, True, digits))


def append_rows(path: Path, fields: list[str], rows: list[dict[str, Any]], *, digits: int | None = None) -> None:
    """``rows`` after the table's rows (a header first when the file is new)."""
    old = path.read_text() if path.is_file() else ""
    atomic_write_text(path, old + _csv_text(fields, rows, not old, digits))


def read_rows(path: Path, fields: list[str]) -> list[dict[str, Any]]:
    """The rows of an evaluation table (eval.csv, regret.csv) with columns ``fields``, the first
    the step column; RunError naming the file and the line when it is damaged."""
    key = fields[0]
    if not path.is_file():
        return []
    fix = (
        f"fix or delete the damaged lines by hand (the header is {','.join(fields)}), or move the file "
        f"aside (mv {path} {path}.damaged) to resume without the earlier evaluation rows"
    )
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise RunError(f"evaluation rows {str(path)!r} are damaged (not text); {fix}") from None
    try:
        reader = csv.DictReader(io.StringIO(text))
        header = reader.fieldnames or []
        if not set(fields[:2]) <= set(header) or not set(header) <= set(fields):
            raise RunError(f"evaluation rows {str(path)!r} are damaged: the header is {','.join(header)!r}; {fix}")
        rows = []
        for r in reader:
            if None in r or None in r.values() or not r[key].isdigit():
                raise RunError(f"evaluation rows {str(path)!r} are damaged at line {reader.line_num}; {fix}")
            rows.append(r)
    except csv.Error as e:
        raise RunError(f"evaluation rows {str(path)!r} are damaged ({e}); {fix}") from None
    return rows


# --------------------------------------------------------------------------- TensorBoard
_EVENT_FILE = re.compile(r"^events\.out\.tfevents\.(\d+)\.")


def tb_writer(log_dir: Path, purge_step: int | None = None) -> Any:
    """A TensorBoard ``SummaryWriter`` on ``log_dir`` whose event file sorts after those the
    earlier sessions of the run left there (``purge_step``: the step this session resumes from;
    the earlier sessions' points at or past it are hidden).

    TensorBoard and ``tenk plot`` read a folder's event files in name order, and a session's
    start hides the earlier points past its step only in the files read before it. The name is
    the second the file was made, then the host, the process id and a per-process counter,
    compared as text (counter 10 sorts before 9, pid 100000 before 99999): a session started
    in the same second as the one before it could be read first, and the older session's
    points past the resumed step would show again, after the newer ones. So the writer waits
    for the next second (a second at most)."""
    from torch.utils.tensorboard import SummaryWriter

    log_dir = Path(log_dir)
    seconds = [
        int(m.group(1)) for q in (log_dir.iterdir() if log_dir.is_dir() else ()) if (m := _EVENT_FILE.match(q.name))
    ]
    newest = max(seconds, default=-1)
    # a folder whose files are far ahead of this clock (copied from another machine) is not waited for
    if 0 < newest + 1 - time.time() <= 2.0:
        while time.time() < newest + 1:
            time.sleep(max(0.01, newest + 1 - time.time()))
    return SummaryWriter(log_dir=str(log_dir), purge_step=purge_step)


# --------------------------------------------------------------------------- the run's life
class StopRequest:
    """Ctrl-C / SIGTERM: the first asks the trainer to save and stop; the second quits."""

    def __init__(self, log: Callable[[str], None]):
        self.requested = False
        self._log = log
        self._old: dict[int, Any] = {}

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self._log(
            f"\n{signal.Signals(signum).name}: saving a checkpoint and stopping "
            "(press Ctrl-C again to quit without saving)"
        )

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)


def _clear_force(
    run_dir: Path, tell: Callable[[str], None], entries: Collection[str], where: Callable[[Path], str] | None
) -> None:
    """--force: delete the run held in ``run_dir`` (the lock file stays: this process holds it),
    after saying what goes. A directory holding anything a run does not write (``entries``)
    is left alone."""
    held = sorted(q for q in run_dir.iterdir() if q.name != ".lock")
    strange = [q.name for q in held if q.name not in entries and not q.name.endswith((".tmp", ".damaged"))]
    if strange or not (run_dir / "config.yaml").is_file():
        what = f"holds {', '.join(strange[:5])}" if strange else "has no config.yaml"
        raise RunError(
            f"--force {run_dir}: the directory {what}, so it is not (only) a tenk run; "
            "nothing was deleted. Move those files out, or pick another name with --set name=NEW"
        )
    at = where(run_dir) if where else ""
    parts = []
    for q in held:
        n = sum(1 for x in q.rglob("*") if x.is_file()) if q.is_dir() else 0
        parts.append(f"{q.name}/ ({n} files)" if q.is_dir() else q.name)
    tell(f"--force: deleting the run in {run_dir}{at}: {', '.join(parts)}")
    _clear(held)


def _clear(paths: list[Path]) -> None:
    for q in paths:
        if q.is_dir() and not q.is_symlink():
            shutil.rmtree(q)
        else:
            q.unlink(missing_ok=True)


def start_run(
    run_dir: Path,
    force: str | Path | None,
    setup: Callable[[], Callable[[], Any]],
    *,
    entries: Collection[str],
    log: Callable[[str], None] | None = None,
    where: Callable[[Path], str] | None = None,
) -> Any:
    """The life of a new run directory, for every trainer: refuse one that holds a run (or,
    with ``force`` naming it exactly, delete that run first), then ``setup()`` (which writes
    the config and builds the learner, and returns the training loop), then the loop, all
    under the directory's lock. A start that fails in ``setup`` (a config the learner
    cannot build, Ctrl-C) removes what it wrote, so the corrected command is not told that
    the directory already holds a run. ``entries``: the names a run of this trainer writes (``--force``
    deletes a directory holding only those); ``where(run_dir)``: how far the run got, for the
    line that lists what ``--force`` deletes (e.g. " at step 4,096")."""
    if force is not None and Path(force).resolve() != run_dir.resolve():
        raise RunError(
            f"--force {force}: this config writes the run directory {str(run_dir)!r} (runs_dir/name), "
            f"not {str(force)!r}; nothing was deleted. --force deletes only the directory the run "
            "writes, named exactly"
        )
    with DirLock(run_dir, "run directory"):
        if any(q.name != ".lock" for q in run_dir.iterdir()):
            if force is None:
                raise RunError(
                    f"run directory {str(run_dir)!r} already holds a run: continue it with "
                    f"`tenk train --resume {run_dir}`, or pick another name with `--set name=NEW`"
                )
            _clear_force(run_dir, say(log), entries, where)
        try:
            loop = setup()
        except BaseException:
            _clear([q for q in run_dir.iterdir() if q.name != ".lock"])
            raise
        return loop()
