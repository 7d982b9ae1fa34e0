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
                      hyperparameters, custom-scalars charts; ``tb/vs_<opponent>/``
                      holds each opponent's ``by_opponent/*`` curves as a run of
                      its own, because TensorBoard colours lines by run
``eval.csv``          one row per evaluation match
``regret.csv``        one row per evaluation where the game solver covers the
                      ruleset: the exact win probability the learner gives away
                      per game against perfect play, as a probability (0.01 is the
                      1 pp/game the log prints; ``eval/regret`` in TensorBoard)
``checkpoints/``      ``step_N.zip`` every ``checkpoint.every`` steps (last few kept)
``last.zip``          the latest checkpoint (what ``--resume`` continues)
``best.zip``          the highest win rate against ``eval.best_by`` so far
``league/``           frozen snapshots the ``self`` opponent draws from
``state.json``        progress: step, best, league, whether the run finished
``.lock``             held by the one ``tenk train`` writing the directory
====================  ===========================================================

Every file is written atomically. Ctrl-C (or SIGTERM) stops at the next step, saves a
checkpoint, and the run continues with ``tenk train --resume runs/NAME``; a second Ctrl-C
quits at once. A killed run (``kill -9``, a crash, a full disk) resumes from its newest
checkpoint that loads (``last.zip``, else the newest ``checkpoints/step_N.zip``), or from
step 0 in place when it was killed before its first one; what the killed session did past
that checkpoint (evaluation rows, snapshots, TensorBoard points) is replayed, not kept.

Evaluation, snapshots and checkpoints happen at the start of a rollout, after the previous
rollout's gradient steps, so a checkpoint's weights and step count always agree.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tenk_env.evaluation.analysis import analyse
from tenk_env.evaluation.match import play_match, play_table, wilson
from tenk_env.io import DirLock, StateFileError, atomic_write_bytes, atomic_write_text, read_json
from tenk_env.obs import OBS_VERSION, n_actions
from tenk_env.policies.optimal import game_solution, solution_source
from tenk_env.policies.ppo import (
    KEEP_FEATURES_VERSION,
    CheckpointError,
    PPOAgent,
    check_meta,
    checkpoint_meta,
    read_meta,
    verify_checkpoint,
    write_checkpoint,
)
from tenk_env.rules import Ruleset
from tenk_env.rules_obs import game_meta, reads_rules
from tenk_env.solve.cache import cache_dir
from tenk_env.solve.game import solve_game
from tenk_env.training.config import TrainConfig, apply_overrides, config_to_dict, parse_config, read_yaml
from tenk_env.training.rundir import (
    RunError,
    StopRequest,
    check_run_dir,
    read_rows,
    run_record,
    say,
    start_run,
    tb_writer,
    write_rows,
)
from tenk_env.units import regret_text

__all__ = [
    "train",
    "resume",
    "Trainer",
    "evaluate_agent",
    "pooled_row",
    "EvalRow",
    "tag_name",
    "LinearSchedule",
    "log_regret",
]

REGRET_FIELDS = [
    "step",
    "kind",
    "games",
    "regret",
    "regret_ci_low",
    "regret_ci_high",
    "implied_win_rate",
    "implied_ci_low",
    "implied_ci_high",
    "empirical_win_rate",
    "seconds",
]
CSV_FIELDS = [
    "step",
    "kind",
    "opponent",
    "games",
    "wins",
    "losses",
    "ties",
    "win_rate",
    "ci_low",
    "ci_high",
    "mean_margin",
    "points_per_turn",
    "opp_points_per_turn",
    "bust_rate",
    "turns_per_game",
    "seconds",
]


def tag_name(spec: str) -> str:
    """An agent spec as a TensorBoard tag component (paths lose their slashes)."""
    return re.sub(r"[^A-Za-z0-9_.:=-]", "_", spec)


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


def evaluate_agent(
    agent: Any,
    rules: Ruleset,
    n_players: int,
    opponent: str,
    games: int,
    seed: int,
    workers: int = 1,
    backend: str = "auto",
) -> EvalRow:
    """A seat-balanced match (2 players) or a rotated table (more) of ``agent`` against
    ``opponent``, on the engine ``backend`` picks (as ``eval.backend``; see
    :func:`tenk_env.evaluation.match.task_engines`)."""
    t0 = time.perf_counter()
    if n_players == 2:
        r = play_match(rules, agent, opponent, games, seed, workers=workers, backend=backend)
        return EvalRow(
            opponent,
            r.games,
            r.wins_a,
            r.wins_b,
            r.ties,
            r.win_rate_a,
            r.ci_low,
            r.ci_high,
            r.mean_margin,
            r.points_per_turn_a,
            r.points_per_turn_b,
            r.bust_rate_a,
            r.mean_turns,
            time.perf_counter() - t0,
        )
    # the learner against n - 1 copies of the opponent, in every rotation of seats
    t = play_table(rules, [agent] + [opponent] * (n_players - 1), games, seed, workers=workers, backend=backend)
    others = np.mean(t.points_per_turn[1:])
    wins = t.wins[0]
    return EvalRow(
        opponent,
        t.games,
        wins,
        t.games - wins,
        0,
        t.win_rate[0],
        t.ci_low[0],
        t.ci_high[0],
        float(t.mean_score[0] - np.mean(t.mean_score[1:])),
        t.points_per_turn[0],
        float(others),
        t.bust_rate[0],
        t.mean_turns,
        time.perf_counter() - t0,
    )


def pooled_row(rows: list[EvalRow]) -> EvalRow:
    """One opponent's matches on several rulesets as one row: counts and times summed, rates
    and means weighted by games, the win rate's interval that of all the games (Wilson)."""
    if len(rows) == 1:
        return rows[0]
    n = sum(r.games for r in rows)

    def mean(attr: str) -> float:
        return float(sum(getattr(r, attr) * r.games for r in rows) / n)

    win_rate = mean("win_rate")
    lo, hi = wilson(win_rate * n, n)
    return EvalRow(
        rows[0].opponent,
        n,
        sum(r.wins for r in rows),
        sum(r.losses for r in rows),
        sum(r.ties for r in rows),
        win_rate,
        lo,
        hi,
        mean("mean_margin"),
        mean("points_per_turn"),
        mean("opp_points_per_turn"),
        mean("bust_rate"),
        mean("turns_per_game"),
        sum(r.seconds for r in rows),
    )


def log_regret(writer: Any, agent: Any, rules: Ruleset, games: int, seed: int, step: int):
    """The agent's exact regret against perfect play over ``games`` analysed games, logged to
    TensorBoard at ``step`` (``eval/regret`` with its interval, ``eval/implied_win_rate/optimal``);
    returns the analysis report."""
    r = analyse(agent, rules, games=games, seed=seed, workers=1, top=0).report
    for tag, value in (
        ("eval/regret", r.regret_per_game),
        ("eval/regret_ci_low", r.regret_ci[0]),
        ("eval/regret_ci_high", r.regret_ci[1]),
        ("eval/implied_win_rate/optimal", r.implied_win_rate),
    ):
        writer.add_scalar(tag, float(value), step)
    writer.flush()
    return r


# --------------------------------------------------------------------------- progress
class Eta:
    """Time left of a training session, from its training rate alone.

    The session's first evaluation and first rollout compile kernels, and the first regret
    evaluation may solve the game: minutes, once. So the rate counts training steps over the
    time spent training after the first rollout (:meth:`start`), evaluations excluded
    (:meth:`begin_eval` / :meth:`end_eval`), and each evaluation still to come adds the mean
    time of the evaluations after the session's first."""

    def __init__(self, total: int):
        self.total = total
        self.step0: int | None = None
        self.t0 = 0.0
        self.evals: list[float] = []  # seconds of each evaluation this session
        self._since: float | None = None  # the evaluation in progress began then
        self._busy = 0.0  # evaluation seconds since start()

    def start(self, step: int, now: float) -> None:
        """Measure from here (the first rollout is done: its kernels are compiled)."""
        if self.step0 is None:
            self.step0, self.t0, self._busy = step, now, 0.0

    def begin_eval(self, now: float) -> None:
        self._since = now

    def end_eval(self, now: float) -> None:
        if self._since is not None:
            self.evals.append(now - self._since)
            if self.step0 is not None:
                self._busy += now - max(self._since, self.t0)
            self._since = None

    def rate(self, step: int, now: float) -> float | None:
        """Training steps per second (None: not measured yet)."""
        if self.step0 is None or step <= self.step0:
            return None
        busy = self._busy + (now - max(self._since, self.t0) if self._since is not None else 0.0)
        seconds = now - self.t0 - busy
        return (step - self.step0) / seconds if seconds > 0 else None

    def seconds_left(self, step: int, now: float, evals_left: int) -> float | None:
        rate = self.rate(step, now)
        if rate is None:
            return None
        later = self.evals[1:]
        per_eval = sum(later) / len(later) if later else 0.0
        return max(self.total - step, 0) / rate + evals_left * per_eval


# --------------------------------------------------------------------------- the run
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

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: Path,
        *,
        resuming: bool,
        progress: bool = True,
        log: Callable[[str], None] | None = None,
        start: Path | None = None,
    ):
        self.cfg = cfg
        self.dir = Path(run_dir)
        # resuming: the directory holds an earlier session's files (rows and TensorBoard points
        # past the start are replayed); start: the checkpoint it continues (None: a new model)
        self.resuming = resuming
        self.start = start
        self.progress = progress
        self._log = log
        self.state: dict[str, Any] = {
            "step": 0,
            "best": None,
            "league": [],
            "finished": False,
            "wall_seconds": 0.0,
            "evals": 0,
        }
        self.rows: list[dict[str, Any]] = []
        self.regret_rows: list[dict[str, Any]] = []
        self.latest: dict[str, EvalRow] = {}
        self.model = None
        self.writer = None
        self.opp_writers: dict[str, Any] = {}
        self._purge_step: int | None = None
        # the league the newest checkpoint's state.json records: a session killed before its
        # next checkpoint resumes from that one, so its snapshots stay on disk until then
        self._checkpoint_league: list[str] = []
        self.bar = None
        self.eta: Eta | None = None
        self._eta_shown = 0.0
        self._evaluated = False  # this session evaluated once (its kernels are compiled)
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
        return {
            "config": d / "config.yaml",
            "run": d / "run.yaml",
            "state": d / "state.json",
            "csv": d / "eval.csv",
            "regret": d / "regret.csv",
            "tb": d / "tb",
            "ckpt": d / "checkpoints",
            "league": d / "league",
            "best": d / "best.zip",
            "last": d / "last.zip",
        }

    def meta(self, **extra: Any) -> dict[str, Any]:
        cfg = self.cfg
        return checkpoint_meta(
            None if cfg.rules_obs else cfg.ruleset,
            cfg.n_players,
            activation=cfg.ppo.activation,
            n_actions=n_actions(cfg.ruleset),
            policy=cfg.ppo.policy,
            num_timesteps=self.step,
            trained_on=cfg.trained_on,
            run=cfg.name,
            **extra,
        )

    @property
    def step(self) -> int:
        return int(self.model.num_timesteps) if self.model is not None else int(self.state["step"])

    # ------------------------------------------------------------------ files
    def _write_snapshot_files(self, argv: list[str]) -> None:
        p = self.paths
        atomic_write_text(p["config"], _config_text(self.cfg, p["config"]))
        cfg, r = self.cfg, self.cfg.ruleset
        game = game_meta(None if cfg.rules_obs else r, cfg.trained_on)
        fields = game.pop("ruleset", None)  # written last: the long part
        info = {
            "run": cfg.name,
            **game,
            "n_players": cfg.n_players,
            "obs_version": OBS_VERSION,
            "n_actions": n_actions(r),
            **run_record(argv),
        }
        if fields is not None:
            info["ruleset"] = fields
        atomic_write_text(p["run"], yaml.safe_dump(info, sort_keys=False))

    def _save_state(self) -> None:
        self.state["step"] = self.step
        atomic_write_text(self.paths["state"], json.dumps(self.state, indent=1))

    def _save_csv(self) -> None:
        for path, fields, rows in (
            (self.paths["csv"], CSV_FIELDS, self.rows),
            (self.paths["regret"], REGRET_FIELDS, self.regret_rows),
        ):
            if rows or path.exists():
                write_rows(path, fields, rows)

    def _save_model(self, path: Path, **extra: Any) -> Path:
        return write_checkpoint(self.model, path, self.meta(**extra))

    def checkpoint(self) -> None:
        """checkpoints/step_N.zip and last.zip, then state.json (which points at them)."""
        p = self.paths
        step = self.step
        path = self._save_model(p["ckpt"] / f"step_{step:010d}.zip")
        atomic_write_bytes(p["last"], path.read_bytes())
        for old in sorted(p["ckpt"].glob("step_*.zip"))[: -self.cfg.checkpoint.keep]:
            old.unlink(missing_ok=True)
        self.state["checkpoint_step"] = step
        self._save_state()
        self._checkpoint_league = self._league_names()
        self._prune_league()

    # ------------------------------------------------------------------ league
    def _league_names(self) -> list[str]:
        # state.json keeps file names: a copied or renamed run directory uses its own snapshots
        # (older runs stored full paths, which may name the original directory)
        return [Path(x).name for x in self.state["league"] if Path(x).name != "best.zip"]

    def snapshot(self) -> None:
        """Freeze the learner into the league and hand the league to the envs."""
        p = self.paths
        name = f"step_{self.step:010d}.zip"
        self._save_model(p["league"] / name)
        kept = [x for x in self._league_names() if x != name]
        kept = (kept + [name])[-self.cfg.selfplay.league_size :]
        self.state["league"] = [f"league/{x}" for x in kept]
        self._prune_league()
        self._sync_league()

    def _prune_league(self) -> None:
        keep = set(self._league_names()) | set(self._checkpoint_league)
        for old in self.paths["league"].glob("step_*.zip"):
            if old.name not in keep:
                old.unlink(missing_ok=True)

    def league_paths(self) -> list[str]:
        paths = [str(self.paths["league"] / x) for x in self._league_names()]
        if self.cfg.selfplay.include_best and self.paths["best"].is_file():
            paths.append(str(self.paths["best"]))
        return paths

    def _sync_league(self) -> None:
        if self.cfg.selfplay_on and self.venv is not None:
            self.venv.env_method("sync_league", self.league_paths())

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, kind: str = "eval", games: int | None = None, stop: StopRequest | None = None) -> list[EvalRow]:
        if self.eta is not None:
            self.eta.begin_eval(time.perf_counter())
        try:
            return self._evaluate(kind, games, stop)
        finally:
            self._evaluated = True
            self.phase(None)
            if self.eta is not None:
                self.eta.end_eval(time.perf_counter())

    def _evaluate(self, kind: str, games: int | None, stop: StopRequest | None) -> list[EvalRow]:
        cfg = self.cfg
        agent = PPOAgent.from_policy(self.model.policy, self.meta(), name="learner")
        step = self.step
        rows = []
        if cfg.regret_on or "optimal" in cfg.eval_opponents:
            self._game_solution("the exact regret" if cfg.regret_on else "the optimal opponent")
        rulesets = cfg.rulesets[: cfg.eval.rulesets] if cfg.from_suite else [cfg.ruleset]
        for opp in cfg.eval_opponents:
            if stop is not None and stop.requested:
                break
            self.phase(f"{'compiling kernels, ' if not self._evaluated else ''}evaluating vs {opp}")
            row = pooled_row(
                [
                    evaluate_agent(
                        agent,
                        r,
                        cfg.n_players,
                        opp,
                        games or cfg.eval.games,
                        cfg.eval.seed,
                        workers=cfg.eval.workers,
                        backend=cfg.eval.backend,
                    )
                    for r in rulesets
                ]
            )
            rows.append(row)
            self.latest[opp] = row
            self.rows.append(row.csv_row(step, kind))
        if not rows:
            return rows
        self._log_eval(rows, step)
        regret = None
        if cfg.regret_on and not (stop and stop.requested):
            self.phase(f"regret evaluation ({cfg.eval.regret_games:,} games against optimal)")
            regret = self._regret(agent, step, kind)
        self._save_csv()
        self.state["evals"] += 1
        self.state["last_eval"] = {
            "step": step,
            "kind": kind,
            "win_rate": {r.opponent: round(r.win_rate, 4) for r in rows},
        }
        best_row = next((r for r in rows if r.opponent == cfg.best_by), None)
        best = self.state["best"]
        if best_row is not None and (best is None or best_row.win_rate > best["win_rate"]):
            self._save_model(self.paths["best"], eval={r.opponent: r.win_rate for r in rows})
            self.state["best"] = {
                "step": step,
                "opponent": cfg.best_by,
                "win_rate": best_row.win_rate,
                "ci_low": best_row.ci_low,
                "ci_high": best_row.ci_high,
            }
            self._sync_league()
        self._save_state()
        text = "  ".join(f"{r.opponent} {r.win_rate:.1%} [{r.ci_low:.1%}, {r.ci_high:.1%}]" for r in rows)
        if regret is not None:
            note = regret.interval_notes.get("regret")
            text += f"  regret {regret_text(regret.regret_per_game, regret.regret_ci, note=note)}"
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
            ow = self.opp_writer(r.opponent)
            for tag, value in (
                ("eval_win_rate", r.win_rate),
                ("points_per_turn", r.points_per_turn),
                ("bust_rate", r.bust_rate),
                ("turns_per_game", r.turns_per_game),
            ):
                ow.add_scalar(f"by_opponent/{tag}", float(value), step)
            ow.flush()
        # pooled over the evaluation opponents: one curve for the summary
        for tag, attr in (
            ("game/points_per_turn", "points_per_turn"),
            ("game/bust_rate", "bust_rate"),
            ("game/turns_per_game", "turns_per_game"),
        ):
            if rows:
                put(tag, float(np.average([getattr(r, attr) for r in rows], weights=[r.games for r in rows])))
        w.flush()

    def _regret(self, agent: Any, step: int, kind: str):
        """The learner's exact regret against perfect play over ``eval.regret_games`` analysed
        games (the same deals every time): logged, added to regret.csv, returned."""
        cfg = self.cfg
        r = log_regret(self.writer, agent, cfg.ruleset, cfg.eval.regret_games, cfg.eval.seed, step)
        self.regret_rows.append(
            {
                k: (f"{v:.6g}" if isinstance(v, float) else v)
                for k, v in {
                    "step": step,
                    "kind": kind,
                    "games": r.games,
                    "regret": r.regret_per_game,
                    "regret_ci_low": r.regret_ci[0],
                    "regret_ci_high": r.regret_ci[1],
                    "implied_win_rate": r.implied_win_rate,
                    "implied_ci_low": r.implied_ci[0],
                    "implied_ci_high": r.implied_ci[1],
                    "empirical_win_rate": r.empirical_win_rate,
                    "seconds": r.seconds,
                }.items()
            }
        )
        return r

    def _anneal_shaping(self, step: int) -> None:
        e = self.cfg.env
        if e.shaping_end is None or not hasattr(self.venv, "coef"):
            return
        frac = min(max(step / self.cfg.total_steps, 0.0), 1.0)
        self.venv.coef = e.shaping + frac * (e.shaping_end - e.shaping)
        self.writer.add_scalar("train/shaping", self.venv.coef, step)

    def _game_solution(self, why: str) -> None:
        """The game solution of the run's ruleset, for ``why``, held for this process. Solving
        it takes a minute or more on classic (once, then cached) and prints nothing on its own:
        a line says so before, the bar shows how far the solve got, a line says how long it took."""
        rules = self.cfg.ruleset
        source = solution_source(rules)
        if source == "memory":
            return
        if source == "cache":
            self.phase("loading the solved game")
            game_solution(rules)
            return
        what = _solving_text(rules, why)
        self.phase(what, log=True)
        t0 = time.perf_counter()
        shown = 0

        def progress(fraction: float) -> None:
            nonlocal shown
            # in steps of 5%: a moving figure at a terminal, a score of lines at most in a log file
            pct = 5 * int(20 * fraction)
            if self.bar is not None and pct > shown:
                shown = pct
                self.phase(f"{what}, {pct}% done")

        solve_game(rules, progress=progress)
        game_solution(rules)  # read back from the cache the solve just wrote
        self.log(
            f"solved {rules.name!r} in {time.perf_counter() - t0:,.1f} s; cached in {cache_dir()}, "
            "so later runs skip this"
        )

    # ------------------------------------------------------------------ progress bar
    def phase(self, what: str | None, log: bool = False) -> None:
        """Name the one-off work under way on the progress bar (None: training); ``log``: also
        as a line (for work that takes minutes, and runs without a bar)."""
        if log:
            self.log(f"{what}...")
        if self.bar is not None:
            self.bar.set_description_str(f"{self.cfg.name}: {what}" if what else self.cfg.name, refresh=True)

    def _evals_left(self, step: int) -> int:
        every = self.cfg.eval.every
        later = max(0, (self.cfg.total_steps - 1) // every - step // every) if every > 0 else 0
        return later + (0 if self.state.get("finished") else 1)

    def _bar_postfix(self, refresh: bool = True) -> None:
        if self.bar is None:
            return
        now = time.perf_counter()
        parts = []
        if self.eta is not None:
            step = self.step
            left = self.eta.seconds_left(step, now, self._evals_left(step))
            rate = self.eta.rate(step, now)
            parts.append(f"ETA {self.bar.format_interval(left) if left is not None else '?'}")
            if rate is not None:
                parts.append(f"{self.bar.format_sizeof(rate)} steps/s training")
        parts += [f"{o} {r.win_rate:.0%}" for o, r in self.latest.items()]
        self._eta_shown = now
        self.bar.set_postfix_str("  ".join(parts), refresh=refresh)

    # ------------------------------------------------------------------ building
    def _ppo_kwargs(self) -> dict[str, Any]:
        p = self.cfg.ppo
        lr: Any = p.learning_rate if p.lr_end is None else LinearSchedule(p.learning_rate, p.lr_end)
        return dict(
            learning_rate=lr,
            n_steps=p.n_steps,
            batch_size=p.batch_size,
            n_epochs=p.n_epochs,
            gamma=p.gamma,
            gae_lambda=p.gae_lambda,
            clip_range=p.clip_range,
            ent_coef=p.ent_coef,
            vf_coef=p.vf_coef,
            max_grad_norm=p.max_grad_norm,
            target_kl=p.target_kl,
            normalize_advantage=p.normalize_advantage,
        )

    def _policy_kwargs(self) -> dict[str, Any]:
        import torch

        act = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[self.cfg.ppo.activation]
        kw: dict[str, Any] = dict(net_arch=list(self.cfg.ppo.net_arch), activation_fn=act)
        if self.cfg.ppo.policy == "keep_aware":
            kw["rules"] = self.cfg.ruleset.to_dict()
        return kw

    def _policy_class(self) -> Any:
        if self.cfg.ppo.policy == "keep_aware":
            from tenk_env.training.policy import KeepAwarePolicy

            return KeepAwarePolicy
        return "MlpPolicy"

    def _custom_objects(self) -> dict[str, Any]:
        """What a checkpoint's ``data`` pickles from tenk's own code (the policy class, the
        learning-rate schedule), rebuilt from the config instead of unpickled: a pickle names
        classes by module path, so a checkpoint written before a module moved (or by another
        version of the schedule) would not load. The clip range goes with them: the config
        sets it on resume anyway."""
        from sb3_contrib import MaskablePPO

        policy = self._policy_class()
        if isinstance(policy, str):  # the data holds the class itself, not SB3's alias of it
            policy = MaskablePPO.policy_aliases[policy]
        # lr_schedule: SB3 rebuilds it from learning_rate when it sets the model up
        return {
            "policy_class": policy,
            "learning_rate": self._ppo_kwargs()["learning_rate"],
            "lr_schedule": None,
            "clip_range": self.cfg.ppo.clip_range,
        }

    def _setup_logger(self, purge_step: int | None) -> None:
        from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat

        class _TB(TensorBoardOutputFormat):
            # purge_step hides events a killed session wrote past the checkpoint it resumes from
            def __init__(self, folder: str, purge: int | None):
                self.writer = tb_writer(Path(folder), purge)
                self._is_closed = False

        tb = self.paths["tb"]
        fmt = _TB(str(tb), purge_step)
        self.model.set_logger(Logger(str(tb), [fmt]))
        self.writer = fmt.writer
        self._purge_step = purge_step
        self._write_layout()

    def opp_writer(self, opponent: str) -> Any:
        """The writer of ``tb/vs_<opponent>/``: TensorBoard colours the lines of a chart by run
        (a custom-scalars Multiline chart colours every tag of one run alike), so each opponent's
        curves live in a run of their own, under the same ``by_opponent/*`` tags."""
        w = self.opp_writers.get(opponent)
        if w is None:
            w = tb_writer(self.paths["tb"] / f"vs_{tag_name(opponent)}", self._purge_step)
            self.opp_writers[opponent] = w
        return w

    def _write_layout(self) -> None:
        from torch.utils.tensorboard.summary import hparams

        cfg = self.cfg
        opps = [tag_name(o) for o in cfg.eval_opponents]

        def lines(tag: str, training: str | None = None) -> list[str]:
            # A Multiline chart colours its lines by run, so each chart takes at most one tag per run:
            # the opponents' by_opponent/* tags (one run each, tb/vs_<opponent>) and, from the main
            # run, the figure over all training games.
            return [f"^by_opponent/{tag}$"] + ([f"^{training}$"] if training else [])

        layout = {
            "win rates": {
                "eval win rate, every opponent": ["Multiline", lines("eval_win_rate")],
                **{
                    f"vs {o} (95% interval)": [
                        "Margin",
                        [f"eval/win_rate/{o}", f"eval/ci_low/{o}", f"eval/ci_high/{o}"],
                    ]
                    for o in opps
                },
                "training games won: each pool entry, and all (main run)": [
                    "Multiline",
                    lines("training_win_rate", "rollout/win_rate"),
                ],
                **(
                    {
                        "regret against perfect play, win probability given away per game as a probability "
                        "(0.01 = 1 pp/game; 95% interval)": [
                            "Margin",
                            ["eval/regret", "eval/regret_ci_low", "eval/regret_ci_high"],
                        ]
                    }
                    if cfg.regret_on
                    else {}
                ),
            },
            "game": {
                "points per turn: eval vs each opponent, and training games (main run)": [
                    "Multiline",
                    lines("points_per_turn", "rollout/points_per_turn"),
                ],
                "bust rate: eval vs each opponent, and training games (main run)": [
                    "Multiline",
                    lines("bust_rate", "rollout/bust_rate"),
                ],
                "turns per game: eval vs each opponent, and training games (main run)": [
                    "Multiline",
                    lines("turns_per_game", "rollout/turns_per_game"),
                ],
            },
        }
        self.writer.add_custom_scalars(layout)
        flat = _flatten(config_to_dict(cfg, expand_rules=False))
        if not cfg.from_suite:
            flat["rules"] = cfg.ruleset.name
            flat["ruleset_hash"] = cfg.ruleset.hash
        hp = {
            k: (v if isinstance(v, (int, float, str, bool)) else json.dumps(v))
            for k, v in flat.items()
            if v is not None
        }
        metrics = {f"eval/win_rate/{o}": 0.0 for o in opps}
        if cfg.regret_on:
            metrics["eval/regret"] = 0.0
        exp, ssi, sei = hparams(hp, metrics)
        fw = self.writer._get_file_writer()
        for s in (exp, ssi, sei):
            fw.add_summary(s)
        self.writer.add_text("config", "```\n" + yaml.safe_dump(config_to_dict(cfg), sort_keys=False) + "\n```", 0)

    def build(self) -> None:
        import torch
        from sb3_contrib import MaskablePPO

        from tenk_env.training.envs import make_vec_env

        torch.set_num_threads(self.cfg.torch_threads)
        cfg = self.cfg
        p = self.paths
        step0 = int(self.state["step"])
        # resumed runs draw new games: the seed moves with the step count
        self.venv, self.backend = make_vec_env(cfg, cfg.seed + step0)
        if self.start is not None:
            try:
                self.model = MaskablePPO.load(
                    self.start, env=self.venv, device="cpu", custom_objects=self._custom_objects(), **self._ppo_kwargs()
                )
            except Exception as e:  # resume() verified the file; this names it if SB3 still refuses
                raise RunError(f"checkpoint {str(self.start)!r} cannot be loaded ({type(e).__name__}: {e})") from None
            self.model.set_random_seed(cfg.seed + step0)
        else:
            self.model = MaskablePPO(
                self._policy_class(),
                self.venv,
                policy_kwargs=self._policy_kwargs(),
                seed=cfg.seed,
                device="cpu",
                verbose=0,
                **self._ppo_kwargs(),
            )
        step = self.step
        if self.resuming:
            # forget what a killed session did after the point this one starts from, and its
            # final evaluation, which this session plays again (killed after the final
            # checkpoint was written, before state.json marked the run finished)
            def kept(r: dict[str, Any]) -> bool:
                return int(r["step"]) <= step and not (r["kind"] == "final" and int(r["step"]) == cfg.total_steps)

            self.rows = [r for r in self.rows if kept(r)] if self.start is not None else []
            self.regret_rows = [r for r in self.regret_rows if kept(r)] if self.start is not None else []
            # from the files, not state.json's list: a session killed after the checkpoint was
            # written but before state.json recorded it left the list of the checkpoint before
            self.state["league"] = _league_files(p["league"], step, cfg.selfplay.league_size)
        self._setup_logger(purge_step=step if self.resuming else None)
        if cfg.selfplay_on:
            if not self.state["league"]:
                self.snapshot()
            self._sync_league()
        self._checkpoint_league = self._league_names()

    # ------------------------------------------------------------------ the loop
    def run(self) -> RunResult:
        from stable_baselines3.common.callbacks import BaseCallback

        trainer = self
        cfg = self.cfg
        t_start = time.perf_counter()
        wall0 = float(self.state.get("wall_seconds", 0.0))

        def due(every: int, last: int, step: int) -> bool:
            return every > 0 and step // every > last // every

        with StopRequest(self.log) as stop:

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
                        trainer.phase("first rollout (compiling kernels on first use)")
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
                        if time.perf_counter() - trainer._eta_shown > 1.0:
                            trainer._bar_postfix(refresh=False)
                        trainer.bar.update(trainer.step - trainer.bar.n)
                    return not stop.requested

                def _on_rollout_end(self) -> None:
                    if trainer.eta is not None and trainer.eta.step0 is None:
                        trainer.eta.start(trainer.step, time.perf_counter())
                        trainer.phase(None)
                    if not self.turns:
                        return
                    w, step = trainer.writer, trainer.step
                    won = [x for v in self.games.values() for x in v]
                    w.add_scalar("rollout/win_rate", float(np.mean(won)), step)
                    for o, v in self.games.items():
                        w.add_scalar(f"rollout/win_rate/{tag_name(o)}", float(np.mean(v)), step)
                        trainer.opp_writer(o).add_scalar("by_opponent/training_win_rate", float(np.mean(v)), step)
                    w.add_scalar("rollout/turns_per_game", float(np.mean(self.turns)), step)
                    w.add_scalar("rollout/points_per_turn", self.banked / max(self.own_turns, 1e-9), step)
                    w.add_scalar("rollout/bust_rate", self.busts / max(self.own_turns, 1e-9), step)
                    w.add_scalar("rollout/games", len(won), step)
                    self.games, self.turns = {}, []
                    self.banked = self.busts = self.own_turns = 0.0

            if self.progress:
                from tqdm import tqdm

                tty = sys.stderr.isatty()
                # tqdm's own rate and ETA would count the one-off first evaluation (kernels
                # compiled, the game solved) as training time: the postfix shows Eta's instead
                self.bar = tqdm(
                    total=cfg.total_steps,
                    initial=self.step,
                    unit="step",
                    unit_scale=True,
                    dynamic_ncols=True,
                    mininterval=0.5 if tty else 60.0,
                    desc=cfg.name,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]",
                )
                self.eta = Eta(cfg.total_steps)
                self._bar_postfix()
            interrupted = hard_quit = False
            try:
                remaining = cfg.total_steps - self.step
                if remaining > 0:
                    self.model.learn(
                        remaining, callback=Callback(), reset_num_timesteps=self.start is None, progress_bar=False
                    )
                interrupted = stop.requested
                if not interrupted and not self.state.get("finished"):
                    final_games = cfg.eval.final_games or cfg.eval.games
                    final = self.evaluate("final", games=final_games, stop=stop)
                    interrupted = stop.requested
                    self.state["final"] = {
                        r.opponent: {"games": r.games, "win_rate": r.win_rate, "ci_low": r.ci_low, "ci_high": r.ci_high}
                        for r in final
                    }
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
                for w in self.opp_writers.values():
                    w.close()
                if self.venv is not None:
                    self.venv.close()
        final_rows = [self.latest[o] for o in cfg.eval_opponents if o in self.latest]
        return RunResult(
            self.dir,
            self.step,
            bool(self.state.get("finished")),
            interrupted,
            dict(self.state.get("best") or {}),
            final_rows,
            float(self.state["wall_seconds"]),
            self.backend,
        )


def _solving_text(rules: Ruleset, why: str) -> str:
    """The line before a game solve that is not cached yet (silent, minutes on classic)."""
    how = (
        "value iteration under its bust penalty: tens of minutes at a 10,000 target"
        if rules.bust_penalty
        else "seconds at a small target, about a minute on classic"
    )
    return f"solving {rules.name!r} once for {why} ({how}; cached after)"


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and k != "opponents":
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


# --------------------------------------------------------------------------- the run directory
#: what a run directory holds; --force deletes nothing else
RUN_ENTRIES = (
    "config.yaml",
    "run.yaml",
    "state.json",
    "eval.csv",
    "regret.csv",
    "tb",
    "checkpoints",
    "league",
    "best.zip",
    "last.zip",
    ".lock",
)
_STEP_FILE = re.compile(r"^step_(\d+)\.zip$")


def _file_step(name: str) -> int:
    m = _STEP_FILE.match(Path(name).name)
    return int(m.group(1)) if m else -1


def _rel(run_dir: Path, path: Path) -> str:
    return str(path.relative_to(run_dir))


def _aside(path: Path) -> Path:
    """Where a damaged file is kept: NAME.damaged, or NAME.2.damaged... if that is taken."""
    out, n = path.with_name(path.name + ".damaged"), 1
    while out.exists():
        n += 1
        out = path.with_name(f"{path.name}.{n}.damaged")
    return out


def _new_run_hint(run_dir: Path) -> str:
    # a new name in this directory's parent: never a command that deletes anything
    return f"tenk train --config {run_dir / 'config.yaml'} --set runs_dir={_parent(run_dir)} --set name=NEW_NAME"


def _name(run_dir: Path) -> str:
    return run_dir.name if run_dir.name not in ("", ".", "..") else run_dir.resolve().name


def _parent(run_dir: Path) -> Path:
    return run_dir.parent if run_dir.name not in ("", ".", "..") else run_dir.resolve().parent


def _state_problem(state: dict[str, Any]) -> str | None:
    """What is wrong with the fields of a state.json that parsed (None: nothing)."""
    checks = {
        "step": lambda v: isinstance(v, int) and v >= 0,
        "league": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
        "best": lambda v: (
            v is None
            or (isinstance(v, dict) and isinstance(v.get("step"), int) and isinstance(v.get("win_rate"), (int, float)))
        ),
        "finished": lambda v: isinstance(v, bool),
        "wall_seconds": lambda v: isinstance(v, (int, float)),
        "evals": lambda v: isinstance(v, int),
    }
    for key, ok in checks.items():
        if key in state and not ok(state[key]):
            return f"field {key!r} holds {state[key]!r}"
    return None


def _read_state(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(state, None), or (None, why it cannot be used)."""
    if not path.is_file():
        return None, f"{path.name} is missing"
    try:
        state = read_json(path, "run state")
    except StateFileError as e:
        return None, str(e)
    problem = _state_problem(state)
    if problem:
        return None, f"run state {str(path)!r} is damaged: {problem}"
    return state, None


@dataclass
class _Start:
    """Where a resume starts: the checkpoint, its metadata, and what was wrong on the way."""

    path: Path | None
    meta: dict[str, Any]
    damaged: list[tuple[Path, str]]
    last_problem: str = ""


def _pick_checkpoint(run_dir: Path) -> _Start:
    """The newest checkpoint that loads: last.zip, or a checkpoints/step_N.zip when last.zip is
    missing, damaged, or older (a session killed between the two writes)."""
    last = run_dir / "last.zip"
    steps = sorted((run_dir / "checkpoints").glob("step_*.zip"), key=lambda q: _file_step(q.name), reverse=True)
    good: list[tuple[int, int, Path, dict[str, Any]]] = []
    damaged: list[tuple[Path, str]] = []
    for rank, path in enumerate([last] + steps):
        if not path.is_file():
            continue
        try:
            meta = verify_checkpoint(path)
        except CheckpointError as e:
            damaged.append((path, str(e)))
            continue
        good.append((meta["num_timesteps"], -rank, path, meta))
    if not good:
        return _Start(None, {}, damaged)
    step, _, path, meta = max(good, key=lambda g: g[:2])
    problem = ""
    if path != last:
        if not last.is_file():
            problem = "last.zip is missing"
        elif any(d == last for d, _ in damaged):
            problem = "last.zip is damaged"
        else:
            problem = f"last.zip holds step {next(g[0] for g in good if g[2] == last):,} only"
    return _Start(path, meta, damaged, problem)


def _rebuild_state(run_dir: Path, cfg: TrainConfig, step: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A state.json's content from what else the directory holds (its own copy was lost)."""
    state: dict[str, Any] = {
        "step": step,
        "best": None,
        "league": [],
        "finished": False,
        "wall_seconds": 0.0,
        "evals": len({(r["step"], r["kind"]) for r in rows if int(r["step"]) <= step}),
    }
    best = run_dir / "best.zip"
    if best.is_file():
        try:
            meta = read_meta(best)
        except CheckpointError:
            meta = {}
        rate = (meta.get("eval") or {}).get(cfg.best_by)
        if isinstance(rate, (int, float)) and isinstance(meta.get("num_timesteps"), int):
            b = {
                "step": meta["num_timesteps"],
                "opponent": cfg.best_by,
                "win_rate": float(rate),
                "ci_low": float("nan"),
                "ci_high": float("nan"),
            }
            for r in rows:
                if int(r["step"]) == b["step"] and r["opponent"] == cfg.best_by:
                    b["ci_low"], b["ci_high"] = float(r["ci_low"]), float(r["ci_high"])
            state["best"] = b
    state["league"] = _league_files(run_dir / "league", step, cfg.selfplay.league_size)
    return state


def _league_files(league_dir: Path, step: int, size: int) -> list[str]:
    """The league a run had at ``step``: its newest ``size`` snapshots up to that step. A
    snapshot the checkpoint at ``step`` trained against is never pruned before a later
    checkpoint is recorded, and later ones (a killed session's) are past ``step``."""
    league = sorted((q.name for q in league_dir.glob("step_*.zip") if _file_step(q.name) <= step), key=_file_step)
    return [f"league/{x}" for x in league[-size:]]


def _config_text(cfg: TrainConfig, config_path: Path, note: str = "") -> str:
    return (
        f"# tenk train: resolved config of run {cfg.name!r} (every key, the ruleset field by field){note}.\n"
        f"# Replay it with: tenk train --config {config_path} --set name=NEW_NAME\n"
        + yaml.safe_dump(config_to_dict(cfg), sort_keys=False)
    )


# --------------------------------------------------------------------------- entry points
def train(
    cfg: TrainConfig,
    *,
    progress: bool = True,
    argv: list[str] | None = None,
    log: Callable[[str], None] | None = None,
    force: str | Path | None = None,
) -> RunResult:
    """Start a new run of ``cfg`` in ``cfg.runs_dir/cfg.name``. ``force``: the run directory the
    caller named to be started over (it must be that one); what it holds is deleted first."""
    run_dir = Path(cfg.runs_dir) / cfg.name

    def setup() -> Callable[[], RunResult]:
        t = Trainer(cfg, run_dir, resuming=False, progress=progress, log=log)
        t._write_snapshot_files(argv or [])
        t.build()
        return t.run

    return start_run(run_dir, force, setup, entries=RUN_ENTRIES, log=log, where=_reached)


def _reached(run_dir: Path) -> str:
    state, _ = _read_state(run_dir / "state.json")
    return f" at step {state['step']:,}" if state and "step" in state else ""


def resume(
    run_dir: str | Path,
    overrides: Sequence[str] = (),
    *,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> RunResult:
    """Continue the run in ``run_dir`` from its newest checkpoint that loads (``overrides`` may
    change, e.g., ``total_steps`` or PPO hyperparameters, never the game or the network).
    The run trains in ``run_dir`` whatever its config.yaml says (a copied or renamed run)."""
    run_dir = check_run_dir(run_dir)
    with DirLock(run_dir, "run directory"):
        return _resume(run_dir, list(overrides), progress, log)


def _resume(run_dir: Path, overrides: list[str], progress: bool, log: Callable[[str], None] | None) -> RunResult:
    tell = say(log)
    cfg_path, state_path = run_dir / "config.yaml", run_dir / "state.json"
    raw = read_yaml(cfg_path)
    new = apply_overrides(raw, overrides)
    for key in ("rules", "n_players", "name", "rules_obs"):
        if new.get(key) != raw.get(key):
            raise RunError(
                f"--set {key}: a resumed run keeps its {key}; start a new run for another one "
                f"({_new_run_hint(run_dir)} --set {key}=...)"
            )
    for key in ("net_arch", "activation", "policy"):
        if (new.get("ppo") or {}).get(key) != (raw.get("ppo") or {}).get(key):
            raise RunError(f"--set ppo.{key}: a resumed run keeps its network; start a new run")
    # the run lives where it is now, whatever its config.yaml says (a copied or renamed directory)
    moved = raw.get("name") != _name(run_dir)
    new.update(runs_dir=str(_parent(run_dir)), name=_name(run_dir))
    cfg = parse_config(new, source=f"config {str(cfg_path)!r}")

    # ---- read and check everything first: an error leaves the directory as it was
    rows = read_rows(run_dir / "eval.csv", CSV_FIELDS)
    regret_rows = read_rows(run_dir / "regret.csv", REGRET_FIELDS)
    state, state_problem = _read_state(state_path)
    start = _pick_checkpoint(run_dir)
    notes = []
    if start.path is None:
        if start.damaged:
            listed = "; ".join(msg for _, msg in start.damaged)
            raise RunError(
                f"run {str(run_dir)!r} has no checkpoint that loads ({listed}); nothing was changed. "
                f"Restore the checkpoints from a backup, or start a new run from its config: "
                f"{_new_run_hint(run_dir)}"
            )
        if state is not None and state.get("checkpoint_step") is not None:
            raise RunError(
                f"run {str(run_dir)!r}: state.json records a checkpoint at step "
                f"{state['checkpoint_step']:,}, but last.zip and checkpoints/ hold none "
                "(moved or deleted?); nothing was changed. Put them back, or start a new run from its config: "
                f"{_new_run_hint(run_dir)}"
            )
        step = 0
    else:
        meta = start.meta
        if reads_rules(meta) != cfg.rules_obs:
            raise RunError(
                f"checkpoint {str(start.path)!r} was trained {'with' if reads_rules(meta) else 'without'} "
                f"the rules observation; the config sets rules_obs: {str(cfg.rules_obs).lower()}. A "
                "policy's inputs cannot change mid-run: keep rules_obs as it was, or start a new run "
                f"({_new_run_hint(run_dir)})"
            )
        check_meta(meta, cfg.ruleset, cfg.n_players, where=f"checkpoint {str(start.path)!r}")
        if meta.get("policy") == "keep_aware" and meta.get("keep_features_version") != KEEP_FEATURES_VERSION:
            raise RunError(
                f"checkpoint {str(start.path)!r} has keep-aware features version "
                f"{meta.get('keep_features_version')}, this tenk builds version {KEEP_FEATURES_VERSION}: "
                f"the network's shape changed, so the run cannot continue; start a new one "
                f"({_new_run_hint(run_dir)})"
            )
        step = int(meta["num_timesteps"])
    if state is not None and state.get("finished") and cfg.total_steps <= step:
        raise RunError(
            f"run {str(run_dir)!r} already finished at step {step:,}; train it further "
            f"with --set total_steps=N (N > {step:,})"
        )
    if state is None:
        if start.path is not None or state_path.exists():
            source = _rel(run_dir, start.path) if start.path else "scratch"
            kept = f"; the damaged file is kept as {_aside(state_path).name}" if state_path.exists() else ""
            notes.append(
                f"note: {state_problem}; rebuilt it from {source} (step {step:,}), best.zip, league/ and "
                f"eval.csv; the time trained so far restarts at 0{kept}"
            )
        state = _rebuild_state(run_dir, cfg, step, rows)

    # ---- now change things
    if start.path is not None:
        extra = f"; {start.last_problem}" if start.last_problem else ""
        head = f"resuming {run_dir} from step {step:,} ({_rel(run_dir, start.path)}{extra})"
    else:
        head = (
            f"resuming {run_dir} from step 0: it stopped before its first checkpoint, so training starts "
            "over in this directory (config.yaml kept)"
        )
    if overrides:
        head += f" with {', '.join(overrides)}"
    tell(head)
    if moved:
        tell(
            f"note: config.yaml names this run {raw.get('name')!r} (under {raw.get('runs_dir')}); it trains here, "
            f"in {run_dir}, as {cfg.name!r}, and its config.yaml now says so"
        )
    for path, msg in start.damaged:
        aside = _aside(path)
        path.replace(aside)
        notes.append(f"note: {msg}; moved it aside to {_rel(run_dir, aside)}")
    stale = [q for d in (run_dir, run_dir / "checkpoints", run_dir / "league") if d.is_dir() for q in d.glob(".*.tmp")]
    for q in stale:  # half-written files of a killed session (every file is written atomically)
        q.unlink(missing_ok=True)
    if stale:
        notes.append(f"note: removed {len(stale)} half-written temporary file(s) a killed session left")
    if state_path.exists() and state_problem:
        shutil.copyfile(state_path, _aside(state_path))
    for n in notes:
        tell(n)
    if overrides or moved:
        why = f" (resumed with {' '.join(overrides)})" if overrides else ""
        atomic_write_text(cfg_path, _config_text(cfg, cfg_path, why))

    t = Trainer(cfg, run_dir, resuming=True, progress=progress, log=log, start=start.path)
    t.state.update(state)
    t.state["step"] = step
    t.state["finished"] = False
    t.rows, t.regret_rows = rows, regret_rows
    t.build()
    return t.run()
