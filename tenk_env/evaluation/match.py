"""Seat-balanced matches between agents, with honest statistics.

:func:`play_match` plays one 2-player match in the duplicate format: deal ``d`` is a dice
key, and it is played once with ``a`` in seat 0 and once with the seats swapped, both
times from the same key (:class:`~tenk_env.evaluation.play.KeyedDice`), so each agent meets, roll for
roll, the dice the other met in that seat. Seat advantage cancels exactly and most of the
dice luck cancels too. Tournaments (:mod:`tenk_env.evaluation.tournament`) use the same machinery for
N-player tables (:func:`play_table`).

Engines. Deals are played on the batched engine (:func:`play_deals_batched`, thousands of
games per call) when it has every agent's batched form, else on the scalar
one (:func:`play_deals`); :func:`task_engines` decides, ``backend`` overrides. Both deal
the same dice from the same key and keep the same per-game rows (:class:`Chunk`), so
agents that decide the same in both forms (the heuristic bots, PPO agents up to
floating-point ties) play the same games on either: tests/evaluation/test_tournament.py checks it
for every preset.

Reproducibility: deal ``d`` of a match with seed ``s`` has the dice key
:func:`deal_key` (s, d), whoever plays it, on whichever engine, in whichever process, and
chunk results are put back in deal order, so a result is a function of (rules, agents,
games, seed) only, never of ``workers`` or of how the games were batched.

Statistics (all fields of :class:`MatchResult`):

* ``win_rate_a`` counts a shared win (``tie: shared``) as half a win for each side; its 95%
  interval is Wilson's score interval (:func:`wilson`), over games. The two games of a deal
  share their dice, so they are not independent draws; treating them as such is the usual
  convention and errs on the wide side for duplicate play (the pair's outcomes are
  negatively correlated: the seat that got the good dice wins in both orders).
* ``first_seat_win_rate``: the share of games won by the player who took the first turn
  (seat 0, or the winner of the order roll under ``turn_order: highest_die``), with its
  own Wilson interval: the first-mover advantage the duplicate format cancels.
* ``points_per_turn_*``: the agent's final score over the turns it played (so penalties and
  gifts are in it); ``bust_rate_*``: the share of its turns that ended in a bust;
  ``mean_turns``: turns per game, all players' turns counted.
"""

from __future__ import annotations

import concurrent.futures.process
import math
import multiprocessing
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tenk_env.evaluation.play import GameTooLongError, KeyedDice, play_game
from tenk_env.game import Phase
from tenk_env.io import atomic_write_text
from tenk_env.policies.base import AgentError, Policy, close_agents, make_agent
from tenk_env.policies.batched import (
    BatchedHeuristic,
    BatchedMaxScore,
    BatchedPolicy,
    BatchedPPO,
    BatchedRandom,
    batched_agent,
)
from tenk_env.policies.external import GRACE
from tenk_env.records import save_jsonl
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.tables import get_tables
from tenk_env.threads import one_blas_thread
from tenk_env.vector import BatchedGame
from tenk_env.vector.layout import splitmix64

__all__ = [
    "MatchResult",
    "TableResult",
    "play_match",
    "play_table",
    "wilson",
    "agent_label",
    "batched_supports",
    "deal_key",
    "deal_keys",
    "seatings",
    "play_deals",
    "play_deals_batched",
    "run_pool",
    "run_chunks",
    "end_processes",
    "run_tasks",
    "task_engines",
    "Executor",
    "play_job",
    "CHUNK_DEALS",
    "BACKENDS",
]

#: deals per task sent to a worker: big enough that process overhead is noise (a few
#: hundred milliseconds of play), small enough that two workers finish together and that an
#: interrupted tournament loses little. Fixed, so that results never depend on it.
CHUNK_DEALS = 100


def wilson(k: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials.

    Integral ``k`` goes through ``scipy.stats.binomtest(...).proportion_ci(method="wilson")``.
    ``k`` may be a half-integer (a shared win counts half); scipy refuses those, so they use
    the same closed form scipy evaluates (checked against scipy on integers in the tests).
    """
    if n <= 0:
        return (0.0, 1.0)
    if float(k).is_integer():
        from scipy.stats import binomtest

        ci = binomtest(int(k), n).proportion_ci(confidence_level=confidence, method="wilson")
        return (float(ci.low), float(ci.high))
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + confidence / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def agent_label(agent: str | Policy) -> str:
    """The name an agent goes by in results: its spec string, else its ``name``."""
    return agent if isinstance(agent, str) else str(getattr(agent, "name", type(agent).__name__))


def deal_keys(seed: int, deals: np.ndarray | Sequence[int]) -> np.ndarray:
    """The dice keys (uint64) of deals ``deals`` of a match or tournament with seed ``seed``
    (:class:`~tenk_env.evaluation.play.KeyedDice` on the scalar engine, a slot's dice key on the batched
    one): output ``d + 1`` of the splitmix64 stream of ``base``, the first 64 bits of
    ``SeedSequence(seed)``. Vectorised: a batch of thousands of deals costs microseconds."""
    base = np.random.SeedSequence(int(seed)).generate_state(1, np.uint64)[0]
    return splitmix64(base, np.asarray(deals, np.int64).astype(np.uint64) + np.uint64(1))


def deal_key(seed: int, deal: int) -> int:
    """The dice key of one deal (see :func:`deal_keys`)."""
    return int(deal_keys(seed, [deal])[0])


def seatings(n: int) -> list[tuple[int, ...]]:
    """The seat orders every deal is played in: the ``n`` rotations, so every agent sits in
    every seat exactly once per deal (for 2 players: both orders)."""
    return [tuple((s + r) % n for s in range(n)) for r in range(n)]


# --------------------------------------------------------------------------- playing
class _CountingDice:
    """Passes KeyedDice through, counting per seat the turns played, the busts and who
    took the first turn. Busts are read from the same tables the game reads."""

    def __init__(self, inner: KeyedDice, n: int, tables):
        self.inner, self.rolls = inner, tables.rolls
        self.turns = [0] * n
        self.busts = [0] * n
        self.first: int | None = None

    def draw(self, game):
        dice = self.inner.draw(game)
        if game.phase is Phase.ROLL:
            p = game.current
            if game.rolls == 0:
                self.turns[p] += 1
                if self.first is None:
                    self.first = p
            info = self.rolls[tuple(sorted(dice))]
            # Game.roll gives an instant win and a four-2s wipe precedence over a bust.
            if info.bust and not (info.instant_win or info.lose_all):
                self.busts[p] += 1
        return dice

    def agent_rng(self) -> np.random.Generator:
        return self.inner.agent_rng()


@dataclass
class Chunk:
    """Per-game results of some deals of one table; agent-indexed arrays (index ``i`` is the
    table's ``i``-th agent, whatever seat it had)."""

    start: int  #: first deal
    stop: int  #: one past the last deal
    seating: np.ndarray  #: [g] index into seatings(n)
    scores: np.ndarray  #: [g, n] final scores
    win: np.ndarray  #: [g, n] share of the win (1, 0, or 1/k for a k-way shared win)
    turns: np.ndarray  #: [g] turns in the game, all players
    agent_turns: np.ndarray  #: [g, n]
    busts: np.ndarray  #: [g, n]
    first: np.ndarray  #: [g] agent that took the first turn

    def to_json(self) -> dict[str, Any]:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Chunk:
        return cls(
            start=int(d["start"]),
            stop=int(d["stop"]),
            seating=np.asarray(d["seating"], np.int64),
            scores=np.asarray(d["scores"], np.int64),
            win=np.asarray(d["win"], np.float64),
            turns=np.asarray(d["turns"], np.int64),
            agent_turns=np.asarray(d["agent_turns"], np.int64),
            busts=np.asarray(d["busts"], np.int64),
            first=np.asarray(d["first"], np.int64),
        )

    @staticmethod
    def concat(chunks: Sequence[Chunk]) -> Chunk:
        chunks = sorted(chunks, key=lambda c: c.start)
        for x, y in zip(chunks, chunks[1:]):
            if x.stop != y.start:
                raise ValueError(f"chunks do not tile the deals: {x.start}-{x.stop} then {y.start}-{y.stop}")
        cat = lambda name: np.concatenate([getattr(c, name) for c in chunks])  # noqa: E731
        return Chunk(
            chunks[0].start,
            chunks[-1].stop,
            *(cat(n) for n in ("seating", "scores", "win", "turns", "agent_turns", "busts", "first")),
        )


def play_deals(
    rules: Ruleset,
    agents: Sequence[Policy],
    seed: int,
    start: int,
    stop: int,
    *,
    record_deals: int = 0,
    record_dir: str | Path | None = None,
    labels: Sequence[str] | None = None,
) -> Chunk:
    """Deals ``start`` to ``stop - 1`` of a table of ``agents``, each in every seating.

    Deals below ``record_deals`` are recorded to ``record_dir/deal{d}_seating{s}.jsonl``
    (replayable with ``tenk replay``; the seat order is in the file name and in a ``names``
    line of ``seats.txt``)."""
    n = len(agents)
    orders = seatings(n)
    tables = get_tables(rules)
    rows: list[tuple] = []
    for d, key in zip(range(start, stop), deal_keys(seed, np.arange(start, stop)).tolist()):
        for s, order in enumerate(orders):
            record = d < record_deals and record_dir is not None
            dice = _CountingDice(KeyedDice(key), n, tables)
            game = play_game(rules, [agents[i] for i in order], dice, record=record)
            if record:
                out = Path(record_dir)
                save_jsonl(game.events, out / f"deal{d}_seating{s}.jsonl")
            seat_of = {i: seat for seat, i in enumerate(order)}
            share = 1.0 / len(game.winners)
            rows.append(
                (
                    s,
                    [game.scores[seat_of[i]] for i in range(n)],
                    [share if seat_of[i] in game.winners else 0.0 for i in range(n)],
                    game.turn,
                    [dice.turns[seat_of[i]] for i in range(n)],
                    [dice.busts[seat_of[i]] for i in range(n)],
                    order[dice.first or 0],
                )
            )
    if record_deals > start and record_dir is not None and labels is not None:
        # Which agent sat where in each recorded game (for `tenk replay --names`).
        atomic_write_text(
            Path(record_dir) / "seats.txt",
            "".join(f"seating{s}: {','.join(labels[i] for i in order)}\n" for s, order in enumerate(orders)),
        )
    g = len(rows)
    col = lambda j, dt: np.asarray([r[j] for r in rows], dt).reshape((g, n) if j in (1, 2, 4, 5) else (g,))  # noqa: E731
    return Chunk(
        start,
        stop,
        col(0, np.int64),
        col(1, np.int64),
        col(2, np.float64),
        col(3, np.int64),
        col(4, np.int64),
        col(5, np.int64),
        col(6, np.int64),
    )


def play_deals_batched(
    rules: Ruleset,
    agents: Sequence[str | Policy | BatchedPolicy],
    tasks: Sequence[dict[str, Any]],
    *,
    max_turns: int = 100_000,
) -> list[Chunk]:
    """The per-game rows (:class:`Chunk`) of the deals of several tasks of one table size,
    every game in one batch of the batched engine (agents in their batched forms,
    :func:`tenk_env.policies.batched.batched_agent`).

    A task is a dict with ``agents`` (indices into ``agents``, one per seat of the table;
    ``agents`` may hold None where no task uses it), ``seed``, ``start`` and ``stop``
    (deals), as :func:`chunk_tasks` makes them. Deal ``d`` is played in every rotation of
    the seats from dice key :func:`deal_key` (seed, d): the games :func:`play_deals` plays
    on the scalar engine, decision for decision, for agents that decide the same in both
    forms (every heuristic bot; PPO agents up to floating-point ties). Agents that draw
    random numbers draw from a generator of their own here, so their games differ from the
    scalar engine's (same distribution).
    """
    n = len(tasks[0]["agents"])
    orders = np.array(seatings(n), np.int64)
    rot = len(orders)
    # slot b: task task_of[b], one of its deals, in seating seating[b]
    size = [(t["stop"] - t["start"]) * rot for t in tasks]
    task_of = np.repeat(np.arange(len(tasks)), size)
    seating = np.concatenate([np.tile(np.arange(rot), t["stop"] - t["start"]) for t in tasks])
    keys = np.concatenate([np.repeat(deal_keys(t["seed"], np.arange(t["start"], t["stop"])), rot) for t in tasks])
    table = np.array([t["agents"] for t in tasks], np.int64)
    # seat_agent[b, q]: which of `agents` sits in seat q of game b
    seat_agent = table[task_of[:, None], orders[seating]]
    B = len(task_of)
    e = BatchedGame(rules, n, B, dice_keys=keys, auto_reset=False)
    rngs = [
        np.random.default_rng(np.random.SeedSequence(int(t["seed"]), spawn_key=(int(t["start"]), 1))) for t in tasks
    ]
    actions = np.zeros(B, np.int64)
    playing = sorted({int(i) for i in table.ravel()})
    bots = {i: batched_agent(agents[i]) for i in playing}
    while True:
        aw = np.flatnonzero(e.awaiting())
        if not len(aw):
            break
        who = seat_agent[aw, e.current[aw]]
        for i in playing:
            g = aw[who == i]
            if not len(g):
                continue
            bot = bots[i]
            if getattr(bot, "uses_rng", False):
                # drawn table by table, each table from its own generator, so that a chunk's games
                # do not depend on which chunks share its batch (a resumed tournament replays an
                # uninterrupted one exactly)
                tk = task_of[g]
                for k in np.unique(tk):
                    bot.act(e, g[tk == k], rngs[k], actions)
            else:
                bot.act(e, g, rngs[0], actions)
        e.step(actions, games=aw)
        if e.turn[aw].max() > max_turns:
            b = int(aw[np.argmax(e.turn[aw])])
            raise GameTooLongError.of(max_turns, e.scores[b].tolist(), [bots[i].name for i in seat_agent[b]])
    # back from seats to the table's agents: agent i of the table sat in seat seat_of[b, i]
    seat_of = np.argsort(orders[seating], axis=1)
    rows = np.arange(B)[:, None]
    win = e.winners.astype(np.float64)
    win /= win.sum(axis=1, keepdims=True)
    turns = e.turn.astype(np.int64)
    # Turns go round the table from the first mover, and the last turn is the one that ended
    # the game, whose player is still the one to move.
    first_seat = (e.current.astype(np.int64) - (turns - 1)) % n
    by_agent = lambda a: a[rows, seat_of]  # noqa: E731
    scores, win_a = by_agent(e.final_scores.astype(np.int64)), by_agent(win)
    agent_turns, busts = by_agent(e.seat_turns.astype(np.int64)), by_agent(e.game_busts.astype(np.int64))
    first = orders[seating, first_seat]
    out = []
    for k, t in enumerate(tasks):
        m = task_of == k
        out.append(
            Chunk(
                int(t["start"]),
                int(t["stop"]),
                seating[m],
                scores[m],
                win_a[m],
                turns[m],
                agent_turns[m],
                busts[m],
                first[m],
            )
        )
    return out


# --------------------------------------------------------------------------- processes
_WORKER_AGENTS: list[Policy] = []


def _init_worker(agents: Sequence[str | Policy]) -> None:
    global _WORKER_AGENTS
    _WORKER_AGENTS = [make_agent(a) for a in agents]


def _start_pool_worker(parent: int, init: Callable[..., None], *args: Any) -> None:
    # Ctrl-C reaches the whole process group; only the parent should handle it (stop
    # submitting, keep what finished), not every worker with a traceback of its own.
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    init(*args)
    # one thread each for torch (a PPO agent's weights loaded it) and NumPy's BLAS: the pool fills the cores
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    one_blas_thread()


def _die_with_parent(parent: int) -> None:
    """End this pool worker when ``parent`` (the process that started the pool) dies, however
    it dies. A parent killed with ``kill -9`` cannot shut its pool down, and its workers
    would finish their chunk and then wait forever for work that never comes.

    On Linux the kernel kills the worker when its parent process exits (``PR_SET_PDEATHSIG``).
    That covers the fork start method; under forkserver the worker's parent is the fork
    server (which exits when the pool's process does), and the parent may already have died
    before this runs, so a watchdog thread also checks every half second that the worker
    was not re-parented and that ``parent`` is alive, on every platform."""
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            PR_SET_PDEATHSIG = 1
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the watchdog alone does it
            pass
    ppid = os.getppid()

    def orphaned() -> bool:
        if os.getppid() != ppid:
            return True
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            return True
        except PermissionError:  # alive, owned by someone else (pid reuse): keep going
            pass
        return False

    def watch() -> None:
        while not orphaned():
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="die-with-parent", daemon=True).start()


def _work(task: dict[str, Any]) -> tuple[Any, Chunk]:
    agents = [_WORKER_AGENTS[i] for i in task["agents"]]
    return task["key"], play_deals(
        task["rules"],
        agents,
        task["seed"],
        task["start"],
        task["stop"],
        record_deals=task.get("record_deals", 0),
        record_dir=task.get("record_dir"),
        labels=task.get("labels"),
    )


def _mp_context():
    # fork starts workers in milliseconds; but a parent that has loaded torch (a PPO agent,
    # or training calling play_match) may hold OpenMP threads that deadlock a forked child,
    # so then the workers start from a clean interpreter instead.
    method = "forkserver" if "torch" in sys.modules or sys.platform != "linux" else "fork"
    if method not in multiprocessing.get_all_start_methods():
        method = "spawn"
    return multiprocessing.get_context(method)


#: seconds an interrupted run gives its worker processes to end, their agents' programs first
#: (a cmd: agent's process group gets GRACE seconds after SIGTERM, then SIGKILL), before they are killed
WORKER_GRACE = 2 * GRACE + 1.0


def end_processes(procs: Sequence[multiprocessing.Process], grace: float) -> None:
    """SIGTERM ``procs`` together, give them ``grace`` seconds between them, then SIGKILL those
    still running."""
    for p in procs:
        p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(1.0)


def _end_workers(before: set[int], managers: set[threading.Thread]) -> None:
    """SIGTERM the multiprocessing children of this process not in ``before``, wait up to
    :data:`WORKER_GRACE` seconds for them, then SIGKILL those still there; then wait for the
    process pools' manager threads not in ``managers`` to see them gone."""
    end_processes([p for p in multiprocessing.active_children() if p.pid not in before], WORKER_GRACE)
    # A pool's manager thread fails each future of a broken pool, and Python 3.11's raises when
    # one was cancelled meanwhile (printing a traceback): the pool cancels its futures as soon
    # as the interrupt reaches it, so the manager must be done first.
    for t in _pool_managers() - managers:
        t.join(WORKER_GRACE)


def _pool_managers() -> set[threading.Thread]:
    kind = getattr(concurrent.futures.process, "_ExecutorManagerThread", None)
    return {t for t in threading.enumerate() if kind is not None and isinstance(t, kind)}


@contextmanager
def _workers_end_first() -> Iterator[None]:
    """While the block runs, a Ctrl-C or SIGTERM first ends the worker processes started in
    it, then interrupts as it would have (in the main thread; elsewhere the block runs as is).

    An interrupted pool otherwise lets every worker finish the chunk it plays, and the one
    queued behind it, before the run may end: half a minute and more when the moves come
    from a cmd: program, with nothing on the screen. A worker ends its agents' programs on
    SIGTERM (tenk_env/policies/external.py), so none outlives the run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()
    before = {p.pid for p in multiprocessing.active_children()}
    managers = _pool_managers()
    old: dict[int, Any] = {}
    ending = []

    def handler(signum, frame):
        if os.getpid() != owner:
            # a worker forked while this was installed (they ignore SIGINT): SIGTERM ends it
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        prev = old[signum]
        if prev is signal.SIG_IGN:
            return
        if not ending:  # a second Ctrl-C while the workers end goes straight on
            ending.append(signum)
            _end_workers(before, managers)
        if callable(prev):
            prev(signum, frame)
        else:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for s in (signal.SIGINT, signal.SIGTERM):
        old[s] = signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def run_pool(
    tasks: Sequence[Any],
    work: Callable[[Any], Any],
    init: Callable[..., None],
    init_args: tuple,
    sent: Sequence[str | Policy],
    workers: int,
    on_result: Callable[[Any], None],
    on_error: Callable[[Any, ValueError], None] | None = None,
) -> None:
    """``on_result(work(task))`` for every task, in this process as each finishes. With
    ``workers`` <= 1 (or one task) everything runs here after ``init(*init_args)``; otherwise
    in a process pool whose workers run ``init(*init_args)`` first and die with this process.
    ``sent``: the agents the workers receive, checked for pickling before any work.

    A task that raises ends the run, unless ``on_error`` is given: then a task's ValueError
    (the project's errors for a bad agent: one that fails, an illegal move, a game that
    never ends) goes to ``on_error(task, error)`` and the other tasks still run. Anything
    else (a bug, a worker killed, Ctrl-C) still ends the run."""
    if not tasks:
        return

    def deliver(t: Any, result: Callable[[], Any]) -> None:
        try:
            r = result()
        except ValueError as e:
            if on_error is None:
                raise
            on_error(t, e)
        else:
            on_result(r)

    if workers <= 1 or len(tasks) == 1:
        init(*init_args)
        for t in tasks:
            deliver(t, lambda t=t: work(t))
        return
    _check_sendable(sent, "worker processes", " or use workers=1")
    with (
        _workers_end_first(),
        ProcessPoolExecutor(
            max_workers=min(workers, len(tasks)),
            mp_context=_mp_context(),
            initializer=_start_pool_worker,
            initargs=(os.getpid(), init, *init_args),
        ) as pool,
    ):
        pending = {pool.submit(work, t): t for t in tasks}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    deliver(pending.pop(f), f.result)
        except BaseException:
            # cancel_futures alone leaves queued work running once the pool has been busy a
            # while (an interrupted tournament then plays every queued chunk before it exits)
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def run_chunks(
    tasks: Sequence[dict[str, Any]],
    agents: Sequence[str | Policy],
    workers: int,
    on_done: Callable[[Any, Chunk], None] | None = None,
    on_error: Callable[[Any, ValueError], None] | None = None,
) -> dict[Any, Chunk]:
    """Run play tasks (dicts: key, agents (indices into ``agents``), rules, seed, start, stop)
    in ``workers`` processes (1: in this process); ``on_done(key, chunk)`` runs in this
    process as each finishes (saving, progress); ``on_error(key, error)``: see
    :func:`run_pool`. Returns {key: chunk}."""
    out: dict[Any, Chunk] = {}

    def done(result: tuple[Any, Chunk]) -> None:
        key, chunk = result
        out[key] = chunk
        if on_done:
            on_done(key, chunk)

    try:
        run_pool(
            tasks,
            _work,
            _init_worker,
            (list(agents),),
            agents,
            workers,
            done,
            None if on_error is None else lambda task, e: on_error(task["key"], e),
        )
    finally:
        # with one worker the agents played in this process: end their programs (cmd:) now, not
        # at exit; they stay usable, starting them again
        close_agents(_WORKER_AGENTS)
    return out


def default_workers() -> int:
    return max(1, min(2, os.cpu_count() or 1))


# --------------------------------------------------------------------------- results
@dataclass
class MatchResult:
    """One seat-balanced 2-player match of agent ``a`` against agent ``b`` (module docstring:
    what each figure means). ``ties`` are shared wins, counted half to each side in
    ``win_rate_a`` and its interval."""

    a: str
    b: str
    games: int
    wins_a: int
    wins_b: int
    ties: int
    win_rate_a: float
    ci_low: float
    ci_high: float
    mean_margin: float  #: mean final score of a minus b
    mean_turns: float  #: turns per game (both players' turns)
    first_seat_win_rate: float  #: share of games won by whoever moved first
    first_seat_ci_low: float = 0.0
    first_seat_ci_high: float = 1.0
    points_per_turn_a: float = 0.0
    points_per_turn_b: float = 0.0
    bust_rate_a: float = 0.0
    bust_rate_b: float = 0.0
    margin_sd: float = 0.0  #: standard deviation of the final margin over games
    seed: int = 0
    rules: str = ""
    rules_hash: str = ""
    seconds: float = field(default=0.0, compare=False)  #: wall time: not part of the result's identity
    backend: str = "scalar"

    @property
    def win_rate_b(self) -> float:
        return 1.0 - self.win_rate_a

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"{self.a} vs {self.b}: {self.games:,} games, {self.a} wins {self.win_rate_a:.1%} "
            f"[{self.ci_low:.1%}, {self.ci_high:.1%}], margin {self.mean_margin:+,.0f}, "
            f"{self.mean_turns:.1f} turns, first mover wins {self.first_seat_win_rate:.1%}"
        )


def match_result(
    a: str,
    b: str,
    c: Chunk,
    *,
    seed: int = 0,
    rules: Ruleset | None = None,
    seconds: float = 0.0,
    backend: str = "scalar",
) -> MatchResult:
    """Summarise the per-game results of a 2-player table (agent 0 = a, agent 1 = b)."""
    g = len(c.turns)
    win_a = c.win[:, 0]
    ties = int(np.count_nonzero((win_a > 0) & (win_a < 1)))
    wins_a = int(np.count_nonzero(win_a == 1))
    wins_b = g - wins_a - ties
    k = float(win_a.sum())
    lo, hi = wilson(k, g)
    first_win = float(c.win[np.arange(g), c.first].sum()) if g else 0.0
    flo, fhi = wilson(first_win, g)
    margin = (c.scores[:, 0] - c.scores[:, 1]).astype(np.float64)
    t = c.agent_turns.sum(axis=0)
    ppt = c.scores.sum(axis=0) / np.maximum(t, 1)
    bust = c.busts.sum(axis=0) / np.maximum(t, 1)
    return MatchResult(
        a=a,
        b=b,
        games=g,
        wins_a=wins_a,
        wins_b=wins_b,
        ties=ties,
        win_rate_a=k / g if g else 0.0,
        ci_low=lo,
        ci_high=hi,
        mean_margin=float(margin.mean()) if g else 0.0,
        mean_turns=float(c.turns.mean()) if g else 0.0,
        first_seat_win_rate=first_win / g if g else 0.0,
        first_seat_ci_low=flo,
        first_seat_ci_high=fhi,
        points_per_turn_a=float(ppt[0]),
        points_per_turn_b=float(ppt[1]),
        bust_rate_a=float(bust[0]),
        bust_rate_b=float(bust[1]),
        margin_sd=float(margin.std(ddof=1)) if g > 1 else 0.0,
        seed=int(seed),
        rules=rules.name if rules else "",
        rules_hash=rules.hash if rules else "",
        seconds=seconds,
        backend=backend,
    )


@dataclass
class TableResult:
    """An N-player free-for-all table played in every rotation of seats: per-agent figures."""

    agents: list[str]
    games: int
    wins: list[float]  #: shared wins split
    win_rate: list[float]
    ci_low: list[float]
    ci_high: list[float]
    mean_score: list[float]
    points_per_turn: list[float]
    bust_rate: list[float]
    mean_turns: float
    first_seat_win_rate: float
    first_seat_ci_low: float
    first_seat_ci_high: float


def table_result(labels: Sequence[str], c: Chunk) -> TableResult:
    g = len(c.turns)
    wins = c.win.sum(axis=0)
    ci = [wilson(float(w), g) for w in wins]
    first_win = float(c.win[np.arange(g), c.first].sum()) if g else 0.0
    flo, fhi = wilson(first_win, g)
    t = np.maximum(c.agent_turns.sum(axis=0), 1)
    return TableResult(
        list(labels),
        g,
        wins.tolist(),
        (wins / max(g, 1)).tolist(),
        [x[0] for x in ci],
        [x[1] for x in ci],
        c.scores.mean(axis=0).tolist(),
        (c.scores.sum(axis=0) / t).tolist(),
        (c.busts.sum(axis=0) / t).tolist(),
        float(c.turns.mean()) if g else 0.0,
        first_win / max(g, 1),
        flo,
        fhi,
    )


# --------------------------------------------------------------------------- entry points
#: memory the per-game results of one match or tournament may take: the bound on games
#: (a typo such as 1,000,000,000 games is refused at once, not after exhausting memory)
MEMORY_BUDGET = 4 << 30


def game_bytes(n: int) -> int:
    """Bytes a match keeps per game of ``n`` players: a :class:`Chunk` row (seating, turns,
    first, and scores, win, agent_turns, busts per player, 8 bytes each), twice (the
    chunks, then their concatenation)."""
    return 2 * 8 * (3 + 4 * n)


def deal_count(games: int, n: int) -> int:
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 2:
        raise ValueError(
            f"games = {games!r}: a seat-balanced match needs at least 2 games (one deal played in both seat orders)"
        )
    deals = -(-int(games) // n)
    most = MEMORY_BUDGET // game_bytes(n) // n
    if deals > most:
        raise ValueError(
            f"games = {int(games):,}: a match keeps a row of results per game in memory "
            f"({game_bytes(n)} bytes each), so it would need {deals * n * game_bytes(n) / 1e9:,.1f} GB; "
            f"give at most {most * n:,} games (a {MEMORY_BUDGET >> 30} GiB budget)"
        )
    return deals


def _seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed = {seed!r}: give a whole number at least 0")
    return int(seed)


def chunk_tasks(
    key_prefix: Any,
    rules: Ruleset,
    agent_idx: Sequence[int],
    seed: int,
    deals: int,
    record_deals: int = 0,
    record_dir: str | Path | None = None,
    labels: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The tasks of one table: deals split into fixed chunks of :data:`CHUNK_DEALS`."""
    return [
        dict(
            key=(key_prefix, s),
            rules=rules,
            agents=list(agent_idx),
            seed=int(seed),
            start=s,
            stop=min(s + CHUNK_DEALS, deals),
            record_deals=record_deals if s < record_deals else 0,
            record_dir=str(record_dir) if record_dir else None,
            labels=list(labels) if labels else None,
        )
        for s in range(0, deals, CHUNK_DEALS)
    ]


class ProgressLine:
    """A rich progress bar counting games, or nothing."""

    def __init__(self, total: int, description: str, enabled: bool):
        self.bar = None
        if enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("games"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                transient=False,
            )
            self.task = self.bar.add_task(description, total=total)

    def __enter__(self):
        if self.bar:
            self.bar.__enter__()
        return self

    def advance(self, k: int) -> None:
        if self.bar:
            self.bar.advance(self.task, k)

    def __exit__(self, *exc):
        if self.bar:
            self.bar.__exit__(*exc)


def batched_supports(a: str | Policy) -> bool:
    """Whether the batched engine plays this agent with its own batched code (the
    heuristic bots, maxscore, random, PPO agents); anything else it would ask game by game, at
    scalar speed, so ``backend="auto"`` gives those to the scalar engine."""
    try:
        return isinstance(batched_agent(a), (BatchedHeuristic, BatchedMaxScore, BatchedRandom, BatchedPPO))
    except (ValueError, TypeError, FileNotFoundError):
        return False


BACKENDS = ("auto", "batched", "scalar")
#: games per batch of the batched engine: enough to amortise each call over the games,
#: few enough that an interrupted tournament loses little
BATCH_GAMES = 4096


def task_engines(tasks: Sequence[dict[str, Any]], agents: Sequence[str | Policy], backend: str) -> list[str]:
    """The engine ("batched" or "scalar") each task is played on. ``backend``: "scalar",
    "batched" (every task it can: game records need the scalar engine) or "auto" (batched
    when it plays every agent of the task natively, see :func:`batched_supports`). For
    agents that decide the same in both forms the engines play the same games (same deal
    keys, same dice), so the choice changes the speed, not the result."""
    if backend not in BACKENDS:
        raise ValueError(f"backend = {backend!r}: choose one of {', '.join(BACKENDS)}")
    native: dict[int, bool] = {}

    def engine(t: dict[str, Any]) -> str:
        if backend == "scalar" or t.get("record_deals"):
            return "scalar"
        if backend == "auto":
            for i in t["agents"]:
                if i not in native:
                    native[i] = batched_supports(agents[i])
                if not native[i]:
                    return "scalar"
        return "batched"

    return [engine(t) for t in tasks]


class Executor(Protocol):
    """Somewhere else to play chunks (other processes, other machines: scripts/ray_runtime.py's
    RayExecutor sends them to Ray tasks). ``run(fn, jobs, on_result)`` calls
    ``on_result(fn(job))`` in this process for every job, in any order, as each finishes;
    ``fn`` is a module-level function (:func:`play_job`)."""

    def run(self, fn: Callable[[Any], Any], jobs: Sequence[Any], on_result: Callable[[Any], None]) -> None: ...


def _batched_groups(batched: Sequence[dict[str, Any]], batch_games: int) -> list[list[dict[str, Any]]]:
    """Batched tasks in the groups one batch of the engine plays: consecutive tasks up to
    ``batch_games`` games (the last group may hold fewer)."""
    groups: list[list[dict[str, Any]]] = []
    group: list[dict[str, Any]] = []
    size = 0
    for k, t in enumerate(batched):
        group.append(t)
        size += (t["stop"] - t["start"]) * len(t["agents"])
        if size >= batch_games or k == len(batched) - 1:
            groups.append(group)
            group, size = [], 0
    return groups


def _check_sendable(agents: Sequence[str | Policy], where: str, alternative: str = "") -> None:
    """Every agent object (not a spec string) pickles, or AgentError before any work."""
    for a in agents:
        if not isinstance(a, str):
            try:
                pickle.dumps(a)
            except Exception as e:  # noqa: BLE001 - any pickling failure means the same thing
                raise AgentError(
                    f"agent {agent_label(a)!r} cannot be sent to {where} ({e}); give it as a spec string{alternative}"
                ) from None


def run_tasks(
    tasks: Sequence[dict[str, Any]],
    agents: Sequence[str | Policy],
    engines: Sequence[str],
    *,
    workers: int = 1,
    on_done: Callable[[Any, Chunk], None] | None = None,
    batch_games: int = BATCH_GAMES,
    executor: Executor | None = None,
    on_error: Callable[[Any, ValueError], None] | None = None,
) -> dict[Any, Chunk]:
    """Play tasks (as :func:`chunk_tasks` makes them) on their engines (as
    :func:`task_engines` picks them, one per task): batched tasks in this process, up to
    ``batch_games`` games per batch (:func:`play_deals_batched`), scalar
    tasks through :func:`run_chunks` in ``workers`` processes. ``on_done(key, chunk)`` runs
    as each chunk is ready. ``on_error(key, error)``: a task whose agent fails (a ValueError,
    see :func:`run_pool`) is reported there and the others still run; without it, the first
    failure ends the run.

    With an ``executor`` (:class:`Executor`), every batch of batched tasks (the same groups
    as here) and every scalar task is one job of :func:`play_job`, run wherever the executor
    runs them (``workers`` is then unused); the chunks are the ones this process would play,
    to the last game. (The executor decides what a failing job does: ``on_error`` is not used.)"""
    batched = [t for t, e in zip(tasks, engines) if e == "batched"]
    scalar = [t for t, e in zip(tasks, engines) if e == "scalar"]
    out: dict[Any, Chunk] = {}
    if executor is not None:
        _check_sendable(agents, "the executor's workers")
        run = os.urandom(8).hex()  # the workers' agent cache holds one run's agents at a time
        sent = list(agents)
        jobs = [dict(kind="batched", run=run, agents=sent, tasks=g) for g in _batched_groups(batched, batch_games)] + [
            dict(kind="scalar", run=run, agents=sent, tasks=[t]) for t in scalar
        ]

        def got(result: list[tuple[Any, Chunk]]) -> None:
            for key, chunk in result:
                out[key] = chunk
                if on_done:
                    on_done(key, chunk)

        executor.run(play_job, jobs, got)
        return out
    if batched:
        used = sorted({i for t in batched for i in t["agents"]})
        bots = [batched_agent(a) if i in used else None for i, a in enumerate(agents)]

        def play(group: list[dict[str, Any]]) -> None:
            try:
                chunks = play_deals_batched(group[0]["rules"], bots, group)
            except ValueError as e:
                if on_error is None:
                    raise
                if len(group) == 1:
                    on_error(group[0]["key"], e)
                else:
                    # a chunk's games do not depend on the batch it shares, so each task alone
                    # plays the same games, and only the failing ones are reported
                    for task in group:
                        play([task])
                return
            for task, chunk in zip(group, chunks):
                out[task["key"]] = chunk
                if on_done:
                    on_done(task["key"], chunk)

        for group in _batched_groups(batched, batch_games):
            play(group)
    out.update(run_chunks(scalar, agents, workers, on_done, on_error))
    return out


#: the agents :func:`play_job` built, for the run (one call of run_tasks) it built them for
_JOB_AGENTS: dict[str, dict[str, Any]] = {}


def play_job(job: dict[str, Any]) -> list[tuple[Any, Chunk]]:
    """One job of :func:`run_tasks` with an executor, wherever it runs: ``kind`` "batched"
    (a group of tasks in one batch of the batched engine) or "scalar" (one task on the scalar
    engine). Agents are built once per worker and run, as the local path builds them once per
    run (batched forms) or per worker process (scalar agents). Returns [(key, chunk)]."""
    cache = _JOB_AGENTS.get(job["run"])
    if cache is None:
        _JOB_AGENTS.clear()
        cache = _JOB_AGENTS[job["run"]] = {"batched": {}, "scalar": None}
    agents, tasks = job["agents"], job["tasks"]
    if job["kind"] == "batched":
        bots = cache["batched"]
        for i in sorted({i for t in tasks for i in t["agents"]}):
            if i not in bots:
                bots[i] = batched_agent(agents[i])
        chunks = play_deals_batched(tasks[0]["rules"], [bots.get(i) for i in range(len(agents))], tasks)
        return [(t["key"], c) for t, c in zip(tasks, chunks)]
    if cache["scalar"] is None:
        cache["scalar"] = [make_agent(a) for a in agents]
    out = []
    for task in tasks:
        playing = [cache["scalar"][i] for i in task["agents"]]
        out.append(
            (
                task["key"],
                play_deals(
                    task["rules"],
                    playing,
                    task["seed"],
                    task["start"],
                    task["stop"],
                    record_deals=task.get("record_deals", 0),
                    record_dir=task.get("record_dir"),
                    labels=task.get("labels"),
                ),
            )
        )
    return out


def play_match(
    rules: Ruleset | str,
    a: str | Policy,
    b: str | Policy,
    games: int,
    seed: int,
    workers: int = 1,
    progress: bool = False,
    *,
    save_games: int = 0,
    save_dir: str | Path | None = None,
    backend: str = "auto",
) -> MatchResult:
    """A seat-balanced match: ``games`` (rounded up to even) games of ``a`` against ``b``.

    Each deal is played twice with the seats swapped and the same dice. ``save_games=K``
    writes the records of the first ``K`` deals (both seat orders) under ``save_dir``.

    ``backend`` (see :func:`task_engines`): "auto" plays on the batched engine when it has
    both agents' batched forms (heuristic bots, maxscore, random, PPO), else on the scalar engine;
    "scalar" and "batched" force one. Deterministic agents play the same games on either,
    so the result does not depend on it; an agent that draws random numbers (``random``)
    draws them from another generator on each. ``workers > 1`` plays scalar chunks in that
    many processes (agents given as specs are rebuilt in each worker; Policy objects must
    pickle); the result is the same for any ``workers``."""
    rules = load_ruleset(rules)
    deals = deal_count(games, 2)
    seed = _seed(seed)
    labels = [agent_label(a), agent_label(b)]
    return _play(
        "m",
        rules,
        [a, b],
        deals,
        seed,
        workers,
        progress,
        backend,
        save_games,
        save_dir,
        lambda c, dt, engine: match_result(labels[0], labels[1], c, seed=seed, rules=rules, seconds=dt, backend=engine),
    )


def play_table(
    rules: Ruleset | str,
    agents: Sequence[str | Policy],
    games: int,
    seed: int,
    workers: int = 1,
    progress: bool = False,
    *,
    backend: str = "auto",
) -> TableResult:
    """An N-player free-for-all of ``agents``, every deal played in each of the N seat
    rotations (``games`` rounded up to a multiple of N); ``backend`` as in :func:`play_match`."""
    rules = load_ruleset(rules)
    labels = [agent_label(x) for x in agents]
    return _play(
        "t",
        rules,
        list(agents),
        deal_count(games, len(agents)),
        _seed(seed),
        workers,
        progress,
        backend,
        0,
        None,
        lambda c, dt, engine: table_result(labels, c),
    )


def _play(
    prefix: str,
    rules: Ruleset,
    agents: list,
    deals: int,
    seed: int,
    workers: int,
    progress: bool,
    backend: str,
    save_games: int,
    save_dir: str | Path | None,
    result: Callable[[Chunk, float, str], Any],
):
    n = len(agents)
    for x in agents:
        make_agent(x).check(rules, n)  # fail here, in this process, with the agent's own message
    if save_games and save_dir is None:
        raise ValueError("save_games needs save_dir: where to write the game records")
    labels = [agent_label(x) for x in agents]
    tasks = chunk_tasks(prefix, rules, list(range(n)), seed, deals, save_games, save_dir, labels)
    engines = task_engines(tasks, agents, backend)
    t0 = time.perf_counter()
    with ProgressLine(n * deals, " vs ".join(labels), progress) as bar:
        chunks = run_tasks(tasks, agents, engines, workers=workers, on_done=lambda k, c: bar.advance(len(c.turns)))
    return result(Chunk.concat(list(chunks.values())), time.perf_counter() - t0, "+".join(sorted(set(engines))))
