"""`tenk play`: play Ten Thousand in the terminal against any agents."""

from __future__ import annotations

import argparse
import os
import sys

from tenk_env.cli.args import check_output_file, seed_arg
from tenk_env.evaluation import play  # play.play_terminal: tests stub it there


def cmd_play(args: argparse.Namespace) -> int:
    if args.save:
        check_output_file(args.save, "--save", "game.jsonl")
    try:
        return play.play_terminal(
            args.rules,
            args.opponent or ["dicenow"],
            n_players=args.players,
            seat=args.seat,
            seed=args.seed,
            save=args.save,
        )
    except BrokenPipeError:
        # the output went to a pipe that closed (`tenk play ... | head`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "play",
        help="play a game in the terminal against agents (default: dicenow)",
        description="Play Ten Thousand at the terminal. At each roll pick a keep by its letter "
        "or type the faces ('1 5'), then r(oll) or b(ank); ? for help, q to quit.",
    )
    s.add_argument(
        "--opponent",
        "-o",
        action="append",
        metavar="SPEC",
        help="agent spec for an opponent (dicenow, breakeven, greedy, hold:300, random, human, ...); "
        "repeat for more opponents (default: dicenow)",
    )
    s.add_argument(
        "--rules", default="classic", metavar="PRESET|FILE", help="ruleset preset name or YAML file (default classic)"
    )
    s.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help="players including you, 2 to 8 (default: one per opponent plus you; extra seats repeat the last opponent)",
    )
    s.add_argument("--seat", type=int, default=1, metavar="S", help="your seat, 1 plays first (default 1)")
    s.add_argument(
        "--seed",
        type=seed_arg,
        default=None,
        metavar="S",
        help="dice seed; the same seed deals the same dice (default: random, printed)",
    )
    s.add_argument("--save", metavar="PATH", help="write the game record as JSON lines to PATH")
    s.set_defaults(func=cmd_play)
