"""Exact N-player evaluation and best responses (tenk_env.solve.multi).

At 2 players the N-player engine must give the 2-player evaluator's and best response's
figures; at 3 and 4 players its figures are held to seat-rotated matches, to each other
(a best response wins at least as often as any bot in its place) and to the brute-force
reference in tests/support/reference_multi.py (tests/solve/test_reference_multi.py checks that one on its
own). Rulesets are small (a 1,000 target, short turns) so that each solve takes seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_table
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.policies.exact import BotPolicy, best_response, best_response_n, exact_eval, exact_eval_n
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError
from tenk_env.solve.multi import best_response_multi, evaluate_multi

from support.reference_multi import reference_br, reference_eval

CLASSIC = PRESETS["classic"]
#: an immediate end: no final round
IMM = CLASSIC.replace(target=1000, end="immediate")
#: a final round, turns of at most two rolls, singles and triples only
FR2 = PRESETS["busche_neller_2017"].replace(target=1000, end="final_round", max_rolls=2, entry_threshold=300)
#: mandatory hot dice (forced rolls) and a final round of one roll each
ONE = PRESETS["bc_society"].replace(target=1000, entry_threshold=300, turn_order="seat")


def _bots(rules, names):
    return [BotPolicy(make_agent(n), rules) for n in names]


# ---------------------------------------------------------------------------- 2 players: the 2-player engine's figures
@pytest.mark.parametrize(
    "rules, a, b", [(IMM, "dicenow", "maxscore"), (FR2, "breakeven", "hold:300")], ids=["immediate", "final_round"]
)
def test_two_player_evaluation_is_the_2_player_evaluators(rules, a, b):
    e = exact_eval(rules, a, b, cache=False)
    m = evaluate_multi(rules, _bots(rules, [a, b]), cache=False)
    assert m.P[0, 0] == pytest.approx(e.p_a_first, abs=1e-12)
    assert m.P[1, 0] == pytest.approx(e.p_a_second, abs=1e-12)
    assert np.abs(m.P.sum(axis=1) - 1).max() < 1e-12


@pytest.mark.parametrize(
    "rules, bot",
    [(IMM, "dicenow"), (FR2, "maxscore"), (ONE.replace(target=500), "dicenow")],
    ids=["immediate", "final_round", "one_more_roll"],
)
def test_two_player_best_response_is_tenk_solve_best_response(rules, bot):
    br = best_response(rules, bot, cache=False)
    m = best_response_multi(rules, _bots(rules, [bot]), cache=False)
    assert m.p_seat[0] == pytest.approx(br.p_first, abs=1e-9)
    assert m.p_seat[1] == pytest.approx(br.p_second, abs=1e-9)
    # the responder's value at every on-board turn-start state, with the bot to move next:
    # U1[own + tu * bot's], and 1 - WB[., ., bot's, own] in the 2-player best response
    tu = br.sol.target_units
    U = m.U1.reshape(tu, tu)  # [bot's score, own score]
    assert np.abs(U[1:, 1:] - (1.0 - br.WB[1, 1, 1:, 1:])).max() < 1e-9


# ---------------------------------------------------------------------------- 3 and 4 players
SMALL = {
    "immediate": CLASSIC.replace(target=500, end="immediate", max_rolls=2),
    "final_round": FR2.replace(target=500),
    "one_more_roll": ONE.replace(target=300, max_rolls=2),
}


@pytest.mark.parametrize("game", ["immediate", "final_round", "one_more_roll"])
def test_three_players_match_the_brute_force_reference(game):
    rules = SMALL[game]
    names = ["dicenow", "maxscore", "hold:300"]
    br = best_response_n(rules, names[1:], cache=False)
    assert np.abs(br.p_seat - reference_br(rules, names[1:])).max() < 1e-12
    if game == "immediate":  # the reference's evaluation is slower where turns run on
        e = exact_eval_n(rules, names, cache=False)
        assert np.abs(e.P - reference_eval(rules, names)).max() < 1e-12
        assert np.abs(e.P.sum(axis=1) - 1).max() < 1e-12


def test_four_players_match_the_brute_force_reference():
    rules = SMALL["immediate"].replace(target=300)
    names = ["dicenow", "maxscore", "greedy"]
    br = best_response_n(rules, names, cache=False)
    assert np.abs(br.p_seat - reference_br(rules, names)).max() < 1e-12
    e = exact_eval_n(rules, ["hold:300", *names], cache=False)
    assert np.abs(e.P.sum(axis=1) - 1).max() < 1e-12
    assert np.all(br.p_seat >= e.seat[0] - 1e-12)


def test_best_response_wins_at_least_as_often_as_each_bot_in_its_place():
    rules = SMALL["final_round"]
    opp = ["dicenow", "maxscore"]
    br = best_response_n(rules, opp, cache=False)
    for bot in ["dicenow", "maxscore", "breakeven", "hold:300", "greedy"]:
        e = exact_eval_n(rules, [bot, *opp], cache=False)
        assert np.all(br.p_seat >= e.seat[0] - 1e-12), (bot, br.p_seat, e.seat[0])


@pytest.mark.slow
def test_three_player_figures_agree_with_seat_rotated_matches():
    rules = SMALL["final_round"]
    names = ["dicenow", "maxscore", "hold:300"]
    e = exact_eval_n(rules, names)
    m = play_table(rules, names, 15_000, seed=5)
    half = 1.5 * (np.array(m.ci_high) - np.array(m.ci_low)) / 2  # 99.7% intervals: not a coin toss
    assert np.all(np.abs(m.win_rate - e.mean) < half), (e.mean, m.win_rate, half)
    br = best_response_n(rules, names[1:])
    m = play_table(rules, ["br:maxscore,hold:300", *names[1:]], 3_000, seed=6)
    half = 1.5 * (m.ci_high[0] - m.ci_low[0]) / 2
    assert abs(m.win_rate[0] - br.p) < half, (br.p, m.win_rate[0], half)


def test_results_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    rules = SMALL["immediate"]
    a = exact_eval_n(rules, ["dicenow", "maxscore", "greedy"])
    b = exact_eval_n(rules, ["dicenow", "maxscore", "greedy"])
    assert not a.stats["cached"] and b.stats["cached"]
    assert np.array_equal(a.P, b.P)
    x = best_response_multi(rules, _bots(rules, ["dicenow", "greedy"]))
    y = best_response_multi(rules, _bots(rules, ["dicenow", "greedy"]))
    assert not x.stats["cached"] and y.stats["cached"]
    assert np.array_equal(x.p_seat, y.p_seat) and np.array_equal(x.U1, y.U1)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "names, needle",
    [
        (["dicenow", "optimal", "maxscore"], "2-player game solution"),
        (["dicenow", "br:maxscore", "maxscore"], "measured against the bots it answers"),
        (["dicenow", "random", "maxscore"], "draws its moves at random"),
        (["dicenow", "dicenwo", "maxscore"], "did you mean 'dicenow'"),
        (["dicenow", "hold:abc", "maxscore"], "hold"),
    ],
)
def test_agents_the_n_player_solver_cannot_follow_are_named(names, needle):
    with pytest.raises(SolverError, match=needle):
        exact_eval_n(IMM, names)


@pytest.mark.parametrize(
    "rules, n, needle",
    [
        (IMM.replace(komi=50), 3, "komi"),
        (IMM.replace(tie="shared"), 3, "tie: shared"),
        (PRESETS["zilch"], 3, "bust_penalty"),
        (IMM, 5, "2 to 4 players"),
    ],
)
def test_rulesets_and_player_counts_it_cannot_solve_are_named(rules, n, needle):
    with pytest.raises(SolverError, match=needle):
        exact_eval_n(rules, ["dicenow"] * n)


def test_the_best_response_agent_checks_its_table():
    agent = make_agent("br:dicenow,maxscore")
    assert agent.n_players == 3
    with pytest.raises(AgentError, match="plays 3-player games"):
        agent.check(IMM, 2)
    with pytest.raises(AgentError, match="komi"):
        agent.check(IMM.replace(komi=50), 3)
    with pytest.raises(AgentError, match="name every bot"):
        make_agent("br:dicenow,")
    with pytest.raises(AgentError, match="2-player game solution"):
        make_agent("br:dicenow,optimal")
    with pytest.raises(SolverError, match="answers 2 bots, for 3-player games"):
        exact_eval(IMM, "br:dicenow,maxscore", "dicenow")


# ---------------------------------------------------------------------------- the commands
def _out(capsys) -> str:
    # rich wraps long lines and draws the tables' columns
    return " ".join(capsys.readouterr().out.replace("│", " ").replace("┃", " ").split())


def test_tenk_solve_and_tenk_ffa_show_the_exact_ceiling(tmp_path, capsys):
    rules = tmp_path / "small.yaml"
    rules.write_text("base: busche_neller_2017\ntarget: 1000\nend: final_round\nmax_rolls: 2\nentry_threshold: 300\n")
    br = best_response_n(FR2, ["maxscore", "hold:300"])
    assert main(["solve", "best-response", str(rules), "maxscore", "hold:300", "--target", "500"]) == 0
    small = best_response_n(SMALL["final_round"], ["maxscore", "hold:300"])
    assert f"{small.p_seat[0]:.6f} {small.p_seat[1]:.6f} {small.p_seat[2]:.6f} {small.p:.6f}" in _out(capsys)
    assert main(["solve", "eval", str(rules), "dicenow", "maxscore", "hold:300"]) == 0
    e = exact_eval_n(FR2, ["dicenow", "maxscore", "hold:300"])
    assert f"dicenow {e.seat[0, 0]:.6f} {e.seat[0, 1]:.6f} {e.seat[0, 2]:.6f} {e.mean[0]:.6f}" in _out(capsys)
    # the ceiling is solved: tenk ffa shows it beside the sampled shares, with the exact ones
    assert (
        main(
            [
                "ffa",
                "dicenow",
                "--rules",
                str(rules),
                "--opponents",
                "maxscore",
                "hold:300",
                "--games",
                "300",
                "--baselines",
                "hold:300",
            ]
        )
        == 0
    )
    out = _out(capsys)
    assert f"the most any agent can take in this seat: {br.p:.2%}" in out
    assert f"{e.mean[0]:.2%} {100 * (br.p - e.mean[0]):.2f} points (exact)" in out
    assert main(["solve", "eval", str(rules), "dicenow"]) == 2
    assert "tenk solve eval takes 2 to 4 agents (got 1: dicenow)" in _out(capsys)
    assert main(["solve", "best-response", str(rules), "dicenow", "optimal"]) == 2
    assert "agent 'optimal' cannot be evaluated exactly with more than 2 players" in _out(capsys)
