"""`tenk bench [NAME ...]`: speed benchmarks that print figures.

Each benchmark lives in ``scripts/bench_NAME.py`` and defines ``run(args) -> None``
(printing its own table) and optionally ``add_arguments(parser)``. ``tenk bench`` alone
runs them all.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import scripts


def benches() -> dict[str, str]:
    return {m.name[len("bench_"):]: f"scripts.{m.name}"
            for m in sorted(pkgutil.iter_modules(scripts.__path__), key=lambda m: m.name)
            if m.name.startswith("bench_")}


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
