"""Stable-Baselines3 face of the vector env: :func:`sb3_vec_env`.

An SB3 ``VecEnv`` over :class:`~tenk_env.vector.envs.TenThousandVectorEnv`, which
sb3-contrib's ``MaskablePPO`` takes directly. stable-baselines3 (and torch) is imported
when the first one is made, never by importing this module (``tenk_env`` does not import
torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tenk_env.rules import Ruleset
from tenk_env.vector.envs import TenThousandVectorEnv

__all__ = ["sb3_vec_env"]


def sb3_vec_env(num_envs: int = 256, rules: Ruleset | str = "classic", n_players: int = 2, **kwargs: Any):
    """An SB3 ``VecEnv`` over :class:`tenk_env.vector.envs.TenThousandVectorEnv` (same
    arguments), which sb3-contrib's ``MaskablePPO`` takes directly::

        from sb3_contrib import MaskablePPO
        from tenk_env.vector.sb3 import sb3_vec_env
        venv = sb3_vec_env(1024, "classic", opponents="dicenow")
        MaskablePPO("MlpPolicy", venv).learn(1_000_000)

    ``infos`` follow SB3: one dict per env, ``terminal_observation`` (and the finished
    game's ``winners``, ``won``, ``final_scores``...) when a game ended; the observation
    returned is then already the next game's. Imports stable-baselines3 (and torch) on call.
    """
    return _sb3_class()(TenThousandVectorEnv(num_envs, rules, n_players, **kwargs))


_SB3_CLASS: list[type] = []


def _sb3_class() -> type:
    if _SB3_CLASS:
        return _SB3_CLASS[0]
    from stable_baselines3.common.vec_env import VecEnv

    class TenThousandSB3VecEnv(VecEnv):
        """SB3 VecEnv face of a TenThousandVectorEnv (see :func:`sb3_vec_env`)."""

        def __init__(self, venv: Any):
            self.venv = venv
            super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
            self._actions: np.ndarray | None = None

        def reset(self) -> np.ndarray:
            seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
            opts = self._options[0] if self._options and self._options[0] else None
            obs, _ = self.venv.reset(seed=seed, options=opts)
            self._reset_seeds()
            self._reset_options()
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions = np.asarray(actions).reshape(self.num_envs).astype(np.int64)

        def step_wait(self):
            obs, rew, term, trunc, info = self.venv.step(self._actions)
            dones = term | trunc
            infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if dones.any():
                fin = info["final_info"]
                keys = [k for k in fin if not k.startswith("_")]
                for b in np.flatnonzero(dones):
                    d = infos[b]
                    d["terminal_observation"] = info["final_obs"][b]
                    d["TimeLimit.truncated"] = bool(trunc[b] and not term[b])
                    for k in keys:
                        v = fin[k][b]
                        d[k] = v.tolist() if k == "winners" else v
                    d["winners"] = [q for q, w in enumerate(d["winners"]) if w]
            return obs, rew.astype(np.float32), dones, infos

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks()

        def close(self) -> None:
            self.venv.close()

        def _idx(self, indices) -> list[int]:
            if indices is None:
                return list(range(self.num_envs))
            if isinstance(indices, int):
                return [indices]
            return list(indices)

        def get_attr(self, attr_name: str, indices=None) -> list[Any]:
            if attr_name == "action_masks":  # what sb3-contrib's is_masking_supported asks
                return [self.action_masks for _ in self._idx(indices)]
            value = getattr(self.venv, attr_name)
            return [value for _ in self._idx(indices)]

        def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
            setattr(self.venv, attr_name, value)

        def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
            idx = self._idx(indices)
            if method_name == "action_masks":  # one row per env, as get_action_masks stacks them
                m = self.venv.action_masks()
                return [m[i] for i in idx]
            out = getattr(self.venv, method_name)(*method_args, **method_kwargs)
            return [out for _ in idx]

        def env_is_wrapped(self, wrapper_class: type, indices=None) -> list[bool]:
            return [False for _ in self._idx(indices)]

        def has_attr(self, attr_name: str) -> bool:
            return attr_name == "action_masks" or hasattr(self.venv, attr_name)

    _SB3_CLASS.append(TenThousandSB3VecEnv)
    return TenThousandSB3VecEnv
