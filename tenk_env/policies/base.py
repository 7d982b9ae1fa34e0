"""The one protocol every agent implements, and agent specs (``"hold:350"``).

The protocol (:class:`Policy`), :class:`AgentError` and the spec table live in
:mod:`tenk_env.registry`, which the environments read; this package fills it through the
``tenk.agents`` entry points of pyproject.toml. They are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.game import Game
from tenk_env.io import data_dir, file_sha256
from tenk_env.registry import AGENTS, AgentError, Policy, make_policy
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep

__all__ = ["Policy", "AgentError", "make_agent", "AGENTS", "RandomAgent", "FILE_AGENTS", "ZOO_DIR", "agent_file",
           "agent_sha256"]

#: agents whose behaviour comes from a file (``ppo:PATH``, ``afterstate:PATH``, ``zoo:NAME``):
#: their games are keyed by a hash of the file's bytes, not by the spec text, which stays the
#: same when the file is replaced
FILE_AGENTS = ("ppo", "afterstate", "zoo")
#: where the zoo's entries live (``NAME/`` in the repository's ``agents/``, installed as
#: the data package ``tenk_env.zoo``)
ZOO_DIR = data_dir("zoo")


def agent_file(spec: "str | Any") -> Path | None:
    """The file an agent's behaviour comes from (a checkpoint, a zoo entry's weights), or None."""
    if not isinstance(spec, str):
        return None
    name, _, arg = spec.partition(":")
    if name not in FILE_AGENTS or not arg:
        return None
    return ZOO_DIR / arg / "weights.npz" if name == "zoo" else Path(arg)


def agent_sha256(spec: "str | Any") -> str | None:
    """An agent's content key: the SHA-256 (16 hex digits) of its file's bytes, or None for
    agents that their spec defines alone."""
    path = agent_file(spec)
    return file_sha256(path) if path is not None else None


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


def make_random(arg: str | None) -> RandomAgent:
    if arg:
        raise AgentError(f"agent 'random' takes no parameter (got 'random:{arg}')")
    return RandomAgent()


#: an agent from a spec string such as ``random``, ``hold:350`` or ``ppo:runs/x/best.zip``
#: (:func:`tenk_env.registry.make_policy`); a Policy object is returned as it is
make_agent = make_policy
