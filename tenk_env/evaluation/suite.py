"""``tenk suite evaluate``: an agent's exact regret on every ruleset of a suite split.

On each ruleset of the split (:func:`tenk_env.variants.split`) the agent's seat-balanced
win rate against ``optimal`` is measured as the benchmark table measures it
(:func:`tenk_env.evaluation.benchmark.vs_optimal`): exact where the exact evaluator follows
the agent, else implied by its regret over analysed games, with a 95% interval. Its
*regret* there is 0.5 minus that win rate: the win probability per game it gives away
against perfect play. The split's mean regret gets a 95% interval from the per-ruleset
intervals (independent games; exact figures add no width): an interval over these
rulesets, not over the space they were drawn from.

A result is one JSON file keyed by the agent (its spec and, for file agents, its file's
content hash), the split and the space version (:data:`RESULT_FORMAT` documents it).
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from tenk_env import variants
from tenk_env.evaluation.analysis import KINDS
from tenk_env.evaluation.benchmark import vs_optimal
from tenk_env.io import atomic_write_text
from tenk_env.policies.base import AgentError, AgentSpec
from tenk_env.solve.game import is_cached, solve_game

__all__ = ["RulesetScore", "SuiteResult", "evaluate_suite", "result_path", "write_result", "read_result", "leaderboard",
           "learning_curve", "kept_nets", "mistakes_by_kind", "RESULT_FORMAT"]

#: the result file's layout: {format, space_version, split, agent, agent_sha256, games, seed,
#: rulesets: [RulesetScore...], mean_regret, mean_regret_ci, seconds, command}
RESULT_FORMAT = 1
_Z95 = 1.959963984540054


@dataclass
class RulesetScore:
    name: str
    hash: str
    win_rate: float          #: seat-balanced, against optimal
    ci: tuple[float, float] | None  #: 95% (equal to the win rate where exact); None: too few games for one
    how: str                 #: "exact" or "regret over N games"
    regret: float            #: 0.5 - win_rate: win probability given away per game
    note: str = ""           #: why there is no interval, where there is none
    #: measured by regret: that regret by kind of mistake (tenk_env.evaluation.analysis.KINDS); exact: empty
    by_kind: dict = field(default_factory=dict)


@dataclass
class SuiteResult:
    agent: str
    agent_sha256: str | None
    split: str
    space_version: int
    games: int
    seed: int
    rulesets: list[RulesetScore]
    mean_regret: float
    mean_regret_ci: tuple[float, float] | None  #: None where a ruleset has no interval
    seconds: float
    command: str = ""
    format: int = field(default=RESULT_FORMAT)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)


def _mean_ci(scores: list[RulesetScore]) -> tuple[float, tuple[float, float] | None]:
    k = len(scores)
    mean = sum(s.regret for s in scores) / k
    if any(s.ci is None for s in scores):
        return mean, None
    var = sum(((s.ci[1] - s.ci[0]) / (2 * _Z95)) ** 2 for s in scores)
    half = _Z95 * math.sqrt(var) / k
    return mean, (mean - half, mean + half)


def result_path(out_dir: str | Path, agent: str, split: str, sha: str | None) -> Path:
    """Where the result of ``agent`` on ``split`` goes: one file per (agent, content, split, space)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", agent).strip("_")[:80]
    return Path(out_dir) / f"{stem}{'-' + sha if sha else ''}-{split}-space{variants.SPACE_VERSION}.json"


def evaluate_suite(agent: str, split: str = "test", *, games: int = 1000, seed: int = 0, workers: int = 2,
                   count: int | None = None, exact: bool = True, log: Callable[[str], None] = print,
                   command: str = "") -> SuiteResult:
    """Measure ``agent`` (a spec) on every ruleset of ``split`` (``count``: how many training
    rulesets); ``games``: analysed games per ruleset where the evaluation is by regret (every
    ruleset, with ``exact`` false: an exact evaluation takes minutes a ruleset at a 10,000
    target, the analysis of 1,000 games seconds). The rulesets' solutions are solved first
    where they are not cached (minutes each)."""
    spec = AgentSpec.parse(agent)
    rulesets = variants.split(split, count)
    made = spec.make()
    refused = []
    for r in rulesets:  # before any work: an agent must play every ruleset of the split
        try:
            made.check(r, 2)
        except AgentError as e:
            refused.append((r.name, str(e)))
    if refused:
        names = ", ".join(n for n, _ in refused[:4]) + (", ..." if len(refused) > 4 else "")
        raise AgentError(f"agent {agent!r} cannot play {len(refused)} of the {len(rulesets)} rulesets of split "
                         f"{split!r} ({names}), and a suite agent must play them all (e.g. one that reads the "
                         f"rules); on {refused[0][0]}: {refused[0][1]}")
    t0 = time.perf_counter()
    scores = []
    for k, r in enumerate(rulesets, start=1):
        if not is_cached(r):
            log(f"{k}/{len(rulesets)} {r.name}: solving the game first (once: cached)")
            solve_game(r)
        s = vs_optimal(spec.text, r, regret_games=games, seed=seed, workers=workers, exact=exact)
        ci = None if math.isnan(s.ci_low) else (s.ci_low, s.ci_high)
        scores.append(RulesetScore(r.name, r.hash, s.win_rate, ci, s.how, 0.5 - s.win_rate, s.note, s.by_kind))
        log(f"{k}/{len(rulesets)} {r.name}: {s.win_rate:.2%} against optimal ({s.how}), regret "
            f"{0.5 - s.win_rate:.4f} per game")
    mean, ci = _mean_ci(scores)
    return SuiteResult(spec.text, spec.sha256, split, variants.SPACE_VERSION, games, seed, scores, mean, ci,
                       time.perf_counter() - t0, command)


def write_result(res: SuiteResult, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, res.to_json())
    return path


def mistakes_by_kind(res: SuiteResult) -> dict[str, float]:
    """The mean over the split's rulesets of each kind of mistake's regret per game (what the
    agent gets wrong), from the rulesets measured by regret; empty where none was."""
    kinds = [r.by_kind for r in res.rulesets if r.by_kind]
    return {k: sum(d.get(k, 0.0) for d in kinds) / len(kinds) for k in KINDS} if kinds else {}


def read_result(path: str | Path) -> SuiteResult:
    """A result file written by :func:`write_result`; ValueError naming the file and the fault."""
    path = Path(path)
    try:
        d = json.loads(path.read_text())
        if d.get("format") != RESULT_FORMAT:
            raise ValueError(f"format {d.get('format')!r}, this tenk reads {RESULT_FORMAT}")
        d["rulesets"] = [RulesetScore(**{**r, "ci": tuple(r["ci"]) if r["ci"] else None}) for r in d["rulesets"]]
        if d["mean_regret_ci"] is not None:
            d["mean_regret_ci"] = tuple(d["mean_regret_ci"])
        return SuiteResult(**d)
    except OSError as e:
        raise ValueError(f"suite result {str(path)!r} cannot be read ({e.strerror or e})") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"suite result {str(path)!r} is not a result tenk suite evaluate wrote ({type(e).__name__}: "
                         f"{e}); evaluate the agent again") from None


def kept_nets(run_dir: str | Path) -> tuple[str, list[tuple[int, str]]]:
    """What a run kept to measure, in training order: (the unit it counts in, [(count, agent
    spec)]). An afterstate run keeps the net of every evaluation (``evals/turns_N.npz``,
    written with ``eval.keep``), a PPO run its step checkpoints (``checkpoints/step_N.zip``,
    ``checkpoint.keep`` of them)."""
    run_dir = Path(run_dir)
    for folder, pattern, kind, unit in (("evals", r"turns_(\d+)\.npz", "afterstate", "learner turns"),
                                        ("checkpoints", r"step_(\d+)\.zip", "ppo", "learner steps")):
        nets = sorted((int(m.group(1)), f"{kind}:{p}") for p in (run_dir / folder).glob("*")
                      if (m := re.fullmatch(pattern, p.name)))
        if nets:
            return unit, nets
    raise ValueError(f"{str(run_dir)!r} kept no nets to measure: an afterstate run keeps them with eval.keep: true "
                     "(evals/turns_N.npz), a PPO run its step checkpoints (checkpoints/step_N.zip)")


def learning_curve(run_dir: str | Path, split: str = "test", *, games: int = 200, seed: int = 0, workers: int = 2,
                   log: Callable[[str], None] = print) -> tuple[str, list[tuple[int, SuiteResult]]]:
    """Every net a run kept (:func:`kept_nets`) measured on ``split`` by regret over ``games``
    analysed games a ruleset: (the unit the run counts in, [(learner turns or steps, result)] in
    training order). Each result is written to ``RUN/suite/`` and read back, not measured again,
    when it is there for the same games and seed. ValueError, before any work, for a run that
    kept nothing."""
    run_dir = Path(run_dir)
    unit, nets = kept_nets(run_dir)
    out = []
    for k, (n, text) in enumerate(nets, start=1):
        spec = AgentSpec.parse(text)
        where = result_path(run_dir / "suite", spec.text, split, spec.sha256)
        res = read_result(where) if where.is_file() else None
        if res is None or (res.games, res.seed, res.agent_sha256) != (games, seed, spec.sha256):
            log(f"{k}/{len(nets)}: the net at {n:,} {unit} on split {split!r}")
            res = evaluate_suite(spec.text, split, games=games, seed=seed, workers=workers, exact=False,
                                 log=lambda m: None, command=f"tenk suite curve {run_dir} --split {split} "
                                                            f"--games {games} --seed {seed}")
            write_result(res, where)
        out.append((n, res))
    return unit, out


def leaderboard(results: list[SuiteResult], describe: Callable[[str], str] = lambda a: "") -> str:
    """The results as a markdown table, best (least mean regret) first, one split and space
    version only; ``describe(agent)``: what the agent is and how it was trained."""
    if not results:
        raise ValueError("no results to rank: give the JSON files tenk suite evaluate wrote")
    kinds = {(r.split, r.space_version) for r in results}
    if len(kinds) > 1:
        raise ValueError(f"results of different splits or space versions cannot share a table: "
                         f"{', '.join(f'{s} (space v{v})' for s, v in sorted(kinds))}")
    split, version = kinds.pop()
    names = [[s.hash for s in r.rulesets] for r in results]
    if any(n != names[0] for n in names):
        raise ValueError(f"the results cover different rulesets of split {split!r}: evaluate them on the same split")
    rows = ["| rank | agent | what | mean regret per game [95%] | vs optimal | measured |",
            "| ---: | --- | --- | --- | ---: | --- |"]
    for k, r in enumerate(sorted(results, key=lambda r: r.mean_regret), start=1):
        ci = f" [{r.mean_regret_ci[0]:.4f}, {r.mean_regret_ci[1]:.4f}]" if r.mean_regret_ci else " (no interval)"
        hows = sorted({s.how for s in r.rulesets})
        rows.append(f"| {k} | `{r.agent}` | {describe(r.agent)} | {r.mean_regret:.4f}{ci} | "
                    f"{0.5 - r.mean_regret:.2%} | {', '.join(hows)} |")
    head = (f"Split `{split}` ({len(names[0])} rulesets, variant space v{version}): each agent's regret against "
            "perfect play, the win probability per game it gives away, averaged over the rulesets.\n\n")
    return head + "\n".join(rows) + "\n"
