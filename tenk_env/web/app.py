"""``tenk serve``: the browser app, a FastAPI application over :mod:`tenk_env.web.games`.

The page (``static/``: plain HTML, CSS and JavaScript, nothing fetched from elsewhere) and
its JSON API, documented in ``docs/serve.md``:

========================  ======  ===========================================================
path                      method  what
========================  ======  ===========================================================
``/api/meta``             GET     presets, the user's ruleset files, agent names
``/api/games``            POST    a new game against agents: ``{rules, players, seat, opponents, seed | dice}``
``/api/games/{id}``       GET     the game's state (events, the board after each, legal moves, feedback, summary)
``/api/games/{id}/act``   POST    a move: ``{action}``, ``{keep, end}`` or ``{piggyback}``
``/api/games/{id}/record`` GET    the game record, JSON lines (what ``tenk replay`` reads)
``/api/watch``            POST    agents play a game, returned annotated: ``{rules, agents, seed}``
``/api/analyse``          POST    a record annotated move by move: ``{record, names}``
``/api/records/{id}``     GET     a record given to ``tenk serve RECORD``
========================  ======  ===========================================================

Every refusal is a 4xx with ``{"error": "..."}`` naming the problem, and leaves the game as
it was. :mod:`tenk_env.web.guard` refuses, before any route, requests for another host than
the ones served (a page elsewhere cannot reach this server through a DNS name of its own),
from another origin, with a body that is not JSON or larger than it takes. ``cmd:`` agents,
which run commands, and ``llm:`` agents, which send requests to the address their spec names,
are served only with ``allow_cmd``; ``human`` (a terminal's) never.

Solves run one at a time in the server's queue (:class:`~tenk_env.web.games.Solver`). A
request that needs one not yet done (a new game against ``optimal`` on an unsolved ruleset,
a watch, an analysis) is answered ``202 {"pending": [...], "note": "..."}`` with where each
solve stands; asking again keeps it wanted, and a solve nobody asks for within 20 seconds is
dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from starlette.exceptions import HTTPException as StarletteHTTPException

from tenk_env.policies.base import ZOO_DIR
from tenk_env.records import load_jsonl
from tenk_env.registry import AGENTS
from tenk_env.rules import PRESETS, Ruleset, RulesetError, load_ruleset
from tenk_env.web.games import (
    MAX_SCRIPTED_ROLLS,
    MAX_WEB_PLAYERS,
    GameStore,
    Pending,
    PlayGame,
    Solver,
    WebError,
    analyse,
    analysis_jobs,
    check_record,
    wait_for,
    watch,
)
from tenk_env.web.guard import MAX_BODY, Guard

__all__ = ["create_app", "STATIC"]

STATIC = Path(str(resources.files("tenk_env.web") / "static"))

#: agents offered in the page's menus (any spec may be typed)
MENU_AGENTS = [
    "dicenow",
    "maxscore",
    "breakeven",
    "greedy",
    "hold:300",
    "hold:450",
    "random",
    "optimal",
    "br:dicenow",
    "equilibrium",
]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    rules: str = "classic"
    players: int = Field(2, ge=2, le=MAX_WEB_PLAYERS)
    seat: int = Field(1, ge=1, le=MAX_WEB_PLAYERS, description="your seat, 1 moves first")
    opponents: list[str] = Field(default_factory=lambda: ["dicenow"], max_length=MAX_WEB_PLAYERS - 1)
    seed: int | None = Field(None, ge=0, lt=2**63)
    dice: list[list[int]] | None = Field(
        None, max_length=MAX_SCRIPTED_ROLLS, description="scripted rolls, in order, instead of a seed"
    )


class Act(_Body):
    # strict: "5" is not a face and "no" is not false; a move is read as sent or refused
    action: StrictInt | None = Field(None, ge=0)
    keep: list[StrictInt] | None = Field(None, max_length=8)
    end: StrictBool | None = None
    piggyback: StrictBool | None = None


class Watch(_Body):
    rules: str = "classic"
    agents: list[str] = Field(default_factory=lambda: ["dicenow", "maxscore"], min_length=2, max_length=MAX_WEB_PLAYERS)
    seed: int | None = Field(None, ge=0, lt=2**63)


class Analyse(_Body):
    record: str | list[dict[str, Any]]
    names: list[str] | None = Field(None, max_length=MAX_WEB_PLAYERS)


def _field(loc: Sequence[Any]) -> str:
    return ".".join(str(x) for x in loc if x != "body") or "the request body"


def create_app(
    rules_files: Sequence[str | Path] = (),
    records: Sequence[str | Path] = (),
    *,
    allow_cmd: bool = False,
    hosts: Sequence[str] = ("127.0.0.1", "localhost"),
    solve_in_background: bool = True,
    max_games: int = 64,
    ttl: float = 3600.0,
    max_body: int = MAX_BODY,
) -> FastAPI:
    """The app. ``rules_files``: YAML rulesets offered beside the presets (by their name);
    ``records``: game records to open in the page (``/?record=ID``); ``hosts``: the Host
    names accepted (``"*"``: any); ``solve_in_background``: solve in the server's queue, a
    child process at a time (else in the request); ``max_body``: the largest request body,
    in bytes."""
    user_rules: dict[str, tuple[Ruleset, str]] = {}
    for f in rules_files:
        r = load_ruleset(str(f))  # RulesetError names the file and the field
        if r.name in PRESETS or r.name in user_rules:
            raise RulesetError(
                f"ruleset file {str(f)!r} is named {r.name!r}, as a preset or another file is: give it another `name:`"
            )
        user_rules[r.name] = (r, str(f))
    saved: dict[str, tuple[str, str]] = {}
    for i, f in enumerate(records, 1):
        load_jsonl(f)  # ReplayError names the file and the line
        saved[str(i)] = (Path(f).read_text(), Path(f).name)

    store = GameStore(max_games, ttl)
    solver = Solver() if solve_in_background else None

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        if solver is not None:
            solver.stop()
        store.close()

    app = FastAPI(
        title="tenk",
        description="Play, watch and analyse Ten Thousand, every move scored exactly.",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )  # their pages load scripts from a CDN
    app.add_middleware(Guard, hosts=list(hosts), max_body=max_body)
    app.state.store, app.state.solver = store, solver

    def rules_of(name: str) -> Ruleset:
        if name in user_rules:
            return user_rules[name][0]
        if name in PRESETS:
            return PRESETS[name]
        offered = list(PRESETS) + list(user_rules)
        raise WebError(
            f"unknown ruleset {name!r}: choose one of {', '.join(offered)} (files are offered with "
            "`tenk serve --rules FILE`)"
        )

    @app.exception_handler(WebError)
    async def _web_error(request: Request, e: WebError):
        return JSONResponse({"error": str(e)}, status_code=e.status)

    @app.exception_handler(Pending)
    async def _pending(request: Request, e: Pending):
        return JSONResponse({"pending": e.waits, "note": str(e)}, status_code=202)

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, e: RequestValidationError):
        problems = "; ".join(f"{_field(err.get('loc', ()))}: {err.get('msg')}" for err in e.errors())
        return JSONResponse({"error": f"bad request: {problems}"}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, e: StarletteHTTPException):
        return JSONResponse({"error": str(e.detail)}, status_code=e.status_code)

    @app.get("/api/meta")
    def meta() -> dict[str, Any]:
        zoo = sorted(p.name for p in Path(ZOO_DIR).iterdir() if p.is_dir()) if Path(ZOO_DIR).is_dir() else []
        return {
            "presets": [{"name": n, "target": r.target, "num_dice": r.num_dice} for n, r in PRESETS.items()],
            "files": [{"name": n, "path": f} for n, (_, f) in user_rules.items()],
            "agents": MENU_AGENTS + [f"zoo:{z}" for z in zoo],
            "registered": sorted(AGENTS),
            "records": [{"id": k, "name": v[1]} for k, v in saved.items()],
            "default_rules": next(iter(user_rules), "classic"),
            "max_players": MAX_WEB_PLAYERS,
        }

    @app.post("/api/games")
    def new_game(body: NewGame) -> dict[str, Any]:
        rules = rules_of(body.rules)
        if body.seat > body.players:
            raise WebError(f"seat {body.seat}: choose a seat from 1 to {body.players}")
        if body.dice is not None and body.seed is not None:
            raise WebError("give a seed or scripted dice, not both")
        g = PlayGame(
            rules,
            body.players,
            body.seat - 1,
            body.opponents,
            seed=body.seed,
            dice=body.dice,
            solver=solver,
            allow_cmd=allow_cmd,
        )
        store.add(g)
        with g.lock:
            return g.state()

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        g = store.get(gid)
        with g.lock:
            return g.state()

    @app.post("/api/games/{gid}/act")
    def act(gid: str, body: Act) -> dict[str, Any]:
        g = store.get(gid)
        with g.lock:
            g.act(action=body.action, keep=body.keep, end=body.end, piggyback=body.piggyback)
            return g.state()

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> PlainTextResponse:
        g = store.get(gid)
        with g.lock:
            text = g.record()
        return PlainTextResponse(
            text,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="tenk-{gid}.jsonl"'},
        )

    @app.post("/api/watch")
    def watch_game(body: Watch) -> dict[str, Any]:
        return watch(rules_of(body.rules), body.agents, body.seed, allow_cmd=allow_cmd, solver=solver)

    @app.post("/api/analyse")
    def analyse_record(body: Analyse) -> dict[str, Any]:
        events = check_record(body.record)
        if events:
            wait_for(solver, analysis_jobs(events))  # replays the start: its player count is checked
        if body.names is not None and events and len(body.names) != events[0]["players"]:
            raise WebError(f"names: {len(body.names)} names for a {events[0]['players']}-player game")
        return analyse(events, body.names)

    @app.get("/api/records/{rid}")
    def saved_record(rid: str) -> dict[str, Any]:
        if rid not in saved:
            raise WebError(f"no record {rid!r}: the server was given {len(saved)} (`tenk serve RECORD...`)", 404)
        text, name = saved[rid]
        return {"record": text, "name": name}

    # the page and its files, at / and under /static/ (after the API's routes, which win)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/", StaticFiles(directory=STATIC, html=True), name="page")
    return app
