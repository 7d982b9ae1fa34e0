"""The rules observation: a ruleset described as a fixed-length vector, for agents that play any ruleset.

A learned agent trained on one ruleset never needs to be told the rules; one trained on many
(the rule-variant suite, :mod:`tenk_env.variants`) does. :func:`rules_obs` describes every
field of a :class:`~tenk_env.rules.Ruleset` that changes play, so two rulesets that play
differently never share a vector. Points are divided by a fixed scale per field (not by the
target: the target is itself a feature) and clipped at 2; flags are 0 or 1.

Layout (version :data:`RULES_OBS_VERSION`), :func:`rules_obs_labels` names every index:

=====  ============================  ===========================================================
index  name                          value
=====  ============================  ===========================================================
0      ``six_dice``                  1 with six dice, 0 with five
1      ``target``                    target / 10,000
2      ``entry_threshold``           entry threshold / 1,000 (0: none)
3      ``min_bank``                  minimum bank / 1,000 (0: none)
4      ``roll_limit``                1 when a turn has a roll limit
5      ``max_rolls``                 the roll limit / 10 (0: unlimited)
6      ``three_ones``                three 1s / 1,000
7      ``multiples_doubling``        1 when four, five and six of a kind double the triple
8      ``multiples_flat``            1 when they score flat values (neither: they score nothing)
9-11   ``flat_four`` ... ``_six``    the flat values / 3,000 (0 unless flat)
12     ``straight``                  the six-dice straight / 3,000
13     ``half_straights``            each half straight / 1,000
14     ``short_straights``           each five-dice run / 1,000
15     ``three_pairs``               three pairs / 1,500
16     ``four_plus_pair``            1 when four of a kind and a pair read as three pairs
17     ``two_triplets``              two triplets / 2,500
18     ``six_of_a_kind_wins_ones``   1 when six 1s win at once
19     ``six_of_a_kind_wins_any``    1 when any six of a kind wins at once
20     ``four_twos_lose_all``        1 when four 2s wipe the roller's score
21     ``zilch_payout``              a six-dice roll with nothing pays this / 1,000
22     ``hot_dice_mandatory``        1 when hot dice must be rolled again
23     ``end_final_round``           1 when the others take a final turn (end rules: one of
24     ``end_one_more_roll``         1 when they take one roll     23, 24, or neither: immediate)
25     ``exact_finish_forfeit``      1 when passing the target forfeits the turn
26     ``exact_finish_to_lowest``    1 when it drops to the lowest score
27     ``tie_shared``                1 when tied leaders share the win
28     ``bust_penalty``              the penalty / 1,000 (0: none)
29     ``bust_penalty_after``        busts in a row that cost it / 5 (0 without a penalty)
30     ``piggyback``                 1 when the next player may take over the dice left
31     ``turn_order_highest_die``    1 when the highest die moves first
32     ``komi``                      the second player's starting points / 1,000
=====  ============================  ===========================================================

Bump :data:`RULES_OBS_VERSION` on any change to this layout: agents record the version they
read and refuse another.

For the environments, :class:`RulesObservation` (Gymnasium) and :class:`RulesObservationVector`
(Gymnasium's vector API) append the vector to every observation of an env: a network of any
framework can then condition on the rules::

    env = RulesObservation(gym.make("TenThousand-v0", rules="farkle_official"))
    # Box(0, high, (56 + 5 * n_players + 33,)): the position (tenk_env.obs), then the rules
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tenk_env.rules import Ruleset

__all__ = [
    "RULES_OBS_VERSION",
    "RULES_OBS_SIZE",
    "rules_obs",
    "rules_obs_labels",
    "reads_rules",
    "game_meta",
    "RulesObservation",
    "RulesObservationVector",
    "with_rules_space",
]

#: version of the layout above; agents that read it record it and refuse another
RULES_OBS_VERSION = 1

_FIELDS = (
    ("six_dice", lambda r: r.num_dice == 6),
    ("target", lambda r: r.target / 10_000),
    ("entry_threshold", lambda r: r.entry_threshold / 1000),
    ("min_bank", lambda r: r.min_bank / 1000),
    ("roll_limit", lambda r: r.max_rolls > 0),
    ("max_rolls", lambda r: r.max_rolls / 10),
    ("three_ones", lambda r: r.three_ones / 1000),
    ("multiples_doubling", lambda r: r.multiples == "doubling"),
    ("multiples_flat", lambda r: r.multiples == "flat"),
    ("flat_four", lambda r: (r.multiples == "flat") * r.flat_multiples[0] / 3000),
    ("flat_five", lambda r: (r.multiples == "flat") * r.flat_multiples[1] / 3000),
    ("flat_six", lambda r: (r.multiples == "flat") * r.flat_multiples[2] / 3000),
    ("straight", lambda r: r.straight / 3000),
    ("half_straights", lambda r: r.half_straights / 1000),
    ("short_straights", lambda r: r.short_straights / 1000),
    ("three_pairs", lambda r: r.three_pairs / 1500),
    ("four_plus_pair", lambda r: r.four_plus_pair_is_three_pairs),
    ("two_triplets", lambda r: r.two_triplets / 2500),
    ("six_of_a_kind_wins_ones", lambda r: r.six_of_a_kind_wins == "ones"),
    ("six_of_a_kind_wins_any", lambda r: r.six_of_a_kind_wins == "any"),
    ("four_twos_lose_all", lambda r: r.four_twos_lose_all),
    ("zilch_payout", lambda r: r.zilch_payout / 1000),
    ("hot_dice_mandatory", lambda r: r.hot_dice == "mandatory"),
    ("end_final_round", lambda r: r.end == "final_round"),
    ("end_one_more_roll", lambda r: r.end == "one_more_roll"),
    ("exact_finish_forfeit", lambda r: r.exact_finish == "forfeit"),
    ("exact_finish_to_lowest", lambda r: r.exact_finish == "to_lowest"),
    ("tie_shared", lambda r: r.tie == "shared"),
    ("bust_penalty", lambda r: r.bust_penalty / 1000),
    ("bust_penalty_after", lambda r: (r.bust_penalty > 0) * r.bust_penalty_after / 5),
    ("piggyback", lambda r: r.piggyback),
    ("turn_order_highest_die", lambda r: r.turn_order == "highest_die"),
    ("komi", lambda r: r.komi / 1000),
)
#: length of the vector
RULES_OBS_SIZE = len(_FIELDS)

_CACHE: dict[str, np.ndarray] = {}


def rules_obs_labels() -> list[str]:
    """The name of every index of :func:`rules_obs` (see the module docstring)."""
    return [name for name, _ in _FIELDS]


def rules_obs(rules: Ruleset) -> np.ndarray:
    """``rules`` as a float32 vector of :data:`RULES_OBS_SIZE` values in [0, 2] (read-only)."""
    got = _CACHE.get(rules.hash)
    if got is None:
        got = np.clip(np.array([float(f(rules)) for _, f in _FIELDS], dtype=np.float32), 0.0, 2.0)
        got.flags.writeable = False
        _CACHE[rules.hash] = got
    return got


def reads_rules(meta) -> bool:
    """Whether a checkpoint's metadata says its agent reads the rules observation, and so plays
    any ruleset (``rules_obs``: the version it reads, set and not 0); every agent kind asks this."""
    return bool(meta.get("rules_obs"))


def game_meta(rules: Ruleset | None, trained_on: str | None = None) -> dict:
    """The keys of a checkpoint's metadata that say which game it plays, for every agent kind:
    one ruleset (its name, hash and fields), or with ``rules`` None any ruleset, read from the
    rules observation (its version, and ``trained_on``: what the agent learned from)."""
    if rules is None:
        return {"rules_obs": RULES_OBS_VERSION, "trained_on": trained_on or "rule variants"}
    return {"ruleset_name": rules.name, "ruleset_hash": rules.hash, "ruleset": rules.to_dict()}


def with_rules_space(space: spaces.Space) -> spaces.Box:
    """``space`` (a flat Box) with the rules observation's bounds after it."""
    if not isinstance(space, spaces.Box) or len(space.shape) != 1:
        raise TypeError(f"the rules observation extends a flat Box observation space, not {space}")
    high = np.concatenate([space.high, np.full(RULES_OBS_SIZE, 2.0, np.float32)]).astype(np.float32)
    return spaces.Box(np.zeros_like(high), high, dtype=np.float32)


class RulesObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """A tenk env (``TenThousand-v0``) whose observations end with its ruleset's rules
    observation (:func:`rules_obs`); ``metadata["rules_obs_version"]`` names the layout.

    ## Observation Space
    ``Box(0, high, (56 + 5 * n_players + 33,), float32)``: the env's own observation
    (:mod:`tenk_env.obs`), then the 33 values of :func:`rules_obs` (in [0, 2])."""

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self._rules = rules_obs(_rules_of(env))
        self.observation_space = with_rules_space(env.observation_space)
        self.metadata = {**env.metadata, "rules_obs_version": RULES_OBS_VERSION}

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return np.concatenate([observation, self._rules])


class RulesObservationVector(gym.vector.VectorWrapper):
    """:class:`RulesObservation` for the vector env (``gym.make_vec("TenThousand-v0", ...)``):
    every row of a batch ends with the rules observation, the last observation of a finished
    game (``infos["final_obs"]``, same-step autoreset) included."""

    def __init__(self, env: gym.vector.VectorEnv):
        super().__init__(env)
        self._rules = rules_obs(_rules_of(env))
        self.single_observation_space = with_rules_space(env.single_observation_space)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, env.num_envs)
        self.metadata = {**env.metadata, "rules_obs_version": RULES_OBS_VERSION}

    def _add(self, observations: np.ndarray) -> np.ndarray:
        return np.concatenate([observations, np.broadcast_to(self._rules, (len(observations), RULES_OBS_SIZE))], axis=1)

    def reset(self, *, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        return self._add(obs), infos

    def step(self, actions):
        obs, rewards, terminated, truncated, infos = self.env.step(actions)
        if "final_obs" in infos:
            final = infos["final_obs"].copy()
            for i in np.flatnonzero(infos["_final_obs"]):
                final[i] = np.concatenate([final[i], self._rules])
            infos = {**infos, "final_obs": final}
        return self._add(obs), rewards, terminated, truncated, infos


def _rules_of(env) -> Ruleset:
    rules = getattr(env.unwrapped, "rules", None)
    if not isinstance(rules, Ruleset):
        raise TypeError(f"{env!r} is not a tenk env (it has no ruleset to describe): wrap TenThousand-v0")
    return rules
