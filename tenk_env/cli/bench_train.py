"""`tenk bench train`: training steps per second of the default config (configs/ppo_demo.yaml).

Times ``MaskablePPO.learn`` on the config's envs and hyperparameters, evaluation and
checkpoints off, and splits the time between stepping the games (rollout collection,
policy forward passes included) and the gradient steps. Steps are learner decisions, the
``num_timesteps`` SB3 counts. CPU seconds are given too: on a shared machine they are the
fairer figure (``load`` shows how shared it was).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from tenk_env.io import data_dir
from tenk_env.policies.ppo import write_checkpoint
from tenk_env.training.config import load_config
from tenk_env.training.trainer import Trainer

DEFAULT_CONFIG = data_dir("configs") / "ppo_demo.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("bench train")
    g.add_argument(
        "--train-steps",
        type=int,
        default=200_000,
        help="steps timed by `tenk bench train` (default 200,000; --quick: 20,000)",
    )
    g.add_argument(
        "--train-config",
        default=str(DEFAULT_CONFIG),
        help="config for `tenk bench train` (default configs/ppo_demo.yaml)",
    )
    g.add_argument(
        "--train-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="`tenk bench train`: config override, e.g. env.n_envs=64 (repeatable)",
    )


def time_training(config: str | Path, steps: int, overrides=()) -> dict:
    import torch

    from tenk_env.training.envs import make_vec_env  # imports stable-baselines3 (torch): on run, not at `tenk --help`

    cfg = load_config(config, list(overrides))
    torch.set_num_threads(cfg.torch_threads)
    venv, backend = make_vec_env(cfg, cfg.seed)
    try:
        return _time(cfg, venv, backend, steps, config)
    finally:
        venv.close()


def _time(cfg, venv, backend: str, steps: int, config) -> dict:
    import tempfile

    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.logger import Logger

    t = Trainer(cfg, Path("/nonexistent"), resuming=False, progress=False)
    model = MaskablePPO(
        t._policy_class(),
        venv,
        policy_kwargs=t._policy_kwargs(),
        seed=cfg.seed,
        device="cpu",
        verbose=0,
        **t._ppo_kwargs(),
    )
    # without a logger of its own, every learn() leaves an empty SB3-<date> directory in /tmp
    model.set_logger(Logger(folder=None, output_formats=[]))
    if cfg.selfplay_on:
        # the 'self' entry plays the untrained policy: a snapshot costs the same as any other
        t.model = model
        with tempfile.TemporaryDirectory(prefix="tenk-bench-") as tmp:
            snap = write_checkpoint(model, Path(tmp) / "snap.zip", t.meta())
            venv.env_method("sync_league", [str(snap)])  # the league holds the weights in memory

    marks = {"collect": 0.0, "train": 0.0}

    class Clock(BaseCallback):
        def _on_rollout_start(self):
            now = time.perf_counter()
            if hasattr(self, "end"):
                marks["train"] += now - self.end
            self.start = now

        def _on_rollout_end(self):
            self.end = time.perf_counter()
            marks["collect"] += self.end - self.start

        def _on_step(self):
            return True

    rollout = cfg.env.n_envs * cfg.ppo.n_steps
    model.learn(rollout)  # warm-up: first allocation, torch's lazy init
    marks.update(collect=0.0, train=0.0)
    c0, t0 = time.process_time(), time.perf_counter()
    n0 = model.num_timesteps
    model.learn(max(steps, rollout), callback=Clock(), reset_num_timesteps=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = model.num_timesteps - n0
    return {
        "steps": n,
        "wall": wall,
        "cpu": cpu,
        "backend": backend,
        "n_envs": cfg.env.n_envs,
        "collect": marks["collect"],
        "train": marks["train"],
        "config": str(config),
        "cfg": cfg,
    }


def run(args: argparse.Namespace) -> None:
    steps = getattr(args, "train_steps", 200_000)
    if getattr(args, "quick", False):
        steps = min(steps, 20_000)
    config = getattr(args, "train_config", str(DEFAULT_CONFIG))
    r = time_training(config, steps, getattr(args, "train_set", []))
    cfg = r["cfg"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"train: {Path(r['config']).name} ({cfg.ruleset.name}, {cfg.n_players} players, backend {r['backend']}, "
        f"{r['n_envs']} envs, net {cfg.ppo.net_arch}, rollout {r['n_envs'] * cfg.ppo.n_steps:,}, "
        f"{cfg.ppo.n_epochs} epochs of batch {cfg.ppo.batch_size})"
    )
    print(
        f"  {r['steps'] / r['wall']:>10,.0f} training steps per wall second ({r['steps']:,} steps in {r['wall']:.1f} s; "
        f"{r['steps'] / r['cpu']:,.0f} per CPU second of this process; load average {load:.1f} on "
        f"{os.cpu_count()} cores)"
    )
    print(
        f"  {r['steps'] / max(r['collect'], 1e-9):>10,.0f} steps per second while collecting rollouts "
        f"({r['collect']:.1f} s), gradient steps {r['train']:.1f} s"
    )
    if cfg.torch_threads == 1 and (os.cpu_count() or 1) >= 2:
        # the gradient steps are most of the time: a second torch thread is the other core
        r2 = time_training(config, steps, list(getattr(args, "train_set", [])) + ["torch_threads=2"])
        print(
            f"  {r2['steps'] / r2['wall']:>10,.0f} training steps per wall second with torch_threads=2 "
            f"(collecting {r2['collect']:.1f} s, gradient steps {r2['train']:.1f} s; the shipped configs keep 1 "
            "thread: on a busy machine two threads wait on each other)"
        )
    print("  target: 20,000 env steps per second on 2 cores")
