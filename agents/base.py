"""The one protocol every agent implements, and agent specs (``"hold:350"``)."""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

import numpy as np

from tenk_env.game import Game
from tenk_env.rules import Ruleset, did_you_mean
from tenk_env.tables import Keep

__all__ = ["Policy", "AgentError", "make_agent", "AGENTS", "RandomAgent"]


class AgentError(ValueError):
    """A bad agent spec, or an agent asked to play a game it cannot play."""


@runtime_checkable
class Policy(Protocol):
    """An agent plays the seat ``game.current`` when the game asks it for a decision.

    ``decide`` is called in the DECIDE phase and returns one of ``game.legal_moves()``:
    (the keep to set aside, whether to end the turn). ``piggyback`` is called in the
    PIGGYBACK phase and returns whether to take over the dice the last player left.
    Agents draw any randomness from the generator they are given, never their own, so a
    seeded game is reproducible. ``check`` raises :class:`AgentError` when the agent cannot
    play the given ruleset and player count.
    """

    name: str

    def check(self, rules: Ruleset, n_players: int) -> None: ...

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]: ...

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool: ...


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


#: spec name -> "module:factory"; the factory takes the text after the colon (or None).
AGENTS: dict[str, str] = {
    "random": "agents.base:_random",
    "maxscore": "agents.optimal:make_maxscore",
    "optimal": "agents.optimal:make_optimal",
    "greedy": "agents.heuristic:_greedy",
    "hold": "agents.heuristic:_hold",
    "dicenow": "agents.heuristic:_dicenow",
    "breakeven": "agents.heuristic:_breakeven",
    "human": "agents.human:_human",
    "ppo": "agents.ppo:_ppo",
    "br": "agents.exact:make_br",
}


def _random(arg: str | None) -> RandomAgent:
    if arg:
        raise AgentError(f"agent 'random' takes no parameter (got 'random:{arg}')")
    return RandomAgent()


def make_agent(spec: "str | Policy") -> Policy:
    """An agent from a spec string such as ``random``, ``hold:350`` or ``ppo:runs/x/best.zip``."""
    if not isinstance(spec, str):
        if isinstance(spec, Policy):
            return spec
        raise AgentError(f"agent spec {spec!r}: give a string such as 'random' or 'hold:350'")
    name, _, arg = spec.partition(":")
    if name not in AGENTS:
        raise AgentError(f"unknown agent {name!r}{did_you_mean(name, AGENTS)}; agents: {', '.join(AGENTS)}")
    module, _, factory = AGENTS[name].partition(":")
    return getattr(importlib.import_module(module), factory)(arg or None)
