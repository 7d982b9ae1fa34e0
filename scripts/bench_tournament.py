"""`tenk bench tournament`: seat-balanced match speed, ``dicenow`` vs ``hold:300``.

Times :func:`agents.match.play_match` on the scalar engine (one Python ``Game`` per game,
which plays every agent and keeps per-game results) with 1 and 2 worker processes, and,
when agents/batched.py vectorises both bots, a full 100,000-game match on the batched
engine with 1 and 2 threads. Prints games per wall second. The issue's target is
100,000 games in under a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench tournament")
    g.add_argument("--tournament-games", type=int, default=6_000,
                   help="games per timed match in `tenk bench tournament` (default 6,000; --quick: 600)")


def run(args: argparse.Namespace) -> None:
    from agents.match import play_match

    games = getattr(args, "tournament_games", 6_000)
    if getattr(args, "quick", False):
        games = min(games, 600)
    a, b = "dicenow", "hold:300"
    play_match("classic", a, b, games=40, seed=0)  # build the tables and the bots' caches first
    print(f"tournament: seat-balanced match {a} vs {b} (classic, duplicate dice), {games:,} games")
    for workers in (1, 2):
        t = time.perf_counter()
        r = play_match("classic", a, b, games=games, seed=1, workers=workers)
        dt = time.perf_counter() - t
        rate = r.games / dt
        print(f"  scalar engine, {workers} worker{'s' if workers > 1 else ' '}: {rate:>8,.0f} games/s   "
              f"({r.games:,} games in {dt:.1f} s; 100,000 games would take {100_000 / rate:,.0f} s; "
              f"{a} wins {r.win_rate_a:.1%})")
    from agents.match import batched_supports

    if batched_supports(a) and batched_supports(b):
        bgames = games if getattr(args, "quick", False) else 100_000
        play_match("classic", a, b, games=2_000, seed=0, backend="batched")  # compile (or load) the kernels
        for threads in (1, 2):
            t = time.perf_counter()
            r = play_match("classic", a, b, games=bgames, seed=1, workers=threads, backend="batched")
            dt = time.perf_counter() - t
            print(f"  batched engine, {threads} thread{'s' if threads > 1 else ' '}: {r.games / dt:>8,.0f} games/s   "
                  f"({r.games:,} games in {dt:.1f} s; {a} wins {r.win_rate_a:.1%})")
    else:
        print("  batched engine: not available for these agents (agents/batched.py missing or without them)")
    print("  target: 100,000 games in under 60 s (1,667 games/s) on 2 cores")
