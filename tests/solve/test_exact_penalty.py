"""Exact evaluation and best responses under a bust penalty (zilch: the third bust in a row
costs 500 points).

A penalty puts both players' busts in a row into the state and lowers scores, so the ordered
solve of the 2-player evaluator does not apply: each side's turn outcomes are read once and the
linear system they define is swept to convergence (:func:`evaluate_penalty`). These tests hold
that path to the ordered evaluator where both apply, to the game value for optimal play, to
the bots' own moves with their busts in a row, and to play. Rulesets are small (zilch's own rules
to 600 points, and three short games from the game solver's brute-force checks, on which the
best responses are solved).
"""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_match
from tenk_env.game import Game
from tenk_env.policies.base import make_agent
from tenk_env.policies.exact import BotPolicy, best_response, exact_eval, exact_policy
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError, evaluate, solve_game
from tenk_env.solve.evaluate import class_rolls, evaluate_penalty, evaluate_policies, optimal_policy
from tenk_env.solve.multi import check_multi_rules
from tenk_env.solve.spec import build_spec

CLASSIC = PRESETS["classic"]
ZILCH = PRESETS["zilch"]
BN = PRESETS["busche_neller_2017"]
#: zilch's own rules (final round, 300 minimum bank, 500 off after three busts) to 400 points
Z400 = ZILCH.replace(target=400, name="zilch400")
PENALTY = [
    Z400,
    ZILCH.replace(target=300, min_bank=100, bust_penalty=100, end="immediate", name="z300"),
    BN.replace(target=300, min_bank=150, bust_penalty=100, bust_penalty_after=2, max_rolls=2, name="bn300"),
    BN.replace(target=250, entry_threshold=150, bust_penalty=100, bust_penalty_after=2, max_rolls=2, name="bn250e"),
]
#: two rolls a turn, an entry threshold, a final round and a penalty after two busts: short tables
SHORT = PENALTY[3]
#: without a penalty (the ordered evaluator applies): an immediate end, and a final round
IMM = CLASSIC.replace(target=600, end="immediate", name="imm600")
FR2 = BN.replace(target=600, end="final_round", max_rolls=2, entry_threshold=300, name="fr600")


@pytest.mark.parametrize("rules", [IMM, FR2], ids=lambda r: r.name)
@pytest.mark.parametrize("a, b", [("optimal", "dicenow"), ("maxscore", "breakeven")])
def test_without_a_penalty_the_sweeps_reproduce_the_ordered_evaluator(rules, a, b):
    sol = solve_game(rules)
    pa, pb = exact_policy(rules, a, sol=sol), exact_policy(rules, b, sol=sol)
    ordered = evaluate_policies(rules, pa, pb, sol=sol, cache=False)
    swept = evaluate_penalty(sol, pa, pb)
    assert swept.p_a_first == pytest.approx(ordered.p_a_first, abs=1e-12)
    assert swept.p_a_second == pytest.approx(ordered.p_a_second, abs=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("rules", PENALTY, ids=lambda r: r.name)
def test_optimal_against_itself_is_the_game_value(rules):
    sol = solve_game(rules)
    assert sol.penalty
    e = exact_eval(rules, "optimal", "optimal", cache=False)
    assert e.p_a_first == pytest.approx(sol.p_first_win, abs=1e-12)
    assert 1.0 - e.p_a_second == pytest.approx(sol.p_first_win, abs=1e-12)
    assert e.stats["pruned"] == 0.0


@pytest.mark.parametrize("bot", ["maxscore", "dicenow", "hold:300"])
def test_tabulated_moves_read_the_busts_in_a_row(bot):
    # every decision of random games on zilch, asked of the tabulation with each player's
    # status (on-board flag + 2 * busts in a row): maxscore plays its table for the busts it
    # has, so posing every player at 0 busts (as the evaluator once did) gets moves wrong
    rules = Z400
    spec = build_spec(rules, for_game=True)
    pol = BotPolicy(make_agent(bot), rules)
    pol.prepare(spec)
    u = spec.unit
    cls = {dice: c for c, rs in enumerate(class_rolls(spec)) for dice in rs}
    agents, rng = [make_agent(bot), make_agent("breakeven")], np.random.default_rng(4)
    seen = differs = 0
    for _ in range(300):
        g = Game(rules, 2, record=False)
        while not g.over:
            if g.dice_to_roll:
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            k, end = agents[g.current].decide(g, rng)
            if g.current == 0 and g.busts_in_row[0]:
                final = int(g.final_round and g.trigger != 0)
                st = [int(g.on_board[p]) + 2 * g.busts_in_row[p] for p in (0, 1)]
                one = np.zeros(1, np.int64)
                args = (one, one + g.rolls - 1, one + len(g.dice), g.turn_total // u, np.array([cls[g.dice]]))
                sit = np.array([[g.scores[0] // u, g.scores[1] // u, st[0], st[1], final]])
                pts, nd, e = pol.decide(sit, *args)
                assert (pts[0], nd[0], bool(e[0])) == (k.points, k.n, end)
                seen += 1
                sit[0, 2:4] &= 1
                pts, nd, e = pol.decide(sit, *args)
                differs += (pts[0], nd[0], bool(e[0])) != (k.points, k.n, end)
            g.act(k, end)
    assert seen > 80
    assert (differs > 0) == (bot == "maxscore")


@pytest.mark.parametrize("a, b", [("maxscore", "breakeven"), ("dicenow", "maxscore")])
def test_exact_bot_pairs_agree_with_matches(a, b):
    e = exact_eval(SHORT, a, b, cache=False)
    m = play_match(SHORT, a, b, 60_000, seed=5)
    sd = (m.ci_high - m.ci_low) / 3.92
    assert abs(m.win_rate_a - e.p_a) < 3.5 * sd, (e.p_a, m.win_rate_a, m.ci_low, m.ci_high)


def test_the_game_solution_against_a_bot_agrees_with_play():
    e = exact_eval(SHORT, "optimal", "maxscore", cache=False)
    m = play_match(SHORT, "optimal", "maxscore", 3000, seed=2)
    sd = (m.ci_high - m.ci_low) / 3.92
    assert abs(m.win_rate_a - e.p_a) < 3.5 * sd, (e.p_a, m.win_rate_a, m.ci_low, m.ci_high)


# ---------------------------------------------------------------------------- best responses
@pytest.mark.parametrize("rules", PENALTY[1:], ids=lambda r: r.name)
def test_best_response_to_optimal_is_the_game_value(rules):
    sol = solve_game(rules)
    br = best_response(rules, "optimal", cache=False)
    assert br.p_first == pytest.approx(sol.p_first_win, abs=1e-10)
    assert br.p_second == pytest.approx(1.0 - sol.p_first_win, abs=1e-10)


@pytest.mark.parametrize("rules", PENALTY[1:], ids=lambda r: r.name)
@pytest.mark.parametrize("bot", ["dicenow", "maxscore"])
def test_best_response_beats_the_bot_at_least_as_much_as_optimal(rules, bot):
    br = best_response(rules, bot, cache=False)
    opt = exact_eval(rules, "optimal", bot, cache=False)
    assert br.p_first >= opt.p_a_first - 1e-12 and br.p_second >= opt.p_a_second - 1e-12
    assert br.stats["rounds"] >= 2
    # the evaluator, following br:BOT's moves, gives the solver's own figures
    again = exact_eval(rules, f"br:{bot}", bot, cache=False)
    assert again.p_a_first == pytest.approx(br.p_first, abs=1e-10)
    assert again.p_a_second == pytest.approx(br.p_second, abs=1e-10)


def test_best_response_agent_plays_its_exact_win_rate():
    br = best_response(SHORT, "maxscore")
    m = play_match(SHORT, "br:maxscore", "maxscore", 3000, seed=3)
    sd = (m.ci_high - m.ci_low) / 3.92
    assert abs(m.win_rate_a - br.p) < 3.5 * sd, (br.p, m.win_rate_a, m.ci_low, m.ci_high)


def test_best_response_from_the_command_line(tmp_path, capsys):
    path = tmp_path / "short.yaml"
    SHORT.save(path)
    br = best_response(SHORT, "dicenow")
    assert main(["solve", "best-response", str(path), "dicenow"]) == 0
    out = capsys.readouterr().out
    assert f"{br.p_first:.6f}" in out and f"{br.p_second:.6f}" in out, out


# ---------------------------------------------------------------------------- what is refused
def test_refusals_name_the_penalty():
    # maxscore's preference table is its 0-bust table: the table front end refuses it
    with pytest.raises(SolverError, match="busts in a row"):
        evaluate(Z400, "optimal", "maxscore")
    with pytest.raises(SolverError, match="bust penalty"):
        check_multi_rules(Z400, 3)
    sol = solve_game(SHORT)
    flat = optimal_policy(solve_game(SHORT.replace(bust_penalty=0, name="nopen")))
    with pytest.raises(SolverError, match="solved for ruleset"):
        evaluate_penalty(sol, flat, optimal_policy(sol))
