"""Batched engine: thousands of games of Ten Thousand stepped by one call.

:class:`BatchedGame` holds ``batch_size`` games of one ruleset in preallocated arrays and
plays exactly the game of :class:`tenk_env.game.Game`: the agreement tests feed both the
same dice and actions and compare every state field, legal-action mask, game end,
winner and statistic after every step, for every preset and option.

The API is game-level: every decision of every seat comes in as an action (the action
encoding of :mod:`tenk_env.obs`: ``keep_mask | 64 * end_turn``, 128 / 129 to take or
refuse a piggyback); the dice are rolled inside, from per-slot keyed streams (or an
external :data:`DiceSource`). One :meth:`BatchedGame.step` applies an action in every
waiting game (or a subset) and rolls each game on to its next decision; finished games
restart in place (``auto_reset``). Statistics are counted per call
(:attr:`BatchedGame.last_stats`) and in total (:attr:`BatchedGame.stats`), never as an
info dict per game::

    import numpy as np
    from tenk_env.vector import BatchedGame

    e = BatchedGame("classic", n_players=2, batch_size=4096, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(1000):
        mask = e.legal_mask()               # (4096, 128) bool, all games at once
        e.step(e.random_actions(rng))       # or your policy's actions, shape (4096,)
    print(e.stats["games"], e.stats["wins"])

Adapters: :class:`~tenk_env.vector.envs.TenThousandVectorEnv` (Gymnasium ``VectorEnv``,
opponents inside as batched agents, :func:`tenk_env.registry.make_batched`),
:func:`tenk_env.vector.sb3.sb3_vec_env` (an SB3 ``VecEnv`` that sb3-contrib's MaskablePPO
takes directly), :func:`tenk_env.evaluation.match.play_deals_batched` (the deals of matches and
tournaments: :func:`tenk_env.evaluation.match.play_match` plays on it by default).

The engine runs compiled per-game kernels (numba, about ten million steps per second on one
core).
"""

from tenk_env.vector.engine import (
    BatchedGame,
    DiceSource,
    IllegalActionError,
    game_state,
)
from tenk_env.vector.layout import ACT_FRESH, ACT_TAKE, END_BIT, STAT_NAMES

__all__ = [
    "BatchedGame",
    "IllegalActionError",
    "DiceSource",
    "game_state",
    "ACT_TAKE",
    "ACT_FRESH",
    "END_BIT",
    "STAT_NAMES",
    "TenThousandVectorEnv",
    "encode_batch",
]

_LAZY = {"TenThousandVectorEnv": "tenk_env.vector.envs", "encode_batch": "tenk_env.vector.obs"}


def __getattr__(name: str):
    # the Gymnasium adapter and the observation encoder load on first use
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tenk_env.vector' has no attribute {name!r}")
