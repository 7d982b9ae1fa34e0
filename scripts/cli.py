"""`tenk` command line: one entry point; each subcommand lives in ``scripts/cmd_*.py``.

A subcommand module defines ``register(subparsers)``, which adds its parser and sets
``func`` to a function taking the parsed arguments and returning an exit code.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from rich.console import Console
from rich.markup import escape

import scripts

console = Console()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tenk", description="Ten Thousand (Farkle) for reinforcement learning")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for m in sorted(pkgutil.iter_modules(scripts.__path__), key=lambda m: m.name):
        if m.name.startswith("cmd_"):
            importlib.import_module(f"scripts.{m.name}").register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as e:
        # Every error the project raises for bad input (rulesets, agent specs, configs,
        # checkpoints, illegal moves) is a ValueError subclass with a message naming the fix.
        # soft_wrap: the terminal wraps it; rich would break a long path inside the message
        # escaped: messages hold brackets meant literally (pip install -e ".[ray]", [0.8, 0.95])
        console.print(f"[red]error:[/red] {escape(str(e))}", highlight=False, soft_wrap=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
