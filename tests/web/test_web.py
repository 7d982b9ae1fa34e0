"""The browser app's JSON API (`tenk serve`): games against agents scored move by move, watch,
analyse, and every refusal named. The page itself is tested in a real browser in
test_browser.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # starlette's note on which httpx it prefers
    from fastapi.testclient import TestClient

from tenk_env.cli.main import main
from tenk_env.evaluation.play import play_game
from tenk_env.game import MAX_PLAYERS, Phase
from tenk_env.policies.exact import BestResponseAgent, best_response_n
from tenk_env.policies.optimal import OptimalAgent
from tenk_env.records import replay
from tenk_env.rules import PRESETS
from tenk_env.solve.game import is_cached, solve_minutes
from tenk_env.web.app import create_app
from tenk_env.web.games import MAX_SCRIPTED_ROLLS, GameStore, SolveJob, Solver, WebError, event_boards, wait_note

from support.processes import running
from support.records import exact_regrets

IMM = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")  # solved in a second
#: the example program agent (importing it would run it)
EXAMPLE = Path(importlib.util.find_spec("tenk_env.policies.cmd_example").origin)
FR2 = PRESETS["busche_neller_2017"].replace(
    target=500, end="final_round", max_rolls=2, entry_threshold=300, name="fr500"
)

#: the human (P1) keeps one 1 of three and rolls on (a mistake), busts; P2 busts; P1 banks 600;
#: P2 busts; P1 banks 1,000 and wins (immediate end). dicenow never has a choice.
SCRIPT = [
    [1, 1, 1, 2, 3, 4],
    [2, 3, 4, 6, 6],
    [2, 3, 4, 6, 6, 3],
    [5, 5, 5, 1, 2, 3],
    [2, 3, 4, 6, 6, 3],
    [1, 1, 1, 5, 2, 3],
]
MOVES = [{"keep": [1], "end": False}, {"keep": [1, 5, 5, 5], "end": True}, {"keep": [1, 1, 1], "end": True}]


def _file(tmp_path, rules):
    path = tmp_path / f"{rules.name}.yaml"
    path.write_text(yaml.safe_dump(rules.to_dict()))
    return path


@pytest.fixture
def client(tmp_path):
    app = create_app([_file(tmp_path, IMM), _file(tmp_path, FR2)], solve_in_background=False)
    return TestClient(app, base_url="http://127.0.0.1")


def _new(client, **body):
    r = client.post("/api/games", json={"rules": "imm1000", "opponents": ["dicenow"], **body})
    assert r.status_code == 200, r.json()
    return r.json()


def test_scripted_game_gives_the_exact_regret_of_every_decision(client):
    s = _new(client, dice=SCRIPT)
    assert s["feedback"]["mode"] == "exact" and s["phase"] == "decide" and s["dice"] == [1, 1, 1, 2, 3, 4]
    for move in MOVES:
        s = client.post(f"/api/games/{s['id']}/act", json=move).json()
    assert s["phase"] == "over" and s["winners"] == [0] and s["scores"] == [1600, 0]

    # the same moves scored from the exact tables `tenk analyze` reads, on a replay of the record
    record = client.get(f"/api/games/{s['id']}/record")
    assert record.headers["content-type"].startswith("application/x-ndjson")
    events = [json.loads(line) for line in record.text.splitlines()]
    assert replay(events).over
    want = [m for _, m in exact_regrets(events)]
    got = s["decisions"]
    assert [d["move"]["keep"] for d in got] == [[1], [1, 5, 5, 5], [1, 1, 1]]
    assert [d["regret"] for d in got] == [m.regret for m in want]
    assert [d["move"]["value"] for d in got] == [m.value for m in want]
    assert [d["best"]["value"] for d in got] == [m.best_value for m in want]
    assert got[0]["regret"] > 0.05 and got[0]["best"]["keep"] == [1, 1, 1]  # one 1 of three: a real mistake
    assert got[2]["regret"] == 0.0 and got[2]["move"]["value"] == 1.0  # banking the win
    assert [d["event"] for d in got] == [i - 1 for i, e in enumerate(events) if e["type"] == "keep"]

    summary = s["summary"]
    assert summary["regret"] == pytest.approx(sum(m.regret for m in want), abs=1e-15)
    assert summary["decisions"] == 3 and summary["costliest"][0]["n"] == 0
    assert summary["implied_win"] == pytest.approx(max(0.0, summary["start_value"] - summary["regret"]))

    # analysing the saved record gives the human's seat the same figures, and scores P2 too (none here)
    a = client.post("/api/analyse", json={"record": record.text}).json()
    assert [d["regret"] for d in a["decisions"]] == [d["regret"] for d in got]
    assert [c["w"] for c in a["chart"]] == [d["best"]["value"] for d in got]
    assert a["winners"] == [0] and a["summary"][1]["decisions"] == 0


#: a board's fields that are the engine's state (the rest is the dice drawn on the table)
ENGINE_FIELDS = ("current", "turn", "scores", "on_board", "turn_total", "dice_left", "rolls", "final_round")
INPUT_EVENTS = ("order_roll", "roll", "keep", "piggyback")


def _board(turn=1, rolls=0, total=0, left=6, dice=(), rolled=False, kept=(), current=0, scores=(0, 0)):
    return {
        "current": current,
        "turn": turn,
        "scores": list(scores),
        "on_board": [False, False],
        "turn_total": total,
        "dice_left": left,
        "rolls": rolls,
        "final_round": False,
        "winners": None,
        "dice": list(dice),
        "rolled": rolled,
        "kept": list(kept),
    }


def _check_boards(events, boards):
    """At the end of every input (the next event is an input, or none) the board is the state
    of the game replayed to there, field for field; one board per event."""
    assert len(boards) == len(events)
    for i in range(len(events)):
        if i + 1 < len(events) and events[i + 1]["type"] not in INPUT_EVENTS:
            continue
        g = replay(events[: i + 1])
        want = {f: (list(v) if isinstance(v := getattr(g, f), list) else v) for f in ENGINE_FIELDS}
        assert {f: boards[i][f] for f in ENGINE_FIELDS} == want, (i, events[i])
        assert boards[i]["winners"] == (list(g.winners) if g.over else None)
        if g.phase == Phase.DECIDE:
            assert boards[i]["dice"] == list(g.dice) and boards[i]["rolled"]


def test_the_board_after_each_event_is_the_engines(client):
    s = _new(client, dice=SCRIPT)
    s = client.post(f"/api/games/{s['id']}/act", json=MOVES[0]).json()
    assert [e["type"] for e in s["events"][:7]] == ["start", "turn", "roll", "keep", "roll", "bust", "turn"]
    assert s["boards"][:7] == [
        _board(turn=0),
        _board(),
        _board(rolls=1, dice=[1, 1, 1, 2, 3, 4], rolled=True),
        _board(rolls=1, total=100, left=5, dice=[1, 1, 2, 3, 4], kept=[1]),
        _board(rolls=2, total=100, left=5, dice=[2, 3, 4, 6, 6], rolled=True, kept=[1]),
        _board(rolls=2, total=100, left=5, dice=[2, 3, 4, 6, 6], rolled=True, kept=[1]),  # the total lost
        _board(turn=2, current=1),
    ]
    for move in MOVES[1:]:
        s = client.post(f"/api/games/{s['id']}/act", json=move).json()
    _check_boards(s["events"], s["boards"])
    bank = max(i for i, e in enumerate(s["events"]) if e["type"] == "bank")
    assert s["boards"][bank]["scores"] == [1600, 0] and s["boards"][-1]["winners"] == [0]
    # an analysis of the record sends the same boards
    a = client.post("/api/analyse", json={"record": s["events"]}).json()
    assert a["boards"] == s["boards"]
    w = client.post("/api/watch", json={"rules": "imm1000", "agents": ["greedy", "dicenow"], "seed": 4}).json()
    _check_boards(w["events"], w["boards"])


@pytest.mark.parametrize(
    "rules",
    [
        PRESETS["zilch"],
        PRESETS["scribd_farkle"].replace(piggyback=True, target=3000),
        PRESETS["wikihow"].replace(four_twos_lose_all=True, target=3000),
        PRESETS["classic"].replace(turn_order="highest_die", exact_finish="to_lowest", target=2000),
        PRESETS["scribd_farkle"].replace(bust_penalty=1000, bust_penalty_after=2, target=3000),
    ],
    ids=["zilch", "piggyback", "lose-all", "order-exact", "penalty"],
)
def test_boards_follow_the_engine_under_every_option(rules):
    for seed in range(3):
        g = play_game(rules, ["random", "greedy", "dicenow"], seed, n_players=3)
        _check_boards(g.events, event_boards(g.events))


def test_values_shown_before_a_choice_are_the_tables(client):
    s = _new(client, seed=11)
    game = replay(s["events"])
    rows = OptimalAgent().tables(game).values(game)
    assert s["values"] == [{"keep": list(k.dice), "points": k.points, "roll": rv, "end": ev} for k, rv, ev in rows]
    assert {tuple(x["keep"]) for x in s["legal"]} == {tuple(x["keep"]) for x in s["values"]}


def test_a_refused_move_names_the_problem_and_leaves_the_game_as_it_was(client):
    s = _new(client, dice=SCRIPT)
    before = client.get(f"/api/games/{s['id']}").json()
    for body, status, words in [
        ({"keep": [2, 3], "end": False}, 400, "illegal move"),
        ({"keep": [1], "end": True}, 400, "illegal move"),  # 100 is below the 500 entry threshold
        ({"action": 200}, 400, "action"),
        ({"piggyback": True}, 400, "no piggyback choice"),
        ({}, 400, "give an action"),
        ({"keep": "1 5"}, 422, "keep"),
        ({"keep": ["1"], "end": False}, 422, "keep"),  # strings are not faces
        ({"keep": [1], "end": "no"}, 422, "end"),
        ({"keep": [-1], "end": False}, 400, "entry -1 is not a face"),  # not the last face of the roll
        ({"keep": [0, -5], "end": False}, 400, "entry 0 is not a face"),
        ({"action": 1, "extra": 2}, 422, "extra"),
    ]:
        r = client.post(f"/api/games/{s['id']}/act", json=body)
        assert r.status_code == status and words in r.json()["error"], (body, r.json())
    assert client.get(f"/api/games/{s['id']}").json() == before
    r = client.post("/api/games/gnope/act", json={"action": 1})
    assert r.status_code == 404 and "no game 'gnope'" in r.json()["error"]


@pytest.mark.parametrize(
    "body, words",
    [
        ({"opponents": ["dicenwo"]}, "did you mean 'dicenow'"),
        ({"opponents": ["hold:abc"]}, "hold:abc"),
        ({"opponents": ["zoo:nope"]}, "zoo:nope"),
        ({"rules": "clasic"}, "unknown ruleset 'clasic'"),
        ({"players": 5}, "players"),
        ({"players": 3}, "1 opponents for 3 players"),
        ({"seat": 3}, "seat 3"),
        ({"seed": 1, "dice": [[1, 2, 3, 4, 5, 6]]}, "not both"),
        ({"opponents": ["optimal", "dicenow"], "players": 3, "rules": "fr500"}, "agent 'optimal'"),
    ],
)
def test_bad_new_games_are_refused_by_name(client, body, words):
    r = client.post("/api/games", json={"rules": "imm1000", "opponents": ["dicenow"], **body})
    assert 400 <= r.status_code < 500 and words in r.json()["error"], r.json()


def test_scripted_dice_that_run_out_are_a_conflict_and_leave_the_game_as_it_was(client):
    r = client.post("/api/games", json={"rules": "imm1000", "opponents": ["dicenow"], "dice": [[1, 1, 1, 2, 3, 4]]})
    assert r.status_code == 200
    before = client.get(f"/api/games/{r.json()['id']}").json()
    r = client.post(f"/api/games/{before['id']}/act", json={"keep": [1, 1, 1], "end": False})
    assert r.status_code == 409 and "scripted dice ran out" in r.json()["error"]
    # the move was not applied: the game still waits for the same decision, and another move is taken
    assert client.get(f"/api/games/{before['id']}").json() == before
    r = client.post(f"/api/games/{before['id']}/act", json={"keep": [1, 1, 1], "end": True})
    assert r.status_code == 200 and r.json()["winners"] == [0]  # 1,000 banked: the target


def test_scripted_dice_are_capped():
    r = TestClient(create_app(solve_in_background=False), base_url="http://127.0.0.1").post(
        "/api/games", json={"opponents": ["dicenow"], "dice": [[1, 2, 3, 4, 5, 6]] * (MAX_SCRIPTED_ROLLS + 1)}
    )
    assert r.status_code == 422 and f"at most {MAX_SCRIPTED_ROLLS}" in r.json()["error"]


def test_a_terminal_agent_is_refused_not_left_waiting(client):
    for path, body in [
        ("/api/watch", {"rules": "imm1000", "agents": ["dicenow", "human"]}),
        ("/api/games", {"rules": "imm1000", "opponents": ["human"]}),
    ]:
        r = client.post(path, json=body)
        assert r.status_code == 400 and "server's terminal" in r.json()["error"], r.json()


@pytest.mark.parametrize("players", [1, 9, "2", None, True])
def test_records_with_a_bad_player_count_are_refused(client, players):
    events = play_game(IMM, ["dicenow", "greedy"], 1).events
    events = [{**events[0], "players": players}, *events[1:]]
    r = client.post("/api/analyse", json={"record": events})
    assert r.status_code == 400, r.json()
    assert r.json()["error"] == (
        f"the record does not replay: event 0 (line 1): n_players = {players!r}: the engine "
        f"plays 2 to {MAX_PLAYERS} players"
    )


def test_a_failed_solve_leaves_the_game_playable_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    small = PRESETS["classic"].replace(target=600, end="immediate", name="imm600")
    c = TestClient(create_app([_file(tmp_path, small)]), base_url="http://127.0.0.1")
    why = "solving the game solution of imm600 (2 players) failed (the solver's process ended with status 1)"
    c.app.state.solver._failed[SolveJob("game", small).key] = why
    s = c.post("/api/games", json={"rules": "imm600", "opponents": ["dicenow"], "seed": 8})
    assert s.status_code == 200 and s.json()["feedback"] == {"mode": "off", "unit": None, "note": f"no feedback: {why}"}
    s = c.post(f"/api/games/{s.json()['id']}/act", json={"action": s.json()["legal"][0]["action"]})
    assert s.status_code == 200 and s.json()["feedback"]["mode"] == "off"
    c.app.state.solver.stop()


def test_a_record_whose_ruleset_costs_too_much_is_refused_with_the_cost(client):
    events = play_game(PRESETS["zilch"], ["dicenow", "greedy"], 1).events
    r = client.post("/api/analyse", json={"record": events})
    err = r.json()["error"]
    assert r.status_code == 422 and "'zilch'" in err and "tenk solve game" in err
    assert f"estimates about {solve_minutes(PRESETS['zilch']):.0f} minutes" in err


def test_requests_that_need_a_solve_wait_in_the_queue_and_are_answered_when_it_is_done(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    small = PRESETS["classic"].replace(target=600, end="immediate", name="imm600")
    c = TestClient(create_app([_file(tmp_path, small)]), base_url="http://127.0.0.1")
    body = {"rules": "imm600", "agents": ["optimal", "greedy"], "seed": 5}
    r = c.post("/api/watch", json=body)
    assert r.status_code == 202 and r.json()["pending"][0]["title"] == "the game solution of imm600 (2 players)"
    assert "solve" in r.json()["note"]
    deadline = time.monotonic() + 180  # a hang guard: the solve takes seconds
    while r.status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.5)
        r = c.post("/api/watch", json=body)
    assert r.status_code == 200 and r.json()["summary"][0]["regret"] == 0.0
    c.app.state.solver.stop()


def _wait(cond, what, limit=120.0):
    deadline = time.monotonic() + limit  # hang guards only: nothing here is timed
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_one_solve_at_a_time_and_none_that_nobody_waits_for(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    solver = Solver(idle=1.0, poll=0.05)
    big, other = PRESETS["classic"], PRESETS["farkle_official"]  # each a minute or more: never done here
    try:
        first = solver.want(SolveJob("game", big))
        second = solver.want(SolveJob("game", other))
        assert (first["position"], second["position"], second["state"]) == (0, 1, "queued")
        assert wait_note(second) == (
            "waiting to solve the game solution of farkle_official (2 players): 1 solve ahead (one runs at a time)"
        )
        _wait(lambda: solver.want(SolveJob("game", big))["state"] == "solving", "the first solve never started")
        child = solver._queue[0].proc
        assert child.is_alive() and solver.want(SolveJob("game", other))["state"] == "queued"
        # nobody asks for either any more: the queued one is dropped, the running one ended
        _wait(lambda: not child.is_alive() and not solver._queue, "an unwanted solve went on")
        assert not is_cached(big) and not is_cached(other)
    finally:
        solver.stop()


def test_a_solve_ends_with_the_server_even_when_it_is_killed(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(
        textwrap.dedent("""
        import time
        from tenk_env.rules import PRESETS
        from tenk_env.web.games import Solver, SolveJob
        if __name__ == "__main__":           # the solver's child imports this file again
            s = Solver(idle=3600)
            while s.want(SolveJob("game", PRESETS["classic"]))["state"] != "solving":
                time.sleep(0.05)
            print(s._queue[0].proc.pid, flush=True)
            time.sleep(3600)
    """)
    )
    server = subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TENK_CACHE": str(tmp_path / "cache")},
    )
    try:
        child = int(server.stdout.readline())
        server.kill()  # SIGKILL: no handler, no atexit
        server.wait(60)
        _wait(lambda: not running(child), "the solver's child outlived its killed server")
    finally:
        server.kill()


def test_programs_as_agents_need_the_flag(tmp_path):
    app = create_app(solve_in_background=False)
    client = TestClient(app, base_url="http://127.0.0.1")
    r = client.post("/api/watch", json={"agents": ["cmd:ls", "dicenow"]})
    assert r.status_code == 403 and "--allow-cmd" in r.json()["error"]
    # a model sends requests to the address its spec names: the same opt-in
    r = client.post("/api/watch", json={"agents": ["llm:m,base_url=http://10.0.0.1/v1", "dicenow"]})
    assert r.status_code == 403 and "--allow-cmd" in r.json()["error"] and "(llm:)" in r.json()["error"]


def test_a_ruleset_the_solver_does_not_cover_plays_with_turn_advice_and_says_why(tmp_path):
    piggy = PRESETS["classic"].replace(target=1000, piggyback=True, name="piggy1000")
    app = create_app([_file(tmp_path, piggy)], solve_in_background=False)
    c = TestClient(app, base_url="http://127.0.0.1")
    s = c.post("/api/games", json={"rules": "piggy1000", "opponents": ["dicenow"], "seed": 3}).json()
    fb = s["feedback"]
    assert fb["mode"] == "points" and fb["unit"] == "points"
    assert "no exact feedback" in fb["note"] and "piggyback" in fb["note"]
    assert all(v["end"] is None or v["end"] == v["points"] for v in s["values"])  # banking now: the keep's points
    w = c.post("/api/watch", json={"rules": "piggy1000", "agents": ["maxscore", "dicenow"], "seed": 2}).json()
    assert w["chart"] == [] and w["summary"][0]["regret"] == 0.0 and w["summary"][0]["implied_win"] is None


def test_three_players_use_the_solved_best_response(client):
    br = best_response_n(FR2, ["maxscore", "hold:300"])
    s = client.post(
        "/api/games", json={"rules": "fr500", "players": 3, "seat": 1, "opponents": ["maxscore", "hold:300"], "seed": 4}
    ).json()
    assert s["feedback"]["mode"] == "best_response" and "br:maxscore,hold:300" in s["feedback"]["note"]
    game = replay(s["events"])
    rows = BestResponseAgent("maxscore,hold:300").values(game)
    assert s["values"] == [{"keep": list(k.dice), "points": k.points, "roll": rv, "end": ev} for k, rv, ev in rows]
    while s["phase"] != "over":
        s = client.post(f"/api/games/{s['id']}/act", json={"action": s["legal"][-1]["action"]}).json()
    assert s["summary"]["start_value"] == pytest.approx(br.p_seat[0])
    # seated elsewhere, against other bots, nothing is solved: turn-level advice, said so
    s = client.post(
        "/api/games", json={"rules": "fr500", "players": 3, "seat": 2, "opponents": ["dicenow", "hold:300"], "seed": 4}
    ).json()
    assert s["feedback"]["mode"] == "points" and "not solved" in s["feedback"]["note"]


def test_watch_scores_both_seats_and_perfect_play_gives_nothing_away(client):
    w = client.post("/api/watch", json={"rules": "imm1000", "agents": ["optimal", "greedy"], "seed": 5}).json()
    assert w["names"] == ["P1 optimal", "P2 greedy"] and w["seed"] == 5
    assert w["summary"][0]["regret"] == 0.0
    game = play_game(IMM, ["optimal", "greedy"], 5)
    assert w["events"] == game.events
    assert len(w["chart"]) == len(w["decisions"]) == sum(e["type"] == "keep" for e in game.events)
    assert {d["player"] for d in w["decisions"]} == {0, 1}


def test_records_that_do_not_load_are_refused_by_line(client):
    good = "\n".join(json.dumps(e) for e in play_game(IMM, ["dicenow", "greedy"], 1).events)
    for record, words in [
        ('{"type": "start"}\nnot json', "record line 2: not a JSON line"),
        ('{"type": "bogus"}', "unknown event type 'bogus'"),
        (good.replace('"dice": [', '"dice": [9, ', 1), "does not replay"),
        ("", "a game record starts with a 'start' event"),
        (42, "record"),
    ]:
        r = client.post("/api/analyse", json={"record": record})
        assert 400 <= r.status_code < 500 and words in r.json()["error"], (record, r.json())
    # a record cut at a decision (as `tenk analyze` writes its costliest mistakes) analyses up to it
    cut = good.splitlines()
    last_roll = max(
        i for i, line in enumerate(cut) if '"type": "roll"' in line and i + 1 < len(cut) and '"keep"' in cut[i + 1]
    )
    a = client.post("/api/analyse", json={"record": "\n".join(cut[: last_roll + 1])}).json()
    assert a["winners"] is None and all(d["event"] < last_roll for d in a["decisions"])


def test_games_in_memory_are_bounded_and_expire():
    store = GameStore(limit=2, ttl=60)

    class G:
        touched = 0.0

    keys = [store.add(G()) for _ in range(3)]
    assert len(store) == 2
    with pytest.raises(WebError, match="at most 2 are kept") as e:
        store.get(keys[0])
    assert e.value.status == 404
    store.get(keys[2]).touched -= 120  # an hour idle, say
    with pytest.raises(WebError):
        store.get(keys[2])
    assert store.get(keys[1])


def test_other_hosts_are_refused(client):
    app = create_app(solve_in_background=False)
    assert TestClient(app, base_url="http://attacker.example").get("/api/meta").status_code == 400
    assert TestClient(app, base_url="http://localhost").get("/api/meta").status_code == 200


def test_the_page_and_meta_are_served(client):
    meta = client.get("/api/meta").json()
    assert {"imm1000", "fr500"} == {f["name"] for f in meta["files"]} and meta["default_rules"] == "imm1000"
    assert {p["name"] for p in meta["presets"]} == set(PRESETS)
    page = client.get("/")
    assert page.status_code == 200 and "<html" in page.text.lower()


def test_serve_refuses_to_bind_beyond_this_machine(capsys):
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    out = capsys.readouterr()
    err = " ".join((out.out + out.err).split())
    assert "--host 0.0.0.0" in err and "--public" in err


def test_ruleset_files_and_records_given_to_serve_are_checked(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: classic\ntarget: -5\n")
    with pytest.raises(Exception, match="target"):
        create_app([bad])
    clash = tmp_path / "c.yaml"
    clash.write_text("base: classic\nname: classic\n")
    with pytest.raises(Exception, match="another `name:`"):
        create_app([clash])
    rec = tmp_path / "r.jsonl"
    rec.write_text('{"type": "start"}\n')
    with pytest.raises(Exception, match="r.jsonl"):
        create_app(records=[rec])
    good = tmp_path / "g.jsonl"
    good.write_text("".join(json.dumps(e) + "\n" for e in play_game(IMM, ["dicenow", "greedy"], 2).events))
    c = TestClient(create_app(records=[good], solve_in_background=False), base_url="http://127.0.0.1")
    assert c.get("/api/records/1").json()["record"] == good.read_text()
    assert c.get("/api/records/2").status_code == 404


def test_an_unsolved_ruleset_is_solved_aside_and_scored_once_ready(tmp_path, monkeypatch):
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    small = PRESETS["classic"].replace(target=600, end="immediate", name="imm600")
    c = TestClient(create_app([_file(tmp_path, small)]), base_url="http://127.0.0.1")
    s = c.post("/api/games", json={"rules": "imm600", "opponents": ["dicenow"], "seed": 8}).json()
    assert s["feedback"]["mode"] == "solving" and s["values"] is None
    s = c.post(f"/api/games/{s['id']}/act", json={"action": s["legal"][0]["action"]}).json()
    deadline = time.monotonic() + 120
    while s["feedback"]["mode"] == "solving" and time.monotonic() < deadline:
        time.sleep(0.5)
        s = c.get(f"/api/games/{s['id']}").json()
    assert s["feedback"]["mode"] == "exact"
    assert len(s["decisions"]) >= 1 and s["decisions"][0]["n"] == 0  # the decision made while solving
    c.app.state.solver.stop()
    assert np.isfinite(s["decisions"][0]["regret"])


def test_a_cmd_agent_ends_with_its_watched_game_and_with_its_dropped_game(tmp_path):
    pids = tmp_path / "pids"
    agent = tmp_path / "agent.py"
    agent.write_text(
        f"import os, runpy\nopen({str(pids)!r}, 'a').write(f'{{os.getpid()}}\\n')\nrunpy.run_path({str(EXAMPLE)!r})\n"
    )
    c = TestClient(
        create_app([_file(tmp_path, IMM)], solve_in_background=False, allow_cmd=True, max_games=1),
        base_url="http://127.0.0.1",
    )
    spec = f"cmd:{sys.executable} {agent}"
    w = c.post("/api/watch", json={"rules": "imm1000", "agents": [spec, "dicenow"], "seed": 1})
    assert w.status_code == 200, w.json()
    watched = [int(x) for x in pids.read_text().split()]
    assert len(watched) == 1 and not running(watched[0])
    # a game the page plays keeps its agent's program until the game is dropped for a newer one
    assert c.post("/api/games", json={"rules": "imm1000", "opponents": [spec], "seat": 2, "seed": 1}).status_code == 200
    played = int(pids.read_text().split()[-1])
    assert running(played)
    assert c.post("/api/games", json={"rules": "imm1000", "opponents": ["dicenow"], "seed": 1}).status_code == 200
    assert not running(played)
