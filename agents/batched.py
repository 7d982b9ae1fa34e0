"""Batched agents: one call decides for many games of a :class:`~tenk_env.vector.BatchedGame`.

The batched form of the :class:`~agents.base.Policy` protocol is :class:`BatchedPolicy`:
``act(engine, games, rng, out)`` writes the action (``keep_mask | 64 * end_turn``, or
128 / 129 for a piggyback choice) of the seat to move in each game of ``games``. Agents
read the engine's state arrays and the shared scoring tables, never a Python object per
game:

* ``hold:N``, ``greedy:N``, ``dicenow``, ``breakeven``: the heuristic bots of
  :mod:`agents.heuristic`, vectorised (one compiled loop over the games). They take the
  same decision as the scalar bots in every state (tests/test_vector.py), floating-point
  comparisons included: the worths are computed with the same operations in the same order.
* ``maxscore``: :func:`tenk_env.solve.policy.pick` over the turn solver's value table, in
  one compiled loop, with pick's comparisons and tie-break (``optimal`` has no batched
  form: its value tables depend on the scores and are solved as games reach them).
* ``random``: a uniformly random legal action.
* a :class:`~agents.ppo.PPOAgent` (``ppo:PATH``): one forward pass for all the games.
* any other :class:`~agents.base.Policy`: asked game by game through
  :meth:`BatchedGame.to_game` (correct, but at scalar speed).

:func:`batched_agent` turns a spec or a Policy into a batched agent;
:func:`play_deals_batched` plays the deals of matches and tournaments on the batched engine
(:func:`agents.match.play_match` and the tournament runner call it). Without numba the
bot loops run as plain Python: same decisions, scalar speed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

import numpy as np

from agents.base import AgentError, Policy, RandomAgent, make_agent
from agents.heuristic import BreakEvenAgent, DiceNowAgent, GreedyAgent, HoldAgent, context
from agents.optimal import MaxScoreAgent
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.vector import BatchedGame
from tenk_env.vector.layout import (
    table_arrays, F_CURRENT, F_DL, F_FINAL, F_PHASE, F_PIGD, F_PIGT, F_RID, F_ROLLS, F_TRIGGER, F_TT, P_ONBOARD,
    P_BUSTS, P_SCORE, PH_DECIDE, PH_PIGGY, POPCOUNT, RC_END, RC_MAXROLLS, RC_P,
)

if TYPE_CHECKING:
    from agents.match import Chunk

try:
    from numba import njit
except ImportError:  # the same loops run as Python
    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["BatchedPolicy", "BatchedHeuristic", "BatchedMaxScore", "BatchedRandom", "BatchedPPO", "ScalarPolicyAdapter",
           "batched_agent", "play_deals_batched", "bench_bot_games"]


@runtime_checkable
class BatchedPolicy(Protocol):
    """The batched form of :class:`~agents.base.Policy`.

    ``act`` is called with the games (int64 indices, ascending) that wait for a decision of
    a seat this agent plays; it writes one action per game into ``out[games]`` (``out`` has
    one entry per slot of the batch). Randomness comes from ``rng`` only.
    """

    name: str

    def check(self, rules: Ruleset, n_players: int) -> None: ...

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None: ...


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
        c[C_EXACT] != 0 and score + t2 == c[C_TARGET])


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
        can_bank = _can_bank(c, PS[P_ONBOARD, b, p] != 0, score, total + keep_pts[rid, km], POPCOUNT[km] == dice,
                             can_roll)
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
    """A heuristic bot of :mod:`agents.heuristic` over a batch (see the module docstring)."""

    KINDS = {HoldAgent: HOLD, GreedyAgent: GREEDY, DiceNowAgent: DICENOW, BreakEvenAgent: BREAKEVEN}

    def __init__(self, scalar: Any):
        super().__init__(scalar)
        self.kind = self.KINDS[type(scalar)]
        self.bar = int(getattr(scalar, "bar", 0))

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        t = _tabs(engine)
        _bot_kernel(np.asarray(games, np.int64), self.kind, self.bar, engine._S, engine._PS, engine._rc,
                    t.keep_pts, t.keep_list, t.keep_cnt, t.bust, t.mean, t.c, out)


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
                if ce >= cv or not can_roll:
                    cv, end = ce, True
            elif not can_roll:
                cv, end = 0.0, True
            rank = keep_rank[rid, m]
            if best < 0 or cv > best_c or (cv == best_c and rank < best_rank):
                best, best_c, best_rank, best_end = m, cv, rank, end
        out[b] = best | 64 if best_end else best


class _SolverTabs:
    """What the maxscore kernel reads besides the bots' arrays: each keep's place in
    pick's order (by points, most first, then dice, fewest first, then the roll's own
    order) and the turn solution."""

    def __init__(self, tables: Any):
        from agents.optimal import _turn_solution

        ta = table_arrays(tables.rules)
        self.keep_rank = np.zeros((ta.n_rolls, 64), np.int64)
        for r, info in enumerate(ta.infos):
            for rank, k in enumerate(sorted(info.keeps, key=lambda k: (-k.points, k.n))):
                self.keep_rank[r, k.mask] = rank
        sol = _turn_solution(tables.rules)
        self.values = np.ascontiguousarray(sol.values)
        self.unit = int(sol.unit)


class BatchedMaxScore(_BatchedForm):
    """:class:`~agents.optimal.MaxScoreAgent` over a batch (one compiled loop over the games)."""

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        t, st = _tabs(engine), engine.tables.derived("vector.maxscore", _SolverTabs)
        _maxscore_kernel(np.asarray(games, np.int64), engine._S, engine._PS, engine._rc, t.keep_pts, t.keep_list,
                         t.keep_cnt, st.keep_rank, st.values, st.unit, t.c, out)


class BatchedRandom:
    """Uniform over the legal actions (piggyback choices included)."""

    name = "random"

    def check(self, rules: Ruleset, n_players: int) -> None:
        pass

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        engine.random_actions(rng, out, games=games)


class BatchedPPO(_BatchedForm):
    """A :class:`~agents.ppo.PPOAgent`: observations of all the games, one forward pass."""

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        from tenk_env.vector.obs import encode_batch

        games = np.asarray(games, np.int64)
        if not len(games):
            return
        obs = encode_batch(engine, engine.current[games], games)
        masks = engine.legal_mask()[games]
        out[games] = self.scalar.act(obs, masks)


class ScalarPolicyAdapter(_BatchedForm):
    """Any :class:`~agents.base.Policy`, asked one game at a time through
    :meth:`BatchedGame.to_game` (correct for every agent, at scalar speed)."""

    def act(self, engine: BatchedGame, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        for b in np.asarray(games, np.int64):
            b = int(b)
            g = engine.to_game(b)
            if engine.phase[b] == PH_PIGGY:
                out[b] = 128 if self.scalar.piggyback(g, rng) else 129
            else:
                k, end = self.scalar.decide(g, rng)
                out[b] = k.mask | 64 if end else k.mask


def batched_agent(spec: "str | Policy | BatchedPolicy") -> BatchedPolicy:
    """The batched agent for a spec (``"dicenow"``, ``"hold:300"``, ``"ppo:PATH"``...), a
    scalar :class:`Policy` or a batched one (returned as is)."""
    if isinstance(spec, (_BatchedForm, BatchedRandom)):
        return spec
    agent = make_agent(spec) if isinstance(spec, str) else spec
    if type(agent) in BatchedHeuristic.KINDS:
        return BatchedHeuristic(agent)
    if type(agent) is RandomAgent:
        return BatchedRandom()
    if type(agent) is MaxScoreAgent:
        return BatchedMaxScore(agent)
    if hasattr(agent, "act") and hasattr(agent, "logits") and hasattr(agent, "meta"):
        return BatchedPPO(agent)
    if hasattr(agent, "act") and not hasattr(agent, "decide"):
        return agent  # already batched
    if isinstance(agent, Policy):
        return ScalarPolicyAdapter(agent)
    raise AgentError(f"agent {spec!r} is neither a Policy (decide/piggyback) nor a batched agent (act)")


# ---------------------------------------------------------------------- deals, as the scalar engine plays them
#: agents whose decisions draw from the generator they are given: asked table by table,
#: each table with its own generator, so that a chunk's games do not depend on which other
#: chunks share its batch (a resumed tournament then replays an uninterrupted one exactly)
_USES_RNG = (BatchedRandom, ScalarPolicyAdapter)


def play_deals_batched(rules: Ruleset, agents: Sequence["str | Policy | BatchedPolicy"],
                       tasks: Sequence[dict[str, Any]], *, max_turns: int = 100_000) -> list["Chunk"]:
    """The per-game rows (:class:`agents.match.Chunk`) of the deals of several tasks of
    one table size, every game in one batch of the batched engine.

    A task is a dict with ``agents`` (indices into ``agents``, one per seat of the table;
    ``agents`` may hold None where no task uses it), ``seed``, ``start`` and ``stop``
    (deals), as :func:`agents.match.chunk_tasks` makes them. Deal ``d`` is played in every rotation of the seats from dice key
    :func:`agents.match.deal_key` (seed, d): the games :func:`agents.match.play_deals`
    plays on the scalar engine, decision for decision, for agents that decide the same in
    both forms (every heuristic bot; PPO agents up to floating-point ties). Agents that draw
    random numbers draw from a generator of their own here, so their games differ from the
    scalar engine's (same distribution).
    """
    from agents.match import Chunk, deal_keys, seatings
    from agents.play import GameTooLongError

    n = len(tasks[0]["agents"])
    orders = np.array(seatings(n), np.int64)
    rot = len(orders)
    # slot b: task task_of[b], one of its deals, in seating seating[b]
    size = [(t["stop"] - t["start"]) * rot for t in tasks]
    task_of = np.repeat(np.arange(len(tasks)), size)
    seating = np.concatenate([np.tile(np.arange(rot), t["stop"] - t["start"]) for t in tasks])
    keys = np.concatenate([np.repeat(deal_keys(t["seed"], np.arange(t["start"], t["stop"])), rot) for t in tasks])
    table = np.array([t["agents"] for t in tasks], np.int64)
    # seat_agent[b, q]: which of `agents` sits in seat q of game b
    seat_agent = table[task_of[:, None], orders[seating]]
    B = len(task_of)
    e = BatchedGame(rules, n, B, dice_keys=keys, auto_reset=False)
    rngs = [np.random.default_rng(np.random.SeedSequence(int(t["seed"]), spawn_key=(int(t["start"]), 1)))
            for t in tasks]
    actions = np.zeros(B, np.int64)
    playing = sorted({int(i) for i in table.ravel()})
    bots = {i: batched_agent(agents[i]) for i in playing}
    while True:
        aw = np.flatnonzero(e.awaiting())
        if not len(aw):
            break
        who = seat_agent[aw, e.current[aw]]
        for i in playing:
            g = aw[who == i]
            if not len(g):
                continue
            bot = bots[i]
            if isinstance(bot, _USES_RNG):
                tk = task_of[g]
                for k in np.unique(tk):
                    bot.act(e, g[tk == k], rngs[k], actions)
            else:
                bot.act(e, g, rngs[0], actions)
        e.step(actions, games=aw)
        if e.turn[aw].max() > max_turns:
            b = int(aw[np.argmax(e.turn[aw])])
            raise GameTooLongError(f"game not over after {max_turns} turns (scores {e.scores[b].tolist()}; "
                                   f"agents {[bots[i].name for i in seat_agent[b]]}); check the agents")
    # back from seats to the table's agents: agent i of the table sat in seat seat_of[b, i]
    seat_of = np.argsort(orders[seating], axis=1)
    rows = np.arange(B)[:, None]
    win = e.winners.astype(np.float64)
    win /= win.sum(axis=1, keepdims=True)
    turns = e.turn.astype(np.int64)
    # Turns go round the table from the first mover, and the last turn is the one that ended
    # the game, whose player is still the one to move.
    first_seat = (e.current.astype(np.int64) - (turns - 1)) % n
    by_agent = lambda a: a[rows, seat_of]  # noqa: E731
    scores, win_a = by_agent(e.final_scores.astype(np.int64)), by_agent(win)
    agent_turns, busts = by_agent(e.seat_turns.astype(np.int64)), by_agent(e.game_busts.astype(np.int64))
    first = orders[seating, first_seat]
    out = []
    for k, t in enumerate(tasks):
        m = task_of == k
        out.append(Chunk(int(t["start"]), int(t["stop"]), seating[m], scores[m], win_a[m], turns[m],
                         agent_turns[m], busts[m], first[m]))
    return out


def untrained_ppo(rules: "Ruleset | str" = "classic", n_players: int = 2, seed: int = 0):
    """A PPOAgent with SB3's default (untrained) MLP policy: for benchmarks and tests."""
    from sb3_contrib import MaskablePPO

    from agents.ppo import PPOAgent, checkpoint_meta

    rules = load_ruleset(rules)
    venv = sb3_vec_env(2, rules, n_players, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu")
    meta = checkpoint_meta(rules, n_players, activation="tanh", n_actions=venv.action_space.n)
    return PPOAgent.from_policy(model.policy, meta, name="ppo:untrained")


def bench_ppo_games(games: int, console) -> None:
    """`tenk bench engine`'s PPO row: an (untrained) PPO policy vs dicenow, one forward pass a step."""
    from agents.match import play_match

    try:
        ppo = untrained_ppo()
    except ImportError as e:  # pragma: no cover
        console.print(f"PPO row skipped: {e}")
        return
    play_match("classic", ppo, "dicenow", 200, seed=0)
    r = play_match("classic", ppo, "dicenow", games, seed=1)
    rate = r.games / r.seconds
    console.print(f"PPO policy (SB3 default MLP 64x64, NumPy forward pass) vs dicenow, {r.backend} engine: "
                  f"{r.games:,} games in {r.seconds:.1f} s = {rate:,.0f} games/s")
    import os

    if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
        # measured on the 2-core machine under load: 15 ms per 2,000-row forward pass with
        # OpenBLAS's threads, 0.4 ms with one (a threaded BLAS call waits for a busy core)
        console.print("  (NumPy's BLAS runs threaded here; OPENBLAS_NUM_THREADS=1 is often much faster on 2 busy "
                      "cores: try `OPENBLAS_NUM_THREADS=1 tenk bench engine`)")


def bench_bot_games(games: int, console) -> None:
    """`tenk bench engine`'s bot row: dicenow vs hold:300 on the batched engine, per-game rows kept
    (the way matches and tournaments play them)."""
    from agents.match import play_match

    play_match("classic", "dicenow", "hold:300", 2_000, seed=0)  # compile
    best = min((play_match("classic", "dicenow", "hold:300", games, seed=1) for _ in range(2)),
               key=lambda r: r.seconds)
    rate = best.games / best.seconds
    console.print(f"vectorised bots: dicenow vs hold:300 (classic, seats balanced, duplicate dice), {best.backend} "
                  f"engine: {best.games:,} games in {best.seconds:.1f} s = {rate:,.0f} games/s "
                  f"(100,000 games: {100_000 / rate:.1f} s; target under 60 s); dicenow wins {best.win_rate_a:.1%}")


# ---------------------------------------------------------------------- Stable-Baselines3
def sb3_vec_env(num_envs: int = 256, rules: "Ruleset | str" = "classic", n_players: int = 2, **kwargs: Any):
    """An SB3 ``VecEnv`` over :class:`tenk_env.vector.envs.TenThousandVectorEnv` (same
    arguments), which sb3-contrib's ``MaskablePPO`` takes directly::

        from sb3_contrib import MaskablePPO
        from agents.batched import sb3_vec_env
        venv = sb3_vec_env(1024, "classic", opponents="dicenow")
        MaskablePPO("MlpPolicy", venv).learn(1_000_000)

    ``infos`` follow SB3: one dict per env, ``terminal_observation`` (and the finished
    game's ``winners``, ``won``, ``final_scores``...) when a game ended; the observation
    returned is then already the next game's. Imports stable-baselines3 (and torch) on call.
    """
    from tenk_env.vector.envs import TenThousandVectorEnv

    return _sb3_class()(TenThousandVectorEnv(num_envs, rules, n_players, **kwargs))


_SB3_CLASS: list[type] = []


def _sb3_class() -> type:
    if _SB3_CLASS:
        return _SB3_CLASS[0]
    from stable_baselines3.common.vec_env import VecEnv

    class TenThousandSB3VecEnv(VecEnv):
        """SB3 VecEnv face of a TenThousandVectorEnv (see :func:`sb3_vec_env`)."""

        def __init__(self, venv: Any):
            self.venv = venv
            super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
            self._actions: np.ndarray | None = None

        def reset(self) -> np.ndarray:
            seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
            opts = self._options[0] if self._options and self._options[0] else None
            obs, _ = self.venv.reset(seed=seed, options=opts)
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

        def step_wait(self):
            obs, rew, term, trunc, info = self.venv.step(self._actions)
            dones = term | trunc
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if dones.any():
                fin = info["final_info"]
                keys = [k for k in fin if not k.startswith("_")]
                for b in np.flatnonzero(dones):
                    d = infos[b]
                    d["terminal_observation"] = info["final_obs"][b]
                    d["TimeLimit.truncated"] = bool(trunc[b] and not term[b])
                    for k in keys:
                        v = fin[k][b]
                        d[k] = v.tolist() if k == "winners" else v
                    d["winners"] = [q for q, w in enumerate(d["winners"]) if w]
            return obs, rew.astype(np.float32), dones, infos

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def close(self) -> None:
            self.venv.close()

        def _idx(self, indices) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, int):
                return [indices]
            return list(indices)

        def get_attr(self, attr_name: str, indices=None) -> list[Any]:
            if attr_name == "action_masks":  # what sb3-contrib's is_masking_supported asks
                return [self.action_masks for _ in self._idx(indices)]
            value = getattr(self.venv, attr_name)
            return [value for _ in self._idx(indices)]

        def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
            idx = self._idx(indices)
            if method_name == "action_masks":  # one row per env, as get_action_masks stacks them
                m = self.venv.action_masks()
                return [m[i] for i in idx]
            out = getattr(self.venv, method_name)(*method_args, **method_kwargs)
            return [out for _ in idx]

        def env_is_wrapped(self, wrapper_class: type, indices=None) -> list[bool]:
            return [False for _ in self._idx(indices)]

        def has_attr(self, attr_name: str) -> bool:
            return attr_name == "action_masks" or hasattr(self.venv, attr_name)

    _SB3_CLASS.append(TenThousandSB3VecEnv)
    return TenThousandSB3VecEnv
