"""`tenk bench engine`: the batched engine's speed, next to the single environment's.

Rows, all under ``classic`` with 2 players:

* ``TenThousandEnv``: the single-agent Gymnasium env (scalar engine), random legal
  actions against the ``random`` opponent: env steps (learner decisions) per second.
* ``TenThousandVectorEnv``: the Gymnasium VectorEnv over the batched engine, 1,024 envs,
  random legal learner actions against ``dicenow`` (its decisions run inside each step):
  learner steps per second.
* ``BatchedGame``: batched-engine steps per second, one step being one decision in one
  game (every seat's decisions count), with a uniformly random legal action per game
  drawn by :meth:`BatchedGame.random_actions` (that time is included), per
  thread count and batch size. Games per second are steps per second over the mean
  decisions per random game (measured once, in steady state: a short timing of a big
  batch would only see games started together).
* Heuristic bots: games of ``dicenow`` vs ``hold:300`` per second played by the
  vectorised bots (:mod:`tenk_env.policies.batched`), seats balanced, and the time 100,000 games take.
* PPO policy: games per second of an (untrained) SB3 MLP policy against ``dicenow``, the
  policy evaluated in one NumPy forward pass for all the games waiting for it.

Targets on the 2-core machine: 5,000,000 batched steps per second with random
legal actions, and 100,000 games of ``dicenow`` vs ``hold:300`` in under a minute. Timings
on a machine shared with other work are pessimistic: each figure is the best of a few
repeats.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from rich.table import Table

from tenk_env.cli.common import console
from tenk_env.env import TenThousandEnv
from tenk_env.evaluation.match import play_match
from tenk_env.policies.ppo import untrained_ppo
from tenk_env.vector import BatchedGame
from tenk_env.vector.envs import TenThousandVectorEnv


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench engine")
    g.add_argument(
        "--engine-batches",
        default="256,4096,16384",
        help="batch sizes timed by `tenk bench engine` (comma-separated; default 256,4096,16384)",
    )
    g.add_argument(
        "--engine-seconds",
        type=float,
        default=2.0,
        help="seconds per timed row of `tenk bench engine` (default 2; --quick: 0.3)",
    )
    g.add_argument(
        "--engine-threads", default="1,2", help="numba thread counts timed by `tenk bench engine` (default 1,2)"
    )
    g.add_argument(
        "--bot-games",
        type=int,
        default=100_000,
        help="games of dicenow vs hold:300 in `tenk bench engine` (default 100,000; --quick: 5,000)",
    )


def _best_rate(work, seconds: float, repeats: int = 3) -> tuple[float, float]:
    """(best units/s, best games/s) over ``repeats`` timed runs of about seconds/repeats each."""
    best = (0.0, 0.0)
    for _ in range(repeats):
        units = games = 0
        t0 = time.perf_counter()
        while True:
            u, g = work()
            units += u
            games += g
            dt = time.perf_counter() - t0
            if dt >= seconds / repeats:
                break
        best = max(best, (units / dt, games / dt))
    return best


def bench_single_env(seconds: float) -> tuple[float, float]:
    env = TenThousandEnv("classic", 2, opponents="random", seat=0)
    rng = np.random.default_rng(0)
    env.reset(seed=0)

    def work():
        steps = games = 0
        for _ in range(200):
            m = env.action_masks()
            _, _, term, _, _ = env.step(int(rng.choice(np.flatnonzero(m))))
            steps += 1
            if term:
                games += 1
                env.reset()
        return steps, games

    return _best_rate(work, seconds)


def decisions_per_game() -> float:
    """Mean decisions of a random-play game, from 2,000 games in steady state."""
    e = BatchedGame("classic", 2, 512, seed=1)
    rng = np.random.default_rng(1)
    a = np.zeros(512, np.int64)
    while e.stats["games"] < 2_000:
        e.step(e.random_actions(rng, a))
    return e.stats["decisions"] / e.stats["games"]


def bench_batched(batch: int, threads: int | None, seconds: float) -> float:
    e = BatchedGame("classic", 2, batch, seed=0, threads=threads)
    rng = np.random.default_rng(0)
    a = np.zeros(batch, np.int64)
    for _ in range(3):  # compile / warm caches
        e.step(e.random_actions(rng, a))
    calls = max(1, 200_000 // batch)

    def work():
        d0 = e.stats["decisions"]
        for _ in range(calls):
            e.step(e.random_actions(rng, a))
        return e.stats["decisions"] - d0, 0

    return _best_rate(work, seconds)[0]


def bench_vector_env(num_envs: int, seconds: float) -> tuple[float, float]:
    """TenThousandVectorEnv: learner steps per second (random legal actions, dicenow inside)."""
    venv = TenThousandVectorEnv(num_envs, "classic", 2, opponents="dicenow")
    venv.reset(seed=0)
    rng = np.random.default_rng(0)

    def work():
        steps = games = 0
        for _ in range(20):
            m = venv.action_masks()
            cs = np.cumsum(m, axis=1)
            a = np.argmax(cs > (rng.random(num_envs) * cs[:, -1])[:, None], axis=1)
            _, _, term, _, _ = venv.step(a)
            steps += num_envs
            games += int(term.sum())
        return steps, games

    work()
    return _best_rate(work, seconds)


def run(args: argparse.Namespace) -> None:
    quick = getattr(args, "quick", False)
    seconds = 0.3 if quick else getattr(args, "engine_seconds", 2.0)
    batches = [int(x) for x in str(getattr(args, "engine_batches", "256,4096,16384")).split(",") if x.strip()]
    threads = [int(x) for x in str(getattr(args, "engine_threads", "1,2")).split(",") if x.strip()]
    bot_games = getattr(args, "bot_games", 100_000)
    if quick:
        bot_games = min(bot_games, 5_000)

    t = Table(
        title=f"engine: steps per second, classic, 2 players, random legal actions "
        f"({time.strftime('%Y-%m-%d')}; best of 3)"
    )
    for col in ("engine", "game engine", "threads", "batch", "steps/s", "games/s"):
        t.add_column(col, justify="right" if col in ("threads", "batch", "steps/s", "games/s") else "left")
    sps, gps = bench_single_env(seconds)
    t.add_row("TenThousandEnv", "scalar", "1", "1", f"{sps:,.0f}", f"{gps:,.0f}")
    sps, gps = bench_vector_env(1024, seconds)
    t.add_row("TenThousandVectorEnv*", "batched", "1", "1,024", f"{sps:,.0f}", f"{gps:,.0f}")
    per_game = decisions_per_game()
    for th in threads:
        for b in batches:
            sps = bench_batched(b, th, seconds)
            t.add_row("BatchedGame", "batched", str(th), f"{b:,}", f"{sps:,.0f}", f"{sps / per_game:,.0f}")
    console.print(t)
    console.print(
        f"a random-play game lasts {per_game:.1f} decisions (both seats); * learner steps with "
        "random legal actions against dicenow, whose decisions run inside the step"
    )
    console.print("target: 5,000,000 batched steps/s with random legal actions on 2 cores")
    bench_bot_games(bot_games, console)
    bench_ppo_games(2_000 if quick else 20_000, console)


def bench_ppo_games(games: int, console) -> None:
    """`tenk bench engine`'s PPO row: an (untrained) PPO policy vs dicenow, one forward pass a step."""
    try:
        ppo = untrained_ppo()
    except ImportError as e:  # pragma: no cover
        console.print(f"PPO row skipped: {e}")
        return
    play_match("classic", ppo, "dicenow", 200, seed=0)
    r = play_match("classic", ppo, "dicenow", games, seed=1)
    rate = r.games / r.seconds
    console.print(
        f"PPO policy (SB3 default MLP 64x64, NumPy forward pass) vs dicenow, {r.backend} engine: "
        f"{r.games:,} games in {r.seconds:.1f} s = {rate:,.0f} games/s"
    )
    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        # measured on the 2-core machine under load: 15 ms per 2,000-row forward pass with
        # OpenBLAS's threads, 0.4 ms with one (a threaded BLAS call waits for a busy core)
        console.print(
            "  (NumPy's BLAS runs threaded here; OPENBLAS_NUM_THREADS=1 is often much faster on 2 busy "
            "cores: try `OPENBLAS_NUM_THREADS=1 tenk bench engine`)"
        )


def bench_bot_games(games: int, console) -> None:
    """`tenk bench engine`'s bot row: dicenow vs hold:300 on the batched engine, per-game rows kept
    (the way matches and tournaments play them)."""
    play_match("classic", "dicenow", "hold:300", 2_000, seed=0)  # compile
    best = min((play_match("classic", "dicenow", "hold:300", games, seed=1) for _ in range(2)), key=lambda r: r.seconds)
    rate = best.games / best.seconds
    console.print(
        f"vectorised bots: dicenow vs hold:300 (classic, seats balanced, duplicate dice), {best.backend} "
        f"engine: {best.games:,} games in {best.seconds:.1f} s = {rate:,.0f} games/s "
        f"(100,000 games: {100_000 / rate:.1f} s; target under 60 s); dicenow wins {best.win_rate_a:.1%}"
    )
