"""``llm:MODEL``: a language model behind a chat-completions endpoint as an agent.

Against a local server that answers from a script (tests/support/chat_server.py): the
agent's moves are the moves its answers name; a rerun asks the server nothing; a malformed,
illegal, late or failed answer is asked again with the reason, then the fallback plays and
it is counted; setup faults (no server, a refused key, an unknown model) are errors naming
the fix; the key never reaches a file. The prompt states every field of the ruleset it is
built for."""

from __future__ import annotations

import json
import pickle
import socket

import numpy as np
import pytest

from tenk_env.evaluation.play import play_game
from tenk_env.game import Game, Phase
from tenk_env.obs import decode_action
from tenk_env.policies.base import AgentError, make_agent
from tenk_env.policies.llm import LLMAgent
from tenk_env.policies.prompt import (
    DEFAULT_TEMPLATE,
    BadAnswer,
    Template,
    move_grammar,
    moves_text,
    parse_answer,
    rules_text,
)
from tenk_env.registry import legal_actions
from tenk_env.rules import PRESETS, Ruleset
from tenk_env.tables import combos
from tenk_env.variants import sample_ruleset

from support.chat_server import HANG, ChatServer, listed_moves


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    # every test starts with no cached answer
    monkeypatch.setenv("TENK_CACHE", str(tmp_path / "cache"))
    for var in ("TENK_LLM_BASE_URL", "OPENAI_BASE_URL", "TENK_LLM_API_KEY", "OPENAI_API_KEY", "TENK_LLM_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)


def spec(server: ChatServer, *opts: str, model: str = "tiny") -> str:
    return ",".join([f"llm:{model}", f"base_url={server.base_url}", *opts])


def last_move(messages) -> str:
    """Always the last listed move (differs from the first, so a fallback would show)."""
    return f"Thinking it over.\nMOVE {listed_moves(messages)}"


def at_roll(rules: str, dice: list[int], n: int = 2) -> Game:
    g = Game(rules, n)
    g.roll(dice)
    return g


# ---------------------------------------------------------------------- the moves it plays
def test_moves_are_the_answers_moves():
    with ChatServer([last_move]) as server:
        agent = make_agent(spec(server))
        game = play_game("classic", [agent, "random"], dice=7, on_step=None)
        assert game.over
        n = agent.stats.decisions
        assert n > 0 and agent.stats.calls == n == len(server.requests)
        assert agent.stats.bad_answers == agent.stats.fallbacks == 0
        assert agent.stats.prompt_tokens == 100 * n and agent.stats.completion_tokens == 5 * n
    # the same answers, one position at a time: the move is the one the answer numbers
    with ChatServer(["MOVE 3", "move: 1", "  MOVE 2  "], models=("small",)) as server:
        agent = make_agent(spec(server, model="small"))  # another model: nothing cached above
        # three positions: the same one again would be answered from the cache
        for k, dice in zip((3, 1, 2), ([1, 2, 2, 2, 5, 5], [1, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 5])):
            g = at_roll("classic", dice)
            moves = legal_actions(g)
            assert agent.decide(g, np.random.default_rng(0)) == decode_action(g, moves[k - 1]["action"])
            assert agent.last.move == k and not agent.last.fallback


def test_request_carries_the_prompt_and_settings():
    with ChatServer(["MOVE 1"]) as server:
        agent = make_agent(spec(server, "temperature=0.5", "seed=11", "max_tokens=40"))
        g = at_roll("zilch", [1, 1, 2, 3, 4, 5], n=3)
        agent.decide(g, np.random.default_rng(0))
        (req,) = server.requests
        assert req["model"] == "tiny" and req["temperature"] == 0.5 and req["seed"] == 11 and req["max_tokens"] == 40
        (msg,) = req["messages"]
        assert msg["role"] == "user"
        assert msg["content"] == Template().render(g, legal_actions(g))
        assert "You are player 1 of 3" in msg["content"] and "You rolled 6 dice: 1 1 2 3 4 5." in msg["content"]
        assert "1. set aside 1 (100 points) and roll 5 dice on, with a turn total of 100" in msg["content"]


def test_grammar_lets_the_model_write_only_a_legal_move():
    assert move_grammar(3) == 'root ::= "MOVE " ("1" | "2" | "3")'
    with pytest.raises(ValueError, match="at least one legal move"):
        move_grammar(0)
    g = at_roll("classic", [1, 5, 2, 3, 4, 6])
    n = len(legal_actions(g))
    with ChatServer([last_move]) as server:
        constrained = make_agent(spec(server, "constrain=grammar", "seed=3"))
        keep, end = constrained.decide(g, np.random.default_rng(0))
        (req,) = server.requests
        assert req["grammar"] == move_grammar(n)
        assert constrained.last.move == n and not constrained.last.fallback
        assert decode_action(g, legal_actions(g)[n - 1]["action"]) == (keep, end)
        # without the option nothing is constrained, and the same question is another request:
        # an unconstrained answer is never served from a constrained one's cache entry
        free = make_agent(spec(server, "seed=3"))
        free.decide(g, np.random.default_rng(0))
        assert "grammar" not in server.requests[1] and free.stats.calls == 1
        again = make_agent(spec(server, "constrain=grammar", "seed=3"))
        again.decide(g, np.random.default_rng(0))
        assert len(server.requests) == 2 and again.stats.cached == 1


def test_piggyback_choice():
    rules = Ruleset(name="pig", piggyback=True)
    g = Game(rules, 2)
    g.roll([1, 1, 1, 2, 3, 4])
    g.act([1, 1, 1], True)  # banks 1,000 with three dice left: the next player may take them over
    assert g.phase is Phase.PIGGYBACK
    with ChatServer(["MOVE 1", "MOVE 2"]) as server:
        assert make_agent(spec(server)).piggyback(g, np.random.default_rng(0)) is True
        # another seed: asked again, not answered from the cache
        assert make_agent(spec(server, "seed=1")).piggyback(g, np.random.default_rng(0)) is False
        assert (
            "1. take over the dice and turn total the last player left" in server.requests[0]["messages"][0]["content"]
        )


# ---------------------------------------------------------------------- the cache
def test_rerun_issues_no_call(tmp_path):
    with ChatServer([last_move]) as server:
        first = make_agent(spec(server, "seed=3"))
        g1 = play_game("classic", [first, "random"], dice=5)
        calls = len(server.requests)
        assert calls == first.stats.calls > 0
        again = make_agent(spec(server, "seed=3"))
        g2 = play_game("classic", [again, "random"], dice=5)
        assert len(server.requests) == calls  # nothing asked
        assert again.stats.calls == 0 and again.stats.cached == first.stats.decisions
        assert g2.events == g1.events
        # another seed is another request
        other = make_agent(spec(server, "seed=4"))
        other.decide(at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0))
        assert len(server.requests) == calls + 1


def test_damaged_cache_entry_is_asked_again(tmp_path):
    with ChatServer(["MOVE 1"]) as server:
        agent = make_agent(spec(server))
        agent.decide(at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0))
        (f,) = (tmp_path / "cache" / "llm").rglob("*.json")
        f.write_text("{not json")
        agent.decide(at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0))
        assert len(server.requests) == 2 and json.loads(f.read_text())["text"] == "MOVE 1"


# ---------------------------------------------------------------------- bad answers
def test_malformed_and_illegal_answers_are_retried_with_the_reason():
    with ChatServer(["I would keep the ones.", "MOVE 99", "MOVE 2"]) as server:
        agent = make_agent(spec(server))
        g = at_roll("classic", [1, 2, 2, 2, 5, 5])
        moves = legal_actions(g)
        assert agent.decide(g, np.random.default_rng(0)) == decode_action(g, moves[1]["action"])
        d = agent.last
        assert d.answers == ["I would keep the ones.", "MOVE 99", "MOVE 2"] and d.move == 2 and not d.fallback
        assert d.problems == [
            "its last line 'I would keep the ones.' is not MOVE followed by a number",
            f"move 99 is not one of the legal moves, numbered 1 to {len(moves)}",
        ]
        assert agent.stats.bad_answers == 2 and agent.stats.fallbacks == 0
        # the retry carries the conversation: the bad answer, then the reason
        third = server.requests[2]["messages"]
        assert [m["role"] for m in third] == ["user", "assistant", "user", "assistant", "user"]
        assert third[3]["content"] == "MOVE 99" and "numbered 1 to" in third[4]["content"]


def test_all_bad_answers_fall_back_and_are_counted():
    with ChatServer(["no idea"]) as server:
        agent = make_agent(spec(server, "retries=1", "fallback=maxscore"))
        g = at_roll("classic", [1, 2, 2, 2, 5, 5])
        move = agent.decide(g, np.random.default_rng(0))
        assert move == make_agent("maxscore").decide(g, np.random.default_rng(0))
        assert agent.last.fallback and agent.last.move is None and len(agent.last.answers) == 2
        assert agent.stats.fallbacks == 1 and agent.stats.bad_answers == 2 and len(server.requests) == 2
    with ChatServer(["MOVE 0"]) as server:
        agent = make_agent(spec(server, "retries=0"))
        agent.decide(at_roll("classic", [1, 1, 2, 3, 4, 5]), np.random.default_rng(0))
        assert agent.last.fallback and len(server.requests) == 1  # random fallback, no retry


def test_late_answer_and_server_error_are_retried():
    with ChatServer([HANG, {"status": 500}, "MOVE 1"]) as server:
        agent = make_agent(spec(server, "timeout=0.5"))
        agent.decide(at_roll("classic", [1, 2, 2, 2, 5, 5]), np.random.default_rng(0))
        d = agent.last
        assert d.answers == [None, None, "MOVE 1"] and d.move == 1
        assert d.problems == ["no answer within 0.5 s", "the server answered HTTP 500"]
        assert agent.stats.late == 1 and agent.stats.bad_answers == 2
        # nothing came back, so the same request went again (no failed answer in the conversation)
        assert server.requests[0]["messages"] == server.requests[2]["messages"]


# ---------------------------------------------------------------------- errors that no retry mends
def test_setup_faults_are_clear_errors():
    with ChatServer(["MOVE 1"]) as server:
        with pytest.raises(AgentError, match=r"has no model 'nope' \(HTTP 404\): give a model it serves"):
            make_agent(spec(server, model="nope")).decide(
                at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0)
            )
        for status, words in ((401, "refused the API key"), (400, "rejected the request")):
            with ChatServer([{"status": status}]) as bad:
                with pytest.raises(AgentError, match=words):
                    make_agent(spec(bad)).decide(at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    with pytest.raises(AgentError, match=r"no server answers at http://127\.0\.0\.1:\d+/v1 .*start the server"):
        make_agent(f"llm:tiny,base_url=http://127.0.0.1:{port}/v1").decide(
            at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0)
        )


@pytest.mark.parametrize(
    "text, words",
    [
        ("llm", "needs a model after the colon"),
        ("llm:", "needs a model after the colon"),
        ("llm:,seed=1", "needs a model before the options"),
        ("llm:m,temprature=1", "unknown option 'temprature' \\(did you mean 'temperature'\\?\\)"),
        ("llm:m,seed", "option 'seed' is not key=value"),
        ("llm:m,seed=one", "seed='one': give an integer"),
        ("llm:m,temperature=-1", "temperature=-1.0: give a number >= 0"),
        ("llm:m,timeout=0", "timeout=0.0: give seconds, a number > 0"),
        ("llm:m,retries=-1", "retries=-1: give an integer >= 0"),
        ("llm:m,seed=1,seed=2", "option 'seed' is given twice"),
        ("llm:m,base_url=", "base_url= is empty"),
        ("llm:m,fallback=nosuchbot", "nosuchbot"),
        ("llm:m,template=/no/such/file.txt", "is not a file"),
        ("llm:m,constrain=regex", "constrain='regex': give none, or grammar"),
    ],
)
def test_bad_specs(text, words):
    with pytest.raises(AgentError, match=words):
        make_agent(text)


def test_bad_timeout_env(monkeypatch):
    monkeypatch.setenv("TENK_LLM_TIMEOUT", "soon")
    with pytest.raises(AgentError, match="TENK_LLM_TIMEOUT='soon'"):
        make_agent("llm:m")


def test_key_comes_from_the_environment_and_is_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-very-secret")
    with ChatServer(["MOVE 1"]) as server:
        agent = make_agent(spec(server, "key_env=MY_KEY"))
        agent.decide(at_roll("classic", [1, 2, 3, 3, 4, 6]), np.random.default_rng(0))
        assert server.headers[0]["authorization"] == "Bearer sk-very-secret"
    for f in (tmp_path / "cache").rglob("*"):
        if f.is_file():
            assert b"sk-very-secret" not in f.read_bytes()
    assert "sk-very-secret" not in pickle.dumps(agent).decode("latin-1")


def test_pickles_as_its_spec():
    agent = make_agent("llm:m,seed=2,retries=4")
    back = pickle.loads(pickle.dumps(agent))
    assert isinstance(back, LLMAgent) and back.name == agent.name
    assert back.settings == agent.settings and back.retries == 4


# ---------------------------------------------------------------------- the prompt
def test_template_from_file(tmp_path):
    with ChatServer(["MOVE 1"]) as server:
        f = tmp_path / "t.txt"
        f.write_text("Rules:\n$rules\nNow:\n$position\nMoves:\n$moves\n$answer\nCost: $$5\n")
        agent = make_agent(spec(server, f"template={f}"))
        g = at_roll("classic", [1, 2, 3, 3, 4, 6])
        agent.decide(g, np.random.default_rng(0))
        text = server.requests[0]["messages"][0]["content"]
        assert text.startswith("Rules:\n- 2 players take turns.") and text.endswith("Cost: $5\n")
    for body, words in (
        ("$rules $position $moves", r"lacks \$answer"),
        ("$rules $position $moves $answer $score", r"unknown fields \$score"),
        ("$rules $position $moves $answer costs $5", "a '\\$' that starts no field"),
    ):
        f.write_text(body)
        with pytest.raises(AgentError, match=words):
            make_agent(f"llm:m,template={f}")


@pytest.mark.parametrize(
    "text, k",
    [("MOVE 3", 3), ("move 2", 2), ("Move: 1", 1), ("I think...\n\nMOVE 4\n\n", 4), ("MOVE   12", 12)],
)
def test_parse_answer_accepts(text, k):
    assert parse_answer(text, 12) == k - 1


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n",
        "3",
        "MOVE three",
        "MOVE 3 because ones score",
        "MOVE 3.",
        "**MOVE 3**",
        "MOVE 0",
        "MOVE 13",
        "MOVE 2\nor maybe not",
    ],
)
def test_parse_answer_refuses(text):
    with pytest.raises(BadAnswer):
        parse_answer(text, 12)


def _variants() -> list[tuple[str, Ruleset]]:
    # the presets, the variant space's first draws, and the options neither holds
    odd = [
        Ruleset(
            name="odd-a",
            piggyback=True,
            exact_finish="forfeit",
            komi=300,
            four_twos_lose_all=True,
            half_straights=200,
            six_of_a_kind_wins="any",
            tie="shared",
            target=5000,
        ),
        Ruleset(name="odd-b", exact_finish="to_lowest", bust_penalty=1000, bust_penalty_after=2, zilch_payout=300),
    ]
    return [(r.name, r) for r in [*PRESETS.values(), *(sample_ruleset(s) for s in range(12)), *odd]]


@pytest.mark.parametrize("name, rules", _variants(), ids=[n for n, _ in _variants()])
def test_prompt_states_every_field(name, rules):
    """Each field of the ruleset is stated in the prompt's rules, with its value."""
    text = rules_text(rules, 3)
    r = rules
    assert "3 players take turns" in text and f"played with {r.num_dice} dice" in text
    assert f"bank a score of {r.target:,} or more" in text
    for c in combos(r):
        if not (c.name.startswith(("three pairs", "two triplets")) or c.name.endswith("as three pairs")):
            assert f"- {c.name}: {c.points:,} point" in text
    assert (f"three pairs (three different pairs in one roll of six): {r.three_pairs:,} points" in text) == bool(
        r.three_pairs and r.num_dice == 6
    )
    assert ("four of a kind plus a pair of another face counts as three pairs" in text) == (
        r.four_plus_pair_is_three_pairs
    )
    assert (f"two triplets in one roll of six: {r.two_triplets:,} points" in text) == bool(r.two_triplets)
    assert (f"straight 1-6: {r.straight:,}" in text) == bool(r.straight and r.num_dice == 6)
    assert (f"run 1-5: {r.short_straights:,}" in text) == bool(r.short_straights)
    assert (f"half straight 1-2-3: {r.half_straights:,}" in text) == bool(r.half_straights)
    assert f"three 1s: {r.three_ones:,} points" in text
    if r.multiples == "flat":
        assert f"four 2s: {r.flat_multiples[0]:,} points" in text
    assert {"doubling": "doubles the points", "flat": "flat amounts", "none": "no bonus past three"}[
        r.multiples
    ] in text
    if r.entry_threshold:
        assert f"may bank only a turn total of {r.entry_threshold:,} or more" in text
    else:
        assert "there is no entry threshold" in text
    assert (f"no turn total below {r.min_bank:,} may be banked" in text) == bool(r.min_bank)
    assert (f"At most {r.max_rolls} rolls per turn" in text) == bool(r.max_rolls)
    assert (f"adds {r.zilch_payout:,} points to the turn total" in text) == bool(r.zilch_payout)
    assert ("this turn, you must roll all" in text) == (r.hot_dice == "mandatory")
    assert ("this turn, you may roll all" in text) == (r.hot_dice == "optional")
    assert (
        f"busting on {r.bust_penalty_after} of your turns in a row costs {r.bust_penalty:,} points" in text
    ) == bool(r.bust_penalty)
    assert ("four or more 2s wipes your whole banked score" in text) == r.four_twos_lose_all
    assert ("six 1s in one roll wins" in text) == (r.six_of_a_kind_wins == "ones")
    assert ("six of a kind (any face) in one roll wins" in text) == (r.six_of_a_kind_wins == "any")
    assert ("Piggyback:" in text) == r.piggyback
    assert (f"second player starts the game with {r.komi:,} points" in text) == bool(r.komi)
    assert ("the highest starts" in text) == (r.turn_order == "highest_die")
    assert ("every other player gets exactly one more turn" in text) == (r.end == "final_round")
    assert ("one more turn of a single roll" in text) == (r.end == "one_more_roll")
    assert ("wins at once." in text.split("- End:")[1].splitlines()[0]) == (r.end == "immediate")
    assert ("reached" in text and "first." in text) == (r.end != "immediate" and r.tie == "first_to_target")
    assert ("share the win" in text) == (r.end != "immediate" and r.tie == "shared")
    assert ("its total is lost. Banking exactly" in text) == (r.exact_finish == "forfeit")
    assert ("goes to the lowest-scoring other player" in text) == (r.exact_finish == "to_lowest")


def test_default_template_uses_every_field():
    assert all(f"${f}" in DEFAULT_TEMPLATE for f in ("rules", "position", "moves", "answer"))


# ---------------------------------------------------------------------- graded by tenk analyze
def test_analysis_counts_the_answers_and_keeps_what_the_model_said():
    from tenk_env.evaluation.analysis import analyse

    imm = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")
    answers = iter(["MOVE 1", "hmm"] * 1000)  # every other answer is malformed

    def script(messages):
        return next(answers) if len(messages) == 1 else last_move(messages)

    with ChatServer([script]) as server:
        a = analyse(spec(server), imm, 4, seed=3, top=3)
        st = a.report.agent_stats
        assert st["decisions"] == a.report.decisions > 0
        assert st["calls"] == len(server.requests) and st["cached"] == 0 and st["fallbacks"] == 0
        assert st["bad_answers"] == st["calls"] - st["decisions"] > 0
        assert st["prompt_tokens"] == 100 * st["calls"]
        said = [m["said"] for m in a.mistakes]
        assert said and all(s["answers"][-1] == "MOVE 1" or s["answers"][-1].startswith("Thinking") for s in said)
        n, bad = st["decisions"], st["bad_answers"]
        assert (
            f"; {bad} bad answers in {n} decisions ({bad / n:.0%}), 0 played by the fallback, "
            f"{st['calls']} calls, {100 * st['calls']:,} + {st['completion_tokens']:,.0f} tokens, "
        ) in str(a.report)
        # the analysis again: every answer from the cache, the same games
        calls = len(server.requests)
        b = analyse(spec(server), imm, 4, seed=3, top=3)
        assert (
            len(server.requests) == calls
            and b.report.agent_stats["cached"]
            == b.report.agent_stats["decisions"] + (b.report.agent_stats["bad_answers"])
        )
        assert np.array_equal(a.game_regret, b.game_regret)
        # the rerun's line says where its answers came from, not only that it sent no request
        assert f"0 calls ({b.report.agent_stats['cached']:,.0f} answers from the cache)" in str(b.report)


def test_the_suite_keeps_the_answer_counts_of_each_ruleset():
    from tenk_env.evaluation.benchmark import vs_optimal

    imm = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")
    answers = iter(["hmm", "MOVE 1"] * 1000)  # every other answer is malformed

    with ChatServer([lambda m: next(answers)]) as server:
        s = vs_optimal(spec(server), imm, regret_games=4, seed=3, workers=1)
        st = s.agent_stats  # what tenk suite evaluate writes for the ruleset
        assert s.how == "regret over 4 games" and st["decisions"] > 0
        assert st["calls"] == len(server.requests) == st["decisions"] + st["bad_answers"]
        assert st["bad_answers"] == st["decisions"] and st["fallbacks"] == 0


# ---------------------------------------------------------------------- the game record
def test_record_keeps_what_the_model_said_and_still_replays(tmp_path):
    from tenk_env.records import load_jsonl, replay, save_jsonl
    from tenk_env.web.games import analyse as analyse_record

    imm = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")
    answers = iter(["no idea", "MOVE 1"] * 1000)
    with ChatServer([lambda messages: next(answers)]) as server:
        agent = make_agent(spec(server))
        game = play_game(imm, [agent, "random"], dice=11)
    kept = [e for e in game.events if e["type"] == "keep"]
    mine = [e for e in kept if e["player"] == 0]
    assert mine and all(
        e["said"]["answers"] == ["no idea", "MOVE 1"] and e["said"]["move"] == 1 and not e["said"]["fallback"]
        for e in mine
    )
    assert all("said" not in e for e in kept if e["player"] == 1)  # the bot says nothing
    save_jsonl(game.events, tmp_path / "g.jsonl")
    events = load_jsonl(tmp_path / "g.jsonl")
    assert replay(events).scores == game.scores
    # the Analyse view of tenk serve shows it at each of the model's decisions
    a = analyse_record(events, ["model", "random"])
    said = [d["said"] for d in a["decisions"] if d["player"] == 0]
    assert said == [e["said"] for e in mine]
    assert all("said" not in d for d in a["decisions"] if d["player"] == 1)


def test_a_template_file_keys_the_agents_games(tmp_path):
    from tenk_env.io import file_sha256
    from tenk_env.policies.base import AgentSpec

    f = tmp_path / "t.txt"
    f.write_text("$rules\n$position\n$moves\n$answer\n")
    s = AgentSpec.parse(f"llm:m,seed=1,template={f}")
    assert s.file == f and s.sha256 == file_sha256(f)
    assert AgentSpec.parse("llm:m,seed=1").file is None  # the built-in template: the spec's text keys them
    with pytest.raises(AgentError, match="is not a file"):
        AgentSpec.parse(f"llm:m,template={tmp_path / 'gone.txt'}")


def test_plays_a_free_for_all_in_worker_processes(tmp_path, capsys):
    """tenk ffa sends the agent to worker processes as its spec; each makes its own client."""
    from tenk_env.cli.main import main

    rules = tmp_path / "short.yaml"
    PRESETS["classic"].replace(target=500, entry_threshold=0, end="immediate", name="short500").save(rules)
    with ChatServer([last_move]) as server:
        argv = ["ffa", spec(server), "--players", "3", "--games", "6", "--rules", str(rules)]
        assert main([*argv, "--workers", "2", "--baselines", "random", "--opponents", "hold:300", "hold:300"]) == 0
        assert len(server.requests) > 0
    out = " ".join(capsys.readouterr().out.split())
    assert "llm:tiny" in out and "random" in out


def test_tenk_serve_watch_shows_what_the_model_said(tmp_path):
    """With --allow-cmd a watched game seats the model, and its decisions come back with its answers."""
    from fastapi.testclient import TestClient

    from tenk_env.web.app import create_app

    imm = PRESETS["classic"].replace(target=1000, end="immediate", name="imm1000")
    imm.save(tmp_path / "imm1000.yaml")
    app = create_app([str(tmp_path / "imm1000.yaml")], solve_in_background=False, allow_cmd=True)
    with ChatServer([last_move]) as server:
        w = TestClient(app, base_url="http://127.0.0.1").post(
            "/api/watch", json={"rules": "imm1000", "agents": [spec(server), "dicenow"], "seed": 1}
        )
    assert w.status_code == 200, w.json()
    mine = [d for d in w.json()["decisions"] if d["player"] == 0]
    assert mine and all(d["said"]["answers"][-1].endswith(f"MOVE {d['said']['move']}") for d in mine)
    assert all("said" not in d for d in w.json()["decisions"] if d["player"] == 1)


def test_moves_that_pass_an_exact_target_say_so():
    r = Ruleset(name="exact", exact_finish="forfeit", target=1000, entry_threshold=0)
    g = Game(r, 2)
    g.scores[0], g.on_board[0] = 900, True
    g.roll([1, 5, 2, 3, 3, 6])
    text = moves_text(g, legal_actions(g))
    assert "1. set aside 1 (100 points) and roll 5 dice on, with a turn total of 100" in text
    assert "set aside 1 5 (150 points) and roll on: this passes the target of 1,000, so the turn ends at once" in text
    assert "set aside 1 (100 points) and end the turn, banking 100 (score 1,000)" in text
