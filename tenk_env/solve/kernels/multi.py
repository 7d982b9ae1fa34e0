"""N players (numba): the N-player evaluator and best response of :mod:`tenk_env.solve.multi`.

Scores of N players are flattened into one index, ``idx = sum(s[i] * tu**i)``: a bank raises
one score and so the index, and states of one score sum (a *level*) depend only on higher
levels and on each other through busts at the same scores. :func:`regular_level` solves one
level in parallel over its score vectors; the final round is :func:`final_fixed` and
:func:`final_responder`.

Every within-turn backward induction is :func:`tenk_env.solve.kernels.turn.turn_dp`, the kernel
the 2-player solver uses, so the responder chooses exactly as ``optimal`` and ``br:BOT`` do.
A fixed player's turn is a Markov chain whose moves do not depend on values: its outcome
(bank T, bust, instant win) is read once per situation by
:func:`tenk_env.solve.kernels.evaluation.tab_outcomes`.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.solve.kernels.rules import bankable_from, needs_extension, on_board
from tenk_env.solve.kernels.turn import self_eval_dp, turn_dp, turn_dp_radius
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_ENTRY, P_MAXROLLS, P_MINBANK, P_N


@njit(cache=True)
def digits(idx, tu, N, s):
    """s[i]: player i's score in the flat index ``idx``."""
    for i in range(N):
        s[i] = idx % tu
        idx //= tu


@njit(cache=True)
def _no_beat(FB, s, N, x, y, tu):
    """P(no player but x beats a bar of y in the final round): x triggered with y, and every
    other player has one final turn against it (once one beats it, x has lost)."""
    J = FB.shape[2]
    j = min(y - tu, J - 1)
    v = 1.0
    for i in range(N):
        if i != x:
            v *= 1.0 - FB[i, s[i], j]
    return v


@njit(cache=True)
def _trigger_value(prm, tu, N, x, m, y, s, FB, TRIG, pw):
    """The focus player's win chance once player m banks to y >= target at scores s."""
    if prm[P_END] == END_IMMEDIATE:
        return 1.0 if m == x else 0.0
    if m == x:
        return _no_beat(FB, s, N, x, y, tu)
    rest = 0
    mult = 1
    for k in range(1, N):
        rest += s[(m + k) % N] * mult
        mult *= tu
    j = min(y - tu, TRIG.shape[1] - 1)
    return TRIG[m, j, rest]


@njit(cache=True)
def br_cap(prm, tu, N, x, s, FB, pbmin, eps, beta):
    """The total past which the responder's banking at scores s is provably best: the cap of
    :func:`tenk_env.solve.kernels.opt_tcap`, against every other player's final turn
    (:func:`bank_cap`)."""
    return bank_cap(prm, tu, s[x], _br_lose(prm, tu, N, x, s, FB), pbmin, eps, beta)


@njit(cache=True)
def _br_lose(prm, tu, N, x, s, FB):
    """lose[j]: the chance that the responder's bank to target + j at scores s is beaten in
    the final round (none under an immediate end)."""
    if prm[P_END] == END_IMMEDIATE:
        return np.zeros(0)
    lose = np.empty(FB.shape[2])
    for j in range(lose.shape[0]):
        lose[j] = 1.0 - _no_beat(FB, s, N, x, tu + j, tu)
    return lose


@njit(cache=True)
def bank_cap(prm, tu, a, lose, pbmin, eps, beta):
    """The total past which banking is provably best for a mover at score a with bust value
    beta, ``lose[j]`` the chance that a bank to target + j is beaten in the final round.

    Past the target under a final round, banking beats rolling on once the chance that
    someone beats the bank is at most pbmin * (1 - beta) at every higher total: rolling on
    wins at most 1 - pbmin and otherwise busts to beta. With forced rolls the cap also
    reaches the total past which a bank wins surely (to eps), where a forced roll has a
    closed form (:func:`tenk_env.solve.kernels.forced_value`). Under an immediate end the
    target itself is the cap."""
    fa = on_board(prm, a)
    if prm[P_END] == END_IMMEDIATE:
        return max(tu - a, bankable_from(prm, fa))
    return cap_past(prm, tu, lose, max(eps, pbmin * (1.0 - beta)), eps, a, fa)


@njit(cache=True)
def cap_past(prm, tu, lose, bound, eps, a, fa):
    """The cap of a mover at score a once ``lose[j]``, the chance that a bank to target + j
    is beaten, is at most ``bound`` from j on (and at most ``eps`` with forced rolls): see
    :func:`br_cap`."""
    J = lose.shape[0]
    j0 = J
    j1 = J
    sup = 0.0
    for j in range(J - 1, -1, -1):
        if lose[j] > sup:
            sup = lose[j]
        if sup <= bound:
            j0 = j
        if sup <= eps:
            j1 = j
    y = tu + (j1 if needs_extension(prm) and j1 > j0 else j0)
    return max(y - a, bankable_from(prm, fa))


@njit(cache=True)
def br_turn_inputs(prm, tu, N, x, idx, s, Unext, FB, pw, pbmin, eps, beta, max_step, bv):
    """The responder's turn at scores s (index idx): fills bv[T], its win chance after banking
    T (``Unext``: its win chance with the next player to move), and returns the cap
    (:func:`br_cap`)."""
    Tcap = br_cap(prm, tu, N, x, s, FB, pbmin, eps, beta)
    _br_bank_values(prm, tu, N, x, idx, s, Unext, FB, pw, Tcap + max_step + 2, bv)
    return Tcap


@njit(cache=True)
def _br_bank_values(prm, tu, N, x, idx, s, Unext, FB, pw, n, bv):
    """bv[T] for T < n: the responder's win chance after banking T at scores s (index idx)."""
    a = s[x]
    for T in range(n):
        y = a + T
        if y < tu:
            bv[T] = Unext[idx + T * pw[x]]
        elif prm[P_END] == END_IMMEDIATE:
            bv[T] = 1.0
        else:
            bv[T] = _no_beat(FB, s, N, x, y, tu)


@njit(cache=True)
def respond(prm, rolls, tu, a, lose, bv, C, Q, xv, pbmin, eps, tol, fA, fB):
    """The responder's value x at a cycle of turns where everyone else's play is fixed, so
    that its bust value is linear in it, beta = C + Q * x: the fixed point x = F(beta), F its
    optimal turn from score a against the bank values ``bv`` (filled for every total a cap
    reaches), capped by :func:`bank_cap` on ``lose``. Returns (x, last change, turns solved);
    ``xv`` is the first guess.

    F is convex piecewise linear in beta: Newton steps (policy iteration), then plain
    iteration, as the 2-player solver does. A policy still optimal at the fixed point it
    implies (the same cap, the bust value within its radius) makes that point exact."""
    fa = on_board(prm, a)
    Nd = prm[P_N]
    nr = max(1, prm[P_MAXROLLS])
    V = np.empty((1, 1, 1))
    Qa = np.empty((1, 1, 1))
    rad = np.zeros(1)
    it = 0
    r = 0.0
    while True:
        it += 1
        beta = C + Q * xv
        Tcap = bank_cap(prm, tu, a, lose, pbmin, eps, beta)
        if V.shape[2] < Tcap + 1:
            V = np.empty((nr, Nd + 1, Tcap + 1))
            Qa = np.empty((nr, Nd + 1, Tcap + 1))
        turn_dp_radius(prm, rolls, fa, Tcap, bv, beta, beta, True, True, V, bv, beta, Tcap, V, Qa, fA, fB, rad, rad[:0])
        v = V[0, Nd, 0]
        qv = Qa[0, Nd, 0]
        r = abs(v - xv)
        if r < tol or it > 5000:
            return v, r, it
        if it <= 8:
            cA = v - qv * beta
            xv = (cA + qv * C) / (1.0 - qv * Q)
            b2 = C + Q * xv
            if abs(b2 - beta) <= rad[0] and bank_cap(prm, tu, a, lose, pbmin, eps, b2) == Tcap:
                return xv, 0.0, it
        else:
            xv = v


@njit(cache=True, parallel=True)
def regular_level(
    prm, rolls, max_step, tu, N, x, resp, states, KID, DIST, DW, DQ, FB, TRIG, U, pbmin, eps, tol, fA, fB, res, its
):
    """Solve the turn-start states ``states`` (one level: equal score sums) for the focus player x.

    ``U[m, idx]`` is x's win chance with player m to move at scores idx. Fixed players'
    turns are their outcome rows ``DIST[KID[m, own, leader]]`` (bank T), ``DW`` (instant
    win), ``DQ`` (bust or forfeit: the next player moves at the same scores). With ``resp``,
    x is the responder: its turn is the optimal backward induction against the others' fixed
    play. The N movers at one score vector are linked in a cycle by busts; the fixed ones are
    linear, so the cycle is x = F(C + Q x) with F convex piecewise linear in the bust value:
    Newton steps (policy iteration), then plain iteration, as the 2-player solver does.
    ``res``/``its`` receive each state's residual and iterations."""
    pw = np.empty(N, np.int64)
    p = 1
    for i in range(N):
        pw[i] = p
        p *= tu
    Lr = DIST.shape[1]
    for iq in prange(states.shape[0]):
        i = np.int64(iq)
        idx = states[i]
        s = np.empty(N, np.int64)
        digits(idx, tu, N, s)
        c = np.zeros(N)
        q = np.zeros(N)
        for m in range(N):
            if resp and m == x:
                continue
            lead = 0
            for k in range(N):
                if k != m and s[k] > lead:
                    lead = s[k]
            key = KID[m, s[m], lead]
            cm = DW[key] if m == x else 0.0
            nxt = (m + 1) % N
            for T in range(1, Lr):
                pr = DIST[key, T]
                if pr == 0.0:
                    continue
                y = s[m] + T
                if y < tu:
                    cm += pr * U[nxt, idx + T * pw[m]]
                else:
                    cm += pr * _trigger_value(prm, tu, N, x, m, y, s, FB, TRIG, pw)
            c[m] = cm
            q[m] = DQ[key]
        if not resp:
            num = 0.0
            prod = 1.0
            for m in range(N):
                num += prod * c[m]
                prod *= q[m]
            u = num / (1.0 - prod)
            U[0, idx] = u
            for m in range(N - 1, 0, -1):
                u = c[m] + q[m] * u
                U[m, idx] = u
            res[i] = 0.0
            its[i] = 0
            continue
        # the fixed players from x + 1 round to x - 1: beta = C + Q * (x's value)
        C = 0.0
        Q = 1.0
        for k in range(1, N):
            m = (x + k) % N
            C += Q * c[m]
            Q *= q[m]
        a = s[x]
        nb = (x + 1) % N
        # the first guess of x's value, from the plane through three solved neighbours (x one
        # unit up, the next player one up, both): half the states needed a second turn
        # solve from the next player's neighbour alone, one in fifteen from the plane
        xv = U[x, idx + pw[nb]] if s[nb] + 1 < tu else 0.5
        if s[nb] + 1 < tu and s[x] + 1 < tu:
            xv += U[x, idx + pw[x]] - U[x, idx + pw[x] + pw[nb]]
        # sized for this state: the cap moves with beta only past the target
        bv = np.empty(tu - a + FB.shape[2] + max_step + 4 + bankable_from(prm, on_board(prm, a)))
        _br_bank_values(prm, tu, N, x, idx, s, U[nb], FB, pw, bv.shape[0], bv)
        xv, r, it = respond(prm, rolls, tu, a, _br_lose(prm, tu, N, x, s, FB), bv, C, Q, xv, pbmin, eps, tol, fA, fB)
        U[x, idx] = xv
        u = xv
        for k in range(N - 1, 0, -1):
            m = (x + k) % N
            u = c[m] + q[m] * u
            U[m, idx] = u
        res[i] = r
        its[i] = it


@njit(cache=True, parallel=True)
def final_fixed(tu, N, ix, Jk, Pk, FKID, FDIST, FW, PHI1, out):
    """One fixed player's final turn in the final round: ``out[hx, j, rest]`` from ``PHI1``,
    the table of the players after it. ``rest`` holds this player's score (``rest % tu``)
    and those after it; the bar is target + j, ``hx`` whether the focus player holds it.
    ``ix``: this player is the focus. A bank that beats the bar makes this player its holder;
    one that does not, and a bust, leave it; an instant win ends the game."""
    J1 = PHI1.shape[1]
    Lf = FDIST.shape[1]
    for jq in prange(Jk):
        j = np.int64(jq)  # a parallel loop's index is unsigned: mixed with int64 numba makes floats
        M = tu + j
        for rk in range(Pk):
            a = rk % tu
            r1 = rk // tu
            key = FKID[a, min(j, FKID.shape[1] - 1)]
            for hx in range(2):
                stay = PHI1[hx, min(j, J1 - 1), r1]
                if key < 0:
                    out[hx, j, rk] = stay
                    continue
                w = FW[key]
                beat = 0.0
                acc = 0.0
                for T in range(max(1, M - a + 1), Lf):
                    pr = FDIST[key, T]
                    if pr == 0.0:
                        continue
                    jj = min(a + T - tu, J1 - 1)
                    acc += pr * PHI1[ix, jj, r1]
                    beat += pr
                out[hx, j, rk] = (w if ix == 1 else 0.0) + (1.0 - w - beat) * stay + acc


@njit(cache=True)
def final_cap(prm_f, tu, M, PHI1, r1, beta, pbmin, eps):
    """The score past which the responder's bank in its final turn is provably best, against
    a bar M held by another player (``PHI1``: the table of the players after it, ``beta``:
    its chance if it does not beat M): the first score past M from which every higher bank
    is lost with chance <= pbmin * (1 - beta) (<= eps with forced rolls; see :func:`br_cap`)."""
    J1 = PHI1.shape[1]
    bound = max(eps, pbmin * (1.0 - beta))
    sup = 0.0
    y0 = tu + J1
    y1 = tu + J1
    for jj in range(J1 - 1, -1, -1):
        y = tu + jj
        if y <= M:
            break
        lose = 1.0 - PHI1[1, jj, r1]
        if lose > sup:
            sup = lose
        if sup <= bound:
            y0 = y
        if sup <= eps:
            y1 = y
    ycap = y1 if needs_extension(prm_f) and y1 > y0 else y0
    return max(ycap, M + 1)


@njit(cache=True)
def final_bank_values(tu, M, a0, PHI1, r1, beta, bv):
    """bv[T]: the responder's chance after banking T from score a0 in its final turn (the
    bar M held by another player, ``PHI1`` the players after it)."""
    J1 = PHI1.shape[1]
    for T in range(bv.shape[0]):
        y = a0 + T
        bv[T] = PHI1[1, min(y - tu, J1 - 1), r1] if y > M else beta


@njit(cache=True, parallel=True)
def final_responder(prm_f, rolls, max_step, tu, Jk, P1, PHI1, pbmin, eps, fA, fB, out, PHI2, ev):
    """The responder's final turn: ``out[0, j, a + tu * rest]`` for every own score a, against
    a bar of target + j held by another player, ``PHI1`` the table of the players after it.
    ``ev`` (shape (Jk, tu * P1); size 0: not wanted) receives the value of the turn so played
    (:func:`tenk_env.solve.kernels.self_eval_dp`, the same choices) to another player, whose
    chance is ``PHI2[0, j, r1]`` if the bar stands and ``PHI2[1, j', r1]`` once the turn
    raises it to target + j' (a table laid out as ``PHI1``); ``PHI2`` of size 0: the chance
    that the turn beats the bar.

    Without a minimum bank a turn's values depend on the responder's score only through
    score + turn total, so one backward induction over that sum (index y) serves every
    starting score; off the board (score 0, entry threshold) totals and sums coincide."""
    J1 = PHI1.shape[1]
    N = prm_f[P_N]
    nr = max(1, prm_f[P_MAXROLLS])
    entry = prm_f[P_ENTRY]
    minbank = prm_f[P_MINBANK]
    track = ev.shape[0] > 0
    beat = PHI2.shape[0] == 0
    for jq in prange(Jk * P1):
        jr = np.int64(jq)
        j = jr // P1
        r1 = jr % P1
        M = tu + j
        beta = PHI1[0, min(j, J1 - 1), r1]
        ycap = final_cap(prm_f, tu, M, PHI1, r1, beta, pbmin, eps)
        if minbank == 0:
            ends = 2 if entry > 0 else 1
        else:
            ends = tu
        for e in range(ends):
            # e: the entry flag of a shared induction, or the starting score of one per score
            if minbank == 0:
                a0 = 0
                fa = 1 if e == 0 else 0
                Tcap = max(ycap, bankable_from(prm_f, fa))
            else:
                a0 = e
                fa = on_board(prm_f, a0)
                Tcap = max(ycap - a0, bankable_from(prm_f, fa))
            bv = np.empty(Tcap + max_step + 2)
            final_bank_values(tu, M, a0, PHI1, r1, beta, bv)
            V = np.empty((nr, N + 1, Tcap + 1))
            Qa = np.empty((nr, N + 1, Tcap + 1))
            Vb = V
            Qb = Qa
            be = 0.0
            if track:
                bb = np.empty(bv.shape[0])
                if beat:
                    for T in range(bb.shape[0]):
                        bb[T] = 1.0 if a0 + T > M else 0.0
                else:
                    J2 = PHI2.shape[1]
                    be = PHI2[0, min(j, J2 - 1), r1]
                    for T in range(bb.shape[0]):
                        y = a0 + T
                        bb[T] = PHI2[1, min(y - tu, J2 - 1), r1] if y > M else be
                Vb = np.empty((nr, N + 1, Tcap + 1))
                Qb = np.empty((nr, N + 1, Tcap + 1))
                self_eval_dp(prm_f, rolls, fa, Tcap, bv, beta, bb, V, Qa, Vb, Qb, fA, fB)
            else:
                turn_dp(prm_f, rolls, fa, Tcap, bv, beta, beta, True, True, V, bv, beta, Tcap, V, Qa, fA, fB)
            if minbank != 0:
                out[0, j, a0 + tu * r1] = V[0, N, 0]
                if track:
                    ev[j, a0 + tu * r1] = Vb[0, N, 0] + Qb[0, N, 0] * be
            elif fa == 1:
                for a in range(tu):
                    out[0, j, a + tu * r1] = V[0, N, a]
                    if track:
                        ev[j, a + tu * r1] = Vb[0, N, a] + Qb[0, N, a] * be
            else:
                out[0, j, tu * r1] = V[0, N, 0]
                if track:
                    ev[j, tu * r1] = Vb[0, N, 0] + Qb[0, N, 0] * be
