"""Observation and action encoding shared by the environments and learned agents.

Everything here is a pure function of a :class:`~tenk_env.game.Game` (and a seat), so the
Gymnasium env, the PettingZoo env and a PPO agent playing inside a tournament all see
exactly the same numbers for the same state.

Actions
-------
``Discrete(128)``, or ``Discrete(130)`` when the ruleset allows piggybacking.

* ``a < 128``: ``a & 63`` is a keep-mask over the dice of the current roll *shown
  sorted* (bit ``i`` keeps die ``i``); ``a & 64`` set means end the turn (bank) after
  setting those dice aside, clear means roll the dice that remain.
* ``128``: take over the dice and total the last banker left (piggyback).
* ``129``: start the turn fresh. 128 and 129 are legal only at the start of a turn after
  a bank, under ``piggyback: true``; keep actions are legal only on a roll.

Only the canonical mask of each distinct set of kept dice is legal: for each face the
lowest positions of that face are kept (roll ``1 1 5`` keeping one 1 is mask ``0b001``,
never ``0b010``). The canonical masks come from the scoring tables
(:attr:`tenk_env.tables.Keep.mask`), so an agent never sees two names for one move.

Observation (version :data:`OBS_VERSION`)
-----------------------------------------
A float32 vector of :func:`obs_size` ``(n_players) = 56 + 5 * n_players`` values, the
same size for every ruleset. Point values are divided by the ruleset's target and
clipped at 2; ``*_fine`` copies are divided by :data:`TURN_SCALE` (3,000, the range in
which banking decisions are made) and clipped at 1. Everything else is in [0, 1].
:func:`obs_labels` names every index.

======  =====================  ==================================================
index   name                   value
======  =====================  ==================================================
0-35    ``die{i}_is{f}``       position ``i`` (0-5) of the sorted roll shows face
                               ``f``; zero for positions past the roll and
                               whenever no roll awaits a decision
36-41   ``count{f}``           number of ``f`` in the roll / number of dice
42      ``dice_left``          dice not set aside this turn / number of dice
43      ``turn_total``         turn total so far / target (clip 2)
44      ``turn_total_fine``    turn total so far / 3,000 (clip 1)
45      ``rolls``              rolls made this turn / 10 (clip 1)
46      ``roll_limit``         1 when this turn has a roll limit
47      ``rolls_left``         rolls still allowed / the limit (1 when unlimited)
48      ``score_if_banked``    (own score + turn total) / target (clip 2)
49      ``phase_decide``       1 when a roll awaits a keep decision
50      ``phase_piggyback``    1 when a piggyback choice is due
51      ``game_over``          1 once the game is over
52      ``piggy_dice``         dice the last banker left / number of dice (while
                               a piggyback choice is due, else 0)
53      ``piggy_total``        their abandoned total / target (clip 2)
54      ``piggy_total_fine``   their abandoned total / 3,000 (clip 1)
55      ``final_round``        1 once someone has reached the target
56+5k    ``p{k}_score``         banked score / target (clip 2); ``k`` counts seats
                               in turn order from the observing seat (``k = 0`` is
                               the observer, 1 the next player to move, ...)
57+5k    ``p{k}_on_board``      1 once that player has banked (entry threshold met)
58+5k    ``p{k}_busts``         busts in a row / ``bust_penalty_after`` (0 when the
                               ruleset has no bust penalty)
59+5k    ``p{k}_to_move``       1 when it is that player's turn
60+5k    ``p{k}_triggered``     1 when that player triggered the final round
======  =====================  ==================================================

Turn features (42-48) describe the turn of the player to move, which is the observer
at every decision the environments ask for. Bump :data:`OBS_VERSION` on any change to
this layout: checkpoints record it and refuse to load against another version.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tenk_env.game import Game, IllegalMoveError, Phase
from tenk_env.rules import Ruleset
from tenk_env.tables import Keep, Tables

__all__ = [
    "OBS_VERSION",
    "TURN_SCALE",
    "N_KEEP_ACTIONS",
    "PIGGYBACK_TAKE",
    "PIGGYBACK_FRESH",
    "n_actions",
    "obs_size",
    "obs_labels",
    "obs_high",
    "encode",
    "legal_mask",
    "keep_action",
    "apply_action",
    "decode_action",
    "describe_action",
    "illegal_reason",
    "action_table",
]

#: version of the observation layout above; checkpoints refuse a mismatch
OBS_VERSION = 1
#: points scale of the ``*_fine`` features (clipped at 1)
TURN_SCALE = 3000.0
#: keep actions: 6-bit keep-mask x {roll on, bank}
N_KEEP_ACTIONS = 128
PIGGYBACK_TAKE = 128
PIGGYBACK_FRESH = 129
END_TURN = 64

_N_DICE_FEATURES = 42
_N_FIXED = 56
_PER_PLAYER = 5
# indices (before the per-player block) whose value is a points / target ratio clipped at 2
_CLIP2 = (43, 48, 53)

_DECIDE, _PIGGYBACK, _OVER, _ORDER = Phase.DECIDE, Phase.PIGGYBACK, Phase.OVER, Phase.ORDER


def n_actions(rules: Ruleset) -> int:
    """128 keep actions, plus the two piggyback choices when the ruleset has them."""
    return N_KEEP_ACTIONS + 2 if rules.piggyback else N_KEEP_ACTIONS


def obs_size(n_players: int) -> int:
    return _N_FIXED + _PER_PLAYER * n_players


def obs_labels(n_players: int) -> list[str]:
    """The name of every observation index (see the module docstring)."""
    names = [f"die{i}_is{f}" for i in range(6) for f in range(1, 7)]
    names += [f"count{f}" for f in range(1, 7)]
    names += [
        "dice_left",
        "turn_total",
        "turn_total_fine",
        "rolls",
        "roll_limit",
        "rolls_left",
        "score_if_banked",
        "phase_decide",
        "phase_piggyback",
        "game_over",
        "piggy_dice",
        "piggy_total",
        "piggy_total_fine",
        "final_round",
    ]
    for k in range(n_players):
        names += [f"p{k}_score", f"p{k}_on_board", f"p{k}_busts", f"p{k}_to_move", f"p{k}_triggered"]
    return names


def obs_high(n_players: int) -> np.ndarray:
    """Upper bounds of the observation Box (the lower bounds are all 0)."""
    high = np.ones(obs_size(n_players), dtype=np.float32)
    high[list(_CLIP2)] = 2.0
    high[_N_FIXED::_PER_PLAYER] = 2.0
    return high


# ---------------------------------------------------------------------- per-roll cache
class _RollData:
    """What the encoders need about one sorted roll, built once per ruleset."""

    __slots__ = ("feat", "keeps", "keep_at")

    def __init__(self, dice: tuple[int, ...], keeps: tuple[Keep, ...], num_dice: int):
        feat = np.zeros(_N_DICE_FEATURES, dtype=np.float32)
        for i, f in enumerate(dice):
            feat[6 * i + f - 1] = 1.0
            feat[36 + f - 1] += 1.0 / num_dice
        self.feat = feat
        self.keeps = keeps
        # indexed by the 6-bit mask: the Keep when the mask is canonical, else None
        self.keep_at: list[Keep | None] = [None] * 64
        for k in keeps:
            self.keep_at[k.mask] = k


class _TablesData:
    __slots__ = ("tables", "n_actions", "rolls", "piggy_mask", "zeros")

    def __init__(self, tables: Tables):
        rules = tables.rules
        self.tables = tables
        self.n_actions = na = n_actions(rules)
        self.rolls = {dice: _RollData(dice, info.keeps, rules.num_dice) for dice, info in tables.rolls.items()}
        self.piggy_mask = np.zeros(na, dtype=np.int8)
        if rules.piggyback:
            self.piggy_mask[PIGGYBACK_TAKE] = self.piggy_mask[PIGGYBACK_FRESH] = 1
        self.zeros = np.zeros(na, dtype=np.int8)


def obs_tables(tables: Tables) -> _TablesData:
    """The per-ruleset arrays the observation encoders read (built once per Tables)."""
    return tables.derived("obs", _TablesData)


# ---------------------------------------------------------------------- observation
def encode(game: Game, seat: int, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``game`` from ``seat``'s point of view (layout in the module
    docstring). Writes into ``out`` when given (float32, :func:`obs_size` long)."""
    n = game.n_players
    if out is None:
        out = np.empty(_N_FIXED + _PER_PLAYER * n, dtype=np.float32)
    # phases are compared by identity: the game only ever stores Phase members
    ph = game.phase
    decide = ph is _DECIDE
    if decide:
        out[:_N_DICE_FEATURES] = obs_tables(game.tables).rolls[game.dice].feat
    else:
        out[:_N_DICE_FEATURES] = 0.0
    r = game.rules
    target = r.target
    scores = game.scores
    if ph is _OVER or ph is _ORDER:
        tail = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0 if ph is _OVER else 0.0, 0.0, 0.0, 0.0]
    else:
        tt = game.turn_total
        rolls = game.rolls
        m = game.max_rolls
        own = scores[game.current] + tt
        tail = [
            game.dice_left / r.num_dice,
            min(tt / target, 2.0),
            min(tt / TURN_SCALE, 1.0),
            min(rolls / 10.0, 1.0),
            1.0 if m else 0.0,
            max(m - rolls, 0) / m if m else 1.0,
            min(own / target, 2.0),
            1.0 if decide else 0.0,
        ]
        piggy = game.piggy
        if ph is _PIGGYBACK and piggy is not None:
            tail += [1.0, 0.0, piggy[0] / r.num_dice, min(piggy[1] / target, 2.0), min(piggy[1] / TURN_SCALE, 1.0)]
        else:
            tail += [0.0, 0.0, 0.0, 0.0, 0.0]
    tail.append(1.0 if game.final_round else 0.0)
    on_board = game.on_board
    busts = game.busts_in_row
    after = r.bust_penalty_after if r.bust_penalty else 0
    trigger = game.trigger
    to_move = game.current if ph is not _OVER else -1
    for q in range(seat, seat + n):
        if q >= n:
            q -= n
        tail += (
            min(scores[q] / target, 2.0),
            1.0 if on_board[q] else 0.0,
            busts[q] / after if after else 0.0,
            1.0 if q == to_move else 0.0,
            1.0 if q == trigger else 0.0,
        )
    out[_N_DICE_FEATURES:] = tail
    return out


# ---------------------------------------------------------------------- actions
def legal_mask(game: Game, seat: int | None = None) -> np.ndarray:
    """int8 mask over the action space: 1 where the action is legal for the player to move
    (all zeros when ``seat`` is given and is not the player to move, or no decision is due).

    Built from :meth:`Game.legal_moves`, the one source of legality: restating the bank
    rules here (entry threshold, minimum bank, mandatory hot dice, exact finish...) was
    faster by about a microsecond a step, and silently wrong the day the engine learned a
    new rule.
    """
    d = obs_tables(game.tables)
    ph = game.phase
    if (seat is not None and seat != game.current) or (ph is not _DECIDE and ph is not _PIGGYBACK):
        return d.zeros.copy()
    if ph is _PIGGYBACK:
        return d.piggy_mask.copy()
    m = d.zeros.copy()
    for k, end in game.legal_moves():
        m[k.mask | END_TURN if end else k.mask] = 1
    return m


def keep_action(keep: Keep, end_turn: bool) -> int:
    """The action that sets ``keep`` aside and banks (``end_turn``) or rolls on."""
    return keep.mask | END_TURN if end_turn else keep.mask


def decode_action(game: Game, action: int) -> tuple[Keep, bool] | bool:
    """What ``action`` means now: ``(keep, end_turn)`` on a roll, the piggyback choice
    (True: take over) at the start of a turn. Raises :class:`IllegalMoveError` naming the
    action when it means nothing here (see :func:`illegal_reason` for the full check)."""
    reason = _decode_problem(game, action)
    if isinstance(reason, str):
        raise IllegalMoveError(f"action {action} is illegal: {reason}")
    return reason


def _decode_problem(game: Game, action: int) -> tuple[Keep, bool] | bool | str:
    d = obs_tables(game.tables)
    ph = game.phase
    if not 0 <= action < d.n_actions:
        return f"the action space is Discrete({d.n_actions}) (0 to {d.n_actions - 1})"
    if action >= N_KEEP_ACTIONS:
        if ph != _PIGGYBACK:
            return (
                "piggyback actions (128 take over, 129 start fresh) are legal only at the start "
                f"of a turn after a bank; the game is in phase {ph.name}"
                + (f" with roll {list(game.dice)}" if ph == _DECIDE else "")
            )
        return action == PIGGYBACK_TAKE
    if ph != _DECIDE:
        if ph == _PIGGYBACK:
            return f"a piggyback choice is due: use {PIGGYBACK_TAKE} (take over) or {PIGGYBACK_FRESH} (start fresh)"
        return f"no decision is due: the game is in phase {ph.name}"
    dice = game.dice
    mask = action & 63
    end = bool(action & END_TURN)
    k = d.rolls[dice].keep_at[mask]
    if k is not None:
        return k, end
    if mask == 0:
        return "keep-mask 0 sets no die aside; at least one scoring die must be set aside"
    if mask >> len(dice):
        return (
            f"keep-mask {mask:#08b} selects die {mask.bit_length() - 1} but the roll "
            f"{list(dice)} has only {len(dice)} dice (bit i keeps die i of the sorted roll)"
        )
    kept = [f for i, f in enumerate(dice) if mask >> i & 1]
    counts = tuple(kept.count(f) for f in range(1, 7))
    for k in d.rolls[dice].keeps:
        if k.counts == counts:
            return (
                f"keep-mask {mask:#08b} keeps {kept} from roll {list(dice)}, but only the canonical "
                f"mask of each set of dice is legal: use action {keep_action(k, end)} "
                f"(mask {k.mask:#08b}, the lowest positions of each face)"
            )
    return f"keep-mask {mask:#08b} keeps {kept} from roll {list(dice)}: {game.tables.why_not(kept)}"


def illegal_reason(game: Game, action: int) -> str | None:
    """None when ``action`` is legal for the player to move, else why not (in words)."""
    got = _decode_problem(game, action)
    if isinstance(got, str):
        return got
    if isinstance(got, bool):
        return None
    k, end = got
    if (k, end) in game.legal_moves():
        return None
    if end:
        return f"cannot bank after keeping {list(k.dice)}: {game.why_no_bank(k)}; roll on instead (action {k.mask})"
    return (
        f"cannot roll again: the {game.max_rolls}-roll limit of this turn is reached; end the turn "
        f"instead (action {k.mask | END_TURN})"
    )


def apply_action(game: Game, action: int) -> None:
    """Play ``action`` for the player to move. An illegal action raises
    :class:`IllegalMoveError` naming the action and why, and leaves the game unchanged."""
    a = int(action)
    got = _decode_problem(game, a)
    if got.__class__ is tuple:
        k, end = got
        try:
            game.act(k, end)
        except IllegalMoveError as e:
            # Game.act checks bank/roll legality and changes nothing when it refuses.
            raise IllegalMoveError(f"action {a} ({describe_action(game, a)}) is illegal: {e}") from None
    elif got.__class__ is bool:
        game.piggyback(got)
    else:
        raise IllegalMoveError(f"action {a} is illegal: {got}")


def describe_action(game: Game, action: int) -> str:
    """``action`` in words for the current state (e.g. ``keep 1 5 and roll on``)."""
    got = _decode_problem(game, int(action))
    if isinstance(got, str):
        return f"illegal ({got})"
    if isinstance(got, bool):
        return "take over the dice left (piggyback)" if got else "start fresh (no piggyback)"
    k, end = got
    return f"keep {' '.join(map(str, k.dice))} ({k.points:,}) and {'end the turn' if end else 'roll on'}"


def action_table(game: Game) -> list[dict[str, Any]]:
    """Every legal action now, ascending: ``{"action": a, "keep": [faces set aside], "points":
    p, "end": bool (the move banks), "label": "keep 1 5 (150) and roll on"}``; a piggyback
    choice (128, 129) keeps nothing, scores nothing and does not end the turn."""
    out = []
    for a in np.flatnonzero(legal_mask(game)):
        move = decode_action(game, int(a))
        keep, end = move if isinstance(move, tuple) else (None, False)
        out.append(
            {
                "action": int(a),
                "keep": list(keep.dice) if keep else [],
                "points": int(keep.points) if keep else 0,
                "end": bool(end),
                "label": describe_action(game, int(a)),
            }
        )
    return out
