"""The rule-variant space and the suite's splits (tenk_env.variants, `tenk suite`)."""

from __future__ import annotations

import json

import pytest

from tenk_env import variants as V
from tenk_env.cli.main import main
from tenk_env.rules import PRESETS, load_ruleset
from tenk_env.solve import check_game_rules, solve_game

#: the test split's hashes under space v1: a change to the space or to its draws must bump
#: SPACE_VERSION (results name it) and then this list
TEST_HASHES_V1 = [
    "df2fa39106bd6e7c",
    "7051caaba49aa9bd",
    "efd0e39ed9455ad9",
    "2d41077df074bac6",
    "99a8819ecdf75e26",
    "e3fbe3e5781f8c84",
    "71c158e8a7dd2200",
    "a608ba5c3a389aa3",
    "f31b6999e778064f",
    "7811129e5b0d6934",
    "e77b63f2af841411",
    "54cbbf3ed0a3ff11",
    "4e5f7d440e17f7af",
    "2ff44a0826959777",
    "8ae135852a679182",
    "cb93e64567858d99",
]


def test_the_test_split_is_fixed():
    assert V.SPACE_VERSION == 1
    assert [r.hash for r in V.split("test")] == TEST_HASHES_V1
    assert [r.name for r in V.split("test")] == [f"variant1-{s}" for s in V.TEST_SEEDS]


def test_the_sampler_is_deterministic_and_stays_in_its_space():
    seen = set()
    for seed in range(1500):
        r = V.sample_ruleset(seed)
        assert r == V.sample_ruleset(seed)
        check_game_rules(r)  # the 2-player game solver covers every draw
        assert r.bust_penalty == 0 and not r.piggyback and r.exact_finish == "off" and r.komi == 0
        assert r.num_dice in (5, 6) and 2000 <= r.target <= 10000 and r.target % 500 == 0
        assert r.entry_threshold in (0, 300, 350, 500, 750, 1000) and r.min_bank in (0, 300, 350, 500)
        assert r.max_rolls in (0, 3, 4) and r.three_ones in (300, 1000)
        if r.num_dice == 5:
            assert r.straight == r.three_pairs == r.two_triplets == 0
        if not r.three_pairs:
            assert not r.four_plus_pair_is_three_pairs
        seen.add(r.hash)
    assert len(seen) > 1490  # the space is large: repeats are rare
    # every option of the space is drawn
    rs = [V.sample_ruleset(s) for s in range(400)]
    for field, values in (
        ("end", {"final_round", "one_more_roll", "immediate"}),
        ("tie", {"first_to_target", "shared"}),
        ("multiples", {"doubling", "flat", "none"}),
        ("hot_dice", {"optional", "mandatory"}),
        ("num_dice", {5, 6}),
        ("max_rolls", {0, 3, 4}),
    ):
        assert {getattr(r, field) for r in rs} == values, field


def test_train_and_test_are_disjoint_and_hold_out_the_presets():
    held = set(TEST_HASHES_V1) | {r.hash for r in PRESETS.values()}
    train = V.split("train", 1500)
    assert len(train) == 1500
    assert not held & {r.hash for r in train}
    # a training seed whose ruleset is a held-out one is skipped, not kept
    first = V.split("train", 3)
    assert [r.name for r in first] == ["variant1-0", "variant1-1", "variant1-2"]


def test_the_presets_split_is_what_the_solver_covers_in_minutes():
    names = [r.name for r in V.split("presets")]
    assert "classic" in names and "farkle_official" in names
    assert "zilch" not in names  # a bust penalty: an hour of value iteration
    for r in V.split("presets"):
        check_game_rules(r)


@pytest.mark.parametrize("k, p_first", [(2, 0.5494590139046314), (8, 0.5300020559765976)])
def test_a_held_out_ruleset_solves(k, p_first, tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    r = V.split("test")[k].replace(target=1500)  # the same rules to a smaller target: seconds
    sol = solve_game(r, with_fair_komi=False)
    assert sol.stats["residual"] <= 1e-9
    assert sol.p_first_win == pytest.approx(p_first, abs=1e-12)  # as solved when the space was made


def test_bad_input_is_named():
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="give an integer >= 0"):
            V.sample_ruleset(bad)
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        V.split("dev")


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_tenk_suite_list(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    assert main(["suite", "list"]) == 0
    out = _out(capsys)
    for h in TEST_HASHES_V1:
        assert h in out
    d = tmp_path / "train"
    assert main(["suite", "list", "--split", "train", "--count", "5", "--write", str(d)]) == 0
    files = sorted(p.name for p in d.iterdir())
    assert files == [f"variant1-{s}.yaml" for s in range(5)]
    assert load_ruleset(str(d / "variant1-3.yaml")).hash == V.sample_ruleset(3).hash
    assert main(["suite", "list", "--split", "test", "--count", "3"]) == 2
    assert "the test split is fixed" in _out(capsys)
    with pytest.raises(SystemExit) as e:  # argparse refuses it, naming the range
        main(["suite", "list", "--split", "train", "--count", "0"])
    assert e.value.code == 2
    assert "--count: 0: give from 1 to 10,000 training rulesets" in capsys.readouterr().err


@pytest.fixture
def small_split(monkeypatch):
    """Two held-out rulesets to a 500 target (seconds to solve) in place of a split; the
    run's one cache (conftest.py) keeps each solution and exact evaluation for the next test."""
    rs = [V.split("test")[k].replace(target=500, name=f"small{k}") for k in (1, 8)]
    monkeypatch.setattr(V, "split", lambda name, count=None, seed=0: rs)
    return rs


@pytest.mark.slow
def test_suite_evaluate_is_exact_for_a_bot(small_split, tmp_path):
    from tenk_env.evaluation.suite import evaluate_suite, result_path, write_result
    from tenk_env.policies.exact import exact_eval

    lines = []
    res = evaluate_suite("dicenow", "test", log=lines.append)
    want = [exact_eval(r, "dicenow", "optimal").p_a for r in small_split]
    # each ruleset's line gives the regret in percentage points, the unit named
    assert [line.split(", regret ")[1] for line in lines if ", regret " in line] == [
        f"{100 * (0.5 - w):.2f} pp/game" for w in want
    ]
    assert [s.win_rate for s in res.rulesets] == want
    assert [s.how for s in res.rulesets] == ["exact", "exact"]
    assert res.mean_regret == pytest.approx(0.5 - sum(want) / 2, abs=1e-15)
    assert res.mean_regret_ci == pytest.approx((res.mean_regret, res.mean_regret), abs=1e-15)
    assert res.mean_regret > 0  # dicenow is not optimal on these variants
    p = write_result(res, result_path(tmp_path, res))
    assert p.name == "dicenow-test-space1-exact.json"  # all exact: the games and seed play no part
    got = json.loads(p.read_text())
    assert got["space_version"] == 1 and got["agent"] == "dicenow" and got["rulesets"][1]["hash"] == small_split[1].hash


def test_suite_evaluate_by_regret_where_the_evaluator_cannot_follow(small_split):
    from tenk_env.evaluation.suite import evaluate_suite

    res = evaluate_suite("random", "test", games=60, log=lambda m: None)
    assert all(s.how == "regret over 60 games" for s in res.rulesets)
    assert all(s.ci[0] < s.win_rate < s.ci[1] for s in res.rulesets)
    lo, hi = res.mean_regret_ci
    half = [(s.ci[1] - s.ci[0]) / 2 for s in res.rulesets]
    assert hi - res.mean_regret == pytest.approx((half[0] ** 2 + half[1] ** 2) ** 0.5 / 2, rel=1e-9)
    assert res.mean_regret > 0.2  # random play gives away most games
    # what it gets wrong: each ruleset's regret split by kind of mistake, the kinds adding up to it
    from tenk_env.evaluation.analysis import KINDS
    from tenk_env.evaluation.suite import mistakes_by_kind

    for s in res.rulesets:
        assert set(s.by_kind) == set(KINDS) and all(v >= 0 for v in s.by_kind.values())
        total = sum(s.by_kind.values())
        # the kinds add up to the regret (which is cut at optimal's win rate, 0.5 here)
        assert total == pytest.approx(s.regret, abs=1e-12) if s.regret < 0.5 else total >= 0.5
    means = mistakes_by_kind(res)
    assert means == pytest.approx({k: sum(s.by_kind[k] for s in res.rulesets) / 2 for k in KINDS})
    # too few games for an interval on a ruleset: none for the mean either, and said so
    few = evaluate_suite("random", "test", games=20, log=lambda m: None)
    assert few.mean_regret_ci is None and "at least 30 deals" in few.rulesets[0].note


def test_suite_evaluate_refuses_an_agent_that_cannot_play_the_split(small_split, capsys):
    assert main(["suite", "evaluate", "zoo:classic_ppo_demo"]) == 2
    out = _out(capsys)
    assert "cannot play 2 of the 2 rulesets" in out and "small1" in out


@pytest.mark.slow
def test_suite_leaderboard_ranks_the_results(small_split, tmp_path, capsys):
    out = tmp_path / "suite"
    for bot in ("maxscore", "dicenow", "optimal"):  # by regret: optimal's is 0 exactly, and it takes seconds
        assert main(["suite", "evaluate", bot, "--regret", "--games", "60", "--out", str(out)]) == 0
    files = sorted(str(p) for p in out.iterdir())
    assert len(files) == 3
    capsys.readouterr()
    md = tmp_path / "lb.md"
    assert main(["suite", "leaderboard", *files, "--out", str(md)]) == 0
    rows = [r for r in md.read_text().splitlines() if r.startswith("| ") and r[2].isdigit()]
    assert [r.split("|")[2].strip() for r in rows][0] == "`optimal`"
    regrets = [float(r.split("|")[4].split()[0]) for r in rows]
    assert regrets == sorted(regrets) and regrets[0] == 0.0 and regrets[2] > 0
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["suite", "leaderboard", str(bad)]) == 2
    got = capsys.readouterr()
    assert "is not a result tenk suite evaluate wrote" in got.err  # the file's line, beside the data
    assert "no results to rank: every file given was left out" in got.out


def test_suite_evaluate_by_regret_on_request(small_split):
    from tenk_env.evaluation.suite import evaluate_suite

    exact = evaluate_suite("dicenow", "test", log=lambda m: None)
    res = evaluate_suite("dicenow", "test", games=200, exact=False, log=lambda m: None)
    assert [s.how for s in res.rulesets] == ["regret over 200 games"] * 2
    # the regret figure's interval holds the exact one
    for e, s in zip(exact.rulesets, res.rulesets):
        assert s.ci[0] <= e.win_rate <= s.ci[1]
