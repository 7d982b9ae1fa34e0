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
from collections import Counter

from rich.console import Console
from rich.table import Table

from tenk_env.evaluation.match import MatchResult
from tenk_env.evaluation.tournament import ConfigError, TournamentConfig, standings_order, load_config, run_tournament
from tenk_env.cli.args import check_output_dir
from tenk_env.cli.common import console as default_console
from tenk_env.evaluation.ray_runtime import RayExecutor, add_ray_arguments, ray_session


def _pct(x: float) -> str:
    return f"{x:.1%}"


def _elo(x: float) -> str:
    if math.isnan(x):
        return "-"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.0f}"


def render(res, console) -> None:
    """The per-table results and the ratings as rich tables."""
    cfg = res.config
    t = Table(title=f"{res.out_dir.name}: {res.rules.name} ({res.rules.hash}), seed {cfg.seed}, "
                    f"{cfg.players}-player tables", title_justify="left")
    if isinstance(res.results[0], MatchResult):
        for col, j in (("A", "left"), ("B", "left"), ("games", "right"), ("A W-L-T", "right"),
                       ("A win rate [95% CI]", "right"), ("margin", "right"), ("turns", "right"),
                       ("1st mover", "right")):
            t.add_column(col, justify=j, no_wrap=True,
                         min_width=max(map(len, res.labels)) if col in ("A", "B") else None)
        for r in res.results:
            t.add_row(r.a, r.b, f"{r.games:,}", f"{r.wins_a}-{r.wins_b}-{r.ties}",
                      f"{_pct(r.win_rate_a)} [{r.ci_low:.1%}, {r.ci_high:.1%}]", f"{r.mean_margin:+,.0f}",
                      f"{r.mean_turns:.1f}", _pct(r.first_seat_win_rate))
        t.caption = ("margin: mean final score of A minus B; turns: per game, both players; 1st mover: share "
                     "of games won by whoever moved first")
    else:
        for col in ("table", "agent", "games", "win rate [95% CI]", "mean score", "points/turn", "bust rate"):
            t.add_column(col, justify="left" if col in ("table", "agent") else "right")
        for r in res.results:
            for k, a in enumerate(r.agents):
                t.add_row(" vs ".join(r.agents) if k == 0 else "", a, f"{r.games:,}",
                          f"{_pct(r.win_rate[k])} [{_pct(r.ci_low[k])}, {_pct(r.ci_high[k])}]",
                          f"{r.mean_score[k]:,.0f}", f"{r.points_per_turn[k]:.0f}", _pct(r.bust_rate[k]))
    console.print(t)
    rt = Table(title="Bradley-Terry ratings (Elo scale, field mean 0; 95% intervals, cluster-robust over deals)",
               title_justify="left")
    multi = cfg.players > 2
    cols = ["#", "agent", "rating", "95% interval", "comparisons", "won"] + (["win share [95% CI]"] if multi else [])
    for col in cols:
        rt.add_column(col, justify="left" if col == "agent" else "right")
    for rank, a in enumerate(standings_order(res), 1):
        r, w = res.ratings[a], res.win_share[a]
        interval = f"[{_elo(r.ci_low)}, {_elo(r.ci_high)}]" if math.isfinite(r.elo) else "unbounded"
        row = [str(rank), r.agent, _elo(r.elo), interval, f"{r.comparisons:,}",
               "-" if math.isnan(r.score) else _pct(r.score)]
        rt.add_row(*row, *([f"{_pct(w.share)} [{_pct(w.ci_low)}, {_pct(w.ci_high)}]"] if multi else []))
    if multi:
        rt.caption = (f"won: share of pairwise placings won; win share: share of all its games won (even: "
                      f"1/{cfg.players}), the game's own score, which can order agents differently")
    console.print(rt)
    f = res.first_mover
    console.print(f"first mover wins {_pct(f['win_rate'])} [{_pct(f['ci_low'])}, {_pct(f['ci_high'])}] of "
                  f"{f['games']:,} games (the duplicate format cancels this advantage)", highlight=False)
    if res.engines:
        used = ", ".join(f"{k} engine: {v} table{'s' if v > 1 else ''}" for k, v in sorted(Counter(res.engines).items()))
        note = "; game records always come from the scalar engine" if any("+" in e for e in res.engines) else ""
        console.print(f"played on the {used} (backend {cfg.backend}{note})", highlight=False)
    for a, h in zip(cfg.agents, res.agent_sha256):
        if h is not None:
            # which version of the file played: results are keyed by it, not by the path
            console.print(f"{a}: sha256 {h}", highlight=False, markup=False)


def cmd_tournament(args: argparse.Namespace) -> int:
    console = default_console
    overrides = dict(rules=args.rules, games=args.games, seed=args.seed, players=args.players, name=args.name,
                     workers=args.workers, save_games=args.save_games, out=args.out, backend=args.backend)
    if args.agents:
        overrides["agents"] = list(args.agents)
    if args.config:
        cfg = load_config(args.config, **overrides)
    else:
        if not args.agents or len(args.agents) < 2:
            raise ConfigError("give at least two agent specs (e.g. `tenk tournament dicenow hold:300`) "
                              "or --config configs/tournament.yaml")
        cfg = TournamentConfig.from_dict({k: v for k, v in overrides.items() if v is not None},
                                         source="command line")
    say = lambda note: console.print(f"note: {note}", highlight=False, markup=False)  # noqa: E731
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
            res = run_tournament(cfg, progress=not args.no_progress, fresh=args.fresh, log=say,
                                 executor=RayExecutor(), on_chunk=on_chunk)
    else:
        res = run_tournament(cfg, progress=not args.no_progress, fresh=args.fresh, log=say, on_chunk=on_chunk)
    if res.played_now == 0:
        console.print("all games were already played: results rebuilt from the saved chunks", highlight=False)
    if not console.is_terminal:
        # Piped or logged output has no width to respect; rich's default 80 columns would cut the table.
        console = Console(width=140)
    render(res, console)
    console.print(f"results in {res.out_dir}/ (results.csv, results.json, ratings.csv, heatmap.png, ratings.png)",
                  highlight=False)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("tournament", help="seat-balanced round robin with Bradley-Terry ratings",
                       description="Round robin over agents, every deal played in every seat order with the same "
                                   "dice. Output under runs/tournaments/NAME/; rerun to resume.")
    s.add_argument("agents", nargs="*", metavar="SPEC",
                   help="agent specs (random, greedy, hold:300, dicenow, breakeven, ...); replace the config's")
    s.add_argument("--config", "-c", metavar="FILE", help="tournament YAML (see configs/tournament.yaml)")
    s.add_argument("--games", type=int, metavar="N", help="games per table (default 2000; rounded up to whole deals)")
    s.add_argument("--rules", metavar="PRESET|FILE", help="ruleset (default classic)")
    s.add_argument("--seed", type=int, metavar="S", help="seed of the dice deals (default 0)")
    s.add_argument("--players", type=int, metavar="N",
                   help="players per game (default 2: pairings; more: free-for-all tables of every N agents)")
    s.add_argument("--name", metavar="NAME", help="output directory name under --out (default: derived)")
    s.add_argument("--out", metavar="DIR", help="parent directory (default runs/tournaments)")
    s.add_argument("--workers", type=int, metavar="W",
                   help="worker processes for tables on the scalar engine (default: 2, or the cores there are)")
    s.add_argument("--backend", choices=("auto", "batched", "scalar"),
                   help="auto (default): tables whose agents all have batched forms (the bots, maxscore, random, PPO) on "
                        "the batched engine, the rest on the scalar one; deterministic agents play the same "
                        "games on either")
    s.add_argument("--save-games", type=int, metavar="K",
                   help="save the records of the first K games of each table under games/ (tenk replay FILE)")
    s.add_argument("--fresh", action="store_true", help="discard saved chunks of a tournament of this name")
    s.add_argument("--ray", action="store_true",
                   help="play the chunks as tasks of a private local Ray runtime (needs the ray extra); same results")
    add_ray_arguments(s, "play the chunks on the Ray cluster at this address (or set RAY_ADDRESS and give --ray); "
                         "the package must be installed on every node")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.set_defaults(func=cmd_tournament, resume_hint="rerun the same command to resume")
