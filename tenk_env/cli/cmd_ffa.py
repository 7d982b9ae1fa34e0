"""`tenk ffa AGENT`: is an agent better than every bot in a free-for-all of 3 or more players?

The agent takes one seat of a table against fixed opponents (by default the strongest bots)
and plays every deal in every rotation of the seats (:func:`tenk_env.evaluation.match.play_table`); then
each baseline bot takes the same place against the same opponents on the same deals. The
agent's win share and each bot's, with 95% Wilson intervals, answer the question: the agent
is better than every baseline when its interval lies above each of theirs.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from tenk_env.cli.args import seed_arg
from tenk_env.cli.common import BR_COST
from tenk_env.evaluation.match import default_workers, play_table
from tenk_env.policies.base import AgentSpec
from tenk_env.policies.exact import check_multi_spec, exact_eval_beside_equilibrium, seat_ceiling
from tenk_env.policies.human import check_terminal
from tenk_env.rules import load_ruleset
from tenk_env.solve import SolverError

DEFAULT_OPPONENTS = ("dicenow", "maxscore")
DEFAULT_BASELINES = ("dicenow", "maxscore", "breakeven", "hold:300", "greedy")


def ffa(
    rules, agent: str, players: int, opponents: list[str], baselines: list[str], games: int, seed: int, workers: int = 1
) -> list[tuple[str, object]]:
    """(label, TableResult) for the agent and each baseline in seat 0 of ``[X] + opponents``."""
    if len(opponents) != players - 1:
        raise ValueError(
            f"--opponents: a {players}-player table needs {players - 1} opponents "
            f"(got {len(opponents)}: {' '.join(opponents) or 'none'})"
        )
    # a misspelt baseline or a missing checkpoint fails now, not after the first tables played
    seated = [AgentSpec.parse(x) for x in [agent] + [b for b in baselines if b != agent]]
    for x in opponents:
        AgentSpec.parse(x)
    # play_table checks every agent of its table for the ruleset and players before playing
    return [(x.label, play_table(rules, [x.text] + list(opponents), games, seed, workers=workers)) for x in seated]


def cmd_ffa(args: argparse.Namespace) -> int:
    rules = load_ruleset(args.rules)
    n = args.players
    opponents = args.opponents or list(DEFAULT_OPPONENTS[: n - 1]) + ["breakeven"] * max(0, n - 3)
    check_terminal([args.agent, *opponents, *args.baselines], "tenk ffa")
    rows = ffa(
        rules, args.agent, n, opponents, args.baselines, args.games, args.seed, args.workers or default_workers()
    )
    console = Console()
    if not console.is_terminal:
        console = Console(width=max(console.width, 120))
    t = Table(
        "in seat rotation",
        "games",
        "win share [95% interval]",
        "mean score",
        title=f"{rules.name}, {n} players, against {', '.join(opponents)} (seed {args.seed})",
    )
    for label, r in rows:
        t.add_row(
            label,
            f"{r.games:,}",
            f"{r.win_rate[0]:.2%} [{r.ci_low[0]:.2%}, {r.ci_high[0]:.2%}]",
            f"{r.mean_score[0]:,.0f}",
        )
    console.print(t)
    _ceiling(console, rules, args, opponents, rows)
    agent, others = rows[0][1], rows[1:]
    best = max(others, key=lambda lr: lr[1].ci_high[0], default=None)
    if best is not None:
        sep = agent.ci_low[0] > best[1].ci_high[0]
        console.print(
            f"{rows[0][0]} {'beats' if sep else 'does not clearly beat'} every baseline: its interval's "
            f"low end {agent.ci_low[0]:.2%} {'>' if sep else '<='} the highest baseline's high end "
            f"{best[1].ci_high[0]:.2%} ({best[0]})",
            highlight=False,
        )
    return 0


def _ceiling(console: Console, rules, args: argparse.Namespace, opponents: list[str], rows) -> None:
    """The exact best response in the agent's place, beside each agent's share (3-4 players)."""
    if args.players < 3:
        return
    if all(o == "equilibrium" for o in opponents):
        _beside_equilibrium(console, rules, args, rows)
        return
    seated = [label for label, _ in rows]
    try:
        br, exact_shares = seat_ceiling(rules, opponents, seated, compute=args.exact)
    except SolverError as e:
        console.print(f"no exact ceiling for this table: {e}", highlight=False)
        return
    if br is None:
        console.print(
            f"the exact ceiling of this seat is not solved yet: tenk ffa ... --exact, or tenk solve "
            f"best-response {rules.name} {' '.join(opponents)} ({BR_COST.get(args.players, BR_COST[4])}; "
            "once: cached)",
            highlight=False,
        )
        return
    console.print(
        _gaps(
            rows,
            exact_shares,
            br.p,
            "below the ceiling",
            f"the most any agent can take in this seat: {br.p:.2%} (br:{','.join(opponents)}, exact)",
        )
    )


def _beside_equilibrium(console: Console, rules, args: argparse.Namespace, rows) -> None:
    """Each share beside what an equilibrium player takes in that place (1/N), with the bots'
    exact shares (solved with --exact, else shown when cached)."""
    n = args.players
    exact: dict[str, float] = {}
    for label, _ in rows:
        try:
            check_multi_spec(label)
        except SolverError:
            continue  # not a bot the evaluator follows: sampled only
        try:
            e = exact_eval_beside_equilibrium(rules, label, n, cached_only=not args.exact)
        except SolverError as err:
            console.print(f"no exact shares beside the equilibrium: {err}", highlight=False)
            break
        if e is not None:
            exact[label] = e.p
    console.print(
        _gaps(
            rows,
            exact,
            1 / n,
            "below an equilibrium player",
            f"against equilibrium play: an equilibrium player in this seat takes 1/{n} = {1 / n:.2%}",
        )
    )


def _gaps(rows, exact: dict[str, float], ref: float, below: str, title: str) -> Table:
    """Each agent's share, exact where known, and how far it is below ``ref`` (exact, or the
    sampled share with its interval)."""
    t = Table("in seat rotation", "win share", "exact", below, title=title)
    for label, r in rows:
        x = exact.get(label)
        lo, hi = r.ci_low[0], r.ci_high[0]
        gap = (
            f"{100 * (ref - x):.2f} points (exact)"
            if x is not None
            else f"{100 * (ref - r.win_rate[0]):.2f} [{100 * (ref - hi):.2f}, {100 * (ref - lo):.2f}] points"
        )
        t.add_row(label, f"{r.win_rate[0]:.2%} [{lo:.2%}, {hi:.2%}]", f"{x:.2%}" if x is not None else "-", gap)
    return t


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "ffa",
        help="an agent against the best bots in a free-for-all, beside each bot in its place",
        description=__doc__.split("\n\n")[1],
    )
    s.add_argument("agent", help="the agent spec, e.g. zoo:classic_afterstate_3p or afterstate:runs/NAME/best.npz")
    s.add_argument("--players", type=int, default=3, help="players per table (default 3)")
    s.add_argument(
        "--opponents", nargs="+", metavar="SPEC", help="the other seats (default: dicenow, maxscore, then breakeven)"
    )
    s.add_argument(
        "--baselines",
        nargs="+",
        metavar="SPEC",
        default=list(DEFAULT_BASELINES),
        help="bots put in the agent's place (default: " + ", ".join(DEFAULT_BASELINES) + ")",
    )
    s.add_argument("--games", type=int, default=3000, help="games per table (rounded up to whole rotations)")
    s.add_argument("--rules", default="classic", help="ruleset (default classic)")
    s.add_argument("--seed", type=seed_arg, default=0, help="dice seed (default 0): the same deals for every table")
    s.add_argument("--workers", type=int, default=0, help="processes for scalar-engine tables (default: up to 2)")
    s.add_argument(
        "--exact",
        action="store_true",
        help="solve the seat's exact ceiling (the best response to the opponents) and each bot's exact "
        f"share where they are not cached, {BR_COST[3]}; {BR_COST[4]} "
        "(without it they are shown when cached); against equilibrium opponents, each bot's "
        "exact share beside them",
    )
    s.set_defaults(func=cmd_ffa)
