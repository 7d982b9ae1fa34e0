"""The NumPy backend: every transition of :class:`tenk_env.game.Game` applied to an
index array of games at once.

Each method mirrors one method of the scalar game (``_start_turn``, ``_close_turn``,
``_end_turn``...) and takes the games it applies to as an int64 index array; a group of
games that takes a different branch is split off with a boolean mask and handed to the
next method. The numba backend (``nb_backend``) is the same machine written per game;
the agreement tests hold both to the scalar engine.
"""

from __future__ import annotations

import numpy as np

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
    K_BUST,
    K_INSTANT,
    K_LOSE_ALL,
    K_OK,
    K_ZILCH,
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
    TableArrays,
)

_ALL_MASKS = np.arange(64)


class NumpyCore:
    #: False: the engine drives the dice rounds (see BatchedGame._advance)
    fused = False

    def __init__(
        self, S: np.ndarray, PS: np.ndarray, ta: TableArrays, rc: np.ndarray, stats: np.ndarray, done: np.ndarray
    ):
        self.S, self.PS, self.ta, self.stats, self.done = S, PS, ta, stats, done
        self.nd = int(rc[RC_ND])
        self.P = int(rc[RC_P])
        self.target = int(rc[RC_TARGET])
        self.entry = int(rc[RC_ENTRY])
        self.min_bank = int(rc[RC_MINBANK])
        self.max_rolls = int(rc[RC_MAXROLLS])
        self.mandatory = bool(rc[RC_MANDATORY])
        self.end = int(rc[RC_END])
        self.exact = int(rc[RC_EXACT])
        self.tie = int(rc[RC_TIE])
        self.pen = int(rc[RC_PEN])
        self.pen_after = int(rc[RC_PENAFTER])
        self.piggy = bool(rc[RC_PIGGY])
        self.highest = bool(rc[RC_HIGHEST])
        self.komi = int(rc[RC_KOMI])
        self.zilch = int(rc[RC_ZILCH])
        self.auto_reset = bool(rc[RC_AUTORESET])
        self.seats = np.arange(self.P)

    # ------------------------------------------------------------------ queries
    def can_roll_again(self, ix: np.ndarray) -> np.ndarray:
        S = self.S
        if self.end == 1:  # one_more_roll: every non-trigger player's final-round turn is one roll
            m = np.where((S[F_FINAL, ix] != 0) & (S[F_CURRENT, ix] != S[F_TRIGGER, ix]), 1, self.max_rolls)
            return (m == 0) | (S[F_ROLLS, ix] < m)
        if self.max_rolls == 0:
            return np.ones(len(ix), bool)
        return S[F_ROLLS, ix] < self.max_rolls

    def bankable(self, ix: np.ndarray, total: np.ndarray, col=lambda v: v) -> np.ndarray:
        """Game._bankable: may the seat to move bank ``total`` (entry threshold, minimum bank,
        and under exact finish a bank landing exactly on the target)?"""
        S, PS = self.S, self.PS
        p = S[F_CURRENT, ix]
        ok = (col(PS[P_ONBOARD, ix, p] != 0) | (total >= self.entry)) & (total >= self.min_bank)
        if self.exact:
            ok |= col(PS[P_SCORE, ix, p]) + total == self.target
        return ok

    def decide_options(self, ix: np.ndarray, masks: np.ndarray | None):
        """(points, can_roll[k], can_bank) of keeping ``masks[k]`` in each game of ``ix``, or
        of every mask 0..63 (arrays (k, 64)) when ``masks`` is None."""
        S = self.S
        rid = S[F_RID, ix]
        if masks is not None:
            pts = self.ta.keep_pts[rid, masks]
            col = lambda v: v  # noqa: E731
        else:
            masks = _ALL_MASKS
            pts = self.ta.keep_pts[rid]
            col = lambda v: v[:, None]  # noqa: E731
        total = col(S[F_TT, ix]) + pts
        can_roll = self.can_roll_again(ix)
        can_bank = self.bankable(ix, total, col)
        if self.mandatory:
            hot = POPCOUNT[masks] == col(S[F_DL, ix])
            can_bank &= ~(hot & col(can_roll))
        return pts, can_roll, can_bank

    def legal_mask(self, out: np.ndarray) -> None:
        S = self.S
        out[:] = False
        dec = np.flatnonzero(S[F_PHASE] == PH_DECIDE)
        if len(dec):
            pts, can_roll, can_bank = self.decide_options(dec, None)
            legal = pts >= 0
            out[dec, :64] = legal & can_roll[:, None]
            out[dec, 64:128] = legal & (can_bank | ~can_roll[:, None])
        if out.shape[1] > 128:
            pig = np.flatnonzero(S[F_PHASE] == PH_PIGGY)
            out[pig, 128:130] = True

    def check(self, ix: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Per game: True where action ``a`` is legal."""
        S = self.S
        ph = S[F_PHASE, ix]
        ok = np.zeros(len(ix), bool)
        pig = ph == PH_PIGGY
        ok[pig] = (a[pig] == 128) | (a[pig] == 129)
        dec = np.flatnonzero((ph == PH_DECIDE) & (a >= 0) & (a < 128))
        if len(dec):
            ad = a[dec]
            pts, can_roll, can_bank = self.decide_options(ix[dec], ad & 63)
            end = (ad & 64) != 0
            ok[dec] = (pts >= 0) & np.where(end, can_bank | ~can_roll, can_roll)
        return ok

    def first_illegal(self, ix: np.ndarray, a: np.ndarray) -> int:
        """Position in ``ix`` of the first game whose action in ``a`` (shape (B,)) is illegal, or -1."""
        if not len(ix):
            return -1
        ok = self.check(ix, a[ix])
        return -1 if ok.all() else int(np.argmin(ok))

    def apply(self, ix: np.ndarray, a: np.ndarray) -> None:
        a = a[ix]
        pig = self.S[F_PHASE, ix] == PH_PIGGY
        if pig.any():
            self.piggyback(ix[pig], a[pig])
            self.act(ix[~pig], a[~pig])
        else:
            self.act(ix, a)

    def random_actions(self, u: np.ndarray, out: np.ndarray, ix: np.ndarray | None = None) -> None:
        if getattr(self, "_rbuf", None) is None:
            self._rbuf = np.zeros((self.S.shape[1], 130 if self.piggy else 128), bool)
        m = self._rbuf
        self.legal_mask(m)
        if ix is not None:
            m, u = m[ix], u[ix]
        cs = np.cumsum(m, axis=1, dtype=np.int32)
        k = (u * cs[:, -1]).astype(np.int32)
        pick = np.argmax(cs > k[:, None], axis=1)
        if ix is None:
            out[:] = pick
        else:
            out[ix] = pick

    # ------------------------------------------------------------------ transitions
    def start_turn(self, ix: np.ndarray) -> None:
        if not len(ix):
            return
        S, PS = self.S, self.PS
        S[F_TT, ix] = 0
        S[F_DL, ix] = self.nd
        S[F_ROLLS, ix] = 0
        S[F_TURN, ix] += 1
        PS[P_TURNS, ix, S[F_CURRENT, ix]] += 1
        S[F_PHASE, ix] = np.where(S[F_PIGD, ix] > 0, PH_PIGGY, PH_ROLL)
        self.stats[S_TURNS] += len(ix)

    def reset(self, ix: np.ndarray) -> None:
        if not len(ix):
            return
        S, PS = self.S, self.PS
        for f in (P_SCORE, P_ONBOARD, P_BUSTS, P_TURNS, P_GBUSTS, P_GBANKED):
            PS[f, ix] = 0
        S[F_GAME, ix] += 1
        PS[P_REACHED, ix] = -1
        PS[P_CONTENDER, ix] = 1
        PS[P_SCORE, ix, 1] = self.komi
        for f in (F_CURRENT, F_TURN, F_TT, F_ROLLS, F_FINAL, F_FLEFT, F_PIGD, F_PIGT, F_NREACHED, F_ORDERN):
            S[f, ix] = 0
        S[F_DL, ix] = self.nd
        S[F_RID, ix] = -1
        S[F_TRIGGER, ix] = -1
        if self.highest:
            S[F_PHASE, ix] = PH_ORDER
        else:
            self.start_turn(ix)

    def finish(self, ix: np.ndarray, winner: np.ndarray | None) -> None:
        """Game over in ``ix``; ``winner`` is the sole winner per game, or None: by score."""
        if not len(ix):
            return
        S, PS = self.S, self.PS
        sc = PS[P_SCORE, ix]
        if winner is None:
            best = sc.max(axis=1)
            lead = sc == best[:, None]
            if self.tie == 0:
                rank = PS[P_REACHED, ix]
                key = np.where(rank >= 0, rank, S[F_NREACHED, ix][:, None] + self.seats)
                winner = np.argmin(np.where(lead, key, 1 << 30), axis=1)
                wins = self.seats[None, :] == winner[:, None]
            else:
                wins = lead
                self.stats[S_SHARED] += int((lead.sum(axis=1) > 1).sum())
        else:
            wins = self.seats[None, :] == winner[:, None]
        self.stats[S_GAMES] += len(ix)
        self.stats[S_WINS : S_WINS + self.P] += wins.sum(axis=0)
        # A slot can finish twice in one call (an instant win on the new game's first roll):
        # the slot reports the first game, the one its actions went into.
        first = self.done[ix] == 0
        PS[P_WINNER, ix[first]] = wins[first]
        PS[P_FINAL, ix[first]] = sc[first]
        self.done[ix] += 1
        if self.auto_reset:
            self.reset(ix)
        else:
            S[F_PHASE, ix] = PH_OVER
            S[F_RID, ix] = -1

    def end_turn(self, ix: np.ndarray, bust: bool, pigd, pigt, trig) -> None:
        if not len(ix):
            return
        S, PS = self.S, self.PS
        if not bust:
            PS[P_BUSTS, ix, S[F_CURRENT, ix]] = 0
        S[F_PIGD, ix] = pigd
        S[F_PIGT, ix] = pigt
        S[F_RID, ix] = -1
        fr = S[F_FINAL, ix] != 0
        if fr.any():
            dec = ix[fr & ~trig]
            S[F_FLEFT, dec] -= 1
            fin = fr & (S[F_FLEFT, ix] <= 0)
            if fin.any():
                self.finish(ix[fin], None)
                ix = ix[~fin]
        S[F_CURRENT, ix] = (S[F_CURRENT, ix] + 1) % self.P
        self.start_turn(ix)

    def close_turn(self, ix: np.ndarray) -> None:
        if not len(ix):
            return
        S, PS, st = self.S, self.PS, self.stats
        p = S[F_CURRENT, ix]
        tot = S[F_TT, ix]
        ok = self.bankable(ix, tot)
        stop = ix[~ok]
        st[S_STOPS] += len(stop)
        self.end_turn(stop, False, 0, 0, np.zeros(len(stop), bool))
        bk, p, tot = ix[ok], p[ok], tot[ok]
        if not len(bk):
            return
        s = PS[P_SCORE, bk, p] + tot
        PS[P_SCORE, bk, p] = s
        PS[P_ONBOARD, bk, p] = 1
        PS[P_GBANKED, bk, p] += tot
        st[S_BANKS] += len(bk)
        st[S_POINTS] += int(tot.sum())
        left = S[F_DL, bk]
        new = (s >= self.target) & (PS[P_REACHED, bk, p] < 0)
        if new.any():
            g = bk[new]
            PS[P_REACHED, g, p[new]] = S[F_NREACHED, g]
            S[F_NREACHED, g] += 1
        hit = s >= self.target
        if self.exact:
            hit &= s == self.target
        trig = np.zeros(len(bk), bool)
        if self.end == 2:  # immediate
            self.finish(bk[hit], p[hit])
            keep = ~hit
        else:
            trig = hit & (S[F_FINAL, bk] == 0)
            g = bk[trig]
            S[F_FINAL, g] = 1
            S[F_TRIGGER, g] = p[trig]
            S[F_FLEFT, g] = self.P - 1
            keep = np.ones(len(bk), bool)
        if self.piggy:
            self.end_turn(bk[keep], False, left[keep], tot[keep], trig[keep])
        else:
            self.end_turn(bk[keep], False, 0, 0, trig[keep])

    def overshoot(self, ix: np.ndarray) -> None:
        if not len(ix):
            return
        S, PS = self.S, self.PS
        self.stats[S_OVERSHOOTS] += len(ix)
        if self.exact == 2:  # to_lowest: the lowest other player, the first in turn order on a tie
            p = S[F_CURRENT, ix]
            order = (p[:, None] + np.arange(1, self.P)[None, :]) % self.P
            sc = np.take_along_axis(PS[P_SCORE, ix], order, axis=1)
            to = order[np.arange(len(ix)), np.argmin(sc, axis=1)]
            s = PS[P_SCORE, ix, to] + S[F_TT, ix]
            gift = s < self.target  # a gift that would reach the target is lost instead
            PS[P_SCORE, ix[gift], to[gift]] = s[gift]
        self.end_turn(ix, False, 0, 0, np.zeros(len(ix), bool))

    def act(self, ix: np.ndarray, a: np.ndarray) -> None:
        """DECIDE: set the keep ``a & 63`` aside, then bank (``a & 64``) or roll on."""
        if not len(ix):
            return
        S, PS = self.S, self.PS
        self.stats[S_DECISIONS] += len(ix)
        m = a & 63
        pts = self.ta.keep_pts[S[F_RID, ix], m]
        S[F_TT, ix] += pts
        dl = S[F_DL, ix] - POPCOUNT[m]
        dl[dl == 0] = self.nd  # hot dice: all dice are back in play
        S[F_DL, ix] = dl
        S[F_RID, ix] = -1
        end = (a & 64) != 0
        if self.exact:
            over = PS[P_SCORE, ix, S[F_CURRENT, ix]] + S[F_TT, ix] > self.target
            self.overshoot(ix[over])
            end &= ~over
            roll = ~over & ~end
        else:
            roll = ~end
        self.close_turn(ix[end])
        S[F_PHASE, ix[roll]] = PH_ROLL

    def piggyback(self, ix: np.ndarray, a: np.ndarray) -> None:
        if not len(ix):
            return
        S = self.S
        self.stats[S_DECISIONS] += len(ix)
        take = ix[a == ACT_TAKE]
        self.stats[S_PIGGY] += len(take)
        S[F_DL, take] = S[F_PIGD, take]
        S[F_TT, take] = S[F_PIGT, take]
        S[F_PIGD, ix] = 0
        S[F_PIGT, ix] = 0
        S[F_PHASE, ix] = PH_ROLL

    def roll(self, ix: np.ndarray, rid: np.ndarray) -> None:
        """ROLL: apply the roll ``rid`` in each game of ``ix``."""
        S, PS, st = self.S, self.PS, self.stats
        S[F_ROLLS, ix] += 1
        st[S_ROLLS] += len(ix)
        kind = self.ta.roll_kind[rid]
        ok = kind == K_OK
        g = ix[ok]
        S[F_RID, g] = rid[ok]
        S[F_PHASE, g] = PH_DECIDE
        if ok.all():
            return
        g = ix[kind == K_INSTANT]
        if len(g):
            st[S_INSTANT] += len(g)
            self.finish(g, S[F_CURRENT, g])
        g = ix[kind == K_LOSE_ALL]
        if len(g):
            st[S_LOSE_ALL] += len(g)
            PS[P_SCORE, g, S[F_CURRENT, g]] = 0
            self.end_turn(g, False, 0, 0, np.zeros(len(g), bool))
        g = ix[kind == K_ZILCH]
        if len(g):
            st[S_ZILCH] += len(g)
            S[F_TT, g] += self.zilch
            S[F_DL, g] = self.nd
            if self.exact:
                over = PS[P_SCORE, g, S[F_CURRENT, g]] + S[F_TT, g] > self.target
                self.overshoot(g[over])
                g = g[~over]
            self.close_turn(g[~self.can_roll_again(g)])
        g = ix[kind == K_BUST]
        if len(g):
            st[S_BUSTS] += len(g)
            p = S[F_CURRENT, g]
            b = PS[P_BUSTS, g, p] + 1
            if self.pen:
                hit = b >= self.pen_after
                if hit.any():
                    gh, ph = g[hit], p[hit]
                    sc = PS[P_SCORE, gh, ph]
                    PS[P_SCORE, gh, ph] = sc - np.minimum(self.pen, sc)
                    b[hit] = 0
                    st[S_PENALTIES] += int(hit.sum())
            PS[P_BUSTS, g, p] = b
            PS[P_GBUSTS, g, p] += 1
            self.end_turn(g, True, 0, 0, np.zeros(len(g), bool))

    def order(self, ix: np.ndarray, faces: np.ndarray) -> None:
        """ORDER: one die per contender, in seat order; the highest die starts."""
        S, PS = self.S, self.PS
        S[F_ORDERN, ix] += 1
        cont = PS[P_CONTENDER, ix] != 0
        pos = np.cumsum(cont, axis=1) - 1
        d = np.where(cont, np.take_along_axis(faces, np.maximum(pos, 0), axis=1), 0)
        top = d.max(axis=1)
        new = cont & (d == top[:, None])
        PS[P_CONTENDER, ix] = new
        one = new.sum(axis=1) == 1
        g = ix[one]
        S[F_CURRENT, g] = np.argmax(new[one], axis=1)
        self.start_turn(g)
