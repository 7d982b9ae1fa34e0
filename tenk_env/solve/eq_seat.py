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
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.equilibrium import EQ_VERSION, check_equilibrium_rules, solve_equilibrium
from tenk_env.solve.evaluate import THETA, Tabulated
from tenk_env.solve.kernels.equilibrium import eq_cap, eq_index, eq_turn_inputs
from tenk_env.solve.kernels.multi import final_bank_values, final_cap, final_fixed
from tenk_env.solve.kernels.rules import bankable_from, on_board
from tenk_env.solve.kernels.turn import self_eval_dp
from tenk_env.solve.multi import setup_players
from tenk_env.solve.shared import EPS
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_ENTRY, P_MAXROLLS, P_MINBANK, P_N

__all__ = ["SeatVsEquilibrium", "evaluate_beside_equilibrium"]


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
def final_eq(prm_f, rolls, max_step, tu, Jk, P1, OWN, PHI1, pbmin, eps, fA, fB, out):
    """An equilibrium player's final turn when the focus player is another: ``out[hx, j, a +
    tu * r1]`` as :func:`final_fixed` gives it. The turn is chosen on the mover's own chance
    (``OWN[1, bar - target, r1]``, or ``r1 = 0`` where ``OWN`` has one column, once it beats the
    bar; 0 if it does not: the bar is another player's), as
    :func:`tenk_env.solve.multi.final_turn_values` chooses it. Carried along it: the chance
    that it beats the bar (``pb``) and that it does and the focus player then loses (``pg``):
    the focus player's chance is ``(1 - pb) * stay + pb - pg``."""
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
                    bg[T] = 1.0 - PHI1[0, min(y - tu, J1 - 1), r1]
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
                    out[hx, j, a + tu * r1] = (1.0 - pb) * PHI1[hx, min(j, J1 - 1), r1] + pb - pg


@njit(cache=True, parallel=True)
def eqseat_level(prm, rolls, max_step, tu, N, states, KID, DIST, DW, DQ, TRIG, U, E, TW, XT, pbmin, eps, fA, fB):
    """Solve the turn-start states ``states`` (one level) for player 0, a fixed player, with
    players 1..N-1 playing the equilibrium. ``U[m, idx]``: player 0's chance with player m to
    move at scores idx (absolute order). Player 0's turns are its outcome rows (as in
    :func:`regular_level`); an equilibrium player's turn is chosen as :func:`eq_turn` chooses
    it and carries player 0's chance. ``TRIG[m, bar - target, rest]``: player 0's chance once
    player m starts the final round, ``rest`` the scores of the players after m. With every
    turn fixed the movers' cycle is linear: closed form."""
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
        lead = 0
        for k in range(1, N):
            lead = max(lead, s[k])
        key = KID[0, s[0], lead]
        rest0 = eq_index(tu, N, s, 1)
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
        d = np.empty(N, np.int64)
        bv2 = np.empty(size)
        bx = np.empty(size)
        bc = np.empty(size)
        V2 = np.empty((nr, Nd + 1, size))
        Q2 = np.empty((nr, Nd + 1, size))
        V = np.empty((nr, Nd + 1, size))
        Q = np.empty((nr, Nd + 1, size))
        for m in range(1, N):
            for k in range(N):
                d[k] = s[(m + k) % N]
            bo = bust_value(tu, N, d, E)
            fa = on_board(prm, d[0])
            Tcap = eq_turn_inputs(prm, tu, N, d, E, TW, XT, pbmin, eps, bo, max_step, bv2, bx)
            nxt = (m + 1) % N
            rest = eq_index(tu, N, d, 1)
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
        num = 0.0
        prod = 1.0
        for m in range(N):
            num += prod * c[m]
            prod *= q[m]
        u = num / (1.0 - prod)
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


def _chain(st, eq, t: int, J1: int) -> np.ndarray:
    """The final round after player t starts it, played backward from the last player:
    player 0's chance with the first player after t to move, ``[hx, bar - target, rest]``
    for the ``J1`` bars the trigger's bank reaches."""
    s, N, tu = st.spec, st.N, st.tu
    JE = eq.LB.shape[0]
    phi = np.zeros((2, st.J, 1))
    phi[1] = 1.0  # the round is over: the holder wins
    for k in range(N - 1, 0, -1):
        i = (t + k) % N
        Pk = tu ** (N - k)
        # the first to play after the trigger faces the trigger's bank; later ones, a bar a
        # final turn may have raised
        Jk = J1 if k == 1 else st.J
        out = np.zeros((2, Jk, Pk))
        if i == 0:
            f = st.fixed[0]
            final_fixed(tu, N, 1, Jk, Pk, f.FKID, f.FDIST, f.FW, phi, out)
        else:
            # its own chance once it beats the bar, as Equilibrium.final_values has it
            if k == N - 1:
                own = np.zeros((2, JE, 1))
                own[1] = 1.0
            else:
                own = np.zeros((2, JE, tu))
                own[1] = 1.0 - eq.LB
            final_eq(st.prm_f, s.rolls, s.max_step, tu, Jk, Pk // tu, own, phi, st.pbmin, EPS, st.fAf, st.fBf, out)
        phi = out
    return phi


def _key(rules: Ruleset, N: int, policy: Tabulated, theta: float) -> str:
    # the code part covers every module this evaluation runs (the equilibrium's solver and the
    # N-player kernels included); the policy's key covers the bot's own code
    return result_key(__name__, f"eqseat{N}-v{EQ_VERSION}", rules.hash, policy.cache_key(), f"{theta:g}")


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
    every seat of an ``n_players`` game (2 or 3) whose other seats play the symmetric
    equilibrium (solved first if it is not cached). Cached on disk by ruleset hash, the
    policy's content key and this module's code; ``cached_only``: None unless it is cached."""
    rules = load_ruleset(rules)
    N = int(n_players)
    check_equilibrium_rules(rules, N)
    key = policy.cache_key()
    disk = _key(rules, N, policy, theta) if cache and key else None
    if disk:
        got = load_arrays(disk)
        if got is not None:
            return SeatVsEquilibrium(rules, policy.name, got["p_seat"], float(got["meta"][0]), {"cached": True})
    if cached_only:
        return None
    t0 = time.perf_counter()
    eq = solve_equilibrium(rules, N, cache=cache)
    assert eq is not None  # None only with cached_only
    st = setup_players(rules, [policy] + [None] * (N - 1), theta)
    s, tu = st.spec, st.tu
    TRIG = np.zeros((N, st.J, tu ** (N - 1)))
    if s.prm[P_END] == END_IMMEDIATE:
        TRIG[0] = 1.0  # a bank to the target wins at once
    else:
        # the bars a trigger's bank reaches: the bot's from its tables, the equilibrium's from its caps
        reach = min(st.J, 1 + eq_reach(s.prm, tu, N, eq.E, eq.TW, st.pbmin, EPS, s.max_step))
        for t in range(N):
            J1 = st.J1 if t == 0 else reach
            TRIG[t, :J1] = _chain(st, eq, t, J1)[1 if t == 0 else 0]
            TRIG[t, J1:] = TRIG[t, J1 - 1]  # never reached: the kernels' clamp
    KID, DIST, DW, DQ, _ = st.stacked
    order, bounds = st.levels
    U = np.zeros((N, tu**N))
    total = float(order.shape[0])
    for lv in range(len(bounds) - 1):
        lo, hi = bounds[lv], bounds[lv + 1]
        if hi == lo:
            continue
        eqseat_level(
            s.prm,
            s.rolls,
            s.max_step,
            tu,
            N,
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
            st.fA,
            st.fB,
        )
        if progress is not None:
            progress(hi / total)
    # seat j: j players move before player 0, so player (N - j) % N moves first
    p_seat = np.array([U[(N - j) % N, 0] for j in range(N)])
    secs = time.perf_counter() - t0
    res = SeatVsEquilibrium(
        rules,
        policy.name,
        p_seat,
        secs,
        {"cached": False, "pruned": st.fixed[0].pruned, "tabulations": st.fixed[0].tabulations},
    )
    if disk:
        save_arrays(disk, {"p_seat": p_seat, "meta": np.array([secs])})
    return res
