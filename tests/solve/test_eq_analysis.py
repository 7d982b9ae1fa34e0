"""What the symmetric equilibrium says about the game (tenk_env.solve.eq_analysis): fair head
starts, held at 2 players to the game solution with a komi, and the kingmaker census, whose
turn-by-turn extremes must give back the solver's own values when the objective is the mover's
own chance. The sampled reach of positions (tenk_env.evaluation.reach) is checked on positions
every game must pass."""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.reach import sample_reach
from tenk_env.policies.exact import EquilibriumAgent
from tenk_env.rules import PRESETS
from tenk_env.solve import Below, SolverError, fair_head_start, kingmaker_census, solve_equilibrium, solve_game
from tenk_env.solve.eq_analysis import _extremes
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.spec import P_N

CLASSIC = PRESETS["classic"]
#: no entry threshold, so that a head start and the komi (which leaves a seat off the board) agree
NO_ENTRY = CLASSIC.replace(target=600, entry_threshold=0)
#: classic to 500: a final round, and a pure equilibrium in every cycle of turns
SMALL = CLASSIC.replace(target=500)


def test_a_head_start_at_two_players_is_the_komi():
    eq = solve_equilibrium(NO_ENTRY, 2)
    for k in (0, 50, 150, 300):
        sol = solve_game(NO_ENTRY.replace(komi=k), cache=False)
        assert eq.values([0, k])[0] == pytest.approx(sol.p_first_win, abs=1e-11), k


@pytest.mark.parametrize("n", [2, 3])
def test_the_fair_head_start_is_the_fairest_on_the_grid(n):
    eq = solve_equilibrium(NO_ENTRY if n == 2 else SMALL, n)
    h = fair_head_start(eq, top=200)
    assert h.points[0] == 0 and h.p_seat == pytest.approx(eq.values(list(h.points)), abs=0)
    # every other candidate on the grid is at least as far from fair
    grid = np.arange(0, 201, 50)
    for starts in np.stack(np.meshgrid(*([grid] * (n - 1))), -1).reshape(-1, n - 1):
        p = eq.values([0, *starts])
        assert np.abs(p - 1 / n).max() >= h.spread
    assert h.spread < np.abs(eq.p_seat - 1 / n).max()  # fairer than no head start
    with pytest.raises(ValueError, match="below the target"):
        fair_head_start(eq, top=eq.rules.target)


def test_the_turn_played_for_itself_is_the_equilibrium_value():
    # the objective 1 - next - last is the mover's own chance: its best turn is the solver's
    eq = solve_equilibrium(SMALL, 3)
    assert eq.stats["no_pure"] == 0
    cand = np.arange(eq.target_units**3, dtype=np.int64)
    own = 1.0 + _extremes(eq, cand, np.array([[-1.0, -1.0]]))[:, 0]
    assert np.abs(own - eq.E[0]).max() < 1e-12


def test_a_turn_past_the_cap_is_the_better_of_its_bank_and_a_bust():
    # under an immediate end a bank to the target wins, so the others' chance is 0 there and a
    # turn played for one of them rolls on until it busts: the census stops the induction at
    # the target with that closed form; here the induction runs 300 units further instead (the
    # chance to get that far is below 1e-13) and must find the same values
    eq = solve_equilibrium(SMALL.replace(end="immediate"), 3)
    s, tu = eq.spec, eq.target_units
    W = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, -1.0], [-1.0, 1.0]])
    cand = np.arange(0, tu**3, 7, dtype=np.int64)
    got = _extremes(eq, cand, W)
    nd = int(s.prm[P_N])
    for c, idx in enumerate(cand):
        d = [int(idx % tu), int(idx // tu % tu), int(idx // tu**2)]
        Tcap = tu - d[0] + 300
        after = np.zeros((Tcap + s.max_step + 2, 2))  # past the target the mover has won
        for T in range(tu - d[0]):
            n = d[1] + tu * d[2] + tu * tu * (d[0] + T)
            after[T] = eq.E[0, n], eq.E[1, n]
        fa = int(rules_k.on_board(s.prm, d[0]))
        V = np.zeros((1, nd + 1, Tcap + 1))
        for w in range(len(W)):
            obj = after @ W[w]
            beta = float(obj[0])
            turn_k.turn_dp(
                s.prm,
                s.rolls,
                fa,
                Tcap,
                obj,
                beta,
                beta,
                True,
                True,
                V,
                obj,
                beta,
                Tcap,
                V,
                np.zeros_like(V),
                -1.0,
                0.0,
            )
            assert got[c, w] == pytest.approx(V[0, nd, 0], abs=1e-12), (d, W[w])


def test_the_census_brackets_equilibrium_play():
    eq = solve_equilibrium(SMALL, 3)
    k = kingmaker_census(eq, threshold=0.3)
    assert len(k.own) == int((eq.E[0] < 0.3).sum()) > 0 and k.positions == eq.target_units**3
    assert (k.own < 0.3).all()
    # the equilibrium's own turn is one of the turns the extremes range over
    assert (k.lo <= k.eq + 1e-12).all() and (k.eq <= k.hi + 1e-12).all()
    assert (k.swing >= 0).all()
    # where the mover decides, each of the others can be put ahead: the extremes cross
    d = k.decides
    assert d.any() and (k.hi[d, 0] > k.lo[d, 1]).all() and (k.hi[d, 1] > k.lo[d, 0]).all()
    # a position's row holds its scores, read from the mover, in points
    i = int(np.argmax(k.swing))
    assert k.lookup()[tuple(int(x) for x in k.scores[i])] == i
    assert eq.values(list(k.scores[i]))[0] == k.own[i]


def test_a_census_of_given_positions_is_the_whole_censuss_rows():
    eq = solve_equilibrium(SMALL, 3)
    full = kingmaker_census(eq, threshold=0.3)
    pick = full.scores[::3]
    # positions above the bound are left out, as are repeats
    above = np.array([[0, 0, 0]]) if eq.E[0, 0] >= 0.3 else np.zeros((0, 3), np.int64)
    part = kingmaker_census(eq, threshold=0.3, positions=np.concatenate([pick, pick[:2], above]))
    assert part.positions == len(pick) + len(above) and len(part.own) == len(pick)
    rows = [full.lookup()[tuple(int(x) for x in sc)] for sc in part.scores]
    for a, b in ((part.lo, full.lo), (part.hi, full.hi), (part.eq, full.eq), (part.decides, full.decides)):
        assert np.array_equal(a, b[rows])
    hopeless = Below(eq, 0.3)
    assert all(tuple(int(x) for x in sc) in hopeless for sc in full.scores)
    assert (0, 0, 0) not in hopeless and (25, 0, 0) not in hopeless and (0, 0, 500) not in hopeless
    with pytest.raises(ValueError, match="multiples of 50"):
        kingmaker_census(eq, positions=[[25, 0, 0]])


def test_the_census_refuses_what_it_does_not_cover():
    with pytest.raises(SolverError, match="needs 3 players"):
        kingmaker_census(solve_equilibrium(NO_ENTRY, 2))
    with pytest.raises(SolverError, match="max_rolls 0"):
        kingmaker_census(solve_equilibrium(CLASSIC.replace(target=300, max_rolls=2), 3))


def test_sampled_reach_counts_every_regular_turn():
    agent = EquilibriumAgent()
    sets = {"start": {(0, 0, 0)}, "none": set()}
    got = sample_reach(SMALL, [agent] * 3, sets, games=30, seed=4)
    start, none = got["start"], got["none"]
    # every game opens at 0, 0, 0, and the same games are played for every set
    assert start.reached == start.games == 30 and start.hits >= 30 and start.turns == none.turns
    assert none.reached == none.hits == 0 and none.interval[0] == 0.0
    # a part of a set, counted on the same games
    assert start.within({(0, 0, 0)}).per_game == start.per_game and start.within(set()).reached == 0
    again = sample_reach(SMALL, [agent] * 3, sets, games=30, seed=4)["start"]
    assert (again.turns, again.hits) == (start.turns, start.hits)
    with pytest.raises(ValueError, match="at least 1"):
        sample_reach(SMALL, [agent] * 3, sets, games=0)


def _out(capsys) -> str:
    return " ".join(capsys.readouterr().out.split())


def test_tenk_solve_equilibrium_fair_start_and_kingmakers(tmp_path, capsys):
    rules = tmp_path / "small.yaml"
    rules.write_text("base: classic\ntarget: 500\n")
    eq = solve_equilibrium(SMALL, 3)
    h = fair_head_start(eq)
    k = kingmaker_census(eq, threshold=0.3)
    argv = ["solve", "equilibrium", str(rules), "--fair-start", "--kingmakers", "--below", "0.3"]
    png = tmp_path / "eq.png"
    assert main([*argv, "--kingmaker-games", "10", "--plot", str(png)]) == 0
    out = _out(capsys)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"plot: {png}" in out
    assert f"seat 1 {100 * (eq.p_seat[0] - 1 / 3):+.2f}" in out
    assert f"seat 2 {h.points[1]:,}, seat 3 {h.points[2]:,}" in out
    assert f"{len(k.own):,} of {k.positions:,} score vectors" in out
    assert f"the largest swing: {100 * k.swing.max():.2f} points" in out
    assert f"the largest swing where it decides: {100 * k.swing[k.decides].max():.2f} points" in out
    assert "games of equilibrium play that reach a kingmaker" in out and "of 10 (seed 0;" in out
    for bad, why in (
        (["--players", "2"], "needs 3 players"),
        (["--below", "0.4"], "between 0 and 1/3"),
        (["--kingmaker-games", "-1"], "0 or more"),
    ):
        assert main([*argv, *bad]) == 2
        assert why in _out(capsys)
    plain = ["solve", "equilibrium", str(rules)]
    for bad, why in (
        (["--kingmakers", "--plot", str(png)], "give it with --fair-start"),
        (["--fair-start", "--plot", str(tmp_path)], "--plot"),  # a folder, not a file
        (["--reached-only"], "give it with --kingmakers"),
        (["--kingmakers", "--reached-only", "--kingmaker-games", "0"], "give --kingmaker-games N"),
    ):
        assert main([*plain, *bad]) == 2
        assert why in _out(capsys)


def test_tenk_solve_equilibrium_kingmakers_where_play_goes(tmp_path, capsys):
    # without an entry threshold regular turns start at many score vectors (classic to 500 has
    # none but 0, 0, 0: its first bank reaches the target)
    rules = tmp_path / "open.yaml"
    rules.write_text("base: classic\ntarget: 500\nentry_threshold: 0\n")
    r = CLASSIC.replace(target=500, entry_threshold=0)
    eq = solve_equilibrium(r, 3)
    seen = sample_reach(r, [EquilibriumAgent()] * 3, {"": Below(eq, 0.3)}, 20, 0)[""].visits
    k = kingmaker_census(eq, 0.3, positions=np.array(sorted(seen)))
    assert len(seen) > 0 and len(k.own) == len(seen)
    argv = ["solve", "equilibrium", str(rules), "--kingmakers", "--below", "0.3", "--kingmaker-games", "20"]
    assert main([*argv, "--reached-only"]) == 0
    out = _out(capsys)
    assert f"that the 20 games of equilibrium play reach: {len(seen):,}; at {int(k.decides.sum()):,} of them" in out
