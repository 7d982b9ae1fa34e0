"""Simulated edits of the package's source, for the tests of what follows the code (the solvers'
cache keys, the compiled kernels' cache stamps).

:mod:`tenk_env.closure` reads every source file through ``closure._read_source``; :func:`edited`
wraps it so that one file reads as edited and forgets what was read before. Nothing in the
working tree is written.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from tenk_env import closure

#: the package's folder
PACKAGE = closure.PACKAGE_DIR
#: what an edit adds to a file: a new definition, which changes its code but not its behaviour
EDIT = "\n\ndef _edited():\n    return 1\n"


def rel(f: Path) -> str:
    """``f`` relative to the package's folder."""
    return f.resolve().relative_to(PACKAGE).as_posix()


@contextlib.contextmanager
def edited(monkeypatch, path: str, text: str = EDIT):
    """Within: the package file ``path`` (relative to tenk_env/) reads with ``text`` appended."""
    target = (PACKAGE / path).resolve()
    assert target.is_file(), path
    read = closure._read_source

    def forget():
        for name, m in list(closure._MODULES.items()):
            if m.file.resolve() == target:
                del closure._MODULES[name]
        closure._CLOSURES.clear()
        closure._HASHES.clear()

    with monkeypatch.context() as mp:
        mp.setattr(closure, "_read_source", lambda f: read(f) + (text if Path(f).resolve() == target else ""))
        forget()
        try:
            yield
        finally:
            forget()
    forget()
