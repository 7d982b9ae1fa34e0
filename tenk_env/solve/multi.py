"""Exact N-player (2-4) evaluation of fixed policies and exact best responses to them.

With every seat but one playing a fixed deterministic policy, an N-player game is a
one-player Markov decision problem for the remaining seat, so its optimum, the *best
response*, is computable exactly; with every seat fixed, each seat's win probability is.

State at the start of a turn: every player's banked score (units of
:mod:`tenk_env.solve.spec`, all below the target) and the player to move. On-board flags
follow from the scores (a score above 0 is on the board; komi is 0). Scores only grow, so
score vectors are solved by decreasing score sum; the N movers at one score vector are
linked by busts, a cycle solved exactly (:func:`tenk_env.solve.kernels.multi.regular_level`).

A fixed player's turn is a Markov chain: from its tabulated moves (the 2-player
evaluator's :func:`~tenk_env.solve.evaluate.tabulate`, asked with the leader's score as
the opponent's, which is all the zoo's bots read) it banks T with a probability read once
per situation. The responder's turn is :func:`tenk_env.solve.kernels.turn.turn_dp`, the
kernel of the 2-player solver, so ``br:`` agents choose with its tie-break.

The final round (``end: final_round``, ``one_more_roll``): the player who first banks to
the target triggers it, every other player has one more turn in seat order, and the
highest score wins, a tie going to the player who got there first. A final turn only
matters through the *bar* (the highest score so far) and who holds it, so the round is a
short chain of tables over (bar, scores of the players still to move)
(:func:`~tenk_env.solve.kernels.multi.final_fixed`,
:func:`~tenk_env.solve.kernels.multi.final_responder`). Bars are followed to
``target + J`` units (past every total a turn reaches with probability above the solver's
truncation ``EPS``).

Not modelled (a clear :class:`SolverError` says so): what the 2-player game solver does
not model (piggyback, exact finish, lose-all rolls), a bust penalty, a komi, shared ties.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.evaluate import THETA, Tabulated, outcome_rows
from tenk_env.solve.game import check_exact_rules
from tenk_env.solve.kernels import multi as multi_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.shared import EPS, TOL, final_prm, final_turn_chances, forced_extension, min_bust_chance
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_MAXROLLS, P_TARGET, WIN, SolverError, Spec, build_spec

__all__ = [
    "MultiEval",
    "MultiBestResponse",
    "evaluate_multi",
    "best_response_multi",
    "check_multi_rules",
    "setup_players",
    "multi_estimate",
    "turn_tables",
    "final_turn_values",
    "MULTI_VERSION",
    "MAX_BYTES",
]

#: bump when results change, to invalidate cached ones
MULTI_VERSION = 1
#: refuse computations whose arrays would exceed this many bytes (the machine has 24 GB)
MAX_BYTES = 10 * 2**30


def check_multi_rules(rules: Ruleset, n_players: int) -> None:
    """Raise :class:`SolverError` unless the N-player solver covers ``rules`` at ``n_players``."""
    if not 2 <= n_players <= 4:
        raise SolverError(
            f"the N-player exact solver covers 2 to 4 players (got {n_players}): each more player "
            "multiplies the states by the target in units"
        )
    check_exact_rules(rules)
    name = f"ruleset {rules.name!r}"
    if rules.bust_penalty:
        raise SolverError(
            f"{name}: the N-player solver does not model a bust penalty (bust_penalty "
            f"{rules.bust_penalty}: each player's busts in a row would join the state, and a penalty "
            "lowers a score, which breaks its order of solving); the 2-player evaluator and best "
            "response do (tenk solve eval / best-response with one opponent); set bust_penalty: 0 here"
        )
    if rules.komi:
        raise SolverError(
            f"{name}: komi {rules.komi} is a 2-player handicap; the N-player solver starts every "
            "score at 0 (set komi: 0, or use the 2-player solver)"
        )
    if rules.tie == "shared":
        raise SolverError(
            f"{name}: tie: shared splits a win among tied leaders, which the N-player solver does "
            "not model (set tie: first_to_target)"
        )
    mem = multi_estimate(rules, n_players)
    if mem > MAX_BYTES:
        tu = -(-rules.target // build_spec(rules, for_game=True).unit)
        raise SolverError(
            f"{name} at {n_players} players: {tu}^{n_players} score vectors would need about "
            f"{mem / 2**30:.0f} GB (limit {MAX_BYTES / 2**30:.0f} GB); lower the target "
            "(tenk solve ... --target 2000) or the number of players"
        )


@dataclass
class _Fixed:
    """A fixed player's turns as outcome tables (units; see :func:`_regular_tables`, :func:`_final_tables`)."""

    KID: np.ndarray  # [own, leader] -> row of DIST (regular turns)
    DIST: np.ndarray  # [row, T]: P(bank T)
    DW: np.ndarray  # instant win
    DQ: np.ndarray  # bust or forfeit
    FKID: np.ndarray  # [own, bar - target] -> row of FDIST (final turns); -1: no chance
    FDIST: np.ndarray
    FW: np.ndarray
    FB: np.ndarray  # [own, bar - target]: P(the final turn beats the bar or wins at once)
    pruned: float
    tabulations: int


def _on(tu: int, entry: bool) -> np.ndarray:
    f = np.ones(tu, np.int64)
    if entry:
        f[0] = 0
    return f


def _outcome_rows(spec: Spec, prm: np.ndarray, pol: Tabulated, sits: list, theta: float):
    """Tabulate situations and play each forward: (DIST, DW, DQ, pruned), DQ a bust or a forfeit."""
    DIST, DW, DB, DF, pruned = outcome_rows(pol, spec, prm, sits, theta)
    return DIST, DW, DB + DF, pruned


def _reach(DIST: np.ndarray) -> int:
    """The number of totals a fixed player's turns bank with more than EPS chance in all."""
    tail = np.cumsum(DIST[:, ::-1], axis=1)[:, ::-1].max(axis=0)
    over = np.nonzero(tail > EPS)[0]
    return int(over.max()) + 1 if over.size else 1


def _regular_tables(pol: Tabulated, spec: Spec, theta: float):
    """Outcome tables of ``pol``'s regular turns at every (own score, leader's score):
    (KID, DIST, DW, DQ, pruned, tabulations)."""
    s = spec
    tu = int(s.prm[P_TARGET])
    on = _on(tu, bool(s.rules.entry_threshold))
    keys: dict = {}
    sits: list = []
    KID = np.empty((tu, tu), np.int32)
    for a in range(tu):
        for b in range(tu):
            k = (int(on[a]), pol.situation_key(a, b, int(on[a]), int(on[b]), False))
            got = keys.get(k)
            if got is None:
                got = keys[k] = len(sits)
                sits.append((a, b, int(on[a]), int(on[b]), 0))
            KID[a, b] = got
    DIST, DW, DQ, pruned = _outcome_rows(s, s.prm, pol, sits, theta)
    return KID, DIST, DW, DQ, pruned, len(sits)


def _final_tables(pol: Tabulated, spec: Spec, J: int, R: np.ndarray, theta: float):
    """Outcome tables of ``pol``'s final turns at every (own score, bar = target + j < target
    + J): (FKID, FDIST, FW, FB, pruned), FB the chance that the turn beats the bar or wins at once.
    A situation that even optimal play wins with probability at most EPS (and no roll wins
    at once) is valued as no chance, as the 2-player evaluator does."""
    s = spec
    tu = int(s.prm[P_TARGET])
    on = _on(tu, bool(s.rules.entry_threshold))
    has_win = bool((s.c_kind == WIN).any())
    L = R.shape[1]
    fkeys: dict = {}
    fsits: list = []
    FKID = np.full((tu, J), -1, np.int32)
    for a in range(tu):
        f = int(on[a])
        for j in range(J):
            if not has_win and R[f, min(tu + j - a, L - 1)] <= EPS:
                continue
            k = (f, pol.situation_key(a, tu + j, f, 1, True))
            got = fkeys.get(k)
            if got is None:
                got = fkeys[k] = len(fsits)
                fsits.append((a, tu + j, f, 1, 1))
            FKID[a, j] = got
    if fsits:
        FDIST, FW, _, pruned = _outcome_rows(s, final_prm(s), pol, fsits, theta)
    else:
        FDIST, FW, pruned = np.zeros((1, 1)), np.zeros(1), 0.0
    FB = np.zeros((tu, J))
    for a in range(tu):
        for j in range(J):
            k = FKID[a, j]
            if k >= 0:
                FB[a, j] = FW[k] + FDIST[k, max(1, tu + j - a + 1) :].sum()
    return FKID, FDIST, FW, FB, pruned


_TABLES: OrderedDict = OrderedDict()


def _memo(key: tuple, make):
    """A fixed player's outcome tables, kept for the next solve in this process (a best
    response and the evaluations beside it share them); None keys (no content key) are not kept."""
    if key[2] is None:
        return make()
    got = _TABLES.get(key)
    if got is None:
        got = _TABLES[key] = make()
        if len(_TABLES) > 12:
            _TABLES.popitem(last=False)
    else:
        _TABLES.move_to_end(key)
    return got


@dataclass
class _Setup:
    rules: Ruleset
    spec: Spec
    N: int
    tu: int
    J: int
    J1: int
    fixed: list  # _Fixed or None (the responder) per player
    prm_f: np.ndarray
    pbmin: float
    fA: float
    fB: float
    fAf: float
    fBf: float
    #: :func:`_stack`'s tables and :func:`_levels`' order: the same for every focus player
    stacked: tuple
    levels: tuple


def multi_estimate(rules: Ruleset, n_players: int) -> float:
    """Bytes of an N-player solve's value arrays (N movers, and the level order), roughly."""
    spec = build_spec(rules, for_game=True)
    states = float(spec.prm[P_TARGET]) ** n_players
    return (n_players + 3) * states * 8


def setup_players(rules: Ruleset, players: list, theta: float) -> _Setup:
    """Everything a solve over ``players`` shares: each fixed player's outcome tables (regular
    and final turns, kept for the next solve in this process), the bars the final round follows,
    and the level order of the score vectors; ``None`` marks a seat another solver plays."""
    N = len(players)
    check_multi_rules(rules, N)
    spec = build_spec(rules, for_game=True)
    tu = int(spec.prm[P_TARGET])
    R, _ = final_turn_chances(spec)
    pols = [p for p in players if p is not None]
    for p in pols:
        p.prepare(spec)
    regular = {
        id(p): _memo(("regular", rules.hash, p.cache_key(), theta), lambda p=p: _regular_tables(p, spec, theta))
        for p in pols
    }
    # Bars: a fixed trigger's bank (past J1 with chance <= EPS), raised by at most one keep
    # per later final turn (the bots' banks stop once they beat the bar), or the responder's
    # bank, which goes as far as optimal play: past L units above anyone's score a bar is
    # beaten with chance <= EPS, so a bar past target + J counts as target + J - 1.
    J1 = max([_reach(d[1]) for d in regular.values()] + [1])
    J = max(R.shape[1], J1 + (N - 1) * (spec.max_step + 1)) + 2
    fixed: list[_Fixed | None] = []
    for p in players:
        if p is None:
            fixed.append(None)
            continue
        KID, DIST, DW, DQ, pruned, n = regular[id(p)]
        FKID, FDIST, FW, FB, pruned_f = _memo(
            ("final", rules.hash, p.cache_key(), J, theta), lambda p=p: _final_tables(p, spec, J, R, theta)
        )
        fixed.append(_Fixed(KID, DIST, DW, DQ, FKID, FDIST, FW, FB, max(pruned, pruned_f), n))
    fA, fB = forced_extension(spec.prm, spec)
    prm_f = final_prm(spec)
    fAf, fBf = forced_extension(prm_f, spec)
    return _Setup(
        rules,
        spec,
        N,
        tu,
        J,
        J1,
        fixed,
        prm_f,
        min_bust_chance(spec),
        fA,
        fB,
        fAf,
        fBf,
        _stack(fixed, tu, J),
        _levels(tu, N),
    )


def _stack(fixed: list, tu: int, J: int):
    """Every player's outcome tables in the kernels' form, (KID, DIST, DW, DQ, FB): rows of all
    fixed players in one array, ``KID[i]`` pointing into it (the responder gets one unused row)."""
    N = len(fixed)
    width = max((f.DIST.shape[1] for f in fixed if f is not None), default=1)
    FB = np.zeros((N, tu, J))
    KID = np.zeros((N, tu, tu), np.int32)
    rows, DW, DQ, off = [], [], [], 0
    for i, f in enumerate(fixed):
        if f is None:
            rows.append(np.zeros((1, width)))
            DW.append(np.zeros(1))
            DQ.append(np.zeros(1))
            KID[i] = off
            off += 1
            continue
        FB[i] = f.FB
        KID[i] = f.KID + off
        d = np.zeros((f.DIST.shape[0], width))
        d[:, : f.DIST.shape[1]] = f.DIST
        rows.append(d)
        DW.append(f.DW)
        DQ.append(f.DQ)
        off += f.DIST.shape[0]
    return KID, np.concatenate(rows), np.concatenate(DW), np.concatenate(DQ), FB


def _final_chain(st: _Setup, x: int, t: int) -> dict:
    """The final round after player t triggers, as tables from the last player's turn back
    to the first: ``out[k]`` (k = 1..N-1, queue position) is ``[hx, bar - target, rest]``,
    the focus player x's win chance with queue player k to move, ``rest`` the scores of
    queue players k.. (k's own score ``rest % tu``)."""
    s, N, tu = st.spec, st.N, st.tu
    queue = [(t + k) % N for k in range(N)]  # queue[k]: k-th to move after t (queue[0] = t)
    phi = np.zeros((2, st.J, 1))
    phi[1] = 1.0  # the round is over: the holder wins
    tables: dict = {N: phi}
    for k in range(N - 1, 0, -1):
        i = queue[k]
        Pk = tu ** (N - k)
        Jk = st.J1 if k == 1 else st.J
        out = np.zeros((2, Jk, Pk))
        f = st.fixed[i]
        if f is None:
            multi_k.final_responder(
                st.prm_f,
                s.rolls,
                s.max_step,
                tu,
                Jk,
                Pk // tu,
                phi,
                st.pbmin,
                EPS,
                st.fAf,
                st.fBf,
                out,
                np.zeros((0, 0, 0)),
                np.zeros((0, 0)),
            )
        else:
            FKID = f.FKID
            multi_k.final_fixed(tu, N, int(i == x), Jk, Pk, FKID, f.FDIST, f.FW, phi, out)
        tables[k] = out
        phi = out
    return tables


def _levels(tu: int, N: int):
    idx = np.arange(tu**N, dtype=np.int64)
    lev = np.zeros(tu**N, np.int64)
    rem = idx.copy()
    for _ in range(N):
        lev += rem % tu
        rem //= tu
    del rem
    order = np.argsort(-lev, kind="stable").astype(np.int64)
    counts = np.bincount(lev, minlength=N * (tu - 1) + 1)[::-1]
    bounds = np.concatenate([[0], np.cumsum(counts)])
    return order, bounds


def _pass(st: _Setup, x: int, progress=None, weight: float = 1.0, done: float = 0.0):
    """Every turn-start state's win chance for the focus player x: (U, chains, stats)."""
    s, N, tu = st.spec, st.N, st.tu
    resp = st.fixed[x] is None
    chains = {}
    TRIG = np.zeros((N, st.J1, tu ** (N - 1)))
    if s.prm[P_END] != END_IMMEDIATE:
        for t in range(N):
            if t != x:
                chains[t] = _final_chain(st, x, t)
                TRIG[t] = chains[t][1][0]
    KID, DIST, DWa, DQa, FB = st.stacked
    order, bounds = st.levels
    U = np.zeros((N, tu**N))
    res = np.zeros(order.shape[0])
    its = np.zeros(order.shape[0], np.int64)
    total = float(order.shape[0])
    for lv in range(len(bounds) - 1):
        lo, hi = bounds[lv], bounds[lv + 1]
        if hi == lo:
            continue
        multi_k.regular_level(
            s.prm,
            s.rolls,
            s.max_step,
            tu,
            N,
            x,
            resp,
            order[lo:hi],
            KID,
            DIST,
            DWa,
            DQa,
            FB,
            TRIG,
            U,
            st.pbmin,
            EPS,
            TOL,
            st.fA,
            st.fB,
            res[lo:hi],
            its[lo:hi],
        )
        if progress is not None:
            progress(done + weight * hi / total)
    stats = {"residual": float(res.max()), "max_iterations": int(its.max()), "dp_calls": int(its.sum())}
    return U, chains, FB, stats


@dataclass
class MultiEval:
    """Exact win probabilities of N fixed policies sitting in this cyclic order.

    ``P[k, i]``: P(policy i wins) when policy k moves first (the table keeps the order
    ``names[0], names[1], ...``); ``seat[i, j]``: P(policy i wins) from seat j (j players
    move before it)."""

    rules: Ruleset
    names: list
    P: np.ndarray
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def n_players(self) -> int:
        return len(self.names)

    @property
    def seat(self) -> np.ndarray:
        N = self.n_players
        return np.array([[self.P[(i - j) % N, i] for j in range(N)] for i in range(N)])

    @property
    def mean(self) -> np.ndarray:
        """Each policy's win probability averaged over the N rotations of the table."""
        return self.P.mean(axis=0)


def _cache_keys(kind: str, rules: Ruleset, keys: list, theta: float) -> str:
    return result_key(__name__, f"multi{kind}-v{MULTI_VERSION}", rules.hash, *keys, f"{theta:g}")


def evaluate_multi(
    rules: Ruleset | str,
    policies: list,
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> MultiEval | None:
    """Exact P(win) of every one of N fixed :class:`~tenk_env.solve.evaluate.Tabulated`
    policies sitting in the given cyclic order, for every player to move first.
    Cached on disk by ruleset hash, the policies' content keys and this solver's code;
    ``cached_only``: None unless it is cached."""
    rules = load_ruleset(rules)
    check_multi_rules(rules, len(policies))
    keys = [p.cache_key() for p in policies]
    names = [p.name for p in policies]
    disk = _cache_keys("eval", rules, keys, theta) if cache and all(keys) else None
    if disk:
        got = load_arrays(disk)
        if got is not None:
            secs, pruned = got["meta"]
            return MultiEval(rules, names, got["P"], float(secs), {"cached": True, "pruned": float(pruned)})
    if cached_only:
        return None
    t0 = time.perf_counter()
    st = setup_players(rules, list(policies), theta)
    N = st.N
    P = np.zeros((N, N))
    for x in range(N):
        U, _, _, _ = _pass(st, x, progress, 1.0 / N, x / N)
        P[:, x] = U[:, 0]
    pruned = max(f.pruned for f in st.fixed)
    secs = time.perf_counter() - t0
    res = MultiEval(
        rules,
        names,
        P,
        secs,
        {
            "cached": False,
            "pruned": pruned,
            "tabulations": sum(f.tabulations for f in st.fixed),
            "sum_error": float(np.abs(P.sum(axis=1) - 1).max()),
        },
    )
    if disk:
        save_arrays(disk, {"P": P, "meta": np.array([secs, pruned])})
    return res


@dataclass
class MultiBestResponse:
    """The best response to N-1 fixed policies (``opponents``, seated after it in this order).

    ``p_seat[j]``: its exact win probability from seat j (j players move before it: seat 1
    means ``opponents[-1]`` moves first); ``p``: the average over the N seats.
    ``U1[idx]``: its win chance with ``opponents[0]`` to move at scores idx (own score first,
    then the opponents' in order, units); ``FB[i]``, ``chains``: the final round's tables,
    from which :class:`tenk_env.policies.exact.BestResponseAgent` plays."""

    rules: Ruleset
    spec: Spec
    opponents: list
    p_seat: np.ndarray
    U1: np.ndarray
    FB: np.ndarray
    chains: dict
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def n_players(self) -> int:
        return len(self.opponents) + 1

    @property
    def p(self) -> float:
        return float(self.p_seat.mean())

    @property
    def name(self) -> str:
        return "br:" + ",".join(self.opponents)

    @property
    def unit(self) -> int:
        return self.spec.unit

    def turn_values(self, scores):
        """The responder's within-turn values at the start of its turn, ``scores`` in units,
        its own first, then the players after it in turn order. Returns (V[r, n, T] value of
        rolling, bv[T] value of banking T, Tcap, beta = value of a bust, value of a forced roll
        past Tcap or None), as :meth:`tenk_env.solve.game.GameSolution.turn_values` does."""
        s, N = self.spec, self.n_players
        tu = int(s.prm[P_TARGET])
        sv = np.asarray(scores, np.int64)
        pw = tu ** np.arange(N, dtype=np.int64)
        idx = int((sv * pw).sum())
        beta = float(self.U1[idx])
        fa = int(rules_k.on_board(s.prm, int(sv[0])))
        bv = np.zeros(tu - int(sv[0]) + self.FB.shape[2] + s.max_step + 4 + int(rules_k.bankable_from(s.prm, fa)))
        Tcap = int(
            multi_k.br_turn_inputs(
                s.prm, tu, N, 0, idx, sv, self.U1, self.FB, pw, min_bust_chance(s), EPS, beta, s.max_step, bv
            )
        )
        return turn_tables(s, s.prm, fa, Tcap, bv, beta)

    def final_values(self, scores, trigger: int, bar: int):
        """The responder's final turn: ``scores`` as in :meth:`turn_values`, ``trigger`` the
        position (1..N-1 after the responder) of the player who triggered the final round,
        ``bar`` the highest score so far (units, held by another player)."""
        N = self.n_players
        tu = int(self.spec.prm[P_TARGET])
        k = N - trigger  # the responder's place in the final round's order
        r1, mult = 0, 1
        for ell in range(k + 1, N):
            r1 += int(scores[(trigger + ell) % N]) * mult
            mult *= tu
        return final_turn_values(self.spec, self.chains[trigger][k + 1], r1, int(bar), int(scores[0]))


def turn_tables(spec: Spec, prm: np.ndarray, fa: int, Tcap: int, bv: np.ndarray, beta: float):
    """A turn chosen on its own values (bank values ``bv``, bust value ``beta``): (V[r, n, T]
    value of rolling, bv, Tcap, beta, value of a forced roll past Tcap or None), the tables
    :func:`tenk_env.solve.policy.pick` plays from."""
    s = spec
    V = np.zeros((max(1, int(prm[P_MAXROLLS])), s.n_dice + 1, Tcap + 1))
    Q = np.zeros_like(V)
    fA, fB = forced_extension(prm, s)
    turn_k.turn_dp(prm, s.rolls, fa, Tcap, bv, beta, beta, True, True, V, bv, beta, Tcap, V, Q, fA, fB)
    return V, bv, Tcap, beta, (fA + fB * beta if fA >= 0 else None)


def final_turn_values(spec: Spec, phi: np.ndarray, r1: int, bar: int, a: int):
    """A final turn from score ``a`` that must beat ``bar`` (units, held by another player):
    ``phi[holds, bar - target, r1]`` the mover's chance once the players after it (scores
    ``r1``) have played, holding the bar or not. As :func:`turn_tables`."""
    s = spec
    tu = int(s.prm[P_TARGET])
    prm_f = final_prm(s)
    beta = float(phi[0, min(bar - tu, phi.shape[1] - 1), r1])
    fa = int(rules_k.on_board(s.prm, a))
    ycap = int(multi_k.final_cap(prm_f, tu, bar, phi, r1, beta, min_bust_chance(s), EPS))
    Tcap = max(ycap - a, int(rules_k.bankable_from(prm_f, fa)))
    bv = np.zeros(Tcap + s.max_step + 2)
    multi_k.final_bank_values(tu, bar, a, phi, r1, beta, bv)
    return turn_tables(s, prm_f, fa, Tcap, bv, beta)


def _chain_arrays(chains: dict) -> dict:
    return {f"chain_{t}_{k}": a for t, ch in chains.items() for k, a in ch.items()}


def _chains_from(arrays: dict) -> dict:
    chains: dict = {}
    for name, a in arrays.items():
        if name.startswith("chain_"):
            _, t, k = name.split("_")
            chains.setdefault(int(t), {})[int(k)] = a
    return chains


def best_response_multi(
    rules: Ruleset | str,
    opponents: list,
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> MultiBestResponse | None:
    """The policy that maximises its win probability against N-1 fixed
    :class:`~tenk_env.solve.evaluate.Tabulated` policies seated after it in the given order,
    and its exact win probability from every seat. Cached on disk like :func:`evaluate_multi`."""
    rules = load_ruleset(rules)
    check_multi_rules(rules, len(opponents) + 1)
    keys = [p.cache_key() for p in opponents]
    names = [p.name for p in opponents]
    disk = _cache_keys("br", rules, keys, theta) if cache and all(keys) else None
    spec = build_spec(rules, for_game=True)
    if disk:
        got = load_arrays(disk)
        if got is not None:
            secs, pruned, res, its, calls = got["meta"]
            return MultiBestResponse(
                rules,
                spec,
                names,
                got["p_seat"],
                got["U1"],
                got["FB"],
                _chains_from(got),
                float(secs),
                {
                    "cached": True,
                    "pruned": float(pruned),
                    "residual": float(res),
                    "max_iterations": int(its),
                    "dp_calls": int(calls),
                },
            )
    if cached_only:
        return None
    t0 = time.perf_counter()
    st = setup_players(rules, [None] + list(opponents), theta)
    N = st.N
    U, chains, FB, stats = _pass(st, 0, progress)
    if stats["residual"] > 1e3 * TOL:
        raise SolverError(
            f"ruleset {rules.name!r}: the best response to {', '.join(names)} did not converge "
            f"(residual {stats['residual']:.2g}); please report this ruleset"
        )
    p_seat = np.array([U[(N - j) % N, 0] for j in range(N)])
    pruned = max(f.pruned for f in st.fixed if f is not None)
    secs = time.perf_counter() - t0
    stats.update({"cached": False, "pruned": pruned, "tabulations": sum(f.tabulations for f in st.fixed if f)})
    br = MultiBestResponse(rules, st.spec, names, p_seat, U[1 % N].copy(), FB, chains, secs, stats)
    if disk:
        save_arrays(
            disk,
            {
                "p_seat": p_seat,
                "U1": br.U1,
                "FB": FB,
                **_chain_arrays(chains),
                "meta": np.array([secs, pruned, stats["residual"], stats["max_iterations"], stats["dp_calls"]]),
            },
        )
    return br
