"""Sweep files: a training config, a search over its keys, crossed with seeds.

A sweep file (``configs/sweep_demo.yaml``)::

    name: sweep_demo             # the sweep writes RUNS_DIR/NAME/ (default: the file's stem)
    base: ppo_demo.yaml          # the training config of every trial (relative to this file)
    set: {total_steps: 5e5}      # overrides for every trial: `tenk train --set` keys and values
    search: grid                 # grid: every combination of `space`; random: `samples` draws;
                                 # variants: each entry of `space` is a named configuration
    space:                       # dotted `--set` keys -> values (grid) or distributions (random)
      ppo.gae_lambda: [0.8, 0.95]
    # search: variants, for an ablation (one change at a time from the base):
    # space: {base: {}, wide: {ppo.net_arch: [256, 256]}, dicenow: {opponents: {dicenow: 1}}}
    seeds: [0, 1, 2, 3, 4]       # or a count: 5 means 0..4
    resources: {cpus: 1, torch_threads: 1}
    scheduler: null              # or {type: asha, grace_steps: 200000, reduction_factor: 2}
    metric: null                 # the opponent whose win rate leads (null: the base's eval.best_by)
    report: {reps: 2000, curve_reps: 500, seed: 0}

Every trial is a ``tenk train`` config (base + ``set`` + one point of ``space`` + its seed),
validated here with the trainer's own checks, so a typo in any key or value fails before
Ray starts, naming the key. A trial is named after its point and seed
(``gae_lambda=0.8_seed3``; a variant after its name, ``wide_seed3``) and trains in
``RUNS_DIR/NAME/TRIAL/``.

Random search draws its points with NumPy from ``search_seed``, once, here: the trials of
a sweep are a fixed list, so an interrupted sweep resumes the same trials.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from tenk_env import schema
from tenk_env.io import find_config, read_yaml_mapping
from tenk_env.rules import did_you_mean
from tenk_env.schema import config_field, public_fields
from tenk_env.training.config import ConfigError, TrainConfig, apply_overrides, config_to_dict, parse_config, read_yaml

__all__ = [
    "SweepError",
    "SweepFile",
    "SweepConfig",
    "Trial",
    "load_sweep",
    "parse_sweep",
    "SWEEP_KEYS",
    "DISTRIBUTIONS",
]
#: random-search distributions: name -> what its list holds
DISTRIBUTIONS = {
    "uniform": "[low, high]",
    "loguniform": "[low, high], both positive",
    "randint": "[low, high], whole numbers, both included",
    "choice": "[value, value, ...]",
}
SEARCHES = ("grid", "random", "variants")
#: what a sweep's or a variant's name may hold: it names a directory
NAME = re.compile(r"[\w.+-]+")
#: keys a sweep sets itself on every trial
OWN_KEYS = ("seed", "name", "runs_dir", "torch_threads")
#: directory names in a sweep directory that are not trials
RESERVED = ("tune", "logs", "report")
#: the most trials a sweep may hold: each is a training run, and every one is built and
#: checked before the first starts (a count like 1e12 would exhaust the memory doing it)
MAX_TRIALS = 10_000
#: the most bootstrap resamples of a report: each is a pass over the runs, and the
#: performance profile keeps 101 values of each (2,000, the default, serve a final table)
MAX_REPS = 100_000


class SweepError(ConfigError):
    """A sweep file the runner cannot use; the message names the key and the fix."""


# The sections of a sweep file, in the one config dialect: the fields are the keys and their
# help. Values are not converted by the schema (check_types=False): parse_sweep checks each
# with a message that names the fix, and `set`, `space` and the distributions by their own rules.
@dataclass
class SweepResources:
    cpus: float = config_field("the CPUs each trial holds (0.5 shares one between two trials)", 1)
    torch_threads: int | None = config_field("PyTorch threads of each trial (null: cpus, at least 1)", None)


@dataclass
class SweepScheduler:
    type: str = config_field("asha: ASHA early stopping on the evaluation win rate (the only one)", "asha")
    grace_steps: int = config_field("training steps every trial runs before ASHA may stop it", 1)
    reduction_factor: float = config_field("above 1: 2 keeps the better half of the trials at each rung", 2)


@dataclass
class SweepReport:
    reps: int = config_field("bootstrap resamples of the report's intervals and performance profile", 2000)
    curve_reps: int = config_field("bootstrap resamples of the learning curves' intervals", 500)
    seed: int = config_field("seed of the bootstrap resampling", 0)


@dataclass(kw_only=True)  # base, required, keeps its place in the file's key order
class SweepFile:
    name: str | None = config_field("the sweep writes RUNS_DIR/NAME/ (null: the file's stem)", None)
    runs_dir: str = config_field("directory the sweep directory goes in", "runs")
    base: str = config_field(
        "the training config of every trial (relative to the sweep file, then to the working directory)"
    )
    set: Any = config_field(
        "overrides for every trial: `tenk train --set` keys and values, as a mapping or a list of KEY=VALUE", None
    )
    search: str = config_field(
        "grid: every combination of space; random: samples draws; variants: each entry "
        "of space is a named configuration",
        "grid",
    )
    space: Any = config_field(
        "dotted `--set` keys -> lists of values (grid) or distributions (random: "
        + ", ".join(DISTRIBUTIONS)
        + "); variants: names -> their overrides",
        None,
    )
    samples: int | None = config_field("how many points search: random draws from space", None)
    search_seed: int = config_field("seed of the random search's draws", 0)
    seeds: Any = config_field(
        "training seeds every point is crossed with: a list, or a count (5: 0..4)", factory=lambda: [0]
    )
    resources: SweepResources = config_field("what each trial holds", factory=SweepResources)
    max_concurrent: int | None = config_field("the most trials training at once (null: as many as the CPUs hold)", None)
    scheduler: SweepScheduler | None = config_field("early stopping (null: every trial trains to the end)", None)
    metric: str | None = config_field(
        "the evaluation opponent whose win rate ASHA and the report lead with (null: the base's eval.best_by)", None
    )
    report: SweepReport = config_field("the report across seeds", factory=SweepReport)
    max_failures: int = config_field("times Ray Tune retries a failed trial (0: none)", 0)


#: the top-level keys of a sweep file
SWEEP_KEYS = tuple(f.name for f in public_fields(SweepFile))


@dataclass
class Trial:
    name: str  #: run directory name under the sweep directory
    config: str  #: the configuration (point of the search) it belongs to
    seed: int
    values: dict[str, Any]  #: the swept keys' values at this point
    overrides: list[str]  #: `--set` overrides on top of the base config
    cfg: TrainConfig = field(repr=False, compare=False, default=None)  # type: ignore[assignment]

    @property
    def data(self) -> dict[str, Any]:
        """The validated config as plain data (what the trial trains from)."""
        return config_to_dict(self.cfg)

    @property
    def config_sha256(self) -> str:
        return hashlib.sha256(json.dumps(self.data, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": self.config,
            "seed": self.seed,
            "values": self.values,
            "overrides": self.overrides,
            "config_sha256": self.config_sha256,
        }


@dataclass
class SweepConfig:
    name: str
    runs_dir: str
    base: Path
    source: str
    trials: list[Trial]
    configs: list[str]  #: configuration names, in order
    seeds: list[int]
    cpus: float = 1.0
    torch_threads: int = 1
    max_concurrent: int | None = None
    scheduler: dict[str, Any] | None = None
    metric: str = ""  #: evaluation opponent whose win rate ASHA and the report lead with
    reps: int = 2000
    curve_reps: int = 500
    report_seed: int = 0
    max_failures: int = 0
    raw: dict[str, Any] = field(default_factory=dict)
    file: str = ""  #: the sweep file it was read from

    @property
    def out_dir(self) -> Path:
        return Path(self.runs_dir) / self.name

    def snapshot(self) -> dict[str, Any]:
        """What sweep.yaml holds: the sweep file as read, and every trial."""
        return {
            "sweep": self.raw,
            "base": str(self.base),
            "metric": self.metric,
            "report": {"reps": self.reps, "curve_reps": self.curve_reps, "seed": self.report_seed},
            "configs": self.configs,
            "seeds": self.seeds,
            "trials": [t.to_json() for t in self.trials],
        }


# --------------------------------------------------------------------------- helpers
def _flow(value: Any) -> str:
    """A value as `--set` writes it (one line of YAML)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text.removesuffix("...").strip()


def _label_value(v: Any) -> str:
    if isinstance(v, float):
        text = f"{v:.4g}"
    elif isinstance(v, (list, tuple, dict)):
        text = json.dumps(v, separators=(",", ":"))
    else:
        text = str(v)
    return re.sub(r"[^\w.+-]+", "-", text).strip("-") or "x"


def _labels(keys: list[str]) -> dict[str, str]:
    """Short names of the swept keys: the last part of each dotted key, or the whole key
    where two share a last part."""
    last = [k.rpartition(".")[2] for k in keys]
    return {k: (s if last.count(s) == 1 else k) for k, s in zip(keys, last)}


def _whole(src: str, key: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not float(v).is_integer() or v < lo:
        raise SweepError(f"{src}: {key} = {v!r}: give a whole number, at least {lo}")
    return int(v)


#: why the counts are bounded, by what they count
TRIALS_WHY = "trials (each is a training run, and every one is built and checked before the first starts)"
REPS_WHY = "bootstrap resamples (each is a pass over the runs; the default 2,000 serve a final table)"


def _count(src: str, key: str, v: Any, lo: int, hi: int, what: str) -> int:
    """A whole number from ``lo`` to ``hi`` of ``what`` (a phrase saying why); 1e3, which
    PyYAML reads as a string, is taken as a number, as the training config takes it."""
    written = v
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            pass
    n = _whole(src, key, v, lo)
    if n > hi:
        raise SweepError(f"{src}: {key} = {written}: give at most {hi:,} {what}")
    return n


def _number(src: str, key: str, v: Any) -> float:
    if isinstance(v, str):
        try:
            v = float(v)  # PyYAML reads 3e-4 (no dot) as a string
        except ValueError:
            pass
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise SweepError(f"{src}: {key} = {v!r}: give a number")
    return float(v)


def _unknown_key(src: str):
    """The sweep's wording of an unknown key, for schema.check_keys: it names the file."""

    def message(key: str, known: list[str], prefix: str) -> str:
        return (
            f"{src}: unknown key {prefix + '.' if prefix else ''}{key}{did_you_mean(str(key), known)}; "
            f"{prefix or 'the top level'} has: {', '.join(known)}"
        )

    return message


def _section(src: str, cls, data: Mapping[str, Any], prefix: str):
    """Section ``cls`` from ``data``, unknown keys refused in the sweep's wording; the values
    as written (parse_sweep checks them)."""
    return schema.build_section(cls, data, prefix, check_types=False, message=_unknown_key(src), error=SweepError)


def _overrides(src: str, value: Any) -> list[str]:
    """``set``: a mapping of dotted keys to values, or a list of KEY=VALUE strings."""
    if value is None:
        return []
    if isinstance(value, Mapping):
        return [f"{k}={_flow(v)}" for k, v in value.items()]
    if isinstance(value, (list, tuple)) and all(isinstance(x, str) and "=" in x for x in value):
        return list(value)
    raise SweepError(
        f"{src}: set = {value!r}: give a mapping of config keys to values (e.g. {{total_steps: 5e5, "
        "ppo.learning_rate: 1e-3}) or a list of KEY=VALUE strings"
    )


def _sample(src: str, key: str, spec: Any, rng: np.random.Generator) -> Any:
    if isinstance(spec, (list, tuple)):
        spec = {"choice": list(spec)}
    if not (isinstance(spec, Mapping) and len(spec) == 1):
        raise SweepError(
            f"{src}: space.{key} = {spec!r}: give a list of values or one distribution, e.g. "
            f"{{loguniform: [1e-4, 1e-3]}} ({', '.join(DISTRIBUTIONS)})"
        )
    ((kind, args),) = spec.items()
    if kind not in DISTRIBUTIONS:
        raise SweepError(
            f"{src}: space.{key}: unknown distribution {kind!r}{did_you_mean(str(kind), DISTRIBUTIONS)}; "
            f"choose one of {', '.join(f'{k}: {v}' for k, v in DISTRIBUTIONS.items())}"
        )
    if not isinstance(args, (list, tuple)) or not args or (kind != "choice" and len(args) != 2):
        raise SweepError(f"{src}: space.{key}: {kind} takes {DISTRIBUTIONS[kind]}, got {args!r}")
    if kind == "choice":
        return args[int(rng.integers(len(args)))]
    if kind == "randint":
        lo, hi = (_whole(src, f"space.{key}", a, -(2**62)) for a in args)
        if hi < lo:
            raise SweepError(f"{src}: space.{key}: randint [{lo}, {hi}]: the low end is above the high end")
        return int(rng.integers(lo, hi + 1))
    lo, hi = (_number(src, f"space.{key}", a) for a in args)
    if hi < lo:
        raise SweepError(f"{src}: space.{key}: {kind} [{lo}, {hi}]: the low end is above the high end")
    if kind == "uniform":
        return float(rng.uniform(lo, hi))
    if lo <= 0:
        raise SweepError(f"{src}: space.{key}: loguniform [{lo}, {hi}]: both ends must be positive")
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _variants(src: str, space: Mapping[str, Any]) -> list[dict[str, Any]]:
    """search: variants: each entry of ``space`` names one configuration and its overrides."""
    if not space:
        raise SweepError(
            f"{src}: search: variants needs a space of named configurations, e.g. "
            "{base: {}, wide: {ppo.net_arch: [256, 256]}}"
        )
    points = []
    for name, changes in space.items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise SweepError(
                f"{src}: space: variant name {name!r}: use letters, digits and . _ + - only "
                "(it names the trials' directories)"
            )
        changes = {} if changes is None else changes
        if not isinstance(changes, Mapping):
            raise SweepError(
                f"{src}: space.{name} = {changes!r}: give a mapping of config keys (`--set` syntax) to "
                "values, or {} for the base config as it is"
            )
        points.append(dict(changes))
    return points


def _points(
    src: str, search: str, space: Mapping[str, Any], samples: int | None, search_seed: int
) -> list[dict[str, Any]]:
    keys = list(space)
    if search == "variants":
        if samples is not None:
            raise SweepError(f"{src}: samples is for search: random (variants runs each named configuration)")
        return _variants(src, space)
    if search == "grid":
        if samples is not None:
            raise SweepError(f"{src}: samples is for search: random (a grid runs every combination of space)")
        for k, v in space.items():
            if not isinstance(v, (list, tuple)) or not v:
                raise SweepError(
                    f"{src}: space.{k} = {v!r}: a grid takes a list of values, e.g. [3e-4, 1e-3] "
                    "(distributions are for search: random)"
                )
        size = math.prod(len(space[k]) for k in keys)
        if size > MAX_TRIALS:
            raise SweepError(
                f"{src}: space: a grid of {' x '.join(str(len(space[k])) for k in keys)} = {size:,} "
                f"combinations: give at most {MAX_TRIALS:,} {TRIALS_WHY} (fewer values, or search: "
                "random with samples: N)"
            )
        return [dict(zip(keys, combo)) for combo in itertools.product(*(space[k] for k in keys))]
    if samples is None:
        raise SweepError(f"{src}: search: random needs samples: N (how many points to draw from space)")
    if not keys:
        raise SweepError(f"{src}: search: random needs a space to draw from")
    rng = np.random.default_rng(search_seed)
    return [{k: _sample(src, k, space[k], rng) for k in keys} for _ in range(samples)]


# --------------------------------------------------------------------------- entry points
def parse_sweep(
    data: Any,
    *,
    source: str = "sweep config",
    base_dir: Path = Path("."),
    default_name: str = "sweep",
    overrides: list[str] = (),
) -> SweepConfig:
    """A validated sweep from the data of a sweep file; every trial's training config is
    built and checked. ``overrides`` (``--set``) apply to every trial after the file's own."""
    src = source
    if not isinstance(data, Mapping):
        raise SweepError(f"{src}: expected a mapping of {', '.join(SWEEP_KEYS)}")
    schema.check_keys(data, SWEEP_KEYS, "", _unknown_key(src), SweepError)
    name = data.get("name") or default_name
    if not isinstance(name, str) or not NAME.fullmatch(name) or name in (".", ".."):
        raise SweepError(f"{src}: name = {name!r}: use letters, digits and . _ + - only (it names a directory)")
    runs_dir = data.get("runs_dir", "runs")
    if not isinstance(runs_dir, str) or not runs_dir:
        raise SweepError(f"{src}: runs_dir = {runs_dir!r}: give a directory path")
    if "base" not in data or not isinstance(data["base"], str):
        raise SweepError(
            f"{src}: base is missing: name the training config of every trial, e.g. "
            "base: ppo_demo.yaml (relative to the sweep file) or configs/ppo_demo.yaml"
        )
    base = near = Path(data["base"])
    if not base.is_absolute():
        # next to the sweep file first, then from the working directory
        near = base_dir / base
        base = near if near.is_file() or not base.is_file() else base
    if not base.is_file():
        raise SweepError(
            f"{src}: base = {data['base']!r}: no such training config (looked for {str(near)!r}); the "
            "shipped ones are in configs/ (e.g. configs/ppo_demo.yaml)"
        )
    common = _overrides(src, data.get("set")) + list(overrides)
    for item in common:
        key = item.partition("=")[0].strip()
        if key in OWN_KEYS:
            what = {"seed": "seeds", "torch_threads": "resources.torch_threads"}.get(
                key, "the sweep's name and runs_dir"
            )
            raise SweepError(f"{src}: set {key}: the sweep sets {key} of every trial itself (use {what})")
    search = data.get("search", "grid")
    if search not in SEARCHES:
        raise SweepError(
            f"{src}: search = {search!r}{did_you_mean(str(search), SEARCHES)}: choose grid, random or variants"
        )
    space = data.get("space") or {}
    if not isinstance(space, Mapping):
        raise SweepError(
            f"{src}: space = {space!r}: give a mapping of config keys (`--set` syntax, e.g. "
            "ppo.learning_rate) to values"
        )
    samples = data.get("samples")
    samples = None if samples is None else _count(src, "samples", samples, 1, MAX_TRIALS, TRIALS_WHY)
    search_seed = _whole(src, "search_seed", data.get("search_seed", 0), 0)
    points = _points(src, search, space, samples, search_seed)
    names = list(space) if search == "variants" else [""] * len(points)
    for where, p in zip(names, points):
        for k in p:
            if not isinstance(k, str):
                raise SweepError(f"{src}: space key {k!r}: give a config key as `tenk train --set` writes it")
            if k in OWN_KEYS:
                what = (
                    "seeds" if k == "seed" else ("resources.torch_threads" if k == "torch_threads" else "name/runs_dir")
                )
                raise SweepError(
                    f"{src}: space.{where + '.' if where else ''}{k}: the sweep sets {k} itself (use {what})"
                )

    seeds = data.get("seeds", [0])
    if isinstance(seeds, (int, float, str)) and not isinstance(seeds, bool):
        seeds = list(range(_count(src, "seeds", seeds, 1, MAX_TRIALS, TRIALS_WHY)))
    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise SweepError(f"{src}: seeds = {seeds!r}: give a list of training seeds (e.g. [0, 1, 2]) or a count")
    seeds = [_whole(src, "seeds[]", s, 0) for s in seeds]
    if len(set(seeds)) != len(seeds):
        raise SweepError(f"{src}: seeds = {seeds}: a seed is listed twice")
    if len(points) * len(seeds) > MAX_TRIALS:
        raise SweepError(
            f"{src}: {len(points):,} configurations x {len(seeds):,} seeds = {len(points) * len(seeds):,} "
            f"trials: give at most {MAX_TRIALS:,} {TRIALS_WHY}"
        )

    res = data.get("resources") or {}
    if not isinstance(res, Mapping):
        raise SweepError(f"{src}: resources = {res!r}: give a mapping, e.g. {{cpus: 1, torch_threads: 1}}")
    res = _section(src, SweepResources, res, "resources")
    cpus = _number(src, "resources.cpus", res.cpus)
    if cpus <= 0:
        raise SweepError(f"{src}: resources.cpus = {cpus:g}: give the CPUs a trial holds (e.g. 1; 0.5 shares one)")
    threads = _whole(
        src, "resources.torch_threads", max(1, int(cpus)) if res.torch_threads is None else res.torch_threads, 1
    )
    max_conc = data.get("max_concurrent")
    max_conc = None if max_conc is None else _whole(src, "max_concurrent", max_conc, 1)
    max_failures = _whole(src, "max_failures", data.get("max_failures", 0), 0)

    sched = data.get("scheduler")
    if sched is not None:
        if not isinstance(sched, Mapping):
            raise SweepError(
                f"{src}: scheduler = {sched!r}: give null or {{type: asha, grace_steps: N, reduction_factor: 2}}}}"
            )
        s = _section(src, SweepScheduler, sched, "scheduler")
        if s.type != "asha":
            raise SweepError(
                f"{src}: scheduler.type = {s.type!r}: only asha (ASHA early stopping on the "
                "evaluation win rate) is supported"
            )
        sched = {
            "type": "asha",
            "grace_steps": _whole(src, "scheduler.grace_steps", s.grace_steps, 1),
            "reduction_factor": _number(src, "scheduler.reduction_factor", s.reduction_factor),
        }
        if sched["reduction_factor"] <= 1:
            raise SweepError(
                f"{src}: scheduler.reduction_factor must be above 1 (2 keeps the better half at each rung)"
            )

    rep = data.get("report") or {}
    if not isinstance(rep, Mapping):
        raise SweepError(f"{src}: report = {rep!r}: give a mapping, e.g. {{reps: 2000, seed: 0}}")
    rep = _section(src, SweepReport, rep, "report")
    reps = _count(src, "report.reps", rep.reps, 10, MAX_REPS, REPS_WHY)
    curve_reps = _count(src, "report.curve_reps", rep.curve_reps, 10, MAX_REPS, REPS_WHY)
    report_seed = _whole(src, "report.seed", rep.seed, 0)

    raw_base = read_yaml(base)
    keys = list(space)
    short = _labels(keys)
    width = len(str(len(points) - 1))
    configs: list[str] = []
    for i, p in enumerate(points):
        if search == "variants":
            configs.append(names[i])
            continue
        label = "_".join(f"{short[k]}={_label_value(v)}" for k, v in p.items()) or Path(base).stem
        if search == "random":
            label = f"r{i:0{width}d}_{label}"
        configs.append(label)
    if len(set(configs)) != len(configs):
        dup = next(c for c in configs if configs.count(c) > 1)
        raise SweepError(f"{src}: two points of the space are both named {dup!r}; list each value once")
    trials = []
    for seed in seeds:  # seed-major: the first trials cover every configuration once
        for label, p in zip(configs, points):
            tname = f"{label}_seed{seed}"
            if tname in RESERVED:
                raise SweepError(f"{src}: trial name {tname!r} is reserved")
            ov = (
                common
                + [f"{k}={_flow(v)}" for k, v in p.items()]
                + [
                    f"seed={seed}",
                    f"torch_threads={threads}",
                    f"name={tname}",
                    f"runs_dir={str(Path(runs_dir) / name)}",
                ]
            )
            try:
                cfg = parse_config(apply_overrides(raw_base, ov), source=f"trial {tname!r} (base {str(base)!r})")
            except ConfigError as e:
                raise SweepError(f"{src}: {e}") from None
            trials.append(Trial(tname, label, seed, dict(p), ov[:-2], cfg))
    first = trials[0].cfg
    metric = data.get("metric") or first.best_by
    if metric not in first.eval_opponents:
        raise SweepError(
            f"{src}: metric = {metric!r}{did_you_mean(str(metric), first.eval_opponents)}: give one of "
            f"the evaluation opponents ({', '.join(first.eval_opponents)})"
        )
    for t in trials:
        if metric not in t.cfg.eval_opponents:
            raise SweepError(
                f"{src}: trial {t.name!r} does not evaluate against {metric!r} (its eval.opponents: "
                f"{', '.join(t.cfg.eval_opponents)}); every trial must, to be compared"
            )
    if sched is not None and all(t.cfg.eval.every == 0 for t in trials):
        raise SweepError(
            f"{src}: scheduler asha stops trials on their evaluations, and eval.every is 0 (only a final "
            "one): set eval.every"
        )
    raw = dict(data)
    raw["base"] = str(base)
    return SweepConfig(
        name=name,
        runs_dir=runs_dir,
        base=base,
        source=src,
        trials=trials,
        configs=configs,
        seeds=seeds,
        cpus=cpus,
        torch_threads=threads,
        max_concurrent=max_conc,
        scheduler=sched,
        metric=metric,
        reps=reps,
        curve_reps=curve_reps,
        report_seed=report_seed,
        max_failures=max_failures,
        raw=raw,
    )


def load_sweep(path: str | Path, overrides: list[str] = ()) -> SweepConfig:
    """Read and validate a sweep file; ``base`` is found relative to the file first."""
    path = find_config(path)
    data = read_yaml_mapping(path, "sweep config", SweepError, "see configs/sweep_demo.yaml")
    sweep = parse_sweep(
        data,
        source=f"sweep config {str(path)!r}",
        base_dir=path.parent,
        default_name=path.stem,
        overrides=list(overrides),
    )
    sweep.file = str(path)
    return sweep
