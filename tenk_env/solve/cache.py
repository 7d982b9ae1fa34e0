"""On-disk cache of solutions, and the keys they are cached under.

The directory is ``$TENK_CACHE`` if set, else ``~/.cache/tenk``. Files are ``.npz``
written atomically (:func:`tenk_env.io.atomic_write_bytes`), so an interrupted solve never
leaves a half-written solution that a later run would trust.

A key (:func:`result_key`) is the result's kind and version, the ruleset hash, its settings and
the content keys of the policies it follows, then a code part: :func:`closure_hash` of the module
that computes it, the module and every project module it imports, directly or not. So an edit to
any module a result runs re-computes it, and an edit elsewhere keeps it. A policy's content key
carries the code part of what decides its moves the same way (:func:`closure_hash` of those
modules, or of one definition and what it refers to, ``"module:name"``).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import zipfile
from pathlib import Path

import numpy as np

from tenk_env.io import atomic_write_bytes

__all__ = ["cache_dir", "cache_path", "load_arrays", "save_arrays", "result_key", "closure_hash", "code_closure"]


def cache_dir() -> Path:
    env = os.environ.get("TENK_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tenk"


def cache_path(key: str) -> Path:
    """The file a solution of this key is cached in."""
    return cache_dir() / f"{key}.npz"


def load_arrays(key: str) -> dict | None:
    p = cache_path(key)
    if not p.is_file():
        return None
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        # A corrupt or foreign file is ignored and recomputed, never trusted.
        return None


def save_arrays(key: str, arrays: dict) -> Path:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    p = cache_path(key)
    atomic_write_bytes(p, buf.getvalue())
    return p


# ---------------------------------------------------------------------- keys
#: the package whose modules a key's code part follows: third-party code is not keyed, so an
#: upgrade of a library that changes results needs a version bump of the results it changes
_PACKAGE = __name__.split(".")[0]
_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def result_key(module: str, *parts) -> str:
    """The cache key of a result that ``module`` computes: ``parts`` (its kind and version, the
    ruleset hash, its settings, the content keys of the policies it follows) joined by ``-``,
    then :func:`closure_hash` of ``module``. The versions stay for a change of results that
    changes no code (a fixed library bug, a new meaning of a setting)."""
    return "-".join([*(str(p) for p in parts), closure_hash(module)])


_FILES: dict[str, Path | None] = {}


def module_file(name: str) -> Path | None:
    """The source file of project module ``name`` (None: not a module of the package)."""
    if name not in _FILES:
        _FILES[name] = None
        parts = name.split(".")
        if parts[0] == _PACKAGE and all(p.isidentifier() for p in parts):
            rel = _PACKAGE_DIR.joinpath(*parts[1:])
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
    once per process (the code a process runs does not change under it)."""
    return _closure(tuple(sorted(roots)))[1]
