"""Cache keys whose code part follows the code a result runs.

Every cached solver result is keyed by :func:`tenk_env.solve.cache.result_key`: its kind,
version, ruleset hash and settings, then the hash of the import closure of the module that
computes it. So an edit to any module the result runs re-computes it and an edit elsewhere keeps
it. A policy's content key carries the code that decides its moves the same way.

Edits are simulated (:mod:`support.edits`): nothing in the working tree is written. Solver modules
are found from the package itself (every module that reads or writes the disk cache) and
kernel modules from the real closures, so the tests follow files that move.
"""

from __future__ import annotations

import importlib
import json
import re

import numpy as np
import pytest

from tenk_env import closure
from tenk_env.closure import closure_hash, code_closure, module_file
from tenk_env.rules import PRESETS

from support.edits import PACKAGE, edited, rel

# the modules, not the functions of the same name that tenk_env.solve exports
game = importlib.import_module("tenk_env.solve.game")
turn = importlib.import_module("tenk_env.solve.turn")
evaluate = importlib.import_module("tenk_env.solve.evaluate")
best_response = importlib.import_module("tenk_env.solve.best_response")
multi = importlib.import_module("tenk_env.solve.multi")
equilibrium = importlib.import_module("tenk_env.solve.equilibrium")
eq_seat = importlib.import_module("tenk_env.solve.eq_seat")
exact = importlib.import_module("tenk_env.policies.exact")

RULES = PRESETS["classic"].replace(target=3000)


class Bot(evaluate.Tabulated):
    """What the keys read of a policy: its name and content key."""

    name = "bot"

    def cache_key(self) -> str:
        return "bot"


#: every module that caches a result, with the calls that ask the cache for it
RESULTS = {
    "tenk_env.solve.game": [lambda: game.solve_game(RULES)],
    "tenk_env.solve.turn": [lambda: turn.solve_turn(RULES)],
    "tenk_env.solve.evaluate": [lambda: evaluate.evaluate_policies(RULES, Bot(), Bot())],
    "tenk_env.solve.best_response": [lambda: best_response.solve_best_response(RULES, Bot())],
    "tenk_env.solve.multi": [
        lambda: multi.evaluate_multi(RULES, [Bot()] * 3),
        lambda: multi.best_response_multi(RULES, [Bot()] * 2),
    ],
    "tenk_env.solve.equilibrium": [lambda: equilibrium.solve_equilibrium(RULES, 3)],
    "tenk_env.solve.eq_seat": [lambda: eq_seat.evaluate_beside_equilibrium(RULES, Bot(), 3)],
}


class _Asked(Exception):
    pass


def asked_keys(monkeypatch, module: str) -> list[str]:
    """The keys that ``module``'s results are looked up under, read at the cache: the lookup
    raises, so nothing is solved."""

    def load_arrays(key):
        raise _Asked(key)

    mod = importlib.import_module(module)
    keys = []
    with monkeypatch.context() as mp:
        mp.setattr(mod, "load_arrays", load_arrays)
        for call in RESULTS[module]:
            with pytest.raises(_Asked) as got:
                call()
            keys.append(got.value.args[0])
    return keys


def files(*roots: str) -> set[str]:
    return {rel(f) for f in code_closure(*roots)}


def solver_files() -> list[str]:
    """Every module under tenk_env/solve/ (a kernel package's modules included) and the core
    modules the solvers read."""
    return sorted(
        {rel(f) for f in (PACKAGE / "solve").rglob("*.py")} | {"rules.py", "tables.py", "io.py", "jit.py", "closure.py"}
    )


# ------------------------------------------------------------------ every result, derived key
def test_every_module_that_caches_a_result_is_listed():
    """A new solver that reads or writes the disk cache fails here until it is listed above
    (and so checked below)."""
    calls = re.compile(r"\b(load_arrays|save_arrays|cache_path)\(")
    found = set()
    for f in PACKAGE.rglob("*.py"):
        if f.name != "cache.py" and calls.search(f.read_text()):
            found.add("tenk_env." + ".".join(f.relative_to(PACKAGE).with_suffix("").parts))
    assert found == set(RESULTS)


def test_no_hand_listed_code_hashes_are_left():
    for f in PACKAGE.rglob("*.py"):
        assert not re.search(r"\b(code_hash|evaluator_hash)\b", f.read_text()), rel(f)


@pytest.mark.parametrize("module", sorted(RESULTS))
def test_every_result_key_ends_with_its_modules_closure_hash(monkeypatch, module):
    keys = asked_keys(monkeypatch, module)
    assert keys
    for key in keys:
        assert RULES.hash in key
        assert key.endswith("-" + closure_hash(module)), key
    assert rel(module_file(module)) in files(module)


# ------------------------------------------------------------------ which edits re-key what
def test_an_edit_rekeys_exactly_the_results_that_run_the_file(monkeypatch):
    closures = {m: files(m) for m in RESULTS}
    before = {m: closure_hash(m) for m in RESULTS}
    for path in solver_files():
        with edited(monkeypatch, path):
            for m in RESULTS:
                assert (closure_hash(m) != before[m]) == (path in closures[m]), (path, m)
    assert {m: closure_hash(m) for m in RESULTS} == before


def test_true_independences():
    """Pairs that hold by design, with the modules picked from the real closures: the 2-player
    game does not run the N-player kernels, the equilibrium or the evaluators; the evaluator of
    two fixed policies runs no N-player code; the N-player solver does not run the equilibrium."""
    nplayer = files("tenk_env.solve.multi") - files("tenk_env.solve.evaluate")
    eq_only = files("tenk_env.solve.equilibrium") - files("tenk_env.solve.multi")
    kernels = {f for f in nplayer if "kernel" in f}
    assert kernels, nplayer  # the N-player kernels, wherever they live
    assert "solve/equilibrium.py" in eq_only
    game_files = files("tenk_env.solve.game")
    assert not game_files & (nplayer | eq_only)
    assert not game_files & {"solve/evaluate.py", "solve/best_response.py", "solve/eq_seat.py"}
    assert not files("tenk_env.solve.evaluate") & (nplayer | eq_only | {"solve/best_response.py"})
    assert not files("tenk_env.solve.multi") & (eq_only | {"solve/eq_seat.py"})
    assert not files("tenk_env.solve.equilibrium") & {"solve/eq_seat.py", "solve/best_response.py"}
    for m in RESULTS:
        assert not {f for f in files(m) if not f.startswith("solve/")} - {
            "rules.py",
            "tables.py",
            "io.py",
            "jit.py",
            "closure.py",
        }, m  # no solver result runs policies, the engine, training or the web


@pytest.mark.parametrize("path", ["solve/equilibrium.py", "solve/eq_seat.py", "policies/heuristic.py"])
def test_the_game_solution_keeps_its_key_under_edits_it_does_not_run(monkeypatch, path):
    (before,) = asked_keys(monkeypatch, "tenk_env.solve.game")
    with edited(monkeypatch, path):
        assert asked_keys(monkeypatch, "tenk_env.solve.game") == [before]


def test_the_game_solution_is_rekeyed_by_an_edit_to_its_kernels(monkeypatch):
    kernels = sorted(f for f in files("tenk_env.solve.game") if "kernel" in f)
    assert kernels
    (before,) = asked_keys(monkeypatch, "tenk_env.solve.game")
    for path in kernels + ["solve/game.py"]:
        with edited(monkeypatch, path):
            assert asked_keys(monkeypatch, "tenk_env.solve.game") != [before], path


def test_the_seat_beside_the_equilibrium_follows_the_n_player_kernels(monkeypatch):
    """The key of a bot's evaluation beside the equilibrium once listed its own file and the
    2-player evaluator by hand, and so kept its results across edits to the N-player kernels
    and the equilibrium's solver that it runs."""
    runs = files("tenk_env.solve.multi") - files("tenk_env.solve.evaluate")
    runs |= files("tenk_env.solve.equilibrium") - files("tenk_env.solve.multi")
    assert any("kernel" in f for f in runs)
    (before,) = asked_keys(monkeypatch, "tenk_env.solve.eq_seat")
    for path in sorted(runs) + ["rules.py"]:
        with edited(monkeypatch, path):
            assert asked_keys(monkeypatch, "tenk_env.solve.eq_seat") != [before], path
    for path in ["solve/best_response.py", "policies/heuristic.py", "web/games.py", "training/trainer.py"]:
        with edited(monkeypatch, path):
            assert asked_keys(monkeypatch, "tenk_env.solve.eq_seat") == [before], path


def test_a_reworded_docstring_or_comment_keeps_every_key(monkeypatch):
    before = {m: closure_hash(m) for m in RESULTS}
    with edited(monkeypatch, "solve/game.py", '\n\n"""a string statement"""\n# a comment\n'):
        assert {m: closure_hash(m) for m in RESULTS} == before


# ------------------------------------------------------------------ policies' keys
BOT_CODE = "tenk_env.policies.exact:BotPolicy"


def test_policy_keys_carry_the_code_that_decides_their_moves():
    # the bots: BotPolicy, the batched forms it asks, the bots' classes, the engine it poses in
    assert exact.policy_key("greedy:300") == "greedy_300-" + closure_hash(BOT_CODE)
    assert {"policies/batched.py", "policies/heuristic.py", "policies/optimal.py", "vector/engine.py"} <= files(
        BOT_CODE
    )
    # one code part for every bot (see _bot_code); their settings tell them apart
    assert exact.policy_key("dicenow").rsplit("-", 1)[1] == exact.policy_key("greedy").rsplit("-", 1)[1]
    assert evaluate.optimal_key().endswith("-" + closure_hash(game.__name__))
    assert best_response.br_cache_key("bot").endswith("-" + closure_hash(best_response.__name__))
    assert exact.policy_key("br:greedy") == best_response.br_cache_key(exact.policy_key("greedy"))
    pol = evaluate.TablePolicy("t", 50, np.zeros((2, 1, 1, 1)), np.zeros(1))
    assert (
        evaluate.TableTabulated(pol).cache_key().endswith("-" + closure_hash("tenk_env.solve.evaluate:TableTabulated"))
    )


@pytest.mark.parametrize(
    "path, rekeys",
    [
        ("policies/batched.py", True),
        ("policies/heuristic.py", True),
        ("policies/optimal.py", True),
        ("vector/engine.py", True),
        ("solve/evaluate.py", True),
        # modules exact.py imports for other policies and results, not for the bots' moves
        ("policies/exact.py", False),
        ("solve/equilibrium.py", False),
        ("solve/eq_seat.py", False),
        ("solve/multi.py", False),
        ("solve/best_response.py", False),
        ("policies/afterstate.py", False),
    ],
)
def test_a_bots_key_follows_the_code_of_its_moves(monkeypatch, path, rekeys):
    before = exact.policy_key("greedy")
    with edited(monkeypatch, path):
        assert (exact.policy_key("greedy") != before) == rekeys


def test_an_edit_to_bot_policy_itself_rekeys_the_bots(monkeypatch):
    before = exact.policy_key("greedy")
    with edited(monkeypatch, "policies/exact.py", "\n\nBotPolicy.KINDS = BotPolicy.KINDS[:-1]\n"):
        assert exact.policy_key("greedy") != before
    with edited(monkeypatch, "policies/exact.py", "\n\ndef _pose():\n    return 1\n"):
        assert exact.policy_key("greedy") != before


@pytest.mark.parametrize("path, rekeys", [("policies/afterstate.py", True), ("policies/heuristic.py", False)])
def test_an_afterstate_agents_code_part(monkeypatch, path, rekeys):
    before = exact._afterstate_code()
    with edited(monkeypatch, path):
        assert (exact._afterstate_code() != before) == rekeys


# ------------------------------------------------------------------ how the closure reads imports
@pytest.mark.parametrize(
    "text, module, followed",
    [
        ("\n\ndef _f():\n    from tenk_env.solve import eq_seat\n", "solve/eq_seat.py", True),
        ("\n\ndef _f():\n    import tenk_env.web.games\n", "web/games.py", True),
        ("\nfrom . import eq_seat\n", "solve/eq_seat.py", True),
        ("\nfrom ..policies import heuristic\n", "policies/heuristic.py", True),
        ("\nfrom .. import records\n", "records.py", True),
        ("\nimportlib.import_module('tenk_env.records')\n", "records.py", True),
        (
            "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tenk_env.solve import eq_seat\n",
            "solve/eq_seat.py",
            False,
        ),
        ("\n_NAME = 'tenk_env.records'\n", "records.py", False),  # a string, and no loader
    ],
)
def test_the_closure_follows_every_import_that_runs(monkeypatch, text, module, followed):
    assert module not in files("tenk_env.solve.turn")
    with edited(monkeypatch, "solve/turn.py", text):
        assert (module in files("tenk_env.solve.turn")) == followed


def test_the_closure_holds_every_project_module_its_files_import():
    """Read with another parser (the import lines' text) than the closure's (syntax trees):
    every module an import line of a closure file names is in the closure."""
    for root in RESULTS:
        got = code_closure(root)
        for f in got:
            for base, names in re.findall(r"^\s*from (tenk_env(?:\.\w+)*) import ([\w, ]+)$", f.read_text(), re.M):
                subs = [module_file(f"{base}.{n.split(' as ')[0].strip()}") for n in names.split(",")]
                expected = [s for s in subs if s] or [module_file(base)]
                assert all(e in got for e in expected), (root, rel(f), base)
            for name in re.findall(r"^\s*import (tenk_env(?:\.\w+)+)", f.read_text(), re.M):
                assert module_file(name) in got, (root, rel(f), name)


def test_a_key_is_computed_once_per_process():
    closure_hash("tenk_env.solve.eq_seat")
    n = len(closure._MODULES)
    closure_hash("tenk_env.solve.eq_seat")
    assert len(closure._MODULES) == n
    roots = ("tenk_env.solve.eq_seat",)
    assert roots in closure._CLOSURES or roots in closure._HASHES


@pytest.fixture
def memo(monkeypatch, tmp_path):
    """A memo file of its own, and nothing this process worked out before."""
    monkeypatch.setattr(closure, "MEMO_FILE", tmp_path / "closures.json")
    monkeypatch.setattr(closure, "_CLOSURES", {})
    monkeypatch.setattr(closure, "_HASHES", {})
    monkeypatch.setattr(closure, "_MODULES", {})
    return closure.MEMO_FILE


def test_a_key_is_remembered_across_processes_and_forgotten_when_its_code_changes(monkeypatch, memo):
    root = "tenk_env.solve.game"
    worked_out = closure_hash(root)
    assert set(json.loads(memo.read_text())) == {root}
    # a new process: the memo answers without parsing a module
    monkeypatch.setattr(closure, "_CLOSURES", {})
    monkeypatch.setattr(closure, "_HASHES", {})
    monkeypatch.setattr(closure, "_MODULES", {})
    assert closure_hash(root) == worked_out
    assert closure._MODULES == {}
    # an edit to a file of the closure: the memo's entry no longer holds
    with edited(monkeypatch, "solve/kernels/rules.py"):
        assert closure_hash(root) != worked_out
    assert closure_hash(root) == worked_out


@pytest.mark.parametrize("text", ["", "{not json", "[]", '{"tenk_env.solve.game": {"hash": "x"}}'])
def test_a_damaged_memo_is_ignored_and_rewritten(monkeypatch, memo, text):
    worked_out = closure_hash("tenk_env.solve.turn")
    monkeypatch.setattr(closure, "_HASHES", {})
    monkeypatch.setattr(closure, "_CLOSURES", {})
    memo.write_text(text)
    assert closure_hash("tenk_env.solve.game") == closure._closure(("tenk_env.solve.game",))[1]
    assert closure_hash("tenk_env.solve.turn") == worked_out
    assert "tenk_env.solve.game" in json.loads(memo.read_text())
