"""The compiled kernels' disk cache follows the code a kernel runs (:mod:`tenk_env.jit`).

numba stamps a cached kernel with its own file only, so a kernel would keep the bank rule or the
tie-break it was compiled with after an edit to :mod:`tenk_env.solve.kernels.rules`. These tests
pin that every kernel of the package is cached under a stamp that carries its module's code
closure, that an edit to a module the kernel runs makes numba refuse the entry compiled before,
and that an edit elsewhere keeps it. Edits are simulated (:mod:`support.edits`).
"""

from __future__ import annotations

import ast
import importlib
import pickle

import numpy as np
import pytest
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

from tenk_env import jit
from tenk_env.closure import code_closure
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k

from support.edits import PACKAGE, edited, rel


def kernel_modules() -> list[str]:
    """The package's modules that compile with numba (they import from :mod:`tenk_env.jit`)."""
    return sorted(
        "tenk_env." + rel(f).removesuffix(".py").replace("/", ".")
        for f in PACKAGE.rglob("*.py")
        if "from tenk_env.jit import" in f.read_text(encoding="utf-8")
    )


def test_every_module_takes_njit_from_tenk_env_jit():
    """A module that decorates with numba's ``njit`` imported straight from numba would be
    cached under numba's stamp alone (its file), not its closure."""
    direct = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.name == "jit.py" and f.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                direct += [f"{rel(f)}: from numba import {a.name}" for a in node.names if a.name in {"njit", "jit"}]
            if isinstance(node, ast.Attribute) and node.attr in {"njit", "jit"}:
                if isinstance(node.value, ast.Name) and node.value.id in {"numba", "nb"}:
                    direct.append(f"{rel(f)}: numba.{node.attr}")
    assert not direct


def kernels() -> list[CPUDispatcher]:
    found = {}
    for name in kernel_modules():
        mod = importlib.import_module(name)
        for value in vars(mod).values():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__.startswith("tenk_env."):
                found[id(value)] = value
    return list(found.values())


def test_every_kernel_of_the_package_is_cached_under_its_closure():
    ks = kernels()
    assert len(ks) > 60  # the solvers', the engine's and the bots' kernels
    for k in ks:
        assert k._cache is not None and hasattr(k._cache, "_impl"), k  # cache=True
        assert isinstance(k._cache._impl.locator, jit._ClosureStamp), k


def stamp(kernel) -> tuple:
    """The stamp numba writes into the kernel's cache index, as it reads back."""
    return pickle.loads(pickle.dumps(kernel._cache._impl.locator.get_source_stamp()))


def test_the_stamp_is_the_file_and_the_code_closure():
    s = stamp(turn_k._self_dp)
    assert isinstance(s, tuple) and len(s) == 2
    assert s[1] == jit.kernel_stamp(turn_k.__file__)
    assert turn_k._self_dp._cache._impl.locator.get_source_stamp() == s


@pytest.mark.parametrize("kernel", [turn_k._self_dp, turn_k._after_keep, rules_k.roll_axis])
def test_an_edit_to_a_module_a_kernel_runs_changes_its_stamp(monkeypatch, kernel):
    before = stamp(kernel)
    locator = kernel._cache._impl.locator
    inside = {rel(f) for f in code_closure(kernel.py_func.__module__)}
    assert {"solve/kernels/rules.py", "solve/spec.py"} <= inside
    for path in ["solve/kernels/rules.py", "solve/spec.py", "tables.py"]:
        with edited(monkeypatch, path):
            assert locator.get_source_stamp() != before, path
    for path in ["solve/kernels/equilibrium.py", "policies/heuristic.py", "web/app.py"]:
        assert path not in inside
        with edited(monkeypatch, path):
            assert locator.get_source_stamp() == before, path
    assert locator.get_source_stamp() == before


def test_numba_refuses_a_kernel_compiled_before_an_edit_to_the_rules(monkeypatch):
    """The whole mechanism, through numba's own cache: the entry a kernel saved loads while the
    code is unchanged, and not once a module it runs (the tie-break's) reads as edited."""
    kernel = turn_k._max_keep
    o_p = np.array([50, 100, 1000], dtype=np.int64)
    assert kernel(o_p) == 1000  # compiled or loaded, and saved
    (sig,) = [s for s in kernel.signatures if s == (kernel.typeof_pyval(o_p),)]

    def load():
        return FunctionCache(kernel.py_func).load_overload(sig, kernel.targetctx)

    assert load() is not None
    with edited(monkeypatch, "solve/kernels/rules.py"):
        assert load() is None
    assert load() is not None


class _Unsaveable:
    """A compile result that numba cannot serialise, as when two processes fill an empty cache
    at once (``RuntimeError: no compiled object yet``)."""

    def __init__(self, cres):
        self._cres = cres

    def __getattr__(self, name):
        return getattr(self._cres, name)

    def _reduce(self):
        raise RuntimeError("no compiled object yet for <Library '_general_dp'>")


def test_a_kernel_numba_cannot_save_runs_with_a_warning(monkeypatch):
    kernel = turn_k._max_keep
    o_p = np.array([50, 100], dtype=np.int64)
    assert kernel(o_p) == 100
    sig = kernel.signatures[0]
    written = []
    monkeypatch.setattr(kernel._cache._cache_file, "save", lambda key, data: written.append(key))
    with pytest.warns(RuntimeWarning, match="could not cache the kernel .*no compiled object yet"):
        kernel._cache.save_overload(sig, _Unsaveable(kernel.overloads[sig]))
    assert written == []  # nothing half-written
    assert kernel(o_p) == 100
