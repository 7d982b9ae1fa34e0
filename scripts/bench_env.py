"""`tenk bench env`: single-env agent steps per second, with masks and a built-in opponent.

The agent picks a uniformly random legal action from ``info["action_mask"]`` (drawn from
a pre-drawn block of uniforms, so the agent's own cost stays out of the figure as far
as possible); the opponent is ``dicenow`` when that agent is registered, else
``random``. Gymnasium's FrozenLake-v1 on the same machine gives the yardstick.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench env")
    g.add_argument("--env-steps", type=int, default=200_000,
                   help="agent steps timed by `tenk bench env` (default 200,000; --quick: 20,000)")
    g.add_argument("--env-rules", default="classic", help="ruleset for `tenk bench env` (default classic)")
    g.add_argument("--env-opponent", default=None,
                   help="opponent spec for `tenk bench env` (default dicenow when registered, else random)")
    g.add_argument("--env-profile", action="store_true",
                   help="`tenk bench env`: also print the top of a cProfile of the env loop")


def _opponent() -> str:
    from agents.base import AGENTS

    return "dicenow" if "dicenow" in AGENTS else "random"


def time_tenk(steps: int, rules: str = "classic", opponent: str | None = None) -> tuple[float, float, int]:
    """(agent steps per wall second, per CPU second, episodes finished) for ``steps`` masked
    random steps. CPU time is the fair figure on a shared machine: it counts only the time
    this process ran on its core."""
    from tenk_env.env import TenThousandEnv

    env = TenThousandEnv(rules=rules, opponents=[opponent or _opponent()], seat="random")
    u = np.random.default_rng(1).random(steps).tolist()
    _, info = env.reset(seed=0)
    episodes = 0
    flatnonzero = np.flatnonzero
    t, c = time.perf_counter(), time.process_time()
    for i in range(steps):
        legal = flatnonzero(info["action_mask"])
        _, _, term, _, info = env.step(int(legal[int(u[i] * len(legal))]))
        if term:
            episodes += 1
            _, info = env.reset()
    return steps / (time.perf_counter() - t), steps / (time.process_time() - c), episodes


def time_frozenlake(steps: int) -> tuple[float, float]:
    import gymnasium as gym

    env = gym.make("FrozenLake-v1")
    env.reset(seed=0)
    actions = np.random.default_rng(1).integers(4, size=steps).tolist()
    t, c = time.perf_counter(), time.process_time()
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - t), steps / (time.process_time() - c)


def run(args: argparse.Namespace) -> None:
    steps = getattr(args, "env_steps", 200_000)
    if getattr(args, "quick", False):
        steps = min(steps, 20_000)
    rules = getattr(args, "env_rules", "classic")
    opponent = getattr(args, "env_opponent", None) or _opponent()
    time_tenk(min(steps, 2_000), rules, opponent)  # warm the tables and the caches
    rate, cpu_rate, episodes = time_tenk(steps, rules, opponent)
    lake, lake_cpu = time_frozenlake(steps)
    print(f"env: TenThousand-v0 ({rules}, 2 players, opponent {opponent}, masked random agent)")
    print(f"  {cpu_rate:>10,.0f} agent steps per CPU second   ({rate:,.0f} per wall second; {steps:,} steps, "
          f"{episodes:,} games, {steps / max(episodes, 1):.1f} steps/game)")
    print(f"  {lake_cpu:>10,.0f} FrozenLake-v1 steps per CPU second ({lake:,.0f} per wall second; gymnasium.make)")
    print(f"  TenThousand-v0 runs at {cpu_rate / lake_cpu:.2f}x FrozenLake; target 50,000 agent steps/s on one core")
    if getattr(args, "env_profile", False):
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(time_tenk, min(steps, 50_000), rules, opponent)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
