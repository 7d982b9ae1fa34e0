"""Game records: the events of a :class:`~tenk_env.game.Game` as JSON lines.

A record starts with a ``start`` event (the ruleset, its hash and the player count).
Inputs are ``order_roll``, ``roll``, ``keep`` and ``piggyback`` events; everything else
(``turn``, ``bust``, ``bank``, ``penalty``, ``zilch``, ``stop``, ``overshoot``,
``instant_win``, ``lose_all``, ``final_round``, ``game_over``) is an outcome. :func:`replay`
feeds the inputs to a fresh game and checks that every outcome comes out the same.

A ``keep`` or ``piggyback`` event may also hold ``said``: what the agent that made the
decision said of it (an ``llm:`` agent's answers, :meth:`tenk_env.policies.llm.LLMAgent.explain`).
It is a note, not part of the game: the replay neither needs nor checks it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tenk_env.game import Game, IllegalMoveError
from tenk_env.io import atomic_write_text
from tenk_env.rules import Ruleset, did_you_mean

__all__ = [
    "dumps_jsonl",
    "save_jsonl",
    "load_jsonl",
    "replay",
    "format_event",
    "format_log",
    "ReplayError",
    "EVENT_KEYS",
    "event_problem",
]


class ReplayError(ValueError):
    """A record that does not replay: the first event that differs is named."""


def dumps_jsonl(events: Iterable[dict[str, Any]]) -> str:
    """A record's text: one compact JSON event per line."""
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)


def save_jsonl(events: Iterable[dict[str, Any]], path: str | Path) -> None:
    atomic_write_text(Path(path), dumps_jsonl(events))


#: the keys of every event type, as :class:`~tenk_env.game.Game` writes them: a line that lacks
#: one is refused by name instead of failing somewhere inside the replay
EVENT_KEYS: dict[str, tuple[str, ...]] = {
    "start": ("rules", "hash", "players"),
    "order_roll": ("players", "dice"),
    "turn": ("player", "turn", "scores"),
    "roll": ("player", "dice"),
    "keep": ("player", "dice", "points", "turn_total", "end_turn", "hot_dice"),
    "piggyback": ("player", "take"),
    "bank": ("player", "points", "score"),
    "bust": ("player", "lost"),
    "penalty": ("player", "points", "score"),
    "zilch": ("player", "points", "turn_total"),
    "stop": ("player", "lost"),
    "overshoot": ("player", "lost", "to"),
    "instant_win": ("player",),
    "lose_all": ("player", "lost", "turn_total"),
    "final_round": ("player", "score"),
    "game_over": ("winners", "scores"),
}


def event_problem(e: Any) -> str | None:
    """What is wrong with the shape of one event (None if nothing): not an object, an unknown
    type, missing keys. Values are checked by the replay."""
    if not isinstance(e, dict):
        return f"expected an event (a JSON object with a 'type'), got a JSON {_json_kind(e)}"
    kind = e.get("type")
    if kind not in EVENT_KEYS:
        if "type" not in e:
            return "the event has no 'type'"
        return f"unknown event type {kind!r}{did_you_mean(str(kind), EVENT_KEYS)}"
    missing = [k for k in EVENT_KEYS[kind] if k not in e]
    if missing:
        return f"the {kind!r} event lacks {', '.join(repr(k) for k in missing)}"
    return None


def _json_kind(v: Any) -> str:
    return {list: "list", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}.get(
        type(v), type(v).__name__
    )


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The events of a record; a line that is not an event raises :class:`ReplayError` naming
    the file, the line and what is wrong."""
    path = Path(path)
    if path.is_dir():
        raise ReplayError(f"game record {str(path)!r} is a directory; give the .jsonl file of one game")
    if not path.is_file():
        raise FileNotFoundError(f"game record {str(path)!r} does not exist")
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise ReplayError(f"game record {str(path)!r} is not a text file (JSON lines)") from None
    out = []
    # One event per line, none blank (trailing ones aside): event i is line i + 1, which is
    # how replay() names the line of an event that does not replay.
    for i, line in enumerate(text.rstrip().splitlines(), 1):
        if not line.strip():
            raise ReplayError(f"{path}:{i}: blank line inside the record; a record holds one event per line")
        try:
            e = json.loads(line)
        except json.JSONDecodeError as err:
            raise ReplayError(f"{path}:{i}: not a JSON line ({err})") from None
        problem = event_problem(e)
        if problem:
            raise ReplayError(f"{path}:{i}: {problem}")
        out.append(e)
    return out


def replay(events: list[dict[str, Any]]) -> Game:
    """Rebuild a game from its record, checking every outcome. Returns the replayed game,
    which is not over when the record ends early (a file cut short, an abandoned game); its
    events then go on past the record's where the record stops amid an input's outcomes."""
    for i, e in enumerate(events):
        problem = event_problem(e)
        if problem:
            raise ReplayError(f"event {i} (line {i + 1}): {problem}")
    if not events or events[0].get("type") != "start":
        raise ReplayError("a game record starts with a 'start' event holding the ruleset")
    head = events[0]
    rules = Ruleset.from_dict(head["rules"], source="game record")
    if rules.hash != head.get("hash"):
        raise ReplayError(f"the record's ruleset hashes to {rules.hash}, not the recorded {head.get('hash')}")
    try:
        game = Game(rules, head["players"])
    except ValueError as err:  # a player count the engine does not play
        raise ReplayError(f"event 0 (line 1): {err}") from None
    for i, e in enumerate(events[1:], 1):
        kind = e.get("type")
        try:
            if kind in ("order_roll", "roll"):
                game.roll(e["dice"])
            elif kind == "keep":
                game.act(e["dice"], e["end_turn"])
            elif kind == "piggyback":
                game.piggyback(e["take"])
        except IllegalMoveError as err:
            raise ReplayError(f"event {i} (line {i + 1}, {kind}) does not replay: {err}") from None
    # what agents said of their decisions is a note beside the game, not an outcome
    events = [{k: v for k, v in e.items() if k != "said"} if "said" in e else e for e in events]
    if game.events != events:
        for i, (a, b) in enumerate(zip(game.events, events)):
            if a != b:
                raise ReplayError(f"event {i} differs (line {i + 1}): recorded {b}, replayed {a}")
        if len(game.events) < len(events):
            raise ReplayError(f"the record has {len(events)} events, the replay {len(game.events)}")
        # The record stops amid the outcomes of its last input (a file cut after a bust, before
        # the next turn's line): every event it holds replayed, it just ends early.
    return game


def _dice(d: list[int]) -> str:
    return " ".join(str(x) for x in d)


def format_event(e: dict[str, Any], names: list[str] | None = None) -> str | None:
    """One readable line for an event (None for events that print nothing)."""

    def who(p: int) -> str:
        return names[p] if names else f"P{p + 1}"

    k = e["type"]
    if k == "start":
        return f"{e['rules']['name']} ({e['hash']}), {e['players']} players"
    if k == "order_roll":
        return "order roll: " + ", ".join(f"{who(p)} {d}" for p, d in zip(e["players"], e["dice"]))
    if k == "turn":
        return f"-- turn {e['turn']}: {who(e['player'])} (scores {', '.join(f'{s:,}' for s in e['scores'])})"
    if k == "roll":
        return f"{who(e['player'])} rolls {_dice(e['dice'])}"
    if k == "keep":
        then = "banks" if e["end_turn"] else "rolls on"
        hot = ", hot dice" if e["hot_dice"] else ""
        return f"{who(e['player'])} keeps {_dice(e['dice'])} for {e['points']:,} (turn {e['turn_total']:,}{hot}) and {then}"
    if k == "bank":
        return f"{who(e['player'])} banks {e['points']:,}: score {e['score']:,}"
    if k == "bust":
        return f"{who(e['player'])} busts, losing {e['lost']:,}"
    if k == "penalty":
        return f"{who(e['player'])} pays the bust penalty {e['points']:,}: score {e['score']:,}"
    if k == "zilch":
        return f"{who(e['player'])} scores nothing on all dice: pay-out {e['points']:,} (turn {e['turn_total']:,}), must roll again"
    if k == "stop":
        return f"{who(e['player'])} ends the turn unable to bank, losing {e['lost']:,}"
    if k == "overshoot":
        to = f" to {who(e['to'])}" if e.get("to") is not None else ""
        return f"{who(e['player'])} overshoots the target: {e['lost']:,} forfeited{to}"
    if k == "instant_win":
        return f"{who(e['player'])} rolls six of a kind and wins at once"
    if k == "lose_all":
        return f"{who(e['player'])} rolls four or more 2s and loses all {e['lost']:,} banked points"
    if k == "piggyback":
        return f"{who(e['player'])} {'takes over the dice left' if e['take'] else 'starts fresh'}"
    if k == "final_round":
        return f"{who(e['player'])} reached {e['score']:,}: final round"
    if k == "game_over":
        w = " and ".join(who(p) for p in e["winners"])
        return f"game over: {w} win{'s' if len(e['winners']) == 1 else ''} (scores {', '.join(f'{s:,}' for s in e['scores'])})"
    return None


def format_log(events: Iterable[dict[str, Any]], names: list[str] | None = None) -> str:
    return "\n".join(line for e in events if (line := format_event(e, names)) is not None)
