"""`tenk tournament`: a seat-balanced round robin with ratings (see tenk_env/evaluation/tournament.py).

    tenk tournament --config configs/tournament.yaml
    tenk tournament random greedy hold:300 dicenow breakeven --games 2000 --rules classic --name bots

Options given on the command line override the config file. Rerunning the same command
resumes an interrupted tournament; ``--fresh`` starts it over. ``--ray`` plays the chunks as
tasks of a private local Ray runtime, ``--ray-address HOST:PORT`` on a Ray cluster (same
results to the last game; tenk_env/evaluation/ray_runtime.py).
"""

from __future__ import annotations

import argparse
import math
import os
from collections import Counter

from rich import box
from rich.console import Console
from rich.table import Table

from tenk_env.cli.args import check_output_dir
from tenk_env.cli.common import console as default_console
from tenk_env.evaluation.match import MatchResult
from tenk_env.evaluation.ray_runtime import RayExecutor, add_ray_arguments, ray_session
from tenk_env.evaluation.tournament import ConfigError, TournamentConfig, load_config, run_tournament, standings_order


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _elo(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.0f}"


#: the fewest characters a shortened agent name keeps (below that its column folds it instead)
MIN_NAME = 12


def _head(header: str, cells: list[str]) -> str:
    """``header`` wrapped onto lines no wider than its column's widest figure (or its longest
    word), so a figure column is as narrow as its figures."""
    width = max([len(c) for c in cells] + [len(w) for w in header.split()])
    lines: list[str] = []
    for word in header.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _shorten(label: str, room: int) -> str:
    """``label`` in at most ``room`` characters, an ellipsis in its middle: a spec's start (its
    kind) and its end (its file or arguments) are what tell two apart."""
    if len(label) <= room:
        return label
    tail = (room - 1) // 2
    return label[: room - 1 - tail] + "…" + label[len(label) - tail :]


class _Layout:
    """How the tables fit ``width`` columns: rich's boxed style where every figure and each
    agent name fit beside each other, else a compact one (no box, headers over two lines); agent
    names longer than the room left are shortened in the middle (:func:`_shorten`), with a
    footnote of their full forms. Figures and intervals are never cut: their columns do not wrap."""

    def __init__(self, width: int, labels: list[str], tables: list[tuple[int, list[list[str]], list[str]]]):
        # tables: (name columns, figure columns' cells, figure headers) of each table printed
        longest = max(map(len, labels))
        room = {
            compact: min(self._room(width, names, cells, heads, compact) for names, cells, heads in tables)
            for compact in (False, True)
        }
        # the boxed style where the names fit it (or a long one keeps 24 characters), else the compact one
        self.compact = room[False] < min(longest, 2 * MIN_NAME)
        room = max(room[self.compact], MIN_NAME)
        self.names = {a: _shorten(a, room) for a in labels}
        if len(set(self.names.values())) < len(labels):  # two specs alike at both ends: fold them whole instead
            self.names = {a: a for a in labels}

    @staticmethod
    def _room(width: int, names: int, cells: list[list[str]], heads: list[str], compact: bool) -> int:
        figures = sum(
            max(len(x) for x in (_head(h, c) if compact else h).split("\n") + c) for h, c in zip(heads, cells)
        )
        n = names + len(heads)
        overhead = 2 * (n - 1) if compact else 3 * n + 1
        return (width - overhead - figures) // max(names, 1)

    def table(self, title: str, caption: str | None = None) -> Table:
        if self.compact:
            return Table(
                title=title,
                caption=caption,
                title_justify="left",
                box=box.SIMPLE_HEAD,
                show_edge=False,
                pad_edge=False,
                collapse_padding=True,
            )
        return Table(title=title, caption=caption, title_justify="left")

    def figure(self, t: Table, header: str, cells: list[str]) -> None:
        t.add_column(_head(header, cells) if self.compact else header, justify="right", no_wrap=True)

    def footnote(self) -> str | None:
        long = [(short, a) for a, short in self.names.items() if short != a]
        return "; ".join(f"{short} is {a}" for short, a in long) if long else None


def render(res, console) -> None:
    """The per-table results and the ratings as rich tables, fitting the console's width from
    80 columns up (:class:`_Layout`)."""
    cfg = res.config
    multi = cfg.players > 2
    two = isinstance(res.results[0], MatchResult)
    games = {r.games for r in res.results}
    per_table = f", {games.pop():,} games a {'pairing' if two else 'table'}" if len(games) == 1 else None
    # the figures of each table, as printed, so the layout knows their widths before the names'
    if two:
        heads = ["games", "A W-L-T", "A win rate [95% CI]", "margin", "turns", "1st mover"]
        rows = [
            [
                f"{r.games:,}",
                f"{r.wins_a}-{r.wins_b}-{r.ties}",
                f"{_pct(r.win_rate_a)} [{r.ci_low:.1%}, {r.ci_high:.1%}]",
                f"{r.mean_margin:+,.0f}",
                f"{r.mean_turns:.1f}",
                _pct(r.first_seat_win_rate),
            ]
            for r in res.results
        ]
        names = [(r.a, r.b) for r in res.results]
    else:
        heads = ["games", "win rate [95% CI]", "mean score", "points/turn", "bust rate"]
        rows = [
            [
                f"{r.games:,}",
                f"{_pct(r.win_rate[k])} [{_pct(r.ci_low[k])}, {_pct(r.ci_high[k])}]",
                f"{r.mean_score[k]:,.0f}",
                f"{r.points_per_turn[k]:.0f}",
                _pct(r.bust_rate[k]),
            ]
            for r in res.results
            for k in range(len(r.agents))
        ]
    if per_table:  # the same for every table: said once, in the title
        heads, rows = heads[1:], [row[1:] for row in rows]
    order = standings_order(res)
    rheads = ["#", "rating", "95% interval", "comparisons", "won"] + (["win share [95% CI]"] if multi else [])
    rrows = []
    for rank, a in enumerate(order, 1):
        r, w = res.ratings[a], res.win_share[a]
        interval = f"[{_elo(r.ci_low)}, {_elo(r.ci_high)}]" if math.isfinite(r.elo) else "unbounded"
        rrows.append(
            [str(rank), _elo(r.elo), interval, f"{r.comparisons:,}", "-" if math.isnan(r.score) else _pct(r.score)]
            + ([f"{_pct(w.share)} [{_pct(w.ci_low)}, {_pct(w.ci_high)}]"] if multi else [])
        )
    columns = lambda rs: [list(c) for c in zip(*rs)] if rs else [[] for _ in heads]  # noqa: E731
    fit = _Layout(console.width, list(res.labels), [(2, columns(rows), heads), (1, columns(rrows), rheads)])
    n = fit.names

    t = fit.table(
        f"{res.out_dir.name}: {res.rules.name} ({res.rules.hash}), seed {cfg.seed}, "
        f"{cfg.players}-player tables{per_table or ''}"
    )
    for col in ("A", "B") if two else ("table", "agent"):
        t.add_column(col, overflow="fold", min_width=min(MIN_NAME, max(map(len, n.values()))))
    for h, cells in zip(heads, columns(rows)):
        fit.figure(t, h, cells)
    if two:
        for (a, b), row in zip(names, rows):
            t.add_row(n[a], n[b], *row)
        t.caption = (
            "margin: mean final score of A minus B; turns: per game, both players; 1st mover: share "
            "of games won by whoever moved first"
        )
    else:
        i = 0
        for r in res.results:
            for k, a in enumerate(r.agents):
                t.add_row(" vs ".join(n[x] for x in r.agents) if k == 0 else "", n[a], *rows[i])
                i += 1
    console.print(t)
    rt = fit.table("Bradley-Terry ratings (Elo scale, field mean 0; 95% intervals, cluster-robust over deals)")
    for h, cells in zip(rheads, columns(rrows)):
        fit.figure(rt, h, cells)
        if h == "#":
            rt.add_column("agent", overflow="fold", min_width=min(MIN_NAME, max(map(len, n.values()))))
    for a, row in zip(order, rrows):
        rt.add_row(row[0], n[res.labels[a]], *row[1:])
    if multi:
        rt.caption = (
            f"won: share of pairwise placings won; win share: share of all its games won (even: "
            f"1/{cfg.players}), the game's own score, which can order agents differently"
        )
    console.print(rt)
    note = fit.footnote()
    if note:
        console.print(f"agents shortened above: {note}", highlight=False, markup=False, soft_wrap=True)
    f = res.first_mover
    console.print(
        f"first mover wins {_pct(f['win_rate'])} [{_pct(f['ci_low'])}, {_pct(f['ci_high'])}] of "
        f"{f['games']:,} games (the duplicate format cancels this advantage)",
        highlight=False,
    )
    if res.engines:
        used = ", ".join(
            f"{k} engine: {v} table{'s' if v > 1 else ''}" for k, v in sorted(Counter(res.engines).items())
        )
        note = "; game records always come from the scalar engine" if any("+" in e for e in res.engines) else ""
        console.print(f"played on the {used} (backend {cfg.backend}{note})", highlight=False)
    for a, h in zip(cfg.agents, res.agent_sha256):
        if h is not None:
            # which version of the file played: results are keyed by it, not by the path
            console.print(f"{a}: sha256 {h}", highlight=False, markup=False, soft_wrap=True)


def cmd_tournament(args: argparse.Namespace) -> int:
    console = default_console
    overrides = dict(
        rules=args.rules,
        games=args.games,
        seed=args.seed,
        players=args.players,
        name=args.name,
        workers=args.workers,
        save_games=args.save_games,
        out=args.out,
        backend=args.backend,
    )
    if args.agents:
        overrides["agents"] = list(args.agents)
    if args.config:
        cfg = load_config(args.config, **overrides)
    else:
        if not args.agents or len(args.agents) < 2:
            raise ConfigError(
                "give at least two agent specs (e.g. `tenk tournament dicenow hold:300`) "
                "or --config configs/tournament.yaml"
            )
        cfg = TournamentConfig.from_dict({k: v for k, v in overrides.items() if v is not None}, source="command line")
    # soft_wrap: one line, which the terminal wraps (rich would break a long path inside it)
    say = lambda note: console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)  # noqa: E731
    use_ray = args.ray or args.ray_address is not None
    if args.ray_cpus is not None and not use_ray:
        raise ConfigError("--ray-cpus sizes the local Ray runtime: give it with --ray")
    # a bad config fails before Ray starts, and out is a path to check; the agents built for
    # the check are the run's (a checkpoint is not loaded twice)
    cfg.validate()
    # the tournament's directory is made under --out when the games start: a file or a place
    # that cannot be written there is named now, not in a traceback
    check_output_dir(cfg.out, "--out")

    def on_chunk(done: int, total: int) -> None:
        args.done = f"{done} of {total} chunks saved"  # the line an interrupt ends with

    if use_ray:
        with ray_session(args.ray_address, num_cpus=args.ray_cpus, what="tenk tournament --ray", say=say):
            res = run_tournament(
                cfg, progress=not args.no_progress, fresh=args.fresh, log=say, executor=RayExecutor(), on_chunk=on_chunk
            )
    else:
        res = run_tournament(cfg, progress=not args.no_progress, fresh=args.fresh, log=say, on_chunk=on_chunk)
    if res.played_now == 0:
        console.print("all games were already played: results rebuilt from the saved chunks", highlight=False)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        # Piped or logged output has no width to respect (unless COLUMNS gives one): 140 columns
        # keep its rows on one line each.
        console = Console(width=140)
    render(res, console)
    console.print(
        f"results in {res.out_dir}/ (results.csv, results.json, ratings.csv, heatmap.png, ratings.png)",
        highlight=False,
        soft_wrap=True,
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "tournament",
        help="seat-balanced round robin with Bradley-Terry ratings",
        description="Round robin over agents, every deal played in every seat order with the same "
        "dice. Output under runs/tournaments/NAME/; rerun to resume.",
    )
    s.add_argument(
        "agents",
        nargs="*",
        metavar="SPEC",
        help="agent specs (random, greedy, hold:300, dicenow, breakeven, ...); replace the config's",
    )
    s.add_argument("--config", "-c", metavar="FILE", help="tournament YAML (see configs/tournament.yaml)")
    s.add_argument("--games", type=int, metavar="N", help="games per table (default 2000; rounded up to whole deals)")
    s.add_argument("--rules", metavar="PRESET|FILE", help="ruleset (default classic)")
    s.add_argument("--seed", type=int, metavar="S", help="seed of the dice deals (default 0)")
    s.add_argument(
        "--players",
        type=int,
        metavar="N",
        help="players per game (default 2: pairings; more: free-for-all tables of every N agents)",
    )
    s.add_argument("--name", metavar="NAME", help="output directory name under --out (default: derived)")
    s.add_argument("--out", metavar="DIR", help="parent directory (default runs/tournaments)")
    s.add_argument(
        "--workers",
        type=int,
        metavar="W",
        help="worker processes for tables on the scalar engine (default: 2, or the cores there are)",
    )
    s.add_argument(
        "--backend",
        choices=("auto", "batched", "scalar"),
        help="auto (default): tables whose agents all have batched forms (the bots, maxscore, random, PPO) on "
        "the batched engine, the rest on the scalar one; deterministic agents play the same "
        "games on either",
    )
    s.add_argument(
        "--save-games",
        type=int,
        metavar="K",
        help="save the records of the first K games of each table under games/ (tenk replay FILE)",
    )
    s.add_argument("--fresh", action="store_true", help="discard saved chunks of a tournament of this name")
    s.add_argument(
        "--ray",
        action="store_true",
        help="play the chunks as tasks of a private local Ray runtime (needs the ray extra); same results",
    )
    add_ray_arguments(
        s,
        "play the chunks on the Ray cluster at this address (or set RAY_ADDRESS and give --ray); "
        "the package must be installed on every node",
    )
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_tournament, resume_hint="rerun the same command to resume")
