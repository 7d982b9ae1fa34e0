"""Every decision of a game scored: the value of the move made, of the best move, and what it gave away.

A :class:`Scorer` values every legal move of a decision, by the strongest measure that
covers the game:

* ``exact`` (2 players, rulesets the game solver covers): W*, the mover's win probability
  under optimal play by both from the position after the move, from the game solution
  (:class:`tenk_env.solve.regret.TurnTables`, the tables ``tenk analyze`` scores with), so
  a decision's regret here is the regret ``tenk analyze`` gives the same move;
* ``best_response`` (3 and 4 players, one seat, when the exact best response to the
  opponents in their seats is already solved): the seat's win probability against those
  opponents when it plays on perfectly (``br:BOT1,BOT2``'s tables; rolling on past the
  table's cap is valued as banking there, an upper bound, the solver having proved
  banking best);
* ``points`` (any ruleset the turn solver covers): turn-level advice, the expected points
  banked this turn (``maxscore``'s tables), blind to the scores;
* ``off``: nothing covers it, and the scorer's ``note`` says why.

:class:`Annotator` reads a game's events as they come (a game in progress or a whole
record) and scores the decisions of the seats it is asked to: the browser app's live
feedback and its analysis of saved records are the same code.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

from tenk_env.evaluation.analysis import seat_baselines
from tenk_env.game import Game, Phase
from tenk_env.policies.base import AgentError
from tenk_env.policies.exact import BestResponseAgent, best_response_n
from tenk_env.policies.optimal import MaxScoreAgent, OptimalAgent, game_solution
from tenk_env.rules import Ruleset
from tenk_env.solve.game import check_game_rules
from tenk_env.solve.multi import check_multi_rules
from tenk_env.solve.regret import REGRET_TOL, regret_in
from tenk_env.solve.spec import SolverError
from tenk_env.solve.turn import solve_turn

__all__ = [
    "Scorer",
    "exact_scorer",
    "points_scorer",
    "best_response_scorer",
    "scorer_for",
    "Annotator",
    "summarise",
    "MODES",
]

#: what a scorer's values are: a win probability, or expected points this turn
MODES = {"exact": "win", "best_response": "win", "points": "points", "off": None}
#: expected-points differences below this are rounding, not a mistake
POINTS_TOL = 1e-9


class Scorer:
    """Values the legal moves of a decision. ``mode``: see the module docstring; ``unit``:
    ``"win"`` or ``"points"``; ``note``: what the values are, or why there are none;
    ``seats``: the seats whose decisions it values (None: every seat)."""

    def __init__(self, mode: str, note: str, values=None, start_value=None, seats: set[int] | None = None):
        self.mode, self.note, self.seats = mode, note, seats
        self.unit = MODES[mode]
        self._values = values
        self._start_value = start_value

    def covers(self, seat: int) -> bool:
        return self._values is not None and (self.seats is None or seat in self.seats)

    def rows(self, game: Game):
        """``(keep, roll on, end the turn)`` value rows of every legal move now."""
        return self._values(game)

    def start_value(self, seat: int) -> float | None:
        """The seat's win probability at the start under perfect play (None in points mode)."""
        return None if self._start_value is None else self._start_value(seat)

    def feedback(self) -> dict[str, Any]:
        return {"mode": self.mode, "unit": self.unit, "note": self.note}


def off_scorer(note: str) -> Scorer:
    return Scorer("off", note)


def exact_scorer(rules: Ruleset) -> Scorer:
    """W* from the 2-player game solution (solved now unless cached: seconds at a small
    target, 1-2 minutes on classic)."""
    sol = game_solution(rules)
    opt = OptimalAgent()
    base = seat_baselines(sol, rules)
    return Scorer(
        "exact",
        "exact win probabilities: W* of each move under perfect play by both players from the position after it",
        values=lambda g: opt.tables(g).values(g),
        start_value=lambda s: base[s],
    )


def points_scorer(rules: Ruleset, why: str = "") -> Scorer:
    """Expected points banked this turn (turn-level advice, the scores ignored)."""
    try:
        solve_turn(rules)
    except SolverError as e:
        return off_scorer(f"{why}no feedback: {e}")
    agent = MaxScoreAgent()
    return Scorer(
        "points",
        f"{why}turn-level advice: the expected points each move banks this turn "
        "(the scores and the final round ignored)",
        values=agent.values,
    )


def best_response_scorer(rules: Ruleset, seat: int, opponents: list[str]) -> Scorer | None:
    """The seat's win probability against ``opponents`` (the other seats' agent specs in seat
    order) from their exact best response, when it is solved and cached; else None."""
    after = play_order(seat, opponents)
    try:
        br = best_response_n(rules, after, cached_only=True)
    except (SolverError, AgentError):
        return None
    if br is None:
        return None
    agent = BestResponseAgent(",".join(after))
    first = br.p_seat[seat] if rules.turn_order == "seat" else br.p
    return Scorer(
        "best_response",
        f"exact win probabilities against {in_seats(seat, opponents)}, "
        f"playing on as their best response ({br.name}) would",
        values=agent.values,
        start_value=lambda s: float(first),
        seats={seat},
    )


def play_order(seat: int, opponents: list[str]) -> list[str]:
    """``opponents`` (the other seats in seat order) in the order they play after ``seat``: the
    order the best response to them is solved and named in."""
    n = len(opponents) + 1
    seated = [*opponents[:seat], None, *opponents[seat:]]
    return [seated[(seat + k) % n] for k in range(1, n)]


def in_seats(seat: int, opponents: list[str]) -> str:
    """The bots with their seats (1-based, as the page shows them), in seat order:
    ``dicenow in seat 1 and maxscore in seat 3``."""
    named = [f"{o} in seat {p + 1 + (p >= seat)}" for p, o in enumerate(opponents)]
    return ", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else named[0]


def scorer_for(
    rules: Ruleset, n_players: int, *, seat: int | None = None, opponents: list[str] | None = None, solve: bool = True
) -> Scorer:
    """The strongest scorer that covers the game (see the module docstring). At 2 players
    the game solution is solved if it is not cached, unless ``solve`` is false (then None
    means: covered, not solved yet). ``seat`` and ``opponents`` (specs in seat order, the
    seat's own left out) ask for the best response at 3 and 4 players."""
    if n_players == 2:
        try:
            check_game_rules(rules, 2)
        except SolverError as e:
            return points_scorer(rules, f"no exact feedback ({e}); ")
        return exact_scorer(rules) if solve else None
    why = ""
    if seat is not None and opponents is not None:
        try:
            check_multi_rules(rules, n_players)
            br = best_response_scorer(rules, seat, opponents)
            if br is not None:
                return br
            # the solver takes the bots in the order they play after this seat, not in seat order
            why = (
                f"no exact feedback (the best response to {in_seats(seat, opponents)} is not solved: "
                f"`tenk solve best-response {rules.name} {' '.join(play_order(seat, opponents))}` solves it, "
                f"the bots in the order they play after seat {seat + 1}); "
            )
        except SolverError as e:
            why = f"no exact feedback ({e}); "
    else:
        why = "no exact feedback at 3-4 players without the opponents' policies; "
    return points_scorer(rules, why)


def _move(keep, end: bool, value: float | None) -> dict[str, Any]:
    return {"keep": list(keep.dice), "points": int(keep.points), "end": bool(end), "value": value}


def move_rows(rows) -> list[dict[str, Any]]:
    """Value rows as JSON: ``{"keep", "points", "roll", "end"}`` (None: the move is illegal)."""
    return [{"keep": list(k.dice), "points": int(k.points), "roll": rv, "end": ev} for k, rv, ev in rows]


def score_decision(scorer: Scorer, game: Game, keep, end: bool) -> dict[str, Any]:
    """One decision scored (the game stands at it, the move not yet made)."""
    rows = scorer.rows(game)
    faces = sorted(keep)
    made = next((k for k, _, _ in rows if sorted(k.dice) == faces), None)
    if made is None:
        raise ValueError(f"keep {faces} is not a keep of the roll {list(game.dice)}")
    # points are not probabilities: the solver's tolerance is not the measure of a mistake there
    m = regret_in(rows, game, made, end, REGRET_TOL if scorer.unit == "win" else POINTS_TOL)
    p = game.current
    return {
        "player": p,
        "turn": game.turn,
        "position": {
            "scores": list(game.scores),
            "on_board": list(game.on_board),
            "turn_total": game.turn_total,
            "dice": list(game.dice),
            "dice_left": game.dice_left,
            "rolls": game.rolls,
            "final_turn": bool(game.final_round and game.trigger != p),
        },
        "move": _move(m.keep, m.end, m.value),
        "best": _move(m.best_keep, m.best_end, m.best_value),
        "regret": float(m.regret),
        "moves": move_rows(rows),
    }


class Annotator:
    """Scores the decisions of a game from its events, as they come.

    ``feed(events)`` takes the events after those already fed (the first call starts with
    the ``start`` event) and returns the decisions it scored, in order, each a dict:
    ``n`` (its number among the scored), ``event`` (the index of the roll it answered),
    ``player``, ``turn``, ``position``, ``move`` and ``best`` (keep, points, end, value),
    ``regret`` (best minus made; 0 below the solver's tolerance) and ``moves`` (every
    legal move's value); ``seats`` limits it to those seats. Piggyback choices are not scored (no solver models them). The
    events must replay (:func:`tenk_env.records.replay` checks a record first)."""

    def __init__(self, rules: Ruleset, n_players: int, scorer: Scorer, seats: set[int] | None = None):
        self.scorer, self.seats = scorer, seats
        self.game = Game(rules, n_players, record=False)
        self.decisions: list[dict[str, Any]] = []
        self.chart: list[dict[str, Any]] = []
        #: events fed so far
        self.fed = 0

    def feed(self, events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        new: list[dict[str, Any]] = []
        g = self.game
        for e in events:
            i = self.fed
            self.fed += 1
            kind = e["type"]
            if kind in ("roll", "order_roll"):
                g.roll(e["dice"])
            elif kind == "piggyback":
                g.piggyback(e["take"])
            elif kind == "keep":
                p = g.current
                if g.phase == Phase.DECIDE and self.scorer.covers(p) and (self.seats is None or p in self.seats):
                    d = score_decision(self.scorer, g, e["dice"], e["end_turn"])
                    d["n"], d["event"] = len(self.decisions), i - 1
                    if "said" in e:
                        d["said"] = e["said"]
                    self.decisions.append(d)
                    new.append(d)
                    if self.scorer.unit == "win":
                        self.chart.append(
                            {"event": i - 1, "player": d["player"], "turn": d["turn"], "w": d["best"]["value"]}
                        )
                g.act(e["dice"], e["end_turn"])
        return new


def summarise(decisions: list[dict[str, Any]], scorer: Scorer, seat: int, top: int = 5) -> dict[str, Any]:
    """One seat's game in numbers: its total regret, decisions scored, its win probability at
    the start under perfect play and what its regret leaves of it (its implied win rate
    against perfect play: the performance-difference identity of :mod:`tenk_env.evaluation.analysis`,
    here for one game), and its costliest decisions."""
    own = [d for d in decisions if d["player"] == seat]
    regret = float(sum(d["regret"] for d in own))
    start = scorer.start_value(seat) if own or scorer.covers(seat) else None
    costly = heapq.nlargest(
        top, (d for d in own if d["regret"] > (REGRET_TOL if scorer.unit == "win" else 0)), key=lambda d: d["regret"]
    )
    # one game's estimate of the win rate against perfect play is unbiased but noisy, and
    # can fall outside [0, 1]: it is reported clipped
    implied = None if start is None else min(1.0, max(0.0, start - regret))
    return {
        "player": seat,
        "regret": regret,
        "decisions": len(own),
        "start_value": start,
        "implied_win": implied,
        "costliest": costly,
    }
