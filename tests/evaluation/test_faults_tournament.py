"""Tournaments under faults: a parent killed with ``kill -9`` takes its worker
processes with it, and a tournament killed at random points and resumed each time ends
with exactly an uninterrupted run's results and chunks.

The runs are real ``tenk tournament`` processes (``python -m tenk_env.cli.main``), killed with
SIGKILL; workers are found through /proc, so these tests need Linux."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tenk_env.cli.main import main

from support import ROOT

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds processes through /proc")


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state, ppid, ...), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and (f := _stat(int(d.name))) and int(f[1]) == pid:
            out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    f = _stat(pid)
    return f is not None and f[0] != "Z"  # a zombie has exited, waiting for its (new) parent to reap it


def _start(out: Path, log: Path, *args: str) -> subprocess.Popen:
    with open(log, "ab") as f:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tenk_env.cli.main",
                "tournament",
                *args,
                "--out",
                str(out),
                "--name",
                "t",
                "--no-progress",
            ],
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.STDOUT,
        )


def _kill(p: subprocess.Popen) -> list[int]:
    """SIGKILL ``p`` alone; return the workers it had that are still alive 5 s later."""
    workers = _children(p.pid)
    p.kill()
    p.wait()
    deadline = time.monotonic() + 5
    while (left := [w for w in workers if _alive(w)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for w in left:  # do not leave them running whatever the test says
        try:
            os.kill(w, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def test_workers_die_with_a_killed_parent(tmp_path):
    # the workers of a killed tournament kept running, then idled forever.
    p = _start(
        tmp_path,
        tmp_path / "log",
        "greedy",
        "dicenow",
        "hold:300",
        "--games",
        "20000",
        "--backend",
        "scalar",
        "--workers",
        "2",
    )
    try:
        deadline = time.monotonic() + 60
        while len(_children(p.pid)) < 2:
            assert p.poll() is None, (tmp_path / "log").read_text()
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
        time.sleep(0.5)  # busy with their first chunks
        workers = _children(p.pid)
        assert len(workers) == 2 and all(_alive(w) for w in workers)
        assert _kill(p) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_tournament_killed_at_random_points_resumes_to_the_uninterrupted_result(tmp_path, capsys):
    # Three bots (random among them: it draws its own numbers, differently on each engine),
    # 3 chunks of 100 deals per pairing: the first of each on the scalar engine in 2
    # workers (it saves game records), the other two on the batched engine. Killed at three
    # points of the run drawn at random, each seen in the files the run writes rather than
    # after a delay (a busy machine passes fewer points in a given time than an idle one, and a
    # whole session takes seconds): during start-up (a random moment before the manifest is
    # written), among the chunks (once the first or the first two of the three scalar chunks
    # are saved: the batched engine saves its six in a burst, the workers theirs one by one),
    # and once all are saved (as the ratings are computed, or once results.csv or results.json
    # is written, with the figures still to draw), resumed each time.
    args = ["greedy", "dicenow", "random", "--games", "600", "--seed", "5", "--save-games", "2", "--workers", "2"]
    assert main(["tournament", *args, "--out", str(tmp_path / "whole"), "--name", "t", "--no-progress"]) == 0
    capsys.readouterr()
    whole = tmp_path / "whole/t"
    total = len(list((whole / "chunks").glob("t*-d*.json")))
    assert total == 9
    scalar = {f.name for f in (whole / "chunks").glob("t*-d*.json") if json.loads(f.read_text())["engine"] == "scalar"}
    assert len(scalar) == 3

    out, log = tmp_path / "killed", tmp_path / "log"
    chunks = out / "t/chunks"

    def saved(names: set[str] | None = None) -> int:
        found = {f.name for f in chunks.glob("t*-d*.json")} if chunks.is_dir() else set()
        return len(found & names if names is not None else found)

    def signature(name: str) -> tuple[int, int] | None:
        try:
            st = (out / "t" / name).stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns  # every file is replaced whole: a new inode

    def session(point: Callable[[dict[str, Any]], bool], at_most: float | None = None) -> None:
        """A session killed once ``point(before)`` holds (``before``: the signatures of its
        outputs when it started), or ``at_most`` seconds after it started if sooner."""
        before = {name: signature(name) for name in ("manifest.json", "results.csv", "results.json")}
        p = _start(out, log, *args)
        try:
            t0 = time.monotonic()
            while not point(before) and (at_most is None or time.monotonic() < t0 + at_most):
                assert p.poll() is None, f"the session ended before its kill point: {log.read_text()[-3000:]}"
                assert time.monotonic() < t0 + 300, "a session made no progress for 5 minutes"
                time.sleep(0.002)
            assert p.poll() is None, f"the session ended before its kill point: {log.read_text()[-3000:]}"
            left = _kill(p)
            kills.append(saved())
            assert left == [], "a worker outlived its parent"
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()

    rng = random.Random(10)
    kills: list[int] = []  # chunks saved when each kill landed
    session(lambda before: signature("manifest.json") != before["manifest.json"], rng.uniform(0.05, 1.0))
    first = rng.choice([1, 2])
    session(lambda before: saved(scalar) >= first)
    output = rng.choice([None, "results.csv", "results.json"])
    session(lambda before: saved() == total and (output is None or signature(output) != before[output]))
    assert kills[0] == 0 and 0 < kills[1] < total and kills[2] == total, kills
    p = _start(out, log, *args)
    assert p.wait(timeout=300) == 0, log.read_text()[-3000:]

    # the same games to the last one: every chunk, the results and the ratings
    assert sorted(f.name for f in chunks.iterdir()) == sorted(f.name for f in (whole / "chunks").iterdir())
    for f in (whole / "chunks").iterdir():
        assert (chunks / f.name).read_bytes() == f.read_bytes(), f.name
    a, b = (json.loads((d / "results.json").read_text()) for d in (whole, out / "t"))
    for k in ("results", "ratings", "placed_above", "compared", "first_mover", "engines"):
        assert a[k] == b[k], k
    assert a["engines"] == ["batched+scalar"] * 3
    for f in ("results.csv", "ratings.csv", "manifest.json"):
        assert (out / "t" / f).read_text() == (whole / f).read_text()
    assert not [f for f in (out / "t").iterdir() if f.name.endswith(".tmp")]
