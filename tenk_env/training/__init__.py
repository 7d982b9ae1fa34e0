"""Training behind ``tenk train``: two learner families from one kind of YAML config.

* PPO (MaskablePPO, the default): configs (:mod:`.config`), training games (:mod:`.envs`),
  the SB3 policy (:mod:`.policy`) and the run loop (:mod:`.trainer`);
* afterstate (``algo: afterstate``): :mod:`.afterstate`;
* sweeps of either over seeds and hyperparameters on Ray Tune: :mod:`.sweep`.

:func:`train_file` and :func:`resume_run` pick the family from the config, so callers (the
CLI, sweeps, notebooks) need not.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tenk_env.training.afterstate import (
    ALGO,
    AfterstateConfig,
    AfterstateResult,
    load_afterstate_config,
    resume_afterstate,
    train_afterstate,
)
from tenk_env.training.config import ConfigError, TrainConfig, load_config, parse_config, read_yaml
from tenk_env.training.rundir import RunError
from tenk_env.training.trainer import RunResult, resume, train

__all__ = [
    "ConfigError",
    "TrainConfig",
    "AfterstateConfig",
    "load_config",
    "parse_config",
    "RunError",
    "RunResult",
    "AfterstateResult",
    "train",
    "resume",
    "algo_of",
    "train_file",
    "resume_run",
]

Result = RunResult | AfterstateResult


def algo_of(config: str | Path) -> str:
    """The learner family a config file (or a run directory's config.yaml) trains: ``"ppo"``
    unless it says ``algo: afterstate``."""
    return str(read_yaml(config).get("algo", "ppo"))


def train_file(
    config: str | Path,
    overrides: Sequence[str] = (),
    *,
    argv: list[str] | None = None,
    force: str | Path | None = None,
    progress: bool = True,
) -> Result:
    """Start a new run of the config file ``config`` (a path or a shipped config's name) with
    ``overrides`` (``key=value``), in the trainer its ``algo`` names."""
    if algo_of(config) == ALGO:
        return train_afterstate(load_afterstate_config(config, list(overrides)), argv=argv, force=force)
    return train(load_config(config, list(overrides)), progress=progress, argv=argv, force=force)


def resume_run(run_dir: str | Path, overrides: Sequence[str] = (), *, progress: bool = True) -> Result:
    """Continue the run in ``run_dir`` in the trainer that wrote it (a directory without a
    config.yaml is PPO's to report as no run)."""
    cfg = Path(run_dir) / "config.yaml"
    if cfg.is_file() and algo_of(cfg) == ALGO:
        return resume_afterstate(run_dir, list(overrides))
    return resume(run_dir, list(overrides), progress=progress)
