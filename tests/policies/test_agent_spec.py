"""Agent specs parsed once (AgentSpec): names checked, files hashed, and the tournament path
that uses them writes what it wrote when specs were strings."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from tenk_env.evaluation.tournament import TournamentConfig, run_tournament
from tenk_env.io import file_sha256
from tenk_env.policies.base import ZOO_DIR, AgentError, AgentSpec, agent_file, agent_sha256, make_agent

from support import FIXTURES

PPO_FIXTURE = FIXTURES / "runs_v0" / "ppo_old" / "last.zip"


def test_a_bot_spec_has_no_file():
    s = AgentSpec.parse("hold:300")
    assert (s.text, s.name, s.arg, s.file, s.sha256, s.label) == ("hold:300", "hold", "300", None, None, "hold:300")
    assert str(s) == "hold:300"
    assert AgentSpec.parse("random").arg is None
    assert s.make().bar == 300


def test_a_ppo_spec_names_and_hashes_its_checkpoint():
    s = AgentSpec.parse(f"ppo:{PPO_FIXTURE}")
    assert (s.name, s.arg, s.file) == ("ppo", str(PPO_FIXTURE), PPO_FIXTURE)
    assert s.sha256 == file_sha256(PPO_FIXTURE) == agent_sha256(s.text)
    assert s.label == s.text and s.make().name == make_agent(s.text).name


def test_a_zoo_spec_hashes_the_entry_weights():
    s = AgentSpec.parse("zoo:classic_ppo_demo")
    assert s.file == ZOO_DIR / "classic_ppo_demo" / "weights.npz" == agent_file(s.text)
    assert s.sha256 == file_sha256(ZOO_DIR / "classic_ppo_demo" / "weights.npz")


def test_a_spec_pickles_and_parses_to_itself():
    for text in ("dicenow", f"ppo:{PPO_FIXTURE}", "zoo:classic_ppo_demo"):
        s = AgentSpec.parse(text)
        assert pickle.loads(pickle.dumps(s)) == s
        assert AgentSpec.parse(s) is s


def test_bad_specs_fail_with_the_message_making_them_gives(tmp_path):
    for text in ("hlod:300", f"ppo:{tmp_path / 'missing.zip'}", f"ppo:{tmp_path}", "zoo:no_such_entry"):
        with pytest.raises(AgentError) as made:
            make_agent(text)
        with pytest.raises(AgentError) as parsed:
            AgentSpec.parse(text)
        assert str(parsed.value) == str(made.value)
    with pytest.raises(AgentError, match=r"unknown agent 'hlod' \(did you mean 'hold'\?\)"):
        AgentSpec.parse("hlod:300")
    with pytest.raises(AgentError, match="give a string"):
        AgentSpec.parse(300)


def _tournament(out: Path, agents: list[str], games: int = 20) -> TournamentConfig:
    return TournamentConfig.from_dict(dict(agents=agents, games=games, seed=7, name="t", workers=1, out=str(out)))


def test_a_tournament_of_bots_writes_what_it_wrote_before(tmp_path):
    res = run_tournament(_tournament(tmp_path, ["hold:300", "dicenow"]))
    doc = json.loads((tmp_path / "t" / "results.json").read_text())
    # recorded from the tournament code before specs were parsed once
    row = doc["results"][0]
    assert (row["a"], row["b"], row["wins_a"], row["wins_b"], row["ties"]) == ("hold:300", "dicenow", 3, 17, 0)
    assert row["mean_margin"] == -1480.0 and doc["agent_sha256"] == {} and res.agent_sha256 == [None, None]
    saved = {p.name: p.read_bytes() for p in (tmp_path / "t").rglob("*") if p.is_file() and p.name != ".lock"}
    again = run_tournament(_tournament(tmp_path, ["hold:300", "dicenow"]))
    assert again.played_now == 0
    assert {p.name: p.read_bytes() for p in (tmp_path / "t").rglob("*") if p.is_file() and p.name != ".lock"} == saved


def test_validating_then_running_builds_each_agent_once(tmp_path, monkeypatch):
    made = []
    make = AgentSpec.make
    monkeypatch.setattr(AgentSpec, "make", lambda self: made.append(self.text) or make(self))
    monkeypatch.chdir(tmp_path)  # a short label: the plots have room for it
    ck = Path("p.zip")
    shutil.copy(PPO_FIXTURE, ck)
    cfg = _tournament(tmp_path / "out", [f"ppo:{ck}", "dicenow"], games=4)
    cfg.validate()  # as `tenk tournament` does before it starts Ray
    res = run_tournament(cfg)
    assert sorted(made) == sorted(cfg.agents)
    assert res.agent_sha256 == [file_sha256(ck), None]
    # a checkpoint replaced between the check and the run is built (and keyed) again
    cfg.validate()
    ck.write_bytes(ck.read_bytes() + b"\0")  # other bytes, the same weights (zip tolerates a tail)
    made.clear()
    res = run_tournament(cfg)
    assert made == [f"ppo:{ck}"] and res.agent_sha256 == [file_sha256(ck), None]
    assert any("changed since its games were saved" in n for n in res.notes)
