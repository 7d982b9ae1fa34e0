"""The shared rules of a turn, stated once for every kernel and for the live move choice.

* The bank rule: :func:`bankable_from` (the entry threshold and the minimum bank),
  :func:`may_bank_total` and :func:`may_bank` (and mandatory hot dice, :func:`hot_dice_roll_on`),
  :func:`on_board`.
* The tie-break: :func:`ends_turn` (within a keep, ending the turn wins a tie with rolling on)
  and :func:`better_keep` (across keeps, visited in the tie order points descending then dice
  ascending, only a strictly better one replaces the first). Every kernel that chooses a move
  asks these two, and so does :func:`tenk_env.solve.policy.choose` (through ``.py_func``, the
  same code as plain Python): the agents play what the evaluators evaluate, and changing the
  tie-break here changes it everywhere at once, the 3-player equilibrium included.
* Small helpers of a turn: :func:`roll_axis` (the rolls axis), :func:`bust_target` (a bust under a
  penalty), :func:`n_statuses`, :func:`needs_extension` and :func:`forced_value` (forced rolls).
"""

from __future__ import annotations

from tenk_env.jit import njit
from tenk_env.solve.spec import BUST, P_ENTRY, P_HOTMAND, P_MINBANK, P_N, P_PEN, P_PENAFTER, P_ZILCH, WIN, ZILCH

NEG = -1e300


@njit(cache=True, inline="always")
def bankable_from(prm, fa):
    """Smallest turn total that the entry threshold and minimum bank allow banking (``fa``:
    the mover is on the board)."""
    t = prm[P_MINBANK]
    if fa == 0 and prm[P_ENTRY] > t:
        t = prm[P_ENTRY]
    return t


@njit(cache=True, inline="always")
def may_bank_total(floor, T):
    """Whether a turn may end by banking the total T: ``floor`` is :func:`bankable_from` (the
    entry threshold and the minimum bank)."""
    return T >= floor


@njit(cache=True, inline="always")
def may_bank(floor, hot_rolls_on, T2, hot, can_roll):
    """Whether a turn may end by banking T2 after a keep (``hot``: it used every die):
    :func:`may_bank_total`, and under mandatory hot dice (``hot_rolls_on``:
    :func:`hot_dice_roll_on`) a hot keep must roll on while a roll is left.

    The turn's ``floor`` and ``hot_rolls_on`` are read from ``prm`` once per turn and handed
    down: read in the innermost loop, ``prm`` is loaded again after every store to the value
    arrays (they might alias it), which made the kernels several times slower, and read again in
    each call of a small per-total helper (``_after_keep``) they cost the 2-player game solve
    an eighth of its time."""
    return T2 >= floor and not (hot and can_roll and hot_rolls_on)


@njit(cache=True, inline="always")
def hot_dice_roll_on(prm):
    """Whether hot dice are mandatory: a keep of every die must roll on while a roll is left."""
    return prm[P_HOTMAND] == 1


@njit(cache=True, inline="always")
def ends_turn(end_value, roll_value):
    """The tie-break within a keep: whether ending the turn (banking, or a forfeit) is chosen
    over rolling on. Ending wins a tie, so a turn never takes a risk that gains nothing."""
    return end_value >= roll_value


@njit(cache=True, inline="always")
def better_keep(value, best):
    """The tie-break across keeps, visited in the tie order (points descending, then dice
    ascending; :attr:`tenk_env.solve.spec.Spec.o_p`): whether a keep's value replaces the best
    so far. Only a strictly better one does, so the first in tie order wins a tie."""
    return value > best


@njit(cache=True, inline="always")
def on_board(prm, score):
    """1 when a player at ``score`` may bank below the entry threshold (there is none, or the
    player has banked before: a positive score), else 0."""
    return 1 if (prm[P_ENTRY] == 0 or score > 0) else 0


@njit(cache=True, inline="always")
def roll_axis(maxr, r):
    """(may roll on, index of the rolls axis for the next roll) after r + 1 rolls of a turn
    limited to ``maxr`` rolls (0: unlimited; the axis then has size 1)."""
    r2 = r + 1
    can_roll = maxr == 0 or r2 < maxr
    return can_roll, (0 if maxr == 0 else (r2 if can_roll else 0))


@njit(cache=True)
def bust_target(prm, a, sa):
    """(score, status) of a player at score ``a`` and status ``sa`` after a bust.

    A player's *status* is ``flag + 2 * busts in a row``: without a bust penalty it is the
    on-board flag. The bust that completes ``P_PENAFTER`` in a row costs ``P_PEN`` units (never
    below 0) and starts the count again (:meth:`tenk_env.game.Game.roll`)."""
    if prm[P_PEN] == 0:
        return a, sa
    if (sa >> 1) + 1 >= prm[P_PENAFTER]:
        return max(a - prm[P_PEN], 0), sa & 1
    return a, sa + 2


@njit(cache=True)
def n_statuses(prm):
    """Size of a status axis: 2 on-board flags times the bust counts kept (1 without a penalty)."""
    return 2 * prm[P_PENAFTER] if prm[P_PEN] > 0 else 2


@njit(cache=True)
def needs_extension(prm):
    """Whether an after-keep state may be unbankable at any total (a forced roll)."""
    return prm[P_HOTMAND] == 1 or prm[P_ZILCH] > 0


@njit(cache=True)
def forced_value(prm, rolls):
    """(fA, fB): a forced roll of all dice, where every non-forced outcome banks a sure
    win, is worth fA + fB * beta. A roll continues the chain only if it busts (beta), pays
    a zilch or offers nothing but hot keeps (forced again): F = (1 - pb - pf + pb beta) /
    (1 - pf)."""
    cstart, c_prob, c_kind, c_os, c_oe, o_p, o_d = rolls
    N = prm[P_N]
    pb = 0.0
    pf = 0.0
    for c in range(cstart[N], cstart[N + 1]):
        k = c_kind[c]
        if k == BUST:
            pb += c_prob[c]
        elif k == ZILCH:
            pf += c_prob[c]
        elif k != WIN:
            allhot = True
            for o in range(c_os[c], c_oe[c]):
                if o_d[o] != N:
                    allhot = False
            if allhot:
                pf += c_prob[c]
    return (1.0 - pb - pf) / (1.0 - pf), pb / (1.0 - pf)
