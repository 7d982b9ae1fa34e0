"""PettingZoo AEC environment: every seat is an external agent (self-play, league play).

```python
from tenk_env.aec import env as make_aec

aec = make_aec(rules="classic", n_players=3)
aec.reset(seed=42)
for agent in aec.agent_iter():
    obs, reward, terminated, truncated, info = aec.last()
    if terminated or truncated:
        action = None
    else:
        action = aec.action_space(agent).sample(obs["action_mask"])
    aec.step(action)
```

Agents are ``player_0`` .. ``player_{n-1}`` (the seats). Each observation is
``{"observation": float32 vector, "action_mask": int8 vector}``, encoded exactly as in
the single-agent env (:mod:`tenk_env.obs`, seen from that agent's seat); the mask is all
zeros except for the agent to move. Actions are the single-agent env's. Chance (every
roll, busts included) happens inside ``step``: the next agent selected is the next one
with a decision to make, which is often the same agent again (rolling on).

Rewards are terminal: +1 to a sole winner, -1 to every player who did not win, and
``tie_reward`` (default 0) to each of several players sharing a win (``tie: shared``).
An illegal action raises :class:`~tenk_env.game.IllegalMoveError` naming the action and
why it is illegal, and changes nothing. Dice come only from ``np_random``, seeded by
``reset(seed=...)``. ``render_mode="ansi"`` returns the log of the last step,
``"human"`` prints it after every step.

``backend`` picks the engine as in :class:`~tenk_env.env.TenThousandEnv`: ``"numba"`` (the
compiled turn machine on one game), ``"python"`` (the reference :class:`~tenk_env.game.Game`,
with the game log rendering needs) or ``"auto"`` (default: numba unless rendering). Both
play identical games from the same seed and actions.

A game that ends before any decision (an instant win on the very first roll) is
replaced by a new deal, since PettingZoo requires a live game after ``reset``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from tenk_env.dice import DiceStream, FaceBuffer
from tenk_env.env import pick_backend
from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game, Phase
from tenk_env.obs import OBS_VERSION, apply_action, encode, legal_mask, n_actions, obs_high, obs_size
from tenk_env.records import format_log
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.vector.single import OVER, SingleGame

__all__ = ["TenThousandAEC", "env", "raw_env"]


class TenThousandAEC(AECEnv):
    """Ten Thousand for 2 to 8 external agents (see the module docstring)."""

    metadata: dict[str, Any] = {
        "render_modes": ["ansi", "human"],
        "name": "tenthousand_v0",
        "is_parallelizable": False,
        "render_fps": 4,
        "obs_version": OBS_VERSION,
    }

    def __init__(
        self,
        rules: str | Ruleset | Any = "classic",
        n_players: int = 2,
        tie_reward: float = 0.0,
        render_mode: str | None = None,
        backend: str = "auto",
    ):
        super().__init__()
        self.rules: Ruleset = load_ruleset(rules)
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, (int, np.integer))
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise ValueError(
                f"n_players = {n_players!r}: TenThousandAEC plays {MIN_PLAYERS} to "
                f"{MAX_PLAYERS} players; give an integer in that range"
            )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode = {render_mode!r}: choose None, 'ansi' or 'human'")
        self.n_players = n = int(n_players)
        self.tie_reward = float(tie_reward)
        self.render_mode = render_mode
        self.backend = pick_backend(backend, render_mode)
        self._core = SingleGame(self.rules, n) if self.backend == "numba" else None
        if self._core is not None:
            self._mask8 = self._core.mask[0].view(np.int8)
            self._obs1 = self._core.obs[0]
            self._no_moves = np.zeros_like(self._mask8)
            self._n_actions = len(self._mask8)
            self._mover = self._obs_for = -1
        self.obs_version = OBS_VERSION
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        na = n_actions(self.rules)
        obs_space = spaces.Box(np.zeros(obs_size(n), dtype=np.float32), obs_high(n), dtype=np.float32)
        self.observation_spaces = {
            a: spaces.Dict({"observation": obs_space, "action_mask": spaces.Box(0, 1, (na,), dtype=np.int8)})
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(na) for a in self.possible_agents}
        self.np_random, self.np_random_seed = seeding.np_random(None)
        self._game: Game | None = None
        self._dice: DiceStream | FaceBuffer | None = None
        self._mark = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ AEC API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        stream = DiceStream if self._core is None else FaceBuffer
        if self._dice is None or seed is not None:
            self._dice = stream(self.np_random)
        # PettingZoo's api_test passes arbitrary options; only "dice" means something here.
        if options and "dice" in options:
            self._dice = stream(self.np_random, options["dice"])
        core, dice = self._core, self._dice
        if core is not None:
            assert isinstance(dice, FaceBuffer)  # made above for this engine
            if core.dice is not dice:
                core.set_dice(dice)
            core.new_game()
            while core.run(-1, -1) == OVER:
                core.new_game()
        else:
            while True:
                self._game = Game(self.rules, self.n_players, record=self.render_mode is not None)
                self._advance()
                if self._game.phase != Phase.OVER:
                    break
        self._mark = 0
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._current()]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        core = self._core
        if core is None:
            g = self._live_game()
            return {"observation": encode(g, seat), "action_mask": legal_mask(g, seat)}
        # The core holds the mover's mask and, after each step, the mover's observation (what
        # last() asks for); everyone else (and everyone once the game is over) sees a zero mask.
        if seat != self._obs_for:
            core.observe(seat)
            self._obs_for = seat
        return {
            "observation": self._obs1.copy(),
            "action_mask": self._mask8.copy() if seat == self._mover else self._no_moves.copy(),
        }

    @property
    def game(self) -> Game | None:
        """The game: live on the Python engine; on numba a snapshot (a new :class:`Game`
        in the same state, without a log) that the env does not read back."""
        return self._game if self._core is None else self._core.snapshot()

    def _live_game(self) -> Game:
        """The Python engine's game (raises before the first reset)."""
        g = self._game
        if g is None:
            raise RuntimeError("no game yet: call reset() first")
        return g

    def _current(self) -> int:
        if self._core is None:
            return self._live_game().current
        self._mover = self._obs_for = self._core.current
        return self._mover

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to move: give an action (only terminated agents step with None)")
        core = self._core
        if core is None:
            g = self._live_game()
            mark = len(g.events)
            apply_action(g, action)  # raises IllegalMoveError naming the action, game unchanged
            self._mark = mark
        else:
            try:
                a = int(action)
                legal = 0 <= a < self._n_actions and self._mask8[a]
            except (TypeError, ValueError):
                legal = False
            if not legal:
                apply_action(core.engine.to_game(0), action)  # raises IllegalMoveError naming the action
                raise AssertionError(f"action {action!r} was masked off but the game accepted it")  # pragma: no cover
        # Rewards come only with the end of the game, so during play every entry of
        # self.rewards (set at reset) and of the cumulative rewards stays 0.0.
        self._cumulative_rewards[agent] = 0.0
        if core is None:
            self._advance()
            over = g.phase == Phase.OVER
        else:
            mover = core.run_any(a)
            over = mover < 0
            self._mover = self._obs_for = mover
        if over:
            if core is None:
                w, scores, turns = list(g.winners), list(g.scores), g.turn
            else:
                w, scores, turns = core.result()
            for name in self.agents:
                s = self._seat[name]
                self.rewards[name] = (1.0 if len(w) == 1 else self.tie_reward) if s in w else -1.0
                self.infos[name] = {"winners": list(w), "won": s in w, "final_scores": list(scores), "turns": turns}
            self.terminations = dict.fromkeys(self.agents, True)
            self._accumulate_rewards()  # the only step that pays: every other one adds 0.0 to each
        else:
            self.agent_selection = self.possible_agents[g.current if core is None else mover]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without a render_mode; create the env with render_mode='ansi' or 'human'"
            )
            return None
        g = self._game
        text = "(no game: call reset())" if g is None else format_log(g.events[self._mark :], self.possible_agents)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ internals
    def _advance(self) -> None:
        """Play chance until some agent must decide or the game ends."""
        g, dice = self._live_game(), self._dice
        # reset() made them; the Python engine's dice are a DiceStream (or anything with its draw(k))
        assert dice is not None and not isinstance(dice, FaceBuffer)
        draw = dice.draw
        while True:
            ph = g.phase
            if ph is Phase.ROLL:
                g.roll(draw(g.dice_left))
            elif ph is Phase.ORDER:
                g.roll(draw(g.dice_to_roll))
            else:
                return


def raw_env(**kwargs: Any) -> TenThousandAEC:
    return TenThousandAEC(**kwargs)


def env(**kwargs: Any) -> AECEnv:
    """The AEC env wrapped as PettingZoo recommends (order enforcing, action bounds)."""
    e = TenThousandAEC(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)
