"""``ppo:PATH``: a MaskablePPO checkpoint written by ``tenk train``, played as an agent.

A checkpoint is the ``.zip`` that stable-baselines3 writes (``data``, ``policy.pth``, the
optimizer state...) plus one member of ours, ``tenk.json``: the ruleset (fields and hash),
the player count, the observation version and the action count it was trained on, and
the policy's activation. SB3 ignores members it does not know, so the file still loads
with ``MaskablePPO.load`` (that is how ``tenk train --resume`` continues a run).

The agent plays the deterministic policy: the highest-logit legal action. It does not
build an SB3 model to do so: it reads the actor's weights from ``policy.pth`` and runs the
small MLP in NumPy, which costs a few microseconds a decision (a torch forward pass on one
observation costs ~100 us of call overhead) and keeps the agent picklable, so match
workers and self-play opponents can carry it. ``tests/training/test_train.py`` checks that it picks
the same actions as SB3's own ``predict``.

Two policy heads exist. ``mlp`` is SB3's: a linear layer from the actor's last hidden layer
to the 128 (130) action logits. ``keep_aware`` adds to those logits a term built from what
each action *does*, read from the ruleset's scoring tables: for action ``a`` on the roll
shown, ``sum_j w_j(h) * F[roll, a, j]`` where ``F`` holds the points of the keep, whether
it banks, the dice it sets aside and the dice left to roll (:func:`keep_features`),
and ``w(h)`` is a linear layer of the hidden state. A plain MLP has to learn, roll by roll,
which of 64 masks scores what (and rare rolls, five 1s, are seen too seldom to learn);
this head knows it from the start and learns only how much points, banking and dice left
are worth in the current situation.

A checkpoint refuses, with a message naming both sides and the fix, to play another
ruleset (by hash: the name does not matter), another player count or another observation
layout. A policy trained with the rules observation (``rules_obs`` in its metadata, the
version of :mod:`tenk_env.rules_obs`) reads the ruleset from its observation instead: it
plays any ruleset with its action count (``trained_on`` says what it learned from).
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.game import Game
from tenk_env.io import atomic_write_bytes
from tenk_env.obs import OBS_VERSION, PIGGYBACK_TAKE, decode_action, encode, legal_mask, obs_size
from tenk_env.obs import n_actions as _n_actions  # checkpoint_meta has an argument of that name
from tenk_env.policies.base import AgentError
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.rules_obs import RULES_OBS_SIZE, RULES_OBS_VERSION, game_meta, reads_rules
from tenk_env.rules_obs import rules_obs as rules_vector
from tenk_env.tables import Keep, get_tables
from tenk_env.vector.sb3 import sb3_vec_env

__all__ = [
    "PPOAgent",
    "CheckpointError",
    "META_NAME",
    "META_FORMAT",
    "read_meta",
    "verify_checkpoint",
    "write_checkpoint",
    "checkpoint_meta",
    "check_meta",
    "ACTIVATIONS",
    "POLICY_HEADS",
    "keep_features",
    "roll_rows",
    "score_features",
    "KEEP_FEATURES",
    "TABLE_FEATURES",
    "untrained_ppo",
]

#: the zip member holding our metadata
META_NAME = "tenk.json"
#: version of that metadata's layout
META_FORMAT = 1
#: activations the NumPy forward pass implements (the trainer's config allows only these)
ACTIVATIONS = ("tanh", "relu")
#: policy heads (see the module docstring)
POLICY_HEADS = ("mlp", "keep_aware")
#: features per (roll, action) of the keep-aware head: the table's, then the two that depend
#: on the scores (see keep_features); bump the version on any change
TABLE_FEATURES = 11
KEEP_FEATURES = TABLE_FEATURES + 3
KEEP_FEATURES_VERSION = 4
POW7 = 7 ** np.arange(6)


class CheckpointError(AgentError):
    """A checkpoint that cannot be read, or that was trained for another game."""


def checkpoint_meta(
    rules: Ruleset | None,
    n_players: int,
    *,
    activation: str,
    n_actions: int,
    policy: str = "mlp",
    num_timesteps: int = 0,
    trained_on: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``tenk.json`` of a checkpoint trained on ``rules`` with ``n_players`` players; with
    ``rules`` None, of a policy that reads the rules observation (``trained_on`` says what it
    was trained on)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation {activation!r}: the ppo agent implements {', '.join(ACTIVATIONS)}")
    if policy not in POLICY_HEADS:
        raise ValueError(f"policy {policy!r}: the ppo agent implements {', '.join(POLICY_HEADS)}")
    if rules is None and policy == "keep_aware":
        raise ValueError("the keep-aware head reads one ruleset's tables: a policy for any ruleset uses the mlp head")
    meta = {
        "format": META_FORMAT,
        **game_meta(rules, trained_on),
        "n_players": int(n_players),
        "obs_version": OBS_VERSION,
        "n_actions": int(n_actions),
        "activation": activation,
        "policy": policy,
        "num_timesteps": int(num_timesteps),
        **extra,
    }
    if policy == "keep_aware":
        meta["keep_features_version"] = KEEP_FEATURES_VERSION
    return meta


_FEATURES: dict[str, tuple[np.ndarray, np.ndarray]] = {}


def keep_features(rules: Ruleset) -> tuple[np.ndarray, np.ndarray]:
    """The keep-aware head's fixed features, built once per ruleset from its scoring tables.

    Returns ``(key_to_row, table)``. A roll is found from the observation's face counts
    (indices 36-41, count / num_dice): ``key = sum(count_f * 7 ** (f - 1))`` and
    ``row = key_to_row[key]``; row 0 is "no roll" (all zeros: piggyback choices, or no
    decision). ``table[row, a]`` holds, for a legal keep action ``a`` (``F`` below), with
    ``e`` = 1 when ``a`` banks and ``left`` = the dice the next roll would use:

    0. (1 - ``e``) * points of the keep / 1,000
    1. ``e`` * points / 1,000
    2. ``e``
    3-8. (1 - ``e``) * one-hot of ``left`` (1 to 6; hot dice count as all the dice)
    9. (1 - ``e``) * dice set aside / num_dice
    10. ``e`` * dice set aside / num_dice

    Banking and rolling on get separate features so that what a die is worth when the turn
    goes on (a 5 set aside costs a die) does not leak into banking (where it is just points).

    Three more features depend on the scores, so they are computed from the observation
    (:func:`score_features`), all zero for actions that roll on:

    11. banking puts the learner strictly ahead of every other player;
    12. banking reaches the target while nobody has yet (it starts the final round);
    13. the final round is on and banking leaves the learner behind (in a last turn, a
        certain loss).

    Without them the network must compare own score + turn total + points with the
    leader's score by itself, and in the rare final turns it banked totals that lose.

    Illegal (non-canonical, non-scoring) masks are all zero; the legal mask removes them.
    """
    got = _FEATURES.get(rules.hash)
    if got is not None:
        return got
    tables = get_tables(rules)
    nd = rules.num_dice
    rolls = sorted(tables.rolls)
    key_to_row = np.zeros(7**6, np.int32)
    table = np.zeros((len(rolls) + 1, _n_actions(rules), TABLE_FEATURES), np.float32)
    for r, dice in enumerate(rolls, start=1):
        counts = np.bincount(np.asarray(dice, np.int64) - 1, minlength=6)
        key_to_row[int(counts @ POW7)] = r
        n = len(dice)
        for k in tables.rolls[dice].keeps:
            left = nd if k.n == n else n - k.n  # hot dice: all of them again
            pts = k.points / 1000.0
            kept = k.n / nd
            f = table[r, k.mask]  # set aside and roll on
            f[0], f[2 + left], f[9] = pts, 1.0, kept
            f = table[r, k.mask | 64]  # set aside and bank
            f[1], f[2], f[10] = pts, 1.0, kept
    _FEATURES[rules.hash] = (key_to_row, table)
    return key_to_row, table


def roll_rows(obs: np.ndarray, num_dice: int, key_to_row: np.ndarray) -> np.ndarray:
    """Row of :func:`keep_features`'s table for each observation (B, D)."""
    counts = np.rint(obs[:, 36:42] * num_dice).astype(np.int64)
    return key_to_row[counts @ POW7]


def score_features(obs: np.ndarray, F: np.ndarray, target: float) -> np.ndarray:
    """The three score features (B, A, 3) of :func:`keep_features` for observations (B, D)
    and their table rows F (B, A, TABLE_FEATURES). Scores are read in points (observation
    index 43: turn total / target, 55: final round, 56 + 5k: seat k's score / target);
    they are multiples of 50, so the comparisons are made half a point off the boundary.
    ``tenk_env.training.policy`` computes the same in torch."""
    bank = F[:, :, 2]
    total = (obs[:, 56] + obs[:, 43]) * target  # own score + turn total
    lead = obs[:, 61::5].max(axis=1) * target
    final = obs[:, 55:56]
    banked = total[:, None] + F[:, :, 1] * 1000.0  # bank features hold the points
    ahead = (banked > lead[:, None] + 0.5).astype(np.float32)
    reach = (banked > target - 0.5).astype(np.float32)
    return np.stack([bank * ahead, bank * reach * (1 - final), bank * final * (1 - ahead)], axis=2).astype(np.float32)


def write_checkpoint(model: Any, path: str | Path, meta: Mapping[str, Any]) -> Path:
    """Save an SB3 model with ``meta`` as ``tenk.json``, atomically (a crash or Ctrl-C never
    leaves a half-written checkpoint at ``path``)."""
    buf = io.BytesIO()
    model.save(buf)
    with zipfile.ZipFile(buf, "a") as z:
        z.writestr(META_NAME, json.dumps(dict(meta), indent=1, sort_keys=True))
    path = Path(path)
    atomic_write_bytes(path, buf.getvalue())
    return path


def _open(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        hint = ""
        if path.is_dir():
            hint = f"; that is a directory: give a checkpoint in it, e.g. {path / 'best.zip'}"
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist{hint}")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(
            f"checkpoint {str(path)!r} is not a checkpoint zip ({e}); give a .zip "
            "written by `tenk train` (runs/NAME/best.zip, last.zip or checkpoints/*.zip)"
        ) from None


def read_meta(path: str | Path) -> dict[str, Any]:
    """The ``tenk.json`` of a checkpoint."""
    path = Path(path)
    with _open(path) as z:
        if META_NAME not in z.namelist():
            raise CheckpointError(
                f"checkpoint {str(path)!r} has no {META_NAME}: it was not written by "
                "`tenk train`, so its ruleset and player count are unknown; retrain "
                "with `tenk train`"
            )
        try:
            meta = json.loads(z.read(META_NAME))
        except (ValueError, zipfile.BadZipFile, OSError, zlib.error) as e:
            raise CheckpointError(
                f"checkpoint {str(path)!r} is damaged: its {META_NAME} cannot be read ({_first_line(e)})"
            ) from None
    if not isinstance(meta, dict):
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: its {META_NAME} holds a "
            f"{type(meta).__name__}, not the metadata mapping"
        )
    if meta.get("format") != META_FORMAT:
        raise CheckpointError(
            f"checkpoint {str(path)!r} has metadata format {meta.get('format')!r}; this "
            f"version of tenk reads format {META_FORMAT}: retrain it with `tenk train`"
        )
    return meta


def _first_line(e: BaseException, limit: int = 120) -> str:
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    text = text if len(text) <= limit else text[:limit] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _read_weights(path: Path, z: zipfile.ZipFile) -> Mapping[str, Any]:
    """The policy's state dict (``policy.pth``), or CheckpointError naming the file: a zip can
    be intact while the member inside it is not (a disk that filled up while it was copied)."""
    import torch

    try:
        raw = z.read("policy.pth")
    except KeyError:
        raise CheckpointError(f"checkpoint {str(path)!r} has no policy.pth: not an SB3 checkpoint") from None
    except (zipfile.BadZipFile, OSError, zlib.error) as e:
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: its weights (policy.pth) cannot be read ({_first_line(e)})"
        ) from None
    try:
        sd = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises UnpicklingError, EOFError or RuntimeError on damaged bytes
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: its weights (policy.pth) are not a "
            f"torch state dict ({_first_line(e)})"
        ) from None
    if not isinstance(sd, Mapping):
        raise CheckpointError(
            f"checkpoint {str(path)!r} is damaged: its weights (policy.pth) hold a "
            f"{type(sd).__name__}, not a state dict"
        )
    return sd


def read_weights(path: str | Path) -> Mapping[str, Any]:
    """The policy's state dict of a checkpoint (torch tensors), or CheckpointError."""
    path = Path(path)
    with _open(path) as z:
        return _read_weights(path, z)


def verify_checkpoint(path: str | Path) -> dict[str, Any]:
    """The metadata of a checkpoint that loads: every member's checksum holds, ``tenk.json``,
    SB3's ``data`` and the weights parse. CheckpointError, naming the file, otherwise."""
    path = Path(path)
    meta = read_meta(path)
    with _open(path) as z:
        try:
            bad = z.testzip()
        except Exception as e:  # BadZipFile, zlib.error, EOFError: bytes past the headers are damaged
            bad = f"? ({_first_line(e)})"
        if bad is not None:
            raise CheckpointError(f"checkpoint {str(path)!r} is damaged: member {bad} fails its checksum")
        try:
            json.loads(z.read("data"))
        except KeyError:
            raise CheckpointError(f"checkpoint {str(path)!r} has no data member: not an SB3 checkpoint") from None
        except ValueError as e:
            raise CheckpointError(
                f"checkpoint {str(path)!r} is damaged: its data member is not JSON ({_first_line(e)})"
            ) from None
        _read_weights(path, z)
    if not isinstance(meta.get("num_timesteps"), int):
        raise CheckpointError(f"checkpoint {str(path)!r} is damaged: its {META_NAME} has no step count")
    return meta


def _describe(meta: Mapping[str, Any]) -> str:
    return (
        f"ruleset {meta['ruleset_name']!r} (hash {meta['ruleset_hash']}), {meta['n_players']} players, "
        f"observation version {meta['obs_version']}"
    )


def _check_any_rules(meta: Mapping[str, Any], rules: Ruleset, n_players: int, where: str) -> None:
    if meta["rules_obs"] != RULES_OBS_VERSION:
        raise CheckpointError(
            f"{where} reads rules observation version {meta['rules_obs']!r}; this tenk writes "
            f"version {RULES_OBS_VERSION}: retrain it with `tenk train`"
        )
    if int(meta["obs_version"]) != OBS_VERSION:
        raise CheckpointError(
            f"{where} was trained on observation version {meta['obs_version']}, this tenk encodes "
            f"version {OBS_VERSION}: retrain it with `tenk train`"
        )
    if int(meta["n_players"]) != n_players:
        raise CheckpointError(
            f"{where} plays any ruleset, but {meta['n_players']} players; this game has "
            f"{n_players}: play it with --players {meta['n_players']}"
        )
    if int(meta["n_actions"]) != _n_actions(rules):
        raise CheckpointError(
            f"{where} has {meta['n_actions']} actions; ruleset {rules.name!r} has "
            f"{_n_actions(rules)} (piggyback adds two): train a policy on rulesets like it"
        )


def check_meta(meta: Mapping[str, Any], rules: Ruleset, n_players: int, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` unless ``meta`` was trained for this game (a policy that
    reads the rules observation: for this player count and action count)."""
    if reads_rules(meta):
        return _check_any_rules(meta, rules, n_players, where)
    want = {"ruleset_name": rules.name, "ruleset_hash": rules.hash, "n_players": n_players, "obs_version": OBS_VERSION}
    problems = []
    if meta["ruleset_hash"] != rules.hash:
        problems.append("ruleset")
    if int(meta["n_players"]) != n_players:
        problems.append("player count")
    if int(meta["obs_version"]) != OBS_VERSION:
        problems.append("observation version")
    if not problems:
        return
    if "observation version" in problems:
        fix = (
            "the observation layout changed since it was trained: retrain with `tenk train` "
            "(the old checkpoint cannot be converted)"
        )
    else:
        fix = (
            f"play it under the ruleset and player count it was trained for (--rules "
            f"{meta['ruleset_name']} --players {meta['n_players']}; its full ruleset is in its "
            f"{META_NAME}), or train an agent for this game: tenk train --config CONFIG "
            f"--set rules={rules.name} --set n_players={n_players}"
        )
    raise CheckpointError(
        f"{where} was trained on {_describe(meta)}; this game is {_describe(want)} "
        f"(different {' and '.join(problems)}): {fix}"
    )


def _t(w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # weights stored transposed, so a batch (B, D) multiplies on the left without copies
    return np.ascontiguousarray(w.T, dtype=np.float32), b.astype(np.float32)


class NumpyActor:
    """The actor of a ``tenk train`` policy as NumPy arrays: observations -> action logits."""

    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        head: tuple[np.ndarray, np.ndarray],
        activation: str,
        keep: tuple[np.ndarray, np.ndarray] | None = None,
        rules: Ruleset | None = None,
    ):
        self.layers = [_t(w, b) for w, b in layers]
        self.head = _t(*head)
        self.activation = activation
        self.keep = _t(*keep) if keep is not None else None
        if keep is not None:
            self.num_dice, self.target = rules.num_dice, float(rules.target)
            self.key_to_row, self.table = keep_features(rules)

    @classmethod
    def from_state_dict(cls, sd: Mapping[str, Any], meta: Mapping[str, Any], source: str) -> NumpyActor:
        def arr(k):
            v = sd[k]
            return v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)

        prefix = "mlp_extractor.policy_net."
        idx = sorted({int(k[len(prefix) :].split(".")[0]) for k in sd if k.startswith(prefix)})
        policy = meta.get("policy", "mlp")
        try:
            layers = [(arr(f"{prefix}{i}.weight"), arr(f"{prefix}{i}.bias")) for i in idx]
            if policy == "keep_aware":
                if meta.get("keep_features_version") != KEEP_FEATURES_VERSION:
                    raise CheckpointError(
                        f"{source}: keep-aware features version {meta.get('keep_features_version')!r}; "
                        f"this tenk computes version {KEEP_FEATURES_VERSION}: retrain it"
                    )
                head = (arr("action_net.base.weight"), arr("action_net.base.bias"))
                keep = (arr("action_net.keep.weight"), arr("action_net.keep.bias"))
                return cls(layers, head, meta.get("activation", "tanh"), keep, Ruleset.from_dict(meta["ruleset"]))
            head = (arr("action_net.weight"), arr("action_net.bias"))
        except KeyError as e:
            raise CheckpointError(
                f"{source}: the policy has no {e.args[0]!r} weights; the ppo agent reads "
                "the MLP policies `tenk train` writes"
            ) from None
        return cls(layers, head, meta.get("activation", "tanh"))

    def logits(self, obs: np.ndarray) -> np.ndarray:
        h = obs
        act = np.tanh if self.activation == "tanh" else (lambda x: np.maximum(x, 0.0))
        for w, b in self.layers:
            h = act(h @ w + b)
        w, b = self.head
        out = h @ w + b
        if self.keep is not None:
            kw, kb = self.keep
            F = self.table[roll_rows(obs, self.num_dice, self.key_to_row)]  # (B, A, J)
            F = np.concatenate([F, score_features(obs, F, self.target)], axis=2)
            out += np.einsum("baj,bj->ba", F, h @ kw + kb)
        return out


class PPOAgent:
    """A trained policy playing greedily (highest-logit legal action).

    Build it with :meth:`load` (a checkpoint file) or :meth:`from_policy` (a live SB3
    policy, as the trainer does for its evaluations and self-play snapshots). Besides the
    :class:`~tenk_env.policies.base.Policy` protocol it offers :meth:`act`, batched over
    observations and masks, for engines that step many games at once.
    """

    def __init__(self, actor: NumpyActor, meta: Mapping[str, Any], name: str):
        self._actor = actor
        self.meta = dict(meta)
        self.name = name
        self.n_players = int(meta["n_players"])
        self.n_actions = int(meta["n_actions"])
        self.any_rules = reads_rules(self.meta)
        self._obs = np.zeros(obs_size(self.n_players), dtype=np.float32)

    # ------------------------------------------------------------------ construction
    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> PPOAgent:
        # torch only reads the weights here (the agent plays in NumPy), and the process's torch
        # threads stay its own: match workers and trainers set theirs
        path = Path(path)
        meta = read_meta(path)
        actor = NumpyActor.from_state_dict(read_weights(path), meta, f"checkpoint {str(path)!r}")
        return cls(actor, meta, name or f"ppo:{path}")

    @classmethod
    def from_policy(cls, policy: Any, meta: Mapping[str, Any], name: str = "ppo") -> PPOAgent:
        """A frozen copy of a live SB3 policy (later training does not change it)."""
        actor = NumpyActor.from_state_dict(policy.state_dict(), meta, name)
        return cls(actor, meta, name)

    # ------------------------------------------------------------------ Policy protocol
    def check(self, rules: Ruleset, n_players: int) -> None:
        check_meta(self.meta, rules, n_players, where=f"agent {self.name!r}")

    def _choose(self, game: Game) -> int:
        if game.n_players != self.n_players:
            # check() refuses this before a game starts; this guards direct use
            check_meta(self.meta, game.rules, game.n_players, where=f"agent {self.name!r}")
        obs = encode(game, game.current, self._obs)
        if self.any_rules:
            obs = np.concatenate([obs, rules_vector(game.rules)])
        mask = legal_mask(game)
        logits = self.logits(obs[None, :], mask[None, :])[0, : mask.shape[0]]
        return int(np.argmax(np.where(mask > 0, logits, -np.inf)))

    def decide(self, game: Game, rng: np.random.Generator) -> tuple[Keep, bool]:
        return decode_action(game, self._choose(game))

    def piggyback(self, game: Game, rng: np.random.Generator) -> bool:
        return self._choose(game) == PIGGYBACK_TAKE

    # ------------------------------------------------------------------ batched
    def logits(self, obs: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """Logits (B, A) for observations (B, D); ``masks`` (the legal masks) go to actors that
        read them (:class:`~tenk_env.policies.onnx_agent.OnnxAgent`'s), this one does not."""
        return self._actor.logits(np.asarray(obs, dtype=np.float32))

    def with_rules(self, obs: np.ndarray, rules: Ruleset) -> np.ndarray:
        """Observations (B, D) of the env as this policy reads them: with the rules observation
        of ``rules`` appended where it was trained with it."""
        if not self.any_rules:
            return obs
        return np.concatenate([obs, np.broadcast_to(rules_vector(rules), (len(obs), RULES_OBS_SIZE))], axis=1)

    def act(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Greedy actions (B,) for observations (B, D) and legal masks (B, A)."""
        logits = self.logits(obs, masks)[:, : masks.shape[1]]
        return np.argmax(np.where(np.asarray(masks, dtype=bool), logits, -np.inf), axis=1)

    def __repr__(self) -> str:
        game = "any ruleset" if self.any_rules else self.meta["ruleset_name"]
        return f"PPOAgent({self.name!r}: {game}, {self.n_players} players, {self.meta.get('num_timesteps', 0):,} steps)"


def make_ppo(arg: str | None) -> PPOAgent:
    if not arg:
        raise AgentError("agent 'ppo' needs a checkpoint path: ppo:runs/NAME/best.zip")
    return PPOAgent.load(arg)


def untrained_ppo(rules: Ruleset | str = "classic", n_players: int = 2, seed: int = 0) -> PPOAgent:
    """A PPOAgent with SB3's default (untrained) MLP policy: for benchmarks and tests.
    Imports sb3-contrib (and torch)."""
    from sb3_contrib import MaskablePPO

    rules = load_ruleset(rules)
    venv = sb3_vec_env(2, rules, n_players, opponents="random")
    model = MaskablePPO("MlpPolicy", venv, seed=seed, device="cpu")
    meta = checkpoint_meta(rules, n_players, activation="tanh", n_actions=venv.action_space.n)
    return PPOAgent.from_policy(model.policy, meta, name="ppo:untrained")
