"""`tenk bench analyze`: games per second of the regret analysis (`tenk analyze`).

Analyses a PPO agent (SB3's default MLP, untrained: the network's size is what costs, not
its skill) and ``dicenow`` against ``optimal`` on ``classic``, in worker processes. Most of
the time goes to the optimal player's within-turn value tables, one per turn-start state
that the cache has not seen (both players' turns need one), so the rate rises with the
number of games as the cache fills. Needs the classic game solution (``tenk solve game
classic``; it is solved first if missing, which takes minutes). Target: 1,000 games of a
PPO agent in under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import time

from tenk_env.cli.common import console
from tenk_env.evaluation.analysis import analyse
from tenk_env.policies.optimal import game_solution
from tenk_env.policies.ppo import untrained_ppo
from tenk_env.rules import load_ruleset
from tenk_env.units import regret_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench analyze")
    g.add_argument(
        "--analyze-games",
        type=int,
        default=1000,
        help="games per agent for `tenk bench analyze` (default 1,000; --quick: 200)",
    )
    g.add_argument(
        "--analyze-workers", type=int, default=0, help="processes for `tenk bench analyze` (default: up to 2)"
    )


def run(args: argparse.Namespace) -> None:
    games = getattr(args, "analyze_games", 1000)
    if getattr(args, "quick", False):
        games = min(games, 200)
    workers = getattr(args, "analyze_workers", 0) or max(1, min(2, os.cpu_count() or 1))
    rules = load_ruleset("classic")
    t0 = time.perf_counter()
    game_solution(rules)
    console.print(
        f"analyze: classic game solution ready in {time.perf_counter() - t0:.1f} s; {games:,} games per "
        f"agent against optimal, {workers} worker(s)",
        highlight=False,
    )
    agents = [("PPO (untrained SB3 MLP 64x64, NumPy forward pass)", untrained_ppo(rules)), ("dicenow", "dicenow")]
    for label, agent in agents:
        c0, t0 = time.process_time(), time.perf_counter()
        a = analyse(agent, rules, games, seed=1, workers=workers, top=20)
        wall = time.perf_counter() - t0
        r = a.report
        console.print(
            f"  {label}: {r.games:,} games ({r.decisions:,} decisions scored) in {wall:.1f} s = "
            f"[bold]{r.games / wall:,.1f} games/s[/bold] (play and scoring {r.seconds:.1f} s, parent CPU "
            f"{time.process_time() - c0:.1f} s); regret {regret_text(r.regret_per_game)}",
            highlight=False,
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    console.print(
        f"  target: 1,000 PPO games in under 60 s on 2 cores (load average {load:.1f} on {os.cpu_count()} cores)",
        highlight=False,
    )
