"""``cmd:COMMAND``: an agent in another process speaking JSON lines.

The example agent plays move for move like the same rule written in Python; the protocol's
messages hold exactly the engine's observation, mask, legal moves and state; an agent that
cannot start, crashes, hangs, answers garbage or plays an illegal move gets an error naming
it and the problem, before the game changes; processes never outlive their agent; and a
tournament with a failing agent keeps and saves its other tables' games, then resumes."""

import gc
import json
import os
import pickle
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.analysis import analyse
from tenk_env.evaluation.play import play_game
from tenk_env.evaluation.tournament import TournamentConfig, run_tournament
from tenk_env.game import Game, Phase
from tenk_env.obs import encode, keep_action, legal_mask, obs_labels
from tenk_env.policies.base import AgentError, AgentSpec, make_agent
from tenk_env.policies.external import CmdAgent
from tenk_env.rules import load_ruleset

from support import ROOT
from support.processes import running

EXAMPLE = ROOT / "tenk_env" / "policies" / "cmd_example.py"


def spec(*argv: str) -> str:
    return "cmd:" + shlex.join([sys.executable, *argv])


def inline(code: str) -> str:
    """The spec of an agent whose whole program is ``code``."""
    return spec("-c", code)


class MostPoints:
    """The example agent's rule, written against the engine instead of the protocol."""

    name = "most-points"

    def check(self, rules, n_players):
        pass

    def decide(self, game, rng):
        moves = sorted(game.legal_moves(), key=lambda m: keep_action(*m))
        best = max(k.points for k, _ in moves)
        top = [m for m in moves if m[0].points == best]
        bank = game.turn_total + best >= 300
        return ([m for m in top if m[1] == bank] or top)[0]

    def piggyback(self, game, rng):
        return False


def _decision(rules="classic", roll=(1, 1, 5, 2, 3, 4), n=2) -> Game:
    game = Game(rules, n)
    game.roll(list(roll))
    assert game.phase is Phase.DECIDE
    return game


# --------------------------------------------------------------------------- playing
@pytest.mark.parametrize(
    "rules, n",
    [
        ("classic", 2),
        ({"base": "classic", "target": 3000, "piggyback": True}, 3),  # piggyback choices
        ("inform_five_dice", 2),  # five dice, three rolls a turn
    ],
)
def test_example_agent_plays_the_same_games_as_its_rule_in_python(rules, n):
    agent = make_agent(spec(str(EXAMPLE)))
    for seed in range(3):
        # the agent in two seats of a 3-player game: one process serves both
        seats = [agent, "dicenow"] + [agent] * (n - 2)
        ref = [MostPoints(), "dicenow"] + [MostPoints()] * (n - 2)
        got = play_game(rules, seats, seed)
        want = play_game(rules, ref, seed)
        assert got.events == want.events
        assert sum(e["type"] == "keep" for e in got.events) > 10
    if load_ruleset(rules).piggyback:
        # declined every time it was offered
        assert any(e["type"] == "piggyback" for e in got.events)
        assert all(not e["take"] for e in got.events if e["type"] == "piggyback" and e["player"] != 1)
    proc = agent._proc.popen
    agent.close()
    assert proc.returncode == 0  # it left by itself when its input ended


def _logging_agent(log, answer: str):
    """A cmd: agent that writes every line it is sent to ``log`` and answers each decision
    with ``answer`` (a Python expression over the message ``m``)."""
    code = (
        "import json, sys\n"
        f"log = open({str(log)!r}, 'a')\n"
        "for line in sys.stdin:\n"
        "    log.write(line); log.flush()\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'decide':\n"
        f"        print(json.dumps({answer}), flush=True)\n"
    )
    return make_agent(inline(code))


def test_the_messages_hold_the_engines_observation_mask_legal_moves_and_state(tmp_path):
    log = tmp_path / "log.jsonl"
    agent = _logging_agent(log, "{'action': m['legal'][-1]['action'], 'note': 'ignored'}")
    game = _decision()  # roll 1 1 2 3 4 5
    obs, mask = encode(game, 0).tolist(), legal_mask(game).tolist()
    keep, end = agent.decide(game, np.random.default_rng(0))
    hello, decide = (json.loads(x) for x in log.read_text().splitlines())
    assert hello == {
        "type": "hello",
        "protocol": 1,
        "rules": game.rules.to_dict(),
        "n_players": 2,
        "n_actions": 128,
        "obs_version": 1,
        "obs_labels": obs_labels(2),
    }
    assert decide["type"] == "decide" and decide["seat"] == 0
    assert decide["obs"] == obs and decide["mask"] == mask
    # sorted roll 1 1 2 3 4 5: bit i keeps die i; not on the board, so nothing banks
    assert decide["legal"] == [
        {"action": 1, "keep": [1], "points": 100, "end": False, "label": "keep 1 (100) and roll on"},
        {"action": 3, "keep": [1, 1], "points": 200, "end": False, "label": "keep 1 1 (200) and roll on"},
        {"action": 32, "keep": [5], "points": 50, "end": False, "label": "keep 5 (50) and roll on"},
        {"action": 33, "keep": [1, 5], "points": 150, "end": False, "label": "keep 1 5 (150) and roll on"},
        {"action": 35, "keep": [1, 1, 5], "points": 250, "end": False, "label": "keep 1 1 5 (250) and roll on"},
    ]
    assert [a for a, m in enumerate(mask) if m] == [x["action"] for x in decide["legal"]]
    assert decide["state"] == {
        "phase": "decide",
        "turn": 1,
        "target": 10000,
        "scores": [0, 0],
        "on_board": [False, False],
        "busts_in_row": [0, 0],
        "turn_total": 0,
        "dice": [1, 1, 2, 3, 4, 5],
        "dice_left": 6,
        "rolls": 1,
        "max_rolls": 0,
        "final_round": False,
        "trigger": None,
        "final_turns_left": None,
        "piggy": None,
    }
    assert (keep.dice, end) == ((1, 1, 5), False)
    # a new hello only for another ruleset: the same process serves it
    other = _decision({"base": "classic", "target": 2000})
    agent.decide(other, np.random.default_rng(0))
    types = [json.loads(x)["type"] for x in log.read_text().splitlines()]
    assert types == ["hello", "decide", "hello", "decide"]
    agent.close()


def test_piggyback_choices_carry_their_two_actions(tmp_path):
    log = tmp_path / "log.jsonl"
    agent = _logging_agent(log, "{'action': 128}")
    game = Game({"base": "classic", "piggyback": True, "entry_threshold": 0}, 2)
    game.roll([1, 2, 2, 3, 4, 6])
    game.act([1], True)  # banks 100, leaving 5 dice to the next player
    assert game.phase is Phase.PIGGYBACK and game.piggy == (5, 100)
    assert agent.piggyback(game, np.random.default_rng(0)) is True
    decide = json.loads(log.read_text().splitlines()[1])
    assert decide["seat"] == 1 and decide["mask"][128:] == [1, 1] and sum(decide["mask"]) == 2
    assert decide["legal"] == [
        {"action": 128, "keep": [], "points": 0, "end": False, "label": "take over the dice left (piggyback)"},
        {"action": 129, "keep": [], "points": 0, "end": False, "label": "start fresh (no piggyback)"},
    ]
    assert decide["state"]["phase"] == "piggyback" and decide["state"]["piggy"] == {"dice": 5, "total": 100}
    assert decide["state"]["dice"] == [] and decide["state"]["scores"] == [100, 0]
    agent.close()


def test_an_agent_pickles_as_its_command_and_its_process_ends_with_it():
    agent = make_agent(spec(str(EXAMPLE)))
    want = play_game("classic", [agent, "greedy"], 4)
    proc = agent._proc.popen
    copy = pickle.loads(pickle.dumps(agent))
    assert isinstance(copy, CmdAgent) and copy._proc is None and copy.name == agent.name
    assert play_game("classic", [copy, "greedy"], 4).events == want.events
    assert copy._proc.popen.pid != proc.pid
    other = copy._proc.popen
    del agent, copy
    gc.collect()
    assert proc.poll() == 0 and other.poll() == 0


# --------------------------------------------------------------------------- failures
def test_a_program_that_cannot_start_is_named_before_any_game(tmp_path):
    with pytest.raises(
        AgentError,
        match=r"agent 'cmd:no-such-program-x --fast' cannot start: the program "
        r"'no-such-program-x' is not on PATH; give a program that exists, e\.g\. "
        r"'cmd:python -m tenk_env\.policies\.cmd_example'",
    ):
        play_game("classic", ["cmd:no-such-program-x --fast", "greedy"], 0)
    script = tmp_path / "agent.py"
    script.write_text("print('hi')\n")
    with pytest.raises(AgentError, match=f"program '{script}' is not executable"):
        make_agent(f"cmd:{script}").check(load_ruleset("classic"), 2)
    with pytest.raises(AgentError, match=r"agent 'cmd' needs a command after the colon, e\.g\. 'cmd:python "):
        make_agent("cmd:")
    with pytest.raises(
        AgentError,
        match=r"agent 'cmd:python \"x': the command cannot be split into words "
        r"\(No closing quotation\)",
    ):
        make_agent('cmd:python "x')


def test_a_crash_names_the_agent_its_exit_status_and_its_last_stderr_lines():
    s = inline("import sys; print('loading', file=sys.stderr); print('no model here', file=sys.stderr); sys.exit(3)")
    agent = make_agent(s)
    game = _decision()
    before = list(game.events)
    with pytest.raises(AgentError) as e:
        agent.decide(game, np.random.default_rng(0))
    assert str(e.value) == (
        f"agent {s!r} exited with status 3 before answering a decision (seat 0, turn 1); its "
        "last stderr lines: loading | no model here: run the command by hand and feed it the "
        "protocol's lines (tenk_env/policies/external.py) to see why"
    )
    assert game.events == before and game.phase is Phase.DECIDE  # the game was not touched
    # it stays failed: the same error at once, no second process
    t = time.perf_counter()
    with pytest.raises(AgentError) as again:
        agent.decide(game, np.random.default_rng(0))
    assert str(again.value) == str(e.value) and time.perf_counter() - t < 0.1
    # the simplest crash, through a whole game
    with pytest.raises(AgentError, match=r"exited with status 3 before answering.*it wrote nothing to stderr"):
        play_game("classic", [inline("import sys; sys.exit(3)"), "greedy"], 0)


def test_a_hang_is_stopped_after_the_timeout(monkeypatch):
    monkeypatch.setenv("TENK_CMD_TIMEOUT", "1")
    s = inline("import sys, time; print('thinking', file=sys.stderr, flush=True); time.sleep(60)")
    agent = make_agent(s)
    game = _decision()
    t = time.perf_counter()
    with pytest.raises(AgentError) as e:
        agent.decide(game, np.random.default_rng(0))
    assert time.perf_counter() - t < 4
    assert game.phase is Phase.DECIDE and game.turn_total == 0
    assert str(e.value) == (
        f"agent {s!r} did not answer within 1 s (seat 0, turn 1), so it was stopped; its last "
        'stderr lines: thinking: answer every decide line with one line such as {"action": 1} '
        "and flush stdout, or allow more time with TENK_CMD_TIMEOUT=SECONDS"
    )
    assert agent._proc.popen.poll() is not None  # not left sleeping
    monkeypatch.setenv("TENK_CMD_TIMEOUT", "soon")
    with pytest.raises(
        AgentError,
        match=r"TENK_CMD_TIMEOUT='soon': give the seconds an external \(cmd:\) agent may "
        r"take to answer one decision, a number > 0 \(default 30\)",
    ):
        make_agent(spec(str(EXAMPLE)))


@pytest.mark.parametrize(
    "answer, shown",
    [
        ("print('thinking about it', flush=True)", "thinking about it"),
        ("print(json.dumps({'action': '33'}), flush=True)", '{"action": "33"}'),
        ("print(json.dumps({'move': 33}), flush=True)", '{"move": 33}'),
        ("print(json.dumps([33]), flush=True)", "[33]"),
        ("print(json.dumps({'action': True}), flush=True)", '{"action": true}'),
    ],
)
def test_an_answer_that_is_not_an_action_is_named(answer, shown):
    s = inline(
        f"import json, sys\nfor line in sys.stdin:\n    if json.loads(line)['type'] == 'decide':\n        {answer}\n"
    )
    game = _decision()
    with pytest.raises(AgentError) as e:
        make_agent(s).decide(game, np.random.default_rng(0))
    assert str(e.value) == (
        f'agent {s!r} answered {shown!r}, which is not a JSON object with an integer "action": '
        'answer one line such as {"action": 1} (and write logs to stderr, not stdout)'
    )
    assert game.phase is Phase.DECIDE and game.turn_total == 0


def test_an_illegal_action_is_refused_with_the_legal_ones_before_the_game_changes():
    s = inline(
        "import json, sys\nfor line in sys.stdin:\n    if json.loads(line)['type'] == 'decide':\n"
        "        print(json.dumps({'action': 2}), flush=True)\n"
    )
    game = _decision()
    before = list(game.events)
    with pytest.raises(AgentError) as e:
        make_agent(s).decide(game, np.random.default_rng(0))
    assert str(e.value) == (
        f"agent {s!r} played action 2, which is illegal here (keep-mask 0b000010 keeps [1] from roll "
        "[1, 1, 2, 3, 4, 5], but only the canonical mask of each set of dice is legal: use action 1 (mask 0b000001, "
        "the lowest positions of each face)): answer one of the legal actions: 1 (keep 1 (100) and roll on), "
        "3 (keep 1 1 (200) and roll on), 32 (keep 5 (50) and roll on), 33 (keep 1 5 (150) and roll on), "
        "35 (keep 1 1 5 (250) and roll on)"
    )
    assert game.events == before and game.phase is Phase.DECIDE
    # banking below the entry threshold: legal in shape, not in this position
    s = inline(
        "import json, sys\nfor line in sys.stdin:\n    if json.loads(line)['type'] == 'decide':\n"
        "        print(json.dumps({'action': 64 + 1}), flush=True)\n"
    )
    with pytest.raises(
        AgentError,
        match=r"played action 65, which is illegal here \(cannot bank after keeping \[1\]: "
        r"not on the board yet and the turn total 100 is below the entry threshold "
        r"500; roll on instead \(action 1\)\)",
    ):
        make_agent(s).decide(game, np.random.default_rng(0))


# --------------------------------------------------------------------------- tournaments and commands
def test_a_crash_message_waits_for_the_last_stderr_lines(monkeypatch):
    # On a busy machine the stderr reader can lag behind the program's exit; the message must
    # still show what it wrote (two crashes of one program once gave two different messages).
    import tenk_env.policies.external as ext

    keep = ext._keep_tail

    def slow(pipe, tail):
        time.sleep(1.5)
        keep(pipe, tail)

    monkeypatch.setattr(ext, "_keep_tail", slow)
    s = inline("import sys; print('no model here', file=sys.stderr); sys.exit(3)")
    with pytest.raises(AgentError, match=r"its last stderr lines: no model here: run the command"):
        make_agent(s).decide(_decision(), np.random.default_rng(0))


def _crashing(path: Path) -> None:
    path.write_text("import sys\nprint('model.bin not found', file=sys.stderr)\nsys.exit(1)\n")


def test_a_program_that_ends_at_once_fails_its_first_decision_however_soon_it_ends(tmp_path):
    # Noticed at the hello (its pipe already broken: a loaded machine, a slow parent) or at the
    # decision, it is the same failure, with the same message: a tournament's workers then
    # report it once, not once per moment they noticed it.
    script = tmp_path / "agent.py"
    _crashing(script)
    game = Game(load_ruleset("classic"), 2)
    game.roll([1, 2, 3, 4, 6, 6])
    messages = []
    for wait_for_exit in (False, True):
        agent = make_agent(spec(str(script)))
        if wait_for_exit:
            agent._start().popen.wait(60)
        with pytest.raises(AgentError) as e:
            agent.decide(game, np.random.default_rng(0))
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert (
        "exited with status 1 before answering a decision (seat 0, turn 1); its last stderr lines: "
        "model.bin not found" in messages[1]
    )


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # long agent names in the charts
@pytest.mark.parametrize("backend, workers", [("scalar", 1), ("scalar", 2), ("batched", 1)])
def test_a_tournament_with_a_failing_agent_saves_the_other_tables_and_resumes_once_it_is_fixed(
    tmp_path, backend, workers
):
    # The failing agent's tables come first: before, its error ended the run there and
    # the other table was never played.
    script = tmp_path / "agent.py"
    _crashing(script)
    bad = spec(str(script))
    cfg = dict(
        agents=[bad, "greedy", "dicenow"],
        games=4,
        seed=3,
        name="t",
        workers=workers,
        backend=backend,
        out=str(tmp_path / "runs"),
    )
    chunks = tmp_path / "runs/t/chunks"
    with pytest.raises(AgentError) as e:
        run_tournament(TournamentConfig.from_dict(cfg))
    msg = str(e.value)
    assert msg.startswith(
        f"tournament 't': 2 of 3 tables could not be finished (2 chunks failed): agent {bad!r} "
        "exited with status 1 before answering a decision"
    )
    assert "model.bin not found" in msg
    assert msg.endswith(
        f"(tables {bad} vs greedy, {bad} vs dicenow). 1 of 3 chunks are saved in {chunks}: fix the "
        "agent and rerun the same command, which plays only the missing ones"
    )
    assert sorted(p.name for p in chunks.glob("*.json")) == ["t002-d0000000.json"]
    assert not (tmp_path / "runs/t/results.json").exists()
    # fixed in place: the rerun plays the two missing tables, and ends where a run of the
    # fixed agent from the start ends
    script.write_text(EXAMPLE.read_text())
    resumed = run_tournament(TournamentConfig.from_dict(cfg))
    assert resumed.played_now == 8
    whole = run_tournament(TournamentConfig.from_dict({**cfg, "out": str(tmp_path / "whole")}))
    assert whole.played_now == 12
    for f in ("results.csv", "ratings.csv"):
        assert (tmp_path / "runs/t" / f).read_text() == (tmp_path / "whole/t" / f).read_text()


def test_a_hanging_agent_costs_a_tournament_one_timeout_not_one_per_table(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CMD_TIMEOUT", "1")
    hang = inline("import time; time.sleep(60)")
    cfg = dict(
        agents=[hang, "greedy", "dicenow", "hold:300"],
        games=4,
        name="t",
        workers=1,
        backend="scalar",
        out=str(tmp_path),
    )
    t = time.perf_counter()
    with pytest.raises(
        AgentError,
        match=r"3 of 6 tables could not be finished \(3 chunks failed\): .*did not answer "
        r"within 1 s.*3 of 6 chunks are saved",
    ):
        run_tournament(TournamentConfig.from_dict(cfg))
    assert time.perf_counter() - t < 6


def test_tenk_ffa_ends_a_failing_agent_with_one_line_and_exit_status_2(tmp_path):
    script = tmp_path / "agent.py"
    _crashing(script)
    bad = spec(str(script))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenk_env.cli.main",
            "ffa",
            bad,
            "--players",
            "2",
            "--games",
            "4",
            "--baselines",
            "dicenow",
            "--workers",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: agent {bad!r} exited with status 1 before answering")
    assert "model.bin not found" in lines[0]


def test_analyze_scores_the_example_agent_as_its_rule_in_python():
    imm = load_ruleset("classic").replace(target=1000, end="immediate", name="imm1000")  # solved in a second
    got = analyse(spec(str(EXAMPLE)), imm, 20, seed=3, workers=1)
    want = analyse(MostPoints(), imm, 20, seed=3, workers=1)
    assert len(got.decisions["regret"]) > 50
    assert got.decisions.keys() == want.decisions.keys()
    for k in got.decisions:
        assert np.array_equal(got.decisions[k], want.decisions[k]), k
    assert got.report.regret_per_game == want.report.regret_per_game


@pytest.mark.filterwarnings("ignore:Tight layout not applied")
def test_tenk_ffa_and_a_tournament_play_the_example_agent(tmp_path, capsys):
    example = spec(str(EXAMPLE))
    assert main(["ffa", example, "--players", "2", "--games", "6", "--baselines", "dicenow", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert example in out and "dicenow" in out
    cfg = tmp_path / "t.yaml"
    cfg.write_text(f"agents: [{json.dumps(example)}, greedy]\ngames: 4\nname: t\nworkers: 1\nout: {tmp_path}\n")
    assert main(["tournament", "--config", str(cfg), "--no-progress"]) == 0
    assert "Bradley-Terry" in capsys.readouterr().out
    assert json.loads((tmp_path / "t/results.json").read_text())["agents"] == [example, "greedy"]


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # long agent names in the charts
def test_saved_games_are_keyed_by_the_program_file(tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(EXAMPLE.read_text())
    agent = spec(str(script))
    a = AgentSpec.parse(agent)
    assert a.file == script and a.sha256
    assert AgentSpec.parse("cmd:python -m some.module").file is None
    cfg = dict(
        agents=[agent, "dicenow"], games=4, seed=1, name="t", workers=1, backend="scalar", out=str(tmp_path / "r")
    )
    assert run_tournament(TournamentConfig.from_dict(cfg)).played_now == 4
    assert run_tournament(TournamentConfig.from_dict(cfg)).played_now == 0  # resumed: nothing to play
    # the program changes behind the same command: its saved games are not reused
    script.write_text(EXAMPLE.read_text().replace("BANK_AT = 300", "BANK_AT = 350"))
    assert AgentSpec.parse(agent).sha256 != a.sha256
    res = run_tournament(TournamentConfig.from_dict(cfg))
    assert res.played_now == 4
    assert any("changed since its games were saved" in n for n in res.notes)


# --------------------------------------------------------------------------- processes it starts
def _wrapper(tmp_path: Path, program: Path = EXAMPLE) -> tuple[Path, Path]:
    """A wrapper script that starts a child outliving its input (a server) and then runs
    ``program``; (the script, the file where each start writes "PROGRAM_PID CHILD_PID")."""
    pids = tmp_path / "pids"
    script = tmp_path / "wrap.sh"
    sleeper = shlex.join([sys.executable, "-c", "import time; time.sleep(300)"])
    script.write_text(
        f"#!/bin/sh\n{sleeper} &\necho $$ $! >> {shlex.quote(str(pids))}\n"
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(program))}\n"
    )
    script.chmod(0o755)
    return script, pids


def _started(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()] if pids.is_file() else []


posix_only = pytest.mark.skipif(os.name != "posix", reason="a shell script and process groups")


@posix_only
def test_closing_an_agent_ends_what_its_program_started(tmp_path):
    # Only the program was signalled, so a server it started kept running, and kept its
    # stderr pipe open: the reader never reached the end, and the close waited for it forever.
    script, pids = _wrapper(tmp_path)
    agent = make_agent(f"cmd:{script}")
    game = play_game("classic", [agent, "greedy"], 5)
    assert game.events == play_game("classic", [MostPoints(), "greedy"], 5).events
    program, child = _started(pids)
    assert running(program) and running(child)
    closing = threading.Thread(target=agent.close, daemon=True)
    closing.start()
    closing.join(timeout=120)  # a hang guard: it takes milliseconds
    assert not closing.is_alive()
    assert not running(program) and not running(child)
    assert agent._proc is None


@posix_only
def test_env_close_ends_its_cmd_opponents_processes(tmp_path):
    from tenk_env.env import TenThousandEnv

    script, pids = _wrapper(tmp_path)
    env = TenThousandEnv(opponents=[f"cmd:{script}"], seat=1, backend="python")
    env.reset(seed=0)  # the opponent in seat 0 moves first: its program has started
    program, child = _started(pids)
    assert running(program) and running(child)
    env.close()
    assert not running(program) and not running(child)
    # the env keeps its opponent, which starts its program again if asked to play
    assert env.opponents[0]._proc is None


def test_vector_env_close_ends_its_cmd_opponents_processes(tmp_path):
    from tenk_env.vector.envs import TenThousandVectorEnv

    script, pids = _wrapper(tmp_path)
    venv = TenThousandVectorEnv(2, "classic", 2, opponents=f"cmd:{script}", seat=1)
    venv.reset(seed=0)  # the opponent in seat 0 moves first in both games
    program, child = _started(pids)
    assert running(program) and running(child)
    venv.close()
    assert not running(program) and not running(child)


@posix_only
def test_a_sigterm_ends_the_agents_programs_with_the_process(tmp_path):
    # A process that SIGTERM ends at once (its default action) runs no cleanup: its agents'
    # programs and what they started were left running.
    script, pids = _wrapper(tmp_path)
    code = (
        "import sys, time\nfrom tenk_env.evaluation.play import play_game\n"
        "from tenk_env.policies.base import make_agent\n"
        f"agent = make_agent({f'cmd:{script}'!r})\nplay_game('classic', [agent, 'greedy'], 0)\n"
        "print('ready', flush=True)\ntime.sleep(300)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "ready\n"
        program, child = _started(pids)
        assert running(program) and running(child)
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=120) == -signal.SIGTERM
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert not running(program) and not running(child)


@posix_only
@pytest.mark.parametrize("workers", [1, 2])
def test_a_tournament_with_a_wrapper_script_ends_and_leaves_nothingrunning(tmp_path, workers):
    # The child a wrapper started held the agent's pipes: `tenk tournament` printed its
    # results and then never exited.
    script, pids = _wrapper(tmp_path)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenk_env.cli.main",
            "tournament",
            f"cmd:{script}",
            "greedy",
            "dicenow",
            "--games",
            "4",
            "--workers",
            str(workers),
            "--backend",
            "scalar",
            "--no-progress",
            "--out",
            str(tmp_path / "runs"),
            "--name",
            "t",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    started = _started(pids)
    assert len(started) >= 2
    assert [pid for pid in started if running(pid)] == []
    assert (
        f"note: agent 'cmd:{script}': its saved games are keyed by the script {script} alone; after changing a "
        "file it runs or reads without naming it (the program a wrapper starts, a model), rerun with --fresh"
        in r.stdout
    )


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # long agent names in the charts
def test_only_scripts_get_the_note_on_files_they_do_not_name(tmp_path):
    from tenk_env.policies.external import is_script

    plain, shebang, sh, bat = (tmp_path / n for n in ("agent.py", "agent2.py", "run.sh", "run.bat"))
    plain.write_text(EXAMPLE.read_text())
    shebang.write_text("#!/usr/bin/env python3\n" + EXAMPLE.read_text())
    sh.write_text("python3 agent.py\n")
    bat.write_text("python agent.py\n")
    assert [is_script(p) for p in (plain, shebang, sh, bat, tmp_path / "missing", None)] == [
        False,
        True,
        True,
        True,
        False,
        False,
    ]
    cfg = dict(games=4, name="t", workers=1, backend="scalar", out=str(tmp_path / "runs"))
    res = run_tournament(TournamentConfig.from_dict({**cfg, "agents": [spec(str(plain)), "greedy"]}))
    assert res.notes == []
    s = spec(str(shebang))
    res = run_tournament(TournamentConfig.from_dict({**cfg, "agents": [s, "greedy"], "name": "u"}))
    assert res.notes == [
        f"agent {s!r}: its saved games are keyed by the script {shebang} alone; after changing a "
        "file it runs or reads without naming it (the program a wrapper starts, a model), rerun "
        "with --fresh"
    ]
