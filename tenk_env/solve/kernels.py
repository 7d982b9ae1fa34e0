"""Compiled inner loops of the exact solvers (numba).

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

Value arrays are indexed ``[rolls used before this roll, dice to roll, turn total]``; with
unlimited rolls the first axis has size 1.

Tie-break (the agents in :mod:`tenk_env.policies.optimal` use the same one, so an exact evaluation
describes exactly what they play): options are visited by points descending, then dice
used ascending; within an option ending the turn wins a tie with rolling on; across
options only a strictly better one replaces the first.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from tenk_env.solve.spec import (
    BUST,
    END_IMMEDIATE,
    NORMAL,
    P_END,
    P_ENTRY,
    P_HOTMAND,
    P_MAXROLLS,
    P_MINBANK,
    P_N,
    P_PEN,
    P_PENAFTER,
    P_TARGET,
    P_ZILCH,
    WIN,
    ZILCH,
)

NEG = -1e300


@njit(cache=True)
def turn_dp(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
):
    """Fill V/Q[:, 1:N+1, 0:Tcap+1]: value of rolling, and its slope in ``beta``.
    See :func:`turn_dp_radius`."""
    turn_dp_radius(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
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
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    if choose_self:
        shape = (1 if prm[P_MAXROLLS] == 0 else prm[P_MAXROLLS], prm[P_N], Tcap + _max_keep(o_p) + 1)
        AR = np.empty(shape if rad.shape[0] > 0 else (0, 0, 0))
        rho = _self_dp(
            prm,
            cstart,
            c_prob,
            c_kind,
            c_os,
            c_oe,
            o_p,
            o_d,
            fa,
            Tcap,
            bv,
            beta,
            forf,
            forf_is_beta,
            fA,
            fB,
            rv,
            V,
            Q,
            np.empty(shape),
            np.empty(shape),
            AR,
        )
        if rad.shape[0] > 0:
            rad[0] = rho
        return
    _general_dp(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
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
def _no_choice(prm, kind, fa, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q):
    """(value, slope in beta) of a roll that leaves no keep to choose: a bust, an instant win,
    or a zilch pay-out, after which the same player must roll all dice again (Game.roll)."""
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
    if (fa == 1 or T2 >= prm[P_ENTRY]) and T2 >= prm[P_MINBANK]:
        return bv[T2], 0.0
    return forf, fq


@njit(cache=True)
def _general_dp(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    entry = prm[P_ENTRY]
    minbank = prm[P_MINBANK]
    hotmand = prm[P_HOTMAND] == 1
    nbank = cq_bank.shape[0] - 1
    fq = 1.0 if forf_is_beta else 0.0
    free = rv.shape[0] > 0
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                r2 = r + 1
                can_roll = maxr == 0 or r2 < maxr
                r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
                v = 0.0
                q = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    kind = c_kind[c]
                    if kind != NORMAL:
                        ev, eq = _no_choice(prm, kind, fa, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q)
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
                            # The best action after this keep as (chooser's value, value, slope),
                            # written out: a helper call here costs more than the work itself.
                            can_bank = (fa == 1 or T2 >= entry) and T2 >= minbank and not (hot and hotmand and can_roll)
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
                                if ce >= cv or not can_roll:
                                    cv = ce
                                    ev = bv[T2]
                                    eq = 0.0
                            elif not can_roll:
                                cv = forf if choose_self else cq_forf
                                ev = forf
                                eq = fq
                            if first or cv > bc:
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
def _self_dp(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    fa,
    Tcap,
    bv,
    beta,
    forf,
    forf_is_beta,
    fA,
    fB,
    rv,
    V,
    Q,
    A,
    AQ,
    AR,
):
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
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    track = AR.size > 0
    rho = 1e300
    fq = 1.0 if forf_is_beta else 0.0
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
        _after_keep(prm, fa, T2, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR)
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                r2 = r + 1
                can_roll = maxr == 0 or r2 < maxr
                r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
                base = r * N * W + T
                v = 0.0
                q = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    kind = c_kind[c]
                    if kind != NORMAL:
                        ev, eq = _no_choice(prm, kind, fa, T, Tcap, can_roll, r2i, bv, beta, forf, fq, fA, fB, rv, V, Q)
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
                            if i == 0 or e > be:
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
        _after_keep(prm, fa, T, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR)
    return max(rho, 0.0)


@njit(cache=True)
def _after_keep(prm, fa, T2, Tcap, bv, beta, forf, fq, fA, fB, rv, V, Q, A, AQ, AR):
    """The best action after every keep that leaves the total T2, for :func:`_self_dp`: the
    choice :func:`_general_dp` makes inline (ending the turn wins a tie with rolling on)."""
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    entry = prm[P_ENTRY]
    minbank = prm[P_MINBANK]
    hotmand = prm[P_HOTMAND] == 1
    free = rv.shape[0] > 0
    track = AR.size > 0
    for r in range(A.shape[0]):
        r2 = r + 1
        can_roll = maxr == 0 or r2 < maxr
        r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
        for k in range(N):
            hot = k == 0
            n2 = N if hot else k
            can_bank = (fa == 1 or T2 >= entry) and T2 >= minbank and not (hot and hotmand and can_roll)
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
                if xv >= ev or not can_roll:
                    ev = xv
                    eq = xq
            A[r, k, T2] = ev
            AQ[r, k, T2] = eq
            if track:
                AR[r, k, T2] = rad


# ---------------------------------------------------------------------------- the 2-player game
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
def bust_target(prm, a, sa):
    """(score, status) of a player at score ``a`` and status ``sa`` after a bust.

    A player's *status* is ``flag + 2 * busts in a row``: without a bust penalty it is the
    on-board flag. The bust that completes ``P_PENAFTER`` in a row costs ``P_PEN`` units (never
    below 0) and starts the count again (:meth:`tenk_env.game.Game.roll`)."""
    if prm[P_PEN] == 0:
        return a, sa
    if (sa >> 1) + 1 >= prm[P_PENAFTER]:
        return max(a - prm[P_PEN], 0), sa & 1
    return a, sa + 2


@njit(cache=True)
def n_statuses(prm):
    """Size of a status axis: 2 on-board flags times the bust counts kept (1 without a penalty)."""
    return 2 * prm[P_PENAFTER] if prm[P_PEN] > 0 else 2


@njit(cache=True)
def needs_extension(prm):
    """Whether an after-keep state may be unbankable at any total (a forced roll)."""
    return prm[P_HOTMAND] == 1 or prm[P_ZILCH] > 0


@njit(cache=True)
def bankable_from(prm, fa):
    """Smallest turn total that the entry threshold and minimum bank allow banking."""
    t = prm[P_MINBANK]
    if fa == 0 and prm[P_ENTRY] > t:
        t = prm[P_ENTRY]
    return t


@njit(cache=True)
def forced_value(prm, cstart, c_prob, c_kind, c_os, c_oe, o_d):
    """(fA, fB): a forced roll of all dice, where every non-forced outcome banks a sure
    win, is worth fA + fB * beta. A roll continues the chain only if it busts (beta), pays
    a zilch or offers nothing but hot keeps (forced again): F = (1 - pb - pf + pb beta) /
    (1 - pf)."""
    N = prm[P_N]
    pb = 0.0
    pf = 0.0
    for c in range(cstart[N], cstart[N + 1]):
        k = c_kind[c]
        if k == BUST:
            pb += c_prob[c]
        elif k == ZILCH:
            pf += c_prob[c]
        elif k != WIN:
            allhot = True
            for o in range(c_os[c], c_oe[c]):
                if o_d[o] != N:
                    allhot = False
            if allhot:
                pf += c_prob[c]
    return (1.0 - pb - pf) / (1.0 - pf), pb / (1.0 - pf)


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
def state_value(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    W,
    R,
    Rsup,
    pbmin,
    eps,
    Lx,
    max_step,
    a,
    b,
    fa,
    fb,
    beta,
    V,
    Q,
    bv,
    fA,
    fB,
):
    """Optimal value and bust slope of the mover's turn at (a, b, fa, fb) given the bust value
    (statuses fa, fb: :func:`bust_target`; a forfeit counts as a bust, as it does without a
    bust penalty)."""
    return state_value_f(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
        W,
        R,
        Rsup,
        pbmin,
        eps,
        Lx,
        max_step,
        a,
        b,
        fa,
        fb,
        beta,
        beta,
        True,
        V,
        Q,
        bv,
        fA,
        fB,
    )


@njit(cache=True)
def state_value_f(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    W,
    R,
    Rsup,
    pbmin,
    eps,
    Lx,
    max_step,
    a,
    b,
    fa,
    fb,
    beta,
    forf,
    forf_is_beta,
    V,
    Q,
    bv,
    fA,
    fB,
):
    """:func:`state_value` with the value of a forfeited total given apart (under a bust
    penalty a forfeit is not a bust: it starts the count again)."""
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, beta)
    game_bank_values(prm, W, R, a, b, fb, Tcap + max_step + 1, bv)
    N = prm[P_N]
    turn_dp(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
        fa & 1,
        Tcap,
        bv,
        beta,
        forf,
        forf_is_beta,
        True,
        V,
        bv,
        forf,
        Tcap,
        V,
        Q,
        fA,
        fB,
    )
    return V[0, N, 0], Q[0, N, 0], Tcap


@njit(cache=True)
def solve_game(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    W,
    mask,
    R,
    Rsup,
    pbmin,
    eps,
    Lx,
    max_step,
    tol,
    V,
    Q,
    bv,
    stats,
    k_hi,
    k_lo,
):
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
    tu = prm[P_TARGET]
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, cstart, c_prob, c_kind, c_os, c_oe, o_d)
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
                            prm,
                            cstart,
                            c_prob,
                            c_kind,
                            c_os,
                            c_oe,
                            o_p,
                            o_d,
                            W,
                            R,
                            Rsup,
                            pbmin,
                            eps,
                            Lx,
                            max_step,
                            a,
                            b,
                            fa,
                            fb,
                            bA,
                            V,
                            Q,
                            bv,
                            fA,
                            fB,
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
                                prm,
                                cstart,
                                c_prob,
                                c_kind,
                                c_os,
                                c_oe,
                                o_p,
                                o_d,
                                W,
                                R,
                                Rsup,
                                pbmin,
                                eps,
                                Lx,
                                max_step,
                                b,
                                a,
                                fb,
                                fa,
                                bB,
                                V,
                                Q,
                                bv,
                                fA,
                                fB,
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
def free_roll_values(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, R, out):
    """out[fb, l]: the value of rolling all N dice when banking would leave the mover l units
    ahead of a final-turn opponent on board fb, for rulesets whose roll of N dice cannot bust
    (zilch: a roll of six with nothing pays and rolls again).

    Such a roll is never worse than banking, so past the sure-bank lead of
    :func:`free_cap` the player rolls all dice whenever they may and banks every other time:
    the value only grows with the lead, and one sweep down from the lead where banking wins
    to within the truncation (R's last entry) fills it. Needs an end with a final turn,
    optional hot dice and unlimited rolls (:func:`free_roll_applies`)."""
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
                        if o_d[o] == N and out[fb, l2] > w:
                            w = out[fb, l2]
                        if w > best:
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
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    beta,
    forf,
    V,
    Q,
    bv,
    free,
    pb_free,
    rv,
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
    turn_dp_radius(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
        sa & 1,
        Tcap,
        bv,
        beta,
        forf,
        False,
        True,
        V,
        bv,
        forf,
        Tcap,
        V,
        Q,
        fA,
        fB,
        rv[:0],
        past,
    )
    return V[0, prm[P_N], 0]


@njit(cache=True)
def sweep_game(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    tol_off,
    stats,
    k_hi,
    k_lo,
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
    tu = prm[P_TARGET]
    C = n_statuses(prm) // 2
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, cstart, c_prob, c_kind, c_os, c_oe, o_d)
    out = np.empty((tu, C, 2, 2))
    # per score a, so that the parallel loop writes no shared cell: [change, states]
    acc = np.zeros((tu, 2))
    again = np.zeros((tu, 2))
    calls = 0.0
    for k in range(k_hi, k_lo - 1, -1):
        _sweep_level(
            prm,
            cstart,
            c_prob,
            c_kind,
            c_os,
            c_oe,
            o_p,
            o_d,
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
            False,
            out,
            acc,
        )
        if prm[P_ENTRY] > 0:
            for _ in range(100_000):
                again[:] = 0.0
                _sweep_level(
                    prm,
                    cstart,
                    c_prob,
                    c_kind,
                    c_os,
                    c_oe,
                    o_p,
                    o_d,
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
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    off_only,
    out,
    acc,
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
                cstart,
                c_prob,
                c_kind,
                c_os,
                c_oe,
                o_p,
                o_d,
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
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
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
    out,
    acc,
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
                    cstart,
                    c_prob,
                    c_kind,
                    c_os,
                    c_oe,
                    o_p,
                    o_d,
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


@njit(cache=True)
def final_turn_table(
    prm_f,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    fa,
    shared,
    eps,
    dmax,
    choose_self,
    cq_roll,
    cq_bank,
    cq_forf,
    cq_Tcap,
    ext,
    out,
    floor,
):
    """out[d] = the final-turn player's win chance when the leader is d units ahead.

    The final player wins by banking a turn total above d (a tie counts 1/2 when shared,
    else it goes to the leader, who reached the target first), or by an instant-win roll.
    ``floor`` is the chance left when no bank can win (instant wins only, else 0).
    Returns the first d > 0 with out[d] <= floor + eps (out filled up to it), or -1 if
    dmax is reached first.
    """
    N = prm_f[P_N]
    nr = max(1, prm_f[P_MAXROLLS])
    max_step = 0
    for o in range(o_p.shape[0]):
        max_step = max(max_step, o_p[o])
    max_step = max(max_step, prm_f[P_ZILCH])
    fA, fB = -1.0, 0.0
    if needs_extension(prm_f):
        fA, fB = forced_value(prm_f, cstart, c_prob, c_kind, c_os, c_oe, o_d)
    for d in range(dmax):
        Tcap = max(d + 1, bankable_from(prm_f, fa)) + ext
        V = np.empty((nr, N + 1, Tcap + 1))
        Q = np.empty((nr, N + 1, Tcap + 1))
        bv = np.empty(Tcap + max_step + 2)
        for T in range(bv.shape[0]):
            bv[T] = 1.0 if T > d else (0.5 if (T == d and shared) else 0.0)
        if choose_self:
            turn_dp(
                prm_f,
                cstart,
                c_prob,
                c_kind,
                c_os,
                c_oe,
                o_p,
                o_d,
                fa,
                Tcap,
                bv,
                0.0,
                0.0,
                False,
                True,
                V,
                bv,
                0.0,
                Tcap,
                V,
                Q,
                fA,
                fB,
            )
        else:
            turn_dp(
                prm_f,
                cstart,
                c_prob,
                c_kind,
                c_os,
                c_oe,
                o_p,
                o_d,
                fa,
                Tcap,
                bv,
                0.0,
                0.0,
                False,
                False,
                cq_roll,
                cq_bank,
                cq_forf,
                cq_Tcap,
                V,
                Q,
                fA,
                fB,
            )
        out[d] = V[0, N, 0]
        if out[d] <= floor + eps and d > 0:
            return d
    return -1


# ---------------------------------------------------------------------------- policy evaluation
@njit(cache=True)
def _eval_side(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    max_step,
    Leps,
    Lx,
    a,
    b,
    fa,
    fb,
    Wn,
    Rn,
    kind,
    tab_roll,
    tab_bank,
    tab_forf,
    tab_all,
    Wopt,
    Ropt,
    Rsup,
    pbmin,
    eps,
    V,
    Q,
    bv,
    V2,
    Q2,
    bv2,
):
    """(c, q): the mover's win chance is c + q * (its value after a bust), under its fixed policy."""
    tu = prm[P_TARGET]
    N = prm[P_N]
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, cstart, c_prob, c_kind, c_os, c_oe, o_d)
    if kind == 0:
        # The optimal agent's choices: its own DP on the optimal solution. Past that DP's cap
        # it banks (see opt_tcap), so the same cap is exact for the evaluation too.
        bo = 1.0 - Wopt[fb, fa, b, a]
        Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, bo)
        game_bank_values(prm, Wopt, Ropt, a, b, fb, Tcap + max_step + 1, bv2)
        turn_dp(
            prm,
            cstart,
            c_prob,
            c_kind,
            c_os,
            c_oe,
            o_p,
            o_d,
            fa,
            Tcap,
            bv2,
            bo,
            bo,
            True,
            True,
            V2,
            bv2,
            bo,
            Tcap,
            V2,
            Q2,
            fA,
            fB,
        )
        game_bank_values(prm, Wn, Rn, a, b, fb, Tcap + max_step + 1, bv)
        turn_dp(
            prm,
            cstart,
            c_prob,
            c_kind,
            c_os,
            c_oe,
            o_p,
            o_d,
            fa,
            Tcap,
            bv,
            0.0,
            0.0,
            True,
            False,
            V2,
            bv2,
            bo,
            Tcap,
            V,
            Q,
            fA,
            fB,
        )
    else:
        # A table policy banks whenever it may from tab_all on; past the target under a
        # final round, leads beyond Leps leave the opponent less than eps.
        s_cap = tu
        if prm[P_END] != END_IMMEDIATE:
            s_cap = max(tu, b + Leps)
        Tcap = max(min(s_cap - a, tab_all), bankable_from(prm, fa))
        if needs_extension(prm):
            # forced rolls past the cap take the closed form, exact once banking wins surely
            Tcap = max(Tcap, s_cap - a)
        game_bank_values(prm, Wn, Rn, a, b, fb, Tcap + max_step + 1, bv)
        turn_dp(
            prm,
            cstart,
            c_prob,
            c_kind,
            c_os,
            c_oe,
            o_p,
            o_d,
            fa,
            Tcap,
            bv,
            0.0,
            0.0,
            True,
            False,
            tab_roll[fa],
            tab_bank,
            tab_forf,
            tab_roll.shape[3] - 1,
            V,
            Q,
            fA,
            fB,
        )
    return V[0, N, 0], Q[0, N, 0]


@njit(cache=True)
def eval_game(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    max_step,
    mask,
    Leps,
    Lx,
    WA,
    WB,
    RA,
    RB,
    kindA,
    tabA_roll,
    tabA_bank,
    tabA_forf,
    tabA_all,
    kindB,
    tabB_roll,
    tabB_bank,
    tabB_forf,
    tabB_all,
    Wopt,
    Ropt,
    Rsup,
    pbmin,
    eps,
    V,
    Q,
    bv,
    V2,
    Q2,
    bv2,
):
    """Exact win probabilities of fixed policy A against fixed policy B.

    WA[fa, fb, a, b]: P(A wins) with A to move at score a against B at b; WB[...] the
    same for B to move. kind 0 = the optimal policy (its choices come from a DP on the
    optimal solution Wopt/Ropt, exactly as the optimal agent decides), kind 1 = a table
    policy (tab_roll[f]: preference for rolling on, tab_bank: for banking each total,
    tab_forf: for a forfeit). RA[fb, d] / RB: each side's final-turn win chance under its
    own policy. With both policies fixed, A at (a, b) and B at (b, a) are linked only by a
    bust, linearly, and each such pair is solved exactly.
    """
    tu = prm[P_TARGET]
    for k in range(2 * tu - 2, -1, -1):
        for a in range(max(0, k - tu + 1), min(k, tu - 1) + 1):
            b = k - a
            for fa in range(2):
                for fb in range(2):
                    if not (mask[fa, fb, a, b] or mask[fb, fa, b, a]):
                        continue
                    cA, qA = _eval_side(
                        prm,
                        cstart,
                        c_prob,
                        c_kind,
                        c_os,
                        c_oe,
                        o_p,
                        o_d,
                        max_step,
                        Leps,
                        Lx,
                        a,
                        b,
                        fa,
                        fb,
                        WB,
                        RB,
                        kindA,
                        tabA_roll,
                        tabA_bank,
                        tabA_forf,
                        tabA_all,
                        Wopt,
                        Ropt,
                        Rsup,
                        pbmin,
                        eps,
                        V,
                        Q,
                        bv,
                        V2,
                        Q2,
                        bv2,
                    )
                    cB, qB = _eval_side(
                        prm,
                        cstart,
                        c_prob,
                        c_kind,
                        c_os,
                        c_oe,
                        o_p,
                        o_d,
                        max_step,
                        Leps,
                        Lx,
                        b,
                        a,
                        fb,
                        fa,
                        WA,
                        RA,
                        kindB,
                        tabB_roll,
                        tabB_bank,
                        tabB_forf,
                        tabB_all,
                        Wopt,
                        Ropt,
                        Rsup,
                        pbmin,
                        eps,
                        V,
                        Q,
                        bv,
                        V2,
                        Q2,
                        bv2,
                    )
                    # x = cA + qA (1 - y), y = cB + qB (1 - x)
                    x = (cA + qA - qA * (cB + qB)) / (1.0 - qA * qB)
                    WA[fa, fb, a, b] = x
                    WB[fb, fa, b, a] = cB + qB * (1.0 - x)


# ---------------------------------------------------------------------------- general exact evaluation
# Final-turn tables here are indexed by both scores, RF[f, b, s - target]: the chance that
# the final-turn player (own score b, on board f) wins against a leader at s. A fixed bot's
# final turn may depend on both scores, not only on the lead as the optimal one does.
@njit(cache=True)
def bank_values_rf(prm, W, RF, a, b, fb, length, bv):
    """bv[T] for T < length: the mover's win probability after banking a+T (opponent to move)."""
    tu = prm[P_TARGET]
    J = RF.shape[2]
    for T in range(length):
        s = a + T
        if s < tu:
            bv[T] = 1.0 - W[fb, 1, b, s]
        elif prm[P_END] == END_IMMEDIATE:
            bv[T] = 1.0
        else:
            bv[T] = 1.0 - RF[fb, b, min(s - tu, J - 1)]


@njit(cache=True)
def self_value(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    max_step,
    a,
    b,
    fa,
    fb,
    Wn,
    RFn,
    Rsup,
    pbmin,
    eps,
    Lx,
    beta,
    V,
    Q,
    bv,
    fA,
    fB,
):
    """The best value and bust slope of the mover's turn against fixed opponent values Wn/RFn.

    The cap of :func:`opt_tcap` holds for any opponent, not only the optimal one: no final
    turn beats the optimal final turn, so Rsup bounds the opponent's chance from above.
    """
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, beta)
    bank_values_rf(prm, Wn, RFn, a, b, fb, Tcap + max_step + 1, bv)
    turn_dp(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
        fa,
        Tcap,
        bv,
        beta,
        beta,
        True,
        True,
        V,
        bv,
        beta,
        Tcap,
        V,
        Q,
        fA,
        fB,
    )
    N = prm[P_N]
    return V[0, N, 0], Q[0, N, 0], Tcap


#: what a tabulated move leads to (:func:`tab_move`)
TAB_LOSE, TAB_WIN, TAB_BANK, TAB_NEXT, TAB_PRUNED = range(5)


@njit(cache=True)
def tab_move(prm, cstart, c_kind, c_os, o_p, o_d, fa, rows, dec, row, c, r, n, T):
    """Where a roll of class c leads in a tabulated turn at state (r, n, T), decisions in row
    ``row`` of ``dec``: (outcome, r2, n2, T2). TAB_LOSE: a bust, or a total the turn cannot
    bank at its end (forfeited); TAB_WIN: an instant win; TAB_BANK: T2 banked; TAB_NEXT: the
    turn goes on at (r2, n2, T2); TAB_PRUNED: it goes on at a state the tabulation pruned.
    The one statement of the rules for :func:`fixed_dp` (backward) and the N-player solver's
    forward pass (:func:`tab_outcomes`)."""
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    r2 = r + 1
    can_roll = maxr == 0 or r2 < maxr
    r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
    kind = c_kind[c]
    if kind == BUST:
        return TAB_LOSE, r2i, 0, T
    if kind == WIN:
        return TAB_WIN, r2i, 0, T
    hot = False
    if kind == ZILCH:
        T2 = T + prm[P_ZILCH]
        n2 = N
        end = not can_roll
    else:
        code = dec[row, c - cstart[n]]
        o = c_os[c] + (code >> 1)
        end = (code & 1) == 1 or not can_roll
        T2 = T + o_p[o]
        n2 = n - o_d[o]
        if n2 == 0:
            hot = True
            n2 = N
    if end:
        if (fa == 1 or T2 >= prm[P_ENTRY]) and T2 >= prm[P_MINBANK] and not (hot and prm[P_HOTMAND] == 1 and can_roll):
            return TAB_BANK, r2i, n2, T2
        return TAB_LOSE, r2i, n2, T2
    if T2 < rows.shape[2] and rows[r2i, n2, T2] >= 0:
        return TAB_NEXT, r2i, n2, T2
    return TAB_PRUNED, r2i, n2, T2


@njit(cache=True)
def fixed_dp(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, rows, dec, bv, V, Q, M):
    """A turn played by tabulated decisions: (c, q, m), its value being c + q * beta.

    ``rows[r, n, T]`` is the row of ``dec`` holding the decisions at that state (-1: not
    reached, the tabulation pruned it), ``dec[row, j]`` = 2 * option + end for the j-th class
    of n dice. beta is the value of a bust or a forfeited total (the opponent then moves at
    the mirror state); m is the chance of reaching a pruned state, valued 0, so the true
    value lies within m above. ``bv`` must cover totals up to the last row + max_step.
    """
    N = prm[P_N]
    nr = rows.shape[0]
    Tt = rows.shape[2] - 1
    for T in range(Tt, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                row = rows[r, n, T]
                if row < 0:
                    continue
                v = 0.0
                q = 0.0
                m = 0.0
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c]
                    out, r2i, n2, T2 = tab_move(prm, cstart, c_kind, c_os, o_p, o_d, fa, rows, dec, row, c, r, n, T)
                    if out == TAB_LOSE:
                        q += p
                    elif out == TAB_WIN:
                        v += p
                    elif out == TAB_BANK:
                        v += p * bv[T2]
                    elif out == TAB_NEXT:
                        v += p * V[r2i, n2, T2]
                        q += p * Q[r2i, n2, T2]
                        m += p * M[r2i, n2, T2]
                    else:
                        m += p
                V[r, n, T] = v
                Q[r, n, T] = q
                M[r, n, T] = m
    return V[0, N, 0], Q[0, N, 0], M[0, N, 0]


@njit(cache=True)
def tab_outcomes(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, rows, dec, out):
    """A tabulated turn played forward: ``out[T]`` = P(the turn banks a total of T units).

    Returns (instant win, bust, forfeit, pruned) chances; a forfeit is a total the turn ends
    on but may not bank, which a bust penalty does not count as a bust. The moves and their
    legality are :func:`tab_move`'s, as in :func:`fixed_dp`, which values the same turn
    backward; ``out`` must cover the last row's total + max_step.
    """
    N = prm[P_N]
    nr = rows.shape[0]
    Tt = rows.shape[2] - 1
    mass = np.zeros((nr, N + 1, Tt + 1))
    mass[0, N, 0] = 1.0
    out[:] = 0.0
    win = 0.0
    qb = 0.0
    qf = 0.0
    pruned = 0.0
    for T in range(Tt + 1):
        for n in range(1, N + 1):
            for r in range(nr):
                mm = mass[r, n, T]
                if mm == 0.0:
                    continue
                row = rows[r, n, T]
                for c in range(cstart[n], cstart[n + 1]):
                    p = c_prob[c] * mm
                    res, r2i, n2, T2 = tab_move(prm, cstart, c_kind, c_os, o_p, o_d, fa, rows, dec, row, c, r, n, T)
                    if res == TAB_LOSE:
                        if c_kind[c] == BUST:
                            qb += p
                        else:
                            qf += p
                    elif res == TAB_WIN:
                        win += p
                    elif res == TAB_BANK:
                        out[T2] += p
                    elif res == TAB_NEXT:
                        mass[r2i, n2, T2] += p
                    else:
                        pruned += p
    return win, qb, qf, pruned


@njit(cache=True)
def tab_frontier(mass, T, theta, pruned, sel_k, sel_r, sel_n):
    """The tabulation's states at total T: (k, r, n) reached with probability >= theta are
    selected; smaller masses are dropped and added to pruned[k]. Returns how many."""
    cnt = 0
    for k in range(mass.shape[0]):
        for n in range(1, mass.shape[2]):
            for r in range(mass.shape[1]):
                m = mass[k, r, n, T]
                if m <= 0.0:
                    continue
                if m < theta:
                    pruned[k] += m
                    continue
                sel_k[cnt] = k
                sel_r[cnt] = r
                sel_n[cnt] = n
                cnt += 1
    return cnt


@njit(cache=True)
def tab_entries(cnt, sel_n, cstart, c_kind, e_sel, e_c):
    """The decisions asked at the selected states: one per class of rolls that offers a keep."""
    ne = 0
    for i in range(cnt):
        n = sel_n[i]
        for c in range(cstart[n], cstart[n + 1]):
            if c_kind[c] == NORMAL:
                e_sel[ne] = i
                e_c[ne] = c
                ne += 1
    return ne


@njit(cache=True)
def tab_apply(
    T,
    cnt,
    sel_k,
    sel_r,
    sel_n,
    ne,
    e_sel,
    e_c,
    pts,
    nd,
    end,
    maxr_k,
    z,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    mass,
    rows,
    row0,
    dec,
):
    """Store the decisions of the selected states (rows row0.. of dec) and carry their
    probability forward. Returns the highest total reached, or -1 - e when decision e is
    not one of its roll's keeps."""
    N = mass.shape[2] - 1
    hi = T
    for i in range(cnt):
        rows[sel_k[i], sel_r[i], sel_n[i], T] = row0 + i
    for e in range(ne):
        i = e_sel[e]
        c = e_c[e]
        found = -1
        for o in range(c_os[c], c_oe[c]):
            if o_p[o] == pts[e] and o_d[o] == nd[e]:
                found = o
                break
        if found < 0:
            return -1 - e
        k = sel_k[i]
        r = sel_r[i]
        n = sel_n[i]
        dec[row0 + i, c - cstart[n]] = 2 * (found - c_os[c]) + (1 if end[e] else 0)
        maxr = maxr_k[k]
        can_roll = maxr == 0 or r + 1 < maxr
        if end[e] or not can_roll:
            continue
        r2i = 0 if maxr == 0 else r + 1
        T2 = T + o_p[found]
        n2 = n - o_d[found]
        if n2 == 0:
            n2 = N
        mass[k, r2i, n2, T2] += mass[k, r, n, T] * c_prob[c]
        if T2 > hi:
            hi = T2
    if z > 0:
        for i in range(cnt):
            n = sel_n[i]
            k = sel_k[i]
            r = sel_r[i]
            maxr = maxr_k[k]
            if maxr != 0 and r + 1 >= maxr:
                continue
            r2i = 0 if maxr == 0 else r + 1
            for c in range(cstart[n], cstart[n + 1]):
                if c_kind[c] == ZILCH:
                    mass[k, r2i, N, T + z] += mass[k, r, n, T] * c_prob[c]
                    if T + z > hi:
                        hi = T + z
    return hi


@njit(cache=True)
def table_decide(prm, cstart, c_os, c_oe, o_p, o_d, maxr_k, fa_k, k, r, n, T, c, cq_roll, cq_bank, cq_forf, out):
    """A table policy's move at each asked state, by the choice rule of :func:`turn_dp` with
    fixed preference tables (the same comparisons and tie-break): out[i] = 2 * option + end."""
    N = prm[P_N]
    entry = prm[P_ENTRY]
    minbank = prm[P_MINBANK]
    hotmand = prm[P_HOTMAND] == 1
    nbank = cq_bank.shape[0] - 1
    cq_Tcap = cq_roll.shape[3] - 1
    for i in range(len(k)):
        fa = fa_k[k[i]]
        maxr = maxr_k[k[i]]
        r2 = r[i] + 1
        can_roll = maxr == 0 or r2 < maxr
        r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
        ci = c[i]
        bc = NEG
        best = -1
        for o in range(c_os[ci], c_oe[ci]):
            T2 = T + o_p[o]
            n2 = n[i] - o_d[o]
            hot = n2 == 0
            if hot:
                n2 = N
            can_bank = (fa == 1 or T2 >= entry) and T2 >= minbank and not (hot and hotmand and can_roll)
            cv = NEG
            end = 0
            if can_roll and T2 <= cq_Tcap:
                cv = cq_roll[fa, r2i, n2, T2]
            if can_bank:
                ce = cq_bank[min(T2, nbank)]
                if ce >= cv or not can_roll:
                    cv = ce
                    end = 1
            elif not can_roll:
                cv = cq_forf
                end = 1
            if best < 0 or cv > bc:
                bc = cv
                best = 2 * (o - c_os[ci]) + end
        out[i] = best


@njit(cache=True)
def self_eval_dp(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB):
    """One sweep for a self-valued player in an evaluation: each move is chosen on the
    player's own values (bank values bv2, bust value bo: :func:`turn_dp` with choose_self,
    its comparisons and tie-break, as :func:`tenk_env.solve.policy.pick` plays them) and
    valued against the opponent being evaluated (bank values bv): V = c, Q = q with the
    evaluated value c + q * beta. Half the work of two turn_dp passes."""
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    z = prm[P_ZILCH]
    entry = prm[P_ENTRY]
    minbank = prm[P_MINBANK]
    hotmand = prm[P_HOTMAND] == 1
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                r2 = r + 1
                can_roll = maxr == 0 or r2 < maxr
                r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
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
                        elif (fa == 1 or T2 >= entry) and T2 >= minbank:
                            v2 += p * bv2[T2]
                            v += p * bv[T2]
                        else:
                            v2 += p * bo
                            q2 += p
                            q += p
                    else:
                        bc = NEG
                        bq2 = 0.0
                        be = 0.0
                        bq = 0.0
                        first = True
                        for o in range(c_os[c], c_oe[c]):
                            T2 = T + o_p[o]
                            n2 = n - o_d[o]
                            hot = n2 == 0
                            if hot:
                                n2 = N
                            can_bank = (fa == 1 or T2 >= entry) and T2 >= minbank and not (hot and hotmand and can_roll)
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
                                if ce >= cv or not can_roll:
                                    cv = ce
                                    cq = 0.0
                                    ev = bv[T2]
                                    eq = 0.0
                            elif not can_roll:
                                cv = bo
                                cq = 1.0
                                ev = 0.0
                                eq = 1.0
                            if first or cv > bc:
                                bc = cv
                                bq2 = cq
                                be = ev
                                bq = eq
                                first = False
                        v2 += p * bc
                        q2 += p * bq2
                        v += p * be
                        q += p * bq
                V2[r, n, T] = v2
                Q2[r, n, T] = q2
                V[r, n, T] = v
                Q[r, n, T] = q


@njit(cache=True)
def self_side(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    max_step,
    a,
    b,
    fa,
    fb,
    Wv,
    RFv,
    Wn,
    RFn,
    Rsup,
    pbmin,
    eps,
    Lx,
    V,
    Q,
    bv,
    V2,
    Q2,
    bv2,
    fA,
    fB,
):
    """(c, q) of a self-valued player (optimal, a best response) in an evaluation: its moves
    come from its own values Wv/RFv, exactly as its agent picks them; they are then valued
    against the opponent being evaluated (Wn/RFn)."""
    N = prm[P_N]
    bo = 1.0 - Wv[fb, fa, b, a]
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, bo)
    bank_values_rf(prm, Wv, RFv, a, b, fb, Tcap + max_step + 1, bv2)
    bank_values_rf(prm, Wn, RFn, a, b, fb, Tcap + max_step + 1, bv)
    self_eval_dp(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB)
    return V[0, N, 0], Q[0, N, 0]


# ---------------------------------------------------------------------------- evaluation under a bust penalty
# A fixed policy's turn is a Markov chain: its outcome (bank T, bust, forfeit, instant win)
# does not depend on the values it leads to. Under a bust penalty no order of the states
# makes each follow from solved ones, so an evaluation reads each turn's outcome once and
# then iterates the linear system they define (:func:`penalty_sweep`), which is cheap.
#: what a self-valued player's move leads to (:func:`self_forward`)
_SF_ROLL, _SF_BANK, _SF_FORFEIT, _SF_FORCED = range(4)


@njit(cache=True)
def optimal_values(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, Tcap, bv, beta, forf, fA, fB, V, A):
    """``V[r, n, T]`` for T <= Tcap exactly as :func:`turn_dp` computes it with ``choose_self``
    (the same floats, so the optimal agent's same moves), and ``A[r, k, T2]``, the value of
    the best action after a keep in roll r that leaves k dice (0 for hot dice) and the total
    T2, from which the agents read their moves. ``A`` must cover totals up to
    ``Tcap + max_step``, ``bv`` the same."""
    _self_dp(
        prm,
        cstart,
        c_prob,
        c_kind,
        c_os,
        c_oe,
        o_p,
        o_d,
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
def self_forward(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, fa, Tcap, bv, beta, forf, V, A, mass, fA, fB, out):
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
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    z = prm[P_ZILCH]
    entry = prm[P_ENTRY]
    minbank = prm[P_MINBANK]
    hotmand = prm[P_HOTMAND] == 1
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
                r2 = r + 1
                can_roll = maxr == 0 or r2 < maxr
                r2i = 0 if maxr == 0 else (r2 if can_roll else 0)
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
                        elif (fa == 1 or T2 >= entry) and T2 >= minbank:
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
                            if x > best:
                                best = x
                                k = n - o_d[o]
                                T2 = T + o_p[o]
                        hot = k == 0
                        n2 = N if hot else k
                        # ... and the action after it, as optimal_values decides A[r, k, T2]
                        can_bank = (fa == 1 or T2 >= entry) and T2 >= minbank and not (hot and hotmand and can_roll)
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
                            if bv[T2] >= cv or not can_roll:
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


@njit(cache=True)
def _settle_row(prm, x, y, sy, out, RFn, D, i):
    """Split a turn's bank distribution ``out`` at state i (mover at x, opponent at y with
    status sy): banks below the target into D[i, T], the rest valued against the opponent's
    final turn (1 under an immediate end). Returns the value of the latter."""
    tu = prm[P_TARGET]
    J = RFn.shape[2]
    c = 0.0
    for T in range(out.shape[0]):
        p = out[T]
        if p == 0.0:
            continue
        s = x + T
        if s < tu:
            D[i, T] = p
        elif prm[P_END] == END_IMMEDIATE:
            c += p
        else:
            c += p * (1.0 - RFn[sy, y, min(s - tu, J - 1)])
    return c


@njit(cache=True, parallel=True)
def self_outcomes(
    prm,
    cstart,
    c_prob,
    c_kind,
    c_os,
    c_oe,
    o_p,
    o_d,
    max_step,
    states,
    Wv,
    RFv,
    RFn,
    Rsup,
    pbmin,
    eps,
    Lx,
    fA,
    fB,
    D,
    C,
    QB,
    QF,
):
    """The outcome of a self-valued player's turn at every state i = (x, y, sx, sy) of
    ``states`` (own score, opponent's, statuses): its moves chosen on its own values Wv/RFv
    (the opponent's win chance with the opponent to move; its final turns), exactly as
    the optimal agent chooses them (:func:`optimal_values`), and played forward
    (:func:`self_forward`).

    D[i, T]: P(banking T with x + T below the target); C[i]: P(an instant win) plus the banks
    at or past the target, valued against the opponent's final turn RFn; QB[i], QF[i]: the
    chances of a bust and of a forfeit. Rows of D must be zero on entry."""
    N = prm[P_N]
    nr = 1 if prm[P_MAXROLLS] == 0 else prm[P_MAXROLLS]
    for i in prange(states.shape[0]):
        x, y, sx, sy = states[i, 0], states[i, 1], states[i, 2], states[i, 3]
        x2, sx2 = bust_target(prm, x, sx)
        beta = 1.0 - Wv[sy, sx2, y, x2]
        forf = 1.0 - Wv[sy, sx & 1, y, x]
        Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, x, y, sx, sy, beta)
        bv = np.zeros(Tcap + max_step + 2)
        bank_values_rf(prm, Wv, RFv, x, y, sy, Tcap + max_step + 1, bv)
        V = np.zeros((nr, N + 1, Tcap + 1))
        A = np.empty((nr, N, Tcap + max_step + 1))
        optimal_values(prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, sx & 1, Tcap, bv, beta, forf, fA, fB, V, A)
        out = np.zeros(Tcap + max_step + 2)
        mass = np.empty((nr, N + 1, Tcap + 1))
        w, qb, qf = self_forward(
            prm, cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d, sx & 1, Tcap, bv, beta, forf, V, A, mass, fA, fB, out
        )
        C[i] = w + _settle_row(prm, x, y, sy, out, RFn, D, i)
        QB[i] = qb
        QF[i] = qf


@njit(cache=True, parallel=True)
def fixed_outcomes(prm, states, kid, OUT, OW, OB, OF, RFn, D, C, QB, QF):
    """:func:`self_outcomes` for a tabulated player: state i plays the turn of situation
    kid[i], whose outcome is OUT[k] (banks), OW[k], OB[k], OF[k] (:func:`tab_outcomes`)."""
    for i in prange(states.shape[0]):
        k = kid[i]
        C[i] = OW[k] + _settle_row(prm, states[i, 0], states[i, 1], states[i, 3], OUT[k], RFn, D, i)
        QB[i] = OB[k]
        QF[i] = OF[k]


@njit(cache=True)
def penalty_sweep(prm, states, IDX, DA, CA, QBA, QFA, DB, CB, QBB, QFB, XA, XB):
    """One Gauss-Seidel sweep of the evaluation of two fixed policies: XA[i] is A's win chance
    with A to move at state i = (x, y, sx, sy), XB[i] B's with B to move there (B at x),
    each its turn's outcome (:func:`self_outcomes`) applied to the other's values. IDX[sx,
    sy, x, y] gives a state's row. States go in the order given (decreasing score sum, so a
    bank reads this sweep's values). Returns the largest change."""
    tu = prm[P_TARGET]
    worst = 0.0
    for i in range(states.shape[0]):
        x, y, sx, sy = states[i, 0], states[i, 1], states[i, 2], states[i, 3]
        x2, sx2 = bust_target(prm, x, sx)
        jb = IDX[sy, sx2, y, x2]
        jf = IDX[sy, sx & 1, y, x]
        if jb < 0 or jf < 0:
            raise ValueError("penalty_sweep: a bust leads to a state that is not in the list")
        for side in range(2):
            if side == 0:
                D, C, QB, QF, X, Y = DA, CA, QBA, QFA, XA, XB
            else:
                D, C, QB, QF, X, Y = DB, CB, QBB, QFB, XB, XA
            v = C[i] + QB[i] * (1.0 - Y[jb])
            if QF[i] > 0.0:
                v += QF[i] * (1.0 - Y[jf])
            for T in range(tu - x):
                p = D[i, T]
                if p != 0.0:
                    j = IDX[sy, 1, y, x + T]
                    if j < 0:
                        raise ValueError("penalty_sweep: a bank leads to a state that is not in the list")
                    v += p * (1.0 - Y[j])
            d = abs(v - X[i])
            if d > worst:
                worst = d
            X[i] = v
    return worst
