"""The docs site builds without a warning, and the README and pages speak to users."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from support import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# planning vocabulary that means nothing to a reader of the docs
PLANNING = re.compile(r"\bissue\s*#?\d|\bsession\b|seeds/\d", re.IGNORECASE)


def test_mkdocs_builds_strict(tmp_path):
    env = {**os.environ, "TENK_CACHE": str(tmp_path / "cache"), "NO_MKDOCS_2_WARNING": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    cli = (tmp_path / "site" / "cli" / "index.html").read_text()
    assert "usage: tenk train" in cli and "usage: tenk solve eval" in cli
    config = (tmp_path / "site" / "config-reference" / "index.html").read_text()
    assert "total_steps" in config and "<!-- config-reference -->" not in config


def test_no_planning_vocabulary_in_readme_or_docs():
    hits = [
        f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
        for p in PAGES
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if PLANNING.search(line)
    ]
    assert not hits, "\n".join(hits)


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= 220, f"README.md has {n} lines; move reference text into docs/"
