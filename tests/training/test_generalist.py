"""Agents that play any ruleset: the rules observation describes every field that changes play,
an afterstate net reading it trains on games drawn from the suite's train split, plays the
held-out rulesets, and a run or a checkpoint refuses inputs it was not trained with."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml

from tenk_env import variants
from tenk_env.evaluation.match import play_match
from tenk_env.game import Game
from tenk_env.policies import zoo
from tenk_env.policies.afterstate import (
    AfterstateAgent,
    AfterstateError,
    ValueNet,
    checkpoint_meta,
    features_of,
    make_afterstate,
    n_features,
    read_checkpoint,
    save_checkpoint,
)
from tenk_env.rules import PRESETS, Ruleset
from tenk_env.rules_obs import RULES_OBS_SIZE, RULES_OBS_VERSION, rules_obs, rules_obs_labels
from tenk_env.training import afterstate as training
from tenk_env.training.afterstate import load_afterstate_config, resume_afterstate, train_afterstate
from tenk_env.training.config import ConfigError
from tenk_env.training.rundir import RunError

C = PRESETS["classic"]

#: for every field of a ruleset but its name, a value other than classic's
OTHER = {
    "num_dice": 5,
    "target": 5000,
    "entry_threshold": 0,
    "min_bank": 300,
    "max_rolls": 3,
    "three_ones": 300,
    "multiples": "flat",
    "flat_multiples": (1000, 2000, 4000),
    "straight": 2500,
    "half_straights": 250,
    "short_straights": 500,
    "three_pairs": 500,
    "four_plus_pair_is_three_pairs": True,
    "two_triplets": 2500,
    "six_of_a_kind_wins": "any",
    "four_twos_lose_all": True,
    "zilch_payout": 500,
    "hot_dice": "mandatory",
    "end": "immediate",
    "exact_finish": "forfeit",
    "tie": "shared",
    "bust_penalty": 500,
    "bust_penalty_after": 2,
    "piggyback": True,
    "turn_order": "highest_die",
    "komi": 200,
}


def test_the_rules_observation_names_every_index_and_sees_every_field():
    labels = rules_obs_labels()
    assert RULES_OBS_VERSION == 1 and len(labels) == RULES_OBS_SIZE == len(set(labels)) == 33
    v = rules_obs(C)
    assert v.dtype == np.float32 and v.shape == (RULES_OBS_SIZE,) and not v.flags.writeable
    assert dict(zip(labels, v.tolist())) == {
        **{k: 0.0 for k in labels},
        "six_dice": 1.0,
        "target": 1.0,
        "entry_threshold": 0.5,
        "three_ones": 1.0,
        "multiples_doubling": 1.0,
        "straight": 0.5,
        "three_pairs": 0.5,
        "end_final_round": 1.0,
    }
    fields = {f.name for f in dataclasses.fields(Ruleset)} - {"name"}
    assert set(OTHER) == fields, "a new ruleset field: give it a value here and an index in tenk_env/rules_obs.py"
    for name, value in OTHER.items():
        base = C.replace(multiples="flat") if name == "flat_multiples" else C
        base = base.replace(bust_penalty=500) if name == "bust_penalty_after" else base
        base = base.replace(straight=0, three_pairs=0) if name == "num_dice" else base
        assert not np.array_equal(rules_obs(base.replace(**{name: value})), rules_obs(base)), name
    # a renamed ruleset is the same game
    assert np.array_equal(rules_obs(C.replace(name="mine")), v)


def test_rulesets_that_play_differently_are_told_apart():
    rulesets = list(PRESETS.values()) + variants.split("test") + variants.split("train", 300)
    by_hash = {r.hash: r for r in rulesets}
    seen = {}
    for r in by_hash.values():
        key = rules_obs(r).tobytes()
        assert key not in seen, f"{r.name} and {seen[key]} share an observation"
        seen[key] = r.name
        assert 0.0 <= rules_obs(r).min() and rules_obs(r).max() <= 2.0


def test_features_end_with_the_rules_observation():
    g = Game(variants.sample_ruleset(3), 2, record=False)
    args = (
        np.array([[300.0, 0.0]]),
        np.ones((1, 2)),
        np.zeros((1, 2)),
        np.zeros(1),
        np.ones((1, 2)),
        np.zeros((1, 2)),
        np.ones((1, 2)),
    )
    plain = features_of(g.rules, *args)
    with_rules = features_of(g.rules, *args, RULES_OBS_VERSION)
    assert plain.shape == (1, n_features(2)) and with_rules.shape == (1, n_features(2, RULES_OBS_VERSION))
    assert np.array_equal(with_rules[0, : plain.shape[1]], plain[0])
    assert np.array_equal(with_rules[0, plain.shape[1] :], rules_obs(g.rules))


GEN = {
    "algo": "afterstate",
    "rules": {"suite": "train", "count": 3},
    "rules_obs": True,
    "n_players": 2,
    "total_turns": 160,
    "train_every": 64,
    "max_game_turns": 60,
    "grad_steps": 2,
    "hidden": [16],
    "checkpoint_every": 80,
    "opponents": ["maxscore"],
    "eval": {"every": 80, "games": 2, "rulesets": 2, "opponents": ["hold:300"], "keep": True},
}


def gen_config(tmp_path, name="gen", **over):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**GEN, "runs_dir": str(tmp_path / "runs"), "name": name, **over}))
    return path


def test_a_net_that_reads_the_rules_trains_on_the_suite_and_plays_held_out_rulesets(tmp_path, monkeypatch):
    played = []

    class Recording(Game):
        def __init__(self, rules, *a, **k):
            played.append(rules.hash)
            super().__init__(rules, *a, **k)

    monkeypatch.setattr(training, "Game", Recording)
    res = train_afterstate(load_afterstate_config(gen_config(tmp_path)), log=lambda s: None)
    train3 = variants.split("train", 3)
    # every game drawn from the three training rulesets, and more than one of them played
    assert set(played) <= {r.hash for r in train3} and len(set(played)) >= 2
    run = res.run_dir
    w, meta = read_checkpoint(run / "last.npz")
    assert meta["rules_obs"] == RULES_OBS_VERSION and "ruleset" not in meta
    assert meta["trained_on"] == "the first 3 rulesets of the suite's train split (variant space v1)"
    assert w["w0"].shape[0] == n_features(2, RULES_OBS_VERSION)
    # evaluated over two rulesets at each evaluation, its nets kept for learning curves
    rows = (run / "eval.csv").read_text().splitlines()[1:]
    assert rows and all(r.split(",")[2] == "4" for r in rows)
    assert {p.name for p in (run / "evals").iterdir()} == {f"turns_{r.split(',')[0]}.npz" for r in rows}
    assert yaml.safe_load((run / "config.yaml").read_text())["rules"] == {"suite": "train", "count": 3}
    # it plays a held-out ruleset, and a preset, where an agent of one ruleset refuses
    spec = f"afterstate:{run / 'last.npz'}"
    held = variants.split("test")[0]
    assert play_match(held, spec, "dicenow", 2, seed=0, backend="scalar").games == 2
    agent = make_afterstate(str(run / "last.npz"))
    agent.check(PRESETS["farkle_official"], 2)
    with pytest.raises(AfterstateError, match="plays any ruleset, but with 2 players; this game has 3"):
        agent.check(held, 3)


def test_a_resumed_run_keeps_only_the_nets_of_its_state(tmp_path):
    cfg = gen_config(tmp_path, total_turns=160)
    run = train_afterstate(load_afterstate_config(cfg), log=lambda s: None).run_dir
    import torch

    state = torch.load(run / "state.pt", weights_only=False)
    saved = state["turns"]
    # a killed session's net, past the state the run resumes from
    (run / "evals" / f"turns_{saved + 500}.npz").write_bytes((run / "last.npz").read_bytes())
    before = sorted(p.name for p in (run / "evals").iterdir() if int(p.stem[6:]) <= saved)
    resume_afterstate(run, [f"total_turns={saved + 1}"], log=lambda s: None)
    after = sorted(p.name for p in (run / "evals").iterdir())
    assert f"turns_{saved + 500}.npz" not in after and set(before) <= set(after)
    rows = [r.split(",")[0] for r in (run / "eval.csv").read_text().splitlines()[1:]]
    assert {f"turns_{t}.npz" for t in rows} == set(after)


@pytest.mark.slow
def test_inputs_a_run_was_not_trained_with_are_refused(tmp_path):
    run = train_afterstate(load_afterstate_config(gen_config(tmp_path, total_turns=80)), log=lambda s: None).run_dir
    before = (run / "last.npz").read_bytes()
    # a net trained with the rules observation cannot go on without it (its config says suite rules: refused)
    with pytest.raises(ConfigError, match="set rules_obs: true"):
        resume_afterstate(run, ["rules_obs=false"], log=lambda s: None)
    # the reverse: a one-ruleset run asked to read the rules on resume
    one = tmp_path / "one.yaml"
    one.write_text(
        yaml.safe_dump(
            {
                **GEN,
                # a short game: its regret is measured at the evaluation, which solves the game
                "rules": {"base": "classic", "target": 1000},
                "rules_obs": False,
                "name": "one",
                "total_turns": 80,
                "runs_dir": str(tmp_path / "runs"),
                "opponents": ["hold:300"],
            }
        )
    )
    one_run = train_afterstate(load_afterstate_config(one), log=lambda s: None).run_dir
    with pytest.raises(RunError, match="trained without the rules observation; the config sets rules_obs: true"):
        resume_afterstate(one_run, ["rules_obs=true", "total_turns=200"], log=lambda s: None)
    # and the run that reads them, resumed with its rules observation switched off by hand in its state
    import torch

    state = torch.load(run / "state.pt", weights_only=False)
    state["meta"].pop("rules_obs")
    torch.save(state, run / "state.pt")
    with pytest.raises(RunError, match="trained without the rules observation; the config sets rules_obs: true"):
        resume_afterstate(run, ["total_turns=200"], log=lambda s: None)
    assert (run / "last.npz").read_bytes() == before
    # checkpoints: a net whose width does not fit its metadata's rules observation
    w, meta = read_checkpoint(run / "last.npz")
    with pytest.raises(AfterstateError, match="does not fit 2 players"):
        AfterstateAgent.from_weights(
            w, {**meta, "rules_obs": 0, "ruleset": C.to_dict(), "ruleset_hash": C.hash, "ruleset_name": "classic"}, "x"
        )
    with pytest.raises(AfterstateError, match="rules observation v9.*retrain"):
        ValueNet(w, 2, 9)


@pytest.mark.parametrize(
    "rules, message",
    [
        ({"suite": "train"}, "set rules_obs: true"),
        ({"suite": "test"}, "rules.suite = 'test': training draws from the suite's train split only"),
        ({"suite": "train", "count": 0}, "rules.count = 0: give how many training rulesets"),
        ({"suite": "train", "size": 3}, r"takes the keys suite, count, not size"),
    ],
)
def test_bad_suite_rules_are_refused(tmp_path, rules, message):
    over = {"rules": rules} if rules != {"suite": "train"} else {"rules": rules, "rules_obs": False}
    with pytest.raises(ConfigError, match=message):
        load_afterstate_config(gen_config(tmp_path, **over))
    assert not (tmp_path / "runs").exists()


def test_the_zoo_keeps_an_agent_that_reads_the_rules(tmp_path):
    rng = np.random.default_rng(0)
    F = n_features(2, RULES_OBS_VERSION)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 2)),
        "b1": rng.normal(size=2),
    }
    ck = save_checkpoint(
        tmp_path / "g.npz",
        w,
        checkpoint_meta(None, 2, hidden=[8], opponents_learn=False, trained_on="three rulesets", turns=5),
    )
    root = tmp_path / "zoo"
    zoo.export(ck, "gen", command="tenk train ...", root=root)
    (e,) = zoo.entries(root)
    assert e.any_rules and e.summary().startswith("any ruleset (trained on three rulesets), 2 players")
    agent = zoo.load("gen", root)
    agent.check(variants.split("test")[5], 2)
    # its weights are still checked against its card
    (root / "gen" / "weights.npz").write_bytes((root / "gen" / "weights.npz").read_bytes()[:-10] + b"0" * 10)
    good, bad = zoo.scan(root)
    assert not good and "sha256" in str(bad[0])


def test_a_runs_kept_nets_make_its_learning_curve_on_a_split(tmp_path, monkeypatch, capsys):
    from tenk_env.cli.main import main

    run = train_afterstate(load_afterstate_config(gen_config(tmp_path, total_turns=160)), log=lambda s: None).run_dir
    kept = sorted(int(p.stem[6:]) for p in (run / "evals").iterdir())
    assert len(kept) >= 2
    # two small held-out games stand in for the test split (its 10,000-point games take minutes to solve)
    small = [C.replace(target=1000, multiples="flat", name="small-a"), C.replace(target=800, name="small-b")]
    monkeypatch.setattr(variants, "split", lambda name, count=None, seed=0: small)
    assert main(["suite", "curve", str(run), "--games", "80", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    rows = (run / "suite_curve_test.csv").read_text().splitlines()
    # regrets in percentage points, as the header says; the win rate a probability
    assert rows[0] == "turns,mean_regret_pp,ci_low_pp,ci_high_pp,win_rate_vs_optimal"
    assert [int(r.split(",")[0]) for r in rows[1:]] == kept
    for r in rows[1:]:
        turns, mean, lo, hi, wr = map(float, r.split(","))
        assert lo <= mean <= hi and abs(wr - (0.5 - mean / 100)) < 2e-6
    assert (run / "plots" / "suite_test_regret.png").stat().st_size > 1000
    assert out.count("learner turns on split 'test'") == len(kept)
    # measured once: a second call reads the results back
    assert main(["suite", "curve", str(run), "--games", "80", "--workers", "1"]) == 0
    assert "learner turns on split" not in capsys.readouterr().out
    assert (run / "suite_curve_test.csv").read_text().splitlines() == rows
    # a folder with no kept nets is named, with the fix
    assert main(["suite", "curve", str(tmp_path)]) == 2
    assert "kept no nets to measure: an afterstate run keeps them with eval.keep: true" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")
def test_the_envs_can_append_the_rules_observation():
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env

    import tenk_env  # noqa: F401  (registers TenThousand-v0)
    from tenk_env.rules_obs import RulesObservation, RulesObservationVector

    rules = variants.split("test")[4]
    plain, wrapped = (gym.make("TenThousand-v0", rules=rules) for _ in range(2))
    wrapped = RulesObservation(wrapped)
    assert wrapped.observation_space.shape == (plain.observation_space.shape[0] + RULES_OBS_SIZE,)
    assert wrapped.metadata["rules_obs_version"] == RULES_OBS_VERSION
    (a, ia), (b, _) = plain.reset(seed=3), wrapped.reset(seed=3)
    for _ in range(200):  # the same game, the same position block, the rules after it
        assert np.array_equal(b, np.concatenate([a, rules_obs(rules)])) and wrapped.observation_space.contains(b)
        act = int(np.flatnonzero(ia["action_mask"])[-1])
        (a, _, done, _, ia), (b, *_) = plain.step(act), wrapped.step(act)
        if done:
            (a, ia), (b, _) = plain.reset(), wrapped.reset()
    check_env(RulesObservation(gym.make("TenThousand-v0", rules="farkle_official")), skip_render_check=True)
    # the vector env: every row, and the last observation of each finished game
    venv = RulesObservationVector(
        gym.make_vec("TenThousand-v0", num_envs=4, vectorization_mode="vector_entry_point", rules=rules)
    )
    obs, info = venv.reset(seed=0)
    finished = 0
    for _ in range(400):
        assert obs.shape == (4, plain.observation_space.shape[0] + RULES_OBS_SIZE)
        assert np.array_equal(obs[:, -RULES_OBS_SIZE:], np.tile(rules_obs(rules), (4, 1)))
        obs, _, term, _, info = venv.step(np.array([np.flatnonzero(m)[-1] for m in info["action_mask"]]))
        for i in np.flatnonzero(term):
            assert np.array_equal(info["final_obs"][i][-RULES_OBS_SIZE:], rules_obs(rules))
            finished += 1
    assert finished > 0
    with pytest.raises(TypeError, match="not a tenk env"):
        RulesObservation(gym.make("CartPole-v1"))
