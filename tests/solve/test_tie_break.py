"""The tie-break, pinned: exact ties posed to the turn kernels, the live move choice and the
3-player equilibrium's turn.

The rule (tenk_env.solve.kernels.rules): within a keep, ending the turn wins a tie with rolling
on (``ends_turn``); across keeps, visited points descending then dice ascending, only a strictly
better value replaces the first (``better_keep``). Every value here is an exact tie, so
flipping either half of the rule changes what these tests see.
"""

from __future__ import annotations

import numpy as np
import pytest

from tenk_env.game import Game
from tenk_env.rules import PRESETS
from tenk_env.solve.kernels import equilibrium as eq_k
from tenk_env.solve.kernels import evaluation as eval_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.policy import choose, pick
from tenk_env.solve.spec import NORMAL, WIN, build_spec

#: no entry threshold, no minimum bank, unlimited rolls, optional hot dice: every keep may bank
BN = PRESETS["busche_neller_2017"].replace(target=1000)


@pytest.fixture(scope="module")
def spec():
    return build_spec(BN, for_game=True)


def _arrays(s):
    return s.prm, s.rolls


def _first_keep_banked(s, value_of_total):
    """The value of a turn that banks the first keep in tie order after its first roll, summed
    in the kernels' order (class by class), and where its banks land."""
    N = s.n_dice
    v = 0.0
    lands = np.zeros(s.max_step + 1)
    for c in range(s.cstart[N], s.cstart[N + 1]):
        if s.c_kind[c] == NORMAL:
            T2 = s.o_p[s.c_os[c]]
            v += s.c_prob[c] * value_of_total(T2)
            lands[T2] += s.c_prob[c]
        elif s.c_kind[c] == WIN:
            v += s.c_prob[c]
    return v, lands


# ---------------------------------------------------------------------------- the turn kernels
@pytest.mark.parametrize("choose_self", [True, False], ids=["own_values", "preference_tables"])
def test_a_turn_banks_where_banking_ties_with_rolling_on(spec, choose_self):
    # every value is 0: banking ties with rolling on after every keep, so the turn banks
    # after its first roll and ends unbanked only on that roll's bust
    N, Tcap = spec.n_dice, 30
    bv = np.zeros(Tcap + spec.max_step + 2)
    V = np.empty((1, N + 1, Tcap + 1))
    Q = np.empty((1, N + 1, Tcap + 1))
    prefs = np.zeros((1, N + 1, Tcap + 1))
    turn_k.turn_dp(*_arrays(spec), 1, Tcap, bv, 0.0, 0.0, True, choose_self, prefs, bv, 0.0, Tcap, V, Q, -1.0, 0.0)
    assert V[0, N, 0] == 0.0
    assert Q[0, N, 0] == spec.p_bust[N]
    assert (Q[0, 1:, :] == spec.p_bust[1:, None]).all()


def test_a_turn_takes_the_first_keep_in_tie_order(spec):
    # banking is worth 1 whatever the total (strictly better than rolling on, which may bust
    # to 0), so every keep of a roll ties: the turn banks the first, the most points
    N, Tcap = spec.n_dice, 30
    bv = np.ones(Tcap + spec.max_step + 2)
    V = np.empty((1, N + 1, Tcap + 1))
    A = np.empty((1, N, Tcap + spec.max_step + 1))
    turn_k.optimal_values(*_arrays(spec), 1, Tcap, bv, 0.0, 0.0, -1.0, 0.0, V, A)
    out = np.zeros(Tcap + spec.max_step + 2)
    win, qb, qf = turn_k.self_forward(*_arrays(spec), 1, Tcap, bv, 0.0, 0.0, V, A, np.empty_like(V), -1.0, 0.0, out)
    _, lands = _first_keep_banked(spec, float)
    assert np.array_equal(out[: lands.shape[0]], lands) and not out[lands.shape[0] :].any()
    assert (win, qb, qf) == (0.0, spec.p_bust[N], 0.0)


def test_a_self_valued_turn_carries_the_tie_breaks_choice(spec):
    # chosen on all-zero values (every option ties), valued at "points banked": the first keep
    # of the first roll, banked
    N, Tcap = spec.n_dice, 30
    size = Tcap + spec.max_step + 2
    bv = np.arange(size, dtype=float)
    V2, Q2, V, Q = (np.empty((1, N + 1, Tcap + 1)) for _ in range(4))
    turn_k.self_eval_dp(*_arrays(spec), 1, Tcap, np.zeros(size), 0.0, bv, V2, Q2, V, Q, -1.0, 0.0)
    want, _ = _first_keep_banked(spec, float)
    assert V[0, N, 0] == want
    assert Q[0, N, 0] == spec.p_bust[N]


def test_a_table_policy_ends_on_the_first_keep_where_its_preferences_tie(spec):
    N, Tcap = spec.n_dice, 30
    c = np.array([c for c in range(spec.cstart[N], spec.cstart[N + 1]) if spec.c_kind[c] == NORMAL])
    zeros = np.zeros(len(c), np.int64)
    out = np.full(len(c), -1, np.int64)
    prefs = np.zeros((2, 1, N + 1, Tcap + 1))
    eval_k.table_decide(
        spec.prm,
        spec.rolls,
        np.zeros(1, np.int64),
        np.ones(1, np.int64),
        zeros,
        zeros,
        zeros + N,
        0,
        c,
        prefs,
        np.zeros(Tcap + 1),
        0.0,
        out,
    )
    assert (out == 1).all()  # 2 * option + end: option 0, ending the turn


# ---------------------------------------------------------------------------- the live move choice
def _rolled(dice):
    g = Game(BN)
    g.roll(dice)
    return g


def test_the_live_choice_ends_the_turn_on_the_first_keep_of_a_tie():
    g = _rolled([1, 5, 2, 3, 4, 6])  # keeps: 1 + 5 (150), 1 (100), 5 (50)
    roll_pref = np.zeros((1, 7, 100))
    keep, end = pick(g, 50, roll_pref, 99, lambda T: 0.0, 0.0, 0, True)
    assert (keep.points, keep.n, end) == (150, 2, True)
    # banking strictly better than rolling on, the keeps still tied: the first keep
    keep, end = pick(g, 50, roll_pref, 99, lambda T: 1.0, 0.0, 0, True)
    assert (keep.points, keep.n, end) == (150, 2, True)


def test_choose_breaks_ties_as_the_kernels_do():
    a, b = object(), object()
    assert choose([(a, 0.25, 0.25), (b, 0.25, 0.25)]) == (a, True)
    assert choose([(a, 0.25, None), (b, 0.25, 0.25)]) == (a, False)
    assert choose([(a, 0.25, None), (b, 0.5, None)]) == (b, False)


# ---------------------------------------------------------------------------- the 3-player equilibrium
def test_the_equilibrium_movers_tie_break_decides_the_others_chances():
    # A mover of the 3-player equilibrium indifferent everywhere: its own chance is 0 after
    # every bank and every bust (exactly, so that sums of it are exact), so every option ties. The chance X that someone other than
    # the last player wins is not: it depends on where the bank lands, so the tie-break
    # (bank, the first keep in tie order) decides how the others share the game.
    rules = BN.replace(target=500, end="final_round")
    s = build_spec(rules, for_game=True)
    N, tu, Nd, J = 3, 10, s.n_dice, 40
    n = np.arange(tu**N)
    x = (n // tu ** (N - 1) % 4) / 8.0  # dyadic: own = 1 - (1 - x) - x is exactly 0
    E = np.stack([1.0 - x, x])
    TW = np.zeros((J, tu ** (N - 1)))
    XT = np.repeat((np.arange(J) / 64.0)[None, :, None], tu ** (N - 1), axis=2)
    d = np.array([3, 4, 5], np.int64)
    size = tu + J + s.max_step + 4
    bufs = [np.empty(size), np.empty((1, size))] + [np.empty((1, Nd + 1, size)) for _ in range(4)]
    X = np.empty(1)
    own, q = eq_k.eq_turn(*_arrays(s), s.max_step, tu, N, d, E, TW, XT, 0.0, 1e-12, -1.0, 0.0, 0.0, *bufs, X)

    def x_after_bank(T2):
        y = d[0] + T2
        if y < tu:
            return 1.0 - E[N - 2, d[1] + tu * d[2] + tu**2 * y]
        return XT[0, min(y - tu, J - 1), d[1] + tu * d[2]]

    carried, _ = _first_keep_banked(s, x_after_bank)
    assert q == s.p_bust[Nd]
    assert X[0] == carried
    assert own == 0.0
