"""Rulesets at the edges of what the fields allow: the compiled kernels stay inside their
arrays (checked by numba's bounds checking), and a ruleset whose games would end only with
negligible chance is refused at validation with the field, the chance and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tenk_env.cli.main import main
from tenk_env.evaluation.play import GameTooLongError, RngDice, play_game
from tenk_env.rules import MIN_BANK_CHANCE, PRESETS, RulesetError, load_ruleset
from tenk_env.solve.game import solve_game
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.shared import forced_extension
from tenk_env.solve.spec import P_ENTRY, P_MINBANK, build_spec
from tenk_env.tables import get_tables

from support import ROOT
from support.reference_turn import self_eval_dp_keep_by_keep

C, F = PRESETS["classic"], PRESETS["farkle_official"]

#: shapes that stretch a kernel's arrays: a threshold past the target (the turn-total axis must
#: reach it), 5 dice with a roll limit, forced rolls, zilch pay-outs, instant wins and a komi
ODD = {
    "entry_past_target": dict(base="farkle_official", target=1000, entry_threshold=5000, end="immediate"),
    "minbank_past_target": dict(base="farkle_official", target=800, min_bank=2500, entry_threshold=0),
    "five_dice_rolls": dict(
        base="classic",
        num_dice=5,
        straight=0,
        three_pairs=0,
        short_straights=1000,
        target=800,
        max_rolls=2,
        entry_threshold=300,
    ),
    "hot_mandatory": dict(base="classic", target=600, hot_dice="mandatory", end="one_more_roll"),
    "zilch_payout": dict(base="classic", target=500, zilch_payout=500, min_bank=300, tie="shared"),
    "instant_komi": dict(base="classic", target=600, six_of_a_kind_wins="any", komi=100),
}

#: run in a child process: numba reads NUMBA_BOUNDSCHECK when it compiles, so the kernels are
#: compiled afresh (into their own cache folder) with every array access checked
PROBE = r"""
import json, sys
from tenk_env.evaluation.analysis import analyse
from tenk_env.evaluation.match import chunk_tasks, play_deals_batched
from tenk_env.rules import load_ruleset
from tenk_env.solve import evaluate, maxscore_policy, solve_best_response, solve_game
from tenk_env.solve.evaluate import TableTabulated

out = {}
for name, fields in json.loads(sys.argv[1]).items():
    r = load_ruleset(fields)
    sol = solve_game(r, cache=False, with_fair_komi=False)
    ev = evaluate(r, "optimal", "maxscore", sol=sol, cache=False)
    out[name] = [sol.p_first_win, ev.p_a_first]
    if name in ("entry_past_target", "five_dice_rolls"):  # the other kernels once each: compiling costs most
        br = solve_best_response(r, TableTabulated(maxscore_policy(r)), sol=sol, cache=False)
        a = analyse("maxscore", r, games=2, seed=0, workers=1)
        chunks = play_deals_batched(r, ["maxscore", "dicenow"], chunk_tasks("x", r, [0, 1], 0, 2))
        out[name] += [br.p_first, a.report.regret_per_game, float(sum(c.win.sum() for c in chunks))]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_solver_kernels_stay_inside_their_arrays(tmp_path):
    """Before the turn-total axis was sized from the thresholds, ``entry_past_target`` wrote
    past the solver's buffers (``free(): invalid next size`` from ``tenk solve game``)."""
    env = {
        **os.environ,
        "NUMBA_BOUNDSCHECK": "1",
        "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
        "TENK_CACHE": str(tmp_path / "cache"),
    }
    got = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(ODD)],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    assert got.returncode == 0, got.stderr[-3000:]
    checked = json.loads(got.stdout.strip().splitlines()[-1])
    # the same figures from the kernels compiled as usual
    for name, fields in ODD.items():
        r = load_ruleset(fields)
        sol = solve_game(r, cache=False, with_fair_komi=False)
        assert checked[name][0] == pytest.approx(sol.p_first_win, abs=1e-12), name
        assert 0.0 < checked[name][0] < 1.0 and 0.0 < checked[name][1] < 1.0
    for name in ("entry_past_target", "five_dice_rolls"):
        p_br, regret, wins = checked[name][2:]
        assert p_br >= checked[name][1] - 1e-12 and regret >= 0 and wins == 4.0  # 2 deals x 2 seatings, one win each


def test_turn_total_axis_reaches_every_threshold():
    r = load_ruleset(ODD["entry_past_target"])
    sol = solve_game(r, cache=False, with_fair_komi=False)
    assert sol.t_len > 5000 // sol.unit + sol.spec.max_step
    assert sol.t_len > sol.target_units + sol.Leps + sol.spec.max_step


@pytest.mark.parametrize("name", ["classic", "inform_five_dice", "zilch", "bc_society", "wikihow"])
@pytest.mark.parametrize("threshold", [500, 3000, 10_000])
def test_bank_chance_agrees_with_the_turn_solver(name, threshold):
    """Two separate computations of the best chance that a turn ends able to bank a threshold:
    the tables' own backward induction and the game solver's turn kernel with every bank worth 1
    and a bust worth 0."""
    rules = PRESETS[name].replace(bust_penalty=0)
    s = build_spec(rules, for_game=True)
    prm = s.prm.copy()
    prm[P_ENTRY], prm[P_MINBANK] = -(-threshold // s.unit), 0
    Tcap = int(prm[P_ENTRY])
    V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tcap + 1))
    Q = np.zeros_like(V)
    bv = np.ones(Tcap + s.max_step + 2)
    turn_k.turn_dp(
        prm,
        s.rolls,
        0,
        Tcap,
        bv,
        0.0,
        0.0,
        True,
        True,
        V,
        bv,
        0.0,
        Tcap,
        V,
        Q,
        *forced_extension(prm, s),
    )
    assert get_tables(rules).bank_chance(threshold) == pytest.approx(V[0, s.n_dice, 0], rel=1e-12, abs=1e-300)


def test_bank_chance_known_values():
    t = get_tables(C)
    assert t.bank_chance(0) == 1.0
    assert t.bank_chance(500) == pytest.approx(0.5695337233159176, abs=1e-12)
    assert t.bank_chance(10_000) == pytest.approx(9.557269324813567e-06, rel=1e-9)
    # one roll of six dice reaches 4,050 only as five 1s and a 5 (6 orders), six 1s or six 6s
    assert get_tables(C.replace(max_rolls=1, min_bank=4000)).bank_chance(4050) == pytest.approx(8 / 6**6, rel=1e-12)


@pytest.mark.parametrize("name", sorted(PRESETS) + sorted(ODD))
def test_the_self_choosing_turn_kernel_is_the_general_one_bit_for_bit(name):
    """Every solver and the optimal agent choose by their own values through a kernel that works
    out each after-keep state's best action once; the general kernel (any chooser) does it
    keep by keep. Same values and slopes to the last bit, ties included, and a radius no larger,
    for random bank values, bust and forfeit values, forced-roll extensions and free-roll tables."""
    rules = load_ruleset(ODD.get(name, name))
    rng = np.random.default_rng(len(name))
    for for_game in (True, False):
        s = build_spec(rules, for_game=for_game)
        for trial in range(6):
            Tcap = int(rng.integers(0, 90))
            L = Tcap + s.max_step + 2
            bv = rng.random(L) if trial % 2 else np.sort(rng.random(L))
            beta, forf = float(rng.random()), float(rng.random())
            fA, fB = (-1.0, 0.0) if trial < 3 else (0.5 * float(rng.random()), 0.5 * float(rng.random()))
            rv = rng.random(L) if trial == 5 else np.zeros(0)
            out = []
            for kernel in (turn_k._general_dp, turn_k.turn_dp_radius):
                V = np.full((s.n_rolls_dim, s.n_dice + 1, Tcap + 1), 7.0)
                Q, rad = V.copy(), np.zeros(1)
                kernel(
                    s.prm,
                    s.rolls,
                    trial % 2,
                    Tcap,
                    bv,
                    beta,
                    forf,
                    trial % 3 == 0,
                    True,
                    V,
                    bv,
                    forf,
                    Tcap,
                    V,
                    Q,
                    fA,
                    fB,
                    rad,
                    rv,
                )
                out.append((V, Q, rad[0]))
            (V0, Q0, r0), (V1, Q1, r1) = out
            assert np.array_equal(V0, V1) and np.array_equal(Q0, Q1), (name, for_game, trial)
            assert 0.0 <= r1 <= r0
        # the optimal agent's kernel: the same values
        V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tcap + 1))
        A = np.empty((s.n_rolls_dim, s.n_dice, Tcap + s.max_step + 1))
        turn_k.optimal_values(s.prm, s.rolls, 1, Tcap, bv, beta, forf, -1.0, 0.0, V, A)
        V0 = np.zeros_like(V)
        turn_k._general_dp(
            s.prm,
            s.rolls,
            1,
            Tcap,
            bv,
            beta,
            forf,
            False,
            True,
            V0,
            bv,
            forf,
            Tcap,
            V0,
            np.zeros_like(V0),
            -1.0,
            0.0,
            np.zeros(0),
            np.zeros(0),
        )
        assert np.array_equal(V, V0)


@pytest.mark.parametrize("name", sorted(PRESETS) + sorted(ODD))
def test_the_self_valued_evaluation_kernel_is_the_keep_by_keep_one_bit_for_bit(name):
    """The equilibrium's movers, the optimal agent in an evaluation and the final-round
    responders are chosen on one set of values and valued on another by a kernel that works
    out each after-keep state's action once. Held to the keep-by-keep reference on every
    preset: the same four arrays to the last bit, for random values and for values on a
    coarse grid (exact ties between banking and rolling on, and between keeps), with and
    without forced-roll extensions."""
    rules = load_ruleset(ODD.get(name, name))
    rng = np.random.default_rng(len(name) + 7)
    for for_game in (True, False):
        s = build_spec(rules, for_game=for_game)
        for trial in range(6):
            Tcap = int(rng.integers(0, 90))
            L = Tcap + s.max_step + 2
            if trial % 3 == 2:  # a grid of quarters: ties everywhere
                bv2, bv = rng.integers(0, 5, L) / 4.0, rng.integers(0, 5, L) / 4.0
                bo = float(rng.integers(0, 5)) / 4.0
            else:
                bv2 = rng.random(L) if trial % 2 else np.sort(rng.random(L))
                bv, bo = rng.random(L), float(rng.random())
            fA, fB = (-1.0, 0.0) if trial < 3 else (0.5 * float(rng.random()), 0.5 * float(rng.random()))
            got = []
            for kernel in (self_eval_dp_keep_by_keep, turn_k.self_eval_dp):
                arrays = [np.full((s.n_rolls_dim, s.n_dice + 1, Tcap + 1), 7.0) for _ in range(4)]
                kernel(s.prm, s.rolls, trial % 2, Tcap, bv2, bo, bv, *arrays, fA, fB)
                got.append(arrays)
            for a, b in zip(*got):
                assert np.array_equal(a, b), (name, for_game, trial)


@pytest.mark.parametrize(
    "fields, message",
    [
        (
            {"target": 3000, "entry_threshold": 40000},
            r"entry_threshold 40000 is reached in a turn with chance 3.4e-20 at best \(practically never\), so games would "
            r"not end in practice; a playable table needs a chance of at least 0.0001: lower entry_threshold to 7650 or less",
        ),
        ({"entry_threshold": 100000}, r"entry_threshold 100000 is reached in a turn with chance 5.1e-49"),
        (
            {"min_bank": 20000},
            r"min_bank 20000 is reached in a turn with chance 1.4e-10 at best \(one turn in "
            r"7,109,434,594\).*lower min_bank to 7650 or less",
        ),
        (
            {"max_rolls": 1, "min_bank": 5000},
            r"min_bank 5000 is reached within 1 roll with chance 2.1e-05 at best "
            r"\(one turn in 46,656\).*lower min_bank to 4050 or less",
        ),
    ],
)
def test_games_that_would_not_end_are_refused(fields, message):
    with pytest.raises(RulesetError, match=message):
        load_ruleset({"base": "classic", **fields})


def test_the_fix_offered_is_playable_and_the_next_step_is_not():
    assert get_tables(C).bank_chance(7650) >= MIN_BANK_CHANCE > get_tables(C).bank_chance(7700)
    assert load_ruleset({"base": "classic", "min_bank": 7650}).min_bank == 7650


def test_a_ruleset_file_is_named_in_its_errors(tmp_path, capsys):
    path = tmp_path / "deep.yaml"
    path.write_text("base: classic\ntarget: 3000\nentry_threshold: 40000\n")
    assert main(["rules", str(path)]) == 2
    err = capsys.readouterr().out
    assert f"error: ruleset file {str(path)!r}: ruleset 'deep': entry_threshold 40000" in " ".join(err.split())


def test_an_inline_ruleset_is_named_after_what_it_changes():
    assert load_ruleset({"base": "classic", "target": 3000}).name == "classic+target=3000"
    assert load_ruleset({"base": "classic", "target": 10_000}).name == "classic"  # no change: the same table
    assert load_ruleset({"base": "classic", "target": 3000, "name": "mine"}).name == "mine"
    many = load_ruleset(
        {"base": "farkle_official", "target": 2000, "entry_threshold": 0, "min_bank": 300, "max_rolls": 5}
    )
    assert many.name == "farkle_official+target=2000,entry_threshold=0,min_bank=300,..."


def test_a_game_that_does_not_end_names_the_agent_that_never_banks(capsys):
    with pytest.raises(
        GameTooLongError,
        match=r"not over after 30 turns .*never banked: hold:100000 \(seat 0\), "
        r"hold:100000 \(seat 1\)",
    ):
        play_game(C, ["hold:100000", "hold:100000"], RngDice(np.random.default_rng(0)), max_turns=30)
    # a ValueError, so that the command line prints it as one line
    assert issubclass(GameTooLongError, ValueError)
