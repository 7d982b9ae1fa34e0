"""The zoo: trained agents shipped with the package, loadable by name (``zoo:NAME``).

Each entry is a folder ``agents/NAME/`` with

* ``weights.npz``: for a PPO agent the actor of the policy only (the layers that turn an
  observation into action logits; no value network, no optimizer state); for an afterstate
  agent (:mod:`tenk_env.policies.afterstate`) its value net. An entry stays far below 1 MB and loads
  without torch;
* ``agent.yaml``: what the agent plays (the checkpoint's metadata: ruleset and its hash, or
  for an agent that reads the rules, the rules observation's version and what it was
  trained on; player count, observation version, policy head), the sha256 of its ``weights.npz``
  (``weights_sha256``), how it was trained (``command``, ``config``, steps, the
  checkpoint's sha256) and its measured strength, each figure with the command that
  produced it.

:func:`export` makes an entry from a ``tenk train`` checkpoint (``tenk zoo add``);
:func:`load` plays it (the agent spec ``zoo:NAME``); :func:`entries` lists them
(``tenk zoo``). A zoo agent refuses a game it was not trained for, as a checkpoint does.

Entries are verified whenever they are read: the card's keys and their types, its ruleset
against its recorded hash, and the weights against the card's sha256 (an entry whose
weights were replaced by another agent's would otherwise play under the wrong card). A
broken entry raises :class:`ZooError` naming the entry, the file and the key; :func:`scan`
and the listing name it and go on with the others.

The zoo's folder is :data:`tenk_env.policies.base.ZOO_DIR`, read when each function runs (the
tournament keys zoo agents by the weights found there too); every function also takes
``root`` to read another folder.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tenk_env.io import atomic_write_bytes, atomic_write_text, file_sha256
from tenk_env.policies import base
from tenk_env.policies.afterstate import FORMAT as AFTERSTATE_FORMAT
from tenk_env.policies.afterstate import AfterstateAgent, read_checkpoint
from tenk_env.policies.base import ZOO_DIR
from tenk_env.policies.ppo import META_FORMAT, CheckpointError, NumpyActor, PPOAgent, read_meta, read_weights
from tenk_env.registry import AgentError
from tenk_env.rules import Ruleset, did_you_mean
from tenk_env.rules_obs import reads_rules

__all__ = ["ZOO_DIR", "ZooError", "ZooEntry", "entries", "scan", "load", "export", "make_zoo"]

#: the parts of an SB3 policy's state dict that the actor reads (see tenk_env.policies.ppo._Actor)
_ACTOR_KEYS = ("mlp_extractor.policy_net.", "action_net.")


class ZooError(AgentError):
    """A zoo entry that cannot be trusted (a damaged or inconsistent card or weights file), or
    a zoo write refused; the message names the entry, the file and the fix."""


def _root(root: str | Path | None) -> Path:
    return Path(root) if root is not None else base.ZOO_DIR


def _fix(name: str) -> str:
    return f"restore the entry, or export it again with `tenk zoo add CHECKPOINT {name} --force`"


#: card keys: (required, type, what it holds); ``meta`` keys by agent kind below
_CARD = {
    "meta": (True, dict, "the checkpoint's metadata"),
    "weights_sha256": (True, str, "the sha256 of weights.npz, 16 hex digits"),
    "name": (False, str, "the entry's name"),
    "notes": (False, str, "a line on how it was trained"),
    "command": (False, str, "the command that trained it"),
    "checkpoint": (False, dict, "the checkpoint's file and sha256"),
    "strength": (False, dict, "its measured strength"),
}
_META = {"n_players": (int, "the player count")}
#: the game of an agent of one ruleset
_META_RULESET = {
    "ruleset": (dict, "the ruleset's fields"),
    "ruleset_hash": (str, "the ruleset's hash"),
    "ruleset_name": (str, "the ruleset's name"),
}
#: an agent that reads the rules and plays any ruleset instead
_META_ANY = {"rules_obs": (int, "the rules observation version"), "trained_on": (str, "what it was trained on")}
_META_PPO = {"obs_version": (int, "the observation version"), "n_actions": (int, "the action count")}
_META_AFTERSTATE = {
    "features_version": (int, "the afterstate features version"),
    "hidden": (list, "the value net's layer widths"),
    "opponents_learn": (bool, "whether it was trained by self-play"),
}
_TYPE_NAMES = {dict: "a mapping", str: "a string", int: "a whole number", list: "a list", bool: "true or false"}


def _check_type(v: Any, want: type) -> bool:
    if want is int:
        return isinstance(v, int) and not isinstance(v, bool)
    return isinstance(v, want)


def _verify(path: Path, card: Any) -> dict[str, Any]:
    """``card`` (the parsed agent.yaml of entry folder ``path``) if it is whole and matches its
    weights, else :class:`ZooError` naming the entry, the file and the key."""
    name, card_path = path.name, path / "agent.yaml"
    where = f"zoo entry {name!r} ({card_path})"
    if card is None:
        raise ZooError(f"{where} is empty: {_fix(name)}")
    if not isinstance(card, dict):
        raise ZooError(
            f"{where} holds {type(card).__name__ if not isinstance(card, str) else 'a string'}, "
            f"not the card's mapping (meta, weights_sha256, command, ...): {_fix(name)}"
        )
    for k, (required, want, what) in _CARD.items():
        if k not in card:
            if required:
                raise ZooError(f"{where} has no {k!r} ({what}): {_fix(name)}")
        elif not _check_type(card[k], want):
            raise ZooError(f"{where}: {k!r} is {card[k]!r}, not {_TYPE_NAMES[want]} ({what}): {_fix(name)}")
    meta = card["meta"]
    afterstate = meta.get("format") == AFTERSTATE_FORMAT
    if not afterstate and meta.get("format") != META_FORMAT:
        raise ZooError(
            f"{where}: meta.format is {meta.get('format')!r}: a card's meta is a PPO checkpoint's "
            f"(format {META_FORMAT}) or an afterstate checkpoint's ({AFTERSTATE_FORMAT!r}): {_fix(name)}"
        )
    any_rules = reads_rules(meta)
    for k, (want, what) in {
        **_META,
        **(_META_ANY if any_rules else _META_RULESET),
        **(_META_AFTERSTATE if afterstate else _META_PPO),
    }.items():
        if k not in meta:
            raise ZooError(f"{where} has no meta.{k} ({what}): {_fix(name)}")
        if not _check_type(meta[k], want):
            raise ZooError(f"{where}: meta.{k} is {meta[k]!r}, not {_TYPE_NAMES[want]} ({what}): {_fix(name)}")
    try:
        rules = None if any_rules else Ruleset.from_dict(meta["ruleset"], source=f"{where}: meta.ruleset")
    except ValueError as e:
        raise ZooError(f"{e}; {_fix(name)}") from None
    if rules is not None and rules.hash != meta["ruleset_hash"]:
        # The hash is what a game checks the agent against: an edited ruleset under the old
        # hash would let the agent play a game it was not trained for.
        raise ZooError(
            f"{where}: meta.ruleset hashes to {rules.hash}, but meta.ruleset_hash records "
            f"{meta['ruleset_hash']}: the card's ruleset was edited after export; {_fix(name)}"
        )
    weights = path / "weights.npz"
    if not weights.is_file():
        raise ZooError(f"zoo entry {name!r} has no weights file {weights}: {_fix(name)}")
    try:
        got = file_sha256(weights)
    except OSError as e:
        raise ZooError(f"zoo entry {name!r}: cannot read {weights} ({e.strerror or e}): {_fix(name)}") from None
    if got != card["weights_sha256"]:
        raise ZooError(
            f"zoo entry {name!r}: {weights} has sha256 {got}, but its card ({card_path}) records "
            f"weights_sha256 {card['weights_sha256']}: the weights were replaced or damaged, so they are "
            f"not the agent the card describes; {_fix(name)}"
        )
    return card


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

    @property
    def any_rules(self) -> bool:
        """Whether it reads the rules observation and plays any ruleset (else the one in its meta)."""
        return reads_rules(self.meta)

    def summary(self) -> str:
        m = self.meta
        game = f"any ruleset (trained on {m['trained_on']})" if self.any_rules else m["ruleset_name"]
        if self.afterstate:
            return (
                f"{game}, {m['n_players']} players, afterstate value net {m['hidden']} + turn "
                f"expectimax, {m.get('turns', 0):,} learner turns"
            )
        return f"{game}, {m['n_players']} players, {m.get('policy', 'mlp')} head, {m.get('num_timesteps', 0):,} steps"


def _entry(path: Path) -> ZooEntry:
    card_path = path / "agent.yaml"
    if not card_path.is_file():
        raise ZooError(
            f"zoo entry {path.name!r} has no card {card_path} (what it plays and how it was made): {_fix(path.name)}"
        )
    try:
        card = yaml.safe_load(card_path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        why = " ".join(str(e).split())
        raise ZooError(
            f"zoo entry {path.name!r}: {card_path} cannot be read as YAML ({why}): {_fix(path.name)}"
        ) from None
    return ZooEntry(path.name, path, _verify(path, card))


def _folders(root: Path) -> list[Path]:
    """The entry folders: those holding a card or weights (a folder with weights and no card
    is a broken entry, not something else)."""
    if not root.is_dir():
        return []
    return [
        p
        for p in sorted(root.iterdir())
        if p.is_dir() and ((p / "agent.yaml").exists() or (p / "weights.npz").exists())
    ]


def scan(root: str | Path | None = None) -> tuple[list[ZooEntry], list[ZooError]]:
    """(the healthy entries, by name; the error of each broken one): one bad entry does not
    hide the others."""
    good, bad = [], []
    for p in _folders(_root(root)):
        try:
            good.append(_entry(p))
        except ZooError as e:
            bad.append(e)
    return good, bad


def entries(root: str | Path | None = None) -> list[ZooEntry]:
    """Every healthy entry of the zoo, by name (:func:`scan` also names the broken ones)."""
    return scan(root)[0]


def load(name: str, root: str | Path | None = None) -> PPOAgent | AfterstateAgent:
    """The zoo agent ``name`` (deterministic: PPO agents play greedily); :class:`ZooError`
    naming the fault if its entry is broken."""
    root = _root(root)
    folders = {p.name: p for p in _folders(root)}
    if name not in folders:
        names = [e.name for e in entries(root)]
        raise AgentError(
            f"no zoo agent {name!r}{did_you_mean(name, names)}; the zoo has: "
            f"{', '.join(names) or '(nothing)'} (tenk zoo lists them)"
        )
    e = _entry(folders[name])
    weights = e.path / "weights.npz"
    try:
        with np.load(weights, allow_pickle=False) as z:
            sd = {k: z[k] for k in z.files}
    except Exception as err:  # noqa: BLE001 - a damaged file under a matching hash: say which and why
        raise ZooError(
            f"zoo entry {name!r}: {weights} cannot be read ({type(err).__name__}: {err}): {_fix(name)}"
        ) from None
    if e.afterstate:
        return AfterstateAgent.from_weights(sd, e.meta, f"zoo:{name}")
    return PPOAgent(NumpyActor.from_state_dict(sd, e.meta, f"zoo agent {name!r}"), e.meta, f"zoo:{name}")


def make_zoo(arg: str | None) -> PPOAgent | AfterstateAgent:
    """The ``zoo:NAME`` agent spec."""
    if not arg:
        names = ", ".join(e.name for e in entries()) or "(nothing)"
        raise AgentError(f"agent 'zoo' needs a name, e.g. zoo:{names.split(', ')[0]}; the zoo has: {names}")
    return load(arg)


def _check_destination(root: Path, name: str) -> Path:
    """The folder entry ``name`` goes to, refused (before any work) if it would land outside
    the zoo's folder or the zoo's folder cannot be written."""
    import os

    out = root / name
    if out.resolve().parent != root.resolve():
        # a symlinked entry folder: replacing it would write wherever it points
        raise ZooError(
            f"zoo entry {name!r}: {out} leads to {out.resolve()}, outside the zoo's folder "
            f"{root.resolve()}; remove the link, or pick another name"
        )
    # as the root user access() answers yes everywhere; the writes below catch what it misses
    parent = next((p for p in (root, *root.parents) if p.exists()), root)
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise ZooError(
            f"cannot add zoo entry {name!r}: the zoo's folder {root} is not writable"
            f"{'' if parent == root else f' ({parent} is not a writable folder)'}; an installed "
            "package's zoo is read-only: install tenk editable (pip install -e .) to add entries"
        )
    return out


def export(
    checkpoint: str | Path,
    name: str,
    *,
    command: str,
    notes: str = "",
    strength: Mapping[str, Any] | None = None,
    root: str | Path | None = None,
    force: bool = False,
) -> Path:
    """Make the zoo entry ``name`` from a ``tenk train`` checkpoint (PPO .zip or afterstate
    .npz): the weights that play and a card saying what it plays (with the weights' sha256),
    how it was made and how strong it is. ``root``: the zoo's folder (default
    :data:`tenk_env.policies.base.ZOO_DIR`); nothing is written outside it."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise AgentError(f"zoo name {name!r}: use letters, digits, '-' and '_'")
    root = _root(root)
    out = _check_destination(root, name)
    if out.exists() and not force:
        raise AgentError(f"zoo entry {name!r} exists ({out}); pick another name or replace it with --force")
    checkpoint = Path(checkpoint)
    if checkpoint.suffix == ".npz":  # an afterstate checkpoint: the value net is the whole agent
        actor, meta = read_checkpoint(checkpoint)
        AfterstateAgent.from_weights(actor, meta, f"checkpoint {str(checkpoint)!r}")  # refuses a net that does not fit
    else:
        meta = read_meta(checkpoint)
        sd = read_weights(checkpoint)
        actor = {
            k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)).astype(np.float32)
            for k, v in sd.items()
            if k.startswith(_ACTOR_KEYS)
        }
        if not actor:
            raise CheckpointError(f"checkpoint {str(checkpoint)!r}: no actor weights ({', '.join(_ACTOR_KEYS)}...)")
        NumpyActor.from_state_dict(actor, meta, f"checkpoint {str(checkpoint)!r}")  # refuses what it cannot play
    buf = io.BytesIO()
    np.savez_compressed(buf, **actor)
    try:
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out / "weights.npz", buf.getvalue())
        card = {
            "name": name,
            "notes": notes,
            "command": command,
            "checkpoint": {"file": checkpoint.name, "sha256": file_sha256(checkpoint)},
            "weights_sha256": file_sha256(out / "weights.npz"),
            "strength": dict(strength or {}),
            "meta": meta,
        }
        atomic_write_text(out / "agent.yaml", yaml.safe_dump(card, sort_keys=False, width=100))
    except OSError as e:
        raise ZooError(
            f"cannot write zoo entry {name!r} to {out}: {e.strerror or e}; give the zoo's folder "
            "write permission (an installed package's zoo is read-only: install tenk editable, "
            "pip install -e ., to add entries)"
        ) from None
    return out
