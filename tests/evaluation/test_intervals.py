"""The regret analysis' intervals at any sample size, and its counts checked before any work
(`tenk analyze`, `tenk evaluate`).

An interval is given only from enough deals (and, for regret, enough deals with a mistake),
never below zero regret nor above optimal's own win rate; otherwise it is (nan, nan) with the
reason, printed where the interval would be and written as null in report.json.
"""

from __future__ import annotations

import io
import json
import math
import sys

import numpy as np
import pytest

import tenk_env.evaluation.analysis as A
import tenk_env.policies.optimal
from tenk_env.cli.main import main
from tenk_env.evaluation.analysis import MIN_DEALS, NO_INTERVAL, analyse, max_games, write_outputs
from tenk_env.evaluation.match import wilson
from tenk_env.policies.optimal import game_solution
from tenk_env.rules import PRESETS
from tenk_env.solve import solve_game

IMM = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")


@pytest.fixture(scope="module", autouse=True)
def _solved():
    # the optimal agent's in-process solution, without the fair komi (seconds we need not spend)
    mp = pytest.MonkeyPatch()
    mp.setitem(tenk_env.policies.optimal._GAME, IMM.hash, solve_game(IMM, with_fair_komi=False))
    yield
    mp.undo()


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory):
    """An untrained PPO checkpoint on IMM: a trained agent for `tenk evaluate`, in a second."""
    from sb3_contrib import MaskablePPO

    from tenk_env.policies.ppo import checkpoint_meta, write_checkpoint
    from tenk_env.vector.sb3 import sb3_vec_env

    venv = sb3_vec_env(2, IMM, 2, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    return write_checkpoint(
        model,
        tmp_path_factory.mktemp("ckpt") / "tiny.zip",
        checkpoint_meta(IMM, 2, activation="tanh", n_actions=venv.action_space.n),
    )


def _no_work(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("work started")

    from tenk_env.training import trainer

    monkeypatch.setattr(A, "_run", fail)
    monkeypatch.setattr(trainer, "evaluate_agent", fail)


# ---------------------------------------------------------------------------- the intervals
def test_a_handful_of_deals_gives_no_interval():
    # 3 deals: the t-interval had width 0 when they held no mistake, and went below 0 regret
    r = analyse("hold:300", IMM, 6, seed=0, top=0).report
    assert r.regret_per_game > 0
    assert r.regret_ci is NO_INTERVAL and r.implied_ci is NO_INTERVAL and r.empirical_ci is NO_INTERVAL
    assert r.implied_seat_ci == [NO_INTERVAL, NO_INTERVAL]
    # a seat's games are independent: Wilson's interval holds at any count
    assert r.empirical_seat_ci == [wilson(3 * r.empirical_seat[q], 3) for q in (0, 1)]
    assert r.interval_notes == {
        k: "interval needs at least 30 deals, have 3" for k in ("regret", "regret seat 1", "regret seat 2", "empirical")
    }
    assert r.width_ratio is None
    assert r.ci_text(r.regret_ci, "regret") == "(interval needs at least 30 deals, have 3)"
    assert "pp/game (interval needs at least 30 deals, have 3); implied win rate" in str(r)


def test_no_mistake_gives_no_interval():
    # every deal mistake-free says nothing of the mistakes not seen: no zero-width interval
    r = analyse("optimal", IMM, 2 * MIN_DEALS, seed=0, top=0).report
    assert r.regret_per_game == 0.0 and r.regret_ci is NO_INTERVAL and r.implied_ci is NO_INTERVAL
    assert r.interval_notes["regret"] == "interval needs at least 10 deals with a mistake, have 0 of 30"
    # optimal against itself splits every deal 1-1: no spread, but no interval either
    assert r.empirical_win_rate == 0.5 and r.empirical_ci is NO_INTERVAL
    assert r.interval_notes["empirical"] == "interval needs at least 10 deals not split 1-1, have 0 of 30"


def test_enough_deals_give_the_t_interval():
    r = analyse("hold:300", IMM, 2 * MIN_DEALS, seed=0, top=0).report
    assert r.interval_notes == {}
    lo, hi = r.regret_ci
    assert 0 < lo < r.regret_per_game < hi
    b = sum(r.optimal_seat) / 2
    assert r.implied_ci == (b - hi, b - lo)


def _synthetic_report(deal_regret: list[float]):
    """The report of games whose per-game regrets are given (seat 0 game of each deal: the
    regret, seat 1: 0), against IMM's solution."""
    n = len(deal_regret)
    regret = np.zeros(2 * n)
    regret[0::2] = deal_regret
    seat = np.tile(np.array([0, 1], np.int8), n)
    win = np.tile(np.array([1.0, 0.0]), n)
    dec = {"regret": np.zeros(0), "end": np.zeros(0, bool), "best_end": np.zeros(0, bool)}
    return A._report("x", IMM, game_solution(IMM), 0, dec, seat, regret, win, 0.0, 1)


def test_interval_never_goes_below_zero_regret():
    # one costly mistake among small ones: mean - t * se < 0, but regret is never negative
    r = _synthetic_report([1.0] + [1e-6] * 10 + [0.0] * 19)
    assert r.regret_ci[0] == 0.0 and r.regret_ci[1] > 0
    b = sum(r.optimal_seat) / 2
    assert r.implied_ci[1] == b
    assert r.implied_seat_ci[0][1] == r.optimal_seat[0]


def test_interval_never_goes_above_optimals_win_rate():
    # the mean regret is optimal's win rate less the agent's: at most optimal's win rate
    r = _synthetic_report([3.0] * 10 + [0.0] * 20)
    b = sum(r.optimal_seat) / 2
    assert r.regret_ci[1] == b and r.implied_ci[0] == 0.0
    # the estimate too: a few unlucky games average 0.67 a game here, past optimal's 0.5; the
    # report says 0.5 (an implied win rate of 0), not a win rate below 0 outside its interval
    r = _synthetic_report([4.0] * 10 + [0.0] * 20)
    assert r.regret_per_game == b and r.implied_win_rate == 0.0
    assert r.regret_seat == [r.optimal_seat[0], 0.0] and r.implied_seat == [0.0, r.optimal_seat[1]]


def test_report_json_writes_null_for_no_interval(tmp_path):
    a = analyse("hold:300", IMM, 6, seed=0, top=1)
    rep = json.loads(write_outputs(a, tmp_path / "out")["report.json"].read_text())
    assert rep["regret_ci"] == [None, None] and rep["implied_ci"] == [None, None]
    assert rep["interval_notes"]["regret"] == "interval needs at least 30 deals, have 3"


def test_analyze_prints_why_no_interval(tmp_path, capsys):
    assert (
        main(
            [
                "analyze",
                "hold:300",
                "--rules",
                str(_imm_yaml(tmp_path)),
                "--games",
                "6",
                "--top",
                "0",
                "--workers",
                "1",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "n/a (regret, regret seat 1, regret seat 2, empirical): interval needs at least 30 deals, have 3" in out
    assert "(n/a)" in out and "0.00]" not in out


def _imm_yaml(tmp_path):
    y = tmp_path / "imm.yaml"
    y.write_text("base: classic\nname: imm1000\ntarget: 1000\nend: immediate\n")
    return y


def test_evaluate_prints_no_interval_from_three_deals(tiny_ckpt, capsys):
    assert (
        main(
            [
                "evaluate",
                str(tiny_ckpt),
                "--games",
                "2",
                "--opponents",
                "random",
                "--workers",
                "1",
                "--regret-games",
                "6",
            ]
        )
        == 0
    )
    out = " ".join(capsys.readouterr().out.split())
    assert ("pp/game (interval needs at least 30 deals, have 3); implied win rate vs optimal") in out
    assert "%, [" not in out and "[50.00, 50.00]" not in out


# ---------------------------------------------------------------------------- counts
@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--regret-games", "-3"],
            "--regret-games -3: negative; give a number of games to analyse, or 0 to skip the regret",
        ),
        (["--games", "-3"], "--games -3: give at least 2 games per opponent (one deal played in both seat orders)"),
        (["--games", "0"], "--games 0: give at least 2 games per opponent (one deal played in both seat orders)"),
        (["--workers", "-1"], "--workers -1: negative; give a number of processes (0: the default)"),
        (["--players", "-2"], "--players -2: negative; give a number of players (0: the checkpoint's)"),
        (
            ["--regret-games", "1"],
            "--regret-games 1: the analysis needs at least 2 games (one deal played in both seats)",
        ),
        (
            ["--regret-games", "1000000000000"],
            "--regret-games 1,000,000,000,000: the analysis keeps about 132 bytes per "
            "decision of the agent in memory, up to about 20 decisions a game under "
            "'imm1000': ~2,690,000 GB for this many games; give at most 1,596,642 "
            "games (a 4 GiB budget)",
        ),
        (
            ["--games", "1000000000000"],
            "--games 1,000,000,000,000: a match keeps a row of results per game in memory "
            "(176 bytes each), so it would need 176,000.0 GB; give at most 24,403,222 games "
            "(a 4 GiB budget)",
        ),
        (["--csv", "/proc/self/eval.csv"], "--csv '/proc/self/eval.csv' is under /proc"),
    ],
)
def test_evaluate_refuses_bad_counts_before_any_work(tiny_ckpt, argv, message, monkeypatch, capsys):
    _no_work(monkeypatch)
    assert main(["evaluate", str(tiny_ckpt), "--opponents", "random", *argv]) == 2
    assert f"error: {message}" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--games", "-3"], "--games -3: the analysis needs at least 2 games (one deal played in both seats)"),
        # (not 1e12 games: code without the bound would fill the memory making the tasks)
        (
            ["--games", "2000000"],
            "--games 2,000,000: the analysis keeps about 132 bytes per decision of the agent in "
            "memory, up to about 20 decisions a game under 'imm1000': ~5.4 GB for this many games; "
            "give at most 1,596,642 games (a 4 GiB budget)",
        ),
        (["--top", "-1"], "--top -1: give how many of the costliest mistakes to keep (>= 0)"),
        (["--show", "-1"], "--show -1: give how many of the kept mistakes to print (>= 0)"),
        (["--workers", "-2"], "--workers -2: give a number of processes >= 1 (0: the default)"),
    ],
)
def test_analyze_refuses_bad_counts_before_any_work(argv, message, tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    out = tmp_path / "out"
    assert main(["analyze", "dicenow", "--rules", str(_imm_yaml(tmp_path)), "--out", str(out), *argv]) == 2
    assert f"error: {message}" in " ".join(capsys.readouterr().out.split())
    assert not out.exists()


def test_the_bound_scales_with_the_target():
    assert max_games(IMM) == 1_596_642
    classic = PRESETS["classic"]
    assert max_games(classic) == 2 * (A.MEMORY_BUDGET // (100 * A.DECISION_BYTES + A.GAME_BYTES) // 2) == 324_148
    assert A.DECISION_BYTES == 2 * 66
    with pytest.raises(ValueError, match=r"^games = 324150: .* give at most 324,148 games"):
        A.check_games(324_150, classic)


def test_analyze_human_without_a_terminal(tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert (
        main(["analyze", "human", "--rules", str(_imm_yaml(tmp_path)), "--games", "4", "--out", str(tmp_path / "o")])
        == 2
    )
    assert (
        "error: agent 'human' plays at a terminal, and standard input is not one; run the analysis of 'human' "
        "in a terminal, or analyse a bot"
    ) in " ".join(capsys.readouterr().out.split())


# ---------------------------------------------------------------------------- long one-off work
def test_a_solve_is_announced_first(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tenk_env.policies.optimal, "_GAME", {})
    rules = PRESETS["classic"].replace(target=300, end="immediate", name="i300")
    said = []
    analyse("dicenow", rules, 2, top=0, say=said.append)
    assert said == [
        f"solving the game for 'i300' (seconds at a small target, a few minutes for classic; once: "
        f"cached in {tmp_path / 'cache'})"
    ]
    analyse("dicenow", rules, 2, top=0, say=said.append)  # in memory now
    monkeypatch.setattr(tenk_env.policies.optimal, "_GAME", {})
    analyse("dicenow", rules, 2, top=0, say=said.append)  # on disk
    assert len(said) == 1
    assert math.isnan(analyse("dicenow", rules, 2, top=0).report.regret_ci[0])


def test_a_missing_interval_prints_its_reason_not_nan():
    import math

    from tenk_env.evaluation.analysis import interval_text
    from tenk_env.evaluation.benchmark import Strength, _strength

    assert interval_text((0.01, 0.02)) == "[0.0100, 0.0200]"
    assert (
        interval_text((math.nan, math.nan), note="interval needs at least 30 deals, have 3")
        == "(interval needs at least 30 deals, have 3)"
    )
    s = Strength(0.49, math.nan, math.nan, "regret over 6 games", "interval needs at least 30 deals, have 3")
    assert _strength(s) == "49.00% (interval needs at least 30 deals, have 3) (regret over 6 games)"
    assert (
        _strength(Strength(0.49, 0.48, 0.5, "regret over 6,000 games"))
        == "49.00% [48.00%, 50.00%] (regret over 6,000 games)"
    )
