"""`tenk mcp`: tenk as an MCP server over stdio, for any agent that speaks the Model Context Protocol."""

from __future__ import annotations

import argparse


def cmd_mcp(args: argparse.Namespace) -> int:
    # imported here, as the web server is: the SDK costs start-up time every other command would pay
    from tenk_env.web.mcp import serve_stdio

    serve_stdio(allow_cmd=args.allow_cmd)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "mcp",
        help="serve tenk to MCP clients over stdio: play games against tenk's agents, every decision graded",
        description="An MCP server over stdio (the client starts it: add `tenk mcp` to its servers). Tools: "
        "new_game, position, play, rules, analysis (tenk_env/web/mcp.py).",
    )
    s.add_argument(
        "--allow-cmd",
        action="store_true",
        help="allow cmd:COMMAND and llm:MODEL opponents (they run programs or send requests from this machine)",
    )
    s.set_defaults(func=cmd_mcp)
