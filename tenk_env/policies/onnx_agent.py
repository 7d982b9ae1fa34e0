"""``onnx:PATH``: a policy network from any framework, as an ONNX model, played as an agent.

The model maps the observation to one logit per action; the agent plays the highest-logit
legal action, as ``ppo:`` agents do, and shares their batched form (one forward pass for
all the games of the batched engine).

The model's contract:

- **Input** ``obs`` (the first input, whatever its name): float32 ``(batch, obs_size)``, the
  observation of :mod:`tenk_env.obs` (``56 + 5 * n_players`` values, documented there index
  by index).
- **Input** ``mask`` (optional: fed only when the model declares an input of that name):
  float32 ``(batch, n_actions)``, 1 for the legal actions.
- **Output**: the first output, float32 ``(batch, n_actions)``: logits (or any scores; only
  their order among the legal actions matters). Actions are those of the environments'
  ``Discrete(n_actions)`` space: keep mask ``m`` rolls on as ``m``, banks as ``m | 64``,
  128/129 take or refuse a piggyback. Each logit is a finite number or -inf (an action the
  model never plays); a NaN or +inf logit, or -inf for every legal action, stops the game
  with an :class:`~tenk_env.policies.base.AgentError` naming the model.
- **Metadata** (optional): the model property ``tenk_meta``, the JSON that ``tenk train``
  checkpoints carry (ruleset, player count, observation version, action count). With it the
  agent refuses, naming both sides, a game it was not trained for, as a checkpoint does; a
  property missing one of those keys is refused, naming the key.
  Without it the agent plays any game whose observation and action sizes fit the model.

:func:`tenk_env.policies.onnx_export.export_actor` writes the ONNX model of a ``tenk train`` PPO actor (both policy heads,
the keep-aware one with its scoring-table features as constant tables), which is what
``tenk zoo export NAME --onnx`` runs; its logits equal the NumPy forward pass to 1e-5
(``tests/policies/test_onnx_agent.py``). The runtime is onnxruntime on the CPU with one thread per
session: match workers are one process per core.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS
from tenk_env.obs import n_actions, obs_size
from tenk_env.policies.base import AgentError
from tenk_env.policies.ppo import PPOAgent, check_meta
from tenk_env.rules import Ruleset
from tenk_env.rules_obs import reads_rules

__all__ = ["OnnxAgent", "OnnxActor", "make_onnx", "META_KEY"]

#: the model property holding the agent's metadata (a ``tenk train`` checkpoint's JSON)
META_KEY = "tenk_meta"


class OnnxActor:
    """An ONNX model as a forward pass: observations (and masks) -> logits."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        where = f"ONNX model {str(self.path)!r}"
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3  # errors only: warnings about unused initializers are not the user's
        try:
            self.session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime raises its own types: say which file and why
            raise AgentError(
                f"{where} cannot be loaded ({type(e).__name__}: {_first_line(e)}): give a model "
                "file written by an ONNX exporter (torch.onnx, tf2onnx, jax2onnx, tenk zoo export)"
            ) from None
        ins, outs = self.session.get_inputs(), self.session.get_outputs()
        if not ins or not outs:
            raise AgentError(f"{where} has no inputs or no outputs: it must take the observation and give logits")
        self.obs_name = ins[0].name
        names = [i.name for i in ins]
        self.mask_name = "mask" if "mask" in names[1:] else None
        extra = [n for n in names[1:] if n != self.mask_name]
        if extra:
            raise AgentError(
                f"{where} wants inputs {extra} besides the observation {self.obs_name!r}: the agent "
                "feeds only the observation and, if declared, 'mask'"
            )
        self.out_name = outs[0].name
        self.obs_dim = _static(ins[0].shape, 1)
        self.n_out = _static(outs[0].shape, 1)
        raw = self.session.get_modelmeta().custom_metadata_map.get(META_KEY)
        try:
            self.meta = json.loads(raw) if raw else None
        except json.JSONDecodeError as e:
            raise AgentError(f"{where}: its {META_KEY!r} property is not JSON ({e}): export it again") from None

    def __reduce__(self):
        # a session does not pickle: worker processes open the same file again
        return (OnnxActor, (self.path,))

    def logits(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        feed = {self.obs_name: np.ascontiguousarray(obs, dtype=np.float32)}
        if self.mask_name is not None:
            if mask is None:
                raise AgentError(f"ONNX model {str(self.path)!r} needs the legal mask with the observation")
            feed[self.mask_name] = np.ascontiguousarray(mask, dtype=np.float32)
        try:
            out = self.session.run([self.out_name], feed)[0]
        except Exception as e:  # noqa: BLE001 - a model that fails on valid input: name it
            raise AgentError(
                f"ONNX model {str(self.path)!r} failed on an observation of shape {obs.shape} "
                f"({type(e).__name__}: {_first_line(e)})"
            ) from None
        if out.ndim != 2 or out.shape[0] != obs.shape[0]:
            raise AgentError(
                f"ONNX model {str(self.path)!r} gave an output of shape {out.shape}; "
                f"one row of logits per observation ({obs.shape[0]}) is wanted"
            )
        if mask is not None and out.shape[1] < mask.shape[1]:
            raise AgentError(
                f"ONNX model {str(self.path)!r} gave {out.shape[1]} logits; this game has {mask.shape[1]} actions"
            )
        self._check_logits(out, mask)
        return out

    def _check_logits(self, out: np.ndarray, mask: np.ndarray | None) -> None:
        """Refuse logits that cannot rank the moves: the argmax of a NaN row is its first NaN,
        of +inf its first +inf, and of a row whose legal logits are all -inf an action that may be
        illegal, so a broken model would play (or be blamed for) moves it never chose.
        -inf itself is a score: it marks an action the model never plays."""
        A = mask.shape[1] if mask is not None else out.shape[1]
        head = out[:, :A]
        finite = np.isfinite(head)
        rows = f" of {len(head)} observations" if len(head) > 1 else ""
        where = f"ONNX model {str(self.path)!r}"
        if not finite.all():
            for what, bad in (("NaN", np.isnan(head)), ("+inf", head == np.inf)):
                if bad.any():
                    r = int(np.flatnonzero(bad.any(axis=1))[0])
                    at = f" of observation {r}{rows}" if rows else ""
                    raise AgentError(
                        f"{where} returned {what} logits for {int(bad[r].sum())} of {A} actions{at} "
                        f"(first at action {int(np.argmax(bad[r]))}): logits must be finite numbers or "
                        "-inf; the model is broken: check its export"
                    )
        if mask is not None:
            legal = np.asarray(mask) > 0
            dead = legal.any(axis=1) & ~(finite & legal).any(axis=1)
            if dead.any():
                r = int(np.flatnonzero(dead)[0])
                at = f" of observation {r}{rows}" if rows else ""
                raise AgentError(
                    f"{where} returned -inf logits for all {int(legal[r].sum())} legal actions{at} "
                    f"(first at action {int(np.argmax(legal[r]))}): it rules out every legal move; "
                    "the model is broken: check its export"
                )


def _first_line(e: BaseException, limit: int = 160) -> str:
    s = str(e).strip().splitlines()
    return (s[0] if s else "")[:limit]


def _static(shape: list, axis: int) -> int | None:
    d = shape[axis] if len(shape) > axis else None
    return d if isinstance(d, int) else None


def _check_meta_keys(meta: Any, actor: OnnxActor, name: str) -> None:
    """Refuse, naming the key, a ``tenk_meta`` property that lacks what playing the model reads
    (the player and action counts; the ruleset or the rules observation it was trained for)."""
    where = f"agent {name!r}: its {META_KEY!r} property"
    fix = "export the model again (tenk zoo export NAME --onnx), or drop the property to play it by its sizes"
    if not isinstance(meta, dict):
        raise AgentError(f"{where} holds a JSON {type(meta).__name__}, not an object: {fix}")
    want: dict[str, type] = {"n_players": int, "n_actions": int}
    if reads_rules(meta):
        want.update(rules_obs=int, obs_version=int)
    elif "ruleset" in meta:
        want.update(ruleset_name=str, ruleset_hash=str, obs_version=int)
    for key, kind in want.items():
        if key not in meta:
            raise AgentError(f"{where} has no {key!r}: {fix}")
        v = meta[key]
        if not isinstance(v, kind) or isinstance(v, bool):
            what = "a whole number" if kind is int else "a string"
            raise AgentError(f"{where} has {key} = {json.dumps(v)}, not {what}: {fix}")
    if not MIN_PLAYERS <= meta["n_players"] <= MAX_PLAYERS:
        raise AgentError(
            f"{where} has n_players = {meta['n_players']}; tenk plays {MIN_PLAYERS} to {MAX_PLAYERS}: {fix}"
        )
    if meta["n_actions"] < 1:
        raise AgentError(f"{where} has n_actions = {meta['n_actions']}; a model scores at least one action: {fix}")
    if actor.n_out is not None and actor.n_out < meta["n_actions"]:
        raise AgentError(
            f"{where} has n_actions = {meta['n_actions']}, but the model gives {actor.n_out} logits: {fix}"
        )


class OnnxAgent(PPOAgent):
    """An :class:`OnnxActor` playing greedily among the legal actions (``onnx:PATH``)."""

    def __init__(self, actor: OnnxActor, name: str):
        meta = actor.meta
        if meta is not None:
            _check_meta_keys(meta, actor, name)
        else:
            # no tenk metadata: the sizes say what it plays (the observation grows 5 per player)
            if actor.obs_dim is None or (actor.obs_dim - obs_size(0)) % 5 or actor.obs_dim <= obs_size(1):
                raise AgentError(
                    f"agent {name!r}: the model's observation size {actor.obs_dim} is none of tenk's "
                    f"(56 + 5 * players); give the model a static size, or its {META_KEY!r} property"
                )
            meta = {"n_players": (actor.obs_dim - obs_size(0)) // 5, "n_actions": actor.n_out or 0}
        super().__init__(actor, meta, name)

    def check(self, rules: Ruleset, n_players: int) -> None:
        if "ruleset" in self.meta or "rules_obs" in self.meta:
            check_meta(self.meta, rules, n_players, where=f"agent {self.name!r}")
            return
        want_obs, want_act = obs_size(n_players), n_actions(rules)
        if self._actor.obs_dim != want_obs or self._actor.n_out not in (None, want_act):
            raise AgentError(
                f"agent {self.name!r} takes observations of {self._actor.obs_dim} values and gives "
                f"{self._actor.n_out} logits; {rules.name!r} at {n_players} players has {want_obs} and "
                f"{want_act}: export it for this game"
            )

    def logits(self, obs: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        return self._actor.logits(np.asarray(obs, dtype=np.float32), masks)

    def __repr__(self) -> str:
        return f"OnnxAgent({self.name!r}: {self.n_players} players)"


def make_onnx(arg: str | None) -> OnnxAgent:
    if not arg:
        raise AgentError("agent 'onnx' needs a model file: onnx:PATH.onnx (tenk zoo export NAME --onnx writes one)")
    path = Path(arg)
    if not path.is_file():
        raise AgentError(
            f"agent 'onnx:{arg}': no such file" + (" (a directory: give the .onnx file in it)" if path.is_dir() else "")
        )
    return OnnxAgent(OnnxActor(path), f"onnx:{arg}")
