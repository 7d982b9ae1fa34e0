"""The server's own guard against web pages and oversized requests, whatever the web
framework's version does.

A page on another site can send requests to a server on this machine: a "simple"
cross-origin POST (``fetch(url, {mode: "no-cors", body: blob})``) needs no preflight and, if
the server parsed its body as JSON, would start games, solves and, with ``--allow-cmd``,
commands. A DNS-rebinding page (its own name resolving to 127.0.0.1) is even same-origin to
the browser. The guard, an ASGI middleware in front of the app, refuses:

- a ``Host`` that is not one of the names served (rebinding: ``Host: attacker.example``), 400;
  IPv6 literals are read as ``[::1]:PORT``;
- a request whose ``Origin`` is not the server's own (``http://`` + the Host it was sent
  to), 403, with no CORS headers in any answer, so a browser shows another site nothing;
- a request with a body (POST, PUT, PATCH, DELETE) that is not ``Content-Type:
  application/json``, 415: a simple cross-origin request cannot carry that type without a
  preflight, which this server never grants;
- a body above ``max_body`` bytes, 413, read no further.

Every refusal is JSON ``{"error": "..."}`` naming what was refused and why.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

__all__ = ["Guard", "host_name", "MAX_BODY"]

#: the largest request body accepted (a game record of a long game is tens of KB)
MAX_BODY = 2 * 2**20
_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def host_name(host: str) -> str:
    """The name in a Host header, without its port: ``[::1]:8000`` -> ``::1``,
    ``localhost:8000`` -> ``localhost``."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return host[1:end] if end > 0 else host
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def _header(scope: Scope, name: bytes) -> str | None:
    for k, v in scope.get("headers", ()):
        if k.lower() == name:
            return v.decode("latin-1")
    return None


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: ``hosts`` are the Host names served (``"*"``: any, for a public
    bind); the other refusals hold for every bind."""

    def __init__(self, app: Any, hosts: Iterable[str], max_body: int = MAX_BODY):
        self.app = app
        self.hosts = {host_name(h) for h in hosts}
        self.any_host = "*" in self.hosts
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if not self.any_host and host_name(host) not in self.hosts:
            await _refuse(
                send,
                400,
                f"host {host!r} is not served here: open the address `tenk serve` printed "
                f"({', '.join(sorted(self.hosts))})",
            )
            return
        origin = _header(scope, b"origin")
        if origin is not None and origin.rstrip("/").lower() != f"http://{host}".lower():
            await _refuse(
                send,
                403,
                f"origin {origin!r}: requests from other sites are refused (a page elsewhere "
                "must not drive this server); open the page `tenk serve` serves",
            )
            return
        if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        ctype = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
        if ctype != "application/json":
            await _refuse(
                send,
                415,
                f"content type {ctype or 'none'!r}: send the body as JSON with `Content-Type: application/json`",
            )
            return
        length = _header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_body:
            await _refuse(
                send, 413, f"request body of {int(length):,} bytes: the server takes at most {self.max_body:,} bytes"
            )
            return
        # read the body here, counting, so that a body without a length is capped too
        chunks, size = [], 0
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            chunk = msg.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await _refuse(
                    send,
                    413,
                    f"request body over {self.max_body:,} bytes: the server takes at most {self.max_body:,} bytes",
                )
                return
            chunks.append(chunk)
            if not msg.get("more_body", False):
                break
        body, sent = b"".join(chunks), False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
