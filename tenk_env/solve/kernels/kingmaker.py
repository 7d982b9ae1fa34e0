"""What a 3-player equilibrium mover's turn can do to the others (numba), for the kingmaker
census of :mod:`tenk_env.solve.eq_analysis`: the within-turn induction
(:func:`tenk_env.solve.kernels.turn.turn_dp`) on a linear objective of the two other players'
equilibrium chances, valued at every bank by the equilibrium's tables.
"""

from __future__ import annotations

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.solve.kernels.rules import bankable_from, on_board
from tenk_env.solve.kernels.turn import turn_dp
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_N


@njit(cache=True)
def others_after(prm, tu, d, y, E, TW, XT, out):
    """out = (next player's, last player's) equilibrium chance once the mover at scores d
    (read from it) ends its turn at a score of y: below the target the next player moves,
    the mover last; at the target, the final round's tables (``TW``: the trigger's chance,
    ``XT[0]``: the chance that anyone but the last player wins)."""
    if y < tu:
        n = d[1] + tu * d[2] + tu * tu * y
        out[0] = E[0, n]
        out[1] = E[1, n]
    elif prm[P_END] == END_IMMEDIATE:
        out[0] = 0.0
        out[1] = 0.0
    else:
        j = min(y - tu, TW.shape[0] - 1)
        rest = d[1] + tu * d[2]
        out[0] = XT[0, j, rest] - TW[j, rest]
        out[1] = 1.0 - XT[0, j, rest]


@njit(cache=True, parallel=True)
def turn_extremes(prm, rolls, max_step, tu, J, cand, E, TW, XT, W, eps, ext):
    """ext[c, w]: the most the mover at the score vector ``cand[c]`` (index read from the mover)
    can make of ``W[w] @ (next player's chance, last player's chance)`` by its turn, everyone
    playing the equilibrium after it. ``J``: the final round's bars (1 under an immediate end).

    Past the turn total from which every bank is worth the last bar's to ``eps`` (at the
    latest, the one whose bank reaches the last bar), rolling on forever busts for sure (every
    roll can bust; the caller checks that a turn may always roll on and bank), so the turn
    there is worth the better of that bank and the bust, to ``eps``: the induction stops there."""
    nd = prm[P_N]
    for c in prange(cand.shape[0]):
        idx = cand[c]
        d = np.empty(3, np.int64)
        d[0] = idx % tu
        d[1] = idx // tu % tu
        d[2] = idx // (tu * tu)
        fa = on_board(prm, d[0])
        floor = bankable_from(prm, fa)
        top = max(tu - d[0] + J - 1, floor) + max_step + 2
        pair = np.empty((top, 2))
        for T in range(top):
            others_after(prm, tu, d, d[0] + T, E, TW, XT, pair[T])
        bust = np.empty(2)
        others_after(prm, tu, d, d[0], E, TW, XT, bust)
        V = np.zeros((1, nd + 1, top))
        Q = np.zeros_like(V)
        obj = np.empty(top)
        for w in range(W.shape[0]):
            for T in range(top):
                obj[T] = W[w, 0] * pair[T, 0] + W[w, 1] * pair[T, 1]
            beta = W[w, 0] * bust[0] + W[w, 1] * bust[1]
            # the cap: from it on every bank is worth the last bar's to eps
            last = obj[top - 1]
            Tcap = top - max_step - 2
            while Tcap > floor and abs(obj[Tcap - 1] - last) <= eps:
                Tcap -= 1
            past = max(last, beta)
            for T in range(Tcap + 1, top):
                obj[T] = past
            turn_dp(prm, rolls, fa, Tcap, obj, beta, beta, True, True, V, obj, beta, Tcap, V, Q, -1.0, 0.0)
            ext[c, w] = V[0, nd, 0]
