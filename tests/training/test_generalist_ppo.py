"""A PPO policy that plays any ruleset: games drawn per game from the suite's train split
(:class:`RulesPoolEnv`), the rules observation after the env's own, checkpoints that read it
on every engine, and runs and checkpoints that refuse inputs they were not trained with."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tenk_env import variants
from tenk_env.evaluation.match import play_match
from tenk_env.obs import decode_action, obs_size
from tenk_env.policies import zoo
from tenk_env.policies.base import make_agent
from tenk_env.policies.onnx_export import export_actor
from tenk_env.policies.ppo import CheckpointError, PPOAgent, read_meta
from tenk_env.rules import PRESETS
from tenk_env.rules_obs import RULES_OBS_SIZE, RULES_OBS_VERSION, rules_obs
from tenk_env.training.config import ConfigError, parse_config
from tenk_env.training.envs import League, PoolEnv, RulesPoolEnv
from tenk_env.training.rundir import RunError
from tenk_env.training.trainer import resume, train

TRAIN3 = variants.split("train", 3)

GEN = {
    "name": "gen",
    "rules": {"suite": "train", "count": 3},
    "rules_obs": True,
    "seed": 1,
    "total_steps": 1024,
    "opponents": {"hold:300": 1, "self": 1},
    "env": {"n_envs": 4, "backend": "dummy"},
    "ppo": {"policy": "mlp", "n_steps": 128, "batch_size": 256, "n_epochs": 1, "net_arch": [16]},
    "selfplay": {"snapshot_every": 512, "league_size": 2},
    "eval": {"every": 512, "games": 4, "rulesets": 2, "opponents": ["hold:300"], "final_games": 4},
    "checkpoint": {"every": 512},
}


@pytest.fixture(scope="module")
def gen_run(tmp_path_factory):
    runs = tmp_path_factory.mktemp("runs")
    train(parse_config({**GEN, "runs_dir": str(runs)}), progress=False, log=lambda s: None)
    return runs / "gen"


@pytest.mark.parametrize(
    "over, words",
    [
        ({"rules_obs": False}, "set rules_obs: true"),
        ({"ppo": {**GEN["ppo"], "policy": "keep_aware"}}, "set ppo.policy: mlp"),
        ({"env": {"n_envs": 4, "backend": "vector"}}, "set env.backend: dummy"),
        ({"rules": {"suite": "test"}}, "use suite: train"),
        ({"rules": {"suite": "train", "count": 0}}, "rules.count = 0"),
    ],
)
def test_configs_a_generalist_cannot_train_with_are_refused(over, words):
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        parse_config({**GEN, **over})


def test_each_game_draws_its_ruleset_and_ends_its_observations_with_it():
    env = RulesPoolEnv(TRAIN3, 2, seed=5)
    pool = PoolEnv(env, [("hold:300", 1.0)], League(), seed=5)
    by_name = {r.name: r for r in TRAIN3}
    seen = set()
    rng = np.random.default_rng(0)
    for _ in range(12):
        obs, info = pool.reset()
        seen.add(info["rules"])
        done = False
        while not done:
            assert obs.shape == (obs_size(2) + RULES_OBS_SIZE,)
            assert np.array_equal(obs[obs_size(2) :], rules_obs(env.rules)) and env.rules.name in seen
            legal = np.flatnonzero(pool.action_masks())
            obs, _, done, _, info = pool.step(int(rng.choice(legal)))
    assert len(seen) >= 2 and seen <= set(by_name)
    check_env(RulesPoolEnv(TRAIN3, 2, seed=1), skip_render_check=True)  # a seeded reset replays the game
    with pytest.raises(ValueError, match="differ in their action count"):
        RulesPoolEnv([PRESETS["classic"], PRESETS["classic"].replace(piggyback=True)])


def test_a_run_on_the_suite_writes_a_checkpoint_for_any_ruleset(gen_run):
    meta = read_meta(gen_run / "last.zip")
    assert meta["rules_obs"] == RULES_OBS_VERSION and "ruleset" not in meta and "ruleset_hash" not in meta
    assert meta["trained_on"] == "the first 3 rulesets of the suite's train split (variant space v1)"
    rows = (gen_run / "eval.csv").read_text().splitlines()[1:]
    # each evaluation plays 4 games on each of 2 training rulesets, as one row
    assert rows and all(r.split(",")[3] == "8" for r in rows)
    agent = PPOAgent.load(gen_run / "last.zip")
    assert agent._actor.layers[0][0].shape[0] == obs_size(2) + RULES_OBS_SIZE
    for rules in (variants.split("test")[0], PRESETS["farkle_official"]):
        agent.check(rules, 2)
    with pytest.raises(CheckpointError, match="plays any ruleset, but 2 players; this game has 3"):
        agent.check(TRAIN3[0], 3)
    with pytest.raises(CheckpointError, match="has 128 actions; ruleset 'classic' has 130"):
        agent.check(PRESETS["classic"].replace(piggyback=True), 2)


def test_the_agent_sees_what_the_env_showed_it(gen_run):
    agent = PPOAgent.load(gen_run / "last.zip")
    env = RulesPoolEnv(TRAIN3, 2, seed=9)
    env.opponents = [agent]
    decisions = 0
    for _ in range(6):
        obs, info = env.reset()
        done = False
        while not done:
            mask = env.action_masks()
            a = int(agent.act(obs[None], mask[None])[0])
            game = env.env.game
            assert agent.decide(game, None) == decode_action(game, a)
            obs, _, done, _, info = env.step(a)
            decisions += 1
    assert decisions > 20
    # the batched engine gives it the same observations: the same games either way
    held = variants.split("test")[1]
    spec = f"ppo:{gen_run / 'last.zip'}"
    scalar = play_match(held, spec, "dicenow", 20, seed=3, backend="scalar")
    batched = play_match(held, spec, "dicenow", 20, seed=3, backend="batched")
    assert (scalar.wins_a, scalar.mean_margin) == (batched.wins_a, batched.mean_margin)


@pytest.mark.parametrize("flip", ["rules_obs=false", "rules=classic"])
def test_a_resumed_run_keeps_its_inputs(gen_run, flip):
    with pytest.raises(RunError, match="a resumed run keeps its"):
        resume(gen_run, [flip, "total_steps=2048"], progress=False, log=lambda s: None)


def test_a_checkpoint_of_one_ruleset_refuses_a_run_that_reads_the_rules(tmp_path):
    plain = {
        **GEN,
        "rules": "classic",
        "rules_obs": False,
        "runs_dir": str(tmp_path),
        "total_steps": 512,
        "opponents": {"hold:300": 1},
        "eval": {**GEN["eval"], "every": 0, "final_games": 2, "games": 2, "regret_games": 0},
    }
    train(parse_config(plain), progress=False, log=lambda s: None)
    cfg = tmp_path / "gen" / "config.yaml"
    text = cfg.read_text().replace("rules_obs: false", "rules_obs: true")
    cfg.write_text(text)
    with pytest.raises(RunError, match="trained without the rules observation; the config sets rules_obs: true"):
        resume(tmp_path / "gen", ["total_steps=1024"], progress=False, log=lambda s: None)


def test_the_zoo_and_onnx_carry_a_policy_for_any_ruleset(gen_run, tmp_path):
    out = zoo.export(gen_run / "last.zip", "gen", command="tenk train", root=tmp_path)
    entry = zoo.entries(tmp_path)[0]
    assert entry.any_rules and entry.summary().startswith("any ruleset (trained on the first 3 rulesets")
    z = zoo.load("gen", root=tmp_path)
    assert z.any_rules and out.name == "gen"
    onnx_agent = make_agent(f"onnx:{export_actor(z._actor, z.meta, tmp_path / 'gen.onnx')}")
    env = RulesPoolEnv(TRAIN3 + [variants.split("test")[2]], 2, seed=4)
    env.opponents = [make_agent("dicenow")]
    obs_seen, moves = [], 0
    for _ in range(8):
        obs, _ = env.reset()
        done = False
        while not done:
            game = env.env.game
            assert onnx_agent.decide(game, None) == z.decide(game, None)
            obs_seen.append(obs)
            a = int(z.act(obs[None], env.action_masks()[None])[0])
            obs, _, done, _, _ = env.step(a)
            moves += 1
    obs = np.stack(obs_seen)
    np.testing.assert_allclose(onnx_agent.logits(obs), z.logits(obs), rtol=1e-5, atol=1e-5)
    assert moves > 20


def test_a_ppo_runs_checkpoints_make_its_learning_curve(gen_run, monkeypatch, capsys):
    from tenk_env.cli.main import main

    kept = sorted(int(p.stem[5:]) for p in (gen_run / "checkpoints").iterdir())
    assert len(kept) >= 2
    small = [PRESETS["classic"].replace(target=800, name="small-b")]  # solved in a second, unlike the test split
    monkeypatch.setattr(variants, "split", lambda name, count=None, seed=0: small)
    assert main(["suite", "curve", str(gen_run), "--games", "60", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    rows = (gen_run / "suite_curve_test.csv").read_text().splitlines()
    assert rows[0] == "steps,mean_regret_pp,ci_low_pp,ci_high_pp,win_rate_vs_optimal"
    assert [int(r.split(",")[0]) for r in rows[1:]] == kept
    assert out.count("learner steps on split 'test'") == len(kept)
