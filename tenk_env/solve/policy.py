"""Choosing a move in a live :class:`~tenk_env.game.Game` from solver value tables.

:func:`pick` applies exactly the kernel's tie-break (see :mod:`tenk_env.solve._kernels`),
so an agent built on it plays the policy that :mod:`tenk_env.solve.evaluate` evaluates.
"""

from __future__ import annotations

import numpy as np

from tenk_env.game import Game
from tenk_env.tables import Keep

__all__ = ["pick", "roll_index"]


def roll_index(max_rolls: int, rolls_used: int) -> tuple[bool, int]:
    """(may roll on, index of the rolls axis for the next roll) after ``rolls_used`` rolls."""
    can_roll = max_rolls == 0 or rolls_used < max_rolls
    return can_roll, (0 if max_rolls == 0 else (rolls_used if can_roll else 0))


def pick(game: Game, unit: int, roll_pref: np.ndarray, roll_cap: int, bank_pref, forfeit_pref: float,
         max_rolls: int, self_valued: bool, forced_pref: float | None = None) -> tuple[Keep, bool]:
    """The move preferred by value tables, among ``game.legal_moves()``.

    ``roll_pref[r, n, T]`` is the preference for rolling n dice at total T (units) up to
    ``roll_cap``; ``bank_pref(T)`` the preference for ending the turn with T banked;
    ``forfeit_pref`` for ending it without banking. Past ``roll_cap`` rolling on is valued
    as banking when ``self_valued`` (the solver's own values), else never preferred; a
    forced roll there (no banking allowed) is worth ``forced_pref`` when given.
    """
    N = game.rules.num_dice
    T0 = game.turn_total // unit
    _, r2i = roll_index(max_rolls, game.rolls)
    keeps = sorted(game.info.keeps, key=lambda k: (-k.points, k.n))
    best = None
    best_c = -np.inf
    for k in keeps:
        can_roll, can_bank = game.options(k)
        T2 = T0 + k.points // unit
        n2 = game.dice_left - k.n
        if n2 == 0:
            n2 = N
        cv = -np.inf
        end = False
        if can_roll:
            if T2 <= roll_cap:
                cv = float(roll_pref[r2i, n2, T2])
            elif self_valued:
                cv = forced_pref if (forced_pref is not None and not can_bank) else bank_pref(T2)
        if can_bank:
            ce = bank_pref(T2)
            if ce >= cv or not can_roll:
                cv, end = ce, True
        elif not can_roll:
            cv, end = forfeit_pref, True
        if best is None or cv > best_c:
            best, best_c = (k, end), cv
    return best
