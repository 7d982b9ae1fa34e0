"""`tenk zoo`: the trained agents shipped with the package (agent spec ``zoo:NAME``)."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from agents import zoo
from scripts.cli import console


def _figure(strength: dict) -> str:
    parts = []
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
    return "; ".join(parts) or "(not measured)"


def cmd_zoo(args: argparse.Namespace) -> int:
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
    for e in zoo.entries():
        t.add_row(e.name, e.summary(), e.card.get("command", ""), _figure(e.card.get("strength", {})))
    out.print(t)
    for e in zoo.entries():
        if e.card.get("notes"):
            out.print(f"[bold]{e.name}[/bold]: {e.card['notes']}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("zoo", help="list the trained agents shipped with tenk (agent spec zoo:NAME), or add one")
    s.add_argument("action", nargs="?", choices=("list", "add"), default="list",
                   help="list (default) or add CHECKPOINT NAME")
    s.add_argument("checkpoint", nargs="?", help="add: a checkpoint written by tenk train (runs/NAME/best.zip, or best.npz "
                                                      "of an afterstate run)")
    s.add_argument("name", nargs="?", help="add: the zoo name (letters, digits, '-', '_')")
    s.add_argument("--command", help="add: the command that trained it (recorded with the agent)")
    s.add_argument("--notes", help="add: a line on how it was trained")
    s.add_argument("--force", action="store_true", help="add: replace an entry of that name")
    s.set_defaults(func=cmd_zoo)
