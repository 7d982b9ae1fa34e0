"""What the exact solvers share: the truncation and residual tolerances, the final turn's
chances against every lead, and the closed form of a forced roll past a cap.

The 2-player game (:mod:`tenk_env.solve.game`), the evaluators, the N-player solver and the
equilibrium all read these; they live apart from the 2-player game so that a solver's import
closure (its cache key) holds only the code it runs.
"""

from __future__ import annotations

import numpy as np

from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.spec import BUST, END_IMMEDIATE, P_END, P_MAXROLLS, P_SHARED, WIN, ZILCH, SolverError, Spec

__all__ = [
    "EPS",
    "TOL",
    "final_prm",
    "final_turn_chances",
    "forced_extension",
    "hunt_floor",
    "min_bust_chance",
    "suffix_max",
]

#: truncation tolerance (probability mass ignored past the caps)
EPS = 1e-12


#: fixed-point residual per mirror pair of turn-start states
TOL = 1e-12


def forced_extension(prm: np.ndarray, spec: Spec) -> tuple[float, float]:
    """(fA, fB) of :func:`tenk_env.solve.kernels.rules.forced_value`, or (-1, 0) where no roll is forced."""
    if not rules_k.needs_extension(prm):
        return -1.0, 0.0
    fA, fB = rules_k.forced_value(prm, spec.rolls)
    return float(fA), float(fB)


def final_prm(spec: Spec) -> np.ndarray:
    """The parameter vector of a final turn (``one_more_roll``: a single roll)."""
    prm = spec.prm.copy()
    if prm[P_END] == 2:  # one_more_roll: the final turn is a single roll
        prm[P_MAXROLLS] = 1
    return prm


def hunt_floor(spec: Spec, prm: np.ndarray) -> float:
    """Best chance of an instant-win roll in a turn whose banks are all worthless.

    With no bank worth anything the turn total is irrelevant: the value depends only on
    (rolls used, dice to roll), a small fixed point. 0 when no roll wins at once.
    """
    if not (spec.c_kind == WIN).any():
        return 0.0
    N, maxr = spec.n_dice, int(prm[P_MAXROLLS])
    nr = max(1, maxr)
    V = np.zeros((nr + 1, N + 1))  # row nr: no roll left
    for _ in range(100_000):
        old = V.copy()
        for r in range(nr):
            r2 = r + 1
            nxt = r2 if maxr else 0
            can = maxr == 0 or r2 < maxr
            for n in range(1, N + 1):
                v = 0.0
                for c in range(spec.cstart[n], spec.cstart[n + 1]):
                    k, p = spec.c_kind[c], spec.c_prob[c]
                    if k == WIN:
                        v += p
                    elif k == ZILCH:
                        v += p * (V[nxt, N] if can else 0.0)
                    elif k != BUST and can:
                        v += p * max(V[nxt, n - d if n - d else N] for d in spec.o_d[spec.c_os[c] : spec.c_oe[c]])
                V[r, n] = v
        if np.abs(V - old).max() < 1e-15:
            break
    return float(V[0, N])


def _final_table(spec: Spec, prm: np.ndarray, fa: int, shared: bool, ext: int, dmax: int) -> np.ndarray:
    """R row for a final player on board ``fa``; its last entry is the floor used past it."""
    out = np.zeros(dmax)
    dummy3 = np.zeros((1, 1, 1))
    dummy1 = np.zeros(1)
    floor = hunt_floor(spec, prm)
    end = turn_k.final_turn_table(prm, spec.rolls, fa, shared, EPS, dmax, True, dummy3, dummy1, 0.0, 0, ext, out, floor)
    if end < 0:
        raise SolverError(
            f"ruleset {spec.rules.name!r}: the chance of scoring {dmax * spec.unit} points in one "
            f"turn is still above {EPS}; the solver's truncation cannot bound it"
        )
    row = out[: end + 1].copy()
    row[-1] = floor
    return row


def suffix_max(R: np.ndarray) -> np.ndarray:
    """Each row's maximum from each column on."""
    return np.maximum.accumulate(R[:, ::-1], axis=1)[:, ::-1].copy()


def min_bust_chance(spec: Spec) -> float:
    """The smallest chance of busting on a roll of 1 to num_dice dice (``pbmin`` of the
    sure-bank cap :func:`kernels.game.opt_tcap`)."""
    return float(spec.p_bust[1:].min())


def final_turn_chances(spec: Spec) -> tuple[np.ndarray, np.ndarray]:
    """(R, Rsup) of a 2-player game: ``R[fb, d]`` the trailing player's chance in its final turn
    (on board fb) d units behind the leader, to the truncation :data:`EPS` (its last entry
    holds past it), and ``Rsup`` its suffix maximum. A one-player problem, solved once for
    every lead; one row of zeros under an immediate end."""
    if spec.prm[P_END] == END_IMMEDIATE:
        R = np.zeros((2, 1))
    else:
        prm_f = final_prm(spec)
        shared = bool(spec.prm[P_SHARED])
        rows = [_final_table(spec, prm_f, fb, shared, 0, 20_000) for fb in (0, 1)]
        R = np.zeros((2, max(len(r) for r in rows)))
        for fb, r in enumerate(rows):
            R[fb, : len(r)] = r
            R[fb, len(r) :] = r[-1]
    return R, suffix_max(R)
