"""scripts/: thin launchers of `tenk` subcommands, runnable from a checkout."""

import re
import subprocess
import sys

from tenk_env.cli.main import build_parser

from support import ROOT

SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def test_every_launcher_names_a_subcommand_of_its_own_name():
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    assert len(SCRIPTS) >= 4
    for s in SCRIPTS:
        called = re.findall(r'main\(\["(\w+)"', s.read_text())
        assert called == [s.stem] and s.stem in commands, s


def test_a_launcher_runs():
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "train.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT / "tests",
    )
    assert r.returncode == 0 and r.stdout.startswith("usage: tenk train"), r.stderr
