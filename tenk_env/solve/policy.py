"""Choosing a move in a live :class:`~tenk_env.game.Game` from solver value tables.

:func:`pick` applies exactly the kernels' tie-break (:mod:`tenk_env.solve.kernels.rules`),
so an agent built on it plays the policy that :mod:`tenk_env.solve.evaluate` evaluates.
It is :func:`choose` over :func:`move_values`: the regret analysis
(:mod:`tenk_env.solve.regret`) values the legal moves with the same function, so the
optimal agent's move is by construction the one the analysis ranks first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tenk_env.game import Game
from tenk_env.solve.kernels.rules import better_keep, ends_turn, roll_axis
from tenk_env.tables import Keep

# the kernels' own tie-break and rolls axis, run as plain Python: one statement of each for both
_ends_turn = ends_turn.py_func
_better_keep = better_keep.py_func
_roll_axis = roll_axis.py_func

__all__ = ["pick", "move_values", "choose"]


def move_values(
    game: Game,
    unit: int,
    roll_pref: np.ndarray,
    roll_cap: int,
    bank_pref,
    forfeit_pref: float,
    max_rolls: int,
    self_valued: bool,
    forced_pref: float | None = None,
    past_cap: Callable[[int, int, int], float] | None = None,
) -> list[tuple[Keep, float | None, float | None]]:
    """Every keep of the roll, in the kernel's tie order (points descending, then dice
    ascending), as ``(keep, roll, end)``: the value of setting it aside and rolling on, and
    of setting it aside and ending the turn; None where that move is illegal. Ending is
    legal when banking is (``end`` = ``bank_pref(T)``) or when rolling on is not (a
    forfeit, ``forfeit_pref``).

    Rolling on to a total T (units) up to ``roll_cap`` is ``roll_pref[r, n, T]``. Past the
    cap it is ``past_cap(rolls used, n, T)`` when given (the analysis: exact values);
    else, when ``self_valued`` (the solver's own values, which prove banking best there),
    the bank value, or ``forced_pref`` for a roll that may not bank; else -inf (a table
    policy never rolls past its table).
    """
    N = game.rules.num_dice
    T0 = game.turn_total // unit
    rolls = game.rolls
    _, r2i = _roll_axis(max_rolls, rolls - 1)  # the roll just made is the rolls-th
    assert game.info is not None  # set in the DECIDE phase, the only one with moves
    keeps = sorted(game.info.keeps, key=lambda k: (-k.points, k.n))
    out = []
    for k in keeps:
        can_roll, can_bank = game.options(k)
        T2 = T0 + k.points // unit
        n2 = game.dice_left - k.n
        if n2 == 0:
            n2 = N
        rv = ev = None
        if can_roll:
            if T2 <= roll_cap:
                rv = float(roll_pref[r2i, n2, T2])
            elif past_cap is not None:
                rv = past_cap(rolls, n2, T2)
            elif self_valued:
                rv = forced_pref if (forced_pref is not None and not can_bank) else bank_pref(T2)
            else:
                rv = -np.inf
        if can_bank:
            ev = bank_pref(T2)
        elif not can_roll:
            ev = forfeit_pref
        out.append((k, rv, ev))
    return out


def choose(rows: list[tuple[Keep, float | None, float | None]]) -> tuple[Keep, bool]:
    """The kernel's choice among :func:`move_values` rows, by the kernels' tie-break
    (:func:`tenk_env.solve.kernels.rules.ends_turn` within a keep, :func:`~tenk_env.solve.kernels.rules.better_keep`
    across keeps, visited in the tie order)."""
    best = None
    best_c = -np.inf
    for k, rv, ev in rows:
        cv = -np.inf if rv is None else rv
        end = False
        if ev is not None and (rv is None or _ends_turn(ev, cv)):
            cv, end = ev, True
        if best is None or _better_keep(cv, best_c):
            best, best_c = (k, end), cv
    assert best is not None  # a roll that asks for a move has at least one keep
    return best


def pick(
    game: Game,
    unit: int,
    roll_pref: np.ndarray,
    roll_cap: int,
    bank_pref,
    forfeit_pref: float,
    max_rolls: int,
    self_valued: bool,
    forced_pref: float | None = None,
) -> tuple[Keep, bool]:
    """The move preferred by value tables, among ``game.legal_moves()``.

    ``roll_pref[r, n, T]`` is the preference for rolling n dice at total T (units) up to
    ``roll_cap``; ``bank_pref(T)`` the preference for ending the turn with T banked;
    ``forfeit_pref`` for ending it without banking. Past ``roll_cap`` rolling on is valued
    as banking when ``self_valued`` (the solver's own values), else never preferred; a
    forced roll there (no banking allowed) is worth ``forced_pref`` when given.
    """
    return choose(
        move_values(game, unit, roll_pref, roll_cap, bank_pref, forfeit_pref, max_rolls, self_valued, forced_pref)
    )
