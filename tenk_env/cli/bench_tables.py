"""`tenk bench tables`: time to build the scoring tables of every preset."""

from __future__ import annotations

import argparse
import time

from rich.table import Table

from tenk_env.cli.common import console
from tenk_env.rules import PRESETS
from tenk_env.tables import Tables


def run(args: argparse.Namespace) -> None:
    t = Table(title="scoring tables: build time per ruleset (uncached)")
    t.add_column("preset")
    t.add_column("rolls", justify="right")
    t.add_column("keeps", justify="right")
    t.add_column("build ms", justify="right")
    for name, rules in PRESETS.items():
        t0 = time.perf_counter()
        tables = Tables(rules)
        ms = 1000 * (time.perf_counter() - t0)
        t.add_row(name, str(len(tables.rolls)), str(sum(len(i.keeps) for i in tables.rolls.values())), f"{ms:.0f}")
    console.print(t)
