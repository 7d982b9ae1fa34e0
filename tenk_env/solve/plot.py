"""Plots of solver results.

* :func:`plot_policy`: the optimal policy's banking turn total. For each number of dice left
  after a keep, a map over (own score, opponent score), both players on the board: the smallest
  turn total from which the optimal player banks rather than rolls those dice on (at every
  higher total too).
* :func:`plot_equilibrium`: what the 3-player equilibrium says about the game: how far from
  fair each pair of head starts for seats 2 and 3 leaves the seats, and where the kingmaker
  census's positions lie.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from tenk_env.io import atomic_write_bytes
from tenk_env.solve.eq_analysis import HeadStart, Kingmakers, head_start_chances
from tenk_env.solve.equilibrium import Equilibrium
from tenk_env.solve.game import GameSolution
from tenk_env.solve.spec import P_MINBANK

__all__ = ["bank_thresholds", "plot_policy", "plot_equilibrium"]


def bank_thresholds(sol: GameSolution, step: int | None = None):
    """(scores in points, thr[n, i_own, i_opp] in points) on a grid of every ``step`` units."""
    tu = sol.target_units
    step = step or max(1, tu // 50)
    grid = np.arange(0, tu, step)
    N = sol.spec.n_dice
    r = 1 if sol.rules.max_rolls > 1 else 0
    minbank = int(sol.spec.prm[P_MINBANK])
    thr = np.zeros((N + 1, len(grid), len(grid)))
    for i, a in enumerate(grid):
        for j, b in enumerate(grid):
            V, bv, Tcap, _, _ = sol.turn_values(int(a), int(b), 1, 1)
            T = np.arange(Tcap + 1)
            for n in range(1, N + 1):
                roll = (V[r, n, :] > bv[: Tcap + 1]) | (T < max(1, minbank))
                idx = np.nonzero(roll)[0]
                thr[n, i, j] = (idx.max() + 1 if idx.size else 0) * sol.unit
    return grid * sol.unit, thr


def plot_policy(sol: GameSolution, path: str | Path, step: int | None = None) -> Path:
    """Save the banking-threshold maps of ``sol`` as a PNG; returns the path."""
    plt = _pyplot()
    scores, thr = bank_thresholds(sol, step)
    N = sol.spec.n_dice
    cols = 3
    rows = -(-N // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.8 * rows), squeeze=False)
    vmax = float(np.percentile(thr[1:], 95)) or 1.0
    ext = [scores[0], scores[-1], scores[0], scores[-1]]
    for n in range(1, N + 1):
        ax = axes[(n - 1) // cols][(n - 1) % cols]
        im = ax.imshow(thr[n], origin="lower", extent=ext, vmin=0, vmax=vmax, cmap="viridis", aspect="auto")
        ax.set_title(f"{n} {'die' if n == 1 else 'dice'} left")
        ax.set_xlabel("opponent score")
        ax.set_ylabel("own score")
        fig.colorbar(im, ax=ax, label="banks at turn total ≥")
    for k in range(N, rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(f"Optimal banking turn total, {sol.rules.name} (P(first player wins) = {sol.p_first_win:.4f})")
    return _save(plt, fig, path)


def _save(plt, fig, path: str | Path) -> Path:
    """Write ``fig`` to ``path`` as a PNG in one step (a failed write leaves no half file)."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    path = Path(path)
    atomic_write_bytes(path, buf.getvalue())
    return path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_equilibrium(eq: Equilibrium, path: str | Path, head: HeadStart, kings: Kingmakers | None = None) -> Path:
    """Save a PNG: the largest distance of a seat's equilibrium chance from 1/3 for every pair
    of head starts of seats 2 and 3 up to half the target (``head``: the fairest, marked),
    and with ``kings`` the census's positions by the two other players' scores, coloured by
    the most the mover's turn can move either one's chance (over the mover's scores), the
    positions where it decides circled. Returns the path."""
    plt = _pyplot()
    points, p = head_start_chances(eq)
    spread = 100 * np.abs(p - 1.0 / 3).max(axis=0)
    panels = 2 if kings is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(5.6 * panels, 4.6), squeeze=False)
    ax = axes[0][0]
    ext = [0, points[-1], 0, points[-1]]
    im = ax.imshow(spread.T, origin="lower", extent=ext, cmap="viridis_r", aspect="auto", vmax=min(10, spread.max()))
    ax.plot(head.points[1], head.points[2], "r*", ms=12, label=f"fairest: {head.points[1]}, {head.points[2]}")
    ax.set_xlabel("seat 2's head start (points)")
    ax.set_ylabel("seat 3's head start (points)")
    ax.set_title("farthest seat from a fair third")
    ax.legend(loc="upper left", fontsize=8)
    fig.colorbar(im, ax=ax, label="points of win chance")
    if kings is not None:
        ax = axes[0][1]
        if len(kings.own):
            sw = 100 * kings.swing
            order = np.argsort(sw)  # the largest on top
            sc = ax.scatter(kings.scores[order, 1], kings.scores[order, 2], c=sw[order], s=6, cmap="magma_r")
            fig.colorbar(sc, ax=ax, label="largest swing (points)")
            d = kings.decides
            if d.any():
                ax.scatter(
                    kings.scores[d, 1],
                    kings.scores[d, 2],
                    s=40,
                    facecolors="none",
                    edgecolors="tab:blue",
                    label="the mover decides",
                )
                ax.legend(loc="upper left", fontsize=8)
        ax.set_xlim(0, eq.rules.target)
        ax.set_ylim(0, eq.rules.target)
        ax.set_xlabel("next player's score")
        ax.set_ylabel("last player's score")
        ax.set_title(f"movers below {100 * kings.threshold:g}%: {len(kings.own):,} positions")
    fig.suptitle(f"{eq.rules.name}, 3 players: seats win " + " / ".join(f"{100 * x:.2f}%" for x in eq.p_seat))
    return _save(plt, fig, path)
