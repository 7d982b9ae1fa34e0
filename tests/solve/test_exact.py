"""Exact evaluation of every deterministic bot and exact best responses.

The exact evaluator asks each bot its moves through the bot's batched form, one roll per
class of rolls with the same keeps; these tests hold those moves to the scalar agents on
every roll of the class, check that the situation keys only merge situations the bot
plays alike, reproduce the kernels' table evaluator where both describe the same bot, and check
exact win rates against seat-balanced matches. Rulesets are small (a 1,000 target; an
immediate end or a 2-roll limit keeps the turns, and so the tables, short).
"""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.evaluation.match import play_match
from tenk_env.game import Game
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.policies.exact import BotPolicy, best_response, exact_eval, exact_policy
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError, evaluate, solve_game
from tenk_env.solve.evaluate import (
    _evaluate_tables,
    class_rolls,
    evaluate_policies,
    optimal_policy,
    state_masks,
    tabulate,
)
from tenk_env.solve.spec import NORMAL, build_spec

CLASSIC = PRESETS["classic"]
#: an immediate end: no final round, the cheapest game to evaluate
IMM = CLASSIC.replace(target=1000, end="immediate")
#: a final round, turns of at most two rolls, singles and triples only (short tables)
FR2 = PRESETS["busche_neller_2017"].replace(target=1000, end="final_round", max_rolls=2, entry_threshold=300)
#: five dice, a final round, unlimited rolls: maxscore stops rolling at 3,700 here, so the
#: table path (which follows it that far in every final turn) stays quick
FIVE = PRESETS["inform_five_dice"].replace(target=1000, end="final_round", max_rolls=0)
BOTS = ["dicenow", "breakeven", "hold:300", "greedy", "maxscore"]


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# ---------------------------------------------------------------------------- moves, roll by roll
def _game(rules, u, sit, T, n, r, dice):
    """A game in the DECIDE phase at situation sit = (a, b, fa, fb, final) (units of u points)."""
    a, b, fa, fb, final = sit
    g = Game(rules, 2, record=False)
    g.scores, g.on_board = [a * u, b * u], [bool(fa), bool(fb)]
    g.current, g.turn_total, g.dice_left, g.rolls = 0, T * u, n, r
    if final:
        g.final_round, g.trigger, g.final_turns_left = True, 1, 1
    g.roll(dice)
    return g


@pytest.mark.parametrize(
    "rules",
    [CLASSIC, PRESETS["bc_society"].replace(turn_order="seat"), PRESETS["inform_five_dice"]],
    ids=lambda r: r.name,
)
@pytest.mark.parametrize("bot", BOTS)
def test_tabulated_moves_are_the_scalar_agents_moves(rules, bot):
    # the exact evaluator asks one roll per class; the scalar agent must make the same move
    # (points kept, dice kept, end) on every roll of the class, in every situation
    spec = build_spec(rules, for_game=True)
    pol = BotPolicy(make_agent(bot), rules)
    pol.prepare(spec)
    agent, rng = make_agent(bot), np.random.default_rng(0)
    rolls = class_rolls(spec)
    tu = -(-rules.target // spec.unit)
    gen = np.random.default_rng(hash(bot) % 2**32)
    checked = 0
    for _ in range(25):
        final = int(gen.random() < 0.3) if rules.end != "immediate" else 0
        a = int(gen.integers(0, tu))
        b = int(gen.integers(tu, tu + 60)) if final else int(gen.integers(0, tu))
        fa = int(gen.random() < 0.7) if rules.entry_threshold else 1
        sit = np.array([[a, b, fa, 1, final]])
        maxr = 1 if final and rules.end == "one_more_roll" else rules.max_rolls
        r = int(gen.integers(0, maxr)) if maxr else int(gen.integers(0, 4))
        n = int(gen.integers(1, spec.n_dice + 1))
        T = int(gen.choice([0, 1, 4, 6, 9, 12, 20, 40, 60, 150])) if n < spec.n_dice or gen.random() < 0.5 else 0
        cs = np.array([c for c in range(spec.cstart[n], spec.cstart[n + 1]) if spec.c_kind[c] == NORMAL])
        z = np.zeros(len(cs), np.int64)
        pts, nd, end = pol.decide(sit, z, z + r, z + n, T, cs)
        for c, p, d, e in zip(cs, pts, nd, end):
            for dice in rolls[c]:
                k, e2 = agent.decide(_game(rules, spec.unit, tuple(sit[0]), T, n, r, dice), rng)
                assert (k.points, k.n, e2) == (p, d, e), (bot, tuple(sit[0]), T, n, r, dice)
                checked += 1
    assert checked > 500


@pytest.mark.parametrize("bot", BOTS)
def test_tabulated_moves_in_random_games(bot):
    # every decision of random games (bot against breakeven), asked of the tabulation too
    rules = FR2
    spec = build_spec(rules, for_game=True)
    pol = BotPolicy(make_agent(bot), rules)
    pol.prepare(spec)
    u = spec.unit
    cls = {dice: c for c, rs in enumerate(class_rolls(spec)) for dice in rs}
    agents, rng = [make_agent(bot), make_agent("breakeven")], np.random.default_rng(1)
    seen = 0
    for _ in range(80):
        g = Game(rules, 2, record=False)
        while not g.over:
            if g.dice_to_roll:
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            k, end = agents[g.current].decide(g, rng)
            if g.current == 0:
                p, o = 0, 1
                final = int(g.final_round and g.trigger != p)
                sit = np.array([[g.scores[p] // u, g.scores[o] // u, int(g.on_board[p]), int(g.on_board[o]), final]])
                one = np.zeros(1, np.int64)
                pts, nd, e = pol.decide(
                    sit, one, one + g.rolls - 1, one + len(g.dice), g.turn_total // u, np.array([cls[g.dice]])
                )
                assert (pts[0], nd[0], bool(e[0])) == (k.points, k.n, end)
                seen += 1
            g.act(k, end)
    assert seen > 250


@pytest.mark.parametrize("rules", [IMM, FR2], ids=["immediate", "final_round"])
@pytest.mark.parametrize("bot", ["dicenow", "breakeven", "hold:300", "maxscore"])
def test_situation_keys_merge_only_equal_tables(rules, bot):
    # every turn-start situation of the game and a sample of final turns, tabulated on its
    # own, equals the tabulation of its key's representative
    sol = solve_game(rules)
    spec, tu = sol.spec, sol.target_units
    pol = BotPolicy(make_agent(bot), rules)
    pol.prepare(spec)
    mask = state_masks(spec, tu, 0, grid=True)
    sits = [
        (a, b, fa, fb, 0)
        for fa in range(2)
        for fb in range(2)
        for a in range(tu)
        for b in range(tu)
        if mask[fa, fb, a, b]
    ]
    gen = np.random.default_rng(2)
    sits = [sits[i] for i in gen.choice(len(sits), 120, replace=False)]
    if rules.end != "immediate":
        sits += [(int(gen.integers(0, tu)), int(gen.integers(tu, tu + 40)), 1, 1, 1) for _ in range(60)]
    keys = [pol.situation_key(*s[:4], bool(s[4])) for s in sits]
    reps = {}
    for k, s in zip(keys, sits):
        reps.setdefault(k, s)
    rep_tab = dict(zip(reps, tabulate(pol, spec, np.array(list(reps.values())))))
    assert len(reps) < len(sits) // 2  # the keys do merge
    for s, k, t in zip(sits, keys, tabulate(pol, spec, np.array(sits))):
        r = rep_tab[k]
        assert np.array_equal(t.rows, r.rows) and np.array_equal(t.dec, r.dec), (bot, s, reps[k])


# ---------------------------------------------------------------------------- exact figures
@pytest.mark.slow
@pytest.mark.parametrize(
    "rules, a, b",
    [
        (FIVE, "optimal", "maxscore"),
        (FIVE, "optimal", "hold:300"),
        (FIVE, "maxscore", "hold:300"),
        (FIVE.replace(entry_threshold=0), "hold:250", "hold:500"),
    ],
)
def test_general_evaluator_reproduces_the_table_evaluator(rules, a, b):
    # The kernels' table path where it is exact (a final round), against the general
    # evaluator following the agents' own moves (their batched forms).
    old = _evaluate_tables(rules, a, b)
    new = exact_eval(rules, a, b, cache=False)
    assert new.p_a_first == pytest.approx(old.p_a_first, abs=1e-9)
    assert new.p_a_second == pytest.approx(old.p_a_second, abs=1e-9)


@pytest.mark.parametrize(
    "rules, a, b",
    [
        (IMM, "optimal", "maxscore"),
        (FR2, "hold:300", "maxscore"),
    ],
)
def test_agents_and_their_tables_evaluate_alike(rules, a, b):
    # maxscore and hold:N as preference tables (evaluate) and as agents (exact_eval): one
    # figure, also where the table path was not exact (maxscore rolls on past the target
    # under an immediate end). Not hold:N under an immediate end: its table ignores the target.
    t = evaluate(rules, a, b, cache=False)
    e = exact_eval(rules, a, b, cache=False)
    assert e.p_a_first == pytest.approx(t.p_a_first, abs=1e-12)
    assert e.p_a_second == pytest.approx(t.p_a_second, abs=1e-12)


def test_optimal_against_itself_is_the_game_value():
    sol = solve_game(FR2)
    e = evaluate_policies(FR2, optimal_policy(sol), optimal_policy(sol), sol=sol, cache=False)
    assert e.p_a_first == pytest.approx(sol.p_first_win, abs=1e-12)
    assert e.p_a_first + e.p_a_second == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    "rules, a, b",
    [
        (IMM, "dicenow", "breakeven"),
        (FR2, "dicenow", "breakeven"),
        (FR2, "breakeven", "hold:300"),
    ],
)
def test_exact_bot_pairs_agree_with_matches(rules, a, b):
    e = exact_eval(rules, a, b)
    m = play_match(rules, a, b, 200_000, seed=11)
    half = 1.5 * (m.ci_high - m.ci_low) / 2  # a 99.7% interval: the test must not be a coin toss
    assert abs(m.win_rate_a - e.p_a) < half, (e, m.win_rate_a, m.ci_low, m.ci_high)
    assert 0.0 < e.stats["pruned"] < 1e-12 or e.stats["pruned"] == 0.0


def test_results_are_cached():
    a = exact_eval(IMM, "dicenow", "hold:300")
    b = exact_eval(IMM, "dicenow", "hold:300")
    assert not a.stats.get("cached") and b.stats["cached"]
    assert (a.p_a_first, a.p_a_second) == (b.p_a_first, b.p_a_second)


# ---------------------------------------------------------------------------- best responses
@pytest.mark.parametrize("rules, bot", [(IMM, "dicenow"), (IMM, "maxscore"), (FR2, "dicenow"), (FR2, "breakeven")])
def test_best_response_beats_the_bot_at_least_as_much_as_optimal(rules, bot):
    br = best_response(rules, bot)
    opt = exact_eval(rules, "optimal", bot)
    assert br.p_first >= opt.p_a_first - 1e-12 and br.p_second >= opt.p_a_second - 1e-12
    # the evaluator, following br:BOT's moves, gives the solver's own figures
    again = exact_eval(rules, f"br:{bot}", bot, cache=False)
    assert again.p_a_first == pytest.approx(br.p_first, abs=1e-9)
    assert again.p_a_second == pytest.approx(br.p_second, abs=1e-9)


def test_best_response_to_optimal_is_optimal():
    sol = solve_game(FR2)
    br = best_response(FR2, "optimal")
    assert br.p_first == pytest.approx(sol.p_first_win, abs=1e-9)
    assert np.abs(br.W[1, 1] - sol.W[1, 1]).max() < 1e-9


@pytest.mark.parametrize("rules", [IMM, FR2], ids=["immediate", "final_round"])
def test_best_response_agent_plays_its_exact_win_rate(rules):
    br = best_response(rules, "dicenow")
    m = play_match(rules, "br:dicenow", "dicenow", 3000, seed=3)
    half = 1.5 * (m.ci_high - m.ci_low) / 2
    assert abs(m.win_rate_a - br.p) < half, (br.p, m.win_rate_a, m.ci_low, m.ci_high)


# ---------------------------------------------------------------------------- bad input
def test_bad_agents_are_named_before_any_solve(monkeypatch):
    import tenk_env.policies.exact as ex

    def boom(*a, **k):
        raise AssertionError("solved before the names were checked")

    monkeypatch.setattr(ex, "solve_game", boom)
    for spec, word in [
        ("random", "at random"),
        ("ppo:runs/x.zip", "network"),
        ("nosuch", "unknown agent"),
        ("hold:abc", "whole number"),
        ("br", "br:BOT"),
        ("br:random", "at random"),
    ]:
        with pytest.raises(SolverError, match=word) as e:
            exact_eval(IMM, spec, "dicenow")
        assert "dicenow, breakeven" in str(e.value) or word in ("whole number", "br:BOT")
    with pytest.raises(AgentError, match="br:BOT"):
        make_agent("br")
    with pytest.raises(AgentError, match="at random"):
        make_agent("br:random")


def test_exact_policy_kinds():
    sol = solve_game(IMM)
    assert exact_policy(IMM, "optimal", sol=sol).name == "optimal"
    assert exact_policy(IMM, "greedy:300").name == "greedy:300"
    assert exact_policy(IMM, "br:hold:300").name == "br:hold:300"
