"""`tenk analyze SPEC`: an agent's exact regret against perfect play, and where it comes from.

Plays seat-balanced duplicate games of the agent against ``optimal`` and scores each of its
decisions with its exact regret (:mod:`tenk_env.evaluation.analysis`); prints the regret per game, the
implied and the empirical win rate against ``optimal`` with their intervals, the kinds of
mistake and the costliest ones, and writes report.json, breakdown.csv, atlas.png,
mistakes.jsonl and mistakes/NN.jsonl (game records up to each mistake: ``tenk replay`` prints
one and where it stands, exiting 1 as for any record that ends before its game does;
``tenk_env.records.replay`` loads it into a Game at that decision) under ``--out``.

An interval is printed only where it is honest (:func:`tenk_env.evaluation.analysis._interval`: enough
deals, and enough with a mistake); otherwise ``(n/a)`` and a line saying why. Every count is
checked before any work, ``--games`` against the memory the analysis would take. A game not
solved yet is announced before it is solved (the solution is then cached).
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from tenk_env.cli.args import seed_arg
from tenk_env.evaluation.analysis import (
    KINDS,
    MIN_DEALS,
    analyse,
    answers_text,
    check_analysis,
    check_out_dir,
    default_out_dir,
    write_outputs,
)
from tenk_env.policies.base import make_agent
from tenk_env.policies.human import QuitGame
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import cache_dir
from tenk_env.units import REGRET_HEADER, pp, pp_interval


def _rules_for(spec: str, rules: str | None):
    if rules:
        return load_ruleset(rules)
    # a trained agent (a checkpoint, a zoo entry) plays the ruleset it was trained on
    meta = getattr(make_agent(spec), "meta", None)
    if isinstance(meta, dict) and "ruleset" in meta:
        return Ruleset.from_dict(meta["ruleset"], source=spec)
    return load_ruleset("classic")


#: the flags named in the analysis' messages
FLAGS = {"games": "--games", "workers": "--workers", "top": "--top"}


def cmd_analyze(args: argparse.Namespace) -> int:
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 120))  # logs and pipes: keep rows on one line

    rules = _rules_for(args.spec, args.rules)
    # everything that can be wrong is found before the games start
    if args.show < 0:
        raise ValueError(f"--show {args.show}: give how many of the kept mistakes to print (>= 0)")
    agent = check_analysis(args.spec, rules, args.games, args.workers, args.top, names=FLAGS)
    out = check_out_dir(args.out or default_out_dir(args.spec, rules))
    human = getattr(agent, "name", None) == "human"
    # a bar on a terminal (not over a human's prompts); logs get the lines only
    progress = args.progress if args.progress is not None else console.is_terminal and not human
    say = lambda line: console.print(line, highlight=False, markup=False)  # noqa: E731
    try:
        a = analyse(
            args.spec, rules, args.games, args.seed, workers=args.workers, top=args.top, progress=progress, say=say
        )
    except QuitGame:
        console.print("you left the game: nothing analysed, nothing written", highlight=False)
        return 1
    r = a.report
    ci = lambda c: pp_interval(c, note="n/a")  # noqa: E731
    console.print(
        f"[bold]{r.agent}[/bold] vs optimal on {r.rules} (hash {r.rules_hash}): {r.games:,} games "
        f"({r.deals:,} deals, seed {r.seed}), {r.decisions:,} decisions scored, {r.mistakes:,} mistakes; "
        f"{r.seconds:.1f} s ({r.games / max(r.seconds, 1e-9):,.0f} games/s, {r.workers} worker(s))",
        highlight=False,
    )
    t = Table(title=f"win probability (percentage points), {REGRET_HEADER}; 95% intervals over deals")
    first = "" if rules.turn_order == "highest_die" else " (moves first)"
    for col in ("", f"seat 1{first}", "seat 2 (komi)" if rules.komi else "seat 2", "balanced"):
        t.add_column(col, justify="right")
    t.add_row(REGRET_HEADER, pp(r.regret_seat[0]), pp(r.regret_seat[1]), f"{pp(r.regret_per_game)} {ci(r.regret_ci)}")
    t.add_row("optimal's own win rate", pp(r.optimal_seat[0]), pp(r.optimal_seat[1]), pp(sum(r.optimal_seat) / 2))
    t.add_row(
        "implied win rate",
        f"{pp(r.implied_seat[0])} {ci(r.implied_seat_ci[0])}",
        f"{pp(r.implied_seat[1])} {ci(r.implied_seat_ci[1])}",
        f"{pp(r.implied_win_rate)} {ci(r.implied_ci)}",
    )
    t.add_row(
        "empirical win rate",
        f"{pp(r.empirical_seat[0])} {ci(r.empirical_seat_ci[0])}",
        f"{pp(r.empirical_seat[1])} {ci(r.empirical_seat_ci[1])}",
        f"{pp(r.empirical_win_rate)} {ci(r.empirical_ci)}",
    )
    console.print(t)
    why: dict[str, list[str]] = {}
    for key, text in r.interval_notes.items():
        why.setdefault(text, []).append(key)
    for text, keys in why.items():
        console.print(f"n/a ({', '.join(keys)}): {text}", highlight=False)
    if r.sample_sizes:
        s = r.sample_sizes
        console.print(
            f"to pin the win rate to +-{100 * s['half_width']:g} percentage point"
            f"{'s' * (s['half_width'] != 0.01)} (95%): about {s['decisions_by_regret']:,} "
            f"decisions graded ({s['games_by_regret']:,} games), against {s['games_by_outcome']:,} games "
            "counted by outcome",
            highlight=False,
        )
    answers = answers_text(r.agent_stats, tokens=True)
    if answers:
        console.print(f"language model: {answers}", highlight=False)
    if r.mistakes == 0:
        console.print("no regret in any game", highlight=False)
    elif r.width_ratio is not None:
        console.print(
            f"the regret interval is {r.width_ratio:.1f} times narrower than the empirical one "
            f"(Wilson over games, as `tenk evaluate`: {ci(r.empirical_wilson)})",
            highlight=False,
        )
    console.print(f"{REGRET_HEADER} by kind: " + "; ".join(f"{k} {pp(r.by_kind[k])}" for k in KINDS), highlight=False)
    if a.mistakes:
        m = Table(title=f"the {len(a.mistakes)} costliest mistakes (W* and regret: percentage points)")
        for col in ("#", "scores (own-opp)", "turn total", "roll", "move", "W*", "best", "W*", "regret"):
            m.add_column(col, justify="right")
        for d in a.mistakes[: args.show]:
            pos, p = d["position"], d["position"]["player"]
            mv = lambda x: f"{' '.join(map(str, x['keep']))} {'bank' if x['end'] else 'roll'}"  # noqa: E731
            flags = " final" if pos["final_turn"] else ""
            m.add_row(
                str(d["rank"]),
                f"{pos['scores'][p]:,}-{pos['scores'][1 - p]:,}{flags}",
                f"{pos['turn_total']:,}",
                " ".join(map(str, pos["dice"])),
                mv(d["move"]),
                pp(d["move"]["value"]),
                mv(d["best"]),
                pp(d["best"]["value"]),
                pp(d["regret"]),
            )
        console.print(m)
    paths = write_outputs(a, out)
    console.print(
        f"wrote {out}/: " + ", ".join(p.name for p in paths.values()) + f"  (game solution cached in {cache_dir()})",
        highlight=False,
    )
    if a.mistakes:
        console.print(
            f"open a mistake at its decision in the browser: tenk serve {out}/mistakes/01.jsonl",
            highlight=False,
            soft_wrap=True,
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "analyze",
        help="an agent's exact regret against optimal play, and where it comes from",
        description="Play seat-balanced duplicate games of an agent against `optimal` and score "
        "each of its decisions with its exact regret (win probability given away). "
        "2-player rulesets the game solver covers.",
    )
    s.add_argument("spec", help="agent spec: dicenow, hold:300, maxscore, ppo:runs/NAME/best.zip, ...")
    s.add_argument("--rules", help="ruleset preset or YAML (default: classic; a trained agent: its own)")
    s.add_argument(
        "--games",
        type=int,
        default=1000,
        help=f"games, half in each seat (default 1000; intervals need {2 * MIN_DEALS} at least)",
    )
    s.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="dice seed: deal d has the dice of `tenk evaluate`'s deal d under the same seed (default 0)",
    )
    s.add_argument("--workers", type=int, default=0, help="processes (default: up to 2)")
    s.add_argument("--out", help="output directory (default runs/analysis/AGENT-RULESET)")
    s.add_argument(
        "--top", type=int, default=20, help="costliest mistakes to keep with their game records (default 20)"
    )
    s.add_argument("--show", type=int, default=10, help="of which to print (default 10)")
    s.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar over the games (default: on a terminal, except for human)",
    )
    s.set_defaults(func=cmd_analyze)
