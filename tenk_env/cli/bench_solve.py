"""`tenk bench solve`: time and peak memory of the exact solvers.

Solves the 2-player game of ``classic`` (``--quick``: classic with a 2,000 target; another
preset with ``--solve-rules``, e.g. ``zilch``) without the cache, in a child process so that
its peak resident memory is its own. Target for classic: under 5 minutes and 4 GB on the
2-core development machine. Under a bust penalty it also times the exact evaluation of
``dicenow`` against ``optimal`` on that solution (value iteration over outcomes read once).

``--solve-players 3`` (or 4) instead solves the exact best response to ``dicenow`` and
``maxscore`` (and ``breakeven`` at 4 players) at ``--solve-target`` (default 10,000, the
classic target; ``--quick``: 2,000), and at 3 players then the symmetric equilibrium there,
each in its own child process. Target at 3 players and 10,000: under 60 minutes and 8 GB each.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time

from rich.table import Table

from tenk_env.cli.common import console, peak_mb
from tenk_env.policies.base import make_agent
from tenk_env.policies.exact import BotPolicy
from tenk_env.rules import load_ruleset
from tenk_env.solve import best_response_multi, evaluate_multi, solve_equilibrium, solve_game, solve_turn
from tenk_env.solve.evaluate import evaluate_policies, optimal_policy


def _child(name: str, target: int | None, q) -> None:
    r = load_ruleset(name)
    if target:
        r = r.replace(target=target, name=f"{r.name}@{target}")
    solve_turn(r, cache=False)  # compiles the kernels (numba caches them on disk)
    t0 = time.perf_counter()
    turn = solve_turn(r, cache=False)
    t1 = time.perf_counter()
    sol = solve_game(r, cache=False, with_fair_komi=False)
    t2 = time.perf_counter()
    res = {
        "ruleset": r.name,
        "turn_s": t1 - t0,
        "game_s": t2 - t1,
        "points_per_turn": turn.points_per_turn,
        "p_first": sol.p_first_win,
        "pairs": sol.stats["pairs"],
        "sweeps": sol.stats["sweeps"],
    }
    if sol.penalty:
        e = evaluate_policies(r, BotPolicy(make_agent("dicenow"), r), optimal_policy(sol), sol=sol, cache=False)
        res.update(eval_s=time.perf_counter() - t2, p_dicenow=e.p_a)
    q.put({**res, "peak_mb": peak_mb()})


#: the opponents of the N-player best response, by player count
OPPONENTS = {2: ["dicenow"], 3: ["dicenow", "maxscore"], 4: ["dicenow", "maxscore", "breakeven"]}


def _multi_child(players: int, target: int, q) -> None:
    r = load_ruleset("classic")
    r = r.replace(target=target, name=f"classic@{target}")
    small = r.replace(target=600, name="classic@600")
    evaluate_multi(small, [BotPolicy(make_agent(b), small) for b in OPPONENTS[players] + ["dicenow"]], cache=False)
    best_response_multi(small, [BotPolicy(make_agent(b), small) for b in OPPONENTS[players]], cache=False)
    t0 = time.perf_counter()
    br = best_response_multi(r, [BotPolicy(make_agent(b), r) for b in OPPONENTS[players]], cache=False)
    q.put(
        {
            "ruleset": r.name,
            "players": players,
            "opponents": OPPONENTS[players],
            "seconds": time.perf_counter() - t0,
            "p": br.p,
            "p_seat": [float(x) for x in br.p_seat],
            "dp_calls": br.stats["dp_calls"],
            "states": int(br.U1.shape[0]),
            "residual": br.stats["residual"],
            "peak_mb": peak_mb(),
        }
    )


def _eq_child(target: int, q) -> None:
    r = load_ruleset("classic")
    solve_equilibrium(r.replace(target=500, name="classic@500"), 3, cache=False)  # compiles the kernels
    r = r.replace(target=target, name=f"classic@{target}")
    t0 = time.perf_counter()
    eq = solve_equilibrium(r, 3, cache=False)
    assert eq is not None
    q.put(
        {
            "ruleset": r.name,
            "seconds": time.perf_counter() - t0,
            "p_seat": [float(x) for x in eq.p_seat],
            "peak_mb": peak_mb(),
            **eq.stats,
        }
    )


def _in_child(target, *args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    res = q.get()
    p.join()
    return res


def _within(res: dict) -> None:
    ok = res["seconds"] < 3600 and res["peak_mb"] < 8192
    console.print(("within" if ok else "[red]outside[/red]") + " the target of 60 minutes and 8 GB")


def _run_multi(args: argparse.Namespace) -> None:
    n = args.solve_players
    target = 2000 if args.quick else args.solve_target
    res = _in_child(_multi_child, n, target)
    t = Table(title=f"exact {n}-player best response to {', '.join(res['opponents'])} (numba kernels, 1 process)")
    for col in ("ruleset", "seconds", "peak MB", "P(win), rotation mean", "score vectors", "turn inductions"):
        t.add_column(col, justify="right")
    t.add_row(
        res["ruleset"],
        f"{res['seconds']:,.0f}",
        f"{res['peak_mb']:,.0f}",
        f"{res['p']:.6f}",
        f"{res['states']:,}",
        f"{res['dp_calls']:,}",
    )
    console.print(t)
    if n == 3 and target == 10_000:
        _within(res)
    out = {"best_response": res}
    if n == 3:
        eq = _in_child(_eq_child, target)
        t = Table(title="symmetric 3-player equilibrium (numba kernels, 1 process)")
        for col in ("ruleset", "seconds", "peak MB", "P(win) by seat", "cycles", "turns solved", "without a pure eq."):
            t.add_column(col, justify="right")
        t.add_row(
            eq["ruleset"],
            f"{eq['seconds']:,.0f}",
            f"{eq['peak_mb']:,.0f}",
            " / ".join(f"{x:.4f}" for x in eq["p_seat"]),
            f"{eq['cycles']:,}",
            f"{eq['turns_solved']:,}",
            f"{eq['no_pure']} (ε {eq['epsilon']:.1e})",
        )
        console.print(t)
        if target == 10_000:
            _within(eq)
        out["equilibrium"] = eq
    if getattr(args, "json", None):
        print(json.dumps(out if n == 3 else res))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--solve-players",
        type=int,
        choices=(2, 3, 4),
        default=2,
        help="solve: 2 (default) times the 2-player game solve; 3 or 4 the N-player best response",
    )
    parser.add_argument(
        "--solve-rules",
        default="classic",
        metavar="PRESET",
        help="solve: the ruleset of the 2-player game solve (default classic; zilch: value iteration "
        "under its bust penalty)",
    )
    parser.add_argument(
        "--solve-target",
        type=int,
        default=10_000,
        help="solve: the classic target for the N-player best response (default 10,000)",
    )


def run(args: argparse.Namespace) -> None:
    if getattr(args, "solve_players", 2) > 2:
        _run_multi(args)
        return
    target = 2000 if args.quick else None
    name = getattr(args, "solve_rules", "classic")
    load_ruleset(name)  # a bad name fails here, not in the child
    res = _in_child(_child, name, target)
    t = Table(title="exact solve (numba kernels, 1 process)")
    states = "states x sweeps" if res["sweeps"] else "state pairs"
    for col in ("ruleset", "turn solve s", "game solve s", "peak MB", "P(first wins)", states):
        t.add_column(col, justify="right")
    t.add_row(
        res["ruleset"],
        f"{res['turn_s']:.2f}",
        f"{res['game_s']:.1f}",
        f"{res['peak_mb']:.0f}",
        f"{res['p_first']:.6f}",
        f"{res['pairs']:,}" + (f" x {res['sweeps']}" if res["sweeps"] else ""),
    )
    console.print(t)
    if "eval_s" in res:
        console.print(
            f"exact evaluation of dicenow against optimal on it: {res['eval_s']:.1f} s, P(dicenow wins) "
            f"{res['p_dicenow']:.6f} seat-balanced",
            highlight=False,
        )
    if name == "classic":
        ok = res["game_s"] < 300 and res["peak_mb"] < 4096
        console.print(("within" if ok else "[red]outside[/red]") + " the target of 5 minutes and 4 GB")
    if getattr(args, "json", None):
        print(json.dumps(res))
