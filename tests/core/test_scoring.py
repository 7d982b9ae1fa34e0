"""Scoring tables: every preset's combinations, the seed texts' worked examples, the odds."""

import pytest

from tenk_env.rules import PRESETS, Ruleset
from tenk_env.tables import counts_of, get_tables


def best(preset, dice):
    info = get_tables(PRESETS[preset] if isinstance(preset, str) else preset).roll(dice)
    return None if info.bust else info.best.points


def score(preset, dice):
    return get_tables(PRESETS[preset] if isinstance(preset, str) else preset).score(dice)


# (preset, roll, best points of the roll; None = bust)
BEST_OF_ROLL = [
    # Dice.now worked examples (the Dice.now rules)
    ("classic", (1, 1, 1, 4, 6, 2), 1000),
    ("classic", (1, 1, 1, 1, 3, 6), 2000),
    ("classic", (5, 5, 5, 5, 5, 2), 2000),
    ("classic", (1, 5, 2, 3, 4, 6), 1500),
    ("classic", (2, 2, 4, 4, 6, 6), 750),
    ("classic", (1, 1, 5, 5, 3, 3), 750),
    ("classic", (4, 4, 4, 4, 5, 5), 900),
    ("classic", (4, 4, 4, 4, 3, 3), 800),
    ("classic", (2, 2, 2, 6, 6, 6), 800),
    ("classic", (1, 1, 1, 1, 1, 1), 8000),
    ("classic", (2, 3, 4, 6, 6, 3), None),
    ("classic", (2, 3, 4, 6), None),
    ("classic", (2,), None),
    ("classic", (1,), 100),
    ("classic", (5,), 50),
    # the Ten Thousand rules text: the doubling ladders
    ("house_1000", (6, 6, 6, 6), 1200),
    ("house_1000", (6, 6, 6, 6, 6), 2400),
    ("house_1000", (6, 6, 6, 6, 6, 6), 4800),
    ("house_1000", (1, 1, 1, 1, 1), 4000),
    ("house_1000", (1, 1, 2, 4, 5, 6), 250),
    ("house_1000", (6, 6, 6), 600),
    ("house_1000", (2, 3, 3, 4, 6, 6), None),
    # Walnut: no three pairs, doubling
    ("walnut", (2, 2, 4, 4, 6, 6), None),
    ("walnut", (1, 1, 3, 3, 3, 5), 550),
    ("walnut", (3, 3, 3, 3), 600),
    ("walnut", (3, 3, 3, 3, 3), 1200),
    ("walnut", (3, 3, 3, 3, 3, 3), 2400),
    ("walnut", (1, 2, 3, 4, 5, 6), 1500),
    # the six-dice baseline article: BC Society doubling (four 2s 400 ... six 2s 1,600), straight and pairs 1,000
    ("bc_society", (2, 2, 2, 2), 400),
    ("bc_society", (2, 2, 2, 2, 2), 800),
    ("bc_society", (2, 2, 2, 2, 2, 2), 1600),
    ("bc_society", (1, 2, 3, 4, 5, 6), 1000),
    ("bc_society", (2, 2, 3, 3, 6, 6), 1000),
    # the six-dice baseline article: the article's baseline, flat multiples and 1,500s
    ("article_baseline", (2, 2, 2, 2), 1000),
    ("article_baseline", (2, 2, 2, 2, 2), 2000),
    ("article_baseline", (2, 2, 2, 2, 2, 2), 3000),
    ("article_baseline", (1, 2, 3, 4, 5, 6), 1500),
    ("article_baseline", (2, 2, 3, 3, 6, 6), 1500),
    # best reading: three 1s (1,000) and a single 1 beat the flat four-of-a-kind 1,000
    ("article_baseline", (1, 1, 1, 1), 1100),
    ("article_baseline", (1, 1, 1, 1, 1), 2000),
    ("article_baseline", (3, 3, 3, 5, 2, 6), 350),
    ("scribd_farkle", (4, 4, 4, 4, 4, 4), 3000),
    ("scribd_farkle", (4, 4, 4, 4, 3, 3), 1000),
    # official Farkle: three 1s 300, four of a kind plus a pair is three pairs, two triplets 2,500
    ("farkle_official", (1, 1, 1), 300),
    ("farkle_official", (1, 1, 1, 1), 1000),
    ("farkle_official", (4, 4, 4, 4, 3, 3), 1500),
    ("farkle_official", (2, 2, 2, 3, 3, 3), 2500),
    ("farkle_official", (1, 1, 1, 5, 5, 5), 2500),
    ("farkle_official", (1, 1, 1, 1, 1, 1), 3000),
    ("farkle_official", (1, 1, 5, 5, 3, 3), 1500),
    # wikiHow: five-dice straights 500, three pairs 1,000
    ("wikihow", (1, 2, 3, 4, 5, 2), 500),
    ("wikihow", (1, 2, 3, 4, 5, 5), 550),
    ("wikihow", (2, 3, 4, 5, 6, 6), 500),
    ("wikihow", (1, 2, 3, 4, 5, 6), 1500),
    ("wikihow", (2, 2, 3, 3, 4, 4), 1000),
    ("wikihow", (2, 3, 4, 5, 6), 500),
    # INFORM five dice: the five-dice run pays 2,000
    ("inform_five_dice", (1, 2, 3, 4, 5), 2000),
    ("inform_five_dice", (2, 3, 4, 5, 6), 2000),
    ("inform_five_dice", (5, 5, 5, 5, 5), 2000),
    ("inform_five_dice", (2, 2, 3, 3, 4), None),
    # Busche and Neller: singles and triples only
    ("busche_neller_2017", (2, 2, 2, 2, 3, 4), 200),
    ("busche_neller_2017", (1, 1, 1, 1, 3, 4), 1100),
    ("busche_neller_2017", (5, 5, 5, 5, 5, 5), 1000),
    ("busche_neller_2017", (1, 2, 3, 4, 5, 6), 150),
    ("busche_neller_2017", (2, 2, 3, 3, 4, 4), None),
    # Zilch: three pairs 1,500 incl. four of a kind plus a pair
    ("zilch", (2, 2, 2, 2, 3, 3), 1500),
    ("zilch", (1, 1, 1, 1, 3, 3), 2000),
]


@pytest.mark.parametrize("preset,dice,expected", BEST_OF_ROLL)
def test_best_points_of_roll(preset, dice, expected):
    assert best(preset, dice) == expected


# (preset, kept dice, points of exactly that keep; None = not a legal keep)
KEEP_POINTS = [
    ("classic", (1,), 100),
    ("classic", (1, 5), 150),  # the beginner's error on a straight (the Dice.now rules)
    ("classic", (4, 4, 4, 4, 3, 3), None),
    ("classic", (4, 4, 4, 4, 5), 850),
    ("classic", (1, 4), None),
    ("classic", (2, 2), None),
    ("classic", (5, 5, 5, 5), 1000),
    ("classic", (1, 1, 5, 5, 3, 3), 750),
    ("classic", (1, 1, 5, 5), 300),
    ("walnut", (1, 1, 5, 5, 3, 3), None),
    # Walnut's Farkle rules: the options on 1+1+3+3+3+5
    ("walnut", (3, 3, 3), 300),
    ("walnut", (1, 1), 200),
    ("walnut", (5,), 50),
    ("walnut", (1, 1, 3, 3, 3, 5), 550),
    ("busche_neller_2017", (2, 2, 2, 2), None),
    ("busche_neller_2017", (1, 1, 1, 1), 1100),
    ("farkle_official", (4, 4, 4, 4, 5, 5), 1500),
    ("wikihow", (1, 2, 3, 4, 5), 500),
    ("wikihow", (1, 2, 3, 4), None),
]


@pytest.mark.parametrize("preset,dice,expected", KEEP_POINTS)
def test_points_of_keep(preset, dice, expected):
    assert score(preset, dice) == expected


def test_every_keep_scores_and_is_canonical_for_every_preset():
    for rules in PRESETS.values():
        t = get_tables(rules)
        for dice, info in t.rolls.items():
            seen = set()
            for k in info.keeps:
                assert k.points > 0
                assert k.counts not in seen  # one keep per distinct multiset
                seen.add(k.counts)
                kept = tuple(d for i, d in enumerate(dice) if k.mask >> i & 1)
                assert kept == k.dice and counts_of(kept) == k.counts
                # canonical: each face's kept dice are its lowest positions
                for f in set(kept):
                    pos = [i for i, d in enumerate(dice) if d == f]
                    assert [i for i in pos if k.mask >> i & 1] == pos[: k.counts[f - 1]]
                assert t.score(k.dice) == k.points
            assert info.bust == (not info.keeps and not info.zilch)


def test_number_of_keeps():
    t = get_tables(PRESETS["classic"])
    # 1-1-5-5-3-3: any non-empty sub-multiset of {1,1,5,5} (8) plus the three pairs
    assert len(t.roll((1, 1, 5, 5, 3, 3)).keeps) == 9
    assert [k.dice for k in t.roll((1, 1, 1, 1, 3, 6)).keeps] == [(1,), (1, 1), (1, 1, 1), (1, 1, 1, 1)]


def test_special_roll_flags():
    z = get_tables(PRESETS["zilch"])
    assert z.roll((2, 2, 3, 4, 6, 6)).zilch and not z.roll((2, 2, 3, 4, 6, 6)).bust
    assert z.roll((2, 3, 4, 6)).bust and not z.roll((2, 3, 4, 6)).zilch  # only a roll of all six pays
    w = get_tables(PRESETS["wikihow"])
    assert w.roll((1,) * 6).instant_win and not w.roll((2,) * 6).instant_win
    anyw = get_tables(PRESETS["wikihow"].replace(six_of_a_kind_wins="any", four_twos_lose_all=True))
    assert anyw.roll((3,) * 6).instant_win
    assert anyw.roll((2, 2, 2, 2, 1, 5)).lose_all
    assert anyw.roll((2,) * 6).instant_win and not anyw.roll((2,) * 6).lose_all
    assert not get_tables(PRESETS["classic"]).roll((1,) * 6).instant_win


def test_half_straights_option():
    r = Ruleset(name="halves", straight=0, half_straights=500)
    assert score(r, (1, 2, 3)) == 500
    assert score(r, (4, 5, 6)) == 500
    assert best(r, (1, 2, 3, 4, 5, 6)) == 1000
    assert best(r.replace(straight=1500), (1, 2, 3, 4, 5, 6)) == 1500


def test_why_not_names_the_dead_die():
    t = get_tables(PRESETS["classic"])
    assert t.why_not((1, 4)) == "the 4 in [1, 4] does not score within the kept dice"
    assert "the 3s" in t.why_not((4, 4, 4, 4, 3, 3))
    w = get_tables(PRESETS["walnut"])
    assert "the 3s" in w.why_not((1, 1, 3, 3, 5, 5))


# RULES.md, published: bust chance and mean best points of one roll under classic
PUBLISHED = {
    1: ("66.7%", 25),
    2: ("44.4%", 50),
    3: ("27.8%", 87),
    4: ("15.7%", 144),
    5: ("7.7%", 226),
    6: ("2.31%", 382),
}


def test_odds_reproduce_published_table():
    from tenk_env.cli.cmd_rules import _pct

    odds = get_tables(PRESETS["classic"]).odds()
    assert [n for n, _, _ in odds] == [1, 2, 3, 4, 5, 6]
    for n, bust, mean in odds:
        assert (_pct(bust), round(mean)) == PUBLISHED[n]
    # exact values
    assert odds[0][1] == pytest.approx(4 / 6) and odds[0][2] == pytest.approx(25.0)
    assert odds[5][1] == pytest.approx(1080 / 46656)


def test_five_dice_odds_have_five_rows():
    assert [n for n, _, _ in get_tables(PRESETS["inform_five_dice"]).odds()] == [1, 2, 3, 4, 5]
