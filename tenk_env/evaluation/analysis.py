"""Regret analysis: how much win probability an agent gives away against perfect play, and where.

:func:`analyse` plays seat-balanced duplicate games of an agent against ``optimal`` (the
deals of :func:`tenk_env.evaluation.match.play_match`: deal ``d`` has dice key ``deal_key(seed, d)`` and
is played once with the agent in each seat) and scores each of the agent's decisions with
its exact regret, W*(best legal move) - W*(move made), where W* is the win probability
under optimal play by both from the position after the move
(:mod:`tenk_env.solve.regret`; exact also where the agent rolls on past the solver's
in-turn cap).

Why regret: against ``optimal`` the performance-difference identity holds exactly, game by
game in expectation,

    P(agent wins in seat s) = W*(start, seat s) - E[sum of the agent's regrets in a game],

(W* at the start is optimal's own win probability in that seat), so the mean regret per
game estimates the agent's loss against perfect play without the dice luck that a win/loss
count carries: its interval is several times narrower for the same games. Deals are the
independent unit (the two games of a deal share their dice), so every interval here is a
t-interval over per-deal sums, given only where that is honest (:func:`_interval`): with at
least :data:`MIN_DEALS` deals, and for regret with at least :data:`MIN_MISTAKE_DEALS` of them
holding a mistake; otherwise the interval is ``(nan, nan)`` and the report says why.

Outputs (:func:`write_outputs`, ``tenk analyze``): ``report.json`` (:class:`AnalysisReport`),
``breakdown.csv`` (:func:`breakdown`), ``atlas.png`` (:func:`plot_atlas`), ``mistakes.jsonl``
(the costliest decisions) and ``mistakes/NN.jsonl``: for each, the game record up to the
decision (:mod:`tenk_env.records` format), which :func:`tenk_env.records.replay` loads into
a :class:`~tenk_env.game.Game` standing at that decision. The records come from playing
the mistake's game again (a deal's dice and the agent's generator are functions of the
deal's key), so an agent must decide the same way each time it sees the same game; a
mistake whose game does not come out the same is kept with ``record: None``.
"""

from __future__ import annotations

import heapq
import json
import math
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.evaluation.match import (
    MEMORY_BUDGET,
    ProgressLine,
    agent_label,
    deal_keys,
    default_workers,
    run_pool,
    seatings,
    wilson,
)
from tenk_env.evaluation.play import KeyedDice, play_game
from tenk_env.game import Game
from tenk_env.io import atomic_write_bytes, atomic_write_text
from tenk_env.policies.base import AgentSpec, Policy, make_agent
from tenk_env.policies.optimal import OptimalAgent, game_solution, solution_source
from tenk_env.records import save_jsonl
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import cache_dir
from tenk_env.solve.game import check_game_rules
from tenk_env.solve.regret import regret_of
from tenk_env.units import REGRET_COLUMN, REGRET_HEADER, pp, pp_interval, regret_text

__all__ = [
    "AnalysisReport",
    "answers_text",
    "Analysis",
    "analyse",
    "write_outputs",
    "breakdown",
    "plot_atlas",
    "check_out_dir",
    "default_out_dir",
    "seat_baselines",
    "DECISION_FIELDS",
    "KINDS",
    "CHUNK_DEALS",
    "agent_stats",
    "sample_sizes",
    "SIZED_HALF_WIDTH",
    "Z95",
]

#: deals per task sent to a worker (results never depend on it: every deal has its own key)
CHUNK_DEALS = 25

#: columns of the per-decision table (:attr:`Analysis.decisions`) and their types
DECISION_FIELDS = (
    "deal",
    "seat",
    "own",
    "opp",
    "own_on",
    "opp_on",
    "total",
    "dice",
    "rolls",
    "final_turn",
    "end",
    "best_end",
    "same_keep",
    "value",
    "best_value",
    "regret",
)
DECISION_DTYPES = (
    np.int64,
    np.int8,
    np.int64,
    np.int64,
    bool,
    bool,
    np.int64,
    np.int8,
    np.int16,
    bool,
    bool,
    bool,
    bool,
    np.float64,
    np.float64,
    np.float64,
)
#: memory the analysis keeps per decision of the agent: a row of the table, twice at the end
#: (the workers' chunks, then their concatenation)
DECISION_BYTES = 2 * sum(np.dtype(t).itemsize for t in DECISION_DTYPES)
#: and per game: deal, seat, regret, win, twice
GAME_BYTES = 2 * (8 + 1 + 8 + 8)
#: kinds of mistake (a decision with regret > 0)
KINDS = ("banked, rolling was better", "rolled on, banking was better", "set aside the wrong dice")


# ----------------------------------------------------------------------------- statistics
#: deals needed before any interval is given: the t-interval rests on the normal
#: approximation of a mean, which a handful of deals does not support (3 deals without a
#: mistake gave a zero-width interval around a win rate 1.7 points off the exact one)
MIN_DEALS = 30
#: deals with some regret needed before a regret interval is given. Regret is zero in most
#: decisions and large in a few, so the per-deal sums are skewed: while mistakes are rare in
#: the sample, the spread of the sums (and with it the t-interval) says little about how much
#: the mistakes not yet seen would add, and none at all when every deal is mistake-free
MIN_MISTAKE_DEALS = 10
#: the value of an interval that is not given (one object, so equal reports compare equal)
NAN = math.nan
NO_INTERVAL = (NAN, NAN)
#: the half-width of the interval that :func:`sample_sizes` sizes samples for: one percentage point
SIZED_HALF_WIDTH = 0.01
#: the standard normal's 97.5% quantile: a 95% interval is this many standard errors either way
Z95 = 1.959963984540054


def sample_sizes(
    r_deal: np.ndarray, w_deal: np.ndarray, decisions: int, half_width: float = SIZED_HALF_WIDTH
) -> dict[str, float]:
    """The games that would give the win rate's 95% interval a half-width of ``half_width``:
    by regret (the per-deal mean regrets ``r_deal``: the implied win rate's interval) and by
    outcome (the per-deal win shares ``w_deal``: the empirical one), each from its measured
    spread, since a t-interval's width falls as one over the square root of the deals; and the
    decisions of the agent that the games by regret hold, at the measured decisions per game.
    Measured, not assumed: the ratio of the two is the squared ratio of the spreads."""
    deals = len(r_deal)
    by_regret = 2 * math.ceil((Z95 * float(np.std(r_deal, ddof=1)) / half_width) ** 2)
    by_outcome = 2 * math.ceil((Z95 * float(np.std(w_deal, ddof=1)) / half_width) ** 2)
    return {
        "half_width": half_width,
        "games_by_regret": by_regret,
        "decisions_by_regret": math.ceil(by_regret * decisions / (2 * deals)),
        "games_by_outcome": by_outcome,
    }


def interval_text(ci: tuple[float, float], fmt: str = "{:.4f}", note: str | None = None) -> str:
    """``[low, high]`` in ``fmt``, or why there is none (an interval the sample cannot give
    honestly, :data:`NO_INTERVAL`), for the commands and logs that print a regret figure."""
    if math.isnan(ci[0]):
        return f"({note})" if note else "(no interval)"
    return f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]"


def _interval(
    x: np.ndarray,
    low: float,
    high: float,
    mistakes: int | None = None,
    what: str = "with a mistake",
    confidence: float = 0.95,
) -> tuple[tuple[float, float], str | None]:
    """95% t-interval for the mean of the independent values ``x``, cut to the range
    [``low``, ``high``] the mean is known to lie in, and None; or :data:`NO_INTERVAL` and
    the reason when it would not be honest.

    Method: Student's t over the values (deals, or one seat's game of each deal), which
    needs enough of them for the mean to be near normal, hence :data:`MIN_DEALS`. A regret
    is never negative, and its mean per game is optimal's win rate less the agent's, so the
    mean lies in [0, optimal's win rate]; a win share's in [0, 1]. The interval is cut to
    that range (a true value inside the t-interval is inside the cut one too, so the
    coverage is kept), and the implied win rate's interval, optimal's win rate less the
    regret's, lies in [0, optimal's win rate] with it. For regret, ``mistakes`` counts the
    values above zero (deals, or a seat's games), and fewer than :data:`MIN_MISTAKE_DEALS`
    give no interval: the sums are too skewed for the t-interval then (a sample with no
    mistake at all would give a zero-width interval at 0 whatever the agent's true regret).
    The win shares of deals are alike: most deals are split 1-1 with optimal, and the
    others (``mistakes`` of them, ``what`` names them) carry the information.
    """
    n = len(x)
    if n < MIN_DEALS:
        return NO_INTERVAL, f"interval needs at least {MIN_DEALS} deals, have {n}"
    if mistakes is not None and mistakes < MIN_MISTAKE_DEALS:
        return NO_INTERVAL, f"interval needs at least {MIN_MISTAKE_DEALS} deals {what}, have {mistakes} of {n}"
    from scipy.stats import t

    m = float(np.mean(x))
    se = float(np.std(x, ddof=1)) / math.sqrt(n)
    h = float(t.ppf(0.5 + confidence / 2, n - 1)) * se
    return (max(m - h, low), min(m + h, high)), None


def _implied(base: float, ci: tuple[float, float]) -> tuple[float, float]:
    """The implied win rate's interval from the regret's (base - regret), absent with it."""
    return NO_INTERVAL if ci is NO_INTERVAL else (base - ci[1], base - ci[0])


def seat_baselines(sol, rules: Ruleset) -> tuple[float, float]:
    """W* of a player at the start of a game, in seat 0 and seat 1 (seat 1 holds the komi),
    under optimal play by both: what the agent would win against ``optimal`` if it played
    perfectly. Under ``turn_order: highest_die`` either seat moves first with chance 1/2."""
    f, k = sol.start_flag, rules.komi // sol.unit
    first0 = float(sol.W[f, f, 0, k])  # seat 0 moves first, seat 1 holds the komi
    if rules.turn_order != "highest_die":
        return first0, 1.0 - first0
    first1 = float(sol.W[f, f, k, 0])  # seat 1 (with the komi) moves first
    return 0.5 * (first0 + 1.0 - first1), 0.5 * (1.0 - first0 + first1)


def answers_text(stats: dict[str, float] | None, *, tokens: bool = False) -> str:
    """How a language model answered (its agent's counts, summed over runs or not), in words;
    empty where nothing was counted. ``tokens`` adds the tokens sent and the seconds waited."""
    if not stats or not stats.get("decisions"):
        return ""
    n = stats["decisions"]
    # a rerun answers from the cache: its calls alone would read as a model that was seldom asked
    cached = f" ({stats['cached']:,.0f} answers from the cache)" if stats.get("cached") else ""
    text = (
        f"{stats['bad_answers']:,.0f} bad answers in {n:,.0f} decisions ({stats['bad_answers'] / n:.0%}), "
        f"{stats['fallbacks']:,.0f} played by the fallback, {stats['calls']:,.0f} calls{cached}"
    )
    if tokens:
        text += (
            f", {stats.get('prompt_tokens', 0):,.0f} + {stats.get('completion_tokens', 0):,.0f} tokens, "
            f"{stats.get('seconds', 0):,.0f} s waiting"
        )
    return text


@dataclass
class AnalysisReport:
    """What ``tenk analyze`` reports (``report.json``). Win probabilities and regrets are
    fractions (0.01 = one percentage point); intervals are 95%, over deals.

    * ``regret_per_game``: mean over games of the agent's summed regret, the win
      probability it gives away against perfect play, cut to [0, optimal's win rate] where
      dice luck on a few games takes it past; ``regret_ci`` its t-interval over the deals'
      sums (two games each), cut to the same range. ``regret_per_decision``: the mean
      over decisions.
    * ``optimal_seat``: optimal's own win probability in seat 0 / seat 1 against itself
      (the baseline of the identity in :mod:`tenk_env.evaluation.analysis`).
    * ``implied_win_rate`` (``implied_ci``): the agent's win rate against ``optimal``
      implied by its regret, seat-balanced: mean(optimal_seat) - regret_per_game.
      ``implied_seat`` / ``implied_seat_ci``: the same seat by seat.
    * ``empirical_win_rate``: the agent's share of the wins in the same games (a shared
      win counts half), with a t-interval over deals (``empirical_ci``) and, for
      comparison with ``tenk evaluate``, Wilson's interval over games as if they were
      independent (``empirical_wilson``); ``empirical_seat`` / ``empirical_seat_ci`` by
      seat (Wilson's: one game per deal in a seat, so independent games).
    * ``width_ratio``: width of ``empirical_ci`` over width of ``implied_ci``: how many
      times narrower the regret-based interval is (None when either is not given or has no
      width, as for an agent that never wins).
    * ``by_kind``: regret per game of each kind of mistake (:data:`KINDS`).
    * ``sample_sizes``: how many games (and decisions of the agent) would pin its win rate
      against ``optimal`` to within :data:`SIZED_HALF_WIDTH` (95%) by regret, and how many
      games by outcome alone (:func:`sample_sizes`); None where the intervals are not given or
      a sample shows no spread (an agent that never wins).
    * ``agent_stats``: what an agent that counts its costs reports of them, summed over the
      analysis (an ``llm:`` agent: decisions, calls, cached answers, tokens, seconds, bad
      answers, fallbacks; :class:`tenk_env.policies.llm.LLMStats`), or None.
    * ``interval_notes``: why an interval is not given (its value is ``(nan, nan)``): too
      few deals, or too few with a mistake (:func:`_interval`). Keys: ``regret`` (also
      the implied win rate's), ``regret seat 1`` / ``regret seat 2`` (the implied seat
      intervals), ``empirical`` (``empirical_ci``); absent when given.
    """

    agent: str
    rules: str
    rules_hash: str
    games: int
    deals: int
    seed: int
    decisions: int  #: the agent's decisions scored
    mistakes: int  #: decisions with regret > 0
    regret_per_game: float
    regret_ci: tuple[float, float]
    regret_per_decision: float
    regret_seat: list[float]  #: mean regret per game with the agent in seat 0 / 1
    optimal_seat: list[float]
    implied_win_rate: float
    implied_ci: tuple[float, float]
    implied_seat: list[float]
    implied_seat_ci: list[tuple[float, float]]
    empirical_win_rate: float
    empirical_ci: tuple[float, float]
    empirical_wilson: tuple[float, float]
    empirical_seat: list[float]
    empirical_seat_ci: list[tuple[float, float]]
    width_ratio: float | None
    by_kind: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    workers: int = 1
    #: a ``ppo:PATH`` agent: the SHA-256 (16 hex digits) of the checkpoint's bytes, so a
    #: report is tied to the exact weights it measured (None for other agents)
    agent_sha256: str | None = None
    interval_notes: dict[str, str] = field(default_factory=dict)
    agent_stats: dict[str, float] | None = None
    sample_sizes: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def ci_text(self, ci: tuple[float, float], key: str) -> str:
        """``[lo, hi]`` in percentage points, or why the interval ``key`` is not given."""
        return pp_interval(ci, note=self.interval_notes.get(key, "no interval"))

    def __str__(self) -> str:
        ratio = f"; interval {self.width_ratio:.1f}x narrower" if self.width_ratio is not None else ""
        answers = answers_text(self.agent_stats, tokens=True)
        if answers:
            ratio += f"; {answers}"
        return (
            f"{self.agent} on {self.rules}: {self.games:,} games ({self.deals:,} deals), "
            f"regret {regret_text(self.regret_per_game, self.regret_ci, note=self.interval_notes.get('regret'))}; "
            f"implied win rate vs optimal {pp(self.implied_win_rate)}% {self.ci_text(self.implied_ci, 'regret')}, "
            f"empirical {pp(self.empirical_win_rate)}% {self.ci_text(self.empirical_ci, 'empirical')}{ratio}"
        )


@dataclass
class Analysis:
    """Everything :func:`analyse` measured: the report, the per-decision table (columns
    :data:`DECISION_FIELDS`, one row per decision of the agent), per-game arrays and the
    costliest mistakes (dicts, see :func:`write_outputs`)."""

    report: AnalysisReport
    rules: Ruleset
    decisions: dict[str, np.ndarray]
    game_deal: np.ndarray  #: deal of each game
    game_seat: np.ndarray  #: the agent's seat in each game
    game_regret: np.ndarray  #: the agent's summed regret in each game
    game_win: np.ndarray  #: the agent's share of the win in each game
    mistakes: list[dict[str, Any]]


# ----------------------------------------------------------------------------- playing and scoring
class _Scored:
    """Plays the analysed agent's seat: asks the agent for its move, scores it, plays it."""

    def __init__(self, agent: Policy, opt: OptimalAgent, top: int):
        self.agent, self.opt, self.top = agent, opt, top
        self.name = getattr(agent, "name", "agent")
        self.rows: list[tuple] = []
        self.heap: list[tuple] = []  # (regret, tiebreak, detail) of the costliest decisions
        self.deal = self.seating = self.m = 0
        self.game_regret = 0.0

    def start(self, deal: int, seating: int) -> None:
        self.deal, self.seating, self.m, self.game_regret = deal, seating, 0, 0.0

    def check(self, rules: Ruleset, n_players: int) -> None:
        self.agent.check(rules, n_players)

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        return self.agent.piggyback(game, rng)

    def decide(self, game: Game, rng: np.random.Generator):
        keep, end = self.agent.decide(game, rng)
        t = self.opt.tables(game)
        m = regret_of(t, game, keep, end)
        p = game.current
        o = 1 - p
        self.rows.append(
            (
                self.deal,
                p,
                game.scores[p],
                game.scores[o],
                game.on_board[p],
                game.on_board[o],
                game.turn_total,
                game.dice_left,
                game.rolls,
                game.final_round and game.trigger != p,
                m.end,
                m.best_end,
                m.keep.counts == m.best_keep.counts,
                m.value,
                m.best_value,
                m.regret,
            )
        )
        self.game_regret += m.regret
        if self.top and m.regret > 0 and (len(self.heap) < self.top or m.regret > self.heap[0][0]):
            item = (m.regret, (self.deal, self.seating, self.m), self._detail(game, t, m))
            if len(self.heap) < self.top:
                heapq.heappush(self.heap, item)
            else:
                heapq.heapreplace(self.heap, item)
        self.m += 1
        return keep, end

    def _detail(self, game: Game, t, m) -> dict[str, Any]:
        p = game.current
        # what the agent said of its move (an llm: agent's answers), asked only of the decisions kept
        explain = getattr(self.agent, "explain", None)
        move = lambda k, e, v: {"keep": list(k.dice), "points": k.points, "end": bool(e), "value": v}  # noqa: E731
        return {
            "regret": m.regret,
            "deal": self.deal,
            "seating": self.seating,
            "agent_seat": p,
            "decision": self.m,
            "position": {
                "scores": list(game.scores),
                "on_board": list(game.on_board),
                "player": p,
                "turn": game.turn,
                "turn_total": game.turn_total,
                "dice": list(game.dice),
                "dice_left": game.dice_left,
                "rolls": game.rolls,
                "max_rolls": game.max_rolls,
                "final_round": game.final_round,
                "final_turn": bool(game.final_round and game.trigger != p),
            },
            "move": move(m.keep, m.end, m.value),
            "best": move(m.best_keep, m.best_end, m.best_value),
            "moves": [
                {"keep": list(k.dice), "points": k.points, "roll": rv, "end": ev} for k, rv, ev in t.values(game)
            ],
            "said": explain() if explain is not None else None,
        }


_W: dict[str, Any] = {}


def _init_worker(agent: str | Policy, top: int) -> None:
    _W["agent"] = make_agent(agent)
    _W["top"] = top
    _optimal()


def _optimal() -> OptimalAgent:
    # one per process: its table cache (keyed by ruleset and state) serves every analysis
    if "opt" not in _W:
        _W["opt"] = OptimalAgent()
    return _W["opt"]


def _work(task: dict[str, Any]) -> dict[str, Any]:
    rules, seed, start, stop = task["rules"], task["seed"], task["start"], task["stop"]
    opt = _W["opt"]
    before = agent_stats(_W["agent"])
    scored = _Scored(_W["agent"], opt, _W["top"])
    games = []
    # the rows become arrays here: Python tuples would take several times the memory
    for d, key in zip(range(start, stop), deal_keys(seed, np.arange(start, stop)).tolist()):
        for s, order in enumerate(seatings(2)):
            # order[i]: who sits in seat i (0 = the agent), as tenk_env.evaluation.match.play_deals seats them
            scored.start(d, s)
            players = [scored if i == 0 else opt for i in order]
            game = play_game(rules, players, KeyedDice(key), record=False)
            seat = order.index(0)
            win = 1.0 / len(game.winners) if seat in game.winners else 0.0
            games.append((d, seat, scored.game_regret, win))
    cols = list(zip(*scored.rows)) if scored.rows else [()] * len(DECISION_FIELDS)
    g = list(zip(*games))
    dec = {f: np.asarray(c, t) for f, c, t in zip(DECISION_FIELDS, cols, DECISION_DTYPES)}
    per_game = {
        k: np.asarray(c, t)
        for k, c, t in zip(("deal", "seat", "regret", "win"), g, (np.int64, np.int8, np.float64, np.float64))
    }
    after = agent_stats(_W["agent"])
    used = {k: after[k] - before.get(k, 0) for k in after} if after is not None and before is not None else None
    return {"start": start, "decisions": dec, "games": per_game, "heap": scored.heap, "stats": used}


def agent_stats(agent: Policy) -> dict[str, float] | None:
    """What an agent that counts its costs (``stats.as_dict()``, an ``llm:`` agent) has counted so far."""
    stats = getattr(agent, "stats", None)
    return dict(stats.as_dict()) if stats is not None and hasattr(stats, "as_dict") else None


def _run(tasks: list[dict[str, Any]], agent: str | Policy, top: int, workers: int, advance) -> list[dict]:
    out: list[dict] = []

    def done(r: dict) -> None:
        out.append(r)
        advance(len(r["games"]["deal"]))

    run_pool(tasks, _work, _init_worker, (agent, top), [agent], workers, done)
    return out


# ----------------------------------------------------------------------------- entry point
def decisions_per_game(rules: Ruleset) -> int:
    """An upper estimate of the agent's decisions in a game under ``rules``, to bound the
    memory before any work: the bots and trained agents take 5-7 at target 1,000 and 9-11
    at 2,000, growing with the target; this allows 2-3 times that."""
    return max(20, rules.target // 100)


def max_games(rules: Ruleset) -> int:
    """The most games one analysis under ``rules`` may play: what the per-decision table of
    :func:`decisions_per_game` decisions a game fits in :data:`tenk_env.evaluation.match.MEMORY_BUDGET`."""
    return 2 * (MEMORY_BUDGET // (decisions_per_game(rules) * DECISION_BYTES + GAME_BYTES) // 2)


def _name(what: str, value: Any) -> str:
    # a flag reads "--games 5,000", a parameter "games = 5000"
    if what.startswith("-"):
        return f"{what} {value:,}" if isinstance(value, int) and not isinstance(value, bool) else f"{what} {value}"
    return f"{what} = {value!r}"


def check_games(games: Any, rules: Ruleset, what: str = "games") -> int:
    """``games`` as an int, or a ValueError naming ``what`` (a parameter or a flag): fewer
    than 2 (one deal played in both seats), or more than :func:`max_games` allows."""
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 2:
        raise ValueError(f"{_name(what, games)}: the analysis needs at least 2 games (one deal played in both seats)")
    games = int(games)
    most = max_games(rules)
    if games > most:
        gb = games * (decisions_per_game(rules) * DECISION_BYTES + GAME_BYTES) / 1e9
        raise ValueError(
            f"{_name(what, games)}: the analysis keeps about {DECISION_BYTES} bytes per decision "
            f"of the agent in memory, up to about {decisions_per_game(rules)} decisions a game under "
            f"{rules.name!r}: ~{gb:,.{1 if gb < 10 else 0}f} GB for this many games; give at most "
            f"{most:,} games (a {MEMORY_BUDGET >> 30} GiB budget)"
        )
    return games


def check_analysis(
    agent: str | Policy, rules: Ruleset, games: int, workers: int, top: int, *, names: dict[str, str] | None = None
) -> Policy:
    """Every input checked before any work, each failure with its own message. ``names``:
    how to call ``games``, ``workers``, ``top`` in the messages (a command's flags)."""
    names = {"games": "games", "workers": "workers", "top": "top", **(names or {})}
    check_game_rules(rules, 2)
    check_games(games, rules, names["games"])
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 0:
        raise ValueError(f"{_name(names['workers'], workers)}: give a number of processes >= 1 (0: the default)")
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 0:
        raise ValueError(f"{_name(names['top'], top)}: give how many of the costliest mistakes to keep (>= 0)")
    a = make_agent(agent)
    if getattr(a, "name", None) == "human" and not (sys.stdin and sys.stdin.isatty()):
        raise ValueError(
            "agent 'human' plays at a terminal, and standard input is not one; run the analysis "
            "of 'human' in a terminal, or analyse a bot"
        )
    a.check(rules, 2)
    return a


def solve_notice(rules: Ruleset) -> str | None:
    """A line to print before the analysis solves ``rules``' game (long, silent, once), or
    None when the solution is in memory or in the cache already."""
    if solution_source(rules) != "solve":
        return None
    return (
        f"solving the game for {rules.name!r} (seconds at a small target, a few minutes for classic; once: "
        f"cached in {cache_dir()})"
    )


def analyse(
    agent: str | AgentSpec | Policy,
    rules: Ruleset | str = "classic",
    games: int = 1000,
    seed: int = 0,
    *,
    workers: int = 1,
    top: int = 20,
    progress: bool = False,
    say=None,
) -> Analysis:
    """Score every decision of ``agent`` in ``games`` (rounded up to even) seat-balanced
    duplicate games against ``optimal`` under ``rules`` (2 players, a ruleset the game
    solver covers). ``top``: how many of the costliest mistakes to keep with their game
    record prefix. The result depends on (agent, rules, games, seed) only, not on
    ``workers``. The game solution is solved on first use if not cached (minutes);
    ``say(line)``, if given, is told so first (:func:`solve_notice`). ``games`` is bounded
    by the memory it would take (:func:`max_games`). ``human`` plays in this process."""
    rules = load_ruleset(rules)
    if isinstance(agent, AgentSpec):
        agent = agent.text
    scored_agent = check_analysis(agent, rules, games, workers, top)
    # the file's key as the agent was built from it (a Policy object has none)
    sha = AgentSpec.parse(agent).sha256 if isinstance(agent, str) else None
    workers = 1 if getattr(scored_agent, "name", None) == "human" else (int(workers) or default_workers())
    deals = -(-int(games) // 2)
    if say is not None and (note := solve_notice(rules)):
        say(note)
    sol = game_solution(rules)
    label = agent_label(agent)
    tasks = [
        dict(rules=rules, seed=int(seed), start=s, stop=min(s + CHUNK_DEALS, deals))
        for s in range(0, deals, CHUNK_DEALS)
    ]
    t0 = time.perf_counter()
    with ProgressLine(2 * deals, f"analysing {label}", progress) as bar:
        parts = _run(tasks, agent, top, workers, bar.advance)
    parts.sort(key=lambda r: r["start"])
    decisions = {f: np.concatenate([p["decisions"][f] for p in parts]) for f in DECISION_FIELDS}
    game_deal, game_seat, game_regret, game_win = (
        np.concatenate([p["games"][k] for p in parts]) for k in ("deal", "seat", "regret", "win")
    )
    heap = sorted((x for p in parts for x in p["heap"]), key=lambda x: (-x[0], x[1]))[:top]
    used = [p["stats"] for p in parts if p["stats"] is not None]
    stats = {k: sum(u[k] for u in used) for k in used[0]} if used else None
    del parts[:]  # the chunks' arrays are copied: free them before the records are played
    seconds = time.perf_counter() - t0
    report = _report(label, rules, sol, int(seed), decisions, game_seat, game_regret, game_win, seconds, workers)
    report.agent_sha256 = sha
    report.agent_stats = stats
    mistakes = _with_records(rules, scored_agent, int(seed), [x[2] for x in heap])
    return Analysis(report, rules, decisions, game_deal, game_seat, game_regret, game_win, mistakes)


def _report(
    label: str,
    rules: Ruleset,
    sol,
    seed: int,
    dec: dict[str, np.ndarray],
    seat: np.ndarray,
    regret: np.ndarray,
    win: np.ndarray,
    seconds: float,
    workers: int,
) -> AnalysisReport:
    # games come in deal order, seat 0 then seat 1 (seatings(2)); per-deal sums pair them
    deals = len(regret) // 2
    r2 = regret.reshape(deals, 2)
    w2 = win.reshape(deals, 2)
    s2 = seat.reshape(deals, 2)
    by_seat = lambda x, q: np.where(s2[:, 0] == q, x[:, 0], x[:, 1])  # noqa: E731
    base = seat_baselines(sol, rules)
    r_deal = r2.mean(axis=1)
    w_deal = w2.mean(axis=1)
    b = 0.5 * (base[0] + base[1])
    # A game's summed regrets carry its dice luck, so on a few games their mean can pass
    # optimal's win rate (an implied win rate below 0). The true mean lies in [0, b]: the
    # estimate is cut to that range, as its interval is, and never lies outside the interval.
    rm = min(float(r_deal.mean()), b)
    notes: dict[str, str] = {}

    def note(key: str, got: tuple[tuple[float, float], str | None]) -> tuple[float, float]:
        if got[1]:
            notes[key] = got[1]
        return got[0]

    # the mean regret is optimal's win rate less the agent's (the identity), so it lies in [0, b]
    regret_ci = note("regret", _interval(r_deal, 0.0, b, mistakes=int((r_deal > 0).sum())))
    imp_seat, imp_seat_ci, reg_seat, emp_seat, emp_seat_ci = [], [], [], [], []
    for q in (0, 1):
        rq, wq = by_seat(r2, q), by_seat(w2, q)
        ci = note(f"regret seat {q + 1}", _interval(rq, 0.0, base[q], mistakes=int((rq > 0).sum())))
        reg_seat.append(min(float(rq.mean()), base[q]))
        imp_seat.append(base[q] - reg_seat[-1])
        imp_seat_ci.append(_implied(base[q], ci))
        emp_seat.append(float(wq.mean()))
        # one game per deal in each seat: independent games, Wilson's interval at any count
        emp_seat_ci.append(wilson(float(wq.sum()), len(wq)))
    empirical_ci = note("empirical", _interval(w_deal, 0.0, 1.0, int((w_deal != 0.5).sum()), "not split 1-1"))
    implied_ci = _implied(b, regret_ci)
    width = implied_ci[1] - implied_ci[0]
    spread = empirical_ci[1] - empirical_ci[0]
    # no ratio where either interval is missing (nan) or has no width (an agent that never wins)
    ratio = spread / width if width > 0 and spread > 0 else None
    mistakes = dec["regret"] > 0
    kinds = _kinds(dec)
    g = len(regret)
    return AnalysisReport(
        agent=label,
        rules=rules.name,
        rules_hash=rules.hash,
        games=g,
        deals=deals,
        seed=seed,
        decisions=int(len(dec["regret"])),
        mistakes=int(mistakes.sum()),
        regret_per_game=rm,
        regret_ci=regret_ci,
        regret_per_decision=float(dec["regret"].mean()) if len(dec["regret"]) else 0.0,
        regret_seat=reg_seat,
        optimal_seat=list(base),
        implied_win_rate=b - rm,
        implied_ci=implied_ci,
        implied_seat=imp_seat,
        implied_seat_ci=imp_seat_ci,
        empirical_win_rate=float(w_deal.mean()),
        empirical_ci=empirical_ci,
        empirical_wilson=wilson(float(win.sum()), g),
        empirical_seat=emp_seat,
        empirical_seat_ci=emp_seat_ci,
        width_ratio=ratio,
        by_kind={k: float(dec["regret"][kinds == i].sum() / g) for i, k in enumerate(KINDS)},
        seconds=seconds,
        workers=workers,
        interval_notes=notes,
        # only where both intervals are given and both spreads seen: a sample in which an agent
        # never wins (random against optimal) says nothing of how its outcomes spread
        sample_sizes=sample_sizes(r_deal, w_deal, int(len(dec["regret"])))
        if not (math.isnan(regret_ci[0]) or math.isnan(empirical_ci[0]) or np.ptp(r_deal) == 0 or np.ptp(w_deal) == 0)
        else None,
    )


def _kinds(dec: dict[str, np.ndarray]) -> np.ndarray:
    """Index into :data:`KINDS` of each decision (-1: no mistake)."""
    out = np.full(len(dec["regret"]), -1, np.int8)
    wrong = dec["regret"] > 0
    out[wrong & dec["end"] & ~dec["best_end"]] = 0
    out[wrong & ~dec["end"] & dec["best_end"]] = 1
    out[wrong & (dec["end"] == dec["best_end"])] = 2
    return out


# ----------------------------------------------------------------------------- the costliest mistakes
class _Cut:
    """Plays the agent's seat in a re-played game and notes where its ``m``-th decision starts."""

    def __init__(self, agent: Policy, m: int):
        self.agent, self.m, self.k, self.at = agent, m, 0, None
        self.name = getattr(agent, "name", "agent")

    def check(self, rules: Ruleset, n: int) -> None:
        self.agent.check(rules, n)

    def piggyback(self, game, rng):
        return self.agent.piggyback(game, rng)

    def decide(self, game, rng):
        if self.k == self.m:
            self.at = (len(game.events), game.scores[:], game.turn_total, list(game.dice), game.rolls)
        self.k += 1
        return self.agent.decide(game, rng)


def _with_records(rules: Ruleset, agent: Policy, seed: int, details: list[dict]) -> list[dict]:
    """Re-play each mistake's game (a deal's dice and a deterministic agent give the same
    game) with recording on, and attach the record up to the decision."""
    if not details:
        return []
    opt = _optimal()
    out = []
    for rank, d in enumerate(details, 1):
        key = deal_keys(seed, [d["deal"]])[0]
        order = seatings(2)[d["seating"]]
        cut = _Cut(agent, d["decision"])
        game = play_game(rules, [cut if i == 0 else opt for i in order], KeyedDice(int(key)), record=True)
        pos = d["position"]
        d = dict(d, rank=rank)
        if cut.at is not None and cut.at[1:] == (pos["scores"], pos["turn_total"], pos["dice"], pos["rolls"]):
            d["record"] = game.events[: cut.at[0]]
        else:
            # an agent that draws from its own state, or ties broken differently between runs
            d["record"] = None
        out.append(d)
    return out


# ----------------------------------------------------------------------------- where the loss comes from
def _situations(dec: dict[str, np.ndarray], rules: Ruleset) -> dict[str, np.ndarray]:
    own, opp = dec["own"], dec["opp"]
    final = dec["final_turn"]
    level = np.abs(own - opp) <= rules.target // 20
    out = {
        "ahead": (own > opp) & ~level,
        "level": level,
        "behind": (own < opp) & ~level,
        "endgame": ~final & (np.maximum(own, opp) >= 0.8 * rules.target),
        "final turn": final,
    }
    if rules.entry_threshold:
        out["not yet on the board"] = ~dec["own_on"]
    return out


def total_bins(rules: Ruleset) -> list[tuple[str, int, int]]:
    """Turn-total groups of the breakdown: (label, low, high) in points, high exclusive."""
    t = rules.target
    edges = [0, 1, 300, 500, 1000, 2000] if t >= 4000 else [0, 1, t // 8, t // 4, t // 2, t]
    edges = sorted(set(edges))
    out = [(f"{lo:,}" if hi == lo + 1 else f"{lo:,}-{hi - 1:,}", lo, hi) for lo, hi in zip(edges, edges[1:])]
    return out + [(f"{edges[-1]:,}+", edges[-1], 1 << 62)]


def breakdown(a: Analysis) -> list[dict[str, Any]]:
    """Rows ``(group, value, decisions, mistakes, regret_pp_per_game, share)``: the regret per
    game (in percentage points, as every table a person reads) that each kind of mistake,
    number of dice left (the dice just rolled, before the keep), turn total (before the
    keep) and score situation accounts for, and its share of the total. Situations overlap (a decision can be behind and in the endgame): "level" is
    within target/20 points (500 under classic), "endgame" a player at 80% of the target or
    more outside the final turn, "final turn" the agent's last turn after the other player
    reached the target."""
    dec, rules = a.decisions, a.rules
    g = max(a.report.games, 1)
    reg = dec["regret"]
    total = float(reg.sum()) or 1.0
    rows = []

    def add(group, value, m):
        r = float(reg[m].sum())
        rows.append(
            {
                "group": group,
                "value": value,
                "decisions": int(m.sum()),
                "mistakes": int((reg[m] > 0).sum()),
                REGRET_COLUMN: 100 * r / g,
                "share": r / total,
            }
        )

    kinds = _kinds(dec)
    for i, k in enumerate(KINDS):
        add("kind", k, kinds == i)
    for n in range(1, rules.num_dice + 1):
        add("dice left", str(n), dec["dice"] == n)
    for label, lo, hi in total_bins(rules):
        add("turn total", label, (dec["total"] >= lo) & (dec["total"] < hi))
    for k, m in _situations(dec, rules).items():
        add("situation", k, m)
    return rows


def plot_atlas(a: Analysis, path: str | Path) -> None:
    """The mistake atlas: regret per game (percentage points of win probability) over own
    score x opponent score at the decision, and over turn total x dice left (the dice just rolled)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dec, rules = a.decisions, a.rules
    g = max(a.report.games, 1)
    reg = dec["regret"] * 100.0 / g
    t = rules.target
    step = max(rules.target // 20, 50)
    nb = t // step + 1  # the last bin holds scores at or past the target (the final round)
    own = np.minimum(dec["own"] // step, nb - 1)
    opp = np.minimum(dec["opp"] // step, nb - 1)
    grid = np.zeros((nb, nb))
    np.add.at(grid, (opp, own), reg)
    tstep = max(50, (t // 40) // 50 * 50)
    nt = 16
    tb = np.minimum(dec["total"] // tstep, nt - 1)
    grid2 = np.zeros((rules.num_dice, nt))
    np.add.at(grid2, (dec["dice"].astype(np.int64) - 1, tb), reg)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2))
    ax = axes[0]
    im = ax.imshow(
        grid,
        origin="lower",
        cmap="magma_r",
        aspect="auto",
        extent=(0, nb * step, 0, nb * step),
        interpolation="nearest",
    )
    ax.set_xlabel("own score at the decision")
    ax.set_ylabel("opponent's score (top row: at or past the target, the final turn)")
    ax.set_title("regret by score")
    fig.colorbar(im, ax=ax, label=f"{REGRET_HEADER}: win probability given away")
    ax = axes[1]
    im = ax.imshow(
        grid2,
        origin="lower",
        cmap="magma_r",
        aspect="auto",
        extent=(0, nt * tstep, 0.5, rules.num_dice + 0.5),
        interpolation="nearest",
    )
    ax.set_xlabel(f"turn total before the keep (last column: {(nt - 1) * tstep:,}+)")
    ax.set_ylabel("dice left (rolled)")
    ax.set_title("regret by turn total and dice")
    fig.colorbar(im, ax=ax, label=f"{REGRET_HEADER}: win probability given away")
    r = a.report
    fig.suptitle(
        f"mistake atlas: {r.agent} vs optimal, {r.rules}, {r.games:,} games, "
        f"regret {regret_text(r.regret_per_game)} of win probability"
    )
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    atomic_write_bytes(Path(path), buf.getvalue())


# ----------------------------------------------------------------------------- output
OUT_FILES = ("report.json", "breakdown.csv", "atlas.png", "mistakes.jsonl", "mistakes")


def default_out_dir(agent: str | Policy, rules: Ruleset) -> Path:
    """runs/analysis/NAME: the agent's label (a checkpoint: its run directory and file) and the ruleset."""
    label = agent_label(agent)
    if label.startswith("ppo:"):
        p = Path(label[4:])
        label = f"ppo-{p.parent.name}-{p.stem}" if p.parent.name else f"ppo-{p.stem}"
    return Path("runs") / "analysis" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", label) + f"-{rules.name}")


def check_out_dir(out: str | Path) -> Path:
    """Create ``out`` if needed and check that every output can be written there, before
    any work (a long analysis must not fail at the end on a bad path)."""
    out = Path(out)
    for parent in [out, *out.parents]:
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"output directory {str(out)!r}: {str(parent)!r} is a file")
    try:
        (out / "mistakes").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"output directory {str(out)!r} cannot be created ({e.strerror})") from None
    for name in OUT_FILES[:-1]:
        if (out / name).is_dir():
            raise ValueError(f"output {str(out / name)!r} is a directory; remove it or choose another --out")
    if not os.access(out, os.W_OK) or not os.access(out / "mistakes", os.W_OK):
        raise ValueError(f"output directory {str(out)!r} is not writable")
    return out


def _json_safe(x: Any) -> Any:
    # an interval not given is (nan, nan) in the report, null in the file (NaN is not JSON)
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    return x


def write_outputs(a: Analysis, out: str | Path) -> dict[str, Path]:
    """Write ``report.json`` (the report; an interval not given is ``null``),
    ``breakdown.csv``, ``atlas.png``, ``mistakes.jsonl`` (one line per mistake, costliest
    first: the position, the move made and the best move with their W*, every legal move's
    W* and ``record``: the path of its game record prefix) and ``mistakes/NN.jsonl`` (the
    record up to the decision: :func:`tenk_env.records.replay` sets the position up again;
    ``tenk replay`` prints the game up to it and says where it stands). Returns the paths."""
    import csv
    import io

    out = check_out_dir(out)
    paths = {name: out / name for name in OUT_FILES}
    atomic_write_text(paths["report.json"], json.dumps(_json_safe(a.report.to_dict()), indent=1) + "\n")
    buf = io.StringIO()
    rows = breakdown(a)
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(paths["breakdown.csv"], buf.getvalue())
    plot_atlas(a, paths["atlas.png"])
    for old in paths["mistakes"].glob("*.jsonl"):
        old.unlink()  # a previous analysis's records would be mistaken for this one's
    lines = []
    for d in a.mistakes:
        d = dict(d)
        rec = d.pop("record")
        if rec is not None:
            p = paths["mistakes"] / f"{d['rank']:02d}.jsonl"
            save_jsonl(rec, p)
            d["record"] = str(p)
        else:
            d["record"] = None
        lines.append(json.dumps(d, separators=(",", ":")) + "\n")
    atomic_write_text(paths["mistakes.jsonl"], "".join(lines))
    return paths
