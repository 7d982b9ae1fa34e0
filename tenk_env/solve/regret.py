"""Exact values of every legal move in any in-turn state of a solved 2-player game.

The value of a move is W*: the mover's win probability under optimal play by both players
from the position right after it, chance included. The game solution gives it directly
for most moves: ending the turn is worth the turn-start value of the position it hands
over (:meth:`GameSolution.bank_value`; a bust or forfeit hands over the same scores, less
a bust penalty when one falls due: :meth:`GameSolution.bust_values`), and
rolling on to a total T at or below the in-turn DP's cap is the DP's own value
``V[rolls used, dice, T]`` (:meth:`GameSolution.turn_values`, :meth:`final_values`;
:func:`tenk_env.solve.kernels.turn.optimal_values` computes the same floats faster).

Past the cap the DP stores nothing: it proves that banking is best there (see
:func:`tenk_env.solve.kernels.game.opt_tcap`), so the optimal player never rolls on and the
kernel values an after-keep state past the cap as banking. Any other player may roll on,
and that move's W* is one step of expectation over the next roll
(:func:`roll_past_cap`): every successor of that roll is past the cap too (totals only
grow), where W* is known exactly: banking when the rules allow it, the closed-form forced
roll (mandatory hot dice, a zilch pay-out) when they do not, the forfeit when the roll
limit is reached and banking is not allowed; a bust is worth the bust value beta, an
instant win 1. This is the kernel's own recursion (:func:`kernels.turn.turn_dp`) written for
one state, so the values agree with it wherever both exist.

:class:`TurnTables` holds one turn-start state's tables (the optimal agent caches them per
state, :class:`tenk_env.policies.optimal.OptimalAgent`); :meth:`TurnTables.pick` is the optimal
agent's move and :meth:`TurnTables.values` the exact value of every legal move, both from
:func:`tenk_env.solve.policy.move_values` on the same tables. Up to the cap the two value
the moves alike, so the optimal move is by construction the first-ranked one; past it the
optimal player banks, which the solver proves best to within its tolerance EPS, and
regrets below :data:`REGRET_TOL` (= EPS) count as 0: the optimal agent's regret is 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tenk_env.game import Game
from tenk_env.jit import njit
from tenk_env.solve.game import GameSolution
from tenk_env.solve.kernels import game as game_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.policy import choose, move_values, pick
from tenk_env.solve.shared import EPS, final_prm
from tenk_env.solve.spec import BUST, P_MAXROLLS, P_SHARED, P_ZILCH, WIN, ZILCH
from tenk_env.tables import Keep

__all__ = [
    "TurnTables",
    "turn_tables",
    "state_key",
    "roll_past_cap",
    "MoveRegret",
    "regret_of",
    "regret_in",
    "REGRET_TOL",
]

#: regrets below this count as 0: the solver's values are exact to its truncation
#: tolerance EPS, so a smaller difference between two moves is not a measured mistake
REGRET_TOL = EPS

NEG = -1e300


@njit(cache=True)
def roll_past_cap(prm, rolls, fa, r, maxr, n, T, bank_seg, beta, forf, fA, fB):
    """W* of rolling ``n`` dice at turn total ``T`` (units) past the DP's cap, with ``r``
    rolls used before this roll and ``maxr`` allowed (0: unlimited).

    ``bank_seg[j]`` is the value of banking ``T + j`` (j up to the largest step), ``beta``
    of a bust, ``forf`` of a forfeited total; a forced roll is worth ``fA + fB * beta``
    (fA < 0: none under these rules). Every successor is past the cap, where the optimal
    continuation is the kernel's (:func:`tenk_env.solve.kernels.turn.turn_dp` past ``Tcap``):
    bank when allowed, else the forced roll or the forfeit.
    """
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    z = prm[P_ZILCH]
    floor = rules_k.bankable_from(prm, fa)
    hot_rolls_on = rules_k.hot_dice_roll_on(prm)
    can_roll = maxr == 0 or r + 1 < maxr
    v = 0.0
    for c in range(cstart[n], cstart[n + 1]):
        p = c_prob[c]
        kind = c_kind[c]
        if kind == BUST:
            v += p * beta
        elif kind == WIN:
            v += p
        elif kind == ZILCH:
            T2 = T + z
            if can_roll:
                v += p * ((fA + fB * beta) if fA >= 0.0 else bank_seg[z])
            elif rules_k.may_bank_total(floor, T2):
                v += p * bank_seg[z]
            else:
                v += p * forf
        else:
            best = NEG
            for o in range(c_os[c], c_oe[c]):
                j = o_p[o]
                T2 = T + j
                hot = n - o_d[o] == 0
                can_bank = rules_k.may_bank(floor, hot_rolls_on, T2, hot, can_roll)
                if can_bank:
                    ev = bank_seg[j]
                elif can_roll:
                    ev = (fA + fB * beta) if fA >= 0.0 else bank_seg[j]
                else:
                    ev = forf
                if rules_k.better_keep(ev, best):
                    best = ev
            v += p * best
    return v


def state_key(sol: GameSolution, game: Game) -> tuple:
    """The turn-start state whose tables decide ``game``'s current turn (a cache key)."""
    rules = game.rules
    u = sol.unit
    p = game.current
    o = 1 - p
    fa, fb = (int(game.on_board[p]), int(game.on_board[o])) if rules.entry_threshold else (1, 1)
    if game.final_round and game.trigger != p:
        assert game.trigger is not None  # set when the final round starts
        # the last turn: beat the leader's score (d units ahead of ours)
        return (rules.hash, "final", (game.scores[game.trigger] - game.scores[p]) // u, fa)
    if sol.penalty:
        fa, fb = sol.status(fa, game.busts_in_row[p]), sol.status(fb, game.busts_in_row[o])
    return (rules.hash, game.scores[p] // u, game.scores[o] // u, fa, fb)


class TurnTables:
    """Optimal within-turn values of one turn-start state (see the module docstring).

    ``V[r, n, T]``: value of rolling n dice at total T (units) after r rolls, up to
    ``Tcap``; ``bv[T]``: of banking T, up to ``Tcap + max_step``; ``beta``: of a bust,
    ``forf``: of a forfeit (the same without a bust penalty); ``forced``: of a forced roll
    past the cap (None: no forced rolls). A final turn (``final``) is d units behind the
    leader; otherwise the state is (a, b, fa, fb), fa and fb statuses
    (:meth:`GameSolution.status`).
    """

    __slots__ = (
        "sol",
        "key",
        "V",
        "bv",
        "Tcap",
        "beta",
        "forf",
        "forced",
        "final",
        "a",
        "b",
        "fa",
        "fb",
        "d",
        "maxr",
        "fA",
        "fB",
        "_filled",
    )

    def __init__(self, sol: GameSolution, key: tuple):
        self.sol, self.key = sol, key
        s = sol.spec
        N, step = s.n_dice, s.max_step
        if key[1] == "final":
            # as GameSolution.final_values
            _, _, d, fa = key
            self.final, self.d, self.fa = True, int(d), int(fa)
            self.a = self.b = self.fb = 0
            prm = final_prm(s)
            self.fA, self.fB = _forced_of(sol, True)
            self.beta = self.forf = 0.0
            Tcap = max(self.d + 1, int(rules_k.bankable_from(prm, self.fa)))
            T = np.arange(Tcap + step + 2)
            self.bv = np.where(T > self.d, 1.0, np.where((T == self.d) & bool(prm[P_SHARED]), 0.5, 0.0))
            self._filled = self.bv.shape[0]
        else:
            # as GameSolution.turn_values (the cap and bank values from the same kernels)
            _, a, b, fa, fb = key
            self.final, self.d = False, 0
            self.a, self.b, self.fa, self.fb = int(a), int(b), int(fa), int(fb)
            prm = s.prm
            self.fA, self.fB = _forced_of(sol, False)
            self.beta, self.forf = sol.bust_values(self.a, self.b, self.fa, self.fb)
            Tcap = int(game_k.opt_tcap(prm, sol.Rsup, sol.pbmin, EPS, sol.Lx, a, b, fa, fb, self.beta))
            self.bv = np.zeros(Tcap + step + 2)
            game_k.game_bank_values(prm, sol.W, sol.R, a, b, fb, Tcap + step + 1, self.bv)
            # game_bank_values fills bv up to Tcap + max_step; the last slot stays 0
            self._filled = Tcap + step + 1
        self.Tcap = Tcap
        self.maxr = int(prm[P_MAXROLLS])
        nr = max(1, self.maxr)
        self.V = np.zeros((nr, N + 1, Tcap + 1))
        A = np.empty((nr, N, Tcap + step + 1))
        turn_k.optimal_values(
            prm, s.rolls, self.fa & 1, Tcap, self.bv, self.beta, self.forf, self.fA, self.fB, self.V, A
        )
        self.forced = self.fA + self.fB * self.beta if self.fA >= 0 else None

    # ------------------------------------------------------------------ the optimal agent
    def pick(self, game: Game) -> tuple[Keep, bool]:
        """The optimal agent's move: the solver's own values and tie-break.

        Banking is valued by :meth:`bank` at every total. (Reading ``bv`` clamped to its
        last slot, as the agent once did, gave 0 to a bank more than ``max_step`` past the
        cap, where the kernels never look but a forced roll past the cap can take the
        agent: it then rolled on instead of banking a win.)"""
        return pick(game, self.sol.unit, self.V, self.Tcap, self.bank, self.forf, game.max_rolls, True, self.forced)

    # ------------------------------------------------------------------ exact values
    def bank(self, T: int) -> float:
        """W* of ending the turn with T units banked (any T)."""
        if T < self._filled:
            return float(self.bv[T])
        if self.final:
            return self.sol.final_bank_value(self.d, T)
        return self.sol.bank_value(self.a, self.b, self.fb, T)

    def roll(self, rolls: int, n: int, T: int) -> float:
        """W* of rolling n dice at total T (units) with ``rolls`` rolls used, for any T."""
        if T <= self.Tcap:
            return float(self.V[0 if self.maxr == 0 else rolls, n, T])
        s = self.sol.spec
        seg = np.array([self.bank(T + j) for j in range(s.max_step + 1)])
        return float(
            roll_past_cap(
                s.prm, s.rolls, self.fa & 1, rolls, self.maxr, n, T, seg, self.beta, self.forf, self.fA, self.fB
            )
        )

    def values(self, game: Game) -> list[tuple[Keep, float | None, float | None]]:
        """W* of every legal move of ``game``'s current decision, as
        :func:`tenk_env.solve.policy.move_values` rows ``(keep, roll on, end the turn)``."""
        return move_values(
            game,
            self.sol.unit,
            self.V,
            self.Tcap,
            self.bank,
            self.forf,
            game.max_rolls,
            True,
            self.forced,
            past_cap=self.roll,
        )


_FORCED: dict = {}


def _forced_of(sol: GameSolution, final: bool) -> tuple[float, float]:
    key = (sol.rules.hash, final)
    if key not in _FORCED:
        _FORCED[key] = sol.forced_roll(final)
    return _FORCED[key]


def turn_tables(sol: GameSolution, game: Game) -> TurnTables:
    """The :class:`TurnTables` of ``game``'s current turn (computed: callers cache them)."""
    return TurnTables(sol, state_key(sol, game))


class MoveRegret(NamedTuple):
    """One decision scored: the move made and the best move with their W*, and the regret
    (best minus made, 0 below :data:`REGRET_TOL`)."""

    keep: Keep
    end: bool
    value: float
    best_keep: Keep
    best_end: bool
    best_value: float
    regret: float


def regret_of(tables: TurnTables, game: Game, keep: Keep, end: bool) -> MoveRegret:
    """Score the move (``keep``, ``end``) at ``game``'s current decision."""
    return regret_in(tables.values(game), game, keep, end)


def regret_in(
    rows: list[tuple[Keep, float | None, float | None]], game: Game, keep: Keep, end: bool, tol: float = REGRET_TOL
) -> MoveRegret:
    """Score the move (``keep``, ``end``) against value rows of ``game``'s current decision
    (:func:`tenk_env.solve.policy.move_values` rows, from any valuation); regrets below ``tol``
    count as 0."""
    best_keep, best_end = choose(rows)
    value = best_value = None
    for k, rv, ev in rows:
        if k is best_keep or k.counts == best_keep.counts:
            best_value = ev if best_end else rv
        if k is keep or k.counts == keep.counts:
            value = ev if end else rv
    if value is None:
        raise ValueError(f"move {list(keep.dice)} {'end' if end else 'roll'} is not legal in {game!r}")
    assert best_value is not None  # choose() picks a legal move of the rows
    regret = best_value - value
    return MoveRegret(keep, bool(end), value, best_keep, best_end, best_value, regret if regret >= tol else 0.0)
