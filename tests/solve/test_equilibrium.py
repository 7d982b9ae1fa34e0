"""The symmetric equilibrium (tenk_env.solve.equilibrium): every player maximising its own chance.

At 2 players it must be the game solution, state by state; at 3 and 4 players it is held to the
brute-force reference in tests/support/reference_multi.py, which iterates vectors of win chances over
the rules engine alone. The agent ``equilibrium`` plays from the same tables.
"""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_table
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.policies.exact import check_exact_spec, check_multi_spec
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError, solve_equilibrium, solve_game

from support.reference_multi import reference_equilibrium

CLASSIC = PRESETS["classic"]
FR2 = PRESETS["busche_neller_2017"].replace(target=1000, end="final_round", max_rolls=2, entry_threshold=300)
ONE = PRESETS["bc_society"].replace(target=1000, entry_threshold=300, turn_order="seat")
TWO = {
    "immediate": CLASSIC.replace(target=600, end="immediate"),
    "final_round": FR2.replace(target=600),
    "one_more_roll": ONE.replace(target=600),
}
THREE = {
    "immediate": CLASSIC.replace(target=500, end="immediate", max_rolls=2),
    "final_round": FR2.replace(target=300),
    "one_more_roll": ONE.replace(target=300, max_rolls=2),
}
# at 4 players the reference's final rounds are slow: one roll a turn keeps them to seconds
FOUR = {
    "immediate": THREE["immediate"],
    "final_round": FR2.replace(target=300, max_rolls=1),
    "one_more_roll": ONE.replace(target=300, max_rolls=1),
}


@pytest.mark.parametrize("game", list(TWO))
def test_two_players_is_the_game_solution(game):
    rules = TWO[game]
    eq = solve_equilibrium(rules, 2, cache=False)
    sol = solve_game(rules, cache=False)
    tu = eq.target_units
    a, b = np.meshgrid(np.arange(tu), np.arange(tu), indexing="ij")
    on = (lambda x: (x > 0).astype(int)) if rules.entry_threshold else (lambda x: np.ones_like(x))
    W = sol.W[on(a), on(b), a, b]  # P(the mover wins), mover's score a
    assert np.abs(eq.E[0].reshape(tu, tu).T - W).max() < 1e-12
    assert eq.p_seat[0] == pytest.approx(sol.p_first_win, abs=1e-12)
    assert eq.stats["no_pure"] == 0 and eq.stats["epsilon"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("n, game", [(3, g) for g in THREE] + [(4, g) for g in FOUR])
def test_three_and_four_players_match_the_brute_force_reference(n, game):
    rules = (THREE if n == 3 else FOUR)[game]
    eq = solve_equilibrium(rules, n, cache=False)
    assert np.abs(eq.p_seat - reference_equilibrium(rules, n)).max() < 1e-12
    assert eq.stats["no_pure"] == 0
    # seats differ: the earlier to move, the likelier to win
    assert (np.diff(eq.p_seat) < 0).all()


def test_the_agent_plays_the_equilibrium():
    rules = THREE["immediate"]
    eq = solve_equilibrium(rules, 3)
    tu, nd = eq.target_units, rules.num_dice
    # its turn at every score vector is worth what the solver found
    for idx in range(tu**3):
        d = [idx % tu, idx // tu % tu, idx // tu**2]
        V = eq.turn_values(d)[0]
        assert abs(V[0, nd, 0] - eq.E[0, idx]) < 1e-12, d
    # and three of it win the first seat as often as the solution says (a 99.7% interval)
    m = play_table(rules, ["equilibrium"] * 3, 600, seed=3)
    half = 1.5 * (m.first_seat_ci_high - m.first_seat_ci_low) / 2
    assert abs(m.first_seat_win_rate - eq.p_seat[0]) < half, (m.first_seat_win_rate, eq.p_seat)


def test_the_agent_plays_the_four_player_equilibrium():
    rules = FOUR["final_round"]
    eq = solve_equilibrium(rules, 4)
    tu, nd, J = eq.target_units, rules.num_dice, eq.LB.shape[0]
    for idx in range(0, tu**4, 7):
        d = [idx // tu**k % tu for k in range(4)]
        V = eq.turn_values(d)[0]
        assert abs(V[0, nd, 0] - eq.E[0, idx]) < 1e-12, d
    for j in range(0, J, 2):
        for a in range(tu):
            for r1 in range(0, tu * tu, 5):
                s2, s3 = r1 % tu, r1 // tu
                # the last to play: its chance to beat the bar
                V = eq.final_values([a, s2, s3, 0], 1, tu + j)[0]
                assert abs(V[0, nd, 0] - eq.LB[j, a]) < 1e-12, (j, a)
                # the first after the trigger: beat the bar, then neither of the last two does
                # (XT[0] - TW: its own chance)
                V = eq.final_values([a, s2, s3, 0], 3, tu + j)[0]
                own = eq.XT[0, j, a + tu * r1] - eq.TW[j, a + tu * r1]
                assert abs(V[0, nd, 0] - own) < 1e-12, (j, a, r1)
    # the trigger's chance, then with the next player's, then with the one after: each sum grows to 1
    assert (eq.TW >= 0).all() and (np.diff(np.stack([eq.TW, *eq.XT, np.ones_like(eq.TW)]), axis=0) > -1e-15).all()
    # and four of it win the first seat of a final-round game as often as the solution says
    m = play_table(rules, ["equilibrium"] * 4, 800, seed=4)
    half = 1.5 * (m.first_seat_ci_high - m.first_seat_ci_low) / 2
    assert abs(m.first_seat_win_rate - eq.p_seat[0]) < half, (m.first_seat_win_rate, eq.p_seat)


def test_results_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    a = solve_equilibrium(THREE["immediate"], 3)
    b = solve_equilibrium(THREE["immediate"], 3)
    assert not a.stats["cached"] and b.stats["cached"]
    assert np.array_equal(a.E, b.E) and np.array_equal(a.LB, b.LB)
    assert b.stats["cycles"] == a.stats["cycles"] and b.stats["epsilon"] == a.stats["epsilon"]


@pytest.mark.parametrize(
    "rules, n, needle",
    [
        (THREE["immediate"], 5, "2 to 4 players"),
        (PRESETS["zilch"].replace(target=500), 3, "bust penalty"),
        (THREE["immediate"].replace(komi=50), 3, "komi"),
    ],
)
def test_what_it_cannot_solve_is_named(rules, n, needle):
    with pytest.raises(SolverError, match=needle):
        solve_equilibrium(rules, n)
    agent = make_agent("equilibrium")
    with pytest.raises(AgentError, match=needle):
        agent.check(rules, n)


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.replace("│", " ").replace("┃", " ").split())


def test_tenk_solve_equilibrium(tmp_path, capsys):
    rules = tmp_path / "small.yaml"
    rules.write_text("base: classic\nend: immediate\nmax_rolls: 2\n")
    ref = reference_equilibrium(THREE["immediate"], 3)
    assert main(["solve", "equilibrium", str(rules), "--target", "500"]) == 0
    assert main(["solve", "equilibrium", str(rules), "--target", "500"]) == 0
    out = _out(capsys)
    assert f"equilibrium {ref[0]:.6f} {ref[1]:.6f} {ref[2]:.6f}" in out
    assert "loaded from cache" in out
    ref = reference_equilibrium(THREE["immediate"], 4)
    assert main(["solve", "equilibrium", str(rules), "--target", "500", "--players", "4"]) == 0
    assert "equilibrium " + " ".join(f"{p:.6f}" for p in ref) in _out(capsys)
    assert main(["solve", "equilibrium", "classic", "--players", "5"]) == 2
    assert "solved for 2 to 4 players (got 5)" in _out(capsys)
    with pytest.raises(AgentError, match="takes no argument"):
        make_agent("equilibrium:3")


def test_the_exact_evaluators_say_why_they_do_not_follow_it():
    for check in (check_exact_spec, check_multi_spec):
        with pytest.raises(SolverError, match="read every player's score.*tenk ffa AGENT --opponents equilibrium"):
            check("equilibrium")


def test_the_agents_final_turns_are_the_final_rounds_tables():
    rules = THREE["final_round"]
    eq = solve_equilibrium(rules, 3)
    tu, nd, J = eq.target_units, rules.num_dice, eq.LB.shape[0]
    for j in range(0, J, 3):
        for a in range(tu):
            for r1 in range(0, tu, 2):
                # the last to play: its chance to beat the bar
                V = eq.final_values([a, r1, 0], 1, tu + j)[0]
                assert abs(V[0, nd, 0] - eq.LB[j, a]) < 1e-12, (j, a)
                # the one before it: beat the bar, then not be beaten (XT - TW: its own chance)
                V = eq.final_values([a, r1, 0], 2, tu + j)[0]
                assert abs(V[0, nd, 0] - (eq.XT[-1, j, a + tu * r1] - eq.TW[j, a + tu * r1])) < 1e-12, (j, a, r1)
    # and three of it win the first seat of a final-round game as often as the solution says
    m = play_table(rules, ["equilibrium"] * 3, 600, seed=5)
    half = 1.5 * (m.first_seat_ci_high - m.first_seat_ci_low) / 2
    assert abs(m.first_seat_win_rate - eq.p_seat[0]) < half, (m.first_seat_win_rate, eq.p_seat)
