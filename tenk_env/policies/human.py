"""A human at the terminal (``human`` agent); ``tenk play``'s game loop is
:func:`tenk_env.evaluation.play.play_terminal`.

Input and output go through two injectable functions (``input_fn(prompt) -> str``,
``print_fn(text)``) so that tests can drive a whole game with scripted answers.

At a decision the roll is shown sorted, with position numbers, and the legal keeps are
listed under letters with their points, reading and what may follow. Answers:

* a letter (``a``) picks a listed keep; the faces (``1 5``, ``15`` or ``1,5``) pick the keep
  of those dice; ``best`` picks the highest-scoring keep (Dice.now's Select best);
* ``r`` / ``b`` (roll / bank) when both are allowed; they may also follow the keep on one
  line (``1 5 b``, ``a r``);
* ``?`` shows the help, ``q`` (or end of input, or Ctrl-C) leaves the game.

Bad input is answered with a hint and the question is asked again.
"""

from __future__ import annotations

import re
import string
import sys
from collections.abc import Callable, Sequence

import numpy as np

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game
from tenk_env.policies.base import AgentError
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep, counts_of

__all__ = ["HumanAgent", "QuitGame", "check_terminal"]

InputFn = Callable[[str], str]
PrintFn = Callable[[str], None]

_COUNT = ("no", "one", "two", "three", "four", "five", "six")
_ROLL_WORDS = {"r": False, "roll": False, "b": True, "bank": True}
_HELP = """\
How to answer:
  a letter (a, b, ...)   set aside that keep from the list
  faces: 1 5  or  15     set aside those dice (every die must score within them)
  best                   set aside the highest-scoring keep
  then r / b             roll the dice left, or bank the turn total; may follow on the
                         same line: '1 5 r', 'a b'
  q                      leave the game
Scoring: 1 = 100, 5 = 50, three of a kind = face x 100 (three 1s per the ruleset);
dice set aside in one roll never combine with later rolls."""


class QuitGame(Exception):
    """The human left the game (``q``, end of input or Ctrl-C at a prompt)."""


def _n(x: int) -> str:
    return f"{x:,}"


class HumanAgent:
    """A person at the terminal. ``names`` labels the seats in what is printed."""

    name = "human"
    #: it answers at the terminal of the process that plays it: a server or a batch job,
    #: whose terminal nobody watches, refuses it
    interactive = True

    def __init__(
        self, input_fn: InputFn | None = None, print_fn: PrintFn | None = None, names: Sequence[str] | None = None
    ):
        # None: the builtins, looked up at each call (so a patched input() is honoured)
        self.input_fn = input_fn or (lambda prompt: input(prompt))
        self.print_fn = print_fn or (lambda text: print(text))
        self.names = list(names) if names else None

    def check(self, rules: Ruleset, n_players: int) -> None:
        if not (MIN_PLAYERS <= n_players <= MAX_PLAYERS):
            raise AgentError(f"agent 'human' plays {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n_players}")

    # ------------------------------------------------------------------ io
    def _ask(self, prompt: str) -> str:
        try:
            text = self.input_fn(prompt)
        except (EOFError, KeyboardInterrupt):
            raise QuitGame() from None
        text = (text or "").strip().lower()
        if text in ("q", "quit", "exit"):
            raise QuitGame()
        return text

    def _who(self, game: Game, p: int) -> str:
        return self.names[p] if self.names else f"P{p + 1}"

    # ------------------------------------------------------------------ decisions
    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        out = self.print_fn
        keeps = game.info.keeps
        out(self._header(game))
        out("  position " + " ".join(f"{i:>2}" for i in range(1, len(game.dice) + 1)))
        out("  die      " + " ".join(f"{d:>2}" for d in game.dice))
        out("  keeps:")
        for i, k in enumerate(keeps):
            reading = ", ".join(k.reading)
            out(
                f"   {_label(i)}) {' '.join(map(str, k.dice)):<12} {_n(k.points):>6}  {reading:<28} {self._then(game, k)}"
            )
        prompt = f"keep which? ({_letters(len(keeps))}, faces like '1 5', 'best'; ? help, q quit): "
        while True:
            text = self._ask(prompt)
            if text in ("?", "help"):  # not "h": a keep may be labelled h
                out(_HELP)
                continue
            k, end, hint = self._parse(game, text)
            if hint:
                out(f"  ! {hint}")
                continue
            can_roll, can_bank = game.options(k)
            if end is None:
                if can_roll and can_bank:
                    end = self._roll_or_bank(game, k)
                else:
                    end = not can_roll
                    out(
                        f"  ({'the turn ends: ' + self._why_no_roll(game) if end else 'you must roll: ' + game.why_no_bank(k)})"
                    )
                return k, end
            if end and not can_bank and can_roll:
                out(f"  ! you cannot bank now: {game.why_no_bank(k)}; answer with the keep and r")
                continue
            if not end and not can_roll:
                out(f"  ! you cannot roll again: {self._why_no_roll(game)}; answer with the keep and b")
                continue
            return k, end

    def _roll_or_bank(self, game: Game, k: Keep) -> bool:
        total = game.turn_total + k.points
        left = game.dice_left - k.n or game.rules.num_dice
        while True:
            text = self._ask(f"turn total {_n(total)}: roll {left} dice or bank? (r/b): ")
            if text in _ROLL_WORDS:
                return _ROLL_WORDS[text]
            if text in ("?", "help"):  # not "h": a keep may be labelled h
                self.print_fn(_HELP)
                continue
            self.print_fn("  ! answer r to roll or b to bank (q quits)")

    def _parse(self, game: Game, text: str) -> tuple[Keep | None, bool | None, str | None]:
        """(keep, end or None when not given, hint when the answer is not understood)."""
        keeps = game.info.keeps
        tokens = [t for t in re.split(r"[\s,]+", text) if t]
        end = None
        if len(tokens) > 1 and tokens[-1] in _ROLL_WORDS:
            end = _ROLL_WORDS[tokens.pop()]
        if not tokens:
            return None, None, "type a letter from the list or the faces to set aside, e.g. '1 5' (? for help)"
        if len(tokens) == 1 and tokens[0] == "best":
            return game.info.best, end, None
        if len(tokens) == 1 and tokens[0].isalpha():
            if len(tokens[0]) == 1 and tokens[0] in string.ascii_lowercase:
                i = string.ascii_lowercase.index(tokens[0])
                if i < len(keeps):
                    return keeps[i], end, None
            return (
                None,
                None,
                (f"no keep {tokens[0]!r}: choose {_letters(len(keeps))} from the list, or type the faces, e.g. '1 5'"),
            )
        faces = "".join(tokens)
        if not faces.isdigit():
            return None, None, f"{text!r} is neither a letter from the list nor dice faces; e.g. 'a' or '1 5'"
        dice = [int(ch) for ch in faces]
        if any(d < 1 or d > 6 for d in dice):
            return None, None, "dice faces run from 1 to 6"
        counts = counts_of(dice)
        for k in keeps:
            if k.counts == counts:
                return k, end, None
        have = game.info.counts
        for f in range(1, 7):
            if counts[f - 1] > have[f - 1]:
                n = have[f - 1]
                roll = " ".join(map(str, game.dice))
                if n == 0:
                    return None, None, f"there is no {f} in the roll {roll}"
                return None, None, f"the roll {roll} has only {_COUNT[n]} {f}"
        return None, None, f"cannot set aside {' '.join(map(str, sorted(dice)))}: {game.tables.why_not(dice)}"

    def _why_no_roll(self, game: Game) -> str:
        return f"this turn's {game.max_rolls}-roll limit is reached"

    def _then(self, game: Game, k: Keep) -> str:
        total = game.turn_total + k.points
        left = game.dice_left - k.n
        can_roll, can_bank = game.options(k)
        dice = f"hot dice, {game.rules.num_dice} to roll" if left == 0 else f"{left} left"
        what = (
            "roll or bank"
            if can_roll and can_bank
            else "must roll"
            if can_roll
            else ("bank" if can_bank else "turn ends, total lost")
        )
        return f"-> {_n(total)}, {dice}: {what}"

    def _header(self, game: Game) -> str:
        p = game.current
        scores = " | ".join(f"{self._who(game, q)} {_n(s)}" for q, s in enumerate(game.scores))
        r = game.rules
        notes = []
        if not game.on_board[p] and r.entry_threshold:
            notes.append(f"not on the board: {_n(r.entry_threshold)} needed to bank")
        if game.max_rolls:
            notes.append(f"roll {game.rolls} of {game.max_rolls}")
        if game.final_round and p != game.trigger:
            notes.append("your final turn")
        extra = f" ({'; '.join(notes)})" if notes else ""
        return f"\n{self._who(game, p)}: turn total {_n(game.turn_total)}{extra}   scores: {scores}"

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        dice, total = game.piggy
        while True:
            text = self._ask(
                f"the last player left {dice} dice and {_n(total)} points: take them over "
                "(you keep the total if your roll scores)? (y/n): "
            )
            if text in ("y", "yes"):
                return True
            if text in ("n", "no"):
                return False
            self.print_fn("  ! answer y to roll the dice left, n to start a fresh turn (q quits)")


def check_terminal(specs: Sequence[str], command: str) -> None:
    """Refuse now, before any game, a ``human`` among ``specs`` when the standard input is not
    a terminal (piped, redirected, a batch job): the first question would end the game (end
    of input), after whatever work came before it. ``command`` names the command."""
    if any(str(s).partition(":")[0] == "human" for s in specs) and not sys.stdin.isatty():
        raise AgentError(
            f"agent 'human' answers at a terminal, and {command}'s standard input is not one (it is "
            "piped or redirected): run it from a terminal, or give a bot or a trained agent instead"
        )


def _label(i: int) -> str:
    return string.ascii_lowercase[i]


def _letters(n: int) -> str:
    return f"a-{_label(n - 1)}" if n > 1 else "a"


def make_human(arg: str | None) -> HumanAgent:
    if arg:
        raise AgentError(f"agent 'human' takes no parameter (got 'human:{arg}'); write 'human'")
    return HumanAgent()
