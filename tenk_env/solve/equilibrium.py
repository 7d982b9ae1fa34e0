"""The symmetric equilibrium of a game of 2 to 4 players: every player maximises its own win probability.

With two players the game is zero-sum and this is the game solution
(:func:`tenk_env.solve.game.solve_game`). With three or four it is not: a player's moves also decide
which of the others is likelier to win. The equilibrium here is the *max-n* one (Luckhardt
and Irani 1986, the equilibrium point of Nash 1951 that backward induction finds in a game of
perfect information): at every decision the mover takes the move of highest win probability
for itself, valued as if everyone plays this way from then on, and the same rule serves every
seat, so the strategy is one function of the position. On exact ties the mover keeps the
solver kernels' tie-break (:func:`tenk_env.solve.kernels.rules.ends_turn`: banking before
rolling on; :func:`~tenk_env.solve.kernels.rules.better_keep`: the first keep in the tables'
order), the stated rule that makes the equilibrium unique.

State at the start of a turn: the banked scores read from the mover (its own first, then the
players after it in turn order), units of :mod:`tenk_env.solve.spec`. Scores only grow, so
score vectors are solved by decreasing score sum. The N rotations of a score vector (each
player to move) are linked by turns that bank nothing: a cycle, solved by policy iteration
(:func:`tenk_env.solve.kernels.equilibrium.eq_level`) to :data:`~tenk_env.solve.shared.TOL`.

The final round (``end: final_round``, ``one_more_roll``) is played backward from the last
player: its final turn maximises the chance to beat the bar, each player before it the chance
to beat the bar and then not be beaten; the tables are by bar (the trigger's score) and the
later players' scores. Each player's chance rides along the turns others choose as one more
value carried (N - 2 of them at N players, one at 2). Not modelled (a clear
:class:`SolverError` says so): what the N-player solver does not model
(:func:`tenk_env.solve.multi.check_multi_rules`), and more than four players (the tables grow
as the target in units to the power N: 4 players to 2,000 are 2.6 million score vectors).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve.cache import load_arrays, result_key, save_arrays
from tenk_env.solve.kernels import equilibrium as eq_k
from tenk_env.solve.kernels import multi as multi_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.multi import check_multi_rules, final_turn_values, turn_tables
from tenk_env.solve.shared import EPS, TOL, final_prm, final_turn_chances, forced_extension, min_bust_chance
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_TARGET, SolverError, Spec, build_spec

__all__ = ["Equilibrium", "solve_equilibrium", "check_equilibrium_rules", "EQ_VERSION", "MAX_ROUNDS"]

#: bump when results change, to invalidate cached ones
EQ_VERSION = 2
#: policy-iteration rounds per cycle of turns before its choices are taken to go round
#: (those that converge take at most 6 on classic)
MAX_ROUNDS = 50


def check_equilibrium_rules(rules: Ruleset, n_players: int) -> None:
    """Raise :class:`SolverError` unless the equilibrium solver covers ``rules`` at ``n_players``."""
    if n_players not in (2, 3, 4):
        raise SolverError(
            f"the symmetric equilibrium is solved for 2 to 4 players (got {n_players}): its tables "
            "grow as the target to the power of the number of players"
        )
    check_multi_rules(rules, n_players)


@dataclass
class Equilibrium:
    """The symmetric equilibrium of ``rules`` at ``n_players`` (2 to 4).

    ``E[i, idx]`` (i < N - 1): the win probability of the player i places after the mover, at
    the start of the mover's turn with scores ``idx = d0 + tu * d1 + tu**2 * d2 + ...`` (units;
    d0 the mover's, d1 the next player's); the last player's is 1 minus their sum.
    ``TW[j, rest]``: the trigger's win probability once it starts the final round with
    target + j units, ``rest`` the later players' scores; ``XT[r]`` (K = max(1, N - 2) rows):
    the same for one of the first N - K + r players from the trigger (``XT[-1]``: anyone but
    the last player); ``LB[j, s]``: the chance that the last player's final turn beats
    target + j from score s; ``TW2[j, s2 + tu * s3]`` (4 players; empty otherwise): the bar
    holder's chance with the last two players' final turns to come, at scores s2 and s3."""

    rules: Ruleset
    spec: Spec
    n_players: int
    E: np.ndarray
    TW: np.ndarray
    XT: np.ndarray
    LB: np.ndarray
    TW2: np.ndarray
    seconds: float
    stats: dict = field(default_factory=dict)

    @property
    def unit(self) -> int:
        return self.spec.unit

    @property
    def target_units(self) -> int:
        return int(self.spec.prm[P_TARGET])

    def values(self, scores) -> np.ndarray:
        """Every player's win probability at the start of a turn, ``scores`` in points read
        from the mover (its own first, then the players after it in turn order), all below the
        target; in the same order."""
        N, tu, u = self.n_players, self.target_units, self.unit
        if len(scores) != N:
            raise ValueError(f"{N} scores wanted (the mover's first), got {len(scores)}")
        if any(int(x) % u or not 0 <= int(x) < self.rules.target for x in scores):
            raise ValueError(f"scores must be multiples of {u} below the target {self.rules.target}: {list(scores)}")
        idx = sum(int(x) // u * tu**k for k, x in enumerate(scores))
        v = self.E[:, idx]
        return np.append(v, 1.0 - v.sum())

    @property
    def p_seat(self) -> np.ndarray:
        """P(seat j wins) at the start of the game (seat 1 moves first)."""
        return self.values([0] * self.n_players)

    def turn_values(self, scores):
        """The mover's within-turn values at the start of its turn, ``scores`` in units read
        from the mover: (V[r, n, T] value of rolling, bv[T] value of banking T, Tcap, beta =
        value of a bust, value of a forced roll past Tcap or None), as
        :meth:`tenk_env.solve.multi.MultiBestResponse.turn_values` returns them."""
        s, N, tu = self.spec, self.n_players, self.target_units
        d = np.asarray(scores, np.int64)
        bust = int(sum(int(d[(k + 1) % N]) * tu**k for k in range(N)))
        beta = float(1.0 - self.E[:, bust].sum())  # the mover is last when the next one moves
        fa = int(rules_k.on_board(s.prm, int(d[0])))
        bv = np.zeros(tu - int(d[0]) + self.TW.shape[0] + s.max_step + 4 + int(rules_k.bankable_from(s.prm, fa)))
        bx = np.zeros((self.XT.shape[0], bv.shape[0]))
        Tcap = int(
            eq_k.eq_turn_inputs(
                s.prm,
                tu,
                N,
                d,
                self.E,
                self.TW,
                self.XT,
                min_bust_chance(s),
                EPS,
                beta,
                s.max_step,
                bv,
                bx,
            )
        )
        return turn_tables(s, s.prm, fa, Tcap, bv, beta)

    def final_values(self, scores, trigger: int, bar: int):
        """The mover's final turn: ``scores`` as in :meth:`turn_values`, ``trigger`` the
        position (1..N-1 after the mover) of the player who started the final round, ``bar``
        the highest score so far (units, held by another player)."""
        tu = self.target_units
        r1 = sum(int(scores[k]) * tu ** (k - 1) for k in range(1, int(trigger)))
        return final_turn_values(self.spec, self.final_own(int(trigger) - 1), r1, int(bar), int(scores[0]))

    def final_own(self, later: int) -> np.ndarray:
        """``phi[1, j, rest]``: a final turn's mover's chance once it beats the bar, raising it
        to target + j, with ``later`` players still to play their final turns at scores
        ``rest`` (index read from the next one); ``phi[0]`` (its chance if it does not) is 0."""
        tu, J = self.target_units, self.LB.shape[0]
        phi = np.zeros((2, J, tu**later))
        if later == 0:  # the last to play: beating the bar wins
            phi[1] = 1.0
        elif later == 1:  # then the last player must not beat it
            phi[1] = 1.0 - self.LB
        else:  # then neither of the last two, as they play it
            phi[1] = self.TW2
        return phi


def _final_tables(spec: Spec, N: int, J: int, pbmin: float):
    """(TW, XT, LB, TW2) by [bar - target, later players' scores]: the final round played
    backward (:class:`Equilibrium`)."""
    s = spec
    tu = int(s.prm[P_TARGET])
    prm_f = final_prm(s)
    fA, fB = forced_extension(prm_f, s)
    args = (prm_f, s.rolls, s.max_step, tu, J)
    # the last player: the chance to beat the bar, and nothing after it
    phi = np.zeros((2, J, 1))
    phi[1] = 1.0
    out = np.zeros((2, J, tu))
    beat_only = np.zeros((0, 0, 0))
    multi_k.final_responder(*args, 1, phi, pbmin, EPS, fA, fB, out, beat_only, np.zeros((0, 0)))
    last = out[0]
    none = np.zeros((0, 0))
    if N == 2:
        TW = 1.0 - last
        return TW, TW.copy()[None], last, none
    # the player before it: beat the bar, then not be beaten (its chance if it does not: 0)
    phi = np.zeros((2, J, tu))
    phi[1] = 1.0 - last
    out = np.zeros((2, J, tu * tu))
    beat = np.zeros((J, tu * tu))
    multi_k.final_responder(*args, tu, phi, pbmin, EPS, fA, fB, out, beat_only, beat)
    later = np.arange(tu * tu) // tu
    hold = (1.0 - beat) * (1.0 - last[:, later])  # the bar holder's chance
    if N == 3:
        return hold, (hold + out[0])[None], last, none
    # the first after the trigger: beat the bar, then neither of the last two does (its
    # chance: what the bar holder's was); what it leaves the trigger (the holder's chance
    # while it does not beat the bar) and the next player (its chance at the bar so left)
    own2 = out[0]
    phi = np.zeros((2, J, tu * tu))
    phi[1] = hold
    out = np.zeros((2, J, tu**3))
    TW = np.zeros((J, tu**3))
    nxt = np.zeros((J, tu**3))
    trig = np.zeros((2, J, tu * tu))
    trig[0] = hold
    multi_k.final_responder(*args, tu * tu, phi, pbmin, EPS, fA, fB, out, trig, TW)
    multi_k.final_responder(*args, tu * tu, phi, pbmin, EPS, fA, fB, out, np.stack([own2, own2]), nxt)
    first2 = TW + out[0]
    return TW, np.stack([first2, first2 + nxt]), last, hold


def _cycles(tu: int, N: int):
    """One score vector per cycle of rotations (the least index), by decreasing score sum:
    (reps, bounds) with level k's cycles in ``reps[bounds[k]:bounds[k + 1]]``."""
    idx = np.arange(tu**N, dtype=np.int64)
    d = [(idx // tu**k) % tu for k in range(N)]
    keep = np.ones(idx.shape[0], bool)
    for k in range(1, N):
        keep &= idx <= sum(d[(k + ell) % N] * tu**ell for ell in range(N))
    lev = sum(d)[keep]
    reps = idx[keep]
    del idx, d, keep
    order = np.argsort(-lev, kind="stable")
    counts = np.bincount(lev, minlength=N * (tu - 1) + 1)[::-1]
    return reps[order], np.concatenate([[0], np.cumsum(counts)])


_META = ("residual", "max_rounds", "turns_solved", "cycles", "searched", "no_pure", "epsilon")


def _key(rules: Ruleset, N: int) -> str:
    return result_key(__name__, f"eq{N}-v{EQ_VERSION}", rules.hash)


def solve_equilibrium(
    rules: Ruleset | str, n_players: int = 3, *, cache: bool = True, progress=None, cached_only: bool = False
) -> Equilibrium | None:
    """The symmetric (max-n) equilibrium of ``rules`` at 2 to 4 players, cached on disk by
    ruleset hash and this solver's code; ``progress(fraction)`` is called after each level;
    ``cached_only``: None unless it is cached."""
    rules = load_ruleset(rules)
    N = int(n_players)
    check_equilibrium_rules(rules, N)
    spec = build_spec(rules, for_game=True)
    key = _key(rules, N)
    if cache:
        got = load_arrays(key)
        if got is not None:
            m = got["meta"]
            return Equilibrium(
                rules,
                spec,
                N,
                got["E"],
                got["TW"],
                got["XT"],
                got["LB"],
                got["TW2"],
                float(m[0]),
                {
                    "cached": True,
                    **{k: (float(v) if k in ("residual", "epsilon") else int(v)) for k, v in zip(_META, m[1:])},
                },
            )
    if cached_only:
        return None
    t0 = time.perf_counter()
    s = spec
    tu = int(s.prm[P_TARGET])
    R, _ = final_turn_chances(s)
    pbmin = min_bust_chance(s)
    if s.prm[P_END] == END_IMMEDIATE:  # no final round: the tables are never read
        TW = np.ones((1, tu ** (N - 1)))
        XT = np.ones((max(1, N - 2), 1, tu ** (N - 1)))
        LB = np.zeros((1, tu))
        TW2 = np.zeros((0, 0))
    else:
        # bars: no final turn, however played, beats a bar L = R.shape[1] units above its
        # score with chance above EPS, so a bar past target + L counts as target + L
        TW, XT, LB, TW2 = _final_tables(s, N, R.shape[1] + 2, pbmin)
    fA, fB = forced_extension(s.prm, s)
    reps, bounds = _cycles(tu, N)
    E = np.zeros((N - 1, tu**N))
    res = np.zeros(reps.shape[0])
    its = np.zeros(reps.shape[0], np.int64)
    gain = np.zeros(reps.shape[0])
    total = float(reps.shape[0])
    for lv in range(len(bounds) - 1):
        lo, hi = bounds[lv], bounds[lv + 1]
        if hi == lo:
            continue
        eq_k.eq_level(
            s.prm,
            s.rolls,
            s.max_step,
            tu,
            N,
            reps[lo:hi],
            E,
            TW,
            XT,
            pbmin,
            EPS,
            TOL,
            MAX_ROUNDS,
            fA,
            fB,
            res[lo:hi],
            its[lo:hi],
            gain[lo:hi],
        )
        if progress is not None:
            progress(hi / total)
    stats = {
        "cached": False,
        "residual": float(res.max()),
        "max_rounds": int(its.max()),
        "turns_solved": int(N * its.sum()),
        "cycles": int(reps.shape[0]),
        "searched": int((its >= MAX_ROUNDS).sum()),
        # a gain within TOL is the rounding of two choices worth the same: pure to rounding
        "no_pure": int((gain > TOL).sum()),
        "epsilon": float(gain.max()),
    }
    if stats["residual"] > 1e3 * TOL:
        raise SolverError(
            f"ruleset {rules.name!r}: the {N}-player equilibrium did not converge (last change "
            f"{stats['residual']:.2g}); please report this ruleset"
        )
    secs = time.perf_counter() - t0
    eq = Equilibrium(rules, spec, N, E, TW, XT, LB, TW2, secs, stats)
    if cache:
        save_arrays(
            key,
            {
                "E": E,
                "TW": TW,
                "XT": XT,
                "LB": LB,
                "TW2": TW2,
                "meta": np.array([secs] + [stats[k] for k in _META], float),
            },
        )
    return eq
