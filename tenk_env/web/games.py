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

import copy
import ctypes
import ctypes.util
import json
import multiprocessing
import os
import secrets
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tenk_env.evaluation.annotate import Annotator, Scorer, move_rows, scorer_for, summarise
from tenk_env.evaluation.match import end_processes
from tenk_env.evaluation.play import DiceRanOut, GameTooLongError, RngDice, ScriptedDice, advance, play_game
from tenk_env.game import MAX_PLAYERS, Game, IllegalMoveError, Phase
from tenk_env.obs import action_table, decode_action
from tenk_env.policies.base import AgentError, Policy, close_agents, make_agent
from tenk_env.policies.optimal import OptimalAgent
from tenk_env.records import ReplayError, dumps_jsonl, event_problem, replay
from tenk_env.rules import Ruleset, RulesetError
from tenk_env.solve.game import is_cached, is_solvable, solve_game, solve_minutes
from tenk_env.solve.spec import SolverError

__all__ = [
    "WebError",
    "PlayGame",
    "GameStore",
    "Solver",
    "SolveJob",
    "Pending",
    "watch",
    "analyse",
    "check_record",
    "analysis_jobs",
    "wait_for",
    "rules_json",
    "MAX_WEB_PLAYERS",
    "MAX_SCRIPTED_ROLLS",
    "ANALYSE_MAX_MINUTES",
]

#: the page seats 2 to 4 players (the engine plays up to 8; a page of 8 boards is unreadable)
MAX_WEB_PLAYERS = min(4, MAX_PLAYERS)
#: the most rolls a game may script (a long game takes a few hundred)
MAX_SCRIPTED_ROLLS = 5_000
#: a record's ruleset is solved for its analysis only if the solver estimates at most this
#: many minutes; larger ones are for `tenk solve game`, offline
ANALYSE_MAX_MINUTES = 5.0
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
#: seconds a solve's child gets to end after SIGTERM before SIGKILL
_SOLVE_GRACE = 5.0


class WebError(ValueError):
    """A request the app refuses: ``status`` is the HTTP status, the message says why and what to do."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def rules_json(rules: Ruleset) -> dict[str, Any]:
    return {
        "name": rules.name,
        "hash": rules.hash,
        "target": rules.target,
        "num_dice": rules.num_dice,
        "piggyback": rules.piggyback,
        "end": rules.end,
        "entry_threshold": rules.entry_threshold,
        "fields": rules.to_dict(),
    }


def _end_with_parent(parent: int) -> None:
    """In a solver's child: die with the server, however it ends (SIGKILL included), and leave
    Ctrl-C to the server, which ends its children itself (a child's KeyboardInterrupt would
    print a traceback per solve)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the server's stop() and atexit still end it
        pass
    if os.getppid() != parent:  # the server died before the line above
        os._exit(1)


def _solve_in_child(kind: str, rules: dict, n_players: int, spec: str | None, parent: int) -> None:
    _end_with_parent(parent)
    r = Ruleset.from_dict(rules)
    if kind == "game":
        solve_game(r)
    else:
        make_agent(spec).prepare(r, n_players)


@dataclass
class SolveJob:
    """A solve the server runs for requests: the 2-player game solution of a ruleset
    (``kind`` "game") or the tables an agent plays from (``kind`` "agent", ``spec``)."""

    kind: str
    rules: Ruleset
    n_players: int = 2
    spec: str | None = None
    wanted: float = 0.0  # when a request last waited for it (monotonic)
    proc: Any = None
    started: float | None = None

    @property
    def key(self) -> tuple:
        return self.kind, self.rules.hash, self.n_players, self.spec

    @property
    def title(self) -> str:
        what = "the game solution" if self.kind == "game" else f"{self.spec}'s tables"
        return f"{what} of {self.rules.name} ({self.n_players} players)"


class Solver:
    """The server's solves, one at a time, each in a child process (the page stays responsive,
    and two cores are not split five ways), in the order requested.

    A solve goes on only while a request waits for it: each request that needs it (a poll of
    a game's state, a watch or analysis asked again) marks it wanted, and one not wanted for
    ``idle`` seconds is dropped from the queue or, running, ended. :meth:`stop` ends the running
    child with the server; a child also dies with the server if the server is killed."""

    def __init__(self, idle: float = 20.0, poll: float = 0.25):
        self.idle, self.poll = idle, poll
        self._queue: list[SolveJob] = []
        self._done: set[tuple] = set()
        self._failed: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ requests
    def want(self, job: SolveJob) -> dict[str, Any] | None:
        """None when ``job``'s result is ready; else where it stands, ``{"title", "position",
        "state", "seconds"}`` (position 0: solving now), and the job is queued if it was not.
        A failed solve raises :class:`WebError` with the reason."""
        if job.kind == "game" and is_cached(job.rules):
            return None
        with self._lock:
            if job.key in self._done:
                return None
            if job.key in self._failed:
                raise WebError(self._failed[job.key], 409)
            queued = next((j for j in self._queue if j.key == job.key), None)
            if queued is None:
                queued = job
                self._queue.append(job)
            queued.wanted = time.monotonic()
            pos = self._queue.index(queued)
            self._ensure_thread()
            return {
                "title": queued.title,
                "position": pos,
                "state": "solving" if queued.proc else "queued",
                "seconds": round(time.monotonic() - queued.started, 1) if queued.started else 0.0,
            }

    # ------------------------------------------------------------------ the worker
    def _ensure_thread(self) -> None:
        # called with the lock held; the worker forgets itself under the same lock as it ends,
        # so a job queued while it ends starts a new one
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._run, name="tenk-solver-queue", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(self.poll):
            with self._lock:
                self._step()
                if not self._queue:
                    self._thread = None
                    return
        with self._lock:
            self._thread = None

    def _step(self) -> None:
        now = time.monotonic()
        # unwanted jobs waiting their turn leave the queue
        self._queue = [j for j in self._queue if j.proc is not None or now - j.wanted <= self.idle]
        if not self._queue:
            return
        job = self._queue[0]
        if job.proc is None:
            # spawn, not fork: the server's threads must not be copied mid-flight
            job.proc = multiprocessing.get_context("spawn").Process(
                target=_solve_in_child,
                args=(job.kind, job.rules.to_dict(), job.n_players, job.spec, os.getpid()),
                daemon=True,
                name=f"tenk-solve-{job.rules.name}",
            )
            job.proc.start()
            job.started = now
            return
        if job.proc.is_alive():
            if now - job.wanted > self.idle:  # nobody waits for it any more
                end_processes([job.proc], _SOLVE_GRACE)
                self._queue.pop(0)
            return
        job.proc.join()
        if job.proc.exitcode == 0:
            self._done.add(job.key)
        else:
            self._failed[job.key] = (
                f"solving {job.title} failed (the solver's process ended with status "
                f"{job.proc.exitcode}); `tenk solve` on the same ruleset shows why"
            )
        self._queue.pop(0)

    def stop(self) -> None:
        """End the running solve and forget the queue (the server is stopping)."""
        self._stopping.set()
        with self._lock:
            end_processes([j.proc for j in self._queue if j.proc is not None], _SOLVE_GRACE)
            self._queue.clear()


def wait_note(where: dict[str, Any]) -> str:
    """A solve's place in the queue, in words."""
    if where["state"] == "solving":
        return (
            f"solving {where['title']} ({where['seconds']:.0f} s so far; seconds at a small target, 1-2 minutes "
            "on classic, longer for some variants)"
        )
    ahead = where["position"]
    if not ahead:
        return f"starting to solve {where['title']}"
    return f"waiting to solve {where['title']}: {ahead} solve{'s' if ahead != 1 else ''} ahead (one runs at a time)"


class Pending(Exception):
    """A request waits for solves: the app answers 202 with where they stand, and the page
    asks again."""

    def __init__(self, waits: list[dict[str, Any]]):
        super().__init__(wait_note(waits[0]))
        self.waits = waits


#: agents that reach beyond the server's own process, seated only with ``allow_cmd``
_OPT_IN = {
    "cmd": "programs as agents (cmd:) run commands on this machine",
    "llm": "models as agents (llm:) send requests from this machine to the address the spec names",
}


def _agents(specs: Sequence[str], rules: Ruleset, n: int, allow_cmd: bool) -> list[Policy]:
    out = []
    for spec in specs:
        if not isinstance(spec, str) or not spec.strip():
            raise WebError(f"agent {spec!r}: give an agent spec such as 'dicenow', 'hold:300' or 'zoo:NAME'")
        spec = spec.strip()
        kind = spec.partition(":")[0]
        if kind in _OPT_IN and not allow_cmd:
            raise WebError(
                f"agent {spec!r}: {_OPT_IN[kind]}; start the server with `tenk serve --allow-cmd` to allow them",
                403,
            )
        try:
            a = make_agent(spec)
            a.check(rules, n)
        except (AgentError, RulesetError, SolverError, FileNotFoundError, ValueError) as e:
            raise WebError(f"agent {spec!r}: {e}") from None
        if getattr(a, "interactive", False):
            raise WebError(
                f"agent {spec!r} answers at the server's terminal, which nobody watches: in the page you "
                "are the human player (Play), so give bots or trained agents here"
            )
        out.append(a)
    return out


def _solve_jobs(agents: Sequence[Policy], specs: Sequence[str], rules: Ruleset, n: int, scorer: bool) -> list[SolveJob]:
    """What a game needs solved before it can be played (agents that play from a solver's
    tables) or, with ``scorer``, scored (a 2-player game solution)."""
    jobs = []
    if scorer and n == 2 and is_solvable(rules):
        jobs.append(SolveJob("game", rules))
    for a, spec in zip(agents, specs):
        if isinstance(a, OptimalAgent):
            jobs.append(SolveJob("game", rules))
        elif hasattr(a, "prepare"):
            jobs.append(SolveJob("agent", rules, n, spec.strip()))
    unique = {j.key: j for j in jobs}
    return list(unique.values())


def wait_for(solver: Solver | None, jobs: Sequence[SolveJob]) -> None:
    """Raise :class:`Pending` unless every job is ready (nothing to wait for without a solver:
    the work is done in the request)."""
    if solver is None:
        return
    waits = [w for w in (solver.want(j) for j in jobs) if w is not None]
    if waits:
        raise Pending(waits)


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

    def __init__(
        self,
        rules: Ruleset,
        n_players: int,
        seat: int,
        opponents: Sequence[str],
        *,
        seed: int | None = None,
        dice: list[list[int]] | None = None,
        solver: Solver | None = None,
        allow_cmd: bool = False,
    ):
        if not 2 <= n_players <= MAX_WEB_PLAYERS:
            raise WebError(f"players {n_players}: the page seats 2 to {MAX_WEB_PLAYERS} players")
        if not 0 <= seat < n_players:
            raise WebError(f"seat {seat + 1}: choose a seat from 1 to {n_players}")
        if len(opponents) != n_players - 1:
            raise WebError(
                f"{len(opponents)} opponents for {n_players} players: give one agent per other seat ({n_players - 1})"
            )
        if dice is not None and len(dice) > MAX_SCRIPTED_ROLLS:
            raise WebError(f"dice: {len(dice):,} scripted rolls; a game may script at most {MAX_SCRIPTED_ROLLS:,}")
        self.rules, self.n, self.seat = rules, n_players, seat
        self.specs = [s.strip() for s in opponents]
        agents = _agents(self.specs, rules, n_players, allow_cmd)
        try:
            # the agents' own solves first: their moves are made in this request
            wait_for(solver, _solve_jobs(agents, self.specs, rules, n_players, scorer=False))
        except Pending:
            close_agents(agents)  # the page asks again, with new agents
            raise
        self.players: list[Policy | None] = [*agents[:seat], None, *agents[seat:]]
        self.names = [f"P{p + 1} " + ("you" if a is None else a.name) for p, a in enumerate(self.players)]
        self.source, self.seed = _dice_source(seed, dice)
        self.agent_rng = getattr(self.source, "agent_rng", lambda: np.random.default_rng(0))()
        self.game = Game(rules, n_players)
        self.solver = solver
        self.scorer: Scorer | None = None
        self.annotator: Annotator | None = None
        #: while the game solution is solved: where it stands (:meth:`Solver.want`); or why it failed
        self.waiting: dict[str, Any] | None = None
        self.failed: str | None = None
        self.lock = threading.Lock()
        self.touched = time.monotonic()
        self._scorer_or_wait()
        self._advance()

    # ------------------------------------------------------------------ feedback
    def _scorer_or_wait(self) -> None:
        """Set the scorer when it can be had now; a 2-player solution still being solved (or
        whose solve failed) leaves it None (feedback ``solving``, or ``off`` with the reason)."""
        if self.scorer is not None:
            return
        if self.n == 2 and self.solver is not None and is_solvable(self.rules):
            try:
                self.waiting = self.solver.want(SolveJob("game", self.rules))  # the page's polls keep it wanted
            except WebError as e:
                self.waiting, self.failed = None, str(e)
            if self.waiting is not None or self.failed is not None:
                return
        self.scorer = scorer_for(self.rules, self.n, seat=self.seat, opponents=self.specs)
        self.annotator = Annotator(self.rules, self.n, self.scorer, seats={self.seat})

    def _feed(self) -> None:
        self._scorer_or_wait()
        if self.annotator is not None:
            self.annotator.feed(self.game.events[self.annotator.fed :])

    # ------------------------------------------------------------------ play
    def _advance(self) -> None:
        try:
            advance(self.game, self.players, self.source.draw, self.agent_rng, max_turns=10_000)
        except (AgentError, GameTooLongError) as e:
            raise WebError(f"the game cannot go on: {e}", 409) from None
        except DiceRanOut as e:
            raise WebError(f"{e}: start a new game with more scripted rolls", 409) from None

    def act(
        self,
        *,
        action: int | None = None,
        keep: list[int] | None = None,
        end: bool | None = None,
        piggyback: bool | None = None,
    ) -> None:
        self.touched = time.monotonic()
        # the move and the agents' replies happen together or not at all: a refusal halfway
        # (scripted dice that run out) leaves the game where it was
        saved = copy.deepcopy((self.game, self.source, self.agent_rng))
        try:
            self._act(action=action, keep=keep, end=end, piggyback=piggyback)
        except WebError:
            self.game, self.source, self.agent_rng = saved
            raise

    def _act(self, *, action: int | None, keep: list[int] | None, end: bool | None, piggyback: bool | None) -> None:
        g = self.game
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
                raise WebError(
                    'a piggyback choice is due: send {"piggyback": true} to take over the dice left, '
                    "false to start fresh"
                )
            elif action is not None:
                move = decode_action(g, action)
                if not isinstance(move, tuple):
                    raise WebError(f"action {action} is not a keep")
                g.act(*move)
            elif keep is not None and end is not None:
                g.act(keep, end)
            else:
                raise WebError(
                    'give an action ({"action": A} from the legal list), a keep '
                    '({"keep": [1, 5], "end": false}) or a piggyback choice ({"piggyback": true})'
                )
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
            "id": self.id,
            "rules": rules_json(self.rules),
            "players": self.n,
            "names": self.names,
            "seat": self.seat,
            "seed": self.seed,
            "phase": phase,
            "current": g.current,
            "turn": g.turn,
            "scores": list(g.scores),
            "on_board": list(g.on_board),
            "turn_total": g.turn_total,
            "dice": list(g.dice) if g.phase == Phase.DECIDE else [],
            "dice_left": g.dice_left,
            "rolls": g.rolls,
            "final_round": g.final_round,
            "piggy": {"dice": g.piggy[0], "total": g.piggy[1]} if g.phase == Phase.PIGGYBACK and g.piggy else None,
            "legal": action_table(g) if mine else [],
            "events": g.events,
            "boards": event_boards(g.events),
            "feedback": fb,
            "values": values,
            "decisions": decisions,
            "winners": list(g.winners) if g.over else None,
            "summary": summary,
        }

    def _feedback(self) -> dict[str, Any]:
        """The feedback's mode and note (:meth:`_feed` has just looked for a scorer)."""
        if self.scorer is not None:
            return self.scorer.feedback()
        if self.failed is not None:
            return {"mode": "off", "unit": None, "note": f"no feedback: {self.failed}"}
        return {
            "mode": "solving",
            "unit": "win",
            "queue": self.waiting,
            "note": f"{wait_note(self.waiting)}; your decisions are scored when it is ready",
        }

    def record(self) -> str:
        return dumps_jsonl(self.game.events)

    def close(self) -> None:
        """End what the agents hold (a ``cmd:`` agent's program)."""
        close_agents(p for p in self.players if p is not None)


class GameStore:
    """Games in memory, at most ``limit`` (the least recently used dropped first), each
    expiring ``ttl`` seconds after its last request. A game dropped is closed (its agents'
    programs end)."""

    def __init__(self, limit: int = 64, ttl: float = 3600.0):
        self.limit, self.ttl = limit, ttl
        self._games: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self) -> None:
        now = time.monotonic()
        for k in [k for k, g in self._games.items() if now - g.touched > self.ttl]:
            _close(self._games.pop(k))

    def add(self, game: Any) -> str:
        with self._lock:
            self._expire()
            key = "g" + secrets.token_hex(8)
            game.id, game.touched = key, time.monotonic()
            self._games[key] = game
            while len(self._games) > self.limit:
                _close(self._games.popitem(last=False)[1])
            return key

    def close(self) -> None:
        """Close every game (the server is stopping)."""
        with self._lock:
            while self._games:
                _close(self._games.popitem()[1])

    def get(self, key: str) -> Any:
        with self._lock:
            self._expire()
            g = self._games.get(key)
            if g is None:
                raise WebError(
                    f"no game {key!r}: it ended more than {self.ttl / 60:.0f} minutes ago, was dropped "
                    f"for newer ones (at most {self.limit} are kept) or never existed; start a new one",
                    404,
                )
            self._games.move_to_end(key)
            g.touched = time.monotonic()
            return g

    def __len__(self) -> int:
        return len(self._games)


def _close(game: Any) -> None:
    close = getattr(game, "close", None)
    if callable(close):
        close()


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
        raise WebError(
            "record: give the JSON lines of a game record (as `tenk play --save` writes) as text, "
            "or its events as a list"
        )
    for i, e in enumerate(events):
        problem = event_problem(e)
        if problem:
            raise WebError(f"record line {i + 1}: {problem}")
    return events


def analysis_jobs(events: list[dict[str, Any]]) -> list[SolveJob]:
    """What the analysis of a record needs solved: its 2-player game solution, if the solver
    estimates it at most :data:`ANALYSE_MAX_MINUTES` minutes (a record can carry any ruleset:
    the server does not start an hour's solve for one); else a :class:`WebError` naming the
    cost and the command that solves it offline."""
    game = _replay(events[:1])
    rules = game.rules
    if game.n_players != 2 or not is_solvable(rules) or is_cached(rules):
        return []
    minutes = solve_minutes(rules)
    if minutes > ANALYSE_MAX_MINUTES:
        raise WebError(
            f"the record's ruleset {rules.name!r} is not solved here, and the solver estimates about "
            f"{minutes:.0f} minutes for it (the server solves at most {ANALYSE_MAX_MINUTES:.0f} for an "
            "analysis): solve it once offline with `tenk solve game RULES` (RULES: a preset name, or "
            "the record's `rules` saved as YAML), then analyse again",
            422,
        )
    return [SolveJob("game", rules)]


def _replay(events: list[dict[str, Any]]) -> Game:
    try:
        return replay(events)
    except (ReplayError, RulesetError) as e:
        raise WebError(f"the record does not replay: {e}") from None


class _BoardGame(Game):
    """A game that draws the board at every event it reports. The engine reports an event
    after its effect, so the state then is the board after the event; the dice on the table
    and those set aside this turn, which the engine does not keep, follow from the events."""

    def _emit(self, kind: str, **data: Any) -> None:
        super()._emit(kind, **data)
        if not hasattr(self, "boards"):  # the "start" event, from inside Game.__init__
            self.boards: list[dict[str, Any]] = []
            self._table: list[int] = []
            self._kept: list[int] = []
            self._rolled = False
        if kind in ("order_roll", "roll"):
            if len(data["dice"]) == self.rules.num_dice:  # all dice back in hand
                self._kept = []
            self._table, self._rolled = list(data["dice"]), True
        elif kind == "keep":
            rest = list(self.dice)  # still the roll: the engine clears it after the report
            for f in data["dice"]:
                rest.remove(f)
            self._table, self._rolled = [] if data["hot_dice"] else rest, False
            self._kept = self._kept + list(data["dice"])
        elif kind == "turn":
            self._table, self._kept, self._rolled = [], [], False
        elif kind == "zilch":
            self._kept = []
        self.boards.append(
            {
                "current": self.current,
                "turn": self.turn,
                "scores": list(self.scores),
                "on_board": list(self.on_board),
                "turn_total": self.turn_total,
                "dice_left": self.dice_left,
                "rolls": self.rolls,
                "final_round": self.final_round,
                "winners": list(self.winners) if self.winners else None,
                "dice": self._table,
                "rolled": self._rolled,
                "kept": self._kept,
            }
        )


def event_boards(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The board after each event of a game's record (one per event, in order), drawn by
    the engine replaying the record: the page draws these and applies no rules itself."""
    if not events:
        return []
    head = events[0]
    g = _BoardGame(Ruleset.from_dict(head["rules"], source="game record"), head["players"])
    for e in events[1:]:
        if len(g.boards) >= len(events):  # a record cut amid an input's outcomes
            break
        kind = e["type"]
        if kind in ("order_roll", "roll"):
            g.roll(e["dice"])
        elif kind == "keep":
            g.act(e["dice"], e["end_turn"])
        elif kind == "piggyback":
            g.piggyback(e["take"])
    return g.boards[: len(events)]


def analyse(events: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, Any]:
    """A record annotated move by move (every seat's decisions, exact at 2 players where the
    solver covers the ruleset; turn-level advice otherwise)."""
    game = _replay(events)
    rules, n = game.rules, game.n_players
    scorer = scorer_for(rules, n)
    ann = Annotator(rules, n, scorer)
    ann.feed(events)
    return {
        "rules": rules_json(rules),
        "players": n,
        "names": names or [f"P{p + 1}" for p in range(n)],
        "events": events,
        "boards": event_boards(events),
        "feedback": scorer.feedback(),
        "decisions": ann.decisions,
        "chart": ann.chart,
        "summary": [summarise(ann.decisions, scorer, p) for p in range(n)] if scorer.mode != "off" else [],
        "winners": list(game.winners) if game.over else None,
    }


def watch(
    rules: Ruleset, specs: Sequence[str], seed: int | None, allow_cmd: bool = False, solver: Solver | None = None
) -> dict[str, Any]:
    """Agents play one game; it comes back annotated, as :func:`analyse` gives it. With a
    ``solver``, what the game needs solved is solved there first (:class:`Pending` until then)."""
    n = len(specs)
    if not 2 <= n <= MAX_WEB_PLAYERS:
        raise WebError(f"{n} agents: watch 2 to {MAX_WEB_PLAYERS} agents, one per seat")
    agents = _agents(specs, rules, n, allow_cmd)
    source, seed = _dice_source(seed, None)
    try:
        wait_for(solver, _solve_jobs(agents, specs, rules, n, scorer=True))
        game = play_game(rules, agents, source, max_turns=10_000)
    except (AgentError, GameTooLongError) as e:
        raise WebError(f"the game cannot go on: {e}", 409) from None
    finally:
        close_agents(agents)  # a cmd: agent's program ends with its game
    out = analyse(game.events, [f"P{p + 1} {a.name}" for p, a in enumerate(agents)])
    out["seed"] = seed
    return out
