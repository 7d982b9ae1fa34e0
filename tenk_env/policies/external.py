"""``cmd:COMMAND``: an agent in another process, speaking JSON lines on its stdin and stdout.

Any program in any language can play wherever a spec goes (``tenk ffa``, ``tenk tournament``,
``tenk analyze``, ``gym.make(..., opponents=[...])``): tenk starts it, writes it one JSON
object per line, and reads one JSON object per line back. ``COMMAND`` is split as a shell
would (:func:`shlex.split`, no shell runs it) and started in the current directory, so quote
the whole spec: ``tenk ffa 'cmd:python -m tenk_env.policies.cmd_example'``.

Protocol (version :data:`PROTOCOL`)
-----------------------------------
Lifecycle. The process starts on the first decision asked of the agent (building the agent,
or checking a tournament config, starts nothing). tenk writes:

1. ``{"type": "hello", "protocol": 1, "rules": {...}, "n_players": N, "n_actions": A,
   "obs_version": V, "obs_labels": [...]}``: the ruleset's fields
   (:meth:`Ruleset.to_dict <tenk_env.rules.Ruleset.to_dict>`), the player count, the size of
   the action space and the name of every observation index. **No answer**: the agent
   reads it and waits for the next line. A new hello comes whenever a later game has
   another ruleset or player count.
2. ``{"type": "decide", "seat": i, "obs": [...], "mask": [...], "legal": [...], "state": {...}}``
   for every decision, the agent's own turns in every seat it plays. **One answer line**:
   ``{"action": a}``, an integer from ``legal``. Other keys of the answer are ignored.

At the end tenk closes the process's stdin: the agent should exit when its input ends. One
that has not exited :data:`GRACE` seconds later is terminated (SIGTERM), then killed. Both
signals go to its whole process group, so what it started (the program a wrapper script runs,
a server) ends with it, even when the agent itself has already exited.

Fields of ``decide``:

* ``seat``: the seat to move (0-based), the observer of ``obs``.
* ``obs``: the observation the environments give (:func:`tenk_env.obs.encode`, float32
  values as JSON numbers): seats in it count from the observer. ``hello.obs_labels`` names
  every index; :mod:`tenk_env.obs` documents the layout.
* ``mask``: 0/1 over the ``n_actions`` actions (:func:`tenk_env.obs.legal_mask`).
* ``legal``: the legal actions, ascending, each ``{"action": a, "keep": [faces], "points": p,
  "end": bool, "label": "keep 1 5 (150) and roll on"}``: the dice set aside and their
  points, whether the move ends the turn (banks). Actions are ``keep_mask + 64 * end``,
  the keep-mask over the sorted roll. At a piggyback choice the two entries are ``128``
  (take over the dice and total the last banker left) and ``129`` (start fresh), with
  ``keep: []``, ``points: 0`` and ``end: false``.
* ``state``: the position in plain words, seats by number (seat 0 first): ``phase``
  (``"decide"``: a roll awaits a keep; ``"piggyback"``), ``turn``, ``target``, ``scores``,
  ``on_board``, ``busts_in_row``, ``turn_total``, ``dice`` (the roll, sorted; ``[]`` at a
  piggyback choice), ``dice_left`` (dice not set aside this turn), ``rolls`` (this turn),
  ``max_rolls`` (0: unlimited), ``final_round``, ``trigger`` (the seat that started it, or
  null), ``final_turns_left``, ``piggy`` (``{"dice": n, "total": t}`` at a piggyback
  choice, else null).

Timeout. Each answer must come within ``TENK_CMD_TIMEOUT`` seconds (default
:data:`DEFAULT_TIMEOUT`), the first one included, so a slow start-up counts against it.

Errors. Every failure raises :class:`~tenk_env.registry.AgentError` naming the agent (its
``cmd:...`` spec), what went wrong and the fix, before the game is touched: a command that
cannot start; a process that exits before answering (its exit status and last stderr lines);
no answer in time (the process is then stopped); an answer that is not a JSON object with an
integer ``action``; an action that is not legal here (the message lists the legal ones). The
process is then stopped and the agent stays failed: later decisions raise the same error at
once (a tournament worker does not wait out a hang's timeout again for every chunk) until
:meth:`CmdAgent.close`.

Randomness. tenk hands the process no random generator: a seeded match is reproducible only
if the program seeds its own. Saved games are keyed by the program file the command names
(:func:`tenk_env.policies.base.command_file`): edit it and tournaments replay its tables. A
command that names no file is keyed by its text: rerun with ``--fresh`` after changing it. So
are files the program reads without the command naming them: the program a wrapper script
runs, a model it loads. Tournaments say so in a note when the file is a script
(:func:`is_script`).

Write logs to stderr, never stdout: stdout carries answers only. tenk keeps the last
:data:`STDERR_LINES` lines of stderr for its error messages, read as they come, so a chatty
agent never blocks. The process gets ``PYTHONUNBUFFERED=1``, so a Python agent's prints
are not held back; other languages must flush after each answer. It runs in a process
group of its own: a Ctrl-C at the terminal reaches tenk alone, which then closes it. It is
closed when its agent is, when the agent is collected, when the interpreter (or a worker
process) exits, and on a SIGTERM that would otherwise end the process at once
(:func:`_guard_sigterm`). Only a ``kill -9`` of tenk leaves it running (with its input closed).

A :class:`CmdAgent` pickles as its command, with no process: worker processes start their own.
"""

from __future__ import annotations

import codecs
import collections
import json
import math
import multiprocessing.util
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.game import Game, Phase
from tenk_env.obs import (
    OBS_VERSION,
    PIGGYBACK_TAKE,
    decode_action,
    encode,
    illegal_reason,
    legal_mask,
    n_actions,
    obs_labels,
)
from tenk_env.registry import AgentError, env_seconds, legal_actions
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep

__all__ = [
    "CmdAgent",
    "make_cmd",
    "PROTOCOL",
    "DEFAULT_TIMEOUT",
    "TIMEOUT_ENV",
    "GRACE",
    "STDERR_LINES",
    "answer_timeout",
    "is_script",
]

#: version of the protocol in the module docstring, sent in the hello
PROTOCOL = 1
#: seconds an answer may take unless TENK_CMD_TIMEOUT says otherwise
DEFAULT_TIMEOUT = 30.0
TIMEOUT_ENV = "TENK_CMD_TIMEOUT"
#: seconds a process gets to exit once its stdin is closed (and its process group, again, after SIGTERM)
GRACE = 2.0
#: seconds to wait, once its process group is gone, for the readers to reach the end of its output
READ_GRACE = 10.0
#: seconds to wait for the readers when something outside its group may still hold its pipes
STUCK_READ_GRACE = 0.5
#: stderr lines kept for error messages (and how many of them a message shows)
STDERR_LINES, SHOWN_LINES = 200, 5
_EXAMPLE = "cmd:python -m tenk_env.policies.cmd_example"


def answer_timeout() -> float:
    """The seconds an answer may take: ``TENK_CMD_TIMEOUT``, else :data:`DEFAULT_TIMEOUT`."""
    return env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, "an external (cmd:) agent may take to answer one decision")


#: the longest answer line read whole (a longer one is cut, and fails as not JSON)
MAX_LINE = 1 << 20


def _read_lines(pipe, sink: queue.Queue) -> None:
    # a thread per pipe: a blocking read never holds up the game, and a wait on the queue can
    # time out, which a read on a pipe cannot
    try:
        while line := pipe.readline(MAX_LINE):
            sink.put(line)
    except (OSError, ValueError):  # the pipe closed under us while the process was stopped
        pass
    sink.put(None)


def _keep_tail(pipe, tail: collections.deque) -> None:
    # whatever is there, as it comes (read1), so that neither a line without end nor a flood
    # of lines holds more than the tail in memory
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
    part = ""
    try:
        while chunk := pipe.buffer.read1(8192):
            *lines, part = (part + decode(chunk)).split("\n")
            tail.extend(x[:500] for x in lines)
            part = part[-500:]
    except (OSError, ValueError):
        pass
    if part:
        tail.append(part)


#: process groups can be signalled (POSIX); elsewhere only the process itself is
_GROUPS = hasattr(os, "killpg")
#: the processes this interpreter started and has not closed (a forked child inherits the
#: entries and skips them: :meth:`_Process.owned`), for the SIGTERM handler
_RUNNING: dict[int, _Process] = {}
#: one entry per program being started, not yet in _RUNNING; a SIGTERM then waits for the start
_STARTING: list[int] = []
#: a SIGTERM that came during a start (the start then handles it)
_DEFERRED: list[int] = []


def _wait_until(done: Callable[[], bool], timeout: float) -> bool:
    """Whether ``done()`` holds within ``timeout`` seconds, asked after pauses that start at a
    millisecond (a prompt exit costs no more) and grow to 50 ms (a slow one costs no CPU)."""
    deadline = time.monotonic() + timeout
    pause = 0.001
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(pause, left))
        pause = min(2 * pause, 0.05)
    return True


def _alive_group(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a running process."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):  # none, or only another user's: none of ours to stop
        return False
    # A signal reaches zombies too: the processes of a wrapper whose shell has exited are
    # reaped by init, which takes its time (or never comes, in a container whose first process
    # reaps nothing). On Linux, look for a process of the group that is not one.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as f:
                stat = f.read()
            state, _, group = stat[stat.rindex(b")") + 2 :].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state not in (b"Z", b"X"):
            return True
    return False


class _Process:
    """One running program, its process group and its pipes. Holds no reference to its agent,
    so the agent's finalizer can close it when the agent is collected."""

    def __init__(self, argv: list[str]):
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.pid = os.getpid()  # the process that owns it: a forked copy must not stop it
        self.closed = False
        _STARTING.append(1)
        try:
            # a session of its own: a Ctrl-C at the terminal does not reach it, and its process
            # group (its id is the program's pid) holds whatever the program starts, to end with it
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                bufsize=1,
                encoding="utf-8",
                errors="replace",
                env=env,
                start_new_session=True,
            )
            _RUNNING[id(self)] = self
        finally:
            _STARTING.pop()
            if _DEFERRED and not _STARTING:
                _DEFERRED.clear()
                _on_sigterm(signal.SIGTERM, None)
        self.lines: queue.Queue = queue.Queue()
        self.stderr: collections.deque = collections.deque(maxlen=STDERR_LINES)
        self.threads = [
            threading.Thread(
                target=_read_lines,
                args=(self.popen.stdout, self.lines),
                daemon=True,
                name=f"cmd-agent-{self.popen.pid}-stdout",
            ),
            threading.Thread(
                target=_keep_tail,
                args=(self.popen.stderr, self.stderr),
                daemon=True,
                name=f"cmd-agent-{self.popen.pid}-stderr",
            ),
        ]
        for t in self.threads:
            t.start()

    def owned(self) -> bool:
        return self.pid == os.getpid()

    def stderr_tail(self) -> str:
        """The last lines it wrote to stderr, for a message (read once it is closed: the
        stderr thread has then read everything)."""
        lines = [x for x in list(self.stderr) if x.strip()][-SHOWN_LINES:]
        return f"; its last stderr lines: {' | '.join(lines)}" if lines else "; it wrote nothing to stderr"

    def exited(self, timeout: float) -> bool:
        """Whether the program exited within ``timeout`` seconds. It is left unreaped, as a
        zombie: its pid, the id of its process group, cannot go to another process while the
        group is still to be signalled."""
        p = self.popen

        def gone() -> bool:
            if p.returncode is not None:
                return True
            if not hasattr(os, "waitid"):
                return p.poll() is not None
            try:
                return os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:  # reaped already (Popen records the status)
                p.poll()
                return True

        return _wait_until(gone, timeout)

    def end_group(self) -> bool:
        """SIGTERM its process group, give it :data:`GRACE` seconds, then SIGKILL it; reap the
        program. Whether the group is gone (else something in it could not be stopped). Only
        system calls and Popen's polling, no file objects: a signal handler calls it."""
        p = self.popen
        if not _GROUPS:
            steps = (p.terminate, p.kill)
            for stop in steps:
                if p.poll() is not None:
                    return True
                try:
                    stop()
                except OSError:
                    pass
                try:
                    p.wait(timeout=GRACE)
                except subprocess.TimeoutExpired:
                    continue
            return p.returncode is not None
        pg = p.pid

        def gone() -> bool:
            return p.poll() is not None and not _alive_group(pg)

        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pg, sig)
            except (ProcessLookupError, PermissionError):
                pass
            if _wait_until(gone, GRACE):
                return True
        return gone()

    def close(self, hurry: bool = False) -> None:
        """Close its stdin and give it :data:`GRACE` seconds to exit, then end its whole process
        group (:meth:`end_group`); ``hurry`` (a process that stopped answering): at once."""
        if self.closed or not self.owned():
            return
        self.closed = True
        p = self.popen
        try:
            p.stdin.close()
        except OSError:  # a broken pipe: it has exited already
            pass
        if not hurry:
            self.exited(GRACE)
        gone = self.end_group()
        _RUNNING.pop(id(self), None)
        # With its group gone its pipes end as soon as the readers have drained them: wait for
        # that (on a busy machine a second was not always enough, and the message then lacked
        # its last stderr lines). A process that left the group (a daemon that started a session
        # of its own) may hold them open for good: then waiting longer would only hang tenk.
        wait = READ_GRACE if gone else STUCK_READ_GRACE
        for t, f in zip(self.threads, (p.stdout, p.stderr)):
            t.join(timeout=wait)
            if t.is_alive():
                # closing a file that a thread is blocked reading waits for that read to end
                continue
            try:
                f.close()
            except OSError:
                pass


def _on_sigterm(signum, frame) -> None:
    """End the process groups of the programs this process started, then end the process as
    SIGTERM's default action does."""
    if _STARTING:
        # a program is starting (forked, not yet on the list): the start calls this again
        _DEFERRED.append(signum)
        return
    # closing ones too: a close under way may not have ended the group yet
    mine = [proc for proc in list(_RUNNING.values()) if proc.owned()]
    if _GROUPS:
        for proc in mine:  # all at once: the grace periods run side by side
            try:
                os.killpg(proc.popen.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
    for proc in mine:
        proc.end_group()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # elsewhere (a start in another thread took over the signal) the handler runs again in the
    # main thread, finds the groups ended, and ends the process
    os.kill(os.getpid(), signal.SIGTERM)


def _guard_sigterm() -> None:
    """Have a SIGTERM end this process's agent programs before it ends the process.

    Installed only where SIGTERM would otherwise end the process at once, with no cleanup:
    its default action, and in a worker process (multiprocessing), whose handler came with
    the fork from its parent (``tenk``'s raises an exception that the pool's worker loop
    catches, and the worker plays on). A process with a handler of its own (``tenk``'s main
    process, which then unwinds and closes its agents at exit) keeps it."""
    if threading.current_thread() is not threading.main_thread():
        return
    try:
        old = signal.getsignal(signal.SIGTERM)
    except (ValueError, AttributeError):  # no SIGTERM to handle on this platform
        return
    worker = multiprocessing.parent_process() is not None
    if old is signal.SIG_DFL or (worker and old not in (signal.SIG_IGN, _on_sigterm)):
        signal.signal(signal.SIGTERM, _on_sigterm)


def is_script(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is a script (its first bytes are ``#!``, or it ends ``.sh``, ``.bat`` or
    ``.cmd``): a wrapper, whose key (its own bytes) misses the program it runs."""
    if path is None:
        return False
    path = Path(path)
    if path.suffix.lower() in (".sh", ".bat", ".cmd"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _close_process(proc: _Process) -> None:
    proc.close()


class CmdAgent:
    """An agent played by another program (protocol in the module docstring).

    ``argv``: the program and its arguments; ``name``: what results call it (the spec,
    ``cmd:...``); ``timeout``: seconds per answer (None: :func:`answer_timeout`). Each agent
    owns at most one process, started on its first decision and ended by :meth:`close`,
    when the agent is collected, or when the interpreter (or a worker process) exits.
    """

    def __init__(self, argv: list[str], name: str | None = None, *, timeout: float | None = None):
        if not argv:
            raise AgentError(f"agent 'cmd' needs a command, e.g. {_EXAMPLE!r}")
        self.argv = [str(a) for a in argv]
        self.name = name or "cmd:" + shlex.join(self.argv)
        self._timeout_given = timeout
        self.timeout = answer_timeout() if timeout is None else float(timeout)
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise AgentError(f"agent {self.name!r}: timeout = {timeout!r}: give the seconds per answer, a number > 0")
        self._proc: _Process | None = None
        self._finalizer: weakref.finalize | None = None
        self._greeted: tuple[str, int] | None = None
        self._failed: str | None = None

    # ------------------------------------------------------------------ Policy protocol
    def check(self, rules: Ruleset, n_players: int) -> None:
        # a program that is not there is named before any game (the process starts later)
        prog = self.argv[0]
        if shutil.which(prog) is None:
            where = "is not a file" if os.sep in prog else "is not on PATH"
            if os.sep in prog and os.path.isfile(prog):
                where = "is not executable (chmod +x it, or start it through its interpreter)"
            raise AgentError(
                f"agent {self.name!r} cannot start: the program {prog!r} {where}; give a program "
                f"that exists, e.g. {_EXAMPLE!r}"
            )

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        return decode_action(game, self._ask(game))

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        return self._ask(game) == PIGGYBACK_TAKE

    # ------------------------------------------------------------------ the process
    def close(self) -> None:
        """End the process (a later decision starts a new one) and forget an earlier failure."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._finalizer = self._greeted = self._failed = None

    def _fail(self, problem: str, fix: str, *, tail: bool = False, hurry: bool = False) -> AgentError:
        """The error for ``problem``, with its ``fix``. The process is stopped (an agent that
        answers out of turn may have a second line waiting in the pipe, which the next
        decision would read as its answer) and later decisions fail with the same message.
        ``tail``: show its last stderr lines; ``hurry``: it stopped answering, SIGTERM at once."""
        proc = self._proc
        if proc is not None:
            proc.close(hurry=hurry)
        shown = proc.stderr_tail() if tail and proc is not None else ""
        self._failed = msg = f"agent {self.name!r} {problem}{shown}: {fix}"
        return AgentError(msg)

    def _start(self) -> _Process:
        proc = self._proc
        if proc is not None and proc.owned():
            return proc
        # a process inherited through fork belongs to the parent: start one of our own
        self._proc = self._greeted = None
        # before it starts: a SIGTERM that comes once it runs must find the handler that ends it
        _guard_sigterm()
        try:
            proc = _Process(self.argv)
        except OSError as e:
            why = e.strerror or str(e)
            raise self._fail(
                f"cannot start: {self.argv[0]!r}: {why}", f"give a program that exists and runs, e.g. {_EXAMPLE!r}"
            ) from None
        self._proc = proc
        self._finalizer = weakref.finalize(self, _close_process, proc)
        # multiprocessing workers leave through os._exit, past atexit: its own exit hook closes it there
        multiprocessing.util.Finalize(self, self._finalizer, exitpriority=10)
        return proc

    def _exited(self, proc: _Process, when: str) -> AgentError:
        p = proc.popen
        # left unreaped while it is waited for, so its pid still names its group when closing
        # ends that group; the status read after that is still the one it exited with
        code = None
        if proc.exited(GRACE):
            proc.close()
            code = p.returncode
        if code is None:
            status = "closed its input or output but kept running"
        elif code < 0:
            try:
                status = f"was killed by signal {signal.Signals(-code).name}"
            except ValueError:
                status = f"was killed by signal {-code}"
        else:
            status = f"exited with status {code}"
        return self._fail(
            f"{status} {when}",
            "run the command by hand and feed it the protocol's lines (tenk_env/policies/external.py) to see why",
            tail=True,
        )

    def _send(self, proc: _Process, msg: dict[str, Any], when: str) -> None:
        try:
            proc.popen.stdin.write(json.dumps(msg, separators=(",", ":")) + "\n")
            proc.popen.stdin.flush()
        except (OSError, ValueError):  # a broken pipe: it has exited
            raise self._exited(proc, when) from None

    def _ask(self, game: Game) -> int:
        if self._failed is not None:
            raise AgentError(self._failed)
        rules, n = game.rules, game.n_players
        legal = legal_actions(game)
        proc = self._start()
        seat = game.current
        # the hello asks for no answer: a program that ends early fails the decision it was sent
        # with, whether tenk notices at the hello (a broken pipe) or at the decision
        when = f"before answering a decision (seat {seat}, turn {game.turn})"
        if self._greeted != (rules.hash, n):
            self._send(
                proc,
                {
                    "type": "hello",
                    "protocol": PROTOCOL,
                    "rules": rules.to_dict(),
                    "n_players": n,
                    "n_actions": n_actions(rules),
                    "obs_version": OBS_VERSION,
                    "obs_labels": obs_labels(n),
                },
                when,
            )
            self._greeted = (rules.hash, n)
        self._send(
            proc,
            {
                "type": "decide",
                "seat": seat,
                "obs": encode(game, seat).tolist(),
                "mask": legal_mask(game).tolist(),
                "legal": legal,
                "state": _state(game),
            },
            when,
        )
        try:
            line = proc.lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._fail(
                f"did not answer within {self.timeout:g} s (seat {seat}, turn {game.turn}), so it was stopped",
                f'answer every decide line with one line such as {{"action": '
                f"{legal[0]['action']}}} and flush stdout, or allow more time with {TIMEOUT_ENV}=SECONDS",
                tail=True,
                hurry=True,
            ) from None
        if line is None:
            raise self._exited(proc, when)
        return self._action(game, line, legal)

    def _action(self, game: Game, line: str, legal: list[dict[str, Any]]) -> int:
        shown = line.strip()
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        try:
            answer = json.loads(line)
        except ValueError:
            answer = None
        a = answer.get("action") if isinstance(answer, dict) else None
        if isinstance(a, bool) or not isinstance(a, int):
            raise self._fail(
                f'answered {shown!r}, which is not a JSON object with an integer "action"',
                f'answer one line such as {{"action": {legal[0]["action"]}}} (and write logs to stderr, not stdout)',
            )
        if a not in {m["action"] for m in legal}:
            why = illegal_reason(game, a) or "not among the legal actions"
            moves = ", ".join(f"{m['action']} ({m['label']})" for m in legal)
            raise self._fail(
                f"played action {a}, which is illegal here ({why})", f"answer one of the legal actions: {moves}"
            )
        return a

    # ------------------------------------------------------------------ pickling
    def __reduce__(self):
        # the command, not the process: whoever unpickles it starts its own
        return (CmdAgent._rebuilt, (self.argv, self.name, self._timeout_given))

    @classmethod
    def _rebuilt(cls, argv: list[str], name: str, timeout: float | None) -> CmdAgent:
        return cls(argv, name, timeout=timeout)

    def __repr__(self) -> str:
        state = (
            "failed"
            if self._failed
            else ("running" if self._proc is not None and self._proc.owned() and not self._proc.closed else "idle")
        )
        return f"<CmdAgent {self.name!r} ({state})>"


def _state(game: Game) -> dict[str, Any]:
    piggy = game.piggy if game.phase is Phase.PIGGYBACK else None
    return {
        "phase": "piggyback" if game.phase is Phase.PIGGYBACK else "decide",
        "turn": game.turn,
        "target": game.rules.target,
        "scores": list(map(int, game.scores)),
        "on_board": list(map(bool, game.on_board)),
        "busts_in_row": list(map(int, game.busts_in_row)),
        "turn_total": int(game.turn_total),
        "dice": list(game.dice),
        "dice_left": int(game.dice_left),
        "rolls": int(game.rolls),
        "max_rolls": int(game.max_rolls),
        "final_round": bool(game.final_round),
        "trigger": game.trigger,
        "final_turns_left": int(game.final_turns_left) if game.final_round else None,
        "piggy": {"dice": int(piggy[0]), "total": int(piggy[1])} if piggy is not None else None,
    }


def make_cmd(arg: str | None) -> CmdAgent:
    """``cmd:COMMAND``: the program ``COMMAND`` (split as a shell would) as an agent."""
    if not arg or not arg.strip():
        raise AgentError(
            f"agent 'cmd' needs a command after the colon, e.g. {_EXAMPLE!r} (quote the whole spec in a shell)"
        )
    try:
        argv = shlex.split(arg)
    except ValueError as e:
        raise AgentError(f"agent 'cmd:{arg}': the command cannot be split into words ({e}); check its quotes") from None
    if not argv:
        raise AgentError(f"agent 'cmd:{arg}' needs a command, e.g. {_EXAMPLE!r}")
    return CmdAgent(argv, f"cmd:{arg}")
