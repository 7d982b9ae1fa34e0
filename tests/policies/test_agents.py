"""The heuristic bots on hand-made positions from the Dice.now text, every agent under every
ruleset, agent specs, play_game's dice sources, and the terminal player driven by script."""

import builtins
import itertools

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.play import GameTooLongError, KeyedDice, RngDice, ScriptedDice, play_game, play_terminal
from tenk_env.game import Game, Phase
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.policies.heuristic import GREEDY_DEFAULT_BAR, context, take_piggyback
from tenk_env.policies.human import HumanAgent
from tenk_env.records import replay
from tenk_env.rules import PRESETS
from tenk_env.tables import get_tables

RNG = np.random.default_rng(0)
CLASSIC = PRESETS["classic"]


def pos(rules="classic", *, dice, total=0, scores=(0, 0), on_board=None, current=0, final=False, rolls=0):
    """A game in the DECIDE phase: seat ``current`` has ``total`` on the table and rolled ``dice``.
    ``final``: the final round is on, triggered by the highest-scoring other seat."""
    g = Game(rules, len(scores))
    g.scores = list(scores)
    g.on_board = list(on_board) if on_board is not None else [True] * len(scores)
    g.current, g.turn_total, g.dice_left, g.rolls = current, total, len(dice), rolls
    if final:
        others = [q for q in range(len(scores)) if q != current]
        g.final_round, g.trigger, g.final_turns_left = True, max(others, key=lambda q: scores[q]), 1
    g.roll(dice)
    assert g.phase == Phase.DECIDE
    return g


def move(spec, g):
    k, end = make_agent(spec).decide(g, RNG)
    assert (k, end) in g.legal_moves()
    return k.dice, end


ROLL, BANK = False, True


# ---------------------------------------------------------------- dicenow: the text's last section


@pytest.mark.parametrize(
    "dice, total, expected",
    [
        # "banks at 300 or more with three or fewer dice left"
        ((1, 3), 200, ((1,), BANK)),  # 300, 1 die left
        ((1, 3), 150, ((1,), ROLL)),  # 250
        ((1, 2, 3), 200, ((1,), BANK)),  # 300, 2 left
        ((1, 2, 3, 4), 200, ((1,), BANK)),  # 300, 3 left
        ((1, 2, 3, 4), 150, ((1,), ROLL)),
        # "at 1,000 with four"
        ((1, 2, 3, 4, 6), 900, ((1,), BANK)),
        ((1, 2, 3, 4, 6), 850, ((1,), ROLL)),
        # "and at 2,500 with five"
        ((1, 2, 2, 3, 4, 6), 2400, ((1,), BANK)),
        ((1, 2, 2, 3, 4, 6), 2350, ((1,), ROLL)),
    ],
)
def test_dicenow_bars_by_dice_left(dice, total, expected):
    assert move("dicenow", pos(dice=dice, total=total)) == expected


@pytest.mark.parametrize(
    "scores, total, expected",
    [
        ((3000, 7050), 400, ROLL),  # 4,050 behind, leader past 7,000: bar 600, 500 is not enough
        ((3000, 7050), 500, BANK),  # 600 reaches it
        ((5050, 7050), 400, ROLL),  # exactly 2,000 behind counts
        ((5100, 7050), 400, BANK),  # 1,950 behind: bar 300
        ((3000, 7000), 400, BANK),  # 7,000 is not past 7,000
        ((7050, 3000), 400, BANK),  # ahead: bar 300
    ],
)
def test_dicenow_raises_its_bar_to_600_when_far_behind_late(scores, total, expected):
    assert move("dicenow", pos(dice=(1, 2, 3, 4), total=total, scores=scores)) == ((1,), expected)


def test_dicenow_600_bar_leaves_the_higher_bars_and_reads_the_leader_among_others():
    # the 1,000 bar with four dice left is above 600 and stays
    assert move("dicenow", pos(dice=(1, 2, 3, 4, 6), total=900, scores=(3000, 7050))) == ((1,), BANK)
    # three players: 6,100 is only 950 behind seat 1 but 2,000 behind seat 2, the leader
    assert move("dicenow", pos(dice=(1, 2, 3, 4), total=400, scores=(6100, 7050, 8100))) == ((1,), ROLL)
    assert move("dicenow", pos(dice=(1, 2, 3, 4), total=400, scores=(6100, 7050, 7100))) == ((1,), BANK)
    # seat 1 deciding: the others are seats 0 and 2
    assert move("dicenow", pos(dice=(1, 2, 3, 4), total=400, scores=(8100, 6100, 10), current=1)) == ((1,), ROLL)


@pytest.mark.parametrize("spec", ["dicenow", "breakeven"])
def test_final_turn_rolls_until_it_beats_the_leader(spec):
    # the opponent reached 10,200; only a total that beats it is worth anything
    assert move(spec, pos(dice=(1, 3), total=1150, scores=(9000, 10200), final=True)) == ((1,), BANK)
    assert move(spec, pos(dice=(1, 3), total=1100, scores=(9000, 10200), final=True)) == ((1,), ROLL)  # a tie loses
    # 2,100 with four dice would bank at any other time
    assert move(spec, pos(dice=(1, 2, 3, 4, 6), total=2000, scores=(8000, 10200), final=True)) == ((1,), ROLL)
    # banking wins: decline the hot dice
    assert move(spec, pos(dice=(1, 5), total=1100, scores=(9000, 10200), final=True)) == ((1, 5), BANK)


def test_dicenow_entry_rule():
    off = (False, False)
    # not on the board: bank once the entry is reached, even with five dice left ...
    assert move("dicenow", pos(dice=(1, 2, 2, 3, 4, 6), total=450, on_board=off)) == ((1,), BANK)
    # ... where on the board the 2,500 bar says roll
    assert move("dicenow", pos(dice=(1, 2, 2, 3, 4, 6), total=450)) == ((1,), ROLL)
    # 1+5 reaches 500 and banks; from 300 nothing reaches 500, so keep the 1 and roll two
    assert move("dicenow", pos(dice=(1, 3, 5), total=350, on_board=off)) == ((1, 5), BANK)
    assert move("dicenow", pos(dice=(1, 3, 5), total=300, on_board=off)) == ((1,), ROLL)
    # hot dice are rolled even when banking would put it on the board
    assert move("dicenow", pos(dice=(1, 5), total=400, on_board=off)) == ((1, 5), ROLL)
    # house_1000: the entry is 1,000
    assert move("dicenow", pos("house_1000", dice=(1, 2, 2, 3, 4, 6), total=850, on_board=off)) == ((1,), ROLL)
    assert move("dicenow", pos("house_1000", dice=(1, 2, 2, 3, 4, 6), total=900, on_board=off)) == ((1,), BANK)


def test_dicenow_always_rolls_hot_dice_unless_banking_wins():
    # 3,150 on the table and six fresh dice: roll (rather than keep the 1 alone and bank 3,100)
    assert move("dicenow", pos(dice=(1, 5), total=3000)) == ((1, 5), ROLL)
    assert move("dicenow", pos(dice=(1, 5), total=200, scores=(9700, 0))) == (
        (1, 5),
        ROLL,
    )  # final_round: 10,050 is no win
    # end: immediate (busche_neller_2017): 10,050 wins at once, so bank
    assert move("dicenow", pos("busche_neller_2017", dice=(1, 5), total=200, scores=(9700, 0))) == ((1, 5), BANK)


def test_dicenow_keeps_a_single_1_and_rolls_five():
    # "it will keep a single 1 and roll five dice rather than take a 5 as well"
    assert move("dicenow", pos(dice=(1, 2, 2, 3, 5, 6))) == ((1,), ROLL)
    assert move("dicenow", pos(dice=(1, 2, 2, 3, 5, 6), on_board=(False, False))) == ((1,), ROLL)
    # the weighing: T'(1 - bust) + mean: a 1 and five dice 318.3 beats two 1s and four dice 312.6
    assert move("dicenow", pos(dice=(1, 1, 2, 3, 4, 6))) == ((1,), ROLL)
    # ... and beats three 2s and a 1 banked (300)
    assert move("dicenow", pos(dice=(1, 2, 2, 2, 3, 4))) == ((1,), ROLL)
    # once it will bank, dice kept are not at risk: take the 5 as well
    assert move("dicenow", pos(dice=(1, 2, 3, 5), total=200)) == ((1, 5), BANK)


# ---------------------------------------------------------------- breakeven: the strategy section


def test_breakeven_totals_come_from_the_exact_odds():
    be = context(get_tables(CLASSIC)).breakeven[1:]
    # the text: 37, 113, 312, 912, 2,925, 16,500 (rounded from the rounded odds)
    assert [round(x, 2) for x in be] == [37.5, 112.5, 312.5, 911.76, 2926.25, 16491.67]


@pytest.mark.parametrize(
    "dice, total, expected",
    [
        ((1, 3), 0, ((1,), BANK)),  # 100 with one die: above 37.5
        ((1, 2, 3), 0, ((1,), ROLL)),  # 100 with two dice: below 112.5
        ((1, 2, 3), 50, ((1,), BANK)),  # 150
        ((1, 2, 3, 4), 250, ((1,), BANK)),  # 350 with three: above 312.5
        ((1, 2, 3, 4), 200, ((1,), ROLL)),  # 300
        ((1, 2, 3, 4, 6), 850, ((1,), BANK)),  # 950 with four: above 911.8
        ((1, 2, 3, 4, 6), 800, ((1,), ROLL)),
        ((1, 2, 2, 3, 5, 6), 0, ((1,), ROLL)),  # do not grab the lone 5
        ((1, 1, 2, 3, 4, 6), 0, ((1, 1), ROLL)),  # two 1s: keep both, roll four (the text, unlike dicenow)
        ((1, 1, 2, 3, 4, 6), 2000, ((1, 1), BANK)),  # 2,200 with four dice: bank, taking both
        ((1, 2, 3, 5), 200, ((1, 5), BANK)),  # planning to bank: take everything
        ((1, 2, 2, 2, 3, 4), 0, ((1, 2, 2, 2), BANK)),  # read the whole roll: 300 with two dice banks
        ((1, 5), 1000, ((1, 5), ROLL)),  # always roll hot dice
        ((1, 2, 3, 4, 5, 6), 0, ((1, 2, 3, 4, 5, 6), ROLL)),  # the straight, not the 1 and the 5
    ],
)
def test_breakeven_decisions(dice, total, expected):
    assert move("breakeven", pos(dice=dice, total=total)) == expected


@pytest.mark.parametrize(
    "scores, total, expected",
    [
        ((3000, 7050), 500, ROLL),  # 2,000+ behind late: 625 with three dice
        ((3000, 7050), 550, BANK),
        ((3000, 7000), 500, BANK),  # not late: 312.5
        ((7050, 5000), 100, BANK),  # 2,000+ ahead late: 156.25
        ((7050, 5100), 100, ROLL),  # 1,950 ahead: 312.5
    ],
)
def test_breakeven_plays_the_scoreboard_late(scores, total, expected):
    assert move("breakeven", pos(dice=(1, 2, 3, 4), total=total, scores=scores)) == ((1,), expected)


def test_breakeven_entry_then_break_even_table():
    off = (False, False)
    assert move("breakeven", pos(dice=(1, 2, 2, 3, 4, 6), total=450, on_board=off)) == ((1,), BANK)
    assert move("breakeven", pos(dice=(1, 2, 2, 3, 4, 6), total=350, on_board=off)) == ((1,), ROLL)
    assert move("breakeven", pos(dice=(1, 5), total=400, on_board=off)) == ((1, 5), ROLL)  # hot dice
    assert move("breakeven", pos("busche_neller_2017", dice=(1, 5), total=200, scores=(9700, 0))) == ((1, 5), BANK)


# ---------------------------------------------------------------- greedy and hold


def test_hold_banks_at_its_total_whatever_the_dice():
    assert move("hold:300", pos(dice=(2, 3, 5), total=250)) == ((5,), BANK)
    assert move("hold:300", pos(dice=(2, 3, 5), total=200)) == ((5,), ROLL)
    assert move("hold:300", pos(dice=(1, 5), total=250)) == ((1, 5), BANK)  # Pig: hot dice too
    assert move("hold", pos(dice=(1, 5), total=150)) == ((1, 5), BANK)  # default 300
    assert move("hold:1000", pos(dice=(1, 1, 1, 2, 3, 4))) == ((1, 1, 1), BANK)
    assert move("hold:1050", pos(dice=(1, 1, 1, 2, 3, 4))) == ((1, 1, 1), ROLL)
    # the rules come first: no bank below the entry, none on mandatory hot dice
    assert move("hold:300", pos(dice=(2, 3, 5), total=250, on_board=(False, False))) == ((5,), ROLL)
    bc = PRESETS["bc_society"].replace(turn_order="seat")  # mandatory hot dice
    assert move("hold:300", pos(bc, dice=(1, 5), total=250)) == ((1, 5), ROLL)


def test_greedy_keeps_every_scoring_die():
    assert GREEDY_DEFAULT_BAR == 250
    assert move("greedy", pos(dice=(1, 2, 2, 3, 5, 6))) == ((1, 5), ROLL)
    assert move("greedy", pos(dice=(1, 2, 2, 3, 5, 6), total=100)) == ((1, 5), BANK)
    assert move("greedy:500", pos(dice=(1, 2, 2, 3, 5, 6), total=300)) == ((1, 5), ROLL)
    # zilch: 1-1-1-1-2-2 reads as three pairs (1,500, all six dice) or four 1s (2,000)
    assert move("greedy", pos("zilch", dice=(1, 1, 1, 1, 2, 2))) == ((1, 1, 1, 1, 2, 2), BANK)
    assert move("hold:300", pos("zilch", dice=(1, 1, 1, 1, 2, 2))) == ((1, 1, 1, 1), BANK)


# ---------------------------------------------------------------- the rules layer


@pytest.mark.parametrize("spec", ["dicenow", "breakeven", "greedy", "hold:300", "hold:5000"])
def test_last_roll_takes_the_most_points(spec):
    # inform_five_dice: the third roll of the turn is the last
    g = pos("inform_five_dice", dice=(1, 2, 2, 3, 5), total=100, rolls=2)
    assert move(spec, g) == ((1, 5), BANK)


@pytest.mark.parametrize("spec", ["dicenow", "breakeven", "greedy", "hold:300"])
def test_exact_finish_lands_on_the_target(spec):
    rules = CLASSIC.replace(name="exact", exact_finish="forfeit")
    # 1+5 would overshoot 10,000 and forfeit; the 1 lands exactly and is banked
    assert move(spec, pos(rules, dice=(1, 2, 5), scores=(9900, 0))) == ((1,), BANK)
    # the game lets an exact landing bank even below the entry threshold
    assert move(spec, pos(rules, dice=(2, 3, 5), total=50, scores=(9900, 0), on_board=(False, False))) == ((5,), BANK)


def test_piggyback_weighs_one_roll_of_the_dice_left():
    c = context(get_tables(CLASSIC))
    assert [take_piggyback(c, 3, t) for t in (400, 450)] == [False, True]
    assert [take_piggyback(c, 1, t) for t in (1050, 1100)] == [False, True]
    assert [take_piggyback(c, 6, t) for t in (0, 50)] == [False, True]
    g = Game(CLASSIC.replace(name="piggy", piggyback=True))
    for t, want in ((200, True), (150, False)):
        g.piggy = (5, t)
        assert [make_agent(s).piggyback(g, RNG) for s in ("dicenow", "breakeven", "greedy", "hold:300")] == [want] * 4


# ---------------------------------------------------------------- every agent, every ruleset

SPECS = ["random", "greedy", "hold:300", "hold:0", "dicenow", "breakeven"]
EXTRA = {
    "piggyback": CLASSIC.replace(name="piggy", piggyback=True),
    "exact_forfeit": CLASSIC.replace(name="exact", exact_finish="forfeit", target=3000),
    "exact_to_lowest": CLASSIC.replace(name="lowest", exact_finish="to_lowest", target=3000),
    "one_more_roll": CLASSIC.replace(name="omr", end="one_more_roll", min_bank=300),
    "penalty_order": PRESETS["scribd_farkle"].replace(
        name="sp", bust_penalty=1000, piggyback=True, turn_order="highest_die", tie="shared"
    ),
    "five_dice_limits": PRESETS["inform_five_dice"].replace(name="fd", end="final_round", hot_dice="mandatory"),
}
RULESETS = {**PRESETS, **EXTRA}


class Checked:
    """Wraps an agent and asserts that every move it returns is legal."""

    def __init__(self, spec, counts):
        self.agent, self.counts = make_agent(spec), counts
        self.name = self.agent.name

    def check(self, rules, n):
        self.agent.check(rules, n)

    def decide(self, game, rng):
        move = self.agent.decide(game, rng)
        assert move in game.legal_moves(), (self.name, game)
        self.counts[self.name] = self.counts.get(self.name, 0) + 1
        return move

    def piggyback(self, game, rng):
        self.counts["piggy"] = self.counts.get("piggy", 0) + 1
        return self.agent.piggyback(game, rng)


@pytest.mark.parametrize("rules", list(RULESETS))
def test_every_agent_plays_full_games_under_every_ruleset(rules):
    counts = {}
    for n in (2, 3):
        for i in range(len(SPECS)):
            seats = [Checked(SPECS[(i + j) % len(SPECS)], counts) for j in range(n)]
            g = play_game(RULESETS[rules], seats, 1000 * n + i, record=False, max_turns=5000)
            assert g.over and g.winners
    assert set(counts) >= {a.name for a in map(make_agent, SPECS)}
    if RULESETS[rules].piggyback:
        assert counts["piggy"] > 0


def test_eight_players():
    counts = {}
    seats = [Checked(s, counts) for s in SPECS + ["dicenow", "breakeven"]]
    g = play_game("classic", seats, 8, max_turns=5000)
    assert g.over and len(g.scores) == 8 and max(g.scores) >= 10_000
    assert replay(g.events).winners == g.winners


# ---------------------------------------------------------------- specs


@pytest.mark.parametrize(
    "spec, message",
    [
        ("dicenoww", "unknown agent 'dicenoww' (did you mean 'dicenow'?)"),
        ("hold:abc", "agent 'hold:abc': the bar must be a whole number of points >= 0, e.g. 'hold:300'"),
        ("hold:-5", "agent 'hold:-5': the bar must be a whole number of points >= 0"),
        ("greedy:1.5", "agent 'greedy:1.5': the bar must be a whole number"),
        ("dicenow:600", "agent 'dicenow' takes no parameter (got 'dicenow:600'); write 'dicenow'"),
        ("breakeven:x", "agent 'breakeven' takes no parameter"),
        ("human:me", "agent 'human' takes no parameter"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(AgentError) as e:
        make_agent(spec)
    assert message in str(e.value)


def test_specs_and_names():
    assert [make_agent(s).name for s in ("greedy", "greedy:400", "hold", "hold:350", "dicenow", "breakeven")] == [
        "greedy",
        "greedy:400",
        "hold:300",
        "hold:350",
        "dicenow",
        "breakeven",
    ]
    for s in ("dicenow", "hold:300", "human"):
        with pytest.raises(AgentError, match="plays 2 to 8 players, not 9"):
            make_agent(s).check(CLASSIC, 9)
    with pytest.raises(AgentError, match="3 agents for 2 players: give one agent per seat"):
        play_game("classic", ["dicenow"] * 3, 0, n_players=2)
    with pytest.raises(AgentError, match="give one agent per seat"):
        play_game("classic", "dicenow", 0)


# ---------------------------------------------------------------- play_game and dice sources


def test_play_game_is_reproducible_from_its_seeds():
    a = play_game("classic", ["random", "dicenow"], 7)
    b = play_game("classic", ["random", "dicenow"], np.random.default_rng(7))
    c = play_game("classic", ["random", "dicenow"], 8)
    assert a.events == b.events == play_game("classic", ["random", "dicenow"], RngDice(7)).events != c.events
    # agent randomness is separate: other agent draws, the same dice at the first roll
    d = play_game("classic", ["random", "dicenow"], 7, np.random.default_rng(1))
    e = play_game("classic", ["random", "dicenow"], 7, np.random.default_rng(1))
    assert d.events == e.events
    first = [ev for ev in a.events if ev["type"] == "roll"][0]
    assert first == [ev for ev in d.events if ev["type"] == "roll"][0]
    # one agent for every seat
    assert len(play_game("classic", ["hold:300"], 3, n_players=4).scores) == 4


def first_rolls(game):
    """(seat, the seat's turn number) -> the turn's first roll."""
    out, turns = {}, {}
    for i, ev in enumerate(game.events):
        if ev["type"] == "turn":
            p = ev["player"]
            turns[p] = turns.get(p, -1) + 1
            roll = next(e for e in game.events[i:] if e["type"] == "roll")
            out[p, turns[p]] = roll["dice"]
    return out


def test_keyed_dice_give_both_seat_orders_the_same_dice():
    ab = play_game("classic", ["dicenow", "hold:300"], KeyedDice(11))
    ba = play_game("classic", ["hold:300", "dicenow"], KeyedDice(11))
    x, y = first_rolls(ab), first_rolls(ba)
    common = x.keys() & y.keys()
    assert len(common) >= 20
    assert all(x[k] == y[k] for k in common)
    # and the aligned rolls go on within a turn while the players roll the same dice
    assert ab.events[:8] == play_game("classic", ["dicenow", "hold:300"], KeyedDice(11)).events[:8]


def test_scripted_dice_play_the_given_rolls_and_say_when_they_run_out():
    # P1 keeps three 1s and banks 1,000; P2 busts; P1's next turn finds no dice left
    with pytest.raises(ValueError, match=r"the scripted dice ran out after 2 rolls; the game wants 6 more dice"):
        play_game("classic", ["hold:0", "hold:0"], ScriptedDice([[1, 1, 1, 2, 3, 4], [2, 2, 3, 3, 4, 6]]))


def test_game_too_long():
    with pytest.raises(GameTooLongError, match="game not over after 3 turns"):
        play_game("classic", ["hold:300", "hold:300"], 0, max_turns=3)


# ---------------------------------------------------------------- the terminal player


def scripted(answers_for):
    """An input function answering from per-prompt queues (a cycle of answers per prompt kind)."""
    cycles = {k: itertools.cycle(v) for k, v in answers_for.items()}
    asked = []

    def input_fn(prompt):
        asked.append(prompt)
        for key, cyc in cycles.items():
            if key in prompt:
                return next(cyc)
        raise AssertionError(f"unexpected prompt {prompt!r}")

    input_fn.asked = asked
    return input_fn


def test_human_plays_a_whole_game_from_scripted_input(tmp_path):
    out = []
    inp = scripted(
        {
            # bad answers first each time, then a good one
            "keep which?": ["zz", "7", "9 9", "2 2 2 2 2", "hello world", "?", "", "best b", "best"],
            "or bank?": ["maybe", "b"],
            "take them over": ["maybe", "y"],
        }
    )
    rc = play_terminal("classic", ["hold:300"], seed=5, input_fn=inp, print_fn=out.append, save=tmp_path / "game.jsonl")
    text = "\n".join(out)
    assert rc == 0
    assert "game over:" in text and ("You win!" in text or "You lose:" in text)
    for hint in (
        "no keep 'zz': choose a-",
        "dice faces run from 1 to 6",
        "How to answer",
        "answer r to roll or b to bank",
        "is neither a letter from the list nor dice faces",
    ):
        assert hint in text, hint
    assert "you cannot bank now: not on the board yet and the turn total" in text  # "best b" on the opening roll
    assert "P2 hold:300 rolls" in text and "  position  1  2  3  4  5  6" in text
    from tenk_env.records import load_jsonl

    assert replay(load_jsonl(tmp_path / "game.jsonl")).over


def test_human_face_input_and_piggyback():
    out = []
    g = pos(dice=(1, 1, 3, 4, 5, 6), total=0)
    h = HumanAgent(scripted({"keep which?": ["1 1 1", "3", "6 6", "1 5 r"]}), out.append)
    assert h.decide(g, RNG)[0].dice == (1, 5)
    assert "the roll 1 1 3 4 5 6 has only two 1" in "\n".join(out)
    assert "there is no 6" not in "\n".join(out)
    assert "cannot set aside 3: the 3 in [3] does not score" in "\n".join(out)
    g = Game(CLASSIC.replace(name="piggy", piggyback=True))
    g.piggy = (3, 450)
    assert HumanAgent(scripted({"take them over": ["n"]}), out.append).piggyback(g, RNG) is False


def test_human_quits_cleanly_on_eof_and_q():
    out = []

    def eof(prompt):
        raise EOFError

    assert play_terminal("classic", ["dicenow"], seed=1, input_fn=eof, print_fn=out.append) == 0
    assert out[-1] == "\ngame abandoned."
    assert play_terminal("classic", ["dicenow"], seed=1, input_fn=lambda p: "q", print_fn=out.append) == 0


def test_tenk_play_command(monkeypatch, capsys):
    def eof(prompt=""):
        raise EOFError

    monkeypatch.setattr(builtins, "input", eof)
    assert main(["play", "--opponent", "dicenow", "--seed", "4", "--players", "3"]) == 0
    out = capsys.readouterr().out
    assert "seed 4" in out and "game abandoned" in out
    assert main(["play", "--players", "9"]) == 2
    assert "--players 9: the game takes 2 to 8 players" in capsys.readouterr().out
    assert main(["play", "--opponent", "dicenw"]) == 2
    assert "did you mean 'dicenow'" in capsys.readouterr().out
