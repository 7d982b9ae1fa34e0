"""`tenk bench tournament`: how fast matches and tournaments are played.

* A seat-balanced match of ``dicenow`` vs ``hold:300`` on the scalar engine (one Python
  ``Game`` per game) with 1 and 2 worker processes, and the same match, 100,000 games, on
  the batched engine (the default for these bots). Both keep every per-game row and give
  the same result for the same seed.
* A whole tournament, the default way (``tenk tournament``: batched engine, per-game rows,
  ratings, resumable chunks; the outputs are not written): the five heuristic bots and
  ``random``, every pairing.

Prints games per wall second. The target: 100,000 games of ``dicenow`` vs
``hold:300`` in under a minute on a 2-core machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from tenk_env.evaluation.match import play_match
from tenk_env.evaluation.tournament import TournamentConfig, run_tournament


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench tournament")
    g.add_argument(
        "--tournament-games",
        type=int,
        default=6_000,
        help="games per timed scalar match in `tenk bench tournament` (default 6,000; --quick: 600); "
        "the batched match plays 100,000 and the tournament 10,000 per pairing",
    )


def run(args: argparse.Namespace) -> None:
    quick = getattr(args, "quick", False)
    games = getattr(args, "tournament_games", 6_000)
    if quick:
        games = min(games, 600)
    a, b = "dicenow", "hold:300"
    play_match("classic", a, b, games=40, seed=0, backend="scalar")  # build the tables and the bots' caches
    play_match("classic", a, b, games=2_000, seed=0, backend="batched")  # compile (or load) the kernels
    print(f"tournament: seat-balanced match {a} vs {b} (classic, duplicate dice)")
    for workers in (1, 2):
        r = play_match("classic", a, b, games=games, seed=1, workers=workers, backend="scalar")
        rate = r.games / r.seconds
        print(
            f"  scalar engine, {workers} worker{'s' if workers > 1 else ' '}: {rate:>9,.0f} games/s   "
            f"({r.games:,} games in {r.seconds:.1f} s; 100,000 games would take {100_000 / rate:,.0f} s; "
            f"{a} wins {r.win_rate_a:.1%})"
        )
    bgames = games if quick else 100_000
    best = min((play_match("classic", a, b, games=bgames, seed=1) for _ in range(2)), key=lambda r: r.seconds)
    print(
        f"  {best.backend} engine (the default): {best.games / best.seconds:>9,.0f} games/s   "
        f"({best.games:,} games in {best.seconds:.1f} s; {a} wins {best.win_rate_a:.1%} "
        f"[{best.ci_low:.1%}, {best.ci_high:.1%}])"
    )
    print("  target: 100,000 games in under 60 s (1,667 games/s) on 2 cores")

    agents = ["random", "greedy", "hold:300", "hold:500", "dicenow", "breakeven"]
    per = 1_000 if quick else 10_000
    with tempfile.TemporaryDirectory() as out:
        cfg = TournamentConfig.from_dict({"agents": agents, "games": per, "seed": 1, "out": out, "name": "bench"})
        t = time.perf_counter()
        res = run_tournament(cfg, write=False)
        dt = time.perf_counter() - t
    total = res.played_now
    print(
        f"tournament: {len(agents)} agents ({', '.join(agents)}), {len(res.tables)} pairings x {per:,} games on "
        f"the {'/'.join(sorted(set(res.engines)))} engine, ratings included: {total:,} games in {dt:.1f} s = "
        f"{total / dt:,.0f} games/s"
    )
