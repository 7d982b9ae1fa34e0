"""Ray: a real private local runtime (2 CPUs, started once for the module), tournaments through
Ray tasks (the same results as the local run, to the last game, resume included), a sweep of
2 configurations x 2 seeds on Ray Tune (interrupted, resumed without rerunning its finished
trials, reported across seeds), and the errors: Ray missing, a bad address, a bad sweep file.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.evaluation.ray_runtime import RayExecutor, ray_session
from tenk_env.evaluation.tournament import TournamentConfig, run_tournament
from tenk_env.training.sweep.config import SweepError, load_sweep, parse_sweep
from tenk_env.training.sweep.run import _scheduler, run_sweep, trial_status

from support import CONFIGS

EXTRA = 'pip install -e ".[ray]"'


@pytest.fixture(scope="module")
def ray_local():
    """One private local Ray runtime for the module, as `tenk` starts it (2 CPUs)."""
    with ray_session(num_cpus=2) as session:
        yield session


# --------------------------------------------------------------------------- the runtime
def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def _listening(pids: set[int]) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp* writes them) of the listening TCP sockets
    these processes hold."""
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                out.append(f[1].rpartition(":")[0])
    return out


LOOPBACK = {"0100007F", "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


@pytest.mark.slow
def test_local_runtime_is_private_and_sized(ray_local):
    import ray

    assert ray_local.mode == "local" and ray_local.cpus == 2
    assert ray_local.address.startswith("127.0.0.1:")
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}
    # the loopback switch is put back after start-up: a later cluster connection is not affected
    import ray._private.ray_constants as rc

    assert rc.ENABLE_RAY_CLUSTER is True and "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in os.environ
    if sys.platform.startswith("linux"):
        # nothing the runtime started (GCS, raylet, workers, agents) listens beyond 127.0.0.1
        addrs = _listening(_descendants(os.getpid()))
        assert addrs, "found no listening socket of the Ray processes"
        assert set(addrs) <= LOOPBACK, addrs
    # its workers run at this process's priority (Ray's default of 15 let any busy process
    # starve a sweep's trials)
    assert ray.get(ray.remote(lambda: os.getpriority(os.PRIO_PROCESS, 0)).remote()) == os.getpriority(
        os.PRIO_PROCESS, 0
    )
    # a runtime this process holds is used as it is (and left running)
    with ray_session() as again:
        assert again.mode == "existing"
    assert ray.is_initialized()


# --------------------------------------------------------------------------- tournaments
def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("backend, games", [("auto", 600), ("scalar", 200)])
def test_tournament_on_ray_equals_the_local_run(ray_local, tmp_path, backend, games):
    """3 bots (random draws its moves from generators keyed by the deals), both engines: the
    chunks and results through Ray tasks are the local run's, byte for byte; interrupted
    after two chunks and rerun through Ray, the same again."""
    base = dict(agents=["random", "greedy", "hold:300"], games=games, seed=7, out=str(tmp_path), backend=backend)
    local = run_tournament(TournamentConfig.from_dict({**base, "name": "local", "workers": 1}))
    ray_res = run_tournament(TournamentConfig.from_dict({**base, "name": "ray"}), executor=RayExecutor())
    assert [r.to_dict() for r in ray_res.results] == [r.to_dict() for r in local.results]
    a, b = _files(tmp_path / "local" / "chunks"), _files(tmp_path / "ray" / "chunks")
    assert a == b and len(a) == 3 * -(-games // 2 // 100)
    assert (tmp_path / "local" / "results.csv").read_bytes() == (tmp_path / "ray" / "results.csv").read_bytes()
    ja, jb = (json.loads((tmp_path / n / "results.json").read_text()) for n in ("local", "ray"))
    assert {**ja, "name": None} == {**jb, "name": None}

    # resume: stop after two chunks, rerun through Ray
    class Stop(Exception):
        pass

    def stop(done: int, total: int) -> None:
        if done == 2:
            raise Stop

    cfg = TournamentConfig.from_dict({**base, "name": "resumed"})
    with pytest.raises(Stop):
        run_tournament(cfg, executor=RayExecutor(), on_chunk=stop)
    assert len(list((tmp_path / "resumed" / "chunks").glob("*.json"))) == 2
    again = run_tournament(TournamentConfig.from_dict({**base, "name": "resumed"}), executor=RayExecutor())
    assert again.played_now == sum(r.games for r in local.results) - 2 * 100 * 2
    assert _files(tmp_path / "resumed" / "chunks") == a
    assert (tmp_path / "resumed" / "results.csv").read_bytes() == (tmp_path / "local" / "results.csv").read_bytes()


@pytest.mark.slow
def test_tournament_command_with_ray(ray_local, tmp_path, capsys):
    args = [
        "tournament",
        "greedy",
        "hold:300",
        "dicenow",
        "--games",
        "200",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    assert main(args + ["--name", "here"]) == 0
    assert main(args + ["--name", "there", "--ray"]) == 0
    out = capsys.readouterr().out
    assert "Ray runtime" in out
    assert _files(tmp_path / "here" / "chunks") == _files(tmp_path / "there" / "chunks")


# --------------------------------------------------------------------------- sweeps
def _tiny(tmp_path: Path, **changes) -> dict:
    data = yaml.safe_load((CONFIGS / "sweep_tiny.yaml").read_text())
    data["runs_dir"] = str(tmp_path)
    data.update(changes)
    return data


def _digest(d: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(d)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def _csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


@pytest.mark.slow
def test_sweep_runs_resumes_and_reports(ray_local, tmp_path):
    sweep = parse_sweep(_tiny(tmp_path), base_dir=CONFIGS, default_name="sweep_tiny")
    assert sweep.configs == ["learning_rate=0.001", "learning_rate=0.003"] and sweep.seeds == [0, 1]
    names = [t.name for t in sweep.trials]
    assert names == [
        "learning_rate=0.001_seed0",
        "learning_rate=0.003_seed0",
        "learning_rate=0.001_seed1",
        "learning_rate=0.003_seed1",
    ]
    out = tmp_path / "sweep_tiny"
    lines: list[str] = []

    def interrupt(msg: str) -> None:
        # Ctrl-C as a user would press it, once a trial of the second seed has started training:
        # by then a first-seed trial finished (two CPUs, one per trial)
        lines.append(msg)
        if "_seed1: step 0," in msg and not any("SIGINT" in x for x in lines):
            lines.append("SIGINT")
            os.kill(os.getpid(), signal.SIGINT)

    first = run_sweep(sweep, say=interrupt, report=False)
    assert first.interrupted, lines
    done1 = [n for n, s in first.status.items() if s == "finished"]
    assert done1 and len(done1) < 4, first.status
    assert all(first.status[n] in ("unfinished", "new") for n in names if n not in done1)
    kept = {n: _digest(out / n) for n in done1}
    midway = [n for n in names if n not in done1 and (out / n / "last.zip").is_file()]

    # without --resume the directory is not overwritten
    with pytest.raises(SweepError, match="already holds a sweep"):
        run_sweep(sweep, say=lines.append)
    second = run_sweep(
        parse_sweep(_tiny(tmp_path), base_dir=CONFIGS, default_name="sweep_tiny"), resume_=True, say=lines.append
    )
    assert not second.interrupted and not second.errors
    assert sorted(second.ran) == sorted(n for n in names if n not in done1)
    assert set(second.status.values()) == {"finished"}
    for n in done1:  # finished trials were not run again: every file as it was, to the byte and the mtime
        assert _digest(out / n) == kept[n], n
    for n in names:  # ordinary run directories
        d = out / n
        assert {"config.yaml", "eval.csv", "regret.csv", "last.zip", "best.zip", "tb", "checkpoints"} <= {
            p.name for p in d.iterdir()
        }
        assert trial_status(d, {}) == "finished"
        cfg = yaml.safe_load((d / "config.yaml").read_text())
        assert cfg["seed"] == int(n[-1]) and cfg["ppo"]["learning_rate"] == float(n.split("=")[1].split("_")[0])
    for n in midway:  # stopped mid-run: continued from its checkpoint, as `tenk train --resume` does
        assert f"resuming {out / n} from step" in (out / "logs" / f"{n}.log").read_text()
    sessions = json.loads((out / "sweep.json").read_text())["sessions"]
    assert [s["interrupted"] for s in sessions] == [True, False]

    # the report across seeds, checked against a direct computation
    from scipy.stats import trim_mean

    rep = second.report
    assert rep is not None and all(p.is_file() and p.stat().st_size > 0 for p in rep.files.values())
    assert set(rep.files) == {"summary_csv", "summary_md", "trials_csv", "profile", "curves"}
    rows = _csv_rows(out / "report" / "summary.csv")
    assert {r["metric"] for r in rows} == {"win_rate/hold:300", "win_rate/random", "regret"}
    assert len(rows) == 2 * 3
    for r in rows:
        vals = []
        for seed in (0, 1):
            d = out / f"{r['config']}_seed{seed}"
            if r["metric"] == "regret":
                final = [x for x in _csv_rows(d / "regret.csv") if x["kind"] == "final"]
                vals.append(float(final[-1]["regret"]))
            else:
                opp = r["metric"].partition("/")[2]
                final = [x for x in _csv_rows(d / "eval.csv") if x["kind"] == "final" and x["opponent"] == opp]
                vals.append(float(final[-1]["win_rate"]))
        assert int(r["seeds"]) == 2
        assert math.isclose(float(r["mean"]), np.mean(vals), rel_tol=1e-5, abs_tol=1e-9)
        assert math.isclose(float(r["iqm"]), trim_mean(vals, 0.25), rel_tol=1e-5, abs_tol=1e-9)
        assert math.isclose(float(r["min"]), min(vals), abs_tol=1e-9)
        assert math.isclose(float(r["max"]), max(vals), abs_tol=1e-9)
        assert float(r["mean_ci_low"]) <= float(r["mean"]) <= float(r["mean_ci_high"])
        assert min(vals) - 1e-9 <= float(r["iqm_ci_low"]) <= float(r["iqm_ci_high"]) <= max(vals) + 1e-9
    md = (out / "report" / "summary.md").read_text()
    assert "| learning_rate=0.001 | win rate vs hold:300 (%) | 2 |" in md and "IQM" in md
    # seeded: the same report again, to the byte; `tenk sweep report` writes it
    before = (out / "report" / "summary.csv").read_bytes()
    np.random.seed(12345)  # rliable resamples from NumPy's global generator: the report seeds it itself
    assert main(["sweep", "report", str(out)]) == 0
    assert (out / "report" / "summary.csv").read_bytes() == before

    # resuming a finished sweep runs nothing and touches no trial
    everything = {n: _digest(out / n) for n in names}
    third = run_sweep(
        parse_sweep(_tiny(tmp_path), base_dir=CONFIGS, default_name="sweep_tiny"),
        resume_=True,
        say=lines.append,
        report=False,
    )
    assert third.ran == [] and sorted(third.skipped) == sorted(names)
    assert {n: _digest(out / n) for n in names} == everything

    # a changed sweep file is refused on resume, naming what differs
    with pytest.raises(SweepError, match="trials differ"):
        run_sweep(parse_sweep(_tiny(tmp_path, seeds=3), base_dir=CONFIGS, default_name="sweep_tiny"), resume_=True)
    changed = _tiny(tmp_path)
    changed["set"]["eval.games"] = 60
    with pytest.raises(SweepError, match="training config of 4 trial"):
        run_sweep(parse_sweep(changed, base_dir=CONFIGS, default_name="sweep_tiny"), resume_=True)


def test_asha_stops_the_weaker_trial_and_records_it(tmp_path):
    """The scheduler ASHA runs with: at the first rung the trial below the cutoff is stopped,
    noted (sweep.json), and a resumed sweep counts it as done."""
    from ray.tune.schedulers import TrialScheduler

    data = _tiny(tmp_path, seeds=1, scheduler={"type": "asha", "grace_steps": 2048, "reduction_factor": 2})
    sweep = parse_sweep(data, base_dir=CONFIGS, default_name="asha")
    stops: list[tuple[str, int]] = []
    sched = _scheduler(sweep, lambda name, step: stops.append((name, step)))

    class FakeTrial:
        def __init__(self, name):
            self.trial_id, self.config = name, {"trial": {"name": name}}
            self.evaluated_params, self.status = {}, "RUNNING"

    good, bad = FakeTrial(sweep.trials[0].name), FakeTrial(sweep.trials[1].name)
    for t in (good, bad):
        sched.on_trial_add(None, t)
    assert sched.on_trial_result(None, good, {"step": 2048, "win_rate": 0.6}) == TrialScheduler.CONTINUE
    assert sched.on_trial_result(None, bad, {"step": 2048, "win_rate": 0.3}) == TrialScheduler.STOP
    assert stops == [(bad.trial_id, 2048)]
    assert trial_status(tmp_path / "asha" / bad.trial_id, {bad.trial_id: {"step": 2048}}) == "stopped"


# --------------------------------------------------------------------------- errors
def test_missing_ray_names_the_extra(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if not installed
    assert main(["tournament", "greedy", "hold:300", "--games", "20", "--ray", "--out", str(tmp_path)]) == 2
    assert EXTRA in capsys.readouterr().out
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(_tiny(tmp_path)))
    (tmp_path / "ppo_demo.yaml").write_text((CONFIGS / "ppo_demo.yaml").read_text())
    assert main(["sweep", "--config", str(path)]) == 2
    assert EXTRA in capsys.readouterr().out
    assert not (tmp_path / "sweep_tiny").exists(), "nothing is written before the extra is found missing"
    monkeypatch.setitem(sys.modules, "rliable", None)
    (tmp_path / "x").mkdir()
    assert main(["sweep", "report", str(tmp_path / "x")]) == 2
    assert EXTRA in capsys.readouterr().out


@pytest.mark.parametrize(
    "address, words",
    [
        ("127.0.0.1:1", ["no Ray cluster answers at 127.0.0.1:1", "ray start"]),
        ("not an address", ["HOST:PORT"]),
        ("", ["empty"]),
    ],
)
def test_bad_address_fails_fast_and_says_why(tmp_path, capsys, address, words):
    assert (
        main(["tournament", "greedy", "hold:300", "--games", "20", "--ray-address", address, "--out", str(tmp_path)])
        == 2
    )
    out = capsys.readouterr().out
    for w in words:
        assert w in out, out
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**_tiny(tmp_path), "base": str(CONFIGS / "ppo_demo.yaml")}))
    assert main(["sweep", "--config", str(path), "--ray-address", address]) == 2
    assert words[0] in capsys.readouterr().out


def test_ray_address_from_the_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    assert main(["tournament", "greedy", "hold:300", "--games", "20", "--ray", "--out", str(tmp_path)]) == 2
    assert "127.0.0.1:1" in capsys.readouterr().out


@pytest.mark.parametrize(
    "change, words",
    [
        ({"seedz": 3}, ["unknown key seedz", "did you mean 'seeds'"]),
        ({"space": {"ppo.learnig_rate": [1e-3]}}, ["ppo.learnig_rate", "did you mean 'learning_rate'"]),
        ({"set": {"eval.gams": 10}}, ["eval.gams", "did you mean 'games'"]),
        ({"set": {"total_steps": "lots"}}, ["total_steps", "not an integer"]),
        ({"space": {"seed": [1, 2]}}, ["space.seed", "seeds"]),
        ({"resources": {"cpu": 1}}, ["resources.cpu", "did you mean 'cpus'"]),
        ({"scheduler": {"type": "pbt"}}, ["scheduler.type", "asha"]),
        ({"metric": "dicenow"}, ["metric", "random, hold:300"]),
        ({"search": "random"}, ["samples"]),
        (
            {"search": "random", "samples": 2, "space": {"ppo.learning_rate": {"logunif": [1, 2]}}},
            ["logunif", "did you mean 'loguniform'"],
        ),
        ({"base": "nope.yaml"}, ["base", "nope.yaml", "configs/"]),
        ({"search": "variant"}, ["search", "did you mean 'variants'"]),
        ({"search": "variants", "space": {}}, ["search: variants needs a space"]),
        ({"search": "variants", "space": {"a b": {}}}, ["variant name 'a b'"]),
        ({"search": "variants", "space": {"wide": [256, 256]}}, ["space.wide", "mapping of config keys"]),
        ({"search": "variants", "space": {"wide": {"ppo.net_arc": [8]}}}, ["ppo.net_arc", "did you mean 'net_arch'"]),
        ({"search": "variants", "space": {"s": {"seed": 3}}}, ["space.s.seed", "seeds"]),
        ({"search": "variants", "samples": 2, "space": {"a": {}}}, ["samples is for search: random"]),
    ],
)
def test_bad_sweep_files_are_named(tmp_path, capsys, change, words):
    path = tmp_path / "bad.yaml"
    data = {**_tiny(tmp_path), "base": str(CONFIGS / "ppo_demo.yaml"), **change}
    path.write_text(yaml.safe_dump(data))
    assert main(["sweep", "--config", str(path)]) == 2
    out = capsys.readouterr().out
    for w in words:
        assert w in out, out
    assert not (tmp_path / "sweep_tiny").exists()


def test_vectorised_rliable_functions_are_rliables():
    from rliable import library, metrics

    from tenk_env.training.sweep.report import iqm_by_step, score_distribution

    rng = np.random.default_rng(0)
    for runs in (1, 2, 5):
        x, taus = rng.random((runs, 1)), np.linspace(0, 1, 37)
        assert np.array_equal(score_distribution(x, taus), library.score_distributions(x, taus))
        y = rng.random((runs, 1, 6))
        assert np.allclose(iqm_by_step(y), [metrics.aggregate_iqm(y[..., j]) for j in range(6)])


def test_shipped_sweeps_validate_and_random_search_is_fixed(tmp_path):
    demo = load_sweep(CONFIGS / "sweep_demo.yaml")
    assert len(demo.trials) == 5 and demo.seeds == [0, 1, 2, 3, 4] and demo.metric == "hold:300"
    assert load_sweep(CONFIGS / "sweep_tiny.yaml").trials[0].cfg.total_steps == 4096
    data = _tiny(
        tmp_path,
        search="random",
        samples=3,
        search_seed=5,
        space={"ppo.learning_rate": {"loguniform": [1e-4, 1e-2]}, "ppo.n_epochs": [1, 2]},
    )
    a, b = (parse_sweep(data, base_dir=CONFIGS) for _ in range(2))
    assert [t.values for t in a.trials] == [t.values for t in b.trials] and len(a.trials) == 3 * 2
    assert all(1e-4 <= t.values["ppo.learning_rate"] <= 1e-2 for t in a.trials)
    assert a.configs[0].startswith("r0_learning_rate=")
    study = load_sweep(CONFIGS / "sweep_ppo_study.yaml")
    assert study.configs[0] == "demo" and len(study.trials) == 3 * len(study.configs) and study.metric == "dicenow"


def test_variants_are_named_one_change_each_from_the_base(tmp_path):
    sweep = parse_sweep(
        _tiny(
            tmp_path,
            search="variants",
            seeds=[4],
            space={
                "base": {},
                "wide": {"ppo.net_arch": [64, 64]},
                "bots": {"opponents": {"dicenow": 2, "random": 1}, "ppo.n_epochs": 2},
            },
        ),
        base_dir=CONFIGS,
        default_name="v",
    )
    assert sweep.configs == ["base", "wide", "bots"]
    assert [t.name for t in sweep.trials] == ["base_seed4", "wide_seed4", "bots_seed4"]
    base, wide, bots = (t.cfg for t in sweep.trials)
    assert (base.ppo.net_arch, wide.ppo.net_arch, bots.ppo.net_arch) == ([32], [64, 64], [32])
    assert dict(bots.opponents) == {"dicenow": 2, "random": 1} and bots.ppo.n_epochs == 2 and wide.ppo.n_epochs == 1
    assert dict(base.opponents) == dict(wide.opponents) and all(c.seed == 4 for c in (base, wide, bots))
    assert sweep.trials[2].values == {"opponents": {"dicenow": 2, "random": 1}, "ppo.n_epochs": 2}


# --------------------------------------------------------------------------- refusals before the work
def _sweep_file(tmp_path: Path, **changes) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({**_tiny(tmp_path), "base": str(CONFIGS / "ppo_demo.yaml"), **changes}))
    return path


@pytest.mark.slow
def test_trials_asking_more_cpus_than_the_runtime_has_are_refused_at_once(ray_local, tmp_path, monkeypatch, capsys):
    path = _sweep_file(tmp_path, resources={"cpus": 100})
    # on the runtime this process holds (2 CPUs): refused once connected; the directory the
    # failed start made is gone, so the corrected command starts afresh
    assert main(["sweep", "--config", str(path)]) == 2
    assert (
        f"error: sweep config {str(path)!r}: resources.cpus = 100: every trial asks for 100 CPUs and the largest "
        "node of the Ray runtime this process holds has 2, so no trial could ever start; give resources.cpus at "
        "most 2, or add larger nodes to the cluster"
    ) in capsys.readouterr().out
    assert not (tmp_path / "sweep_tiny").exists()
    # a private local runtime: refused before anything starts or is written
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    assert main(["sweep", "--config", str(path), "--ray-cpus", "3"]) == 2
    assert (
        f"error: sweep config {str(path)!r}: resources.cpus = 100: every trial asks for 100 CPUs and the private "
        "local Ray runtime (--ray-cpus 3) has 3, so no trial could ever start; give resources.cpus at most 3, "
        "or run the sweep on a cluster with larger nodes (--ray-address)"
    ) in capsys.readouterr().out
    assert not (tmp_path / "sweep_tiny").exists()


def test_a_failed_start_leaves_nothing_behind(tmp_path, monkeypatch, capsys):
    from tenk_env.solve.game import SolverError

    def fail(rules):
        raise SolverError("the solver failed")

    monkeypatch.setattr("tenk_env.training.sweep.run.solve_game", fail)
    path = _sweep_file(tmp_path)
    (tmp_path / "sweep_tiny").mkdir()
    (tmp_path / "sweep_tiny" / "notes.txt").write_text("mine")
    assert main(["sweep", "--config", str(path)]) == 2
    assert "error: the solver failed" in capsys.readouterr().out
    # what it made (sweep.yaml, sweep.json) is gone; what was there before stays
    assert sorted(p.name for p in (tmp_path / "sweep_tiny").iterdir()) == [".lock", "notes.txt"]
    (tmp_path / "sweep_tiny" / "notes.txt").unlink()
    (tmp_path / "sweep_tiny" / ".lock").unlink()
    (tmp_path / "sweep_tiny").rmdir()
    # a directory it made itself goes altogether, the runs folder made for it too
    path = _sweep_file(tmp_path, runs_dir=str(tmp_path / "runs" / "deeper"))
    assert main(["sweep", "--config", str(path)]) == 2
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "change, words",
    [
        ({"seeds": 10**12}, "seeds = 1000000000000: give at most 10,000 trials (each is a training run"),
        ({"seeds": "1e12"}, "seeds = 1e12: give at most 10,000 trials"),
        (
            {"search": "random", "samples": 10**12, "space": {"ppo.learning_rate": {"loguniform": [1e-4, 1e-2]}}},
            "samples = 1000000000000: give at most 10,000 trials",
        ),
        (
            {"space": {"ppo.learning_rate": [1e-3] * 200, "ppo.n_epochs": list(range(1, 101))}},
            "space: a grid of 200 x 100 = 20,000 combinations: give at most 10,000 trials",
        ),
        ({"seeds": 5001}, "2 configurations x 5,001 seeds = 10,002 trials: give at most 10,000 trials"),
        ({"report": {"reps": 10**9}}, "report.reps = 1000000000: give at most 100,000 bootstrap resamples"),
    ],
)
def test_sweep_sizes_are_bounded_before_any_work(tmp_path, capsys, change, words):
    assert main(["sweep", "--config", str(_sweep_file(tmp_path, **change))]) == 2
    assert words in capsys.readouterr().out
    assert not (tmp_path / "sweep_tiny").exists()


def test_report_resamples_are_bounded(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["sweep", "report", str(tmp_path), "--reps", "1e9"])
    assert (
        "argument --reps: 1e9: give from 10 to 100,000 bootstrap resamples (each is a pass over the runs; the "
        "default 2,000 serve a final table)"
    ) in capsys.readouterr().err
    from tenk_env.training.sweep.report import write_report

    (tmp_path / "sweep.yaml").write_text("trials: []\n")
    with pytest.raises(SweepError, match="--reps 1,000,000,000: give at most 100,000 bootstrap resamples"):
        write_report(tmp_path, reps=10**9)


# --------------------------------------------------------------------------- signals
@pytest.mark.slow
def test_sigterm_stops_a_sweep_with_one_line(tmp_path):
    """SIGTERM once Ray is up: Ray is shut down (no C++ stack dump), the sweep says how far it
    got and how to resume, exit code 143."""
    import subprocess
    import time

    path = _sweep_file(tmp_path)
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from tenk_env.cli.main import main; sys.exit(main())",
            "sweep",
            "--config",
            str(path),
        ],
        cwd=CONFIGS.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        for line in p.stdout:
            lines.append(line.rstrip("\n"))
            if "trial(s) to run" in line:
                time.sleep(1)
                p.send_signal(signal.SIGTERM)
                break
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    lines += out.splitlines()
    assert p.returncode == 143, (lines, err)
    assert "Traceback" not in err and "SIGTERM received" not in err, err
    assert lines[-1] == f"interrupted; 0 of 4 trials done; rerun `tenk sweep --config {path} --resume` to resume"
