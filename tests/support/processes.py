"""Whether a process still runs, for the tests that check nothing a command started outlives it."""

from __future__ import annotations

import os
from pathlib import Path


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent or init to reap it has ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return not Path("/proc/self").is_dir()
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")
