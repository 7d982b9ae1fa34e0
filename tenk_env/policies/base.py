"""The one protocol every agent implements, and agent specs (``"hold:350"``).

The protocol (:class:`Policy`), :class:`AgentError` and the spec table live in
:mod:`tenk_env.registry`, which the environments read; this package fills it through the
``tenk.agents`` entry points of pyproject.toml. They are re-exported here.

Closing. An agent that holds something beyond its memory (a ``cmd:`` agent's program) also
has a ``close()`` method, which ends it; the agent may still play afterwards, starting it
again. The protocol does not require one (most agents hold nothing): whoever built the
agents ends them with :func:`close_agents`.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.game import Game
from tenk_env.io import data_dir, file_sha256
from tenk_env.registry import AGENTS, AgentError, Policy, close_agents, make_policy
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep

__all__ = [
    "Policy",
    "AgentError",
    "make_agent",
    "AGENTS",
    "RandomAgent",
    "FILE_AGENTS",
    "ZOO_DIR",
    "agent_file",
    "agent_sha256",
    "AgentSpec",
    "command_file",
    "close_agents",
]

#: agents whose behaviour comes from a file (``ppo:PATH``, ``afterstate:PATH``, ``onnx:PATH``, ``zoo:NAME``):
#: their games are keyed by a hash of the file's bytes, not by the spec text, which stays the
#: same when the file is replaced
FILE_AGENTS = ("ppo", "afterstate", "onnx", "zoo")
#: where the zoo's entries live (``NAME/`` in the repository's ``agents/``, installed as
#: the data package ``tenk_env.zoo``)
ZOO_DIR = data_dir("zoo")


def _spec_file(name: str, arg: str) -> Path | None:
    if name == "cmd" and arg:
        return command_file(arg)
    if name == "llm" and arg:
        return llm_template_file(arg)
    if name not in FILE_AGENTS or not arg:
        return None
    return ZOO_DIR / arg / "weights.npz" if name == "zoo" else Path(arg)


def command_file(command: str) -> Path | None:
    """The program file a ``cmd:`` command runs, whose bytes key its games: the first argument
    that is a file (``python agent.py``), else the program itself when given as a path
    (``./agent``); None when the command names no file (``python -m package.agent``)."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return None  # the factory names the quoting fault
    for t in tokens[1:]:
        if not t.startswith("-") and Path(t).is_file():
            return Path(t)
    if tokens and os.sep in tokens[0] and Path(tokens[0]).is_file():
        return Path(tokens[0])
    return None


def llm_template_file(arg: str) -> Path | None:
    """The prompt template file an ``llm:`` spec names (``template=PATH``), whose bytes key
    its games, or None (the built-in template: the spec's text keys them)."""
    for part in arg.split(",")[1:]:
        key, _, value = part.partition("=")
        if key.strip() == "template" and value.strip():
            return Path(value.strip())
    return None


def agent_file(spec: str | AgentSpec | Any) -> Path | None:
    """The file an agent's behaviour comes from (a checkpoint, a zoo entry's weights), or None."""
    if isinstance(spec, AgentSpec):
        return spec.file
    if not isinstance(spec, str):
        return None
    name, _, arg = spec.partition(":")
    return _spec_file(name, arg)


def agent_sha256(spec: str | AgentSpec | Any) -> str | None:
    """An agent's content key: the SHA-256 (16 hex digits) of its file's bytes as they are
    now, or None for agents that their spec defines alone. (:attr:`AgentSpec.sha256` is the
    key of the file as it was when the spec was parsed.)"""
    path = agent_file(spec)
    return file_sha256(path) if path is not None else None


@dataclass(frozen=True)
class AgentSpec:
    """An agent spec (``"hold:300"``, ``"ppo:runs/x/best.zip"``, ``"zoo:NAME"``) parsed once:
    its name is a registered agent's, and the file it plays from is hashed. Plain fields
    only, so it pickles to worker processes."""

    text: str  #: the spec as given
    name: str  #: the agent's name, before the colon
    arg: str | None  #: the text after the colon, or None
    file: Path | None  #: the file its behaviour comes from (:func:`agent_file`), or None
    sha256: str | None  #: that file's content key when parsed (:func:`agent_sha256`), or None
    label: str  #: what results and tables call it

    @classmethod
    def parse(cls, spec: str | AgentSpec) -> AgentSpec:
        """The parsed spec (an AgentSpec is returned as it is). :class:`AgentError` for an
        unknown agent or a file that is not there, with the message making it would give."""
        if isinstance(spec, AgentSpec):
            return spec
        if not isinstance(spec, str):
            raise AgentError(f"agent spec {spec!r}: give a string such as 'random' or 'hold:350'")
        name, _, arg = spec.partition(":")
        file = _spec_file(name, arg)
        if name not in AGENTS or (file is not None and not file.is_file()):
            # fails before it reads anything, with the registry's did-you-mean or the
            # factory's own word on the missing file (a directory: which file in it)
            make_policy(spec)
        return cls(spec, name, arg or None, file, file_sha256(file) if file is not None else None, spec)

    def make(self) -> Policy:
        """A new agent of this spec (:func:`make_agent`)."""
        return make_agent(self.text)

    def __str__(self) -> str:
        return self.text


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
