"""tenk train under faults: kills, damaged files, copied directories, two writers.

Every run here is tiny (1,024 to 1,536 steps of a 16-unit network, 4-game evaluations on
the scalar engine), so the module's cost is mostly importing torch once.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.io import DirLock, LockedError, file_sha256
from tenk_env.policies.base import make_agent
from tenk_env.policies.ppo import CheckpointError, read_meta
from tenk_env.training.config import parse_config
from tenk_env.training.rundir import RunError
from tenk_env.training.trainer import Trainer, resume, train

from support import CONFIGS
from support.sessions import Kill, fork_session

TINY = {
    "name": "tiny",
    "rules": "classic",
    "seed": 5,
    "total_steps": 1024,
    "opponents": {"random": 1, "self": 1},
    "env": {"n_envs": 4, "backend": "dummy"},
    "ppo": {"policy": "mlp", "n_steps": 64, "batch_size": 256, "n_epochs": 1, "net_arch": [16]},
    "selfplay": {"snapshot_every": 256, "league_size": 2},
    "eval": {
        "every": 512,
        "games": 4,
        "opponents": ["random", "hold:300"],
        "best_by": "random",
        "final_games": 4,
        "backend": "scalar",
        "regret_games": 0,
    },
    "checkpoint": {"every": 256, "keep": 3},
}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """A finished 1,024-step run; tests work on copies of it."""
    runs = tmp_path_factory.mktemp("tiny")
    res = train(parse_config({**TINY, "runs_dir": str(runs)}), progress=False, log=lambda m: None)
    assert res.finished and res.step == 1024
    return runs / "tiny"


def _copy(run: Path, dest: Path) -> Path:
    shutil.copytree(run, dest)
    return dest


def _contents(d: Path) -> dict[str, str]:
    """Every file under ``d`` (but the lock file, which each taker rewrites) by content."""
    return {str(p.relative_to(d)): file_sha256(p) for p in sorted(d.rglob("*")) if p.is_file() and p.name != ".lock"}


def _damage_weights(path: Path) -> None:
    """Rewrite a checkpoint as a valid zip whose policy.pth is garbage."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["policy.pth"] = b"not torch weights " * 20
    with zipfile.ZipFile(path, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)


def _rows(run: Path) -> list[dict[str, str]]:
    import csv

    with open(run / "eval.csv", newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- defect 2: resume falls back
def test_resume_falls_back_to_the_newest_checkpoint_that_loads(tiny_run, tmp_path):
    run = _copy(tiny_run, tmp_path / "tiny")
    (run / "last.zip").unlink()  # e.g. a disk that filled up during the save
    _damage_weights(run / "checkpoints" / "step_0000001024.zip")
    rows_before = [r for r in _rows(run) if int(r["step"]) <= 768]
    logs: list[str] = []
    res = resume(run, ["total_steps=1280"], progress=False, log=logs.append)
    assert logs[0] == (
        f"resuming {run} from step 768 (checkpoints/step_0000000768.zip; last.zip is missing) with total_steps=1280"
    )
    assert logs[1].startswith(
        f"note: checkpoint {str(run / 'checkpoints' / 'step_0000001024.zip')!r} is damaged: "
        "its weights (policy.pth) are not a torch state dict (UnpicklingError: "
    )
    assert logs[1].endswith("); moved it aside to checkpoints/step_0000001024.zip.damaged")
    assert not any("--force" in line for line in logs)
    assert res.finished and res.step == 1280
    assert (run / "checkpoints" / "step_0000001024.zip.damaged").is_file()  # kept, out of the way
    assert read_meta(run / "last.zip")["num_timesteps"] == 1280
    # the evaluations up to the checkpoint stay as they were; the later ones are played again
    rows = _rows(run)
    assert rows[: len(rows_before)] == rows_before
    assert [(r["step"], r["kind"]) for r in rows[len(rows_before) :]] == [("1024", "eval")] * 2 + [
        ("1280", "final")
    ] * 2


def test_resume_of_a_copied_run_trains_in_the_copy(tiny_run, tmp_path):
    copy = _copy(tiny_run, tmp_path / "elsewhere" / "renamed")
    (copy / "last.zip").unlink()
    original = _contents(tiny_run)
    logs: list[str] = []
    res = resume(copy, ["total_steps=1280"], progress=False, log=logs.append)
    assert logs[:2] == [
        f"resuming {copy} from step 1,024 (checkpoints/step_0000001024.zip; last.zip is missing) with total_steps=1280",
        f"note: config.yaml names this run 'tiny' (under {tiny_run.parent}); it trains here, in {copy}, as "
        "'renamed', and its config.yaml now says so",
    ]
    assert not any("--force" in line for line in logs)
    assert res.step == 1280 and res.run_dir == copy
    assert _contents(tiny_run) == original  # the original is never touched
    cfg = yaml.safe_load((copy / "config.yaml").read_text())
    assert (cfg["name"], cfg["runs_dir"]) == ("renamed", str(copy.parent))
    state = json.loads((copy / "state.json").read_text())
    assert state["league"] and all(x.startswith("league/") and (copy / x).is_file() for x in state["league"])
    assert read_meta(copy / "last.zip")["run"] == "renamed"


def test_force_deletes_only_the_directory_it_names(tiny_run, tmp_path, capsys):
    runs = tmp_path / "runs"
    a = _copy(tiny_run, runs / "tiny")
    before, original = _contents(a), _contents(tiny_run)
    # the copy's config.yaml still names the original directory: --force on the copy is refused
    with pytest.raises(RunError) as e:
        train(parse_config(yaml.safe_load((a / "config.yaml").read_text())), progress=False, force=a)
    assert str(e.value) == (
        f"--force {a}: this config writes the run directory {str(tiny_run)!r} (runs_dir/name), "
        f"not {str(a)!r}; nothing was deleted. --force deletes only the directory the run "
        "writes, named exactly"
    )
    assert _contents(a) == before and _contents(tiny_run) == original
    # without --force an existing run is never offered a deleting command
    args = ["train", "--config", str(a / "config.yaml"), "--set", f"runs_dir={runs}", "--no-progress"]
    assert main(args) == 2
    out = " ".join(capsys.readouterr().out.split())  # rich wraps the error line
    assert "already holds a run" in out and "--resume" in out and "--force" not in out
    # --force naming the directory the config writes: it says what goes, then starts over
    assert main(args + ["--set", "total_steps=256", "--force", str(a)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        f"--force: deleting the run in {a} at step 1,024: best.zip, checkpoints/ (3 files), "
        "config.yaml, eval.csv, last.zip, league/ (2 files), run.yaml, state.json, tb/ (4 files)"
    )
    assert out[1].startswith("step          0 eval:")
    assert json.loads((a / "state.json").read_text())["step"] == 256
    assert main(["train", "--resume", str(a), "--force", str(a)]) == 2
    # a directory holding what no run writes is not deleted, even when named
    other = tmp_path / "mine" / "tiny"
    other.mkdir(parents=True)
    (other / "notes.txt").write_text("mine")
    cfg = parse_config({**TINY, "runs_dir": str(other.parent)})
    with pytest.raises(
        RunError,
        match=r"the directory holds notes.txt, so it is not \(only\) a tenk run; "
        "nothing was deleted",
    ):
        train(cfg, progress=False, force=other, log=lambda m: None)
    assert (other / "notes.txt").read_text() == "mine"


# ---------------------------------------------------------------- defect 3: one writer
def test_a_second_writer_is_refused_and_changes_nothing(tiny_run, tmp_path, capsys):
    run = _copy(tiny_run, tmp_path / "tiny")
    before = _contents(run)
    with DirLock(run, "run directory"):
        with pytest.raises(LockedError) as e:
            resume(run, ["total_steps=1280"], progress=False, log=lambda m: None)
        assert str(e.value).startswith(f"run directory {str(run)!r} is in use by process {os.getpid()} on ")
        assert str(e.value).endswith("; wait for it to finish or stop it, then run again (one writer per directory)")
        assert main(["train", "--resume", str(run), "--set", "total_steps=1280", "--no-progress"]) == 2
        assert "is in use by process" in " ".join(capsys.readouterr().out.split())  # rich wraps lines
        # a new run in a directory another process holds is refused too
        cfg = parse_config({**TINY, "runs_dir": str(tmp_path), "name": "tiny"})
        with pytest.raises(LockedError):
            train(cfg, progress=False, log=lambda m: None)
    assert _contents(run) == before


# ---------------------------------------------------------------- defect 7: damaged state files
@pytest.mark.parametrize(
    "content, why",
    [
        ("[1, 2]", "is damaged: expected a JSON dict, found list"),
        ('{"step": 10', "is damaged (not valid JSON: Expecting ',' delimiter: line 1 column 12 (char 11))"),
    ],
)
def test_a_damaged_state_json_is_rebuilt_with_a_note(tiny_run, tmp_path, content, why):
    run = _copy(tiny_run, tmp_path / "tiny")
    (run / "state.json").write_text(content)
    logs: list[str] = []
    res = resume(run, ["total_steps=1280"], progress=False, log=logs.append)
    assert logs[:2] == [
        f"resuming {run} from step 1,024 (last.zip) with total_steps=1280",
        f"note: run state {str(run / 'state.json')!r} {why}; rebuilt it from last.zip (step 1,024), best.zip, "
        "league/ and eval.csv; the time trained so far restarts at 0; the damaged file is kept as state.json.damaged",
    ]
    assert (run / "state.json.damaged").read_text() == content
    state = json.loads((run / "state.json").read_text())
    assert res.finished and state["step"] == 1280 and state["finished"]
    assert state["best"]["opponent"] == "random"


@pytest.mark.parametrize(
    "data, why",
    [
        (b"\xff\xfe\x00garbage", "are damaged (not text)"),
        (b"step,kind,opponent,games\n0,eval,random\n", "are damaged at line 2"),
        (b"wins;losses\n1;2\n", "are damaged: the header is 'wins;losses'"),
    ],
)
def test_a_damaged_eval_csv_is_named_with_the_fix(tiny_run, tmp_path, data, why):
    run = _copy(tiny_run, tmp_path / "tiny")
    (run / "eval.csv").write_bytes(data)
    before = _contents(run)
    with pytest.raises(RunError) as e:
        resume(run, ["total_steps=1280"], progress=False, log=lambda m: None)
    csv_path = run / "eval.csv"
    assert str(e.value).startswith(f"evaluation rows {str(csv_path)!r} {why}; fix or delete the damaged lines by hand")
    assert str(e.value).endswith(
        f"or move the file aside (mv {csv_path} {csv_path}.damaged) to resume without the earlier evaluation rows"
    )
    assert _contents(run) == before


def test_no_checkpoint_at_all(tiny_run, tmp_path):
    """Killed before its first checkpoint: starts over in place. Checkpoints that existed and
    are gone: an error that changes nothing and suggests nothing that deletes."""
    run = _copy(tiny_run, tmp_path / "tiny")
    (run / "last.zip").unlink()
    shutil.rmtree(run / "checkpoints")
    before = _contents(run)
    with pytest.raises(RunError) as e:
        resume(run, progress=False, log=lambda m: None)
    assert str(e.value) == (
        f"run {str(run)!r}: state.json records a checkpoint at step 1,024, but last.zip and checkpoints/ hold none "
        "(moved or deleted?); nothing was changed. Put them back, or start a new run from its config: "
        f"tenk train --config {run / 'config.yaml'} --set runs_dir={tmp_path} --set name=NEW_NAME"
    )
    assert _contents(run) == before
    state = json.loads((run / "state.json").read_text())
    del state["checkpoint_step"]  # as a run killed before its first one
    (run / "state.json").write_text(json.dumps(state))
    logs: list[str] = []
    res = resume(run, progress=False, log=logs.append)
    assert logs[0] == (
        f"resuming {run} from step 0: it stopped before its first checkpoint, so training starts "
        "over in this directory (config.yaml kept)"
    )
    assert res.finished and res.step == 1024
    assert [(r["step"], r["kind"]) for r in _rows(run)] == [("0", "eval")] * 2 + [("512", "eval")] * 2 + [
        ("1024", "final")
    ] * 2


# ---------------------------------------------------------------- defect 11: weights, temp dirs
def test_corrupted_weights_are_named(tiny_run, tmp_path):
    path = tmp_path / "best.zip"
    shutil.copyfile(tiny_run / "best.zip", path)
    _damage_weights(path)
    with pytest.raises(CheckpointError) as e:
        make_agent(f"ppo:{path}")
    assert str(e.value).startswith(
        f"checkpoint {str(path)!r} is damaged: its weights (policy.pth) are not a torch state dict (UnpicklingError: "
    )
    assert main(["evaluate", str(path), "--games", "2", "--opponents", "random"]) == 2
    # a run whose every checkpoint is damaged: named, nothing changed, no deleting command offered
    run = _copy(tiny_run, tmp_path / "tiny")
    for p in [run / "last.zip", *(run / "checkpoints").glob("step_*.zip")]:
        _damage_weights(p)
    before = _contents(run)
    with pytest.raises(RunError) as e:
        resume(run, progress=False, log=lambda m: None)
    msg = str(e.value)
    assert msg.startswith(
        f"run {str(run)!r} has no checkpoint that loads (checkpoint {str(run / 'last.zip')!r} "
        "is damaged: its weights (policy.pth)"
    )
    assert msg.count("is damaged") == 4 and "nothing was changed" in msg and "--force" not in msg
    assert msg.endswith(f"--set runs_dir={tmp_path} --set name=NEW_NAME")
    assert _contents(run) == before


def test_bench_train_leaves_no_temporary_directories(tmp_path, monkeypatch):
    from tenk_env.cli.bench_train import time_training

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    r = time_training(
        CONFIGS / "ppo_demo.yaml",
        64,
        [
            "env.n_envs=4",
            "env.backend=dummy",
            "ppo.n_steps=16",
            "ppo.batch_size=64",
            "ppo.net_arch=[8]",
            "ppo.policy=mlp",
            "opponents=[random, self]",
        ],
    )
    assert r["steps"] >= 64
    # torch makes its own compile cache (torchinductor_USER) there once per machine: not ours
    assert [p.name for p in tmp.iterdir() if not p.name.startswith("torchinductor_")] == []


# ---------------------------------------------------------------- defect 10: TensorBoard colours
def test_win_rate_chart_has_one_run_per_opponent(tiny_run):
    """A custom-scalars Multiline chart colours its lines by run: one tag of the chart per run
    means one colour per opponent (and the run list is the legend)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.custom_scalar import layout_pb2

    def load(d: Path) -> EventAccumulator:
        ea = EventAccumulator(str(d), size_guidance={"scalars": 0, "tensors": 0})
        ea.Reload()
        return ea

    tb = tiny_run / "tb"
    main_run = load(tb)
    layout = layout_pb2.Layout.FromString(main_run.Tensors("custom_scalars__config__")[0].tensor_proto.string_val[0])
    charts = {c.title: c for cat in layout.category for c in cat.chart}
    regex = re.compile("|".join(f"({t})" for t in charts["eval win rate, every opponent"].multiline.tag))
    runs = {".": main_run, **{d.name: load(d) for d in sorted(tb.iterdir()) if d.is_dir()}}
    matched = {name: [t for t in ea.Tags()["scalars"] if regex.match(t)] for name, ea in runs.items()}
    assert all(len(tags) <= 1 for tags in matched.values()), matched
    lines = {name: tags[0] for name, tags in matched.items() if tags}
    assert sorted(lines) == ["vs_hold:300", "vs_random"]
    for opp in ("random", "hold:300"):
        want = [(int(r["step"]), float(r["win_rate"])) for r in _rows(tiny_run) if r["opponent"] == opp]
        got = [(e.step, round(e.value, 6)) for e in runs[f"vs_{opp}"].Scalars(lines[f"vs_{opp}"])]
        assert got == want
    # every Multiline chart takes at most one tag from each run
    for title, chart in charts.items():
        if chart.HasField("multiline"):
            rx = re.compile("|".join(f"({t})" for t in chart.multiline.tag))
            for name, ea in runs.items():
                assert len([t for t in ea.Tags()["scalars"] if rx.match(t)]) <= 1, (title, name)


# ---------------------------------------------------------------- fault injection
def _wait(pid: int, until: float) -> int | None:
    """The exit status once ``pid`` ends, or None if it still runs at time ``until``."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= until:
            return None
        time.sleep(0.01)


# The points a session of the tiny run passes, in order, each seen as the file it writes:
# (what, step). A resumed session passes again those past the checkpoint it resumes from.
POINTS = [
    ("snapshot", 0),
    ("eval", 0),
    ("snapshot", 256),
    ("checkpoint", 256),
    ("eval", 512),
    ("snapshot", 512),
    ("checkpoint", 512),
    ("snapshot", 768),
    ("checkpoint", 768),
    ("eval", 1024),
    ("checkpoint", 1024),
]
POINT_FILES = {"snapshot": "league/step_{:010d}.zip", "checkpoint": "checkpoints/step_{:010d}.zip", "eval": "eval.csv"}


@pytest.mark.slow
def test_killed_at_random_points_ends_like_an_uninterrupted_run(tiny_run, tmp_path):
    """SIGKILL at seeded random points of the run, resume, again: the run ends at the same step
    with the same checkpoints, snapshots and evaluation rows (step, kind, opponent, games) as
    one that was never interrupted (the module's tiny run, the same config), and nothing it
    should keep is gone. The figures of the step-0 evaluation match too; later ones need not: a
    resumed session deals new games (the envs' games in progress are not in a checkpoint), so
    its training differs from the point it resumed from.

    Each kill follows a point of the run drawn at random (a snapshot, an evaluation or a
    checkpoint written by that session), not a time: a whole session takes well under a second
    here, so a delay would kill at different places, or not at all, on a slower or busier
    machine. The kill lands a moment after the file appears, anywhere in the writes that follow."""
    cfg = dict(TINY)
    ref_dir = tiny_run
    cfg_file = tmp_path / "tiny.yaml"
    cfg_file.write_text(yaml.safe_dump({**cfg, "runs_dir": str(tmp_path / "killed")}))
    run = tmp_path / "killed" / "tiny"
    watched = sorted({POINT_FILES[what].format(step) for what, step in POINTS})

    def signature(rel: str) -> tuple[int, int] | None:
        try:
            st = (run / rel).stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns  # every file is replaced whole: a new inode

    def passed(point: tuple[str, int], before: dict[str, tuple[int, int] | None]) -> bool:
        """The session wrote the file of ``point``."""
        what, step = point
        rel = POINT_FILES[what].format(step)
        if signature(rel) in (None, before[rel]):
            return False
        return what != "eval" or any(int(r["step"]) == step for r in _rows(run))

    def alive_until(pid: int, done: Callable[[], bool], deadline: float) -> int | None:
        while not done():
            if (rc := _wait(pid, time.monotonic())) is not None:
                return rc
            assert time.monotonic() < deadline, "a session made no progress for 5 minutes"
            time.sleep(0.002)
        return None

    # Three kills at points drawn in order, the k-th at step 768 - 256 * (kills still to come)
    # or before: each leaves a point for the next, and the last still leaves the session 256
    # steps and its final evaluation to play once its file is seen. Then a fourth at a point
    # drawn among those left, which the session may pass and finish first.
    rng = random.Random(14)
    argv = ["train", "--config", str(cfg_file), "--no-progress"]
    kills: list[tuple[str, int]] = []
    logs: list[str] = []
    resumed_from = -1  # -1: a session that starts at step 0, with no checkpoint
    for session in range(8):
        out = tmp_path / f"session{session}.log"
        out.touch()
        before = {rel: signature(rel) for rel in watched}
        pid = fork_session(argv, out)
        deadline = time.monotonic() + 300
        rc = None
        if session:
            # its first line: where it resumes from (a resumed session passes the points past it)
            rc = alive_until(pid, lambda out=out: out.stat().st_size > 0, deadline)
            m = re.match(r"resuming .* from step ([\d,]+)(:)?", out.read_text())
            assert m, out.read_text()
            resumed_from = -1 if m.group(2) else int(m.group(1).replace(",", ""))
        last = POINTS.index(kills[-1]) if kills else -1
        to_come = 2 - len(kills)
        ahead = [
            p
            for i, p in enumerate(POINTS)
            if i > last and p[1] > resumed_from and not (session and p == ("snapshot", 0))
        ]  # a resumed session keeps its step-0 snapshot
        if len(kills) > 3:
            ahead = []
        elif to_come >= 0:
            ahead = [p for p in ahead if p[1] <= 768 - 256 * to_come]
            assert ahead, f"no point left for kill {len(kills) + 1} (the session resumed from {resumed_from})"
        if rc is None and ahead:
            point = rng.choice(ahead)
            rc = alive_until(pid, lambda point=point, before=before: passed(point, before), deadline)
            assert rc is None or to_come < 0, f"session {session} ended ({rc}) before {point}: {out.read_text()}"
            if rc is None:
                os.kill(pid, signal.SIGKILL)
                kills.append(point)
        if rc is None:
            rc = _wait(pid, deadline)
            assert rc is not None, "a session ran for 5 minutes"
        logs.append(out.read_text())
        if rc == 0:
            break
        assert rc == -signal.SIGKILL, logs[-1]
        state = run / "state.json"
        if state.is_file() and json.loads(state.read_text()).get("finished"):
            break  # killed after its last save
        argv = ["train", "--resume", str(run), "--no-progress"]
    assert len(kills) >= 3 and len(set(kills)) == len(kills), (kills, logs)
    for text in logs[1:]:
        assert re.match(
            rf"resuming {re.escape(str(run))} from step (0: it stopped before its first checkpoint|"
            r"[\d,]+ \((last\.zip|checkpoints/step_\d+\.zip; "
            r"last\.zip (is missing|holds step [\d,]+ only))\))",
            text,
        ), text
    assert "Traceback" not in "".join(logs)

    state, ref_state = (json.loads((d / "state.json").read_text()) for d in (run, ref_dir))
    assert state["finished"] and state["step"] == ref_state["step"] == cfg["total_steps"]
    assert read_meta(run / "last.zip")["num_timesteps"] == cfg["total_steps"]

    # the same files (checkpoints, snapshots, best, last...), none half-written or set aside
    def files(d):
        return sorted(
            str(p.relative_to(d))
            for p in d.rglob("*")
            if p.is_file() and p.name != ".lock" and "tb" not in p.relative_to(d).parts
        )

    assert files(run) == files(ref_dir)
    assert state["league"] == ref_state["league"]
    assert sorted(p.name for p in (run / "tb").iterdir() if p.is_dir()) == sorted(
        p.name for p in (ref_dir / "tb").iterdir() if p.is_dir()
    )
    rows, ref_rows = _rows(run), _rows(ref_dir)
    key = lambda r: (r["step"], r["kind"], r["opponent"], r["games"])  # noqa: E731
    assert [key(r) for r in rows] == [key(r) for r in ref_rows]
    figures = lambda r: {k: v for k, v in r.items() if k != "seconds"}  # noqa: E731
    assert [figures(r) for r in rows if r["step"] == "0"] == [figures(r) for r in ref_rows if r["step"] == "0"]


# ---------------------------------------------------------------- the league after a kill
def _session(argv: list[str], out: Path, kill: Kill | None = None) -> int:
    pid = fork_session(argv, out, kill)
    rc = _wait(pid, time.monotonic() + 300)
    assert rc is not None, "a session ran for 5 minutes"
    return rc


# The uninterrupted run's league (selfplay.league_size 2, a snapshot every 256 steps) at the
# steps a kill below sends the run back to.
LEAGUE_AT = {
    256: ["league/step_0000000000.zip", "league/step_0000000256.zip"],
    512: ["league/step_0000000256.zip", "league/step_0000000512.zip"],
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill, resumed_from",
    [
        # after the snapshot at 512 (which made step_0 the oldest snapshot out), before the checkpoint
        ((Trainer, "snapshot", "after", lambda t: t.step == 512), 256),
        # the same at 768 (step_256 out), with the checkpoint at 512 the newest
        ((Trainer, "snapshot", "after", lambda t: t.step == 768), 512),
        # after the checkpoint at 512 and last.zip were written, before state.json recorded them: its
        # league is still the one of the evaluation at 512, before that step's snapshot
        ((Trainer, "_save_state", "before", lambda t: t.step == t.state.get("checkpoint_step") == 512), 512),
    ],
    ids=["after-snapshot-512", "after-snapshot-768", "before-state-512"],
)
def test_a_resumed_run_trains_against_the_league_its_checkpoint_had(
    tiny_run, tmp_path, monkeypatch, kill, resumed_from
):
    """A session killed between a league snapshot and the state that records it resumes with
    the league the uninterrupted run had at the checkpoint it resumes from (no snapshot lost
    to a later session's pruning, none forgotten by a state.json older than the checkpoint),
    and ends with the uninterrupted run's snapshots."""
    cfg_file = tmp_path / "tiny.yaml"
    cfg_file.write_text(yaml.safe_dump({**TINY, "runs_dir": str(tmp_path / "runs")}))
    run = tmp_path / "runs" / "tiny"
    assert (
        _session(["train", "--config", str(cfg_file), "--no-progress"], tmp_path / "killed.log", kill)
        == -signal.SIGKILL
    ), (tmp_path / "killed.log").read_text()

    leagues: list[list[str]] = []
    with monkeypatch.context() as m:
        m.setattr(Trainer, "run", lambda self: leagues.append(list(self.state["league"])))
        logs: list[str] = []
        resume(run, progress=False, log=logs.append)
    assert logs[0].startswith(f"resuming {run} from step {resumed_from} "), logs
    assert leagues == [LEAGUE_AT[resumed_from]]

    assert resume(run, progress=False, log=lambda m: None).finished
    assert sorted(p.name for p in (run / "league").iterdir()) == sorted(p.name for p in (tiny_run / "league").iterdir())
    assert (
        json.loads((run / "state.json").read_text())["league"]
        == json.loads((tiny_run / "state.json").read_text())["league"]
    )


@pytest.mark.slow
def test_a_kill_after_the_final_checkpoint_leaves_one_final_evaluation(tiny_run, tmp_path):
    """Killed after the final checkpoint was written, before state.json marked the run
    finished: the resumed session plays the final evaluation again, and eval.csv holds it once."""
    cfg_file = tmp_path / "tiny.yaml"
    cfg_file.write_text(yaml.safe_dump({**TINY, "runs_dir": str(tmp_path / "runs")}))
    run = tmp_path / "runs" / "tiny"
    final_save = (
        Trainer,
        "_save_state",
        "before",
        lambda t: t.state["finished"] and t.step == t.state.get("checkpoint_step") == TINY["total_steps"],
    )
    assert (
        _session(["train", "--config", str(cfg_file), "--no-progress"], tmp_path / "killed.log", final_save)
        == -signal.SIGKILL
    ), (tmp_path / "killed.log").read_text()
    assert [r["kind"] for r in _rows(run)].count("final") == 2  # both opponents'
    logs: list[str] = []
    assert resume(run, progress=False, log=logs.append).finished
    assert logs[0] == f"resuming {run} from step 1,024 (last.zip)"
    key = lambda r: (r["step"], r["kind"], r["opponent"], r["games"])  # noqa: E731
    assert [key(r) for r in _rows(run)] == [key(r) for r in _rows(tiny_run)]


# ---------------------------------------------------------------- a failed start leaves nothing
def test_a_failed_start_leaves_no_run_behind(tmp_path, monkeypatch, capsys):
    """A start that fails after the run directory was made (the learner cannot be built)
    removes what it wrote, so the corrected command starts instead of being told the
    directory already holds a run."""
    from tenk_env.training.trainer import Trainer

    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump({**TINY, "runs_dir": str(tmp_path / "runs"), "total_steps": 256}))
    run = tmp_path / "runs" / "tiny"

    def cannot_build(self):
        raise ValueError("env.backend = vector: not here; use env.backend=dummy (or auto)")

    with monkeypatch.context() as m:
        m.setattr(Trainer, "build", cannot_build)
        assert main(["train", "--config", str(cfg), "--no-progress"]) == 2
    assert "env.backend = vector: not here" in capsys.readouterr().out
    assert [p.name for p in run.iterdir()] == [".lock"]
    assert main(["train", "--config", str(cfg), "--no-progress"]) == 0
    assert "already holds a run" not in capsys.readouterr().out
    assert json.loads((run / "state.json").read_text())["step"] == 256
