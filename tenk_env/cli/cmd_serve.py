"""`tenk serve`: the browser app (play, watch and analyse games, every move scored) on this machine."""

from __future__ import annotations

import argparse
import ipaddress

from tenk_env.cli.common import console

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def cmd_serve(args: argparse.Namespace) -> int:
    if not _is_loopback(args.host) and not args.public:
        raise ValueError(f"--host {args.host}: the app serves this machine only (127.0.0.1) unless told otherwise; "
                         "anyone who can reach the address could play, read your agents' files and load your "
                         "CPUs, so add --public to serve beyond it")
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: give a port from 1 to 65535")
    import uvicorn
    from tenk_env.web.app import create_app

    hosts = ["*"] if args.public else [args.host, "localhost", "127.0.0.1"]
    app = create_app(args.rules or (), args.record or (), allow_cmd=args.allow_cmd, hosts=hosts)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{args.port}/"
    if args.record:
        url += "?record=1"
    console.print(f"tenk serving on {url}  (Ctrl-C stops it)", highlight=False, soft_wrap=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except SystemExit as e:      # uvicorn exits when it cannot bind (port in use)
        if e.code:
            raise OSError(f"could not serve on {args.host}:{args.port} (is the port in use? give another with "
                          "--port)") from None
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="the browser app: play, watch and analyse games, every move scored exactly",
                       description="Serve the browser app on this machine and print its URL. Play against any "
                                   "agents with the exact value of every move shown, watch agents play with a "
                                   "win-probability chart, and analyse saved game records move by move.")
    s.add_argument("record", nargs="*", help="game records (.jsonl) to open in the page, e.g. the costliest-mistake "
                                              "records `tenk analyze` writes (mistakes/NN.jsonl)")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--public", action="store_true", help="allow a --host beyond this machine")
    s.add_argument("--rules", action="append", metavar="FILE",
                   help="a ruleset YAML file to offer beside the presets; repeat for more")
    s.add_argument("--allow-cmd", action="store_true",
                   help="allow cmd:COMMAND agents (programs run on this machine) in the page's games")
    s.set_defaults(func=cmd_serve)
