"""The style and type gate stays what docs/design.md says it is: the modules that must be free of
type findings have none recorded in the baseline, and every place that names the gate's tools
names the same pinned versions."""

from __future__ import annotations

import re
import tomllib

from support import ROOT

#: free of mypy findings: no line of mypy-baseline.txt may name them
CLEAN = (
    "tenk_env/solve/",
    "tenk_env/rules.py",
    "tenk_env/tables.py",
    "tenk_env/game.py",
    "tenk_env/env.py",
    "tenk_env/aec.py",
    "tenk_env/obs.py",
    "tenk_env/rules_obs.py",
    "tenk_env/vector/",
)


def _pins() -> dict[str, str]:
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["dev"]
    return dict(re.fullmatch(r"([\w.-]+)==([\w.]+)", d).groups() for d in dev if "==" in d)


def test_clean_modules_have_no_recorded_finding():
    lines = [ln for ln in (ROOT / "mypy-baseline.txt").read_text().splitlines() if ln.strip()]
    assert lines, "mypy-baseline.txt is empty: delete it and the filter step only if mypy has no finding at all"
    bad = [ln for ln in lines if ln.startswith(CLEAN) and ": error:" in ln]  # notes are not findings
    assert not bad, "modules that must stay free of type findings are in the baseline:\n" + "\n".join(bad)


def test_gate_versions_are_pinned_once():
    pins = _pins()
    assert {"ruff", "mypy", "mypy-baseline"} <= set(pins), pins
    hook = (ROOT / ".pre-commit-config.yaml").read_text()
    assert re.search(r"ruff-pre-commit\n\s+rev: v" + re.escape(pins["ruff"]) + r"\b", hook), (
        f".pre-commit-config.yaml's ruff is not the pinned {pins['ruff']}"
    )


def test_ci_runs_the_gate_before_the_tests():
    ci = (ROOT / ".ci" / "run").read_text()
    gate = [ci.find("ruff check"), ci.find("ruff format --check"), ci.find("mypy-baseline filter")]
    assert min(gate) >= 0, "the gate is missing from .ci/run"
    assert max(gate) < ci.find("python -m pytest"), "the gate runs after the tests"


def test_blame_skips_the_formatting_commit():
    revs = [ln for ln in (ROOT / ".git-blame-ignore-revs").read_text().splitlines() if ln and not ln.startswith("#")]
    assert revs and all(re.fullmatch(r"[0-9a-f]{40}", r) for r in revs)
