"""Cache keys whose code part follows the code a result runs (the import closure of the module
that computes it): an edit to any module the result runs re-computes it, an edit elsewhere
keeps it. Checked on the evaluation of a bot beside the 3-player equilibrium, whose key once
listed its own file and the 2-player evaluator by hand and so missed the N-player kernels and
the equilibrium's solver it runs."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tenk_env.rules import PRESETS
from tenk_env.solve.evaluate import THETA, code_closure

# the modules, not the functions of the same name that tenk_env.solve exports
evaluate = importlib.import_module("tenk_env.solve.evaluate")
eq_seat = importlib.import_module("tenk_env.solve.eq_seat")

PACKAGE = Path(evaluate.__file__).resolve().parent.parent


class Bot:
    """What the key reads of a policy: its own content key."""

    def cache_key(self) -> str:
        return "bot"


def _key() -> str:
    return eq_seat._key(PRESETS["classic"].replace(target=3000), 3, Bot(), THETA)


@pytest.fixture
def edited(monkeypatch):
    """edit(relative path): the file reads as if a function were added to it, from now on."""
    read = Path.read_text

    def edit(rel: str) -> None:
        target = (PACKAGE / rel).resolve()

        def read_text(self, *a, **kw):
            text = read(self, *a, **kw)
            return text + "\n\ndef _edited():\n    return 1\n" if self.resolve() == target else text

        monkeypatch.setattr(Path, "read_text", read_text)
        evaluate._HASHES.clear()
        evaluate._CLOSURES.clear()

    yield edit
    evaluate._HASHES.clear()
    evaluate._CLOSURES.clear()


@pytest.mark.parametrize(
    "rel",
    [
        "solve/multi_kernels.py",
        "solve/multi.py",
        "solve/equilibrium.py",
        "solve/kernels.py",
        "solve/eq_seat.py",
        "rules.py",
    ],
)
def test_an_edit_to_code_the_result_runs_changes_its_key(edited, rel):
    before = _key()
    edited(rel)
    assert _key() != before


@pytest.mark.parametrize(
    "rel", ["solve/best_response.py", "policies/heuristic.py", "web/games.py", "training/trainer.py"]
)
def test_an_edit_elsewhere_keeps_the_key(edited, rel):
    before = _key()
    edited(rel)
    assert _key() == before


def test_the_closure_holds_every_project_module_its_files_import():
    """Read with another parser (the import lines' text) than the closure's (syntax trees):
    every module an import line of a closure file names is in the closure."""
    files = set(code_closure("tenk_env.solve.eq_seat"))
    assert {
        PACKAGE / f"solve/{m}.py"
        for m in ("eq_seat", "equilibrium", "multi", "multi_kernels", "kernels", "evaluate", "game", "spec")
    } <= files
    for f in files:
        for name in re.findall(r"^(?:from|import) (tenk_env(?:\.\w+)+)", f.read_text(), re.M):
            module = PACKAGE / Path(*name.split(".")[1:]).with_suffix(".py")
            assert not module.is_file() or module in files, (f.name, name)
