"""The 2-player game (numba): :func:`solve_game` (levels of mirror pairs, solved as fixed
points) and, under a bust penalty, :func:`sweep_game` (value iteration), with their turn
inputs: the bank values (:func:`game_bank_values`), the sure-bank cap (:func:`opt_tcap`) and
the free rolls past it (:func:`free_roll_values`). The driver is :mod:`tenk_env.solve.game`.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.solve.kernels.rules import (
    bankable_from,
    better_keep,
    bust_target,
    ends_turn,
    forced_value,
    n_statuses,
    needs_extension,
)
from tenk_env.solve.kernels.turn import turn_dp, turn_dp_radius
from tenk_env.solve.spec import (
    BUST,
    END_IMMEDIATE,
    P_END,
    P_ENTRY,
    P_HOTMAND,
    P_MAXROLLS,
    P_N,
    P_TARGET,
    P_ZILCH,
    WIN,
    ZILCH,
)


@njit(cache=True)
def game_bank_values(prm, W, R, a, b, fb, length, bv):
    """bv[T] for T < length: the mover's win probability after banking a+T (opponent to move).
    ``fb`` is the opponent's status (see :func:`bust_target`); banking leaves the mover on the
    board with no busts in a row (status 1)."""
    tu = prm[P_TARGET]
    for T in range(length):
        s = a + T
        if s < tu:
            bv[T] = 1.0 - W[fb, 1, b, s]
        elif prm[P_END] == END_IMMEDIATE:
            bv[T] = 1.0
        else:
            # past the table the opponent's chance is its floor (0 unless a roll wins at once)
            bv[T] = 1.0 - R[fb & 1, min(s - b, R.shape[1] - 1)]


@njit(cache=True)
def opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, beta):
    """Last turn total the optimal DP of state (a, b) must compute.

    Past the target under a final round, banking beats rolling on once the opponent's
    final-turn chance R(lead) is at most pbmin * (1 - beta): rolling on can at best win
    with probability 1 - pbmin and otherwise busts to beta. So the cap is exact for
    bankable states. With forced rolls (mandatory hot dice, zilch) the cap also reaches
    the lead past which banking wins surely (to ``eps``), so that ``forced_value`` holds
    past it. ``Lx`` is unused (kept 0). ``fa``, ``fb``: statuses (:func:`bust_target`).
    """
    s = prm[P_TARGET]
    if prm[P_END] != END_IMMEDIATE:
        s = sure_bank_score(prm, Rsup, max(pbmin * (1.0 - beta), eps), b, fb)
        if needs_extension(prm):
            s = max(s, b + Rsup.shape[1])
    return max(s - a, bankable_from(prm, fa & 1))


@njit(cache=True)
def sure_bank_score(prm, Rsup, bound, b, fb):
    """The least score from the target up whose lead over b leaves the final-turn opponent
    (status fb) a chance of at most ``bound`` at every larger lead."""
    s = prm[P_TARGET]
    L = Rsup.shape[1]
    while s - b < L and Rsup[fb & 1, s - b] > bound:
        s += 1
    return s


@njit(cache=True)
def state_value(prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, a, b, fa, fb, beta, V, Q, bv, fA, fB):
    """Optimal value and bust slope of the mover's turn at (a, b, fa, fb) given the bust value
    (statuses fa, fb: :func:`bust_target`; a forfeit counts as a bust, as it does without a
    bust penalty)."""
    return state_value_f(
        prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, a, b, fa, fb, beta, beta, True, V, Q, bv, fA, fB
    )


@njit(cache=True)
def state_value_f(
    prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, a, b, fa, fb, beta, forf, forf_is_beta, V, Q, bv, fA, fB
):
    """:func:`state_value` with the value of a forfeited total given apart (under a bust
    penalty a forfeit is not a bust: it starts the count again)."""
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, beta)
    game_bank_values(prm, W, R, a, b, fb, Tcap + max_step + 1, bv)
    N = prm[P_N]
    turn_dp(prm, rolls, fa & 1, Tcap, bv, beta, forf, forf_is_beta, True, V, bv, forf, Tcap, V, Q, fA, fB)
    return V[0, N, 0], Q[0, N, 0], Tcap


@njit(cache=True)
def solve_game(prm, rolls, W, mask, R, Rsup, pbmin, eps, Lx, max_step, tol, V, Q, bv, stats, k_hi, k_lo):
    """Win probabilities W[fa, fb, a, b] of the player to move, for every masked state.

    States are solved by decreasing a + b: banking raises the sum, so only a bust (or a
    forfeited total) links a state to its own level, and then only to its mirror
    (b, a, fb, fa). Each such pair is a 2-variable fixed point x = F_A(1 - y),
    y = F_B(1 - x), F convex piecewise linear in the bust value with slope = the chance
    the turn ends unbanked (< 1). Newton steps on that linear model (policy iteration)
    converge in a few rounds; plain iteration, a contraction, backs them up.
    stats: [pairs, dp calls, max residual, max iterations]. Solves the levels k_hi down to
    k_lo (a + b = k; all levels: 2 * target - 2 down to 0), those above already solved: the
    caller solves in slices so that a signal (Ctrl-C) and progress get a turn between them.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    tu = prm[P_TARGET]
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, rolls)
    for k in range(k_hi, k_lo - 1, -1):
        for a in range(max(0, k - tu + 1), min(k, tu - 1) + 1):
            b = k - a
            if a > b:
                continue
            for fa in range(2):
                for fb in range(2):
                    if a == b and fa > fb:
                        continue
                    if not mask[fa, fb, a, b] and not mask[fb, fa, b, a]:
                        continue
                    single = a == b and fa == fb
                    # start from the neighbouring state solved at the level above
                    x = W[fa, fb, a, b + 1] if b + 1 < tu else 0.5
                    y = W[fb, fa, b, a + 1] if a + 1 < tu else 0.5
                    done = False
                    it = 0
                    res = 0.0
                    while not done:
                        it += 1
                        bA = 1.0 - y
                        vA, qA, _ = state_value(
                            prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, a, b, fa, fb, bA, V, Q, bv, fA, fB
                        )
                        stats[1] += 1
                        if single:
                            res = abs(vA - x)
                            if res < tol:
                                x = vA
                                y = vA
                                done = True
                            elif it <= 8:
                                cA = vA - qA * bA
                                x = (cA + qA) / (1.0 + qA)
                                y = x
                            else:
                                x = vA
                                y = vA
                        else:
                            bB = 1.0 - x
                            vB, qB, _ = state_value(
                                prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, b, a, fb, fa, bB, V, Q, bv, fA, fB
                            )
                            stats[1] += 1
                            res = max(abs(vA - x), abs(vB - y))
                            if res < tol:
                                x = vA
                                y = vB
                                done = True
                            elif it <= 8:
                                cA = vA - qA * bA
                                cB = vB - qB * bB
                                x = (cA + qA - qA * (cB + qB)) / (1.0 - qA * qB)
                                y = cB + qB * (1.0 - x)
                            else:
                                x = vA
                                y = vB
                        if it > 5000:
                            done = True
                    W[fa, fb, a, b] = x
                    W[fb, fa, b, a] = y
                    stats[0] += 1
                    if res > stats[2]:
                        stats[2] = res
                    if it > stats[3]:
                        stats[3] = it


@njit(cache=True)
def free_roll_values(prm, rolls, R, out):
    """out[fb, l]: the value of rolling all N dice when banking would leave the mover l units
    ahead of a final-turn opponent on board fb, for rulesets whose roll of N dice cannot bust
    (zilch: a roll of six with nothing pays and rolls again).

    Such a roll is never worse than banking, so past the sure-bank lead of
    :func:`free_cap` the player rolls all dice whenever they may and banks every other time:
    the value only grows with the lead, and one sweep down from the lead where banking wins
    to within the truncation (R's last entry) fills it. Needs an end with a final turn,
    optional hot dice and unlimited rolls (:func:`free_roll_applies`)."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    z = prm[P_ZILCH]
    L = R.shape[1]
    top = out.shape[1]
    for fb in range(2):
        for l in range(top - 1, -1, -1):
            if l >= L - 1:
                out[fb, l] = 1.0 - R[fb, L - 1]
                continue
            v = 0.0
            for c in range(cstart[N], cstart[N + 1]):
                p = c_prob[c]
                kind = c_kind[c]
                if kind == WIN:
                    v += p
                elif kind == ZILCH:
                    v += p * out[fb, min(l + z, top - 1)]
                elif kind != BUST:
                    best = 0.0
                    for o in range(c_os[c], c_oe[c]):
                        l2 = min(l + o_p[o], top - 1)
                        w = 1.0 - R[fb, min(l2, L - 1)]
                        if o_d[o] == N and not ends_turn(w, out[fb, l2]):
                            w = out[fb, l2]
                        if better_keep(w, best):
                            best = w
                    v += p * best
            out[fb, l] = v


@njit(cache=True)
def free_roll_applies(prm, p_bust_n):
    """Whether :func:`free_roll_values` holds: a roll of all dice cannot bust (``p_bust_n`` = 0),
    a final turn follows the target, hot dice are optional and rolls unlimited."""
    return p_bust_n == 0.0 and prm[P_END] != END_IMMEDIATE and prm[P_HOTMAND] == 0 and prm[P_MAXROLLS] == 0


@njit(cache=True)
def free_cap(prm, Rsup, pb, a, b, fa, fb, beta):
    """:func:`opt_tcap` where :func:`free_roll_values` values the rolls of all dice past the
    cap: banking beats rolling n < N dice once R(lead) <= pb * (1 - beta), ``pb`` the least
    bust chance of fewer than N dice, and the roll of all N dice has its own value."""
    return max(sure_bank_score(prm, Rsup, pb * (1.0 - beta), b, fb) - a, bankable_from(prm, fa & 1))


@njit(cache=True)
def _turn_of(
    prm, rolls, W, R, Rsup, pbmin, eps, Lx, max_step, fA, fB, a, b, sa, sb, beta, forf, V, Q, bv, free, pb_free, rv
):
    """Value of the optimal turn at (a, b, sa, sb); ``free``: past the cap, rolls of all dice
    take their values from the table ``free`` (see :func:`free_roll_values`; size 0: not used)."""
    if free.shape[0] > 0:
        Tcap = free_cap(prm, Rsup, pb_free, a, b, sa, sb, beta)
        top = free.shape[1] - 1
        for T in range(Tcap + 1, Tcap + max_step + 2):
            rv[T] = free[sb & 1, min(a + T - b, top)]
        past = rv[: Tcap + max_step + 2]
    else:
        Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, sa, sb, beta)
        past = rv[:0]
    game_bank_values(prm, W, R, a, b, sb, Tcap + max_step + 1, bv)
    turn_dp_radius(prm, rolls, sa & 1, Tcap, bv, beta, forf, False, True, V, bv, forf, Tcap, V, Q, fA, fB, rv[:0], past)
    return V[0, prm[P_N], 0]


@njit(cache=True)
def sweep_game(
    prm, rolls, W, mask, R, Rsup, pbmin, eps, Lx, max_step, t_len, free, pb_free, tol_off, stats, k_hi, k_lo
):
    """One sweep of value iteration on W[sa, sb, a, b] under a bust penalty, levels a + b =
    k_hi down to k_lo (statuses: :func:`bust_target`).

    A penalty lowers a score, so a bust can lead to a level below its own, not yet swept:
    no order makes every state follow from solved ones, and sweeps repeat until they stop
    changing W. Within a level, states go by decreasing total of bust counts, so a bust that
    only adds to a count reads the state it leads to from this sweep; a group of states with
    the same total reads its own members as the previous sweep left them (so the result does
    not depend on the order of the threads). Each state is one backward induction of its
    turn. ``free``, ``pb_free``: see :func:`_turn_of`.

    With an entry threshold, the states of a level where a player is not yet on the board form
    a closed loop of busts and forfeits within the level (a penalty costs nothing at a score of
    0), which players who rarely get on the board go round many times: those states are swept
    again until they change by less than ``tol_off``, so that the outer sweeps need not carry
    that loop. stats: [states, dp calls, largest change of this sweep (its first pass), unused].
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    tu = prm[P_TARGET]
    C = n_statuses(prm) // 2
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, rolls)
    out = np.empty((tu, C, 2, 2))
    # per score a, so that the parallel loop writes no shared cell: [change, states]
    acc = np.zeros((tu, 2))
    again = np.zeros((tu, 2))
    calls = 0.0
    for k in range(k_hi, k_lo - 1, -1):
        _sweep_level(
            prm, rolls, W, mask, R, Rsup, pbmin, eps, Lx, max_step, t_len, free, pb_free, fA, fB, k, False, out, acc
        )
        if prm[P_ENTRY] > 0:
            for _ in range(100_000):
                again[:] = 0.0
                _sweep_level(
                    prm,
                    rolls,
                    W,
                    mask,
                    R,
                    Rsup,
                    pbmin,
                    eps,
                    Lx,
                    max_step,
                    t_len,
                    free,
                    pb_free,
                    fA,
                    fB,
                    k,
                    True,
                    out,
                    again,
                )
                calls += again[:, 1].sum()
                if again[:, 0].max() < tol_off:
                    break
    stats[0] += acc[:, 1].sum()
    stats[1] += acc[:, 1].sum() + calls
    stats[2] = max(stats[2], acc[:, 0].max())


@njit(cache=True, parallel=True)
def _sweep_level(
    prm, rolls, W, mask, R, Rsup, pbmin, eps, Lx, max_step, t_len, free, pb_free, fA, fB, k, off_only, out, acc
):
    """One pass of :func:`sweep_game` over level k (``off_only``: its states where a player is
    not on the board)."""
    tu = prm[P_TARGET]
    C = n_statuses(prm) // 2
    lo = max(0, k - tu + 1)
    hi = min(k, tu - 1)
    for cs in range(2 * C - 2, -1, -1):
        for a in prange(lo, hi + 1):
            _sweep_group(
                prm,
                rolls,
                W,
                mask,
                R,
                Rsup,
                pbmin,
                eps,
                Lx,
                max_step,
                t_len,
                free,
                pb_free,
                fA,
                fB,
                k,
                cs,
                a,
                off_only,
                out[a],
                acc[a],
            )
        for a in range(lo, hi + 1):
            b = k - a
            for ca in range(max(0, cs - C + 1), min(cs, C - 1) + 1):
                cb = cs - ca
                for fa in range(2):
                    for fb in range(2):
                        if mask[fa + 2 * ca, fb + 2 * cb, a, b] and not (off_only and fa == 1 and fb == 1):
                            W[fa + 2 * ca, fb + 2 * cb, a, b] = out[a, ca, fa, fb]


@njit(cache=True)
def _sweep_group(
    prm, rolls, W, mask, R, Rsup, pbmin, eps, Lx, max_step, t_len, free, pb_free, fA, fB, k, cs, a, off_only, out, acc
):
    """The states of :func:`sweep_game` at level k, bust-count total cs and mover score a
    (``off_only``: those where a player is not on the board), into out[ca, fa, fb]."""
    C = n_statuses(prm) // 2
    N = prm[P_N]
    nr = 1 if prm[P_MAXROLLS] == 0 else prm[P_MAXROLLS]
    b = k - a
    V = np.empty((nr, N + 1, t_len))
    Q = np.empty((nr, N + 1, t_len))
    bv = np.empty(t_len + max_step + 2)
    rv = np.empty(t_len + max_step + 2)
    for ca in range(max(0, cs - C + 1), min(cs, C - 1) + 1):
        cb = cs - ca
        for fa in range(2):
            for fb in range(2):
                sa = fa + 2 * ca
                sb = fb + 2 * cb
                if not mask[sa, sb, a, b] or (off_only and fa == 1 and fb == 1):
                    continue
                a2, sa2 = bust_target(prm, a, sa)
                v = _turn_of(
                    prm,
                    rolls,
                    W,
                    R,
                    Rsup,
                    pbmin,
                    eps,
                    Lx,
                    max_step,
                    fA,
                    fB,
                    a,
                    b,
                    sa,
                    sb,
                    1.0 - W[sb, sa2, b, a2],
                    1.0 - W[sb, fa, b, a],
                    V,
                    Q,
                    bv,
                    free,
                    pb_free,
                    rv,
                )
                out[ca, fa, fb] = v
                acc[0] = max(acc[0], abs(v - W[sa, sb, a, b]))
                acc[1] += 1
