"""`tenk sweep`: seeds and hyperparameters as Ray Tune trials of `tenk train` (see scripts/sweep/).

    tenk sweep --config configs/sweep_demo.yaml                  # a private local Ray runtime
    tenk sweep --config configs/sweep_demo.yaml --ray-address HEAD:6379
    tenk sweep --config configs/sweep_demo.yaml --resume         # after an interruption
    tenk sweep report runs/sweep_demo                            # the report across seeds, again
"""

from __future__ import annotations

import argparse

from scripts.ray_runtime import add_ray_arguments
from scripts.sweep.config import SweepError, load_sweep
from scripts.sweep.report import write_report
from scripts.sweep.run import run_sweep


def _say(msg: str) -> None:
    print(msg, flush=True)


def cmd_sweep(args: argparse.Namespace) -> int:
    if args.sweep_command == "report":
        rep = write_report(args.dir, reps=args.reps, seed=args.seed, say=_say)
        print(rep.markdown)
        return 0
    if not args.config:
        raise SweepError("give --config FILE (e.g. configs/sweep_demo.yaml), or `tenk sweep report runs/SWEEP`")
    sweep = load_sweep(args.config, args.set)
    try:
        res = run_sweep(sweep, address=args.ray_address, resume_=args.resume, cpus=args.ray_cpus, say=_say)
    except KeyboardInterrupt:
        print(f"interrupted: finished trials are kept; continue with: tenk sweep --config {args.config} --resume")
        return 130
    counts: dict[str, int] = {}
    for s in res.status.values():
        counts[s] = counts.get(s, 0) + 1
    print(f"sweep {res.out_dir}: {', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}; this session ran "
          f"{len(res.ran)} trial(s) in {res.wall_seconds / 60:.1f} min")
    if res.report is not None:
        print(res.report.markdown)
    for name, msg in res.errors.items():
        print(f"trial {name}: {msg}")
    if res.interrupted or any(s in ("unfinished", "new") for s in res.status.values()):
        print(f"not every trial finished: continue with tenk sweep --config {args.config} --resume")
        return 130
    return 1 if res.errors else 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("sweep", help="seed and hyperparameter sweeps of `tenk train` on Ray Tune (needs the ray extra)",
                       description="Run the trials of a sweep file (a training config, a grid, random or variants "
                                   "search over its keys, crossed with seeds) as Ray Tune trials, each an ordinary "
                                   "run directory runs/SWEEP/TRIAL/, then report the results across seeds (rliable).")
    s.add_argument("--config", metavar="FILE", help="sweep file, e.g. configs/sweep_demo.yaml")
    s.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="override a training config key in every trial (as tenk train --set); repeatable")
    s.add_argument("--resume", action="store_true",
                   help="continue the sweep: finished trials are kept, unfinished ones continue from their checkpoints")
    add_ray_arguments(s, "run the trials on this Ray cluster (default: RAY_ADDRESS, else a private local runtime); "
                         "the package, and the runs directory at the same path, must be on every node")
    s.set_defaults(func=cmd_sweep, sweep_command=None)
    inner = s.add_subparsers(dest="sweep_command", metavar="report")
    r = inner.add_parser("report", help="write the report across seeds of a sweep directory",
                         description="Final win rates (and regret) per configuration across seeds: mean and IQM with "
                                     "95% stratified-bootstrap intervals, performance profile, learning curves. "
                                     "Output in DIR/report/.")
    r.add_argument("dir", metavar="DIR", help="the sweep directory, e.g. runs/sweep_demo")
    r.add_argument("--reps", type=int, metavar="N", help="bootstrap resamples (default: the sweep file's, 2000)")
    r.add_argument("--seed", type=int, metavar="S", help="seed of the bootstrap (default: the sweep file's, 0)")
