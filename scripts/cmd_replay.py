"""`tenk replay GAME.jsonl`: check a saved game record and print it as a readable log."""

from __future__ import annotations

import argparse

from scripts.cli import console
from tenk_env.records import format_log, load_jsonl, replay


def cmd_replay(args: argparse.Namespace) -> int:
    game = replay(load_jsonl(args.record))
    names = args.names.split(",") if args.names else None
    if names is not None and len(names) != game.n_players:
        raise ValueError(f"--names gives {len(names)} names for a {game.n_players}-player game")
    console.print(format_log(game.events, names), highlight=False, markup=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("replay", help="replay a saved game record (JSON lines) and print its log")
    s.add_argument("record", help="path of a .jsonl game record")
    s.add_argument("--names", help="comma-separated player names, in seat order")
    s.set_defaults(func=cmd_replay)
