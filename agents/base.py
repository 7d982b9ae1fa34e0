"""The one protocol every agent implements, and agent specs (``"hold:350"``).

The protocol (:class:`Policy`), :class:`AgentError` and the spec table live in
:mod:`tenk_env.registry`, which the environments read; this package fills it through the
``tenk.agents`` entry points of pyproject.toml. They are re-exported here.
"""

from __future__ import annotations

import numpy as np

from tenk_env.game import Game
from tenk_env.registry import AGENTS, AgentError, Policy, make_policy
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep

__all__ = ["Policy", "AgentError", "make_agent", "AGENTS", "RandomAgent"]


class RandomAgent:
    """Uniform over the legal moves (and a fair coin for a piggyback)."""

    name = "random"

    def check(self, rules: Ruleset, n_players: int) -> None:
        pass

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        moves = game.legal_moves()
        return moves[int(rng.integers(len(moves)))]

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        return bool(rng.integers(2))


def _random(arg: str | None) -> RandomAgent:
    if arg:
        raise AgentError(f"agent 'random' takes no parameter (got 'random:{arg}')")
    return RandomAgent()


#: an agent from a spec string such as ``random``, ``hold:350`` or ``ppo:runs/x/best.zip``
#: (:func:`tenk_env.registry.make_policy`); a Policy object is returned as it is
make_agent = make_policy
