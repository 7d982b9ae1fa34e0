"""Regret analysis: exact move values, the performance-difference identity, the
mistake records, and bad input.

Small rulesets keep every solve to seconds: IMM (classic scoring, target 1,000, immediate
end), FIN (target 500, final round with shared ties, an entry threshold, three rolls a turn,
so that a brute-force search of a turn is finite), BC and ZIL (forced rolls). The brute
force below shares no code with tenk_env.solve.regret or the kernels: it enumerates every
roll from the scoring tables, follows the game's own legality rules and recurses over the
rest of the turn with optimal continuation, taking only the turn-start values W and the
final-turn chances R from the solution (those are checked against a brute force of their
own in tests/solve/test_solve.py).
"""

from __future__ import annotations

import itertools
import json
import math
from functools import cache

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.analysis import analyse, check_out_dir, seat_baselines, write_outputs
from tenk_env.game import Game, Phase
from tenk_env.policies.base import AgentError
from tenk_env.policies.exact import exact_eval
from tenk_env.policies.optimal import OptimalAgent, game_solution
from tenk_env.records import load_jsonl, replay
from tenk_env.rules import PRESETS
from tenk_env.solve import SolverError, evaluate, hold_policy, maxscore_policy, solve_game
from tenk_env.solve import regret as R
from tenk_env.solve.policy import pick
from tenk_env.tables import get_tables

C = PRESETS["classic"]
IMM = C.replace(target=1000, end="immediate", name="imm1000")
# flat multiples keep a roll's points small, so the final-turn table (three rolls) is short
FIN = C.replace(
    target=500,
    entry_threshold=150,
    max_rolls=3,
    multiples="flat",
    flat_multiples=(500, 750, 1000),
    tie="shared",
    name="fin500",
)


BC = PRESETS["bc_society"].replace(target=600, entry_threshold=150)
# forced rolls of two kinds: mandatory hot dice and a zilch pay-out
ZIL = C.replace(
    target=400,
    zilch_payout=300,
    entry_threshold=0,
    multiples="flat",
    flat_multiples=(500, 750, 1000),
    end="immediate",
    hot_dice="mandatory",
    name="zil400",
)
# the zilch preset to 600: three busts in a row cost 500, so the state holds the bust counts
PEN = PRESETS["zilch"].replace(target=600, name="zilch600")


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    import tenk_env.policies.optimal

    mp = pytest.MonkeyPatch()
    mp.setenv("TENK_CACHE", str(tmp_path_factory.mktemp("cache")))
    # the optimal agent's in-process solutions, without the fair komi (seconds we need not spend)
    for r in (IMM, FIN, BC, ZIL, PEN):
        mp.setitem(tenk_env.policies.optimal._GAME, r.hash, solve_game(r, with_fair_komi=False))
    yield
    mp.undo()


class TableAgent:
    """Plays a TablePolicy move for move as tenk_env.solve.evaluate follows it (immediate
    end): the tables choose, and past the evaluator's cap (reaching the target, or the
    policy's own always-bank total) a roll becomes a bank, as evaluate values it."""

    def __init__(self, tp, evaluator_cap: bool = True):
        self.tp, self.name, self.cap = tp, tp.name, evaluator_cap
        self.tab_all = tp.always_bank_from()

    def check(self, rules, n_players):
        pass

    def decide(self, game, rng):
        tp, p = self.tp, game.current
        f = int(game.on_board[p]) if game.rules.entry_threshold else 1
        nb = tp.bank.shape[0] - 1
        k, end = pick(
            game,
            tp.unit,
            tp.roll[f],
            tp.roll.shape[-1] - 1,
            lambda T: float(tp.bank[min(T, nb)]),
            tp.forfeit,
            game.max_rolls,
            False,
        )
        if self.cap and not end:
            u, r = tp.unit, game.rules
            bankable = max(-(-r.min_bank // u), 0 if f else -(-r.entry_threshold // u))
            Tcap = max(min(-(-r.target // u) - game.scores[p] // u, self.tab_all), bankable)
            if (game.turn_total + k.points) // u > Tcap and game.options(k)[1]:
                end = True
        return k, end

    def piggyback(self, game, rng):
        return False


# ---------------------------------------------------------------------------- optimal
# bc_society: mandatory hot dice (forced rolls past the cap), one more roll, highest die starts
@pytest.mark.parametrize("rules, games", [(IMM, 100), (FIN, 100), (BC, 60), (ZIL, 200), (PEN, 40)])
def test_optimal_regret_is_exactly_zero(rules, games):
    a = analyse("optimal", rules, games, seed=5, top=3)
    d = a.decisions
    assert len(d["regret"]) > 100
    assert np.all(d["regret"] == 0.0)
    # equal values, but for float rounding where two moves both win surely (1.0 banked against
    # a sure-win roll summed to 1 - 2e-15): below REGRET_TOL, so no regret
    assert np.all(d["best_value"] - d["value"] < R.REGRET_TOL)
    assert a.mistakes == [] and a.report.regret_per_game == 0.0
    # with no regret the implied win rate is optimal's own, seat by seat
    assert a.report.implied_seat == pytest.approx(list(seat_baselines(game_solution(rules), rules)), abs=0)


@pytest.mark.parametrize("rules", [IMM, FIN, BC, ZIL, PEN])
def test_turn_tables_are_the_solver_dp_bit_for_bit(rules):
    # TurnTables computes V with its own faster loop: the same floats as turn_dp, so the
    # optimal agent's moves (ties included) are unchanged
    sol = game_solution(rules)
    rng = np.random.default_rng(0)
    tu, k = sol.target_units, rules.komi // sol.unit
    for _ in range(25):
        a, b = (int(x) for x in rng.integers(0, tu, 2))
        fa = fb = 1
        if rules.entry_threshold and rng.random() < 0.5:
            fa, a = 0, k
        if sol.penalty:
            fa, fb = (sol.status(f, int(rng.integers(0, rules.bust_penalty_after))) for f in (fa, fb))
        got = R.TurnTables(sol, (rules.hash, a, b, fa, fb))
        want = sol.turn_values(a, b, fa, fb)
        d, f = int(rng.integers(0, 30)), int(rng.integers(0, 2))
        got_f = R.TurnTables(sol, (rules.hash, "final", d, f))
        want_f = sol.final_values(d, f)
        for g, (V, bv, Tcap, beta, forced) in ((got, want), (got_f, want_f)):
            assert g.Tcap == Tcap and g.beta == beta and g.forced == forced
            assert np.array_equal(g.V, V) and np.array_equal(g.bv, bv)


def test_turn_tables_pick_is_the_best_exact_move():
    # the optimal agent's move (solver values, its tie-break) is the first-ranked exact move
    opt, rng = OptimalAgent(), np.random.default_rng(1)
    for _ in range(40):
        g = Game(FIN, 2, record=False)
        while not g.over:
            if g.dice_to_roll:
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            t = opt.tables(g)
            k, end = t.pick(g)
            m = R.regret_of(t, g, k, end)
            assert m.regret == 0.0 and m.best_keep.counts == k.counts and m.best_end == end
            g.act(k, end)


# ---------------------------------------------------------------------------- the identity
@pytest.mark.parametrize("name", ["maxscore", "hold:300"])
def test_implied_win_rate_agrees_with_exact_evaluation(name):
    pol = maxscore_policy(IMM) if name == "maxscore" else hold_policy(IMM, 300)
    exact = evaluate(IMM, pol, "optimal", cache=False)
    a = analyse(TableAgent(pol), IMM, 600, seed=11)
    r = a.report
    lo, hi = r.implied_ci
    assert lo <= exact.p_a <= hi, (r.implied_win_rate, r.implied_ci, exact.p_a)
    for q, p in enumerate((exact.p_a_first, exact.p_a_second)):
        lo, hi = r.implied_seat_ci[q]
        assert lo <= p <= hi, (q, r.implied_seat[q], (lo, hi), p)
    # the point of it: far narrower than counting the same games' wins
    assert r.width_ratio > 2
    assert r.empirical_ci[0] <= exact.p_a <= r.empirical_ci[1]


def test_zoo_maxscore_is_the_table_policy():
    a = analyse("maxscore", IMM, 40, seed=2)
    b = analyse(TableAgent(maxscore_policy(IMM), evaluator_cap=False), IMM, 40, seed=2)
    assert np.array_equal(a.decisions["regret"], b.decisions["regret"])


# ---------------------------------------------------------------------------- past the cap
def _brute_values(game: Game, sol) -> dict:
    """{(kept counts, end): W*} of every legal move, by enumeration (see the module docstring)."""
    rules, u = game.rules, sol.unit
    N, tu = rules.num_dice, sol.target_units
    tables = get_tables(rules)
    p, o = game.current, 1 - game.current
    a, b = game.scores[p] // u, game.scores[o] // u
    fa, fb = (int(game.on_board[p]), int(game.on_board[o])) if rules.entry_threshold else (1, 1)
    maxr = game.max_rolls
    if game.final_round and game.trigger != p:
        d = (game.scores[game.trigger] - game.scores[p]) // u
        beta = 0.0

        def bank(T):
            return 1.0 if T > d else (0.5 if T == d and rules.tie == "shared" else 0.0)
    else:
        beta = 1.0 - sol.W[fb, fa, b, a]

        def bank(T):
            s = a + T
            if s < tu:
                return 1.0 - sol.W[fb, 1, b, s]
            if rules.end == "immediate":
                return 1.0
            return 1.0 - sol.R[fb, min(s - b, sol.R.shape[1] - 1)]

    rolls = {
        n: [
            (math.factorial(n) / math.prod(math.factorial(c) for c in tables.rolls[dd].counts) / 6**n, tables.rolls[dd])
            for dd in itertools.combinations_with_replacement(range(1, 7), n)
        ]
        for n in range(1, N + 1)
    }

    def options(T2, hot, r_after):
        can_roll = maxr == 0 or r_after < maxr
        can_bank = (
            (fa or T2 * u >= rules.entry_threshold)
            and T2 * u >= rules.min_bank
            and not (hot and rules.hot_dice == "mandatory" and can_roll)
        )
        return can_roll, can_bank

    def after(T2, n2, r_after):
        hot = n2 == 0
        can_roll, can_bank = options(T2, hot, r_after)
        vals = []
        if can_bank:
            vals.append(bank(T2))
        if can_roll:
            vals.append(roll(T2, N if hot else n2, r_after))
        return max(vals) if vals else beta

    @cache
    def roll(T, n, r):
        v = 0.0
        for q, info in rolls[n]:
            if info.instant_win:
                v += q
            elif info.bust:
                v += q * beta
            else:
                v += q * max(after(T + k.points // u, n - k.n, r + 1) for k in info.keeps)
        return v

    T0 = game.turn_total // u
    out = {}
    for k, end in game.legal_moves():
        T2, n2 = T0 + k.points // u, game.dice_left - k.n
        can_roll, can_bank = game.options(k)
        if end:
            out[(k.counts, True)] = bank(T2) if can_bank else beta
        else:
            out[(k.counts, False)] = roll(T2, n2 or N, game.rolls)
    return out


def _position(rules, scores, total, dice, rolls, final=False, on_board=(True, True)):
    g = Game(rules, 2, record=False)
    g.scores, g.on_board = list(scores), list(on_board)
    g.turn_total, g.dice_left, g.rolls = total, len(dice), rolls
    if final:
        g.final_round, g.trigger, g.final_turns_left = True, 1, 1
    g.roll(dice)
    assert g.phase == Phase.DECIDE
    return g


def test_move_values_past_the_cap_match_brute_force():
    sol = game_solution(FIN)
    u = sol.unit
    rng = np.random.default_rng(4)
    opt = OptimalAgent()
    checked = past = 0
    cases = [
        ((0, 150), False, (False, True)),
        ((0, 0), False, (False, False)),
        ((200, 400), False, (True, True)),
        ((450, 100), False, (True, True)),
        ((100, 550), True, (True, True)),
        ((0, 650), True, (False, True)),
        ((300, 600), True, (True, True)),
    ]
    for scores, final, on in cases:
        probe = _position(FIN, scores, 0, [1, 2, 3, 4, 6, 6], 0, final, on)
        Tcap = opt.tables(probe).Tcap
        for total in (max(0, Tcap - 3) * u, (Tcap + 1) * u, (Tcap + 5) * u):
            for _ in range(4):
                n = int(rng.integers(1, 7))
                dice = sorted(rng.integers(1, 7, size=n).tolist())
                if get_tables(FIN).rolls[tuple(dice)].bust:
                    continue
                g = _position(FIN, scores, total, dice, int(rng.integers(0, 2)), final, on)
                t = opt.tables(g)
                brute = _brute_values(g, sol)
                for k, rv, ev in t.values(g):
                    for end, v in ((False, rv), (True, ev)):
                        if v is None:
                            continue
                        assert v == pytest.approx(brute[(k.counts, end)], abs=1e-12), (g, k, end)
                        checked += 1
                        past += (not end) and (g.turn_total + k.points) // u > t.Tcap
    assert checked > 100 and past > 20


def test_weak_agent_rolling_past_the_cap_gets_its_exact_value():
    # never banks before the roll limit: rolls on far past the point where optimal banks
    weak = TableAgent(hold_policy(FIN, 20_000), evaluator_cap=False)
    a = analyse(weak, FIN, 1000, seed=1)
    r = a.report
    assert r.regret_per_game > 0.1
    # both are unbiased estimates of the same win rate: their intervals overlap
    assert r.implied_ci[0] <= r.empirical_ci[1] and r.empirical_ci[0] <= r.implied_ci[1], r
    # valuing a roll past the cap as banking (the DP's shortcut, right for optimal only)
    # would make the agent look far stronger than it plays
    orig = R.TurnTables.roll
    try:
        R.TurnTables.roll = lambda self, rolls, n, T: orig(self, rolls, n, T) if T <= self.Tcap else self.bank(T)
        naive = analyse(weak, FIN, 1000, seed=1).report
    finally:
        R.TurnTables.roll = orig
    assert naive.implied_ci[0] > r.empirical_ci[1], (naive, r)


# ---------------------------------------------------------------------------- mistakes and outputs
def test_mistake_records_replay_to_the_position(tmp_path):
    a = analyse("dicenow", IMM, 80, seed=7, top=6)
    assert len(a.mistakes) == 6
    assert [m["regret"] for m in a.mistakes] == sorted((m["regret"] for m in a.mistakes), reverse=True)
    assert a.mistakes[-1]["regret"] >= np.sort(a.decisions["regret"])[-6]
    paths = write_outputs(a, tmp_path / "out")
    lines = [json.loads(x) for x in paths["mistakes.jsonl"].read_text().splitlines()]
    assert len(lines) == 6
    opt = OptimalAgent()
    for m in lines:
        g = replay(load_jsonl(m["record"]))
        pos = m["position"]
        assert g.phase == Phase.DECIDE and not g.over
        assert (g.scores, g.on_board, g.current, g.turn_total, list(g.dice), g.dice_left, g.rolls, g.final_round) == (
            pos["scores"],
            pos["on_board"],
            pos["player"],
            pos["turn_total"],
            pos["dice"],
            pos["dice_left"],
            pos["rolls"],
            pos["final_round"],
        )
        keep = next(k for k in g.info.keeps if list(k.dice) == m["move"]["keep"])
        s = R.regret_of(opt.tables(g), g, keep, m["move"]["end"])
        assert (s.value, s.best_value, s.regret) == (m["move"]["value"], m["best"]["value"], m["regret"])
        assert list(s.best_keep.dice) == m["best"]["keep"] and s.best_end == m["best"]["end"]
    report = json.loads(paths["report.json"].read_text())
    assert report["games"] == 80 and report["regret_per_game"] == pytest.approx(a.report.regret_per_game)
    assert paths["atlas.png"].read_bytes()[:4] == b"\x89PNG"
    rows = paths["breakdown.csv"].read_text().splitlines()
    assert rows[0] == "group,value,decisions,mistakes,regret_pp_per_game,share"
    kinds = [x for x in rows if x.startswith("kind,")]
    assert len(kinds) == 3
    # the kinds split the regret exactly, in percentage points as every table a person reads
    assert sum(float(x.rsplit(",", 2)[1]) for x in kinds) == pytest.approx(100 * a.report.regret_per_game)


def test_same_games_as_a_match():
    # deal d of seed s is the deal tenk evaluate / play_match play: the same games, won the same way
    from tenk_env.evaluation.match import play_deals
    from tenk_env.policies.base import make_agent

    a = analyse("dicenow", IMM, 40, seed=7)
    c = play_deals(IMM, [make_agent("dicenow"), make_agent("optimal")], 7, 0, 20)
    assert np.array_equal(a.game_win, c.win[:, 0])


def test_result_does_not_depend_on_workers():
    a = analyse("hold:300", IMM, 60, seed=9, workers=1)
    b = analyse("hold:300", IMM, 60, seed=9, workers=2)
    assert np.array_equal(a.game_regret, b.game_regret) and np.array_equal(a.game_win, b.game_win)
    assert a.report.regret_ci == b.report.regret_ci


@pytest.mark.slow
def test_implied_win_rate_under_a_bust_penalty_agrees_with_the_exact_one_and_play():
    """The implied win rate (from the solution's values and the regret) and the games' own
    result are two unbiased estimates of the win rate the exact evaluator computes, under a
    bust penalty as without one: the implied interval holds the exact figure, and the two
    intervals overlap."""
    r = analyse("dicenow", PEN, 400, seed=2).report
    exact = exact_eval(PEN, "dicenow", "optimal").p_a
    assert 0.002 < r.regret_per_game
    assert r.implied_ci[0] <= exact <= r.implied_ci[1], (exact, r.implied_ci)
    assert r.implied_ci[0] <= r.empirical_ci[1] and r.empirical_ci[0] <= r.implied_ci[1], r
    # the implied interval is the narrower: most of the luck is taken out
    assert r.implied_ci[1] - r.implied_ci[0] < (r.empirical_ci[1] - r.empirical_ci[0]) / 3


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs, err, words",
    [
        (dict(agent="dicenow", rules=PRESETS["zilch"].replace(piggyback=True)), SolverError, "piggyback"),
        (dict(agent="dicenw", rules=IMM), AgentError, "unknown agent"),
        (dict(agent="dicenow", rules=IMM, games=0), ValueError, "at least 2 games"),
        (dict(agent="dicenow", rules=IMM, workers=-1), ValueError, "workers"),
    ],
)
def test_bad_input_fails_before_any_work(kwargs, err, words, monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("work started")

    import tenk_env.evaluation.analysis as A

    monkeypatch.setattr(A, "_run", no_work)
    with pytest.raises(err, match=words):
        analyse(**kwargs)


def test_cli_errors_and_out_dir(tmp_path, capsys):
    out = tmp_path / "never"
    piggy = tmp_path / "piggy.yaml"
    piggy.write_text("name: piggy\npiggyback: true\n")
    assert main(["analyze", "dicenow", "--rules", str(piggy), "--out", str(out)]) == 2
    assert main(["analyze", "nobody", "--out", str(out)]) == 2
    assert main(["analyze", "dicenow", "--games", "0", "--out", str(out)]) == 2
    assert not out.exists()
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        check_out_dir(f / "sub")
    assert main(["analyze", "dicenow", "--games", "4", "--out", str(f / "sub")]) == 2
    err = capsys.readouterr().out
    assert "piggyback" in err and "unknown agent" in err and "at least 2 games" in err and "is a file" in err


def test_cli_writes_everything(tmp_path):
    y = tmp_path / "imm.yaml"
    y.write_text("base: classic\nname: imm1000\ntarget: 1000\nend: immediate\n")
    out = tmp_path / "out"
    assert (
        main(
            [
                "analyze",
                "hold:300",
                "--rules",
                str(y),
                "--games",
                "20",
                "--top",
                "3",
                "--workers",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert {p.name for p in out.iterdir()} == {
        "report.json",
        "breakdown.csv",
        "atlas.png",
        "mistakes.jsonl",
        "mistakes",
    }
    assert len(list((out / "mistakes").glob("*.jsonl"))) == 3


def test_ppo_checkpoint_through_the_cli(tmp_path):
    # a checkpoint plays the ruleset it was trained on, and the report names its bytes
    from sb3_contrib import MaskablePPO

    from tenk_env.io import file_sha256
    from tenk_env.policies.ppo import checkpoint_meta, write_checkpoint
    from tenk_env.vector.sb3 import sb3_vec_env

    venv = sb3_vec_env(2, IMM, 2, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    ckpt = write_checkpoint(
        model, tmp_path / "tiny.zip", checkpoint_meta(IMM, 2, activation="tanh", n_actions=venv.action_space.n)
    )
    out = tmp_path / "out"
    assert main(["analyze", f"ppo:{ckpt}", "--games", "6", "--top", "2", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rules_hash"] == IMM.hash and report["agent_sha256"] == file_sha256(ckpt)
    assert report["regret_per_game"] > 0 and report["games"] == 6


#: a 3-player ruleset whose best responses solve in well under a second
FR3 = PRESETS["busche_neller_2017"].replace(target=300, end="final_round", max_rolls=2, entry_threshold=0, name="fr300")
ADVICE = "turn-level advice: the expected points each move banks this turn (the scores and the final round ignored)"


def test_three_player_feedback_names_the_bots_in_seat_order(monkeypatch, tmp_path):
    from tenk_env.evaluation.annotate import scorer_for
    from tenk_env.policies.exact import best_response_n

    monkeypatch.setenv("TENK_CACHE", str(tmp_path))
    # the human in seat 2 between dicenow (seat 1) and maxscore (seat 3); the bots play maxscore, dicenow after it
    middle = dict(seat=1, opponents=["dicenow", "maxscore"])
    first = dict(seat=0, opponents=["maxscore", "dicenow"])
    assert scorer_for(FR3, 3, **middle).note == (
        "no exact feedback (the best response to dicenow in seat 1 and maxscore in seat 3 is not solved: "
        "`tenk solve best-response fr300 maxscore dicenow` solves it, the bots in the order they play after "
        f"seat 2); {ADVICE}"
    )
    assert scorer_for(FR3, 3, **first).note == (
        "no exact feedback (the best response to maxscore in seat 2 and dicenow in seat 3 is not solved: "
        "`tenk solve best-response fr300 maxscore dicenow` solves it, the bots in the order they play after "
        f"seat 1); {ADVICE}"
    )
    best_response_n(FR3, ["maxscore", "dicenow"])
    # one solution serves both seats: the note names the bots where they sit, not in the order they play
    s = scorer_for(FR3, 3, **middle)
    assert s.mode == "best_response" and s.note == (
        "exact win probabilities against dicenow in seat 1 and maxscore in seat 3, playing on as their best "
        "response (br:maxscore,dicenow) would"
    )
    assert scorer_for(FR3, 3, **first).note == (
        "exact win probabilities against maxscore in seat 2 and dicenow in seat 3, playing on as their best "
        "response (br:maxscore,dicenow) would"
    )
    # the last seat is another table: not solved, and the command given is the one that solves it
    assert scorer_for(FR3, 3, seat=2, opponents=["dicenow", "maxscore"]).note == (
        "no exact feedback (the best response to dicenow in seat 1 and maxscore in seat 2 is not solved: "
        "`tenk solve best-response fr300 dicenow maxscore` solves it, the bots in the order they play after "
        f"seat 3); {ADVICE}"
    )


def test_sample_sizes_are_the_measured_spreads_scaled():
    """How many games pin the win rate to +-1 point by regret and by outcome: from the per-deal
    spreads of the games played, the decisions at the measured decisions per game."""
    import math

    a = analyse("dicenow", IMM, 200, seed=4)
    s = a.report.sample_sizes
    r_deal = a.game_regret.reshape(-1, 2).mean(axis=1)
    w_deal = a.game_win.reshape(-1, 2).mean(axis=1)
    z = 1.959963984540054
    assert s["games_by_regret"] == 2 * math.ceil((z * np.std(r_deal, ddof=1) / 0.01) ** 2)
    assert s["games_by_outcome"] == 2 * math.ceil((z * np.std(w_deal, ddof=1) / 0.01) ** 2)
    assert s["decisions_by_regret"] == math.ceil(s["games_by_regret"] * a.report.decisions / 200)
    # regret carries no dice luck of the outcome: fewer games for the same interval
    assert s["games_by_regret"] < s["games_by_outcome"]
    # too few deals for honest intervals: no sizes either
    assert analyse("dicenow", IMM, 20, seed=4).report.sample_sizes is None


def test_no_width_ratio_without_an_empirical_interval():
    """Where the outcomes give no interval (here too many deals split 1-1), nothing is compared:
    no ratio, rather than a nan one printed as "nan times narrower"."""
    r = analyse("greedy", IMM, 60, seed=1).report
    assert math.isnan(r.empirical_ci[0]) and r.implied_ci[1] > r.implied_ci[0]
    assert r.width_ratio is None and "narrower" not in str(r)
