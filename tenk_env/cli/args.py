"""Argument types and output checks the subcommands share: :func:`seed_arg` (``--seed``),
:func:`count_arg` (a bounded count),
:func:`check_output_file` and :func:`check_output_dir` (where a command writes when its work
is done: checked before the work starts, so a finished result is never lost to a bad path).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from tenk_env.rules import Ruleset, load_ruleset


def seed_arg(text: str) -> int:
    """argparse ``type`` of ``--seed``: an integer >= 0 (numpy's generators take no negative
    seed, and would say so in their own words only once the work starts)."""
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer; give a seed >= 0, e.g. --seed 7") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{seed} is negative; give a seed >= 0, e.g. --seed {-seed}")
    return seed


def count_arg(lo: int, hi: int, what: str):
    """An argparse ``type``: a whole number from ``lo`` to ``hi``, written 2000 or 2e3;
    ``what`` says what it counts and why it is bounded (the bound is checked before any
    work, which a huge count would otherwise exhaust the memory doing)."""

    def parse(text: str) -> int:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number; give a whole number from {lo:,} to {hi:,}"
            ) from None
        if not x.is_integer():
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one from {lo:,} to {hi:,}")
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"{text}: give from {lo:,} to {hi:,} {what}")
        return int(x)

    return parse


def check_output_file(path: str | Path, what: str, example: str) -> Path:
    """Fail now, before the work, if ``path`` could not be written as a file afterwards (the
    result would be lost): a directory or a device there, a parent that is a file, a place
    without write permission. ``example`` is a file name to suggest inside a directory."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {str(path)!r} is a directory; give a file path, e.g. {str(path / example)!r}")
    if path.exists() and not path.is_file():
        raise ValueError(f"{what} {str(path)!r} exists and is not a regular file; give another path")
    _check_writable(path, path.absolute().parent, what)
    return path


def check_output_dir(path: str | Path, what: str) -> Path:
    """Like :func:`check_output_file`, for a directory that files are written in."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(
            f"{what} {str(path)!r} is a file, not a directory; give a directory (files are written inside it)"
        )
    _check_writable(path, path.absolute(), what)
    return path


#: kernel interfaces: files there are not results (and writing some changes the system)
_SYSTEM_DIRS = ("/proc", "/sys")


def _check_writable(path: Path, folder: Path, what: str) -> None:
    # The writers create missing folders (tenk_env.io.atomic_write_bytes): the nearest one that
    # exists must be a directory we may write in.
    real = os.path.realpath(path)
    for system in _SYSTEM_DIRS:
        if real == system or real.startswith(system + "/"):
            raise ValueError(
                f"{what} {str(path)!r} is under {system}, the kernel's interface, not a place for "
                "results; give a path in a directory you can write to"
            )
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{what} {str(path)!r} cannot be written: {str(folder)!r} is a file, not a directory")
    # Permission bits do not tell (root passes os.access everywhere, a read-only mount passes
    # it too): a file made and removed there does. The writers write a temporary file in
    # the folder and rename it, as this probe does.
    try:
        fd, probe = tempfile.mkstemp(prefix=".tenk-probe-", dir=folder)
    except OSError as e:
        raise ValueError(
            f"{what} {str(path)!r} cannot be written: no file can be made in {str(folder)!r} "
            f"({e.strerror or e}); give a path in a directory you can write to"
        ) from None
    os.close(fd)
    os.unlink(probe)


def ruleset_at(spec: str, target: int | None):
    """The ruleset ``spec``, at ``target`` when given (``--target``: a smaller game, named
    after the change as a ruleset file with ``base:`` is)."""
    r = load_ruleset(spec)
    if target is None or target == r.target:
        return r
    return Ruleset.from_dict({**r.to_dict(), "target": target, "name": f"{r.name}+target={target}"}, source="--target")
