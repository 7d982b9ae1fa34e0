"""One game on the compiled turn machine: the ``numba`` backend of the single-game envs.

:class:`TenThousandEnv <tenk_env.env.TenThousandEnv>` and :class:`TenThousandAEC
<tenk_env.aec.TenThousandAEC>` step the Python turn machine (:class:`tenk_env.game.Game`, the
reference) or this: the batched engine's compiled kernel on a batch of one game, with the
dice taken in order from the env's :class:`~tenk_env.dice.FaceBuffer` (the faces the
reference env's :class:`~tenk_env.dice.DiceStream` deals), so the same seed and actions give
the same game on both. One call of :meth:`SingleGame.run` applies an action, rolls on to the
next decision and, when that decision is the observing seat's, writes its observation and
legal-action mask: one compiled call where the reference runs a few hundred Python lines.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from tenk_env.dice import FaceBuffer
from tenk_env.game import Game
from tenk_env.jit import njit
from tenk_env.obs import obs_size
from tenk_env.rules import Ruleset
from tenk_env.vector import nb_backend
from tenk_env.vector.engine import BatchedGame
from tenk_env.vector.layout import F_CURRENT, F_PHASE, MAX_FACES, PH_DECIDE, PH_OVER, PH_PIGGY
from tenk_env.vector.nb_backend import MODE_ADVANCE_STREAM, MODE_STEP_STREAM
from tenk_env.vector.obs import k_encode, obs_consts, roll_features

__all__ = ["SingleGame", "SingleState", "k_single", "TO_SEAT", "TO_OTHER", "OVER", "NEED_DICE"]

#: what :meth:`SingleGame.run` returns: the observing seat (or, with seat -1, any seat) is to
#: decide; another seat is to decide; the game is over (k_single also: the dice ran dry)
TO_SEAT, TO_OTHER, OVER, NEED_DICE = range(4)
_MOVER = 8  # k_single with seat -2 returns _MOVER + the seat to move instead of TO_SEAT

# Inlined into k_single: a call between compiled functions takes a reference on every array
# argument and drops it again, two atomic operations each, which for these three callees cost
# more than their work (1.6 microseconds a step); inlined, numba prunes those pairs.
_k_run = njit(cache=True, nogil=True, inline="always")(nb_backend.k_run)
_k_actions = njit(cache=True, nogil=True, inline="always")(nb_backend.k_actions)
_k_encode = njit(cache=True, nogil=True, inline="always")(k_encode.py_func)


@structref.register
class SingleStateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class SingleState(structref.StructRefProxy):
    """Every array :func:`k_single` reads or writes, in one argument: a compiled call costs
    about a fifth of a microsecond per array argument, which for twenty arrays was more
    than the game step itself."""


_FIELDS = (
    "S",
    "PS",
    "rc",
    "st2",
    "done",
    "keys",
    "keep_pts",
    "roll_kind",
    "key_to_roll",
    "keep_list",
    "keep_cnt",
    "faces",
    "cur",
    "feat",
    "oc",
    "obs",
    "mask",
    "ix0",
    "seats",
    "acts",
    "i0",
    "f0",
    "u0",
)
structref.define_proxy(SingleState, SingleStateType, list(_FIELDS))


@njit(cache=True, nogil=True)
def k_single(mode, action, seat, st):
    """Apply ``action`` to the game (MODE_STEP_STREAM; MODE_ADVANCE_STREAM: none), roll on and
    report as :meth:`SingleGame.run` does, or NEED_DICE when the stream ran dry."""
    S, PS, mask, ix0, i0 = st.S, st.PS, st.mask, st.ix0, st.i0
    st.done[0] = 0  # k_run records a game's result only in a slot that has not finished in this call
    st.acts[0] = action
    _k_run(
        ix0,
        mode,
        st.acts,
        i0,
        st.f0,
        S,
        PS,
        st.rc,
        st.st2,
        st.done,
        st.keys,
        st.keep_pts,
        st.roll_kind,
        st.key_to_roll,
        st.faces,
        st.cur,
    )
    st.seats[0] = seat
    ph = S[F_PHASE, 0]
    if ph == PH_OVER:
        mask[0, :] = False
        if seat >= 0:
            _k_encode(ix0, st.seats, S, PS, st.feat, st.oc, st.obs)
        return OVER
    if ph != PH_DECIDE and ph != PH_PIGGY:
        return NEED_DICE
    if seat >= 0 and S[F_CURRENT, 0] != seat:
        return TO_OTHER
    _k_actions(ix0, S, PS, st.rc, st.keep_pts, st.keep_list, st.keep_cnt, st.u0, mask, i0, 1, True)
    if seat < 0:  # the mover observes: the AEC env's next observation
        st.seats[0] = S[F_CURRENT, 0]
    _k_encode(ix0, st.seats, S, PS, st.feat, st.oc, st.obs)
    if seat == -2:  # run_any: who moves, in the one value a call returns
        return _MOVER + S[F_CURRENT, 0]
    return TO_SEAT


@njit(cache=True, nogil=True)
def k_observe(seat, st):
    st.seats[0] = seat
    k_encode(st.ix0, st.seats, st.S, st.PS, st.feat, st.oc, st.obs)


def entry_point(kernel: Any, *args: Any) -> Any:
    """``kernel``'s compiled overload for ``args``' types, called without numba's dispatch.

    A dispatcher call types every argument in Python first, about 1.4 microseconds for a
    structref, most of the cost of a step; the overload's own entry point only unboxes.
    Falls back to the dispatcher itself if numba ever stops exposing it."""
    kernel(*args)  # compiles, or loads from numba's cache
    try:
        return kernel.overloads[tuple(numba.typeof(a) for a in args)].entry_point
    except (AttributeError, KeyError):  # pragma: no cover - numba internals moved
        return kernel


class SingleGame:
    """A game of ``rules`` for ``n_players`` on the compiled kernel (numba required).

    ``engine`` is the underlying :class:`BatchedGame` of one slot: its state views
    (``engine.scores[0]``...), :meth:`BatchedGame.to_game` and the batched agents read it.
    ``obs`` (1, obs_size) and ``mask`` (1, n_actions) are written by :meth:`run` and
    :meth:`observe`, in place.
    """

    def __init__(self, rules: Ruleset, n_players: int):
        self.engine = e = BatchedGame(rules, n_players, 1, auto_reset=False, backend="numba")
        self.n_players = n_players
        self.obs = np.zeros((1, obs_size(n_players)), np.float32)
        self.mask = np.zeros((1, e.n_actions), bool)
        self.actions = np.zeros(1, np.int64)
        self.dice: FaceBuffer | None = None
        self.ix0 = np.zeros(1, np.int64)
        self._feat = roll_features(e)
        self._oc = obs_consts(rules)
        self._k = k_single
        self._current = e._S[F_CURRENT]

    def set_dice(self, dice: FaceBuffer) -> None:
        e, c = self.engine, self.engine._core
        self.dice = dice
        #: the arrays of the compiled step (k_single's last argument)
        self.state = SingleState(
            e._S,
            e._PS,
            e._rc,
            c.st2,
            e.done,
            c.rng,
            c.keep_pts,
            c.roll_kind,
            c.key_to_roll,
            c.keep_list,
            c.keep_cnt,
            dice.faces,
            dice.cursor,
            self._feat,
            self._oc,
            self.obs,
            self.mask,
            self.ix0,
            np.zeros(1, np.int64),
            np.zeros(1, np.int64),
            np.zeros(0, np.int64),
            np.zeros((0, MAX_FACES), np.int64),
            np.zeros(0, np.float64),
        )
        if self._k is k_single:
            # The game waits at a decision or is over (BatchedGame dealt it; run() always rolls
            # on to one), so this first call takes no dice: it only finds the compiled code.
            self._k = entry_point(k_single, MODE_ADVANCE_STREAM, -1, -1, self.state)
            self._observe = entry_point(k_observe, 0, self.state)

    def new_game(self) -> None:
        """Deal a new game; :meth:`run` with no action then rolls to its first decision."""
        self.engine._core.reset(self.ix0)
        self._dealt = True

    _dealt = False

    def snapshot(self) -> Game | None:
        """A new :class:`Game` in the state of this one (no log), or None before the first deal."""
        return self.engine.to_game(0) if self._dealt else None

    def run(self, action: int, seat: int) -> int:
        """Apply ``action`` (-1: none) for the seat to move, roll on to the next decision and
        return TO_SEAT, TO_OTHER or OVER. ``seat`` is the observing seat: its observation (and,
        when it is to move, its mask) is written on TO_SEAT and OVER; -1 stops at every
        decision and writes the mover's mask and observation (nothing on OVER); -2 is -1
        for :meth:`run_any`."""
        code = self._k(MODE_STEP_STREAM if action >= 0 else MODE_ADVANCE_STREAM, action, seat, self.state)
        while code == NEED_DICE:
            assert self.dice is not None  # set_dice() gave the state these dice
            self.dice.refill()
            code = self._k(MODE_ADVANCE_STREAM, -1, seat, self.state)
        return code

    def run_any(self, action: int) -> int:
        """:meth:`run` for the AEC env (observing seat -1): the seat to move next, -1 once
        the game is over."""
        code = self._k(MODE_STEP_STREAM, action, -2, self.state)
        while code == NEED_DICE:
            assert self.dice is not None  # set_dice() gave the state these dice
            self.dice.refill()
            code = self._k(MODE_ADVANCE_STREAM, -1, -2, self.state)
        return code - _MOVER if code >= _MOVER else -1

    def observe(self, seat: int) -> np.ndarray:
        """The observation of ``seat`` now (written into and returned as ``obs[0]``)."""
        self._observe(seat, self.state)
        return self.obs[0]

    def result(self) -> tuple[list[int], list[int], int]:
        """The finished game's winners (seats), final scores and turns played."""
        e = self.engine
        return (
            [q for q in range(self.n_players) if e.winners[0, q]],
            [int(x) for x in e.final_scores[0]],
            int(e.turn[0]),
        )

    @property
    def current(self) -> int:
        """The seat to move (the last to move once the game is over)."""
        return int(self._current[0])
