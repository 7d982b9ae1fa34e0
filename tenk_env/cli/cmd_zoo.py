"""`tenk zoo`: the trained agents shipped with the package (agent spec ``zoo:NAME``).

    tenk zoo                      # list them, with how each was trained and its strength
    tenk zoo add CHECKPOINT NAME  # export a checkpoint as an entry
    tenk zoo table                # the benchmark table: zoo and bots rated together (tenk_env/evaluation/benchmark.py)
    tenk zoo export NAME --onnx   # a PPO entry as an ONNX model (agent spec onnx:PATH)

A broken entry (a damaged card, weights that do not match it) is listed as broken; the
others still list and play. ``tenk zoo table`` resumes its tournaments when rerun with the
same arguments (each set of arguments has its own folder); ``--fresh`` replays them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tenk_env.cli.args import check_output_file, seed_arg
from tenk_env.cli.common import console
from tenk_env.evaluation.benchmark import benchmark, markdown
from tenk_env.io import atomic_write_text
from tenk_env.policies import zoo
from tenk_env.policies.onnx_export import export_actor
from tenk_env.policies.ppo import PPOAgent
from tenk_env.units import REGRET_UNIT, regret_text


class _Missing(Exception):
    """A key a strength figure needs that the card lacks: its dotted path in the card."""


class _Node(dict):
    """A card mapping whose missing key is named by its dotted path (strength.win_rates.dicenow.ci95),
    not by a bare KeyError."""

    def __init__(self, d: dict, where: str):
        super().__init__(d)
        self.where = where

    def __getitem__(self, k):
        if k not in self:
            raise _Missing(f"{self.where}.{k}")
        v = super().__getitem__(k)
        return _Node(v, f"{self.where}.{k}") if isinstance(v, dict) else v

    def get(self, k, default=None):
        return self[k] if k in self else default

    def items(self):
        return [(k, self[k]) for k in self]


def _pct_ci(v) -> str:
    lo, hi = v["ci95"]
    return f"{v['value']:.2%} [{lo:.2%}, {hi:.2%}]"


def _figures(strength: dict) -> list[str]:
    """The card's measured strength, one figure a line (each short enough for an 80-column
    terminal): win rates in %, regrets in pp/game, 95% intervals."""
    s = _Node(strength, "strength")
    lines = []
    for k, v in s.get("exact_win_rates", {}).items():
        lines.append(f"vs {k} {v['value']:.2%} exact (first {v['first']:.2%}, second {v['second']:.2%})")
    r = s.get("regret_vs_optimal")
    if r:
        lines.append(f"regret vs optimal {regret_text(r['per_game'], r['ci95'])} ({r['games']:,} games)")
    w = s.get("implied_win_rate_vs_optimal")
    if w:
        lines.append(f"vs optimal {_pct_ci(w)}")
    for split, v in s.get("suite_mean_regret_vs_optimal", {}).items():
        lines.append(f"regret on suite {split} {regret_text(v['per_game'], v['ci95'])} ({v['rulesets']} rulesets)")
    for k, v in s.get("win_rates", {}).items():
        lines.append(f"vs {k} {_pct_ci(v)} ({v['games']:,} games)")
    f = s.get("free_for_all")
    if f:
        share = f["win_share"]
        lines.append(f"{f['players']}-player win share {_pct_ci(share)} ({f['games']:,} games)")
        lines.append(f"  against {', '.join(f['opponents'])}")
        best = max(f.get("baselines_in_the_same_seat", {}).items(), key=lambda kv: kv[1]["value"], default=None)
        if best:
            lines.append(f"best baseline in its seat: {best[0]} {_pct_ci(best[1])}")
        q = f.get("equilibrium_share")
        if q:
            lo, hi = q["ci95_points"]
            lines.append(
                f"{q['below_points']:.2f} [{lo:.2f}, {hi:.2f}] points below an equilibrium player's {q['value']:.2%}"
            )
        c = f.get("exact_ceiling")
        if c:
            gap = [100 * (c["value"] - x) for x in (share["value"], *reversed(share["ci95"]))]
            lines.append(f"{gap[0]:.2f} [{gap[1]:.2f}, {gap[2]:.2f}] points below the exact ceiling {c['value']:.2%}")
            if c.get("agent"):
                lines.append(f"  (the best response in that seat, {c['agent']})")
    return lines


def _card_path(e: zoo.ZooEntry) -> str:
    """The card's path from the folder holding the zoo (agents/NAME/agent.yaml), not the machine's."""
    return (Path(e.path.parent.name) / e.name / "agent.yaml").as_posix()


def _strength(e: zoo.ZooEntry) -> tuple[list[str], str | None]:
    """(the strength lines, None), or ([], the one line saying what in the card cannot be read)."""
    # strength is added to the card by hand after `tenk zoo add`: a slip there is named, not fatal
    try:
        return _figures(e.card.get("strength", {})), None
    except _Missing as err:
        return [], (
            f"{e.name}: strength unreadable: {_card_path(e)} has no {err}; add it, or remove that figure from the card"
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        return [], (
            f"{e.name}: strength unreadable: {_card_path(e)} holds a figure of the wrong shape "
            f"({type(err).__name__}: {err}); each figure is value, ci95 [low, high] and its games"
        )


def list_zoo(out: Console) -> None:
    """The zoo's entries, each a block of lines (what it plays, how it was trained, its strength
    one figure a line, its notes), fitting ``out``'s width from 80 columns up; then the broken ones."""
    good, bad = zoo.scan()
    out.print(
        f"[bold]the zoo[/bold]: agent spec zoo:NAME; strength: win rates in %, regrets in {REGRET_UNIT}, 95% intervals",
        highlight=False,
    )
    for e in good:
        lines, problem = _strength(e)
        g = Table.grid(padding=(0, 2))
        g.add_column(no_wrap=True)
        g.add_column(overflow="fold")
        g.add_row("plays", escape(e.summary()))
        if e.card.get("command"):
            g.add_row("trained by", escape(e.card["command"]))
        # one figure a line, never wrapped inside an interval (folded only below 80 columns)
        g.add_row(
            "strength",
            Text(
                "\n".join(lines) if lines else "(unreadable: see below)" if problem else "(not measured)",
                no_wrap=True,
                overflow="fold",
            ),
        )
        if e.card.get("notes"):
            g.add_row("notes", escape(e.card["notes"]))
        out.print()
        out.print(f"[bold]{escape(e.name)}[/bold]")
        out.print(Padding(g, (0, 0, 0, 2)))
        if problem:
            out.print(problem, highlight=False, markup=False, soft_wrap=True)
    for err in bad:  # named, and the healthy entries above still listed and playable
        out.print(f"[red]broken:[/red] {escape(str(err))}", highlight=False)


def cmd_table(args: argparse.Namespace) -> int:
    for k, least in (("games", 1), ("workers", 1), ("regret_games", 0)):
        if getattr(args, k) < least:
            raise ValueError(f"--{k.replace('_', '-')} {getattr(args, k)}: give a whole number of at least {least}")
    out = args.out or "runs/zoo_table.md"
    check_output_file(out, "--out", "zoo_table.md")  # before the tournaments, which take minutes
    # what an interruption's line says (tenk_env/cli/main.py): the saved chunks are kept and resumed
    args.resume_hint = "rerun it without --fresh to resume" if args.fresh else "rerun the same command to resume"

    def on_chunk(k: int, total: int) -> None:
        args.done = f"{k} of {total} chunks of this tournament's games saved"

    # A terminal gets progress bars; logs and pipes, where a bar shows only at its end, a line per tenth.
    groups = benchmark(
        games=args.games,
        seed=args.seed,
        workers=args.workers,
        regret_games=args.regret_games,
        rules=args.rules,
        players=args.players,
        fresh=args.fresh,
        progress=console.is_terminal,
        log=lambda m: console.print(m, highlight=False, markup=False, soft_wrap=True),
        on_chunk=on_chunk,
    )
    args.done = None
    cmd = (
        f"tenk zoo table --games {args.games} --seed {args.seed} --regret-games {args.regret_games}"
        + (f" --rules {args.rules}" if args.rules else "")
        + (f" --players {args.players}" if args.players else "")
    )
    text = markdown(groups, cmd)
    atomic_write_text(out, text)
    print(text, end="")  # as written: a terminal-wide wrap would break the markdown's rows
    console.print(f"written to {out}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    name = args.checkpoint
    if not name or args.name:
        raise ValueError("tenk zoo export NAME --onnx [--out FILE]: give one zoo name (tenk zoo lists them)")
    if not args.onnx:
        raise ValueError("tenk zoo export NAME --onnx: ONNX is the one export format; add --onnx")
    agent = zoo.load(name)
    if not isinstance(agent, PPOAgent):
        raise ValueError(
            f"zoo agent {name!r} is an afterstate agent: its moves come from a search over the turn "
            "with a learned value, not from one forward pass, so it has no ONNX form; the PPO entries "
            f"export: {', '.join(e.name for e in zoo.entries() if not e.afterstate)}"
        )
    out = args.out or f"{name}.onnx"
    check_output_file(out, "--out", f"{name}.onnx")
    path = export_actor(agent._actor, agent.meta, out)
    console.print(f"zoo agent {name!r} written to {path}: play it as onnx:{path}", highlight=False)
    return 0


def cmd_zoo(args: argparse.Namespace) -> int:
    if args.action == "table":
        return cmd_table(args)
    if args.action == "export":
        return cmd_export(args)
    if args.action == "add":
        if not args.checkpoint or not args.name:
            raise ValueError("tenk zoo add CHECKPOINT NAME --command '...': give the checkpoint and a name")
        out = zoo.export(
            args.checkpoint, args.name, command=args.command or "", notes=args.notes or "", force=args.force
        )
        console.print(f"zoo entry {args.name!r} written to {out} (add its measured strength to agent.yaml)")
        return 0
    # a terminal's width (or COLUMNS); logs and pipes get 120 columns, no narrower
    list_zoo(console if console.is_terminal or os.environ.get("COLUMNS") else Console(width=max(console.width, 120)))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("zoo", help="list the trained agents shipped with tenk (agent spec zoo:NAME), or add one")
    s.add_argument(
        "action",
        nargs="?",
        choices=("list", "add", "table", "export"),
        default="list",
        help="list (default), add CHECKPOINT NAME, table: every zoo agent and the bots rated together "
        "by game (tournament ratings), with each one's win rate against optimal where the game is "
        "solved (exact where the exact evaluator follows the agent, else by regret), or export NAME "
        "--onnx: a PPO entry as an ONNX model (agent spec onnx:FILE)",
    )
    s.add_argument(
        "checkpoint",
        nargs="?",
        help="add: a checkpoint written by tenk train (runs/NAME/best.zip, or best.npz "
        "of an afterstate run); export: the zoo name",
    )
    s.add_argument("name", nargs="?", help="add: the zoo name (letters, digits, '-', '_')")
    s.add_argument("--command", help="add: the command that trained it (recorded with the agent)")
    s.add_argument("--notes", help="add: a line on how it was trained")
    s.add_argument("--force", action="store_true", help="add: replace an entry of that name")
    s.add_argument("--games", type=int, default=1000, help="table: games per pairing or table (default 1000)")
    s.add_argument("--seed", type=seed_arg, default=0, help="table: seed of the deals and the analysed games")
    s.add_argument("--workers", type=int, default=2, help="table: worker processes (results do not depend on it)")
    s.add_argument(
        "--regret-games",
        type=int,
        default=1000,
        help="table: games analysed for an agent the exact evaluator cannot follow (0: no column)",
    )
    s.add_argument("--rules", help="table: only the game of this ruleset (preset or YAML)")
    s.add_argument("--players", type=int, help="table: only games of this many players")
    s.add_argument(
        "--out",
        help="table: the markdown file to write (default runs/zoo_table.md); export: the model "
        "file (default NAME.onnx)",
    )
    s.add_argument("--onnx", action="store_true", help="export: write the ONNX model (logits from the observation)")
    s.add_argument(
        "--fresh",
        action="store_true",
        help="table: replay every tournament game of these arguments instead of resuming from the saved "
        "ones (each set of arguments has its own folder under runs/tournaments/, so another "
        "--games or --seed never needs it)",
    )
    s.set_defaults(func=cmd_zoo)
