"""The PPO trainer behind ``tenk train``: configs (:mod:`.config`), training games
(:mod:`.envs`) and the run loop (:mod:`.trainer`)."""

from scripts.train.config import ConfigError, TrainConfig, load_config, parse_config
from scripts.train.trainer import RunError, RunResult, resume, train

__all__ = ["ConfigError", "TrainConfig", "load_config", "parse_config", "RunError", "RunResult", "train", "resume"]
