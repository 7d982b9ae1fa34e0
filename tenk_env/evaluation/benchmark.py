"""The benchmark table (``tenk zoo table``): every zoo agent and the bots, rated together.

The zoo's agents are grouped by the game they play (ruleset and player count). Each group
plays one seat-balanced tournament (:mod:`tenk_env.evaluation.tournament`: the same deals for every
table, Bradley-Terry ratings on the Elo scale with 95% intervals) against the bots, and
where the 2-player game solver covers the game, each agent's win rate against ``optimal``
is added:

* **exact** where the exact evaluator follows the agent (the bots, ``optimal``, features-v2
  afterstate agents; :func:`tenk_env.policies.exact.exact_eval`, cached on disk), seat-balanced;
* **by regret** otherwise (PPO agents, older afterstate agents): the win rate implied by
  its regret over analysed games against ``optimal`` (:func:`tenk_env.evaluation.analysis.analyse`),
  with its 95% interval.

A 3- or 4-player group also shows each agent's share of the wins over all its tables
(:func:`tenk_env.evaluation.tournament.win_shares`): the ratings break each game into pairwise placings,
so an agent that finishes second rather than third often can out-rate one that wins more.

Each group's tournament lives in ``out/zoo-RULESET-Np-KEY/``, ``KEY`` a hash of what defines
it (the ruleset's hash, the player count, the agents, games and seed): the same arguments
resume an interrupted run, other arguments (another ``--games``, ``--seed``, an entry added
to the zoo) get their own folder, and two rulesets of the same name (an inline ruleset keeps
its base's) never share one. A broken zoo entry is named and left out.

:func:`markdown` renders the groups as the README's table.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tenk_env.evaluation.analysis import analyse, interval_text
from tenk_env.evaluation.match import Executor
from tenk_env.evaluation.tournament import Rating, TournamentConfig, TournamentResult, run_tournament
from tenk_env.policies import zoo
from tenk_env.policies.exact import check_exact_spec, exact_eval, seat_ceiling
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import SolverError
from tenk_env.solve.game import check_exact_rules, is_solvable

__all__ = ["BOTS", "BOTS_MULTI", "Strength", "Group", "benchmark", "markdown", "vs_optimal"]

#: the bots of a 2-player group (random is left out: it teaches a rating nothing)
BOTS = ["greedy", "hold:300", "dicenow", "breakeven", "maxscore"]
#: the bots of a 3- or 4-player group (every combination is a table, so fewer of them)
BOTS_MULTI = ["hold:300", "dicenow", "breakeven", "maxscore"]
#: the other seats of the free-for-all a 3- or 4-player group's ceiling is given for (tenk ffa's)
SEAT_OPPONENTS = {3: ["dicenow", "maxscore"], 4: ["dicenow", "maxscore", "breakeven"]}


@dataclass
class Strength:
    """An agent's seat-balanced win rate against ``optimal`` and how it was measured."""

    win_rate: float
    ci_low: float
    ci_high: float
    how: str  #: "exact" or "regret over N games"
    note: str = ""  #: why there is no interval (too few games), if there is none
    #: by regret: the regret per game of each kind of mistake (tenk_env.evaluation.analysis.KINDS)
    by_kind: dict = field(default_factory=dict)
    #: by regret, an agent that counts its costs (an ``llm:`` agent): what it counted
    #: (tenk_env.evaluation.analysis.agent_stats); empty for others
    agent_stats: dict = field(default_factory=dict)


@dataclass
class Group:
    rules: Ruleset
    players: int
    tournament: TournamentResult
    kinds: dict[str, str]  #: agent -> "bot" or the zoo entry's summary
    strength: dict[str, Strength]  #: agent -> strength against optimal (where measured)
    #: 3-4 players: the exact ceiling of one seat against SEAT_OPPONENTS (cached solves only):
    #: {"value": P, "agent": "br:...", "shares": {bot: exact share in that seat}}
    ceiling: dict | None = None

    @property
    def ratings(self) -> list[Rating]:
        return sorted(self.tournament.ratings, key=lambda r: -r.elo)


def vs_optimal(
    spec: str, rules: Ruleset, *, regret_games: int, seed: int, workers: int, progress: bool = False, exact: bool = True
) -> Strength:
    """``spec``'s seat-balanced win rate against ``optimal`` under ``rules`` (2 players): exact
    where the evaluator follows it (and ``exact``), else implied by its regret over
    ``regret_games`` games (``progress``: a bar over them)."""
    if exact and _followed(spec, rules):
        e = exact_eval(rules, spec, "optimal")
        return Strength(e.p_a, e.p_a, e.p_a, "exact")
    rep = analyse(spec, rules, games=regret_games, seed=seed, workers=workers, progress=progress).report
    return Strength(
        rep.implied_win_rate,
        rep.implied_ci[0],
        rep.implied_ci[1],
        f"regret over {rep.games:,} games",
        rep.interval_notes.get("regret", ""),
        dict(rep.by_kind),
        dict(rep.agent_stats or {}),
    )


def _followed(spec: str, rules: Ruleset) -> bool:
    """Whether the exact evaluator follows ``spec`` under ``rules``."""
    try:
        check_exact_spec(spec)
        check_exact_rules(rules)
    except SolverError:
        return False
    return True


def _games(log: Callable[[str], None] = print) -> list[tuple[dict, int, list[str], dict[str, str]]]:
    """(ruleset fields, players, zoo specs, kinds) of every game the zoo has agents for (its
    broken entries named through ``log`` and left out)."""
    out: dict[tuple[str, int], tuple[dict, int, list[str], dict[str, str]]] = {}
    good, bad = zoo.scan()
    for err in bad:
        log(f"left out: {err}")
    for e in good:
        if e.any_rules:  # ranked over rule variants by tenk suite, not by game here
            continue
        m = e.meta
        key = (m["ruleset_hash"], int(m["n_players"]))
        g = out.setdefault(key, (m["ruleset"], int(m["n_players"]), [], {}))
        g[2].append(f"zoo:{e.name}")
        g[3][f"zoo:{e.name}"] = e.summary()
    return list(out.values())


def tournament_name(rules: Ruleset, players: int, agents: Sequence[str], games: int, seed: int) -> str:
    """The folder of a group's tournament, keyed by what defines it."""
    key = hashlib.sha256(json.dumps([rules.hash, players, list(agents), games, seed]).encode()).hexdigest()[:8]
    safe = re.sub(r"[^\w.+-]+", "_", rules.name)
    return f"zoo-{safe}-{players}p-{key}"


def benchmark(
    *,
    games: int,
    seed: int = 0,
    workers: int = 2,
    regret_games: int = 1000,
    rules: str | None = None,
    players: int | None = None,
    out: str | Path = "runs/tournaments",
    bots: Sequence[str] | None = None,
    progress: bool = False,
    fresh: bool = False,
    log: Callable[[str], None] = print,
    on_chunk: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
) -> list[Group]:
    """Rate the zoo with the bots, one tournament per game (``rules``/``players``: only that
    game), and measure each agent against ``optimal`` where the game is solvable
    (``regret_games`` 0: skip that). Tournaments resume like ``tenk tournament``'s, each in a
    folder of its own (:func:`tournament_name`); ``fresh``: replay their games instead.

    ``log`` gets a line per phase (each group, its tournament, each measurement against
    optimal) and, where ``progress`` (a progress bar) is off, one per tenth of a tournament's
    games; ``on_chunk(done, total)`` runs after each saved chunk of games."""
    want = load_ruleset(rules).hash if rules else None
    groups = []
    for fields, n, specs, kinds in _games(log):
        r = load_ruleset(fields)
        if (want and r.hash != want) or (players and n != players):
            continue
        solvable = n == 2 and is_solvable(r)
        field_bots = list(bots) if bots is not None else (BOTS if n == 2 else BOTS_MULTI)
        agents = specs + field_bots + (["optimal"] if solvable else [])
        kinds = {**kinds, **{b: "bot" for b in agents if b not in kinds}}
        name = tournament_name(r, n, agents, games, seed)
        cfg = TournamentConfig(
            agents=agents, rules=fields, games=games, seed=seed, players=n, name=name, workers=workers, out=str(out)
        )
        log(f"{r.name}, {n} players: {len(agents)} agents, {games:,} games per table")
        folder = Path(out) / name
        saved = 0 if fresh else sum(1 for _ in (folder / "chunks").glob("t*-d*.json"))
        log(
            f"  tournament: {'resuming ' if saved else ''}{folder}"
            + (f" ({saved} chunks of games saved by an earlier run)" if saved else "")
        )
        res = run_tournament(
            cfg,
            progress=progress,
            fresh=fresh,
            executor=executor,
            log=lambda m: log(f"  note: {m}"),
            on_chunk=_chunk_log(log, on_chunk, quiet=progress),
        )
        if res.played_now == 0:
            log("  all its games were already played: results rebuilt from the saved chunks")
        strength = {}
        if solvable and regret_games:
            log(
                f"  against optimal: {len(agents)} agents (the game is solved first where it is not cached: "
                "minutes for a full game)"
            )
            for i, a in enumerate(agents, 1):
                log(f"  against optimal {i} of {len(agents)}: {a}")
                strength[a] = vs_optimal(a, r, regret_games=regret_games, seed=seed, workers=workers, progress=progress)
        ceiling = None
        if n in SEAT_OPPONENTS:
            # read from the cache only: a full-size ceiling takes hours (tenk solve best-response)
            try:
                br, shares = seat_ceiling(r, SEAT_OPPONENTS[n], field_bots)
            except SolverError:  # a game the N-player solver does not cover: no ceiling line
                br = None
            if br is not None:
                ceiling = {"value": br.p, "agent": br.name, "shares": shares}
        groups.append(Group(r, n, res, kinds, strength, ceiling))
    if not groups:
        raise ValueError(
            f"the zoo has no agents for {rules or 'any ruleset'}"
            f"{f' with {players} players' if players else ''} (tenk zoo lists them)"
        )
    return groups


def _chunk_log(
    log: Callable[[str], None], on_chunk: Callable[[int, int], None] | None, quiet: bool
) -> Callable[[int, int], None]:
    """An ``on_chunk`` that also logs a line per tenth of the chunks (unless ``quiet``)."""
    last = [-1]

    def step(done: int, total: int) -> None:
        tenth = 10 * done // total
        if not quiet and tenth != last[0]:
            last[0] = tenth
            log(f"  {done} of {total} chunks of games played ({done / total:.0%})")
        if on_chunk:
            on_chunk(done, total)

    return step


def _elo(r: Rating) -> str:
    return f"{r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}]"


def _strength(s: Strength | None) -> str:
    if s is None:
        return "-"
    if s.how == "exact":
        return f"{s.win_rate:.2%} (exact)"
    return f"{s.win_rate:.2%} {interval_text((s.ci_low, s.ci_high), '{:.2%}', s.note)} ({s.how})"


def markdown(groups: Sequence[Group], command: str = "") -> str:
    """The groups as markdown tables, best rated first."""
    lines = []
    for g in groups:
        cfg = g.tournament.config
        multi = g.players > 2
        lines.append(
            f"**{g.rules.name}, {g.players} players** ({cfg.games:,} games per "
            f"{'table' if multi else 'pairing'}, seed {cfg.seed}"
            f"{f'; an even win share is 1/{g.players}' if multi else ''})"
        )
        lines.append("")
        head = ["agent", "what", "rating (Elo, 95% CI)", "score"]
        if multi:
            # The ratings count placings below first; the share of wins is what the game scores.
            head.append("win share (95% CI)")
        if g.strength:
            head.append("win rate vs optimal")
        share = {w.agent: w for w in g.tournament.win_share}
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join("---" for _ in head) + "|")
        for r in g.ratings:
            row = [f"`{r.agent}`", g.kinds.get(r.agent, ""), _elo(r), f"{r.score:.1%}"]
            if multi:
                w = share[r.agent]
                row.append(f"{w.share:.2%} [{w.ci_low:.2%}, {w.ci_high:.2%}]")
            if g.strength:
                row.append(_strength(g.strength.get(r.agent)))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
        if g.ceiling:
            c = g.ceiling
            bots = ", ".join(f"`{b}` {v:.2%}" for b, v in sorted(c["shares"].items(), key=lambda kv: -kv[1]))
            lines.append(
                f"Exact ceiling of one seat against {', '.join(SEAT_OPPONENTS[g.players])}: {c['value']:.2%} "
                f"(`{c['agent']}`); the bots in that seat, exact: {bots or '-'}."
            )
            lines.append("")
    if command:
        lines.append(f"Generated by `{command}`.")
    return "\n".join(lines).rstrip() + "\n"
