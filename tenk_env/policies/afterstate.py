"""Afterstate agents: a learned value of turn-start positions plus an exact in-turn expectimax.

A turn of Ten Thousand is a small stochastic puzzle whose dice model and scoring are known
exactly (the ruleset's tables); what is unknown is what a banked total is *worth* in the
game. This family learns that worth and plans the rest:

* **Value** ``v(x)``: for a turn-start position x (every player's score, on-board flag and
  bust count, the final-round state, seen from the player to move), the probability that
  each seat wins, as a softmax over seats in turn order from the mover. A small MLP,
  evaluated in numpy (no torch needed to play).
* **Planning**: at the start of its turn the agent values every way the turn can end
  (banking a total T, busting, forfeiting at a roll limit) with ``v`` of the position it
  hands to the next player, or with the exact outcome when the game ends there (features
  v2, 2 players: also when the next turn is the game's last, which is planned exactly). The
  best play of the whole turn against those values is the expectimax over the ruleset's
  own rolls and keeps, computed by the turn kernel the solvers use
  (:func:`tenk_env.solve.kernels.turn.optimal_values`) over a table of bank values that here
  come from ``v``. The move is chosen with :func:`tenk_env.solve.policy.pick`.
* **Learning** (``tenk_env/training/afterstate.py``): from the positions its games visit, the
  agent regresses ``v(x)`` on that one-turn expectimax backup of its own values (TD with
  full expectations over the turn; real-time dynamic programming over visited states).
  The targets are lambda-returns over those backups, from the game's result, a fixed bot's
  turn passing them on. Nothing comes from the game solver: the solver only measures the
  result.

Which position follows a turn end is asked of :class:`tenk_env.game.Game` itself (a copy
banks or busts), so the end-of-game rules have one source. Rulesets the turn kernel does
not model (piggyback, lose-all rolls, exact finish) are refused with the reason.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.game import Game, Phase
from tenk_env.io import atomic_write_bytes
from tenk_env.registry import AgentError
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.rules_obs import RULES_OBS_SIZE, RULES_OBS_VERSION, game_meta, reads_rules
from tenk_env.rules_obs import rules_obs as rules_vector
from tenk_env.solve.kernels import game as game_k
from tenk_env.solve.kernels import rules as rules_k
from tenk_env.solve.kernels import turn as turn_k
from tenk_env.solve.kernels.turn import optimal_values
from tenk_env.solve.policy import pick
from tenk_env.solve.shared import EPS, final_turn_chances, min_bust_chance
from tenk_env.solve.spec import P_MAXROLLS, SolverError, Spec, build_spec
from tenk_env.tables import Keep

__all__ = [
    "FEATURES_VERSION",
    "FORMAT",
    "AfterstateError",
    "ValueNet",
    "TurnPlan",
    "plan_turn",
    "features_of",
    "n_features",
    "check_rules",
    "win_shares",
    "AfterstateAgent",
    "save_checkpoint",
    "read_checkpoint",
    "make_afterstate",
]

#: bump when :func:`features_of` or the planner's valuation of turn ends changes. Version 1:
#: the bust count is a feature under every ruleset, and the net values every position.
#: Version 2: the bust count is 0 where the ruleset has no bust penalty (it changes nothing
#: there, so a net reading it plays a history-dependent policy), and in a 2-player game a
#: position whose turn is the game's last is valued exactly by planning that turn
#: (:func:`_last_turn_values`), not by the net. (With more players a last turn depends on
#: every other seat's lead, so nearly every bank total would need a plan of its own: too slow
#: to train with; the net values those.) Checkpoints of both versions play as they were
#: trained; others are refused.
FEATURES_VERSION = 2
SUPPORTED_VERSIONS = (1, 2)
FORMAT = "tenk-afterstate-1"
#: turn totals planned beyond what reaching the target needs (units): far past any bank a
#: position needs; a total past it is valued as banking, like the solver's cap
MARGIN_UNITS = 60


class AfterstateError(AgentError):
    """A checkpoint or ruleset the afterstate agent cannot use; the message says why."""


_SPECS: dict[str, Spec] = {}


def _spec(rules: Ruleset) -> Spec:
    """The solvers' arrays of ``rules``, built once per process."""
    if rules.hash not in _SPECS:
        _SPECS[rules.hash] = build_spec(rules, for_game=True)
    return _SPECS[rules.hash]


def check_rules(rules: Ruleset) -> None:
    """Raise :class:`AfterstateError` for rules whose turn ends the planner cannot value."""
    why = None
    if rules.piggyback:
        why = "piggyback hands the banked dice and total to the next player, so a bank's worth depends on the dice left"
    elif rules.exact_finish != "off":
        why = f"exact_finish {rules.exact_finish!r} forfeits totals past the target in mid-turn"
    if why:
        raise AfterstateError(
            f"ruleset {rules.name!r}: the afterstate agent does not play it: {why} "
            "(the turn planner does not model it); use a ppo agent for this ruleset"
        )
    try:
        _spec(rules)
    except SolverError as e:
        raise AfterstateError(f"the afterstate agent does not play this ruleset: {e}") from None


# ----------------------------------------------------------------------------- features
def n_features(n_players: int, rules_obs: int = 0) -> int:
    """Features of a position (:func:`features_of`), with the rules observation when ``rules_obs``."""
    return 8 * n_players + 1 + (RULES_OBS_SIZE if rules_obs else 0)


def features_of(
    rules: Ruleset,
    scores: np.ndarray,
    on_board: np.ndarray,
    busts: np.ndarray,
    final: np.ndarray,
    to_play: np.ndarray,
    trigger: np.ndarray,
    learner: np.ndarray,
    rules_obs: int = 0,
) -> np.ndarray:
    """Features of B positions, seats in turn order from the player to move (arrays (B, N),
    ``final`` (B,)): per seat the score / target, the gap to the best other score / target,
    the distance still to the target (0 past it) / target, the on-board flag, the bust
    count / the count that costs a penalty, whether the seat still takes a turn (all of
    them until the final round, then the seats yet to take their last turn), whether it
    triggered the final round, and whether this learner plays it (1) or a fixed bot (0);
    then the final-round flag. Version :data:`FEATURES_VERSION`. With ``rules_obs`` (a version
    of :mod:`tenk_env.rules_obs`), the rules observation of ``rules`` follows: what an agent
    that plays any ruleset reads."""
    t = float(rules.target)
    s = np.asarray(scores, dtype=np.float64)
    B, N = s.shape
    best_other = np.empty_like(s)
    for i in range(N):
        best_other[:, i] = np.delete(s, i, axis=1).max(axis=1)
    after = float(rules.bust_penalty_after) if rules.bust_penalty else 1.0
    X = np.concatenate(
        [
            s / t,
            (s - best_other) / t,
            np.maximum(t - s, 0.0) / t,
            on_board,
            np.asarray(busts) / after,
            to_play,
            trigger,
            learner,
            np.asarray(final, dtype=np.float64).reshape(B, 1),
        ],
        axis=1,
    )
    if rules_obs:
        X = np.concatenate([X, np.broadcast_to(rules_vector(rules), (B, RULES_OBS_SIZE))], axis=1)
    return X.astype(np.float32)


def _position(game: Game, learner: tuple[bool, ...], version: int) -> tuple[np.ndarray, ...]:
    """One turn-start position of ``game`` as (1, N) arrays in turn order from the mover."""
    N, q = game.n_players, game.current
    order = [(q + i) % N for i in range(N)]
    scores = np.array([[game.scores[p] for p in order]], dtype=np.float64)
    on_board = np.array([[float(game.on_board[p] or not game.rules.entry_threshold) for p in order]])
    counts = version < 2 or bool(game.rules.bust_penalty)
    busts = np.array([[game.busts_in_row[p] if counts else 0 for p in order]], dtype=np.float64)
    if game.final_round:
        to_play = np.array([[float(i < game.final_turns_left) for i in range(N)]])
    else:
        to_play = np.ones((1, N))
    trigger = np.array([[float(game.final_round and p == game.trigger) for p in order]])
    lrn = np.array([[float(learner[p]) for p in order]])
    return scores, on_board, busts, np.array([float(game.final_round)]), to_play, trigger, lrn


# ----------------------------------------------------------------------------- the value net
class ValueNet:
    """An MLP from :func:`features_of` to win probabilities (softmax over seats), in numpy.

    ``weights``: ``w0, b0, w1, b1, ...`` with ``w`` of shape (in, out); SiLU between layers.
    ``version``: the :data:`FEATURES_VERSION` it was trained with (how its plans read positions);
    ``rules_obs``: the version of the rules observation it reads after them (0: none, the net
    of one ruleset).
    """

    def __init__(self, weights: Mapping[str, np.ndarray], version: int = FEATURES_VERSION, rules_obs: int = 0):
        if version not in SUPPORTED_VERSIONS:
            raise AfterstateError(
                f"afterstate features v{version}: this code reads "
                f"{', '.join(f'v{v}' for v in SUPPORTED_VERSIONS)}; retrain with this version"
            )
        if rules_obs not in (0, RULES_OBS_VERSION):
            raise AfterstateError(
                f"the value net reads rules observation v{rules_obs}; this code reads "
                f"v{RULES_OBS_VERSION}: retrain it with this version"
            )
        self.version, self.rules_obs = int(version), int(rules_obs)
        n = len(weights) // 2
        if n < 1 or any(f"w{i}" not in weights or f"b{i}" not in weights for i in range(n)):
            raise AfterstateError(f"value net weights must be w0, b0, w1, b1, ... (got {sorted(weights)})")
        # float32 as trained and saved, computed in float64: a float32 product's rounding
        # depends on the batch it is computed in (BLAS kernels differ by shape and CPU), and a
        # position's value must not, or the exact evaluator, which values every position in
        # one grid, could part from the agent's own play
        self.layers = [
            (
                np.asarray(weights[f"w{i}"], dtype=np.float32).astype(np.float64),
                np.asarray(weights[f"b{i}"], dtype=np.float32).astype(np.float64),
            )
            for i in range(n)
        ]
        for (w, _), (w2, _) in zip(self.layers, self.layers[1:]):
            if w.shape[1] != w2.shape[0]:
                raise AfterstateError(f"value net layers do not chain: {w.shape} then {w2.shape}")

    @property
    def n_in(self) -> int:
        return self.layers[0][0].shape[0]

    @property
    def n_out(self) -> int:
        return self.layers[-1][0].shape[1]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        h = np.asarray(X, dtype=np.float32).astype(np.float64)
        for w, b in self.layers[:-1]:
            h = h @ w + b
            h = h / (1.0 + np.exp(-h))
        w, b = self.layers[-1]
        z = h @ w + b
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def weights(self) -> dict[str, np.ndarray]:
        out = {}
        for i, (w, b) in enumerate(self.layers):
            out[f"w{i}"], out[f"b{i}"] = w.astype(np.float32), b.astype(np.float32)
        return out


# ----------------------------------------------------------------------------- turn ends
def _clone(game: Game) -> Game:
    c = copy.copy(game)
    c.record = False
    c.events = []
    c.scores, c.on_board, c.busts_in_row, c.reached = (
        list(game.scores),
        list(game.on_board),
        list(game.busts_in_row),
        list(game.reached),
    )
    return c


def win_shares(c: Game, p: int) -> np.ndarray:
    """A finished game's result as shares of the win, seats in turn order from ``p``."""
    N = c.n_players
    v = np.zeros(N)
    for w in c.winners:
        v[(w - p) % N] = 1.0 / len(c.winners)
    return v


@dataclass
class _Ends:
    """How a turn can end, from the mover's turn start: for each bank total T (units), then a
    bust (index L) and a forfeit (L + 1), either the next position (row ``row[i]`` of ``X``)
    or a finished game (``row[i] == -1``, its result in ``out[i]``)."""

    X: np.ndarray  # (rows, F) features of the non-terminal next positions
    row: np.ndarray  # (L + 2,) row of X, or -1 for a finished game
    out: np.ndarray  # (L + 2, N) outcome of a finished game (mover-relative)
    shift: np.ndarray  # (L + 2,) the next position's seat index of this mover


_BUST_DICE: dict[str, tuple[int, tuple[int, ...]] | None] = {}


def _bust_dice(game: Game) -> tuple[int, tuple[int, ...]] | None:
    """A roll that busts under the game's rules (None if none does)."""
    h = game.rules.hash
    if h not in _BUST_DICE:
        busts = [d for d, info in game.tables.rolls.items() if info.bust]
        _BUST_DICE[h] = (len(busts[0]), busts[0]) if busts else None
    return _BUST_DICE[h]


def _ends(game: Game, Ts: np.ndarray, unit: int, learner: tuple[bool, ...], version: int, rules_obs: int = 0) -> _Ends:
    """Every way the current turn of ``game`` (at its start) can end, asked of Game copies.

    Banking at totals that keep the mover below the target leads to positions that differ
    only in the mover's score, and so do totals at or past it: one copy banks in each range
    and the mover's score is set for every total. Where a bank finishes the game, the
    outcome depends only on how the mover's score compares with the others', so a copy
    banks at each total where that comparison changes. From ``version`` 2, with 2 players, a
    next position whose turn is the game's last is valued exactly (:func:`_last_turn_values`).
    """
    rules, N, p = game.rules, game.n_players, game.current
    a = game.scores[p]
    L = len(Ts)
    rows: list[tuple] = []
    row = np.full(L + 2, -1, dtype=np.int64)
    out = np.zeros((L + 2, N))
    shift = np.zeros(L + 2, dtype=np.int64)

    def add(c: Game, idx, mover_scores=None):
        q = c.current
        k = (p - q) % N
        if version >= 2 and N == 2 and c.final_round and c.final_turns_left == 1:
            out[idx] = _last_turn_values(c, k, mover_scores)
            return
        pos = _position(c, learner, version)
        m = 1 if mover_scores is None else len(mover_scores)
        pos = tuple(np.repeat(x, m, axis=0) for x in pos)
        if mover_scores is not None:
            pos[0][:, k] = mover_scores
        row[idx] = sum(len(r[0]) for r in rows) + np.arange(m)
        shift[idx] = k
        rows.append(pos)

    pts = Ts * unit
    for sel in (a + pts < rules.target, a + pts >= rules.target):
        idx = np.nonzero(sel)[0]
        if not idx.size:
            continue
        rep = int(Ts[idx[-1]])
        c = _clone(game)
        c.turn_total = rep * unit
        c._close_turn()
        if not c.over:
            # banked; or, when even the largest total may not be banked (a minimum bank),
            # forfeited, which the plan never chooses over a roll
            add(c, idx, a + pts[idx] if c.scores[p] != a else None)
            continue
        # a finished game: the result changes only where the mover's score meets another's,
        # and where a total first may be banked (a minimum bank: Game forfeits the totals below)
        bounds = {int(idx[0])}
        first = next((int(i) for i in idx if game._bankable(int(Ts[i]) * unit)), None)
        if first is not None:
            bounds.add(first)
        for o in {game.scores[j] for j in range(N) if j != p}:
            for hit in (a + pts[idx] >= o, a + pts[idx] > o):
                if hit.any():
                    bounds.add(int(idx[np.argmax(hit)]))
        bounds = sorted(bounds)
        for j, start in enumerate(bounds):
            stop = bounds[j + 1] if j + 1 < len(bounds) else int(idx[-1]) + 1
            c = _clone(game)
            c.turn_total = int(Ts[start]) * unit
            c._close_turn()
            seg = idx[(idx >= start) & (idx < stop)]
            if c.over:
                out[seg] = win_shares(c, p)
            else:  # a total too small to bank: Game forfeits it (the plan never banks there)
                add(c, seg)
    # a bust
    c = _clone(game)
    bd = _bust_dice(game)
    if bd is not None:
        c.phase, c.dice_left, c.turn_total = Phase.ROLL, bd[0], 0
        c.roll(bd[1])
        if c.over:
            out[L] = win_shares(c, p)
        else:
            add(c, [L])
    # a forfeit (the roll limit reached with a total that may not be banked)
    c = _clone(game)
    c._end_turn(bust=False)
    if c.over:
        out[L + 1] = win_shares(c, p)
    else:
        add(c, [L + 1])
    X = (
        features_of(game.rules, *(np.concatenate([r[i] for r in rows], axis=0) for i in range(7)), rules_obs)
        if rows
        else np.zeros((0, n_features(N, rules_obs)), dtype=np.float32)
    )
    return _Ends(X, row, out, shift)


#: exact values of last turns by what they depend on (:func:`_last_turn_values`), per process
_LAST: dict[tuple, dict] = {}
_LAST_SIZE = 50_000


def _last_turn_values(c: Game, k: int, mover_scores=None) -> np.ndarray:
    """Every seat's exact win chance at ``c``, a turn start whose turn is the game's last,
    planned over the turn (every end of it finishes the game), seats in turn order from
    ``seat``, the seat ``k`` places after ``c``'s mover (the one whose turn just ended);
    one row per score of that seat in ``mover_scores``, else one row.

    A last turn depends on the mover's roll limit and on-board flag, and for every other
    seat on its lead over the mover and its place in the order of reaching the target (the
    tie-break), not on the scores themselves: the mover's banks only compare with the
    others' scores (exact finish, which reads the target, is not planned at all). Values
    are cached by those; ``seat``, if it reached the target, was the last to.
    """
    N, q, t = c.n_players, c.current, c.rules.target
    seat = (q + k) % N
    reached = [x for x in c.reached if x != seat]
    rank = {x: i for i, x in enumerate(reached)}
    others = tuple(
        (None if o == seat else (c.scores[o] - c.scores[q], rank.get(o, -1)), o < q)
        for o in ((q + i) % N for i in range(1, N))
    )
    base = (c.rules.hash, N, c.max_rolls, bool(c.on_board[q] or not c.rules.entry_threshold), q in rank, others)
    known = _LAST.get(base)
    if known is None:
        if len(_LAST) >= _LAST_SIZE:
            _LAST.clear()
        known = _LAST[base] = {}
    order = (k + np.arange(N)) % N
    rows = []
    for s in [c.scores[seat]] if mover_scores is None else mover_scores.tolist():
        v = known.get((s - c.scores[q], s >= t))
        if v is None:
            c.scores[seat] = s
            c.reached = reached + ([seat] if s >= t else [])
            frame = _frame(c)
            ends = _ends(c, np.arange(frame[-1]), frame[0].unit, (True,) * N, FEATURES_VERSION)
            if (ends.row >= 0).any():
                raise AssertionError(f"a last turn that does not finish the game: {base}")
            v = known[(s - c.scores[q], s >= t)] = _plan(c, frame, ends.out, True).value
        rows.append(v[order])
    return np.array(rows)


# ----------------------------------------------------------------------------- planning a turn
@dataclass
class TurnPlan:
    """The best play of one turn against a value net.

    ``V[r, n, T]``: the mover's win probability when rolling n dice at turn total T (units)
    with r rolls used, up to ``Tcap``; ``bank[T]``: of banking T (up to ``Tcap + max_step +
    1``); ``bust`` / ``forfeit``: of a bust / a forfeited total. ``value``: every seat's
    win probability at the turn's start under this plan, seats in turn order from the mover
    (the training target).
    """

    V: np.ndarray
    bank: np.ndarray
    bust: float
    forfeit: float
    Tcap: int
    unit: int
    value: np.ndarray

    def bank_value(self, T: int) -> float:
        return float(self.bank[min(T, len(self.bank) - 1)])

    def pick(self, game: Game) -> tuple[Keep, bool]:
        return pick(game, self.unit, self.V, self.Tcap, self.bank_value, self.forfeit, game.max_rolls, True)


def _frame(game: Game, cap: int = 0) -> tuple:
    """(spec, prm, mover's on-board flag, Tcap, L): the turn planned at ``game``'s turn start,
    to a total of at least ``cap`` units; ``L`` bank totals 0..L-1 are valued."""
    rules = game.rules
    spec = _spec(rules)
    unit = spec.unit
    a = game.scores[game.current] // unit
    top = max(rules.target, max(game.scores) + unit) // unit
    fa = int(game.on_board[game.current] or not rules.entry_threshold)
    prm = spec.prm.copy()
    prm[P_MAXROLLS] = game.max_rolls
    Tcap = max(top - a + MARGIN_UNITS, int(rules_k.bankable_from(prm, fa)), cap)
    return spec, prm, fa, Tcap, Tcap + spec.max_step + 2


_FINALS: dict[str, tuple[np.ndarray, float]] = {}


def _sure_bank_cap(game: Game, beta: float) -> int:
    """The turn total (units) past which banking provably beats rolling on, for the mover of a
    2-player game outside the final round whose banks past the target are valued exactly:
    the one the game solver and the exact evaluator plan to (:func:`game_k.opt_tcap`: the
    opponent's final-turn chance at most ``pbmin * (1 - beta)``, ``beta`` the mover's
    value of a bust). A plan that stopped short of it would value rolling on as banking
    where rolling may still be better."""
    rules = game.rules
    spec = _spec(rules)
    if rules.hash not in _FINALS:
        _FINALS[rules.hash] = (final_turn_chances(spec)[1], min_bust_chance(spec))
    Rsup, pbmin = _FINALS[rules.hash]
    p, u = game.current, spec.unit
    o = 1 - p
    fa = int(game.on_board[p] or not rules.entry_threshold)
    fb = int(game.on_board[o] or not rules.entry_threshold)
    return int(game_k.opt_tcap(spec.prm, Rsup, pbmin, EPS, 0, game.scores[p] // u, game.scores[o] // u, fa, fb, beta))


def _values(ends: _Ends, net: ValueNet | None, N: int) -> np.ndarray:
    """(L + 2, N) values of the turn's ends for every seat, from the mover: exact where the game
    ends or a last turn follows, else the net's."""
    vals = ends.out
    live = ends.row >= 0
    if live.any():
        probs = net(ends.X)[ends.row[live]]
        vals[live] = np.take_along_axis(probs, (ends.shift[live, None] + np.arange(N)) % N, axis=1)
    return vals


def _plan(game: Game, frame: tuple, vals: np.ndarray, all_seats: bool) -> TurnPlan:
    spec, prm, fa, Tcap, L = frame
    N, Nd = game.n_players, spec.n_dice
    bank, beta, forf = vals[:L, 0].copy(), float(vals[L, 0]), float(vals[L + 1, 0])
    nr = max(1, game.max_rolls)
    V = np.zeros((nr, Nd + 1, Tcap + 1))
    A = np.empty((nr, Nd, Tcap + spec.max_step + 1))
    args = (prm, spec.rolls, fa, Tcap)
    optimal_values(*args, bank, beta, forf, -1.0, 0.0, V, A)
    value = np.zeros(N)
    value[0] = V[0, Nd, 0]
    if N == 2:
        value[1] = 1.0 - value[0]
    elif all_seats:
        # the other seats' chances under the mover's plan: the turn kernel evaluating a fixed
        # chooser (the mover's tables); it counts an instant-win roll for every seat, and
        # the shares sum to 1, which gives that roll's chance to take back out
        Vj, Qj = np.zeros_like(V), np.zeros_like(V)
        for j in range(1, N):
            turn_k.turn_dp(
                *args,
                np.ascontiguousarray(vals[:L, j]),
                float(vals[L, j]),
                float(vals[L + 1, j]),
                False,
                False,
                V,
                bank,
                forf,
                Tcap,
                Vj,
                Qj,
                -1.0,
                0.0,
            )
            value[j] = Vj[0, Nd, 0]
        p_win = max(0.0, (value[1:].sum() - (1.0 - value[0])) / (N - 1))
        value[1:] = np.maximum(value[1:] - p_win, 0.0)
    return TurnPlan(V, bank, beta, forf, Tcap, spec.unit, value)


def plan_turn(game: Game, net: ValueNet, learner: tuple[bool, ...], *, all_seats: bool = True) -> TurnPlan:
    """Plan the current turn of ``game`` against ``net`` (``learner[seat]``: whether the seat
    is played by this learner, a feature of the positions).

    The game must be in the current turn (any phase but ORDER/OVER); only its turn-start
    facts are read. ``all_seats=False`` skips the other seats' values (playing needs only
    the mover's; training needs all of them with 3 or more players). From features v2 a
    2-player plan reaches at least the total past which banking provably wins out
    (:func:`_sure_bank_cap`).
    """
    N = game.n_players

    def values(frame):
        return _values(_ends(game, np.arange(frame[-1]), frame[0].unit, learner, net.version, net.rules_obs), net, N)

    frame = _frame(game)
    vals = values(frame)
    if net.version >= 2 and N == 2 and not game.final_round:
        cap = _sure_bank_cap(game, float(vals[frame[-1], 0]))
        if cap > frame[3]:
            frame = _frame(game, cap)
            vals = values(frame)
    return _plan(game, frame, vals, all_seats)


def position_features(
    game: Game, learner: tuple[bool, ...], version: int = FEATURES_VERSION, rules_obs: int = 0
) -> np.ndarray:
    """(F,) features of ``game``'s current turn-start position."""
    return features_of(game.rules, *_position(game, learner, version), rules_obs)[0]


# ----------------------------------------------------------------------------- checkpoints
def save_checkpoint(path: str | Path, weights: Mapping[str, np.ndarray], meta: Mapping[str, Any]) -> Path:
    """An ``.npz`` with the value net's weights and ``meta`` (JSON), written atomically."""
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        **{k: np.asarray(v, dtype=np.float32) for k, v in weights.items()},
        meta=np.array(json.dumps(dict(meta), sort_keys=True)),
    )
    path = Path(path)
    atomic_write_bytes(path, buf.getvalue())
    return path


def read_checkpoint(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(weights, meta) of an afterstate checkpoint; a clear error for anything else."""
    path = Path(path)
    if not path.is_file():
        raise AfterstateError(
            f"afterstate checkpoint {str(path)!r} does not exist (tenk train with an afterstate "
            "config writes runs/NAME/best.npz and last.npz)"
        )
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in z.files}
        meta = json.loads(str(data.pop("meta")))
    except Exception as e:  # a truncated or foreign file: say which and why
        raise AfterstateError(
            f"{str(path)!r} is not an afterstate checkpoint (.npz with weights and meta): {type(e).__name__}: {e}"
        ) from None
    if meta.get("format") != FORMAT:
        raise AfterstateError(f"{str(path)!r}: format {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("features_version") not in SUPPORTED_VERSIONS:
        raise AfterstateError(
            f"{str(path)!r} was trained on afterstate features v{meta.get('features_version')}; "
            f"this code reads {', '.join(f'v{v}' for v in SUPPORTED_VERSIONS)}: retrain it with "
            "this version"
        )
    return data, meta


def checkpoint_meta(
    rules: Ruleset | None,
    n_players: int,
    *,
    hidden: list[int],
    opponents_learn: bool,
    trained_on: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A checkpoint's metadata: the ruleset it plays, or (``rules`` None) the rules
    observation it reads to play any ruleset and ``trained_on``, what it was trained on."""
    return {
        "format": FORMAT,
        "features_version": FEATURES_VERSION,
        **game_meta(rules, trained_on),
        "n_players": n_players,
        "hidden": list(hidden),
        "opponents_learn": bool(opponents_learn),
        **extra,
    }


# ----------------------------------------------------------------------------- the agent
class AfterstateAgent:
    """Plays the turn planned against its value net (deterministic: ties go the solver
    kernels' way). ``opponents_learn``: whether the net was trained with the other seats
    played by itself (self-play) or by fixed bots, which is how it models them. A net that
    reads the rules observation (meta ``rules_obs``) plays every ruleset the planner covers;
    any other plays the one ruleset it was trained on."""

    def __init__(self, net: ValueNet, meta: Mapping[str, Any], name: str = "afterstate"):
        self.net, self.meta, self.name = net, dict(meta), name
        self.any_rules = reads_rules(self.meta)
        self.rules = None if self.any_rules else load_ruleset(self.meta["ruleset"])
        n = int(self.meta["n_players"])
        if net.version != self.meta.get("features_version", 1):
            raise AfterstateError(
                f"{name}: a v{net.version} value net with a v{self.meta.get('features_version')} checkpoint's metadata"
            )
        if net.rules_obs != self.meta.get("rules_obs", 0):
            raise AfterstateError(
                f"{name}: a value net reading rules observation v{net.rules_obs} with metadata "
                f"that says v{self.meta.get('rules_obs', 0)}"
            )
        F = n_features(n, net.rules_obs)
        if net.n_in != F or net.n_out != n:
            raise AfterstateError(
                f"{name}: value net of shape {net.n_in} -> {net.n_out} does not fit {n} players ({F} features -> {n})"
            )
        self._key: tuple | None = None
        self._plan: TurnPlan | None = None

    @classmethod
    def from_weights(cls, weights: Mapping[str, np.ndarray], meta: Mapping[str, Any], name: str) -> AfterstateAgent:
        """The agent of a checkpoint's weights and meta (its features version included)."""
        return cls(ValueNet(weights, int(meta.get("features_version", 1)), int(meta.get("rules_obs", 0))), meta, name)

    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> AfterstateAgent:
        weights, meta = read_checkpoint(path)
        return cls.from_weights(weights, meta, name or f"afterstate:{path}")

    def check(self, rules: Ruleset, n_players: int) -> None:
        m = self.meta
        if self.any_rules:
            if n_players != m["n_players"]:
                raise AfterstateError(
                    f"{self.name} reads the rules and plays any ruleset, but with {m['n_players']} "
                    f"players; this game has {n_players}"
                )
        elif rules.hash != m["ruleset_hash"] or n_players != m["n_players"]:
            raise AfterstateError(
                f"{self.name} was trained for ruleset {m['ruleset_name']!r} (hash {m['ruleset_hash']}) with "
                f"{m['n_players']} players; this game is {rules.name!r} (hash {rules.hash}) with {n_players} players. "
                "Play it under the ruleset and player count it was trained for, or train one for this game"
            )
        check_rules(rules)

    def plan(self, game: Game) -> TurnPlan:
        """The plan of ``game``'s current turn (kept while the turn lasts)."""
        key = (id(game), game.turn, game.current, tuple(game.scores), tuple(game.busts_in_row), game.final_turns_left)
        if key != self._key:
            learner = tuple(p == game.current or self.meta["opponents_learn"] for p in range(game.n_players))
            self._plan = plan_turn(game, self.net, learner, all_seats=False)
            self._key = key
        return self._plan

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        return self.plan(game).pick(game)

    def value_grid(self, unit: int, rules: Ruleset | None = None) -> np.ndarray:
        """``W[f, g, s, o]``: the win chance its plans read for the player to move at the start
        of a turn outside the final round, with s units against o (on-board flags f, g), in a
        2-player game, where the mover is its opponent and the other seat itself: every
        position its turns hand on below the target. With the exact last turns of features v2
        these values are its whole policy: the exact evaluator follows it through them
        (:func:`tenk_env.policies.exact.exact_policy`). Scores run up to the target. ``rules``:
        the game's (its own, for an agent of one ruleset)."""
        rules, m = rules or self.rules, self.meta
        if m["n_players"] != 2 or self.net.version < 2 or rules.bust_penalty:
            raise AfterstateError(
                f"{self.name}: a value grid needs a 2-player, features-v2 agent on a ruleset "
                "without bust penalty (its moves then depend on the scores and flags alone)"
            )
        tu = rules.target // unit
        s, o = (x.ravel() for x in np.meshgrid(np.arange(tu), np.arange(tu), indexing="ij"))
        B = len(s)
        W = np.zeros((2, 2, tu, tu))
        entry = bool(rules.entry_threshold)
        for f in (0, 1):
            for g in (0, 1):
                on = np.tile([float(f or not entry), float(g or not entry)], (B, 1))
                X = features_of(
                    rules,
                    np.stack([s, o], axis=1) * unit,
                    on,
                    np.zeros((B, 2)),
                    np.zeros(B),
                    np.ones((B, 2)),
                    np.zeros((B, 2)),
                    np.tile([float(m["opponents_learn"]), 1.0], (B, 1)),
                    self.net.rules_obs,
                )
                # the plan reads its own share, which the evaluator takes as 1 - W
                W[f, g] = (1.0 - self.net(X)[:, 1]).reshape(tu, tu)
        return W

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        raise AfterstateError(f"{self.name} does not play piggyback rulesets")

    def __repr__(self) -> str:
        return f"AfterstateAgent({self.name!r})"


def make_afterstate(arg: str | None) -> AfterstateAgent:
    """The ``afterstate:PATH`` agent spec."""
    if not arg:
        raise AgentError("agent 'afterstate' needs a checkpoint, e.g. afterstate:runs/afterstate_classic/best.npz")
    return AfterstateAgent.load(arg)
