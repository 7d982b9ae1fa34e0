"""Agents by name: the registry the environments read and the agent packages fill.

The environments take opponents as *specs*, ``"dicenow"``, ``"hold:350"``,
``"ppo:runs/x/best.zip"`` (the name before the colon picks a factory; the text after it, or
None, goes to the factory), or as :class:`Policy` objects. ``tenk_env`` does not know any
agent: agents are plugins, declared as entry points by the distribution that ships them
(this project's in ``pyproject.toml``)::

    [project.entry-points."tenk.agents"]      # name = factory(arg: str | None) -> Policy
    hold = "tenk_env.policies.heuristic:make_hold"

    [project.entry-points."tenk.batched"]     # any name = batcher(policy) -> BatchedPolicy | None
    agents = "tenk_env.policies.batched:batched_form"

Listing the agents reads only the installed packages' metadata; an agent's module is
imported when an agent of that name is first made, a batcher when a batched form is first
asked for. :data:`AGENTS` is the live table (name -> ``"module:attr"`` or a callable):
assigning to it, or :func:`register`, adds an agent at run time (tests, notebooks).

:func:`make_policy` makes an agent from a spec; :func:`make_batched` gives the batched form
(:class:`BatchedPolicy`: one call decides for many games of a
:class:`~tenk_env.vector.BatchedGame`) that a batcher knows, or else
:class:`ScalarPolicyAdapter`, which asks the scalar agent game by game.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, MutableMapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from tenk_env.game import Game, Phase
from tenk_env.obs import END_TURN, PIGGYBACK_FRESH, PIGGYBACK_TAKE, action_table
from tenk_env.rules import Ruleset, did_you_mean
from tenk_env.tables import Keep

__all__ = [
    "AGENT_GROUP",
    "BATCHED_GROUP",
    "AGENTS",
    "AgentError",
    "Policy",
    "BatchedPolicy",
    "ScalarPolicyAdapter",
    "register",
    "register_batcher",
    "make_policy",
    "make_batched",
    "close_agents",
    "env_seconds",
    "legal_actions",
]

#: entry-point group of agent factories (name = "module:factory")
AGENT_GROUP = "tenk.agents"
#: entry-point group of batchers ("module:function": policy -> BatchedPolicy | None)
BATCHED_GROUP = "tenk.batched"


class AgentError(ValueError):
    """A bad agent spec, or an agent asked to play a game it cannot play."""


def legal_actions(game: Game) -> list[dict[str, Any]]:
    """The legal actions of the decision due, ascending (:func:`tenk_env.obs.action_table`), for
    agents that choose by action (``cmd:``, ``llm:``); :class:`AgentError` when none is due."""
    if game.phase not in (Phase.DECIDE, Phase.PIGGYBACK):
        raise AgentError(f"no decision is due: the game is in phase {game.phase.name}")
    return action_table(game)


def env_seconds(var: str, default: float, what: str) -> float:
    """Seconds from the environment variable ``var`` (``default`` where it is unset or blank);
    :class:`AgentError` naming it unless it is a number > 0. ``what``: what the seconds bound,
    for the message (``"an external (cmd:) agent may take to answer one decision"``)."""
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return default
    try:
        t = float(raw)
    except ValueError:
        t = math.nan
    if not (math.isfinite(t) and t > 0):
        raise AgentError(f"{var}={raw!r}: give the seconds {what}, a number > 0 (default {default:g})")
    return t


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


@runtime_checkable
class BatchedPolicy(Protocol):
    """The batched form of :class:`Policy`.

    ``act`` is called with the games (int64 indices, ascending) of a
    :class:`~tenk_env.vector.BatchedGame` that wait for a decision of a seat this agent
    plays; it writes one action per game into ``out[games]`` (``out`` has one entry per slot
    of the batch; actions as :mod:`tenk_env.obs` encodes them). Randomness comes from
    ``rng`` only.

    Optional attributes the single-game envs read (:class:`~tenk_env.env.TenThousandEnv` on
    the numba engine): ``uses_rng`` (True: the form draws random numbers, so the env asks
    the agent's Python form instead, which draws what the Python engine's game draws), and
    ``driver``, a class that plays this form's seats inside the compiled step
    (``driver(single_game)`` with ``seat_forms(forms)`` and ``run(action, seat)``, as
    :class:`tenk_env.policies.batched.FusedOpponents`).
    """

    name: str

    def check(self, rules: Ruleset, n_players: int) -> None: ...

    def act(self, engine: Any, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None: ...


# ---------------------------------------------------------------------- the table
class _Agents(MutableMapping):
    """name -> factory (``"module:attr"`` or a callable taking the spec's argument or None),
    read from the :data:`AGENT_GROUP` entry points on first use."""

    def __init__(self) -> None:
        self._table: dict[str, Any] | None = None

    def _t(self) -> dict[str, Any]:
        if self._table is None:
            self._table = {}
            for ep in entry_points(group=AGENT_GROUP):
                self._table.setdefault(ep.name, ep.value)
        return self._table

    def __getitem__(self, name: str) -> Any:
        return self._t()[name]

    def __setitem__(self, name: str, factory: Any) -> None:
        if not isinstance(name, str) or not name or ":" in name:
            raise ValueError(f"agent name {name!r}: give a non-empty name without ':'")
        self._t()[name] = factory

    def __delitem__(self, name: str) -> None:
        del self._t()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._t())

    def __len__(self) -> int:
        return len(self._t())

    def __repr__(self) -> str:
        return f"AGENTS({self._t()!r})"


#: the live agent table (see the module docstring)
AGENTS: MutableMapping[str, Any] = _Agents()
_BATCHERS: list[Any] = []  # "module:attr" until first used, then the callable
_batchers_read = False  # the BATCHED_GROUP entry points are in _BATCHERS


def register(name: str, factory: str | Callable[[str | None], Policy]) -> None:
    """Add (or replace) agent ``name``: ``factory`` is ``"module:attr"`` or a callable
    taking the text after the colon of a spec (None when there is none)."""
    AGENTS[name] = factory


def register_batcher(batcher: str | Callable[[Any], BatchedPolicy | None]) -> None:
    """Add a batcher (``"module:attr"`` or a callable): given a scalar policy, its batched
    form, or None for a policy it does not know. Batchers are asked in order, the entry
    points' first."""
    _BATCHERS.append(batcher)


def _load(target: Any, name: str, group: str) -> Any:
    if callable(target):
        return target
    return EntryPoint(name=name, value=str(target), group=group).load()


def _batchers() -> list[Callable[[Any], Any]]:
    global _batchers_read
    if not _batchers_read:
        _BATCHERS[:0] = [ep.value for ep in entry_points(group=BATCHED_GROUP)]
        _batchers_read = True
    for i, b in enumerate(_BATCHERS):
        if not callable(b):
            _BATCHERS[i] = _load(b, "batcher", BATCHED_GROUP)
    return list(_BATCHERS)


# ---------------------------------------------------------------------- making agents
def make_policy(spec: str | Policy) -> Policy:
    """An agent from a spec string such as ``random``, ``hold:350`` or
    ``ppo:runs/x/best.zip``; a :class:`Policy` object is returned as it is."""
    if not isinstance(spec, str):
        if isinstance(spec, Policy):
            return spec
        raise AgentError(f"agent spec {spec!r}: give a string such as 'random' or 'hold:350'")
    name, _, arg = spec.partition(":")
    if name not in AGENTS:
        if not AGENTS:
            raise AgentError(
                f"unknown agent {name!r}: no agents are registered (entry-point group "
                f"{AGENT_GROUP!r}); install the tenk package, e.g. pip install -e ."
            )
        raise AgentError(f"unknown agent {name!r}{did_you_mean(name, AGENTS)}; agents: {', '.join(AGENTS)}")
    return _load(AGENTS[name], name, AGENT_GROUP)(arg or None)


def _is_batched(agent: Any) -> bool:
    return hasattr(agent, "act") and not hasattr(agent, "decide")


def make_batched(spec: str | Policy | BatchedPolicy) -> BatchedPolicy:
    """The batched form of a spec (``"dicenow"``, ``"hold:300"``, ``"ppo:PATH"``...) or of a
    scalar :class:`Policy`: the one a registered batcher gives, else a
    :class:`ScalarPolicyAdapter`. A batched agent (``act``, no ``decide``) is returned as it is."""
    agent = make_policy(spec) if isinstance(spec, str) else spec
    if _is_batched(agent):
        return agent
    for batcher in _batchers():
        b = batcher(agent)
        if b is not None:
            return b
    if isinstance(agent, Policy):
        return ScalarPolicyAdapter(agent)
    raise AgentError(f"agent {spec!r} is neither a Policy (decide/piggyback) nor a batched agent (act)")


def close_agents(agents: Any) -> None:
    """Call ``close()`` of every agent in ``agents`` that has one (each object once): an agent
    that holds something beyond its memory (a ``cmd:`` agent's program) ends it there."""
    seen = set()
    for agent in agents:
        close = getattr(agent, "close", None)
        if callable(close) and id(agent) not in seen:
            seen.add(id(agent))
            close()


class ScalarPolicyAdapter:
    """Any :class:`Policy` over a batch, asked one game at a time through
    :meth:`BatchedGame.to_game <tenk_env.vector.BatchedGame.to_game>` (correct for every
    agent, at scalar speed). It goes by the scalar agent's name and plays what it plays."""

    #: the scalar agent may draw from the generator it is given
    uses_rng = True

    def __init__(self, scalar: Policy):
        self.scalar = scalar
        self.name = scalar.name

    def check(self, rules: Ruleset, n_players: int) -> None:
        self.scalar.check(rules, n_players)

    def act(self, engine: Any, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        for b in np.asarray(games, np.int64):
            b = int(b)
            g = engine.to_game(b)
            if g.phase is Phase.PIGGYBACK:
                out[b] = PIGGYBACK_TAKE if self.scalar.piggyback(g, rng) else PIGGYBACK_FRESH
            else:
                k, end = self.scalar.decide(g, rng)
                out[b] = k.mask | END_TURN if end else k.mask

    def close(self) -> None:
        """End what the scalar agent holds (a ``cmd:`` agent's program), if it holds anything."""
        close_agents([self.scalar])

    def __repr__(self) -> str:
        return f"<batched agent {self.name}>"
