"""The observation of :mod:`tenk_env.obs`, computed for many games of a batched engine at once.

:func:`encode_batch` gives, row for row, exactly ``tenk_env.obs.encode(game, seat)`` (the
tests compare them bit for bit): the dice features are read from the very arrays
``tenk_env.obs`` caches per roll, and every other value is computed in float64 with the
same operations and cast to float32 once, as the scalar encoder does.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit
from tenk_env.obs import OBS_VERSION, TURN_SCALE, obs_size, obs_tables
from tenk_env.rules import Ruleset
from tenk_env.vector.engine import BatchedGame
from tenk_env.vector.layout import (
    F_CURRENT,
    F_DL,
    F_FINAL,
    F_PHASE,
    F_PIGD,
    F_PIGT,
    F_RID,
    F_ROLLS,
    F_TRIGGER,
    F_TT,
    P_BUSTS,
    P_ONBOARD,
    P_SCORE,
    PH_DECIDE,
    PH_ORDER,
    PH_OVER,
    PH_PIGGY,
)

__all__ = ["encode_batch", "k_encode", "obs_consts", "roll_features", "OBS_VERSION"]

_N_DICE = 42
_N_FIXED = 56


def roll_features(engine: BatchedGame) -> np.ndarray:
    """(n_rolls, 42) dice features per roll id, from tenk_env.obs's own cache."""

    def build(tables) -> np.ndarray:
        d = obs_tables(tables)
        f = np.zeros((engine.arrays.n_rolls, _N_DICE), np.float32)
        for dice, r in engine.arrays.roll_index.items():
            f[r] = d.rolls[dice].feat
        return f

    return engine.tables.derived("vector.obs", build)


#: obs_consts() entries
OC_TARGET, OC_NUM_DICE, OC_MAX_ROLLS, OC_ONE_MORE, OC_AFTER = range(5)


def obs_consts(rules: Ruleset) -> np.ndarray:
    """The ruleset values the encoder reads, as float64 (all small integers: exact)."""
    after = rules.bust_penalty_after if rules.bust_penalty else 0
    return np.array([rules.target, rules.num_dice, rules.max_rolls, rules.end == "one_more_roll", after], np.float64)


@njit(cache=True, nogil=True)
def k_encode(ix, seats, S, PS, feat, oc, out):
    """tenk_env.obs.encode for the games ``ix`` (row i of ``out`` from seat ``seats[i]``): the
    same values computed in float64 with the same operations, cast to float32 once."""
    P = PS.shape[2]
    target = oc[OC_TARGET]
    nd = oc[OC_NUM_DICE]
    after = oc[OC_AFTER]
    for i in range(len(ix)):
        b = ix[i]
        row = out[i]
        ph = S[F_PHASE, b]
        rid = S[F_RID, b]
        if ph == PH_DECIDE:
            row[:_N_DICE] = feat[rid]
        else:
            row[:_N_DICE] = 0.0
        cur = S[F_CURRENT, b]
        trigger = S[F_TRIGGER, b]
        final = S[F_FINAL, b] != 0
        if ph == PH_OVER or ph == PH_ORDER:
            row[42:51] = 0.0
            row[51] = 1.0 if ph == PH_OVER else 0.0
            row[52:55] = 0.0
        else:
            tt = float(S[F_TT, b])
            rolls = float(S[F_ROLLS, b])
            m = oc[OC_MAX_ROLLS]
            if oc[OC_ONE_MORE] != 0 and final and cur != trigger:  # Game.max_rolls
                m = 1.0
            own = PS[P_SCORE, b, cur] + tt
            row[42] = S[F_DL, b] / nd
            row[43] = min(tt / target, 2.0)
            row[44] = min(tt / TURN_SCALE, 1.0)
            row[45] = min(rolls / 10.0, 1.0)
            row[46] = 1.0 if m != 0 else 0.0
            row[47] = max(m - rolls, 0.0) / m if m != 0 else 1.0
            row[48] = min(own / target, 2.0)
            row[49] = 1.0 if ph == PH_DECIDE else 0.0
            row[51] = 0.0
            if ph == PH_PIGGY:
                pt = float(S[F_PIGT, b])
                row[50] = 1.0
                row[52] = S[F_PIGD, b] / nd
                row[53] = min(pt / target, 2.0)
                row[54] = min(pt / TURN_SCALE, 1.0)
            else:
                row[50] = 0.0
                row[52:55] = 0.0
        row[55] = 1.0 if final else 0.0
        to_move = -1 if ph == PH_OVER else cur
        for j in range(P):
            q = (seats[i] + j) % P
            base = _N_FIXED + 5 * j
            row[base] = min(PS[P_SCORE, b, q] / target, 2.0)
            row[base + 1] = 1.0 if PS[P_ONBOARD, b, q] != 0 else 0.0
            row[base + 2] = PS[P_BUSTS, b, q] / after if after != 0 else 0.0
            row[base + 3] = 1.0 if q == to_move else 0.0
            row[base + 4] = 1.0 if q == trigger else 0.0


def encode_batch(engine: BatchedGame, seats, games=None, out: np.ndarray | None = None) -> np.ndarray:
    """Observations (k, obs_size) of ``games`` (default: all, in slot order), each from the
    seat in ``seats`` (one per game, or a single seat for all)."""
    ix = np.arange(engine.batch_size, dtype=np.int64) if games is None else np.asarray(games, np.int64)
    k = len(ix)
    n = engine.n_players
    if out is None:
        out = np.empty((k, obs_size(n)), np.float32)
    elif out.shape != (k, obs_size(n)) or out.dtype != np.float32:
        raise ValueError(
            f"encode_batch(out=...): expected float32 of shape ({k}, {obs_size(n)}), got {out.dtype} {out.shape}"
        )
    seats = np.ascontiguousarray(np.broadcast_to(np.asarray(seats, np.int64), (k,)))
    oc = engine.tables.derived("vector.obs_consts", lambda t: obs_consts(t.rules))
    k_encode(ix, seats, engine._S, engine._PS, roll_features(engine), oc, out)
    return out
