"""``tenk mcp``: the MCP server, driven by the official SDK's own client, in-process and over
stdio (`tenk mcp` as a client starts it). A whole game is played through the tools, each move
the one its number names, then graded: its regrets are the exact ones."""

from __future__ import annotations

import json
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tenk_env.policies.optimal import OptimalAgent
from tenk_env.records import replay
from tenk_env.rules import PRESETS
from tenk_env.solve.regret import regret_of
from tenk_env.web.mcp import create_mcp_server

IMM = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")


def _data(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def _error(result) -> str:
    assert result.is_error
    return result.content[0].text


async def _play_a_game(client, rules_file) -> tuple[dict, list[tuple[list[str], int]]]:
    """A whole game as the client's seat, always the last listed move; returns the last
    position and (the moves offered, the one played) at each decision."""
    pos = _data(await client.call_tool("new_game", {"opponents": ["hold:300"], "rules": str(rules_file), "seed": 5}))
    gid, made = pos["game_id"], []
    while not pos["over"]:
        labels = [m["label"] for m in pos["moves"]]
        assert pos["text"].count("\n") > len(labels) and f"{len(labels)}. " in pos["text"]
        made.append((labels, len(labels)))
        pos = _data(await client.call_tool("play", {"game_id": gid, "move": len(labels)}))
    return pos, made


def test_a_whole_game_through_the_sdk_client(tmp_path):
    rules_file = tmp_path / "imm.yaml"
    IMM.save(rules_file)

    async def main():
        async with Client(create_mcp_server()) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["analysis", "new_game", "play", "position", "rules"]
            pos, made = await _play_a_game(client, rules_file)
            gid = pos["game_id"]
            assert pos["winners"] and "The game is over" in pos["text"] and made
            again = _data(await client.call_tool("position", {"game_id": gid}))
            assert again == pos
            text = (await client.call_tool("rules", {"game_id": gid})).content[0].text
            assert "first player to bank a score of 1,000 or more wins at once" in text
            graded = _data(await client.call_tool("analysis", {"game_id": gid}))
            assert graded["over"] and len(graded["decisions"]) == len(made)
            assert graded["total_regret"] == pytest.approx(sum(d["regret"] for d in graded["decisions"]))
            # refusals name the problem, and leave the game as it was
            assert "the game is over" in _error(await client.call_tool("play", {"game_id": gid, "move": 1}))
            assert "no game 'nope'" in _error(await client.call_tool("position", {"game_id": "nope"}))
            bad = await client.call_tool("new_game", {"opponents": ["nosuchbot"]})
            assert "nosuchbot" in _error(bad)
            bad = await client.call_tool("new_game", {"opponents": ["dicenow"], "rules": "clasic"})
            assert "did you mean 'classic'" in _error(bad)
            bad = await client.call_tool("new_game", {"opponents": ["dicenow"], "seat": 3})
            assert "choose a seat from 1 to 2" in _error(bad)
            bad = await client.call_tool("new_game", {"opponents": ["cmd:ls"]})
            assert "--allow-cmd" in _error(bad)
            fresh = _data(await client.call_tool("new_game", {"opponents": ["dicenow"], "rules": str(rules_file)}))
            n = len(fresh["moves"])
            assert f"choose a number from 1 to {n}" in _error(
                await client.call_tool("play", {"game_id": fresh["game_id"], "move": n + 1})
            )
            assert _data(await client.call_tool("position", {"game_id": fresh["game_id"]})) == fresh
            return graded

    graded = anyio.run(main)
    assert graded["unit"] == "win"
    # the grades are the solver's: each decision's regret, computed again from the record
    events = [json.loads(line) for line in graded["record"].splitlines()]
    opt, regrets = OptimalAgent(), []
    for i, e in enumerate(events):
        if e["type"] == "keep" and e["player"] == 0:
            g = replay(events[:i])
            keep = next(k for k in g.info.keeps if list(k.dice) == e["dice"])
            regrets.append(regret_of(opt.tables(g), g, keep, e["end_turn"]).regret)
    assert [d["regret"] for d in graded["decisions"]] == regrets


def test_over_stdio_as_a_client_starts_it(tmp_path):
    rules_file = tmp_path / "imm.yaml"
    IMM.save(rules_file)
    params = StdioServerParameters(command=sys.executable, args=["-m", "tenk_env.cli.main", "mcp"])

    async def main():
        async with Client(params) as client:
            pos, made = await _play_a_game(client, rules_file)
            graded = _data(await client.call_tool("analysis", {"game_id": pos["game_id"]}))
            return pos, made, graded

    pos, made, graded = anyio.run(main)
    assert pos["over"] and len(graded["decisions"]) == len(made)
