"""The browser app's games, held in memory: a human's game against agents, scored as it goes.

Nothing here knows about HTTP: :mod:`tenk_env.web.app` turns requests into these calls and
:class:`WebError` into a 4xx answer. A :class:`PlayGame` plays the agents' turns itself and
stops at each decision of the human's seat; its feedback comes from an
:class:`~tenk_env.evaluation.annotate.Annotator` fed the game's events, so the live feedback
and the analysis of the saved record are one computation. A 2-player ruleset whose game
solution is not cached is solved in a separate process (the page stays responsive; the
feedback is ``solving`` until it is ready, then every decision made meanwhile is scored).
"""

from __future__ import annotations

import json
import multiprocessing
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np

from tenk_env.evaluation.annotate import Annotator, Scorer, move_rows, scorer_for, summarise
from tenk_env.evaluation.play import GameTooLongError, RngDice, ScriptedDice, advance, play_game
from tenk_env.game import MAX_PLAYERS, Game, IllegalMoveError, Phase
from tenk_env.obs import action_table, decode_action
from tenk_env.policies.base import AgentError, Policy, make_agent
from tenk_env.records import ReplayError, dumps_jsonl, event_problem, replay
from tenk_env.rules import Ruleset, RulesetError
from tenk_env.solve.game import is_cached, is_solvable, solve_game
from tenk_env.solve.spec import SolverError

__all__ = ["WebError", "PlayGame", "GameStore", "Solver", "watch", "analyse", "check_record", "rules_json", "MAX_WEB_PLAYERS"]

#: the page seats 2 to 4 players (the engine plays up to 8; a page of 8 boards is unreadable)
MAX_WEB_PLAYERS = min(4, MAX_PLAYERS)


class WebError(ValueError):
    """A request the app refuses: ``status`` is the HTTP status, the message says why and what to do."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def rules_json(rules: Ruleset) -> dict[str, Any]:
    return {"name": rules.name, "hash": rules.hash, "target": rules.target, "num_dice": rules.num_dice,
            "piggyback": rules.piggyback, "end": rules.end, "entry_threshold": rules.entry_threshold,
            "fields": rules.to_dict()}


def _solve_in_child(rules: dict) -> None:
    solve_game(Ruleset.from_dict(rules))


class Solver:
    """Solves 2-player game solutions in child processes, one per ruleset, so that no request
    waits minutes; a solution is ready once it is in the disk cache."""

    def __init__(self) -> None:
        self._jobs: dict[str, multiprocessing.Process] = {}
        self._lock = threading.Lock()

    def ready(self, rules: Ruleset) -> bool:
        return is_cached(rules)

    def start(self, rules: Ruleset) -> None:
        with self._lock:
            job = self._jobs.get(rules.hash)
            if job is not None and (job.is_alive() or job.exitcode):
                return                    # solving, or failed (status says so): not again per request
            # spawn, not fork: the server's threads must not be copied mid-flight
            job = multiprocessing.get_context("spawn").Process(target=_solve_in_child, args=(rules.to_dict(),),
                                                                daemon=True, name=f"tenk-solve-{rules.name}")
            job.start()
            self._jobs[rules.hash] = job

    def status(self, rules: Ruleset) -> str | None:
        """None when the solution is ready, else ``"solving"`` or why it failed."""
        if is_cached(rules):
            return None
        with self._lock:
            job = self._jobs.get(rules.hash)
            if job is not None and not job.is_alive() and job.exitcode:
                return (f"solving {rules.name} failed (the solver's process ended with status {job.exitcode}); "
                        f"`tenk solve game` on the same ruleset shows why")
        return "solving"

    def stop(self) -> None:
        with self._lock:
            for job in self._jobs.values():
                if job.is_alive():
                    job.terminate()


def _agents(specs: Sequence[str], rules: Ruleset, n: int, allow_cmd: bool) -> list[Policy]:
    out = []
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise WebError(f"agent {spec!r}: give an agent spec such as 'dicenow', 'hold:300' or 'zoo:NAME'")
        spec = spec.strip()
        if spec.partition(":")[0] == "cmd" and not allow_cmd:
            raise WebError(f"agent {spec!r}: programs as agents (cmd:) run commands on this machine; start the "
                           "server with `tenk serve --allow-cmd` to allow them", 403)
        try:
            a = make_agent(spec)
            a.check(rules, n)
        except (AgentError, RulesetError, SolverError, FileNotFoundError, ValueError) as e:
            raise WebError(f"agent {spec!r}: {e}") from None
        out.append(a)
    return out


def _dice_source(seed: int | None, dice: list[list[int]] | None):
    if dice is not None:
        return ScriptedDice(dice), None
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**32)
    return RngDice(seed), seed


class PlayGame:
    """A human's game (seat ``seat``, 0-based) against agents in the other seats.

    ``opponents``: agent specs for the other seats in seat order. ``seed``: the dice seed
    (random when None; the state reports it), or ``dice``: the rolls in order (scripted).
    ``solver``: where an unsolved 2-player solution is solved (None: solved here, blocking).
    """

    def __init__(self, rules: Ruleset, n_players: int, seat: int, opponents: Sequence[str], *,
                 seed: int | None = None, dice: list[list[int]] | None = None, solver: Solver | None = None,
                 allow_cmd: bool = False):
        if not 2 <= n_players <= MAX_WEB_PLAYERS:
            raise WebError(f"players {n_players}: the page seats 2 to {MAX_WEB_PLAYERS} players")
        if not 0 <= seat < n_players:
            raise WebError(f"seat {seat + 1}: choose a seat from 1 to {n_players}")
        if len(opponents) != n_players - 1:
            raise WebError(f"{len(opponents)} opponents for {n_players} players: give one agent per other seat "
                           f"({n_players - 1})")
        self.rules, self.n, self.seat = rules, n_players, seat
        self.specs = [s.strip() for s in opponents]
        agents = _agents(self.specs, rules, n_players, allow_cmd)
        self.players: list[Policy | None] = [*agents[:seat], None, *agents[seat:]]
        self.names = [f"P{p + 1} " + ("you" if a is None else a.name) for p, a in enumerate(self.players)]
        self.source, self.seed = _dice_source(seed, dice)
        self.agent_rng = getattr(self.source, "agent_rng", lambda: np.random.default_rng(0))()
        self.game = Game(rules, n_players)
        self.solver = solver
        self.scorer: Scorer | None = None
        self.annotator: Annotator | None = None
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self._scorer_or_wait()
        self._advance()

    # ------------------------------------------------------------------ feedback
    def _scorer_or_wait(self) -> None:
        """Set the scorer when it can be had now; a 2-player solution still being solved leaves
        it None (feedback ``solving``)."""
        if self.scorer is not None:
            return
        if self.n == 2 and self.solver is not None and is_solvable(self.rules) and not self.solver.ready(self.rules):
            self.solver.start(self.rules)
            return
        self.scorer = scorer_for(self.rules, self.n, seat=self.seat, opponents=self.specs)
        self.annotator = Annotator(self.rules, self.n, self.scorer, seats={self.seat})

    def _feed(self) -> None:
        self._scorer_or_wait()
        if self.annotator is not None:
            self.annotator.feed(self.game.events[self.annotator.fed:])

    # ------------------------------------------------------------------ play
    def _advance(self) -> None:
        try:
            advance(self.game, self.players, self.source.draw, self.agent_rng, max_turns=10_000)
        except (AgentError, GameTooLongError) as e:
            raise WebError(f"the game cannot go on: {e}", 409) from None
        except ValueError as e:          # the scripted dice ran out
            raise WebError(str(e), 409) from None

    def act(self, *, action: int | None = None, keep: list[int] | None = None, end: bool | None = None,
            piggyback: bool | None = None) -> None:
        g = self.game
        self.touched = time.monotonic()
        if g.over:
            raise WebError("the game is over: start a new one", 409)
        if g.current != self.seat:
            raise WebError(f"it is {self.names[g.current]}'s move, not yours", 409)
        try:
            if piggyback is not None:
                if g.phase != Phase.PIGGYBACK:
                    raise WebError("no piggyback choice is due: choose a keep from the roll")
                g.piggyback(bool(piggyback))
            elif g.phase == Phase.PIGGYBACK:
                raise WebError("a piggyback choice is due: send {\"piggyback\": true} to take over the dice left, "
                               "false to start fresh")
            elif action is not None:
                move = decode_action(g, action)
                if not isinstance(move, tuple):
                    raise WebError(f"action {action} is not a keep")
                g.act(*move)
            elif keep is not None and end is not None:
                g.act(keep, bool(end))
            else:
                raise WebError("give an action ({\"action\": A} from the legal list), a keep "
                               "({\"keep\": [1, 5], \"end\": false}) or a piggyback choice ({\"piggyback\": true})")
        except IllegalMoveError as e:
            raise WebError(f"illegal move: {e}") from None
        self._advance()

    # ------------------------------------------------------------------ the state
    def state(self) -> dict[str, Any]:
        g = self.game
        self._feed()
        mine = not g.over and g.current == self.seat
        phase = "over" if g.over else {Phase.DECIDE: "decide", Phase.PIGGYBACK: "piggyback"}.get(g.phase, "wait")
        fb = self._feedback()
        values = None
        if mine and g.phase == Phase.DECIDE and self.scorer is not None and self.scorer.covers(self.seat):
            values = move_rows(self.scorer.rows(g))
        decisions = self.annotator.decisions if self.annotator is not None else []
        summary = None
        if g.over and self.annotator is not None and self.scorer.mode != "off":
            summary = summarise(decisions, self.scorer, self.seat)
        return {
            "id": self.id, "rules": rules_json(self.rules), "players": self.n, "names": self.names,
            "seat": self.seat, "seed": self.seed, "phase": phase, "current": g.current, "turn": g.turn,
            "scores": list(g.scores), "on_board": list(g.on_board), "turn_total": g.turn_total,
            "dice": list(g.dice) if g.phase == Phase.DECIDE else [], "dice_left": g.dice_left, "rolls": g.rolls,
            "final_round": g.final_round,
            "piggy": {"dice": g.piggy[0], "total": g.piggy[1]} if g.phase == Phase.PIGGYBACK and g.piggy else None,
            "legal": action_table(g) if mine else [],
            "events": g.events, "feedback": fb, "values": values, "decisions": decisions,
            "winners": list(g.winners) if g.over else None, "summary": summary,
        }

    def _feedback(self) -> dict[str, Any]:
        if self.scorer is not None:
            return self.scorer.feedback()
        why = self.solver.status(self.rules) if self.solver is not None else "solving"
        if why == "solving":
            return {"mode": "solving", "unit": "win",
                    "note": f"solving {self.rules.name} for exact feedback (seconds at a small target, 1-2 minutes "
                            "at 10,000); your decisions are scored when it is ready"}
        return {"mode": "off", "unit": None, "note": f"no feedback: {why}"}

    def record(self) -> str:
        return dumps_jsonl(self.game.events)


class GameStore:
    """Games in memory, at most ``limit`` (the least recently used dropped first), each
    expiring ``ttl`` seconds after its last request."""

    def __init__(self, limit: int = 64, ttl: float = 3600.0):
        self.limit, self.ttl = limit, ttl
        self._games: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self) -> None:
        now = time.monotonic()
        for k in [k for k, g in self._games.items() if now - g.touched > self.ttl]:
            del self._games[k]

    def add(self, game: Any) -> str:
        with self._lock:
            self._expire()
            key = "g" + secrets.token_hex(8)
            game.id, game.touched = key, time.monotonic()
            self._games[key] = game
            while len(self._games) > self.limit:
                self._games.popitem(last=False)
            return key

    def get(self, key: str) -> Any:
        with self._lock:
            self._expire()
            g = self._games.get(key)
            if g is None:
                raise WebError(f"no game {key!r}: it ended more than {self.ttl / 60:.0f} minutes ago, was dropped "
                               f"for newer ones (at most {self.limit} are kept) or never existed; start a new one",
                               404)
            self._games.move_to_end(key)
            g.touched = time.monotonic()
            return g

    def __len__(self) -> int:
        return len(self._games)


# ---------------------------------------------------------------------------- watch and analyse
def check_record(record: Any) -> list[dict[str, Any]]:
    """The events of a record sent to the API: JSON lines text or a list of events."""
    if isinstance(record, str):
        events = []
        for i, line in enumerate(record.strip().splitlines(), 1):
            if not line.strip():
                continue
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise WebError(f"record line {i}: not a JSON line ({e})") from None
    elif isinstance(record, list):
        events = record
    else:
        raise WebError("record: give the JSON lines of a game record (as `tenk play --save` writes) as text, "
                       "or its events as a list")
    for i, e in enumerate(events):
        problem = event_problem(e)
        if problem:
            raise WebError(f"record line {i + 1}: {problem}")
    return events


def analyse(events: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """A record annotated move by move (every seat's decisions, exact at 2 players where the
    solver covers the ruleset; turn-level advice otherwise)."""
    try:
        game = replay(events)
    except (ReplayError, RulesetError) as e:
        raise WebError(f"the record does not replay: {e}") from None
    rules, n = game.rules, game.n_players
    scorer = scorer_for(rules, n)
    ann = Annotator(rules, n, scorer)
    ann.feed(events)
    return {"rules": rules_json(rules), "players": n, "names": names or [f"P{p + 1}" for p in range(n)],
            "events": events, "feedback": scorer.feedback(), "decisions": ann.decisions, "chart": ann.chart,
            "summary": [summarise(ann.decisions, scorer, p) for p in range(n)] if scorer.mode != "off" else [],
            "winners": list(game.winners) if game.over else None}


def watch(rules: Ruleset, specs: Sequence[str], seed: int | None, allow_cmd: bool = False) -> dict[str, Any]:
    """Agents play one game; it comes back annotated, as :func:`analyse` gives it."""
    n = len(specs)
    if not 2 <= n <= MAX_WEB_PLAYERS:
        raise WebError(f"{n} agents: watch 2 to {MAX_WEB_PLAYERS} agents, one per seat")
    agents = _agents(specs, rules, n, allow_cmd)
    source, seed = _dice_source(seed, None)
    try:
        game = play_game(rules, agents, source, max_turns=10_000)
    except (AgentError, GameTooLongError) as e:
        raise WebError(f"the game cannot go on: {e}", 409) from None
    out = analyse(game.events, [f"P{p + 1} {a.name}" for p, a in enumerate(agents)])
    out["seed"] = seed
    return out
