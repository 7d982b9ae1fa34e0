"""Max expected points per turn.

The turn is a finite-horizon MDP in (turn total, dice to roll, rolls used): banking adds
the turn total, a bust scores nothing. With a consecutive-bust penalty
(``bust_penalty``) turns are tied together through the bust count k, and the right
objective is the long-run average points per turn g: the average-reward optimality
equations

    g + h(k) = max over turn policies E[ points banked + penalty paid + h(k') ]

are solved by relative value iteration, with h(0) = 0. The penalty is modelled as always
paid in full (a score above the penalty; the engine never takes a score below zero), and
costs nothing to a player not yet on the board.

Turn totals are solved up to ``TURN_CAP_POINTS``; past it a state is valued as banking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.spec import P_MAXROLLS, P_MINBANK, SolverError, Spec, build_spec

__all__ = ["TurnSolution", "solve_turn"]

#: bump when the turn solver's results change, to invalidate cached solutions
TURN_VERSION = 1
#: highest turn total solved, in points: banking is optimal long before, and the chance
#: of reaching it in one turn is far below float precision
TURN_CAP_POINTS = 100_000


@dataclass
class TurnSolution:
    """Max-expected-points policy of one ruleset.

    ``values[k, f, r, n, T]``: expected further points (relative values under a bust
    penalty) of rolling n dice at turn total T (units) with r rolls used, k busts in a
    row, f = on the board. Banking a total T is worth ``T * unit``.
    """

    rules: Ruleset
    unit: int
    values: np.ndarray
    #: expected points per turn of a player on the board (the long-run average under a penalty)
    points_per_turn: float
    #: expected points banked by a player not yet on the board (0 if never)
    entry_turn_points: float
    #: relative values h(k) of k busts in a row (all 0 without a penalty)
    h: np.ndarray
    #: bust value beta_k and forfeit value used for each k
    beta: np.ndarray
    thresholds: dict = field(default_factory=dict)
    seconds: float = 0.0
    iterations: int = 0

    @property
    def tcap(self) -> int:
        return self.values.shape[-1] - 1

    def roll_value(self, k: int, on_board: bool, rolls: int, n: int, T: int) -> float:
        if T > self.tcap:
            return -np.inf
        r = rolls if self.rules.max_rolls else 0
        return float(self.values[k, int(on_board), r, n, T])


def _cap_units(spec: Spec) -> int:
    return min(8000, -(-TURN_CAP_POINTS // spec.unit))


def _dp(spec: Spec, fa: int, beta: float, forf: float, Tcap: int):
    nr, N = spec.n_rolls_dim, spec.n_dice
    V = np.zeros((nr, N + 1, Tcap + 1))
    Q = np.zeros((nr, N + 1, Tcap + 1))
    bv = np.arange(Tcap + spec.max_step + 2, dtype=np.float64) * spec.unit
    turn_k.turn_dp(spec.prm, spec.rolls, fa, Tcap, bv, beta, forf, False, True, V, bv, forf, Tcap, V, Q, -1.0, 0.0)
    return V


def thresholds_of(spec: Spec, V_on: np.ndarray) -> dict:
    """Banking thresholds by dice left after a keep: {n: (threshold points, pure)}.

    The threshold is the smallest turn total from which banking is optimal at every higher
    total; ``pure`` is False when the optimal policy also banks below it somewhere (then
    it is not a simple threshold rule).
    """
    N, unit = spec.n_dice, spec.unit
    r = 1 if spec.prm[P_MAXROLLS] > 1 else 0
    out = {}
    T = np.arange(V_on.shape[-1])
    minbank = int(spec.prm[P_MINBANK])
    for n in range(1, N + 1):
        bank = (T * unit >= V_on[r, n, :]) & (T >= minbank)
        bank[0] = False
        roll_at = np.nonzero(~bank)[0]
        thr = int(roll_at.max()) + 1 if roll_at.size else 0
        pure = not bank[:thr].any()
        out[n] = (thr * unit, bool(pure))
    return out


def solve_turn(rules: Ruleset | str, *, cache: bool = True, tol: float = 1e-9) -> TurnSolution:
    """The max-expected-points policy of a ruleset (cached on disk by the ruleset hash).

    A normal turn is solved: an instant-win roll counts as its best keep (a win is not a
    number of points), and under ``piggyback`` the maxscore agent decides a take-over by
    comparing these values. ``tol`` is the convergence tolerance of the relative values
    under a bust penalty.
    """
    rules = load_ruleset(rules)
    key = result_key(__name__, f"turn-v{TURN_VERSION}", rules.hash)
    if cache:
        got = load_arrays(key)
        if got is not None:
            return _from_arrays(rules, got)
    t0 = time.perf_counter()
    spec = build_spec(rules, for_game=False)
    Tcap = _cap_units(spec)
    Kn = rules.bust_penalty_after if rules.bust_penalty else 1
    h = np.zeros(Kn)
    pen = float(rules.bust_penalty)

    def betas(h):
        # bust with k in a row: k+1 in a row, or the penalty and a fresh count
        return (
            np.array([(-pen + h[0]) if k + 1 == Kn and pen else h[min(k + 1, Kn - 1)] for k in range(Kn)])
            if pen
            else np.zeros(Kn)
        )

    it = 0
    if pen:
        # relative value iteration: g + h(k) = E_turn(beta_k); values relative to h(0) = 0
        for it in range(1, 10_000):  # noqa: B007 (reported after the loop)
            beta = betas(h)
            E = np.array([_dp(spec, 1, beta[k], 0.0, Tcap)[0, spec.n_dice, 0] for k in range(Kn)])
            h_new = E - E[0]
            if np.max(np.abs(h_new - h)) < tol:
                h = h_new
                break
            h = h_new
        else:
            raise SolverError("relative value iteration for the bust penalty did not converge")
    beta = betas(h)
    values = np.zeros((Kn, 2, spec.n_rolls_dim, spec.n_dice + 1, Tcap + 1))
    for k in range(Kn):
        for f in (1, 0):
            if f == 0 and not rules.entry_threshold:
                values[k, 0] = values[k, 1]
                continue
            # off the board the penalty costs nothing (no banked points to lose)
            values[k, f] = _dp(spec, f, beta[k] if f else 0.0, 0.0, Tcap)
    N = spec.n_dice
    g = float(values[0, 1, 0, N, 0])
    entry = float(values[0, 0, 0, N, 0])
    sol = TurnSolution(
        rules, spec.unit, values, g, entry, h, beta, thresholds_of(spec, values[0, 1]), time.perf_counter() - t0, it
    )
    if cache:
        save_arrays(
            key, {"values": values, "h": h, "beta": beta, "meta": np.array([spec.unit, g, entry, sol.seconds, it])}
        )
    return sol


def _from_arrays(rules: Ruleset, a: dict) -> TurnSolution:
    unit, g, entry, secs, it = a["meta"]
    spec = build_spec(rules, for_game=False)
    values = a["values"]
    return TurnSolution(
        rules,
        int(unit),
        values,
        float(g),
        float(entry),
        a["h"],
        a["beta"],
        thresholds_of(spec, values[0, 1]),
        float(secs),
        int(it),
    )
