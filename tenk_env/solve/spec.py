"""The solvers' view of a ruleset: flat arrays built from the scoring tables.

Everything here is read from :func:`tenk_env.tables.get_tables` (the one scoring source).
For each number of dice n, the sorted rolls are grouped into *classes*: rolls that offer
exactly the same set of (points, dice used) keeps behave identically in every solver, so
their multinomial probabilities are summed. All points are counted in *units*, the
greatest common divisor of every value a score can move by, so that arrays indexed by a
score stay small (50 points under every preset).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from functools import reduce
from typing import NamedTuple

import numpy as np

from tenk_env.rules import Ruleset
from tenk_env.tables import get_tables

#: roll class kinds
NORMAL, BUST, WIN, ZILCH = 0, 1, 2, 3
#: ``end`` option codes
END_IMMEDIATE, END_FINAL_ROUND, END_ONE_MORE_ROLL = 0, 1, 2

# prm vector layout (int64), shared with the kernels
P_N, P_ENTRY, P_MINBANK, P_MAXROLLS, P_HOTMAND, P_ZILCH, P_TARGET, P_END, P_SHARED, P_PEN, P_PENAFTER = range(11)


class SolverError(ValueError):
    """A ruleset (or a request) the exact solvers cannot handle; the message says why and what to do."""


class Rolls(NamedTuple):
    """What a roll can show and what it offers, as every kernel reads it: passed whole (numba
    takes a named tuple of arrays), each kernel unpacking the arrays it reads.

    A roll of n dice falls into one of the *classes* ``cstart[n]:cstart[n + 1]`` (rolls that
    offer the same keeps), with its chance ``c_prob`` and kind ``c_kind`` (NORMAL, BUST, WIN,
    ZILCH). A class's keeps are the options ``c_os[c]:c_oe[c]``, each worth ``o_p`` units and
    using ``o_d`` dice, sorted points descending then dice ascending (the tie order of
    :func:`tenk_env.solve.kernels.rules.better_keep`)."""

    cstart: np.ndarray
    c_prob: np.ndarray
    c_kind: np.ndarray
    c_os: np.ndarray
    c_oe: np.ndarray
    o_p: np.ndarray
    o_d: np.ndarray


@dataclass(frozen=True)
class Spec:
    rules: Ruleset
    unit: int
    #: int64 parameter vector (layout P_*)
    prm: np.ndarray
    #: the outcomes of a roll (:class:`Rolls`)
    rolls: Rolls
    #: largest single step of a turn total (a keep or a zilch pay-out), in units
    max_step: int
    #: probability that a roll of n dice busts
    p_bust: np.ndarray

    @property
    def cstart(self) -> np.ndarray:
        return self.rolls.cstart

    @property
    def c_prob(self) -> np.ndarray:
        return self.rolls.c_prob

    @property
    def c_kind(self) -> np.ndarray:
        return self.rolls.c_kind

    @property
    def c_os(self) -> np.ndarray:
        return self.rolls.c_os

    @property
    def c_oe(self) -> np.ndarray:
        return self.rolls.c_oe

    @property
    def o_p(self) -> np.ndarray:
        return self.rolls.o_p

    @property
    def o_d(self) -> np.ndarray:
        return self.rolls.o_d

    @property
    def n_dice(self) -> int:
        return int(self.prm[P_N])

    @property
    def n_rolls_dim(self) -> int:
        """Size of the rolls-used axis of value arrays (1 when rolls are unlimited)."""
        return max(1, int(self.prm[P_MAXROLLS]))

    def units(self, points: int) -> int:
        """A threshold in points as the smallest turn total in units that meets it."""
        return -(-points // self.unit)


def _multinomial(counts) -> int:
    n = sum(counts)
    return math.factorial(n) // math.prod(math.factorial(k) for k in counts)


def build_spec(rules: Ruleset, *, for_game: bool) -> Spec:
    """Arrays for the turn solver (``for_game=False``) or the game solver.

    The game solver treats an instant-win roll as a win; the turn solver (expected points)
    scores it as its best keep, since a win is not a number of points.
    """
    if rules.four_twos_lose_all:
        raise SolverError(
            f"ruleset {rules.name!r}: four_twos_lose_all wipes a banked score, so a turn's worth "
            "depends on the whole score history; the exact solvers do not model it (set four_twos_lose_all: false)"
        )
    tables = get_tables(rules)
    N = rules.num_dice
    raw: list[dict] = []
    values: list[int] = []
    for n in range(1, N + 1):
        classes: dict = defaultdict(int)
        for dice in itertools.combinations_with_replacement(range(1, 7), n):
            key: tuple[int, tuple[tuple[int, int], ...]]
            info = tables.rolls[dice]
            w = _multinomial(info.counts)
            if info.bust:
                key = (BUST, ())
            elif info.zilch:
                key = (ZILCH, ())
            elif info.instant_win and for_game:
                key = (WIN, ())
            else:
                opts = tuple(sorted({(k.points, k.n) for k in info.keeps}, key=lambda o: (-o[0], o[1])))
                key = (NORMAL, opts)
                values.extend(p for p, _ in opts)
            classes[key] += w
        raw.append(classes)
    if rules.zilch_payout:
        values.append(rules.zilch_payout)
    values.append(rules.bust_penalty)
    values.append(rules.komi)
    unit = reduce(math.gcd, [v for v in values if v], 0) or 50
    cstart = [0, 0]
    c_prob: list[float] = []
    c_kind: list[int] = []
    c_os: list[int] = []
    c_oe: list[int] = []
    o_p: list[int] = []
    o_d: list[int] = []
    p_bust = np.zeros(N + 1)
    for n, classes in enumerate(raw, start=1):
        total = 6**n
        for (kind, opts), w in sorted(classes.items()):
            c_prob.append(w / total)
            c_kind.append(kind)
            c_os.append(len(o_p))
            for p, d in opts:
                o_p.append(p // unit)
                o_d.append(d)
            c_oe.append(len(o_p))
            if kind == BUST:
                p_bust[n] = w / total
        cstart.append(len(c_prob))
    end = {"immediate": END_IMMEDIATE, "final_round": END_FINAL_ROUND, "one_more_roll": END_ONE_MORE_ROLL}[rules.end]
    prm = np.zeros(11, dtype=np.int64)
    prm[P_N] = N
    prm[P_ENTRY] = -(-rules.entry_threshold // unit)
    prm[P_MINBANK] = -(-rules.min_bank // unit)
    prm[P_MAXROLLS] = rules.max_rolls
    prm[P_HOTMAND] = rules.hot_dice == "mandatory"
    prm[P_ZILCH] = rules.zilch_payout // unit
    prm[P_TARGET] = -(-rules.target // unit)
    prm[P_END] = end
    prm[P_SHARED] = rules.tie == "shared"
    prm[P_PEN] = rules.bust_penalty // unit
    prm[P_PENAFTER] = rules.bust_penalty_after if rules.bust_penalty else 0
    max_step = max(max(o_p, default=1), prm[P_ZILCH])
    return Spec(
        rules,
        unit,
        prm,
        Rolls(
            np.array(cstart, dtype=np.int64),
            np.array(c_prob),
            np.array(c_kind, dtype=np.int64),
            np.array(c_os, dtype=np.int64),
            np.array(c_oe, dtype=np.int64),
            np.array(o_p, dtype=np.int64),
            np.array(o_d, dtype=np.int64),
        ),
        int(max_step),
        p_bust,
    )
