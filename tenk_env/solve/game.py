"""Win-probability-optimal play for two players.

State at the start of a turn: (own score a, opponent score b, own on-board flag fa,
opponent flag fb), scores in units (see :mod:`tenk_env.solve.spec`). ``W[fa, fb, a, b]``
is the probability that the player to move wins under optimal play by both. Within the
turn the state adds (turn total T, dice to roll n, rolls used r), solved by backward
induction over T (totals only grow). Banking a + T < target hands the opponent the
state (b, a + T, fb, 1); a bust or forfeited total hands them (b, a, fb, fa).

Reaching the target: under ``end: immediate`` banking it wins. Under ``final_round``
the opponent gets one full turn and wins by banking more than the leader's score
(``tie: first_to_target``: a tie goes to the leader, who reached the target first;
``shared``: a tie is worth 1/2); ``one_more_roll`` gives them one roll. Their chance
R[fb, d], with d the lead in units, is its own one-player backward induction.

Turn-start values of the two players depend on each other only through busts, so states
are solved by decreasing a + b, each state with its mirror (b, a) as a 2-variable fixed
point (see :func:`tenk_env.solve.kernels.game.solve_game`), to a residual of ``TOL``.
Truncation: the trigger player's turn total is followed until banking is provably best
(exact); with forced rolls (mandatory hot dice, zilch) also until banking wins surely (to
``EPS``), past which a forced roll has a closed form. A final-turn deficit with a winning
chance below ``EPS`` counts as a lost cause.

A bust penalty (``zilch``: three busts in a row cost 500) adds each player's bust count to
the state: the flags become *statuses* ``flag + 2 * busts in a row`` (see
:func:`tenk_env.solve.kernels.rules.bust_target`), so ``W`` is ``[sa, sb, a, b]``. A penalty lowers
a score, which breaks the order above: the game is then solved by value iteration, sweeps
over all states in the same order (:func:`tenk_env.solve.kernels.game.sweep_game`) until the
largest change in a sweep is below ``TOL``. After the first few sweeps the change falls 20- to
30-fold a sweep (zilch to 500-1,000), so the error left is below the last change.

Not modelled (a clear :class:`SolverError` says so): more than 2 players, piggybacking,
lose-all rolls, exact finish.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import cache_path, load_arrays, result_key, save_arrays
from tenk_env.solve.kernels import game as game_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.shared import EPS, TOL, final_prm, final_turn_chances, forced_extension, min_bust_chance, suffix_max
from tenk_env.solve.spec import (
    END_IMMEDIATE,
    P_END,
    P_ENTRY,
    P_MAXROLLS,
    P_MINBANK,
    P_PEN,
    P_PENAFTER,
    P_SHARED,
    P_TARGET,
    SolverError,
    Spec,
    build_spec,
)

__all__ = [
    "GameSolution",
    "solve_game",
    "is_cached",
    "check_game_rules",
    "check_exact_rules",
    "is_solvable",
    "off_board_scores",
    "solve_minutes",
    "GAME_VERSION",
]

GAME_VERSION = 1
#: refuse solves whose estimated work exceeds this many option evaluations (~1 ns each)
MAX_WORK = 3e12
#: refuse solves whose arrays exceed this many bytes (the machine has 24 GB, shared)
MAX_BYTES = 4 * 2**30


def check_game_rules(rules: Ruleset, n_players: int = 2) -> None:
    """Raise :class:`SolverError` if the 2-player game solver cannot play ``rules``."""
    name = f"ruleset {rules.name!r}"
    if n_players != 2:
        raise SolverError(
            f"the game solver covers 2 players (got {n_players}): with more, each state needs every "
            "opponent's score and the state space grows by a factor of the target per player; "
            "use the maxscore agent for more players"
        )
    if rules.piggyback:
        raise SolverError(
            f"{name}: piggyback adds the dice and total the last player left to every turn-start "
            "state; the game solver does not model it (set piggyback: false)"
        )
    if rules.exact_finish != "off":
        raise SolverError(
            f"{name}: exact_finish {rules.exact_finish!r} is not modelled by the game solver (set exact_finish: off)"
        )
    if rules.four_twos_lose_all:
        raise SolverError(
            f"{name}: four_twos_lose_all wipes banked scores; the game solver does not model it "
            "(set four_twos_lose_all: false)"
        )


def check_exact_rules(rules: Ruleset, n_players: int = 2) -> None:
    """:func:`check_game_rules` for the 2-player exact evaluator and best response, which cover
    what the game solver covers, a bust penalty included."""
    check_game_rules(rules, n_players)


def is_solvable(rules: Ruleset, n_players: int = 2) -> bool:
    """Whether the 2-player game solver covers ``rules`` (see :func:`check_game_rules`)."""
    try:
        check_game_rules(rules, n_players)
    except SolverError:
        return False
    return True


@dataclass
class GameSolution:
    """The solved 2-player game of one ruleset. Scores and totals are in units of ``unit`` points."""

    rules: Ruleset
    spec: Spec
    W: np.ndarray
    #: R[fb, d]: final-turn win chance of the trailing player (on board fb) when d units behind
    R: np.ndarray
    Rsup: np.ndarray
    Lx: int
    Leps: int
    pbmin: float
    stats: dict = field(default_factory=dict)
    fair: dict = field(default_factory=dict)

    @property
    def unit(self) -> int:
        return self.spec.unit

    @property
    def target_units(self) -> int:
        return int(self.spec.prm[P_TARGET])

    @property
    def t_len(self) -> int:
        """Length of a turn-total axis that holds the DP of every turn-start state.

        A turn is followed to the target plus the final round's lead cap (``Leps``), or to the
        first bankable total when the entry threshold or minimum bank lies beyond that (an
        entry threshold above the target): see :func:`kernels.game.opt_tcap`. Every kernel buffer
        indexed by a turn total is sized from here, so no ruleset can write past one."""
        s = self.spec
        reach = max(self.target_units + self.Leps, int(s.prm[P_ENTRY]), int(s.prm[P_MINBANK]))
        return reach + self.Lx + s.max_step + 4

    @property
    def start_flag(self) -> int:
        return 0 if self.rules.entry_threshold else 1

    @property
    def p_first_win(self) -> float:
        """P(the player who moves first wins) under optimal play, seat 1 holding the komi."""
        f = self.start_flag
        return float(self.W[f, f, 0, self.rules.komi // self.unit])

    @property
    def penalty(self) -> bool:
        """Whether the ruleset has a bust penalty (the state then holds both bust counts)."""
        return bool(self.spec.prm[P_PEN])

    def status(self, on_board: bool | int, busts: int = 0) -> int:
        """Index of a player's status on W's first two axes: ``flag + 2 * busts in a row``
        (the on-board flag alone without a bust penalty)."""
        after = int(self.spec.prm[P_PENAFTER])
        if not self.penalty:
            return int(on_board)
        if not 0 <= busts < after:
            raise SolverError(f"busts in a row must be 0..{after - 1} under this ruleset (got {busts})")
        return int(on_board) + 2 * int(busts)

    def win_prob(
        self,
        own: int,
        opp: int,
        own_on_board: bool = True,
        opp_on_board: bool = True,
        own_busts: int = 0,
        opp_busts: int = 0,
    ) -> float:
        """P(the player to move wins) at the start of their turn, scores in points (and, under a
        bust penalty, each player's busts in a row)."""
        a, b = self._units(own), self._units(opp)
        return float(self.W[self.status(own_on_board, own_busts), self.status(opp_on_board, opp_busts), a, b])

    def bust_values(self, a: int, b: int, fa: int, fb: int) -> tuple[float, float]:
        """(value of a bust, value of a forfeited total) for the mover at (a, b, fa, fb):
        under a bust penalty the bust counts (and may cost points) and a forfeit does not."""
        a2, fa2 = rules_k.bust_target(self.spec.prm, a, fa)
        return 1.0 - float(self.W[fb, fa2, b, a2]), 1.0 - float(self.W[fb, fa & 1, b, a])

    def _units(self, points: int) -> int:
        if points % self.unit:
            raise SolverError(f"score {points} is not a multiple of the solver's unit ({self.unit} points)")
        u = points // self.unit
        if not 0 <= u < self.target_units:
            raise SolverError(f"score {points} is outside the solved range 0..{self.rules.target - 1}")
        return u

    # ------------------------------------------------------------------ one turn's values
    def bank_value(self, a: int, b: int, fb: int, T: int) -> float:
        """The mover's win probability after banking a turn total of T units at state
        (a, b, ., fb), for any T: the formula of :func:`kernels.game.game_bank_values`, which
        fills the tables only up to the DP's cap (the regret analysis needs it past the cap)."""
        s = a + T
        if s < self.target_units:
            return 1.0 - float(self.W[fb, 1, b, s])
        if self.spec.prm[P_END] == END_IMMEDIATE:
            return 1.0
        return 1.0 - float(self.R[fb & 1, min(s - b, self.R.shape[1] - 1)])

    def final_bank_value(self, d: int, T: int) -> float:
        """The final-turn player's win probability after banking T units, d units behind."""
        if T > d:
            return 1.0
        return 0.5 if (T == d and bool(self.spec.prm[P_SHARED])) else 0.0

    def forced_roll(self, final: bool = False) -> tuple[float, float]:
        """(fA, fB): a forced roll past the DP's cap is worth fA + fB * beta (fA < 0: no forced
        rolls under this ruleset); ``final`` for the trailing player's final turn."""
        s = self.spec
        return forced_extension(final_prm(s) if final else s.prm, s)

    def turn_values(self, a: int, b: int, fa: int, fb: int):
        """Optimal within-turn values of the mover at turn-start state (a, b, fa, fb) (units;
        fa, fb statuses, see :meth:`status`).

        Returns (V[r, n, T] value of rolling, bv[T] value of banking T, Tcap, beta = value of
        a bust (and of a forfeit, without a bust penalty), value of a forced roll past Tcap or None).
        """
        s = self.spec
        beta, forf = self.bust_values(a, b, fa, fb)
        Tcap = int(game_k.opt_tcap(s.prm, self.Rsup, self.pbmin, EPS, self.Lx, a, b, fa, fb, beta))
        V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tcap + 1))
        Q = np.zeros_like(V)
        bv = np.zeros(Tcap + s.max_step + 2)
        game_k.state_value_f(
            s.prm,
            s.rolls,
            self.W,
            self.R,
            self.Rsup,
            self.pbmin,
            EPS,
            self.Lx,
            s.max_step,
            a,
            b,
            fa,
            fb,
            beta,
            forf,
            not self.penalty,
            V,
            Q,
            bv,
            *forced_extension(s.prm, s),
        )
        fA, fB = forced_extension(s.prm, s)
        return V, bv, Tcap, beta, (fA + fB * beta if fA >= 0 else None)

    def final_values(self, d: int, fa: int):
        """Optimal values of a final turn d units behind the leader, as :meth:`turn_values`."""
        s = self.spec
        prm = final_prm(s)
        Tcap = max(d + 1, int(rules_k.bankable_from(prm, fa)))
        nr = max(1, int(prm[P_MAXROLLS]))
        V = np.zeros((nr, s.n_dice + 1, Tcap + 1))
        Q = np.zeros_like(V)
        T = np.arange(Tcap + s.max_step + 2)
        bv = np.where(T > d, 1.0, np.where((T == d) & bool(prm[P_SHARED]), 0.5, 0.0))
        turn_k.turn_dp(
            prm, s.rolls, fa, Tcap, bv, 0.0, 0.0, False, True, V, bv, 0.0, Tcap, V, Q, *forced_extension(prm, s)
        )
        fA, _ = forced_extension(prm, s)
        return V, bv, Tcap, 0.0, (fA if fA >= 0 else None)


def estimate(spec: Spec, Leps: int) -> tuple[float, float]:
    """(option evaluations, bytes) a solve of this spec would take, roughly."""
    tu = int(spec.prm[P_TARGET])
    flags = 1 if not spec.rules.entry_threshold else 1.05
    depth = tu / 2 + (Leps / 2 if spec.prm[P_END] != END_IMMEDIATE else 0)
    S = int(rules_k.n_statuses(spec.prm))
    if spec.prm[P_PEN]:
        # every state once per sweep, one induction each; the free-roll cap keeps turns short
        flags *= (S / 2) ** 2 * EXPECTED_SWEEPS / 2.5
        depth = tu / 2 + min(Leps, 100)
    work = tu * tu * flags * depth * len(spec.o_p) * spec.n_rolls_dim * 2.5
    mem = S * S * tu * tu * 8 + 2 * spec.n_rolls_dim * (spec.n_dice + 1) * (tu + Leps) * 8
    return work, mem


def solve_minutes(rules: Ruleset) -> float:
    """The solver's own estimate of the minutes :func:`solve_game` takes on ``rules`` on this
    project's 2-core machine, roughly (classic: 0.7 estimated, 1-2 measured)."""
    spec = build_spec(rules, for_game=True)
    R, _ = final_turn_chances(spec)
    work, _ = estimate(spec, R.shape[1])
    return work / 1e9 / 60


def off_board_scores(spec: Spec, tu: int, komi_u: int) -> list[int]:
    """The scores (units) a player not yet on the board can have: 0, the komi, and under a
    bust penalty what penalties leave of the komi."""
    pen = int(spec.prm[P_PEN])
    offs = {0, komi_u} | ({komi_u - j * pen for j in range(komi_u // pen + 1)} if pen else set())
    return sorted(offs & set(range(tu)))


def state_masks(spec: Spec, tu: int, komi_u: int, grid: bool) -> np.ndarray:
    """The turn-start states to solve: the on-board grid (``grid``), and with an entry threshold
    the scores a player not yet on the board can have: 0, the komi, and under a bust penalty
    what penalties leave of the komi."""
    S = int(rules_k.n_statuses(spec.prm))
    on, off = np.arange(1, S, 2), np.arange(0, S, 2)
    mask = np.zeros((S, S, tu, tu), dtype=np.bool_)
    if grid:
        mask[np.ix_(on, on)] = True
    if spec.rules.entry_threshold:
        offs = off_board_scores(spec, tu, komi_u)
        for s0 in offs:
            mask[np.ix_(off, on, np.array([s0]), np.arange(tu))] = True
            mask[np.ix_(on, off, np.arange(tu), np.array([s0]))] = True
            for s1 in offs:
                mask[np.ix_(off, off, np.array([s0]), np.array([s1]))] = True
    return mask


#: the game solve runs as this many slices of score levels, returning to Python between them
SLICES = 100


#: value-iteration sweeps allowed under a bust penalty before the solve gives up (zilch takes 14)
MAX_SWEEPS = 300


def _run(sol: GameSolution, mask: np.ndarray, W: np.ndarray, progress=None) -> np.ndarray:
    if sol.penalty:
        return _sweeps(sol, mask, W, progress)
    s = sol.spec
    Tmax = sol.t_len
    V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tmax))
    Q = np.zeros_like(V)
    bv = np.zeros(Tmax + s.max_step + 2)
    stats = np.zeros(4)
    for hi, lo, done in _slices(2 * sol.target_units - 2):
        game_k.solve_game(
            s.prm, s.rolls, W, mask, sol.R, sol.Rsup, sol.pbmin, EPS, sol.Lx, s.max_step, TOL, V, Q, bv, stats, hi, lo
        )
        if progress is not None:
            progress(done)
    if stats[2] > 1e3 * TOL:
        raise SolverError(
            f"ruleset {s.rules.name!r}: the turn-start fixed point did not converge "
            f"(residual {stats[2]:.2g}); please report this ruleset"
        )
    return stats


def _slices(top: int):
    """(highest level, lowest level, share of the work done after it) of each slice of the
    score levels top..0, slices of about equal work (see :data:`SLICES`)."""
    # levels a + b hold about min(k, 2 tu - k) states each: slices of equal work, not of equal levels
    weight = np.minimum(np.arange(top + 1), top + 1 - np.arange(top + 1)) + 1.0
    done = np.cumsum(weight[::-1])
    hi = top
    for c in np.unique(np.searchsorted(done, done[-1] * np.arange(1, SLICES + 1) / SLICES)):
        lo = top - int(min(c, top))
        if lo <= hi:
            yield hi, lo, float(done[top - lo] / done[-1])
            hi = lo - 1


def free_roll_table(sol: GameSolution) -> tuple[np.ndarray, float]:
    """(table, bust chance) for :func:`kernels.game.free_roll_values`, or an empty table where it
    does not apply."""
    s = sol.spec
    if not game_k.free_roll_applies(s.prm, float(s.p_bust[s.n_dice])) or s.n_dice < 2:
        return np.zeros((0, 0)), 0.0
    free = np.zeros((2, sol.R.shape[1] + s.max_step + 2))
    game_k.free_roll_values(s.prm, s.rolls, sol.R, free)
    return free, float(s.p_bust[1 : s.n_dice].min())


def _sweeps(sol: GameSolution, mask: np.ndarray, W: np.ndarray, progress=None) -> np.ndarray:
    """Value iteration under a bust penalty (see the module docstring); progress counts each
    sweep as its share of :data:`EXPECTED_SWEEPS`, and stats[3] the sweeps made."""
    s = sol.spec
    free, pb_free = free_roll_table(sol)
    W[mask] = 0.5
    stats = np.zeros(4)
    for sweep in range(MAX_SWEEPS):
        st = np.zeros(4)
        for hi, lo, done in _slices(2 * sol.target_units - 2):
            game_k.sweep_game(
                s.prm,
                s.rolls,
                W,
                mask,
                sol.R,
                sol.Rsup,
                sol.pbmin,
                EPS,
                sol.Lx,
                s.max_step,
                sol.t_len,
                free,
                pb_free,
                TOL / 100,
                st,
                hi,
                lo,
            )
            if progress is not None:
                progress(min(0.99, (sweep + done) / EXPECTED_SWEEPS))
        stats[0] = st[0]
        stats[1] += st[1]
        stats[2] = st[2]
        stats[3] = sweep + 1
        if st[2] < TOL:
            return stats
    raise SolverError(
        f"ruleset {s.rules.name!r}: value iteration under the bust penalty still changed W by "
        f"{stats[2]:.2g} after {MAX_SWEEPS} sweeps: busts in a row are so likely (an entry threshold "
        f"of {s.rules.entry_threshold} that a turn rarely reaches?) that the sweeps converge too slowly; "
        "lower entry_threshold, or set bust_penalty: 0"
    )


#: sweeps a bust-penalty solve usually takes (for its progress fraction; zilch: 14)
EXPECTED_SWEEPS = 14


def fair_komi(sol: GameSolution) -> dict:
    """The komi (points for seat 1) that makes P(first player wins) closest to 1/2.

    P(first wins) falls as the komi grows. Without an entry threshold every komi is read
    off the solved grid (W[0, k]); with one, the off-board lines for each candidate komi
    are re-solved on a copy (the on-board grid does not depend on the komi).
    """
    f, tu = sol.start_flag, sol.target_units

    if not sol.rules.entry_threshold:

        def p(k):
            return float(sol.W[f, f, 0, k])
    else:
        memo = {}

        def p(k):
            if k not in memo:
                W = sol.W.copy()
                _run(sol, state_masks(sol.spec, tu, k, grid=False), W)
                memo[k] = float(W[0, 0, 0, k])
            return memo[k]

    lo, hi = 0, 1
    if p(0) <= 0.5:
        return {"komi": 0, "p_first": p(0), "candidates": {0: p(0)}}
    while hi < tu - 1 and p(hi) > 0.5:
        lo, hi = hi, min(2 * hi, tu - 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if p(mid) > 0.5:
            lo = mid
        else:
            hi = mid
    best = min((lo, hi), key=lambda k: abs(p(k) - 0.5))
    u = sol.unit
    return {"komi": best * u, "p_first": p(best), "candidates": {lo * u: p(lo), hi * u: p(hi)}}


def _cache_key(rules: Ruleset) -> str:
    return result_key(__name__, f"game-v{GAME_VERSION}", rules.hash)


def is_cached(rules: Ruleset | str) -> bool:
    """Whether :func:`solve_game` would read ``rules``' solution from the disk cache (a solve
    that is not cached takes seconds at a small target, minutes on classic)."""
    return cache_path(_cache_key(load_ruleset(rules))).is_file()


def solve_game(rules: Ruleset | str, *, cache: bool = True, with_fair_komi: bool = True, progress=None) -> GameSolution:
    """Solve the 2-player game of ``rules`` (cached on disk by the ruleset hash).
    ``progress(fraction)``, if given, is called as the solve of the turn-start states goes on
    (the fair komi's re-solves, seconds, come after it)."""
    rules = load_ruleset(rules)
    check_game_rules(rules)
    spec = build_spec(rules, for_game=True)
    key = _cache_key(rules)
    if cache:
        got = load_arrays(key)
        if got is not None and (not with_fair_komi or "fair" in got):
            return _from_arrays(rules, spec, got)
    t0 = time.perf_counter()
    tu = int(spec.prm[P_TARGET])
    # forced rolls past the caps take a closed form (see kernels.rules.forced_value), so no
    # extension of the turn totals is needed; Lx stays in the kernels' signatures as 0
    Lx = 0
    R, Rsup = final_turn_chances(spec)
    Leps = R.shape[1]
    work, mem = estimate(spec, Leps)
    if mem > MAX_BYTES or work > MAX_WORK:
        raise SolverError(
            f"ruleset {rules.name!r}: target {rules.target} in units of {spec.unit} points gives {tu}x{tu} "
            f"turn-start states; the solve would need about {mem / 2**30:.1f} GB and {work / 1e9 / 60:.0f}+ minutes "
            f"on this machine (limits {MAX_BYTES / 2**30:.0f} GB, {MAX_WORK / 1e9 / 60:.0f} minutes); "
            "lower the target or coarsen the scoring values (their common divisor sets the unit)"
        )
    S = int(rules_k.n_statuses(spec.prm))
    sol = GameSolution(rules, spec, np.zeros((S, S, tu, tu)), R, Rsup, int(Lx), int(Leps), min_bust_chance(spec))
    stats = _run(sol, state_masks(spec, tu, rules.komi // spec.unit, grid=True), sol.W, progress)
    if not rules.entry_threshold:
        # flags play no part without an entry threshold: every view is the on-board one
        on = np.arange(S) | 1
        sol.W[:] = sol.W[np.ix_(on, on)]
    sol.stats = {
        "pairs": int(stats[0]),
        "dp_calls": int(stats[1]),
        "residual": float(stats[2]),
        "max_iterations": int(stats[3]),
        "sweeps": int(stats[3]) if sol.penalty else 0,
        "seconds": time.perf_counter() - t0,
        "Lx": int(Lx),
        "Leps": int(Leps),
        "eps": EPS,
        "tol": TOL,
    }
    if with_fair_komi:
        t1 = time.perf_counter()
        sol.fair = fair_komi(sol)
        sol.stats["fair_seconds"] = time.perf_counter() - t1
    if cache:
        arrays = {
            "W": sol.W,
            "R": R,
            "meta": np.array([Lx, Leps, sol.pbmin, stats[0], stats[1], stats[2], stats[3], sol.stats["seconds"]]),
        }
        if sol.fair:
            arrays["fair"] = np.array(
                [sol.fair["komi"], sol.fair["p_first"]] + [x for kv in sol.fair["candidates"].items() for x in kv]
            )
        save_arrays(key, arrays)
    return sol


def _from_arrays(rules: Ruleset, spec: Spec, a: dict) -> GameSolution:
    Lx, Leps, pbmin, pairs, calls, res, its, secs = a["meta"]
    R = a["R"]
    sol = GameSolution(rules, spec, a["W"], R, suffix_max(R), int(Lx), int(Leps), float(pbmin))
    sol.stats = {
        "pairs": int(pairs),
        "dp_calls": int(calls),
        "residual": float(res),
        "max_iterations": int(its),
        "sweeps": int(its) if sol.penalty else 0,
        "seconds": float(secs),
        "Lx": int(Lx),
        "Leps": int(Leps),
        "eps": EPS,
        "tol": TOL,
        "cached": True,
    }
    if "fair" in a:
        f = a["fair"]
        sol.fair = {
            "komi": int(f[0]),
            "p_first": float(f[1]),
            "candidates": {int(f[i]): float(f[i + 1]) for i in range(2, len(f), 2)},
        }
    return sol
