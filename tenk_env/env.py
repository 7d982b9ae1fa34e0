"""Single-agent Gymnasium environment: one learner against built-in opponents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tenk_env.dice import DiceStream, FaceBuffer
from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game, Phase
from tenk_env.obs import (
    END_TURN,
    N_KEEP_ACTIONS,
    OBS_VERSION,
    PIGGYBACK_FRESH,
    PIGGYBACK_TAKE,
    apply_action,
    encode,
    legal_mask,
    n_actions,
    obs_high,
    obs_size,
    obs_tables,
)
from tenk_env.records import format_log
from tenk_env.registry import close_agents, make_batched, make_policy
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.tables import get_tables
from tenk_env.vector.layout import P_GBANKED, P_GBUSTS, P_SCORE
from tenk_env.vector.single import OVER, TO_OTHER, SingleGame

__all__ = ["TenThousandEnv", "DiceStream", "REWARDS", "BACKENDS"]

#: reward schemes (see the class docstring)
REWARDS = ("win", "shaped")
#: engines a single-game env can step on (see the class docstring)
BACKENDS = ("auto", "numba", "python")

_ROLL, _DECIDE, _PIGGYBACK, _ORDER, _OVER = Phase.ROLL, Phase.DECIDE, Phase.PIGGYBACK, Phase.ORDER, Phase.OVER


class TenThousandEnv(gym.Env):
    """
    Ten Thousand (Farkle) against built-in opponents, under any ruleset.

    ## Description
    Ten Thousand is a push-your-luck dice game for two or more players. On a turn a player
    rolls six dice, sets aside at least one scoring die, and either banks the turn total
    or rolls the dice that remain; a roll with nothing scoring (a bust) loses the turn
    total. Setting aside every die ("hot dice") gives all six back. The first player to
    bank the target (10,000 in the ``classic`` ruleset) triggers a final round; the
    highest total then wins. The scoring table, entry threshold, end of game and a dozen
    other house rules come from the ruleset (``tenk rules`` lists the presets).

    The learner sits in one seat; the other seats are played by built-in agents (agent
    specs such as ``"random"``, ``"greedy"``, ``"hold:350"``, ``"dicenow"``). Every
    ``step`` is one decision of the learner: which dice to set aside from a roll that
    scores, and whether to bank or roll on (plus, under ``piggyback: true``, whether to
    take over the dice the last banker left). The learner's busts, the opponents' turns and
    the learner's next roll happen inside ``step``.

    ## Action Space
    `Discrete(128)`, or `Discrete(130)` when the ruleset allows piggybacking. For
    `a < 128`, `a & 63` is a keep-mask over the current roll shown sorted (bit `i` keeps die
    `i`) and `a & 64` means end the turn after setting those dice aside (bank; at a roll
    limit it may forfeit the total), otherwise roll the dice that remain. `128` takes over
    the last banker's dice and total, `129` starts fresh. Only the canonical mask of each
    distinct set of kept dice is legal (the lowest positions of each face), so no move has
    two names. The legal actions are `info["action_mask"]` (int8) and `env.action_masks()`
    (bool, what sb3-contrib's `MaskablePPO` reads).

    Example: roll `1 2 3 5 5 6` (positions 0-5). Action `1` keeps the 1 and rolls five
    dice; `1 | 8 | 64 = 73` keeps 1 and 5 and banks; `16` (the second 5 alone) is illegal,
    `8` is the canonical name of "keep one 5".

    ## Observation Space
    `Box(0, high, (56 + 5 * n_players,), float32)`, documented index by index in
    `tenk_env.obs` (`obs_labels(n_players)` names them): the sorted roll (one-hot per
    position and face counts), dice left, turn total (twice: / target and / 3,000), rolls
    this turn and the roll limit, phase flags, the piggyback offer, the final-round flag,
    then for every player in turn order starting with the learner: score / target,
    on-board flag, consecutive busts (where the ruleset penalises them), whose turn it is,
    who triggered the final round. Point ratios are clipped at 2, the rest lies in [0, 1].
    The layout is versioned: `metadata["obs_version"]`.

    ## Rewards
    - `reward="win"` (default): 0 on every step, then at the end +1 if the learner wins
      alone, -1 if it does not win, and `tie_reward` (default 0) when it shares the win
      (only possible under `tie: shared`).
    - `reward="shaped"`: the same terminal reward plus, on every step, the change in the
      learner's banked score during the step divided by the target (banks, bust
      penalties, lose-all rolls and points forfeited to it), so a whole game adds about
      final score / target.
    - A non-strict illegal action earns `illegal_reward` (default -0.01) and changes
      nothing.

    ## Starting State
    A fresh game: scores 0 (or the ruleset's `komi` for seat 1), seat 0 to start (or the
    highest single die under `turn_order: highest_die`). Opponents seated before the
    learner play their turns, then the learner rolls until a roll scores: the first
    observation is the learner's first decision. In the rare game that ends before the
    learner's first decision (an opponent's instant win), a new game is dealt.

    ## Episode End
    - Termination: the game is over (final round played out, or an immediate win).
    - Truncation: never; the game always ends. An agent that repeats an illegal action in
      non-strict mode loops forever; wrap the env in `TimeLimit` if that can happen.

    ## Information
    Every `reset` and `step`: `action_mask` (int8), `seat` (the learner's seat),
    `banked` (points the learner banked during the step), `busts` (learner busts during
    the step), `illegal_action` (bool). When the episode ends also: `winners` (seats),
    `winner` (the seat, or -1 for a shared win), `won` (bool), `final_scores` (seat
    order), `turns` (turns played), `episode_busts` and `episode_banked` (learner totals).

    ## Arguments
    ```python
    import gymnasium as gym
    import tenk_env  # registers TenThousand-v0
    gym.make("TenThousand-v0", rules="classic", n_players=2, opponents=["dicenow"],
             seat="random", reward="win", tie_reward=0.0, strict=False,
             illegal_reward=-0.01, render_mode=None, backend="auto")
    ```
    - `rules`: a preset name, a YAML path, a mapping of fields or a `Ruleset`.
    - `n_players`: 2 to 8.
    - `opponents`: agent specs (strings) or `Policy` objects: one for every other seat, in
      turn order after the learner, or a single one for all of them. Default: `dicenow`,
      the Dice.now computer player.
    - `seat`: the learner's seat, or `"random"` (default) for a uniformly drawn seat every
      episode. `reset(options={"seat": k})` overrides it for one episode.
    - `reward`, `tie_reward`: see Rewards.
    - `strict`: `True` raises `IllegalMoveError` (a `ValueError`) naming the action and
      why it is illegal, leaving the game unchanged. `False` (default, what Gymnasium's
      and SB3's `check_env` need, as they step with unmasked random actions): the
      illegal action is ignored, the observation repeats, `info["illegal_action"]` is
      True. Actions outside the action space raise in both modes.
    - `render_mode`: `"ansi"` (`render()` returns the game log of the last step as text)
      or `"human"` (prints it after every step). Logs are only recorded when rendering,
      by the Python engine.
    - `backend`: the engine that plays the game. `"numba"`: the batched engine's compiled
      turn machine on one game (:mod:`tenk_env.vector.single`), with the built-in bots'
      compiled forms as opponents; several times faster. `"python"`: the reference turn
      machine (:class:`tenk_env.game.Game`), with a game log. `"auto"` (default): numba
      unless a render mode is asked for. Both deal the same dice from
      the same seed and play identical games: same observations, masks, rewards and infos
      step for step (opponents that draw random numbers, such as `random`, are asked
      through their Python form on both, so they draw the same numbers). `env.game` is
      the live :class:`Game` on the Python engine, a snapshot of the state on numba.

    Reset options: `{"seat": k}` for one episode's seat, `{"dice": [faces, ...]}` to fix
    the first dice of the game (consumed in order, as many as each roll needs; then
    `np_random` takes over). Dice come only from `np_random`, and the opponents draw
    their randomness from it too: the same seed and the same actions give the same game.

    ## Version History
    * v0: Initial version (observation version 1). Later: `backend=` (the compiled engine,
      now the default; same games, observations and rewards as before from the same seed).
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4, "obs_version": OBS_VERSION}

    def __init__(
        self,
        rules: str | Ruleset | Any = "classic",
        n_players: int = 2,
        opponents: Any = None,
        seat: int | str = "random",
        reward: str = "win",
        tie_reward: float = 0.0,
        strict: bool = False,
        illegal_reward: float = -0.01,
        render_mode: str | None = None,
        backend: str = "auto",
    ):
        self.rules: Ruleset = load_ruleset(rules)
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, (int, np.integer))
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise ValueError(
                f"n_players = {n_players!r}: TenThousandEnv plays {MIN_PLAYERS} to "
                f"{MAX_PLAYERS} players; give an integer in that range"
            )
        self.n_players = n = int(n_players)
        self._fixed_seat = self._check_seat(seat, "seat")
        if reward not in REWARDS:
            raise ValueError(
                f"reward = {reward!r}: choose 'win' (+1 win, -1 loss, tie_reward on a "
                "shared win) or 'shaped' (that plus banked points / target every step)"
            )
        self.reward_mode = reward
        self.tie_reward = float(tie_reward)
        self.strict = bool(strict)
        self.illegal_reward = float(illegal_reward)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode = {render_mode!r}: choose None, 'ansi' or 'human'")
        self.render_mode = render_mode
        self.backend = pick_backend(backend, render_mode)
        self.opponents = self._make_opponents(opponents)

        self.obs_version = OBS_VERSION
        self.action_space = spaces.Discrete(n_actions(self.rules))
        self.observation_space = spaces.Box(np.zeros(obs_size(n), dtype=np.float32), obs_high(n), dtype=np.float32)
        self._game: Game | None = None
        self._tdata = obs_tables(get_tables(self.rules))
        self.seat = 0 if self._fixed_seat is None else self._fixed_seat
        #: seat -> the opponent policy playing it (None for the learner's seat)
        self._policies: list[Any] = [None] * n
        #: the dice: a DiceStream on the Python engine, a FaceBuffer (the same faces) on numba
        self._dice: DiceStream | FaceBuffer | None = None
        self._n_actions = int(self.action_space.n)
        self._mask = np.zeros(self._n_actions, dtype=np.int8)
        self._mark = 0
        self._step_busts = self._step_banked = 0
        self._ep_busts = self._ep_banked = 0
        self._core: SingleGame | None = None
        if self.backend == "numba":
            self._core = SingleGame(self.rules, n)
            self._mask = self._core.mask[0].view(np.int8)
            self._obs = self._core.obs[0]
            #: seat offset -> the compiled (batched) form of that opponent, or None: asked through its Python form
            self._fast = [_compiled_form(o) for o in self.opponents]
            # The bots' compiled forms name a driver that plays their seats inside the compiled
            # step (agents.fused): one compiled call per learner step instead of two per decision.
            drivers: set[Any] = {getattr(f, "driver", None) for f in self._fast} - {None}
            self._driver = drivers.pop()(self._core) if len(drivers) == 1 else None
            #: (action or -1, learner seat) -> what SingleGame.run returns, compiled bots played on the way
            self._drive = self._core.run if self._driver is None else self._driver.run

    def close(self) -> None:
        """End what the opponents hold (a ``cmd:`` agent's program) now, not when the env is
        collected. An opponent asked to play again starts afresh."""
        close_agents(getattr(self, "opponents", ()))
        super().close()

    # ------------------------------------------------------------------ argument checks
    def _check_seat(self, seat: Any, what: str) -> int | None:
        if isinstance(seat, str) and seat == "random":
            return None
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.n_players:
            raise ValueError(
                f"{what} = {seat!r}: give a seat 0 to {self.n_players - 1} (n_players = {self.n_players}) or 'random'"
            )
        return int(seat)

    def _make_opponents(self, opponents: Any) -> list[Any]:
        # specs resolve through tenk_env.registry, which the agent packages fill (entry points)
        others = self.n_players - 1
        if opponents is None:
            opponents = ["dicenow"]
        if isinstance(opponents, str) or not isinstance(opponents, Sequence):
            opponents = [opponents]
        opponents = list(opponents)
        if len(opponents) == 1:
            opponents = opponents * others
        if len(opponents) != others:
            raise ValueError(
                f"opponents: {len(opponents)} given for {others} other seat(s) "
                f"(n_players = {self.n_players}); give one agent spec per other seat, "
                "in turn order after the learner, or a single spec for all of them"
            )
        made = []
        for i, spec in enumerate(opponents):
            try:
                agent = make_policy(spec)
                agent.check(self.rules, self.n_players)
            except ValueError as e:
                raise type(e)(f"opponents[{i}]: {e}") from None
            made.append(agent)
        return made

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"seat", "dice"}
        if unknown:
            raise ValueError(
                f"reset options {sorted(unknown)} are not known; TenThousandEnv takes "
                "'seat' (0 to n_players - 1) and 'dice' (a list of faces to roll first)"
            )
        stream = DiceStream if self._core is None else FaceBuffer
        if self._dice is None or seed is not None:
            # a seeded reset restarts the dice stream, so the game depends on the seed alone
            self._dice = stream(self.np_random)
        if "dice" in options:
            self._dice = stream(self.np_random, options["dice"])
        seat = self._check_seat(options["seat"], "options['seat']") if "seat" in options else self._fixed_seat
        if self._core is not None:
            return self._reset_numba(seat)
        while True:
            self.seat = int(self.np_random.integers(self.n_players)) if seat is None else seat
            n = self.n_players
            self._policies = [self.opponents[(q - self.seat - 1) % n] if q != self.seat else None for q in range(n)]
            self._game = Game(self.rules, n, record=self.render_mode is not None)
            self._mark = 0
            self._step_busts = self._step_banked = 0
            self._advance()
            if self._game.phase != _OVER:
                break
        self._ep_busts, self._ep_banked = self._step_busts, self._step_banked
        self._mask = mask = legal_mask(self._game)
        info = {
            "action_mask": mask.copy(),
            "seat": self.seat,
            "banked": self._step_banked,
            "busts": self._step_busts,
            "illegal_action": False,
        }
        if self.render_mode == "human":
            self.render()
        return encode(self._game, self.seat), info

    def step(self, action: Any):
        core = self._core
        if core is not None:
            if not self._started:
                raise RuntimeError("call reset() before step()")
            if self._over:
                raise RuntimeError("the episode is over: call reset() before step()")
        else:
            g = self._game
            if g is None:
                raise RuntimeError("call reset() before step()")
            if g.phase == _OVER:
                raise RuntimeError("the episode is over: call reset() before step()")
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"action {action!r} is not an integer; the action space is {self.action_space}") from None
        if not 0 <= a < self._n_actions or a != action:
            raise ValueError(f"action {action!r} is outside the action space {self.action_space}")
        if core is not None:
            return self._step_numba(a)
        assert g is not None  # the Python engine's game, checked above
        seat = self.seat
        mark = len(g.events)
        s0 = g.scores[seat]
        if self._mask[a]:
            # legal by the mask: skip apply_action's checks and play it directly
            if a < N_KEEP_ACTIONS:
                keep = self._tdata.rolls[g.dice].keep_at[a & 63]
                assert keep is not None  # a legal keep action names a canonical keep
                g.act(keep, a >= END_TURN)
            else:
                g.piggyback(a == PIGGYBACK_TAKE)
        elif self.strict:
            apply_action(g, a)  # raises IllegalMoveError saying why, and changes nothing
            raise AssertionError(f"action {a} was masked off but the game accepted it")  # pragma: no cover
        else:
            self._mark = mark
            info = {"action_mask": self._mask.copy(), "seat": seat, "banked": 0, "busts": 0, "illegal_action": True}
            return encode(g, seat), self.illegal_reward, False, False, info
        self._mark = mark
        banked = g.scores[seat] - s0
        self._step_busts = 0
        self._step_banked = banked if banked > 0 else 0
        self._advance()
        self._ep_busts += self._step_busts
        self._ep_banked += self._step_banked
        reward = (g.scores[seat] - s0) / self.rules.target if self.reward_mode == "shaped" else 0.0
        self._mask = mask = legal_mask(g)
        # the caller gets its own copy: editing it must not change what the env accepts
        info = {
            "action_mask": mask.copy(),
            "seat": seat,
            "banked": self._step_banked,
            "busts": self._step_busts,
            "illegal_action": False,
        }
        terminated = g.phase == _OVER
        if terminated:
            w = g.winners
            reward += (1.0 if len(w) == 1 else self.tie_reward) if seat in w else -1.0
            info.update(
                winners=list(w),
                winner=w[0] if len(w) == 1 else -1,
                won=seat in w,
                final_scores=list(g.scores),
                turns=g.turn,
                episode_busts=self._ep_busts,
                episode_banked=self._ep_banked,
            )
        if self.render_mode == "human":
            self.render()
        return encode(g, seat), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions now, as bools (the method sb3-contrib's MaskablePPO calls)."""
        return self._mask.astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; create the env with render_mode='ansi' or 'human'")
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        """Play chance and the opponents until the learner must decide or the game ends."""
        g, dice = self._game, self._dice
        # reset() made them; the Python engine's dice are a DiceStream (or anything with its draw(k))
        assert g is not None and dice is not None and not isinstance(dice, FaceBuffer)
        seat = self.seat
        pol = self._policies
        rng = self.np_random
        draw = dice.draw
        while True:
            ph = g.phase
            if ph is _ROLL:
                if g.current == seat:
                    s = g.scores[seat]
                    info = g.roll(draw(g.dice_left))
                    assert info is not None  # a roll in the ROLL phase has its table entry
                    if info.bust:
                        self._step_busts += 1
                    elif g.scores[seat] > s:  # a bank forced at the roll limit
                        self._step_banked += g.scores[seat] - s
                else:
                    g.roll(draw(g.dice_left))
            elif ph is _DECIDE:
                p = g.current
                if p == seat:
                    return
                keep, end = pol[p].decide(g, rng)
                g.act(keep, end)
            elif ph is _PIGGYBACK:
                p = g.current
                if p == seat:
                    return
                g.piggyback(pol[p].piggyback(g, rng))
            elif ph is _ORDER:
                g.roll(draw(g.dice_to_roll))
            else:
                return

    # ------------------------------------------------------------------ the numba engine
    @property
    def game(self) -> Game | None:
        """The game: live on the Python engine; on numba a snapshot (a new :class:`Game`
        in the same state, without a log) that the env does not read back."""
        return self._game if self._core is None else self._core.snapshot()

    _started = _over = False

    def _reset_numba(self, seat: int | None):
        core, dice = self._core, self._dice
        assert core is not None and isinstance(dice, FaceBuffer)  # reset() made them (numba engine)
        if core.dice is not dice:
            core.set_dice(dice)
        n = self.n_players
        while True:
            self.seat = int(self.np_random.integers(n)) if seat is None else seat
            self._seat_fast = [self._fast[(q - self.seat - 1) % n] if q != self.seat else None for q in range(n)]
            self._policies = [self.opponents[(q - self.seat - 1) % n] if q != self.seat else None for q in range(n)]
            if self._driver is not None:
                self._driver.seat_forms(self._seat_fast)
            core.new_game()
            code = self._drive(-1, self.seat)
            if code == TO_OTHER:
                code = self._play_others(code)
            if code != OVER:
                break
        self._started, self._over = True, False
        PS = core.engine._PS
        self._mine = PS[:, 0, self.seat]
        info = {
            "action_mask": self._mask.copy(),
            "seat": self.seat,
            "banked": int(PS[P_GBANKED, 0, self.seat]),
            "busts": int(PS[P_GBUSTS, 0, self.seat]),
            "illegal_action": False,
        }
        return self._obs.copy(), info

    def _step_numba(self, a: int):
        core = self._core
        assert core is not None  # the numba engine
        seat = self.seat
        if not self._mask[a]:
            if self.strict:
                apply_action(core.engine.to_game(0), a)  # raises IllegalMoveError saying why
                raise AssertionError(f"action {a} was masked off but the game accepted it")  # pragma: no cover
            info = {"action_mask": self._mask.copy(), "seat": seat, "banked": 0, "busts": 0, "illegal_action": True}
            return self._obs.copy(), self.illegal_reward, False, False, info
        mine = self._mine  # the learner's per-seat fields
        before = mine.tolist()
        code = self._drive(a, seat)
        if code == TO_OTHER:
            code = self._play_others(code)
        after = mine.tolist()
        reward = (after[P_SCORE] - before[P_SCORE]) / self.rules.target if self.reward_mode == "shaped" else 0.0
        info = {
            "action_mask": self._mask.copy(),
            "seat": seat,
            "banked": after[P_GBANKED] - before[P_GBANKED],
            "busts": after[P_GBUSTS] - before[P_GBUSTS],
            "illegal_action": False,
        }
        terminated = code == OVER
        if terminated:
            self._over = True
            w, scores, turns = core.result()
            won = seat in w
            reward += (1.0 if len(w) == 1 else self.tie_reward) if won else -1.0
            info.update(
                winners=w,
                winner=w[0] if len(w) == 1 else -1,
                won=won,
                final_scores=scores,
                turns=turns,
                episode_busts=after[P_GBUSTS],
                episode_banked=after[P_GBANKED],
            )
        return self._obs.copy(), reward, terminated, False, info

    def _play_others(self, code: int) -> int:
        """Opponents' decisions the compiled step left to Python (numba engine), until the
        learner's or the end of the game."""
        core = self._core
        assert core is not None  # the numba engine
        seat = self.seat
        rng = self.np_random
        while code == TO_OTHER:
            p = core.current
            fast = self._seat_fast[p]
            if fast is not None:
                fast.act(core.engine, core.ix0, rng, core.actions)
                a = int(core.actions[0])
            else:
                g = core.engine.to_game(0)
                pol = self._policies[p]
                if g.phase is _PIGGYBACK:
                    a = PIGGYBACK_TAKE if pol.piggyback(g, rng) else PIGGYBACK_FRESH
                else:
                    keep, end = pol.decide(g, rng)
                    a = keep.mask | END_TURN if end else keep.mask
            code = self._drive(a, seat)
        return code

    def _names(self) -> list[str]:
        return [f"P{q + 1}" + (" (you)" if q == self.seat else "") for q in range(self.n_players)]

    def _render_text(self) -> str:
        g = self._game
        if g is None:
            return "(no game: call reset())"
        lines = [format_log(g.events[self._mark :], self._names())]
        if g.phase == _DECIDE and g.current == self.seat:
            legal = np.flatnonzero(self._mask)
            lines.append(
                f"your roll: {' '.join(map(str, g.dice))} | turn total {g.turn_total:,} | "
                f"legal actions: {', '.join(map(str, legal))}"
            )
        elif g.phase == _PIGGYBACK and g.current == self.seat:
            assert g.piggy is not None  # set in the PIGGYBACK phase
            dice, total = g.piggy
            lines.append(f"piggyback? {dice} dice and {total:,} points left: 128 take over, 129 start fresh")
        return "\n".join(line for line in lines if line)


def pick_backend(backend: str, render_mode: str | None) -> str:
    """The engine a single-game env runs on (see TenThousandEnv's `backend`)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend = {backend!r}: choose 'auto', 'numba' (compiled) or 'python' (the reference engine)")
    if backend == "auto":
        return "numba" if render_mode is None else "python"
    if backend == "numba" and render_mode is not None:
        raise ValueError(
            f"render_mode = {render_mode!r} draws the Python engine's game log: use backend='python' "
            "(or 'auto', which picks it when rendering)"
        )
    return backend


def _compiled_form(policy: Any) -> Any:
    """The compiled (batched) form of an opponent, or None where the env asks its Python form:
    a form that draws random numbers would draw other numbers than the Python form does, and
    the games of the two engines would part."""
    form = make_batched(policy)
    return None if getattr(form, "uses_rng", False) else form
