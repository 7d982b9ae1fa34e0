"""`tenk suite`'s results: a file per set of settings, values checked when read, counts bounded
before any work, regrets in percentage points, tables that keep their figures at 80 columns.

The results here are made up (no ruleset is solved): what is tested is how they are named,
read, ranked and printed.
"""

from __future__ import annotations

import io
import json
import os
import re

import pytest
from rich.console import Console

from tenk_env import variants as V
from tenk_env.cli import cmd_suite
from tenk_env.cli.main import main
from tenk_env.evaluation import suite as S
from tenk_env.evaluation.analysis import KINDS
from tenk_env.evaluation.suite import RulesetScore, SuiteResult
from tenk_env.rules import PRESETS

LONG = "cmd:python3 /very/long/path/to/some/agent_program.py --flag value"
ZOO_WHAT = (
    "any ruleset (trained on the first 200 rulesets of the train split), 2 players, afterstate value net "
    "[64, 64] + turn expectimax, 600,019 learner turns"
)


def result(
    agent: str = "dicenow",
    regrets=(0.0366, 0.0366),
    *,
    exact: bool = False,
    games: int = 1000,
    seed: int = 0,
    split: str = "test",
    sha: str | None = None,
    hashes=None,
) -> SuiteResult:
    """A result as tenk suite evaluate writes one: exact, or by regret with a +-0.04 pp interval."""
    how = "exact" if exact else f"regret over {games:,} games"
    hashes = hashes or [f"hash{k}" for k in range(len(regrets))]
    half = 0.0 if exact else 4e-4
    scores = [
        RulesetScore(
            f"variant1-{k}",
            h,
            0.5 - g,
            (0.5 - g - half, 0.5 - g + half),
            how,
            g,
            by_kind={} if exact else dict(zip(KINDS, (g / 2, g / 4, g / 4))),
        )
        for k, (h, g) in enumerate(zip(hashes, regrets))
    ]
    mean = sum(regrets) / len(regrets)
    ci = (mean, mean) if exact else (mean - 4e-4, mean + 4e-4)
    return SuiteResult(agent, sha, split, V.SPACE_VERSION, games, seed, scores, mean, ci, 1.0, "tenk suite evaluate")


def _flat(text: str) -> str:
    return " ".join(text.split())


def _write(path, res: SuiteResult, mtime: int | None = None):
    S.write_result(res, path)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


# ----------------------------------------------------------------------------- file names


def test_result_files_are_named_by_everything_that_produced_them(tmp_path):
    name = lambda r: S.result_path(tmp_path, r).name  # noqa: E731
    exact = result(exact=True, split="train", regrets=(0.03,))
    regret = result(games=400, split="train", regrets=(0.03,))
    assert name(exact) == "dicenow-train-n1-space1-exact.json"
    assert name(regret) == "dicenow-train-n1-space1-regret-g400-s0.json"
    assert name(result(exact=True)) == "dicenow-test-space1-exact.json"
    # an exact result does not depend on the games and seed it was given
    assert name(result(exact=True, games=7, seed=3)) == "dicenow-test-space1-exact.json"
    mixed = result(exact=True, games=400)
    mixed.rulesets[1].how = "regret over 400 games"
    assert name(mixed) == "dicenow-test-space1-mixed-g400-s0.json"
    others = [
        exact,
        regret,
        mixed,
        result(games=400, seed=1, split="train", regrets=(0.03,)),
        result(games=400, split="train", regrets=(0.03, 0.03)),
        result(games=400),
        result(games=401),
    ]
    assert len({name(r) for r in others}) == len(others)
    # specs that clean to one name, and one spec whose file changed, still get files of their own
    a, b = name(result("cmd:python a.py")), name(result("cmd:python/a.py"))
    assert a != b and a.startswith("cmd_python_a.py-") and b.startswith("cmd_python_a.py-")
    assert name(result("onnx:m.onnx", sha="1" * 16)) != name(result("onnx:m.onnx", sha="2" * 16))
    long = name(result(LONG))
    assert len(long) < 110 and "agent_program.py_--flag_value" in long and long.startswith("cmd_python3_")


@pytest.fixture
def fake_evaluate(monkeypatch):
    """tenk suite evaluate without the work: the result its settings would give."""
    calls = []

    def fake(agent, split, *, games, seed, workers, count, exact, command, log):
        calls.append((agent, split, games, seed, count, exact))
        n = len(V.split(split, count))
        log(f"1/{n} variant1-0: 46.34% against optimal, regret 3.66 pp/game")
        return result(agent, (0.0366,) * n, exact=exact, games=games, seed=seed, split=split)

    monkeypatch.setattr(cmd_suite, "evaluate_suite", fake)
    return calls


def test_a_regret_run_beside_an_exact_one_keeps_both(fake_evaluate, tmp_path, capsys):
    out = tmp_path / "suite"
    base = ["suite", "evaluate", "dicenow", "--split", "train", "--count", "1", "--out", str(out)]
    assert main(base) == 0
    assert main(base + ["--regret", "--games", "400"]) == 0
    exact, regret = out / "dicenow-train-n1-space1-exact.json", out / "dicenow-train-n1-space1-regret-g400-s0.json"
    assert sorted(out.iterdir()) == [exact, regret]
    assert [s["how"] for s in json.loads(exact.read_text())["rulesets"]] == ["exact"]
    assert [s["how"] for s in json.loads(regret.read_text())["rulesets"]] == ["regret over 400 games"]
    first = _flat(capsys.readouterr().out)
    assert "earlier result" not in first
    # the regret in percentage points, named; the file keeps the probability
    assert "mean regret 3.66 pp/game [3.66, 3.66], 46.34% against optimal" in first
    assert "mean regret 3.66 pp/game [3.62, 3.70]" in first
    assert "regret (pp/game) by kind of mistake" in first and "banked, rolling was better 1.83;" in first
    assert json.loads(regret.read_text())["mean_regret"] == 0.0366
    # the same settings again: its own file, replaced, and said so
    assert main(base + ["--regret", "--games", "400"]) == 0
    again = _flat(capsys.readouterr().out)
    assert again.count("held an earlier result of these same settings") == 1 and str(regret) in again
    assert sorted(out.iterdir()) == [exact, regret]


# ----------------------------------------------------------------------------- the leaderboard


def _rows(md: str) -> list[str]:
    return [r for r in md.splitlines() if r.startswith("| ") and r[2].isdigit()]


def test_the_leaderboard_reads_old_and_new_names_and_keeps_one_row_per_agent(tmp_path, capsys):
    d = tmp_path / "suite"
    # written before the names held the measurement (by regret), and later exactly: the exact one stays
    old = _write(d / "dicenow-test-space1.json", result("dicenow", (0.0380, 0.0360)), 1_000)
    exact = _write(S.result_path(d, result("dicenow", exact=True)), result("dicenow", exact=True), 500)
    # more analysed games stay, though older
    many = _write(S.result_path(d, result("maxscore", (0.0190, 0.0184))), result("maxscore", (0.0190, 0.0184)), 100)
    few = _write(
        S.result_path(d, result("maxscore", (0.02, 0.02), games=200)),
        result("maxscore", (0.02, 0.02), games=200),
        2_000,
    )
    # alike but for the seed: the newer stays
    a = _write(S.result_path(d, result("greedy", (0.14, 0.14))), result("greedy", (0.14, 0.14)), 100)
    b = _write(
        S.result_path(d, result("greedy", (0.142, 0.142), seed=1)), result("greedy", (0.142, 0.142), seed=1), 200
    )
    assert main(["suite", "leaderboard", str(d)]) == 0
    got = capsys.readouterr()
    assert _rows(got.out) == [
        "| 1 | `maxscore` | bot | 1.87 [1.83, 1.91] | 48.13% | regret over 1,000 games |",
        "| 2 | `dicenow` | bot | 3.66 [3.66, 3.66] | 46.34% | exact |",
        "| 3 | `greedy` | bot | 14.20 [14.16, 14.24] | 35.80% | regret over 1,000 games |",
    ]
    assert "| rank | agent | what | mean regret (pp/game) [95%] | vs optimal | measured |" in got.out
    assert got.err.splitlines() == [  # in the order the files were written
        f"left out {str(a)!r}: the same agent and rulesets as {str(b)!r}, kept as the newer",
        f"left out {str(old)!r}: the same agent and rulesets as {str(exact)!r}, kept as measured exactly on more "
        "rulesets",
        f"left out {str(few)!r}: the same agent and rulesets as {str(many)!r}, kept as measured over more analysed "
        "games",
    ]
    # files named one by one (a shell's glob) read the same
    assert main(["suite", "leaderboard", *map(str, (old, exact, many, few, a, b))]) == 0
    assert _rows(capsys.readouterr().out) == _rows(got.out)
    # a folder that also holds another split's results: one split is picked
    presets = result("dicenow", (0.03,) * 10, split="presets")
    _write(S.result_path(d, presets), presets)
    assert main(["suite", "leaderboard", str(d)]) == 2
    assert (
        "the files given hold results of several splits (presets, test), which cannot share a table; pick one "
        "with --split"
    ) in _flat(capsys.readouterr().out)
    assert main(["suite", "leaderboard", str(d), "--split", "test"]) == 0
    again = capsys.readouterr()
    assert _rows(again.out) == _rows(got.out) and "left out 1 result(s) of other splits than 'test'" in again.err


@pytest.mark.parametrize(
    "spoil, problem",
    [
        (lambda d: d.update(mean_regret=float("nan")), "mean_regret = nan, not a finite number"),
        (lambda d: d.update(mean_regret=-5), "mean_regret = -5, outside [0, 1]"),
        (lambda d: d["rulesets"][0].update(win_rate="0.4634"), "rulesets[0].win_rate = '0.4634', not a finite number"),
        (lambda d: d["rulesets"][1].update(regret=float("inf")), "rulesets[1].regret = inf, not a finite number"),
        (lambda d: d["rulesets"][0].update(win_rate=1.5, regret=-1.0), "rulesets[0].win_rate = 1.5, outside [0, 1]"),
        (
            lambda d: d["rulesets"][0].update(regret=0.01),
            "rulesets[0].regret = 0.01 is not 0.5 minus its win rate 0.4634",
        ),
        (lambda d: d.update(mean_regret=0.01), "mean_regret = 0.01 is not the mean of its rulesets' regrets (0.0366)"),
        (lambda d: d.update(mean_regret_ci=[0.5, 0.6]), "mean_regret_ci = [0.5, 0.6] does not hold its figure 0.0366"),
        (lambda d: d["rulesets"][0].update(ci=["a", 1]), "rulesets[0].ci = 'a', not a finite number"),
        (lambda d: d["rulesets"][0]["by_kind"].update(x=None), "rulesets[0].by_kind['x'] = None, not a finite number"),
        (
            lambda d: d["rulesets"][0].update(agent_stats={"decisions": -3}),
            "rulesets[0].agent_stats['decisions'] = -3, outside [0, inf]",
        ),
        (
            lambda d: d["rulesets"][0].update(agent_stats={"calls": 3}),
            "rulesets[0].agent_stats = {'calls': 3}, without the counts of decisions and answers",
        ),
        (lambda d: d["rulesets"][0].update(agent_stats=[1]), "rulesets[0].agent_stats = [1], not a mapping of counts"),
        (lambda d: d.update(split="dev"), "split = 'dev', not one of the suite's splits (train, test, presets, fresh)"),
        (lambda d: d.update(games=1.5), "games = 1.5, not a whole number >= 0"),
        (lambda d: d.update(rulesets=[]), "rulesets = [], no ruleset measured"),
    ],
)
def test_a_result_out_of_range_is_left_out_by_name(tmp_path, capsys, spoil, problem):
    good = _write(tmp_path / "good.json", result("maxscore"))
    d = json.loads(result("bad").to_json())
    spoil(d)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=re.escape(problem)):
        S.read_result(bad)
    assert main(["suite", "leaderboard", str(good), str(bad)]) == 0
    got = capsys.readouterr()
    assert [r.split("|")[2].strip() for r in _rows(got.out)] == ["`maxscore`"]
    assert got.err.splitlines() == [f"skipped: suite result {str(bad)!r} holds {problem}; evaluate the agent again"]


def test_results_given_as_objects_are_checked_too():
    nan = result("x")
    nan.mean_regret = float("nan")
    lines = []
    md = S.leaderboard([result("maxscore"), nan], log=lines.append)
    assert len(_rows(md)) == 1 and lines == ["skipped result 2: it holds mean_regret = nan, not a finite number"]
    with pytest.raises(ValueError, match="no results to rank"):
        S.leaderboard([nan])


def test_names_cannot_break_a_markdown_row_or_turn_into_markup(tmp_path, monkeypatch, capsys):
    agents = ["cmd:python a.py | tee log", "cmd:echo `x`", "[bold]x[/bold]"]
    for k, a in enumerate(agents):
        _write(tmp_path / f"r{k}.json", result(a, (0.01 * (k + 1),) * 2))
    assert main(["suite", "leaderboard", str(tmp_path)]) == 0
    rows = _rows(capsys.readouterr().out)
    cells = [re.split(r"(?<!\\)\|", r)[1:-1] for r in rows]
    assert [len(c) for c in cells] == [6, 6, 6]
    assert [c[1].strip() for c in cells] == [r"`cmd:python a.py \| tee log`", "`` cmd:echo `x` ``", "`[bold]x[/bold]`"]
    # a terminal gets a rich table: the names are printed as they are, not read as markup
    out = io.StringIO()
    monkeypatch.setattr(cmd_suite, "console", Console(file=out, width=80, force_terminal=True, color_system=None))
    assert main(["suite", "leaderboard", str(tmp_path)]) == 0
    assert "| rank |" not in out.getvalue() and "[bold]x[/bold]" in _column(out.getvalue(), 2)


# ----------------------------------------------------------------------------- tables at 80 columns


def _column(text: str, k: int) -> str:
    """Column ``k`` of a rendered rich table, its folded pieces read down and joined."""
    return "".join("".join(line.split("│")[k].split()) for line in text.splitlines() if line.count("│") == 7)


def _rendered(table) -> str:
    c = Console(file=io.StringIO(), width=80, record=True)
    c.print(table)
    text = c.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    return text


def test_the_leaderboard_table_keeps_every_figure_at_80_columns(tmp_path, monkeypatch):
    results = [
        result(LONG, (0.0187, 0.0189)),
        result("zoo:generalist_afterstate", (0.0054, 0.0056)),
        result("greedy", (0.1420, 0.1422)),
        result("maxscore", (0.02, 0.02), games=20),
    ]
    results[3].mean_regret_ci = None  # too few games for an interval
    describe = lambda a: ZOO_WHAT if a.startswith("zoo:") else cmd_suite._describe(a)  # noqa: E731
    split, n, version, rows = S.leaderboard_rows(results, describe)
    text = _rendered(cmd_suite.leaderboard_table(split, n, version, rows))
    figures = [
        "0.55 [0.51, 0.59]",
        "49.45%",
        "1.88 [1.84, 1.92]",
        "48.12%",
        "2.00 (no interval)",
        "48.00%",
        "14.21 [14.17, 14.25]",
        "35.79%",
    ]
    assert [r[3] for r in rows] + [r[4] for r in rows] == figures[0::2] + figures[1::2]
    for f in figures:
        assert f in text
    # the long name folds, whole: the agent column's pieces, read down, give it back
    assert "".join(LONG.split()) in _column(text, 2)
    # the same through the command, on a terminal 80 columns wide
    for k, r in enumerate(results):
        _write(tmp_path / f"r{k}.json", r)
    out = io.StringIO()
    monkeypatch.setattr(cmd_suite, "console", Console(file=out, width=80, force_terminal=True, color_system=None))
    assert main(["suite", "leaderboard", str(tmp_path)]) == 0
    for f in figures:
        assert f in out.getvalue()
    assert max(len(line) for line in out.getvalue().splitlines()) <= 80


def test_the_leaderboard_says_what_kind_of_agent_each_row_is():
    assert cmd_suite._describe("dicenow") == "bot"
    assert cmd_suite._describe("cmd:python -m my_agent") == "external program"
    assert cmd_suite._describe("llm:smollm2,base_url=http://127.0.0.1:8080/v1") == "language model"


def test_a_language_models_row_says_how_it_answered(tmp_path, capsys):
    model = result("llm:smollm2,base_url=http://127.0.0.1:8080/v1", (0.40, 0.38))
    counts = [
        {"decisions": 40, "calls": 30, "cached": 10, "prompt_tokens": 9000, "completion_tokens": 200,
         "seconds": 36.0, "bad_answers": 12, "late": 1, "fallbacks": 4},
        {"decisions": 60, "calls": 60, "cached": 0, "prompt_tokens": 13000, "completion_tokens": 300,
         "seconds": 70.0, "bad_answers": 3, "late": 0, "fallbacks": 1},
    ]  # fmt: skip
    for score, c in zip(model.rulesets, counts, strict=True):
        score.agent_stats = c
    assert S.agent_totals(model)["bad_answers"] == 15 and S.agent_totals(result("dicenow")) == {}
    _write(tmp_path / "model.json", model)
    _write(tmp_path / "bot.json", result("dicenow"))
    # the counts travel in the file, ruleset by ruleset
    assert S.read_result(tmp_path / "model.json").rulesets[1].agent_stats == counts[1]
    assert main(["suite", "leaderboard", str(tmp_path)]) == 0
    rows = _rows(capsys.readouterr().out)
    what = {r.split("|")[2].strip(): r.split("|")[3].strip() for r in rows}
    assert what["`dicenow`"] == "bot"
    assert what["`llm:smollm2,base_url=http://127.0.0.1:8080/v1`"] == (
        "language model; 15 bad answers in 100 decisions (15%), 5 played by the fallback, 90 calls "
        "(10 answers from the cache)"
    )


def test_a_result_written_before_answers_were_counted_still_reads(tmp_path):
    d = json.loads(result("maxscore").to_json())
    for r in d["rulesets"]:
        del r["agent_stats"]
    (tmp_path / "old.json").write_text(json.dumps(d))
    assert all(s.agent_stats == {} for s in S.read_result(tmp_path / "old.json").rulesets)


def test_the_curve_table_keeps_every_figure_at_80_columns():
    points = [(100_005, result(LONG, (0.0081, 0.0081))), (1_200_048, result(LONG, (0.0062, 0.0062)))]
    points[1][1].mean_regret_ci = None
    title = f"run_{'x' * 90} on split 'test': mean regret against optimal play"
    text = _rendered(cmd_suite.curve_table(title, "learner turns", points))
    for f in ("100,005", "0.81 [0.77, 0.85]", "49.19%", "1,200,048", "0.62 (no interval)", "49.38%"):
        assert f in text
    assert "mean regret (pp/game)" in text


# ----------------------------------------------------------------------------- counts


@pytest.fixture
def bounded_split(monkeypatch):
    """The real split, which must never be asked for more rulesets than a command allows (an
    unchecked count would draw rulesets until memory runs out)."""
    real = V.split

    def split(name, count=None, seed=0):
        assert count is None or count <= S.MAX_TRAIN_COUNT, f"split({name!r}, {count}) was asked for"
        return real(name, count, seed)

    monkeypatch.setattr(V, "split", split)


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["suite", "list", "--split", "train", "--count", "1000000000000"],
            "argument --count: 1000000000000: give from 1 to 10,000 training rulesets",
        ),
        (
            ["suite", "solve", "--split", "train", "--count", "1e9"],
            "argument --count: 1e9: give from 1 to 10,000 training",
        ),
        (
            ["suite", "solve", "--split", "train", "--count", "1.5"],
            "argument --count: '1.5' is not a whole number; give one from 1 to 10,000",
        ),
        (["suite", "list", "--split", "train", "--count", "many"], "argument --count: 'many' is not a number"),
        (
            ["suite", "evaluate", "dicenow", "--games", "1e7"],
            "argument --games: 1e7: give from 2 to 1,000,000 analysed games a ruleset",
        ),
        (["suite", "evaluate", "dicenow", "--games", "1"], "argument --games: 1: give from 2 to 1,000,000"),
        (
            ["suite", "evaluate", "dicenow", "--workers", "0"],
            "argument --workers: 0: give from 1 to 256 worker processes",
        ),
        (["suite", "curve", "runs/x", "--games", "2.5"], "argument --games: '2.5' is not a whole number"),
    ],
)
def test_counts_out_of_range_are_refused_before_any_work(argv, message, bounded_split, fake_evaluate, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert fake_evaluate == []


def test_games_past_the_analysis_memory_are_refused_before_any_work(fake_evaluate, capsys):
    assert main(["suite", "evaluate", "dicenow", "--games", "999998"]) == 2
    out = _flat(capsys.readouterr().out)
    assert "error: --games 999,998: the analysis keeps about" in out and "give at most" in out
    assert fake_evaluate == []


def test_the_library_bounds_its_counts_too(bounded_split):
    with pytest.raises(
        ValueError, match="count 1000000000000: give a whole number of training rulesets from 1 to 10,000"
    ):
        S.evaluate_suite("dicenow", "train", count=10**12, log=lambda m: None)
    with pytest.raises(
        ValueError, match=r"count picks how many training rulesets to take \(or fresh ones\); the test split"
    ):
        S.evaluate_suite("dicenow", "test", count=3, log=lambda m: None)
    with pytest.raises(ValueError, match="games = 10000000: the analysis keeps about"):
        S.evaluate_suite("dicenow", "presets", games=10**7, log=lambda m: None)


# ----------------------------------------------------------------------------- the learning curve's files


def test_a_curve_reads_back_results_written_under_the_old_names(tmp_path, monkeypatch):
    rs = V.split("test")[:2]
    monkeypatch.setattr(V, "split", lambda name, count=None, seed=0: rs)
    monkeypatch.setattr(S, "kept_nets", lambda run: ("learner turns", [(100, "maxscore"), (200, "greedy")]))
    measured = []

    def fake(agent, split, *, games, seed, workers, exact, log, command):
        measured.append(agent)
        return result(agent, (0.02, 0.02), games=games, seed=seed, hashes=[r.hash for r in rs])

    monkeypatch.setattr(S, "evaluate_suite", fake)
    hashes = [r.hash for r in rs]
    _write(
        S._legacy_path(tmp_path / "suite", "maxscore", "test", None),
        result("maxscore", (0.01, 0.01), games=200, hashes=hashes),
    )
    # the same name, other games: measured again, into a file of its own
    _write(
        S._legacy_path(tmp_path / "suite", "greedy", "test", None),
        result("greedy", (0.1, 0.1), games=100, hashes=hashes),
    )
    unit, points = S.learning_curve(tmp_path, "test", games=200, log=lambda m: None)
    assert measured == ["greedy"]
    assert [(n, r.agent, r.mean_regret) for n, r in points] == [(100, "maxscore", 0.01), (200, "greedy", 0.02)]
    assert (tmp_path / "suite" / "greedy-test-space1-regret-g200-s0.json").is_file()
    assert (tmp_path / "suite" / "greedy-test-space1.json").is_file()  # the other games' result is kept


# ----------------------------------------------------------------------------- fresh rulesets


def test_fresh_rulesets_are_seeded_and_in_no_other_split():
    a = V.fresh(5, seed=3)
    assert [r.hash for r in a] == [r.hash for r in V.fresh(5, seed=3)]  # the same on every run
    assert [r.hash for r in V.fresh(3, seed=3)] == [r.hash for r in a[:3]]
    assert not {r.hash for r in a} & {r.hash for r in V.fresh(5, seed=4)}
    assert len({r.hash for r in a}) == 5
    others = {r.hash for r in V.split("test")} | {r.hash for r in PRESETS.values()}
    others |= {r.hash for r in V.split("train", S.MAX_TRAIN_COUNT)}
    assert not {r.hash for r in a} & others
    for r in a:  # each is a sampler seed's ruleset, far past every training seed
        seed = int(r.name.rsplit("-", 1)[1])
        assert seed >= V.FRESH_SEEDS[0] and V.sample_ruleset(seed) == r
    assert V.split("fresh", 2, seed=3) == a[:2]
    with pytest.raises(ValueError, match="give an integer >= 0"):
        V.fresh(1, seed=-1)


def test_fresh_through_the_commands(fake_evaluate, tmp_path, capsys):
    assert main(["suite", "list", "--split", "fresh", "--count", "3", "--seed", "7"]) == 0
    listed = _flat(capsys.readouterr().out)
    assert all(r.hash in listed for r in V.fresh(3, 7))
    out = tmp_path / "suite"
    assert main(["suite", "evaluate", "dicenow", "--fresh", "2", "--seed", "7", "--out", str(out)]) == 0
    assert fake_evaluate[-1] == ("dicenow", "fresh", 1000, 7, 2, True)
    (f,) = out.iterdir()
    assert f.name == "dicenow-fresh-n2-draw7-space1-exact.json"
    # the leaderboard says the rulesets were drawn at evaluation time, and with which seed
    assert main(["suite", "leaderboard", str(out)]) == 0
    assert "Split `fresh` (2 rulesets, drawn at evaluation time with seed 7" in _flat(capsys.readouterr().out)
    # --fresh is the fresh split: not beside another one
    assert main(["suite", "evaluate", "dicenow", "--fresh", "2", "--split", "test"]) == 2
    assert "give it without --split and --count" in _flat(capsys.readouterr().out)
