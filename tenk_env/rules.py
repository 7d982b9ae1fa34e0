"""Rulesets: every documented variant of Ten Thousand as plain, validated data.

A :class:`Ruleset` is the single description of a table's rules. Everything else
(scoring tables, the turn machine, environments, bots, solvers) is derived from it,
and its :attr:`Ruleset.hash` is recorded with every run, checkpoint and result so that
nothing is compared across rulesets by accident.

Presets are defined here, in Python, and mirrored one file each under
``configs/rules/`` (``tenk rules --write-configs`` regenerates them; a test keeps
them in sync).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from tenk_env.io import atomic_write_text, read_yaml_mapping
from tenk_env.tables import combos, get_tables

__all__ = ["Ruleset", "RulesetError", "PRESETS", "load_ruleset", "preset_names"]


#: the least chance a turn must have of reaching the entry threshold / minimum bank: with less,
#: the expected game outlasts the engines' 100,000-turn safety limit
MIN_BANK_CHANCE = 1e-4
#: thresholds at or below this many points are not checked against MIN_BANK_CHANCE
CHECKED_FROM = 1000


class RulesetError(ValueError):
    """A ruleset field has a value the engine cannot play; the message names the fix."""


# (allowed values) for the string-valued options, with one line on each for error messages.
_CHOICES: dict[str, dict[str, str]] = {
    "multiples": {
        "doubling": "each die past three doubles the triple (four 4s = 800)",
        "flat": "four/five/six of a kind pay flat_multiples (1,000 / 2,000 / 3,000)",
        "none": "no bonus past three of a kind: extra matching dice are dead unless 1s or 5s",
    },
    "six_of_a_kind_wins": {
        "off": "six of a kind only scores",
        "ones": "rolling six 1s wins the game at once",
        "any": "rolling any six of a kind wins the game at once",
    },
    "hot_dice": {
        "optional": "after setting aside every die the player may bank or roll them all again",
        "mandatory": "after setting aside every die the player must roll them all again",
    },
    "end": {
        "final_round": "reaching the target gives every other player one more full turn",
        "one_more_roll": "reaching the target gives every other player one more roll",
        "immediate": "the first player to bank the target wins at once",
    },
    "exact_finish": {
        "off": "any total at or past the target counts",
        "forfeit": "a turn that overshoots the target is forfeited",
        "to_lowest": "a turn that overshoots the target is forfeited to the lowest-scoring player",
    },
    "tie": {
        "first_to_target": "among tied leaders, the one who reached the target first wins",
        "shared": "tied leaders share the win",
    },
    "turn_order": {
        "seat": "seat 0 starts",
        "highest_die": "every player rolls one die; the highest starts (ties roll again)",
    },
}


@dataclass(frozen=True)
class Ruleset:
    """The rules of one Ten Thousand table. Defaults are the ``classic`` Dice.now table.

    Point values of 0 switch a combination off. See ``../shared/RULES.md`` for the
    sources of every option.
    """

    name: str = "classic"
    #: dice in play, 6 (or 5 for the INFORM five-dice game)
    num_dice: int = 6
    #: banked total that ends the game (see ``end``)
    target: int = 10_000
    #: turn total needed for a player's first bank (0: none)
    entry_threshold: int = 500
    #: smallest turn total that may be banked on any turn (0: none)
    min_bank: int = 0
    #: rolls allowed per turn (0: unlimited); after the last one the turn must end
    max_rolls: int = 0
    #: three 1s (1,000 in Ten Thousand, 300 in Farkle)
    three_ones: int = 1000
    #: how four, five and six of a kind score: doubling, flat or none
    multiples: str = "doubling"
    #: four, five and six of a kind when ``multiples`` is flat
    flat_multiples: tuple[int, int, int] = (1000, 2000, 3000)
    #: six-dice straight 1-2-3-4-5-6
    straight: int = 1500
    #: each of the half straights 1-2-3 and 4-5-6
    half_straights: int = 0
    #: each of the five-dice runs 1-2-3-4-5 and 2-3-4-5-6
    short_straights: int = 0
    #: three different pairs in one roll of six
    three_pairs: int = 750
    #: four of a kind plus a pair of another face reads as three pairs
    four_plus_pair_is_three_pairs: bool = False
    #: two triplets in one roll (0: they score as two separate triples)
    two_triplets: int = 0
    #: a roll of six of a kind that wins the game at once: off, ones, any
    six_of_a_kind_wins: str = "off"
    #: a roll holding four or more 2s wipes the roller's banked score and ends the turn
    four_twos_lose_all: bool = False
    #: a roll of all dice with nothing scoring pays this and the player must roll again (0: bust)
    zilch_payout: int = 0
    #: optional or mandatory re-roll after every die has been set aside
    hot_dice: str = "optional"
    #: end of game: final_round, one_more_roll, immediate
    end: str = "final_round"
    #: off, forfeit, to_lowest
    exact_finish: str = "off"
    #: tie after the final round: first_to_target, shared
    tie: str = "first_to_target"
    #: banked points lost after ``bust_penalty_after`` busts in a row (0: none); never below 0
    bust_penalty: int = 0
    #: consecutive busts (over the player's own turns) that trigger the penalty
    bust_penalty_after: int = 3
    #: the next player may roll the dice the last banker left and take over their total
    piggyback: bool = False
    #: seat or highest_die
    turn_order: str = "seat"
    #: points the second player (seat 1) starts with
    komi: int = 0

    def __post_init__(self) -> None:
        # YAML and JSON give lists; keep the dataclass hashable and comparable.
        if isinstance(self.flat_multiples, list):
            object.__setattr__(self, "flat_multiples", tuple(self.flat_multiples))
        self._validate()

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        def bad(name: str, allowed: str) -> RulesetError:
            return RulesetError(
                f"ruleset {self.name!r}: field {name!r} = {getattr(self, name)!r} is not allowed; allowed: {allowed}"
            )

        if not isinstance(self.name, str) or not self.name:
            raise bad("name", "a non-empty string")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type == "bool" and not isinstance(v, bool):
                raise bad(f.name, "true or false")
            if f.type == "int" and (isinstance(v, bool) or not isinstance(v, int)):
                raise bad(f.name, "an integer")
            if f.name in _CHOICES and v not in _CHOICES[f.name]:
                raise bad(f.name, ", ".join(_CHOICES[f.name]))
        if self.num_dice not in (5, 6):
            raise bad("num_dice", "5 or 6")
        if self.target < 50:
            raise bad("target", "an integer >= 50")
        for name in (
            "entry_threshold",
            "min_bank",
            "max_rolls",
            "straight",
            "half_straights",
            "short_straights",
            "three_pairs",
            "two_triplets",
            "zilch_payout",
            "bust_penalty",
            "komi",
        ):
            if getattr(self, name) < 0:
                raise bad(name, "an integer >= 0 (0 switches it off)")
        if self.three_ones <= 0:
            raise bad("three_ones", "a positive integer (1000 in Ten Thousand, 300 in Farkle)")
        fm = self.flat_multiples
        if len(fm) != 3 or any(isinstance(x, bool) or not isinstance(x, int) or x <= 0 for x in fm):
            raise bad("flat_multiples", "three positive integers [four, five, six of a kind]")
        if self.bust_penalty_after < 1:
            raise bad("bust_penalty_after", "an integer >= 1")
        if self.komi >= self.target:
            raise bad("komi", f"an integer below the target ({self.target})")
        if self.num_dice == 5:
            for name, what in (
                ("straight", "a six-dice straight"),
                ("three_pairs", "three pairs"),
                ("two_triplets", "two triplets"),
            ):
                if getattr(self, name):
                    raise RulesetError(
                        f"ruleset {self.name!r}: field {name!r} = {getattr(self, name)} needs six dice "
                        f"({what}) but num_dice is 5; set {name}: 0"
                    )
            if self.six_of_a_kind_wins != "off":
                raise RulesetError(
                    f"ruleset {self.name!r}: six_of_a_kind_wins needs six dice but "
                    "num_dice is 5; set six_of_a_kind_wins: off"
                )
        if self.four_plus_pair_is_three_pairs and not self.three_pairs:
            raise RulesetError(
                f"ruleset {self.name!r}: four_plus_pair_is_three_pairs is true but "
                "three_pairs is 0; give three_pairs a value or set it false"
            )
        self._check_games_can_end()

    def _check_games_can_end(self) -> None:
        """Refuse a ruleset under which no game could end. Accepted, it would surface only when a
        tournament or a training run hits its turn limit, minutes later and blaming the agents."""
        never = (
            "so only a six-of-a-kind instant win could end a game"
            if self.six_of_a_kind_wins != "off"
            else "so no game could end"
        )
        if self.exact_finish != "off":
            # Every change to a banked score is a sum of scoring combinations (banks, zilch
            # pay-outs, gifts under to_lowest), a bust penalty taken off, or a reset to 0 (lose-all,
            # a penalty larger than the score); seat 1 also starts at komi. So every score is a
            # multiple of their gcd g (seat 1's may also be komi plus one), and the target must be.
            g = 0
            for v in [c.points for c in combos(self)] + [self.zilch_payout, self.bust_penalty]:
                g = math.gcd(g, v)
            if self.target % g and (self.target - self.komi) % g:
                parts = ["the scoring table's points"] + [
                    n for n in ("zilch_payout", "bust_penalty") if getattr(self, n)
                ]
                why = (", ".join(parts[:-1]) + " and " + parts[-1]) if len(parts) > 1 else parts[0]
                komi = f" (seat 1's: komi {self.komi} plus such a multiple)" if self.komi % g else ""
                lo = self.target // g * g
                raise RulesetError(
                    f"ruleset {self.name!r}: target {self.target} cannot be reached exactly (exact_finish: "
                    f"{self.exact_finish}): every score is a multiple of {g}, the greatest common divisor of "
                    f"{why}{komi}, {never}; set target to a multiple of {g} (e.g. {lo} or {lo + g}) "
                    "or exact_finish: off"
                )
        if self.max_rolls:
            # A roll of all 1s, all kept (three 1s and single 1s), gives hot dice: a turn scores at
            # least that much per roll. Only a threshold above this bound needs the full tables.
            floor = self.max_rolls * (self.three_ones + 100 * (self.num_dice - 3))
            for name in ("entry_threshold", "min_bank"):
                v = getattr(self, name)
                if v > floor and v > (reach := get_tables(self).max_turn_points(self.max_rolls)):
                    raise RulesetError(
                        f"ruleset {self.name!r}: {name} {v} cannot be reached in {self.max_rolls} rolls "
                        f"(max_rolls {self.max_rolls}): the most a turn can score is {reach:,}, {never}; "
                        f"lower {name} to {reach} or less, or raise max_rolls"
                    )
        # A threshold that a turn reaches only with negligible chance makes games that end only
        # in theory: they surface as turn-limit failures in tournaments and training, hours in.
        # Thresholds up to CHECKED_FROM points are met often under every table (single 1s and 5s
        # always score), so only higher ones pay for the tables and the reach computation.
        name = "entry_threshold" if self.entry_threshold >= self.min_bank else "min_bank"
        v = getattr(self, name)
        # (under an exact finish a bank landing on the target is allowed below the threshold)
        if v > CHECKED_FROM and not (self.exact_finish != "off" and v >= self.target):
            tables = get_tables(self)
            p = tables.bank_chance(v)
            if p < MIN_BANK_CHANCE:
                lo, hi = CHECKED_FROM // 50, v // 50  # the largest multiple of 50 points still playable
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    lo, hi = (mid, hi) if tables.bank_chance(50 * mid) >= MIN_BANK_CHANCE else (lo, mid)
                where = f"within {self.max_rolls} roll{'s' * (self.max_rolls > 1)}" if self.max_rolls else "in a turn"
                odds = f"one turn in {1 / p:,.0f}" if p > 1e-12 else "practically never"
                raise RulesetError(
                    f"ruleset {self.name!r}: {name} {v} is reached {where} with chance {p:.2g} at best "
                    f"({odds}), so games would not end in practice; a playable table needs a chance of at "
                    f"least {MIN_BANK_CHANCE:g}: lower {name} to {50 * lo} or less"
                )

    # ------------------------------------------------------------------ data in and out
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["flat_multiples"] = list(self.flat_multiples)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "ruleset") -> Ruleset:
        """Build a ruleset from a mapping; ``base: PRESET`` starts from a preset."""
        if not isinstance(data, Mapping):
            raise RulesetError(f"{source}: expected a mapping of ruleset fields, got {type(data).__name__}")
        data = dict(data)
        base_name = data.pop("base", None)
        names = [f.name for f in fields(cls)]
        unknown = [k for k in data if k not in names]
        if unknown:
            k = unknown[0]
            raise RulesetError(
                f"{source}: unknown ruleset field {k!r}{did_you_mean(str(k), names)}; "
                f"allowed fields: {', '.join(names)}"
            )
        if base_name is not None:
            base = get_preset(base_name).to_dict()
            if "name" not in data:
                # named after what it changes, so that no message calls a changed table by its
                # base's name ("trained on 'classic' ... this game is 'classic'")
                changed = [f"{k}={_text(v)}" for k, v in data.items() if _text(v) != _text(base[k])]
                if changed:
                    data["name"] = f"{base_name}+" + ",".join(changed[:3]) + (",..." if len(changed) > 3 else "")
            base.update(data)
            data = base
        try:
            return cls(**data)
        except RulesetError as e:
            if source == "ruleset":
                raise
            raise RulesetError(f"{source}: {e}") from None

    def replace(self, **changes: Any) -> Ruleset:
        return dataclasses.replace(self, **changes)

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None)

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_yaml())

    @functools.cached_property
    def hash(self) -> str:
        """Stable 16-hex-digit content hash. The name is not part of it: two tables with
        the same rules are the same game. Cached: agents key their caches by it on every move."""
        d = self.to_dict()
        d.pop("name")
        blob = json.dumps(d, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def describe(self) -> list[tuple[str, str]]:
        """(field, value) rows for display."""
        return [(f.name, _fmt(getattr(self, f.name))) for f in fields(self)]


def did_you_mean(word: str, options) -> str:
    """' (did you mean 'x'?)' for the closest option, or ''."""
    options = list(options)
    hint = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not hint and word:
        hint = [o for o in options if o.startswith(word) or word in o][:1]
    return f" (did you mean {hint[0]!r}?)" if hint else ""


def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, tuple):
        return " / ".join(f"{x:,}" for x in v)
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


PRESETS: dict[str, Ruleset] = {
    r.name: r
    for r in [
        Ruleset(name="classic"),
        Ruleset(name="article_baseline", multiples="flat", straight=1500, three_pairs=1500),
        Ruleset(
            name="bc_society",
            straight=1000,
            three_pairs=1000,
            entry_threshold=800,
            hot_dice="mandatory",
            end="one_more_roll",
            turn_order="highest_die",
        ),
        Ruleset(name="scribd_farkle", multiples="flat", straight=1500, three_pairs=1500, entry_threshold=750),
        Ruleset(
            name="inform_five_dice",
            num_dice=5,
            max_rolls=3,
            entry_threshold=350,
            straight=0,
            three_pairs=0,
            short_straights=2000,
            end="immediate",
        ),
        Ruleset(name="house_1000", entry_threshold=1000),
        Ruleset(name="walnut", three_pairs=0),
        Ruleset(name="wikihow", entry_threshold=0, three_pairs=1000, short_straights=500, six_of_a_kind_wins="ones"),
        Ruleset(
            name="farkle_official",
            three_ones=300,
            multiples="flat",
            three_pairs=1500,
            four_plus_pair_is_three_pairs=True,
            two_triplets=2500,
        ),
        Ruleset(
            name="busche_neller_2017", multiples="none", straight=0, three_pairs=0, entry_threshold=0, end="immediate"
        ),
        Ruleset(
            name="zilch",
            three_pairs=1500,
            four_plus_pair_is_three_pairs=True,
            zilch_payout=500,
            entry_threshold=0,
            min_bank=300,
            bust_penalty=500,
        ),
    ]
}


def preset_names() -> list[str]:
    return list(PRESETS)


def get_preset(name: str) -> Ruleset:
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise RulesetError(
            f"unknown ruleset preset {name!r}{did_you_mean(str(name), PRESETS)}; presets: {', '.join(PRESETS)}; "
            "or give a path to a YAML file"
        ) from None


def _text(v: Any) -> str:
    return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)


def load_ruleset(spec: str | Path | Ruleset | Mapping[str, Any]) -> Ruleset:
    """A ruleset from a preset name, a YAML path, a mapping of fields, or a Ruleset."""
    if isinstance(spec, Ruleset):
        return spec
    if isinstance(spec, Mapping):
        return Ruleset.from_dict(spec)
    if isinstance(spec, str) and spec in PRESETS:
        return PRESETS[spec]
    path = Path(spec)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        data = read_yaml_mapping(
            path, "ruleset", RulesetError, f"give a preset name ({', '.join(PRESETS)}) or the path of a YAML file"
        )
        data.setdefault("name", path.stem)
        return Ruleset.from_dict(data, source=f"ruleset file {str(path)!r}")
    return get_preset(str(spec))
