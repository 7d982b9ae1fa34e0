"""The turn: every within-turn backward induction (numba).

One kernel, :func:`turn_dp`, does every within-turn backward induction: the max-expected-
points turn, a player's turn in the 2-player game, the trailing player's final turn, and
policy evaluation. What differs is only the value of ending the turn at each turn total
(``bv``), the value of a bust (``beta``) and of a forfeited total (``forf``), and who
chooses: the kernel's own values (``choose_self``) or a fixed policy's preference tables
(``cq_*``). Turn totals only grow within a turn, so values at total T depend only on
higher totals and one descending sweep over T is exact. Choosing by its own values (every
solver, and the optimal agent through :func:`optimal_values`), it runs :func:`_self_dp`,
which works out the best action after each keep once per state instead of once per roll:
the same floats, at a third of the cost.

Also here: :func:`self_eval_dp` (a turn chosen on one set of values and valued on another:
the optimal agent in an evaluation, the equilibrium's movers), :func:`self_forward` (such a
turn played forward) and :func:`final_turn_table` (the final turn against every lead).

Value arrays are indexed ``[rolls used before this roll, dice to roll, turn total]``; with
unlimited rolls the first axis has size 1. Moves are chosen by the bank rule and the
tie-break of :mod:`tenk_env.solve.kernels.rules`.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit
from tenk_env.solve.kernels.rules import (
    NEG,
    bankable_from,
    better_keep,
    ends_turn,
    forced_value,
    hot_dice_roll_on,
    may_bank,
    may_bank_total,
    needs_extension,
    roll_axis,
)
from tenk_env.solve.spec import BUST, NORMAL, P_MAXROLLS, P_N, P_ZILCH, WIN, ZILCH


@njit(cache=True)
def turn_dp(
    prm, rolls, fa, Tcap, bv, beta, forf, forf_is_beta, choose_self, cq_roll, cq_bank, cq_forf, cq_Tcap, V, Q, fA, fB
):
    """Fill V/Q[:, 1:N+1, 0:Tcap+1]: value of rolling, and its slope in ``beta``.
    See :func:`turn_dp_radius`."""
    turn_dp_radius(
        prm,
        rolls,
        fa,
        Tcap,
        bv,
        beta,
        forf,
        forf_is_beta,
        choose_self,
        cq_roll,
        cq_bank,
        cq_forf,
        cq_Tcap,
        V,
        Q,
        fA,
        fB,
        np.zeros(0),
        np.zeros(0),
    )


@njit(cache=True)
def turn_dp_radius(
    prm,
    rolls,
    fa,
    Tcap,
    bv,
    beta,
    forf,
    forf_is_beta,
    choose_self,
    cq_roll,
    cq_bank,
    cq_forf,
    cq_Tcap,
    V,
    Q,
    fA,
    fB,
    rad,
    rv,
):
    """Fill V/Q[:, 1:N+1, 0:Tcap+1]: value of rolling, and its slope in ``beta``.

    ``bv`` must cover totals up to ``Tcap + max_step``. ``V[0, N, 0]`` is the turn's value.
    Past ``Tcap`` an after-keep state is valued as ending the turn: callers choose the cap
    so that banking is provably best there. A forced roll past the cap (mandatory hot
    dice, a zilch pay-out) is then worth fA + fB * beta when fA >= 0: every later roll
    banks at once unless it busts or offers only forced continuations (see forced_value);
    callers pass fA < 0 where that does not hold and the cap covers the forced rolls.

    ``rad`` (size 1, ``choose_self`` only; size 0: not wanted) receives the *radius* of the
    policy found: every choice stays at least as good as each alternative for any bust value
    within ``beta +- rad[0]`` (each action's value under the policy is linear in beta, and
    the turn's states form a DAG, so a policy greedy on its own values there is optimal there).

    ``rv`` (size 0: not used) gives, past the cap, the value of rolling all N dice at each total
    (a hot-dice keep, or the forced roll after a zilch pay-out) where that roll cannot bust
    (:func:`free_roll_values`): such a roll is worth more than banking, so the cap need not
    reach the lead where banking wins surely.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    if choose_self:
        shape = (1 if prm[P_MAXROLLS] == 0 else prm[P_MAXROLLS], prm[P_N], Tcap + _max_keep(o_p) + 1)
        AR = np.empty(shape if rad.shape[0] > 0 else (0, 0, 0))
        rho = _self_dp(
            prm, rolls, fa, Tcap, bv, beta, forf, forf_is_beta, fA, fB, rv, V, Q, np.empty(shape), np.empty(shape), AR
        )
        if rad.shape[0] > 0:
            rad[0] = rho
        return
    _general_dp(
        prm,
        rolls,
        fa,
        Tcap,
        bv,
        beta,
        forf,
        forf_is_beta,
        choose_self,
        cq_roll,
        cq_bank,
        cq_forf,
        cq_Tcap,
        V,
        Q,
        fA,
        fB,
        rad,
        rv,
    )


@njit(cache=True, inline="always")
def _no_choice(prm, kind, floor, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q):
    """(value, slope in beta) of a roll that leaves no keep to choose: a bust, an instant win,
    or a zilch pay-out, after which the same player must roll all dice again (Game.roll).
    ``floor``: the turn's :func:`bankable_from`."""
    if kind == BUST:
        return beta, 1.0
    if kind == WIN:
        return 1.0, 0.0
    T2 = T + prm[P_ZILCH]
    N = prm[P_N]
    if can_roll:
        if T2 <= Tcap:
            return V[r2i, N, T2], Q[r2i, N, T2]
        if rv.shape[0] > 0:
            return rv[T2], 0.0
        if fA >= 0.0:
            return fA + fB * beta, fB
        return bv[T2], 0.0
    if may_bank_total(floor, T2):
        return bv[T2], 0.0
    return forf, fq


@njit(cache=True)
def _general_dp(
    prm,
    rolls,
    fa,
    Tcap,
    bv,
    beta,
    forf,
    forf_is_beta,
    choose_self,
    cq_roll,
    cq_bank,
    cq_forf,
    cq_Tcap,
    V,
    Q,
    fA,
    fB,
    rad,
    rv,
):
    """:func:`turn_dp_radius` for any chooser, each keep's best action worked out where it is
    met. With ``choose_self`` it is the reference :func:`_self_dp` is tested against."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    track = rad.shape[0] > 0 and choose_self
    rho = 1e300
    width = 1
    for c in range(c_os.shape[0]):
        width = max(width, 2 * (c_oe[c] - c_os[c]))
    alt_v = np.empty(width)
    alt_q = np.empty(width)
    floor = bankable_from(prm, fa)
    hot_rolls_on = hot_dice_roll_on(prm)
    nbank = cq_bank.shape[0] - 1
    fq = 1.0 if forf_is_beta else 0.0
    free = rv.shape[0] > 0
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                can_roll, r2i = roll_axis(maxr, r)
                v = 0.0
                q = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    kind = c_kind[c]
                    if kind != NORMAL:
                        ev, eq = _no_choice(
                            prm, kind, floor, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q
                        )
                        v += p * ev
                        q += p * eq
                    else:
                        bc = NEG
                        be = 0.0
                        bq = 0.0
                        first = True
                        na = 0
                        for o in range(c_os[c], c_oe[c]):
                            T2 = T + o_p[o]
                            n2 = n - o_d[o]
                            hot = n2 == 0
                            if hot:
                                n2 = N
                            # the best action after this keep as (chooser's value, value, slope)
                            can_bank = may_bank(floor, hot_rolls_on, T2, hot, can_roll)
                            cv = NEG
                            ev = 0.0
                            eq = 0.0
                            if can_roll:
                                if T2 <= Tcap:
                                    ev = V[r2i, n2, T2]
                                    eq = Q[r2i, n2, T2]
                                elif free and hot:
                                    ev = rv[T2]
                                elif fA >= 0.0 and not can_bank:
                                    ev = fA + fB * beta
                                    eq = fB
                                else:
                                    ev = bv[T2]
                                if choose_self:
                                    cv = ev
                                elif T2 <= cq_Tcap:
                                    cv = cq_roll[r2i, n2, T2]
                                if track:
                                    alt_v[na] = ev
                                    alt_q[na] = eq
                                    na += 1
                            if track and (can_bank or not can_roll):
                                alt_v[na] = bv[T2] if can_bank else forf
                                alt_q[na] = 0.0 if can_bank else fq
                                na += 1
                            if can_bank:
                                ce = bv[T2] if choose_self else cq_bank[min(T2, nbank)]
                                if ends_turn(ce, cv) or not can_roll:
                                    cv = ce
                                    ev = bv[T2]
                                    eq = 0.0
                            elif not can_roll:
                                cv = forf if choose_self else cq_forf
                                ev = forf
                                eq = fq
                            if first or better_keep(cv, bc):
                                bc = cv
                                be = ev
                                bq = eq
                                first = False
                        v += p * be
                        q += p * bq
                        for k in range(na):
                            dq = abs(bq - alt_q[k])
                            if dq > 0.0:
                                rho = min(rho, (be - alt_v[k]) / dq)
                V[r, n, T] = v
                Q[r, n, T] = q
    if track:
        rad[0] = max(rho, 0.0)


@njit(cache=True)
def _max_keep(o_p):
    m = 1
    for o in range(o_p.shape[0]):
        m = max(m, o_p[o])
    return m


@njit(cache=True)
def _self_dp(prm, rolls, fa, Tcap, bv, beta, forf, forf_is_beta, fA, fB, rv, V, Q, A, AQ, AR):
    """:func:`turn_dp_radius` choosing by its own values: the values and slopes of
    :func:`_general_dp` bit for bit (the same sums in the same order), at a third of its cost.
    Returns the radius when ``AR`` is given (size 0: not wanted).

    The best action after a keep (bank, roll on, or forfeit) depends only on the state the
    keep leads to, not on the roll or the keep. So it is worked out once per state as soon
    as the state's values are known (:func:`_after_keep`), and the loop over a roll's keeps,
    the solvers' innermost, is a lookup and a compare. ``A``/``AQ``/``AR[r, k, T2]`` hold its
    value, slope in beta and radius after a keep in roll r that leaves k dice (0: hot dice)
    and the total T2; they cover totals up to ``Tcap`` + the largest keep.

    The radius is bounded in two steps: each after-keep state's own choice holds for bust
    values within its radius, and each roll's keep holds against the other keeps' best
    actions within the keep radius; within both, no (keep, action) beats the one chosen. The
    bound is at most the radius of :func:`_general_dp`, which compares every (keep, action)
    with the chosen one directly at twice the cost."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    track = AR.size > 0
    rho = 1e300
    fq = 1.0 if forf_is_beta else 0.0
    floor = bankable_from(prm, fa)
    hot_rolls_on = hot_dice_roll_on(prm)
    W = A.shape[2]
    Af = A.reshape(-1)
    AQf = AQ.reshape(-1)
    ARf = AR.reshape(-1)
    width = 1
    # each keep's after-keep state, relative to (roll, total before the keep)
    off = np.empty(o_p.shape[0], np.int64)
    for n in range(1, N + 1):
        for c in range(cstart[n], cstart[n + 1]):
            width = max(width, c_oe[c] - c_os[c])
            for o in range(c_os[c], c_oe[c]):
                off[o] = (n - o_d[o]) * W + o_p[o]
    buf_e = np.empty(width)
    buf_q = np.empty(width)
    for T2 in range(W - 1, Tcap, -1):
        _after_keep(prm, floor, hot_rolls_on, T2, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR)
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                can_roll, r2i = roll_axis(maxr, r)
                base = r * N * W + T
                v = 0.0
                q = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    kind = c_kind[c]
                    if kind != NORMAL:
                        ev, eq = _no_choice(
                            prm, kind, floor, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q
                        )
                        v += p * ev
                        q += p * eq
                    else:
                        o0 = c_os[c]
                        na = c_oe[c] - o0
                        be = NEG
                        bq = 0.0
                        for i in range(na):
                            j = base + off[o0 + i]
                            e = Af[j]
                            if i == 0 or better_keep(e, be):
                                be = e
                                bq = AQf[j]
                            if track:
                                buf_e[i] = e
                                buf_q[i] = AQf[j]
                                if ARf[j] < rho:
                                    rho = ARf[j]
                        if na == 0:
                            be = 0.0
                        v += p * be
                        q += p * bq
                        if track:
                            # slopes are chances, so a gap of at least rho cannot lower it
                            # (and most keeps are that far): no division there
                            for i in range(na):
                                gap = be - buf_e[i]
                                if gap < rho * 1.000001:
                                    dq = abs(bq - buf_q[i])
                                    if dq > 0.0 and gap / dq < rho:
                                        rho = gap / dq
                V[r, n, T] = v
                Q[r, n, T] = q
        _after_keep(prm, floor, hot_rolls_on, T, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR)
    return max(rho, 0.0)


@njit(cache=True)
def _after_keep(prm, floor, hot_rolls_on, T2, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR):
    """The best action after every keep that leaves the total T2, for :func:`_self_dp`: the
    choice :func:`_general_dp` makes inline (ending the turn wins a tie with rolling on).
    ``floor`` and ``hot_rolls_on``: the turn's bank rule (:func:`may_bank`), read once per turn."""
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    free = rv.shape[0] > 0
    track = AR.size > 0
    for r in range(A.shape[0]):
        can_roll, r2i = roll_axis(maxr, r)
        for k in range(N):
            hot = k == 0
            n2 = N if hot else k
            can_bank = may_bank(floor, hot_rolls_on, T2, hot, can_roll)
            ev = NEG
            eq = 0.0
            if can_roll:
                if T2 <= Tcap:
                    ev = V[r2i, n2, T2]
                    eq = Q[r2i, n2, T2]
                elif free and hot:
                    ev = rv[T2]
                elif fA >= 0.0 and not can_bank:
                    ev = fA + fB * beta
                    eq = fB
                else:
                    ev = bv[T2]
            rad = 1e300
            if can_bank or not can_roll:
                xv = bv[T2] if can_bank else forf
                xq = 0.0 if can_bank else fq
                if track and can_roll:
                    dq = abs(eq - xq)
                    if dq > 0.0:
                        rad = abs(ev - xv) / dq
                if ends_turn(xv, ev) or not can_roll:
                    ev = xv
                    eq = xq
            A[r, k, T2] = ev
            AQ[r, k, T2] = eq
            if track:
                AR[r, k, T2] = rad


@njit(cache=True)
def final_turn_table(
    prm_f, rolls, fa, shared, eps, dmax, choose_self, cq_roll, cq_bank, cq_forf, cq_Tcap, ext, out, floor
):
    """out[d] = the final-turn player's win chance when the leader is d units ahead.

    The final player wins by banking a turn total above d (a tie counts 1/2 when shared,
    else it goes to the leader, who reached the target first), or by an instant-win roll.
    ``floor`` is the chance left when no bank can win (instant wins only, else 0).
    Returns the first d > 0 with out[d] <= floor + eps (out filled up to it), or -1 if
    dmax is reached first.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm_f[P_N]
    nr = max(1, prm_f[P_MAXROLLS])
    max_step = 0
    for o in range(o_p.shape[0]):
        max_step = max(max_step, o_p[o])
    max_step = max(max_step, prm_f[P_ZILCH])
    fA, fB = -1.0, 0.0
    if needs_extension(prm_f):
        fA, fB = forced_value(prm_f, rolls)
    for d in range(dmax):
        Tcap = max(d + 1, bankable_from(prm_f, fa)) + ext
        V = np.empty((nr, N + 1, Tcap + 1))
        Q = np.empty((nr, N + 1, Tcap + 1))
        bv = np.empty(Tcap + max_step + 2)
        for T in range(bv.shape[0]):
            bv[T] = 1.0 if T > d else (0.5 if (T == d and shared) else 0.0)
        if choose_self:
            turn_dp(prm_f, rolls, fa, Tcap, bv, 0.0, 0.0, False, True, V, bv, 0.0, Tcap, V, Q, fA, fB)
        else:
            turn_dp(
                prm_f, rolls, fa, Tcap, bv, 0.0, 0.0, False, False, cq_roll, cq_bank, cq_forf, cq_Tcap, V, Q, fA, fB
            )
        out[d] = V[0, N, 0]
        if out[d] <= floor + eps and d > 0:
            return d
    return -1


@njit(cache=True)
def self_eval_dp(prm, rolls, fa, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB):
    """One sweep for a self-valued player in an evaluation: each move is chosen on the
    player's own values (bank values bv2, bust value bo: :func:`turn_dp` with choose_self,
    by the tie-break of :mod:`tenk_env.solve.kernels.rules`, as :func:`tenk_env.solve.policy.pick`
    plays it) and valued against another player (bank values bv): V2/Q2 = the chooser's value
    and its slope in bo, V = c, Q = q with the other's value c + q * beta. Half the work of two
    turn_dp passes.

    As in :func:`_self_dp`, the action after a keep depends only on the state the keep leads
    to, so it is chosen once per state (:func:`_after_keep_eval`) and a roll's keeps are
    compared by lookup: the floats of choosing keep by keep, at a third of the cost."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    z = prm[P_ZILCH]
    floor = bankable_from(prm, fa)
    hot_rolls_on = hot_dice_roll_on(prm)
    W = Tcap + _max_keep(o_p) + 1
    # after a keep in roll r that leaves k dice (0: hot dice) and the total T2, the action
    # chosen: [0] its value to the chooser, [1] that value's slope in bo, [2] and [3] the same
    # for the other player
    AK = np.empty((4, nr, N, W))
    A2 = AK[0].reshape(-1)
    AQ2 = AK[1].reshape(-1)
    AE = AK[2].reshape(-1)
    AEQ = AK[3].reshape(-1)
    off = np.empty(o_p.shape[0], np.int64)
    for n in range(1, N + 1):
        for c in range(cstart[n], cstart[n + 1]):
            for o in range(c_os[c], c_oe[c]):
                off[o] = (n - o_d[o]) * W + o_p[o]
    for T2 in range(W - 1, Tcap, -1):
        _after_keep_eval(prm, floor, hot_rolls_on, T2, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB, AK)
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                can_roll, r2i = roll_axis(maxr, r)
                base = r * N * W + T
                v2 = 0.0
                q2 = 0.0
                v = 0.0
                q = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    kind = c_kind[c]
                    if kind == BUST:
                        v2 += p * bo
                        q2 += p
                        q += p
                    elif kind == WIN:
                        v2 += p
                        v += p
                    elif kind == ZILCH:
                        T2 = T + z
                        if can_roll:
                            if T2 <= Tcap:
                                v2 += p * V2[r2i, N, T2]
                                q2 += p * Q2[r2i, N, T2]
                                v += p * V[r2i, N, T2]
                                q += p * Q[r2i, N, T2]
                            elif fA >= 0.0:
                                v2 += p * (fA + fB * bo)
                                q2 += p * fB
                                v += p * fA
                                q += p * fB
                            else:
                                v2 += p * bv2[T2]
                                v += p * bv[T2]
                        elif may_bank_total(floor, T2):
                            v2 += p * bv2[T2]
                            v += p * bv[T2]
                        else:
                            v2 += p * bo
                            q2 += p
                            q += p
                    else:
                        o0 = c_os[c]
                        jb = base + off[o0]
                        bc = A2[jb]
                        for o in range(o0 + 1, c_oe[c]):
                            j = base + off[o]
                            if better_keep(A2[j], bc):
                                bc = A2[j]
                                jb = j
                        v2 += p * bc
                        q2 += p * AQ2[jb]
                        v += p * AE[jb]
                        q += p * AEQ[jb]
                V2[r, n, T] = v2
                Q2[r, n, T] = q2
                V[r, n, T] = v
                Q[r, n, T] = q
        _after_keep_eval(prm, floor, hot_rolls_on, T, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB, AK)


@njit(cache=True)
def _after_keep_eval(prm, floor, hot_rolls_on, T2, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB, AK):
    """The action chosen after every keep that leaves the total T2, for :func:`self_eval_dp`:
    bank, roll on or forfeit, on the chooser's values (ending the turn wins a tie), with what
    it is worth to both players. ``floor`` and ``hot_rolls_on``: the turn's bank rule."""
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    for r in range(AK.shape[1]):
        can_roll, r2i = roll_axis(maxr, r)
        for k in range(N):
            hot = k == 0
            n2 = N if hot else k
            can_bank = may_bank(floor, hot_rolls_on, T2, hot, can_roll)
            cv = NEG
            cq = 0.0
            ev = 0.0
            eq = 0.0
            if can_roll:
                if T2 <= Tcap:
                    cv = V2[r2i, n2, T2]
                    cq = Q2[r2i, n2, T2]
                    ev = V[r2i, n2, T2]
                    eq = Q[r2i, n2, T2]
                elif fA >= 0.0 and not can_bank:
                    cv = fA + fB * bo
                    cq = fB
                    ev = fA
                    eq = fB
                else:
                    cv = bv2[T2]
                    ev = bv[T2]
            if can_bank:
                ce = bv2[T2]
                if ends_turn(ce, cv) or not can_roll:
                    cv = ce
                    cq = 0.0
                    ev = bv[T2]
                    eq = 0.0
            elif not can_roll:
                cv = bo
                cq = 1.0
                ev = 0.0
                eq = 1.0
            AK[0, r, k, T2] = cv
            AK[1, r, k, T2] = cq
            AK[2, r, k, T2] = ev
            AK[3, r, k, T2] = eq


# A fixed policy's turn is a Markov chain: its outcome (bank T, bust, forfeit, instant win)
# does not depend on the values it leads to. Under a bust penalty no order of the states
# makes each follow from solved ones, so an evaluation reads each turn's outcome once and
# then iterates the linear system they define (:func:`penalty_sweep`), which is cheap.
#: what a self-valued player's move leads to (:func:`self_forward`)
_SF_ROLL, _SF_BANK, _SF_FORFEIT, _SF_FORCED = range(4)


@njit(cache=True)
def optimal_values(prm, rolls, fa, Tcap, bv, beta, forf, fA, fB, V, A):
    """``V[r, n, T]`` for T <= Tcap exactly as :func:`turn_dp` computes it with ``choose_self``
    (the same floats, so the optimal agent's same moves), and ``A[r, k, T2]``, the value of
    the best action after a keep in roll r that leaves k dice (0 for hot dice) and the total
    T2, from which the agents read their moves. ``A`` must cover totals up to
    ``Tcap + max_step``, ``bv`` the same."""
    _self_dp(
        prm,
        rolls,
        fa,
        Tcap,
        bv,
        beta,
        forf,
        False,
        fA,
        fB,
        bv[:0],
        V,
        np.empty_like(V),
        A,
        np.empty_like(A),
        np.empty((0, 0, 0)),
    )


@njit(cache=True)
def self_forward(prm, rolls, fa, Tcap, bv, beta, forf, V, A, mass, fA, fB, out):
    """The turn of a self-valued player played forward: ``out[T]`` = P(it banks T). Returns
    (instant win, bust, forfeit) chances.

    Its moves are those :func:`optimal_values` values (V and A filled by that call, bank
    values ``bv``, bust value ``beta``, forfeit value ``forf``), which are :func:`turn_dp`'s
    with ``choose_self`` and the optimal agent's: of a roll's keeps the first with the
    highest value after it (``A``), and after the keep ending the turn where that ties with
    rolling on. Past ``Tcap`` a roll is, as there, a forced roll's closed form (a sure win
    with chance fA, a bust with fB) or counts as banking its total. ``out`` must cover Tcap
    + max_step; ``mass`` the shape of V.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    z = prm[P_ZILCH]
    floor = bankable_from(prm, fa)
    hot_rolls_on = hot_dice_roll_on(prm)
    mass[:] = 0.0
    mass[0, N, 0] = 1.0
    out[:] = 0.0
    win = 0.0
    qb = 0.0
    qf = 0.0
    for T in range(Tcap + 1):
        for n in range(1, N + 1):
            for r in range(nr):
                mm = mass[r, n, T]
                if mm == 0.0:
                    continue
                can_roll, r2i = roll_axis(maxr, r)
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c] * mm
                    kind = c_kind[c]
                    if kind == BUST:
                        qb += p
                        continue
                    if kind == WIN:
                        win += p
                        continue
                    if kind == ZILCH:
                        # a pay-out rolls all dice again, as optimal_values values it
                        T2 = T + z
                        n2 = N
                        if can_roll:
                            act = _SF_ROLL if T2 <= Tcap else (_SF_FORCED if fA >= 0.0 else _SF_BANK)
                        elif may_bank_total(floor, T2):
                            act = _SF_BANK
                        else:
                            act = _SF_FORFEIT
                    else:
                        # the first keep of the highest value after it ...
                        best = NEG
                        k = 0
                        T2 = T
                        for o in range(c_os[c], c_oe[c]):
                            x = A[r, n - o_d[o], T + o_p[o]]
                            if better_keep(x, best):
                                best = x
                                k = n - o_d[o]
                                T2 = T + o_p[o]
                        hot = k == 0
                        n2 = N if hot else k
                        # ... and the action after it, as optimal_values decides A[r, k, T2]
                        can_bank = may_bank(floor, hot_rolls_on, T2, hot, can_roll)
                        act = _SF_BANK
                        cv = NEG
                        if can_roll:
                            if T2 <= Tcap:
                                cv = V[r2i, n2, T2]
                                act = _SF_ROLL
                            elif fA >= 0.0 and not can_bank:
                                cv = fA + fB * beta
                                act = _SF_FORCED
                            else:
                                cv = bv[T2]
                        if can_bank:
                            if ends_turn(bv[T2], cv) or not can_roll:
                                act = _SF_BANK
                        elif not can_roll:
                            act = _SF_FORFEIT
                    if act == _SF_ROLL:
                        mass[r2i, n2, T2] += p
                    elif act == _SF_BANK:
                        out[T2] += p
                    elif act == _SF_FORCED:
                        win += p * fA
                        qb += p * fB
                    else:
                        qf += p
    return win, qb, qf
