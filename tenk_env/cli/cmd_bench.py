"""`tenk bench [NAME ...]`: speed benchmarks that print figures.

Each benchmark lives in ``tenk_env/cli/bench_NAME.py`` (listed in :data:`BENCHES`) and
defines ``run(args) -> None`` (printing its own table) and optionally
``add_arguments(parser)``. ``tenk bench`` alone
runs them all.
"""

from __future__ import annotations

import argparse
import importlib

#: each benchmark's module, imported when it runs (some load torch)
BENCHES = {
    "analyze": "tenk_env.cli.bench_analyze",
    "engine": "tenk_env.cli.bench_engine",
    "env": "tenk_env.cli.bench_env",
    "solve": "tenk_env.cli.bench_solve",
    "tables": "tenk_env.cli.bench_tables",
    "tournament": "tenk_env.cli.bench_tournament",
    "train": "tenk_env.cli.bench_train",
}


def benches() -> dict[str, str]:
    return dict(BENCHES)


def cmd_bench(args: argparse.Namespace) -> int:
    available = benches()
    names = args.names or list(available)
    for n in names:
        if n not in available:
            raise ValueError(f"unknown benchmark {n!r}; benchmarks: {', '.join(available)}")
    for n in names:
        importlib.import_module(available[n]).run(args)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("bench", help="speed benchmarks: " + ", ".join(benches()))
    s.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    s.add_argument("--quick", action="store_true", help="shorter runs, for a smoke check")
    for mod in benches().values():
        m = importlib.import_module(mod)
        if hasattr(m, "add_arguments"):
            m.add_arguments(s)
    s.set_defaults(func=cmd_bench)
