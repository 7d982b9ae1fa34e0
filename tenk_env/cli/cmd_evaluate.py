"""`tenk evaluate AGENT`: the trainer's evaluation matches, on their own.

Plays a seat-balanced match (2 players; a rotated table for more) of a trained agent against
each opponent, under the ruleset it was trained on, and prints win rates with 95% Wilson
intervals, then, where the game solver covers the ruleset (2 players), the exact regret
against perfect play over ``--regret-games`` analysed games (what ``tenk analyze`` reports;
its interval only from enough deals, :func:`tenk_env.evaluation.analysis._interval`). The agent is a
checkpoint (a PPO run's ``.zip``, an afterstate run's ``.npz``), a run directory (its best
checkpoint) or a trained agent's spec (``zoo:NAME``, ``ppo:PATH``, ``afterstate:PATH``).
``--csv`` writes the match rows (the columns of a run's ``eval.csv``).

Every count is checked before any work: negative or too few games are refused, and so are
more than the results would fit in memory (:func:`tenk_env.evaluation.match.play_match`,
:func:`tenk_env.evaluation.analysis.max_games`).
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tenk_env.cli.args import check_output_file, seed_arg
from tenk_env.evaluation.analysis import MIN_DEALS, analyse, check_games, solve_notice
from tenk_env.evaluation.match import deal_count, default_workers
from tenk_env.io import atomic_write_text, file_sha256
from tenk_env.policies.base import AGENTS, make_agent
from tenk_env.rules import load_ruleset
from tenk_env.solve.game import is_solvable
from tenk_env.training import trainer  # trainer.evaluate_agent: tests stub it there
from tenk_env.training.config import default_eval_opponents
from tenk_env.units import pp, regret_text


def _checkpoint(path: str) -> Path:
    p = Path(path)
    if p.is_dir():
        for name in ("best.zip", "last.zip", "best.npz", "last.npz"):
            if (p / name).is_file():
                return p / name
        raise FileNotFoundError(
            f"run directory {path!r} has no best.zip or last.zip (PPO) or best.npz or last.npz (afterstate) yet"
        )
    return p


def _trained_on(meta: dict) -> str:
    if "rules_obs" in meta:
        return f"{meta['trained_on']} (reads the rules: plays any ruleset)"
    return f"{meta['ruleset_name']} (hash {meta['ruleset_hash']})"


def _spec(arg: str) -> tuple[str, Path | None]:
    """(agent spec, checkpoint file or None) of the argument: an agent spec that names a
    trained agent (``ppo:PATH``, ``afterstate:PATH``, ``zoo:NAME``), a checkpoint (.zip: PPO,
    .npz: afterstate) or a run directory."""
    name, sep, rest = arg.partition(":")
    if sep and name in AGENTS:
        return arg, (Path(rest) if Path(rest).is_file() else None)
    path = _checkpoint(arg)
    return (f"afterstate:{path}" if path.suffix == ".npz" else f"ppo:{path}"), path


def _num(own: float, opp: float) -> str:
    return f"{own:.0f} ({opp:.0f})"


def _counts(args: argparse.Namespace) -> None:
    """The counts that need no agent or ruleset, refused before anything is loaded."""
    for flag, value, what in (
        ("--regret-games", args.regret_games, "give a number of games to analyse, or 0 to skip the regret"),
        ("--workers", args.workers, "give a number of processes (0: the default)"),
        ("--players", args.players, "give a number of players (0: the checkpoint's)"),
    ):
        if value < 0:
            raise ValueError(f"{flag} {value}: negative; {what}")
    if args.games < 2:
        raise ValueError(
            f"--games {args.games}: give at least 2 games per opponent (one deal played in both seat orders)"
        )


def cmd_evaluate(args: argparse.Namespace) -> int:
    _counts(args)
    if args.csv:  # checked before the games: a path that cannot be written would lose them
        check_output_file(args.csv, "--csv", "eval.csv")
    spec, path = _spec(args.checkpoint)
    agent = make_agent(spec)
    if not hasattr(agent, "meta"):
        raise ValueError(
            f"{args.checkpoint!r} is not a trained agent; give a checkpoint, a run directory, or a spec "
            "such as zoo:NAME, ppo:PATH or afterstate:PATH"
        )
    meta = agent.meta
    # PPO checkpoints count training steps, afterstate checkpoints learner turns
    trained, unit = (meta["turns"], "turns") if "turns" in meta else (meta.get("num_timesteps", 0), "steps")
    # an agent that reads the rules plays any ruleset: classic unless --rules says otherwise
    rules = load_ruleset(args.rules or meta.get("ruleset", "classic"))
    n_players = args.players or int(meta["n_players"])
    agent.check(rules, n_players)  # a mismatch fails here with the checkpoint's own message
    try:
        deal_count(args.games, n_players)  # the matches keep every game's results: bounded by memory
    except ValueError as e:
        raise ValueError(f"--games {args.games:,}: {str(e).partition(': ')[2]}") from None
    regret = args.regret_games > 0 and is_solvable(rules, n_players)
    if regret:
        check_games(args.regret_games, rules, "--regret-games")
    opponents = args.opponents or default_eval_opponents(rules, n_players)
    for o in opponents:
        make_agent(o).check(rules, n_players)
    workers = args.workers or default_workers()
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 120))  # logs and pipes: keep rows on one line

    sha = f" (sha256 {file_sha256(path)})" if path else ""
    console.print(
        f"{path or spec}{sha}: trained {trained:,} {unit} on "
        f"{_trained_on(meta)}, {n_players} players; {args.games:,} games per opponent, "
        f"seed {args.seed}, backend {args.backend} ({workers} worker(s) for scalar-engine games)",
        highlight=False,
    )
    note = solve_notice(rules) if regret or "optimal" in opponents else None
    if note:  # the first match against optimal, or the regret analysis, solves the game
        console.print(note, highlight=False, markup=False)
    table = Table("opponent", "games", "win rate [95% interval]", "margin", "points/turn (opp.)", "busts", "turns")
    rows = []
    for o in opponents:
        r = trainer.evaluate_agent(
            agent, rules, n_players, o, args.games, args.seed, workers=workers, backend=args.backend
        )
        rows.append(r)
        table.add_row(
            o,
            f"{r.games:,}",
            f"{r.win_rate:.2%} [{r.ci_low:.2%}, {r.ci_high:.2%}]",
            f"{r.mean_margin:+,.0f}",
            _num(r.points_per_turn, r.opp_points_per_turn),
            f"{r.bust_rate:.1%}",
            f"{r.turns_per_game:.1f}",
        )
    console.print(table)
    if regret:
        rep = analyse(spec, rules, games=args.regret_games, seed=args.seed, workers=workers, top=0).report
        console.print(
            f"regret against perfect play ({rep.games:,} games vs optimal, seed {args.seed}): "
            f"{regret_text(rep.regret_per_game, rep.regret_ci, note=rep.interval_notes.get('regret'))}; "
            "implied win rate vs optimal "
            f"{pp(rep.implied_win_rate)}% {rep.ci_text(rep.implied_ci, 'regret')} "
            f"(details: tenk analyze {spec})",
            highlight=False,
            markup=False,
        )
    if args.csv:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=trainer.CSV_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(r.csv_row(int(trained), "evaluate") for r in rows)
        atomic_write_text(Path(args.csv), buf.getvalue())
        console.print(f"wrote {args.csv}", highlight=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "evaluate",
        help="evaluation matches of a trained agent (a checkpoint, a run, zoo:NAME)",
        description="Seat-balanced matches of a trained agent (a PPO or afterstate checkpoint, a run "
        "directory, or zoo:NAME / ppo:PATH / afterstate:PATH) against agents, with 95% "
        "intervals, and its exact regret against perfect play where the game solver "
        "covers the ruleset.",
    )
    s.add_argument(
        "checkpoint",
        metavar="AGENT",
        help="a checkpoint (runs/NAME/best.zip of a PPO run, best.npz of an afterstate run), a run "
        "directory (its best checkpoint: best, else last) or a trained agent's spec (zoo:NAME, "
        "ppo:PATH, afterstate:PATH); bots have no training to evaluate: use tenk tournament",
    )
    s.add_argument("--games", type=int, default=2000, help="games per opponent, half in each seat (default 2000)")
    s.add_argument(
        "--opponents",
        nargs="+",
        metavar="SPEC",
        help="agent specs (default: random hold:300 dicenow, and optimal where it plays the ruleset)",
    )
    s.add_argument("--seed", type=seed_arg, default=2024, help="dice seed (default 2024, the trainer's eval seed)")
    s.add_argument("--workers", type=int, default=0, help="processes (default: up to 2)")
    s.add_argument("--rules", help="ruleset (default: the one the checkpoint was trained on; another is refused)")
    s.add_argument("--players", type=int, default=0, help="players (default: the checkpoint's)")
    s.add_argument(
        "--backend",
        choices=("scalar", "batched", "auto"),
        default="auto",
        help="auto (default): the batched engine against opponents it has batched forms of, the "
        "scalar engine otherwise; both play the same games",
    )
    s.add_argument(
        "--regret-games",
        type=int,
        default=1000,
        metavar="N",
        help="games analysed against optimal for the exact regret, where the game solver covers the "
        f"ruleset (default 1000; 0: skip; its interval needs {2 * MIN_DEALS} games at least; the first "
        "use solves the game once)",
    )
    s.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    s.set_defaults(func=cmd_evaluate)
