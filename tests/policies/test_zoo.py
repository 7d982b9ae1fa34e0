"""The zoo: shipped agents load by name, play, stay small and refuse other games."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tenk_env import variants
from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_match, play_table
from tenk_env.policies import zoo
from tenk_env.policies.ppo import CheckpointError, PPOAgent, checkpoint_meta, write_checkpoint
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
    n = entry.meta["n_players"]
    if entry.any_rules:  # it reads the rules: a held-out variant of the suite
        rules = variants.split("test")[13]
    else:
        rules = load_ruleset(entry.meta["ruleset"])
        assert rules.hash == entry.meta["ruleset_hash"]
    agent.check(rules, n)
    if n == 2:
        r = play_match(rules, agent, "hold:300", 40, seed=1)
        assert r.games == 40 and r.win_rate_a > 0.5  # a trained agent, not noise
    else:
        t = play_table(rules, [agent] + ["hold:300"] * (n - 1), 2 * n, seed=1)
        assert t.games == 2 * n and t.mean_score[0] > rules.target / 2  # it banks and scores like a player
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
    from tenk_env.game import Game
    from tenk_env.policies.afterstate import AfterstateAgent, checkpoint_meta, n_features, save_checkpoint

    rules = load_ruleset("classic")
    rng = np.random.default_rng(0)
    F = n_features(2)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 2)),
        "b1": rng.normal(size=2),
    }
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
    from tenk_env.io import file_sha256
    from tenk_env.policies.base import agent_file, agent_sha256

    assert agent_file("zoo:classic_ppo_demo") == zoo.ZOO_DIR / "classic_ppo_demo" / "weights.npz"
    assert agent_sha256("zoo:classic_ppo_demo") == file_sha256(zoo.ZOO_DIR / "classic_ppo_demo" / "weights.npz")
    assert agent_file("dicenow") is None


# ---------------------------------------------------------------- entries verified on load
@pytest.fixture()
def small_zoo(tmp_path, monkeypatch):
    """A zoo folder of two shipped entries, made the zoo (tenk_env.policies.base.ZOO_DIR, which every zoo
    function and the tournaments' agent keys read)."""
    import shutil

    from tenk_env.policies import base

    root = tmp_path / "zoo"
    for name in ("classic_ppo_demo", "farkle_official_afterstate"):
        shutil.copytree(zoo.ZOO_DIR / name, root / name)
    monkeypatch.setattr(base, "ZOO_DIR", root)
    return root


def _edit_card(root, edit):
    import yaml

    card = yaml.safe_load((root / "classic_ppo_demo" / "agent.yaml").read_text())
    edit(card)
    (root / "classic_ppo_demo" / "agent.yaml").write_text(yaml.safe_dump(card, sort_keys=False))


def _truncate(p):
    p.write_bytes(p.read_bytes()[:1000])


CARD = r"zoo entry 'classic_ppo_demo' \(.*classic_ppo_demo/agent\.yaml\)"
BROKEN = {
    "empty card": (
        lambda r: (r / "classic_ppo_demo" / "agent.yaml").write_text(""),
        CARD + " is empty: restore the entry, or export it again with `tenk zoo add CHECKPOINT "
        "classic_ppo_demo --force`",
    ),
    "card not YAML": (
        lambda r: (r / "classic_ppo_demo" / "agent.yaml").write_text("meta: [1, 2\nname: x\n"),
        r"zoo entry 'classic_ppo_demo': .*agent\.yaml cannot be read as YAML \(while parsing",
    ),
    "card a list": (
        lambda r: (r / "classic_ppo_demo" / "agent.yaml").write_text("- 1\n- 2\n"),
        CARD + " holds list, not the card's mapping",
    ),
    "card without meta": (
        lambda r: _edit_card(r, lambda c: c.pop("meta")),
        CARD + " has no 'meta' \\(the checkpoint's metadata\\)",
    ),
    "card without obs_version": (
        lambda r: _edit_card(r, lambda c: c["meta"].pop("obs_version")),
        CARD + r" has no meta\.obs_version \(the observation version\)",
    ),
    "player count not a number": (
        lambda r: _edit_card(r, lambda c: c["meta"].update(n_players="two")),
        CARD + r": meta\.n_players is 'two', not a whole number \(the player count\)",
    ),
    "card without weights_sha256": (
        lambda r: _edit_card(r, lambda c: c.pop("weights_sha256")),
        CARD + " has no 'weights_sha256' \\(the sha256 of weights.npz, 16 hex digits\\)",
    ),
    "ruleset edited, hash kept": (
        lambda r: _edit_card(r, lambda c: c["meta"]["ruleset"].update(target=5000)),
        CARD + r": meta\.ruleset hashes to [0-9a-f]{16}, but meta\.ruleset_hash records "
        r"915b7862bac40506: the card's ruleset was edited after export",
    ),
    "ruleset unplayable": (
        lambda r: _edit_card(r, lambda c: c["meta"]["ruleset"].update(num_dice="six")),
        CARD + r": meta\.ruleset: .*num_dice",
    ),
    "weights truncated": (
        lambda r: _truncate(r / "classic_ppo_demo" / "weights.npz"),
        r"zoo entry 'classic_ppo_demo': .*weights\.npz has sha256 [0-9a-f]{16}, but its card .* "
        r"records weights_sha256 [0-9a-f]{16}: the weights were replaced or damaged",
    ),
    "another agent's weights": (
        lambda r: (r / "classic_ppo_demo" / "weights.npz").write_bytes(
            (zoo.ZOO_DIR / "classic_ppo_best" / "weights.npz").read_bytes()
        ),
        r"weights\.npz has sha256 [0-9a-f]{16}, but its card .* records weights_sha256",
    ),
    "weights missing": (
        lambda r: (r / "classic_ppo_demo" / "weights.npz").unlink(),
        r"zoo entry 'classic_ppo_demo' has no weights file .*weights\.npz",
    ),
    "card missing": (
        lambda r: (r / "classic_ppo_demo" / "agent.yaml").unlink(),
        r"zoo entry 'classic_ppo_demo' has no card .*agent\.yaml",
    ),
}


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_a_broken_entry_is_named_and_the_others_still_play(small_zoo, case, capsys):
    breaks, message = BROKEN[case]
    breaks(small_zoo)
    with pytest.raises(zoo.ZooError, match=message):
        make_policy("zoo:classic_ppo_demo")
    good = make_policy("zoo:farkle_official_afterstate")
    good.check(PRESETS["farkle_official"], 2)
    healthy, bad = zoo.scan()
    assert [e.name for e in healthy] == ["farkle_official_afterstate"]
    assert len(bad) == 1 and re.search(message, str(bad[0]))
    assert main(["zoo"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich folds long lines
    assert "farkle_official_afterstate" in out and "49.89" in out
    assert "broken: zoo entry 'classic_ppo_demo'" in out


def test_damaged_weights_under_a_matching_hash_are_named(small_zoo):
    """A card re-hashed over a damaged file (by hand) still gives a clear error, not BadZipFile."""
    from tenk_env.io import file_sha256

    w = small_zoo / "classic_ppo_demo" / "weights.npz"
    _truncate(w)
    _edit_card(small_zoo, lambda c: c.update(weights_sha256=file_sha256(w)))
    with pytest.raises(
        zoo.ZooError,
        match=r"zoo entry 'classic_ppo_demo': .*weights\.npz cannot be read "
        r"\(BadZipFile: .*\): restore the entry",
    ):
        make_policy("zoo:classic_ppo_demo")


def test_every_shipped_entry_is_whole():
    healthy, bad = zoo.scan()
    assert bad == [] and len(healthy) == 12
    from tenk_env.io import file_sha256

    for e in healthy:
        assert e.card["weights_sha256"] == file_sha256(e.path / "weights.npz")


def test_one_card_claims_the_best_classic_2_player_agent():
    best = [e.name for e in zoo.entries() if "the best classic 2-player agent" in e.card["notes"].lower()]
    assert best == ["classic_afterstate_dicenow"]
    (e,) = [e for e in zoo.entries() if e.name == "classic_afterstate"]
    assert e.card["notes"].startswith(
        "The best self-play classic 2-player agent, second of the zoo's classic "
        "2-player agents (the best is classic_afterstate_dicenow, exactly 49.9556% "
    )


def _afterstate_checkpoint(path):
    from tenk_env.policies.afterstate import checkpoint_meta, n_features, save_checkpoint

    rng = np.random.default_rng(0)
    F = n_features(2)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 2)),
        "b1": rng.normal(size=2),
    }
    return save_checkpoint(path, w, checkpoint_meta(load_ruleset("classic"), 2, hidden=[8], opponents_learn=True))


def test_export_records_the_weights_sha256_and_a_replaced_file_is_refused(tmp_path):
    from tenk_env.io import file_sha256

    out = zoo.export(_afterstate_checkpoint(tmp_path / "a.npz"), "as_tiny", command="test", root=tmp_path / "zoo")
    (e,) = zoo.entries(tmp_path / "zoo")
    assert e.card["weights_sha256"] == file_sha256(out / "weights.npz")
    zoo.load("as_tiny", root=tmp_path / "zoo")
    (out / "weights.npz").write_bytes((zoo.ZOO_DIR / "classic_afterstate" / "weights.npz").read_bytes())
    got, held = file_sha256(out / "weights.npz"), e.card["weights_sha256"]
    with pytest.raises(
        zoo.ZooError,
        match=f"zoo entry 'as_tiny': .*weights.npz has sha256 {got}, but its card "
        rf"\(.*agent.yaml\) records weights_sha256 {held}: the weights were",
    ):
        zoo.load("as_tiny", root=tmp_path / "zoo")


def test_export_refuses_to_write_outside_the_zoo_or_where_it_cannot(tmp_path, monkeypatch, capsys):
    import os

    from tenk_env.policies import base

    ckpt = _afterstate_checkpoint(tmp_path / "a.npz")
    root = tmp_path / "zoo"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(
        zoo.ZooError,
        match=r"zoo entry 'linked': .*zoo/linked leads to .*elsewhere, outside the "
        r"zoo's folder .*zoo; remove the link, or pick another name",
    ):
        zoo.export(ckpt, "linked", command="test", root=root, force=True)
    assert list((tmp_path / "elsewhere").iterdir()) == []
    (tmp_path / "file").write_text("")
    with pytest.raises(
        zoo.ZooError,
        match=r"cannot add zoo entry 'x': the zoo's folder .*file/zoo is not writable "
        r"\(.*file is not a writable folder\)",
    ):
        zoo.export(ckpt, "x", command="test", root=tmp_path / "file" / "zoo")

    # as root (containers) the permission bits do not stop a write: the failed write is named
    def refused(*a):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(zoo, "atomic_write_bytes", refused)
    with pytest.raises(
        zoo.ZooError,
        match=r"cannot write zoo entry 'x' to .*zoo/x: Permission denied; give the "
        r"zoo's folder write permission",
    ):
        zoo.export(ckpt, "x", command="test", root=root)
    monkeypatch.undo()
    if os.geteuid() != 0:
        root.chmod(0o555)
        try:
            with pytest.raises(zoo.ZooError, match=r"cannot add zoo entry 'x': the zoo's folder .*zoo is not writable"):
                zoo.export(ckpt, "x", command="test", root=root)
        finally:
            root.chmod(0o755)
    # tenk zoo add: one line, exit 2, no traceback
    monkeypatch.setattr(base, "ZOO_DIR", tmp_path / "file" / "zoo")
    assert main(["zoo", "add", str(ckpt), "x", "--command", "test"]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("error: cannot add zoo entry 'x': the zoo's folder") and "Traceback" not in out


# ---------------------------------------------------------------- what tenk zoo prints of a card
def test_every_shipped_card_strength_reads():
    from tenk_env.cli.cmd_zoo import _strength

    for e in zoo.entries():
        lines, problem = _strength(e)
        assert problem is None and lines, f"{e.name}: {problem}"
    (e,) = [e for e in zoo.entries() if e.name == "classic2000_afterstate_4p"]
    # its exact ceiling names the best response that sets it (a card without the name still reads)
    assert _strength(e)[0][-2:] == [
        "0.21 [-0.24, 0.66] points below the exact ceiling 30.04%",
        "  (the best response in that seat, br:dicenow,maxscore,breakeven)",
    ]


def test_tenk_zoo_prints_regrets_in_pp_per_game(capsys):
    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    assert "regret vs optimal 3.51 pp/game [3.22, 3.80] (2,000 games)" in out  # classic_ppo_demo: 0.0351
    assert "regret on suite test 0.54 pp/game [0.50, 0.59] (16 rulesets)" in out  # generalist_afterstate
    assert "regrets in pp/game" in out and "0.0351" not in out and "/game [0.0" not in out


def test_an_unreadable_strength_names_the_card_file_and_the_key(small_zoo, capsys):
    _edit_card(small_zoo, lambda c: c["strength"]["regret_vs_optimal"].pop("ci95"))
    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    line = (
        "classic_ppo_demo: strength unreadable: zoo/classic_ppo_demo/agent.yaml has no "
        "strength.regret_vs_optimal.ci95; add it, or remove that figure from the card"
    )
    assert line in out.splitlines()
    assert str(small_zoo) not in out and "KeyError" not in out
    assert "vs optimal 49.89% exact (first 52.77%, second 47.01%)" in out  # the other entry still lists


def _card_commands(d, where):
    for k, v in d.items():
        if k == "command":
            yield where, v
        elif isinstance(v, dict):
            yield from _card_commands(v, f"{where}.{k}")


@pytest.mark.parametrize("entry", zoo.entries(), ids=lambda e: e.name)
def test_every_card_command_is_a_tenk_command_that_parses(entry):
    """A card's figures are reproduced by the commands it names: each is `tenk ...` and parses
    (no module of an older layout, such as agents.match)."""
    import shlex

    from tenk_env.cli.main import build_parser

    parser = build_parser()
    for where, cmd in [("command", entry.card["command"]), *_card_commands(entry.card.get("strength", {}), "strength")]:
        argv = shlex.split(re.sub(r"\s+\([^()]*\)$", "", cmd))  # a trailing "(file.yaml: what it holds)" aside
        assert argv[0] == "tenk", f"{entry.name} {where}: {cmd}"
        parser.parse_args(argv[1:])


def test_the_demo_card_names_the_main_job_and_its_run():
    (e,) = [e for e in zoo.entries() if e.name == "classic_ppo_demo"]
    notes = " ".join(e.card["notes"].split())
    assert "`tenk train --config configs/ppo_demo.yaml` (which writes runs/ppo_demo)" in notes
    assert "added with `tenk zoo add runs/ppo_demo/best.zip classic_ppo_demo`" in notes
    assert e.card["command"] == "tenk train --config configs/ppo_demo.yaml"
    assert e.card["strength"]["win_rates"]["dicenow"]["command"] == (
        "tenk evaluate zoo:classic_ppo_demo --games 20000 --opponents dicenow hold:300 maxscore --seed 0 "
        "--regret-games 0"
    )
