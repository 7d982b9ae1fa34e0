"""Round-robin tournaments: every pairing (or every N-player table) of a set of agents,
seat-balanced with common random numbers, rated by Bradley-Terry with intervals.

Format. Each table (a pairing, or a set of N agents for an N-player free-for-all) plays
``games`` games as deals (:mod:`tenk_env.evaluation.match`): deal ``d`` is one dice key, played in every
rotation of the seats. All tables use the same deals (deal ``d`` of every pairing has the
same dice), so comparisons across pairings share their luck as well. Tables whose agents
all have batched forms (heuristic bots, maxscore, random, PPO) are played on the batched engine,
the rest on the scalar one (``backend``); deterministic agents play the same games on
either.

Ratings. A Bradley-Terry model fitted by maximum likelihood to every game at once, as the
logistic regression it is (statsmodels' GLM, binomial family): P(i places above j) =
1 / (1 + 10 ** ((R_j - R_i) / 400)), with R on the Elo scale and the field's mean at 0. A
free-for-all game gives one comparison per pair of its players (rank breaking). The games
of a deal share their dice (in every table: all tables play the same deals) and a
free-for-all's comparisons share a game, so the intervals are 95% Wald intervals from a
cluster-robust covariance with one cluster per deal, which does not pretend those games
are independent. (Clustering by deal within each table only would count the seat swap's
cancelling luck but not the luck the tables share, and gave intervals a third narrower on
a 4-agent test; clustering by deal is the honest, wider choice.) An agent that never won (or
never lost) a comparison has no finite rating; it is reported as such and left out of the
fit, which then rates the others among themselves.

Output under ``out/NAME/`` (every file written atomically):

* ``manifest.json``: what defines the tournament (ruleset and hash, agents, games, seed,
  players, backend). A rerun with the same name resumes only if this matches.
* ``chunks/``: per-chunk game results, saved as each finishes; a rerun plays only the
  missing chunks (so an interrupted tournament resumes where it stopped, and the result is
  identical to an uninterrupted run's). A chunk is a cache keyed by content: its table's
  agents, the SHA-256 of the file of each agent that plays from one (``ppo:PATH``), the
  ruleset's hash, the seed, its deals and the engine that played it. A saved chunk that
  does not match (a checkpoint replaced at the same path) or is damaged is named in a note
  and replayed; the others are reused.
* ``results.csv`` (one row per table, or per table and agent for N players, with the engine
  that played it and the checkpoints' hashes), ``results.json`` (everything, with the
  ruleset, its hash, the agent specs and their files' hashes, the seeds and the package
  versions), ``ratings.csv``, ``heatmap.png`` (how often the row agent placed above the
  column agent), ``ratings.png``.
* ``games/``: records of the first ``save_games`` games of each table (``tenk replay``).
* ``.lock``: held while a run plays (one writer per tournament directory).

Interrupting (Ctrl-C, ``kill -9``, a crash) at any point is safe: every file is written
atomically, worker processes die with their parent, and rerunning the same command plays
only what is missing. A Ctrl-C or SIGTERM ends the worker processes at once rather than
after the chunks they were given (the workers first end their ``cmd:`` agents' programs).
An agent that fails (a ``cmd:`` program that crashes or hangs, an illegal move: a
ValueError) fails only the chunks it plays: the others are still played and saved, and the
run then ends with an error naming the agent and its tables, so that once it is fixed the
same command plays just those.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tenk_env.evaluation.match import (
    BACKENDS,
    CHUNK_DEALS,
    MEMORY_BUDGET,
    Chunk,
    Executor,
    MatchResult,
    ProgressLine,
    chunk_tasks,
    default_workers,
    match_result,
    run_tasks,
    seatings,
    table_result,
    task_engines,
    wilson,
)
from tenk_env.game import MAX_PLAYERS, MIN_PLAYERS
from tenk_env.io import (
    DirLock,
    StateFileError,
    atomic_write_bytes,
    atomic_write_text,
    find_config,
    project_version,
    read_json,
    read_yaml_mapping,
)
from tenk_env.policies.base import AgentError, AgentSpec, Policy, agent_sha256
from tenk_env.policies.external import is_script
from tenk_env.rules import Ruleset, did_you_mean, load_ruleset
from tenk_env.schema import ConfigError, build_section, config_field, public_fields

__all__ = [
    "TournamentConfig",
    "ConfigError",
    "load_config",
    "run_tournament",
    "TournamentResult",
    "Rating",
    "bradley_terry",
    "WinShare",
    "win_shares",
    "ELO",
]

#: Elo points per unit of log-odds: a 400-point gap means 10-to-1 odds.
ELO = 400 / math.log(10)
#: 2: deals are dice keys (tenk_env.evaluation.play.KeyedDice, the batched engine's dice); 1 used SeatDice
FORMAT = 2
#: peak memory of the ratings fit per comparison (a pair of players in one game), the per-game
#: results included: statsmodels' GLM with cluster-robust covariance holds several copies of
#: its design matrix. Measured 1.1 to 1.8 kB for 2 to 10 agents; with MEMORY_BUDGET it bounds
#: the games a tournament may hold.
COMPARISON_BYTES = 2_000


# --------------------------------------------------------------------------- configuration
@dataclass
class TournamentConfig:
    """A tournament (``configs/tournament.yaml`` holds the same keys)."""

    agents: list[str] = config_field("a list of agent specs, at least two (random, hold:300, ppo:runs/x/best.zip, ...)")
    rules: Any = config_field("ruleset: a preset name, a YAML path, or a mapping of ruleset fields", "classic")
    games: int = config_field("games per table, rounded up to whole deals (a multiple of players)", 2000)
    seed: int = config_field("seed of the deals (the only randomness: agents draw from generators derived from it)", 0)
    players: int = config_field(
        "players per game: 2 for pairings, more for free-for-all tables of every combination", 2
    )
    name: str | None = config_field(
        "directory name under out (null: derived from the rules and a hash of the setup)", None
    )
    workers: int = config_field(
        "worker processes (results do not depend on it; default: the usable cores)", factory=default_workers
    )
    save_games: int = config_field("records of the first K games of each table are saved under games/", 0)
    out: str = config_field("where tournament directories go", "runs/tournaments")
    backend: str = config_field(
        "game engine: auto (the batched engine for every table whose agents all have batched "
        "forms, the scalar engine for the rest and for recorded games), batched or scalar. "
        "Deterministic agents play the same games on both engines (same deal keys, same dice)",
        "auto",
    )

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in public_fields(cls)]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "tournament config") -> TournamentConfig:
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: expected a mapping of {', '.join(cls.keys())}, got {type(data).__name__}")
        try:
            # validate() checks the values' types with the ranges, naming the fix for both
            cfg = build_section(cls, data, check_types=False, message=_unknown_key)
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None
        cfg.source = source
        return cfg

    def validate(self) -> Ruleset:
        """Check every field; return the ruleset. Raises :class:`ConfigError` naming the fix."""
        return self._validate()[0]

    def _validate(self) -> tuple[Ruleset, list[AgentSpec], list[Policy]]:
        """:meth:`validate`, with each agent's parsed spec and the agent checked for the
        tournament's ruleset and players."""
        src = getattr(self, "source", "tournament")

        def whole(name: str, lo: int, hi: int | None = None) -> int:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo or (hi is not None and v > hi):
                rng = f"{lo} to {hi}" if hi is not None else f"at least {lo}"
                raise ConfigError(f"{src}: {name} = {v!r}: give a whole number {rng}")
            return int(v)

        if isinstance(self.agents, str) or not isinstance(self.agents, Sequence):
            raise ConfigError(f"{src}: agents = {self.agents!r}: give a list of agent specs, e.g. [dicenow, hold:300]")
        self.agents = list(self.agents)
        for a in self.agents:
            if not isinstance(a, str):
                raise ConfigError(
                    f"{src}: agent {a!r} is not a spec string (e.g. 'hold:300'); "
                    "in YAML, quote specs that hold spaces or colons followed by a space"
                )
        dup = sorted({a for a in self.agents if self.agents.count(a) > 1})
        if dup:
            raise ConfigError(f"{src}: agent {dup[0]!r} is listed twice; give each agent once")
        self.players = n = whole("players", MIN_PLAYERS, MAX_PLAYERS)
        if len(self.agents) < n:
            raise ConfigError(f"{src}: {len(self.agents)} agent(s) for {n}-player tables: give at least {n} agents")
        # Two deals at least: the ratings' intervals are clustered by deal, and one cluster has none.
        if isinstance(self.games, bool) or not isinstance(self.games, (int, np.integer)) or self.games < 2 * n:
            raise ConfigError(
                f"{src}: games = {self.games!r}: give a whole number of at least {2 * n} (games per "
                f"table: two deals at least, each played in every seat order)"
            )
        self.games = int(self.games)
        # Bound the memory before any work: every game is kept, and rated at the end.
        tables, pairs = math.comb(len(self.agents), n), math.comb(n, 2)
        deals, most = -(-self.games // n), MEMORY_BUDGET // COMPARISON_BYTES // (tables * n * pairs)
        if deals > most:
            raise ConfigError(
                f"{src}: games = {self.games!r}: {tables} table{'s' if tables > 1 else ''} of {self.games:,} games "
                f"would need about {tables * deals * n * pairs * COMPARISON_BYTES / 1e9:,.0f} GB of memory (the "
                f"per-game results and the ratings fit take about {COMPARISON_BYTES:,} bytes per pair of players "
                f"in a game); give at most {most * n:,} games per table for {len(self.agents)} agents at "
                f"{n}-player tables (a {MEMORY_BUDGET >> 30} GiB budget)"
            )
        self.seed = whole("seed", 0)
        self.workers = whole("workers", 1, 64)
        self.save_games = whole("save_games", 0)
        if self.backend not in BACKENDS:
            raise ConfigError(f"{src}: backend = {self.backend!r}: choose one of {', '.join(BACKENDS)}")
        if self.name is not None and (not isinstance(self.name, str) or not re.fullmatch(r"[\w.+-]+", self.name)):
            raise ConfigError(
                f"{src}: name = {self.name!r}: use letters, digits and . _ + - only (it names a directory)"
            )
        if not isinstance(self.out, str):
            raise ConfigError(f"{src}: out = {self.out!r}: give a directory path")
        try:
            rules = load_ruleset(self.rules)
        except (ValueError, FileNotFoundError) as e:
            raise ConfigError(f"{src}: rules: {e}") from None
        # An agent is built once for the checks of both a command (before it starts Ray) and
        # the run: loading a checkpoint costs more than hashing its file again.
        built = getattr(self, "_built", {})
        specs, agents = [], []
        for a in self.agents:
            name = a.partition(":")[0]
            if name == "human":
                raise ConfigError(
                    f"{src}: agent 'human' plays at a terminal; tournaments are for bots (play it with `tenk play`)"
                )
            try:
                spec = AgentSpec.parse(a)
                key = (spec, rules.hash, self.players)
                if key not in built:
                    agent = spec.make()
                    agent.check(rules, self.players)
                    built[key] = agent
            except (ValueError, FileNotFoundError) as e:
                raise ConfigError(f"{src}: agent {a!r}: {e}") from None
            specs.append(spec)
            agents.append(built[key])
        self._built = {(s, rules.hash, self.players): x for s, x in zip(specs, agents)}
        return rules, specs, agents

    def default_name(self, rules: Ruleset) -> str:
        h = hashlib.sha256(json.dumps([self.agents, self.games, self.seed, self.players, rules.hash]).encode())
        return f"{rules.name}-{len(self.agents)}agents-{h.hexdigest()[:8]}"


def _unknown_key(key: str, known: Sequence[str], prefix: str) -> str:
    return f"unknown key {key!r}{did_you_mean(str(key), known)}; keys: {', '.join(known)}"


def load_config(path: str | Path, **overrides: Any) -> TournamentConfig:
    """A config from a YAML file; ``overrides`` (not None) replace its values."""
    path = find_config(path)
    data = read_yaml_mapping(path, "tournament config", ConfigError, "see configs/tournament.yaml")
    data.update({k: v for k, v in overrides.items() if v is not None})
    return TournamentConfig.from_dict(data, source=f"tournament config {str(path)!r}")


# --------------------------------------------------------------------------- ratings
@dataclass
class Rating:
    agent: str
    elo: float  #: Elo scale, field mean 0; +-inf when unbounded (never lost / never won)
    ci_low: float
    ci_high: float
    se: float
    comparisons: int  #: games (pairs of placements) the agent was compared in
    score: float  #: share of those comparisons won (a tie counts half)


def bradley_terry(
    i: np.ndarray,
    j: np.ndarray,
    y: np.ndarray,
    labels: Sequence[str],
    weights: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> list[Rating]:
    """Bradley-Terry ratings from comparisons: ``y[k]`` is the share of comparison ``k`` that
    agent ``i[k]`` won against ``j[k]`` (1, 0 or 0.5), ``weights[k]`` how many such games it
    stands for. With ``groups``, intervals are cluster-robust over those groups.

    The model is fitted by statsmodels' GLM (binomial, logit link) on a sum-to-zero design,
    and each agent's interval is the Wald interval of its centred rating
    (``results.t_test``). Agents with no wins or no losses are reported unbounded and the
    rest refitted without them (the maximum-likelihood estimate does not exist otherwise).
    """
    import statsmodels.api as sm

    n = len(labels)
    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    y = np.asarray(y, np.float64)
    w = np.ones_like(y) if weights is None else np.asarray(weights, np.float64)
    won = np.bincount(i, y * w, n) + np.bincount(j, (1 - y) * w, n)
    played = np.bincount(i, w, n) + np.bincount(j, w, n)
    out: dict[int, Rating] = {}
    active = [a for a in range(n) if played[a] > 0]
    while True:
        # Drop agents whose results carry no finite rating, then recount among the rest.
        keep = np.isin(i, active) & np.isin(j, active)
        wa = np.bincount(i[keep], y[keep] * w[keep], n) + np.bincount(j[keep], (1 - y[keep]) * w[keep], n)
        pa = np.bincount(i[keep], w[keep], n) + np.bincount(j[keep], w[keep], n)
        gone = [a for a in active if wa[a] <= 0 or wa[a] >= pa[a]]
        if not gone:
            break
        for a in gone:
            inf = math.inf if wa[a] >= pa[a] else -math.inf
            out[a] = Rating(labels[a], inf, inf, inf, math.inf, int(played[a]), float(won[a] / played[a]))
        active = [a for a in active if a not in gone]
    m = len(active)
    if m == 1:
        a = active[0]
        out[a] = Rating(labels[a], 0.0, 0.0, 0.0, 0.0, int(played[a]), float(won[a] / played[a]))
    elif m >= 2:
        col = {a: k for k, a in enumerate(active)}
        # Sum-to-zero coding: the last active agent's rating is minus the sum of the others'.
        code = np.zeros((n, m - 1))
        for a, k in col.items():
            if k < m - 1:
                code[a, k] = 1.0
            else:
                code[a, :] = -1.0
        X = code[i[keep]] - code[j[keep]]
        if weights is not None and groups is not None:
            raise ValueError("bradley_terry: give weights (aggregated counts) or groups (one row per game), not both")
        model = sm.GLM(y[keep], X, family=sm.families.Binomial(), var_weights=None if weights is None else w[keep])
        with warnings.catch_warnings():
            # A model with as many parameters as pairings has no residual degrees of freedom,
            # and statsmodels' IRLS then divides by zero for a scale the binomial family never
            # uses; aggregated counts that fit exactly set off its perfect-prediction check.
            warnings.filterwarnings("ignore", category=RuntimeWarning, module="statsmodels")
            warnings.filterwarnings("ignore", message="Perfect separation")
            if groups is not None:
                res = model.fit(cov_type="cluster", cov_kwds={"groups": np.asarray(groups)[keep]})
            else:
                res = model.fit()
        if not _strongly_connected(i[keep], j[keep], y[keep], active):
            warnings.warn(
                "the agents split into groups where one group never lost to another: the rating "
                "gaps between those groups are unbounded and their intervals meaningless; play more "
                "games or add agents in between",
                RuntimeWarning,
                stacklevel=2,
            )
        contrast = code[active]
        tt = res.t_test(contrast)
        effect, ci = np.atleast_1d(tt.effect), np.atleast_2d(tt.conf_int(alpha=0.05))
        se = np.atleast_1d(tt.sd)
        for k, a in enumerate(active):
            out[a] = Rating(
                labels[a],
                float(effect[k] * ELO),
                float(ci[k, 0] * ELO),
                float(ci[k, 1] * ELO),
                float(se[k] * ELO),
                int(played[a]),
                float(won[a] / played[a]),
            )
    return [
        out[a] if a in out else Rating(labels[a], math.nan, math.nan, math.nan, math.nan, 0, math.nan) for a in range(n)
    ]


def _strongly_connected(i: np.ndarray, j: np.ndarray, y: np.ndarray, active: Sequence[int]) -> bool:
    """Whether every agent beat, directly or through others, every other agent at least
    once: the condition for finite maximum-likelihood Bradley-Terry ratings."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    m = len(active)
    lut = np.zeros(max(active) + 1, np.int64)
    lut[list(active)] = np.arange(m)
    ii, jj = lut[i], lut[j]
    src = np.concatenate([ii[y > 0], jj[y < 1]])  # winner -> loser edges
    dst = np.concatenate([jj[y > 0], ii[y < 1]])
    g = coo_matrix((np.ones(len(src)), (src, dst)), shape=(m, m))
    return connected_components(g, directed=True, connection="strong")[0] == 1


def deal_of(c: Chunk, n: int) -> np.ndarray:
    """The deal of each game of an ``n``-player chunk: every table plays the same deals, so a
    deal's games share their dice across tables as well as across seatings."""
    return np.arange(len(c.turns)) // len(seatings(n)) + c.start


def comparisons(table: Sequence[int], c: Chunk) -> tuple[np.ndarray, ...]:
    """(i, j, y, group) for every pair of players in every game of a table: ``y`` = 1 when
    ``i`` placed above ``j`` (a bigger share of the win, then a higher score), 0.5 when level.
    Groups are the deals (:func:`deal_of`)."""
    n = len(table)
    deal = deal_of(c, n)
    ii, jj, yy, gg = [], [], [], []
    for p, q in itertools.combinations(range(n), 2):
        key_p = c.win[:, p] * 1e9 + c.scores[:, p]
        key_q = c.win[:, q] * 1e9 + c.scores[:, q]
        y = np.where(key_p > key_q, 1.0, np.where(key_p < key_q, 0.0, 0.5))
        ii.append(np.full(len(y), table[p]))
        jj.append(np.full(len(y), table[q]))
        yy.append(y)
        gg.append(deal)
    return tuple(np.concatenate(x) for x in (ii, jj, yy, gg))


@dataclass
class WinShare:
    agent: str
    share: float  #: share of its games won (a k-way shared win counts 1/k)
    ci_low: float
    ci_high: float
    games: int


def win_shares(tables: Sequence[Sequence[int]], per_table: Sequence[Chunk], labels: Sequence[str]) -> list[WinShare]:
    """Each agent's share of the wins over every game it played, with a 95% Wald interval
    cluster-robust over deals, as the ratings' are (an intercept-only least-squares fit, so
    the estimate is the plain mean).

    At N-player tables this is what a win-maximising agent maximises, while the ratings also
    count who placed second rather than third: the two can order agents differently. An even
    share is 1/N."""
    import statsmodels.api as sm

    out = []
    for a, label in enumerate(labels):
        at = [(list(t).index(a), c, len(t)) for t, c in zip(tables, per_table) if a in t]
        y = np.concatenate([c.win[:, seat] for seat, c, _ in at])
        groups = np.concatenate([deal_of(c, n) for _, c, n in at])
        p = lo = hi = float(y.mean())
        if len(np.unique(groups)) > 1 and np.ptp(y) > 0:
            fit = sm.OLS(y, np.ones((len(y), 1))).fit(cov_type="cluster", cov_kwds={"groups": groups})
            lo, hi = (float(x) for x in np.asarray(fit.conf_int(alpha=0.05))[0])
        out.append(WinShare(label, p, max(lo, 0.0), min(hi, 1.0), len(y)))
    return out


# --------------------------------------------------------------------------- running
@dataclass
class TournamentResult:
    config: TournamentConfig
    rules: Ruleset
    labels: list[str]
    tables: list[tuple[int, ...]]
    results: list[Any]  #: MatchResult per pairing (2 players) or TableResult
    above: np.ndarray  #: [n, n] share of comparisons the row agent won against the column
    compared: np.ndarray  #: [n, n] comparisons
    ratings: list[Rating]
    first_mover: dict[str, float]
    out_dir: Path
    files: dict[str, Path] = field(default_factory=dict)
    played_now: int = 0  #: games played by this run (the rest were resumed)
    engines: list[str] = field(default_factory=list)  #: per table: "batched", "scalar" or both
    agent_sha256: list[str | None] = field(default_factory=list)  #: per agent: its file's hash (or None)
    notes: list[str] = field(default_factory=list)  #: what this run found and did about it (stale chunks)
    win_share: list[WinShare] = field(default_factory=list)  #: per agent: its share of the wins, all tables


def _safe(label: str) -> str:
    return re.sub(r"[^\w.+-]+", "_", label).strip("_") or "agent"


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"tenk": project_version()}
    for pkg in ("numpy", "scipy", "statsmodels"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


#: manifest keys checked chunk by chunk rather than for the whole tournament: a changed
#: checkpoint makes only the tables it plays in stale
_PER_CHUNK = ("agent_sha256",)
_MANIFEST_FIX = (
    "delete it and run again to rebuild it from this run's settings (each saved chunk is checked "
    "against them, and only those that match are reused), or pass --fresh to replay every game"
)


def _manifest(
    cfg: TournamentConfig, rules: Ruleset, deals: int, backend: str, sha: Sequence[str | None]
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "rules": rules.to_dict(),
        "rules_hash": rules.hash,
        "agents": list(cfg.agents),
        "agent_sha256": list(sha),
        "players": cfg.players,
        "games": cfg.games,
        "deals": deals,
        "seed": cfg.seed,
        "backend": backend,
        "chunk_deals": CHUNK_DEALS,
    }


def _read_chunk(path: Path, n: int) -> tuple[dict[str, Any], Chunk]:
    """A saved chunk file of an ``n``-player table; :class:`StateFileError` naming the file
    when it is damaged (not JSON, missing keys, wrong types or sizes)."""
    saved = read_json(path, "saved chunk")
    try:
        c = Chunk.from_json(saved["chunk"])
        g = (c.stop - c.start) * n
        shapes = {
            "seating": (g,),
            "scores": (g, n),
            "win": (g, n),
            "turns": (g,),
            "agent_turns": (g, n),
            "busts": (g, n),
            "first": (g,),
        }
        wrong = [k for k, shape in shapes.items() if getattr(c, k).shape != shape]
        if wrong:
            raise ValueError(
                f"{', '.join(wrong)} {'hold' if len(wrong) > 1 else 'holds'} the wrong number of "
                f"games for deals {c.start} to {c.stop - 1}"
            )
    except (KeyError, TypeError, ValueError) as e:
        why = f"no {e.args[0]!r}" if isinstance(e, KeyError) else str(e)
        raise StateFileError(f"saved chunk {str(path)!r} is damaged ({why})") from None
    return saved, c


def run_tournament(
    cfg: TournamentConfig,
    *,
    progress: bool = False,
    fresh: bool = False,
    on_chunk: Callable[[int, int], None] | None = None,
    write: bool = True,
    log: Callable[[str], None] | None = None,
    executor: Executor | None = None,
) -> TournamentResult:
    """Play (or resume) a tournament and write its outputs. ``fresh`` deletes the saved
    chunks of a tournament of the same name first. ``on_chunk(done, total)`` runs after each
    chunk is saved (the tests interrupt from it). ``log(note)`` gets each note on what the
    run found (stale or damaged chunks replayed), as it finds it; they are also in
    ``result.notes``. ``executor`` (:class:`tenk_env.evaluation.match.Executor`, e.g. Ray tasks) plays the
    chunks instead of this process and its ``workers`` processes: the same chunks, saved as
    each comes back, so the results and resuming are the same.

    One run at a time per tournament directory: a second gets :class:`~tenk_env.io.LockedError`
    naming the first (two would play the same chunks and race on every file)."""
    rules, specs, agents = cfg._validate()
    cfg._built = {}  # the result holds the config: not the agents (a checkpoint's weights)
    out_dir = Path(cfg.out) / (cfg.name or cfg.default_name(rules))
    with DirLock(out_dir, "tournament directory"):
        return _run(
            cfg,
            rules,
            specs,
            agents,
            out_dir,
            progress=progress,
            fresh=fresh,
            on_chunk=on_chunk,
            write=write,
            log=log,
            executor=executor,
        )


def _run(
    cfg: TournamentConfig,
    rules: Ruleset,
    specs: list[AgentSpec],
    agents: list[Policy],
    out_dir: Path,
    *,
    progress: bool,
    fresh: bool,
    on_chunk: Callable[[int, int], None] | None,
    write: bool,
    log: Callable[[str], None] | None,
    executor: Executor | None = None,
) -> TournamentResult:
    n = cfg.players
    deals = -(-cfg.games // n)
    labels = [s.label for s in specs]
    sha = [s.sha256 for s in specs]
    tables = list(itertools.combinations(range(len(labels)), n))
    chunk_dir = out_dir / "chunks"
    manifest = _manifest(cfg, rules, deals, cfg.backend, sha)
    mpath = out_dir / "manifest.json"
    notes: list[str] = []

    def note(msg: str) -> None:
        notes.append(msg)
        if log:
            log(msg)

    for s in specs:
        if s.name == "cmd" and is_script(s.file):
            note(
                f"agent {s.label!r}: its saved games are keyed by the script {s.file} alone; after changing a "
                "file it runs or reads without naming it (the program a wrapper starts, a model), rerun with "
                "--fresh"
            )
    if fresh and chunk_dir.is_dir():
        for f in chunk_dir.glob("t*-d*.json"):
            f.unlink()
    # A run killed inside an atomic write leaves its temporary file; the lock says no one else writes here.
    for d in (out_dir, chunk_dir):
        for f in d.glob(".*.tmp"):
            f.unlink(missing_ok=True)
    if mpath.is_file() and not fresh:
        old = read_json(mpath, "tournament manifest", fix=_MANIFEST_FIX)
        diff = [k for k in manifest if k not in _PER_CHUNK and old.get(k) != manifest[k]]
        if old.get("format") != FORMAT:
            raise ConfigError(
                f"{out_dir} holds a tournament of format {old.get('format')} (this version plays "
                f"format {FORMAT}: other dice deals), which cannot be resumed; pass --fresh to "
                "replay it, or choose another name"
            )
        if diff:
            raise ConfigError(
                f"{out_dir} holds a different tournament ({', '.join(diff)} differ); resume it with "
                "its own settings, choose another name, or pass --fresh to start it over"
            )
    atomic_write_text(mpath, json.dumps(manifest, indent=1) + "\n")

    rec = -(-cfg.save_games // n) if cfg.save_games else 0
    table_tasks = []
    for t, table in enumerate(tables):
        tl = [labels[a] for a in table]
        rdir = out_dir / "games" / f"t{t:02d}-{'_vs_'.join(_safe(x) for x in tl)}" if rec else None
        table_tasks.append(chunk_tasks(t, rules, table, cfg.seed, deals, rec, rdir, tl))
    every = [x for tt in table_tasks for x in tt]
    engine_of = dict(zip((x["key"] for x in every), task_engines(every, agents, cfg.backend)))
    tasks, chunks = [], {}
    played_on: dict[Any, str] = {}  # the engine that played each chunk
    changed: dict[int, tuple[set, set]] = {}  # agent -> (hashes its stale chunks hold, tables)
    foreign: dict[str, list[Path]] = {}  # why a chunk is not this tournament's -> chunks
    for t, table in enumerate(tables):
        tl = [labels[a] for a in table]
        for task in table_tasks[t]:
            key = task["key"]
            path = chunk_dir / f"t{t:03d}-d{task['start']:07d}.json"
            if path.is_file():
                try:
                    saved, chunk = _read_chunk(path, n)
                except StateFileError as e:
                    note(f"{e}: a saved chunk only caches played games, so replaying it")
                    saved = None
                if saved is not None:
                    # Older chunks do not record their engine: the one this run picks is the
                    # one that played them (the manifest holds the backend).
                    engine = saved.get("engine", engine_of[key])
                    held = saved.get("agent_sha256")
                    if not (isinstance(held, list) and len(held) == n):
                        held = [None] * n  # not recorded (an older version): stale for file agents
                    differ = [
                        k
                        for k, ok in (
                            ("agents", saved.get("agents") == tl),
                            ("ruleset", saved.get("rules_hash") == rules.hash),
                            ("seed", saved.get("seed") == cfg.seed),
                            ("deals", (chunk.start, chunk.stop) == (task["start"], task["stop"])),
                            ("engine", engine == engine_of[key]),
                        )
                        if not ok
                    ]
                    stale = [(a, h) for a, h in zip(table, held) if h != sha[a]]
                    if differ:
                        foreign.setdefault(", ".join(differ), []).append(path)
                    elif stale:
                        for a, h in stale:
                            changed.setdefault(a, (set(), set()))[0].add(h)
                            changed[a][1].add(t)
                    else:
                        chunks[key] = chunk
                        played_on[key] = engine
                        continue
            task["path"] = path
            tasks.append(task)
    for a, (held, ts) in changed.items():
        was = ", ".join(sorted(h or "not recorded" for h in held))
        note(
            f"agent {labels[a]!r} changed since its games were saved: {specs[a].file} now has sha256 "
            f"{sha[a]} (its saved games were played by sha256 {was}); replaying the {len(ts)} "
            f"table{'s' if len(ts) > 1 else ''} it plays"
        )
    for why, paths in foreign.items():
        note(
            f"{len(paths)} saved chunk{'s' if len(paths) > 1 else ''} (e.g. {paths[0]}) belong to another "
            f"tournament ({why} differ): replaying {'them' if len(paths) > 1 else 'it'}"
        )

    total_games = len(tables) * deals * n
    done_games = sum(len(c.turns) for c in chunks.values())
    n_chunks = len(tasks) + len(chunks)
    paths = {t["key"]: t.pop("path") for t in tasks}

    with ProgressLine(total_games, f"tournament {out_dir.name}", progress) as bar:
        bar.advance(done_games)

        def saved(key, chunk: Chunk) -> None:
            t = key[0]
            atomic_write_text(
                paths[key],
                json.dumps(
                    {
                        "table": t,
                        "agents": [labels[a] for a in tables[t]],
                        "agent_sha256": [sha[a] for a in tables[t]],
                        "rules_hash": rules.hash,
                        "seed": cfg.seed,
                        "engine": engine_of[key],
                        "chunk": chunk.to_json(),
                    },
                    separators=(",", ":"),
                ),
            )
            chunks[key] = chunk
            played_on[key] = engine_of[key]
            bar.advance(len(chunk.turns))
            if on_chunk:
                on_chunk(len(chunks), n_chunks)

        # specs, not the agents built here: the workers build their own. A chunk whose agent
        # fails is set aside, and the other chunks still play and are saved
        failed: dict[Any, ValueError] = {}
        run_tasks(
            tasks,
            [s.text for s in specs],
            [engine_of[t["key"]] for t in tasks],
            workers=cfg.workers,
            on_done=saved,
            executor=executor,
            on_error=failed.__setitem__,
        )

    if failed:
        first = next(iter(failed.values()))
        raise _failed_tables(failed, tables, labels, len(chunks), n_chunks, chunk_dir) from first

    if tasks:
        # The engines and workers read the files when they started: had one been replaced
        # since, the games just saved could be either version's, under the old one's key.
        for a, h in enumerate(sha):
            if h is not None and (now := agent_sha256(specs[a])) != h:
                raise ConfigError(
                    f"agent {labels[a]!r} changed while the tournament was playing "
                    f"({specs[a].file} had sha256 {h}, now {now}): its games may mix both "
                    "versions; run again to replay them with the file as it is then"
                )
    engines = ["+".join(sorted({played_on[x["key"]] for x in tt})) for tt in table_tasks]
    result = summarise(cfg, rules, labels, tables, chunks, out_dir, engines)
    result.played_now = total_games - done_games
    result.agent_sha256 = sha
    result.notes = notes
    if write:
        write_outputs(result)
    return result


def _failed_tables(
    failed: Mapping[Any, ValueError],
    tables: Sequence[tuple[int, ...]],
    labels: Sequence[str],
    saved: int,
    n_chunks: int,
    chunk_dir: Path,
) -> AgentError:
    """The error of a run whose agents failed in some chunks: each failure once, with the
    tables it failed, and how to resume."""
    by_error: dict[str, set[int]] = {}
    for (t, _), e in sorted(failed.items(), key=lambda kv: kv[0]):
        by_error.setdefault(str(e), set()).add(t)
    bad = {t for ts in by_error.values() for t in ts}
    name = lambda t: " vs ".join(labels[a] for a in tables[t])  # noqa: E731
    why = "; ".join(
        f"{msg} (table{'s' if len(ts) > 1 else ''} {', '.join(name(t) for t in sorted(ts))})"
        for msg, ts in by_error.items()
    )
    return AgentError(
        f"tournament {chunk_dir.parent.name!r}: {len(bad)} of {len(tables)} tables could not be "
        f"finished ({len(failed)} chunk{'s' if len(failed) > 1 else ''} failed): {why}. {saved} of "
        f"{n_chunks} chunks are saved in {chunk_dir}: fix the agent and rerun the same command, which "
        "plays only the missing ones"
    )


def summarise(
    cfg: TournamentConfig,
    rules: Ruleset,
    labels: list[str],
    tables: list[tuple[int, ...]],
    chunks: Mapping[tuple[int, int], Chunk],
    out_dir: Path,
    engines: Sequence[str] | None = None,
) -> TournamentResult:
    """The results and ratings of the chunks; ``engines[t]``: the engine(s) that played table ``t``."""
    n_agents = len(labels)
    per_table = [Chunk.concat([c for (t, _), c in chunks.items() if t == ti]) for ti in range(len(tables))]
    results: list[Any] = []
    parts = []
    first_win = 0.0
    games = 0
    for ti, (table, c) in enumerate(zip(tables, per_table)):
        tl = [labels[a] for a in table]
        if len(table) == 2:
            r = match_result(tl[0], tl[1], c, seed=cfg.seed, rules=rules, backend=engines[ti] if engines else "scalar")
            r.seconds = 0.0
            results.append(r)
        else:
            results.append(table_result(tl, c))
        parts.append(comparisons(table, c))
        g = len(c.turns)
        first_win += float(c.win[np.arange(g), c.first].sum())
        games += g
    i, j, y, grp = (np.concatenate(x) for x in zip(*parts))
    above = np.full((n_agents, n_agents), np.nan)
    compared = np.zeros((n_agents, n_agents), np.int64)
    for a, b in itertools.permutations(range(n_agents), 2):
        m_ab, m_ba = (i == a) & (j == b), (i == b) & (j == a)
        k = int(m_ab.sum() + m_ba.sum())
        compared[a, b] = k
        if k:
            above[a, b] = (y[m_ab].sum() + (1 - y[m_ba]).sum()) / k
    ratings = bradley_terry(i, j, y, labels, groups=grp)
    lo, hi = wilson(first_win, games)
    first = {"win_rate": first_win / games, "ci_low": lo, "ci_high": hi, "games": games}
    return TournamentResult(
        cfg,
        rules,
        labels,
        tables,
        results,
        above,
        compared,
        ratings,
        first,
        out_dir,
        engines=list(engines or []),
        win_share=win_shares(tables, per_table, labels),
    )


# --------------------------------------------------------------------------- output
def _num(x: float) -> Any:
    """JSON has no infinities or NaN: unbounded ratings are written as strings."""
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def result_rows(res: TournamentResult) -> list[dict[str, Any]]:
    """One row per pairing (or per table and agent), naming the hash of each agent's file
    (``a_sha256``, empty for agents without one) and the engine(s) that played it (``backend``)."""
    sha = dict(zip(res.labels, res.agent_sha256 or [None] * len(res.labels)))
    rows = []
    for t, r in enumerate(res.results):
        engine = res.engines[t] if res.engines else None
        if isinstance(r, MatchResult):
            d = r.to_dict()
            for k in ("seconds", "rules", "rules_hash", "seed"):
                d.pop(k, None)
            rows.append({"a": d.pop("a"), "b": d.pop("b"), "a_sha256": sha[r.a], "b_sha256": sha[r.b], **d})
        else:
            for k, a in enumerate(r.agents):
                rows.append(
                    {
                        "table": " vs ".join(r.agents),
                        "agent": a,
                        "agent_sha256": sha[a],
                        "games": r.games,
                        "wins": r.wins[k],
                        "win_rate": r.win_rate[k],
                        "ci_low": r.ci_low[k],
                        "ci_high": r.ci_high[k],
                        "mean_score": r.mean_score[k],
                        "points_per_turn": r.points_per_turn[k],
                        "bust_rate": r.bust_rate[k],
                        "mean_turns": r.mean_turns,
                        "first_seat_win_rate": r.first_seat_win_rate,
                        "backend": engine,
                    }
                )
    return rows


def _csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return buf.getvalue()


def write_outputs(res: TournamentResult) -> dict[str, Path]:
    cfg, out = res.config, res.out_dir
    rows = result_rows(res)
    rating_rows = [asdict(r) for r in res.ratings]
    files = {
        "results_csv": out / "results.csv",
        "results_json": out / "results.json",
        "ratings_csv": out / "ratings.csv",
        "heatmap": out / "heatmap.png",
        "ratings_png": out / "ratings.png",
    }
    atomic_write_text(files["results_csv"], _csv(rows))
    atomic_write_text(files["ratings_csv"], _csv(rating_rows))
    doc = {
        "name": out.name,
        "format": FORMAT,
        "versions": _versions(),
        "rules": res.rules.to_dict(),
        "rules_hash": res.rules.hash,
        "agents": list(cfg.agents),
        "agent_sha256": {a: h for a, h in zip(cfg.agents, res.agent_sha256) if h is not None},
        "players": cfg.players,
        "games_per_table": res.results[0].games,
        "seed": cfg.seed,
        "deal_seeds": "deal d of every table: dice key tenk_env.evaluation.match.deal_key(seed, d) (the first 64 bits of "
        "numpy SeedSequence(seed, spawn_key=(d,))), played in every rotation of the seats with "
        "tenk_env.evaluation.play.KeyedDice on the scalar engine, as a slot's dice key on the batched engine",
        "backend": cfg.backend,
        "engines": res.engines,
        "chunk_deals": CHUNK_DEALS,
        "first_mover": res.first_mover,
        "ratings_model": "Bradley-Terry (statsmodels GLM, logit), Elo scale, field mean 0, 95% Wald intervals "
        "with cluster-robust covariance, one cluster per deal (shared by all tables)",
        "ratings": [{k: _num(v) for k, v in r.items()} for r in rating_rows],
        "win_share": [{k: _num(v) for k, v in asdict(w).items()} for w in res.win_share],
        "results": [{k: _num(v) for k, v in r.items()} for r in rows],
        "placed_above": [[None if not np.isfinite(x) else float(x) for x in row] for row in res.above],
        "compared": res.compared.tolist(),
    }
    atomic_write_text(files["results_json"], json.dumps(doc, indent=1) + "\n")
    atomic_write_bytes(files["heatmap"], heatmap_png(res))
    atomic_write_bytes(files["ratings_png"], ratings_png(res))
    res.files = files
    return files


def standings_order(res: TournamentResult) -> list[int]:
    """Agents strongest first (by rating, then by share of comparisons won)."""

    def key(a):
        r = res.ratings[a]
        return -(r.elo if not math.isnan(r.elo) else -math.inf), -(r.score if not math.isnan(r.score) else 0)

    return sorted(range(len(res.labels)), key=key)


def heatmap_png(res: TournamentResult) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = standings_order(res)
    names = [res.labels[a] for a in order]
    m = res.above[np.ix_(order, order)]
    k = len(order)
    fig, ax = plt.subplots(figsize=(1.3 * k + 2.5, 1.1 * k + 1.8), dpi=120)
    im = ax.imshow(np.ma.masked_invalid(m), cmap="RdBu", vmin=0, vmax=1)
    for r in range(k):
        for c in range(k):
            if np.isfinite(m[r, c]):
                a, b = order[r], order[c]
                lo, hi = wilson(float(m[r, c] * res.compared[a, b]), int(res.compared[a, b]))
                ax.text(
                    c,
                    r,
                    f"{m[r, c]:.1%}\n[{lo:.1%}, {hi:.1%}]",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if abs(m[r, c] - 0.5) > 0.3 else "black",
                )
    ax.set_xticks(range(k), names, rotation=30, ha="right")
    ax.set_yticks(range(k), names)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    what = "wins" if res.config.players == 2 else "places above"
    ax.set_title(
        f"{res.out_dir.name}: how often the row agent {what} the column agent\n"
        f"({res.rules.name}, {res.results[0].games:,} games per table; 95% Wilson intervals)",
        fontsize=9,
    )
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def ratings_png(res: TournamentResult) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = [a for a in standings_order(res) if math.isfinite(res.ratings[a].elo)][::-1]
    fig, ax = plt.subplots(figsize=(7, 0.5 * max(len(order), 2) + 1.5), dpi=120)
    ys = np.arange(len(order))
    elo = np.array([res.ratings[a].elo for a in order])
    lo = np.array([res.ratings[a].ci_low for a in order])
    hi = np.array([res.ratings[a].ci_high for a in order])
    ax.errorbar(elo, ys, xerr=[elo - lo, hi - elo], fmt="o", capsize=4)
    ax.set_yticks(ys, [res.labels[a] for a in order])
    ax.axvline(0, color="grey", lw=0.5)
    ax.set_xlabel("Bradley-Terry rating (Elo scale, field mean 0), 95% interval")
    unbounded = [res.labels[a] for a in range(len(res.labels)) if not math.isfinite(res.ratings[a].elo)]
    title = f"{res.out_dir.name} ({res.rules.name})"
    if unbounded:
        title += "\nunbounded (never won or never lost): " + ", ".join(unbounded)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
