"""The observation of :mod:`tenk_env.obs`, computed for many games of a batched engine at once.

:func:`encode_batch` gives, row for row, exactly ``tenk_env.obs.encode(game, seat)`` (the
tests compare them bit for bit): the dice features are read from the very arrays
``tenk_env.obs`` caches per roll, and every other value is computed in float64 with the
same operations and cast to float32 once, as the scalar encoder does.
"""

from __future__ import annotations

import numpy as np

from tenk_env.obs import OBS_VERSION, TURN_SCALE, _data, obs_size
from tenk_env.vector.engine import BatchedGame
from tenk_env.vector.layout import PH_DECIDE, PH_ORDER, PH_OVER, PH_PIGGY

__all__ = ["encode_batch", "OBS_VERSION"]

_N_DICE = 42
_N_FIXED = 56


def _roll_features(engine: BatchedGame) -> np.ndarray:
    """(n_rolls, 42) dice features per roll id, from tenk_env.obs's own cache."""

    def build(tables) -> np.ndarray:
        d = _data(tables)
        f = np.zeros((engine.arrays.n_rolls, _N_DICE), np.float32)
        for dice, r in engine.arrays.roll_index.items():
            f[r] = d.rolls[dice].feat
        return f

    return engine.tables.derived("vector.obs", build)


def encode_batch(engine: BatchedGame, seats, games=None, out: np.ndarray | None = None) -> np.ndarray:
    """Observations (k, obs_size) of ``games`` (default: all, in slot order), each from the
    seat in ``seats`` (one per game, or a single seat for all)."""
    S_ph = engine.phase
    ix = np.arange(engine.batch_size) if games is None else np.asarray(games, np.int64)
    k = len(ix)
    n = engine.n_players
    if out is None:
        out = np.empty((k, obs_size(n)), np.float32)
    elif out.shape != (k, obs_size(n)) or out.dtype != np.float32:
        raise ValueError(f"encode_batch(out=...): expected float32 of shape ({k}, {obs_size(n)}), "
                         f"got {out.dtype} {out.shape}")
    seats = np.broadcast_to(np.asarray(seats, np.int64), (k,))
    r = engine.rules
    target = float(r.target)
    ph = S_ph[ix]
    decide = ph == PH_DECIDE
    live = (ph != PH_OVER) & (ph != PH_ORDER)
    rid = engine.roll_id[ix]
    out[:, :_N_DICE] = np.where(decide[:, None], _roll_features(engine)[np.maximum(rid, 0)], 0.0)
    cur = engine.current[ix]
    tt = engine.turn_total[ix].astype(np.float64)
    rolls = engine.rolls[ix].astype(np.float64)
    final = engine.final_round[ix] != 0
    trigger = engine.trigger[ix]
    m = np.full(k, float(r.max_rolls))  # Game.max_rolls
    if r.end == "one_more_roll":
        m[final & (cur != trigger)] = 1.0
    scores = engine.scores[ix].astype(np.float64)
    own = scores[np.arange(k), cur] + tt
    pig = ph == PH_PIGGY
    pd = engine.piggy_dice[ix].astype(np.float64)
    pt = engine.piggy_total[ix].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = np.stack([
            engine.dice_left[ix] / r.num_dice,
            np.minimum(tt / target, 2.0),
            np.minimum(tt / TURN_SCALE, 1.0),
            np.minimum(rolls / 10.0, 1.0),
            (m != 0).astype(np.float64),
            np.where(m != 0, np.maximum(m - rolls, 0.0) / m, 1.0),
            np.minimum(own / target, 2.0),
            decide.astype(np.float64),
            pig.astype(np.float64),
        ], axis=1)
    tail[~live] = 0.0
    out[:, 42:51] = tail
    out[:, 51] = ph == PH_OVER
    out[:, 52] = np.where(pig, pd / r.num_dice, 0.0)
    out[:, 53] = np.where(pig, np.minimum(pt / target, 2.0), 0.0)
    out[:, 54] = np.where(pig, np.minimum(pt / TURN_SCALE, 1.0), 0.0)
    out[:, 55] = final
    after = r.bust_penalty_after if r.bust_penalty else 0
    to_move = np.where(ph == PH_OVER, -1, cur)
    rows = np.arange(k)
    for j in range(n):
        q = (seats + j) % n
        base = _N_FIXED + 5 * j
        out[:, base] = np.minimum(scores[rows, q] / target, 2.0)
        out[:, base + 1] = engine.on_board[ix, q] != 0
        out[:, base + 2] = engine.busts_in_row[ix, q] / after if after else 0.0
        out[:, base + 3] = q == to_move
        out[:, base + 4] = q == trigger
    return out
