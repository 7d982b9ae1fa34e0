"""The symmetric N-player equilibrium (numba): :func:`eq_level` solves the cycles of one level,
each mover's turn chosen on its own chance by :func:`eq_turn` (through
:func:`tenk_env.solve.kernels.turn.self_eval_dp`, so with the tie-break of
:mod:`tenk_env.solve.kernels.rules`). The driver is :mod:`tenk_env.solve.equilibrium`;
:mod:`tenk_env.solve.eq_seat` seats a fixed bot beside it with the same kernels.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.solve.kernels.multi import bank_cap, digits
from tenk_env.solve.kernels.rules import bankable_from, on_board
from tenk_env.solve.kernels.turn import self_eval_dp
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_MAXROLLS, P_N


# Scores are read from the mover: idx = d[0] + tu * d[1] + ..., d[0] the mover's, d[1] the next
# player's. E[i, idx] (i < N - 1): the win chance of the player i places after the mover; the
# last player's is 1 minus their sum. A turn is chosen on the mover's own chance; the others'
# are carried along it by :func:`tenk_env.solve.kernels.self_eval_dp` as K = max(1, N - 2)
# sums X[r] = the chance that one of the first N - K + r players from the mover wins (the
# last, X[K - 1], the chance that anyone but the last player wins; at N = 2 the mover's own).
# With the sum to 1 that is every player's chance.
@njit(cache=True)
def eq_index(tu, N, d, k0):
    """The index of the scores d[k0:N] (d[k0] + tu * d[k0 + 1] + ...)."""
    r = 0
    mult = 1
    for k in range(k0, N):
        r += d[k] * mult
        mult *= tu
    return r


@njit(cache=True)
def eq_after_bank(prm, tu, N, d, y, E, TW, XT, x):
    """The mover's chance once the mover at scores d banks to a score of y, and ``x[r]`` the
    sums X[r] (see above): below the target the next player moves, the old mover last; at
    the target the final round's tables (``TW``: the trigger's chance, ``XT[r]``: X[r]) by
    bar and the others' scores."""
    K = XT.shape[0]
    if y < tu:
        n = eq_index(tu, N, d, 1) + y * tu ** (N - 1)
        own = 1.0
        for i in range(N - 1):
            own -= E[i, n]
        for r in range(K):
            # 1 minus the chances of the players after the first N - K + r (the old place p
            # is place p - 1 from the next mover)
            acc = 1.0
            for p in range(N - 1, N - K + r - 1, -1):
                acc -= E[p - 1, n]
            x[r] = acc
        return own
    if prm[P_END] == END_IMMEDIATE:
        for r in range(K):
            x[r] = 1.0
        return 1.0
    j = min(y - tu, TW.shape[0] - 1)
    rest = eq_index(tu, N, d, 1)
    for r in range(K):
        x[r] = XT[r, j, rest]
    return TW[j, rest]


@njit(cache=True)
def eq_cap(prm, tu, N, d, TW, pbmin, eps, beta):
    """The mover's sure-bank cap at scores d (:func:`bank_cap`, against the others' final
    turns as the equilibrium plays them: ``1 - TW`` is the chance that a bank is beaten)."""
    return bank_cap(prm, tu, d[0], 1.0 - TW[:, eq_index(tu, N, d, 1)], pbmin, eps, beta)


@njit(cache=True)
def eq_turn_inputs(prm, tu, N, d, E, TW, XT, pbmin, eps, bo, max_step, bv, bx):
    """The mover's bank values at scores d, its own (``bv[T]``, what :func:`eq_turn` chooses
    on) and the sums X's (``bx[r, T]``), and its cap; ``bo`` its bust value."""
    Tcap = eq_cap(prm, tu, N, d, TW, pbmin, eps, bo)
    x = np.empty(XT.shape[0])
    for T in range(Tcap + max_step + 2):
        bv[T] = eq_after_bank(prm, tu, N, d, d[0] + T, E, TW, XT, x)
        for r in range(x.shape[0]):
            bx[r, T] = x[r]
    return Tcap


@njit(cache=True)
def eq_turn(prm, rolls, max_step, tu, N, d, E, TW, XT, pbmin, eps, fA, fB, bo, bv, bx, V2, Q2, V, Q, x):
    """The mover's turn at scores d, its own bust value ``bo``: (own chance, bust chance) of
    the turn it chooses, and ``x[r]`` what it gives the sums X[r] short of a bust (which hands
    the same scores on). ``bv``/``bx[r]`` must cover
    ``tu - d[0] + TW.shape[0] + max_step + 4 + bankable_from``. Each sum past the first
    repeats the choosing (the same choices, a second value carried)."""
    Nd = prm[P_N]
    fa = on_board(prm, d[0])
    Tcap = eq_turn_inputs(prm, tu, N, d, E, TW, XT, pbmin, eps, bo, max_step, bv, bx)
    for r in range(x.shape[0]):
        self_eval_dp(prm, rolls, fa, Tcap, bv, bo, bx[r], V2, Q2, V, Q, fA, fB)
        x[r] = V[0, Nd, 0]
    return V2[0, Nd, 0], Q[0, Nd, 0]


@njit(cache=True)
def eq_cycle(N, A, qk, out):
    """The win chances round a cycle of N turns with fixed moves: E(R_k) = A_k + q_k P E(R_{k+1})
    (P: the seats shift by one), E(R_0) in closed form, then back from R_{N-1}."""
    acc = np.zeros(N)
    w = 1.0
    for k in range(N):
        for c in range(N):
            acc[c] += w * A[k, (c - k) % N]
        w *= qk[k]
    for c in range(N):
        out[0, c] = acc[c] / (1.0 - w)
    for k in range(N - 1, 0, -1):
        nb = (k + 1) % N
        for c in range(N):
            out[k, c] = A[k, c] + qk[k] * out[nb, (c - 1) % N]


@njit(cache=True)
def _eq_parts(prm, rolls, max_step, tu, N, D, k, E, TW, XT, pbmin, eps, fA, fB, bo, bufs, x, A, qk):
    """Mover k's turn chosen at own bust value bo: fills A[k] (each place's chance from the
    turn's banks and wins) and qk[k] (its bust chance); returns the mover's value at bo."""
    bv, bx, V2, Q2, V, Q = bufs
    own, q = eq_turn(prm, rolls, max_step, tu, N, D[k], E, TW, XT, pbmin, eps, fA, fB, bo, bv, bx, V2, Q2, V, Q, x)
    cown = own - q * bo
    A[k, 0] = cown
    # place c (0 < c < N - 1) is X[c - 1] - X[c - 2], X[-1] the mover's own
    prev = cown
    for c in range(1, N - 1):
        A[k, c] = x[c - 1] - prev
        prev = x[c - 1]
    A[k, N - 1] = 1.0 - q - x[x.shape[0] - 1]
    qk[k] = q
    return own


@njit(cache=True, parallel=True)
def eq_level(prm, rolls, max_step, tu, N, reps, E, TW, XT, pbmin, eps, tol, maxit, fA, fB, res, its, gain):
    """Solve the equilibrium at the score vectors ``reps`` (one level, one per cycle of turns).

    A turn without a bank hands the same scores to the next player, so the N rotations of a
    score vector (R_k: player k to move) form a cycle. With every mover's moves fixed, the
    win chances are linear round it (:func:`eq_cycle`); each mover's moves are then chosen
    again on its own chance at the values found (policy iteration), until the values change
    by less than ``tol``. Where the movers' choices still go round after ``maxit`` rounds
    there is no pure stationary equilibrium nearby: of the choices the iteration visits, the
    profile whose largest one-turn deviation gain is least is kept, and that gain goes to
    ``gain`` (0 elsewhere, and where that profile is an equilibrium). ``res``/``its`` receive
    each cycle's last change (0 for a profile kept) and rounds."""
    Nd = prm[P_N]
    nr = max(1, prm[P_MAXROLLS])
    J = TW.shape[0]
    for iq in prange(reps.shape[0]):
        i = np.int64(iq)
        s = np.empty(N, np.int64)
        digits(reps[i], tu, N, s)
        D = np.empty((N, N), np.int64)  # D[k]: the scores read from player k
        rot = np.empty(N, np.int64)
        for k in range(N):
            for ell in range(N):
                D[k, ell] = s[(k + ell) % N]
            rot[k] = eq_index(tu, N, D[k], 0)
        Ev = np.empty((N, N))
        for k in range(N):
            # the first guess: the plane through three solved neighbours (the next player one
            # bank higher, the mover one higher, both), or the first of them alone; on classic
            # to 2,000 it leaves 46% of the cycles solved in 2 rounds, against none from the
            # next player's neighbour alone
            if D[k, 1] + 1 < tu:
                plane = D[k, 0] + 1 < tu
                last = 1.0
                for c in range(N - 1):
                    Ev[k, c] = E[c, rot[k] + tu]
                    if plane:
                        Ev[k, c] += E[c, rot[k] + 1] - E[c, rot[k] + 1 + tu]
                    last -= Ev[k, c]
                Ev[k, N - 1] = last
            else:
                Ev[k, :] = 1.0 / N
        A = np.empty((N, N))
        qk = np.empty(N)
        new = np.empty((N, N))
        size = tu + J + max_step + 4 + bankable_from(prm, 0)
        x = np.empty(XT.shape[0])
        bufs = (
            np.empty(size),
            np.empty((XT.shape[0], size)),
            np.empty((nr, Nd + 1, size)),
            np.empty((nr, Nd + 1, size)),
            np.empty((nr, Nd + 1, size)),
            np.empty((nr, Nd + 1, size)),
        )
        it = 0
        r = 0.0
        while True:
            it += 1
            for k in range(N):
                # the mover of R_k is last in R_{k+1}
                _eq_parts(
                    prm,
                    rolls,
                    max_step,
                    tu,
                    N,
                    D,
                    k,
                    E,
                    TW,
                    XT,
                    pbmin,
                    eps,
                    fA,
                    fB,
                    Ev[(k + 1) % N, N - 1],
                    bufs,
                    x,
                    A,
                    qk,
                )
            eq_cycle(N, A, qk, new)
            r = 0.0
            for k in range(N):
                for c in range(N):
                    r = max(r, abs(new[k, c] - Ev[k, c]))
            Ev[:, :] = new
            if r < tol or it >= maxit:
                break
        g = 0.0
        if r >= tol:
            # the choices seen over more rounds, each as the bust value it was chosen at
            MC = 4
            cb = np.empty((N, MC))
            cq = np.empty((N, MC))
            nc = np.zeros(N, np.int64)
            for _ in range(4 * MC):
                for k in range(N):
                    bo = Ev[(k + 1) % N, N - 1]
                    _eq_parts(prm, rolls, max_step, tu, N, D, k, E, TW, XT, pbmin, eps, fA, fB, bo, bufs, x, A, qk)
                    seen = False
                    for m in range(nc[k]):
                        seen = seen or cq[k, m] == qk[k]
                    if not seen and nc[k] < MC:
                        cb[k, nc[k]] = bo
                        cq[k, nc[k]] = qk[k]
                        nc[k] += 1
                eq_cycle(N, A, qk, new)
                Ev[:, :] = new
            n_prof = 1
            for k in range(N):
                n_prof *= nc[k]
            best = np.empty((N, N))
            g = 1e300
            for pf in range(n_prof):
                rest = pf
                for k in range(N):
                    m = rest % nc[k]
                    rest //= nc[k]
                    _eq_parts(
                        prm, rolls, max_step, tu, N, D, k, E, TW, XT, pbmin, eps, fA, fB, cb[k, m], bufs, x, A, qk
                    )
                eq_cycle(N, A, qk, new)
                worst = 0.0
                for k in range(N):
                    bo = new[(k + 1) % N, N - 1]
                    v = _eq_parts(prm, rolls, max_step, tu, N, D, k, E, TW, XT, pbmin, eps, fA, fB, bo, bufs, x, A, qk)
                    worst = max(worst, v - new[k, 0])
                if worst < g:
                    g = worst
                    best[:, :] = new
            Ev[:, :] = best
            r = 0.0  # the values are those of the profile kept, exactly
        for k in range(N):
            for c in range(N - 1):
                E[c, rot[k]] = Ev[k, c]
        res[i] = r
        its[i] = it
        gain[i] = g
