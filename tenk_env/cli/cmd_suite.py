"""`tenk suite list|solve|evaluate|leaderboard`: the rule-variant benchmark (tenk_env.variants).

tenk suite list                       # the held-out test rulesets, one line each
tenk suite list --split train --count 40 --write runs/suite/train   # as ruleset files
tenk suite solve                      # solve and cache every test ruleset (minutes each)
tenk suite evaluate dicenow           # its regret against optimal play on each, and the mean
tenk suite leaderboard runs/suite --split test   # the results ranked (markdown where piped or written)
tenk suite curve runs/afterstate_generalist  # a run's kept nets on the test split: its learning curve
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tenk_env import solve, variants
from tenk_env.cli.args import check_output_dir, check_output_file, count_arg, seed_arg
from tenk_env.cli.cmd_plot import regret_figure
from tenk_env.cli.common import console
from tenk_env.evaluation.analysis import check_games
from tenk_env.evaluation.suite import (
    LEADERBOARD_COLUMNS,
    MAX_GAMES,
    MAX_TRAIN_COUNT,
    check_count,
    evaluate_suite,
    leaderboard,
    leaderboard_head,
    leaderboard_rows,
    learning_curve,
    mistakes_by_kind,
    read_results,
    result_path,
    unique_results,
    write_result,
)
from tenk_env.io import atomic_write_bytes, atomic_write_text
from tenk_env.policies import zoo
from tenk_env.rules import Ruleset
from tenk_env.units import REGRET_HEADER, REGRET_UNIT, pp, pp_interval

#: worker processes at most: more than the cores of any machine here only adds start-up time
MAX_WORKERS = 256
#: what the bounded arguments count, for their messages
COUNT_WHY = (
    "training rulesets (the train split has no end; the generalist configs draw from 200, and each "
    "ruleset takes minutes to solve)"
)
GAMES_WHY = "analysed games a ruleset"
WORKERS_WHY = "worker processes"
#: where lines beside the data go (the leaderboard's markdown is the data on standard output)
notes = Console(stderr=True)


def _fresh(args: argparse.Namespace) -> None:
    """``--fresh N`` is ``--split fresh --count N``."""
    fresh = getattr(args, "fresh", None)
    if fresh is None:
        return
    if args.split not in (None, "fresh") or args.count not in (None, fresh):
        raise ValueError(
            f"--fresh {fresh} draws {fresh} new rulesets, the fresh split: give it without --split and --count"
        )
    args.split, args.count = "fresh", fresh


def _rulesets(args: argparse.Namespace) -> list[Ruleset]:
    _fresh(args)
    if args.split is None:
        args.split = "test"
    check_count(args.split, args.count, "--count")
    return variants.split(args.split, args.count, args.seed)


def _scoring(r: Ruleset) -> str:
    parts = [f"1-1-1 {r.three_ones}", f"multiples {r.multiples}"]
    for name, v in (
        ("straight", r.straight),
        ("short straights", r.short_straights),
        ("3 pairs", r.three_pairs),
        ("2 triplets", r.two_triplets),
    ):
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
    for col in (
        "name",
        "hash",
        "dice",
        "target",
        "entry",
        "min bank",
        "rolls",
        "scoring",
        "hot dice",
        "end",
        "ties",
        "solved",
    ):
        t.add_column(col, overflow="fold")
    for r in rs:
        t.add_row(
            r.name,
            r.hash,
            str(r.num_dice),
            f"{r.target:,}",
            str(r.entry_threshold),
            str(r.min_bank),
            str(r.max_rolls or "any"),
            _scoring(r),
            r.hot_dice,
            r.end,
            r.tie.replace("_", " "),
            "yes" if solve.is_cached(r) else "no",
        )
        if args.write:
            r.save(out / f"{r.name}.yaml")
    Console(width=max(console.width, 170)).print(t)  # logs and pipes: one row per line
    if args.write:
        console.print(f"wrote {len(rs)} ruleset files to {args.write} (each plays as --rules FILE)")
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    rs = _rulesets(args)
    todo = [r for r in rs if not solve.is_cached(r)]
    console.print(
        f"{len(rs) - len(todo)} of {len(rs)} rulesets of split {args.split!r} already solved (cache "
        f"{solve.cache_dir()}); solving {len(todo)}: about a minute each at a 10,000 target, more "
        "with a roll limit",
        highlight=False,
        soft_wrap=True,
    )
    t0 = time.perf_counter()
    for k, r in enumerate(rs, start=1):
        t = time.perf_counter()
        sol = solve.solve_game(r)
        how = "cached" if sol.stats.get("cached") else f"solved in {time.perf_counter() - t:,.0f} s"
        console.print(
            f"{k}/{len(rs)} {r.name} (hash {r.hash}): P(first player wins) {sol.p_first_win:.6f}, {how}",
            highlight=False,
        )
        args.done = f"{k} of {len(rs)} rulesets solved and cached"
    console.print(f"split {args.split!r}: every ruleset solved ({time.perf_counter() - t0:,.0f} s)")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    check_output_dir(args.out, "--out")
    rulesets = _rulesets(args)
    cmd = (
        f"tenk suite evaluate {args.agent} --split {args.split} --games {args.games} --seed {args.seed}"
        + (f" --count {args.count}" if args.count else "")
        + (" --regret" if args.regret else "")
    )
    for r in rulesets:  # the split's own checks, before the agent is built
        check_games(args.games, r, "--games")
    res = evaluate_suite(
        args.agent,
        args.split,
        games=args.games,
        seed=args.seed,
        workers=args.workers,
        count=args.count,
        exact=not args.regret,
        command=cmd,
        log=lambda m: console.print(m, highlight=False, markup=False),
    )
    path = result_path(args.out, res)
    replaced = path.is_file()
    write_result(res, path)
    ci = (
        pp_interval(res.mean_regret_ci)
        if res.mean_regret_ci
        else "(no interval: too few games on a ruleset; give more --games)"
    )
    console.print(
        f"{res.agent} on split {res.split!r} ({len(res.rulesets)} rulesets, space v{res.space_version}): "
        f"mean regret {pp(res.mean_regret)} {REGRET_UNIT} {ci}, "
        f"{0.5 - res.mean_regret:.2%} against optimal on average ({res.seconds:,.0f} s); written to {path}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )  # the terminal wraps it, never inside the path
    if replaced:
        console.print(
            f"{path} held an earlier result of these same settings (agent, split, measurement, games, "
            "seed): replaced by this one",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    kinds = mistakes_by_kind(res)
    if kinds:
        console.print(
            f"what it gets wrong, regret ({REGRET_UNIT}) by kind of mistake (mean over the rulesets "
            "measured by regret): " + "; ".join(f"{k} {pp(v)}" for k, v in kinds.items()),
            highlight=False,
        )
    return 0


def _describe(agent: str) -> str:
    name, _, arg = agent.partition(":")
    if name == "zoo":
        entries = {e.name: e for e in zoo.entries()}
        return entries[arg].summary() if arg in entries else "zoo agent"
    return {
        "onnx": "ONNX model",
        "cmd": "external program",
        "llm": "language model",
        "ppo": "PPO checkpoint",
        "afterstate": "afterstate checkpoint",
    }.get(name, "bot")


def _note(line: str) -> None:
    notes.print(line, highlight=False, markup=False, soft_wrap=True)


def leaderboard_table(split: str, n: int, version: int, rows: list[tuple[str, ...]]) -> Table:
    """The leaderboard for a terminal: every figure whole at any width from 80 columns up
    (the figures' columns never wrap; the agent, what it is and how it was measured fold)."""
    t = Table(title=Text(leaderboard_head(split, n, version, code="")), title_justify="left")
    # the figures' headers break at their spaces: the figures' own width is all their columns need
    heads = {3: f"mean {REGRET_HEADER}\n[95%]", 4: "vs\noptimal"}
    for k, col in enumerate(LEADERBOARD_COLUMNS):
        figures = k in (0, 3, 4)
        t.add_column(
            heads.get(k, col),
            justify="right" if k in (0, 4) else "left",
            no_wrap=figures,
            overflow="fold",
            min_width=max(len(r[k]) for r in rows) if figures else None,
            ratio=None if figures else (1 if k == 5 else 2),
        )
    for row in rows:
        t.add_row(*(Text(c) for c in row))  # names are text, not rich markup
    return t


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if args.out:
        check_output_file(args.out, "--out", "leaderboard.md")
    skipped = []
    read = read_results(args.results, log=lambda m: (skipped.append(m), _note(m)))
    if not read and skipped:
        raise ValueError(f"no results to rank: every file given was left out ({len(skipped)} line(s) above say why)")
    if args.split:
        other = [r for _, r in read if r.split != args.split]
        if other:
            _note(f"left out {len(other)} result(s) of other splits than {args.split!r}")
        read = [(p, r) for p, r in read if r.split == args.split]
        if not read:
            raise ValueError(f"no results of split {args.split!r} to rank among the files given")
    elif len(splits := sorted({r.split for _, r in read})) > 1:
        raise ValueError(
            f"the files given hold results of several splits ({', '.join(splits)}), which cannot share a "
            "table; pick one with --split"
        )
    results = [r for _, r in unique_results(read, log=_note)]
    text = leaderboard(results, _describe)
    if args.out:
        atomic_write_text(args.out, text)
    if console.is_terminal and not args.markdown:
        console.print(leaderboard_table(*leaderboard_rows(results, _describe)))
        if args.out:
            console.print(f"wrote the markdown to {args.out}", highlight=False, markup=False)
    else:
        print(text, end="")  # as written: a terminal-wide wrap would break the markdown's rows
    return 0


def curve_table(title: str, unit: str, points: list) -> Table:
    """A learning curve's table: the figures' columns never wrap, so none is cut at 80 columns."""
    rows = [
        (f"{turns:,}", f"{pp(r.mean_regret)} {pp_interval(r.mean_regret_ci)}", f"{0.5 - r.mean_regret:.2%}")
        for turns, r in points
    ]
    t = Table(title=Text(title))
    for k, col in enumerate((unit, f"mean {REGRET_HEADER}\n[95%]", "vs optimal")):
        t.add_column(col, justify="right", no_wrap=True, min_width=max((len(r[k]) for r in rows), default=0) or None)
    for row in rows:
        t.add_row(*row)
    return t


def cmd_curve(args: argparse.Namespace) -> int:
    run = Path(args.run)
    unit, points = learning_curve(
        run,
        args.split,
        games=args.games,
        seed=args.seed,
        workers=args.workers,
        log=lambda m: console.print(m, highlight=False, markup=False),
    )
    # regrets in percentage points, as the columns say; the win rate a probability
    rows = [f"{unit.split()[-1]},mean_regret_pp,ci_low_pp,ci_high_pp,win_rate_vs_optimal"]
    for turns, r in points:
        # no interval where a ruleset's games were too few for one: empty fields
        lo, hi = (f"{100 * x:.4f}" for x in r.mean_regret_ci) if r.mean_regret_ci else ("", "")
        rows.append(f"{turns},{100 * r.mean_regret:.4f},{lo},{hi},{0.5 - r.mean_regret:.6f}")
    console.print(curve_table(f"{run.name} on split {args.split!r}: mean regret against optimal play", unit, points))
    if any(r.mean_regret_ci is None for _, r in points):
        console.print("(no interval): too few games on a ruleset for one; give more --games", highlight=False)
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
    fig = regret_figure(
        [t for t, _ in points],
        [r.mean_regret for _, r in points],
        band,
        title=f"{name}: regret on the suite's {split} split",
        xlabel=unit,
        label=f"mean regret ({REGRET_UNIT})",
        band_label="95% interval (over these rulesets' games)",
    )
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("suite", help="the rule-variant benchmark: list its splits, solve them")
    ss = s.add_subparsers(dest="suite_command", required=True)
    for name, func, what in (
        ("list", cmd_list, "list a split's rulesets"),
        ("solve", cmd_solve, "solve and cache every ruleset of a split (resumable: the solved ones are cached)"),
        (
            "evaluate",
            cmd_evaluate,
            "an agent's win rate against optimal and its regret on every ruleset of a split, and the mean",
        ),
    ):
        p = ss.add_parser(name, help=what)
        if name == "evaluate":
            p.add_argument(
                "agent",
                help="the agent spec: a bot, onnx:FILE, cmd:COMMAND, or any agent that plays "
                "every ruleset of the split",
            )
        p.add_argument(
            "--split",
            choices=variants.SPLITS,
            default=None,
            help="test (default): the held-out rulesets; train: the training variants; presets: the "
            "named presets the solver covers; fresh: rulesets drawn now from --seed, in no other split",
        )
        p.add_argument(
            "--count",
            type=count_arg(1, MAX_TRAIN_COUNT, COUNT_WHY),
            metavar="N",
            help=f"train, fresh: how many, from 1 to {MAX_TRAIN_COUNT:,} (default 16)",
        )
        if name != "evaluate":
            p.add_argument(
                "--seed", type=seed_arg, default=0, help="fresh: the seed that draws the rulesets (default 0)"
            )
        if name == "list":
            p.add_argument("--write", metavar="DIR", help="also write each ruleset as a YAML file in DIR")
        if name == "evaluate":
            p.add_argument(
                "--games",
                type=count_arg(2, MAX_GAMES, GAMES_WHY),
                default=1000,
                metavar="N",
                help="analysed games per ruleset where the agent is measured by regret (default 1000; "
                "at most what the analysis' memory allows under each ruleset)",
            )
            p.add_argument(
                "--seed",
                type=seed_arg,
                default=0,
                help="seed of the analysed games (default 0), and with --fresh of the rulesets' draw",
            )
            p.add_argument(
                "--fresh",
                type=count_arg(1, MAX_TRAIN_COUNT, "fresh rulesets"),
                metavar="N",
                help="draw N new rulesets from the variant space now (seeded by --seed, in no other "
                "split) and evaluate there, so the agent meets rules published nowhere; each is solved first",
            )
            p.add_argument(
                "--regret",
                action="store_true",
                help="measure by regret over --games analysed games even where the exact evaluator "
                "follows the agent (a bot's exact evaluation takes minutes a ruleset at a 10,000 "
                "target, then is cached; the analysis, seconds)",
            )
            p.add_argument(
                "--workers",
                type=count_arg(1, MAX_WORKERS, WORKERS_WHY),
                default=2,
                metavar="N",
                help="worker processes (results do not depend on it)",
            )
            p.add_argument(
                "--out",
                default="runs/suite",
                help="folder of the result JSON (default runs/suite), named by the agent, split, space "
                "version and measurement: only a rerun of the same settings replaces a file",
            )
        p.set_defaults(func=func)
    lb = ss.add_parser("leaderboard", help="rank tenk suite evaluate's results by mean regret (markdown)")
    lb.add_argument("results", nargs="+", help="result JSON files (runs/suite/*.json), or their folder")
    lb.add_argument(
        "--split",
        choices=variants.SPLITS,
        help="rank only the results of this split (needed where the files hold several)",
    )
    lb.add_argument("--out", help="also write the markdown to this file")
    lb.add_argument(
        "--markdown",
        action="store_true",
        help="print the markdown on a terminal too (default there: a table that fits its width)",
    )
    lb.set_defaults(func=cmd_leaderboard)
    cv = ss.add_parser(
        "curve",
        help="a training run's learning curve on a split: every net it kept (an afterstate "
        "run's eval.keep nets, a PPO run's step checkpoints), measured by regret",
    )
    cv.add_argument(
        "run",
        help="the run directory of an agent that plays any ruleset: afterstate (trained with "
        "eval.keep: true) or PPO (its checkpoints/step_N.zip)",
    )
    cv.add_argument(
        "--split",
        choices=[s for s in variants.SPLITS if s != "fresh"],
        default="test",
        help="the split (default test)",
    )
    cv.add_argument(
        "--games",
        type=count_arg(2, MAX_GAMES, GAMES_WHY),
        default=200,
        metavar="N",
        help="analysed games per ruleset and net (default 200)",
    )
    cv.add_argument("--seed", type=seed_arg, default=0, help="seed of the analysed games")
    cv.add_argument(
        "--workers",
        type=count_arg(1, MAX_WORKERS, WORKERS_WHY),
        default=2,
        metavar="N",
        help="worker processes (results do not depend on it)",
    )
    cv.set_defaults(func=cmd_curve)
    # an interruption's line (tenk_env/cli/main.py) says what is kept
    s.set_defaults(resume_hint="rerun it: solved rulesets are cached")
