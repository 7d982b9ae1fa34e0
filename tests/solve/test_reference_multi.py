"""The brute-force N-player reference (tests/support/reference_multi.py) held to what exists.

Two players: the exact evaluator and best response of tenk_env.policies.exact, to 1e-9.
Three players: a seat-rotated free-for-all sampled on the batched engine. The sharing the
reference relies on for speed (turns computed once per bot view, last-roll keeps, final-round
merges) against the reference with nothing shared, on whole games with an immediate end and
from final-round states. Rulesets are tiny (a 500 or 1,000 target, two rolls a turn or an
immediate end) so that the slow reference runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tenk_env.evaluation.match import play_table
from tenk_env.policies.exact import best_response, exact_eval
from tenk_env.rules import PRESETS

from support.reference_multi import check_rules, reference_br, reference_eval, reference_state

BN = PRESETS["busche_neller_2017"]
#: no final round, the classic table (turns of two rolls keep the reference quick)
IMM = PRESETS["classic"].replace(target=500, end="immediate", max_rolls=2)
#: a final round, two rolls a turn, singles and triples only (the exact tests' FR2 at 500)
FR2 = BN.replace(target=500, end="final_round", max_rolls=2, entry_threshold=300)
#: the others get one roll after the trigger
OMR = BN.replace(target=500, end="one_more_roll", max_rolls=2, entry_threshold=300)
#: small enough to solve with nothing shared: every move asked at every turn start
TINY = BN.replace(target=300, end="immediate", max_rolls=2, entry_threshold=150)


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TENK_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


# ---------------------------------------------------------------------------- two players: the exact engine
@pytest.mark.parametrize(
    "rules, a, b, bot",
    [
        (IMM, "dicenow", "hold:300", "dicenow"),
        (FR2, "breakeven", "maxscore", "maxscore"),
        (OMR, "greedy", "dicenow", "breakeven"),
    ],
    ids=["immediate", "final_round", "one_more_roll"],
)
def test_two_players_match_the_exact_engine(rules, a, b, bot):
    P = reference_eval(rules, [a, b])
    e = exact_eval(rules, a, b, cache=False)
    assert P[0, 0] == pytest.approx(e.p_a_first, abs=1e-9)
    assert P[1, 0] == pytest.approx(e.p_a_second, abs=1e-9)
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    p = reference_br(rules, [bot])
    br = best_response(rules, bot, cache=False)
    assert p[0] == pytest.approx(br.p_first, abs=1e-9)
    assert p[1] == pytest.approx(br.p_second, abs=1e-9)


# ---------------------------------------------------------------------------- the sharing is sound
def test_sharing_is_sound_on_whole_games():
    # an immediate end keeps the game small enough to ask every move at every turn start
    # (the 0.7/0.2-of-target scoreboard rules of dicenow and breakeven bind at this target)
    P = reference_eval(TINY, ["dicenow", "breakeven", "greedy"])
    Q = reference_eval(TINY, ["dicenow", "breakeven", "greedy"], share_turns=False)
    assert np.abs(P - Q).max() < 1e-13
    p = reference_br(TINY, ["maxscore", "hold:200"])
    q = reference_br(TINY, ["maxscore", "hold:200"], share_turns=False)
    assert np.abs(p - q).max() < 1e-13


@pytest.mark.parametrize(
    "rules, specs, scores, mover, trigger, responder",
    [
        (FR2, ["dicenow", "breakeven", "hold:300"], (650, 400, 350), 1, 0, False),
        (FR2, ["dicenow", "maxscore", "breakeven", "dicenow"], (700, 300, 450, 400), 2, 0, False),
        (FR2, ["breakeven", "dicenow"], (350, 400, 700), 0, 2, True),
        (OMR, ["dicenow", "breakeven", "maxscore"], (600, 450, 300), 1, 0, False),
        (OMR, ["dicenow", "breakeven"], (400, 550, 450), 0, 1, True),
    ],
)
def test_sharing_is_sound_in_final_rounds(rules, specs, scores, mover, trigger, responder):
    # from a final-round turn start the rest of the game is small: solved both ways
    a = reference_state(rules, specs, scores, mover, trigger, responder=responder)
    b = reference_state(rules, specs, scores, mover, trigger, responder=responder, share_turns=False)
    assert np.abs(np.asarray(a) - np.asarray(b)).max() < 1e-13
    if not responder:
        assert float(np.sum(a)) == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------------------------- three players
TRIO = ["dicenow", "maxscore", "hold:300"]


@pytest.fixture(scope="module")
def trio():
    return reference_eval(FR2, TRIO)


def test_three_players_match_a_sampled_free_for_all(trio):
    P = trio
    assert np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    games = 180_000
    r = play_table(FR2, TRIO, games, seed=11)
    # every deal is played in the 3 rotations: the share of an agent is the mean of P over
    # the rotations, and a deal's 3 games are not independent, so the bound on the standard
    # error counts deals, not games (the mean of 3 correlated games varies no more than one)
    deals = r.games // 3
    for i in range(3):
        p = P[:, i].mean()
        assert abs(r.win_rate[i] - p) < 3 * math.sqrt(p * (1 - p) / deals), (TRIO[i], r.win_rate[i], p)
    p = P.diagonal().mean()
    assert abs(r.first_seat_win_rate - p) < 3 * math.sqrt(p * (1 - p) / deals)


def test_rotating_the_list_rotates_the_table():
    # the same cyclic order written from another seat is the same game
    P = reference_eval(FR2, ["hold:300", "maxscore", "greedy"])
    Q = reference_eval(FR2, ["maxscore", "greedy", "hold:300"])
    assert np.abs(Q - np.roll(np.roll(P, -1, axis=0), -1, axis=1)).max() < 1e-14
    # a game posed at its start is the game
    v = reference_state(FR2, ["hold:300", "maxscore", "greedy"], (0, 0, 0), 2)
    assert np.abs(v - P[2]).max() < 1e-14


# ---------------------------------------------------------------------------- what it refuses
def test_refuses_what_it_does_not_model():
    with pytest.raises(ValueError, match="piggyback"):
        check_rules(PRESETS["classic"].replace(piggyback=True), 2)
    with pytest.raises(ValueError, match="bust_penalty"):
        reference_eval(PRESETS["zilch"], ["hold:300", "dicenow"])
    with pytest.raises(ValueError, match="2 to 4 players"):
        check_rules(IMM, 5)
    with pytest.raises(ValueError, match="deterministic bots"):
        reference_eval(IMM, ["random", "dicenow"])
    with pytest.raises(ValueError, match="roll limit"):
        reference_br(PRESETS["classic"].replace(target=1000), ["dicenow"])
