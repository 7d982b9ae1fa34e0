"""The page of `tenk serve` in a real browser: headless Chromium (the system's package, which
`.ci/run` installs) driven by Playwright. A whole game against dicenow is played by clicking,
its feedback and summary are checked against the exact tables, the record is saved and
analysed, and a watched game's chart is drawn.

Screenshots go to ``$TENK_SCREENSHOTS`` when it is set (``TENK_SCREENSHOTS=runs/web pytest
tests/web/test_browser.py`` makes the ones in the docs), else to the test's temporary folder.
"""

from __future__ import annotations

import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest
import yaml

from tenk_env.evaluation.play import play_game
from tenk_env.records import load_jsonl, replay, save_jsonl
from tenk_env.rules import PRESETS
from tenk_env.web.app import create_app

from support.records import exact_regrets
from support.server import Served

playwright = pytest.importorskip(
    "playwright.sync_api", reason="the browser test needs playwright (pip install -e '.[dev]')"
)

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on PATH: apt-get install chromium"),
    pytest.mark.slow,
]

#: a ruleset the solver finishes in about a second, so the page scores every move at once
WEB = PRESETS["classic"].replace(target=1000, end="immediate", name="web1000")
#: root in CI needs no sandbox; a container's small /dev/shm would crash the renderer
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


#: the app behind each server URL, and the (method, path, status) of every answer it gave, for
#: tests that look at what a request left on the server
APPS: dict = {}
SEEN: dict = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app on an ephemeral port of 127.0.0.1, served by uvicorn in a thread."""
    folder = tmp_path_factory.mktemp("serve")
    rules = folder / "web1000.yaml"
    rules.write_text(yaml.safe_dump(WEB.to_dict()))
    app = create_app([rules], solve_in_background=False)
    seen: list = []

    async def recording(scope, receive, send):
        async def answer(msg):
            if msg["type"] == "http.response.start":
                seen.append((scope["method"], scope["path"], msg["status"]))
            await send(msg)

        await app(scope, receive, answer if scope["type"] == "http" else send)

    with Served(recording) as served:
        APPS[served.url], SEEN[served.url] = app, seen
        yield served.url


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path):
    out = Path(os.environ.get("TENK_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(f"{server}/?pace=0")
    pg.wait_for_selector("body[data-ready='1']")
    yield pg
    context.close()
    assert not errors, f"the page logged errors: {errors}"


def _pick(pg) -> None:
    """Bank the highest keep once the turn reaches 300, else roll on with it: a plain human
    strategy that makes mistakes worth scoring."""
    cards = pg.query_selector_all("#choices .keep-card")
    best = max(cards, key=lambda c: int(c.query_selector(".keep-pts").inner_text().strip("+").replace(",", "")))
    turn = int(best.query_selector(".muted").inner_text().split()[1].replace(",", ""))
    bank = best.query_selector("button.move[data-end='true']")
    (bank if bank and turn >= 300 else best.query_selector("button.move[data-end='false']")).click()


def test_a_whole_game_against_dicenow_by_clicking(page, shots, tmp_path):
    page.select_option("#play-rules", "web1000")
    page.fill("#play-seed", "3")
    page.click("#new-game")
    feedback = []
    for _ in range(200):
        page.wait_for_function(
            "!document.querySelector('#summary').hidden || "
            "document.querySelector('#choices button.move:not([disabled])')"
        )
        if page.is_visible("#summary"):
            break
        if len(feedback) == 2:
            page.check("#show-values")  # every move's value, the best one marked
            assert page.query_selector_all("#choices button.move .move-value")
            assert page.query_selector_all("#choices button.move.best")
            page.screenshot(path=str(shots / "serve_play.png"))
        _pick(page)
        page.wait_for_function(
            "n => document.querySelector('#feedback').textContent.includes(`so far: ${n} decision`)",
            arg=len(feedback) + 1,
        )
        feedback.append(page.inner_text("#feedback"))
    else:
        pytest.fail("the game did not end in 200 decisions")
    page.screenshot(path=str(shots / "serve_summary.png"), full_page=True)

    with page.expect_download() as dl:
        page.click("#save-record")
    saved = tmp_path / "game.jsonl"
    dl.value.save_as(saved)
    events = load_jsonl(saved)
    final = replay(events)
    assert final.over
    # the board drawn last is the server's board after the last event: the final scores
    assert [c.inner_text() for c in page.query_selector_all("#play-board .pscore")] == [f"{x:,}" for x in final.scores]
    assert page.is_visible("#play-board .player.winner")

    # every decision scored from the exact tables, as `tenk analyze` scores it
    regrets = [m.regret for player, m in exact_regrets(events) if player == 0]
    assert len(regrets) == len(feedback) >= 3
    assert any(r > 0 for r in regrets), "the strategy should make at least one mistake"
    for r, text in zip(regrets, feedback):
        assert ("That was the best move." in text) == (r == 0), text
        if r > 0:
            assert f"Given away: {100 * r:.2f} pp" in text, text
    assert page.inner_text("#summary-regret") == f"{100 * sum(regrets):.2f} pp"
    assert page.is_visible("#summary .costliest")
    assert f"{final.scores[0]:,}" in page.inner_text("#summary .final-scores")

    # the saved record opens in Analyse, annotated with the same regrets
    page.click("#tab-analyse")
    page.set_input_files("#record-file", str(saved))
    page.wait_for_function("document.querySelector('#record-text').value.includes('\"start\"')")
    page.click("#analyse")
    page.wait_for_selector("#analyse-viewer:not([hidden]) .regret-table")
    first_row = page.query_selector_all("#analyse-viewer .regret-table tbody tr")[0]
    assert first_row.query_selector_all("td")[2].inner_text() == f"{100 * sum(regrets):.2f} pp"
    page.click("#analyse-viewer .costliest button")  # the costliest move, reopened at its position
    assert page.query_selector_all("#analyse-viewer .decision-panel td.made")
    page.screenshot(path=str(shots / "serve_analyse.png"), full_page=True)


def test_analyse_shows_what_a_model_said_at_its_decision(page, tmp_path):
    """A record whose decisions carry what an agent said (an ``llm:`` agent's answers and why
    one was refused) shows it, folded, under each decision of Analyse."""
    said = {
        "answers": ["I keep the five.", "MOVE 1"],
        "problems": ["the last line must be MOVE n"],
        "move": 1,
        "fallback": False,
    }
    game = play_game(WEB, ["dicenow", "greedy"], dice=4)
    events = [dict(e, said=said) if e["type"] in ("keep", "piggyback") else e for e in game.events]
    save_jsonl(events, tmp_path / "said.jsonl")
    page.click("#tab-analyse")
    page.set_input_files("#record-file", str(tmp_path / "said.jsonl"))
    page.wait_for_function("document.querySelector('#record-text').value.includes('\"said\"')")
    page.click("#analyse")
    page.wait_for_selector("#analyse-viewer:not([hidden]) .regret-table")
    page.click("#analyse-viewer button[title^='Next decision']")
    box = page.wait_for_selector("#analyse-viewer .decision-panel details.said")
    assert box.query_selector("summary").inner_text() == "What the model said (2 answers, the last one played)"
    texts = box.query_selector_all(".said-text")
    assert [t.text_content() for t in texts] == said["answers"]
    assert not any(t.is_visible() for t in texts)  # folded until asked for
    box.query_selector("summary").click()
    assert all(t.is_visible() for t in texts)
    assert "refused: the last line must be MOVE n" in box.inner_text()


def test_watching_two_agents_draws_the_win_probability_chart(page, shots):
    page.click("#tab-watch")
    page.select_option("#watch-rules", "web1000")
    agents = page.query_selector_all("#watch-agents input")
    agents[0].fill("greedy")
    agents[1].fill("dicenow")
    page.fill("#watch-seed", "5")
    page.click("#watch")
    page.wait_for_selector("#watch-viewer:not([hidden]) .chart svg")
    page.click("#watch-viewer button[title^='Next decision']")
    page.click("#watch-viewer button[title^='Next decision']")
    assert page.query_selector_all("#watch-viewer .decision-panel table.moves td.best")
    assert "won by" in page.inner_text("#watch-viewer .viewer-head")
    page.screenshot(path=str(shots / "serve_watch.png"), full_page=True)


EVIL = """<!doctype html><title>elsewhere</title><script>
(async () => {
  const target = "%s";
  const game = JSON.stringify({rules: "web1000", opponents: ["dicenow"], seed: 1});
  const tries = [
    // a "simple" request: no preflight, the body a blob with no JSON type
    fetch(target + "/api/games", {method: "POST", mode: "no-cors", body: new Blob([game])}),
    fetch(target + "/api/games", {method: "POST", mode: "no-cors", body: game,
                                  headers: {"Content-Type": "text/plain"}}),
    // a CORS request with the JSON type: the browser asks first (OPTIONS), which is refused
    fetch(target + "/api/games", {method: "POST", body: game, headers: {"Content-Type": "application/json"}}),
    fetch(target + "/api/meta"),
  ];
  const out = [];
  for (const t of tries) {
    try { const r = await t; out.push(r.type === "opaque" ? "opaque" : String(r.status)); }
    catch (e) { out.push("blocked"); }
  }
  document.body.dataset.results = out.join(",");
  document.body.dataset.done = "1";
})();
</script><body></body>"""


def test_a_page_from_another_origin_cannot_start_a_game(browser, server):
    """The evil page is served from a second local origin (localhost on another port): whatever
    it sends, the tenk server starts nothing and shows it nothing."""

    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (EVIL % server).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    thread = threading.Thread(target=evil.serve_forever, daemon=True)
    thread.start()
    store = APPS[server].state.store
    before, answered = len(store), len(SEEN[server])
    context = browser.new_context()
    try:
        pg = context.new_page()
        pg.goto(f"http://localhost:{evil.server_address[1]}/")
        pg.wait_for_selector("body[data-done='1']", state="attached")
        results = pg.evaluate("document.body.dataset.results").split(",")
    finally:
        context.close()
        evil.shutdown()
    # the no-cors answers are opaque to the page; the CORS ones fail; and on the server, no game
    assert results[:2] == ["opaque", "opaque"] and results[2:] == ["blocked", "blocked"]
    assert len(store) == before
    # refused by the server's own guard (403: another origin), not left to the framework's defaults
    assert sorted(SEEN[server][answered:]) == [
        ("GET", "/api/meta", 403),
        ("OPTIONS", "/api/games", 403),
        ("POST", "/api/games", 403),
        ("POST", "/api/games", 403),
    ]
