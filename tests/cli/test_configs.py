"""The shipped configs are found by name from any directory, every config reader raises
the one ConfigError, and training and tournament configs share one dialect (tenk_env.schema)."""

import pytest

from tenk_env import schema
from tenk_env.evaluation import tournament
from tenk_env.io import data_dir, find_config, shipped_configs
from tenk_env.schema import ConfigError
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


def test_tournament_config_is_described_like_the_training_configs():
    rows = {key: (default, text) for key, default, text in schema.describe_fields(tournament.TournamentConfig)}
    assert list(rows) == tournament.TournamentConfig.keys()
    assert all(text for _, text in rows.values())
    assert rows["agents"][0] == "(required)" and rows["games"] == (
        "2000",
        "games per table, rounded up to whole deals (a multiple of players)",
    )
    assert train_config.describe_fields()[0][0] == "name"


def test_training_and_tournament_configs_check_keys_with_one_function(monkeypatch):
    seen = []

    def spy(data, known, prefix="", message=schema.unknown_key, error=ConfigError):
        seen.append(list(known))
        return check(data, known, prefix, message, error)

    check = schema.check_keys
    monkeypatch.setattr(schema, "check_keys", spy)
    with pytest.raises(ConfigError, match=r"unknown config key ppo\.lerning_rate \(did you mean 'learning_rate'\?\)"):
        train_config.parse_config({"ppo": {"lerning_rate": 1e-3}})
    with pytest.raises(ConfigError, match=r"unknown key 'gmaes' \(did you mean 'games'\?\)"):
        tournament.TournamentConfig.from_dict({"agents": ["greedy", "dicenow"], "gmaes": 10})
    assert seen[0] == [f.name for f in schema.public_fields(train_config.TrainConfig)]
    assert seen[-1] == tournament.TournamentConfig.keys()


def test_sweep_files_speak_the_same_dialect(monkeypatch):
    rows = {key: (default, text) for key, default, text in schema.describe_fields(sweep_config.SweepFile)}
    assert all(text for _, text in rows.values())
    top = {key.partition(".")[0] for key in rows}
    assert top == set(sweep_config.SWEEP_KEYS)
    assert {
        "resources.cpus",
        "resources.torch_threads",
        "scheduler.type",
        "scheduler.grace_steps",
        "scheduler.reduction_factor",
        "report.reps",
        "report.curve_reps",
        "report.seed",
    } <= set(rows)
    assert rows["base"][0] == "(required)" and rows["scheduler"][0] == "null" and rows["report.reps"][0] == "2000"

    seen = []

    def spy(data, known, prefix="", message=schema.unknown_key, error=ConfigError):
        seen.append((prefix, list(known)))
        return check(data, known, prefix, message, error)

    check = schema.check_keys
    monkeypatch.setattr(schema, "check_keys", spy)
    with pytest.raises(
        sweep_config.SweepError,
        match=r"^src: unknown key seedz \(did you mean 'seeds'\?\); the top "
        r"level has: name, runs_dir, base",
    ):
        sweep_config.parse_sweep({"base": "ppo_demo.yaml", "seedz": 3}, source="src")
    assert seen == [("", list(sweep_config.SWEEP_KEYS))]
    with pytest.raises(
        sweep_config.SweepError,
        match=r"unknown key report\.rep \(did you mean 'reps'\?\); report "
        r"has: reps, curve_reps, seed$",
    ):
        sweep_config.parse_sweep({"base": str(find_config("ppo_demo")), "report": {"rep": 10}}, source="src")
    assert seen[-1] == ("report", ["reps", "curve_reps", "seed"])
