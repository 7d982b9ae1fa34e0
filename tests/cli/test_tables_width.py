"""Tables that fit the terminal: from 80 columns up, `tenk tournament` and `tenk zoo` show every
figure and interval whole, however long an agent's spec; long names are shortened or folded. And
one unit for a regret wherever a person reads one (pp/game), machine files keeping the probability."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys

import pytest
from rich.console import Console

from tenk_env.cli.cmd_tournament import _elo, _pct, render
from tenk_env.cli.cmd_zoo import _strength, list_zoo
from tenk_env.evaluation.tournament import TournamentConfig, run_tournament
from tenk_env.policies import zoo

from support import ROOT

WIDTHS = (80, 100, 120)
# the tournament's charts name the long spec in full
pytestmark = pytest.mark.filterwarnings("ignore:Tight layout not applied")
#: the footnote of full names and a file agent's content key are one soft-wrapped line each, so
#: a spec or a path copies whole from them
FOOTNOTE = "agents shortened above: "
KEY = ": sha256 "


def _lines(text: str, width: int) -> list[str]:
    lines = text.splitlines()
    long = [x for x in lines if len(x.rstrip()) > width and not x.startswith(FOOTNOTE) and KEY not in x]
    assert not long, long
    return lines


def _render(res, width: int) -> str:
    buf = io.StringIO()
    render(res, Console(width=width, file=buf, color_system=None))
    return buf.getvalue()


@pytest.fixture(scope="module")
def long_spec(tmp_path_factory) -> str:
    """A `cmd:` agent behind a long path and arguments, as a user's own program often is."""
    prog = tmp_path_factory.mktemp("agent") / "a/very/long/path/to/the/agent/program.py"
    prog.parent.mkdir(parents=True)
    shutil.copy(ROOT / "tenk_env/policies/cmd_example.py", prog)
    return f"cmd:{sys.executable} {prog} --option value"


@pytest.fixture(scope="module")
def tournaments(long_spec, tmp_path_factory):
    out = tmp_path_factory.mktemp("tournaments")
    return {
        n: run_tournament(
            TournamentConfig(
                agents=[long_spec, "dicenow", "hold:300"],
                rules="classic",
                games=6,
                seed=0,
                players=n,
                name=f"t{n}",
                out=str(out),
                workers=1,
            )
        )
        for n in (2, 3)
    }


def _figures(res) -> list[str]:
    """Every figure and interval of the tournament's tables, as they print."""
    out = []
    if res.config.players == 2:
        for r in res.results:
            out += [
                f"{r.wins_a}-{r.wins_b}-{r.ties}",
                f"{_pct(r.win_rate_a)} [{r.ci_low:.1%}, {r.ci_high:.1%}]",
                f"{r.mean_margin:+,.0f}",
                f"{r.mean_turns:.1f}",
                _pct(r.first_seat_win_rate),
            ]
    else:
        for r in res.results:
            for k in range(len(r.agents)):
                out += [
                    f"{_pct(r.win_rate[k])} [{_pct(r.ci_low[k])}, {_pct(r.ci_high[k])}]",
                    f"{r.mean_score[k]:,.0f}",
                    f"{r.points_per_turn[k]:.0f}",
                    _pct(r.bust_rate[k]),
                ]
    for r, w in zip(res.ratings, res.win_share):
        out += [_elo(r.elo), f"[{_elo(r.ci_low)}, {_elo(r.ci_high)}]", f"{r.comparisons:,}", _pct(r.score)]
        if res.config.players > 2:
            out.append(f"{_pct(w.share)} [{_pct(w.ci_low)}, {_pct(w.ci_high)}]")
    return out


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("players", (2, 3))
def test_tournament_tables_keep_every_figure_beside_a_long_spec(tournaments, long_spec, players, width):
    res = tournaments[players]
    text = _render(res, width)
    lines = _lines(text, width)
    rows = [x for x in lines if "dicenow" in x and "hold:300" in x] if players == 2 else []
    assert len(rows) == (1 if players == 2 else 0)
    for figure in _figures(res):
        assert figure in text, f"{figure!r} missing at {width} columns:\n{text}"
    # the ratings: one line per agent, each with its rating and interval
    for r in res.ratings:
        assert any(f"[{_elo(r.ci_low)}, {_elo(r.ci_high)}]" in x and _elo(r.elo) in x for x in lines)
    assert f"6 games a {'pairing' if players == 2 else 'table'}" in text
    # the long spec is shortened in the tables, its full form said once below them
    short = [x for x in lines if x.startswith(FOOTNOTE)]
    assert len(short) == 1 and short[0].endswith(f" is {long_spec}")


def test_short_names_are_not_shortened(tmp_path):
    res = run_tournament(
        TournamentConfig(
            agents=["greedy", "dicenow", "hold:300"],
            rules="classic",
            games=6,
            seed=0,
            name="s",
            out=str(tmp_path),
            workers=1,
        )
    )
    for width in WIDTHS:
        text = _render(res, width)
        _lines(text, width)
        assert "…" not in text and "agents shortened" not in text
        for figure in _figures(res):
            assert figure in text


def test_tenk_tournament_honours_columns_in_a_pipe(tournaments, long_spec):
    """The CLI's piped output takes COLUMNS when set (the saved games are reread: nothing replays)."""
    res = tournaments[2]
    cfg = res.config
    env = {**os.environ, "COLUMNS": "80"}
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "tenk_env.cli.main",
            "tournament",
            *cfg.agents,
            "--games",
            "6",
            "--name",
            cfg.name,
            "--out",
            cfg.out,
            "--workers",
            "1",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all games were already played" in r.stdout
    body = r.stdout.split("all games were already played: results rebuilt from the saved chunks\n", 1)[1]
    body = body.split("\nresults in ", 1)[0]
    _lines(body, 80)
    for figure in _figures(res):
        assert figure in body


@pytest.mark.parametrize("width", WIDTHS)
def test_zoo_listing_keeps_every_strength_line_whole(width):
    buf = io.StringIO()
    list_zoo(Console(width=width, file=buf, color_system=None))
    text = buf.getvalue()
    lines = _lines(text, width)
    for e in zoo.entries():
        figures, problem = _strength(e)
        assert problem is None
        for figure in figures:
            # each figure on a line of its own, never wrapped inside its interval
            assert any(x.rstrip().endswith(figure) for x in lines), f"{e.name}: {figure!r} at {width} columns"
    assert "vs hold:300 77.98% [76.66%, 79.23%] (4,000 games)" in text
    assert "regret vs optimal 1.45 pp/game [1.27, 1.63] (2,000 games)" in text


# ---------------------------------------------------------------- one unit for a regret, in logs too
def test_training_analyze_and_evaluate_print_the_regret_in_pp_per_game(tmp_path, capsys):
    import csv
    import re

    import yaml

    from tenk_env.training.afterstate import load_afterstate_config, train_afterstate

    cfg = {
        "algo": "afterstate",
        "rules": {"base": "classic", "target": 1000, "end": "immediate"},
        "n_players": 2,
        "total_turns": 60,
        "train_every": 30,
        "max_game_turns": 60,
        "grad_steps": 1,
        "hidden": [8],
        "runs_dir": str(tmp_path),
        "name": "a",
        "eval": {"every": 60, "games": 2, "opponents": ["hold:300"], "regret_games": 6},
    }
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(cfg))
    logs: list[str] = []
    train_afterstate(load_afterstate_config(tmp_path / "a.yaml"), log=logs.append)
    with open(tmp_path / "a" / "regret.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    lines = [x for x in logs if ": regret " in x]
    assert len(lines) == len(rows) >= 1
    for line, row in zip(lines, rows):
        # regret.csv keeps the probability; the log prints it in pp/game
        assert re.fullmatch(
            rf"  turns {int(row['turns']):,}: regret {100 * float(row['regret']):.2f} pp/game "
            r"\(interval needs at least 30 deals, have 3\) \(\d+\.\d\d% vs optimal\)",
            line,
        ), line
    # tenk analyze and tenk evaluate print the same games' regret alike, the unit named
    import json

    from tenk_env.cli.main import main

    agent = tmp_path / "a" / "last.npz"
    assert (
        main(
            [
                "analyze",
                f"afterstate:{agent}",
                "--games",
                "60",
                "--seed",
                "0",
                "--workers",
                "1",
                "--top",
                "1",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    rep = json.loads((tmp_path / "o" / "report.json").read_text())
    lo, hi = rep["regret_ci"]
    figure = f"{100 * rep['regret_per_game']:.2f} [{100 * lo:.2f}, {100 * hi:.2f}]"
    row = next(x for x in out.splitlines() if x.startswith("│") and "regret (pp/game)" in x)
    assert row.rstrip(" │").endswith(figure)
    assert "regret (pp/game) by kind: banked, rolling was better " in out
    assert (
        main(
            [
                "evaluate",
                str(agent),
                "--games",
                "2",
                "--opponents",
                "hold:300",
                "--workers",
                "1",
                "--regret-games",
                "60",
                "--seed",
                "0",
            ]
        )
        == 0
    )
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"regret against perfect play (60 games vs optimal, seed 0): {100 * rep['regret_per_game']:.2f} pp/game "
        f"[{100 * lo:.2f}, {100 * hi:.2f}]; implied win rate vs optimal"
    ) in out
