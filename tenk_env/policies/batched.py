"""Batched agents: one call decides for many games of a :class:`~tenk_env.vector.BatchedGame`.

The batched form of the :class:`~tenk_env.policies.base.Policy` protocol is :class:`BatchedPolicy`:
``act(engine, games, rng, out)`` writes the action (``keep_mask | 64 * end_turn``, or
128 / 129 for a piggyback choice) of the seat to move in each game of ``games``. Agents
read the engine's state arrays and the shared scoring tables, never a Python object per
game:

* ``hold:N``, ``greedy:N``, ``dicenow``, ``breakeven``: the heuristic bots of
  :mod:`tenk_env.policies.heuristic`, vectorised (one compiled loop over the games). They take the
  same decision as the scalar bots in every state (tests/core/test_vector.py), floating-point
  comparisons included: the worths are computed with the same operations in the same order.
* ``maxscore``: :func:`tenk_env.solve.policy.pick` over the turn solver's value table, in
  one compiled loop, with pick's comparisons and tie-break (``optimal`` has no batched
  form: its value tables depend on the scores and are solved as games reach them).
* ``random``: a uniformly random legal action.
* a :class:`~tenk_env.policies.ppo.PPOAgent` (``ppo:PATH``): one forward pass for all the games.
* any other :class:`~tenk_env.policies.base.Policy`: asked game by game through
  :meth:`BatchedGame.to_game` (:class:`tenk_env.registry.ScalarPolicyAdapter`: correct, but
  at scalar speed).

:func:`batched_form` is this package's batcher, registered with :mod:`tenk_env.registry`
through the ``tenk.batched`` entry point; :func:`batched_agent` (the registry's
:func:`~tenk_env.registry.make_batched`) turns a spec or a Policy into a batched agent.
:func:`tenk_env.evaluation.match.play_deals_batched` plays the deals of matches and tournaments with
them. :class:`FusedOpponents` plays the bots inside the single-game envs' compiled step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba.core import types
from numba.experimental import structref

from tenk_env.jit import njit
from tenk_env.policies.base import RandomAgent
from tenk_env.policies.heuristic import BreakEvenAgent, DiceNowAgent, GreedyAgent, HoldAgent, context
from tenk_env.policies.optimal import MaxScoreAgent, turn_solution
from tenk_env.registry import BatchedPolicy, ScalarPolicyAdapter, make_batched
from tenk_env.rules import Ruleset
from tenk_env.solve.kernels.rules import better_keep, ends_turn
from tenk_env.vector import BatchedGame
from tenk_env.vector.layout import (
    F_CURRENT,
    F_DL,
    F_FINAL,
    F_PHASE,
    F_PIGD,
    F_PIGT,
    F_RID,
    F_ROLLS,
    F_TRIGGER,
    F_TT,
    P_BUSTS,
    P_ONBOARD,
    P_SCORE,
    PH_DECIDE,
    PH_PIGGY,
    POPCOUNT,
    RC_END,
    RC_MAXROLLS,
    RC_P,
    table_arrays,
)
from tenk_env.vector.nb_backend import MODE_ADVANCE_STREAM, MODE_STEP_STREAM
from tenk_env.vector.obs import encode_batch
from tenk_env.vector.single import NEED_DICE, TO_OTHER, SingleGame, entry_point, k_single

__all__ = [
    "BatchedPolicy",
    "BatchedHeuristic",
    "BatchedMaxScore",
    "BatchedRandom",
    "BatchedPPO",
    "ScalarPolicyAdapter",
    "batched_form",
    "batched_agent",
]


# ---------------------------------------------------------------------- heuristic bots
HOLD, GREEDY, DICENOW, BREAKEVEN = 0, 1, 2, 3
_NEG = -math.inf
# per-ruleset constants, in this order, as float64 (all exact: small integers)
(C_N, C_TARGET, C_ENTRY, C_MINBANK, C_MANDATORY, C_IMMEDIATE, C_EXACT, C_LATE, C_FAR) = range(9)


@njit(cache=True, nogil=True)
def _bankable(c, entering, score, t2, hot, last_roll):
    """heuristic._bankable"""
    if hot and c[C_MANDATORY] != 0 and not last_roll:
        return False
    return (((not entering) or t2 >= c[C_ENTRY]) and t2 >= c[C_MINBANK]) or (
        c[C_EXACT] != 0 and score + t2 == c[C_TARGET]
    )


@njit(cache=True, nogil=True)
def _can_bank(c, on_board, score, t2, hot, can_roll):
    """Game.options' may-bank, for a turn total t2 after a keep (hot: it takes every die)."""
    ok = ((on_board or t2 >= c[C_ENTRY]) and t2 >= c[C_MINBANK]) or (c[C_EXACT] != 0 and score + t2 == c[C_TARGET])
    return ok and not (hot and c[C_MANDATORY] != 0 and can_roll)


@njit(cache=True, nogil=True)
def _finishes(c, score, t2):
    tot = score + t2
    if c[C_EXACT] != 0:
        return tot == c[C_TARGET]
    return c[C_IMMEDIATE] != 0 and tot >= c[C_TARGET]


@njit(cache=True, nogil=True)
def _max_rolls(rc, S, b, p):
    """Game.max_rolls: rolls allowed in seat p's turn in game b (0: unlimited)."""
    if rc[RC_END] == 1 and S[F_FINAL, b] != 0 and p != S[F_TRIGGER, b]:
        return 1
    return rc[RC_MAXROLLS]


@njit(cache=True, nogil=True)
def _bot_kernel(ix, kind, bar, S, PS, rc, keep_pts, keep_list, keep_cnt, bust, mean, c, out):
    N = int(c[C_N])
    P = rc[RC_P]
    for i in range(len(ix)):
        b = ix[i]
        ph = S[F_PHASE, b]
        if ph == PH_PIGGY:  # heuristic.take_piggyback
            d = S[F_PIGD, b]
            out[b] = 128 if (1.0 - bust[d]) * S[F_PIGT, b] + mean[d] > mean[N] else 129
            continue
        if ph != PH_DECIDE:
            out[b] = 0
            continue
        # heuristic.situation
        p = S[F_CURRENT, b]
        total = S[F_TT, b]
        dice = S[F_DL, b]
        score = PS[P_SCORE, b, p]
        leader = -(1 << 40)
        for q in range(P):
            if q != p and PS[P_SCORE, b, q] > leader:
                leader = PS[P_SCORE, b, q]
        entering = c[C_ENTRY] > 0 and PS[P_ONBOARD, b, p] == 0
        mr = _max_rolls(rc, S, b, p)
        last_roll = not (mr == 0 or S[F_ROLLS, b] < mr)
        final_turn = S[F_FINAL, b] != 0 and p != S[F_TRIGGER, b]
        rid = S[F_RID, b]
        nk = keep_cnt[rid]
        exact = c[C_EXACT] != 0
        km = -1
        end = False
        if kind == HOLD or kind == GREEDY or last_roll:
            # hold: (no overshoot, points, dice); greedy: (no overshoot, dice, points);
            # last roll (dicenow, breakeven): _max_points. The first maximum wins (mask order).
            by_dice = kind == GREEDY
            k0 = k1 = k2 = -1
            for j in range(nk):
                m = keep_list[rid, j]
                pts = keep_pts[rid, m]
                n = POPCOUNT[m]
                a0 = 0 if (exact and score + total + pts > c[C_TARGET]) else 1
                a1 = n if by_dice else pts
                a2 = pts if by_dice else n
                if km < 0 or (a0, a1, a2) > (k0, k1, k2):
                    km, k0, k1, k2 = m, a0, a1, a2
            t2 = total + keep_pts[rid, km]
            if last_roll and kind != HOLD and kind != GREEDY:
                end = True
            else:
                end = t2 >= bar or last_roll or _finishes(c, score, t2)
        elif kind == DICENOW:
            kw = 0.0
            kp = kn = 0
            for j in range(nk):
                m = keep_list[rid, j]
                pts = keep_pts[rid, m]
                n = POPCOUNT[m]
                t2 = total + pts
                r = dice - n
                if exact and score + t2 > c[C_TARGET]:
                    w = _NEG
                    e = True
                else:
                    # heuristic._dicenow_banks
                    if _finishes(c, score, t2) or (final_turn and score + t2 > leader):
                        banks = True
                    elif final_turn or r == 0:
                        banks = False
                    elif entering:
                        banks = t2 >= c[C_ENTRY]
                    else:
                        nbar = 300 if r <= 3 else (1000 if r == 4 else 2500)
                        if nbar < 600 and leader > c[C_LATE] and leader - score >= c[C_FAR]:
                            nbar = 600
                        banks = t2 >= nbar
                    if banks and _bankable(c, entering, score, t2, r == 0, last_roll):
                        w = float(t2)
                        e = True
                    else:
                        n2 = r if r > 0 else N
                        w = t2 * (1.0 - bust[n2]) + mean[n2]
                        e = False
                if km < 0 or (w, pts, n) > (kw, kp, kn):
                    km, kw, kp, kn, end = m, w, pts, n, e
        else:  # BREAKEVEN
            rk = bk = wk = -1
            rw = 0.0
            rn = bp = bn = wp = wn = 0
            for j in range(nk):
                m = keep_list[rid, j]
                pts = keep_pts[rid, m]
                n = POPCOUNT[m]
                t2 = total + pts
                if exact and score + t2 > c[C_TARGET]:
                    continue
                r = dice - n
                hot = r == 0
                kk = pts + mean[r if r > 0 else N]
                if rk < 0 or (kk, n) > (rw, rn):
                    rk, rw, rn = m, kk, n
                if not _bankable(c, entering, score, t2, hot, last_roll):
                    continue
                if _finishes(c, score, t2) or (final_turn and score + t2 > leader):
                    if wk < 0 or (pts, n) > (wp, wn):
                        wk, wp, wn = m, pts, n
                elif not hot and (bk < 0 or (pts, n) > (bp, bn)):
                    bk, bp, bn = m, pts, n
            if wk >= 0:
                km, end = wk, True
            elif rk < 0:  # every keep overshoots the exact target
                km, end = keep_list[rid, 0], True
            elif final_turn or bk < 0 or rn == dice:
                km, end = rk, False
            elif entering:
                km, end = bk, True
            else:
                n2 = (dice - rn) if dice - rn > 0 else N
                R = total + keep_pts[rid, rk]
                w = 1.0  # heuristic.breakeven_weight
                if max(score, leader) > c[C_LATE]:
                    if leader - score >= c[C_FAR]:
                        w = 0.5
                    elif score - leader >= c[C_FAR]:
                        w = 2.0
                if total + bp >= R + mean[n2] - w * bust[n2] * R:
                    km, end = bk, True
                else:
                    km, end = rk, False
        # the legality net of heuristic._Heuristic.decide (Game.options)
        can_roll = not last_roll
        can_bank = _can_bank(
            c, PS[P_ONBOARD, b, p] != 0, score, total + keep_pts[rid, km], POPCOUNT[km] == dice, can_roll
        )
        if end:
            if not can_bank and can_roll:
                end = False
        elif not can_roll:
            end = True
        out[b] = km | 64 if end else km


class _Tabs:
    """The arrays a bot kernel reads, built once per ruleset (``Tables.derived``)."""

    def __init__(self, tables: Any):
        ta = table_arrays(tables.rules)
        self.keep_list, self.keep_cnt = ta.keep_list, ta.keep_cnt
        self.keep_pts = ta.keep_pts.astype(np.int64)
        ctx = context(tables)
        self.bust = np.array(ctx.bust, np.float64)
        self.mean = np.array(ctx.mean, np.float64)
        c = np.zeros(9, np.float64)
        c[C_N], c[C_TARGET], c[C_ENTRY], c[C_MINBANK] = ctx.num_dice, ctx.target, ctx.entry, ctx.min_bank
        c[C_MANDATORY], c[C_IMMEDIATE], c[C_EXACT] = ctx.mandatory_hot, ctx.immediate, ctx.exact
        c[C_LATE], c[C_FAR] = ctx.late, ctx.far
        self.c = c


def _tabs(engine: BatchedGame) -> _Tabs:
    return engine.tables.derived("vector.bots", _Tabs)


# ---------------------------------------------------------------------- inside the single-game envs
# On the numba engine, tenk_env.env.TenThousandEnv steps one game with
# tenk_env.vector.single.SingleGame. Asking a bot's batched form for each decision from Python
# would cost two compiled calls per decision, more than the rest of the step; FusedOpponents
# plays every seat held by a bot inside one call instead (k_drive: the single-game step, then
# the bot's kernel and the step again, until the learner or a seat played from Python is to
# move). The env finds it through the forms' ``driver`` attribute: tenk_env never imports agents.
#: a seat's kind in k_drive besides the heuristic kinds of tenk_env.policies.batched: maxscore; not a
#: compiled bot (the learner, or an opponent asked from Python)
MAXSCORE, NONE = 10, -1
# k_drive's arguments keep one type: maxscore's tables where no seat plays maxscore
_NO_SOLVER = (np.zeros((1, 64), np.int64), np.zeros((1, 1, 1, 1, 1)), 1)


@structref.register
class BotStateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class BotState(structref.StructRefProxy):
    """What :func:`k_drive` reads besides the game: each seat's bot and the bots' tables, in
    one argument (see tenk_env.vector.single.SingleState for why)."""


structref.define_proxy(BotState, BotStateType, ["kinds", "bars", "bust", "mean", "c", "keep_rank", "values", "unit"])


@njit(cache=True, nogil=True)
def k_drive(mode, action, seat, st, bt):
    """k_single, then every decision of a seat with a compiled bot (kinds[seat] >= 0), until
    another seat is to move, the game ends or the dice stream runs dry."""
    ix0 = np.zeros(1, np.int64)
    out = np.zeros(1, np.int64)
    S, PS, rc = st.S, st.PS, st.rc
    code = k_single(mode, action, seat, st)
    while code == TO_OTHER:
        p = S[F_CURRENT, 0]
        kind = bt.kinds[p]
        if kind == NONE:
            break
        if kind == MAXSCORE:
            _maxscore_kernel(
                ix0, S, PS, rc, st.keep_pts, st.keep_list, st.keep_cnt, bt.keep_rank, bt.values, bt.unit, bt.c, out
            )
        else:
            _bot_kernel(
                ix0, kind, bt.bars[p], S, PS, rc, st.keep_pts, st.keep_list, st.keep_cnt, bt.bust, bt.mean, bt.c, out
            )
        code = k_single(MODE_STEP_STREAM, out[0], seat, st)
    return code


class FusedOpponents:
    """Plays the compiled bots' seats of a :class:`SingleGame` inside its compiled step.

    ``seat_forms(forms)`` says which batched form sits in each seat (None: the learner, or an
    opponent the env asks from Python); ``run`` is :meth:`SingleGame.run` with those seats'
    decisions made on the way.
    """

    def __init__(self, core: SingleGame):
        self.core = core
        e = core.engine
        t = _tabs(e)
        self.kinds = np.full(core.n_players, NONE, np.int64)
        self.bars = np.zeros(core.n_players, np.int64)
        self._bots = (t.bust, t.mean, t.c)
        self._solver: tuple | None = None
        self._bt: BotState | None = None

    def seat_forms(self, forms: Sequence[Any]) -> None:
        for q, f in enumerate(forms):
            if getattr(f, "driver", None) is not FusedOpponents:
                self.kinds[q] = NONE
                continue
            self.kinds[q], self.bars[q] = f.kind, f.bar
            if f.kind == MAXSCORE and (self._solver is None or self._solver is _NO_SOLVER):
                st = self.core.engine.tables.derived("vector.maxscore", _SolverTabs)
                self._solver = (st.keep_rank, st.values, st.unit)
        if self._solver is None:
            self._solver = _NO_SOLVER
        if self._bt is None or self._bt_solver is not self._solver:
            self._bt, self._bt_solver = BotState(self.kinds, self.bars, *self._bots, *self._solver), self._solver
            # seat -1 stops at once at the decision the game waits at: no dice are taken
            self._k = entry_point(k_drive, MODE_ADVANCE_STREAM, -1, -1, self.core.state, self._bt)
        self._st = self.core.state  # new with every new dice stream

    def run(self, action: int, seat: int) -> int:
        st = self._st
        code = self._k(MODE_STEP_STREAM if action >= 0 else MODE_ADVANCE_STREAM, action, seat, st, self._bt)
        while code == NEED_DICE:
            self.core.dice.refill()
            code = self._k(MODE_ADVANCE_STREAM, -1, seat, st, self._bt)
        return code


class _BatchedForm:
    """The batched form of a scalar agent (``self.scalar``): it goes by the scalar agent's
    name and plays the rulesets the scalar agent plays."""

    def __init__(self, scalar: Any):
        self.scalar = scalar
        self.name = scalar.name

    def check(self, rules: Ruleset, n_players: int) -> None:
        self.scalar.check(rules, n_players)

    def __repr__(self) -> str:
        return f"<batched agent {self.name}>"


class BatchedHeuristic(_BatchedForm):
    """A heuristic bot of :mod:`tenk_env.policies.heuristic` over a batch (see the module docstring)."""

    KINDS = {HoldAgent: HOLD, GreedyAgent: GREEDY, DiceNowAgent: DICENOW, BreakEvenAgent: BREAKEVEN}
    driver = FusedOpponents

    def __init__(self, scalar: Any):
        super().__init__(scalar)
        self.kind = self.KINDS[type(scalar)]
        self.bar = int(getattr(scalar, "bar", 0))

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        t = _tabs(engine)
        _bot_kernel(
            np.asarray(games, np.int64),
            self.kind,
            self.bar,
            engine._S,
            engine._PS,
            engine._rc,
            t.keep_pts,
            t.keep_list,
            t.keep_cnt,
            t.bust,
            t.mean,
            t.c,
            out,
        )


@njit(cache=True, nogil=True)
def _maxscore_kernel(ix, S, PS, rc, keep_pts, keep_list, keep_cnt, keep_rank, values, unit, c, out):
    """MaxScoreAgent over a batch: tenk_env.solve.policy.pick with the turn solver's values,
    the same comparisons in the same order (ties go to the first keep by (-points, dice))."""
    N = int(c[C_N])
    K = values.shape[0]
    cap = values.shape[4] - 1
    for i in range(len(ix)):
        b = ix[i]
        ph = S[F_PHASE, b]
        p = S[F_CURRENT, b]
        k = min(PS[P_BUSTS, b, p], K - 1)
        onb = 1 if PS[P_ONBOARD, b, p] != 0 else 0
        if ph == PH_PIGGY:  # MaxScoreAgent.piggyback
            T = S[F_PIGT, b] // unit
            out[b] = 128 if T > cap or values[k, onb, 0, S[F_PIGD, b], T] > values[k, onb, 0, N, 0] else 129
            continue
        if ph != PH_DECIDE:
            out[b] = 0
            continue
        mr = _max_rolls(rc, S, b, p)
        can_roll = mr == 0 or S[F_ROLLS, b] < mr
        r2i = 0 if mr == 0 or not can_roll else S[F_ROLLS, b]
        total = S[F_TT, b]
        T0 = total // unit
        dice = S[F_DL, b]
        score = PS[P_SCORE, b, p]
        rid = S[F_RID, b]
        best, best_c, best_rank, best_end = -1, _NEG, 0, False
        for j in range(keep_cnt[rid]):
            m = keep_list[rid, j]
            pts = keep_pts[rid, m]
            n = POPCOUNT[m]
            T2 = T0 + pts // unit
            n2 = dice - n if dice > n else N
            cv = _NEG
            end = False
            if can_roll and T2 <= cap:
                cv = values[k, onb, r2i, n2, T2]
            if _can_bank(c, onb == 1, score, total + pts, n == dice, can_roll):
                ce = float(T2 * unit)
                if ends_turn(ce, cv) or not can_roll:
                    cv, end = ce, True
            elif not can_roll:
                cv, end = 0.0, True
            rank = keep_rank[rid, m]
            # keeps come in the roll's order, not the tie order: a tie goes to the lower rank
            if best < 0 or better_keep(cv, best_c) or (cv == best_c and rank < best_rank):
                best, best_c, best_rank, best_end = m, cv, rank, end
        out[b] = best | 64 if best_end else best


class _SolverTabs:
    """What the maxscore kernel reads besides the bots' arrays: each keep's place in
    pick's order (by points, most first, then dice, fewest first, then the roll's own
    order) and the turn solution."""

    def __init__(self, tables: Any):
        ta = table_arrays(tables.rules)
        self.keep_rank = np.zeros((ta.n_rolls, 64), np.int64)
        for r, info in enumerate(ta.infos):
            for rank, k in enumerate(sorted(info.keeps, key=lambda k: (-k.points, k.n))):
                self.keep_rank[r, k.mask] = rank
        sol = turn_solution(tables.rules)
        self.values = np.ascontiguousarray(sol.values)
        self.unit = int(sol.unit)


class BatchedMaxScore(_BatchedForm):
    """:class:`~tenk_env.policies.optimal.MaxScoreAgent` over a batch (one compiled loop over the games)."""

    driver, kind, bar = FusedOpponents, MAXSCORE, 0

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        t, st = _tabs(engine), engine.tables.derived("vector.maxscore", _SolverTabs)
        _maxscore_kernel(
            np.asarray(games, np.int64),
            engine._S,
            engine._PS,
            engine._rc,
            t.keep_pts,
            t.keep_list,
            t.keep_cnt,
            st.keep_rank,
            st.values,
            st.unit,
            t.c,
            out,
        )


class BatchedRandom:
    """Uniform over the legal actions (piggyback choices included)."""

    name = "random"
    #: draws from the generator it is given (so it draws differently from the scalar agent)
    uses_rng = True

    def check(self, rules: Ruleset, n_players: int) -> None:
        pass

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        engine.random_actions(rng, out, games=games)


class BatchedPPO(_BatchedForm):
    """A :class:`~tenk_env.policies.ppo.PPOAgent`: observations of all the games, one forward pass."""

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        games = np.asarray(games, np.int64)
        if not len(games):
            return
        obs = encode_batch(engine, engine.current[games], games)
        if getattr(self.scalar, "any_rules", False):
            obs = self.scalar.with_rules(obs, engine.rules)
        masks = engine.legal_mask()[games]
        out[games] = self.scalar.act(obs, masks)


def batched_form(agent: Any) -> BatchedPolicy | None:
    """The batched form of one of this package's agents (heuristic bots, maxscore, random,
    PPO), or None: the ``tenk.batched`` entry point, asked by
    :func:`tenk_env.registry.make_batched`."""
    if type(agent) in BatchedHeuristic.KINDS:
        return BatchedHeuristic(agent)
    if type(agent) is RandomAgent:
        return BatchedRandom()
    if type(agent) is MaxScoreAgent:
        return BatchedMaxScore(agent)
    if hasattr(agent, "act") and hasattr(agent, "logits") and hasattr(agent, "meta"):
        return BatchedPPO(agent)
    return None


#: the batched agent for a spec (``"dicenow"``, ``"hold:300"``, ``"ppo:PATH"``...), a scalar
#: Policy or a batched one (returned as is): :func:`tenk_env.registry.make_batched`
batched_agent = make_batched
