"""Heuristic bots: ``greedy``, ``hold:N``, ``dicenow`` and ``breakeven``.

Every bot's decision is a pure function of a few numbers, written out below so that a
batched engine can reproduce it array-wise:

* the roll's legal keeps (``RollInfo.keeps``: points ``k.points``, dice used ``k.n``);
* a :class:`Situation`: turn total before the keep ``total``, dice in this roll ``dice``,
  own banked ``score``, ``leader`` (the highest banked score among the *other* players),
  ``entering`` (the entry threshold still binds), ``last_roll`` (no roll is allowed after
  this one: ``max_rolls`` or the single roll of ``end: one_more_roll``), ``final_turn``
  (the final round is on and this is the player's last turn);
* per-ruleset constants (:class:`Context`, built once per :class:`~tenk_env.tables.Tables`
  and cached): the exact bust chance ``bust[n]`` and mean best points ``mean[n]`` of a roll
  of ``n`` dice from ``tables.odds()``, and the rule flags.

For a keep ``k`` write ``T' = total + k.points`` and ``r = dice - k.n`` (the dice left; 0
means hot dice, and the next roll is then of ``num_dice`` dice, written ``n(r)``). Points
and odds are only ever read from the tables.

Rules layer shared by all bots (the Dice.now text knows none of these rules; each line is
what keeps a bot sensible and its games finite under every preset):

* ``last_roll``: the turn ends whatever the bot wants, so it takes the highest-scoring keep.
* Exact finish (``exact_finish`` not off): a keep that would overshoot the target is never
  chosen while another keep exists, and a total that lands exactly on the target is banked.
* ``end: immediate``: a total that reaches the target is banked (banking wins the game).
  Pig players know this as "hold at 20 or at the goal".
* Whatever a bot wants is then made legal: a bank the rules forbid (entry threshold,
  ``min_bank``, mandatory hot dice) becomes a roll, a roll past the limit becomes the end
  of the turn (checked against ``Game.options``, the one source of legality).
* Piggyback (``piggyback: true``): take over the ``n`` dice and total ``T`` the last banker
  left when one roll of them is worth more on average than a fresh roll of all dice:
  ``(1 - bust[n]) * T + mean[n] > mean[num_dice]`` (the text's own single-roll reckoning).
* Scoreboard thresholds written for a 10,000 game (7,000 late, 2,000 behind) scale with the
  target: 70% and 20% of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game
from tenk_env.policies.base import AgentError
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep, RollInfo, Tables

__all__ = [
    "Context",
    "Situation",
    "context",
    "situation",
    "GreedyAgent",
    "HoldAgent",
    "DiceNowAgent",
    "BreakEvenAgent",
    "greedy_move",
    "hold_move",
    "dicenow_move",
    "breakeven_move",
    "take_piggyback",
    "dicenow_bar",
    "GREEDY_DEFAULT_BAR",
    "HOLD_DEFAULT",
]

#: greedy's default bar: the fixed bar that maximises the expected banked points of an
#: on-board turn for the keep-every-scoring-die rule under ``classic``, by exact dynamic
#: programming over (turn total, dice left): 452.3 points a turn at 250, 449.8 at 300,
#: 441.0 at 200, 432.6 at 350.
GREEDY_DEFAULT_BAR = 250
#: hold's default N: the "rolling until 300" target of the Dice.now text (85% success),
#: and the opponent of ``tenk bench tournament``.
HOLD_DEFAULT = 300

_NEG = -math.inf


class Context:
    """Per-ruleset constants every bot reads, built once per Tables object (see :func:`context`)."""

    __slots__ = (
        "tables",
        "num_dice",
        "target",
        "entry",
        "min_bank",
        "mandatory_hot",
        "immediate",
        "exact",
        "bust",
        "mean",
        "breakeven",
        "late",
        "far",
        "best_by_points",
        "best_by_dice",
    )

    def __init__(self, tables: Tables):
        r = tables.rules
        self.tables = tables
        self.num_dice = r.num_dice
        self.target = r.target
        self.entry = r.entry_threshold
        self.min_bank = r.min_bank
        self.mandatory_hot = r.hot_dice == "mandatory"
        self.immediate = r.end == "immediate"
        self.exact = r.exact_finish != "off"
        odds = tables.odds()
        # index by dice count; slot 0 unused so that bust[n] reads naturally
        self.bust = (1.0,) + tuple(b for _, b, _ in odds)
        self.mean = (0.0,) + tuple(m for _, _, m in odds)
        #: the text's break-even running totals mean[n] / bust[n] (inf where a roll cannot bust)
        self.breakeven = (0.0,) + tuple(m / b if b > 0 else math.inf for _, b, m in odds)
        self.late = r.target * 7 // 10
        self.far = r.target // 5
        # The threshold bots' keep depends on the roll alone: look it up, don't search.
        self.best_by_points = {d: max(i.keeps, key=_by_points) for d, i in tables.rolls.items() if i.keeps}
        self.best_by_dice = {d: max(i.keeps, key=_by_dice) for d, i in tables.rolls.items() if i.keeps}


def _by_points(k: Keep) -> tuple[int, int]:
    return k.points, k.n


def _by_dice(k: Keep) -> tuple[int, int]:
    return k.n, k.points


def context(tables: Tables) -> Context:
    """The :class:`Context` of a Tables object, built once (``get_tables`` caches those per ruleset)."""
    return tables.derived("heuristic", Context)


class Situation(NamedTuple):
    """What a bot knows about the decision at hand, besides the roll's keeps."""

    total: int
    dice: int
    score: int
    leader: int
    entering: bool
    last_roll: bool
    final_turn: bool


def situation(game: Game, c: Context) -> Situation:
    p = game.current
    scores = game.scores
    if game.n_players == 2:
        leader = scores[1 - p]
    else:
        leader = max(s for q, s in enumerate(scores) if q != p)
    return Situation(
        game.turn_total,
        game.dice_left,
        scores[p],
        leader,
        c.entry > 0 and not game.on_board[p],
        not game.can_roll_again,
        game.final_round and p != game.trigger,
    )


# ---------------------------------------------------------------------- shared rules layer
def _bankable(c: Context, s: Situation, t2: int, hot: bool) -> bool:
    """Mirror of Game.options for the candidate keeps (decide() re-checks the chosen one).
    Under exact finish a bank landing exactly on the target is always allowed."""
    if hot and c.mandatory_hot and not s.last_roll:
        return False
    return ((not s.entering or t2 >= c.entry) and t2 >= c.min_bank) or (c.exact and s.score + t2 == c.target)


def _overshoots(c: Context, s: Situation, t2: int) -> bool:
    return c.exact and s.score + t2 > c.target


def _finishes(c: Context, s: Situation, t2: int) -> bool:
    """Banking ``t2`` wins at once (``end: immediate``) or is the exact landing on the target."""
    tot = s.score + t2
    if c.exact:
        return tot == c.target
    return c.immediate and tot >= c.target


def _max_points(keeps: Sequence[Keep], c: Context, s: Situation) -> Keep:
    """Highest points, then most dice; under exact finish, among keeps that do not overshoot."""
    best, key = None, None
    for k in keeps:
        kk = (not _overshoots(c, s, s.total + k.points), k.points, k.n)
        if key is None or kk > key:
            best, key = k, kk
    return best


def take_piggyback(c: Context, dice: int, total: int) -> bool:
    """Take over ``dice`` dice and ``total`` points when one roll of them beats a fresh roll
    on average: ``(1 - bust[dice]) * total + mean[dice] > mean[num_dice]``.

    Under ``classic`` (totals in steps of 50) it takes any total left on hot dice, and
    otherwise 1 die from 1,100, 2 dice from 600, 3 from 450, 4 from 300, 5 from 200.
    """
    return (1.0 - c.bust[dice]) * total + c.mean[dice] > c.mean[c.num_dice]


# ---------------------------------------------------------------------- the decision functions
def hold_move(keeps: Sequence[Keep], c: Context, s: Situation, bar: int, best: Keep | None = None) -> tuple[Keep, bool]:
    """``hold:N``: keep the highest-scoring set (most points, then most dice); end the turn
    when ``T' >= bar`` (hot dice included: only the turn total matters, as in Pig), on the
    last roll, or when banking finishes the game (rules layer)."""
    k = best if best is not None and not c.exact else _max_points(keeps, c, s)
    t2 = s.total + k.points
    return k, t2 >= bar or s.last_roll or _finishes(c, s, t2)


def greedy_move(
    keeps: Sequence[Keep], c: Context, s: Situation, bar: int, best: Keep | None = None
) -> tuple[Keep, bool]:
    """``greedy:BAR``: keep every scoring die (the keep with the most dice, then the most
    points); end the turn when ``T' >= bar``, on the last roll, or when banking finishes
    the game."""
    if best is None or c.exact:
        best, key = None, None
        for k in keeps:
            kk = (not _overshoots(c, s, s.total + k.points), k.n, k.points)
            if key is None or kk > key:
                best, key = k, kk
    t2 = s.total + best.points
    return best, t2 >= bar or s.last_roll or _finishes(c, s, t2)


def dicenow_bar(c: Context, s: Situation, r: int) -> int:
    """The Dice.now computer's banking bar with ``r`` dice left (1..5), once on the board:
    300 with three or fewer, 1,000 with four, 2,500 with five; raised to 600 (a floor: the
    higher bars stay) when 2,000 or more behind the leader and the leader has passed
    7,000 (strictly more than 7,000)."""
    bar = 300 if r <= 3 else 1000 if r == 4 else 2500
    if bar < 600 and s.leader > c.late and s.leader - s.score >= c.far:
        bar = 600
    return bar


def _dicenow_banks(c: Context, s: Situation, t2: int, r: int) -> bool:
    if _finishes(c, s, t2) or (s.final_turn and s.score + t2 > s.leader):
        return True
    if s.final_turn or r == 0:
        return False
    if s.entering:
        return t2 >= c.entry
    return t2 >= dicenow_bar(c, s, r)


def dicenow_move(keeps: Sequence[Keep], c: Context, s: Situation) -> tuple[Keep, bool]:
    """The Dice.now computer player. For each keep: if the bank rule below says bank (and
    banking is legal) the keep is worth ``T'`` (no dice are rolled, so nothing is at risk);
    otherwise it would roll ``n(r)`` dice and is worth ``T' * (1 - bust[n(r)]) + mean[n(r)]``,
    the points weighed against the bust risk of the dice that remain. It takes the keep of
    highest worth (ties: more points, then more dice, then the lower mask).

    Bank rule, in order: bank when banking finishes the game (rules layer) or, on its final
    turn, when ``score + T'`` beats the leader (a tie loses under ``first_to_target``); on
    the final turn otherwise roll; always roll hot dice (``r == 0``); before it is on the
    board, bank once ``T'`` reaches the entry threshold; then bank at ``dicenow_bar``.
    """
    N = c.num_dice
    if s.last_roll:
        return _max_points(keeps, c, s), True
    best, best_end, key = None, False, None
    for k in keeps:
        t2 = s.total + k.points
        r = s.dice - k.n
        if _overshoots(c, s, t2):
            kk = (_NEG, k.points, k.n)
            end = True
        elif _dicenow_banks(c, s, t2, r) and _bankable(c, s, t2, r == 0):
            kk = (t2, k.points, k.n)
            end = True
        else:
            n = r or N
            kk = (t2 * (1.0 - c.bust[n]) + c.mean[n], k.points, k.n)
            end = False
        if key is None or kk > key:
            best, best_end, key = k, end, kk
    return best, best_end


def breakeven_weight(c: Context, s: Situation) -> float:
    """Weight of a bust's loss in the break-even sums: 1, except past 7,000 (anyone's banked
    score strictly above 70% of the target): 1/2 when 2,000+ behind the leader (every
    break-even total doubles: take the rolls you would normally decline), 2 when 2,000+ ahead
    of every other player (they halve: tighten up and bank early)."""
    if max(s.score, s.leader) > c.late:
        if s.leader - s.score >= c.far:
            return 0.5
        if s.score - s.leader >= c.far:
            return 2.0
    return 1.0


def breakeven_move(keeps: Sequence[Keep], c: Context, s: Situation) -> tuple[Keep, bool]:
    """The strategy section of the Dice.now text.

    * Rolling candidate: the keep maximising ``k.points + mean[n(r)]`` ("weigh 1s as 100 and
      a die": a die is worth what it adds to the mean of the next roll, so a lone 5 (50) is
      not worth the 82 points between five and four dice, a second 1 (100) is), ties: more
      dice, then lower mask. Straights, three pairs and triples win this naturally.
    * Banking candidates: keeps that leave dice (always roll hot dice) and may be banked.
    * Bank with the highest-scoring candidate that finishes the game or, on the final
      turn, beats the leader. Otherwise on the final turn roll, and roll when the rolling
      candidate sets all dice aside (always roll hot dice). Before the player is on the
      board bank as soon as a candidate reaches the entry threshold. Otherwise bank
      (highest-scoring candidate, total ``B``) when ``B`` is at least the one-roll expected
      result of rolling with the rolling candidate (total ``R``, ``n`` dice):
      ``R + mean[n] - w * bust[n] * R``, the text's expected change of one more roll, with
      ``w`` from :func:`breakeven_weight`. With one keep this is exactly the break-even
      table: bank when ``T' >= mean[n] / (w * bust[n])`` (312.5 with three dice, 912 with
      four under ``classic``).
    """
    N = c.num_dice
    if s.last_roll:
        return _max_points(keeps, c, s), True
    roll_k, roll_key = None, None
    bank_k, bank_key = None, None
    win_k, win_key = None, None
    for k in keeps:
        t2 = s.total + k.points
        if _overshoots(c, s, t2):
            continue
        r = s.dice - k.n
        hot = r == 0
        kk = (k.points + c.mean[r or N], k.n)
        if roll_key is None or kk > roll_key:
            roll_k, roll_key = k, kk
        if not _bankable(c, s, t2, hot):
            continue
        pk = (k.points, k.n)
        if _finishes(c, s, t2) or (s.final_turn and s.score + t2 > s.leader):
            if win_key is None or pk > win_key:
                win_k, win_key = k, pk
        elif not hot and (bank_key is None or pk > bank_key):
            bank_k, bank_key = k, pk
    if win_k is not None:
        return win_k, True
    if roll_k is None:  # every keep overshoots the exact target: the turn is lost anyway
        return keeps[0], True
    if s.final_turn or bank_k is None or roll_k.n == s.dice:  # always roll hot dice
        return roll_k, False
    if s.entering:  # bank_k is bankable, so it reaches the entry threshold
        return bank_k, True
    n = (s.dice - roll_k.n) or N
    R = s.total + roll_k.points
    if s.total + bank_k.points >= R + c.mean[n] - breakeven_weight(c, s) * c.bust[n] * R:
        return bank_k, True
    return roll_k, False


# ---------------------------------------------------------------------- the agents
class _Heuristic:
    """Shared plumbing: check, the legality net around the move function, piggyback."""

    name = "heuristic"

    def check(self, rules: Ruleset, n_players: int) -> None:
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, int)
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise AgentError(f"agent {self.name!r} plays {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n_players!r}")

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        c = context(game.tables)
        k, end = self._move(game.info, c, situation(game, c))
        can_roll, can_bank = game.options(k)
        if end:
            if not can_bank and can_roll:
                end = False
        elif not can_roll:
            end = True
        return k, end

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        dice, total = game.piggy
        return take_piggyback(context(game.tables), dice, total)

    def _move(self, info: RollInfo, c: Context, s: Situation) -> tuple[Keep, bool]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<agent {self.name}>"


class HoldAgent(_Heuristic):
    """``hold:N`` (default N = 300): Pig's hold-at-N. Keeps the highest-scoring set (most
    points, ties: most dice) and ends the turn once the turn total reaches N, whatever the
    dice left, hot dice included. Scoreboard-blind by design (apart from the rules layer in
    the module docstring): the baseline the scoreboard-aware bots are measured against.
    Before the player is on the board the entry rule forbids banking below the threshold,
    so N acts as ``max(N, entry)``; likewise ``min_bank``."""

    def __init__(self, bar: int = HOLD_DEFAULT):
        self.bar = bar
        self.name = f"hold:{bar}"

    def _move(self, info, c, s):
        return hold_move(info.keeps, c, s, self.bar, c.best_by_points[info.dice])


class GreedyAgent(_Heuristic):
    """``greedy:BAR`` (default BAR = 250, see :data:`GREEDY_DEFAULT_BAR`): keeps every scoring
    die (the keep using the most dice, ties: most points) and ends the turn once the turn
    total reaches BAR, hot dice included. The beginner the text warns about ("grabbing every
    scoring die"). In every preset but ``zilch`` the most-dice keep is also the
    highest-scoring one, so ``greedy:B`` plays like ``hold:B``; under ``zilch`` it reads
    1-1-1-1-2-2 as three pairs (1,500, six dice) where ``hold`` keeps the four 1s (2,000)."""

    def __init__(self, bar: int = GREEDY_DEFAULT_BAR):
        self.bar = bar
        self.name = f"greedy:{bar}" if bar != GREEDY_DEFAULT_BAR else "greedy"

    def _move(self, info, c, s):
        return greedy_move(info.keeps, c, s, self.bar, c.best_by_dice[info.dice])


class DiceNowAgent(_Heuristic):
    """``dicenow``: the computer player of the Dice.now text (the Dice.now rules, last section),
    decision function :func:`dicenow_move`.

    Readings where the text is ambiguous (each tested in tests/policies/test_agents.py):

    * Entry: before it is on the board it banks as soon as the turn total reaches the
      entry threshold (the bars apply "once on the board"), except that it still rolls hot
      dice.
    * Dice left means the dice it would roll next; the 300 bar covers 1, 2 and 3 dice.
    * Hot dice: always rolled, except when banking ends the game in its favour: on its
      final turn once it has beaten the leader (the final-turn rule is the more specific
      one) or under ``end: immediate`` once the target is reached (a rule the Dice.now
      game does not have). The weighing never prefers a smaller keep it would bank over
      setting all dice aside, below about 18,000 on the table.
    * The 600 bar: "its bar" is read as the 300 bar; the 1,000 and 2,500 bars are already
      higher and stay. "2,000 or more behind" compares banked scores (fixed for the turn)
      with the leader among the other players; "passed 7,000" means strictly more than
      7,000 banked by that leader.
    * Final turn (the final round is on and it did not trigger it): it banks as soon as
      its total beats the leader's, a tie is not enough; with more players still to play
      it does not try to beat what they might reach.
    * Keep choice: a keep it would bank is worth its turn total; one it would roll on from
      is worth ``T'(1 - bust) + mean`` of the dice it would roll (one roll ahead, from
      ``tables.odds()``). With six dice showing one 1 and one 5 it keeps the 1 and rolls
      five (318 against 270 for both); with two 1s it also keeps one 1 (318 against 313).
    * More than two players: "you" is the leader among the other players.
    """

    name = "dicenow"

    def _move(self, info, c, s):
        return dicenow_move(info.keeps, c, s)


class BreakEvenAgent(_Heuristic):
    """``breakeven``: the strategy section of the Dice.now text, decision function
    :func:`breakeven_move`: break-even running totals ``mean[n] / bust[n]`` computed from the
    ruleset's exact odds (37, 112, 312, 912, 2,926 and 16,492 under ``classic``), keep dice in
    play and weigh a die at what it adds to the next roll's mean, always roll hot dice,
    play the scoreboard late.

    Readings where the text is ambiguous (each tested):

    * "Get on the board, then change gears": before it is on the board it banks as soon as
      a keep that leaves dice reaches the entry threshold (unless the roll gives hot dice:
      those are rolled); the break-even table applies once it is on the board.
    * "Weigh 1s as 100 and a die": with six dice showing two 1s it keeps both and rolls four
      (200 + 144 beats 100 + 226), as the text says; this is where it parts from ``dicenow``.
    * "Past about 7,000": anyone's banked score strictly above 7,000. "Raise your banking
      threshold" when 2,000+ behind: a bust's loss counts half, so every break-even total
      doubles. "Ahead, tighten up": when 2,000+ ahead of every other player a bust counts
      double, so every break-even total halves (the text gives no margin for "ahead"; the
      2,000 of "behind" is used).
    * "The only time to decline [hot dice] is when banking wins the game": on its final turn
      once the total beats the leader, and under ``end: immediate`` at the target.
    * Final turn: bank as soon as the total beats the leader's (a tie is not enough), else roll.
    """

    name = "breakeven"

    def _move(self, info, c, s):
        return breakeven_move(info.keeps, c, s)


# ---------------------------------------------------------------------- spec factories
def _bar(name: str, arg: str | None, default: int) -> int:
    if arg is None:
        return default
    if not re.fullmatch(r"\d+", arg.strip()):
        raise AgentError(
            f"agent '{name}:{arg}': the bar must be a whole number of points >= 0, "
            f"e.g. '{name}:{default}' (or plain '{name}' for {default})"
        )
    return int(arg)


def _no_arg(name: str, arg: str | None) -> None:
    if arg:
        raise AgentError(f"agent {name!r} takes no parameter (got '{name}:{arg}'); write '{name}'")


def make_greedy(arg: str | None) -> GreedyAgent:
    return GreedyAgent(_bar("greedy", arg, GREEDY_DEFAULT_BAR))


def make_hold(arg: str | None) -> HoldAgent:
    return HoldAgent(_bar("hold", arg, HOLD_DEFAULT))


def make_dicenow(arg: str | None) -> DiceNowAgent:
    _no_arg("dicenow", arg)
    return DiceNowAgent()


def make_breakeven(arg: str | None) -> BreakEvenAgent:
    _no_arg("breakeven", arg)
    return BreakEvenAgent()
