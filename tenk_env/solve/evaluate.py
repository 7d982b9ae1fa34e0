"""Exact policy evaluation: P(win) of one fixed agent against another, seat by seat.

:func:`evaluate_policies` follows any two deterministic :class:`ExactPolicy`
through the game solver's recursion with both players' moves fixed: turn-start states
by decreasing score sum, each with its mirror (the other player to move at the swapped
scores), which a bust links linearly, so each pair is solved exactly. Two kinds:

* :class:`SelfValued`: chooses by backward induction on value arrays, as the ``optimal``
  agent does on the game solution (:func:`optimal_policy`); a best response is another
  (:mod:`tenk_env.solve.best_response`).
* :class:`Tabulated`: a bot whose moves, which may depend on both scores, are asked of
  the bot itself at every state the computation reaches (:mod:`tenk_env.policies.exact` adapts the
  zoo's bots through their batched forms; :class:`TableTabulated` follows a
  :class:`TablePolicy`, preference tables the same for every score).

:func:`evaluate` is the front end for preference tables (``"optimal"``, ``"maxscore"``,
``"hold:N"`` or a :class:`TablePolicy`) on the same engine. The kernels' own table path
(``eval_game``) stays as ``_evaluate_tables``, an independent check where it is exact
(tests/solve/test_exact.py).

Tabulation: from each turn-start situation the bot's moves are followed forward over
(rolls used, dice to roll, turn total), one representative roll per class of rolls with
the same keeps (the solver's classes, :func:`class_rolls`). States a turn reaches with
probability below ``theta`` are pruned and valued 0; the chance of reaching one is
reported (``EvalResult.stats["pruned"]``, the largest over all turns), so a result is
exact to within that per turn, on top of the game solver's truncation (:data:`EPS`).
A bot may say that its moves depend on the situation only through a key
(:meth:`Tabulated.situation_key`): situations with equal keys then share one tabulation.
Final turns (the opponent reached the target) are tabulated the same way; a fixed bot's
final turn may depend on both scores, so its chances are kept by both scores
(:func:`final_chances`), not only by the lead as the optimal player's are.

Under a bust penalty each player's busts in a row join the state (statuses, as in
:mod:`tenk_env.solve.game`) and a penalty lowers a score, so no order of the states makes each
follow from solved ones. A fixed policy's turn is a Markov chain whose outcome (the total it
banks, a bust, a forfeit, an instant win) does not depend on the values it leads to, so
:func:`evaluate_penalty` plays each side's turn forward once at every state and then sweeps the
linear system of the win chances to convergence (:func:`penalty_solve`).
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections import OrderedDict, defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from tenk_env.closure import closure_hash
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import game as _game
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.game import GAME_VERSION, GameSolution, check_exact_rules, off_board_scores, solve_game, state_masks
from tenk_env.solve.kernels import evaluation as eval_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.shared import EPS, TOL, final_prm, forced_extension
from tenk_env.solve.spec import (
    BUST,
    END_ONE_MORE_ROLL,
    NORMAL,
    P_END,
    P_MAXROLLS,
    P_SHARED,
    P_ZILCH,
    WIN,
    ZILCH,
    SolverError,
    Spec,
    build_spec,
)
from tenk_env.solve.turn import solve_turn
from tenk_env.tables import get_tables

__all__ = [
    "TablePolicy",
    "EvalResult",
    "evaluate",
    "maxscore_policy",
    "hold_policy",
    "ExactPolicy",
    "SelfValued",
    "Tabulated",
    "Tabulation",
    "optimal_policy",
    "optimal_key",
    "evaluate_policies",
    "tabulate",
    "class_rolls",
    "final_chances",
    "THETA",
    "TableTabulated",
    "eval_cache_key",
    "cached_eval",
]


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


def maxscore_policy(rules: Ruleset | str) -> TablePolicy:
    """The max-expected-points policy (no bust penalty assumed: k = 0 busts in a row)."""
    t = solve_turn(rules)
    bank = np.arange(t.values.shape[-1] + 64, dtype=np.float64) * t.unit
    return TablePolicy("maxscore", t.unit, np.ascontiguousarray(t.values[0]), bank, 0.0)


def hold_policy(rules: Ruleset | str, hold_at: int) -> TablePolicy:
    """Bank as soon as the turn total reaches ``hold_at`` points; keep the most points."""
    rules = load_ruleset(rules)
    spec = build_spec(rules, for_game=True)
    Tt = -(-hold_at // spec.unit) + spec.max_step + 1
    T = np.arange(Tt + 1, dtype=np.float64)
    # Every preference grows with the total, so the bot keeps the most points (as the
    # hold:N agent does), also above the mark where it may not bank yet (entry threshold);
    # from the mark on, banking a total is preferred to rolling it on.
    roll = np.where(T * spec.unit < hold_at, T + 0.5, T)
    roll = np.broadcast_to(roll, (2, spec.n_rolls_dim, spec.n_dice + 1, Tt + 1)).copy()
    Tb = np.arange(Tt + 64, dtype=np.float64)
    bank = np.where(Tb * spec.unit >= hold_at, Tb + 0.25, -2.0)
    return TablePolicy(f"hold:{hold_at}", spec.unit, roll, bank, -3.0)


@dataclass
class EvalResult:
    a: str
    b: str
    #: P(A wins) when A moves first (seat 0) / second (seat 1, holding the komi)
    p_a_first: float
    p_a_second: float
    seconds: float
    #: how it was computed: "cached", "pruned" (largest chance per turn of reaching a state
    #: the tabulation pruned), "tabulations"... (evaluate_policies only)
    stats: dict = field(default_factory=dict)

    @property
    def p_a(self) -> float:
        """Seat-balanced: the average of the two seats."""
        return 0.5 * (self.p_a_first + self.p_a_second)


def _final_for(sol: GameSolution, pol: str | TablePolicy) -> np.ndarray:
    if isinstance(pol, str):
        return sol.R
    s = sol.spec
    if s.prm[P_END] == 0:
        return np.zeros((2, 1))
    prm = final_prm(s)
    Tt = pol.roll.shape[3] - 1
    rows = []
    for fb in (0, 1):
        # floor: its chance of an instant win when no bank can win; past its table it banks
        V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tt + 1))
        Q = np.zeros_like(V)
        turn_k.turn_dp(
            prm,
            s.rolls,
            fb,
            Tt,
            np.zeros(Tt + s.max_step + 2),
            0.0,
            0.0,
            False,
            False,
            pol.roll[fb],
            pol.bank,
            pol.forfeit,
            Tt,
            V,
            Q,
            *forced_extension(prm, s),
        )
        floor = float(V[0, s.n_dice, 0])
        out = np.zeros(20_000)
        # The policy ignores the lead: past a total that beats it, it may still roll on (and
        # bust), so its final turn is followed until it banks everywhere, not only to the lead.
        end = turn_k.final_turn_table(
            prm,
            s.rolls,
            fb,
            bool(s.rules.tie == "shared"),
            EPS,
            out.shape[0],
            False,
            pol.roll[fb],
            pol.bank,
            pol.forfeit,
            Tt,
            pol.always_bank_from(),
            out,
            floor,
        )
        row = out[: end + 1].copy() if end >= 0 else out
        row[-1] = floor
        rows.append(row)
    R = np.zeros((2, max(len(r) for r in rows)))
    for i, r in enumerate(rows):
        R[i, : len(r)] = r
        R[i, len(r) :] = r[-1]
    return R


def _as_policy(rules: Ruleset, p) -> str | TablePolicy:
    if isinstance(p, TablePolicy):
        return p
    if p == "optimal":
        return "optimal"
    if p == "maxscore":
        if rules.bust_penalty:
            raise SolverError(
                f"ruleset {rules.name!r}: under a bust penalty maxscore's moves depend on its busts in "
                "a row, which its preference table leaves out; evaluate the agent itself "
                "(tenk_env.policies.exact.exact_eval, tenk solve eval)"
            )
        return maxscore_policy(rules)
    if isinstance(p, str) and p.startswith("hold:"):
        return hold_policy(rules, int(p.split(":", 1)[1]))
    raise SolverError(f"policy {p!r}: the exact evaluator follows 'optimal', 'maxscore', 'hold:N' or a TablePolicy")


def _evaluate_tables(rules: Ruleset, a="optimal", b="maxscore", *, sol: GameSolution | None = None) -> EvalResult:
    """The evaluation of preference tables on the kernels' ``eval_game``: kept as an independent check of
    :func:`evaluate_policies` (tests/solve/test_exact.py). It assumes that a table policy banks
    once it reaches the target under ``end: immediate`` and past a lead of ``Leps``, which
    ``maxscore`` (blind to the scores) does not always do; :func:`evaluate` is exact there."""
    sol = sol or solve_game(rules)
    s = sol.spec
    pa, pb = _as_policy(rules, a), _as_policy(rules, b)
    for p in (pa, pb):
        if isinstance(p, TablePolicy) and p.unit != s.unit:
            raise SolverError(f"policy {p.name}: tables in units of {p.unit} points, the game in {s.unit}")
    t0 = time.perf_counter()
    tu = sol.target_units
    mask = state_masks(s, tu, rules.komi // s.unit, grid=True)
    WA = np.zeros((2, 2, tu, tu))
    WB = np.zeros_like(WA)
    RA, RB = _final_for(sol, pa), _final_for(sol, pb)
    Tmax = sol.t_len
    mk = lambda: np.zeros((s.n_rolls_dim, s.n_dice + 1, Tmax))  # noqa: E731
    V, Q, V2, Q2 = mk(), mk(), mk(), mk()
    bv, bv2 = np.zeros(Tmax + s.max_step + 2), np.zeros(Tmax + s.max_step + 2)
    dummy4, dummy1 = np.zeros((2, 1, 1, 1)), np.zeros(1)

    def parts(p):
        if isinstance(p, TablePolicy):
            return 1, p.roll, p.bank, float(p.forfeit), p.always_bank_from()
        return 0, dummy4, dummy1, 0.0, 0

    eval_k.eval_game(  # type: ignore[call-arg]  # numba's Dispatcher stub: __call__ takes no arguments
        s.prm,
        s.rolls,
        s.max_step,
        mask,
        sol.Leps,
        sol.Lx,
        WA,
        WB,
        RA,
        RB,
        *parts(pa),
        *parts(pb),
        sol.W,
        sol.R,
        sol.Rsup,
        sol.pbmin,
        EPS,
        V,
        Q,
        bv,
        V2,
        Q2,
        bv2,
    )
    f, k = sol.start_flag, rules.komi // s.unit
    name = lambda p: p if isinstance(p, str) else p.name  # noqa: E731
    return EvalResult(name(pa), name(pb), float(WA[f, f, 0, k]), float(1.0 - WB[f, f, 0, k]), time.perf_counter() - t0)


# ============================================================================ any deterministic policy
#: within-turn states reached with a lower probability are pruned (see the module docstring)
THETA = 1e-15
#: bump when evaluate_policies' results change, to invalidate cached evaluations
EXACT_VERSION = 1
#: bytes of tabulations kept in memory per policy (the rest are recomputed when needed again)
TAB_BYTES = 256 * 2**20
#: situations tabulated together: one pass over the turn totals serves them all
TAB_CHUNK = 256
#: a turn still running past this many units with probability >= theta is refused (a bot
#: that never banks would otherwise be followed for ever)
T_LIMIT = 1 << 16


def class_rolls(spec: Spec) -> list[list[tuple[int, ...]]]:
    """The sorted rolls of each class of a game spec (``build_spec(rules, for_game=True)``):
    rolls offering the same (points, dice used) keeps, grouped exactly as the spec groups them."""
    tables = get_tables(spec.rules)
    out: list[list[tuple[int, ...]]] = []
    for n in range(1, spec.n_dice + 1):
        groups: dict = defaultdict(list)
        for dice in itertools.combinations_with_replacement(range(1, 7), n):
            key: tuple[int, tuple[tuple[int, int], ...]]
            info = tables.rolls[dice]
            if info.bust:
                key = (BUST, ())
            elif info.zilch:
                key = (ZILCH, ())
            elif info.instant_win:
                key = (WIN, ())
            else:
                key = (NORMAL, tuple(sorted({(k.points, k.n) for k in info.keeps}, key=lambda o: (-o[0], o[1]))))
            groups[key].append(dice)
        out.extend(groups[k] for k in sorted(groups))
    # the grouping restates build_spec's: check it class by class against the spec's arrays
    ok = len(out) == len(spec.c_prob)
    for c, rolls in enumerate(out if ok else []):
        info = tables.rolls[rolls[0]]
        opts = sorted({(k.points // spec.unit, k.n) for k in info.keeps}, key=lambda o: (-o[0], o[1]))
        if spec.c_kind[c] != NORMAL:
            opts = []
        ok = ok and opts == list(zip(spec.o_p[spec.c_os[c] : spec.c_oe[c]], spec.o_d[spec.c_os[c] : spec.c_oe[c]]))
    if not ok:
        raise AssertionError("class_rolls: the spec's classes changed; keep this grouping in step with build_spec")
    return out


def rf_optimal(sol: GameSolution, J: int) -> np.ndarray:
    """The optimal final turn as a both-scores table: RF[f, b, j] = R[f, target + j - b]."""
    tu = sol.target_units
    L = sol.R.shape[1]
    d = np.minimum(tu + np.arange(J)[None, :] - np.arange(tu)[:, None], L - 1)
    return np.ascontiguousarray(sol.R[:, d])


class ExactPolicy:
    """A deterministic 2-player policy that :func:`evaluate_policies` can follow."""

    name: str = "policy"

    def cache_key(self) -> str | None:
        """Content key of the policy for on-disk caches (None: results are not cached)."""
        return None


class SelfValued(ExactPolicy):
    """Chooses every move by backward induction on value arrays, with the kernels' tie-break
    (:func:`tenk_env.solve.policy.pick` plays it): ``W[fb, fa, b, a]`` is the opponent's win
    chance with the opponent to move, ``RF[fb, b, s - target]`` its final-turn chance. Its
    own final turn is the optimal one (the opponent's moves no longer matter then).
    ``optimal`` is the case W = the game solution; a best response is another."""

    def __init__(self, name: str, sol: GameSolution, W: np.ndarray, RF: np.ndarray, key: str | None = None):
        self.name, self.sol, self.W, self.RF, self._key = name, sol, W, RF, key

    def cache_key(self) -> str | None:
        return self._key


def optimal_key() -> str:
    """The content key of the optimal policy (the game solution of the ruleset in the same key)."""
    return f"optimal-{GAME_VERSION}-{closure_hash(_game.__name__)}"


def optimal_policy(sol: GameSolution) -> SelfValued:
    """The ``optimal`` agent's policy, from a game solution."""
    s = sol.spec
    RF = rf_optimal(sol, sol.R.shape[1] + s.max_step + 2)
    return SelfValued("optimal", sol, sol.W, RF, optimal_key())


class Tabulated(ExactPolicy):
    """A deterministic bot whose moves are asked of the bot itself (subclasses implement
    :meth:`decide`; :mod:`tenk_env.policies.exact` adapts the zoo bots)."""

    def prepare(self, spec: Spec) -> None:
        """Called once per evaluation, before any :meth:`decide`."""

    def situation_key(self, a: int, b: int, fa: int, fb: int, final: bool) -> Hashable:
        """Situations with equal keys must get equal moves at every within-turn state: they
        then share one tabulation. The default keys every situation apart (always right)."""
        return (a, b, fa, fb, final)

    def decide(
        self, sits: np.ndarray, k: np.ndarray, r: np.ndarray, n: np.ndarray, T: int, c: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Moves at many states at once. State i: the situation ``sits[k[i]]`` = (own score,
        opponent's score, own status, opponent's, final turn), scores in units, a status the
        on-board flag plus twice the busts in a row (:meth:`GameSolution.status`); ``r[i]``
        rolls made before this one, ``n[i]`` dice rolled, turn total ``T`` units before the
        keep, the roll one of class ``c[i]`` (:func:`class_rolls`). Returns (points kept,
        dice kept, end the turn) per state."""
        raise NotImplementedError


@dataclass
class Tabulation:
    """A policy's moves over one turn: ``dec[rows[r, n, T], j]`` = 2 * option + end for the
    j-th class of n dice (-1 rows: not reached); ``pruned``: the chance of a pruned state."""

    rows: np.ndarray
    dec: np.ndarray
    pruned: float

    @property
    def Tt(self) -> int:
        return self.rows.shape[2] - 1

    @property
    def nbytes(self) -> int:
        return self.rows.nbytes + self.dec.nbytes


def tabulate(pol: Tabulated, spec: Spec, sits: np.ndarray, theta: float = THETA) -> list[Tabulation]:
    """The moves of ``pol`` over the turns of situations ``sits`` (rows as in :meth:`Tabulated.decide`)."""
    sits = np.asarray(sits, np.int64).reshape(-1, 5)
    out: list[Tabulation] = []
    for i in range(0, len(sits), TAB_CHUNK):
        out.extend(_tabulate_chunk(pol, spec, sits[i : i + TAB_CHUNK], theta))
    return out


def _tabulate_chunk(pol: Tabulated, spec: Spec, sits: np.ndarray, theta: float) -> list[Tabulation]:
    Kn, N, nr = len(sits), spec.n_dice, spec.n_rolls_dim
    C = int(np.diff(spec.cstart).max())
    z = int(spec.prm[P_ZILCH])
    step = max(spec.max_step, z) + 1
    one_more = spec.prm[P_END] == END_ONE_MORE_ROLL
    maxr_k = np.where((sits[:, 4] != 0) & one_more, 1, spec.prm[P_MAXROLLS]).astype(np.int64)
    Ta = 512
    mass = np.zeros((Kn, nr, N + 1, Ta))
    rows = np.full((Kn, nr, N + 1, Ta), -1, np.int32)
    mass[:, 0, N, 0] = 1.0
    pruned = np.zeros(Kn)
    width = Kn * nr * N
    sel_k, sel_r, sel_n = (np.zeros(width, np.int64) for _ in range(3))
    e_sel, e_c = np.zeros(width * C, np.int64), np.zeros(width * C, np.int64)
    dec = np.full((4 * width, C), -1, np.int16)
    nrows, hi, T = 0, 0, 0
    while T <= hi:
        if T + step >= Ta:
            if Ta >= T_LIMIT:
                raise SolverError(
                    f"policy {pol.name}: a turn still runs past {T * spec.unit:,} points with "
                    f"probability >= {theta:g}; the exact evaluator follows turns that end"
                )
            grow = Ta
            mass = np.concatenate([mass, np.zeros((Kn, nr, N + 1, grow))], axis=3)
            rows = np.concatenate([rows, np.full((Kn, nr, N + 1, grow), -1, np.int32)], axis=3)
            Ta += grow
        cnt = eval_k.tab_frontier(mass, T, theta, pruned, sel_k, sel_r, sel_n)
        if cnt:
            ne = eval_k.tab_entries(cnt, sel_n, spec.rolls, e_sel, e_c)
            if nrows + cnt > dec.shape[0]:
                dec = np.concatenate([dec, np.full((dec.shape[0] + cnt, C), -1, np.int16)])
            es = e_sel[:ne]
            ec = e_c[:ne].copy()
            pts, nd, end = pol.decide(sits, sel_k[es], sel_r[es], sel_n[es], T, ec)
            pts = np.asarray(pts, np.int64)
            pts_u = pts // spec.unit
            h = eval_k.tab_apply(
                T,
                cnt,
                sel_k,
                sel_r,
                sel_n,
                ne,
                e_sel,
                e_c,
                np.where(pts % spec.unit, -1, pts_u),
                np.asarray(nd, np.int64),
                np.asarray(end, np.bool_),
                maxr_k,
                z,
                spec.rolls,
                mass,
                rows,
                nrows,
                dec,
            )
            if h < 0:
                e = -1 - h
                i = es[e]
                raise SolverError(
                    f"policy {pol.name}: in situation {tuple(int(x) for x in sits[sel_k[i]])} (units), "
                    f"{int(sel_n[i])} dice rolled at turn total {T * spec.unit}, it kept {int(pts[e])} points with "
                    f"{int(nd[e])} dice, which is not a keep of rolls {class_rolls(spec)[ec[e]][:3]}...: its move "
                    "must depend on the roll only through the keeps it offers"
                )
            hi = max(hi, h)
            nrows += cnt
        T += 1
    out = []
    for k in range(Kn):
        rk = rows[k]
        Tt = int(np.nonzero((rk >= 0).any(axis=(0, 1)))[0].max())
        rk = rk[:, :, : Tt + 1].copy()
        m = rk >= 0
        ids = rk[m]
        rk[m] = np.arange(len(ids), dtype=np.int32)
        out.append(Tabulation(rk, dec[ids].copy(), float(pruned[k])))
    return out


class TabSide:
    """A tabulated policy in one evaluation: its tabulations by situation key, kept within a
    memory budget (least recently used dropped), and its turn values."""

    def __init__(self, pol: Tabulated, sol: GameSolution, theta: float):
        self.pol, self.sol, self.spec, self.theta = pol, sol, sol.spec, theta
        pol.prepare(sol.spec)
        self.tabs: OrderedDict = OrderedDict()
        self.bytes = 0
        self.keys: dict = {}
        self.count = 0
        self.reach = 0
        self.pruned = 0.0
        self._buffers(64)

    def _buffers(self, Tt: int) -> None:
        s = self.spec
        self.V = np.zeros((s.n_rolls_dim, s.n_dice + 1, Tt + 1))
        self.Q, self.M = np.zeros_like(self.V), np.zeros_like(self.V)
        self.bv = np.zeros(Tt + s.max_step + 2)

    def key(self, a: int, b: int, fa: int, fb: int, final: bool = False) -> Hashable:
        sk = (a, b, fa, fb, final)
        k = self.keys.get(sk)
        if k is None:
            k = self.keys[sk] = (self.pol.situation_key(a, b, fa, fb, final), final)
        return k

    def fetch(self, sits: list[tuple[int, int, int, int, bool]]) -> list[Tabulation]:
        """The tabulations of situations, tabulating those not held (all of them in one pass)."""
        keys = [self.key(*s) for s in sits]
        need: dict = {}
        for k, s in zip(keys, sits):
            if k not in self.tabs and k not in need:
                need[k] = s
        got = (
            dict(
                zip(
                    need,
                    tabulate(self.pol, self.spec, np.array(list(need.values()), np.int64).reshape(-1, 5), self.theta),
                )
            )
            if need
            else {}
        )
        for t in got.values():
            self.count += 1
            self.reach = max(self.reach, t.Tt)
            if t.Tt + 1 > self.V.shape[2]:
                self._buffers(2 * t.Tt)
        out = [self.tabs[k] if k in self.tabs else got[k] for k in keys]
        for k in keys:
            if k in self.tabs:
                self.tabs.move_to_end(k)
        for k, t in got.items():
            self.tabs[k] = t
            self.bytes += t.nbytes
        while self.bytes > TAB_BYTES and len(self.tabs) > 1:
            _, t = self.tabs.popitem(last=False)
            self.bytes -= t.nbytes
        return out

    def forget(self, final: bool) -> None:
        """Drop the tabulations of final turns (final=True) or of the other turns."""
        for k in [k for k in self.tabs if k[1] == final]:
            self.bytes -= self.tabs.pop(k).nbytes

    def value(self, tab: Tabulation, prm: np.ndarray, fa: int) -> tuple[float, float, float]:
        s = self.spec
        c, q, m = eval_k.fixed_dp(prm, s.rolls, fa, tab.rows, tab.dec, self.bv, self.V, self.Q, self.M)
        self.pruned = max(self.pruned, m)
        return c, q, m

    def turn(self, tab: Tabulation, a: int, b: int, fa: int, fb: int, Wn: np.ndarray, RFn: np.ndarray):
        s = self.spec
        n = tab.Tt + s.max_step + 2
        eval_k.bank_values_rf(s.prm, Wn, RFn, a, b, fb, n, self.bv)
        return self.value(tab, s.prm, fa)

    def final_table(self, J: int) -> np.ndarray:
        return final_chances(self, J)


def final_chances(side: TabSide, J: int) -> np.ndarray:
    """RF[f, b, j]: a tabulated policy's chance in its final turn, own score b (units, status
    f: :meth:`GameSolution.status`) against a leader at target + j. Leads that even optimal
    play cannot overcome but with probability EPS count 0 (unless a roll wins at once)."""
    sol, s = side.sol, side.spec
    tu, L = sol.target_units, sol.R.shape[1]
    has_win = bool((s.c_kind == WIN).any())
    shared = bool(s.prm[P_SHARED])
    prm_f = final_prm(s)
    # by status (on-board flag + 2 * busts in a row: a bot may read its busts, maxscore does)
    S = int(rules_k.n_statuses(s.prm))
    RF = np.zeros((S, tu, J))
    flags: list[tuple[int, range | list[int]]] = [(1, range(tu))]
    if sol.rules.entry_threshold:
        flags.append((0, off_board_scores(s, tu, sol.rules.komi // s.unit)))
    groups: dict = defaultdict(list)
    for f, bs in flags:
        for st in range(f, S, 2):
            for b in bs:
                for j in range(J):
                    d = tu + j - b
                    if not has_win and sol.R[f, min(d, L - 1)] <= EPS:
                        continue
                    sit = (b, tu + j, st, 1, True)
                    groups[(side.key(*sit), d, f)].append((st, b, j, sit))
    items = list(groups.items())
    for i in range(0, len(items), 4 * TAB_CHUNK):
        chunk = items[i : i + 4 * TAB_CHUNK]
        tabs = side.fetch([members[0][3] for _, members in chunk])
        for ((_, d, f), members), tab in zip(chunk, tabs):
            n = tab.Tt + s.max_step + 2
            T = np.arange(n)
            side.bv[:n] = np.where(T > d, 1.0, np.where((T == d) & shared, 0.5, 0.0))
            c, _, _ = side.value(tab, prm_f, f)
            for st, b, j, _ in members:
                RF[st, b, j] = c
    if not sol.rules.entry_threshold:
        RF[0::2] = RF[1::2]
    side.forget(final=True)
    return RF


class _SelfSide:
    """A self-valued policy in one evaluation."""

    def __init__(self, pol: SelfValued, sol: GameSolution):
        self.pol, self.sol, self.spec = pol, sol, sol.spec
        if pol.sol is not sol and pol.sol.rules.hash != sol.rules.hash:
            raise SolverError(
                f"policy {pol.name} was solved for ruleset {pol.sol.rules.name!r}, not {sol.rules.name!r}"
            )
        s = sol.spec
        Tmax = sol.t_len
        mk = lambda: np.zeros((s.n_rolls_dim, s.n_dice + 1, Tmax))  # noqa: E731
        self.V, self.Q, self.V2, self.Q2 = mk(), mk(), mk(), mk()
        self.bv, self.bv2 = np.zeros(Tmax + s.max_step + 2), np.zeros(Tmax + s.max_step + 2)
        self.fA, self.fB = forced_extension(s.prm, s)
        # its banks reach at most a lead of Leps (opt_tcap), plus one keep
        self.reach = sol.Leps + sol.Lx
        self.pruned = 0.0
        self.count = 0

    def turn(self, a: int, b: int, fa: int, fb: int, Wn: np.ndarray, RFn: np.ndarray):
        s, sol, p = self.spec, self.sol, self.pol
        c, q = eval_k.self_side(
            s.prm,
            s.rolls,
            s.max_step,
            a,
            b,
            fa,
            fb,
            p.W,
            p.RF,
            Wn,
            RFn,
            sol.Rsup,
            sol.pbmin,
            EPS,
            sol.Lx,
            self.V,
            self.Q,
            self.bv,
            self.V2,
            self.Q2,
            self.bv2,
            self.fA,
            self.fB,
        )
        return c, q, 0.0

    def final_table(self, J: int) -> np.ndarray:
        return rf_optimal(self.sol, J)


def make_side(pol: ExactPolicy, sol: GameSolution, theta: float):
    if isinstance(pol, SelfValued):
        return _SelfSide(pol, sol)
    if isinstance(pol, Tabulated):
        return TabSide(pol, sol, theta)
    raise SolverError(f"policy {pol!r}: give a SelfValued or Tabulated policy")


def mover_states(sol: GameSolution, mask: np.ndarray):
    """Turn-start states by decreasing score sum, as eval_game visits them: (a, b, fa, fb)."""
    tu = sol.target_units
    for k in range(2 * tu - 2, -1, -1):
        level = []
        for a in range(max(0, k - tu + 1), min(k, tu - 1) + 1):
            b = k - a
            for fa in range(2):
                for fb in range(2):
                    if mask[fa, fb, a, b] or mask[fb, fa, b, a]:
                        level.append((a, b, fa, fb))
        yield level


def prefetch(side, level, mirror: bool):
    """Tabulations of a level's situations for a tabulated side (None for a self-valued one)."""
    if not isinstance(side, TabSide):
        return [None] * len(level)
    sits = [((b, a, fb, fa) if mirror else (a, b, fa, fb)) + (False,) for a, b, fa, fb in level]
    return side.fetch(sits)


def reach_all(side, sol: GameSolution, mask: np.ndarray) -> None:
    """Tabulate every situation a tabulated side meets once, to learn how far its banks reach
    (the width of the opponent's final-turn table)."""
    if isinstance(side, TabSide):
        for level in mover_states(sol, mask):
            prefetch(side, level, False)


def eval_cache_key(rules: Ruleset, ka: str, kb: str, theta: float = THETA) -> str:
    """The cache key of an exact evaluation of policies with content keys ka, kb."""
    return result_key(__name__, f"xeval-v{EXACT_VERSION}", rules.hash, ka, "vs", kb, f"{theta:g}")


def cached_eval(key: str, a: str, b: str) -> EvalResult | None:
    """A cached exact evaluation, or None."""
    got = load_arrays(key)
    if got is None:
        return None
    pf, ps, secs, pruned = got["p"]
    return EvalResult(a, b, float(pf), float(ps), float(secs), {"cached": True, "pruned": float(pruned)})


def evaluate_policies(
    rules: Ruleset | str,
    pa: ExactPolicy,
    pb: ExactPolicy,
    *,
    sol: GameSolution | None = None,
    cache: bool = True,
    theta: float = THETA,
) -> EvalResult:
    """Exact P(A wins) against B, seat by seat (2 players), for any two :class:`ExactPolicy`.

    Cached on disk by ruleset hash, both policies' content keys and this evaluator's code.
    """
    rules = load_ruleset(rules)
    check_exact_rules(rules)
    ka, kb = pa.cache_key(), pb.cache_key()
    key = eval_cache_key(rules, ka, kb, theta) if cache and ka and kb else None
    if key:
        got = cached_eval(key, pa.name, pb.name)
        if got is not None:
            return got
    sol = sol or solve_game(rules)
    res = (evaluate_penalty if sol.penalty else _evaluate_ordered)(sol, pa, pb, theta)
    if key:
        save_arrays(key, {"p": np.array([res.p_a_first, res.p_a_second, res.seconds, res.stats["pruned"]])})
    return res


def _evaluate_ordered(sol: GameSolution, pa: ExactPolicy, pb: ExactPolicy, theta: float) -> EvalResult:
    """:func:`evaluate_policies` without a bust penalty: states by decreasing score sum, each
    with its mirror (see the module docstring)."""
    t0 = time.perf_counter()
    rules = sol.rules
    s = sol.spec
    tu = sol.target_units
    mask = state_masks(s, tu, rules.komi // s.unit, grid=True)
    sa, sb = make_side(pa, sol, theta), make_side(pb, sol, theta)
    reach_all(sa, sol, mask)
    reach_all(sb, sol, mask)
    J = max(sa.reach, sb.reach) + s.max_step + 2
    RA, RB = sa.final_table(J), sb.final_table(J)
    WA, WB = np.zeros((2, 2, tu, tu)), np.zeros((2, 2, tu, tu))
    for level in mover_states(sol, mask):
        ta, tb = prefetch(sa, level, False), prefetch(sb, level, True)
        for (a, b, fa, fb), taba, tabb in zip(level, ta, tb):
            if taba is None:
                cA, qA, _ = sa.turn(a, b, fa, fb, WB, RB)
            else:
                cA, qA, _ = sa.turn(taba, a, b, fa, fb, WB, RB)
            if tabb is None:
                cB, qB, _ = sb.turn(b, a, fb, fa, WA, RA)
            else:
                cB, qB, _ = sb.turn(tabb, b, a, fb, fa, WA, RA)
            # x = cA + qA (1 - y), y = cB + qB (1 - x)
            x = (cA + qA - qA * (cB + qB)) / (1.0 - qA * qB)
            WA[fa, fb, a, b] = x
            WB[fb, fa, b, a] = cB + qB * (1.0 - x)
    f, k = sol.start_flag, rules.komi // s.unit
    pruned = max(sa.pruned, sb.pruned)
    return EvalResult(
        pa.name,
        pb.name,
        float(WA[f, f, 0, k]),
        float(1.0 - WB[f, f, 0, k]),
        time.perf_counter() - t0,
        {"cached": False, "pruned": pruned, "tabulations": sa.count + sb.count, "reach": J},
    )


# ---------------------------------------------------------------------------- under a bust penalty
#: Gauss-Seidel sweeps allowed before an evaluation under a bust penalty gives up
MAX_PENALTY_SWEEPS = 10_000


def outcome_rows(pol: Tabulated, spec: Spec, prm: np.ndarray, sits, theta: float):
    """Tabulate situations (rows as in :meth:`Tabulated.decide`) and play each turn forward
    (:func:`~tenk_env.solve.kernels.evaluation.tab_outcomes`): (OUT[k, T] = P(bank T), instant win, bust,
    forfeit, pruned), one row per situation."""
    s = spec
    sits = np.array(sits, np.int64).reshape(-1, 5)
    tabs = tabulate(pol, s, sits, theta)
    width = max(t.Tt for t in tabs) + s.max_step + 2
    OUT = np.zeros((len(tabs), width))
    OW, OB, OF = np.zeros(len(tabs)), np.zeros(len(tabs)), np.zeros(len(tabs))
    pruned = 0.0
    for k, (t, sit) in enumerate(zip(tabs, sits)):
        out = np.zeros(t.Tt + s.max_step + 2)
        OW[k], OB[k], OF[k], pr = eval_k.tab_outcomes(prm, s.rolls, int(sit[2]) & 1, t.rows, t.dec, out)
        OUT[k, : len(out)] = out
        pruned = max(pruned, pr, t.pruned)
    return OUT, OW, OB, OF, pruned


def penalty_states(sol: GameSolution) -> tuple[np.ndarray, np.ndarray]:
    """Every turn-start state the game solver covers, as rows (mover's score, opponent's,
    mover's status, opponent's: :meth:`GameSolution.status`) by decreasing score sum and,
    within one, decreasing total of bust counts (the game solver's sweep order); and
    IDX[sx, sy, x, y], each state's row (-1: not a state)."""
    s, tu = sol.spec, sol.target_units
    mask = state_masks(s, tu, sol.rules.komi // s.unit, grid=True)
    sx, sy, x, y = np.nonzero(mask)
    order = np.lexsort((sx, sy, x, -((sx >> 1) + (sy >> 1)), -(x + y)))
    states = np.stack([x, y, sx, sy], axis=1)[order].astype(np.int64)
    IDX = np.full(mask.shape, -1, np.int64)
    IDX[states[:, 2], states[:, 3], states[:, 0], states[:, 1]] = np.arange(len(states))
    return states, IDX


class _Outcomes:
    """One side's turns at every state (:func:`~tenk_env.solve.kernels.evaluation.self_outcomes`): D (banks
    below the target), C (instant wins, and banks at the target valued against the opponent's
    final turn), QB (busts), QF (forfeits)."""

    def __init__(self, n: int, tu: int):
        self.D = np.zeros((n, tu))
        self.C, self.QB, self.QF = np.zeros(n), np.zeros(n), np.zeros(n)


def by_status(RF: np.ndarray, S: int) -> np.ndarray:
    """A final-turn table by on-board flag widened to every status (the optimal final turn
    does not read busts: the game ends with it)."""
    return RF if RF.shape[0] == S else np.ascontiguousarray(RF[np.arange(S) & 1])


class PenaltySide:
    """A policy in an evaluation under a bust penalty: how far its banks reach, its final-turn
    table, and its turns' outcomes at every state (:meth:`outcomes`)."""

    def __init__(self, pol: ExactPolicy, sol: GameSolution, states: np.ndarray, theta: float):
        self.pol, self.sol, self.states, self.theta = pol, sol, states, theta
        s = sol.spec
        self.S = int(rules_k.n_statuses(s.prm))
        self.pruned = 0.0
        self.count = 0
        if isinstance(pol, SelfValued):
            if pol.sol is not sol and pol.sol.rules.hash != sol.rules.hash:
                raise SolverError(
                    f"policy {pol.name} was solved for ruleset {pol.sol.rules.name!r}, not {sol.rules.name!r}"
                )
            if pol.W.shape[0] != self.S:
                raise SolverError(
                    f"policy {pol.name}: its values do not hold the bust counts that ruleset "
                    f"{sol.rules.name!r}'s bust penalty puts in the state; measure it by regret "
                    "(tenk analyze)"
                )
            self.reach = sol.Leps + sol.Lx
        elif isinstance(pol, Tabulated):
            self.side = TabSide(pol, sol, theta)
            keys: dict = {}
            sits: list = []
            kid = np.empty(len(states), np.int64)
            for i, (x, y, sx, sy) in enumerate(states.tolist()):
                k = self.side.key(x, y, sx, sy, False)
                got = keys.get(k)
                if got is None:
                    got = keys[k] = len(sits)
                    sits.append((x, y, sx, sy, 0))
                kid[i] = got
            self.kid = kid
            self.OUT, self.OW, self.OB, self.OF, self.pruned = outcome_rows(pol, s, s.prm, sits, theta)
            self.count = len(sits)
            tail = np.nonzero(self.OUT.any(axis=0))[0]
            self.reach = int(tail.max()) if tail.size else 0
        else:
            raise SolverError(f"policy {pol!r}: give a SelfValued or Tabulated policy")

    def final_table(self, J: int) -> np.ndarray:
        if isinstance(self.pol, SelfValued):
            return by_status(rf_optimal(self.sol, J), self.S)
        RF = final_chances(self.side, J)
        self.pruned = max(self.pruned, self.side.pruned)
        return RF

    def outcomes(self, RFn: np.ndarray) -> _Outcomes:
        """Its turns at every state, banks at the target valued against the opponent's final
        turns RFn."""
        sol, s = self.sol, self.sol.spec
        o = _Outcomes(len(self.states), sol.target_units)
        if isinstance(self.pol, SelfValued):
            fA, fB = forced_extension(s.prm, s)
            eval_k.self_outcomes(
                s.prm,
                s.rolls,
                s.max_step,
                self.states,
                self.pol.W,
                by_status(self.pol.RF, self.S),
                RFn,
                sol.Rsup,
                sol.pbmin,
                EPS,
                sol.Lx,
                fA,
                fB,
                o.D,
                o.C,
                o.QB,
                o.QF,
            )
        else:
            eval_k.fixed_outcomes(
                s.prm, self.states, self.kid, self.OUT, self.OW, self.OB, self.OF, RFn, o.D, o.C, o.QB, o.QF
            )
        return o


def penalty_solve(
    sol: GameSolution,
    states: np.ndarray,
    IDX: np.ndarray,
    A: _Outcomes,
    B: _Outcomes,
    XA: np.ndarray | None = None,
    XB: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The win chances (XA, XB, sweeps) of two players whose turns' outcomes are A and B, at
    every state with the player to move (:func:`~tenk_env.solve.kernels.evaluation.penalty_sweep`), by
    Gauss-Seidel sweeps from XA, XB (default 1/2) until no value changes by more than
    ``TOL / 100``."""
    n = len(states)
    XA = np.full(n, 0.5) if XA is None else XA.copy()
    XB = np.full(n, 0.5) if XB is None else XB.copy()
    for sweep in range(1, MAX_PENALTY_SWEEPS + 1):
        change = eval_k.penalty_sweep(sol.spec.prm, states, IDX, A.D, A.C, A.QB, A.QF, B.D, B.C, B.QB, B.QF, XA, XB)
        if change < TOL / 100:
            return XA, XB, sweep
    raise SolverError(
        f"ruleset {sol.rules.name!r}: the evaluation under the bust penalty still changed by "
        f"{change:.2g} after {MAX_PENALTY_SWEEPS} sweeps; please report this ruleset"
    )


def evaluate_penalty(sol: GameSolution, pa: ExactPolicy, pb: ExactPolicy, theta: float = THETA) -> EvalResult:
    """:func:`evaluate_policies` under a bust penalty (see :func:`penalty_solve`): every
    state's turn outcome is read once per side (its moves do not depend on the values they
    lead to), then the linear system of the win chances is iterated to convergence. Works
    without a penalty too, where it agrees with the ordered solve (tests/solve/test_exact_penalty.py)."""
    t0 = time.perf_counter()
    s, rules = sol.spec, sol.rules
    states, IDX = penalty_states(sol)
    sa, sb = PenaltySide(pa, sol, states, theta), PenaltySide(pb, sol, states, theta)
    J = max(sa.reach, sb.reach) + s.max_step + 2
    RA, RB = sa.final_table(J), sb.final_table(J)
    XA, XB, sweeps = penalty_solve(sol, states, IDX, sa.outcomes(RB), sb.outcomes(RA))
    i0 = IDX[sol.start_flag, sol.start_flag, 0, rules.komi // s.unit]
    pruned = max(sa.pruned, sb.pruned)
    return EvalResult(
        pa.name,
        pb.name,
        float(XA[i0]),
        float(1.0 - XB[i0]),
        time.perf_counter() - t0,
        {"cached": False, "pruned": pruned, "tabulations": sa.count + sb.count, "reach": J, "sweeps": sweeps},
    )


# ---------------------------------------------------------------------------- table policies, named policies
class TableTabulated(Tabulated):
    """A :class:`TablePolicy` followed by :func:`evaluate_policies`: its moves are those of
    the kernels' choice rule on its preference tables (:func:`tenk_env.solve.kernels.evaluation.table_decide`)."""

    def __init__(self, pol: TablePolicy):
        self.pol, self.name = pol, pol.name

    def cache_key(self) -> str:
        h = hashlib.sha256()
        for x in (self.pol.roll, self.pol.bank, np.array([self.pol.forfeit, self.pol.unit])):
            h.update(np.ascontiguousarray(x, np.float64).tobytes())
        return f"table_{self.name.replace(':', '_')}-{h.hexdigest()[:12]}-{closure_hash(f'{__name__}:TableTabulated')}"

    def prepare(self, spec: Spec) -> None:
        if self.pol.unit != spec.unit:
            raise SolverError(f"policy {self.name}: tables in units of {self.pol.unit} points, the game in {spec.unit}")
        self.spec = spec

    def situation_key(self, a: int, b: int, fa: int, fb: int, final: bool) -> Hashable:
        # the tables read neither score nor busts; the final turn can only shorten the roll limit
        return (fa & 1, final)

    def decide(self, sits, k, r, n, T, c):
        s = self.spec
        one_more = s.prm[P_END] == END_ONE_MORE_ROLL
        maxr_k = np.where((sits[:, 4] != 0) & one_more, 1, s.prm[P_MAXROLLS]).astype(np.int64)
        out = np.zeros(len(k), np.int64)
        eval_k.table_decide(
            s.prm,
            s.rolls,
            maxr_k,
            sits[:, 2].astype(np.int64) & 1,
            k,
            r,
            n,
            T,
            c,
            self.pol.roll,
            self.pol.bank,
            float(self.pol.forfeit),
            out,
        )
        o = s.c_os[c] + out // 2
        return s.o_p[o] * s.unit, s.o_d[o], (out & 1) == 1


def evaluate(
    rules: Ruleset | str, a="optimal", b="maxscore", *, sol: GameSolution | None = None, cache: bool = True
) -> EvalResult:
    """Exact P(A wins) against B, seat by seat, under ``rules`` (2 players), for ``"optimal"``,
    ``"maxscore"``, ``"hold:N"`` (as preference tables describe them) or a :class:`TablePolicy`;
    :func:`tenk_env.policies.exact.exact_eval` evaluates every deterministic agent the same way.

    Results are cached on disk by ruleset hash and the policies' content: a classic
    evaluation takes minutes, a cached one a moment.
    """
    rules = load_ruleset(rules)

    def policy(p):
        p = _as_policy(rules, p)
        return p if p == "optimal" else TableTabulated(p)

    pa, pb = policy(a), policy(b)
    keys = [optimal_key() if p == "optimal" else p.cache_key() for p in (pa, pb)]
    name = lambda p: p if isinstance(p, str) else p.name  # noqa: E731
    if cache:
        got = cached_eval(eval_cache_key(rules, keys[0], keys[1]), name(pa), name(pb))
        if got is not None:
            return got
    sol = sol or solve_game(rules)
    pa, pb = (optimal_policy(sol) if p == "optimal" else p for p in (pa, pb))
    return evaluate_policies(rules, pa, pb, sol=sol, cache=cache)
