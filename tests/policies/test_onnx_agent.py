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
    return {
        name: export_actor(zoo.load(name)._actor, zoo.load(name).meta, d / f"{name}.onnx")
        for name in ("classic_ppo_best", "classic_ppo_demo")
    }


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


def _foreign(
    path, n_players: int, A: int, with_mask: bool, bias: np.ndarray, D: int | None = None, meta: str | None = None
):
    """A model with no tenk metadata (unless ``meta``, the JSON of its property): logits = obs @ 0
    + bias (+ mask, if it takes one)."""
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
    g = helper.make_graph(
        nodes, "foreign", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", A])], [w, b]
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    if meta is not None:
        helper.set_model_props(model, {META_KEY: meta})
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
    r = subprocess.run(
        [sys.executable, "-m", "tenk_env.cli.main", "zoo", "export", "classic_ppo_demo", "--onnx", "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert out.is_file() and "onnx:" in r.stdout
    z = zoo.load("classic_ppo_demo")
    rec = _decisions(z, 4, seed=3)
    obs = np.stack(rec.obs)
    np.testing.assert_allclose(make_agent(f"onnx:{out}").logits(obs), z.logits(obs), rtol=1e-5, atol=1e-5)
    # an afterstate entry is a search, not a forward pass: refused, naming why
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenk_env.cli.main",
            "zoo",
            "export",
            "classic_afterstate",
            "--onnx",
            "--out",
            str(tmp_path / "a.onnx"),
        ],
        capture_output=True,
        text=True,
    )
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


BROKEN = "the model is broken: check its export"


def test_nan_logits_are_the_models_fault(tmp_path):
    rules = load_ruleset("classic")
    A = n_actions(rules)
    p = _foreign(tmp_path / "nan.onnx", 2, A, with_mask=False, bias=np.full(A, np.nan))
    agent = make_agent(f"onnx:{p}")
    # an all-NaN model once played a whole game, always the first legal move
    with pytest.raises(AgentError) as e:
        play_game(rules, [agent, "dicenow"], 1)
    assert str(e.value) == (
        f"ONNX model {str(p)!r} returned NaN logits for {A} of {A} actions (first at action 0): "
        f"logits must be finite numbers or -inf; {BROKEN}"
    )
    # one NaN is enough, even on an illegal action; the batched form names the observation
    bias = np.zeros(A)
    bias[[5, 9, 70]] = np.nan
    q = _foreign(tmp_path / "some.onnx", 2, A, with_mask=False, bias=bias)
    obs, masks = np.zeros((4, obs_size(2)), np.float32), np.zeros((4, A), np.float32)
    masks[:, 1] = 1
    with pytest.raises(AgentError) as e:
        make_agent(f"onnx:{q}").act(obs, masks)
    assert str(e.value) == (
        f"ONNX model {str(q)!r} returned NaN logits for 3 of {A} actions of observation 0 of 4 "
        f"observations (first at action 5): logits must be finite numbers or -inf; {BROKEN}"
    )


def test_infinite_logits_cannot_rank_the_moves(tmp_path):
    rules = load_ruleset("classic")
    A = n_actions(rules)
    bias = np.zeros(A)
    bias[[64, 65]] = np.inf
    p = _foreign(tmp_path / "inf.onnx", 2, A, with_mask=False, bias=bias)
    with pytest.raises(AgentError) as e:
        play_game(rules, [make_agent(f"onnx:{p}"), "dicenow"], 1)
    assert str(e.value) == (
        f"ONNX model {str(p)!r} returned +inf logits for 2 of {A} actions (first at action 64): "
        f"logits must be finite numbers or -inf; {BROKEN}"
    )
    # all -inf: once blamed on the move the argmax landed on, not on the model
    q = _foreign(tmp_path / "ninf.onnx", 2, A, with_mask=False, bias=np.full(A, -np.inf))
    with pytest.raises(AgentError) as e:
        play_game(rules, [make_agent(f"onnx:{q}"), "dicenow"], 1)
    assert str(e.value) == (
        f"ONNX model {str(q)!r} returned -inf logits for all 11 legal actions (first at action 1): "
        f"it rules out every legal move; {BROKEN}"
    )
    obs, masks = np.zeros((3, obs_size(2)), np.float32), np.zeros((3, A), np.float32)
    masks[:, [3, 67]] = 1
    with pytest.raises(AgentError) as e:
        make_agent(f"onnx:{q}").act(obs, masks)
    assert str(e.value) == (
        f"ONNX model {str(q)!r} returned -inf logits for all 2 legal actions of observation 0 of "
        f"3 observations (first at action 3): it rules out every legal move; {BROKEN}"
    )


def test_minus_inf_marks_moves_never_played(tmp_path):
    rules = load_ruleset("classic")
    A = n_actions(rules)
    # -inf on all but the banking actions: a legal finite logit is left, so it plays
    bias = np.full(A, -np.inf)
    bias[64:128] = 0.0
    p = _foreign(tmp_path / "bank.onnx", 2, A, with_mask=False, bias=bias)
    obs, masks = np.zeros((2, obs_size(2)), np.float32), np.zeros((2, A), np.float32)
    masks[:, [1, 65]] = 1
    assert make_agent(f"onnx:{p}").act(obs, masks).tolist() == [65, 65]


def _meta(**changes):
    meta = {
        "n_players": 2,
        "n_actions": 128,
        "ruleset_name": "classic",
        "ruleset_hash": load_ruleset("classic").hash,
        "ruleset": {},
        "obs_version": 1,
    }
    meta.update(changes)
    return json.dumps({k: v for k, v in meta.items() if v is not None})


@pytest.mark.parametrize(
    "meta, problem",
    [
        (_meta(n_actions=None), "has no 'n_actions'"),
        (_meta(n_players=None), "has no 'n_players'"),
        (_meta(ruleset_hash=None), "has no 'ruleset_hash'"),
        (_meta(obs_version=None), "has no 'obs_version'"),
        (_meta(rules_obs=1, ruleset=None, obs_version=None), "has no 'obs_version'"),
        (_meta(n_actions="128"), 'has n_actions = "128", not a whole number'),
        (_meta(n_players=True), "has n_players = true, not a whole number"),
        (_meta(ruleset_hash=5), "has ruleset_hash = 5, not a string"),
        (_meta(n_players=1), "has n_players = 1; tenk plays 2 to 8"),
        (_meta(n_actions=0), "has n_actions = 0; a model scores at least one action"),
        (_meta(n_actions=130), "has n_actions = 130, but the model gives 128 logits"),
        ("[1, 2]", "holds a JSON list, not an object"),
    ],
)
def test_bad_metadata_names_the_key(tmp_path, meta, problem):
    p = _foreign(tmp_path / "meta.onnx", 2, 128, with_mask=False, bias=np.zeros(128), meta=meta)
    with pytest.raises(AgentError) as e:
        make_agent(f"onnx:{p}")
    assert str(e.value) == (
        f"agent 'onnx:{p}': its 'tenk_meta' property {problem}: export the model again "
        "(tenk zoo export NAME --onnx), or drop the property to play it by its sizes"
    )


def test_good_metadata_plays(tmp_path):
    p = _foreign(tmp_path / "meta.onnx", 2, 128, with_mask=False, bias=-np.arange(128.0), meta=_meta())
    agent = make_agent(f"onnx:{p}")
    agent.check(load_ruleset("classic"), 2)
    assert play_game("classic", [agent, "dicenow"], 2).winners
