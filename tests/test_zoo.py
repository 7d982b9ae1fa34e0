"""The zoo: shipped agents load by name, play, stay small and refuse other games."""

from __future__ import annotations

import numpy as np
import pytest

from agents import zoo
from agents.match import play_match, play_table
from agents.ppo import CheckpointError, PPOAgent, checkpoint_meta, write_checkpoint
from scripts.cli import main
from tenk_env.registry import AgentError, make_policy
from tenk_env.rules import PRESETS, load_ruleset
from tenk_env.vector import BatchedGame
from tenk_env.vector.obs import encode_batch


def observations(rules, n_players: int, seed: int = 3) -> np.ndarray:
    e = BatchedGame(rules, n_players, 256, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(15):
        e.step(e.random_actions(rng))
    return encode_batch(e, e.current)


@pytest.mark.parametrize("entry", zoo.entries(), ids=lambda e: e.name)
def test_every_zoo_agent_loads_plays_and_is_small(entry):
    size = sum(f.stat().st_size for f in entry.path.iterdir())
    assert size < 500_000, f"{entry.name}: {size:,} bytes"
    agent = make_policy(f"zoo:{entry.name}")
    rules = load_ruleset(entry.meta["ruleset"])
    n = entry.meta["n_players"]
    assert rules.hash == entry.meta["ruleset_hash"]
    agent.check(rules, n)
    if n == 2:
        r = play_match(rules, agent, "hold:300", 40, seed=1)
        assert r.games == 40 and r.win_rate_a > 0.5  # a trained agent, not noise
    else:
        t = play_table(rules, [agent] + ["hold:300"] * (n - 1), 2 * n, seed=1)
        assert t.games == 2 * n and t.mean_score[0] > 5000  # it banks and scores like a player, not noise
    for key in ("command", "strength", "checkpoint"):
        assert entry.card.get(key), f"{entry.name}: agent.yaml lacks {key!r}"


def test_a_zoo_agent_refuses_another_game():
    agent = make_policy("zoo:classic_ppo_demo")
    with pytest.raises(CheckpointError, match="trained on ruleset 'classic'.*this game is ruleset 'zilch'"):
        agent.check(PRESETS["zilch"], 2)
    with pytest.raises(CheckpointError, match="2 players.*3 players.*different player count"):
        agent.check(PRESETS["classic"], 3)


def test_export_keeps_the_actor_only_and_plays_exactly_as_the_checkpoint(tmp_path):
    from sb3_contrib import MaskablePPO

    from tenk_env.vector.sb3 import sb3_vec_env

    rules = load_ruleset("classic")
    venv = sb3_vec_env(2, rules, 2, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=4, device="cpu")
    ckpt = write_checkpoint(model, tmp_path / "c.zip", checkpoint_meta(rules, 2, activation="tanh", n_actions=128))
    out = zoo.export(ckpt, "tiny", command="test", root=tmp_path / "zoo")
    with np.load(out / "weights.npz") as z:  # the actor only: no value net, no optimizer state
        assert z.files and all(k.startswith(("mlp_extractor.policy_net.", "action_net.")) for k in z.files)
    obs = observations(rules, 2)
    got = zoo.load("tiny", root=tmp_path / "zoo").logits(obs)
    assert np.array_equal(got, PPOAgent.load(ckpt).logits(obs))
    with pytest.raises(AgentError, match="exists"):
        zoo.export(ckpt, "tiny", command="test", root=tmp_path / "zoo")
    with pytest.raises(AgentError, match="zoo name 'no/pe'"):
        zoo.export(ckpt, "no/pe", command="test", root=tmp_path / "zoo")


def test_bad_zoo_names_are_named():
    with pytest.raises(AgentError, match="no zoo agent 'classic_ppo_dem'.*did you mean 'classic_ppo_demo'"):
        make_policy("zoo:classic_ppo_dem")
    with pytest.raises(AgentError, match="agent 'zoo' needs a name"):
        make_policy("zoo")


def test_tenk_zoo_lists_the_agents(capsys):
    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    assert "classic_ppo_demo" in out and "configs/ppo_demo.yaml" in out and "46.49%" in out


def test_export_of_an_afterstate_checkpoint_plays_exactly_as_it(tmp_path):
    from agents.afterstate import AfterstateAgent, ValueNet, checkpoint_meta, n_features, save_checkpoint
    from tenk_env.game import Game

    rules = load_ruleset("classic")
    rng = np.random.default_rng(0)
    F = n_features(2)
    w = {"w0": rng.normal(size=(F, 8)), "b0": rng.normal(size=8), "w1": rng.normal(size=(8, 2)),
         "b1": rng.normal(size=2)}
    ckpt = save_checkpoint(tmp_path / "best.npz", w, checkpoint_meta(rules, 2, hidden=[8], opponents_learn=True))
    out = zoo.export(ckpt, "as_tiny", command="test", root=tmp_path / "zoo")
    assert (out / "weights.npz").stat().st_size < 5_000
    entry = zoo.entries(tmp_path / "zoo")[0]
    assert entry.afterstate and "afterstate value net [8]" in entry.summary()
    got = zoo.load("as_tiny", root=tmp_path / "zoo")
    g = Game(rules, 2, record=False)
    g.scores, g.on_board = [3000, 4500], [True, True]
    assert np.array_equal(got.plan(g).V, AfterstateAgent.load(ckpt).plan(g).V)
    with pytest.raises(AgentError, match="trained for ruleset 'classic'"):
        got.check(PRESETS["zilch"], 2)


def test_zoo_agents_are_keyed_by_their_weights():
    """Tournaments key a zoo agent's games by its weights' bytes: a replaced entry is noticed."""
    from agents.base import agent_file, agent_sha256
    from tenk_env.io import file_sha256

    assert agent_file("zoo:classic_ppo_demo") == zoo.ZOO_DIR / "classic_ppo_demo" / "weights.npz"
    assert agent_sha256("zoo:classic_ppo_demo") == file_sha256(zoo.ZOO_DIR / "classic_ppo_demo" / "weights.npz")
    assert agent_file("dicenow") is None
