"""The batched engine: B games of one ruleset stepped together by one call.

See the package docstring (:mod:`tenk_env.vector`) for the model and an example.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game, IllegalMoveError, Phase
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.tables import counts_of, get_tables
from tenk_env.vector import layout as L
from tenk_env.vector.layout import (
    ACT_FRESH,
    ACT_TAKE,
    END_BIT,
    F_CURRENT,
    F_DL,
    F_FINAL,
    F_FLEFT,
    F_GAME,
    F_PHASE,
    F_PIGD,
    F_PIGT,
    F_RID,
    F_ROLLS,
    F_TRIGGER,
    F_TT,
    F_TURN,
    MAX_FACES,
    NF,
    NPF,
    P_BUSTS,
    P_CONTENDER,
    P_FINAL,
    P_ONBOARD,
    P_REACHED,
    P_SCORE,
    P_WINNER,
    PH_DECIDE,
    PH_ORDER,
    PH_OVER,
    PH_PIGGY,
    PH_ROLL,
    STAT_NAMES,
    faces_to_roll,
    rule_constants,
    table_arrays,
)
from tenk_env.vector.nb_backend import NumbaCore

__all__ = ["BatchedGame", "IllegalActionError", "DiceSource", "check_backend"]

#: dice(games, n) -> int array (len(games), >= max(n)): faces 1..6 for the first n[i]
#: positions of row i (the rest is ignored). ``games`` are slot indices in ascending order.
DiceSource = Callable[[np.ndarray, np.ndarray], np.ndarray]


class IllegalActionError(IllegalMoveError):
    """An action array holds an action the rules do not allow; nothing was changed."""


def check_backend(backend: str | None) -> None:
    """Refuse an engine backend other than the numba one. The option is gone; older code and
    configs that name ``"auto"`` or ``"numba"`` asked for the engine there is, so they still run."""
    if backend in (None, "auto", "numba"):
        return
    if backend == "numpy":
        raise ValueError(
            "backend 'numpy' was retired: the numba engine is the only one (numba is a dependency "
            "of tenk_env); drop the backend option"
        )
    raise ValueError(f"backend = {backend!r}: the batched engine has no backends to choose from; drop the option")


class BatchedGame:
    """``batch_size`` independent games of one ruleset and player count.

    Parameters
    ----------
    rules: a :class:`Ruleset`, a preset name or a YAML path.
    n_players: seats per game (2 to 8).
    batch_size: games in the batch (the slots ``0..batch_size-1``).
    seed: seed of the batch's ``np.random.Generator`` (:attr:`np_random`), which draws one
        64-bit dice key per slot. The dice of a roll are a function of the slot's key and
        of (game in the slot, seat, that seat's turn, roll in the turn) only, so a game's
        dice never depend on the other games or on threading, and the same
        seed and actions give the same games.
    dice_keys: the slots' dice keys (uint64, shape (batch_size,)) instead of drawing them.
        Slots with equal keys deal every seat the same dice roll for roll: seat agents the
        other way round in the twin slot for duplicate play.
    dice: a :data:`DiceSource` to take every die from instead (external stream mode;
        ``seed`` is then unused). Used to feed the scalar and batched engines the same dice.
    auto_reset: a finished game restarts in place within the same call (``done`` flags it
        and ``winners`` / ``final_scores`` keep its result). With False it stays in phase
        OVER, takes no actions, and restarts on :meth:`reset_games`.
    backend: retired (the numba kernels are the only engine); ``"numpy"`` is refused with
        a message saying so, ``"auto"`` and ``"numba"`` are accepted and change nothing.
    threads: split the batch over this many threads (default 1). The
        results do not depend on it. A threaded call waits for its slowest thread, so on a
        small machine shared with other work one thread is often fastest: measure with
        ``tenk bench engine --engine-threads 1,2``.
    """

    def __init__(
        self,
        rules: Ruleset | str = "classic",
        n_players: int = 2,
        batch_size: int = 1024,
        *,
        seed: int | None = None,
        dice_keys=None,
        dice: DiceSource | None = None,
        auto_reset: bool = True,
        backend: str | None = None,
        threads: int | None = None,
    ):
        self.rules = rules = load_ruleset(rules)
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, (int, np.integer))
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise ValueError(f"n_players = {n_players!r}: the engine plays {MIN_PLAYERS} to {MAX_PLAYERS} players")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size = {batch_size!r}: give a positive integer (games stepped per call)")
        check_backend(backend)
        if dice is not None and not callable(dice):
            raise ValueError("dice: give a callable dice(games, n) -> faces array, or None to draw from the seed")
        # The scalar game refuses rulesets it cannot play (e.g. an entry threshold out of reach
        # of the roll limit); building one here gives the same refusal and the same message.
        Game(rules, int(n_players), record=False)
        self.n_players = P = int(n_players)
        self.batch_size = B = int(batch_size)
        self.tables = get_tables(rules)
        self.arrays = ta = table_arrays(rules)
        self.n_actions = 130 if rules.piggyback else 128
        self.auto_reset = bool(auto_reset)
        self._dice = dice
        self._rc = rule_constants(rules, P, self.auto_reset)
        self._S = np.zeros((NF, B), np.int32)
        self._PS = np.zeros((NPF, B, P), np.int32)
        self._keys = np.zeros(B, np.uint64)
        self._stats = np.zeros(len(STAT_NAMES) + P, np.int64)
        self._totals = np.zeros_like(self._stats)
        #: games finished in each slot during the last call (0, or rarely 2: see auto_reset)
        self.done = np.zeros(B, np.int32)
        S, PS = self._S, self._PS
        # Read-only views of the state (write them only through the methods).
        self.phase = S[F_PHASE]
        self.current = S[F_CURRENT]
        self.turn = S[F_TURN]
        self.turn_total = S[F_TT]
        self.dice_left = S[F_DL]
        self.rolls = S[F_ROLLS]
        #: the roll on the table (index into ``arrays``), -1 outside the DECIDE phase
        self.roll_id = S[F_RID]
        self.final_round = S[F_FINAL]
        self.final_turns_left = S[F_FLEFT]
        #: the seat whose bank started the final round, -1 before
        self.trigger = S[F_TRIGGER]
        #: dice and total the last banker left for a piggyback (0 dice: none)
        self.piggy_dice = S[F_PIGD]
        self.piggy_total = S[F_PIGT]
        self.scores = PS[P_SCORE]
        self.on_board = PS[P_ONBOARD]
        self.busts_in_row = PS[P_BUSTS]
        #: order in which seats first reached the target (0, 1, ...), -1: not yet
        self.reached = PS[P_REACHED]
        #: seats still rolling for the first turn (turn_order: highest_die)
        self.contenders = PS[P_CONTENDER]
        #: each seat's turns started, busts and banked points in the current game
        self.seat_turns = PS[L.P_TURNS]
        self.game_busts = PS[L.P_GBUSTS]
        self.game_banked = PS[L.P_GBANKED]
        #: result of the last game finished in each slot
        self.winners = PS[P_WINNER]
        self.final_scores = PS[P_FINAL]
        self._core = NumbaCore(S, PS, ta, self._rc, self._stats, self.done, self._keys, threads)
        self._mask_buf: np.ndarray | None = None
        self.reset(seed, dice_keys=dice_keys)

    # ------------------------------------------------------------------ lifecycle
    def reset(self, seed: int | None = None, *, dice_keys=None) -> None:
        """Restart every game and roll to each one's first decision. With a seed (or
        ``dice_keys``) the dice restart too; without, the new games get new dice."""
        if seed is not None or not hasattr(self, "np_random"):
            self.np_random = np.random.default_rng(seed)
            self._keys[:] = self.np_random.integers(0, 2**64 - 1, size=self.batch_size, dtype=np.uint64, endpoint=True)
            self._S[F_GAME] = 0
        if dice_keys is not None:
            k = np.asarray(dice_keys)
            if k.shape != (self.batch_size,) or not np.issubdtype(k.dtype, np.integer):
                raise ValueError(
                    f"dice_keys: expected integers of shape ({self.batch_size},), one key per "
                    f"slot, got {k.dtype} {k.shape}"
                )
            self._keys[:] = k.astype(np.uint64)
            self._S[F_GAME] = 0
        self._totals[:] = 0
        self._begin()
        ix = np.arange(self.batch_size, dtype=np.int64)
        self._core.reset(ix)
        self._advance(ix)
        self._end()

    @property
    def dice_keys(self) -> np.ndarray:
        """The slots' dice keys (a copy; see ``dice_keys`` in the class docstring)."""
        return self._keys.copy()

    def reset_games(self, games) -> None:
        """Restart the given games (index array or boolean mask) and roll to their first decision."""
        ix = self._games(games, "reset_games")
        self._begin()
        self._core.reset(ix)
        self._advance(ix)
        self._end()

    # ------------------------------------------------------------------ stepping
    def awaiting(self) -> np.ndarray:
        """Boolean (B,): games waiting for an action (phase DECIDE or PIGGYBACK)."""
        ph = self.phase
        return (ph == PH_DECIDE) | (ph == PH_PIGGY)

    def step(self, actions, games=None) -> np.ndarray:
        """Apply one action in each game and roll on to each game's next decision.

        ``actions``: integer array of shape (B,): the action of the seat to move in each game
        (``keep_mask | 64 * end_turn``, or 128 / 129 for a piggyback choice). ``games``: the
        games to step (index array or boolean mask; default: every game waiting for an
        action); the other entries of ``actions`` are ignored and those games are untouched.
        Every stepped action is checked first: an illegal one raises
        :class:`IllegalActionError` naming the game and the reason, and changes nothing.
        Returns :attr:`done` (games finished per slot during this call; a buffer that the
        next call overwrites).
        """
        a = self._actions(actions)
        if games is None:
            ix = np.flatnonzero(self.awaiting())
        else:
            ix = self._games(games, "step")
            waiting = self.awaiting()[ix]
            if not waiting.all():
                b = int(ix[np.argmin(waiting)])
                raise IllegalActionError(
                    f"game {b} is not waiting for an action (phase "
                    f"{Phase(int(self.phase[b])).name}); leave it out of `games`"
                    + (" or restart it with reset_games()" if self.phase[b] == PH_OVER else "")
                )
        bad = self._core.first_illegal(ix, a)
        if bad >= 0:
            b = int(ix[bad])
            raise IllegalActionError(f"game {b}: {self.explain(b, int(a[b]))}")
        self._begin()
        if self._dice is None:
            self._core.step(ix, a)
        else:
            self._core.apply(ix, a)
            self._advance(ix)
        self._end()
        return self.done

    def _begin(self) -> None:
        self.done[:] = 0
        self._stats[:] = 0

    def _end(self) -> None:
        self._totals += self._stats

    def _advance(self, ix: np.ndarray) -> None:
        """Roll in every game of ``ix`` that is due a roll, until each waits for an action."""
        if self._dice is None:
            self._core.advance(ix)
            return
        S = self._S
        cand = ix
        while len(cand):
            ph = S[F_PHASE, cand]
            cand = cand[(ph == PH_ROLL) | (ph == PH_ORDER)]
            if not len(cand):
                break
            is_order = S[F_PHASE, cand] == PH_ORDER
            n = S[F_DL, cand].astype(np.int64)
            if is_order.any():
                n[is_order] = self._PS[P_CONTENDER, cand[is_order]].sum(axis=1)
            faces = self._draw(cand, n)
            if is_order.any():
                self._core.order(cand[is_order], faces[is_order])
                r = ~is_order
                self._core.roll(cand[r], faces_to_roll(self.arrays, faces[r]))
            else:
                self._core.roll(cand, faces_to_roll(self.arrays, faces))

    def _draw(self, ix: np.ndarray, n: np.ndarray) -> np.ndarray:
        """The next faces of the external dice source (the engine's own dice are drawn in the kernel)."""
        assert self._dice is not None  # the engine draws its own dice otherwise
        raw = np.asarray(self._dice(ix, n))
        if raw.ndim != 2 or raw.shape[0] != len(ix) or raw.shape[1] < int(n.max()):
            raise ValueError(
                f"dice source returned shape {raw.shape}; expected ({len(ix)}, >= {int(n.max())}): "
                "one row per game asked for, with at least n[i] faces in row i"
            )
        if not np.issubdtype(raw.dtype, np.integer):
            raise ValueError(f"dice source returned dtype {raw.dtype}; give integer faces 1 to 6")
        faces = np.zeros((len(ix), MAX_FACES), np.int64)
        w = min(raw.shape[1], MAX_FACES)
        used = np.arange(w)[None, :] < n[:, None]
        faces[:, :w] = np.where(used, raw[:, :w], 0)
        bad = used & ((faces[:, :w] < 1) | (faces[:, :w] > 6))
        if bad.any():
            i = int(np.argmax(bad.any(axis=1)))
            raise ValueError(
                f"dice source gave game {int(ix[i])} the faces {raw[i, : int(n[i])].tolist()}; faces must be 1 to 6"
            )
        return faces

    # ------------------------------------------------------------------ actions and masks
    def legal_mask(self, out: np.ndarray | None = None) -> np.ndarray:
        """Boolean (B, n_actions): the legal actions of each game (all False for a game that is
        OVER). Written into ``out`` when given, else into a buffer reused across calls."""
        if out is None:
            if self._mask_buf is None:
                self._mask_buf = np.zeros((self.batch_size, self.n_actions), bool)
            out = self._mask_buf
        elif out.shape != (self.batch_size, self.n_actions) or out.dtype != bool:
            raise ValueError(
                f"legal_mask(out=...): expected a bool array of shape "
                f"({self.batch_size}, {self.n_actions}), got {out.dtype} {out.shape}"
            )
        self._core.legal_mask(out)
        return out

    def random_actions(self, rng: np.random.Generator, out: np.ndarray | None = None, games=None) -> np.ndarray:
        """A uniformly random legal action for every waiting game (0 for the others), or
        only for ``games`` (index array or mask; the other entries of ``out`` are kept)."""
        if out is None:
            out = np.zeros(self.batch_size, np.int64)
        elif out.shape != (self.batch_size,) or out.dtype != np.int64:
            raise ValueError(
                f"random_actions(out=...): expected an int64 array of shape ({self.batch_size},), "
                f"got {out.dtype} {out.shape}"
            )
        if games is None:
            self._core.random_actions(rng.random(self.batch_size), out, None)
            return out
        ix = self._games(games, "random_actions")
        # one draw per game asked for: the actions of a set of games do not depend on the batch around them
        u = np.zeros(self.batch_size)
        u[ix] = rng.random(len(ix))
        self._core.random_actions(u, out, ix)
        return out

    def _actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.batch_size,):
            raise ValueError(
                f"actions: expected shape ({self.batch_size},), one action per game (entries of "
                f"games not stepped are ignored); got shape {a.shape}"
            )
        if not np.issubdtype(a.dtype, np.integer):
            if a.dtype == bool or not np.issubdtype(a.dtype, np.number) or not np.all(a == np.round(a)):
                raise ValueError(f"actions: expected integer actions 0..{self.n_actions - 1}, got dtype {a.dtype}")
        return a.astype(np.int64, copy=False)

    def _games(self, games, what: str) -> np.ndarray:
        g = np.asarray(games)
        if g.dtype == bool:
            if g.shape != (self.batch_size,):
                raise ValueError(f"{what}(games=...): a boolean mask needs shape ({self.batch_size},), got {g.shape}")
            return np.flatnonzero(g)
        if g.ndim != 1 or not np.issubdtype(g.dtype, np.integer):
            raise ValueError(
                f"{what}(games=...): give a boolean mask of shape ({self.batch_size},) or a 1-d "
                f"integer index array, got {g.dtype} {g.shape}"
            )
        g = g.astype(np.int64, copy=False)
        if len(g) > 1 and not (g[1:] > g[:-1]).all():  # already sorted and unique: the usual case, O(n)
            g = np.unique(g)
        if len(g) and (g[0] < 0 or g[-1] >= self.batch_size):
            raise ValueError(f"{what}(games=...): game indices must be 0..{self.batch_size - 1}")
        return g

    def explain(self, b: int, a: int) -> str:
        """Why action ``a`` is illegal in game ``b`` (or 'legal')."""
        ph = int(self.phase[b])
        n_act = self.n_actions
        if ph == PH_OVER:
            return "the game is over and waits for reset_games() (auto_reset=False); leave it out of `games`"
        if not 0 <= a < n_act:
            return f"action {a} is outside 0..{n_act - 1}"
        if ph == PH_PIGGY:
            if a in (ACT_TAKE, ACT_FRESH):
                return "legal"
            return (
                f"action {a}: the seat to move must first choose whether to piggyback: "
                f"{ACT_TAKE} (roll the {int(self.piggy_dice[b])} dice left and take over "
                f"{int(self.piggy_total[b])} points) or {ACT_FRESH} (start fresh)"
            )
        if ph != PH_DECIDE:
            return f"the game is in phase {Phase(ph).name}"
        if a >= 128:
            return f"action {a} is a piggyback choice, but the seat to move is choosing a keep"
        rid = int(self.roll_id[b])
        dice = [int(d) for d in self.arrays.roll_dice[rid, : self.arrays.roll_n[rid]]]
        m, end = a & 63, bool(a & END_BIT)
        what = f"action {a} (keep mask {m:06b} over the sorted roll {dice}, {'end turn' if end else 'roll on'})"
        if m >> len(dice):
            return f"{what}: the mask selects positions past the {len(dice)} dice rolled"
        kept = [dice[i] for i in range(len(dice)) if m >> i & 1]
        info = self.arrays.infos[rid]
        if not kept:
            return f"{what}: at least one scoring die must be set aside"
        canon = {k.counts: k for k in info.keeps}.get(counts_of(kept))
        if canon is None:
            return f"{what}: {self.tables.why_not(kept)}"
        if canon.mask != m:
            return (
                f"{what}: the keep {kept} is named only by its canonical mask {canon.mask:06b} "
                "(for each face, the lowest positions)"
            )
        g = self.to_game(b)
        can_roll, can_bank = g.options(canon)
        if end and not can_bank and can_roll:
            return f"{what}: cannot bank: {g.why_no_bank(canon)}; roll on instead (clear bit 64)"
        if not end and not can_roll:
            return f"{what}: the {g.max_rolls}-roll limit of this turn is reached; end the turn (set bit 64)"
        return "legal"

    # ------------------------------------------------------------------ statistics
    @property
    def stats(self) -> dict[str, Any]:
        """Counters since the last :meth:`reset` (``wins``: per seat)."""
        return self._stats_dict(self._totals)

    @property
    def last_stats(self) -> dict[str, Any]:
        """Counters of the last call (step, reset or reset_games)."""
        return self._stats_dict(self._stats)

    def _stats_dict(self, v: np.ndarray) -> dict[str, Any]:
        d: dict[str, Any] = {k: int(x) for k, x in zip(STAT_NAMES, v)}
        d["wins"] = v[len(STAT_NAMES) :].copy()
        return d

    # ------------------------------------------------------------------ views of one game
    @property
    def dice(self) -> np.ndarray:
        """(B, num_dice): the sorted roll each game shows (0: no die; all 0 outside DECIDE)."""
        rid = self.roll_id
        return np.where(rid[:, None] >= 0, self.arrays.roll_dice[np.maximum(rid, 0), : self.rules.num_dice], 0)

    def state(self, b: int) -> dict[str, Any]:
        """The state of game ``b`` in plain Python, keyed like :func:`game_state`."""
        P = self.n_players
        rid = int(self.roll_id[b])
        order = sorted((int(self.reached[b, q]), q) for q in range(P) if self.reached[b, q] >= 0)
        ph = int(self.phase[b])
        return {
            "phase": ph,
            "current": int(self.current[b]),
            "turn": int(self.turn[b]),
            "scores": [int(x) for x in self.scores[b]],
            "on_board": [bool(x) for x in self.on_board[b]],
            "busts_in_row": [int(x) for x in self.busts_in_row[b]],
            "reached": [q for _, q in order],
            "turn_total": int(self.turn_total[b]),
            "dice_left": int(self.dice_left[b]),
            "rolls": int(self.rolls[b]),
            "dice": tuple(int(d) for d in self.arrays.roll_dice[rid, : self.arrays.roll_n[rid]]) if rid >= 0 else (),
            "final_round": bool(self.final_round[b]),
            "final_turns_left": int(self.final_turns_left[b]),
            "trigger": None if self.trigger[b] < 0 else int(self.trigger[b]),
            "piggy": (int(self.piggy_dice[b]), int(self.piggy_total[b])) if self.piggy_dice[b] > 0 else None,
            "contenders": [q for q in range(P) if self.contenders[b, q]] if ph == PH_ORDER else None,
        }

    def to_game(self, b: int) -> Game:
        """A scalar :class:`Game` (record=False) in the same state as game ``b``: for scalar
        agents, error messages and debugging."""
        s = self.state(b)
        g = Game(self.rules, self.n_players, record=False)
        g.phase = Phase(s["phase"])
        for k in (
            "current",
            "turn",
            "turn_total",
            "dice_left",
            "rolls",
            "dice",
            "final_round",
            "final_turns_left",
            "trigger",
            "piggy",
            "reached",
        ):
            setattr(g, k, s[k])
        g.scores, g.on_board, g.busts_in_row = s["scores"], s["on_board"], s["busts_in_row"]
        g.info = self.tables.rolls[s["dice"]] if s["dice"] else None
        if s["contenders"] is not None:
            g._contenders = s["contenders"]
        if g.phase == Phase.OVER:
            g.winners = [q for q in range(self.n_players) if self.winners[b, q]]
        return g

    def __repr__(self) -> str:
        return f"BatchedGame({self.rules.name!r}, players={self.n_players}, batch={self.batch_size})"


def game_state(g: Game) -> dict[str, Any]:
    """The state of a scalar game, keyed like :meth:`BatchedGame.state`."""
    return {
        "phase": int(g.phase),
        "current": g.current,
        "turn": g.turn,
        "scores": list(g.scores),
        "on_board": list(g.on_board),
        "busts_in_row": list(g.busts_in_row),
        "reached": list(g.reached),
        "turn_total": g.turn_total,
        "dice_left": g.dice_left,
        "rolls": g.rolls,
        "dice": tuple(g.dice),
        "final_round": g.final_round,
        "final_turns_left": g.final_turns_left,
        "trigger": g.trigger,
        "piggy": g.piggy,
        "contenders": list(g._contenders) if g.phase == Phase.ORDER else None,
    }
