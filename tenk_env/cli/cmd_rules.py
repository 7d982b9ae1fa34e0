"""`tenk rules` and `tenk odds`: a ruleset as a table, and the exact odds of one roll."""

from __future__ import annotations

import argparse

from rich.table import Table

from tenk_env.cli.args import check_output_dir
from tenk_env.cli.common import console
from tenk_env.rules import PRESETS, load_ruleset
from tenk_env.tables import get_tables


def cmd_rules(args: argparse.Namespace) -> int:
    if args.write_configs:
        out = check_output_dir(args.write_configs, "--write-configs")
        for name, r in PRESETS.items():
            r.save(out / f"{name}.yaml")
        console.print(f"wrote {len(PRESETS)} presets to {out}/")
        return 0
    if args.list:
        t = Table(title="ruleset presets")
        t.add_column("preset")
        t.add_column("hash")
        for name, r in PRESETS.items():
            t.add_row(name, r.hash)
        console.print(t)
        return 0
    r = load_ruleset(args.ruleset)
    t = Table(title=f"ruleset {r.name} (hash {r.hash})")
    t.add_column("field")
    t.add_column("value", justify="right")
    for k, v in r.describe():
        t.add_row(k, v)
    console.print(t)
    return 0


def cmd_odds(args: argparse.Namespace) -> int:
    r = load_ruleset(args.ruleset)
    t = Table(title=f"odds of one roll under {r.name}, exact enumeration")
    t.add_column("dice", justify="right")
    t.add_column("bust chance", justify="right")
    t.add_column("mean best points (busts 0)", justify="right")
    for n, bust, mean in get_tables(r).odds():
        t.add_row(str(n), _pct(bust), f"{mean:.0f}")
    console.print(t)
    return 0


def _pct(p: float) -> str:
    # RULES.md's rounding: one decimal, two below 5% where one would lose the figure.
    return f"{100 * p:.1f}%" if p >= 0.05 else f"{100 * p:.2f}%"


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("rules", help="print a ruleset as a table")
    s.add_argument("ruleset", nargs="?", default="classic", help="preset name or YAML file (default classic)")
    s.add_argument("--list", action="store_true", help="list the presets and their hashes")
    s.add_argument("--write-configs", metavar="DIR", help="write every preset as DIR/NAME.yaml")
    s.set_defaults(func=cmd_rules)

    s = sub.add_parser("odds", help="bust chance and mean best points of a roll of 1..6 dice")
    s.add_argument("ruleset", nargs="?", default="classic", help="preset name or YAML file (default classic)")
    s.set_defaults(func=cmd_odds)
