"""`tenk play`: play Ten Thousand in the terminal against any agents.

Also home to the argument checks the commands share: :func:`seed_arg` (``--seed``),
:func:`check_output_file` and :func:`check_output_dir` (where a command writes when its work
is done: checked before the work starts).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


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
        raise ValueError(f"{what} {str(path)!r} is a file, not a directory; give a directory (files are "
                         "written inside it)")
    _check_writable(path, path.absolute(), what)
    return path


def _check_writable(path: Path, folder: Path, what: str) -> None:
    # The writers create missing folders (tenk_env.io.atomic_write_bytes): the nearest one that
    # exists must be a directory we may write in.
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"{what} {str(path)!r} cannot be written: {str(folder)!r} is a file, not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {str(path)!r} cannot be written: no permission to write in {str(folder)!r}; "
                         "give a path in a directory you can write to")


def cmd_play(args: argparse.Namespace) -> int:
    from agents.human import play_terminal

    if args.save:
        check_output_file(args.save, "--save", "game.jsonl")
    try:
        return play_terminal(args.rules, args.opponent or ["dicenow"], n_players=args.players, seat=args.seat,
                             seed=args.seed, save=args.save)
    except BrokenPipeError:
        # the output went to a pipe that closed (`tenk play ... | head`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("play", help="play a game in the terminal against agents (default: dicenow)",
                       description="Play Ten Thousand at the terminal. At each roll pick a keep by its letter "
                                   "or type the faces ('1 5'), then r(oll) or b(ank); ? for help, q to quit.")
    s.add_argument("--opponent", "-o", action="append", metavar="SPEC",
                   help="agent spec for an opponent (dicenow, breakeven, greedy, hold:300, random, human, ...); "
                        "repeat for more opponents (default: dicenow)")
    s.add_argument("--rules", default="classic", metavar="PRESET|FILE",
                   help="ruleset preset name or YAML file (default classic)")
    s.add_argument("--players", type=int, default=None, metavar="N",
                   help="players including you, 2 to 8 (default: one per opponent plus you; "
                        "extra seats repeat the last opponent)")
    s.add_argument("--seat", type=int, default=1, metavar="S", help="your seat, 1 plays first (default 1)")
    s.add_argument("--seed", type=seed_arg, default=None, metavar="S",
                   help="dice seed; the same seed deals the same dice (default: random, printed)")
    s.add_argument("--save", metavar="PATH", help="write the game record as JSON lines to PATH")
    s.set_defaults(func=cmd_play)
