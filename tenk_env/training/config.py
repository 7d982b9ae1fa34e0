"""Training configs: YAML in, a validated :class:`TrainConfig` out.

Every field is declared once below, with its default and a help line (CleanRL's style:
the dataclass is the documentation). Loading checks every key at every level: an
unknown key names the closest known one, a value of the wrong type names the type it
wants, and the ruleset, the agent specs of the opponent pool and the evaluation
opponents are built and checked against the ruleset before training starts, so a typo
fails in a second instead of after an hour.

Overrides (``tenk train --set ppo.learning_rate=1e-3``) use dotted keys and YAML values.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tenk_env import variants
from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS
from tenk_env.io import find_config, read_yaml_mapping, shipped_configs
from tenk_env.obs import n_actions, obs_size
from tenk_env.policies.base import AGENTS, make_agent
from tenk_env.rules import Ruleset, RulesetError, did_you_mean, load_ruleset
from tenk_env.rules_obs import RULES_OBS_SIZE

# the dialect's machinery; its names stay importable from here for the trainers
from tenk_env.schema import ConfigError, build_section, coerce, config_field, public_fields
from tenk_env.schema import describe_fields as _describe_fields
from tenk_env.solve.game import is_solvable

__all__ = [
    "ConfigError",
    "RunConfig",
    "TrainConfig",
    "EnvConfig",
    "PPOConfig",
    "SelfPlayConfig",
    "EvalConfig",
    "CheckpointConfig",
    "load_config",
    "parse_config",
    "apply_overrides",
    "config_to_dict",
    "SELF",
    "DEFAULT_EVAL_OPPONENTS",
    "BACKENDS",
    "SUITE_KEYS",
    "training_rules",
]

#: the opponent-pool entry that stands for frozen snapshots of the learner
SELF = "self"
#: evaluation opponents when the config names none (weakest first); ``optimal`` joins them
#: where its solver plays the ruleset
DEFAULT_EVAL_OPPONENTS = ("random", "hold:300", "dicenow")
#: how the training games are stepped (see tenk_env/training/envs.py)
BACKENDS = ("auto", "vector", "dummy", "subproc")
ACTIVATIONS = ("tanh", "relu")
#: what one of a run's replay buffer, rollout buffer or network may take of memory (a bigger
#: one is refused when the config loads, not met as a MemoryError or the OOM killer later)
MEMORY_LIMIT = 4_000_000_000
#: the memory one network parameter costs while training: float32 weights, gradient and two
#: Adam moments in torch, and the copies that play and are saved
BYTES_PER_PARAMETER = 32
#: games per evaluation opponent, and games analysed for regret, at most (as tenk evaluate)
MAX_GAMES = 1_000_000


@dataclass
class EnvConfig:
    n_envs: int = config_field("games played in parallel (SB3's n_envs); a rollout is n_envs * ppo.n_steps steps", 16)
    backend: str = config_field(
        "auto: the batched engine's VecEnv when it can run this config, else dummy; vector: "
        "insist on it; dummy: gymnasium envs stepped in this process; subproc: one process "
        "per env (rarely worth it on 2 cores)",
        "auto",
    )
    reward: str = config_field(
        "win: +1 win / -1 loss at the end only; shaped: plus banked points / target each step", "win"
    )
    tie_reward: float = config_field("reward for a shared win (only under tie: shared)", 0.0)
    shaping: float = config_field(
        "potential-based reward shaping: each step also pays coef * (change of the potential); "
        "the best policy is unchanged (0: off)",
        0.0,
    )
    shaping_potential: str = config_field(
        "margin: (own - best other score) / target, any ruleset (the only potential: "
        "none is read off the exact solver, which measures agents and never trains them)",
        "margin",
    )
    shaping_end: float | None = config_field(
        "anneal the shaping coefficient linearly to this by total_steps (null: "
        "constant). Shaping speeds up learning what a turn is worth; ending at 0 "
        "leaves the last stretch to the win reward alone",
        None,
    )
    seat: int | str = config_field("the learner's seat, or random (a new seat every game)", "random")


@dataclass
class PPOConfig:
    learning_rate: float = config_field("Adam step size", 3e-4)
    lr_end: float | None = config_field("anneal the step size linearly to this by total_steps (null: constant)", None)
    n_steps: int = config_field("steps per env per rollout", 128)
    batch_size: int = config_field("minibatch size of the gradient steps", 1024)
    n_epochs: int = config_field("passes over each rollout", 4)
    gamma: float = config_field("discount; 1.0 suits a game scored only at its end", 1.0)
    gae_lambda: float = config_field("GAE lambda", 0.95)
    clip_range: float = config_field("PPO clip range", 0.2)
    ent_coef: float = config_field("entropy bonus", 0.01)
    vf_coef: float = config_field("value-loss weight", 0.5)
    max_grad_norm: float = config_field("gradient clipping", 0.5)
    target_kl: float | None = config_field("stop a rollout's epochs early past this KL (null: never)", None)
    normalize_advantage: bool = config_field("normalise advantages per minibatch", True)
    net_arch: list[int] = config_field(
        "hidden layer sizes of the policy and the value MLPs", factory=lambda: [128, 128]
    )
    activation: str = config_field("tanh or relu", "tanh")
    policy: str = config_field(
        "action head: keep_aware (SB3's linear head plus the points, banking and dice left of "
        "each action, from the scoring tables; see tenk_env/policies/ppo.py) or mlp (SB3's alone)",
        "keep_aware",
    )


@dataclass
class SelfPlayConfig:
    snapshot_every: int = config_field("steps between frozen snapshots of the learner (the 'self' pool entry)", 100_000)
    league_size: int = config_field("the league: the last N snapshots ...", 5)
    include_best: bool = config_field("... plus best.zip", True)


@dataclass
class EvalConfig:
    every: int = config_field("steps between evaluations (0: only at the end)", 100_000)
    games: int = config_field("games per evaluation opponent (seat-balanced: half in each seat)", 1000)
    opponents: list[str] | None = config_field(
        "agent specs, weakest first (null: random, hold:300, dicenow, and optimal where it plays the ruleset)", None
    )
    best_by: str | None = config_field(
        "best.zip is the checkpoint with the highest win rate against this "
        "opponent (null: the last, strongest, evaluation opponent)",
        None,
    )
    final_games: int = config_field("games per opponent in the evaluation after the last step (0: same as games)", 0)
    at_start: bool = config_field("evaluate the untrained policy too (the curves then start at step 0)", True)
    workers: int = config_field("processes playing the evaluation games on the scalar engine", 1)
    backend: str = config_field(
        "auto: the batched engine against opponents it has batched forms of (the bots, "
        "maxscore, random, PPO), the scalar engine against the rest; scalar / batched: force one. "
        "Both play the same games",
        "auto",
    )
    seed: int = config_field("dice seed of the evaluation matches (the same deals every time, so curves compare)", 2024)
    rulesets: int = config_field(
        "with rules drawn from the suite: evaluate on this many of the training rulesets (the "
        "win rate of all their games; the held-out splits are measured afterwards with tenk "
        "suite evaluate)",
        4,
    )
    regret_games: int = config_field(
        "games analysed against optimal at each evaluation (tenk analyze): eval/regret is the exact win probability "
        "the learner gives away per game, with a 95% interval, in regret.csv and TensorBoard as a probability (0.01 "
        "is the 1 pp/game the logs print); 0: off. Only where "
        "the game solver covers the ruleset (2 players); the first use solves the game once (about a minute on "
        "classic, 40 on zilch, then cached)",
        200,
    )


@dataclass
class CheckpointConfig:
    every: int = config_field("steps between checkpoints (last.zip and checkpoints/step_N.zip)", 200_000)
    keep: int = config_field("step checkpoints kept (the oldest are deleted; best.zip and last.zip always stay)", 3)


@dataclass(frozen=True)
class Resolved:
    """What validating a config derives from its keys (never read from YAML, never written)."""

    #: the ruleset of the games; with rules drawn from the suite, the first of them
    ruleset: Ruleset
    #: every ruleset a training game may be drawn from
    rulesets: list[Ruleset]
    #: the ruleset's name, or the suite split the rulesets were drawn from
    trained_on: str
    #: (agent spec or 'self', probability) per opponent-pool entry
    pool: list[tuple[str, float]]
    eval_opponents: list[str]
    #: evaluations analyse regret: regret games asked for, one ruleset, and the game solver covers it
    regret_on: bool


@dataclass
class RunConfig:
    """The keys every training config starts with (PPO's and the afterstate family's)."""

    name: str | None = config_field("run name: the run writes RUNS_DIR/NAME (null: the config file's name)", None)
    runs_dir: str = config_field("where run directories go", "runs")
    rules: Any = config_field("ruleset: a preset name, a YAML path or a mapping of ruleset fields", "classic")
    n_players: int = config_field("players per game", 2)
    #: set by validation (parse_config, parse_afterstate_config)
    _resolved: Resolved | None = field(default=None, repr=False, compare=False, metadata={"internal": True})

    @property
    def resolved(self) -> Resolved:
        if self._resolved is None:
            raise RuntimeError("this config was not validated: build it with load_config or parse_config")
        return self._resolved

    @property
    def ruleset(self) -> Ruleset:
        """The ruleset of the games; with rules drawn from the suite, the first of them."""
        return self.resolved.ruleset

    @property
    def rulesets(self) -> list[Ruleset]:
        """Every ruleset a training game may be drawn from."""
        return self.resolved.rulesets

    @property
    def trained_on(self) -> str:
        return self.resolved.trained_on

    @property
    def pool(self) -> list[tuple[str, float]]:
        """(agent spec or 'self', probability) per pool entry."""
        return self.resolved.pool

    @property
    def eval_opponents(self) -> list[str]:
        return self.resolved.eval_opponents

    @property
    def regret_on(self) -> bool:
        """Whether evaluations analyse regret: ``eval.regret_games`` > 0 and the game solver
        covers the ruleset and player count."""
        return self.resolved.regret_on


@dataclass
class TrainConfig(RunConfig):
    seed: int = config_field("seed of the networks, the training dice and the opponent draws", 0)
    rules_obs: bool = config_field(
        "the policy also reads the rules observation (tenk_env.rules_obs), so it can play "
        "any ruleset; required with rules drawn from the suite (rules: {suite: train, "
        "count: N}); needs ppo.policy: mlp and env.backend dummy or subproc",
        False,
    )
    total_steps: int = config_field("learner decisions to train for", 1_000_000)
    opponents: Any = config_field(
        "opponent pool, drawn per game: a list of agent specs (equal weights) or a mapping "
        "spec: weight; 'self' draws a frozen snapshot of the learner (see selfplay)",
        factory=lambda: ["random"],
    )
    torch_threads: int = config_field("torch threads for the gradient steps", 1)
    env: EnvConfig = config_field("training games", factory=EnvConfig)
    ppo: PPOConfig = config_field("MaskablePPO hyperparameters", factory=PPOConfig)
    selfplay: SelfPlayConfig = config_field("snapshots of the learner as opponents", factory=SelfPlayConfig)
    eval: EvalConfig = config_field("evaluation matches during training", factory=EvalConfig)
    checkpoint: CheckpointConfig = config_field("checkpoints", factory=CheckpointConfig)

    @property
    def from_suite(self) -> bool:
        """Whether each game draws its ruleset from the suite's train split."""
        return isinstance(self.rules, dict) and "suite" in self.rules

    @property
    def best_by(self) -> str:
        return self.eval.best_by or self.eval_opponents[-1]

    @property
    def selfplay_on(self) -> bool:
        return any(spec == SELF for spec, _ in self.pool)


# --------------------------------------------------------------------------- semantic checks
def check_positive(key: str, v: float, zero_ok: bool = False) -> None:
    if v < 0 or (v == 0 and not zero_ok):
        raise ConfigError(f"{key} = {v!r}: must be {'0 or more' if zero_ok else 'positive'}")


def check_seed(key: str, v: int) -> None:
    # numpy and SB3 take seeds below 2**32 only, and would say so after the run directory exists
    if not 0 <= v < 2**32:
        raise ConfigError(f"{key} = {v!r}: give a seed from 0 to 2**32 - 1, e.g. {key}=1")


def check_unit(key: str, v: float, closed: bool = True) -> None:
    if not (0 <= v <= 1 if closed else 0 < v <= 1):
        raise ConfigError(f"{key} = {v!r}: must lie in {'[0, 1]' if closed else '(0, 1]'}")


def _size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n / 1e3:,.1f} kB"


def check_memory(key: str, value: Any, nbytes: float, what: str, example: str) -> None:
    """ConfigError when ``what`` (sized by ``key = value``) would take over MEMORY_LIMIT."""
    if nbytes > MEMORY_LIMIT:
        raise ConfigError(
            f"{key} = {value}: {what} would take {_size(nbytes)} of memory, over the limit of "
            f"{_size(MEMORY_LIMIT)}; lower it, e.g. {example}"
        )


def mlp_parameters(sizes: list[int]) -> int:
    """Weights and biases of a fully connected net with these layer sizes (input first)."""
    return sum((a + 1) * b for a, b in zip(sizes, sizes[1:]))


def check_games(key: str, v: int) -> None:
    if v > MAX_GAMES:
        raise ConfigError(f"{key} = {v:,}: give at most {MAX_GAMES:,} games per evaluation")


def check_choice(key: str, v: str, allowed) -> None:
    if v not in allowed:
        raise ConfigError(f"{key} = {v!r}{did_you_mean(str(v), allowed)}: choose one of {', '.join(allowed)}")


#: the keys of ``rules: {suite: train, count: N}``
SUITE_KEYS = ("suite", "count")


def training_rules(spec: Any) -> tuple[list[Ruleset], str | None]:
    """The rulesets training games are drawn from, and (rules drawn from the suite) what they are."""
    if isinstance(spec, dict) and "suite" in spec:
        extra = sorted(set(spec) - set(SUITE_KEYS))
        if extra:
            raise ConfigError(f"rules: {{suite: ...}} takes the keys {', '.join(SUITE_KEYS)}, not {', '.join(extra)}")
        if spec["suite"] != "train":
            raise ConfigError(
                f"rules.suite = {spec['suite']!r}: training draws from the suite's train split only "
                "(test and presets are what the agent is measured on); use suite: train"
            )
        count = spec.get("count", 100)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigError(f"rules.count = {count!r}: give how many training rulesets to draw games from, e.g. 100")
        return (
            variants.split("train", count),
            f"the first {count} rulesets of the suite's train split (variant space v{variants.SPACE_VERSION})",
        )
    try:
        return [load_ruleset(spec)], None
    except (RulesetError, FileNotFoundError) as e:
        raise ConfigError(f"rules: {e}") from None


def check_agent(key: str, spec: str, rules: Ruleset, n_players: int) -> None:
    try:
        make_agent(spec).check(rules, n_players)
    except ValueError as e:
        raise ConfigError(f"{key}: {e}") from None


def parse_pool(value: Any) -> list[tuple[str, float]]:
    if isinstance(value, str):
        value = [value]
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = []
        for i, v in enumerate(value):
            if isinstance(v, Mapping):
                if set(v) - {"agent", "weight"} or "agent" not in v:
                    raise ConfigError(
                        f"opponents[{i}] = {dict(v)!r}: give an agent spec, or {{agent: SPEC, weight: W}}"
                    )
                items.append((v["agent"], v.get("weight", 1.0)))
            else:
                items.append((v, 1.0))
    else:
        raise ConfigError(f"opponents: {value!r}: give a list of agent specs or a mapping spec: weight")
    if not items:
        raise ConfigError("opponents: the pool is empty; name at least one agent (e.g. [random, dicenow, self])")
    out = []
    for spec, w in items:
        if not isinstance(spec, str):
            raise ConfigError(f"opponents: {spec!r} is not an agent spec; write specs as strings like 'hold:300'")
        w = coerce(w, float, f"opponents[{spec}] weight")
        if not w > 0 or math.isinf(w):
            raise ConfigError(f"opponents: weight of {spec!r} is {w!r}; give a positive number")
        out.append((spec, w))
    specs = [s for s, _ in out]
    dup = next((s for s in specs if specs.count(s) > 1), None)
    if dup:
        raise ConfigError(f"opponents: {dup!r} is listed twice; give it once with the summed weight")
    total = sum(w for _, w in out)
    return [(s, w / total) for s, w in out]


def default_eval_opponents(rules: Ruleset, n_players: int) -> list[str]:
    opps = list(DEFAULT_EVAL_OPPONENTS)
    if "optimal" in AGENTS:
        try:
            make_agent("optimal").check(rules, n_players)
        except (ValueError, ImportError):
            pass  # no exact solution for this ruleset / player count: evaluate against the bots
        else:
            opps.append("optimal")
    return opps


def validate(cfg: TrainConfig) -> TrainConfig:
    """Range and cross-field checks; builds the ruleset, the pool and the eval opponents."""
    pool_rules, suite = training_rules(cfg.rules)
    rules = pool_rules[0]
    if suite and not cfg.rules_obs:
        raise ConfigError(
            "rules: {suite: train}: a policy trained on many rulesets must be told which one it plays; "
            "set rules_obs: true"
        )
    if cfg.rules_obs:
        if cfg.ppo.policy == "keep_aware":
            raise ConfigError(
                "rules_obs: true with ppo.policy = keep_aware: the keep-aware head reads one ruleset's "
                "scoring tables, fixed when the policy is built; set ppo.policy: mlp"
            )
        if cfg.env.backend == "vector":
            raise ConfigError(
                "rules_obs: true with env.backend = vector: the batched engine steps one ruleset, "
                "without the rules observation; set env.backend: dummy (or auto)"
            )
    if not MIN_PLAYERS <= cfg.n_players <= MAX_PLAYERS:
        raise ConfigError(f"n_players = {cfg.n_players}: choose {MIN_PLAYERS} to {MAX_PLAYERS}")
    if cfg.name is not None and (not cfg.name or "/" in cfg.name or cfg.name in (".", "..")):
        raise ConfigError(f"name = {cfg.name!r}: give a plain directory name (no '/'), e.g. ppo_demo")
    check_seed("seed", cfg.seed)
    check_positive("total_steps", cfg.total_steps)
    check_positive("torch_threads", cfg.torch_threads)
    e, p, s, ev, c = cfg.env, cfg.ppo, cfg.selfplay, cfg.eval, cfg.checkpoint
    check_positive("env.n_envs", e.n_envs)
    check_choice("env.backend", e.backend, BACKENDS)
    check_choice("env.reward", e.reward, ("win", "shaped"))
    check_positive("env.shaping", e.shaping, zero_ok=True)
    if e.shaping_end is not None:
        check_positive("env.shaping_end", e.shaping_end, zero_ok=True)
    if e.shaping_potential == "win_prob":
        raise ConfigError(
            "env.shaping_potential = win_prob is not offered: a potential read off the exact game "
            "solution would train agents on the solver's values, and the solver only measures them; "
            "use shaping_potential: margin"
        )
    check_choice("env.shaping_potential", e.shaping_potential, ("margin",))
    if isinstance(e.seat, str):
        check_choice("env.seat", e.seat, ("random",))
    elif not 0 <= e.seat < cfg.n_players:
        raise ConfigError(f"env.seat = {e.seat}: give a seat 0 to {cfg.n_players - 1} or random")
    check_positive("ppo.learning_rate", p.learning_rate)
    if p.lr_end is not None:
        check_positive("ppo.lr_end", p.lr_end, zero_ok=True)
    check_positive("ppo.n_steps", p.n_steps)
    check_positive("ppo.batch_size", p.batch_size)
    check_positive("ppo.n_epochs", p.n_epochs)
    check_unit("ppo.gamma", p.gamma, closed=False)
    check_unit("ppo.gae_lambda", p.gae_lambda)
    check_positive("ppo.clip_range", p.clip_range)
    check_positive("ppo.ent_coef", p.ent_coef, zero_ok=True)
    check_positive("ppo.vf_coef", p.vf_coef, zero_ok=True)
    check_positive("ppo.max_grad_norm", p.max_grad_norm)
    if p.target_kl is not None:
        check_positive("ppo.target_kl", p.target_kl)
    if not p.net_arch or any(h <= 0 for h in p.net_arch):
        raise ConfigError(f"ppo.net_arch = {p.net_arch!r}: give one or more positive layer sizes, e.g. [128, 128]")
    n_obs, n_act = obs_size(cfg.n_players) + (RULES_OBS_SIZE if cfg.rules_obs else 0), n_actions(rules)
    if any(n_actions(r) != n_act for r in pool_rules):
        raise ConfigError(
            "rules: the drawn rulesets differ in their action count (piggyback adds two actions); "
            "one policy needs one action space"
        )
    params = 2 * mlp_parameters([n_obs, *p.net_arch]) + p.net_arch[-1] * (n_act + 1)  # policy and value nets
    check_memory(
        "ppo.net_arch",
        p.net_arch,
        params * BYTES_PER_PARAMETER,
        f"the policy and value networks ({params:,} parameters)",
        "ppo.net_arch=[128, 128]",
    )
    # SB3's rollout buffer: float32 observations and action masks, plus a few floats per step
    steps = e.n_envs * p.n_steps
    check_memory(
        "env.n_envs * ppo.n_steps",
        f"{steps:,}",
        steps * 4 * (n_obs + n_act + 8),
        f"the rollout buffer ({steps:,} steps of {4 * (n_obs + n_act + 8):,} bytes)",
        "env.n_envs=16 and ppo.n_steps=128",
    )
    check_choice("ppo.activation", p.activation, ACTIVATIONS)
    check_choice("ppo.policy", p.policy, ("keep_aware", "mlp"))
    rollout = e.n_envs * p.n_steps
    if p.batch_size > rollout:
        raise ConfigError(
            f"ppo.batch_size = {p.batch_size} exceeds the rollout (env.n_envs * ppo.n_steps = "
            f"{rollout}); lower it or raise ppo.n_steps"
        )
    check_positive("selfplay.snapshot_every", s.snapshot_every)
    check_positive("selfplay.league_size", s.league_size)
    check_positive("eval.every", ev.every, zero_ok=True)
    if ev.games < 2:
        raise ConfigError(f"eval.games = {ev.games}: a seat-balanced match needs at least 2 games")
    check_games("eval.games", ev.games)
    check_positive("eval.final_games", ev.final_games, zero_ok=True)
    check_games("eval.final_games", ev.final_games)
    check_positive("eval.workers", ev.workers)
    check_seed("eval.seed", ev.seed)
    check_positive("eval.regret_games", ev.regret_games, zero_ok=True)
    check_games("eval.regret_games", ev.regret_games)
    check_choice("eval.backend", ev.backend, ("scalar", "batched", "auto"))
    check_positive("eval.rulesets", ev.rulesets)
    check_positive("checkpoint.every", c.every)
    check_positive("checkpoint.keep", c.keep)

    pool = parse_pool(cfg.opponents)
    for spec, _ in pool:
        if spec != SELF:
            for r in pool_rules:
                check_agent(f"opponents: {spec!r}", spec, r, cfg.n_players)
    eval_rules = pool_rules[: ev.rulesets]
    if ev.opponents is None:
        # optimal would solve each evaluation ruleset first; the suite measures a generalist against it
        opps = list(DEFAULT_EVAL_OPPONENTS) if suite else default_eval_opponents(rules, cfg.n_players)
    else:
        if not ev.opponents:
            raise ConfigError("eval.opponents is empty; name at least one agent, or null for the default")
        opps = list(ev.opponents)
        for spec in opps:
            if spec == SELF:
                raise ConfigError("eval.opponents: 'self' is a training-pool entry; evaluate against agent specs")
            for r in eval_rules:
                check_agent(f"eval.opponents: {spec!r}", spec, r, cfg.n_players)
        dup = next((o for o in opps if opps.count(o) > 1), None)
        if dup:
            raise ConfigError(f"eval.opponents: {dup!r} is listed twice")
    if ev.best_by is not None and ev.best_by not in opps:
        raise ConfigError(
            f"eval.best_by = {ev.best_by!r}{did_you_mean(ev.best_by, opps)}: it must be one of "
            f"the evaluation opponents ({', '.join(opps)})"
        )
    # regret needs each ruleset's game solved: kept to the one-ruleset runs (the suite measures the others)
    regret_on = ev.regret_games > 0 and not suite and is_solvable(rules, cfg.n_players)
    cfg._resolved = Resolved(rules, pool_rules, suite or rules.name, pool, opps, regret_on)
    return cfg


# --------------------------------------------------------------------------- entry points
def parse_config(data: Any, source: str = "config") -> TrainConfig:
    try:
        cfg = build_section(TrainConfig, data, "")
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None
    try:
        return validate(cfg)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def read_yaml(path: str | Path) -> dict[str, Any]:
    return read_yaml_mapping(
        find_config(path),
        "config",
        ConfigError,
        f"give a file, or the name of a shipped config ({', '.join(shipped_configs())})",
    )


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], cls: type = TrainConfig) -> dict[str, Any]:
    """``key=value`` overrides (dotted keys, YAML values) applied to raw config data of ``cls``."""
    data = _deepcopy(data)
    sections = {f.name: typing.get_type_hints(cls)[f.name] for f in public_fields(cls)}
    for item in overrides:
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"--set {item!r}: write key=value, e.g. --set ppo.learning_rate=1e-3")
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as e:
            raise ConfigError(f"--set {item!r}: the value is not valid YAML ({e})") from None
        parts = key.split(".")
        if parts[0] not in sections:
            raise ConfigError(
                f"--set {key}: unknown config key {parts[0]!r}{did_you_mean(parts[0], sections)}; "
                f"keys: {', '.join(sections)}"
            )
        tp = sections[parts[0]]
        if dataclasses.is_dataclass(tp):
            if len(parts) != 2:
                names = [f.name for f in public_fields(tp)]
                raise ConfigError(
                    f"--set {key}: {parts[0]} is a section; set one of its keys, e.g. "
                    f"--set {parts[0]}.{names[0]}=... ({', '.join(names)})"
                )
            sub = data.get(parts[0])
            if sub is None:
                sub = data[parts[0]] = {}
            elif not isinstance(sub, dict):
                raise ConfigError(f"{parts[0]} is not a mapping in the config; fix the file")
            sub[parts[1]] = value
        elif len(parts) == 1:
            data[key] = value
        else:
            raise ConfigError(f"--set {key}: {parts[0]} is not a section; write --set {parts[0]}=VALUE")
    return data


def _deepcopy(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _deepcopy(v) for k, v in d.items()}
    if isinstance(d, list):
        return [_deepcopy(v) for v in d]
    return d


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> TrainConfig:
    """Read, override, validate. The run name defaults to the file's stem."""
    path = Path(path)
    data = apply_overrides(read_yaml(path), list(overrides))
    data.setdefault("name", None)
    if data["name"] is None:
        data["name"] = path.stem
    return parse_config(data, source=f"config {str(path)!r}")


def config_to_dict(cfg: TrainConfig, *, expand_rules: bool = True) -> dict[str, Any]:
    """Plain data of the config (what the run directory's config.yaml holds). The ruleset is
    written out field by field, so the snapshot replays the run even if a preset changes."""

    def conv(obj):
        out = {}
        for f in public_fields(type(obj)):
            v = getattr(obj, f.name)
            out[f.name] = conv(v) if dataclasses.is_dataclass(v) else _deepcopy(v)
        return out

    d = conv(cfg)
    if expand_rules and not cfg.from_suite:
        d["rules"] = cfg.ruleset.to_dict()
    return d


def describe_fields(cls: type = TrainConfig, prefix: str = "") -> list[tuple[str, str, str]]:
    """(key, default, help) rows for every key of a training config (PPO's by default)."""
    return _describe_fields(cls, prefix)
