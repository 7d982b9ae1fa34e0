"""The keep-aware policy head (``ppo.policy: keep_aware``) as an SB3 policy.

``logits = base(h) + sum_j w_j(h) * F[roll, a, j]``: SB3's linear head plus a state-weighted
sum of fixed per-action features from the scoring tables (:func:`agents.ppo.keep_features`
documents them, and :class:`agents.ppo.PPOAgent` computes the same thing in NumPy).

SB3 hands the action head only the actor's hidden state, so the actor's extractor passes
the observation along (``[h, obs]``) and the head splits it again; the critic is SB3's own.
The feature table is rebuilt from the ruleset (a policy keyword, saved with the model), not
stored in the checkpoint.
"""

from __future__ import annotations

from typing import Any

import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from agents.ppo import KEEP_FEATURES, _POW7, keep_features
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
    def __init__(self, hidden: int, n_actions: int, rules: Ruleset):
        super().__init__()
        self.hidden = hidden
        self.base = nn.Linear(hidden, n_actions)
        self.keep = nn.Linear(hidden, KEEP_FEATURES)
        key_to_row, table = keep_features(rules)
        # not saved with the model: rebuilt from the ruleset, so checkpoints stay small
        self.register_buffer("key_to_row", th.as_tensor(key_to_row, dtype=th.long), persistent=False)
        self.register_buffer("table", th.as_tensor(table), persistent=False)
        self.register_buffer("pow7", th.as_tensor(_POW7, dtype=th.float32), persistent=False)
        self.num_dice = rules.num_dice
        self.target = float(rules.target)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        h, obs = latent[:, :self.hidden], latent[:, self.hidden:]
        counts = th.round(obs[:, 36:42] * self.num_dice)
        rows = self.key_to_row[(counts @ self.pow7).long()]
        F = self.table[rows]                                   # (B, A, TABLE_FEATURES)
        # agents.ppo.score_features, in torch
        bank = F[:, :, 2]
        total = (obs[:, 56] + obs[:, 43]) * self.target
        lead = obs[:, 61::5].max(dim=1).values * self.target
        banked = total[:, None] + F[:, :, 1] * 1000.0
        ahead = bank * (banked > lead[:, None] + 0.5)
        reach = bank * (banked > self.target - 0.5)
        F = th.cat([F, ahead[:, :, None], reach[:, :, None]], dim=2)
        return self.base(h) + th.einsum("baj,bj->ba", F, self.keep(h))


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
        self.mlp_extractor = _ActorPassesObs(self.features_dim, net_arch=self.net_arch,
                                             activation_fn=self.activation_fn, device=self.device)

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

