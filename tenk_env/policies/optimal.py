"""Solver-backed agents: ``maxscore`` (max expected points per turn) and ``optimal``
(max win probability, 2 players).

Both decide from the exact solutions in :mod:`tenk_env.solve`, loaded from the on-disk
cache (solved on first use if missing: seconds for ``maxscore``, minutes for
``optimal`` under a 10,000 target). They choose with :func:`tenk_env.solve.policy.pick`,
the solver kernels' own tie-break, so :func:`tenk_env.solve.evaluate.evaluate` gives the
exact win rate of exactly the moves they play. ``optimal`` reads its within-turn values
from :class:`tenk_env.solve.regret.TurnTables` (the turn DP's values, one table per
turn-start state, cached), which the regret analysis shares.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from tenk_env.game import Game
from tenk_env.policies.base import AgentError
from tenk_env.rules import Ruleset
from tenk_env.solve.game import check_game_rules, is_cached, solve_game
from tenk_env.solve.policy import choose, move_values
from tenk_env.solve.regret import TurnTables, state_key
from tenk_env.solve.spec import SolverError
from tenk_env.solve.turn import solve_turn
from tenk_env.tables import Keep

__all__ = ["MaxScoreAgent", "OptimalAgent", "game_solution", "solution_source"]

_TURN: dict[str, object] = {}
_GAME: dict[str, object] = {}


def turn_solution(rules: Ruleset):
    if rules.hash not in _TURN:
        _TURN[rules.hash] = solve_turn(rules)
    return _TURN[rules.hash]


def game_solution(rules: Ruleset):
    """The solved 2-player game of ``rules``, held for this process (solved on first use
    unless cached on disk: see :func:`solution_source`)."""
    if rules.hash not in _GAME:
        _GAME[rules.hash] = solve_game(rules)
    return _GAME[rules.hash]


def solution_source(rules: Ruleset) -> str:
    """Where ``optimal`` would get the game solution of ``rules``: ``"memory"`` (this process
    holds it), ``"cache"`` (read from disk in a moment) or ``"solve"`` (seconds at a small
    target, minutes on classic), so that commands can say so before a long, silent step."""
    if rules.hash in _GAME:
        return "memory"
    return "cache" if is_cached(rules) else "solve"


class MaxScoreAgent:
    """Maximises the expected points banked this turn (the long-run average points per turn
    under a bust penalty). Plays any ruleset and player count; it ignores the scores,
    the final round included. A piggyback is taken when its expected points beat a fresh turn."""

    name = "maxscore"

    def check(self, rules: Ruleset, n_players: int) -> None:
        try:
            turn_solution(rules)
        except SolverError as e:
            raise AgentError(f"agent 'maxscore' cannot play: {e}") from None

    def _tables(self, game: Game):
        t = turn_solution(game.rules)
        k = min(game.busts_in_row[game.current], t.values.shape[0] - 1)
        return t, t.values[k, int(game.on_board[game.current])]

    def values(self, game: Game) -> list[tuple[Keep, float | None, float | None]]:
        """The expected points banked this turn after every legal move at ``game``'s current
        decision, as ``(keep, roll on, end the turn)`` rows (None: illegal, or a roll past the
        table's cap, which holds every total where rolling on can still pay)."""
        t, V = self._tables(game)
        unit = t.unit
        rows = move_values(game, unit, V, V.shape[-1] - 1, lambda T: float(T * unit), 0.0, game.max_rolls, False)
        return [(k, None if rv == -np.inf else rv, ev) for k, rv, ev in rows]

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        return choose(self.values(game))

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        t, V = self._tables(game)
        n, total = game.piggy
        T = total // t.unit
        if T > V.shape[-1] - 1:
            return True
        return bool(V[0, n, T] > V[0, game.rules.num_dice, 0])


class OptimalAgent:
    """Maximises the probability of winning a 2-player game (exact game solution)."""

    name = "optimal"

    #: turn-start states whose value tables are kept (least recently used dropped). A
    #: table costs ~0.2-1 ms to compute and ~10 KB under classic; 16,384 (~160 MB at most)
    #: holds every state 2,000 games visit, and computes 35% fewer tables than 2,048 did.
    CACHE_SIZE = 16_384

    def __init__(self, cache_size: int = CACHE_SIZE):
        self._cache: OrderedDict = OrderedDict()
        self._cache_size = cache_size

    def check(self, rules: Ruleset, n_players: int) -> None:
        try:
            check_game_rules(rules, n_players)
        except SolverError as e:
            raise AgentError(f"agent 'optimal' cannot play: {e}") from None

    def prepare(self, rules: Ruleset, n_players: int) -> None:
        """Solve (or read from the disk cache) the game solution it plays from, which its first
        move would otherwise do: a server runs this aside, in its solver's queue."""
        game_solution(rules)

    def tables(self, game: Game):
        """The :class:`~tenk_env.solve.regret.TurnTables` of ``game``'s current turn, from this
        agent's cache: the regret analysis (:mod:`tenk_env.evaluation.analysis`) reads the same tables, so
        a state both need is computed once."""
        sol = game_solution(game.rules)
        key = state_key(sol, game)
        cache = self._cache
        got = cache.get(key)
        if got is None:
            got = cache[key] = TurnTables(sol, key)
            if len(cache) > self._cache_size:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        return got

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        if game.n_players != 2:
            raise AgentError(f"agent 'optimal' plays 2-player games (this one has {game.n_players})")
        return self.tables(game).pick(game)

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        raise AgentError("agent 'optimal' does not play piggyback rulesets (its solver does not model them)")


def make_maxscore(arg: str | None) -> MaxScoreAgent:
    if arg:
        raise AgentError(f"agent 'maxscore' takes no parameter (got 'maxscore:{arg}')")
    return MaxScoreAgent()


def make_optimal(arg: str | None) -> OptimalAgent:
    if arg:
        raise AgentError(f"agent 'optimal' takes no parameter (got 'optimal:{arg}'); the ruleset comes from the game")
    return OptimalAgent()
