"""A slow, independent reference for exact N-player (2 to 4) evaluation and best response.

Brute force in plain Python over the rules engine alone: dice from ``get_tables(rules).rolls``
(every sorted roll of n dice, probability 6**-n times its multinomial coefficient), moves from
the scalar agents' ``decide`` on a :class:`~tenk_env.game.Game` posed at the position, legality
from ``Game.options``. Nothing here comes from ``tenk_env.solve``, so the fast engine can be
held to it on tiny games.

State at a turn start: the score vector, the mover, and in a final round its trigger (who has
played follows: the seats from the trigger up to the mover). Every player's ``on_board`` is
"score > 0": with komi 0 and no rule that takes points away, a player's first bank is the
only way off zero.

Turns of fixed bots are distributions over their outcome (bank T, no bank, instant win),
computed by pushing the probability mass forward through (turn total, dice, rolls used).
What is shared (``share_turns=True``, the default) rests on what the bots document, and
``share_turns=False`` (every move asked, every turn start on its own) is the check of it:

* a bot's turn is computed once for all turn starts where it sees the same thing: own score,
  the highest other score, the roll limit, whether it is its final turn; less for the
  scoreboard-blind ``hold``, ``greedy`` and ``maxscore`` (see ``_BotTurns.key``);
* on a last roll the heuristic bots keep what the roll alone decides (their rules layer);
* in a final round, a bank that does not pass the highest score changes nothing (that
  score's holder reached the target first and wins a tie, and the bots see only the highest
  other score), and of the players who have played only the holder's score is kept.

The game is solved score vector by score vector, highest first (memoised recursion: a bank
only raises the scores). Outside a final round the N movers at one score vector form a cycle
(a turn without a bank hands the same scores to the next mover): for fixed bots it is solved
in closed form; for the best response it is a fixed point ``x = f(A + B x)`` of the
responder's turn value, convex in what a turn without a bank is worth, solved by Newton
steps (policy iteration), which end on the exact root. The symmetric equilibrium (every
player maximising its own chance) carries vectors of win chances instead, and iterates
round the cycle (Gauss-Seidel) until they stop changing.
"""

from __future__ import annotations

import itertools
import math
import sys
from contextlib import contextmanager

import numpy as np

from tenk_env.game import Game, Phase
from tenk_env.policies.base import make_agent
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.tables import get_tables

__all__ = ["reference_eval", "reference_br", "reference_equilibrium", "reference_state", "roll_odds", "check_rules"]

#: bots the reference plays: deterministic, so a turn is a distribution over outcomes
BOTS = ("dicenow", "maxscore", "hold", "greedy", "breakeven")
#: mass below which a within-turn state of an unlimited-roll turn is dropped (counted in
#: ``dropped``): hot dice make such turns unbounded, at geometrically vanishing odds
PRUNE = 1e-18


def check_rules(rules: Ruleset, n: int) -> None:
    """Refuse what the reference does not model, naming the field."""
    bad = [
        (name, getattr(rules, name), want)
        for name, want in (
            ("komi", 0),
            ("bust_penalty", 0),
            ("piggyback", False),
            ("exact_finish", "off"),
            ("four_twos_lose_all", False),
            ("zilch_payout", 0),
            ("turn_order", "seat"),
            ("tie", "first_to_target"),
        )
        if getattr(rules, name) != want
    ]
    if bad:
        raise ValueError("reference_multi does not model " + ", ".join(f"{k}={v!r} (needs {w!r})" for k, v, w in bad))
    if not 2 <= n <= 4:
        raise ValueError(f"reference_multi plays 2 to 4 players, not {n}")


def roll_odds(n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted roll of n dice with its probability."""
    out = []
    for dice in itertools.combinations_with_replacement(range(1, 7), n):
        ways = math.factorial(n)
        for f in range(1, 7):
            ways //= math.factorial(dice.count(f))
        out.append((dice, ways / 6**n))
    return out


@contextmanager
def _deep_recursion(limit: int):
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


class _Table:
    """The turn-level rules: what a bank or a turn without one leads to."""

    def __init__(self, rules: Ruleset, n: int):
        check_rules(rules, n)
        self.rules, self.n = rules, n
        self.tables = get_tables(rules)
        self.nd = rules.num_dice
        self.target = rules.target
        self.immediate = rules.end == "immediate"
        self.rolls = {k: [(d, p, self.tables.rolls[d]) for d, p in roll_odds(k)] for k in range(1, self.nd + 1)}
        #: per dice count: (chance of an instant win, of a bust, [(p, RollInfo) of the scoring rolls])
        self.by_dice = {}
        for k, rolls in self.rolls.items():
            win = sum(p for _, p, i in rolls if i.instant_win)
            bust = sum(p for _, p, i in rolls if i.bust and not i.instant_win)
            self.by_dice[k] = (win, bust, [(p, i) for _, p, i in rolls if not (i.bust or i.instant_win)])
        self.instant_wins = any(i.instant_win for i in self.tables.rolls.values())
        self._reach: dict = {}

    def reach(self, k: int, n: int) -> int:
        """The most points k rolls can add to a turn total, starting with n dice."""
        if k == 0:
            return 0
        got = self._reach.get((k, n))
        if got is None:
            got = self._reach[k, n] = max(
                (kp.points + self.reach(k - 1, n - kp.n or self.nd) for _, i in self.by_dice[n][2] for kp in i.keeps),
                default=0,
            )
        return got

    def turn_limit(self, trigger) -> int:
        """Rolls allowed in a turn (0: unlimited); a final turn of ``one_more_roll`` has one."""
        if trigger is not None and self.rules.end == "one_more_roll":
            return 1
        return self.rules.max_rolls

    def pose(self, scores, mover, trigger) -> Game:
        """A game at the start of ``mover``'s turn (phase ROLL)."""
        g = Game(self.rules, self.n, record=False)
        g.scores = list(scores)
        g.on_board = [s > 0 for s in scores]
        g.current = mover
        if trigger is not None:
            g.final_round, g.trigger = True, trigger
            g.final_turns_left = (trigger - mover) % self.n
            g.reached = [(trigger + i) % self.n for i in range(self.n) if scores[(trigger + i) % self.n] >= self.target]
        return g

    def winner(self, scores, trigger) -> int:
        """After the final round: the highest score, a tie going to the first to the target
        (the trigger, then the others in turn order: the order they banked in)."""
        best = max(scores)
        return next(q for q in ((trigger + i) % self.n for i in range(self.n)) if scores[q] == best)


class _BotTurns:
    """The turn-outcome distributions of one bot: ``(banks {T: p}, p_win, p_none)``."""

    def __init__(self, table: _Table, spec: str, share: bool):
        self.t, self.spec, self.share = table, spec, share
        self.agent = make_agent(spec)
        self.kind = spec.partition(":")[0]
        # any deterministic agent can be asked move by move; the shared turns rest on what the bots document
        if self.kind not in BOTS and (share or self.kind != "equilibrium"):
            raise ValueError(
                f"reference_multi plays the deterministic bots {', '.join(BOTS)}, and 'equilibrium' "
                f"with share_turns=False, not {spec!r}"
            )
        self.agent.check(table.rules, table.n)
        self.rng = np.random.default_rng(0)
        self.memo: dict = {}
        self.last: dict = {}
        self.dropped = 0.0

    def key(self, scores, mover, trigger):
        """What the bot's moves in this turn depend on, as the bots document it (the full
        state with ``share=False``), and the floor below which its banks cannot matter."""
        if not self.share:
            return (tuple(scores), mover, trigger), None
        own, limit = scores[mover], self.t.turn_limit(trigger)
        if self.kind in ("hold", "greedy"):
            # scoreboard-blind, but for banking at the target under end: immediate
            return (own > 0, limit, own if self.t.immediate else None), None
        if self.kind == "maxscore":  # ignores the scores and the final round
            return (own > 0, limit), None
        leader = max(s for q, s in enumerate(scores) if q != mover)
        if trigger is None:
            return (own, leader, limit), None
        # A final turn: bank once past the leader, else roll. Reaching the leader's score or
        # less changes nothing (the leader reached the target first and the others see only
        # the highest score), so within-turn states that cannot pass it need no moves.
        floor = leader - own if limit and not self.t.instant_wins else None
        return (own > 0, leader - own, limit), floor

    def turn(self, scores, mover, trigger):
        k, floor = self.key(scores, mover, trigger)
        got = self.memo.get(k)
        if got is None:
            got = self.memo[k] = self._turn(self.t.pose(scores, mover, trigger), floor)
        return got

    def last_keeps(self, g: Game, n: int):
        """{points: (chance, a keep)} of the heuristic bots' keeps on a last roll of n dice,
        asked once: their rules layer takes a keep chosen by the roll alone there (the most
        points, or for greedy the most dice), whatever the scores and the turn total."""
        got = self.last.get(n)
        if got is None:
            got = self.last[n] = {}
            for p, info in self.t.by_dice[n][2]:
                g.dice, g.info = info.dice, info
                keep, end = self.agent.decide(g, self.rng)
                assert end, (self.spec, g)
                q, _ = got.get(keep.points, (0.0, keep))
                got[keep.points] = (q + p, keep)
        return got

    def _turn(self, g: Game, floor):
        t, agent, rng = self.t, self.agent, self.rng
        nd, limit = t.nd, g.max_rolls
        banks: dict[int, float] = {}
        win = none = 0.0
        # within-turn states {(T, dice, rolls used): mass}; every keep scores, so T grows
        # and the states can be taken in order of T
        frontier = {(0, nd, 0): 1.0}
        g.phase = Phase.DECIDE
        while frontier:
            T, n, r = state = min(frontier)
            mass = frontier.pop(state)
            if limit == 0 and mass < PRUNE:
                self.dropped += mass
                continue
            if floor is not None and T + t.reach(limit - r, n) <= floor:
                none += mass
                continue
            p_win, p_bust, scoring = t.by_dice[n]
            win += mass * p_win
            none += mass * p_bust
            # the game as Game.roll leaves it after a scoring roll
            g.turn_total, g.dice_left, g.rolls = T, n, r + 1
            if self.share and limit and r + 1 == limit and self.kind != "maxscore":
                for pts, (p, keep) in self.last_keeps(g, n).items():
                    if g.options(keep)[1]:
                        banks[T + pts] = banks.get(T + pts, 0.0) + mass * p
                    else:
                        none += mass * p
                continue
            for p, info in scoring:
                g.dice, g.info = info.dice, info
                keep, end = agent.decide(g, rng)
                m = mass * p
                T2 = T + keep.points
                if not end:
                    nxt = (T2, n - keep.n or nd, r + 1 if limit else 0)
                    frontier[nxt] = frontier.get(nxt, 0.0) + m
                elif g.options(keep)[1]:
                    banks[T2] = banks.get(T2, 0.0) + m
                else:  # the roll limit with a total it may not bank: forfeited
                    none += m
        return banks, win, none


class _Solver:
    """The game between turns, shared by the two solvers: ``win(seat)`` is the value of a
    game that seat has won, ``cycle(scores)`` the values at the start of each mover's turn
    outside a final round, ``final_turn(scores, mover, trigger)`` in one."""

    def __init__(self, rules: Ruleset, n: int, share: bool):
        self.t = _Table(rules, n)
        self.n, self.share = n, share
        self.normal: dict = {}
        self.final: dict = {}

    def after(self, scores, mover, trigger, bank):
        """Value after ``mover`` ends a turn banking ``bank`` (0: no bank)."""
        t, n = self.t, self.n
        if bank:
            scores = scores[:mover] + (scores[mover] + bank,) + scores[mover + 1 :]
            if trigger is None and scores[mover] >= t.target:
                if t.immediate:
                    return self.win(mover)
                trigger = mover
        nxt = (mover + 1) % n
        if trigger is None:
            return self.cycle(scores)[nxt]
        if nxt == trigger:
            return self.win(t.winner(scores, trigger))
        if self.share:
            scores = self.merge(scores, nxt, trigger)
        return self.final_turn(scores, nxt, trigger)

    def outcomes(self, scores, mover, trigger):
        """A bot's turn here: ([(bank, chance)], chance of an instant win, of no bank). In a
        final round a bank that does not pass the highest score counts as no bank (see
        :meth:`merge`)."""
        banks, win, none = self.bots[mover].turn(scores, mover, trigger)
        if trigger is None or not self.share:
            return list(banks.items()), win, none
        floor = max(s for q, s in enumerate(scores) if q != mover) - scores[mover]
        out = []
        for T, p in banks.items():
            if T > floor:
                out.append((T, p))
            else:
                none += p
        return out, win, none

    def merge(self, scores, nxt, trigger):
        """In a final round, of the players who have played only the first to hold the highest
        score can still win, and the others see only that score: the rest are set to 0."""
        n = self.n
        played = (nxt - trigger) % n
        if played == 1:
            return scores
        done = [(trigger + i) % n for i in range(played)]
        holder = done[0]
        for q in done:
            if scores[q] > scores[holder]:
                holder = q
        out = list(scores)
        for q in done:
            if q != holder:
                out[q] = 0
        return tuple(out)


class _Eval(_Solver):
    """Win-probability vectors of fixed bots, one per seat."""

    def __init__(self, rules: Ruleset, specs, share: bool):
        super().__init__(rules, len(specs), share)
        self.bots = [_BotTurns(self.t, s, share) for s in specs]

    def win(self, seat):
        v = np.zeros(self.n)
        v[seat] = 1.0
        return v

    def parts(self, scores, mover, trigger):
        """(value of the turn's banks and wins, chance of a turn without a bank)."""
        banks, win, none = self.outcomes(scores, mover, trigger)
        c = win * self.win(mover)
        if banks:
            values = np.array([self.after(scores, mover, trigger, T) for T, _ in banks])
            c = c + np.array([p for _, p in banks]) @ values
        return c, none

    def cycle(self, scores):
        got = self.normal.get(scores)
        if got is None:
            n = self.n
            cs, qs = zip(*(self.parts(scores, m, None) for m in range(n)))
            # V_m = c_m + q_m V_{m+1} around the table: V_0 in closed form, then back
            loop = math.prod(qs)
            acc, w = np.zeros(n), 1.0
            for m in range(n):
                acc = acc + w * cs[m]
                w *= qs[m]
            V = [None] * n
            V[0] = acc / (1.0 - loop)
            for m in range(n - 1, 0, -1):
                V[m] = cs[m] + qs[m] * V[(m + 1) % n]
            got = self.normal[scores] = V
        return got

    def final_turn(self, scores, mover, trigger):
        k = (scores, mover, trigger)
        got = self.final.get(k)
        if got is None:
            c, q = self.parts(scores, mover, trigger)
            got = self.final[k] = c + q * self.after(scores, mover, trigger, 0)
        return got


def reference_eval(rules: Ruleset | str, specs: list[str], *, share_turns: bool = True) -> np.ndarray:
    """``P[k, i]``: the chance that ``specs[i]`` wins when the seats go round in the list's
    order and ``specs[k]`` moves first. Exact for deterministic bots (see the module doc)."""
    rules = load_ruleset(rules)
    ev = _Eval(rules, list(specs), share_turns)
    with _deep_recursion(20_000):
        V = ev.cycle((0,) * ev.n)
    assert sum(b.dropped for b in ev.bots) < 1e-12
    return np.array(V)


class _Banks(dict):
    """{turn total: the responder's value after banking it, or None where it may not be
    banked (entry threshold, minimum bank)}, filled on first use."""

    def __init__(self, value, bankable):
        super().__init__()
        self.value, self.bankable = value, bankable

    def __missing__(self, T):
        v = self[T] = self.value(T) if self.bankable(T) else None
        return v


class _BestResponse(_Solver):
    """The responder's (seat 0) maximal win probability against fixed bots in seats 1..N-1."""

    def __init__(self, rules: Ruleset, opponents, share: bool):
        super().__init__(rules, len(opponents) + 1, share)
        t = self.t
        if t.rules.max_rolls == 0 and not t.immediate:
            raise ValueError(
                "reference_br needs a roll limit (max_rolls) or end: immediate: "
                "otherwise the responder's turns are unbounded"
            )
        self.bots = self._bots(t, opponents, share)
        self.dp_calls = 0
        self.mandatory = t.rules.hot_dice == "mandatory"
        # The responder chooses among the (points, dice used) its keeps give: the rolls of each
        # dice count are grouped by that set of choices, and on a last roll by the set of
        # points alone (exact: nothing else about a keep matters to the responder).
        self.groups, self.last_groups = {}, {}
        for k, (win, bust, scoring) in t.by_dice.items():
            g: dict = {}
            last: dict = {}
            for p, info in scoring:
                opts = tuple(sorted({(kp.points, kp.n) for kp in info.keeps}))
                g[opts] = g.get(opts, 0.0) + p
                pts = tuple(sorted({kp.points for kp in info.keeps}))
                last[pts] = last.get(pts, 0.0) + p
            self.groups[k] = (win, bust, [(p, opts) for opts, p in g.items()])
            self.last_groups[k] = [(p, pts) for pts, p in last.items()]
        # every total a turn of a limited number of rolls can bank: the key of a final turn's
        # values, under which the many final turns that value the same totals alike meet
        self.totals = {lim: self._totals(lim) for lim in {t.turn_limit(None), t.turn_limit(0)} if lim}
        self.final_dp: dict = {}

    def _totals(self, limit):
        out, layer = set(), {(0, self.t.nd)}
        for _ in range(limit):
            nxt = set()
            for T, n in layer:
                for _, opts in self.groups[n][2]:
                    for pts, used in opts:
                        out.add(T + pts)
                        nxt.add((T + pts, n - used or self.t.nd))
            layer = nxt
        return sorted(out)

    def _bots(self, t, opponents, share):
        return [None] + [_BotTurns(t, s, share) for s in opponents]

    def win(self, seat):
        return 1.0 if seat == 0 else 0.0

    def bot_parts(self, scores, mover, trigger):
        banks, _, none = self.outcomes(scores, mover, trigger)
        return sum(p * self.after(scores, mover, trigger, T) for T, p in banks), none

    def banks(self, scores, trigger):
        r, own = self.t.rules, scores[0]
        return _Banks(
            lambda T: self.after(scores, 0, trigger, T),
            lambda T: (own > 0 or T >= r.entry_threshold) and T >= r.min_bank,
        )

    def turn(self, limit, w, E):
        """The responder's best turn value when a turn without a bank is worth ``w`` and
        banking T is worth ``E[T]``, with the chance of a turn without a bank under the moves
        chosen (the slope in ``w``)."""
        self.dp_calls += 1
        nd, mandatory, groups, last_groups = self.t.nd, self.mandatory, self.groups, self.last_groups
        memo: dict = {}

        def node(T, n, r):
            """Value and slope of rolling n dice at turn total T with r rolls used."""
            win, bust, opts = groups[n]
            v, d = win + bust * w, bust
            if limit and r + 1 == limit:  # the last roll: the turn ends, only points matter
                for p, pts in last_groups[n]:
                    bv, bd = -1.0, 0.0
                    for x in pts:
                        e = E[T + x]
                        if e is None:  # forfeited
                            if w > bv:
                                bv, bd = w, 1.0
                        elif e > bv:
                            bv, bd = e, 0.0
                    v += p * bv
                    d += p * bd
                memo[T, n, r] = v, d
                return v, d
            for p, choices in opts:
                bv, bd = -1.0, 0.0
                for pts, used in choices:
                    T2 = T + pts
                    e = E[T2]
                    if e is not None and not (mandatory and used == n):
                        if e > bv:
                            bv, bd = e, 0.0
                        if e >= 1.0:  # a sure win cannot be bettered
                            continue
                    k2 = (T2, n - used or nd, r + 1 if limit else 0)
                    rv, rd = memo.get(k2) or node(*k2)
                    if rv > bv:
                        bv, bd = rv, rd
                v += p * bv
                d += p * bd
            memo[T, n, r] = v, d
            return v, d

        return node(0, nd, 0)

    def cycle(self, scores):
        got = self.normal.get(scores)
        if got is not None:
            return got
        n = self.n
        parts = [None] + [self.bot_parts(scores, m, None) for m in range(1, n)]
        # x_1 = A + B x_0 through the bots' seats: x_m = c_m + q_m x_{m+1}, x_n = x_0
        A, B = 0.0, 1.0
        for m in range(n - 1, 0, -1):
            c, q = parts[m]
            A, B = c + q * A, q * B
        # x_0 = f(A + B x_0) with f convex, increasing, slope < 1: Newton steps from x = 0 only
        # rise (a tangent lies below f) and stop on the root once the moves no longer change
        E, limit, x = self.banks(scores, None), self.t.turn_limit(None), 0.0
        for _ in range(100):
            v, d = self.turn(limit, A + B * x, E)
            x_new = (v - d * B * x) / (1.0 - d * B)
            if x_new <= x + 1e-16:
                break
            x = x_new
        assert abs(v - x) < 1e-13, (scores, v, x)
        V = [v] + [0.0] * (n - 1)
        for m in range(n - 1, 0, -1):
            c, q = parts[m]
            V[m] = c + q * V[(m + 1) % n]
        self.normal[scores] = V
        return V

    def final_turn(self, scores, mover, trigger):
        k = (scores, mover, trigger)
        got = self.final.get(k)
        if got is None:
            w = self.after(scores, mover, trigger, 0)
            if mover == 0:
                limit, E = self.t.turn_limit(trigger), self.banks(scores, trigger)
                if limit:
                    dk = (limit, w, tuple(E[T] for T in self.totals[limit]))
                    got = self.final_dp.get(dk)
                    if got is None:
                        got = self.final_dp[dk] = self.turn(limit, w, E)[0]
                else:
                    got = self.turn(limit, w, E)[0]
            else:
                c, q = self.bot_parts(scores, mover, trigger)
                got = c + q * w
            self.final[k] = got
        return got


def reference_br(rules: Ruleset | str, opponents: list[str], *, share_turns: bool = True) -> np.ndarray:
    """``p[k]``: the best a responder can do against the fixed bots ``opponents`` when the
    seats go round responder, opponents[0], opponents[1], ... and k players move before it."""
    rules = load_ruleset(rules)
    br = _BestResponse(rules, list(opponents), share_turns)
    n = br.n
    with _deep_recursion(20_000):
        V = br.cycle((0,) * n)
    assert sum(b.dropped for b in br.bots[1:]) < 1e-12
    return np.array([V[(n - k) % n] for k in range(n)])


def reference_state(
    rules: Ruleset | str,
    specs: list[str],
    scores,
    mover: int,
    trigger: int | None = None,
    *,
    responder: bool = False,
    share_turns: bool = True,
):
    """The value at the start of ``mover``'s turn with banked ``scores`` (by seat, seats in
    the order of ``specs``; ``trigger``: the seat that started the final round, if one is on).
    Fixed bots: the vector of win chances by seat. ``responder=True``: seat 0 is the best
    responder, ``specs`` the bots in seats 1.., and the value is its best win chance."""
    rules = load_ruleset(rules)
    solver = _BestResponse(rules, list(specs), share_turns) if responder else _Eval(rules, list(specs), share_turns)
    scores = tuple(int(x) for x in scores)
    if len(scores) != solver.n or (trigger is not None and (scores[trigger] < rules.target or mover == trigger)):
        raise ValueError(f"not a turn start: scores {scores}, mover {mover}, trigger {trigger}")
    with _deep_recursion(20_000):
        if trigger is None:
            return solver.cycle(scores)[mover]
        return solver.final_turn(scores, mover, trigger)


class _Equilibrium(_BestResponse):
    """Every player maximises its own win chance, valued as everyone playing so: vectors of
    win chances by seat. Ties on the mover's own chance keep the first choice met, banking
    before rolling on (the games it is run on have no ties that matter)."""

    def __init__(self, rules: Ruleset, n: int):
        super().__init__(rules, [None] * (n - 1), share=False)

    def _bots(self, t, opponents, share):
        return [None] * (len(opponents) + 1)

    def win(self, seat):
        v = np.zeros(self.n)
        v[seat] = 1.0
        return v

    def banks_of(self, scores, mover, trigger):
        r, own = self.t.rules, scores[mover]
        return _Banks(
            lambda T: self.after(scores, mover, trigger, T),
            lambda T: (own > 0 or T >= r.entry_threshold) and T >= r.min_bank,
        )

    def vturn(self, limit, w, E, me):
        """The mover's (seat ``me``) turn chosen on its own chance: the vector it is worth,
        ``w`` the vector of a turn without a bank, ``E[T]`` of banking T."""
        nd, mandatory, groups, last_groups = self.t.nd, self.mandatory, self.groups, self.last_groups
        memo: dict = {}

        def node(T, n, r):
            win, bust, opts = groups[n]
            v = win * self.win(me) + bust * w
            if limit and r + 1 == limit:
                for p, pts in last_groups[n]:
                    best = None
                    for x in pts:
                        e = E[T + x]
                        e = w if e is None else e
                        if best is None or e[me] > best[me]:
                            best = e
                    v = v + p * best
                memo[T, n, r] = v
                return v
            for p, choices in opts:
                best = None
                for pts, used in choices:
                    T2 = T + pts
                    e = E[T2]
                    if e is not None and not (mandatory and used == n):
                        if best is None or e[me] > best[me]:
                            best = e
                        if e[me] >= 1.0:
                            continue
                    k2 = (T2, n - used or nd, r + 1 if limit else 0)
                    rv = memo.get(k2)
                    if rv is None:
                        rv = node(*k2)
                    if best is None or rv[me] > best[me]:
                        best = rv
                v = v + p * best
            memo[T, n, r] = v
            return v

        return node(0, nd, 0)

    def cycle(self, scores):
        got = self.normal.get(scores)
        if got is not None:
            return got
        n, limit = self.n, self.t.turn_limit(None)
        E = [self.banks_of(scores, m, None) for m in range(n)]
        V = [np.full(n, 1.0 / n) for _ in range(n)]
        for _ in range(10_000):
            change = 0.0
            for m in range(n - 1, -1, -1):
                new = self.vturn(limit, V[(m + 1) % n], E[m], m)
                change = max(change, float(np.abs(new - V[m]).max()))
                V[m] = new
            if change < 1e-15:
                break
        else:
            raise AssertionError(f"no convergence at {scores}")
        self.normal[scores] = V
        return V

    def final_turn(self, scores, mover, trigger):
        k = (scores, mover, trigger)
        got = self.final.get(k)
        if got is None:
            w = self.after(scores, mover, trigger, 0)
            limit, E = self.t.turn_limit(trigger), self.banks_of(scores, mover, trigger)
            # final turns that value every total alike are one turn (many differ only in
            # scores that no longer matter)
            dk = (
                (limit, mover, tuple(w), tuple(None if E[T] is None else tuple(E[T]) for T in self.totals[limit]))
                if limit
                else None
            )
            got = self.final_dp.get(dk) if dk else None
            if got is None:
                got = self.vturn(limit, w, E, mover)
                if dk:
                    self.final_dp[dk] = got
            self.final[k] = got
        return got


def reference_equilibrium(rules: Ruleset | str, n: int) -> np.ndarray:
    """``p[j]``: seat j's win chance (seat 0 moves first) when every player maximises its own."""
    rules = load_ruleset(rules)
    eq = _Equilibrium(rules, n)
    with _deep_recursion(20_000):
        return np.array(eq.cycle((0,) * n)[0])
