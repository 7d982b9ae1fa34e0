"""Game records: JSON lines that replay exactly and print as a readable log."""

import json
import re

import numpy as np
import pytest

from tenk_env.game import Game, Phase
from tenk_env.records import ReplayError, format_log, load_jsonl, replay, save_jsonl
from tenk_env.rules import PRESETS


def random_game(rules, n_players, seed):
    rng = np.random.default_rng(seed)
    g = Game(rules, n_players)
    while not g.over:
        if g.phase == Phase.PIGGYBACK:
            g.piggyback(bool(rng.integers(2)))
        elif g.dice_to_roll:
            g.roll(rng.integers(1, 7, g.dice_to_roll))
        else:
            moves = g.legal_moves()
            g.act(*moves[int(rng.integers(len(moves)))])
    return g


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_replays_exactly(name, tmp_path):
    rules = PRESETS[name].replace(piggyback=True) if name == "scribd_farkle" else PRESETS[name]
    g = random_game(rules, 3, seed=7)
    path = tmp_path / "game.jsonl"
    save_jsonl(g.events, path)
    events = load_jsonl(path)
    assert events == g.events
    again = replay(events)
    assert again.scores == g.scores and again.winners == g.winners and again.events == g.events


def test_tampered_record_is_refused(tmp_path):
    g = random_game(PRESETS["classic"], 2, seed=1)
    events = [dict(e) for e in g.events]
    i = next(i for i, e in enumerate(events) if e["type"] == "bank")
    events[i]["points"] += 50
    with pytest.raises(ReplayError, match=f"event {i} differs"):
        replay(events)
    bad = [dict(events[0], hash="0000000000000000")] + events[1:]
    with pytest.raises(ReplayError, match="hashes to 915b7862bac40506, not the recorded 0000000000000000"):
        replay(bad)
    with pytest.raises(ReplayError, match="starts with a 'start' event"):
        replay(events[1:])
    p = tmp_path / "broken.jsonl"
    p.write_text(json.dumps(events[0]) + "\n{not json\n")
    with pytest.raises(ReplayError, match="broken.jsonl:2: not a JSON line"):
        load_jsonl(p)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_jsonl(tmp_path / "nope.jsonl")


def test_readable_log():
    g = Game("house_1000")
    g.roll([1, 1, 2, 4, 5, 6])
    g.act([1, 1, 5], end_turn=False)
    g.roll([6, 6, 6])
    g.act([6, 6, 6], end_turn=False)
    g.roll([2, 3, 3, 4, 6, 6])
    assert format_log(g.events, names=["Ann", "Bob"]).splitlines() == [
        "house_1000 (7016693eb782243a), 2 players",
        "-- turn 1: Ann (scores 0, 0)",
        "Ann rolls 1 1 2 4 5 6",
        "Ann keeps 1 1 5 for 250 (turn 250) and rolls on",
        "Ann rolls 6 6 6",
        "Ann keeps 6 6 6 for 600 (turn 850, hot dice) and rolls on",
        "Ann rolls 2 3 3 4 6 6",
        "Ann busts, losing 850",
        "-- turn 2: Bob (scores 0, 0)",
    ]


def test_cli_replay(tmp_path, capsys):
    from tenk_env.cli.main import main

    g = random_game(PRESETS["classic"], 2, seed=3)
    save_jsonl(g.events, tmp_path / "g.jsonl")
    assert main(["replay", str(tmp_path / "g.jsonl"), "--names", "Ann,Bob"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "classic (915b7862bac40506), 2 players"
    assert "-- turn 1: Ann (scores 0, 0)" in out and out.rstrip().splitlines()[-1].startswith("game over: ")
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().out


def test_record_cut_at_a_line_boundary_is_reported_unfinished(tmp_path, capsys):
    from tenk_env.cli.main import main

    g = random_game(PRESETS["classic"], 2, seed=3)
    p = tmp_path / "cut.jsonl"
    save_jsonl(g.events[:40], p)
    assert not replay(load_jsonl(p)).over  # the part that is there replays
    assert main(["replay", str(p)]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"error: {p}: the record ends before the game does (turn 6, P2 to choose a keep from 2 2 2 3 4 4; "
        "scores 1,000, 0); the file was cut short or the game abandoned" in out
    )


def test_record_cut_right_after_a_bust_is_reported_unfinished(tmp_path, capsys):
    """A bust is followed by outcomes of the same input (the next turn's line): a record cut
    between them replays as far as it goes and is reported unfinished, not as not replaying."""
    from tenk_env.cli.main import main

    g = random_game(PRESETS["classic"], 2, seed=3)
    i = next(k for k, e in enumerate(g.events) if e["type"] == "bust")
    assert g.events[i + 1]["type"] == "turn"
    p = tmp_path / "cut.jsonl"
    save_jsonl(g.events[: i + 1], p)
    game = replay(load_jsonl(p))
    assert not game.over and game.events[: i + 1] == g.events[: i + 1]
    assert main(["replay", str(p)]) == 1
    lines = capsys.readouterr().out.splitlines()
    bust = g.events[i]
    assert lines[-2] == f"P{bust['player'] + 1} busts, losing {bust['lost']:,}"  # the record's last event
    assert lines[-1].startswith(f"error: {p}: the record ends before the game does (turn ")
    # a record with more events than its inputs give is still refused
    save_jsonl(g.events[: i + 1] + [g.events[i]], p)
    with pytest.raises(ReplayError, match=f"event {i + 1} differs"):
        replay(load_jsonl(p))


@pytest.mark.parametrize(
    "line,message",
    [
        ("[1, 2]", "g.jsonl:4: expected an event (a JSON object with a 'type'), got a JSON list"),
        ('"roll"', "g.jsonl:4: expected an event (a JSON object with a 'type'), got a JSON string"),
        ('{"player": 0, "dice": [1]}', "g.jsonl:4: the event has no 'type'"),
        ('{"type": "rol", "player": 0}', "g.jsonl:4: unknown event type 'rol' (did you mean 'roll'?)"),
        (
            '{"type": "keep", "player": 0, "dice": [1], "points": 100, "turn_total": 100}',
            "g.jsonl:4: the 'keep' event lacks 'end_turn', 'hot_dice'",
        ),
        ("", "g.jsonl:4: blank line inside the record"),
    ],
    ids=["list", "string", "no-type", "unknown-type", "missing-keys", "blank"],
)
def test_malformed_line_names_the_line_and_the_problem(line, message, tmp_path, capsys):
    from tenk_env.cli.main import main

    g = random_game(PRESETS["classic"], 2, seed=3)
    lines = [json.dumps(e) for e in g.events]
    p = tmp_path / "g.jsonl"
    p.write_text("\n".join(lines[:3] + [line] + lines[3:]) + "\n")
    with pytest.raises(ReplayError) as e:
        load_jsonl(p)
    assert message in str(e.value)
    assert main(["replay", str(p)]) == 2
    assert message in " ".join(capsys.readouterr().out.split())


def test_events_that_do_not_replay_name_the_event_and_line():
    g = random_game(PRESETS["classic"], 2, seed=3)
    events = [dict(e) for e in g.events]
    with pytest.raises(ReplayError, match=r"^event 3 \(line 4, roll\) does not replay: no roll is due"):
        replay(events[:3] + [{"type": "roll", "player": 0, "dice": [1, 2, 3]}] + events[3:])
    with pytest.raises(ReplayError, match=r"^event 2 \(line 3\): the 'roll' event lacks 'dice'"):
        replay(events[:2] + [{"type": "roll", "player": 0}] + events[3:])
    with pytest.raises(ReplayError, match=r"^event 1 \(line 2\): expected an event .*got a JSON list"):
        replay(events[:1] + [[1, 2]] + events[1:])
    # a player count the engine does not play is the record's fault, named as such
    for players in (1, 9, "2", None, True):
        with pytest.raises(ReplayError, match=rf"^event 0 \(line 1\): n_players = {re.escape(repr(players))}: "):
            replay([{**events[0], "players": players}] + events[1:])


def test_a_directory_is_not_a_record(tmp_path):
    with pytest.raises(ReplayError, match="is a directory; give the .jsonl file of one game"):
        load_jsonl(tmp_path)
