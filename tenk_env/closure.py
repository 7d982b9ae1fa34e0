"""The code a computation runs: the project modules it imports, read from their source.

:func:`closure_hash` of a module is a short hash of that module and every project module it
imports, directly or not, each read as its syntax tree without docstrings (so a reworded
docstring or comment, or a reformatting, keeps the hash). Two things follow the code this way:
the solvers' cached results (:func:`tenk_env.solve.cache.result_key`) and the compiled kernels
numba keeps on disk (:mod:`tenk_env.jit`). Only this package's modules are followed: an upgrade
of a library that changes results needs a version bump of the results it changes.
"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

from tenk_env.io import atomic_write_text

__all__ = ["closure_hash", "code_closure", "module_file", "PACKAGE_DIR"]

_PACKAGE = __name__.split(".")[0]
#: the folder of the package whose modules a closure follows
PACKAGE_DIR = Path(__file__).resolve().parent


_FILES: dict[str, Path | None] = {}


def module_file(name: str) -> Path | None:
    """The source file of project module ``name`` (None: not a module of the package)."""
    if name not in _FILES:
        _FILES[name] = None
        parts = name.split(".")
        if parts[0] == _PACKAGE and all(p.isidentifier() for p in parts):
            rel = PACKAGE_DIR.joinpath(*parts[1:])
            for f in ([rel.with_suffix(".py")] if parts[1:] else []) + [rel / "__init__.py"]:
                if f.is_file():
                    _FILES[name] = f
                    break
    return _FILES[name]


def _read_source(path: Path) -> str:
    # every read of the keyed code goes through here, so a test can simulate an edit
    return path.read_text(encoding="utf-8")


#: the functions that import a module by name
_LOADERS = {"import_module", "__import__"}


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


class _Module:
    """One module's code as the keys see it: each top-level statement's syntax tree without
    docstrings (so a reworded docstring or comment, or a reformatting, keeps every key), the
    names it refers to and the project modules it imports."""

    def __init__(self, name: str):
        file = module_file(name)
        assert file is not None, f"{name!r} is not a module of {_PACKAGE}"
        self.name, self.file = name, file
        self.here = name.split(".")
        if self.file.name != "__init__.py":
            self.here = self.here[:-1]  # a module's relative imports start from its package
        self.body = body = [s for s in ast.parse(_read_source(self.file)).body if not _is_docstring(s)]
        self.dumps: list[str] = []
        self.names: list[set[str]] = []
        self.imports: list[set[str]] = []
        strings: list[set[str]] = []
        for s in body:
            out: list[str] = []
            found: tuple[set[str], set[str], set[str]] = (set(), set(), set())
            self._scan(s, out, found, False)
            self.dumps.append("\x00".join(out))
            self.names.append(found[0])
            self.imports.append(found[1])
            strings.append(found[2])
        if any(n & _LOADERS for n in self.names):
            # a module that imports by name is handed the names as strings
            # ("tenk_env.vector.envs", "tenk_env.env:TenThousandEnv"): each one is an import
            for i, named in enumerate(strings):
                self.imports[i] |= named
        self.digest = self._digest(range(len(body)))

    def _digest(self, stmts) -> str:
        return hashlib.sha256("\x01".join(self.dumps[i] for i in stmts).encode()).hexdigest()

    def _scan(self, node, out: list, found: tuple[set, set, set], typing: bool) -> None:
        # one pass over the tree (ast.walk and ast.dump would each take as long): the
        # statement's serialization in `out`; in `found`, the names it reads, the modules it
        # imports and the strings in it that name a module
        names, imports, strings = found
        if isinstance(node, list):
            # a string as a statement does nothing: a docstring, or a comment written as one
            out.append("[")
            for x in node:
                if not _is_docstring(x):
                    self._scan(x, out, found, typing)
            out.append("]")
            return
        if not isinstance(node, ast.AST):
            out.append(repr(node))
            return
        out.append(type(node).__name__)
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in _LOADERS:
            names.add(node.attr)
        elif isinstance(node, ast.alias) and node.name in _LOADERS:
            names.add(node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith(_PACKAGE):
            named = node.value.partition(":")[0]
            if module_file(named) is not None:
                strings.add(named)
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and not typing:
            imports.update(self.imported(node).values())
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            typing = True  # imports there never run
        for f in node._fields:
            self._scan(getattr(node, f, None), out, found, typing)
        out.append(")")

    def imported(self, node: ast.Import | ast.ImportFrom) -> dict[str, str]:
        """The project modules an import statement runs, by the name it binds (``from P import m``
        names ``P.m`` when that is a module, else ``P``)."""
        out: dict[str, str] = {}
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name
        else:
            parts = self.here[: len(self.here) - node.level + 1] if node.level else []
            base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out[a.asname or a.name] = sub if module_file(sub) is not None else base
        return {k: m for k, m in out.items() if module_file(m) is not None}

    def all_imports(self) -> set[str]:
        return set().union(*self.imports)

    def definition(self, name: str) -> tuple[list[int], set[str]]:
        """The top-level statements that definition ``name`` needs (its own, those of the
        module's names it refers to, directly or not, and the statements that run at import),
        by index, and the project modules those refer to or import."""
        defs: dict[str, list[int]] = {}
        bound: dict[str, set[str]] = {}
        runs: list[int] = []
        for i, s in enumerate(self.body):
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defs.setdefault(s.name, []).append(i)
            elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            defs.setdefault(n.id, []).append(i)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for k, m in self.imported(s).items():
                    bound.setdefault(k, set()).add(m)
            else:
                runs.append(i)  # an `if`, a `try`, a call: code that runs when the module loads
        if name not in defs:
            raise KeyError(f"{self.name} defines no top-level {name!r}")
        seen: set[int] = set()
        todo = [*defs[name], *runs]
        modules: set[str] = set()
        while todo:
            i = todo.pop()
            if i in seen:
                continue
            seen.add(i)
            modules |= self.imports[i]
            for ref in self.names[i]:
                todo.extend(defs.get(ref, []))
                modules |= bound.get(ref, set())
        return sorted(seen), modules


_MODULES: dict[str, _Module] = {}
_CLOSURES: dict[tuple[str, ...], tuple[dict, str]] = {}


def _module(name: str) -> _Module:
    if name not in _MODULES:
        _MODULES[name] = _Module(name)
    return _MODULES[name]


def _closure(roots: tuple[str, ...]) -> tuple[dict, str]:
    """({module: None for the whole module, else the indexes of the statements covered}, hash)."""
    if roots not in _CLOSURES:
        whole: set[str] = set()
        part: dict[str, set[int]] = {}
        todo: list[str] = []
        for r in roots:
            mod, _, name = r.partition(":")
            if module_file(mod) is None:
                raise ValueError(f"{mod!r} is not a module of {_PACKAGE}")
            if name:
                stmts, modules = _module(mod).definition(name)
                part.setdefault(mod, set()).update(stmts)
                todo.extend(modules)
            else:
                todo.append(mod)
        while todo:
            name = todo.pop()
            if name in whole:
                continue
            whole.add(name)
            todo.extend(_module(name).all_imports())
        cover = {m: None for m in whole} | {m: sorted(s) for m, s in part.items() if m not in whole}
        h = hashlib.sha256()
        for m in sorted(cover):
            module = _module(m)
            digest = module.digest if cover[m] is None else module._digest(cover[m])
            h.update(f"{m} {digest}\n".encode())
        _CLOSURES[roots] = (cover, h.hexdigest()[:12])
    return _CLOSURES[roots]


def code_closure(*roots: str) -> list[Path]:
    """The source files whose code :func:`closure_hash` of ``roots`` covers, wholly or in part."""
    files: list[Path] = []
    for m in _closure(tuple(sorted(roots)))[0]:
        f = module_file(m)
        assert f is not None  # _closure covers only modules of the package
        files.append(f)
    return sorted(files)


def closure_hash(*roots: str) -> str:
    """Short hash of the code that ``roots`` run: each root is a project module (the module and
    every project module it imports, anywhere in it and relative imports included, directly or
    not) or ``"module:name"`` (that top-level definition, the module's definitions it refers to
    and the statements that run when the module loads, and every project module those refer to,
    with its own closure). A parent package that an import runs is not covered unless something
    imports from it: the packages' ``__init__`` files hold re-exports, no computation. Computed
    once per process (the code a process runs does not change under it), and remembered across
    processes (:func:`_remembered`)."""
    roots = tuple(sorted(roots))
    if roots not in _CLOSURES and roots not in _HASHES:
        _HASHES[roots] = _remembered(roots)
    return _CLOSURES[roots][1] if roots in _CLOSURES else _HASHES[roots]


#: closure hashes a process took from the memo file, by roots
_HASHES: dict[tuple[str, ...], str] = {}
#: where the hashes are remembered across processes (beside numba's cache of the kernels)
MEMO_FILE = PACKAGE_DIR / "__pycache__" / "tenk-closures.json"


def _sources_digest(files: list[str]) -> str | None:
    """Digest of the raw source of ``files`` (paths relative to the package; None: one is gone)."""
    h = hashlib.sha256()
    for rel in files:
        try:
            text = _read_source(PACKAGE_DIR / rel)
        except OSError:
            return None
        h.update(f"{rel}\0{text}\0".encode())
    return h.hexdigest()


def _remembered(roots: tuple[str, ...]) -> str:
    """:func:`closure_hash` of ``roots`` from the memo file when none of the files it covered has
    changed since, else worked out (parsing every module of the closure: a few tenths of a
    second, which every process that runs a kernel or keys a result would otherwise pay) and
    remembered. A memo entry lists the closure's files and a digest of their raw source: an edit
    that changes the closure (a new import) is an edit to one of those files, so the entry cannot
    outlive the code it describes. A memo that cannot be read or written is ignored."""
    name = "|".join(roots)
    try:
        memo = json.loads(MEMO_FILE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    if not isinstance(memo, dict):
        memo = {}
    entry = memo.get(name)
    if isinstance(entry, dict):
        try:
            if _sources_digest(entry["files"]) == entry["sources"]:
                return str(entry["hash"])
        except (KeyError, TypeError):
            pass
    h = _closure(roots)[1]
    files = sorted(f.relative_to(PACKAGE_DIR).as_posix() for f in code_closure(*roots))
    memo[name] = {"hash": h, "files": files, "sources": _sources_digest(files)}
    try:
        atomic_write_text(MEMO_FILE, json.dumps(memo, sort_keys=True))
    except OSError:
        pass
    return h
