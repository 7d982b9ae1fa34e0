"""`tenk train`: train a MaskablePPO agent, or an afterstate agent (``algo: afterstate``), from a
YAML config (see scripts/train/)."""

from __future__ import annotations

import argparse
import sys

from pathlib import Path

from tenk_env.training.afterstate import (ALGO, AfterstateConfig, load_afterstate_config, resume_afterstate,
                                      train_afterstate)
from tenk_env.training.config import describe_fields, load_config, read_yaml
from tenk_env.training.trainer import resume, train


def _algo(path: str | Path) -> str:
    """The learner family a config (or a run directory's config.yaml) trains: PPO unless it says algo: afterstate."""
    return str(read_yaml(path).get("algo", "ppo"))


def _afterstate(args: argparse.Namespace) -> int:
    if args.resume:
        res = resume_afterstate(args.resume, args.set)
    else:
        res = train_afterstate(load_afterstate_config(args.config, args.set), argv=sys.argv[1:], force=args.force)
    d = res.run_dir
    print(f"run {d}: {res.turns:,} learner turns, {res.wall_seconds / 60:.1f} min of training")
    if res.best:
        print(f"best.npz: turns {res.best['turns']:,}, best by {res.best['by']}")
    if res.interrupted:
        print(f"stopped early; saved {d / 'state.pt'}. Continue with: tenk train --resume {d}")
        return 130
    for r in res.final:
        print(f"  final: vs {r['opponent']:<12} {r['win_rate']:6.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}] "
              f"over {r['games']:,} games")
    print(f"TensorBoard: tensorboard --logdir {d / 'tb'}    play it: tenk play --opponent afterstate:{d / 'best.npz'}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    if args.help_config:
        rows = ([("# PPO (a config without algo: afterstate)", "", "")] + describe_fields() +
                [("", "", ""), (f"# afterstate (a config with algo: {ALGO})", "", "")] +
                describe_fields(AfterstateConfig))
        for key, default, text in rows:
            print(f"{key:<26} {default:<14} {text}".rstrip())
        return 0
    if args.resume and args.config:
        raise ValueError("give --config FILE for a new run or --resume runs/NAME to continue one, not both")
    if not args.resume and not args.config:
        raise ValueError("give --config FILE (e.g. configs/ppo_demo.yaml) or --resume runs/NAME")
    if args.resume and args.force:
        raise ValueError("--force starts a new run over (with --config); --resume continues one and deletes nothing")

    src = Path(args.resume) / "config.yaml" if args.resume else args.config
    if (args.resume is None or Path(src).is_file()) and _algo(src) == ALGO:
        return _afterstate(args)
    progress = not args.no_progress
    if args.resume:
        res = resume(args.resume, args.set, progress=progress)
    else:
        cfg = load_config(args.config, args.set)
        res = train(cfg, progress=progress, argv=sys.argv[1:], force=args.force)
    d = res.run_dir
    print(f"run {d}: step {res.step:,}, {res.wall_seconds / 60:.1f} min of training "
          f"(this session and earlier ones), backend {res.backend}")
    if res.best:
        b = res.best
        print(f"best.zip: step {b['step']:,}, {b['win_rate']:.1%} [{b['ci_low']:.1%}, {b['ci_high']:.1%}] "
              f"against {b['opponent']}")
    if res.interrupted:
        print(f"stopped early; saved {d / 'last.zip'}. Continue with: tenk train --resume {d}")
        return 130
    for r in res.final:
        extra = (f", {r.points_per_turn:.0f} points/turn, bust rate {r.bust_rate:.1%}"
                 if r.points_per_turn == r.points_per_turn else "")  # NaN from the batched engine
        print(f"  final: vs {r.opponent:<12} {r.win_rate:6.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}] over "
              f"{r.games:,} games{extra}")
    print(f"TensorBoard: tensorboard --logdir {d / 'tb'}    curves: tenk plot {d}    "
          f"play it: tenk play --opponent ppo:{d / 'best.zip'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("train", help="train a PPO agent (MaskablePPO), or an afterstate agent (algo: afterstate), "
                                     "from a YAML config",
                       description="Train MaskablePPO against an opponent pool, or an afterstate agent (a config "
                                   "with algo: afterstate), with evaluation matches, TensorBoard logs and "
                                   "checkpoints in runs/NAME/. --help-config lists every key of both.")
    s.add_argument("--config", metavar="FILE", help="training config (YAML), e.g. configs/ppo_demo.yaml")
    s.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="override a config key (dotted, YAML value), e.g. --set total_steps=2e6 "
                        "--set ppo.learning_rate=1e-3; repeatable")
    s.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR (e.g. runs/ppo_demo) "
                                                        "from its newest checkpoint that loads (an afterstate "
                                                        "run: its state.pt); evaluations past it are played again")
    s.add_argument("--force", metavar="RUN_DIR",
                   help="start over in RUN_DIR, deleting the run it holds (listed before it goes); RUN_DIR must "
                        "be the directory the config writes (runs_dir/name), written out")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (evaluation lines still print)")
    s.add_argument("--help-config", action="store_true",
                   help="list every config key (PPO's, then the afterstate trainer's) with its default and exit")
    s.set_defaults(func=cmd_train)
