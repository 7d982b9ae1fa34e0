"""The server's own guard, tested with the exact requests a hostile page sends, over real
HTTP to a real server (uvicorn on a loopback port), so the checks hold whatever the web
framework does by default: `.ci/run` runs this file again under the lowest FastAPI that
pyproject.toml allows.

- a `fetch(url, {mode: "no-cors", body: blob})` from another site carries no JSON Content-Type
  and needs no preflight: refused (415) before any route runs;
- any request with a foreign `Origin`: refused (403), with no CORS headers;
- DNS rebinding (`Host: attacker.example` reaching 127.0.0.1): refused (400), also when
  `tenk serve --public` binds a loopback address;
- bodies over the cap: 413.
"""

from __future__ import annotations

import http.client
import json
import socket

import pytest
import yaml

from tenk_env.cli.cmd_serve import served_hosts
from tenk_env.cli.main import main
from tenk_env.rules import PRESETS
from tenk_env.web.app import create_app

from support.server import Served

IMM = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")


@pytest.fixture
def served(tmp_path):
    rules = tmp_path / "imm1000.yaml"
    rules.write_text(yaml.safe_dump(IMM.to_dict()))

    def make(**kw):
        kw.setdefault("hosts", served_hosts("127.0.0.1", public=False))
        return Served(create_app([rules], solve_in_background=False, **kw))

    return make


GAME = json.dumps({"rules": "imm1000", "opponents": ["dicenow"], "seed": 1}).encode()


def test_a_cross_site_no_cors_post_is_refused_before_it_starts_anything(served):
    with served() as s:
        store = s.app.state.store
        # fetch(url, {mode: "no-cors", method: "POST", body: new Blob([json])}): no Content-Type at all
        status, heads, body = s.request("POST", "/api/games", GAME, {"Origin": "http://evil.example"})
        assert status == 403 and "other sites" in body["error"]
        # the same without an Origin (a browser always sends one cross-site; a script need not): no JSON type
        for ctype in (None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            status, _, body = s.request("POST", "/api/games", GAME, {"Content-Type": ctype} if ctype else {})
            assert status == 415 and "application/json" in body["error"], ctype
        assert len(store) == 0
        status, heads, _ = s.request(
            "POST", "/api/games", GAME, {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{s.port}"}
        )
        assert status == 200 and len(store) == 1
        assert not any(h.startswith("access-control-") for h in heads)


def test_a_foreign_origin_is_refused_with_no_cors_headers(served):
    with served() as s:
        for method, path, body in [
            ("GET", "/api/meta", None),
            ("POST", "/api/games", GAME),
            ("OPTIONS", "/api/games", None),
        ]:
            status, heads, answer = s.request(
                method,
                path,
                body,
                {
                    "Origin": "http://evil.example",
                    "Content-Type": "application/json",
                    "Access-Control-Request-Method": "POST",
                    "Access-Control-Request-Headers": "content-type",
                },
            )
            assert status == 403 and "origin 'http://evil.example'" in answer["error"], (method, path)
            assert not any(h.startswith("access-control-") for h in heads)
        # an origin of the same host on another port is another site too
        status, _, _ = s.request("GET", "/api/meta", None, {"Origin": f"http://127.0.0.1:{s.port + 1}"})
        assert status == 403
        assert s.request("GET", "/api/meta", None, {"Origin": "null"})[0] == 403


def test_cmd_agents_cannot_be_run_by_another_site(served, tmp_path):
    flag = tmp_path / "ran"
    watch = json.dumps({"rules": "classic", "agents": [f"cmd:touch {flag}", "dicenow"], "seed": 1}).encode()
    with served(allow_cmd=True) as s:
        assert s.request("POST", "/api/watch", watch, {"Origin": "http://evil.example"})[0] == 403
        assert s.request("POST", "/api/watch", watch, {"Content-Type": "text/plain"})[0] == 415
        assert (
            s.request("POST", "/api/watch", watch, {"Content-Type": "application/json"}, host="attacker.example")[0]
            == 400
        )
    assert not flag.exists()


@pytest.mark.parametrize("public", [False, True])
def test_dns_rebinding_is_refused_on_a_loopback_bind_public_or_not(served, public):
    with served(hosts=served_hosts("127.0.0.1", public=public)) as s:
        status, _, body = s.request("GET", "/api/meta", host=f"attacker.example:{s.port}")
        assert status == 400 and "'attacker.example:" in body["error"]
        status, _, body = s.request(
            "POST",
            "/api/games",
            GAME,
            {"Content-Type": "application/json", "Origin": f"http://attacker.example:{s.port}"},
            host=f"attacker.example:{s.port}",
        )
        assert status == 400 and len(s.app.state.store) == 0
        for host in (f"127.0.0.1:{s.port}", f"localhost:{s.port}", f"[::1]:{s.port}", "localhost"):
            assert s.request("GET", "/api/meta", host=host)[0] == 200, host


def test_ipv6_loopback_is_served_at_its_bracketed_address(served):
    with served(hosts=served_hosts("::1", public=False)) as s:
        status, _, _ = s.request(
            "GET", "/api/meta", host=f"[::1]:{s.port}", headers={"Origin": f"http://[::1]:{s.port}"}
        )
        assert status == 200
        assert s.request("GET", "/api/meta", host=f"[::2]:{s.port}")[0] == 400


def test_bodies_over_the_cap_are_refused_with_the_cap(served):
    with served(max_body=1000) as s:
        big = json.dumps({"record": "x" * 2000}).encode()
        status, _, body = s.request("POST", "/api/analyse", big, {"Content-Type": "application/json"})
        assert status == 413 and "1,000 bytes" in body["error"]
        # a body without a length (chunked) is counted as it comes
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
        c.request(
            "POST",
            "/api/analyse",
            body=iter([big[:600], big[600:]]),
            headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"},
            encode_chunked=True,
        )
        r = c.getresponse()
        assert r.status == 413 and "1,000 bytes" in json.loads(r.read())["error"]
        c.close()


def test_the_hosts_a_bind_answers():
    assert served_hosts("127.0.0.1", public=True) == served_hosts("127.0.0.1", public=False)
    assert "attacker.example" not in served_hosts("127.0.0.1", public=True)
    assert {"127.0.0.1", "localhost", "::1"} <= set(served_hosts("::1", public=False))
    assert served_hosts("0.0.0.0", public=True) == ["*"]


def test_serve_refuses_allow_cmd_with_public_and_a_taken_port(capsys):
    assert main(["serve", "--allow-cmd", "--public"]) == 2
    out = capsys.readouterr()
    err = " ".join((out.out + out.err).split())
    assert "--allow-cmd with --public" in err and "drop --public" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "serving on" not in text and f"port {port}" in text and "--port" in text and "Traceback" not in text
