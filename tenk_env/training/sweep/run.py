"""Run a sweep's trials on Ray Tune; each trial is an ordinary ``tenk train`` run.

A sweep directory ``RUNS_DIR/NAME/`` holds:

====================  ===========================================================
``TRIAL/``            one ordinary run directory per trial (``tenk train``'s own:
                      config.yaml, TensorBoard events, checkpoints, eval.csv,
                      regret.csv), so ``tenk plot``, ``tenk evaluate``,
                      ``tenk train --resume`` and ``ppo:TRIAL/best.zip`` all work
``sweep.yaml``        the sweep file as read and every trial (name, configuration,
                      seed, overrides, a hash of its resolved config)
``sweep.json``        progress: trials ASHA stopped (and at what step), errors,
                      one entry per session (when, where, wall time, trials run)
``logs/TRIAL.log``    what the trial's trainer printed
``tune/session-N/``   Ray Tune's bookkeeping of session N
``report/``           the report across seeds (report.py), written at the end
``.lock``             held by the one ``tenk sweep`` driving the directory
====================  ===========================================================

Each trial runs in a Ray Tune trial actor holding ``resources.cpus`` CPUs, in-process
through the trainer's Python API (:func:`tenk_env.training.trainer.train`, or
:func:`~tenk_env.training.trainer.resume` for a trial an earlier session left unfinished),
with ``torch_threads`` from ``resources.torch_threads``. After each periodic evaluation
the trial reports ``win_rate`` (against the sweep's ``metric`` opponent), the win rate
against every evaluation opponent and, where the run analyses it, ``regret``, at ``step``:
the ASHA scheduler, when the sweep asks for one, stops trials on ``win_rate`` at rungs of
``step``. (A stopped trial's trainer saves a checkpoint on the way out: its run directory
is consistent, at the step it was stopped.)

Resuming (``--resume``): the trials are a fixed list (sweep.yaml; the same file gives the
same list, and a changed one is refused, naming what differs). A trial whose run
directory finished, or that ASHA stopped, is not run again and its files are not touched;
one with a run directory that did not finish continues from its newest checkpoint (as
``tenk train --resume`` does); the rest start. Each session is a Ray Tune experiment of
its own over the trials left (``tune/session-N``); the run directories, not Tune's
experiment state, say what is done, so a sweep also resumes on another cluster.
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tenk_env.evaluation.ray_runtime import (
    check_address,
    import_ray,
    import_rliable,
    import_tune,
    ray_session,
    resolve_address,
)
from tenk_env.io import DirLock, LockedError, StateFileError, atomic_write_text, read_json
from tenk_env.solve.game import solve_game
from tenk_env.training.config import parse_config
from tenk_env.training.sweep.config import SweepConfig, SweepError
from tenk_env.training.sweep.report import write_report
from tenk_env.training.trainer import resume, tag_name, train

__all__ = ["run_sweep", "SweepResult", "trial_status", "read_state", "check_resources", "run_trial", "SweepStateError"]

#: how long a trial waits for its run directory's lock (held by a trial of an interrupted
#: session that is still dying)
LOCK_WAIT_S = 60.0


class SweepStateError(SweepError):
    """A sweep directory that cannot be started or resumed as asked."""


@dataclass
class SweepResult:
    out_dir: Path
    status: dict[str, str]  #: trial -> finished / stopped / unfinished / error / not started
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    interrupted: bool = False
    report: Any = None


# --------------------------------------------------------------------------- state
def read_state(out: Path) -> dict[str, Any]:
    path = out / "sweep.json"
    if not path.is_file():
        return {"stopped": {}, "errors": {}, "sessions": []}
    try:
        state = read_json(path, "sweep state")
    except StateFileError as e:
        raise SweepStateError(
            f"{e}; it records which trials ASHA stopped: fix it, or delete it to run those trials again"
        ) from None
    for k in ("stopped", "errors"):
        state.setdefault(k, {})
    state.setdefault("sessions", [])
    return state


def _write_state(out: Path, state: dict[str, Any]) -> None:
    atomic_write_text(out / "sweep.json", json.dumps(state, indent=1) + "\n")


def trial_status(run_dir: Path, stopped: dict[str, Any]) -> str:
    """finished (its run finished), stopped (by ASHA), unfinished (a run directory that did
    not finish: it resumes) or new."""
    state_path = run_dir / "state.json"
    if state_path.is_file():
        try:
            if json.loads(state_path.read_text()).get("finished"):
                return "finished"
        except (ValueError, OSError):
            pass
    if run_dir.name in stopped:
        return "stopped"
    if (run_dir / "config.yaml").is_file():
        return "unfinished"
    return "new"


def _check_snapshot(out: Path, sweep: SweepConfig, resuming: bool) -> None:
    path = out / "sweep.yaml"
    if not path.is_file():
        if any((out / t.name / "config.yaml").is_file() for t in sweep.trials):
            raise SweepStateError(
                f"{out} holds run directories but no sweep.yaml: it is not a sweep this version "
                "wrote; choose another name"
            )
        return
    if not resuming:
        raise SweepStateError(
            f"sweep directory {str(out)!r} already holds a sweep: continue it with --resume "
            "(finished trials are kept), or choose another name (name: in the sweep file)"
        )
    try:
        old = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise SweepStateError(
            f"{path} is damaged ({e}); it lists the sweep's trials: restore it, or start the sweep under another name"
        ) from None
    was = {t["name"]: t for t in old.get("trials", [])}
    now = {t.name: t.to_json() for t in sweep.trials}
    if set(was) != set(now):
        gone, new = sorted(set(was) - set(now)), sorted(set(now) - set(was))
        raise SweepStateError(
            f"{out} holds another sweep: its trials differ (only there: {', '.join(gone) or '-'}; "
            f"only in this file: {', '.join(new) or '-'}); resume it with the file it was started "
            "with, or choose another name"
        )
    changed = [n for n in now if was[n].get("config_sha256") != now[n]["config_sha256"]]
    if changed:
        raise SweepStateError(
            f"{out}: the training config of {len(changed)} trial(s) changed since the sweep started "
            f"(e.g. {changed[0]}: the base config, `set` or the space differ), so finished and new "
            "trials would not be comparable; resume with the files it was started with, or choose "
            "another name"
        )


# --------------------------------------------------------------------------- the trial (in a Ray worker)
class _Reporter:
    """The trainer's ``log``: appends each line to the trial's log, and after each periodic
    evaluation (state.json's ``evals`` moved on) reports its figures to Ray Tune."""

    def __init__(self, run_dir: Path, log_path: Path, metric: str, report: Callable[[dict[str, Any]], None]):
        self.dir, self.log_path, self.metric, self.report = run_dir, log_path, metric, report
        self.seen = self._mark()

    def _state(self) -> dict[str, Any]:
        try:
            return json.loads((self.dir / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def _mark(self) -> tuple[Any, Any]:
        s = self._state()
        return s.get("evals"), json.dumps(s.get("last_eval"), sort_keys=True)

    def __call__(self, msg: str) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "a") as f:
            f.write(msg.rstrip("\n") + "\n")
        mark = self._mark()
        if mark == self.seen:
            return
        self.seen = mark
        last = self._state().get("last_eval") or {}
        # the final evaluation is not reported: ASHA would stop a trial that reports at its
        # last step, before its run directory is marked finished
        if last.get("kind") != "eval":
            return
        step = int(last["step"])
        rows = [r for r in _csv_rows(self.dir / "eval.csv") if r.get("kind") == "eval" and int(r["step"]) == step]
        by = {r["opponent"]: float(r["win_rate"]) for r in rows}
        if self.metric not in by:
            return
        out: dict[str, Any] = {"step": step, "win_rate": by[self.metric]}
        out.update({f"win_rate_{tag_name(o)}": v for o, v in by.items()})
        regret = [r for r in _csv_rows(self.dir / "regret.csv") if r.get("kind") == "eval" and int(r["step"]) == step]
        if regret:
            out["regret"] = float(regret[-1]["regret"])
        self.report(out)


def _csv_rows(path: Path) -> list[dict[str, str]]:
    try:
        return list(csv.DictReader(io.StringIO(path.read_text())))
    except (OSError, csv.Error):
        return []


def run_trial(config: dict[str, Any]) -> None:
    """A Ray Tune function trainable: train (or continue) one trial's run directory."""
    tune = import_tune()
    spec = config["trial"]
    if spec.get("cwd") and os.path.isdir(spec["cwd"]):
        os.chdir(spec["cwd"])  # relative paths in the config (ppo:PATH opponents) read as in `tenk sweep`
    run_dir = Path(spec["run_dir"])
    reporter = _Reporter(run_dir, Path(spec["log"]), spec["metric"], tune.report)
    # A trial of an interrupted session may take a moment to die and free its run directory
    # (its lock): wait for it rather than fail. Nothing is changed before the lock is held.
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        if trial_status(run_dir, {}) == "finished":
            return
        try:
            if (run_dir / "config.yaml").is_file():
                resume(run_dir, progress=False, log=reporter)
            else:
                cfg = parse_config(spec["data"], source=f"sweep trial {spec['name']!r}")
                train(cfg, progress=False, argv=spec["argv"], log=reporter)
            return
        except LockedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)


# --------------------------------------------------------------------------- the driver
def check_resources(sweep: SweepConfig, offered: float, where: str, more: str = "") -> None:
    """Refuse now a trial that asks for more CPUs than one node of the runtime has: Ray would
    keep it pending, silently, for ever. ``where`` names the runtime, ``more`` how to get more."""
    if sweep.cpus > offered:
        raise SweepError(
            f"{sweep.source}: resources.cpus = {sweep.cpus:g}: every trial asks for {sweep.cpus:g} "
            f"CPUs and {where} has {offered:g}, so no trial could ever start; give resources.cpus at "
            f"most {offered:g}{more}"
        )


def _largest_node_cpus(ray: Any) -> float:
    """The CPUs of the largest live node: a trial runs on one node."""
    return max((float(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes() if n.get("Alive")), default=0.0)


def _undo_start(out: Path, before: set[str], sweep: SweepConfig) -> None:
    """After a session that failed before any trial made its run directory: remove what it
    created (sweep.yaml, sweep.json, logs, Tune's folder), so the corrected command starts
    afresh instead of finding "a sweep". The lock stays (it is held while this runs)."""
    import shutil

    new = set(os.listdir(out)) - before - {".lock"}
    if new & {t.name for t in sweep.trials}:
        return  # a trial started: that is a sweep to resume, not a failed start
    for name in new:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _scheduler(sweep: SweepConfig, on_stop: Callable[[str, int], None]) -> Any:
    if not sweep.scheduler:
        return None
    from ray.tune.schedulers import AsyncHyperBandScheduler, TrialScheduler

    class RecordingASHA(AsyncHyperBandScheduler):
        """ASHA that notes each trial it stops (sweep.json), so a resumed sweep leaves it stopped."""

        def on_trial_result(self, tune_controller, trial, result):
            decision = super().on_trial_result(tune_controller, trial, result)
            if decision == TrialScheduler.STOP:
                on_stop(trial.config["trial"]["name"], int(result.get("step", 0)))
            return decision

    total = max(t.cfg.total_steps for t in sweep.trials)
    return RecordingASHA(
        time_attr="step",
        metric="win_rate",
        mode="max",
        max_t=total,
        grace_period=sweep.scheduler["grace_steps"],
        reduction_factor=sweep.scheduler["reduction_factor"],
    )


def _progress_callback(say: Callable[[str], None], metric: str, errors: dict[str, str], stopped: dict[str, Any]) -> Any:
    tune = import_tune()

    class Progress(tune.Callback):
        def on_trial_start(self, iteration, trials, trial, **info):
            say(f"{trial.config['trial']['name']}: started")

        def on_trial_result(self, iteration, trials, trial, result, **info):
            extra = f", regret {100 * result['regret']:.2f} pp/game" if "regret" in result else ""
            say(
                f"{trial.config['trial']['name']}: step {int(result['step']):,}, win rate vs {metric} "
                f"{result['win_rate']:.1%}{extra}"
            )

        def on_trial_complete(self, iteration, trials, trial, **info):
            name = trial.config["trial"]["name"]
            if name not in stopped:
                say(f"{name}: done")

        def on_trial_error(self, iteration, trials, trial, **info):
            name = trial.config["trial"]["name"]
            errors.setdefault(name, "failed")
            say(f"{name}: failed")

    return Progress()


def run_sweep(
    sweep: SweepConfig,
    *,
    address: str | None = None,
    resume_: bool = False,
    cpus: int | None = None,
    say: Callable[[str], None] = print,
    report: bool = True,
) -> SweepResult:
    """Run (or, with ``resume_``, continue) a sweep: its trials not yet done, on Ray Tune
    (a private local runtime of ``cpus`` CPUs, or the cluster at ``address``), then the
    report across seeds (``report``)."""
    out = sweep.out_dir
    # a missing extra or a bad address is named before anything is written
    import_tune()
    if report:
        import_rliable()
    resolved = resolve_address(address)
    if resolved is not None:
        check_address(resolved)
    if resolved is None and not import_ray().is_initialized():
        where = f"--ray-cpus {cpus}" if cpus else "every core of this machine"
        check_resources(
            sweep,
            cpus or os.cpu_count() or 1,
            f"the private local Ray runtime ({where})",
            ", or run the sweep on a cluster with larger nodes (--ray-address)",
        )
    if resume_ and not (out / "sweep.yaml").is_file():
        say(f"note: {out} holds no sweep yet: starting it")
    made = [d for d in [out, *out.absolute().parents] if not d.exists()]
    before = set(os.listdir(out)) if out.is_dir() else set()
    lock = DirLock(out, "sweep directory").acquire()  # held by another: nothing here is this session's
    try:
        return _run_locked(sweep, out, address, resume_, cpus, say, report)
    except Exception:
        _undo_start(out, before, sweep)
        raise
    finally:
        lock.release()
        if made and os.listdir(out) == [".lock"]:
            # the directory this session made holds nothing but its lock (a failed start):
            # it goes too, with the folders made for it
            (out / ".lock").unlink(missing_ok=True)
            for d in made:  # deepest first, while empty
                try:
                    d.rmdir()
                except OSError:
                    break


def _run_locked(
    sweep: SweepConfig,
    out: Path,
    address: str | None,
    resume_: bool,
    cpus: int | None,
    say: Callable[[str], None],
    report: bool,
) -> SweepResult:
    _check_snapshot(out, sweep, resume_)
    snapshot = yaml.safe_dump(sweep.snapshot(), sort_keys=False)
    if not (out / "sweep.yaml").is_file():
        atomic_write_text(out / "sweep.yaml", "# tenk sweep: the sweep file as read, and every trial\n" + snapshot)
    state = read_state(out)
    status = {t.name: trial_status(out / t.name, state["stopped"]) for t in sweep.trials}
    todo = [t for t in sweep.trials if status[t.name] in ("new", "unfinished")]
    skipped = [t.name for t in sweep.trials if t not in todo]
    if skipped:
        say(f"{len(skipped)} of {len(sweep.trials)} trials are done ({', '.join(sorted(skipped))}): kept as they are")
    errors: dict[str, str] = {}
    t0 = time.perf_counter()
    interrupted = False
    if todo:
        for rules in {t.cfg.ruleset.hash: t.cfg.ruleset for t in todo if t.cfg.regret_on}.values():
            # solved once here (or read from the cache), not by several trials at once
            solve_game(rules)
        interrupted = _run_tune(sweep, todo, state, address, cpus, say, errors)
    else:
        say("nothing to run: every trial is done")
    wall = time.perf_counter() - t0
    status = {t.name: trial_status(out / t.name, state["stopped"]) for t in sweep.trials}
    for name in errors:
        if status[name] != "finished":
            status[name] = "error"
    state["errors"] = {**{k: v for k, v in state["errors"].items() if status.get(k) == "error"}, **errors}
    if todo:
        state["sessions"].append(
            {
                "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - wall)),
                "wall_seconds": round(wall, 1),
                "trials": [t.name for t in todo],
                "interrupted": interrupted,
                "cpus_per_trial": sweep.cpus,
            }
        )
    _write_state(out, state)
    res = SweepResult(out, status, [t.name for t in todo], skipped, errors, wall, interrupted)
    if report and any(s == "finished" for s in status.values()):
        res.report = write_report(out, say=say)
    return res


def _run_tune(
    sweep: SweepConfig,
    todo: list,
    state: dict[str, Any],
    address: str | None,
    cpus: int | None,
    say: Callable[[str], None],
    errors: dict[str, str],
) -> bool:
    """One Ray Tune experiment over ``todo``; True when it was interrupted."""
    tune = import_tune()
    out = sweep.out_dir.resolve()
    n = len(state["sessions"]) + 1
    while (out / "tune" / f"session-{n}").exists():
        n += 1

    def on_stop(name: str, step: int) -> None:
        state["stopped"][name] = {"step": step}
        _write_state(sweep.out_dir, state)
        say(f"{name}: stopped by ASHA at step {step:,}")

    specs = []
    for t in todo:
        data = t.data
        data["runs_dir"] = str(out)
        data["name"] = t.name
        specs.append(
            {
                "name": t.name,
                "run_dir": str(out / t.name),
                "log": str(out / "logs" / f"{t.name}.log"),
                "data": data,
                "metric": sweep.metric,
                "cwd": os.getcwd(),
                "argv": ["sweep", "--config", sweep.file or "?", f"(trial {t.name})"],
            }
        )
    trainable = tune.with_resources(run_trial, {"cpu": sweep.cpus})
    tuner = tune.Tuner(
        trainable,
        param_space={"trial": tune.grid_search(specs)},
        tune_config=tune.TuneConfig(
            scheduler=_scheduler(sweep, on_stop),
            max_concurrent_trials=sweep.max_concurrent,
            reuse_actors=True,
            trial_name_creator=lambda tr: tr.config["trial"]["name"],
            trial_dirname_creator=lambda tr: tr.config["trial"]["name"],
        ),
        run_config=tune.RunConfig(
            name=f"session-{n}",
            storage_path=str(out / "tune"),
            verbose=0,
            failure_config=tune.FailureConfig(max_failures=sweep.max_failures),
            callbacks=[_progress_callback(say, sweep.metric, errors, state["stopped"])],
        ),
    )
    with ray_session(address, num_cpus=cpus, what="tenk sweep", say=say) as session:
        import ray

        if session.mode != "local":  # a local runtime was checked before anything was written
            what = (
                f"the Ray cluster at {session.address}"
                if session.mode == "cluster"
                else "the Ray runtime this process holds"
            )
            check_resources(
                sweep, _largest_node_cpus(ray), f"the largest node of {what}", ", or add larger nodes to the cluster"
            )
        say(
            f"{len(todo)} trial(s) to run, {sweep.cpus:g} CPU(s) and {sweep.torch_threads} torch thread(s) each"
            + (f", ASHA on the win rate vs {sweep.metric}" if sweep.scheduler else "")
        )
        # Tune's own console output (a banner, tables, where its files are) stays off: the
        # progress callback says what happens, one line per event. So do its result loggers:
        # the run directories hold the results, and Tune's TensorBoard files would add a
        # second copy of every curve under runs/SWEEP/ for `tensorboard --logdir`.
        quiet = {"RAY_AIR_NEW_OUTPUT": "0", "TUNE_DISABLE_AUTO_CALLBACK_LOGGERS": "1"}
        old = {k: os.environ.get(k) for k in quiet}
        os.environ.update(quiet)
        try:
            grid = tuner.fit()
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    interrupted = False
    for r in grid:
        name = (r.config or {}).get("trial", {}).get("name")
        if r.error is not None and name:
            lines = [x.strip() for x in str(r.error).strip().splitlines() if x.strip()]
            where = out / "tune" / f"session-{n}" / name / "error.txt"
            errors[name] = f"{lines[-1] if lines else type(r.error).__name__} (traceback: {where})"
    done = {t.name for t in todo if trial_status(out / t.name, state["stopped"]) in ("finished", "stopped")}
    if len(done) + len([e for e in errors if e not in done]) < len(todo):
        interrupted = True
    return interrupted
