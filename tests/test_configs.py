"""The shipped configs are found by name from any directory, and every config reader raises
the one ConfigError."""

import pytest

from tenk_env.evaluation import tournament
from tenk_env.io import ConfigError, data_dir, find_config, shipped_configs
from tenk_env.training import config as train_config
from tenk_env.training.sweep import config as sweep_config


def test_one_config_error():
    assert train_config.ConfigError is tournament.ConfigError is ConfigError
    assert issubclass(sweep_config.SweepError, ConfigError)


def test_shipped_configs_are_found_by_name_anywhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = data_dir("configs")
    assert {"ppo_demo", "tournament", "sweep_demo", "afterstate_classic"} <= set(shipped_configs())
    for name in ("ppo_demo", "ppo_demo.yaml", "configs/ppo_demo.yaml"):
        assert find_config(name) == shipped / "ppo_demo.yaml"
    assert train_config.load_config("ppo_demo").name == "ppo_demo"
    assert tournament.load_config("tournament").agents
    assert sweep_config.load_sweep("sweep_tiny").trials
    (tmp_path / "ppo_demo.yaml").write_text("rules: classic\nseed: 3\n")  # a file of that name wins
    assert train_config.load_config("ppo_demo.yaml").seed == 3


def test_an_unknown_config_names_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="'ppo_dmeo' does not exist.*ppo_demo"):
        train_config.load_config("ppo_dmeo")
    with pytest.raises(ConfigError, match="does not exist"):
        tournament.load_config("nowhere/tournament.yaml")
