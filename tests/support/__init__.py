"""Helpers shared by the tests, importable from every test folder (``pythonpath = ["tests"]``
in pyproject.toml): ``from support.processes import running``.

- :mod:`support.processes`: whether a process still runs;
- :mod:`support.records`: game records scored from the game solution's tables;
- :mod:`support.server`: the web app on a loopback port over real HTTP;
- :mod:`support.sessions`: forked ``tenk`` sessions for the fault-injection tests;
- :mod:`support.reference_multi`: the brute-force N-player reference for the exact solvers;
- :mod:`support.reference_turn`: the keep-by-keep turn induction the fast kernel is held to.

Paths the tests build: :data:`ROOT` (the repository), :data:`TESTS` (this suite's folder),
:data:`FIXTURES` (``tests/fixtures``), :data:`CONFIGS` (the shipped configs).
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
CONFIGS = ROOT / "configs"
