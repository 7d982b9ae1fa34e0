"""Exact solvers for Ten Thousand: the optimal bots every learned agent is measured against.

* :func:`solve_turn`: max expected points per turn (long-run average under a bust penalty)
  and the banking thresholds by dice left (:mod:`tenk_env.solve.turn`).
* :func:`solve_game`: win-probability-optimal play for two players, P(first player wins),
  the fair komi (:mod:`tenk_env.solve.game`).
* :func:`evaluate`: exact win probability of one fixed policy against another, seat by
  seat (:mod:`tenk_env.solve.evaluate`); :func:`evaluate_policies` for any deterministic
  policy, bots whose moves depend on the scores included (:mod:`tenk_env.policies.exact` adapts the
  zoo's agents).
* :func:`solve_best_response`: the policy that wins most often against a fixed one, and
  its exact win rate (:mod:`tenk_env.solve.best_response`).
* :func:`evaluate_multi`, :func:`best_response_multi`: the same for 2 to 4 players, every seat
  but one fixed (:mod:`tenk_env.solve.multi`).
* :func:`solve_equilibrium`: the symmetric equilibrium of 2 to 4 players, each maximising its
  own win probability (:mod:`tenk_env.solve.equilibrium`);
  :func:`evaluate_beside_equilibrium` (a bot beside it), :func:`best_response_beside_equilibrium`
  and :func:`equilibrium_exploitability` (the best response to it that reads every score, and
  NashConv; :mod:`tenk_env.solve.eq_seat`); :func:`fair_head_start` and
  :func:`kingmaker_census`, what it says about the game (:mod:`tenk_env.solve.eq_analysis`).
* :func:`plot_policy`: the optimal banking turn total as maps; :func:`plot_equilibrium`, the
  fair start and the kingmaker census (:mod:`tenk_env.solve.plot`).

Solutions are cached on disk by ruleset hash and the code that computes them
(:func:`tenk_env.solve.cache.result_key`; ``$TENK_CACHE`` or ``~/.cache/tenk``). The
inner loops are compiled with numba (cached too, so only the first run compiles).
"""

from tenk_env.solve.best_response import BestResponse, solve_best_response
from tenk_env.solve.cache import cache_dir
from tenk_env.solve.eq_analysis import Below, HeadStart, Kingmakers, fair_head_start, kingmaker_census
from tenk_env.solve.eq_seat import (
    Exploitability,
    SeatVsEquilibrium,
    best_response_beside_equilibrium,
    equilibrium_exploitability,
    evaluate_beside_equilibrium,
)
from tenk_env.solve.equilibrium import Equilibrium, check_equilibrium_rules, solve_equilibrium
from tenk_env.solve.evaluate import (
    EvalResult,
    ExactPolicy,
    SelfValued,
    TablePolicy,
    Tabulated,
    evaluate,
    evaluate_policies,
    hold_policy,
    maxscore_policy,
    optimal_policy,
)
from tenk_env.solve.game import GameSolution, check_exact_rules, check_game_rules, is_cached, solve_game
from tenk_env.solve.multi import MultiBestResponse, MultiEval, best_response_multi, check_multi_rules, evaluate_multi
from tenk_env.solve.plot import plot_equilibrium, plot_policy
from tenk_env.solve.spec import SolverError
from tenk_env.solve.turn import TurnSolution, solve_turn

__all__ = [
    "SolverError",
    "cache_dir",
    "solve_turn",
    "TurnSolution",
    "solve_game",
    "GameSolution",
    "check_game_rules",
    "check_exact_rules",
    "is_cached",
    "evaluate",
    "EvalResult",
    "TablePolicy",
    "maxscore_policy",
    "hold_policy",
    "plot_policy",
    "plot_equilibrium",
    "evaluate_policies",
    "ExactPolicy",
    "SelfValued",
    "Tabulated",
    "optimal_policy",
    "solve_best_response",
    "BestResponse",
    "MultiEval",
    "MultiBestResponse",
    "evaluate_multi",
    "best_response_multi",
    "check_multi_rules",
    "Equilibrium",
    "solve_equilibrium",
    "check_equilibrium_rules",
    "SeatVsEquilibrium",
    "evaluate_beside_equilibrium",
    "best_response_beside_equilibrium",
    "Exploitability",
    "equilibrium_exploitability",
    "HeadStart",
    "fair_head_start",
    "Kingmakers",
    "Below",
    "kingmaker_census",
]
