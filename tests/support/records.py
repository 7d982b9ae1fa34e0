"""Game records scored independently of the code under test: each keep replayed and scored
from the game solution's tables, as ``tenk analyze`` scores it."""

from __future__ import annotations

from typing import Any

from tenk_env.policies.optimal import OptimalAgent
from tenk_env.records import replay
from tenk_env.solve.regret import MoveRegret, regret_of


def exact_regrets(events: list[dict[str, Any]]) -> list[tuple[int, MoveRegret]]:
    """(player, regret) for every keep of a 2-player record, in order."""
    game, opt, out = replay(events[:1]), OptimalAgent(), []
    for e in events[1:]:
        if e["type"] == "roll":
            game.roll(e["dice"])
        elif e["type"] == "keep":
            keep = next(k for k in game.info.keeps if sorted(k.dice) == sorted(e["dice"]))
            out.append((e["player"], regret_of(opt.tables(game), game, keep, e["end_turn"])))
            game.act(keep, e["end_turn"])
    return out
