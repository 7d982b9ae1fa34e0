"""Ctrl-C (SIGINT, sent to the process group as a terminal sends it) and SIGTERM end a `tenk`
command with one line, no traceback, and the shell's exit code (130, 143); a command that
resumes says so, and how far it got."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import ROOT
from support.processes import running

# A suite started in the background by a script (`pytest ... &`) runs with SIGINT ignored, an
# ignored signal stays ignored across exec, and Python then installs no Ctrl-C handler: the
# command would never see the SIGINT. So it installs the handler Python installs at a terminal.
TENK = [
    sys.executable,
    "-c",
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from tenk_env.cli.main import main; sys.exit(main())",
]


def _interrupt(
    argv: list[str], ready, sig: int, *, group: bool = True, timeout: float = 120.0, env: dict | None = None
) -> tuple[int, str, str]:
    """Run `tenk ARGV` (``env``: variables to set), wait until ``ready()`` holds, send ``sig``;
    (exit code, stdout, stderr)."""
    p = subprocess.Popen(
        TENK + argv,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if p.poll() is not None or time.monotonic() > deadline:
                out, err = p.communicate(timeout=5) if p.poll() is not None else ("", "")
                pytest.fail(f"the command ended (or never got ready) before the signal: {p.returncode}\n{out}\n{err}")
            time.sleep(0.05)
        if group:
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return p.returncode, out, err


def _chunks(d: Path):
    return lambda: d.is_dir() and any(d.glob("*.json"))


@pytest.mark.parametrize(
    "sig, code, group, workers",
    [
        (signal.SIGINT, 130, True, 1),  # Ctrl-C at a terminal: the whole process group
        (signal.SIGTERM, 143, False, 1),  # `kill PID`
        (signal.SIGTERM, 143, True, 1),  # a service manager stopping the group
    ],
)
def test_interrupted_tournament_ends_with_one_line_and_resumes(tmp_path, sig, code, group, workers):
    argv = [
        "tournament",
        "greedy",
        "hold:300",
        "--games",
        "200000",
        "--backend",
        "scalar",
        "--workers",
        str(workers),
        "--no-progress",
        "--out",
        str(tmp_path),
        "--name",
        "t",
    ]
    chunks = tmp_path / "t" / "chunks"
    rc, out, err = _interrupt(argv, _chunks(chunks), sig, group=group)
    assert rc == code, (out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    last = out.strip().splitlines()[-1]
    saved = len(list(chunks.glob("*.json")))
    assert last == f"interrupted; {saved} of 1000 chunks saved; rerun the same command to resume", (out, err)


def test_a_command_that_does_not_resume_says_only_interrupted(tmp_path):
    """A long exact solve (nothing saved on the way) stopped by SIGTERM, as a service manager
    sends it, to the process alone. Its own empty cache: another test of the run may have
    solved classic into the shared one, and a cached solve ends before the signal."""
    t0 = time.monotonic()
    rc, out, err = _interrupt(
        ["solve", "game", "classic"],
        lambda: time.monotonic() - t0 > 5,
        signal.SIGTERM,
        group=False,
        env={"TENK_CACHE": str(tmp_path / "cache")},
    )
    assert rc == 143, (out, err)
    assert "Traceback" not in err, err
    assert out.strip().splitlines()[-1] == "interrupted", out


@pytest.mark.skipif(os.name != "posix", reason="a shell script and process groups")
def test_ctrl_c_of_a_tournament_with_workers_ends_its_cmd_agents_and_what_they_started(tmp_path):
    """Ctrl-C let each worker finish the chunks it held (half a minute with a cmd: agent) and
    then stopped only the agent program, not the server its wrapper script had started."""
    pids = tmp_path / "pids"
    wrap = tmp_path / "wrap.sh"
    sleeper = shlex.join([sys.executable, "-c", "import time; time.sleep(300)"])
    agent = ROOT / "tenk_env" / "policies" / "cmd_example.py"
    wrap.write_text(
        f"#!/bin/sh\n{sleeper} &\necho $$ $! >> {shlex.quote(str(pids))}\n"
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(agent))}\n"
    )
    wrap.chmod(0o755)
    started = lambda: [int(x) for x in pids.read_text().split()] if pids.is_file() else []  # noqa: E731
    argv = [
        "tournament",
        f"cmd:{wrap}",
        "greedy",
        "--games",
        "20000",
        "--backend",
        "scalar",
        "--workers",
        "2",
        "--no-progress",
        "--out",
        str(tmp_path),
        "--name",
        "t",
    ]
    # both workers have started their agent (a program and its child each)
    rc, out, err = _interrupt(argv, lambda: len(started()) >= 4, signal.SIGINT)
    assert rc == 130, (out, err)
    assert "Traceback" not in err and "Traceback" not in out, err
    assert re.fullmatch(
        r"interrupted; (\d+ of 100 chunks saved; )?rerun the same command to resume", out.strip().splitlines()[-1]
    ), (out, err)
    assert len(started()) >= 4
    assert [pid for pid in started() if running(pid)] == []
