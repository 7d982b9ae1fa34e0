"""``onnx:PATH`` agents: the exported zoo actors give the NumPy forward pass's logits and play
its moves; models from elsewhere (no metadata, a mask input) play by the stated contract;
bad files and mismatched games get clear errors."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tenk_env.evaluation.play import play_game
from tenk_env.obs import encode, keep_action, legal_mask, n_actions, obs_size
from tenk_env.policies import zoo
from tenk_env.policies.base import AgentError, AgentSpec, make_agent
from tenk_env.policies.onnx_agent import META_KEY
from tenk_env.policies.onnx_export import export_actor
from tenk_env.rules import load_ruleset


class _Recorder:
    """Wraps an agent, keeping each decision's observation and mask."""

    def __init__(self, agent):
        self.agent, self.name = agent, agent.name
        self.obs, self.masks, self.moves = [], [], []

    def check(self, rules, n):
        self.agent.check(rules, n)

    def _keep(self, game):
        self.obs.append(encode(game, game.current).copy())
        self.masks.append(legal_mask(game).copy())

    def decide(self, game, rng):
        self._keep(game)
        m = self.agent.decide(game, rng)
        self.moves.append(m)
        return m

    def piggyback(self, game, rng):
        self._keep(game)
        m = self.agent.piggyback(game, rng)
        self.moves.append(m)
        return m


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx")
    return {name: export_actor(zoo.load(name)._actor, zoo.load(name).meta, d / f"{name}.onnx")
            for name in ("classic_ppo_best", "classic_ppo_demo")}


def _decisions(agent, games: int, seed: int):
    rec = _Recorder(agent)
    for g in range(games):
        play_game("classic", [rec, "dicenow"] if g % 2 == 0 else ["dicenow", rec], seed + g)
    return rec


@pytest.mark.parametrize("name", ["classic_ppo_best", "classic_ppo_demo"])
def test_exported_zoo_actor_gives_the_numpy_logits_and_moves(exported, name):
    z = zoo.load(name)
    rec = _decisions(z, 40, seed=7)
    assert len(rec.obs) >= 1000
    obs = np.stack(rec.obs[:1000])
    o = make_agent(f"onnx:{exported[name]}")
    # float32 both: the sums run in another order, so equal to 1e-5 of the logits' size
    np.testing.assert_allclose(o.logits(obs), z.logits(obs), rtol=1e-5, atol=1e-5)
    # the same moves on the same games, decision by decision
    again = _decisions(o, 40, seed=7)
    assert again.moves == rec.moves
    # and the batched form (one forward pass for many games) picks the same actions
    masks = np.stack(rec.masks[:1000])
    assert (o.act(obs, masks) == z.act(obs, masks)).all()


def test_exported_model_carries_the_checkpoint_metadata(exported):
    m = onnx.load(str(exported["classic_ppo_best"]))
    props = {p.key: p.value for p in m.metadata_props}
    assert json.loads(props[META_KEY])["ruleset_hash"] == load_ruleset("classic").hash
    o = make_agent(f"onnx:{exported['classic_ppo_best']}")
    with pytest.raises(AgentError, match="trained on .*this game is"):
        o.check(load_ruleset("farkle_official"), 2)
    with pytest.raises(AgentError, match="3 players"):
        o.check(load_ruleset("classic"), 3)


def _foreign(path, n_players: int, A: int, with_mask: bool, bias: np.ndarray, D: int | None = None):
    """A model with no tenk metadata: logits = obs @ 0 + bias (+ mask, if it takes one)."""
    D = D or obs_size(n_players)
    w = numpy_helper.from_array(np.zeros((D, A), np.float32), "w")
    b = numpy_helper.from_array(bias.astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["y0"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", D])]
    if with_mask:
        nodes.append(helper.make_node("Add", ["y0", "mask"], ["y"]))
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["n", A]))
    else:
        nodes.append(helper.make_node("Identity", ["y0"], ["y"]))
    g = helper.make_graph(nodes, "foreign", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", A])],
                          [w, b])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_a_model_from_elsewhere_plays_by_the_contract(tmp_path):
    rules = load_ruleset("classic")
    A = n_actions(rules)
    # prefers lower actions: among the legal ones it always plays the lowest-numbered
    bias = -np.arange(A, dtype=np.float32)
    p = _foreign(tmp_path / "f.onnx", 3, A, with_mask=False, bias=bias)
    agent = make_agent(f"onnx:{p}")
    agent.check(rules, 3)
    g = play_game(rules, [agent, "dicenow", "maxscore"], 3)
    assert g.winners
    with pytest.raises(AgentError, match="takes observations of 71 values.*76"):
        agent.check(rules, 4)
    # a mask input is fed: bias toward the highest action, plus the mask, still picks legal moves
    q = _foreign(tmp_path / "m.onnx", 2, A, with_mask=True, bias=np.arange(A, dtype=np.float32))
    m = make_agent(f"onnx:{q}")
    game = play_game(rules, [m, "dicenow"], 5)
    assert game.winners


def test_the_lowest_legal_action_is_played(tmp_path):
    rules = load_ruleset("classic")
    A = n_actions(rules)
    p = _foreign(tmp_path / "low.onnx", 2, A, with_mask=False, bias=-np.arange(A, dtype=np.float32))
    agent = make_agent(f"onnx:{p}")
    rec = _decisions(agent, 3, seed=1)
    for mask, move in zip(rec.masks, rec.moves):
        want = int(np.flatnonzero(mask)[0])
        got = keep_action(*move) if isinstance(move, tuple) else None
        if got is not None:
            assert got == want


def test_bad_files_get_clear_errors(tmp_path):
    with pytest.raises(AgentError, match="needs a model file"):
        make_agent("onnx")
    with pytest.raises(AgentError, match="no such file"):
        make_agent(f"onnx:{tmp_path / 'nope.onnx'}")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(AgentError, match="cannot be loaded"):
        make_agent(f"onnx:{bad}")
    odd = _foreign(tmp_path / "odd.onnx", 2, 130, with_mask=False, bias=np.zeros(130), D=50)
    with pytest.raises(AgentError, match="observation size 50 is none of tenk's"):
        make_agent(f"onnx:{odd}")


def test_onnx_specs_are_keyed_by_the_file(exported, tmp_path):
    a = AgentSpec.parse(f"onnx:{exported['classic_ppo_best']}")
    b = AgentSpec.parse(f"onnx:{exported['classic_ppo_demo']}")
    assert a.sha256 and b.sha256 and a.sha256 != b.sha256


def test_tenk_zoo_export_writes_a_playable_model(tmp_path):
    out = tmp_path / "best.onnx"
    r = subprocess.run([sys.executable, "-m", "tenk_env.cli.main", "zoo", "export", "classic_ppo_demo", "--onnx",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.is_file() and "onnx:" in r.stdout
    z = zoo.load("classic_ppo_demo")
    rec = _decisions(z, 4, seed=3)
    obs = np.stack(rec.obs)
    np.testing.assert_allclose(make_agent(f"onnx:{out}").logits(obs), z.logits(obs), rtol=1e-5, atol=1e-5)
    # an afterstate entry is a search, not a forward pass: refused, naming why
    r = subprocess.run([sys.executable, "-m", "tenk_env.cli.main", "zoo", "export", "classic_afterstate", "--onnx",
                        "--out", str(tmp_path / "a.onnx")], capture_output=True, text=True)
    msg = r.stdout + r.stderr
    assert r.returncode == 2 and "afterstate agent" in msg and "Traceback" not in msg


def test_an_onnx_agent_pickles_to_worker_processes(exported):
    import pickle

    o = make_agent(f"onnx:{exported['classic_ppo_demo']}")
    z = zoo.load("classic_ppo_demo")
    rec = _decisions(z, 2, seed=11)
    obs = np.stack(rec.obs)
    twin = pickle.loads(pickle.dumps(o))
    assert (twin.logits(obs) == o.logits(obs)).all()
