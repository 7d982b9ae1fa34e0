"""Playing whole games: dice from a dice source, decisions from agents.

Dice and the agents' own randomness come from separate sources, so the dice of a game
can be replayed exactly under another seating (common random numbers):

* :class:`RngDice`: dice in order from one generator. Two games given identically seeded
  generators see the same stream of dice, wherever it falls.
* :class:`KeyedDice`: the duplicate format. The dice of the ``i``-th roll of a seat's ``t``-th
  turn depend only on (key, seat, t, i), so when two agents swap seats each meets, roll for
  roll, the dice the other met in that seat: every turn opens with the same roll, and the
  rolls stay aligned until the players' choices make them roll different numbers of dice.
  They are the batched engine's dice (:mod:`tenk_env.vector.layout`), so the scalar and
  batched engines play the same games from the same key.
* :class:`ScriptedDice`: a fixed list of rolls (tests, replays).

:func:`play_terminal` is ``tenk play``: one game with a human at the terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game, Phase
from tenk_env.policies.base import AgentError, Policy, make_agent
from tenk_env.policies.human import HumanAgent, InputFn, PrintFn, QuitGame
from tenk_env.records import format_event, save_jsonl
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.vector.layout import ORDER_Q, ORDER_T, keyed_roll

__all__ = [
    "play_game",
    "advance",
    "DiceSource",
    "RngDice",
    "KeyedDice",
    "ScriptedDice",
    "DiceRanOut",
    "GameTooLongError",
    "play_terminal",
]


class GameTooLongError(ValueError):
    """A game did not end within ``max_turns`` turns. Rulesets whose turns reach the entry
    threshold or minimum bank only with negligible chance are refused at validation, so the
    cause is an agent: one that never banks, or never lands an exact finish."""

    @classmethod
    def of(cls, max_turns: int, scores: Sequence[int], names: Sequence[str]) -> GameTooLongError:
        idle = [f"{n} (seat {i})" for i, (n, s) in enumerate(zip(names, scores)) if s == 0]
        who = f"; never banked: {', '.join(idle)}" if idle else ""
        return cls(
            f"game not over after {max_turns:,} turns (scores {list(map(int, scores))}; agents "
            f"{list(names)}{who}): the ruleset lets turns bank often enough to end a game, so check the "
            "agents (one that never banks, e.g. hold:N above what a turn can reach, cannot end it)"
        )


@runtime_checkable
class DiceSource(Protocol):
    """Where a game's dice come from: ``draw(game)`` returns ``game.dice_to_roll`` faces."""

    def draw(self, game: Game) -> Sequence[int]: ...


class RngDice:
    """Dice in order from one generator, drawn in blocks (one generator call per 4,096 dice)."""

    def __init__(self, rng: np.random.Generator | int, block: int = 4096):
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self._block = block
        self._buf: list[int] = []
        self._i = 0

    def draw(self, game: Game) -> list[int]:
        n = game.dice_to_roll
        i = self._i
        if i + n > len(self._buf):
            self._buf = self._buf[i:] + self.rng.integers(1, 7, size=self._block, dtype=np.int8).tolist()
            i = 0
        self._i = i + n
        return self._buf[i : i + n]

    def agent_rng(self) -> np.random.Generator:
        """A generator for the agents, spawned from the dice generator without drawing from it
        (so it leaves the dice stream untouched)."""
        try:
            return self.rng.spawn(1)[0]
        except (TypeError, ValueError, AttributeError):  # a generator made without a seed sequence
            return np.random.default_rng(0)


class KeyedDice:
    """The duplicate format's dice, drawn exactly as the batched engine draws them: the
    faces of roll ``i`` of seat ``q``'s ``t``-th turn are a function of (key, q, t, i) only
    (:func:`tenk_env.vector.layout.keyed_roll`), so when two agents swap seats each meets,
    roll for roll, the dice the other met in that seat, and a scalar :class:`Game` fed
    ``KeyedDice(k)`` sees the same dice as game ``game`` of a
    :class:`~tenk_env.vector.BatchedGame` slot with dice key ``k`` (the slot's first game
    is 1). Build a fresh one for every game."""

    def __init__(self, key: int, game: int = 1):
        self.key = int(key) & ((1 << 64) - 1)
        self.game = int(game)
        self._turn_of: dict[int, int] = {}
        self._last_turn: int | None = None
        self._order_rolls = 0

    def draw(self, game: Game) -> list[int]:
        n = game.dice_to_roll
        if game.phase == Phase.ORDER:
            self._order_rolls += 1
            return keyed_roll(self.key, self.game, ORDER_T, ORDER_Q, self._order_rolls - 1, n)
        p = game.current
        if game.turn != self._last_turn:
            self._last_turn = game.turn
            self._turn_of[p] = self._turn_of.get(p, -1) + 1
        return keyed_roll(self.key, self.game, self._turn_of[p], p, game.rolls, n)

    def agent_rng(self) -> np.random.Generator:
        """The agents' generator: a function of the key, drawing nothing from the dice."""
        return np.random.default_rng([self.key, self.game, 1])


class DiceRanOut(ValueError):
    """A :class:`ScriptedDice` source was asked for more rolls than it was given."""


class ScriptedDice:
    """The given rolls, in order. Raises :class:`DiceRanOut` when the game asks for more."""

    def __init__(self, rolls: Sequence[Sequence[int]]):
        self.rolls = [list(r) for r in rolls]
        self._i = 0

    def draw(self, game: Game) -> list[int]:
        if self._i >= len(self.rolls):
            raise DiceRanOut(
                f"the scripted dice ran out after {len(self.rolls)} rolls; the game wants "
                f"{game.dice_to_roll} more dice ({game!r})"
            )
        self._i += 1
        return self.rolls[self._i - 1]

    def agent_rng(self) -> np.random.Generator:
        return np.random.default_rng(0)


def dice_source(dice: DiceSource | np.random.Generator | int | Sequence[Sequence[int]]) -> DiceSource:
    """A :class:`DiceSource` from a generator or int seed (:class:`RngDice`), a list of rolls
    (:class:`ScriptedDice`) or a source."""
    if isinstance(dice, (np.random.Generator, int, np.integer)) and not isinstance(dice, bool):
        return RngDice(dice)
    if isinstance(dice, DiceSource):
        return dice
    if isinstance(dice, (list, tuple)):
        return ScriptedDice(dice)
    raise TypeError(f"dice {dice!r}: give a numpy Generator, an int seed, a list of rolls or a DiceSource")


def play_game(
    rules: Ruleset | str,
    agents: Sequence[str | Policy],
    dice: DiceSource | np.random.Generator | int | Sequence[Sequence[int]],
    agent_rng: np.random.Generator | None = None,
    *,
    n_players: int | None = None,
    record: bool = True,
    on_step: Callable[[Game], None] | None = None,
    max_turns: int = 100_000,
) -> Game:
    """Play one whole game and return it (``game.winners``, ``game.scores``, ``game.events``).

    ``agents``: one spec or Policy per seat, in seat order (or a single one for every seat
    when ``n_players`` is given). ``dice``: where the dice come from (see
    :func:`dice_source`). ``agent_rng``: the generator agents draw from (default: one
    derived from the dice source without touching its dice, so a game is a function of its
    dice seed). ``on_step(game)`` runs after every input (roll, decision, piggyback choice).
    """
    rules = load_ruleset(rules)
    if isinstance(agents, str) or isinstance(agents, Policy):
        raise AgentError(f"agents {agents!r}: give one agent per seat, e.g. ['dicenow', 'hold:300']")
    players = [make_agent(a) for a in agents]
    n = n_players if n_players is not None else len(players)
    if len(players) == 1 and n > 1:
        players = players * n
    if len(players) != n:
        raise AgentError(f"{len(players)} agents for {n} players: give one agent per seat")
    for a in players:
        a.check(rules, n)
    source = dice_source(dice)
    if agent_rng is None:
        make_rng = getattr(source, "agent_rng", None)
        agent_rng = make_rng() if make_rng else np.random.default_rng(0)
    game = Game(rules, n, record=record)
    return advance(game, players, source.draw, agent_rng, on_step=on_step, max_turns=max_turns)


def advance(
    game: Game,
    players: Sequence[Policy | None],
    draw: Callable[[Game], Sequence[int]],
    agent_rng: np.random.Generator,
    *,
    on_step: Callable[[Game], None] | None = None,
    max_turns: int = 100_000,
) -> Game:
    """Feed ``game`` dice from ``draw`` and the seated agents' decisions until it is over, or
    until a decision falls to a seat whose player is None (someone outside the loop: the
    browser app's human), and return it."""
    DECIDE, ROLL, ORDER, PIGGYBACK = Phase.DECIDE, Phase.ROLL, Phase.ORDER, Phase.PIGGYBACK
    while True:
        ph = game.phase
        if ph is DECIDE:
            player = players[game.current]
            if player is None:
                return game
            keep, end = player.decide(game, agent_rng)
            at = len(game.events)
            game.act(keep, end)
            _said(game, at, player)
        elif ph is ROLL:
            game.roll(draw(game))
            if game.turn > max_turns:
                raise GameTooLongError.of(max_turns, game.scores, [getattr(a, "name", "you") for a in players])
        elif ph is PIGGYBACK:
            player = players[game.current]
            if player is None:
                return game
            take = bool(player.piggyback(game, agent_rng))
            at = len(game.events)
            game.piggyback(take)
            _said(game, at, player)
        elif ph is ORDER:
            game.roll(draw(game))
        else:
            return game
        if on_step is not None:
            on_step(game)


def _said(game: Game, at: int, player: Policy) -> None:
    """Keep what an agent says of its decision (``explain()``: an ``llm:`` agent's answers) in
    the decision's event, ``game.events[at]``, as ``said`` (:mod:`tenk_env.records`)."""
    explain = getattr(player, "explain", None)
    if explain is not None and game.record and at < len(game.events):
        said = explain()
        if said is not None:
            game.events[at]["said"] = said


# --------------------------------------------------------------------------- at the terminal
def play_terminal(
    rules: Ruleset | str = "classic",
    opponents: Sequence[str] = ("dicenow",),
    *,
    n_players: int | None = None,
    seat: int = 1,
    seed: int | None = None,
    save: str | Path | None = None,
    input_fn: InputFn | None = None,
    print_fn: PrintFn | None = None,
) -> int:
    """Play one game at the terminal; returns the exit code (0 also when the human quits).

    ``opponents`` fill the other seats in order; with ``n_players`` larger than one plus their
    number, the last opponent is repeated. ``seat`` is 1-based. ``human`` as an opponent
    gives a hot-seat game on the same terminal.
    """
    input_fn = input_fn or (lambda prompt: input(prompt))
    print_fn = print_fn or (lambda text: print(text))
    rules = load_ruleset(rules)
    opponents = list(opponents) or ["dicenow"]
    n = n_players if n_players is not None else 1 + len(opponents)
    if not (MIN_PLAYERS <= n <= MAX_PLAYERS):
        raise ValueError(f"--players {n}: the game takes {MIN_PLAYERS} to {MAX_PLAYERS} players (you included)")
    if len(opponents) > n - 1:
        raise ValueError(
            f"{len(opponents)} opponents do not fit a {n}-player game; give --players {len(opponents) + 1}"
        )
    opponents += [opponents[-1]] * (n - 1 - len(opponents))
    if not (1 <= seat <= n):
        raise ValueError(f"--seat {seat}: choose a seat from 1 to {n}")
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**32)

    agents: list[Policy] = []
    names: list[str] = []
    humans: list[HumanAgent] = []
    others = iter(opponents)
    for p in range(n):
        spec = "human" if p == seat - 1 else next(others)
        if spec == "human":
            a = HumanAgent(input_fn, print_fn)
            humans.append(a)
            names.append(f"P{p + 1} (you)" if p == seat - 1 else f"P{p + 1} (human)")
        else:
            a = make_agent(spec)
            names.append(f"P{p + 1} {a.name}")
        agents.append(a)
    for h in humans:
        h.names = names
    print_fn(
        f"Ten Thousand, rules {rules.name}, seed {seed} (replay the same dice with --seed {seed}). "
        "Type ? at a prompt for help."
    )
    shown = 0
    seen: list[Game] = []

    def show(game: Game) -> None:
        nonlocal shown
        if not seen:
            seen.append(game)
        for e in game.events[shown:]:
            line = format_event(e, names)
            if line is not None:
                print_fn(line)
        shown = len(game.events)

    try:
        game = play_game(rules, agents, RngDice(seed), n_players=n, on_step=show)
    except (QuitGame, KeyboardInterrupt):
        print_fn("\ngame abandoned.")
        return 0
    finally:
        if save and seen:
            save_jsonl(seen[0].events, save)
            print_fn(f"game record written to {save}")
    me = seat - 1
    if me in game.winners:
        print_fn("You win!" if len(game.winners) == 1 else "You share the win.")
    else:
        print_fn(f"You lose: {' and '.join(names[w] for w in game.winners)} won.")
    return 0
