"""Matches and tournaments: Wilson intervals and Bradley-Terry ratings against known values,
the duplicate format's dice, reproducibility across workers, resuming, config errors."""

import dataclasses
import json
import math

import numpy as np
import pytest
from scipy.stats import norm

from tenk_env.cli.main import main
from tenk_env.evaluation.match import Chunk, deal_key, play_match, play_table, wilson
from tenk_env.evaluation.play import KeyedDice, play_game
from tenk_env.evaluation.tournament import (
    ELO,
    ConfigError,
    TournamentConfig,
    bradley_terry,
    load_config,
    run_tournament,
)
from tenk_env.policies.base import RandomAgent
from tenk_env.records import load_jsonl, replay


# --------------------------------------------------------------------------- Wilson
@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (50, 100, 0.40383, 0.59617),
        (0, 10, 0.0, 0.27753),
        (10, 10, 0.72247, 1.0),
        (75, 100, 0.65696, 0.82455),
        (1, 400, 0.000441, 0.014023),
    ],
)
def test_wilson_known_values(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=2e-5) and hi == pytest.approx(high, abs=2e-5)


def test_wilson_half_wins_use_the_same_formula_as_scipy():
    # A shared win counts half, which scipy's binomtest refuses; the closed form used then
    # must agree with scipy where both apply.
    for k, n in ((50, 100), (3, 40), (199, 200)):
        assert wilson(k + 1e-9, n) == pytest.approx(wilson(k, n), abs=1e-8)
    lo, hi = wilson(50.5, 100)
    assert wilson(50, 100)[0] < lo < wilson(51, 100)[0] and wilson(50, 100)[1] < hi < wilson(51, 100)[1]


# --------------------------------------------------------------------------- ratings
def test_bradley_terry_two_agents_known_values():
    # A beats B 75 times in 100: log-odds ln 3, split +-ln(3)/2 around the field mean; the
    # standard error of the log-odds is 1/sqrt(n p (1-p)), halved by the centring.
    r = bradley_terry([0], [1], [0.75], ["A", "B"], weights=[100])
    assert r[0].elo == pytest.approx(ELO * math.log(3) / 2, abs=1e-6) == pytest.approx(95.42, abs=0.01)
    assert r[1].elo == pytest.approx(-r[0].elo)
    se = ELO / math.sqrt(100 * 0.75 * 0.25) / 2
    assert r[0].se == pytest.approx(se, rel=1e-6)
    assert r[0].ci_low == pytest.approx(r[0].elo - 1.959964 * se, abs=1e-3)
    assert r[0].ci_high == pytest.approx(r[0].elo + 1.959964 * se, abs=1e-3)
    assert (r[0].comparisons, r[0].score) == (100, 0.75)


def test_bradley_terry_recovers_exact_strengths():
    # Counts that fit strengths 1 : 2 : 4 exactly (P(j beats i) = s_j / (s_i + s_j)), so the
    # maximum-likelihood ratings are 400 log10 of the strengths, centred.
    i = [0, 0, 1]
    j = [1, 2, 2]
    y = [1 / 3, 1 / 5, 1 / 3]  # share won by i
    w = [30, 50, 30]
    r = bradley_terry(i, j, y, ["weak", "mid", "strong"], weights=w)
    want = 400 * np.log10([1, 2, 4])
    want -= want.mean()
    assert [x.elo for x in r] == pytest.approx(list(want), abs=1e-6)
    assert want[2] - want[0] == pytest.approx(400 * math.log10(4))
    assert r[0].ci_high < r[1].ci_low or r[1].elo < r[2].elo  # ordered


def test_bradley_terry_one_row_per_game_matches_aggregated_counts():
    rows_i, rows_j, rows_y = [], [], []
    for a, b, wins, n in ((0, 1, 60, 100), (1, 2, 55, 100), (0, 2, 70, 100)):
        rows_i += [a] * n
        rows_j += [b] * n
        rows_y += [1.0] * wins + [0.0] * (n - wins)
    groups = np.arange(len(rows_y)) // 2  # deals of two games
    per_game = bradley_terry(rows_i, rows_j, rows_y, list("ABC"), groups=groups)
    agg = bradley_terry([0, 1, 0], [1, 2, 2], [0.6, 0.55, 0.7], list("ABC"), weights=[100, 100, 100])
    assert [x.elo for x in per_game] == pytest.approx([x.elo for x in agg], abs=1e-6)
    assert [x.elo for x in agg] == sorted([x.elo for x in agg], reverse=True)
    assert all(x.ci_low < x.elo < x.ci_high for x in per_game)


def test_bradley_terry_agent_without_a_win_is_unbounded_and_the_rest_still_rated():
    r = bradley_terry([0, 0, 1, 0], [1, 2, 2, 3], [0.75, 0.8, 0.6, 1.0], list("ABCZ"), weights=[40, 40, 40, 40])
    assert r[3].elo == -math.inf and r[3].score == 0.0
    without = bradley_terry([0, 0, 1], [1, 2, 2], [0.75, 0.8, 0.6], list("ABC"), weights=[40, 40, 40])
    assert [x.elo for x in r[:3]] == pytest.approx([x.elo for x in without])


def test_bradley_terry_warns_when_groups_never_met_on_equal_terms():
    # A and B beat each other, C and D beat each other, but A and B never lost to C or D.
    with pytest.warns(RuntimeWarning, match="unbounded"):
        bradley_terry([0, 2, 0, 1], [1, 3, 2, 3], [0.6, 0.6, 1.0, 1.0], list("ABCD"), weights=[20] * 4)


# --------------------------------------------------------------------------- matches
@pytest.mark.parametrize("backend", ["scalar", "batched"])
def test_match_counts_agree_with_games_played_one_by_one(backend):
    res = play_match("classic", "dicenow", "hold:300", games=40, seed=11, backend=backend)
    assert res.backend == backend
    wins = {"dicenow": 0, "hold:300": 0}
    margin = turns = first = 0
    for d in range(20):
        for seats in (["dicenow", "hold:300"], ["hold:300", "dicenow"]):
            g = play_game("classic", seats, KeyedDice(deal_key(11, d)), record=False)
            (w,) = g.winners
            wins[seats[w]] += 1
            first += w == 0
            a = seats.index("dicenow")
            margin += g.scores[a] - g.scores[1 - a]
            turns += g.turn
    assert (res.games, res.wins_a, res.wins_b, res.ties) == (40, wins["dicenow"], wins["hold:300"], 0)
    assert res.win_rate_a == wins["dicenow"] / 40
    assert (res.ci_low, res.ci_high) == wilson(wins["dicenow"], 40)
    assert res.mean_margin == pytest.approx(margin / 40)
    assert res.mean_turns == pytest.approx(turns / 40)
    assert res.first_seat_win_rate == pytest.approx(first / 40)
    assert 0 < res.bust_rate_a < 1 and 0 < res.bust_rate_b < 1
    assert 300 < res.points_per_turn_b < res.points_per_turn_a


def test_games_round_up_to_whole_deals_and_need_two():
    assert play_match("classic", "greedy", "hold:300", games=5, seed=0).games == 6
    with pytest.raises(ValueError, match="at least 2 games"):
        play_match("classic", "greedy", "hold:300", games=1, seed=0)


def test_match_is_the_same_for_any_number_of_workers():
    # 250 deals: three chunks, so two workers really split the work.
    one = play_match("classic", "greedy", "hold:300", games=500, seed=3, workers=1, backend="scalar")
    two = play_match("classic", "greedy", "hold:300", games=500, seed=3, workers=2, backend="scalar")
    assert one == two and one.games == 500
    assert play_match("classic", "greedy", "hold:300", games=500, seed=4) != one


def test_duplicate_format_deals_each_seat_the_same_dice_in_both_orders(tmp_path):
    play_match("classic", "dicenow", "greedy", games=4, seed=5, save_games=2, save_dir=tmp_path)
    seats = (tmp_path / "seats.txt").read_text().splitlines()
    assert seats == ["seating0: dicenow,greedy", "seating1: greedy,dicenow"]
    compared = 0
    for d in range(2):
        rolls = []
        for s in range(2):
            game = replay(load_jsonl(tmp_path / f"deal{d}_seating{s}.jsonl"))
            by = {}
            turn_of, n_turns = None, [0, 0]
            for e in game.events:
                if e["type"] == "turn":
                    turn_of = (e["player"], n_turns[e["player"]])
                    n_turns[e["player"]] += 1
                    i = 0
                elif e["type"] == "roll":
                    by[turn_of + (i,)] = e["dice"]
                    i += 1
            rolls.append(by)
        # Same seat, same turn, same roll number: the same dice whenever as many are rolled
        # (the agents differ, so after a different keep the counts differ).
        for key in rolls[0].keys() & rolls[1].keys():
            x, y = rolls[0][key], rolls[1][key]
            if len(x) == len(y):
                assert x == y, key
                compared += 1
            if key[2] == 0:
                assert len(x) == 6 and x == y
    assert compared > 30


def test_batched_and_scalar_engines_play_the_same_match(tmp_path):
    # Same deal keys, same dice, bots that decide the same: the same games, so the same
    # result to the last statistic, whichever engine played them.
    s = play_match("classic", "dicenow", "hold:300", games=1000, seed=21, backend="scalar")
    b = play_match("classic", "dicenow", "hold:300", games=1000, seed=21, backend="batched")
    assert (s.backend, b.backend) == ("scalar", "batched")
    assert dataclasses.replace(b, backend="scalar") == s
    assert play_match("classic", "dicenow", "hold:300", games=8, seed=0).backend == "batched"

    class Other(RandomAgent):  # a Policy the batched engine has no batched form of
        name = "other"

    assert play_match("classic", "dicenow", Other(), games=2, seed=0).backend == "scalar"
    # forced onto the batched engine, it is asked game by game, and plays the same games
    assert play_match("classic", "greedy", Other(), games=200, seed=0, backend="batched").backend == "batched"
    # game records come from the scalar engine, the rest from the batched one
    assert (
        play_match("classic", "greedy", "dicenow", games=400, seed=0, save_games=2, save_dir=tmp_path).backend
        == "batched+scalar"
    )


def test_batched_games_that_never_end_are_stopped_with_a_clear_error():
    from tenk_env.evaluation.match import chunk_tasks, play_deals_batched
    from tenk_env.evaluation.play import GameTooLongError
    from tenk_env.rules import load_ruleset

    rules = load_ruleset("classic")
    tasks = chunk_tasks("x", rules, [0, 1], 0, 3)
    with pytest.raises(GameTooLongError, match=r"not over after 50 turns.*hold:100000"):
        play_deals_batched(rules, ["hold:100000", "hold:100000"], tasks, max_turns=50)


def test_random_agents_are_reproducible_on_the_batched_engine():
    a = play_match("classic", "random", "greedy", games=600, seed=5)
    assert a.backend == "batched" and a == play_match("classic", "random", "greedy", games=600, seed=5)
    assert a != play_match("classic", "random", "greedy", games=600, seed=6)


def test_free_for_all_table_rotates_seats():
    r = play_table("classic", ["dicenow", "greedy", "hold:300"], games=30, seed=2)
    assert r.games == 30 and sum(r.wins) == pytest.approx(30)
    assert r.win_rate[0] > r.win_rate[2]


# --------------------------------------------------------------------------- tournaments
AGENTS = ["greedy", "hold:300", "dicenow"]


def test_interrupted_tournament_resumes_to_the_same_results(tmp_path):
    # random draws its own numbers on the batched engine: per table, so the resumed run,
    # which batches the missing chunks differently, still plays the same games
    cfg = dict(agents=AGENTS + ["random"], games=400, seed=9, name="t", workers=2)  # 2 chunks per pairing
    whole = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}))

    def stop(done, total):
        if done == 2:
            raise KeyboardInterrupt

    part = TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "b"), "workers": 1})
    with pytest.raises(KeyboardInterrupt):
        run_tournament(part, on_chunk=stop)
    assert len(list((tmp_path / "b/t/chunks").glob("*.json"))) == 2
    assert not (tmp_path / "b/t/results.json").exists()
    resumed = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "b")}))
    assert resumed.played_now == 2400 - 400 and whole.played_now == 2400
    for f in ("results.json", "results.csv", "ratings.csv"):
        assert (tmp_path / "a/t" / f).read_text() == (tmp_path / "b/t" / f).read_text()
    doc = json.loads((tmp_path / "a/t/results.json").read_text())
    assert doc["rules_hash"] == whole.rules.hash and doc["agents"] == AGENTS + ["random"]
    assert doc["seed"] == 9 and doc["engines"] == ["batched"] * 6
    assert doc["versions"]["tenk"] and len(doc["results"]) == 6
    # dicenow is the strongest of the three, and the heatmap and chart were written
    assert doc["ratings"][2]["elo"] > max(doc["ratings"][0]["elo"], doc["ratings"][1]["elo"])
    assert (tmp_path / "a/t/heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "a/t/ratings.png").stat().st_size > 1000
    # A pairing's row is the match API's result for the same deals.
    m = play_match("classic", "greedy", "dicenow", games=400, seed=9)
    row = doc["results"][1]
    assert (row["a"], row["b"], row["wins_a"], row["wins_b"]) == ("greedy", "dicenow", m.wins_a, m.wins_b)


def test_tables_without_batched_forms_go_to_the_scalar_engine_with_the_same_results(tmp_path):
    # optimal has no batched form: its tables are played on the scalar engine, the other
    # table on the batched one, and the results are those of an all-scalar run
    cfg = dict(
        agents=["greedy", "optimal", "maxscore"],
        rules={"base": "classic", "target": 750},
        games=300,
        seed=4,
        name="t",
        workers=1,
    )
    auto = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}))
    scalar = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "s"), "backend": "scalar"}))
    assert auto.engines == ["scalar", "batched", "scalar"] and scalar.engines == ["scalar"] * 3
    # the same games; each row says which engine played it
    assert [r.backend for r in auto.results] == auto.engines
    assert [dataclasses.replace(r, backend="scalar") for r in auto.results] == scalar.results
    assert [r.elo for r in auto.ratings] == [r.elo for r in scalar.ratings]
    assert json.loads((tmp_path / "a/t/results.json").read_text())["engines"] == auto.engines
    with pytest.raises(ConfigError, match="backend = 'gpu'.*auto, batched, scalar"):
        TournamentConfig.from_dict({**cfg, "backend": "gpu"}).validate()


def test_resume_refuses_a_different_tournament_under_the_same_name(tmp_path):
    cfg = dict(agents=AGENTS[:2], games=4, name="t", out=str(tmp_path))
    run_tournament(TournamentConfig.from_dict(cfg))
    with pytest.raises(ConfigError, match="seed differ.*--fresh"):
        run_tournament(TournamentConfig.from_dict({**cfg, "seed": 1}))
    assert run_tournament(TournamentConfig.from_dict({**cfg, "seed": 1}), fresh=True).played_now == 4
    # a tournament saved by an older version, on other deals
    m = tmp_path / "t/manifest.json"
    m.write_text(m.read_text().replace('"format": 2', '"format": 1'))
    with pytest.raises(ConfigError, match="format 1 .*format 2.*cannot be resumed.*--fresh"):
        run_tournament(TournamentConfig.from_dict({**cfg, "seed": 1}))
    # a ruleset file edited in place is keyed by its hash: the saved games are not served for it
    rules = tmp_path / "r.yaml"
    rules.write_text("base: classic\ntarget: 5000\n")
    ruled = {**cfg, "rules": str(rules), "name": "r"}
    run_tournament(TournamentConfig.from_dict(ruled))
    rules.write_text("base: classic\ntarget: 4000\n")
    with pytest.raises(ConfigError, match="different tournament \\(rules, rules_hash differ\\).*--fresh"):
        run_tournament(TournamentConfig.from_dict(ruled))


def test_cli_tournament_saves_replayable_games(tmp_path, capsys):
    assert (
        main(
            [
                "tournament",
                "greedy",
                "hold:300",
                "random",
                "--players",
                "3",
                "--games",
                "6",
                "--name",
                "ffa",
                "--out",
                str(tmp_path),
                "--save-games",
                "3",
                "--no-progress",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Bradley-Terry" in out and "first mover wins" in out
    records = sorted((tmp_path / "ffa/games").glob("*/*.jsonl"))
    assert len(records) == 3
    assert main(["replay", str(records[0])]) == 0
    assert "game over" in capsys.readouterr().out


def test_free_for_all_win_shares_pool_every_table_with_intervals_clustered_by_deal(tmp_path, capsys):
    agents = ["greedy", "hold:300", "dicenow", "breakeven"]
    res = run_tournament(
        TournamentConfig.from_dict(
            dict(agents=agents, games=30, seed=4, players=3, name="w", workers=1, out=str(tmp_path))
        )
    )
    assert res.tables == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    # dicenow won 19 + 15 + 14 of its three tables' 30 games each
    assert [r.wins[r.agents.index("dicenow")] for r in res.results if "dicenow" in r.agents] == [19, 15, 14]
    for a, w in zip(agents, res.win_share):
        wins = sum(r.wins[r.agents.index(a)] for r in res.results if a in r.agents)
        assert (w.agent, w.games, w.share) == (a, 90, wins / 90)
    assert sum(w.share * w.games for w in res.win_share) == pytest.approx(120)  # one win a game
    # The interval by hand: a deal's games at every table form one cluster,
    # var = G / (G - 1) * sum_d (sum of y - p over deal d)^2 / N^2.
    ys, deals = [], []
    for t, table in enumerate(res.tables):
        if 2 in table:
            saved = json.loads(next((tmp_path / "w/chunks").glob(f"t{t:03d}-*.json")).read_text())
            c = Chunk.from_json(saved["chunk"])
            ys.append(c.win[:, table.index(2)])
            deals.append(np.arange(len(c.turns)) // 3 + c.start)
    y, d = np.concatenate(ys), np.concatenate(deals)
    e = np.bincount(d, y - y.mean())
    half = norm.ppf(0.975) * math.sqrt(10 / 9 * np.sum(e**2) / len(y) ** 2)
    w = res.win_share[2]
    assert (w.ci_low, w.ci_high) == (pytest.approx(w.share - half, abs=1e-12), pytest.approx(w.share + half, abs=1e-12))
    doc = json.loads((tmp_path / "w/results.json").read_text())
    assert doc["win_share"][2] == {
        "agent": "dicenow",
        "share": 48 / 90,
        "ci_low": w.ci_low,
        "ci_high": w.ci_high,
        "games": 90,
    }
    # tenk tournament shows it beside the ratings (resumed: nothing is replayed)
    assert (
        main(
            [
                "tournament",
                *agents,
                "--players",
                "3",
                "--games",
                "30",
                "--seed",
                "4",
                "--name",
                "w",
                "--out",
                str(tmp_path),
                "--no-progress",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "win share" in out and "53.3% [41.3%, 65.4%]" in out


def test_config_file_and_overrides(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text("agents: [greedy, 'hold:300']\ngames: 10\nrules: zilch\n")
    cfg = load_config(p, games=20, seed=None)
    assert (cfg.agents, cfg.games, cfg.seed) == (["greedy", "hold:300"], 20, 0)
    assert cfg.validate().name == "zilch"
    shipped = load_config("configs/tournament.yaml", agents=["greedy", "dicenow"])  # skip the solvers' setup
    assert (shipped.validate().name, shipped.players) == ("classic", 2)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"agents": AGENTS, "gmaes": 10}, "unknown key 'gmaes' \\(did you mean 'games'\\?\\)"),
        ({"games": 10}, "'agents' is missing"),
        ({"agents": ["greedy", "dicenwo"]}, "agent 'dicenwo'.*did you mean 'dicenow'"),
        ({"agents": ["greedy", "hold:lots"]}, "agent 'hold:lots'"),
        ({"agents": ["greedy", "human"]}, "'human' plays at a terminal"),
        ({"agents": ["greedy", "greedy"]}, "listed twice"),
        ({"agents": ["greedy"]}, "at least 2 agents"),
        ({"agents": AGENTS, "rules": "clasic"}, "rules: .*clasic"),
        ({"agents": AGENTS, "games": 1}, "games = 1: give a whole number of at least 4 .*two deals"),
        ({"agents": AGENTS, "games": 5, "players": 3}, "games = 5: give a whole number of at least 6"),
        ({"agents": AGENTS, "players": 9}, "players = 9"),
        ({"agents": AGENTS, "name": "a/b"}, "name = 'a/b'"),
    ],
)
def test_config_errors_name_the_problem(data, message):
    with pytest.raises(ConfigError, match=message):
        TournamentConfig.from_dict(data).validate()


def test_cli_config_errors_exit_2(tmp_path, capsys):
    assert main(["tournament", "greedy"]) == 2
    assert "at least two agent specs" in capsys.readouterr().out
    assert main(["tournament", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert main(["tournament", "greedy", "dicenow", "--games", "1", "--out", str(tmp_path)]) == 2
    assert "games = 1" in capsys.readouterr().out


def test_config_file_errors_name_the_file_and_the_fix(tmp_path):
    from tenk_env.evaluation.tournament import ConfigError, load_config

    with pytest.raises(
        ConfigError, match=r"tournament config file '.*nope.yaml' does not exist; see configs/tournament.yaml"
    ):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents: [dicenow\n")
    with pytest.raises(ConfigError, match="is not valid YAML"):
        load_config(bad)
    bad.write_text("- dicenow\n")
    with pytest.raises(ConfigError, match="expected a mapping of tournament config fields, got list"):
        load_config(bad)


# --------------------------------------------------------------------------- faults
def _ppo_checkpoint(path, seed):
    """An untrained PPO checkpoint (a tiny MLP): which one depends on ``seed``."""
    from sb3_contrib import MaskablePPO

    from tenk_env.policies.ppo import checkpoint_meta, write_checkpoint
    from tenk_env.rules import load_ruleset
    from tenk_env.vector.sb3 import sb3_vec_env

    rules = load_ruleset("classic")
    venv = sb3_vec_env(2, rules, 2, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=seed, policy_kwargs={"net_arch": [8]}, device="cpu")
    return write_checkpoint(model, path, checkpoint_meta(rules, 2, activation="tanh", n_actions=venv.action_space.n))


def test_a_replaced_checkpoint_is_named_and_its_tables_replayed(tmp_path, capsys):
    # chunks were keyed by the spec text `ppo:PATH`, so a new checkpoint at the
    # same path was served the old one's games ("all games were already played").
    from tenk_env.io import file_sha256

    ck = tmp_path / "p.zip"
    _ppo_checkpoint(ck, 0)
    old = file_sha256(ck)
    spec = f"ppo:{ck}"
    cfg = dict(agents=[spec, "greedy", "dicenow"], games=40, seed=3, name="t", workers=1)
    run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}))
    keep = (tmp_path / "a/t/chunks/t002-d0000000.json").read_text()  # greedy vs dicenow
    _ppo_checkpoint(ck, 1)
    new = file_sha256(ck)
    assert new != old
    notes = []
    res = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}), log=notes.append)
    # the stale agent is named with both hashes; its two tables are replayed, the third reused
    assert res.played_now == 80
    assert [n for n in notes if f"agent {spec!r} changed" in n and old in n and new in n and "2 tables" in n]
    assert (tmp_path / "a/t/chunks/t002-d0000000.json").read_text() == keep
    # the results are those of a fresh run with the new checkpoint, which they name
    fresh = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "b")}))
    doc, want = (json.loads((tmp_path / d / "t/results.json").read_text()) for d in ("a", "b"))
    assert doc["results"] == want["results"] and doc["ratings"] == want["ratings"]
    assert res.results == fresh.results and doc["agent_sha256"] == {spec: new}
    assert [r["a_sha256"] for r in doc["results"]] == [new, new, None]
    rows = (tmp_path / "a/t/results.csv").read_text().splitlines()
    assert rows[0].split(",")[:4] == ["a", "b", "a_sha256", "b_sha256"]
    assert rows[1].split(",")[:4] == [spec, "greedy", new, ""]
    manifest = json.loads((tmp_path / "a/t/manifest.json").read_text())
    assert manifest["agent_sha256"] == [new, None, None]
    assert json.loads(keep)["agent_sha256"] == [None, None]
    # the command prints which checkpoint played
    assert (
        main(
            [
                "tournament",
                spec,
                "greedy",
                "dicenow",
                "--games",
                "40",
                "--seed",
                "3",
                "--name",
                "t",
                "--out",
                str(tmp_path / "a"),
                "--no-progress",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "all games were already played" in out and f"{spec}: sha256 {new}" in out

    # a checkpoint replaced while the tournament plays is refused, not recorded as played by either
    def swap(done, total):
        if done == 1:
            _ppo_checkpoint(ck, 2)

    with pytest.raises(ConfigError, match=rf"agent 'ppo:.*p.zip' changed while the tournament was playing.*{new}"):
        run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "c")}), on_chunk=swap)
    assert not (tmp_path / "c/t/results.json").exists()


def test_a_second_run_of_the_same_tournament_is_refused_while_the_first_runs(tmp_path, capsys):
    # two runs of one tournament both played and wrote the same chunks.
    import os

    argv = ["tournament", "greedy", "dicenow", "--games", "400", "--name", "t", "--out", str(tmp_path), "--no-progress"]
    codes = []

    def second(done, total):
        if done == 1:
            codes.append(main(argv))

    run_tournament(
        TournamentConfig.from_dict(dict(agents=["greedy", "dicenow"], games=400, name="t", out=str(tmp_path))),
        on_chunk=second,
    )
    out = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert codes == [2]
    assert f"error: tournament directory '{tmp_path / 't'}' is in use by process {os.getpid()}" in out
    assert "one writer per directory" in out
    assert main(argv) == 0 and "all games were already played" in capsys.readouterr().out  # released


def test_results_record_the_engine_that_played_each_table(tmp_path):
    # results.csv/json said `scalar` for tables the batched engine played.
    cfg = dict(agents=AGENTS, games=400, seed=2, name="t", workers=1)

    def stop(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}), on_chunk=stop)
    res = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "a")}))  # resumed
    # game records come from the scalar engine: the first chunk, the second is batched
    rec = run_tournament(
        TournamentConfig.from_dict({**cfg, "agents": AGENTS[:2], "out": str(tmp_path / "r"), "save_games": 2})
    )
    for r, d, want in ((res, "a", ["batched"] * 3), (rec, "r", ["batched+scalar"])):
        assert r.engines == want and [x.backend for x in r.results] == want
        doc = json.loads((tmp_path / d / "t/results.json").read_text())
        assert doc["engines"] == want and [x["backend"] for x in doc["results"]] == want
        rows = (tmp_path / d / "t/results.csv").read_text().splitlines()
        col = rows[0].split(",").index("backend")
        assert [row.split(",")[col] for row in rows[1:]] == want
    # a free-for-all's rows say it too
    ffa = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "f"), "players": 3, "games": 6}))
    doc = json.loads((tmp_path / "f/t/results.json").read_text())
    assert ffa.engines == ["batched"] and [x["backend"] for x in doc["results"]] == ["batched"] * 3


def test_damaged_chunks_are_named_and_replayed_and_a_damaged_manifest_named(tmp_path, capsys):
    # a damaged chunk or manifest gave `error: Expecting value: line 1 column 1
    # (char 0)` without naming the file; a chunk is a cache, so a damaged one is replayed.
    from tenk_env.io import StateFileError

    cfg = TournamentConfig.from_dict(dict(agents=AGENTS, games=400, seed=1, name="t", out=str(tmp_path), workers=1))
    run_tournament(cfg)
    want = json.loads((tmp_path / "t/results.json").read_text())
    chunks = sorted((tmp_path / "t/chunks").glob("t*-d*.json"))
    assert len(chunks) == 6
    chunks[0].write_text("")  # a disk that filled up
    chunks[1].write_text("[1, 2]")  # not a mapping
    d = json.loads(chunks[2].read_text())
    del d["chunk"]["scores"]
    chunks[2].write_text(json.dumps(d))  # a missing key
    d = json.loads(chunks[3].read_text())
    d["chunk"]["win"] = d["chunk"]["win"][:-1]
    chunks[3].write_text(json.dumps(d))  # a game short
    notes = []
    res = run_tournament(cfg, log=notes.append)
    assert res.played_now == 4 * 200
    assert len(notes) == 4
    for path, why in zip(chunks, ("not valid JSON", "expected a JSON dict, found list", "no 'scores'", "win")):
        (note,) = [n for n in notes if str(path) in n]
        assert "damaged" in note and why in note and note.endswith("replaying it")
    got = json.loads((tmp_path / "t/results.json").read_text())
    assert got["results"] == want["results"] and got["ratings"] == want["ratings"]
    # a damaged manifest is named, with the fix; deleting it rebuilds it and keeps the games
    manifest = tmp_path / "t/manifest.json"
    manifest.write_text("{")
    with pytest.raises(
        StateFileError,
        match=r"tournament manifest '.*manifest.json' is damaged \(not valid JSON.*"
        r"delete it.*rebuild.*--fresh",
    ):
        run_tournament(cfg)
    assert (
        main(
            [
                "tournament",
                *AGENTS,
                "--games",
                "400",
                "--seed",
                "1",
                "--name",
                "t",
                "--out",
                str(tmp_path),
                "--no-progress",
            ]
        )
        == 2
    )
    assert f"error: tournament manifest '{manifest}' is damaged" in " ".join(capsys.readouterr().out.split())
    manifest.unlink()
    assert run_tournament(cfg).played_now == 0
    assert json.loads(manifest.read_text())["agents"] == AGENTS


def test_huge_game_counts_and_negative_seeds_are_refused_before_any_work(tmp_path, capsys, monkeypatch):
    # a billion games allocated gigabytes of tasks before playing anything.
    import tenk_env.evaluation.match
    import tenk_env.evaluation.tournament

    def no_work(*a, **k):
        raise AssertionError("work started")

    monkeypatch.setattr(tenk_env.evaluation.tournament, "chunk_tasks", no_work)
    monkeypatch.setattr(tenk_env.evaluation.match, "chunk_tasks", no_work)
    with pytest.raises(
        ConfigError,
        match=r"games = 10000000: 3 tables of 10,000,000 games would need about "
        r"\d+ GB of memory.*give at most [\d,]+ games per table",
    ):
        run_tournament(TournamentConfig.from_dict(dict(agents=AGENTS, games=10**7, out=str(tmp_path))))
    with pytest.raises(
        ValueError,
        match=r"games = 100,000,000: a match keeps a row of results per game in memory "
        r"\(176 bytes each\), so it would need 17.6 GB; give at most",
    ):
        play_match("classic", "greedy", "dicenow", 10**8, seed=0)
    with pytest.raises(ValueError, match="seed = -1: give a whole number at least 0"):
        play_match("classic", "greedy", "dicenow", 10, seed=-1)
    assert (
        main(["tournament", "greedy", "dicenow", "--games", "1000000000", "--out", str(tmp_path), "--no-progress"]) == 2
    )
    assert "games = 1000000000" in capsys.readouterr().out
    assert main(["tournament", "greedy", "dicenow", "--seed", "-1", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "error: command line: seed = -1: give a whole number at least 0" in capsys.readouterr().out
    assert not any(tmp_path.iterdir())
