"""Exact solvers: brute force, Monte Carlo, probabilities, agents, errors.

The brute-force expectimax below shares no code with tenk_env.solve: it reads the
scoring tables, follows Game.options for what is legal, recurses over the turn with
memoisation, and finds the turn-start values by plain (Gauss-Seidel) value iteration.
Rulesets are kept small (low targets, a roll limit where a final round would otherwise
make the trigger's turn unbounded) so that it runs in seconds.
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest

from tenk_env.game import Game
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.rules import PRESETS, Ruleset
from tenk_env.solve import SolverError, evaluate, solve_game, solve_turn
from tenk_env.tables import get_tables


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))


# ---------------------------------------------------------------------------- brute force
def _rolls(rules: Ruleset):
    t = get_tables(rules)
    out = {}
    for n in range(1, rules.num_dice + 1):
        out[n] = [
            (math.factorial(n) / math.prod(math.factorial(k) for k in t.rolls[d].counts) / 6**n, t.rolls[d])
            for d in itertools.combinations_with_replacement(range(1, 7), n)
        ]
    return out


def brute_force(rules: Ruleset, unit: int = 50, tol: float = 1e-13):
    """W[(a, b, fa, fb, ka, kb)] in units (ka, kb: busts in a row, 0 without a bust penalty),
    by value iteration over turn-start states."""
    rolls = _rolls(rules)
    N, tu = rules.num_dice, -(-rules.target // unit)
    final_rolls = 1 if rules.end == "one_more_roll" else rules.max_rolls
    shared = rules.tie == "shared"
    # Rolls that offer the same moves (the same points and number of dice kept, in units)
    # have the same value in every state: one class each, its probability the sum of its
    # rolls' (a regrouping of the same sum, so a few times fewer keeps to visit).
    classes = {}
    for n, rs in rolls.items():
        p_bust = p_win = p_zilch = 0.0
        by: dict[tuple, float] = {}
        for p, info in rs:
            if info.bust:
                p_bust += p
            elif info.instant_win:  # the roller wins at once, final round or not
                p_win += p
            elif info.zilch:  # pays, and the same player rolls all dice again
                p_zilch += p
            else:
                moves = tuple(sorted({(k.points // unit, k.n) for k in info.keeps}))
                by[moves] = by.get(moves, 0.0) + p
        classes[n] = (p_bust, p_win, p_zilch, list(by.items()))
    z = rules.zilch_payout // unit

    def legal(T, hot, fa, rolls_used, max_rolls):
        can_roll = max_rolls == 0 or rolls_used < max_rolls
        can_bank = (
            (fa or T * unit >= rules.entry_threshold)
            and T * unit >= rules.min_bank
            and not (hot and rules.hot_dice == "mandatory" and can_roll)
        )
        return can_roll, can_bank

    def best_turn(bank_value, beta, fa, max_rolls, forced_hot_value=None, forfeit=None):
        @cache
        def after(T2, n2, r):
            """The value of a keep that leaves T2 units banked this turn, n2 dice, r rolls made:
            the same whichever roll it was kept from."""
            hot = n2 == 0
            n2 = N if hot else n2
            can_roll, can_bank = legal(T2, hot, fa, r, max_rolls)
            cand = []
            if can_bank:
                cand.append(bank_value(T2))
            if can_roll:
                if can_bank and bank_value(T2) >= 1.0:
                    pass  # nothing beats a sure win
                elif forced_hot_value is not None and hot and not can_bank and bank_value(T2) >= 1.0:
                    cand.append(forced_hot_value)
                else:
                    cand.append(roll(T2, n2, r))
            if not can_bank and not can_roll:
                cand.append(beta if forfeit is None else forfeit)
            return max(cand)

        def zilch(T2, r):
            """After a zilch pay-out: roll all dice again, or at the roll limit end the turn."""
            can_roll, can_bank = legal(T2, False, fa, r, max_rolls)
            if not can_roll:
                return bank_value(T2) if can_bank else (beta if forfeit is None else forfeit)
            if forced_hot_value is not None and bank_value(T2) >= 1.0:
                return forced_hot_value
            return roll(T2, N, r)

        @cache
        def roll(T, n, r):
            p_bust, p_win, p_zilch, moves = classes[n]
            v = p_bust * beta + p_win + (p_zilch * zilch(T + z, r + 1) if p_zilch else 0.0)
            for keeps, p in moves:
                v += p * max((after(T + points, n - kept, r + 1) for points, kept in keeps), default=-1.0)
            return v

        return roll(0, N, 0)

    def final_chance(d, fb):
        return best_turn(lambda T: 1.0 if T > d else (0.5 if T == d and shared else 0.0), 0.0, fb, final_rolls)

    R = {}
    flags = [(1, 1)] if not rules.entry_threshold else [(0, 0), (0, 1), (1, 0), (1, 1)]
    C = rules.bust_penalty_after if rules.bust_penalty else 1
    states = [
        (a, b, fa, fb, ka, kb)
        for a in range(tu)
        for b in range(tu)
        for fa, fb in flags
        for ka in range(C)
        for kb in range(C)
        if (fa or a == 0) and (fb or b == 0)
    ]
    W = {s: 0.5 for s in states}

    def after_bust(a, k):
        """Score and busts in a row after a bust, as Game.roll has it."""
        k += 1
        if rules.bust_penalty and k >= rules.bust_penalty_after:
            return max(a - rules.bust_penalty // unit, 0), 0
        return a, (k if rules.bust_penalty else 0)

    # immediate end with mandatory hot dice: past the target a forced 6-dice roll wins unless
    # it busts or only offers hot keeps again, a closed form
    p_b = sum(p for p, i in rolls[N] if i.bust)
    p_ah = sum(p for p, i in rolls[N] if not i.bust and all(k.n == N for k in i.keeps))
    # Gauss-Seidel: high score sums first, each value used as soon as it is updated
    states.sort(key=lambda st: -(st[0] + st[1]))
    for _ in range(10_000):
        diff = 0.0
        for a, b, fa, fb, ka, kb in states:
            a2, ka2 = after_bust(a, ka)
            beta = 1.0 - W[(b, a2, fb, fa, kb, ka2)]
            forfeit = 1.0 - W[(b, a, fb, fa, kb, 0)]

            def bank_value(T, a=a, b=b, fb=fb, kb=kb):
                s = a + T
                if s < tu:
                    return 1.0 - W[(b, s, fb, 1, kb, 0)]
                if rules.end == "immediate":
                    return 1.0
                key = (s - b, fb)
                if key not in R:
                    R[key] = final_chance(s - b, fb)
                return 1.0 - R[key]

            forced = (1.0 - p_ah - p_b + p_b * beta) / (1.0 - p_ah) if rules.end == "immediate" else None
            v = best_turn(bank_value, beta, fa, rules.max_rolls, forced, forfeit)
            diff = max(diff, abs(v - W[(a, b, fa, fb, ka, kb)]))
            W[(a, b, fa, fb, ka, kb)] = v
        if diff < tol:
            return W
    raise AssertionError("brute force did not converge")


def _compare(rules: Ruleset):
    sol = solve_game(rules, cache=False, with_fair_komi=False)
    W = brute_force(rules)
    worst = max(abs(sol.W[sol.status(fa, ka), sol.status(fb, kb), a, b] - v) for (a, b, fa, fb, ka, kb), v in W.items())
    assert worst < 1e-9, worst
    return sol, W


BN = PRESETS["busche_neller_2017"]
CLASSIC = PRESETS["classic"]


@pytest.mark.parametrize(
    "rules",
    [
        BN.replace(target=300),
        BN.replace(target=300, entry_threshold=150, hot_dice="mandatory"),
        CLASSIC.replace(target=250, entry_threshold=100, end="immediate", min_bank=100),
        BN.replace(target=300, six_of_a_kind_wins="any"),
    ],
)
def test_game_solver_matches_brute_force_immediate_end(rules):
    _compare(rules)


@pytest.mark.parametrize(
    "rules",
    [
        BN.replace(target=100, max_rolls=2, end="final_round"),
        CLASSIC.replace(target=400, max_rolls=1, entry_threshold=0, tie="shared"),
        PRESETS["bc_society"].replace(target=400, max_rolls=1, entry_threshold=150, turn_order="seat"),
        PRESETS["wikihow"].replace(target=300, max_rolls=1, six_of_a_kind_wins="any"),
    ],
)
def test_game_solver_matches_brute_force_final_round(rules):
    sol, _ = _compare(rules)
    # the trailing player's last chance falls as the lead grows, and is a probability
    assert np.all(np.diff(sol.R[1]) <= 1e-15) and sol.R.min() >= 0 and sol.R.max() <= 1


@pytest.fixture(scope="module")
def classic750():
    """(rules, solution) of classic to 750, solved once for the module (the fair komi too;
    most of a classic solve is its final-turn table, whatever the target), and the optimal
    agent's in-process solution while the module runs."""
    import tenk_env.policies.optimal

    rules = CLASSIC.replace(target=750)
    sol = solve_game(rules, cache=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(tenk_env.policies.optimal._GAME, rules.hash, sol)
        yield rules, sol


def test_values_are_probabilities_and_consistent(classic750):
    rules, sol = classic750
    W = sol.W[1, 1]
    assert W.min() >= 0.0 and W.max() <= 1.0
    # a higher own score never hurts while the opponent's never helps (spot checks)
    tu = sol.target_units
    assert W[tu - 1, 0] > 0.5 > W[0, tu - 1]
    assert np.all(np.diff(W[:, 0]) >= -1e-12) and np.all(np.diff(W[0, :]) <= 1e-12)
    # exact evaluation of optimal against itself reproduces the solution seat by seat
    e = evaluate(rules, "optimal", "optimal", sol=sol)
    assert e.p_a_first == pytest.approx(sol.p_first_win, abs=1e-12)
    assert e.p_a_first + e.p_a_second == pytest.approx(1.0, abs=1e-12)
    # the fair komi brackets 1/2
    ps = sorted(sol.fair["candidates"].items())
    assert ps[0][1] >= 0.5 >= ps[-1][1]


# ---------------------------------------------------------------------------- turn solver
def test_one_roll_turn_is_the_mean_best_roll():
    # one roll per turn: the best keep of one roll of six dice, whose mean RULES.md publishes
    rules = CLASSIC.replace(max_rolls=1, entry_threshold=0)
    sol = solve_turn(rules, cache=False)
    assert sol.points_per_turn == pytest.approx(get_tables(rules).odds()[5][2], abs=1e-9)


def test_turn_solver_matches_monte_carlo_of_maxscore():
    rules = CLASSIC.replace(target=10**9)
    sol = solve_turn(rules)
    agent = make_agent("maxscore")
    rng = np.random.default_rng(7)
    g = Game(rules, 2, record=False)
    g.on_board = [True, True]
    totals, turn, before = [], g.turn, list(g.scores)
    while len(totals) < 12_000:
        if g.dice_to_roll:
            g.roll(rng.integers(1, 7, size=g.dice_to_roll))
        else:
            g.act(*agent.decide(g, rng))
        if g.turn != turn:
            q = 1 - g.current  # the player whose turn just ended
            totals.append(g.scores[q] - before[q])
            turn, before = g.turn, list(g.scores)
    x = np.array(totals, dtype=float)
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert abs(x.mean() - sol.points_per_turn) < 4 * se, (x.mean(), sol.points_per_turn, se)


def test_turn_values_published_and_penalty():
    sol = solve_turn("classic")
    # classic: bank from 300 with one die left (any score is hot dice), 250 with two
    assert {n: sol.thresholds[n][0] for n in (1, 2, 3, 4)} == {1: 300, 2: 250, 3: 450, 4: 1050}
    V = sol.values[0, 1, 0]
    assert V[1, 5] > 250 and V[1, 6] < 300  # the threshold is where rolling stops paying
    z = solve_turn("zilch")
    # a bust penalty makes each further bust worse: h(k) falls with k
    assert z.h[0] == 0 and np.all(np.diff(z.h) < 0)


# ---------------------------------------------------------------------------- agents
def _play(rules, agents, rng):
    g = Game(rules, 2, record=False)
    while not g.over:
        if g.dice_to_roll:
            g.roll(rng.integers(1, 7, size=g.dice_to_roll))
        else:
            move = agents[g.current].decide(g, rng)
            assert move in g.legal_moves()
            g.act(*move)
    return g.winners


def test_optimal_beats_maxscore_seat_balanced(classic750):
    # exact edge here: optimal wins 56.6% seat-balanced against maxscore
    rules, sol = classic750
    opt, mx = make_agent("optimal"), make_agent("maxscore")
    rng = np.random.default_rng(3)
    n, wins = 2000, 0
    for i in range(n):
        seats = [opt, mx] if i % 2 == 0 else [mx, opt]
        wins += (i % 2) in _play(rules, seats, rng)
    rate = wins / n
    half = 1.96 * np.sqrt(rate * (1 - rate) / n)
    assert rate - half > 0.5, (rate, half)
    exact = evaluate(rules, "optimal", "maxscore", sol=sol).p_a
    assert abs(rate - exact) < 2.5 * half, (rate, exact)


def test_agents_check_rulesets():
    make_agent("optimal").check(PRESETS["zilch"], 2)
    with pytest.raises(AgentError, match="piggyback"):
        make_agent("optimal").check(PRESETS["zilch"].replace(piggyback=True), 2)
    with pytest.raises(AgentError, match="2 players"):
        make_agent("optimal").check(CLASSIC, 3)
    make_agent("maxscore").check(PRESETS["zilch"], 4)


@pytest.mark.parametrize(
    "change, word",
    [
        ({"piggyback": True}, "piggyback"),
        ({"exact_finish": "forfeit"}, "exact_finish"),
        ({"four_twos_lose_all": True}, "four_twos_lose_all"),
    ],
)
def test_unsupported_rules_say_why(change, word):
    with pytest.raises(SolverError, match=word):
        solve_game(CLASSIC.replace(**change))


def test_state_space_too_large_is_refused():
    with pytest.raises(SolverError, match="lower the target"):
        solve_game(CLASSIC.replace(target=200_000))


def test_cache_round_trip(tmp_path):
    rules = BN.replace(target=500)
    a = solve_game(rules)
    files = list((tmp_path / "cache").glob("game-*.npz"))
    assert len(files) == 1 and rules.hash in files[0].name
    b = solve_game(rules)
    assert b.stats.get("cached") and np.array_equal(a.W, b.W) and b.fair == a.fair


def test_solve_eval_and_best_response_commands_print_the_exact_figures(tmp_path, monkeypatch, capsys):
    from tenk_env.cli.main import main
    from tenk_env.policies.exact import best_response, exact_eval

    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "small.yaml"
    path.write_text("base: classic\ntarget: 500\nend: immediate\n")
    assert main(["solve", "eval", str(path), "dicenow", "hold:300"]) == 0
    out = capsys.readouterr().out
    e = exact_eval(str(path), "dicenow", "hold:300")
    assert f"{e.p_a_first:.6f}" in out and f"{e.p_a_second:.6f}" in out and f"{e.p_a:.6f}" in out
    assert main(["solve", "best-response", str(path), "dicenow"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    br, opt = best_response(str(path), "dicenow"), exact_eval(str(path), "optimal", "dicenow")
    assert br.p >= opt.p_a - 1e-12
    assert f"{br.p:.6f}" in out and f"{opt.p_a:.6f}" in out
    assert f"dicenow can be exploited by {100 * (br.p - opt.p_a):.2f} points beyond what optimal takes" in out


def test_solve_commands_say_what_takes_long_before_doing_it(tmp_path, capsys):
    """A game solve is silent for minutes on classic: the command says so first, once."""
    from tenk_env.cli.main import main

    path = tmp_path / "small.yaml"
    path.write_text("base: classic\ntarget: 500\nend: immediate\n")
    assert main(["solve", "game", str(path)]) == 0
    first = " ".join(capsys.readouterr().out.split()).splitlines()[0]
    assert first.startswith(
        "solving the game for 'small' (seconds at a small target, a few minutes for classic; "
        f"once: cached in {tmp_path / 'cache'})"
    )
    assert main(["solve", "eval", str(path), "dicenow", "hold:300"]) == 0
    out = capsys.readouterr().out
    assert "solving the game" not in out and out.startswith("evaluating dicenow against hold:300 exactly")
    assert main(["solve", "best-response", str(path), "dicenow"]) == 0
    assert capsys.readouterr().out.startswith("solving the best response to dicenow exactly")


def test_solve_eval_help_names_every_agent_it_follows(capsys):
    from tenk_env.cli.main import main

    with pytest.raises(SystemExit):
        main(["solve", "eval", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "br:BOT (the best response to BOT) and 2-player afterstate agents (afterstate:PATH, zoo:NAME)" in out


def test_the_game_solve_reports_progress_in_slices_with_the_same_result(monkeypatch):
    """The solve returns to Python between slices of score levels (so Ctrl-C and progress
    get a turn); slicing changes nothing in the result."""
    import tenk_env.solve.game as G

    rules = PRESETS["classic"].replace(target=1000, name="c1000")
    seen = []
    sliced = solve_game(rules, cache=False, with_fair_komi=False, progress=seen.append)
    # 39 score levels (a + b = 0..38), cut into slices of about equal work
    assert 30 <= len(seen) <= 39 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] > 0
    monkeypatch.setattr(G, "SLICES", 1)
    whole = solve_game(rules, cache=False, with_fair_komi=False)
    assert np.array_equal(sliced.W, whole.W)


# ---------------------------------------------------------------------------- bust penalty
ZILCH = PRESETS["zilch"]


@pytest.mark.parametrize(
    "rules",
    [
        # three busts in a row cost 100; a zilch pay-out forces a roll; immediate end
        ZILCH.replace(target=300, min_bank=100, bust_penalty=100, end="immediate"),
        # two busts in a row cost 100; forfeits at the roll limit start the count again
        BN.replace(target=300, min_bank=150, bust_penalty=100, bust_penalty_after=2, max_rolls=2),
        # not yet on the board: a penalty costs nothing
        BN.replace(target=250, entry_threshold=150, bust_penalty=100, bust_penalty_after=2, max_rolls=2),
    ],
)
def test_game_solver_matches_brute_force_under_a_bust_penalty(rules):
    sol, W = _compare(rules)
    assert sol.stats["sweeps"] >= 3 and sol.stats["residual"] < 1e-12
    # a bust that completes the run costs its penalty: the count matters
    tu = sol.target_units
    assert sol.W[sol.status(1, sol.rules.bust_penalty_after - 1), 1, tu - 1, 0] < sol.W[1, 1, tu - 1, 0]


@pytest.mark.slow
def test_players_off_the_board_do_not_slow_the_sweeps():
    """Under an entry threshold few turns reach, players off the board bust round and round within
    a score level; each sweep settles those states first, so the sweeps stay few (94 before,
    with the same values to 1e-12)."""
    rules = CLASSIC.replace(target=500, entry_threshold=2000, bust_penalty=500)
    sol = solve_game(rules, cache=False, with_fair_komi=False)
    assert sol.stats["sweeps"] <= 12
    assert sol.p_first_win == pytest.approx(0.5196269518518, abs=1e-12)


def test_sweeps_reproduce_the_ordered_solve_without_a_penalty():
    """The value iteration used under a bust penalty, run on a ruleset without one, gives the
    ordered solve's values: the sweep order, the free-roll cap and the table past it
    (kernels.game.free_roll_values) change nothing but the cost."""
    import tenk_env.solve.game as G

    rules = ZILCH.replace(target=300, bust_penalty=0)
    sol = solve_game(rules, cache=False, with_fair_komi=False)
    W = np.zeros_like(sol.W)
    stats = G._sweeps(sol, G.state_masks(sol.spec, sol.target_units, 0, grid=True), W)
    assert stats[3] >= 2 and G.free_roll_table(sol)[0].size
    assert np.abs(W[1, 1] - sol.W[1, 1]).max() < 1e-12


def test_bust_counts_follow_the_game():
    """kernels.rules.bust_target (the solver's bust) agrees with Game.roll on the zilch preset."""
    from tenk_env.solve.kernels import rules as rules_k
    from tenk_env.solve.spec import build_spec

    spec = build_spec(ZILCH, for_game=True)
    for score, busts in [(0, 0), (0, 2), (300, 1), (300, 2), (2000, 2)]:
        g = Game(ZILCH, 2, record=False)
        g.scores[0], g.busts_in_row[0], g.dice_left = score, busts, 4
        g.roll([2, 3, 4, 6])  # four dice with nothing: a bust (only six dice pay)
        a2, s2 = rules_k.bust_target(spec.prm, score // spec.unit, 1 + 2 * busts)
        assert g.current == 1 and (a2 * spec.unit, s2) == (g.scores[0], 1 + 2 * g.busts_in_row[0])


@pytest.mark.slow
def test_solve_game_under_a_bust_penalty_from_the_command_line(tmp_path, capsys):
    from tenk_env.cli.main import main

    path = tmp_path / "zilch300.yaml"
    path.write_text("base: zilch\ntarget: 300\n")
    assert main(["solve", "game", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    rules = ZILCH.replace(target=300, name="zilch300")
    sol = solve_game(rules)  # the command's solution, from the cache
    assert sol.stats.get("cached") and rules.hash in out
    assert out.startswith("solving the game for 'zilch300' (value iteration under its bust penalty")
    assert f"P(first player wins) = {sol.p_first_win:.6f}" in out
    assert f"fair komi (points for the second player) = {sol.fair['komi']}" in out
    assert f"{sol.stats['sweeps']} sweeps of value iteration" in out
    # exact evaluation covers the penalty (best responses: tests/solve/test_exact_penalty.py); the
    # N-player solver says it does not
    from tenk_env.policies.exact import exact_eval

    assert main(["solve", "eval", str(path), "dicenow", "optimal"]) == 0
    e = exact_eval(rules, "dicenow", "optimal")
    out = capsys.readouterr().out
    assert all(f"{x:.6f}" in out for x in (e.p_a_first, e.p_a_second, e.p_a)), out
    assert main(["solve", "eval", str(path), "dicenow", "maxscore", "breakeven"]) == 2
    assert "does not model a bust penalty" in " ".join(capsys.readouterr().out.split())
