"""tenk train end to end (a few thousand steps), the ppo:PATH agent, config errors.

The smoke run trains with self-play on, evaluates, checkpoints, is interrupted by a
SIGINT (sent by an opponent from inside the training games, so the moment is exact),
resumes, finishes, and its checkpoint then plays as ``ppo:PATH`` in a match, in
``tenk evaluate`` and refuses a game it was not trained for.
"""

from __future__ import annotations

import json
import os
import re
import signal

import numpy as np
import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.obs import OBS_VERSION
from tenk_env.policies.base import AGENTS, RandomAgent, make_agent
from tenk_env.policies.ppo import CheckpointError, PPOAgent, read_meta
from tenk_env.rules import PRESETS
from tenk_env.training.config import ConfigError, apply_overrides, load_config, parse_config
from tenk_env.training.trainer import resume, train

from support import CONFIGS


# ---------------------------------------------------------------- configs
@pytest.mark.slow
def test_shipped_configs_validate():
    names = sorted(p.name for p in CONFIGS.glob("ppo_*.yaml"))
    assert {"ppo_demo.yaml", "ppo_classic.yaml", "ppo_selfplay.yaml"} <= set(names)
    assert len(names) >= 4, "a config for a non-default preset is shipped too"
    presets = set()
    for name in names:
        cfg = load_config(CONFIGS / name)
        assert cfg.name == name[:-5]
        presets.add(cfg.ruleset.name)
    assert len(presets) >= 2
    assert load_config(CONFIGS / "ppo_selfplay.yaml").selfplay_on


@pytest.mark.parametrize(
    "data, words",
    [
        ({"ppo": {"learnig_rate": 1e-3}}, ["ppo.learnig_rate", "did you mean 'learning_rate'"]),
        ({"totl_steps": 5}, ["totl_steps", "did you mean 'total_steps'"]),
        ({"total_steps": "lots"}, ["total_steps", "not an integer"]),
        ({"ppo": {"net_arch": 64}}, ["ppo.net_arch", "list"]),
        ({"env": {"n_envs": True}}, ["env.n_envs", "not an integer"]),
        ({"ppo": "fast"}, ["ppo", "mapping"]),
        ({"rules": "clasic"}, ["rules", "did you mean 'classic'"]),
        ({"rules": {"base": "classic", "target": -5}}, ["rules", "target"]),
        ({"opponents": ["hodl:300"]}, ["hodl", "did you mean 'hold'"]),
        ({"opponents": {"random": 0}}, ["weight", "positive"]),
        ({"opponents": []}, ["empty"]),
        ({"eval": {"opponents": ["random"], "best_by": "dicenow"}}, ["eval.best_by", "dicenow"]),
        ({"eval": {"opponents": ["self"]}}, ["training-pool"]),
        ({"env": {"backend": "gpu"}}, ["env.backend", "choose one of"]),
        ({"env": {"n_envs": 2}, "ppo": {"n_steps": 8, "batch_size": 64}}, ["batch_size", "exceeds the rollout"]),
        ({"ppo": {"activation": "gelu"}}, ["ppo.activation", "tanh"]),
        ({"env": {"shaping": 1, "shaping_potential": "win_prob"}}, ["win_prob is not offered", "solver only measures"]),
        ({"env": {"shaping_potential": "score"}}, ["env.shaping_potential", "margin"]),
        ({"n_players": 9}, ["n_players"]),
        ({"name": "a/b"}, ["name", "plain directory name"]),
        ({"seed": -1}, ["seed = -1", "0 to 2**32 - 1"]),
        ({"eval": {"seed": 2**32}}, ["eval.seed", "0 to 2**32 - 1"]),
    ],
)
def test_config_errors_name_the_key(data, words):
    with pytest.raises(ConfigError) as e:
        parse_config(data)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_config_values_and_overrides():
    # PyYAML reads 3e-4 (no dot) as a string; the config takes it as the number it looks like
    cfg = parse_config(
        yaml.safe_load("ppo: {learning_rate: 3e-4}\ntotal_steps: 1e5\nopponents: {random: 1, 'hold:300': 3}")
    )
    assert cfg.ppo.learning_rate == 3e-4 and cfg.total_steps == 100_000
    assert cfg.pool == [("random", 0.25), ("hold:300", 0.75)]
    assert cfg.eval_opponents[:3] == ["random", "hold:300", "dicenow"]
    assert cfg.best_by == cfg.eval_opponents[-1]
    data = apply_overrides({"ppo": {"n_epochs": 4}}, ["ppo.learning_rate=1e-3", "total_steps=2000", "seed=7"])
    cfg = parse_config(data)
    assert (cfg.ppo.learning_rate, cfg.ppo.n_epochs, cfg.total_steps, cfg.seed) == (1e-3, 4, 2000, 7)
    for bad, word in [
        ("ppo.lerning_rate=1", None),
        ("nope=1", "unknown config key"),
        ("ppo=1", "section"),
        ("total_steps", "key=value"),
        ("seed.x=1", "not a section"),
    ]:
        with pytest.raises(ConfigError) as e:
            parse_config(apply_overrides({}, [bad]))
        if word:
            assert word in str(e.value)
        else:
            assert "did you mean 'learning_rate'" in str(e.value)


def test_cli_config_error_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  n_epoch: 3\n")
    assert main(["train", "--config", str(bad)]) == 2
    err = capsys.readouterr().out
    assert "n_epoch" in err and "did you mean 'n_epochs'" in err
    assert main(["train", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert main(["train", "--resume", str(tmp_path)]) == 2  # not a run directory


@pytest.mark.parametrize(
    "data, message",
    [
        (
            {"ppo": {"net_arch": [100000, 100000]}},
            "ppo.net_arch = [100000, 100000]: the policy and value networks (20,026,500,000 parameters) would take "
            "640.8 GB of memory, over the limit of 4.0 GB; lower it, e.g. ppo.net_arch=[128, 128]",
        ),
        (
            {"env": {"n_envs": 1_000_000}},
            "env.n_envs * ppo.n_steps = 128,000,000: the rollout buffer (128,000,000 steps of 808 bytes) would take "
            "103.4 GB of memory, over the limit of 4.0 GB; lower it, e.g. env.n_envs=16 and ppo.n_steps=128",
        ),
        (
            {"eval": {"regret_games": 1e12}},
            "eval.regret_games = 1,000,000,000,000: give at most 1,000,000 games per evaluation",
        ),
        ({"eval": {"games": 1e12}}, "eval.games = 1,000,000,000,000: give at most 1,000,000 games per evaluation"),
        (
            {"eval": {"final_games": 2_000_000}},
            "eval.final_games = 2,000,000: give at most 1,000,000 games per evaluation",
        ),
    ],
)
def test_sizes_are_bounded_before_any_work(data, message):
    with pytest.raises(ConfigError) as e:
        parse_config(data)
    assert str(e.value) == f"config: {message}"


# ---------------------------------------------------------------- the pool
def test_pool_is_drawn_per_game_by_weight():
    from tenk_env.env import TenThousandEnv
    from tenk_env.training.envs import League, PoolEnv

    cfg = parse_config({"opponents": {"random": 1, "hold:300": 3}})
    env = PoolEnv(TenThousandEnv(opponents=["random"]), cfg.pool, League(), seed=3)
    names = []
    for _ in range(400):
        env.reset()
        names.append(env.unwrapped.opponents[0].name)
    share = names.count("hold:300") / len(names)
    assert 0.68 < share < 0.82, share
    # the label of the game's opponent comes back when the game ends
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    while True:
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term:
            break
    assert info["opponent"] in ("random", "hold:300")


# ---------------------------------------------------------------- the smoke run
class _Interrupter(RandomAgent):
    """A random opponent that presses Ctrl-C (SIGINT to this process) on its Nth decision."""

    name = "interrupter"
    calls = 0
    at = 10**9

    def decide(self, game, rng):
        type(self).calls += 1
        if type(self).calls == type(self).at:
            os.kill(os.getpid(), signal.SIGINT)
        return super().decide(game, rng)


def _interrupter(arg):
    return _Interrupter()


SMOKE = {
    "name": "smoke",
    "rules": "classic",
    "seed": 3,
    "total_steps": 3072,
    "opponents": {"random": 1, "self": 1, "interrupter": 1},
    "env": {"n_envs": 4, "backend": "dummy"},
    "ppo": {"n_steps": 128, "batch_size": 256, "n_epochs": 2, "net_arch": [32, 32], "learning_rate": 1e-3},
    "selfplay": {"snapshot_every": 512, "league_size": 2},
    "eval": {
        "every": 1024,
        "games": 20,
        "opponents": ["random", "hold:300"],
        "best_by": "random",
        "final_games": 40,
        "regret_games": 0,
    },  # regret needs classic solved: tested on a small game
    "checkpoint": {"every": 1024, "keep": 2},
}


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """Train, get interrupted, resume to the end: (run dir, the interrupted result, the final
    result, log lines). The interrupter stays registered for the module: the run's config
    names it."""
    mp = pytest.MonkeyPatch()
    mp.setitem(AGENTS, "interrupter", f"{__name__}:_interrupter")
    runs = tmp_path_factory.mktemp("runs")
    _Interrupter.calls, _Interrupter.at = 0, 300
    logs: list[str] = []
    try:
        cfg = parse_config({**SMOKE, "runs_dir": str(runs)})
        first = train(cfg, progress=False, log=logs.append)
        _Interrupter.at = 10**9
        second = resume(runs / "smoke", progress=False, log=logs.append)
        yield runs / "smoke", first, second, logs
    finally:
        mp.undo()


def test_interrupt_saves_and_resume_finishes(smoke_run):
    run, first, second, logs = smoke_run
    assert first.interrupted and not first.finished
    assert 0 < first.step < 3072
    assert any("SIGINT" in line for line in logs)
    assert second.finished and not second.interrupted
    assert second.step >= 3072
    state = json.loads((run / "state.json").read_text())
    assert state["finished"] and state["step"] == second.step
    assert read_meta(run / "last.zip")["num_timesteps"] == second.step


def test_run_directory_is_complete(smoke_run):
    run, first, second, _ = smoke_run
    for f in ("config.yaml", "run.yaml", "state.json", "eval.csv", "best.zip", "last.zip"):
        assert (run / f).is_file(), f
    snap = yaml.safe_load((run / "run.yaml").read_text())
    assert snap["ruleset_hash"] == PRESETS["classic"].hash and snap["obs_version"] == OBS_VERSION
    assert snap["versions"]["stable-baselines3"] and snap["versions"]["torch"]
    # the config snapshot replays as a config, ruleset written out field by field
    cfg = load_config(run / "config.yaml")
    assert cfg.ruleset.hash == PRESETS["classic"].hash and cfg.ppo.net_arch == [32, 32]
    assert len(list((run / "checkpoints").glob("step_*.zip"))) <= 2
    league = list((run / "league").glob("step_*.zip"))
    assert 1 <= len(league) <= 2
    rows = (run / "eval.csv").read_text().splitlines()
    assert rows[0].startswith("step,kind,opponent,games,wins")
    steps = sorted({int(r.split(",")[0]) for r in rows[1:]})
    assert steps[0] == 0 and steps[-1] == second.step and len(steps) >= 3
    assert sum(",final," in r for r in rows) == 2
    meta = read_meta(run / "best.zip")
    assert meta["ruleset_hash"] == PRESETS["classic"].hash and meta["n_players"] == 2
    assert meta["obs_version"] == OBS_VERSION


def test_tensorboard_has_win_rates_losses_and_layout(smoke_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = smoke_run[0]
    ea = EventAccumulator(str(run / "tb"), size_guidance={"scalars": 0, "tensors": 0})
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for t in (
        "eval/win_rate/random",
        "eval/ci_low/random",
        "eval/ci_high/hold:300",
        "game/points_per_turn",
        "game/bust_rate",
        "game/turns_per_game",
        "train/value_loss",
        "train/policy_gradient_loss",
        "rollout/win_rate/self",
    ):
        assert t in tags, t
    steps = [e.step for e in ea.Scalars("eval/win_rate/random")]
    assert steps == sorted(set(steps)) and steps[0] == 0
    assert len(list((run / "tb").glob("events.out.tfevents.*"))) == 2  # one per session
    plugins = set(ea.PluginTagToContent("custom_scalars")) | set(ea.PluginTagToContent("hparams"))
    assert "custom_scalars__config__" in plugins and "_hparams_/experiment" in plugins


def test_checkpoint_plays_as_ppo_agent(smoke_run):
    from tenk_env.evaluation.match import play_match
    from tenk_env.evaluation.play import play_game

    run = smoke_run[0]
    agent = make_agent(f"ppo:{run / 'best.zip'}")
    assert isinstance(agent, PPOAgent)
    game = play_game("classic", [agent, "random"], dice=5)
    assert game.winners
    r = play_match("classic", f"ppo:{run / 'last.zip'}", "random", 20, seed=1)
    assert r.games == 20


def test_numpy_forward_matches_sb3_predict(smoke_run):
    from sb3_contrib import MaskablePPO

    from tenk_env.env import TenThousandEnv

    path = smoke_run[0] / "last.zip"
    model = MaskablePPO.load(path, device="cpu")
    agent = PPOAgent.load(path)
    env = TenThousandEnv(opponents=["random"])
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    O, M = [], []
    for _ in range(300):
        O.append(obs)
        M.append(env.action_masks())
        obs, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term:
            obs, info = env.reset()
    O, M = np.array(O), np.array(M)
    want, _ = model.predict(O, action_masks=M, deterministic=True)
    assert (agent.act(O, M) == want).all()


def test_mismatched_checkpoint_is_refused(smoke_run):
    from tenk_env.evaluation.match import play_match

    path = smoke_run[0] / "best.zip"
    agent = PPOAgent.load(path)
    with pytest.raises(CheckpointError) as e:
        agent.check(PRESETS["zilch"], 2)
    msg = str(e.value)
    assert PRESETS["classic"].hash in msg and PRESETS["zilch"].hash in msg
    assert "'classic'" in msg and "'zilch'" in msg and "tenk train" in msg
    with pytest.raises(CheckpointError, match="player count"):
        agent.check(PRESETS["classic"], 3)
    with pytest.raises(CheckpointError):
        play_match("zilch", f"ppo:{path}", "random", 2, seed=0)
    # the same rules under another name are the same game
    agent.check(PRESETS["classic"].replace(name="my_table"), 2)
    assert main(["evaluate", str(path), "--rules", "zilch", "--games", "2"]) == 2


def test_evaluate_and_plot_commands(smoke_run, tmp_path, capsys):
    run = smoke_run[0]
    out = tmp_path / "ev.csv"
    assert (
        main(
            [
                "evaluate",
                str(run),
                "--games",
                "10",
                "--opponents",
                "random",
                "--workers",
                "1",
                "--regret-games",
                "0",
                "--csv",
                str(out),
            ]
        )
        == 0
    )
    assert "win rate" in capsys.readouterr().out
    assert out.read_text().splitlines()[1].split(",")[2] == "random"
    assert main(["plot", str(run), "--out", str(tmp_path / "plots")]) == 0
    for name in ("win_rates.png", "game.png", "training.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 10_000


def test_existing_run_is_not_overwritten(smoke_run, capsys):
    run = smoke_run[0]
    cfg = parse_config({**SMOKE, "opponents": ["random"], "runs_dir": str(run.parent)})
    with pytest.raises(ValueError, match="--resume"):
        train(cfg, progress=False)
    # a finished run asks for more steps before it resumes
    assert main(["train", "--resume", str(run)]) == 2
    assert "total_steps" in capsys.readouterr().out


@pytest.mark.parametrize("n_players", [2, 3])
def test_shaping_telescopes(n_players):
    """Over a game the shaping bonuses add up to -Phi(first observation), whatever is played,
    so the game's total reward is its result minus a constant: the best policy is unchanged."""
    from tenk_env.env import TenThousandEnv
    from tenk_env.training.envs import FastDummyVecEnv, League, PoolEnv, ShapedVecEnv

    def make():
        return PoolEnv(TenThousandEnv(n_players=n_players, opponents=["random"]), [("hold:300", 1.0)], League(), seed=1)

    venv = ShapedVecEnv(FastDummyVecEnv([make, make]), 1.5, n_players)
    venv.seed(4)
    obs = venv.reset()
    phi = lambda o: 1.5 * venv._potential(o[None, :])[0]  # noqa: E731
    phi0 = [phi(o) for o in obs]
    total = [0.0, 0.0]
    rng = np.random.default_rng(0)
    checked = 0
    saw_bonus = False
    while checked < 6:
        masks = np.stack(venv.env_method("action_masks"))
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, done, infos = venv.step(acts)
        saw_bonus |= bool(np.any((rew != 0) & ~done))
        for i in range(2):
            total[i] += float(rew[i])
            if done[i]:
                result = 1.0 if infos[i]["won"] else -1.0
                assert total[i] == pytest.approx(result - phi0[i], abs=1e-4)
                total[i] = 0.0
                phi0[i] = phi(obs[i])
                checked += 1
    assert saw_bonus


def test_keep_features_read_the_scoring_table():
    from tenk_env.game import Game
    from tenk_env.obs import encode
    from tenk_env.policies.ppo import keep_features, roll_rows

    key_to_row, table = keep_features(PRESETS["classic"])
    g = Game("classic", 2)
    g.roll([1, 1, 1, 1, 1, 2])
    row = roll_rows(encode(g, 0)[None, :], 6, key_to_row)[0]
    F = table[row]
    five_ones = 0b011111
    assert F[five_ones | 64][1] == pytest.approx(4.0)  # banks 4,000 (doubling)
    assert F[five_ones][0] == pytest.approx(4.0) and F[five_ones][3] == 1.0  # rolls the last die
    assert F[five_ones][1] == 0 and F[five_ones | 64][0] == 0  # bank and roll features apart
    assert not F[0b100000].any()  # the 2 alone scores nothing
    g = Game("classic", 2)
    g.roll([1, 2, 3, 4, 5, 6])
    F = table[roll_rows(encode(g, 0)[None, :], 6, key_to_row)[0]]
    assert F[0b111111][8] == 1.0  # straight: hot dice, six to roll
    assert not table[0].any()  # no roll on the table


@pytest.mark.parametrize("policy", ["mlp", "keep_aware"])
def test_untrained_policy_numpy_twin(policy, tmp_path):
    """The agent's NumPy forward pass gives SB3's logits for both heads."""
    import torch
    from sb3_contrib import MaskablePPO

    from tenk_env.policies.ppo import write_checkpoint
    from tenk_env.training.trainer import Trainer

    cfg = parse_config(
        {
            "env": {"n_envs": 2, "backend": "dummy"},
            "ppo": {"policy": policy, "n_steps": 8, "batch_size": 16, "net_arch": [16]},
        }
    )
    from tenk_env.training.envs import make_vec_env

    venv, _ = make_vec_env(cfg, 0)
    t = Trainer(cfg, tmp_path, resuming=False, progress=False)
    t.model = MaskablePPO(t._policy_class(), venv, policy_kwargs=t._policy_kwargs(), device="cpu", seed=1)
    path = write_checkpoint(t.model, tmp_path / "m.zip", t.meta())
    agent = PPOAgent.load(path)
    assert agent.meta["policy"] == policy
    obs = [venv.reset()]
    for _ in range(20):
        masks = np.stack(venv.env_method("action_masks"))
        obs.append(venv.step(np.array([np.flatnonzero(m)[0] for m in masks]))[0])
    O = torch.as_tensor(np.concatenate(obs))
    with torch.no_grad():
        want = t.model.policy.action_net(t.model.policy.mlp_extractor.forward_actor(O)).numpy()
    assert np.allclose(agent.logits(O.numpy()), want, atol=1e-5)


def test_score_features_flag_a_losing_last_bank():
    from tenk_env.game import Game, Phase
    from tenk_env.obs import encode
    from tenk_env.policies.ppo import keep_features, roll_rows, score_features

    g = Game("classic", 2)
    g.scores, g.on_board = [10_200, 8_000], [True, True]
    g.current, g.turn_total, g.dice_left = 1, 2_100, 3
    g.final_round, g.trigger, g.final_turns_left = True, 0, 1
    g.roll([1, 5, 3])
    assert g.phase == Phase.DECIDE
    key_to_row, table = keep_features(PRESETS["classic"])
    obs = encode(g, 1)[None, :]
    F = table[roll_rows(obs, 6, key_to_row)]
    S = score_features(obs, F, 10_000.0)[0]
    one, one_five = 0b001, 0b101  # the roll shows 1 3 5
    assert list(S[one | 64]) == [0, 0, 1]  # 10,200 banked: a tie goes to the trigger, a loss
    assert list(S[one_five | 64]) == [1, 0, 0]  # 10,250 banked: ahead, wins
    assert not S[one].any() and not S[one_five].any()  # rolling on: no score feature
    g.final_round, g.trigger = False, -1  # before the final round: reaching 10,000 starts it
    S = score_features(encode(g, 1)[None, :], F, 10_000.0)[0]
    assert list(S[one | 64]) == [0, 1, 0]


def test_vector_backend_trains_with_selfplay_league(tmp_path):
    """The default backend (the batched engine's VecEnv): the pool, the 'self' league and the
    per-opponent training statistics all work there too."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from tenk_env.training.envs import vector_backend_available

    if not vector_backend_available()[0]:
        pytest.skip(vector_backend_available()[1])
    cfg = parse_config(
        {
            "name": "vec",
            "runs_dir": str(tmp_path),
            "total_steps": 4096,
            "seed": 1,
            "opponents": {"self": 1, "hold:300": 1},
            "env": {"n_envs": 64, "backend": "vector", "shaping": 1.0},
            "ppo": {"n_steps": 16, "batch_size": 256, "n_epochs": 1, "net_arch": [16]},
            "selfplay": {"snapshot_every": 1024, "league_size": 2},
            "eval": {"every": 2048, "games": 10, "opponents": ["random"], "backend": "batched", "regret_games": 0},
            "checkpoint": {"every": 2048},
        }
    )
    res = train(cfg, progress=False, log=lambda m: None)
    assert res.finished and res.backend == "vector"
    assert len(list((tmp_path / "vec" / "league").glob("step_*.zip"))) == 2
    ea = EventAccumulator(str(tmp_path / "vec" / "tb"), size_guidance={"scalars": 0})
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    assert {"rollout/win_rate/self", "rollout/win_rate/hold:300", "eval/win_rate/random"} <= tags
    # the batched engine keeps per-game rows: every game statistic is logged
    assert {"game/points_per_turn/random", "game/bust_rate/random", "game/turns_per_game"} <= tags


SOLVED = {"base": "classic", "target": 1000, "end": "immediate"}  # solves in about a second


def test_evaluations_log_the_exact_regret_where_the_game_is_solved(tmp_path, capsys):
    import csv

    from tenk_env.cli.cmd_plot import plot_run, read_scalars
    from tenk_env.evaluation.analysis import analyse

    cfg = parse_config(
        {
            "name": "reg",
            "runs_dir": str(tmp_path),
            "rules": SOLVED,
            "seed": 1,
            "total_steps": 512,
            "opponents": ["random"],
            "env": {"n_envs": 4, "backend": "dummy"},
            "ppo": {"policy": "mlp", "n_steps": 64, "batch_size": 256, "n_epochs": 1, "net_arch": [16]},
            "eval": {"every": 256, "games": 4, "opponents": ["random"], "regret_games": 6},
            "checkpoint": {"every": 256},
        }
    )
    assert cfg.regret_on
    assert parse_config({"rules": "zilch"}).regret_on  # the game solver covers its bust penalty
    assert not parse_config({"rules": {"name": "piggy", "piggyback": True}}).regret_on  # no game solution
    assert not parse_config({"eval": {"regret_games": 0}}).regret_on
    res = train(cfg, progress=False, log=lambda m: None)
    assert res.finished
    run = tmp_path / "reg"
    with open(run / "regret.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["step"], r["kind"], r["games"]) for r in rows] == [
        ("0", "eval", "6"),
        ("256", "eval", "6"),
        ("512", "final", "6"),
    ]
    # the last row is the analysis of the weights the run ended with (same deals, same figures)
    again = analyse(f"ppo:{run / 'last.zip'}", cfg.ruleset, games=6, seed=cfg.eval.seed, top=0).report
    assert float(rows[-1]["regret"]) == pytest.approx(again.regret_per_game, rel=1e-5, abs=1e-9)
    lo, hi = float(rows[-1]["regret_ci_low"]), float(rows[-1]["regret_ci_high"])
    assert (np.isnan(lo) and np.isnan(hi)) or lo <= float(rows[-1]["regret"]) <= hi  # nan: too few deals for one
    steps, values = read_scalars(run / "tb")["eval/regret"]
    assert steps.tolist() == [0, 256, 512]
    assert values[-1] == pytest.approx(again.regret_per_game, rel=1e-5, abs=1e-9)
    assert "regret.png" in [q.name for q in plot_run(run, tmp_path / "plots")]
    # tenk evaluate prints the same figure for the same games
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                str(run / "last.zip"),
                "--games",
                "4",
                "--opponents",
                "random",
                "--workers",
                "1",
                "--regret-games",
                "6",
                "--seed",
                str(cfg.eval.seed),
            ]
        )
        == 0
    )
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"regret against perfect play (6 games vs optimal, seed {cfg.eval.seed}): "
        f"{100 * again.regret_per_game:.2f} pp/game" in out
    )
    # a resume forgets the rows a killed session wrote past its checkpoint, as for eval.csv
    with open(run / "regret.csv", "a") as f:
        f.write("9999,eval,6,0.5,0.4,0.6,0.1,0.0,0.2,0.1,1\n")
    (run / "state.json").write_text(json.dumps({**json.loads((run / "state.json").read_text()), "finished": False}))
    resume(run, ["total_steps=768"], progress=False, log=lambda m: None)
    with open(run / "regret.csv", newline="") as f:
        assert [r["step"] for r in csv.DictReader(f)] == ["0", "256", "512", "768"]


def test_help_config_names_both_trainers(capsys):
    assert main(["train", "--help-config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# PPO (a config without algo: afterstate)"
    head = lines.index("# afterstate (a config with algo: afterstate)")
    assert lines[head - 1] == "" and lines[head + 1].startswith("name ")
    assert next(x for x in lines[head:] if x.startswith("algo ")).split(None, 2)[2] == (
        "the learner family: afterstate selects this trainer and these keys; a config without algo trains PPO"
    )
    assert not any("this file" in x for x in lines)


def test_eta_leaves_out_the_one_off_cost_of_the_first_evaluation(tmp_path):
    """The first evaluation compiles kernels and may solve the game (minutes, once): the time
    left counts training time only, plus the later evaluations' mean cost per evaluation due."""
    from tenk_env.training.trainer import Eta, Trainer

    eta = Eta(total=1_000_000)
    eta.begin_eval(0.0)
    eta.end_eval(150.0)  # step 0: kernels compiled, classic solved
    assert eta.seconds_left(0, 150.0, 10) is None and eta.rate(0, 150.0) is None
    eta.start(2_048, 180.0)  # the first rollout (compiling too) is done
    eta.begin_eval(200.0)
    eta.end_eval(210.0)  # a later evaluation: 10 s
    assert eta.rate(102_048, 290.0) == pytest.approx(1000.0)  # 100,000 steps in 100 s of training
    assert eta.seconds_left(102_048, 290.0, 9) == pytest.approx(897.952 + 9 * 10.0)
    eta.begin_eval(300.0)  # an evaluation under way does not slow the rate
    assert eta.rate(112_048, 305.0) == pytest.approx(1000.0)
    eta.end_eval(306.0)
    assert eta.seconds_left(112_048, 306.0, 1) == pytest.approx(887.952 + (10.0 + 6.0) / 2)
    eta.start(500_000, 400.0)  # only the first start counts
    assert eta.rate(112_048, 306.0) == pytest.approx(1000.0)
    # the evaluations still due: one per eval.every boundary crossed before the end, and the final
    cfg = parse_config({"total_steps": 1_024, "eval": {"every": 512, "opponents": ["random"], "regret_games": 0}})
    t = Trainer(cfg, tmp_path / "run", resuming=False)
    assert [t._evals_left(s) for s in (0, 256, 512, 1_000)] == [2, 2, 1, 1]


SOLVING = (
    "solving 'classic+target=1000,end=immediate' once for the exact regret (seconds at a small target, "
    "about a minute on classic; cached after)"
)


def test_the_progress_bar_names_the_one_off_work(tmp_path, monkeypatch, capsys):
    """Compiling kernels, solving the game and evaluating show as phases on the bar (and the
    solve, which takes minutes on classic, as a line too), not as a bar stuck at 0%."""
    import tenk_env.policies.optimal

    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))  # the game is not solved yet
    monkeypatch.setattr(tenk_env.policies.optimal, "_GAME", {})
    cfg = parse_config(
        {
            "name": "ph",
            "runs_dir": str(tmp_path),
            "rules": SOLVED,
            "seed": 1,
            "total_steps": 512,
            "opponents": ["random"],
            "env": {"n_envs": 4, "backend": "dummy"},
            "ppo": {"policy": "mlp", "n_steps": 64, "batch_size": 256, "n_epochs": 1, "net_arch": [16]},
            "eval": {"every": 256, "games": 4, "opponents": ["random"], "regret_games": 2},
            "checkpoint": {"every": 256},
        }
    )
    logs: list[str] = []
    capsys.readouterr()
    assert train(cfg, progress=True, log=logs.append).finished
    assert logs[0] == f"{SOLVING}..."
    assert re.fullmatch(
        r"solved 'classic\+target=1000,end=immediate' in [\d.,]+ s; cached in .+, so later runs "
        r"skip this",
        logs[1],
    ), logs[1]
    assert sum("solving" in m for m in logs) == 1
    bar = capsys.readouterr().err.replace("\r", "\n").splitlines()
    phases = [m.group(1) for x in bar if (m := re.match(r"ph: (.+?): +\d+%\|", x))]
    # the solve counts up on the bar as it goes, in steps of 5%
    done = [int(m.group(1)) for x in phases if (m := re.fullmatch(re.escape(SOLVING) + r", (\d+)% done", x))]
    assert done and done == sorted(set(done)) and all(d % 5 == 0 for d in done), done
    phases = [SOLVING if x.startswith(SOLVING) else x for x in phases]
    firsts = [p for i, p in enumerate(phases) if p not in phases[:i]]
    assert firsts[:5] == [
        SOLVING,
        "compiling kernels, evaluating vs random",
        "regret evaluation (2 games against optimal)",
        "first rollout (compiling kernels on first use)",
        "evaluating vs random",
    ]
    assert any("ETA ?" in x for x in bar) and any(
        re.search(r"ETA \d\d:\d\d +[\d.]+k? steps/s training", x) for x in bar
    )


def test_the_solve_says_what_it_does_and_how_long_it_took(tmp_path, monkeypatch):
    """Without a bar (--no-progress, a log file) the solve of an uncached game is a line before
    and a line after, naming the time it took; a solution in the cache or in memory says nothing."""
    import tenk_env.policies.optimal
    from tenk_env.training.trainer import Trainer

    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tenk_env.policies.optimal, "_GAME", {})
    cfg = parse_config({"rules": SOLVED, "eval": {"opponents": ["random"], "regret_games": 2}})
    logs: list[str] = []
    t = Trainer(cfg, tmp_path / "run", resuming=False, progress=False, log=logs.append)
    t._game_solution("the exact regret")
    assert logs[0] == f"{SOLVING}..."
    assert re.fullmatch(
        rf"solved 'classic\+target=1000,end=immediate' in [\d.,]+ s; cached in "
        rf"{re.escape(str(tmp_path / 'cache'))}, so later runs skip this",
        logs[1],
    ), logs
    assert len(logs) == 2
    t._game_solution("the exact regret")  # held in memory now
    monkeypatch.setattr(tenk_env.policies.optimal, "_GAME", {})
    t._game_solution("the exact regret")  # read from the cache
    assert len(logs) == 2, logs


def test_a_sessions_tensorboard_file_is_read_after_the_one_before(tmp_path):
    """TensorBoard and `tenk plot` read a folder's event files in name order, and a resumed
    session hides the earlier points past its step only in the files read before its own. A
    session started in the same second as the one before it, from a process whose file name
    sorts first (process id and writer counter compare as text: 10 before 9), is still read last."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from tenk_env.cli.cmd_plot import read_scalars
    from tenk_env.training.rundir import tb_writer

    tb = tmp_path / "tb"
    w = tb_writer(tb)
    for step in (0, 10):
        w.add_scalar("x", float(step), step)
    w.close()
    (first,) = tb.glob("events.out.tfevents.*")
    second = first.name.split(".")[3]
    first.rename(tb / f"events.out.tfevents.{second}.~host.99999.9")  # sorts after this process's name
    w = tb_writer(tb, purge_step=5)  # resumed from step 5: the earlier point at 10 is hidden
    w.add_scalar("x", 5.0, 5)
    w.close()
    ea = EventAccumulator(str(tb))
    ea.Reload()
    assert [(e.step, e.value) for e in ea.Scalars("x")] == [(0, 0.0), (5, 5.0)]
    assert read_scalars(tb)["x"][0].tolist() == [0, 5]
