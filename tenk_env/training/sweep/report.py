"""Results across seeds: ``tenk sweep report runs/SWEEP`` (also written at the end of a sweep).

For each configuration of the sweep, the final figures of its finished trials (one per
seed): the win rate against each evaluation opponent from the final evaluation
(``eval.csv``, kind ``final``) and, where the runs analysed it, the exact regret against
perfect play (``regret.csv``, kind ``final``; win probability given away per game, lower is
better). Over the seeds: the mean and the interquartile mean (IQM: the mean of the middle
half, ``rliable.metrics.aggregate_iqm``), each with a 95% percentile interval from
rliable's stratified bootstrap over the runs (``rliable.library.get_interval_estimates``,
``reps`` resamples, seeded, so a report is the same every time it is made). With few
seeds these intervals are wide, and with two the IQM is the mean: that is the honest
reading, not a fault.

Files in ``runs/SWEEP/report/``:

* ``summary.csv``: one row per configuration and figure (``win_rate/OPPONENT``,
  ``regret``): seeds, mean, IQM, their interval bounds, min, max and the values by seed;
* ``summary.md``: the same as a markdown table, with the sweep's status;
* ``trials.csv``: one row per trial: status, steps, wall time, final figures;
* ``profile.png``: performance profiles (rliable's score distributions) of the leading
  win rate (the sweep's ``metric`` opponent): the share of runs above each win rate tau,
  with 95% bootstrap bands;
* ``curves.png``: learning curves, the IQM across seeds of each evaluation's win rate
  (and the regret), against training steps, with 95% bootstrap bands.

Trials that did not finish (stopped by ASHA, interrupted, failed) are listed in
``trials.csv`` and counted in ``summary.md`` but left out of the figures across seeds,
which compare final results only.
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tenk_env.evaluation.ray_runtime import import_rliable
from tenk_env.io import atomic_write_bytes, atomic_write_text
from tenk_env.training.sweep.config import MAX_REPS, REPS_WHY, SweepError

__all__ = ["write_report", "Report", "SUMMARY_FIELDS", "load_trials"]

SUMMARY_FIELDS = [
    "config",
    "metric",
    "seeds",
    "mean",
    "mean_ci_low",
    "mean_ci_high",
    "iqm",
    "iqm_ci_low",
    "iqm_ci_high",
    "min",
    "max",
    "values",
]


def _taus(values: np.ndarray) -> np.ndarray:
    """Thresholds of a performance profile: the range the win rates span, with a margin
    (runs often sit within a few points of each other, lost on a 0-1 axis), inside [0, 1]."""
    lo, hi = float(values.min()), float(values.max())
    pad = max(0.02, 0.25 * (hi - lo))
    return np.linspace(max(0.0, lo - pad), min(1.0, hi + pad), 101)


def score_distribution(scores: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """rliable's ``library.score_distributions(scores, taus)`` (the share of all runs' scores
    above each tau), vectorised: rliable evaluates it tau by tau in Python, once per
    bootstrap resample, which made the profile most of a report's time."""
    return (np.asarray(scores, np.float64).reshape(-1, 1) > np.asarray(taus)[None, :]).mean(axis=0)


def iqm_by_step(scores: np.ndarray) -> np.ndarray:
    """``rliable.metrics.aggregate_iqm(scores[..., j])`` for every step ``j`` at once
    (runs x tasks x steps in; one interquartile mean per step out)."""
    from scipy.stats import trim_mean

    return np.asarray(trim_mean(scores.reshape(-1, scores.shape[-1]), 0.25, axis=0), np.float64)


@dataclass
class TrialData:
    name: str
    config: str
    seed: int
    status: str
    step: int = 0
    wall_seconds: float = math.nan
    final: dict[str, float] = field(default_factory=dict)  #: metric -> final value
    curves: dict[str, dict[int, float]] = field(default_factory=dict)  #: metric -> step -> value


@dataclass
class Report:
    out_dir: Path
    rows: list[dict[str, Any]]
    trials: list[TrialData]
    metrics: list[str]
    files: dict[str, Path]
    markdown: str


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    try:
        return list(csv.DictReader(io.StringIO(path.read_text())))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def _figures(
    rows: list[dict[str, str]], value: str, key: Callable[[dict[str, str]], str]
) -> tuple[dict[str, float], dict[str, dict[int, float]]]:
    """(final value per metric, curve per metric: step -> value) from eval.csv/regret.csv rows."""
    final: dict[str, float] = {}
    curves: dict[str, dict[int, float]] = {}
    for r in rows:
        try:
            step, v = int(r["step"]), float(r[value])
        except (KeyError, TypeError, ValueError):
            continue
        m = key(r)
        curves.setdefault(m, {})[step] = v
        if r.get("kind") == "final":
            final[m] = v
    return final, curves


def load_trials(out: Path) -> tuple[dict[str, Any], list[TrialData]]:
    """(sweep.yaml's content, every trial's figures) of a sweep directory."""
    snap_path = out / "sweep.yaml"
    if not snap_path.is_file():
        raise SweepError(
            f"{str(out)!r} is not a sweep directory (no sweep.yaml); sweeps are made by `tenk sweep --config FILE`"
        )
    try:
        snap = yaml.safe_load(snap_path.read_text()) or {}
    except yaml.YAMLError as e:
        raise SweepError(f"{snap_path} is damaged ({e})") from None
    try:
        progress = json.loads((out / "sweep.json").read_text())
    except (OSError, ValueError):
        progress = {}
    stopped, errors = progress.get("stopped", {}), progress.get("errors", {})
    trials = []
    for t in snap.get("trials", []):
        d = out / t["name"]
        try:
            state = json.loads((d / "state.json").read_text())
        except (OSError, ValueError):
            state = {}
        if state.get("finished"):
            status = "finished"
        elif t["name"] in stopped:
            status = f"stopped by ASHA at step {stopped[t['name']].get('step', 0):,}"
        elif t["name"] in errors:
            status = "failed"
        elif (d / "config.yaml").is_file():
            status = "unfinished"
        else:
            status = "not started"
        td = TrialData(
            t["name"],
            t["config"],
            int(t["seed"]),
            status,
            int(state.get("step", 0)),
            float(state.get("wall_seconds", math.nan)),
        )
        final, curves = _figures(_rows(d / "eval.csv"), "win_rate", lambda r: f"win_rate/{r['opponent']}")
        rfinal, rcurves = _figures(_rows(d / "regret.csv"), "regret", lambda r: "regret")
        td.final, td.curves = {**final, **rfinal}, {**curves, **rcurves}
        trials.append(td)
    return snap, trials


def _interval(
    library: Any,
    metrics: Any,
    scores: dict[str, np.ndarray],
    reps: int,
    seed: int,
    func: Callable[[np.ndarray], np.ndarray],
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's stratified-bootstrap interval estimates, seeded (a fresh generator per call,
    so a figure does not depend on what else the report computes)."""
    # rliable 1.2's StratifiedBootstrap draws its resamples from NumPy's global generator
    # (np.random.choice), whatever random_state says: seed that one, and put it back after
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            # arch deprecates random_state in favour of seed; rliable passes random_state
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            return library.get_interval_estimates(scores, func, reps=reps, random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(saved)


def _pct(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{100 * x:.1f}"


def _fmt(metric: str, x: float) -> str:
    # win rates and regret (win probability per game) both read as percentage points
    return _pct(x)


def write_report(
    out: str | Path,
    *,
    reps: int | None = None,
    seed: int | None = None,
    curve_reps: int | None = None,
    say: Callable[[str], None] | None = None,
) -> Report:
    """Summarise a sweep directory across seeds (module docstring); writes ``out/report/``."""
    library, metrics, plot_utils = import_rliable()
    out = Path(out)
    snap, trials = load_trials(out)
    opts = snap.get("report") or {}
    reps = int(reps if reps is not None else opts.get("reps", 2000))
    curve_reps = int(curve_reps if curve_reps is not None else opts.get("curve_reps", 500))
    seed = int(seed if seed is not None else opts.get("seed", 0))
    if reps < 10 or curve_reps < 10:
        raise SweepError(f"--reps {reps}: give at least 10 bootstrap resamples (a few thousand for a final table)")
    if max(reps, curve_reps) > MAX_REPS:
        raise SweepError(f"--reps {max(reps, curve_reps):,}: give at most {MAX_REPS:,} {REPS_WHY}")
    lead = f"win_rate/{snap.get('metric')}"
    configs = list(snap.get("configs") or dict.fromkeys(t.config for t in trials))
    done = [t for t in trials if t.status == "finished"]
    found = list(dict.fromkeys(m for t in done for m in t.final))
    metrics_list = (
        ([lead] if lead in found else [])
        + [m for m in found if m != lead and m != "regret"]
        + (["regret"] if "regret" in found else [])
    )

    def iqm_mean(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_mean(x), metrics.aggregate_iqm(x)])

    rows = []
    for c in configs:
        runs = sorted((t for t in done if t.config == c), key=lambda t: t.seed)
        for m in metrics_list:
            have = [t for t in runs if m in t.final]
            vals = np.array([t.final[m] for t in have], np.float64)
            row: dict[str, Any] = {"config": c, "metric": m, "seeds": len(vals)}
            if len(vals):
                point, ci = _interval(library, metrics, {c: vals[:, None]}, reps, seed, iqm_mean)
                row.update(
                    mean=float(point[c][0]),
                    mean_ci_low=float(ci[c][0, 0]),
                    mean_ci_high=float(ci[c][1, 0]),
                    iqm=float(point[c][1]),
                    iqm_ci_low=float(ci[c][0, 1]),
                    iqm_ci_high=float(ci[c][1, 1]),
                    min=float(vals.min()),
                    max=float(vals.max()),
                )
            else:
                row.update({k: math.nan for k in SUMMARY_FIELDS[3:11]})
            row["values"] = " ".join(f"seed{t.seed}:{t.final[m]:.6g}" for t in have)
            rows.append(row)

    rep_dir = out / "report"
    files = {
        "summary_csv": rep_dir / "summary.csv",
        "summary_md": rep_dir / "summary.md",
        "trials_csv": rep_dir / "trials.csv",
        "profile": rep_dir / "profile.png",
        "curves": rep_dir / "curves.png",
    }
    atomic_write_text(files["summary_csv"], _csv(rows, SUMMARY_FIELDS))
    trial_fields = ["trial", "config", "seed", "status", "step", "wall_seconds"] + metrics_list
    atomic_write_text(
        files["trials_csv"],
        _csv(
            [
                {
                    "trial": t.name,
                    "config": t.config,
                    "seed": t.seed,
                    "status": t.status,
                    "step": t.step,
                    "wall_seconds": t.wall_seconds,
                    **{m: t.final.get(m, math.nan) for m in metrics_list},
                }
                for t in trials
            ],
            trial_fields,
        ),
    )
    md = _markdown(out, snap, trials, rows, metrics_list, reps, seed)
    atomic_write_text(files["summary_md"], md)
    if lead in metrics_list:
        atomic_write_bytes(files["profile"], _profile_png(library, plot_utils, done, configs, lead, reps, seed, out))
    else:
        files.pop("profile")
    atomic_write_bytes(
        files["curves"], _curves_png(library, metrics, done, configs, metrics_list, curve_reps, seed, out)
    )
    if say:
        say(
            f"report across seeds in {rep_dir}/ (summary.md, summary.csv, trials.csv, "
            f"{'profile.png, ' if 'profile' in files else ''}curves.png)"
        )
    return Report(out, rows, trials, metrics_list, files, md)


def _csv(rows: list[dict[str, Any]], fields: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def _metric_title(m: str) -> str:
    return "regret (pp/game)" if m == "regret" else f"win rate vs {m.partition('/')[2]} (%)"


def _markdown(
    out: Path,
    snap: dict[str, Any],
    trials: list[TrialData],
    rows: list[dict[str, Any]],
    metrics_list: list[str],
    reps: int,
    seed: int,
) -> str:
    counts: dict[str, int] = {}
    for t in trials:
        key = "stopped by ASHA" if t.status.startswith("stopped") else t.status
        counts[key] = counts.get(key, 0) + 1
    walls = [t.wall_seconds for t in trials if t.status == "finished" and math.isfinite(t.wall_seconds)]
    try:
        sessions = json.loads((out / "sweep.json").read_text()).get("sessions", [])
    except (OSError, ValueError):
        sessions = []
    lines = [
        f"# Sweep {out.name}: results across seeds",
        "",
        f"Trials: {len(trials)} ({', '.join(f'{v} {k}' for k, v in counts.items())}); "
        f"configurations: {len(snap.get('configs') or [])}; seeds: {snap.get('seeds')}.",
        "",
    ]
    if walls:
        lines.append(
            f"Wall time: the sweep's sessions took {_dur(sum(s.get('wall_seconds', 0) for s in sessions))}; "
            f"the finished trials' own wall times add up to {_dur(sum(walls))} "
            f"(each {_dur(min(walls))} to {_dur(max(walls))})."
        )
        lines.append("")
    lines += [
        f"Final evaluation of each finished trial; over its seeds: mean and interquartile mean (IQM) with 95% "
        f"stratified-bootstrap intervals (rliable, {reps:,} resamples, seed {seed}). Win rates and regret "
        "(win probability given away per game against perfect play; lower is better) in percentage points (pp).",
        "",
        "| configuration | figure | seeds | mean [95% CI] | IQM [95% CI] | min – max |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["seeds"]:
            lines.append(
                f"| {r['config']} | {_metric_title(r['metric'])} | {r['seeds']} | "
                f"{_fmt(r['metric'], r['mean'])} [{_fmt(r['metric'], r['mean_ci_low'])}, "
                f"{_fmt(r['metric'], r['mean_ci_high'])}] | {_fmt(r['metric'], r['iqm'])} "
                f"[{_fmt(r['metric'], r['iqm_ci_low'])}, {_fmt(r['metric'], r['iqm_ci_high'])}] | "
                f"{_fmt(r['metric'], r['min'])} – {_fmt(r['metric'], r['max'])} |"
            )
        else:
            lines.append(f"| {r['config']} | {_metric_title(r['metric'])} | 0 | - | - | - |")
    unfinished = [t for t in trials if t.status != "finished"]
    if unfinished:
        lines += [
            "",
            "Not in the figures (they did not finish): "
            + ", ".join(f"{t.name} ({t.status})" for t in unfinished)
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _dur(s: float) -> str:
    s = int(round(s))
    return f"{s // 60} min {s % 60:02d} s" if s >= 60 else f"{s} s"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    _pyplot().close(fig)
    return buf.getvalue()


def _profile_png(
    library: Any, plot_utils: Any, done: list[TrialData], configs: list[str], lead: str, reps: int, seed: int, out: Path
) -> bytes:
    plt = _pyplot()
    scores = {
        c: np.array([[t.final[lead]] for t in done if t.config == c and lead in t.final], np.float64) for c in configs
    }
    scores = {c: s for c, s in scores.items() if len(s)}
    taus = _taus(np.concatenate(list(scores.values())))
    # rliable's create_performance_profile, with the bootstrap seeded (it takes no seed)
    profiles, cis = _interval(library, None, scores, reps, seed, lambda s: score_distribution(s, taus))
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    plot_utils.plot_performance_profiles(
        profiles,
        taus,
        performance_profile_cis=cis,
        ax=ax,
        xlabel=f"{_metric_title(lead).replace(' (%)', '')} (tau)",
        ylabel="fraction of runs above tau",
        legend=False,
    )
    ax.legend(loc="lower left", fontsize=7)
    n = {c: len(s) for c, s in scores.items()}
    ax.set_title(
        f"{out.name}: performance profiles over seeds ({', '.join(f'{c}: {k}' for c, k in n.items())} "
        f"runs)\n95% stratified-bootstrap bands, rliable",
        fontsize=8,
    )
    fig.tight_layout()
    return _png(fig)


def _curves_png(
    library: Any,
    metrics: Any,
    done: list[TrialData],
    configs: list[str],
    metrics_list: list[str],
    reps: int,
    seed: int,
    out: Path,
) -> bytes:
    plt = _pyplot()
    panels = metrics_list or ["win_rate"]
    cols = min(3, len(panels))
    rows_n = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(5 * cols, 3.6 * rows_n), dpi=110, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, m in enumerate(panels):
        ax = axes[k // cols][k % cols]
        for ci_, c in enumerate(configs):
            runs = [t for t in done if t.config == c and m in t.curves]
            if not runs:
                continue
            steps = sorted(set.intersection(*(set(t.curves[m]) for t in runs)))
            if not steps:
                continue
            s = np.array([[[t.curves[m][x] for x in steps]] for t in runs], np.float64)  # runs x 1 x steps
            point, ci = _interval(library, metrics, {c: s}, reps, seed, iqm_by_step)
            col = colours[ci_ % len(colours)]
            ax.plot(steps, 100 * point[c], color=col, lw=1.5, label=f"{c} ({len(runs)} seeds)")
            ax.fill_between(steps, 100 * ci[c][0], 100 * ci[c][1], color=col, alpha=0.2, lw=0)
        ax.set_title(_metric_title(m), fontsize=9)
        ax.set_xlabel("training steps")
        ax.xaxis.set_major_formatter(lambda x, pos: f"{x:,.0f}")
        ax.grid(alpha=0.3)
        if k == 0:
            ax.legend(fontsize=7)
    for k in range(len(panels), rows_n * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle(f"{out.name}: IQM across seeds, 95% stratified-bootstrap bands (rliable)", fontsize=10)
    fig.tight_layout()
    return _png(fig)
