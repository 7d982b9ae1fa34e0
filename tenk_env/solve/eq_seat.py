"""Exact win probability of one fixed player seated beside the symmetric equilibrium.

The equilibrium (:mod:`tenk_env.solve.equilibrium`) reads every player's score, so the
N-player evaluator (:mod:`tenk_env.solve.multi`), whose fixed players read their own score
and the leader's, cannot seat it. Here player 0 is a fixed bot (its outcome tables, as
:func:`tenk_env.solve.kernels.multi.regular_level` reads them) and players 1..N-1 play the
equilibrium's strategy: each of their turns is chosen on the mover's own chance from the
equilibrium's tables, as the agent ``equilibrium`` plays it, while the bot's chance is carried
along the turn by :func:`tenk_env.solve.kernels.turn.self_eval_dp`. It is carried as its
complement, the chance that someone else wins, which is 1 on an instant win and past the
turn's cap (the mover's bank then wins surely, to the solver's truncation): that is how the
kernel values a carried total there.

N equilibrium players take 1/N of the wins each over the seat rotations, so the bot's
shortfall from 1/N is what it gives away against equilibrium play, exactly. The final
round is played backward from the last player, as in the N-player evaluator, with the
equilibrium's final turns chosen as :func:`tenk_env.solve.multi.final_turn_values` chooses them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tenk_env.jit import njit, prange
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import cache_path, load_arrays, result_key, save_arrays
from tenk_env.solve.equilibrium import EQ_VERSION, Equilibrium, check_equilibrium_rules, solve_equilibrium
from tenk_env.solve.evaluate import THETA, Tabulated
from tenk_env.solve.kernels.equilibrium import eq_cap, eq_index, eq_turn_inputs
from tenk_env.solve.kernels.multi import bank_cap, final_bank_values, final_cap, final_fixed, final_responder, respond
from tenk_env.solve.kernels.rules import bankable_from, on_board
from tenk_env.solve.kernels.turn import self_eval_dp
from tenk_env.solve.multi import final_turn_values, setup_players, turn_tables
from tenk_env.solve.shared import EPS, TOL, min_bust_chance
from tenk_env.solve.spec import (
    END_IMMEDIATE,
    P_END,
    P_ENTRY,
    P_MAXROLLS,
    P_MINBANK,
    P_N,
    P_TARGET,
    SolverError,
    Spec,
    build_spec,
)

#: final_responder's table of another player's chance, not wanted here
NO_EVAL = (np.zeros((0, 0, 0)), np.zeros((0, 0)))

__all__ = [
    "Exploitability",
    "SeatVsEquilibrium",
    "SeatBestResponse",
    "best_response_beside_equilibrium",
    "equilibrium_exploitability",
    "evaluate_beside_equilibrium",
]


@njit(cache=True)
def bust_value(tu, N, d, E):
    """An equilibrium mover's own chance, at scores d read from it, after a turn that banks
    nothing: the next player moves at the same scores, with the mover last."""
    bust = 0
    mult = 1
    for k in range(N):
        bust += d[(k + 1) % N] * mult
        mult *= tu
    v = 1.0
    for c in range(N - 1):
        v -= E[c, bust]
    return v


@njit(cache=True, parallel=True)
def final_eq(prm_f, rolls, max_step, tu, Jk, P1, OWN, PHI1, ix, pbmin, eps, fA, fB, out):
    """An equilibrium player's final turn: ``out[hx, j, a + tu * r1]`` as :func:`final_fixed`
    gives it, ``ix``: this player is the focus. The turn is chosen on the mover's own chance
    (``OWN[1, bar - target, r1]``, or ``r1 = 0`` where ``OWN`` has one column, once it beats the
    bar; 0 if it does not: the bar is another player's), as
    :func:`tenk_env.solve.multi.final_turn_values` chooses it. Carried along it: the chance
    that it beats the bar (``pb``) and that it does and the focus player then loses (``pg``):
    the focus player's chance is ``(1 - pb) * stay + pb - pg``; or, where it is the focus,
    its own chance (``pg``: it beats the bar and then is not beaten)."""
    J1 = PHI1.shape[1]
    one = OWN.shape[2] == 1
    N = prm_f[P_N]
    nr = max(1, prm_f[P_MAXROLLS])
    entry = prm_f[P_ENTRY]
    minbank = prm_f[P_MINBANK]
    for jq in prange(Jk * P1):
        jr = np.int64(jq)
        j = jr // P1
        r1 = jr % P1
        ro = 0 if one else r1
        M = tu + j
        ycap = final_cap(prm_f, tu, M, OWN, ro, 0.0, pbmin, eps)
        if minbank == 0:
            ends = 2 if entry > 0 else 1
        else:
            ends = tu
        for e in range(ends):
            if minbank == 0:
                a0 = 0
                fa = 1 if e == 0 else 0
                Tcap = max(ycap, bankable_from(prm_f, fa))
            else:
                a0 = e
                fa = on_board(prm_f, a0)
                Tcap = max(ycap - a0, bankable_from(prm_f, fa))
            n = Tcap + max_step + 2
            bv = np.empty(n)
            final_bank_values(tu, M, a0, OWN, ro, 0.0, bv)
            bb = np.zeros(n)
            bg = np.zeros(n)
            for T in range(n):
                y = a0 + T
                if y > M:
                    bb[T] = 1.0
                    bg[T] = PHI1[1, min(y - tu, J1 - 1), r1] if ix else 1.0 - PHI1[0, min(y - tu, J1 - 1), r1]
            V = np.empty((nr, N + 1, Tcap + 1))
            Qa = np.empty((nr, N + 1, Tcap + 1))
            Vb = np.empty((nr, N + 1, Tcap + 1))
            Qb = np.empty((nr, N + 1, Tcap + 1))
            Vg = np.empty((nr, N + 1, Tcap + 1))
            Qg = np.empty((nr, N + 1, Tcap + 1))
            self_eval_dp(prm_f, rolls, fa, Tcap, bv, 0.0, bb, V, Qa, Vb, Qb, fA, fB)
            self_eval_dp(prm_f, rolls, fa, Tcap, bv, 0.0, bg, V, Qa, Vg, Qg, fA, fB)
            # one induction per starting score, or one over score + total for all of them
            if minbank != 0:
                lo, hi = a0, a0 + 1
            elif fa == 1:
                lo, hi = 0, tu
            else:
                lo, hi = 0, 1
            for a in range(lo, hi):
                t = 0 if minbank != 0 else a
                pb = Vb[0, N, t]
                pg = Vg[0, N, t]
                for hx in range(2):
                    out[hx, j, a + tu * r1] = pg if ix else (1.0 - pb) * PHI1[hx, min(j, J1 - 1), r1] + pb - pg


@njit(cache=True, parallel=True)
def eqseat_level(
    prm,
    rolls,
    max_step,
    tu,
    N,
    resp,
    eqs,
    states,
    KID,
    DIST,
    DW,
    DQ,
    TRIG,
    U,
    E,
    TW,
    XT,
    pbmin,
    eps,
    tol,
    fA,
    fB,
    res,
    its,
):
    """Solve the turn-start states ``states`` (one level) for player 0. ``U[m, idx]``: player
    0's chance with player m to move at scores idx (absolute order). Player m > 0 plays the
    equilibrium where ``eqs[m]``: its turn is chosen as :func:`eq_turn` chooses it and carries
    player 0's chance; elsewhere it is a fixed player, its turns its outcome rows
    ``DIST[KID[m, own, leader]]`` as in :func:`regular_level`. ``TRIG[m, bar - target, rest]``:
    player 0's chance once player m starts the final round, ``rest`` the scores of the players
    after m.

    Player 0 is a fixed player (its outcome rows, as in :func:`regular_level`), or an
    equilibrium player where ``eqs[0]`` (its own chance carried along the turn it chooses):
    with every turn fixed the movers' cycle is linear, closed form. With ``resp`` it is the
    best responder: its
    bust value is then linear in its own value round the cycle, and :func:`respond` finds the
    fixed point. ``res``/``its`` receive each state's last change and the responder's turn
    solves (0 for a fixed player)."""
    pw = np.empty(N, np.int64)
    p = 1
    for i in range(N):
        pw[i] = p
        p *= tu
    Lr = DIST.shape[1]
    Nd = prm[P_N]
    nr = max(1, prm[P_MAXROLLS])
    J = TRIG.shape[1]
    size = tu + max(TW.shape[0], J) + max_step + 4 + bankable_from(prm, 0)
    for iq in prange(states.shape[0]):
        i = np.int64(iq)
        idx = states[i]
        s = np.empty(N, np.int64)
        for k in range(N):
            s[k] = idx // tu**k % tu
        c = np.zeros(N)
        q = np.zeros(N)
        rest0 = eq_index(tu, N, s, 1)
        d = np.empty(N, np.int64)
        bv2 = np.empty(size)
        bx = np.empty((XT.shape[0], size))
        bc = np.empty(size)
        V2 = np.empty((nr, Nd + 1, size))
        Q2 = np.empty((nr, Nd + 1, size))
        V = np.empty((nr, Nd + 1, size))
        Q = np.empty((nr, Nd + 1, size))
        for m in range(1, N):
            for k in range(N):
                d[k] = s[(m + k) % N]
            nxt = (m + 1) % N
            rest = eq_index(tu, N, d, 1)
            if not eqs[m]:
                lead = 0
                for k in range(1, N):
                    lead = max(lead, d[k])
                key = KID[m, d[0], lead]
                cm = 0.0
                for T in range(1, Lr):
                    pr = DIST[key, T]
                    if pr == 0.0:
                        continue
                    y = d[0] + T
                    if y < tu:
                        cm += pr * U[nxt, idx + T * pw[m]]
                    else:
                        cm += pr * TRIG[m, min(y - tu, J - 1), rest]
                c[m] = cm
                q[m] = DQ[key]
                continue
            bo = bust_value(tu, N, d, E)
            fa = on_board(prm, d[0])
            Tcap = eq_turn_inputs(prm, tu, N, d, E, TW, XT, pbmin, eps, bo, max_step, bv2, bx)
            for T in range(Tcap + max_step + 2):
                y = d[0] + T
                if y < tu:
                    bc[T] = 1.0 - U[nxt, idx + T * pw[m]]
                else:
                    bc[T] = 1.0 - TRIG[m, min(y - tu, J - 1), rest]
            self_eval_dp(prm, rolls, fa, Tcap, bv2, bo, bc, V2, Q2, V, Q, fA, fB)
            qm = Q[0, Nd, 0]
            c[m] = 1.0 - qm - V[0, Nd, 0]
            q[m] = qm
        if resp:
            # after player 0's bust: beta = C + Q * (player 0's value)
            C = 0.0
            Qc = 1.0
            for m in range(1, N):
                C += Qc * c[m]
                Qc *= q[m]
            a = s[0]
            # the first guess, from the plane through three solved neighbours (as regular_level)
            xv = U[0, idx + pw[1 % N]] if s[1 % N] + 1 < tu else 0.5
            if s[1 % N] + 1 < tu and a + 1 < tu:
                xv += U[0, idx + 1] - U[0, idx + 1 + pw[1 % N]]
            bv = np.empty(tu - a + J + max_step + 4 + bankable_from(prm, on_board(prm, a)))
            lose = np.empty(J)
            for j in range(J):
                lose[j] = 1.0 - TRIG[0, j, rest0]
            for T in range(bv.shape[0]):
                y = a + T
                bv[T] = U[1 % N, idx + T] if y < tu else TRIG[0, min(y - tu, J - 1), rest0]
            u, r, it = respond(prm, rolls, tu, a, lose, bv, C, Qc, xv, pbmin, eps, tol, fA, fB)
            res[i] = r
            its[i] = it
        else:
            if eqs[0]:
                bo = bust_value(tu, N, s, E)
                Tcap = eq_turn_inputs(prm, tu, N, s, E, TW, XT, pbmin, eps, bo, max_step, bv2, bx)
                for T in range(Tcap + max_step + 2):
                    y = s[0] + T
                    bc[T] = U[1 % N, idx + T] if y < tu else TRIG[0, min(y - tu, J - 1), rest0]
                self_eval_dp(prm, rolls, on_board(prm, s[0]), Tcap, bv2, bo, bc, V2, Q2, V, Q, fA, fB)
                c[0] = V[0, Nd, 0]
                q[0] = Q[0, Nd, 0]
            else:
                lead = 0
                for k in range(1, N):
                    lead = max(lead, s[k])
                key = KID[0, s[0], lead]
                cm = DW[key]
                for T in range(1, Lr):
                    pr = DIST[key, T]
                    if pr == 0.0:
                        continue
                    y = s[0] + T
                    if y < tu:
                        cm += pr * U[1 % N, idx + T]
                    else:
                        cm += pr * TRIG[0, min(y - tu, J - 1), rest0]
                c[0] = cm
                q[0] = DQ[key]
            num = 0.0
            prod = 1.0
            for m in range(N):
                num += prod * c[m]
                prod *= q[m]
            u = num / (1.0 - prod)
            res[i] = 0.0
            its[i] = 0
        U[0, idx] = u
        for m in range(N - 1, 0, -1):
            u = c[m] + q[m] * u
            U[m, idx] = u


@dataclass
class SeatVsEquilibrium:
    """A fixed player's exact win probability with the other N - 1 seats playing the symmetric
    equilibrium. ``p_seat[j]``: from seat j (j players move before it; seat 1 moves first);
    ``p``: the mean over the seats. ``fair``: 1/N, what an equilibrium player takes there, so
    ``fair - p`` is what the player gives away against equilibrium play."""

    rules: Ruleset
    name: str
    p_seat: np.ndarray
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def n_players(self) -> int:
        return len(self.p_seat)

    @property
    def p(self) -> float:
        return float(self.p_seat.mean())

    @property
    def fair(self) -> float:
        return 1.0 / self.n_players


@dataclass(kw_only=True)
class SeatBestResponse(SeatVsEquilibrium):
    """The best response beside equilibrium players (and bots), with the tables the agent
    ``br:equilibrium,equilibrium`` plays from. Scores are read from the responder (its own
    first, then the players after it), in units: ``U0[idx]``, its chance at the start of its
    turn; ``U1[idx]``, with the next player to move; ``TRIG0[bar - target, rest]``, once it
    starts the final round (``rest``: the others' scores); ``finals[t]``, its chance once it
    has played its final turn, the round started by the player t places after it
    (``[holds the bar, bar - target, scores of the players still to play]``)."""

    spec: Spec
    U0: np.ndarray
    U1: np.ndarray
    TRIG0: np.ndarray
    finals: dict

    @property
    def unit(self) -> int:
        return self.spec.unit

    def turn_values(self, scores):
        """The responder's within-turn values at the start of its turn (``scores`` in units,
        its own first), as :meth:`tenk_env.solve.multi.MultiBestResponse.turn_values` returns
        them: the turn the solver chose there."""
        s = self.spec
        tu = int(s.prm[P_TARGET])
        sv = [int(x) for x in scores]
        idx = sum(x * tu**k for k, x in enumerate(sv))
        rest, a = idx // tu, sv[0]
        beta = float(self.U1[idx])
        J = self.TRIG0.shape[0]
        Tcap = int(bank_cap(s.prm, tu, a, 1.0 - self.TRIG0[:, rest], min_bust_chance(s), EPS, beta))
        bv = np.array(
            [
                self.U1[idx + T] if a + T < tu else self.TRIG0[min(a + T - tu, J - 1), rest]
                for T in range(Tcap + s.max_step + 2)
            ]
        )
        return turn_tables(s, s.prm, int(on_board(s.prm, a)), Tcap, bv, beta)

    def final_values(self, scores, trigger: int, bar: int):
        """The responder's final turn: ``scores`` as in :meth:`turn_values`, ``trigger`` the
        position (1..N-1 after the responder) of the player who started the final round,
        ``bar`` the highest score so far (units, held by another player)."""
        N, tu = self.n_players, int(self.spec.prm[P_TARGET])
        k = N - trigger  # the responder's place in the final round's order
        r1 = sum(int(scores[(trigger + ell) % N]) * tu ** (ell - k - 1) for ell in range(k + 1, N))
        return final_turn_values(self.spec, self.finals[trigger], r1, int(bar), int(scores[0]))


@njit(cache=True)
def eq_reach(prm, tu, N, E, TW, pbmin, eps, max_step):
    """The most units past the target an equilibrium player's regular turn banks: at every
    score vector (read from the mover), its cap (:func:`eq_cap`) plus one keep."""
    top = 0
    d = np.empty(N, np.int64)
    for idx in range(tu**N):
        for k in range(N):
            d[k] = idx // tu**k % tu
        top = max(top, d[0] + eq_cap(prm, tu, N, d, TW, pbmin, eps, bust_value(tu, N, d, E)) + max_step + 1 - tu)
    return top


def _chain(st, eq, resp: bool, t: int, J1: int, keep: dict | None = None) -> np.ndarray:
    """The final round after player t starts it, played backward from the last player:
    player 0's chance with the first player after t to move, ``[hx, bar - target, rest]``
    for the ``J1`` bars the trigger's bank reaches; ``resp``: player 0 is the best responder
    (where ``st.fixed[0]`` is None: else it plays the equilibrium). ``keep[t]`` receives the
    table the responder's final turn plays against (its chance once it has played)."""
    s, N, tu = st.spec, st.N, st.tu
    phi = np.zeros((2, st.J, 1))
    phi[1] = 1.0  # the round is over: the holder wins
    for k in range(N - 1, 0, -1):
        i = (t + k) % N
        Pk = tu ** (N - k)
        # the first to play after the trigger faces the trigger's bank; later ones, a bar a
        # final turn may have raised
        Jk = J1 if k == 1 else st.J
        out = np.zeros((2, Jk, Pk))
        f = st.fixed[i]
        if i == 0 and resp:  # the best responder: its chance once it beats the bar is phi[1]
            if keep is not None:
                keep[t] = phi
            final_responder(
                st.prm_f, s.rolls, s.max_step, tu, Jk, Pk // tu, phi, st.pbmin, EPS, st.fAf, st.fBf, out, *NO_EVAL
            )
        elif f is not None:
            final_fixed(tu, N, int(i == 0), Jk, Pk, f.FKID, f.FDIST, f.FW, phi, out)
        else:
            own = eq.final_own(N - 1 - k)  # its own chance once it beats the bar
            final_eq(
                st.prm_f, s.rolls, s.max_step, tu, Jk, Pk // tu, own, phi, i == 0, st.pbmin, EPS, st.fAf, st.fBf, out
            )
        phi = out
    return phi


#: player 0 of :func:`_seat_pass` playing the equilibrium (None there is the best responder)
EQUILIBRIUM = "equilibrium"


def _key(rules: Ruleset, players: list, theta: float, kind: str = "eqseat") -> str | None:
    # the code part covers every module this evaluation runs (the equilibrium's solver and the
    # N-player kernels included); each bot's key covers the bot's own code
    first = players[0]
    who = ["br" if first is None else ("eq" if first == EQUILIBRIUM else first.cache_key())]
    who += ["eq" if p is None else p.cache_key() for p in players[1:]]
    if not all(who):
        return None
    return result_key(__name__, f"{kind}{len(players)}-v{EQ_VERSION}", rules.hash, *who, f"{theta:g}")


def _final_arrays(finals: dict) -> dict:
    """The responder's final tables (:func:`_chain`'s ``keep``) as arrays of a cache file."""
    return {f"final_{t}": v for t, v in finals.items()}


def _read_finals(arrays: dict) -> dict:
    """:func:`_final_arrays` read back."""
    return {int(k[6:]): v for k, v in arrays.items() if k.startswith("final_")}


#: a pass saves its progress at most this often (seconds; a save takes seconds at the full
#: target), so a run that is stopped resumes where it was instead of starting again
CHECKPOINT_SECONDS = 600.0


def _seat_pass(
    rules: Ruleset,
    eq: Equilibrium,
    players: list,
    theta: float,
    progress,
    tables: dict | None = None,
    checkpoint: str | None = None,
):
    """Player 0 (a :class:`~tenk_env.solve.evaluate.Tabulated` policy, the best responder for
    None, or :data:`EQUILIBRIUM`) beside players 1..N-1 (policies, or the equilibrium ``eq``
    for None): (player 0's chance from each seat, stats). ``tables``, for the best responder,
    receives what it plays from (the fields of :class:`SeatBestResponse`).

    ``checkpoint``: the cache key the pass's progress is kept under (the final round's tables,
    then the levels solved, every :data:`CHECKPOINT_SECONDS`); a pass that finds it goes on
    from there, to the same floats as a pass never stopped, and drops it when done. The key
    must name everything the pass depends on (the result's own key does)."""
    N = len(players)
    first = players[0]
    resp = first is None
    eqs = np.array([first is EQUILIBRIUM] + [p is None for p in players[1:]])
    st = setup_players(rules, [None if first is EQUILIBRIUM else first] + players[1:], theta)
    s, tu = st.spec, st.tu
    order, bounds = st.levels
    t0 = last = time.perf_counter()  # the final round's tables count: they are a third of a pass
    before = 0.0  # seconds the runs stopped earlier spent on this pass
    saved = load_arrays(checkpoint) if checkpoint else None
    # the levels solved before a stop: their largest last change and their turn solves
    res_before, its_before = 0.0, 0
    shapes = {"U": (N, tu**N), "TRIG": (N, st.J, tu ** (N - 1)), "level": (), "seconds": (), "done": (2,)}
    if saved is not None and all(k in saved and saved[k].shape == v for k, v in shapes.items()):
        TRIG, U = saved["TRIG"], saved["U"]
        finals = _read_finals(saved)
        start, before = int(saved["level"]), float(saved["seconds"])
        res_before, its_before = float(saved["done"][0]), int(saved["done"][1])
    else:
        TRIG, finals = _final_round(st, eq, resp, eqs)
        U = np.zeros((N, tu**N))
        start = 0
    res = np.zeros(order.shape[0])
    its = np.zeros(order.shape[0], np.int64)

    def keep(level: int) -> None:
        nonlocal last
        if checkpoint and time.perf_counter() - last >= CHECKPOINT_SECONDS:
            arrays = _final_arrays(finals)
            n = bounds[level]
            done = np.array([max(res_before, res[:n].max(initial=0.0)), its_before + its[:n].sum()])
            seconds = np.array(before + time.perf_counter() - t0)
            arrays.update(TRIG=TRIG, U=U, level=np.array(level), seconds=seconds, done=done)
            save_arrays(checkpoint, arrays)
            last = time.perf_counter()

    keep(start)
    KID, DIST, DW, DQ, _ = st.stacked
    total = float(order.shape[0])
    for lv in range(start, len(bounds) - 1):
        lo, hi = bounds[lv], bounds[lv + 1]
        if hi == lo:
            continue
        eqseat_level(
            s.prm,
            s.rolls,
            s.max_step,
            tu,
            N,
            resp,
            eqs,
            order[lo:hi],
            KID,
            DIST,
            DW,
            DQ,
            TRIG,
            U,
            eq.E,
            eq.TW,
            eq.XT,
            st.pbmin,
            EPS,
            TOL,
            st.fA,
            st.fB,
            res[lo:hi],
            its[lo:hi],
        )
        keep(lv + 1)
        if progress is not None:
            progress(hi / total)
    if checkpoint:
        cache_path(checkpoint).unlink(missing_ok=True)
    # seat j: j players move before player 0, so player (N - j) % N moves first
    p_seat = np.array([U[(N - j) % N, 0] for j in range(N)])
    if tables is not None and resp:
        tables.update(U0=U[0].copy(), U1=U[1 % N].copy(), TRIG0=TRIG[0].copy(), finals=finals)
    fixed = [f for f in st.fixed if f is not None]
    stats = {
        "pruned": max((f.pruned for f in fixed), default=0.0),
        "tabulations": sum(f.tabulations for f in fixed),
        "residual": max(res_before, float(res.max())),
        "turns_solved": its_before + int(its.sum()),
        "seconds_before": before,
        "resumed_at": float(bounds[start]) / order.shape[0],
    }
    if stats["residual"] > 1e3 * TOL:
        raise SolverError(
            f"ruleset {rules.name!r}: the best response beside the {N}-player equilibrium did not converge "
            f"(last change {stats['residual']:.2g}); please report this ruleset"
        )
    return p_seat, stats


def _final_round(st, eq: Equilibrium, resp: bool, eqs: np.ndarray):
    """``TRIG[t, bar - target, rest]``, player 0's chance once player t starts the final round,
    for :func:`eqseat_level`, and the responder's final tables (:func:`_chain`'s ``keep``)."""
    s, N, tu = st.spec, st.N, st.tu
    TRIG = np.zeros((N, st.J, tu ** (N - 1)))
    finals: dict = {}
    if s.prm[P_END] == END_IMMEDIATE:
        TRIG[0] = 1.0  # a bank to the target wins at once
    else:
        # the bars a trigger's bank reaches: a bot's from its tables, the equilibrium's from
        # its caps, the responder's as far as the tables go (past them a bar is beaten with
        # chance <= EPS)
        reach = min(st.J, 1 + eq_reach(s.prm, tu, N, eq.E, eq.TW, st.pbmin, EPS, s.max_step))
        for t in range(N):
            J1 = st.J if (t == 0 and resp) else (reach if eqs[t] else st.J1)
            TRIG[t, :J1] = _chain(st, eq, resp, t, J1, finals)[1 if t == 0 else 0]
            TRIG[t, J1:] = TRIG[t, J1 - 1]  # never reached: the kernels' clamp
    return TRIG, finals


def evaluate_beside_equilibrium(
    rules: Ruleset | str,
    policy: Tabulated,
    n_players: int = 3,
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
) -> SeatVsEquilibrium | None:
    """Exact P(win) of the fixed :class:`~tenk_env.solve.evaluate.Tabulated` ``policy`` from
    every seat of an ``n_players`` game (2 to 4) whose other seats play the symmetric
    equilibrium (solved first if it is not cached). Cached on disk by ruleset hash, the
    policy's content key and this module's code; ``cached_only``: None unless it is cached."""
    rules = load_ruleset(rules)
    N = int(n_players)
    check_equilibrium_rules(rules, N)
    players = [policy] + [None] * (N - 1)
    disk = _key(rules, players, theta) if cache else None
    if disk:
        got = load_arrays(disk)
        if got is not None:
            return SeatVsEquilibrium(rules, policy.name, got["p_seat"], float(got["meta"][0]), {"cached": True})
    if cached_only:
        return None
    t0 = time.perf_counter()
    eq = solve_equilibrium(rules, N, cache=cache)
    assert eq is not None  # None only with cached_only
    p_seat, stats = _seat_pass(rules, eq, players, theta, progress, checkpoint=disk and f"{disk}-partial")
    secs = time.perf_counter() - t0 + stats["seconds_before"]
    res = SeatVsEquilibrium(rules, policy.name, p_seat, secs, {"cached": False, **stats})
    if disk:
        save_arrays(disk, {"p_seat": p_seat, "meta": np.array([secs])})
    return res


def best_response_beside_equilibrium(
    rules: Ruleset | str,
    others: list,
    *,
    cache: bool = True,
    theta: float = THETA,
    progress=None,
    cached_only: bool = False,
    equilibrium: Equilibrium | None = None,
) -> SeatBestResponse | None:
    """The exact best response to ``others``, the players seated after it in this order, each
    a fixed :class:`~tenk_env.solve.evaluate.Tabulated` policy or (None) a player of the
    symmetric equilibrium (solved first if it is not cached): a strategy that reads every
    player's score, its win probability from every seat (2 to 4 players in all) and the
    tables it plays from (:class:`SeatBestResponse`). Against fixed bots alone it is
    :func:`tenk_env.solve.multi.best_response_multi`'s. Cached on disk by ruleset hash, the
    bots' content keys and this module's code; ``equilibrium``: the solved equilibrium to
    play (else it is loaded or solved)."""
    rules = load_ruleset(rules)
    players = [None] + list(others)
    N = len(players)
    check_equilibrium_rules(rules, N)
    spec = build_spec(rules, for_game=True)
    disk = _key(rules, players, theta) if cache else None
    if disk:
        got = load_arrays(disk)
        if got is not None:
            m = got["meta"]
            finals = _read_finals(got)
            return SeatBestResponse(
                rules,
                "best response",
                got["p_seat"],
                float(m[0]),
                {"cached": True, "turns_solved": int(m[1])},
                spec=spec,
                U0=got["U0"],
                U1=got["U1"],
                TRIG0=got["TRIG0"],
                finals=finals,
            )
    if cached_only:
        return None
    t0 = time.perf_counter()
    eq = equilibrium or solve_equilibrium(rules, N, cache=cache)
    assert eq is not None  # None only with cached_only
    if eq.n_players != N or eq.rules.hash != rules.hash:
        raise ValueError(
            f"the equilibrium given is {eq.rules.name!r} at {eq.n_players} players, not {rules.name!r} at {N}"
        )
    tables: dict = {}
    p_seat, stats = _seat_pass(rules, eq, players, theta, progress, tables, checkpoint=disk and f"{disk}-partial")
    secs = time.perf_counter() - t0 + stats["seconds_before"]
    finals = tables.pop("finals")
    if disk:
        arrays = _final_arrays(finals)
        save_arrays(disk, {"p_seat": p_seat, **tables, **arrays, "meta": np.array([secs, stats["turns_solved"]])})
    return SeatBestResponse(
        rules, "best response", p_seat, secs, {"cached": False, **stats}, spec=spec, finals=finals, **tables
    )


@dataclass
class Exploitability:
    """How much one seat can gain against N - 1 players of the symmetric equilibrium.

    ``br[j]``: the exact win probability of the best response from seat j (j players move
    before it; seat 1 moves first), a strategy that reads every player's score and the whole
    turn; ``played[j]``: the equilibrium strategy's own, as the agent ``equilibrium`` plays it
    in every seat (None where only NashConv was asked for). ``gain = br - played`` is each
    seat's exploitability and ``nash_conv`` their sum (NashConv, as OpenSpiel reports it: 0
    exactly at an equilibrium). A game here has exactly one winner (ties go to who reached the
    target first), so the seats' chances under one strategy sum to 1 and NashConv is also
    ``sum(br) - 1``: the best response alone gives it. ``eq[j]``: the solver's value of the
    start (:attr:`Equilibrium.p_seat`), the same as ``played`` where every cycle of turns has a
    pure equilibrium; where one has none, the solver keeps the profile of least deviation gain
    while the strategy chooses again on the values found, and the two differ by about that
    gain. ``seconds`` covers the passes run."""

    rules: Ruleset
    br: np.ndarray
    played: np.ndarray | None
    eq: np.ndarray
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def n_players(self) -> int:
        return len(self.br)

    @property
    def gain(self) -> np.ndarray | None:
        return None if self.played is None else self.br - self.played

    @property
    def nash_conv(self) -> float:
        return float(self.br.sum() - (1.0 if self.played is None else self.played.sum()))


def equilibrium_exploitability(
    rules: Ruleset | str,
    n_players: int = 3,
    *,
    seats: bool = True,
    cache: bool = True,
    progress=None,
    cached_only: bool = False,
) -> Exploitability | None:
    """The exploitability of the symmetric equilibrium of ``rules`` (2 to 4 players; solved
    first if it is not cached), exactly: from every seat, the best response of one seat to the
    N - 1 others (one pass, about as long as a bot's evaluation beside the equilibrium) and,
    with ``seats``, the equilibrium strategy's own value there (a second pass), for each
    seat's gain. Without ``seats`` only NashConv is known (``sum(br) - 1``), from the first
    pass alone. Cached on disk by ruleset hash and this module's code, the best response
    first: a later call with ``seats`` runs the second pass alone. ``cached_only``: None
    unless cached."""
    rules = load_ruleset(rules)
    N = int(n_players)
    check_equilibrium_rules(rules, N)
    # its own kind: the best response alone to N - 1 equilibrium players has the same players
    disk = _key(rules, [None] * N, THETA, "eqx") if cache else None
    eq = solve_equilibrium(rules, N, cache=cache, cached_only=cached_only)
    if eq is None:
        return None
    br, played, secs, stats = None, None, 0.0, {}
    if disk:
        got = load_arrays(disk)
        if got is not None:
            m = got["meta"]
            br, played, secs = got["br"], got.get("played"), float(m[0])
            stats = {"residual": float(m[1]), "turns_solved": int(m[2])}
            if played is not None or not seats:
                return Exploitability(rules, br, played, eq.p_seat, secs, {"cached": True, **stats})
    if cached_only:
        return None
    t0 = time.perf_counter()
    cached = br is not None
    both = seats and not cached
    first = (lambda f: progress(f / 2)) if progress and both else progress
    second = (lambda f: progress(0.5 + f / 2)) if progress and both else progress
    if br is None:
        br, stats = _seat_pass(rules, eq, [None] * N, THETA, first, checkpoint=disk and f"{disk}-partial-br")
        if disk:  # kept before the second pass: a run stopped there keeps NashConv
            meta = np.array(
                [time.perf_counter() - t0 + stats["seconds_before"], stats["residual"], stats["turns_solved"]]
            )
            save_arrays(disk, {"br": br, "meta": meta})
        secs += stats["seconds_before"]
    if seats:
        played, st2 = _seat_pass(
            rules, eq, [EQUILIBRIUM] + [None] * (N - 1), THETA, second, checkpoint=disk and f"{disk}-partial-played"
        )
        secs += st2["seconds_before"]
    secs += time.perf_counter() - t0  # with a cached first pass, its time as well
    if disk and seats:
        save_arrays(
            disk, {"br": br, "played": played, "meta": np.array([secs, stats["residual"], stats["turns_solved"]])}
        )
    return Exploitability(
        rules, br, played, eq.p_seat, secs, {"cached": False, "best_response_cached": cached, **stats}
    )
