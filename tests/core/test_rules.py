"""Rulesets: presets, validation errors, YAML in and out, the content hash, `tenk rules`."""

import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.rules import PRESETS, Ruleset, RulesetError, load_ruleset
from tenk_env.tables import get_tables

import support

CONFIGS = support.CONFIGS / "rules"


def test_presets_are_the_documented_tables():
    assert list(PRESETS) == [
        "classic",
        "article_baseline",
        "bc_society",
        "scribd_farkle",
        "inform_five_dice",
        "house_1000",
        "walnut",
        "wikihow",
        "farkle_official",
        "busche_neller_2017",
        "zilch",
    ]
    c = PRESETS["classic"]
    assert (
        c.num_dice,
        c.target,
        c.entry_threshold,
        c.three_ones,
        c.multiples,
        c.straight,
        c.three_pairs,
        c.hot_dice,
        c.end,
        c.tie,
    ) == (6, 10_000, 500, 1000, "doubling", 1500, 750, "optional", "final_round", "first_to_target")
    bc = PRESETS["bc_society"]
    assert (bc.entry_threshold, bc.hot_dice, bc.end, bc.straight, bc.three_pairs) == (
        800,
        "mandatory",
        "one_more_roll",
        1000,
        1000,
    )
    inf = PRESETS["inform_five_dice"]
    assert (inf.num_dice, inf.max_rolls, inf.entry_threshold, inf.short_straights, inf.end) == (
        5,
        3,
        350,
        2000,
        "immediate",
    )
    z = PRESETS["zilch"]
    assert (z.zilch_payout, z.min_bank, z.bust_penalty, z.bust_penalty_after, z.three_pairs) == (500, 300, 500, 3, 1500)
    bn = PRESETS["busche_neller_2017"]
    assert (bn.multiples, bn.straight, bn.three_pairs, bn.entry_threshold, bn.end) == ("none", 0, 0, 0, "immediate")
    assert PRESETS["farkle_official"].two_triplets == 2500 and PRESETS["farkle_official"].three_ones == 300
    assert PRESETS["wikihow"].six_of_a_kind_wins == "ones" and PRESETS["house_1000"].entry_threshold == 1000


def test_hash_is_stable_and_ignores_name():
    # A changed hash orphans every cached solution and checkpoint: change it only on purpose.
    assert PRESETS["classic"].hash == "915b7862bac40506"
    assert Ruleset(name="mine").hash == PRESETS["classic"].hash
    assert PRESETS["classic"].replace(entry_threshold=1000).hash == PRESETS["house_1000"].hash
    assert len({r.hash for r in PRESETS.values()}) == len(PRESETS)


@pytest.mark.parametrize("name", list(PRESETS))
def test_yaml_round_trip_and_configs_in_sync(name, tmp_path):
    r = PRESETS[name]
    path = tmp_path / f"{name}.yaml"
    r.save(path)
    assert load_ruleset(path) == r
    shipped = CONFIGS / f"{name}.yaml"
    assert shipped.is_file(), "run `tenk rules --write-configs configs/rules`"
    assert load_ruleset(shipped) == r, "configs/rules is stale: run `tenk rules --write-configs configs/rules`"


def test_yaml_with_base_preset(tmp_path):
    p = tmp_path / "mine.yaml"
    p.write_text("base: classic\nentry_threshold: 350\nbust_penalty: 1000\n")
    r = load_ruleset(p)
    assert r.name == "mine" and r.entry_threshold == 350 and r.bust_penalty == 1000 and r.three_pairs == 750


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"num_dice": 4}, "field 'num_dice' = 4 is not allowed; allowed: 5 or 6"),
        ({"entry_threshold": -50}, "field 'entry_threshold' = -50 is not allowed; allowed: an integer >= 0"),
        ({"multiples": "triple"}, "field 'multiples' = 'triple' is not allowed; allowed: doubling, flat, none"),
        ({"end": "sudden"}, "allowed: final_round, one_more_roll, immediate"),
        ({"piggyback": "yes"}, "field 'piggyback' = 'yes' is not allowed; allowed: true or false"),
        ({"target": 10000.5}, "field 'target' = 10000.5 is not allowed; allowed: an integer"),
        ({"flat_multiples": (1000, 2000)}, "three positive integers"),
        ({"num_dice": 5}, "field 'straight' = 1500 needs six dice"),
        ({"three_pairs": 0, "four_plus_pair_is_three_pairs": True}, "three_pairs is 0"),
        ({"komi": 20_000}, "field 'komi' = 20000 is not allowed"),
    ],
)
def test_bad_fields_name_field_value_and_allowed(changes, message):
    with pytest.raises(RulesetError, match="^ruleset 'classic': .*") as e:
        PRESETS["classic"].replace(**changes)
    assert message in str(e.value)


def test_unknown_field_and_preset_suggest_a_fix(tmp_path):
    with pytest.raises(RulesetError, match=r"unknown ruleset field 'entry' \(did you mean 'entry_threshold'\?\)"):
        Ruleset.from_dict({"entry": 500})
    with pytest.raises(RulesetError, match=r"unknown ruleset preset 'clasic' \(did you mean 'classic'\?\)"):
        load_ruleset("clasic")
    with pytest.raises(RulesetError, match="does not exist"):
        load_ruleset(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("entry_threshold: [oops\n")
    with pytest.raises(RulesetError, match="not valid YAML"):
        load_ruleset(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(RulesetError, match="expected a mapping"):
        load_ruleset(bad)


def test_cli_rules_and_odds(capsys, tmp_path):
    assert main(["odds", "classic"]) == 0
    out = capsys.readouterr().out
    for cell in ("66.7%", "44.4%", "27.8%", "15.7%", "7.7%", "2.31%", "382", "226", "144", " 87 "):
        assert cell in out
    assert main(["rules", "zilch"]) == 0
    out = capsys.readouterr().out
    assert "ff8de748982f44cb" in out and "zilch_payout" in out
    assert main(["rules", "nope"]) == 2
    assert "unknown ruleset preset 'nope'" in capsys.readouterr().out
    assert main(["rules", "--write-configs", str(tmp_path)]) == 0
    assert yaml.safe_load((tmp_path / "walnut.yaml").read_text())["three_pairs"] == 0


def _flat(text: str) -> str:
    return " ".join(text.split())  # rich wraps long lines


@pytest.mark.parametrize(
    "changes,message",
    [
        (
            {"exact_finish": "forfeit", "target": 10_025},
            "target 10025 cannot be reached exactly (exact_finish: forfeit): every score is a multiple of 50, the "
            "greatest common divisor of the scoring table's points, so no game could end; set target to a multiple "
            "of 50 (e.g. 10000 or 10050) or exact_finish: off",
        ),
        (
            {"exact_finish": "to_lowest", "target": 10_010, "komi": 30, "bust_penalty": 100},
            "every score is a multiple of 50, the greatest common divisor of the scoring table's points and "
            "bust_penalty (seat 1's: komi 30 plus such a multiple), so no game could end",
        ),
        (
            {"exact_finish": "forfeit", "target": 1_010, "six_of_a_kind_wins": "any"},
            "so only a six-of-a-kind instant win could end a game",
        ),
        (
            {"max_rolls": 3, "min_bank": 30_000},
            "min_bank 30000 cannot be reached in 3 rolls (max_rolls 3): the most a turn can score is 24,000, "
            "so no game could end; lower min_bank to 24000 or less, or raise max_rolls",
        ),
        (
            {
                "num_dice": 5,
                "max_rolls": 1,
                "entry_threshold": 1000,
                "three_ones": 300,
                "multiples": "none",
                "straight": 0,
                "three_pairs": 0,
            },  # best roll: three 6s and two 1s
            "entry_threshold 1000 cannot be reached in 1 rolls (max_rolls 1): the most a turn can score is 800",
        ),
    ],
    ids=["exact-target", "exact-target-komi", "instant-win-only", "min-bank", "entry-threshold"],
)
def test_rulesets_whose_games_cannot_end_are_refused(changes, message, tmp_path, capsys):
    with pytest.raises(RulesetError, match="^ruleset 'classic': ") as e:
        PRESETS["classic"].replace(**changes)
    assert message in str(e.value)
    # refused where a ruleset file is loaded, before any game is played
    p = tmp_path / "never.yaml"
    p.write_text(yaml.safe_dump({"base": "classic", **changes}))
    assert main(["rules", str(p)]) == 2
    assert message.replace("'classic'", "'never'") in _flat(capsys.readouterr().out)


def test_rulesets_whose_games_can_end_are_accepted():
    for r in PRESETS.values():
        r.replace(exact_finish="forfeit")  # every preset's target is a multiple of 50
    c = PRESETS["classic"]
    c.replace(exact_finish="forfeit", target=10_025, bust_penalty=25)  # a penalty takes 25 off
    c.replace(exact_finish="forfeit", target=10_025, three_pairs=775)  # 775 + 50s
    c.replace(exact_finish="to_lowest", target=10_025, komi=25)  # seat 1 starts at 25
    c.replace(target=10_025)  # without exact finish any total at or past the target counts
    # the most a turn can score in three rolls: six 1s, or five 1s, each time; such a threshold
    # is reachable, but so seldom that it is refused (tests/solve/test_solver_bounds.py)
    assert get_tables(c.replace(max_rolls=3)).max_turn_points(3) == 24_000
    assert get_tables(PRESETS["inform_five_dice"]).max_turn_points(3) == 12_000
    c.replace(max_rolls=3, min_bank=5150)  # the largest multiple of 50 reached with chance >= 1e-4
