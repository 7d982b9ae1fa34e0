"""The turn machine, driven by hand-fed dice: seed-text turns and every ruleset option."""

import numpy as np
import pytest

from tenk_env.game import Game, IllegalMoveError, Phase
from tenk_env.rules import PRESETS


def snap(g: Game):
    return (
        g.phase,
        g.current,
        list(g.scores),
        g.turn_total,
        g.dice_left,
        g.dice,
        g.rolls,
        len(g.events),
        list(g.on_board),
        list(g.busts_in_row),
        g.final_round,
        g.turn,
        list(g.winners),
    )


def rules(name="classic", **changes):
    return PRESETS[name].replace(**changes) if changes else PRESETS[name]


def types(g, since=0):
    return [e["type"] for e in g.events[since:]]


# ---------------------------------------------------------------- seed-text turns


def test_dicenow_opening_turn_cannot_bank_below_entry():
    g = Game("classic")
    g.roll([1, 1, 5, 2, 3, 4])
    before = snap(g)
    with pytest.raises(
        IllegalMoveError,
        match="not on the board yet and the turn total 250 is below the entry threshold 500; roll instead",
    ):
        g.act([1, 1, 5], end_turn=True)
    assert snap(g) == before
    g.act([1, 1, 5], end_turn=False)
    assert (g.phase, g.turn_total, g.dice_to_roll) == (Phase.ROLL, 250, 3)


def test_fourth_three_does_not_upgrade_the_triple():
    # the six-dice baseline article: 3-3-3-5-2-6, keep the 3s; 3-1-4: the lone 3 is dead; 5-2: keep the 5; bank 450.
    g = Game("article_baseline")
    g.on_board[0] = True
    g.roll([3, 3, 3, 5, 2, 6])
    g.act([3, 3, 3], end_turn=False)
    assert g.turn_total == 300
    g.roll([3, 1, 4])
    with pytest.raises(IllegalMoveError, match=r"keep \[3\] from roll \[1, 3, 4\]: the 3 in \[3\] does not score"):
        g.act([3], end_turn=False)
    with pytest.raises(IllegalMoveError, match=r"keep \[1, 3\] from roll \[1, 3, 4\]: the 3"):
        g.act([1, 3], end_turn=False)
    g.act([1], end_turn=False)
    assert (g.turn_total, g.dice_to_roll) == (400, 2)
    g.roll([5, 2])
    g.act([5], end_turn=True)
    assert g.scores == [450, 0] and g.current == 1
    assert [e["points"] for e in g.events if e["type"] == "keep"] == [300, 100, 50]


def test_walnut_options_on_1_1_3_3_3_5():
    for keep, points, left in [([3, 3, 3], 300, 3), ([1, 1], 200, 4), ([5], 50, 5), ([1, 1, 3, 3, 3, 5], 550, 6)]:
        g = Game("walnut")
        g.on_board[0] = True
        g.roll([1, 1, 3, 3, 3, 5])
        g.act(keep, end_turn=False)
        assert (g.turn_total, g.dice_to_roll) == (points, left)
    g = Game("walnut")
    g.roll([1, 1, 3, 3, 3, 5])
    g.act([1, 1, 3, 3, 3, 5], end_turn=True)  # 550 clears the 500 entry
    assert g.scores == [550, 0]


def test_house_1000_turn_from_seed_001():
    g = Game("house_1000")
    g.roll([1, 1, 2, 4, 5, 6])
    g.act([1, 1, 5], end_turn=False)
    g.roll([6, 6, 6])
    with pytest.raises(IllegalMoveError, match="below the entry threshold 1000"):
        g.act([6, 6, 6], end_turn=True)
    g.act([6, 6, 6], end_turn=False)
    assert (g.turn_total, g.dice_to_roll) == (850, 6)  # hot dice
    assert g.events[-1]["hot_dice"] is True
    g.roll([2, 3, 3, 4, 6, 6])
    assert types(g)[-3:] == ["roll", "bust", "turn"]
    assert g.events[-2]["lost"] == 850
    assert (g.scores, g.current, g.turn_total) == ([0, 0], 1, 0)


def test_once_on_board_any_total_banks():
    g = Game("house_1000")
    g.on_board[0] = True
    g.roll([1, 2, 3, 4, 6, 6])
    g.act([1], end_turn=True)
    assert g.scores == [100, 0]


def test_set_aside_dice_never_combine_with_later_rolls():
    # wikiHow's rules: two 5s set aside, then a third 5 rolled: 150, not 500. The six-dice baseline article: 1, 1, 1 across rolls = 300.
    g = Game("wikihow")
    g.roll([5, 5, 2, 3, 3, 6])
    g.act([5, 5], end_turn=False)
    g.roll([5, 2, 3, 4])
    g.act([5], end_turn=True)
    assert g.scores == [150, 0]
    g = Game(rules("bc_society", turn_order="seat"))
    g.on_board[0] = True
    for dice in ([1, 2, 3, 4, 6, 6], [1, 2, 3, 4, 6], [1, 2, 3, 6]):
        g.roll(dice)
        g.act([1], end_turn=False)
    assert g.turn_total == 300


# ---------------------------------------------------------------- options


def test_mandatory_hot_dice_must_be_rolled():
    g = Game(rules("bc_society", turn_order="seat"))
    g.on_board[0] = True
    g.roll([1, 2, 3, 4, 5, 6])
    with pytest.raises(IllegalMoveError, match="hot dice must be rolled again"):
        g.act([1, 2, 3, 4, 5, 6], end_turn=True)
    g.act([1, 2, 3, 4, 5, 6], end_turn=False)
    assert g.dice_to_roll == 6
    g2 = Game("classic")
    g2.roll([1, 2, 3, 4, 5, 6])
    g2.act([1, 2, 3, 4, 5, 6], end_turn=True)  # optional: may bank
    assert g2.scores == [1500, 0]


def end_game_with(g: Game, p: int, dice, keep):
    assert g.current == p
    g.roll(dice)
    g.act(keep, end_turn=True)


def test_final_round_one_full_turn_each_and_tie_goes_to_first():
    g = Game("classic", 3)
    g.scores[:] = [9000, 9500, 9900]
    g.on_board[:] = [True] * 3
    end_game_with(g, 0, [1, 1, 1, 2, 3, 4], [1, 1, 1])  # 10,000: final round
    assert g.final_round and g.trigger == 0 and types(g)[-3:] == ["bank", "final_round", "turn"]
    # seat 1 needs more than 500: plays a long turn
    g.roll([5, 2, 3, 4, 6, 6])
    g.act([5], end_turn=False)
    g.roll([1, 2, 3, 4, 6])
    g.act([1], end_turn=False)
    g.roll([1, 1, 1, 2])
    g.act([1, 1, 1], end_turn=True)  # 9,500 + 1,150 = 10,650
    assert not g.over and g.current == 2
    end_game_with(g, 2, [5, 5, 2, 3, 4, 6], [5, 5])  # 9,900 + 100 = 10,000: not enough
    assert g.over and g.winners == [1] and g.scores == [10_000, 10_650, 10_000]
    assert g.events[-1] == {"type": "game_over", "winners": [1], "scores": [10_000, 10_650, 10_000]}


def test_final_round_tie_rules():
    for tie, winners in (("first_to_target", [0]), ("shared", [0, 1])):
        g = Game(rules(tie=tie))
        g.scores[:] = [9900, 9900]
        g.on_board[:] = [True, True]
        end_game_with(g, 0, [5, 5, 2, 3, 4, 6], [5, 5])
        end_game_with(g, 1, [5, 5, 2, 3, 4, 6], [5, 5])
        assert g.winners == winners and g.scores == [10_000, 10_000]


def test_final_round_bust_ends_the_game():
    g = Game("classic")
    g.scores[:] = [9900, 0]
    g.on_board[:] = [True, True]
    end_game_with(g, 0, [5, 5, 2, 3, 4, 6], [5, 5])
    g.roll([2, 2, 3, 3, 4, 6])
    assert g.over and g.winners == [0]


def test_one_more_roll_final_turn():
    g = Game(rules("bc_society", turn_order="seat"))
    g.scores[:] = [9900, 9000]
    g.on_board[:] = [True, True]
    end_game_with(g, 0, [5, 5, 2, 3, 4, 6], [5, 5])
    assert g.max_rolls == 1
    g.roll([1, 1, 1, 1, 3, 4])
    before = snap(g)
    with pytest.raises(IllegalMoveError, match="cannot roll again: the 1-roll limit of this turn is reached"):
        g.act([1, 1, 1, 1], end_turn=False)
    assert snap(g) == before
    g.act([1, 1, 1, 1], end_turn=True)  # four 1s doubling: 2,000
    assert g.over and g.winners == [1] and g.scores == [10_000, 11_000]


def test_immediate_end():
    g = Game("busche_neller_2017")
    g.scores[0] = 9900
    end_game_with(g, 0, [5, 5, 2, 3, 4, 6], [5, 5])
    assert g.over and g.winners == [0] and types(g)[-2:] == ["bank", "game_over"]


def test_exact_finish_forfeit_and_to_lowest():
    g = Game(rules(exact_finish="forfeit"))
    g.scores[:] = [9900, 500]
    g.on_board[:] = [True, True]
    g.roll([1, 1, 2, 3, 4, 6])
    g.act([1, 1], end_turn=False)  # 10,100 overshoots: forfeited at once
    assert g.scores == [9900, 500] and g.current == 1 and types(g)[-2:] == ["overshoot", "turn"]
    g = Game(rules(exact_finish="to_lowest"), 3)
    g.scores[:] = [9900, 700, 500]
    g.on_board[:] = [True] * 3
    g.roll([1, 1, 2, 3, 4, 6])
    g.act([1, 1], end_turn=True)
    assert g.scores == [9900, 700, 700] and g.events[-2]["to"] == 2
    g = Game(rules(exact_finish="forfeit"))
    g.scores[:] = [9900, 500]
    g.on_board[:] = [True, True]
    end_game_with(g, 0, [1, 2, 3, 4, 6, 6], [1])  # exactly 10,000
    assert g.final_round and g.trigger == 0


def test_exact_finish_landing_exactly_beats_min_bank_and_gifts_stop_short():
    g = Game(rules("zilch", exact_finish="forfeit"))
    g.scores[:] = [9900, 0]
    end_game_with(g, 0, [1, 2, 3, 4, 6, 6], [1])  # 100 < min bank 300, but it lands on 10,000
    assert g.scores == [10_000, 0] and g.final_round
    g = Game(rules(exact_finish="to_lowest"))
    g.scores[:] = [9900, 9700]
    g.on_board[:] = [True, True]
    g.roll([1, 1, 1, 2, 3, 4])
    g.act([1, 1, 1], end_turn=True)  # 1,000 overshoots; 9,700 + 1,000 would pass the target: lost
    assert g.scores == [9900, 9700] and g.events[-2]["to"] is None


def test_unreachable_entry_under_a_roll_limit_is_refused():
    from tenk_env.rules import RulesetError

    with pytest.raises(RulesetError, match="entry_threshold 5000 cannot be reached in 1 rolls"):
        Game(
            rules(
                max_rolls=1,
                entry_threshold=5000,
                six_of_a_kind_wins="off",
                three_ones=300,
                multiples="none",
                straight=0,
                three_pairs=0,
            )
        )
    # six 1s (8,000) can reach it, one roll in 46,656: too seldom to be a game
    with pytest.raises(RulesetError, match="entry_threshold 5000 is reached within 1 roll with chance 2.1e-05"):
        rules(max_rolls=1, entry_threshold=5000)
    Game(rules(max_rolls=1, entry_threshold=4050))  # five 1s and a 5, six 1s or six 6s: 8 rolls in 6**6


def test_roll_limit_and_stop_below_entry():
    g = Game("inform_five_dice")
    g.roll([5, 2, 2, 3, 6])
    g.act([5], end_turn=False)
    g.roll([5, 2, 3, 6])
    g.act([5], end_turn=False)
    g.roll([1, 2, 3])
    assert g.legal_moves() == [(g.info.keeps[0], True)]  # the roll limit is reached: only ending
    with pytest.raises(IllegalMoveError, match="3-roll limit"):
        g.act([1], end_turn=False)
    g.act([1], end_turn=True)  # 200 < 350 entry: the turn is forfeited
    assert g.scores == [0, 0] and g.events[-2] == {"type": "stop", "player": 0, "lost": 200}


def test_min_bank_every_turn():
    g = Game("zilch")
    g.roll([1, 5, 5, 2, 3, 4])
    with pytest.raises(IllegalMoveError, match="below the minimum bank 300"):
        g.act([1, 5, 5], end_turn=True)
    g.act([1, 5, 5], end_turn=False)
    g.roll([1, 2, 3])
    g.act([1], end_turn=True)
    assert g.scores == [300, 0]


def test_zilch_payout_rolls_again():
    g = Game("zilch")
    g.roll([2, 2, 3, 4, 6, 6])
    assert g.phase == Phase.ROLL and g.turn_total == 500 and g.dice_to_roll == 6 and g.current == 0
    assert g.events[-1] == {"type": "zilch", "player": 0, "points": 500, "turn_total": 500}
    g.roll([1, 2, 3, 3, 4, 6])
    g.act([1], end_turn=True)
    assert g.scores == [600, 0]


def test_three_busts_in_a_row_penalty():
    g = Game("zilch")
    g.scores[:] = [700, 0]

    def bust_round():
        g.roll([1, 2, 3, 4, 6, 6])
        g.act([1], end_turn=False)
        g.roll([2, 2, 3, 4, 6])  # bust on five dice
        g.roll([1, 2, 3, 4, 6, 6])  # seat 1 banks nothing: keeps 1 then busts
        g.act([1], end_turn=False)
        g.roll([2, 2, 3, 4, 6])

    bust_round()
    bust_round()
    assert g.busts_in_row == [2, 2]
    bust_round()
    assert g.scores == [200, 0] and g.busts_in_row == [0, 0]  # 700 - 500; never below zero
    assert [e["points"] for e in g.events if e["type"] == "penalty"] == [500, 0]
    # a turn that does not bust resets the count
    bust_round()
    g.roll([1, 5, 5, 2, 3, 4])
    g.act([1, 5, 5], end_turn=False)
    g.roll([1, 2, 3])
    g.act([1], end_turn=True)
    assert g.busts_in_row == [0, 1]


def test_piggyback():
    r = rules(piggyback=True)
    g = Game(r)
    g.roll([1, 1, 1, 5, 2, 3])
    g.act([1, 1, 1, 5], end_turn=True)  # banks 1,050 leaving two dice
    assert g.phase == Phase.PIGGYBACK and g.piggy == (2, 1050) and g.current == 1
    with pytest.raises(IllegalMoveError, match="no roll is due"):
        g.roll([1, 2])
    g.piggyback(True)
    assert (g.dice_to_roll, g.turn_total) == (2, 1050)
    g.roll([1, 3])
    g.act([1], end_turn=True)
    assert g.scores == [1050, 1150]
    assert g.phase == Phase.PIGGYBACK and g.piggy == (1, 1150)
    g.piggyback(True)
    g.roll([4])  # bust: the inherited total is lost
    assert g.scores == [1050, 1150] and g.events[-2] == {"type": "bust", "player": 0, "lost": 1150}
    assert g.phase == Phase.ROLL and g.current == 1  # no piggyback after a bust
    g2 = Game(r)
    g2.roll([1, 1, 1, 5, 2, 3])
    g2.act([1, 1, 1, 5], end_turn=True)
    g2.piggyback(False)
    assert (g2.dice_to_roll, g2.turn_total) == (6, 0)


def test_instant_win_and_lose_all():
    g = Game("wikihow")
    g.scores[:] = [0, 5000]
    g.roll([1, 1, 1, 1, 1, 1])
    assert g.over and g.winners == [0] and types(g)[-3:] == ["roll", "instant_win", "game_over"]
    g = Game(rules("wikihow", four_twos_lose_all=True))
    g.scores[:] = [4000, 0]
    g.on_board[0] = True
    g.roll([2, 2, 2, 2, 1, 5])
    assert g.scores == [0, 0] and g.current == 1
    assert g.events[-2] == {"type": "lose_all", "player": 0, "lost": 4000, "turn_total": 0}


def test_highest_die_turn_order_and_komi():
    g = Game("bc_society", 3)
    assert g.phase == Phase.ORDER and g.dice_to_roll == 3
    g.roll([6, 6, 2])
    assert g.phase == Phase.ORDER and g.dice_to_roll == 2
    g.roll([2, 4])
    assert g.phase == Phase.ROLL and g.current == 1
    assert [e["type"] for e in g.events[1:]] == ["order_roll", "order_roll", "turn"]
    k = Game(rules(komi=150))
    assert k.scores == [0, 150] and not k.on_board[1]


@pytest.mark.parametrize(
    "bad",
    [
        [1, 2, 3],
        [1, 2, 3, 4, 5, 7],
        [0, 1, 2, 3, 4, 5],
        [1, 2, 3, 4, 5, 2.5],
        [1, 2, 3, 4, 5, "3"],
        [1, 2, 3, 4, 5, None],
        6,
    ],
)
def test_bad_rolls_raise_and_change_nothing(bad):
    g = Game("classic")
    before = snap(g)
    with pytest.raises(IllegalMoveError, match=r"expected 6 dice with faces 1 to 6|give the 6 faces as a list"):
        g.roll(bad)
    assert snap(g) == before


def test_rolls_take_any_whole_number_faces():
    # numpy integers and whole floats are faces; the event records plain ints
    g = Game("classic")
    assert g.roll(np.array([4, 1, 1, 2, 3, 1], np.int8)).dice == (1, 1, 1, 2, 3, 4)
    g2 = Game("classic")
    g2.roll([4.0, 1, 1, 2, 3, 1])
    assert g.events == g2.events and type(g.events[-1]["dice"][0]) is int


def test_bad_keeps_raise_and_change_nothing():
    g = Game("classic")
    with pytest.raises(IllegalMoveError, match="no decision is due: the game is in phase ROLL"):
        g.act([1], end_turn=False)
    g.roll([1, 5, 2, 3, 3, 6])
    before = snap(g)
    for keep, msg in [
        ([1, 1], r"keep \[1, 1\] is not part of the roll \[1, 2, 3, 3, 5, 6\]"),
        ([], "at least one scoring die"),
        ([2], "the 2 in"),
        (["x"], "give the kept dice as faces"),
        ([1, 5, 6], "the 6 in"),
    ]:
        with pytest.raises(IllegalMoveError, match=msg):
            g.act(keep, end_turn=False)
        assert snap(g) == before
    with pytest.raises(IllegalMoveError, match="no roll is due"):
        g.roll([1, 2, 3, 4, 5, 6])
    with pytest.raises(IllegalMoveError, match="no piggyback choice"):
        g.piggyback(True)
    assert snap(g) == before


@pytest.mark.parametrize("n", [1, 9, "2", 2.0, True])
def test_player_count_is_checked(n):
    with pytest.raises(ValueError, match="the engine plays 2 to 8 players"):
        Game("classic", n)


ROLL_HOW = "give the kept dice as faces 1 to 6 from the roll [1, 2, 3, 3, 5, 6], e.g. [1]"


@pytest.mark.parametrize(
    "keep, msg",
    [
        # a negative face once indexed the counts from the end: [-1] kept a 5, [0, -5] read as [6, 1]
        ([-1], f"keep [-1]: entry -1 is not a face; {ROLL_HOW}"),
        ([0, -5], f"keep [0, -5]: entry 0 is not a face; {ROLL_HOW}"),
        ([5, 7], f"keep [5, 7]: entry 7 is not a face; {ROLL_HOW}"),
        ([True], f"keep [True]: entry True is a bool, not a face; {ROLL_HOW}"),
        ([np.True_], f"keep [np.True_]: entry np.True_ is a bool, not a face; {ROLL_HOW}"),
        ([1, 5.0], f"keep [1, 5.0]: entry 5.0 is a float, not a face; {ROLL_HOW}"),
        ([1, 2.5], f"keep [1, 2.5]: entry 2.5 is a float, not a face; {ROLL_HOW}"),
        (["5"], f"keep ['5']: entry '5' is a str, not a face; {ROLL_HOW}"),
        ("15", f"keep '15': a string is not a list of dice; {ROLL_HOW}"),
        (5, f"keep 5 is not a list of dice; {ROLL_HOW}"),
        (None, f"keep None is not a list of dice; {ROLL_HOW}"),
        ([4], "keep [4] is not part of the roll [1, 2, 3, 3, 5, 6]: the roll has no 4"),
        ([5, 5, 5], "keep [5, 5, 5] is not part of the roll [1, 2, 3, 3, 5, 6]: the roll has only one 5"),
    ],
)
def test_keeps_are_faces_of_the_roll_or_refused(keep, msg):
    g = Game("classic")
    g.roll([1, 5, 2, 3, 3, 6])
    before = snap(g)
    with pytest.raises(IllegalMoveError) as e:
        g.act(keep, end_turn=False)
    assert str(e.value) == msg
    assert snap(g) == before


def test_a_keep_past_the_faces_rolled_names_the_face():
    g = Game("classic")
    g.roll([1, 1, 5, 2, 3, 3])
    with pytest.raises(IllegalMoveError) as e:
        g.act([1, 1, 1], end_turn=False)
    assert str(e.value) == "keep [1, 1, 1] is not part of the roll [1, 1, 2, 3, 3, 5]: the roll has only two 1s"


@pytest.mark.parametrize("end", ["no", "False", None, 2, -1, 0.0, 1.0, np.float64(1.0), [False]])
def test_end_turn_must_be_a_yes_or_no(end):
    g = Game("classic")
    g.roll([1, 5, 2, 3, 3, 6])
    before = snap(g)
    with pytest.raises(IllegalMoveError) as e:
        g.act([1], end)
    assert str(e.value) == f"end_turn {end!r}: give True to end the turn (bank) or False to roll on"
    assert snap(g) == before


def test_numpy_faces_and_flags_play_as_plain_ones():
    plain, mixed = Game("classic"), Game("classic")
    for g, keep, end in [(plain, [1, 5], False), (mixed, np.array([5, 1], np.int8), np.False_)]:
        g.roll([1, 5, 2, 3, 3, 6])
        g.act(keep, end)
        g.roll([1, 1, 1, 2])
        g.act((np.int64(1), 1, 1), 1 if g is mixed else True)
    assert mixed.events == plain.events and mixed.scores == plain.scores == [1150, 0]
    first, second = mixed.events[-5], mixed.events[-3]
    assert type(first["dice"][0]) is int and first["end_turn"] is False and second["end_turn"] is True
