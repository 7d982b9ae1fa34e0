"""`tenk bench solve`: time and peak memory of the exact game solve.

Solves ``classic`` (``--quick``: classic with a 2,000 target) without the cache, in a
child process so that its peak resident memory is its own. Target: under 5 minutes and
4 GB on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time

from rich.table import Table

from tenk_env.cli.common import console
from tenk_env.rules import load_ruleset
from tenk_env.solve import solve_game, solve_turn


def _child(name: str, target: int | None, q) -> None:
    r = load_ruleset(name)
    if target:
        r = r.replace(target=target, name=f"{r.name}@{target}")
    solve_turn(r, cache=False)  # compiles the kernels (numba caches them on disk)
    t0 = time.perf_counter()
    turn = solve_turn(r, cache=False)
    t1 = time.perf_counter()
    sol = solve_game(r, cache=False, with_fair_komi=False)
    t2 = time.perf_counter()
    q.put({"ruleset": r.name, "turn_s": t1 - t0, "game_s": t2 - t1, "points_per_turn": turn.points_per_turn,
           "p_first": sol.p_first_win, "pairs": sol.stats["pairs"],
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


def run(args: argparse.Namespace) -> None:
    target = 2000 if args.quick else None
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=("classic", target, q))
    p.start()
    res = q.get()
    p.join()
    t = Table(title="exact solve (numba kernels, 1 process)")
    for col in ("ruleset", "turn solve s", "game solve s", "peak MB", "P(first wins)", "state pairs"):
        t.add_column(col, justify="right")
    t.add_row(res["ruleset"], f"{res['turn_s']:.2f}", f"{res['game_s']:.1f}", f"{res['peak_mb']:.0f}",
              f"{res['p_first']:.6f}", f"{res['pairs']:,}")
    console.print(t)
    ok = res["game_s"] < 300 and res["peak_mb"] < 4096
    console.print(("within" if ok else "[red]outside[/red]") + " the target of 5 minutes and 4 GB")
    if getattr(args, "json", None):
        print(json.dumps(res))
