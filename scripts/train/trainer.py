"""``tenk train``: MaskablePPO against an opponent pool, evaluated as it learns.

A run directory ``RUNS_DIR/NAME/`` is complete on its own:

====================  ===========================================================
``config.yaml``       the resolved config (every key, the ruleset field by field):
                      ``tenk train --config runs/NAME/config.yaml`` replays it
``run.yaml``          ruleset name and hash, observation version, package versions,
                      command line, start time
``tb/``               TensorBoard events: ``eval/win_rate/<opponent>`` with
                      ``eval/ci_low/...`` and ``eval/ci_high/...``, ``game/*``,
                      ``rollout/*`` (training games), SB3's ``train/*`` losses,
                      hyperparameters, a custom-scalars chart of all win rates
``eval.csv``          one row per evaluation match
``checkpoints/``      ``step_N.zip`` every ``checkpoint.every`` steps (last few kept)
``last.zip``          the latest checkpoint (what ``--resume`` continues)
``best.zip``          the highest win rate against ``eval.best_by`` so far
``league/``           frozen snapshots the ``self`` opponent draws from
``state.json``        progress: step, best, league, whether the run finished
====================  ===========================================================

Every file is written atomically. Ctrl-C (or SIGTERM) stops at the next step, saves a
checkpoint, and the run continues with ``tenk train --resume runs/NAME``; a second Ctrl-C
quits at once.

Evaluation, snapshots and checkpoints happen at the start of a rollout, after the previous
rollout's gradient steps, so a checkpoint's weights and step count always agree.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import yaml

from scripts.train.config import TrainConfig, apply_overrides, config_to_dict, parse_config, read_yaml
from tenk_env.io import atomic_write_bytes, atomic_write_text
from tenk_env.obs import OBS_VERSION, n_actions

__all__ = ["train", "resume", "Trainer", "evaluate_agent", "EvalRow", "package_versions", "tag_name",
           "LinearSchedule", "RunError"]

CSV_FIELDS = ["step", "kind", "opponent", "games", "wins", "losses", "ties", "win_rate", "ci_low", "ci_high",
              "mean_margin", "points_per_turn", "opp_points_per_turn", "bust_rate", "turns_per_game",
              "seconds"]


class RunError(ValueError):
    """A run directory that cannot be started or resumed as asked."""


def tag_name(spec: str) -> str:
    """An agent spec as a TensorBoard tag component (paths lose their slashes)."""
    return re.sub(r"[^A-Za-z0-9_.:=-]", "_", spec)


def package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for p in ("tenk", "numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "tensorboard", "numba"):
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


class LinearSchedule:
    """Learning rate from ``start`` to ``end`` as SB3's progress_remaining goes 1 -> 0.
    A class, not a lambda, so checkpoints pickle it by reference."""

    def __init__(self, start: float, end: float):
        self.start, self.end = float(start), float(end)

    def __call__(self, progress_remaining: float) -> float:
        return self.end + progress_remaining * (self.start - self.end)


# --------------------------------------------------------------------------- evaluation
@dataclass
class EvalRow:
    """The learner's figures in one evaluation match."""

    opponent: str
    games: int
    wins: float
    losses: float
    ties: float
    win_rate: float
    ci_low: float
    ci_high: float
    mean_margin: float
    points_per_turn: float
    opp_points_per_turn: float
    bust_rate: float
    turns_per_game: float
    seconds: float

    def csv_row(self, step: int, kind: str) -> dict[str, Any]:
        d = {"step": step, "kind": kind, **self.__dict__}
        return {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in d.items()}


def evaluate_agent(agent: Any, rules, n_players: int, opponent: str, games: int, seed: int,
                   workers: int = 1, backend: str = "auto") -> EvalRow:
    """A seat-balanced match (2 players) or a rotated table (more) of ``agent`` against
    ``opponent``, on the engine ``backend`` picks (as ``eval.backend``; see
    :func:`agents.match.task_engines`)."""
    t0 = time.perf_counter()
    if n_players == 2:
        from agents.match import play_match

        r = play_match(rules, agent, opponent, games, seed, workers=workers, backend=backend)
        return EvalRow(opponent, r.games, r.wins_a, r.wins_b, r.ties, r.win_rate_a, r.ci_low, r.ci_high,
                       r.mean_margin, r.points_per_turn_a, r.points_per_turn_b, r.bust_rate_a, r.mean_turns,
                       time.perf_counter() - t0)
    from agents.match import play_table

    # the learner against n - 1 copies of the opponent, in every rotation of seats
    t = play_table(rules, [agent] + [opponent] * (n_players - 1), games, seed, workers=workers, backend=backend)
    others = np.mean(t.points_per_turn[1:])
    wins = t.wins[0]
    return EvalRow(opponent, t.games, wins, t.games - wins, 0, t.win_rate[0], t.ci_low[0], t.ci_high[0],
                   float(t.mean_score[0] - np.mean(t.mean_score[1:])), t.points_per_turn[0], float(others),
                   t.bust_rate[0], t.mean_turns, time.perf_counter() - t0)


# --------------------------------------------------------------------------- the run
class _Stop:
    """Ctrl-C / SIGTERM: the first asks the trainer to save and stop; the second quits."""

    def __init__(self, log: Callable[[str], None]):
        self.requested = False
        self._log = log
        self._old: dict[int, Any] = {}

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self._log(f"\n{signal.Signals(signum).name}: saving a checkpoint and stopping "
                  "(press Ctrl-C again to quit without saving)")

    def __enter__(self):
        import threading

        if threading.current_thread() is threading.main_thread():
            for s in (signal.SIGINT, signal.SIGTERM):
                self._old[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc):
        for s, h in self._old.items():
            signal.signal(s, h)


@dataclass
class RunResult:
    run_dir: Path
    step: int
    finished: bool
    interrupted: bool
    best: dict[str, Any] = field(default_factory=dict)
    final: list[EvalRow] = field(default_factory=list)
    wall_seconds: float = 0.0
    backend: str = ""


class Trainer:
    """One training run (new or resumed). Use :func:`train` / :func:`resume`."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, *, resuming: bool, progress: bool = True,
                 log: Callable[[str], None] | None = None):
        self.cfg = cfg
        self.dir = Path(run_dir)
        self.resuming = resuming
        self.progress = progress
        self._log = log
        self.state: dict[str, Any] = {"step": 0, "best": None, "league": [], "finished": False,
                                      "wall_seconds": 0.0, "evals": 0}
        self.rows: list[dict[str, Any]] = []
        self.latest: dict[str, EvalRow] = {}
        self.model = None
        self.writer = None
        self.bar = None
        self.venv = None
        self.backend = ""

    # ------------------------------------------------------------------ output
    def log(self, msg: str) -> None:
        if self._log is not None:
            self._log(msg)
        elif self.bar is not None:
            self.bar.write(msg)
        else:
            print(msg, flush=True)

    @property
    def paths(self) -> dict[str, Path]:
        d = self.dir
        return {"config": d / "config.yaml", "run": d / "run.yaml", "state": d / "state.json",
                "csv": d / "eval.csv", "tb": d / "tb", "ckpt": d / "checkpoints", "league": d / "league",
                "best": d / "best.zip", "last": d / "last.zip"}

    def meta(self, **extra: Any) -> dict[str, Any]:
        from agents.ppo import checkpoint_meta

        return checkpoint_meta(self.cfg.ruleset, self.cfg.n_players, activation=self.cfg.ppo.activation,
                               n_actions=n_actions(self.cfg.ruleset), policy=self.cfg.ppo.policy,
                               num_timesteps=self.step,
                               run=self.cfg.name, **extra)

    @property
    def step(self) -> int:
        return int(self.model.num_timesteps) if self.model is not None else int(self.state["step"])

    # ------------------------------------------------------------------ files
    def _write_snapshot_files(self, argv: list[str]) -> None:
        p = self.paths
        header = (f"# tenk train: resolved config of run {self.cfg.name!r} (every key, the ruleset field by field).\n"
                  f"# Replay it with: tenk train --config {p['config']} --set name=NEW_NAME\n")
        atomic_write_text(p["config"], header + yaml.safe_dump(config_to_dict(self.cfg), sort_keys=False))
        r = self.cfg.ruleset
        info = {"run": self.cfg.name, "ruleset_name": r.name, "ruleset_hash": r.hash, "n_players": self.cfg.n_players,
                "obs_version": OBS_VERSION, "n_actions": n_actions(r), "created": time.strftime("%Y-%m-%d %H:%M:%S"),
                "command": "tenk " + " ".join(argv) if argv else "", "cpus": os.cpu_count(),
                "versions": package_versions(), "ruleset": r.to_dict()}
        atomic_write_text(p["run"], yaml.safe_dump(info, sort_keys=False))

    def _save_state(self) -> None:
        self.state["step"] = self.step
        atomic_write_text(self.paths["state"], json.dumps(self.state, indent=1))

    def _save_csv(self) -> None:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
        w.writeheader()
        w.writerows(self.rows)
        atomic_write_text(self.paths["csv"], buf.getvalue())

    def _save_model(self, path: Path, **extra: Any) -> Path:
        from agents.ppo import write_checkpoint

        return write_checkpoint(self.model, path, self.meta(**extra))

    def checkpoint(self) -> None:
        """checkpoints/step_N.zip and last.zip, then state.json (which points at them)."""
        p = self.paths
        step = self.step
        path = self._save_model(p["ckpt"] / f"step_{step:010d}.zip")
        atomic_write_bytes(p["last"], path.read_bytes())
        for old in sorted(p["ckpt"].glob("step_*.zip"))[:-self.cfg.checkpoint.keep]:
            old.unlink(missing_ok=True)
        self.state["checkpoint_step"] = step
        self._save_state()

    # ------------------------------------------------------------------ league
    def snapshot(self) -> None:
        """Freeze the learner into the league and hand the league to the envs."""
        p = self.paths
        path = self._save_model(p["league"] / f"step_{self.step:010d}.zip")
        kept = [x for x in self.state["league"] if Path(x) != path and Path(x).name != "best.zip"]
        kept = (kept + [str(path)])[-self.cfg.selfplay.league_size:]
        for old in p["league"].glob("step_*.zip"):
            if str(old) not in kept:
                old.unlink(missing_ok=True)
        self.state["league"] = kept
        self._sync_league()

    def league_paths(self) -> list[str]:
        paths = list(self.state["league"])
        if self.cfg.selfplay.include_best and self.paths["best"].is_file():
            paths.append(str(self.paths["best"]))
        return paths

    def _sync_league(self) -> None:
        if self.cfg.selfplay_on and self.venv is not None:
            self.venv.env_method("sync_league", self.league_paths())

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, kind: str = "eval", games: int | None = None, stop: "_Stop | None" = None) -> list[EvalRow]:
        from agents.ppo import PPOAgent

        cfg = self.cfg
        agent = PPOAgent.from_policy(self.model.policy, self.meta(), name="learner")
        step = self.step
        rows = []
        for opp in cfg.eval_opponents:
            if stop is not None and stop.requested:
                break
            row = evaluate_agent(agent, cfg.ruleset, cfg.n_players, opp, games or cfg.eval.games, cfg.eval.seed,
                                 workers=cfg.eval.workers, backend=cfg.eval.backend)
            rows.append(row)
            self.latest[opp] = row
            self.rows.append(row.csv_row(step, kind))
        if not rows:
            return rows
        self._log_eval(rows, step)
        self._save_csv()
        self.state["evals"] += 1
        self.state["last_eval"] = {"step": step, "kind": kind,
                                   "win_rate": {r.opponent: round(r.win_rate, 4) for r in rows}}
        best_row = next((r for r in rows if r.opponent == cfg.best_by), None)
        best = self.state["best"]
        if best_row is not None and (best is None or best_row.win_rate > best["win_rate"]):
            self._save_model(self.paths["best"], eval={r.opponent: r.win_rate for r in rows})
            self.state["best"] = {"step": step, "opponent": cfg.best_by, "win_rate": best_row.win_rate,
                                  "ci_low": best_row.ci_low, "ci_high": best_row.ci_high}
            self._sync_league()
        self._save_state()
        text = "  ".join(f"{r.opponent} {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}]" for r in rows)
        self.log(f"step {step:>10,} {kind}: {text}")
        self._bar_postfix()
        return rows

    def _log_eval(self, rows: list[EvalRow], step: int) -> None:
        w = self.writer

        def put(tag: str, value: float) -> None:
            w.add_scalar(tag, float(value), step)

        for r in rows:
            t = tag_name(r.opponent)
            put(f"eval/win_rate/{t}", r.win_rate)
            put(f"eval/ci_low/{t}", r.ci_low)
            put(f"eval/ci_high/{t}", r.ci_high)
            put(f"eval/margin/{t}", r.mean_margin)
            put(f"game/points_per_turn/{t}", r.points_per_turn)
            put(f"game/bust_rate/{t}", r.bust_rate)
        # pooled over the evaluation opponents: one curve for the summary
        for tag, attr in (("game/points_per_turn", "points_per_turn"), ("game/bust_rate", "bust_rate"),
                          ("game/turns_per_game", "turns_per_game")):
            if rows:
                put(tag, float(np.average([getattr(r, attr) for r in rows], weights=[r.games for r in rows])))
        w.flush()

    def _anneal_shaping(self, step: int) -> None:
        e = self.cfg.env
        if e.shaping_end is None or not hasattr(self.venv, "coef"):
            return
        frac = min(max(step / self.cfg.total_steps, 0.0), 1.0)
        self.venv.coef = e.shaping + frac * (e.shaping_end - e.shaping)
        self.writer.add_scalar("train/shaping", self.venv.coef, step)

    # ------------------------------------------------------------------ progress bar
    def _bar_postfix(self) -> None:
        if self.bar is not None and self.latest:
            self.bar.set_postfix_str("  ".join(f"{o} {r.win_rate:.0%}" for o, r in self.latest.items()),
                                     refresh=True)

    # ------------------------------------------------------------------ building
    def _ppo_kwargs(self) -> dict[str, Any]:
        p = self.cfg.ppo
        lr: Any = p.learning_rate if p.lr_end is None else LinearSchedule(p.learning_rate, p.lr_end)
        return dict(learning_rate=lr, n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs,
                    gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef,
                    vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm, target_kl=p.target_kl,
                    normalize_advantage=p.normalize_advantage)

    def _policy_kwargs(self) -> dict[str, Any]:
        import torch

        act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[self.cfg.ppo.activation]
        kw: dict[str, Any] = dict(net_arch=list(self.cfg.ppo.net_arch), activation_fn=act)
        if self.cfg.ppo.policy == "keep_aware":
            kw["rules"] = self.cfg.ruleset.to_dict()
        return kw

    def _policy_class(self) -> Any:
        if self.cfg.ppo.policy == "keep_aware":
            from scripts.train.policy import KeepAwarePolicy

            return KeepAwarePolicy
        return "MlpPolicy"

    def _setup_logger(self, purge_step: int | None) -> None:
        from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
        from torch.utils.tensorboard import SummaryWriter

        class _TB(TensorBoardOutputFormat):
            # purge_step hides events a killed session wrote past the checkpoint it resumes from
            def __init__(self, folder: str, purge: int | None):
                self.writer = SummaryWriter(log_dir=folder, purge_step=purge)
                self._is_closed = False

        tb = self.paths["tb"]
        fmt = _TB(str(tb), purge_step)
        self.model.set_logger(Logger(str(tb), [fmt]))
        self.writer = fmt.writer
        self._write_layout()

    def _write_layout(self) -> None:
        from torch.utils.tensorboard.summary import hparams

        cfg = self.cfg
        opps = [tag_name(o) for o in cfg.eval_opponents]
        layout = {
            "win rates": {
                "eval win rate, every opponent": ["Multiline", [r"^eval/win_rate/"]],
                **{f"vs {o} (95% interval)": ["Margin", [f"eval/win_rate/{o}", f"eval/ci_low/{o}",
                                                         f"eval/ci_high/{o}"]] for o in opps},
                "training games won, by pool entry": ["Multiline", [r"^rollout/win_rate"]],
            },
            "game": {
                "points per turn": ["Multiline", [r"^game/points_per_turn"]],
                "bust rate": ["Multiline", [r"^game/bust_rate"]],
                "turns per game": ["Multiline", [r"^game/turns_per_game", r"^rollout/turns_per_game"]],
            },
        }
        self.writer.add_custom_scalars(layout)
        flat = _flatten(config_to_dict(cfg, expand_rules=False))
        flat["rules"] = cfg.ruleset.name
        flat["ruleset_hash"] = cfg.ruleset.hash
        hp = {k: (v if isinstance(v, (int, float, str, bool)) else json.dumps(v)) for k, v in flat.items()
              if v is not None}
        metrics = {f"eval/win_rate/{o}": 0.0 for o in opps}
        exp, ssi, sei = hparams(hp, metrics)
        fw = self.writer._get_file_writer()
        for s in (exp, ssi, sei):
            fw.add_summary(s)
        self.writer.add_text("config", "```\n" + yaml.safe_dump(config_to_dict(cfg), sort_keys=False) + "\n```", 0)

    def build(self) -> None:
        import torch
        from sb3_contrib import MaskablePPO

        from scripts.train.envs import make_vec_env

        torch.set_num_threads(self.cfg.torch_threads)
        cfg = self.cfg
        p = self.paths
        step0 = int(self.state["step"])
        # resumed runs draw new games: the seed moves with the step count
        self.venv, self.backend = make_vec_env(cfg, cfg.seed + step0)
        if self.resuming:
            self.model = MaskablePPO.load(p["last"], env=self.venv, device="cpu", **self._ppo_kwargs())
            if self.model.num_timesteps != self.state.get("checkpoint_step", self.model.num_timesteps):
                self.log(f"note: last.zip is at step {self.model.num_timesteps:,}, state.json said "
                         f"{self.state.get('checkpoint_step'):,}; continuing from last.zip")
            self.model.set_random_seed(cfg.seed + step0)
        else:
            self.model = MaskablePPO(self._policy_class(), self.venv, policy_kwargs=self._policy_kwargs(), seed=cfg.seed,
                                     device="cpu", verbose=0, **self._ppo_kwargs())
        step = self.step
        # forget evaluations a killed session made after the checkpoint it resumes from
        self.rows = [r for r in self.rows if int(r["step"]) <= step]
        self._setup_logger(purge_step=step if self.resuming else None)
        if cfg.selfplay_on:
            self.state["league"] = [x for x in self.state["league"] if Path(x).is_file()]
            if not self.state["league"]:
                self.snapshot()
            self._sync_league()

    # ------------------------------------------------------------------ the loop
    def run(self) -> RunResult:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self
        cfg = self.cfg
        t_start = time.perf_counter()
        wall0 = float(self.state.get("wall_seconds", 0.0))

        def due(every: int, last: int, step: int) -> bool:
            return every > 0 and step // every > last // every

        with _Stop(self.log) as stop:
            class Callback(BaseCallback):
                def __init__(self):
                    super().__init__(verbose=0)
                    self.last_eval = self.last_snap = self.last_ckpt = trainer.step
                    self.first = True
                    self.games: dict[str, list[float]] = {}
                    self.turns: list[float] = []
                    self.banked = 0.0
                    self.busts = 0.0
                    self.own_turns = 0.0

                def _on_rollout_start(self) -> None:
                    step = trainer.step
                    trainer._anneal_shaping(step)
                    if self.first:
                        self.first = False
                        if cfg.eval.at_start and step == 0 and cfg.eval.every > 0:
                            trainer.evaluate(stop=stop)
                        return
                    if due(cfg.eval.every, self.last_eval, step):
                        self.last_eval = step
                        trainer.evaluate(stop=stop)
                    if cfg.selfplay_on and due(cfg.selfplay.snapshot_every, self.last_snap, step):
                        self.last_snap = step
                        trainer.snapshot()
                    if due(cfg.checkpoint.every, self.last_ckpt, step):
                        self.last_ckpt = step
                        trainer.state["wall_seconds"] = wall0 + time.perf_counter() - t_start
                        trainer.checkpoint()

                def _on_step(self) -> bool:
                    infos = self.locals["infos"]
                    for i in np.flatnonzero(self.locals["dones"]):
                        info = infos[i]
                        if "won" not in info:
                            continue
                        self.games.setdefault(info.get("opponent", "?"), []).append(1.0 if info["won"] else 0.0)
                        self.turns.append(info["turns"])
                        self.banked += info["episode_banked"]
                        self.busts += info["episode_busts"]
                        self.own_turns += info["turns"] / cfg.n_players
                    if trainer.bar is not None:
                        trainer.bar.update(trainer.step - trainer.bar.n)
                    return not stop.requested

                def _on_rollout_end(self) -> None:
                    if not self.turns:
                        return
                    w, step = trainer.writer, trainer.step
                    won = [x for v in self.games.values() for x in v]
                    w.add_scalar("rollout/win_rate", float(np.mean(won)), step)
                    for o, v in self.games.items():
                        w.add_scalar(f"rollout/win_rate/{tag_name(o)}", float(np.mean(v)), step)
                    w.add_scalar("rollout/turns_per_game", float(np.mean(self.turns)), step)
                    w.add_scalar("rollout/points_per_turn", self.banked / max(self.own_turns, 1e-9), step)
                    w.add_scalar("rollout/bust_rate", self.busts / max(self.own_turns, 1e-9), step)
                    w.add_scalar("rollout/games", len(won), step)
                    self.games, self.turns = {}, []
                    self.banked = self.busts = self.own_turns = 0.0

            if self.progress:
                from tqdm import tqdm

                tty = sys.stderr.isatty()
                self.bar = tqdm(total=cfg.total_steps, initial=self.step, unit="step", unit_scale=True,
                                dynamic_ncols=True, mininterval=0.5 if tty else 60.0, smoothing=0.05,
                                desc=cfg.name)
                self._bar_postfix()
            interrupted = hard_quit = False
            try:
                remaining = cfg.total_steps - self.step
                if remaining > 0:
                    self.model.learn(remaining, callback=Callback(), reset_num_timesteps=not self.resuming,
                                     progress_bar=False)
                interrupted = stop.requested
                if not interrupted and not self.state.get("finished"):
                    final_games = cfg.eval.final_games or cfg.eval.games
                    final = self.evaluate("final", games=final_games, stop=stop)
                    interrupted = stop.requested
                    self.state["final"] = {r.opponent: {"games": r.games, "win_rate": r.win_rate, "ci_low": r.ci_low,
                                                        "ci_high": r.ci_high} for r in final}
                if not interrupted:
                    self.state["finished"] = True
            except KeyboardInterrupt:
                hard_quit = True  # the second Ctrl-C: quit without saving
                raise
            finally:
                # whatever else happened (a finished run, Ctrl-C, an error in an evaluation):
                # the weights reached so far are saved before the process goes
                self.state["wall_seconds"] = wall0 + time.perf_counter() - t_start
                if self.model is not None and not hard_quit:
                    self.state["interrupted"] = interrupted
                    self.checkpoint()
                if self.bar is not None:
                    self.bar.close()
                    self.bar = None
                if self.writer is not None:
                    self.writer.flush()
                    self.writer.close()
                if self.venv is not None:
                    self.venv.close()
        final_rows = [self.latest[o] for o in cfg.eval_opponents if o in self.latest]
        return RunResult(self.dir, self.step, bool(self.state.get("finished")), interrupted,
                         dict(self.state.get("best") or {}), final_rows, float(self.state["wall_seconds"]),
                         self.backend)


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and k != "opponents":
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


# --------------------------------------------------------------------------- entry points
def train(cfg: TrainConfig, *, progress: bool = True, argv: list[str] | None = None,
          log: Callable[[str], None] | None = None, force: bool = False) -> RunResult:
    """Start a new run of ``cfg`` in ``cfg.runs_dir/cfg.name``."""
    run_dir = Path(cfg.runs_dir) / cfg.name
    if run_dir.exists() and any(run_dir.iterdir()):
        if not force:
            raise RunError(f"run directory {str(run_dir)!r} already holds a run: continue it with "
                           f"`tenk train --resume {run_dir}`, pick another name with `--set name=NEW`, "
                           "or start it over with --force (deletes it)")
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    t = Trainer(cfg, run_dir, resuming=False, progress=progress, log=log)
    t._write_snapshot_files(argv or [])
    t.build()
    return t.run()


def resume(run_dir: str | Path, overrides: list[str] = (), *, progress: bool = True,
           log: Callable[[str], None] | None = None) -> RunResult:
    """Continue the run in ``run_dir`` from its last checkpoint (``overrides`` may change,
    e.g., ``total_steps`` or PPO hyperparameters, never the game or the network)."""
    run_dir = Path(run_dir)
    cfg_path, state_path, last = run_dir / "config.yaml", run_dir / "state.json", run_dir / "last.zip"
    if not cfg_path.is_file():
        raise RunError(f"{str(run_dir)!r} is not a run directory (no config.yaml); runs are under runs/, "
                       "made by `tenk train --config FILE`")
    if not last.is_file() or not state_path.is_file():
        raise RunError(f"run {str(run_dir)!r} has no checkpoint yet (it stopped before its first save); "
                       f"start it over: tenk train --config {cfg_path} --force")
    raw = read_yaml(cfg_path)
    new = apply_overrides(raw, list(overrides))
    for key in ("rules", "n_players", "name"):
        if new.get(key) != raw.get(key):
            raise RunError(f"--set {key}: a resumed run keeps its {key}; start a new run for another one "
                           f"(tenk train --config {cfg_path} --set name=NEW --set {key}=...)")
    for key in ("net_arch", "activation", "policy"):
        if (new.get("ppo") or {}).get(key) != (raw.get("ppo") or {}).get(key):
            raise RunError(f"--set ppo.{key}: a resumed run keeps its network; start a new run")
    new["runs_dir"] = str(run_dir.parent)
    cfg = parse_config(new, source=f"config {str(cfg_path)!r}")
    from agents.ppo import check_meta, read_meta

    meta = read_meta(last)
    check_meta(meta, cfg.ruleset, cfg.n_players, where=f"checkpoint {str(last)!r}")
    from agents.ppo import KEEP_FEATURES_VERSION

    if meta.get("policy") == "keep_aware" and meta.get("keep_features_version") != KEEP_FEATURES_VERSION:
        raise RunError(f"checkpoint {str(last)!r} has keep-aware features version {meta.get('keep_features_version')}, "
                       f"this tenk builds version {KEEP_FEATURES_VERSION}: the network's shape changed, so the run "
                       f"cannot continue; start a new one (tenk train --config {cfg_path} --set name=NEW)")
    t = Trainer(cfg, run_dir, resuming=True, progress=progress, log=log)
    t.state.update(json.loads(state_path.read_text()))
    if t.state.get("finished") and cfg.total_steps <= t.state["step"]:
        raise RunError(f"run {str(run_dir)!r} already finished at step {t.state['step']:,}; train it further "
                       f"with --set total_steps=N (N > {t.state['step']:,})")
    t.state["finished"] = False
    if t.paths["csv"].is_file():
        with open(t.paths["csv"], newline="") as f:
            t.rows = list(csv.DictReader(f))
    if overrides:
        t.log(f"resuming {run_dir} with {', '.join(overrides)}")
        atomic_write_text(cfg_path, f"# tenk train: resolved config of run {cfg.name!r} (resumed with "
                                    f"{' '.join(overrides)})\n" + yaml.safe_dump(config_to_dict(cfg), sort_keys=False))
    t.build()
    return t.run()
