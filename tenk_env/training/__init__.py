"""The PPO trainer behind ``tenk train``: configs (:mod:`.config`), training games
(:mod:`.envs`) and the run loop (:mod:`.trainer`)."""

from tenk_env.training.config import ConfigError, TrainConfig, load_config, parse_config
from tenk_env.training.trainer import RunError, RunResult, resume, train

__all__ = ["ConfigError", "TrainConfig", "load_config", "parse_config", "RunError", "RunResult", "train", "resume"]
