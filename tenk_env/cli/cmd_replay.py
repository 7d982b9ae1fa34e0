"""`tenk replay GAME.jsonl`: check a saved game record and print it as a readable log."""

from __future__ import annotations

import argparse

from tenk_env.cli.common import console
from tenk_env.game import Game, Phase
from tenk_env.records import format_log, load_jsonl, replay


def cmd_replay(args: argparse.Namespace) -> int:
    events = load_jsonl(args.record)
    game = replay(events)
    names = args.names.split(",") if args.names else None
    if names is not None and len(names) != game.n_players:
        raise ValueError(f"--names gives {len(names)} names for a {game.n_players}-player game")
    # the record's events (a record cut amid an input's outcomes replays a few more)
    console.print(format_log(events, names), highlight=False, markup=False)
    if not game.over:
        # A record cut at a line boundary (or an abandoned game) replays cleanly as far as it
        # goes; without this the log would just stop and the command succeed.
        console.print(
            f"[red]error:[/red] {args.record}: the record ends before the game does "
            f"({_where(game, names)}); the file was cut short or the game abandoned",
            highlight=False,
            soft_wrap=True,
        )
        return 1
    return 0


def _where(game: Game, names: list[str] | None) -> str:
    """Where an unfinished game stands, in words."""
    if game.phase == Phase.ORDER:
        return "the opening roll for the first turn is under way"
    who = names[game.current] if names else f"P{game.current + 1}"
    doing = {
        Phase.PIGGYBACK: "to choose whether to take over the dice left",
        Phase.ROLL: f"to roll {game.dice_to_roll} dice",
        Phase.DECIDE: f"to choose a keep from {' '.join(map(str, game.dice))}",
    }[game.phase]
    scores = ", ".join(f"{s:,}" for s in game.scores)
    return f"turn {game.turn}, {who} {doing}; scores {scores}"


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "replay",
        help="replay a saved game record (JSON lines) and print its log",
        description="Replay a game record, checking every outcome, and print it as a log. "
        "Exit status 1 when the record ends before the game does, 2 when it "
        "does not replay.",
    )
    s.add_argument("record", help="path of a .jsonl game record")
    s.add_argument("--names", help="comma-separated player names, in seat order")
    s.set_defaults(func=cmd_replay)
