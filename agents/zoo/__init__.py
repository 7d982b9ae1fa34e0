"""The zoo: trained agents shipped with the package, loadable by name (``zoo:NAME``).

Each entry is a folder ``agents/zoo/NAME/`` with

* ``weights.npz``: for a PPO agent the actor of the policy only (the layers that turn an
  observation into action logits; no value network, no optimizer state); for an afterstate
  agent (:mod:`agents.afterstate`) its value net. An entry stays far below 1 MB and loads
  without torch;
* ``agent.yaml``: what the agent plays (the checkpoint's metadata: ruleset and its hash,
  player count, observation version, policy head), how it was trained (``command``,
  ``config``, steps, the checkpoint's sha256) and its measured strength, each figure with
  the command that produced it.

:func:`export` makes an entry from a ``tenk train`` checkpoint (``tenk zoo add``);
:func:`load` plays it (the agent spec ``zoo:NAME``); :func:`entries` lists them
(``tenk zoo``). A zoo agent refuses a game it was not trained for, as a checkpoint does.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import yaml

from agents.afterstate import FORMAT as AFTERSTATE_FORMAT
from agents.afterstate import AfterstateAgent, read_checkpoint
from agents.base import ZOO_DIR
from agents.ppo import CheckpointError, PPOAgent, _Actor, read_meta, read_weights
from tenk_env.io import atomic_write_bytes, atomic_write_text, file_sha256
from tenk_env.registry import AgentError
from tenk_env.rules import did_you_mean

__all__ = ["ZOO_DIR", "ZooEntry", "entries", "load", "export", "make_zoo"]

#: the parts of an SB3 policy's state dict that the actor reads (see agents.ppo._Actor)
_ACTOR_KEYS = ("mlp_extractor.policy_net.", "action_net.")


@dataclass(frozen=True)
class ZooEntry:
    name: str
    path: Path
    card: dict[str, Any]

    @property
    def meta(self) -> dict[str, Any]:
        return self.card["meta"]

    @property
    def afterstate(self) -> bool:
        return self.meta.get("format") == AFTERSTATE_FORMAT

    def summary(self) -> str:
        m = self.meta
        if self.afterstate:
            return (f"{m['ruleset_name']}, {m['n_players']} players, afterstate value net {m['hidden']} + turn "
                    f"expectimax, {m.get('turns', 0):,} learner turns")
        return (f"{m['ruleset_name']}, {m['n_players']} players, {m.get('policy', 'mlp')} head, "
                f"{m.get('num_timesteps', 0):,} steps")


def _entry(path: Path) -> ZooEntry:
    card_path = path / "agent.yaml"
    try:
        card = yaml.safe_load(card_path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise AgentError(f"zoo entry {path.name!r}: cannot read {card_path}: {e}") from None
    if not isinstance(card, dict) or not isinstance(card.get("meta"), dict):
        raise AgentError(f"zoo entry {path.name!r}: {card_path} has no 'meta' mapping (the checkpoint's metadata)")
    return ZooEntry(path.name, path, card)


def entries(root: Path = ZOO_DIR) -> list[ZooEntry]:
    """Every entry of the zoo, by name."""
    return [_entry(p) for p in sorted(root.iterdir()) if (p / "agent.yaml").is_file()]


def load(name: str, root: Path = ZOO_DIR) -> "PPOAgent | AfterstateAgent":
    """The zoo agent ``name`` (deterministic: PPO agents play greedily)."""
    names = [e.name for e in entries(root)]
    if name not in names:
        raise AgentError(f"no zoo agent {name!r}{did_you_mean(name, names)}; the zoo has: "
                         f"{', '.join(names) or '(nothing)'} (tenk zoo lists them)")
    e = _entry(root / name)
    with np.load(e.path / "weights.npz") as z:
        sd = {k: z[k] for k in z.files}
    if e.afterstate:
        return AfterstateAgent.from_weights(sd, e.meta, f"zoo:{name}")
    return PPOAgent(_Actor.from_state_dict(sd, e.meta, f"zoo agent {name!r}"), e.meta, f"zoo:{name}")


def make_zoo(arg: str | None) -> "PPOAgent | AfterstateAgent":
    """The ``zoo:NAME`` agent spec."""
    if not arg:
        names = ", ".join(e.name for e in entries()) or "(nothing)"
        raise AgentError(f"agent 'zoo' needs a name, e.g. zoo:{names.split(', ')[0]}; the zoo has: {names}")
    return load(arg)


def export(checkpoint: str | Path, name: str, *, command: str, notes: str = "",
           strength: Mapping[str, Any] | None = None, root: Path = ZOO_DIR, force: bool = False) -> Path:
    """Make the zoo entry ``name`` from a ``tenk train`` checkpoint (PPO .zip or afterstate
    .npz): the weights that play and a card saying what it plays, how it was made and how
    strong it is."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise AgentError(f"zoo name {name!r}: use letters, digits, '-' and '_'")
    checkpoint = Path(checkpoint)
    if checkpoint.suffix == ".npz":  # an afterstate checkpoint: the value net is the whole agent
        actor, meta = read_checkpoint(checkpoint)
        AfterstateAgent.from_weights(actor, meta, f"checkpoint {str(checkpoint)!r}")  # refuses a net that does not fit
    else:
        meta = read_meta(checkpoint)
        sd = read_weights(checkpoint)
        actor = {k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)).astype(np.float32)
                 for k, v in sd.items() if k.startswith(_ACTOR_KEYS)}
        if not actor:
            raise CheckpointError(f"checkpoint {str(checkpoint)!r}: no actor weights ({', '.join(_ACTOR_KEYS)}...)")
        _Actor.from_state_dict(actor, meta, f"checkpoint {str(checkpoint)!r}")  # refuses what it cannot play
    out = root / name
    if out.exists() and not force:
        raise AgentError(f"zoo entry {name!r} exists ({out}); pick another name or replace it with --force")
    out.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    np.savez_compressed(buf, **actor)
    atomic_write_bytes(out / "weights.npz", buf.getvalue())
    card = {"name": name, "notes": notes, "command": command,
            "checkpoint": {"file": checkpoint.name, "sha256": file_sha256(checkpoint)},
            "strength": dict(strength or {}), "meta": meta}
    atomic_write_text(out / "agent.yaml", yaml.safe_dump(card, sort_keys=False, width=100))
    return out
