"""The keep-aware policy head (``ppo.policy: keep_aware``) as an SB3 policy.

``logits = base(h) + sum_j w_j(h) * F[roll, a, j]``: SB3's linear head plus a state-weighted
sum of fixed per-action features from the scoring tables (:func:`tenk_env.policies.ppo.keep_features`
documents them, and :class:`tenk_env.policies.ppo.PPOAgent` computes the same thing in NumPy).

SB3 hands the action head only the actor's hidden state, so the actor's extractor passes
the observation along (``[h, obs]``) and the head splits it again; the critic is SB3's own.
The feature table is rebuilt from the ruleset (a policy keyword, saved with the model), not
stored in the checkpoint.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from tenk_env.policies.ppo import KEEP_FEATURES, POW7, TABLE_FEATURES, keep_features
from tenk_env.rules import Ruleset

__all__ = ["KeepAwarePolicy"]


class _ActorPassesObs(MlpExtractor):
    """SB3's MlpExtractor whose actor output is ``[h, obs]`` (the head needs the roll)."""

    def __init__(self, feature_dim: int, net_arch, activation_fn, device) -> None:
        super().__init__(feature_dim, net_arch=net_arch, activation_fn=activation_fn, device=device)
        self.hidden_dim = self.latent_dim_pi
        self.latent_dim_pi = self.hidden_dim + feature_dim

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return th.cat([self.policy_net(features), features], dim=1)

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class _KeepHead(nn.Module):
    """``base(h) + sum_j w_j(h) F[roll, a, j]``, computed sparsely.

    The table features are mostly zeros (a roll has a few legal keeps, each with at most
    four non-zero features), so instead of multiplying a dense (B, 130, 14) block they are
    stored per roll as (action, feature, value) triples and scattered into the logits:
    the dense form cost half of every gradient step. The score features concern the 64
    bank actions only and are computed on those columns.
    """

    def __init__(self, hidden: int, n_actions: int, rules: Ruleset):
        super().__init__()
        self.hidden = hidden
        self.base = nn.Linear(hidden, n_actions)
        self.keep = nn.Linear(hidden, KEEP_FEATURES)
        key_to_row, table = keep_features(rules)
        nz = [np.argwhere(t != 0) for t in table]  # per roll: (action, feature) pairs
        k = max(1, max(len(x) for x in nz))
        act = np.zeros((len(table), k), np.int64)
        feat = np.zeros((len(table), k), np.int64)
        val = np.zeros((len(table), k), np.float32)
        for r, x in enumerate(nz):
            act[r, : len(x)], feat[r, : len(x)] = x[:, 0], x[:, 1]
            val[r, : len(x)] = table[r, x[:, 0], x[:, 1]]
        # buffers, not parameters, and not saved: rebuilt from the ruleset
        for name, arr in (
            ("key_to_row", key_to_row.astype(np.int64)),
            ("act", act),
            ("feat", feat),
            ("val", val),
            ("bank_pts", table[:, 64:128, 1] * 1000.0),
            ("bank_ok", table[:, 64:128, 2]),
            ("pow7", POW7.astype(np.float32)),
        ):
            self.register_buffer(name, th.as_tensor(arr), persistent=False)
        self.num_dice = rules.num_dice
        self.target = float(rules.target)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        h, obs = latent[:, : self.hidden], latent[:, self.hidden :]
        rows = self.key_to_row[(th.round(obs[:, 36:42] * self.num_dice) @ self.pow7).long()]
        w = self.keep(h)  # (B, KEEP_FEATURES)
        contrib = self.val[rows] * th.gather(w, 1, self.feat[rows])
        logits = self.base(h).scatter_add(1, self.act[rows], contrib)
        # the score features of tenk_env.policies.ppo.score_features, on the bank columns 64..127
        total = (obs[:, 56] + obs[:, 43]) * self.target  # own score + turn total
        lead = obs[:, 61::5].max(dim=1).values * self.target
        final = obs[:, 55:56]
        banked = total[:, None] + self.bank_pts[rows]
        ahead = (banked > lead[:, None] + 0.5).float()
        reach = (banked > self.target - 0.5).float()
        T = TABLE_FEATURES
        dyn = self.bank_ok[rows] * (
            ahead * w[:, T : T + 1]
            + reach * (1 - final) * w[:, T + 1 : T + 2]
            + final * (1 - ahead) * w[:, T + 2 : T + 3]
        )
        return th.cat([logits[:, :64], logits[:, 64:128] + dyn, logits[:, 128:]], dim=1)


class KeepAwarePolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP policy with the keep-aware head. Extra keyword: ``rules`` (a
    ruleset mapping, as ``Ruleset.to_dict()`` gives it)."""

    def __init__(self, *args: Any, rules: dict | None = None, **kwargs: Any):
        if rules is None:
            raise ValueError("KeepAwarePolicy needs policy_kwargs['rules'] (the ruleset as a mapping)")
        self.rules_dict = dict(rules)
        self._rules = Ruleset.from_dict(self.rules_dict)
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = _ActorPassesObs(
            self.features_dim, net_arch=self.net_arch, activation_fn=self.activation_fn, device=self.device
        )

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        head = _KeepHead(self.mlp_extractor.hidden_dim, int(self.action_space.n), self._rules)
        if self.ortho_init:
            # as SB3 initialises its action head: near-uniform logits at the start
            head.base.apply(lambda m: self.init_weights(m, gain=0.01))
            head.keep.apply(lambda m: self.init_weights(m, gain=0.01))
        self.action_net = head.to(self.device)
        # the optimizer super() made holds the replaced head's parameters: make it again
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["rules"] = self.rules_dict
        return data
