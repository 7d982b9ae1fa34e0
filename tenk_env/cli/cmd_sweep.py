"""`tenk sweep`: seeds and hyperparameters as Ray Tune trials of `tenk train` (see tenk_env/training/sweep/).

tenk sweep --config configs/sweep_demo.yaml                  # a private local Ray runtime
tenk sweep --config configs/sweep_demo.yaml --ray-address HEAD:6379
tenk sweep --config configs/sweep_demo.yaml --resume         # after an interruption
tenk sweep report runs/sweep_demo                            # the report across seeds, again
"""

from __future__ import annotations

import argparse
import shlex

from tenk_env.cli.args import count_arg, seed_arg
from tenk_env.cli.common import interrupted_exit_code, interrupted_line
from tenk_env.evaluation.ray_runtime import add_ray_arguments
from tenk_env.training.sweep.config import MAX_REPS, REPS_WHY, SweepError, load_sweep
from tenk_env.training.sweep.report import write_report
from tenk_env.training.sweep.run import read_state, run_sweep, trial_status


def _say(msg: str) -> None:
    print(msg, flush=True)


def _resume_command(args: argparse.Namespace) -> str:
    """The command that continues this sweep: the same file and overrides (a changed one is
    refused on resume), with --resume."""
    argv = ["tenk", "sweep", "--config", args.config] + [x for kv in args.set for x in ("--set", kv)]
    if args.ray_address:
        argv += ["--ray-address", args.ray_address]
    return shlex.join(argv + ["--resume"])


def _trials_done(sweep) -> str:
    try:
        stopped = read_state(sweep.out_dir)["stopped"]
    except SweepError:
        stopped = {}
    done = sum(trial_status(sweep.out_dir / t.name, stopped) in ("finished", "stopped") for t in sweep.trials)
    return f"{done} of {len(sweep.trials)} trials done"


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.sweep_command == "report":
        rep = write_report(args.dir, reps=args.reps, seed=args.seed, say=_say)
        print(rep.markdown)
        return 0
    if not args.config:
        raise SweepError("give --config FILE (e.g. configs/sweep_demo.yaml), or `tenk sweep report runs/SWEEP`")
    sweep = load_sweep(args.config, args.set)
    # what an interrupt (Ctrl-C, SIGTERM) ends with: tenk_env/cli/main.py prints it
    args.resume_hint = f"rerun `{_resume_command(args)}` to resume"
    try:
        res = run_sweep(sweep, address=args.ray_address, resume_=args.resume, cpus=args.ray_cpus, say=_say)
    except KeyboardInterrupt:
        args.done = _trials_done(sweep)
        raise
    counts: dict[str, int] = {}
    for s in res.status.values():
        counts[s] = counts.get(s, 0) + 1
    print(
        f"sweep {res.out_dir}: {', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}; this session ran "
        f"{len(res.ran)} trial(s) in {res.wall_seconds / 60:.1f} min"
    )
    if res.report is not None:
        print(res.report.markdown)
    for name, msg in res.errors.items():
        print(f"trial {name}: {msg}")
    if res.interrupted:
        # Ray Tune took the interrupt itself and stopped the trials: the same line as any other
        print(interrupted_line(argparse.Namespace(done=_trials_done(sweep), resume_hint=args.resume_hint)))
        return interrupted_exit_code()
    if any(s in ("unfinished", "new") for s in res.status.values()):
        print(f"not every trial finished: continue with {_resume_command(args)}")
        return 1
    return 1 if res.errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "sweep",
        help="seed and hyperparameter sweeps of `tenk train` on Ray Tune (needs the ray extra)",
        description="Run the trials of a sweep file (a training config, a grid, random or variants "
        "search over its keys, crossed with seeds) as Ray Tune trials, each an ordinary "
        "run directory runs/SWEEP/TRIAL/, then report the results across seeds (rliable).",
    )
    s.add_argument("--config", metavar="FILE", help="sweep file, e.g. configs/sweep_demo.yaml")
    s.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a training config key in every trial (as tenk train --set); repeatable",
    )
    s.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep: finished trials are kept, unfinished ones continue from their checkpoints",
    )
    add_ray_arguments(
        s,
        "run the trials on this Ray cluster (default: RAY_ADDRESS, else a private local runtime); "
        "the package, and the runs directory at the same path, must be on every node",
    )
    s.set_defaults(func=cmd_sweep, sweep_command=None)
    inner = s.add_subparsers(dest="sweep_command", metavar="report")
    r = inner.add_parser(
        "report",
        help="write the report across seeds of a sweep directory",
        description="Final win rates (and regret) per configuration across seeds: mean and IQM with "
        "95% stratified-bootstrap intervals, performance profile, learning curves. "
        "Output in DIR/report/.",
    )
    r.add_argument("dir", metavar="DIR", help="the sweep directory, e.g. runs/sweep_demo")
    r.add_argument(
        "--reps",
        type=count_arg(10, MAX_REPS, REPS_WHY),
        metavar="N",
        help=f"bootstrap resamples, 10 to {MAX_REPS:,} (default: the sweep file's, 2000)",
    )
    r.add_argument("--seed", type=seed_arg, metavar="S", help="seed of the bootstrap (default: the sweep file's, 0)")
