"""The afterstate trainer under faults: killed at chosen and random points and resumed, it
ends like a run that was never interrupted, with no evaluation row or TensorBoard point twice.

Every run is tiny (600 learner turns of a 16-unit net on a 500-point game the solver solves
in a second, 4-game evaluations and 2-game regret analyses), so a session takes a second or so.
"""

from __future__ import annotations

import csv
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.io import file_sha256
from tenk_env.policies.afterstate import read_checkpoint
from tenk_env.training import afterstate
from tenk_env.training.afterstate import AfterstateTrainer, resume_afterstate
from tenk_env.training.rundir import RunError

from support.sessions import Kill, fork_session

FIN = {
    "base": "classic",
    "name": "fin500",
    "target": 500,
    "entry_threshold": 150,
    "max_rolls": 3,
    "multiples": "flat",
    "flat_multiples": [500, 750, 1000],
    "tie": "shared",
}
# evaluations at about 100, 200, ... and at the end (601); saves at about 250, 500 and the end
TINY = {
    "algo": "afterstate",
    "name": "fin",
    "rules": FIN,
    "total_turns": 600,
    "train_every": 64,
    "grad_steps": 2,
    "hidden": [16],
    "max_game_turns": 60,
    "checkpoint_every": 250,
    "eval": {"every": 100, "games": 4, "opponents": ["hold:300"], "regret_games": 2},
}


def _config(tmp: Path, runs: Path) -> Path:
    path = tmp / "fin.yaml"
    path.write_text(yaml.safe_dump({**TINY, "runs_dir": str(runs)}))
    return path


@pytest.fixture(scope="module")
def ref_run(tmp_path_factory) -> Path:
    """An uninterrupted run; the faulted runs must end like it."""
    tmp = tmp_path_factory.mktemp("ref")
    assert main(["train", "--config", str(_config(tmp, tmp / "runs"))]) == 0
    return tmp / "runs" / "fin"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: v for k, v in r.items() if k != "seconds"} for r in csv.DictReader(f)]


def _scalars(tb: Path) -> dict[str, list[tuple[int, Any]]]:
    """Every scalar TensorBoard shows from ``tb``: the event files in the order they were
    written, a session-start event hiding the points at or past its step (what purge_step
    writes, and what TensorBoard honours). Points a resume failed to hide stay, twice."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    files = [[e for e in EventFileLoader(str(f)).Load()] for f in tb.glob("events.out.tfevents.*")]
    out: dict[str, list[tuple[int, Any]]] = {}
    for events in sorted((e for e in files if e), key=lambda e: e[0].wall_time):
        for e in events:
            if e.HasField("session_log") and e.session_log.status == e.session_log.START:
                out = {t: [p for p in pts if p[0] < e.step] for t, pts in out.items()}
            for v in e.summary.value:
                if v.HasField("simple_value"):
                    x = v.simple_value
                elif v.metadata.plugin_data.plugin_name == "scalars":
                    x = float(tensor_util.make_ndarray(v.tensor))
                else:
                    continue
                out.setdefault(v.tag, []).append((e.step, round(x, 5) if x == x else "nan"))  # nan != nan
    return out


def _files(d: Path) -> list[str]:
    return sorted(
        str(p.relative_to(d))
        for p in d.rglob("*")
        if p.is_file() and p.name != ".lock" and "tb" not in p.relative_to(d).parts
    )


# ---------------------------------------------------------------- sessions in forked children
def _run(argv: list[str], out: Path, kill: Kill | None) -> int:
    pid = fork_session(argv, out, kill)
    deadline = time.monotonic() + 120
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        assert time.monotonic() < deadline, "a session ran for 2 minutes"
        time.sleep(0.01)


def _nth(n: int, test: Callable[..., bool] = lambda *a, **k: True) -> Callable[..., bool]:
    """A predicate true at the n-th call that passes ``test``."""
    seen = [0]

    def pick(*a, **k) -> bool:
        if test(*a, **k):
            seen[0] += 1
            return seen[0] == n
        return False

    return pick


@pytest.mark.slow
def test_killed_at_chosen_and_random_points_ends_like_an_uninterrupted_run(ref_run, tmp_path):
    """SIGKILL before the first save, between an evaluation and the next save, inside an
    evaluation (its eval.csv rows written, its regret row not), at three seeded random games,
    inside the final evaluation and after the final save; each time resumed. The run ends with the
    turn count, files, weights, evaluation rows and TensorBoard points of the uninterrupted
    run (a resumed session replays from the saved state, random state included), and a
    further --resume of the finished run is refused and adds nothing."""
    run = tmp_path / "runs" / "fin"
    cfg = _config(tmp_path, tmp_path / "runs")
    rng = random.Random(24)
    games = [rng.randint(2, 6) for _ in range(3)]
    final = lambda writer, agent, rules, games, seed, step: step >= TINY["total_turns"]  # noqa: E731
    last = lambda t: t.turns >= TINY["total_turns"]  # noqa: E731
    kills: list[tuple[str, Kill]] = [
        ("after the second evaluation, before the first save", (AfterstateTrainer, "evaluate", "after", _nth(2))),
        ("after the first evaluation past the first save", (AfterstateTrainer, "evaluate", "after", _nth(3))),
        ("inside the second evaluation, before its regret row", (afterstate, "log_regret", "before", _nth(2))),
        *[(f"after game {g} of the session", (AfterstateTrainer, "play_game", "after", _nth(g))) for g in games],
        ("inside the final evaluation", (afterstate, "log_regret", "before", _nth(1, final))),
        ("after the final save", (AfterstateTrainer, "save_state", "after", _nth(1, last))),
    ]
    argv = ["train", "--config", str(cfg), "--no-progress"]
    logs = []
    for i, (where, kill) in enumerate(kills):
        out = tmp_path / f"session{i}.log"
        rc = _run(argv, out, kill)
        logs.append(out.read_text())
        assert rc == -signal.SIGKILL, (where, logs[-1])
        if i == 0:
            assert not (run / "state.pt").exists() and len(_rows(run / "eval.csv")) == 2
        argv = ["train", "--resume", str(run), "--no-progress"]
    w, meta = read_checkpoint(run / "last.npz")
    w_ref, meta_ref = read_checkpoint(ref_run / "last.npz")
    assert meta["turns"] == meta_ref["turns"] == 601
    assert all(np.array_equal(w[k], w_ref[k]) for k in w_ref)
    assert _files(run) == _files(ref_run)
    for name in ("eval.csv", "regret.csv"):
        rows = _rows(run / name)
        assert rows == _rows(ref_run / name), name
        assert [r["turns"] for r in rows] == ["106", "207", "311", "412", "516", "601"]
    scalars, ref_scalars = _scalars(run / "tb"), _scalars(ref_run / "tb")
    assert scalars == ref_scalars
    assert [s for s, _ in scalars["eval/win_rate/hold:300"]] == [106, 207, 311, 412, 516, 601]
    assert [s for s, _ in scalars["eval/regret"]] == [106, 207, 311, 412, 516, 601]

    assert "Traceback" not in "".join(logs)
    heads = [text.splitlines()[0] for text in logs[1:]]
    assert heads[0] == (
        f"resuming {run} from turn 0: it stopped before its first checkpoint, so training starts "
        "over in this directory (config.yaml kept)"
    )
    saves = [
        int(h.removeprefix(f"resuming {run} from turn ").removesuffix(" (state.pt)").replace(",", ""))
        for h in heads[1:]
    ]
    assert all(h == f"resuming {run} from turn {s:,} (state.pt)" for h, s in zip(heads[1:], saves))
    # killed past the first save, and again before the next; at last from the save before the end
    assert 250 <= saves[0] == saves[1] < 300 and saves == sorted(saves) and 500 <= saves[-1] < 600

    # the finished run: refused, and nothing changes
    before = {f: file_sha256(run / f) for f in _files(run)}
    out = tmp_path / "again.log"
    assert _run(argv, out, None) == 2
    assert " ".join(out.read_text().split()) == (
        f"error: run {str(run)!r} already finished at turn 601; train it further with --set total_turns=N (N > 601)"
    )
    assert {f: file_sha256(run / f) for f in _files(run)} == before


# ---------------------------------------------------------------- resume: damaged rows, more turns
def _copy(run: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(run, dest)
    return dest


@pytest.mark.parametrize(
    "name, fields",
    [
        ("eval.csv", "turns,opponent,games,win_rate,ci_low,ci_high,seconds"),
        ("regret.csv", "turns,games,regret,regret_ci_low,regret_ci_high,implied_win_rate,seconds"),
    ],
)
def test_a_damaged_row_is_named_with_the_fix(ref_run, tmp_path, name, fields):
    run = _copy(ref_run, tmp_path / "fin")
    path = run / name
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3] + ["garbage"] + lines[3:]) + "\n")
    before = {f: file_sha256(run / f) for f in _files(run)}
    with pytest.raises(RunError) as e:
        resume_afterstate(run, ["total_turns=700"], log=lambda m: None)
    assert str(e.value) == (
        f"evaluation rows {str(path)!r} are damaged at line 4; fix or delete the damaged lines "
        f"by hand (the header is {fields}), or move the file aside (mv {path} {path}.damaged) "
        "to resume without the earlier evaluation rows"
    )
    assert {f: file_sha256(run / f) for f in _files(run)} == before


def test_a_finished_run_trained_further_adds_each_evaluation_once(ref_run, tmp_path):
    assert b"\r" not in (ref_run / "eval.csv").read_bytes() + (ref_run / "regret.csv").read_bytes()
    run = _copy(ref_run, tmp_path / "fin")
    logs: list[str] = []
    res = resume_afterstate(run, ["total_turns=700"], log=logs.append)
    assert logs[0] == f"resuming {run} from turn 601 (state.pt) with total_turns=700"
    assert res.turns >= 700 and not res.interrupted
    turns = [r["turns"] for r in _rows(run / "eval.csv")]
    assert turns[:6] == ["106", "207", "311", "412", "516", "601"]
    assert len(turns) == 7 and int(turns[6]) == res.turns  # its final evaluation, once
    assert [r["turns"] for r in _rows(run / "regret.csv")] == turns
    assert [s for s, _ in _scalars(run / "tb")["eval/win_rate/hold:300"]] == [int(t) for t in turns]
    assert b"\r" not in (run / "eval.csv").read_bytes()
    assert yaml.safe_load((run / "done.yaml").read_text())["turns"] == res.turns


# ---------------------------------------------------------------- a failed start leaves nothing
def test_a_failed_start_leaves_no_run_behind(tmp_path, monkeypatch, capsys):
    """A start that fails after the run directory was made (here the trainer cannot allocate)
    removes what it wrote: the corrected command starts, and is not told the directory holds a
    run."""
    cfg = _config(tmp_path, tmp_path / "runs")
    run = tmp_path / "runs" / "fin"

    def no_memory(self, *a, **k):
        raise MemoryError("Unable to allocate the replay buffer")

    with monkeypatch.context() as m:
        m.setattr(AfterstateTrainer, "__init__", no_memory)
        with pytest.raises(MemoryError):
            main(["train", "--config", str(cfg), "--set", "total_turns=40", "--set", "eval.every=0"])
    assert [p.name for p in run.iterdir()] == [".lock"]
    capsys.readouterr()
    assert main(["train", "--config", str(cfg), "--set", "total_turns=40", "--set", "eval.every=0"]) == 0
    assert "already holds a run" not in capsys.readouterr().out
    assert (run / "state.pt").is_file()
