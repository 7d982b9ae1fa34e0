"""The batched engine's kernels: the turn machine of :class:`tenk_env.game.Game` compiled per game, run
over the batch in one pass (or a few threads).

Why one flat loop: in numba a call to another jitted function that takes arrays costs
about 85 ns (reference counts and argument structs for every array), which alone would
cap the engine near 2 million steps per second. So each kernel holds the whole turn
machine as a ``while`` loop over operations (``OP_*``), one per method of the scalar game
(``_close_turn`` -> ``OP_CLOSE``, ``_end_turn`` -> ``OP_END``...); an operation sets the
next one where the scalar game would call the next method. Only scalar helpers are called.

With the engine's own dice (keyed per slot, the same faces as
:func:`layout.keyed_faces`) one pass applies the action and rolls on to the next
decision; with an external dice source the kernel stops at every roll and the engine
drives the dice rounds from Python.
"""

from __future__ import annotations

import numba
import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.vector.layout import (
    ACT_TAKE,
    F_CURRENT,
    F_DL,
    F_FINAL,
    F_FLEFT,
    F_GAME,
    F_NREACHED,
    F_ORDERN,
    F_PHASE,
    F_PIGD,
    F_PIGT,
    F_RID,
    F_ROLLS,
    F_TRIGGER,
    F_TT,
    F_TURN,
    K_INSTANT,
    K_LOSE_ALL,
    K_OK,
    K_ZILCH,
    MAX_FACES,
    ORDER_Q,
    ORDER_T,
    P_BUSTS,
    P_CONTENDER,
    P_FINAL,
    P_GBANKED,
    P_GBUSTS,
    P_ONBOARD,
    P_REACHED,
    P_SCORE,
    P_TURNS,
    P_WINNER,
    PH_DECIDE,
    PH_ORDER,
    PH_OVER,
    PH_PIGGY,
    PH_ROLL,
    POPCOUNT,
    POW7F,
    RC_AUTORESET,
    RC_END,
    RC_ENTRY,
    RC_EXACT,
    RC_HIGHEST,
    RC_KOMI,
    RC_MANDATORY,
    RC_MAXROLLS,
    RC_MINBANK,
    RC_ND,
    RC_P,
    RC_PEN,
    RC_PENAFTER,
    RC_PIGGY,
    RC_TARGET,
    RC_TIE,
    RC_ZILCH,
    S_BANKS,
    S_BUSTS,
    S_DECISIONS,
    S_GAMES,
    S_INSTANT,
    S_LOSE_ALL,
    S_OVERSHOOTS,
    S_PENALTIES,
    S_PIGGY,
    S_POINTS,
    S_ROLLS,
    S_SHARED,
    S_STOPS,
    S_TURNS,
    S_WINS,
    S_ZILCH,
    SM_GAMMA,
    SM_M1,
    SM_M2,
    TableArrays,
)

_U32 = np.uint64(0xFFFFFFFF)
_SIX = np.uint64(6)
_S32 = np.uint64(32)

# operations of the turn machine
OP_ACT, OP_ADVANCE, OP_ROLL, OP_ORDER, OP_CLOSE, OP_OVERSHOOT, OP_END, OP_START, OP_FINISH, OP_RESET = range(10)
# what a k_run call does to each game of its index array
MODE_STEP = 0  # apply the action, roll on (own dice) to the next decision
MODE_ADVANCE = 1  # roll on (own dice) to the next decision
MODE_RESET = 2  # restart the game; stop at the first roll
MODE_APPLY = 3  # apply the action; stop at the first roll (external dice)
MODE_ROLL = 4  # apply the given roll (rids[i], or faces[i] for a turn-order roll); stop at the next
MODE_STEP_STREAM = 5  # MODE_STEP with the dice taken in order from a stream (see k_run)
MODE_ADVANCE_STREAM = 6  # MODE_ADVANCE with the dice from a stream
# the stream's cursor: random faces at stream[RPOS:REND], scripted faces at stream[SPOS:SEND]
CUR_RPOS, CUR_REND, CUR_SPOS, CUR_SEND = range(4)


@njit(cache=True, nogil=True, inline="always")
def _mix(s):
    z = (s ^ (s >> np.uint64(30))) * SM_M1
    z = (z ^ (z >> np.uint64(27))) * SM_M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _counter(game, turn, seat, roll):
    """layout.dice_counter"""
    u = np.uint64
    return (
        (u(game) << u(37))
        | ((u(turn) & u(0xFFFFF)) << u(17))
        | ((u(seat) & u(7)) << u(14))
        | ((u(roll) & u(0xFFF)) << u(2))
    )


@njit(cache=True, nogil=True, inline="always")
def _max_rolls(max_rolls, end, final, current, trigger):
    if end == 1 and final != 0 and current != trigger:
        return 1  # one_more_roll: a final-round turn is one roll
    return max_rolls


@njit(cache=True, nogil=True, inline="always")
def _bankable(total, on_board, score, entry, min_bank, exact, target):
    """Game._bankable: entry threshold and minimum bank, or (exact finish) landing on the target."""
    if (on_board != 0 or total >= entry) and total >= min_bank:
        return True
    return exact != 0 and score + total == target


@njit(cache=True, nogil=True, inline="always")
def _take(stream, cur, n):
    """Where the next roll's ``n`` faces start in ``stream`` (the cursor moves past them), or
    -1 when too few random faces are left (nothing moves: the caller refills, then retries)."""
    if cur[CUR_SPOS] < cur[CUR_SEND]:
        at = cur[CUR_SPOS]
        if cur[CUR_SEND] - at >= n:
            cur[CUR_SPOS] = at + n
            return at
        cur[CUR_SPOS] = cur[CUR_SEND]
    at = cur[CUR_RPOS]
    if cur[CUR_REND] - at < n:
        return -1
    cur[CUR_RPOS] = at + n
    return at


def k_run(ix, mode, actions, rids, faces_in, S, PS, rc, st2, done, rng, keep_pts, roll_kind, key_to_roll, stream, cur):
    """The turn machine over the games ``ix`` (``mode``: MODE_*).

    Stream modes take each roll's faces in order from ``stream`` (the single-game envs'
    dice, which must match the reference env's ``DiceStream`` face for face): scripted
    faces first while enough of them are left for the whole roll (a roll never mixes
    scripted and random faces; a script too short for the roll is dropped), then random
    faces. A game stops in its ROLL or ORDER phase when the stream holds too few random
    faces for the roll; the caller appends more and advances it again.
    """
    C = st2.shape[0]
    n_ix = len(ix)
    nd = rc[RC_ND]
    P = rc[RC_P]
    target = rc[RC_TARGET]
    streamed = mode == MODE_STEP_STREAM or mode == MODE_ADVANCE_STREAM
    own_dice = mode == MODE_STEP or mode == MODE_ADVANCE or streamed
    for c in prange(C):
        st = st2[c]
        faces = np.zeros(MAX_FACES, np.int64)
        for i in range(c * n_ix // C, (c + 1) * n_ix // C):
            b = ix[i]
            rid = 0
            a = 0
            if mode == MODE_STEP or mode == MODE_APPLY or mode == MODE_STEP_STREAM:
                op = OP_ACT
                a = actions[b]
            elif mode == MODE_ADVANCE or mode == MODE_ADVANCE_STREAM:
                op = OP_ADVANCE
            elif mode == MODE_RESET:
                op = OP_RESET
            elif S[F_PHASE, b] == PH_ORDER:
                op = OP_ORDER
                faces[:] = faces_in[i, :MAX_FACES]
            else:
                op = OP_ROLL
                rid = rids[i]
            # arguments of OP_END and OP_FINISH
            bust = False
            pigd = 0
            pigt = 0
            trig = False
            winner = -1
            while True:
                if op == OP_ACT:  # Game.act / Game.piggyback
                    st[S_DECISIONS] += 1
                    if S[F_PHASE, b] == PH_PIGGY:
                        if a == ACT_TAKE:
                            st[S_PIGGY] += 1
                            S[F_DL, b] = S[F_PIGD, b]
                            S[F_TT, b] = S[F_PIGT, b]
                        S[F_PIGD, b] = 0
                        S[F_PIGT, b] = 0
                        S[F_PHASE, b] = PH_ROLL
                        op = OP_ADVANCE
                        continue
                    m = a & 63
                    S[F_TT, b] += keep_pts[S[F_RID, b], m]
                    dl = S[F_DL, b] - POPCOUNT[m]
                    S[F_DL, b] = dl if dl > 0 else nd  # hot dice: all dice are back in play
                    S[F_RID, b] = -1
                    if rc[RC_EXACT] != 0 and PS[P_SCORE, b, S[F_CURRENT, b]] + S[F_TT, b] > target:
                        op = OP_OVERSHOOT
                    elif a & 64:
                        op = OP_CLOSE
                    else:
                        S[F_PHASE, b] = PH_ROLL
                        op = OP_ADVANCE
                elif op == OP_ADVANCE:  # a roll is due: draw it, or stop for the external source
                    ph = S[F_PHASE, b]
                    if ph == PH_ROLL:
                        if not own_dice:
                            break
                        n = S[F_DL, b]
                        if streamed:
                            at = _take(stream, cur, n)
                            if at < 0:
                                break
                            key = 0
                            for j in range(n):
                                key += POW7F[stream[at + j]]
                            rid = key_to_roll[key]
                            op = OP_ROLL
                            continue
                        p = S[F_CURRENT, b]
                        s = rng[b] + _counter(S[F_GAME, b], PS[P_TURNS, b, p] - 1, p, S[F_ROLLS, b]) * SM_GAMMA
                        key = 0
                        j = 0
                        while j < n:
                            s += SM_GAMMA
                            z = _mix(s)
                            key += POW7F[((z >> _S32) * _SIX >> _S32) + 1]
                            if j + 1 < n:
                                key += POW7F[((z & _U32) * _SIX >> _S32) + 1]
                            j += 2
                        rid = key_to_roll[key]
                        op = OP_ROLL
                    elif ph == PH_ORDER:
                        if not own_dice:
                            break
                        n = 0
                        for q in range(P):
                            n += PS[P_CONTENDER, b, q]
                        if streamed:
                            at = _take(stream, cur, n)
                            if at < 0:
                                break
                            for j in range(n):
                                faces[j] = stream[at + j]
                            op = OP_ORDER
                            continue
                        s = rng[b] + _counter(S[F_GAME, b], ORDER_T, ORDER_Q, S[F_ORDERN, b]) * SM_GAMMA
                        j = 0
                        while j < n:
                            s += SM_GAMMA
                            z = _mix(s)
                            faces[j] = ((z >> _S32) * _SIX >> _S32) + 1
                            if j + 1 < n:
                                faces[j + 1] = ((z & _U32) * _SIX >> _S32) + 1
                            j += 2
                        op = OP_ORDER
                    else:
                        break
                elif op == OP_ROLL:  # Game.roll in the ROLL phase
                    S[F_ROLLS, b] += 1
                    st[S_ROLLS] += 1
                    kind = roll_kind[rid]
                    if kind == K_OK:
                        S[F_RID, b] = rid
                        S[F_PHASE, b] = PH_DECIDE
                        break
                    p = S[F_CURRENT, b]
                    if kind == K_INSTANT:
                        st[S_INSTANT] += 1
                        winner = p
                        op = OP_FINISH
                    elif kind == K_LOSE_ALL:
                        st[S_LOSE_ALL] += 1
                        PS[P_SCORE, b, p] = 0
                        bust, pigd, pigt, trig = False, 0, 0, False
                        op = OP_END
                    elif kind == K_ZILCH:
                        st[S_ZILCH] += 1
                        S[F_TT, b] += rc[RC_ZILCH]
                        S[F_DL, b] = nd
                        mr = _max_rolls(rc[RC_MAXROLLS], rc[RC_END], S[F_FINAL, b], p, S[F_TRIGGER, b])
                        if rc[RC_EXACT] != 0 and PS[P_SCORE, b, p] + S[F_TT, b] > target:
                            op = OP_OVERSHOOT
                        elif mr == 0 or S[F_ROLLS, b] < mr:
                            op = OP_ADVANCE
                        else:
                            op = OP_CLOSE
                    else:
                        st[S_BUSTS] += 1
                        nb = PS[P_BUSTS, b, p] + 1
                        if rc[RC_PEN] != 0 and nb >= rc[RC_PENAFTER]:
                            PS[P_SCORE, b, p] -= min(rc[RC_PEN], PS[P_SCORE, b, p])
                            nb = 0
                            st[S_PENALTIES] += 1
                        PS[P_BUSTS, b, p] = nb
                        PS[P_GBUSTS, b, p] += 1
                        bust, pigd, pigt, trig = True, 0, 0, False
                        op = OP_END
                elif op == OP_ORDER:  # Game._order_roll: one die per contender, in seat order
                    S[F_ORDERN, b] += 1
                    top = 0
                    j = 0
                    for q in range(P):
                        if PS[P_CONTENDER, b, q] != 0:
                            top = max(top, faces[j])
                            j += 1
                    j = 0
                    n = 0
                    last = 0
                    for q in range(P):
                        if PS[P_CONTENDER, b, q] != 0:
                            if faces[j] == top:
                                n += 1
                                last = q
                            else:
                                PS[P_CONTENDER, b, q] = 0
                            j += 1
                    if n == 1:
                        S[F_CURRENT, b] = last
                        op = OP_START
                    else:
                        op = OP_ADVANCE
                elif op == OP_CLOSE:  # Game._close_turn: bank if allowed, else forfeit
                    p = S[F_CURRENT, b]
                    total = S[F_TT, b]
                    bust, pigd, pigt, trig = False, 0, 0, False
                    op = OP_END
                    if _bankable(
                        total,
                        PS[P_ONBOARD, b, p],
                        PS[P_SCORE, b, p],
                        rc[RC_ENTRY],
                        rc[RC_MINBANK],
                        rc[RC_EXACT],
                        target,
                    ):
                        sc = PS[P_SCORE, b, p] + total
                        PS[P_SCORE, b, p] = sc
                        PS[P_ONBOARD, b, p] = 1
                        PS[P_GBANKED, b, p] += total
                        st[S_BANKS] += 1
                        st[S_POINTS] += total
                        if rc[RC_PIGGY] != 0:
                            pigd = S[F_DL, b]
                            pigt = total
                        if sc >= target and PS[P_REACHED, b, p] < 0:
                            PS[P_REACHED, b, p] = S[F_NREACHED, b]
                            S[F_NREACHED, b] += 1
                        if sc >= target and (rc[RC_EXACT] == 0 or sc == target):
                            if rc[RC_END] == 2:  # immediate
                                winner = p
                                op = OP_FINISH
                            elif S[F_FINAL, b] == 0:
                                S[F_FINAL, b] = 1
                                S[F_TRIGGER, b] = p
                                S[F_FLEFT, b] = P - 1
                                trig = True
                    else:
                        st[S_STOPS] += 1
                elif op == OP_OVERSHOOT:  # Game._overshoot
                    st[S_OVERSHOOTS] += 1
                    if rc[RC_EXACT] == 2:  # to_lowest: the lowest other player, first in turn order on a tie
                        p = S[F_CURRENT, b]
                        to = (p + 1) % P
                        for k in range(2, P):
                            q = (p + k) % P
                            if PS[P_SCORE, b, q] < PS[P_SCORE, b, to]:
                                to = q
                        if PS[P_SCORE, b, to] + S[F_TT, b] < target:  # a gift reaching the target is lost
                            PS[P_SCORE, b, to] += S[F_TT, b]
                    bust, pigd, pigt, trig = False, 0, 0, False
                    op = OP_END
                elif op == OP_END:  # Game._end_turn
                    p = S[F_CURRENT, b]
                    if not bust:
                        PS[P_BUSTS, b, p] = 0
                    S[F_PIGD, b] = pigd
                    S[F_PIGT, b] = pigt
                    S[F_RID, b] = -1
                    op = OP_START
                    if S[F_FINAL, b] != 0:
                        if not trig:
                            S[F_FLEFT, b] -= 1
                        if S[F_FLEFT, b] <= 0:
                            winner = -1
                            op = OP_FINISH
                    if op == OP_START:
                        S[F_CURRENT, b] = (p + 1) % P
                elif op == OP_START:  # Game._start_turn
                    S[F_TT, b] = 0
                    S[F_DL, b] = nd
                    S[F_ROLLS, b] = 0
                    S[F_TURN, b] += 1
                    PS[P_TURNS, b, S[F_CURRENT, b]] += 1
                    S[F_PHASE, b] = PH_PIGGY if S[F_PIGD, b] > 0 else PH_ROLL
                    st[S_TURNS] += 1
                    op = OP_ADVANCE
                elif op == OP_FINISH:  # Game._finish; winner -1: by the scores
                    best = PS[P_SCORE, b, 0]
                    for q in range(1, P):
                        best = max(best, PS[P_SCORE, b, q])
                    if winner < 0:
                        if rc[RC_TIE] == 0:  # the leader who reached the target first
                            nr = S[F_NREACHED, b]
                            bk = 1 << 30
                            for q in range(P):
                                if PS[P_SCORE, b, q] == best:
                                    k = PS[P_REACHED, b, q] if PS[P_REACHED, b, q] >= 0 else nr + q
                                    if k < bk:
                                        bk = k
                                        winner = q
                        else:
                            nlead = 0
                            for q in range(P):
                                nlead += PS[P_SCORE, b, q] == best
                            if nlead > 1:
                                st[S_SHARED] += 1
                    st[S_GAMES] += 1
                    # A slot can finish twice in one call (an instant win on the new game's first
                    # roll): it reports the first game, the one its action went into.
                    first = done[b] == 0
                    done[b] += 1
                    for q in range(P):
                        w = (q == winner) if winner >= 0 else (PS[P_SCORE, b, q] == best)
                        if w:
                            st[S_WINS + q] += 1
                        if first:
                            PS[P_WINNER, b, q] = w
                            PS[P_FINAL, b, q] = PS[P_SCORE, b, q]
                    if rc[RC_AUTORESET] != 0:
                        op = OP_RESET
                    else:
                        S[F_PHASE, b] = PH_OVER
                        S[F_RID, b] = -1
                        break
                else:  # OP_RESET: a new game in the slot
                    for q in range(P):
                        PS[P_SCORE, b, q] = 0
                        PS[P_ONBOARD, b, q] = 0
                        PS[P_BUSTS, b, q] = 0
                        PS[P_REACHED, b, q] = -1
                        PS[P_CONTENDER, b, q] = 1
                        PS[P_TURNS, b, q] = 0
                        PS[P_GBUSTS, b, q] = 0
                        PS[P_GBANKED, b, q] = 0
                    PS[P_SCORE, b, 1] = rc[RC_KOMI]
                    S[F_GAME, b] += 1
                    S[F_ORDERN, b] = 0
                    S[F_CURRENT, b] = 0
                    S[F_TURN, b] = 0
                    S[F_TT, b] = 0
                    S[F_DL, b] = nd
                    S[F_ROLLS, b] = 0
                    S[F_RID, b] = -1
                    S[F_FINAL, b] = 0
                    S[F_FLEFT, b] = 0
                    S[F_TRIGGER, b] = -1
                    S[F_PIGD, b] = 0
                    S[F_PIGT, b] = 0
                    S[F_NREACHED, b] = 0
                    if rc[RC_HIGHEST] != 0:
                        S[F_PHASE, b] = PH_ORDER
                        op = OP_ADVANCE
                    else:
                        op = OP_START


@njit(cache=True, nogil=True, inline="always")
def _can_bank(total, on_board, score, hot, can_roll, rc):
    if not _bankable(total, on_board, score, rc[RC_ENTRY], rc[RC_MINBANK], rc[RC_EXACT], rc[RC_TARGET]):
        return False
    return not (rc[RC_MANDATORY] != 0 and can_roll and hot)


def k_first_illegal(ix, actions, S, PS, rc, keep_pts, C):
    """Position in ``ix`` of the first game whose action is illegal, or -1."""
    n_ix = len(ix)
    bad = np.full(C, n_ix, np.int64)
    for c in prange(C):
        for i in range(c * n_ix // C, (c + 1) * n_ix // C):
            b = ix[i]
            a = actions[b]
            ph = S[F_PHASE, b]
            ok = False
            if ph == PH_PIGGY:
                ok = a == 128 or a == 129
            elif ph == PH_DECIDE and a >= 0 and a < 128:
                m = a & 63
                pts = keep_pts[S[F_RID, b], m]
                if pts >= 0:
                    p = S[F_CURRENT, b]
                    mr = _max_rolls(rc[RC_MAXROLLS], rc[RC_END], S[F_FINAL, b], p, S[F_TRIGGER, b])
                    can_roll = mr == 0 or S[F_ROLLS, b] < mr
                    if a & 64:
                        ok = (not can_roll) or _can_bank(
                            S[F_TT, b] + pts,
                            PS[P_ONBOARD, b, p],
                            PS[P_SCORE, b, p],
                            POPCOUNT[m] == S[F_DL, b],
                            can_roll,
                            rc,
                        )
                    else:
                        ok = can_roll
            if not ok:
                bad[c] = i
                break
    first = bad.min()
    return -1 if first == n_ix else first


def k_actions(ix, S, PS, rc, keep_pts, keep_list, keep_cnt, u, out_mask, out_act, C, want_mask):
    """Legal-action masks (want_mask) or one uniformly random legal action (u) per game of ix."""
    n_ix = len(ix)
    for c in prange(C):
        row = np.zeros(32, np.int64)
        for i in range(c * n_ix // C, (c + 1) * n_ix // C):
            b = ix[i]
            ph = S[F_PHASE, b]
            k = 0
            if ph == PH_DECIDE:
                rid = S[F_RID, b]
                p = S[F_CURRENT, b]
                mr = _max_rolls(rc[RC_MAXROLLS], rc[RC_END], S[F_FINAL, b], p, S[F_TRIGGER, b])
                can_roll = mr == 0 or S[F_ROLLS, b] < mr
                tt = S[F_TT, b]
                on = PS[P_ONBOARD, b, p]
                score = PS[P_SCORE, b, p]
                dl = S[F_DL, b]
                for j in range(keep_cnt[rid]):
                    m = keep_list[rid, j]
                    if can_roll:
                        row[k] = m
                        k += 1
                    if not can_roll or _can_bank(tt + keep_pts[rid, m], on, score, POPCOUNT[m] == dl, can_roll, rc):
                        row[k] = m | 64
                        k += 1
            elif ph == PH_PIGGY:
                row[0] = 128
                row[1] = 129
                k = 2
            if want_mask:
                out_mask[b, :] = False
                for j in range(k):
                    out_mask[b, row[j]] = True
            else:
                out_act[b] = row[min(int(u[b] * k), k - 1)] if k > 0 else 0


# Every batch kernel is compiled twice: serial, and parallel over C chunks of the batch. On
# a small shared machine a parallel region waits for its slowest thread, so one busy core
# can make the threaded kernels slower than the serial ones; threads=1 picks the serial set.
_KERNELS = ("k_run", "k_first_illegal", "k_actions")
SERIAL = {k: njit(cache=True, nogil=True)(globals()[k]) for k in _KERNELS}
PARALLEL = {k: njit(cache=True, nogil=True, parallel=True)(globals()[k]) for k in _KERNELS}


class NumbaCore:
    def __init__(self, S, PS, ta: TableArrays, rc, stats, done, rng, threads: int | None):
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1
        ):
            raise ValueError(f"threads = {threads!r}: give a positive integer (default 1)")
        most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set at import from the environment
        if threads is not None and threads > most:
            raise ValueError(
                f"threads = {threads}: numba runs at most {most} threads here (set NUMBA_NUM_THREADS to allow more)"
            )
        self.S, self.PS, self.rc, self.stats, self.done, self.rng = S, PS, rc, stats, done, rng
        self.chunks = int(threads or 1)
        self.k = SERIAL if self.chunks == 1 else PARALLEL
        self.st2 = np.zeros((self.chunks, len(stats)), np.int64)
        self.keep_list, self.keep_cnt = ta.keep_list, ta.keep_cnt
        self.keep_pts = ta.keep_pts.astype(np.int64)
        self.roll_kind = ta.roll_kind.astype(np.int64)
        self.key_to_roll = ta.key_to_roll.astype(np.int64)
        self._i0 = np.zeros(0, np.int64)
        self._all = np.arange(S.shape[1], dtype=np.int64)
        self._f0 = np.zeros((0, MAX_FACES), np.int64)
        self._u0 = np.zeros(0, np.float64)
        self._m0 = np.zeros((0, 0), np.bool_)

    def _run(self, ix, mode, actions=None, rids=None, faces=None, stream=None, cur=None):
        self.k["k_run"](
            ix,
            mode,
            self._i0 if actions is None else actions,
            self._i0 if rids is None else rids,
            self._f0 if faces is None else faces,
            self.S,
            self.PS,
            self.rc,
            self.st2,
            self.done,
            self.rng,
            self.keep_pts,
            self.roll_kind,
            self.key_to_roll,
            self._i0 if stream is None else stream,
            self._i0 if cur is None else cur,
        )
        self.stats += self.st2.sum(axis=0)
        self.st2[:] = 0

    def reset(self, ix):
        self._run(ix, MODE_RESET)

    def advance(self, ix):
        self._run(ix, MODE_ADVANCE)

    def step(self, ix, a):
        self._run(ix, MODE_STEP, actions=a)

    def apply(self, ix, a):
        self._run(ix, MODE_APPLY, actions=a)

    def roll(self, ix, rid):
        self._run(ix, MODE_ROLL, rids=rid.astype(np.int64))

    def order(self, ix, faces):
        self._run(ix, MODE_ROLL, faces=np.ascontiguousarray(faces, np.int64))

    def run_stream(self, ix, mode, a, stream, cur):
        """Step (MODE_STEP_STREAM) or advance (MODE_ADVANCE_STREAM) with dice from a stream."""
        self._run(ix, mode, actions=a, stream=stream, cur=cur)

    def first_illegal(self, ix, a) -> int:
        return int(self.k["k_first_illegal"](ix, a, self.S, self.PS, self.rc, self.keep_pts, self.chunks))

    def legal_mask(self, out):
        self.k["k_actions"](
            self._all,
            self.S,
            self.PS,
            self.rc,
            self.keep_pts,
            self.keep_list,
            self.keep_cnt,
            self._u0,
            out,
            self._i0,
            self.chunks,
            True,
        )

    def random_actions(self, u, out, ix=None):
        self.k["k_actions"](
            self._all if ix is None else ix,
            self.S,
            self.PS,
            self.rc,
            self.keep_pts,
            self.keep_list,
            self.keep_cnt,
            u,
            self._m0,
            out,
            self.chunks,
            False,
        )
