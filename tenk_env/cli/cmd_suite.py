"""`tenk suite list|solve|evaluate|leaderboard`: the rule-variant benchmark (tenk_env.variants).

    tenk suite list                       # the held-out test rulesets, one line each
    tenk suite list --split train --count 40 --write runs/suite/train   # as ruleset files
    tenk suite solve                      # solve and cache every test ruleset (minutes each)
    tenk suite evaluate dicenow           # its regret against optimal play on each, and the mean
    tenk suite leaderboard runs/suite/*.json   # the results ranked, as markdown
    tenk suite curve runs/afterstate_generalist  # a run's kept nets on the test split: its learning curve
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tenk_env import solve, variants
from tenk_env.cli.args import check_output_dir, check_output_file, seed_arg
from tenk_env.cli.cmd_plot import regret_figure
from tenk_env.evaluation.suite import (evaluate_suite, leaderboard, learning_curve, mistakes_by_kind, read_result,
                                      result_path, write_result)
from tenk_env.io import atomic_write_bytes, atomic_write_text
from tenk_env.policies import zoo
from tenk_env.cli.common import console
from tenk_env.rules import Ruleset


def _rulesets(args: argparse.Namespace) -> list[Ruleset]:
    if args.count is not None and args.count < 1:
        raise ValueError(f"--count {args.count}: give a whole number of at least 1")
    if args.count is not None and args.split != "train":
        raise ValueError(f"--count picks how many training rulesets to list; the {args.split} split is fixed")
    return variants.split(args.split, args.count)


def _scoring(r: Ruleset) -> str:
    parts = [f"1-1-1 {r.three_ones}", f"multiples {r.multiples}"]
    for name, v in (("straight", r.straight), ("short straights", r.short_straights), ("3 pairs", r.three_pairs),
                    ("2 triplets", r.two_triplets)):
        if v:
            parts.append(f"{name} {v}")
    if r.four_plus_pair_is_three_pairs:
        parts.append("4+pair = 3 pairs")
    return ", ".join(parts)


def cmd_list(args: argparse.Namespace) -> int:
    rs = _rulesets(args)
    if args.write:
        out = check_output_dir(args.write, "--write")
        out.mkdir(parents=True, exist_ok=True)
    t = Table(title=f"suite split {args.split!r} (variant space v{variants.SPACE_VERSION})")
    for col in ("name", "hash", "dice", "target", "entry", "min bank", "rolls", "scoring", "hot dice", "end", "ties",
                "solved"):
        t.add_column(col, overflow="fold")
    for r in rs:
        t.add_row(r.name, r.hash, str(r.num_dice), f"{r.target:,}", str(r.entry_threshold), str(r.min_bank),
                  str(r.max_rolls or "any"), _scoring(r), r.hot_dice, r.end, r.tie.replace("_", " "),
                  "yes" if solve.is_cached(r) else "no")
        if args.write:
            r.save(out / f"{r.name}.yaml")
    Console(width=max(console.width, 170)).print(t)  # logs and pipes: one row per line
    if args.write:
        console.print(f"wrote {len(rs)} ruleset files to {args.write} (each plays as --rules FILE)")
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    rs = _rulesets(args)
    todo = [r for r in rs if not solve.is_cached(r)]
    console.print(f"{len(rs) - len(todo)} of {len(rs)} rulesets of split {args.split!r} already solved (cache "
                  f"{solve.cache_dir()}); solving {len(todo)}: about a minute each at a 10,000 target, more "
                  "with a roll limit", highlight=False, soft_wrap=True)
    t0 = time.perf_counter()
    for k, r in enumerate(rs, start=1):
        t = time.perf_counter()
        sol = solve.solve_game(r)
        how = "cached" if sol.stats.get("cached") else f"solved in {time.perf_counter() - t:,.0f} s"
        console.print(f"{k}/{len(rs)} {r.name} (hash {r.hash}): P(first player wins) {sol.p_first_win:.6f}, {how}",
                      highlight=False)
        args.done = f"{k} of {len(rs)} rulesets solved and cached"
    console.print(f"split {args.split!r}: every ruleset solved ({time.perf_counter() - t0:,.0f} s)")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    for k, least in (("games", 2), ("workers", 1)):
        if getattr(args, k) < least:
            raise ValueError(f"--{k} {getattr(args, k)}: give a whole number of at least {least}")
    check_output_dir(args.out, "--out")
    cmd = (f"tenk suite evaluate {args.agent} --split {args.split} --games {args.games} --seed {args.seed}"
           + (f" --count {args.count}" if args.count else "") + (" --regret" if args.regret else ""))
    _rulesets(args)  # the split's own checks, before the agent is built
    res = evaluate_suite(args.agent, args.split, games=args.games, seed=args.seed, workers=args.workers,
                         count=args.count, exact=not args.regret, command=cmd,
                         log=lambda m: console.print(m, highlight=False, markup=False))
    path = write_result(res, result_path(args.out, res.agent, res.split, res.agent_sha256))
    ci = (f"[{res.mean_regret_ci[0]:.4f}, {res.mean_regret_ci[1]:.4f}]" if res.mean_regret_ci else
          "(no interval: too few games on a ruleset; give more --games)")
    console.print(f"{res.agent} on split {res.split!r} ({len(res.rulesets)} rulesets, space v{res.space_version}): "
                  f"mean regret {res.mean_regret:.4f} per game {ci}, "
                  f"{0.5 - res.mean_regret:.2%} against optimal on average ({res.seconds:,.0f} s); written to {path}",
                  highlight=False)
    kinds = mistakes_by_kind(res)
    if kinds:
        console.print("what it gets wrong, regret per game by kind of mistake (mean over the rulesets measured by "
                      "regret): " + "; ".join(f"{k} {v:.4f}" for k, v in kinds.items()), highlight=False)
    return 0


def _describe(agent: str) -> str:
    name, _, arg = agent.partition(":")
    if name == "zoo":
        entries = {e.name: e for e in zoo.entries()}
        return entries[arg].summary() if arg in entries else "zoo agent"
    return {"onnx": "ONNX model", "cmd": "external program", "ppo": "PPO checkpoint",
            "afterstate": "afterstate checkpoint"}.get(name, "bot")


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if args.out:
        check_output_file(args.out, "--out", "leaderboard.md")
    text = leaderboard([read_result(p) for p in args.results], _describe)
    if args.out:
        atomic_write_text(args.out, text)
    print(text, end="")  # as written: a terminal-wide wrap would break the markdown's rows
    return 0


def cmd_curve(args: argparse.Namespace) -> int:
    for k, least in (("games", 2), ("workers", 1)):
        if getattr(args, k) < least:
            raise ValueError(f"--{k} {getattr(args, k)}: give a whole number of at least {least}")
    run = Path(args.run)
    unit, points = learning_curve(run, args.split, games=args.games, seed=args.seed, workers=args.workers,
                                  log=lambda m: console.print(m, highlight=False, markup=False))
    rows = [f"{unit.split()[-1]},mean_regret,ci_low,ci_high,win_rate_vs_optimal"]
    t = Table(title=f"{run.name} on split {args.split!r}: mean regret per game against optimal play")
    for col in (unit, "mean regret [95%]", "vs optimal"):
        t.add_column(col, justify="right")
    for turns, r in points:
        # no interval where a ruleset's games were too few for one: empty fields, and the reason
        lo, hi = (f"{x:.6f}" for x in r.mean_regret_ci) if r.mean_regret_ci else ("", "")
        ci = (f"[{r.mean_regret_ci[0]:.4f}, {r.mean_regret_ci[1]:.4f}]" if r.mean_regret_ci else
              "(no interval: too few games on a ruleset; give more --games)")
        rows.append(f"{turns},{r.mean_regret:.6f},{lo},{hi},{0.5 - r.mean_regret:.6f}")
        t.add_row(f"{turns:,}", f"{r.mean_regret:.4f} {ci}", f"{0.5 - r.mean_regret:.2%}")
    console.print(t)
    csv = run / f"suite_curve_{args.split}.csv"
    atomic_write_text(csv, "\n".join(rows) + "\n")
    png = run / "plots" / f"suite_{args.split}_regret.png"
    atomic_write_bytes(png, _curve_png(run.name, args.split, points, unit))
    console.print(f"wrote {csv} and {png}", highlight=False)
    return 0


def _curve_png(name: str, split: str, points: list, unit: str) -> bytes:
    import io

    import matplotlib.pyplot as plt

    band = None
    if all(r.mean_regret_ci for _, r in points):
        band = ([r.mean_regret_ci[0] for _, r in points], [r.mean_regret_ci[1] for _, r in points])
    fig = regret_figure([t for t, _ in points], [r.mean_regret for _, r in points], band,
                        title=f"{name}: regret on the suite's {split} split", xlabel=unit,
                        label="mean regret per game", band_label="95% interval (over these rulesets' games)")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("suite", help="the rule-variant benchmark: list its splits, solve them")
    ss = s.add_subparsers(dest="suite_command", required=True)
    for name, func, what in (("list", cmd_list, "list a split's rulesets"),
                             ("solve", cmd_solve, "solve and cache every ruleset of a split (resumable: the "
                                                  "solved ones are cached)"),
                             ("evaluate", cmd_evaluate, "an agent's win rate against optimal and its regret on "
                                                        "every ruleset of a split, and the mean")):
        p = ss.add_parser(name, help=what)
        if name == "evaluate":
            p.add_argument("agent", help="the agent spec: a bot, onnx:FILE, cmd:COMMAND, or any agent that plays "
                                         "every ruleset of the split")
        p.add_argument("--split", choices=variants.SPLITS, default="test",
                       help="test (default): the held-out rulesets; train: the training variants; presets: the "
                            "named presets the solver covers")
        p.add_argument("--count", type=int, help="train: how many (default 16)")
        if name == "list":
            p.add_argument("--write", metavar="DIR", help="also write each ruleset as a YAML file in DIR")
        if name == "evaluate":
            p.add_argument("--games", type=int, default=1000,
                           help="analysed games per ruleset where the agent is measured by regret (default 1000)")
            p.add_argument("--seed", type=seed_arg, default=0, help="seed of the analysed games")
            p.add_argument("--regret", action="store_true",
                           help="measure by regret over --games analysed games even where the exact evaluator "
                                "follows the agent (a bot's exact evaluation takes minutes a ruleset at a 10,000 "
                                "target, then is cached; the analysis, seconds)")
            p.add_argument("--workers", type=int, default=2, help="worker processes (results do not depend on it)")
            p.add_argument("--out", default="runs/suite", help="folder of the result JSON (default runs/suite)")
        p.set_defaults(func=func)
    lb = ss.add_parser("leaderboard", help="rank tenk suite evaluate's results by mean regret (markdown)")
    lb.add_argument("results", nargs="+", help="result JSON files (runs/suite/*.json)")
    lb.add_argument("--out", help="also write the markdown to this file")
    lb.set_defaults(func=cmd_leaderboard)
    cv = ss.add_parser("curve", help="a training run's learning curve on a split: every net it kept (an afterstate "
                                     "run's eval.keep nets, a PPO run's step checkpoints), measured by regret")
    cv.add_argument("run", help="the run directory of an agent that plays any ruleset: afterstate (trained with "
                                "eval.keep: true) or PPO (its checkpoints/step_N.zip)")
    cv.add_argument("--split", choices=variants.SPLITS, default="test", help="the split (default test)")
    cv.add_argument("--games", type=int, default=200, help="analysed games per ruleset and net (default 200)")
    cv.add_argument("--seed", type=seed_arg, default=0, help="seed of the analysed games")
    cv.add_argument("--workers", type=int, default=2, help="worker processes (results do not depend on it)")
    cv.set_defaults(func=cmd_curve)
    # an interruption's line (tenk_env/cli/main.py) says what is kept
    s.set_defaults(resume_hint="rerun it: solved rulesets are cached")
