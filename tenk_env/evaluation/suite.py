"""``tenk suite evaluate``: an agent's exact regret on every ruleset of a suite split.

On each ruleset of the split (:func:`tenk_env.variants.split`) the agent's seat-balanced
win rate against ``optimal`` is measured as the benchmark table measures it
(:func:`tenk_env.evaluation.benchmark.vs_optimal`): exact where the exact evaluator follows
the agent, else implied by its regret over analysed games, with a 95% interval. Its
*regret* there is 0.5 minus that win rate: the win probability per game it gives away
against perfect play. The split's mean regret gets a 95% interval from the per-ruleset
intervals (independent games; exact figures add no width): an interval over these
rulesets, not over the space they were drawn from.

A result is one JSON file named by everything that produced it (:func:`result_path`): the
agent (its spec and, for file agents, its file's content hash), the split and how many of its
rulesets, the space version, and how it was measured (exactly, or by regret over how many
games from which seed), so no two runs share a file (:data:`RESULT_FORMAT` documents it). The
files hold regrets as probabilities; what a person reads prints them in percentage points
(:mod:`tenk_env.units`). A file is checked when read (:func:`check_result`): a value that is
not a finite number in its range is named, never ranked.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tenk_env import variants
from tenk_env.evaluation.analysis import KINDS, Z95, answers_text, check_games
from tenk_env.evaluation.benchmark import vs_optimal
from tenk_env.io import atomic_write_text
from tenk_env.policies.base import AgentError, AgentSpec
from tenk_env.solve.game import is_cached, solve_game
from tenk_env.units import REGRET_HEADER, pp, pp_interval, regret_text

__all__ = [
    "RulesetScore",
    "SuiteResult",
    "evaluate_suite",
    "measured",
    "result_path",
    "write_result",
    "read_result",
    "check_result",
    "read_results",
    "unique_results",
    "leaderboard",
    "leaderboard_rows",
    "leaderboard_head",
    "agent_totals",
    "learning_curve",
    "kept_nets",
    "mistakes_by_kind",
    "check_count",
    "LEADERBOARD_COLUMNS",
    "RESULT_FORMAT",
    "MAX_TRAIN_COUNT",
    "MAX_GAMES",
]

#: the result file's layout: {format, space_version, split, agent, agent_sha256, games, seed,
#: rulesets: [RulesetScore...], mean_regret, mean_regret_ci, seconds, command}
RESULT_FORMAT = 1
#: the most training rulesets a command takes: the train split has no end (one ruleset a
#: sampler seed), and more than this is past any run here (the generalist configs draw from
#: 200) and weeks of solving, while a typo such as 10**12 would draw rulesets until memory runs out
MAX_TRAIN_COUNT = variants.TRAIN_REACH
#: analysed games a ruleset at most (as tenk train's evaluations); the analysis also bounds
#: them by the memory it takes under each ruleset (tenk_env.evaluation.analysis.max_games)
MAX_GAMES = 1_000_000
#: float rounding allowed where a value read back is checked against its range
_TOL = 1e-9


@dataclass
class RulesetScore:
    name: str
    hash: str
    win_rate: float  #: seat-balanced, against optimal
    ci: tuple[float, float] | None  #: 95% (equal to the win rate where exact); None: too few games for one
    how: str  #: "exact" or "regret over N games"
    regret: float  #: 0.5 - win_rate: win probability given away per game
    note: str = ""  #: why there is no interval, where there is none
    #: measured by regret: that regret by kind of mistake (tenk_env.evaluation.analysis.KINDS); exact: empty
    by_kind: dict = field(default_factory=dict)
    #: an agent that counts its costs (an ``llm:`` agent): its decisions, calls, cached answers,
    #: tokens, seconds waiting and bad answers on this ruleset (tenk_env.policies.llm.LLMStats); else empty
    agent_stats: dict = field(default_factory=dict)


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
    var = sum(((s.ci[1] - s.ci[0]) / (2 * Z95)) ** 2 for s in scores)
    half = Z95 * math.sqrt(var) / k
    return mean, (mean - half, mean + half)


def _stem(agent: str, sha: str | None) -> str:
    """The agent as the start of a file name: readable, and its own (a key of the spec and the
    file's content follows wherever the cleaned name could be another agent's)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", agent).strip("_.") or "agent"
    if len(stem) > 60:  # a long spec's kind and its end (a path's file name) tell it apart best
        stem = f"{stem[:20]}_{stem[-39:]}"
    if stem != agent or sha:
        # 'cmd:python a.py' and 'cmd:python/a.py' clean to one name, and a file agent whose
        # content changed is another agent under the same spec
        stem += "-" + hashlib.sha256(f"{agent}\n{sha or ''}".encode()).hexdigest()[:10]
    return stem


def _result_name(
    agent: str, sha: str | None, split: str, n_rulesets: int, space_version: int, how: str, seed: int = 0
) -> str:
    # train's first N, fresh's N drawn with a seed; the other splits are fixed
    count = f"-n{n_rulesets}" if split == "train" else f"-n{n_rulesets}-draw{seed}" if split == "fresh" else ""
    return f"{_stem(agent, sha)}-{split}{count}-space{space_version}-{how}.json"


def _regret_how(games: int, seed: int, kind: str = "regret") -> str:
    return f"{kind}-g{games}-s{seed}"


def measured(res: SuiteResult) -> str:
    """How ``res`` was measured, as its file name says: ``exact`` (every ruleset exactly: the
    games and seed play no part), ``regret-gGAMES-sSEED`` (every ruleset by regret over GAMES
    analysed games from SEED) or ``mixed-gGAMES-sSEED`` (some of each)."""
    exact = sum(s.how == "exact" for s in res.rulesets)
    if exact == len(res.rulesets):
        return "exact"
    return _regret_how(res.games, res.seed, "regret" if exact == 0 else "mixed")


def result_path(out_dir: str | Path, res: SuiteResult) -> Path:
    """Where ``res`` goes in ``out_dir``: one file per agent (spec and content), split (and
    how many training rulesets), space version and measurement (:func:`measured`), e.g.
    ``dicenow-test-space1-exact.json``, ``dicenow-train-n1-space1-regret-g400-s0.json``. Only
    a rerun of the same settings writes to the same file."""
    return Path(out_dir) / _result_name(
        res.agent, res.agent_sha256, res.split, len(res.rulesets), res.space_version, measured(res), res.seed
    )


def _legacy_path(out_dir: str | Path, agent: str, split: str, sha: str | None) -> Path:
    # the name results had before it held the measurement (one file per agent, split and space)
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", agent).strip("_")[:80]
    return Path(out_dir) / f"{stem}{'-' + sha if sha else ''}-{split}-space{variants.SPACE_VERSION}.json"


def check_count(split: str, count, what: str = "count") -> None:
    """ValueError, naming ``what`` and the fix, unless ``count`` is None or a number of
    rulesets from 1 to :data:`MAX_TRAIN_COUNT` (train and fresh only: the other splits are fixed)."""
    if count is None:
        return
    if split not in ("train", "fresh"):
        raise ValueError(
            f"{what} picks how many training rulesets to take (or fresh ones); the {split} split is fixed: "
            f"leave {what} out, or give --split train"
        )
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_TRAIN_COUNT:
        word = "training" if split == "train" else split
        raise ValueError(f"{what} {count!r}: give a whole number of {word} rulesets from 1 to {MAX_TRAIN_COUNT:,}")


def evaluate_suite(
    agent: str,
    split: str = "test",
    *,
    games: int = 1000,
    seed: int = 0,
    workers: int = 2,
    count: int | None = None,
    exact: bool = True,
    log: Callable[[str], None] = print,
    command: str = "",
) -> SuiteResult:
    """Measure ``agent`` (a spec) on every ruleset of ``split`` (``count``: how many training
    or fresh rulesets; fresh ones are drawn with ``seed``, :func:`tenk_env.variants.fresh`); ``games``: analysed games per ruleset where the evaluation is by regret (every
    ruleset, with ``exact`` false: an exact evaluation takes minutes a ruleset at a 10,000
    target, the analysis of 1,000 games seconds). The rulesets' solutions are solved first
    where they are not cached (minutes each). ValueError, before any work, for a count or a
    number of games out of range (:func:`check_count`, the analysis' memory bound)."""
    check_count(split, count)
    spec = AgentSpec.parse(agent)
    rulesets = variants.split(split, count, seed)
    for r in rulesets:  # the analysis bounds its games by the memory they take under each ruleset
        check_games(games, r)
    made = spec.make()
    refused = []
    for r in rulesets:  # before any work: an agent must play every ruleset of the split
        try:
            made.check(r, 2)
        except AgentError as e:
            refused.append((r.name, str(e)))
    if refused:
        names = ", ".join(n for n, _ in refused[:4]) + (", ..." if len(refused) > 4 else "")
        raise AgentError(
            f"agent {agent!r} cannot play {len(refused)} of the {len(rulesets)} rulesets of split "
            f"{split!r} ({names}), and a suite agent must play them all (e.g. one that reads the "
            f"rules); on {refused[0][0]}: {refused[0][1]}"
        )
    t0 = time.perf_counter()
    scores = []
    for k, r in enumerate(rulesets, start=1):
        if not is_cached(r):
            log(f"{k}/{len(rulesets)} {r.name}: solving the game first (once: cached)")
            solve_game(r)
        s = vs_optimal(spec.text, r, regret_games=games, seed=seed, workers=workers, exact=exact)
        ci = None if math.isnan(s.ci_low) else (s.ci_low, s.ci_high)
        scores.append(
            RulesetScore(r.name, r.hash, s.win_rate, ci, s.how, 0.5 - s.win_rate, s.note, s.by_kind, s.agent_stats)
        )
        answers = answers_text(s.agent_stats)
        log(
            f"{k}/{len(rulesets)} {r.name}: {s.win_rate:.2%} against optimal ({s.how}), regret "
            f"{regret_text(0.5 - s.win_rate)}{'; ' + answers if answers else ''}"
        )
    mean, ci = _mean_ci(scores)
    return SuiteResult(
        spec.text,
        spec.sha256,
        split,
        variants.SPACE_VERSION,
        games,
        seed,
        scores,
        mean,
        ci,
        time.perf_counter() - t0,
        command,
    )


def agent_totals(res: SuiteResult) -> dict[str, float]:
    """What an agent that counts its costs counted, summed over the split's rulesets (empty
    for other agents)."""
    out: dict[str, float] = {}
    for s in res.rulesets:
        for k, v in s.agent_stats.items():
            out[k] = out.get(k, 0) + v
    return out


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


class _BadValue(ValueError):
    """A result file that parses but holds a value no evaluation writes."""


def _number(x, what: str, lo: float = 0.0, hi: float = 1.0) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise _BadValue(f"{what} = {x!r}, not a finite number")
    if not lo - _TOL <= x <= hi + _TOL:
        raise _BadValue(f"{what} = {x!r}, outside [{lo:g}, {hi:g}]")
    return x


def _interval(ci, what: str, holds: float, lo: float, hi: float) -> None:
    if ci is None:
        return
    if not isinstance(ci, tuple) or len(ci) != 2:
        raise _BadValue(f"{what} = {ci!r}, not a pair of numbers")
    a, b = (_number(c, what, lo, hi) for c in ci)
    if not a - _TOL <= holds <= b + _TOL:
        raise _BadValue(f"{what} = [{a!r}, {b!r}] does not hold its figure {holds!r}")


def check_result(res: SuiteResult) -> None:
    """ValueError naming the first value of ``res`` that no evaluation writes: a win rate or
    a regret that is not a finite number in [0, 1], an interval that does not hold its figure,
    a regret that is not 0.5 minus its win rate, a mean that is not the mean of the rulesets'.
    A misread file would otherwise be ranked (NaN sorts anywhere) or crash the ranking."""
    for key, kind in (("agent", str), ("split", str), ("command", str)):
        if not isinstance(getattr(res, key), kind) or (key == "agent" and not res.agent.strip()):
            raise _BadValue(f"{key} = {getattr(res, key)!r}, not a {'name' if key != 'command' else 'text'}")
    if res.split not in variants.SPLITS:
        raise _BadValue(f"split = {res.split!r}, not one of the suite's splits ({', '.join(variants.SPLITS)})")
    if res.agent_sha256 is not None and not isinstance(res.agent_sha256, str):
        raise _BadValue(f"agent_sha256 = {res.agent_sha256!r}, not a hash")
    for key, least in (("space_version", 1), ("games", 0), ("seed", 0)):
        v = getattr(res, key)
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            raise _BadValue(f"{key} = {v!r}, not a whole number >= {least}")
    _number(res.seconds, "seconds", 0.0, math.inf)
    if not isinstance(res.rulesets, list) or not res.rulesets:
        raise _BadValue("rulesets = [], no ruleset measured")
    for k, s in enumerate(res.rulesets):
        at = f"rulesets[{k}]"
        for key in ("name", "hash", "how", "note"):
            if not isinstance(getattr(s, key), str):
                raise _BadValue(f"{at}.{key} = {getattr(s, key)!r}, not a text")
        _number(s.win_rate, f"{at}.win_rate")
        _number(s.regret, f"{at}.regret")
        if abs(s.regret - (0.5 - s.win_rate)) > _TOL:
            raise _BadValue(f"{at}.regret = {s.regret!r} is not 0.5 minus its win rate {s.win_rate!r}")
        _interval(s.ci, f"{at}.ci", s.win_rate, 0.0, 1.0)
        if not isinstance(s.by_kind, dict):
            raise _BadValue(f"{at}.by_kind = {s.by_kind!r}, not a mapping of kinds to regrets")
        for kind, v in s.by_kind.items():
            _number(v, f"{at}.by_kind[{kind!r}]", 0.0, math.inf)
        if not isinstance(s.agent_stats, dict):
            raise _BadValue(f"{at}.agent_stats = {s.agent_stats!r}, not a mapping of counts")
        for key, v in s.agent_stats.items():
            _number(v, f"{at}.agent_stats[{key!r}]", 0.0, math.inf)
        if s.agent_stats and not {"decisions", "calls", "bad_answers", "fallbacks"} <= s.agent_stats.keys():
            raise _BadValue(f"{at}.agent_stats = {s.agent_stats!r}, without the counts of decisions and answers")
    _number(res.mean_regret, "mean_regret")
    mean = sum(s.regret for s in res.rulesets) / len(res.rulesets)
    if abs(res.mean_regret - mean) > _TOL:
        raise _BadValue(f"mean_regret = {res.mean_regret!r} is not the mean of its rulesets' regrets ({mean!r})")
    # the mean's interval may reach below 0 (a normal interval about a small mean)
    _interval(res.mean_regret_ci, "mean_regret_ci", res.mean_regret, -1.0, 1.0)


def read_result(path: str | Path) -> SuiteResult:
    """A result file written by :func:`write_result`, its values checked (:func:`check_result`);
    ValueError naming the file and the fault."""
    path = Path(path)
    try:
        d = json.loads(path.read_text())
        if d.get("format") != RESULT_FORMAT:
            raise ValueError(f"format {d.get('format')!r}, this tenk reads {RESULT_FORMAT}")
        d["rulesets"] = [RulesetScore(**{**r, "ci": tuple(r["ci"]) if r["ci"] else None}) for r in d["rulesets"]]
        if d["mean_regret_ci"] is not None:
            d["mean_regret_ci"] = tuple(d["mean_regret_ci"])
        res = SuiteResult(**d)
        check_result(res)
        return res
    except OSError as e:
        raise ValueError(f"suite result {str(path)!r} cannot be read ({e.strerror or e})") from None
    except _BadValue as e:
        raise ValueError(f"suite result {str(path)!r} holds {e}; evaluate the agent again") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(
            f"suite result {str(path)!r} is not a result tenk suite evaluate wrote ({type(e).__name__}: "
            f"{e}); evaluate the agent again"
        ) from None


def read_results(paths: list[str | Path], log: Callable[[str], None] = print) -> list[tuple[Path, SuiteResult]]:
    """The results in ``paths`` (a folder: its ``*.json`` files), oldest file first, each that
    cannot be read or holds a value out of range left out with one line through ``log``."""
    files = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                log(f"skipped {str(p)!r}: a folder without result files (*.json)")
            files += found
        else:
            files.append(p)
    out = []
    for p in files:
        try:
            out.append((p, read_result(p), p.stat().st_mtime_ns))
        except ValueError as e:
            log(f"skipped: {e}")
    return [(p, r) for p, r, _ in sorted(out, key=lambda x: (x[2], str(x[0])))]


def _row_key(r: SuiteResult) -> tuple:
    return r.agent, r.agent_sha256, r.split, r.space_version, tuple(s.hash for s in r.rulesets)


def _merit(r: SuiteResult) -> tuple[int, int]:
    # rulesets measured exactly, then analysed games (where any ruleset was measured by them)
    exact = sum(s.how == "exact" for s in r.rulesets)
    return exact, (r.games if exact < len(r.rulesets) else 0)


def unique_results(
    items: list[tuple[str | Path, SuiteResult]], log: Callable[[str], None] = print
) -> list[tuple[str | Path, SuiteResult]]:
    """One result per leaderboard row (agent, its file's content, split, space version and
    rulesets), from ``items`` (label, result) given oldest first. Of two for the same row the
    one measured exactly on more rulesets is kept, then the one over more analysed games, then
    the newer; each one left out is named through ``log``."""
    best: dict[tuple, tuple[str | Path, SuiteResult]] = {}
    for label, r in items:
        key = _row_key(r)
        if key not in best:
            best[key] = (label, r)
            continue
        old_label, old = best[key]
        new, was = _merit(r), _merit(old)
        (kept_label, kept), dropped = ((label, r), old_label) if new >= was else ((old_label, old), label)
        why = (
            "measured exactly on more rulesets"
            if new[0] != was[0]
            else "measured over more analysed games"
            if new[1] != was[1]
            else "the newer"
        )
        log(f"left out {str(dropped)!r}: the same agent and rulesets as {str(kept_label)!r}, kept as {why}")
        best[key] = (kept_label, kept)
    return list(best.values())


def kept_nets(run_dir: str | Path) -> tuple[str, list[tuple[int, str]]]:
    """What a run kept to measure, in training order: (the unit it counts in, [(count, agent
    spec)]). An afterstate run keeps the net of every evaluation (``evals/turns_N.npz``,
    written with ``eval.keep``), a PPO run its step checkpoints (``checkpoints/step_N.zip``,
    ``checkpoint.keep`` of them)."""
    run_dir = Path(run_dir)
    for folder, pattern, kind, unit in (
        ("evals", r"turns_(\d+)\.npz", "afterstate", "learner turns"),
        ("checkpoints", r"step_(\d+)\.zip", "ppo", "learner steps"),
    ):
        nets = sorted(
            (int(m.group(1)), f"{kind}:{p}")
            for p in (run_dir / folder).glob("*")
            if (m := re.fullmatch(pattern, p.name))
        )
        if nets:
            return unit, nets
    raise ValueError(
        f"{str(run_dir)!r} kept no nets to measure: an afterstate run keeps them with eval.keep: true "
        "(evals/turns_N.npz), a PPO run its step checkpoints (checkpoints/step_N.zip)"
    )


def learning_curve(
    run_dir: str | Path,
    split: str = "test",
    *,
    games: int = 200,
    seed: int = 0,
    workers: int = 2,
    log: Callable[[str], None] = print,
) -> tuple[str, list[tuple[int, SuiteResult]]]:
    """Every net a run kept (:func:`kept_nets`) measured on ``split`` by regret over ``games``
    analysed games a ruleset: (the unit the run counts in, [(learner turns or steps, result)] in
    training order). Each result is written to ``RUN/suite/`` and read back, not measured again,
    when it is there for the same games, seed and rulesets. ValueError, before any work, for a
    run that kept nothing or ``games`` out of range."""
    run_dir = Path(run_dir)
    unit, nets = kept_nets(run_dir)
    rulesets = variants.split(split)
    for r in rulesets:  # before any work
        check_games(games, r)
    want = [r.hash for r in rulesets]
    out = []
    for k, (n, text) in enumerate(nets, start=1):
        spec = AgentSpec.parse(text)
        where = (
            run_dir
            / "suite"
            / _result_name(
                spec.text, spec.sha256, split, len(rulesets), variants.SPACE_VERSION, _regret_how(games, seed)
            )
        )
        res = None
        # a result written before the file names held the measurement is read back too
        for p in (where, _legacy_path(run_dir / "suite", spec.text, split, spec.sha256)):
            try:
                got = read_result(p) if p.is_file() else None
            except ValueError as e:
                log(f"measuring again: {e}")
                continue
            if got is not None and (
                (got.agent, got.agent_sha256, got.games, got.seed, [s.hash for s in got.rulesets])
                == (spec.text, spec.sha256, games, seed, want)
                and all(s.how != "exact" for s in got.rulesets)
            ):
                res = got
                break
        if res is None:
            log(f"{k}/{len(nets)}: the net at {n:,} {unit} on split {split!r}")
            res = evaluate_suite(
                spec.text,
                split,
                games=games,
                seed=seed,
                workers=workers,
                exact=False,
                log=lambda m: None,
                command=f"tenk suite curve {run_dir} --split {split} --games {games} --seed {seed}",
            )
            write_result(res, where)
        out.append((n, res))
    return unit, out


#: the leaderboard's columns, in the markdown table and the terminal's
LEADERBOARD_COLUMNS = ("rank", "agent", "what", f"mean {REGRET_HEADER} [95%]", "vs optimal", "measured")


def leaderboard_rows(
    results: list[SuiteResult],
    describe: Callable[[str], str] = lambda a: "",
    log: Callable[[str], None] = lambda m: None,
) -> tuple[str, int, int, list[tuple[str, ...]]]:
    """(split, rulesets, space version, rows): the results ranked, best (least mean regret)
    first, one split, space version and set of rulesets only; each row's cells under
    :data:`LEADERBOARD_COLUMNS`, the regret in percentage points. A result whose values are
    out of range is left out, and of several for one row one is kept (:func:`unique_results`),
    each named through ``log``. ``describe(agent)``: what the agent is and how it was trained."""
    good = []
    for k, r in enumerate(results, start=1):
        try:
            check_result(r)
            good.append((f"result {k} ({r.agent})", r))
        except ValueError as e:
            log(f"skipped result {k}: it holds {e}")
    results = [r for _, r in unique_results(good, log)]
    if not results:
        raise ValueError("no results to rank: give the JSON files tenk suite evaluate wrote (or their folder)")
    kinds = {(r.split, r.space_version) for r in results}
    if len(kinds) > 1:
        raise ValueError(
            f"results of different splits or space versions cannot share a table: "
            f"{', '.join(f'{s} (space v{v})' for s, v in sorted(kinds))}; give one split's files"
        )
    split, version = kinds.pop()
    if split == "fresh":  # the same rulesets below, so one seed drew them all
        split = f"fresh, drawn at evaluation time with seed {results[0].seed}"
    names = [[s.hash for s in r.rulesets] for r in results]
    if any(n != names[0] for n in names):
        raise ValueError(
            f"the results cover different rulesets of split {split!r}: evaluate them on the same split (and --count)"
        )
    twice = {a for a in (r.agent for r in results) if sum(r.agent == a for r in results) > 1}
    rows = []
    for k, r in enumerate(sorted(results, key=lambda r: (r.mean_regret, r.agent)), start=1):
        # one spec, two files behind it (a checkpoint retrained in place): the content tells them apart
        agent = r.agent + (f" (file {r.agent_sha256[:8]})" if r.agent in twice and r.agent_sha256 else "")
        rows.append(
            (
                str(k),
                agent,
                "; ".join(x for x in (describe(r.agent), answers_text(agent_totals(r))) if x),
                f"{pp(r.mean_regret)} {pp_interval(r.mean_regret_ci)}",
                f"{0.5 - r.mean_regret:.2%}",
                ", ".join(sorted({s.how for s in r.rulesets})),
            )
        )
    return split, len(names[0]), version, rows


def leaderboard_head(split: str, n: int, version: int, code: str = "`") -> str:
    """``split`` may carry a note after its name (``fresh, drawn with seed 3``)."""
    name, _, note = split.partition(", ")
    return (
        f"Split {code}{name}{code} ({n} rulesets{', ' + note if note else ''}, variant space v{version}): "
        "each agent's regret against "
        "perfect play, the win probability per game it gives away in percentage points (pp/game), "
        "averaged over the rulesets."
    )


def _md_cell(text: str) -> str:
    # a | would end the cell; a line break, the row
    return " ".join(text.split()).replace("|", "\\|")


def _md_code(text: str) -> str:
    # a fence longer than any run of backticks in the name; a | is escaped inside code too (GFM)
    text = _md_cell(text)
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def leaderboard(
    results: list[SuiteResult],
    describe: Callable[[str], str] = lambda a: "",
    log: Callable[[str], None] = lambda m: None,
) -> str:
    """The results as a markdown table (:func:`leaderboard_rows`), names and descriptions
    escaped so that none can break a row."""
    split, n, version, rows = leaderboard_rows(results, describe, log)
    lines = ["| " + " | ".join(LEADERBOARD_COLUMNS) + " |", "| ---: | --- | --- | --- | ---: | --- |"]
    for rank, agent, what, regret, vs, how in rows:
        lines.append(f"| {rank} | {_md_code(agent)} | {_md_cell(what)} | {regret} | {vs} | {_md_cell(how)} |")
    return leaderboard_head(split, n, version) + "\n\n" + "\n".join(lines) + "\n"
