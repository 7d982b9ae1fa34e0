"""The benchmark table (tenk zoo table): the zoo and the bots rated together by game, each
agent's strength against optimal exact where the exact evaluator follows it, else by regret."""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.evaluation import benchmark
from tenk_env.evaluation.analysis import analyse
from tenk_env.policies import base, zoo
from tenk_env.policies.afterstate import checkpoint_meta, n_features, save_checkpoint
from tenk_env.policies.exact import exact_eval
from tenk_env.policies.ppo import checkpoint_meta as ppo_meta
from tenk_env.policies.ppo import write_checkpoint
from tenk_env.rules import PRESETS

#: a small solvable game: final round, entry threshold, two rolls a turn (as in tests/solve/test_exact.py)
FR2 = PRESETS["busche_neller_2017"].replace(
    target=1000, end="final_round", max_rolls=2, entry_threshold=300, name="fr2"
)


@pytest.fixture()
def tiny_zoo(tmp_path, monkeypatch):
    """A zoo of two FR2 agents: an afterstate agent (features v2, followed exactly) and an
    untrained PPO agent (measured by regret)."""
    from sb3_contrib import MaskablePPO

    from tenk_env.vector.sb3 import sb3_vec_env

    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "zoo"
    rng = np.random.default_rng(0)
    F = n_features(2)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 2)),
        "b1": rng.normal(size=2),
    }
    a = save_checkpoint(tmp_path / "a.npz", w, checkpoint_meta(FR2, 2, hidden=[8], opponents_learn=True))
    zoo.export(a, "fr2_afterstate", command="test", root=root)
    model = MaskablePPO("MlpPolicy", sb3_vec_env(2, FR2, 2, opponents="random"), seed=4, device="cpu")
    p = write_checkpoint(model, tmp_path / "p.zip", ppo_meta(FR2, 2, activation="tanh", n_actions=128))
    zoo.export(p, "fr2_ppo", command="test", root=root)
    monkeypatch.setattr(base, "ZOO_DIR", root)  # the zoo's folder, for every zoo function and the tournament's keys
    return tmp_path


def test_the_table_rates_everyone_and_measures_against_optimal(tiny_zoo):
    groups = benchmark.benchmark(
        games=40,
        seed=3,
        workers=1,
        regret_games=20,
        bots=["hold:300", "dicenow"],
        out=tiny_zoo / "t",
        log=lambda m: None,
    )
    (g,) = groups
    assert g.players == 2 and g.rules.hash == FR2.hash
    agents = {"zoo:fr2_afterstate", "zoo:fr2_ppo", "hold:300", "dicenow", "optimal"}
    assert {r.agent for r in g.ratings} == agents
    assert g.tournament.results[0].games == 40
    s = g.strength
    assert s["zoo:fr2_afterstate"].how == "exact"
    assert s["zoo:fr2_afterstate"].win_rate == exact_eval(FR2, "zoo:fr2_afterstate", "optimal").p_a
    assert s["dicenow"].win_rate == exact_eval(FR2, "dicenow", "optimal").p_a
    assert s["optimal"].win_rate == pytest.approx(0.5, abs=1e-9)
    rep = analyse("zoo:fr2_ppo", FR2, games=20, seed=3).report
    assert s["zoo:fr2_ppo"].how == "regret over 20 games"
    assert (s["zoo:fr2_ppo"].win_rate, s["zoo:fr2_ppo"].ci_low) == (rep.implied_win_rate, rep.implied_ci[0])
    text = benchmark.markdown(groups, "tenk zoo table")
    rows = [ln for ln in text.splitlines() if ln.startswith("| `")]
    assert len(rows) == 5 and "(exact)" in text and "regret over 20 games" in text
    # best rated first
    elos = [r.elo for r in g.ratings]
    assert elos == sorted(elos, reverse=True)
    with pytest.raises(ValueError, match="no agents for zilch"):
        benchmark.benchmark(games=40, rules="zilch", log=lambda m: None)


def test_a_free_for_all_group_shows_each_agents_share_of_the_wins(tiny_zoo, monkeypatch, capsys):
    rng = np.random.default_rng(1)
    F = n_features(3)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 3)),
        "b1": rng.normal(size=3),
    }
    a = save_checkpoint(tiny_zoo / "a3.npz", w, checkpoint_meta(FR2, 3, hidden=[8], opponents_learn=True))
    zoo.export(a, "fr2_afterstate_3p", command="test", root=tiny_zoo / "zoo")
    (g,) = benchmark.benchmark(
        games=12,
        seed=3,
        workers=1,
        regret_games=20,
        players=3,
        bots=["hold:300", "dicenow", "greedy"],
        out=tiny_zoo / "t",
        log=lambda m: None,
    )
    assert g.players == 3 and not g.strength  # no 3-player solver: no column against optimal
    share = {x.agent: x for x in g.tournament.win_share}
    assert set(share) == {"zoo:fr2_afterstate_3p", "hold:300", "dicenow", "greedy"}
    # each agent sits at 3 of the 4 tables of 12 games, and every game has one win
    assert all(x.games == 36 for x in share.values())
    assert sum(x.share for x in share.values()) * 36 == pytest.approx(4 * 12)
    text = benchmark.markdown([g])
    assert "12 games per table, seed 3; an even win share is 1/3" in text
    assert "| agent | what | rating (Elo, 95% CI) | score | win share (95% CI) |" in text
    d = share["dicenow"]
    row = next(ln for ln in text.splitlines() if ln.startswith("| `dicenow`"))
    assert row.endswith(f"| {d.share:.2%} [{d.ci_low:.2%}, {d.ci_high:.2%}] |")
    # tenk zoo table prints the markdown as written, each row on one line however narrow the terminal
    from tenk_env.cli import cmd_zoo
    from tenk_env.cli.main import main

    g.kinds["zoo:fr2_afterstate_3p"] += ", trained " + "and trained " * 20  # a row of 300 characters
    monkeypatch.setattr(cmd_zoo, "benchmark", lambda **k: [g])
    assert main(["zoo", "table", "--players", "3", "--games", "12", "--out", str(tiny_zoo / "t.md")]) == 0
    out = capsys.readouterr().out
    assert (tiny_zoo / "t.md").read_text() in out


def test_bad_table_arguments_fail_before_any_work(tmp_path, capsys, monkeypatch):
    from tenk_env.cli import cmd_zoo
    from tenk_env.cli.main import main

    monkeypatch.setattr(cmd_zoo, "benchmark", lambda **k: pytest.fail("work started"))
    assert main(["zoo", "table", "--out", str(tmp_path)]) != 0
    assert "is a directory" in capsys.readouterr().out
    assert main(["zoo", "table", "--regret-games", "-1"]) != 0
    assert "--regret-games -1: give a whole number of at least 0" in capsys.readouterr().out


@pytest.fixture()
def one_agent_zoo(tmp_path, monkeypatch):
    """A zoo of one FR2 afterstate agent, FR2 as a YAML file, and the working directory in
    tmp_path (tenk zoo table writes its tournaments under runs/tournaments/)."""
    import yaml

    rng = np.random.default_rng(0)
    F = n_features(2)
    w = {
        "w0": rng.normal(size=(F, 8)),
        "b0": rng.normal(size=8),
        "w1": rng.normal(size=(8, 2)),
        "b1": rng.normal(size=2),
    }
    a = save_checkpoint(tmp_path / "a.npz", w, checkpoint_meta(FR2, 2, hidden=[8], opponents_learn=True))
    zoo.export(a, "fr2_afterstate", command="test", root=tmp_path / "zoo")
    monkeypatch.setattr(base, "ZOO_DIR", tmp_path / "zoo")
    (tmp_path / "fr2.yaml").write_text(yaml.safe_dump(FR2.to_dict()))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _table(*extra: str) -> list[str]:
    return [
        "zoo",
        "table",
        "--rules",
        "fr2.yaml",
        "--players",
        "2",
        "--regret-games",
        "0",
        "--workers",
        "1",
        "--out",
        "t.md",
        *extra,
    ]


def test_table_reruns_with_other_games_or_seed_get_their_own_tournament(one_agent_zoo, capsys):
    """The README's sequence (--games 1000, then --games 400) ran into the first run's folder."""
    from tenk_env.cli.main import main

    (one_agent_zoo / "zoo" / "junk").mkdir()
    (one_agent_zoo / "zoo" / "junk" / "agent.yaml").write_text("")  # a broken entry is named, not fatal
    assert main(_table("--games", "4")) == 0
    first = (one_agent_zoo / "t.md").read_text()
    out = capsys.readouterr().out
    junk = one_agent_zoo / "zoo" / "junk" / "agent.yaml"
    assert out.startswith(f"left out: zoo entry 'junk' ({junk}) is empty: restore the entry")
    # 7 agents: 21 pairings of 4 games, one chunk each; a line per tenth of them
    (folder,) = (one_agent_zoo / "runs" / "tournaments").iterdir()
    assert folder.name == benchmark.tournament_name(FR2, 2, ["zoo:fr2_afterstate", *benchmark.BOTS, "optimal"], 4, 0)
    assert f"fr2, 2 players: 7 agents, 4 games per table\n  tournament: runs/tournaments/{folder.name}\n" in out
    assert "  1 of 21 chunks of games played (5%)\n" in out and "  21 of 21 chunks of games played (100%)\n" in out
    assert main(_table("--games", "6")) == 0
    assert main(_table("--games", "4", "--seed", "1")) == 0
    assert len(list((one_agent_zoo / "runs" / "tournaments").iterdir())) == 3
    assert "6 games per pairing, seed 0" in capsys.readouterr().out
    # the same arguments resume; --fresh replays the same games
    assert main(_table("--games", "4")) == 0
    out = capsys.readouterr().out
    assert f"  tournament: resuming runs/tournaments/{folder.name} (21 chunks of games saved by an earlier run)" in out
    assert "  all its games were already played: results rebuilt from the saved chunks" in out
    assert main(_table("--games", "4", "--fresh")) == 0
    out = capsys.readouterr().out
    assert "resuming" not in out and "21 of 21 chunks of games played (100%)" in out
    assert (one_agent_zoo / "t.md").read_text() == first


def test_tables_of_same_named_rulesets_do_not_share_a_folder():
    """An inline ruleset keeps its base's name: the folder is keyed by the rules' content."""
    agents = ["zoo:a", "dicenow"]
    names = {benchmark.tournament_name(r, 2, agents, 40, 0) for r in (FR2, FR2.replace(target=1500))}
    assert len(names) == 2 and all(n.startswith("zoo-fr2-2p-") for n in names)
    assert benchmark.tournament_name(FR2, 3, agents, 40, 0) not in names


def test_an_interrupted_table_says_how_far_it_got_and_resumes(one_agent_zoo, monkeypatch, capsys):
    from tenk_env.cli.main import main

    real = benchmark.run_tournament

    def interrupted(cfg, **kw):
        step = kw["on_chunk"]

        def stop(done, total):
            step(done, total)
            if done == 3:
                raise KeyboardInterrupt

        return real(cfg, **{**kw, "on_chunk": stop})

    monkeypatch.setattr(benchmark, "run_tournament", interrupted)
    assert main(_table("--games", "4")) == 130
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == (
        "interrupted; 3 of 21 chunks of this tournament's games saved; rerun the same command to resume"
    )
    monkeypatch.setattr(benchmark, "run_tournament", real)
    assert main(_table("--games", "4")) == 0
    out = capsys.readouterr().out
    assert "(3 chunks of games saved by an earlier run)" in out and "  21 of 21 chunks of games played (100%)" in out
