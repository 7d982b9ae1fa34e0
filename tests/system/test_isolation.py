"""The suite leaves the user's home alone: solutions are cached under pytest's temporary
folder (tests/conftest.py), so a cold run neither reads a stale solution nor fills ~/.cache."""

from __future__ import annotations

import os
from pathlib import Path

from tenk_env.solve import cache_dir


def test_the_solver_cache_is_a_temporary_folder(tmp_path_factory):
    base = tmp_path_factory.getbasetemp().resolve()
    assert cache_dir().resolve().is_relative_to(base)
    assert not cache_dir().resolve().is_relative_to(Path.home().resolve() / ".cache")
    assert Path(os.environ["MPLCONFIGDIR"]).resolve().is_relative_to(base)
