"""What the symmetric equilibrium says about the game: the first mover's edge, the head starts
that make the seats fair, and kingmakers.

* :func:`fair_head_start`: the points banked before the first turn, for every seat but the
  first, that bring the seats' equilibrium win chances closest to 1/N: the N-player analogue
  of the 2-player komi. A head start is a banked score, so under an entry threshold it also
  puts the seat on the board (``Ruleset.komi``, the 2-player game's compensation, leaves the
  second player off the board until it enters).
* :func:`kingmaker_census`: every score vector where the mover's own equilibrium chance is
  below a threshold (1%), and what its turn can do to the others: how far it can move each
  one's chance, and whether it decides which of the two is the likelier winner. The mover's
  turn ranges over every strategy of that turn (everyone plays the equilibrium after it),
  each extreme found by the solvers' within-turn induction
  (:func:`tenk_env.solve.kernels.turn.turn_dp`) on the other players' values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tenk_env.solve.equilibrium import Equilibrium
from tenk_env.solve.kernels import kingmaker as km_k
from tenk_env.solve.shared import EPS, forced_extension
from tenk_env.solve.spec import END_IMMEDIATE, P_END, P_MAXROLLS, SolverError

__all__ = ["HeadStart", "head_start_chances", "fair_head_start", "Kingmakers", "Below", "kingmaker_census"]


@dataclass
class HeadStart:
    """Head starts (points banked before the first turn; ``points[0]``, seat 1's, is 0) and the
    seats' equilibrium win chances with them, ``p_seat`` (seat 1 moves first)."""

    points: np.ndarray
    p_seat: np.ndarray

    @property
    def spread(self) -> float:
        """The largest distance of a seat's chance from a fair 1/N."""
        return float(np.abs(self.p_seat - 1.0 / len(self.p_seat)).max())


def head_start_chances(eq: Equilibrium, top: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(head starts in points, ``p``): ``p[j, h2, h3...]``, seat j's equilibrium chance when
    seats 2..N start with the head starts of indices h2, h3... (multiples of the solver's unit
    up to ``top`` points, default half the target; seat 1 starts at 0 and moves first). Every
    start is a score vector the equilibrium has solved, so each figure is exact."""
    N, tu, u = eq.n_players, eq.target_units, eq.unit
    top = eq.rules.target // 2 if top is None else int(top)
    if not 0 <= top < eq.rules.target:
        raise ValueError(f"top must be at least 0 and below the target {eq.rules.target} (got {top})")
    k = np.arange(top // u + 1)
    # the start read from seat 1 (it moves first): its score 0, then seat 2's, then seat 3's
    grids = np.meshgrid(*([k] * (N - 1)), indexing="ij")
    idx = sum(g * tu ** (i + 1) for i, g in enumerate(grids))
    v = eq.E[:, idx]  # every seat but the last
    return k * u, np.concatenate([v, (1.0 - v.sum(axis=0))[None]], axis=0)


def fair_head_start(eq: Equilibrium, top: int | None = None) -> HeadStart:
    """The head starts of seats 2..N (:func:`head_start_chances`) whose equilibrium seat
    chances are closest to fair: the least :attr:`HeadStart.spread`; on a tie the first in
    order of seat 2's head start, then seat 3's."""
    points, p = head_start_chances(eq, top)
    N = eq.n_players
    spread = np.abs(p - 1.0 / N).max(axis=0)
    flat = int(np.argmin(spread))
    best = [int(points[b]) for b in np.unravel_index(flat, spread.shape)]
    return HeadStart(np.array([0, *best]), p.reshape(N, -1)[:, flat].copy())


@dataclass
class Kingmakers:
    """The census of :func:`kingmaker_census` on a 3-player equilibrium. Positions are score
    vectors at the start of a regular turn, read from the mover (its score first, then the
    next player's, then the last's), in points.

    ``scores[i]``: a position where the mover's own chance (``own[i]``) is below
    ``threshold``. ``lo[i, j]``/``hi[i, j]``: the least and the most win chance the mover's
    turn can leave player j (0: the next to move, 1: the last), the turn played any way and
    everyone playing the equilibrium after it; ``eq[i, j]``: what the equilibrium's own turn
    leaves them. ``decides[i]``: the mover can make either of them the likelier winner (some
    turn leaves the next player ahead of the last, another the last ahead of the next).
    ``positions``: the score vectors looked at (all of them, or those given)."""

    threshold: float
    scores: np.ndarray
    own: np.ndarray
    eq: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    decides: np.ndarray
    positions: int
    seconds: float

    @property
    def swing(self) -> np.ndarray:
        """The most the mover's turn can move either other player's chance, per position."""
        return (self.hi - self.lo).max(axis=1)

    def lookup(self) -> dict[tuple[int, ...], int]:
        """Row of each censused position by its scores (points, read from the mover)."""
        return {tuple(int(x) for x in s): i for i, s in enumerate(self.scores)}


def _check_census(eq: Equilibrium) -> None:
    s = eq.spec
    if eq.n_players != 3:
        raise SolverError(
            f"the kingmaker census needs 3 players (this equilibrium has {eq.n_players}): with 2, the "
            "other player's chance is 1 minus the mover's"
        )
    if s.prm[P_MAXROLLS] != 0 or forced_extension(s.prm, s)[0] >= 0:
        raise SolverError(
            f"ruleset {eq.rules.name!r}: the kingmaker census covers rulesets where a turn may always bank "
            "past the target and roll on without limit (max_rolls 0, no forced rolls), so that a turn "
            "played for another player has a closed form past the final round's last bar"
        )


def _extremes(eq: Equilibrium, cand: np.ndarray, W: np.ndarray) -> np.ndarray:
    """[c, w]: the most the mover at score vector ``cand[c]`` can make of ``W[w] @ (next
    player's chance, last player's chance)`` (:func:`tenk_env.solve.kernels.kingmaker.turn_extremes`)."""
    s = eq.spec
    J = 1 if s.prm[P_END] == END_IMMEDIATE else eq.TW.shape[0]
    ext = np.zeros((len(cand), W.shape[0]))
    km_k.turn_extremes(s.prm, s.rolls, s.max_step, eq.target_units, J, cand, eq.E, eq.TW, eq.XT, W, EPS, ext)
    return ext


#: objectives of the census, as weights on (next player's chance, last player's chance): the
#: difference both ways (who the mover can make the favourite), then each one up and down
_DECIDE = np.array([[1, -1], [-1, 1]], float)
_SWING = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], float)


class Below:
    """The positions (banked scores read from the mover, in points) where the mover's own
    equilibrium chance is below ``threshold``: a container to test positions against without
    listing them (classic to 10,000 has 1.4 million below 1%)."""

    def __init__(self, eq: Equilibrium, threshold: float):
        self.eq, self.threshold = eq, threshold

    def __contains__(self, scores) -> bool:
        try:
            own = self.eq.values(scores)[0]
        except ValueError:  # not a regular turn's scores (off the unit grid, or at the target)
            return False
        return bool(own < self.threshold)


def kingmaker_census(eq: Equilibrium, threshold: float = 0.01, progress=None, positions=None) -> Kingmakers:
    """Every regular-turn position of the 3-player equilibrium ``eq`` where the mover's own
    chance is below ``threshold``, with the extremes its turn can give the others
    (:class:`Kingmakers`), each the within-turn induction on a linear objective of the two
    others' chances valued at every bank by the equilibrium's tables. ``positions``: only
    these score vectors ([n, 3], points read from the mover; those of them below the
    threshold), e.g. the ones sampled play reaches, where the whole census is too long.
    ``progress(fraction)`` is called as chunks of positions are done."""
    _check_census(eq)
    t0 = time.perf_counter()
    tu, u = eq.target_units, eq.unit
    own = eq.E[0]
    if positions is None:
        cand = np.flatnonzero(own < threshold).astype(np.int64)
    else:
        pts = np.asarray(positions, np.int64).reshape(-1, 3)
        if (pts % u).any() or (pts < 0).any() or (pts >= eq.rules.target).any():
            raise ValueError(f"positions must be multiples of {u} below the target {eq.rules.target}")
        idx = np.unique(pts // u @ np.array([1, tu, tu * tu], np.int64))
        cand = idx[own[idx] < threshold]
    n = len(cand)
    ext = np.zeros((n, 6))
    chunks = np.array_split(np.arange(n), max(1, n // 4096))
    for i, ch in enumerate(chunks):
        ext[ch] = _extremes(eq, cand[ch], np.concatenate([_DECIDE, _SWING]))
        if progress is not None:
            progress((i + 1) / len(chunks))
    scores = np.stack([cand % tu, cand // tu % tu, cand // (tu * tu)], axis=1)
    e1 = eq.E[1, cand]
    return Kingmakers(
        threshold,
        scores * u,
        own[cand].copy(),
        np.stack([e1, 1.0 - own[cand] - e1], axis=1),
        np.stack([-ext[:, 3], -ext[:, 5]], axis=1),
        np.stack([ext[:, 2], ext[:, 4]], axis=1),
        (ext[:, 0] > 0.0) & (ext[:, 1] > 0.0),
        int(tu**3) if positions is None else len(idx),
        time.perf_counter() - t0,
    )
