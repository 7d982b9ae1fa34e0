"""Forked ``tenk`` sessions for the fault-injection tests: a copy of the test process (torch
already imported, which saves the seconds a fresh interpreter spends) that runs one command,
optionally killing itself with SIGKILL at a chosen call."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tenk_env.cli.main import main

Kill = tuple[Any, str, str, Callable[..., bool]]


def fork_session(argv: list[str], out: Path, kill: Kill | None = None) -> int:
    """``tenk ARGV`` in a forked copy of this process (torch is imported already), output to
    ``out``. ``kill``: (owner, function name, 'before' or 'after', predicate of its arguments):
    the child SIGKILLs itself before or after the call the predicate picks. Returns the pid."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        rc = 99
        try:
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            sys.stdout = sys.stderr = open(1, "w", buffering=1, closefd=False)
            if kill is not None:
                owner, name, when, pick = kill
                orig = getattr(owner, name)

                def wrapped(*a, **k):
                    hit = pick(*a, **k)
                    if hit and when == "before":
                        os.kill(os.getpid(), signal.SIGKILL)
                    r = orig(*a, **k)
                    if hit:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return r

                setattr(owner, name, wrapped)
            rc = main(argv)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(rc)
    return pid
