"""Evaluation of fixed policies (numba): :func:`eval_game` (two policies against each other
in the 2-player game), a self-valued player's side (:func:`self_value`, :func:`self_side`,
:func:`self_outcomes`), tabulated turns (``tab_*``, :func:`fixed_dp`, :func:`table_decide`,
:func:`fixed_outcomes`) and the evaluation under a bust penalty (:func:`penalty_sweep`). The
drivers are :mod:`tenk_env.solve.evaluate` and :mod:`tenk_env.solve.best_response`.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.solve.kernels.game import game_bank_values, opt_tcap
from tenk_env.solve.kernels.rules import (
    NEG,
    bankable_from,
    better_keep,
    bust_target,
    ends_turn,
    forced_value,
    hot_dice_roll_on,
    may_bank,
    needs_extension,
    roll_axis,
)
from tenk_env.solve.kernels.turn import optimal_values, self_eval_dp, self_forward, turn_dp
from tenk_env.solve.spec import BUST, END_IMMEDIATE, NORMAL, P_END, P_MAXROLLS, P_N, P_TARGET, P_ZILCH, WIN, ZILCH


@njit(cache=True)
def _eval_side(
    prm,
    rolls,
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
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    tu = prm[P_TARGET]
    N = prm[P_N]
    fA, fB = -1.0, 0.0
    if needs_extension(prm):
        fA, fB = forced_value(prm, rolls)
    if kind == 0:
        # The optimal agent's choices: its own DP on the optimal solution. Past that DP's cap
        # it banks (see opt_tcap), so the same cap is exact for the evaluation too.
        bo = 1.0 - Wopt[fb, fa, b, a]
        Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, bo)
        game_bank_values(prm, Wopt, Ropt, a, b, fb, Tcap + max_step + 1, bv2)
        turn_dp(prm, rolls, fa, Tcap, bv2, bo, bo, True, True, V2, bv2, bo, Tcap, V2, Q2, fA, fB)
        game_bank_values(prm, Wn, Rn, a, b, fb, Tcap + max_step + 1, bv)
        turn_dp(prm, rolls, fa, Tcap, bv, 0.0, 0.0, True, False, V2, bv2, bo, Tcap, V, Q, fA, fB)
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
            rolls,
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
    rolls,
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
                        rolls,
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
                        rolls,
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
def self_value(prm, rolls, max_step, a, b, fa, fb, Wn, RFn, Rsup, pbmin, eps, Lx, beta, V, Q, bv, fA, fB):
    """The best value and bust slope of the mover's turn against fixed opponent values Wn/RFn.

    The cap of :func:`opt_tcap` holds for any opponent, not only the optimal one: no final
    turn beats the optimal final turn, so Rsup bounds the opponent's chance from above.
    """
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, beta)
    bank_values_rf(prm, Wn, RFn, a, b, fb, Tcap + max_step + 1, bv)
    turn_dp(prm, rolls, fa, Tcap, bv, beta, beta, True, True, V, bv, beta, Tcap, V, Q, fA, fB)
    N = prm[P_N]
    return V[0, N, 0], Q[0, N, 0], Tcap


#: what a tabulated move leads to (:func:`tab_move`)
TAB_LOSE, TAB_WIN, TAB_BANK, TAB_NEXT, TAB_PRUNED = range(5)


@njit(cache=True)
def tab_move(prm, rolls, fa, rows, dec, row, c, r, n, T):
    """Where a roll of class c leads in a tabulated turn at state (r, n, T), decisions in row
    ``row`` of ``dec``: (outcome, r2, n2, T2). TAB_LOSE: a bust, or a total the turn cannot
    bank at its end (forfeited); TAB_WIN: an instant win; TAB_BANK: T2 banked; TAB_NEXT: the
    turn goes on at (r2, n2, T2); TAB_PRUNED: it goes on at a state the tabulation pruned.
    The one statement of the rules for :func:`fixed_dp` (backward) and the N-player solver's
    forward pass (:func:`tab_outcomes`)."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    can_roll, r2i = roll_axis(maxr, r)
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
        if may_bank(bankable_from(prm, fa), hot_dice_roll_on(prm), T2, hot, can_roll):
            return TAB_BANK, r2i, n2, T2
        return TAB_LOSE, r2i, n2, T2
    if T2 < rows.shape[2] and rows[r2i, n2, T2] >= 0:
        return TAB_NEXT, r2i, n2, T2
    return TAB_PRUNED, r2i, n2, T2


@njit(cache=True)
def fixed_dp(prm, rolls, fa, rows, dec, bv, V, Q, M):
    """A turn played by tabulated decisions: (c, q, m), its value being c + q * beta.

    ``rows[r, n, T]`` is the row of ``dec`` holding the decisions at that state (-1: not
    reached, the tabulation pruned it), ``dec[row, j]`` = 2 * option + end for the j-th class
    of n dice. beta is the value of a bust or a forfeited total (the opponent then moves at
    the mirror state); m is the chance of reaching a pruned state, valued 0, so the true
    value lies within m above. ``bv`` must cover totals up to the last row + max_step.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
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
                    out, r2i, n2, T2 = tab_move(prm, rolls, fa, rows, dec, row, c, r, n, T)
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
def tab_outcomes(prm, rolls, fa, rows, dec, out):
    """A tabulated turn played forward: ``out[T]`` = P(the turn banks a total of T units).

    Returns (instant win, bust, forfeit, pruned) chances; a forfeit is a total the turn ends
    on but may not bank, which a bust penalty does not count as a bust. The moves and their
    legality are :func:`tab_move`'s, as in :func:`fixed_dp`, which values the same turn
    backward; ``out`` must cover the last row's total + max_step.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
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
                    res, r2i, n2, T2 = tab_move(prm, rolls, fa, rows, dec, row, c, r, n, T)
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
def tab_entries(cnt, sel_n, rolls, e_sel, e_c):
    """The decisions asked at the selected states: one per class of rolls that offers a keep."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
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
def tab_apply(T, cnt, sel_k, sel_r, sel_n, ne, e_sel, e_c, pts, nd, end, maxr_k, z, rolls, mass, rows, row0, dec):
    """Store the decisions of the selected states (rows row0.. of dec) and carry their
    probability forward. Returns the highest total reached, or -1 - e when decision e is
    not one of its roll's keeps."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
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
def table_decide(prm, rolls, maxr_k, fa_k, k, r, n, T, c, cq_roll, cq_bank, cq_forf, out):
    """A table policy's move at each asked state, chosen on fixed preference tables by the
    bank rule and tie-break of :mod:`tenk_env.solve.kernels.rules` (as
    :func:`tenk_env.solve.kernels.turn.turn_dp` chooses on them): out[i] = 2 * option + end."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    hot_rolls_on = hot_dice_roll_on(prm)
    nbank = cq_bank.shape[0] - 1
    cq_Tcap = cq_roll.shape[3] - 1
    for i in range(len(k)):
        fa = fa_k[k[i]]
        floor = bankable_from(prm, fa)
        maxr = maxr_k[k[i]]
        can_roll, r2i = roll_axis(maxr, r[i])
        ci = c[i]
        bc = NEG
        best = -1
        for o in range(c_os[ci], c_oe[ci]):
            T2 = T + o_p[o]
            n2 = n[i] - o_d[o]
            hot = n2 == 0
            if hot:
                n2 = N
            can_bank = may_bank(floor, hot_rolls_on, T2, hot, can_roll)
            cv = NEG
            end = 0
            if can_roll and T2 <= cq_Tcap:
                cv = cq_roll[fa, r2i, n2, T2]
            if can_bank:
                ce = cq_bank[min(T2, nbank)]
                if ends_turn(ce, cv) or not can_roll:
                    cv = ce
                    end = 1
            elif not can_roll:
                cv = cq_forf
                end = 1
            if best < 0 or better_keep(cv, bc):
                bc = cv
                best = 2 * (o - c_os[ci]) + end
        out[i] = best


@njit(cache=True)
def self_side(
    prm, rolls, max_step, a, b, fa, fb, Wv, RFv, Wn, RFn, Rsup, pbmin, eps, Lx, V, Q, bv, V2, Q2, bv2, fA, fB
):
    """(c, q) of a self-valued player (optimal, a best response) in an evaluation: its moves
    come from its own values Wv/RFv, exactly as its agent picks them; they are then valued
    against the opponent being evaluated (Wn/RFn)."""
    N = prm[P_N]
    bo = 1.0 - Wv[fb, fa, b, a]
    Tcap = opt_tcap(prm, Rsup, pbmin, eps, Lx, a, b, fa, fb, bo)
    bank_values_rf(prm, Wv, RFv, a, b, fb, Tcap + max_step + 1, bv2)
    bank_values_rf(prm, Wn, RFn, a, b, fb, Tcap + max_step + 1, bv)
    self_eval_dp(prm, rolls, fa, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB)
    return V[0, N, 0], Q[0, N, 0]


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
def self_outcomes(prm, rolls, max_step, states, Wv, RFv, RFn, Rsup, pbmin, eps, Lx, fA, fB, D, C, QB, QF):
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
        optimal_values(prm, rolls, sx & 1, Tcap, bv, beta, forf, fA, fB, V, A)
        out = np.zeros(Tcap + max_step + 2)
        mass = np.empty((nr, N + 1, Tcap + 1))
        w, qb, qf = self_forward(prm, rolls, sx & 1, Tcap, bv, beta, forf, V, A, mass, fA, fB, out)
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
