"""`tenk` command line: one entry point; each subcommand lives in ``tenk_env/cli/cmd_*.py``.

A subcommand module defines ``register(subparsers)``, which adds its parser and sets
``func`` to a function taking the parsed arguments and returning an exit code.

Ctrl-C (SIGINT) and SIGTERM end every command with one line and no traceback:
``interrupted`` (exit code 130 for SIGINT, 143 for SIGTERM), followed by what the command
says of itself through two optional attributes of its parsed arguments:

* ``resume_hint``, set in the parser's defaults by a command that resumes (e.g. ``"rerun
  the same command to resume"``), or while it runs where the hint depends on its arguments;
* ``done``, set while it runs (or in a handler that re-raises the interrupt), how far the
  work got, e.g. ``"3 of 12 chunks saved"``.

The line then reads ``interrupted; 3 of 12 chunks saved; rerun the same command to resume``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from rich.markup import escape

from tenk_env.cli import (
    cmd_analyze,
    cmd_bench,
    cmd_evaluate,
    cmd_ffa,
    cmd_mcp,
    cmd_play,
    cmd_plot,
    cmd_replay,
    cmd_rules,
    cmd_serve,
    cmd_solve,
    cmd_suite,
    cmd_sweep,
    cmd_tournament,
    cmd_train,
    cmd_zoo,
    common,
)
from tenk_env.cli.common import EXIT_SIGTERM, Terminated, console, interrupted_exit_code, interrupted_line
from tenk_env.threads import one_blas_thread

#: every subcommand, in the order ``tenk --help`` lists them
COMMANDS = (
    cmd_analyze,
    cmd_bench,
    cmd_evaluate,
    cmd_ffa,
    cmd_mcp,
    cmd_play,
    cmd_plot,
    cmd_replay,
    cmd_rules,
    cmd_serve,
    cmd_solve,
    cmd_suite,
    cmd_sweep,
    cmd_tournament,
    cmd_train,
    cmd_zoo,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tenk", description="Ten Thousand (Farkle) for reinforcement learning")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    common.reset_interrupt()
    one_blas_thread()
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        old = signal.signal(signal.SIGTERM, common.on_sigterm), signal.getsignal(signal.SIGINT)
    args = None
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except KeyboardInterrupt as e:
        if main_thread:
            # a second Ctrl-C (or a SIGTERM after it) must not cut the line short with a traceback
            for s in (signal.SIGINT, signal.SIGTERM):
                signal.signal(s, signal.SIG_IGN)
        console.print(interrupted_line(args), highlight=False, markup=False, soft_wrap=True)
        return EXIT_SIGTERM if isinstance(e, Terminated) else interrupted_exit_code()
    except (ValueError, FileNotFoundError) as e:
        # Every error the project raises for bad input (rulesets, agent specs, configs,
        # checkpoints, illegal moves) is a ValueError subclass with a message naming the fix.
        # soft_wrap: the terminal wraps it; rich would break a long path inside the message
        # escaped: messages hold brackets meant literally (pip install -e ".[ray]", [0.8, 0.95])
        console.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        return 2
    finally:
        if main_thread:
            for s, h in zip((signal.SIGTERM, signal.SIGINT), old):
                signal.signal(s, h if h is not None else signal.SIG_DFL)


if __name__ == "__main__":
    sys.exit(main())
