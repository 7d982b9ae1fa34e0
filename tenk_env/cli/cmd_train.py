"""`tenk train`: train a MaskablePPO agent, or an afterstate agent (``algo: afterstate``), from a
YAML config (see :mod:`tenk_env.training`)."""

from __future__ import annotations

import argparse
import sys

from tenk_env.training import AfterstateResult, resume_run, train_file
from tenk_env.training.afterstate import ALGO, AfterstateConfig
from tenk_env.training.config import describe_fields


def _afterstate_summary(res: AfterstateResult) -> int:
    d = res.run_dir
    print(f"run {d}: {res.turns:,} learner turns, {res.wall_seconds / 60:.1f} min of training")
    if res.best:
        print(f"best.npz: turns {res.best['turns']:,}, best by {res.best['by']}")
    if res.interrupted:
        print(f"stopped early; saved {d / 'state.pt'}. Continue with: tenk train --resume {d}")
        return 130
    for r in res.final:
        print(
            f"  final: vs {r['opponent']:<12} {r['win_rate']:6.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}] "
            f"over {r['games']:,} games"
        )
    print(f"TensorBoard: tensorboard --logdir {d / 'tb'}    play it: tenk play --opponent afterstate:{d / 'best.npz'}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    if args.help_config:
        rows = (
            [("# PPO (a config without algo: afterstate)", "", "")]
            + describe_fields()
            + [("", "", ""), (f"# afterstate (a config with algo: {ALGO})", "", "")]
            + describe_fields(AfterstateConfig)
        )
        for key, default, text in rows:
            print(f"{key:<26} {default:<14} {text}".rstrip())
        return 0
    if args.resume and args.config:
        raise ValueError("give --config FILE for a new run or --resume runs/NAME to continue one, not both")
    if not args.resume and not args.config:
        raise ValueError("give --config FILE (e.g. configs/ppo_demo.yaml) or --resume runs/NAME")
    if args.resume and args.force:
        raise ValueError("--force starts a new run over (with --config); --resume continues one and deletes nothing")

    progress = not args.no_progress
    if args.resume:
        res = resume_run(args.resume, args.set, progress=progress)
    else:
        res = train_file(args.config, args.set, argv=sys.argv[1:], force=args.force, progress=progress)
    if isinstance(res, AfterstateResult):
        return _afterstate_summary(res)
    d = res.run_dir
    print(
        f"run {d}: step {res.step:,}, {res.wall_seconds / 60:.1f} min of training "
        f"(this session and earlier ones), backend {res.backend}"
    )
    if res.best:
        b = res.best
        print(
            f"best.zip: step {b['step']:,}, {b['win_rate']:.1%} [{b['ci_low']:.1%}, {b['ci_high']:.1%}] "
            f"against {b['opponent']}"
        )
    if res.interrupted:
        print(f"stopped early; saved {d / 'last.zip'}. Continue with: tenk train --resume {d}")
        return 130
    for r in res.final:
        extra = (
            f", {r.points_per_turn:.0f} points/turn, bust rate {r.bust_rate:.1%}"
            if r.points_per_turn == r.points_per_turn
            else ""
        )  # NaN from the batched engine
        print(
            f"  final: vs {r.opponent:<12} {r.win_rate:6.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}] over "
            f"{r.games:,} games{extra}"
        )
    print(
        f"TensorBoard: tensorboard --logdir {d / 'tb'}    curves: tenk plot {d}    "
        f"play it: tenk play --opponent ppo:{d / 'best.zip'}"
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "train",
        help="train a PPO agent (MaskablePPO), or an afterstate agent (algo: afterstate), from a YAML config",
        description="Train MaskablePPO against an opponent pool, or an afterstate agent (a config "
        "with algo: afterstate), with evaluation matches, TensorBoard logs and "
        "checkpoints in runs/NAME/. --help-config lists every key of both.",
    )
    s.add_argument("--config", metavar="FILE", help="training config (YAML), e.g. configs/ppo_demo.yaml")
    s.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override a config key (dotted, YAML value), e.g. --set total_steps=2e6 "
        "--set ppo.learning_rate=1e-3; repeatable",
    )
    s.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR (e.g. runs/ppo_demo) "
        "from its newest checkpoint that loads (an afterstate "
        "run: its state.pt); evaluations past it are played again",
    )
    s.add_argument(
        "--force",
        metavar="RUN_DIR",
        help="start over in RUN_DIR, deleting the run it holds (listed before it goes); RUN_DIR must "
        "be the directory the config writes (runs_dir/name), written out",
    )
    s.add_argument("--no-progress", action="store_true", help="no progress bar (evaluation lines still print)")
    s.add_argument(
        "--help-config",
        action="store_true",
        help="list every config key (PPO's, then the afterstate trainer's) with its default and exit",
    )
    s.set_defaults(func=cmd_train)
