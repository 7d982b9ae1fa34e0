"""`tenk plot runs/NAME`: learning-curve PNGs from a run's TensorBoard event files.

Reads ``runs/NAME/tb`` with TensorBoard's ``EventAccumulator`` (which also drops the
points a killed session wrote past the checkpoint a resumed session restarted from) and
writes, under ``runs/NAME/plots/`` (or ``--out``):

* ``win_rates.png``: ``eval/win_rate/<opponent>`` with its 95% interval as a band;
* ``regret.png``: ``eval/regret``, the exact win probability given away per game against
  perfect play, with its 95% interval as a band (runs on rulesets the game solver covers);
* ``game.png``: points per turn, bust rate and turns per game (evaluation games);
* ``training.png``: training-game win rates by pool entry and SB3's losses.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from tenk_env.cli.args import check_output_dir
from tenk_env.io import atomic_write_bytes
from tenk_env.units import REGRET_HEADER

__all__ = ["read_scalars", "plot_run"]


def read_scalars(tb_dir: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """tag -> (steps, values), sorted by step (the last value written wins a repeated step)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tb_dir = Path(tb_dir)
    if not tb_dir.is_dir() or not any(tb_dir.glob("events.out.tfevents.*")):
        raise FileNotFoundError(
            f"no TensorBoard event files in {str(tb_dir)!r}; give a run directory written by `tenk train` (runs/NAME)"
        )
    ea = EventAccumulator(str(tb_dir), size_guidance={"scalars": 0}, purge_orphaned_data=True)
    ea.Reload()
    out = {}
    for tag in ea.Tags()["scalars"]:
        by_step = {e.step: e.value for e in ea.Scalars(tag)}
        steps = np.array(sorted(by_step), dtype=np.int64)
        out[tag] = (steps, np.array([by_step[s] for s in steps], dtype=np.float64))
    return out


def _steps_axis(ax, label: str = "training steps (learner decisions)") -> None:
    from matplotlib.ticker import FuncFormatter

    def fmt(x, _):
        if abs(x) >= 1e6:
            return f"{x / 1e6:g}M"
        if abs(x) >= 1e3:
            return f"{x / 1e3:g}k"
        return f"{x:g}"

    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    ax.set_xlabel(label)
    ax.grid(True, alpha=0.3)


def regret_figure(
    x,
    y,
    band,
    *,
    title: str,
    xlabel: str,
    label: str = "regret per game",
    band_label: str = "95% interval (over deals)",
):
    """A regret curve (win probability per game, plotted in percentage points) with its 95%
    band where ``band`` (low, high) is given: the run plots' regret panel and ``tenk suite
    curve``'s. Returns the matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    (line,) = ax.plot(x, 100 * np.asarray(y), marker="o", ms=3, label=label)
    if band is not None:
        ax.fill_between(
            x,
            100 * np.asarray(band[0]),
            100 * np.asarray(band[1]),
            color=line.get_color(),
            alpha=0.18,
            lw=0,
            label=band_label,
        )
    ax.axhline(0, color="grey", lw=0.8, ls="--")
    ax.set_ylim(bottom=0)
    ax.set_ylabel(f"{REGRET_HEADER}: win probability given away")
    ax.set_title(title)
    ax.legend(fontsize=9)
    _steps_axis(ax, xlabel)
    return fig


def plot_run(run_dir: str | Path, out_dir: str | Path | None = None) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    run_dir = Path(run_dir)
    s = read_scalars(run_dir / "tb")
    # afterstate runs (tenk_env/training/afterstate.py) count learner turns, PPO runs decisions
    turns = any(tag.startswith("train/turns") for tag in s)
    xlabel = "learner turns (afterstate training)" if turns else "training steps (learner decisions)"
    out_dir = Path(out_dir) if out_dir else run_dir / "plots"
    written = []

    def save(fig, name):
        import io

        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
        plt.close(fig)
        path = out_dir / name
        atomic_write_bytes(path, buf.getvalue())
        written.append(path)

    name = run_dir.resolve().name
    opps = [t[len("eval/win_rate/") :] for t in s if t.startswith("eval/win_rate/")]
    if opps:
        # left: every opponent over the whole run on a 0-1 scale; right: the closest contest
        # (final win rate nearest 50%) after the first evaluation, zoomed, where a point or
        # two of win rate shows
        close = min(opps, key=lambda o: abs(s[f"eval/win_rate/{o}"][1][-1] - 0.5))
        fig, (ax, az) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1, 1]})
        for o in opps:
            x, y = s[f"eval/win_rate/{o}"]
            bands = None
            if f"eval/ci_low/{o}" in s and f"eval/ci_high/{o}" in s:
                (xl, lo), (xh, hi) = s[f"eval/ci_low/{o}"], s[f"eval/ci_high/{o}"]
                if len(xl) == len(x) == len(xh):
                    bands = (lo, hi)
            (line,) = ax.plot(x, y, marker="o", ms=3, label=o)
            if bands is not None:
                ax.fill_between(x, *bands, color=line.get_color(), alpha=0.18, lw=0)
            if o == close:
                later = x > x[0] if len(x) > 1 else x == x
                az.plot(x[later], y[later], marker="o", ms=3, color=line.get_color(), label=o)
                if bands is not None:
                    az.fill_between(
                        x[later], bands[0][later], bands[1][later], color=line.get_color(), alpha=0.18, lw=0
                    )
        for a in (ax, az):
            a.axhline(0.5, color="grey", lw=0.8, ls="--")
            _steps_axis(a, xlabel)
        ax.set_ylim(0, 1)
        ax.set_ylabel("win rate (seat-balanced match, 95% interval)")
        ax.set_title(f"{name}: evaluation win rates")
        ax.legend(loc="lower right", fontsize=9)
        az.set_title(f"vs {close}, after the first evaluation (zoomed)")
        az.legend(loc="lower right", fontsize=9)
        save(fig, "win_rates.png")

    if "eval/regret" in s:
        x, y = s["eval/regret"]
        band = None
        if "eval/regret_ci_low" in s and "eval/regret_ci_high" in s:
            (xl, lo), (xh, hi) = s["eval/regret_ci_low"], s["eval/regret_ci_high"]
            if len(xl) == len(x) == len(xh):
                band = (lo, hi)
        save(regret_figure(x, y, band, title=f"{name}: exact regret against perfect play", xlabel=xlabel), "regret.png")

    panels = [
        ("game/points_per_turn", "points per turn"),
        ("game/bust_rate", "bust rate"),
        ("game/turns_per_game", "turns per game"),
    ]
    panels = [(t, lab) for t, lab in panels if t in s]
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
        for ax, (tag, label) in zip(axes[0], panels):
            x, y = s[tag]
            ax.plot(x, y, marker="o", ms=3, label="evaluation games")
            rt = tag.replace("game/", "rollout/")
            if rt in s:
                ax.plot(*s[rt], lw=0.8, alpha=0.7, label="training games")
            ax.set_title(label)
            ax.legend(fontsize=8)
            _steps_axis(ax, xlabel)
        fig.suptitle(f"{name}: game statistics")
        fig.tight_layout()
        save(fig, "game.png")

    train_tags = [
        t
        for t in (
            "rollout/win_rate",
            "train/value_loss",
            "train/entropy_loss",
            "train/approx_kl",
            "train/clip_fraction",
            "train/explained_variance",
        )
        if t in s
    ]
    if train_tags:
        cols = 3
        rows = -(-len(train_tags) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
        for ax, tag in zip(axes.flat, train_tags):
            if tag == "rollout/win_rate":
                for t in sorted(x for x in s if x.startswith("rollout/win_rate/")):
                    ax.plot(*s[t], lw=0.8, label=t.rsplit("/", 1)[1])
                ax.plot(*s[tag], color="black", lw=1, label="all")
                ax.legend(fontsize=7)
                ax.set_title("training games won")
            else:
                ax.plot(*s[tag], lw=0.9)
                ax.set_title(tag)
            _steps_axis(ax, xlabel)
        for ax in list(axes.flat)[len(train_tags) :]:
            ax.axis("off")
        fig.suptitle(f"{name}: training")
        fig.tight_layout()
        save(fig, "training.png")
    if not written:
        raise ValueError(f"{str(run_dir)!r} has event files but no scalars to plot yet; wait for the first evaluation")
    return written


def cmd_plot(args: argparse.Namespace) -> int:
    if args.out:
        check_output_dir(args.out, "--out")
    for p in plot_run(args.run, args.out):
        print(p)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("plot", help="learning-curve PNGs of a training run (from its TensorBoard events)")
    s.add_argument("run", help="run directory, e.g. runs/ppo_demo")
    s.add_argument("--out", help="output directory (default RUN/plots)")
    s.set_defaults(func=cmd_plot)
