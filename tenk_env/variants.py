"""A space of rule variants, a seeded sampler over it, and the benchmark suite's fixed splits.

Generalisation benchmarks score agents on variants they never saw; here every variant has an
exact optimum, because every ruleset the space yields is one the 2-player game solver covers
(:func:`tenk_env.solve.game.check_game_rules`) without a bust penalty, so it solves in minutes.

The space, version :data:`SPACE_VERSION` (every field drawn independently, then checked):

=========================  ==============================================================
field                      values (probability)
=========================  ==============================================================
``num_dice``               6 (3/4), 5 (1/4)
``target``                 2,000 to 10,000 in steps of 500, uniform
``entry_threshold``        0, 300, 350, 500, 750, 1,000, uniform
``min_bank``               0 (1/2), 300, 350, 500 (1/6 each)
``max_rolls``              0: unlimited (3/4), 3, 4 (1/8 each)
``three_ones``             1,000 (1/2), 300 (1/2)
``multiples``              doubling, flat, none, uniform
``straight``               0, 1,000, 1,500, 2,500, 3,000 (six dice; 0 with five)
``short_straights``        0 (1/2), 500, 750 (1/4 each): 1-2-3-4-5 and 2-3-4-5-6
``three_pairs``            0, 500, 750, 1,000, 1,500 (six dice)
``four_plus_pair_...``     false, true (1/2 each; only where three pairs score)
``two_triplets``           0 (2/3), 2,500 (1/3) (six dice)
``hot_dice``               optional (2/3), mandatory (1/3)
``end``                    final_round (1/2), one_more_roll (1/4), immediate (1/4)
``tie``                    first_to_target (3/4), shared (1/4)
=========================  ==============================================================

Every other field keeps the ``classic`` value (no piggyback, no exact finish, no bust
penalty, no komi, seat order). Point values are multiples of 50, so the solver's unit is 50.
A draw the rules would refuse is drawn again from the same generator (none of the first 2,000
seeds needs it; the loop keeps every seed a ruleset should the space change).

The suite's splits (:func:`split`): ``test``, :data:`N_TEST` rulesets drawn from the seeds
:data:`TEST_SEEDS` (fixed: the held-out variants); ``train``, the sampler's seeds from 0 up,
skipping any ruleset whose hash is a test ruleset's or a preset's, so training never sees a
held-out game; ``presets``, the named presets the solver covers; ``fresh``, rulesets drawn at
evaluation time (:func:`fresh`), from sampler seeds far past any training seed and checked
against every ruleset of the other splits, so an agent (a language model above all) is graded
on rules published nowhere. A result names the space
version, so results under another space are never compared by accident.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from tenk_env.rules import PRESETS, Ruleset, RulesetError
from tenk_env.solve.game import check_game_rules, is_solvable
from tenk_env.solve.spec import SolverError

__all__ = [
    "SPACE_VERSION",
    "SPLITS",
    "N_TEST",
    "TEST_SEEDS",
    "sample_ruleset",
    "split",
    "train_rulesets",
    "variant_name",
    "covered",
    "fresh",
    "TRAIN_REACH",
    "FRESH_SEEDS",
]

#: bump on any change to the space or to the order of draws: results name it
SPACE_VERSION = 1
#: the suite's splits
SPLITS = ("train", "test", "presets", "fresh")
#: the most training rulesets any command takes (the train split has no end)
TRAIN_REACH = 10_000
#: the range of sampler seeds fresh rulesets are drawn from: far past every training seed
FRESH_SEEDS = (2**32, 2**62)
#: held-out rulesets
N_TEST = 16
#: the sampler seeds of the held-out rulesets (train seeds count from 0, far below)
TEST_SEEDS = tuple(range(1_000_000, 1_000_000 + N_TEST))
#: draws per seed before the sampler gives up (the rules refuse none of the first 2,000 first draws)
_MAX_DRAWS = 100


def _pick(rng: np.random.Generator, values, weights=None):
    if weights is None:
        return values[int(rng.integers(len(values)))]
    w = np.asarray(weights, float)
    return values[int(np.searchsorted(np.cumsum(w / w.sum()), rng.random(), side="right"))]


def _draw(rng: np.random.Generator) -> dict:
    six = _pick(rng, (6, 5), (3, 1)) == 6
    d = {
        "num_dice": 6 if six else 5,
        "target": int(_pick(rng, tuple(range(2000, 10001, 500)))),
        "entry_threshold": _pick(rng, (0, 300, 350, 500, 750, 1000)),
        "min_bank": _pick(rng, (0, 300, 350, 500), (3, 1, 1, 1)),
        "max_rolls": _pick(rng, (0, 3, 4), (6, 1, 1)),
        "three_ones": _pick(rng, (1000, 300)),
        "multiples": _pick(rng, ("doubling", "flat", "none")),
        "straight": _pick(rng, (0, 1000, 1500, 2500, 3000)),
        "short_straights": _pick(rng, (0, 500, 750), (2, 1, 1)),
        "three_pairs": _pick(rng, (0, 500, 750, 1000, 1500)),
        "four_plus_pair_is_three_pairs": bool(_pick(rng, (False, True))),
        "two_triplets": _pick(rng, (0, 2500), (2, 1)),
        "hot_dice": _pick(rng, ("optional", "mandatory"), (2, 1)),
        "end": _pick(rng, ("final_round", "one_more_roll", "immediate"), (2, 1, 1)),
        "tie": _pick(rng, ("first_to_target", "shared"), (3, 1)),
    }
    if not six:  # what needs six dice
        d["straight"] = d["three_pairs"] = d["two_triplets"] = 0
    if not d["three_pairs"]:
        d["four_plus_pair_is_three_pairs"] = False
    return d


def variant_name(seed: int) -> str:
    return f"variant{SPACE_VERSION}-{seed}"


def sample_ruleset(seed: int) -> Ruleset:
    """The ruleset of sampler seed ``seed`` (an integer >= 0), the same on every machine."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"variant seed {seed!r}: give an integer >= 0")
    rng = np.random.Generator(np.random.PCG64(int(seed)))
    last = None
    for _ in range(_MAX_DRAWS):
        try:
            r = Ruleset.from_dict(
                {"base": "classic", **_draw(rng), "name": variant_name(int(seed))}, source=f"variant seed {seed}"
            )
            check_game_rules(r)  # the space is built to pass it; checked so that a change cannot slip
            return r
        except (RulesetError, SolverError) as e:
            last = e
    raise RulesetError(f"variant seed {seed}: {_MAX_DRAWS} draws refused by the rules (last: {last})")


def covered() -> list[Ruleset]:
    """The ``presets`` split: the named presets the game solver covers, less those with a bust
    penalty (solved by value iteration, about an hour each: too slow for a suite)."""
    return [r for r in PRESETS.values() if is_solvable(r) and not r.bust_penalty]


def _test() -> list[Ruleset]:
    return [sample_ruleset(s) for s in TEST_SEEDS]


def train_rulesets(start: int = 0) -> Iterator[Ruleset]:
    """The training variants, from sampler seed ``start`` on: every seed's ruleset except those
    equal (by hash) to a held-out one or a preset, which are skipped."""
    held = {r.hash for r in _test()} | {r.hash for r in PRESETS.values()}
    seed = int(start)
    while True:
        r = sample_ruleset(seed)
        if r.hash not in held:
            yield r
        seed += 1


@functools.cache
def _known() -> frozenset[str]:
    """The hashes of every ruleset of the other splits: the held-out ones, the presets and the
    first :data:`TRAIN_REACH` training ones (about 2 s, once)."""
    it = train_rulesets()
    return frozenset(
        {r.hash for r in PRESETS.values()} | {r.hash for r in _test()} | {next(it).hash for _ in range(TRAIN_REACH)}
    )


def fresh(count: int, seed: int) -> list[Ruleset]:
    """``count`` rulesets drawn now: sampler seeds from a generator seeded by ``seed``, in
    :data:`FRESH_SEEDS`; a draw whose ruleset equals (by hash) one of another split (held out,
    a preset, the first :data:`TRAIN_REACH` training ones) or an earlier draw is drawn again.
    The same ``(count, seed)`` gives the same rulesets on every machine."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"fresh rulesets' seed {seed!r}: give an integer >= 0")
    rng = np.random.Generator(np.random.PCG64([0x7E5C, int(seed)]))
    seen = set(_known())
    out: list[Ruleset] = []
    while len(out) < count:
        r = sample_ruleset(int(rng.integers(*FRESH_SEEDS)))
        if r.hash not in seen:
            seen.add(r.hash)
            out.append(r)
    return out


def split(name: str, count: int | None = None, seed: int = 0) -> list[Ruleset]:
    """The rulesets of split ``name`` (train: the first ``count``, default 16; fresh: ``count``,
    default 16, drawn with ``seed``, :func:`fresh`)."""
    if name == "fresh":
        return fresh(16 if count is None else int(count), seed)
    if name == "test":
        return _test()
    if name == "presets":
        return covered()
    if name == "train":
        it = train_rulesets()
        return [next(it) for _ in range(16 if count is None else int(count))]
    raise ValueError(f"unknown split {name!r}; the suite's splits: {', '.join(SPLITS)}")
