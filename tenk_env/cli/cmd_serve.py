"""`tenk serve`: the browser app (play, watch and analyse games, every move scored) on this machine."""

from __future__ import annotations

import argparse
import ipaddress
import socket

from tenk_env.cli.common import console

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def served_hosts(host: str, public: bool) -> list[str]:
    """The Host names the server answers when bound to ``host``. A loopback bind answers only
    this machine's names, ``--public`` or not: a page whose own name resolves to 127.0.0.1 (DNS
    rebinding) is refused by its Host header. Beyond loopback, any name (``"*"``)."""
    return [host, *(h for h in LOOPBACK if h != host)] if _is_loopback(host) else ["*"]


def _check_port(host: str, port: int) -> None:
    """Refuse a port that is taken before printing that the app is served on it."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise ValueError(
                f"cannot serve on {host} port {port}: {e.strerror or e} (is another server using it? give "
                "another with --port)"
            ) from None


def cmd_serve(args: argparse.Namespace) -> int:
    loopback = _is_loopback(args.host)
    if not loopback and not args.public:
        raise ValueError(
            f"--host {args.host}: the app serves this machine only (127.0.0.1) unless told otherwise; "
            "anyone who can reach the address could play, read your agents' files and load your "
            "CPUs, so add --public to serve beyond it"
        )
    if args.allow_cmd and args.public:
        raise ValueError(
            "--allow-cmd with --public: anyone who reaches the server (or a web page that renames "
            "itself to it) could run commands on this machine; serve programs as agents on this machine "
            "only (drop --public)"
        )
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: give a port from 1 to 65535")
    _check_port(args.host, args.port)
    import uvicorn

    from tenk_env.web.app import create_app

    app = create_app(
        args.rules or (), args.record or (), allow_cmd=args.allow_cmd, hosts=served_hosts(args.host, args.public)
    )
    shown = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown}:{args.port}/"
    if args.record:
        url += "?record=1"
    console.print(f"tenk serving on {url}  (Ctrl-C stops it)", highlight=False, soft_wrap=True)
    if args.allow_cmd:
        console.print(
            "--allow-cmd: games in the page may seat cmd:COMMAND agents, which run that command on this "
            "machine as you, and llm:MODEL agents, which send requests to the address their spec names; "
            "only pages served from this address can ask for them",
            highlight=False,
            soft_wrap=True,
        )
    if args.public:
        console.print(
            f"--public: anyone who can reach {args.host}:{args.port} can play, solve and read the agent files you name",
            highlight=False,
            soft_wrap=True,
        )
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except SystemExit as e:  # uvicorn exits when it cannot bind (taken between the check and now)
        if e.code:
            raise ValueError(
                f"could not serve on {args.host}:{args.port} (is the port in use? give another with --port)"
            ) from None
    finally:
        solver = getattr(app.state, "solver", None)
        if solver is not None:
            solver.stop()
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "serve",
        help="the browser app: play, watch and analyse games, every move scored exactly",
        description="Serve the browser app on this machine and print its URL. Play against any "
        "agents with the exact value of every move shown, watch agents play with a "
        "win-probability chart, and analyse saved game records move by move.",
    )
    s.add_argument(
        "record",
        nargs="*",
        help="game records (.jsonl) to open in the page, e.g. the costliest-mistake "
        "records `tenk analyze` writes (mistakes/NN.jsonl)",
    )
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1, this machine only)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--public", action="store_true", help="allow a --host beyond this machine (not with --allow-cmd)")
    s.add_argument(
        "--rules",
        action="append",
        metavar="FILE",
        help="a ruleset YAML file to offer beside the presets; repeat for more",
    )
    s.add_argument(
        "--allow-cmd",
        action="store_true",
        help="allow cmd:COMMAND agents (programs run on this machine) and llm:MODEL agents (requests "
        "to the address their spec names) in the page's games; this machine only (not with --public)",
    )
    s.set_defaults(func=cmd_serve)
