"""The turn machine: one game of Ten Thousand for 2 to 8 players under any ruleset.

The game owns no random generator: dice come in as arguments to :meth:`Game.roll`
(chance is an input, as in OpenSpiel). A game alternates between phases:

* ``ORDER`` (``turn_order: highest_die`` only): :meth:`Game.roll` one die per contender.
* ``PIGGYBACK`` (``piggyback`` only, when the last player banked): :meth:`Game.piggyback`
  with ``take=True`` to roll the dice they left and take over their total, or ``False``.
* ``ROLL``: :meth:`Game.roll` exactly :attr:`Game.dice_to_roll` dice.
* ``DECIDE``: :meth:`Game.act` with a keep (dice set aside from the roll) and whether to
  end the turn (bank) or roll the dice that remain.
* ``OVER``: :attr:`Game.winners` holds the winning seat(s).

Every input and outcome is appended to :attr:`Game.events` as a plain dict (see
:mod:`tenk_env.records`), enough to replay the game exactly. An illegal input raises
:class:`IllegalMoveError`, which says why, and leaves the game untouched.

Choices where the rule texts are silent (each tested):

* A bank that reaches the target under ``end: final_round`` gives every *other* player
  exactly one more turn; later banks past the target do not extend the round.
* When the roll limit (``max_rolls``, or the single roll of ``end: one_more_roll``) is
  reached and the turn total cannot be banked (entry threshold, minimum bank), ending the
  turn forfeits the total (event ``stop``).
* A roll of four or more 2s under ``four_twos_lose_all`` wipes the roller's banked score
  and ends the turn; an instant-win roll takes precedence over it.
* The zilch pay-out is added to the turn total and the player must roll all dice again.
* Penalties (three busts in a row) never take a banked score below zero. Any turn that
  does not end in a bust resets the count.
* Exact finish: the moment a keep (or a zilch pay-out) takes the player past the target,
  the turn ends and its total is forfeited (``to_lowest``: given to the lowest-scoring other
  player, the first in turn order on a tie, unless that would take them to or past the
  target, when it is lost). A bank landing exactly on the target is always allowed, even
  below the entry threshold or the minimum bank, so that every game can end.
* A ruleset whose entry threshold or minimum bank a turn cannot reach, or reaches only with
  negligible chance, is refused when the ruleset is built (:class:`~tenk_env.rules.Ruleset`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum
from numbers import Integral
from typing import Any

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.tables import Keep, RollInfo, Tables, counts_of, get_tables

__all__ = ["Game", "Phase", "IllegalMoveError", "MIN_PLAYERS", "MAX_PLAYERS"]

MIN_PLAYERS, MAX_PLAYERS = 2, 8


class Phase(IntEnum):
    ORDER = 0
    PIGGYBACK = 1
    ROLL = 2
    DECIDE = 3
    OVER = 4


class IllegalMoveError(ValueError):
    """An input the rules do not allow in the current state; the game is unchanged."""


_NUMBER = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def _is_face(d: Any) -> bool:
    # int() would take True, 2.5 and "3", and a negative face would index the counts from the
    # end (-1 keeping a 5): only whole numbers 1 to 6 are faces.
    return (d.__class__ is int or (isinstance(d, Integral) and not isinstance(d, bool))) and 1 <= int(d) <= 6


def _faces(keep: Any, info: RollInfo) -> list[int]:
    """The kept faces of ``keep`` as plain ints, or :class:`IllegalMoveError` naming the entry
    that is not one."""
    how = f"give the kept dice as faces 1 to 6 from the roll {list(info.dice)}, e.g. {list(info.keeps[0].dice)}"
    if isinstance(keep, (str, bytes)):
        raise IllegalMoveError(f"keep {keep!r}: a string is not a list of dice; {how}")
    try:
        given = list(keep)
    except TypeError:
        raise IllegalMoveError(f"keep {keep!r} is not a list of dice; {how}") from None
    for d in given:
        if not _is_face(d):
            shown = "[" + ", ".join(str(int(x)) if _is_face(x) else repr(x) for x in given) + "]"
            what = (
                "is not a face"
                if isinstance(d, Integral) and not isinstance(d, bool)
                else f"is a {type(d).__name__}, not a face"
            )
            raise IllegalMoveError(f"keep {shown}: entry {d!r} {what}; {how}")
    return [int(d) for d in given]


def _end_flag(end: Any) -> bool:
    # bool("no") is True: whether to end the turn must be a real yes or no.
    if isinstance(end, np.bool_) or (isinstance(end, Integral) and end in (0, 1)):
        return bool(end)
    raise IllegalMoveError(f"end_turn {end!r}: give True to end the turn (bank) or False to roll on")


class Game:
    """One game. ``rules`` may be a :class:`Ruleset`, a preset name or a YAML path."""

    def __init__(self, rules: Ruleset | str = "classic", n_players: int = 2, *, record: bool = True):
        self.rules = rules = load_ruleset(rules)
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, int)
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise ValueError(f"n_players = {n_players!r}: the engine plays {MIN_PLAYERS} to {MAX_PLAYERS} players")
        self.tables: Tables = get_tables(rules)
        self.n_players = n_players
        self.record = record
        self.events: list[dict[str, Any]] = []
        self.scores = [0] * n_players
        self.scores[1] += rules.komi
        self.on_board = [False] * n_players
        self.busts_in_row = [0] * n_players
        #: seats in the order they first reached the target (tie-break)
        self.reached = [p for p in range(n_players) if self.scores[p] >= rules.target]
        self.current = 0
        self.turn = 0
        self.turn_total = 0
        self.dice_left = rules.num_dice
        self.rolls = 0
        self.dice: tuple[int, ...] = ()
        self.info: RollInfo | None = None
        self.final_round = False
        self.final_turns_left = 0
        self.trigger: int | None = None
        self.winners: list[int] = []
        #: (dice, total) the last banker left for a piggyback, else None
        self.piggy: tuple[int, int] | None = None
        self._contenders = list(range(n_players))
        self._triggering_turn = False
        if record:
            self._emit("start", rules=rules.to_dict(), hash=rules.hash, players=n_players)
        if rules.turn_order == "highest_die":
            self.phase = Phase.ORDER
        else:
            self._start_turn()

    # ------------------------------------------------------------------ state queries
    @property
    def over(self) -> bool:
        return self.phase == Phase.OVER

    @property
    def dice_to_roll(self) -> int:
        """How many dice :meth:`roll` expects now (0 when no roll is due)."""
        if self.phase == Phase.ORDER:
            return len(self._contenders)
        return self.dice_left if self.phase == Phase.ROLL else 0

    @property
    def max_rolls(self) -> int:
        """Rolls allowed in the current turn (0: unlimited)."""
        if self.final_round and self.rules.end == "one_more_roll" and self.current != self.trigger:
            return 1
        return self.rules.max_rolls

    @property
    def can_roll_again(self) -> bool:
        m = self.max_rolls
        return m == 0 or self.rolls < m

    def options(self, keep: Keep) -> tuple[bool, bool]:
        """(may roll on, may bank) after setting ``keep`` aside from the current roll.

        Ending the turn is legal when banking is, or when rolling on is not (it then
        forfeits the total).
        """
        r = self.rules
        total = self.turn_total + keep.points
        hot = keep.n == self.dice_left
        can_roll = self.can_roll_again
        can_bank = self._bankable(total) and not (hot and r.hot_dice == "mandatory" and can_roll)
        return can_roll, can_bank

    def _bankable(self, total: int) -> bool:
        r, p = self.rules, self.current
        if (self.on_board[p] or total >= r.entry_threshold) and total >= r.min_bank:
            return True
        # Under exact finish a bank landing exactly on the target is always allowed: otherwise a
        # player a little short of it could never finish, and the game might never end.
        return r.exact_finish != "off" and self.scores[p] + total == r.target

    def legal_moves(self) -> list[tuple[Keep, bool]]:
        """Every legal (keep, end_turn) pair in the DECIDE phase."""
        if self.phase != Phase.DECIDE:
            return []
        # options() inlined: this is the hot path of every environment step.
        r = self.rules
        can_roll = self.can_roll_again
        mandatory = r.hot_dice == "mandatory" and can_roll
        out = []
        assert self.info is not None  # set in the DECIDE phase
        for k in self.info.keeps:
            if can_roll:
                out.append((k, False))
            if not can_roll or (
                self._bankable(self.turn_total + k.points) and not (mandatory and k.n == self.dice_left)
            ):
                out.append((k, True))
        return out

    # ------------------------------------------------------------------ inputs
    def roll(self, dice: Sequence[int]) -> RollInfo | None:
        """Chance input: the faces of the dice rolled now. Returns the roll's table entry."""
        # The usual case first: a roll of the dice due, found as is in the roll table (whose
        # keys are exactly the valid sorted rolls); anything else takes the checked path.
        try:
            info = self.tables.rolls.get(tuple(sorted(dice))) if self.phase is Phase.ROLL else None
        except TypeError:  # faces that do not even compare: the checked path says what is wrong
            info = None
        if info is None or len(info.dice) != self.dice_left:
            if self.phase not in (Phase.ROLL, Phase.ORDER):
                raise IllegalMoveError(
                    f"no roll is due: the game is in phase {self.phase.name}"
                    + (" (call act() with a keep)" if self.phase == Phase.DECIDE else "")
                )
            try:
                given = list(dice)
            except TypeError:
                raise IllegalMoveError(
                    f"roll {dice!r}: give the {self.dice_to_roll} faces as a list, e.g. [1, 5, 3]"
                ) from None
            try:
                dice = tuple(map(int, given))
            except (TypeError, ValueError):
                dice = ()
            ordered = sorted(dice)
            if (
                len(dice) != self.dice_to_roll
                or not dice
                or ordered[0] < 1
                or ordered[-1] > 6
                or any(d != g for d, g in zip(dice, given))
            ):  # 2.5 or "3" is not a face
                raise IllegalMoveError(f"roll {given}: expected {self.dice_to_roll} dice with faces 1 to 6")
            if self.phase == Phase.ORDER:
                self._order_roll(dice)
                return None
            info = self.tables.rolls[tuple(ordered)]
        p = self.current
        self.rolls += 1
        if self.record:
            self._emit("roll", player=p, dice=list(info.dice))
        if info.instant_win:
            self._emit("instant_win", player=p)
            self._finish([p])
        elif info.lose_all:
            # every event is reported after its effect: a board drawn at the event shows it
            lost, self.scores[p] = self.scores[p], 0
            self._emit("lose_all", player=p, lost=lost, turn_total=self.turn_total)
            self._end_turn(bust=False)
        elif info.zilch:
            self.turn_total += self.rules.zilch_payout
            self.dice_left = self.rules.num_dice
            self._emit("zilch", player=p, points=self.rules.zilch_payout, turn_total=self.turn_total)
            if self._overshoots():
                self._overshoot()
            elif not self.can_roll_again:
                self._close_turn()
        elif info.bust:
            self._emit("bust", player=p, lost=self.turn_total)
            self.busts_in_row[p] += 1
            r = self.rules
            if r.bust_penalty and self.busts_in_row[p] >= r.bust_penalty_after:
                cost = min(r.bust_penalty, self.scores[p])
                self.scores[p] -= cost
                self.busts_in_row[p] = 0
                self._emit("penalty", player=p, points=cost, score=self.scores[p])
            self._end_turn(bust=True)
        else:
            self.dice = info.dice
            self.info = info
            self.phase = Phase.DECIDE
        return info

    def act(self, keep: Keep | Iterable[int], end_turn: bool) -> None:
        """Set ``keep`` aside (a :class:`Keep` or the kept faces, any order), then bank
        (``end_turn=True``) or roll the dice that remain (``False``).

        Faces are whole numbers 1 to 6 (numpy integers too; not bools, floats or strings) and
        ``end_turn`` a bool (numpy's too, or 0 or 1): anything else raises :class:`IllegalMoveError`.
        """
        if self.phase != Phase.DECIDE:
            raise IllegalMoveError(
                f"no decision is due: the game is in phase {self.phase.name}"
                + (f" (call roll() with {self.dice_to_roll} dice)" if self.dice_to_roll else "")
            )
        if end_turn is not True and end_turn is not False:
            end_turn = _end_flag(end_turn)
        k = self._find_keep(keep)
        can_roll, can_bank = self.options(k)
        if end_turn and not can_bank and can_roll:
            raise IllegalMoveError(f"cannot bank after keeping {list(k.dice)}: {self.why_no_bank(k)}; roll instead")
        if not end_turn and not can_roll:
            raise IllegalMoveError(
                f"cannot roll again: the {self.max_rolls}-roll limit of this turn is reached; end the turn instead"
            )
        r, p = self.rules, self.current
        self.turn_total += k.points
        self.dice_left -= k.n
        hot = self.dice_left == 0
        if hot:
            self.dice_left = r.num_dice
        if self.record:
            self._emit(
                "keep",
                player=p,
                dice=list(k.dice),
                points=k.points,
                turn_total=self.turn_total,
                end_turn=bool(end_turn),
                hot_dice=hot,
            )
        self.info = None
        self.dice = ()
        if self._overshoots():
            self._overshoot()
        elif end_turn:
            self._close_turn()
        else:
            self.phase = Phase.ROLL

    def piggyback(self, take: bool) -> None:
        """At the start of a turn after a bank: take over the dice and total the last player
        left (``True``; the total is kept only if the roll scores) or start fresh (``False``)."""
        if self.phase != Phase.PIGGYBACK:
            raise IllegalMoveError(f"no piggyback choice is due: the game is in phase {self.phase.name}")
        if take:
            assert self.piggy is not None  # set in the PIGGYBACK phase
            self.dice_left, self.turn_total = self.piggy
        self.piggy = None
        self.phase = Phase.ROLL
        self._emit("piggyback", player=self.current, take=bool(take))

    # ------------------------------------------------------------------ internals
    def _emit(self, kind: str, **data: Any) -> None:
        if self.record:
            data["type"] = kind
            self.events.append(data)

    def _find_keep(self, keep: Keep | Iterable[int]) -> Keep:
        info = self.info
        assert info is not None  # set in the DECIDE phase, the only one that asks
        if isinstance(keep, Keep):
            counts = keep.counts
        else:
            counts = counts_of(_faces(keep, info))
        for k in info.keeps:
            if k.counts == counts:
                return k
        kept = [f for f, c in enumerate(counts, 1) for _ in range(c)]
        for f, (c, have) in enumerate(zip(counts, info.counts), 1):
            if c > have:
                has = f"only {_NUMBER.get(have, have)} {f}" + ("s" if have > 1 else "") if have else f"no {f}"
                raise IllegalMoveError(f"keep {kept} is not part of the roll {list(info.dice)}: the roll has {has}")
        raise IllegalMoveError(f"keep {kept} from roll {list(info.dice)}: {self.tables.why_not(kept)}")

    def why_no_bank(self, k: Keep) -> str:
        """Why the turn total cannot be banked after setting ``k`` aside, in words."""
        r, total = self.rules, self.turn_total + k.points
        if not self.on_board[self.current] and total < r.entry_threshold:
            return f"not on the board yet and the turn total {total} is below the entry threshold {r.entry_threshold}"
        if total < r.min_bank:
            return f"the turn total {total} is below the minimum bank {r.min_bank}"
        return "hot dice must be rolled again under this ruleset (hot_dice: mandatory)"

    def _order_roll(self, dice: tuple[int, ...]) -> None:
        self._emit("order_roll", players=list(self._contenders), dice=list(dice))
        top = max(dice)
        self._contenders = [p for p, d in zip(self._contenders, dice) if d == top]
        if len(self._contenders) == 1:
            self.current = self._contenders[0]
            self._start_turn()

    def _start_turn(self) -> None:
        self.turn_total = 0
        self.dice_left = self.rules.num_dice
        self.rolls = 0
        self.turn += 1
        if self.record:
            self._emit("turn", player=self.current, turn=self.turn, scores=list(self.scores))
        self.phase = Phase.PIGGYBACK if self.piggy is not None else Phase.ROLL

    def _close_turn(self) -> None:
        """End the turn by choice or at the roll limit: bank if allowed, else forfeit."""
        r, p, total = self.rules, self.current, self.turn_total
        if self._bankable(total):
            self.scores[p] += total
            self.on_board[p] = True
            self._emit("bank", player=p, points=total, score=self.scores[p])
            left = self.dice_left
            if self.scores[p] >= r.target and p not in self.reached:
                self.reached.append(p)
            if self.scores[p] >= r.target and (r.exact_finish == "off" or self.scores[p] == r.target):
                if r.end == "immediate":
                    self._finish([p])
                    return
                if not self.final_round:
                    self.final_round = True
                    self.trigger = p
                    self.final_turns_left = self.n_players - 1
                    self._triggering_turn = True
                    self._emit("final_round", player=p, score=self.scores[p])
            self._end_turn(bust=False, piggy=(left, total) if r.piggyback else None)
        else:
            self._emit("stop", player=p, lost=total)
            self._end_turn(bust=False)

    def _overshoots(self) -> bool:
        r = self.rules
        return r.exact_finish != "off" and self.scores[self.current] + self.turn_total > r.target

    def _overshoot(self) -> None:
        p, total = self.current, self.turn_total
        to = None
        if self.rules.exact_finish == "to_lowest":
            order = [(p + i) % self.n_players for i in range(1, self.n_players)]
            lowest = min(order, key=lambda q: self.scores[q])
            # A gift never carries anyone to or past the target (that would end or block the game
            # outside anyone's turn); such a gift is simply lost.
            if self.scores[lowest] + total < self.rules.target:
                to = lowest
                self.scores[to] += total
        self._emit("overshoot", player=p, lost=total, to=to)
        self._end_turn(bust=False)

    def _end_turn(self, bust: bool, piggy: tuple[int, int] | None = None) -> None:
        if not bust:
            self.busts_in_row[self.current] = 0
        self.piggy = piggy
        self.info = None
        self.dice = ()
        if self.final_round:
            if self._triggering_turn:
                self._triggering_turn = False
            else:
                self.final_turns_left -= 1
            if self.final_turns_left <= 0:
                self._finish(None)
                return
        self.current = (self.current + 1) % self.n_players
        self._start_turn()

    def _finish(self, winners: list[int] | None) -> None:
        if winners is None:
            best = max(self.scores)
            leaders = [p for p in range(self.n_players) if self.scores[p] == best]
            if len(leaders) > 1 and self.rules.tie == "first_to_target":
                rank = {p: i for i, p in enumerate(self.reached)}
                leaders = [min(leaders, key=lambda q: rank.get(q, len(rank) + q))]
            winners = leaders
        self.winners = winners
        self.phase = Phase.OVER
        self.info = None
        self.dice = ()
        self._emit("game_over", winners=list(winners), scores=list(self.scores))

    def __repr__(self) -> str:
        return (
            f"Game({self.rules.name!r}, players={self.n_players}, phase={self.phase.name}, "
            f"current={self.current}, scores={self.scores}, turn_total={self.turn_total}, "
            f"dice={list(self.dice)}, dice_left={self.dice_left})"
        )
