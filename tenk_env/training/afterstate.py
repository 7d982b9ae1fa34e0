"""``tenk train`` for afterstate agents (``algo: afterstate``; see :mod:`tenk_env.policies.afterstate`).

The learner plays whole games (self-play, or one seat against a pool of bots and itself).
At the start of each of its turns it plans the turn against its value net; the plan's
value of the turn-start position, one full expectimax step over the turn backed up from
the net's values of the positions the turn can lead to, is the regression target of that
position (fitted value iteration over the positions play visits). Targets are
lambda-returns, ``G = (1 - lam) * backup + lam * G(next turn start)`` back from the game's
result, ``lam`` annealed to 0 (pure backups); a fixed bot's turn passes ``G`` on. The
targets go to a replay buffer; every ``train_every`` new targets the net takes
``grad_steps`` Adam steps on the cross-entropy between its softmax and the targets. The
exact game solver is never read: it only measures the agent (``eval.regret_games``).

A run directory holds ``config.yaml``, ``run.yaml``, ``tb/`` (TensorBoard:
``eval/win_rate/<opponent>``, ``eval/regret``, ``train/loss``, ``train/turns_per_second``),
``eval.csv``, ``regret.csv``, ``last.npz`` and ``best.npz`` (agents: ``afterstate:PATH``),
and ``state.pt`` (net, optimizer, replay buffer, counters, random state), all written
atomically; ``tenk train --resume runs/NAME`` continues from ``state.pt``, and Ctrl-C saves
it first. A killed run resumes from its newest ``state.pt`` (from turn 0 in place when it was
killed before the first): what the killed session did past it (evaluation rows, TensorBoard
points) is replayed, not kept. ``max_minutes`` ends a session after that much wall time
(resume continues).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS, Game, Phase
from tenk_env.io import DirLock, atomic_write_bytes, atomic_write_text
from tenk_env.policies.afterstate import (
    FEATURES_VERSION,
    AfterstateAgent,
    AfterstateError,
    ValueNet,
    check_rules,
    checkpoint_meta,
    n_features,
    plan_turn,
    position_features,
    save_checkpoint,
    win_shares,
)
from tenk_env.policies.base import make_agent
from tenk_env.rules import did_you_mean
from tenk_env.rules_obs import RULES_OBS_VERSION
from tenk_env.solve.game import is_solvable
from tenk_env.threads import one_blas_thread
from tenk_env.training.config import (
    BYTES_PER_PARAMETER,
    DEFAULT_EVAL_OPPONENTS,
    SELF,
    ConfigError,
    Resolved,
    RunConfig,
    apply_overrides,
    build_section,
    check_agent,
    check_choice,
    check_games,
    check_memory,
    check_positive,
    check_seed,
    check_unit,
    config_field,
    mlp_parameters,
    parse_pool,
    public_fields,
    read_yaml,
    training_rules,
)
from tenk_env.training.rundir import (
    RunError,
    StopRequest,
    append_rows,
    check_run_dir,
    read_rows,
    run_record,
    start_run,
    tb_writer,
    write_rows,
)
from tenk_env.training.trainer import LinearSchedule, evaluate_agent, log_regret, pooled_row, tag_name
from tenk_env.units import regret_text

__all__ = ["AfterstateConfig", "load_afterstate_config", "train_afterstate", "resume_afterstate", "ALGO"]

ALGO = "afterstate"
EVAL_FIELDS = ["turns", "opponent", "games", "win_rate", "ci_low", "ci_high", "seconds"]
#: what an afterstate run directory holds (--force deletes only these)
RUN_ENTRIES = {
    "config.yaml",
    "run.yaml",
    "tb",
    "eval.csv",
    "regret.csv",
    "best.npz",
    "last.npz",
    "state.pt",
    "done.yaml",
    "paused.yaml",
    "evals",
}
REGRET_FIELDS = ["turns", "games", "regret", "regret_ci_low", "regret_ci_high", "implied_win_rate", "seconds"]
#: significant digits of the floats in eval.csv and regret.csv
DIGITS = 6


@dataclass
class AfterstateEvalConfig:
    every: int = config_field("learner turns between evaluations (0: only at the end)", 20_000)
    games: int = config_field(
        "games per evaluation opponent (2 players: seat-balanced; more: every seat rotation, the "
        "learner against copies of the opponent)",
        400,
    )
    opponents: list[str] | None = config_field("agent specs (null: random, hold:300, dicenow)", None)
    best_by: str | None = config_field(
        "best.npz: the highest win rate against this opponent, or 'regret': the lowest "
        "regret (null: regret where the game solver covers the game, else the last "
        "opponent)",
        None,
    )
    regret_games: int = config_field(
        "games analysed against optimal at each evaluation (2 players, rulesets the game solver plays; 0: off)", 200
    )
    seed: int = config_field("dice seed of the evaluation games (the same deals every time)", 2024)
    keep: bool = config_field(
        "also keep the net of every evaluation, as evals/turns_N.npz (for learning curves "
        "measured afterwards: tenk suite curve RUN)",
        False,
    )
    rulesets: int = config_field(
        "with rules drawn from the suite: evaluate on this many of the training rulesets (the "
        "first ones; games per opponent on each)",
        4,
    )


@dataclass
class AfterstateConfig(RunConfig):
    algo: str = config_field(
        "the learner family: afterstate selects this trainer and these keys; a config without algo trains PPO", ALGO
    )
    seed: int = config_field("seed of the net, the dice, the seat and opponent draws and the exploration", 0)
    total_turns: int = config_field("learner turns to train for (one regression target each)", 300_000)
    max_minutes: float = config_field(
        "end this session after this much wall time (0: no limit); --resume continues", 0.0
    )
    rules_obs: bool = config_field(
        "the value net also reads the rules observation (tenk_env.rules_obs), so it can "
        "play any ruleset; required with rules drawn from the suite",
        False,
    )
    opponents: Any = config_field(
        "who plays the other seats, drawn per seat per game: 'self' (the learner: self-play) or "
        "agent specs, as a list or a mapping spec: weight",
        factory=lambda: [SELF],
    )
    hidden: list[int] = config_field("hidden layer sizes of the value MLP (SiLU)", factory=lambda: [64, 64])
    learning_rate: float = config_field("Adam step size", 1e-3)
    lr_end: float | None = config_field("anneal the step size linearly to this by total_turns (null: constant)", None)
    batch_size: int = config_field("targets per gradient step", 256)
    train_every: int = config_field("new targets between training phases", 256)
    grad_steps: int = config_field("gradient steps per training phase", 8)
    buffer: int = config_field("replay buffer size (the newest targets)", 100_000)
    lam: float = config_field(
        "lambda of the targets: (1 - lam) * the turn's expectimax backup + lam * the target of the "
        "next turn start, back from the game's result (0: pure backups; 1: Monte-Carlo results)",
        0.7,
    )
    lam_end: float | None = config_field("anneal lam linearly to this by total_turns (null: constant)", 0.0)
    other_seats: str = config_field(
        "with 3 or more players, the backup of the seats not moving: plan (their chances under "
        "the mover's plan, one more turn evaluation per seat) or net (the net's own estimate, "
        "scaled to what the mover's backup leaves: one evaluation per turn in all)",
        "plan",
    )
    explore: float = config_field(
        "chance that a learner decision is a uniformly random legal move (the target stays the "
        "planned value; this only widens the positions visited)",
        0.02,
    )
    max_game_turns: int = config_field(
        "a training game still running after this many turns is abandoned (an untrained net may never bank)", 400
    )
    torch_threads: int = config_field("torch threads for the gradient steps", 1)
    checkpoint_every: int = config_field("learner turns between saves of last.npz and state.pt", 20_000)
    eval: AfterstateEvalConfig = config_field("evaluation during training", factory=AfterstateEvalConfig)

    @property
    def best_by(self) -> str:
        if self.eval.best_by:
            return self.eval.best_by
        return "regret" if self.regret_on else self.eval_opponents[-1]


def _validate(cfg: AfterstateConfig) -> AfterstateConfig:
    check_choice("algo", cfg.algo, (ALGO,))
    pool_rules, suite = training_rules(cfg.rules)
    if suite and not cfg.rules_obs:
        raise ConfigError(
            "rules: {suite: train}: a net trained on many rulesets must be told which one it plays; set rules_obs: true"
        )
    rules = pool_rules[0]
    try:
        for r in pool_rules:
            check_rules(r)
    except AfterstateError as e:
        raise ConfigError(f"rules: {e}") from None
    if not MIN_PLAYERS <= cfg.n_players <= MAX_PLAYERS:
        raise ConfigError(f"n_players = {cfg.n_players}: the engine plays {MIN_PLAYERS} to {MAX_PLAYERS} players")
    check_seed("seed", cfg.seed)
    for key in (
        "total_turns",
        "batch_size",
        "train_every",
        "grad_steps",
        "buffer",
        "max_game_turns",
        "torch_threads",
        "checkpoint_every",
    ):
        check_positive(key, getattr(cfg, key))
    check_positive("max_minutes", cfg.max_minutes, zero_ok=True)
    check_positive("learning_rate", cfg.learning_rate)
    if cfg.lr_end is not None:
        check_positive("lr_end", cfg.lr_end, zero_ok=True)
    check_unit("explore", cfg.explore)
    check_choice("other_seats", cfg.other_seats, ("plan", "net"))
    check_unit("lam", cfg.lam)
    if cfg.lam_end is not None:
        check_unit("lam_end", cfg.lam_end)
    if not cfg.hidden or any(h <= 0 for h in cfg.hidden):
        raise ConfigError(f"hidden = {cfg.hidden!r}: give one or more positive layer sizes, e.g. [64, 64]")
    F, N = n_features(cfg.n_players, cfg.rules_obs), cfg.n_players
    params = mlp_parameters([F, *cfg.hidden, N])
    check_memory(
        "hidden", cfg.hidden, params * BYTES_PER_PARAMETER, f"the value net ({params:,} parameters)", "hidden=[64, 64]"
    )
    # float32 features and targets, and as much again while state.pt is written
    check_memory(
        "buffer",
        f"{cfg.buffer:,}",
        2 * cfg.buffer * 4 * (F + N),
        f"the replay buffer ({cfg.buffer:,} targets of {4 * (F + N)} bytes, twice while it is saved)",
        "buffer=100000",
    )
    pool = parse_pool(cfg.opponents)
    for spec, _ in pool:
        if spec != SELF:
            for r in pool_rules:
                check_agent(f"opponents: {spec!r}", spec, r, cfg.n_players)
    ev = cfg.eval
    check_positive("eval.every", ev.every, zero_ok=True)
    check_positive("eval.games", ev.games)
    check_positive("eval.regret_games", ev.regret_games, zero_ok=True)
    check_games("eval.games", ev.games)
    check_games("eval.regret_games", ev.regret_games)
    check_seed("eval.seed", ev.seed)
    check_positive("eval.rulesets", ev.rulesets)
    opps = list(ev.opponents) if ev.opponents is not None else list(DEFAULT_EVAL_OPPONENTS)
    if not opps:
        raise ConfigError("eval.opponents: give at least one agent spec, e.g. [dicenow]")
    for spec in opps:
        for r in pool_rules[: ev.rulesets]:
            check_agent(f"eval.opponents: {spec!r}", spec, r, cfg.n_players)
    # regret needs each ruleset's game solved: kept to the one-ruleset runs (the suite measures the others)
    regret_on = ev.regret_games > 0 and not suite and is_solvable(rules, cfg.n_players)
    allowed = opps + (["regret"] if regret_on else [])
    if ev.best_by is not None and ev.best_by not in allowed:
        raise ConfigError(
            f"eval.best_by = {ev.best_by!r}{did_you_mean(ev.best_by, allowed)}: choose one of {', '.join(allowed)}"
        )
    cfg._resolved = Resolved(rules, pool_rules, suite or rules.name, pool, opps, regret_on)
    return cfg


def parse_afterstate_config(data: Any, source: str = "config") -> AfterstateConfig:
    try:
        return _validate(build_section(AfterstateConfig, data, ""))
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def load_afterstate_config(path: str | Path, overrides: Sequence[str] = ()) -> AfterstateConfig:
    path = Path(path)
    data = apply_overrides(read_yaml(path), list(overrides), AfterstateConfig)
    if data.get("name") is None:
        data["name"] = path.stem
    return parse_afterstate_config(data, source=f"config {str(path)!r}")


def config_dict(cfg: AfterstateConfig) -> dict[str, Any]:
    out = {}
    for f in public_fields(AfterstateConfig):
        v = getattr(cfg, f.name)
        out[f.name] = {g.name: getattr(v, g.name) for g in public_fields(type(v))} if f.name == "eval" else v
    if len(cfg.rulesets) == 1:
        out["rules"] = cfg.ruleset.to_dict()
    return out


# ----------------------------------------------------------------------------- the learner
@dataclass
class AfterstateResult:
    run_dir: Path
    turns: int
    wall_seconds: float
    best: dict | None
    final: list[dict]
    interrupted: bool


class _Net:
    """The torch twin of :class:`tenk_env.policies.afterstate.ValueNet` (the one that trains)."""

    def __init__(self, n_in: int, hidden: list[int], n_out: int, lr: float):
        import torch

        self.torch = torch
        sizes = [n_in, *hidden, n_out]
        layers: list = []
        for i in range(len(sizes) - 1):
            layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(torch.nn.SiLU())
        self.model = torch.nn.Sequential(*layers)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)

    def weights(self) -> dict[str, np.ndarray]:
        lin = [m for m in self.model if isinstance(m, self.torch.nn.Linear)]
        out = {}
        for i, m in enumerate(lin):
            out[f"w{i}"] = m.weight.detach().numpy().T.copy()
            out[f"b{i}"] = m.bias.detach().numpy().copy()
        return out

    def step(self, X: np.ndarray, Y: np.ndarray, lr: float) -> float:
        torch = self.torch
        for g in self.opt.param_groups:
            g["lr"] = lr
        logits = self.model(torch.from_numpy(X))
        loss = -(torch.from_numpy(Y) * torch.log_softmax(logits, dim=1)).sum(dim=1).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


class AfterstateTrainer:
    def __init__(self, cfg: AfterstateConfig, run_dir: Path, log: Callable[[str], None] = print):
        import torch

        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        torch.set_num_threads(cfg.torch_threads)
        torch.manual_seed(cfg.seed)
        self.rules, N = cfg.ruleset, cfg.n_players
        self.rules_obs = RULES_OBS_VERSION if cfg.rules_obs else 0
        self.F = n_features(N, self.rules_obs)
        self.net = _Net(self.F, cfg.hidden, N, cfg.learning_rate)
        self.value = self._value_net()
        self.rng = np.random.default_rng(cfg.seed)
        self.X = np.zeros((cfg.buffer, self.F), dtype=np.float32)
        self.Y = np.zeros((cfg.buffer, N), dtype=np.float32)
        self.size = self.ptr = 0
        self.turns = self.games = self.abandoned = 0
        self.since_train = 0
        self.seconds = 0.0
        self.next_eval = cfg.eval.every or None
        self.next_ckpt = cfg.checkpoint_every
        self.best: dict | None = None
        self.finished = False
        # resumed: TensorBoard points past the state resumed from are a killed session's
        self.resumed = False
        self.losses: list[float] = []
        self.bots = {spec: make_agent(spec) for spec, _ in cfg.pool if spec != SELF}
        self.writer = None

    # ------------------------------------------------------------------ state
    def meta(self) -> dict[str, Any]:
        cfg = self.cfg
        return checkpoint_meta(
            None if self.rules_obs else self.rules,
            cfg.n_players,
            hidden=cfg.hidden,
            opponents_learn=all(s == SELF for s, _ in cfg.pool),
            trained_on=cfg.trained_on,
            turns=self.turns,
            run=cfg.name,
        )

    def _value_net(self) -> ValueNet:
        return ValueNet(self.net.weights(), FEATURES_VERSION, self.rules_obs)

    def agent(self) -> AfterstateAgent:
        return AfterstateAgent(self._value_net(), self.meta(), f"afterstate:{self.cfg.name}")

    def save_state(self) -> None:
        torch = self.net.torch
        buf = io.BytesIO()
        torch.save(
            {
                "model": self.net.model.state_dict(),
                "opt": self.net.opt.state_dict(),
                "X": self.X[: self.size].copy(),
                "Y": self.Y[: self.size].copy(),
                "ptr": self.ptr,
                "turns": self.turns,
                "games": self.games,
                "abandoned": self.abandoned,
                "since_train": self.since_train,
                "seconds": self.seconds,
                "next_eval": self.next_eval,
                "next_ckpt": self.next_ckpt,
                "best": self.best,
                "finished": self.finished,
                "rng": self.rng.bit_generator.state,
                "torch_rng": torch.get_rng_state(),
                "meta": self.meta(),
            },
            buf,
        )
        atomic_write_bytes(self.run_dir / "state.pt", buf.getvalue())
        save_checkpoint(self.run_dir / "last.npz", self.net.weights(), self.meta())

    def load_state(self) -> None:
        torch = self.net.torch
        path = self.run_dir / "state.pt"
        try:
            s = torch.load(path, weights_only=False)
        except Exception as e:
            raise RunError(
                f"{path}: cannot read the training state ({type(e).__name__}: {e}); start over with "
                f"tenk train --config ... --force {self.run_dir}"
            ) from None
        m, want = s["meta"], self.meta()
        if m.get("rules_obs", 0) != want.get("rules_obs", 0):
            raise RunError(
                f"{path} was trained {'with' if m.get('rules_obs') else 'without'} the rules observation; "
                f"the config sets rules_obs: {str(bool(want.get('rules_obs'))).lower()}. A net's inputs "
                "cannot change mid-run: keep rules_obs as it was, or start a new run"
            )
        game = ("ruleset_hash", "trained_on", "n_players", "hidden")
        if any(m.get(k) != want.get(k) for k in game):
            raise RunError(
                f"{path} was trained for {m.get('ruleset_name') or m.get('trained_on')!r} "
                f"({m.get('ruleset_hash', 'any ruleset')}), {m['n_players']} players, hidden {m['hidden']}; "
                "the config says otherwise. Keep the game and the net of a run when resuming it"
            )
        if m.get("features_version") != FEATURES_VERSION:
            raise RunError(
                f"{path} was trained with afterstate features v{m.get('features_version')}; this tenk "
                f"trains v{FEATURES_VERSION}, and a net cannot change versions mid-run. Its checkpoints "
                f"still play; start the run over with tenk train --config ... --force {self.run_dir}"
            )
        self.net.model.load_state_dict(s["model"])
        self.net.opt.load_state_dict(s["opt"])
        n = len(s["X"])
        self.X[:n], self.Y[:n] = s["X"][-self.cfg.buffer :], s["Y"][-self.cfg.buffer :]
        self.size, self.ptr = min(n, self.cfg.buffer), s["ptr"] % self.cfg.buffer
        for k in ("turns", "games", "abandoned", "since_train", "seconds", "next_eval", "next_ckpt", "best"):
            setattr(self, k, s[k])
        if "finished" in s:
            self.finished = bool(s["finished"])
        else:  # saved before the final evaluation by an older tenk, which then wrote done.yaml
            done = _read_done(self.run_dir / "done.yaml")
            self.finished = done.get("turns") == self.turns
        self.rng.bit_generator.state = s["rng"]
        torch.set_rng_state(s["torch_rng"])
        self.value = self._value_net()

    # ------------------------------------------------------------------ learning
    def _add(self, x: np.ndarray, y: np.ndarray) -> None:
        self.X[self.ptr], self.Y[self.ptr] = x, y
        self.ptr = (self.ptr + 1) % self.cfg.buffer
        self.size = min(self.size + 1, self.cfg.buffer)
        self.since_train += 1
        if self.since_train >= self.cfg.train_every:
            self.since_train = 0
            self._train()

    def _anneal(self, start: float, end: float | None) -> float:
        """``start`` moved linearly to ``end`` by total_turns (constant when ``end`` is None)."""
        if end is None:
            return start
        return LinearSchedule(start, end)(1.0 - min(1.0, self.turns / self.cfg.total_turns))

    def _train(self) -> None:
        cfg, lr = self.cfg, self._anneal(self.cfg.learning_rate, self.cfg.lr_end)
        for _ in range(cfg.grad_steps):
            idx = self.rng.integers(self.size, size=min(cfg.batch_size, self.size))
            self.losses.append(self.net.step(self.X[idx], self.Y[idx], lr))
        self.value = self._value_net()

    def play_game(self) -> None:
        """One training game; its positions' targets go to the buffer when it ends."""
        cfg, N, rng = self.cfg, self.cfg.n_players, self.rng
        specs, probs = zip(*cfg.pool)
        seats = [SELF] * N
        me = int(rng.integers(N))
        for s in range(N):
            if s != me:
                seats[s] = specs[int(rng.choice(len(specs), p=probs))]
        learner = tuple(s == SELF for s in seats)
        pool = cfg.rulesets
        # drawn only from a pool of many, so a one-ruleset run's dice are those it always had
        rules = pool[int(rng.integers(len(pool)))] if len(pool) > 1 else self.rules
        g = Game(rules, N, record=False)
        # (features, the plan's backup or None for a bot's turn, mover) of every turn start
        traj: list[tuple[np.ndarray, np.ndarray | None, int]] = []
        while not g.over and g.turn <= cfg.max_game_turns:
            if g.phase == Phase.ORDER:
                g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                continue
            p = g.current
            x = position_features(g, learner, FEATURES_VERSION, self.rules_obs)
            if learner[p]:
                plan = plan_turn(g, self.value, learner, all_seats=cfg.other_seats == "plan")
                backup = plan.value
                if N > 2 and cfg.other_seats == "net":
                    est = self.value(x[None])[0, 1:]
                    backup = np.concatenate([backup[:1], est * ((1.0 - backup[0]) / max(est.sum(), 1e-12))])
                traj.append((x, backup, p))
                self.turns += 1
                bot = None
            else:
                traj.append((x, None, p))
                bot = self.bots[seats[p]]
            turn = g.turn
            while not g.over and g.turn == turn:
                if g.phase == Phase.ROLL:
                    g.roll(rng.integers(1, 7, size=g.dice_to_roll))
                elif g.phase == Phase.DECIDE:
                    if bot is not None:
                        g.act(*bot.decide(g, rng))
                    elif cfg.explore and rng.random() < cfg.explore:
                        moves = g.legal_moves()
                        g.act(*moves[int(rng.integers(len(moves)))])
                    else:
                        g.act(*plan.pick(g))
                else:
                    raise RunError(f"unexpected phase {g.phase.name} in a training game")
        # lambda-returns, seats absolute: G = (1 - lam) * backup + lam * G(next); a bot's turn
        # passes G on; the game's result (or the net's value of where it was abandoned) ends it
        if g.over:
            G = win_shares(g, 0)
            self.games += 1
        else:
            G = np.roll(self.value(position_features(g, learner, FEATURES_VERSION, self.rules_obs)[None])[0], g.current)
            self.abandoned += 1
        lam = self._anneal(cfg.lam, cfg.lam_end)
        for x, backup, p in reversed(traj):
            if backup is not None:
                G = (1.0 - lam) * np.roll(backup, p) + lam * G
            self._add(x, G[(p + np.arange(N)) % N].astype(np.float32))

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, final: bool = False) -> list[dict]:
        cfg, N = self.cfg, self.cfg.n_players
        agent = self.agent()
        rows = []
        rulesets = cfg.rulesets[: cfg.eval.rulesets]
        for opp in cfg.eval_opponents:
            # over several rulesets: the win rate of all their games, with the interval of that many
            row = pooled_row(
                [
                    evaluate_agent(agent, rules, N, opp, cfg.eval.games, cfg.eval.seed, backend="scalar")
                    for rules in rulesets
                ]
            )
            games, wr, lo, hi = row.games, row.win_rate, row.ci_low, row.ci_high
            rows.append(
                {
                    "turns": self.turns,
                    "opponent": opp,
                    "games": games,
                    "win_rate": wr,
                    "ci_low": lo,
                    "ci_high": hi,
                    "seconds": round(row.seconds, 2),
                }
            )
            self.writer.add_scalar(f"eval/win_rate/{tag_name(opp)}", wr, self.turns)
            self.writer.add_scalar(f"eval/ci_low/{tag_name(opp)}", lo, self.turns)
            self.writer.add_scalar(f"eval/ci_high/{tag_name(opp)}", hi, self.turns)
            self.log(
                f"  turns {self.turns:,}: vs {opp:<10} {wr:6.1%} [{lo:.1%}, {hi:.1%}] over {games} games"
                + (f" on {len(rulesets)} rulesets" if len(rulesets) > 1 else "")
            )
        append_rows(self.run_dir / "eval.csv", EVAL_FIELDS, rows, digits=DIGITS)
        if cfg.eval.keep:
            (self.run_dir / "evals").mkdir(exist_ok=True)
            save_checkpoint(self.run_dir / "evals" / f"turns_{self.turns}.npz", self.net.weights(), self.meta())
        regret = None
        if self.cfg.regret_on:
            t0 = time.perf_counter()
            rep = log_regret(self.writer, agent, self.rules, cfg.eval.regret_games, cfg.eval.seed, self.turns)
            regret = rep.regret_per_game
            append_rows(
                self.run_dir / "regret.csv",
                REGRET_FIELDS,
                [
                    {
                        "turns": self.turns,
                        "games": rep.games,
                        "regret": rep.regret_per_game,
                        "regret_ci_low": rep.regret_ci[0],
                        "regret_ci_high": rep.regret_ci[1],
                        "implied_win_rate": rep.implied_win_rate,
                        "seconds": round(time.perf_counter() - t0, 2),
                    }
                ],
            )
            self.log(
                f"  turns {self.turns:,}: regret "
                f"{regret_text(rep.regret_per_game, rep.regret_ci, note=rep.interval_notes.get('regret'))} "
                f"({rep.implied_win_rate:.2%} vs optimal)"
            )
        self.writer.flush()
        by = self.cfg.best_by
        score = -regret if by == "regret" else next(r["win_rate"] for r in rows if r["opponent"] == by)
        if self.best is None or score > self.best["score"]:
            self.best = {"turns": self.turns, "by": by, "score": float(score)}
            save_checkpoint(self.run_dir / "best.npz", self.net.weights(), self.meta())
        return rows

    # ------------------------------------------------------------------ the loop
    def run(self) -> AfterstateResult:
        cfg = self.cfg
        # Everything at the saved turn count was written before the save (the evaluation at a
        # turn precedes its checkpoint), so a resumed session hides only what came after it;
        # with no save at all, everything.
        purge = (self.turns + 1 if self.turns else 0) if self.resumed else None
        self.writer = tb_writer(self.run_dir / "tb", purge)
        start = session = time.perf_counter()
        t_last, turns_last = start, self.turns
        interrupted = False
        one_blas_thread()
        with StopRequest(self.log) as stop:
            while self.turns < cfg.total_turns:
                if self.next_eval is not None and self.turns >= self.next_eval:
                    self.evaluate()
                    self.next_eval = self.turns + cfg.eval.every
                if self.turns >= self.next_ckpt:
                    self.seconds += time.perf_counter() - start
                    start = time.perf_counter()
                    self.save_state()
                    self.next_ckpt = self.turns + cfg.checkpoint_every
                if stop.requested or (cfg.max_minutes and time.perf_counter() - session >= cfg.max_minutes * 60):
                    interrupted = True
                    break
                self.play_game()
                now = time.perf_counter()
                if now - t_last > 30:
                    self.writer.add_scalar("train/loss", float(np.mean(self.losses[-200:] or [0.0])), self.turns)
                    self.writer.add_scalar(
                        "train/turns_per_second", (self.turns - turns_last) / (now - t_last), self.turns
                    )
                    self.writer.add_scalar("train/games", self.games, self.turns)
                    self.writer.add_scalar("train/abandoned_games", self.abandoned, self.turns)
                    self.log(
                        f"turns {self.turns:,} games {self.games:,} loss "
                        f"{np.mean(self.losses[-200:] or [0.0]):.4f} "
                        f"{(self.turns - turns_last) / (now - t_last):.0f} turns/s"
                    )
                    t_last, turns_last = now, self.turns
        final = []
        if not interrupted:
            # evaluated before the save, so the saved state holds its rows (a resume neither
            # repeats nor loses them) and a run killed during it replays it
            final = self.evaluate(final=True)
            if cfg.eval.every:
                self.next_eval = self.turns + cfg.eval.every
            self.finished = True
        self.seconds += time.perf_counter() - start
        # the summary before the state it describes: a session killed between the two resumes
        # from the previous state and writes the summary again
        status, stale = ("done.yaml", "paused.yaml") if not interrupted else ("paused.yaml", "done.yaml")
        atomic_write_text(
            self.run_dir / status,
            yaml.safe_dump({"turns": self.turns, "seconds": round(self.seconds, 1), "best": self.best}),
        )
        (self.run_dir / stale).unlink(missing_ok=True)
        self.writer.flush()
        self.save_state()
        self.writer.close()
        return AfterstateResult(self.run_dir, self.turns, self.seconds, self.best, final, interrupted)


def _read_done(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text()) if path.is_file() else {}
    except (yaml.YAMLError, UnicodeDecodeError):
        data = {}
    return data if isinstance(data, dict) else {}


def train_afterstate(
    cfg: AfterstateConfig,
    *,
    argv: list[str] | None = None,
    force: str | Path | None = None,
    log: Callable[[str], None] = print,
) -> AfterstateResult:
    run_dir = Path(cfg.runs_dir) / cfg.name

    def setup() -> Callable[[], AfterstateResult]:
        atomic_write_text(run_dir / "config.yaml", yaml.safe_dump(config_dict(cfg), sort_keys=False))
        atomic_write_text(
            run_dir / "run.yaml",
            yaml.safe_dump(
                {
                    "algo": ALGO,
                    **(
                        {"ruleset": cfg.ruleset.name, "ruleset_hash": cfg.ruleset.hash}
                        if len(cfg.rulesets) == 1
                        else {"rulesets": cfg.trained_on}
                    ),
                    **run_record(argv),
                },
                sort_keys=False,
            ),
        )
        return AfterstateTrainer(cfg, run_dir, log).run

    return start_run(run_dir, force, setup, entries=RUN_ENTRIES, log=log)


def resume_afterstate(
    run_dir: str | Path, overrides: Sequence[str] = (), *, log: Callable[[str], None] = print
) -> AfterstateResult:
    """Continue the run in ``run_dir`` from its state.pt (from turn 0 in place when it was
    killed before its first save). Evaluation rows and TensorBoard points past that state
    are a killed session's, and go: the resumed session plays those evaluations again."""
    run_dir = check_run_dir(run_dir)
    data = apply_overrides(read_yaml(run_dir / "config.yaml"), list(overrides), AfterstateConfig)
    cfg = parse_afterstate_config(data, source=f"{run_dir / 'config.yaml'}")
    with DirLock(run_dir, "run directory"):
        # read and check everything first: an error leaves the directory as it was
        tables = [(run_dir / "eval.csv", EVAL_FIELDS), (run_dir / "regret.csv", REGRET_FIELDS)]
        rows = [read_rows(path, fields) for path, fields in tables]
        t = AfterstateTrainer(cfg, run_dir, log)
        saved = (run_dir / "state.pt").is_file()
        if saved:
            t.load_state()
            if t.finished and cfg.total_turns <= t.turns:
                raise RunError(
                    f"run {str(run_dir)!r} already finished at turn {t.turns:,}; train it further "
                    f"with --set total_turns=N (N > {t.turns:,})"
                )
            head = f"resuming {run_dir} from turn {t.turns:,} (state.pt)"
        else:
            head = (
                f"resuming {run_dir} from turn 0: it stopped before its first checkpoint, so training starts "
                "over in this directory (config.yaml kept)"
            )
        if overrides:
            head += f" with {', '.join(overrides)}"
        log(head)
        for (path, fields), old in zip(tables, rows):
            kept = [r for r in old if saved and int(r[fields[0]]) <= t.turns]
            if len(kept) < len(old):
                write_rows(path, fields, kept, digits=DIGITS)
        # the nets a killed session kept past the state go with its rows: the resumed one keeps its own
        for net in (run_dir / "evals").glob("turns_*.npz"):
            turns = net.stem[len("turns_") :]
            if not saved or (turns.isdigit() and int(turns) > t.turns):
                net.unlink()
        t.resumed = True
        return t.run()
