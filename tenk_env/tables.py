"""Scoring tables: the one place where dice become points.

For a :class:`~tenk_env.rules.Ruleset` this module lists the scoring combinations,
finds the best reading of any set of dice, and builds once, for every sorted roll of
1..``num_dice`` dice, the legal keeps (every kept die scores within the kept set), their
points, and the roll's flags (bust, instant win, lose-all, zilch pay-out). The turn
machine, the environments, the bots and the solvers all read these tables, so they
cannot disagree about a score.

Dice are faces 1..6. A multiset of dice is a *counts* tuple ``(n1, n2, ..., n6)``.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    # The tables only read a ruleset's fields, while every Ruleset checks on construction that
    # its games can end, which takes these tables: so rules imports this module, not the reverse.
    from tenk_env.rules import Ruleset

__all__ = ["Combo", "Keep", "RollInfo", "Tables", "get_tables", "counts_of", "dice_of"]

FACES = (1, 2, 3, 4, 5, 6)


def counts_of(dice: Iterable[int]) -> tuple[int, ...]:
    c = [0] * 6
    for d in dice:
        c[d - 1] += 1
    return tuple(c)


def dice_of(counts: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(f for f, k in zip(FACES, counts) for _ in range(k))


class Combo(NamedTuple):
    """A scoring combination: the dice it uses (counts), its value and a readable name."""

    counts: tuple[int, ...]
    points: int
    name: str


class Keep(NamedTuple):
    """One legal set-aside from a roll (one per distinct multiset).

    ``mask`` is the canonical keep-mask over the roll shown sorted: bit ``i`` set keeps die
    ``i``, and for each face the lowest positions of that face are the ones kept.
    """

    mask: int
    dice: tuple[int, ...]
    counts: tuple[int, ...]
    n: int
    points: int
    reading: tuple[str, ...]


@dataclass(frozen=True)
class RollInfo:
    """Everything the rules say about one sorted roll."""

    dice: tuple[int, ...]
    counts: tuple[int, ...]
    keeps: tuple[Keep, ...]
    #: no legal keep and no pay-out: the turn total is lost
    bust: bool
    #: six of a kind that wins the game at once (``six_of_a_kind_wins``)
    instant_win: bool
    #: four or more 2s: banked score wiped (``four_twos_lose_all``)
    lose_all: bool
    #: all dice, nothing scoring, pays ``zilch_payout`` (``zilch_payout``)
    zilch: bool

    @property
    def best(self) -> Keep | None:
        return max(self.keeps, key=lambda k: (k.points, k.n), default=None)

    @property
    def keep_by_counts(self) -> dict[tuple[int, ...], Keep]:
        return {k.counts: k for k in self.keeps}


_NUM = ("", "one", "two", "three", "four", "five", "six")


def combos(rules: Ruleset) -> list[Combo]:
    """Every scoring combination the ruleset pays for, in at most ``num_dice`` dice."""
    nd = rules.num_dice
    out: list[Combo] = [
        Combo((1, 0, 0, 0, 0, 0), 100, "a 1"),
        Combo((0, 0, 0, 0, 1, 0), 50, "a 5"),
    ]

    def unit(*faces_counts: tuple[int, int]) -> tuple[int, ...]:
        c = [0] * 6
        for f, k in faces_counts:
            c[f - 1] += k
        return tuple(c)

    for f in FACES:
        triple = rules.three_ones if f == 1 else 100 * f
        out.append(Combo(unit((f, 3)), triple, f"three {f}s"))
        for n in range(4, nd + 1):
            if rules.multiples == "doubling":
                pts = triple * 2 ** (n - 3)
            elif rules.multiples == "flat":
                pts = rules.flat_multiples[n - 4]
            else:
                continue
            out.append(Combo(unit((f, n)), pts, f"{_NUM[n]} {f}s"))
    if nd == 6 and rules.straight:
        out.append(Combo((1,) * 6, rules.straight, "straight 1-6"))
    if rules.half_straights:
        out.append(Combo((1, 1, 1, 0, 0, 0), rules.half_straights, "half straight 1-2-3"))
        out.append(Combo((0, 0, 0, 1, 1, 1), rules.half_straights, "half straight 4-5-6"))
    if rules.short_straights:
        out.append(Combo((1, 1, 1, 1, 1, 0), rules.short_straights, "run 1-5"))
        out.append(Combo((0, 1, 1, 1, 1, 1), rules.short_straights, "run 2-6"))
    if nd == 6 and rules.three_pairs:
        for a, b, c in itertools.combinations(FACES, 3):
            out.append(Combo(unit((a, 2), (b, 2), (c, 2)), rules.three_pairs, f"three pairs {a}-{b}-{c}"))
        if rules.four_plus_pair_is_three_pairs:
            for a, b in itertools.permutations(FACES, 2):
                out.append(Combo(unit((a, 4), (b, 2)), rules.three_pairs, f"four {a}s and a pair as three pairs"))
    if nd == 6 and rules.two_triplets:
        for a, b in itertools.combinations(FACES, 2):
            out.append(Combo(unit((a, 3), (b, 3)), rules.two_triplets, f"two triplets {a}s and {b}s"))
    return out


def _sub(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    r = tuple(x - y for x, y in zip(a, b))
    return None if min(r) < 0 else r


def _submultisets(counts: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    return itertools.product(*(range(k + 1) for k in counts))


class Tables:
    """The scoring tables of one ruleset. Build with :func:`get_tables` (cached)."""

    def __init__(self, rules: Ruleset):
        self.rules = rules
        self._derived: dict[str, Any] = {}
        self.combos = combos(rules)
        nd = rules.num_dice
        # best[counts] = (points, reading) of the best partition of exactly these dice into
        # combinations, or None when some die cannot score within the set.
        self._best: dict[tuple[int, ...], tuple[int, tuple[str, ...]] | None] = {(0,) * 6: (0, ())}
        all_counts = sorted((c for c in itertools.product(range(nd + 1), repeat=6) if 0 < sum(c) <= nd), key=sum)
        for c in all_counts:
            best = None
            for combo in self.combos:
                rest = _sub(c, combo.counts)
                if rest is None:
                    continue
                sub = self._best[rest]
                if sub is not None and (best is None or combo.points + sub[0] > best[0]):
                    best = (combo.points + sub[0], (combo.name,) + sub[1])
            self._best[c] = best
        self.rolls: dict[tuple[int, ...], RollInfo] = {}
        for n in range(1, nd + 1):
            for dice in itertools.combinations_with_replacement(FACES, n):
                self.rolls[dice] = self._roll_info(dice)

    def _roll_info(self, dice: tuple[int, ...]) -> RollInfo:
        r = self.rules
        counts = counts_of(dice)
        first = {f: dice.index(f) for f in set(dice)}
        keeps = []
        for sub in _submultisets(counts):
            best = self._best[sub]
            if not any(sub) or best is None:
                continue
            mask = 0
            for f, k in zip(FACES, sub):
                for j in range(k):
                    mask |= 1 << (first[f] + j)
            keeps.append(Keep(mask, dice_of(sub), sub, sum(sub), best[0], best[1]))
        keeps.sort(key=lambda k: k.mask)
        n = len(dice)
        instant = n == 6 and (
            (r.six_of_a_kind_wins == "ones" and counts[0] == 6) or (r.six_of_a_kind_wins == "any" and max(counts) == 6)
        )
        lose_all = r.four_twos_lose_all and counts[1] >= 4 and not instant
        zilch = not keeps and r.zilch_payout > 0 and n == r.num_dice
        return RollInfo(
            dice,
            counts,
            tuple(keeps),
            bust=not keeps and not zilch,
            instant_win=instant,
            lose_all=lose_all,
            zilch=zilch,
        )

    # ------------------------------------------------------------------ queries
    def derived(self, key: str, build: Callable[[Tables], Any]) -> Any:
        """Data another module derives once per ruleset from these tables (a bot's odds, the
        encoder's mask arrays, the batched engine's arrays), kept here so it lives and dies
        with the tables that :func:`get_tables` caches."""
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = build(self)
            return value

    def roll(self, dice: Iterable[int]) -> RollInfo:
        return self.rolls[tuple(sorted(dice))]

    def score(self, dice: Iterable[int]) -> int | None:
        """Best reading of a set of dice, or None when some die does not score within it."""
        best = self._best.get(counts_of(dice))
        return None if best is None else best[0]

    def reading(self, dice: Iterable[int]) -> tuple[str, ...] | None:
        best = self._best.get(counts_of(dice))
        return None if best is None else best[1]

    def why_not(self, dice: Iterable[int]) -> str:
        """Why a set of dice is not a legal keep, in words."""
        dice = tuple(sorted(dice))
        c = counts_of(dice)
        if not dice:
            return "at least one scoring die must be set aside"
        if sum(c) > self.rules.num_dice:
            return f"only {self.rules.num_dice} dice are in play"
        dead = [
            f
            for f in FACES
            if c[f - 1] and not any(combo.counts[f - 1] and _sub(c, combo.counts) is not None for combo in self.combos)
        ]
        if dead:
            what = ", ".join(f"the {f}" + ("s" if c[f - 1] > 1 else "") for f in dead)
            return f"{what} in {list(dice)} do{'es' if len(dead) == 1 and c[dead[0] - 1] == 1 else ''} not score within the kept dice"
        return f"the dice {list(dice)} cannot all be part of scoring combinations at once"

    @functools.cache  # noqa: B019 (a ruleset's tables live as long as the process: get_tables caches them)
    def max_turn_points(self, rolls: int) -> int:
        """The largest turn total that ``rolls`` rolls can reach (with the luckiest dice)."""
        nd = self.rules.num_dice
        best = {n: 0 for n in range(1, nd + 1)}  # best[n]: with n dice to roll and no rolls left
        for _ in range(rolls):
            best = {
                n: max(
                    [
                        k.points + best[n - k.n or nd]
                        for dice, info in self.rolls.items()
                        if len(dice) == n
                        for k in info.keeps
                    ]
                    + ([self.rules.zilch_payout + best[nd]] if n == nd and self.rules.zilch_payout else []),
                    default=0,
                )
                for n in range(1, nd + 1)
            }
        return best[nd]

    def bank_chance(self, threshold: int) -> float:
        """The best chance that one turn ends able to bank at least ``threshold`` points (or
        wins at once), under the ruleset's roll limit, hot-dice rule and zilch pay-outs.

        A turn played for this alone keeps rolling until its total reaches the threshold, so
        the value is a backward induction over (rolls used, dice to roll, turn total) with every
        total at or past the threshold merged into one: a keep or pay-out only raises the total,
        and only a forced roll there (mandatory hot dice) can lose it, a fixed point solved by
        iteration. Exact up to float rounding; the cost grows with ``threshold`` over the step
        of the scoring values (milliseconds to a few tenths of a second)."""
        r = self.rules
        N, R = r.num_dice, max(1, r.max_rolls)
        g = functools.reduce(
            math.gcd, [k.points for info in self.rolls.values() for k in info.keeps] + [r.zilch_payout], 0
        )
        X = -(-threshold // g)
        if X <= 0:
            return 1.0
        mandatory = r.hot_dice == "mandatory"
        # per number of dice: the roll classes' chances and kinds, and their options flattened
        groups = []
        for n in range(1, N + 1):
            prob: list[float] = []
            kind: list[int] = []
            op: list[int] = []
            od: list[int] = []
            start: list[int] = []
            for dice, info in self.rolls.items():
                if len(dice) != n:
                    continue
                w = math.factorial(n) / math.prod(math.factorial(k) for k in info.counts) / 6**n
                if info.instant_win:
                    kind.append(1)
                elif info.bust or info.lose_all:
                    kind.append(0)
                elif info.zilch:
                    kind.append(2)
                else:
                    kind.append(3)
                    start.append(len(op))
                    op.extend(k.points // g for k in info.keeps)
                    od.extend(k.n for k in info.keeps)
                prob.append(w)
            kind_a, prob_a = np.array(kind), np.array(prob)
            left = n - np.array(od, dtype=np.int64)
            groups.append(
                (
                    prob_a[kind_a == 1].sum(),
                    prob_a[kind_a == 2].sum(),
                    prob_a[kind_a == 3],
                    np.array(op, dtype=np.int64),
                    left,
                    np.where(left == 0, N, left),
                    np.array(start, dtype=np.int64),
                )
            )
        z = r.zilch_payout // g
        # f[k, n, T]: value of rolling n dice at total T with k rolls used; row R: no roll left
        f = np.zeros((R + 1, N + 1, X + 1))

        def roll(k: int, n: int, T: int) -> float:
            win, pz, pc, op, left, nxt, start = groups[n - 1]
            k2 = k + 1 if r.max_rolls else k
            more = k2 < R
            T2 = np.minimum(T + op, X)
            done = T2 == X
            # at the threshold a keep banks, unless hot dice must be rolled while rolls remain
            forced = done & (left == 0) & mandatory & more
            after = np.where(done & ~forced, 1.0, f[k2, nxt, T2] if more else 0.0)
            v = win + (pc @ np.maximum.reduceat(after, start) if len(start) else 0.0)
            if pz:
                Tz = min(T + z, X)
                v += pz * (f[k2, N, Tz] if more else float(Tz == X))
            return v

        for T in range(X, -1, -1):
            for _ in range(10_000 if T == X and not r.max_rolls else 1):
                old = f[0, N, T]
                for k in range(R - 1, -1, -1):
                    for n in range(1, N + 1):
                        f[k, n, T] = roll(k, n, T)
                if T < X or r.max_rolls or abs(f[0, N, T] - old) < 1e-15:
                    break
        return float(f[0, N, 0])

    def odds(self) -> list[tuple[int, float, float]]:
        """(n, bust chance, mean best points) for every roll of n dice, by exact enumeration.

        A zilch pay-out counts as the roll's points and not as a bust.
        """
        out = []
        for n in range(1, self.rules.num_dice + 1):
            bust = total = 0.0
            for dice in itertools.combinations_with_replacement(FACES, n):
                info = self.rolls[dice]
                w = math.factorial(n) / math.prod(math.factorial(k) for k in info.counts)
                if info.bust:
                    bust += w
                elif info.zilch:
                    total += w * self.rules.zilch_payout
                else:
                    best = info.best
                    assert best is not None  # a roll that is not a bust scores
                    total += w * best.points
            out.append((n, bust / 6**n, total / 6**n))
        return out


# 256: a training run drawing its games from up to that many rulesets (a 200-ruleset suite
# pool) keeps every table; rebuilding one takes about a second, longer than a game (1 MB each)
@functools.lru_cache(maxsize=256)
def get_tables(rules: Ruleset) -> Tables:
    """The (cached) scoring tables of a ruleset."""
    return Tables(rules)
