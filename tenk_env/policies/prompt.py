"""What a language model is told, and how its answer is read: the ``llm:`` agent's prompt.

A prompt is a template (:data:`DEFAULT_TEMPLATE`, version :data:`TEMPLATE_VERSION`, or a
user's file) with four fields, written as ``$name`` (:class:`string.Template`):

* ``$rules``: the rules of the game being played, in words, every field of the ruleset
  (:func:`rules_text`): the scoring table is read off :func:`tenk_env.tables.combos`, the one
  source of the points, so a variant's prompt states the variant's points;
* ``$position``: the position in words (:func:`position_text`): seats, scores, who is on the
  board, the turn so far, the roll, the final round;
* ``$moves``: the legal moves (:func:`tenk_env.registry.legal_actions`), numbered from 1
  (:func:`moves_text`): the dice each sets aside, their points, and whether it rolls on or
  ends the turn (banking or forfeiting what);
* ``$answer``: the answer format (:data:`ANSWER_FORMAT`).

The answer is read strictly (:func:`parse_answer`): its last non-empty line must be
``MOVE n`` (or ``MOVE: n``; any case), ``n`` one of the listed numbers. Text before that line
is allowed, so a model may reason first. Anything else is a bad answer, with the reason
the model is told when it is asked again (:func:`retry_text`).
"""

from __future__ import annotations

import hashlib
import re
import string
from collections import defaultdict
from pathlib import Path
from typing import Any

from tenk_env.game import Game, Phase
from tenk_env.obs import PIGGYBACK_TAKE, decode_action
from tenk_env.registry import AgentError
from tenk_env.rules import Ruleset
from tenk_env.tables import combos

__all__ = [
    "TEMPLATE_VERSION",
    "DEFAULT_TEMPLATE",
    "ANSWER_FORMAT",
    "FIELDS",
    "Template",
    "rules_text",
    "position_text",
    "moves_text",
    "parse_answer",
    "move_grammar",
    "retry_text",
    "BadAnswer",
]

#: bumped whenever the default template or the text of any field changes (cached answers are
#: keyed by the prompt's text, so a change never reuses an answer to another prompt)
TEMPLATE_VERSION = 1

ANSWER_FORMAT = (
    "Answer with the number of the move you choose. You may think first, but the last line of "
    "your answer must be exactly MOVE followed by the number, for example: MOVE 2"
)

DEFAULT_TEMPLATE = """\
You are playing the dice game Ten Thousand (also called Farkle or Zilch). Your goal is to win \
the game, not to score the most points in one turn.

RULES
$rules

POSITION
$position

LEGAL MOVES
$moves

$answer
"""

#: the template fields, all of which a template must use
FIELDS = ("rules", "position", "moves", "answer")

_ORDINAL = {4: "four", 5: "five", 6: "six"}


class BadAnswer(ValueError):
    """An answer that does not name a legal move; the message says why, in words for the model."""


class Template:
    """A prompt template: :data:`DEFAULT_TEMPLATE`, or the text of a file (``template=PATH``
    in an ``llm:`` spec). ``key``: the text's SHA-256 (16 hex digits), part of every cached
    answer's key; ``name``: ``default-vN`` or the file's path."""

    def __init__(self, text: str = DEFAULT_TEMPLATE, name: str | None = None):
        self.text = text
        self.name = name or f"default-v{TEMPLATE_VERSION}"
        self.key = hashlib.sha256(text.encode()).hexdigest()[:16]
        tpl = string.Template(text)
        if not tpl.is_valid():
            raise AgentError(
                f"prompt template {self.name}: a '$' that starts no field; write $$ for a dollar sign, "
                f"and the fields as {', '.join('$' + f for f in FIELDS)}"
            )
        used = set(tpl.get_identifiers())
        missing = [f for f in FIELDS if f not in used]
        unknown = sorted(used - set(FIELDS))
        if missing or unknown:
            parts = []
            if missing:
                parts.append("it lacks " + ", ".join("$" + f for f in missing))
            if unknown:
                parts.append("it names unknown fields " + ", ".join("$" + f for f in unknown))
            raise AgentError(
                f"prompt template {self.name}: {'; '.join(parts)}; a template uses each of "
                f"{', '.join('$' + f for f in FIELDS)} (tenk_env/policies/prompt.py)"
            )
        self._tpl = tpl

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise AgentError(f"prompt template {str(p)!r} is not a file: give the path of a text file") from None
        except (OSError, UnicodeDecodeError) as e:
            raise AgentError(f"prompt template {str(p)!r} cannot be read ({e}): give a UTF-8 text file") from None
        return cls(text, str(p))

    def render(self, game: Game, moves: list[dict[str, Any]]) -> str:
        """The prompt for the decision ``game`` stands at, ``moves`` its
        :func:`~tenk_env.registry.legal_actions`."""
        return self._tpl.substitute(
            rules=rules_text(game.rules, game.n_players),
            position=position_text(game),
            moves=moves_text(game, moves),
            answer=ANSWER_FORMAT,
        )


# ---------------------------------------------------------------------- the rules in words
def _pts(v: int) -> str:
    return f"{v:,} point" + ("s" if v != 1 else "")


def scoring_lines(rules: Ruleset) -> list[str]:
    """The scoring table, one line per kind of combination, from :func:`combos`."""
    lines = []
    groups: dict[str, list[Any]] = defaultdict(list)
    for c in combos(rules):
        if c.name.startswith("three pairs"):
            groups["three pairs"].append(c)
        elif c.name.startswith("four ") and c.name.endswith("as three pairs"):
            groups["four+pair"].append(c)
        elif c.name.startswith("two triplets"):
            groups["two triplets"].append(c)
        else:
            lines.append(f"- {c.name}: {_pts(c.points)}")
    if groups["three pairs"]:
        lines.append(
            f"- three pairs (three different pairs in one roll of six): {_pts(groups['three pairs'][0].points)}"
        )
    if groups["four+pair"]:
        lines.append(
            f"- four of a kind plus a pair of another face counts as three pairs: {_pts(groups['four+pair'][0].points)}"
        )
    if groups["two triplets"]:
        lines.append(f"- two triplets in one roll of six: {_pts(groups['two triplets'][0].points)}")
    return lines


def rules_text(rules: Ruleset, n_players: int) -> str:
    """Every rule of ``rules`` in words: what a player must know to play it, field by field."""
    r = rules
    nd = r.num_dice
    out = [
        f"- {n_players} players take turns. The game is played with {nd} dice.",
        "- On your turn you roll the dice. From each roll you must set aside at least one scoring "
        "combination (dice that score nothing cannot be set aside); their points add to your turn "
        "total. Dice set aside never combine with dice of later rolls.",
        "- Then you either end your turn, banking the turn total into your score, or roll the dice "
        "you have not set aside. A roll in which nothing scores is a bust: the turn ends and its "
        "turn total is lost.",
    ]
    if r.zilch_payout:
        out.append(
            f"- Exception: a roll of all {nd} dice in which nothing scores is not a bust. It adds "
            f"{_pts(r.zilch_payout)} to the turn total and you must roll all {nd} dice again."
        )
    if r.hot_dice == "optional":
        out.append(
            f"- Hot dice: once all {nd} dice have been set aside this turn, you may roll all {nd} again, "
            "keeping the turn total, or end the turn."
        )
    else:
        out.append(
            f"- Hot dice: once all {nd} dice have been set aside this turn, you must roll all {nd} again, "
            "keeping the turn total (you may not end the turn then)."
        )
    if r.max_rolls:
        out.append(
            f"- At most {r.max_rolls} rolls per turn. After the last roll the turn ends; if its total "
            "cannot be banked it is lost."
        )
    if r.entry_threshold:
        out.append(
            f"- Entry: until you have banked once you are not on the board, and you may bank only a "
            f"turn total of {r.entry_threshold:,} or more."
        )
    else:
        out.append("- Entry: there is no entry threshold; any turn total may be your first bank.")
    if r.min_bank:
        out.append(f"- Minimum bank: no turn total below {r.min_bank:,} may be banked, on any turn.")
    if r.bust_penalty:
        out.append(
            f"- Bust penalty: busting on {r.bust_penalty_after} of your turns in a row costs "
            f"{_pts(r.bust_penalty)} of your banked score (never below 0), and the count starts again. "
            "A turn that does not bust resets the count."
        )
    if r.four_twos_lose_all:
        out.append("- A roll holding four or more 2s wipes your whole banked score and ends your turn.")
    if r.six_of_a_kind_wins == "ones":
        out.append("- Rolling six 1s in one roll wins the game at once.")
    elif r.six_of_a_kind_wins == "any":
        out.append("- Rolling six of a kind (any face) in one roll wins the game at once.")
    if r.piggyback:
        out.append(
            "- Piggyback: after a player banks, the next player may take over the dice that player "
            "left and their turn total, rolling those dice; if the roll scores, the total is theirs "
            "to build on, and if it busts it is lost. Or they may start fresh."
        )
    if r.komi:
        out.append(f"- The second player starts the game with {_pts(r.komi)}.")
    if r.turn_order == "highest_die":
        out.append("- Turn order: every player rolls one die; the highest starts (ties roll again).")
    t = f"{r.target:,}"
    if r.end == "final_round":
        out.append(
            f"- End: the first player to bank a score of {t} or more triggers the final round: every other "
            "player gets exactly one more turn. Then the highest score wins."
        )
    elif r.end == "one_more_roll":
        out.append(
            f"- End: the first player to bank a score of {t} or more triggers the final round: every other "
            "player gets one more turn of a single roll. Then the highest score wins."
        )
    else:
        out.append(f"- End: the first player to bank a score of {t} or more wins at once.")
    if r.end != "immediate":
        if r.tie == "first_to_target":
            out.append(f"- A tie for the highest score is won by the tied player who reached {t} first.")
        else:
            out.append("- Players tied for the highest score share the win.")
    if r.exact_finish == "forfeit":
        out.append(
            f"- Exact finish: a turn that takes your score past {t} ends at once and its total is lost. "
            f"Banking exactly {t} is always allowed."
        )
    elif r.exact_finish == "to_lowest":
        out.append(
            f"- Exact finish: a turn that takes your score past {t} ends at once and its total goes to "
            f"the lowest-scoring other player (lost instead if it would take them to {t} or more). "
            f"Banking exactly {t} is always allowed."
        )
    multiples = {
        "doubling": "each die past three of a kind doubles the points of the three",
        "flat": "four, five and six of a kind score the flat amounts below",
        "none": "no bonus past three of a kind: extra matching dice score only if they are 1s or 5s",
    }[r.multiples]
    out.append(f"- Scoring ({multiples}):")
    out.extend("  " + line for line in scoring_lines(r))
    return "\n".join(out)


# ---------------------------------------------------------------------- the position in words
def _seat(p: int, me: int) -> str:
    return f"player {p + 1}" + (" (you)" if p == me else "")


def position_text(game: Game) -> str:
    """The decision ``game`` stands at, in words, told to the player to move."""
    r, me, n = game.rules, game.current, game.n_players
    lines = [f"You are player {me + 1} of {n}. Scores (target {r.target:,}):"]
    for p in range(n):
        s = f"- {_seat(p, me)}: {game.scores[p]:,}"
        if r.entry_threshold and not game.on_board[p]:
            s += f" (not on the board yet: needs a turn of {r.entry_threshold:,} or more to bank)"
        if r.bust_penalty and game.busts_in_row[p]:
            s += f" ({game.busts_in_row[p]} bust{'s' * (game.busts_in_row[p] > 1)} in a row)"
        lines.append(s)
    if game.final_round:
        trig = game.trigger
        who = "You" if trig == me else f"Player {trig + 1}" if trig is not None else "A player"
        extra = " (a single roll)" if r.end == "one_more_roll" and trig != me else ""
        lines.append(
            f"This is the final round: {who} reached the target. This is your last turn{extra}; to win you "
            "must end with the highest score."
        )
    if game.phase is Phase.PIGGYBACK:
        assert game.piggy is not None
        dice, total = game.piggy
        lines.append(
            f"Your turn is starting. The last player banked and left {dice} dice and a turn total of "
            f"{total:,}: you may take them over (roll those {dice} dice, building on {total:,}) or start "
            f"fresh with all {r.num_dice} dice."
        )
        return "\n".join(lines)
    rolls = f"roll {game.rolls} of this turn" + (f" (at most {game.max_rolls})" if game.max_rolls else "")
    lines.append(
        f"Your turn so far: a turn total of {game.turn_total:,} points; this is {rolls}. "
        f"You rolled {game.dice_left} dice: {' '.join(map(str, game.dice))}."
    )
    return "\n".join(lines)


def moves_text(game: Game, moves: list[dict[str, Any]]) -> str:
    """The legal moves, numbered from 1, each with what it sets aside and what it does."""
    lines = []
    for i, m in enumerate(moves, 1):
        if game.phase is Phase.PIGGYBACK:
            text = (
                "take over the dice and turn total the last player left"
                if m["action"] == PIGGYBACK_TAKE
                else "start fresh with all the dice"
            )
            lines.append(f"{i}. {text}")
            continue
        keep, end = decode_action(game, m["action"])  # type: ignore[misc]
        total = game.turn_total + keep.points
        what = f"set aside {' '.join(map(str, keep.dice))} ({_pts(keep.points)})"
        score = game.scores[game.current]
        if game.rules.exact_finish != "off" and score + total > game.rules.target:
            # the engine ends such a turn at the keep, whatever the move says next
            lost = "given to the lowest-scoring player" if game.rules.exact_finish == "to_lowest" else "lost"
            then = "end the turn" if end else "roll on"
            lines.append(
                f"{i}. {what} and {then}: this passes the target of {game.rules.target:,}, so the turn ends "
                f"at once and its total is {lost}"
            )
            continue
        if not end:
            left = game.dice_left - keep.n
            dice = f"{left} di{'c' * (left > 1)}e on" if left else f"all {game.rules.num_dice} dice again (hot dice)"
            lines.append(f"{i}. {what} and roll {dice}, with a turn total of {total:,}")
            continue
        _, can_bank = game.options(keep)
        if can_bank:
            lines.append(f"{i}. {what} and end the turn, banking {total:,} (score {score + total:,})")
        else:
            lines.append(f"{i}. {what} and end the turn, losing the turn total of {total:,} ({game.why_no_bank(keep)})")
    return "\n".join(lines)


# ---------------------------------------------------------------------- the answer
_MOVE = re.compile(r"MOVE\s*:?\s*(\d+)", re.IGNORECASE)


def parse_answer(text: str, n_moves: int) -> int:
    """The 0-based index of the move an answer names. :class:`BadAnswer` says why when its
    last non-empty line is not ``MOVE n`` with ``1 <= n <= n_moves``."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if not lines:
        raise BadAnswer("the answer was empty")
    last = lines[-1]
    m = _MOVE.fullmatch(last)
    if m is None:
        shown = last if len(last) <= 80 else last[:80] + "..."
        raise BadAnswer(f"its last line {shown!r} is not MOVE followed by a number")
    k = int(m.group(1))
    if not 1 <= k <= n_moves:
        raise BadAnswer(f"move {k} is not one of the legal moves, numbered 1 to {n_moves}")
    return k - 1


def move_grammar(n_moves: int) -> str:
    """A GBNF grammar (llama.cpp's) whose only sentences are ``MOVE n`` for ``1 <= n <= n_moves``:
    the answers :func:`parse_answer` accepts, and no others."""
    if n_moves < 1:
        raise ValueError(f"a decision has at least one legal move, not {n_moves}")
    numbers = " | ".join(f'"{k}"' for k in range(1, n_moves + 1))
    return f'root ::= "MOVE " ({numbers})'


def retry_text(reason: str, n_moves: int) -> str:
    """What the model is told after a bad answer."""
    return (
        f"That answer was not accepted: {reason}. Choose one of the legal moves 1 to {n_moves}. "
        "The last line of your answer must be exactly MOVE followed by the number, for example: MOVE 1"
    )
