"""Property tests over random rulesets and random legal play (hypothesis)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenk_env.game import Game, Phase
from tenk_env.rules import Ruleset
from tenk_env.tables import get_tables


@st.composite
def rulesets(draw):
    num_dice = draw(st.sampled_from([5, 6]))
    six = num_dice == 6
    three_pairs = draw(st.sampled_from([0, 500, 750, 1500])) if six else 0
    return Ruleset(
        name="random",
        num_dice=num_dice,
        # small targets keep random games short; the rules are the same at any target
        target=draw(st.sampled_from([1000, 1500, 2000, 3000])),
        entry_threshold=draw(st.sampled_from([0, 350, 500, 750])),
        min_bank=draw(st.sampled_from([0, 0, 300])),
        max_rolls=draw(st.sampled_from([0, 0, 1, 3])),
        three_ones=draw(st.sampled_from([300, 1000])),
        multiples=draw(st.sampled_from(["doubling", "flat", "none"])),
        straight=draw(st.sampled_from([0, 1000, 1500])) if six else 0,
        half_straights=draw(st.sampled_from([0, 0, 300])),
        short_straights=draw(st.sampled_from([0, 500])),
        three_pairs=three_pairs,
        four_plus_pair_is_three_pairs=bool(three_pairs) and draw(st.booleans()),
        two_triplets=draw(st.sampled_from([0, 2500])) if six else 0,
        six_of_a_kind_wins=draw(st.sampled_from(["off", "ones", "any"])) if six else "off",
        four_twos_lose_all=draw(st.booleans()),
        zilch_payout=draw(st.sampled_from([0, 0, 500])),
        hot_dice=draw(st.sampled_from(["optional", "mandatory"])),
        end=draw(st.sampled_from(["final_round", "one_more_roll", "immediate"])),
        exact_finish=draw(st.sampled_from(["off", "off", "forfeit", "to_lowest"])),
        tie=draw(st.sampled_from(["first_to_target", "shared"])),
        bust_penalty=draw(st.sampled_from([0, 500, 1000])),
        bust_penalty_after=draw(st.sampled_from([1, 3])),
        piggyback=draw(st.booleans()),
        turn_order=draw(st.sampled_from(["seat", "highest_die"])),
        komi=draw(st.sampled_from([0, 0, 200])),
    )


def explain_scores(before, events):
    """Banked scores after `events`, changed only by the documented events."""
    s = list(before)
    for e in events:
        k = e["type"]
        if k == "bank":
            assert e["score"] == s[e["player"]] + e["points"] and e["points"] >= 0
            s[e["player"]] = e["score"]
        elif k == "penalty":
            assert 0 <= e["points"] and e["score"] == s[e["player"]] - e["points"] >= 0
            s[e["player"]] = e["score"]
        elif k == "lose_all":
            s[e["player"]] = 0
        elif k == "overshoot" and e["to"] is not None:
            s[e["to"]] += e["lost"]
    return s


def play_random(rules, n_players, seed, max_inputs=200_000):
    rng = np.random.default_rng(seed)
    g = Game(rules, n_players)
    inputs = 0
    while not g.over:
        assert inputs < max_inputs, "the game did not end"
        before, n_ev, total = list(g.scores), len(g.events), g.turn_total
        if g.phase == Phase.PIGGYBACK:
            g.piggyback(bool(rng.integers(2)))
        elif g.dice_to_roll:
            info = g.roll(rng.integers(1, 7, g.dice_to_roll))
            new = g.events[n_ev:]
            if info is not None and info.bust:
                assert new[1] == {"type": "bust", "player": new[0]["player"], "lost": total}
                assert g.turn_total == 0 or g.phase == Phase.OVER or g.piggy is None
        else:
            moves = g.legal_moves()
            assert moves, "a scoring roll always has a legal move"
            for k, _ in moves:
                assert k.points > 0
            # lean towards rolling on so that turns get long, but bank often enough to finish
            keep, end = moves[int(rng.integers(len(moves)))]
            g.act(keep, end)
        assert g.scores == explain_scores(before, g.events[n_ev:])
        inputs += 1
    return g


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rulesets(), n_players=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_random_games_keep_every_invariant(rules, n_players, seed):
    g = play_random(rules, n_players, seed)
    w = g.winners
    assert w and len(set(w)) == len(w)
    last = g.events[-2]["type"]
    if last == "instant_win":
        assert w == [g.events[-2]["player"]]
    elif rules.end == "immediate":
        assert len(w) == 1 and g.scores[w[0]] >= rules.target
    else:
        top = max(g.scores)
        assert all(g.scores[p] == top for p in w)
        assert len(w) == 1 or rules.tie == "shared"
        if rules.tie == "shared":
            assert w == [p for p in range(n_players) if g.scores[p] == top]
    assert g.events[-1] == {"type": "game_over", "winners": w, "scores": g.scores}


@settings(max_examples=25, deadline=None)
@given(rules=rulesets())
def test_every_legal_keep_scores(rules):
    t = get_tables(rules)
    for info in t.rolls.values():
        for k in info.keeps:
            assert k.points > 0 and t.score(k.dice) == k.points
        assert info.bust == (not info.keeps and not info.zilch)
