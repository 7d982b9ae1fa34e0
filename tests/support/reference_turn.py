"""The within-turn induction of a self-valued player in an evaluation, keep by keep: the
reference :func:`tenk_env.solve.kernels.turn.self_eval_dp` is held to bit for bit. Each keep
of each roll chooses its action (bank, roll on, forfeit) where it is met, as the kernel did
before it chose once per after-keep state."""

from __future__ import annotations

from numba import njit

from tenk_env.solve.kernels.rules import (
    NEG,
    bankable_from,
    better_keep,
    ends_turn,
    hot_dice_roll_on,
    may_bank,
    may_bank_total,
    roll_axis,
)
from tenk_env.solve.spec import BUST, P_MAXROLLS, P_N, P_ZILCH, WIN, ZILCH


@njit
def self_eval_dp_keep_by_keep(prm, rolls, fa, Tcap, bv2, bo, bv, V2, Q2, V, Q, fA, fB):
    """:func:`tenk_env.solve.kernels.turn.self_eval_dp`'s arguments and results."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    maxr = prm[P_MAXROLLS]
    nr = 1 if maxr == 0 else maxr
    z = prm[P_ZILCH]
    floor = bankable_from(prm, fa)
    hot_rolls_on = hot_dice_roll_on(prm)
    for T in range(Tcap, -1, -1):
        for n in range(1, N + 1):
            for r in range(nr):
                can_roll, r2i = roll_axis(maxr, r)
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
                            if first or better_keep(cv, bc):
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
