"""Plot of the optimal policy: the turn total at which it banks.

For each number of dice left after a keep, a map over (own score, opponent score), both
players on the board: the smallest turn total from which the optimal player banks rather
than rolls those dice on (at every higher total too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tenk_env.solve.game import GameSolution
from tenk_env.solve.spec import P_MINBANK

__all__ = ["bank_thresholds", "plot_policy"]


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
