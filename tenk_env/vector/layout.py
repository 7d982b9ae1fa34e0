"""Array layout of the batched engine.

All game state lives in two int32 arrays so that the engine's NumPy-side reads get contiguous
rows (``S[FIELD]`` is one field for every game) and the numba kernels take a handful of
arguments instead of thirty:

* ``S[F_*, b]``: per-game scalars.
* ``PS[P_*, b, q]``: per-game, per-seat values.

The scoring tables of a ruleset become flat arrays indexed by a *roll id* (one id per
sorted roll of 1..num_dice dice). A roll's id is found from its faces with one gather:
the sum of ``7 ** (face - 1)`` over the dice is the base-7 code of the face counts,
and ``KEY_TO_ROLL[code]`` is the id. Keeps are indexed by their canonical 6-bit mask
over the sorted dice, exactly the mask of :class:`tenk_env.tables.Keep`.
"""

from __future__ import annotations

import numpy as np

from tenk_env.rules import Ruleset
from tenk_env.tables import Tables, get_tables

# ---------------------------------------------------------------- phases (== tenk_env.game.Phase)
PH_ORDER, PH_PIGGY, PH_ROLL, PH_DECIDE, PH_OVER = 0, 1, 2, 3, 4

# ---------------------------------------------------------------- actions
END_BIT = 64  # keep-mask | END_BIT: set the keep aside and end the turn
ACT_TAKE, ACT_FRESH = 128, 129  # piggyback choices (rulesets with piggyback only)

# ---------------------------------------------------------------- per-game fields S[F, b]
(
    F_PHASE,
    F_CURRENT,
    F_TURN,
    F_TT,
    F_DL,
    F_ROLLS,
    F_RID,
    F_FINAL,
    F_FLEFT,
    F_TRIGGER,
    F_PIGD,
    F_PIGT,
    F_NREACHED,
    F_GAME,
    F_ORDERN,
) = range(15)
NF = 15
# F_GAME: games started in the slot; F_ORDERN: turn-order rolls made in this game (dice keys)
# ---------------------------------------------------------------- per-seat fields PS[P, b, q]
P_SCORE, P_ONBOARD, P_BUSTS, P_REACHED, P_CONTENDER, P_WINNER, P_FINAL, P_TURNS, P_GBUSTS, P_GBANKED = range(10)
NPF = 10
# P_TURNS: turns the seat has started in this game (dice keys); P_GBUSTS, P_GBANKED: the
# seat's busts and banked points in this game (per-seat statistics without events)

# ---------------------------------------------------------------- what a roll does (Game.roll's order)
K_OK, K_INSTANT, K_LOSE_ALL, K_ZILCH, K_BUST = 0, 1, 2, 3, 4

# ---------------------------------------------------------------- ruleset constants RC[...]
(
    RC_ND,
    RC_P,
    RC_TARGET,
    RC_ENTRY,
    RC_MINBANK,
    RC_MAXROLLS,
    RC_MANDATORY,
    RC_END,
    RC_EXACT,
    RC_TIE,
    RC_PEN,
    RC_PENAFTER,
    RC_PIGGY,
    RC_HIGHEST,
    RC_KOMI,
    RC_ZILCH,
    RC_AUTORESET,
) = range(17)
NRC = 17
END_CODES = {"final_round": 0, "one_more_roll": 1, "immediate": 2}
EXACT_CODES = {"off": 0, "forfeit": 1, "to_lowest": 2}
TIE_CODES = {"first_to_target": 0, "shared": 1}

# ---------------------------------------------------------------- statistics counters
STAT_NAMES = (
    "games",  # games finished
    "decisions",  # actions applied (keeps and piggyback choices): the "steps"
    "rolls",  # dice rolls in turns (not turn-order rolls)
    "turns",  # turns started
    "busts",
    "banks",
    "points_banked",
    "stops",  # turns ended with a total that could not be banked (forfeited)
    "overshoots",  # exact-finish forfeits
    "penalties",  # bust penalties applied
    "zilch",  # zilch pay-outs
    "lose_all",
    "instant_wins",
    "piggybacks",  # piggybacks taken
    "shared_wins",  # games won by more than one seat (tie: shared)
)
(
    S_GAMES,
    S_DECISIONS,
    S_ROLLS,
    S_TURNS,
    S_BUSTS,
    S_BANKS,
    S_POINTS,
    S_STOPS,
    S_OVERSHOOTS,
    S_PENALTIES,
    S_ZILCH,
    S_LOSE_ALL,
    S_INSTANT,
    S_PIGGY,
    S_SHARED,
) = range(len(STAT_NAMES))
S_WINS = len(STAT_NAMES)  # then one counter per seat: wins

# faces 1..6 -> 7 ** (face - 1); index 0 (no die) -> 0
POW7F = np.array([0, 1, 7, 49, 343, 2401, 16807], dtype=np.int64)
POPCOUNT = np.array([bin(m).count("1") for m in range(64)], dtype=np.int32)
MAX_FACES = 8  # widest roll: the turn-order roll of 8 players

# splitmix64 (Steele, Lea and Flood 2014): the per-game dice streams.
SM_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SM_M1 = np.uint64(0xBF58476D1CE4E5B9)
SM_M2 = np.uint64(0x94D049BB133111EB)


class TableArrays:
    """The scoring tables of one ruleset as flat arrays (get one with :func:`table_arrays`)."""

    def __init__(self, tables: Tables):
        rolls = sorted(tables.rolls.values(), key=lambda i: (len(i.dice), i.dice))
        R = len(rolls)
        self.n_rolls = R
        self.infos = rolls
        self.roll_n = np.zeros(R, np.int32)
        self.roll_dice = np.zeros((R, 6), np.int32)
        self.roll_kind = np.zeros(R, np.int32)
        #: points of keeping canonical mask m from roll r; -1: not a legal keep
        self.keep_pts = np.full((R, 64), -1, np.int32)
        self.key_to_roll = np.full(7**6, -1, np.int32)
        self.roll_index: dict[tuple[int, ...], int] = {}
        for r, info in enumerate(rolls):
            n = len(info.dice)
            self.roll_index[info.dice] = r
            self.roll_n[r] = n
            self.roll_dice[r, :n] = info.dice
            self.key_to_roll[int(POW7F[list(info.dice)].sum())] = r
            if info.instant_win:
                self.roll_kind[r] = K_INSTANT
            elif info.lose_all:
                self.roll_kind[r] = K_LOSE_ALL
            elif info.zilch:
                self.roll_kind[r] = K_ZILCH
            elif info.bust:
                self.roll_kind[r] = K_BUST
            for k in info.keeps:
                assert k.mask < (1 << n), (info.dice, k)
                self.keep_pts[r, k.mask] = k.points
        self.keep_legal = self.keep_pts >= 0
        # The legal keep masks of each roll as a padded list (at most 16 per roll), for the
        # compiled kernels that loop over a roll's keeps.
        self.keep_list = np.zeros((R, 16), np.int64)
        self.keep_cnt = np.zeros(R, np.int64)
        for r in range(R):
            ms = np.flatnonzero(self.keep_legal[r])
            self.keep_list[r, : len(ms)] = ms
            self.keep_cnt[r] = len(ms)


def table_arrays(rules: Ruleset) -> TableArrays:
    """The cached arrays of a ruleset (kept with its tables: ``Tables.derived``)."""
    return get_tables(rules).derived("vector", TableArrays)


def rule_constants(rules: Ruleset, n_players: int, auto_reset: bool) -> np.ndarray:
    rc = np.zeros(NRC, np.int64)
    rc[RC_ND] = rules.num_dice
    rc[RC_P] = n_players
    rc[RC_TARGET] = rules.target
    rc[RC_ENTRY] = rules.entry_threshold
    rc[RC_MINBANK] = rules.min_bank
    rc[RC_MAXROLLS] = rules.max_rolls
    rc[RC_MANDATORY] = rules.hot_dice == "mandatory"
    rc[RC_END] = END_CODES[rules.end]
    rc[RC_EXACT] = EXACT_CODES[rules.exact_finish]
    rc[RC_TIE] = TIE_CODES[rules.tie]
    rc[RC_PEN] = rules.bust_penalty
    rc[RC_PENAFTER] = rules.bust_penalty_after
    rc[RC_PIGGY] = rules.piggyback
    rc[RC_HIGHEST] = rules.turn_order == "highest_die"
    rc[RC_KOMI] = rules.komi
    rc[RC_ZILCH] = rules.zilch_payout
    rc[RC_AUTORESET] = auto_reset
    return rc


# Dice keys. The faces of a roll are a function of the slot's key and of where the roll
# falls in the game, not of how many rolls came before: roll ``i`` of the ``t``-th turn of
# seat ``q`` in the slot's ``g``-th game always shows the same dice, whatever the players
# did. Two slots given the same key therefore deal each seat the same dice, roll for roll
# (duplicate play: swap the agents between the two slots and the dice luck cancels), and a
# game's dice never depend on the other games, on the backend or on threading.
#
# counter = g << 37 | t << 17 | q << 14 | i << 2 | j   (j: which 64-bit output of the roll)
# output  = splitmix64_mix(key + (counter + 1) * GAMMA)
# Each output gives two dice, from its high and low 32 bits ((x * 6) >> 32; bias < 1e-9).
# Turn-order rolls use t = 2**20 - 1, q = 7 and i = the order round.
ORDER_T, ORDER_Q = (1 << 20) - 1, 7


def dice_counter(game: np.ndarray, turn: np.ndarray, seat: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """The counter of output 0 of a roll (uint64; see above). Fields wrap at their widths."""
    u = np.uint64
    return (
        (game.astype(u) << u(37))
        | ((turn.astype(u) & u(0xFFFFF)) << u(17))
        | ((seat.astype(u) & u(7)) << u(14))
        | ((roll.astype(u) & u(0xFFF)) << u(2))
    )


def splitmix64(key: np.ndarray, i: np.ndarray) -> np.ndarray:
    """Output ``i`` of the splitmix64 stream of ``key`` (uint64 arrays; wraps mod 2**64)."""
    with np.errstate(over="ignore"):
        z = key + i * SM_GAMMA
        z = (z ^ (z >> np.uint64(30))) * SM_M1
        z = (z ^ (z >> np.uint64(27))) * SM_M2
        return z ^ (z >> np.uint64(31))


def keyed_faces(keys: np.ndarray, counter: np.ndarray, n_faces: np.ndarray, width: int) -> np.ndarray:
    """Faces (k, width) of rolls of ``n_faces`` dice: 0 past each roll's dice. The numba
    kernels draw the same faces."""
    k = len(keys)
    faces = np.zeros((k, width), np.int64)
    with np.errstate(over="ignore"):
        for j in range(int((n_faces.max(initial=0) + 1) // 2)):
            z = splitmix64(keys, counter + np.uint64(j + 1))
            faces[:, 2 * j] = (((z >> np.uint64(32)) * np.uint64(6)) >> np.uint64(32)).astype(np.int64) + 1
            if 2 * j + 1 < width:
                lo = ((z & np.uint64(0xFFFFFFFF)) * np.uint64(6)) >> np.uint64(32)
                faces[:, 2 * j + 1] = lo.astype(np.int64) + 1
    faces[np.arange(width)[None, :] >= n_faces[:, None]] = 0
    return faces


_M64 = (1 << 64) - 1
_GAMMA, _M1, _M2 = int(SM_GAMMA), int(SM_M1), int(SM_M2)


def keyed_roll(key: int, game: int, turn: int, seat: int, roll: int, n: int) -> list[int]:
    """The ``n`` faces of one roll, as :func:`keyed_faces` draws them, in plain Python ints:
    the scalar engine's :class:`tenk_env.evaluation.play.KeyedDice` (a NumPy call per roll would cost
    more than the scalar game's whole step)."""
    counter = ((game << 37) | ((turn & 0xFFFFF) << 17) | ((seat & 7) << 14) | ((roll & 0xFFF) << 2)) & _M64
    out: list[int] = []
    j = 0
    while len(out) < n:
        j += 1
        z = (key + (counter + j) * _GAMMA) & _M64
        z = ((z ^ (z >> 30)) * _M1) & _M64
        z = ((z ^ (z >> 27)) * _M2) & _M64
        z ^= z >> 31
        out.append((((z >> 32) * 6) >> 32) + 1)
        if len(out) < n:
            out.append((((z & 0xFFFFFFFF) * 6) >> 32) + 1)
    return out


def faces_to_roll(ta: TableArrays, faces: np.ndarray) -> np.ndarray:
    """Roll ids of rows of faces (0 = no die)."""
    return ta.key_to_roll[POW7F[faces[:, :6]].sum(axis=1)]
