"""The import graph of tenk_env/, agents/ and scripts/: no cycles, imports pointing one way
(scripts -> agents -> tenk_env), and no project module imported inside a function, save the
few listed below with their reason.

The graph is read from the source with ``ast``, nothing is imported. Edges: every
``import`` / ``from ... import`` at module level and inside functions (``from P import m``
counts as an edge to ``P.m`` when ``m`` is a module, else to ``P``; the parent packages an
import runs are not edges), ``importlib.import_module("literal")``, and a package
``__init__``'s PEP 562 ``__getattr__`` loader: every string in it naming a project module.
Imports under ``if TYPE_CHECKING:`` never run and are not edges.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"tenk_env": 0, "agents": 1, "scripts": 2}  # a layer imports only its own and lower ones

#: third-party libraries worth deferring (each costs from a few tenths of a second, numba,
#: to seconds, torch): an allowed function-level import must keep one of them out
HEAVY = {"torch", "stable_baselines3", "sb3_contrib", "numba", "tensorboard", "matplotlib", "scipy", "statsmodels",
         "pettingzoo"}

#: function-level imports of project modules that stay, with why. "defers X": the imported
#: module pulls X at import time and the importer does not (checked below); "PEP 562": a
#: package's lazy attribute loader.
ALLOWED = {
    # `import tenk_env` registers TenThousand-v0 without loading PettingZoo (aec) or the env module
    ("tenk_env", "tenk_env.env"): "PEP 562",
    ("tenk_env", "tenk_env.aec"): "PEP 562",
    # tenk_env.vector: the Gymnasium VectorEnv and the observation encoder load on first use
    ("tenk_env.vector", "tenk_env.vector.envs"): "PEP 562",
    ("tenk_env.vector", "tenk_env.vector.obs"): "PEP 562",
    # the batched engine imports only the backend it is asked for
    ("tenk_env.vector.engine", "tenk_env.vector.nb_backend"): "backend selection",
    ("tenk_env.vector.engine", "tenk_env.vector.np_backend"): "backend selection",
    # `tenk` imports every command module to build its parser: training's SB3 side loads on run
    ("tenk_env.training.trainer", "tenk_env.training.envs"): "defers stable_baselines3 (torch)",
    ("tenk_env.training.trainer", "tenk_env.training.policy"): "defers torch",
    ("tenk_env.cli.bench_train", "tenk_env.training.envs"): "defers stable_baselines3 (torch)",
}

#: function-level imports in files outside the layering work (issue #14 part 3), owed a
#: fix by their owners; excused from the function-level rule and the cycle check (the
#: layer check excuses nothing). Remove an entry once its import is at module level.
DEBT = {
    ("tenk_env.rules", "tenk_env.tables"): "cycle: tables imports rules (Ruleset._check_games_can_end)",
    ("tenk_env.rules", "tenk_env.io"): "to_yaml/save and load_ruleset: io is light, hoist it",
    ("tenk_env.solve.evaluate", "tenk_env.solve.turn"): "maxscore_policy: turn does not import evaluate, hoist it",
    ("tenk_env.solve.evaluate", "tenk_env.solve._kernels"): "_evaluator_hash: already imported at module level",
    ("tenk_env.solve.evaluate", "tenk_env.solve._spec"): "_evaluator_hash: already imported at module level",
    ("tenk_env.solve.evaluate", "tenk_env.solve.game"): "_evaluator_hash: already imported at module level",
}


class Edge(NamedTuple):
    src: str
    dst: str
    line: int
    in_function: bool


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in LAYERS:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = f
    return out


MODULES = _modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _target(name: str) -> str | None:
    """The project module ``name`` is, or (for an attribute such as ``a.b.f``) lies in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


class _Scan:
    """The imports of one module: statement by statement (imports are statements), plus the
    ``import_module("...")`` calls of the files that have any."""

    def __init__(self, module: str, is_package: bool):
        self.module, self.is_package = module, is_package
        self.edges: list[Edge] = []
        self.third_party: set[str] = set()   # top-level names imported at module level

    def _add(self, name: str, line: int, in_function: bool) -> None:
        t = _target(name)
        if t is None:
            if not in_function and name.split(".")[0] not in LAYERS:
                self.third_party.add(name.split(".")[0])
        elif t != self.module:
            self.edges.append(Edge(self.module, t, line, in_function))

    def _from(self, node: ast.ImportFrom, in_function: bool) -> None:
        base = node.module or ""
        if node.level:
            pkg = self.module.split(".")
            if not self.is_package:
                pkg.pop()
            pkg = pkg[:len(pkg) - (node.level - 1)]
            base = ".".join(pkg + ([base] if base else []))
        for a in node.names:
            sub = f"{base}.{a.name}"
            self._add(sub if sub in MODULES else base, node.lineno, in_function)

    def body(self, stmts: list[ast.stmt], in_function: bool = False, calls: bool = False) -> None:
        for st in stmts:
            if isinstance(st, ast.Import):
                for a in st.names:
                    self._add(a.name, st.lineno, in_function)
            elif isinstance(st, ast.ImportFrom):
                self._from(st, in_function)
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.body(st.body, True, calls)
            elif isinstance(st, ast.If) and _is_type_checking(st.test):
                self.body(st.orelse, in_function, calls)  # TYPE_CHECKING imports never run
            else:
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    sub = getattr(st, name, None)
                    if isinstance(sub, list):
                        for x in sub:
                            self.body(x.body if hasattr(x, "body") and not isinstance(x, ast.stmt) else [x],
                                      in_function, calls)
                if calls:
                    self._calls(st, in_function)

    def _calls(self, st: ast.stmt, in_function: bool) -> None:
        nodes = [st] if not hasattr(st, "body") else [getattr(st, f) for f in ("test", "iter", "value")
                                                       if isinstance(getattr(st, f, None), ast.AST)]
        for root in nodes:
            for n in ast.walk(root):
                if isinstance(n, ast.Lambda):
                    in_function = True
                if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) \
                        == "import_module" and n.args and isinstance(n.args[0], ast.Constant) \
                        and isinstance(n.args[0].value, str):
                    self._add(n.args[0].value, n.lineno, in_function)


def _scan() -> tuple[list[Edge], dict[str, set[str]]]:
    edges, third = [], {}
    for mod, path in MODULES.items():
        text = path.read_text()
        tree = ast.parse(text, str(path))
        s = _Scan(mod, path.name == "__init__.py")
        s.body(tree.body, calls="import_module" in text)
        if path.name == "__init__.py" and any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
                                              for n in tree.body):
            # PEP 562 loader: the module names it may import, by literal string
            for n in ast.walk(tree):
                if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in MODULES \
                        and n.value != mod:
                    s.edges.append(Edge(mod, n.value, n.lineno, True))
        edges += s.edges
        third[mod] = s.third_party
    return edges, third


EDGES, THIRD_PARTY = _scan()


def _where(e: Edge) -> str:
    return f"{MODULES[e.src].relative_to(ROOT)}:{e.line}: {e.src} -> {e.dst}"


def _sccs(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


MODULE_LEVEL: dict[str, set[str]] = defaultdict(set)
for _e in EDGES:
    if not _e.in_function:
        MODULE_LEVEL[_e.src].add(_e.dst)


def _closure(mod: str) -> set[str]:
    """Third-party top-level packages importing ``mod`` loads (module-level imports only)."""
    seen, todo, libs = {mod}, [mod], set()
    while todo:
        m = todo.pop()
        libs |= THIRD_PARTY[m]
        for d in MODULE_LEVEL[m] - seen:
            seen.add(d)
            todo.append(d)
    return libs


def test_the_graph_is_read():
    assert {"tenk_env.registry", "tenk_env.policies.batched", "tenk_env.evaluation.match", "tenk_env.cli.main"} <= set(MODULES)
    assert ("tenk_env.evaluation.match", "tenk_env.policies.batched", False) in {(e.src, e.dst, e.in_function) for e in EDGES}
    assert "numba" in THIRD_PARTY["tenk_env.vector.nb_backend"]
    s = _Scan("tenk_env.evaluation.match", False)
    s.body(ast.parse("""
import numpy as np
from typing import TYPE_CHECKING
from . import batched
from .base import make_agent
from tenk_env.vector import BatchedGame
if TYPE_CHECKING:
    from tenk_env.policies.ppo import PPOAgent
else:
    import tenk_env.evaluation.play
try:
    from tenk_env.evaluation.tournament import run_tournament
except ImportError:
    pass
class C:
    def f(self):
        import tenk_env.io as io
        importlib.import_module("tenk_env.policies.exact")
        return lambda: importlib.import_module("tenk_env.policies.human")
""").body, calls=True)
    got = {(e.dst, e.in_function) for e in s.edges}
    assert got == {("tenk_env.policies.batched", False), ("tenk_env.policies.base", False), ("tenk_env.vector", False),
                   ("tenk_env.evaluation.play", False), ("tenk_env.evaluation.tournament", False), ("tenk_env.io", True),
                   ("tenk_env.policies.exact", True), ("tenk_env.policies.human", True)}, got
    assert s.third_party == {"numpy", "typing"}


def test_no_cycles():
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for e in EDGES:
        if (e.src, e.dst) not in DEBT:
            graph[e.src].add(e.dst)
    cycles = [c for c in _sccs(graph) if len(c) > 1]
    msgs = []
    for c in cycles:
        inside = set(c)
        msgs.append("cycle among " + ", ".join(c) + ":\n    " + "\n    ".join(
            _where(e) for e in EDGES if e.src in inside and e.dst in inside))
    assert not cycles, "\n".join(msgs)


def test_imports_point_down():
    bad = [_where(e) for e in EDGES if LAYERS[e.dst.split(".")[0]] > LAYERS[e.src.split(".")[0]]]
    assert not bad, "imports pointing up a layer (scripts -> agents -> tenk_env):\n" + "\n".join(bad)


def test_no_project_import_inside_a_function():
    bad = [_where(e) for e in EDGES if e.in_function and (e.src, e.dst) not in ALLOWED | DEBT.keys()]
    assert not bad, ("project modules imported inside a function (import them at module level; if that "
                     "makes a cycle, move code so the imports point one way):\n" + "\n".join(bad))


def test_the_allowlists_are_true():
    inside = defaultdict(list)
    for e in EDGES:
        if e.in_function:
            inside[(e.src, e.dst)].append(e)
    stale = [f"{s} -> {d}" for s, d in list(ALLOWED) + list(DEBT) if (s, d) not in inside]
    assert not stale, "no longer imported inside a function: remove from the list:\n" + "\n".join(stale)
    for (src, dst), why in ALLOWED.items():
        if why.startswith("defers "):
            lib = why.split()[1]
            assert lib in HEAVY and lib in _closure(dst) and lib not in _closure(src), \
                f"{src} -> {dst} is allowed because it {why}, which is no longer so"


def test_import_tenk_env_stays_light():
    for mod in ("tenk_env", "tenk_env.registry"):
        heavy = _closure(mod) & HEAVY
        assert not heavy, f"import {mod} loads {sorted(heavy)}"
    torch = {"torch", "stable_baselines3", "sb3_contrib", "tensorboard"}
    bad = {m: sorted(_closure(m) & torch) for m in MODULES if m.split(".")[0] == "tenk_env" and _closure(m) & torch}
    assert not bad, f"tenk_env modules that import torch when imported: {bad}"


def test_the_agents_are_entry_points():
    """pyproject.toml declares every built-in agent to tenk_env.registry (run `pip install -e .`
    after changing it), each pointing at a function of an agents module."""
    from importlib.metadata import entry_points

    for group, want in (("tenk.agents", {"random", "maxscore", "optimal", "greedy", "hold", "dicenow", "breakeven",
                                         "human", "ppo", "br"}),
                        ("tenk.batched", {"agents"})):
        eps = {ep.name: ep.value for ep in entry_points(group=group)}
        assert want <= set(eps), f"entry points {group!r}: missing {sorted(want - set(eps))}"
        for name, value in eps.items():
            module, _, attr = value.partition(":")
            assert module.split(".")[0] == "agents" and module in MODULES, f"{group} {name} = {value}"
            tree = ast.parse(MODULES[module].read_text())
            defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | {
                t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
            assert attr in defined, f"{group} {name} = {value}: {module} defines no {attr}"
