"""How often play reaches a set of positions: sampled games, counted at the start of every
regular turn (final-round turns are not counted).

A position is the banked scores at a turn's start read from the mover: its own first, then the
players after it in turn order (the order the N-player solvers read them in), so the census of
:func:`tenk_env.solve.eq_analysis.kingmaker_census` can be looked up directly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tenk_env.evaluation.match import wilson
from tenk_env.evaluation.play import play_game
from tenk_env.game import Game, Phase
from tenk_env.policies.base import Policy, make_agent
from tenk_env.rules import Ruleset, load_ruleset

__all__ = ["Reach", "sample_reach", "turn_start"]


def turn_start(game: Game) -> tuple[int, ...]:
    """The banked scores read from the mover (its own first, then the players after it)."""
    N, cur = game.n_players, game.current
    return tuple(int(game.scores[(cur + k) % N]) for k in range(N))


@dataclass
class Reach:
    """``games``: games played; ``turns``: regular turns played; ``per_game[i]``: the positions
    of the set at which game i's regular turns started, in order (with repeats)."""

    games: int
    turns: int
    per_game: list[list[tuple[int, ...]]]

    @property
    def reached(self) -> int:
        """Games in which some regular turn started at one of the positions."""
        return sum(bool(g) for g in self.per_game)

    @property
    def visits(self) -> Counter:
        """Turns that started at each position."""
        return Counter(k for g in self.per_game for k in g)

    @property
    def hits(self) -> int:
        """Regular turns that started at one of the positions."""
        return sum(len(g) for g in self.per_game)

    @property
    def share(self) -> float:
        return self.reached / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        """95% Wilson interval of :attr:`share`."""
        return wilson(self.reached, self.games)

    def within(self, positions: Container[tuple[int, ...]]) -> Reach:
        """The same games counted for the part of this set that is in ``positions``."""
        return Reach(self.games, self.turns, [[k for k in g if k in positions] for g in self.per_game])


def sample_reach(
    rules: Ruleset | str,
    agents: Sequence[str | Policy],
    sets: Mapping[str, Container[tuple[int, ...]]],
    games: int,
    seed: int = 0,
) -> dict[str, Reach]:
    """Play ``games`` games of ``agents`` (one per seat, in seat order; game i's dice from a
    generator seeded ``[seed, i]``) and count, for each named set of positions (banked scores
    read from the mover, in points), the regular turns that start at one of them: the same
    games for every set (:meth:`Reach.within` counts a part of a set without playing again)."""
    rules = load_ruleset(rules)
    players = [make_agent(a) for a in agents]
    if games < 1:
        raise ValueError(f"games must be at least 1 (got {games})")
    per_game: dict[str, list[list[tuple[int, ...]]]] = {name: [] for name in sets}
    turns = 0
    for i in range(games):
        starts: dict[int, tuple[int, ...]] = {}

        def look(game: Game, starts=starts) -> None:
            if game.turn not in starts and not game.final_round and game.phase not in (Phase.OVER, Phase.ORDER):
                starts[game.turn] = turn_start(game)

        play_game(rules, players, np.random.default_rng([seed, i]), record=False, on_step=look)
        turns += len(starts)
        for name, positions in sets.items():
            per_game[name].append([k for k in starts.values() if k in positions])
    return {name: Reach(games, turns, per_game[name]) for name in sets}
