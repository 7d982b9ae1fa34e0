"""``llm:MODEL``: a language model behind an OpenAI-compatible chat-completions endpoint as an agent.

Any server that speaks the chat-completions API plays wherever a spec goes (``tenk ffa``,
``tenk analyze``, tournaments, ``tenk suite evaluate``): a local one (llama.cpp's
``llama-server``, ``llama-cpp-python``'s server, vLLM, Ollama) or a hosted one. Quote the
whole spec in a shell::

    tenk analyze 'llm:smollm2,base_url=http://127.0.0.1:8080/v1' --games 20

Spec. ``llm:MODEL`` then options as ``,key=value`` (none may hold a comma):

* ``base_url``: the endpoint (default ``$TENK_LLM_BASE_URL``, else ``$OPENAI_BASE_URL``,
  else OpenAI's);
* ``key_env``: the environment variable that holds the API key (default ``TENK_LLM_API_KEY``,
  else ``OPENAI_API_KEY``; local servers need none). A key is never read from the spec, so
  it never reaches a file tenk writes;
* ``temperature`` (default 0), ``seed`` (default none), ``max_tokens`` (default
  :data:`DEFAULT_MAX_TOKENS`): sent with every request;
* ``timeout``: seconds an answer may take (default ``$TENK_LLM_TIMEOUT``, else
  :data:`DEFAULT_TIMEOUT`);
* ``retries``: how many times a bad answer is asked again (default :data:`DEFAULT_RETRIES`);
* ``fallback``: the agent spec that plays a decision whose answers were all bad (default
  ``random``, uniform over the legal moves);
* ``template``: a prompt template file (default :data:`tenk_env.policies.prompt.DEFAULT_TEMPLATE`);
* ``constrain``: ``none`` (default) or ``grammar``: each request carries a GBNF grammar
  (:func:`~tenk_env.policies.prompt.move_grammar`, in the ``grammar`` field that llama.cpp's
  servers read) under which the model can write only ``MOVE n`` for a legal ``n``. A model
  too small to follow the answer format then still plays its own moves: the most likely
  legal answer at temperature 0, with no room to reason first. Servers that do not read the
  field ignore it or refuse the request (HTTP 400, named).

A decision. The model gets one user message, the template filled in
(:mod:`tenk_env.policies.prompt`: the rules of the game being played, the position, the
legal moves numbered from 1, the answer format). Its answer must end with the line
``MOVE n``. A bad answer is one that does not (:func:`~tenk_env.policies.prompt.parse_answer`),
one that comes later than ``timeout``, or a server error (HTTP 429 or 5xx). After a bad
answer the model is asked again, with its answer and the reason added to the conversation
(a late answer or a server error: the same request again), up to ``retries`` times. If
every answer was bad, the ``fallback`` agent plays the decision, and it is counted as a
fallback. :attr:`LLMAgent.last` holds the last decision's answers, reasons and outcome;
:attr:`LLMAgent.stats` counts decisions, calls, cached answers, tokens, seconds, bad answers
and fallbacks.

Errors that no retry mends raise :class:`~tenk_env.registry.AgentError` at once, naming the
fix: no server at the endpoint, a key refused, a model the server does not have, a request
the server rejects (HTTP 400, e.g. a prompt longer than the model's context).

Cache. Every answer is kept under ``$TENK_CACHE/llm/`` (default ``~/.cache/tenk/llm/``),
keyed by the model, the template's text, the whole conversation, the sampling settings and
the constraint (:func:`request_key`). A rerun asks the server nothing: a game replayed, an
analysis run again, a tournament resumed. A cached answer is reused at any temperature, so a
seeded run is reproducible; give another ``seed`` (or delete the folder) to sample again.

Concurrency. An agent asks one question at a time, and tenk plays one game per worker
process, so at most ``--workers`` requests are in flight; give ``--workers 1`` to a server
that serves one request at a time.

An :class:`LLMAgent` pickles as its spec: worker processes make their own client.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import openai

from tenk_env.game import Game, Phase
from tenk_env.io import atomic_write_text
from tenk_env.obs import PIGGYBACK_FRESH, PIGGYBACK_TAKE, decode_action, keep_action
from tenk_env.policies.prompt import BadAnswer, Template, move_grammar, parse_answer, retry_text
from tenk_env.registry import AgentError, Policy, env_seconds, legal_actions, make_policy
from tenk_env.rules import Ruleset, did_you_mean
from tenk_env.solve.cache import cache_dir
from tenk_env.tables import Keep

__all__ = [
    "LLMAgent",
    "LLMStats",
    "make_llm",
    "request_key",
    "DEFAULT_TIMEOUT",
    "DEFAULT_RETRIES",
    "DEFAULT_MAX_TOKENS",
    "CONSTRAINTS",
]

DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
DEFAULT_MAX_TOKENS = 256
TIMEOUT_ENV = "TENK_LLM_TIMEOUT"
BASE_URL_ENV = "TENK_LLM_BASE_URL"
KEY_ENV = "TENK_LLM_API_KEY"
_EXAMPLE = "llm:smollm2,base_url=http://127.0.0.1:8080/v1"

#: option -> (parser, what it takes)
_OPTIONS: dict[str, tuple[type, str]] = {
    "base_url": (str, "the endpoint, e.g. http://127.0.0.1:8080/v1"),
    "key_env": (str, "the name of the environment variable holding the API key"),
    "temperature": (float, "a number >= 0"),
    "seed": (int, "an integer"),
    "max_tokens": (int, "an integer >= 1"),
    "timeout": (float, "seconds, a number > 0"),
    "retries": (int, "an integer >= 0"),
    "fallback": (str, "an agent spec, e.g. random"),
    "template": (str, "the path of a prompt template file"),
    "constrain": (str, "none, or grammar (llama.cpp's servers)"),
}
CONSTRAINTS = ("none", "grammar")


@dataclass
class LLMStats:
    """What an agent's decisions cost and how its answers went."""

    decisions: int = 0  #: decisions asked of the model
    calls: int = 0  #: requests sent to the server (cached answers are not requests)
    cached: int = 0  #: answers read from the cache
    prompt_tokens: int = 0  #: as the server reports them
    completion_tokens: int = 0
    seconds: float = 0.0  #: waiting for the server
    bad_answers: int = 0  #: answers refused: malformed, illegal, late or a server error
    late: int = 0  #: of which later than the timeout
    fallbacks: int = 0  #: decisions played by the fallback agent

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Decision:
    """One decision: what the model answered, why answers were refused, what was played."""

    turn: int
    seat: int
    answers: list[str | None] = field(default_factory=list)  #: None: no answer (late, server error)
    problems: list[str] = field(default_factory=list)  #: one per refused answer
    move: int | None = None  #: the chosen move's number in the prompt (from 1)
    action: int | None = None
    fallback: bool = False


def request_key(model: str, template_key: str, messages: list[dict[str, str]], settings: dict[str, Any]) -> str:
    """The cache key of a request: SHA-256 of the model, the template's key, the conversation
    and the sampling settings."""
    blob = json.dumps(
        {"model": model, "template": template_key, "messages": messages, "settings": settings},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _cache_file(key: str) -> Path:
    return cache_dir() / "llm" / key[:2] / f"{key}.json"


def _cached(key: str) -> str | None:
    try:
        data = json.loads(_cache_file(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent, or damaged: asked again, never trusted
    text = data.get("text") if isinstance(data, dict) else None
    return text if isinstance(text, str) else None


class _Unanswered(Exception):
    """A request that got no usable answer and may be sent again (late, HTTP 429 or 5xx)."""


class LLMAgent:
    """A model behind a chat-completions endpoint (options and behaviour in the module docstring)."""

    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        base_url: str | None = None,
        key_env: str | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float | None = None,
        retries: int = DEFAULT_RETRIES,
        fallback: str = "random",
        template: str | Path | None = None,
        constrain: str = "none",
    ):
        if not model:
            raise AgentError(f"agent 'llm' needs a model name, e.g. {_EXAMPLE!r}")
        self.model = model
        self.name = name or f"llm:{model}"
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or os.environ.get("OPENAI_BASE_URL") or None
        self.key_env = key_env
        if not (math.isfinite(temperature) and temperature >= 0):
            raise self._bad_option("temperature", temperature)
        if max_tokens < 1:
            raise self._bad_option("max_tokens", max_tokens)
        if retries < 0:
            raise self._bad_option("retries", retries)
        self.settings: dict[str, Any] = {"temperature": float(temperature), "max_tokens": int(max_tokens)}
        if seed is not None:
            self.settings["seed"] = int(seed)
        if timeout is None:
            timeout = env_seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT, "an llm: agent's answer may take")
        self.timeout = float(timeout)
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise self._bad_option("timeout", timeout)
        self.retries = int(retries)
        if constrain not in CONSTRAINTS:
            raise self._bad_option("constrain", constrain)
        self.constrain = constrain
        self.template = Template.from_file(template) if template is not None else Template()
        self.fallback_spec = fallback
        self.fallback: Policy = make_policy(fallback)
        self.stats = LLMStats()
        self.last: Decision | None = None
        self._client: openai.OpenAI | None = None

    def _bad_option(self, key: str, value: Any) -> AgentError:
        return AgentError(f"agent {self.name!r}: {key}={value!r}: give {_OPTIONS[key][1]}")

    # ------------------------------------------------------------------ Policy protocol
    def check(self, rules: Ruleset, n_players: int) -> None:
        self.fallback.check(rules, n_players)

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        move = decode_action(game, self._choose(game, rng))
        assert isinstance(move, tuple)  # a DECIDE-phase action
        return move

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        return self._choose(game, rng) == PIGGYBACK_TAKE

    def explain(self) -> dict[str, Any] | None:
        """The last decision: the model's answers (None where none came), why each refused one
        was refused, the move it named (from 1, None when the fallback played) and whether the
        fallback played it."""
        return asdict(self.last) if self.last is not None else None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ------------------------------------------------------------------ one decision
    def _choose(self, game: Game, rng: np.random.Generator) -> int:
        moves = legal_actions(game)
        self.stats.decisions += 1
        d = self.last = Decision(turn=game.turn, seat=game.current)
        messages = [{"role": "user", "content": self.template.render(game, moves)}]
        for _ in range(self.retries + 1):
            try:
                text = self._answer(messages, len(moves))
            except _Unanswered as e:
                d.answers.append(None)
                d.problems.append(str(e))
                self.stats.bad_answers += 1
                continue
            d.answers.append(text)
            try:
                i = parse_answer(text, len(moves))
            except BadAnswer as e:
                d.problems.append(str(e))
                self.stats.bad_answers += 1
                messages = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": retry_text(str(e), len(moves))},
                ]
                continue
            d.move, d.action = i + 1, moves[i]["action"]
            return d.action
        d.fallback = True
        self.stats.fallbacks += 1
        d.action = self._fallback_action(game, rng)
        return d.action

    def _fallback_action(self, game: Game, rng: np.random.Generator) -> int:
        if game.phase is Phase.PIGGYBACK:
            take = self.fallback.piggyback(game, rng)
            return PIGGYBACK_TAKE if take else PIGGYBACK_FRESH
        keep, end = self.fallback.decide(game, rng)
        return keep_action(keep, end)

    def _answer(self, messages: list[dict[str, str]], n_moves: int) -> str:
        # an unconstrained request keeps the key it had before constraints existed
        settings = self.settings if self.constrain == "none" else {**self.settings, "constrain": self.constrain}
        key = request_key(self.model, self.template.key, messages, settings)
        text = _cached(key)
        if text is not None:
            self.stats.cached += 1
            return text
        extra = {"grammar": move_grammar(n_moves)} if self.constrain == "grammar" else None
        text, usage = self._request(messages, extra)
        record: dict[str, Any] = {"model": self.model, "template": self.template.name, "settings": settings}
        record.update(messages=messages, text=text, usage=usage)
        atomic_write_text(_cache_file(key), json.dumps(record))
        return text

    # ------------------------------------------------------------------ the server
    def _key(self) -> str:
        names = [self.key_env] if self.key_env else [KEY_ENV, "OPENAI_API_KEY"]
        for n in names:
            if os.environ.get(n):
                return os.environ[n]
        # local servers take any key; a hosted one refuses this with a 401, named below
        return "none"

    def _request(self, messages: list[dict[str, str]], extra: dict[str, Any] | None) -> tuple[str, dict[str, int]]:
        if self._client is None:
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self._key(), max_retries=0)
        where = self.base_url or "OpenAI's API"
        self.stats.calls += 1
        t0 = time.perf_counter()
        try:
            r = self._client.chat.completions.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                timeout=self.timeout,
                extra_body=extra,
                **self.settings,
            )
        except openai.APITimeoutError:
            self.stats.late += 1
            raise _Unanswered(f"no answer within {self.timeout:g} s") from None
        except openai.APIConnectionError as e:
            raise AgentError(
                f"agent {self.name!r}: no server answers at {where} ({e}): start the server, or give its "
                f"address as base_url=... in the spec or in ${BASE_URL_ENV}"
            ) from None
        except openai.AuthenticationError:
            var = self.key_env or f"{KEY_ENV} (or OPENAI_API_KEY)"
            raise AgentError(f"agent {self.name!r}: {where} refused the API key: put a valid key in ${var}") from None
        except openai.NotFoundError:
            raise AgentError(
                f"agent {self.name!r}: {where} has no model {self.model!r} (HTTP 404): give a model it serves "
                "(its /models lists them)"
            ) from None
        except openai.APIStatusError as e:
            if e.status_code == 429 or e.status_code >= 500:
                raise _Unanswered(f"the server answered HTTP {e.status_code}") from None
            raise AgentError(
                f"agent {self.name!r}: {where} rejected the request (HTTP {e.status_code}: {_short(e.message)}): "
                "check the options (max_tokens, constrain, the template's length against the model's context)"
            ) from None
        finally:
            self.stats.seconds += time.perf_counter() - t0
        choice = r.choices[0] if r.choices else None
        text = choice.message.content if choice is not None else None
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        if r.usage is not None:
            usage = {"prompt_tokens": r.usage.prompt_tokens or 0, "completion_tokens": r.usage.completion_tokens or 0}
        self.stats.prompt_tokens += usage["prompt_tokens"]
        self.stats.completion_tokens += usage["completion_tokens"]
        return text or "", usage

    # ------------------------------------------------------------------ pickling
    def __reduce__(self):
        # the spec, not the client: whoever unpickles it makes its own
        return (make_llm, (self.name.partition(":")[2],))

    def __repr__(self) -> str:
        return f"<LLMAgent {self.name!r}>"


def _short(s: str, n: int = 200) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[:n] + "..."


def make_llm(arg: str | None) -> LLMAgent:
    """``llm:MODEL[,key=value...]`` (options in the module docstring)."""
    if not arg or not arg.strip():
        raise AgentError(f"agent 'llm' needs a model after the colon, e.g. {_EXAMPLE!r}")
    model, *parts = arg.split(",")
    name = f"llm:{arg}"
    if not model.strip():
        raise AgentError(f"agent {name!r} needs a model before the options, e.g. {_EXAMPLE!r}")
    opts: dict[str, Any] = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise AgentError(f"agent {name!r}: option {part!r} is not key=value; options: {', '.join(_OPTIONS)}")
        if key not in _OPTIONS:
            raise AgentError(
                f"agent {name!r}: unknown option {key!r}{did_you_mean(key, _OPTIONS)}; options: {', '.join(_OPTIONS)}"
            )
        if key in opts:
            raise AgentError(f"agent {name!r}: option {key!r} is given twice; give it once")
        kind, what = _OPTIONS[key]
        try:
            opts[key] = kind(value.strip())
        except ValueError:
            raise AgentError(f"agent {name!r}: {key}={value!r}: give {what}") from None
        if kind is str and not opts[key]:
            raise AgentError(f"agent {name!r}: {key}= is empty: give {what}")
    return LLMAgent(model.strip(), name=name, **opts)
