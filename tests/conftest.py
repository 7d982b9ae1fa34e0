"""Suite-wide isolation: no test reads or writes the user's solver cache. This file sits at
tests/, above the folders of the tests (core/, solve/, ... system/), so it applies to every one;
helpers the tests import are in tests/support/.

``TENK_CACHE`` points at one directory for the whole run, so solutions that several tests
need (small rulesets solved in a second or two) are computed once, and a cold run on a fresh
machine costs the same as a warm one. A test that needs its own empty cache still sets
``TENK_CACHE`` itself with ``monkeypatch``.

Under ``pytest -n 2`` each worker is a session of its own, with its own folder: the solutions
cached here are small ones (seconds each), so the few that both workers solve cost less than
a folder shared between them would be worth.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def _isolated_solver_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("TENK_CACHE", str(tmp_path_factory.mktemp("tenk-cache")))
    # matplotlib writes its font cache under the home directory unless told otherwise
    mp.setenv("MPLCONFIGDIR", str(tmp_path_factory.mktemp("mplconfig")))
    # an SB3 model that learns without a logger of its own makes a folder in the system's
    # temporary directory, one per call, left behind after the run
    mp.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))
    yield
    mp.undo()
