"""Runs written by tenk 0.1.0 before its modules moved into ``tenk_env`` still play and resume.

``tests/fixtures/runs_v0`` holds a tiny PPO run and a tiny afterstate run made by that
version. The PPO checkpoint's SB3 ``data`` pickles the policy class and the learning-rate
schedule under module paths that no longer exist (``scripts.train.policy.KeepAwarePolicy``,
``scripts.train.trainer.LinearSchedule``); the trainer rebuilds those from the run's config
when it resumes. The expected actions and match figures were recorded from the fixtures
when they were added: a change to them means old agents now play differently.

Resumes work on copies: nothing is ever written into the fixtures.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_match
from tenk_env.game import Game
from tenk_env.obs import encode, legal_mask
from tenk_env.policies.base import make_agent
from tenk_env.policies.ppo import read_meta

import support

FIXTURES = support.FIXTURES / "runs_v0"
PPO_RUN, AS_RUN = FIXTURES / "ppo_old", FIXTURES / "as_old"
PPO_SPEC = f"ppo:{PPO_RUN / 'last.zip'}"
AS_SPEC = f"afterstate:{AS_RUN / 'last.npz'}"


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _copy(run: Path, tmp_path: Path) -> Path:
    # the copy keeps the run's name, so the resume does not also rename it
    dst = tmp_path / "runs" / run.name
    shutil.copytree(run, dst)
    return dst


@pytest.mark.parametrize(
    "dice, action",
    [((1, 1, 5, 2, 3, 3), 35), ((5, 5, 5, 2, 4, 6), 28), ((1, 2, 3, 4, 5, 6), 63), ((2, 2, 3, 4, 6, 1), 1)],
)
def test_old_ppo_checkpoint_picks_the_recorded_action(dice, action):
    agent = make_agent(PPO_SPEC)
    game = Game("classic", 2)
    game.roll(dice)
    obs, mask = encode(game, game.current), legal_mask(game)
    assert int(agent.act(obs[None], mask[None])[0]) == action


def test_old_agents_play_the_recorded_match():
    # dicenow is deterministic, so the seeded games and their margins are fixed
    r = play_match("classic", PPO_SPEC, "dicenow", 20, seed=7, backend="scalar")
    assert (r.games, r.wins_a, r.mean_margin, r.points_per_turn_a) == (20, 0, -9245.0, 53.0)
    r = play_match("classic", AS_SPEC, "dicenow", 20, seed=7, backend="scalar")
    assert (r.games, r.wins_a, r.mean_margin, r.points_per_turn_a) == (20, 0, -7445.0, 143.0)


def test_old_ppo_run_resumes_to_a_larger_total(tmp_path):
    run = _copy(PPO_RUN, tmp_path)
    # the regret evaluation would first solve the classic game (minutes): off here
    assert (
        main(
            [
                "train",
                "--resume",
                str(run),
                "--set",
                "total_steps=8192",
                "--set",
                "eval.regret_games=0",
                "--no-progress",
            ]
        )
        == 0
    )
    assert read_meta(run / "last.zip")["num_timesteps"] == 8192
    state = json.loads((run / "state.json").read_text())
    assert state["step"] == 8192 and state["finished"]
    old, new = _rows(PPO_RUN / "eval.csv"), _rows(run / "eval.csv")
    assert new[: len(old)] == old
    assert [(r["step"], r["kind"]) for r in new[len(old) :]] == [("6144", "eval"), ("8192", "final")]
    assert _rows(run / "regret.csv") == _rows(PPO_RUN / "regret.csv")
    # the resumed checkpoint plays as an agent too
    make_agent(f"ppo:{run / 'last.zip'}")


def test_old_afterstate_run_resumes_to_a_larger_total(tmp_path):
    run = _copy(AS_RUN, tmp_path)
    assert main(["train", "--resume", str(run), "--set", "total_turns=1200", "--no-progress"]) == 0
    old, new = _rows(AS_RUN / "eval.csv"), _rows(run / "eval.csv")
    assert new[: len(old)] == old
    assert [r["turns"] for r in new[len(old) :]] == ["1200"]
    assert yaml.safe_load((run / "done.yaml").read_text())["turns"] == 1200
    make_agent(f"afterstate:{run / 'last.npz'}")


def test_loading_a_ppo_agent_keeps_the_process_torch_threads():
    # in a fresh interpreter: the thread count is the process's own setting
    code = (
        "import torch; torch.set_num_threads(2)\n"
        "from tenk_env.evaluation.match import play_match\n"
        f"play_match('classic', {PPO_SPEC!r}, 'zoo:classic_ppo_demo', 2, seed=0, backend='scalar')\n"
        "print(torch.get_num_threads())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2"]
