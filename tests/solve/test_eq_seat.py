"""One bot seated beside the symmetric equilibrium, exactly (tenk_env.solve.eq_seat).

At 2 players the equilibrium is the game solution, so the figures must be the 2-player
evaluator's against ``optimal``; at 3 and 4 players they are held to the brute-force reference in
tests/support/reference_multi.py, which asks the agent ``equilibrium`` for every move over the rules
engine alone, and to seat-rotated matches.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_equilibrium import THREE, TWO

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_table
from tenk_env.policies.exact import exact_eval, exact_eval_beside_equilibrium
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError

from support.reference_multi import reference_eval


@pytest.mark.slow
@pytest.mark.parametrize("game", list(TWO))
def test_two_players_is_the_2_player_evaluator_against_optimal(game):
    rules = TWO[game]
    for bot in ("dicenow", "maxscore"):
        e = exact_eval_beside_equilibrium(rules, bot, 2, cache=False)
        ref = exact_eval(rules, bot, "optimal", cache=False)
        assert e.p_seat == pytest.approx([ref.p_a_first, ref.p_a_second], abs=1e-9), (game, bot)


def test_three_players_match_the_brute_force_reference():
    # an immediate end: the reference asks the agent for every move of every turn, which a
    # final round (a turn for every bar) makes too slow; the matches below cover that
    rules = THREE["immediate"]
    e = exact_eval_beside_equilibrium(rules, "dicenow", 3, cache=False)
    P = reference_eval(rules, ["dicenow", "equilibrium", "equilibrium"], share_turns=False)
    ref = [P[(3 - j) % 3, 0] for j in range(3)]  # seat j: j players move before it
    assert np.abs(e.p_seat - ref).max() < 1e-12, (e.p_seat, ref)
    # against equilibrium play the bot takes less than an equilibrium player's third
    assert e.p < e.fair


@pytest.mark.slow
def test_four_players_match_the_brute_force_reference():
    rules = THREE["immediate"]
    e = exact_eval_beside_equilibrium(rules, "dicenow", 4, cache=False)
    P = reference_eval(rules, ["dicenow"] + ["equilibrium"] * 3, share_turns=False)
    ref = [P[(4 - j) % 4, 0] for j in range(4)]
    assert np.abs(e.p_seat - ref).max() < 1e-12, (e.p_seat, ref)
    assert e.p < e.fair


@pytest.mark.slow
def test_three_players_agree_with_seat_rotated_matches():
    rules = THREE["final_round"]
    e = exact_eval_beside_equilibrium(rules, "maxscore", 3)
    m = play_table(rules, ["maxscore", "equilibrium", "equilibrium"], 1_200, seed=7)
    half = 1.5 * (m.ci_high[0] - m.ci_low[0]) / 2  # a 99.7% interval: not a coin toss
    assert abs(m.win_rate[0] - e.p) < half, (e.p, m.win_rate[0], half)
    assert e.p < 1 / 3 - 0.03  # and the bot gives away more than the interval's width


def test_results_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    a = exact_eval_beside_equilibrium(THREE["immediate"], "dicenow", 3)
    b = exact_eval_beside_equilibrium(THREE["immediate"], "dicenow", 3)
    assert not a.stats["cached"] and b.stats["cached"]
    assert np.array_equal(a.p_seat, b.p_seat)
    assert exact_eval_beside_equilibrium(THREE["immediate"], "maxscore", 3, cached_only=True) is None


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.replace("│", " ").replace("┃", " ").split())


def test_tenk_solve_eval_seats_a_bot_beside_the_equilibrium(tmp_path, capsys):
    rules = tmp_path / "small.yaml"
    rules.write_text("base: classic\nend: immediate\nmax_rolls: 2\n")
    e = exact_eval_beside_equilibrium(THREE["immediate"], "dicenow", 3)
    # wherever the bot is listed, its figures are by its own seat
    for agents in (["dicenow", "equilibrium", "equilibrium"], ["equilibrium", "dicenow", "equilibrium"]):
        assert main(["solve", "eval", str(rules), *agents, "--target", "500"]) == 0
        out = _out(capsys)
        assert f"dicenow {e.p_seat[0]:.6f} {e.p_seat[1]:.6f} {e.p_seat[2]:.6f} {e.p:.6f}" in out
        assert f"dicenow gives away {100 * (1 / 3 - e.p):.2f} points against equilibrium play" in out


def test_tenk_ffa_shows_each_bots_exact_share_beside_the_equilibrium(tmp_path, capsys):
    rules = tmp_path / "small.yaml"
    rules.write_text("base: classic\ntarget: 500\nend: immediate\nmax_rolls: 2\n")
    e = exact_eval_beside_equilibrium(THREE["immediate"], "dicenow", 3)
    assert (
        main(
            [
                "ffa",
                "dicenow",
                "--rules",
                str(rules),
                "--opponents",
                "equilibrium",
                "equilibrium",
                "--games",
                "300",
                "--baselines",
                "maxscore",
                "--exact",
            ]
        )
        == 0
    )
    out = _out(capsys)
    assert "an equilibrium player in this seat takes 1/3 = 33.33%" in out
    assert f"{e.p:.2%} {100 * (1 / 3 - e.p):.2f} points (exact)" in out
    m = exact_eval_beside_equilibrium(THREE["immediate"], "maxscore", 3, cached_only=True)
    assert m is not None and f"{m.p:.2%} {100 * (1 / 3 - m.p):.2f} points (exact)" in out


@pytest.mark.parametrize(
    "agents, needle",
    [
        (["dicenow", "maxscore", "equilibrium"], "seat one agent beside the equilibrium"),
        (["equilibrium", "equilibrium", "equilibrium"], "seat one agent beside the equilibrium"),
        (["dicenow", *["equilibrium"] * 4], "takes 2 to 4 agents (got 5"),
        (["zoo:classic_afterstate_3p", "equilibrium", "equilibrium"], "measure it by a match"),
        (["dicenow", "equilibrium"], "at 2 players it plays as optimal does"),
    ],
)
def test_what_it_cannot_evaluate_is_named(agents, needle, capsys):
    assert main(["solve", "eval", "classic", *agents, "--target", "500"]) == 2
    assert needle in _out(capsys)


def test_rulesets_it_cannot_solve_are_named():
    with pytest.raises(SolverError, match="bust penalty"):
        exact_eval_beside_equilibrium(PRESETS["zilch"].replace(target=500), "dicenow", 3)
