"""Gymnasium ``VectorEnv`` over the batched engine: ``num_envs`` learners, opponents inside.

:class:`TenThousandVectorEnv` is ``num_envs`` copies of :class:`tenk_env.env.TenThousandEnv`
(same arguments, observations, actions, rewards and info keys) stepped by one call: the
learner's actions go into the batched engine, then the opponents' decisions are made by
batched agents (:func:`tenk_env.registry.make_batched`) for all games at once until every game waits for
its learner again. Observations are :func:`tenk_env.vector.obs.encode_batch`, bit for bit
``tenk_env.obs.encode``.

Autoreset is ``SAME_STEP`` (``metadata["autoreset_mode"]``): on the step that ends a game,
``obs[i]`` is already the first observation of the next game, and ``infos["final_obs"][i]``
/ ``infos["final_info"]`` hold the last observation and info of the finished one (with
``winners``, ``winner``, ``won``, ``final_scores``, ``turns``, ``episode_busts``,
``episode_banked``), as ``gymnasium.vector.SyncVectorEnv`` reports them in that mode.

The legal actions are ``infos["action_mask"]`` (int8, (num_envs, n_actions)) and
:meth:`action_masks` (bool), the method sb3-contrib's MaskablePPO calls
(:func:`tenk_env.vector.sb3.sb3_vec_env` wraps this class as an SB3 ``VecEnv``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS
from tenk_env.obs import OBS_VERSION, n_actions, obs_high, obs_size
from tenk_env.registry import close_agents, make_batched
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.vector.engine import BatchedGame, IllegalActionError, check_backend
from tenk_env.vector.layout import PH_OVER
from tenk_env.vector.obs import encode_batch

__all__ = ["TenThousandVectorEnv"]


class TenThousandVectorEnv(VectorEnv):
    """``num_envs`` games of Ten Thousand, one learner seat each, opponents inside.

    Arguments as :class:`tenk_env.env.TenThousandEnv` (``rules``, ``n_players``,
    ``opponents``, ``seat``, ``reward``, ``tie_reward``, ``strict``, ``illegal_reward``),
    plus:

    - ``num_envs``: games stepped together.
    - ``pool``: instead of ``opponents``, a list of ``(agent, weight)``: every other seat of
      every game draws its agent from it (by weight) at the start of the game.
    - ``threads``: of the :class:`BatchedGame`.
    - ``backend``: retired, as in :class:`BatchedGame` (``"numpy"`` is refused).
    - ``dice``: a :data:`~tenk_env.vector.DiceSource` for every die (tests, replays); by
      default the dice come from the seed of :meth:`reset`.

    Agents are specs or Policy objects (made batched by :func:`tenk_env.registry.make_batched`;
    a PPO agent is evaluated in one forward pass for all the games it plays). A non-strict
    illegal action earns ``illegal_reward`` and leaves that game as it was; ``strict=True``
    raises :class:`IllegalActionError` naming the env and the reason.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "obs_version": OBS_VERSION, "render_modes": []}
    #: the opponents' batched forms, and the pool's weights (None: fixed per seat offset)
    _agents: list[Any]
    _pool_p: np.ndarray | None

    def __init__(
        self,
        num_envs: int = 256,
        rules: str | Ruleset | Any = "classic",
        n_players: int = 2,
        opponents: Any = None,
        seat: int | str = "random",
        reward: str = "win",
        tie_reward: float = 0.0,
        strict: bool = False,
        illegal_reward: float = -0.01,
        *,
        pool: Sequence[tuple[Any, float]] | None = None,
        backend: str | None = None,
        threads: int | None = None,
        dice: Any = None,
    ):
        self.rules = load_ruleset(rules)
        if (
            isinstance(n_players, bool)
            or not isinstance(n_players, (int, np.integer))
            or not (MIN_PLAYERS <= n_players <= MAX_PLAYERS)
        ):
            raise ValueError(f"n_players = {n_players!r}: give an integer {MIN_PLAYERS} to {MAX_PLAYERS}")
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs = {num_envs!r}: give a positive integer")
        if reward not in ("win", "shaped"):
            raise ValueError(
                f"reward = {reward!r}: choose 'win' (+1 win, -1 loss, tie_reward on a shared win) "
                "or 'shaped' (that plus banked points / target every step)"
            )
        self.n_players = n = int(n_players)
        self.num_envs = B = int(num_envs)
        if isinstance(seat, str) and seat == "random":
            self._fixed_seat = None
        elif isinstance(seat, (int, np.integer)) and not isinstance(seat, bool) and 0 <= seat < n:
            self._fixed_seat = int(seat)
        else:
            raise ValueError(f"seat = {seat!r}: give a seat 0 to {n - 1} or 'random'")
        self.reward_mode = reward
        self.tie_reward = float(tie_reward)
        self.strict = bool(strict)
        self.illegal_reward = float(illegal_reward)
        self._set_agents(opponents, pool)

        self.single_observation_space = spaces.Box(np.zeros(obs_size(n), np.float32), obs_high(n), dtype=np.float32)
        self.single_action_space = spaces.Discrete(n_actions(self.rules))
        self.observation_space = batch_space(self.single_observation_space, B)
        self.action_space = batch_space(self.single_action_space, B)
        self.n_actions = int(self.single_action_space.n)
        # built at the first reset, so that its opening deal uses the reset's seed (and, with an
        # external dice source, takes no dice before it)
        self.engine: BatchedGame | None = None
        check_backend(backend)
        self._engine_args = dict(auto_reset=False, threads=threads, dice=dice)
        # a ruleset the engine refuses fails here, not at the first reset
        BatchedGame(self.rules, n, 1, threads=threads)
        self.seat = np.zeros(B, np.int64)
        #: (B, n): index into the agent list for every seat, -1 for the learner's
        self.seat_agent = np.full((B, n), -1, np.int64)
        self._actions = np.zeros(B, np.int64)
        self._mask = np.zeros((B, self.n_actions), bool)
        self._np_random = np.random.default_rng()
        self._needs_reset = True

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
            raise ValueError(f"seed = {seed!r}: give an integer (one seed for the whole batch) or None")
        options = dict(options or {})
        unknown = set(options) - {"seat"}
        if unknown:
            raise ValueError(f"reset options {sorted(unknown)} are not known; TenThousandVectorEnv takes 'seat'")
        if "seat" in options:
            s = options["seat"]
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 0 <= s < self.n_players:
                raise ValueError(f"options['seat'] = {s!r}: give a seat 0 to {self.n_players - 1}")
        if seed is not None:
            # one seed for the batch: the engine's dice keys from it, seats and agents from a
            # second stream of it
            self._np_random = np.random.default_rng((int(seed), 1))
        if self.engine is None:
            self.engine = BatchedGame(self.rules, self.n_players, self.num_envs, seed=seed, **self._engine_args)
        else:
            self.engine.reset(seed=seed)
        e = self.engine
        ix = np.arange(self.num_envs, dtype=np.int64)
        self._seat_games(ix, options.get("seat"))
        self._play_opponents(ix)
        self._redeal(ix[e.phase[ix] == PH_OVER], options.get("seat"))
        self._needs_reset = False
        obs = encode_batch(e, self.seat)
        e.legal_mask(out=self._mask)
        sl = np.arange(self.num_envs)
        infos = {
            "action_mask": self._mask.astype(np.int8),
            "seat": self.seat.copy(),
            "banked": e.game_banked[sl, self.seat].astype(np.int64),
            "busts": e.game_busts[sl, self.seat].astype(np.int64),
            "illegal_action": np.zeros(self.num_envs, bool),
        }
        return obs, self._with_masks(infos)

    def step(self, actions: Any):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        e = self._live_engine()
        B = self.num_envs
        a = np.asarray(actions)
        if a.shape != (B,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions: expected {B} integer actions (one per env), got {a.dtype} {a.shape}")
        if ((a < 0) | (a >= self.n_actions)).any():
            b = int(np.argmax((a < 0) | (a >= self.n_actions)))
            raise ValueError(f"actions[{b}] = {int(a[b])} is outside the action space Discrete({self.n_actions})")
        a = a.astype(np.int64)
        rows = np.arange(B)
        legal = self._mask[rows, a]
        if self.strict and not legal.all():
            b = int(np.argmin(legal))
            raise IllegalActionError(f"env {b}: {e.explain(b, int(a[b]))}")
        seat = self.seat.copy()
        s0 = e.scores[rows, seat].astype(np.int64)
        busts0 = e.game_busts[rows, seat].astype(np.int64)
        banked0 = e.game_banked[rows, seat].astype(np.int64)
        go = np.flatnonzero(legal)
        e.step(a, games=go)
        self._play_opponents(go)
        rewards = np.zeros(B, np.float64)
        rewards[~legal] = self.illegal_reward
        if self.reward_mode == "shaped":
            rewards[go] = (e.scores[go, seat[go]] - s0[go]) / self.rules.target
        busts = e.game_busts[rows, seat] - busts0
        banked = e.game_banked[rows, seat] - banked0
        over = go[e.phase[go] == PH_OVER]
        terminated = np.zeros(B, bool)
        terminated[over] = True
        infos: dict[str, Any] = {}
        if len(over):
            w = e.winners[over] != 0
            nw = w.sum(axis=1)
            won = w[np.arange(len(over)), seat[over]]
            rewards[over] += np.where(won, np.where(nw == 1, 1.0, self.tie_reward), -1.0)
            final_obs = np.full(B, None, dtype=object)
            fo = encode_batch(e, seat[over], over)
            for i, b in enumerate(over):
                final_obs[b] = fo[i]
            fmask = np.zeros((len(over), self.n_actions), np.int8)
            fi = {
                "action_mask": fmask,
                "seat": seat[over],
                "banked": banked[over],
                "busts": busts[over],
                "illegal_action": np.zeros(len(over), bool),
                "winners": w,
                "winner": np.where(nw == 1, np.argmax(w, axis=1), -1),
                "won": won,
                "final_scores": e.final_scores[over].astype(np.int64),
                "turns": e.turn[over].astype(np.int64),
                "episode_busts": e.game_busts[over, seat[over]].astype(np.int64),
                "episode_banked": e.game_banked[over, seat[over]].astype(np.int64),
            }
            final_info = {}
            for k, v in fi.items():
                full = np.zeros((B,) + v.shape[1:], v.dtype)
                full[over] = v
                final_info[k] = full
                final_info[f"_{k}"] = terminated.copy()
            infos["final_obs"] = final_obs
            infos["_final_obs"] = terminated.copy()
            infos["final_info"] = final_info
            infos["_final_info"] = terminated.copy()
            self._redeal(over, None)
            # the new game's opening counts in the info, as TenThousandEnv's reset info does
            busts[over] = e.game_busts[over, self.seat[over]]
            banked[over] = e.game_banked[over, self.seat[over]]
        obs = encode_batch(e, self.seat)
        e.legal_mask(out=self._mask)
        infos.update(
            {
                "action_mask": self._mask.astype(np.int8),
                "seat": self.seat.copy(),
                "banked": banked.astype(np.int64),
                "busts": busts.astype(np.int64),
                "illegal_action": ~legal,
            }
        )
        return obs, rewards, terminated, np.zeros(B, bool), self._with_masks(infos)

    def action_masks(self) -> np.ndarray:
        """(num_envs, n_actions) bool: the legal actions now (what MaskablePPO reads)."""
        return self._mask.copy()

    def close_extras(self, **kwargs: Any) -> None:
        # a cmd: opponent's program ends now, not when the env is collected
        close_agents(getattr(self, "_agents", ()))

    def set_opponents(self, opponents: Any = None, pool: Sequence[tuple[Any, float]] | None = None) -> None:
        """Replace the opponents or the pool (e.g. with fresh self-play snapshots). New games
        draw from the new list; games in progress keep their seats' positions in the list,
        played by the new agents there, so the list keeps its length unless reset() follows."""
        self._set_agents(opponents, pool)

    # ------------------------------------------------------------------ internals
    def _set_agents(self, opponents: Any, pool: Sequence[tuple[Any, float]] | None) -> None:
        """Opponents (fixed per seat offset, as TenThousandEnv) or a weighted pool, in their
        batched forms (:func:`tenk_env.registry.make_batched`)."""
        n = self.n_players
        if pool is not None and opponents is not None:
            raise ValueError("give opponents or pool, not both")
        if pool is not None:
            pool = list(pool)
            if not pool or any(len(p) != 2 or p[1] < 0 for p in pool) or sum(p[1] for p in pool) <= 0:
                raise ValueError("pool: give a non-empty list of (agent, weight) with weights >= 0, not all 0")
            agents = [make_batched(a) for a, _ in pool]
            w = np.array([p[1] for p in pool], np.float64)
            pool_p = w / w.sum()
        else:
            opponents = ["dicenow"] if opponents is None else opponents
            if isinstance(opponents, str) or not isinstance(opponents, Sequence):
                opponents = [opponents]
            opponents = list(opponents)
            if len(opponents) == 1:
                opponents = opponents * (n - 1)
            if len(opponents) != n - 1:
                raise ValueError(
                    f"opponents: {len(opponents)} given for {n - 1} other seat(s); give one agent spec "
                    "per other seat, in turn order after the learner, or a single spec for all"
                )
            agents = [make_batched(a) for a in opponents]
            pool_p = None
        for i, a in enumerate(agents):
            try:
                a.check(self.rules, n)
            except ValueError as e:
                raise type(e)(f"opponent {i}: {e}") from None
        if hasattr(self, "_agents") and len(agents) != len(self._agents) and not self._needs_reset:
            raise ValueError(
                f"set_opponents: {len(agents)} agents replace {len(self._agents)}; games in progress "
                "index the old list, so keep its length or call reset() next"
            )
        self._agents, self._pool_p = agents, pool_p

    def _live_engine(self) -> BatchedGame:
        """The engine (built at the first reset)."""
        e = self.engine
        if e is None:
            raise RuntimeError("no games yet: call reset() first")
        return e

    def _with_masks(self, infos: dict[str, Any]) -> dict[str, Any]:
        for k in [k for k in infos if not k.startswith("_") and f"_{k}" not in infos]:
            infos[f"_{k}"] = np.ones(self.num_envs, bool)
        return infos

    def _seat_games(self, ix: np.ndarray, seat: int | None) -> None:
        """Draw the learner's seat and the opponents of the games ``ix`` (new games)."""
        n = self.n_players
        rng = self.np_random
        if seat is None:
            seat = self._fixed_seat
        self.seat[ix] = rng.integers(n, size=len(ix)) if seat is None else seat
        q = np.arange(n)[None, :]
        if self._pool_p is None:
            # seat q plays opponents[(q - seat - 1) % n], as TenThousandEnv
            sa = (q - self.seat[ix, None] - 1) % n
        else:
            sa = rng.choice(len(self._agents), size=(len(ix), n), p=self._pool_p)
        sa[q == self.seat[ix, None]] = -1
        self.seat_agent[ix] = sa

    def _play_opponents(self, cand: np.ndarray) -> None:
        """Opponents' decisions (and the dice) until every game of ``cand`` waits for its learner."""
        e = self._live_engine()
        rng = self.np_random
        acts = self._actions
        while len(cand):
            cand = cand[e.awaiting()[cand] & (e.current[cand] != self.seat[cand])]
            if not len(cand):
                break
            who = self.seat_agent[cand, e.current[cand]]
            for i, agent in enumerate(self._agents):
                g = cand[who == i]
                if len(g):
                    agent.act(e, g, rng, acts)
            e.step(acts, games=cand)

    def _redeal(self, over: np.ndarray, seat: int | None) -> None:
        """New games in the slots ``over``, played up to the learner's first decision (a game
        that ends before it, an opponent's instant win, is dealt again)."""
        e = self._live_engine()
        while len(over):
            e.reset_games(over)
            self._seat_games(over, seat)
            self._play_opponents(over)
            over = over[e.phase[over] == PH_OVER]
