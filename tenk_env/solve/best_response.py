"""Exact best response to a fixed policy.

With the opponent's moves fixed, the 2-player game is a one-player problem for the other
side: maximise the win probability against those moves. It is solved in the game
solver's order (decreasing score sum, each turn-start state with its mirror): the
opponent's turn at (b, a) is a fixed linear function of the responder's value at (a, b),
y = c + q (1 - x) (:func:`tenk_env.solve.evaluate.evaluate_policies` computes it), and
the responder's turn is the solver's own backward induction against the opponent's
values, x = F(1 - y), F convex piecewise linear. Newton steps on that pair (policy
iteration), then plain iteration, as in :func:`tenk_env.solve.kernels.game.solve_game`.

The responder's final turn (after the opponent reached the target) is optimal play: the
opponent has no moves left. Its turn caps are the optimal solver's (``opt_tcap``): no
final turn beats the optimal one, so banking is provably best past the same totals.

Under a bust penalty the states have no such order (a penalty lowers a score), and the best
response is found by policy iteration on the evaluator's pieces instead
(:func:`_penalty_best_response`).

The result is the ceiling against that opponent: no agent wins more often against it, so
``P(br:X beats X) - P(optimal beats X)`` is how exploitable X is beyond what minimax play
takes from it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tenk_env.closure import closure_hash
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.evaluate import (
    THETA,
    ExactPolicy,
    PenaltySide,
    SelfValued,
    TabSide,
    by_status,
    make_side,
    mover_states,
    penalty_solve,
    penalty_states,
    prefetch,
    reach_all,
    rf_optimal,
)
from tenk_env.solve.game import GameSolution, check_exact_rules, solve_game, state_masks
from tenk_env.solve.kernels import evaluation as eval_k
from tenk_env.solve.kernels import game as game_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.shared import EPS, TOL, forced_extension
from tenk_env.solve.spec import SolverError

__all__ = ["BestResponse", "solve_best_response", "br_cache_key", "BR_VERSION"]

#: bump when best-response results change, to invalidate cached solutions
BR_VERSION = 1


def br_cache_key(opponent_key: str) -> str:
    """Content key of the best response to a policy with content key ``opponent_key``."""
    return f"br({opponent_key})-{BR_VERSION}-{closure_hash(__name__)}"


@dataclass
class BestResponse:
    """The best response to ``opponent`` under one ruleset (scores in units of ``sol.unit``).

    ``W[fa, fb, a, b]``: the responder's win probability with it to move at (a, b);
    ``WB[fb, fa, b, a]``: the opponent's, with the opponent to move; ``RFB[f, b, j]``: the
    opponent's chance in its final turn from b against a leader at target + j.
    """

    rules: Ruleset
    sol: GameSolution
    opponent: str
    key: str | None
    W: np.ndarray
    WB: np.ndarray
    RFB: np.ndarray
    stats: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"br:{self.opponent}"

    @property
    def unit(self) -> int:
        return self.sol.unit

    @property
    def p_first(self) -> float:
        """P(the best response wins) when it moves first."""
        f, k = self.sol.start_flag, self.rules.komi // self.sol.unit
        return float(self.W[f, f, 0, k])

    @property
    def p_second(self) -> float:
        """P(the best response wins) when the opponent moves first (the responder holds the komi)."""
        f, k = self.sol.start_flag, self.rules.komi // self.sol.unit
        return float(1.0 - self.WB[f, f, 0, k])

    @property
    def p(self) -> float:
        """Seat-balanced: the average of the two seats."""
        return 0.5 * (self.p_first + self.p_second)

    def policy(self) -> SelfValued:
        """The responder as a policy :func:`~tenk_env.solve.evaluate.evaluate_policies` can follow."""
        return SelfValued(self.name, self.sol, self.WB, self.RFB, self.key)

    def turn_values(self, a: int, b: int, fa: int, fb: int):
        """The responder's within-turn values at turn-start state (a, b, fa, fb) (statuses:
        :meth:`GameSolution.status`): (V, bv, Tcap, value of a forfeit (of a bust too, without
        a bust penalty), forced value), the moves it chooses from, as
        :func:`~tenk_env.solve.kernels.evaluation.self_outcomes` chooses them."""
        sol, s = self.sol, self.sol.spec
        a2, fa2 = rules_k.bust_target(s.prm, a, fa)
        beta = 1.0 - float(self.WB[fb, fa2, b, a2])
        forf = 1.0 - float(self.WB[fb, fa & 1, b, a])
        Tcap = int(game_k.opt_tcap(s.prm, sol.Rsup, sol.pbmin, EPS, sol.Lx, a, b, fa, fb, beta))
        V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tcap + 1))
        Q = np.zeros_like(V)
        bv = np.zeros(Tcap + s.max_step + 2)
        fA, fB = forced_extension(s.prm, s)
        eval_k.bank_values_rf(s.prm, self.WB, self.RFB, a, b, fb, Tcap + s.max_step + 1, bv)
        turn_k.turn_dp(s.prm, s.rolls, fa & 1, Tcap, bv, beta, forf, False, True, V, bv, forf, Tcap, V, Q, fA, fB)
        return V, bv, Tcap, forf, (fA + fB * beta if fA >= 0 else None)

    def final_values(self, d: int, fa: int):
        """The responder's final turn, d units behind: optimal play (:meth:`GameSolution.final_values`)."""
        return self.sol.final_values(d, fa)


def solve_best_response(
    rules: Ruleset | str,
    opponent: ExactPolicy,
    *,
    sol: GameSolution | None = None,
    cache: bool = True,
    theta: float = THETA,
) -> BestResponse:
    """The policy that maximises the win probability against ``opponent`` (2 players), its
    exact win rate seat by seat; cached on disk by ruleset hash and the opponent's content key."""
    rules = load_ruleset(rules)
    check_exact_rules(rules)
    ok = opponent.cache_key()
    key = br_cache_key(ok) if ok else None
    disk = result_key(__name__, f"br-v{BR_VERSION}", rules.hash, key, f"{theta:g}") if cache and key else None
    if disk:
        got = load_arrays(disk)
        if got is not None:
            sol = sol or solve_game(rules)
            p1, p2, secs, pruned, pairs, its = got["meta"]
            return BestResponse(
                rules,
                sol,
                opponent.name,
                key,
                got["W"],
                got["WB"],
                got["RFB"],
                {
                    "cached": True,
                    "seconds": float(secs),
                    "pruned": float(pruned),
                    "pairs": int(pairs),
                    "max_iterations": int(its),
                },
            )
    sol = sol or solve_game(rules)
    t0 = time.perf_counter()
    W, WB, RB, stats = (_penalty_best_response if sol.penalty else _ordered_best_response)(sol, opponent, theta)
    secs = stats["seconds"] = time.perf_counter() - t0
    br = BestResponse(rules, sol, opponent.name, key, W, WB, RB, stats)
    if disk:
        save_arrays(
            disk,
            {
                "W": W,
                "WB": WB,
                "RFB": RB,
                "meta": np.array(
                    [br.p_first, br.p_second, secs, stats["pruned"], stats["pairs"], stats["max_iterations"]]
                ),
            },
        )
    return br


def _ordered_best_response(sol: GameSolution, opponent: ExactPolicy, theta: float):
    """The best response without a bust penalty, in the game solver's order (see the module
    docstring). Returns (W, WB, RFB, stats) as :class:`BestResponse` holds them."""
    rules = sol.rules
    s = sol.spec
    tu = sol.target_units
    mask = state_masks(s, tu, rules.komi // s.unit, grid=True)
    sb = make_side(opponent, sol, theta)
    reach_all(sb, sol, mask)
    J = max(sb.reach, sol.Leps + sol.Lx) + s.max_step + 2
    RA = rf_optimal(sol, J)
    RB = sb.final_table(J)
    W, WB = np.zeros((2, 2, tu, tu)), np.zeros((2, 2, tu, tu))
    Tmax = sol.t_len
    V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tmax))
    Q = np.zeros_like(V)
    bv = np.zeros(Tmax + s.max_step + 2)
    fA, fB = forced_extension(s.prm, s)
    pairs, worst, max_it, calls = 0, 0.0, 0, 0
    for level in mover_states(sol, mask):
        tabs = prefetch(sb, level, True)
        for (a, b, fa, fb), tab in zip(level, tabs):
            if isinstance(sb, TabSide):
                cB, qB, _ = sb.turn(tab, b, a, fb, fa, W, RA)
            else:
                cB, qB, _ = sb.turn(b, a, fb, fa, W, RA)
            # start from the neighbouring state solved at the level above
            x = W[fa, fb, a, b + 1] if b + 1 < tu else 0.5
            it = 0
            while True:
                it += 1
                bA = 1.0 - (cB + qB * (1.0 - x))
                vA, qA, _ = eval_k.self_value(
                    s.prm,
                    s.rolls,
                    s.max_step,
                    a,
                    b,
                    fa,
                    fb,
                    WB,
                    RB,
                    sol.Rsup,
                    sol.pbmin,
                    EPS,
                    sol.Lx,
                    bA,
                    V,
                    Q,
                    bv,
                    fA,
                    fB,
                )
                res = abs(vA - x)
                if res < TOL or it > 5000:
                    x = vA
                    break
                if it <= 8:
                    cA = vA - qA * bA
                    x = (cA + qA - qA * (cB + qB)) / (1.0 - qA * qB)
                else:
                    x = vA
            W[fa, fb, a, b] = x
            WB[fb, fa, b, a] = cB + qB * (1.0 - x)
            pairs += 1
            calls += it
            worst, max_it = max(worst, res), max(max_it, it)
    if worst > 1e3 * TOL:
        raise SolverError(
            f"ruleset {rules.name!r}: the best response to {opponent.name} did not converge "
            f"(residual {worst:.2g}); please report this ruleset"
        )
    return (
        W,
        WB,
        RB,
        {
            "cached": False,
            "pruned": sb.pruned,
            "pairs": pairs,
            "max_iterations": max_it,
            "dp_calls": calls,
            "residual": worst,
        },
    )


#: policy-iteration rounds allowed under a bust penalty (a few are needed)
MAX_ROUNDS = 100


def _penalty_best_response(sol: GameSolution, opponent: ExactPolicy, theta: float):
    """The best response under a bust penalty, by policy iteration: the responder's moves are
    chosen on the opponent's values under the previous moves (at first, optimal play's),
    both players' values follow exactly from the moves
    (:func:`~tenk_env.solve.evaluate.penalty_solve`), and the rounds stop when the values
    change by less than TOL. Each round can only raise the responder's values, and a round
    that changes no move ends it. Returns (W, WB, RFB, stats) as :class:`BestResponse` holds them."""
    s, tu = sol.spec, sol.target_units
    S = int(rules_k.n_statuses(s.prm))
    states, IDX = penalty_states(sol)
    sb = PenaltySide(opponent, sol, states, theta)
    J = max(sb.reach, sol.Leps + sol.Lx) + s.max_step + 2
    RA = by_status(rf_optimal(sol, J), S)
    RB = sb.final_table(J)
    B = sb.outcomes(RA)
    at = (states[:, 2], states[:, 3], states[:, 0], states[:, 1])
    WB = sol.W.copy()
    XA = XB = None
    sweeps = 0
    for rounds in range(1, MAX_ROUNDS + 1):  # noqa: B007 (reported after the loop)
        A = PenaltySide(SelfValued("br", sol, WB, RB), sol, states, theta).outcomes(RB)
        XA, XB, n = penalty_solve(sol, states, IDX, A, B, XA, XB)
        sweeps += n
        change = float(np.abs(XB - WB[at]).max())
        WB = np.zeros((S, S, tu, tu))
        WB[at] = XB
        if change < TOL:
            break
    else:
        raise SolverError(
            f"ruleset {sol.rules.name!r}: the best response to {opponent.name} under the bust penalty "
            f"still changed by {change:.2g} after {MAX_ROUNDS} rounds; please report this ruleset"
        )
    W = np.zeros((S, S, tu, tu))
    W[at] = XA
    return (
        W,
        WB,
        RB,
        {
            "cached": False,
            "pruned": sb.pruned,
            "pairs": len(states),
            "max_iterations": rounds,
            "rounds": rounds,
            "sweeps": sweeps,
            "residual": change,
        },
    )
