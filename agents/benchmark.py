"""The benchmark table (``tenk zoo table``): every zoo agent and the bots, rated together.

The zoo's agents are grouped by the game they play (ruleset and player count). Each group
plays one seat-balanced tournament (:mod:`agents.tournament`: the same deals for every
table, Bradley-Terry ratings on the Elo scale with 95% intervals) against the bots, and
where the 2-player game solver covers the game, each agent's win rate against ``optimal``
is added:

* **exact** where the exact evaluator follows the agent (the bots, ``optimal``, features-v2
  afterstate agents; :func:`agents.exact.exact_eval`, cached on disk), seat-balanced;
* **by regret** otherwise (PPO agents, older afterstate agents): the win rate implied by
  its regret over analysed games against ``optimal`` (:func:`agents.analysis.analyse`),
  with its 95% interval.

A 3- or 4-player group also shows each agent's share of the wins over all its tables
(:func:`agents.tournament.win_shares`): the ratings break each game into pairwise placings,
so an agent that finishes second rather than third often can out-rate one that wins more.

:func:`markdown` renders the groups as the README's table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from agents import zoo
from agents.analysis import analyse
from agents.exact import check_exact_spec, exact_eval
from agents.match import Executor
from agents.tournament import Rating, TournamentConfig, TournamentResult, run_tournament
from tenk_env.rules import Ruleset, load_ruleset
from tenk_env.solve import SolverError
from tenk_env.solve.game import is_solvable

__all__ = ["BOTS", "BOTS_MULTI", "Strength", "Group", "benchmark", "markdown", "vs_optimal"]

#: the bots of a 2-player group (random is left out: it teaches a rating nothing)
BOTS = ["greedy", "hold:300", "dicenow", "breakeven", "maxscore"]
#: the bots of a 3- or 4-player group (every combination is a table, so fewer of them)
BOTS_MULTI = ["hold:300", "dicenow", "breakeven", "maxscore"]


@dataclass
class Strength:
    """An agent's seat-balanced win rate against ``optimal`` and how it was measured."""

    win_rate: float
    ci_low: float
    ci_high: float
    how: str                      #: "exact" or "regret over N games"


@dataclass
class Group:
    rules: Ruleset
    players: int
    tournament: TournamentResult
    kinds: dict[str, str]                    #: agent -> "bot" or the zoo entry's summary
    strength: dict[str, Strength]            #: agent -> strength against optimal (where measured)

    @property
    def ratings(self) -> list[Rating]:
        return sorted(self.tournament.ratings, key=lambda r: -r.elo)


def vs_optimal(spec: str, rules: Ruleset, *, regret_games: int, seed: int, workers: int) -> Strength:
    """``spec``'s seat-balanced win rate against ``optimal`` under ``rules`` (2 players): exact
    where the evaluator follows it, else implied by its regret over ``regret_games`` games."""
    try:
        check_exact_spec(spec)
    except SolverError:
        rep = analyse(spec, rules, games=regret_games, seed=seed, workers=workers).report
        return Strength(rep.implied_win_rate, rep.implied_ci[0], rep.implied_ci[1], f"regret over {rep.games:,} games")
    e = exact_eval(rules, spec, "optimal")
    return Strength(e.p_a, e.p_a, e.p_a, "exact")


def _games() -> list[tuple[dict, int, list[str], dict[str, str]]]:
    """(ruleset fields, players, zoo specs, kinds) of every game the zoo has agents for."""
    out: dict[tuple[str, int], tuple[dict, int, list[str], dict[str, str]]] = {}
    for e in zoo.entries():
        m = e.meta
        key = (m["ruleset_hash"], int(m["n_players"]))
        g = out.setdefault(key, (m["ruleset"], int(m["n_players"]), [], {}))
        g[2].append(f"zoo:{e.name}")
        g[3][f"zoo:{e.name}"] = e.summary()
    return list(out.values())


def benchmark(*, games: int, seed: int = 0, workers: int = 2, regret_games: int = 1000, rules: str | None = None,
              players: int | None = None, out: str | Path = "runs/tournaments", bots: Sequence[str] | None = None,
              progress: bool = False, log: Callable[[str], None] = print,
              executor: Executor | None = None) -> list[Group]:
    """Rate the zoo with the bots, one tournament per game (``rules``/``players``: only that
    game), and measure each agent against ``optimal`` where the game is solvable
    (``regret_games`` 0: skip that). Tournaments resume like ``tenk tournament``'s."""
    want = load_ruleset(rules).hash if rules else None
    groups = []
    for fields, n, specs, kinds in _games():
        r = load_ruleset(fields)
        if (want and r.hash != want) or (players and n != players):
            continue
        solvable = n == 2 and is_solvable(r)
        field_bots = list(bots) if bots is not None else (BOTS if n == 2 else BOTS_MULTI)
        agents = specs + field_bots + (["optimal"] if solvable else [])
        kinds = {**kinds, **{b: "bot" for b in agents if b not in kinds}}
        cfg = TournamentConfig(agents=agents, rules=fields, games=games, seed=seed, players=n,
                               name=f"zoo-{r.name}-{n}p", workers=workers, out=str(out))
        log(f"{r.name}, {n} players: {len(agents)} agents, {games:,} games per table")
        res = run_tournament(cfg, progress=progress, executor=executor)
        strength = {}
        if solvable and regret_games:
            for a in agents:
                log(f"  {a} against optimal")
                strength[a] = vs_optimal(a, r, regret_games=regret_games, seed=seed, workers=workers)
        groups.append(Group(r, n, res, kinds, strength))
    if not groups:
        raise ValueError(f"the zoo has no agents for {rules or 'any ruleset'}"
                         f"{f' with {players} players' if players else ''} (tenk zoo lists them)")
    return groups


def _elo(r: Rating) -> str:
    return f"{r.elo:+.0f} [{r.ci_low:+.0f}, {r.ci_high:+.0f}]"


def _strength(s: Strength | None) -> str:
    if s is None:
        return "-"
    if s.how == "exact":
        return f"{s.win_rate:.2%} (exact)"
    return f"{s.win_rate:.2%} [{s.ci_low:.2%}, {s.ci_high:.2%}] ({s.how})"


def markdown(groups: Sequence[Group], command: str = "") -> str:
    """The groups as markdown tables, best rated first."""
    lines = []
    for g in groups:
        cfg = g.tournament.config
        multi = g.players > 2
        lines.append(f"**{g.rules.name}, {g.players} players** ({cfg.games:,} games per "
                     f"{'table' if multi else 'pairing'}, seed {cfg.seed}"
                     f"{f'; an even win share is 1/{g.players}' if multi else ''})")
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
    if command:
        lines.append(f"Generated by `{command}`.")
    return "\n".join(lines).rstrip() + "\n"
