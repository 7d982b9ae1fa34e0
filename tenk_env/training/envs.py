"""The training games: gymnasium envs with an opponent pool, and the VecEnv that steps them.

Two ways to step the games, one pool semantics (every other seat of every game draws its
agent from the weighted pool when the game starts):

* ``vector`` (the default where it imports): the batched engine's SB3 VecEnv
  (:func:`tenk_env.vector.sb3.sb3_vec_env`), opponents decided in batches inside it. The pool
  entry ``self`` is a :class:`LeagueAgent`, a batched agent playing one league snapshot per
  game; :class:`VectorPoolInfo` adds the ``opponent`` label to finished games' infos.
* ``dummy`` / ``subproc``: :class:`PoolEnv` wraps one :class:`~tenk_env.env.TenThousandEnv`
  and, before each reset, seats a fresh draw in every other seat (the env reads its
  ``opponents`` list at every reset). With ``rules_obs``, the env under it is a
  :class:`RulesPoolEnv`: each game draws its ruleset too, and every observation ends with
  the rules observation.

The :class:`League` (the last snapshots of the learner, plus best.zip) is refreshed by
the trainer every ``selfplay.snapshot_every`` steps. :class:`ShapedVecEnv` adds
potential-based reward shaping on top of either.

:class:`FastDummyVecEnv` is SB3's DummyVecEnv without its per-step ``deepcopy`` of the info
dicts: the env builds fresh dicts every step, so nothing is shared, and the copy cost about
15% of a training step.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecEnvWrapper

from tenk_env.env import TenThousandEnv
from tenk_env.obs import n_actions
from tenk_env.policies.base import make_agent
from tenk_env.policies.batched import BatchedPPO
from tenk_env.policies.ppo import PPOAgent
from tenk_env.rules import Ruleset
from tenk_env.rules_obs import rules_obs, with_rules_space
from tenk_env.training.config import SELF, TrainConfig
from tenk_env.vector.sb3 import sb3_vec_env

__all__ = [
    "League",
    "PoolEnv",
    "RulesPoolEnv",
    "FastDummyVecEnv",
    "ShapedVecEnv",
    "make_vec_env",
    "vector_backend_available",
]


class League:
    """Frozen snapshots of the learner (``ppo`` checkpoints by path), shared by the envs of
    one process. ``sync(paths)`` loads what is new and forgets what left; a file rewritten
    in place (``best.zip`` when the learner improves) counts as new."""

    def __init__(self, rules: Ruleset | None = None, n_players: int = 2):
        self.paths: list[str] = []
        self.agents: list[Any] = []
        self._keys: list[tuple] = []
        self._cache: dict[tuple, Any] = {}
        self._rules, self._n = rules, n_players

    def sync(self, paths: Sequence[str | Path]) -> None:
        paths = [str(p) for p in paths]
        keys = []
        for p in paths:
            st = Path(p).stat()
            keys.append((p, st.st_mtime_ns, st.st_size))
        if keys == self._keys:
            return
        cache = {}
        for k in keys:
            a = self._cache.get(k)
            if a is None:
                a = PPOAgent.load(k[0], name=f"self:{Path(k[0]).stem}")
                if self._rules is not None:
                    a.check(self._rules, self._n)
            cache[k] = a
        self._cache, self._keys, self.paths = cache, keys, paths
        self.agents = [cache[k] for k in keys]

    def sample(self, rng: np.random.Generator):
        if not self.agents:
            return None
        return self.agents[int(rng.integers(len(self.agents)))]


class RulesPoolEnv(gym.Env):
    """Ten Thousand with the ruleset drawn per game from ``rulesets``, the rules observation
    appended to every observation.

    Each game is played by a :class:`~tenk_env.env.TenThousandEnv` of its ruleset (built when
    the ruleset is first drawn, kept after), so spaces, rewards, infos and masks are that
    env's (see its docstring), except:

    ## Observation Space
    ``Box(0, high, (56 + 5 * n_players + 33,), float32)``: the env's observation, then the
    rules observation of the game's ruleset (:mod:`tenk_env.rules_obs`), as
    :class:`~tenk_env.rules_obs.RulesObservation` lays it out.

    ## Starting State
    A ruleset drawn uniformly from ``rulesets`` (by this env's seeded generator), then that
    env's starting state. ``info["rules"]`` names the ruleset at every reset. The
    ``opponents`` attribute (agent objects, one per other seat) is handed to the game's env
    at every reset, as :class:`PoolEnv` sets it.

    ## Arguments
    ``rulesets`` (a non-empty list of :class:`~tenk_env.rules.Ruleset` with the same action
    count), ``n_players``, ``seed`` (the ruleset draws and every inner env's dice), and the
    keyword arguments of :class:`~tenk_env.env.TenThousandEnv` but ``rules`` and ``opponents``.
    """

    metadata = TenThousandEnv.metadata

    def __init__(self, rulesets: Sequence[Ruleset], n_players: int = 2, seed: int = 0, **env_kwargs: Any):
        if not rulesets:
            raise ValueError("rulesets is empty: give at least one ruleset to draw games from")
        if len({n_actions(r) for r in rulesets}) > 1:
            raise ValueError(
                "rulesets differ in their action count (piggyback adds two actions): one policy "
                "needs one action space; draw from rulesets that all have piggyback, or none"
            )
        self.rulesets = list(rulesets)
        self.n_players = n_players
        self._kwargs = env_kwargs
        self._envs: dict[int, TenThousandEnv] = {}
        self._seeds = np.random.default_rng([seed, 0])
        self._draw = np.random.default_rng([seed, 1])
        first = self._env(0)
        self.opponents: list[Any] = list(first.opponents)
        self.action_space = first.action_space
        self.observation_space = with_rules_space(first.observation_space)
        self.env: TenThousandEnv = first
        self._seeded: set[int] = set()
        self._rules_obs = rules_obs(self.rulesets[0])

    def _env(self, i: int) -> TenThousandEnv:
        env = self._envs.get(i)
        if env is None:
            env = self._envs[i] = TenThousandEnv(
                rules=self.rulesets[i], n_players=self.n_players, opponents=["random"], **self._kwargs
            )
        return env

    @property
    def rules(self) -> Ruleset:
        """The current game's ruleset."""
        return self.env.rules

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._seeds, self._draw = np.random.default_rng([seed, 0]), np.random.default_rng([seed, 1])
            self._seeded = set()
        i = int(self._draw.integers(len(self.rulesets)))
        self.env = env = self._env(i)
        env.opponents = self.opponents
        self._rules_obs = rules_obs(env.rules)
        # a game env is seeded when first drawn after a seeded reset (or ever), then its dice stream runs on
        inner = None if i in self._seeded else int(self._seeds.integers(2**63))
        self._seeded.add(i)
        obs, info = env.reset(seed=inner, options=options)
        info["rules"] = env.rules.name
        return np.concatenate([obs, self._rules_obs]), info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return np.concatenate([obs, self._rules_obs]), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.action_masks()


class PoolEnv(gym.Wrapper):
    """A TenThousandEnv whose opponents are drawn from a weighted pool every game.

    Every other seat draws independently. ``info`` at the end of a game gains
    ``opponent`` (the pool entry of the first other seat; ``self`` for a snapshot).
    """

    def __init__(self, env: TenThousandEnv, pool: Sequence[tuple[str, float]], league: League, seed: int):
        super().__init__(env)
        self._labels = [s for s, _ in pool]
        self._probs = np.array([w for _, w in pool], dtype=np.float64)
        self._probs /= self._probs.sum()
        self._agents = [None if s == SELF else make_agent(s) for s in self._labels]
        self._fallback = make_agent("random")
        self.league = league
        self._rng = np.random.default_rng(seed)
        self._current = ""

    def _draw(self) -> tuple[list[Any], str]:
        base = self.env.unwrapped
        picks = self._rng.choice(len(self._labels), size=base.n_players - 1, p=self._probs)
        agents = []
        for i in picks:
            a = self._agents[i]
            if a is None:
                # before the first snapshot exists (never, once training has started)
                a = self.league.sample(self._rng) or self._fallback
            agents.append(a)
        return agents, self._labels[picks[0]]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        agents, self._current = self._draw()
        self.env.unwrapped.opponents = agents
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            info["opponent"] = self._current
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()

    def sync_league(self, paths: Sequence[str]) -> None:
        self.league.sync(paths)


class FastDummyVecEnv(DummyVecEnv):
    """DummyVecEnv without the per-step deepcopy of infos, and a direct ``action_masks``."""

    def step_wait(self):
        envs, acts = self.envs, self.actions
        for i in range(self.num_envs):
            obs, rew, terminated, truncated, info = envs[i].step(acts[i])
            self.buf_rews[i] = rew
            done = terminated or truncated
            self.buf_dones[i] = done
            info["TimeLimit.truncated"] = truncated and not terminated
            if done:
                info["terminal_observation"] = obs
                obs, self.reset_infos[i] = envs[i].reset()
            self.buf_infos[i] = info
            self.buf_obs[None][i] = obs
        return self._obs_from_buf(), np.copy(self.buf_rews), np.copy(self.buf_dones), list(self.buf_infos)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "action_masks" and indices is None:
            return [e.action_masks() for e in self.envs]
        return super().env_method(method_name, *method_args, indices=indices, **method_kwargs)


class ShapedVecEnv(VecEnvWrapper):
    """Potential-based reward shaping, the potential read from the observations.

    Each step's reward gains ``coef * (Phi(s') - Phi(s))``, with ``Phi = 0`` at the end of
    a game. Over a game the bonuses add up to ``-coef * Phi(s0)`` whatever the learner
    does, so the best policy is the same as under the plain win reward (Ng, Harada &
    Russell 1999); what changes is how soon credit reaches a decision. The potential,
    ``margin``, is (own score - best other score) / target: banked points pay at once and
    the opponents' banks cost at once, under any ruleset and player count. (A potential
    read off the exact game solution is not offered: the solver measures learned agents
    and never feeds their training.)
    """

    def __init__(self, venv: VecEnv, coef: float, n_players: int):
        super().__init__(venv)
        self.coef = float(coef)
        self._others = [56 + 5 * k for k in range(1, n_players)]
        self._last = np.zeros(venv.num_envs, dtype=np.float64)

    def _potential(self, obs: np.ndarray) -> np.ndarray:
        return obs[:, 56] - obs[:, self._others].max(axis=1)

    def reset(self):
        obs = self.venv.reset()
        self._last = self._potential(obs)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        phi = self._potential(obs)
        # after a game ends `obs` is already the next game's first observation: the ended
        # game's last potential is 0, and the next step starts from the new game's. Both
        # ends use today's coefficient, so annealing it never pays for the change itself.
        rewards = rewards + self.coef * (np.where(dones, 0.0, phi) - self._last)
        self._last = phi
        return obs, rewards.astype(np.float32), dones, infos


def _env_factory(cfg: TrainConfig, i: int, seed: int, league: League | None):
    def make():
        kw = dict(seat=cfg.env.seat, reward=cfg.env.reward, tie_reward=cfg.env.tie_reward)
        if cfg.rules_obs:
            env = RulesPoolEnv(cfg.rulesets, cfg.n_players, seed=seed + 7919 * (i + 1), **kw)
        else:
            env = TenThousandEnv(rules=cfg.ruleset, n_players=cfg.n_players, opponents=["random"], **kw)
        # a subprocess builds its own league; in-process envs share one
        return PoolEnv(
            env,
            cfg.pool,
            league if league is not None else League(cfg.ruleset, cfg.n_players),
            seed=seed + 7919 * (i + 1),
        )

    return make


def vector_backend_available(cfg: TrainConfig | None = None) -> tuple[bool, str]:
    """Whether the batched engine's VecEnv can run (and why not): always, since it needs
    nothing beyond the package's dependencies (numba among them)."""
    return True, ""


class LeagueAgent:
    """The pool's ``self`` entry on the batched engine: a batched agent that plays, in each
    game, one snapshot drawn from the league when it first moves in that game.

    A new game in a slot is recognised by its turn counter going back down; the vector env
    draws its pool entries per game the same way, so both stay per game."""

    name = SELF

    def __init__(self, league: League):
        self.league = league
        self._pick = np.zeros(0, np.int64)
        self._turn = np.zeros(0, np.int64)
        self._batched: dict[int, Any] = {}

    def check(self, rules: Ruleset, n_players: int) -> None:
        pass

    def act(self, engine, games: np.ndarray, rng: np.random.Generator, out: np.ndarray) -> None:
        agents = self.league.agents or [None]
        if len(self._pick) != engine.batch_size:
            self._pick = np.full(engine.batch_size, -1, np.int64)
            self._turn = np.zeros(engine.batch_size, np.int64)
        turn = engine.turn[games].astype(np.int64)
        new = (self._pick[games] < 0) | (self._pick[games] >= len(agents)) | (turn < self._turn[games])
        if new.any():
            self._pick[games[new]] = rng.integers(len(agents), size=int(new.sum()))
        self._turn[games] = turn
        pick = self._pick[games]
        for k in np.unique(pick):
            sub = games[pick == k]
            a = agents[int(k)]
            if a is None:  # no snapshot yet (never once training has started)
                engine.random_actions(rng, out, games=sub)
                continue
            b = self._batched.get(id(a))
            if b is None or b.scalar is not a:
                b = self._batched[id(a)] = BatchedPPO(a)
            b.act(engine, sub, rng, out)


class VectorPoolInfo(VecEnvWrapper):
    """On the batched VecEnv: ``info["opponent"]`` (the pool entry in the seat after the
    learner's) when a game ends, as :class:`PoolEnv` gives it, and ``sync_league``."""

    def __init__(self, venv: VecEnv, labels: Sequence[str], league: League):
        super().__init__(venv)
        self.labels = list(labels)
        self.league = league
        self.raw = venv.venv  # the TenThousandVectorEnv under the SB3 face
        self._sa = self.raw.seat_agent.copy()
        self._seat = self.raw.seat.copy()

    def reset(self):
        return self.venv.reset()

    def step_async(self, actions) -> None:
        # who sat where in the games now running: by step_wait a finished game is re-dealt
        self._sa = self.raw.seat_agent.copy()
        self._seat = self.raw.seat.copy()
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rew, dones, infos = self.venv.step_wait()
        n = self.raw.n_players
        for b in np.flatnonzero(dones):
            k = self._sa[b, (self._seat[b] + 1) % n]
            infos[b]["opponent"] = self.labels[k] if k >= 0 else "?"
        return obs, rew, dones, infos

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        if method_name == "sync_league":
            self.league.sync(*method_args, **method_kwargs)
            return [None] * self.num_envs
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)


def _vector_env(cfg: TrainConfig, seed: int) -> VecEnv:
    league = League(cfg.ruleset, cfg.n_players)
    pool = [(LeagueAgent(league) if spec == SELF else spec, w) for spec, w in cfg.pool]
    venv = sb3_vec_env(
        cfg.env.n_envs,
        cfg.ruleset,
        cfg.n_players,
        pool=pool,
        seat=cfg.env.seat,
        reward=cfg.env.reward,
        tie_reward=cfg.env.tie_reward,
    )
    return VectorPoolInfo(venv, [s for s, _ in cfg.pool], league)


def make_vec_env(cfg: TrainConfig, seed: int) -> tuple[VecEnv, str]:
    """The training VecEnv for ``cfg`` and the backend name it uses."""
    backend = cfg.env.backend
    if cfg.rules_obs and backend == "auto":
        backend = "dummy"  # the batched engine steps one ruleset, without the rules observation
    if backend in ("auto", "vector"):
        ok, why = vector_backend_available(cfg)
        if ok:
            backend = "vector"
        elif backend == "vector":
            raise ValueError(f"env.backend = vector: {why}; use env.backend=dummy (or auto)")
        else:
            backend = "dummy"
    if backend == "vector":
        venv = _vector_env(cfg, seed)
    elif backend == "subproc":
        fns = [_env_factory(cfg, i, seed, None) for i in range(cfg.env.n_envs)]
        venv = SubprocVecEnv(fns, start_method="forkserver")
    else:
        league = League(cfg.ruleset, cfg.n_players)
        venv = FastDummyVecEnv([_env_factory(cfg, i, seed, league) for i in range(cfg.env.n_envs)])
    venv.seed(seed)
    if cfg.env.shaping or cfg.env.shaping_end:
        venv = ShapedVecEnv(venv, cfg.env.shaping, cfg.n_players)
    return venv, backend
