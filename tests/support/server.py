"""A real server for the web tests: the app on a loopback port over real HTTP, as a browser
or a hostile page reaches it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import uvicorn


class Served:
    """An ASGI app served by uvicorn on a free port of 127.0.0.1, in a thread, while the
    ``with`` block runs; ``request`` sends one raw HTTP request (any Host, any headers)."""

    def __init__(self, app):
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 60  # a hang guard, not a timing check
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the test server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(30)
        self.sock.close()

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict | None = None, host: str | None = None
    ) -> tuple[int, dict, dict]:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        c.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
        for k, v in (headers or {}).items():
            c.putheader(k, v)
        if body is not None:
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        data = r.read()
        c.close()
        heads = {k.lower(): v for k, v in r.getheaders()}
        return r.status, heads, (json.loads(data) if data and "json" in heads.get("content-type", "") else {})
