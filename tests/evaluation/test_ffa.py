"""tenk ffa: an agent and each baseline bot in the same seat of the same free-for-all tables."""

from __future__ import annotations

import pytest

from tenk_env.cli.cmd_ffa import ffa
from tenk_env.cli.main import main
from tenk_env.evaluation.match import play_table
from tenk_env.rules import PRESETS


def test_each_row_is_the_table_with_that_agent_in_seat_0():
    rules = PRESETS["classic"]
    rows = ffa(rules, "hold:350", 3, ["dicenow", "maxscore"], ["greedy", "hold:350"], 6, seed=3)
    assert [label for label, _ in rows] == ["hold:350", "greedy"]  # the agent is not repeated as a baseline
    for label, r in rows:
        want = play_table(rules, [label, "dicenow", "maxscore"], 6, 3)
        assert r.games == 6 and r.win_rate == want.win_rate and r.ci_low == want.ci_low


def test_tenk_ffa_prints_the_verdict_and_refuses_a_wrong_table(capsys):
    assert main(["ffa", "dicenow", "--players", "3", "--games", "6", "--baselines", "random", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "dicenow" in out and "random" in out and "every baseline" in out
    assert main(["ffa", "dicenow", "--players", "4", "--opponents", "maxscore", "--games", "4"]) == 2
    assert "a 4-player table needs 3 opponents (got 1: maxscore)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv", [["human"], ["dicenow", "--opponents", "human", "maxscore"], ["dicenow", "--baselines", "greedy", "human"]]
)
def test_a_human_without_a_terminal_is_refused_before_any_game(argv, monkeypatch, capsys):
    def never(*args, **kwargs):
        pytest.fail("a table was played before the human was refused")

    monkeypatch.setattr("tenk_env.cli.cmd_ffa.play_table", never)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["ffa", *argv, "--games", "6"]) == 2
    assert (
        "error: agent 'human' answers at a terminal, and tenk ffa's standard input is not one (it is piped or "
        "redirected): run it from a terminal, or give a bot or a trained agent instead"
    ) in " ".join(capsys.readouterr().out.split())
