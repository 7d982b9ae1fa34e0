"""`tenk solve turn|game|eval|best-response|equilibrium RULESET`: the exact solvers (tenk_env.solve,
tenk_env.policies.exact)."""

from __future__ import annotations

import argparse
import csv
import io
import time

import numpy as np
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from tenk_env import solve  # the work is called as solve.X / exact.X: tests stub it there
from tenk_env.cli.args import check_output_file, ruleset_at
from tenk_env.cli.common import BR_COST, console, peak_mb
from tenk_env.evaluation.reach import sample_reach
from tenk_env.io import atomic_write_text
from tenk_env.policies import exact
from tenk_env.rules import load_ruleset


def cmd_turn(args: argparse.Namespace) -> int:
    r = load_ruleset(args.ruleset)
    out = check_output_file(args.out or f"runs/solve/{r.name}-turn.csv", "--out", f"{r.name}-turn.csv")
    t0 = time.perf_counter()
    sol = solve.solve_turn(r, cache=not args.no_cache)
    secs = time.perf_counter() - t0
    what = "long-run average points per turn" if r.bust_penalty else "expected points per turn"
    console.print(f"[bold]{r.name}[/bold] (hash {r.hash}): {what} on the board [bold]{sol.points_per_turn:.2f}[/bold]")
    if r.entry_threshold:
        console.print(
            f"expected points of a turn before entering (threshold {r.entry_threshold}): {sol.entry_turn_points:.2f}"
        )
    if r.bust_penalty:
        console.print("relative values of busts in a row: " + ", ".join(f"{k}: {h:.2f}" for k, h in enumerate(sol.h)))
    t = Table(title="max-expected-points banking thresholds (on the board)")
    t.add_column("dice left to roll", justify="right")
    t.add_column("bank at turn total >=", justify="right")
    t.add_column("simple threshold rule", justify="center")
    cap = sol.tcap * sol.unit
    rows = []
    for n, (thr, pure) in sol.thresholds.items():
        shown = "never (always roll)" if thr >= cap else f"{thr:,}"
        if n == r.num_dice and r.hot_dice == "mandatory":
            shown, thr = "must roll (hot dice mandatory)", cap
        t.add_row(str(n), shown, "yes" if pure else "no")
        rows.append((n, "" if thr >= cap else thr, pure))
    console.print(t)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["ruleset", r.name, "hash", r.hash])
    w.writerow(["points_per_turn", f"{sol.points_per_turn:.6f}", "entry_turn_points", f"{sol.entry_turn_points:.6f}"])
    w.writerow(["dice_left", "bank_at_turn_total", "simple_threshold"])
    w.writerows(rows)
    atomic_write_text(out, buf.getvalue())
    console.print(f"wrote {out}  ({secs:.1f} s{', cached' if secs < 0.5 else ''})")
    return 0


def _say_solving(r, cache: bool = True) -> None:
    """One line before a game solve that is not cached: it is silent and takes minutes on classic."""
    if not cache or not solve.is_cached(r):
        how = (
            "value iteration under its bust penalty: about an hour at a 10,000 target, minutes at 2,000"
            if r.bust_penalty
            else "seconds at a small target, a few minutes for classic"
        )
        console.print(
            f"solving the game for {r.name!r} ({how}; once: cached in {_cache()})", highlight=False, soft_wrap=True
        )


def cmd_game(args: argparse.Namespace) -> int:
    r = load_ruleset(args.ruleset)
    if args.plot:
        check_output_file(args.plot, "--plot", f"{r.name}-policy.png")
    solve.check_game_rules(r)
    _say_solving(r, cache=not args.no_cache)
    t0 = time.perf_counter()
    with _progress("solving") as bar:
        sol = solve.solve_game(r, cache=not args.no_cache, progress=bar)
    secs = time.perf_counter() - t0
    st = sol.stats
    console.print(f"[bold]{r.name}[/bold] (hash {r.hash}), 2 players, optimal play by both")
    console.print(
        f"P(first player wins) = [bold]{sol.p_first_win:.6f}[/bold]"
        + (f"  (seat 1 starts with komi {r.komi})" if r.komi else "")
    )
    if r.turn_order == "highest_die":
        console.print("turn_order is highest_die: 'first player' is whoever wins the opening roll")
    if sol.fair:
        cands = ", ".join(f"komi {k}: {p:.6f}" for k, p in sorted(sol.fair["candidates"].items()))
        console.print(
            f"fair komi (points for the second player) = [bold]{sol.fair['komi']}[/bold]  "
            f"P(first wins) with it {sol.fair['p_first']:.6f}  ({cands})"
        )
    how = "loaded from cache" if st.get("cached") else f"solved in {st['seconds']:.1f} s"
    if st.get("sweeps"):
        done = (
            f"{st['pairs']:,} states (scores and bust counts), {st['sweeps']} sweeps of value iteration, "
            f"last change {st['residual']:.1e}"
        )
    else:
        done = f"{st['pairs']:,} state pairs, residual <= {st['residual']:.1e}"
    console.print(f"{how} ({secs:.1f} s now); {done}, truncation eps {st['eps']:.0e}; cache {solve.cache_dir()}")
    if args.plot:
        p = solve.plot_policy(sol, args.plot)
        console.print(f"policy plot: {p}")
    return 0


class _progress:
    """A progress bar on a terminal; elsewhere (a log file) a line every 5%, so that an
    hour-long solve in the background says how far it is."""

    def __init__(self, what: str):
        self.what = what
        self.bar = Progress(
            TextColumn(what),
            BarColumn(),
            TaskProgressColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )

    def __enter__(self):
        self.bar.__enter__()
        self.task = self.bar.add_task(self.what, total=1.0)
        self.t0, self.said = time.perf_counter(), 0
        return self

    def __exit__(self, *exc):
        return self.bar.__exit__(*exc)

    def __call__(self, fraction: float) -> None:
        self.bar.update(self.task, completed=fraction)
        if not console.is_terminal and int(fraction * 20) > self.said:
            self.said = int(fraction * 20)
            console.print(f"{self.what}: {fraction:.0%} after {time.perf_counter() - self.t0:,.0f} s", highlight=False)


def _n_players(names: list[str], what: str, lo: int, hi: int) -> None:
    if not lo <= len(names) <= hi:
        raise solve.SolverError(
            f"tenk solve {what} takes {lo} to {hi} agents (got {len(names)}: {' '.join(names) or 'none'})"
        )


def cmd_eval(args: argparse.Namespace) -> int:
    _n_players(args.agents, "eval", 2, 4)
    if len(args.agents) > 2:
        return _eval_n(args)
    a, b = args.agents
    for p in (a, b):  # before the game solve, which takes minutes
        exact.check_exact_spec(p)
    r = ruleset_at(args.ruleset, args.target)
    solve.check_exact_rules(r)
    _say_solving(r)
    how = (
        "under its bust penalty: a minute at a 2,000 target, 15 to 30 minutes at 10,000"
        if r.bust_penalty
        else "a minute or more on classic"
    )
    console.print(f"evaluating {a} against {b} exactly ({how}; once: cached)", highlight=False)
    t0 = time.perf_counter()
    e = exact.exact_eval(r, a, b)
    t = Table(title=f"exact P({e.a} wins) against {e.b}, {r.name}")
    t.add_column(f"{e.a} moves first", justify="right")
    t.add_column(f"{e.a} moves second", justify="right")
    t.add_column("seat-balanced", justify="right")
    t.add_row(f"{e.p_a_first:.6f}", f"{e.p_a_second:.6f}", f"{e.p_a:.6f}")
    console.print(t)
    console.print(f"({time.perf_counter() - t0:.1f} s; cached in {_cache()})")
    return 0


def _seat_table(title: str, n: int) -> Table:
    t = Table(title=title)
    t.add_column("player", justify="left")
    for j in range(n):
        t.add_column(f"seat {j + 1}", justify="right")
    t.add_column("rotation mean", justify="right")
    return t


def _eval_n(args: argparse.Namespace) -> int:
    if "equilibrium" in args.agents:
        return _eval_beside_equilibrium(args)
    for p in args.agents:
        exact.check_multi_spec(p)
    r = ruleset_at(args.ruleset, args.target)
    n = len(args.agents)
    solve.check_multi_rules(r, n)
    console.print(
        f"evaluating {', '.join(args.agents)} at {n} players exactly (seconds at a small target, "
        "minutes on classic; once: cached)",
        highlight=False,
    )
    t0 = time.perf_counter()
    with _progress("evaluating") as bar:
        e = exact.exact_eval_n(r, args.agents, progress=bar)
    t = _seat_table(f"exact P(win), {r.name}, {n} players seated in this order (seat 1 moves first)", n)
    for i, name in enumerate(e.names):
        t.add_row(name, *(f"{x:.6f}" for x in e.seat[i]), f"{e.mean[i]:.6f}")
    console.print(t)
    console.print(
        f"each rotation keeps the order {' -> '.join(e.names)} round the table "
        f"({time.perf_counter() - t0:.1f} s; cached in {_cache()})",
        highlight=False,
    )
    return 0


def _eval_beside_equilibrium(args: argparse.Namespace) -> int:
    n = len(args.agents)
    others = [a for a in args.agents if a != "equilibrium"]
    if len(others) != 1:
        raise solve.SolverError(
            f"seat one agent beside the equilibrium, every other seat playing it (got "
            f"{', '.join(args.agents)}): tenk solve eval RULES BOT " + " ".join(["equilibrium"] * (n - 1))
        )
    bot = others[0]
    exact.check_multi_spec(bot)
    r = ruleset_at(args.ruleset, args.target)
    solve.check_equilibrium_rules(r, n)
    if solve.solve_equilibrium(r, n, cached_only=True) is None:
        console.print(
            f"solving the symmetric equilibrium of {r.name!r} at {n} players first (tenk solve "
            f"equilibrium, on 2 cores: {EQ_COST[n]}; once: cached)",
            highlight=False,
        )
    console.print(
        f"evaluating {bot} beside {n - 1} equilibrium players exactly (on 2 cores: seconds at a small "
        "target, about 2 minutes at 3,000, about an hour at 10,000; progress is kept every 10 minutes, "
        "so the same command after a stop goes on where it was; once: cached)",
        highlight=False,
    )
    t0 = time.perf_counter()
    with _progress("evaluating") as bar:
        e = exact.exact_eval_beside_equilibrium(r, bot, n, progress=bar)
    t = _seat_table(
        f"exact P({bot} wins), {r.name}, {n} players, every other seat playing the equilibrium (seat 1 moves first)", n
    )
    t.add_row(bot, *(f"{x:.6f}" for x in e.p_seat), f"{e.p:.6f}")
    console.print(t)
    console.print(
        f"an equilibrium player in its place takes {e.fair:.6f}: {bot} gives away "
        f"{100 * (e.fair - e.p):.2f} points against equilibrium play ({time.perf_counter() - t0:.1f} s; "
        f"cached in {_cache()})",
        highlight=False,
    )
    return 0


def cmd_best_response(args: argparse.Namespace) -> int:
    bots = args.bots
    _n_players(bots, "best-response", 1, 3)
    if "equilibrium" in bots:
        return _best_response_beside_equilibrium(args)
    if len(bots) > 1:
        return _best_response_n(args)
    bot = bots[0]
    exact.check_exact_spec(bot)
    r = ruleset_at(args.ruleset, args.target)
    solve.check_exact_rules(r)
    _say_solving(r)
    how = (
        "under its bust penalty: 5 to 10 minutes at a 2,000 target, hours at 10,000"
        if r.bust_penalty
        else "minutes on classic"
    )
    console.print(f"solving the best response to {bot} exactly ({how}; once: cached)", highlight=False)
    t0 = time.perf_counter()
    br = exact.best_response(r, bot)
    opt = exact.exact_eval(r, "optimal", bot)
    t = Table(title=f"the exact ceiling against {bot}, {r.name}: P(win) seat by seat")
    t.add_column("player", justify="left")
    t.add_column("moves first", justify="right")
    t.add_column("moves second", justify="right")
    t.add_column("seat-balanced", justify="right")
    t.add_row(f"br:{bot} (best response)", f"{br.p_first:.6f}", f"{br.p_second:.6f}", f"{br.p:.6f}")
    t.add_row("optimal", f"{opt.p_a_first:.6f}", f"{opt.p_a_second:.6f}", f"{opt.p_a:.6f}")
    console.print(t)
    console.print(
        f"{bot} can be exploited by {100 * (br.p - opt.p_a):.2f} points beyond what optimal takes; "
        f"play the best response as agent br:{bot}  ({time.perf_counter() - t0:.1f} s; cached in "
        f"{_cache()})",
        highlight=False,
    )
    return 0


def _best_response_n(args: argparse.Namespace) -> int:
    bots = args.bots
    for b in bots:
        exact.check_multi_spec(b)
    r = ruleset_at(args.ruleset, args.target)
    n = len(bots) + 1
    solve.check_multi_rules(r, n)
    name = "br:" + ",".join(bots)
    console.print(
        f"solving the best response to {', '.join(bots)} at {n} players exactly ({BR_COST[n]}; once: cached)",
        highlight=False,
    )
    t0 = time.perf_counter()
    with _progress("solving") as bar:
        br = exact.best_response_n(r, bots, progress=bar)
    t = _seat_table(
        f"the exact ceiling against {', '.join(bots)} (seated after it in this order), {r.name}: P(win) seat by seat", n
    )
    t.add_row(f"{name} (best response)", *(f"{x:.6f}" for x in br.p_seat), f"{br.p:.6f}")
    # each bot named, in the responder's place against the same opponents
    for b in dict.fromkeys(bots):
        e = exact.exact_eval_n(r, [b, *bots])
        t.add_row(b, *(f"{x:.6f}" for x in e.seat[0]), f"{e.mean[0]:.6f}")
    console.print(t)
    st = br.stats
    how = "loaded from cache" if st.get("cached") else f"solved in {br.seconds:.1f} s"
    console.print(
        f"no agent in that place wins more often than {br.p:.4%} on average over the seats; play it as "
        f"agent {name}  ({how}, {time.perf_counter() - t0:.1f} s now; residual <= "
        f"{st.get('residual', 0.0):.1e}; cached in {_cache()})",
        highlight=False,
    )
    return 0


def _best_response_beside_equilibrium(args: argparse.Namespace) -> int:
    others = args.bots
    r = ruleset_at(args.ruleset, args.target)
    n = len(others) + 1
    solve.check_equilibrium_rules(r, n)
    console.print(
        f"solving the best response to {', '.join(others)} at {n} players exactly, reading every score "
        f"(the equilibrium first if it is not cached: {EQ_COST[n]}; then about as long again; once: cached)",
        highlight=False,
    )
    t0 = time.perf_counter()
    with _progress("solving") as bar:
        br = exact.exact_br_beside_equilibrium(r, others, progress=bar)
    assert br is not None  # None only with cached_only
    t = _seat_table(
        f"the exact ceiling against {', '.join(others)} (seated after it in this order), {r.name}: P(win) seat by seat",
        n,
    )
    t.add_row("best response", *(f"{x:.6f}" for x in br.p_seat), f"{br.p:.6f}")
    console.print(t)
    how = "loaded from cache" if br.stats.get("cached") else f"solved in {br.seconds:.1f} s"
    console.print(
        f"no agent in that place wins more often than {br.p:.4%} on average over the seats ({how}, "
        f"{time.perf_counter() - t0:.1f} s now; cached in {_cache()})",
        highlight=False,
    )
    return 0


#: what the equilibrium takes on the 2-core machine, by players (docs/results/multiplayer.md)
EQ_COST = {
    2: "seconds at 1,000",
    3: "seconds at 1,000, 1.5 minutes at 3,000, 7 minutes at 5,000, under an hour at 10,000",
    4: "13 minutes at 1,000, 45 minutes at 1,500",
}


def cmd_equilibrium(args: argparse.Namespace) -> int:
    r = ruleset_at(args.ruleset, args.target)
    n = args.players
    solve.check_equilibrium_rules(r, n)
    if args.kingmakers:
        # before the solve, so that a bad option costs nothing
        if n != 3:
            raise solve.SolverError(
                f"--kingmakers needs 3 players (got --players {n}): with 2, the other player's chance is 1 minus the mover's"
            )
        if not 0.0 < args.below < 1.0 / n:
            raise solve.SolverError(f"--below must be a chance between 0 and 1/{n} (got {args.below})")
        if args.kingmaker_games < 0:
            raise solve.SolverError(f"--kingmaker-games must be 0 or more (got {args.kingmaker_games})")
        if args.reached_only and not args.kingmaker_games:
            raise solve.SolverError(
                "--reached-only censuses the positions sampled games reach: give --kingmaker-games N"
            )
    elif args.reached_only:
        raise solve.SolverError("--reached-only narrows the kingmaker census: give it with --kingmakers")
    if args.plot:
        if n != 3 or not args.fair_start:
            raise solve.SolverError(
                "--plot draws the fair start (and the kingmakers): give it with --fair-start, at 3 players"
            )
        check_output_file(args.plot, "--plot", f"{r.name}-equilibrium.png")
    if args.no_cache or solve.solve_equilibrium(r, n, cached_only=True) is None:
        console.print(
            f"solving the symmetric equilibrium of {r.name!r} at {n} players (on 2 cores: {EQ_COST[n]}; once: cached)",
            highlight=False,
        )
    t0 = time.perf_counter()
    with _progress("solving") as bar:
        eq = solve.solve_equilibrium(r, n, cache=not args.no_cache, progress=bar)
    assert eq is not None  # None only with cached_only
    t = _seat_table(
        f"{r.name}, {n} players, each maximising its own win probability: P(win) by seat (seat 1 moves first)", n
    )
    t.columns.pop()  # no rotation mean: the seats are the same strategy
    t.add_row("equilibrium", *(f"{x:.6f}" for x in eq.p_seat))
    x = None
    if args.exploitability or args.nash_conv:
        with _progress("best response") as bar:
            x = solve.equilibrium_exploitability(r, n, seats=args.exploitability, cache=not args.no_cache, progress=bar)
        assert x is not None  # None only with cached_only
        t.add_row("best response to it", *(f"{v:.6f}" for v in x.br))
        if x.gain is not None:
            t.add_row("gain", *(f"{v:.1e}" for v in x.gain))
    console.print(t)
    st = eq.stats
    how = "loaded from cache" if st.get("cached") else f"solved in {eq.seconds:.1f} s"
    console.print(
        f"{how} ({time.perf_counter() - t0:.1f} s now, peak memory {peak_mb():,.0f} MB); {st['cycles']:,} cycles "
        f"of turns, {st['turns_solved']:,} turns solved, last change <= {st['residual']:.1e}; cache {_cache()}",
        highlight=False,
    )
    if st["no_pure"]:
        console.print(
            f"at {st['no_pure']:,} of them no pure stationary equilibrium was found (the movers' best "
            "replies go round): there the profile with the least deviation gain is kept, and no one "
            f"turn's deviation gains more than {st['epsilon']:.1e}",
            highlight=False,
        )
    if x is not None:
        bhow = "loaded from cache" if x.stats.get("cached") else f"solved in {x.seconds:.1f} s"
        if x.gain is not None:
            console.print(
                f"exploitability: the best response of one seat, reading every score, against {n - 1} "
                f"equilibrium players gains {x.gain.max():.1e} at most over the equilibrium's value; NashConv "
                f"(the sum over the seats) {x.nash_conv:.1e} ({bhow})",
                highlight=False,
            )
        else:
            console.print(
                f"NashConv {x.nash_conv:.1e}: the best response of one seat, reading every score, against "
                f"{n - 1} equilibrium players, summed over the seats, less 1 (what one strategy takes in "
                f"all of them) ({bhow}); each seat's gain: --exploitability",
                highlight=False,
            )
    head = _fair_start(eq) if args.fair_start else None
    kings = _kingmakers(r, eq, args) if args.kingmakers else None
    if args.plot:
        assert head is not None  # checked before the solve
        console.print(f"plot: {solve.plot_equilibrium(eq, args.plot, head, kings)}", highlight=False)
    return 0


def _fair_start(eq) -> solve.HeadStart:
    n = eq.n_players
    edge = ", ".join(f"seat {j + 1} {100 * (p - 1 / n):+.2f}" for j, p in enumerate(eq.p_seat))
    h = solve.fair_head_start(eq)
    start = ", ".join(f"seat {j + 1} {int(x):,}" for j, x in enumerate(h.points) if j)
    chances = ", ".join(f"{100 * p:.2f}%" for p in h.p_seat)
    console.print(
        f"the first mover's edge, in points of win chance against a fair {100 / n:.2f}%: {edge}\n"
        f"fair head starts (points banked before the first turn, which also puts a seat on the board): "
        f"{start}; the seats then win {chances} (at most {100 * h.spread:.2f} points from fair)",
        highlight=False,
    )
    return h


def _kingmakers(r, eq, args: argparse.Namespace) -> solve.Kingmakers:
    n = eq.n_players
    hopeless = solve.Below(eq, args.below)
    below = f"{100 * args.below:g}%"
    games = f"{args.kingmaker_games:,} games of equilibrium play"
    # one set of games serves both the positions censused (--reached-only) and how often play
    # reaches them and the kingmakers among them (a part of the same set)
    reach = None
    if args.kingmaker_games:
        with console.status(games):
            agents = [exact.EquilibriumAgent()] * n
            reach = sample_reach(r, agents, {"": hopeless}, args.kingmaker_games, args.seed)[""]
    positions, which = None, f"below {below}"
    if args.reached_only:
        assert reach is not None  # --reached-only needs --kingmaker-games (checked before the solve)
        positions, which = np.array(sorted(reach.visits), np.int64), f"below {below} that the {games} reach"
    with _progress("kingmaker census") as bar:
        k = solve.kingmaker_census(eq, args.below, progress=bar, positions=positions)
    of = "" if args.reached_only else f" of {k.positions:,} score vectors"
    console.print(
        f"positions where the mover's own chance is {which}: {len(k.own):,}{of}; at {int(k.decides.sum()):,} of "
        f"them its turn decides which of the others is the likelier winner ({k.seconds:.1f} s)",
        highlight=False,
    )
    if not len(k.own):
        return k
    sw = k.swing
    for what, rows in (("", np.arange(len(sw))), (" where it decides", np.flatnonzero(k.decides))):
        if not len(rows):
            continue
        i = int(rows[sw[rows].argmax()])
        sc = ", ".join(f"{int(x):,}" for x in k.scores[i])
        console.print(
            f"the largest swing{what}: {100 * sw[i]:.2f} points of one player's chance, at scores {sc} (the "
            f"mover first, then the next to move): the next player {100 * k.lo[i, 0]:.2f}-{100 * k.hi[i, 0]:.2f}%, "
            f"the last {100 * k.lo[i, 1]:.2f}-{100 * k.hi[i, 1]:.2f}% (equilibrium play: {100 * k.eq[i, 0]:.2f}% "
            f"and {100 * k.eq[i, 1]:.2f}%)",
            highlight=False,
        )
    if reach is not None:
        kings = {tuple(int(x) for x in s) for s in k.scores[k.decides]}
        for what, x in ((f"a mover below {below}", reach), ("a kingmaker", reach.within(kings))):
            lo, hi = x.interval
            console.print(
                f"games of equilibrium play that reach {what}: {100 * x.share:.2f}% [{100 * lo:.2f}, "
                f"{100 * hi:.2f}] of {x.games:,} (seed {args.seed}; {x.hits:,} of {x.turns:,} regular turns)",
                highlight=False,
            )
    return k


def _cache():
    return solve.cache_dir()


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("solve", help="exact solvers: expected points per turn, optimal 2-player play")
    ss = s.add_subparsers(dest="what", required=True, metavar="WHAT")
    t = ss.add_parser("turn", help="max expected points per turn and banking thresholds by dice left")
    t.add_argument("ruleset", nargs="?", default="classic", help="preset name or YAML file (default classic)")
    t.add_argument("--out", help="table file to write (default runs/solve/RULESET-turn.csv)")
    t.add_argument("--no-cache", action="store_true", help="solve again instead of loading the cached solution")
    t.set_defaults(func=cmd_turn)
    g = ss.add_parser("game", help="P(first player wins) under optimal play and the fair komi (cached on disk)")
    g.add_argument("ruleset", nargs="?", default="classic", help="preset name or YAML file (default classic)")
    g.add_argument("--plot", metavar="PNG", help="also save the optimal banking thresholds as a PNG")
    g.add_argument("--no-cache", action="store_true", help="solve again instead of loading the cached solution")
    g.set_defaults(func=cmd_game)
    who = (
        f"2 players: one of {exact.EXACT_AGENTS}; 3 or 4 players (seated in this order): one of "
        f"{exact.MULTI_AGENTS}; or one of those bots and 'equilibrium' in every other seat (2 to 4 players)"
    )
    e = ss.add_parser("eval", help="exact win probability of 2 to 4 agents, seat by seat (cached on disk)")
    e.add_argument("ruleset", help="preset name or YAML file")
    e.add_argument("agents", nargs="+", metavar="AGENT", help=who)
    e.add_argument("--target", type=int, help="play the ruleset to this target instead (a smaller game)")
    e.set_defaults(func=cmd_eval)
    b = ss.add_parser(
        "best-response", help="the exact best response to 1 to 3 bots: the most anyone can win against them"
    )
    b.add_argument("ruleset", help="preset name or YAML file")
    b.add_argument(
        "bots",
        nargs="+",
        metavar="BOT",
        help=f"1 bot (2 players): {exact.EXACT_AGENTS}; 2 or 3 bots (3 or 4 players, seated after the "
        f"responder in this order): {exact.MULTI_AGENTS}; 'equilibrium' for a player of the symmetric "
        "equilibrium (2 to 4 players in all: the best response then reads every score)",
    )
    b.add_argument("--target", type=int, help="play the ruleset to this target instead (a smaller game)")
    b.set_defaults(func=cmd_best_response)
    q = ss.add_parser(
        "equilibrium", help="the symmetric equilibrium of 2 to 4 players, each maximising its own win probability"
    )
    q.add_argument("ruleset", nargs="?", default="classic", help="preset name or YAML file (default classic)")
    q.add_argument("--players", type=int, default=3, help="2 to 4 (default 3)")
    q.add_argument("--target", type=int, help="play the ruleset to this target instead (a smaller game)")
    q.add_argument("--no-cache", action="store_true", help="solve again instead of loading the cached solution")
    q.add_argument(
        "--exploitability",
        action="store_true",
        help="also solve the exact best response of one seat to the others (reading every score) and the "
        "equilibrium strategy's own value: each seat's gain and NashConv, their sum (two passes, about three "
        "times the equilibrium's time)",
    )
    q.add_argument(
        "--nash-conv",
        action="store_true",
        help="also NashConv alone, from the best response's pass (the first of --exploitability's two, "
        "about two thirds of its time: one strategy's chances over the seats sum to 1); a later "
        "--exploitability runs the second pass only",
    )
    q.add_argument(
        "--fair-start",
        action="store_true",
        help="also the first mover's edge and the head starts for the later seats that make the game fairest",
    )
    q.add_argument(
        "--kingmakers",
        action="store_true",
        help="also the census of positions (3 players) where a mover with almost no chance of its own decides "
        "which of the others wins, and how often equilibrium play reaches them",
    )
    q.add_argument(
        "--below", type=float, default=0.01, help="the census's bound on the mover's own chance (default 0.01)"
    )
    q.add_argument(
        "--kingmaker-games",
        type=int,
        default=2000,
        metavar="N",
        help="games of equilibrium play sampled for how often the census's positions are reached (default "
        "2000; 0: none)",
    )
    q.add_argument(
        "--reached-only",
        action="store_true",
        help="census only the positions those games reach (the whole census of classic to 10,000 is 1.4 "
        "million positions, over an hour on 2 cores)",
    )
    q.add_argument("--seed", type=int, default=0, help="seed of those games (default 0)")
    q.add_argument(
        "--plot",
        metavar="PNG",
        help="with --fair-start (3 players): also save how far from fair every pair of head starts leaves the "
        "seats, and with --kingmakers where the census's positions lie, as a PNG",
    )
    q.set_defaults(func=cmd_equilibrium)
