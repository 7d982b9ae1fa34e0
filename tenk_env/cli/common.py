"""What every subcommand shares: the console it prints to, how an interrupted command ends
(one line, exit code 130 for Ctrl-C and 143 for SIGTERM; see :mod:`tenk_env.cli.main`), and
what a command that may start a long exact solve tells the user it costs."""

from __future__ import annotations

import argparse
import resource
import signal

from rich.console import Console

console = Console()

#: the cost of an N-player best response on the project's 2-core machine (`tenk bench solve
#: --solve-players 3`; 4 players: docs/results/multiplayer.md), told before the commands that may start one
BR_COST = {
    3: "at 3 players on 2 cores: seconds at 1,000, 5 minutes for classic to 5,000, 45 minutes to 10,000",
    4: "at 4 players on 2 cores: 18 minutes for classic to 1,500, 52 minutes to 2,000 beside other work",
}

#: exit codes of an interrupted command: 128 + the signal's number, as a shell reports it
EXIT_SIGINT, EXIT_SIGTERM = 128 + signal.SIGINT, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread as Ctrl-C raises KeyboardInterrupt, so the same
    cleanup (``finally`` blocks, context managers, saving what is done) runs for both."""


#: set when a SIGTERM arrived: a library that takes the interrupt itself (Ray Tune stops its
#: trials and returns) leaves no Terminated to tell the exit code by
_terminated = False


def peak_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def on_sigterm(signum, frame) -> None:
    global _terminated
    _terminated = True
    raise Terminated()


def interrupted_exit_code() -> int:
    """143 when the command was sent SIGTERM, else 130 (Ctrl-C)."""
    return EXIT_SIGTERM if _terminated else EXIT_SIGINT


def reset_interrupt() -> None:
    """Forget an earlier command's SIGTERM (``main`` runs many commands in one test process)."""
    global _terminated
    _terminated = False


def interrupted_line(args: argparse.Namespace | None) -> str:
    """The one line an interrupted command ends with (see the module docstring)."""
    parts = ["interrupted"] + [x for x in (getattr(args, "done", None), getattr(args, "resume_hint", None)) if x]
    return "; ".join(parts)
