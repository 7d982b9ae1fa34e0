"""An OpenAI-compatible chat-completions server that answers from a script, for the ``llm:``
agent's tests: good answers, malformed ones, errors and answers that never come.

Each request takes the next item of the script (the last one repeats once the script runs
out): a string is the model's answer; ``{"status": 500}`` an HTTP error; ``HANG`` no answer
until the server stops (the agent's timeout fires first, whatever the machine's speed); a
callable gets the request's messages and returns the answer. ``requests`` keeps every
request's JSON body and ``headers`` its headers.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from support.server import Served

HANG = object()

#: a script item: an answer, an HTTP error, HANG, or a function of the messages
Item = str | dict[str, int] | object | Callable[[list[dict[str, str]]], str]


def listed_moves(messages: list[dict[str, str]]) -> int:
    """How many legal moves the first message lists (numbered lines ``n. ...``)."""
    return len(re.findall(r"^\d+\. ", messages[0]["content"], re.MULTILINE))


class ChatServer(Served):
    def __init__(self, script: list[Item], models: tuple[str, ...] = ("tiny",)):
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.stopped = threading.Event()
        app = FastAPI()

        @app.get("/v1/models")
        async def _models():
            return {"object": "list", "data": [{"id": m, "object": "model"} for m in models]}

        @app.post("/v1/chat/completions")
        async def _chat(request: Request):
            body = await request.json()
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            if body.get("model") not in models:
                return JSONResponse({"error": {"message": f"model {body.get('model')!r} not found"}}, status_code=404)
            item = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
            if item is HANG:
                while not self.stopped.is_set():
                    await asyncio.sleep(0.05)
                return JSONResponse({"error": {"message": "stopped"}}, status_code=503)
            if isinstance(item, dict):
                return JSONResponse({"error": {"message": "scripted failure"}}, status_code=item["status"])
            text = item(body["messages"]) if callable(item) else item
            return {
                "id": f"chat-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
            }

        super().__init__(app)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def __exit__(self, *exc) -> None:
        self.stopped.set()  # answers held back end now, so that the server can stop
        super().__exit__(*exc)
