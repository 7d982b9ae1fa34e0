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

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tenk_env.policies import zoo
from tenk_env.policies.onnx_export import export_actor
from tenk_env.policies.ppo import PPOAgent
from tenk_env.evaluation.benchmark import benchmark, markdown
from tenk_env.cli.args import check_output_file, seed_arg
from tenk_env.cli.common import console
from tenk_env.io import atomic_write_text


def _figure(strength: dict) -> str:
    parts = []
    for k, v in strength.get("exact_win_rates", {}).items():
        parts.append(f"vs {k} {v['value']:.2%} exact (first {v['first']:.2%}, second {v['second']:.2%})")
    r = strength.get("regret_vs_optimal")
    if r:
        lo, hi = r["ci95"]
        parts.append(f"regret vs optimal {r['per_game']:.4f}/game [{lo:.4f}, {hi:.4f}] ({r['games']:,} games)")
    w = strength.get("implied_win_rate_vs_optimal")
    if w:
        lo, hi = w["ci95"]
        parts.append(f"vs optimal {w['value']:.2%} [{lo:.2%}, {hi:.2%}]")
    for k, v in strength.get("win_rates", {}).items():
        lo, hi = v["ci95"]
        parts.append(f"vs {k} {v['value']:.2%} [{lo:.2%}, {hi:.2%}] ({v['games']:,} games)")
    f = strength.get("free_for_all")
    if f:
        lo, hi = f["win_share"]["ci95"]
        best = max(f["baselines_in_the_same_seat"].items(), key=lambda kv: kv[1]["value"], default=None)
        parts.append(f"{f['players']}-player win share {f['win_share']['value']:.2%} [{lo:.2%}, {hi:.2%}] against "
                     f"{', '.join(f['opponents'])} ({f['games']:,} games)"
                     + (f"; best bot in its seat {best[0]} {best[1]['value']:.2%} [{best[1]['ci95'][0]:.2%}, "
                        f"{best[1]['ci95'][1]:.2%}]" if best else ""))
        c = f.get("exact_ceiling")
        if c:
            v = f["win_share"]["value"]
            parts.append(f"the most any agent takes in that seat {c['value']:.2%} (exact, {c['agent']}): "
                         f"{100 * (c['value'] - v):.2f} [{100 * (c['value'] - hi):.2f}, {100 * (c['value'] - lo):.2f}] "
                         "points below it")
    return "; ".join(parts) or "(not measured)"


def _strength(e: zoo.ZooEntry) -> str:
    # strength is added to the card by hand after `tenk zoo add`: a slip there is named, not fatal
    try:
        return _figure(e.card.get("strength", {}))
    except (KeyError, TypeError, ValueError, IndexError) as err:
        return f"(strength unreadable in {e.path / 'agent.yaml'}: {type(err).__name__} {err})"


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
    groups = benchmark(games=args.games, seed=args.seed, workers=args.workers, regret_games=args.regret_games,
                       rules=args.rules, players=args.players, fresh=args.fresh, progress=console.is_terminal,
                       log=lambda m: console.print(m, highlight=False, markup=False, soft_wrap=True), on_chunk=on_chunk)
    args.done = None
    cmd = (f"tenk zoo table --games {args.games} --seed {args.seed} --regret-games {args.regret_games}"
           + (f" --rules {args.rules}" if args.rules else "") + (f" --players {args.players}" if args.players else ""))
    text = markdown(groups, cmd)
    atomic_write_text(out, text)
    print(text, end="")   # as written: a terminal-wide wrap would break the markdown's rows
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
        raise ValueError(f"zoo agent {name!r} is an afterstate agent: its moves come from a search over the turn "
                         "with a learned value, not from one forward pass, so it has no ONNX form; the PPO entries "
                         f"export: {', '.join(e.name for e in zoo.entries() if not e.afterstate)}")
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
        out = zoo.export(args.checkpoint, args.name, command=args.command or "", notes=args.notes or "",
                         force=args.force)
        console.print(f"zoo entry {args.name!r} written to {out} (add its measured strength to agent.yaml)")
        return 0
    out = Console(width=max(console.width, 140))  # logs and pipes: one row per line where it fits
    t = Table(title="the zoo: agent spec zoo:NAME")
    for col in ("name", "plays", "trained by", "strength"):
        t.add_column(col, overflow="fold")
    good, bad = zoo.scan()
    for e in good:
        t.add_row(e.name, e.summary(), e.card.get("command", ""), _strength(e))
    out.print(t)
    for e in good:
        if e.card.get("notes"):
            out.print(f"[bold]{escape(e.name)}[/bold]: {escape(e.card['notes'])}")
    for err in bad:  # named, and the healthy entries above still listed and playable
        out.print(f"[red]broken:[/red] {escape(str(err))}", highlight=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("zoo", help="list the trained agents shipped with tenk (agent spec zoo:NAME), or add one")
    s.add_argument("action", nargs="?", choices=("list", "add", "table", "export"), default="list",
                   help="list (default), add CHECKPOINT NAME, table: every zoo agent and the bots rated together "
                        "by game (tournament ratings), with each one's win rate against optimal where the game is "
                        "solved (exact where the exact evaluator follows the agent, else by regret), or export NAME "
                        "--onnx: a PPO entry as an ONNX model (agent spec onnx:FILE)")
    s.add_argument("checkpoint", nargs="?", help="add: a checkpoint written by tenk train (runs/NAME/best.zip, or best.npz "
                                                      "of an afterstate run); export: the zoo name")
    s.add_argument("name", nargs="?", help="add: the zoo name (letters, digits, '-', '_')")
    s.add_argument("--command", help="add: the command that trained it (recorded with the agent)")
    s.add_argument("--notes", help="add: a line on how it was trained")
    s.add_argument("--force", action="store_true", help="add: replace an entry of that name")
    s.add_argument("--games", type=int, default=1000, help="table: games per pairing or table (default 1000)")
    s.add_argument("--seed", type=seed_arg, default=0, help="table: seed of the deals and the analysed games")
    s.add_argument("--workers", type=int, default=2, help="table: worker processes (results do not depend on it)")
    s.add_argument("--regret-games", type=int, default=1000,
                   help="table: games analysed for an agent the exact evaluator cannot follow (0: no column)")
    s.add_argument("--rules", help="table: only the game of this ruleset (preset or YAML)")
    s.add_argument("--players", type=int, help="table: only games of this many players")
    s.add_argument("--out", help="table: the markdown file to write (default runs/zoo_table.md); export: the model "
                                 "file (default NAME.onnx)")
    s.add_argument("--onnx", action="store_true", help="export: write the ONNX model (logits from the observation)")
    s.add_argument("--fresh", action="store_true",
                   help="table: replay every tournament game of these arguments instead of resuming from the saved "
                        "ones (each set of arguments has its own folder under runs/tournaments/, so another "
                        "--games or --seed never needs it)")
    s.set_defaults(func=cmd_zoo)
