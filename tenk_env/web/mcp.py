"""``tenk mcp``: tenk as an MCP server, so that any agent that speaks the Model Context
Protocol (a chat assistant, a coding agent, an evaluation harness) can play a game against
tenk's agents and have it graded move by move.

Built on the official Python SDK (:class:`mcp.server.mcpserver.MCPServer`) and served over
stdio: an MCP client starts ``tenk mcp`` itself (no port is opened). The games are the browser
app's (:class:`tenk_env.web.games.PlayGame`), kept in memory (:class:`~tenk_env.web.games.GameStore`).

Tools:

* ``new_game(opponents, rules="classic", seat=1, seed=None)``: a game against the agents
  ``opponents`` (specs in seat order, the client's seat left out), the client in ``seat``
  (1-based); the agents before it play their turns. Returns the position (below).
* ``position(game_id)``: the position, in the words of the ``llm:`` agent's prompt
  (:mod:`tenk_env.policies.prompt`): the scores, the turn, the roll, and the legal moves
  numbered from 1; or the result when the game is over.
* ``play(game_id, move)``: plays the legal move numbered ``move``; the agents answer until the
  client's next decision or the end. Returns the new position.
* ``rules(game_id)``: the game's rules in words (the prompt's).
* ``analysis(game_id)``: each of the client's decisions with its exact regret (the win
  probability it gave away against perfect play; at 2 players where the solver covers the
  ruleset, turn-level advice otherwise), the best move, and the total; and the game record
  (JSON lines, :mod:`tenk_env.records`), which ``tenk replay`` and ``tenk serve`` read.

A position is ``{"game_id", "over", "text", "moves": [...], "scores", "winners"}``: ``text``
holds the position and the numbered moves in words; ``moves`` the same moves as data
(``{"move": n, "keep": [...], "points": p, "end": bool, "label": ...}``). Every refusal (an
unknown game, a move that is not on the list, an agent that cannot play the ruleset) is a tool
error naming the problem and the fix; the game is left as it was. ``cmd:`` and ``llm:``
opponents are seated only with ``allow_cmd`` (``tenk mcp --allow-cmd``), as in ``tenk serve``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from tenk_env.game import Phase
from tenk_env.obs import PIGGYBACK_TAKE, action_table
from tenk_env.policies.prompt import moves_text, position_text, rules_text
from tenk_env.rules import RulesetError, load_ruleset
from tenk_env.web.games import GameStore, PlayGame, WebError

__all__ = ["create_mcp_server"]

#: games kept at once, and seconds a game is kept after its last call
MAX_GAMES = 16
TTL = 3600.0


def _position(g: PlayGame, game_id: str) -> dict[str, Any]:
    game = g.game
    out: dict[str, Any] = {"game_id": game_id, "over": game.over, "scores": list(game.scores)}
    if game.over:
        won = [p + 1 for p in game.winners]
        you = g.seat in game.winners
        out["winners"] = won
        out["text"] = (
            "The game is over. Final scores: "
            + ", ".join(f"player {p + 1}{' (you)' if p == g.seat else ''} {s:,}" for p, s in enumerate(game.scores))
            + f". {'You won' if you else 'You lost'}"
            + (" (shared)" if you and len(won) > 1 else "")
            + ". Call analysis to see what each of your decisions gave away."
        )
        out["moves"] = []
        return out
    moves = action_table(game)
    out["winners"] = None
    out["text"] = (
        position_text(game)
        + "\n\nLEGAL MOVES\n"
        + moves_text(game, moves)
        + "\n\nCall play with the number of your move."
    )
    out["moves"] = [
        {"move": i, "keep": m["keep"], "points": m["points"], "end": m["end"], "label": m["label"]}
        for i, m in enumerate(moves, 1)
    ]
    return out


def create_mcp_server(*, allow_cmd: bool = False, max_games: int = MAX_GAMES, ttl: float = TTL) -> MCPServer:
    """The MCP server and its tools (module docstring); ``allow_cmd``: seat ``cmd:`` and
    ``llm:`` opponents."""
    store = GameStore(max_games, ttl)
    server = MCPServer(
        "tenk",
        instructions=(
            "Play Ten Thousand (Farkle), the dice game, against tenk's agents: new_game starts one, "
            "play makes your move by its number, analysis grades every decision you made against "
            "perfect play."
        ),
    )

    def get(game_id: str) -> PlayGame:
        try:
            return store.get(game_id)
        except WebError as e:
            raise ToolError(str(e)) from None

    @server.tool()
    def new_game(opponents: list[str], rules: str = "classic", seat: int = 1, seed: int | None = None) -> dict:
        """Start a game against agents (specs such as "dicenow", "optimal", "hold:300",
        "zoo:NAME"), one per other seat, in seat order. rules: a preset name (classic, farkle_official,
        zilch, ...). seat: yours, from 1. seed: the dice (random when left out). Returns the position."""
        try:
            ruleset = load_ruleset(rules)
        except (RulesetError, FileNotFoundError, ValueError) as e:
            raise ToolError(f"rules {rules!r}: {e}") from None
        n = len(opponents) + 1
        if not 1 <= seat <= n:
            raise ToolError(f"seat {seat}: choose a seat from 1 to {n} (one more than the opponents)")
        try:
            g = PlayGame(ruleset, n, seat - 1, opponents, seed=seed, allow_cmd=allow_cmd)
        except WebError as e:
            raise ToolError(str(e)) from None
        gid = store.add(g)
        with g.lock:
            return _position(g, gid)

    @server.tool()
    def position(game_id: str) -> dict:
        """The position of a game: scores, the turn so far, your roll and your legal moves,
        numbered; or the result once it is over."""
        g = get(game_id)
        with g.lock:
            return _position(g, game_id)

    @server.tool()
    def play(game_id: str, move: int) -> dict:
        """Make the legal move numbered `move` (from the position's list); the other players
        then play until your next decision. Returns the new position."""
        g = get(game_id)
        with g.lock:
            game = g.game
            if game.over:
                raise ToolError("the game is over: call analysis to see your decisions graded, or new_game")
            moves = action_table(game)
            if not 1 <= move <= len(moves):
                raise ToolError(f"move {move} is not on the list: choose a number from 1 to {len(moves)}")
            a = moves[move - 1]["action"]
            try:
                if game.phase is Phase.PIGGYBACK:
                    g.act(piggyback=a == PIGGYBACK_TAKE)
                else:
                    g.act(action=a)
            except WebError as e:
                raise ToolError(str(e)) from None
            return _position(g, game_id)

    @server.tool()
    def rules(game_id: str) -> str:
        """The rules of a game, in words: scoring, banking, the entry threshold, the end."""
        g = get(game_id)
        return rules_text(g.rules, g.n)

    @server.tool()
    def analysis(game_id: str) -> dict:
        """Every decision you made in a game, graded: its regret (the win probability it gave
        away against perfect play, exact at 2 players on the rulesets the solver covers), the
        move made and the best one, and the total."""
        g = get(game_id)
        with g.lock:
            st = g.state()
            record = g.record()
        fb = st["feedback"]
        decisions = [
            {
                "turn": d["turn"],
                "made": d["move"],
                "best": d["best"],
                "regret": d.get("regret"),
            }
            for d in st["decisions"]
        ]
        return {
            "game_id": game_id,
            "over": st["phase"] == "over",
            "feedback": fb.get("note") or fb.get("mode"),
            "unit": fb.get("unit"),
            "decisions": decisions,
            "total_regret": sum(d["regret"] or 0.0 for d in decisions),
            "summary": st["summary"],
            "record": record,
        }

    return server


def serve_stdio(*, allow_cmd: bool = False) -> None:
    """Serve over stdio until the client closes it (``tenk mcp``)."""
    create_mcp_server(allow_cmd=allow_cmd).run("stdio")
