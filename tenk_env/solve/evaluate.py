"""Exact policy evaluation (issue 5, part 4): P(win) of one fixed agent against another.

A policy the evaluator can follow is either ``"optimal"`` (the game solver's policy, as
the ``optimal`` agent plays it) or a :class:`TablePolicy`: preference tables over the
within-turn state, the same for every score (``maxscore`` is one; a hold-at-N bot is
another). The evaluation is the game solver's recursion with both players' choices
fixed: each pair of mirror states is then linear and solved exactly, so the figures are
exact up to the solver's truncation tolerance (:data:`tenk_env.solve.game.EPS`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import _kernels as K
from tenk_env.solve._spec import P_END, SolverError, build_spec
from tenk_env.solve.cache import load_arrays, save_arrays
from tenk_env.solve.game import EPS, GAME_VERSION, GameSolution, _final_prm, _forced, _masks, solve_game

__all__ = ["TablePolicy", "EvalResult", "evaluate", "maxscore_policy", "hold_policy"]


@dataclass
class TablePolicy:
    """A score-independent policy: ``roll[f, r, n, T]`` preference for rolling n dice at
    total T (units) on board f, ``bank[T]`` for banking T, ``forfeit`` for a lost total."""

    name: str
    unit: int
    roll: np.ndarray
    bank: np.ndarray
    forfeit: float = 0.0

    def always_bank_from(self) -> int:
        """Smallest total from which the policy prefers banking to rolling at every higher
        total and dice count (past its table it always banks)."""
        Tt = self.roll.shape[-1]
        bank = self.bank[np.minimum(np.arange(Tt), self.bank.shape[0] - 1)]
        rolls = (self.roll > bank).any(axis=(0, 1, 2))
        idx = np.nonzero(rolls)[0]
        return int(idx.max()) + 1 if idx.size else 0


def maxscore_policy(rules: "Ruleset | str") -> TablePolicy:
    """The max-expected-points policy (no bust penalty assumed: k = 0 busts in a row)."""
    from tenk_env.solve.turn import solve_turn

    t = solve_turn(rules)
    bank = np.arange(t.values.shape[-1] + 64, dtype=np.float64) * t.unit
    return TablePolicy("maxscore", t.unit, np.ascontiguousarray(t.values[0]), bank, 0.0)


def hold_policy(rules: "Ruleset | str", hold_at: int) -> TablePolicy:
    """Bank as soon as the turn total reaches ``hold_at`` points; keep the most points."""
    rules = load_ruleset(rules)
    spec = build_spec(rules, for_game=True)
    Tt = -(-hold_at // spec.unit) + spec.max_step + 1
    T = np.arange(Tt + 1, dtype=np.float64)
    # rolling is worth its total + 1/2 unit below the hold mark and nothing above it, so
    # the bot keeps the most points and stops once it reaches hold_at
    roll = np.where(T * spec.unit < hold_at, T + 0.5, -1.0)
    roll = np.broadcast_to(roll, (2, spec.n_rolls_dim, spec.n_dice + 1, Tt + 1)).copy()
    bank = np.where(np.arange(Tt + 64) * spec.unit >= hold_at, np.arange(Tt + 64, dtype=np.float64), -2.0)
    return TablePolicy(f"hold:{hold_at}", spec.unit, roll, bank, -3.0)


@dataclass
class EvalResult:
    a: str
    b: str
    #: P(A wins) when A moves first (seat 0) / second (seat 1, holding the komi)
    p_a_first: float
    p_a_second: float
    seconds: float

    @property
    def p_a(self) -> float:
        """Seat-balanced: the average of the two seats."""
        return 0.5 * (self.p_a_first + self.p_a_second)


def _final_for(sol: GameSolution, pol: "str | TablePolicy") -> np.ndarray:
    if isinstance(pol, str):
        return sol.R
    s = sol.spec
    if s.prm[P_END] == 0:
        return np.zeros((2, 1))
    prm = _final_prm(s)
    Tt = pol.roll.shape[3] - 1
    rows = []
    for fb in (0, 1):
        # floor: its chance of an instant win when no bank can win; past its table it banks
        V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tt + 1))
        Q = np.zeros_like(V)
        K.turn_dp(prm, s.cstart, s.c_prob, s.c_kind, s.c_os, s.c_oe, s.o_p, s.o_d, fb, Tt,
                  np.zeros(Tt + s.max_step + 2), 0.0, 0.0, False, False, pol.roll[fb], pol.bank, pol.forfeit, Tt,
                  V, Q, *_forced(prm, s))
        floor = float(V[0, s.n_dice, 0])
        out = np.zeros(20_000)
        end = K.final_turn_table(prm, s.cstart, s.c_prob, s.c_kind, s.c_os, s.c_oe, s.o_p, s.o_d, fb,
                                 bool(s.rules.tie == "shared"), EPS, out.shape[0], False, pol.roll[fb], pol.bank,
                                 pol.forfeit, Tt, 0, out, floor)
        row = out[:end + 1].copy() if end >= 0 else out
        row[-1] = floor
        rows.append(row)
    R = np.zeros((2, max(len(r) for r in rows)))
    for i, r in enumerate(rows):
        R[i, :len(r)] = r
        R[i, len(r):] = r[-1]
    return R


def _as_policy(rules: Ruleset, p) -> "str | TablePolicy":
    if isinstance(p, TablePolicy):
        return p
    if p == "optimal":
        return "optimal"
    if p == "maxscore":
        return maxscore_policy(rules)
    if isinstance(p, str) and p.startswith("hold:"):
        return hold_policy(rules, int(p.split(":", 1)[1]))
    raise SolverError(f"policy {p!r}: the exact evaluator follows 'optimal', 'maxscore', 'hold:N' or a TablePolicy")


def evaluate(rules: "Ruleset | str", a="optimal", b="maxscore", *, sol: GameSolution | None = None,
             cache: bool = True) -> EvalResult:
    """Exact P(A wins) against B, seat by seat, under ``rules`` (2 players).

    Results for named policies (optimal, maxscore, hold:N) are cached on disk by ruleset
    hash: a classic evaluation takes minutes, a cached one a moment.
    """
    rules = load_ruleset(rules)
    key = None
    if cache and all(isinstance(p, str) for p in (a, b)):
        key = f"eval-v{GAME_VERSION}-{rules.hash}-{a.replace(':', '_')}-vs-{b.replace(':', '_')}"
        got = load_arrays(key)
        if got is not None:
            pf, ps, secs = got["p"]
            return EvalResult(a, b, float(pf), float(ps), float(secs))
    sol = sol or solve_game(rules)
    s = sol.spec
    pa, pb = _as_policy(rules, a), _as_policy(rules, b)
    for p in (pa, pb):
        if isinstance(p, TablePolicy) and p.unit != s.unit:
            raise SolverError(f"policy {p.name}: tables in units of {p.unit} points, the game in {s.unit}")
    t0 = time.perf_counter()
    tu = sol.target_units
    mask = _masks(s, tu, rules.komi // s.unit, grid=True)
    WA = np.zeros((2, 2, tu, tu))
    WB = np.zeros_like(WA)
    RA, RB = _final_for(sol, pa), _final_for(sol, pb)
    Tmax = tu + sol.Leps + sol.Lx + s.max_step + 4
    mk = lambda: np.zeros((s.n_rolls_dim, s.n_dice + 1, Tmax))  # noqa: E731
    V, Q, V2, Q2 = mk(), mk(), mk(), mk()
    bv, bv2 = np.zeros(Tmax + s.max_step + 2), np.zeros(Tmax + s.max_step + 2)
    dummy4, dummy1 = np.zeros((2, 1, 1, 1)), np.zeros(1)

    def parts(p):
        if isinstance(p, TablePolicy):
            return 1, p.roll, p.bank, float(p.forfeit), p.always_bank_from()
        return 0, dummy4, dummy1, 0.0, 0

    K.eval_game(s.prm, s.cstart, s.c_prob, s.c_kind, s.c_os, s.c_oe, s.o_p, s.o_d, s.max_step, mask, sol.Leps, sol.Lx,
                WA, WB, RA, RB, *parts(pa), *parts(pb), sol.W, sol.R, sol.Rsup, sol.pbmin, EPS,
                V, Q, bv, V2, Q2, bv2)
    f, k = sol.start_flag, rules.komi // s.unit
    name = lambda p: p if isinstance(p, str) else p.name  # noqa: E731
    res = EvalResult(name(pa), name(pb), float(WA[f, f, 0, k]), float(1.0 - WB[f, f, 0, k]),
                     time.perf_counter() - t0)
    if key:
        save_arrays(key, {"p": np.array([res.p_a_first, res.p_a_second, res.seconds])})
    return res
