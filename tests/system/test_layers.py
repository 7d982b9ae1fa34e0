"""The import graph of tenk_env: no cycles, imports pointing one way (core <- policies <-
evaluation <- training, web <- cli), and no project module imported inside a function, save the
few listed below with their reason.

The graph is read from the source with ``ast``, nothing is imported. Edges: every ``import``
and ``from ... import`` (``from P import m`` counts as an edge to ``P.m`` when ``m`` is a
module, else to ``P``; the parent packages an import runs are not edges); every dynamic
import, however its loader is spelled (``importlib.import_module``, ``__import__``, an alias
such as ``from importlib import import_module as load`` or ``imp = importlib.import_module``,
the name given by keyword); and, in a module that uses a dynamic import, every string constant
naming a project module (``"tenk_env.cli.bench_train"``, ``"tenk_env.env:TenThousandEnv"``),
since such strings are what the loader is handed. An edge is inside a function when its
statement, or for strings every dynamic import of the module, is. Imports under
``if TYPE_CHECKING:`` never run and are not edges. The data packages ``tenk_env.zoo`` and
``tenk_env.configs`` (folders mapped in pyproject.toml, no code) are not edges.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

from support import ROOT

PACKAGE = "tenk_env"
#: tenk_env.<subpackage> -> layer; every other module (tenk_env itself, tenk_env.<module>,
#: tenk_env.vector, tenk_env.solve) is the core, layer 0. A layer imports only its own and lower ones.
LAYERS = {"policies": 1, "evaluation": 2, "training": 3, "web": 3, "cli": 4}
LAYER_NAMES = ["core", "policies", "evaluation", "training or web", "cli"]

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: packages whose files live outside tenk_env/ (agents/ -> tenk_env.zoo, configs/ -> tenk_env.configs)
DATA_PACKAGES = set(PYPROJECT["tool"]["setuptools"]["package-dir"])

#: third-party libraries worth deferring (each costs from a few tenths of a second, numba,
#: to seconds, torch): an allowed function-level import must keep one of them out
HEAVY = {
    "torch",
    "stable_baselines3",
    "sb3_contrib",
    "numba",
    "tensorboard",
    "matplotlib",
    "scipy",
    "statsmodels",
    "pettingzoo",
    "fastapi",
    "mcp",
}

#: function-level imports of project modules that stay, with why. "defers X": the imported
#: module pulls X at import time and the importer does not (checked below); "PEP 562": a
#: package's lazy attribute loader.
ALLOWED = {
    # `import tenk_env` registers TenThousand-v0 without loading PettingZoo (aec) or the env module
    ("tenk_env", "tenk_env.env"): "PEP 562",
    ("tenk_env", "tenk_env.aec"): "PEP 562",
    ("tenk_env", "tenk_env.vector.envs"): "gymnasium entry point: loaded by gymnasium.make_vec",
    # tenk_env.vector: the Gymnasium VectorEnv and the observation encoder load on first use
    ("tenk_env.vector", "tenk_env.vector.envs"): "PEP 562",
    ("tenk_env.vector", "tenk_env.vector.obs"): "PEP 562",
    # `tenk` imports every command module to build its parser: training's SB3 side loads on run
    ("tenk_env.training.trainer", "tenk_env.training.envs"): "defers stable_baselines3 (torch)",
    ("tenk_env.training.trainer", "tenk_env.training.policy"): "defers torch",
    ("tenk_env.cli.bench_train", "tenk_env.training.envs"): "defers stable_baselines3 (torch)",
    # every `tenk` command builds its parser from cmd_serve: the web framework loads on `tenk serve`
    ("tenk_env.cli.cmd_serve", "tenk_env.web.app"): "defers fastapi",
    # and from cmd_mcp: the MCP SDK loads on `tenk mcp`
    ("tenk_env.cli.cmd_mcp", "tenk_env.web.mcp"): "defers mcp (the MCP SDK)",
}
# `tenk bench` imports its benchmarks by name (BENCHES): each is a plugin of the command
ALLOWED.update(
    {
        ("tenk_env.cli.cmd_bench", f"tenk_env.cli.bench_{n}"): "plugin table (BENCHES)"
        for n in ("analyze", "engine", "env", "solve", "tables", "tournament", "train")
    }
)

#: function-level imports owed a fix by their owners: excused from the function-level rule
#: and, being inside a function, from the cycle check (never a module-level edge; the layer
#: check excuses nothing). Remove an entry once its import is at module level.
DEBT: dict[tuple[str, str], str] = {}


class Edge(NamedTuple):
    src: str
    dst: str
    line: int
    in_function: bool


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


MODULES = _modules()


def layer(mod: str) -> int:
    parts = mod.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0


def _is_data(name: str) -> bool:
    return any(name == d or name.startswith(d + ".") for d in DATA_PACKAGES)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _target(name: str) -> str | None:
    """The project module ``name`` is, or (for an attribute such as ``a.b.f``) lies in; None
    for third-party names and the data packages (which are no code, and not tenk_env itself)."""
    if _is_data(name):
        return None
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


LOADERS = {"import_module", "__import__"}  # importlib.import_module, builtins.__import__


def _loader_names(tree: ast.Module) -> set[str]:
    """The names a module binds to a dynamic-import function, by import or by assignment."""
    names = set(LOADERS)
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module in ("importlib", "builtins"):
            names |= {a.asname or a.name for a in n.names if a.name in LOADERS}
    while True:  # aliases of aliases
        more = {
            t.id
            for n in ast.walk(tree)
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.NamedExpr))
            and n.value is not None
            and _is_loader(n.value, names)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)
        }
        if more <= names:
            return names
        names |= more


def _is_loader(node: ast.expr, names: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in names) or (
        isinstance(node, ast.Attribute) and node.attr in LOADERS
    )


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Scan(ast.NodeVisitor):
    """The imports of one module. Function bodies (and lambdas) are inside a function; class
    bodies, decorators and default values run where they are defined."""

    def __init__(self, module: str, is_package: bool, tree: ast.Module):
        self.module, self.is_package = module, is_package
        self.loaders = _loader_names(tree)
        self.edges: list[Edge] = []
        self.third_party: set[str] = set()  # top-level names imported at module level
        self.depth = 0
        self.loader_uses: list[bool] = []  # in_function of each use of a loader
        self.strings: list[ast.Constant] = []
        self.handed: set[int] = set()  # ids of the literals loader calls were handed (edges already)
        self.visit(tree)
        if self.loader_uses:
            # the names a loader may be handed: every string naming a project module (or
            # "module:attribute"), inside a function unless some loader use is not
            in_function = all(self.loader_uses)
            for node in self.strings:
                if id(node) in self.handed:
                    continue
                mod, line = node.value.partition(":")[0], node.lineno
                if mod in MODULES:
                    self._add(mod, line, in_function)

    def _add(self, name: str, line: int, in_function: bool) -> None:
        t = _target(name)
        if t is None:
            if not in_function and name.split(".")[0] != PACKAGE:
                self.third_party.add(name.split(".")[0])
        elif t != self.module:
            self.edges.append(Edge(self.module, t, line, in_function))

    def _absolute(self, name: str, level: int) -> str:
        if not level:
            return name
        pkg = self.module.split(".")
        if not self.is_package:
            pkg.pop()
        pkg = pkg[: len(pkg) - (level - 1)]
        return ".".join(pkg + ([name] if name else []))

    # ------------------------------------------------------------------ statements
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._add(a.name, node.lineno, self.depth > 0)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = self._absolute(node.module or "", node.level)
        for a in node.names:
            sub = f"{base}.{a.name}"
            self._add(sub if sub in MODULES or _is_data(sub) else base, node.lineno, self.depth > 0)

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for st in node.orelse:  # TYPE_CHECKING imports never run
                self.visit(st)
        else:
            self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for d in getattr(node, "decorator_list", []) + node.args.defaults + [d for d in node.args.kw_defaults if d]:
            self.visit(d)
        self.depth += 1
        for st in node.body if isinstance(node.body, list) else [node.body]:
            self.visit(st)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    # ------------------------------------------------------------------ expressions
    def visit_Call(self, node: ast.Call) -> None:
        if _is_loader(node.func, self.loaders):
            kw = {k.arg: k.value for k in node.keywords}
            name_node = node.args[0] if node.args else kw.get("name")
            package_node = node.args[1] if len(node.args) > 1 else kw.get("package")
            name, package = _string(name_node), _string(package_node)
            self.handed |= {id(name_node), id(package_node)}
            if name is not None and name.startswith(".") and package is not None:
                # import_module(".io", package="tenk_env")
                level, rest = len(name) - len(name.lstrip(".")), name.lstrip(".")
                parts = package.split(".")
                name = ".".join(parts[: len(parts) - (level - 1)] + ([rest] if rest else []))
            if name is not None and not name.startswith("."):
                self._add(name, node.lineno, self.depth > 0)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign | ast.AnnAssign) -> None:
        if node.value is not None and _is_loader(node.value, self.loaders):
            return  # binding an alias (`imp = importlib.import_module`) imports nothing
        self.generic_visit(node)

    visit_AnnAssign = visit_Assign

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and _is_loader(node, self.loaders):
            self.loader_uses.append(self.depth > 0)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _is_loader(node, self.loaders):
            self.loader_uses.append(self.depth > 0)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self.strings.append(node)


def scan_source(module: str, text: str, is_package: bool = False) -> _Scan:
    return _Scan(module, is_package, ast.parse(text))


def _scan() -> tuple[list[Edge], dict[str, set[str]]]:
    edges, third = [], {}
    for mod, path in MODULES.items():
        s = scan_source(mod, path.read_text(), path.name == "__init__.py")
        edges += dict.fromkeys(s.edges)  # one edge per statement, not per imported name
        third[mod] = s.third_party
    return edges, third


EDGES, THIRD_PARTY = _scan()


def _where(e: Edge) -> str:
    where = "inside a function" if e.in_function else "module level"
    return f"{MODULES[e.src].relative_to(ROOT)}:{e.line}: {e.src} -> {e.dst} ({where})"


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


# ---------------------------------------------------------------------- the rules, as reports
def cycle_report(edges: list[Edge], debt) -> str:
    """Cycles over every edge; a DEBT pair excuses its function-level imports, never one at
    module level."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if not (e.in_function and (e.src, e.dst) in debt):
            graph[e.src].add(e.dst)
            graph[e.dst]
    msgs = []
    for c in (c for c in _sccs(graph) if len(c) > 1):
        loop = _shortest_cycle(graph, set(c))
        hops = [
            next(e for e in edges if (e.src, e.dst) == (a, b) and not (e.in_function and (a, b) in debt))
            for a, b in zip(loop, loop[1:] + loop[:1])
        ]
        msgs.append(
            f"import cycle {' -> '.join(loop + loop[:1])} (one of {len(c)} modules importing each other; "
            "move code so the imports point one way):\n    " + "\n    ".join(map(_where, hops))
        )
    return "\n".join(msgs)


def _shortest_cycle(graph: dict[str, set[str]], among: set[str]) -> list[str]:
    best: list[str] = []
    for start in sorted(among):
        back: dict[str, str] = {}  # breadth first from start until an edge leads back to it
        todo = [start]
        while todo and start not in back:
            nxt = []
            for v in todo:
                for w in sorted(graph[v] & among):
                    if w not in back:
                        back[w] = v
                        nxt.append(w)
            todo = nxt
        loop, v = [], back[start]
        while v != start:
            loop.append(v)
            v = back[v]
        loop = [start] + loop[::-1]
        if not best or len(loop) < len(best):
            best = loop
    return best


def upward_report(edges: list[Edge]) -> str:
    bad = [
        f"{_where(e)}: {LAYER_NAMES[layer(e.src)]} imports {LAYER_NAMES[layer(e.dst)]}"
        for e in edges
        if layer(e.dst) > layer(e.src)
    ]
    return (
        ("imports pointing up a layer (core <- policies <- evaluation <- training, web <- cli):\n" + "\n".join(bad))
        if bad
        else ""
    )


def inside_report(edges: list[Edge], excused) -> str:
    bad = [_where(e) for e in edges if e.in_function and (e.src, e.dst) not in excused]
    return (
        (
            "project modules imported inside a function (import them at module level; if that makes a "
            "cycle, move code so the imports point one way):\n" + "\n".join(bad)
        )
        if bad
        else ""
    )


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


# ---------------------------------------------------------------------- the reader and the rules bite
def test_the_graph_is_read():
    assert {
        "tenk_env",
        "tenk_env.registry",
        "tenk_env.policies.batched",
        "tenk_env.evaluation.match",
        "tenk_env.training.sweep.run",
        "tenk_env.cli.main",
    } <= set(MODULES)
    assert [
        layer(m)
        for m in (
            "tenk_env",
            "tenk_env.rules",
            "tenk_env.vector.engine",
            "tenk_env.solve.game",
            "tenk_env.policies",
            "tenk_env.evaluation.match",
            "tenk_env.training.sweep.run",
            "tenk_env.cli.main",
        )
    ] == [0, 0, 0, 0, 1, 2, 3, 4]
    pairs = {(e.src, e.dst, e.in_function) for e in EDGES}
    assert ("tenk_env.evaluation.match", "tenk_env.policies.batched", False) in pairs
    assert ("tenk_env.cli.cmd_bench", "tenk_env.cli.bench_train", True) in pairs  # a BENCHES string
    assert "numba" in THIRD_PARTY["tenk_env.vector.nb_backend"]
    s = scan_source(
        "tenk_env.evaluation.match",
        """
import numpy as np
from typing import TYPE_CHECKING
from . import play
from .tournament import run_tournament
from ..policies.base import make_agent
from tenk_env.vector import BatchedGame
from tenk_env import zoo, configs
import tenk_env.configs.rules
if TYPE_CHECKING:
    from tenk_env.policies.ppo import PPOAgent
else:
    import tenk_env.evaluation.analysis
try:
    from tenk_env.evaluation.benchmark import run
except ImportError:
    pass
class C:
    def f(self, x=__import__("tenk_env.records")):
        import tenk_env.io as io
        importlib.import_module("tenk_env.policies.exact")
        return lambda: importlib.import_module("tenk_env.policies.human")
""",
    )
    got = {(e.dst, e.in_function) for e in s.edges}
    assert got == {
        ("tenk_env.evaluation.play", False),
        ("tenk_env.evaluation.tournament", False),
        ("tenk_env.policies.base", False),
        ("tenk_env.vector", False),
        ("tenk_env.evaluation.analysis", False),
        ("tenk_env.evaluation.benchmark", False),
        ("tenk_env.records", False),
        ("tenk_env.io", True),
        ("tenk_env.policies.exact", True),
        ("tenk_env.policies.human", True),
    }, got
    assert s.third_party == {"numpy", "typing"}
    # the data packages are folders of YAML and weights, mapped in, never tenk_env itself
    assert DATA_PACKAGES == {"tenk_env.zoo", "tenk_env.configs"} and not DATA_PACKAGES & set(MODULES)
    assert _target("tenk_env.zoo") is None and _target("tenk_env.configs.rules") is None
    for pkg, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items():
        code = [
            f.relative_to(ROOT)
            for f in (ROOT / folder).rglob("*.py")
            if f.name != "__init__.py" or ast.parse(f.read_text()).body[1:]
        ]
        assert not code, f"{pkg} ({folder}/) is a data package, but holds code: {code}"


def test_dynamic_imports_of_every_form_are_seen():
    s = scan_source(
        "tenk_env.cli.cmd_x",
        """
import importlib
import importlib as il
from importlib import import_module as load
imp = importlib.import_module
again = imp
PLUGINS = {"a": "tenk_env.cli.bench_env", "b": "tenk_env.cli.main:main", "zoo": "tenk_env.zoo"}
load("tenk_env.cli.args")
def f(name):
    importlib.import_module(name="tenk_env.cli.common")
    il.import_module("tenk_env.cli.bench_solve")
    imp("tenk_env.cli.bench_tables")
    again("tenk_env.cli.bench_train")
    __import__("tenk_env.cli.cmd_zoo")
    importlib.import_module(".cmd_play", package="tenk_env.cli")
    importlib.import_module("..records", "tenk_env.cli")
    return importlib.import_module(PLUGINS[name])
""",
    )
    got = {(e.dst, e.in_function) for e in s.edges}
    # the PLUGINS strings are module level: `load` is used at module level
    assert got == {
        ("tenk_env.cli.args", False),
        ("tenk_env.cli.bench_env", False),
        ("tenk_env.cli.main", False),
        ("tenk_env.cli.common", True),
        ("tenk_env.cli.bench_solve", True),
        ("tenk_env.cli.bench_tables", True),
        ("tenk_env.cli.bench_train", True),
        ("tenk_env.cli.cmd_zoo", True),
        ("tenk_env.cli.cmd_play", True),
        ("tenk_env.records", True),
    }, got
    # strings in a module whose loader runs only inside functions: edges inside a function
    s = scan_source("tenk_env.cli.cmd_x", 'B = ["tenk_env.cli.bench_env"]\ndef f(i):\n    return __import__(B[i])\n')
    assert {(e.dst, e.in_function) for e in s.edges} == {("tenk_env.cli.bench_env", True)}
    # and no loader, no string edges: a module name in a message is only text
    assert not scan_source("tenk_env.cli.cmd_x", 'print("tenk_env.cli.bench_env")').edges


def test_the_rules_bite():
    # (a) a module-level cycle is reported even when one of its pairs is debt inside a function
    edges = [
        Edge("tenk_env.game", "tenk_env.rules", 1, False),
        Edge("tenk_env.rules", "tenk_env.game", 2, False),
        Edge("tenk_env.rules", "tenk_env.game", 9, True),
    ]
    msg = cycle_report(edges, {("tenk_env.rules", "tenk_env.game"): "owed"})
    assert "import cycle tenk_env.game -> tenk_env.rules -> tenk_env.game" in msg and "rules.py:2:" in msg, msg
    assert not cycle_report(edges[:1] + edges[2:], {("tenk_env.rules", "tenk_env.game"): "owed"})
    assert cycle_report(edges[:1] + edges[2:], {})  # unexcused, a function-level import closes a cycle too
    # (b) __import__ of the CLI inside a function of the core points up, and nothing excuses it
    s = scan_source("tenk_env.rules", 'def f():\n    return __import__("tenk_env.cli.main")\n')
    assert s.edges == [Edge("tenk_env.rules", "tenk_env.cli.main", 2, True)]
    msg = upward_report(s.edges)
    assert "tenk_env/rules.py:2: tenk_env.rules -> tenk_env.cli.main (inside a function): core imports cli" in msg, msg
    assert "tenk_env.cli.main" in inside_report(s.edges, ALLOWED.keys() | DEBT.keys())
    assert not upward_report([Edge("tenk_env.cli.main", "tenk_env.rules", 1, False)])


# ---------------------------------------------------------------------- the real graph
def test_no_cycles():
    msg = cycle_report(EDGES, DEBT)
    assert not msg, msg


def test_imports_point_down():
    msg = upward_report(EDGES)
    assert not msg, msg


def test_no_project_import_inside_a_function():
    msg = inside_report(EDGES, ALLOWED.keys() | DEBT.keys())
    assert not msg, msg


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
            assert lib in HEAVY and lib in _closure(dst) and lib not in _closure(src), (
                f"{src} -> {dst} is allowed because it {why}, which is no longer so"
            )


def test_import_tenk_env_stays_light():
    for mod in ("tenk_env", "tenk_env.registry"):
        heavy = _closure(mod) & HEAVY
        assert not heavy, f"import {mod} loads {sorted(heavy)}"
    torch = {"torch", "stable_baselines3", "sb3_contrib", "tensorboard"}
    bad = {m: sorted(_closure(m) & torch) for m in MODULES if layer(m) == 0 and _closure(m) & torch}
    assert not bad, f"core modules that import torch when imported: {bad}"


def test_the_entry_points_exist():
    """pyproject.toml's entry points name modules and attributes that exist: the `tenk`
    command, and every built-in agent and batched form declared to tenk_env.registry (which
    reads the installed metadata: run `pip install -e .` after changing them)."""
    from importlib.metadata import entry_points

    groups = {"console_scripts": PYPROJECT["project"]["scripts"], **PYPROJECT["project"]["entry-points"]}
    want = {
        "console_scripts": ({"tenk"}, "tenk_env.cli"),
        "tenk.agents": (
            {
                "random",
                "maxscore",
                "optimal",
                "greedy",
                "hold",
                "dicenow",
                "breakeven",
                "human",
                "ppo",
                "br",
                "equilibrium",
                "zoo",
                "afterstate",
                "onnx",
                "cmd",
                "llm",
            },
            "tenk_env.policies",
        ),
        "tenk.batched": ({"tenk"}, "tenk_env.policies"),
    }
    assert set(want) <= set(groups), f"pyproject.toml declares no {sorted(set(want) - set(groups))}"
    for group, eps in groups.items():
        names, home = want.get(group, (set(), PACKAGE))
        assert names <= set(eps), f"entry points {group!r}: missing {sorted(names - set(eps))}"
        for name, value in eps.items():
            module, _, attr = value.partition(":")
            assert module in MODULES and (module + ".").startswith(home + "."), (
                f"{group} {name} = {value}: no module {module} in {home}"
            )
            tree = ast.parse(MODULES[module].read_text())
            defined = (
                {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
                | {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
                | {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
            )
            assert attr in defined, f"{group} {name} = {value}: {module} defines no {attr}"
        if group != "console_scripts":
            installed = {ep.name: ep.value for ep in entry_points(group=group)}
            assert installed == eps, (
                f"installed entry points {group!r} differ from pyproject.toml "
                f"(run `pip install -e .`): {installed} != {eps}"
            )


def test_what_crosses_modules_has_a_public_name():
    """A name one module imports from another is part of that module's interface: no
    ``from tenk_env.x import _private`` (tests may reach inside; the package may not)."""
    bad = []
    for path in MODULES.values():
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ImportFrom) and n.module and n.module.split(".")[0] == PACKAGE:
                bad += [
                    f"{path.relative_to(ROOT)}:{n.lineno}: from {n.module} import {a.name}"
                    for a in n.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert not bad, "private names imported across modules (make them public):\n" + "\n".join(bad)
