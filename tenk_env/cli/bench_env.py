"""`tenk bench env`: single-game env steps per second on both engines, side by side.

TenThousand-v0: the agent picks a uniformly random legal action from
``info["action_mask"]`` (drawn from a pre-drawn block of uniforms, so the agent's own cost
stays out of the figure as far as possible); the opponent is ``dicenow`` when that agent is
registered, else ``random``. The PettingZoo AEC env: masked random self-play through
``last()`` and ``step()`` on the raw env. Each engine is timed twice, alternately, and
the faster run counts (a shared machine slows whichever run it happens to hit).
Gymnasium's FrozenLake-v1 on the same machine gives a yardstick.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from tenk_env.aec import TenThousandAEC
from tenk_env.env import TenThousandEnv
from tenk_env.policies.base import AGENTS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench env")
    g.add_argument(
        "--env-steps",
        type=int,
        default=200_000,
        help="agent steps timed by `tenk bench env` (default 200,000; --quick: 20,000)",
    )
    g.add_argument("--env-rules", default="classic", help="ruleset for `tenk bench env` (default classic)")
    g.add_argument(
        "--env-opponent",
        default=None,
        help="opponent spec for `tenk bench env` (default dicenow when registered, else random)",
    )
    g.add_argument(
        "--env-profile", action="store_true", help="`tenk bench env`: also print the top of a cProfile of the env loop"
    )


def _opponent() -> str:
    return "dicenow" if "dicenow" in AGENTS else "random"


def time_tenk(
    steps: int, rules: str = "classic", opponent: str | None = None, backend: str = "auto"
) -> tuple[float, float, int]:
    """(agent steps per wall second, per CPU second, episodes finished) for ``steps`` masked
    random steps. CPU time is the fair figure on a shared machine: it counts only the time
    this process ran on its core."""
    env = TenThousandEnv(rules=rules, opponents=[opponent or _opponent()], seat="random", backend=backend)
    u = np.random.default_rng(1).random(steps).tolist()
    _, info = env.reset(seed=0)
    episodes = 0
    t, c = time.perf_counter(), time.process_time()
    for i in range(steps):
        legal = info["action_mask"].nonzero()[0]
        _, _, term, _, info = env.step(int(legal[int(u[i] * len(legal))]))
        if term:
            episodes += 1
            _, info = env.reset()
    return steps / (time.perf_counter() - t), steps / (time.process_time() - c), episodes


def time_aec(steps: int, rules: str = "classic", n_players: int = 2, backend: str = "auto") -> tuple[float, float, int]:
    """As :func:`time_tenk` for the AEC env: every seat a masked random agent."""
    env = TenThousandAEC(rules=rules, n_players=n_players, backend=backend)
    u = np.random.default_rng(1).random(steps).tolist()
    env.reset(seed=0)
    episodes = 0
    t, c = time.perf_counter(), time.process_time()
    for i in range(steps):
        obs, _, term, _, _ = env.last()
        if term:
            episodes += 1
            env.reset()
            obs, _, _, _, _ = env.last()
        legal = obs["action_mask"].nonzero()[0]
        env.step(int(legal[int(u[i] * len(legal))]))
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


def _both(timer, steps: int, *args) -> dict[str, tuple[float, float, int]]:
    """The faster of two runs per engine, the engines taking turns."""
    timer(min(steps, 2_000), *args, "python")  # warm the tables, the caches and the compiled code
    timer(min(steps, 2_000), *args, "numba")
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(2):
        for backend in ("python", "numba"):
            r = timer(steps, *args, backend)
            if backend not in best or r[1] > best[backend][1]:
                best[backend] = r
    return best


def _rows(best: dict[str, tuple[float, float, int]], steps: int, unit: str) -> None:
    base = best["python"][1]
    for backend, (rate, cpu_rate, episodes) in best.items():
        ratio = "" if backend == "python" else f"   {cpu_rate / base:.1f}x python"
        print(
            f"  {backend:<7} {cpu_rate:>10,.0f} {unit} per CPU second ({rate:,.0f} per wall second; "
            f"{steps:,} steps, {steps / max(episodes, 1):.1f} steps/game){ratio}"
        )


def run(args: argparse.Namespace) -> None:
    steps = getattr(args, "env_steps", 200_000)
    if getattr(args, "quick", False):
        steps = min(steps, 20_000)
    rules = getattr(args, "env_rules", "classic")
    opponent = getattr(args, "env_opponent", None) or _opponent()
    print(f"env: TenThousand-v0 ({rules}, 2 players, opponent {opponent}, masked random agent), both engines")
    _rows(_both(time_tenk, steps, rules, opponent), steps, "agent steps")
    print(f"AEC: TenThousandAEC ({rules}, 2 players, masked random self-play through last() and step())")
    _rows(_both(time_aec, steps, rules, 2), steps, "steps")
    lake, lake_cpu = time_frozenlake(steps)
    print(f"  FrozenLake-v1: {lake_cpu:,.0f} steps per CPU second ({lake:,.0f} per wall second; gymnasium.make)")
    print("  target: the numba engine at 4x the Python engine or more, for both envs")
    if getattr(args, "env_profile", False):
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(time_tenk, min(steps, 50_000), rules, opponent)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
